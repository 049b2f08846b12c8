"""benchmarks.bench_celcomen: the passes its per-epoch timing divides by, against counted passes."""

from __future__ import annotations

import warnings
from unittest import mock

import pytest
import torch

from benchmarks import bench_celcomen as bench
from graphdata.spatial import knn_graph
from spatial._solver import ScoreMatchingPass
from spatial.celcomen import Celcomen, CelcomenConfig


def _tissue(cells: int = 200, genes: int = 6) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    edge_index, _ = knn_graph(torch.rand(cells, 2, generator=gen), 6)
    x = torch.randn(cells, genes, generator=gen).abs_()
    return x / x.norm(dim=1, keepdim=True), edge_index


@pytest.mark.parametrize("epochs", [3, 300])  # stopped at the iteration cap / converged
def test_cg_passes_are_the_counted_passes(epochs: int) -> None:
    """Every pass of the CG fit goes through ``ScoreMatchingPass.hessian``: count the calls.

    At the cap (3 iterations, not converged) the fit made 3 + 2 passes; the old count divided
    by the 3 epochs.
    """
    x, edge_index = _tissue()
    calls = [0]
    plain = ScoreMatchingPass.hessian

    def counted(self: ScoreMatchingPass, theta: torch.Tensor) -> torch.Tensor:
        calls[0] += 1
        return plain(self, theta)

    with mock.patch.object(ScoreMatchingPass, "hessian", counted), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the capped fit warns that it has not converged
        est = Celcomen(CelcomenConfig(), epochs=epochs, progress=False).fit(x, edge_index)
    assert (est.n_iter_ == 3) == (epochs == 3)
    assert bench._passes(est) == calls[0]


def test_step_solver_passes_are_its_epochs() -> None:
    x, edge_index = _tissue()
    est = Celcomen(CelcomenConfig(optimizer="adam"), epochs=4, progress=False).fit(x, edge_index)
    assert bench._passes(est) == 4
