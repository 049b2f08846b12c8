"""benchmarks.bench_celcomen_genes: the reported iteration count is the fit's."""

from __future__ import annotations

import argparse
import warnings

import pytest

import spatial.celcomen
from benchmarks import bench_celcomen_genes as bench


def test_run_slide_reports_the_fits_iterations(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every fit capped at 2 CG iterations (a small slide): the record says 2, not 1."""
    plain = spatial.celcomen.Celcomen
    fits: list = []

    def capped(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        est = plain(*args, **{**kwargs, "epochs": 2})
        fits.append(est)
        return est

    monkeypatch.setattr(spatial.celcomen, "Celcomen", capped)
    args = argparse.Namespace(cells=40, genes=2100, density=0.05, seed=0, epochs=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # capped fits warn that they have not converged
        out = bench.run_slide(args)
    assert fits[-1].n_iter_ == 2 and not out["converged"]
    assert out["fit_iterations"] == 2
