"""Gene selection for Celcomen: scanpy's mask_var, sparse X read in blocks, size refusal, graphs.

Oracles: a fit on ``adata[:, mask].copy()`` (what a user would do by hand) and the unit rows
computed directly with numpy from the dense matrix; the memory formula written out.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from anndata import AnnData

from graphdata.errors import GraphDataError, UnknownLabelError
from spatial import _inputs
from spatial.celcomen import Celcomen
from spatial.simulate import simulate_tissue

FAST = {"epochs": 60, "progress": False}


@pytest.fixture(scope="module")
def counts() -> AnnData:
    """60 cells x 10 genes of Poisson counts; genes 1, 3, 4, 6, 8 flagged highly variable."""
    tissue = simulate_tissue(60, 10, steps=100, seed=2)
    rng = np.random.default_rng(0)
    x = tissue.x.numpy().astype(np.float64)
    c = rng.poisson(5.0 * (1.0 + x)).astype(np.float32)
    c[:, [1, 3, 4, 6, 8]] += 1.0  # no cell is all-zero on the selected genes
    adata = AnnData(X=sp.csr_matrix(c), obsm={"spatial": tissue.coords.numpy()})
    adata.obs_names = [f"c{i}" for i in range(60)]
    adata.var_names = [f"g{j}" for j in range(10)]
    hvg = np.zeros(10, dtype=bool)
    hvg[[1, 3, 4, 6, 8]] = True
    adata.var["highly_variable"] = hvg
    adata.var["odd"] = np.arange(10) % 2 == 1
    adata.var["score"] = np.arange(10.0)
    return adata


def _unit(c: np.ndarray) -> np.ndarray:
    return c / np.linalg.norm(c, axis=1, keepdims=True)


# --- mask_var semantics (scanpy's sc.pp.pca) ---------------------------------------------------


def test_default_uses_highly_variable_and_false_uses_every_gene(counts):
    cols, what = _inputs.resolve_mask_var(counts.var, 10, None)
    assert cols.tolist() == [1, 3, 4, 6, 8] and "var['highly_variable']" in what
    assert _inputs.resolve_mask_var(counts.var, 10, False)[0].tolist() == list(range(10))
    assert _inputs.resolve_mask_var(counts.var, 10, "odd")[0].tolist() == [1, 3, 5, 7, 9]
    mask = np.zeros(10, dtype=bool)
    mask[[0, 9]] = True
    assert _inputs.resolve_mask_var(counts.var, 10, mask)[0].tolist() == [0, 9]
    no_hvg = counts.var.drop(columns="highly_variable")
    assert _inputs.resolve_mask_var(no_hvg, 10, None)[0].tolist() == list(range(10))


@pytest.mark.parametrize(
    ("mask_var", "error", "match"),
    [
        ("missing", KeyError, r"var\['missing'\]: no such column .*\['highly_variable', 'odd'\]"),
        ("score", GraphDataError, r"mask_var: expected var\['score'\] to be boolean.*float64"),
        (True, GraphDataError, r"mask_var: .*got True; pass mask_var='highly_variable'"),
        (np.ones(9, dtype=bool), GraphDataError, r"mask_var: expected mask_var of shape \(10,\)"),
        (np.arange(10), GraphDataError, r"to be boolean .*np.isin"),
        (np.eye(10, dtype=bool)[0], GraphDataError, r"selects 1 genes; .* at least 2"),
    ],
    ids=["missing", "not-bool", "true", "length", "indices", "one-gene"],
)
def test_bad_masks_are_refused_with_the_fix(counts, mask_var, error, match):
    with pytest.raises(error, match=match):
        Celcomen(**FAST).fit(counts, mask_var=mask_var)


def test_fit_with_the_mask_equals_a_fit_on_the_subset(counts):
    est = Celcomen(**FAST).fit(counts)  # default: var['highly_variable']
    hv = counts.var["highly_variable"].to_numpy()
    # raw counts: the genes left out give the size factors (spatial.celcomen, "Size factors")
    others = np.asarray(counts.X[:, ~hv].sum(1), dtype=np.float64).ravel()
    hand = Celcomen(**FAST).fit(counts[:, hv].copy(), mask_var=False, size_factors=others)
    assert est.size_factor_source_ == "total counts of the 5 genes not fitted"
    torch.testing.assert_close(est.size_factors_, torch.as_tensor(others))
    assert est.var_names_ == ["g1", "g3", "g4", "g6", "g8"] == hand.var_names_
    assert est.genes_used_.tolist() == [1, 3, 4, 6, 8] and est.n_features_in_ == 10
    assert est.W_intra_.shape == (5, 5)
    torch.testing.assert_close(est.W_intra_, hand.W_intra_)
    torch.testing.assert_close(est.W_inter_, hand.W_inter_)
    every = Celcomen(**FAST).fit(counts, mask_var=False)
    assert every.var_names_ == list(counts.var_names) and every.W_inter_.shape == (10, 10)


def test_tensor_input_takes_a_boolean_mask(counts):
    x = torch.as_tensor(counts.X.toarray())
    graph = Celcomen(**FAST)._prepare(counts, None, None, "spatial", None)[1]
    mask = counts.var["highly_variable"].to_numpy()
    est = Celcomen(**FAST).fit(x, graph, mask_var=mask)
    others = x[:, torch.as_tensor(~mask)].sum(1)  # the size factors the mask leaves (raw counts)
    sub = Celcomen(**FAST).fit(x[:, torch.as_tensor(mask)], graph, size_factors=others)
    torch.testing.assert_close(est.W_inter_, sub.W_inter_)
    assert est.var_names_ is None and est.genes_used_.tolist() == [1, 3, 4, 6, 8]
    with pytest.raises(GraphDataError, match="mask_var: a var column name .* needs AnnData"):
        Celcomen(**FAST).fit(x, graph, mask_var="highly_variable")


# --- the data path: blocks of rows, selected genes only ----------------------------------------


@pytest.mark.parametrize("fmt", ["csr", "csc", "dense", "csr_array", "csc_array", "layer"])
def test_every_storage_reads_the_same_unit_rows_over_the_selected_genes(counts, fmt, monkeypatch):
    monkeypatch.setattr(_inputs, "_BLOCK_ENTRIES", 7 * 5)  # 7 rows per block: 9 blocks
    dense = counts.X.toarray()
    adata = counts.copy()
    layer = None
    if fmt == "layer":
        adata.layers["counts"], layer = sp.csr_matrix(dense), "counts"
        adata.X = np.zeros_like(dense)  # not read
    elif fmt == "dense":
        adata.X = dense
    elif fmt.endswith("_array"):
        adata.X = getattr(sp, fmt)(dense)
    else:
        adata.X = sp.csr_matrix(dense).asformat(fmt)
    x, *_, names, cols, _ = Celcomen(**FAST)._prepare(adata, None, None, "spatial", layer)
    # Oracle: the norm is over the selected genes only (the other five do not count).
    expected = _unit(dense[:, [1, 3, 4, 6, 8]].astype(np.float64))
    np.testing.assert_allclose(x.numpy(), expected, rtol=1e-6)
    assert x.dtype == torch.float32 and names == ["g1", "g3", "g4", "g6", "g8"]


@pytest.mark.parametrize(
    ("fmt", "blocks"), [("csr", [(10, 5)] * 6), ("csc", [(60, 1)] * 5)], ids=["csr", "csc"]
)
def test_sparse_x_is_densified_only_in_blocks_of_selected_genes(counts, monkeypatch, fmt, blocks):
    # 50 entries a block: 10 rows of the 5 selected genes (CSR), or 1 gene column of 60 cells
    # (CSC, whose columns are cheap to slice); never [60, 10], never a gene it does not use.
    monkeypatch.setattr(_inputs, "_BLOCK_ENTRIES", 10 * 5)
    adata = counts.copy()
    adata.X = adata.X.asformat(fmt)
    cls = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
    shapes: list[tuple[int, int]] = []
    original = cls.toarray

    def spy(self, *args, **kwargs):
        shapes.append(self.shape)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, "toarray", spy)
    x = _inputs.expression_from_adata(adata, None, columns=np.array([1, 3, 4, 6, 8]))
    assert shapes == blocks
    np.testing.assert_array_equal(x.numpy(), counts.X.toarray()[:, [1, 3, 4, 6, 8]])


def test_backed_anndata_is_read_in_blocks(counts, tmp_path):
    import anndata

    path = tmp_path / "slide.h5ad"
    counts.write_h5ad(path)
    backed = anndata.read_h5ad(path, backed="r")
    x = _inputs.expression_from_adata(backed, None, columns=np.array([1, 3, 4, 6, 8]))
    np.testing.assert_array_equal(x.numpy(), counts.X.toarray()[:, [1, 3, 4, 6, 8]])
    backed.file.close()


def test_cells_empty_on_the_selected_genes_are_refused_on_the_sphere_route_only(counts):
    adata = counts.copy()
    dense = adata.X.toarray()
    dense[7, [1, 3, 4, 6, 8]] = 0.0
    dense[7, 0] = 50.0  # expressed, but not in a selected gene
    adata.X = sp.csr_matrix(dense)
    # c / ||c|| has no direction for the empty cell: refused, with the fix
    match = r"1 cells have zero expression in all 5 selected genes \(first \[.c7.\]\).*after select"
    with pytest.raises(GraphDataError, match=match):
        Celcomen(**FAST, transform="sphere").fit(adata)
    Celcomen(**FAST, transform="sphere").fit(adata, mask_var=False)  # a direction over all genes
    # raw counts take the log-counts route by default, where an empty cell has coordinates
    # log(1 + 0) - m = -m (a low-depth bead): fitted, not refused, and finite
    est = Celcomen(**FAST).fit(adata)
    assert est.transform_ == "log_counts"
    assert all(torch.isfinite(w).all() for w in est.matrices())
    logs = np.log1p(dense[:, [1, 3, 4, 6, 8]])
    np.testing.assert_allclose(est.gene_offset_.numpy(), logs.mean(0), rtol=1e-5)
    # and its counterfactuals take the same data, the empty cell included
    result = est.intervene(adata, {"g3": 0.0}, ["c7"], progress=False)
    arrays = [np.asarray(v) for v in vars(result).values() if _numeric(v)]
    assert arrays and all(np.isfinite(a).all() for a in arrays)


def _numeric(value) -> bool:
    if isinstance(value, torch.Tensor):
        return value.is_floating_point()
    return isinstance(value, np.ndarray) and value.dtype.kind in "fc"


def test_negative_and_nan_values_are_found_blockwise(counts, monkeypatch):
    monkeypatch.setattr(_inputs, "_BLOCK_ENTRIES", 5)
    dense = counts.X.toarray()
    dense[42, 3] = -1.0
    adata = counts.copy()
    adata.X = sp.csr_matrix(dense)
    with pytest.raises(GraphDataError, match=r"1 negative values \(first rows \['c42'\]\)"):
        Celcomen(**FAST).fit(adata)
    dense[42, 3] = np.nan
    adata.X = sp.csr_matrix(dense)
    with pytest.raises(GraphDataError, match=r"got 1 NaN/inf values \(first rows \['c42'\]\)"):
        Celcomen(**FAST).fit(adata)


# --- refusal above a size, before allocating ---------------------------------------------------


def test_memory_formula():
    # 4 B x (10 N G + 56 G^2) + 512 MiB, written out for N = 2,000, G = 20,000.
    n, g = 2000, 20000
    assert _inputs.fit_memory_bytes(n, g) == 4 * (10 * n * g + 56 * g * g) + 2**29
    assert _inputs.fit_memory_bytes(n, g, itemsize=8) == 8 * (10 * n * g + 56 * g * g) + 2**29


def test_a_20000_gene_slide_is_refused_before_anything_large_is_allocated(monkeypatch):
    n, g = 2000, 20000
    rng = np.random.default_rng(0)
    rows = np.arange(n)
    X = sp.csr_matrix((np.ones(n, dtype=np.float32), (rows, rows * 7 % g)), shape=(n, g))
    adata = AnnData(X=X, obsm={"spatial": rng.random((n, 2))})

    def forbidden(*args, **kwargs):
        raise AssertionError("expression densified before the size check")

    monkeypatch.setattr(_inputs, "expression_from_adata", forbidden)
    monkeypatch.setattr(_inputs, "graph_from_adata", forbidden)
    need = _inputs.fit_memory_bytes(n, g) / 2**30
    tracemalloc.start()
    try:
        with pytest.raises(GraphDataError) as info:
            Celcomen(**FAST).fit(adata)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert "20,000 genes x 2,000 cells" in message and f"about {need:.1f} GiB" in message
    assert "(all genes: no var['highly_variable'])" in message
    assert "sc.pp.highly_variable_genes(adata, n_top_genes=2000)" in message
    assert "mask_var=" in message and "above max_genes=5,000" in message
    assert peak < 16 * 2**20  # a G x G float32 matrix alone would be 1.6 GB


def test_max_genes_and_max_memory(counts):
    with pytest.raises(GraphDataError, match=r"5 genes x 60 cells .* above max_genes=4;"):
        Celcomen(**FAST).fit(counts, max_genes=4)
    with pytest.raises(GraphDataError, match=r"above the memory budget 0.0 GiB \(max_memory\)"):
        Celcomen(**FAST).fit(counts, max_memory=1000)
    with pytest.raises(GraphDataError, match="max_genes: expected an int >= 2"):
        Celcomen(**FAST).fit(counts, max_genes=1)
    with pytest.raises(GraphDataError, match="max_memory: expected a finite number > 0"):
        Celcomen(**FAST).fit(counts, max_memory=float("nan"))
    est = Celcomen(**FAST).fit(counts, mask_var=False, max_genes=None)
    assert est.W_intra_.shape == (10, 10)


# --- counterfactuals read the fitted genes -----------------------------------------------------


def test_intervene_uses_the_fitted_genes(counts):
    est = Celcomen(**FAST).fit(counts)
    hv = counts.var["highly_variable"].to_numpy()
    hand_data = counts[:, hv].copy()
    others = np.asarray(counts.X[:, ~hv].sum(1), dtype=np.float64).ravel()
    hand = Celcomen(**FAST).fit(hand_data, mask_var=False, size_factors=others)
    result = est.intervene(counts, {"g3": 0.0}, ["c5"], progress=False)
    oracle = hand.intervene(hand_data, {"g3": 0.0}, ["c5"], progress=False, size_factors=others)
    assert result.delta.shape == (60, 5)
    torch.testing.assert_close(result.delta, oracle.delta)
    assert bool(result.clamped[5, 1]) and int(result.clamped.sum()) == 1  # g3 = column 1 of 5
    match = r"genes: 'g2' is in adata.var_names but not among the 5 genes the model was fitted on"
    with pytest.raises(GraphDataError, match=match + r" .*'highly_variable'\] = True"):
        est.intervene(counts, {"g2": 0.0}, ["c5"], progress=False)
    with pytest.raises(UnknownLabelError, match="g33"):
        est.intervene(counts, {"g33": 0.0}, ["c5"], progress=False)
    match = r"2 of the 5 genes the model was fitted on are not in adata.var_names \(first \['g1'"
    with pytest.raises(GraphDataError, match=match):
        est.intervene(counts[:, ["g0", "g3", "g4", "g6"]].copy(), {"g3": 0.0}, ["c5"])


# --- which graph is read -----------------------------------------------------------------------


def test_scanpys_expression_graph_is_not_used_silently(counts):
    adata = counts.copy()
    adata.obsp["connectivities"] = sp.csr_matrix(np.ones((60, 60), dtype=np.float32))
    match = r"obsp\['connectivities'\] is not used: .*expression space .*obsp\['spatial_conn"
    with pytest.warns(UserWarning, match=match + r"ectivities'\] is missing.*spatial_neighbors"):
        est = Celcomen(**FAST).fit(adata)
    plain = Celcomen(**FAST).fit(counts)  # the same k-NN graph of obsm['spatial'] is used
    torch.testing.assert_close(est.W_inter_, plain.W_inter_)
    del adata.obsm["spatial"]
    match = r"scanpy's expression k-NN graph .*adata.obsp\['spatial_connectivities'\] = adata"
    with pytest.raises(KeyError, match=match + r".obsp\['connectivities'\]"):
        Celcomen(**FAST).fit(adata)
