"""The raw-counts route ``transform="log_counts"`` and its held-out world (issue 19).

The route's coordinates are checked against hand values and against the invariance it is built
for (a gene's baseline does not move the sphere coordinates); the fit against the reporting
rule (orthogonal to the library-size direction 1); the third simulator's Gibbs sampler against
the exact covariance of its Gaussian field.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from benchmarks import tissue_gibbs_pln as tg
from benchmarks.tissue_metropolis import gcn_weights
from graphdata.errors import GraphDataError
from graphdata.spatial import knn_graph
from spatial._inputs import is_raw_counts, library_size_direction, log_counts_coordinates
from spatial._messages import edge_weights
from spatial.celcomen import Celcomen, CelcomenConfig
from spatial.counterfactual import simulate_intervention


def test_log_counts_coordinates_by_hand():
    counts = torch.tensor([[0.0, 3.0, 1.0], [1.0, 0.0, 1.0], [3.0, 1.0, 0.0]])
    y, m = log_counts_coordinates(counts)
    logs = np.log1p(counts.numpy())
    np.testing.assert_allclose(m.numpy(), logs.mean(0), rtol=1e-6)
    np.testing.assert_allclose(y.numpy(), logs - logs.mean(0), rtol=1e-6, atol=1e-7)
    assert torch.equal(counts[0], torch.tensor([0.0, 3.0, 1.0]))  # input untouched


def test_log_counts_refuses_a_cell_at_the_gene_means():
    with pytest.raises(GraphDataError, match="no direction on the sphere after centring"):
        log_counts_coordinates(torch.tensor([[1.0, 1.0], [1.0, 1.0]]))


def _tissue(n: int = 400, g: int = 5, seed: int = 0, depth: float = 2000.0):
    rng = np.random.default_rng(seed)
    coords = torch.from_numpy(rng.random((n, 2)) * np.sqrt(n))
    edge_index, _ = knn_graph(coords, 6)
    # log-link counts with a shared spatial factor on genes 0, 1 and a private one on gene 2
    field = rng.standard_normal((n, g)) * 0.3
    neighbour = torch.zeros(n, g, dtype=torch.float64)
    neighbour.index_add_(0, edge_index[1], torch.from_numpy(field)[edge_index[0]])
    eta = field + 0.1 * neighbour.numpy()
    eta[:, 1] += 0.5 * eta[:, 0]
    rate = depth * np.exp(eta + rng.normal(0, 1, g))
    return torch.from_numpy(rng.poisson(rate).astype(np.float32)), edge_index


def test_log_counts_fit_ignores_gene_baselines_and_reports_orthogonal_to_ones():
    counts, edge_index = _tissue()
    fit = Celcomen(progress=False, transform="log_counts")
    est = fit.fit(counts, edge_index)
    g = counts.shape[1]
    # counts ~ 10^3: the library-size direction is 1 up to c log(1 + 1/c) = 1 - 1/(2c) + ...
    torch.testing.assert_close(est.mean_direction_, library_size_direction(counts))
    np.testing.assert_allclose(est.mean_direction_.numpy(), np.full(g, g**-0.5), rtol=2e-3)
    for w in (est.W_intra_, est.W_inter_):
        assert float((w @ est.mean_direction_).abs().max()) < 1e-4 * float(w.abs().max())
        assert float((w @ torch.ones(g)).abs().max()) < 1e-2 * float(w.abs().max())
    assert est.transform_ == "log_counts" and est.gene_offset_.shape == (g,)
    # A 50x larger baseline of gene 3 shifts log1p(c) by log 50 (counts ~ 10^3: log1p ~ log):
    # the centred coordinates, hence the couplings, barely move; the sphere route's do.
    scaled = counts.clone()
    scaled[:, 3] *= 50.0
    again = Celcomen(progress=False, transform="log_counts").fit(scaled, edge_index)
    sphere = [
        Celcomen(progress=False, transform="sphere").fit(c, edge_index) for c in (counts, scaled)
    ]
    change = float((again.W_intra_ - est.W_intra_).norm() / est.W_intra_.norm())
    sphere_change = float(
        (sphere[1].W_intra_ - sphere[0].W_intra_).norm() / sphere[0].W_intra_.norm()
    )
    assert change < 0.02 < 0.2 < sphere_change


def _poisson_mean(f, mu: float) -> float:
    """E f(c) for c ~ Poisson(mu), summed over the pmf far into the tail."""
    from scipy.stats import poisson

    c = np.arange(int(mu + 40 * np.sqrt(mu) + 60), dtype=np.float64)
    return float(poisson.pmf(c, mu) @ f(c))


@pytest.mark.parametrize("mu", [0.05, 0.5, 3.0, 40.0, 2000.0])
def test_library_size_direction_is_the_poisson_sensitivity_of_log_counts(mu):
    # oracle: the exact derivative d E log(1 + c) / d log mu (central difference of pmf sums)
    # equals E[c log(1 + 1/c)], the expectation of the estimator's summand
    h = 1e-5
    up, down = (_poisson_mean(np.log1p, mu * np.exp(s)) for s in (h, -h))
    derivative = (up - down) / (2 * h)
    summand = _poisson_mean(lambda c: np.where(c > 0, c * np.log1p(1 / np.maximum(c, 1)), 0), mu)
    assert summand == pytest.approx(derivative, rel=1e-6)
    assert summand == pytest.approx(
        mu * _poisson_mean(lambda c: np.log((c + 2) / (c + 1)), mu), rel=1e-9
    )


def test_library_size_direction_by_hand_and_on_poisson_counts():
    counts = torch.tensor([[0.0, 1.0, 5.0], [2.0, 0.0, 7.0]], dtype=torch.float64)
    kappa = (counts * torch.log1p(1 / counts.clamp(min=1))).mean(0)
    torch.testing.assert_close(library_size_direction(counts), kappa / kappa.norm())
    torch.testing.assert_close(library_size_direction(counts, block=3), kappa / kappa.norm())
    # Poisson counts with means 0.1 .. 1000: the direction of the exact sensitivities, within 4
    # standard errors of each kappa_g (the norm is set by the well-expressed genes, exactly)
    mus = [0.1, 1.0, 10.0, 1000.0]
    n = 200_000
    gen = torch.Generator().manual_seed(0)
    sample = torch.poisson(torch.tensor(mus, dtype=torch.float64).expand(n, 4), gen)
    exact = torch.tensor(
        [_poisson_mean(lambda c: np.where(c > 0, c * np.log1p(1 / np.maximum(c, 1)), 0), m)
         for m in mus], dtype=torch.float64
    )  # fmt: skip
    se = (sample * torch.log1p(1 / sample.clamp(min=1))).std(0) / n**0.5 / exact.norm()
    error = (library_size_direction(sample) - exact / exact.norm()).abs()
    assert bool((error < 4 * se + 1e-4).all()), (error, se)
    assert float(exact[0]) < 0.1 and float(exact[-1]) == pytest.approx(1.0, abs=1e-3)


def test_log_counts_reports_orthogonal_to_the_library_direction_of_sparse_genes():
    # genes 0, 1 with about 0.3 counts a cell, 2-4 with about 300: the reported couplings are
    # orthogonal to u (not to 1), and u weighs the sparse genes down
    counts, edge_index = _tissue(n=400)
    counts[:, :2] = torch.poisson(counts[:, :2] / 6000.0, torch.Generator().manual_seed(1))
    est = Celcomen(progress=False).fit(counts, edge_index)
    u = est.mean_direction_
    torch.testing.assert_close(u, library_size_direction(counts))
    assert float(u[:2].max()) < 0.5 * float(u[2:].min())
    for w in (est.W_intra_, est.W_inter_):
        assert float((w @ u).abs().max()) < 1e-4 * float(w.abs().max())
    # the report is P W P of the fitted energy, P = I - u u^T
    p = torch.eye(5) - torch.outer(u, u)
    w = est.model_.W_inter.detach()
    torch.testing.assert_close(est.W_inter_, p @ w @ p, rtol=1e-5, atol=1e-6)


def test_the_counts_route_warns_when_most_genes_have_below_one_count():
    # Module spatial.celcomen, _warn_low_depth: the median over genes of the mean count per cell
    counts, edge_index = _tissue(depth=0.4)
    counts[:, 4] += 5.0  # one well-expressed gene: no empty cell, so the sphere route fits too
    means = counts.double().mean(0)
    assert float(means.median()) < 1.0
    low = int((means < 1.0).sum())
    with pytest.warns(UserWarning, match=rf"{low} of 5 fitted genes have a mean below one count"):
        Celcomen(progress=False, epochs=5).fit(counts, edge_index)
    deep, _ = _tissue(depth=2000.0)
    assert float(deep.double().mean(0).min()) > 1.0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Celcomen(progress=False, epochs=5).fit(deep, edge_index)
        Celcomen(progress=False, epochs=5, transform="sphere").fit(counts, edge_index)
    assert not [w for w in caught if "below one count" in str(w.message)]


def test_log_counts_recovers_a_positive_pair_on_log_link_counts():
    counts, edge_index = _tissue(n=800)
    est = Celcomen(progress=False, transform="log_counts").fit(counts, edge_index)
    w = est.W_intra_.numpy()
    off = w[np.triu_indices(5, 1)]
    # eta_1 = eta_1' + 0.5 eta_0: the (0, 1) coupling is the largest positive one
    assert w[0, 1] > 0 and w[0, 1] == pytest.approx(off.max())


def test_log_counts_errors():
    counts, edge_index = _tissue(n=60)
    signed = counts.clone()
    signed[0, 0] = -1.0
    with pytest.raises(GraphDataError, match="non-negative raw counts"):
        Celcomen(progress=False, transform="log_counts").fit(signed, edge_index)
    with pytest.raises(GraphDataError, match="transform: expected one of"):
        Celcomen(transform="log")
    with pytest.raises(GraphDataError, match="not part of the reference protocol"):
        CelcomenConfig.reference(transform="log_counts")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = Celcomen(progress=False, transform="log_counts", epochs=3).fit(counts, edge_index)
    with pytest.raises(
        GraphDataError, match=r"genes\[0\]: expected a finite expression value >= 0"
    ):
        est.intervene(counts, {0: -1.0}, [0], edge_index=edge_index, progress=False)
    with pytest.raises(GraphDataError, match="intervenes on raw counts, got negative"):
        est.intervene(signed, {0: 0.0}, [1], edge_index=edge_index, progress=False)
    with pytest.raises(GraphDataError, match="needs its gene means"):
        Celcomen.from_matrices(*est.matrices(), transform="log_counts").intervene(
            counts, {0: 0.0}, [0], edge_index=edge_index
        )
    with pytest.raises(GraphDataError, match="gene_offset: expected the 5 gene means"):
        Celcomen.from_matrices(*est.matrices(), gene_offset=torch.zeros(4))


def test_is_raw_counts_reads_every_block():
    counts = torch.poisson(torch.full((50, 3), 4.0), generator=torch.Generator().manual_seed(0))
    assert is_raw_counts(counts, block=6) and is_raw_counts(counts.long())
    for row in (0, 1, 49):  # first block, its edge, the last (partial) block
        for bad in (0.5, -1.0, float("nan")):
            edited = counts.clone()
            edited[row, 2] = bad
            assert not is_raw_counts(edited, block=6), (row, bad)


def test_auto_transform_takes_the_counts_route_on_raw_counts_only():
    counts, edge_index = _tissue(n=200)
    auto = Celcomen(progress=False).fit(counts, edge_index)
    explicit = Celcomen(progress=False, transform="log_counts").fit(counts, edge_index)
    assert auto.transform_ == "log_counts"
    for a, b in zip(auto.matrices(), explicit.matrices(), strict=True):
        assert torch.equal(a, b)
    # normalised / log expression and signed coordinates: the sphere route, unchanged
    for data in (torch.log1p(counts), torch.log1p(counts) - torch.log1p(counts).mean(0)):
        est = Celcomen(progress=False).fit(data, edge_index)
        sphere = Celcomen(progress=False, transform="sphere").fit(data, edge_index)
        assert est.transform_ == "sphere" and est.gene_offset_ is None
        assert torch.equal(est.W_intra_, sphere.W_intra_)
    # the reference protocol knows only the sphere
    ref = Celcomen(CelcomenConfig.reference(epochs=2, progress=False)).fit(counts, edge_index)
    assert ref.transform_ == "sphere"


def test_log_counts_counterfactual_clamps_centred_log_counts():
    counts, edge_index = _tissue(n=300)
    est = Celcomen(progress=False).fit(counts, edge_index)
    assert est.transform_ == "log_counts"
    cells = torch.zeros(300, dtype=torch.bool)
    cells[:30] = True
    result = est.intervene(counts, {0: 0.0}, cells, edge_index=edge_index, progress=False)
    # oracle 1: the same counterfactual computed by hand in the fit's coordinates
    m = est.gene_offset_
    y = torch.log1p(counts) - m
    weight = edge_weights(edge_index, 300, normalization="gcn", dtype=y.dtype)
    by_hand = simulate_intervention(
        est.model_, y, edge_index, weight, {0: -float(m[0])}, cells, progress=False
    )
    torch.testing.assert_close(result.delta, by_hand.delta)

    # oracle 2: genes 0 and 1 share a factor (eta_1 += 0.5 eta_0): knocking gene 0 out turns
    # the free genes of the clamped cells away from gene 1 (the direction of the free block;
    # its length only follows the clamped value: radius sqrt(1 - c^2), module docstring)
    def direction(state):
        free = state[cells][:, 1:]
        return free / free.norm(dim=-1, keepdim=True)

    change = (direction(result.perturbed) - direction(result.sham)).mean(0)  # genes 1..4
    assert int(change.argmin()) == 0 and float(change[0]) < 0, change
    # oracle 3: clamping every cell's gene 0 at its own count changes nothing
    value = float(counts[0, 0])
    same = counts[:, 0] == value
    assert int(same.sum()) >= 1
    null = est.intervene(counts, {0: value}, same, edge_index=edge_index, progress=False)
    assert float(null.delta.abs().max()) == 0.0


def test_gibbs_sampler_matches_the_exact_covariance():
    # 4 cells, a directed graph with unequal in-degrees, replicated into disjoint copies; the
    # empirical covariance of the final states against Q^{-1}, Q = I (x) Lambda - (A + A^T) (x) K.
    rng = np.random.default_rng(0)
    edges = np.array([[1, 2, 0, 3, 2], [0, 0, 1, 2, 3]])
    n, g, copies = 4, 4, 3000
    weight = gcn_weights(edges, n)
    lam, k0 = tg.draw_precision(g, rng)
    k = 0.3 * k0
    a = np.zeros((n, n))
    a[edges[1], edges[0]] = weight
    q = np.kron(np.eye(n), lam) - np.kron(a + a.T, k)
    assert np.linalg.eigvalsh(q).min() > 0
    cov = np.linalg.inv(q)
    big = np.concatenate([edges + n * c for c in range(copies)], 1)
    y, report = tg.gibbs_sample(big, np.tile(weight, copies), lam, k, n * copies, sweeps=30,
                                burn_in=10, seed=1)  # fmt: skip
    flat = y[:, 0].reshape(copies, n * g)
    emp = flat.T @ flat / copies
    se = np.sqrt((np.outer(cov.diagonal(), cov.diagonal()) + cov**2) / copies)
    assert np.abs((emp - cov) / se).max() < 4.5  # 136 entries: the null max |z| is ~3
    assert report.n_colours >= 2


def test_gibbs_tissue_truth_is_in_celcomens_sign_convention():
    tissue = tg.simulate(300, 6, seed=3)
    lam_off = -2.0 * tissue.W_intra  # off-diagonal of Lambda
    assert np.allclose(np.diag(tissue.W_intra), 0.0)
    assert np.allclose(tissue.W_intra, tissue.W_intra.T)
    assert np.allclose(tissue.W_inter, tissue.W_inter.T)
    # a positive W_intra entry = a negative precision entry = positively correlated genes
    cov = np.linalg.inv(np.diag(np.full(6, 1 / 0.36)) + lam_off - np.diag(np.diag(lam_off)))
    i, j = np.unravel_index(np.argmax(tissue.W_intra), tissue.W_intra.shape)
    assert cov[i, j] > 0
    assert (tissue.counts >= 0).all() and (tissue.counts.sum(1) > 0).all()
    again = tg.simulate(300, 6, seed=3)
    assert np.array_equal(tissue.counts, again.counts)
