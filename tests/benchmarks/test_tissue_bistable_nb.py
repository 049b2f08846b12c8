"""benchmarks.tissue_bistable_nb: the session-19 held-out tissue simulator, against exact oracles.

The sampler's invariance is checked on a two-cell graph with two genes (edge 1 -> 0), replicated
into many disjoint copies, whose density on R^4 is integrated on a grid.
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import tissue_bistable_nb as tb
from benchmarks.tissue_metropolis import gcn_weights
from graphdata.errors import GraphDataError

SIGMA, LEVEL, GAMMA = 0.6, 0.75, 1.0
LAM = np.array([[1 / SIGMA**2, -1.2], [-1.2, 1 / SIGMA**2]])  # W_intra off-diagonal +0.6
K = np.array([[0.5, -1.0], [-1.0, 0.3]])  # W_inter
EDGES = np.array([[1], [0]])  # 1 -> 0; in-degrees (1, 0 -> 1), so w = 1


def _grid_moments(m: int = 36, half: float = 2.5) -> dict[str, float]:
    """Moments of p(y0, y1) on R^2 x R^2, the module's log density, by a Riemann sum."""
    t = np.linspace(-half, half, m)
    alpha = (1 + GAMMA) * np.diag(LAM)
    beta = GAMMA * np.diag(LAM) / LEVEL**2

    def own(a: np.ndarray, b: np.ndarray) -> np.ndarray:  # one cell's terms, genes (a, b)
        y = np.stack(np.broadcast_arrays(a, b), -1)
        quad = -0.5 * np.einsum("...g,gh,...h->...", y, LAM, y)
        return quad + (0.5 * alpha * y**2 - 0.25 * beta * y**4).sum(-1)

    a0, b0, a1, b1 = np.meshgrid(t, t, t, t, indexing="ij")  # y0 = (a0, b0), y1 = (a1, b1)
    log_p = own(a0, b0) + own(a1, b1)
    log_p += K[0, 0] * a0 * a1 + K[0, 1] * a0 * b1 + K[1, 0] * b0 * a1 + K[1, 1] * b0 * b1
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    assert p[0].max() < 1e-8 * p.max()  # the grid holds the mass
    return {
        "y00*y01": float((p * a0 * b0).sum()),
        "y00*y11": float((p * a0 * b1).sum()),
        "y00*y10": float((p * a0 * a1).sum()),
        "y00^2": float((p * a0**2).sum()),
        "y11^4": float((p * b1**4).sum()),
    }


def test_mala_sampler_matches_the_grid_oracle() -> None:
    copies = 3000
    edge_index = np.concatenate([EDGES + 2 * c for c in range(copies)], axis=1)
    weight = gcn_weights(edge_index, 2 * copies)
    np.testing.assert_allclose(weight, 1.0)
    y, report = tb.mala_sample(
        edge_index, weight, LAM, K, 2 * copies, switch_strength=GAMMA, switch_level=LEVEL,
        sweeps=40, burn_in=120, seed=3,
    )  # fmt: skip
    assert 0.45 <= report.acceptance <= 0.7
    # [copies * chains, cell, G]
    cells = y.reshape(copies, 2, 2, 2).transpose(0, 2, 1, 3).reshape(-1, 2, 2)
    samples = {
        "y00*y01": cells[:, 0, 0] * cells[:, 0, 1],
        "y00*y11": cells[:, 0, 0] * cells[:, 1, 1],
        "y00*y10": cells[:, 0, 0] * cells[:, 1, 0],
        "y00^2": cells[:, 0, 0] ** 2,
        "y11^4": cells[:, 1, 1] ** 4,
    }
    exact = _grid_moments()
    # informative: the positive W_intra entry correlates the genes positively, the negative
    # W_inter entry anti-correlates gene 0 of cell 0 with gene 1 of its neighbour
    assert exact["y00*y01"] > 0.05 and exact["y00*y11"] < -0.02
    for name, values in samples.items():
        se = values.std() / np.sqrt(len(values))
        assert abs(values.mean() - exact[name]) < 4.5 * se, (name, values.mean(), exact[name], se)


def test_switch_term_makes_a_lone_gene_bimodal() -> None:
    # no partners, no neighbours: -lam y^2 / 2 + alpha y^2 / 2 - beta y^4 / 4 has wells at +-v
    lam = np.eye(3) / SIGMA**2
    big = np.concatenate([np.array([[1, 0], [0, 1]]) + 2 * c for c in range(2000)], axis=1)
    y, _ = tb.mala_sample(
        big, np.zeros(big.shape[1]), lam, np.zeros((3, 3)), 4000,
        switch_strength=GAMMA, switch_level=LEVEL, sweeps=30, burn_in=120, seed=1,
    )  # fmt: skip
    values = np.abs(y.ravel())
    near_well = np.mean(np.abs(values - LEVEL) < 0.25)
    near_zero = np.mean(values < 0.25 * LEVEL)
    assert near_well > 2 * near_zero  # mass sits in the wells, not at the origin
    assert abs(np.mean(y > 0) - 0.5) < 0.02  # the two wells are visited equally


