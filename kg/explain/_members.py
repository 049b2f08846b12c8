"""Distilling the evaluator network: its sample of teacher targets and its training (private).

See ``evaluator.py``: a sample of teacher targets and subgraphs, and one network trained on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from graphdata.triples import TripleSet
from kg.base import KGEModel, eval_mode
from kg.explain._batch import SubgraphBank
from kg.explain._distill import bank_and_ids, draw_negatives
from kg.explain._network import SubgraphGNN
from kg.explain._pathbank import PathTable, path_table
from kg.explain.config import (
    DROPOUT,
    NUM_BASES,
    NUM_NEGATIVES,
    PATH_FRACTION,
    PATHS_PER_GRAPH,
    EvaluatorConfig,
)
from kg.explain.distillation import distillation_targets, train_network

__all__: list[str] = []


@dataclass
class Sample:
    """The teacher targets of one distillation sample and the subgraphs they live on."""

    count: int  # positives; graph g < count is a positive, count + g Q + q its q-th negative
    z: Tensor  # standardised teacher scores, [P (1 + Q)]
    rho: Tensor  # scaled teacher representations, [P (1 + Q), D]
    bank: SubgraphBank
    table: PathTable | None
    score_mean: float
    score_std: float
    representation_scale: float


def draw_sample(
    teacher: KGEModel, graph: TripleSet, cfg: EvaluatorConfig, generator: torch.Generator
) -> Sample:
    """Sample positives and negatives, compute their teacher targets, extract their subgraphs.

    The teacher scores in evaluation mode (no dropout, no batch-norm statistics updated) and
    is returned to its previous mode.
    """
    with eval_mode(teacher):
        return _draw_sample(teacher, graph, cfg, generator)


def _draw_sample(
    teacher: KGEModel, graph: TripleSet, cfg: EvaluatorConfig, generator: torch.Generator
) -> Sample:
    device = next(teacher.parameters()).device
    triples = graph.mapped_triples.to(device)
    count = min(cfg.num_train_triples, triples.size(0))
    positives = triples[torch.randperm(triples.size(0), generator=generator)[:count].to(device)]
    negatives = draw_negatives(teacher, positives, generator, graph.num_relations)  # [P, Q, 3]
    targets = distillation_targets(teacher, positives, negatives)
    scores = torch.cat([targets.positive_score, targets.negative_score.reshape(-1)])
    reps = torch.cat(
        [targets.positive_representation, targets.negative_representation.flatten(0, 1)]
    )
    mean, std = float(scores.mean()), float(scores.std().clamp_min(1e-8))
    scale = float(reps.std().clamp_min(1e-8))
    everything = torch.cat([positives, negatives.reshape(-1, 3)])
    # A relation-corrupted negative (h, r', t) is scored on its positive's subgraph: (h, r, t)
    # removed, as the explainer removes its target.
    same_pair = (negatives[..., 0] == positives[:, None, 0]) & (
        negatives[..., 2] == positives[:, None, 2]
    )
    removed = torch.where(same_pair, positives[:, None, 1], negatives[..., 1])
    removed = torch.cat([positives[:, 1], removed.reshape(-1)])
    bank, edge_id = bank_and_ids(everything, graph, teacher.num_entities, cfg.hops, removed)
    table = None
    if PATH_FRACTION > 0:
        table = path_table(everything, graph, bank, edge_id, cfg.max_length, PATHS_PER_GRAPH)
    return Sample(count, (scores - mean) / std, reps / scale, bank, table, mean, std, scale)


def build_network(cfg: EvaluatorConfig, num_relations: int, teacher_dim: int) -> SubgraphGNN:
    """The evaluator network ``cfg`` describes, freshly initialised (distillation and loading)."""
    return SubgraphGNN(
        num_relations,
        teacher_dim,
        hidden=cfg.hidden,
        num_layers=cfg.num_layers,
        num_bases=NUM_BASES,
        max_distance=max(cfg.hops, cfg.max_length),
        dropout=DROPOUT,
    )


def train_member(
    cfg: EvaluatorConfig,
    num_relations: int,
    sample: Sample,
    seed: int,
    stream: torch.Generator,
) -> tuple[SubgraphGNN, list[dict[str, float]]]:
    """Initialise a network with ``seed`` and distil it on ``sample`` (mini-batches ``stream``)."""
    device = sample.z.device
    with torch.random.fork_rng(devices=[device.index or 0] if device.type == "cuda" else []):
        torch.manual_seed(seed)  # initialisation and dropout
        network = build_network(cfg, num_relations, sample.rho.size(1)).to(device)
        history = train_network(
            cfg,
            network,
            sample.bank,
            sample.table,
            sample.z,
            sample.rho,
            sample.count,
            NUM_NEGATIVES,
            stream,
        )
    return network.eval(), history
