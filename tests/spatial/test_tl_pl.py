"""``spatial.tl`` / ``spatial.pl``: copy=, key_added=, show=/save=, gene subsets, layers."""

from __future__ import annotations

import inspect
import warnings

import anndata
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import torch  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from graphdata.errors import GraphDataError  # noqa: E402
from spatial import pl, plot, tl, tools  # noqa: E402
from spatial.celcomen import Celcomen  # noqa: E402
from spatial.simulate import hex_grid, simulate_tissue  # noqa: E402

GENES = ["IFITM3", "CD74", "KRT5", "COL1A1", "MKI67", "ACTB"]
FIT = {"epochs": 40, "progress": False, "seed": 0}


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # short fits: "not converged"
        yield


def _adata(n: int = 70, seed: int = 0) -> anndata.AnnData:
    rng = np.random.default_rng(seed)
    counts = rng.poisson(rng.gamma(2.0, 1.0, (n, len(GENES)))).astype(np.float32) + 1.0
    adata = anndata.AnnData(X=sp.csr_matrix(counts), obsm={"spatial": hex_grid(n).numpy()})
    adata.obs_names = [f"spot{i}" for i in range(n)]
    adata.var_names = GENES
    return adata


def test_copy_returns_a_fitted_copy_and_leaves_the_input_alone():
    adata = _adata()
    before = (set(adata.varp), set(adata.obsp), set(adata.uns), set(adata.var.columns))
    fitted = tl.celcomen(adata, copy=True, **FIT)
    assert isinstance(fitted, anndata.AnnData) and fitted is not adata
    assert (set(adata.varp), set(adata.obsp), set(adata.uns), set(adata.var.columns)) == before
    assert tl.celcomen(adata, **FIT) is None  # in place
    for key in ("celcomen_intra", "celcomen_inter"):
        np.testing.assert_array_equal(adata.varp[key], fitted.varp[key])  # same seed, same fit

    perturbed = tl.perturb(adata, {"CD74": 0.0}, ["spot30"], copy=True)
    assert "celcomen_delta" not in adata.layers
    assert tl.perturb(adata, {"CD74": 0.0}, ["spot30"]) is None
    np.testing.assert_array_equal(
        adata.layers["celcomen_delta"], perturbed.layers["celcomen_delta"]
    )


def test_key_added_keeps_two_fits_apart_and_perturb_reads_the_named_one():
    adata = _adata()
    tl.celcomen(adata, key_added="weak", weight_decay=50.0, **FIT)
    tl.celcomen(adata, key_added="free", weight_decay=1e-3, **FIT)
    weak, free = adata.varp["weak_inter"], adata.varp["free_inter"]
    assert np.abs(weak).max() < np.abs(free).max()  # the heavier ridge shrinks the couplings
    assert {"weak_h_intra", "free_h_intra"} <= set(adata.var.columns)
    tl.perturb(adata, {"KRT5": 0.0}, ["spot20", "spot21"], key_added="free")
    assert "free_delta" in adata.layers and "weak_delta" not in adata.layers
    assert "perturbation" in adata.uns["free"] and "perturbation" not in adata.uns["weak"]
    # the oracle: the same fit stored under the default key gives the same counterfactual
    alone = _adata()
    tl.celcomen(alone, weight_decay=1e-3, **FIT)
    tl.perturb(alone, {"KRT5": 0.0}, ["spot20", "spot21"])
    np.testing.assert_allclose(adata.layers["free_delta"], alone.layers["celcomen_delta"])
    np.testing.assert_array_equal(adata.obs["free_ring"], alone.obs["celcomen_ring"])


