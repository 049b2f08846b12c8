"""DenseGraphBatch: round trips through PyG and networkx, masks, padding and bad input."""

from __future__ import annotations

import inspect

import networkx as nx
import pytest
import torch
from torch_geometric.data import Batch, Data
from torch_geometric.utils import coalesce, to_dense_adj, to_dense_batch

from graphdata.dense import DenseGraph, DenseGraphBatch
from graphdata.errors import GraphDataError


def random_pyg(sizes, *, seed=0, channels=3):
    """Directed weighted graphs whose last node is always isolated (num_nodes set)."""
    generator = torch.Generator().manual_seed(seed)
    graphs = []
    for n in sizes:
        num_edges = 3 * n
        ei = torch.randint(0, max(n - 1, 1), (2, num_edges), generator=generator)
        w = torch.rand(num_edges, generator=generator) + 0.5
        ei, w = coalesce(ei, w, num_nodes=n)  # unique edges, weights summed
        x = torch.randn(n, channels, generator=generator)
        graphs.append(Data(edge_index=ei, edge_weight=w, x=x, num_nodes=n))
    return graphs


def canonical(edge_index, weight):
    order = torch.argsort(edge_index[0] * 10_000 + edge_index[1])
    return edge_index[:, order], weight[order]


def test_from_pyg_matches_pyg_to_dense_adj():
    graphs = random_pyg([4, 7, 1, 5])
    dense = DenseGraphBatch.from_pyg(graphs, edge_weight="edge_weight")
    batch = Batch.from_data_list(graphs)
    # Independent oracle: PyG's own dense conversion of the same batch.
    expected_adj = to_dense_adj(batch.edge_index, batch.batch, batch.edge_weight, max_num_nodes=7)
    expected_x, expected_mask = to_dense_batch(batch.x, batch.batch, max_num_nodes=7)
    torch.testing.assert_close(dense.adj, expected_adj)
    torch.testing.assert_close(dense.x, expected_x)
    assert torch.equal(dense.mask, expected_mask)
    assert dense.num_nodes.tolist() == [4, 7, 1, 5] and dense.num_nodes.dtype == torch.long


def test_pyg_round_trip_keeps_edges_weights_signals_and_isolated_nodes():
    graphs = random_pyg([6, 3, 9], seed=1)
    back = DenseGraphBatch.from_pyg(graphs, edge_weight="edge_weight").to_pyg()
    assert len(back) == 3
    for original, restored in zip(graphs, back):
        assert restored.num_nodes == original.num_nodes  # the isolated last node survives
        ei, w = canonical(original.edge_index, original.edge_weight)
        ei2, w2 = canonical(restored.edge_index, restored.edge_weight)
        assert torch.equal(ei, ei2)
        torch.testing.assert_close(w, w2)
        torch.testing.assert_close(original.x, restored.x)


def test_parallel_edges_sum_and_unweighted_edges_weigh_one():
    data = Data(edge_index=torch.tensor([[0, 0, 1], [1, 1, 2]]), num_nodes=4)
    dense = DenseGraphBatch.from_pyg([data])
    assert dense.x is None
    expected = torch.zeros(1, 4, 4)
    expected[0, 0, 1] = 2.0
    expected[0, 1, 2] = 1.0
    assert torch.equal(dense.adj, expected)
    (back,) = dense.to_pyg(edge_weight=None)
    assert back.edge_index.tolist() == [[0, 1], [1, 2]] and "edge_weight" not in back


def weighted_nx(n, p, seed, *, isolated):
    graph = nx.gnp_random_graph(n, p, seed=seed)
    for u, v in graph.edges:
        graph.edges[u, v]["weight"] = float(u + 2 * v + 1)
    graph.add_nodes_from(range(n, n + isolated))
    for node in graph.nodes:
        graph.nodes[node]["h"] = [float(node), float(node) ** 2]
    return graph


def test_networkx_round_trip_weights_isolated_nodes_and_signals():
    graphs = [
        weighted_nx(5, 0.5, 0, isolated=2),
        weighted_nx(2, 1.0, 1, isolated=0),
        weighted_nx(8, 0.3, 2, isolated=1),
    ]
    dense = DenseGraphBatch.from_networkx(graphs, node_attr="h")
    assert dense.num_nodes.tolist() == [7, 2, 9]
    assert torch.equal(dense.adj, dense.adj.transpose(1, 2))  # undirected -> symmetric
    back = dense.to_networkx(node_attr="h")
    for original, restored in zip(graphs, back):
        assert sorted(restored.nodes) == sorted(original.nodes)
        assert {frozenset(e): w for *e, w in restored.edges(data="weight")} == {
            frozenset(e): w for *e, w in original.edges(data="weight")
        }
        assert dict(restored.nodes(data="h")) == dict(original.nodes(data="h"))


