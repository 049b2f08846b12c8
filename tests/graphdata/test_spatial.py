"""knn_graph / radius_graph against brute force, on both paths, with ties, batches and bad input."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphdata._spatial_kdtree as kdtree_module
from graphdata.errors import GraphDataError
from graphdata.spatial import knn_graph, radius_graph

PATHS = [("kdtree", None), ("torch", None), ("torch", 1), ("torch", 3)]


def brute_distances(x: np.ndarray) -> np.ndarray:
    return np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))


def brute_knn(x, k, *, include_self=False, batch=None):
    """Oracle: all pairwise distances, rows ordered by (distance, index)."""
    n = len(x)
    dist = brute_distances(x)
    if not include_self:
        np.fill_diagonal(dist, np.inf)
    if batch is not None:
        dist[batch[:, None] != batch[None, :]] = np.inf
    index = np.broadcast_to(np.arange(n), (n, n))
    order = np.lexsort((index, dist), axis=1)[:, :k]
    return order, np.take_along_axis(dist, order, axis=1)


def brute_radius(x, r, *, include_self=False, batch=None, cap=None):
    """Oracle: (source, target, distance) of all pairs within r, by (target, distance, source)."""
    dist = brute_distances(x)
    within = dist <= r
    if not include_self:
        np.fill_diagonal(within, False)
    if batch is not None:
        within &= batch[:, None] == batch[None, :]
    target, source = np.nonzero(within)
    d = dist[target, source]
    order = np.lexsort((source, d, target))
    source, target, d = source[order], target[order], d[order]
    if cap is not None:
        seen: dict[int, int] = {}
        keep = []
        for t in target.tolist():
            seen[t] = seen.get(t, 0) + 1
            keep.append(seen[t] <= cap)
        source, target, d = source[keep], target[keep], d[keep]
    return source, target, d


# Integer coordinates in a tiny box: many exactly equal distances, so the index tie-break and
# the k-d tree's re-query of tied windows are exercised, with exact float arithmetic.
grid_points = st.integers(1, 30).flatmap(
    lambda n: st.integers(1, 3).flatmap(
        lambda d: st.lists(
            st.lists(st.integers(0, 3), min_size=d, max_size=d), min_size=n, max_size=n
        )
    )
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(points=grid_points, data=st.data())
def test_knn_matches_brute_force_with_ties(points, data):
    x = np.array(points, dtype=np.float64)
    n = len(x)
    include_self = data.draw(st.booleans())
    if n == 1 and not include_self:
        include_self = True
    k = data.draw(st.integers(1, n if include_self else n - 1))
    expected_nbr, expected_dist = brute_knn(x, k, include_self=include_self)
    for method, chunk in PATHS:
        edge_index, dist = knn_graph(
            torch.from_numpy(x), k, include_self=include_self, method=method, chunk_size=chunk
        )
        assert torch.equal(edge_index[1], torch.arange(n).repeat_interleave(k))
        np.testing.assert_array_equal(edge_index[0].view(n, k).numpy(), expected_nbr)
        np.testing.assert_array_equal(dist.view(n, k).numpy(), expected_dist)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 60), d=st.integers(1, 4), seed=st.integers(0, 2**31 - 1), data=st.data())
def test_knn_random_points_match_cdist(n, d, seed, data):
    generator = torch.Generator().manual_seed(seed)
    coords = torch.rand(n, d, generator=generator) * 100 - 50  # float32, no exact ties
    k = data.draw(st.integers(1, n - 1))
    full = torch.cdist(coords.double(), coords.double())
    full.fill_diagonal_(float("inf"))
    expected = full.sort(dim=1).values[:, :k]
    for method, chunk in PATHS:
        edge_index, dist = knn_graph(coords, k, method=method, chunk_size=chunk)
        assert dist.dtype == torch.float32
        dist = dist.view(n, k).double()
        torch.testing.assert_close(dist, expected.to(dist.dtype), rtol=1e-6, atol=1e-5)
        # each reported distance is the true distance of the reported pair
        source, target = edge_index
        true = full[target, source].view(n, k)
        torch.testing.assert_close(dist, true, rtol=1e-6, atol=1e-5)


def test_knn_documented_direction_and_order():
    coords = torch.tensor([[0.0], [1.0], [3.0], [6.0]])
    edge_index, dist = knn_graph(coords, 2)
    # target i = centre (row of the obsp matrix), source j = neighbour; nearest first
    assert edge_index.tolist() == [[1, 2, 0, 2, 1, 0, 2, 1], [0, 0, 1, 1, 2, 2, 3, 3]]
    assert dist.tolist() == [1.0, 3.0, 1.0, 2.0, 2.0, 3.0, 3.0, 5.0]


@pytest.mark.parametrize("method", ["kdtree", "torch"])
def test_knn_duplicates_break_ties_by_index(method):
    coords = torch.zeros(20, 2, dtype=torch.float64)  # all points identical
    coords[10:] += 1.0
    edge_index, dist = knn_graph(coords, 3, method=method)
    nbr = edge_index[0].view(20, 3)
    assert nbr[0].tolist() == [1, 2, 3]
    assert nbr[5].tolist() == [0, 1, 2]
    assert nbr[12].tolist() == [10, 11, 13]
    assert dist.abs().max() == 0


def test_kdtree_requery_blocks(monkeypatch):
    # Tiny blocks force the re-query of tied rows through several blocks and windows.
    monkeypatch.setattr(kdtree_module, "_MAX_WINDOW_ENTRIES", 8)
    x = np.array([[i % 4, i // 4] for i in range(24)], dtype=np.float64)
    expected, _ = brute_knn(x, 5)
    edge_index, _ = knn_graph(torch.from_numpy(x), 5, method="kdtree")
    np.testing.assert_array_equal(edge_index[0].view(24, 5).numpy(), expected)


@settings(max_examples=40, deadline=None)
@given(points=grid_points, data=st.data())
def test_knn_batches_never_cross(points, data):
    x = np.array(points, dtype=np.float64)
    n = len(x)
    batch = np.array(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    smallest = np.bincount(batch)[np.unique(batch)].min()
    if smallest < 2:
        return
    k = data.draw(st.integers(1, smallest - 1))
    expected, _ = brute_knn(x, k, batch=batch)
    for method, chunk in PATHS[:2]:
        edge_index, _ = knn_graph(
            torch.from_numpy(x), k, batch=torch.from_numpy(batch), method=method, chunk_size=chunk
        )
        source, target = edge_index.numpy()
        assert (batch[source] == batch[target]).all()
        np.testing.assert_array_equal(source.reshape(n, k), expected)


@settings(max_examples=60, deadline=None)
@given(points=grid_points, data=st.data())
def test_radius_matches_all_pairs_within_r(points, data):
    x = np.array(points, dtype=np.float64)
    n = len(x)
    r = data.draw(st.sampled_from([0.0, 1.0, 2**0.5, 1.5, 2.0, 3.0, 10.0]))
    include_self = data.draw(st.booleans())
    cap = data.draw(st.none() | st.integers(1, 4))
    batch = data.draw(st.none() | st.lists(st.integers(0, 1), min_size=n, max_size=n))
    batch = None if batch is None else np.array(batch)
    exp_source, exp_target, exp_dist = brute_radius(
        x, r, include_self=include_self, batch=batch, cap=cap
    )
    for method, chunk in PATHS:
        edge_index, dist = radius_graph(
            torch.from_numpy(x),
            r,
            include_self=include_self,
            max_num_neighbors=cap,
            batch=None if batch is None else torch.from_numpy(batch),
            method=method,
            chunk_size=chunk,
        )
        np.testing.assert_array_equal(edge_index[0].numpy(), exp_source)
        np.testing.assert_array_equal(edge_index[1].numpy(), exp_target)
        np.testing.assert_array_equal(dist.numpy(), exp_dist)
        if cap is None:  # uncapped radius graphs are symmetric
            pairs = set(map(tuple, edge_index.t().tolist()))
            assert pairs == {(t, s) for s, t in pairs}


def test_radius_random_points_against_cdist():
    coords = torch.rand(200, 3, generator=torch.Generator().manual_seed(0))
    full = torch.cdist(coords.double(), coords.double())
    r = 0.2
    expected = {(j, i) for i, j in (full <= r).nonzero().tolist() if i != j}
    for method in ("kdtree", "torch"):
        edge_index, dist = radius_graph(coords, r, method=method, chunk_size=None)
        assert set(map(tuple, edge_index.t().tolist())) == expected
        torch.testing.assert_close(dist.double(), full[edge_index[1], edge_index[0]])


def test_dtypes_and_array_inputs():
    ints = [[0, 0], [0, 1], [5, 5]]
    edge_index, dist = knn_graph(ints, 1)  # nested lists of ints: default float dtype
    assert dist.dtype == torch.get_default_dtype()
    assert edge_index.tolist() == [[1, 0, 1], [0, 1, 2]]
    _, dist64 = knn_graph(np.array(ints, dtype=np.float64), 1)
    assert dist64.dtype == torch.float64
    assert edge_index.dtype == torch.long


def test_device_paths_agree(device):
    x = torch.tensor([[i % 5, i // 5] for i in range(25)], dtype=torch.float32)
    ref_index, ref_dist = knn_graph(x, 6, method="kdtree")
    edge_index, dist = knn_graph(x.to(device), 6)  # auto: kdtree on CPU, torch on CUDA
    assert edge_index.device == x.to(device).device and dist.device == edge_index.device
    assert torch.equal(edge_index.cpu(), ref_index)
    assert torch.equal(dist.cpu(), ref_dist)
    forced, _ = knn_graph(x.to(device), 6, method="torch", chunk_size=4)
    assert torch.equal(forced.cpu(), ref_index)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"coords": torch.tensor([[0.0], [float("nan")], [1.0]]), "k": 1}, "finite.*row 1"),
        ({"coords": torch.zeros(5), "k": 1}, r"2-D tensor \[N, D\].*reshape\(-1, 1\)"),
        ({"coords": torch.zeros(2, 2, 2), "k": 1}, r"coords: expected a 2-D"),
        ({"coords": torch.zeros(0, 2), "k": 1}, "at least one point"),
        ({"coords": torch.zeros(5, 2), "k": 5}, r"k <= N - 1 = 4 \(N = 5 points\), got k = 5"),
        ({"coords": torch.zeros(5, 2), "k": 0}, "k: expected 1 <="),
        ({"coords": torch.zeros(5, 2), "k": 2.0}, "k: expected an integer"),
        ({"coords": torch.zeros(5, 2), "k": 1, "method": "ball"}, "method: expected one of"),
        ({"coords": torch.zeros(5, 2), "k": 1, "chunk_size": 0}, "chunk_size: expected"),
        (
            {"coords": torch.zeros(5, 2), "k": 1, "method": "kdtree", "chunk_size": 2},
            "only the torch path",
        ),
        (
            {"coords": torch.zeros(5, 2), "k": 2, "batch": torch.tensor([0, 0, 1, 1, 1])},
            "smallest batch group has N = 2",
        ),
        ({"coords": torch.zeros(5, 2), "k": 1, "batch": torch.zeros(4)}, r"batch: expected"),
        ({"coords": torch.zeros(5, 2, dtype=torch.bool), "k": 1}, "real coordinates"),
    ],
)
def test_knn_bad_input(kwargs, match):
    with pytest.raises(GraphDataError, match=match):
        knn_graph(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"r": -1.0}, r"r: expected a finite radius >= 0, got r = -1.0"),
        ({"r": float("nan")}, "r: expected a finite radius"),
        ({"r": "1"}, "r: expected a finite number"),
        ({"r": 1.0, "max_num_neighbors": 0}, "max_num_neighbors: expected"),
    ],
)
def test_radius_bad_input(kwargs, match):
    with pytest.raises(GraphDataError, match=match):
        radius_graph(torch.zeros(4, 2), **kwargs)
    with pytest.raises(GraphDataError, match="coords: expected at least one point"):
        radius_graph(torch.zeros(0, 3), 1.0)


def test_include_self_allows_k_equal_n():
    edge_index, dist = knn_graph(torch.tensor([[0.0], [2.0]]), 2, include_self=True)
    assert edge_index.tolist() == [[0, 1, 1, 0], [0, 0, 1, 1]]
    assert dist.tolist() == [0.0, 2.0, 0.0, 2.0]


def test_public_signatures_keyword_only_after_two():
    for fn in (knn_graph, radius_graph):
        params = list(inspect.signature(fn).parameters.values())
        assert [p.name for p in params[:2]] in (["coords", "k"], ["coords", "r"])
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[2:])


@pytest.mark.parametrize("method", ["kdtree", "torch"])
@pytest.mark.parametrize(
    "coords",
    [
        torch.tensor([[-1e200], [1e200]], dtype=torch.float64),
        torch.tensor([[-3e38], [3e38]], dtype=torch.float32),
        torch.tensor([[-6e4], [6e4]], dtype=torch.float16),
    ],
)
def test_coordinates_whose_distances_overflow_are_refused(coords, method):
    # Finite coordinates whose distances overflow gave inf distances, and the k-NN graph gave a
    # point itself as its neighbour (inf also marks excluded candidates); radius_graph ended in
    # a bare scipy ValueError.
    with pytest.raises(GraphDataError, match="coords: expected coordinates whose distances"):
        knn_graph(coords, 1, method=method)
    with pytest.raises(GraphDataError, match="coords: expected coordinates whose distances"):
        radius_graph(coords, 1.0, method=method)


def test_large_but_safe_coordinates_keep_working():
    coords = torch.tensor([[0.0], [6e4]], dtype=torch.float16)
    edge_index, distance = knn_graph(coords, 1)
    assert edge_index.tolist() == [[1, 0], [0, 1]] and distance.tolist() == [6e4, 6e4]
