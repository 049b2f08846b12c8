"""benchmarks.tissue_xenium: the session-22 held-out tissue simulator, against exact oracles.

No test fits Celcomen on this world (it is held out): the bench is checked for its registration
and its refusals only. The sampler's invariance is checked on a two-cell graph with two genes
(edge 1 -> 0), replicated into many disjoint copies, whose density on R^4 is integrated on a grid
written here from the module docstring's formula; the count model against its closed forms with
the spillover mixing written out by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks import tissue_xenium as tx
from benchmarks.tissue_gibbs_pln import symmetric_adjacency
from benchmarks.tissue_metropolis import gcn_weights, knn_edges
from graphdata.errors import GraphDataError

LAM = np.array([0.6, 0.8])
SCALE = np.array([0.9, 1.1])
DOF = np.array([2.0, 3.0])
OFFSET = np.array([0.4, -0.3])
SITE = {"lam": LAM, "scale": SCALE, "dof": DOF, "offset": OFFSET}
W_INTRA = np.array([[0.0, 0.12], [0.12, 0.0]])
W_INTER = np.array([[0.2, -0.15], [-0.15, -0.12]])  # lateral inhibition on gene 1
EDGES = np.array([[1], [0]])  # 1 -> 0; in-degrees (1, 0 -> 1), so w = 1


def _site(t: np.ndarray, gene: int) -> np.ndarray:
    nu, s = DOF[gene], SCALE[gene]
    return -0.5 * LAM[gene] * t**2 - 0.5 * (nu + 1) * np.log(
        1 + (t - OFFSET[gene]) ** 2 / (nu * s**2)
    )


def _grid_moments(m: int = 44, lo: float = -8.0, hi: float = 8.0) -> dict[str, float]:
    """Moments of p(y0, y1) on R^2 x R^2, the docstring's energy, by a Riemann sum."""
    t = np.linspace(lo, hi, m)
    a0, b0, a1, b1 = np.meshgrid(t, t, t, t, indexing="ij", sparse=True)  # y0 = (a0, b0)
    log_p = _site(a0, 0) + _site(b0, 1) + _site(a1, 0) + _site(b1, 1)
    log_p = log_p + 2 * W_INTRA[0, 1] * (a0 * b0 + a1 * b1)  # y^T W_intra y, both cells
    k = W_INTER
    log_p = log_p + k[0, 0] * a0 * a1 + k[0, 1] * a0 * b1 + k[1, 0] * b0 * a1 + k[1, 1] * b0 * b1
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    edges = [p[0], p[-1], p[:, 0], p[:, -1], p[:, :, 0], p[:, :, -1], p[..., 0], p[..., -1]]
    assert max(e.max() for e in edges) < 1e-6 * p.max()  # the grid holds the mass
    mean = float((p * a0).sum())
    var = float((p * (a0 - mean) ** 2).sum())
    return {
        "y00": mean,
        "y01": float((p * b0).sum()),
        "y00*y01": float((p * a0 * b0).sum()),
        "y00*y11": float((p * a0 * b1).sum()),
        "y01*y11": float((p * b0 * b1).sum()),
        "(y00-m)^2": var,
        "(y00-m)^4": float((p * (a0 - mean) ** 4).sum()),
    }


def test_scale_mixture_gibbs_matches_the_grid_oracle() -> None:
    copies = 2500
    edge_index = np.concatenate([EDGES + 2 * c for c in range(copies)], axis=1)
    weight = gcn_weights(edge_index, 2 * copies)
    np.testing.assert_allclose(weight, 1.0)
    y, report = tx.scale_mixture_gibbs(
        edge_index, weight, SITE, W_INTRA, W_INTER, 2 * copies, sweeps=30, burn_in=30, seed=3
    )
    assert report.r_hat_max < 1.1 and report.n_colours == 2
    assert report.config_temperature == pytest.approx(1.0, abs=0.06)
    # [2 copies, chains, G] -> [copies * chains, cell, G]: both chains are draws
    cells = y.reshape(copies, 2, 2, 2).transpose(0, 2, 1, 3).reshape(-1, 2, 2)
    exact = _grid_moments()
    # informative: W_intra > 0 correlates a cell's genes, W_inter[0, 1] < 0 and the lateral
    # inhibition anti-correlate across the edge, and the Student-t site is leptokurtic
    assert exact["y00*y01"] - exact["y00"] * exact["y01"] > 0.05
    assert exact["y00*y11"] - exact["y00"] * exact["y01"] < -0.03
    assert exact["y01*y11"] - exact["y01"] ** 2 < -0.03
    assert exact["(y00-m)^4"] > 3.3 * exact["(y00-m)^2"] ** 2
    samples = {
        "y00": cells[:, 0, 0],
        "y01": cells[:, 0, 1],
        "y00*y01": cells[:, 0, 0] * cells[:, 0, 1],
        "y00*y11": cells[:, 0, 0] * cells[:, 1, 1],
        "y01*y11": cells[:, 0, 1] * cells[:, 1, 1],
        "(y00-m)^2": (cells[:, 0, 0] - exact["y00"]) ** 2,
        "(y00-m)^4": (cells[:, 0, 0] - exact["y00"]) ** 4,
    }
    for name, values in samples.items():
        se = values.std() / np.sqrt(len(values))
        assert abs(values.mean() - exact[name]) < 4.5 * se, (name, values.mean(), exact[name], se)


