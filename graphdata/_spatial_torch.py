"""Device path of :mod:`graphdata.spatial`: exact neighbours from chunked ``torch.cdist``.

Works on any device, for one group of points (the caller loops over ``batch`` groups). Rows are
processed ``chunk_size`` at a time, so memory stays at a few ``[chunk_size, n]`` matrices instead
of ``[n, n]``. Distances use the difference formula (``donot_use_mm_for_euclid_dist``): the
matrix-product formula ``|x|^2 + |y|^2 - 2 x.y`` cancels catastrophically for coordinates far from
the origin (pixel units), which would reorder near neighbours.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["default_chunk_size", "knn_torch", "radius_torch", "select_k_smallest"]

#: Automatic chunks hold about this many distances (128 MiB in float64) per [chunk, n] matrix.
_CHUNK_ENTRIES = 1 << 24


def default_chunk_size(n: int) -> int:
    """Rows per chunk so that one ``[rows, n]`` distance matrix has about 16M entries."""
    return max(1, min(n, _CHUNK_ENTRIES // max(n, 1)))


def select_k_smallest(dist: Tensor, k: int) -> tuple[Tensor, Tensor]:
    """The k smallest entries of each row, ties broken by the smaller column index.

    ``torch.topk`` breaks ties arbitrarily (and differently on CPU and CUDA). Asking it for
    k + 1 values settles most rows: when the (k+1)-th value is strictly larger than the k-th,
    the set of the k smallest is unique and only its order needs fixing. In the rare rows where
    a tie straddles the k-th place, the selection takes every entry ``<`` the k-th value and,
    among the entries equal to it, the leftmost until the row has k.

    Args:
        dist: Distances ``[c, m]`` with ``k <= m``; ``inf`` marks excluded entries (at most
            ``m - k`` per row).
        k: Entries to keep per row.

    Returns:
        ``(columns [c, k] int64, values [c, k])``, each row sorted by ``(value, column)``.
    """
    c, m = dist.shape
    if k >= m:
        columns = torch.arange(m, device=dist.device).expand(c, m)
        values = dist
    else:
        values, columns = torch.topk(dist, k + 1, dim=1, largest=False, sorted=True)  # [c, k+1]
        straddle = values[:, k] == values[:, k - 1]  # [c]
        values, columns = values[:, :k].clone(), columns[:, :k].clone()
        if bool(straddle.any()):
            rows = straddle.nonzero().flatten()
            sub = dist[rows]  # [r, m]
            kth = values[rows, k - 1 :]  # [r, 1]
            below = sub < kth
            tied = sub == kth
            need = k - below.sum(dim=1, keepdim=True)
            take = below | (tied & (tied.cumsum(dim=1) <= need))
            picked = take.nonzero()[:, 1].view(-1, k)  # row-major: ascending columns
            columns[rows] = picked
            values[rows] = sub.gather(1, picked)
    # Canonical order: ascending column first, then a stable sort by value.
    perm = torch.argsort(columns, dim=1)
    columns, values = columns.gather(1, perm), values.gather(1, perm)
    values, perm = torch.sort(values, dim=1, stable=True)
    return columns.gather(1, perm), values


def _chunk_distances(points: Tensor, start: int, stop: int, *, include_self: bool) -> Tensor:
    """Distances from rows ``start:stop`` to all points, self masked with ``inf`` if excluded."""
    dist = torch.cdist(
        points[start:stop], points, compute_mode="donot_use_mm_for_euclid_dist"
    )  # [c, n]
    if not include_self:
        rows = torch.arange(stop - start, device=points.device)
        dist[rows, rows + start] = torch.inf
    return dist


def knn_torch(
    points: Tensor, k: int, *, include_self: bool, chunk_size: int
) -> tuple[Tensor, Tensor]:
    """Exact k nearest neighbours by chunked brute force, ties broken by the smaller index.

    Args:
        points: Coordinates ``[n, D]`` (float64 where the device supports it).
        k: Number of neighbours per point (``<= n - 1``, or ``<= n`` when ``include_self``).
        include_self: Whether a point may be its own neighbour.
        chunk_size: Query rows per chunk.

    Returns:
        ``(neighbours [n, k] int64, distances [n, k])``, each row sorted by
        ``(distance, index)``.
    """
    n = points.shape[0]
    neighbours, distances = [], []
    for start in range(0, n, chunk_size):
        stop = min(start + chunk_size, n)
        dist = _chunk_distances(points, start, stop, include_self=include_self)
        columns, values = select_k_smallest(dist, k)
        neighbours.append(columns)
        distances.append(values)
    return torch.cat(neighbours), torch.cat(distances)


def radius_torch(
    points: Tensor, r: float, *, include_self: bool, chunk_size: int
) -> tuple[Tensor, Tensor, Tensor]:
    """All ordered pairs at distance ``<= r`` by chunked brute force, in canonical order.

    Args:
        points: Coordinates ``[n, D]``.
        r: Radius, finite and ``>= 0``.
        include_self: Whether the pair ``(i, i)`` is kept.
        chunk_size: Query rows per chunk.

    Returns:
        ``(source [E], target [E], distance [E])`` sorted by ``(target, distance, source)``.
    """
    n = points.shape[0]
    sources, targets, dists = [], [], []
    for start in range(0, n, chunk_size):
        stop = min(start + chunk_size, n)
        dist = _chunk_distances(points, start, stop, include_self=include_self)
        row, col = (dist <= r).nonzero(as_tuple=True)  # ascending target, then source
        sources.append(col)
        targets.append(row + start)
        dists.append(dist[row, col])
    source, target, distance = torch.cat(sources), torch.cat(targets), torch.cat(dists)
    # Targets and, within a target, sources are already ascending: a stable sort by distance
    # followed by a stable sort by target gives (target, distance, source) order.
    perm = torch.sort(distance, stable=True).indices
    perm = perm[torch.sort(target[perm], stable=True).indices]
    return source[perm], target[perm], distance[perm]
