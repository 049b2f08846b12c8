r"""Filtered rank-based link-prediction evaluation, as PyKEEN defines it, vectorised in batches.

For each evaluated triple :math:`(h, r, t)` both sides are ranked: the true tail among all
candidate tails of :math:`(h, r, \cdot)` and the true head among all candidate heads of
:math:`(\cdot, r, t)`. Other known true triples (train, valid and test: pass
``KGDataset.filter_index()``; leaving valid out was pykeen issue #397) are removed from the
ranking (PyKEEN masks their scores, then writes the true entity's score back; here each distinct
query ``(h, r)`` or ``(r, t)`` of a batch is scored and masked once and the evaluated triple's
own cell is counted back in, the same numbers: :func:`kg._ranks.filtered_ranks`). Over the
finite remaining scores, with :math:`s^*` the true score and :math:`C` the number of options
(the true entity included):

.. math::
    r^{opt} = \#\{s > s^*\} + 1, \qquad r^{pes} = \#\{s \ge s^*\}, \qquad
    r^{real} = \tfrac12 \bigl(r^{opt} + r^{pes}\bigr).

The realistic rank (the expected rank under random tie-breaking) is the default; ties
inflated published numbers (Sun et al., "A Re-evaluation of Knowledge Graph Completion
Methods", ACL 2020, arXiv 1911.03903). Metrics over ranks :math:`r_1 .. r_n`: MR
:math:`= \frac1n\sum r_i`, MRR :math:`= \frac1n \sum 1/r_i`, Hits@k
:math:`= \frac1n \sum \mathbb{1}(r_i \le k)`, and adjusted versions against a random ranker
(Berrendorf et al., "Interpretable and Fair Comparison of Link Prediction or Entity Alignment
Methods", arXiv 2002.06914; Hoyt et al., "A Unified Framework for Rank-based Evaluation Metrics
for Link Prediction in Knowledge Graphs", arXiv 2203.07544) with :math:`\mathbb{E}[r_i] =
(C_i + 1)/2`, :math:`\mathbb{E}[1/r_i] = H_{C_i}/C_i`, :math:`\mathbb{E}[\mathbb{1}(r_i \le
k)] = \min(k/C_i, 1)` and :math:`\mathbb{V}[M] = \frac{1}{n^2} \sum_i \mathbb{V}[M_i]`
(:mod:`kg._ranks` gives the :math:`\mathbb{V}[M_i]`):

.. math::
    \mathrm{AMR} = \frac{\mathrm{MR}}{\mathbb{E}[\mathrm{MR}]}, \qquad
    \mathrm{AMRI} = 1 - \frac{\mathrm{MR} - 1}{\mathbb{E}[\mathrm{MR}] - 1}, \qquad
    M^{adj} = \frac{M - \mathbb{E}[M]}{1 - \mathbb{E}[M]}, \qquad
    z_M = \frac{\pm(M - \mathbb{E}[M])}{\sqrt{\mathbb{V}[M]}}

(:math:`M` is MRR or Hits@k; :math:`z` is signed so larger is better, also for MR). "Both"
concatenates head and tail ranks. Where a random ranker is certain to score the best value the
adjusted metric and the z-score are 0/0: they are undefined (None, JSON null) when every query
has at most k candidates (Hits@k) or one candidate (AMRI, adjusted MRR, :math:`z_{MR}`,
:math:`z_{MRR}`), never NaN.

A query whose true score is non-finite, or whose unfiltered candidates score NaN or
:math:`+\infty`, is never ranked: by default :func:`evaluate` raises
:class:`NonFiniteScoreError` (the model diverged); ``nonfinite="worst"`` counts it as the worst
rank :math:`C` instead. Either way every metric lies in its range. PyG's ``KGEModel.test``
(raw, tail only, 0-based mean rank, a Python loop) is the counter-example.
"""

from __future__ import annotations

import contextlib
import math
import operator
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import torch
from torch import Tensor

from graphdata.errors import GraphDataError
from graphdata.filter_index import FilterIndex, stacked_query_keys
from kg._ranks import filtered_ranks, rank_summary
from kg.base import EntitySelection, KGEModel, eval_mode

__all__ = [
    "RankMetrics",
    "evaluate",
    "rank_metrics",
    "NonFiniteScoreError",
    "SIDES",
    "RANK_TYPES",
    "NONFINITE",
]

