from __future__ import annotations

import math
from collections import Counter

import networkx as nx
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from graphdata import _adjacency, _path_search
from graphdata.errors import GraphDataError
from graphdata.paths import Paths, count_paths, enumerate_paths, enumerate_paths_batch


@st.composite
def multigraphs(draw, max_nodes=7, max_edges=16):
    """A random multigraph with loops and parallel edges, plus two distinct nodes."""
    n = draw(st.integers(2, max_nodes))
    edges = draw(
        st.lists(
            st.tuples(st.integers(0, n - 1), st.integers(0, 2), st.integers(0, n - 1)),
            max_size=max_edges,
        )
    )
    source, target = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
    edge_index = torch.tensor([[h for h, _, _ in edges], [t for *_, t in edges]], dtype=torch.long)
    edge_type = torch.tensor([r for _, r, _ in edges], dtype=torch.long)
    return edge_index.reshape(2, len(edges)), edge_type, n, source, target


def networkx_paths(edge_index, source, target, max_length, removed=()):
    """Oracle: networkx's simple edge paths on the undirected MultiGraph (edge key = edge id)."""
    graph = nx.MultiGraph()
    graph.add_nodes_from([source, target])
    for e, (u, v) in enumerate(edge_index.t().tolist()):
        if e not in removed:
            graph.add_edge(u, v, key=e)
    return Counter(
        ((path[0][0],) + tuple(step[1] for step in path), tuple(step[2] for step in path))
        for path in nx.all_simple_edge_paths(graph, source, target, cutoff=max_length)
    )


def as_counter(paths: Paths, edge_index, edge_type) -> Counter:
    """Our paths as (node sequence, edge ids), checking every step against the edge list."""
    out = Counter()
    nodes, eids = paths.nodes.cpu().tolist(), paths.edge_ids.cpu().tolist()
    triples = torch.stack([edge_index[0], edge_type, edge_index[1]], dim=1).tolist()
    for p, (n, steps) in enumerate(zip(paths.length.tolist(), paths.to_list())):
        assert all(x == -1 for x in nodes[p][n + 1 :]) and all(x == -1 for x in eids[p][n:])
        assert len(steps) == n
        for i, (head, rel, tail, fwd) in enumerate(steps):
            assert [head, rel, tail] == triples[eids[p][i]]
            assert (nodes[p][i], nodes[p][i + 1]) == ((head, tail) if fwd else (tail, head))
        out[(tuple(nodes[p][: n + 1]), tuple(eids[p][:n]))] += 1
    return out


def order_keys(paths: Paths) -> list:
    """The documented order: length, then per step (entered node, edge id, forwards first)."""
    return [
        (n, [(nd[i + 1], e[i], not f[i]) for i in range(n)])
        for nd, e, f, n in zip(
            paths.nodes.tolist(),
            paths.edge_ids.tolist(),
            paths.forward.tolist(),
            paths.length.tolist(),
        )
    ]


def test_hand_built_example():
    # 0 -a-> 1 -b-> 2, 2 -c-> 0, 0 -d-> 2 (parallel to c, opposite direction), 1 -e-> 1 (loop).
    edge_index = torch.tensor([[0, 1, 2, 0, 1], [1, 2, 0, 2, 1]])
    edge_type = torch.tensor([10, 11, 12, 13, 14])
    paths = enumerate_paths(edge_index, edge_type, 2, 0, 3)
    assert paths.to_list() == [
        ((2, 12, 0, True),),
        ((0, 13, 2, False),),
        ((1, 11, 2, False), (0, 10, 1, False)),
    ]
    # Three nodes: no simple path has more than 2 steps, so L = 3 is searched and padded to 2.
    assert len(paths) == 3 and paths.max_length == 2 and not paths.truncated
    assert paths.length.tolist() == [1, 1, 2]
    assert paths.nodes.tolist() == [[2, 0, -1], [2, 0, -1], [2, 1, 0]]
    assert paths.relations.tolist() == [[12, -1], [13, -1], [11, 10]]
    assert paths.to_labeled(["x", "y", "z"], {10: "a", 11: "b", 12: "c", 13: "d", 14: "e"})[2] == (
        ("y", "b", "z", False),
        ("x", "a", "y", False),
    )
    assert list(paths) == paths.to_list()


