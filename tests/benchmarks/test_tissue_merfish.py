"""benchmarks.tissue_merfish: the session-27 tissue simulator, against exact oracles.

No test fits Celcomen on this world (held out until its one run in session 32): the bench is checked
for its registration and its refusals only. The sampler's invariance is checked on a two-cell graph
with two genes (edge 1 -> 0, the cells in different laminae), replicated into many disjoint copies,
whose density on R^4 is integrated on a grid written here from the module docstring's formula; the
truth against finite differences of the energy; the count model against the Poisson closed forms of
its thinned and superposed stages; the section fraction against a quadrature of the ball's
cross-sections.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks import tissue_merfish as tm
from benchmarks.tissue_gibbs_pln import symmetric_adjacency
from benchmarks.tissue_metropolis import gcn_weights, greedy_colouring, knn_edges
from graphdata.errors import GraphDataError

SITE = {
    "kappa": np.array([0.8, 1.0]),
    "beta": np.array([0.4, -0.3]),
    "hill_n": np.array([2.5, 2.0]),
    "theta": np.array([0.3, -0.2]),
    "shift": np.array([[0.2, -0.1], [-0.3, 0.25]]),  # lamina 0 (cell 0), lamina 1 (cell 1)
}
LAMINA = np.array([0, 1])
J = np.array([[0.0, 1.4], [1.4, 0.0]])  # mutual activation within a cell
K = np.array([[0.8, -1.2], [-1.2, -0.9]])  # lateral inhibition on gene 1
EDGES = np.array([[1], [0]])  # 1 -> 0; in-degrees (1, 0 -> 1), so w = 1


def _sigma(t: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-t))


def _phi(t: np.ndarray, gene: int) -> np.ndarray:
    return _sigma(SITE["hill_n"][gene] * (t - SITE["theta"][gene]))


def _site(t: np.ndarray, gene: int, lamina: int) -> np.ndarray:
    u = t - SITE["shift"][lamina, gene]
    return SITE["beta"][gene] * u - SITE["kappa"][gene] * np.cosh(u)


def _grid_moments(m: int = 44, lo: float = -6.5, hi: float = 6.5) -> dict[str, float]:
    """Moments of p(y0, y1) on R^2 x R^2, the docstring's energy, by a Riemann sum."""
    t = np.linspace(lo, hi, m)
    a0, b0, a1, b1 = np.meshgrid(t, t, t, t, indexing="ij", sparse=True)  # y0 = (a0, b0)
    log_p = _site(a0, 0, 0) + _site(b0, 1, 0) + _site(a1, 0, 1) + _site(b1, 1, 1)
    pa0, pb0, pa1, pb1 = _phi(a0, 0), _phi(b0, 1), _phi(a1, 0), _phi(b1, 1)
    log_p = log_p + 2 * J[0, 1] * (pa0 * pb0 + pa1 * pb1)  # phi^T J phi, both cells
    log_p = log_p + K[0, 0] * pa0 * pa1 + K[0, 1] * pa0 * pb1 + K[1, 0] * pb0 * pa1
    log_p = log_p + K[1, 1] * pb0 * pb1  # w_01 phi(y0)^T K phi(y1), w = 1
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    edges = [p[0], p[-1], p[:, 0], p[:, -1], p[:, :, 0], p[:, :, -1], p[..., 0], p[..., -1]]
    assert max(e.max() for e in edges) < 1e-6 * p.max()  # the grid holds the mass
    mean = float((p * a0).sum())
    return {
        "y00": mean,
        "y01": float((p * b0).sum()),
        "y10": float((p * a1).sum()),
        "y11": float((p * b1).sum()),
        "y00*y01": float((p * a0 * b0).sum()),
        "y00*y11": float((p * a0 * b1).sum()),
        "y01*y11": float((p * b0 * b1).sum()),
        "(y00-m)^2": float((p * (a0 - mean) ** 2).sum()),
        "(y00-m)^3": float((p * (a0 - mean) ** 3).sum()),
    }


