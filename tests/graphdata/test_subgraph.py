from __future__ import annotations

import networkx as nx
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from graphdata import _adjacency
from graphdata.errors import GraphDataError
from graphdata.subgraph import (
    EnclosingSubgraph,
    enclosing_subgraph_chunks,
    k_hop_enclosing_subgraph,
    k_hop_enclosing_subgraphs,
)


@st.composite
def graphs_with_pairs(draw, max_nodes=10, max_edges=24, max_pairs=4):
    """A random multigraph (loops, parallel edges) with distinct-endpoint pairs and relations."""
    n = draw(st.integers(2, max_nodes))
    edges = draw(
        st.lists(
            st.tuples(st.integers(0, n - 1), st.integers(0, 2), st.integers(0, n - 1)),
            max_size=max_edges,
        )
    )
    pair = st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True)
    pairs = draw(st.lists(pair, min_size=1, max_size=max_pairs))
    relations = draw(st.lists(st.integers(0, 2), min_size=len(pairs), max_size=len(pairs)))
    edge_index = torch.tensor([[h for h, _, _ in edges], [t for *_, t in edges]], dtype=torch.long)
    return (
        edge_index.reshape(2, len(edges)),
        torch.tensor([r for _, r, _ in edges], dtype=torch.long),
        n,
        torch.tensor(pairs, dtype=torch.long),
        torch.tensor(relations, dtype=torch.long),
    )


def brute_force(edge_index, edge_type, n, head, tail, k, mode, removed):
    """Oracle: networkx shortest path lengths on the undirected multigraph, induced edges."""
    graph = nx.MultiGraph()
    graph.add_nodes_from(range(n))
    kept = [e for e in range(edge_index.size(1)) if e not in removed]
    graph.add_edges_from((int(edge_index[0, e]), int(edge_index[1, e]), e) for e in kept)
    d_head = nx.single_source_shortest_path_length(graph, head, cutoff=k)
    d_tail = nx.single_source_shortest_path_length(graph, tail, cutoff=k)
    if mode == "intersection":
        nodes = (d_head.keys() & d_tail.keys()) | {head, tail}
    else:
        nodes = d_head.keys() | d_tail.keys()
    edges = [e for e in kept if int(edge_index[0, e]) in nodes and int(edge_index[1, e]) in nodes]
    # The documented order: by head id, tail id, then edge id.
    edges.sort(key=lambda e: (int(edge_index[0, e]), int(edge_index[1, e]), e))
    return nodes, d_head, d_tail, edges


def check_against_oracle(sub: EnclosingSubgraph, edge_index, edge_type, oracle, head, tail):
    nodes, d_head, d_tail, edges = oracle
    got = sub.nodes.tolist()
    assert got[:2] == [head, tail] and got[2:] == sorted(got[2:]) and set(got) == nodes
    assert len(got) == len(nodes) == sub.num_nodes
    assert sub.dist_head.tolist() == [d_head.get(v, -1) for v in got]
    assert sub.dist_tail.tolist() == [d_tail.get(v, -1) for v in got]
    assert sub.edge_id.tolist() == edges and sub.num_edges == len(edges)
    # Relabelled edges map back to the original ones.
    assert torch.equal(sub.nodes[sub.edge_index], edge_index[:, sub.edge_id])
    assert torch.equal(sub.edge_type, edge_type[sub.edge_id])


def test_hand_built_example(device):
    # 0 -a-> 1 -b-> 2 -c-> 3 -a-> 4, plus 0 -d-> 2 (the target triple) and 5 -b-> 0.
    edge_index = torch.tensor([[0, 1, 2, 3, 0, 5], [1, 2, 3, 4, 2, 0]], device=device)
    edge_type = torch.tensor([0, 1, 2, 0, 3, 1], device=device)
    sub = k_hop_enclosing_subgraph(0, 2, edge_index, edge_type, 6, k=1)
    assert sub.nodes.tolist() == [0, 2, 1]  # 5 and 3 are each within 1 hop of one end only
    assert sub.edge_id.tolist() == [0, 4, 1] and sub.edge_type.tolist() == [0, 3, 1]
    assert sub.edge_index.tolist() == [[0, 0, 2], [2, 1, 1]]
    assert sub.dist_head.tolist() == [0, 1, 1] and sub.dist_tail.tolist() == [1, 0, 1]
    assert sub.nodes.device == edge_index.device
    # Without the target triple 0 -d-> 2 the ends are 2 hops apart; 3 and 5 are 3 hops away.
    sub = k_hop_enclosing_subgraph(0, 2, edge_index, edge_type, 6, k=2, exclude_triples=(0, 3, 2))
    assert sub.nodes.tolist() == [0, 2, 1] and sub.edge_id.tolist() == [0, 1]
    assert sub.dist_head.tolist() == [0, 2, 1] and sub.dist_tail.tolist() == [2, 0, 1]
    union = k_hop_enclosing_subgraph(0, 2, edge_index, edge_type, 6, k=1, mode="union")
    assert union.nodes.tolist() == [0, 2, 1, 3, 5] and union.edge_id.tolist() == [0, 4, 1, 2, 5]
    assert union.dist_head.tolist() == [0, 1, 1, -1, 1]
    assert union.dist_tail.tolist() == [1, 0, 1, 1, -1]