def test_directed_networkx_round_trip_and_multigraph_sums():
    digraph = nx.DiGraph([(0, 1, {"weight": 2.0}), (1, 0, {"weight": 3.0}), (1, 2, {})])
    dense = DenseGraphBatch.from_networkx([digraph])
    assert dense.adj[0].tolist() == [[0.0, 2.0, 0.0], [3.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    (back,) = dense.to_networkx(directed=True)
    assert set(back.edges(data="weight")) == {(0, 1, 2.0), (1, 0, 3.0), (1, 2, 1.0)}
    multi = nx.MultiGraph([(0, 1, {"weight": 2.0}), (0, 1, {"weight": 5.0})])
    assert DenseGraphBatch.from_networkx([multi]).adj[0, 0, 1] == 7.0
    unweighted = DenseGraphBatch.from_networkx([multi], weight=None)
    assert unweighted.adj[0, 0, 1] == 2.0  # two parallel edges of weight 1


def test_from_adjacency_padding_mask_and_indexing():
    a = torch.tensor([[0.0, 0.5], [0.5, 0.0]])
    b = torch.ones(4, 4) - torch.eye(4)
    xs = [torch.ones(2, 3), 2 * torch.ones(4, 3)]
    batch = DenseGraphBatch.from_adjacency([a, b], xs)
    assert batch.adj.shape == (2, 4, 4) and batch.x.shape == (2, 4, 3) and len(batch) == 2
    assert batch.mask.tolist() == [[True, True, False, False], [True] * 4]
    # padding is zero and real entries are untouched
    assert batch.adj[0, 2:].abs().sum() == 0 and batch.adj[0, :, 2:].abs().sum() == 0
    assert batch.x[0, 2:].abs().sum() == 0
    first = batch[0]
    assert isinstance(first, DenseGraph)
    assert torch.equal(first.adj, a) and torch.equal(first.x, xs[0])
    assert torch.equal(batch[-1].adj, b)
    sub = batch[1:]
    assert isinstance(sub, DenseGraphBatch) and sub.num_nodes.tolist() == [4]
    with pytest.raises(IndexError, match="index"):
        batch[2]
    # bool and integer adjacencies become the default float dtype
    assert DenseGraphBatch.from_adjacency([torch.eye(2, dtype=torch.bool)]).adj.dtype == (
        torch.get_default_dtype()
    )


def test_to_device_and_round_trip_on_device(device):
    graphs = [g.to(device) for g in random_pyg([3, 5], seed=4)]
    dense = DenseGraphBatch.from_pyg(graphs, edge_weight="edge_weight")
    assert dense.device.type == device.type
    moved = dense.to("cpu").to(device)
    assert moved.adj.device.type == device.type and moved.mask.device.type == device.type
    back = moved.to_pyg()
    for original, restored in zip(graphs, back):
        assert torch.equal(
            canonical(original.edge_index, original.edge_weight)[0],
            canonical(restored.edge_index, restored.edge_weight)[0],
        )


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: DenseGraphBatch.from_adjacency([]), "adjs: expected at least one graph"),
        (lambda: DenseGraphBatch.from_adjacency([torch.zeros(2, 3)]), r"adjs\[0\]: .*square"),
        (lambda: DenseGraphBatch.from_adjacency([torch.zeros(0, 0)]), "n >= 1"),
        (
            lambda: DenseGraphBatch.from_adjacency([torch.eye(2)], [torch.zeros(3, 1)]),
            r"x\[0\]: expected node signals \[n_b, C\] = \[2, 1\], got shape \(3, 1\)",
        ),
        (
            lambda: DenseGraphBatch.from_adjacency([torch.eye(2)], [torch.zeros(2)]),
            r"unsqueeze\(-1\)",
        ),
        (
            lambda: DenseGraphBatch.from_adjacency(
                [torch.eye(2), torch.eye(3)], [torch.zeros(2, 1), torch.zeros(3, 2)]
            ),
            r"x\[1\]: .*\[3, 1\]",
        ),
        (
            lambda: DenseGraphBatch.from_adjacency([torch.eye(2)], [torch.zeros(2, 1)] * 2),
            "expected a list of 1 matrices",
        ),
        (lambda: DenseGraphBatch.from_pyg([]), "data_list: expected at least one graph"),
        (
            lambda: DenseGraphBatch.from_pyg(
                [Data(edge_index=torch.tensor([[0], [3]]), num_nodes=2)]
            ),
            r"node ids in \[0, 2\).*got range \[0, 3\]",
        ),
        (
            lambda: DenseGraphBatch.from_pyg(
                [Data(edge_index=torch.tensor([[0], [1]]), num_nodes=2)], edge_weight="w"
            ),
            "no attribute 'w'",
        ),
        (
            lambda: DenseGraphBatch.from_pyg(
                [
                    Data(edge_index=torch.tensor([[0], [1]]), x=torch.ones(2, 1)),
                    Data(edge_index=torch.tensor([[0], [1]]), num_nodes=2),
                ]
            ),
            r"x on all graphs or on none, got no x on graphs \[1\]",
        ),
        (lambda: DenseGraphBatch.from_networkx([nx.Graph()]), r"graphs\[0\]: .*>= 1 node"),
        (
            lambda: DenseGraphBatch.from_networkx([nx.path_graph(2)], node_attr="h"),
            "node 0 of graphs\\[0\\] has no attribute 'h'",
        ),
        (
            lambda: DenseGraphBatch.from_adjacency(
                [torch.tensor([[0.0, 1.0], [0.0, 0.0]])]
            ).to_networkx(),
            "non-symmetric adjacency.*directed=True",
        ),
        (
            lambda: DenseGraphBatch.from_adjacency([torch.eye(2)]).to_networkx(node_attr="h"),
            "no node signals",
        ),
        (
            lambda: DenseGraphBatch(torch.zeros(2, 3, 4), None, torch.ones(2, 3, dtype=torch.bool)),
            r"adj: expected a floating tensor \[B, N, N\]",
        ),
        (
            lambda: DenseGraphBatch(torch.zeros(2, 3, 3), None, torch.ones(2, 3)),
            "mask: expected a bool tensor",
        ),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(GraphDataError, match=match):
        call()


def test_public_signatures_keyword_only():
    for fn, positional in [
        (DenseGraphBatch.from_adjacency, ["adjs", "x"]),
        (DenseGraphBatch.from_pyg, ["data_list"]),
        (DenseGraphBatch.from_networkx, ["graphs"]),
        (DenseGraphBatch.to_pyg, ["self"]),
        (DenseGraphBatch.to_networkx, ["self"]),
    ]:
        params = list(inspect.signature(fn).parameters.values())
        assert [p.name for p in params[: len(positional)]] == positional
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[len(positional) :])