def test_kinetic_langevin_matches_the_grid_oracle() -> None:
    copies = 2500
    edge_index = np.concatenate([EDGES + 2 * c for c in range(copies)], axis=1)
    weight = gcn_weights(edge_index, 2 * copies)
    np.testing.assert_allclose(weight, 1.0)
    lamina = np.tile(LAMINA, copies)
    y, report = tm.kinetic_langevin(
        edge_index, weight, SITE, lamina, J, K, 2 * copies, sweeps=40, burn_in=40, seed=3
    )
    assert report.r_hat_max < 1.1 and report.n_colours == 2
    assert 0.6 < report.acceptance < 1.0
    assert report.config_temperature == pytest.approx(1.0, abs=0.06)
    # [2 copies, chains, G] -> [copies * chains, cell, G]: both chains are draws
    cells = y.reshape(copies, 2, 2, 2).transpose(0, 2, 1, 3).reshape(-1, 2, 2)
    exact = _grid_moments()
    # informative: J > 0 correlates a cell's genes, K[0, 1] < 0 and the lateral inhibition
    # anti-correlate across the edge, the laminae move the means, the site is skewed
    assert exact["y00*y01"] - exact["y00"] * exact["y01"] > 0.05
    assert exact["y00*y11"] - exact["y00"] * exact["y11"] < -0.02
    assert exact["y01*y11"] - exact["y01"] * exact["y11"] < -0.02
    assert abs(exact["y00"] - exact["y10"]) > 0.2
    assert exact["(y00-m)^3"] < -0.1 or exact["(y00-m)^3"] > 0.1
    samples = {
        "y00": cells[:, 0, 0],
        "y01": cells[:, 0, 1],
        "y10": cells[:, 1, 0],
        "y11": cells[:, 1, 1],
        "y00*y01": cells[:, 0, 0] * cells[:, 0, 1],
        "y00*y11": cells[:, 0, 0] * cells[:, 1, 1],
        "y01*y11": cells[:, 0, 1] * cells[:, 1, 1],
        "(y00-m)^2": (cells[:, 0, 0] - exact["y00"]) ** 2,
        "(y00-m)^3": (cells[:, 0, 0] - exact["y00"]) ** 3,
    }
    for name, values in samples.items():
        se = values.std() / np.sqrt(len(values))
        assert abs(values.mean() - exact[name]) < 4.5 * se, (name, values.mean(), exact[name], se)


def test_lone_sites_and_slope_match_quadrature() -> None:
    # e^y ~ GIG(beta, kappa, kappa): the draws' moments against the density e^{beta y - kappa
    # cosh y} integrated on a grid; lone_slope against the draws
    site = {k: v for k, v in SITE.items() if k != "shift"}
    y = tm.lone_sites(site, 200_000, np.random.default_rng(5))
    t = np.linspace(-12, 12, 20001)[:, None]
    log_p = site["beta"] * t - site["kappa"] * np.cosh(t)
    p = np.exp(log_p - log_p.max(0))
    p /= p.sum(0)
    mean, var = (p * t).sum(0), (p * t**2).sum(0) - ((p * t).sum(0)) ** 2
    se = np.sqrt(var / len(y))
    assert (np.abs(y.mean(0) - mean) < 4.5 * se).all()
    np.testing.assert_allclose(y.var(0), var, rtol=0.02)
    slope = tm.hill(y, site)[1]
    se = slope.std(0) / np.sqrt(len(y))
    assert (np.abs(slope.mean(0) - tm.lone_slope(site)) < 4.5 * se).all()


