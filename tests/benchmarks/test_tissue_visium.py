"""benchmarks.tissue_visium: the Visium-like held-out tissue simulator, against exact oracles.

No test fits Celcomen on this world (it is held out): the bench is checked for its registration
and refusals only. The sampler is checked on a two-cell, two-gene graph (edge 1 -> 0) replicated
into disjoint copies, against a grid integral of the docstring's energy on R^4; the energy's
mixed derivatives against the truth by finite differences; the counts against the negative
binomial's closed forms.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks import tissue_visium as tv
from benchmarks.tissue_metropolis import gcn_weights
from graphdata.errors import GraphDataError
from tests.benchmarks._truth import check_energy_truth

SITE = {
    "lam": np.array([0.5, 0.7]),
    "a": np.array([0.5, 1.8]),
    "b": np.array([1.8, 0.6]),
    "scale": np.array([0.8, 0.7]),
    "offset": np.array([0.2, -0.3]),
}
W_INTRA = np.array([[0.0, 0.18], [0.18, 0.0]])
W_INTER = np.array([[0.3, -0.2], [-0.2, -0.15]])
EDGES = np.array([[1], [0]])  # 1 -> 0, weight 1


def _phi(t: np.ndarray, g: int) -> np.ndarray:
    """The docstring's site potential, written out: Gaussian times a type-IV logistic."""
    u = (t - SITE["offset"][g]) / SITE["scale"][g]
    a, b = SITE["a"][g], SITE["b"][g]
    return -0.5 * SITE["lam"][g] * t**2 + a * u - (a + b) * np.logaddexp(0.0, u)


def test_sampler_matches_the_grid_oracle() -> None:
    t = np.linspace(-9.0, 9.0, 46)
    a0, b0, a1, b1 = np.meshgrid(t, t, t, t, indexing="ij", sparse=True)  # y0 = (a0, b0)
    log_p = _phi(a0, 0) + _phi(b0, 1) + _phi(a1, 0) + _phi(b1, 1)
    log_p = log_p + 2 * W_INTRA[0, 1] * (a0 * b0 + a1 * b1)
    k = W_INTER
    log_p = log_p + k[0, 0] * a0 * a1 + k[0, 1] * (a0 * b1 + b0 * a1) + k[1, 1] * b0 * b1
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    assert max(p[0].max(), p[-1].max(), p[..., 0].max(), p[..., -1].max()) < 1e-6 * p.max()
    mean0 = (p * a0).sum()
    exact = {
        "y00": mean0,
        "y01": (p * b0).sum(),
        "y00^2": (p * a0**2).sum(),
        "(y00-m)^3": (p * (a0 - mean0) ** 3).sum(),
        "y00*y01": (p * a0 * b0).sum(),
        "y00*y10": (p * a0 * a1).sum(),
        "y00*y11": (p * a0 * b1).sum(),
        "y01*y11": (p * b0 * b1).sum(),
    }
    # informative: the slopes a < b pull gene 0 left and a > b gene 1 right, with skew
    assert exact["y00"] < -0.3 and exact["y01"] > 0.2 and abs(exact["(y00-m)^3"]) > 0.1
    copies = 2000
    edge_index = np.concatenate([EDGES + 2 * c for c in range(copies)], axis=1)
    weight = gcn_weights(edge_index, 2 * copies)
    np.testing.assert_allclose(weight, 1.0)
    y, report = tv.independence_gibbs(
        edge_index, weight, SITE, W_INTRA, W_INTER, 2 * copies, sweeps=30, burn_in=30, seed=2
    )
    assert report.n_colours == 2 and report.n_gene_colours == 2
    assert report.acceptance > 0.85
    assert report.config_temperature == pytest.approx(1.0, abs=0.06)
    cells = y.reshape(copies, 2, 2, 2).transpose(0, 2, 1, 3).reshape(-1, 2, 2)  # [sample, cell]
    samples = {
        "y00": cells[:, 0, 0],
        "y01": cells[:, 0, 1],
        "y00^2": cells[:, 0, 0] ** 2,
        "(y00-m)^3": (cells[:, 0, 0] - exact["y00"]) ** 3,
        "y00*y01": cells[:, 0, 0] * cells[:, 0, 1],
        "y00*y10": cells[:, 0, 0] * cells[:, 1, 0],
        "y00*y11": cells[:, 0, 0] * cells[:, 1, 1],
        "y01*y11": cells[:, 0, 1] * cells[:, 1, 1],
    }
    for name, values in samples.items():
        se = values.std() / np.sqrt(len(values))
        assert abs(values.mean() - exact[name]) < 4.5 * se, (name, values.mean(), exact[name])


