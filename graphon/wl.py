r"""Colour refinement (1-WL) and k-WL, folklore and oblivious, on weighted graphs and graphons.

**Indexing convention.** ``variant="folklore"`` is k-FWL: k-tuples refined by
:math:`\big(c(\mathbf v), \{\!\{(c(\mathbf v[1 \leftarrow w]), \dots,
c(\mathbf v[k \leftarrow w])) : w\}\!\}\big)`; ``k=1`` is colour refinement,
:math:`\big(c(v), \{\!\{(c(w), A_{vw}) : w\}\!\}\big)`. ``variant="oblivious"`` is k-OWL:
:math:`\big(c(\mathbf v), M_1, \dots, M_k\big)` with :math:`M_i = \{\!\{c(\mathbf v[i
\leftarrow w]) : w\}\!\}`. Then k-FWL :math:`\equiv` (k+1)-OWL, colour refinement :math:`\equiv`
2-OWL, and k-FWL equivalence :math:`\iff` equal homomorphism counts from all patterns of
treewidth :math:`\le k` (Dell, Grohe & Rattan, "Lovász Meets Weisfeiler and Leman", ICALP 2018,
arXiv 1802.08876). Atomic types of graph tuples: node signals, equalities
:math:`v_i = v_j` and edge weights :math:`A_{v_i v_j}`.

**Graphon-signals** (Böker, "Weisfeiler-Leman Indistinguishability of Graphons", arXiv
2112.09001): tuples of points, atomic types :math:`W(x_i, x_j)` and :math:`f(x_i)` (no
equalities, a null event), multisets replaced by distributions over :math:`y \sim U[0,1]`.
Here graphons are step functions (exactly for :class:`~graphon.graphons.StepGraphon`, else the
midpoint approximation on ``resolution`` cells), so the distributions weigh blocks by their
measures; equivalence then means equal densities of all multigraphs of treewidth :math:`\le k`.

Colours are canonical 64-bit hashes (:mod:`graphon._hashing`), so separate calls compare; the
algorithm runs in NumPy on the CPU (inputs on other devices are copied there).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from graphdata.errors import GraphDataError
from graphon._hashing import WEIGHT_DECIMALS, combine, multiset, quantize
from graphon._validation import (
    check_adjacency,
    check_choice,
    check_graphon_values,
    check_int,
    check_signal_values,
)
from graphon.graphons import Graphon, GraphonSignal, StepGraphon

__all__ = ["WLResult", "wl_refine", "wl_equivalent", "graphon_wl_refine", "graphon_wl_equivalent"]

#: Largest number of (tuple, w) pairs per refinement round, n^(k+1).
MAX_PAIRS = 2**26


@dataclass(frozen=True)
class WLResult:
    """Stable colourings of several inputs refined jointly.

    Attributes:
        histograms: One dict per input: colour -> number of k-tuples (graphs) or their measure
            (graphons, rounded to 9 decimals).
        iterations: Refinement rounds until the joint partition stopped splitting.
        num_colors: Distinct colours over all inputs at the end.
    """

    histograms: list[dict[int, float]]
    iterations: int
    num_colors: int


@dataclass(frozen=True)
class _Item:
    adj: np.ndarray  # [n, n] float64
    signal: np.ndarray  # [n] uint64 signal hash
    weights: np.ndarray  # [n] per-node weight (1 for graphs, measure for graphons)


def _initial(item: _Item, k: int, equality: bool, decimals: int) -> np.ndarray:
    n = item.adj.shape[0]
    idx = np.indices((n,) * k)  # [k, n, ..., n]
    parts = [item.signal[idx[i]] for i in range(k)]
    for i in range(k):
        for j in range(k):
            if i == j and not equality:
                continue  # a graph tuple reads its loops; a graphon's diagonal is null
            parts.append(quantize(item.adj[idx[i], idx[j]], decimals))
            if equality and i < j:
                parts.append((idx[i] == idx[j]).astype(np.uint64))
    return combine(*parts) if len(parts) > 1 else combine(parts[0])


def _replaced(colors: np.ndarray, i: int) -> np.ndarray:
    """``D[v_1..v_k, w] = c(v[i <- w])`` as a broadcast view, shape ``[n]*(k+1)``."""
    k, n = colors.ndim, colors.shape[0]
    moved = np.expand_dims(np.moveaxis(colors, i, -1), i)
    return np.broadcast_to(moved, (n,) * (k + 1))


def _round(item: _Item, colors: np.ndarray, variant: str, decimals: int) -> np.ndarray:
    k, n = colors.ndim, colors.shape[0]
    if k == 1:
        keys = combine(colors[None, :], quantize(item.adj, decimals))  # [v, w]
        return combine(colors, multiset(keys, item.weights))
    if variant == "folklore":
        keys = combine(*[_replaced(colors, i) for i in range(k)]).reshape(-1, n)
        return combine(colors, multiset(keys, item.weights).reshape(colors.shape))
    sets = [multiset(_replaced(colors, i).reshape(-1, n), item.weights) for i in range(k)]
    return combine(colors, *[s.reshape(colors.shape) for s in sets])


def _histogram(item: _Item, colors: np.ndarray, graphon: bool) -> dict[int, float]:
    k = colors.ndim
    mass = np.ones(colors.shape)
    for i in range(k):
        shape = [1] * k
        shape[i] = -1
        mass = mass * item.weights.reshape(shape)
    keys, inverse = np.unique(colors.reshape(-1), return_inverse=True)
    sums = np.bincount(inverse, weights=mass.reshape(-1))
    if graphon:
        return {int(c): round(float(s), WEIGHT_DECIMALS) for c, s in zip(keys, sums)}
    return {int(c): int(round(s)) for c, s in zip(keys, sums)}


def _refine(
    items: Sequence[_Item],
    k: int,
    variant: str,
    equality: bool,
    decimals: int,
    max_iter: int | None,
) -> WLResult:
    check_int("k", k, 1)
    check_int("decimals", decimals, 0, 15)
    if max_iter is not None:
        check_int("max_iter", max_iter, 1)
    check_choice("variant", variant, ("folklore", "oblivious"))
    if variant == "oblivious" and k < 2:
        raise GraphDataError("k: oblivious WL needs k >= 2 (2-OWL = colour refinement)")
    biggest = max(item.adj.shape[0] for item in items)
    if biggest ** (k + 1) > MAX_PAIRS:
        raise GraphDataError(
            f"k: {k}-WL on {biggest} nodes needs {biggest}^{k + 1} pairs per round, over "
            f"{MAX_PAIRS}; lower k or the resolution"
        )
    colors = [_initial(item, k, equality, decimals) for item in items]
    count = len(np.unique(np.concatenate([c.reshape(-1) for c in colors])))
    rounds = 0
    limit = max_iter if max_iter is not None else biggest**k + 1
    while rounds < limit:
        new = [_round(item, c, variant, decimals) for item, c in zip(items, colors)]
        new_count = len(np.unique(np.concatenate([c.reshape(-1) for c in new])))
        rounds += 1
        if new_count == count:
            break  # the joint partition is stable (new colours only refine old ones)
        colors, count = new, new_count
    hists = [_histogram(item, c, not equality) for item, c in zip(items, colors)]
    return WLResult(hists, rounds, count)


def _signal_hash(signal: np.ndarray | None, n: int, decimals: int) -> np.ndarray:
    if signal is None:
        return np.zeros(n, dtype=np.uint64)
    signal = signal.reshape(n, -1)
    return combine(*[quantize(signal[:, c], decimals) for c in range(signal.shape[1])])


def wl_refine(
    graphs: Sequence[Tensor],
    signals: Sequence[Tensor | None] | None = None,
    *,
    k: int = 1,
    variant: str = "folklore",
    decimals: int = 9,
    max_iter: int | None = None,
) -> WLResult:
    """Refine the colourings of weighted graphs jointly until stable (see module docstring).

    Args:
        graphs: Symmetric weighted adjacencies ``[N_g, N_g]`` (sizes may differ).
        signals: One node signal ``[N_g]``/``[N_g, C]`` or ``None`` per graph. Default none.
        k: Tuple order (``1`` = colour refinement). Default ``1``.
        variant: ``"folklore"`` (default) or ``"oblivious"`` (needs ``k >= 2``).
        decimals: Edge weights and signals are compared after rounding to this. Default ``9``.
        max_iter: Cap on refinement rounds. Default: until stable.

    Returns:
        A :class:`WLResult` with one histogram over k-tuples per graph.

    Examples:
        >>> import networkx as nx
        >>> c6 = torch.tensor(nx.to_numpy_array(nx.cycle_graph(6)))
        >>> two_k3 = torch.tensor(nx.to_numpy_array(nx.disjoint_union(nx.complete_graph(3),
        ...     nx.complete_graph(3))))
        >>> r = wl_refine([c6, two_k3])
        >>> r.histograms[0] == r.histograms[1]
        True
    """
    if isinstance(graphs, Tensor):
        graphs = list(graphs) if graphs.dim() == 3 else [graphs]
    signals = [None] * len(graphs) if signals is None else list(signals)
    if len(signals) != len(graphs):
        raise GraphDataError(f"signals: expected {len(graphs)} entries, got {len(signals)}")
    items: list[_Item] = []
    for adj, sig in zip(graphs, signals):
        checked, batched = check_adjacency(adj, name="graphs")
        if batched:
            raise GraphDataError("graphs: expected a list of [N, N] matrices")
        a = checked[0].detach().cpu().double().numpy()
        s = None if sig is None else torch.as_tensor(sig).detach().cpu().double().numpy()
        if s is not None and (s.ndim not in (1, 2) or s.shape[0] != a.shape[0]):
            raise GraphDataError(
                f"signals: expected [{a.shape[0]}] or [{a.shape[0]}, C] per graph, got shape "
                f"{s.shape}"
            )
        if s is not None and not np.isfinite(s).all():
            raise GraphDataError(
                f"signals: expected finite values, got {int((~np.isfinite(s)).sum())} NaN or "
                f"inf entries in the signal of graph {len(items)}; impute or drop them (NaN "
                "would hash to one colour and hide the difference)"
            )
        items.append(_Item(a, _signal_hash(s, a.shape[0], decimals), np.ones(a.shape[0])))
    return _refine(items, k, variant, True, decimals, max_iter)


def wl_equivalent(
    adj1: Tensor,
    adj2: Tensor,
    signal1: Tensor | None = None,
    signal2: Tensor | None = None,
    *,
    k: int = 1,
    variant: str = "folklore",
    decimals: int = 9,
) -> bool:
    """Whether two weighted graph-signals get equal stable k-WL colour histograms.

    Args:
        adj1: The first graph ``[N1, N1]``.
        adj2: The second graph ``[N2, N2]`` (sizes may differ).
        signal1: Signal of the first graph or ``None``.
        signal2: Signal of the second graph or ``None``.
        k: Tuple order. Default ``1``.
        variant: ``"folklore"`` (default) or ``"oblivious"``.
        decimals: Rounding of weights and signals. Default ``9``.

    Returns:
        ``True`` if k-WL does not distinguish them.
    """
    res = wl_refine([adj1, adj2], [signal1, signal2], k=k, variant=variant, decimals=decimals)
    return res.histograms[0] == res.histograms[1]


def _step(source: Graphon | GraphonSignal, resolution: int, decimals: int) -> _Item:
    w = source.graphon if isinstance(source, GraphonSignal) else source
    if not isinstance(w, Graphon):
        raise GraphDataError(f"graphons: expected Graphon or GraphonSignal, got {type(w).__name__}")
    step_values = source.step_values if isinstance(source, GraphonSignal) else None
    exact = not isinstance(source, GraphonSignal) or step_values is not None
    if isinstance(w, StepGraphon) and exact:
        adj, weights = w.probs.cpu().numpy(), w.measures.cpu().numpy()
        sig = None if step_values is None else step_values.cpu().numpy()
    else:
        x = (torch.arange(resolution, dtype=torch.float64) + 0.5) / resolution
        values = w.matrix(x).double()  # [R, R]
        check_graphon_values(values, x[:, None], x[None, :], graphon=w.name, where="on the WL grid")
        adj = values.numpy()
        weights = np.full(resolution, 1.0 / resolution)
        sig = None
        if isinstance(source, GraphonSignal):
            signal = source.signal(x).double()  # [R, C]
            check_signal_values(signal, x, graphon=source.name, where="on the WL grid")
            sig = signal.numpy()
    return _Item(adj, _signal_hash(sig, adj.shape[0], decimals), weights)


def graphon_wl_refine(
    graphons: Sequence[Graphon | GraphonSignal],
    *,
    k: int = 1,
    variant: str = "folklore",
    resolution: int = 64,
    decimals: int = 9,
    max_iter: int | None = None,
) -> WLResult:
    """k-WL of graphon-signals through their step functions (see module docstring).

    Args:
        graphons: Graphons or graphon-signals; step graphons (with step signals) are used as
            they are, others on the midpoint grid of ``resolution`` cells.
        k: Tuple order. Default ``1``.
        variant: ``"folklore"`` (default) or ``"oblivious"``.
        resolution: Cells of the midpoint approximation. Default ``64``.
        decimals: Rounding of values. Default ``9``.
        max_iter: Cap on refinement rounds. Default: until stable.

    Returns:
        A :class:`WLResult` whose histograms hold measures of colour classes.
    """
    check_int("resolution", resolution, 1)
    items = [_step(g, resolution, decimals) for g in graphons]
    return _refine(items, k, variant, False, decimals, max_iter)


def graphon_wl_equivalent(
    first: Graphon | GraphonSignal,
    second: Graphon | GraphonSignal,
    *,
    k: int = 1,
    variant: str = "folklore",
    resolution: int = 64,
) -> bool:
    """Whether k-WL on (step approximations of) two graphon-signals gives equal distributions.

    Args:
        first: A graphon or graphon-signal.
        second: Another one.
        k: Tuple order. Default ``1``.
        variant: ``"folklore"`` (default) or ``"oblivious"``.
        resolution: Cells of the midpoint approximation of non-step graphons. Default ``64``.

    Returns:
        ``True`` if the colour distributions agree.

    Examples:
        >>> from graphon.families import sbm
        >>> split = StepGraphon([[0.9, 0.9, 0.1], [0.9, 0.9, 0.1], [0.1, 0.1, 0.9]], [1, 1, 2])
        >>> graphon_wl_equivalent(sbm(2, 0.9, 0.1), split, k=2)
        True
    """
    res = graphon_wl_refine([first, second], k=k, variant=variant, resolution=resolution)
    return res.histograms[0] == res.histograms[1]