def _random_field(n: int = 40, g: int = 5, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    edge_index = knn_edges(rng.random((n, 2)) * 6, 6)
    weight = gcn_weights(edge_index, n)
    j0, k0, _ = tm.draw_couplings(g, rng)
    site = tm.site_parameters(g, rng, n_laminae=3, layer_shift=0.4)
    lamina = rng.integers(3, size=n)
    return {
        "edge_index": edge_index,
        "weight": weight,
        "site": site,
        "lamina": lamina,
        "J": 0.8 * j0,
        "K": 0.6 * k0,
        "y": rng.standard_normal((n, g)),
    }


def test_gradient_cell_energy_and_curvature_match_finite_differences() -> None:
    f = _random_field()
    y, n = f["y"], len(f["y"])
    s = symmetric_adjacency(f["edge_index"], f["weight"], n)
    args = (f["site"], f["lamina"], f["J"], f["K"])

    def energy(v: np.ndarray) -> float:
        return tm.log_density(v, f["edge_index"], f["weight"], *args)

    grad = tm.grad_log_density(y, s, *args)
    np.testing.assert_allclose(tm.grad_log_density(y[:, None], s, *args)[:, 0], grad, rtol=1e-12)
    h = 1e-5
    phi, _, d2 = tm.hill(y, f["site"])
    nu = s @ phi
    centre = f["site"]["shift"][f["lamina"]]
    curv = f["site"]["kappa"] * np.cosh(y - centre) - d2 * (2 * phi @ f["J"] + nu @ f["K"])
    for i, gene in [(0, 0), (7, 3), (39, 4), (20, 1)]:
        up, down = y.copy(), y.copy()
        up[i, gene] += h
        down[i, gene] -= h
        assert grad[i, gene] == pytest.approx((energy(up) - energy(down)) / (2 * h), abs=1e-6)
        second = (energy(up) - 2 * energy(y) + energy(down)) / h**2
        assert -second == pytest.approx(curv[i, gene], abs=2e-3)
    # the Metropolis test's E_i holds every term of E that moves with y_i
    rng = np.random.default_rng(1)
    for i in (0, 13, 39):
        moved = y.copy()
        moved[i] += rng.standard_normal(y.shape[1])
        e_i = [
            tm.cell_energy(v[i], nu[i], f["site"], centre[i], f["J"], f["K"]) for v in (moved, y)
        ]
        assert energy(moved) - energy(y) == pytest.approx(e_i[0] - e_i[1], rel=1e-10)


def _tiny(seed: int = 4) -> tm.MerfishTissue:
    return tm.simulate(150, 8, seed=seed, sweeps=10, burn_in=10, panel_size=60)


def test_truth_is_the_mean_drift_jacobian() -> None:
    tissue = _tiny()
    f = tissue.field
    src, dst = tissue.edge_index
    w = tissue.edge_weight
    n, g = tissue.latent.shape
    y = tissue.latent  # the truth is taken at the tissue's own state

    def energy(v: np.ndarray) -> float:
        return tm.log_density(v, tissue.edge_index, w, f, tissue.cells["lamina"], f["J"], f["K"])

    # the module's energy is the docstring's, written out here
    t = y - f["shift"][tissue.cells["lamina"]]
    phi = 1 / (1 + np.exp(-f["hill_n"] * (y - f["theta"])))
    single = (f["beta"] * t - f["kappa"] * np.cosh(t)).sum()
    own = sum(row @ f["J"] @ row for row in phi)
    pairs = sum(wt * phi[i] @ f["K"] @ phi[j] for j, i, wt in zip(src, dst, w, strict=True))
    assert energy(y) == pytest.approx(single + own + pairs, rel=1e-12)

    def mixed(a: np.ndarray, ga: int, b: np.ndarray, gb: int, step: float = 1e-3) -> float:
        """d^2 E / d eps1 d eps2 at Y + eps1 a e_ga^T + eps2 b e_gb^T (a, b over cells)."""
        out = 0.0
        for s1, s2 in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
            v = y.copy()
            v[:, ga] += s1 * step * a
            v[:, gb] += s2 * step * b
            out += s1 * s2 * energy(v)
        return out / (4 * step**2)

    # sum over ordered pairs of distinct cells: every adjacent pair has two colours
    colours = greedy_colouring(tissue.edge_index, n)
    ind = [np.isin(np.arange(n), c).astype(float) for c in colours]
    for ga, gb in [(0, 1), (2, 5), (3, 3), (6, 6), (1, 7)]:
        cross = sum(mixed(a, ga, b, gb) for ia, a in enumerate(ind) for ib, b in enumerate(ind)
                    if ia != ib)  # fmt: skip
        assert cross == pytest.approx(2 * w.sum() * tissue.W_inter[ga, gb], abs=1e-5)
        if ga != gb:  # within cells: the whole sum less the cross-cell part
            whole = mixed(np.ones(n), ga, np.ones(n), gb)
            assert whole - cross == pytest.approx(2 * n * tissue.W_intra[ga, gb], abs=1e-5)
    # pointwise: within a cell 2 J phi' phi'; across an edge (w_ij + w_ji) K phi' phi'; else 0
    d1 = tm.hill(y, f)[1]
    e = np.eye(n)
    for i, ga, gb in [(5, 0, 1), (77, 2, 6)]:
        expect = 2 * f["J"][ga, gb] * d1[i, ga] * d1[i, gb]
        assert mixed(e[i], ga, e[i], gb) == pytest.approx(expect, abs=1e-6)
    weight = dict(zip(zip(src.tolist(), dst.tolist()), w.tolist()))
    one_way = [(j, i) for (j, i) in weight if (i, j) not in weight]
    both_ways = [(j, i) for (j, i) in weight if (i, j) in weight]
    assert one_way and both_ways
    for j, i in (one_way[0], both_ways[0]):
        total = weight[(j, i)] + weight.get((i, j), 0.0)
        for ga, gb in [(0, 0), (1, 4), (6, 2)]:
            expect = total * f["K"][ga, gb] * d1[i, ga] * d1[j, gb]
            assert mixed(e[i], ga, e[j], gb) == pytest.approx(expect, abs=1e-6)
    far = next(c for c in range(n) if (c, 0) not in weight and (0, c) not in weight and c)
    assert mixed(e[0], 1, e[far], 2) == pytest.approx(0.0, abs=1e-6)
    # signs: phi' > 0, so the truth has the signs of J and K; symmetric, zero intra diagonal
    np.testing.assert_array_equal(np.sign(tissue.W_intra), np.sign(f["J"]))
    np.testing.assert_array_equal(np.sign(tissue.W_inter), np.sign(f["K"]))
    assert (tissue.W_intra > 0).any() and (tissue.W_intra < 0).any()
    for mat in (tissue.W_intra, tissue.W_inter):
        np.testing.assert_allclose(mat, mat.T, rtol=1e-12)
    assert np.all(np.diag(tissue.W_intra) == 0)


def test_couplings_are_a_tf_network_and_ligand_receptor_pairs() -> None:
    j0, k0, genes = tm.draw_couplings(20, np.random.default_rng(1))
    tf = genes["tf"]
    assert len(tf) == 5
    is_tf = np.isin(np.arange(20), tf)
    np.testing.assert_array_equal(j0, j0.T)
    assert np.all(np.diag(j0) == 0)
    assert np.all(j0[np.ix_(~is_tf, ~is_tf)] == 0)  # targets are regulated by TFs only
    per_target = (j0[np.ix_(~is_tf, is_tf)] != 0).sum(1)
    assert ((per_target >= 1) & (per_target <= 2)).all()
    assert (j0[np.ix_(is_tf, is_tf)] <= 0).all()  # TF pairs cross-repress
    mags = np.abs(j0[j0 != 0])
    assert ((mags >= 0.5) & (mags <= 1.0)).all()
    off = k0 - np.diag(np.diag(k0))
    lig, rec = genes["ligand"], genes["receptor"]
    assert len(lig) == len(rec) == 4 and not set(lig) & set(rec) and not set(lig) & set(tf)
    a, b = np.nonzero(np.triu(off))
    assert all((x in lig and y in rec) or (x in rec and y in lig) for x, y in zip(a, b))
    assert ((off[lig] != 0).sum(1) == 1).all()  # one receptor per ligand
    assert (np.diag(k0)[genes["community"]] > 0).all()
    assert (np.diag(k0)[genes["inhibit"]] < 0).all()
    for g, seed in [(4, 0), (5, 1), (10, 2), (10, 3), (20, 4)]:  # both signs in both matrices
        j0, k0, _ = tm.draw_couplings(g, np.random.default_rng(seed))
        assert all((m > 0).any() and (m < 0).any() for m in (j0, k0))


def test_section_fraction_matches_the_cross_section_integral() -> None:
    r = np.array([3.0, 5.0, 8.0, 6.0, 4.0, 7.0])
    z = np.array([5.0, 0.0, 5.0, -2.0, 12.5, 16.5])
    frac = tm.section_fraction(z, r, 10.0)
    for zc, rc, fc in zip(z, r, frac):
        lo, hi = max(-rc, -zc), min(rc, 10.0 - zc)
        t = np.linspace(lo, hi, 200_001)
        area = math.pi * (rc**2 - t**2)
        integral = float(((area[1:] + area[:-1]) / 2 * np.diff(t)).sum()) if hi > lo else 0.0
        assert fc == pytest.approx(integral / (4 / 3 * math.pi * rc**3), abs=1e-8)
    assert frac[0] == 1.0 and frac[1] == pytest.approx(0.5)
    assert tm.section_fraction(np.array([-9.0]), np.array([8.0]), 10.0)[0] == 0.0


def test_detect_matches_the_poisson_closed_forms() -> None:
    copies = 100_000
    whole = np.array([[6.0, 0.4, 20.0]])
    f, eta, q, eps = np.array([0.4]), np.array([0.9, 0.6, 0.3]), np.array([0.7]), np.array([0.05])
    rng = np.random.default_rng(11)
    c = tm.detect(
        np.repeat(whole, copies, 0), np.repeat(f, copies), eta, np.repeat(q, copies),
        np.repeat(eps, copies), rng,
    ).astype(np.float64)  # fmt: skip
    lam = whole[0] * f[0] * eta * q[0] + eps[0]  # thinning then superposition
    se = np.sqrt(lam / copies)
    assert (np.abs(c.mean(0) - lam) < 4.5 * se).all()
    np.testing.assert_allclose(c.var(0), lam, rtol=0.03)  # Poisson: variance = mean
    zero = np.exp(-lam)
    assert (np.abs((c == 0).mean(0) - zero) < 4.5 * np.sqrt(zero * (1 - zero) / copies)).all()
    corr = np.corrcoef(c[:, 0], c[:, 2])[0, 1]  # genes independent given the rates
    assert abs(corr) < 4.5 / math.sqrt(copies)


def test_merfish_counts_structure() -> None:
    tissue = _tiny()
    p, cells, coupled = tissue.count_params, tissue.cells, tissue.coupled
    assert tissue.counts.shape == (150, 60) and tissue.counts.dtype == np.int64
    assert (p["role"][coupled] == "coupled").all() and (p["role"] == "coupled").sum() == 8
    vol = p["volume"]
    np.testing.assert_allclose(vol, (cells["radius"] / np.median(cells["radius"])) ** 3)
    in_section = cells["fraction"][:, None] * p["whole"][:, coupled]
    np.testing.assert_allclose(in_section.mean(0), p["gene_mean"], rtol=1e-10)
    np.testing.assert_allclose(
        np.log(p["whole"][:, coupled] / vol[:, None]) - p["baseline"], tissue.latent, atol=1e-10
    )
    lam = (
        p["whole"] * cells["fraction"][:, None] * p["efficiency"] * p["crowd"][:, None]
        + p["false_rate"][:, None]
    )
    np.testing.assert_allclose(p["rate"], lam, rtol=1e-12)
    # crowding: median 1 - 0.2, falls with the local density of in-section molecules
    assert np.median(p["crowd"]) == pytest.approx(0.8, rel=1e-9)
    order = np.argsort(p["crowd_density"])
    assert (np.diff(p["crowd"][order]) <= 0).all()
    np.testing.assert_allclose(p["false_rate"], 0.03 * cells["area"] / np.median(cells["area"]))
    for j in np.flatnonzero(p["marker_type"] >= 0)[:5]:
        fold = np.log(p["whole"][:, j] / (vol * p["base_mean"][j]))
        np.testing.assert_allclose(fold[tissue.cell_type != p["marker_type"][j]], 0.0, atol=1e-12)
        on = fold[tissue.cell_type == p["marker_type"][j]]
        assert ((on >= 1.5) & (on <= 3.0)).all()
    np.testing.assert_array_equal(p["total_counts"], tissue.counts.sum(1))


def test_layout_graph_seed_and_anndata() -> None:
    import scipy.sparse as sp
    from scipy.spatial import cKDTree

    from graphdata.spatial import knn_graph

    tissue = tm.simulate(800, 8, seed=2, sweeps=4, burn_in=2)
    cells = tissue.cells
    r = cells["radius"]
    pts = np.column_stack([tissue.coords, cells["z"]])
    # 3-D hard core, section fraction and segmented area
    pairs = cKDTree(pts).query_pairs(2 * float(r.max()), output_type="ndarray")
    dist = np.linalg.norm(pts[pairs[:, 0]] - pts[pairs[:, 1]], axis=1)
    assert (dist >= r[pairs[:, 0]] + r[pairs[:, 1]]).all()
    np.testing.assert_allclose(cells["fraction"], tm.section_fraction(cells["z"], r, 10.0))
    assert (cells["fraction"] >= 0.15).all()
    assert (cells["area"] > 0).all() and (cells["area"] <= math.pi * r**2 + 1e-9).all()
    inside = (cells["z"] >= 0) & (cells["z"] <= 10)
    np.testing.assert_allclose(cells["area"][inside], math.pi * r[inside] ** 2)
    # laminae follow depth; types come from their lamina's composition; radii from their type
    lam = cells["lamina"]
    assert set(lam.tolist()) == set(range(6))
    depth = np.array([tissue.coords[lam == k, 1].mean() for k in range(6)])
    assert (np.diff(depth) > 0).all()
    assert (tm.LAMINA_TYPES[lam, tissue.cell_type] > 0).all()
    lo, hi = tm.RADIUS[tissue.cell_type].T
    assert ((r >= lo) & (r <= hi)).all()
    # density gradient: cells per um of depth, L1 sparsest, L4 denser than L5
    per_depth = np.bincount(lam, minlength=6) / np.diff([0, 120, 360, 500, 700, 900, 1050])
    assert per_depth.argmin() == 0 and per_depth[2] > per_depth[3]
    assert 120 <= tissue.counts.shape[1] <= 500
    edge_index, _ = knn_graph(tissue.coords, 6)
    np.testing.assert_array_equal(tissue.edge_index, edge_index.numpy())
    np.testing.assert_allclose(tissue.edge_weight, 1.0 / 6.0)
    np.testing.assert_allclose(np.linalg.norm(tissue.x, axis=1), 1.0, rtol=1e-10)
    # seed determinism
    small, again, other = _tiny(), _tiny(), _tiny(seed=5)
    for a, b in [
        (small.counts, again.counts),
        (small.latent, again.latent),
        (small.W_inter, again.W_inter),
        (small.coords, again.coords),
    ]:
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(small.counts, other.counts)
    adata = tissue.to_anndata()
    n, p = tissue.counts.shape
    assert adata.shape == (800, p)
    assert sp.issparse(adata.X) and sp.issparse(adata.layers["counts"])
    np.testing.assert_array_equal(adata.layers["counts"].toarray(), tissue.counts)
    hvg = adata.var["highly_variable"].to_numpy()
    assert hvg.dtype == bool and hvg.sum() == 8
    np.testing.assert_array_equal(np.flatnonzero(hvg), tissue.coupled)
    uns = adata.uns["tissue_merfish"]
    assert list(adata.var_names[hvg]) == uns["coupled_genes"]
    np.testing.assert_array_equal(uns["W_intra"], tissue.W_intra)
    np.testing.assert_allclose(adata.layers["signed"][:, hvg], tissue.x, rtol=1e-6)
    assert (adata.layers["signed"][:, ~hvg] == 0).all()
    np.testing.assert_array_equal(adata.obs["total_counts"], tissue.counts.sum(1))
    np.testing.assert_array_equal(adata.obs["section_fraction"], cells["fraction"])
    assert list(adata.obs["lamina"].cat.categories) == ["L1", "L2/3", "L4", "L5", "L6", "WM"]
    conn = adata.obsp["spatial_connectivities"].tocoo()
    assert set(zip(conn.col.tolist(), conn.row.tolist())) == set(
        map(tuple, tissue.edge_index.T.tolist())
    )
    assert {"acceptance", "r_hat_max", "config_temperature", "x2_max_z"} <= set(uns["sampler"])
    assert tissue.to_anndata(sparse=False).layers["counts"].dtype == np.int64


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: tm.simulate(150, 8, intra_norm=1.0), "intra_norm, margin"),
        (lambda: tm.simulate(6, 8), "more than k"),
        (lambda: tm.simulate(150, 3), "n_genes: expected >= 4"),
        (lambda: tm.simulate(150, 8, layer_shift=-1.0), "layer_shift"),
        (lambda: tm.simulate(150, 8, crowding=1.0), "crowding"),
        (lambda: tm.simulate(150, 8, panel_size=12), "panel_size"),
        (lambda: tm.cortex_cells(100, np.random.default_rng(0), thickness=0.0), "thickness"),
        (
            lambda: tm.kinetic_langevin(
                EDGES, np.ones(1), {**SITE, "kappa": 0 * SITE["kappa"]}, LAMINA, J, K, 2
            ),
            "kappa and hill_n",
        ),
        (lambda: tm.kinetic_langevin(EDGES, np.ones(1), SITE, LAMINA, np.eye(2), K, 2), "zero"),
        (lambda: tm.kinetic_langevin(EDGES, np.ones(1), SITE, LAMINA, J, K, 2, step=0), "step"),
        (
            lambda: tm.detect(
                np.ones((1, 1)),
                np.array([1.5]),
                np.ones(1),
                np.ones(1),
                np.zeros(1),
                np.random.default_rng(0),
            ),
            "fraction: expected probabilities",
        ),  # fmt: skip
    ],
)
def test_refusals(call, match: str) -> None:
    with pytest.raises(GraphDataError, match=match):
        call()


def test_bench_registers_the_world_and_refuses_foreign_options(capsys) -> None:
    # wiring only: the world is held out, so no Celcomen fit runs on it here
    from benchmarks import bench_celcomen_counts as bench

    assert bench.WORLDS["merfish"] is tm
    with pytest.raises(SystemExit):
        bench.main(["--world", "merfish", "--size-factor-sd", "0.5"])
    assert "merfish draws its own size factors" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--world", "merfish", "--background-genes", "100"])
    assert "merfish holds its own panel" in capsys.readouterr().err
