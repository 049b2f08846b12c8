"""A pruned target's local graph is the union of its kept paths (kg.explain.local, issue 18)."""

import warnings
from collections import Counter

import pytest
import torch

from kg.explain.local import CandidatesCapped, LocalStructure, local_structure, restrict_to_paths
from tests.kg.explain.conftest import capped_grandparent
from tests.kg.explain.test_local_pruning import (
    _brute_force_top,
    _by_triple,
    _global_paths,
    _random_graph,
)


def _pruned_and_whole(seed, budget=3):
    edge_index, edge_type, weight = _random_graph(seed, num_nodes=12, num_edges=45)
    relevance = _by_triple(edge_index, edge_type, weight)
    whole = local_structure(edge_index, edge_type, (0, 7, 1), num_nodes=12, max_candidates=10**6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CandidatesCapped)
        pruned = local_structure(
            edge_index,
            edge_type,
            (0, 7, 1),
            num_nodes=12,
            max_candidates=budget,
            relevance=relevance,
        )
    return whole, pruned, relevance


@pytest.mark.parametrize("seed", range(8))
def test_the_pruned_local_graph_is_the_union_of_the_kept_paths(seed):
    whole, pruned, relevance = _pruned_and_whole(seed)
    if not pruned.truncated:
        pytest.skip("nothing to prune")
    # Brute force: every path of the whole enclosing subgraph ranked by R, top a_l per length.
    expected, _ = _brute_force_top(whole, relevance, 3, 3)
    used = sorted({e for p in expected for e in p})
    triples = whole.triples.tolist()
    assert Counter(map(tuple, pruned.triples.tolist())) == Counter(tuple(triples[e]) for e in used)
    # The nodes: h, t and the kept paths' nodes, in their old (ascending) order.
    visited = {v for p in expected for e in p for v in whole.edge_index[:, e].tolist()} | {0, 1}
    assert pruned.nodes.tolist() == whole.nodes[sorted(visited)].tolist()
    assert int(pruned.nodes[0]) == 0 and int(pruned.nodes[1]) == 1  # h and t stay 0 and 1
    # The re-indexed paths are the same global triples and nodes, and walk the new graph.
    assert _global_paths(pruned, pruned.paths) == _global_paths(whole, expected)
    for p, nodes in zip(pruned.paths, pruned.path_nodes):
        assert nodes[0] == 0 and nodes[-1] == 1
        for e, a, b in zip(p, nodes, nodes[1:]):
            assert {a, b} == set(pruned.edge_index[:, e].tolist())
    # Sizes recorded, before and after; the paths found stay those of the whole subgraph.
    assert pruned.pruning.triples == (whole.num_edges, pruned.num_edges)
    assert pruned.pruning.nodes == (whole.num_nodes, pruned.num_nodes)
    assert pruned.found == pruned.pruning.enumerated and pruned.num_edges <= whole.num_edges


def test_an_exact_structure_keeps_the_whole_subgraph():
    edge_index, edge_type, _ = _random_graph(0)
    local = local_structure(edge_index, edge_type, (0, 7, 1), num_nodes=12)
    assert local.pruning.method == "exact"
    assert local.pruning.triples == (local.num_edges, local.num_edges)
    # Restricting to every candidate path may drop context, so it is never applied then.
    union = restrict_to_paths(local)
    assert union.num_edges <= local.num_edges
    assert _global_paths(union, union.paths) == _global_paths(local, local.paths)


def test_the_explainer_scores_a_pruned_target_on_the_union_graph(
    world, teacher, explainer, small_config
):
    capped, target = capped_grandparent(world, teacher, explainer, small_config, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CandidatesCapped)
        local = capped.local_structure(target)
        result = capped.explain(target)
    # The union graph built by hand from global triples, in another node order.
    kept = {tuple(x) for x in local.triples.tolist()}
    h, _, t = local.target
    others = sorted({v for a, _, b in kept for v in (a, b)} - {h, t}, reverse=True)
    order = [h, t, *others]
    pos = {v: i for i, v in enumerate(order)}
    rows = sorted(kept)
    union = LocalStructure(
        target=local.target,
        nodes=torch.tensor(order),
        edge_index=torch.tensor([[pos[a] for a, _, _ in rows], [pos[b] for _, _, b in rows]]),
        edge_type=torch.tensor([r for _, r, _ in rows]),
        paths=(),
        path_nodes=(),
        truncated=False,
        hops=local.hops,
        max_length=local.max_length,
    )
    assert len(rows) == local.num_edges  # no parallel copies in the family world
    evaluator = explainer.evaluator_
    with torch.no_grad():
        full = evaluator.score_local(union, torch.ones(1, union.num_edges, dtype=torch.bool))
        empty = evaluator.score_local(union, torch.zeros(1, union.num_edges, dtype=torch.bool))
    assert result.truncated
    assert result.full_score == pytest.approx(float(full[0]), abs=1e-5)
    assert result.empty_score == pytest.approx(float(empty[0]), abs=1e-5)
    assert len(result.local_triples) == union.num_edges
