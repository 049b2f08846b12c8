r"""The distilled evaluator: a relational GNN that mimics a KGE's scores from local structure.

KGExplainer (Ma et al., "Towards Synergistic Path-based Explanations for Knowledge Graph
Completion: Exploration and Evaluation", ICLR 2025, arXiv 2404.03893) scores the perturbations of
its greedy search with a GNN distilled from the KGE, instead of re-training the KGE for each one.
For a batch of :math:`B` sampled training triples :math:`\tau^+_b = (h, r, t)`, each with
:math:`Q` corruptions :math:`\tau^-_{bq}` (:math:`G = B(1 + Q)` graphs :math:`\tau`), the GNN
(:class:`SubgraphGNN`, over the ``hops``-hop enclosing subgraph with the scored triple removed,
the same subgraph the explainer perturbs) outputs a standardised score :math:`s` and a
representation :math:`\hat\rho \in \mathbb{R}^D`, trained on

.. math::
    \mathcal{L} = \frac{1}{G D} \sum_{\tau} \lVert \hat\rho(\tau) - \rho(\tau)/\sigma_\rho \rVert^2
        + \frac{1}{G} \sum_{\tau} \Bigl(s(\tau) - \frac{f(\tau) - \mu}{\sigma}\Bigr)^2
        + \frac{\lambda}{B Q} \sum_{b, q} \max\bigl(0,\ \gamma - y_{bq}\,(s(\tau^+_b) -
            s(\tau^-_{bq}))\bigr), \qquad
    y_{bq} = \operatorname{sign}\bigl(f(\tau^+_b) - f(\tau^-_{bq})\bigr):

regression on the teacher's triple representation :math:`\rho` (``h + r - t`` for TransE,
``h * r * t`` for DistMult, ...; :math:`\sigma_\rho` its standard deviation) and on its score
:math:`f` standardised by the mean :math:`\mu` and deviation :math:`\sigma` over the distillation
triples, plus a margin ranking loss that follows the teacher's order of each pair. Unlike the
reference, the targets of a negative are the teacher's values **of the negative triple** (the
reference took them from the positive), the margin is in standardised units, half of the
negatives are hard ones drawn from the teacher's top-ranked wrong entities (so that the evaluator
learns the teacher's ranking where it matters), and half of the training subgraphs are thinned by
edge or relation dropout (the explainer scores such reduced graphs; targets stay the teacher's).
Scores are reported back in teacher units, :math:`\mu + \sigma s`.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from graphdata.atomic import atomic_path
from graphdata.errors import GraphDataError, NotFittedError
from graphdata.triples import TripleSet
from graphdata.typing import PathLike
from kg.base import KGEModel
from kg.checkpoint import dataset_fingerprint
from kg.explain._batch import SubgraphBank, copies
from kg.explain._distill import _bank, _check_teacher, _negatives, _thin, agreement_figures
from kg.explain._network import SubgraphGNN
from kg.explain._teacher import model_fingerprint, triple_representation
from kg.explain.local import LocalStructure

__all__ = [
    "EvaluatorConfig",
    "DistillationTargets",
    "distillation_targets",
    "DistilledEvaluator",
    "graph_fingerprint",
]

_FORMAT = "graphlib-kg-explain-evaluator"
_VERSION = 1


@dataclass
class EvaluatorConfig:
    """Hyperparameters of the distilled evaluator (architecture and distillation)."""

    hops: int = 2  # radius k of the enclosing subgraphs (must match the explainer's)
    hidden: int = 32  # width of the GNN layers (the reference: 64, GAT)
    num_layers: int = 3  # relational message-passing layers (the reference: 3)
    num_bases: int = 4  # basis matrices per layer (R-GCN basis decomposition)
    dropout: float = 0.1  # dropout after each layer (the reference: 0.5)
    steps: int = 300  # optimiser steps (the reference: 10,000 full-batch steps)
    batch_size: int = 32  # positive triples per step, each with its negatives
    lr: float = 3e-3  # Adam learning rate
    num_train_triples: int = 2000  # training triples sampled for distillation (all if fewer)
    num_negatives: int = 2  # corruptions per positive (head or tail, one coin each)
    hard_negative_fraction: float = (
        0.5  # share of negatives from the teacher's top-ranked wrong ones
    )
    hard_negative_pool: int = (
        10  # how many of the teacher's top entities a hard negative is drawn from
    )
    rank_margin: float = 1.0  # gamma of the ranking loss, in standardised score units
    rank_weight: float = 1.0  # lambda, weight of the ranking loss
    perturb_fraction: float = 0.5  # share of training subgraphs thinned like explanation masks
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
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise GraphDataError(f"{name}: expected a positive int, got {value!r}")
        if not 0.0 <= self.hard_negative_fraction <= 1.0:
            raise GraphDataError(
                "hard_negative_fraction: expected a value in [0, 1], got "
                f"{self.hard_negative_fraction!r}"
            )
        if not 0.0 <= self.perturb_fraction <= 1.0:
            raise GraphDataError(
                f"perturb_fraction: expected a value in [0, 1], got {self.perturb_fraction!r}"
            )
        if not 0.0 <= self.dropout < 1.0:
            raise GraphDataError(f"dropout: expected a value in [0, 1), got {self.dropout!r}")


@dataclass(frozen=True)
class DistillationTargets:
    r"""The teacher's values for positive triples and for their corruptions.

    Attributes:
        positive_score: :math:`f(\tau^+)`, ``[B]``.
        positive_representation: :math:`\rho(\tau^+)`, ``[B, D]``.
        negative_score: :math:`f(\tau^-)` of each negative triple itself, ``[B, Q]``.
        negative_representation: :math:`\rho(\tau^-)`, ``[B, Q, D]``.
    """

    positive_score: Tensor
    positive_representation: Tensor
    negative_score: Tensor
    negative_representation: Tensor


@torch.no_grad()
def distillation_targets(
    teacher: KGEModel, positives: Tensor, negatives: Tensor
) -> DistillationTargets:
    """The teacher's scores and representations of positives and of **their own** negatives.

    The reference regressed each negative's graph embedding onto the positive's representation;
    here every triple gets its own teacher values.

    Args:
        teacher: The KGE being distilled.
        positives: Triples ``[B, 3]`` (head, relation, tail ids).
        negatives: Their corruptions ``[B, Q, 3]``.

    Returns:
        The :class:`DistillationTargets`.

    Examples:
        >>> from kg.distmult import DistMult
        >>> teacher = DistMult(4, 1, dim=3)
        >>> positives, negatives = torch.tensor([[0, 0, 1]]), torch.tensor([[[0, 0, 2]]])
        >>> out = distillation_targets(teacher, positives, negatives)
        >>> bool(out.negative_score[0, 0] == teacher(*torch.tensor([[0], [0], [2]])))
        True
    """
    was_training = teacher.training
    teacher.eval()
    try:
        flat = negatives.reshape(-1, 3)
        pos_score = teacher(positives[:, 0], positives[:, 1], positives[:, 2])
        neg_score = teacher(flat[:, 0], flat[:, 1], flat[:, 2])
        pos_rep = triple_representation(teacher, positives[:, 0], positives[:, 1], positives[:, 2])
        neg_rep = triple_representation(teacher, flat[:, 0], flat[:, 1], flat[:, 2])
    finally:
        teacher.train(was_training)
    b, q = negatives.shape[:2]
    return DistillationTargets(
        positive_score=pos_score,
        positive_representation=pos_rep,
        negative_score=neg_score.view(b, q),
        negative_representation=neg_rep.view(b, q, -1),
    )


def graph_fingerprint(graph: TripleSet) -> str:
    """SHA-256 of a graph's vocabularies and triples (:func:`kg.checkpoint.dataset_fingerprint`)."""
    return dataset_fingerprint(
        graph.entities.labels, graph.relations.labels, [graph.mapped_triples]
    )