def test_gradient_and_curvature_match_finite_differences() -> None:
    rng = np.random.default_rng(0)
    n, g = 40, 5
    edge_index = knn_edges(rng.random((n, 2)) * 6, 6)
    weight = gcn_weights(edge_index, n)
    w0, k0, _ = tx.draw_couplings(g, rng)
    site = tx.site_parameters(g, rng)
    w_intra, w_inter = 0.1 * w0, 0.05 * k0
    s = symmetric_adjacency(edge_index, weight, n)
    y = rng.standard_normal((n, g))

    def energy(v: np.ndarray) -> float:
        return tx.log_density(v, edge_index, weight, site, w_intra, w_inter)

    grad = tx.grad_log_density(y, s, site, w_intra, w_inter)
    np.testing.assert_allclose(
        tx.grad_log_density(y[:, None], s, site, w_intra, w_inter)[:, 0], grad, rtol=1e-12
    )
    h = 1e-5
    nu, sc, r = site["dof"], site["scale"], y - site["offset"]
    curv = site["lam"] + (nu + 1) * (nu * sc**2 - r**2) / (nu * sc**2 + r**2) ** 2
    for i, gene in [(0, 0), (7, 3), (39, 4), (20, 1)]:
        up, down = y.copy(), y.copy()
        up[i, gene] += h
        down[i, gene] -= h
        assert grad[i, gene] == pytest.approx((energy(up) - energy(down)) / (2 * h), abs=1e-6)
        second = (energy(up) - 2 * energy(y) + energy(down)) / h**2
        assert -second == pytest.approx(curv[i, gene], abs=1e-3)


def _tiny(seed: int = 4) -> tx.XeniumTissue:
    return tx.simulate(150, 8, seed=seed, sweeps=10, burn_in=10, panel_size=60)


def test_truth_is_the_energys_mixed_second_derivatives() -> None:
    tissue = _tiny()
    f = tissue.field
    src, dst = tissue.edge_index
    rng = np.random.default_rng(0)
    y = 0.5 * rng.standard_normal(tissue.latent.shape)

    def energy(v: np.ndarray) -> float:
        return tx.log_density(
            v, tissue.edge_index, tissue.edge_weight, f, f["W_intra"], f["W_inter"]
        )

    # the module's energy is the docstring's, written out here
    nu, s = f["dof"], f["scale"]
    single = (
        -0.5 * f["lam"] * y**2 - 0.5 * (nu + 1) * np.log(1 + (y - f["offset"]) ** 2 / (nu * s**2))
    ).sum()
    pairs = sum(
        w * y[i] @ tissue.W_inter @ y[j]
        for j, i, w in zip(src, dst, tissue.edge_weight, strict=True)
    )
    own = sum(row @ tissue.W_intra @ row for row in y)
    assert energy(y) == pytest.approx(single + own + pairs, rel=1e-12)

    def mixed(i: int, g: int, j: int, h: int, step: float = 0.05) -> float:
        def at(di: float, dj: float) -> float:
            v = y.copy()
            v[i, g] += di
            v[j, h] += dj
            return energy(v)

        return (at(step, step) - at(step, -step) - at(-step, step) + at(-step, -step)) / (
            4 * step**2
        )

    for g, h in [(0, 1), (2, 5), (3, 7), (1, 6)]:
        assert mixed(7, g, 7, h) == pytest.approx(2 * tissue.W_intra[g, h], abs=1e-7)
    off = tissue.W_intra[np.triu_indices(8, 1)]
    assert (off > 0).any() and (off < 0).any() and (off == 0).any()
    assert np.all(np.diag(tissue.W_intra) == 0)
    for w in (tissue.W_intra, tissue.W_inter):
        np.testing.assert_array_equal(w, w.T)
    weight = dict(zip(zip(src.tolist(), dst.tolist()), tissue.edge_weight.tolist()))
    one_way = [(j, i) for (j, i) in weight if (i, j) not in weight]
    both_ways = [(j, i) for (j, i) in weight if (i, j) in weight]
    assert one_way and both_ways
    for j, i in (one_way[0], both_ways[0]):
        total = weight[(j, i)] + weight.get((i, j), 0.0)
        for g, h in [(0, 0), (1, 4), (6, 2), (3, 3)]:
            assert mixed(i, g, j, h) == pytest.approx(total * tissue.W_inter[g, h], abs=1e-7)
    far = next(c for c in range(150) if (c, 0) not in weight and (0, c) not in weight and c)
    assert mixed(0, 1, far, 2) == pytest.approx(0.0, abs=1e-7)
    # Q_0 = I (x) (diag(lam) - 2 W_intra) - (A + A^T) (x) W_inter is positive definite
    n = 150
    adj = np.zeros((n, n))
    np.add.at(adj, (dst, src), tissue.edge_weight)
    q0 = np.kron(np.eye(n), np.diag(f["lam"]) - 2 * tissue.W_intra) - np.kron(
        adj + adj.T, tissue.W_inter
    )
    assert np.linalg.eigvalsh(q0)[0] > 0.05 * f["lam"].min()


