r"""Rank computation and rank-based metrics (private helpers of :mod:`kg.evaluation`).

Definitions follow PyKEEN (``evaluation/ranks.py``, ``metrics/ranking.py``; Ali et al., "Bringing
Light Into the Dark", TPAMI 2021, arXiv 2006.13365) with the filtered setting of Bordes et al.
(NeurIPS 2013) and realistic ties (Sun et al., "A Re-evaluation of Knowledge Graph Completion
Methods", ACL 2020, arXiv 1911.03903): filtered scores are NaN, the true entity's score is
written back, and over the remaining scores

.. math::
    r^{opt} = \#\{s > s^*\} + 1, \quad r^{pes} = \#\{s \ge s^*\}, \quad
    r^{real} = \tfrac12 (r^{opt} + r^{pes}), \quad C = \#\{s \text{ finite}\}.

A query whose true score is non-finite, or whose unfiltered candidates score NaN or
:math:`+\infty`, has no meaningful rank (a NaN compares false with everything, so it used to
rank 0.5 and give an MRR of 2). :func:`filtered_ranks` flags such queries and gives them the worst
rank, :math:`r^{opt} = r^{pes} = C` with :math:`C` the unfiltered candidates; the caller decides
whether to raise (:func:`kg.evaluation.evaluate`'s default) or keep that worst rank. A
:math:`-\infty` candidate (and every filtered cell) is simply not an option.

Expectations under uniformly random scores (Berrendorf et al., "Interpretable and Fair
Comparison of Link Prediction or Entity Alignment Methods", arXiv 2002.06914; Hoyt et al., "A
Unified Framework for Rank-based Evaluation Metrics for Link Prediction in Knowledge Graphs",
arXiv 2203.07544):
:math:`\mathbb{E}[r] = (C + 1)/2`, :math:`\mathbb{E}[1/r] = H_C / C`,
:math:`\mathbb{E}[\mathbb{1}(r \le k)] = \min(k/C, 1)`, with variances
:math:`(C^2 - 1)/12`, :math:`H^{(2)}_C/C - (H_C/C)^2` and :math:`p(1 - p)`.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = ["filtered_ranks", "rank_summary"]


def filtered_ranks(
    scores: Tensor,
    row_of: Tensor,
    true_col: Tensor,
    known: Tensor | tuple[Tensor, Tensor] | None,
    known_count: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    r"""Return (optimistic, pessimistic, options, nonfinite) per query; ``scores`` may change.

    ``scores`` holds one row per *distinct* query (``(h, r)`` or ``(r, t)``); ranked query
    ``i`` reads row ``row_of[i]`` and its true entity is ``true_col[i]``. Test triples share
    queries (UMLS: 661 triples, 362 distinct ``(h, r)``), so scoring and filtering the distinct
    rows only saves work. ``known`` marks the known cells of those rows, as an additive mask of
    ``scores``' shape (:math:`-\infty` at a known cell, else 0; with ``known_count``, the known
    cells per row) or as ``(row, col)`` coordinates (a :class:`FilterIndex` gives either). When
    the evaluated triple is itself known, the filter masks its own cell too; instead of writing
    the true score back (PyKEEN's way, which a shared row cannot take) its self-count is added
    to the pessimistic rank and to the options.

    Rows whose scores are all finite (the normal case) are counted with arithmetic instead of
    two boolean comparison passes: masked cells are set to :math:`-\infty`, and with
    :math:`\sigma_j = \operatorname{sign}(s_j - s^*) \in \{-1, 0, 1\}` (exact: with
    IEEE gradual underflow, PyTorch's default, two distinct finite floats never differ by 0),

    .. math::
        \#\{s > s^*\} = \tfrac12 \bigl(\textstyle\sum_j \sigma_j + \sum_j |\sigma_j|\bigr),
        \qquad \#\{s = s^*\} = E - \textstyle\sum_j |\sigma_j|.

    Rows with a non-finite score are counted by comparisons, as PyKEEN does. Among them, a
    query whose true score is non-finite or whose unfiltered candidates hold NaN or
    :math:`+\infty` is flagged in ``nonfinite`` and gets the worst rank: optimistic =
    pessimistic = options = its number of unfiltered candidates (the true one included), so
    every metric stays in range. Filtered cells are ignored whatever they hold. Only rows whose
    sum is non-finite are inspected, so the all-finite fast path costs nothing extra.

    Shapes:
        scores: ``[U, E]``; row_of, true_col: ``[Q]``; known: ``[U, E]`` (float) or two
        ``[nnz]``; known_count: ``[U]``; outputs ``[Q]`` each (int64; ``nonfinite`` bool).
    """
    num_rows, num_entities = scores.shape
    scores = scores.contiguous()
    flat = scores.view(-1)  # [U * E]: shares memory with scores
    true_cell = row_of * num_entities + true_col  # [Q]
    true = flat[true_cell]
    # A finite row sum means every score in the row is finite (a sum of finite float32 scores
    # only overflows beyond ~1e38).
    finite_rows = torch.isfinite(scores.sum(dim=1))  # [U]
    keep = None  # [U, E] bool, built only for rows with non-finite scores
    if known is None:
        filtered = self_masked = torch.zeros_like(row_of)
    elif isinstance(known, Tensor):  # an additive mask [U, E] (0 / -inf) and its row counts
        if known_count is None:
            raise ValueError("known_count: required with an additive known mask")
        scores.add_(known)  # on finite rows: -inf exactly at the known cells
        # [Q]: the filter knows the evaluated triple.
        self_masked = (known.view(-1)[true_cell] == float("-inf")).long()
        filtered = known_count[row_of] - self_masked
        keep = known
    else:
        filter_row, filter_col = known
        cells = filter_row * num_entities + filter_col
        flat.index_fill_(0, cells, float("-inf"))
        # [Q]: the filter knows the evaluated triple (its finite true cell now reads -inf).
        self_masked = ((flat[true_cell] == float("-inf")) & (true != float("-inf"))).long()
        filtered = torch.bincount(filter_row, minlength=num_rows)[row_of] - self_masked
        keep = cells
    total, magnitude = _sign_sums(scores, row_of, true)
    greater = ((total + magnitude) / 2).long()
    optimistic = greater + 1
    pessimistic = greater + (num_entities - magnitude.long()) + self_masked
    options = num_entities - filtered
    bad = ~finite_rows[row_of]  # [Q]
    nonfinite = torch.zeros_like(bad)  # [Q]
    if bool(bad.any()):
        nonfinite[bad] = _count_non_finite(
            scores, row_of, true_col, true, keep, bad, optimistic, pessimistic, options
        )
    return optimistic, pessimistic, options, nonfinite


#: Elements of the ``[rows, E]`` sign block :func:`_sign_sums` reuses (2 MiB in float32).
SIGN_BLOCK = 1 << 19


def _sign_sums(scores: Tensor, row_of: Tensor, true: Tensor) -> tuple[Tensor, Tensor]:
    r""":math:`\sum_j \sigma_{ij}` and :math:`\sum_j |\sigma_{ij}|` per query ``i``, ``[Q]`` each.

    :math:`\sigma_{ij} = \operatorname{sign}(s_{\mathrm{row}(i), j} - s^*_i)`, computed a few
    rows at a time in one reused block of at most :data:`SIGN_BLOCK` elements instead of a
    ``[Q, E]`` matrix beside the scores (on FB15k-237 that matrix was as large as the scores).
    Sums of +-1 are exact integers in float32 up to :math:`2^{24}` (not in a half-precision
    dtype), and in float64 beyond.
    """
    num_queries, num_entities = row_of.numel(), scores.size(1)
    acc = torch.float32 if num_entities < 2**24 else torch.float64
    total = scores.new_empty(num_queries, dtype=acc)
    magnitude = scores.new_empty(num_queries, dtype=acc)
    step = max(1, min(num_queries, SIGN_BLOCK // max(num_entities, 1)))
    block = scores.new_empty(step, num_entities)
    for lo in range(0, num_queries, step):
        hi = min(lo + step, num_queries)
        sign = torch.index_select(scores, 0, row_of[lo:hi], out=block[: hi - lo])
        sign.sub_(true[lo:hi].unsqueeze(1)).sign_()
        torch.sum(sign, dim=1, dtype=acc, out=total[lo:hi])
        torch.sum(sign.abs_(), dim=1, dtype=acc, out=magnitude[lo:hi])
    return total, magnitude


def _count_non_finite(
    scores: Tensor,
    row_of: Tensor,
    true_col: Tensor,
    true: Tensor,
    known: Tensor | None,
    bad: Tensor,
    optimistic: Tensor,
    pessimistic: Tensor,
    options: Tensor,
) -> Tensor:
    """Rank the ``bad`` queries by comparisons: filtered cells out, the true one back in.

    ``known`` is None, an additive known-cell mask ``[U, E]`` or flat known-cell indices.
    Returns which of the ``bad`` queries are non-finite (``[Q_bad]`` bool); those get the
    worst rank.
    """
    num_rows, num_entities = scores.shape
    if known is not None and known.is_floating_point():  # an additive mask
        keep = known.index_select(0, row_of[bad]) == 0  # [Q_bad, E]
    else:
        keep = torch.ones(num_rows * num_entities, dtype=torch.bool, device=scores.device)
        if known is not None:
            keep[known] = False
        keep = keep.view(num_rows, num_entities)[row_of[bad]]  # [Q_bad, E]
    values = scores.index_select(0, row_of[bad])
    rows = torch.arange(values.size(0), device=scores.device)
    keep[rows, true_col[bad]] = True
    values[rows, true_col[bad]] = true[bad]
    threshold = true[bad].unsqueeze(1)
    # Unfiltered cells keep the raw score (an additive mask adds 0 there), so NaN / +inf in
    # them is the model's; a filtered cell may read NaN (+inf - inf) and is ignored.
    broken = ((torch.isnan(values) | (values == float("inf"))) & keep).any(dim=1)
    broken |= ~torch.isfinite(threshold[:, 0])  # [Q_bad]
    worst = keep.sum(dim=1)  # [Q_bad] unfiltered candidates, the true one included
    opt = torch.where(broken, worst, ((values > threshold) & keep).sum(dim=1) + 1)
    pes = torch.where(broken, worst, ((values >= threshold) & keep).sum(dim=1))
    optimistic[bad] = opt
    pessimistic[bad] = pes
    options[bad] = torch.where(broken, worst, (torch.isfinite(values) & keep).sum(dim=1))
    return broken


def _harmonic(options: Tensor, power: int) -> Tensor:
    r"""Generalised harmonic numbers :math:`H^{(p)}_C = \sum_{i \le C} i^{-p}` for each C."""
    top = int(options.max()) if options.numel() else 0
    table = torch.zeros(top + 1, dtype=torch.float64, device=options.device)
    if top:
        table[1:] = (
            torch.arange(1, top + 1, dtype=torch.float64, device=options.device)
            .pow(-power)
            .cumsum(0)
        )
    return table[options]


def rank_summary(ranks: Tensor, options: Tensor, ks: tuple[int, ...]) -> dict[str, float | None]:
    r"""Return MR, MRR, Hits@k and their adjusted and z-scored versions for one set of ranks.

    An adjusted metric :math:`(M - \mathbb{E}[M]) / (1 - \mathbb{E}[M])` and a z-score
    :math:`\pm(M - \mathbb{E}[M]) / \sqrt{\mathbb{V}[M]}` divide by zero when a random ranker
    is certain to score the best value: ``adjusted_hits_at_k`` and ``z_hits_at_k`` are
    undefined (None) when every query has at most k candidates (:math:`\mathbb{E}[\mathrm{
    Hits@k}] = 1`), and ``amri``, ``adjusted_mrr``, ``z_mr`` and ``z_mrr`` when every query
    has one candidate (:math:`\mathbb{E}[\mathrm{MR}] = \mathbb{E}[\mathrm{MRR}] = 1`). They
    are None (JSON null), never NaN; ``mr``, ``amr``, ``mrr`` and ``hits_at_k`` always have a
    value (with at least one rank).

    Shapes:
        ranks: ``[n]`` (float64); options: ``[n]`` (int64).
    """
    n = ranks.numel()
    out: dict[str, float | None] = {"count": float(n)}
    if n == 0:
        return out
    c = options.double()
    h1 = _harmonic(options, 1)
    h2 = _harmonic(options, 2)
    # Guard C = 0 (every candidate filtered or non-finite): such rows get expectation 1.
    safe_c = c.clamp(min=1.0)

    mr, e_mr = float(ranks.mean()), float(((c + 1) / 2).mean())
    var_mr = float(((c.square() - 1) / 12).sum()) / n**2
    out["mr"] = mr
    out["amr"] = mr / e_mr
    out["amri"] = _adjust(mr, e_mr, best=1.0)
    out["z_mr"] = _zscore(e_mr, mr, var_mr)

    rr = ranks.reciprocal()
    mrr, e_rr = float(rr.mean()), h1 / safe_c  # [n]
    var_rr = float((h2 / safe_c - e_rr.square()).sum()) / n**2
    out["mrr"] = mrr
    out["adjusted_mrr"] = _adjust(mrr, float(e_rr.mean()), best=1.0)
    out["z_mrr"] = _zscore(mrr, float(e_rr.mean()), var_rr)

    for k in ks:
        hits = float((ranks <= k).double().mean())
        p = (k / safe_c).clamp(max=1.0)  # [n]
        var_hits = float((p * (1 - p)).sum()) / n**2
        out[f"hits_at_{k}"] = hits
        out[f"adjusted_hits_at_{k}"] = _adjust(hits, float(p.mean()), best=1.0)
        out[f"z_hits_at_{k}"] = _zscore(hits, float(p.mean()), var_hits)
    return out


def _adjust(value: float, expected: float, *, best: float) -> float | None:
    """``(value - E) / (best - E)``: 1 for a perfect model, 0 in expectation for a random one.

    None (undefined) where ``E == best``: a random ranker is then certain to be perfect (every
    query has at most k candidates for Hits@k, one for MR and MRR).
    """
    span = best - expected
    return (value - expected) / span if span != 0 else None


def _zscore(larger: float, smaller: float, variance: float) -> float | None:
    """``(larger - smaller) / sd``, None (undefined) where the variance is 0 (as for _adjust)."""
    return (larger - smaller) / math.sqrt(variance) if variance > 0 else None