@pytest.mark.parametrize("n, mult, max_length", [(5, 1, 4), (5, 2, 3), (4, 3, 3)])
def test_complete_multigraph_closed_form(device, n, mult, max_length):
    # K_n with every edge doubled `mult` times, random stored directions: the simple paths of
    # length l between two nodes number (n-2)!/(n-1-l)! node sequences, times mult^l edge choices.
    gen = torch.Generator().manual_seed(0)
    pairs = torch.combinations(torch.arange(n), 2).repeat(mult, 1)
    flip = torch.rand(pairs.size(0), generator=gen) < 0.5
    pairs[flip] = pairs[flip].flip(1)
    edge_index = pairs.t().contiguous().to(device)
    edge_type = torch.randint(0, 3, (pairs.size(0),), generator=gen).to(device)
    paths = enumerate_paths(edge_index, edge_type, 0, n - 1, max_length)
    expected = [
        math.factorial(n - 2) // math.factorial(n - 1 - ell) * mult**ell
        for ell in range(1, max_length + 1)
    ]
    assert torch.bincount(paths.length.cpu(), minlength=max_length + 1)[1:].tolist() == expected
    assert paths.nodes.device == edge_index.device
    assert as_counter(paths, edge_index.cpu(), edge_type.cpu()) == networkx_paths(
        edge_index.cpu(), 0, n - 1, max_length
    )


@settings(max_examples=50, deadline=None)
@given(graph=multigraphs(), max_length=st.integers(1, 4), budget=st.sampled_from([1, 3, 1 << 18]))
def test_matches_networkx_all_simple_edge_paths(graph, max_length, budget):
    edge_index, edge_type, n, source, target = graph
    old, _path_search._EXPANSION_BUDGET = _path_search._EXPANSION_BUDGET, budget
    try:
        paths = enumerate_paths(edge_index, edge_type, source, target, max_length, num_nodes=n)
    finally:
        _path_search._EXPANSION_BUDGET = old
    assert as_counter(paths, edge_index, edge_type) == networkx_paths(
        edge_index, source, target, max_length
    )
    assert order_keys(paths) == sorted(order_keys(paths))


@settings(max_examples=40, deadline=None)
@given(graph=multigraphs(), data=st.data())
def test_min_length_keeps_exactly_the_networkx_paths_of_that_many_steps_or_more(graph, data):
    # The documented set: min_length <= l <= L steps (networkx's paths with cutoff L, minus the
    # shorter ones), in the documented order, and max_paths counts over all kept lengths.
    edge_index, edge_type, n, source, target = graph
    max_length = data.draw(st.integers(1, 4))
    min_length = data.draw(st.integers(1, max_length))
    paths = enumerate_paths(
        edge_index, edge_type, source, target, max_length, num_nodes=n, min_length=min_length
    )
    expected = Counter(
        {
            key: count
            for key, count in networkx_paths(edge_index, source, target, max_length).items()
            if len(key[1]) >= min_length
        }
    )
    assert as_counter(paths, edge_index, edge_type) == expected
    assert order_keys(paths) == sorted(order_keys(paths))
    if len(paths) > 1:
        capped = enumerate_paths(
            edge_index,
            edge_type,
            source,
            target,
            max_length,
            num_nodes=n,
            min_length=min_length,
            max_paths=len(paths) - 1,
            on_overflow="truncate",
        )
        assert capped.truncated and order_keys(capped) == order_keys(paths)[:-1]


def _drawn_exclusions(data, num_edges):
    """A drawn set of excluded edges: ``(the set, its ids [M], its mask [E])``."""
    removed = data.draw(st.sets(st.integers(0, max(num_edges - 1, 0)), max_size=num_edges))
    ids = torch.tensor(sorted(removed), dtype=torch.long)
    mask = torch.zeros(num_edges, dtype=torch.bool)
    mask[ids] = True
    return removed, ids, mask


