"""benchmarks.tissue_beads: the bead-array held-out tissue simulator, against exact oracles.

No test fits Celcomen on this world (it is held out): the bench is checked for its registration
and refusals only. The sampler is checked on a two-cell, two-gene graph (edge 1 -> 0) replicated
into disjoint copies, against a grid integral of the docstring's energy on R^4.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from benchmarks import tissue_beads as tb
from benchmarks.tissue_gibbs_pln import symmetric_adjacency
from benchmarks.tissue_metropolis import gcn_weights, knn_edges

SITE = {
    "lam": np.array([0.6, 0.8]),
    "skew": np.array([3.0, -2.5]),
    "scale": np.array([0.9, 1.1]),
    "offset": np.array([0.2, -0.1]),
}
W_INTRA = np.array([[0.0, 0.15], [0.15, 0.0]])
W_INTER = np.array([[0.25, -0.15], [-0.15, -0.12]])
EDGES = np.array([[1], [0]])  # 1 -> 0, weight 1


def _phi(t: np.ndarray, g: int) -> np.ndarray:
    z = SITE["skew"][g] * (t - SITE["offset"][g]) / SITE["scale"][g]
    return -0.5 * SITE["lam"][g] * t**2 + norm.logcdf(z)


def test_mala_matches_the_grid_oracle() -> None:
    t = np.linspace(-8.0, 8.0, 44)
    a0, b0, a1, b1 = np.meshgrid(t, t, t, t, indexing="ij", sparse=True)
    log_p = _phi(a0, 0) + _phi(b0, 1) + _phi(a1, 0) + _phi(b1, 1)
    log_p = log_p + 2 * W_INTRA[0, 1] * (a0 * b0 + a1 * b1)
    k = W_INTER
    log_p = log_p + k[0, 0] * a0 * a1 + k[0, 1] * (a0 * b1 + b0 * a1) + k[1, 1] * b0 * b1
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    assert max(p[0].max(), p[-1].max(), p[..., 0].max(), p[..., -1].max()) < 1e-6 * p.max()
    exact = {
        "y00": (p * a0).sum(),
        "y01": (p * b0).sum(),
        "y00^2": (p * a0**2).sum(),
        "y00*y01": (p * a0 * b0).sum(),
        "y00*y10": (p * a0 * a1).sum(),
        "y01*y11": (p * b0 * b1).sum(),
    }
    assert exact["y00"] > 0.3 and exact["y01"] < -0.3  # the skew moves the means off 0
    copies = 2000
    edge_index = np.concatenate([EDGES + 2 * c for c in range(copies)], axis=1)
    weight = gcn_weights(edge_index, 2 * copies)
    np.testing.assert_allclose(weight, 1.0)
    y, report = tb.chromatic_mala(
        edge_index, weight, SITE, W_INTRA, W_INTER, 2 * copies, sweeps=40, burn_in=60, seed=2
    )
    assert 0.4 < report.acceptance < 0.8 and report.n_colours == 2
    assert report.config_temperature == pytest.approx(1.0, abs=0.06)
    cells = y.reshape(copies, 2, 2, 2).transpose(0, 2, 1, 3).reshape(-1, 2, 2)
    samples = {
        "y00": cells[:, 0, 0],
        "y01": cells[:, 0, 1],
        "y00^2": cells[:, 0, 0] ** 2,
        "y00*y01": cells[:, 0, 0] * cells[:, 0, 1],
        "y00*y10": cells[:, 0, 0] * cells[:, 1, 0],
        "y01*y11": cells[:, 0, 1] * cells[:, 1, 1],
    }
    for name, values in samples.items():
        se = values.std() / np.sqrt(len(values))
        assert abs(values.mean() - exact[name]) < 4.5 * se, (name, values.mean(), exact[name])


def test_gradient_and_curvature_match_finite_differences() -> None:
    rng = np.random.default_rng(0)
    n, g = 30, 6
    edge_index = knn_edges(rng.random((n, 2)) * 6, 6)
    weight = gcn_weights(edge_index, n)
    w0, k0, _ = tb.draw_couplings(g, rng)
    site = tb.site_parameters(g, rng)
    w_intra, w_inter = 0.1 * w0, 0.05 * k0
    s = symmetric_adjacency(edge_index, weight, n)
    y = 1.5 * rng.standard_normal((n, g))
    grad = tb.grad_log_density(y, s, site, w_intra, w_inter)
    h = 1e-5
    for i, gene in [(0, 0), (7, 3), (29, 5), (12, 1)]:
        up, down = y.copy(), y.copy()
        up[i, gene] += h
        down[i, gene] -= h
        fd = (
            tb.log_density(up, edge_index, weight, site, w_intra, w_inter)
            - tb.log_density(down, edge_index, weight, site, w_intra, w_inter)
        ) / (2 * h)
        assert fd == pytest.approx(grad[i, gene], rel=1e-6, abs=1e-7)
    fd2 = (tb._site(y + h, site, 1) - tb._site(y - h, site, 1)) / (2 * h)
    np.testing.assert_allclose(tb._site(y, site, 2), fd2, rtol=1e-5, atol=1e-6)


def test_mixing_weights_are_exact_lens_areas() -> None:
    # two unit discs 1 apart: 2 pi / 3 - sqrt(3) / 2; containment; disjoint
    assert tb.lens_area(1.0, 1.0, 1.0) == pytest.approx(2 * math.pi / 3 - math.sqrt(3) / 2)
    assert tb.lens_area(1.0, 5.0, 2.0) == pytest.approx(4 * math.pi)
    assert tb.lens_area(7.01, 5.0, 2.0) == 0.0
    # a bead at 0 between two equal cells at +-4 and a small one inside it
    beads = np.zeros((1, 2))
    cells = np.array([[-4.0, 0.0], [4.0, 0.0], [0.0, 3.5], [30.0, 0.0]])
    radii = np.array([3.0, 3.0, 1.0, 6.0])
    index, weight, covered = tb.mixing_weights(beads, cells, radii)
    lens = tb.lens_area(4.0, 5.0, 3.0)
    total = 2 * lens + math.pi
    assert set(index[0].tolist()) == {0, 1, 2}
    np.testing.assert_allclose(weight.sum(1), 1.0)
    w = dict(zip(index[0].tolist(), weight[0].tolist()))
    assert w[0] == pytest.approx(lens / total) and w[1] == pytest.approx(lens / total)
    assert w[2] == pytest.approx(math.pi / total)
    assert covered[0] == pytest.approx(total / (25 * math.pi))
    # the lens against a fine pixel count
    grid = np.stack(np.meshgrid(*[np.linspace(-5, 5, 2001)] * 2, indexing="ij"), -1)
    inside = (np.linalg.norm(grid, axis=-1) <= 5) & (np.linalg.norm(grid - [4, 0], axis=-1) <= 3)
    assert inside.sum() * (10 / 2000) ** 2 == pytest.approx(lens, rel=2e-3)


def test_count_moments_match_the_negative_binomial() -> None:
    rng = np.random.default_rng(5)
    mu = np.tile([0.3, 2.0, 6.0], (200_000, 1))
    c = tb.capture(mu, rng, shape=4.0)
    for j, m in enumerate(mu[0]):
        se_mean = math.sqrt((m + m**2 / 4) / len(c))
        assert c[:, j].mean() == pytest.approx(m, abs=4 * se_mean)
        assert c[:, j].var() == pytest.approx(m + m**2 / 4, rel=0.03)
        p0 = (4 / (4 + m)) ** 4
        assert (c[:, j] == 0).mean() == pytest.approx(p0, abs=4 * math.sqrt(p0 * (1 - p0) / len(c)))
    # bead rates: covered fraction times the weighted cell rates
    rate = np.array([[1.0, 10.0], [3.0, 0.0]])
    out = tb.bead_rates(rate, np.array([[0, 1, -1]]), np.array([[0.25, 0.75, 0.0]]), np.ones(1))
    np.testing.assert_allclose(out, [[2.5, 2.5]])


@pytest.fixture(scope="module")
def tissue() -> tb.BeadTissue:
    return tb.simulate(300, 6, seed=4, sweeps=20, burn_in=20)


def test_simulate_structure_seed_and_anndata(tissue: tb.BeadTissue) -> None:
    again = tb.simulate(300, 6, seed=4, sweeps=20, burn_in=20)
    np.testing.assert_array_equal(again.counts, tissue.counts)
    np.testing.assert_array_equal(again.latent, tissue.latent)
    assert not np.array_equal(
        tb.simulate(300, 6, seed=5, sweeps=20, burn_in=20).counts, tissue.counts
    )
    n_vars = 6 + tissue.params["n_other"]
    assert tissue.counts.shape == (300, n_vars) and 500 <= tissue.params["n_other"] <= 1000
    assert 100 <= np.median(tissue.counts.sum(1)) <= 300 and (tissue.counts.sum(1) > 0).all()
    np.testing.assert_allclose(tissue.mixing["weight"].sum(1), 1.0)
    assert (tissue.mixing["covered"] >= 0.2).all()
    assert np.allclose(tissue.W_intra, tissue.W_intra.T) and (np.diag(tissue.W_intra) == 0).all()
    assert (np.diag(tissue.W_inter) != 0).any() and (tissue.W_inter < 0).any()
    adata = tissue.to_anndata()
    assert adata.var["highly_variable"].sum() == 6
    assert np.flatnonzero(adata.var["highly_variable"]).tolist() == tissue.coupled.tolist()
    truth = adata.uns["tissue_beads"]
    np.testing.assert_array_equal(truth["W_intra"], tissue.W_intra)
    np.testing.assert_array_equal(truth["W_inter"], tissue.W_inter)
    assert truth["sampler"]["acceptance"] > 0.3
    np.testing.assert_array_equal(adata.obsm["spatial"], tissue.coords)
    signed = adata.layers["signed"][:, tissue.coupled]
    np.testing.assert_allclose(np.linalg.norm(signed, axis=1), 1.0, rtol=1e-5)
    assert set(adata.obs["n_cells_mixed"].unique()) <= {1, 2, 3}


def test_bench_registers_the_world_and_refuses_foreign_options(capsys) -> None:
    from benchmarks import bench_celcomen_counts as bench

    assert bench.WORLDS["beads"] is tb
    with pytest.raises(SystemExit):
        bench.main(["--world", "beads", "--size-factor-sd", "0.5"])
    assert "beads draws its own size factors" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--world", "beads", "--background-genes", "100"])
    assert "beads holds its own other genes" in capsys.readouterr().err
