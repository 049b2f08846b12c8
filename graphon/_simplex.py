r"""Private: homomorphism densities of graphons kinked on the diagonal, over ordered simplices.

.. math::
    t\big((F, d), (W, f)\big) = \sum_{\pi \in S_k} \int_{0 < y_1 < \dots < y_k < 1}
    \prod_v f(y_{\pi(v)})^{d_v} \prod_{uv \in E(F)} W(y_{\pi(u)}, y_{\pi(v)})^{m_{uv}}\, dy,

the cube cut along the hyperplanes :math:`x_u = x_v`. Off the diagonal a function of
:math:`\max`, :math:`\min` or :math:`|x - y|` is smooth, so on each simplex the integrand is, and
a Gauss rule converges exponentially instead of as :math:`q^{-2}`. Orderings that relabel
:math:`(F, d)` into the same sorted pattern have equal integrals and are summed once with their
count (one class for :math:`K_k`). With breakpoints :math:`0 = c_0 < \dots < c_P = 1` (lines
:math:`x = c_j` where :math:`W` or :math:`f` jumps), the simplex is cut further by which panel
each :math:`y_i` lies in: a monotone panel assignment, whose variables sharing a panel form a
smaller ordered simplex in it. A sorted simplex :math:`0 < s_1 < \dots < s_g < 1` is mapped from
the cube by :math:`s_g = t_g`, :math:`s_j = s_{j+1} t_j` (Jacobian :math:`\prod_j s_{j+1}`; Duffy,
"Quadrature over a pyramid or cube of integrands with a singularity at a vertex", SIAM J. Numer.
Anal. 19, 1982) with a :math:`q`-point Gauss-Legendre rule per axis.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Iterator

import numpy as np
import torch
from torch import Tensor

from graphon.patterns import Pattern

__all__: list[str] = []

_F64 = torch.float64
#: Points of one evaluation chunk (memory: about 8 bytes x (pairs + k + 2) per point).
_CHUNK = 2**18

SortedPattern = tuple[tuple[tuple[int, int, int], ...], tuple[tuple[int, ...], ...] | None]


def sorted_classes(pattern: Pattern) -> Counter[SortedPattern]:
    """The sorted patterns :math:`(F, d)` relabelled by every ordering, with their counts."""
    k = pattern.num_vertices
    classes: Counter[SortedPattern] = Counter()
    for perm in itertools.permutations(range(k)):  # vertex v sits at sorted position perm[v]
        edges = tuple(sorted((*sorted((perm[u], perm[v])), m) for u, v, m in pattern.edges))
        exps = None
        if pattern.exponents is not None:
            at: list[tuple[int, ...]] = [()] * k
            for v in range(k):
                at[perm[v]] = pattern.exponents[v]
            exps = tuple(at)
        classes[(edges, exps)] += 1  # type: ignore[index]
    return classes


def _simplex(g: int, q: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Sorted points ``[q^g, g]`` of :math:`0 < s_1 < \dots < s_g < 1` and their weights."""
    nodes, weights = np.polynomial.legendre.leggauss(q)
    t = np.stack(np.meshgrid(*[(nodes + 1) / 2] * g, indexing="ij"), -1).reshape(-1, g)
    w = np.prod(np.stack(np.meshgrid(*[weights / 2] * g, indexing="ij"), -1), -1).reshape(-1)
    s = np.empty_like(t)
    s[:, g - 1] = t[:, g - 1]
    for j in range(g - 2, -1, -1):
        s[:, j] = s[:, j + 1] * t[:, j]
        w = w * s[:, j + 1]
    return s, w


def num_points(k: int, q: int, panels: int) -> int:
    r"""Points of the rule: :math:`\binom{P + k - 1}{k}` panel assignments times :math:`q^k`."""
    return math.comb(panels + k - 1, k) * q**k


def _regions(
    k: int, q: int, cuts: list[float], warp: Callable | None
) -> Iterator[tuple[Tensor, Tensor]]:
    """(sorted points ``[M, k]``, weights ``[M]``) per monotone panel assignment.

    ``warp(u) -> (x, dx/du)``, a monotone map of ``[0, 1]`` applied to every coordinate within
    its panel (it keeps the order, so it maps the simplex onto itself).
    """
    panels = len(cuts) - 1
    rules: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for assignment in itertools.combinations_with_replacement(range(panels), k):
        groups = [(p, len(list(run))) for p, run in itertools.groupby(assignment)]
        parts_y, parts_w = [], []
        for p, g in groups:
            if g not in rules:
                rules[g] = _simplex(g, q)
                if warp is not None:
                    x, slope = warp(torch.from_numpy(rules[g][0]))
                    rules[g] = (x.numpy(), rules[g][1] * slope.prod(-1).numpy())
            s, w = rules[g]
            a, b = cuts[p], cuts[p + 1]
            parts_y.append(a + (b - a) * s)
            parts_w.append(w * (b - a) ** g)
        y, w = parts_y[0], parts_w[0]
        for py, pw in zip(parts_y[1:], parts_w[1:]):  # cartesian product of the groups
            y = np.concatenate([np.repeat(y, len(py), axis=0), np.tile(py, (len(y), 1))], axis=1)
            w = np.outer(w, pw).reshape(-1)
        yield torch.from_numpy(y), torch.from_numpy(w)


def simplex_density(
    classes: Counter[SortedPattern],
    k: int,
    graphon: Callable[[Tensor, Tensor], Tensor],
    signal: Callable[[Tensor], Tensor] | None,
    q: int,
    cuts: list[float],
    warp: Callable | None,
    device: torch.device | str,
    check: Callable[[Tensor, Tensor, Tensor], None],
) -> float:
    """The module's sum at ``q`` nodes per axis; ``check(values, x, y)`` vets graphon values.

    ``warp``: a monotone map of ``[0, 1]`` onto itself, ``u -> (x, dx/du)``, or ``None``.
    """
    pairs = sorted({(a, b) for edges, _ in classes for a, b, _ in edges})
    # Signal exponents per class as (sorted position, powers [C]), built once for all chunks.
    weights = [
        (
            edges,
            count,
            [
                (a, torch.tensor(e, dtype=_F64, device=device))
                for a, e in enumerate(exps or ())
                if any(e)
            ],
        )
        for (edges, exps), count in classes.items()
    ]
    total = 0.0
    for y_all, w_all in _regions(k, q, cuts, warp):
        for start in range(0, len(w_all), _CHUNK):
            y = y_all[start : start + _CHUNK].to(device)  # [M, k] sorted points
            w = w_all[start : start + _CHUNK].to(device)  # [M]
            values = {}
            for a, b in pairs:
                v = graphon(y[:, a], y[:, b]).double()
                check(v, y[:, a], y[:, b])
                values[(a, b)] = v
            sig = None if signal is None else signal(y.reshape(-1)).reshape(len(w), k, -1)
            for edges, count, powers in weights:
                term = w
                for a, b, m in edges:
                    term = term * (values[(a, b)] if m == 1 else values[(a, b)].pow(m))
                for a, p in powers:
                    term = term * sig[:, a].pow(p).prod(-1)  # type: ignore[index]
                total += count * float(term.sum())
    return total
