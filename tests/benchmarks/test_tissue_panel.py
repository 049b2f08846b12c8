"""benchmarks.tissue_panel: the session-20 held-out tissue simulator, against exact oracles.

No test fits Celcomen on this world (it is held out): the bench is checked for its registration
and its refusal only. The sampler's invariance is checked on a two-cell graph with two genes
(edge 1 -> 0), replicated into many disjoint copies, whose density on R^4 is integrated on a grid
written here from the module docstring's formula.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from benchmarks import tissue_panel as tp
from benchmarks.tissue_metropolis import gcn_weights
from graphdata.errors import GraphDataError

A = np.array([1.5, 2.5])
C = 0.15 * A
B = A + C
SITE = {"a": A, "b": B, "c": C}
LAM_OFF = np.array([[0.0, -0.9], [-0.9, 0.0]])  # W_intra off-diagonal +0.45
K = np.array([[0.5, -0.6], [-0.6, 0.3]])  # W_inter
EDGES = np.array([[1], [0]])  # 1 -> 0; in-degrees (1, 0 -> 1), so w = 1


def _site(t: np.ndarray, gene: int) -> np.ndarray:
    return A[gene] * t - B[gene] * np.exp(t) - C[gene] * np.exp(-t)


def _grid_moments(m: int = 44, lo: float = -4.5, hi: float = 3.0) -> dict[str, float]:
    """Moments of p(y0, y1) on R^2 x R^2, the docstring's log density, by a Riemann sum."""
    t = np.linspace(lo, hi, m)
    a0, b0, a1, b1 = np.meshgrid(t, t, t, t, indexing="ij", sparse=True)  # y0 = (a0, b0)
    log_p = _site(a0, 0) + _site(b0, 1) + _site(a1, 0) + _site(b1, 1)
    log_p = log_p - LAM_OFF[0, 1] * (a0 * b0 + a1 * b1)  # -1/2 y^T Lam y, both cells
    log_p = log_p + K[0, 0] * a0 * a1 + K[0, 1] * a0 * b1 + K[1, 0] * b0 * a1 + K[1, 1] * b0 * b1
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    edges = [p[0], p[-1], p[:, 0], p[:, -1], p[:, :, 0], p[:, :, -1], p[..., 0], p[..., -1]]
    assert max(e.max() for e in edges) < 1e-7 * p.max()  # the grid holds the mass
    mean = float((p * a0).sum())
    return {
        "y00": mean,
        "y00*y01": float((p * a0 * b0).sum()),
        "y00*y11": float((p * a0 * b1).sum()),
        "y00*y10": float((p * a0 * a1).sum()),
        "(y00-m)^3": float((p * (a0 - mean) ** 3).sum()),
    }


def test_slice_sampler_matches_the_grid_oracle() -> None:
    copies = 3000
    edge_index = np.concatenate([EDGES + 2 * c for c in range(copies)], axis=1)
    weight = gcn_weights(edge_index, 2 * copies)
    np.testing.assert_allclose(weight, 1.0)
    y, report = tp.slice_sample(
        edge_index, weight, SITE, LAM_OFF, K, 2 * copies, sweeps=20, burn_in=40, seed=3
    )
    assert report.n_colours == 2 and report.n_gene_colours == 2
    assert 4.0 < report.evaluations_per_update < 6.0
    # [copies * chains, cell, G]
    cells = y.reshape(copies, 2, 2, 2).transpose(0, 2, 1, 3).reshape(-1, 2, 2)
    exact = _grid_moments()
    samples = {
        "y00": cells[:, 0, 0],
        "y00*y01": cells[:, 0, 0] * cells[:, 0, 1],
        "y00*y11": cells[:, 0, 0] * cells[:, 1, 1],
        "y00*y10": cells[:, 0, 0] * cells[:, 1, 0],
        "(y00-m)^3": (cells[:, 0, 0] - exact["y00"]) ** 3,
    }
    # informative: W_intra > 0 correlates a cell's genes, W_inter[0, 1] < 0 anti-correlates gene 0
    # with the neighbour's gene 1, and the site potential skews to the left
    assert exact["y00*y01"] - exact["y00"] ** 2 > 0.05 and exact["y00*y11"] < -0.02
    assert exact["(y00-m)^3"] < -0.05
    for name, values in samples.items():
        se = values.std() / np.sqrt(len(values))
        assert abs(values.mean() - exact[name]) < 4.5 * se, (name, values.mean(), exact[name], se)


