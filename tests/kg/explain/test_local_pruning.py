"""Candidate pruning by relevance and the beam search (kg.explain.local, "Pruning"; issue 18)."""

import itertools
import warnings

import pytest
import torch
import torch.nn.functional as F

from graphdata.errors import GraphDataError
from graphdata.paths import enumerate_paths
from kg.explain.local import (
    CandidatesCapped,
    gradient_relevance,
    length_shares,
    local_structure,
    model_relevance,
)
from tests.kg.explain.conftest import capped_grandparent, unpruned


def _random_graph(seed, num_nodes=12, num_edges=45):
    generator = torch.Generator().manual_seed(seed)
    edge_index = torch.randint(0, num_nodes, (2, num_edges), generator=generator)
    edge_type = torch.randint(0, 3, (num_edges,), generator=generator)
    # A distinct real weight per global edge, looked up by the relevance through its triple.
    weight = torch.randn(num_edges, generator=generator, dtype=torch.float64)
    return edge_index, edge_type, weight


def _by_triple(edge_index, edge_type, weight):
    """A relevance that maps each local triple back to its global edge's weight."""
    table = {}
    for e, (h, r, t) in enumerate(zip(edge_index[0].tolist(), edge_type.tolist(), edge_index[1])):
        table.setdefault((h, r, int(t)), []).append(float(weight[e]))

    def relevance(local):
        seen: dict = {}
        out = []
        for triple in map(tuple, local.triples.tolist()):
            k = seen.get(triple, 0)  # parallel copies of a triple, in stored order
            out.append(table[triple][k])
            seen[triple] = k + 1
        return torch.tensor(out, dtype=torch.float64)

    return relevance


def _first_copies(edge_index, edge_type):
    """The graph's triples without parallel copies: ``(triples, ids of the first copies)``."""
    seen, first = set(), []
    for e, triple in enumerate(zip(edge_index[0].tolist(), edge_type.tolist(), edge_index[1])):
        key = (triple[0], triple[1], int(triple[2]))
        if key not in seen:
            seen.add(key)
            first.append(e)
    return seen, torch.tensor(first)


def _global_paths(local, paths):
    triples = local.triples.tolist()
    return [tuple(tuple(triples[e]) for e in p) for p in paths]


def _brute_force_top(local, relevance, budget, max_length, relation=None):
    """Every path enumerated, ranked by R = sum of edge relevances, top a_l per length;
    with ``relation``, no path of two or more steps uses an edge of it."""
    weight = relevance(local)
    full = enumerate_paths(
        local.edge_index, local.edge_type, 0, 1, max_length, num_nodes=local.num_nodes
    )
    rows = [tuple(row[:ell]) for row, ell in zip(full.edge_ids.tolist(), full.length.tolist())]
    if relation is not None:
        types = local.edge_type.tolist()
        rows = [p for p in rows if len(p) == 1 or all(types[e] != relation for e in p)]
    by_length = [[p for p in rows if len(p) == ell] for ell in range(1, max_length + 1)]
    shares = length_shares([len(p) for p in by_length], budget)
    kept = []
    for paths, share in zip(by_length, shares):
        ranked = sorted(paths, key=lambda p: -float(weight[list(p)].sum()))  # stable: ties in order
        kept += ranked[:share]
    return kept, [len(p) for p in by_length]


