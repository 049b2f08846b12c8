"""The two readings of edge weights in graphon/graph 1-WL (issue #20).

``weights="multiset"``: Böker's multigraph refinement (arXiv 2112.09001), equivalence = equal
densities of all multigraph trees. ``weights="sum"``: colour refinement by class sums,
equivalence = fractional isomorphism = equal densities of all simple trees (Tinhofer;
Ramana-Scheinerman-Ullman; Grebík & Rocha, arXiv 1909.04742). Oracles: exact step-graphon
densities, brute-force tree homomorphism densities, planted equitable partitions.
"""

import networkx as nx
import numpy as np
import pytest
import torch

from graphdata.errors import GraphDataError
from graphon.densities import graphon_density
from graphon.families import erdos_renyi, sbm
from graphon.graphons import AnalyticGraphon, StepGraphon
from graphon.homomorphism import hom_density
from graphon.wl import graphon_wl_equivalent, graphon_wl_refine, wl_equivalent, wl_refine

F64 = torch.float64
TREES = [tree for size in range(2, 7) for tree in nx.nonisomorphic_trees(size)]  # 1+1+2+3+6


def adj(graph):
    return torch.tensor(nx.to_numpy_array(graph, nodelist=sorted(graph.nodes)), dtype=F64)


def tree_densities(a, signal=None, exponents=None):
    if signal is None:
        return np.array([float(hom_density(t, a)) for t in TREES])
    return np.array([float(hom_density(t, a, signal, exponents=e)) for t, e in exponents])


def planted(sizes, totals, gen):
    """A weighted graph whose blocks ``sizes`` form an equitable partition with block sums
    ``totals[P, Q]`` (weight from P to Q): constant blocks plus a random perturbation with
    zero row and column sums, so every two draws are fractionally isomorphic."""
    n, cuts = sum(sizes), np.cumsum([0, *sizes])
    a = np.zeros((n, n))
    for p, q in zip(*np.triu_indices(len(sizes))):
        rows, cols = slice(cuts[p], cuts[p + 1]), slice(cuts[q], cuts[q + 1])
        base = totals[p, q] / (sizes[p] * sizes[q])
        r = gen.standard_normal((sizes[p], sizes[q]))
        if p == q:
            r = r + r.T  # diagonal blocks (loops included) stay symmetric
        r = r - r.mean(0, keepdims=True) - r.mean(1, keepdims=True) + r.mean()  # [|P|, |Q|]
        if min(sizes[p], sizes[q]) == 1:
            r = np.zeros_like(r)  # a 1-row block with zero row and column sums is zero
        scale = 0.9 * base / max(np.abs(r).max(), 1e-12)
        a[rows, cols] = base + scale * r
        a[cols, rows] = a[rows, cols].T
    return torch.tensor(a, dtype=F64)


# d-regular step graphons: every simple tree T has t(T, W) = d^|E(T)|, as for ER(d).
REGULAR = [
    (0.5, sbm(2, 1.0, 0.0)),  # two disjoint cliques
    (0.5, sbm(2, 0.9, 0.1)),
    (0.5, StepGraphon([[0.2, 0.6], [0.6, 1.4 / 3]], [1.0, 3.0])),  # .2/4 + .6*3/4 = 1/2
    (0.4, sbm()),  # Herbst-Jegelka's 5 blocks .8/.3: (.8 + 4 * .3)/5
]


@pytest.mark.parametrize("degree, other", REGULAR, ids=lambda w: getattr(w, "name", str(w)))
def test_er_and_regular_sbm_are_split_by_multiset_only(degree, other):
    er = erdos_renyi(degree)
    for tree in TREES[:7]:  # all trees on 2..5 vertices, exact step-graphon densities
        want, got = graphon_density(tree, er), graphon_density(tree, other)
        assert want.method == got.method == "exact"
        assert want.value == pytest.approx(degree ** tree.number_of_edges(), abs=1e-15)
        assert got.value == pytest.approx(want.value, abs=1e-14)
    double_er = graphon_density("double_edge", er).value
    assert double_er == pytest.approx(degree**2)
    lam, probs = other.measures, other.probs
    double = float((lam[:, None] * lam[None, :] * probs**2).sum())  # closed form: sum l l B^2
    assert graphon_density("double_edge", other).value == pytest.approx(double, abs=1e-15)
    assert double > double_er + 0.005  # E W^2 > (E W)^2 for non-constant W
    assert graphon_wl_equivalent(er, other, weights="sum")
    assert not graphon_wl_equivalent(er, other, weights="multiset")
    assert not graphon_wl_equivalent(er, other)  # the default is the multiset variant


def test_sum_variant_separates_graphons_with_different_degree_distributions():
    product = AnalyticGraphon(lambda x, y: x * y, name="xy")  # degree x/2
    flipped = AnalyticGraphon(lambda x, y: (1 - x) * (1 - y), name="flipped xy")
    er = erdos_renyi(0.25)
    # equal edge densities, but the path3 density (the degree's second moment) differs
    assert graphon_density("edge", product).value == pytest.approx(1 / 4)
    assert graphon_density("path3", product).value == pytest.approx(1 / 12)
    assert graphon_density("path3", er).value == pytest.approx(1 / 16)
    for weights in ("sum", "multiset"):
        assert not graphon_wl_equivalent(product, er, weights=weights)
        # a measure-preserving relabelling x -> 1 - x, exact on the midpoint grid
        assert graphon_wl_equivalent(product, flipped, weights=weights, resolution=32)


