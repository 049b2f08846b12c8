r"""Homomorphism densities of graphons: exact (step), quadrature (analytic), Monte Carlo.

.. math::
    t\big((F, d), (W, f)\big) = \int_{[0,1]^{V(F)}} \prod_{v} f(x_v)^{d_v}
    \prod_{uv \in E(F)} W(x_u, x_v)^{m_{uv}}\, dx

(Lovász, *Large Networks and Graph Limits*, AMS 2012, Section 7.2; the vertex weights
:math:`f(x_v)^{d_v}` are those of graphon-signals, Levie, "A Graphon-Signal Analysis of Graph
Neural Networks", NeurIPS 2023, arXiv 2305.15987). Every estimator returns a
:class:`DensityEstimate` stating its method and error.
"""

from __future__ import annotations

import math
import statistics
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from graphdata.device import make_generator
from graphdata.errors import GraphDataError
from graphon._simplex import num_points, simplex_density, sorted_classes
from graphon._smoothness import Structure, detect
from graphon._validation import (
    check_adjacency,
    check_breaks,
    check_choice,
    check_graphon_values,
    check_int,
    check_kinks,
    check_real,
    check_seed,
    check_signal,
    check_signal_values,
)
from graphon.graphons import Graphon, GraphonSignal, StepGraphon
from graphon.homomorphism import MAX_COST, hom_density, inj_density
from graphon.patterns import Pattern, PatternLike, as_pattern
from graphon.sampling import sample_graphs

__all__ = ["DensityEstimate", "graphon_density", "monte_carlo_density", "sample_density"]


@dataclass(frozen=True)
class DensityEstimate:
    """A density value with its error and how it was obtained.

    Attributes:
        value: The density (estimate).
        error: ``0.0`` for ``"exact"``; for ``"quadrature"`` the gap :math:`|t_q - t_{q/2}|`
            between Gauss-Legendre orders :math:`q` and :math:`q/2` (two distinct rules, see
            :func:`graphon_density`), for
            ``"simplex_quadrature"`` the gap between the last two orders tried: each is the
            error of the coarser rule, so it exceeds the error of the value once the rule
            converges on smooth pieces, but it is an estimate, not a proof (see
            :func:`graphon_density`); for Monte Carlo the half-width of the normal confidence
            interval.
        method: ``"exact"``, ``"quadrature"``, ``"simplex_quadrature"``, ``"monte_carlo"`` or
            ``"sampled_graphs"``.
        bound: ``True`` when ``error`` is a proven bound (the exact method: error 0), ``False``
            when it is an estimate or a confidence half-width.
    """

    value: float
    error: float
    method: str
    bound: bool = False

    @property
    def low(self) -> float:
        """``value - error``."""
        return self.value - self.error

    @property
    def high(self) -> float:
        """``value + error``."""
        return self.value + self.error


def _split(source: Graphon | GraphonSignal) -> tuple[Graphon, GraphonSignal | None]:
    if isinstance(source, GraphonSignal):
        return source.graphon, source
    if isinstance(source, Graphon):
        return source, None
    raise GraphDataError(
        f"graphon: expected a Graphon or GraphonSignal, got {type(source).__name__}; for a "
        "graph tensor use hom_density"
    )


def _check_estimate(mean: float, std: float, where: str) -> None:
    """A non-finite estimate from finite inputs is an overflow of the float64 products."""
    if not (math.isfinite(mean) and math.isfinite(std)):
        raise GraphDataError(
            f"{where}: the estimate overflowed float64 (mean {mean}, std {std}); the products of "
            "weights and signal powers are too large: rescale the signal or the weights, or "
            "lower the exponents"
        )


def _gauss_legendre(order: int, device: torch.device | str) -> tuple[Tensor, Tensor]:
    nodes, weights = np.polynomial.legendre.leggauss(order)
    x = torch.as_tensor((nodes + 1) / 2, dtype=torch.float64, device=device)
    return x, torch.as_tensor(weights / 2, dtype=torch.float64, device=device)


