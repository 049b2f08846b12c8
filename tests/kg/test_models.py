"""One contract test over every KGE model class (scikit-learn's parametrize_with_checks idea)."""

from __future__ import annotations

import pytest
import torch

from graphdata.errors import GraphDataError
from kg import models
from kg.models import DEFAULTS, MODELS

NUM_ENTITIES, NUM_RELATIONS = 7, 3

#: Small constructor arguments per model (ConvE needs dim divisible by its image height).
SMALL = {
    "transe": {"dim": 6},
    "distmult": {"dim": 6},
    "complex": {"dim": 5},
    "rotate": {"dim": 5, "margin": 3.0},
    "tucker": {"dim": 6, "relation_dim": 4},
    "rescal": {"dim": 5},
    "conve": {"dim": 8, "embedding_height": 2, "num_filters": 3},
}


def make(name: str, device: torch.device | str = "cpu", dtype=torch.float64) -> torch.nn.Module:
    torch.manual_seed(0)
    model = MODELS[name](NUM_ENTITIES, NUM_RELATIONS, **SMALL[name]).to(device, dtype)
    # Random batch-norm statistics and affine maps, so that eval-mode identities are not
    # trivially those of an identity normalisation.
    gen = torch.Generator().manual_seed(1)
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            n = module.num_features
            with torch.no_grad():
                module.running_mean.copy_(torch.randn(n, generator=gen))
                module.running_var.copy_(torch.rand(n, generator=gen) + 0.5)
                module.weight.copy_(torch.randn(n, generator=gen))
                module.bias.copy_(torch.randn(n, generator=gen))
    return model.eval()


def batch(device, b: int = 9, seed: int = 2):
    gen = torch.Generator().manual_seed(seed)
    h = torch.randint(NUM_ENTITIES, (b,), generator=gen)
    r = torch.randint(NUM_RELATIONS, (b,), generator=gen)
    t = torch.randint(NUM_ENTITIES, (b,), generator=gen)
    return h.to(device), r.to(device), t.to(device)


