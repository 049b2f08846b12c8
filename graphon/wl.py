r"""Weisfeiler-Leman refinement of weighted graphs and graphons, in two readings of the weights.

**Two 1-WL variants** (``weights=``). Edge weights can be read in two ways. They agree on
loopless 0/1 graphs (:math:`A \circ A = A`) and differ on weighted graphs and graphons:

- ``"multiset"`` (default, the behaviour of earlier releases; multigraph refinement): refine by
  the multiset of (colour, weight) pairs,
  :math:`c'(v) = \big(c(v), \{\!\{(c(w), A_{vw}) : w\}\!\}\big)`; for graphons the distribution
  of :math:`(c(y), W(x, y))` over :math:`y \sim U[0,1]`. Equivalence :math:`\iff` equal densities
  of all *multigraphs* whose simple graph is a tree (treewidth 1): Böker, "Weisfeiler-Leman
  Indistinguishability of Graphons", arXiv 2112.09001. It separates ER(1/2) from the 1/2-regular
  SBM :math:`B = I_2` (double edge: 1/4 vs 1/2) although all their simple-tree densities agree.
- ``"sum"`` (simple-graph colour refinement; k = 1 only): refine by the weight sums into each
  colour class, :math:`c'(v) = \big(c(v), (\sum_{w \in C} A_{vw})_C\big)`; for a step graphon
  :math:`\big(c(k), (\sum_{l : c(l) = C} \lambda_l B_{kl})_C\big)`. The stable colouring is the
  coarsest equitable partition, and equivalence :math:`\iff` fractional isomorphism
  :math:`AX = XB` with :math:`X` doubly stochastic (Tinhofer, "Graph isomorphism and theorems
  of Birkhoff type", Computing 36, 1986, DOI 10.1007/BF02240069; Ramana, Scheinerman & Ullman,
  "Fractional isomorphism of graphs", Discrete Math. 132, 1994, DOI
  10.1016/0012-365X(94)90241-0; for weighted matrices Grohe, Kersting, Mladenov & Selman,
  "Dimension Reduction via Colour Refinement", ESA 2014, arXiv 1307.5697) :math:`\iff` equal
  homomorphism counts from all (simple) trees (0/1 graphs: Dell, Grohe & Rattan, below). For
  graphons: equal densities of all trees :math:`\iff` fractional isomorphism :math:`\iff`
  equal distributions of iterated degree measures, which the sums compute for step graphons
  (Grebík & Rocha, "Fractional isomorphism of graphons", Combinatorica 42, 2022, arXiv
  1909.04742); through the induced step graphon this covers non-negative weighted graphs of
  equal size. Initial colours hold only the signal; loops enter through the sums, as in
  :math:`AX = XB`.

Multiset-equivalence implies sum-equivalence (sums are read off the pairs); the converse fails
(the ER / SBM pair above).

**k-WL** (``weights="multiset"`` only; a sum version with a stated meaning is not known to us).
``variant="folklore"`` is k-FWL: k-tuples refined by :math:`\big(c(\mathbf v),
\{\!\{(c(\mathbf v[1 \leftarrow w]), \dots, c(\mathbf v[k \leftarrow w])) : w\}\!\}\big)`;
``k=1`` is the multiset 1-WL above. ``variant="oblivious"`` is k-OWL: :math:`\big(c(\mathbf v),
M_1, \dots, M_k\big)` with :math:`M_i = \{\!\{c(\mathbf v[i \leftarrow w]) : w\}\!\}`. Then k-FWL
:math:`\equiv` (k+1)-OWL, 1-WL :math:`\equiv` 2-OWL, and on 0/1 graphs k-FWL equivalence
:math:`\iff` equal homomorphism counts from all patterns of treewidth :math:`\le k` (Dell, Grohe
& Rattan, "Lovász Meets Weisfeiler and Leman", ICALP 2018, arXiv 1802.08876). Atomic types of
graph tuples: node signals, equalities :math:`v_i = v_j` and edge weights (loops included).

**Graphon-signals** (Böker): tuples of points, atomic types :math:`W(x_i, x_j)` and
:math:`f(x_i)` (no equalities, a null event), multisets replaced by distributions over
:math:`y \sim U[0,1]`; equivalence means equal densities of all multigraphs of treewidth
:math:`\le k`. Graphons are used as step functions (exactly for
:class:`~graphon.graphons.StepGraphon`, else the midpoint approximation on ``resolution``
cells), so the distributions weigh blocks by their measures.

Colours are canonical 64-bit hashes (:mod:`graphon._hashing`), so separate calls with the same
options compare; weights and signals are rounded to ``decimals``, class sums to
``min(decimals, 9)`` decimals and merged measures to 9 (float sums in different orders differ
in the last bits). The
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
#: The two readings of edge weights (module docstring): Böker's multigraph refinement, and
#: sums per colour class (fractional isomorphism).
WEIGHTS = ("multiset", "sum")


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


def _initial(item: _Item, k: int, weights: str, equality: bool, decimals: int) -> np.ndarray:
    if weights == "sum":
        return combine(item.signal)  # loops are part of the class sums, not a vertex type
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


def _class_sums(item: _Item, colors: np.ndarray, decimals: int) -> np.ndarray:
    """``c'(v) = (c(v), {(C, sum_{w in C} mu_w A_vw) : sums != 0})``, the "sum" 1-WL round."""
    classes, inverse = np.unique(colors, return_inverse=True)  # [m], [n]
    order = np.argsort(inverse, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(inverse[order]) != 0])  # [m]
    # Sum the raw weights and round only the sums: rounding each weight first would put
    # errors of up to n/2 units of the last kept decimal into equal sums of different weights.
    weighted = item.adj * item.weights[None, :]  # [v, w]
    sums = np.add.reduceat(weighted[:, order], starts, axis=1)  # [v, m]
    q = quantize(sums, min(decimals, WEIGHT_DECIMALS))
    element = combine(classes[None, :], q)  # [v, m]
    # A class a node sends no weight to adds nothing: a node's colour depends only on its
    # non-zero sums, not on classes present only in other inputs (no spurious joint splits).
    element[q == 0] = 0
    return combine(colors, element.sum(axis=1, dtype=np.uint64))  # sum wraps mod 2^64