#: Gauss nodes per axis tried in turn by the simplex rule, until two agree to :data:`TOL`.
SIMPLEX_ORDERS = (6, 8, 10, 12, 14, 16, 20, 24, 32, 40, 48)
#: The simplex rule stops when two orders agree to ``TOL * max(1, |t|)``.
TOL = 1e-12
#: Largest pattern for the simplex rule (its k! orderings are enumerated).
SIMPLEX_MAX_VERTICES = 8


def _structure(graphon: Graphon, signal: GraphonSignal | None, kinks: str | None) -> Structure:
    """Where the integrand may be non-smooth: declared on the graphon, or probed."""
    if isinstance(graphon, StepGraphon):
        found = Structure(False, tuple(float(c) for c in graphon.boundaries()))
    else:
        mode = check_kinks(kinks) if kinks is not None else getattr(graphon, "kinks", "auto")

        def check(values: Tensor, x: Tensor, y: Tensor) -> None:
            check_graphon_values(values, x, y, graphon=graphon.name, where="while probing kinks")

        declared = check_breaks(getattr(graphon, "breaks", None))
        if mode == "auto" and declared is None:
            found = detect(graphon, check=check)
        elif mode == "auto" and declared is not None:
            found = Structure(detect(graphon, check=check, lines=False).diagonal, declared)
        else:
            found = Structure(mode == "diagonal", declared or ())
    if signal is not None and signal.step_values is None and kinks != "none":

        def check_signal(values: Tensor, x: Tensor) -> None:
            check_signal_values(values, x, graphon=signal.name, where="while probing kinks")

        found = found.merged(detect(None, signal.signal, check_signal=check_signal))
    return found


def _warp(u: Tensor) -> tuple[Tensor, Tensor]:
    r"""Sidi's :math:`\sin^2` map of :math:`[0, 1]`: :math:`x = u - \sin(2\pi u)/(2\pi)`.

    :math:`dx/du = 1 - \cos(2\pi u)` vanishes to second order at both ends, so an endpoint
    singularity :math:`x^{\alpha}` becomes :math:`u^{3\alpha + 2}` and Gauss-Legendre converges
    as :math:`q^{-6\alpha - 6}` instead of :math:`q^{-2\alpha - 2}` (Sidi, "A new variable
    transformation for numerical integration", ISNM 112, 1993). Returns ``(x, dx/du)``.
    """
    return u - torch.sin(2 * math.pi * u) / (2 * math.pi), 1 - torch.cos(2 * math.pi * u)


def _quadrature(
    pattern: Pattern,
    graphon: Graphon,
    signal: GraphonSignal | None,
    per: int,
    cuts: list[float],
    warp: bool,
    device: torch.device | str,
    max_cost: float,
) -> float:
    """The density of the node-weighted graph at ``per`` Gauss-Legendre nodes per panel."""
    xi, om = _gauss_legendre(per, device)
    if warp:
        xi, slope = _warp(xi)
        om = om * slope
    left = torch.tensor(cuts[:-1], dtype=torch.float64, device=device)
    width = torch.tensor(cuts[1:], dtype=torch.float64, device=device) - left
    x = (left[:, None] + width[:, None] * xi).reshape(-1)  # [P * per]
    w = (width[:, None] * om).reshape(-1)
    adj = graphon.matrix(x).double()
    check_graphon_values(
        adj, x[:, None], x[None, :], graphon=graphon.name, where="at the quadrature nodes"
    )
    sig = None
    if signal is not None:
        sig = signal.signal(x).double()
        check_signal_values(sig, x, graphon=signal.name, where="at the quadrature nodes")
    # A warped rule's weights sum to 1 only in the limit; the sum is homogeneous of degree
    # |V(F)| in the weights, so evaluate it on the measure w / sum(w) and scale back.
    total = w.sum()
    value = hom_density(pattern, adj, sig, node_weights=w / total, max_cost=max_cost)
    return float(value * total**pattern.num_vertices)


def _agree(value: float, previous: float) -> bool:
    return abs(value - previous) <= TOL * max(1.0, abs(value))


def _until_agreement(values: Iterator[float]) -> tuple[float, float]:
    """(last value, gap to the one before) of a rising-order sequence, stopped once two agree."""
    seen: list[float] = []
    for value in values:
        seen.append(value)
        if len(seen) > 1 and _agree(seen[-1], seen[-2]):
            break
    return seen[-1], abs(seen[-1] - seen[-2]) if len(seen) > 1 else math.inf