@pytest.mark.parametrize("width", [0.05, 1.0, 20.0])  # stepping out, typical, shrinkage
def test_slice_step_leaves_the_univariate_target_invariant(width: float) -> None:
    # l(t) = s t - b e^t - c e^{-t}: start from the exact law (inverse-CDF on a grid), one step
    rng = np.random.default_rng(1)
    s, b, c = 1.2, 1.5, 0.2
    t = np.linspace(-8.0, 4.0, 20001)
    log_f = s * t - b * np.exp(t) - c * np.exp(-t)
    cdf = np.cumsum(np.exp(log_f - log_f.max()))
    cdf /= cdf[-1]
    start = np.interp(rng.random(40000), cdf, t)
    moved, evaluations = tp.slice_step(start, np.full_like(start, s), b, c, width, rng)
    assert not np.array_equal(moved, start)
    for power in (1, 2, 3):
        exact = float((np.diff(cdf, prepend=0.0) * t**power).sum())
        se = moved.std() ** power / np.sqrt(len(moved)) * (2 if power > 1 else 1)
        assert abs((moved**power).mean() - exact) < 4.5 * se, (power, width)
    # a narrow width pays in stepping out (~25 per update), a wide one in shrinkage (~8)
    low, high = {0.05: (15, 40), 1.0: (4, 6), 20.0: (6, 10)}[width]
    assert low < evaluations / len(start) < high


def test_convergence_diagnostics_on_known_series() -> None:
    rng = np.random.default_rng(0)
    iid = rng.standard_normal((4000, 2, 3))  # [T, chains, S]
    assert tp._r_hat(iid) < 1.01
    assert abs(tp._autocorrelation_time(iid) - 1.0) < 0.3
    ar = np.zeros_like(iid)  # AR(1), phi = 0.8: tau = (1 + phi) / (1 - phi) = 9
    for step in range(1, len(ar)):
        ar[step] = 0.8 * ar[step - 1] + 0.6 * iid[step]
    assert 7.0 < tp._autocorrelation_time(ar) < 11.5
    # chains at means 0 and 1, variance 1: B / T = 1/2, so R-hat = sqrt(1 + 1/2)
    apart = iid + np.array([0.0, 1.0])[None, :, None]
    assert abs(tp._r_hat(apart) - math.sqrt(1.5)) < 0.03


def test_sequential_binomials_are_multinomial() -> None:
    rng = np.random.default_rng(0)
    # joint law, small total: chi-square against the exact multinomial pmf, 3 panel + rest
    p = np.array([0.1, 0.25, 0.15])
    n = 60000
    counts = tp.sequential_multinomial(np.full(n, 4), np.tile(p, (n, 1)), rng)
    keys, observed = np.unique(counts, axis=0, return_counts=True)
    full = np.append(p, 1 - p.sum())
    expected = n * stats.multinomial.pmf(np.c_[keys, 4 - keys.sum(1)], 4, full)
    assert abs(expected.sum() - n) < 1e-6 * n  # every outcome was seen
    chi2 = float(((observed - expected) ** 2 / expected).sum())
    assert stats.chi2.sf(chi2, len(keys) - 1) > 1e-3
    # marginals and covariances with varying totals and probabilities: Binomial(T, p_g) and
    # Cov(c_g, c_h) = -T p_g p_h
    totals = rng.integers(1, 400, 50000)
    probs = rng.dirichlet(np.ones(5), 50000)[:, :4] * 0.5  # [N, 4], rest >= 0.5
    counts = tp.sequential_multinomial(totals, probs, rng)
    mean = totals[:, None] * probs
    var = mean * (1 - probs)
    z = (counts - mean) / np.sqrt(var)
    np.testing.assert_allclose(z.mean(0), 0.0, atol=4.5 / np.sqrt(len(z)))
    np.testing.assert_allclose(z.var(0), 1.0, atol=0.03)
    cross = (counts[:, 0] - mean[:, 0]) * (counts[:, 2] - mean[:, 2])
    target = -totals * probs[:, 0] * probs[:, 2]
    assert abs((cross - target).mean()) < 4.5 * (cross - target).std() / np.sqrt(len(cross))
    assert (counts.sum(1) <= totals).all()


