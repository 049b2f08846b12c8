import itertools

import networkx as nx
import pytest
import torch

from graphdata.errors import GraphDataError
from graphon.densities import graphon_density
from graphon.families import erdos_renyi, sbm
from graphon.graphons import StepGraphon
from graphon.homomorphism import hom_density
from graphon.wl import graphon_wl_equivalent, graphon_wl_refine, wl_equivalent, wl_refine

F64 = torch.float64


def adj(graph):
    return torch.tensor(nx.to_numpy_array(graph, nodelist=sorted(graph.nodes)), dtype=F64)


C6 = adj(nx.cycle_graph(6))
TWO_K3 = adj(nx.disjoint_union(nx.complete_graph(3), nx.complete_graph(3)))


def cayley_z4z4(steps):
    graph = nx.Graph()
    for a, b in itertools.product(range(4), repeat=2):
        for da, db in steps:
            graph.add_edge((a, b), ((a + da) % 4, (b + db) % 4))
    return adj(graph)


SHRIKHANDE = cayley_z4z4([(1, 0), (3, 0), (0, 1), (0, 3), (1, 1), (3, 3)])
ROOK = cayley_z4z4([(1, 0), (2, 0), (3, 0), (0, 1), (0, 2), (0, 3)])


@pytest.mark.parametrize(
    "k, variant, same",
    [
        (1, "folklore", True),
        (2, "oblivious", True),
        (2, "folklore", False),
        (3, "oblivious", False),
    ],
)
def test_c6_and_two_triangles(k, variant, same):
    # 1-WL = 2-OWL (multiset; on 0/1 graphs also the sum variant) cannot tell them apart;
    # 2-FWL = 3-OWL counts triangles
    assert wl_equivalent(C6, TWO_K3, k=k, variant=variant) is same


def test_one_wl_equivalent_pairs_have_equal_tree_densities():
    petersen, prism = adj(nx.petersen_graph()), adj(nx.circular_ladder_graph(5))
    pairs = [(C6, TWO_K3), (petersen, prism)]
    for a, b in pairs:
        assert wl_equivalent(a, b, k=1)
        assert not wl_equivalent(a, b, k=2)
        for size in range(2, 7):
            for tree in nx.nonisomorphic_trees(size):
                assert float(hom_density(tree, a)) == pytest.approx(float(hom_density(tree, b)))
    # a treewidth-2 pattern separates each pair
    assert float(hom_density("triangle", C6)) != float(hom_density("triangle", TWO_K3))
    assert float(hom_density("square", petersen)) != float(hom_density("square", prism))


def test_strongly_regular_pair_needs_three_fwl():
    assert SHRIKHANDE.sum(1).unique().tolist() == ROOK.sum(1).unique().tolist() == [6.0]
    assert wl_equivalent(SHRIKHANDE, ROOK, k=2)
    assert wl_equivalent(SHRIKHANDE, ROOK, k=3, variant="oblivious")
    assert not wl_equivalent(SHRIKHANDE, ROOK, k=3)
    # Dell-Grohe-Rattan: equal counts for treewidth <= 2, K4 (treewidth 3) differs
    for name in ("triangle", "square", "cycle5", "cycle6", "diamond"):
        want = float(hom_density(name, ROOK))
        assert float(hom_density(name, SHRIKHANDE)) == pytest.approx(want)
    assert float(hom_density("k4", SHRIKHANDE)) != float(hom_density("k4", ROOK))


def test_histograms_are_invariant_under_relabelling_and_comparable_across_calls():
    g = torch.Generator().manual_seed(0)
    a = (torch.rand(7, 7, generator=g, dtype=F64) < 0.5).to(F64).triu(1)
    a = a + a.T
    x = torch.randint(0, 2, (7,), generator=g).to(F64)
    perm = torch.randperm(7, generator=g)
    for k in (1, 2):
        first = wl_refine([a], [x], k=k).histograms[0]
        second = wl_refine([a[perm][:, perm]], [x[perm]], k=k).histograms[0]
        assert first == second
        assert sum(first.values()) == 7**k


