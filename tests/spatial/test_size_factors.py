"""Size factors on the raw-counts route: library sizes subtracted instead of projected (issue 19).

Oracles: the Poisson sensitivity against finite differences of exact Poisson expectations, the
other genes' totals against brute-force sums in every storage, the invariance the route is built
for (given library sizes do not move the couplings), and the stored fit's counterfactual against
the estimator's own.
"""

from __future__ import annotations

import warnings

import anndata as ad
import numpy as np
import pytest
import scipy.sparse as sp
import torch
from scipy.stats import poisson

from graphdata.errors import GraphDataError
from graphdata.spatial import knn_graph
from spatial import _inputs, tl
from spatial.celcomen import Celcomen


def _exact_log1p_mean(mu: float) -> float:
    """E log(1 + c) for c ~ Poisson(mu), summed over the pmf."""
    c = np.arange(0, int(mu + 40 * np.sqrt(mu + 1) + 40))
    return float((poisson.pmf(c, mu) * np.log1p(c)).sum())


@pytest.mark.parametrize("mu", [0.2, 1.5, 30.0])
def test_sensitivity_estimates_the_derivative_of_the_mean_log_count(mu):
    # kappa = mean c log(1 + 1/c) is unbiased for d E log(1 + c) / d log s at s = 1
    h = 1e-4
    exact = (_exact_log1p_mean(mu * np.exp(h)) - _exact_log1p_mean(mu * np.exp(-h))) / (2 * h)
    rng = np.random.default_rng(0)
    counts = torch.from_numpy(rng.poisson(mu, size=(200_000, 1)).astype(np.float64))
    kappa = _inputs.library_size_sensitivity(counts)
    c = counts.numpy().ravel()
    terms = c * np.log1p(1.0 / np.maximum(c, 1.0))
    stderr = terms.std() / np.sqrt(c.size)
    assert abs(float(kappa[0]) - exact) < 4 * stderr
    two = torch.cat([counts, 2 * counts], 1)
    both = _inputs.library_size_sensitivity(two)
    torch.testing.assert_close(_inputs.library_size_direction(two), both / both.norm())


def _counts_adata(n: int = 300, g: int = 4, others: int = 30, seed: int = 0, sizes=None):
    """Raw counts of g coupled genes (a shared spatial factor) plus ``others`` background genes."""
    rng = np.random.default_rng(seed)
    coords = rng.random((n, 2)) * np.sqrt(n)
    edge_index, _ = knn_graph(torch.from_numpy(coords), 6)
    field = rng.standard_normal((n, g)) * 0.4
    neighbour = np.zeros((n, g))
    np.add.at(neighbour, edge_index[1].numpy(), field[edge_index[0].numpy()])
    eta = field + 0.1 * neighbour
    eta[:, 1] += 0.6 * eta[:, 0]
    eta[:, 3] -= 0.5 * eta[:, 2]
    if sizes is None:
        sizes = np.exp(rng.normal(0, 0.5, n))
    rate = np.outer(sizes, np.ones(g)) * 3000.0 * np.exp(eta)
    background = np.outer(sizes, rng.uniform(5, 50, others))
    x = np.hstack([rng.poisson(rate), rng.poisson(background)]).astype(np.float32)
    adata = ad.AnnData(X=sp.csr_matrix(x))
    adata.obs_names = [f"c{i}" for i in range(n)]
    adata.var_names = [f"g{i}" for i in range(g + others)]
    adata.var["highly_variable"] = np.arange(g + others) < g
    adata.obsm["spatial"] = coords
    return adata, sizes


@pytest.mark.parametrize("fmt", ["csr", "csc", "dense", "tensor"])
def test_other_genes_total_in_every_storage(fmt):
    adata, _ = _counts_adata(n=50, others=7)
    dense = adata.X.toarray().astype(np.float64)
    columns = np.array([0, 2, 3, 1])
    expected = dense.sum(1) - dense[:, columns].sum(1)
    if fmt == "tensor":
        data = torch.from_numpy(dense)
    else:
        data = adata.copy()
        data.X = {"csr": sp.csr_matrix, "csc": sp.csc_matrix, "dense": np.asarray}[fmt](dense)
    np.testing.assert_allclose(_inputs.other_genes_total(data, None, columns), expected)
    assert _inputs.other_genes_total(data, None, np.arange(dense.shape[1])) is None


def test_remove_library_size_by_hand():
    y = torch.tensor([[1.0, 2.0], [3.0, -1.0], [0.0, 0.0]], dtype=torch.float64)
    log_size = torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64)
    kappa = torch.tensor([1.0, 0.5], dtype=torch.float64)
    out, center = _inputs.remove_library_size(y.clone(), log_size, kappa)
    assert center == 1.0
    expected = y - torch.tensor([[-1.0], [0.0], [1.0]], dtype=torch.float64) * kappa
    torch.testing.assert_close(out, expected)
    again, same = _inputs.remove_library_size(y.clone(), log_size, kappa, center=0.5)
    assert same == 0.5
    torch.testing.assert_close(again, y - (log_size - 0.5)[:, None] * kappa)


