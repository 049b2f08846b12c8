r"""Independent oracle values of graphon densities :math:`t((F, d), (W, f))`, by exact integration.

Issue #20: reference values that share nothing with the library's numerical methods, for the
test ``tests/graphon/test_oracles.py`` and the ``oracle`` part of ``bench_homomorphism``.

.. math::
    t\big((F, d), (W, f)\big) = \int_{[0,1]^k} \prod_v f(x_v)^{d_v}
    \prod_{uv \in E(F)} W(x_u, x_v)^{m_{uv}}\, dx

(Lovász, *Large Networks and Graph Limits*, AMS 2012, Section 7.2; signal weights as in
REFERENCES B.2), and the density of a weighted graph :math:`A_{ij} = W(x_i, x_j)`,
:math:`t = n^{-k} \sum_{\varphi: V \to [n]} \prod_v x_{\varphi(v)}^{d_v} \prod_{uv}
A_{\varphi(u)\varphi(v)}^{m_{uv}}` (REFERENCES B.2, "on a graph-signal").

- **Integral entries**: :math:`[0,1]^k` is split into regions on which the integrand is a sum of
  terms :math:`c\, x^\alpha e^{\beta \cdot x}` (rational :math:`c`, integer :math:`\alpha,
  \beta`): the :math:`k!` simplices :math:`x_{s_1} < \dots < x_{s_k}` for graphons kinked on
  the diagonal (there :math:`\max`, :math:`\min`, :math:`|x - y|` are linear), the boxes between
  the breakpoints for step and jump graphons, the cube for polynomials. Orderings that give the
  same integrand in rank variables are integrated once. Each region is integrated iteratively in
  exact rational arithmetic with :math:`\int_0^h x^a e^{bx} dx = e^{bh} \sum_{i=0}^{a} (-1)^i
  \frac{a!}{(a-i)!} \frac{h^{a-i}}{b^{i+1}} - (-1)^a \frac{a!}{b^{a+1}}` (:math:`b \ne 0`). The
  value is :math:`\sum_j c_j e^j`, :math:`c_j \in \mathbb{Q}`, printed to 30 digits by sympy.
- **Grid entries**: the midpoint grid :math:`x_i = (i + 1/2)/n` (``latents="midpoint"``, no grid
  point on a breakpoint), rational :math:`A_{ij}`; the sum is an exact integer after clearing
  denominators, computed by variable elimination over numpy arrays of Python ints.

Checks on every run: ``sympy.integrate`` on the resolved integrand of every region (an
independent integrator) for the patterns with at most 3 vertices and for K4 on the kinked
graphons without a signal; the closed form
:math:`\prod_v \int x^{\deg v} f^{d_v}` for :math:`W = xy`, integral and grid; the elimination
against brute force over all :math:`n^k` maps at :math:`n = 5`.

Run by hand (not by tests): ``.venv/bin/python -m benchmarks.graphon_oracles [--grid-n 50]``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

OUT = Path(__file__).resolve().parents[1] / "tests" / "graphon" / "data" / "graphon_oracles.json"
DIGITS = 30
F = Fraction

#: Pattern name -> (vertices, edges (u, v, multiplicity)); diamond = K4 minus the edge (2, 3),
#: vertices 0 and 1 of degree 3 (not graphon.patterns' labelling).
PATTERNS: dict[str, tuple[int, list[tuple[int, int, int]]]] = {
    "edge": (2, [(0, 1, 1)]),
    "double_edge": (2, [(0, 1, 2)]),
    "path3": (3, [(0, 1, 1), (1, 2, 1)]),
    "star3": (4, [(0, 1, 1), (0, 2, 1), (0, 3, 1)]),
    "triangle": (3, [(0, 1, 1), (0, 2, 1), (1, 2, 1)]),
    "square": (4, [(0, 1, 1), (0, 3, 1), (1, 2, 1), (2, 3, 1)]),
    "diamond": (4, [(0, 1, 1), (0, 2, 1), (0, 3, 1), (1, 2, 1), (1, 3, 1)]),
    "k4": (4, [(0, 1, 1), (0, 2, 1), (0, 3, 1), (1, 2, 1), (1, 3, 1), (2, 3, 1)]),
    "cycle5": (5, [(0, 1, 1), (0, 4, 1), (1, 2, 1), (2, 3, 1), (3, 4, 1)]),
}

STEP_BREAKS = (F(3, 10), F(33, 50))  # 0.3, 0.66: even hundredths, off the midpoint grid
STEP_B = [[F(9, 10), F(1, 5), F(1, 2)], [F(1, 5), F(3, 5), F(1, 10)], [F(1, 2), F(1, 10), F(4, 5)]]
JUMP_BREAK = F(2, 5)


def _step3(x: Tensor, y: Tensor) -> Tensor:
    b = torch.tensor([[float(v) for v in row] for row in STEP_B], dtype=x.dtype, device=x.device)
    bx = (x >= 0.3).long() + (x >= 0.66).long()  # block index 0, 1, 2
    by = (y >= 0.3).long() + (y >= 0.66).long()
    return b[bx, by]


#: The user functions the library is given (plain torch code, no declared structure).
TORCH_GRAPHONS: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "xy": lambda x, y: x * y,
    "mean": lambda x, y: (x + y) / 2,
    "affine": lambda x, y: (x + y) / 4 + 0.25,
    "step3": _step3,
    "one_minus_max": lambda x, y: 1 - torch.maximum(x, y),
    "exp_abs3": lambda x, y: torch.exp(-3 * (x - y).abs()),
    "bridge": lambda x, y: torch.minimum(x, y) * (1 - torch.maximum(x, y)),
    "jump": lambda x, y: (x * y + (x < 0.4).to(x.dtype) + (y < 0.4).to(x.dtype)) / 3,
}
TORCH_SIGNALS: dict[str, Callable[[Tensor], Tensor]] = {"x": lambda x: x, "1+x": lambda x: 1 + x}
SIGNALS: dict[str, dict[int, Fraction]] = {"x": {1: F(1)}, "1+x": {0: F(1), 1: F(1)}}

Poly2 = dict[tuple[int, int], Fraction]  # x^a y^b -> c
Ordered = dict[tuple[tuple[int, int], tuple[int, int]], Fraction]  # lo^a hi^b e^(p lo + q hi)
Edges = list[tuple[int, int, int]]
Exponents = list[int] | None


@dataclass(frozen=True)
class ExactGraphon:
    """One graphon of the table: its tag, exact pieces and the sympy formula (for the checks).

    ``breaks`` split each axis into intervals; ``local(i, j)`` is W on box ``i x j`` as a
    polynomial (step, jump, polynomial), or ``ordered`` is W on ``lo < hi`` (kinked).
    """

    key: str
    tag: str
    sympy_text: str
    breaks: tuple[Fraction, ...] = ()
    local: Callable[[int, int], Poly2] | None = None
    ordered: Ordered = field(default_factory=dict)


def _const(c: Fraction) -> Poly2:
    return {(0, 0): c}


def _indicator(lo: str, hi: str, var: str) -> str:
    return f"Piecewise((1, ({var} >= {lo}) & ({var} < {hi})), (0, True))"


def _step_text() -> str:
    cuts = ["0", *(str(c) for c in STEP_BREAKS), "2"]
    terms = []
    for i, j in itertools.product(range(3), repeat=2):
        ix, iy = _indicator(cuts[i], cuts[i + 1], "x"), _indicator(cuts[j], cuts[j + 1], "y")
        terms.append(f"{STEP_B[i][j]}*{ix}*{iy}")
    return " + ".join(terms)


GRAPHONS: dict[str, ExactGraphon] = {
    "xy": ExactGraphon("xy", "polynomial", "x*y", local=lambda i, j: {(1, 1): F(1)}),
    "mean": ExactGraphon(
        "mean", "polynomial", "(x + y)/2", local=lambda i, j: {(1, 0): F(1, 2), (0, 1): F(1, 2)}
    ),
    "affine": ExactGraphon(
        "affine",
        "polynomial",
        "(x + y)/4 + 1/4",
        local=lambda i, j: {(1, 0): F(1, 4), (0, 1): F(1, 4), (0, 0): F(1, 4)},
    ),
    "step3": ExactGraphon(
        "step3", "step-as-function", _step_text(), STEP_BREAKS, lambda i, j: _const(STEP_B[i][j])
    ),
    "one_minus_max": ExactGraphon(
        "one_minus_max",
        "kinked",
        "1 - Max(x, y)",
        ordered={((0, 0), (0, 0)): F(1), ((0, 1), (0, 0)): F(-1)},
    ),
    "exp_abs3": ExactGraphon(
        "exp_abs3", "kinked", "exp(-3*Abs(x - y))", ordered={((0, 0), (3, -3)): F(1)}
    ),
    "bridge": ExactGraphon(
        "bridge",
        "kinked",
        "Min(x, y)*(1 - Max(x, y))",
        ordered={((1, 0), (0, 0)): F(1), ((1, 1), (0, 0)): F(-1)},
    ),
    "jump": ExactGraphon(
        "jump",
        "jump",
        "(x*y + Piecewise((1, x < 2/5), (0, True)) + Piecewise((1, y < 2/5), (0, True)))/3",
        (JUMP_BREAK,),
        lambda i, j: {(1, 1): F(1, 3), (0, 0): F((i == 0) + (j == 0), 3)},
    ),
}
GRID_GRAPHONS = ("xy", "one_minus_max", "step3")


def signal_configs(k: int) -> list[tuple[str, list[int] | None]]:
    """The signal configurations of one (pattern, graphon): none, x, 1+x, 1+x with d_0 = 2."""
    ones = [1] * k
    return [("none", None), ("x", ones), ("1+x", ones), ("1+x", [2] + [1] * (k - 1))]


# ---- exact term algebra: {(alpha, beta, e): c} means c * x^alpha * exp(beta . x + e) ------------

Key = tuple[tuple[int, ...], tuple[int, ...], int]
Terms = dict[Key, Fraction]


def _mul(p: Terms, q: Terms) -> Terms:
    out: Terms = defaultdict(Fraction)
    for (a1, b1, e1), c1 in p.items():
        for (a2, b2, e2), c2 in q.items():
            key = (
                tuple(x + y for x, y in zip(a1, a2)),
                tuple(x + y for x, y in zip(b1, b2)),
                e1 + e2,
            )
            out[key] += c1 * c2
    return {k: c for k, c in out.items() if c}


def _power(p: Terms, m: int, k: int) -> Terms:
    out: Terms = {((0,) * k, (0,) * k, 0): F(1)}
    for _ in range(m):
        out = _mul(out, p)
    return out


def _lift(k: int, slots: tuple[int, ...], local: dict) -> Terms:
    """Terms in k variables from local terms ((alpha per slot), (beta per slot)) -> c."""
    out: Terms = {}
    for (alpha, beta), c in local.items():
        a, b = [0] * k, [0] * k
        for s, ai, bi in zip(slots, alpha, beta):
            a[s] += ai
            b[s] += bi
        out[(tuple(a), tuple(b), 0)] = out.get((tuple(a), tuple(b), 0), F(0)) + c
    return out


def _integrate_to(terms: Terms, j: int, upper: int | None) -> Terms:
    r"""Integrate variable ``j`` over ``[0, x_upper]`` (``upper=None``: over ``[0, 1]``)."""
    out: Terms = defaultdict(Fraction)

    def put(alpha: list[int], beta: list[int], e: int, h_pow: int, h_exp: int, c: Fraction) -> None:
        a, b = list(alpha), list(beta)
        if upper is None:
            e += h_exp  # h = 1: h^p e^{q h} = e^q
        else:
            a[upper] += h_pow
            b[upper] += h_exp
        out[(tuple(a), tuple(b), e)] += c

    for (alpha, beta, e), c in terms.items():
        a, b = alpha[j], beta[j]
        rest_a, rest_b = list(alpha), list(beta)
        rest_a[j] = rest_b[j] = 0
        if b == 0:
            put(rest_a, rest_b, e, a + 1, 0, c / (a + 1))
            continue
        for i in range(a + 1):  # e^{bh} sum_i (-1)^i a!/(a-i)! h^{a-i} / b^{i+1}
            coef = c * (-1) ** i * math.perm(a, i) / F(b) ** (i + 1)
            put(rest_a, rest_b, e, a - i, b, coef)
        put(rest_a, rest_b, e, 0, 0, -c * (-1) ** a * math.factorial(a) / F(b) ** (a + 1))
    return {k: c for k, c in out.items() if c}


def _integrate_box(terms: Terms, j: int, lo: Fraction, hi: Fraction) -> Terms:
    """Integrate variable ``j`` over ``[lo, hi]`` (constants; polynomial in ``x_j`` only)."""
    out: Terms = defaultdict(Fraction)
    for (alpha, beta, e), c in terms.items():
        if beta[j]:
            raise ValueError("box integration is for polynomial terms")
        a = list(alpha)
        p = a[j] + 1
        a[j] = 0
        out[(tuple(a), beta, e)] += c * (hi**p - lo**p) / p
    return {k: c for k, c in out.items() if c}


def _constant(terms: Terms) -> dict[int, Fraction]:
    out: dict[int, Fraction] = defaultdict(Fraction)
    for (_, _, e), c in terms.items():
        out[e] += c
    return {e: c for e, c in out.items() if c}


def _vertex_terms(k: int, signal: str, exponents: list[int] | None) -> Terms:
    out: Terms = {((0,) * k, (0,) * k, 0): F(1)}
    if exponents is None:
        return out
    for v, d in enumerate(exponents):
        poly = _lift(k, (v,), {((a,), (0,)): c for a, c in SIGNALS[signal].items()})
        out = _mul(out, _power(poly, d, k))
    return out


def integral_value(
    graphon: ExactGraphon, k: int, edges: Edges, signal: str, exponents: Exponents
) -> dict[int, Fraction]:
    """The exact density as ``{j: c_j}``, meaning :math:`\\sum_j c_j e^j`."""
    total: dict[int, Fraction] = defaultdict(Fraction)
    if graphon.ordered:  # kinked on the diagonal: one simplex per ordering of the vertices
        groups: Counter = Counter()
        for perm in itertools.permutations(range(k)):  # perm[r] = the vertex of rank r
            rank = {v: r for r, v in enumerate(perm)}
            ranked = tuple(sorted((*sorted((rank[u], rank[v])), m) for u, v, m in edges))
            exps = None if exponents is None else tuple(exponents[perm[r]] for r in range(k))
            groups[(ranked, exps)] += 1
        for (ranked, exps), count in groups.items():
            terms = _vertex_terms(k, signal, None if exps is None else list(exps))
            for lo, hi, m in ranked:
                terms = _mul(terms, _power(_lift(k, (lo, hi), graphon.ordered), m, k))
            for r in range(k):
                terms = _integrate_to(terms, r, r + 1 if r + 1 < k else None)
            for e, c in _constant(terms).items():
                total[e] += count * c
        return {e: c for e, c in total.items() if c}
    cuts = [F(0), *graphon.breaks, F(1)]
    assert graphon.local is not None
    for box in itertools.product(range(len(cuts) - 1), repeat=k):  # box[v]: interval of x_v
        terms = _vertex_terms(k, signal, exponents)
        for u, v, m in edges:
            local = {((a, b), (0, 0)): c for (a, b), c in graphon.local(box[u], box[v]).items()}
            terms = _mul(terms, _power(_lift(k, (u, v), local), m, k))
        for v in range(k):
            terms = _integrate_box(terms, v, cuts[box[v]], cuts[box[v] + 1])
        for e, c in _constant(terms).items():
            total[e] += c
    return {e: c for e, c in total.items() if c}


def decimal(value: dict[int, Fraction]) -> str:
    """``value`` to ``DIGITS`` significant digits by sympy, checked against mpmath at 80."""
    import mpmath  # type: ignore[import-untyped]
    import sympy as sp  # type: ignore[import-untyped]

    expr = sp.Add(*[sp.Rational(c.numerator, c.denominator) * sp.exp(e) for e, c in value.items()])
    text = sp.N(expr, DIGITS)
    with mpmath.workdps(80):
        ref = mpmath.fsum(
            mpmath.mpf(c.numerator) / c.denominator * mpmath.e**e for e, c in value.items()
        )
        assert abs(mpmath.mpf(str(text)) - ref) <= abs(ref) * mpmath.mpf(10) ** (1 - DIGITS)
    return mpmath.nstr(ref, DIGITS, strip_zeros=False, min_fixed=-100, max_fixed=100)


def exact_form(value: dict[int, Fraction]) -> str:
    """A sympy-parsable exact form, ``c_0 + c_{-3}*exp(-3) + ...``."""
    parts = [
        f"({c})" if e == 0 else f"({c})*exp({e})" for e, c in sorted(value.items(), reverse=True)
    ]
    return " + ".join(parts) or "0"


# ---- grid entries: exact integer sums by variable elimination ----------------------------------


def exact_w(graphon: ExactGraphon, x: Fraction, y: Fraction) -> Fraction:
    """:math:`W(x, y)` in rationals (graphons without exponentials)."""
    if graphon.ordered:
        lo, hi = min(x, y), max(x, y)
        assert all(q == (0, 0) for (_, q) in graphon.ordered), "no rational values"
        return sum((c * lo**a * hi**b for ((a, b), _), c in graphon.ordered.items()), F(0))
    cuts = list(graphon.breaks)
    i, j = sum(x >= c for c in cuts), sum(y >= c for c in cuts)
    assert graphon.local is not None
    return sum((c * x**a * y**b for (a, b), c in graphon.local(i, j).items()), F(0))


def _slice(
    scope: tuple[int, ...], arr: np.ndarray, var: int, index: int
) -> tuple[tuple[int, ...], np.ndarray]:
    axis = scope.index(var)
    return scope[:axis] + scope[axis + 1 :], arr.take(index, axis=axis)


def _product_sum(factors: list, order: list[int], v: int) -> np.ndarray:
    """Sum over ``v`` of the product of ``factors``; result axes in ``order`` (no ``v``)."""
    if len(order) > 2:  # keep intermediates at n^3 entries: loop over the first variable
        u = order[0]
        n = next(a.shape[s.index(u)] for s, a in factors if u in s)
        rows = []
        for i in range(n):
            sliced = [_slice(s, a, u, i) if u in s else (s, a) for s, a in factors]
            rows.append(_product_sum(sliced, order[1:], v))
        return np.stack(rows)
    full = [*order, v]
    prod: object = 1
    for scope, arr in factors:
        perm = sorted(range(len(scope)), key=lambda i: full.index(scope[i]))
        shape = [1] * len(full)
        for i in perm:
            shape[full.index(scope[i])] = arr.shape[i]
        prod = prod * arr.transpose(perm).reshape(shape)
    return np.asarray(prod).sum(axis=len(full) - 1)


def eliminate(k: int, factors: list[tuple[tuple[int, ...], np.ndarray]]) -> int:
    """The sum over all index maps of a product of integer factors (min-degree order)."""
    left = set(range(k))
    while left:
        scopes = [s for s, _ in factors]
        unions = {u: set().union(*(s for s in scopes if u in s)) - {u} for u in sorted(left)}
        v = min(sorted(left), key=lambda u: len(unions[u]))
        used = [(s, a) for s, a in factors if v in s]
        order = sorted(unions[v])
        factors = [(s, a) for s, a in factors if v not in s]
        factors.append((tuple(order), _product_sum(used, order, v)))
        left.remove(v)
    total = 1
    for _, arr in factors:
        total *= int(np.asarray(arr).item())
    return total


def _integers(values: list[Fraction]) -> tuple[list[int], int]:
    den = math.lcm(*(v.denominator for v in values))
    return [int(v * den) for v in values], den


def grid_value(
    graphon: ExactGraphon,
    n: int,
    k: int,
    edges: Edges,
    signal: str,
    exponents: Exponents,
    brute: bool = False,
) -> Fraction:
    """The density of the midpoint-grid graph of ``graphon`` (exact; brute force if asked)."""
    xs = [F(2 * i + 1, 2 * n) for i in range(n)]
    flat, den_a = _integers([exact_w(graphon, x, y) for x in xs for y in xs])
    a_int = np.empty((n, n), dtype=object)
    a_int[:, :] = np.array(flat, dtype=object).reshape(n, n)
    denominator = F(n) ** k * F(den_a) ** sum(m for _, _, m in edges)
    vecs = []
    for v in range(k):
        d = 0 if exponents is None else exponents[v]
        poly = SIGNALS.get(signal, {})
        vals = (
            [sum((c * x**a for a, c in poly.items()), F(0)) ** d for x in xs] if d else [F(1)] * n
        )
        ints, den = _integers(vals)
        denominator *= den
        vecs.append(np.array(ints, dtype=object))
    if brute:
        total = 0
        for phi in itertools.product(range(n), repeat=k):
            term = 1
            for u, v, m in edges:
                term *= a_int[phi[u], phi[v]] ** m
            for v in range(k):
                term *= vecs[v][phi[v]]
            total += term
        return F(total) / denominator
    factors: list[tuple[tuple[int, ...], np.ndarray]] = [((u, v), a_int**m) for u, v, m in edges]
    factors += [((v,), vecs[v]) for v in range(k)]
    return F(eliminate(k, factors)) / denominator


# ---- what the library is asked (shared by tests/graphon/test_oracles.py and the benchmark) -----


def library_density(entry: dict) -> tuple[float, float | None]:
    """The library's value and stated error for one entry (``None``: a grid graph, no error).

    Integral entries: ``graphon_density`` at default settings on ``AnalyticGraphon(fn)`` (a
    plain user function, no kinks or breaks declared), ``GraphonSignal`` for signals. Grid
    entries: ``hom_density`` of the float64 midpoint-grid graph ``fn(x_i, x_j)``.
    """
    from graphon.densities import graphon_density
    from graphon.graphons import AnalyticGraphon, GraphonSignal
    from graphon.homomorphism import hom_density
    from graphon.patterns import Pattern, as_pattern

    fn = TORCH_GRAPHONS[entry["graphon"]]
    edges = tuple(tuple(e) for e in entry["edges"])
    pattern = as_pattern(Pattern(entry["num_vertices"], edges), entry["exponents"])
    if entry["kind"] == "grid":
        n = entry["n"]
        x = (torch.arange(n, dtype=torch.float64) + 0.5) / n  # the midpoint grid [n]
        adj = fn(x[:, None].expand(n, n), x[None, :].expand(n, n))  # [n, n]
        signal = None if entry["exponents"] is None else TORCH_SIGNALS[entry["signal"]](x)
        return float(hom_density(pattern, adj, signal)), None
    graphon = AnalyticGraphon(fn, name=entry["graphon"])
    if entry["exponents"] is None:
        est = graphon_density(pattern, graphon)
    else:
        est = graphon_density(pattern, GraphonSignal(graphon, TORCH_SIGNALS[entry["signal"]]))
    return est.value, est.error


# ---- independent checks ----------------------------------------------------------------------


def _resolve(expr: Any, point: dict) -> Any:
    """Replace Max, Min, Abs and Piecewise by the branch valid at ``point`` (inside a region)."""
    import sympy as sp

    if isinstance(expr, sp.Piecewise):
        for branch, cond in expr.args:
            if bool(cond.subs(point)):
                return _resolve(branch, point)
        raise ValueError(f"no branch of {expr} holds at {point}")
    if expr.is_Atom:
        return expr
    args = [_resolve(a, point) for a in expr.args]
    if isinstance(expr, (sp.Max, sp.Min)):
        pick = max if isinstance(expr, sp.Max) else min
        return pick(args, key=lambda a: a.subs(point))
    if isinstance(expr, sp.Abs):
        return args[0] if args[0].subs(point) >= 0 else -args[0]
    return expr.func(*args)


def sympy_value(
    graphon: ExactGraphon, k: int, edges: Edges, signal: str, exponents: Exponents
) -> Any:
    """The same density by ``sympy.integrate`` on every region (for small patterns)."""
    import sympy as sp

    xs = sp.symbols(f"x0:{k}", real=True)
    x, y = sp.symbols("x y", real=True)
    w = sp.sympify(graphon.sympy_text, locals={"x": x, "y": y})
    f = {"x": x, "1+x": 1 + x}.get(signal)
    integrand = sp.Integer(1)
    for u, v, m in edges:
        integrand *= w.subs({x: xs[u], y: xs[v]}, simultaneous=True) ** m
    for v in range(k):
        if exponents is not None and f is not None:
            integrand *= f.subs(x, xs[v]) ** exponents[v]
    total = sp.Integer(0)
    if graphon.ordered:
        for perm in itertools.permutations(range(k)):
            point = {xs[perm[r]]: sp.Rational(r + 1, k + 1) for r in range(k)}
            limits = [(xs[perm[r]], 0, xs[perm[r + 1]] if r + 1 < k else 1) for r in range(k)]
            total += sp.integrate(_resolve(integrand, point), *limits)
        return total
    cuts = [sp.Rational(c.numerator, c.denominator) for c in (F(0), *graphon.breaks, F(1))]
    for box in itertools.product(range(len(cuts) - 1), repeat=k):
        point = {xs[v]: (cuts[box[v]] + cuts[box[v] + 1]) / 2 for v in range(k)}
        limits = [(xs[v], cuts[box[v]], cuts[box[v] + 1]) for v in range(k)]
        total += sp.integrate(sp.expand(_resolve(integrand, point)), *limits)
    return total


def _moment(deg: int, signal: str, d: int, points: list[Fraction] | None) -> Fraction:
    """:math:`\\int x^{deg} f^d` (``points=None``) or its grid mean."""
    poly = SIGNALS.get(signal, {0: F(1)})
    if points is None:
        f_d = _power(_lift(1, (0,), {((a,), (0,)): c for a, c in poly.items()}), d, 1)
        return sum((c / (a[0] + deg + 1) for (a, _, _), c in f_d.items()), F(0))
    vals = [x**deg * sum((c * x**a for a, c in poly.items()), F(0)) ** d for x in points]
    return sum(vals, F(0)) / len(points)


def product_closed_form(
    k: int, edges: Edges, signal: str, exponents: Exponents, n: int | None = None
) -> Fraction:
    r"""W = xy: :math:`\prod_v \int x^{\deg v} f(x)^{d_v}` (REFERENCES B.2), or the grid mean."""
    deg = [0] * k
    for u, v, m in edges:
        deg[u] += m
        deg[v] += m
    points = None if n is None else [F(2 * i + 1, 2 * n) for i in range(n)]
    d = [0] * k if exponents is None else exponents
    return math.prod((_moment(deg[v], signal, d[v], points) for v in range(k)), start=F(1))


# ---- the table --------------------------------------------------------------------------------


def entries(grid_n: int = 50, check: bool = True, log: Callable[[str], None] = print) -> list[dict]:
    """Every oracle value (integral entries for all graphons, grid entries for GRID_GRAPHONS)."""
    import sympy as sp

    out: list[dict] = []
    for key, graphon in GRAPHONS.items():
        start = time.perf_counter()
        checked = 0
        for name, (k, edges) in PATTERNS.items():
            for signal, exps in signal_configs(k):
                value = integral_value(graphon, k, edges, signal, exps)
                if key == "xy":
                    assert value == {0: product_closed_form(k, edges, signal, exps)}, name
                # sympy on every region: all patterns up to 3 vertices, and K4 on the kinked
                # graphons without a signal (24 four-fold integrals, ~10 s each graphon).
                by_sympy = k <= 3 or (name == "k4" and graphon.ordered and exps is None)
                if check and by_sympy:
                    diff = sympy_value(graphon, k, edges, signal, exps) - sp.sympify(
                        exact_form(value)
                    )
                    assert abs(sp.N(diff, 60)) < 1e-45, (key, name, signal, exps, diff)
                    checked += 1
                out.append(
                    _entry("integral", graphon.tag, name, k, edges, key, signal, exps, value)
                )
        log(
            f"  {key:14s} integral entries in {time.perf_counter() - start:6.1f} s "
            f"({checked} checked by sympy.integrate)"
        )
    for key in GRID_GRAPHONS:
        start = time.perf_counter()
        graphon = GRAPHONS[key]
        for name, (k, edges) in PATTERNS.items():
            for signal, exps in signal_configs(k):
                if check:
                    tiny = grid_value(graphon, 5, k, edges, signal, exps)
                    assert tiny == grid_value(graphon, 5, k, edges, signal, exps, brute=True)
                grid = grid_value(graphon, grid_n, k, edges, signal, exps)
                if key == "xy":
                    assert grid == product_closed_form(k, edges, signal, exps, grid_n), name
                entry = _entry("grid", "grid", name, k, edges, key, signal, exps, {0: grid})
                out.append({**entry, "n": grid_n, "latents": "midpoint"})
        log(f"  {key:14s} grid entries (n = {grid_n}) in {time.perf_counter() - start:6.1f} s")
    return out


def _entry(
    kind: str,
    tag: str,
    name: str,
    k: int,
    edges: Edges,
    key: str,
    signal: str,
    exps: Exponents,
    value: dict[int, Fraction],
) -> dict:
    d = "" if exps is None else "-d" + "".join(map(str, exps))
    return {
        "id": f"{kind}-{key}-{name}-{signal}{d}",
        "kind": kind,
        "tag": tag,
        "pattern": name,
        "num_vertices": k,
        "edges": [list(e) for e in edges],
        "graphon": key,
        "signal": signal,
        "exponents": exps,
        "exact": decimal(value),
        "exact_form": exact_form(value),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="JSON file to write")
    parser.add_argument("--grid-n", type=int, default=50, help="grid size of the grid entries")
    parser.add_argument("--no-check", action="store_true", help="skip the sympy/brute checks")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = entries(args.grid_n, check=not args.no_check)
    seconds = time.perf_counter() - start
    meta = {
        "generator": "benchmarks/graphon_oracles.py",
        "digits": DIGITS,
        "seconds": round(seconds, 1),
        "graphons": {k: {"tag": g.tag, "sympy": g.sympy_text} for k, g in GRAPHONS.items()},
        "signals": {"none": None, "x": "x", "1+x": "1 + x"},
        "grid": "A_ij = W(x_i, x_j), x_i = (i + 1/2)/n, i = 0..n-1 (latents='midpoint')",
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"meta": meta, "entries": rows}, indent=1) + "\n")
    tags = Counter(r["tag"] for r in rows)
    print(f"{len(rows)} values {dict(tags)} in {seconds:.1f} s -> {args.out}")
    return {"count": len(rows), "tags": dict(tags), "seconds": seconds}


if __name__ == "__main__":
    main()
