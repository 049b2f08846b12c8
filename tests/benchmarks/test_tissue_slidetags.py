"""benchmarks.tissue_slidetags: the session-32 held-out tissue simulator, against exact oracles.

No test fits Celcomen on this world (it is held out): the bench is checked for its registration
and its refusals only. The sampler's invariance is checked on a two-cell graph with two genes
(edge 1 -> 0, the cells at different centres), replicated into many disjoint copies, whose density
on R^4 is integrated on a grid written here from the module docstring's formula; the exact
conditional draws against a one-dimensional quadrature; the truth against finite differences of
the energy; the droplet model against the closed forms of its thinned stages; the layout against
the geometry it states.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial import cKDTree
from scipy.special import ndtr

from benchmarks import tissue_slidetags as ts
from benchmarks.tissue_gibbs_pln import symmetric_adjacency
from benchmarks.tissue_metropolis import gcn_weights, greedy_colouring, knn_edges
from graphdata.errors import GraphDataError


def _site() -> dict[str, np.ndarray]:
    site = {
        "sigma": np.array([0.8, 0.7]),
        "delta": np.array([1.3, 1.2]),
        "epsilon": np.array([0.5, -0.4]),
        "p_lo": np.array([0.2, 0.1]),
        "p_hi": np.array([0.85, 0.9]),
    }
    site["lo"] = ts.lone_quantile(site, site["p_lo"])
    site["hi"] = ts.lone_quantile(site, site["p_hi"])
    site["offset"] = ts.lone_clip_mean(site)
    return site


SITE = _site()
CENTRE = np.array([[0.2, -0.1], [-0.3, 0.25]])  # cell 0, cell 1
J = np.array([[0.0, 2.0], [2.0, 0.0]])  # mutual activation within a cell
K = np.array([[1.0, -1.6], [-1.6, -1.2]])  # lateral inhibition on gene 1
EDGES = np.array([[1], [0]])  # 1 -> 0; in-degrees (1, 0 -> 1), so w = 1


def _u(v: np.ndarray, gene: int) -> np.ndarray:
    """The sinh-arcsinh site of the docstring, written out."""
    t = v / SITE["sigma"][gene]
    s = np.sinh(SITE["delta"][gene] * np.arcsinh(t) - SITE["epsilon"][gene])
    return -0.5 * s**2 + np.log(np.sqrt(1 + s**2)) - 0.5 * np.log(1 + t**2)


def _psi(v: np.ndarray, gene: int) -> np.ndarray:
    return np.minimum(SITE["hi"][gene], np.maximum(SITE["lo"][gene], v)) - SITE["offset"][gene]


def _grid_moments(m: int = 46, lo: float = -5.0, hi: float = 5.5) -> dict[str, float]:
    """Moments of p(y0, y1) on R^2 x R^2, the docstring's energy, by a Riemann sum."""
    t = np.linspace(lo, hi, m)
    a0, b0, a1, b1 = np.meshgrid(t, t, t, t, indexing="ij", sparse=True)  # y0 = (a0, b0)
    log_p = _u(a0 - CENTRE[0, 0], 0) + _u(b0 - CENTRE[0, 1], 1)
    log_p = log_p + _u(a1 - CENTRE[1, 0], 0) + _u(b1 - CENTRE[1, 1], 1)
    pa0, pb0, pa1, pb1 = _psi(a0, 0), _psi(b0, 1), _psi(a1, 0), _psi(b1, 1)
    log_p = log_p + 2 * J[0, 1] * (pa0 * pb0 + pa1 * pb1)  # psi^T J psi, both cells
    log_p = log_p + K[0, 0] * pa0 * pa1 + K[0, 1] * pa0 * pb1 + K[1, 0] * pb0 * pa1
    log_p = log_p + K[1, 1] * pb0 * pb1  # w_01 psi(y0)^T K psi(y1), w = 1
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    edges = [p[0], p[-1], p[:, 0], p[:, -1], p[:, :, 0], p[:, :, -1], p[..., 0], p[..., -1]]
    assert max(e.max() for e in edges) < 1e-6 * p.max()  # the grid holds the mass
    mean = float((p * a0).sum())
    inside = (a0 > SITE["lo"][0]) & (a0 < SITE["hi"][0])
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
        "active00": float((p * inside).sum()),
    }


