"""Celcomen plots: scales set by what each figure is about, titles that say what was done."""

from __future__ import annotations

import anndata
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from spatial import plot  # noqa: E402
from spatial.simulate import hex_grid  # noqa: E402

GENES = ["IFITM3", "CD74", "KRT5", "COL1A1"]


def _adata(n: int = 40) -> anndata.AnnData:
    adata = anndata.AnnData(
        X=np.ones((n, len(GENES)), dtype=np.float32), obsm={"spatial": hex_grid(n).numpy()}
    )
    adata.var_names = GENES
    return adata


def test_heatmap_scale_is_symmetric_over_the_off_diagonal_not_the_diagonal():
    adata = _adata()
    matrix = np.array(
        [[60.0, 2.0, -3.0, 0.5], [2.0, -45.0, 1.0, 0.0], [-3.0, 1.0, 8.0, -1.5], [0.5, 0, -1.5, 1]]
    )
    adata.varp["celcomen_intra"] = matrix
    ax = plot.interaction_heatmap(adata, "intra")
    image = ax.get_images()[0]
    assert (image.norm.vmin, image.norm.vmax) == (-3.0, 3.0)  # max |off-diagonal|, not 60
    shown = image.get_array()
    assert shown.mask.tolist() == np.eye(4, dtype=bool).tolist()  # the diagonal is off the scale
    np.testing.assert_array_equal(shown.data, matrix)
    label = image.colorbar.ax.get_ylabel()
    assert "off-diagonal coupling, scale ±3" in label and "-45 to 60" in label
    # small matrices print the diagonal values in their cells
    assert [t.get_text() for t in ax.texts] == ["60", "-45", "8", "1"]


def test_heatmap_of_a_zero_matrix_still_draws():
    adata = _adata()
    adata.varp["celcomen_inter"] = np.zeros((4, 4))
    image = plot.interaction_heatmap(adata, "inter").get_images()[0]
    assert (image.norm.vmin, image.norm.vmax) == (-1.0, 1.0)


def _knocked_out(delta: np.ndarray, perturbed: np.ndarray) -> anndata.AnnData:
    adata = _adata(len(delta))
    adata.layers["celcomen_delta"] = np.tile(delta[:, None], (1, len(GENES))).astype(np.float32)
    adata.obs["celcomen_perturbed"] = perturbed
    adata.uns["celcomen"] = {
        "perturbation": {
            "genes": {"IFITM3": 0.0},
            "n_cells": int(perturbed.sum()),
            "ring_mean": np.zeros((4, len(GENES))),
        }
    }
    return adata


def test_knockout_map_names_the_gene_and_is_not_washed_out_by_the_clamped_cells():
    rng = np.random.default_rng(0)
    delta = rng.normal(0.0, 0.01, 100)
    perturbed = np.zeros(100, dtype=bool)
    perturbed[:3] = True
    delta[:3] = -0.5  # the clamped cells dominate: the old scale made every other cell white
    delta[50] = 0.2  # and one outlier outside them
    adata = _knocked_out(delta, perturbed)
    ax = plot.delta_map(adata, "CD74")
    assert ax.get_title() == "Δ CD74 after IFITM3 → 0 in 3 cells"
    points = ax.collections[0]
    outside = np.abs(delta[3:]).astype(np.float32)
    robust = float(np.quantile(outside[outside > 1e-3 * outside.max()], 0.98))
    assert points.norm.vmin == pytest.approx(-robust) and points.norm.vmax == pytest.approx(robust)
    bar = points.colorbar
    assert bar.extend == "both"
    assert "98th percentile of nonzero |Δ| outside the perturbed cells" in bar.ax.get_ylabel()
    ring_ax = plot.ring_summary(adata, ["KRT5"])
    assert ring_ax.get_title() == "mean Δ per ring after IFITM3 → 0 in 3 cells"


def test_knockout_map_without_outliers_uses_the_largest_effect():
    delta = np.linspace(-0.02, 0.04, 50)
    adata = _knocked_out(delta, np.zeros(50, dtype=bool))
    points = plot.delta_map(adata, "KRT5").collections[0]
    assert (points.norm.vmin, points.norm.vmax) == pytest.approx((-0.04, 0.04))
    assert points.colorbar.extend == "neither"
    assert "max |Δ| over all cells" in points.colorbar.ax.get_ylabel()


def test_knockout_map_scale_ignores_the_unreached_cells():
    # 10 responding cells among 490 at exactly 0: a percentile over all would clip the response
    delta = np.zeros(500)
    delta[:10] = np.linspace(0.01, 0.02, 10)
    points = plot.delta_map(_knocked_out(delta, np.zeros(500, dtype=bool)), "CD74").collections[0]
    assert points.norm.vmax == pytest.approx(0.02) and points.colorbar.extend == "neither"


def test_ring_summary_leaves_the_clamped_gene_out_by_default():
    adata = _knocked_out(np.zeros(40), np.zeros(40, dtype=bool))
    ring_mean = np.array([[-0.6, 0.02, 0.01, 0.0], [0.05, 0.04, -0.03, 0.01]] + [[0.0] * 4] * 2)
    adata.uns["celcomen"]["perturbation"]["ring_mean"] = ring_mean
    ax = plot.ring_summary(adata)
    # IFITM3 is clamped (largest ring-1 mean, 0.05): the other three, by |ring-1 mean|
    assert [line.get_label() for line in ax.get_lines()[:3]] == ["CD74", "KRT5", "COL1A1"]
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), ring_mean[:, 1])
    named = plot.ring_summary(adata, ["IFITM3"])
    assert named.get_lines()[0].get_label() == "IFITM3"
