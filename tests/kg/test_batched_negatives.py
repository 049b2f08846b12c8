"""PyTorch-BigGraph's batched negatives (kg.sampling.chunk_negatives / chunk_negative_scores).

Oracle: the per-positive path. With the same negatives given to every positive of a chunk
(``replacement = negatives[chunk]``), the chunk kernels' scores, the sLCWA losses and their
gradients equal those of ``model._score_corrupted``; the mask is the brute-force
"negative differs from the replaced entity"; a rank's slice of a batch scores as the same rows
of the whole batch.
"""

from __future__ import annotations

import pytest
import torch

from graphdata.errors import GraphDataError
from graphdata.synthetic import family_kg
from kg.complex import ComplEx
from kg.distmult import DistMult
from kg.losses import margin_ranking_loss, nssa_loss
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


def test_training_with_batched_negatives_lowers_the_loss() -> None:
    dataset = family_kg(40, seed=0).dataset
    model = DistMult(dataset.num_entities, dataset.num_relations, 16)
    cfg = TrainingConfig(
        epochs=6,
        batch_size=128,
        num_negatives=16,
        batched_negatives=32,
        side_per_positive=True,
        optimizer="rowwise_adagrad",
        lr=0.1,
        eval_every=0,
        progress=False,
    )
    history = Trainer(model, cfg).fit(dataset).history_
    assert history[-1]["loss"] < 0.9 * history[0]["loss"]
