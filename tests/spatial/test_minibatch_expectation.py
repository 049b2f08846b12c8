"""Mini-batches over cells estimate the full-batch objective and its gradient without bias.

Issue 19 asks for mini-batches over cells with their neighbourhoods and "the same estimator in
expectation". Every objective is a mean of per-cell terms whose neighbourhood sums (messages,
strengths) and tissue mean are computed once on the whole tissue and restricted to the batch
(:meth:`spatial.objectives.Neighbourhood.rows`), so the mean over a uniformly drawn batch of
``B`` cells is an unbiased estimate of the full mean. The oracle is exact: on 8 cells, the
average over all C(8, 3) = 56 batches of the batch loss and its gradient equals the full-batch
loss and gradient (each cell is in the same number of batches), and so does the average over the
batches of any partition of the cells into equal parts (one epoch of the fit's loop).
"""

from __future__ import annotations

import itertools

import pytest
import torch

from spatial.model import CelcomenEnergy
from spatial.objectives import Neighbourhood, mean_field_terms, score_matching_terms

OBJECTIVES = {"score_matching": score_matching_terms, "mean_field": mean_field_terms}


@pytest.fixture
def problem() -> tuple[CelcomenEnergy, torch.Tensor, Neighbourhood]:
    g = torch.Generator().manual_seed(0)
    n, genes = 8, 4
    x = torch.randn(n, genes, generator=g, dtype=torch.float64)
    x = x / x.norm(dim=1, keepdim=True)
    # A ring with one chord and unequal positive weights: strengths differ between cells.
    src = torch.tensor([0, 1, 2, 3, 4, 5, 6, 7, 0])
    dst = torch.tensor([1, 2, 3, 4, 5, 6, 7, 0, 4])
    weight = torch.rand(src.numel(), generator=g, dtype=torch.float64) + 0.5
    nb = Neighbourhood.from_graph(x, torch.stack([src, dst]), weight)
    model = CelcomenEnergy(genes).double()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(0.3 * torch.randn(p.shape, generator=g, dtype=torch.float64))
    return model, x, nb


def _loss_and_grad(model, objective, x, nb, cells=None):
    model.zero_grad()
    terms = objective(model, x, nb) if cells is None else objective(model, x[cells], nb.rows(cells))
    loss = terms.mean()
    loss.backward()
    return float(loss.detach()), [p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize("name", sorted(OBJECTIVES))
def test_batch_mean_over_all_batches_equals_the_full_batch(problem, name):
    model, x, nb = problem
    objective = OBJECTIVES[name]
    full_loss, full_grad = _loss_and_grad(model, objective, x, nb)
    batches = list(itertools.combinations(range(x.shape[0]), 3))
    losses, grads = [], [torch.zeros_like(g) for g in full_grad]
    for batch in batches:
        loss, grad = _loss_and_grad(model, objective, x, nb, torch.tensor(batch))
        losses.append(loss)
        for acc, g in zip(grads, grad, strict=True):
            acc += g / len(batches)
    assert sum(losses) / len(batches) == pytest.approx(full_loss, rel=1e-12, abs=1e-12)
    for acc, g in zip(grads, full_grad, strict=True):
        torch.testing.assert_close(acc, g, rtol=1e-10, atol=1e-12)
    # Not trivially equal: single batches differ from the full batch.
    assert max(abs(loss - full_loss) for loss in losses) > 1e-3


@pytest.mark.parametrize("name", sorted(OBJECTIVES))
def test_one_epoch_of_equal_batches_averages_to_the_full_batch(problem, name):
    model, x, nb = problem
    objective = OBJECTIVES[name]
    full_loss, full_grad = _loss_and_grad(model, objective, x, nb)
    order = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(1))
    parts = order.split(2)
    results = [_loss_and_grad(model, objective, x, nb, cells) for cells in parts]
    assert sum(r[0] for r in results) / len(parts) == pytest.approx(full_loss, rel=1e-12)
    for i, g in enumerate(full_grad):
        torch.testing.assert_close(sum(r[1][i] for r in results) / len(parts), g)


def test_batch_rows_keep_the_whole_tissue_neighbourhood(problem):
    # A batch cell's message sums all its neighbours, also those outside the batch.
    _, x, nb = problem
    cells = torch.tensor([0, 4])
    rows = nb.rows(cells)
    torch.testing.assert_close(rows.neighbours, nb.neighbours[cells])
    torch.testing.assert_close(rows.strength, nb.strength[cells])
    torch.testing.assert_close(rows.mu, x.mean(0))
