"""The hand-written training paths of issue 17 agree with plain autograd.

Each fast path (the 1-N losses with their own backward, the ``[C, B]``-stored 1-N products,
embedding lookups that add their gradient into kept buffers, the fused distance writing the
entity gradient into such a buffer) is compared with the straightforward autograd computation
it replaces, on values and gradients.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from graphdata.errors import GraphDataError
from graphdata.triples import KGDataset
from kg import _epochs
from kg._distance import Workspace, gathered_distance
from kg._product import kept_product
from kg._rows import Embedding, grad_buffers
from kg.config import TrainingConfig
from kg.losses import kvsall_bce_loss, kvsall_bce_loss_coo, one_vs_all_loss
from kg.training import Trainer, _make_optimizer, build_model


def _scores(b: int = 6, e: int = 9, *, transposed: bool = False, seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    raw = torch.randn(e, b, generator=gen, dtype=torch.float64) * 4
    # The [E, B] storage kg.base._dot_scores returns while training, or a contiguous [B, E].
    return raw.t() if transposed else raw.t().contiguous()


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("eps", [0.0, 0.1])
def test_kvsall_coo_matches_dense_bce(transposed: bool, eps: float) -> None:
    base = _scores(transposed=transposed)
    targets = (torch.rand(base.shape, generator=torch.Generator().manual_seed(1)) < 0.3).double()
    rows, cols = targets.nonzero(as_tuple=True)
    a = base.clone().requires_grad_()
    b = base.detach().clone().requires_grad_()
    fast = kvsall_bce_loss_coo(a, rows, cols, label_smoothing=eps)
    slow = kvsall_bce_loss(b, targets, label_smoothing=eps)
    fast.backward()
    slow.backward()
    assert torch.allclose(fast, slow, rtol=1e-12, atol=0)
    assert torch.allclose(a.grad, b.grad, rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("eps", [0.0, 0.1])
def test_one_vs_all_matches_cross_entropy(transposed: bool, eps: float) -> None:
    base = _scores(transposed=transposed)
    target = torch.tensor([0, 3, 8, 1, 1, 5])
    a = base.clone().requires_grad_()
    b = base.detach().clone().requires_grad_()
    fast = one_vs_all_loss(a, target, label_smoothing=eps)
    slow = F.cross_entropy(b, target, label_smoothing=eps)
    fast.backward()
    slow.backward()
    assert torch.allclose(fast, slow, rtol=1e-12, atol=0)
    assert torch.allclose(a.grad, b.grad, rtol=1e-10, atol=1e-15)


def test_one_vs_all_true_entity_far_below_the_rest() -> None:
    # p_t = exp(-2000) underflows: the loss comes from logsumexp, not log p_t = -inf.
    scores = torch.tensor([[1000.0, 0.0, -1000.0]], requires_grad=True)
    loss = one_vs_all_loss(scores, torch.tensor([2]))
    loss.backward()
    assert loss.item() == pytest.approx(2000.0)
    assert scores.grad[0].tolist() == pytest.approx([1.0, 0.0, -1.0])


@pytest.mark.parametrize("which", ["1vsall", "kvsall"])
def test_one_n_losses_refuse_a_second_backward(which: str) -> None:
    scores = _scores().requires_grad_()
    if which == "1vsall":
        loss = one_vs_all_loss(scores, torch.zeros(6, dtype=torch.long))
    else:
        loss = kvsall_bce_loss_coo(scores, torch.tensor([0]), torch.tensor([0]))
    loss.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="runs once"):
        loss.backward()


def test_bf16_scores_give_a_float_loss_and_bf16_gradient() -> None:
    base = _scores().float()
    target = torch.tensor([0, 3, 8, 1, 1, 5])
    low = base.bfloat16().requires_grad_()
    loss = one_vs_all_loss(low, target)
    loss.backward()
    reference = F.cross_entropy(low.detach().float(), target)
    assert low.grad.dtype == torch.bfloat16
    assert loss.item() == pytest.approx(reference.item(), rel=1e-2)


def test_kvsall_coo_rejects_mismatched_indices() -> None:
    with pytest.raises(GraphDataError, match="rows, cols"):
        kvsall_bce_loss_coo(torch.zeros(2, 3), torch.tensor([0, 1]), torch.tensor([0]))


def test_dot_scores_stored_transposed_under_autograd_only() -> None:
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(4, 3, generator=gen, dtype=torch.float64)
    c = torch.randn(7, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    model = build_model("distmult", _dataset(), TrainingConfig())
    trained = model._dot_scores(q, c)
    with torch.no_grad():
        evaluated = model._dot_scores(q, c)
    assert trained.stride() == (1, 4) and evaluated.is_contiguous()
    assert torch.allclose(trained, q @ c.t()) and torch.allclose(evaluated, q @ c.t())


def test_kept_score_buffer_gives_the_plain_product_and_is_reused() -> None:
    gen = torch.Generator().manual_seed(0)
    model = build_model("distmult", _dataset(), TrainingConfig())
    model.score_workspace = Workspace(count=1)
    weight = torch.randn(4, 3, generator=gen, dtype=torch.float64)
    storages = []
    for _ in range(2):
        q = torch.randn(4, 3, generator=gen, dtype=torch.float64, requires_grad=True)
        c = torch.randn(7, 3, generator=gen, dtype=torch.float64, requires_grad=True)
        kept = model._dot_scores(q, c)
        storages.append(kept.untyped_storage().data_ptr())
        (kept * weight.sum(1, keepdim=True)).square().sum().backward()
        q2, c2 = q.detach().requires_grad_(), c.detach().requires_grad_()
        ((q2 @ c2.t()) * weight.sum(1, keepdim=True)).square().sum().backward()
        assert torch.allclose(q.grad, q2.grad, rtol=1e-12) and torch.allclose(c.grad, c2.grad)
    assert storages[0] == storages[1]  # handed back by the first backward, taken by the second
    # Two graphs alive at once: the second product may not share the lent buffer.
    q = torch.randn(4, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    c = torch.randn(7, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    first, second = model._dot_scores(q, c), model._dot_scores(2 * q, c)
    assert first.untyped_storage().data_ptr() != second.untyped_storage().data_ptr()
    (first.sum() + second.square().sum()).backward()
    expected = c.detach().sum(0).expand(4, 3) + 8 * (q.detach() @ c.detach().t()) @ c.detach()
    assert torch.allclose(q.grad, expected, rtol=1e-12)


@pytest.mark.parametrize("kept", [False, True])
def test_product_with_bias_gives_the_plain_values_and_gradients(kept: bool) -> None:
    gen = torch.Generator().manual_seed(3)
    q = torch.randn(4, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    c = torch.randn(7, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(7, generator=gen, dtype=torch.float64, requires_grad=True)
    upstream = torch.randn(4, 7, generator=gen, dtype=torch.float64)
    out = kept_product(c, q, Workspace(count=1) if kept else None, bias=bias)
    (out * upstream).sum().backward()
    grads = [t.grad.clone() for t in (q, c, bias)]
    for t in (q, c, bias):
        t.grad = None
    plain = q @ c.t() + bias
    (plain * upstream).sum().backward()
    torch.testing.assert_close(out.detach(), plain.detach())
    for ours, ref in zip(grads, (q.grad, c.grad, bias.grad)):
        torch.testing.assert_close(ours, ref)


def test_training_lends_the_score_buffer_for_the_epoch_only() -> None:
    dataset = _dataset()
    config = TrainingConfig.from_defaults(
        "distmult", epochs=1, regime="kvsall", loss="bce", progress=False
    )
    model = build_model("distmult", dataset, config, dim=8)
    Trainer(model, config).fit(dataset)
    assert model.score_workspace is None


@pytest.mark.parametrize("ids", [[0, 0, 1, 1, 1, 2, 0, 1, 2, 2, 0, 0, 1], list(range(12)) * 2])
def test_n3_over_the_rows_that_occur_equals_the_sum_over_occurrences(ids: list[int]) -> None:
    # 12 entities: the first ids cover 3 of them (gathered rows), the second all (whole table).
    model = build_model("distmult", _dataset(), TrainingConfig(), dim=4).double()
    entity = torch.tensor(ids)
    relation = torch.zeros_like(entity)
    value = model.regularization(entity, relation, entity)
    value.backward()
    fast = model.entity.weight.grad.clone()
    model.zero_grad()
    rows = torch.cat([model.entity.weight[entity], model.entity.weight[entity]])
    plain = (rows.abs() ** 3).sum() + (model.relation.weight[relation].abs() ** 3).sum()
    (plain / (3 * entity.numel())).backward()
    assert torch.allclose(value, plain / (3 * entity.numel()), rtol=1e-12)
    assert torch.allclose(fast, model.entity.weight.grad, rtol=1e-12)


@pytest.mark.parametrize("loss_name", ["kvsall", "1vsall"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("transposed", [False, True])
def test_overwriting_the_scores_gives_the_same_loss_and_gradient(
    loss_name: str, dtype: torch.dtype, transposed: bool
) -> None:
    base = _scores(b=5, e=300, transposed=transposed).to(dtype)
    rows, cols = torch.tensor([0, 0, 3, 4]), torch.tensor([1, 299, 7, 0])
    weights = torch.randn(base.shape, generator=torch.Generator().manual_seed(2), dtype=dtype)
    grads, losses = [], []
    for overwrite in (False, True):
        leaf = base.detach().clone().requires_grad_()
        scores = leaf * weights  # MulBackward keeps its inputs, not its output
        if loss_name == "kvsall":
            loss = kvsall_bce_loss_coo(scores, rows, cols, overwrite_scores=overwrite)
        else:
            target = torch.tensor([1, 299, 7, 0, 0])
            loss = one_vs_all_loss(scores, target, label_smoothing=0.1, overwrite_scores=overwrite)
        loss.backward()
        losses.append(loss)
        grads.append(leaf.grad)
    assert torch.equal(losses[0], losses[1]) and torch.equal(grads[0], grads[1])


def test_kvsall_overwrite_is_refused_where_the_scores_were_saved() -> None:
    leaf = _scores().requires_grad_()
    scores = leaf.exp()  # exp's backward reads its output
    loss = kvsall_bce_loss_coo(scores, torch.tensor([0]), torch.tensor([0]), overwrite_scores=True)
    with pytest.raises(RuntimeError, match="inplace operation"):
        loss.backward()


def test_kvsall_loss_from_the_sigmoid_is_exact_to_float32_rounding() -> None:
    # softplus(f) = max(f, 0) - log sigma(|f|): each term within 2^-24 of the float64 value,
    # at the extremes too (sigma(|f|) rounds to 1 beyond |f| ~ 17).
    values = torch.tensor([-200.0, -40.0, -17.5, -3.0, -1e-7, 0.0, 1e-7, 3.0, 17.5, 40.0, 200.0])
    scores = values.repeat(3, 1)
    rows, cols = torch.tensor([1]), torch.tensor([4])
    loss = kvsall_bce_loss_coo(scores, rows, cols)
    n = scores.numel()
    exact = (F.softplus(scores.double()).sum() - scores.double()[1, 4]) / n
    assert abs(loss.item() - exact.item()) <= 2.0**-24 + 1e-7 * exact.item()


def test_buffered_lookups_give_the_plain_gradient() -> None:
    torch.manual_seed(0)
    table = Embedding(5, 3)
    plain = torch.nn.Embedding(5, 3)
    plain.weight.data.copy_(table.weight.data)
    index = torch.tensor([[1, 1, 4], [0, 1, 2]])

    def loss(t: torch.nn.Embedding) -> torch.Tensor:
        rows = t(index)  # repeated rows, and the whole table used densely as well
        return (rows**2).sum() + (t.weight * torch.arange(3.0)).sum() + t(index[0]).sum()

    loss(plain).backward()
    with grad_buffers(table) as buffers:
        buffers.zero()
        loss(table).backward()
        buffers.collect()
    assert table.grad_buffer is None  # plain nn.Embedding again outside the context
    assert torch.allclose(table.weight.grad, plain.weight.grad)


def test_distance_entity_gradient_into_a_buffer() -> None:
    gen = torch.Generator().manual_seed(0)
    queries = torch.randn(4, 6, generator=gen, dtype=torch.float64, requires_grad=True)
    entities = torch.randn(5, 6, generator=gen, dtype=torch.float64, requires_grad=True)
    qi = torch.tensor([[0, 1], [2, 2], [3, 0]])
    ei = torch.tensor([[4, 4], [1, 0], [2, 4]])
    for kind in ("l1", "l2", "complex_l1"):
        entities.grad = queries.grad = None
        gathered_distance(queries, qi, entities, ei, kind=kind).pow(2).sum().backward()
        expected_e, expected_q = entities.grad.clone(), queries.grad.clone()
        entities.grad = queries.grad = None
        buffer = torch.zeros_like(entities)
        out = gathered_distance(
            queries, qi, entities, ei, kind=kind, workspace=Workspace(), entity_grad=buffer
        )
        out.pow(2).sum().backward()
        assert entities.grad is None
        assert torch.allclose(buffer, expected_e) and torch.allclose(queries.grad, expected_q)


def _dataset() -> KGDataset:
    gen = torch.Generator().manual_seed(0)
    rows = {
        (f"e{int(h)}", f"r{int(r)}", f"e{int(t)}")
        for h, r, t in zip(
            torch.randint(0, 12, (80,), generator=gen),
            torch.randint(0, 3, (80,), generator=gen),
            torch.randint(0, 12, (80,), generator=gen),
        )
    }
    ordered = sorted(rows)
    return KGDataset.from_labeled(ordered, ordered[:5], ordered[5:10])


@pytest.mark.parametrize(
    ("name", "regime"),
    [
        ("transe", "slcwa"),
        ("rotate", "slcwa"),
        ("complex", "1vsall"),
        ("distmult", "kvsall"),
        ("rescal", "kvsall"),
        ("conve", "kvsall"),
    ],
)
def test_epoch_step_gradient_equals_plain_autograd(name: str, regime: str) -> None:
    """One training step's gradient through the fast paths equals plain autograd's."""
    dataset = _dataset()
    overrides = {"regime": regime, "progress": False, "epochs": 1}
    if regime == "kvsall":
        overrides["loss"] = "bce"
    config = TrainingConfig.from_defaults(name, **overrides)
    if regime != "slcwa":
        config.regularizer, config.regularizer_weight = "n3", 0.05
    dim = None if name == "conve" else 8  # ConvE's default 10 x 20 images
    model = build_model(name, dataset, config, dim=dim).double()
    run = _epochs.Run.build(
        model,
        dataset,
        config,
        torch.device("cpu"),
        _make_optimizer("adam", list(model.parameters()), 1e-3),
    )
    step = {"slcwa": run._slcwa, "kvsall": run._kvsall, "1vsall": run._one_vs_all}[regime]
    index = run.batches()[0]
    state = torch.get_rng_state()
    generator_state = run.generator.get_state()

    def gradients(fast: bool) -> dict[str, torch.Tensor]:
        torch.set_rng_state(state)
        run.generator.set_state(generator_state)
        model.zero_grad(set_to_none=True)
        if fast:
            with grad_buffers(model) as buffers, _epochs._kept_scores(model, Workspace(count=1)):
                buffers.zero()
                step(index).backward()
                buffers.collect()
        else:
            step(index).backward()
        return {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None}

    fast, plain = gradients(True), gradients(False)
    assert fast.keys() == plain.keys()
    for key in fast:
        assert torch.allclose(fast[key], plain[key], rtol=1e-9, atol=1e-12), key


def test_bf16_precision_trains_and_is_validated() -> None:
    dataset = _dataset()
    config = TrainingConfig.from_defaults("distmult", epochs=2, precision="bf16", progress=False)
    trainer = Trainer(build_model("distmult", dataset, config, dim=8), config).fit(dataset)
    assert all(torch.isfinite(torch.tensor(h["loss"])) for h in trainer.history_)
    assert next(trainer.model_.parameters()).dtype == torch.float32
    with pytest.raises(GraphDataError, match="precision"):
        TrainingConfig(precision="fp16").validate()