def test_couplings_are_a_tree_with_cycles_and_relays() -> None:
    w0, k0, genes = tx.draw_couplings(20, np.random.default_rng(1))
    parent = genes["parent"]
    assert parent[0] == -1 and (parent[1:] < np.arange(1, 20)).all()
    assert (w0[np.arange(1, 20), parent[1:]] != 0).all()  # every tree edge coupled
    edges = np.count_nonzero(np.triu(w0, 1))
    assert 19 <= edges <= 19 + 4
    tree = np.zeros((20, 20), dtype=bool)
    tree[np.arange(1, 20), parent[1:]] = True
    tree |= tree.T
    two = (tree.astype(int) @ tree.astype(int) > 0) & ~tree
    a, b = np.nonzero(np.triu(k0, 1))
    assert len(a) and two[a, b].all()  # relays skip one regulator
    assert (np.diag(k0)[genes["inhibit"]] < 0).all()


def test_segmentation_of_discs_is_exact() -> None:
    # a lone nucleus: a digital disc of radius r + 5; it is orthogonally convex, so its pixel
    # perimeter is twice its width plus height; two nuclei 12 apart share the bisector's chord
    centres = np.array([[0.0, 0.0], [12.0, 0.3], [60.0, 60.0]])
    radii = np.array([3.0, 3.0, 3.5])
    seg = tx.segment(centres, radii)
    labels = seg["labels"]
    lone = labels == 2
    xs, ys = np.nonzero(lone)
    assert seg["perimeter"][2] == 2 * (np.ptp(xs) + 1 + np.ptp(ys) + 1)
    assert seg["area"][2] == pytest.approx(math.pi * 8.5**2, rel=0.03)
    np.testing.assert_allclose(seg["centroid"][2], centres[2], atol=0.05)
    np.testing.assert_allclose(seg["area"].sum(), (labels >= 0).sum())
    contact = {(int(a), int(b)): c for a, b, c in seg["contact"]}
    assert set(contact) == {(0, 1), (1, 0)} and contact[(0, 1)] == contact[(1, 0)]
    assert abs(contact[(0, 1)] - 2 * math.sqrt(8**2 - 6**2)) <= 2.0
    assert seg["centroid"][0][0] < 0 < seg["centroid"][1][0] - 12  # masks cut at the bisector


