import itertools
import math

import networkx as nx
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from networkx.algorithms.approximation import treewidth_min_fill_in
from networkx.algorithms.isomorphism import GraphMatcher

from graphdata.errors import GraphDataError
from graphon.homomorphism import estimate_cost, hom_density, inj_density, rooted_hom_density
from graphon.patterns import PATTERNS, as_pattern

F64 = torch.float64


def brute_force(pattern, adj, signal=None, *, injective=False, weights=None):
    """Sum over all maps V(F) -> [n] (or injective ones), written out plainly."""
    pat = as_pattern(pattern)
    n, k = adj.size(0), pat.num_vertices
    mu = [1.0 / n] * n if weights is None else [float(w) for w in weights]
    total, count = 0.0, 0
    for phi in itertools.product(range(n), repeat=k):
        if injective and len(set(phi)) < k:
            continue
        value = 1.0
        for u, v, m in pat.edges:
            value *= float(adj[phi[u], phi[v]]) ** m
        for v in range(k):
            if not injective:
                value *= mu[phi[v]]
            if pat.exponents is not None:
                for c, d in enumerate(pat.exponents[v]):
                    value *= float(signal[phi[v], c]) ** d
        total += value
        count += 1
    return total / count if injective else total


def random_weighted(n, seed, *, loops=True):
    g = torch.Generator().manual_seed(seed)
    a = torch.rand(n, n, generator=g, dtype=F64)
    a = (a + a.T) / 2
    return a if loops else a * (1 - torch.eye(n, dtype=F64))


SMALL = ["edge", "double_edge", "path3", "star3", "triangle", "square", "diamond", "k4"]


@pytest.mark.parametrize("name", SMALL)
def test_matches_brute_force_over_all_maps(name):
    a = random_weighted(5, 1)
    assert float(hom_density(name, a)) == pytest.approx(brute_force(name, a), rel=1e-12)
    assert float(inj_density(name, a)) == pytest.approx(
        brute_force(name, a, injective=True), rel=1e-10
    )


def test_repeated_subexpressions_are_shared_correctly():
    # K_{2,3}: every middle vertex yields the same factor A diag(mu) A (cached once)
    a = random_weighted(5, 11)
    k23 = [(0, 2), (1, 2), (0, 3), (1, 3), (0, 4), (1, 4)]
    assert float(hom_density(k23, a)) == pytest.approx(brute_force(k23, a), rel=1e-12)
    x = torch.rand(5, dtype=F64, generator=torch.Generator().manual_seed(12))
    pat = as_pattern(k23, exponents=[0, 0, 1, 0, 1])  # signals break the sharing
    assert float(hom_density(pat, a, x)) == pytest.approx(brute_force(pat, a, x[:, None]))


K4_PENDANT = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3), (3, 4)]


@pytest.mark.parametrize("name", ["k4", "k5", K4_PENDANT])
def test_sliced_contraction_matches_brute_force(name, monkeypatch):
    # a memory budget below n^3 forces tensor-network slicing of one vertex into chunks
    import graphon._elimination as elimination

    monkeypatch.setattr(elimination, "MAX_ENTRIES", 60)
    a = random_weighted(6, 14)
    scopes = [(u, v) for u, v, _ in as_pattern(name).edges]
    assert elimination.make_plan(as_pattern(name).num_vertices, scopes, 6).sliced is not None
    assert float(hom_density(name, a)) == pytest.approx(brute_force(name, a), rel=1e-12)
    batch = torch.stack([a, a.flip(0).flip(1)])
    got = hom_density(name, batch)
    assert torch.allclose(got, got[:1].expand(2), rtol=1e-12)
    r = rooted_hom_density(name, a, root=1)
    assert float(r.mean()) == pytest.approx(brute_force(name, a), rel=1e-12)


