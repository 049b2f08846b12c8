r"""Cut distance between graphs and step graphons of different sizes, with honest bounds.

.. math::
    \delta_\square(U, W) = \inf_{\varphi} \|U - W^\varphi\|_\square

over measure-preserving maps :math:`\varphi` (Lovász, *Large Networks and Graph Limits*, AMS
2012, Ch. 8). Two inputs (graphs ``[N, N]`` with values in :math:`[0, 1]`, or step graphons)
are compared through their step functions on the common refinement of their intervals, after
an alignment (block reordering) of each:

- ``"identity"``: as given;
- ``"degree"``: blocks sorted by degree :math:`d_i = \sum_j \lambda_j B_{ij}`, decreasing;
- ``"permutations"``: the second input's blocks in every order (few blocks only), best kept.

Any alignment gives :math:`\|U - W^\varphi\|_\square \ge \delta_\square`, so the computed
norm's ``upper`` bound is an upper bound on :math:`\delta_\square`. The ``lower`` bound comes
from the counting lemma, :math:`|t(F, U) - t(F, W)| \le |E(F)|\,\delta_\square(U, W)` for
values in :math:`[0, 1]` (Lovász 2012, Lemma 10.23), over the edge, 2-path, 3-star, triangle
and 4-cycle.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import torch
from torch import Tensor

from graphdata.errors import GraphDataError
from graphon._validation import check_adjacency, check_choice
from graphon.cut import EXACT_MAX_NODES, cut_norm
from graphon.graphons import StepGraphon
from graphon.homomorphism import hom_density

__all__ = ["CutDistanceResult", "cut_distance"]

_LOWER_PATTERNS = ("edge", "path3", "star3", "triangle", "square")
#: Most block orders tried by ``align="permutations"``.
MAX_PERMUTATIONS = 5040


@dataclass(frozen=True)
class CutDistanceResult:
    r"""Bounds on :math:`\delta_\square` and the aligned cut norm they come from.

    Attributes:
        value: :math:`\|U - W^\varphi\|_\square` for the chosen alignment :math:`\varphi` (exact
            when ``method == "exact"``, else the SDP's attained lower bound of it).
        lower: A rigorous lower bound on :math:`\delta_\square` (counting lemma).
        upper: A rigorous upper bound on :math:`\delta_\square` (the aligned norm's bound).
        method: ``"exact"`` or ``"sdp"`` (how the aligned cut norm was computed).
        order: The second input's block order that was used.
    """

    value: float
    lower: float
    upper: float
    method: str
    order: tuple[int, ...]


def _as_step(x: Tensor | StepGraphon, name: str) -> tuple[Tensor, Tensor]:
    if isinstance(x, StepGraphon):
        return x.probs, x.measures
    checked, batched = check_adjacency(x, name=name, unit=True)
    if batched:
        raise GraphDataError(f"{name}: expected one graph [N, N] or a StepGraphon")
    a = checked[0].double()
    return a, torch.full((a.size(0),), 1.0 / a.size(0), dtype=torch.float64, device=a.device)


def _by_degree(probs: Tensor, lam: Tensor) -> list[int]:
    degree = (probs @ lam).tolist()  # one transfer, then a stable sort on the host
    return sorted(range(len(degree)), key=lambda i: (-degree[i], i))


def _difference(p1: Tensor, l1: Tensor, p2: Tensor, l2: Tensor) -> tuple[Tensor, Tensor]:
    """The difference of two step functions on their common refinement (cells, measures)."""
    cuts = torch.unique(torch.cat([torch.cumsum(l1, 0), torch.cumsum(l2, 0)]).clamp(0, 1))
    cuts = torch.cat([cuts.new_zeros(1), cuts])
    cuts[-1] = 1.0
    lengths = cuts[1:] - cuts[:-1]
    keep = lengths > 1e-12
    mids = ((cuts[1:] + cuts[:-1]) / 2)[keep]
    i1 = torch.bucketize(mids, torch.cumsum(l1, 0)[:-1], right=True)
    i2 = torch.bucketize(mids, torch.cumsum(l2, 0)[:-1], right=True)
    diff = p1[i1][:, i1] - p2[i2][:, i2]  # [cells, cells]
    w = lengths[keep]
    return diff, w / w.sum()


def _lower(p1: Tensor, l1: Tensor, p2: Tensor, l2: Tensor) -> float:
    """The counting-lemma lower bound from a few small patterns (module docstring)."""
    best = 0.0
    for name in _LOWER_PATTERNS:
        t1 = float(hom_density(name, p1, node_weights=l1))
        t2 = float(hom_density(name, p2, node_weights=l2))
        edges = {"edge": 1, "path3": 2, "star3": 3, "triangle": 3, "square": 4}[name]
        best = max(best, abs(t1 - t2) / edges)
    return best


def cut_distance(
    first: Tensor | StepGraphon,
    second: Tensor | StepGraphon,
    *,
    align: str = "degree",
    method: str = "auto",
    seed: int | None = 0,
) -> CutDistanceResult:
    r"""Bounds on the cut distance :math:`\delta_\square` of two graphs / step graphons.

    Args:
        first: A graph ``[N1, N1]`` with values in :math:`[0, 1]` or a :class:`StepGraphon`.
        second: A graph ``[N2, N2]`` or a :class:`StepGraphon` (sizes may differ).
        align: ``"degree"`` (default), ``"identity"`` or ``"permutations"`` (at most
            :data:`MAX_PERMUTATIONS` orders of ``second``'s blocks, i.e. 7 blocks, and at most
            15 blocks in both inputs together, so that each cut norm is exact).
        method: Cut-norm method for the aligned difference: ``"auto"`` (default), ``"exact"``
            or ``"sdp"`` (see :func:`graphon.cut.cut_norm`).
        seed: Seed of the SDP. Default ``0``.

    Returns:
        A :class:`CutDistanceResult` with ``lower <= delta_cut <= upper``.

    Examples:
        >>> a = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
        >>> r = cut_distance(a, StepGraphon(torch.tensor([[0.0, 1.0], [1.0, 0.0]])))
        >>> r.upper, r.lower
        (0.0, 0.0)
    """
    check_choice("align", align, ("identity", "degree", "permutations"))
    check_choice("method", method, ("auto", "exact", "sdp"))
    p1, l1 = _as_step(first, "first")
    p2, l2 = _as_step(second, "second")
    if p2.device != p1.device:
        raise GraphDataError(
            f"second: expected the device of first ({p1.device}), got {p2.device}; move one"
        )
    if align == "identity":
        orders = [tuple(range(len(l2)))]
    elif align == "degree":
        o1 = _by_degree(p1, l1)
        p1, l1 = p1[o1][:, o1], l1[o1]
        orders = [tuple(_by_degree(p2, l2))]
    else:
        if math.factorial(len(l2)) > MAX_PERMUTATIONS:
            raise GraphDataError(
                f"align: 'permutations' tries every order of the second input's {len(l2)} "
                f"blocks ({math.factorial(len(l2))} > {MAX_PERMUTATIONS}); use align='degree'"
            )
        if len(l1) + len(l2) - 1 > 14:
            raise GraphDataError(
                f"align: 'permutations' computes an exact cut norm per order, so it needs at "
                f"most 15 blocks in both inputs together, got {len(l1)} + {len(l2)}; use "
                "align='degree'"
            )
        orders = list(itertools.permutations(range(len(l2))))
    best = None
    for order in orders:
        idx = list(order)
        diff, w = _difference(p1, l1, p2[idx][:, idx], l2[idx])
        use = method
        if method == "auto":
            use = "exact" if diff.size(0) <= min(14, EXACT_MAX_NODES) else "sdp"
        res = cut_norm(diff, node_weights=w, method=use, seed=seed)
        if best is None or res.upper < best[0].upper:
            best = (res, order)
    res, order = best  # type: ignore[misc]
    lower = _lower(p1, l1, p2, l2)
    return CutDistanceResult(res.value, lower, res.upper, res.method, tuple(order))
