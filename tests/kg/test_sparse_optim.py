"""Row-wise sparse optimisers (kg._sparse_optim) against dense references of their equations.

Oracles: PyTorch-BigGraph's row-wise Adagrad formula on a hand example; a dense row-by-row
implementation of the same equations over several steps; rows outside a gradient bit-identical;
the sparse row gradients of a training step equal to the dense gradient; a training step with
sparse rows equal to one on the dense gradient; a resumed run equal to an uninterrupted one.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest
import torch

from graphdata.errors import GraphDataError
from graphdata.synthetic import family_kg
from kg._rows import grad_buffers
from kg._sparse_optim import (
    RowwiseAdagrad,
    project_touched_rows,
    row_gradients,
    sparse_rows,
)
from kg.conve import ConvE
from kg.distmult import DistMult
from kg.losses import nssa_loss
from kg.rotate import RotatE
from kg.training import Trainer, TrainingConfig
from kg.transe import TransE
from kg.tucker import TuckER


def _sparse(rows: list[int], values: torch.Tensor, n: int) -> torch.Tensor:
    """An uncoalesced COO gradient (duplicate rows allowed) of ``n`` rows."""
    return torch.sparse_coo_tensor(
        torch.tensor([rows]), values, (n, values.size(1)), check_invariants=True
    )


def test_rowwise_adagrad_matches_pbg_formula_on_a_hand_example() -> None:
    # Row 1 gets g = (3, 4): G = (9 + 16) / 2 = 12.5, step = lr g / sqrt(12.5).
    # Then row 1 gets (1, 1) (G = 12.5 + 1 = 13.5) and row 2 gets (0, 2) (G = 2).
    w = torch.nn.Parameter(torch.tensor([[1.0, 1.0], [0.0, 0.0], [0.5, -0.5]]))
    opt = RowwiseAdagrad([w], lr=0.1)
    w.grad = _sparse([1], torch.tensor([[3.0, 4.0]]), 3)
    opt.step()
    expected_1 = [-0.1 * 3 / math.sqrt(12.5), -0.1 * 4 / math.sqrt(12.5)]
    assert w.data[1].tolist() == pytest.approx(expected_1, rel=1e-6)
    assert opt.state[w]["sum"].tolist() == [0.0, 12.5, 0.0]
    w.grad = _sparse([2, 1], torch.tensor([[0.0, 2.0], [1.0, 1.0]]), 3)
    opt.step()
    second = [-0.1 / math.sqrt(13.5)] * 2
    assert w.data[1].tolist() == pytest.approx([a + b for a, b in zip(expected_1, second)])
    assert w.data[2].tolist() == pytest.approx([0.5, -0.5 - 0.1 * 2 / math.sqrt(2.0)])
    assert opt.state[w]["sum"].tolist() == pytest.approx([0.0, 13.5, 2.0])
    assert w.data[0].tolist() == [1.0, 1.0]  # never touched


def test_rowwise_adagrad_equals_a_dense_reference_and_leaves_other_rows_alone() -> None:
    gen = torch.Generator().manual_seed(0)
    n, d, lr, eps = 20, 5, 0.3, 1e-10
    start = torch.randn(n, d, generator=gen)
    w = torch.nn.Parameter(start.clone())
    opt = RowwiseAdagrad([w], lr=lr, eps=eps)
    ref, acc = start.double().clone(), torch.zeros(n, dtype=torch.float64)
    for _ in range(6):
        rows = torch.randint(0, n, (12,), generator=gen)  # duplicates are summed
        values = torch.randn(12, d, generator=gen)
        before, acc_before = w.detach().clone(), opt.state[w]["sum"].clone()
        w.grad = torch.sparse_coo_tensor(rows[None], values, (n, d), check_invariants=True)
        opt.step()
        dense = torch.zeros(n, d, dtype=torch.float64).index_add_(0, rows, values.double())
        for i in rows.unique().tolist():  # the equations row by row
            acc[i] += float((dense[i] ** 2).mean())
            ref[i] -= lr * dense[i] / (math.sqrt(acc[i]) + eps)
        untouched = torch.ones(n, dtype=torch.bool)
        untouched[rows] = False
        assert torch.equal(w.detach()[untouched], before[untouched])  # bit-identical
        assert torch.equal(opt.state[w]["sum"][untouched], acc_before[untouched])
        torch.testing.assert_close(w.detach().double(), ref, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(opt.state[w]["sum"].double(), acc, rtol=1e-5, atol=1e-7)


def test_rowwise_adagrad_refuses_bad_settings() -> None:
    with pytest.raises(GraphDataError, match="lr: expected a number > 0, got 0"):
        RowwiseAdagrad([torch.nn.Parameter(torch.zeros(2, 2))], lr=0)
    with pytest.raises(GraphDataError, match=r"updates \[n, d\] embedding tables.*\(3,\)"):
        RowwiseAdagrad([torch.nn.Parameter(torch.zeros(3))])


def _batch_loss(model: torch.nn.Module) -> torch.Tensor:
    """An sLCWA loss that reaches the entity table through lookups and the fused distance."""
    gen = torch.Generator().manual_seed(3)
    head = torch.randint(0, 30, (16,), generator=gen)
    tail = torch.randint(0, 30, (16,), generator=gen)
    rel = torch.randint(0, 4, (16,), generator=gen)
    replacement = torch.randint(0, 30, (16, 5), generator=gen)
    corrupt_head = torch.rand(16, 5, generator=gen) < 0.5
    pos = model(head, rel, tail)
    neg = model._score_corrupted(head, rel, tail, replacement, corrupt_head)
    return nssa_loss(pos, neg, margin=2.0) + model.regularization(head, rel, tail)


@pytest.mark.parametrize("cls", [TransE, DistMult, RotatE])
def test_row_gradients_equal_the_dense_gradient(cls: type) -> None:
    torch.manual_seed(0)
    model = cls(30, 4, 6)
    _batch_loss(model).backward()
    dense = {n: p.grad.clone() for n, p in model.named_parameters()}
    model.zero_grad(set_to_none=True)
    with row_gradients(model) as rows:
        rows.zero()
        _batch_loss(model).backward()
        rows.collect()
    for name, param in model.named_parameters():
        grad = param.grad
        assert grad is not None and grad.is_sparse and grad.is_coalesced()
        idx = grad.indices()[0]
        assert torch.equal(idx, idx.unique())  # sorted distinct rows
        torch.testing.assert_close(grad.to_dense(), dense[name], rtol=1e-5, atol=1e-7)
        # Exactly the rows with a non-zero dense gradient (and nothing else) are touched.
        nonzero = dense[name].abs().sum(1) > 0
        assert set(torch.nonzero(nonzero)[:, 0].tolist()) <= set(idx.tolist())


@pytest.mark.parametrize("name", ["rowwise_adagrad", "sparse_adam"])
def test_a_sparse_step_equals_the_same_optimiser_on_the_dense_gradient(name: str) -> None:
    """Sparse rows vs. the dense gradient of :mod:`kg._rows`, stepped by the same rule."""
    torch.manual_seed(1)
    sparse_model = TransE(30, 4, 6)
    dense_model = TransE(30, 4, 6)
    dense_model.load_state_dict(sparse_model.state_dict())
    sparse_opt = (
        RowwiseAdagrad(sparse_model.parameters(), lr=0.1)
        if name == "rowwise_adagrad"
        else torch.optim.SparseAdam(list(sparse_model.parameters()), lr=0.1)
    )
    # The dense reference of each rule: RowwiseAdagrad on a dense gradient updates every row
    # by the same formula (untouched rows: g = 0, no change); lazy Adam is SparseAdam fed the
    # dense gradient restricted to its non-zero rows.
    dense_opt = (
        RowwiseAdagrad(dense_model.parameters(), lr=0.1)
        if name == "rowwise_adagrad"
        else torch.optim.SparseAdam(list(dense_model.parameters()), lr=0.1)
    )
    for _ in range(3):
        with row_gradients(sparse_model) as rows:
            sparse_opt.zero_grad(set_to_none=True)
            rows.zero()
            _batch_loss(sparse_model).backward()
            rows.collect()
            sparse_opt.step()
            project_touched_rows(sparse_model)
        with grad_buffers(dense_model) as buffers:
            dense_opt.zero_grad(set_to_none=True)
            buffers.zero()
            _batch_loss(dense_model).backward()
            buffers.collect()
            if name == "sparse_adam":
                for p in dense_model.parameters():
                    assert p.grad is not None
                    keep = torch.nonzero(p.grad.abs().sum(1) > 0)[:, 0]
                    p.grad = sparse_rows(keep, p.grad[keep], p.shape)
            dense_opt.step()
            dense_model.post_step()  # the whole table: equal to the touched rows' projection
    for key, value in dense_model.state_dict().items():
        torch.testing.assert_close(sparse_model.state_dict()[key], value, rtol=1e-5, atol=1e-6)


def test_sparse_adam_is_lazy_where_dense_adam_moves_untouched_rows() -> None:
    """Lazy Adam leaves rows outside the batch (and their moments) alone; dense Adam does not."""
    start = torch.randn(4, 3, generator=torch.Generator().manual_seed(0))
    lazy, dense = torch.nn.Parameter(start.clone()), torch.nn.Parameter(start.clone())
    lazy_opt = torch.optim.SparseAdam([lazy], lr=0.1)
    dense_opt = torch.optim.Adam([dense], lr=0.1)
    g = torch.tensor([[1.0, -2.0, 0.5]])
    for rows in ([0, 1], [1]):  # row 0 touched in step 1 only; rows 2 and 3 never
        lazy.grad = sparse_rows(torch.tensor(rows), g.expand(len(rows), 3).clone(), lazy.shape)
        dense.grad = lazy.grad.to_dense()
        lazy_opt.step()
        dense_opt.step()
    assert torch.equal(lazy.detach()[2:], start[2:]) and torch.equal(dense.detach()[2:], start[2:])
    torch.testing.assert_close(lazy.detach()[1], dense.detach()[1])  # touched both times
    # Step 2 moves row 0 under dense Adam by its stale momentum, never under lazy Adam.
    assert not torch.allclose(dense.detach()[0], lazy.detach()[0])
    assert torch.equal(lazy_opt.state[lazy]["exp_avg"][2:], torch.zeros(2, 3))


@pytest.mark.parametrize(
    ("cls", "overrides", "match"),
    [
        (TuckER, {}, r"TuckER also trains \['core'"),
        (ConvE, {}, "ConvE also trains"),
        (DistMult, {"regime": "kvsall", "loss": None}, "needs regime 'slcwa'"),
        (DistMult, {"grad_clip": 1.0}, "grad_clip: not supported with optimizer"),
    ],
)
def test_models_and_regimes_that_do_not_fit_are_refused(
    cls: type, overrides: dict[str, object], match: str
) -> None:
    dataset = family_kg(30, seed=0).dataset
    kwargs = {"embedding_height": 2, "num_filters": 2} if cls is ConvE else {}
    model = cls(dataset.num_entities, dataset.num_relations, 8, **kwargs)
    cfg = TrainingConfig(optimizer="rowwise_adagrad", epochs=1, progress=False, **overrides)
    with pytest.raises(GraphDataError, match=match):
        Trainer(model, cfg).fit(dataset)


def test_a_resumed_rowwise_adagrad_run_equals_an_uninterrupted_one(tmp_path: Path) -> None:
    dataset = family_kg(40, seed=2).dataset
    cfg = TrainingConfig(
        optimizer="rowwise_adagrad",
        lr=0.1,
        epochs=3,
        batch_size=64,
        num_negatives=4,
        eval_every=0,
        progress=False,
        checkpoint_path=str(tmp_path / "ckpt.pt"),
    )

    def model() -> TransE:
        return TransE(dataset.num_entities, dataset.num_relations, 8)

    straight = Trainer(model(), dataclasses.replace(cfg, checkpoint_path=None)).fit(dataset)
    Trainer(model(), dataclasses.replace(cfg, epochs=2)).fit(dataset)
    resumed = Trainer(model(), cfg).fit(dataset, resume=True)
    for key, value in straight.model_.state_dict().items():
        assert torch.equal(resumed.model_.state_dict()[key], value)
    assert [h["loss"] for h in resumed.history_] == [h["loss"] for h in straight.history_]
    assert straight.history_[-1]["loss"] < straight.history_[0]["loss"]