def test_rejection_gibbs_matches_the_grid_oracle() -> None:
    copies = 2500
    edge_index = np.concatenate([EDGES + 2 * c for c in range(copies)], axis=1)
    weight = gcn_weights(edge_index, 2 * copies)
    np.testing.assert_allclose(weight, 1.0)
    centre = np.tile(CENTRE, (copies, 1))
    y, report = ts.rejection_gibbs(
        edge_index, weight, SITE, centre, J, K, 2 * copies, sweeps=30, burn_in=30, seed=3
    )
    assert report.r_hat_max < 1.1 and report.n_colours == 2 and report.n_gene_colours == 2
    assert 1.0 <= report.proposals_per_draw < 5.0
    # [2 copies, chains, G] -> [copies * chains, cell, G]: both chains are draws
    cells = y.reshape(copies, 2, 2, 2).transpose(0, 2, 1, 3).reshape(-1, 2, 2)
    exact = _grid_moments()
    # informative: J > 0 correlates a cell's genes, K[0, 1] < 0 and the lateral inhibition
    # anti-correlate across the edge, the centres move the means, the site is skewed
    assert exact["y00*y01"] - exact["y00"] * exact["y01"] > 0.05
    assert exact["y00*y11"] - exact["y00"] * exact["y11"] < -0.02
    assert exact["y01*y11"] - exact["y01"] * exact["y11"] < -0.02
    assert abs(exact["y00"] - exact["y10"]) > 0.2
    assert abs(exact["(y00-m)^3"]) > 0.05
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
        "active00": ((cells[:, 0, 0] > SITE["lo"][0]) & (cells[:, 0, 0] < SITE["hi"][0])) * 1.0,
    }
    for name, values in samples.items():
        se = values.std() / np.sqrt(len(values))
        assert abs(values.mean() - exact[name]) < 4.5 * se, (name, values.mean(), exact[name], se)


def test_conditional_draw_matches_quadrature() -> None:
    # the tilted site law e^{u(y - m) + h psi(y)} against a quadrature on a fine grid; the
    # number of proposals against 1 / E_lone e^{h psi - max(h lo, h hi)}
    rng = np.random.default_rng(7)
    n = 100_000
    grid = np.linspace(-9.0, 9.0, 180_001)
    for h, centre, gene in [(0.0, 0.0, 0), (2.5, 0.3, 0), (-3.0, -0.2, 1), (6.0, -0.6, 1)]:
        sub = {key: np.atleast_1d(v[gene]) for key, v in SITE.items()}
        y, proposals = ts.conditional_draw(np.full((n, 1), h), centre, sub, rng)
        y = y[:, 0]
        lone = np.exp(_u(grid - centre, gene))
        tilt = np.exp(
            h * np.clip(grid, sub["lo"], sub["hi"]) - max(h * sub["lo"][0], h * sub["hi"][0])
        )
        p = lone * tilt / (lone * tilt).sum()
        mean = float((p * grid).sum())
        var = float((p * (grid - mean) ** 2).sum())
        assert abs(y.mean() - mean) < 4.5 * math.sqrt(var / n), (h, y.mean(), mean)
        assert y.var() == pytest.approx(var, rel=0.03)
        for edge in (sub["lo"][0], sub["hi"][0]):
            q = float(p[grid < edge].sum())
            assert abs((y < edge).mean() - q) < 4.5 * math.sqrt(q * (1 - q) / n)
        accept = float((lone * tilt).sum() / lone.sum())
        assert proposals / n == pytest.approx(1.0 / accept, rel=0.03)
        if h == 0.0:
            assert proposals == n  # no tilt: every proposal is accepted