def _product_rule(
    pattern: Pattern,
    graphon: Graphon,
    signal: GraphonSignal | None,
    order: int,
    cuts: list[float],
    warp: bool,
    device: torch.device | str,
    max_cost: float,
) -> Iterator[float]:
    """The composite product rule at 16, 32, 64 (below ``order / 2``), ``order / 2``, ``order``.

    ``q`` nodes in all give ``max(2, ceil(q / panels))`` per panel. Smooth pieces agree long
    before ``order``; otherwise the last pair is (order / 2, order), as with a fixed rule. Two
    orders with the same per-panel count are one rule (their gap is 0 by construction), so the
    repeat is skipped; when ``order`` leaves a single rule, the midpoint rule (1 node per panel)
    is its coarser partner.
    """
    panels = len(cuts) - 1
    rules: list[int] = []
    for q in [q for q in (16, 32, 64) if q < order // 2] + [max(1, order // 2), order]:
        per = max(2, math.ceil(q / panels))
        if not rules or per != rules[-1]:
            rules.append(per)
    if len(rules) == 1:
        rules.insert(0, 1)
    for per in rules:
        yield _quadrature(pattern, graphon, signal, per, cuts, warp, device, max_cost)


def _simplex_rule(
    pattern: Pattern,
    graphon: Graphon,
    signal: GraphonSignal | None,
    order: int,
    cuts: list[float],
    warp: bool,
    device: torch.device | str,
    max_cost: float,
) -> Iterator[float]:
    """The ordered-simplex rule (:mod:`graphon._simplex`) at each order that fits ``max_cost``.

    The orders are :data:`SIMPLEX_ORDERS`; ``order`` (the product rule's) is not used. At least
    two must fit (the error is the gap between the last two): fewer are refused.
    """
    k = pattern.num_vertices
    if k > SIMPLEX_MAX_VERTICES:
        raise GraphDataError(
            f"pattern {pattern.name!r}: {k} vertices is too many for the ordered-simplex rule "
            f"({k}! orderings, at most {SIMPLEX_MAX_VERTICES} vertices) that a graphon kinked on "
            "the diagonal needs; pass kinks='none' for the product rule (error about order^-2) "
            "or use graphon.monte_carlo_density"
        )
    classes = sorted_classes(pattern)
    per_point = len({(a, b) for edges, _ in classes for a, b, _ in edges}) + sum(
        len(edges) + k for edges, _ in classes
    )

    def check(values: Tensor, x: Tensor, y: Tensor) -> None:
        check_graphon_values(values, x, y, graphon=graphon.name, where="at the simplex nodes")

    fn = None if signal is None else signal.signal
    mapping = _warp if warp else None
    for i, q in enumerate(SIMPLEX_ORDERS):
        cost = float(num_points(k, q, len(cuts) - 1)) * per_point
        if cost > max_cost and i > 1:
            return
        if cost > max_cost and i == 1:  # one order has no gap to estimate its error with
            raise GraphDataError(
                f"max_cost: pattern {pattern.name!r} ({k} vertices, {len(cuts) - 1} panels) "
                f"fits the ordered-simplex rule only at {SIMPLEX_ORDERS[0]} nodes per axis, and "
                f"its error is the gap to a second order ({q} nodes per axis: about {cost:.3g} "
                f"operations, over max_cost={max_cost:.3g}); raise max_cost to at least "
                f"{cost:.3g}, or use graphon.monte_carlo_density for an estimate with a "
                "confidence interval"
            )
        if cost > max_cost:
            raise GraphDataError(
                f"pattern {pattern.name!r} ({k} vertices, {len(cuts) - 1} panels): the "
                f"ordered-simplex rule needs about {cost:.3g} operations at {q} nodes per "
                f"axis, over max_cost={max_cost:.3g}. Raise max_cost, or use "
                "graphon.monte_carlo_density for an estimate with a confidence interval"
            )
        yield simplex_density(classes, k, graphon, fn, q, cuts, mapping, device, check)


def graphon_density(
    pattern: PatternLike,
    graphon: Graphon | GraphonSignal,
    *,
    exponents: object = None,
    order: int = 128,
    kinks: str | None = None,
    device: torch.device | str = "cpu",
    max_cost: float = MAX_COST,
) -> DensityEstimate:
    r"""Deterministic :math:`t((F, d), (W, f))`: exact for step graphons, else quadrature.

    - A :class:`~graphon.graphons.StepGraphon` with no signal or a step signal: exact, the
      block sum :math:`\sum_{\sigma: V \to [K]} \prod_v \lambda_{\sigma v} f_{\sigma v}^{d_v}
      \prod_{uv} B_{\sigma u \sigma v}^{m_{uv}}` by variable elimination on the ``[K, K]`` block
      matrix with block measures (``bound=True``, error 0).
    - A graphon smooth off the lines :math:`x = c_j` (breakpoints: a step graphon's block
      boundaries, or declared, or found by probing): a composite product Gauss-Legendre rule,
      ``order`` nodes in all split over the panels :math:`[c_j, c_{j+1}]` (at least 2 each),
      :math:`t_q = \sum_{i} \prod_v w_{i_v} \dots`, the density of the node-weighted graph
      :math:`W(x_i, x_j)` by variable elimination, at :math:`q = 16, 32, \dots` until two
      successive orders agree to ``1e-12`` or :math:`q` reaches ``order``; ``error`` is the last
      gap :math:`|t_q - t_{q/2}|`. Orders that give the same nodes per panel are one rule and
      are compared once; if ``order`` leaves only one rule (many panels), its gap is to the
      midpoint rule (1 node per panel).
    - A graphon kinked on the diagonal (``max``, ``min``, ``|x - y|``): the sum over the
      :math:`k!` ordered simplices :math:`x_{\pi(1)} < \dots < x_{\pi(k)}`, each further cut at
      the breakpoints, where the integrand is smooth (:mod:`graphon._simplex`), with
      :math:`q = 6, 8, 10, \dots, 48` Gauss nodes per axis until two orders agree to ``1e-12``
      (relative above 1); ``error`` is that last gap (``method="simplex_quadrature"``).

    Both errors are the error of the coarser rule, so they cover the value's error once the
    rule converges, which it does fast on smooth pieces; they are estimates, not proofs
    (``bound=False``): no bound is computable for a black-box function. Non-smooth sets other
    than the diagonal and axis-parallel lines (e.g. :math:`x + y = 1`) are not followed: a
    warning says so, and the error there falls as :math:`O(q^{-2})` (kinks) or :math:`O(q^{-1})`
    (jumps).

    Args:
        pattern: The pattern.
        graphon: A graphon or graphon-signal.
        exponents: Vertex exponents :math:`d` (needs a graphon-signal).
        order: Product-rule nodes per axis :math:`q` (>= 2). Default ``128``.
        kinks: ``"auto"``, ``"none"`` or ``"diagonal"``, overriding the graphon's own
            declaration (``AnalyticGraphon(kinks=...)``; plain graphons: ``"auto"``, probed by
            :mod:`graphon._smoothness`). Default ``None``: the graphon's. A callable signal is
            probed for breakpoints unless ``kinks="none"``.
        device: Where to evaluate. Default ``"cpu"``.
        max_cost: Refusal threshold in multiply-adds. Default ``2e11``.

    Returns:
        A :class:`DensityEstimate` (float64 arithmetic).

    Raises:
        GraphDataError: On bad input or when the needed rule costs more than ``max_cost``
            (for the simplex rule: its two coarsest orders, whose gap is the first error).

    Examples:
        >>> from graphon.families import make_graphon
        >>> round(graphon_density("triangle", make_graphon("product")).value, 12)  # 1/27
        0.037037037037
        >>> est = graphon_density("edge", make_graphon("abs_diff"))  # int |x - y| = 1/3
        >>> est.method, abs(est.value - 1 / 3) < 1e-14
        ('simplex_quadrature', True)
    """
    pat = as_pattern(pattern, exponents)
    w, signal = _split(graphon)
    check_int("order", order, 2)
    check_real(
        "max_cost", max_cost, low=0.0, low_open=True, fix="pass a positive budget, e.g. 2e11"
    )
    if kinks is not None:
        check_kinks(kinks)
    if pat.exponents is not None and signal is None:
        raise GraphDataError("graphon: the pattern has exponents; pass a GraphonSignal")
    if pat.exponents is None and signal is not None:
        raise GraphDataError("exponents: a GraphonSignal was given; pass exponents=[...]")
    step_values = None if signal is None else signal.step_values
    exact_signal = signal is None or step_values is not None
    if isinstance(w, StepGraphon) and exact_signal:
        probs, lam = w.probs.to(device), w.measures.to(device)
        sig = None if step_values is None else step_values.to(device)
        exact = hom_density(pat, probs, sig, node_weights=lam, max_cost=max_cost)
        return DensityEstimate(float(exact), 0.0, "exact", bound=True)
    found = _structure(w, signal, kinks)
    if found.other:
        warnings.warn(
            f"graphon_density: {w.name!r} is not smooth on a curve that is neither the diagonal "
            "nor a line x = c; the quadrature converges slowly there and its error is a rough "
            "estimate (declare breaks=..., or use graphon.monte_carlo_density)",
            stacklevel=2,
        )
    cuts = [0.0, *found.breaks, 1.0]
    simplex = found.diagonal and pat.num_edges > 0
    rule = _simplex_rule if simplex else _product_rule
    value, gap = _until_agreement(rule(pat, w, signal, order, cuts, False, device, max_cost))
    if not _agree(value, value + gap):
        # Not converged: an endpoint singularity (x^0.7, sqrt) is the usual cause; the warped
        # rule clusters nodes at the panel ends. Keep whichever run agrees better.
        warped, warped_gap = _until_agreement(
            rule(pat, w, signal, order, cuts, True, device, max_cost)
        )
        if warped_gap < gap:
            value, gap = warped, warped_gap
    if not _agree(value, value + gap):
        warnings.warn(
            f"graphon_density: the quadrature for {pat.name!r} on {w.name!r} did not reach two "
            f"orders agreeing to {TOL:g} (last gap {gap:.2g}, the reported error: an estimate); "
            "raise order (product rule) or max_cost, or use graphon.monte_carlo_density",
            stacklevel=2,
        )
    return DensityEstimate(value, gap, "simplex_quadrature" if simplex else "quadrature")


def _z(confidence: float) -> float:
    check_real(
        "confidence",
        confidence,
        low=0.0,
        high=1.0,
        low_open=True,
        high_open=True,
        fix="pass a level in (0, 1), e.g. 0.95",
    )
    return statistics.NormalDist().inv_cdf(0.5 + confidence / 2)


def _injective_maps(num: int, n: int, k: int, gen: torch.Generator, device: torch.device) -> Tensor:
    """Uniform injective maps [k] -> [n]: random orders for small n, else rejection.

    Drawn on the generator's device and moved to ``device`` (a CPU generator cannot draw there).
    """
    if n <= 64:
        keys = torch.rand(num, n, generator=gen, device=gen.device)
        return keys.argsort(-1)[:, :k].to(device)  # the first k of a uniform random order
    kept: list[Tensor] = []
    total = 0
    while total < num:
        draw = torch.randint(n, (num, k), generator=gen, device=gen.device)
        ordered = draw.sort(-1).values
        distinct = (ordered[:, 1:] != ordered[:, :-1]).all(-1)  # P(reject) <= k^2 / (2n)
        kept.append(draw[distinct])
        total += int(distinct.sum())
    return torch.cat(kept)[:num].to(device)


def monte_carlo_density(
    pattern: PatternLike,
    source: Graphon | GraphonSignal | Tensor,
    signal: Tensor | None = None,
    *,
    exponents: object = None,
    num_samples: int = 100_000,
    injective: bool = False,
    confidence: float = 0.95,
    seed: int | None = None,
    generator: torch.Generator | None = None,
) -> DensityEstimate:
    r"""Monte Carlo density over random maps :math:`V(F) \to` points, with a CLT interval.

    .. math::
        \hat t = \frac{1}{S} \sum_{s=1}^S \prod_v f(X^s_v)^{d_v} \prod_{uv}
        W(X^s_u, X^s_v)^{m_{uv}}, \qquad \hat t \pm z_{(1+c)/2}\, \hat\sigma / \sqrt{S},

    with :math:`X^s_v` iid uniform on :math:`[0, 1]` for a graphon, or uniform nodes of the
    graph (distinct nodes when ``injective``) for an ``[N, N]`` tensor. Unbiased for every
    pattern, multigraphs included; the cost :math:`O(S\,|E(F)|)` does not depend on the
    treewidth, so this is the fallback for patterns the exact methods refuse.

    Args:
        pattern: The pattern.
        source: A graphon, graphon-signal, or a symmetric ``[N, N]`` weighted graph.
        signal: Node signal ``[N]``/``[N, C]`` when ``source`` is a graph.
        exponents: Vertex exponents :math:`d`.
        num_samples: :math:`S` (>= 2). Default ``100_000``.
        injective: For a graph, sample injective maps (estimates :math:`t_{\mathrm{inj}}`).
            Default ``False``; must stay ``False`` for graphons.
        confidence: Level :math:`c` of the interval. Default ``0.95``.
        seed: Seed of a fresh generator (on the graph's device, else the CPU). Default ``None``.
        generator: A generator to draw from, on any device (the draws move to the graph's);
            at most one of ``seed``/``generator``.

    Returns:
        A :class:`DensityEstimate` with ``method="monte_carlo"`` and ``error`` the half-width.

    Examples:
        >>> from graphon.families import make_graphon
        >>> est = monte_carlo_density("triangle", make_graphon("product"), seed=0)
        >>> abs(est.value - 1 / 27) < 3 * est.error
        True
    """
    pat = as_pattern(pattern, exponents)
    check_int("num_samples", num_samples, 2)
    z = _z(confidence)
    if seed is not None and generator is not None:
        raise GraphDataError("seed, generator: pass at most one of them")
    check_seed("seed", seed)
    k = pat.num_vertices
    if isinstance(source, Tensor):
        checked, batched = check_adjacency(source, name="source")
        if batched:
            raise GraphDataError(f"source: expected one graph [N, N], got {tuple(source.shape)}")
        sig = check_signal(signal, checked, False)
        channels = 0 if sig is None else sig.size(-1)
        if (pat.exponents is None) != (sig is None) or channels != pat.channels:
            raise GraphDataError(
                "signal: pass a signal with one channel per exponent exactly when the pattern "
                "has exponents"
            )
        dev = source.device
        gen = generator or make_generator(seed, dev)
        n = source.size(0)
        if injective:
            if k > n:
                raise GraphDataError(f"pattern: {k} vertices cannot map injectively into {n}")
            nodes = _injective_maps(num_samples, n, k, gen, dev)  # [S, k] distinct nodes
        else:
            # On the generator's device (a passed CPU generator cannot draw on CUDA), then moved.
            nodes = torch.randint(n, (num_samples, k), generator=gen, device=gen.device).to(dev)
        weights = source.double()
        value = torch.ones(num_samples, dtype=torch.float64, device=dev)
        for u, v, m in pat.edges:
            value = value * weights[nodes[:, u], nodes[:, v]].pow(m)
        sig = None if sig is None else sig[0].double()  # [N, C]
        points = nodes
    else:
        if injective:
            raise GraphDataError("injective: only meaningful for a graph source; drop it")
        w, ws = _split(source)
        if (pat.exponents is None) != (ws is None):
            raise GraphDataError("exponents: pass them exactly when the source has a signal")
        gen = generator or make_generator(seed, "cpu")
        x = torch.rand(num_samples, k, generator=gen, device=gen.device, dtype=torch.float64)
        value = torch.ones(num_samples, dtype=torch.float64, device=gen.device)
        for u, v, m in pat.edges:
            drawn = w(x[:, u], x[:, v]).double()  # [S]
            check_graphon_values(
                drawn, x[:, u], x[:, v], graphon=w.name, where="at the Monte Carlo points"
            )
            value = value * drawn.pow(m)
        sig = None
        if ws is not None:
            sig = ws.signal(x.reshape(-1)).double().reshape(-1, ws.channels)  # [S * k, C]
            check_signal_values(
                sig, x.reshape(-1), graphon=ws.name, where="at the Monte Carlo points"
            )
        points = torch.arange(num_samples * k, device=gen.device).reshape(num_samples, k)
    if pat.exponents is not None:
        for v in range(k):
            powers = torch.tensor(pat.exponents[v], dtype=torch.float64, device=value.device)
            value = value * sig[points[:, v]].pow(powers).prod(-1)  # type: ignore[index]
    mean, std = float(value.mean()), float(value.std())
    _check_estimate(mean, std, "monte_carlo_density")
    return DensityEstimate(mean, z * std / math.sqrt(num_samples), "monte_carlo")


def sample_density(
    pattern: PatternLike,
    graphon: Graphon | GraphonSignal,
    n: int,
    *,
    exponents: object = None,
    num_graphs: int = 10,
    injective: bool = True,
    edges: str = "bernoulli",
    latents: str = "uniform",
    confidence: float = 0.95,
    seed: int | None = None,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
) -> DensityEstimate:
    r"""Mean density of ``num_graphs`` sampled graphs :math:`G_i \sim \mathbb{G}(n, W)`.

    .. math::
        \bar t = \frac{1}{M}\sum_{i=1}^M t_{(\mathrm{inj})}(F, G_i), \qquad
        \bar t \pm z_{(1+c)/2}\, \hat\sigma/\sqrt{M}.

    With ``injective=True`` and uniform latents, :math:`\mathbb{E}\,\bar t = t(F, W)` for
    simple :math:`F` (Bernoulli edges) and for every :math:`F` (weighted edges). A multigraph
    pattern on Bernoulli graphs estimates the density of its simple version, because
    :math:`A \circ A = A` (the double edge on :math:`W \equiv 1/2`: :math:`1/2`, not
    :math:`1/4`); a warning says so.

    Args:
        pattern: The pattern.
        graphon: A graphon or graphon-signal.
        n: Nodes per sampled graph.
        exponents: Vertex exponents :math:`d`.
        num_graphs: :math:`M` (>= 2). Default ``10``.
        injective: Use :math:`t_{\mathrm{inj}}` (default ``True``) or :math:`t`.
        edges: ``"bernoulli"`` (default) or ``"weighted"`` (see :func:`sample_graphs`).
        latents: ``"uniform"`` (default), ``"grid"`` or ``"midpoint"``.
        confidence: Level :math:`c` of the interval. Default ``0.95``.
        seed: Seed of a fresh generator; at most one of ``seed``/``generator``.
        generator: A generator to draw from.
        device: Where to sample. Default: the generator's device, else ``"cpu"``.

    Returns:
        A :class:`DensityEstimate` with ``method="sampled_graphs"``.
    """
    pat = as_pattern(pattern, exponents)
    check_int("num_graphs", num_graphs, 2)
    check_choice("edges", edges, ("bernoulli", "weighted"))
    check_int("n", n, 1)
    if injective and n < pat.num_vertices:  # no injective map: t_inj would be 0/0
        raise GraphDataError(
            f"n: the injective density of the {pat.num_vertices}-vertex pattern {pat.name!r} "
            f"needs graphs of at least {pat.num_vertices} nodes, got n={n}; raise n or pass "
            "injective=False"
        )
    z = _z(confidence)
    if not pat.is_simple and edges == "bernoulli":
        warnings.warn(
            f"pattern {pat.name!r} has multi-edges; on 0/1 graphs A∘A = A, so this estimates the "
            "density of its simple version, not t(F, W) (use edges='weighted' for t(F, W))",
            stacklevel=2,
        )
    sample = sample_graphs(
        graphon,
        n,
        batch_size=num_graphs,
        latents=latents,
        edges=edges,
        seed=seed,
        generator=generator,
        device=device,
        dtype=torch.float64,
    )
    fn = inj_density if injective else hom_density
    values = fn(pat, sample.adj, sample.signal)  # [M]
    mean, std = float(values.mean()), float(values.std())
    _check_estimate(mean, std, "sample_density")
    return DensityEstimate(mean, z * std / math.sqrt(num_graphs), "sampled_graphs")