#: Which ranks a metric is computed over.
SIDES = ("both", "head", "tail")
#: How ties with the true score are broken.
RANK_TYPES = ("realistic", "optimistic", "pessimistic")
#: What :func:`evaluate` does with a query that has non-finite scores.
NONFINITE = ("raise", "worst")
#: Fewest batches for which :func:`evaluate` shows a progress bar (below: a small KG, seconds).
PROGRESS_MIN_BATCHES = 20


class NonFiniteScoreError(GraphDataError):
    """Scores with NaN or infinity were to be ranked: the model diverged or overflowed.

    Args:
        message: What was found and how to fix it.
        count: Number of non-finite queries.
        total: Number of ranked queries (two per triple: head and tail side).
        relations: Relation ids of the non-finite queries, sorted.
        sides: Non-finite queries per side, ``{"head": n, "tail": n}``.
    """

    def __init__(
        self, message: str, *, count: int, total: int, relations: list[int], sides: dict[str, int]
    ) -> None:
        super().__init__(message)
        self.count, self.total, self.relations, self.sides = count, total, relations, sides


#: A plain triple scorer: ``fn(head_index, rel_type, tail_index) -> [B]`` (higher = better).
ScoreFunction = Callable[[Tensor, Tensor, Tensor], Tensor]


@dataclass(frozen=True, eq=False)
class RankMetrics:
    """Filtered ranks of an evaluation and the metrics over them.

    Row 0 of each rank tensor is the head side, row 1 the tail side; column ``i`` is triple
    ``i``. The headline properties (:attr:`mrr`, :attr:`mr`, :meth:`hits_at`, ...) use both
    sides and :attr:`rank_type`.

    Args:
        optimistic: Optimistic ranks, ``[2, N]`` (int64).
        pessimistic: Pessimistic ranks, ``[2, N]`` (int64).
        options: Number of finite (non-filtered) candidates incl. the true one, ``[2, N]``.
        relation: Relation id of each evaluated triple, ``[N]``.
        rank_type: Default tie handling, one of :data:`RANK_TYPES`. Default ``"realistic"``.
        ks: The ``k`` of Hits@k. Default ``(1, 3, 10)``.
        nonfinite: Which ranked queries had non-finite scores and were given the worst rank,
            ``[2, N]`` bool (:func:`evaluate` with ``nonfinite="worst"``); ``None``: none.

    Examples:
        >>> m = RankMetrics(torch.tensor([[1], [2]]), torch.tensor([[1], [4]]),
        ...                 torch.tensor([[5], [5]]), torch.tensor([0]))
        >>> m.ranks("tail").tolist(), m.mrr, m.hits_at(1)
        ([3.0], 0.6666666666666666, 0.5)
    """

    optimistic: Tensor
    pessimistic: Tensor
    options: Tensor
    relation: Tensor
    rank_type: str = "realistic"
    ks: tuple[int, ...] = field(default=(1, 3, 10))
    nonfinite: Tensor | None = None

    def __post_init__(self) -> None:
        _check_choice("rank_type", self.rank_type, RANK_TYPES)

    @property
    def num_nonfinite(self) -> int:
        """Ranked queries (of :math:`2N`) whose non-finite scores were counted as the worst rank."""
        return int(self.nonfinite.sum()) if self.nonfinite is not None else 0

    @property
    def num_triples(self) -> int:
        """Number of evaluated triples :math:`N` (each ranked on both sides)."""
        return self.relation.numel()

    def ranks(self, side: str = "both", rank_type: str | None = None) -> Tensor:
        """Ranks of one side (``[N]``) or both (``[2N]``, head then tail), float64."""
        _check_choice("side", side, SIDES)
        kind = _check_choice("rank_type", rank_type or self.rank_type, RANK_TYPES)
        if kind == "optimistic":
            ranks = self.optimistic.double()
        elif kind == "pessimistic":
            ranks = self.pessimistic.double()
        else:
            ranks = (self.optimistic + self.pessimistic).double() / 2
        return ranks.flatten() if side == "both" else ranks[0 if side == "head" else 1]

    def _options(self, side: str) -> Tensor:
        return self.options.flatten() if side == "both" else self.options[SIDES.index(side) - 1]

    def summary(self, side: str = "both", rank_type: str | None = None) -> dict[str, float | None]:
        """All metrics of one side: ``mr, amr, amri, mrr, adjusted_mrr, hits_at_k, ...``.

        ``adjusted_hits_at_k`` and ``z_hits_at_k`` are undefined (None) when every query has at
        most k candidates; ``amri``, ``adjusted_mrr``, ``z_mr`` and ``z_mrr`` when every query
        has one (:func:`kg._ranks.rank_summary`). The others are always numbers.
        """
        return rank_summary(self.ranks(side, rank_type), self._options(side), self.ks)

    def per_relation(
        self, side: str = "both", rank_type: str | None = None
    ) -> dict[int, dict[str, float | None]]:
        """:meth:`summary` restricted to the triples of each relation id that occurs.

        A metric undefined for a relation's queries (every one has at most k candidates, see
        :meth:`summary`) is None.
        """
        ranks, options = self.ranks(side, rank_type), self._options(side)
        relation = self.relation.repeat(2) if side == "both" else self.relation
        return {
            int(r): rank_summary(ranks[relation == r], options[relation == r], self.ks)
            for r in torch.unique(relation).tolist()
        }

    def _ranked(self, metric: str) -> None:
        """Refuse a metric of no triples: it has no value, and NaN must never be a result."""
        if not self.num_triples:
            raise GraphDataError(
                f"{metric}: no triples were ranked (an empty split, or every triple dropped as "
                "unknown), so it has no value; evaluate at least one triple"
            )

    def _defined(self, metric: str) -> float:
        """The both-sides ``metric`` of :meth:`summary`; refuse it where it is undefined."""
        self._ranked(metric)
        value = self.summary()[metric]
        if value is None:
            raise GraphDataError(
                f"{metric}: undefined, every ranked query has exactly one candidate (the "
                "expected rank of a random ranker is 1, so the adjustment divides 0 by 0); "
                "evaluate on a graph with more than one candidate entity per query"
            )
        return value

    @property
    def mr(self) -> float:
        """Mean rank, both sides."""
        return self._defined("mr")

    @property
    def mrr(self) -> float:
        """Mean reciprocal rank, both sides."""
        return self._defined("mrr")

    @property
    def amri(self) -> float:
        r"""Adjusted mean rank index, both sides (1 perfect, 0 random).

        Raises:
            GraphDataError: When no triple was ranked, or when AMRI is undefined: every query
                has exactly one candidate (:math:`\mathbb{E}[\mathrm{MR}] = 1`).
        """
        return self._defined("amri")

    def hits_at(self, k: int) -> float:
        """Hits@k, both sides (any ``k``, not only those in :attr:`ks`)."""
        self._ranked(f"hits_at({k})")
        return float((self.ranks() <= k).double().mean())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready metrics: every side and rank type, plus the per-relation breakdown.

        An undefined metric (:meth:`summary`: every query has at most k candidates) is None,
        written as JSON ``null``; no value is NaN.
        """
        return {
            "num_triples": self.num_triples,
            "rank_type": self.rank_type,
            "num_nonfinite_queries": self.num_nonfinite,
            "metrics": {
                side: {kind: self.summary(side, kind) for kind in RANK_TYPES} for side in SIDES
            },
            "per_relation": {str(r): m for r, m in self.per_relation().items()},
        }

    def table(self, *, per_relation: bool = False, labels: Sequence[str] | None = None) -> str:
        """A readable table of the main metrics per side (and per relation, optionally).

        An undefined metric (:meth:`summary`) is printed as ``n/a``.

        Args:
            per_relation: Add one row per relation (both sides). Default False.
            labels: Relation labels indexed by id, for the per-relation rows. Default None.

        Returns:
            The table as text.
        """
        cols = ["mr", "mrr", *(f"hits_at_{k}" for k in self.ks), "amri", "adjusted_mrr"]
        head = ["", "n", *cols]
        rows = [[side, *self._row(self.summary(side), cols)] for side in SIDES]
        if per_relation:
            for r, m in self.per_relation().items():
                name = labels[r] if labels is not None else f"relation {r}"
                rows.append([name, *self._row(m, cols)])
        width = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
        lines = [f"filtered ranks ({self.rank_type}), {self.num_triples} triples"]
        for row in (head, *rows):
            lines.append("  ".join(str(x).rjust(w) for x, w in zip(row, width)))
        return "\n".join(lines)

    @staticmethod
    def _row(m: dict[str, float | None], cols: list[str]) -> list[str]:
        values = (m.get(c) for c in cols)  # None: undefined; absent: no triples
        return [str(int(m["count"] or 0)), *("n/a" if v is None else f"{v:.4f}" for v in values)]

    def __str__(self) -> str:
        return self.table()


def _positive_int(value: object) -> bool:
    """An integer (int, numpy integer: anything with ``__index__``) >= 1; a bool is not one."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        return False
    return operator.index(value) >= 1  # type: ignore[arg-type]


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise GraphDataError(f"{name}: expected one of {choices}, got {value!r}")
    return value