def test_given_library_sizes_do_not_move_the_couplings():
    # the same latent field at library sizes spread e^(+-1) and at one library size: with the
    # sizes given the couplings agree to the counting noise; reported whole, not projected
    fits = []
    for spread in (True, False):
        rng = np.random.default_rng(7)
        sizes = np.exp(rng.normal(0, 0.5, 300)) if spread else np.ones(300)
        adata, _ = _counts_adata(sizes=sizes)
        est = Celcomen(progress=False, seed=0).fit(adata, size_factors=sizes)
        assert est.mean_direction_ is None and est.size_factor_source_ == "size_factors"
        fits.append(est)
    for which in ("W_intra_", "W_inter_"):
        a, b = getattr(fits[0], which), getattr(fits[1], which)
        assert float((a - b).norm() / b.norm()) < 0.05
    # without the sizes the spread library sizes are a direction of their own: projected out
    adata, sizes = _counts_adata(sizes=np.exp(np.random.default_rng(7).normal(0, 0.5, 300)))
    plain = Celcomen(progress=False, seed=0).fit(adata, size_factors=False)
    assert plain.mean_direction_ is not None and plain.size_factors_ is None
    u = plain.mean_direction_
    assert float((plain.W_intra_ @ u).abs().max()) < 1e-4 * float(plain.W_intra_.abs().max())


def test_the_default_takes_the_genes_left_out_and_an_obs_column_the_same():
    adata, sizes = _counts_adata()
    auto = Celcomen(progress=False, seed=0).fit(adata)
    others = np.asarray(adata.X[:, 4:].sum(1), dtype=np.float64).ravel()
    assert auto.size_factor_source_ == "total counts of the 30 genes not fitted"
    np.testing.assert_array_equal(auto.size_factors_.numpy(), others)
    adata.obs["library"] = others
    keyed = Celcomen(progress=False, seed=0).fit(adata, size_factors="library")
    assert keyed.size_factor_source_ == "obs['library']" and keyed.size_factor_key_ == "library"
    assert auto.size_factors_from_ == "other_genes" and keyed.size_factors_from_ == "obs"
    torch.testing.assert_close(keyed.W_inter_, auto.W_inter_)
    every = Celcomen(progress=False, seed=0).fit(adata, mask_var=False)  # nothing left out
    assert every.size_factors_ is None and every.mean_direction_ is not None


def test_a_cell_without_other_counts_falls_back_with_a_warning():
    adata, _ = _counts_adata()
    x = adata.X.toarray()
    x[5, 4:] = 0
    adata.X = sp.csr_matrix(x)
    with pytest.warns(UserWarning, match="1 cells have no count in the 30 genes outside the fit"):
        est = Celcomen(progress=False, seed=0).fit(adata)
    assert est.size_factors_ is None and est.mean_direction_ is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Celcomen(progress=False, seed=0).fit(adata, size_factors=False)


def test_bad_size_factors_are_refused_with_the_fix():
    adata, sizes = _counts_adata()
    fit = Celcomen(progress=False, seed=0)
    with pytest.raises(GraphDataError, match=r"size_factors: expected positive finite .* 1 cells"):
        fit.fit(adata, size_factors=np.where(np.arange(300) == 3, -1.0, sizes))
    with pytest.raises(GraphDataError, match=r"one size factor per cell, shape \(300,\)"):
        fit.fit(adata, size_factors=sizes[:10])
    adata.obs["bad"] = np.where(np.arange(300) == 0, np.nan, 1.0)
    with pytest.raises(GraphDataError, match=r"obs\['bad'\]: expected positive finite"):
        fit.fit(adata, size_factors="bad")
    with pytest.raises(KeyError, match=r"obs\['total_counts'\]: no such column"):
        fit.fit(adata, size_factors="total_counts")
    signed = adata.copy()
    signed.X = sp.csr_matrix(adata.X.toarray() / 7.3)  # not integers: the sphere route
    with pytest.raises(GraphDataError, match="size_factors: apply to raw counts"):
        fit.fit(signed, size_factors=sizes)


def test_counterfactuals_use_the_fits_size_factors():
    adata, sizes = _counts_adata()
    est = Celcomen(progress=False, seed=0).fit(adata, size_factors=sizes)
    with pytest.raises(GraphDataError, match="fitted with size factors given as an array"):
        est.intervene(adata, {"g1": 0.0}, ["c3"], progress=False)
    result = est.intervene(adata, {"g1": 0.0}, ["c3"], progress=False, size_factors=sizes)
    # the stored fit's counterfactual reads the sizes it stored: the same result
    tl.celcomen(adata, size_factors=sizes, progress=False, seed=0)
    np.testing.assert_array_equal(adata.obs["celcomen_size_factor"], sizes)
    tl.perturb(adata, {"g1": 0.0}, ["c3"])
    np.testing.assert_allclose(
        adata.layers["celcomen_delta"].toarray()[:, :4], result.delta.numpy(), atol=1e-5
    )
