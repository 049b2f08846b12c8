"""Private variable elimination for homomorphism sums (one index per pattern vertex).

A homomorphism sum is a tensor network: one ``[B, n, n]`` factor per vertex pair with edges
(``A^m``), one ``[B, n]`` factor per vertex (measure, signal powers, loop weights). Eliminating
the vertices one at a time along a min-fill order contracts each vertex's factors with one
``torch.einsum`` (pairwise, left to right, so two-factor steps are batched matmuls); a step whose
factors span ``s`` vertices costs ``n^s``, so the whole sum costs ``O(n^(w+1))`` with ``w`` the
width of the order (the treewidth for patterns of treewidth <= 2, where min-fill is optimal).
When an intermediate factor would exceed the memory budget, one vertex's range is sliced into
chunks and the network is contracted chunk by chunk (tensor-network slicing): memory drops by
the chunk ratio, cost grows only for steps that do not touch the sliced vertex.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

__all__: list[str] = []

#: Largest intermediate factor, in entries over the batch (2^25 float64 = 256 MiB).
MAX_ENTRIES = 2**25
_LETTERS = "abcdefghijklmnopqrstuvwxy"  # 'z' is the batch index


def min_fill_order(
    num_vertices: int, pairs: set[tuple[int, int]], keep: tuple[int, ...] = ()
) -> tuple[list[int], int]:
    """Greedy min-fill order (ties: min degree, then index) and its width (max neighbours)."""
    nbrs: dict[int, set[int]] = {v: set() for v in range(num_vertices)}
    for u, v in pairs:
        nbrs[u].add(v)
        nbrs[v].add(u)
    order, width = [], 0
    todo = [v for v in range(num_vertices) if v not in keep]
    while todo:

        def fill(v: int) -> tuple[int, int, int]:
            ns = sorted(nbrs[v])
            missing = sum(1 for i, a in enumerate(ns) for b in ns[i + 1 :] if b not in nbrs[a])
            return (missing, len(ns), v)

        v = min(todo, key=fill)
        ns = nbrs.pop(v)
        width = max(width, len(ns))
        for a in ns:
            nbrs[a].discard(v)
            nbrs[a] |= ns - {a}
        todo.remove(v)
        order.append(v)
    return order, width


@dataclass(frozen=True)
class Plan:
    """An elimination order with its cost (multiply-adds per graph) and slicing."""

    order: tuple[int, ...]
    width: int
    cost: float
    peak: float
    sliced: int | None
    chunk: int


def _simulate(
    scopes: list[tuple[int, ...]], order: list[int], dims: dict[int, int], chunks: int
) -> tuple[float, float, int]:
    """Cost, peak entries and width of eliminating ``order`` (per chunk x chunks)."""
    live = [set(s) for s in scopes]
    cost, peak, width = 0.0, 0.0, 0
    for v in order:
        involved = [s for s in live if v in s]
        live = [s for s in live if v not in s]
        union = set().union(*involved) if involved else {v}
        size = math.prod(dims[u] for u in union)
        cost += size * max(1, len(involved) - 1)
        peak = max(
            peak, size / dims[v], max((math.prod(dims[u] for u in s) for s in involved), default=0)
        )
        width = max(width, len(union) - 1)
        live.append(union - {v})
    return cost * chunks, peak, width


def make_plan(
    num_vertices: int,
    scopes: list[tuple[int, ...]],
    n: int,
    keep: tuple[int, ...] = (),
    batch: int = 1,
) -> Plan:
    """Choose the min-fill order and, if its peak exceeds the budget, a sliced vertex.

    The budget is :data:`MAX_ENTRIES` entries over the whole batch of ``batch`` graphs.
    """
    budget = max(1, MAX_ENTRIES // batch)
    pairs = {(s[0], s[1]) for s in scopes if len(s) == 2}
    order, _ = min_fill_order(num_vertices, pairs, keep)
    dims = dict.fromkeys(range(num_vertices), n)
    cost, peak, width = _simulate(scopes, order, dims, 1)
    best = Plan(tuple(order), width, cost, peak, None, n)
    if peak <= budget:
        return best
    chunks = math.ceil(peak / budget)
    chunk = max(1, math.ceil(n / chunks))
    chunks = math.ceil(n / chunk)
    candidates = []
    for s in order:
        cost_s, peak_s, _ = _simulate(scopes, order, {**dims, s: chunk}, chunks)
        candidates.append((peak_s > budget, cost_s, peak_s, s))
    _, cost_s, peak_s, s = min(candidates)
    return Plan(tuple(order), width, cost_s, peak_s, s, chunk) if peak_s < peak else best


def _subscript(scope: tuple[int, ...]) -> str:
    return "z" + "".join(_LETTERS[u] for u in scope)


def _einsum(terms: list[tuple[tuple[int, ...], Tensor]], out: tuple[int, ...]) -> Tensor:
    ordered = sorted(terms, key=lambda t: -len(t[0]))
    hosts: list[int] = []  # indices into ordered of the maximal factors
    nested: list[tuple[int, int]] = []  # (factor, host it lies inside)
    for i, (scope, _) in enumerate(ordered):
        host = next((h for h in hosts if set(scope) <= set(ordered[h][0])), None)
        if host is None:
            hosts.append(i)
        else:
            nested.append((i, host))
    if len(hosts) == 1:
        # One maximal factor: contract everything at once, smallest first, so that the last
        # pair is a matrix-vector or matrix-matrix product (no n^2 elementwise temporary).
        kept = ordered[::-1]
    else:
        # Fold every factor lying inside a larger one into it first (elementwise), so that
        # torch.einsum, which contracts left to right, never widens an intermediate beyond
        # the union of two maximal scopes: a two-factor step is then one batched matmul.
        folded = {h: ordered[h][1] for h in hosts}
        for i, h in nested:
            s, inner = ordered[h][0], ordered[i][0]
            eq = f"{_subscript(s)},{_subscript(inner)}->{_subscript(s)}"
            folded[h] = torch.einsum(eq, folded[h], ordered[i][1])
        kept = [(ordered[h][0], folded[h]) for h in hosts]
    lhs = ",".join(_subscript(s) for s, _ in kept)
    return torch.einsum(f"{lhs}->{_subscript(out)}", *[t for _, t in kept])


def _eliminate(
    factors: list[tuple[tuple[int, ...], Tensor]], order: tuple[int, ...], keep: tuple[int, ...]
) -> Tensor:
    # Common subexpressions: eliminating v from the same tensors wired the same way (up to
    # renaming the other vertices in order) gives the same factor, e.g. every middle vertex of
    # K_{2,m} yields A diag(mu) A. The cache keeps its operands alive, so ids stay unique.
    cache: dict[tuple, tuple[Tensor, list[Tensor]]] = {}
    for v in order:
        involved = [f for f in factors if v in f[0]]
        factors = [f for f in factors if v not in f[0]]
        union = sorted(set().union(*(s for s, _ in involved)) - {v})
        rank = {u: i for i, u in enumerate(union)} | {v: -1}
        key = tuple(sorted((id(t), tuple(rank[u] for u in s)) for s, t in involved))
        if key not in cache:
            cache[key] = (_einsum(involved, tuple(union)), [t for _, t in involved])
        factors.append((tuple(union), cache[key][0]))
    return _einsum(factors, keep)  # [B] or [B, n] for a kept root


def contract(
    factors: list[tuple[tuple[int, ...], Tensor]], plan: Plan, keep: tuple[int, ...] = ()
) -> Tensor:
    """Sum the network along ``plan``; factors are ``(scope, [B, n, ...])`` pairs."""
    if plan.sliced is None:
        return _eliminate(factors, plan.order, keep)
    s, total = plan.sliced, None
    n = next(t.size(1 + scope.index(s)) for scope, t in factors if s in scope)
    for start in range(0, n, plan.chunk):
        width = min(plan.chunk, n - start)
        part = [
            (scope, t.narrow(1 + scope.index(s), start, width) if s in scope else t)
            for scope, t in factors
        ]
        value = _eliminate(part, plan.order, keep)
        total = value if total is None else total + value
    return total  # type: ignore[return-value]