@pytest.mark.parametrize("seed", range(8))
def test_relevance_keeps_the_most_relevant_paths_of_each_length(seed):
    edge_index, edge_type, weight = _random_graph(seed)
    relevance = _by_triple(edge_index, edge_type, weight)
    target = (0, 7, 1)  # relation 7 is absent: nothing is removed
    full = local_structure(edge_index, edge_type, target, num_nodes=12, max_candidates=10**6)
    assert full.pruning.method == "exact"
    total = len(full.paths)
    if total < 4:
        pytest.skip("too few paths to prune")
    budget = max(2, total // 3)
    with pytest.warns(CandidatesCapped, match="most relevant"):
        pruned = local_structure(
            edge_index, edge_type, target, num_nodes=12, max_candidates=budget, relevance=relevance
        )
    # The brute force runs on the whole enclosing subgraph (the unpruned structure); the pruned
    # structure's local graph is the union of its kept paths (test_local_union.py).
    expected, counts = _brute_force_top(full, relevance, budget, 3)
    assert pruned.pruning.method == "relevance" and pruned.truncated
    assert pruned.pruning.enumerated == tuple(counts) and sum(pruned.pruning.kept) == budget
    assert _global_paths(pruned, pruned.paths) == _global_paths(full, expected)
    # The beam, forced by max_enumerated=1 and as wide as every partial path, is the exact top.
    with pytest.warns(CandidatesCapped, match="beam search of width 100000"):
        beam = local_structure(
            edge_index,
            edge_type,
            target,
            num_nodes=12,
            max_candidates=budget,
            relevance=relevance,
            max_enumerated=1,
            beam_width=100000,
        )
    assert any(beam.pruning.overflow)
    assert sorted(_global_paths(beam, beam.paths)) == sorted(_global_paths(pruned, pruned.paths))


@pytest.mark.parametrize("seed", range(6))
def test_a_length_counted_over_the_cap_is_not_enumerated_and_nothing_changes(seed, monkeypatch):
    # With a relevance, a length of more than max_enumerated paths (count_paths) goes to the
    # beam unenumerated; the structure equals the one built after enumerating it to the cap.
    from kg.explain import local as local_module

    edge_index, edge_type, weight = _random_graph(seed, num_nodes=9, num_edges=70)
    relevance = _by_triple(edge_index, edge_type, weight)
    enumerated = []

    def recording(*args, **kwargs):
        enumerated.append(kwargs["min_length"])
        return enumerate_paths(*args, **kwargs)

    def build():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CandidatesCapped)
            return local_structure(
                edge_index,
                edge_type,
                (0, 7, 1),
                num_nodes=9,
                max_candidates=20,
                relevance=relevance,
                max_enumerated=25,
                beam_width=40,
            )

    monkeypatch.setattr(local_module, "enumerate_paths", recording)
    skipped = build()
    over = [ell for ell, flag in enumerate(skipped.pruning.overflow, 1) if flag]
    assert over and not set(over) & set(enumerated)  # the lengths over the cap: never enumerated
    monkeypatch.setattr(local_module, "count_paths", lambda *args, **kwargs: [0] * args[3])
    enumerated.clear()
    enumerated_first = build()
    assert enumerated == [1, 2, 3]
    assert skipped.pruning == enumerated_first.pruning
    assert skipped.paths == enumerated_first.paths
    assert torch.equal(skipped.triples, enumerated_first.triples)


@pytest.mark.parametrize("seed", range(4))
def test_a_narrow_beam_gives_valid_simple_paths_in_decreasing_relevance(seed):
    edge_index, edge_type, weight = _random_graph(seed, num_nodes=10, num_edges=60)
    # No parallel copies of a triple: the relevance of the pruned (restricted) local graph's
    # triples is then the one the beam saw on the enclosing subgraph.
    _, first = _first_copies(edge_index, edge_type)
    edge_index, edge_type, weight = edge_index[:, first], edge_type[first], weight[first]
    relevance = _by_triple(edge_index, edge_type, weight)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CandidatesCapped)
        local = local_structure(
            edge_index,
            edge_type,
            (0, 7, 1),
            num_nodes=10,
            max_candidates=30,
            relevance=relevance,
            max_enumerated=2,
            beam_width=3,
        )
    whole = local_structure(edge_index, edge_type, (0, 7, 1), num_nodes=10)
    exact = set(_global_paths(whole, whole.paths))
    w = relevance(local)
    for ell in (1, 2, 3):
        paths = [(p, n) for p, n in zip(local.paths, local.path_nodes) if len(p) == ell]
        assert len(paths) <= 3 or not local.pruning.overflow[ell - 1]
        scores = [float(w[list(p)].sum()) for p, _ in paths]
        assert scores == sorted(scores, reverse=True)
        for p, nodes in paths:
            assert nodes[0] == 0 and nodes[-1] == 1 and len(set(nodes)) == len(nodes)
            for e, a, b in zip(p, nodes, nodes[1:]):
                assert {a, b} == set(local.edge_index[:, e].tolist())
    assert set(_global_paths(local, local.paths)) <= exact  # every beam path is a real path


def test_under_the_budget_the_enumeration_is_exact_and_relevance_is_not_asked():
    edge_index, edge_type, _ = _random_graph(0)

    def never(local):
        raise AssertionError("relevance computed for a structure that fits the budget")

    local = local_structure(edge_index, edge_type, (0, 7, 1), num_nodes=12, relevance=never)
    reference = local_structure(edge_index, edge_type, (0, 7, 1), num_nodes=12)
    assert local.paths == reference.paths and not local.truncated
    assert local.pruning.method == "exact" and local.pruning.kept == local.pruning.enumerated
    assert local.pruning.reason.startswith(f"all {len(local.paths)} candidate paths kept")


