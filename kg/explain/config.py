"""The configuration of the distilled evaluator, one default per field (no other copies).

Read by the distillation (:mod:`kg.explain.distillation`), the evaluator
(:mod:`kg.explain.evaluator`), its file format and the explainer, which refuses an evaluator
config whose ``hops``/``max_length`` differ from its own (issue #16: they used to be overridden
silently).
"""

from __future__ import annotations

from dataclasses import dataclass

from graphdata.errors import GraphDataError

__all__ = ["EvaluatorConfig"]


@dataclass
class EvaluatorConfig:
    """Hyperparameters of the distilled evaluator (architecture and distillation)."""

    hops: int = 2  # radius k of the enclosing subgraphs (must match the explainer's)
    hidden: int = 32  # width of the GNN layers (the reference: 64, GAT)
    num_layers: int = 3  # relational message-passing layers (the reference: 3)
    num_bases: int = 4  # basis matrices per layer (R-GCN basis decomposition)
    dropout: float = 0.1  # dropout after each layer (the reference: 0.5)
    steps: int = 1200  # optimiser steps (the reference: 10,000 full-batch steps)
    batch_size: int = 32  # positive triples per step, each with its negatives
    lr: float = 3e-3  # Adam learning rate
    num_train_triples: int = 1000  # training triples sampled for distillation (all if fewer)
    num_negatives: int = 2  # corruptions per positive (head or tail, one coin each)
    hard_negative_fraction: float = (
        0.5  # share of negatives from the teacher's top-ranked wrong ones
    )
    hard_negative_pool: int = (
        10  # how many of the teacher's top entities a hard negative is drawn from
    )
    relation_negative_fraction: float = 0.5  # share of negatives (h, r', t): relation corrupted
    rank_margin: float = 1.0  # gamma of the ranking loss, in standardised score units
    rank_weight: float = 1.0  # lambda, weight of the ranking loss
    perturb_fraction: float = 0.5  # share of training subgraphs thinned by edge/relation dropout
    path_fraction: float = 0.5  # share reduced to 1-3 random h-t paths (explanation-shaped)
    max_length: int = 3  # longest path the evaluator must credit: distance labels up to it
    paths_per_graph: int = 200  # paths enumerated per training subgraph for path reduction
    ensemble: int = 1  # k evaluators distilled (seeds member_seed(seed, j)), scores averaged
    resample: bool = True  # each member draws its own sample (False: all share member 0's)
    seed: int = 0  # seeds sampling, initialisation and dropout

    def validate(self) -> None:
        """Raise :class:`~graphdata.errors.GraphDataError` naming the first invalid field."""
        for name in (
            "hops",
            "hidden",
            "num_layers",
            "num_bases",
            "steps",
            "batch_size",
            "num_train_triples",
            "num_negatives",
            "hard_negative_pool",
            "max_length",
            "paths_per_graph",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise GraphDataError(f"{name}: expected a positive int, got {value!r}")
        k = self.ensemble
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise GraphDataError(
                f"ensemble: expected the number k of evaluators to distil and average, a positive "
                f"int (1: a single evaluator), got {k!r}"
            )
        if not isinstance(self.resample, bool):
            raise GraphDataError(f"resample: expected a bool, got {self.resample!r}")
        if not 0.0 <= self.hard_negative_fraction <= 1.0:
            raise GraphDataError(
                "hard_negative_fraction: expected a value in [0, 1], got "
                f"{self.hard_negative_fraction!r}"
            )
        if not 0.0 <= self.relation_negative_fraction <= 1.0:
            raise GraphDataError(
                "relation_negative_fraction: expected a value in [0, 1], got "
                f"{self.relation_negative_fraction!r}"
            )
        if not 0.0 <= self.path_fraction <= 1.0:
            raise GraphDataError(
                f"path_fraction: expected a value in [0, 1], got {self.path_fraction!r}"
            )
        if not 0.0 <= self.perturb_fraction <= 1.0:
            raise GraphDataError(
                f"perturb_fraction: expected a value in [0, 1], got {self.perturb_fraction!r}"
            )
        if not 0.0 <= self.dropout < 1.0:
            raise GraphDataError(f"dropout: expected a value in [0, 1), got {self.dropout!r}")
