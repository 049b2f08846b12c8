"""benchmarks.tissue_stereo: the Stereo-seq-like held-out tissue simulator, against exact oracles.

No test fits Celcomen on this world (it is held out): the bench is checked for its registration
and refusals only. The sampler is checked on a two-cell, two-gene graph (edge 1 -> 0) replicated
into disjoint copies, against a grid integral of the docstring's energy on R^4; the energy's
mixed derivatives against the truth by finite differences; the counts against the Poisson-Beta
closed forms (alone, and thinned through a footprint with ambient RNA); the bins, segmentation
and footprint against brute-force loops, a closed-form straight-edge spill and transcript-by-
transcript draws.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import hyp1f1

from benchmarks import tissue_stereo as ts
from benchmarks.tissue_metropolis import gcn_weights
from graphdata.errors import GraphDataError
from tests.benchmarks._truth import check_energy_truth

SITE = {
    "lam": np.array([0.3, 0.4]),
    "gamma": np.array([0.7, 0.5]),
    "power": np.array([1.6, 2.8]),
    "offset": np.array([0.8, -0.6]),
}
W_INTRA = np.array([[0.0, 0.12], [0.12, 0.0]])
W_INTER = np.array([[0.15, -0.12], [-0.12, -0.1]])
EDGES = np.array([[1], [0]])  # 1 -> 0, weight 1


def _phi(t: np.ndarray, g: int) -> np.ndarray:
    """The docstring's site potential, written out: Gaussian times generalised Gaussian."""
    lam, gam, p, o = (SITE[k][g] for k in ("lam", "gamma", "power", "offset"))
    return -0.5 * lam * t**2 - gam * np.abs(t - o) ** p


@pytest.mark.parametrize("blocks", [None, [np.array([1]), np.array([0])]])
def test_sampler_matches_the_grid_oracle(blocks: list | None) -> None:
    t = np.linspace(-10.0, 10.0, 52)
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
        "y01^4": (p * b0**4).sum(),
        "y00*y01": (p * a0 * b0).sum(),
        "y00*y10": (p * a0 * a1).sum(),
        "y00*y11": (p * a0 * b1).sum(),
        "y01*y11": (p * b0 * b1).sum(),
    }
    # informative: the offsets pull gene 0 right and gene 1 left; W_intra correlates them
    assert exact["y00"] > 0.3 and exact["y01"] < -0.2
    assert exact["y00*y01"] - exact["y00"] * exact["y01"] > 0.05
    copies = 2000
    edge_index = np.concatenate([EDGES + 2 * c for c in range(copies)], axis=1)
    weight = gcn_weights(edge_index, 2 * copies)
    np.testing.assert_allclose(weight, 1.0)
    y, report = ts.elliptical_gibbs(
        edge_index, weight, SITE, W_INTRA, W_INTER, 2 * copies, sweeps=30, burn_in=30, seed=2,
        blocks=blocks,
    )  # fmt: skip
    assert report.n_colours == 2 and report.n_blocks == (1 if blocks is None else 2)
    assert report.acceptance > 0.5 and 1.0 < report.evaluations_per_update < 3.0
    assert report.config_temperature == pytest.approx(1.0, abs=0.08)
    cells = y.reshape(copies, 2, 2, 2).transpose(0, 2, 1, 3).reshape(-1, 2, 2)  # [sample, cell]
    samples = {
        "y00": cells[:, 0, 0],
        "y01": cells[:, 0, 1],
        "y00^2": cells[:, 0, 0] ** 2,
        "y01^4": cells[:, 0, 1] ** 4,
        "y00*y01": cells[:, 0, 0] * cells[:, 0, 1],
        "y00*y10": cells[:, 0, 0] * cells[:, 1, 0],
        "y00*y11": cells[:, 0, 0] * cells[:, 1, 1],
        "y01*y11": cells[:, 0, 1] * cells[:, 1, 1],
    }
    for name, values in samples.items():
        se = values.std() / np.sqrt(len(values))
        assert abs(values.mean() - exact[name]) < 4.5 * se, (name, values.mean(), exact[name])