def test_signal_weighted_and_node_weighted_match_brute_force():
    a = random_weighted(4, 2)
    x = torch.randn(4, 2, generator=torch.Generator().manual_seed(3), dtype=F64)
    pat = as_pattern("diamond", exponents=[(1, 0), (0, 2), (1, 1), (0, 0)])
    w = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=F64)
    got = float(hom_density(pat, a, x, node_weights=w))
    assert got == pytest.approx(brute_force(pat, a, x, weights=w), rel=1e-12)
    got = float(inj_density(pat, a, x))
    assert got == pytest.approx(brute_force(pat, a, x, injective=True), rel=1e-10)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 4),
    edges=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=5),
    seed=st.integers(0, 10_000),
)
def test_random_multigraph_patterns_match_brute_force(n, edges, seed):
    edges = [(u, v) for u, v in edges if u != v]
    if not edges:
        return
    a = random_weighted(n, seed)
    k = max(max(e) for e in edges) + 1
    x = torch.rand(n, 1, generator=torch.Generator().manual_seed(seed + 1), dtype=F64)
    pat = as_pattern(edges, exponents=[(seed + v) % 3 for v in range(k)])
    assert float(hom_density(pat, a, x)) == pytest.approx(brute_force(pat, a, x), rel=1e-10)
    if n >= k:
        want = brute_force(pat, a, x, injective=True)
        assert float(inj_density(pat, a, x)) == pytest.approx(want, rel=1e-9, abs=1e-14)


def count_monomorphisms(pattern_graph, graph):
    return sum(1 for _ in GraphMatcher(graph, pattern_graph).subgraph_monomorphisms_iter())


@pytest.mark.parametrize("name", ["path3", "star3", "triangle", "square", "diamond", "cycle5"])
def test_injective_counts_match_networkx_monomorphisms(name):
    graph = nx.gnp_random_graph(8, 0.5, seed=4)
    adj = torch.tensor(nx.to_numpy_array(graph), dtype=F64)
    pat = as_pattern(name)
    k = pat.num_vertices
    inj = count_monomorphisms(nx.Graph(pat.to_networkx()), graph)
    falling = math.perm(8, k)
    assert float(inj_density(name, adj)) * falling == pytest.approx(inj, abs=1e-8)
    # hom = sum over partitions of inj(F/P): checked independently by brute force here
    assert float(hom_density(name, adj)) == pytest.approx(brute_force(name, adj), rel=1e-12)


def test_constant_graph_gives_p_to_the_edges_times_signal_moments(device):
    p, n = 0.3, 6
    a = torch.full((n, n), p, dtype=F64, device=device)
    x = torch.linspace(0.5, 1.5, n, dtype=F64, device=device)
    pat = as_pattern("diamond", exponents=[2, 0, 1, 3])
    moments = math.prod(float((x**d).mean()) for d in (2, 0, 1, 3))
    assert float(hom_density(pat, a, x)) == pytest.approx(p**5 * moments, rel=1e-12)


def test_product_graphon_grid_values_from_references():
    # W = xy on the N x N midpoint grid: K3 .037034 (N=100), 1/64-case .015623 (REFERENCES B.2)
    n = 100
    x = (torch.arange(n, dtype=F64) + 0.5) / n
    a = x[:, None] * x[None, :]
    assert float(hom_density("triangle", a)) == pytest.approx(0.037034, abs=5e-7)
    assert float(hom_density("triangle", a, x, exponents=[1, 1, 1])) == pytest.approx(
        0.015623, abs=5e-7
    )


def test_complete_graph_edge_densities(device):
    for n in (1, 2, 5, 9):
        k_n = torch.ones(n, n, dtype=F64, device=device) - torch.eye(n, dtype=F64, device=device)
        assert float(hom_density("edge", k_n)) == pytest.approx(1 - 1 / n)
        if n >= 2:
            assert float(inj_density("edge", k_n)) == pytest.approx(1.0)
        if n < 3:  # no injective map, (n)_3 = 0: undefined, refused (never NaN)
            with pytest.raises(GraphDataError, match=r"at least 3 real nodes.*graph 0: " + str(n)):
                inj_density("triangle", k_n)


def test_inj_density_refuses_batch_graphs_smaller_than_the_pattern():
    """A masked batch with one 2-node graph: refused by index, the others' values unchanged."""
    adj = torch.ones(3, 4, 4, dtype=F64) - torch.eye(4, dtype=F64)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0], [1, 1, 1, 0]], dtype=torch.bool)
    with pytest.raises(GraphDataError, match=r"1 graph\(s\) with fewer \(graph 1: 2\)"):
        inj_density("triangle", adj, mask=mask)
    keep = torch.tensor([0, 2])
    values = inj_density("triangle", adj[keep], mask=mask[keep])
    assert values.tolist() == pytest.approx([1.0, 1.0])  # complete graphs: every map is a hom


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), name=st.sampled_from(["path4", "triangle", "diamond"]))
def test_relabelling_invariance(seed, name):
    a = random_weighted(7, seed)
    perm = torch.randperm(7, generator=torch.Generator().manual_seed(seed))
    b = a[perm][:, perm]
    assert float(hom_density(name, b)) == pytest.approx(float(hom_density(name, a)), rel=1e-12)
    assert float(inj_density(name, b)) == pytest.approx(float(inj_density(name, a)), rel=1e-10)