@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8])
def test_from_pyg_edge_index_dtypes(dtype):
    # bool and uint8 edge_index indexed as masks: a bare IndexError from index_put_.
    data = Data(edge_index=torch.tensor([[0], [1]]).to(dtype), num_nodes=2)
    if dtype == torch.bool:
        with pytest.raises(GraphDataError, match=r"data_list\[0\].edge_index: expected an integer"):
            DenseGraphBatch.from_pyg([data])
    else:
        assert DenseGraphBatch.from_pyg([data]).adj[0].tolist() == [[0.0, 1.0], [0.0, 0.0]]


def test_non_finite_weights_and_signals_are_refused():
    nan = float("nan")
    with pytest.raises(GraphDataError, match=r"adjs\[0\]: expected finite values"):
        DenseGraphBatch.from_adjacency([torch.tensor([[0.0, nan], [1.0, 0.0]])])
    with pytest.raises(GraphDataError, match=r"x\[0\]: expected finite values"):
        DenseGraphBatch.from_adjacency([torch.eye(2)], x=[torch.tensor([[nan], [1.0]])])
    data = Data(edge_index=torch.tensor([[0], [1]]), w=torch.tensor([float("inf")]), num_nodes=2)
    with pytest.raises(GraphDataError, match=r"data_list\[0\].w: expected finite values"):
        DenseGraphBatch.from_pyg([data], edge_weight="w")
    with pytest.raises(GraphDataError, match=r"graphs\[0\] \(edge attribute 'weight'\)"):
        DenseGraphBatch.from_networkx([nx.Graph([(0, 1, {"weight": nan})])])


def test_bad_networkx_weights_and_dtype_are_named():
    with pytest.raises(GraphDataError, match="weight: expected numeric 'weight' edge attributes"):
        DenseGraphBatch.from_networkx([nx.Graph([(0, 1, {"weight": "x"})])])  # bare ValueError
    with pytest.raises(GraphDataError, match="dtype: expected None or a floating torch dtype"):
        DenseGraphBatch.from_adjacency([torch.eye(2)], dtype=torch.int64)  # blamed `adj`
