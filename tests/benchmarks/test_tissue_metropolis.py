"""benchmarks.tissue_metropolis: the held-out tissue simulator, against exact oracles.

The sampler's invariance is checked on a three-cell directed graph with two genes, replicated
into many disjoint copies, whose density on the 3-torus of angles is integrated on a grid.
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import tissue_metropolis as tm
from benchmarks.bench_celcomen_counts import scale_report, sign_agreement

A = 2.5 * np.array([[0.8, 1.5], [1.5, -0.8]])  # W_intra (a diagonal is allowed in the sampler)
B = 2.5 * np.array([[0.5, -1.2], [-1.2, 0.3]])  # W_inter
# 1 -> 0, 2 -> 0, 0 -> 1: in-degrees (2, 1, 0), so the graph is not symmetric
EDGES = np.array([[1, 2, 0], [0, 0, 1]])


def _brute_energy(x: np.ndarray, edge_index: np.ndarray, weight: np.ndarray) -> float:
    intra = sum(float(xi @ A @ xi) for xi in x)
    inter = sum(float(w * x[i] @ B @ x[j]) for (j, i), w in zip(edge_index.T, weight))
    return intra + inter


def _grid_moments(m: int = 96) -> dict[str, float]:
    """E[x0.x1], E[x0.x2], E[(x1)_0^2] under p proportional to exp(E) on the 3-torus."""
    theta = np.arange(m) * 2 * np.pi / m
    u = np.stack([np.cos(theta), np.sin(theta)], 1)  # [m, 2]
    w = tm.gcn_weights(EDGES, 3)
    q = np.einsum("ag,gh,ah->a", u, A, u)  # [m]
    pair = u @ B @ u.T  # [m, m] u_a^T B u_b
    # energy[a, b, c] for x0 = u_a, x1 = u_b, x2 = u_c; edges (1->0), (2->0), (0->1)
    e = q[:, None, None] + q[None, :, None] + q[None, None, :]
    e = e + w[0] * pair[:, :, None] + w[1] * pair[:, None, :] + w[2] * pair[:, :, None]
    p = np.exp(e - e.max())
    p /= p.sum()
    dot = u @ u.T
    return {
        "x0.x1": float((p * dot[:, :, None]).sum()),
        "x0.x2": float((p * dot[:, None, :]).sum()),
        "x1_0^2": float((p * (u[:, 0] ** 2)[None, :, None]).sum()),
    }


def test_energy_per_cell_matches_brute_force_on_a_directed_graph() -> None:
    rng = np.random.default_rng(3)
    x = tm._unit(rng.standard_normal((3, 1, 2)))
    w = tm.gcn_weights(EDGES, 3)
    np.testing.assert_allclose(w, [2**-0.5] * 3)
    import scipy.sparse as sp

    src, dst = EDGES
    s = sp.coo_matrix((np.r_[w, w], (np.r_[dst, src], np.r_[src, dst])), shape=(3, 3)).tocsr()
    got = tm.energy_per_cell(x, s, A, B)[0] * 3
    assert got == pytest.approx(_brute_energy(x[:, 0], EDGES, w), rel=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sampler_invariance_against_the_grid_oracle(dtype: type) -> None:
    copies = 3000
    edge_index = np.concatenate([EDGES + 3 * c for c in range(copies)], axis=1)
    weight = tm.gcn_weights(edge_index, 3 * copies)
    x, report = tm.metropolis_sample(
        edge_index, weight, A, B, 3 * copies, sweeps=40, burn_in=100, chains=2, seed=1, dtype=dtype
    )
    assert 0.25 <= report.acceptance <= 0.4 and report.step_size < 4.0  # adapted, not capped
    states = x.reshape(copies, 3, 2, 2).transpose(0, 2, 1, 3).reshape(-1, 3, 2)  # [copies*C, 3, G]
    samples = {
        "x0.x1": (states[:, 0] * states[:, 1]).sum(-1),
        "x0.x2": (states[:, 0] * states[:, 2]).sum(-1),
        "x1_0^2": states[:, 1, 0] ** 2,
    }
    exact = _grid_moments()
    assert abs(exact["x0.x1"]) > 0.1 and abs(exact["x0.x2"]) > 0.05  # an informative case
    for name, values in samples.items():
        se = values.std() / np.sqrt(len(values))
        assert abs(values.mean() - exact[name]) < 4.5 * se, (name, values.mean(), exact[name], se)


def test_colouring_is_a_proper_colouring() -> None:
    coords = tm.tissue_positions(300, "jittered_grid", np.random.default_rng(0))
    edge_index = tm.knn_edges(coords, 6)
    colours = tm.greedy_colouring(edge_index, 300)
    label = np.empty(300, dtype=int)
    for c, members in enumerate(colours):
        label[members] = c
    assert sorted(np.concatenate(colours).tolist()) == list(range(300))
    assert (label[edge_index[0]] != label[edge_index[1]]).all()


def test_couplings_sparse_signed_symmetric_and_scaled() -> None:
    w_intra, w_inter = tm.draw_couplings(20, np.random.default_rng(0))
    for w in (w_intra, w_inter):
        np.testing.assert_allclose(w, w.T)
        assert np.all(np.diag(w) == 0)
        assert np.linalg.norm(w, 2) == pytest.approx(10.0)
        off = w[np.triu_indices(20, 1)]
        assert (off > 0).any() and (off < 0).any() and (off == 0).any()
    assert ((w_intra != 0).sum(1) == 4).all()  # exactly 4 partners per gene
    assert not np.array_equal(w_intra != 0, w_inter != 0)


def test_tissue_counts_anndata_and_seed() -> None:
    tissue = tm.simulate(300, 10, seed=4, sweeps=40, burn_in=150, layout="jittered_grid")
    again = tm.simulate(300, 10, seed=4, sweeps=40, burn_in=150, layout="jittered_grid")
    other = tm.simulate(300, 10, seed=5, sweeps=40, burn_in=150, layout="jittered_grid")
    np.testing.assert_array_equal(tissue.counts, again.counts)
    np.testing.assert_array_equal(tissue.x, again.x)
    assert not np.array_equal(tissue.counts, other.counts)
    for t in (tissue, other):  # adapted into range, or capped on a diffuse target
        r = t.report
        assert 0.25 <= r.acceptance <= 0.4 or (r.step_size == 4.0 and r.acceptance > 0.3)
    assert tissue.counts.dtype == np.int64 and (tissue.counts >= 0).all()
    assert (tissue.counts.sum(1) > 0).all()
    np.testing.assert_allclose(np.linalg.norm(tissue.x, axis=1), 1.0, rtol=1e-10)
    adata = tissue.to_anndata()
    for slot, key in [
        ("layers", "counts"),
        ("layers", "signed"),
        ("layers", "log1p"),
        ("obsm", "spatial"),
        ("obsp", "spatial_connectivities"),
        ("obsp", "spatial_distances"),
        ("uns", "spatial_neighbors"),
        ("varp", "true_intra"),
        ("varp", "true_inter"),
    ]:
        assert key in getattr(adata, slot), (slot, key)
    np.testing.assert_array_equal(adata.X, tissue.counts)
    # the graph the library reads back is the simulator's: row i holds the neighbours j of i
    conn = adata.obsp["spatial_connectivities"].tocoo()
    got = set(zip(conn.col.tolist(), conn.row.tolist()))
    assert got == set(map(tuple, tissue.edge_index.T.tolist()))
    # log1p is normalize_total (median total) then log1p, as scanpy computes it
    totals = tissue.counts.sum(1, keepdims=True)
    expected = np.log1p(tissue.counts / totals * np.median(totals))
    np.testing.assert_allclose(adata.layers["log1p"], expected, rtol=1e-5, atol=1e-6)


def test_library_sigma_changes_only_the_size_factors() -> None:
    from benchmarks import tissue_gibbs_pln as tg

    kw = {"sweeps": 10, "burn_in": 10}
    for module, default in ((tm, 0.4), (tg, 0.5)):
        plain = module.simulate(200, 6, seed=2, **kw)
        explicit = module.simulate(200, 6, seed=2, library_sigma=default, **kw)
        flat = module.simulate(200, 6, seed=2, library_sigma=0.0, **kw)
        np.testing.assert_array_equal(plain.counts, explicit.counts)  # the default is today's
        np.testing.assert_array_equal(plain.coords, flat.coords)
        np.testing.assert_array_equal(plain.count_params["baseline"], flat.count_params["baseline"])
        # same states: eigsh's round-off is ~1e-15 absolute (one entry of 2.5e-3 once differed by
        # 2.7e-15, relative 1.1e-12), so an absolute floor, not a relative bound alone
        np.testing.assert_allclose(plain.x, flat.x, rtol=1e-12, atol=1e-13)
        np.testing.assert_array_equal(
            flat.count_params["library_size"], module.simulate.__kwdefaults__["depth"]
        )
        spread = np.log(plain.count_params["library_size"]).std()
        assert default * 0.85 < spread < default * 1.15
        assert plain.params["library_sigma"] == default and flat.params["library_sigma"] == 0.0


def test_bench_refuses_size_factors_for_the_held_out_world(capsys) -> None:
    from benchmarks import bench_celcomen_counts as bench

    with pytest.raises(SystemExit):
        bench.main(["--world", "bistable_nb", "--size-factor-sd", "0.5"])
    assert "bistable_nb draws its own size factors" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--size-factor-sd", "-1"])


def test_bench_scale_and_sign_metrics() -> None:
    rng = np.random.default_rng(0)
    t_intra, t_inter = tm.draw_couplings(10, rng)
    fitted = (2.0 * t_intra, 3.0 * t_inter)
    rep = scale_report(fitted, (t_intra, t_inter))
    ti, te = (m[np.triu_indices(10, 1)] for m in (t_intra, t_inter))
    beta = (2 * ti @ ti + 3 * te @ te) / (ti @ ti + te @ te)
    assert rep["beta"] == pytest.approx(beta)
    assert rep["intra"]["ratio"] == pytest.approx(2 / beta)
    assert rep["inter"]["ratio"] == pytest.approx(3 / beta)
    assert rep["intra"]["zero_offset"] == pytest.approx(0.0)
    shifted = scale_report((t_intra + 1.0, t_inter), (t_intra, t_inter))
    assert shifted["intra"]["zero_offset"] > 0.1
    assert sign_agreement(-t_inter, t_inter) == 0.0
    assert sign_agreement(t_inter + 1e-9, t_inter) == 1.0


def test_bench_writes_every_route_and_reuses_the_baselines(tmp_path) -> None:
    from benchmarks import bench_celcomen_counts as bench
    from benchmarks.bench_celcomen import correlation_baselines

    out = tmp_path / "counts.json"
    argv = ["--genes", "6", "--cells", "150", "--seeds", "1", "--sweeps", "20", "--burn-in", "30"]
    results = bench.main([*argv, "--out", str(out)])
    assert out.exists()
    run = results["runs"][0]
    assert set(run["routes"]) == {"signed", "counts", "counts_nosf", "log1p", "counts_sphere"}
    # no other genes: the counts route has no size factors, the same fit as counts_nosf
    assert run["routes"]["counts"]["celcomen"]["size_factors"] is None
    for which in ("intra", "inter"):
        assert run["routes"]["counts"]["celcomen"][which]["pearson"] == pytest.approx(
            run["routes"]["counts_nosf"]["celcomen"][which]["pearson"]
        )
    tissue = tm.simulate(150, 6, seed=0, sweeps=20, burn_in=30)
    adata = tissue.to_anndata()
    for route in ("signed", "counts", "log1p"):
        expected = bench.matrix_metrics(
            correlation_baselines(bench.route_matrix(adata, route), tissue.edge_index),
            (tissue.W_intra, tissue.W_inter),
        )
        got = run["routes"][route]["correlation"]
        assert got["intra"]["pearson"] == pytest.approx(expected["intra"]["pearson"])
        assert got["inter"]["sign_agreement"] == pytest.approx(expected["inter"]["sign_agreement"])
        fit = run["routes"][route]["celcomen"]
        assert np.isfinite(fit["intra"]["ratio"]) and fit["epochs"] >= 1
    gap = run["routes"]["signed"]["celcomen"]["inter"]["pearson_gap_vs_signed"]
    assert gap == 0.0


def test_ordering_criterion_is_isotropic_without_intra_couplings() -> None:
    # W_intra = 0: a lone cell is uniform on the sphere, chi = I / G, criterion = 2 rho(W) / G
    _, w_inter = tm.draw_couplings(8, np.random.default_rng(2))
    got = tm.ordering_criterion(np.zeros((8, 8)), w_inter, n_cells=4000, seed=0)
    expected = 2 * np.abs(np.linalg.eigvalsh(w_inter)).max() / 8
    assert got == pytest.approx(expected, rel=0.08)


def test_background_genes_share_the_size_factors_and_feed_the_counts_route() -> None:
    from benchmarks import bench_celcomen_counts as bench

    tissue = tm.simulate(150, 6, seed=0, sweeps=20, burn_in=30)
    adata = bench.with_background(tissue, tissue.to_anndata(), 400, seed=0)
    assert (
        adata.shape == (150, 406)
        and list(adata.var["highly_variable"]) == [True] * 6 + [False] * 400
    )
    counts = np.asarray(adata.layers["counts"], dtype=np.float64)
    np.testing.assert_array_equal(counts[:, :6], tissue.counts)
    background = counts[:, 6:].sum(1)
    # Poisson(s_i nu) summed: mean 10 x the tissue genes' mean total, proportional to s_i
    assert background.mean() == pytest.approx(10 * tissue.counts.sum(1).mean(), rel=0.02)
    sizes = tissue.count_params["library_size"]
    assert np.corrcoef(np.log(background), np.log(sizes))[0, 1] > 0.99
    fitted, facts = bench.fit_route(adata, "counts", 0)
    assert facts["size_factors"] == "total counts of the 400 genes not fitted"
    # oracle: the estimator on the tissue's genes with the background totals given by hand
    from spatial.celcomen import Celcomen

    alone = Celcomen(progress=False, seed=0).fit(
        adata[:, :6].copy(), layer="counts", mask_var=False, size_factors=background
    )
    np.testing.assert_allclose(fitted[0], alone.W_intra_.double().numpy(), atol=1e-6)
    assert bench.route_matrix(adata, "counts").shape == (150, 6)


def test_bench_fits_a_sphere_route_without_the_empty_cells_it_refuses() -> None:
    from benchmarks import bench_celcomen_counts as bench

    tissue = tm.simulate(150, 6, seed=0, sweeps=20, burn_in=30)
    adata = tissue.to_anndata()
    counts = np.asarray(adata.layers["counts"], dtype=np.float32).copy()
    counts[[3, 40]] = 0.0  # two beads with no count in any coupled gene
    adata.layers["counts"] = counts
    # the default log-counts route fits them; the sphere of raw counts drops them, as its
    # error message tells a user, and the bench says how many
    _, kept = bench.fit_route(adata.copy(), "counts", 0)
    assert kept["dropped_empty_cells"] == 0
    fitted, facts = bench.fit_route(adata.copy(), "counts_sphere", 0)
    assert facts["dropped_empty_cells"] == 2
    subset = adata[np.setdiff1d(np.arange(150), [3, 40])].copy()
    oracle, _ = bench.fit_route(subset, "counts_sphere", 0)
    for got, expected in zip(fitted, oracle, strict=True):
        np.testing.assert_allclose(got, expected)