def test_a_gene_subset_is_stored_sparse_over_its_block_only():
    adata = _adata()
    mask = np.array([True, False, True, True, False, True])
    used = np.flatnonzero(mask)
    tl.celcomen(adata, mask_var=mask, **FIT)
    # oracle: the estimator on the four genes alone, the others' totals as size factors
    others = np.asarray(adata.X[:, ~mask].sum(1), dtype=np.float64).ravel()
    alone = Celcomen(**FIT).fit(adata[:, mask].copy(), mask_var=False, size_factors=others)
    np.testing.assert_array_equal(adata.obs["celcomen_size_factor"], others)
    for which, expected in (("intra", alone.W_intra_), ("inter", alone.W_inter_)):
        stored = adata.varp[f"celcomen_{which}"]
        assert sp.issparse(stored) and stored.shape == (6, 6) and stored.dtype == np.float32
        rows, cols = stored.nonzero()
        assert set(rows) <= set(used) and set(cols) <= set(used)  # nothing outside the block
        np.testing.assert_allclose(stored.toarray()[np.ix_(used, used)], expected, atol=1e-6)
    field = adata.var["celcomen_h_intra"].to_numpy()
    np.testing.assert_allclose(field[used], alone.h_intra_.numpy(), atol=1e-6)
    assert np.all(field[~mask] == 0)  # masked genes: 0, as scanpy's pca writes loadings
    assert list(adata.uns["celcomen"]["params"]["genes"]) == [GENES[i] for i in used]


def test_highly_variable_is_the_default_selection_and_all_genes_stay_dense():
    adata = _adata()
    adata.var["highly_variable"] = [True, True, False, True, False, False]
    tl.celcomen(adata, **FIT)
    assert list(adata.uns["celcomen"]["params"]["genes"]) == ["IFITM3", "CD74", "COL1A1"]
    tl.celcomen(adata, mask_var=False, **FIT)
    stored = adata.varp["celcomen_intra"]
    assert isinstance(stored, np.ndarray) and stored.shape == (6, 6)
    np.testing.assert_allclose(stored, stored.T, atol=1e-6)


def test_perturb_on_a_subset_runs_over_the_fitted_genes_only():
    adata = _adata()
    mask = np.array([True, True, False, True, False, True])
    used = np.flatnonzero(mask)
    tl.celcomen(adata, mask_var=mask, **FIT)
    # raw counts: the log-counts route, whose gene means the counterfactual needs back
    assert adata.uns["celcomen"]["params"]["transform"] == "log_counts"
    assert np.all(adata.var["celcomen_gene_offset"].to_numpy()[used] > 0)
    # the default (mean-field) counterfactual depends on the whole fitted energy, trace and
    # parts along the mean direction included: the stored energy must be the fitted one
    tl.perturb(adata, {"CD74": 0.0}, ["spot33", "spot34"])
    delta = adata.layers["celcomen_delta"]
    assert sp.issparse(delta) and delta.shape == (70, 6)
    assert set(delta.nonzero()[1]) <= set(used)
    # with size factors (the genes left out) nothing is projected: only the trace differs
    assert "celcomen_intra_energy" in adata.varp and "celcomen_inter_energy" not in adata.varp
    # oracle: the estimator's own counterfactual on the subset AnnData
    sub = adata[:, mask].copy()
    others = np.asarray(adata.X[:, ~mask].sum(1), dtype=np.float64).ravel()
    estimator = Celcomen(**FIT).fit(sub, mask_var=False, size_factors=others)
    expected = estimator.intervene(
        sub, {"CD74": 0.0}, ["spot33", "spot34"], progress=False, size_factors=others
    )
    np.testing.assert_allclose(delta.toarray()[:, used], expected.delta.numpy(), atol=1e-5)
    ring_mean = adata.uns["celcomen"]["perturbation"]["ring_mean"]
    assert ring_mean.shape == (4, 6) and np.all(ring_mean[:, ~mask] == 0)
    with pytest.raises(GraphDataError, match="'KRT5' is in adata.var_names but not among the 4"):
        tl.perturb(adata, {"KRT5": 0.0}, ["spot33"])


def test_perturb_uses_the_fitted_layer_and_refuses_another():
    adata = _adata()
    adata.layers["counts"] = adata.X.copy()
    adata.X = sp.csr_matrix(np.log1p(adata.X.toarray()))
    tl.celcomen(adata, layer="counts", **FIT)
    assert adata.uns["celcomen"]["params"]["layer"] == "counts"
    tl.perturb(adata, {"IFITM3": 0.0}, ["spot10"])  # layer=None: the fit's layer
    assert adata.uns["celcomen"]["perturbation"]["layer"] == "counts"
    by_name = adata.layers["celcomen_delta"].copy()
    tools.intervene(adata, {"IFITM3": 0.0}, ["spot10"], layer="counts")
    np.testing.assert_array_equal(adata.layers["celcomen_delta"], by_name)
    with pytest.raises(
        GraphDataError, match=r"layer: the fit used layers\['counts'\].*got adata.X"
    ):
        tools.intervene(adata, {"IFITM3": 0.0}, ["spot10"])  # the silent mismatch, now refused
    with pytest.raises(GraphDataError, match=r"pass layer='counts'"):
        tl.perturb(adata, {"IFITM3": 0.0}, ["spot10"], layer="other")