def test_spillover_matrix_and_count_moments_match_closed_forms() -> None:
    # three cells in a row, contacts 0-1 (4 um) and 1-2 (6 um), perimeters 10, 20, 12
    copies = 60_000
    base = np.array([[0, 1, 4.0], [1, 0, 4.0], [1, 2, 6.0], [2, 1, 6.0]])
    contact = np.concatenate([base + [3 * c, 3 * c, 0] for c in range(copies)])
    perimeter = np.tile([10.0, 20.0, 12.0], copies)
    eps_rate, pi0 = 0.08, 0.05
    s_mat, eps = tx.spillover_matrix(contact[:4], perimeter[:3], eps_rate)
    np.testing.assert_allclose(eps, [0.032, 0.04, 0.04])
    expected = np.array(
        [[1 - 0.032, 0.04 * 4 / 10, 0.0], [0.032, 1 - 0.04, 0.04], [0.0, 0.04 * 6 / 10, 1 - 0.04]]
    )
    np.testing.assert_allclose(s_mat.toarray(), expected, rtol=1e-12)
    np.testing.assert_allclose(s_mat.sum(0).A1, 1.0)  # transcripts are conserved
    mu3 = np.array([[30.0, 0.5], [2.0, 8.0], [0.1, 40.0]])  # [cell, gene]
    lam = expected @ mu3
    rng = np.random.default_rng(7)
    c = tx.detect(
        np.tile(mu3, (copies, 1)), contact, perimeter, rng, spillover=eps_rate, zero_inflation=pi0
    )
    c = c.reshape(copies, 3, 2).astype(np.float64)
    mean = (1 - pi0) * lam
    var = (1 - pi0) * lam * (1 + pi0 * lam)
    zero = pi0 + (1 - pi0) * np.exp(-lam)
    assert (np.abs(c.mean(0) - mean) < 4.5 * np.sqrt(var / copies)).all()
    np.testing.assert_allclose(c.var(0), var, rtol=0.04)
    assert (np.abs((c == 0).mean(0) - zero) < 4.5 * np.sqrt(zero * (1 - zero) / copies)).all()
    # Poisson splitting: what two cells receive is independent (gene 0 of cells 0 and 1)
    corr = np.corrcoef(c[:, 0, 0], c[:, 1, 0])[0, 1]
    assert abs(corr) < 4.5 / math.sqrt(copies)
    # without spillover or dropout: plain Poisson of mu
    d = tx.detect(
        np.tile(mu3, (copies, 1)), contact, perimeter, rng, spillover=0.0, zero_inflation=0.0
    )
    assert (np.abs(d.reshape(copies, 3, 2).mean(0) - mu3) < 4.5 * np.sqrt(mu3 / copies)).all()


def test_xenium_counts_structure() -> None:
    tissue = _tiny()
    p = tissue.count_params
    rate, size, eta, coupled = p["rate"], p["size_factor"], p["efficiency"], tissue.coupled
    assert tissue.counts.shape == (150, 60) and tissue.counts.dtype == np.int64
    assert (p["role"][coupled] == "coupled").all() and (p["role"] == "coupled").sum() == 8
    np.testing.assert_allclose(rate[:, coupled].mean(0), eta[coupled] * p["gene_mean"], rtol=1e-10)
    np.testing.assert_allclose(
        np.log(rate[:, coupled] / size[:, None] / eta[coupled]) - p["baseline"],
        tissue.latent,
        atol=1e-10,
    )
    assert abs(np.log(size).mean()) < 1e-10
    area = tissue.segmentation["area"]
    assert np.corrcoef(np.log(size), np.log(area))[0, 1] > 0.7
    # markers are up in their type, by exp(fold) in 2-3.5 on the log scale
    marker = np.flatnonzero(p["marker_type"] >= 0)
    for j in marker[:5]:
        fold = np.log(rate[:, j] / (size * eta[j] * p["base_mean"][j]))
        np.testing.assert_allclose(fold[tissue.cell_type != p["marker_type"][j]], 0.0, atol=1e-12)
        on = fold[tissue.cell_type == p["marker_type"][j]]
        assert ((on >= 2.0) & (on <= 3.5)).all()
    s_mat, eps = tx.spillover_matrix(
        tissue.segmentation["contact"], tissue.segmentation["perimeter"], 0.08
    )
    np.testing.assert_allclose(p["observed_rate"], s_mat @ rate)
    np.testing.assert_allclose(p["spill"], eps)
    assert 0.02 < eps.mean() < 0.08 and (eps <= 0.08).all()
    np.testing.assert_array_equal(p["total_counts"], tissue.counts.sum(1))