def test_panel_counts_are_binomial_given_the_totals() -> None:
    rng = np.random.default_rng(2)
    y = 0.5 * rng.standard_normal((20000, 6))
    counts, params = tp.panel_counts(y, rng, n_background=300)
    totals, probs = params["total_counts"], params["panel_probability"]
    assert counts.dtype == np.int64 and (counts.sum(1) > 0).all()
    assert 0.9 < np.median(totals) / 5000 < 1.1 and 0.45 < np.log(totals).std() < 0.55
    assert (probs.sum(1) < 0.05).all()  # the panel is a small share of the transcriptome
    # the panel probabilities are the softmax over panel and background: rates exp(alpha + y)
    rate = np.exp(params["baseline"] + y)
    background = rate.sum(1) / probs.sum(1) - rate.sum(1)  # [N] implied background mass
    np.testing.assert_allclose(probs, rate / (rate.sum(1, keepdims=True) + background[:, None]))
    assert background.std() / background.mean() > 0.01  # the background varies by spot
    # marginals: Binomial(T_i, p_ig) mean and variance
    mean = totals[:, None] * probs
    z = (counts - mean) / np.sqrt(mean * (1 - probs))
    np.testing.assert_allclose(z.mean(0), 0.0, atol=4.5 / np.sqrt(len(z)))
    np.testing.assert_allclose(z.var(0), 1.0, atol=0.05)
    # the baselines hit the stratified gene means, a third of them below one count per spot
    gene_mean = params["gene_mean"]
    np.testing.assert_allclose(counts.mean(0), gene_mean, rtol=0.05)
    assert (gene_mean >= 0.2).all() and (gene_mean <= 20).all()
    assert 2 <= (gene_mean < 1).sum() <= 3  # stratified: 35 % of 6 genes, rounded either way


def _tiny(seed: int = 4) -> tp.PanelTissue:
    return tp.simulate(150, 8, seed=seed, sweeps=10, burn_in=10, n_background=200)


