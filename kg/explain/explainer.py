r"""KGExplainer: synergistic path explanations of a KGE's predictions.

Ma et al., "Towards Synergistic Path-based Explanations for Knowledge Graph Completion:
Exploration and Evaluation", ICLR 2025 (OpenReview WQvkqarwXi; v1 arXiv 2404.03893, code
xiaomingaaa/KGExplainer). For a predicted triple :math:`(h, r, t)`:

1. extract the local structure, the ``hops``-hop enclosing subgraph with the target removed, and
   the candidate paths :math:`h \to t` up to ``max_length`` (:mod:`kg.explain.local`);
2. grow a path set greedily by perturbation, with an explicit stop rule and a step rule
   (``selection``: the best candidate, or the fewest new triples that reach the threshold;
   :mod:`kg.explain.search`), scoring every candidate of a step in one batched call of
   (a) the distilled evaluator (:mod:`kg.explain.evaluator`, ``mode="evaluator"``, default;
   distilled with distance labels and path-reduced training graphs up to ``max_length``) or
   (b) brief local re-training of the KGE from a clean state per candidate
   (:mod:`kg.explain.retrain`, ``mode="retrain"``) (``strategy="paths"``). With
   ``strategy="patterns"`` (the default) step 2 is the choice of the candidate paths whose
   relation-path patterns agree best with the relation over the whole training graph
   (:mod:`kg.explain.patterns`; issue #18: a perturbation search prefers a correlated
   shortcut that moves the local score as much as the rule body does; the scorer of ``mode``
   then gives the fidelity figures only);
3. report the paths with their individual and joint scores and fidelity figures
   (:class:`~kg.explain.explanation.PathExplanation`).

Probabilities use one calibration of the teacher's scores, fitted on training triples and
uniform tail corruptions: :math:`p = \sigma((f - \tau) / \sigma_f)` with :math:`\tau` halfway
between the mean positive and mean corrupted score and :math:`\sigma_f` the scores' standard
deviation.
"""

from __future__ import annotations

import math
import operator
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor

from graphdata.checks import check_seed
from graphdata.errors import GraphDataError, NotFittedError, UnknownLabelError
from graphdata.triples import KGDataset, TripleSet
from kg.base import KGEModel, eval_mode
from kg.explain import baselines
from kg.explain._assemble import Context, assemble, score_selection
from kg.explain._teacher import check_depth, check_finite_parameters
from kg.explain.evaluator import DistilledEvaluator, EvaluatorConfig
from kg.explain.evaluator.sampling import calibration
from kg.explain.explanation import PathExplanation
from kg.explain.local import (
    LocalIndex,
    LocalStructure,
    capped_summary,
    local_structure,
    model_relevance,
)
from kg.explain.node_search import node_greedy_search
from kg.explain.patterns import PatternBank, pattern_mask, pattern_search
from kg.explain.retrain import RetrainConfig, RetrainScorer
from kg.explain.search import (
    MAX_PATHS,
    MIN_GAIN,
    MIN_PATHS,
    OBJECTIVE,
    SELECTION,
    SELECTIONS,
    Scorer,
    greedy_search,
)

__all__ = ["MODES", "STRATEGIES", "SEARCHES", "BASELINES", "ExplainerConfig", "KGExplainer"]

#: How perturbations are scored: the distilled evaluator (default) or local re-training.
MODES = ("evaluator", "retrain")
#: Baselines of :meth:`KGExplainer.explain_baseline`: the names of
#: :data:`kg.explain.baselines.BASELINES` (a new baseline is written there only).
BASELINES = tuple(baselines.BASELINES)


