import networkx as nx
import pytest
import torch

from graphdata.errors import GraphDataError, UnknownLabelError
from graphon.patterns import PATTERNS, Pattern, as_pattern


def test_every_named_pattern_builds_with_expected_counts():
    sizes = {"triangle": (3, 3), "k4": (4, 6), "k5": (5, 10), "double_edge": (2, 2)}
    for name in PATTERNS:
        pat = as_pattern(name)
        assert pat.name == name
        assert pat.num_vertices == PATTERNS[name][0]
        assert pat.num_edges == len(PATTERNS[name][1])
    for name, (k, e) in sizes.items():
        assert (as_pattern(name).num_vertices, as_pattern(name).num_edges) == (k, e)


def test_multigraph_inputs_merge_parallel_edges():
    multi = nx.MultiGraph([("a", "b"), ("a", "b"), ("b", "c")])
    pat = as_pattern(multi)
    assert pat.edges == ((0, 1, 2), (1, 2, 1))
    assert not pat.is_simple and pat.degrees == (2, 3, 1)
    assert as_pattern([(1, 0), (0, 1)]).edges == ((0, 1, 2),)
    round_trip = as_pattern(pat.to_networkx())
    assert round_trip.edges == pat.edges


def test_exponent_forms_agree():
    graph = nx.path_graph(["x", "y", "z"])
    by_map = as_pattern(graph, exponents={"y": 2})
    by_list = as_pattern(graph, exponents=[0, 2, 0])
    by_tensor = as_pattern(graph, exponents=torch.tensor([0, 2, 0]))
    assert by_map.exponents == by_list.exponents == by_tensor.exponents == ((0,), (2,), (0,))
    two = as_pattern("edge", exponents=[(1, 0), 0])
    assert two.exponents == ((1, 0), (0, 0)) and two.channels == 2


def test_disjoint_union_shifts_vertices():
    union = as_pattern("edge").disjoint_union(as_pattern("triangle"))
    assert union.num_vertices == 5
    assert set(union.edges) == {(0, 1, 1), (2, 3, 1), (3, 4, 1), (2, 4, 1)}


def test_bad_patterns():
    with pytest.raises(GraphDataError, match="self-loop at vertex 0.*torch.diagonal"):
        as_pattern([(0, 0)])
    with pytest.raises(GraphDataError, match="self-loop"):
        as_pattern(nx.Graph([(1, 1), (1, 2)]))
    with pytest.raises(GraphDataError, match="undirected"):
        as_pattern(nx.DiGraph([(0, 1)]))
    with pytest.raises(GraphDataError, match="at least one vertex"):
        Pattern(0, ())
    with pytest.raises(GraphDataError, match="non-empty list"):
        as_pattern([])
    with pytest.raises(GraphDataError, match="one entry per pattern vertex"):
        as_pattern("triangle", exponents=[1, 1])
    with pytest.raises(GraphDataError, match="non-negative ints"):
        as_pattern("edge", exponents=[-1, 0])
    with pytest.raises(GraphDataError, match="once"):
        as_pattern(as_pattern("edge", exponents=[1, 1]), exponents=[1, 1])
    with pytest.raises(UnknownLabelError, match="triangle"):
        as_pattern("triangles")
    with pytest.raises(GraphDataError, match="not pattern vertices"):
        as_pattern(nx.path_graph(2), exponents={7: 1})