def test_mixed_derivatives_are_the_truth() -> None:
    site, y = check_energy_truth(tv)
    h = 1e-5  # the site potential's derivatives by central differences
    for order in (1, 2):
        fd = (
            tv.site_potential(y + h, site, order - 1) - tv.site_potential(y - h, site, order - 1)
        ) / (2 * h)
        np.testing.assert_allclose(tv.site_potential(y, site, order), fd, rtol=1e-5, atol=1e-6)
    curvature = -tv.site_potential(y, site, 2)
    bump = (site["a"] + site["b"]) / (4 * site["scale"] ** 2)
    assert (curvature >= site["lam"]).all() and (curvature <= site["lam"] + bump).all()


def test_couplings_have_the_stated_shapes() -> None:
    for g, seed in [(10, 0), (20, 1), (20, 2)]:
        w0, k0, genes = tv.draw_couplings(g, np.random.default_rng(seed))
        assert np.allclose(w0, w0.T) and (np.diag(w0) == 0).all()
        support = w0 != 0
        # preferential attachment: a triangle, then 1 or 2 links per gene; connected
        assert g - 1 + 1 <= support.sum() // 2 <= 3 + 2 * (g - 3)
        assert (support.sum(1) >= 1).all() and genes["degree"].max() >= 4
        assert (w0 > 0).any() and (w0 < 0).any()
        lig, rec = genes["ligands"], genes["receptors"]
        assert len(lig) == len(rec) == max(2, round(g / 4)) and not set(lig) & set(rec)
        off = k0 - np.diag(np.diag(k0))
        rows, cols = np.nonzero(off)
        assert all((a in lig and b in rec) or (a in rec and b in lig) for a, b in zip(rows, cols))
        assert (off > 0).any() or (off < 0).any()
        assert (np.diag(k0)[lig] > 0).all()
        assert (np.diag(k0)[genes["inhibit"]] < 0).all()
        rest = np.setdiff1d(np.arange(g), np.r_[lig, genes["inhibit"]])
        assert (np.diag(k0)[rest] == 0).all()


def test_count_model_matches_its_closed_forms() -> None:
    rng = np.random.default_rng(5)
    n = 200_000
    mu = np.tile([0.5, 3.0, 25.0], (n, 1))
    theta = np.array([4.0, 10.0, 6.0])
    c = tv.nb_counts(mu, theta, rng)
    for j in range(3):
        m, th = mu[0, j], theta[j]
        var = m + m**2 / th
        assert c[:, j].mean() == pytest.approx(m, abs=4 * math.sqrt(var / n))
        assert c[:, j].var() == pytest.approx(var, rel=0.03)
        p0 = (th / (th + m)) ** th
        assert (c[:, j] == 0).mean() == pytest.approx(p0, abs=4 * math.sqrt(p0 * (1 - p0) / n))
    # over the capture efficiency: E c = mu, Var c = mu + mu^2 ((1 + 1/theta) e^{sd^2} - 1)
    e = tv.capture_efficiency(n, 0.3, rng)
    assert e.mean() == pytest.approx(1.0, abs=4 * 0.31 / math.sqrt(n))
    c = tv.nb_counts(e[:, None] * mu, theta, rng)
    for j in range(3):
        m, th = mu[0, j], theta[j]
        var = m + m**2 * ((1 + 1 / th) * math.exp(0.09) - 1)
        assert c[:, j].mean() == pytest.approx(m, abs=4 * math.sqrt(var / n))
        assert c[:, j].var() == pytest.approx(var, rel=0.04)