def test_truth_is_the_energys_mixed_second_derivatives() -> None:
    tissue = _tiny()
    f = tissue.field
    src, dst = tissue.edge_index
    rng = np.random.default_rng(0)
    y = 0.5 * rng.standard_normal(tissue.latent.shape)

    def log_p(v: np.ndarray) -> float:
        return tp.log_density(
            v, tissue.edge_index, tissue.edge_weight, f, f["lam_off"], f["K"]
        )  # fmt: skip

    # the module's log density is the docstring's, written out here
    single = (f["a"] * y - f["b"] * np.exp(y) - f["c"] * np.exp(-y)).sum()
    pairs = sum(
        w * y[i] @ f["K"] @ y[j] for j, i, w in zip(src, dst, tissue.edge_weight, strict=True)
    )
    own = -0.5 * sum(row @ f["lam_off"] @ row for row in y)
    assert log_p(y) == pytest.approx(single + own + pairs, rel=1e-12)

    def mixed(i: int, g: int, j: int, h: int, step: float = 0.05) -> float:
        def at(di: float, dj: float) -> float:
            v = y.copy()
            v[i, g] += di
            v[j, h] += dj
            return log_p(v)

        return (at(step, step) - at(step, -step) - at(-step, step) + at(-step, -step)) / (
            4 * step**2
        )

    # within a cell: 2 W_intra[g, h]; the truth has a zero diagonal and both signs
    g_count = tissue.W_intra.shape[0]
    for g, h in [(0, 1), (2, 5), (3, 7), (1, 6)]:
        assert mixed(7, g, 7, h) == pytest.approx(2 * tissue.W_intra[g, h], abs=1e-7)
    off = tissue.W_intra[np.triu_indices(g_count, 1)]
    assert (off > 0).any() and (off < 0).any() and (off == 0).any()
    assert np.all(np.diag(tissue.W_intra) == 0)
    for w in (tissue.W_intra, tissue.W_inter):
        np.testing.assert_array_equal(w, w.T)
    # across an edge j -> i: w_ij W_inter[g, h] (plus w_ji if i -> j is an edge too)
    weight = dict(zip(zip(src.tolist(), dst.tolist()), tissue.edge_weight.tolist()))
    one_way = [(j, i) for (j, i) in weight if (i, j) not in weight]
    both_ways = [(j, i) for (j, i) in weight if (i, j) in weight]
    assert one_way and both_ways  # the boundary makes the k-NN graph asymmetric
    for j, i in (one_way[0], both_ways[0]):
        total = weight[(j, i)] + weight.get((i, j), 0.0)
        for g, h in [(0, 0), (1, 4), (6, 2)]:
            assert mixed(i, g, j, h) == pytest.approx(total * tissue.W_inter[g, h], abs=1e-7)
    far = next(c for c in range(150) if (c, 0) not in weight and (0, c) not in weight and c)
    assert mixed(0, 1, far, 2) == pytest.approx(0.0, abs=1e-7)


def test_log_density_is_strictly_concave() -> None:
    # -Hessian >= I (x) (D + Lam_off) - S (x) K with D = 2 sqrt(b c), the sites' least curvature
    tissue = _tiny()
    f = tissue.field
    n, g = tissue.latent.shape
    s = np.zeros((n, n))
    np.add.at(s, (tissue.edge_index[1], tissue.edge_index[0]), tissue.edge_weight)
    s = s + s.T
    bound = np.kron(np.eye(n), np.diag(f["floor"]) + f["lam_off"]) - np.kron(s, f["K"])
    lowest = np.linalg.eigvalsh(bound)[0]
    assert lowest > 0.05 * f["floor"].min()
    t = np.linspace(-6, 6, 1001)[:, None]
    assert (f["b"] * np.exp(t) + f["c"] * np.exp(-t) >= f["floor"] * (1 - 1e-12)).all()


def test_layout_is_a_lattice_with_holes_and_a_long_boundary() -> None:
    from scipy.spatial import cKDTree

    coords, outline = tp.section_positions(2000, np.random.default_rng(0))
    assert coords.shape == (2000, 2)
    distance = cKDTree(coords).query(coords, 8)[0][:, 1:]  # [N, 7]
    assert abs(np.median(distance[:, :6]) - 1.0) < 0.02  # hexagonal lattice, spacing 1
    assert (np.diff(distance, axis=1) > 1e-9).all()  # jitter: no ties up to the 7th neighbour
    # boundary: twice the share of a disc of 2,000 lattice spots
    r = np.arange(-40, 41)
    row, col = np.meshgrid(r, r, indexing="ij")
    lattice = np.stack([col + 0.5 * (row % 2), row * math.sqrt(3) / 2], -1).reshape(-1, 2)
    disc = lattice[np.argsort(np.linalg.norm(lattice, axis=1), kind="stable")[:2000]]
    disc_share = tp.boundary_spots(disc).mean()
    share = tp.boundary_spots(coords).mean()
    assert 0.06 < disc_share < 0.1 and share > 1.5 * disc_share
    # holes: empty inside, enclosed by spots in every direction
    centres, radii = outline["hole_centres"], outline["hole_radii"]
    assert len(radii) == 3 and (radii > 3).all()
    gaps = np.linalg.norm(centres[:, None] - centres[None], axis=-1) - radii[:, None] - radii
    assert (gaps[~np.eye(3, dtype=bool)] > 2).all()  # seed 0: three separate holes
    for centre, radius in zip(centres, radii):
        offset = coords - centre
        dist = np.linalg.norm(offset, axis=1)
        assert dist.min() > 0.95 * radius - 0.5
        ring = (dist > radius) & (dist < radius + 2.5)
        angle = np.arctan2(offset[ring, 1], offset[ring, 0])
        assert len(np.unique(np.floor((angle + np.pi) / (np.pi / 4)))) == 8


