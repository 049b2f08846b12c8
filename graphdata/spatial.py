r"""Spatial neighbour graphs from point coordinates: one function per mode.

:func:`knn_graph` and :func:`radius_graph` turn coordinates ``[N, D]`` into a PyG-style
``edge_index`` and the Euclidean length of every edge. Both are exact (they match brute force),
both follow PyG's ``source_to_target`` flow, and both build block-diagonal graphs when a ``batch``
vector assigns points to tissue sections (squidpy's ``library_key``): points of different
sections never connect.

Edge direction. An edge ``(j, i)`` is stored as ``edge_index[:, e] = [j, i]``: the source
``edge_index[0]`` is the neighbour ``j``, the target ``edge_index[1]`` is the centre ``i`` whose
neighbourhood it belongs to, so message passing aggregates a node's own neighbours into it. In
the squidpy-style connectivity matrix (``obsp['spatial_connectivities']``, see
:mod:`graphdata.spatial_anndata`) row ``i`` holds the neighbours of ``i`` in its columns, i.e.
``A[edge_index[1], edge_index[0]] = 1``.

Ties. Among equidistant candidates the smaller point index wins, on every path and device, and
edges are listed by target, then distance, then source. The k-NN graph is directed: ``j`` among
the k nearest of ``i`` does not make ``i`` among the k nearest of ``j``.

Paths. CPU tensors use ``scipy.spatial.cKDTree`` (a k-d tree: J. L. Bentley, "Multidimensional
binary search trees used for associative searching", CACM 1975, doi:10.1145/361002.361007);
tensors on other devices use chunked ``torch.cdist`` with ``torch.topk`` (``O(N^2 D)`` work in
``O(chunk_size * N)`` memory per batch group, fast on a GPU, slow on a CPU). ``method`` forces
either. Distances are computed in float64 (float32 on MPS, which has no float64) as
:math:`\sqrt{\sum_d (x_{jd} - x_{id})^2}`; both paths agree exactly whenever these values are
exact (grid coordinates), and otherwise can differ only between candidates whose distances agree
to the last bit or two of float64.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

from graphdata._spatial_kdtree import knn_kdtree, radius_kdtree
from graphdata._spatial_torch import default_chunk_size, knn_torch, radius_torch
from graphdata.errors import GraphDataError

__all__ = ["knn_graph", "radius_graph"]

#: Valid ``method`` values: the visible choice of path (no registry).
METHODS = ("auto", "kdtree", "torch")


def knn_graph(
    coords: Tensor | np.ndarray | Sequence[Sequence[float]],
    k: int,
    *,
    include_self: bool = False,
    batch: Tensor | None = None,
    method: str = "auto",
    chunk_size: int | None = None,
) -> tuple[Tensor, Tensor]:
    r"""Directed k-nearest-neighbour graph of points, exact, with deterministic ties.

    For each point :math:`i` the neighbourhood :math:`\mathcal{N}_k(i)` is the set of the k
    points :math:`j` (:math:`j \ne i` unless ``include_self``; :math:`b_j = b_i` when a batch is
    given) that come first in the lexicographic order of :math:`(d_{ij}, j)`, where

    .. math::
        d_{ij} = \lVert x_j - x_i \rVert_2 = \sqrt{\textstyle\sum_{d=1}^{D} (x_{jd} - x_{id})^2},

    and the graph has the edges :math:`j \to i` for :math:`j \in \mathcal{N}_k(i)`, each with
    its length :math:`d_{ij}`. Edge ``e = i * k + m`` is the m-th nearest neighbour of ``i``.

    Args:
        coords: Point coordinates ``[N, D]``, any ``D >= 1``, finite. Integer coordinates are
            converted to the default float dtype. NumPy arrays are accepted (CPU).
        k: Neighbours per point, ``1 <= k <= n - 1`` where ``n`` is the size of the point's
            batch group (``k <= n`` when ``include_self``).
        include_self: Whether a point counts as its own neighbour (distance 0). Default False.
        batch: Group id of every point, integer ``[N]`` on the device of ``coords`` (need not be
            sorted); points of different groups never connect. Default None (one group).
        method: ``"auto"`` (default: ``"kdtree"`` for CPU tensors, ``"torch"`` otherwise),
            ``"kdtree"`` (``cKDTree``; a non-CPU tensor is copied to the host and back) or
            ``"torch"`` (chunked ``torch.cdist`` on the tensor's device).
        chunk_size: Query rows per ``torch.cdist`` chunk on the torch path; None (default)
            picks about 16M distances per chunk. Rejected with ``method="kdtree"``.

    Returns:
        ``(edge_index, distance)``: ``edge_index[0]`` the neighbour ``j`` (source),
        ``edge_index[1]`` the centre ``i`` (target), sorted by target then distance then
        source; ``distance`` the lengths :math:`d_{ij}` in the dtype of ``coords``.

    Shapes:
        coords: ``[N, D]``; batch: ``[N]``; edge_index: ``[2, N * k]`` (int64);
        distance: ``[N * k]``.

    Raises:
        GraphDataError: On non-finite or wrongly shaped ``coords``, ``k`` out of range, a bad
            ``batch``, ``method`` or ``chunk_size``.

    Examples:
        >>> coords = torch.tensor([[0.0], [1.0], [3.0], [6.0]])
        >>> edge_index, distance = knn_graph(coords, k=1)
        >>> edge_index
        tensor([[1, 0, 1, 2],
                [0, 1, 2, 3]])
        >>> distance
        tensor([1., 1., 2., 3.])
    """
    points, out_dtype = _check_coords(coords)
    n = points.shape[0]
    groups = _groups(batch, n, points.device)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise GraphDataError(f"k: expected an integer >= 1, got {k!r} ({type(k).__name__})")
    k = int(k)
    smallest = min(g.numel() for g in groups)
    limit = smallest if include_self else smallest - 1
    if k < 1 or k > limit:
        where = (
            f"N = {n} points"
            if batch is None
            else f"the smallest batch group has N = {smallest} points"
        )
        rule = "k <= N" if include_self else "k <= N - 1"
        raise GraphDataError(
            f"k: expected 1 <= {rule} = {limit} ({where}), got k = {k}; "
            "use a smaller k or more points per group"
        )
    path, chunk = _resolve_path(method, chunk_size, points)

    neighbours = torch.empty(n, k, dtype=torch.long, device=points.device)  # [N, k]
    distances = torch.empty(n, k, dtype=points.dtype, device=points.device)  # [N, k]
    for index in groups:
        sub = points[index]
        if path == "kdtree":
            nbr_np, dist_np = knn_kdtree(sub.detach().cpu().numpy(), k, include_self=include_self)
            nbr = torch.from_numpy(nbr_np).to(points.device)
            dist = torch.from_numpy(dist_np).to(device=points.device, dtype=points.dtype)
        else:
            nbr, dist = knn_torch(
                sub, k, include_self=include_self, chunk_size=chunk or default_chunk_size(len(sub))
            )
        # `index` is ascending, so mapping local to global ids keeps the index tie-break.
        neighbours[index] = index[nbr]
        distances[index] = dist
    target = torch.arange(n, device=points.device).repeat_interleave(k)  # [N * k]
    edge_index = torch.stack([neighbours.reshape(-1), target])  # [2, N * k]
    return edge_index, distances.reshape(-1).to(out_dtype)


def radius_graph(
    coords: Tensor | np.ndarray | Sequence[Sequence[float]],
    r: float,
    *,
    include_self: bool = False,
    max_num_neighbors: int | None = None,
    batch: Tensor | None = None,
    method: str = "auto",
    chunk_size: int | None = None,
) -> tuple[Tensor, Tensor]:
    r"""Graph of all pairs of points within distance ``r``, exact.

    .. math::
        E = \{\, (j \to i) : d_{ij} \le r,\ j \ne i \text{ unless include\_self},\
        b_j = b_i \,\}, \qquad d_{ij} = \sqrt{\textstyle\sum_{d=1}^{D} (x_{jd} - x_{id})^2}.

    The graph is symmetric: ``(j, i)`` is an edge whenever ``(i, j)`` is. With
    ``max_num_neighbors = m``, each target ``i`` keeps only its first m in-edges by
    :math:`(d_{ij}, j)` (nearest first, smaller index on ties), which can break symmetry; unlike
    PyG's ``radius_graph``, which keeps an arbitrary subset.

    Args:
        coords: Point coordinates ``[N, D]``, any ``D >= 1``, finite (see :func:`knn_graph`).
        r: Radius, a finite number ``>= 0``; pairs at distance exactly ``r`` are included.
        include_self: Whether every point gets a self-loop (distance 0). Default False.
        max_num_neighbors: Cap on in-edges per target, an integer ``>= 1``; None (default)
            keeps all. The full graph is built before capping.
        batch: Group id of every point, integer ``[N]``; groups never connect. Default None.
        method: ``"auto"`` (default), ``"kdtree"`` or ``"torch"``, as in :func:`knn_graph`.
        chunk_size: Query rows per chunk on the torch path; None (default) picks one.

    Returns:
        ``(edge_index, distance)``: ``edge_index[0]`` the neighbour ``j`` (source),
        ``edge_index[1]`` the centre ``i`` (target), sorted by target then distance then
        source; ``distance`` the lengths :math:`d_{ij}` in the dtype of ``coords``.

    Shapes:
        coords: ``[N, D]``; batch: ``[N]``; edge_index: ``[2, E]`` (int64); distance: ``[E]``.

    Raises:
        GraphDataError: On non-finite or wrongly shaped ``coords``, a negative or non-finite
            ``r``, a bad ``max_num_neighbors``, ``batch``, ``method`` or ``chunk_size``.

    Examples:
        >>> coords = torch.tensor([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0]])
        >>> edge_index, distance = radius_graph(coords, r=2.0)
        >>> edge_index
        tensor([[1, 0, 2, 1],
                [0, 1, 1, 2]])
        >>> distance
        tensor([1., 1., 2., 2.])
    """
    points, out_dtype = _check_coords(coords)
    n = points.shape[0]
    groups = _groups(batch, n, points.device)
    if isinstance(r, bool) or not isinstance(r, (int, float, np.integer, np.floating)):
        raise GraphDataError(f"r: expected a finite number >= 0, got {r!r} ({type(r).__name__})")
    r = float(r)
    if not np.isfinite(r) or r < 0:
        raise GraphDataError(
            f"r: expected a finite radius >= 0, got r = {r}; pass the neighbourhood radius "
            "in the units of coords"
        )
    if max_num_neighbors is not None and (
        isinstance(max_num_neighbors, bool)
        or not isinstance(max_num_neighbors, (int, np.integer))
        or max_num_neighbors < 1
    ):
        raise GraphDataError(
            f"max_num_neighbors: expected None or an integer >= 1, got {max_num_neighbors!r}"
        )
    path, chunk = _resolve_path(method, chunk_size, points)

    sources, targets, dists = [], [], []
    for index in groups:
        sub = points[index]
        if path == "kdtree":
            s_np, t_np, d_np = radius_kdtree(
                sub.detach().cpu().numpy(), r, include_self=include_self
            )
            s, t = (torch.from_numpy(a).to(points.device) for a in (s_np, t_np))
            d = torch.from_numpy(d_np).to(device=points.device, dtype=points.dtype)
        else:
            s, t, d = radius_torch(
                sub, r, include_self=include_self, chunk_size=chunk or default_chunk_size(len(sub))
            )
        sources.append(index[s])
        targets.append(index[t])
        dists.append(d)
    source, target, distance = torch.cat(sources), torch.cat(targets), torch.cat(dists)
    if len(groups) > 1:
        # Each group is already in (target, distance, source) order and a target lives in one
        # group, so a stable sort by target interleaves groups without disturbing that order.
        perm = torch.sort(target, stable=True).indices
        source, target, distance = source[perm], target[perm], distance[perm]
    if max_num_neighbors is not None:
        counts = torch.bincount(target, minlength=n)
        first = torch.cumsum(counts, 0) - counts  # [N] position of each target's first edge
        rank = torch.arange(target.numel(), device=target.device) - first[target]
        keep = rank < int(max_num_neighbors)
        source, target, distance = source[keep], target[keep], distance[keep]
    return torch.stack([source, target]), distance.to(out_dtype)


def _check_coords(coords: object) -> tuple[Tensor, torch.dtype]:
    """Validate coordinates; return them as float64 (float32 on MPS) and the output dtype."""
    if not isinstance(coords, Tensor):
        try:
            coords = torch.as_tensor(np.asarray(coords))
        except (TypeError, ValueError) as err:
            raise GraphDataError(
                f"coords: expected a tensor or array [N, D] of numbers, got "
                f"{type(coords).__name__} that does not convert ({err})"
            ) from err
    if coords.dtype == torch.bool or coords.is_complex():
        raise GraphDataError(f"coords: expected real coordinates, got dtype {coords.dtype}")
    if coords.dim() != 2:
        hint = " (for 1-D positions use coords.reshape(-1, 1))" if coords.dim() == 1 else ""
        raise GraphDataError(
            f"coords: expected a 2-D tensor [N, D] of point coordinates, got shape "
            f"{tuple(coords.shape)}{hint}"
        )
    if coords.shape[0] == 0 or coords.shape[1] == 0:
        raise GraphDataError(
            f"coords: expected at least one point with at least one dimension, got shape "
            f"{tuple(coords.shape)}"
        )
    out_dtype = coords.dtype if coords.is_floating_point() else torch.get_default_dtype()
    work = torch.float32 if coords.device.type == "mps" else torch.float64
    points = coords.detach().to(work)
    finite = torch.isfinite(points).all(dim=1)
    if not bool(finite.all()):
        bad = torch.nonzero(~finite).flatten()
        raise GraphDataError(
            f"coords: expected finite coordinates, got NaN or inf in {bad.numel()} point(s), "
            f"first at row {int(bad[0])}; drop or impute those points first"
        )
    # The longest possible edge is the diagonal of the bounding box: if it overflows, some
    # distance comes out inf (an inf also marks excluded candidates on the torch path, so a
    # point could become its own neighbour). Refuse such coordinates instead.
    span = points.amax(dim=0) - points.amin(dim=0)  # [D]
    diagonal = float(torch.sqrt(torch.sum(span * span)))
    if not np.isfinite(diagonal) or diagonal > torch.finfo(out_dtype).max:
        largest = torch.finfo(out_dtype).max
        raise GraphDataError(
            f"coords: expected coordinates whose distances are finite in {out_dtype} (at most "
            f"{largest:.3g}), got points {float(span.max()):.3g} apart, whose distances "
            "overflow; rescale the coordinates (e.g. subtract their mean and divide by a "
            "length unit)"
        )
    return points, out_dtype


def _groups(batch: Tensor | None, n: int, device: torch.device) -> list[Tensor]:
    """Ascending point indices of every batch group (one group when ``batch`` is None)."""
    if batch is None:
        return [torch.arange(n, device=device)]
    if not isinstance(batch, Tensor):
        batch = torch.as_tensor(np.asarray(batch))
    if batch.shape != (n,) or batch.is_floating_point() or batch.dtype == torch.bool:
        raise GraphDataError(
            f"batch: expected an integer tensor [N] = [{n}] of group ids, got "
            f"shape {tuple(batch.shape)} and dtype {batch.dtype}"
        )
    if batch.device != device:
        raise GraphDataError(
            f"batch: expected a tensor on {device} like coords, got one on {batch.device}"
        )
    ids = torch.unique(batch)
    return [torch.nonzero(batch == g).flatten() for g in ids]


def _resolve_path(method: str, chunk_size: int | None, points: Tensor) -> tuple[str, int | None]:
    """Turn ``method`` into ``"kdtree"`` or ``"torch"`` and validate ``chunk_size``."""
    if method not in METHODS:
        raise GraphDataError(f"method: expected one of {METHODS}, got {method!r}")
    if chunk_size is not None:
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)):
            raise GraphDataError(
                f"chunk_size: expected None or an integer >= 1, got {chunk_size!r}"
            )
        if chunk_size < 1:
            raise GraphDataError(f"chunk_size: expected an integer >= 1, got {chunk_size}")
        if method == "kdtree":
            raise GraphDataError(
                "chunk_size: only the torch path uses chunks, got chunk_size with "
                "method='kdtree'; drop chunk_size or use method='torch'"
            )
    if method == "auto":
        method = "kdtree" if points.device.type == "cpu" else "torch"
    return method, None if chunk_size is None else int(chunk_size)
