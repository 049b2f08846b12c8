import dataclasses
import warnings

import pytest
import torch

from graphdata.errors import GraphDataError
from kg.explain.local import local_structure
from kg.explain.node_search import node_greedy_search

# Target (0, 9, 1). Planted chain 0 -a-> 2 -b-> 5 -c-> 1; distractor chains 0 - 3 - 1, 0 - 4 - 1.
EDGES = [(0, 0, 2), (2, 1, 5), (5, 2, 1), (0, 3, 3), (3, 3, 1), (0, 4, 4), (4, 4, 1), (0, 9, 1)]


def _local(max_length=3):
    triples = torch.tensor(EDGES)
    return local_structure(
        triples[:, [0, 2]].t(), triples[:, 1], (0, 9, 1), hops=2, max_length=max_length
    )


def _planted_oracle(local):
    triples = [tuple(t) for t in local.triples.tolist()]
    planted = [triples.index(t) for t in [(0, 0, 2), (2, 1, 5), (5, 2, 1)]]
    return lambda keep: keep[:, planted].all(dim=1).float()


def test_node_search_stops_at_the_first_node_next_to_the_tail():
    local = _local()
    chosen, mask, scored = node_greedy_search(local, _planted_oracle(local), top_k=1)
    # Breadth first from 0: its neighbours 2, 3, 4; only deleting 2 changes the score, so key
    # = {0, 2}; popping 2 adds 5, popping 5 reaches the tail: the planted chain alone.
    assert [local.nodes[list(local.path_nodes[p])].tolist() for p in chosen] == [[0, 2, 5, 1]]
    assert int(mask.sum()) == 3 and scored == 1 + 3 + 1
    # With top_k = 3 every neighbour of 0 enters key (2 first, the most important); popping 2
    # adds 5, popping 3 touches the tail: key holds all three chains.
    chosen, _, _ = node_greedy_search(local, _planted_oracle(local), top_k=3)
    assert {tuple(local.nodes[list(local.path_nodes[p])].tolist()) for p in chosen} == {
        (0, 2, 5, 1),
        (0, 3, 1),
        (0, 4, 1),
    }


def test_node_search_respects_the_length_bound_and_bad_input():
    local = _local(max_length=2)  # the planted chain is too long to be a candidate
    chosen, _, _ = node_greedy_search(local, _planted_oracle(local), top_k=1)
    assert all(len(local.paths[p]) <= 2 for p in chosen)
    empty = dataclasses.replace(local, paths=(), path_nodes=())
    assert node_greedy_search(empty, _planted_oracle(local))[0] == ()
    with pytest.raises(GraphDataError, match="top_k: expected a positive int"):
        node_greedy_search(local, _planted_oracle(local), top_k=0)


def test_explainer_node_strategy(explainer, world):
    config = dataclasses.replace(explainer.config, strategy="nodes")
    nodes = type(explainer)(explainer.model, config).fit(
        world.dataset, evaluator=explainer.evaluator_
    )
    target = next(t for t in world.derived_triples("test") if t[1] == "grandparent")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the candidate cap of the small config
        explanation = nodes.explain(target)
    assert explanation.stop_reason in ("reached_tail", "tail_not_reached")
    assert set(explanation.triples) <= set(explanation.local_triples)
    for path in explanation.paths:
        assert path.entities[0] == target[0] and path.entities[-1] == target[2]
