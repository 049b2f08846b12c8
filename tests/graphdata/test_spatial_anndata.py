"""AnnData wrappers: squidpy layout, write/read round trip, libraries, real slide, bad input."""

from __future__ import annotations

import inspect
import logging

import anndata as ad
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import torch

from graphdata.errors import GraphDataError
from graphdata.spatial import knn_graph, radius_graph
from graphdata.spatial_anndata import (
    spatial_graph,
    spatial_neighbors_knn,
    spatial_neighbors_radius,
)

SLIDE = "spatial/GSM4284326_P10_ST_rep2.h5ad"


def make_adata(n=40, seed=0, libraries=None):
    rng = np.random.default_rng(seed)
    obs = pd.DataFrame(index=[f"cell{i}" for i in range(n)])
    if libraries is not None:
        obs["library"] = pd.Categorical(libraries)
    return ad.AnnData(obs=obs, obsm={"spatial": rng.random((n, 2)) * 100})


def edge_set(edge_index):
    return set(map(tuple, edge_index.t().tolist()))


def test_knn_write_layout_matches_squidpy_and_reads_back(caplog):
    adata = make_adata()
    with caplog.at_level(logging.INFO, logger="graphdata.spatial_anndata"):
        spatial_neighbors_knn(adata, k=5)
    assert "added obsp['spatial_connectivities']" in caplog.text
    conn = adata.obsp["spatial_connectivities"]
    dist = adata.obsp["spatial_distances"]
    assert isinstance(conn, sp.csr_matrix) and conn.dtype == np.float32
    assert isinstance(dist, sp.csr_matrix) and dist.dtype == np.float64
    assert np.diff(conn.indptr).tolist() == [5] * 40  # row i = the 5 neighbours of i
    assert set(conn.data.tolist()) == {1.0}
    assert (conn != 0).toarray().tolist() == (dist != 0).toarray().tolist()
    # oracle: the tensor function, and the true distances
    edge_index, distance = knn_graph(torch.from_numpy(adata.obsm["spatial"]), 5)
    source, target = edge_index.numpy()
    assert (conn[target, source] == 1).all()
    np.testing.assert_allclose(np.asarray(dist[target, source]).ravel(), distance.numpy())
    coords = adata.obsm["spatial"]
    np.testing.assert_allclose(
        distance.numpy(), np.linalg.norm(coords[source] - coords[target], axis=1)
    )
    # reader: PyG orientation (source = neighbour j, target = centre i)
    read_index, weight = spatial_graph(adata)
    assert edge_set(read_index) == edge_set(edge_index)
    assert weight.dtype == torch.float32 and torch.all(weight == 1)
    assert spatial_graph(adata, dtype=torch.float64)[1].dtype == torch.float64


def test_params_recorded_exactly():
    adata = make_adata(libraries=["a"] * 20 + ["b"] * 20)
    spatial_neighbors_knn(adata, k=3, library_key="library", key_added="sp")
    assert adata.uns["sp_neighbors"] == {
        "connectivities_key": "sp_connectivities",
        "distances_key": "sp_distances",
        "params": {
            "n_neighbors": 3,
            "coord_type": "generic",
            "radius": None,
            "transform": None,
            "mode": "knn",
            "spatial_key": "spatial",
            "library_key": "library",
        },
    }
    spatial_neighbors_radius(adata, 12.5, max_num_neighbors=4)
    assert adata.uns["spatial_neighbors"]["params"] == {
        "n_neighbors": None,
        "coord_type": "generic",
        "radius": 12.5,
        "transform": None,
        "mode": "radius",
        "max_num_neighbors": 4,
        "spatial_key": "spatial",
        "library_key": None,
    }
    assert set(adata.obsp.keys()) == {
        "sp_connectivities",
        "sp_distances",
        "spatial_connectivities",
        "spatial_distances",
    }


def test_h5ad_round_trip(tmp_path):
    adata = make_adata(n=30)
    spatial_neighbors_knn(adata, k=4)
    before = spatial_graph(adata)
    adata.write_h5ad(tmp_path / "graph.h5ad")
    back = ad.read_h5ad(tmp_path / "graph.h5ad")
    after = spatial_graph(back)
    assert torch.equal(before[0], after[0]) and torch.equal(before[1], after[1])
    assert back.uns["spatial_neighbors"]["params"]["n_neighbors"] == 4