@settings(max_examples=40, deadline=None)
@given(
    graph=graphs_with_pairs(),
    k=st.integers(0, 3),
    mode=st.sampled_from(["intersection", "union"]),
    data=st.data(),
)
def test_batch_matches_networkx(graph, k, mode, data):
    edge_index, edge_type, n, pairs, relations = graph
    num_edges = edge_index.size(1)
    excluded = data.draw(st.sets(st.integers(0, max(num_edges - 1, 0)), max_size=num_edges // 4))
    exclude = torch.tensor(sorted(excluded), dtype=torch.long)
    batch = k_hop_enclosing_subgraphs(
        pairs,
        edge_index,
        edge_type,
        n,
        k=k,
        mode=mode,
        target_relations=relations,
        exclude_edges=exclude,
    )
    assert len(batch) == len(pairs)
    assert torch.equal(batch.nodes[batch.edge_index], edge_index[:, batch.edge_id])
    assert torch.equal(batch.nodes[batch.head_index], pairs[:, 0])
    assert torch.equal(batch.nodes[batch.tail_index], pairs[:, 1])
    assert torch.equal(batch.batch.bincount(minlength=len(pairs)), batch.node_ptr.diff())
    for b, ((head, tail), r) in enumerate(zip(pairs.tolist(), relations.tolist())):
        own = {
            e
            for e in range(num_edges)
            if (int(edge_index[0, e]), int(edge_type[e]), int(edge_index[1, e])) == (head, r, tail)
        }
        oracle = brute_force(edge_index, edge_type, n, head, tail, k, mode, excluded | own)
        check_against_oracle(batch[b], edge_index, edge_type, oracle, head, tail)
        # The single-pair function with the triple excluded globally agrees.
        single = k_hop_enclosing_subgraph(
            head,
            tail,
            edge_index,
            edge_type,
            n,
            k=k,
            mode=mode,
            exclude_edges=exclude,
            exclude_triples=(head, r, tail),
        )
        for field in ("nodes", "edge_index", "edge_id", "dist_head", "dist_tail"):
            assert torch.equal(getattr(single, field), getattr(batch[b], field))


@settings(max_examples=20, deadline=None)
@given(graph=graphs_with_pairs(), k=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_invariant_under_edge_permutation(graph, k, seed):
    edge_index, edge_type, n, pairs, _ = graph
    perm = torch.randperm(edge_index.size(1), generator=torch.Generator().manual_seed(seed))
    for mode in ("intersection", "union"):
        base = k_hop_enclosing_subgraphs(pairs, edge_index, edge_type, n, k=k, mode=mode)
        moved = k_hop_enclosing_subgraphs(
            pairs, edge_index[:, perm], edge_type[perm], n, k=k, mode=mode
        )
        assert torch.equal(base.nodes, moved.nodes) and torch.equal(base.node_ptr, moved.node_ptr)
        assert torch.equal(base.dist_head, moved.dist_head)
        assert torch.equal(base.dist_tail, moved.dist_tail)
        for b in range(len(pairs)):
            assert sorted(perm[moved[b].edge_id].tolist()) == sorted(base[b].edge_id.tolist())


@settings(max_examples=20, deadline=None)
@given(graph=graphs_with_pairs(), k=st.integers(0, 3))
def test_intersection_is_inside_union(graph, k):
    edge_index, edge_type, n, pairs, _ = graph
    inter = k_hop_enclosing_subgraphs(pairs, edge_index, edge_type, n, k=k)
    union = k_hop_enclosing_subgraphs(pairs, edge_index, edge_type, n, k=k, mode="union")
    for b in range(len(pairs)):
        assert set(inter[b].nodes.tolist()) <= set(union[b].nodes.tolist())
        assert set(inter[b].edge_id.tolist()) <= set(union[b].edge_id.tolist())
        # Inside the intersection every node but the ends is within k of both ends.
        d = torch.stack([inter[b].dist_head, inter[b].dist_tail])[:, 2:]
        assert bool(((d >= 0) & (d <= k)).all())


def test_batch_indexing():
    edge_index = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]])
    batch = k_hop_enclosing_subgraphs(
        torch.tensor([[0, 2], [1, 3]]), edge_index, torch.zeros(4, dtype=torch.long), k=1
    )
    assert batch[-1].nodes.tolist() == batch[1].nodes.tolist() == [1, 3, 0, 2]
    assert batch.edge_ptr.tolist() == [0, 4, 8] and batch[1].edge_index.min() == 0
    with pytest.raises(IndexError, match="out of range for a batch of 2"):
        batch[2]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"pairs": torch.tensor([[1, 1]])}, r"head != tail .*pairs\[pairs\[:, 0\] != pairs"),
        ({"pairs": torch.tensor([0, 2])}, r"pairs: expected a LongTensor of shape \[B, 2\]"),
        ({"pairs": torch.tensor([[0, 7]])}, r"pairs: expected node ids in \[0, 4\)"),
        ({"pairs": torch.tensor([[0.0, 2.0]])}, "pairs: expected dtype torch.long"),
        ({"k": -1}, "k: expected an int >= 0"),
        ({"mode": "both"}, r"mode: expected one of \('intersection', 'union'\)"),
        ({"target_relations": torch.tensor([0, 1])}, r"target_relations: .*\[B\] = \(1,\)"),
        ({"exclude_edges": torch.tensor([0.5])}, "exclude_edges: expected dtype"),
        ({"num_nodes": 3}, r"edge_index: expected node ids in \[0, 3\)"),
    ],
)
def test_bad_input_is_named(kwargs, match):
    args = {"pairs": torch.tensor([[0, 2]]), "num_nodes": 4} | kwargs
    pairs, num_nodes = args.pop("pairs"), args.pop("num_nodes")
    edge_index = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]])
    with pytest.raises(GraphDataError, match=match):
        k_hop_enclosing_subgraphs(
            pairs, edge_index, torch.zeros(4, dtype=torch.long), num_nodes, **args
        )