def test_sum_variant_sees_blow_ups_as_equal():
    gen = np.random.default_rng(5)
    a = torch.tensor(gen.uniform(0, 1, (4, 4)), dtype=F64)
    a = (a + a.T) / 2
    blow = a.repeat_interleave(3, 0).repeat_interleave(3, 1)  # [12, 12]
    small, big = StepGraphon.from_graph(a), StepGraphon.from_graph(blow)
    assert graphon_wl_equivalent(small, big, weights="sum")
    res = graphon_wl_refine([small, big], weights="sum")
    assert res.histograms[0] == res.histograms[1]
    assert sum(res.histograms[0].values()) == pytest.approx(1.0)
    assert not wl_equivalent(a, blow, weights="sum")  # as graphs, 4 vs 12 nodes (hom(K1))


def planted_pair(seed, sizes=(2, 3, 2)):
    """Two fractionally isomorphic weighted graphs with loops (the second randomly relabelled)
    and the same block signal on each (relabelled alike)."""
    gen = np.random.default_rng(seed)
    sizes = list(sizes)
    totals = gen.uniform(0.1, 1.0, (len(sizes),) * 2) * np.outer(sizes, sizes)
    totals = (totals + totals.T) / 2  # weight P -> Q equals weight Q -> P
    first, second = planted(sizes, totals, gen), planted(sizes, totals, gen)
    perm = torch.tensor(gen.permutation(sum(sizes)))
    signal = torch.tensor(np.repeat(gen.uniform(-1, 2, len(sizes)), sizes), dtype=F64)
    return first, second[perm][:, perm], signal, signal[perm]


@pytest.mark.parametrize("seed", range(4))
def test_sum_equivalent_weighted_pairs_have_equal_tree_densities(seed):
    first, second, signal1, signal2 = planted_pair(seed)
    assert wl_equivalent(first, second, weights="sum")
    assert np.allclose(tree_densities(first), tree_densities(second), rtol=1e-11, atol=0)
    # the perturbed blocks are not constant, so the entrywise squares differ: the multiset
    # variant and the double edge (a multigraph tree) both see it
    assert not wl_equivalent(first, second, weights="multiset")
    double = [float(hom_density("double_edge", a)) for a in (first, second)]
    assert double[0] != pytest.approx(double[1], rel=1e-6)
    # signals constant on the planted blocks: still equivalent, and signal-weighted tree
    # densities agree for random exponents
    assert wl_equivalent(first, second, signal1, signal2, weights="sum")
    gen = np.random.default_rng(100 + seed)
    exps = [(t, gen.integers(0, 3, t.number_of_nodes()).tolist()) for t in TREES]
    assert np.allclose(
        tree_densities(first, signal1, exps), tree_densities(second, signal2, exps), rtol=1e-10
    )
    # moving the signal to another block breaks it, and a signal-weighted tree shows it
    other = signal1.roll(2)
    assert not wl_equivalent(first, second, other, signal2, weights="sum")
    assert not np.allclose(
        tree_densities(first, other, exps), tree_densities(second, signal2, exps), rtol=1e-6
    )


def random_pairs():
    """Small weighted pairs with both verdicts: planted pairs, planted pairs with one weight
    moved (row sums kept), and random graphs with loops."""
    pairs = []
    for seed in range(6):
        first, second, _, _ = planted_pair(seed, sizes=(2, 2, 1))
        pairs.append((first, second))
        broken = first.clone()
        delta = 0.5 * float(first[0, 2:4].min())
        broken[0, 2] += delta
        broken[0, 3] -= delta  # node 0 keeps its degree; its sums into blocks change
        broken[2, 0], broken[3, 0] = broken[0, 2], broken[0, 3]
        pairs.append((broken, second))
        gen = torch.Generator().manual_seed(seed)
        a, b = torch.rand(2, 5, 5, generator=gen, dtype=F64)
        pairs.append((a + a.T, b + b.T))
    return pairs


def test_sum_verdict_matches_tree_densities_on_small_weighted_pairs():
    verdicts = []
    for a, b in random_pairs():
        same = wl_equivalent(a, b, weights="sum")
        gap = np.abs(tree_densities(a) - tree_densities(b)).max()
        if same:  # the theorem: fractionally isomorphic => equal tree densities
            assert gap < 1e-12
        else:  # on these small examples a tree on <= 6 vertices witnesses the difference
            assert gap > 1e-8
        if wl_equivalent(a, b, weights="multiset"):  # multiset-equivalent => sum-equivalent
            assert same
        verdicts.append(same)
    assert 0 < sum(verdicts) < len(verdicts)  # both outcomes occur