def test_signed_input_is_recorded_and_perturb_follows_it():
    adata = simulate_tissue(60, 4, steps=50, seed=1).to_anndata()
    with pytest.raises(GraphDataError, match="allow_negative=True"):
        tl.celcomen(adata, **FIT)
    tl.celcomen(adata, allow_negative=True, **FIT)
    assert adata.uns["celcomen"]["params"]["allow_negative"] is True
    tl.perturb(adata, {"gene_0": 0.0}, ["cell_5"], method="gradient", steps=5)
    record = adata.uns["celcomen"]["perturbation"]
    assert record["method"] == "gradient" and record["steps"] == 5 and record["step_size"] > 0


def test_perturb_before_a_fit_says_what_to_run():
    with pytest.raises(
        KeyError, match=r"varp\['mine_intra'\].*tl.celcomen\(adata, key_added='mine'"
    ):
        tl.perturb(_adata(), {"CD74": 0.0}, ["spot1"], key_added="mine")


@pytest.fixture(scope="module")
def perturbed() -> anndata.AnnData:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        adata = _adata()
        tl.celcomen(adata, mask_var=np.array([True, True, True, True, False, True]), **FIT)
        tl.perturb(adata, {"IFITM3": 0.0}, ["spot30", "spot31"])
    return adata


def test_plots_return_axes_only_when_not_shown(perturbed, monkeypatch):
    import matplotlib.pyplot as plt

    shown = []
    monkeypatch.setattr(plt, "show", lambda: shown.append(1))
    for draw in (pl.couplings, pl.perturbation, pl.rings):
        assert isinstance(draw(perturbed, show=False), Axes) and not shown
        assert draw(perturbed) is None and len(shown) == 1  # made here, not saved: shown
        shown.clear()
        ax = Figure().subplots()
        assert draw(perturbed, ax=ax) is ax and not shown  # the caller composes a figure
        assert draw(perturbed, ax=ax, show=True) is None and len(shown) == 1
        shown.clear()
    plt.close("all")


def test_save_writes_the_format_of_the_suffix_atomically(perturbed, tmp_path):
    png, pdf = tmp_path / "c.png", tmp_path / "figs" / "m.pdf"
    ax = pl.couplings(perturbed, "inter", save=png)
    assert isinstance(ax, Axes)  # saved, not shown: the Axes comes back
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pl.perturbation(perturbed, "CD74", save=str(pdf), show=False)
    assert pdf.read_bytes()[:5] == b"%PDF-"
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["c.png", "m.pdf"]
    with pytest.raises(GraphDataError, match="save: expected a file path"):
        pl.rings(perturbed, save=True, show=False)
    with pytest.raises(GraphDataError, match="show: expected True, False or None"):
        pl.rings(perturbed, show="yes")


def test_couplings_show_the_fitted_block_and_perturbation_the_strongest_responder(perturbed):
    ax = pl.couplings(perturbed, "intra", show=False)
    fitted = [g for g in GENES if g != "MKI67"]
    assert [t.get_text() for t in ax.get_xticklabels()] == fitted
    shown = ax.get_images()[0].get_array()
    block = perturbed.varp["celcomen_intra"].toarray()[np.ix_([0, 1, 2, 3, 5], [0, 1, 2, 3, 5])]
    np.testing.assert_allclose(shown.data, block)
    # the default gene: largest |mean delta| in ring 1 among the unclamped genes
    ring1 = np.abs(perturbed.uns["celcomen"]["perturbation"]["ring_mean"][1])
    ring1[0] = -1  # IFITM3 is clamped
    expected = GENES[int(np.argmax(ring1))]
    assert pl.perturbation(perturbed, show=False).get_title().startswith(f"Δ {expected} after")
    with pytest.raises(GraphDataError, match="'MKI67' was not among the 5 genes of the fit"):
        pl.perturbation(perturbed, "MKI67", show=False)
    with pytest.raises(GraphDataError, match="which: expected 'intra' or 'inter'"):
        pl.couplings(perturbed, "both", show=False)
    # checked where the key is made, so the plain plotting functions refuse it too
    for draw in (plot.interaction_heatmap, plot.recovery_scatter):
        with pytest.raises(GraphDataError, match="which: expected 'intra' or 'inter'"):
            draw(perturbed, "both")