class DistilledEvaluator:
    r"""A GNN distilled from a KGE that scores triples from their (perturbed) local structure.

    scikit-learn lifecycle: ``__init__`` stores the :class:`EvaluatorConfig`, :meth:`fit`
    distils and returns ``self``, learned state ends in ``_``; scoring before ``fit`` raises
    :class:`~graphdata.errors.NotFittedError`. The evaluator remembers which model and graph it
    was distilled from (:meth:`check_compatible`) and refuses others.

    Args:
        config: The hyperparameters. Default ``EvaluatorConfig()``.

    Attributes:
        network_: The trained :class:`SubgraphGNN` (in eval mode).
        score_mean_: :math:`\mu`, mean teacher score over the distillation triples.
        score_std_: :math:`\sigma`, their standard deviation.
        representation_scale_: :math:`\sigma_\rho`, scale of the teacher representations.
        teacher_fingerprint_: Fingerprint of the teacher's parameters.
        graph_fingerprint_: Fingerprint of the graph it was distilled on.
        num_relations_: Relations of that graph.
        history_: ``{"step", "loss", "rank_loss"}`` every 50 steps and at the end.
        fit_seconds_: Wall time of :meth:`fit`.

    Examples:
        >>> from graphdata.triples import TripleSet
        >>> from kg.distmult import DistMult
        >>> rows = [("a", "r", "b"), ("b", "r", "c"), ("a", "s", "c"), ("c", "r", "d")]
        >>> graph = TripleSet.from_labeled_triples(rows)
        >>> cfg = EvaluatorConfig(steps=3, batch_size=2, hidden=8)
        >>> evaluator = DistilledEvaluator(cfg).fit(DistMult(4, 2, dim=4), graph)
        >>> evaluator.score_triples(graph.mapped_triples[:2]).shape
        torch.Size([2])
    """

    def __init__(self, config: EvaluatorConfig | None = None) -> None:
        self.config = config if config is not None else EvaluatorConfig()

    # ---- fitting -------------------------------------------------------------------------

    def fit(self, teacher: KGEModel, graph: TripleSet) -> DistilledEvaluator:
        """Distil ``teacher`` on the enclosing subgraphs of ``graph``'s triples.

        Args:
            teacher: The trained KGE (not modified). Its relations may count the graph's once
                or twice (reciprocal training).
            graph: The training graph (the triples the explainer will perturb).

        Returns:
            ``self``.

        Raises:
            GraphDataError: On an invalid config, or a teacher whose entity count does not fit
                the graph.
        """
        cfg = self.config
        cfg.validate()
        start = time.perf_counter()
        _check_teacher(teacher, graph)
        device = next(teacher.parameters()).device
        generator = torch.Generator().manual_seed(cfg.seed)
        triples = graph.mapped_triples.to(device)
        count = min(cfg.num_train_triples, triples.size(0))
        positives = triples[torch.randperm(triples.size(0), generator=generator)[:count].to(device)]
        negatives = _negatives(teacher, positives, cfg, generator)  # [P, Q, 3]
        targets = distillation_targets(teacher, positives, negatives)
        q = cfg.num_negatives
        scores = torch.cat([targets.positive_score, targets.negative_score.reshape(-1)])
        reps = torch.cat(
            [targets.positive_representation, targets.negative_representation.flatten(0, 1)]
        )
        self.score_mean_ = float(scores.mean())
        self.score_std_ = float(scores.std().clamp_min(1e-8))
        self.representation_scale_ = float(reps.std().clamp_min(1e-8))
        z = (scores - self.score_mean_) / self.score_std_  # [P (1 + Q)] positives first
        rho = reps / self.representation_scale_
        bank = _bank(
            torch.cat([positives, negatives.reshape(-1, 3)]), graph, teacher.num_entities, cfg.hops
        )
        with torch.random.fork_rng(devices=[device.index or 0] if device.type == "cuda" else []):
            torch.manual_seed(cfg.seed)  # initialisation and dropout
            network = SubgraphGNN(
                graph.num_relations,
                reps.size(1),
                hidden=cfg.hidden,
                num_layers=cfg.num_layers,
                num_bases=cfg.num_bases,
                max_distance=cfg.hops,
                dropout=cfg.dropout,
            ).to(device)
            self.history_ = self._train(network, bank, z, rho, count, q, generator)
        self.network_ = network.eval()
        self.teacher_fingerprint_ = model_fingerprint(teacher)
        self.graph_fingerprint_ = graph_fingerprint(graph)
        self.num_relations_ = graph.num_relations
        self.num_entities_ = teacher.num_entities
        self.graph_: TripleSet | None = graph
        self.fit_seconds_ = time.perf_counter() - start
        return self

    def _train(
        self,
        network: SubgraphGNN,
        bank: SubgraphBank,
        z: Tensor,
        rho: Tensor,
        count: int,
        q: int,
        generator: torch.Generator,
    ) -> list[dict[str, float]]:
        cfg = self.config
        device = z.device
        optimizer = torch.optim.Adam(network.parameters(), lr=cfg.lr)
        network.train()
        history = []
        for step in range(1, cfg.steps + 1):
            index = torch.randint(count, (min(cfg.batch_size, count),), generator=generator)
            index = index.to(device)
            b = index.numel()
            neg_index = count + index.unsqueeze(1) * q + torch.arange(q, device=device)  # [b, Q]
            graphs = torch.cat([index, neg_index.flatten()])
            batch = bank.select(graphs)
            if cfg.perturb_fraction > 0:
                batch = _thin(batch, cfg.perturb_fraction, generator)
            score, rep = network(batch)
            regression = (rep - rho[graphs]).square().mean() + (score - z[graphs]).square().mean()
            y = torch.sign(z[index].unsqueeze(1) - z[neg_index])  # the teacher's order, [b, Q]
            gap = score[:b].unsqueeze(1) - score[b:].view(b, q)
            rank = F.relu(cfg.rank_margin - y * gap).mean()
            loss = regression + cfg.rank_weight * rank
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if step % 50 == 0 or step == cfg.steps:
                history.append({"step": step, "loss": loss.item(), "rank_loss": rank.item()})
        return history

    # ---- scoring -------------------------------------------------------------------------

    def _check_fitted(self) -> None:
        if not hasattr(self, "network_"):
            raise NotFittedError(
                "DistilledEvaluator: not fitted, call fit(teacher, graph) first (or load one)"
            )

    def _to_teacher_units(self, standardised: Tensor) -> Tensor:
        return self.score_mean_ + self.score_std_ * standardised

    def score_triples(self, triples: Tensor, graph: TripleSet | None = None) -> Tensor:
        """Score triples from their enclosing subgraphs (each without its own triple).

        Args:
            triples: ``[B, 3]`` id triples, head different from tail.
            graph: The graph to extract subgraphs from. Default ``None``: the one passed to
                :meth:`fit` (kept by reference).

        Returns:
            ``[B]`` scores in teacher units.
        """
        self._check_fitted()
        graph = graph if graph is not None else self.graph_
        if graph is None:
            raise GraphDataError(
                "graph: this evaluator was loaded from a file and keeps no graph; pass the graph "
                "it was distilled on"
            )
        out = []
        with torch.no_grad():
            for chunk in triples.split(512):
                bank = _bank(chunk, graph, self.num_entities_, self.config.hops)
                index = torch.arange(chunk.size(0), device=chunk.device)
                out.append(self.network_(bank.select(index))[0])
        return self._to_teacher_units(torch.cat(out)) if out else triples.new_zeros(0).float()

    def score_local(
        self, local: LocalStructure, mask: Tensor, *, max_copies: int | None = None
    ) -> Tensor:
        """Score a target under edge masks over its local triples, all copies batched.

        Args:
            local: The target's local structure (its ``hops`` must be the evaluator's).
            mask: ``[C, m]``: boolean keep masks, or float weights in ``[0, 1]`` (soft masks,
                differentiable).
            max_copies: Copies per forward pass. Default ``None``: as many as keep the
                per-layer aggregate ``[copies * n * 2R, hidden]`` under :math:`2^{24}` floats.

        Returns:
            ``[C]`` scores in teacher units.
        """
        self._check_fitted()
        if local.hops != self.config.hops:
            raise GraphDataError(
                f"local: built with hops={local.hops}, the evaluator was distilled on "
                f"hops={self.config.hops} subgraphs; extract the local structure with "
                f"hops={self.config.hops}"
            )
        if max_copies is None:
            per_copy = local.num_nodes * 2 * self.num_relations_ * self.config.hidden
            max_copies = max(1, (1 << 24) // max(per_copy, 1))
        out = [
            self.network_(
                copies(local.num_nodes, local.edge_index, local.edge_type, local.target[1], chunk)
            )[0]
            for chunk in mask.split(max_copies)
        ]
        return self._to_teacher_units(torch.cat(out))

    def scorer(self, local: LocalStructure) -> Any:
        """A perturbation scorer for :func:`kg.explain.search.greedy_search` (no gradients)."""

        def score(keep: Tensor) -> Tensor:
            with torch.no_grad():
                return self.score_local(local, keep)

        return score

    # ---- compatibility, agreement, persistence -------------------------------------------

    def check_compatible(self, teacher: KGEModel, graph: TripleSet) -> None:
        """Refuse a model or graph other than the ones this evaluator was distilled from.

        Args:
            teacher: The model whose predictions are to be explained.
            graph: The graph the explainer perturbs.

        Raises:
            GraphDataError: Naming what differs and how to fix it.
            NotFittedError: Before :meth:`fit`.
        """
        self._check_fitted()
        fingerprint = model_fingerprint(teacher)
        if fingerprint != self.teacher_fingerprint_:
            raise GraphDataError(
                f"evaluator: it was distilled from another model (fingerprint "
                f"{self.teacher_fingerprint_[:12]}..., this {teacher!r} has "
                f"{fingerprint[:12]}...); "
                "distil one from this model with DistilledEvaluator(config).fit(model, graph)"
            )
        fingerprint = graph_fingerprint(graph)
        if fingerprint != self.graph_fingerprint_:
            raise GraphDataError(
                f"evaluator: it was distilled on another graph (fingerprint "
                f"{self.graph_fingerprint_[:12]}..., this graph {fingerprint[:12]}...); distil one "
                "on the graph being explained (the training triples of the model)"
            )

    def agreement(
        self,
        teacher: KGEModel,
        triples: Tensor,
        *,
        num_queries: int = 20,
        max_candidates: int = 200,
        seed: int = 0,
    ) -> dict[str, float]:
        r"""How well the evaluator agrees with its teacher on held-out triples.

        * ``spearman``: Spearman's :math:`\rho` between evaluator and teacher scores over the
          triples and one uniform tail corruption of each.
        * ``hits_at_10``: over ``num_queries`` queries :math:`(h, r, ?)` from ``triples``, the
          fraction whose teacher-best tail is in the evaluator's top 10; ``top10_overlap``:
          the mean :math:`|T_{10} \cap E_{10}| / 10` of the two top-10 sets. Candidates are all
          entities but :math:`h`, or a uniform sample of ``max_candidates`` of them, the same
          for both rankings (raw, unfiltered: this compares rankers, not link prediction).

        Args:
            teacher: The teacher (must be the one distilled).
            triples: Held-out ``[B, 3]`` id triples (e.g. the test split).
            num_queries: Queries for the Hits@10 agreement. Default 20.
            max_candidates: Most candidate tails per query. Default 200.
            seed: Seeds the corruptions, query choice and candidate sample. Default 0.

        Returns:
            ``{"spearman", "hits_at_10", "top10_overlap", "num_triples", "num_queries"}``.
        """
        self._check_fitted()
        return agreement_figures(
            self,
            teacher,
            triples,
            num_queries=num_queries,
            max_candidates=max_candidates,
            seed=seed,
        )

    def save(self, path: PathLike) -> Path:
        """Write the fitted evaluator atomically (loadable with ``weights_only=True``).

        Args:
            path: The destination file.

        Returns:
            The path written.
        """
        self._check_fitted()
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "format": _FORMAT,
            "version": _VERSION,
            "config": dataclasses.asdict(self.config),
            "state": self.network_.state_dict(),
            "teacher_dim": int(self.network_.lin_rep.out_features),
            "fitted": {
                key: getattr(self, key)
                for key in (
                    "score_mean_",
                    "score_std_",
                    "representation_scale_",
                    "teacher_fingerprint_",
                    "graph_fingerprint_",
                    "num_relations_",
                    "num_entities_",
                    "fit_seconds_",
                )
            },
            "history": self.history_,
        }
        with atomic_path(path) as tmp:
            torch.save(payload, tmp)
        return path

    @classmethod
    def load(
        cls, path: PathLike, *, map_location: str | torch.device = "cpu"
    ) -> DistilledEvaluator:
        """Read an evaluator written by :meth:`save`.

        Args:
            path: The file.
            map_location: Where to put the network. Default ``"cpu"``.

        Returns:
            The fitted evaluator (without its graph: pass it to :meth:`score_triples`).

        Raises:
            GraphDataError: If the file is missing or not an evaluator file.
        """
        path = Path(path)
        if not path.is_file():
            raise GraphDataError(f"path: no evaluator file at {str(path)!r}")
        data = torch.load(path, map_location=map_location, weights_only=True)
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            raise GraphDataError(
                f"path: {str(path)!r} is not a distilled-evaluator file (no format marker "
                f"{_FORMAT!r}); write one with DistilledEvaluator.save"
            )
        evaluator = cls(EvaluatorConfig(**data["config"]))
        cfg = evaluator.config
        fitted = data["fitted"]
        network = SubgraphGNN(
            fitted["num_relations_"],
            data["teacher_dim"],
            hidden=cfg.hidden,
            num_layers=cfg.num_layers,
            num_bases=cfg.num_bases,
            max_distance=cfg.hops,
            dropout=cfg.dropout,
        )
        network.load_state_dict(data["state"])
        evaluator.network_ = network.to(map_location).eval()
        for key, value in fitted.items():
            setattr(evaluator, key, value)
        evaluator.history_ = list(data["history"])
        evaluator.graph_ = None
        return evaluator