@dataclass
class ExplainerConfig:
    """Every hyperparameter of KGExplainer (search, local structure and both scorers)."""

    mode: str = "evaluator"  # one of MODES
    max_length: int = 3  # longest candidate path L
    hops: int = 2  # radius k of the enclosing subgraph (k = L - 1 holds every path of length L)
    max_paths: int = MAX_PATHS  # path budget of the greedy search
    min_gain: float = MIN_GAIN  # stop when a path adds less than this fraction of J(G) - J(empty)
    selection: str = SELECTION  # step rule, one of SELECTIONS; "best" is the plain greedy
    strategy: str = "patterns"  # one of STRATEGIES: mined rules, greedy paths, node by node
    max_candidates: int = 300  # cap on candidate paths (split evenly across lengths, warned)
    path_relations: tuple[str, ...] | None = None  # relations paths may use; None: all
    seed: int = 0  # seeds the calibration sample and the baselines
    evaluator: EvaluatorConfig = field(default_factory=EvaluatorConfig)  # mode "evaluator"
    retrain: RetrainConfig = field(default_factory=RetrainConfig)  # mode "retrain"

    def validate(self) -> None:
        """Raise :class:`~graphdata.errors.GraphDataError` naming the first invalid field."""
        if self.mode not in MODES:
            raise GraphDataError(f"mode: expected one of {MODES}, got {self.mode!r}")
        if self.strategy not in STRATEGIES:
            raise GraphDataError(f"strategy: expected one of {STRATEGIES}, got {self.strategy!r}")
        if self.selection not in SELECTIONS:
            raise GraphDataError(f"selection: expected one of {SELECTIONS}, got {self.selection!r}")
        for name in ("max_length", "hops", "max_paths", "max_candidates"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise GraphDataError(f"{name}: expected a positive int, got {value!r}")
        gain = self.min_gain
        if (
            isinstance(gain, bool)
            or not isinstance(gain, (int, float))
            or not (math.isfinite(gain) and gain >= 0)
        ):
            raise GraphDataError(
                f"min_gain: expected a fraction >= 0 (a finite number), got {gain!r}"
            )
        check_seed("seed", self.seed, required=True)  # None too: no seed is drawn here
        relations = self.path_relations
        if relations is not None and (
            isinstance(relations, str)
            or not isinstance(relations, (tuple, list))
            or not relations
            or not all(isinstance(label, str) for label in relations)
        ):
            raise GraphDataError(
                f"path_relations: expected None or a non-empty tuple of relation labels, got "
                f"{relations!r}; e.g. path_relations=('parent',)"
            )


class KGExplainer:
    """Explain a KGE's predictions by synergistic paths (module docstring).

    scikit-learn lifecycle: ``__init__`` stores the model and config, :meth:`fit` takes the
    graph (and distils or checks the evaluator), learned state ends in ``_``.

    Args:
        model: The trained KGE to explain (not modified).
        config: The hyperparameters. Default ``ExplainerConfig()``.

    Attributes:
        graph_: The training graph explanations are drawn from.
        evaluator_: The distilled evaluator (``None`` in ``"retrain"`` mode).
        reciprocal_: Whether the model has inverse relations (twice the graph's).
        calibration_: ``(tau, sigma_f)`` of the probability map.
        fit_seconds_: Wall time of :meth:`fit` (distillation included).

    Examples:
        >>> from graphdata.triples import KGDataset
        >>> from kg.distmult import DistMult
        >>> rows = [("ann", "owns", "dog"), ("dog", "chases", "cat"), ("ann", "likes", "cat")]
        >>> dataset = KGDataset.from_labeled(rows, rows[:1], rows[:1])
        >>> config = ExplainerConfig(mode="retrain", max_length=2, hops=1,
        ...                          retrain=RetrainConfig(steps=2))
        >>> explainer = KGExplainer(DistMult(3, 3, dim=4), config).fit(dataset)
        >>> explanation = explainer.explain(("ann", "likes", "cat"))
        >>> explanation.target, explanation.local_triples
        (('ann', 'likes', 'cat'), (('ann', 'owns', 'dog'), ('dog', 'chases', 'cat')))
    """

    def __init__(self, model: KGEModel, config: ExplainerConfig | None = None) -> None:
        self.model = model
        self.config = config if config is not None else ExplainerConfig()

    def fit(
        self,
        graph: TripleSet | KGDataset,
        *,
        evaluator: DistilledEvaluator | None = None,
        progress: bool = True,
    ) -> KGExplainer:
        """Take the graph; in evaluator mode, check ``evaluator`` or distil a new one.

        Args:
            graph: The model's training triples, or a dataset (its ``train`` split is used);
                the triples are copied to the model's device.
            evaluator: A fitted evaluator to reuse; it must have been distilled from this
                model on this graph, with this config's ``hops``. Default ``None``: distil one
                with ``config.evaluator``, whose ``hops`` and ``max_length`` must equal this
                config's (they used to be overridden silently; issue #16).
            progress: Show the distillation's tqdm bar when stderr is a terminal; False: never.
                Default True.

        Returns:
            ``self``.

        Raises:
            GraphDataError: On an invalid config, a model that does not fit the graph, or an
                evaluator distilled from another model or graph.
        """
        cfg = self.config
        cfg.validate()
        start = time.perf_counter()
        graph = graph.train if isinstance(graph, KGDataset) else graph
        if not isinstance(graph, TripleSet):
            raise GraphDataError(
                f"graph: expected a TripleSet or KGDataset, got {type(graph).__name__}"
            )
        model = self.model
        if model.num_entities != graph.num_entities or model.num_relations not in (
            graph.num_relations,
            2 * graph.num_relations,
        ):
            raise GraphDataError(
                f"model: {model!r} does not fit the graph ({graph.num_entities} entities, "
                f"{graph.num_relations} relations, or twice as many for a reciprocal model); "
                "pass the graph the model was trained on"
            )
        check_finite_parameters(model)
        _check_graph_config(cfg, graph)  # before minutes of distillation, not after
        device = next(model.parameters()).device
        self.graph_ = graph
        self.reciprocal_ = model.num_relations == 2 * graph.num_relations
        triples = graph.mapped_triples.to(device)
        self._edge_index = triples[:, [0, 2]].t().contiguous()
        self._edge_type = triples[:, 1].contiguous()
        self.calibration_ = _calibrate(model, triples, cfg.seed)
        self.patterns_ = PatternBank(
            self._edge_index,
            self._edge_type,
            graph.num_entities,
            graph.num_relations,
            seed=cfg.seed,
        )
        self.evaluator_ = None
        if cfg.mode == "evaluator" or evaluator is not None:
            if evaluator is None:
                _check_evaluator_config(cfg)
                evaluator = DistilledEvaluator(cfg.evaluator).fit(model, graph, progress=progress)
            else:
                evaluator.check_compatible(model, graph)
                if evaluator.config.hops != cfg.hops:
                    raise GraphDataError(
                        f"evaluator: distilled on hops={evaluator.config.hops} subgraphs, the "
                        f"explainer uses hops={cfg.hops}; set ExplainerConfig(hops="
                        f"{evaluator.config.hops}) or distil a new evaluator"
                    )
            self.evaluator_ = evaluator
        self.fit_seconds_ = time.perf_counter() - start
        return self

    # ---- helpers -----------------------------------------------------------------------------

    def _check_fitted(self) -> None:
        if not hasattr(self, "graph_"):
            raise NotFittedError("KGExplainer: not fitted, call fit(graph) first")

    def resolve(self, triple: Sequence[str] | Sequence[int]) -> tuple[int, int, int]:
        """Map a triple of labels (or ids) to ids of the graph's vocabularies.

        Args:
            triple: ``(head, relation, tail)`` as labels or as ids (any integer type: int,
                NumPy integers, 0-d integer tensors, or one ``[3]`` tensor).

        Returns:
            The id triple.

        Raises:
            UnknownLabelError: For an unknown label; the message lists the closest ones.
            GraphDataError: For a malformed triple or an id out of range.
        """
        self._check_fitted()
        if isinstance(triple, str) or len(triple) != 3:
            raise GraphDataError(
                f"triple: expected (head, relation, tail) labels or ids, got {triple!r}"
            )
        vocabs = (self.graph_.entities, self.graph_.relations, self.graph_.entities)
        labels = [x for x in triple if isinstance(x, str)]
        if len(labels) == 3:
            ids = []
            for vocab, label in zip(vocabs, labels):
                if label not in vocab:
                    raise UnknownLabelError(vocab.kind, label, vocab.labels, "triple")
                ids.append(vocab.id(label))
            return ids[0], ids[1], ids[2]
        numbers = [n for n in (_integer(x) for x in triple) if n is not None]
        if len(numbers) == 3:
            for vocab, value, name in zip(vocabs, numbers, ("head", "relation", "tail")):
                if not 0 <= value < len(vocab):
                    raise GraphDataError(
                        f"triple: {name} id {value} outside [0, {len(vocab)}) ({vocab.kind} ids)"
                    )
            return numbers[0], numbers[1], numbers[2]
        raise GraphDataError(f"triple: expected three labels or three ids, got {triple!r}")

    def local_structure(
        self, triple: Sequence[str] | Sequence[int], *, through_relation: bool | None = None
    ) -> LocalStructure:
        """The local structure of a triple under this config (:func:`local_structure`).

        ``through_relation`` (default: all but the pattern strategy) lets candidates of length
        two or more use another fact of the target relation.
        """
        ids = self.resolve(triple)
        if ids[0] == ids[2]:
            entity = self.graph_.entities.labels[ids[0]]
            raise GraphDataError(
                f"triple: expected a triple with head != tail, got {tuple(triple)!r} (head and "
                f"tail are both {entity!r}); a self-loop has no path between two distinct "
                "entities to explain it"
            )
        cfg = self.config
        allowed = None
        if cfg.path_relations is not None:
            vocab = self.graph_.relations
            for label in cfg.path_relations:
                if label not in vocab:
                    raise UnknownLabelError("relation", label, vocab.labels, "path_relations")
            allowed = torch.tensor([vocab.id(label) for label in cfg.path_relations])
        # Candidates beyond the budget are pruned by the KGE's calibrated edge log-probabilities,
        # as the distillation's cap ranks them (kg.explain.local, "Pruning"): the evaluator's
        # integrated gradients were a forward and backward pass over the whole enclosing
        # subgraph (9-18 s at FB15k-237 hubs) with no better F1 on the worlds (RESULTS.md).
        relevance = model_relevance(self.model, self.calibration_)
        # The graph's adjacency is built once (about 1 s on FB15k-237), not once per target.
        index = self.__dict__.get("_local_index")
        if index is None or index.edge_index is not self._edge_index:
            index = self._local_index = LocalIndex(
                self._edge_index, self._edge_type, self.graph_.num_entities
            )
        return local_structure(
            self._edge_index,
            self._edge_type,
            ids,
            num_nodes=self.graph_.num_entities,
            hops=cfg.hops,
            max_length=cfg.max_length,
            max_candidates=cfg.max_candidates,
            path_relations=allowed,
            relevance=relevance,
            index=index,
            # The pattern strategy first looks for bodies without another r fact: such paths
            # must not fill the budget (on FB15k-237 at hops 2 they filled all 300 candidates of
            # 48 of 100 targets, which were then left unexplained); see _pattern_search.
            through_relation=(
                cfg.strategy != "patterns" if through_relation is None else through_relation
            ),
        )

    def scorer(self, local: LocalStructure, *, mode: str | None = None) -> Scorer:
        """The perturbation scorer of ``mode`` (default: the config's) for a local structure."""
        self._check_fitted()
        mode = self.config.mode if mode is None else mode
        if mode == "retrain":
            return RetrainScorer(
                self.model, local, self.config.retrain, reciprocal=self.reciprocal_
            )
        if self.evaluator_ is None:
            raise GraphDataError(
                "mode: 'evaluator' needs a distilled evaluator; fit with mode='evaluator' or pass "
                "evaluator= to fit"
            )
        return self.evaluator_.scorer(local)

    def _context(self, local: LocalStructure, scorer: Scorer | None) -> Context:
        """Labels, the teacher's target score, the probability map and ``scorer``.

        ``scorer`` (the config mode's) scores a fixed selection; ``None`` for a search result,
        which carries its scores.
        """
        h, r, t = local.target
        with torch.no_grad(), eval_mode(self.model):
            ids = torch.tensor([[h], [r], [t]], device=local.edge_type.device)
            teacher = float(self.model(ids[0], ids[1], ids[2])[0])
        cfg = self.config
        return Context(
            entities=self.graph_.entities.labels,
            relations=self.graph_.relations.labels,
            teacher_score=teacher,
            probability=self.probability,
            scorer=scorer,
            min_paths=MIN_PATHS,
            min_gain=cfg.min_gain,
            max_candidates=cfg.max_candidates,
        )

    def probability(self, scores: Tensor) -> Tensor:
        r"""Calibrated probabilities :math:`\sigma((f - \tau)/\sigma_f)` of teacher-unit scores."""
        self._check_fitted()
        tau, sigma = self.calibration_
        return torch.sigmoid((scores - tau) / sigma)

    # ---- explaining ----------------------------------------------------------------------------

    def explain(
        self, triple: Sequence[str] | Sequence[int], *, mode: str | None = None
    ) -> PathExplanation:
        """Explain one triple by the greedy synergistic path search.

        Args:
            triple: ``(head, relation, tail)`` labels or ids; typically a predicted triple.
            mode: ``"evaluator"`` or ``"retrain"``; default ``None``, the config's.

        Returns:
            The :class:`PathExplanation`; it is empty, with a note saying why, when ``h`` and
            ``t`` are not joined by a path within the local graph or the local graph does not
            raise the target's score.

        Raises:
            UnknownLabelError: For unknown labels (the message lists close ones).
            GraphDataError: For a malformed triple or a self-loop.
        """
        start = time.perf_counter()
        cfg = self.config
        mode = cfg.mode if mode is None else mode
        if mode not in MODES:
            raise GraphDataError(f"mode: expected one of {MODES}, got {mode!r}")
        local = self.local_structure(triple)
        return SEARCHES[cfg.strategy](self, local, self.scorer(local, mode=mode), mode, start)

    def explain_all(
        self,
        triples: Sequence[Sequence[str] | Sequence[int]],
        *,
        mode: str | None = None,
        progress: bool = True,
        workers: int = 1,
    ) -> list[PathExplanation]:
        """Explain several triples with :meth:`explain`, in order, with a progress bar.

        Each explanation takes seconds (the evaluator) to minutes (``mode="retrain"``), so a
        list of targets shows a tqdm bar when stderr is a terminal; never in a pipe or a log.
        Targets whose candidate paths were capped give one summary warning at the end
        (:func:`kg.explain.local.capped_summary`), not one each; each explanation's
        ``truncated`` says which were capped.

        Args:
            triples: ``(head, relation, tail)`` labels or ids, one per target.
            mode: As for :meth:`explain`; default ``None``, the config's.
            progress: Show the bar (on a terminal only); False: never. Default True.
            workers: Processes sharing this fitted explainer, one thread each
                (:func:`kg.explain.parallel.explain_parallel`; no bar); the result equals the
                serial one but for ``seconds``. Default 1: this process, serially.

        Returns:
            One :class:`PathExplanation` per triple, in the same order.
        """
        from tqdm.auto import tqdm

        self._check_fitted()
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise GraphDataError(f"workers: expected a positive int, got {workers!r}")
        if workers > 1:
            from kg.explain.parallel import explain_parallel

            return explain_parallel(self, triples, workers=workers, mode=mode)
        bar = tqdm(triples, desc="explain", unit="triple", disable=None if progress else True)
        with capped_summary(num_targets=len(triples)):
            return [self.explain(triple, mode=mode) for triple in bar]

    def explain_baseline(
        self, triple: Sequence[str] | Sequence[int], baseline: str, *, seed: int | None = None
    ) -> PathExplanation:
        """Explain one triple with a baseline of :data:`BASELINES`, scored like :meth:`explain`.

        ``random`` and ``shortest`` take ``config.max_paths`` paths; ``edge_mask`` keeps at most
        ``max_paths * max_length`` triples. Fidelity is measured with the config's scorer.

        Args:
            triple: ``(head, relation, tail)`` labels or ids.
            baseline: One of :data:`BASELINES`.
            seed: Seeds ``random`` and ``edge_mask``; default ``None``, the config's seed.

        Returns:
            The :class:`PathExplanation`, ``mode`` set to the baseline's name.
        """
        if baseline not in baselines.BASELINES:
            names = tuple(baselines.BASELINES)
            raise GraphDataError(f"baseline: expected one of {names}, got {baseline!r}")
        start = time.perf_counter()
        cfg = self.config
        local = self.local_structure(triple)
        scorer = self.scorer(local)
        chosen, mask = baselines.BASELINES[baseline](
            baselines.BaselineInput(
                local=local,
                scorer=scorer,
                evaluator=self.evaluator_,
                probability=self.probability,
                max_paths=cfg.max_paths,
                max_length=cfg.max_length,
                seed=cfg.seed if seed is None else seed,
            )
        )
        context = self._context(local, scorer)
        return assemble(context, local, None, chosen, mask, mode=baseline, start=start)


def _path_search(
    explainer: KGExplainer, local: LocalStructure, scorer: Scorer, mode: str, start: float
) -> PathExplanation:
    """Strategy ``"paths"``: :func:`~kg.explain.search.greedy_search` over whole paths."""
    cfg = explainer.config
    result = greedy_search(
        local.paths,
        local.num_edges,
        scorer,
        max_paths=cfg.max_paths,
        min_gain=cfg.min_gain,
        objective=OBJECTIVE,
        selection=cfg.selection,
        min_paths=MIN_PATHS,
        device=local.edge_type.device,
    )
    mask = local.edge_mask(result.chosen)
    context = explainer._context(local, None)
    return assemble(context, local, result, result.chosen, mask, mode=mode, start=start)


def _pattern_search(
    explainer: KGExplainer, local: LocalStructure, scorer: Scorer, mode: str, start: float
) -> PathExplanation:
    r"""Strategy ``"patterns"``: paths chosen by mined patterns (:mod:`kg.explain.patterns`).

    The choice does not use ``scorer``; the fidelity figures and each path's gain do, in one
    batched call: gain :math:`g_k = f(S_k) - f(S_{k-1})` of the :math:`k`-th chosen path, with
    :math:`S_k` the first :math:`k` paths' triples and :math:`S_0 = \varnothing`, as the greedy
    search reports it.

    A body that recurses on the target relation, :math:`r(x, z) \Leftarrow s(x, y) \land r(y, z)`
    (the most frequent shape of the rules AMIE mines on Freebase), is searched for only when
    the local graph has no path without another :math:`r` fact: the local structure is then
    rebuilt with such paths as candidates (on FB15k-237, 37 of 100 targets had no other path).
    The first pick may be a member of the relation's rule set, the bodies whose union agrees
    best with it (:mod:`kg.explain.patterns.rule_sets`), which the bank builds at the
    relation's first target. The explanation may hold one condition, a fact on a constant at a
    node of a path or an end's value of a function that differs from the other end
    (:mod:`kg.explain.patterns.conditions`): refining the chosen paths ("Conditions",
    "Distinct values"), or with another candidate path in their place where the two agree
    significantly better ("Conditioned picks").
    """
    max_paths = explainer.config.max_paths
    choice = pattern_search(local, explainer.patterns_, max_paths=max_paths)
    if not choice.chosen and not local.through_relation:
        local = explainer.local_structure(local.target, through_relation=True)
        scorer = explainer.scorer(local, mode=mode)
        choice = pattern_search(local, explainer.patterns_, max_paths=max_paths, recursive=True)
    chosen = choice.chosen
    mask = pattern_mask(local, choice)
    result = score_selection(scorer, local, chosen, mask, "agreement" if chosen else "no_paths")
    context = explainer._context(local, None)
    return assemble(
        context, local, result, chosen, mask, mode=mode, start=start, conditions=choice.conditions
    )


def _node_search(
    explainer: KGExplainer, local: LocalStructure, scorer: Scorer, mode: str, start: float
) -> PathExplanation:
    """Strategy ``"nodes"``: the reference's node growth (:mod:`kg.explain.node_search`).

    Its fidelity figures are measured with the config's own mode's scorer.
    """
    chosen, mask, _ = node_greedy_search(local, scorer, top_k=explainer.config.max_paths)
    reason = "reached_tail" if chosen else "tail_not_reached"
    context = explainer._context(local, explainer.scorer(local))
    return assemble(context, local, None, chosen, mask, mode=mode, start=start, stop_reason=reason)


#: The search strategies by name, one signature ``(explainer, local structure, scorer, mode,
#: start time) -> PathExplanation``: a new strategy is one function and one line here.
SEARCHES: dict[
    str, Callable[[KGExplainer, LocalStructure, Scorer, str, float], PathExplanation]
] = {"patterns": _pattern_search, "paths": _path_search, "nodes": _node_search}
#: Search strategies (:data:`SEARCHES`' names): mined relation-path patterns
#: (:mod:`kg.explain.patterns`, default since issue #18: RESULTS.md, "Explainers on synthetic
#: worlds"), the greedy perturbation search over whole paths, or the reference's node-by-node
#: growth.
STRATEGIES = tuple(SEARCHES)


def _integer(value: object) -> int | None:
    """An id given as any integer type (int, NumPy, a 0-d torch tensor), else None (bools too)."""
    if isinstance(value, (bool, str)):
        return None
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return None


def _check_graph_config(cfg: ExplainerConfig, graph: TripleSet, *, flags: bool = False) -> None:
    """Refuse a radius or path length beyond the graph's entity count, and unknown path relations.

    ``flags``: name the command-line flags (``--hops``, ``--path-relations``) instead of the
    config fields, for ``graphlib kg explain``.
    """
    for name in ("hops", "max_length"):
        shown = "--" + name.replace("_", "-") if flags else name
        check_depth(shown, getattr(cfg, name), graph.num_entities)
    for label in cfg.path_relations or ():
        if label not in graph.relations:
            where = "--path-relations" if flags else "path_relations"
            raise UnknownLabelError("relation", label, graph.relations.labels, where)


def _check_evaluator_config(cfg: ExplainerConfig, *, flags: bool = False) -> None:
    """Refuse an evaluator config whose subgraph radius or path length is not the explainer's.

    ``flags``: name the command-line flags (``--evaluator-hops``, ``--hops``) instead of the
    config fields, for ``graphlib kg explain``.
    """
    for name in ("hops", "max_length"):
        mine, theirs = getattr(cfg, name), getattr(cfg.evaluator, name)
        if mine != theirs and flags:
            flag = "--" + name.replace("_", "-")
            raise GraphDataError(
                f"--evaluator-{flag[2:]}: the evaluator must be distilled on the subgraphs and "
                f"path lengths the explainer scores, got --evaluator-{flag[2:]} {theirs} with "
                f"{flag} {mine}; drop --evaluator-{flag[2:]} (it follows {flag}) or pass "
                f"{flag} {theirs}"
            )
        if mine != theirs:
            raise GraphDataError(
                f"evaluator: EvaluatorConfig({name}={theirs}) differs from ExplainerConfig("
                f"{name}={mine}); the evaluator must be distilled on the subgraphs and path "
                f"lengths the explainer scores: set EvaluatorConfig({name}={mine})"
            )


@torch.no_grad()
def _calibrate(model: KGEModel, triples: Tensor, seed: int) -> tuple[float, float]:
    """``(tau, sigma_f)`` from up to 2000 training triples and one tail corruption each.

    The distillation ranks its training subgraphs' paths with the same map
    (:func:`kg.explain.evaluator.sampling.calibration`, one implementation).
    """
    return calibration(model, triples, seed)