def test_reference_fit_is_the_lone_site_moments() -> None:
    kappa, centre = ts.reference_fit(SITE)
    t = np.linspace(-15.0, 15.0, 30001)
    for g in (0, 1):
        w = np.exp(_phi(t, g) - _phi(t, g).max())
        w /= w.sum()
        mean = (w * t).sum()
        assert centre[g] == pytest.approx(mean, abs=1e-5)
        var = (w * (t - mean) ** 2).sum()
        if SITE["power"][g] > 2:
            assert SITE["lam"][g] + kappa[g] == pytest.approx(1.0 / var, rel=1e-4)
            # log L = psi + kappa (t - c)^2 / 2 is bounded above: it falls in both tails
            log_l = _phi(t, g) + 0.5 * SITE["lam"][g] * t**2 + 0.5 * kappa[g] * (t - mean) ** 2
            assert log_l[0] < log_l.max() - 50 and log_l[-1] < log_l.max() - 50
        else:
            assert kappa[g] == 0.0  # p < 2: any kappa > 0 would make L unbounded
    assert kappa[1] > 0


def test_mixed_derivatives_are_the_truth() -> None:
    site, y = check_energy_truth(ts)
    h = 1e-5  # the site potential's derivatives by central differences
    away = np.abs(y - site["offset"]) > 1e-3
    for order in (1, 2):
        fd = (
            ts.site_potential(y + h, site, order - 1) - ts.site_potential(y - h, site, order - 1)
        ) / (2 * h)
        got = ts.site_potential(y, site, order)
        np.testing.assert_allclose(got[away], fd[away], rtol=1e-5, atol=1e-6)
    # psi = phi without its Gaussian part, at most 0; phi concave
    psi = ts.site_potential(y, site, gaussian=False)
    np.testing.assert_allclose(psi, ts.site_potential(y, site) + 0.5 * site["lam"] * y**2)
    assert (psi <= 0).all() and (ts.site_potential(y, site, 2) <= -site["lam"]).all()


def test_couplings_have_the_stated_shapes() -> None:
    for g, seed in [(10, 0), (20, 1), (20, 2), (6, 3)]:
        w0, k0, genes = ts.draw_couplings(g, np.random.default_rng(seed))
        assert np.allclose(w0, w0.T) and (np.diag(w0) == 0).all()
        module = genes["module"]
        n_mod = int(np.clip(round(g / 6), 2, 4))
        assert sorted(set(module.tolist())) == list(range(n_mod))
        assert np.bincount(module).max() - np.bincount(module).min() <= 1
        same = module[:, None] == module[None, :]
        support = w0 != 0
        assert (support & ~same).any() and (w0 > 0).any() and (w0 < 0).any()
        assert (support & same).sum() > (support & ~same).sum()  # assortative blocks
        off = k0 - np.diag(np.diag(k0))
        rows, cols = np.nonzero(np.triu(off))
        relays = {(int(a), int(b)) for a, b in zip(genes["senders"], genes["receivers"])}
        for a, b in zip(rows, cols):
            relay = (a, b) in relays or (b, a) in relays
            assert relay != same[a, b]  # relays cross modules, juxtacrine pairs stay inside
        for s_, r_ in relays:
            assert module[r_] == (module[s_] + 1) % n_mod and off[s_, r_] != 0
        assert (off > 0).any() and (off < 0).any()
        assert (np.diag(k0)[genes["community"]] > 0).all()
        assert (np.diag(k0)[genes["inhibit"]] < 0).all()
        rest = np.setdiff1d(np.arange(g), np.r_[genes["community"], genes["inhibit"]])
        assert (np.diag(k0)[rest] == 0).all()


def test_poisson_beta_matches_its_closed_forms() -> None:
    rng = np.random.default_rng(5)
    n = 200_000
    mu = np.tile([0.3, 3.0, 12.0], (n, 1))
    a, b = np.array([0.7, 2.0, 4.0]), np.array([3.0, 1.0, 0.6])
    c = ts.poisson_beta_counts(mu, a, b, rng)
    for j in range(3):
        m, v = mu[0, j], b[j] / (a[j] * (a[j] + b[j] + 1))
        var = m + m**2 * v
        assert c[:, j].mean() == pytest.approx(m, abs=4 * math.sqrt(var / n))
        assert c[:, j].var() == pytest.approx(var, rel=0.03)
        p0 = hyp1f1(a[j], a[j] + b[j], -m * (a[j] + b[j]) / a[j])
        assert (c[:, j] == 0).mean() == pytest.approx(p0, abs=4 * math.sqrt(p0 * (1 - p0) / n))