def _random_pairs_graph(seed: int) -> tuple[torch.Tensor, ...]:
    """A random 9-node, 30-edge graph with 3 relations, 7 pairs and a relation per pair."""
    gen = torch.Generator().manual_seed(seed)
    edge_index = torch.randint(0, 9, (2, 30), generator=gen)
    edge_type = torch.randint(0, 3, (30,), generator=gen)
    pairs = torch.tensor([[0, 1], [2, 3], [4, 5], [6, 7], [8, 0], [1, 5], [3, 7]])
    return edge_index, edge_type, pairs, torch.randint(0, 3, (7,), generator=gen)


def test_chunks_of_pairs_give_the_same_batch(monkeypatch):
    # Large batches are cut into chunks of pairs (bounded distance tables); the merge must not
    # show: same nodes, pointers, relabelled edges and distances as one chunk.
    edge_index, edge_type, pairs, relations = _random_pairs_graph(0)
    one = k_hop_enclosing_subgraphs(pairs, edge_index, edge_type, 9, target_relations=relations)
    monkeypatch.setattr(_adjacency, "PAIR_CHUNK_ENTRIES", 2 * 9)  # two pairs per chunk
    many = k_hop_enclosing_subgraphs(pairs, edge_index, edge_type, 9, target_relations=relations)
    for field in (
        "nodes",
        "node_ptr",
        "edge_index",
        "edge_type",
        "edge_id",
        "edge_ptr",
        "dist_head",
        "dist_tail",
    ):
        assert torch.equal(getattr(one, field), getattr(many, field))


def test_streamed_chunks_are_the_batch_pair_by_pair():
    # enclosing_subgraph_chunks yields chunks of at most max_pairs pairs whose subgraphs are
    # the whole batch's, pair by pair, at the right offsets.
    edge_index, edge_type, pairs, relations = _random_pairs_graph(1)
    whole = k_hop_enclosing_subgraphs(pairs, edge_index, edge_type, 9, target_relations=relations)
    chunks = list(
        enclosing_subgraph_chunks(
            pairs, edge_index, edge_type, 9, target_relations=relations, max_pairs=3
        )
    )
    assert [(start, len(batch)) for start, batch in chunks] == [(0, 3), (3, 3), (6, 1)]
    for start, batch in chunks:
        for b in range(len(batch)):
            got, expected = batch[b], whole[start + b]
            for field in ("nodes", "edge_index", "edge_type", "edge_id"):
                assert torch.equal(getattr(got, field), getattr(expected, field))


def test_single_pair_errors_name_head_and_tail():
    edge_index, edge_type = torch.tensor([[0, 1], [1, 2]]), torch.zeros(2, dtype=torch.long)
    with pytest.raises(GraphDataError, match="tail: expected a node different from head"):
        k_hop_enclosing_subgraph(1, 1, edge_index, edge_type)
    with pytest.raises(GraphDataError, match=r"head: expected node ids in \[0, 3\)"):
        k_hop_enclosing_subgraph(5, 1, edge_index, edge_type)
    with pytest.raises(GraphDataError, match="tail: expected an int >= 0"):
        k_hop_enclosing_subgraph(0, 1.5, edge_index, edge_type)
    with pytest.raises(GraphDataError, match="exclude_triples: expected one .* shape"):
        k_hop_enclosing_subgraph(0, 2, edge_index, edge_type, exclude_triples=(0, 1))