@settings(max_examples=30, deadline=None)
@given(graph=multigraphs(), data=st.data())
def test_exclusions_match_networkx_without_those_edges(graph, data):
    edge_index, edge_type, n, source, target = graph
    num_edges = edge_index.size(1)
    removed, ids, mask = _drawn_exclusions(data, num_edges)
    expected = networkx_paths(edge_index, source, target, 3, removed)
    for kwargs in ({"exclude_edges": ids}, {"exclude_edges": mask}):
        paths = enumerate_paths(edge_index, edge_type, source, target, 3, num_nodes=n, **kwargs)
        assert as_counter(paths, edge_index, edge_type) == expected
    # Excluding triples removes every parallel copy of them.
    triples = torch.stack([edge_index[0], edge_type, edge_index[1]], 1)[ids]
    copies = {
        e
        for e in range(num_edges)
        for tr in triples.tolist()
        if [int(edge_index[0, e]), int(edge_type[e]), int(edge_index[1, e])] == tr
    }
    paths = enumerate_paths(
        edge_index, edge_type, source, target, 3, num_nodes=n, exclude_triples=triples
    )
    assert as_counter(paths, edge_index, edge_type) == networkx_paths(
        edge_index, source, target, 3, copies
    )


@settings(max_examples=60, deadline=None)
@given(graph=multigraphs(max_nodes=8, max_edges=30), data=st.data())
def test_count_paths_is_the_number_networkx_enumerates(graph, data):
    # count_paths against networkx's simple edge paths of exactly that length, with loops,
    # parallel edges and excluded edges (ids or a mask); source == target gives 0.
    edge_index, _, n, source, target = graph
    removed, ids, mask = _drawn_exclusions(data, edge_index.size(1))
    every = networkx_paths(edge_index, source, target, 3, removed)
    expected = [sum(c for key, c in every.items() if len(key[1]) == ell) for ell in (1, 2, 3)]
    for exclude in (ids, mask):
        for most in (1, 2, 3):
            got = count_paths(edge_index, source, target, most, num_nodes=n, exclude_edges=exclude)
            assert got == expected[:most]
    assert count_paths(edge_index, source, source, 3, num_nodes=n) == [0, 0, 0]


@pytest.mark.parametrize("n, mult", [(5, 1), (6, 2), (4, 3)])
def test_count_paths_closed_form_on_complete_multigraphs(n, mult):
    # K_n, every edge `mult` times: (n-2)!/(n-1-l)! node sequences times mult^l edge choices.
    pairs = torch.combinations(torch.arange(n), 2).repeat(mult, 1)
    got = count_paths(pairs.t().contiguous(), 0, n - 1, 3)
    assert got == [
        math.factorial(n - 2) // math.factorial(n - 1 - ell) * mult**ell for ell in (1, 2, 3)
    ]


@pytest.mark.parametrize(
    "args, match",
    [
        ((torch.tensor([[0, 1]]), 0, 1, 2), "edge_index: expected a LongTensor of shape"),
        ((torch.tensor([[0], [1]]), 0, 1, 4), "max_length: expected 1, 2 or 3"),
        ((torch.tensor([[0], [1]]), 0, 1, 0), "max_length"),
        ((torch.tensor([[0], [1]]), 0, 5, 1), "target"),
    ],
)
def test_count_paths_refuses_bad_input(args, match):
    with pytest.raises(GraphDataError, match=match):
        count_paths(*args)


@settings(max_examples=30, deadline=None)
@given(graph=multigraphs(max_nodes=6), data=st.data())
def test_batch_equals_single_calls(graph, data):
    edge_index, edge_type, n, _, _ = graph
    pairs = torch.tensor(
        data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=5)),
        dtype=torch.long,
    ).reshape(-1, 2)
    relations = torch.tensor(
        data.draw(st.lists(st.integers(0, 2), min_size=len(pairs), max_size=len(pairs))),
        dtype=torch.long,
    )
    batch = enumerate_paths_batch(
        edge_index, edge_type, pairs, 3, num_nodes=n, target_relations=relations
    )
    assert len(batch) == len(pairs)
    for (s, t), r, got in zip(pairs.tolist(), relations.tolist(), batch):
        want = enumerate_paths(
            edge_index, edge_type, s, t, 3, num_nodes=n, exclude_triples=(s, r, t)
        )
        assert (got.source, got.target) == (s, t)
        for field in ("nodes", "edge_ids", "relations", "forward", "length"):
            assert torch.equal(getattr(got, field), getattr(want, field))


