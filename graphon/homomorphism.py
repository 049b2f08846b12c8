r"""Exact (signal-weighted) homomorphism densities of weighted graphs by variable elimination.

.. math::
    t\big((F, d), (A, x)\big) = \sum_{\varphi: V(F) \to [n]} \prod_{v} \mu_{\varphi(v)}\,
    x_{\varphi(v)}^{d_v} \prod_{uv \in E(F)} A_{\varphi(u)\varphi(v)}^{m_{uv}},
    \qquad \mu_i = 1/n \text{ by default},

the density of the step graphon of :math:`(A, x)` (Lovász, *Large Networks and Graph Limits*,
AMS 2012, Ch. 5; signal weights as in Levie, NeurIPS 2023, arXiv 2305.15987). The sum is
contracted along a min-fill elimination order at cost :math:`O(n^{w+1})`, :math:`w` the order's
width (the treewidth when it is at most 2), instead of :math:`O(n^{|V(F)|})`: the
:math:`n^{\mathrm{tw}(F)+1}` bound for homomorphism counts used by Curticapean, Dell & Marx,
"Homomorphisms are a good basis for counting small subgraphs", STOC 2017, arXiv 1705.01595.
Equal factors met twice (e.g. :math:`A\,\mathrm{diag}(\mu)A` from every middle vertex of
:math:`K_{2,m}`) are computed once. Injective densities follow by Möbius inversion
over the partitions of :math:`V(F)`. Pattern conventions (loops refused, isolated vertices
allowed): :mod:`graphon.patterns`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import Tensor

from graphdata.errors import GraphDataError
from graphon._elimination import Plan, contract, make_plan
from graphon._validation import (
    check_adjacency,
    check_int,
    check_real,
    check_signal,
    check_weights,
)
from graphon.patterns import Pattern, PatternLike, as_pattern

__all__ = ["hom_density", "inj_density", "rooted_hom_density", "estimate_cost", "CostEstimate"]

#: Default budget of multiply-adds for one exact density (about a minute on a laptop CPU).
MAX_COST = 2e11


@dataclass(frozen=True)
class _Network:
    """A pattern that may carry loops (quotients in the Möbius inversion)."""

    num_vertices: int
    edges: tuple[tuple[int, int, int], ...]
    loops: tuple[int, ...]
    exponents: tuple[tuple[int, ...], ...] | None

    @classmethod
    def of(cls, pattern: Pattern) -> _Network:
        return cls(
            pattern.num_vertices, pattern.edges, (0,) * pattern.num_vertices, pattern.exponents
        )

    def scopes(self) -> list[tuple[int, ...]]:
        return [(u, v) for u, v, _ in self.edges] + [(v,) for v in range(self.num_vertices)]


@dataclass(frozen=True)
class CostEstimate:
    """The cost of an exact density: elimination width, multiply-adds and largest factor.

    Attributes:
        width: Width of the min-fill order (an upper bound on the treewidth, exact if <= 2).
        cost: Multiply-adds for one graph (summed over partitions for injective densities).
        peak_entries: Entries of the largest intermediate factor (after slicing).
    """

    width: int
    cost: float
    peak_entries: float


def _plan(network: _Network, n: int, keep: tuple[int, ...] = (), batch: int = 1) -> Plan:
    return make_plan(network.num_vertices, network.scopes(), n, keep, batch)


def _partitions(items: list[int]) -> Iterator[list[list[int]]]:
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in _partitions(rest):
        yield [[first], *part]
        for i in range(len(part)):
            yield [*part[:i], [first, *part[i]], *part[i + 1 :]]


def _quotients(pattern: Pattern) -> Iterator[tuple[float, _Network]]:
    """Yield (Möbius coefficient, F/P) over all partitions P of V(F)."""
    for blocks in _partitions(list(range(pattern.num_vertices))):
        where = {v: b for b, block in enumerate(blocks) for v in block}
        edges: dict[tuple[int, int], int] = {}
        loops = [0] * len(blocks)
        for u, v, m in pattern.edges:
            a, b = sorted((where[u], where[v]))
            if a == b:
                loops[a] += m
            else:
                edges[(a, b)] = edges.get((a, b), 0) + m
        exps = None
        if pattern.exponents is not None:
            exps = tuple(
                tuple(sum(c) for c in zip(*(pattern.exponents[v] for v in block)))
                for block in blocks
            )
        coef = math.prod((-1) ** (len(b) - 1) * math.factorial(len(b) - 1) for b in blocks)
        net = _Network(
            len(blocks), tuple((a, b, m) for (a, b), m in sorted(edges.items())), tuple(loops), exps
        )
        yield float(coef), net


def _factors(
    network: _Network, adj: Tensor, weights: Tensor, signal: Tensor | None, root: int | None
) -> list[tuple[tuple[int, ...], Tensor]]:
    """Edge factors ``A^m`` [B, n, n] and vertex factors [B, n] of the network."""
    factors: list[tuple[tuple[int, ...], Tensor]] = [
        ((u, v), adj if m == 1 else adj.pow(m)) for u, v, m in network.edges
    ]
    diag = torch.diagonal(adj, dim1=-2, dim2=-1)  # [B, n]
    for v in range(network.num_vertices):
        g = torch.ones_like(weights) if v == root else weights
        if network.loops[v]:
            g = g * diag.pow(network.loops[v])
        if network.exponents is not None and any(network.exponents[v]):
            powers = torch.tensor(network.exponents[v], dtype=adj.dtype, device=adj.device)
            g = g * signal.pow(powers).prod(-1)  # type: ignore[union-attr]  # [B, n]
        factors.append(((v,), g))
    return factors


def _scaled(a: Tensor, sig: Tensor | None) -> tuple[Tensor, Tensor | None, Tensor, Tensor | None]:
    """Float64 ``A / s_b`` and ``x / c_bc`` with ``s_b = max |A_b|``, ``c_bc = max |x_bc|``."""
    a64 = a.double()
    s = a64.abs().amax(dim=(-2, -1))  # [B]
    s = torch.where(s > 0, s, torch.ones_like(s))
    scaled_sig, c = None, None
    if sig is not None:
        x64 = sig.double()
        c = x64.abs().amax(dim=1)  # [B, C]
        c = torch.where(c > 0, c, torch.ones_like(c))
        scaled_sig = x64 / c[:, None, :]
    return a64 / s[:, None, None], scaled_sig, s, c


def _log_scale(network: _Network, s: Tensor, c: Tensor | None) -> Tensor:
    r""":math:`\log` of the factor the scaling removed: :math:`M \log s_b + \sum_c D_c \log c_{bc}`.

    :math:`M` counts edge multiplicities (loops included) and :math:`D_c` the exponents of
    channel :math:`c`; both are the same for every quotient of a pattern, so one factor serves
    the whole Möbius sum of :func:`inj_density`.
    """
    total = sum(m for _, _, m in network.edges) + sum(network.loops)
    out = total * s.log()  # [B]
    if c is not None and network.exponents is not None:
        powers = torch.tensor(network.exponents, dtype=c.dtype, device=c.device).sum(0)  # [C]
        out = out + (c.log() * powers).sum(-1)
    return out


def _rescale(value: Tensor, log_factor: Tensor, dtype: torch.dtype, where: str) -> Tensor:
    """``value * exp(log_factor)`` (per graph) in ``dtype``; raise if that overflows."""
    shape = (-1,) + (1,) * (value.dim() - 1)
    magnitude = value.abs().log() + log_factor.view(shape)  # -inf where value == 0
    out = (value.sign() * magnitude.exp()).to(dtype)
    if not bool(torch.isfinite(out).all()):
        worst = float(magnitude.max()) / math.log(10)
        raise GraphDataError(
            f"{where}: the density overflows {dtype} (about 10^{worst:.0f}, the largest is "
            f"{torch.finfo(dtype).max:.3g}); rescale adj or the signal (t scales as "
            "max|A|^(edges) * max|x|^(exponents))"
            + ("" if dtype == torch.float64 else ", or pass adj.double()")
        )
    return out


def _prepare(
    pattern: PatternLike, adj: Tensor, signal: Tensor | None, exponents: object
) -> tuple[Pattern, Tensor, bool, Tensor | None]:
    """Check the inputs of a density; return the pattern, ``[B, N, N]``, batched, ``[B, N, C]``."""
    pat = as_pattern(pattern, exponents)
    batched_adj, batched = check_adjacency(adj)
    sig = check_signal(signal, batched_adj, batched)
    if pat.exponents is not None and sig is None:
        raise GraphDataError("signal: the pattern has vertex exponents, so pass a signal")
    if pat.exponents is None and sig is not None:
        raise GraphDataError(
            "exponents: a signal was given but the pattern has no vertex exponents; pass "
            "exponents=[...] (one per vertex) or drop the signal"
        )
    if sig is not None and sig.size(-1) != pat.channels:
        raise GraphDataError(
            f"signal: the exponents refer to {pat.channels} channel(s), the signal has "
            f"{sig.size(-1)}; give one exponent per channel"
        )
    return pat, batched_adj, batched, sig


def _refuse(pat: Pattern, cost: float, width: int, n: int, bsz: int, max_cost: float) -> None:
    check_real(
        "max_cost", max_cost, low=0.0, low_open=True, fix="pass a positive budget, e.g. 2e11"
    )
    if cost > max_cost:
        raise GraphDataError(
            f"pattern {pat.name!r} ({pat.num_vertices} vertices, elimination width {width}): "
            f"the exact density needs about {cost:.3g} multiply-adds (~n^{width + 1} with "
            f"n={n}, batch {bsz}), over max_cost={max_cost:.3g}. Use "
            "graphon.monte_carlo_density for an estimate with a confidence interval, or raise "
            "max_cost"
        )


def hom_density(
    pattern: PatternLike,
    adj: Tensor,
    signal: Tensor | None = None,
    *,
    exponents: object = None,
    mask: Tensor | None = None,
    node_weights: Tensor | None = None,
    max_cost: float = MAX_COST,
) -> Tensor:
    r"""Homomorphism density :math:`t((F, d), (A, x))` of weighted graphs (module formula).

    With ``mask`` the measure is :math:`\mu_i = \mathbb{1}[i \text{ real}]/n_b` per graph, so
    padded batches of different sizes give each graph's own density.

    Args:
        pattern: A :data:`~graphon.patterns.PatternLike` (name, networkx graph, edge list).
        adj: Symmetric weights ``[N, N]`` or ``[B, N, N]`` (floating; float64 for oracles).
        signal: Node signal ``[N]``/``[N, C]`` (``[B, N]``/``[B, N, C]``), needed iff the
            pattern has exponents.
        exponents: Vertex exponents :math:`d` (see :func:`~graphon.patterns.as_pattern`).
        mask: Bool ``[B, N]`` marking real nodes. Default: all real.
        node_weights: Node measures :math:`\mu` ``[N]`` or ``[B, N]`` summing to 1 (e.g. block
            sizes of a step graphon). Default uniform. At most one of ``mask``/``node_weights``.
        max_cost: Refuse (never start) above this many multiply-adds. Default ``2e11``.

    Returns:
        The densities, ``[B]`` or a scalar tensor, dtype of ``adj``.

    Raises:
        GraphDataError: On bad input (NaN or inf in ``adj``, the signal or the measures among
            them), when the estimated cost exceeds ``max_cost``, or when the density itself
            overflows the dtype of ``adj``.

    Overflow: inputs are finite, so a non-finite sum is an overflow of the products. The sum
    is then recomputed in float64 on :math:`A / \max|A|` and :math:`x / \max|x|` (every
    partial sum bounded by 1) and multiplied back by :math:`\max|A|^{M} \prod_c
    \max|x_c|^{D_c}` in log space (:math:`M` edge multiplicities, :math:`D_c` exponents); a
    result beyond the dtype's range raises rather than returning ``inf`` (the same holds for
    :func:`rooted_hom_density` and :func:`inj_density`).

    Examples:
        >>> hom_density("edge", torch.ones(4, 4) - torch.eye(4)).item()  # 1 - 1/n
        0.75
    """
    pat, a, batched, sig = _prepare(pattern, adj, signal, exponents)
    weights = check_weights(node_weights, mask, a, batched)
    net = _Network.of(pat)
    plan = _plan(net, a.size(1), batch=a.size(0))
    _refuse(pat, plan.cost * a.size(0), plan.width, a.size(1), a.size(0), max_cost)
    value = contract(_factors(net, a, weights, sig, None), plan)  # [B]
    if not bool(torch.isfinite(value).all()):  # finite inputs: an overflow, redo it scaled
        a64, sig64, s, c = _scaled(a, sig)
        value = contract(_factors(net, a64, weights.double(), sig64, None), plan)
        value = _rescale(value, _log_scale(net, s, c), a.dtype, "hom_density")
    return value if batched else value[0]


def rooted_hom_density(
    pattern: PatternLike,
    adj: Tensor,
    signal: Tensor | None = None,
    *,
    root: int,
    exponents: object = None,
    mask: Tensor | None = None,
    node_weights: Tensor | None = None,
    max_cost: float = MAX_COST,
) -> Tensor:
    r"""Rooted densities: the homomorphism sum with the root pinned to each node.

    .. math::
        r_i = \sum_{\varphi:\ \varphi(\rho) = i} x_i^{d_\rho} \prod_{v \ne \rho}
        \mu_{\varphi(v)} x_{\varphi(v)}^{d_v} \prod_{uv \in E(F)}
        A_{\varphi(u)\varphi(v)}^{m_{uv}}, \qquad t = \sum_i \mu_i r_i.

    For the triangle with :math:`d = (1,1,1)`, :math:`r_i = n^{-2}\sum_{j,k} A_{ij} A_{jk}
    A_{ki} x_i x_j x_k`, the node target of Levin et al. (NeurIPS 2025).

    Args:
        pattern: The pattern.
        adj: Symmetric weights ``[N, N]`` or ``[B, N, N]``.
        signal: Node signal, needed iff the pattern has exponents.
        root: The pinned vertex :math:`\rho`, an index into the pattern's vertex order.
        exponents: Vertex exponents :math:`d`.
        mask: Bool ``[B, N]`` marking real nodes (padded nodes get an :math:`r_i` of weight 0).
        node_weights: Node measures ``[N]`` or ``[B, N]``.
        max_cost: Refusal threshold in multiply-adds. Default ``2e11``.

    Returns:
        ``[B, N]`` or ``[N]``.

    Examples:
        >>> rooted_hom_density("path3", torch.ones(3, 3), root=1).tolist()
        [1.0, 1.0, 1.0]
    """
    pat, a, batched, sig = _prepare(pattern, adj, signal, exponents)
    if isinstance(root, bool) or not isinstance(root, int) or not 0 <= root < pat.num_vertices:
        raise GraphDataError(f"root: expected a vertex in [0, {pat.num_vertices}), got {root!r}")
    weights = check_weights(node_weights, mask, a, batched)
    net = _Network.of(pat)
    plan = _plan(net, a.size(1), keep=(root,), batch=a.size(0))
    _refuse(pat, plan.cost * a.size(0), plan.width, a.size(1), a.size(0), max_cost)
    value = contract(_factors(net, a, weights, sig, root), plan, keep=(root,))  # [B, N]
    if not bool(torch.isfinite(value).all()):  # finite inputs: an overflow, redo it scaled
        a64, sig64, s, c = _scaled(a, sig)
        value = contract(_factors(net, a64, weights.double(), sig64, root), plan, keep=(root,))
        value = _rescale(value, _log_scale(net, s, c), a.dtype, "rooted_hom_density")
    return value if batched else value[0]


def inj_density(
    pattern: PatternLike,
    adj: Tensor,
    signal: Tensor | None = None,
    *,
    exponents: object = None,
    mask: Tensor | None = None,
    max_cost: float = MAX_COST,
) -> Tensor:
    r"""Injective density :math:`t_{\mathrm{inj}} = \mathrm{inj}(F, G)/(n)_{|V(F)|}`.

    .. math::
        \mathrm{inj}(F, G) = \sum_{P} \mu(\hat 0, P)\, \mathrm{hom}(F/P, G), \qquad
        \mu(\hat 0, P) = \prod_{B \in P} (-1)^{|B|-1} (|B| - 1)!,

    over the partitions :math:`P` of :math:`V(F)` (Lovász 2012, Section 5.2.3); merged
    endpoints of an edge read the diagonal :math:`A_{ii}^m`. For simple :math:`F`,
    :math:`\mathbb{E}[t_{\mathrm{inj}}(F, \mathbb{G}(n, W))] = t(F, W)`.

    Args:
        pattern: The pattern (at most 9 vertices: Bell(9) = 21147 quotients).
        adj: Symmetric weights ``[N, N]`` or ``[B, N, N]``.
        signal: Node signal, needed iff the pattern has exponents.
        exponents: Vertex exponents :math:`d`.
        mask: Bool ``[B, N]`` marking real nodes; :math:`n_b` counts them.
        max_cost: Refusal threshold in multiply-adds, summed over quotients. Default ``2e11``.

    Returns:
        ``[B]`` or a scalar tensor.

    Raises:
        GraphDataError: Where some graph has fewer real nodes :math:`n_b` than :math:`|V(F)|`:
            :math:`(n_b)_{|V(F)|} = 0` and no injective map exists, so the density is
            :math:`0/0` (formerly ``nan``, which must never be a result).

    Examples:
        >>> inj_density("edge", torch.ones(4, 4) - torch.eye(4)).item()
        1.0
    """
    pat, a, batched, sig = _prepare(pattern, adj, signal, exponents)
    if pat.num_vertices > 9:
        raise GraphDataError(
            f"pattern: injective densities need Bell(|V|) quotients; {pat.num_vertices} vertices "
            "is too many. Use graphon.monte_carlo_density(..., injective=True)"
        )
    counts = check_weights(None, mask, a, batched)
    sizes = (counts > 0).sum(-1).to(a.dtype)  # [B] real nodes n_b
    small = (sizes < pat.num_vertices).nonzero().flatten().tolist()
    if small:  # no injective map exists and (n)_k = 0: 0 / 0 has no value
        got = ", ".join(f"graph {i}: {int(sizes[i])}" for i in small[:5])
        raise GraphDataError(
            f"adj: the injective density of a {pat.num_vertices}-vertex pattern needs at least "
            f"{pat.num_vertices} real nodes per graph (with fewer, no injective map exists and "
            f"(n)_k = 0, so it is 0/0), got {len(small)} graph(s) with fewer ({got}). Drop those "
            "graphs from the batch, or use hom_density, which is defined for every n"
        )
    counts = (counts > 0).to(a.dtype)  # measure 1 per real node: plain counts
    has_loops = bool(torch.diagonal(a, dim1=-2, dim2=-1).ne(0).any())
    n, bsz = a.size(1), a.size(0)
    terms = [(c, q) for c, q in _quotients(pat) if has_loops or not any(q.loops)]
    plans = [_plan(q, n, batch=bsz) for _, q in terms]
    total_cost = sum(p.cost for p in plans) * bsz
    _refuse(pat, total_cost, max(p.width for p in plans), n, bsz, max_cost)
    falling = torch.ones_like(sizes)
    for j in range(pat.num_vertices):
        falling = falling * (sizes - j)
    inj = torch.zeros(bsz, dtype=a.dtype, device=a.device)
    for (coef, q), plan in zip(terms, plans):
        inj = inj + coef * contract(_factors(q, a, counts, sig, None), plan)
    density = inj / falling.clamp_min(1)
    if not bool(torch.isfinite(density).all()):  # finite inputs: an overflow, redo it scaled
        a64, sig64, s, c = _scaled(a, sig)
        inj = torch.zeros(bsz, dtype=torch.float64, device=a.device)
        for (coef, q), plan in zip(terms, plans):
            inj = inj + coef * contract(_factors(q, a64, counts.double(), sig64, None), plan)
        density = inj / falling.double().clamp_min(1)
        density = _rescale(density, _log_scale(_Network.of(pat), s, c), a.dtype, "inj_density")
    return density if batched else density[0]


def estimate_cost(pattern: PatternLike, n: int, *, injective: bool = False) -> CostEstimate:
    r"""The cost of the exact density of ``pattern`` on an ``n``-node graph, without running it.

    Args:
        pattern: The pattern.
        n: The number of nodes.
        injective: Cost of :func:`inj_density` (all quotients, loopless graph). Default ``False``.

    Returns:
        A :class:`CostEstimate`.

    Examples:
        >>> estimate_cost("triangle", 100).width, estimate_cost("k4", 10).width
        (2, 3)
    """
    pat = as_pattern(pattern)
    check_int("n", n, 1)
    if injective and pat.num_vertices > 9:  # Bell(|V|) quotients: enumerating them would hang
        raise GraphDataError(
            f"pattern: injective densities need Bell(|V|) quotients; {pat.num_vertices} vertices "
            "is too many (at most 9). Use graphon.monte_carlo_density(..., injective=True)"
        )
    if injective:
        plans = [_plan(q, n) for _, q in _quotients(pat) if not any(q.loops)]
    else:
        plans = [_plan(_Network.of(pat), n)]
    return CostEstimate(
        width=max(p.width for p in plans),
        cost=float(sum(p.cost for p in plans)),
        peak_entries=float(max(p.peak for p in plans)),
    )
