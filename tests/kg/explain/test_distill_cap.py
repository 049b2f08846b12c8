"""Distillation subgraphs capped as the explainer caps a pruned target (issue 18)."""

import warnings
from collections import Counter

import torch

from graphdata.triples import TripleSet
from graphdata.vocabulary import Vocabulary
from kg.distmult import DistMult
from kg.explain.evaluator import config as evaluator_config
from kg.explain.evaluator import sampling
from kg.explain.evaluator.sampling import bank_and_ids, teacher_calibration
from kg.explain.explainer import ExplainerConfig
from kg.explain.local import CandidatesCapped, local_structure, model_relevance


def test_the_budget_is_the_explainers_default():
    assert evaluator_config.CANDIDATE_BUDGET == ExplainerConfig().max_candidates


def test_small_graphs_banks_are_unchanged(world):
    graph = world.dataset.train
    triples = graph.mapped_triples[::3]
    torch.manual_seed(0)
    teacher = DistMult(graph.num_entities, graph.num_relations, dim=4)
    plain, plain_ids = bank_and_ids(triples, graph, graph.num_entities, 2)
    capped, capped_ids = bank_and_ids(triples, graph, graph.num_entities, 2, teacher=teacher)
    assert int(plain.edge_ptr.diff().max()) <= 3 * evaluator_config.CANDIDATE_BUDGET
    for name in ("node_ptr", "edge_ptr", "edge_index", "edge_type", "relation"):
        assert torch.equal(getattr(plain, name), getattr(capped, name)), name
    assert torch.equal(plain_ids, capped_ids)


def _hub_graph(num_hubs=3, spokes=12, seed=0):
    """Entities 0 and 1 joined through many hubs and spokes: hundreds of h-t paths."""
    generator = torch.Generator().manual_seed(seed)
    rows = []
    hubs = list(range(2, 2 + num_hubs))
    spoke_ids = list(range(2 + num_hubs, 2 + num_hubs + spokes))
    for hub in hubs:
        rows += [(0, 0, hub), (hub, 1, 1)]
        for s in spoke_ids:
            rows += [(hub, 2, s)]
    for s in spoke_ids:
        rows += [(0, 3, s), (s, 4, 1)]
    rows += [(0, 5, 1)]
    triples = torch.tensor(rows)
    relations = torch.randint(0, 6, (len(rows),), generator=generator)
    triples[:-1, 1] = relations[:-1]
    num_entities = 2 + num_hubs + spokes
    entities = Vocabulary([f"e{i}" for i in range(num_entities)])
    relations = Vocabulary([f"r{i}" for i in range(6)], kind="relation")
    return TripleSet(triples, entities, relations), num_entities


def test_a_hub_graphs_bank_subgraphs_are_bounded_and_are_the_explainers(monkeypatch):
    graph, n = _hub_graph()
    budget, max_length = 5, 3
    monkeypatch.setattr(sampling, "CANDIDATE_BUDGET", budget)
    torch.manual_seed(0)
    teacher = DistMult(n, 6, dim=4)
    triples = torch.tensor([[0, 5, 1], [0, 1, 1], [2, 0, 1]])
    plain, _ = bank_and_ids(triples, graph, n, 2)
    bank, edge_id = bank_and_ids(triples, graph, n, 2, teacher=teacher, max_length=max_length)
    sizes = bank.edge_ptr.diff()
    assert int(plain.edge_ptr.diff().max()) > budget * max_length  # the cap is needed ...
    assert int(sizes.max()) <= budget * max_length  # ... and holds
    # Each cut subgraph is the explainer's pruned local graph by the teacher's relevance.
    relevance = model_relevance(teacher, teacher_calibration(teacher, graph, 0))
    all_triples = graph.mapped_triples
    for g, (h, r, t) in enumerate(triples.tolist()):
        lo, hi = int(bank.edge_ptr[g]), int(bank.edge_ptr[g + 1])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CandidatesCapped)
            local = local_structure(
                all_triples[:, [0, 2]].t(),
                all_triples[:, 1],
                (h, r, t),
                num_nodes=n,
                hops=2,
                max_length=max_length,
                max_candidates=budget,
                relevance=relevance,
            )
        assert local.truncated
        got = Counter(map(tuple, all_triples[edge_id[lo:hi]].tolist()))
        assert got == Counter(map(tuple, local.triples.tolist()))
        assert int(bank.node_ptr[g + 1] - bank.node_ptr[g]) == local.num_nodes
        # Bank edges are positions of this graph's nodes.
        edges = bank.edge_index[:, lo:hi]
        assert bool((edges >= bank.node_ptr[g]).all() and (edges < bank.node_ptr[g + 1]).all())