def test_the_width_cap_ignores_exclusions_so_a_batch_equals_its_single_calls():
    # Found by hypothesis in a fresh clone's CI: edges 0-0 and 1-2, pair (0, 0) with relation 0.
    # The batch excludes (0, 0, 0) per pair, a single call through exclude_triples; counting only
    # usable edges' nodes gave widths 2 and 3. Every edge's nodes count: {0, 1, 2}, L = 2.
    edge_index, edge_type = torch.tensor([[0, 1], [0, 2]]), torch.tensor([0, 0])
    (got,) = enumerate_paths_batch(
        edge_index,
        edge_type,
        torch.tensor([[0, 0]]),
        3,
        num_nodes=3,
        target_relations=torch.tensor([0]),
    )
    want = enumerate_paths(edge_index, edge_type, 0, 0, 3, num_nodes=3, exclude_triples=(0, 0, 0))
    assert got.nodes.shape == want.nodes.shape == (0, 3)
    assert got.edge_ids.shape == want.edge_ids.shape == (0, 2)


def test_source_equal_to_target_gives_no_path():
    edge_index = torch.tensor([[0, 1, 1], [1, 0, 1]])
    paths = enumerate_paths(edge_index, torch.zeros(3, dtype=torch.long), 1, 1, 3)
    assert len(paths) == 0 and paths.nodes.shape == (0, 2) and paths.to_list() == []  # L: 2 - 1


def test_cap_raises_or_truncates_deterministically():
    # K5, doubled: 2 + 12 + 48 paths of lengths 1, 2, 3 between nodes 0 and 4.
    pairs = torch.combinations(torch.arange(5), 2).repeat(2, 1)
    edge_index, edge_type = pairs.t().contiguous(), torch.arange(pairs.size(0))
    full = enumerate_paths(edge_index, edge_type, 0, 4, 3)
    assert len(full) == 62
    with pytest.raises(GraphDataError, match=r"more than max_paths=20 .*on_overflow='truncate'"):
        enumerate_paths(edge_index, edge_type, 0, 4, 3, max_paths=20)
    for cap in (1, 2, 5, 14, 20, 61):
        cut = enumerate_paths(edge_index, edge_type, 0, 4, 3, max_paths=cap, on_overflow="truncate")
        assert cut.truncated and len(cut) == cap
        assert torch.equal(cut.edge_ids, full.edge_ids[:cap])  # shortest first, lexicographic
        assert torch.equal(cut.forward, full.forward[:cap])
    exact = enumerate_paths(edge_index, edge_type, 0, 4, 3, max_paths=62)
    assert not exact.truncated and torch.equal(exact.edge_ids, full.edge_ids)
    batch = enumerate_paths_batch(
        edge_index,
        edge_type,
        torch.tensor([[0, 4], [1, 2]]),
        3,
        max_paths=10,
        on_overflow="truncate",
    )
    assert [len(p) for p in batch] == [10, 10] and all(p.truncated for p in batch)
    with pytest.raises(GraphDataError, match=r"pair 1 \(2 -> 3\)"):
        enumerate_paths_batch(
            edge_index, edge_type, torch.tensor([[0, 0], [2, 3]]), 3, max_paths=30
        )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"edge_index": torch.zeros(3, 2, dtype=torch.long)}, r"edge_index: expected .*\[2, E\]"),
        ({"edge_type": torch.zeros(2, dtype=torch.long)}, r"edge_type: expected shape \[E\]"),
        ({"edge_index": torch.zeros(2, 3)}, "edge_index: expected dtype torch.long"),
        ({"num_nodes": 2}, r"expected node ids in \[0, 2\)"),
        ({"source": 9}, r"source: expected node ids in \[0, 4\)"),
        ({"max_length": 0}, "max_length: expected an int >= 1"),
        ({"max_paths": 0}, "max_paths: expected an int >= 1"),
        ({"on_overflow": "drop"}, "on_overflow: expected one of"),
        ({"exclude_edges": torch.tensor([7])}, r"exclude_edges: expected edge ids in \[0, 3\)"),
        ({"exclude_edges": torch.tensor([True])}, r"boolean mask must have shape \[E\]"),
        ({"exclude_triples": torch.zeros(2, 2, dtype=torch.long)}, r"shape \[M, 3\]"),
    ],
)
def test_bad_input_is_named(kwargs, match):
    args = {
        "edge_index": torch.tensor([[0, 1, 2], [1, 2, 3]]),
        "edge_type": torch.zeros(3, dtype=torch.long),
        "source": 0,
        "target": 3,
        "max_length": 3,
    } | kwargs
    with pytest.raises(GraphDataError, match=match):
        enumerate_paths(
            args.pop("edge_index"),
            args.pop("edge_type"),
            args.pop("source"),
            args.pop("target"),
            args.pop("max_length"),
            **args,
        )


