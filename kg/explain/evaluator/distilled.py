r"""The distilled evaluator: a relational GNN that mimics a KGE's scores from local structure.

KGExplainer (Ma et al., "Towards Synergistic Path-based Explanations for Knowledge Graph
Completion: Exploration and Evaluation", ICLR 2025, arXiv 2404.03893) scores the perturbations of
its greedy search with a GNN distilled from the KGE, instead of re-training the KGE for each one.
:class:`DistilledEvaluator` distils the GNN (:class:`~kg.explain.evaluator.network.SubgraphGNN`,
over the ``hops``-hop enclosing subgraph with the scored triple removed, the subgraph the explainer
perturbs) with the loss of :mod:`kg.explain.evaluator.training`, scores triples and batched edge
masks of a local structure, checks that it is used with its own teacher and graph, measures its
agreement with the teacher and saves itself. Scores are reported in teacher units, :math:`\mu +
\sigma s` for the network's standardised output :math:`s`.

An ensemble of evaluators (``EvaluatorConfig.ensemble``, deep ensembles, Lakshminarayanan et
al., NeurIPS 2017) was removed in issue #16: on the family KG (benchmarks/RESULTS.md) k = 3 raised
the mean ground-truth F1 but not its robustness to the seed, its aim, at k times the cost.
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from graphdata.errors import GraphDataError, NotFittedError
from graphdata.triples import TripleSet
from graphdata.typing import PathLike
from kg.base import KGEModel
from kg.checkpoint import dataset_fingerprint
from kg.explain._batch import copies
from kg.explain._teacher import check_depth, model_fingerprint
from kg.explain.evaluator.config import EvaluatorConfig
from kg.explain.evaluator.io import load_evaluator, save_evaluator
from kg.explain.evaluator.network import SubgraphGNN
from kg.explain.evaluator.sampling import agreement_figures, bank, bank_and_ids, check_teacher
from kg.explain.evaluator.training import (
    draw_sample,
    train_member,
)
from kg.explain.local import LocalStructure

__all__ = ["DistilledEvaluator", "graph_fingerprint"]


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
        history_: ``{"step", "loss", "rank_loss"}`` every 50 steps and at the end of the
            distillation.
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

    def fit(
        self, teacher: KGEModel, graph: TripleSet, *, progress: bool = True
    ) -> DistilledEvaluator:
        """Distil ``teacher`` on the enclosing subgraphs of ``graph``'s triples.

        Args:
            teacher: The trained KGE (not modified). Its relations may count the graph's once
                or twice (reciprocal training).
            graph: The training graph (the triples the explainer will perturb).
            progress: Show a tqdm bar over the distillation steps when stderr is a terminal;
                False: never. Default True.

        Returns:
            ``self``.

        Raises:
            GraphDataError: On an invalid config, or a teacher whose entity count does not fit
                the graph.
        """
        cfg = self.config
        cfg.validate()
        start = time.perf_counter()
        check_teacher(teacher, graph)
        for name in ("hops", "max_length"):
            check_depth(name, getattr(cfg, name), graph.num_entities)
        generator = torch.Generator().manual_seed(cfg.seed)
        sample = draw_sample(teacher, graph, cfg, generator)
        network, self.history_ = train_member(
            cfg, graph.num_relations, sample, cfg.seed, generator, progress=progress
        )
        self.score_mean_, self.score_std_ = sample.score_mean, sample.score_std
        self.representation_scale_ = sample.representation_scale
        self.network_: SubgraphGNN = network
        self.teacher_fingerprint_ = model_fingerprint(teacher)
        self.graph_fingerprint_ = graph_fingerprint(graph)
        self.num_relations_ = graph.num_relations
        self.num_entities_ = teacher.num_entities
        self.graph_: TripleSet | None = graph
        self.fit_seconds_ = time.perf_counter() - start
        return self

    # ---- scoring -------------------------------------------------------------------------

    def _check_fitted(self) -> None:
        if not hasattr(self, "network_"):
            raise NotFittedError(
                "DistilledEvaluator: not fitted, call fit(teacher, graph) first (or load one)"
            )

    def _to_teacher_units(self, standardised: Tensor) -> Tensor:
        return self.score_mean_ + self.score_std_ * standardised

    def score_triples(
        self, triples: Tensor, graph: TripleSet | None = None, *, teacher: KGEModel | None = None
    ) -> Tensor:
        """Score triples from their enclosing subgraphs (each without its own triple).

        Args:
            triples: ``[B, 3]`` id triples, head different from tail.
            graph: The graph to extract subgraphs from. Default ``None``: the one passed to
                :meth:`fit` (kept by reference).
            teacher: The model this evaluator was distilled from. With it, a subgraph of more
                than :math:`B L` triples is cut to the union of its top candidate paths by the
                teacher's edge probabilities, as the distillation cuts it
                (:func:`~kg.explain.evaluator.sampling.bank_and_ids`; :mod:`kg.explain.local`,
                "Pruning"): each subgraph then holds at most :math:`B L` triples, and the score
                is the one the evaluator was trained to give there. Default ``None``: whole
                enclosing subgraphs, which at ``hops=2`` on a graph with hubs hold up to about
                :math:`10^5` triples each (scoring 500 FB15k-237 test triples so passed 24 GB).

        Returns:
            ``[B]`` scores in teacher units.

        Raises:
            GraphDataError: Without a graph (a loaded evaluator), or for a ``teacher`` other than
                the model distilled.
        """
        self._check_fitted()
        if teacher is not None:
            self._check_teacher(teacher)
        graph = graph if graph is not None else self.graph_
        if graph is None:
            raise GraphDataError(
                "graph: this evaluator was loaded from a file and keeps no graph; pass the graph "
                "it was distilled on"
            )
        out = []
        with torch.no_grad():
            for chunk in triples.split(512):
                if teacher is None:
                    chunk_bank = bank(chunk, graph, self.num_entities_, self.config.hops)
                else:
                    chunk_bank = bank_and_ids(
                        chunk,
                        graph,
                        self.num_entities_,
                        self.config.hops,
                        teacher=teacher,
                        max_length=self.config.max_length,
                        seed=self.config.seed,
                    )[0]
                index = torch.arange(chunk.size(0), device=chunk.device)
                out.append(self.network_(chunk_bank.select(index))[0])
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

    def _check_teacher(self, teacher: KGEModel) -> None:
        """Refuse a model other than the one this evaluator was distilled from."""
        fingerprint = model_fingerprint(teacher)
        if fingerprint != self.teacher_fingerprint_:
            raise GraphDataError(
                f"evaluator: it was distilled from another model (fingerprint "
                f"{self.teacher_fingerprint_[:12]}..., this {teacher!r} has "
                f"{fingerprint[:12]}...); "
                "distil one from this model with DistilledEvaluator(config).fit(model, graph)"
            )

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
        self._check_teacher(teacher)
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
    ) -> dict[str, float | None]:
        r"""How well the evaluator agrees with its teacher on held-out triples.

        * ``spearman``: Spearman's :math:`\rho` between evaluator and teacher scores over the
          triples and one uniform tail corruption of each; undefined (None) when either score
          vector is constant (:math:`\rho` divides by the spread of the ranks).
        * ``hits_at_10``: over ``num_queries`` queries :math:`(h, r, ?)` from ``triples``, the
          fraction whose teacher-best tail is in the evaluator's top 10; ``top10_overlap``:
          the mean :math:`|T_{10} \cap E_{10}| / 10` of the two top-10 sets. Candidates are all
          entities but :math:`h`, or a uniform sample of ``max_candidates`` of them, the same
          for both rankings (raw, unfiltered: this compares rankers, not link prediction).

        Each triple is scored on its enclosing subgraph cut as the distillation cuts it
        (:meth:`score_triples` with ``teacher``): on the graphs the evaluator was trained on,
        with memory bounded per subgraph.

        Args:
            teacher: The teacher (must be the one distilled).
            triples: Held-out ``[B, 3]`` id triples (e.g. the test split).
            num_queries: Queries for the Hits@10 agreement. Default 20.
            max_candidates: Most candidate tails per query. Default 200.
            seed: Seeds the corruptions, query choice and candidate sample. Default 0.

        Returns:
            ``{"spearman", "hits_at_10", "top10_overlap", "num_triples", "num_queries"}``; only
            ``spearman`` may be None.

        Raises:
            GraphDataError: If ``triples`` is not ``[B, 3]`` or has no row, ``num_queries`` or
                ``max_candidates`` is not an int >= 1, or a model scores NaN.
        """
        self._check_fitted()
        return agreement_figures(
            partial(self.score_triples, teacher=teacher),
            self.num_entities_,
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
        return save_evaluator(self, path)

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
        return load_evaluator(cls, path, map_location)
