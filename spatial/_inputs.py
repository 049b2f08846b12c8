"""Validation and conversion of inputs at the public boundaries of :mod:`spatial`.

Expression from AnnData must be non-negative (counts or normalised counts: knock-out to 0 means
"off"); expression passed as a tensor may be signed (points on the sphere, e.g. a simulated
tissue). Both must be finite and have no all-zero rows, which have no direction on the sphere.
"""

from __future__ import annotations

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
    "expression_from_adata",
    "check_expression",
    "unit_rows",
    "check_edge_index",
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


def expression_from_adata(
    adata: AnnData, layer: str | None, *, allow_negative: bool = False
) -> Tensor:
    """Dense float32 expression ``[n_obs, n_vars]`` from ``adata.X`` or ``adata.layers[layer]``.

    Negative values are refused unless ``allow_negative`` (signed sphere coordinates, as
    :meth:`spatial.simulate.SimulatedTissue.to_anndata` writes them).
    """
    if layer is None:
        matrix, where = adata.X, "adata.X"
    else:
        if layer not in adata.layers:
            raise KeyError(
                f"layers[{layer!r}]: no such layer (available: {sorted(adata.layers.keys())}); "
                "pass layer=None to use adata.X"
            )
        matrix, where = adata.layers[layer], f"adata.layers[{layer!r}]"
    if matrix is None:
        raise GraphDataError(f"{where}: expected an expression matrix, got None")
    dense = matrix.toarray() if sp.issparse(matrix) else np.asarray(matrix)
    x = torch.as_tensor(np.asarray(dense, dtype=np.float32))
    names = list(map(str, adata.obs_names))
    check_expression(x, where, names=names, non_negative=not allow_negative)
    return x


def check_expression(
    x: Tensor, where: str, *, names: Sequence[str] | None = None, non_negative: bool
) -> None:
    """Raise on non-finite values, negative values (if required) and all-zero rows."""
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
    zero = x.abs().sum(1) == 0
    if bool(zero.any()):
        rows = torch.nonzero(zero).flatten()[:5].tolist()
        raise GraphDataError(
            f"{where}: {int(zero.sum())} cells have zero expression in every gene (first "
            f"{_name_rows(rows, names)}) and no direction on the unit sphere; drop them, e.g. "
            "sc.pp.filter_cells(adata, min_counts=1) (or min_genes=1) after subsetting genes"
        )


def _name_rows(rows: list[int], names: Sequence[str] | None) -> str:
    return str([names[r] for r in rows] if names is not None else rows)


def unit_rows(x: Tensor) -> Tensor:
    r"""Project rows onto the unit sphere, :math:`x_i / \lVert x_i \rVert_2` (rows are non-zero)."""
    return x / x.norm(dim=-1, keepdim=True)


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


def graph_from_adata(adata: AnnData, spatial_key: str, n_neighbors: int) -> tuple[Tensor, Tensor]:
    """An existing ``obsp`` graph, or a k-NN graph of ``obsm[spatial_key]`` built in memory."""
    if _keys.connectivities_key(spatial_key) in adata.obsp:
        return spatial_graph(adata, key=spatial_key, dtype=torch.float32)
    require_coordinates(adata, spatial_key)
    coords = np.asarray(adata.obsm[spatial_key], dtype=np.float64)
    edge_index, _ = knn_graph(torch.from_numpy(coords), n_neighbors)
    return edge_index, torch.ones(edge_index.shape[1])


def require_coordinates(adata: AnnData, spatial_key: str) -> None:
    """Raise a KeyError that says how to add ``obsm[spatial_key]`` when it is missing."""
    if spatial_key not in adata.obsm:
        raise KeyError(
            f"obsm[{spatial_key!r}]: no spatial coordinates and no graph "
            f"obsp[{_keys.connectivities_key(spatial_key)!r}] in adata; add coordinates with "
            f"adata.obsm[{spatial_key!r}] = coords (e.g. np.c_[adata.obs['col'], "
            "adata.obs['row']] for array positions) or build the graph with "
            "graphdata.spatial_anndata.spatial_neighbors_knn(adata)"
        )


def resolve_genes(
    genes: Mapping[Any, float], var_names: Sequence[str] | None, n_genes: int
) -> dict[int, float]:
    """Map ``{gene name or column: value}`` to ``{column: value}``; close names on a typo."""
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