def test_tissue_graph_seed_and_anndata() -> None:
    from graphdata.spatial import knn_graph

    tissue = _tiny()
    again = _tiny()
    other = _tiny(seed=5)
    np.testing.assert_array_equal(tissue.counts, again.counts)
    np.testing.assert_array_equal(tissue.latent, again.latent)
    np.testing.assert_array_equal(tissue.W_inter, again.W_inter)
    assert not np.array_equal(tissue.counts, other.counts)
    # the graph is knn_graph of the returned coordinates with GCN weights (in-degree 6)
    edge_index, _ = knn_graph(tissue.coords, 6)
    np.testing.assert_array_equal(tissue.edge_index, edge_index.numpy())
    np.testing.assert_allclose(tissue.edge_weight, 1.0 / 6.0)
    assert tissue.counts.dtype == np.int64 and (tissue.counts.sum(1) > 0).all()
    np.testing.assert_allclose(np.linalg.norm(tissue.x, axis=1), 1.0, rtol=1e-10)
    adata = tissue.to_anndata()
    np.testing.assert_array_equal(adata.layers["counts"], tissue.counts)
    np.testing.assert_array_equal(adata.varp["true_intra"], tissue.W_intra)
    np.testing.assert_array_equal(adata.obs["total_counts"], tissue.count_params["total_counts"])
    assert adata.obs["boundary"].mean() == tissue.params["boundary_fraction"] > 0
    conn = adata.obsp["spatial_connectivities"].tocoo()
    assert set(zip(conn.col.tolist(), conn.row.tolist())) == set(
        map(tuple, tissue.edge_index.T.tolist())
    )
    sampler = adata.uns["tissue_panel"]["sampler"]
    assert {"r_hat_max", "evaluations_per_update", "x2_max_z", "thin"} <= set(sampler)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: tp.simulate(150, 8, intra_norm=1.0), "intra_norm, margin"),
        (lambda: tp.simulate(150, 5), "n_genes: expected >= 6"),
        (lambda: tp.site_parameters(4, np.random.default_rng(0), barrier=0.0), "barrier"),
        (
            lambda: tp.slice_sample(EDGES, np.ones(1), {**SITE, "c": 0 * C}, LAM_OFF, K, 2),
            "c > 0 makes p normalisable",
        ),
        (lambda: tp.slice_sample(EDGES, np.ones(1), SITE, np.eye(2), K, 2), "zero diagonal"),
    ],
)
def test_refusals(call, match: str) -> None:
    with pytest.raises(GraphDataError, match=match):
        call()


def test_bench_registers_the_world_and_refuses_size_factors(capsys) -> None:
    # wiring only: the world is held out, so no Celcomen fit runs on it here
    from benchmarks import bench_celcomen_counts as bench

    assert bench.WORLDS["panel"] is tp
    with pytest.raises(SystemExit):
        bench.main(["--world", "panel", "--size-factor-sd", "0.5"])
    assert "panel draws its own size factors" in capsys.readouterr().err