def test_gradient_relevance_is_the_two_point_integrated_gradient():
    c = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)

    def f(local, w):  # f(w) = (w . c)^2: df/dw = 2 (w . c) c, 0 at w = 0, 3 c at w = 1
        return (w.double() @ c) ** 2

    edge_index = torch.tensor([[0, 2, 0], [2, 1, 1]])
    local = local_structure(edge_index, torch.tensor([0, 1, 2]), (0, 5, 1), hops=1, max_length=2)
    assert torch.allclose(gradient_relevance(f)(local).double(), 0.5 * (0 + 3.0 * c))


def test_model_relevance_is_the_calibrated_log_probability():
    from kg.distmult import DistMult

    torch.manual_seed(0)
    model = DistMult(12, 3, dim=4)
    edge_index, edge_type, _ = _random_graph(1)
    local = local_structure(edge_index, edge_type, (0, 7, 1), num_nodes=12)
    got = model_relevance(model, (0.1, 2.0))(local)
    h, r, t = local.triples.t()
    with torch.no_grad():
        expected = F.logsigmoid((model(h, r, t).double() - 0.1) / 2.0)
    assert torch.allclose(got, expected)
    with pytest.raises(GraphDataError, match=r"calibration: expected finite \(tau, sigma_f\)"):
        model_relevance(model, (0.0, 0.0))


def test_bad_relevance_and_budgets_are_refused():
    edge_index, edge_type, _ = _random_graph(2)
    kwargs = dict(num_nodes=12, max_candidates=1)
    with pytest.raises(GraphDataError, match=r"relevance: expected a tensor \[m\]"):
        local_structure(
            edge_index, edge_type, (0, 7, 1), relevance=lambda x: torch.zeros(1), **kwargs
        )

    def nan(local):
        return torch.full((local.num_edges,), float("nan"))

    with pytest.raises(GraphDataError, match="relevance: expected finite values"):
        local_structure(edge_index, edge_type, (0, 7, 1), relevance=nan, **kwargs)
    for name in ("max_enumerated", "beam_width"):
        with pytest.raises(GraphDataError, match=f"{name}: expected a positive int, got 0"):
            local_structure(edge_index, edge_type, (0, 7, 1), **{name: 0}, num_nodes=12)


def test_the_explainer_prunes_by_the_models_edge_probabilities(
    world, teacher, explainer, small_config
):
    capped, target = capped_grandparent(world, teacher, explainer, small_config, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CandidatesCapped)
        local = capped.local_structure(target)
    assert local.pruning.method == "relevance" and sum(local.pruning.kept) == 6
    # The relevance is the KGE's calibrated log-probability of each edge of the whole enclosing
    # subgraph (the unpruned structure), as the distillation's cap ranks them, with or without
    # an evaluator.
    full = unpruned(capped, local)
    relevance = model_relevance(teacher, capped.calibration_)(full)
    # The pattern strategy (the default) leaves out paths through another fact of r.
    own = full.target[1] if capped.config.strategy == "patterns" else None
    expected, _ = _brute_force_top(full, lambda _: relevance, 6, 3, relation=own)
    assert _global_paths(local, local.paths) == _global_paths(full, expected)