@pytest.mark.parametrize("fn", [tl.celcomen, tl.perturb])
def test_tools_take_copy_and_key_added_by_keyword(fn):
    params = inspect.signature(fn).parameters
    for name in ("copy", "key_added", "device"):
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY, name
    assert params["copy"].default is False and params["key_added"].default == "celcomen"
    assert list(params)[0] == "adata"


@pytest.mark.parametrize("fn", [pl.couplings, pl.perturbation, pl.rings, pl.recovery])
def test_plots_take_ax_show_save_by_keyword(fn):
    params = inspect.signature(fn).parameters
    for name in ("ax", "show", "save", "key"):
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY, name
        if name != "key":
            assert params[name].default is None
    assert list(params)[0] == "adata"


def test_store_fit_places_a_tensor_fit_with_mask_var_and_refuses_foreign_genes():
    tissue = simulate_tissue(60, 5, steps=30, seed=4)
    mask = torch.tensor([True, False, True, True, False])
    estimator = Celcomen(**FIT).fit(tissue.x, tissue.edge_index, mask_var=mask)
    adata = tissue.to_anndata()
    tools.store_fit(adata, estimator)
    stored = adata.varp["celcomen_inter"]
    used = [0, 2, 3]
    assert sp.issparse(stored)
    np.testing.assert_allclose(
        stored.toarray()[np.ix_(used, used)], estimator.W_inter_.numpy(), atol=1e-6
    )
    assert list(adata.uns["celcomen"]["params"]["genes"]) == ["gene_0", "gene_2", "gene_3"]
    named = Celcomen(**FIT).fit(adata, allow_negative=True, mask_var=False)
    other = adata.copy()
    other.var_names = [f"g{i}" for i in range(5)]
    with pytest.raises(GraphDataError, match=r"estimator: 5 of its 5 genes are not in adata"):
        tools.store_fit(other, named)


@pytest.mark.parametrize("key", ["", "fit/one"])
def test_a_key_added_that_h5ad_cannot_hold_is_refused_before_the_fit(key, perturbed):
    # "" spread uns[""] over uns at the write (spatial_neighbors lost); "/" made HDF5 groups,
    # and the file no longer read back.
    adata = _adata()
    with pytest.raises(GraphDataError, match=rf"key_added: expected a non-empty name .*{key!r}"):
        tl.celcomen(adata, key_added=key, **FIT)
    assert not adata.varp and not adata.uns  # nothing fitted, nothing written
    with pytest.raises(GraphDataError, match="key_added: expected a non-empty name"):
        tl.perturb(perturbed, {"IFITM3": 0.0}, ["spot30"], key_added=key, copy=True)


def test_copy_of_a_backed_adata_is_made_in_memory(tmp_path):
    path = tmp_path / "in.h5ad"
    _adata().write_h5ad(path)
    backed = anndata.read_h5ad(path, backed="r")
    fitted = tl.celcomen(backed, copy=True, **FIT)
    assert fitted is not None and not fitted.isbacked and "celcomen_intra" in fitted.varp
    assert "celcomen_intra" not in backed.varp
    fitted.write_h5ad(path)
    backed = anndata.read_h5ad(path, backed="r")
    perturbed = tl.perturb(backed, {"IFITM3": 0.0}, ["spot30"], copy=True, progress=False)
    assert perturbed is not None and "celcomen_delta" in perturbed.layers
    assert "celcomen_delta" not in backed.layers