def test_chunks_of_pairs_give_the_same_paths(monkeypatch):
    gen = torch.Generator().manual_seed(1)
    edge_index = torch.randint(0, 7, (2, 25), generator=gen)
    edge_type = torch.randint(0, 3, (25,), generator=gen)
    pairs = torch.tensor([[0, 1], [2, 3], [4, 5], [6, 0], [1, 5]])
    kwargs = {"num_nodes": 7, "max_paths": 40, "on_overflow": "truncate"}
    one = enumerate_paths_batch(edge_index, edge_type, pairs, 4, **kwargs)
    monkeypatch.setattr(_adjacency, "PAIR_CHUNK_ENTRIES", 2 * 7)  # two pairs per chunk
    many = enumerate_paths_batch(edge_index, edge_type, pairs, 4, **kwargs)
    assert any(p.truncated for p in one)
    for a, b in zip(one, many):
        assert torch.equal(a.nodes, b.nodes) and torch.equal(a.forward, b.forward)
        assert torch.equal(a.edge_ids, b.edge_ids) and a.truncated == b.truncated


def test_a_huge_max_length_is_the_longest_simple_path_and_allocates_no_padding():
    # Before: max_length=10**9 padded every path to [P, 10**9 + 1] and died allocating it.
    # 6 nodes: a 6-cycle with a chord and a parallel edge, so 0 -> 3 has paths of 1 to 5 steps.
    ring = [(i, (i + 1) % 6) for i in range(6)]
    edge_index = torch.tensor(ring + [(0, 3), (2, 5), (4, 5)]).t().contiguous()
    edge_type = torch.arange(edge_index.size(1))
    longest = enumerate_paths(edge_index, edge_type, 0, 3, 5)  # nodes - 1
    huge = enumerate_paths(edge_index, edge_type, 0, 3, 10**9)
    # Oracle: every simple path, enumerated by networkx with no cutoff.
    assert as_counter(huge, edge_index, edge_type) == networkx_paths(edge_index, 0, 3, None)
    assert max(huge.length.tolist()) == 5 and huge.max_length == 5
    for field in ("nodes", "edge_ids", "relations", "forward", "length"):
        assert torch.equal(getattr(huge, field), getattr(longest, field))
    batch = enumerate_paths_batch(edge_index, edge_type, torch.tensor([[0, 3], [1, 4]]), 10**9)
    assert [p.nodes.shape[1] for p in batch] == [6, 6]
    assert torch.equal(batch[0].nodes, longest.nodes)
    # Lengths beyond any simple path: none, at the same width.
    none = enumerate_paths(edge_index, edge_type, 0, 3, 10**9, min_length=6)
    assert len(none) == 0 and none.nodes.shape == (0, 6) and none.edge_ids.shape == (0, 5)