def test_same_degrees_but_not_fractionally_isomorphic():
    path6 = adj(nx.path_graph(6))
    c4_k2 = adj(nx.disjoint_union(nx.cycle_graph(4), nx.complete_graph(2)))
    assert sorted(path6.sum(1).tolist()) == sorted(c4_k2.sum(1).tolist())
    for name in ("edge", "path3", "star3"):  # stars read only the degree sequence
        assert float(hom_density(name, path6)) == pytest.approx(float(hom_density(name, c4_k2)))
    # hom(path4) = sum over ordered edges of d_u d_v: 2 * 16 vs 2 * 17
    assert float(hom_density("path4", path6)) * 6**4 == pytest.approx(32)
    assert float(hom_density("path4", c4_k2)) * 6**4 == pytest.approx(34)
    for weights in ("sum", "multiset"):
        assert not wl_equivalent(path6, c4_k2, weights=weights)
        assert not wl_equivalent(0.7 * path6, 0.7 * c4_k2, weights=weights)


def regular_pairs():
    c6 = adj(nx.cycle_graph(6))
    two_k3 = adj(nx.disjoint_union(nx.complete_graph(3), nx.complete_graph(3)))
    pairs = [(c6, two_k3), (adj(nx.petersen_graph()), adj(nx.circular_ladder_graph(5)))]
    for seed in range(3):
        r1, r2 = (
            nx.random_regular_graph(3, 10, seed=seed),
            nx.random_regular_graph(3, 10, seed=10 + seed),
        )
        pairs.append((adj(r1), adj(r2)))
    return pairs


def test_regular_graphs_are_equivalent_under_both_variants():
    for a, b in regular_pairs():
        assert wl_equivalent(a, b, weights="sum") and wl_equivalent(a, b, weights="multiset")
        assert np.allclose(tree_densities(a), tree_densities(b), rtol=1e-12)
    c6, two_k3 = regular_pairs()[0]
    assert not nx.is_isomorphic(
        nx.from_numpy_array(c6.numpy()), nx.from_numpy_array(two_k3.numpy())
    )


def test_variants_agree_on_loopless_zero_one_graphs():
    gen = torch.Generator().manual_seed(3)
    graphs = [a for pair in regular_pairs() for a in pair]
    for _ in range(12):
        a = (torch.rand(7, 7, generator=gen) < 0.4).to(F64).triu(1)
        graphs.append(a + a.T)
    for a in graphs:  # A o A = A and zero diagonal: same stable partition of one graph
        per = [wl_refine([a], weights=w) for w in ("sum", "multiset")]
        assert per[0].num_colors == per[1].num_colors
        assert sorted(per[0].histograms[0].values()) == sorted(per[1].histograms[0].values())
    for a, b in zip(graphs[::2], graphs[1::2]):  # and the same verdict on pairs
        assert wl_equivalent(a, b, weights="sum") == wl_equivalent(a, b, weights="multiset")


def test_loops_are_read_only_through_the_sums():
    loops = torch.eye(2, dtype=F64)  # two looped vertices
    edge = 1 - loops  # one edge; both are 1-regular, AX = XB with X = J/2
    assert np.allclose(tree_densities(loops), tree_densities(edge))
    assert wl_equivalent(loops, edge, weights="sum")
    assert not wl_equivalent(loops, edge, weights="multiset")  # the loop is a vertex type


def test_sum_histograms_are_invariant_under_relabelling():
    first, second, signal1, signal2 = planted_pair(7)
    gen = np.random.default_rng(8)
    perm = torch.tensor(gen.permutation(first.shape[0]))
    for signal in (None, signal1):
        moved = None if signal is None else signal[perm]
        h1 = wl_refine([first], [signal], weights="sum").histograms[0]
        h2 = wl_refine([first[perm][:, perm]], [moved], weights="sum").histograms[0]
        assert h1 == h2 and sum(h1.values()) == first.shape[0]


def test_class_sums_are_compared_after_rounding():
    # 0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1 in float64: the sums of a star's centre differ in
    # the last bit depending on the leaf order, which must not split isomorphic graphs.
    assert 0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1
    star = torch.zeros(4, 4, dtype=F64)
    star[0, 1:] = torch.tensor([0.1, 0.2, 0.3], dtype=F64)
    star[1:, 0] = star[0, 1:]
    flipped = star[[0, 3, 2, 1]][:, [0, 3, 2, 1]]
    assert wl_equivalent(star, flipped, weights="sum")
    assert wl_equivalent(star, flipped, weights="sum", decimals=15)  # sums: <= 9 decimals
    assert not wl_equivalent(star, star * (1 + 1e-6), weights="sum")


def test_weights_errors():
    c6 = adj(nx.cycle_graph(6))
    with pytest.raises(GraphDataError, match=r"weights: expected one of \['multiset', 'sum'\]"):
        wl_equivalent(c6, c6, weights="sums")
    with pytest.raises(GraphDataError, match="weights: 'sum' .* k = 1 only, got k=2"):
        wl_equivalent(c6, c6, k=2, weights="sum")
    with pytest.raises(GraphDataError, match="k = 1 only, got k=3"):
        graphon_wl_equivalent(sbm(2), sbm(2), k=3, variant="oblivious", weights="sum")