def test_spots_sum_their_cells() -> None:
    spots = np.array([[0.0, 0.0], [100.0, 0.0]])
    cells = np.array([[27.0, 0.0], [28.0, 0.0], [100.0, 27.4], [50.0, 0.0], [0.0, -5.0]])
    spot_of = tv.spot_membership(cells, spots)
    assert spot_of.tolist() == [0, -1, 1, -1, 0]
    rate = np.array([[1.0, 2.0], [10.0, 20.0], [3.0, 0.5], [100.0, 100.0], [4.0, 1.0]])
    np.testing.assert_allclose(tv.spot_rates(rate, spot_of, 2), [[5.0, 3.0], [3.0, 0.5]])
    with pytest.raises(GraphDataError, match="spot_of: expected < n_spots"):
        tv.spot_rates(rate, np.array([0, 1, 2, -1, 0]), 2)
    lattice = tv.hex_lattice(200, np.random.default_rng(0))
    dist, _ = __import__("scipy.spatial", fromlist=["cKDTree"]).cKDTree(lattice).query(lattice, 7)
    np.testing.assert_allclose(dist[:, 1], 100.0)  # the Visium centre spacing
    assert (np.isclose(dist[:, 1:], 100.0).sum(1) == 6).sum() > 100  # interior: 6 at 100 um


@pytest.fixture(scope="module")
def tissue() -> tv.VisiumTissue:
    return tv.simulate(150, 6, seed=4, sweeps=8, burn_in=4, n_other=300)


def test_simulate_structure_and_counts(tissue: tv.VisiumTissue) -> None:
    n_vars = 6 + 300
    assert tissue.counts.shape == (150, n_vars) and (tissue.counts.sum(1) > 0).all()
    spot_of, centres = tissue.cells["spot_of"], tissue.cells["centres"]
    n_in = np.bincount(spot_of[spot_of >= 0], minlength=150)
    assert n_in.min() >= 3 and 5 <= n_in.mean() <= 9
    assert 0.6 < tissue.params["fraction_cells_between_spots"] < 0.85
    # brute force: a cell belongs to the spot within 27.5 um of it (guard-added cells aside)
    d = np.linalg.norm(centres[:, None] - tissue.coords[None], axis=-1)
    brute = np.where(d.min(1) <= tv.SPOT_RADIUS, d.argmin(1), -1)
    placed = len(centres) - tissue.params["cells_added"]
    np.testing.assert_array_equal(brute[:placed], spot_of[:placed])
    # the coupled genes' means: capture x depth x e^beta x the sum over the spot's cells
    p = tissue.count_params
    for s in (0, 77, 149):
        members = np.flatnonzero(spot_of == s)
        cell_sum = (tissue.cells["content"][members, None] * np.exp(tissue.latent[members])).sum(0)
        expect = p["capture"][s] * p["depth_scale"] * np.exp(p["baseline"]) * cell_sum
        np.testing.assert_allclose(p["rate"][s, tissue.coupled], expect, rtol=1e-10)
    np.testing.assert_allclose(p["rate"][:, tissue.coupled].mean(0), p["gene_mean"], rtol=1e-10)
    others = np.setdiff1d(np.arange(n_vars), tissue.coupled)
    background = (p["rate"][:, others] / p["capture"][:, None]).sum(1)
    assert np.median(p["capture"] * background) == pytest.approx(tissue.params["depth"])
    assert 5000 <= tissue.params["depth"] <= 15000
    # cell types move the background only: every type's profile has the same total
    np.testing.assert_allclose(p["profile"].sum(1), p["profile"].sum(1)[0])
    assert (p["marker_type"][tissue.coupled] == -1).all()
    assert np.allclose(tissue.W_intra, tissue.W_intra.T) and (np.diag(tissue.W_intra) == 0).all()
    assert np.allclose(tissue.W_inter, tissue.W_inter.T)


