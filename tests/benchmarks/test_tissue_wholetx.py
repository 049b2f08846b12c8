"""benchmarks.tissue_wholetx: the session-21 held-out tissue simulator, against exact oracles.

No test fits Celcomen on this world (it is held out): the bench is checked for its registration,
its refusal and how it lines the fitted genes up with the truth, with the fit replaced by a stub.
The sampler's invariance is checked on a two-cell graph with two genes (edge 1 -> 0), replicated
into many disjoint copies, whose density on R^4 is integrated on a grid written here from the
module docstring's formula.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks import tissue_wholetx as tw
from benchmarks.tissue_gibbs_pln import symmetric_adjacency
from benchmarks.tissue_metropolis import gcn_weights
from graphdata.errors import GraphDataError

LAM = np.array([0.8, 1.1])
RATE = np.array([1.2, 1.5])  # kappa / delta
OFFSET = np.array([0.5, -0.4])
SITE = {"lam": LAM, "kappa": tw.DELTA * RATE, "offset": OFFSET, "delta": np.asarray(tw.DELTA)}
LAM_OFF = np.array([[0.0, -0.5], [-0.5, 0.0]])  # W_intra off-diagonal +0.25
K = np.array([[0.3, -0.35], [-0.35, -0.2]])  # W_inter: lateral inhibition on gene 1
EDGES = np.array([[1], [0]])  # 1 -> 0; in-degrees (1, 0 -> 1), so w = 1


def _site(t: np.ndarray, gene: int) -> np.ndarray:
    u = (t - OFFSET[gene]) / tw.DELTA
    return -0.5 * LAM[gene] * t**2 - tw.DELTA * RATE[gene] * np.log(np.cosh(u))


def _grid_moments(m: int = 48, lo: float = -6.0, hi: float = 6.0) -> dict[str, float]:
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
    var = float((p * (a0 - mean) ** 2).sum())
    return {
        "y00": mean,
        "y01": float((p * b0).sum()),
        "y00*y01": float((p * a0 * b0).sum()),
        "y00*y11": float((p * a0 * b1).sum()),
        "y01*y11": float((p * b0 * b1).sum()),
        "(y00-m)^3": float((p * (a0 - mean) ** 3).sum()),
        "(y00-m)^4": float((p * (a0 - mean) ** 4).sum()),
        "var": var,
    }


def test_hmc_matches_the_grid_oracle() -> None:
    copies = 3000
    edge_index = np.concatenate([EDGES + 2 * c for c in range(copies)], axis=1)
    weight = gcn_weights(edge_index, 2 * copies)
    np.testing.assert_allclose(weight, 1.0)
    y, report = tw.hmc_sample(
        edge_index, weight, SITE, LAM_OFF, K, 2 * copies, sweeps=40, burn_in=60, seed=3
    )
    assert 0.6 < report.acceptance < 0.95 and report.divergences == 0
    assert report.r_hat_max < 1.1
    cells = y.reshape(copies, 2, 2, 2).transpose(0, 2, 1, 3).reshape(-1, 2, 2)  # [copies*2, 2, G]
    exact = _grid_moments()
    samples = {
        "y00": cells[:, 0, 0],
        "y01": cells[:, 0, 1],
        "y00*y01": cells[:, 0, 0] * cells[:, 0, 1],
        "y00*y11": cells[:, 0, 0] * cells[:, 1, 1],
        "y01*y11": cells[:, 0, 1] * cells[:, 1, 1],
        "(y00-m)^3": (cells[:, 0, 0] - exact["y00"]) ** 3,
        "(y00-m)^4": (cells[:, 0, 0] - exact["y00"]) ** 4,
    }
    # informative: W_intra > 0 correlates a cell's genes, W_inter[0, 1] < 0 and the lateral
    # inhibition K[1, 1] < 0 anti-correlate across the edge, the offset peak skews gene 0 left
    assert exact["y00*y01"] - exact["y00"] * exact["y01"] > 0.05
    assert exact["y00*y11"] - exact["y00"] * exact["y01"] < -0.02
    assert exact["y01*y11"] - exact["y01"] ** 2 < -0.02
    assert exact["(y00-m)^3"] < -0.02 and exact["(y00-m)^4"] > 3.2 * exact["var"] ** 2
    for name, values in samples.items():
        se = values.std() / np.sqrt(len(values))
        assert abs(values.mean() - exact[name]) < 4.5 * se, (name, values.mean(), exact[name], se)


def test_gradient_and_chain_density_match_the_log_density() -> None:
    rng = np.random.default_rng(0)
    n, g = 40, 5
    coords = rng.random((n, 2)) * 6
    from benchmarks.tissue_metropolis import knn_edges

    edge_index = knn_edges(coords, 6)
    weight = gcn_weights(edge_index, n)
    w0, k0, _ = tw.draw_couplings(g, rng)
    site = tw.site_parameters(g, rng)
    lam_off, k = -0.3 * w0, 0.05 * k0
    s = symmetric_adjacency(edge_index, weight, n)
    y = rng.standard_normal((n, 2, g))
    chains = tw._log_density_chains(y, s, site, lam_off, k)
    for c in (0, 1):
        direct = tw.log_density(y[:, c], edge_index, weight, site, lam_off, k)
        assert chains[c] - chains[1 - c] == pytest.approx(
            direct - tw.log_density(y[:, 1 - c], edge_index, weight, site, lam_off, k), rel=1e-10
        )
        assert chains[c] == pytest.approx(direct, rel=1e-10)
    grad = tw.grad_log_density(y, s, site, lam_off, k)
    h = 1e-5
    for i, gene in [(0, 0), (7, 3), (39, 4)]:
        up, down = y[:, 0].copy(), y[:, 0].copy()
        up[i, gene] += h
        down[i, gene] -= h
        fd = (
            tw.log_density(up, edge_index, weight, site, lam_off, k)
            - tw.log_density(down, edge_index, weight, site, lam_off, k)
        ) / (2 * h)
        assert grad[i, 0, gene] == pytest.approx(fd, abs=1e-6)


def _tiny(seed: int = 4) -> tw.WholeTxTissue:
    return tw.simulate(150, 8, seed=seed, sweeps=10, burn_in=10, n_other=300, depth=800.0)


def test_truth_is_the_energys_mixed_second_derivatives() -> None:
    tissue = _tiny()
    f = tissue.field
    src, dst = tissue.edge_index
    rng = np.random.default_rng(0)
    y = 0.5 * rng.standard_normal(tissue.latent.shape)

    def log_p(v: np.ndarray) -> float:
        return tw.log_density(v, tissue.edge_index, tissue.edge_weight, f, f["lam_off"], f["K"])

    # the module's log density is the docstring's, written out here
    u = (y - f["offset"]) / f["delta"]
    single = (-0.5 * f["lam"] * y**2 - f["kappa"] * np.log(np.cosh(u))).sum()
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

    g_count = tissue.W_intra.shape[0]
    for g, h in [(0, 1), (2, 5), (3, 7), (1, 6)]:
        assert mixed(7, g, 7, h) == pytest.approx(2 * tissue.W_intra[g, h], abs=1e-7)
    off = tissue.W_intra[np.triu_indices(g_count, 1)]
    assert (off > 0).any() and (off < 0).any() and (off == 0).any()
    assert np.all(np.diag(tissue.W_intra) == 0)
    assert (np.diag(tissue.W_inter) > 0).any() or (np.diag(tissue.W_inter) < 0).any()
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


def test_log_density_is_strictly_concave_and_couplings_are_structured() -> None:
    tissue = _tiny()
    f = tissue.field
    n, g = tissue.latent.shape
    s = np.zeros((n, n))
    np.add.at(s, (tissue.edge_index[1], tissue.edge_index[0]), tissue.edge_weight)
    s = s + s.T
    bound = np.kron(np.eye(n), np.diag(f["lam"]) + f["lam_off"]) - np.kron(s, f["K"])
    assert np.linalg.eigvalsh(bound)[0] > 0.05 * f["lam"].min()
    # the site's curvature is at least lam (log cosh is convex)
    t = np.linspace(-6, 6, 1001)[:, None]
    curvature = (
        f["lam"] + f["kappa"] / f["delta"] ** 2 / np.cosh((t - f["offset"]) / f["delta"]) ** 2
    )
    assert (curvature >= f["lam"]).all()
    # structural balance: most intra signs are polarity products, and a lateral-inhibition
    # gene has a negative K diagonal
    w0, k0, genes = tw.draw_couplings(20, np.random.default_rng(1))
    pol = genes["polarity"]
    i, j = np.nonzero(np.triu(w0, 1))
    assert np.mean(np.sign(w0[i, j]) == pol[i] * pol[j]) > 0.7
    assert (np.diag(k0)[genes["lateral_inhibition"]] < 0).all()
    assert np.all((w0 != 0).sum(1) > 0)  # every gene coupled within a cell


def test_layout_has_two_regions_of_different_density_and_a_hard_core() -> None:
    from scipy.spatial import cKDTree

    rng = np.random.default_rng(0)
    coords, layout = tw.two_region_positions(3000, rng)
    dense, side = layout["dense"], layout["side"]
    assert coords.shape == (3000, 2) and (coords >= 0).all() and (coords <= side).all()
    # areas of the two regions by the boundary curve: the density ratio is 3
    u = np.linspace(0, side, 20001)
    boundary = side * (0.5 + 0.08 * np.sin(3 * math.pi * u / side + layout["phase"]))
    dense_area = float(np.mean(side - boundary)) * side
    ratio = (dense.sum() / dense_area) / ((~dense).sum() / (side**2 - dense_area))
    assert 2.6 < ratio < 3.4
    # Matérn II: no two cells closer than (r_i + r_j) / 2
    radius = layout["radius"]
    pairs = cKDTree(coords).query_pairs(float(radius.max()), output_type="ndarray")
    dist = np.linalg.norm(coords[pairs[:, 0]] - coords[pairs[:, 1]], axis=1)
    assert (dist >= 0.5 * (radius[pairs[:, 0]] + radius[pairs[:, 1]])).all()
    nearest = cKDTree(coords).query(coords, 2)[0][:, 1]
    spacing = np.median(nearest[~dense]) / np.median(nearest[dense])
    assert 1.4 < spacing < 2.1  # about sqrt(3)


def test_pig_counts_moments_match_closed_forms() -> None:
    rng = np.random.default_rng(0)
    n = 1_000_000
    for mu, phi in [(5.0, 0.5), (0.3, 2.0)]:
        c = tw.pig_counts(np.full(n, mu), phi, rng).astype(np.float64)
        assert c.dtype == np.float64
        assert abs(c.mean() - mu) < 4.5 * math.sqrt((mu + phi * mu**2) / n)
        assert c.var() == pytest.approx(mu + phi * mu**2, rel=0.03)
        third = float(((c - c.mean()) ** 3).mean())
        pig = mu + 3 * phi * mu**2 + 3 * phi**2 * mu**3
        nb = mu + 3 * phi * mu**2 + 2 * phi**2 * mu**3
        assert third == pytest.approx(pig, rel=0.08)
        assert abs(third - pig) < 0.4 * abs(pig - nb)  # not a negative binomial
        # P(0) = E exp(-mu Z), the inverse Gaussian's Laplace transform
        zero = math.exp((1 - math.sqrt(1 + 2 * phi * mu)) / phi)
        assert abs((c == 0).mean() - zero) < 4.5 * math.sqrt(zero * (1 - zero) / n)


def test_wholetx_counts_structure() -> None:
    rng = np.random.default_rng(2)
    n, g = 4000, 6
    coords, layout = tw.two_region_positions(n, rng)
    cell_type = rng.integers(6, size=n)
    y = 0.6 * rng.standard_normal((n, g))
    counts, coupled, params = tw.wholetx_counts(y, cell_type, layout, coords, rng, n_other=1500)
    assert counts.shape == (n, g + 1500) and counts.dtype == np.int64
    assert (np.diff(coupled) > 0).all() and len(coupled) == g
    role, rate, size = params["role"], params["rate"], params["size_factor"]
    assert (role[coupled] == "coupled").all() and (role == "coupled").sum() == g
    # coupled rates: mean over cells is m_g, and the counts' mean follows
    np.testing.assert_allclose(rate[:, coupled].mean(0), params["gene_mean"], rtol=1e-10)
    assert (params["gene_mean"] >= 0.3).all() and (params["gene_mean"] <= 30).all()
    phi = params["dispersion"]
    z = (counts - rate) / np.sqrt(rate + phi * rate**2)
    np.testing.assert_allclose(z[:, coupled].mean(0), 0.0, atol=5.0 / math.sqrt(n))
    np.testing.assert_allclose(np.log(rate[:, coupled] / size[:, None]) - params["baseline"], y)
    # size factors: geometric mean 1, smaller in the dense region, by cell type
    assert abs(np.log(size).mean()) < 1e-10
    dense = layout["dense"]
    assert np.log(size[dense]).mean() - np.log(size[~dense]).mean() == pytest.approx(
        -0.5 * math.log(3), abs=0.06
    )
    by_type = [np.log(size[cell_type == t]).mean() for t in range(6)]
    np.testing.assert_allclose(
        by_type, params["type_effect"] - params["type_effect"].mean(), atol=0.1
    )
    # the other genes: a wide spread of means, most below 1, a few very high; median depth
    means = rate.mean(0)
    assert (means < 1).mean() > 0.7 and (means > 10).sum() >= 10 and means.max() > 50
    assert 0.8 < np.median(counts.sum(1)) / 2000 < 1.2
    np.testing.assert_array_equal(params["total_counts"], counts.sum(1))
    # markers are up in their type; dispersions follow the decreasing trend
    marker = np.flatnonzero(role == "marker")
    assert len(marker) > 100
    spread = rate[:, marker].max(0) / rate[:, marker].min(0)
    assert np.median(spread) > 3
    low, high = means < 0.1, means > 5
    assert np.median(phi[low]) > 3 * np.median(phi[high])


def test_tissue_graph_seed_and_anndata() -> None:
    import scipy.sparse as sp

    from graphdata.spatial import knn_graph

    tissue = _tiny()
    again = _tiny()
    other = _tiny(seed=5)
    np.testing.assert_array_equal(tissue.counts, again.counts)
    np.testing.assert_array_equal(tissue.latent, again.latent)
    np.testing.assert_array_equal(tissue.W_inter, again.W_inter)
    assert not np.array_equal(tissue.counts, other.counts)
    edge_index, _ = knn_graph(tissue.coords, 6)
    np.testing.assert_array_equal(tissue.edge_index, edge_index.numpy())
    np.testing.assert_allclose(tissue.edge_weight, 1.0 / 6.0)
    np.testing.assert_allclose(np.linalg.norm(tissue.x, axis=1), 1.0, rtol=1e-10)
    adata = tissue.to_anndata()
    assert adata.shape == (150, 308)
    assert sp.issparse(adata.X) and sp.issparse(adata.layers["counts"])
    np.testing.assert_array_equal(adata.layers["counts"].toarray(), tissue.counts)
    hvg = adata.var["highly_variable"].to_numpy()
    assert hvg.dtype == bool and hvg.sum() == 8
    np.testing.assert_array_equal(np.flatnonzero(hvg), tissue.coupled)
    assert list(adata.var_names[hvg]) == adata.uns["tissue_wholetx"]["coupled_genes"]
    # the truth is over the highly variable genes in var order: the latent rows line up
    np.testing.assert_array_equal(adata.uns["tissue_wholetx"]["W_intra"], tissue.W_intra)
    np.testing.assert_allclose(adata.layers["signed"][:, hvg], tissue.x, rtol=1e-6)
    assert (adata.layers["signed"][:, ~hvg] == 0).all()
    sub = adata.layers["counts"][:, hvg].toarray()
    ratio = sub.mean(0) / tissue.count_params["gene_mean"]
    assert (np.abs(np.log(ratio)) < 1.0).all()
    np.testing.assert_array_equal(adata.obs["total_counts"], tissue.counts.sum(1))
    assert (adata.obs["total_counts"] > adata.layers["counts"][:, hvg].sum(1).A1).all()
    assert set(adata.obs["region"]) == {"dense", "sparse"}
    conn = adata.obsp["spatial_connectivities"].tocoo()
    assert set(zip(conn.col.tolist(), conn.row.tolist())) == set(
        map(tuple, tissue.edge_index.T.tolist())
    )
    sampler = adata.uns["tissue_wholetx"]["sampler"]
    assert {"r_hat_max", "acceptance", "step_size", "x2_max_z", "divergences"} <= set(sampler)
    dense = tissue.to_anndata(sparse=False)
    assert dense.layers["counts"].dtype == np.int64
    np.testing.assert_array_equal(dense.layers["counts"], tissue.counts)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: tw.simulate(150, 8, intra_norm=1.0), "intra_norm, margin"),
        (lambda: tw.simulate(6, 8), "more than k"),
        (lambda: tw.simulate(150, 3), "n_genes: expected >= 4"),
        (
            lambda: tw.two_region_positions(100, np.random.default_rng(0), density_ratio=0.5),
            "density_ratio",
        ),
        (
            lambda: tw.hmc_sample(EDGES, np.ones(1), {**SITE, "lam": 0 * LAM}, LAM_OFF, K, 2),
            "lam > 0",
        ),
        (lambda: tw.hmc_sample(EDGES, np.ones(1), SITE, np.eye(2), K, 2), "zero diagonal"),
        (lambda: tw.hmc_sample(EDGES, np.ones(1), SITE, LAM_OFF, K, 2, target=1.0), "target"),
        (lambda: tw.pig_counts(np.ones(3), 0.0, np.random.default_rng(0)), "phi > 0"),
    ],
)
def test_refusals(call, match: str) -> None:
    with pytest.raises(GraphDataError, match=match):
        call()


def test_bench_registers_the_world_and_lines_up_the_fitted_genes(capsys, monkeypatch) -> None:
    # wiring only: the world is held out, so no Celcomen fit runs on it here
    import scipy.sparse as sp
    from anndata import AnnData

    from benchmarks import bench_celcomen_counts as bench

    assert bench.WORLDS["wholetx"] is tw
    with pytest.raises(SystemExit):
        bench.main(["--world", "wholetx", "--size-factor-sd", "0.5"])
    assert "wholetx draws its own size factors" in capsys.readouterr().err
    # route_matrix and fit_route keep the highly variable genes, in var order
    rng = np.random.default_rng(0)
    counts = rng.poisson(2.0, (30, 7)).astype(np.float32)
    adata = AnnData(X=sp.csr_matrix(counts))
    adata.layers["counts"] = sp.csr_matrix(counts)
    adata.var["highly_variable"] = [False, True, False, True, True, False, False]
    hvg = adata.var["highly_variable"].to_numpy()
    np.testing.assert_allclose(bench.route_matrix(adata, "counts"), np.log1p(counts[:, hvg]))

    def fake_fit(data, **kwargs):  # writes full-size varp, as scanpy-style tools do
        full = np.arange(49, dtype=np.float64).reshape(7, 7)
        data.varp["celcomen_intra"] = full
        data.varp["celcomen_inter"] = -full
        data.uns["celcomen"] = {"losses": [1.0, 0.5]}

    monkeypatch.setattr(bench.spatial.tools, "celcomen", fake_fit)
    (intra, inter), _ = bench.fit_route(adata, "counts", 0)
    expected = np.arange(49.0).reshape(7, 7)[np.ix_(hvg, hvg)]
    np.testing.assert_array_equal(intra, expected)
    np.testing.assert_array_equal(inter, -expected)
    # without var['highly_variable'] every gene stays
    del adata.var["highly_variable"]
    assert bench.route_matrix(adata, "counts").shape == (30, 7)