def test_disjoint_union_is_multiplicative_and_isolated_vertex_is_a_moment():
    a = random_weighted(6, 5)
    x = torch.rand(6, dtype=F64, generator=torch.Generator().manual_seed(6))
    f1 = as_pattern("triangle", exponents=[1, 0, 2])
    f2 = as_pattern("path3", exponents=[0, 1, 0])
    both = float(hom_density(f1.disjoint_union(f2), a, x))
    assert both == pytest.approx(float(hom_density(f1, a, x) * hom_density(f2, a, x)), rel=1e-12)
    # isolated vertex convention: it contributes the moment of its signal power
    graph = nx.Graph([(0, 1), (1, 2), (0, 2)])
    graph.add_node(3)
    iso = as_pattern(graph, exponents={3: 2})
    assert float(hom_density(iso, a, x)) == pytest.approx(
        float(hom_density("triangle", a)) * float((x**2).mean()), rel=1e-12
    )


def test_double_edge_on_half_and_on_sampled_simple_graphs():
    half = torch.full((40, 40), 0.5, dtype=F64)
    assert float(hom_density("double_edge", half)) == pytest.approx(0.25)
    g = torch.Generator().manual_seed(0)
    upper = torch.triu((torch.rand(300, 300, generator=g) < 0.5).to(F64), 1)
    simple = upper + upper.T
    assert float(hom_density("double_edge", simple)) == pytest.approx(
        float(hom_density("edge", simple)), rel=1e-12
    )
    assert float(hom_density("double_edge", simple)) == pytest.approx(0.5, abs=0.01)


def test_step_graphon_formula_by_block_sum():
    probs = torch.tensor([[0.9, 0.2, 0.4], [0.2, 0.5, 0.1], [0.4, 0.1, 0.7]], dtype=F64)
    lam = torch.tensor([0.5, 0.3, 0.2], dtype=F64)
    f = torch.tensor([[1.0], [-2.0], [0.5]], dtype=F64)
    pat = as_pattern("square", exponents=[1, 0, 2, 1])
    want = 0.0
    for s in itertools.product(range(3), repeat=4):
        term = math.prod(float(lam[s[v]] * f[s[v], 0] ** pat.exponents[v][0]) for v in range(4))
        want += term * math.prod(float(probs[s[u], s[v]]) for u, v, _ in pat.edges)
    assert float(hom_density(pat, probs, f, node_weights=lam)) == pytest.approx(want, rel=1e-12)


def test_rooted_densities_sum_to_the_density_and_match_levin_target(device):
    a = random_weighted(6, 7).to(device)
    x = torch.rand(6, dtype=F64, generator=torch.Generator().manual_seed(8)).to(device)
    r = rooted_hom_density("triangle", a, x, root=0, exponents=[1, 1, 1])
    want = torch.einsum("ij,jk,ki,i,j,k->i", a, a, a, x, x, x) / 36
    assert torch.allclose(r, want, rtol=1e-12)
    total = float(hom_density("triangle", a, x, exponents=[1, 1, 1]))
    assert float(r.mean()) == pytest.approx(total, rel=1e-12)


def test_masked_batch_equals_graphs_one_by_one(device):
    a1, a2 = random_weighted(5, 9, loops=False), random_weighted(3, 10, loops=False)
    batch = torch.zeros(2, 5, 5, dtype=F64)
    batch[0], batch[1, :3, :3] = a1, a2
    mask = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    batch, mask = batch.to(device), mask.to(device)
    for fn in (hom_density, inj_density):
        got = fn("path3", batch, mask=mask)
        assert got.shape == (2,)
        assert float(got[0]) == pytest.approx(float(fn("path3", a1)), rel=1e-12)
        assert float(got[1]) == pytest.approx(float(fn("path3", a2)), rel=1e-12)


@pytest.mark.parametrize(
    "name, width", [("path4", 1), ("star3", 1), ("cycle6", 2), ("diamond", 2), ("k4", 3)]
)
def test_elimination_width_matches_networkx_treewidth(name, width):
    graph = nx.Graph(as_pattern(name).to_networkx())
    assert treewidth_min_fill_in(graph)[0] == width
    assert estimate_cost(name, 50).width == width
    # cost grows like n^(width + 1)
    ratio = estimate_cost(name, 400).cost / estimate_cost(name, 200).cost
    assert ratio == pytest.approx(2 ** (width + 1), rel=0.05)