def test_libraries_never_connect_and_match_per_library_graphs():
    # Two sections with identical coordinates, interleaved in obs order: without library_key
    # every spot's nearest neighbour would be its twin in the other section.
    rng = np.random.default_rng(3)
    coords = rng.random((25, 2))
    order = rng.permutation(50)
    labels = np.array(["s1"] * 25 + ["s2"] * 25)[order]
    adata = ad.AnnData(
        obs=pd.DataFrame(
            {"library": pd.Categorical(labels, categories=["s1", "s2", "unused"])},
            index=[f"spot{i}" for i in range(50)],
        ),
        obsm={"spatial": np.vstack([coords, coords])[order]},
    )
    spatial_neighbors_knn(adata, k=4, library_key="library")
    edge_index, _ = spatial_graph(adata)
    lib = adata.obs["library"].to_numpy()
    assert (lib[edge_index[0].numpy()] == lib[edge_index[1].numpy()]).all()
    for name in ("s1", "s2"):
        members = np.flatnonzero(lib == name)
        sub_index, _ = knn_graph(torch.from_numpy(adata.obsm["spatial"][members]), 4)
        expected = {(members[s], members[t]) for s, t in edge_set(sub_index)}
        got = {(s, t) for s, t in edge_set(edge_index) if lib[t] == name}
        assert got == expected
    unseparated = make_adata(n=50)
    unseparated.obsm["spatial"] = adata.obsm["spatial"]
    spatial_neighbors_knn(unseparated, k=1)
    twins = spatial_graph(unseparated)[0]
    assert (lib[twins[0].numpy()] != lib[twins[1].numpy()]).all()  # the control: they do mix


def test_radius_wrapper_matches_radius_graph_and_is_symmetric():
    adata = make_adata(n=60, libraries=["a"] * 30 + ["b"] * 30)
    spatial_neighbors_radius(adata, 20.0, library_key="library")
    conn = adata.obsp["spatial_connectivities"]
    assert (conn != conn.T).nnz == 0
    batch = torch.tensor([0] * 30 + [1] * 30)
    edge_index, distance = radius_graph(torch.from_numpy(adata.obsm["spatial"]), 20.0, batch=batch)
    assert edge_set(spatial_graph(adata)[0]) == edge_set(edge_index)
    dist = adata.obsp["spatial_distances"]
    source, target = edge_index.numpy()
    np.testing.assert_allclose(np.asarray(dist[target, source]).ravel(), distance.numpy())


def test_reader_follows_uns_connectivities_key():
    adata = make_adata(n=10)
    adata.obsp["custom_graph"] = sp.csr_matrix(
        (np.array([1.0, 0.5, 0.0]), (np.array([0, 2, 3]), np.array([1, 0, 4]))), shape=(10, 10)
    )
    adata.uns["mine_neighbors"] = {"connectivities_key": "custom_graph"}
    edge_index, weight = spatial_graph(adata, key="mine")
    # entry (row i, column j) -> edge j -> i; the explicit zero is not an edge
    assert edge_index.tolist() == [[1, 0], [0, 2]]
    assert weight.tolist() == [1.0, 0.5]