def test_lone_law_quantiles_moments_and_normalisation() -> None:
    # y = sigma sinh((asinh Z + eps) / delta): its quantiles, moments and clipped mean; the site
    # energy is its log density (e^u integrates to sigma sqrt(2 pi) / delta)
    rng = np.random.default_rng(5)
    site = {k: v for k, v in SITE.items()}
    y = ts.lone_sites(site, np.zeros((200_000, 2)), rng)
    for p in (0.05, 0.3, 0.5, 0.9):
        q = ts.lone_quantile(site, p)
        assert (np.abs((y < q).mean(0) - p) < 4.5 * math.sqrt(p * (1 - p) / len(y))).all()
    mean, var = ts.lone_moments(site)
    assert (np.abs(y.mean(0) - mean) < 4.5 * np.sqrt(var / len(y))).all()
    np.testing.assert_allclose(y.var(0), var, rtol=0.02)
    clipped = np.clip(y, site["lo"], site["hi"])
    assert (
        np.abs(clipped.mean(0) - site["offset"]) < 4.5 * clipped.std(0) / math.sqrt(len(y))
    ).all()
    grid = np.linspace(-15, 15, 300_001)
    for gene in (0, 1):
        mass = np.exp(ts.site_energy(grid[:, None], site, 0.0)[:, gene]).sum() * (grid[1] - grid[0])
        expect = site["sigma"][gene] * math.sqrt(2 * math.pi) / site["delta"][gene]
        assert mass == pytest.approx(expect, rel=1e-6)
        p = np.exp(_u(grid, gene))
        p /= p.sum()
        assert float((p * grid).sum()) == pytest.approx(mean[gene], abs=1e-6)
    # the window is the stated pair of lone quantiles: Phi(sinh(delta asinh(lo / sigma) - eps))
    for edge, prob in (("lo", "p_lo"), ("hi", "p_hi")):
        z = np.sinh(site["delta"] * np.arcsinh(site[edge] / site["sigma"]) - site["epsilon"])
        np.testing.assert_allclose(ndtr(z), site[prob], rtol=1e-12)