def test_signals_and_edge_weights_refine_colours():
    marked = torch.zeros(6, dtype=F64)
    marked[0] = 1.0
    assert not wl_equivalent(C6, TWO_K3, marked, marked)
    other = torch.zeros(6, dtype=F64)
    other[3] = 1.0
    assert wl_equivalent(C6, C6, marked, other)  # the cycle is vertex-transitive
    w1 = torch.tensor([[0, 1, 2], [1, 0, 1], [2, 1, 0]], dtype=F64)
    w2 = torch.tensor([[0, 2, 1], [2, 0, 1], [1, 1, 0]], dtype=F64)
    w3 = torch.tensor([[0, 1, 1], [1, 0, 1], [1, 1, 0]], dtype=F64)
    assert wl_equivalent(w1, w2) and not wl_equivalent(w1, w3)


def test_graphon_wl_sees_blow_ups_and_split_blocks_as_equal():
    g = torch.Generator().manual_seed(1)
    a = torch.rand(4, 4, generator=g, dtype=F64)
    a = (a + a.T) / 2
    blow = a.repeat_interleave(2, 0).repeat_interleave(2, 1)
    for k in (1, 2):
        assert graphon_wl_equivalent(StepGraphon.from_graph(a), StepGraphon.from_graph(blow), k=k)
    assert not wl_equivalent(a, blow)  # as graphs they differ in size
    split = StepGraphon([[0.9, 0.9, 0.1], [0.9, 0.9, 0.1], [0.1, 0.1, 0.9]], [1, 1, 2])
    assert graphon_wl_equivalent(sbm(2, 0.9, 0.1), split, k=2, variant="folklore")
    res = graphon_wl_refine([sbm(2, 0.9, 0.1)], k=2)
    assert sum(res.histograms[0].values()) == pytest.approx(1.0)


def test_graphon_wl_reads_multigraph_densities():
    # ER(0.4) and the regular SBM 0.8/0.3 share every simple tree density (0.4^|E|), but the
    # double edge (a treewidth-1 multigraph) differs, and the default multiset 1-WL (Boker)
    # separates them; the sum variant (fractional isomorphism) does not: test_wl_variants.py.
    er, hj = erdos_renyi(0.4), sbm()
    for name in ("edge", "path3", "star3", "path4"):
        assert graphon_density(name, er).value == pytest.approx(graphon_density(name, hj).value)
    assert graphon_density("double_edge", er).value != pytest.approx(
        graphon_density("double_edge", hj).value
    )
    assert not graphon_wl_equivalent(er, hj, k=1)


def test_wl_errors():
    with pytest.raises(GraphDataError, match="oblivious WL needs k >= 2"):
        wl_equivalent(C6, C6, k=1, variant="oblivious")
    with pytest.raises(GraphDataError, match="variant"):
        wl_equivalent(C6, C6, k=2, variant="classic")
    with pytest.raises(GraphDataError, match="pairs per round"):
        wl_refine([torch.zeros(300, 300, dtype=F64)], k=3)
    with pytest.raises(GraphDataError, match="signals: expected 1 entries"):
        wl_refine([C6], [None, None])
    with pytest.raises(GraphDataError, match="symmetric"):
        wl_refine([torch.tensor([[0.0, 1.0], [0.0, 0.0]])])


def test_wl_refine_refuses_no_graphs_and_non_numeric_labels():
    with pytest.raises(GraphDataError, match="graphs: expected at least one"):
        wl_refine([])
    edge = torch.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])  # node 2 isolated
    with pytest.raises(GraphDataError, match="signals: expected a real tensor.*label -> int id"):
        wl_refine([edge], [["a", 1, None]])
    assert wl_refine([edge], [torch.tensor([7, 7, 3])]).num_colors == 2


def test_graphon_wl_refine_wants_a_list_of_graphons():
    with pytest.raises(GraphDataError, match=r"expected a list.*got StepGraphon; .*\[W\]"):
        graphon_wl_refine(sbm(2, 0.9, 0.1))
    with pytest.raises(GraphDataError, match="graphons: expected at least one graphon"):
        graphon_wl_refine([])