def test_layout_graph_seed_and_anndata() -> None:
    import scipy.sparse as sp
    from scipy.spatial import cKDTree

    from graphdata.spatial import knn_graph

    tissue = tx.simulate(600, 8, seed=2, sweeps=4, burn_in=2)
    seg = tissue.segmentation
    nuclei, radii = seg["nucleus"], seg["nucleus_radius"]
    # nuclei disjoint (the hard core), every cell segmented, centroids near their nuclei
    pairs = cKDTree(nuclei).query_pairs(8.0, output_type="ndarray")
    dist = np.linalg.norm(nuclei[pairs[:, 0]] - nuclei[pairs[:, 1]], axis=1)
    assert (dist >= radii[pairs[:, 0]] + radii[pairs[:, 1]] + 0.5).all()
    assert (seg["area"] >= math.pi * radii**2 * 0.8).all()
    assert (np.linalg.norm(tissue.coords - nuclei, axis=1) <= radii + 5.0).all()
    # glands: luminal / myoepithelial rings, nothing else inside a lumen
    types = set(tissue.cell_type.tolist())
    assert types == set(range(5))
    ring = seg["gland"] >= 0
    assert set(tissue.cell_type[ring].tolist()) <= {0, 1} and set(
        tissue.cell_type[~ring].tolist()
    ) >= {2, 3, 4}
    panel = 300 <= tissue.counts.shape[1] <= 480
    assert panel
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
    ]:
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(small.counts, other.counts)
    adata = tissue.to_anndata()
    n, p = tissue.counts.shape
    assert adata.shape == (600, p)
    assert sp.issparse(adata.X) and sp.issparse(adata.layers["counts"])
    np.testing.assert_array_equal(adata.layers["counts"].toarray(), tissue.counts)
    hvg = adata.var["highly_variable"].to_numpy()
    assert hvg.dtype == bool and hvg.sum() == 8
    np.testing.assert_array_equal(np.flatnonzero(hvg), tissue.coupled)
    assert list(adata.var_names[hvg]) == adata.uns["tissue_xenium"]["coupled_genes"]
    np.testing.assert_array_equal(adata.uns["tissue_xenium"]["W_intra"], tissue.W_intra)
    np.testing.assert_allclose(adata.layers["signed"][:, hvg], tissue.x, rtol=1e-6)
    assert (adata.layers["signed"][:, ~hvg] == 0).all()
    np.testing.assert_array_equal(adata.obs["total_counts"], tissue.counts.sum(1))
    np.testing.assert_array_equal(adata.obs["cell_area"], seg["area"])
    conn = adata.obsp["spatial_connectivities"].tocoo()
    assert set(zip(conn.col.tolist(), conn.row.tolist())) == set(
        map(tuple, tissue.edge_index.T.tolist())
    )
    sampler = adata.uns["tissue_xenium"]["sampler"]
    assert {"r_hat_max", "config_temperature", "x2_max_z", "x2_z_null_median"} <= set(sampler)
    dense = tissue.to_anndata(sparse=False)
    assert dense.layers["counts"].dtype == np.int64


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: tx.simulate(150, 8, intra_norm=1.0), "intra_norm, margin"),
        (lambda: tx.simulate(6, 8), "more than k"),
        (lambda: tx.simulate(150, 3), "n_genes: expected >= 4"),
        (
            lambda: tx.scale_mixture_gibbs(
                EDGES, np.ones(1), {**SITE, "lam": 0 * LAM}, W_INTRA, W_INTER, 2
            ),
            "lam, scale",
        ),
        (
            lambda: tx.scale_mixture_gibbs(EDGES, np.ones(1), SITE, np.eye(2), W_INTER, 2),
            "zero diagonal",
        ),
        (
            lambda: tx.scale_mixture_gibbs(
                EDGES, np.ones(1), SITE, 2 * np.ones((2, 2)) - 2 * np.eye(2), W_INTER, 2
            ),
            "positive definite",
        ),
        (
            lambda: tx.detect(
                np.ones((1, 1)),
                np.zeros((0, 3)),
                np.ones(1),
                np.random.default_rng(0),
                spillover=1.0,
            ),
            "spillover",
        ),
    ],
)
def test_refusals(call, match: str) -> None:
    with pytest.raises(GraphDataError, match=match):
        call()


def test_bench_registers_the_world_and_refuses_foreign_options(capsys) -> None:
    # wiring only: the world is held out, so no Celcomen fit runs on it here
    from benchmarks import bench_celcomen_counts as bench

    assert bench.WORLDS["xenium"] is tx
    with pytest.raises(SystemExit):
        bench.main(["--world", "xenium", "--size-factor-sd", "0.5"])
    assert "xenium draws its own size factors" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--world", "xenium", "--background-genes", "100"])
    assert "xenium holds its own panel" in capsys.readouterr().err
