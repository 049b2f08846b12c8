r"""Validation and conversion of inputs at the public boundaries of :mod:`spatial`.

Expression from AnnData must be non-negative (counts or normalised counts: knock-out to 0 means
"off"); expression passed as a tensor may be signed (points on the sphere, e.g. a simulated
tissue). Both must be finite; on the sphere route (:math:`c / \lVert c \rVert`) they must have no
all-zero rows, which have no direction there, while raw counts on the log-counts route place an
empty cell at :math:`-m` (:func:`log_counts_coordinates`).

Gene selection follows scanpy's ``mask_var`` (``sc.pp.pca``): by default the genes of
``var['highly_variable']`` when that column exists, else all genes. Only the selected genes are
densified, a block of rows at a time, so a sparse ``X`` is never densified whole. A fit stores
several :math:`G \times G` matrices, so :func:`check_fit_size` refuses a gene count (or an
estimated memory, :func:`fit_memory_bytes`) above a stated limit before anything large is
allocated.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch
from anndata import AnnData
from torch import Tensor

from graphdata.checks import check_int, check_real, check_seed
from graphdata.errors import GraphDataError, UnknownLabelError
from graphdata.spatial import knn_graph
from graphdata.spatial_anndata import spatial_graph
from spatial import _keys

__all__ = [
    "check_int",
    "check_real",
    "check_seed",
    "check_edge_weight",
    "MAX_GENES",
    "adata_matrix",
    "layer_name",
    "expression_from_adata",
    "resolve_mask_var",
    "fit_memory_bytes",
    "check_fit_size",
    "warn_expression_graph",
    "check_expression",
    "check_zero_rows",
    "check_constant_genes",
    "unit_rows",
    "log_counts_coordinates",
    "check_nonzero_rows",
    "library_size_direction",
    "library_size_sensitivity",
    "other_genes_total",
    "check_size_factors",
    "remove_library_size",
    "is_raw_counts",
    "check_edge_index",
    "check_graph",
    "graph_from_adata",
    "require_coordinates",
    "resolve_genes",
    "resolve_cells",
]


def check_edge_weight(edge_weight: Tensor, num_edges: int, argument: str = "edge_weight") -> None:
    """Raise unless ``edge_weight`` is a finite, non-negative ``[E]`` tensor.

    A negative weight flips the sign of the intercellular couplings a fit attributes to that
    edge (the messages enter the energy linearly), and one NaN makes every weight NaN after
    the degree normalisation.
    """
    if not isinstance(edge_weight, Tensor) or tuple(edge_weight.shape) != (num_edges,):
        shape = tuple(edge_weight.shape) if isinstance(edge_weight, Tensor) else type(edge_weight)
        raise GraphDataError(
            f"{argument}: expected a tensor [E] = [{num_edges}] (one weight per edge), got {shape}"
        )
    if not torch.is_floating_point(edge_weight):
        edge_weight = edge_weight.double()
    bad = ~torch.isfinite(edge_weight) | (edge_weight < 0)
    if bool(bad.any()):
        first = torch.nonzero(bad).flatten()[:5].tolist()
        raise GraphDataError(
            f"{argument}: expected finite non-negative edge weights, got {int(bad.sum())} NaN, "
            f"inf or negative values (first edges {first}, e.g. "
            f"{float(edge_weight[first[0]])}); negative weights flip the sign of W_inter: use "
            "similarities (e.g. exp(-distance)), not distances or signed values"
        )


#: Largest gene count a fit accepts by default (``max_genes``): a fit holds about
#: :data:`_MATRIX_COPIES` float32-sized ``G x G`` matrices (1.6 GB each at 20,000 genes) and an
#: epoch costs :math:`O(N G^2)` (2,000 cells x 5,000 genes: about 100 minutes on one CPU core).
MAX_GENES = 5000

# Peak memory of a fit (fit_memory_bytes), in float32 entries, an upper envelope of the peak RSS
# increase of Celcomen.fit on sparse AnnData measured at 9 sizes from 60,000 x 100 to 500 x 4,000
# for the default "cg" and the "adam" solvers, at two states of the solver code
# (benchmarks/bench_celcomen_genes.py --calibrate; least squares: cg 5.8-12.7 N G + 48-50 G^2
# + 86-125 MB, adam 4.4-12.0 N G + 8-11 G^2 + 183-433 MB; measured / estimate <= 0.95).
# ``_ROW_COPIES`` [N, G]: the unit rows, the neighbour sums of spatial.objectives.Neighbourhood,
# the intermediates of a pass and its backward. ``_MATRIX_COPIES`` [G, G]: parameters, their
# gradients, the symmetrised matrices, and the float64 vectors of the conjugate-gradient solver
# (each of the 2 G^2 coordinates counts twice in float64).
_ROW_COPIES = 10
_MATRIX_COPIES = 56
_OVERHEAD = 2**29  # bytes: allocator and lazy library start-up, measured 86-433 MB

# Rows densified at once: a block of at most 2**23 entries (64 MiB in float64).
_BLOCK_ENTRIES = 2**23


def layer_name(layer: str | None) -> str:
    """How messages name the expression of ``layer``: ``adata.X`` or ``adata.layers['name']``."""
    return "adata.X" if layer is None else f"adata.layers[{layer!r}]"


def adata_matrix(adata: AnnData, layer: str | None) -> Any:
    """``adata.X`` or ``adata.layers[layer]``, as stored (dense, sparse, backed or dask).

    Raises:
        KeyError: If ``layer`` is missing.
        GraphDataError: If the matrix is None.
    """
    if layer is None:
        matrix = adata.X
    else:
        if layer not in adata.layers:
            raise KeyError(
                f"layers[{layer!r}]: no such layer (available: {sorted(adata.layers.keys())}); "
                "pass layer=None to use adata.X"
            )
        matrix = adata.layers[layer]
    if matrix is None:
        raise GraphDataError(f"{layer_name(layer)}: expected an expression matrix, got None")
    return matrix


def expression_from_adata(
    adata: AnnData,
    layer: str | None,
    *,
    allow_negative: bool = False,
    columns: np.ndarray | None = None,
    zero_rows: bool = True,
) -> Tensor:
    r"""Dense float32 expression ``[n_obs, len(columns)]`` of the selected genes of ``adata``.

    Reads ``adata.X`` or ``adata.layers[layer]`` (dense, CSR, CSC or other scipy sparse
    formats, backed, dask) into one preallocated float32 array, a block of at most
    ``2**23`` entries at a time: blocks of rows (blocks of the selected columns for CSC, the
    cheap direction of that format), so only the selected genes are ever densified, never the
    whole matrix. The result is checked (:func:`check_expression`) for NaN/inf, negative values
    unless ``allow_negative`` (signed sphere coordinates, as
    :meth:`spatial.simulate.SimulatedTissue.to_anndata` writes them), and, with ``zero_rows``,
    cells whose selected genes are all zero (they have no direction on the sphere :math:`c /
    \lVert c \rVert`; the log-counts route places them, :func:`log_counts_coordinates`).

    Args:
        adata: The AnnData.
        layer: Layer holding expression; None uses ``adata.X``.
        allow_negative: Accept negative values. Default False.
        columns: Sorted or unsorted int64 gene positions to read (see :func:`resolve_mask_var`);
            None (default) reads every gene.
        zero_rows: Refuse cells whose selected genes are all zero (:func:`check_zero_rows`).
            Default True.

    Returns:
        The float32 tensor on the CPU (``4 * n_obs * len(columns)`` bytes).

    Raises:
        KeyError: If ``layer`` is missing.
        GraphDataError: On NaN/inf, negative values (unless allowed) or (with ``zero_rows``)
            all-zero cells.
    """
    matrix = adata_matrix(adata, layer)
    where = layer_name(layer)
    n_obs, n_vars = adata.n_obs, adata.n_vars
    if columns is not None and len(columns) == n_vars and np.array_equal(columns, range(n_vars)):
        columns = None  # every gene, in order: no column indexing
    n_used = n_vars if columns is None else len(columns)
    out = np.empty((n_obs, n_used), dtype=np.float32)  # [N, G_used]
    if sp.issparse(matrix) and matrix.format == "csc":
        # Column blocks: slicing columns is cheap in CSC, slicing rows costs a pass over nnz.
        used = np.arange(n_vars) if columns is None else columns
        step = max(1, _BLOCK_ENTRIES // max(n_obs, 1))
        for start in range(0, n_used, step):
            out[:, start : start + step] = matrix[:, used[start : start + step]].toarray()
    else:
        if sp.issparse(matrix) and matrix.format != "csr":
            matrix = matrix.tocsr()  # COO/DOK/LIL/BSR cannot slice rows
        step = max(1, _BLOCK_ENTRIES // max(n_used, 1))
        for start in range(0, n_obs, step):
            block = matrix[start : start + step]  # [rows, n_vars], sparse or dense
            if columns is not None:
                block = block[:, columns]
            if hasattr(block, "compute"):  # dask
                block = block.compute()
            out[start : start + step] = block.toarray() if sp.issparse(block) else block
    x = torch.from_numpy(out)
    names = list(map(str, adata.obs_names))
    check_expression(
        x,
        where,
        names=names,
        non_negative=not allow_negative,
        n_selected=n_used,
        zero_rows=zero_rows,
    )
    return x


def resolve_mask_var(
    var: Any, n_vars: int, mask_var: Any, *, where: str = "adata.var"
) -> tuple[np.ndarray, str]:
    """The genes a fit uses, as scanpy's ``mask_var`` (``sc.pp.pca``) selects them.

    Args:
        var: ``adata.var`` (a DataFrame), or None for a tensor (only arrays and False apply).
        n_vars: The number of genes (columns) of the data.
        mask_var: None (default): the boolean column ``var['highly_variable']`` when it exists
            (as after ``sc.pp.highly_variable_genes(adata)``), else every gene; a string: the
            name of a boolean ``var`` column; a boolean array ``[n_vars]``; False: every gene.
            (scanpy spells "every gene" ``mask_var=None`` and keeps the default private; here
            None is the default and False means every gene.)
        where: How the data is named in messages.

    Returns:
        ``(columns, description)``: sorted int64 positions of the selected genes (data order)
        and a phrase naming the selection for messages, e.g.
        ``"var['highly_variable']: 2,000 of 20,000 genes"``.

    Raises:
        KeyError: If the named column is missing.
        GraphDataError: If the mask is not boolean, has the wrong length, or selects < 2 genes.
    """
    columns_of_var = list(var.columns) if var is not None else []
    if mask_var is None:
        if "highly_variable" not in columns_of_var:
            return np.arange(n_vars, dtype=np.int64), "all genes: no var['highly_variable']"
        mask_var = "highly_variable"
    if mask_var is False:
        return np.arange(n_vars, dtype=np.int64), "all genes: mask_var=False"
    if isinstance(mask_var, str):
        if var is None:
            raise GraphDataError(
                f"mask_var: a var column name ({mask_var!r}) needs AnnData input; for a tensor "
                "pass a boolean array [n_genes] or False"
            )
        if mask_var not in columns_of_var:
            boolean = [c for c in columns_of_var if np.asarray(var[c]).dtype == bool]
            raise KeyError(
                f"var[{mask_var!r}]: no such column in {where} (boolean columns: {boolean}); "
                "run sc.pp.highly_variable_genes(adata, n_top_genes=2000) for "
                "var['highly_variable'], pass a boolean array, or mask_var=False for all genes"
            )
        values, description = var[mask_var], f"var[{mask_var!r}]"
    elif isinstance(mask_var, bool):
        raise GraphDataError(
            "mask_var: expected None, a var column name, a boolean array or False, got True; "
            "pass mask_var='highly_variable' to use var['highly_variable']"
        )
    else:
        values, description = mask_var, "mask_var"
    if isinstance(values, Tensor):
        values = values.detach().cpu().numpy()
    try:
        mask = np.asarray(values)
    except (TypeError, ValueError) as e:  # e.g. a pandas column with missing values
        raise GraphDataError(f"mask_var: {description} is not a boolean array ({e})") from e
    if mask.dtype != bool:
        raise GraphDataError(
            f"mask_var: expected {description} to be boolean (one True/False per gene), got "
            f"dtype {mask.dtype}; convert it, e.g. np.isin(np.arange(n_vars), indices) for "
            "positions or adata.var_names.isin(names) for names"
        )
    if mask.shape != (n_vars,):
        raise GraphDataError(
            f"mask_var: expected {description} of shape ({n_vars},) (one entry per gene), got "
            f"{mask.shape}"
        )
    columns = np.flatnonzero(mask).astype(np.int64)
    if columns.size < 2:
        raise GraphDataError(
            f"mask_var: {description} selects {columns.size} genes; the model needs at least 2 "
            "(re-run sc.pp.highly_variable_genes with a larger n_top_genes, or mask_var=False)"
        )
    return columns, f"{description}: {columns.size:,} of {n_vars:,} genes"


def fit_memory_bytes(n_cells: int, n_genes: int, itemsize: int = 4) -> int:
    r"""Estimated peak memory of :meth:`spatial.celcomen.Celcomen.fit`, in bytes.

    .. math::
        \mathrm{bytes} \approx s\,\big(10\,N G + 56\,G^2\big) + 2^{29},

    for :math:`N` cells, :math:`G` genes and :math:`s` bytes per entry (4 for float32): the
    ``[N, G]`` rows, neighbour sums and pass intermediates, the ``[G, G]`` parameters, gradients
    and solver vectors (float64 in the default conjugate-gradient solver), and 512 MiB of
    start-up. The coefficients are an upper envelope of peak RSS increases measured from
    60,000 x 100 to 500 x 4,000 (``benchmarks/bench_celcomen_genes.py --calibrate``).

    Args:
        n_cells: :math:`N`.
        n_genes: :math:`G`, the genes used.
        itemsize: Bytes per entry (4 for float32, 8 for float64).

    Returns:
        The estimate in bytes.

    Examples:
        >>> round(fit_memory_bytes(2000, 20000) / 2**30, 1)  # the unmasked 20,000-gene slide
        85.4
        >>> round(fit_memory_bytes(2000, 2000) / 2**30, 2)  # its 2,000 highly variable genes
        1.48
    """
    entries = _ROW_COPIES * n_cells * n_genes + _MATRIX_COPIES * n_genes * n_genes
    return int(itemsize) * int(entries) + _OVERHEAD


def _device_memory(device: torch.device) -> int | None:
    """Total memory of ``device`` in bytes (physical RAM for the CPU), or None if unknown."""
    if device.type == "cuda":
        return int(torch.cuda.get_device_properties(device).total_memory)
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # not POSIX
        return None


def check_fit_size(
    n_cells: int,
    n_genes: int,
    *,
    selection: str,
    max_genes: int | None = MAX_GENES,
    max_memory: float | None = None,
    device: torch.device | str = "cpu",
    itemsize: int = 4,
) -> None:
    """Refuse a fit of more than ``max_genes`` genes or above a memory budget, before allocating.

    Args:
        n_cells: Cells of the fit.
        n_genes: Genes the fit would use.
        selection: How the genes were selected (for the message), see :func:`resolve_mask_var`.
        max_genes: Largest accepted gene count (default :data:`MAX_GENES`); None: no limit.
        max_memory: Budget in bytes for :func:`fit_memory_bytes`; None (default): the total
            memory of ``device`` (physical RAM on the CPU), past which the fit would die in the
            allocator.
        device: Where the fit runs.
        itemsize: Bytes per entry.

    Raises:
        GraphDataError: Naming the gene count, the memory the fit would need and the fix.
    """
    if max_genes is not None:
        check_int("max_genes", max_genes, 2)
    if max_memory is not None:
        check_real(
            "max_memory", max_memory, low=0.0, low_open=True, fix="pass a budget in bytes, e.g. 8e9"
        )
    need = fit_memory_bytes(n_cells, n_genes, itemsize)
    budget = max_memory if max_memory is not None else _device_memory(torch.device(device))
    over_genes = max_genes is not None and n_genes > max_genes
    over_memory = budget is not None and need > budget
    if not (over_genes or over_memory):
        return
    if over_genes or budget is None:
        limit = f"above max_genes={max_genes:,}"
    else:
        whose = "max_memory" if max_memory is not None else f"{torch.device(device).type} total"
        limit = f"above the memory budget {budget / 2**30:.1f} GiB ({whose})"
    if over_memory and _ROW_COPIES * n_cells > _MATRIX_COPIES * n_genes:
        more = "; the cells dominate: fit fewer cells (e.g. one library or region at a time)"
    elif over_genes and not over_memory:
        more = "; max_genes=None lifts the gene limit"
    else:
        more = ""
    raise GraphDataError(
        f"mask_var: the fit would use {n_genes:,} genes x {n_cells:,} cells ({selection}), "
        f"{limit}; it needs about {need / 2**30:.1f} GiB ({itemsize} B x (10 N G + 56 G^2) "
        "+ 512 MiB). Select genes first: sc.pp.highly_variable_genes(adata, n_top_genes=2000) "
        "(fit then uses var['highly_variable']), or pass mask_var= a boolean var column or "
        "array" + more
    )


def check_expression(
    x: Tensor,
    where: str,
    *,
    names: Sequence[str] | None = None,
    non_negative: bool,
    n_selected: int | None = None,
    zero_rows: bool = True,
) -> None:
    """Raise on non-finite values, negative values (if required) and all-zero rows.

    The all-zero rows are refused only with ``zero_rows`` (:func:`check_zero_rows`).
    ``n_selected``: the number of selected genes when ``x`` holds a selection of the data's
    genes (the zero-row message then says how to drop the cells on those genes).
    """
    if x.ndim != 2 or x.shape[1] < 2:
        raise GraphDataError(
            f"{where}: expected expression [n_cells, n_genes] with n_genes >= 2, got shape "
            f"{tuple(x.shape)}"
        )
    if not torch.is_floating_point(x):
        raise GraphDataError(f"{where}: expected floating-point expression, got {x.dtype}")
    bad = ~torch.isfinite(x)
    if bool(bad.any()):
        rows = torch.nonzero(bad.any(1)).flatten()[:5].tolist()
        raise GraphDataError(
            f"{where}: expected finite expression, got {int(bad.sum())} NaN/inf values (first "
            f"rows {_name_rows(rows, names)}); impute or drop them before fitting"
        )
    if non_negative and bool((x < 0).any()):
        rows = torch.nonzero((x < 0).any(1)).flatten()[:5].tolist()
        raise GraphDataError(
            f"{where}: expected non-negative expression (counts or normalised counts), got "
            f"{int((x < 0).sum())} negative values (first rows {_name_rows(rows, names)}); pass "
            "an unscaled layer, e.g. log1p-normalised counts, not z-scores (or allow_negative=True "
            "for signed coordinates already on the sphere, e.g. a simulated tissue)"
        )
    if zero_rows:
        check_zero_rows(x, where, names=names, n_selected=n_selected)


def check_zero_rows(
    x: Tensor, where: str, *, names: Sequence[str] | None = None, n_selected: int | None = None
) -> None:
    r"""Refuse cells whose expression is zero in every gene of ``x``.

    Such a cell has no direction :math:`c / \lVert c \rVert` on the sphere (the ``"sphere"``
    route). ``n_selected`` as in :func:`check_expression`.
    """
    zero = (x != 0).sum(1) == 0  # [N]; no [N, G] float temporary
    if bool(zero.any()):
        rows = torch.nonzero(zero).flatten()[:5].tolist()
        genes = "every gene" if n_selected is None else f"all {n_selected:,} selected genes"
        raise GraphDataError(
            f"{where}: {int(zero.sum())} cells have zero expression in {genes} (first "
            f"{_name_rows(rows, names)}) and no direction on the unit sphere; drop them after "
            "selecting genes, e.g. adata = adata[:, adata.var['highly_variable']].copy() then "
            "sc.pp.filter_cells(adata, min_counts=1) (or keep = np.asarray(adata[:, "
            "mask].X.sum(1)).ravel() > 0; adata = adata[keep].copy())"
        )


def check_constant_genes(
    x: Tensor, where: str, *, names: Sequence[str] | None = None, centred: bool = False
) -> None:
    r"""Refuse genes that carry no variation into the fit: columns of ``x`` that never change.

    On the sphere (``centred=False``, ``x`` already projected) a gene that is zero in every cell
    is a coordinate that never moves; on the log-counts route (``centred=True``, ``x`` the raw
    counts) a gene with the same count in every cell becomes zero once its mean is removed.
    Score matching then rewards a self-coupling without bound: the fit returns
    :math:`W_{gg} \approx -N` (only the ridge stops it), finite but meaningless, and on the
    log-counts route the projection off the library-size direction spreads it to every other
    gene.
    """
    fixed = (x == 0).all(0) if not centred else (x == x[:1]).all(0)  # [G]
    if bool(fixed.any()):
        cols = torch.nonzero(fixed).flatten().tolist()
        shown = [names[c] for c in cols[:5]] if names is not None else cols[:5]
        what = "zero in every cell" if not centred else "with the same count in every cell"
        raise GraphDataError(
            f"{where}: expected genes that vary across cells, got {len(cols)} gene(s) {what} "
            f"(first {shown}); their self-couplings would grow without bound. Drop them first, "
            "e.g. sc.pp.filter_genes(adata, min_cells=1) for all-zero genes, or leave them out "
            "with mask_var (e.g. the highly variable genes)"
        )


def _name_rows(rows: list[int], names: Sequence[str] | None) -> str:
    return str([names[r] for r in rows] if names is not None else rows)


def unit_rows(x: Tensor, *, inplace: bool = False) -> Tensor:
    r"""Project rows onto the unit sphere, :math:`x_i / \lVert x_i \rVert_2` (rows are non-zero).

    The norm of a row whose squares overflow (values past ~1e19 in float32) or underflow
    (below ~1e-23) would be inf or 0, turning the row into zeros or NaN; then the rows are first
    divided by their largest absolute value, which changes no direction. ``inplace`` divides
    ``x`` itself (for an array the caller owns).

    Examples:
        >>> unit_rows(torch.tensor([[3e30, 4e30], [0.0, 2.0]]))
        tensor([[0.6000, 0.8000],
                [0.0000, 1.0000]])
    """
    norm = x.norm(dim=-1, keepdim=True)  # [N, 1]
    if not bool(((norm > 0) & torch.isfinite(norm)).all()):
        scale = x.abs().amax(dim=-1, keepdim=True)  # [N, 1]
        scale = torch.where(scale > 0, scale, torch.ones_like(scale))
        x = x.div_(scale) if inplace else x / scale
        norm = x.norm(dim=-1, keepdim=True)
    return x.div_(norm) if inplace else x / norm


def log_counts_coordinates(counts: Tensor, means: Tensor | None = None) -> tuple[Tensor, Tensor]:
    r"""Gene-centred log counts, the coordinates of the ``transform="log_counts"`` route.

    .. math::
        y_{ig} = \log(1 + c_{ig}) - m_g, \qquad m_g = \frac1N \sum_j \log(1 + c_{jg}),

    for raw counts :math:`c` (cells :math:`i`, genes :math:`g`). Under a log link,
    :math:`\log \mu_{ig} = \log \ell_i + a_g + \eta_{ig}` (library size :math:`\ell_i`, gene
    baseline :math:`a_g`), centring removes the baselines, and the library sizes move every cell
    along one direction, :math:`\mathbf 1` for well-expressed genes
    (:func:`library_size_direction` in general), which the fit reports as unidentified
    (couplings reported as :math:`P W P`, :math:`P = I - u u^\top`, :mod:`spatial.celcomen`).
    The rows are then put on the sphere, :math:`x_i = y_i / \lVert y_i \rVert`, so the fitted
    couplings act on directions of centred log expression, in the original genes (no per-gene
    rescaling).

    Args:
        counts: Non-negative expression ``[N, G]`` (raw counts), floating point.
        means: Gene means :math:`m` ``[G]`` to subtract instead of those of ``counts`` (a
            fitted model's ``gene_offset_``, for its counterfactuals); None (default): computed.

    Returns:
        ``(y, m)``: the centred log counts ``[N, G]`` (a new tensor) and the gene means
        ``m`` ``[G]``.

    Raises:
        GraphDataError: If a cell equals the gene means exactly (no direction on the sphere).

    Examples:
        >>> y, m = log_counts_coordinates(torch.tensor([[0.0, 3.0], [1.0, 0.0]]))
        >>> torch.allclose(y.sum(0), torch.zeros(2)), torch.allclose(m.exp(), torch.tensor([2 ** 0.5, 2.0]))
        (True, True)
    """  # noqa: E501
    y = torch.log1p(counts)
    m = y.mean(0) if means is None else means.to(y)  # [G]
    y -= m
    check_nonzero_rows(y)
    return y, m


def check_nonzero_rows(y: Tensor) -> None:
    """Refuse log-count coordinates with a zero row (no direction on the sphere).

    Raises:
        GraphDataError: Naming the first such cells.
    """
    flat = y.norm(dim=-1) == 0  # [N]
    if bool(flat.any()):
        rows = torch.nonzero(flat).flatten()[:5].tolist()
        raise GraphDataError(
            f"data: {int(flat.sum())} cells (first {rows}) have log counts equal to the gene "
            "means, so no direction on the sphere after centring; drop them, or use "
            "transform='sphere'"
        )


def library_size_sensitivity(counts: Tensor, *, block: int = 1 << 22) -> Tensor:
    r"""How much a cell's library size moves each gene's log count: :math:`\kappa` ``[G]``.

    .. math::
        \kappa_g = \frac1N \sum_i c_{ig} \log\Big(1 + \frac1{c_{ig}}\Big)
        \quad (\text{a zero count adds } 0),

    for raw counts :math:`c` (cells :math:`i`, genes :math:`g`). For
    :math:`c \sim \mathrm{Poisson}(s \mu)` the sensitivity of the log-counts coordinate to the
    library size :math:`s` is :math:`\partial\, \mathbb E \log(1 + c) / \partial \log s = \mu\,
    \mathbb E \log\frac{c + 2}{c + 1}` (:math:`\partial_\mu \mathbb E f(c) = \mathbb E[f(c + 1) -
    f(c)]`), which equals :math:`\mathbb E[c \log\frac{c + 1}{c}]` by the Poisson identity
    :math:`\mathbb E[\mu h(c)] = \mathbb E[c\, h(c - 1)]`; so :math:`\kappa_g` estimates the
    cells' mean sensitivity without bias. Well-expressed genes have :math:`\kappa_g \to 1`
    (:math:`\log(1 + c) \approx \log s + \log \mu`: a library size shifts every such gene
    alike); a gene of mean :math:`\mu \ll 1` has :math:`\kappa_g \approx \mu \log 2`, since there
    a library size scales :math:`\log(1 + c)` instead of shifting it. Reads a block of about
    ``block`` entries at a time.

    Args:
        counts: Non-negative raw counts ``[N, G]``, floating point.
        block: Entries per block of rows (default :math:`2^{22}`).

    Returns:
        :math:`\kappa` ``[G]`` (dtype and device of ``counts``).

    Examples:
        >>> kappa = library_size_sensitivity(torch.tensor([[1.0, 1000.0], [0.0, 2000.0]]))
        >>> [round(float(k), 4) for k in kappa]  # (log 2 / 2, about 1)
        [0.3466, 0.9996]
    """
    rows = max(1, block // max(1, counts.shape[-1]))
    kappa = torch.zeros(counts.shape[-1], dtype=counts.dtype, device=counts.device)
    for start in range(0, counts.shape[0], rows):
        c = counts[start : start + rows]
        # c log(1 + 1/c) with 0 at c = 0 (its limit); clamp keeps 1/c finite there
        kappa += (c * torch.log1p(c.clamp(min=1.0).reciprocal())).sum(0)
    return kappa / max(1, counts.shape[0])


def library_size_direction(counts: Tensor, *, block: int = 1 << 22) -> Tensor:
    r"""The unit direction in which a cell's library size moves its log counts, ``[G]``.

    :math:`u = \kappa / \lVert \kappa \rVert` with :math:`\kappa` the sensitivity of
    :func:`library_size_sensitivity`: :math:`\mathbf 1 / \sqrt G` when every gene is well
    expressed, leaning away from genes of mean count below about 1. Without size factors the
    log-counts route reports its couplings orthogonal to :math:`u` (:mod:`spatial.celcomen`).

    Args:
        counts: Non-negative raw counts ``[N, G]``, floating point, no all-zero column set.
        block: Entries per block of rows (default :math:`2^{22}`).

    Returns:
        The unit vector :math:`u` ``[G]`` (dtype and device of ``counts``).

    Examples:
        >>> u = library_size_direction(torch.tensor([[1.0, 1000.0], [0.0, 2000.0]]))
        >>> round(float(u[0] / u[1]), 4)  # (log 2 / 2) / (about 1)
        0.3467
    """
    kappa = library_size_sensitivity(counts, block=block)
    return kappa / kappa.norm()


def other_genes_total(
    data: AnnData | Tensor, layer: str | None, columns: np.ndarray
) -> np.ndarray | None:
    r"""Each cell's total count over the genes *not* in ``columns``: float64 ``[N]``, or None.

    The size factor the log-counts route takes by default when a fit uses some of the data's
    genes (``mask_var``, e.g. the highly variable ones of a whole transcriptome): the other
    genes measure each cell's library size without the fitted genes' own couplings in it
    (:mod:`spatial.celcomen`). Sparse matrices are summed as they are, dense and backed ones a
    block of rows at a time.

    Args:
        data: AnnData (``X`` or ``layers[layer]``) or a tensor ``[N, n_vars]``.
        layer: AnnData layer; None uses ``X`` (ignored for a tensor).
        columns: Positions of the fitted genes.

    Returns:
        The totals ``[N]`` (all genes minus the fitted ones), or None when ``columns`` holds
        every gene.
    """
    n_vars = data.n_vars if isinstance(data, AnnData) else int(data.shape[1])
    if len(np.unique(columns)) == n_vars:
        return None
    if isinstance(data, Tensor):  # on the data's device, no float64 copy of the whole matrix
        fitted = data.detach()[:, torch.as_tensor(columns, device=data.device)]
        rest = data.detach().sum(1, dtype=torch.float64) - fitted.sum(1, dtype=torch.float64)
        return rest.cpu().numpy()
    matrix = adata_matrix(data, layer)
    keep = np.ones(n_vars, dtype=np.float64)  # 1 on the genes not fitted
    keep[columns] = 0.0
    if sp.issparse(matrix):
        return np.asarray(matrix @ keep, dtype=np.float64).ravel()
    rows = np.zeros(data.n_obs, dtype=np.float64)
    step = max(1, _BLOCK_ENTRIES // max(n_vars, 1))
    for start in range(0, data.n_obs, step):
        block = matrix[start : start + step]
        if hasattr(block, "compute"):  # dask
            block = block.compute()
        rows[start : start + step] = np.asarray(block, dtype=np.float64) @ keep
    return rows


def check_size_factors(values: Any, n_cells: int, where: str = "size_factors") -> Tensor:
    """Per-cell size factors as a float64 tensor ``[N]``, checked positive and finite.

    Raises:
        GraphDataError: For a shape other than ``[n_cells]``, or a value that is not a positive
            finite number (the message names the first cells).
    """
    try:
        array = np.asarray(
            values.detach().cpu() if isinstance(values, Tensor) else values, dtype=np.float64
        )
    except (TypeError, ValueError) as e:
        raise GraphDataError(f"{where}: expected numbers, one per cell ({e})") from e
    if array.shape != (n_cells,):
        raise GraphDataError(
            f"{where}: expected one size factor per cell, shape ({n_cells},), got shape "
            f"{array.shape}; pass a vector over adata.obs (e.g. obs['total_counts'])"
        )
    bad = ~(np.isfinite(array) & (array > 0))
    if bad.any():
        first = np.flatnonzero(bad)[:5].tolist()
        raise GraphDataError(
            f"{where}: expected positive finite size factors, got {int(bad.sum())} cells with "
            f"another value (first {first}: {array[first].tolist()}); drop those cells, or pass "
            "size_factors=False to fit without size factors"
        )
    return torch.from_numpy(array)


def remove_library_size(
    y: Tensor, log_size: Tensor, kappa: Tensor, center: float | None = None
) -> tuple[Tensor, float]:
    r"""Log counts with the library size taken out: :math:`y_i - (\log s_i - \bar\ell)\,\kappa`.

    A library size :math:`s_i` moves cell :math:`i`'s centred log counts by about
    :math:`(\log s_i - \bar\ell)\, \kappa` (:func:`library_size_sensitivity`), so with known
    size factors that move is subtracted rather than reported as unidentified.

    Args:
        y: Centred log counts ``[N, G]`` (:func:`log_counts_coordinates`), changed in place.
        log_size: :math:`\log s_i` ``[N]``.
        kappa: The sensitivity :math:`\kappa` ``[G]``.
        center: :math:`\bar\ell` to use (a fitted model's, for its counterfactuals); None
            (default): the mean of ``log_size``.

    Returns:
        ``(y, center)``.
    """
    log_size = log_size.to(y)
    center = float(log_size.mean()) if center is None else float(center)
    y -= (log_size - center)[:, None] * kappa.to(y)[None]
    return y, center


def is_raw_counts(x: Tensor, *, block: int = 1 << 22) -> bool:
    """Whether every entry of ``x`` is a non-negative integer (raw counts, however stored).

    ``transform="auto"`` (:class:`spatial.celcomen.CelcomenConfig`) fits such data with the
    raw-counts route and anything else (normalised or log expression, signed coordinates) on
    the sphere. Read a block of about ``block`` entries at a time, so the check allocates no
    ``[N, G]`` temporary.

    Examples:
        >>> is_raw_counts(torch.tensor([[0.0, 3.0], [1.0, 2.0]]))
        True
        >>> is_raw_counts(torch.tensor([[0.0, 0.5], [1.0, 2.0]])), is_raw_counts(-torch.ones(1, 2))
        (False, False)
    """
    if not torch.is_floating_point(x):
        return bool((x >= 0).all())
    rows = max(1, block // max(1, x.shape[-1]))
    for start in range(0, x.shape[0], rows):
        chunk = x[start : start + rows]
        if not bool((chunk >= 0).all()) or not bool((chunk == chunk.round()).all()):
            return False
    return True


def check_edge_index(edge_index: Tensor, num_nodes: int, argument: str = "edge_index") -> None:
    """Raise unless ``edge_index`` is an int64 ``[2, E]`` tensor with values in ``[0, N)``."""
    if not isinstance(edge_index, Tensor) or edge_index.ndim != 2 or edge_index.shape[0] != 2:
        shape = tuple(edge_index.shape) if isinstance(edge_index, Tensor) else type(edge_index)
        raise GraphDataError(f"{argument}: expected an int64 tensor [2, E], got {shape}")
    if edge_index.dtype != torch.long:
        raise GraphDataError(f"{argument}: expected dtype int64, got {edge_index.dtype}")
    if edge_index.numel() and (int(edge_index.min()) < 0 or int(edge_index.max()) >= num_nodes):
        raise GraphDataError(
            f"{argument}: expected node indices in [0, {num_nodes}), got range "
            f"[{int(edge_index.min())}, {int(edge_index.max())}]"
        )


def check_graph(edge_index: Tensor, weight: Tensor, num_nodes: int) -> None:
    """Raise unless ``edge_index`` [2, E] (int64, ids in ``[0, N)``) and ``weight`` [E] fit.

    The counterfactuals and the sampler build a sparse operator from them without torch's
    index checks: an id outside ``[0, N)`` read and wrote outside its buffer (a wrong result or
    a crash), and a NaN weight made every state NaN.
    """
    check_edge_index(edge_index, num_nodes)
    check_edge_weight(weight, edge_index.shape[1], "weight")


def graph_from_adata(adata: AnnData, spatial_key: str, n_neighbors: int) -> tuple[Tensor, Tensor]:
    """An existing ``obsp`` graph, or a k-NN graph of ``obsm[spatial_key]`` built in memory.

    Warns (:func:`warn_expression_graph`) when the only graph is scanpy's
    ``obsp['connectivities']``, which is not used.
    """
    if _graph_key(adata, spatial_key) in adata.obsp:
        return spatial_graph(adata, key=spatial_key, dtype=torch.float32)
    require_coordinates(adata, spatial_key)
    warn_expression_graph(adata, spatial_key, n_neighbors, stacklevel=5)  # -> the fit's caller
    coords = np.asarray(adata.obsm[spatial_key], dtype=np.float64)
    edge_index, _ = knn_graph(torch.from_numpy(coords), n_neighbors)
    return edge_index, torch.ones(edge_index.shape[1])


def _graph_key(adata: AnnData, spatial_key: str) -> str:
    """The ``obsp`` key of the spatial graph, as :func:`graphdata.spatial_anndata.spatial_graph`
    reads it (``uns[f"{key}_neighbors"]["connectivities_key"]`` when recorded).
    """  # noqa: D205
    meta = adata.uns.get(_keys.neighbors_key(spatial_key), {})
    key = meta.get("connectivities_key") if isinstance(meta, Mapping) else None
    return str(key) if key else _keys.connectivities_key(spatial_key)


def warn_expression_graph(
    adata: AnnData, spatial_key: str, n_neighbors: int, *, stacklevel: int = 2
) -> None:
    """Warn that ``obsp['connectivities']`` is ignored when the spatial graph is missing.

    ``obsp['connectivities']`` is what ``sc.pp.neighbors`` writes: a k-NN graph in expression
    (PCA) space, not in tissue space, so it is never read as the spatial graph. Call this before
    building the spatial graph (``spatial.tools.celcomen`` builds it when missing).
    """
    graph = _graph_key(adata, spatial_key)
    if "connectivities" in adata.obsp and graph not in adata.obsp:
        warnings.warn(
            f"obsp['connectivities'] is not used: it is scanpy's k-NN graph in expression space "
            f"(sc.pp.neighbors), not a spatial graph, and obsp[{graph!r}] is missing, so a "
            f"k-NN graph (k={n_neighbors}) of obsm[{spatial_key!r}] is built instead. To fit on "
            "a spatial graph of your own, build it first, e.g. "
            "squidpy.gr.spatial_neighbors(adata) or "
            "graphdata.spatial_anndata.spatial_neighbors_knn(adata), or assign it: "
            f"adata.obsp[{graph!r}] = A",
            UserWarning,
            stacklevel=stacklevel,
        )


def require_coordinates(adata: AnnData, spatial_key: str) -> None:
    """Raise a KeyError that says how to add ``obsm[spatial_key]`` when it is missing."""
    if spatial_key not in adata.obsm:
        graph = _graph_key(adata, spatial_key)
        scanpy_graph = (
            " (obsp['connectivities'] is scanpy's expression k-NN graph from sc.pp.neighbors, "
            f"not a spatial graph; to use it anyway, adata.obsp[{graph!r}] = "
            "adata.obsp['connectivities'])"
            if "connectivities" in adata.obsp
            else ""
        )
        raise KeyError(
            f"obsm[{spatial_key!r}]: no spatial coordinates and no graph "
            f"obsp[{graph!r}] in adata{scanpy_graph}; add coordinates with "
            f"adata.obsm[{spatial_key!r}] = coords (e.g. np.c_[adata.obs['col'], "
            "adata.obs['row']] for array positions) or build the graph with "
            "graphdata.spatial_anndata.spatial_neighbors_knn(adata)"
        )


def resolve_genes(
    genes: Mapping[Any, float],
    var_names: Sequence[str] | None,
    n_genes: int,
    *,
    all_names: Sequence[str] | None = None,
) -> dict[int, float]:
    """Map ``{gene name or column: value}`` to ``{column: value}``; close names on a typo.

    Columns index ``var_names`` (the genes of the model). ``all_names``: every gene of the
    data, so that a gene the fit did not select (``mask_var``) gets its own message and fix.
    """
    if not isinstance(genes, Mapping) or not genes:
        raise GraphDataError(
            f"genes: expected a non-empty mapping gene -> clamped value, e.g. {{'IFITM3': 0.0}}, "
            f"got {genes!r}"
        )
    out: dict[int, float] = {}
    for gene, value in genes.items():
        if isinstance(gene, (int, np.integer)) and not isinstance(gene, bool):
            if not 0 <= int(gene) < n_genes:
                raise GraphDataError(f"genes: column {gene} out of range [0, {n_genes})")
            column = int(gene)
        elif var_names is not None and isinstance(gene, str):
            lookup = {name: i for i, name in enumerate(var_names)}
            if gene not in lookup and all_names is not None and gene in set(all_names):
                raise GraphDataError(
                    f"genes: {gene!r} is in adata.var_names but not among the "
                    f"{len(var_names):,} genes the model was fitted on (mask_var selected "
                    "them); perturb a fitted gene (est.var_names_), or refit with it selected, "
                    f"e.g. adata.var.loc[{gene!r}, 'highly_variable'] = True"
                )
            if gene not in lookup:
                raise UnknownLabelError("gene", gene, var_names, argument="genes")
            column = lookup[gene]
        else:
            raise GraphDataError(
                f"genes: got key {gene!r}; use integer columns for tensors, var_names for AnnData"
            )
        value = float(value)
        if not np.isfinite(value) or value < 0:
            raise GraphDataError(
                f"genes[{gene!r}]: expected a finite expression value >= 0 (0 = knock-out), "
                f"got {value}"
            )
        out[column] = value
    return out


def resolve_cells(cells: Any, obs_names: Sequence[str] | None, n_cells: int) -> Tensor:
    """A boolean mask ``[N]`` from a mask, integer indices or obs names; non-empty."""
    if (
        isinstance(cells, Tensor)
        and cells.dtype == torch.bool
        or (isinstance(cells, np.ndarray) and cells.dtype == bool)
    ):
        mask = torch.as_tensor(cells).cpu()
        if mask.shape != (n_cells,):
            raise GraphDataError(
                f"cells: a boolean mask needs shape ({n_cells},), got {tuple(mask.shape)}"
            )
    else:
        items = cells.tolist() if isinstance(cells, (Tensor, np.ndarray)) else list(cells)
        lookup = {name: i for i, name in enumerate(obs_names)} if obs_names is not None else {}
        mask = torch.zeros(n_cells, dtype=torch.bool)
        for item in items:
            if isinstance(item, str):
                if item not in lookup:
                    raise UnknownLabelError("cell", item, lookup.keys(), argument="cells")
                mask[lookup[item]] = True
            elif isinstance(item, (int, np.integer)) and 0 <= int(item) < n_cells:
                mask[int(item)] = True
            else:
                raise GraphDataError(
                    f"cells: expected obs names or indices in [0, {n_cells}), got {item!r}"
                )
    if not bool(mask.any()):
        raise GraphDataError("cells: the selection is empty; choose at least one cell to perturb")
    return mask
