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


def _weighted(n, seed):
    g = torch.Generator().manual_seed(seed)
    a = torch.rand(n, n, generator=g, dtype=torch.float64)
    x = torch.rand(n, 1, generator=g, dtype=torch.float64) + 0.5
    return (a + a.T) / 2, x


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("0-1,1-2,2-0", "triangle"),
        ("2-0, 0-1 ,1-2", "triangle"),
        ("0-1:2", "double_edge"),
        ("1-0,0-1", "double_edge"),
        ("5-7,7-9", "path3"),
        ("0-1,1-2,2-3,3-0", "square"),
        ("0-1,0-2,0-3,1-2,1-3", "diamond"),
        ("0", "vertex"),
    ],
)
def test_edge_lists_have_the_named_patterns_densities(text, name):
    from graphon.homomorphism import hom_density

    a, x = _weighted(6, 3)
    k = as_pattern(name).num_vertices
    exps = [(v % 3) for v in range(k)]
    mine = as_pattern(text, exponents=exps)
    assert mine.name == text.strip() and mine.num_vertices == k
    want = float(hom_density(as_pattern(name, exponents=exps), a, x))
    assert float(hom_density(mine, a, x)) == pytest.approx(want, rel=1e-13)


def test_edge_list_multiplicities_relabelling_and_isolated_vertices():
    from graphon.homomorphism import hom_density

    a, x = _weighted(5, 8)
    # multiplicities add up: 0-1:2 plus a repeated 0-1 is a triple edge
    assert as_pattern("0-1:2,1-0").edges == ((0, 1, 3),)
    assert float(hom_density("0-1:3", a)) == pytest.approx(float((a**3).mean()), rel=1e-13)
    # vertices 9, 5, 7 become 2, 0, 1 (sorted), so exponents follow the sorted labels:
    # "9-5,5-7" is the path 1-0-2 with its centre (label 5) at vertex 0
    star = as_pattern("9-5,5-7", exponents=[2, 0, 1])
    assert star.edges == ((0, 1, 1), (0, 2, 1))
    path = as_pattern("path3", exponents=[0, 2, 1])
    assert float(hom_density(star, a, x)) == pytest.approx(float(hom_density(path, a, x)))
    # a lone token is an isolated vertex: t(F + K1) = t(F) * mean(f^d)
    plus = as_pattern("0-1,2", exponents=[1, 1, 3])
    assert plus.num_vertices == 3 and plus.edges == ((0, 1, 1),)
    edge = float(hom_density(as_pattern("edge", exponents=[1, 1]), a, x))
    got = float(hom_density(plus, a, x))
    assert got == pytest.approx(edge * float((x**3).mean()), rel=1e-13)


def test_bad_edge_lists_name_the_token():
    with pytest.raises(GraphDataError, match=r"token 2 of the edge list '0-1,,1-2' is ''"):
        as_pattern("0-1,,1-2")
    with pytest.raises(GraphDataError, match=r"token 1 .* is '0-1-2'"):
        as_pattern("0-1-2")
    with pytest.raises(GraphDataError, match="non-negative int vertices"):
        as_pattern("-1-2")
    with pytest.raises(GraphDataError, match=r"multiplicity 0; expected m >= 1"):
        as_pattern("0-1:0")
    with pytest.raises(GraphDataError, match=r"edge '3-03' of '0-3,3-03' is a self-loop"):
        as_pattern("0-3,3-03")
    with pytest.raises(GraphDataError, match="one entry per pattern vertex"):
        as_pattern("0-1,1-2", exponents=[1, 1])
    # neither a name nor an edge list: the closest names, and how to write an edge list
    with pytest.raises(UnknownLabelError, match=r"'triangle'.*edge list such as '0-1,1-2,2-0'"):
        as_pattern("triangles")
    with pytest.raises(UnknownLabelError, match="unknown pattern label 'a-b'"):
        as_pattern("a-b")


def test_diamond_convention_vertices_0_and_1_have_degree_3():
    dia = as_pattern("diamond")
    assert dia.edges == ((0, 1, 1), (0, 2, 1), (0, 3, 1), (1, 2, 1), (1, 3, 1))
    assert dia.degrees == (3, 3, 2, 2)
    # K4 minus the edge 2-3
    k4 = set(as_pattern("k4").edges)
    assert k4 - set(dia.edges) == {(2, 3, 1)}
    # W = xy, f = x: t = prod_v 1/(deg v + d_v + 1), so the exponent's vertex matters:
    # d = (1, 0, 0, 0) weights a degree-3 vertex: 1/5 * 1/4 * 1/3 * 1/3 = 1/180
    from graphon.densities import graphon_density
    from graphon.families import make_graphon
    from graphon.graphons import GraphonSignal

    ws = GraphonSignal(make_graphon("product"), lambda x: x)
    got = graphon_density("diamond", ws, exponents=[1, 0, 0, 0]).value
    assert got == pytest.approx(1 / 180, rel=1e-10)


@pytest.mark.parametrize(
    "exponents", [[True, 1], ["1", 1], [float("nan"), 1], [float("inf"), 1], [None, 1], [1.5, 1]]
)
def test_exponents_that_are_not_non_negative_ints_are_refused(exponents):
    with pytest.raises(GraphDataError, match="exponents: expected non-negative ints"):
        as_pattern("edge", exponents)


def test_integral_floats_are_still_exponents():
    assert as_pattern("edge", [2.0, torch.tensor(1).item()]).exponents == ((2,), (1,))


def test_bool_vertices_of_an_edge_list_are_refused():
    with pytest.raises(GraphDataError, match="pairs of non-negative ints"):
        as_pattern([(True, False)])
