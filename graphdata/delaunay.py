r"""Delaunay neighbour graphs from point coordinates (squidpy's ``delaunay`` mode).

Delaunay, "Sur la sphère vide", Bulletin de l'Académie des Sciences de l'URSS, 1934; computed
with Qhull (Barber, Dobkin, Huhdanpaa, "The Quickhull Algorithm for Convex Hulls", ACM TOMS 1996,
doi:10.1145/235815.235821) through ``scipy.spatial.Delaunay``. Two points are neighbours when they
share a simplex of the Delaunay triangulation, i.e. when some ball through both contains no other
point in its interior (for distinct points; Qhull keeps one of two points that coincide, to
about 1e-13 relative, and the other is in no simplex and gets no edges). The graph is
symmetric, follows the same edge convention as :func:`graphdata.spatial.knn_graph`
(``edge_index[0]`` the neighbour, ``edge_index[1]`` the centre; sorted by target, then
distance, then source) and never connects points of different ``batch`` groups.

Qhull runs on the CPU: coordinates on another device are copied to the CPU for the
triangulation, and the edges come back on the device of ``coords``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from scipy.spatial import Delaunay, QhullError
from torch import Tensor

from graphdata.errors import GraphDataError
from graphdata.spatial import _check_coords, _groups

__all__ = ["delaunay_graph"]


def delaunay_graph(
    coords: Tensor | np.ndarray | Sequence[Sequence[float]],
    *,
    batch: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    r"""Graph of the edges of the Delaunay triangulation of the points, per batch group.

    .. math::
        E = \{\, (j \to i) : i \ne j \text{ share a simplex of } \mathrm{Del}(\{x_k : b_k =
        b_i\}) \,\}, \qquad d_{ij} = \lVert x_j - x_i \rVert_2 .

    Qhull triangulates distinct points: of two points that coincide (up to about 1e-13
    relative) one is in no simplex and gets no edges; deduplicate the coordinates first, or use
    :func:`graphdata.spatial.knn_graph`, to connect both.

    Args:
        coords: Point coordinates ``[N, D]`` with ``D >= 2``, finite; each batch group needs at
            least ``D + 1`` points not all on one hyperplane.
        batch: Group id of every point, integer ``[N]``; groups never connect. Default None.

    Returns:
        ``(edge_index, distance)``: ``edge_index[0]`` the neighbour ``j`` (source),
        ``edge_index[1]`` the centre ``i`` (target), sorted by target then distance then source;
        ``distance`` the lengths :math:`d_{ij}` in the dtype of ``coords``.

    Shapes:
        coords: ``[N, D]``; batch: ``[N]``; edge_index: ``[2, E]`` (int64); distance: ``[E]``.

    Raises:
        GraphDataError: On non-finite or wrongly shaped ``coords``, ``D < 2``, a bad ``batch``,
            or a group too small or degenerate (all points on a line) to triangulate.

    Examples:
        >>> square = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 1.1], [1.0, 1.1], [0.5, 0.5]])
        >>> edge_index, distance = delaunay_graph(square)
        >>> sorted(edge_index[0, edge_index[1] == 4].tolist())  # the centre sees every corner
        [0, 1, 2, 3]
    """
    points, out_dtype = _check_coords(coords)
    n, dim = points.shape
    if dim < 2:
        raise GraphDataError(
            f"coords: expected D >= 2 dimensions for a Delaunay triangulation, got D = {dim}; "
            "for 1-D positions connect consecutive points, or use knn_graph(coords, k=2)"
        )
    cpu = points.cpu().numpy()
    pairs = []
    for group in _groups(batch, n, points.device):
        index = group.cpu().numpy()
        if index.size < dim + 1:
            raise GraphDataError(
                f"coords: a batch group of {index.size} point(s) cannot be triangulated in "
                f"{dim}-D (needs at least {dim + 1}); drop it or use knn_graph"
            )
        try:
            simplices = Delaunay(cpu[index]).simplices  # [S, D + 1] local ids
        except QhullError as err:
            raise GraphDataError(
                f"coords: the {index.size} points of a batch group are degenerate (e.g. all "
                f"on one line or plane) and have no {dim}-D triangulation; use knn_graph or "
                "radius_graph instead"
            ) from err
        a, b = np.triu_indices(dim + 1, k=1)
        edges = np.concatenate([simplices[:, [i, j]] for i, j in zip(a, b)])  # [S * C, 2]
        edges = np.unique(np.sort(edges, axis=1), axis=0)
        pairs.append(index[edges])
    undirected = torch.as_tensor(np.concatenate(pairs), device=points.device)  # [U, 2]
    source = torch.cat([undirected[:, 0], undirected[:, 1]])
    target = torch.cat([undirected[:, 1], undirected[:, 0]])
    distance = (points[source] - points[target]).norm(dim=1)
    # Sort by target, then distance, then source (stable sorts, least significant key first).
    order = torch.argsort(source, stable=True)
    order = order[torch.argsort(distance[order], stable=True)]
    order = order[torch.argsort(target[order], stable=True)]
    edge_index = torch.stack([source[order], target[order]])
    return edge_index, distance[order].to(out_dtype)
