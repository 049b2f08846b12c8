r"""Rank computation and rank-based metrics (private helpers of :mod:`kg.evaluation`).

Definitions follow PyKEEN (``evaluation/ranks.py``, ``metrics/ranking.py``) and REFERENCES.md A.3:
filtered scores are NaN, the true entity's score is written back, and over the remaining scores

.. math::
    r^{opt} = \#\{s > s^*\} + 1, \quad r^{pes} = \#\{s \ge s^*\}, \quad
    r^{real} = \tfrac12 (r^{opt} + r^{pes}), \quad C = \#\{s \text{ finite}\}.

Expectations under uniformly random scores (Berrendorf et al., "Interpretable and Fair
Comparison of Link Prediction or Entity Alignment Methods", arXiv 2002.06914; Hoyt et al., "A
Unified Framework for Rank-based Evaluation Metrics for Link Prediction", arXiv 2203.07544):
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
    scores: Tensor, true_index: Tensor, filter_row: Tensor | None, filter_col: Tensor | None
) -> tuple[Tensor, Tensor, Tensor]:
    """Return (optimistic, pessimistic, options) per row; ``scores`` is modified in place.

    ``filter_row``/``filter_col`` hold distinct cells (a :class:`FilterIndex` gives them).

    Shapes:
        scores: ``[B, E]``; true_index: ``[B]``; filter_row, filter_col: ``[nnz]``;
        outputs ``[B]`` each (int64).
    """
    batch, num_entities = scores.shape
    true_col = true_index.unsqueeze(1)  # [B, 1]
    true = scores.gather(1, true_col)  # [B, 1]: gather/scatter beat advanced indexing here
    # A finite row sum means every score in the row is finite (a sum of finite float32 scores
    # only overflows beyond ~1e38): then the options follow from the filter counts, sparing an
    # isfinite pass over [B, E]. Other rows are counted exactly below.
    finite_rows = torch.isfinite(scores.sum(dim=1))  # [B]
    filtered = torch.zeros(batch, dtype=torch.long, device=scores.device)
    if filter_row is not None and filter_row.numel():
        if scores.is_contiguous():
            flat = filter_row * num_entities + filter_col  # [nnz] cells of the row-major matrix
            scores.view(-1).index_fill_(0, flat, float("nan"))
        else:
            scores[filter_row, filter_col] = float("nan")
        scores.scatter_(1, true_col, true)  # PyKEEN writes the true score back after masking
        others = filter_col != true_index[filter_row]
        filtered = torch.bincount(filter_row[others], minlength=batch)
    # int32 sums of the comparison masks are about twice as fast as the default int64 on CPU.
    optimistic = (scores > true).sum(dim=1, dtype=torch.int32).long() + 1
    pessimistic = (scores >= true).sum(dim=1, dtype=torch.int32).long()
    options = num_entities - filtered
    if not bool(finite_rows.all()):
        bad = ~finite_rows
        options[bad] = torch.isfinite(scores[bad]).sum(dim=1)
    return optimistic, pessimistic, options


def _harmonic(options: Tensor, power: int) -> Tensor:
    r"""Generalised harmonic numbers :math:`H^{(p)}_C = \sum_{i \le C} i^{-p}` for each C."""
    top = int(options.max()) if options.numel() else 0
    table = torch.zeros(top + 1, dtype=torch.float64, device=options.device)
    if top:
        table[1:] = torch.arange(1, top + 1, dtype=torch.float64, device=options.device).pow(
            -power
        ).cumsum(0)
    return table[options]


def rank_summary(ranks: Tensor, options: Tensor, ks: tuple[int, ...]) -> dict[str, float]:
    """Return MR, MRR, Hits@k and their adjusted and z-scored versions for one set of ranks.

    Shapes:
        ranks: ``[n]`` (float64); options: ``[n]`` (int64).
    """
    n = ranks.numel()
    out: dict[str, float] = {"count": float(n)}
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


def _adjust(value: float, expected: float, *, best: float) -> float:
    """``(value - E) / (best - E)``: 1 for a perfect model, 0 in expectation for a random one."""
    span = best - expected
    return (value - expected) / span if span != 0 else math.nan


def _zscore(larger: float, smaller: float, variance: float) -> float:
    """``(larger - smaller) / sd``, NaN where the variance is 0 (every C = 1)."""
    return (larger - smaller) / math.sqrt(variance) if variance > 0 else math.nan