def test_large_pattern_is_refused_with_cost_and_monte_carlo_hint():
    a = torch.rand(300, 300, dtype=F64)
    a = (a + a.T) / 2
    with pytest.raises(GraphDataError, match=r"k5.*multiply-adds.*monte_carlo_density"):
        hom_density("k5", a, max_cost=1e9)
    with pytest.raises(GraphDataError, match="too many"):
        inj_density(as_pattern([(i, i + 1) for i in range(9)]), a)


def test_bad_inputs_raise_clear_errors():
    a = random_weighted(4, 0)
    with pytest.raises(GraphDataError, match="square matrix"):
        hom_density("edge", torch.ones(3, 4, dtype=F64))
    with pytest.raises(GraphDataError, match="at least one node"):
        hom_density("edge", torch.ones(0, 0, dtype=F64))
    with pytest.raises(GraphDataError, match="symmetric"):
        hom_density("edge", torch.tensor([[0.0, 1.0], [0.0, 0.0]], dtype=F64))
    with pytest.raises(GraphDataError, match="floating"):
        hom_density("edge", torch.ones(2, 2, dtype=torch.long))
    with pytest.raises(GraphDataError, match="self-loop"):
        hom_density([(0, 0), (0, 1)], a)
    with pytest.raises(GraphDataError, match="pass a signal"):
        hom_density("edge", a, exponents=[1, 1])
    with pytest.raises(GraphDataError, match="no vertex exponents"):
        hom_density("edge", a, torch.ones(4, dtype=F64))
    with pytest.raises(GraphDataError, match="channel"):
        hom_density("edge", a, torch.ones(4, 2, dtype=F64), exponents=[1, 1])
    with pytest.raises(GraphDataError, match="root"):
        rooted_hom_density("edge", a, root=2)
    with pytest.raises(GraphDataError, match="unknown pattern"):
        hom_density("triangel", a)


def test_validation_catches_one_bad_entry_in_a_large_graph():
    a = random_weighted(300, 13)
    for value, match in (
        (a[17, 250] + 1e-4, "symmetric"),
        (float("nan"), "NaN"),
        (float("inf"), "infinite"),
    ):
        bad = a.clone()
        bad[17, 250] = value
        with pytest.raises(GraphDataError, match=match):
            hom_density("edge", bad)
    close = a.clone()
    close[17, 250] += 1e-13  # within tolerance of a symmetric matrix
    assert float(hom_density("edge", close)) == pytest.approx(float(hom_density("edge", a)))


def test_single_node_graph():
    one = torch.zeros(1, 1, dtype=F64)
    assert float(hom_density("vertex", one)) == 1.0
    assert float(hom_density("edge", one)) == 0.0
    looped = torch.ones(1, 1, dtype=F64)
    assert float(hom_density("triangle", looped)) == 1.0
    assert set(PATTERNS) >= {"edge", "triangle", "k4"}


def test_an_empty_batch_is_refused_with_its_shape():
    for fn in (hom_density, inj_density):
        with pytest.raises(GraphDataError, match=r"adj: expected at least one graph.*\(0, 3, 3\)"):
            fn("edge", torch.zeros(0, 3, 3, dtype=torch.float64))


def test_estimate_cost_refuses_injective_patterns_over_nine_vertices_before_enumerating():
    path = ",".join(f"{i}-{i + 1}" for i in range(13))  # 14 vertices: Bell(14) ~ 1.9e8 quotients
    with pytest.raises(GraphDataError, match="14 vertices is too many"):
        estimate_cost(path, 100, injective=True)
    assert estimate_cost(path, 100).width == 1  # the plain density stays cheap


def test_bad_node_weights_are_refused_with_what_arrived():
    adj = torch.ones(4, 4, dtype=torch.float64) - torch.eye(4, dtype=torch.float64)
    with pytest.raises(GraphDataError, match=r"got minimum 1 and sums \[4.0\]"):
        hom_density("edge", adj, node_weights=torch.ones(4, dtype=torch.float64))
    with pytest.raises(GraphDataError, match=r"got minimum -0.5 and sums \[1.0\]"):
        hom_density("edge", adj, node_weights=torch.tensor([0.5, 0.5, 0.5, -0.5]).double())