def _random_field(n: int = 40, g: int = 6, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    edge_index = knn_edges(rng.random((n, 2)) * 6, 6)
    weight = gcn_weights(edge_index, n)
    j0, k0, _ = ts.draw_couplings(g, rng)
    site = ts.site_parameters(g, rng, zonation=0.4, compartment=0.3)
    centre = ts.site_centre(site, rng.random(n), rng.random(n) < 0.4)
    y = centre + ts.lone_sites(site, np.zeros((n, g)), rng)
    return {"edge_index": edge_index, "weight": weight, "site": site, "centre": centre,
            "J": 0.8 * j0, "K": 0.6 * k0, "y": y}  # fmt: skip


def test_energy_conditionals_are_the_samplers() -> None:
    # moving one entry changes E by the site difference plus h times the response difference,
    # with h from local_field: the rejection sampler's target is E's conditional
    f = _random_field()
    y, n = f["y"], len(f["y"])
    s = symmetric_adjacency(f["edge_index"], f["weight"], n)
    args = (f["edge_index"], f["weight"], f["site"], f["centre"], f["J"], f["K"])
    h = ts.local_field(y, s, f["site"], f["J"], f["K"])
    rng = np.random.default_rng(2)
    for i, gene in [(0, 0), (7, 3), (39, 5), (20, 1), (11, 2)]:
        for new in rng.normal(0, 2, 3):
            moved = y.copy()
            moved[i, gene] = new
            site_diff = (
                ts.site_energy(moved[i], f["site"], f["centre"][i])[gene]
                - ts.site_energy(y[i], f["site"], f["centre"][i])[gene]
            )
            psi_diff = (
                ts.response(moved, f["site"])[0][i, gene] - ts.response(y, f["site"])[0][i, gene]
            )
            expect = site_diff + h[i, gene] * psi_diff
            assert ts.log_density(moved, *args) - ts.log_density(y, *args) == pytest.approx(
                expect, abs=1e-9
            )
    # the energy is the docstring's, written out
    site, psi = f["site"], np.clip(y, f["site"]["lo"], f["site"]["hi"]) - f["site"]["offset"]
    t = (y - f["centre"]) / site["sigma"]
    sh = np.sinh(site["delta"] * np.arcsinh(t) - site["epsilon"])
    single = (-0.5 * sh**2 + 0.5 * np.log(1 + sh**2) - 0.5 * np.log(1 + t**2)).sum()
    own = sum(row @ f["J"] @ row for row in psi)
    src, dst = f["edge_index"]
    pairs = sum(w * psi[i] @ f["K"] @ psi[j] for j, i, w in zip(src, dst, f["weight"], strict=True))
    assert ts.log_density(y, *args) == pytest.approx(single + own + pairs, rel=1e-12)


def _tiny(seed: int = 4) -> ts.SlideTagsTissue:
    return ts.simulate(150, 8, seed=seed, sweeps=10, burn_in=10, n_other=60)


def test_truth_is_the_mean_hessian() -> None:
    tissue = _tiny()
    f = tissue.field
    src, dst = tissue.cells["edge_index"]
    w = tissue.cells["edge_weight"]
    n, g = tissue.latent.shape
    # the truth at the tissue's own state, moved off the kinks so difference quotients hold
    y = tissue.latent.copy()
    for edge in (f["lo"], f["hi"]):
        rows, cols = np.nonzero(np.abs(y - edge) < 5e-3)
        y[rows, cols] = edge[cols] + np.where(y[rows, cols] > edge[cols], 5e-3, -5e-3)
    w_intra, w_inter = ts.truth_matrices(y, tissue.cells["edge_index"], w, f, f["J"], f["K"])
    np.testing.assert_array_equal(w_intra, tissue.W_intra)  # the same side of every kink
    np.testing.assert_array_equal(w_inter, tissue.W_inter)

    def energy(v: np.ndarray) -> float:
        return ts.log_density(v, tissue.cells["edge_index"], w, f, f["centre"], f["J"], f["K"])

    def mixed(a: np.ndarray, ga: int, b: np.ndarray, gb: int, step: float = 1e-3) -> float:
        """d^2 E / d eps1 d eps2 at Y + eps1 a e_ga^T + eps2 b e_gb^T (a, b over cells)."""
        out = 0.0
        for s1, s2 in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
            v = y.copy()
            v[:, ga] += s1 * step * a
            v[:, gb] += s2 * step * b
            out += s1 * s2 * energy(v)
        return out / (4 * step**2)

    colours = greedy_colouring(tissue.cells["edge_index"], n)
    ind = [np.isin(np.arange(n), c).astype(float) for c in colours]
    pairs = [(a, b) for a in range(g) for b in range(a, g) if f["J"][a, b] or f["K"][a, b]][:6]
    for ga, gb in pairs:
        cross = sum(mixed(a, ga, b, gb) for ia, a in enumerate(ind) for ib, b in enumerate(ind)
                    if ia != ib)  # fmt: skip
        assert cross == pytest.approx(2 * w.sum() * w_inter[ga, gb], abs=1e-5)
        if ga != gb:  # within cells: the whole sum less the cross-cell part
            whole = mixed(np.ones(n), ga, np.ones(n), gb)
            assert whole - cross == pytest.approx(2 * n * w_intra[ga, gb], abs=1e-5)
    # pointwise: within a cell 2 J psi' psi'; across an edge (w_ij + w_ji) K psi' psi'; else 0
    d1 = ts.response(y, f)[1]
    e = np.eye(n)
    a, b = np.nonzero(np.triu(f["J"]))
    for i in range(n):
        if d1[i, a[0]] and d1[i, b[0]]:
            assert mixed(e[i], a[0], e[i], b[0]) == pytest.approx(2 * f["J"][a[0], b[0]], abs=1e-6)
            break
    weight = dict(zip(zip(src.tolist(), dst.tolist()), w.tolist()))
    for j, i in list(weight)[:3]:
        total = weight[(j, i)] + weight.get((i, j), 0.0)
        for ga, gb in [(0, 0), (1, 4), (6, 2)]:
            expect = total * f["K"][ga, gb] * d1[i, ga] * d1[j, gb]
            assert mixed(e[i], ga, e[j], gb) == pytest.approx(expect, abs=1e-6)
    far = next(c for c in range(n) if (c, 0) not in weight and (0, c) not in weight and c)
    assert mixed(e[0], 1, e[far], 2) == pytest.approx(0.0, abs=1e-6)
    # the truth is J and K times the co-activity: signs of J and K wherever co-active
    co = d1.T @ d1 / n
    np.testing.assert_allclose(tissue.W_intra, np.where(np.eye(g) == 1, 0, f["J"] * co), rtol=1e-12)
    on = np.abs(tissue.W_intra) > 0
    assert (np.sign(tissue.W_intra[on]) == np.sign(f["J"][on])).all()
    assert set(zip(*np.nonzero(tissue.W_intra))) <= set(zip(*np.nonzero(f["J"])))
    assert set(zip(*np.nonzero(tissue.W_inter))) <= set(zip(*np.nonzero(f["K"])))
    on = np.abs(tissue.W_inter) > 0
    assert (np.sign(tissue.W_inter[on]) == np.sign(f["K"][on])).all()
    assert (tissue.W_intra > 0).any() and (tissue.W_intra < 0).any()
    for mat in (tissue.W_intra, tissue.W_inter):
        np.testing.assert_allclose(mat, mat.T, rtol=1e-12)
    assert np.all(np.diag(tissue.W_intra) == 0)


def test_scale_is_the_linearised_criterion() -> None:
    # inside the windows the energy is quadratic: ||C^-1/2 (2 J o q q^T) C^-1/2|| = intra_norm
    # and rho(A + A^T) rho(M^-1/2 (K o q q^T) M^-1/2) = margin, M = diag(C) - 2 J o q q^T
    tissue = _tiny()
    f, prm = tissue.field, tissue.params
    q = f["p_hi"] - f["p_lo"]
    curv = 1.0 / ts.lone_moments(f)[1]
    lam = 2 * f["J"] * np.outer(q, q)
    half = np.diag(curv**-0.5)
    assert np.linalg.norm(half @ lam @ half, 2) == pytest.approx(0.8, rel=1e-9)
    val, vec = np.linalg.eigh(np.diag(curv) - lam)
    assert val.min() > 0
    root = (vec / np.sqrt(val)) @ vec.T
    rho_k = np.abs(np.linalg.eigvalsh(root @ (f["K"] * np.outer(q, q)) @ root)).max()
    assert prm["rho_adjacency"] * rho_k == pytest.approx(0.9, rel=1e-6)
    s = symmetric_adjacency(
        tissue.cells["edge_index"], tissue.cells["edge_weight"], len(tissue.latent)
    )
    assert prm["rho_adjacency"] == pytest.approx(np.abs(np.linalg.eigvalsh(s.toarray())).max())


def test_couplings_are_pathway_cascades_and_relays() -> None:
    j0, k0, genes = ts.draw_couplings(20, np.random.default_rng(1))
    pathway, order = genes["pathway"], genes["order"]
    np.testing.assert_array_equal(np.sort(order), np.arange(20))
    np.testing.assert_array_equal(j0, j0.T)
    assert np.all(np.diag(j0) == 0)
    sizes = np.bincount(pathway)
    assert ((sizes >= 3) & (sizes <= 7)).all()  # 3-5, the last absorbing a remainder under 3
    for p in range(len(sizes)):
        members = order[pathway[order] == p]
        for a, b in zip(members[:-1], members[1:]):
            assert 0.5 <= abs(j0[a, b]) <= 1.0  # the cascade
        assert -1.0 <= j0[members[-1], members[0]] <= -0.5  # negative feedback
        chain = {(a, b) for a, b in zip(members[:-1], members[1:])} | {(members[-1], members[0])}
        for x in members:
            for z in members:
                if x != z and (x, z) not in chain and (z, x) not in chain:
                    assert j0[x, z] == 0
    cross = (pathway[:, None] != pathway[None, :]) & (j0 != 0)
    assert ((np.abs(j0[cross]) >= 0.3) & (np.abs(j0[cross]) <= 0.7)).all()
    rec, lig = genes["receptor"], genes["ligand"]
    assert len(rec) == len(sizes) and len(lig) == len(rec) and not set(lig) & set(rec)
    assert (pathway[rec] == np.arange(len(sizes))).all() and (pathway[lig] != pathway[rec]).all()
    off = k0 - np.diag(np.diag(k0))
    np.testing.assert_array_equal(off, off.T)
    pairs = {(min(a, b), max(a, b)) for a, b in zip(*np.nonzero(off))}
    assert pairs == {(min(a, b), max(a, b)) for a, b in zip(lig, rec)}
    assert ((np.abs(off[off != 0]) >= 0.4) & (np.abs(off[off != 0]) <= 1.0)).all()
    assert len(genes["notch"]) == 3 and len(genes["morphogen"]) == 6
    assert not set(genes["notch"]) & set(genes["morphogen"])
    assert (np.diag(k0)[genes["notch"]] < 0).all() and (np.diag(k0)[genes["morphogen"]] > 0).all()
    rest = np.setdiff1d(np.arange(20), np.r_[genes["notch"], genes["morphogen"]])
    assert (np.diag(k0)[rest] == 0).all()
    for g, seed in [(6, 0), (7, 1), (10, 2), (10, 3), (20, 4), (100, 5)]:  # both signs in both
        j0, k0, _ = ts.draw_couplings(g, np.random.default_rng(seed))
        assert all((m > 0).any() and (m < 0).any() for m in (j0, k0))


def test_layout_geometry_recovery_and_positions() -> None:
    rng = np.random.default_rng(3)
    cells = ts.intestine_cells(1500, rng, position_error=3.0)
    mid = cells["midline"]
    xy, epi, zone = cells["coords"], cells["epithelial"], cells["zone"]
    # epithelial nuclei on the midline, a monolayer at least 4.5 um apart along it
    tree = cKDTree(mid["points"])
    assert tree.query(xy[epi])[0].max() < 0.2
    arc = np.sort(mid["arc"][tree.query(xy[epi])[1]])
    assert np.diff(arc).min() > 4.5 - 0.3 and 6.4 < np.median(np.diff(arc)) < 7.4
    near = cKDTree(xy[epi]).query(xy[epi], k=2)[0][:, 1]
    assert near.min() > 2.0 and 5.5 < np.median(near) < 8.5
    # stroma on the tissue side, >= 9 um from the midline and >= 6 um from each other
    stroma = xy[~epi]
    assert ts.tissue_side(stroma, mid).all()
    assert tree.query(stroma)[0].min() >= 9.0
    assert cKDTree(stroma).query(stroma, k=2)[0][:, 1].min() >= 6.0
    # the midline's primitives: villus tips at H_k, crypt bases at -D
    assert mid["points"][:, 1].max() == pytest.approx(mid["villus_height"].max(), abs=0.01)
    assert mid["points"][:, 1].min() == pytest.approx(-ts.CRYPT_DEPTH, abs=0.01)
    probe = np.array([[mid["villus_centre"][0], 100.0], [mid["crypt_centre"][0], -50.0],
                      [mid["crypt_centre"][0] + 40.0, -50.0], [mid["villus_centre"][0] + 60, 50.0],
                      [mid["crypt_centre"][0], ts.FLOOR - 1.0]])  # fmt: skip
    np.testing.assert_array_equal(ts.tissue_side(probe, mid), [True, False, True, False, False])
    # zones from depth and compartment; types from their zone; the axis
    y = xy[:, 1]
    np.testing.assert_array_equal(zone[epi] == 2, y[epi] >= 0)
    np.testing.assert_array_equal(zone[epi] == 0, y[epi] < -ts.CRYPT_DEPTH + 30)
    np.testing.assert_array_equal(zone[~epi] == 4, y[~epi] < -ts.CRYPT_DEPTH - 5)
    assert (ts.ZONE_TYPES[zone, cells["cell_type"]] > 0).all()
    n_epi = ts.N_EPITHELIAL_TYPES
    assert (cells["cell_type"][epi] < n_epi).all() and (cells["cell_type"][~epi] >= n_epi).all()
    np.testing.assert_allclose(cells["axis"], np.clip((y + 140) / 500, 0, 1))
    assert set(zone.tolist()) == set(range(5))
    # recovery: N nuclei of least x, the tissue cut at the last; a type-dependent fraction
    obs = cells["observed"]
    assert len(obs) == len(set(obs.tolist())) == 1500
    assert xy[:, 0].max() == pytest.approx(xy[obs, 0].max())
    frac = len(obs) / len(xy)
    expect = float(ts.RECOVERY[cells["cell_type"]].mean())
    assert abs(frac - expect) < 4.5 * math.sqrt(expect * (1 - expect) / len(xy))
    counts = np.bincount(cells["cell_type"][obs], minlength=10) / np.bincount(
        cells["cell_type"], minlength=10
    ).clip(1)
    big = np.bincount(cells["cell_type"], minlength=10) > 150
    np.testing.assert_allclose(counts[big], ts.RECOVERY[big], atol=0.1)
    jitter = cells["nucleus_coords"] - xy[obs]
    assert abs(jitter.mean()) < 0.2 and jitter.std() == pytest.approx(3.0, rel=0.05)


def test_droplet_detect_matches_the_closed_forms() -> None:
    copies = 60_000
    mu = np.array([[40.0, 4.0, 0.5, 200.0]])
    pi, reads = np.array([0.3]), np.array([90.0])
    rng = np.random.default_rng(11)
    counts, captured = ts.droplet_detect(
        np.repeat(mu, copies, 0), np.repeat(pi, copies), np.repeat(reads, copies), rng
    )
    c, k = counts.astype(np.float64), captured.astype(np.float64)
    lam = mu[0] * pi[0]  # Poisson thinning: k ~ Poisson(pi mu)
    assert (np.abs(k.mean(0) - lam) < 4.5 * np.sqrt(lam / copies)).all()
    np.testing.assert_allclose(k.var(0), lam, rtol=0.03)
    assert (counts >= 0).all() and (counts <= captured).all() and counts.dtype == np.int64
    library = k.sum(1)
    p = -np.expm1(-reads[0] / library)  # [copies] 1 - e^{-R / M}
    # E[c / p(M)] = E[k] exactly; the binomial's residual variance; saturation
    ratio = c / p[:, None]
    assert (np.abs(ratio.mean(0) - lam) < 4.5 * ratio.std(0) / math.sqrt(copies)).all()
    resid = (c - k * p[:, None]) ** 2
    target = k * p[:, None] * (1 - p[:, None])
    assert (np.abs(resid.mean(0) - target.mean(0)) < 4.5 * resid.std(0) / math.sqrt(copies)).all()
    total = c.sum(1)
    np.testing.assert_allclose(total.mean(), (library * p).mean(), rtol=0.01)
    # the fraction of the library counted is 1 - e^{-R/M}: 0.71 at R / M = 90 / 73
    assert (total / library).mean() == pytest.approx(p.mean(), rel=0.01)
    assert p.mean() == pytest.approx(1 - math.exp(-90 / 73), abs=0.01)
    # larger libraries at the same reads: a smaller fraction counted
    big, _ = ts.droplet_detect(np.repeat(4 * mu, 2000, 0), np.repeat(pi, 2000),
                               np.repeat(reads, 2000), rng)  # fmt: skip
    assert big.sum(1).mean() / (4 * lam.sum()) < 0.5 * total.mean() / lam.sum()


def test_droplet_counts_structure() -> None:
    tissue = _tiny()
    p, cells, coupled = tissue.count_params, tissue.cells, tissue.coupled
    obs = cells["observed"]
    n, g = len(obs), len(coupled)
    assert tissue.counts.shape == (150, 68) and tissue.counts.dtype == np.int64
    assert (tissue.counts >= 0).all()
    assert (p["role"][coupled] == "coupled").all() and (p["role"] == "coupled").sum() == 8
    content = p["nuclear_content"]
    ratio = np.log(content / ts.NUCLEAR_CONTENT[cells["cell_type"]])
    assert abs(ratio.mean()) < 0.1 and ratio.std() == pytest.approx(0.25, rel=0.2)
    own = content[obs, None] * np.exp(p["baseline"] + tissue.latent[obs])
    np.testing.assert_allclose(own.mean(0), p["gene_mean"], rtol=1e-10)
    assert ((p["gene_mean"] >= 2) & (p["gene_mean"] <= 40)).all()
    partner = p["doublet_partner"]
    single = partner < 0
    np.testing.assert_allclose(p["expected"][single][:, coupled], own[single], rtol=1e-10)
    assert not set(partner[~single].tolist()) & set(obs.tolist())  # unrecovered cells only
    others = np.setdiff1d(np.arange(68), coupled)
    assert p["expected"][single][:, others].sum(1).mean() == pytest.approx(6000.0, rel=0.25)
    for j in np.flatnonzero((p["marker_type"] >= 0) & (p["zonation"] == 0))[:5]:
        rows = np.flatnonzero(single)
        fold = np.log(p["expected"][rows, j] / (content[obs[rows]] * p["base_mean"][j]))
        off = tissue.cell_type[rows] != p["marker_type"][j]
        np.testing.assert_allclose(fold[off], 0.0, atol=1e-12)
        assert ((fold[~off] >= 1.5) & (fold[~off] <= 3.0)).all()
    detection = -np.expm1(-p["reads"] / np.maximum(p["library"], 1))
    np.testing.assert_allclose(p["detection"], detection, rtol=1e-12)
    np.testing.assert_allclose(
        p["rate"], p["expected"] * (p["capture"] * detection)[:, None], rtol=1e-12
    )
    assert math.exp(np.log(p["size_factor"]).mean()) == pytest.approx(1.0, rel=1e-9)
    np.testing.assert_array_equal(p["total_counts"], tissue.counts.sum(1))
    np.testing.assert_allclose(p["sequencing_saturation"], 1 - tissue.counts.sum(1) / p["reads"])
    assert ((p["capture"] > 0) & (p["capture"] < 1)).all() and n == 150 and g == 8


def test_simulate_seed_graphs_and_anndata() -> None:
    import scipy.sparse as sp

    from graphdata.spatial import knn_graph

    tissue = ts.simulate(600, 10, seed=2, sweeps=4, burn_in=2)
    n, p = tissue.counts.shape
    assert n == 600 and 810 <= p <= 2010
    c = tissue.params["n_tissue_cells"]
    assert tissue.latent.shape == (c, 10) and 1.4 * n < c < 2.2 * n
    edge_index, _ = knn_graph(tissue.coords, 6)
    np.testing.assert_array_equal(tissue.edge_index, edge_index.numpy())
    np.testing.assert_allclose(tissue.edge_weight, 1.0 / 6.0)
    cell_edges, _ = knn_graph(tissue.cells["coords"], 6)
    np.testing.assert_array_equal(tissue.cells["edge_index"], cell_edges.numpy())
    np.testing.assert_allclose(np.linalg.norm(tissue.x, axis=1), 1.0, rtol=1e-10)
    np.testing.assert_allclose(
        tissue.x * np.linalg.norm(tissue.latent[tissue.cells["observed"]], axis=1)[:, None],
        tissue.latent[tissue.cells["observed"]],
    )
    report = tissue.report.as_dict()
    assert {"x2_max_z", "x2_z_null_median", "r_hat_max", "proposals_per_draw"} <= set(report)
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
    assert adata.shape == (600, p)
    assert sp.issparse(adata.X) and sp.issparse(adata.layers["counts"])
    np.testing.assert_array_equal(adata.layers["counts"].toarray(), tissue.counts)
    hvg = adata.var["highly_variable"].to_numpy()
    assert hvg.dtype == bool and hvg.sum() == 10
    np.testing.assert_array_equal(np.flatnonzero(hvg), tissue.coupled)
    uns = adata.uns["tissue_slidetags"]
    assert list(adata.var_names[hvg]) == uns["coupled_genes"]
    np.testing.assert_array_equal(uns["W_intra"], tissue.W_intra)
    np.testing.assert_allclose(adata.layers["signed"][:, hvg], tissue.x, rtol=1e-6)
    assert (adata.layers["signed"][:, ~hvg] == 0).all()
    np.testing.assert_array_equal(adata.obs["total_counts"], tissue.counts.sum(1))
    assert list(adata.obs["zone"].cat.categories) == list(ts.ZONES)
    np.testing.assert_array_equal(adata.obsm["spatial"], tissue.coords)
    conn = adata.obsp["spatial_connectivities"].tocoo()
    assert set(zip(conn.col.tolist(), conn.row.tolist())) == set(
        map(tuple, tissue.edge_index.T.tolist())
    )
    assert tissue.to_anndata(sparse=False).layers["counts"].dtype == np.int64


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: ts.simulate(150, 8, intra_norm=1.0), "intra_norm, margin"),
        (lambda: ts.simulate(6, 8), "at least 20 nuclei"),
        (lambda: ts.simulate(150, 5), "n_genes: expected >= 6"),
        (lambda: ts.simulate(150, 8, doublet_rate=1.0), "doublet_rate"),
        (lambda: ts.simulate(150, 8, n_other=3), "n_other"),
        (lambda: ts.intestine_cells(100, np.random.default_rng(0), position_error=-1), "position"),
        (lambda: ts.site_parameters(4, np.random.default_rng(0), zonation=-1), "zonation"),
        (lambda: ts.rejection_gibbs(EDGES, np.ones(1), SITE, CENTRE, np.eye(2), K, 2), "zero"),
        (lambda: ts.rejection_gibbs(EDGES, np.ones(1), SITE, CENTRE, J, K, 2, thin=0), "thin"),
        (
            lambda: ts.droplet_detect(
                np.ones((1, 2)), np.array([1.5]), np.ones(1), np.random.default_rng(0)
            ),
            "capture: expected probabilities",
        ),
    ],
)
def test_refusals(call, match: str) -> None:
    with pytest.raises(GraphDataError, match=match):
        call()


def test_bench_registers_the_world_and_refuses_foreign_options(capsys) -> None:
    # wiring only: the world is held out, so no Celcomen fit runs on it here
    from benchmarks import bench_celcomen_counts as bench

    assert bench.WORLDS["slidetags"] is ts
    with pytest.raises(SystemExit):
        bench.main(["--world", "slidetags", "--size-factor-sd", "0.5"])
    assert "slidetags draws its own size factors" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--world", "slidetags", "--background-genes", "100"])
    assert "slidetags holds its own other genes" in capsys.readouterr().err