@pytest.mark.parametrize("seed", range(6))
def test_paths_through_the_target_relation_leave_the_budget(seed):
    edge_index, edge_type, weight = _random_graph(seed)
    relevance = _by_triple(edge_index, edge_type, weight)
    relation = int(edge_type[0])  # a relation the graph uses, so some paths go through it
    target = (0, relation, 1)
    kwargs = dict(num_nodes=12, relevance=relevance)
    full = local_structure(edge_index, edge_type, target, max_candidates=10**6, **kwargs)
    types = full.edge_type.tolist()
    usable = [p for p in full.paths if len(p) == 1 or all(types[e] != relation for e in p)]
    if len(usable) == len(full.paths) or len(usable) < 2:
        pytest.skip("no path through the relation, or too few others")
    exact = local_structure(
        edge_index, edge_type, target, max_candidates=10**6, through_relation=False, **kwargs
    )
    assert _global_paths(exact, exact.paths) == _global_paths(full, usable)  # same order
    budget = max(1, len(usable) // 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CandidatesCapped)
        pruned = local_structure(
            edge_index, edge_type, target, max_candidates=budget, through_relation=False, **kwargs
        )
    expected, _ = _brute_force_top(full, relevance, budget, 3, relation=relation)
    assert _global_paths(pruned, pruned.paths) == _global_paths(full, expected)


@pytest.mark.parametrize("seed", range(6))
def test_the_index_gives_the_same_local_structure(seed):
    from kg.explain.local import LocalIndex

    edge_index, edge_type, _ = _random_graph(seed, num_nodes=15, num_edges=50)
    # The target is one of the graph's triples (removed) or a new one, hops 1 and 2.
    h, t = int(edge_index[0, seed]), int(edge_index[1, seed])
    targets = [(h, int(edge_type[seed]), t), (0, 9, 1)]
    index = LocalIndex(edge_index, edge_type, 15)
    for target, hops in itertools.product(targets, (1, 2)):
        if target[0] == target[2]:
            continue
        a = local_structure(edge_index, edge_type, target, num_nodes=15, hops=hops)
        b = local_structure(edge_index, edge_type, target, num_nodes=15, hops=hops, index=index)
        assert torch.equal(a.nodes, b.nodes) and torch.equal(a.edge_index, b.edge_index)
        assert torch.equal(a.edge_type, b.edge_type) and a.paths == b.paths
    with pytest.raises(GraphDataError, match="index: built from other edge_index"):
        local_structure(edge_index.clone(), edge_type, (0, 9, 1), index=index)


def test_the_beams_top_k_is_the_stable_sorts_first_k():
    # _first_largest sorts only the values above the k-th largest and the first ties at it:
    # the indices of torch's stable descending argsort, cut at k, with many ties.
    from kg.explain.local import _first_largest

    generator = torch.Generator().manual_seed(0)
    for trial in range(500):
        n = int(torch.randint(0, 120, (1,), generator=generator))
        k = int(torch.randint(1, 40, (1,), generator=generator))
        if trial % 2:
            values = torch.randint(-2, 3, (n,), generator=generator).double()
        else:
            values = torch.randn(n, generator=generator, dtype=torch.float64)
        expected = torch.argsort(values, descending=True, stable=True)[:k]
        assert torch.equal(_first_largest(values, k), expected), trial


def _expanded_beam(local, length, weight, width, excluded):
    """The beam with every extension of every partial path ranked: the oracle of its pruning."""
    from kg.explain.local import _first_largest

    n, m = local.num_nodes, local.num_edges
    usable = torch.ones(m, dtype=torch.bool) if excluded is None else ~excluded
    eid = torch.arange(m)[usable]
    a, b = local.edge_index[0, eid], local.edge_index[1, eid]
    src, dst, eids = torch.cat([a, b]), torch.cat([b, a]), torch.cat([eid, eid])
    order = torch.argsort(src, stable=True)
    src, dst, eids = src[order], dst[order], eids[order]
    dist = torch.full((n,), length + 1)
    dist[1] = 0
    for step in range(1, length):
        reach = torch.zeros(n, dtype=torch.bool)
        reach[src[dist[dst] == step - 1]] = True
        dist[reach & (dist == length + 1)] = step
    paths = [((0,), (), 0.0)]  # (nodes, edges, score), best first
    for i in range(length):
        left = length - i - 1
        ext = []
        for nodes, edges, score in paths:
            for j in torch.nonzero(src == nodes[-1]).flatten().tolist():
                v = int(dst[j])
                if left == 0 and v != 1:
                    continue
                if left > 0 and (int(dist[v]) > left or v == 1 or v in nodes):
                    continue
                ext.append((nodes + (v,), edges + (int(eids[j]),), score + float(weight[eids[j]])))
        values = torch.tensor([e[2] for e in ext], dtype=torch.float64)
        paths = [ext[k] for k in _first_largest(values, width).tolist()]
    return [e for _, e, _ in paths], [v for v, _, _ in paths]


@pytest.mark.parametrize("seed", range(8))
def test_the_pruned_beam_keeps_the_expanded_beams_paths(seed):
    # The beam ranks only the extensions whose weight can reach the k-th largest total (a
    # bound from each partial path's heaviest entries): the same paths, in the same order, as
    # ranking every extension, with tied weights (drawn from three values) and narrow beams.
    from kg.explain.local import _beam_paths

    generator = torch.Generator().manual_seed(seed)
    edge_index = torch.randint(0, 6, (2, 120), generator=generator)
    edge_index = edge_index[:, edge_index[0] != edge_index[1]]
    edge_type = torch.zeros(edge_index.size(1), dtype=torch.long)
    local = local_structure(edge_index, edge_type, (0, 9, 1), num_nodes=6, hops=2)
    for trial, width in enumerate((1, 3, 7, 20, 200)):
        if (seed + trial) % 2:
            weight = torch.randint(0, 3, (local.num_edges,), generator=generator).double()
        else:
            weight = torch.randn(local.num_edges, generator=generator, dtype=torch.float64)
        excluded = torch.rand(local.num_edges, generator=generator) < 0.1 if trial else None
        for length in (1, 2, 3):
            edges, nodes = _beam_paths(local, length, weight, width, excluded)
            want_edges, want_nodes = _expanded_beam(local, length, weight, width, excluded)
            assert edges.tolist() == [list(e) for e in want_edges], (length, width)
            assert nodes.tolist() == [list(v) for v in want_nodes], (length, width)
