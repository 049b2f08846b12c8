"""PyTorch-BigGraph's batched negatives (kg.sampling.chunk_negatives / chunk_negative_scores).

Oracles: the model's own ``forward``, triple by triple, against every positive's chunk
negatives, with the brute-force mask "negative differs from the replaced entity"; the
per-positive path (``model._score_corrupted`` with ``replacement = negatives[chunk]``) for the
losses and gradients; the sLCWA loss of the training path against the same sums over the kept
pairs (its normaliser counts them); a rank's slice of a batch scores as the same rows of the
whole batch.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

from graphdata.errors import GraphDataError
from graphdata.synthetic import family_kg
from kg._epochs import Run
from kg.complex import ComplEx
from kg.distmult import DistMult
from kg.losses import margin_ranking_loss, nssa_loss
from kg.rescal import RESCAL
from kg.rotate import RotatE
from kg.sampling import chunk_negative_scores, chunk_negatives
from kg.training import Trainer, TrainingConfig
from kg.transe import TransE

E, R, D = 40, 3, 6


def _models() -> list[torch.nn.Module]:
    torch.manual_seed(0)
    return [
        TransE(E, R, D),
        TransE(E, R, D, p=2),
        DistMult(E, R, D),
        ComplEx(E, R, D),
        RotatE(E, R, D),
    ]


def _batch(b: int = 23, k: int = 7, chunk_size: int = 5) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(1)
    pos = torch.stack(
        [
            torch.randint(0, E, (b,), generator=gen),
            torch.randint(0, R, (b,), generator=gen),
            torch.randint(0, E, (b,), generator=gen),
        ],
        dim=1,
    )
    side, neg = chunk_negatives(
        pos, torch.full((b,), 0.5), E, num_negatives=k, chunk_size=chunk_size, generator=gen
    )
    chunk = torch.arange(b) // chunk_size
    return pos, side, neg, chunk


@pytest.mark.parametrize("model", _models(), ids=repr)
def test_chunk_scores_loss_and_gradient_equal_the_per_positive_path(model: torch.nn.Module) -> None:
    pos, side, neg, chunk = _batch()
    scores, mask = chunk_negative_scores(model, pos, side, neg, chunk)
    head, rel, tail = pos.unbind(1)
    k = neg.size(1)
    replacement = neg[chunk]  # [B, k]: each positive's chunk negatives
    reference = model._score_corrupted(
        head, rel, tail, replacement, side[:, None].expand(-1, k).contiguous()
    )
    torch.testing.assert_close(scores, reference, rtol=1e-5, atol=1e-5)
    replaced = torch.where(side, head, tail)
    for b in range(pos.size(0)):  # brute force: a negative equal to the replaced entity is masked
        assert mask[b].tolist() == [int(e) != int(replaced[b]) for e in replacement[b]]
    pos_score = model(head, rel, tail)
    grads = []
    for neg_score in (scores, reference):
        model.zero_grad(set_to_none=True)
        loss = nssa_loss(pos_score, neg_score, margin=3.0, mask=mask)
        loss = loss + margin_ranking_loss(pos_score, neg_score, margin=1.0, mask=mask)
        loss.backward(retain_graph=True)
        grads.append((float(loss.detach()), [p.grad.clone() for p in model.parameters()]))
    assert grads[0][0] == pytest.approx(grads[1][0], rel=1e-5)
    for a, b in zip(grads[0][1], grads[1][1]):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


def test_a_slice_of_a_batch_scores_as_the_same_rows_of_the_whole_batch() -> None:
    """A rank keeps a contiguous run of positives that may start inside a chunk."""
    model = DistMult(E, R, D)
    pos, side, neg, chunk = _batch()
    whole, whole_mask = chunk_negative_scores(model, pos, side, neg, chunk)
    part = slice(7, 19)  # starts mid-chunk 1, ends mid-chunk 3
    scores, mask = chunk_negative_scores(model, pos[part], side[part], neg, chunk[part])
    torch.testing.assert_close(scores, whole[part])
    assert torch.equal(mask, whole_mask[part])


def test_chunk_negatives_share_entities_per_chunk_and_follow_the_side_probability() -> None:
    pos = torch.zeros(10, 3, dtype=torch.long)
    gen = torch.Generator().manual_seed(0)
    side, neg = chunk_negatives(
        pos, torch.ones(10), 50, num_negatives=6, chunk_size=4, generator=gen
    )
    assert neg.shape == (3, 6) and bool(side.all())  # p = 1: every positive corrupts its head
    assert int(neg.min()) >= 0 and int(neg.max()) < 50
    again = chunk_negatives(
        pos, torch.ones(10), 50, num_negatives=6, chunk_size=4, generator=gen.manual_seed(0)
    )
    assert torch.equal(again[1], neg)  # reproducible from the seed
    with pytest.raises(GraphDataError, match="chunk_size: expected a positive int, got 0"):
        chunk_negatives(pos, torch.ones(10), 50, num_negatives=6, chunk_size=0, generator=gen)


def test_the_config_refuses_batched_negatives_where_they_do_not_apply() -> None:
    with pytest.raises(GraphDataError, match="batched_negatives: a chunk scores .* side_per"):
        TrainingConfig(batched_negatives=8).validate()
    with pytest.raises(GraphDataError, match="batched_negatives: negatives only exist"):
        TrainingConfig(batched_negatives=8, regime="1vsall", side_per_positive=True).validate()


@pytest.mark.parametrize("name", ["tucker", "conve"])
def test_models_with_batch_norm_refuse_batched_negatives_before_training(name: str) -> None:
    # A chunk's side is scored apart, often one positive: batch norm in training mode raised
    # torch's "Expected more than 1 value per channel" mid-epoch (both models, any batch size).
    from kg.models import MODELS

    dataset = family_kg(40, seed=0).dataset
    model = MODELS[name](
        dataset.num_entities, dataset.num_relations, 16 if name == "tucker" else 200
    )
    before = {k: v.clone() for k, v in model.state_dict().items()}
    cfg = TrainingConfig(
        regime="slcwa",
        loss="softplus",
        side_per_positive=True,
        batched_negatives=4,
        num_negatives=8,
        batch_size=64,
        epochs=1,
        eval_every=0,
        progress=False,
    )
    with pytest.raises(GraphDataError, match=f"batched_negatives: {name} normalises .*=0"):
        Trainer(model, cfg).fit(dataset)
    assert all(torch.equal(v, before[k]) for k, v in model.state_dict().items())


def _fit_family(model_class: type, dim: int, **overrides: Any) -> list[dict]:
    """Train on the 40-person family KG with row-wise Adagrad and batched negatives."""
    dataset = family_kg(40, seed=0).dataset
    model = model_class(dataset.num_entities, dataset.num_relations, dim)
    settings = dict(side_per_positive=True, optimizer="rowwise_adagrad", lr=0.1)
    cfg = TrainingConfig(**settings, eval_every=0, progress=False, **overrides)
    return Trainer(model, cfg).fit(dataset).history_


def test_training_with_batched_negatives_lowers_the_loss() -> None:
    history = _fit_family(
        DistMult, 16, epochs=6, batch_size=128, num_negatives=16, batched_negatives=32
    )
    assert history[-1]["loss"] < 0.9 * history[0]["loss"]


@pytest.mark.parametrize("model", _models() + [RESCAL(E, R, D)], ids=repr)
def test_chunk_scores_and_mask_equal_forward_triple_by_triple(model: torch.nn.Module) -> None:
    """Every positive against every negative of its chunk, one ``forward`` call per triple."""
    k, size = 4, 5
    pos, side, neg, chunk = _batch(b=13, k=k, chunk_size=size)
    neg[1, 0] = pos[6, 0] if bool(side[6]) else pos[6, 2]  # positive 6's own entity, in chunk 1
    scores, mask = chunk_negative_scores(model, pos, side, neg, chunk)
    assert scores.shape == mask.shape == (13, k)
    with torch.no_grad():
        for b in range(pos.size(0)):
            h, r, t = (int(x) for x in pos[b])
            x = h if bool(side[b]) else t  # the replaced entity
            for j, e in enumerate(neg[b // size].tolist()):
                triple = (e, r, t) if bool(side[b]) else (h, r, e)
                expected = model(*(torch.tensor([v]) for v in triple))[0]
                torch.testing.assert_close(scores[b, j], expected, rtol=1e-5, atol=1e-5)
                assert bool(mask[b, j]) == (e != x)
    assert not bool(mask[6, 0])  # the positive's own entity is never a negative


def test_the_mask_drops_the_replaced_entity_and_keeps_duplicates() -> None:
    """All positives share head 0: a head-corrupting positive masks every copy of 0 among its
    chunk's negatives, a tail-corrupting one keeps them; a duplicated entity counts twice."""
    model = DistMult(E, R, D)
    pos = torch.tensor([[0, 0, 10 + i] for i in range(4)])
    side = torch.tensor([True, False, True, False])
    neg = torch.tensor([[5, 5, 0, 10], [0, 13, 7, 0]])
    _, mask = chunk_negative_scores(model, pos, side, neg, torch.arange(4) // 2)
    assert mask.tolist() == [
        [True, True, False, True],  # head 0 replaced: the 0 is masked, both 5s kept
        [True, True, True, True],  # tail 11 replaced: 0 kept, 10 (another's tail) kept
        [False, True, True, False],  # head 0 replaced: both 0s masked
        [True, False, True, True],  # tail 13 replaced: its own 13 masked
    ]


def test_a_chunk_with_one_side_trains_a_model_without_a_fused_kernel() -> None:
    """RESCAL scores each side separately; a chunk whose positives all corrupt one side must
    not score (and differentiate) an empty other side."""
    history = _fit_family(RESCAL, 8, epochs=1, batch_size=64, num_negatives=4, batched_negatives=2)
    assert math.isfinite(history[-1]["loss"])  # and no error in the backward


def test_a_chunk_with_one_side_trains_transe_through_its_fused_kernel() -> None:
    """TransE's fused two-sided scorer looks up an empty index for the side no positive of a
    chunk corrupts; its backward (and the row recorder of row-wise Adagrad) must take the
    empty gradient rather than fail to reshape it."""
    dataset = family_kg(45, seed=0).dataset
    model = TransE(dataset.num_entities, dataset.num_relations, 8)
    settings = dict(side_per_positive=True, optimizer="rowwise_adagrad", lr=0.1, epochs=3)
    cfg = TrainingConfig(
        **settings, batch_size=37, num_negatives=4, batched_negatives=4, eval_every=0,
        progress=False,
    )  # fmt: skip
    history = Trainer(model, cfg).fit(dataset).history_
    assert all(math.isfinite(h["loss"]) for h in history)


@pytest.mark.parametrize("loss", ["margin", "bce", "nssa"])
def test_the_training_loss_normalises_by_the_kept_negatives(loss: str) -> None:
    """``Run._slcwa_parts`` on a batch with a short last chunk against the loss summed over the
    kept pairs by hand: margin averages over the kept pairs, bce over positives plus kept
    pairs, nssa over positives (halved)."""
    dataset = family_kg(30, seed=2).dataset
    torch.manual_seed(0)
    model = DistMult(dataset.num_entities, dataset.num_relations, 8)
    k, size, b = 40, 8, 21  # 40 negatives of few entities: some equal the replaced one
    cfg = TrainingConfig(
        loss=loss,
        num_negatives=k,
        batched_negatives=size,
        side_per_positive=True,
        adversarial_temperature=0.5,
        progress=False,
    )
    cfg.validate()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    run = Run.build(model, dataset, cfg, torch.device("cpu"), optimizer)
    index = torch.arange(b)  # chunks of 8, 8 and 5
    state = run.generator.get_state()
    (value, count), _ = run._slcwa_parts(index)
    pos = run.train[index]
    run.generator.set_state(state)
    side, neg = chunk_negatives(
        pos,
        torch.full((b,), 0.5),
        dataset.num_entities,
        num_negatives=k,
        chunk_size=size,
        generator=run.generator,
    )
    with torch.no_grad():
        head, rel, tail = pos.unbind(1)
        pos_score = model(head, rel, tail)
        pairs: list[torch.Tensor] = []  # kept negative scores per positive
        for i in range(b):
            h, r, t = (int(x) for x in pos[i])
            x = h if bool(side[i]) else t
            kept = [e for e in neg[i // size].tolist() if e != x]
            triples = [(e, r, t) if bool(side[i]) else (h, r, e) for e in kept]
            hs, rs, ts = torch.tensor(triples).unbind(1)
            pairs.append(model(hs, rs, ts))
    kept_total = sum(p.numel() for p in pairs)
    assert kept_total < b * k  # some negatives equal the replaced entity and are masked
    fn = torch.nn.functional
    if loss == "margin":
        hinge = [fn.relu(1.0 - pos_score[i] + p).sum() for i, p in enumerate(pairs)]
        expected = float(sum(hinge)) / kept_total
        assert float(count) == kept_total
    elif loss == "bce":
        negative = sum(float(fn.softplus(p).sum()) for p in pairs)
        expected = (float(fn.softplus(-pos_score).sum()) + negative) / (b + kept_total)
        assert float(count) == b + kept_total
    else:  # nssa, margin 0: -log sigma(s) - sum_j softmax(alpha s'_j) log sigma(-s'_j)
        terms = [
            -fn.logsigmoid(pos_score[i]) - (torch.softmax(0.5 * p, 0) * fn.logsigmoid(-p)).sum()
            for i, p in enumerate(pairs)
        ]
        expected = float(sum(terms)) / (2 * b)  # the two parts are averaged and halved
        assert float(count) == b
    assert float(torch.as_tensor(value).detach()) == pytest.approx(expected, rel=1e-5)