def test_thinned_counts_with_ambient_match_their_closed_forms() -> None:
    """Two objects, three cells: E, Var and the shared-burst covariance of the docstring."""
    rng = np.random.default_rng(6)
    f = np.array([[0.7, 0.2, 0.0], [0.1, 0.6, 0.5]])  # [S, C]; the rest of each column lost
    mu = np.array([[4.0], [9.0], [2.0]])  # [C, 1]
    a, b = np.array([1.2]), np.array([2.0])
    v = b[0] / (a[0] * (a[0] + b[0] + 1))
    amb = np.array([[0.3], [0.5]])
    n = 200_000
    draws = np.empty((n, 2))
    for rep in range(4):
        block = slice(rep * n // 4, (rep + 1) * n // 4)
        big_f = sp.kron(sp.identity(n // 4), sp.csr_matrix(f)).tocsr()  # n/4 disjoint copies
        rate = ts.segmented_rates(
            big_f, np.tile(mu, (n // 4, 1)), a, b, np.tile(amb, (n // 4, 1)), rng
        )
        draws[block] = rng.poisson(rate).reshape(n // 4, 2)
    mean = (f @ mu).ravel() + amb.ravel()
    cov = v * (f * mu.T**2) @ f.T + np.diag(mean)
    np.testing.assert_allclose(draws.mean(0), mean, atol=4 * np.sqrt(np.diag(cov) / n).max())
    got = np.cov(draws.T)
    np.testing.assert_allclose(np.diag(got), np.diag(cov), rtol=0.03)
    assert got[0, 1] == pytest.approx(cov[0, 1], abs=0.05 * math.sqrt(cov[0, 0] * cov[1, 1]))
    assert cov[0, 1] > 0.1 * math.sqrt(cov[0, 0] * cov[1, 1])  # informative


def _small_layout(seed: int = 1, n: int = 40) -> dict:
    rng = np.random.default_rng(seed)
    tis = ts.tissue_cells(n, rng)
    grid = ts.bin_grid(tis["centres"], tis["reach"], float(tis["side"]))
    found = ts.detect_nuclei(tis["centres"], grid["n_bins"], rng, merge=0.8, split=0.8)
    labels, new_id = ts.segment_bins(grid["xy"], found["nuclei"], found["object_of"])
    return {"tis": tis, "grid": grid, "found": found, "labels": labels, "new_id": new_id}


def test_bins_and_segmentation_by_brute_force() -> None:
    lay = _small_layout()
    tis, grid, found, labels = lay["tis"], lay["grid"], lay["found"], lay["labels"]
    centres, reach, xy = tis["centres"], tis["reach"], grid["xy"]
    d = np.linalg.norm(xy[:, None] - centres[None], axis=-1)  # [B, C]
    power = np.where(d <= reach[None], d**2 - reach[None] ** 2, np.inf)
    brute = np.where(np.isfinite(power.min(1)), power.argmin(1), -1)
    np.testing.assert_array_equal(brute, grid["owner"])
    np.testing.assert_array_equal(np.bincount(brute[brute >= 0], minlength=40), grid["n_bins"])
    # merges only among small cells and splits only among large ones, as stated
    cell_of, object_of, kind = found["cell_of"], found["object_of"], found["kind"]
    small, large = np.quantile(grid["n_bins"], [0.2, 0.8])
    for obj in range(len(kind)):
        cells = cell_of[object_of == obj]
        if kind[obj] == 1:
            assert len(cells) == 2 and grid["n_bins"][cells].min() <= small
        elif kind[obj] == 2:
            assert len(cells) == 1 and grid["n_bins"][cells[0]] >= large
            assert (cell_of == cells[0]).sum() == 2
        else:
            assert len(cells) == 1
    assert (kind == 1).any() and (kind == 2).any()
    # labels: the nearest nucleus's object within the reach; small objects dropped
    dn = np.linalg.norm(xy[:, None] - found["nuclei"][None], axis=-1)
    raw = np.where(dn.min(1) <= 5.5, object_of[dn.argmin(1)], -1)
    size = np.bincount(raw[raw >= 0], minlength=len(kind))
    raw[(raw >= 0) & (size[np.maximum(raw, 0)] < 4)] = -1
    np.testing.assert_array_equal(raw >= 0, labels >= 0)
    new_id = lay["new_id"]
    np.testing.assert_array_equal(new_id[raw[raw >= 0]], labels[labels >= 0])
    assert sorted(set(labels[labels >= 0].tolist())) == list(range(int(new_id.max()) + 1))


def test_footprint_by_brute_force_and_by_transcripts() -> None:
    lay = _small_layout()
    grid, labels = lay["grid"], lay["labels"]
    owner, shape = grid["owner"], grid["shape"]
    q = ts.diffusion_kernel(1.2)
    assert q.sum() == pytest.approx(1.0) and np.allclose(q, q[::-1])
    n_cells = 40
    foot = ts.footprint(owner, labels, shape, q, n_cells).toarray()
    n_obj = foot.shape[0] - 1
    ny = int(shape[1])
    brute = np.zeros_like(foot)
    for b in np.flatnonzero(owner >= 0):
        c = owner[b]
        for dx in range(-3, 4):
            for dy in range(-3, 4):
                lab = labels[(b // ny + dx) * ny + b % ny + dy]
                brute[lab if lab >= 0 else n_obj, c] += q[dx + 3] * q[dy + 3]
    brute /= grid["n_bins"][None]
    np.testing.assert_allclose(foot, brute, atol=1e-12)
    np.testing.assert_allclose(foot.sum(0), 1.0)  # one object or lost, for every transcript
    # transcript by transcript: each lands in exactly one object or is lost, at rates F
    rng = np.random.default_rng(3)
    per_cell = 4000
    origin = np.concatenate([rng.choice(np.flatnonzero(owner == c), per_cell) for c in range(40)])
    landed = ts.transcript_labels(origin, labels, shape, q, rng)
    assert landed.shape == origin.shape and ((landed >= -1) & (landed < n_obj)).all()
    tally = np.zeros_like(foot)
    np.add.at(tally, (np.where(landed >= 0, landed, n_obj), owner[origin]), 1.0)
    assert tally.sum() == len(origin)
    z = (tally / per_cell - foot) / np.sqrt(np.maximum(foot * (1 - foot), 1e-12) / per_cell)
    assert np.abs(z[foot > 0]).max() < 5.0 and (tally[foot == 0] == 0).all()


def test_straight_edge_spill_is_the_stated_law() -> None:
    """Two 6 x 5 rectangles side by side, segmented exactly: F = E D+ sum q(y' - y) / n."""
    nx, ny = 24, 17
    owner = np.full((nx, ny), -1)
    owner[4:10, 6:11] = 0
    owner[10:16, 6:11] = 1
    labels = owner.ravel().copy()
    for diffusion in (0.8, 1.2, 2.0):
        q = ts.diffusion_kernel(diffusion)
        foot = ts.footprint(owner.ravel(), labels, (nx, ny), q, 2).toarray()
        d = np.arange(-3, 4)
        e_plus = (np.maximum(d, 0) * q).sum()
        rows = np.arange(5)
        wide = np.r_[np.zeros(4), q, np.zeros(4)]  # q(d) for |d| <= 7 (0 beyond 3)
        stay = wide[rows[:, None] - rows[None] + 7].sum()  # sum over y, y' in the edge: q(y' - y)
        assert foot[1, 0] == pytest.approx(e_plus * stay / 30, rel=1e-12)
        assert foot[0, 1] == pytest.approx(foot[1, 0], rel=1e-12)
        assert foot[:, 0].sum() == pytest.approx(1.0)
        assert e_plus * stay / 30 < e_plus * 5 / 30  # below the first-order law l E D+ / n
    assert ts.diffusion_kernel(0.0).tolist() == [0, 0, 0, 1, 0, 0, 0]


@pytest.fixture(scope="module")
def tissue() -> ts.StereoTissue:
    return ts.simulate(150, 6, seed=4, sweeps=8, burn_in=4, n_other=300)


def test_simulate_structure_and_counts(tissue: ts.StereoTissue) -> None:
    n_vars = 6 + 300
    n_obj = tissue.params["n_objects"]
    assert tissue.counts.shape == (n_obj, n_vars) and (tissue.counts.sum(1) > 0).all()
    assert 0.9 * 150 < n_obj < 1.1 * 150
    seg, p = tissue.segmentation, tissue.count_params
    foot = seg["footprint"]
    np.testing.assert_allclose(np.asarray(foot.sum(0)).ravel(), 1.0)
    fobj = foot[:n_obj]
    np.testing.assert_allclose(p["expected"], fobj @ p["rate"], rtol=1e-10)
    np.testing.assert_allclose(p["expected"][:, tissue.coupled].mean(0), p["gene_mean"])
    others = np.setdiff1d(np.arange(n_vars), tissue.coupled)
    assert np.median(p["expected"][:, others].sum(1)) == pytest.approx(tissue.params["depth"])
    assert 300 <= tissue.params["depth"] <= 1500
    # the coupled rates: depth x capture x content x e^(beta + y)
    c = tissue.cells
    expect = p["depth_scale"] * (p["capture"] * c["content"])[:, None]
    np.testing.assert_allclose(
        p["rate"][:, tissue.coupled], expect * np.exp(p["baseline"] + tissue.latent), rtol=1e-10
    )
    # ambient: rho |s| pi, the median object's share as stated; pi the tissue's mean profile
    np.testing.assert_allclose(p["ambient_profile"], p["rate"].sum(0) / p["rate"].sum())
    amb = p["ambient_rate"].sum(1)
    np.testing.assert_allclose(amb / seg["n_bins"], amb[0] / seg["n_bins"][0])
    ratio = np.median(amb) / np.median(p["expected"].sum(1))
    assert ratio == pytest.approx(tissue.params["ambient"])
    assert (p["observed_rate"] >= p["ambient_rate"]).all()
    np.testing.assert_allclose(p["profile"].sum(1), p["profile"].sum(1)[0])
    assert (p["marker_type"][tissue.coupled] == -1).all()
    assert np.allclose(tissue.W_intra, tissue.W_intra.T) and (np.diag(tissue.W_intra) == 0).all()
    assert np.allclose(tissue.W_inter, tissue.W_inter.T)
    assert 0.02 < tissue.params["mean_lost_fraction"] < 0.4
    assert 0.02 < tissue.params["median_spill"] < 0.4
    obj = c["object"]
    own = np.where(obj >= 0, np.asarray(fobj[np.maximum(obj, 0), np.arange(150)]).ravel(), 0.0)
    np.testing.assert_allclose(c["spill"] + c["lost"] + own, 1.0)


def test_seed_determinism_and_anndata(tissue: ts.StereoTissue) -> None:
    again = ts.simulate(150, 6, seed=4, sweeps=8, burn_in=4, n_other=300)
    np.testing.assert_array_equal(again.counts, tissue.counts)
    np.testing.assert_array_equal(again.latent, tissue.latent)
    np.testing.assert_array_equal(again.segmentation["labels"], tissue.segmentation["labels"])
    other = ts.simulate(150, 6, seed=5, sweeps=8, burn_in=4, n_other=300)
    assert other.counts.shape != tissue.counts.shape or not np.array_equal(
        other.counts, tissue.counts
    )
    adata = tissue.to_anndata()
    assert adata.var["highly_variable"].sum() == 6
    assert np.flatnonzero(adata.var["highly_variable"]).tolist() == tissue.coupled.tolist()
    truth = adata.uns["tissue_stereo"]
    np.testing.assert_array_equal(truth["W_intra"], tissue.W_intra)
    np.testing.assert_array_equal(truth["W_inter"], tissue.W_inter)
    assert truth["sampler"]["acceptance"] > 0.4
    np.testing.assert_array_equal(adata.obsm["spatial"], tissue.coords)
    np.testing.assert_array_equal(adata.obs["total_counts"], tissue.counts.sum(1))
    labels = tissue.segmentation["labels"]
    assert adata.obs["n_bins"].tolist() == np.bincount(labels[labels >= 0]).tolist()
    assert set(adata.obs["segmentation"].unique()) <= set(ts.SEGMENT_KINDS)
    signed = adata.layers["signed"][:, tissue.coupled]
    np.testing.assert_allclose(np.linalg.norm(signed, axis=1), 1.0, rtol=1e-5)
    assert set(adata.obs["cell_type"].unique()) <= set(ts.CELL_TYPES)


def test_refusals_name_the_argument() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(GraphDataError, match="n_cells: expected more than k = 6"):
        ts.simulate(6, 6)
    with pytest.raises(GraphDataError, match="n_genes: expected >= 6"):
        ts.draw_couplings(5, rng)
    with pytest.raises(GraphDataError, match="intra_norm, margin"):
        ts.simulate(50, 6, intra_norm=1.2)
    with pytest.raises(GraphDataError, match="capture_sd, depth"):
        ts.simulate(50, 6, depth=0.0)
    with pytest.raises(GraphDataError, match="ambient: expected in"):
        ts.simulate(50, 6, ambient=1.0)
    with pytest.raises(GraphDataError, match="n_other: expected >= 1"):
        ts.simulate(50, 6, n_other=0)
    with pytest.raises(GraphDataError, match="n_cells: expected >= 10"):
        ts.tissue_cells(5, rng)
    with pytest.raises(GraphDataError, match="cell_area, density_amplitude, reach_scale"):
        ts.tissue_cells(50, rng, cell_area=-1.0)
    with pytest.raises(GraphDataError, match="jitter, merge, split"):
        ts.detect_nuclei(np.zeros((3, 2)), np.ones(3), rng, merge=1.5)
    with pytest.raises(GraphDataError, match="reach, min_bins"):
        ts.segment_bins(np.zeros((3, 2)), np.zeros((1, 2)), np.zeros(1, int), reach=0.0)
    with pytest.raises(GraphDataError, match="diffusion: expected >= 0"):
        ts.diffusion_kernel(-1.0)
    with pytest.raises(GraphDataError, match="a transcript left the grid"):
        ts.footprint(np.array([0, -1, -1, -1]), np.array([0, 0, 0, 0]), (2, 2), np.ones(7) / 7, 1)
    with pytest.raises(GraphDataError, match="mu, a, b"):
        ts.burst_rates(np.array([[1.0, 2.0]]), np.array([1.0, 0.0]), np.ones(2), rng)
    with pytest.raises(GraphDataError, match="fobj, mu, ambient_rate"):
        ts.segmented_rates(np.ones((2, 3)), np.ones((4, 1)), np.ones(1), np.ones(1), 0, rng)
    weight = np.ones(1)
    with pytest.raises(GraphDataError, match="expected symmetric"):
        ts.elliptical_gibbs(EDGES, weight, SITE, np.array([[0, 0.1], [0.2, 0]]), W_INTER, 2)
    with pytest.raises(GraphDataError, match="zero diagonal"):
        ts.elliptical_gibbs(EDGES, weight, SITE, np.eye(2), W_INTER, 2)
    with pytest.raises(GraphDataError, match="thin, sweeps, burn_in"):
        ts.elliptical_gibbs(EDGES, weight, SITE, W_INTRA, W_INTER, 2, thin=0)
    with pytest.raises(GraphDataError, match="gamma >= 0 and power >= 1"):
        ts.elliptical_gibbs(EDGES, weight, {**SITE, "power": np.ones(2) * 0.5}, W_INTRA, W_INTER, 2)
    with pytest.raises(GraphDataError, match="lam > 0"):
        ts.elliptical_gibbs(EDGES, weight, {**SITE, "lam": -SITE["lam"]}, W_INTRA, W_INTER, 2)
    with pytest.raises(GraphDataError, match="positive definite"):
        ts.elliptical_gibbs(EDGES, weight, SITE, 10 * W_INTRA, W_INTER, 2)
    with pytest.raises(GraphDataError, match="blocks: expected a partition of the 2 genes"):
        ts.elliptical_gibbs(EDGES, weight, SITE, W_INTRA, W_INTER, 2, blocks=[np.array([0])])


def test_bench_registers_the_world_and_refuses_foreign_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from benchmarks import bench_celcomen_counts as bench

    assert bench.WORLDS["stereo"] is ts
    assert bench.SWEEPS["stereo"] == (1200, 600)
    with pytest.raises(SystemExit):
        bench.main(["--world", "stereo", "--size-factor-sd", "0.5"])
    assert "stereo, held out" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--world", "stereo", "--background-genes", "100"])
    assert "stereo holds its own other genes" in capsys.readouterr().err