@pytest.mark.filterwarnings("ignore::anndata.OldFormatWarning")
def test_real_slide_k6(datasets_dir):
    adata = ad.read_h5ad(datasets_dir / SLIDE)
    assert "spatial" not in adata.obsm
    # The spots sit on a checkerboard of the (row, col) array (row + col even): a hexagonal
    # lattice once rows are scaled by sqrt(3), where every interior spot has its 6 neighbours
    # at distance exactly 2 (in unscaled array units 4 are at sqrt(2) and 4 tie at 2).
    assert ((adata.obs["row"] + adata.obs["col"]) % 2 == 0).all()
    adata.obsm["spatial"] = np.c_[adata.obs["col"], np.sqrt(3) * adata.obs["row"]]
    spatial_neighbors_knn(adata, k=6)
    conn = adata.obsp["spatial_connectivities"]
    dist = adata.obsp["spatial_distances"]
    assert adata.n_obs == 621
    assert (np.diff(conn.indptr) == 6).all()  # 6 neighbours per spot
    rows = [np.sort(dist[i].data) for i in range(adata.n_obs)]
    hexagon = [r for r in rows if np.allclose(r, 2.0)]
    assert len(hexagon) == 509  # interior spots: the full hexagonal ring
    np.testing.assert_allclose(np.median(dist.data), 2.0)
    # brute-force oracle of the tie-break rule on the real coordinates
    coords = adata.obsm["spatial"]
    full = np.linalg.norm(coords[:, None] - coords[None], axis=-1)
    np.fill_diagonal(full, np.inf)
    index = np.broadcast_to(np.arange(adata.n_obs), full.shape)
    expected = np.sort(np.lexsort((index, full), axis=1)[:, :6], axis=1)
    assert (conn.indices.reshape(-1, 6) == expected).all()


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (
            lambda a: spatial_neighbors_knn(a, spatial_key="xy"),
            KeyError,
            r"obsm\['xy'\]: no spatial coordinates.*available: \['spatial'\]",
        ),
        (
            lambda a: spatial_neighbors_knn(a, library_key="slide"),
            KeyError,
            r"obs\['slide'\]: no library column",
        ),
        (
            lambda a: spatial_graph(a),
            KeyError,
            r"obsp\['spatial_connectivities'\].*run .*spatial_neighbors_knn\(adata",
        ),
        (
            lambda a: spatial_neighbors_knn(a, k=6, library_key="library"),
            GraphDataError,
            r"k: expected k <= N - 1 = 2 where N = 3 observations in library 'b' of "
            r"obs\['library'\], got k = 6",
        ),
        (lambda a: spatial_neighbors_knn(a, k=0), GraphDataError, "k: expected an integer >= 1"),
        (
            lambda a: spatial_neighbors_radius(a, -2.0),
            GraphDataError,
            r"radius: expected a finite radius >= 0.*got -2.0",
        ),
    ],
)
def test_bad_input(call, error, match):
    adata = make_adata(n=10, libraries=["a"] * 7 + ["b"] * 3)
    with pytest.raises(error, match=match):
        call(adata)


def test_bad_coordinates_and_labels_name_the_slot():
    adata = make_adata(n=10, libraries=["a"] * 5 + [np.nan] * 5)
    adata.obsm["spatial"][3, 1] = np.nan
    with pytest.raises(GraphDataError, match=r"obsm\['spatial'\]: expected finite.*row 3"):
        spatial_neighbors_knn(adata, k=2)
    adata.obsm["spatial"][3, 1] = 0.0
    with pytest.raises(GraphDataError, match=r"obs\['library'\] has 5 missing labels"):
        spatial_neighbors_knn(adata, k=2, library_key="library")
    adata.obsm["flat"] = np.zeros((10, 2, 2))
    with pytest.raises(GraphDataError, match=r"obsm\['flat'\]: expected a 2-D"):
        spatial_neighbors_knn(adata, k=2, spatial_key="flat")
    empty = ad.AnnData(obsm={"spatial": np.zeros((0, 2))})
    with pytest.raises(GraphDataError, match=r"obsm\['spatial'\]: expected at least one"):
        spatial_neighbors_radius(empty, 1.0)


def test_public_signatures():
    expected = {
        spatial_neighbors_knn: ["adata", "k"],
        spatial_neighbors_radius: ["adata", "radius"],
        spatial_graph: ["adata"],
    }
    for fn, positional in expected.items():
        params = list(inspect.signature(fn).parameters.values())
        assert [p.name for p in params[: len(positional)]] == positional
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[len(positional) :])
        assert inspect.signature(fn).return_annotation in ("None", "tuple[Tensor, Tensor]")


@pytest.mark.parametrize("key_added", ["", "a/b", None, 3])
def test_key_added_that_h5ad_cannot_hold_is_refused(key_added):
    # "a/b" wrote obsp["a/b_connectivities"], and the .h5ad written after it no longer read;
    # "" and None gave "_connectivities" and "None_connectivities".
    adata = make_adata(n=6)
    with pytest.raises(GraphDataError, match="key_added: expected a non-empty str without '/'"):
        spatial_neighbors_knn(adata, k=2, key_added=key_added)
    with pytest.raises(GraphDataError, match="key_added: expected a non-empty str"):
        spatial_neighbors_radius(adata, 10.0, key_added=key_added)
    assert not adata.obsp.keys()


def test_spatial_graph_refuses_a_non_dict_record_and_non_finite_weights():
    adata = make_adata(n=6)
    spatial_neighbors_knn(adata, k=2)
    adata.obsp["spatial_connectivities"].data[0] = np.nan
    with pytest.raises(GraphDataError, match=r"obsp\['spatial_connectivities'\]: expected finite"):
        spatial_graph(adata)  # the NaN came back as an edge weight
    adata.uns["spatial_neighbors"] = "oops"
    with pytest.raises(GraphDataError, match=r"uns\['spatial_neighbors'\]: expected a dict"):
        spatial_graph(adata)  # an AttributeError before