def test_tables_agree():
    assert set(MODELS) == set(DEFAULTS) == set(SMALL)
    for name, cls in MODELS.items():
        assert cls.name == name
        # kg.models' own KGEModel: pytest's importlib doctest collection may re-import kg.base.
        assert issubclass(cls, models.KGEModel)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_three_scorers_agree(name, device):
    model = make(name, device)
    h, r, t = batch(device)
    with torch.no_grad():
        forward = model(h, r, t)
        tails = model.score_tails(h, r)
        heads = model.score_heads(r, t)
    assert forward.shape == (9,) and tails.shape == heads.shape == (9, NUM_ENTITIES)
    assert torch.isfinite(tails).all() and torch.isfinite(heads).all()
    rows = torch.arange(9, device=device)
    torch.testing.assert_close(tails[rows, t], forward, rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(heads[rows, h], forward, rtol=1e-9, atol=1e-9)
    # Column c of score_tails is the triple (h, r, c): check every column, not only the true one.
    for c in range(NUM_ENTITIES):
        col = torch.full_like(t, c)
        torch.testing.assert_close(tails[:, c], model(h, r, col), rtol=1e-9, atol=1e-9)
        torch.testing.assert_close(heads[:, c], model(col, r, t), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_float32_agrees_within_rounding(name):
    model = make(name, dtype=torch.float32)
    h, r, t = batch("cpu")
    with torch.no_grad():
        rows = torch.arange(9)
        torch.testing.assert_close(model.score_tails(h, r)[rows, t], model(h, r, t))
        torch.testing.assert_close(model.score_heads(r, t)[rows, h], model(h, r, t))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_entity_selection_and_chunking_match_full(name):
    model = make(name)
    h, r, t = batch("cpu")
    with torch.no_grad():
        full_t, full_h = model.score_tails(h, r), model.score_heads(r, t)
        index = torch.tensor([5, 0, 3, 3])
        torch.testing.assert_close(model.score_tails(h, r, slice(2, 6)), full_t[:, 2:6])
        torch.testing.assert_close(model.score_heads(r, t, slice(1, 7, 2)), full_h[:, 1:7:2])
        torch.testing.assert_close(model.score_tails(h, r, index), full_t[:, index])
        torch.testing.assert_close(model.score_heads(r, t, index), full_h[:, index])
        # A tiny byte budget forces one candidate per internal chunk where a model chunks.
        model.chunk_bytes = 1
        torch.testing.assert_close(model.score_tails(h, r), full_t)
        torch.testing.assert_close(model.score_heads(r, t), full_h)
        torch.testing.assert_close(model.score_heads(r, t, index), full_h[:, index])
    # With autograd on, models may take a different (not in-place) path: same values.
    torch.testing.assert_close(model.score_tails(h, r).detach(), full_t)
    torch.testing.assert_close(model.score_heads(r, t).detach(), full_h)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_repr_and_config_round_trip(name):
    model = make(name)
    text = repr(model)
    assert "\n" not in text
    assert text.startswith(f"{type(model).__name__}({NUM_ENTITIES}, num_relations=3")
    clone = type(model)(**model.config).double()
    clone.load_state_dict(model.state_dict())
    clone.eval()
    h, r, t = batch("cpu")
    with torch.no_grad():
        torch.testing.assert_close(clone(h, r, t), model(h, r, t))
    assert clone.config == model.config


@pytest.mark.parametrize("name", sorted(MODELS))
def test_reset_parameters_redraws_every_parameter(name):
    model = make(name)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(100.0)
    perturbed = {k: p.detach().clone() for k, p in model.named_parameters()}
    model.reset_parameters()
    for key, p in model.named_parameters():
        assert not torch.isclose(p, perturbed[key]).any(), key
    # A different seed gives different embeddings.
    before = model.entity.weight.detach().clone()
    torch.manual_seed(123)
    model.reset_parameters()
    assert not torch.equal(before, model.entity.weight)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_gradients_reach_every_parameter(name, device):
    model = make(name, device).train()
    h, r, t = batch(device, b=16)
    # Every entity and relation appears, so every embedding row may receive a gradient.
    h[:NUM_ENTITIES] = torch.arange(NUM_ENTITIES, device=device)
    r[:NUM_RELATIONS] = torch.arange(NUM_RELATIONS, device=device)
    loss = model(h, r, t).sum() + model.score_tails(h, r).logsumexp(-1).sum()
    for kind in ("n3", "l2"):
        loss = loss + model.regularization(h, r, t, kind=kind)
    loss.backward()
    for key, p in model.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), key
        if (name, key) == ("conve", "conv.bias"):
            # Training-mode batch norm subtracts the batch mean of each map, and with it the
            # convolution's bias: its gradient is exactly zero (it matters in eval mode).
            assert p.grad.abs().max() == 0, key
            continue
        assert p.grad.abs().sum() > 0, key


@pytest.mark.parametrize("name", sorted(MODELS))
def test_regularizers_are_positive_and_scale_with_the_batch_mean(name):
    model = make(name)
    h, r, t = batch("cpu")
    for kind in ("n3", "l2"):
        value = model.regularization(h, r, t, kind=kind)
        assert value.dim() == 0 and value > 0
        # The regulariser is a batch mean: repeating the batch leaves it unchanged.
        doubled = model.regularization(h.repeat(2), r.repeat(2), t.repeat(2), kind=kind)
        torch.testing.assert_close(doubled, value)
    with pytest.raises(GraphDataError, match="kind: expected one of"):
        model.regularization(h, r, t, kind="l1")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_post_step_keeps_scores_or_projects(name):
    model = make(name)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    model.post_step()
    changed = [k for k, v in model.state_dict().items() if not torch.equal(v, state[k])]
    # Only TransE projects (its entities are kept on the unit sphere, already true here).
    assert changed == [] or (name == "transe" and changed == ["entity.weight"])


@pytest.mark.parametrize("name", sorted(MODELS))
def test_bad_sizes_are_refused(name):
    with pytest.raises(GraphDataError, match="num_entities: expected a positive int"):
        MODELS[name](0, NUM_RELATIONS, **SMALL[name])
    with pytest.raises(GraphDataError, match="dim: expected a positive int"):
        MODELS[name](NUM_ENTITIES, NUM_RELATIONS, **{**SMALL[name], "dim": -1})


@pytest.mark.parametrize("name", sorted(MODELS))
def test_defaults_build_a_model(name):
    defaults = DEFAULTS[name]
    model = MODELS[name](NUM_ENTITIES, 2 * NUM_RELATIONS, defaults.dim, **defaults.model_kwargs)
    assert model.dim == defaults.dim
    assert defaults.to_dict()["dim"] == defaults.dim


@pytest.mark.parametrize("one_side", [False, True])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_score_corrupted_matches_forward_values_and_gradients(name, one_side):
    # Distance models override the private sLCWA scorers with fused ones (one query per side,
    # kg._distance; broadcast when a positive's corruptions all replace one side; the positive
    # from the same rows): same scores and gradients as forward on the corrupted triples.
    from kg._distance import Workspace
    from kg.base import KGEModel

    model = make(name)  # eval mode: no dropout, so both paths see the same function
    h, r, t = batch("cpu")
    gen = torch.Generator().manual_seed(5)
    replacement = torch.randint(NUM_ENTITIES, (h.numel(), 4), generator=gen)
    if one_side:
        corrupt_head = (torch.rand(h.numel(), 1, generator=gen) < 0.5).expand(-1, 4)
    else:
        corrupt_head = torch.rand(h.numel(), 4, generator=gen) < 0.5
    weight = torch.rand(h.numel(), 4, generator=gen, dtype=torch.float64)
    positive_weight = torch.rand(h.numel(), generator=gen, dtype=torch.float64)
    results = []
    for fused in (False, True):
        model.zero_grad()
        if fused:
            positive, scores = model._score_positives_and_corrupted(
                h, r, t, replacement, corrupt_head, workspace=Workspace()
            )
        else:
            positive = model(h, r, t)
            scores = KGEModel._score_corrupted(model, h, r, t, replacement, corrupt_head)
        ((scores * weight).sum() + (positive * positive_weight).sum()).backward()
        results.append(
            (scores.detach(), positive.detach(), [p.grad.clone() for p in model.parameters()])
        )
    (ref, ref_positive, ref_grads), (ours, our_positive, our_grads) = results
    torch.testing.assert_close(ours, ref)
    torch.testing.assert_close(our_positive, ref_positive)
    for a, b in zip(our_grads, ref_grads):
        torch.testing.assert_close(a, b)
    alone = type(model)._score_corrupted(model, h, r, t, replacement, corrupt_head)
    torch.testing.assert_close(alone.detach(), ref)
    # Column j replaces the head where corrupt_head[b, j], else the tail.
    heads = torch.where(corrupt_head, replacement, h[:, None])
    tails = torch.where(corrupt_head, t[:, None], replacement)
    with torch.no_grad():
        direct = model(heads.flatten(), r.repeat_interleave(4), tails.flatten()).view(-1, 4)
    torch.testing.assert_close(ours, direct)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_both_sides_is_heads_then_tails(name):
    model = make(name)
    h, r, t = batch("cpu")
    with torch.no_grad():
        for entities in (None, slice(1, 6), torch.tensor([4, 0, 4])):
            both = model._both_sides((r[:3], t[:3]), (h, r), entities)
            if both is None:  # models without a shared kernel leave it to the caller
                continue
            heads = model.score_heads(r[:3], t[:3], entities)
            tails = model.score_tails(h, r, entities)
            torch.testing.assert_close(both, torch.cat([heads, tails]))


def test_rotate_tiled_evaluation_matches_autograd_path():
    # Budgets that give partial tiles in both the query and the candidate direction.
    model = make("rotate")
    h, r, t = batch("cpu", b=11)
    reference = model.score_tails(h, r).detach()  # autograd path (grad enabled)
    for budget in (1, 16 * 8 * 3, 16 * 8 * 7 * 2, 2**30):
        model.chunk_bytes = budget
        with torch.no_grad():
            torch.testing.assert_close(model.score_tails(h, r), reference)
            torch.testing.assert_close(
                model.score_tails(h, r, torch.tensor([6, 2, 2])), reference[:, [6, 2, 2]]
            )


@pytest.mark.parametrize("name", sorted(MODELS))
def test_uint8_candidate_ids_are_refused_not_read_as_a_mask(name):
    # torch indexes a uint8 tensor as a mask: ids [0, 3, 1, 5, 2, 4] on 6 entities would have
    # scored entities 0-5 minus the one at a zero, in table order, without a word.
    model = MODELS[name](6, 2, 200 if name == "conve" else 8).eval()
    h, r = torch.tensor([0, 1]), torch.tensor([0, 1])
    ids = torch.tensor([0, 3, 1, 5, 2, 4])
    with pytest.raises(GraphDataError, match="entities: .* got a uint8 tensor .*entities.long"):
        model.score_tails(h, r, ids.to(torch.uint8))
    with pytest.raises(GraphDataError, match="entities: .* uint8"):
        model.score_heads(r, h, ids.to(torch.uint8))
    torch.testing.assert_close(  # int32 ids are ids
        model.score_tails(h, r, ids.to(torch.int32)), model.score_tails(h, r)[:, ids]
    )


#: Id arguments of the wrong type: (converter, what the message names as arrived).
BAD_IDS = {
    "int16": (lambda x: x.to(torch.int16), "a torch.int16 tensor"),
    "int8": (lambda x: x.to(torch.int8), "a torch.int8 tensor"),
    "uint8": (lambda x: x.to(torch.uint8), "a torch.uint8 tensor"),
    "bool": (lambda x: x.bool(), "a torch.bool tensor"),
    "float": (lambda x: x.float(), "a torch.float32 tensor"),
    "numpy": (lambda x: x.numpy(), "ndarray"),
    "list": (lambda x: x.tolist(), "list"),
}


@pytest.mark.parametrize("bad", sorted(BAD_IDS))
@pytest.mark.parametrize("name", sorted(MODELS))
def test_scorers_refuse_ids_that_are_not_int64_or_int32_tensors_by_argument(name, bad):
    # They used to raise torch's "Expected tensor for argument #1 'indices' ..." (naming no
    # argument) or a TypeError deep inside the model.
    model = make(name)
    h, r, t = batch("cpu")
    convert, arrived = BAD_IDS[bad]
    calls = {
        "head_index": [lambda x: model(x, r, t), lambda x: model.score_tails(x, r)],
        "rel_type": [
            lambda x: model(h, x, t),
            lambda x: model.score_tails(h, x),
            lambda x: model.score_heads(x, t),
        ],
        "tail_index": [lambda x: model(h, r, x), lambda x: model.score_heads(r, x)],
    }
    for arg, fns in calls.items():
        good = {"head_index": h, "rel_type": r, "tail_index": t}[arg]
        for fn in fns:
            with pytest.raises(
                GraphDataError,
                match=rf"^{arg}: expected a LongTensor of ids \(int64, or int32\), got "
                rf"{arrived}; convert with torch\.as_tensor\({arg}, dtype=torch\.long\)$",
            ):
                fn(convert(good))
    with pytest.raises(GraphDataError, match=r"^tail_index: .*got a torch.int16 tensor"):
        model(head_index=h, rel_type=r, tail_index=t.to(torch.int16))  # by keyword too


@pytest.mark.parametrize("name", sorted(MODELS))
def test_int32_ids_score_as_int64_ids(name):
    model = make(name)
    h, r, t = batch("cpu")
    h32, r32, t32 = h.int(), r.int(), t.int()
    with torch.no_grad():
        torch.testing.assert_close(model(h32, r32, t32), model(h, r, t))
        torch.testing.assert_close(model.score_tails(h32, r32), model.score_tails(h, r))
        torch.testing.assert_close(model.score_heads(r32, t32), model.score_heads(r, t))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_candidate_ids_of_a_non_index_dtype_are_refused_by_name(name):
    # int16 and float candidate ids used to raise torch's IndexError ("tensors used as indices
    # must be long, int, byte or bool tensors"), naming no argument.
    model = make(name)
    h, r, _ = batch("cpu")
    ids = torch.tensor([0, 3, 1])
    for dtype in (torch.int16, torch.int8, torch.float32):
        name_ = str(dtype).removeprefix("torch.")
        with pytest.raises(
            GraphDataError,
            match=rf"entities: expected .*\(int64, or int32\), got a {name_} tensor of 3 "
            r"values; pass entities.long\(\)",
        ):
            model.score_tails(h, r, ids.to(dtype))
