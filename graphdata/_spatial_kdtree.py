"""CPU path of :mod:`graphdata.spatial`: exact k-NN and radius neighbours with ``cKDTree``.

Both functions work on one group of points (the caller loops over ``batch`` groups) in float64
NumPy and return neighbours in the canonical order of :mod:`graphdata.spatial`: by distance,
ties broken by the smaller point index. ``cKDTree`` itself breaks ties arbitrarily, so the k-NN
query asks for one candidate more than needed and re-queries, with a doubled window, the rows
whose last candidate is as close as the k-th neighbour (a tie that may continue outside it).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

__all__ = ["knn_kdtree", "radius_kdtree"]

#: Re-queried rows are processed in blocks of at most this many (row, candidate) entries, so a
#: pathological tie (thousands of duplicate points) cannot allocate an [n, n] array at once.
_MAX_WINDOW_ENTRIES = 1 << 24


def knn_kdtree(points: np.ndarray, k: int, *, include_self: bool) -> tuple[np.ndarray, np.ndarray]:
    """Exact k nearest neighbours of every point, ties broken by the smaller index.

    Args:
        points: Float64 coordinates, ``[n, D]``, with ``k <= n - 1`` (``k <= n`` when
            ``include_self``).
        k: Number of neighbours per point.
        include_self: Whether a point may be its own neighbour (at distance 0).

    Returns:
        ``(neighbours [n, k] int64, distances [n, k] float64)``, each row sorted by
        ``(distance, index)``.
    """
    n = points.shape[0]
    # Sliding-midpoint splits (balanced_tree=False) build about twice as fast as median splits
    # and query as fast on point clouds.
    tree = cKDTree(points, balanced_tree=False)
    neighbours = np.empty((n, k), dtype=np.int64)
    distances = np.empty((n, k), dtype=np.float64)
    # One candidate beyond the k needed (plus self when excluded) tells whether a tie at the
    # k-th distance could continue outside the window.
    window = min(k + (0 if include_self else 1) + 1, n)
    # Querying in the tree's leaf order keeps consecutive queries in the same cache-resident
    # nodes: about 30 % faster than row order on 100k points.
    pending = tree.indices.astype(np.int64)
    while pending.size:
        block = max(1, _MAX_WINDOW_ENTRIES // window)
        unresolved = []
        for start in range(0, pending.size, block):
            rows = pending[start : start + block]
            dist, cand = tree.query(points[rows], k=window)
            dist = dist.reshape(rows.size, window)  # [r, window]; k=1 returns a flat array
            cand = cand.reshape(rows.size, window).astype(np.int64)
            ok, nbr, nd = _select_window(
                rows, cand, dist, k, include_self=include_self, complete=window == n
            )
            neighbours[rows[ok]] = nbr[ok]
            distances[rows[ok]] = nd[ok]
            unresolved.append(rows[~ok])
        pending = np.concatenate(unresolved)
        window = min(2 * window, n)
    return neighbours, distances


def _select_window(
    rows: np.ndarray,
    cand: np.ndarray,
    dist: np.ndarray,
    k: int,
    *,
    include_self: bool,
    complete: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pick the k first candidates by ``(distance, index)``; flag rows where that is exact."""
    resort = np.zeros(rows.shape, dtype=bool)
    if not include_self:
        # Self is normally the first candidate: rotate it to the last column, then give it
        # distance inf. When duplicates share distance 0 it may sit elsewhere or be missing;
        # those rows are re-sorted below.
        first = cand[:, 0] == rows
        cand = np.where(first[:, None], np.roll(cand, -1, axis=1), cand)
        dist = np.where(first[:, None], np.roll(dist, -1, axis=1), dist)
        dist = np.where(cand == rows[:, None], np.inf, dist)
        resort |= ~first
    # cKDTree sorts by distance only; rows with equal neighbouring distances need the index
    # tie-break, and only those are re-sorted (few, except on lattices).
    resort |= (dist[:, 1:] == dist[:, :-1]).any(axis=1)
    if resort.any():
        order = np.lexsort((cand[resort], dist[resort]), axis=1)  # distance, then index
        cand[resort] = np.take_along_axis(cand[resort], order, axis=1)
        dist[resort] = np.take_along_axis(dist[resort], order, axis=1)
    kth = dist[:, k - 1]
    # cKDTree returns the `window` nearest by its own arithmetic, the same values as `dist`, so
    # every point outside the window is at least as far as the farthest candidate. If that
    # candidate is strictly farther than the k-th, no outside point can tie with the k-th.
    farthest = np.where(np.isinf(dist), -np.inf, dist).max(axis=1)
    ok = np.full(rows.shape, True) if complete else farthest > kth
    return ok, cand[:, :k], dist[:, :k]


def radius_kdtree(
    points: np.ndarray, r: float, *, include_self: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All ordered pairs at Euclidean distance ``<= r``, in canonical order.

    Args:
        points: Float64 coordinates, ``[n, D]``.
        r: Radius, finite and ``>= 0``.
        include_self: Whether to add the pair ``(i, i)`` at distance 0 for every point.

    Returns:
        ``(source [E], target [E], distance [E])`` sorted by ``(target, distance, source)``.
    """
    n = points.shape[0]
    tree = cKDTree(points)
    # cKDTree compares squared distances with r**2; query a hair wider and decide membership
    # with the same sqrt(sum of squares) that the torch path and the returned distances use.
    loose = np.nextafter(r * (1.0 + 1e-9), np.inf)
    pairs = tree.query_pairs(loose, output_type="ndarray").astype(np.int64)  # [P, 2], i < j
    i, j = pairs[:, 0], pairs[:, 1]
    d = np.sqrt(((points[i] - points[j]) ** 2).sum(axis=1))
    keep = d <= r
    i, j, d = i[keep], j[keep], d[keep]
    source = [j, i]
    target = [i, j]
    dist = [d, d]
    if include_self:
        loops = np.arange(n, dtype=np.int64)
        source.append(loops)
        target.append(loops)
        dist.append(np.zeros(n))
    source_a, target_a, dist_a = (np.concatenate(a) for a in (source, target, dist))
    order = np.lexsort((source_a, dist_a, target_a))
    return source_a[order], target_a[order], dist_a[order]