def test_counts_are_negative_binomial_with_gene_dispersions() -> None:
    rng = np.random.default_rng(0)
    counts, params = tb.counts_from_field(np.zeros((40000, 6)), rng, size_sigma=0.0)
    mu, phi = params["gene_mean"], params["dispersion"]
    assert counts.dtype == np.int64 and (counts >= 0).all()
    np.testing.assert_allclose(counts.mean(0), mu, rtol=0.06)
    np.testing.assert_allclose(counts.var(0), mu + phi * mu**2, rtol=0.2)
    assert (mu >= 0.2).all() and (mu <= 20).all() and (phi >= 0.05).all() and (phi <= 1).all()


def test_clustered_layout_has_uneven_density() -> None:
    from scipy.spatial import cKDTree

    n = 2000

    def spread(coords: np.ndarray) -> float:  # 90th / 10th percentile of the 6th-NN distance
        d6 = cKDTree(coords).query(coords, 7)[0][:, 6]
        return float(np.percentile(d6, 90) / np.percentile(d6, 10))

    coords = tb.clustered_positions(n, np.random.default_rng(0))
    assert coords.min() >= 0 and coords.max() <= np.sqrt(n)
    uniform = np.random.default_rng(0).random((n, 2)) * np.sqrt(n)
    assert spread(uniform) < 2.0 and spread(coords) > 3.5  # about 1.7 and 4.3


def test_tissue_truth_counts_anndata_and_seed() -> None:
    tissue = tb.simulate(300, 10, seed=4, sweeps=30, burn_in=60)
    again = tb.simulate(300, 10, seed=4, sweeps=30, burn_in=60)
    other = tb.simulate(300, 10, seed=5, sweeps=30, burn_in=60)
    np.testing.assert_array_equal(tissue.counts, again.counts)
    np.testing.assert_array_equal(tissue.latent, again.latent)
    assert not np.array_equal(tissue.counts, other.counts)
    for w in (tissue.W_intra, tissue.W_inter):
        np.testing.assert_allclose(w, w.T)
    assert np.all(np.diag(tissue.W_intra) == 0)
    off = tissue.W_intra[np.triu_indices(10, 1)]
    assert (off > 0).any() and (off == 0).any()
    assert tissue.counts.dtype == np.int64 and (tissue.counts >= 0).all()
    assert (tissue.counts.sum(1) > 0).all()
    np.testing.assert_allclose(np.linalg.norm(tissue.x, axis=1), 1.0, rtol=1e-10)
    size = tissue.count_params["size_factor"]
    assert 0.4 < np.log(size).std() < 0.6
    adata = tissue.to_anndata()
    np.testing.assert_array_equal(adata.layers["counts"], tissue.counts)
    np.testing.assert_array_equal(adata.varp["true_inter"], tissue.W_inter)
    # the graph the library reads back is the simulator's: row i holds the neighbours j of i
    conn = adata.obsp["spatial_connectivities"].tocoo()
    got = set(zip(conn.col.tolist(), conn.row.tolist()))
    assert got == set(map(tuple, tissue.edge_index.T.tolist()))
    assert "tissue_bistable_nb" in adata.uns


@pytest.mark.parametrize("bad", [{"switch_level": 0.0}, {"switch_strength": -1.0}])
def test_sampler_refuses_bad_switch_parameters(bad: dict) -> None:
    args = {"switch_strength": 1.0, "switch_level": 0.5, **bad}
    with pytest.raises(GraphDataError, match="switch_level, switch_strength"):
        tb.mala_sample(EDGES, np.ones(1), LAM, K, 2, sweeps=1, burn_in=0, **args)


def test_bench_runs_the_world() -> None:
    from benchmarks import bench_celcomen_counts as bench

    assert bench.WORLDS["bistable_nb"] is tb
    argv = ["--world", "bistable_nb", "--genes", "6", "--cells", "150", "--seeds", "1"]
    results = bench.main([*argv, "--sweeps", "20", "--burn-in", "30"])
    run = results["runs"][0]
    assert set(run["routes"]) == {"signed", "counts", "counts_nosf", "log1p", "counts_sphere"}
    fit = run["routes"]["counts"]["celcomen"]
    assert 0.0 <= fit["intra"]["sign_agreement"] <= 1.0 and np.isfinite(fit["inter"]["pearson"])