def _is_kge_model(model: object) -> TypeGuard[KGEModel]:
    """A KGE model by its contract (duck-typed, so a re-imported ``kg.base`` still matches)."""
    return isinstance(model, torch.nn.Module) and all(
        hasattr(model, name) for name in ("score_tails", "score_heads", "num_entities")
    )


def _is_oom(err: BaseException) -> bool:
    """CUDA's OutOfMemoryError, or a RuntimeError saying an allocation failed (CPU, MPS)."""
    text = str(err).lower()
    return isinstance(err, torch.cuda.OutOfMemoryError) or (
        isinstance(err, RuntimeError)
        and ("out of memory" in text or "can't allocate memory" in text)
    )


class _Scorer:
    """Both sides of a model or of a plain triple scorer as ``[B, C]`` score functions."""

    def __init__(
        self, model: KGEModel | ScoreFunction, num_entities: int, reciprocal: bool
    ) -> None:
        self.model, self.num_entities, self.reciprocal = model, num_entities, reciprocal
        #: The model when it has the KGE contract (score rows itself), else None.
        self.kge = model if _is_kge_model(model) else None

    def tails(self, head: Tensor, rel: Tensor, entities: EntitySelection) -> Tensor:
        if self.kge is not None:
            return self.kge.score_tails(head, rel, entities)
        return self._broadcast(head, rel, entities, tail_side=True)

    def heads(self, rel: Tensor, tail: Tensor, entities: EntitySelection) -> Tensor:
        if self.kge is not None and self.reciprocal:
            # Reciprocal training: (?, r, t) is answered as (t, r + R, ?), graphdata's convention.
            return self.kge.score_tails(tail, rel + self.kge.num_relations // 2, entities)
        if self.kge is not None:
            return self.kge.score_heads(rel, tail, entities)
        return self._broadcast(tail, rel, entities, tail_side=False)

    def both(
        self,
        head_side: tuple[Tensor, Tensor],
        tail_side: tuple[Tensor, Tensor],
        entities: EntitySelection,
    ) -> Tensor:
        """Rows of ``heads(*head_side)`` then ``tails(*tail_side)``, in one call where possible."""
        if self.kge is not None and self.reciprocal:
            (rel_h, tail), (head, rel_t) = head_side, tail_side
            inverse = rel_h + self.kge.num_relations // 2
            queries = torch.cat([tail, head]), torch.cat([inverse, rel_t])
            return self.kge.score_tails(*queries, entities)
        fused = getattr(self.kge, "_both_sides", None) if self.kge is not None else None
        scores = fused(head_side, tail_side, entities) if fused is not None else None
        if scores is None:
            scores = torch.cat([self.heads(*head_side, entities), self.tails(*tail_side, entities)])
        return scores

    def _broadcast(
        self, fixed: Tensor, rel: Tensor, entities: EntitySelection, *, tail_side: bool
    ) -> Tensor:
        if entities is None:
            entities = slice(0, self.num_entities)
        candidates = torch.arange(self.num_entities, device=fixed.device)[entities]  # [C]
        b, c = fixed.numel(), candidates.numel()
        fixed, rel = fixed.repeat_interleave(c), rel.repeat_interleave(c)  # [B * C]
        candidates = candidates.repeat(b)
        scores = (
            self.model(fixed, rel, candidates) if tail_side else self.model(candidates, rel, fixed)
        )
        return scores.view(b, c)

    def bytes_per_query(self) -> int:
        # A plain function scores B * E triples; budget a few floats of work per triple.
        if self.kge is not None and hasattr(self.kge, "bytes_per_query"):
            return int(self.kge.bytes_per_query())
        return 64 * self.num_entities


def evaluate(
    model: KGEModel | ScoreFunction,
    triples: Tensor,
    filter_index: FilterIndex | None,
    *,
    num_entities: int | None = None,
    reciprocal: bool = False,
    rank_type: str = "realistic",
    ks: Sequence[int] = (1, 3, 10),
    batch_size: int | None = None,
    memory_budget: int = 64 * 2**20,
    compile: bool = False,
    nonfinite: str = "raise",
    relation_labels: Sequence[str] | None = None,
    progress: bool = True,
) -> RankMetrics:
    r"""Filtered, both-sides, rank-based evaluation (see the module docstring for the math).

    The batch size comes from ``memory_budget`` and the number of entities; on an
    out-of-memory error the batch is halved (then the candidate chunk, at batch size 1) and
    retried, so a too-large budget costs time, not the run. Scoring happens on the model's
    device: each batch of triples, and the filter index once, are moved there. A model is
    evaluated in eval mode (its mode is restored afterwards) under ``torch.no_grad``.

    Args:
        model: A :class:`~kg.base.KGEModel`, or a plain scorer
            ``fn(head_index, rel_type, tail_index) -> [B]`` that is called on ``B * C``
            broadcast triples (then ``num_entities`` is required).
        triples: Mapped triples to rank, ``LongTensor [N, 3]`` (or a ``TripleSet``).
        filter_index: Known true triples to filter, normally ``dataset.filter_index()``
            (train + valid + test); ``None`` gives raw (unfiltered) ranks.
        num_entities: Number of candidate entities; ``None`` takes the model's. Default None.
        reciprocal: The model was trained with reciprocal relations (inverse of ``r`` is
            ``r + R``, ``R = model.num_relations // 2``): heads are ranked by
            ``score_tails(t, r + R)``. Default False.
        rank_type: Default tie handling of the result, one of :data:`RANK_TYPES` (all three are
            computed). Default ``"realistic"``.
        ks: The ``k`` of Hits@k. Default ``(1, 3, 10)``.
        batch_size: Triples per batch; ``None`` derives it from ``memory_budget``.
        memory_budget: Bytes for one batch's score matrices and intermediates. Default 64 MiB.
        compile: Score with the model's ``torch.compile`` kernel where it has one
            (:class:`~kg.rotate.RotatE`, whose sum of moduli has no matmul form; the others
            score with a matmul or ``cdist`` already). Costs a few seconds of compilation per
            process, then runs several times faster; falls back to eager scoring with a warning
            where compilation fails. Default False.
        nonfinite: What to do with a query whose true score is non-finite or whose unfiltered
            candidates score NaN or :math:`+\infty` (a diverged model): ``"raise"``
            :class:`NonFiniteScoreError` after ranking every batch, naming how many queries,
            which relations and sides; or ``"worst"``: count it as the worst rank (the number
            of its candidates), warn, and record it in :attr:`RankMetrics.nonfinite`.
            Filtered cells and :math:`-\infty` candidates are never a problem. Default
            ``"raise"``.
        relation_labels: Relation labels by id, used in the :class:`NonFiniteScoreError`
            message. Default None (ids only).
        progress: Show a tqdm bar over the triples when the evaluation takes at least
            :data:`PROGRESS_MIN_BATCHES` batches (a large KG) and stderr is a terminal; it is
            removed when done. False: never. Default True.

    Returns:
        The ranks and metrics.

    Raises:
        GraphDataError: On malformed triples, ids out of range, or sizes that disagree.
        NonFiniteScoreError: With ``nonfinite="raise"``, when a query has non-finite scores.

    Shapes:
        triples: ``[N, 3]``; the result holds ``[2, N]`` ranks.

    Examples:
        >>> from kg.distmult import DistMult
        >>> known = torch.tensor([[0, 0, 1], [1, 0, 2], [2, 0, 0]])
        >>> index = FilterIndex.from_triples(known, num_entities=3, num_relations=1)
        >>> m = evaluate(DistMult(3, 1, dim=4), known, index)
        >>> m.num_triples, 1 <= m.mr <= 3
        (3, True)
    """
    triples = getattr(triples, "mapped_triples", triples)
    kge = model if _is_kge_model(model) else None
    if kge is None and not callable(model):
        raise GraphDataError(
            f"model: expected a KGEModel or a callable scorer, got {type(model).__name__}"
        )
    if num_entities is None:
        if kge is None:
            raise GraphDataError("num_entities: required when model is a plain scoring function")
        num_entities = kge.num_entities
    if not isinstance(reciprocal, bool):
        raise GraphDataError(f"reciprocal: expected True or False, got {reciprocal!r}")
    if reciprocal and kge is None:
        raise GraphDataError(
            "reciprocal: only applies to a KGEModel (heads scored as tails of r + R); wrap a "
            "plain scorer so that it scores heads itself"
        )
    num_rel = _check_triples(triples, model, num_entities, reciprocal, filter_index)
    _check_choice("rank_type", rank_type, RANK_TYPES)
    _check_choice("nonfinite", nonfinite, NONFINITE)
    if isinstance(ks, (str, bytes)) or not all(_positive_int(k) for k in ks):
        raise GraphDataError(f"ks: expected positive ints, e.g. (1, 3, 10), got {ks!r}")
    ks = tuple(int(k) for k in ks)
    if batch_size is not None and not _positive_int(batch_size):
        raise GraphDataError(f"batch_size: expected a positive int or None, got {batch_size!r}")
    if not _positive_int(memory_budget):
        raise GraphDataError(f"memory_budget: expected positive int bytes, got {memory_budget!r}")

    scorer = _Scorer(model, num_entities, reciprocal)
    param = next(kge.parameters(), None) if kge is not None else None
    device = param.device if param is not None else triples.device
    if filter_index is not None and filter_index.device != device:
        filter_index = filter_index.to(device)
    if batch_size is None:
        # Per query: two sides' score rows, their [2B, E] concatenation (scorers without a
        # fused both-sides call), a dense filter mask on small graphs, 8E bytes each, and the
        # model's own intermediates. The comparisons reuse a small block (kg._ranks).
        per_query = 24 * num_entities + scorer.bytes_per_query()
        batch_size = max(1, memory_budget // per_query)
    batch = min(batch_size, max(triples.size(0), 1))
    chunk = num_entities

    was_compiled = getattr(kge, "compile_scoring", None) if kge is not None else None
    if kge is not None and was_compiled is not None:
        # An optional attribute some models declare (RotatE), not part of KGEModel.
        setattr(kge, "compile_scoring", bool(compile))  # noqa: B010
    # The ranks go into tensors allocated once, before the loop: small tensors kept from each
    # batch would sit between the batches' large score blocks on the C heap, which then cannot
    # reuse or return the blocks' memory (benchmarks/RESULTS.md, issue 17, session 19).
    num_triples = triples.size(0)
    ranks = tuple(torch.empty(2, num_triples, dtype=torch.long, device=device) for _ in range(3))
    broken = torch.empty(2, num_triples, dtype=torch.bool, device=device)
    from tqdm.auto import tqdm

    few = math.ceil(triples.size(0) / batch) < PROGRESS_MIN_BATCHES
    bar = tqdm(
        total=triples.size(0),
        desc="evaluate",
        unit="triple",
        leave=False,
        disable=True if few or not progress else None,  # None: only on a terminal
    )
    try:
        with torch.no_grad(), eval_mode(kge) if kge is not None else contextlib.nullcontext():
            start = 0
            while start < triples.size(0):
                rows = triples[start : start + batch].to(device)
                try:
                    *batch_ranks, batch_broken = _rank_batch(
                        scorer, rows, filter_index, chunk, num_rel, fill=batch < num_triples
                    )
                except RuntimeError as err:
                    if not _is_oom(err) or (batch == 1 and chunk == 1):
                        raise
                    if batch > 1:
                        batch //= 2
                    else:
                        chunk = (chunk + 1) // 2
                    del err
                    if device.type == "cuda":
                        torch.cuda.empty_cache()
                    continue
                done = slice(start, start + rows.size(0))
                for out, part in zip(ranks, batch_ranks):
                    out[:, done] = part
                broken[:, done] = batch_broken
                start += rows.size(0)
                bar.update(rows.size(0))
    finally:
        bar.close()
        if kge is not None and was_compiled is not None:
            setattr(kge, "compile_scoring", was_compiled)  # noqa: B010
    optimistic, pessimistic, options = (x.cpu() for x in ranks)
    return rank_metrics(
        (optimistic, pessimistic, options, broken.cpu()),
        triples[:, 1].cpu(),
        relation_labels=relation_labels,
        nonfinite=nonfinite,
        rank_type=rank_type,
        ks=ks,
        stacklevel=3,
    )


def rank_metrics(
    ranks: tuple[Tensor, Tensor, Tensor, Tensor],
    relation: Tensor,
    *,
    relation_labels: Any,
    nonfinite: str,
    rank_type: str,
    ks: Any,
    stacklevel: int = 2,
) -> RankMetrics:
    """Metrics from ``(optimistic, pessimistic, options, non-finite flags)``, each ``[2, N]``.

    Non-finite scores raise :class:`NonFiniteScoreError` (``nonfinite="raise"``) or are warned
    about once and counted as the worst rank, as :func:`evaluate` documents; shared by
    :func:`evaluate` and :func:`kg.distributed.evaluate_sharded`.
    """
    optimistic, pessimistic, options, broken = ranks
    if bool(broken.any()):
        message = _nonfinite_message(broken, relation, relation_labels)
        if nonfinite == "raise":
            raise NonFiniteScoreError(
                message + "; or pass nonfinite='worst' to count them as the worst rank",
                count=int(broken.sum()),
                total=broken.numel(),
                relations=torch.unique(relation.repeat(2)[broken.flatten()]).tolist(),
                sides={"head": int(broken[0].sum()), "tail": int(broken[1].sum())},
            )
        warnings.warn(
            message + "; counted as the worst rank", RuntimeWarning, stacklevel=stacklevel
        )
    return RankMetrics(
        optimistic,
        pessimistic,
        options,
        relation,
        rank_type=rank_type,
        ks=ks,
        nonfinite=broken if bool(broken.any()) else None,
    )


def _nonfinite_message(broken: Tensor, relation: Tensor, labels: Sequence[str] | None) -> str:
    """What :class:`NonFiniteScoreError` says: how many queries, which relations and sides."""
    ids = torch.unique(relation.repeat(2)[broken.flatten()]).tolist()
    names = [
        f"{r} ({labels[r]!r})" if labels is not None and r < len(labels) else str(r)
        for r in ids[:10]
    ]
    more = f" and {len(ids) - 10} more" if len(ids) > 10 else ""
    head, tail = int(broken[0].sum()), int(broken[1].sum())
    return (
        f"scores: {head + tail} of {broken.numel()} ranked queries ({head} head-side, {tail} "
        f"tail-side) have a non-finite true score or NaN/+inf candidate scores, in relation(s) "
        f"{', '.join(names)}{more}; the model diverged or overflowed: retrain with a lower "
        "learning rate or gradient clipping (grad_clip)"
    )


def _rank_batch(
    scorer: _Scorer,
    rows: Tensor,
    filter_index: FilterIndex | None,
    chunk: int,
    num_rel: int,
    fill: bool = False,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Ranks and non-finite flags of one batch on both sides, each ``[2, B]`` (head, tail).

    ``num_rel`` bounds the batch's relation ids (from :func:`_check_triples`); ``fill`` scores
    ``2 B`` rows whatever the number of distinct queries (when more batches follow).
    """
    head, rel, tail = rows.unbind(dim=1)
    batch, num_entities = head.numel(), scorer.num_entities
    num_relations = filter_index.num_relations if filter_index is not None else num_rel
    # Score each distinct query once: test triples share (h, r) and (r, t) queries. Both sides'
    # queries as one integer each (head queries r E + t first, tail queries h R + r + E R after
    # them), so one unique finds them all.
    shift = num_entities * num_relations
    keys, row_of = torch.unique(
        stacked_query_keys(head, rel, tail, num_entities, num_relations), return_inverse=True
    )
    num_head_rows = int(torch.searchsorted(keys, shift))
    scored = keys
    if fill and keys.numel() < 2 * batch:
        # Score 2B rows, the last query repeated: the C heap then reuses one block size from
        # batch to batch. Once glibc has freed one block of this size it serves blocks that size
        # from the heap (its dynamic mmap threshold), and blocks of varying sizes fragment it.
        # On FB15k-237's test split 8% more rows are scored (benchmarks/RESULTS.md, issue 17).
        scored = torch.cat([keys, keys[-1:].expand(2 * batch - keys.numel())])
    head_keys, tail_keys = scored[:num_head_rows], scored[num_head_rows:] - shift
    head_side = (head_keys // num_entities, head_keys % num_entities)  # (r, t) of (?, r, t)
    tail_side = (tail_keys // num_relations, tail_keys % num_relations)  # (h, r) of (h, r, ?)
    # Both sides in one [U_h + U_t, E] matrix (one model call where the model allows): one
    # pass of the ranking ops instead of two.
    scores = _score_matrix(scorer.both, head_side, tail_side, num_entities, chunk)
    known: Tensor | tuple[Tensor, Tensor] | None = None
    count: Tensor | None = None
    if filter_index is not None:  # ids checked once in evaluate (_check_triples)
        if filter_index.has_dense_mask():  # small graphs: rows of a cached dense table
            known, count = filter_index.stacked_score_mask(scored)
        else:
            known = filter_index.stacked_coo(keys)
    optimistic, pessimistic, options, nonfinite = filtered_ranks(
        scores, row_of, torch.cat([head, tail]), known, count
    )
    return (
        optimistic.view(2, batch),
        pessimistic.view(2, batch),
        options.view(2, batch),
        nonfinite.view(2, batch),
    )


def _score_matrix(
    fn: Callable[[tuple[Tensor, Tensor], tuple[Tensor, Tensor], EntitySelection], Tensor],
    head_side: tuple[Tensor, Tensor],
    tail_side: tuple[Tensor, Tensor],
    num_entities: int,
    chunk: int,
) -> Tensor:
    """``[B_h + B_t, E]`` scores of ``fn``, computed in candidate slices of ``chunk`` entities."""
    if chunk >= num_entities:
        return fn(head_side, tail_side, None)
    starts = range(0, num_entities, chunk)
    pieces = [fn(head_side, tail_side, slice(lo, lo + chunk)) for lo in starts]
    return torch.cat(pieces, dim=1)


def _check_triples(
    triples: Tensor,
    model: KGEModel | ScoreFunction,
    num_entities: int,
    reciprocal: bool,
    filter_index: FilterIndex | None,
) -> int:
    """Validate ``triples``; return an upper bound of their relation ids (at least 1)."""
    if not isinstance(triples, Tensor) or triples.dim() != 2 or triples.size(1) != 3:
        raise GraphDataError(
            "triples: expected a LongTensor [N, 3] of (head, relation, tail) ids, got "
            f"{getattr(triples, 'shape', type(triples).__name__)}"
        )
    if triples.dtype.is_floating_point or triples.dtype == torch.bool:
        raise GraphDataError(f"triples: expected integer ids, got {triples.dtype}")
    if _is_kge_model(model) and num_entities != model.num_entities:
        raise GraphDataError(
            f"num_entities: the model has {model.num_entities} entities, got {num_entities}"
        )
    if filter_index is not None and filter_index.num_entities != num_entities:
        raise GraphDataError(
            f"filter_index: built for {filter_index.num_entities} entities, but the model "
            f"scores {num_entities}; build it from the same dataset vocabulary"
        )
    if not triples.numel():
        return 1
    low, high = (x.tolist() for x in torch.aminmax(triples, dim=0))  # per column: h, r, t
    if min(low[0], low[2]) < 0 or max(high[0], high[2]) >= num_entities:
        raise GraphDataError(
            f"triples: entity ids must lie in [0, {num_entities}), got min "
            f"{min(low[0], low[2])} and max {max(high[0], high[2])}; entities unseen in training "
            "are dropped by KGDataset.from_folder(..., on_unknown='drop') (the default; "
            "--on-unknown drop)"
        )
    if _is_kge_model(model):
        num_relations = model.num_relations // 2 if reciprocal else model.num_relations
        if low[1] < 0 or high[1] >= num_relations:
            hint = " (reciprocal: the first half of the model's relations)" if reciprocal else ""
            raise GraphDataError(
                f"triples: relation ids must lie in [0, {num_relations}){hint}, got max {high[1]}"
            )
    if filter_index is not None and (low[1] < 0 or high[1] >= filter_index.num_relations):
        raise GraphDataError(
            f"triples: relation ids must lie in [0, {filter_index.num_relations}) of "
            f"filter_index, got min {low[1]} and max {high[1]}; build it from the same dataset"
        )
    return high[1] + 1
