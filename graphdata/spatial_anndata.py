r"""AnnData wrappers for spatial neighbour graphs, following scanpy/squidpy conventions.

Two layers, as scanpy does: :mod:`graphdata.spatial` holds the tensor functions that return
values; the wrappers here read ``obsm['spatial']``, call them, and write the graph where squidpy
(``squidpy.gr.spatial_neighbors``, scverse/squidpy ``src/squidpy/gr/_build.py``) writes it, so
squidpy, scanpy and NicheCompass read our graphs and we read theirs:

- ``obsp[f"{key_added}_connectivities"]``: CSR float32, row ``i`` has a 1 in the column of each
  neighbour ``j`` of ``i`` (directed for k-NN);
- ``obsp[f"{key_added}_distances"]``: CSR float64 with the same sparsity, the distances
  :math:`\lVert x_j - x_i \rVert_2`;
- ``uns[f"{key_added}_neighbors"] = {"connectivities_key", "distances_key", "params"}``.

:func:`spatial_graph` reads an existing graph back as PyG ``edge_index`` (source ``j``, target
``i``) instead of rebuilding it. The module is not called ``anndata.py`` so that running a script
from inside ``graphdata/`` can never shadow the ``anndata`` package.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
import torch
from torch import Tensor

from graphdata.delaunay import delaunay_graph
from graphdata.errors import GraphDataError
from graphdata.spatial import knn_graph, radius_graph

if TYPE_CHECKING:
    # Annotations only: the wrappers read and write the AnnData they are given.
    from anndata import AnnData

__all__ = [
    "spatial_neighbors_knn",
    "spatial_neighbors_radius",
    "spatial_neighbors_delaunay",
    "spatial_graph",
]

logger = logging.getLogger(__name__)


def spatial_neighbors_knn(
    adata: AnnData,
    k: int = 6,
    *,
    spatial_key: str = "spatial",
    library_key: str | None = None,
    key_added: str = "spatial",
) -> None:
    """Write the directed k-nearest-neighbour graph of ``obsm[spatial_key]`` into ``adata``.

    Each observation gets edges to its k nearest others (ties to the smaller index), computed
    exactly by :func:`graphdata.spatial.knn_graph`; with ``library_key`` every library (tissue
    section) is its own block, as squidpy's ``library_key``.

    Args:
        adata: Annotated data with coordinates ``obsm[spatial_key]`` ``[n_obs, D]``.
        k: Neighbours per observation (default 6, the hexagonal Visium ring); at most the size
            of the smallest library minus one.
        spatial_key: Key of the coordinates in ``adata.obsm`` (default ``"spatial"``).
        library_key: Column of ``adata.obs`` naming each observation's library; None (default)
            treats all observations as one section.
        key_added: Prefix of the written keys (default ``"spatial"``).

    Returns:
        None. Writes into ``adata``:

        - ``obsp[f"{key_added}_connectivities"]``: ``scipy.sparse.csr_matrix`` float32
          ``[n_obs, n_obs]``, 1 at ``(i, j)`` for each neighbour ``j`` of ``i`` (k per row);
        - ``obsp[f"{key_added}_distances"]``: ``csr_matrix`` float64, the same entries holding
          the Euclidean distances (explicit zeros for duplicate points, so both matrices share
          their sparsity; squidpy drops those zeros);
        - ``uns[f"{key_added}_neighbors"]``: dict with ``connectivities_key``,
          ``distances_key`` and ``params`` (``n_neighbors``, ``coord_type="generic"``,
          ``radius=None``, ``transform=None`` as squidpy, plus ``mode="knn"``,
          ``spatial_key`` and ``library_key``).

    Raises:
        KeyError: If ``obsm[spatial_key]`` or ``obs[library_key]`` is missing.
        GraphDataError: On an empty or ``"/"``-holding ``key_added``, non-finite or wrongly
            shaped coordinates, ``k`` out of range (the message names the library), or
            missing library labels.

    Examples:
        >>> from anndata import AnnData
        >>> adata = AnnData(obsm={"spatial": np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0]])})
        >>> spatial_neighbors_knn(adata, k=1)
        >>> adata.obsp["spatial_connectivities"].toarray()
        array([[0., 1., 0.],
               [1., 0., 0.],
               [0., 1., 0.]], dtype=float32)
    """
    _check_key_added(key_added)
    coords = _coords(adata, spatial_key)
    batch, labels = _libraries(adata, library_key)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise GraphDataError(f"k: expected an integer >= 1, got {k!r}")
    sizes = np.bincount(batch.numpy()) if batch is not None else np.array([adata.n_obs])
    smallest = int(sizes.argmin())
    if k > sizes[smallest] - 1:
        where = (
            f"library {labels[smallest]!r} of obs[{library_key!r}]"
            if library_key is not None
            else "adata"
        )
        raise GraphDataError(
            f"k: expected k <= N - 1 = {sizes[smallest] - 1} where N = {sizes[smallest]} "
            f"observations in {where}, got k = {k}; use a smaller k"
        )
    edge_index, distance = _with_key(spatial_key, knn_graph, coords, int(k), batch=batch)
    params = {
        "n_neighbors": int(k),
        "coord_type": "generic",
        "radius": None,
        "transform": None,
        "mode": "knn",
        "spatial_key": spatial_key,
        "library_key": library_key,
    }
    _save_graph(adata, key_added, edge_index, distance, params)


def spatial_neighbors_radius(
    adata: AnnData,
    radius: float,
    *,
    spatial_key: str = "spatial",
    library_key: str | None = None,
    max_num_neighbors: int | None = None,
    key_added: str = "spatial",
) -> None:
    """Write the graph of all pairs within ``radius`` of ``obsm[spatial_key]`` into ``adata``.

    Computed exactly by :func:`graphdata.spatial.radius_graph`; symmetric unless
    ``max_num_neighbors`` trims rows. Libraries never connect.

    Args:
        adata: Annotated data with coordinates ``obsm[spatial_key]`` ``[n_obs, D]``.
        radius: Neighbourhood radius in coordinate units, finite and ``>= 0``; pairs at
            distance exactly ``radius`` connect.
        spatial_key: Key of the coordinates in ``adata.obsm`` (default ``"spatial"``).
        library_key: Column of ``adata.obs`` naming each observation's library; None (default)
            for one section.
        max_num_neighbors: Keep at most this many nearest neighbours per row (ties to the
            smaller index); None (default) keeps all.
        key_added: Prefix of the written keys (default ``"spatial"``).

    Returns:
        None. Writes ``obsp[f"{key_added}_connectivities"]`` (CSR float32, row ``i`` = the
        neighbours of ``i``), ``obsp[f"{key_added}_distances"]`` (CSR float64, same
        sparsity) and ``uns[f"{key_added}_neighbors"]`` (``connectivities_key``,
        ``distances_key``, ``params`` with ``n_neighbors=None``, ``coord_type="generic"``,
        ``radius``, ``transform=None``, ``mode="radius"``, ``max_num_neighbors``,
        ``spatial_key``, ``library_key``), as :func:`spatial_neighbors_knn`.

    Raises:
        KeyError: If ``obsm[spatial_key]`` or ``obs[library_key]`` is missing.
        GraphDataError: On a bad ``key_added``, bad coordinates, a negative or non-finite
            ``radius``, a bad ``max_num_neighbors`` or missing library labels.

    Examples:
        >>> from anndata import AnnData
        >>> adata = AnnData(obsm={"spatial": np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0]])})
        >>> spatial_neighbors_radius(adata, 2.0)
        >>> adata.obsp["spatial_distances"].toarray()
        array([[0., 1., 0.],
               [1., 0., 2.],
               [0., 2., 0.]])
    """
    _check_key_added(key_added)
    coords = _coords(adata, spatial_key)
    batch, _ = _libraries(adata, library_key)
    if isinstance(radius, bool) or not isinstance(radius, (int, float, np.integer, np.floating)):
        raise GraphDataError(f"radius: expected a finite number >= 0, got {radius!r}")
    if not np.isfinite(radius) or radius < 0:
        raise GraphDataError(
            f"radius: expected a finite radius >= 0 in the units of obsm[{spatial_key!r}], "
            f"got {radius}"
        )
    edge_index, distance = _with_key(
        spatial_key,
        radius_graph,
        coords,
        float(radius),
        batch=batch,
        max_num_neighbors=max_num_neighbors,
    )
    params = {
        "n_neighbors": None,
        "coord_type": "generic",
        "radius": float(radius),
        "transform": None,
        "mode": "radius",
        "max_num_neighbors": max_num_neighbors,
        "spatial_key": spatial_key,
        "library_key": library_key,
    }
    _save_graph(adata, key_added, edge_index, distance, params)


def spatial_neighbors_delaunay(
    adata: AnnData,
    *,
    spatial_key: str = "spatial",
    library_key: str | None = None,
    key_added: str = "spatial",
) -> None:
    """Write the Delaunay graph of ``obsm[spatial_key]`` into ``adata`` (squidpy's delaunay mode).

    Computed by :func:`graphdata.delaunay.delaunay_graph`: two observations are neighbours when
    they share a simplex of the Delaunay triangulation; symmetric. Libraries never connect.

    Args:
        adata: Annotated data with coordinates ``obsm[spatial_key]`` ``[n_obs, D]``, ``D >= 2``.
        spatial_key: Key of the coordinates in ``adata.obsm`` (default ``"spatial"``).
        library_key: Column of ``adata.obs`` naming each observation's library; None (default)
            for one section.
        key_added: Prefix of the written keys (default ``"spatial"``).

    Returns:
        None. Writes ``obsp[f"{key_added}_connectivities"]`` (CSR float32, row ``i`` = the
        neighbours of ``i``), ``obsp[f"{key_added}_distances"]`` (CSR float64, same sparsity)
        and ``uns[f"{key_added}_neighbors"]`` (``connectivities_key``, ``distances_key``,
        ``params`` with ``n_neighbors=None``, ``coord_type="generic"``, ``radius=None``,
        ``transform=None``, ``mode="delaunay"``, ``spatial_key``, ``library_key``), as
        :func:`spatial_neighbors_knn`.

    Raises:
        KeyError: If ``obsm[spatial_key]`` or ``obs[library_key]`` is missing.
        GraphDataError: On a bad ``key_added``, bad coordinates, or a library too small or
            degenerate to triangulate.

    Examples:
        >>> from anndata import AnnData
        >>> corners_and_centre = np.array([[0.0, 0.0], [2.0, 0.0], [1.0, 2.0], [1.0, 0.7]])
        >>> adata = AnnData(obsm={"spatial": corners_and_centre})
        >>> spatial_neighbors_delaunay(adata)
        >>> adata.obsp["spatial_connectivities"].sum(axis=1).A1.tolist()
        [3.0, 3.0, 3.0, 3.0]
    """
    _check_key_added(key_added)
    coords = _coords(adata, spatial_key)
    batch, _ = _libraries(adata, library_key)
    edge_index, distance = _with_key(spatial_key, delaunay_graph, coords, batch=batch)
    params = {
        "n_neighbors": None,
        "coord_type": "generic",
        "radius": None,
        "transform": None,
        "mode": "delaunay",
        "spatial_key": spatial_key,
        "library_key": library_key,
    }
    _save_graph(adata, key_added, edge_index, distance, params)


def spatial_graph(
    adata: AnnData, *, key: str = "spatial", dtype: torch.dtype | None = None
) -> tuple[Tensor, Tensor]:
    r"""Read an existing spatial graph from ``adata.obsp`` as PyG ``(edge_index, edge_weight)``.

    Works for graphs written by :func:`spatial_neighbors_knn`, :func:`spatial_neighbors_radius`
    or squidpy. The connectivity key comes from ``uns[f"{key}_neighbors"]["connectivities_key"]``
    when present, else ``f"{key}_connectivities"``. A stored entry :math:`A_{ij} \ne 0` (row
    ``i``, column ``j``: ``j`` is a neighbour of ``i``) becomes the edge ``j -> i``:

    .. math::
        \mathrm{edge\_index}_{:, e} = (j, i), \qquad \mathrm{edge\_weight}_e = A_{ij}.

    Args:
        adata: Annotated data holding the graph in ``obsp``.
        key: The ``key_added`` the graph was written with (default ``"spatial"``).
        dtype: Dtype of ``edge_weight``; None (default) keeps the stored dtype.

    Returns:
        ``(edge_index, edge_weight)`` on the CPU, edges sorted by target ``i`` then source
        ``j``; explicit zeros in the matrix are not edges.

    Shapes:
        edge_index: ``[2, E]`` (int64); edge_weight: ``[E]``.

    Raises:
        KeyError: If the connectivity matrix is missing; the message says what to run first.
        GraphDataError: If ``uns[f"{key}_neighbors"]`` is not a dict, or a stored weight is
            NaN or inf.

    Examples:
        >>> from anndata import AnnData
        >>> adata = AnnData(obsm={"spatial": np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0]])})
        >>> spatial_neighbors_knn(adata, k=1)
        >>> edge_index, edge_weight = spatial_graph(adata)
        >>> edge_index
        tensor([[1, 0, 1],
                [0, 1, 2]])
    """
    meta = adata.uns.get(f"{key}_neighbors", {})
    if not isinstance(meta, Mapping):
        raise GraphDataError(
            f"uns[{key + '_neighbors'!r}]: expected a dict with 'connectivities_key' (as "
            f"squidpy and spatial_neighbors_knn write), got {type(meta).__name__}; delete it or "
            "build the graph again"
        )
    conn_key = meta.get("connectivities_key", f"{key}_connectivities")
    if conn_key not in adata.obsp:
        raise KeyError(
            f"obsp[{conn_key!r}]: no spatial graph with key {key!r} in adata.obsp (available: "
            f"{sorted(adata.obsp.keys())}); run "
            f"graphdata.spatial_anndata.spatial_neighbors_knn(adata, key_added={key!r}) first"
        )
    matrix = sp.csr_matrix(adata.obsp[conn_key], copy=True)
    if not np.isfinite(matrix.data).all():
        raise GraphDataError(
            f"obsp[{conn_key!r}]: expected finite edge weights, got "
            f"{int((~np.isfinite(matrix.data)).sum())} NaN or inf entries; build the graph again "
            "(e.g. spatial_neighbors_knn) or fix those entries"
        )
    matrix.eliminate_zeros()
    matrix.sort_indices()
    coo = matrix.tocoo()  # CSR order: by row i, then column j
    edge_index = torch.stack(
        [torch.from_numpy(coo.col.astype(np.int64)), torch.from_numpy(coo.row.astype(np.int64))]
    )  # [2, E]: source = neighbour j (column), target = centre i (row)
    weight = torch.from_numpy(np.ascontiguousarray(coo.data))
    return edge_index, weight if dtype is None else weight.to(dtype)


def _check_key_added(key_added: object) -> None:
    """Refuse a prefix that no ``.h5ad`` file can hold back (empty, or with ``"/"``)."""
    if not isinstance(key_added, str) or not key_added or "/" in key_added:
        raise GraphDataError(
            f"key_added: expected a non-empty str without '/', got {key_added!r}; it prefixes "
            "the obsp and uns keys written, and an .h5ad file reads '/' as a group separator; "
            "pass e.g. key_added='spatial_knn'"
        )


def _coords(adata: AnnData, spatial_key: str) -> np.ndarray:
    if spatial_key not in adata.obsm:
        raise KeyError(
            f"obsm[{spatial_key!r}]: no spatial coordinates in adata.obsm (available: "
            f"{sorted(adata.obsm.keys())}); store them as adata.obsm[{spatial_key!r}] = "
            "coords [n_obs, D] or pass spatial_key"
        )
    if adata.n_obs == 0:
        raise GraphDataError(f"obsm[{spatial_key!r}]: expected at least one observation, got 0")
    value = adata.obsm[spatial_key]
    return value.to_numpy() if isinstance(value, pd.DataFrame) else np.asarray(value)


def _libraries(adata: AnnData, library_key: str | None) -> tuple[Tensor | None, list]:
    """Integer library codes ``[n_obs]`` and the label of each code (None without a key)."""
    if library_key is None:
        return None, []
    if library_key not in adata.obs:
        raise KeyError(
            f"obs[{library_key!r}]: no library column in adata.obs (available: "
            f"{list(adata.obs.columns)}); pass the obs column that names each section"
        )
    labels = pd.Categorical(adata.obs[library_key])
    codes = np.asarray(labels.codes, dtype=np.int64)
    if (codes < 0).any():
        raise GraphDataError(
            f"library_key: obs[{library_key!r}] has {int((codes < 0).sum())} missing labels; "
            "fill them or drop those observations"
        )
    # Unused categories would count as empty libraries; keep only observed ones.
    used, codes = np.unique(codes, return_inverse=True)
    return torch.from_numpy(codes.reshape(-1)), [labels.categories[c] for c in used]


def _with_key(spatial_key: str, fn: Any, *args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """Call a graph builder, naming ``obsm[spatial_key]`` in coordinate errors."""
    try:
        return fn(*args, **kwargs)
    except GraphDataError as err:
        message = str(err)
        if message.startswith("coords:"):
            raise GraphDataError(f"obsm[{spatial_key!r}]:{message[len('coords:') :]}") from err
        raise


def _save_graph(
    adata: AnnData,
    key_added: str,
    edge_index: Tensor,
    distance: Tensor,
    params: dict[str, Any],
) -> None:
    """Write connectivities, distances and the ``uns`` record, logging each write.

    The single place that writes (squidpy's ``gr/_utils.py::_save_data``): row ``i`` of both
    matrices lists the neighbours ``j`` of ``i``, i.e. the edges ``j -> i``.
    """
    n = adata.n_obs
    source = edge_index[0].cpu().numpy()
    target = edge_index[1].cpu().numpy()
    shape = (n, n)
    conn = sp.csr_matrix((np.ones(source.size, dtype=np.float32), (target, source)), shape=shape)
    dist = sp.csr_matrix(
        (distance.detach().cpu().numpy().astype(np.float64), (target, source)), shape=shape
    )
    conn.sort_indices()
    dist.sort_indices()
    conn_key = f"{key_added}_connectivities"
    dist_key = f"{key_added}_distances"
    uns_key = f"{key_added}_neighbors"
    adata.obsp[conn_key] = conn
    logger.info("added obsp[%r]: %d edges over %d observations", conn_key, conn.nnz, n)
    adata.obsp[dist_key] = dist
    logger.info("added obsp[%r]", dist_key)
    adata.uns[uns_key] = {
        "connectivities_key": conn_key,
        "distances_key": dist_key,
        "params": params,
    }
    logger.info("added uns[%r] with params %s", uns_key, params)