def _round(
    item: _Item, colors: np.ndarray, variant: str, weights: str, decimals: int
) -> np.ndarray:
    k, n = colors.ndim, colors.shape[0]
    if weights == "sum":
        return _class_sums(item, colors, decimals)
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
    weights: str,
    equality: bool,
    decimals: int,
    max_iter: int | None,
) -> WLResult:
    check_int("k", k, 1)
    check_int("decimals", decimals, 0, 15)
    if max_iter is not None:
        check_int("max_iter", max_iter, 1)
    check_choice("variant", variant, ("folklore", "oblivious"))
    check_choice("weights", weights, WEIGHTS)
    if weights == "sum" and k > 1:
        raise GraphDataError(
            f"weights: 'sum' (fractional isomorphism) is colour refinement, k = 1 only, got "
            f"k={k}; pass k=1, or weights='multiset' for k-WL on edge-weight types"
        )
    if variant == "oblivious" and k < 2:
        raise GraphDataError("k: oblivious WL needs k >= 2 (2-OWL = the multiset 1-WL)")
    biggest = max(item.adj.shape[0] for item in items)
    if biggest ** (k + 1) > MAX_PAIRS:
        raise GraphDataError(
            f"k: {k}-WL on {biggest} nodes needs {biggest}^{k + 1} pairs per round, over "
            f"{MAX_PAIRS}; lower k or the resolution"
        )
    colors = [_initial(item, k, weights, equality, decimals) for item in items]
    count = len(np.unique(np.concatenate([c.reshape(-1) for c in colors])))
    rounds = 0
    limit = max_iter if max_iter is not None else biggest**k + 1
    while rounds < limit:
        new = [_round(item, c, variant, weights, decimals) for item, c in zip(items, colors)]
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
    weights: str = "multiset",
    decimals: int = 9,
    max_iter: int | None = None,
) -> WLResult:
    r"""Refine the colourings of weighted graphs jointly until stable (module docstring).

    ``weights="multiset"`` refines by :math:`\{\!\{(c(w), A_{vw}) : w\}\!\}` (Böker, arXiv
    2112.09001; for ``k > 1`` the k-WL of Dell, Grohe & Rattan, arXiv 1802.08876, with
    edge-weight types); ``weights="sum"`` by :math:`(\sum_{w \in C} A_{vw})_C` (colour
    refinement of the weighted graph: its stable colouring is the coarsest equitable partition,
    Tinhofer 1986, DOI 10.1007/BF02240069; Ramana, Scheinerman & Ullman 1994, DOI
    10.1016/0012-365X(94)90241-0; Grohe et al., arXiv 1307.5697). On loopless 0/1 graphs both
    give equal verdicts.

    Args:
        graphs: Symmetric weighted adjacencies ``[N_g, N_g]`` (sizes may differ).
        signals: One node signal ``[N_g]``/``[N_g, C]`` or ``None`` per graph. Default none.
        k: Tuple order (``1`` = 1-WL). Default ``1``.
        variant: ``"folklore"`` (default) or ``"oblivious"`` (needs ``k >= 2``).
        weights: ``"multiset"`` (default, unchanged behaviour: multigraph refinement) or
            ``"sum"`` (fractional isomorphism; ``k = 1`` only).
        decimals: Edge weights and signals are compared after rounding to this, class sums
            after rounding to ``min(decimals, 9)``. Default ``9``.
        max_iter: Cap on refinement rounds. Default: until stable.

    Returns:
        A :class:`WLResult` with one histogram over k-tuples per graph (colours are comparable
        between calls with equal ``k``, ``variant``, ``weights`` and ``decimals``).

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
    if len(graphs) == 0:
        raise GraphDataError("graphs: expected at least one [N, N] matrix, got none")
    signals = [None] * len(graphs) if signals is None else list(signals)
    if len(signals) != len(graphs):
        raise GraphDataError(f"signals: expected {len(graphs)} entries, got {len(signals)}")
    items: list[_Item] = []
    for adj, sig in zip(graphs, signals):
        checked, batched = check_adjacency(adj, name="graphs")
        if batched:
            raise GraphDataError("graphs: expected a list of [N, N] matrices")
        a = checked[0].detach().cpu().double().numpy()
        try:
            s = None if sig is None else torch.as_tensor(sig).detach().cpu().double().numpy()
        except (TypeError, ValueError, RuntimeError) as err:  # strings, None, ragged lists
            raise GraphDataError(
                f"signals: expected a real tensor per graph, got {type(sig).__name__} for graph "
                f"{len(items)} ({err}); encode labels as numbers, e.g. a dict label -> int id"
            ) from None
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
    return _refine(items, k, variant, weights, True, decimals, max_iter)


def wl_equivalent(
    adj1: Tensor,
    adj2: Tensor,
    signal1: Tensor | None = None,
    signal2: Tensor | None = None,
    *,
    k: int = 1,
    variant: str = "folklore",
    weights: str = "multiset",
    decimals: int = 9,
) -> bool:
    r"""Whether two weighted graph-signals get equal stable k-WL colour histograms.

    With ``weights="sum"`` (k = 1): ``True`` iff the graphs are fractionally isomorphic,
    :math:`A_1 X = X A_2` for a doubly stochastic :math:`X`, iff
    :math:`\hom(T, A_1) = \hom(T, A_2)` for every tree :math:`T` (Tinhofer 1986; Ramana,
    Scheinerman & Ullman 1994; Dell, Grohe & Rattan, arXiv 1802.08876; non-negative weights:
    Grebík & Rocha, arXiv 1909.04742, on the induced step graphons). With
    ``weights="multiset"`` and k = 1: Böker's multigraph refinement (arXiv 2112.09001), which
    for loopless graphs of equal size means equal homomorphism densities of all multigraphs
    whose simple graph is a tree (edge multiplicity :math:`m` reads :math:`A^{\circ m}`); it
    implies sum-equivalence. For k >= 2 on 0/1 graphs: equal counts of all patterns of
    treewidth :math:`\le k` with ``variant="folklore"``, :math:`\le k - 1` with
    ``"oblivious"`` (k-OWL = (k-1)-FWL; Dell, Grohe & Rattan). Signals are vertex colours in
    all.

    Args:
        adj1: The first graph ``[N1, N1]``.
        adj2: The second graph ``[N2, N2]`` (sizes may differ).
        signal1: Signal of the first graph or ``None``.
        signal2: Signal of the second graph or ``None``.
        k: Tuple order. Default ``1``.
        variant: ``"folklore"`` (default) or ``"oblivious"``.
        weights: ``"multiset"`` (default) or ``"sum"`` (``k = 1`` only).
        decimals: Rounding of weights and signals. Default ``9``.

    Returns:
        ``True`` if the chosen refinement does not distinguish them.

    Examples:
        >>> loops = torch.eye(2, dtype=torch.float64)  # two looped vertices
        >>> edge = 1 - loops  # one edge: every tree has 2 homomorphisms into either
        >>> wl_equivalent(loops, edge, weights="sum"), wl_equivalent(loops, edge)
        (True, False)
    """
    res = wl_refine(
        [adj1, adj2], [signal1, signal2], k=k, variant=variant, weights=weights, decimals=decimals
    )
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
    weights: str = "multiset",
    resolution: int = 64,
    decimals: int = 9,
    max_iter: int | None = None,
) -> WLResult:
    r"""k-WL of graphon-signals through their step functions (module docstring).

    ``weights="multiset"``: Böker's refinement by the distribution of :math:`(c(y), W(x, y))`,
    :math:`y \sim U[0,1]` (arXiv 2112.09001). ``weights="sum"`` (k = 1): refinement by the
    degree measures :math:`\big(\int_C W(x, y)\,dy\big)_C`, for a step graphon
    :math:`(\sum_{l : c(l) = C} \lambda_l B_{kl})_C`, whose stable distribution is Grebík &
    Rocha's distribution of iterated degree measures (arXiv 1909.04742).

    Args:
        graphons: Graphons or graphon-signals; step graphons (with step signals) are used as
            they are, others on the midpoint grid of ``resolution`` cells.
        k: Tuple order. Default ``1``.
        variant: ``"folklore"`` (default) or ``"oblivious"``.
        weights: ``"multiset"`` (default) or ``"sum"`` (``k = 1`` only).
        resolution: Cells of the midpoint approximation. Default ``64``.
        decimals: Rounding of values; class sums and measures use ``min(decimals, 9)``.
            Default ``9``.
        max_iter: Cap on refinement rounds. Default: until stable.

    Returns:
        A :class:`WLResult` whose histograms hold measures of colour classes.
    """
    check_int("resolution", resolution, 1)
    if isinstance(graphons, (Graphon, GraphonSignal)) or not isinstance(graphons, Sequence):
        raise GraphDataError(
            f"graphons: expected a list of graphons or graphon-signals, got "
            f"{type(graphons).__name__}; wrap one in a list, [W]"
        )
    if len(graphons) == 0:
        raise GraphDataError("graphons: expected at least one graphon, got none")
    items = [_step(g, resolution, decimals) for g in graphons]
    return _refine(items, k, variant, weights, False, decimals, max_iter)


def graphon_wl_equivalent(
    first: Graphon | GraphonSignal,
    second: Graphon | GraphonSignal,
    *,
    k: int = 1,
    variant: str = "folklore",
    weights: str = "multiset",
    resolution: int = 64,
) -> bool:
    r"""Whether k-WL on (step approximations of) two graphon-signals gives equal distributions.

    With ``weights="sum"`` (k = 1): for step graphons, ``True`` iff they are fractionally
    isomorphic, iff :math:`t(T, U) = t(T, W)` for every tree :math:`T` (Grebík & Rocha,
    "Fractional isomorphism of graphons", Combinatorica 2022, arXiv 1909.04742). With
    ``weights="multiset"``: iff equal densities of all multigraphs of treewidth
    :math:`\le k` (``variant="folklore"``; :math:`\le k - 1` for ``"oblivious"``, k-OWL =
    (k-1)-FWL) (Böker, arXiv 2112.09001), which implies the former.

    Args:
        first: A graphon or graphon-signal.
        second: Another one.
        k: Tuple order. Default ``1``.
        variant: ``"folklore"`` (default) or ``"oblivious"``.
        weights: ``"multiset"`` (default) or ``"sum"`` (``k = 1`` only).
        resolution: Cells of the midpoint approximation of non-step graphons. Default ``64``.

    Returns:
        ``True`` if the colour distributions agree.

    Examples:
        >>> from graphon.families import erdos_renyi, sbm
        >>> split = StepGraphon([[0.9, 0.9, 0.1], [0.9, 0.9, 0.1], [0.1, 0.1, 0.9]], [1, 1, 2])
        >>> graphon_wl_equivalent(sbm(2, 0.9, 0.1), split, k=2)
        True
        >>> two_cliques = sbm(2, 1.0, 0.0)  # 1/2-regular like ER(1/2); double edge 1/2 vs 1/4
        >>> graphon_wl_equivalent(erdos_renyi(0.5), two_cliques, weights="sum")
        True
        >>> graphon_wl_equivalent(erdos_renyi(0.5), two_cliques, weights="multiset")
        False
    """
    res = graphon_wl_refine(
        [first, second], k=k, variant=variant, weights=weights, resolution=resolution
    )
    return res.histograms[0] == res.histograms[1]