def test_saving_lets_go_of_the_figure_it_made(perturbed, tmp_path):
    import matplotlib.pyplot as plt

    plt.close("all")
    for i, draw in enumerate((pl.couplings, pl.perturbation, pl.rings)):
        ax = draw(perturbed, save=tmp_path / f"{i}.png")
        assert isinstance(ax, Axes) and (tmp_path / f"{i}.png").stat().st_size > 0
        ax = draw(perturbed, save=tmp_path / f"{i}.svg", show=False)
        assert isinstance(ax, Axes)
    assert plt.get_fignums() == []  # a loop of saves holds no open figures
    ax = pl.couplings(perturbed, show=False)  # nothing saved: the caller's figure stays
    assert plt.get_fignums() == [ax.figure.number]
    plt.close("all")
    with pytest.raises(GraphDataError, match=r"save: expected a file name ending in a figure"):
        pl.couplings(perturbed, save=tmp_path / "c.nope")
    assert plt.get_fignums() == [] and not list(tmp_path.glob("*nope*"))  # refused before drawing


def test_n_neighbors_with_an_existing_graph_warns_and_too_many_are_refused():
    adata = _adata()
    tl.celcomen(adata, **FIT)  # builds obsp['spatial_connectivities'] with k = 6
    with pytest.warns(UserWarning, match=r"n_neighbors=10 is not used: adata has the graph"):
        tl.celcomen(adata, n_neighbors=10, copy=True, **FIT)
    small = _adata(n=4)
    with pytest.raises(
        GraphDataError, match=r"n_neighbors: expected at most n_obs - 1 = 3 .*got 6"
    ):
        tl.celcomen(small, **FIT)
    with pytest.raises(GraphDataError, match="a fit needs at least 2 cells"):
        tl.celcomen(_adata(n=1), **FIT)


def test_perturb_default_is_the_mean_field_equilibrium_and_relaxation_options_need_gradient():
    # As perturb's docstring says: the default counterfactual is the clamped mean-field
    # equilibrium (no horizon), and the relaxation's options belong to method="gradient".
    adata = _adata()
    tl.celcomen(adata, **FIT)
    tl.perturb(adata, {"CD74": 0.0}, ["spot30"], progress=False)
    record = adata.uns["celcomen"]["perturbation"]
    assert record["method"] == "mean_field" and record["converged"]
    assert record["residual"] <= record["tolerance"] and record["step_size"] is None
    with pytest.raises(GraphDataError, match="steps"):
        tl.perturb(adata, {"CD74": 0.0}, ["spot30"], steps=5, progress=False)
    tl.perturb(adata, {"CD74": 0.0}, ["spot30"], method="gradient", steps=5, progress=False)
    record = adata.uns["celcomen"]["perturbation"]
    assert record["method"] == "gradient" and record["steps"] == 5 and record["step_size"] > 0


def test_recovery_scatter_title_reads_n_a_where_spearman_is_undefined():
    # Two genes have one off-diagonal coupling, and a constant side has no rank spread: the
    # title read "Spearman nan"; it reads n/a. Oracle where defined: scipy's rho of the pairs.
    from scipy.stats import spearmanr

    def title(truth, fitted):
        adata = anndata.AnnData(np.zeros((3, len(truth)), dtype=np.float32))
        adata.varp["true_intra"], adata.varp["celcomen_intra"] = truth, fitted
        return plot.recovery_scatter(adata, "intra").get_title()

    pair = np.array([[0.0, 0.3], [0.3, 0.0]])
    assert title(pair, 2 * pair) == "W_intra: Spearman n/a (off-diagonal)"
    truth = np.array([[0.0, 0.1, 0.2], [0.1, 0.0, 0.3], [0.2, 0.3, 0.0]])
    assert title(truth, np.ones((3, 3))) == "W_intra: Spearman n/a (off-diagonal)"
    fitted = np.array([[0.0, 0.2, 0.1], [0.2, 0.0, 0.3], [0.1, 0.3, 0.0]])
    rho = spearmanr([0.1, 0.2, 0.3], [0.2, 0.1, 0.3]).statistic
    assert title(truth, fitted) == f"W_intra: Spearman {rho:.2f} (off-diagonal)"
