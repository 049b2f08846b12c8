import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from graphdata.delaunay import delaunay_graph
from graphdata.errors import GraphDataError


def _empty_circle_edges(points: np.ndarray) -> set[tuple[int, int]]:
    """Brute-force Delaunay edges in 2-D: {i, j} is an edge iff some triangle (i, j, k) has a
    circumcircle with no other point strictly inside (points in general position)."""
    n = len(points)
    edges = set()
    for i in range(n):
        for j in range(i + 1, n):
            for k in range(j + 1, n):
                a, b, c = points[i], points[j], points[k]
                d = 2 * (a[0] * (b[1] - c[1]) + b[0] * (c[1] - a[1]) + c[0] * (a[1] - b[1]))
                if abs(d) < 1e-12:
                    continue
                sq = [p @ p for p in (a, b, c)]
                ux = (sq[0] * (b[1] - c[1]) + sq[1] * (c[1] - a[1]) + sq[2] * (a[1] - b[1])) / d
                uy = (sq[0] * (c[0] - b[0]) + sq[1] * (a[0] - c[0]) + sq[2] * (b[0] - a[0])) / d
                centre = np.array([ux, uy])
                radius = np.linalg.norm(a - centre)
                others = np.delete(points, [i, j, k], axis=0)
                if (np.linalg.norm(others - centre, axis=1) < radius - 1e-9).any():
                    continue
                edges |= {(i, j), (i, k), (j, k)}
    return edges


@given(st.integers(4, 14), st.integers(0, 2**16))
def test_matches_brute_force_empty_circumcircle_edges(n, seed):
    points = np.random.default_rng(seed).random((n, 2))
    edge_index, distance = delaunay_graph(torch.tensor(points))
    got = {tuple(sorted(e)) for e in edge_index.t().tolist()}
    assert got == _empty_circle_edges(points)
    # symmetric, distances exact, sorted by target then distance
    pairs = set(map(tuple, edge_index.t().tolist()))
    assert all((j, i) in pairs for i, j in pairs)
    expected = np.linalg.norm(points[edge_index[0]] - points[edge_index[1]], axis=1)
    np.testing.assert_allclose(distance.numpy(), expected, rtol=0, atol=1e-12)
    key = edge_index[1].double() * 10 + distance
    assert (key[1:] >= key[:-1]).all()


def test_batches_never_connect_and_match_separate_calls():
    rng = np.random.default_rng(0)
    a, b = rng.random((12, 2)), rng.random((9, 2))
    coords = torch.tensor(np.concatenate([a, b]))
    batch = torch.tensor([0] * 12 + [1] * 9)
    edge_index, _ = delaunay_graph(coords, batch=batch)
    assert (batch[edge_index[0]] == batch[edge_index[1]]).all()
    alone_b, _ = delaunay_graph(torch.tensor(b))
    in_b = edge_index[:, batch[edge_index[1]] == 1] - 12
    assert {tuple(e) for e in in_b.t().tolist()} == {tuple(e) for e in alone_b.t().tolist()}


def test_three_d_tetrahedron_is_complete_and_device_follows_input(device):
    coords = torch.tensor([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], device=device)
    edge_index, distance = delaunay_graph(coords)
    assert edge_index.device == coords.device and edge_index.shape == (2, 12)
    assert distance.dtype == torch.float32


@pytest.mark.parametrize(
    ("coords", "match"),
    [
        (torch.rand(5, 1), r"D >= 2 dimensions.*knn_graph\(coords, k=2\)"),
        (torch.rand(2, 2), r"group of 2 point\(s\) cannot be triangulated in 2-D"),
        (torch.tensor([[0.0, 0], [1, 1], [2, 2], [3, 3]]), "degenerate"),
        (torch.tensor([[0.0, float("nan")]] * 4), "finite coordinates"),
    ],
)
def test_bad_input(coords, match):
    with pytest.raises(GraphDataError, match=match):
        delaunay_graph(coords)


def test_anndata_wrapper_writes_squidpy_layout_and_separates_libraries():
    import pandas as pd
    from anndata import AnnData

    from graphdata.spatial_anndata import spatial_neighbors_delaunay

    rng = np.random.default_rng(1)
    coords = rng.random((20, 2))
    adata = AnnData(
        obsm={"spatial": coords},
        obs=pd.DataFrame({"slide": ["a"] * 10 + ["b"] * 10}, index=[f"c{i}" for i in range(20)]),
    )
    spatial_neighbors_delaunay(adata, library_key="slide")
    conn = adata.obsp["spatial_connectivities"]
    assert (conn != conn.T).nnz == 0
    assert conn[:10, 10:].nnz == 0  # libraries never connect
    params = adata.uns["spatial_neighbors"]["params"]
    assert params["mode"] == "delaunay" and params["library_key"] == "slide"
    batch = torch.tensor([0] * 10 + [1] * 10)
    edge_index, distance = delaunay_graph(torch.tensor(coords), batch=batch)
    dist = adata.obsp["spatial_distances"].toarray()
    np.testing.assert_allclose(dist[edge_index[1].numpy(), edge_index[0].numpy()], distance.numpy())


def test_a_coinciding_point_gets_no_edges_as_documented():
    # Qhull triangulates distinct points: of two that coincide one is in no simplex. The
    # other point keeps the neighbours of the square with its centre.
    square = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.4]]
    edge_index, _ = delaunay_graph(torch.tensor([*square, [1.0, 1.0]]))
    nodes = set(edge_index.flatten().tolist())
    assert len(nodes & {3, 5}) == 1 and nodes - {3, 5} == {0, 1, 2, 4}
    kept = (nodes & {3, 5}).pop()
    alone, _ = delaunay_graph(torch.tensor(square))
    renamed = {tuple(kept if v == 3 else v for v in e) for e in alone.t().tolist()}
    assert set(map(tuple, edge_index.t().tolist())) == renamed