def test_seed_determinism_and_anndata(tissue: tv.VisiumTissue) -> None:
    again = tv.simulate(150, 6, seed=4, sweeps=8, burn_in=4, n_other=300)
    np.testing.assert_array_equal(again.counts, tissue.counts)
    np.testing.assert_array_equal(again.latent, tissue.latent)
    np.testing.assert_array_equal(again.cells["centres"], tissue.cells["centres"])
    other = tv.simulate(150, 6, seed=5, sweeps=8, burn_in=4, n_other=300)
    assert not np.array_equal(other.counts, tissue.counts)
    adata = tissue.to_anndata()
    assert adata.var["highly_variable"].sum() == 6
    assert np.flatnonzero(adata.var["highly_variable"]).tolist() == tissue.coupled.tolist()
    truth = adata.uns["tissue_visium"]
    np.testing.assert_array_equal(truth["W_intra"], tissue.W_intra)
    np.testing.assert_array_equal(truth["W_inter"], tissue.W_inter)
    assert truth["sampler"]["acceptance"] > 0.8
    np.testing.assert_array_equal(adata.obsm["spatial"], tissue.coords)
    np.testing.assert_array_equal(adata.obs["total_counts"], tissue.counts.sum(1))
    spot_of = tissue.cells["spot_of"]
    assert adata.obs["n_cells"].tolist() == np.bincount(spot_of[spot_of >= 0]).tolist()
    signed = adata.layers["signed"][:, tissue.coupled]
    np.testing.assert_allclose(np.linalg.norm(signed, axis=1), 1.0, rtol=1e-5)
    assert set(adata.obs["cell_type"].unique()) <= set(tv.CELL_TYPES)


def test_refusals_name_the_argument() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(GraphDataError, match="n_spots: expected more than k = 6"):
        tv.simulate(6, 6)
    with pytest.raises(GraphDataError, match="n_genes: expected >= 6"):
        tv.draw_couplings(5, rng)
    with pytest.raises(GraphDataError, match="intra_norm, margin"):
        tv.simulate(50, 6, intra_norm=1.2)
    with pytest.raises(GraphDataError, match="capture_sd, depth"):
        tv.simulate(50, 6, depth=0.0)
    with pytest.raises(GraphDataError, match="n_other: expected >= 1"):
        tv.simulate(50, 6, n_other=0)
    with pytest.raises(GraphDataError, match="capture_sd: expected >= 0"):
        tv.capture_efficiency(10, -0.1, rng)
    with pytest.raises(GraphDataError, match="mu, theta"):
        tv.nb_counts(np.array([[1.0, -1.0]]), np.ones(2), rng)
    with pytest.raises(GraphDataError, match="cells_per_spot, density_amplitude"):
        tv.visium_slide(50, rng, cells_per_spot=0.0)
    with pytest.raises(GraphDataError, match="n_spots: expected >= 10"):
        tv.hex_lattice(5, rng)
    weight = np.ones(1)
    with pytest.raises(GraphDataError, match="expected symmetric"):
        tv.independence_gibbs(EDGES, weight, SITE, np.array([[0, 0.1], [0.2, 0]]), W_INTER, 2)
    with pytest.raises(GraphDataError, match="zero diagonal"):
        tv.independence_gibbs(EDGES, weight, SITE, np.eye(2), W_INTER, 2)
    with pytest.raises(GraphDataError, match="thin, sweeps, burn_in, newton, dof"):
        tv.independence_gibbs(EDGES, weight, SITE, W_INTRA, W_INTER, 2, dof=0.0)
    with pytest.raises(GraphDataError, match="lam > 0"):
        tv.independence_gibbs(EDGES, weight, {**SITE, "lam": -SITE["lam"]}, W_INTRA, W_INTER, 2)


def test_bench_registers_the_world_and_refuses_foreign_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from benchmarks import bench_celcomen_counts as bench

    assert bench.WORLDS["visium"] is tv
    assert bench.SWEEPS["visium"] == (150, 75)
    with pytest.raises(SystemExit):
        bench.main(["--world", "visium", "--size-factor-sd", "0.5"])
    assert "visium, held out" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--world", "visium", "--background-genes", "100"])
    assert "visium holds its own other genes" in capsys.readouterr().err
