r"""The local structure of a target triple: its enclosing subgraph and candidate paths.

KGExplainer (Ma et al., "Towards Synergistic Path-based Explanations for Knowledge Graph
Completion: Exploration and Evaluation", ICLR 2025, arXiv 2404.03893) explains a prediction
:math:`(h, r, t)` by paths between :math:`h` and :math:`t` in a small subgraph around them. The
reference code extracts one subgraph for the explainer and another (GraIL's) for its evaluator;
here one definition serves both: the ``k``-hop enclosing subgraph (Teru et al., ICML 2020,
arXiv 1911.06962), edge directions ignored, with the target triple removed, and the candidate
paths are the simple relation-labelled paths from :math:`h` to :math:`t` inside it. Every node
of a path of length :math:`\le k + 1` lies within :math:`k` hops of both ends, so ``hops=2``
holds every path of length up to 3.

**Pruning.** Around a hub (an FB15k-237 entity with thousands of neighbours) the candidate
paths number in the tens of thousands, and the greedy search scores every remaining candidate at
every step, so the candidates are pruned to a budget :math:`B` (``max_candidates``). Exactly
when they fit, every path is kept in the order of :class:`graphdata.paths.Paths` (no pruning:
the small worlds' results do not depend on it). Otherwise the budget is split across path
lengths (:func:`length_shares`: paths of length 3 outnumber shorter ones by far, and a cap that
kept the shortest would drop every long rule body) and, given a per-edge relevance
:math:`I_e`, each length keeps its most relevant paths, path relevance being additive:

.. math::
    R(\pi) = \sum_{e \in \pi} I_e .

With the distilled evaluator :math:`f(w)` over soft edge masks :math:`w \in [0, 1]^m`
(:func:`gradient_relevance`), :math:`I_e = \tfrac12 \bigl(\partial_{w_e} f(\mathbf 0) +
\partial_{w_e} f(\mathbf 1)\bigr)`, the two-point (trapezoid) integrated gradient (Sundararajan
et al., "Axiomatic Attribution for Deep Networks", ICML 2017, arXiv 1703.01365). Then
:math:`2 R(\pi) + f(G) - f(\varnothing)` is the first-order estimate of the search's first-step
objective :math:`J_\text{both}(\pi) = f(\pi) - f(G \setminus \pi)` (:mod:`kg.explain.search`),
expanding :math:`f(\pi)` at :math:`\mathbf 0` and :math:`f(G \setminus \pi)` at :math:`\mathbf 1`;
ranking by :math:`R` is ranking by that estimate, one forward and backward pass for all paths.
:func:`model_relevance` takes the KGE's calibrated log-probability of each edge,
:math:`I_e = \log p(e)`, so that :math:`R(\pi)` is the log of the path's probability under the
model; :class:`kg.explain.KGExplainer` prunes with it in every mode, as the distillation's cap
does (the gradient needs a pass over the whole enclosing subgraph, seconds at a hub, and gave
no better F1 on the synthetic worlds: ``benchmarks/RESULTS.md``).

A length whose paths exceed ``max_enumerated`` is not enumerated (up to three steps the
paths are counted first, exactly, by :func:`graphdata.paths.count_paths`; a longer length is
enumerated up to the cap); a beam search builds its paths from :math:`h`: every partial path
is extended through every local edge of its end node (forwards or backwards, never revisiting
a node, never reaching a node farther from :math:`t` than the steps left; the last step only
through the edges into :math:`t`), and the ``beam_width`` partial paths of largest partial
:math:`R` survive each step. With a beam at least as wide as the number of partial paths it is
the exact top of the enumeration. :attr:`LocalStructure.pruning` records, per length, the paths
enumerated or completed by the beam, the paths kept and how (:class:`Pruning`). Without a
relevance the old cap applies (the first paths of each length in enumeration order) with a
:class:`CandidatesCapped` warning.

**The local graph of a pruned target** is the union of its kept paths: the triples
:math:`E' = \bigcup_{\pi \text{ kept}} \pi` and the nodes :math:`\{h, t\}` and those the paths
visit, re-indexed in their old order (``h`` local id 0, ``t`` local id 1; the paths, their
nodes and edge ids refer to the new graph; :func:`restrict_to_paths`). The reason: an
explanation can only consist of candidate paths, and the scorer's context (the evaluator's
subgraph, or the graph the model is re-trained on without the removed triples) is the evidence
the search can remove or keep; a triple on no kept path can never be part of an explanation,
and around a hub the 2-hop enclosing subgraph holds 50k-131k triples on FB15k-237, so scoring
every perturbation on it took 3-101 s per target or did not finish, against a union of at
most :math:`B L` triples. What is lost: the context triples off every kept path (the
neighbourhood of :math:`h` and :math:`t` that lies on no kept candidate, e.g. an entity type
or a degree the model also leans on), so the scores
:math:`f(G)`, :math:`f(G \setminus S)` of a pruned target are those of the union graph, not of
the whole enclosing subgraph, and fidelity is measured against that union. The evaluator is
distilled on training subgraphs capped the same way (:mod:`kg.explain.evaluator.training`), so
it meets such unions in training. :attr:`Pruning.triples` and :attr:`Pruning.nodes` record the
sizes before and after, :attr:`LocalStructure.found` the paths found. When every candidate
fits (``"exact"``) the local graph is the whole enclosing subgraph, as before.

A pruned target gives one :class:`CandidatesCapped` warning; over many targets
(:meth:`kg.explain.KGExplainer.explain_all`, a benchmark loop) :func:`capped_summary` turns them
into a single summary line at the end, and each result's ``truncated`` says which were pruned.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import statistics
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from graphdata._adjacency import build_csr, check_graph
from graphdata.errors import GraphDataError
from graphdata.paths import count_paths, enumerate_paths
from graphdata.subgraph import (
    EnclosingSubgraph,
    EnclosingSubgraphBatch,
    _extract,
    k_hop_enclosing_subgraph,
)
from kg.base import KGEModel, eval_mode

__all__ = [
    "PRUNING_METHODS",
    "CandidatesCapped",
    "CandidatesCappedSummary",
    "LocalIndex",
    "LocalStructure",
    "Pruning",
    "Relevance",
    "capped_summary",
    "gradient_relevance",
    "length_shares",
    "local_structure",
    "model_relevance",
    "restrict_to_paths",
]

#: How candidate paths were chosen: all kept (``"exact"``), the most relevant of each length
#: (``"relevance"``), the first of each length in enumeration order (``"order"``, no relevance).
PRUNING_METHODS = ("exact", "relevance", "order")
#: A per-edge relevance :math:`I_e`: a local structure (its paths not yet chosen) -> ``[m]``.
Relevance = Callable[["LocalStructure"], Tensor]


class CandidatesCapped(UserWarning):
    """One target had more candidate paths than ``max_candidates``; the cap's figures attached.

    Args:
        message: The warning's text.
        target: The target triple, global ids.
        found: Paths found per length (length 1 first); a lower bound where ``overflow``.
        kept: Paths kept per length (:func:`length_shares`).
        overflow: Per length, whether the enumeration stopped at ``max_candidates``.
        max_candidates: The cap.
        max_length: The longest path length enumerated.
        method: How the kept paths were chosen (:data:`PRUNING_METHODS`). Default ``"order"``.
    """

    def __init__(
        self,
        message: str,
        *,
        target: tuple[int, int, int],
        found: tuple[int, ...],
        kept: tuple[int, ...],
        overflow: tuple[bool, ...],
        max_candidates: int,
        max_length: int,
        method: str = "order",
    ) -> None:
        super().__init__(message)
        self.method = method
        self.target = target
        self.found = found
        self.kept = kept
        self.overflow = overflow
        self.max_candidates = max_candidates
        self.max_length = max_length


class CandidatesCappedSummary(UserWarning):
    """The one line :func:`capped_summary` gives for all the capped targets of a block."""


class LocalIndex:
    """A graph's adjacency built once, for the local structures of many targets.

    :func:`graphdata.subgraph.k_hop_enclosing_subgraph` sorts the whole edge list into an
    adjacency on every call (about a second per target on FB15k-237's 270k triples); with an
    index, one target costs its two breadth-first searches. The subgraph is the same: the
    target triple is removed during the search (GraIL's per-pair removal) instead of before it.

    Args:
        edge_index: The graph's triples' heads (row 0) and tails (row 1), global ids.
        edge_type: The graph's triples' relations.
        num_nodes: The number of entities. Default ``None``: ``edge_index.max() + 1``.

    Examples:
        >>> ei = torch.tensor([[0, 1, 2, 0], [1, 2, 3, 2]])
        >>> index = LocalIndex(ei, torch.tensor([0, 0, 1, 2]))
        >>> index.enclosing((0, 2, 2), hops=1).nodes.tolist()
        [0, 2, 1]
    """

    def __init__(self, edge_index: Tensor, edge_type: Tensor, num_nodes: int | None = None):
        self.num_nodes = check_graph(edge_index, edge_type, num_nodes)
        self.edge_index, self.edge_type = edge_index, edge_type
        self._csr = build_csr(edge_index, self.num_nodes)
        self._out_csr = build_csr(edge_index, self.num_nodes, both=False)

    def enclosing(self, target: tuple[int, int, int], *, hops: int) -> EnclosingSubgraph:
        """The ``hops``-hop enclosing subgraph of ``target`` with the target triple removed."""
        head, relation, tail = target
        for name, node in (("head", head), ("tail", tail)):
            if not 0 <= node < self.num_nodes:
                raise GraphDataError(
                    f"target: {name} id {node} outside [0, {self.num_nodes}) (the graph's nodes)"
                )
        device = self.edge_index.device
        pairs = torch.tensor([[head, tail]], device=device)
        parts = _extract(
            self._csr,
            self._out_csr,
            self.edge_index,
            self.edge_type,
            self.num_nodes,
            pairs,
            hops,
            "intersection",
            torch.tensor([relation], device=device),
        )
        return EnclosingSubgraphBatch(*parts)[0]


@dataclass(frozen=True)
class Pruning:
    """How a target's candidate paths were chosen (module docstring, "Pruning").

    Attributes:
        method: One of :data:`PRUNING_METHODS`.
        enumerated: Per length (length 1 first), the paths enumerated, or completed by the
            beam search where ``overflow``.
        kept: Per length, the paths kept.
        overflow: Per length, whether there were more than ``max_enumerated`` paths (a beam
            search of width ``beam_width`` built that length's paths with a relevance, the
            enumeration was cut at ``max_enumerated`` without one).
        budget: The budget :math:`B` (``max_candidates``).
        max_enumerated: The most paths enumerated per length.
        beam_width: The beam width (partial paths kept per step).
        reason: One sentence saying why, for the reader.
        triples: The local graph's triples ``(before, after)``: the enclosing subgraph's, and
            the union of the kept paths' where pruned (:func:`restrict_to_paths`; equal when
            ``method == "exact"``). Default ``(0, 0)``: not recorded.
        nodes: The local graph's nodes ``(before, after)``, likewise. Default ``(0, 0)``.
    """

    method: str
    enumerated: tuple[int, ...]
    kept: tuple[int, ...]
    overflow: tuple[bool, ...]
    budget: int
    max_enumerated: int
    beam_width: int
    reason: str
    triples: tuple[int, int] = (0, 0)
    nodes: tuple[int, int] = (0, 0)


@dataclass(frozen=True)
class LocalStructure:
    """The enclosing subgraph of a target triple and the candidate paths inside it.

    Attributes:
        target: The target triple ``(h, r, t)`` as global ids.
        nodes: Global ids of the local nodes; ``nodes[0]`` is ``h`` and ``nodes[1]`` is ``t``.
        edge_index: The local triples' heads and tails as local ids (positions in ``nodes``).
        edge_type: The local triples' relations.
        paths: Each candidate path as the positions of its edges in ``edge_index``, in the
            order of :class:`graphdata.paths.Paths` (shorter first).
        path_nodes: The local ids each path visits, ``h`` first.
        truncated: Whether the candidate paths were capped.
        hops: The radius ``k`` of the enclosing subgraph.
        max_length: The longest path length ``L`` enumerated.
        found: Candidate paths found per length, length 1 first, before pruning (as
            ``pruning.enumerated``). Default ``()``.
        pruning: How the candidates were chosen (:class:`Pruning`). Default ``None`` (a
            structure built by hand).
        through_relation: Whether candidates of length two or more may use another triple of
            the target relation (:func:`local_structure`). Default True.

    Shapes:
        ``nodes``: ``[n]``; ``edge_index``: ``[2, m]``; ``edge_type``: ``[m]``.
    """

    target: tuple[int, int, int]
    nodes: Tensor
    edge_index: Tensor
    edge_type: Tensor
    paths: tuple[tuple[int, ...], ...]
    path_nodes: tuple[tuple[int, ...], ...]
    truncated: bool
    hops: int
    max_length: int
    found: tuple[int, ...] = ()
    pruning: Pruning | None = None
    through_relation: bool = True

    @property
    def num_nodes(self) -> int:
        """The number of local nodes ``n``."""
        return self.nodes.numel()

    @property
    def num_edges(self) -> int:
        """The number of local triples ``m``."""
        return self.edge_type.numel()

    @property
    def triples(self) -> Tensor:
        """The local triples as global ids, ``[m, 3]`` (head, relation, tail)."""
        ends = self.nodes[self.edge_index]  # [2, m]
        return torch.stack([ends[0], self.edge_type, ends[1]], dim=1)

    def edge_mask(self, paths: Sequence[int]) -> Tensor:
        """Boolean mask ``[m]`` of the edges used by the given candidate paths.

        Args:
            paths: Indices into :attr:`paths`.

        Returns:
            ``True`` on every edge of at least one of the paths.
        """
        mask = torch.zeros(self.num_edges, dtype=torch.bool, device=self.edge_type.device)
        mask[[e for p in paths for e in self.paths[p]]] = True  # one scatter for all paths
        return mask


def local_structure(
    edge_index: Tensor,
    edge_type: Tensor,
    target: tuple[int, int, int],
    *,
    num_nodes: int | None = None,
    hops: int = 2,
    max_length: int = 3,
    max_candidates: int = 300,
    path_relations: Tensor | None = None,
    relevance: Relevance | None = None,
    max_enumerated: int | None = None,
    beam_width: int | None = None,
    index: LocalIndex | None = None,
    through_relation: bool = True,
) -> LocalStructure:
    r"""Extract the enclosing subgraph of ``target`` and its ``h``-to-``t`` candidate paths.

    With :math:`G' = G \setminus \{(h, r, t)\}` and :math:`d` the undirected hop distance in
    :math:`G'`, the local nodes are :math:`V = \{h, t\} \cup \{v : d(h, v) \le k \wedge
    d(t, v) \le k\}`, the local triples are those of :math:`G'` between nodes of :math:`V`, and
    the candidates are the simple paths of length :math:`1 .. L` from :math:`h` to :math:`t`
    over local triples, each step forwards or backwards (:func:`graphdata.paths.enumerate_paths`),
    all of them when they number at most :math:`B`, else the :math:`a_\ell` (:func:`length_shares`)
    of largest :math:`R(\pi) = \sum_{e \in \pi} I_e` per length :math:`\ell` (module docstring,
    "Pruning"; ties in enumeration order), and then the local graph shrinks to the kept paths'
    triples :math:`E' = \bigcup_{\pi \text{ kept}} \pi` and their nodes with :math:`h, t`.

    Args:
        edge_index: The graph's triples' heads (row 0) and tails (row 1), global ids.
        edge_type: The graph's triples' relations.
        target: The triple ``(h, r, t)`` to explain, global ids, ``h != t``.
        num_nodes: The number of entities. Default ``None``: ``edge_index.max() + 1``.
        hops: The radius :math:`k`. Default 2.
        max_length: The longest path :math:`L`. Default 3.
        max_candidates: The budget :math:`B` of candidate paths, split across lengths by
            :func:`length_shares`. Default 300. More candidates give a :class:`CandidatesCapped`
            warning stating the split (one line for many targets inside
            :func:`capped_summary`) and :attr:`LocalStructure.pruning` records it.
        path_relations: Relation ids candidate paths may use; default ``None``: all. Unpruned,
            the local graph keeps every relation (the scorer still sees all triples); pruned,
            it is the union of the kept paths, so only these relations.
        relevance: :math:`I_e` for the local triples, called once on the structure without
            paths when pruning is needed (:func:`gradient_relevance`, :func:`model_relevance`);
            must return ``[m]`` finite values. Default ``None``: keep the first paths of each
            length in enumeration order (``pruning.method == "order"``).
        max_enumerated: The most paths enumerated per length; a length with more is built by
            the beam search (with a relevance) or cut there (without). Default ``None``:
            ``20 * max_candidates``.
        beam_width: Partial paths the beam search keeps per step. Default ``None``:
            ``max_enumerated``.
        index: A :class:`LocalIndex` of this same graph, to skip rebuilding its adjacency
            (same result). Default ``None``.
        through_relation: Whether a candidate of length two or more may use another triple of
            the target's relation :math:`r`. ``False`` (the pattern strategy, which never takes
            such a path as a body of :math:`r`, :mod:`kg.explain.patterns`) leaves them out
            before the budget, so they do not take its place. Default True.

    Returns:
        The :class:`LocalStructure`; without any path (``h`` and ``t`` not joined within the
        subgraph) its :attr:`~LocalStructure.paths` is empty. When pruned (``truncated``), its
        local graph is the union of the kept paths, :math:`E' = \bigcup_{\pi \text{ kept}} \pi`
        (:func:`restrict_to_paths`; module docstring, "Pruning"), re-indexed.

    Raises:
        GraphDataError: If ``h == t``, an id is out of range, a budget is not a positive int, or
            the relevance is not ``[m]`` finite values.

    Shapes:
        ``edge_index``: ``[2, E]``; ``edge_type``: ``[E]``.

    Examples:
        >>> ei = torch.tensor([[0, 2, 0], [2, 1, 1]])  # 0 -a-> 2 -b-> 1 and the target 0 -c-> 1
        >>> local = local_structure(ei, torch.tensor([0, 1, 2]), (0, 2, 1), hops=1, max_length=2)
        >>> local.nodes.tolist(), local.paths, local.triples.tolist(), local.pruning.method
        ([0, 1, 2], ((0, 1),), [[0, 0, 2], [2, 1, 1]], 'exact')
    """
    head, relation, tail = (int(x) for x in target)
    if head == tail:
        raise GraphDataError(
            f"target: expected a triple with head != tail, got {target!r}; a self-loop has no "
            "path between two distinct entities to explain it"
        )
    _check_positive("max_candidates", max_candidates)
    max_enumerated = 20 * max_candidates if max_enumerated is None else max_enumerated
    _check_positive("max_enumerated", max_enumerated)
    beam_width = max_enumerated if beam_width is None else beam_width
    _check_positive("beam_width", beam_width)
    if index is None:
        sub = k_hop_enclosing_subgraph(
            head,
            tail,
            edge_index,
            edge_type,
            num_nodes,
            k=hops,
            exclude_triples=(head, relation, tail),
        )
    elif index.edge_index is not edge_index or index.edge_type is not edge_type:
        raise GraphDataError(
            "index: built from other edge_index/edge_type tensors than the ones passed; build "
            "LocalIndex(edge_index, edge_type) from these (or pass index=None)"
        )
    else:
        if isinstance(hops, bool) or not isinstance(hops, int) or hops < 0:
            raise GraphDataError(f"hops: expected an int >= 0, got {hops!r}")
        sub = index.enclosing((head, relation, tail), hops=hops)
    excluded = None
    if path_relations is not None:
        excluded = ~torch.isin(sub.edge_type, path_relations.to(sub.edge_type.device))
    bare = LocalStructure(
        target=(head, relation, tail),
        nodes=sub.nodes,
        edge_index=sub.edge_index,
        edge_type=sub.edge_type,
        paths=(),
        path_nodes=(),
        truncated=False,
        hops=hops,
        max_length=max_length,
        through_relation=through_relation,
    )
    longer = excluded  # the edges no path of length two or more may use
    if not through_relation:
        own = sub.edge_type == relation
        longer = own if excluded is None else excluded | own
    local = _choose_paths(
        bare, max_candidates, relevance, max_enumerated, beam_width, excluded, longer
    )
    assert local.pruning is not None  # for mypy
    if local.truncated:
        _warn_capped((head, relation, tail), local.pruning, max_length)
        local = restrict_to_paths(local)
    return local


def _choose_paths(
    bare: LocalStructure,
    max_candidates: int,
    relevance: Relevance | None,
    max_enumerated: int,
    beam_width: int,
    excluded: Tensor | None,
    longer: Tensor | None = None,
) -> LocalStructure:
    """``bare`` (no paths yet) with its candidate paths chosen and :class:`Pruning` recorded.

    The rule of :func:`local_structure` (module docstring, "Pruning"), without its warning and
    without restricting the local graph; the distillation caps its training subgraphs with it.
    ``excluded`` (a mask ``[m]``) holds the edges no path may use; ``longer`` those no path of
    two or more steps may use (default: ``excluded``).
    """
    max_length = bare.max_length
    if longer is None:
        longer = excluded
    # Each length is enumerated on its own, up to max_enumerated, so the budget can be split.
    # With a relevance, a length counted above max_enumerated is left to the beam search
    # without enumerating it (a dense graph has hundreds of thousands of three-step paths).
    counted = [] if relevance is None else _counted_paths(bare, excluded, longer)
    by_length = [
        None
        if ell <= len(counted) and counted[ell - 1] > max_enumerated
        else enumerate_paths(
            bare.edge_index,
            bare.edge_type,
            0,
            1,
            ell,
            num_nodes=bare.num_nodes,
            max_paths=max_enumerated,
            on_overflow="truncate",
            exclude_edges=excluded if ell == 1 else longer,
            min_length=ell,
        )
        for ell in range(1, max_length + 1)
    ]
    overflow = [p is None or p.truncated for p in by_length]
    # Per length: (edge ids [P, ell], node ids [P, ell + 1]) in the order they are to be kept;
    # a length not enumerated is built by the beam below.
    empty = bare.edge_index.new_zeros(0, 0)
    chosen = [
        (empty, empty) if p is None else (p.edge_ids[:, :ell], p.nodes[:, : ell + 1])
        for ell, p in enumerate(by_length, 1)
    ]
    counts = [max_enumerated + 1 if p is None else len(p) for p in by_length]
    pruned = sum(counts) > max_candidates or any(overflow)
    method = "relevance" if pruned and relevance is not None else "order" if pruned else "exact"
    if method == "relevance":
        assert relevance is not None  # for mypy
        weight = _checked_relevance(relevance(bare), bare.num_edges)
        for i, ell in enumerate(range(1, max_length + 1)):
            if overflow[i]:
                chosen[i] = _beam_paths(
                    bare, ell, weight, beam_width, excluded if ell == 1 else longer
                )
            else:
                edges, nodes = chosen[i]
                order = torch.argsort(weight[edges].sum(1), descending=True, stable=True)
                chosen[i] = (edges[order], nodes[order])
        counts = [e.size(0) for e, _ in chosen]
    kept = length_shares(counts, max_candidates)
    edge_paths: list[tuple[int, ...]] = []
    node_paths: list[tuple[int, ...]] = []
    for (edges, nodes), n in zip(chosen, kept):
        edge_paths += [tuple(row) for row in edges[:n].tolist()]
        node_paths += [tuple(row) for row in nodes[:n].tolist()]
    pruning = Pruning(
        method=method,
        enumerated=tuple(counts),
        kept=tuple(kept),
        overflow=tuple(overflow),
        budget=max_candidates,
        max_enumerated=max_enumerated,
        beam_width=beam_width,
        reason=_reason(method, counts, kept, overflow, max_candidates, beam_width),
        triples=(bare.num_edges, bare.num_edges),
        nodes=(bare.num_nodes, bare.num_nodes),
    )
    return dataclasses.replace(
        bare,
        paths=tuple(edge_paths),
        path_nodes=tuple(node_paths),
        truncated=pruned,
        found=tuple(counts),
        pruning=pruning,
    )


def restrict_to_paths(local: LocalStructure) -> LocalStructure:
    r"""The local structure restricted to the union of its candidate paths, re-indexed.

    With :math:`\Pi` the candidate paths, the new local graph is

    .. math::
        E' = \bigcup_{\pi \in \Pi} \pi, \qquad
        V' = \{h, t\} \cup \{v : v \text{ visited by some } \pi \in \Pi\},

    each kept in its old relative order (so ``h`` stays local id 0, ``t`` local id 1, and the
    edges stay sorted by head, tail and edge id); :attr:`~LocalStructure.paths` and
    :attr:`~LocalStructure.path_nodes` are mapped to the new ids, so every path is the same
    sequence of global triples as before. :func:`local_structure` applies it to every pruned
    target (module docstring, "Pruning"); ``pruning.triples`` and ``pruning.nodes`` record the
    sizes before and after.

    Args:
        local: A local structure; its paths index its own ``edge_index``.

    Returns:
        The restricted :class:`LocalStructure` (``target``, ``truncated``, ``found``, ``hops``
        and ``max_length`` unchanged).

    Examples:
        >>> ei = torch.tensor([[0, 0, 2, 3], [1, 2, 1, 2]])  # 0 -> 1, 0 -> 2 -> 1, 3 -> 2
        >>> local = local_structure(ei, torch.tensor([0, 1, 2, 3]), (0, 9, 1), hops=2)
        >>> local.num_edges, local.paths
        (4, ((0,), (1, 2)))
        >>> small = restrict_to_paths(dataclasses.replace(local, paths=local.paths[1:],
        ...                                               path_nodes=local.path_nodes[1:]))
        >>> small.nodes.tolist(), small.paths, small.triples.tolist()
        ([0, 1, 2], ((0, 1),), [[0, 1, 2], [2, 2, 1]])
    """
    device = local.edge_type.device
    edge_used = torch.zeros(local.num_edges, dtype=torch.bool, device=device)
    node_used = torch.zeros(local.num_nodes, dtype=torch.bool, device=device)
    node_used[:2] = True  # h and t
    edge_used[[e for edges in local.paths for e in edges]] = True
    node_used[[v for nodes in local.path_nodes for v in nodes]] = True
    new_edge = torch.cumsum(edge_used.long(), 0) - 1  # old edge id -> new, where used
    new_node = torch.cumsum(node_used.long(), 0) - 1
    edge_map, node_map = new_edge.tolist(), new_node.tolist()
    before = local.pruning
    restricted = dataclasses.replace(
        local,
        nodes=local.nodes[node_used],
        edge_index=new_node[local.edge_index[:, edge_used]],
        edge_type=local.edge_type[edge_used],
        paths=tuple(tuple(edge_map[e] for e in p) for p in local.paths),
        path_nodes=tuple(tuple(node_map[v] for v in p) for p in local.path_nodes),
    )
    if before is not None:
        restricted = dataclasses.replace(
            restricted,
            pruning=dataclasses.replace(
                before,
                triples=(before.triples[0], restricted.num_edges),
                nodes=(before.nodes[0], restricted.num_nodes),
            ),
        )
    return restricted


def _check_positive(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise GraphDataError(f"{name}: expected a positive int, got {value!r}")


def _checked_relevance(weight: Tensor, num_edges: int) -> Tensor:
    """The relevance as a float ``[m]`` tensor, refused when misshapen or not finite."""
    if not isinstance(weight, Tensor) or weight.shape != (num_edges,):
        shape = tuple(weight.shape) if isinstance(weight, Tensor) else type(weight).__name__
        raise GraphDataError(
            f"relevance: expected a tensor [m] = [{num_edges}] (one value per local triple), got "
            f"{shape}; return one relevance per edge of local.edge_type"
        )
    weight = weight.detach().double()
    if not bool(torch.isfinite(weight).all()):
        bad = int((~torch.isfinite(weight)).sum())
        raise GraphDataError(
            f"relevance: expected finite values, got {bad} non-finite of {num_edges}; check the "
            "evaluator or model that computes it (a diverged distillation gives NaN gradients)"
        )
    return weight


def _reason(
    method: str,
    counts: Sequence[int],
    kept: Sequence[int],
    overflow: Sequence[bool],
    budget: int,
    beam_width: int,
) -> str:
    """The one sentence of :attr:`Pruning.reason`."""
    if method == "exact":
        return f"all {sum(counts)} candidate paths kept (budget {budget})"
    per_length = ", ".join(
        f"{ell}: {k} of {c}{'+' if o else ''}"
        for ell, (k, c, o) in enumerate(zip(kept, counts, overflow), start=1)
    )
    how = (
        "the most relevant paths of each length (R = sum of edge relevances"
        + (f"; beam search of width {beam_width} where '+'" if any(overflow) else "")
        + ")"
        if method == "relevance"
        else "the first paths of each length in enumeration order (no relevance given)"
    )
    return (
        f"more candidate paths than the budget {budget}: kept {sum(kept)}, split evenly across "
        f"lengths (kept of found per length: {per_length}), {how}"
    )


def _warn_capped(target: tuple[int, int, int], pruning: Pruning, max_length: int) -> None:
    warnings.warn(
        CandidatesCapped(
            f"target {target}: more than max_candidates={pruning.budget} candidate paths of "
            f"length <= {max_length}; {pruning.reason[pruning.reason.index('kept') :]} (raise "
            "max_candidates or lower max_length to search more; LocalStructure.pruning records "
            "it)",
            target=target,
            found=pruning.enumerated,
            kept=pruning.kept,
            overflow=pruning.overflow,
            max_candidates=pruning.budget,
            max_length=max_length,
            method=pruning.method,
        ),
        stacklevel=3,
    )


def _counted_paths(
    bare: LocalStructure, excluded: Tensor | None, longer: Tensor | None
) -> list[int]:
    """The simple ``h``-to-``t`` paths of each length up to three (:func:`count_paths`).

    A path of one step may not use the edges ``excluded``, a longer one those ``longer``.
    """

    def count(most: int, exclude: Tensor | None) -> list[int]:
        return count_paths(
            bare.edge_index, 0, 1, most, num_nodes=bare.num_nodes, exclude_edges=exclude
        )

    counts = count(min(bare.max_length, 3), longer)
    return counts if longer is excluded else count(1, excluded) + counts[1:]


def _beam_paths(
    local: LocalStructure, length: int, weight: Tensor, width: int, excluded: Tensor | None
) -> tuple[Tensor, Tensor]:
    r"""Beam search for the simple ``h``-to-``t`` paths of ``length`` steps of largest :math:`R`.

    Returns ``(edge ids [P, length], node ids [P, length + 1])`` in decreasing :math:`R`, at
    most ``width`` paths (module docstring, "Pruning").
    """
    device = local.edge_type.device
    n, m = local.num_nodes, local.num_edges
    usable = torch.ones(m, dtype=torch.bool, device=device)
    if excluded is not None:
        usable &= ~excluded
    eid = torch.arange(m, device=device)[usable]
    a, b = local.edge_index[0, eid], local.edge_index[1, eid]
    # Undirected incidence sorted by its source: entry j walks edge eids[j] from src[j] to dst[j].
    src, dst, eids = torch.cat([a, b]), torch.cat([b, a]), torch.cat([eid, eid])
    order = torch.argsort(src, stable=True)
    src, dst, eids = src[order], dst[order], eids[order]
    ptr = torch.zeros(n + 1, dtype=torch.long, device=device)
    ptr[1:] = torch.bincount(src, minlength=n).cumsum(0)
    # Hop distance to t (local id 1) over usable edges, up to length - 1.
    far = length + 1
    dist = torch.full((n,), far, dtype=torch.long, device=device)
    dist[1] = 0
    for step in range(1, length):
        reach = torch.zeros(n, dtype=torch.bool, device=device)
        reach[src[dist[dst] == step - 1]] = True
        dist[reach & (dist == far)] = step
    nodes = torch.zeros(1, 1, dtype=torch.long, device=device)  # [P, i + 1], h = local id 0
    edges = torch.zeros(1, 0, dtype=torch.long, device=device)  # [P, i]
    score = torch.zeros(1, dtype=torch.float64, device=device)  # [P]
    # The last step only enters t: the entries into t, by source, in the order of the rest.
    into_t = torch.nonzero(dst == 1).flatten()
    ptr_t = torch.zeros(n + 1, dtype=torch.long, device=device)
    ptr_t[1:] = torch.bincount(src[into_t], minlength=n).cumsum(0)
    lists = {
        # the entries of each node (the last step: those into t, the only ones it may take)
        False: _Entries(ptr, None, weight[eids]),
        True: _Entries(ptr_t, into_t, weight[eids[into_t]]),
    }
    for i in range(length):
        left = length - i - 1  # steps left after this one
        valid = functools.partial(_valid_steps, nodes=nodes, dist=dist, left=left)
        owner, slot, total = lists[left == 0].extend(nodes[:, -1], score, width, dst, valid)
        nxt = dst[slot]
        top = _first_largest(total, width)
        owner, slot, nxt = owner[top], slot[top], nxt[top]
        nodes = torch.cat([nodes[owner], nxt.unsqueeze(1)], dim=1)
        edges = torch.cat([edges[owner], eids[slot].unsqueeze(1)], dim=1)
        score = total[top]
    return edges, nodes


def _valid_steps(
    owner: Tensor, nxt: Tensor, *, nodes: Tensor, dist: Tensor, left: int
) -> Tensor | None:
    """Which steps to ``nxt`` from partial paths ``nodes[owner]`` can still reach t in time.

    With ``left`` steps after this one: ``nxt`` within ``left`` hops of t, not t itself, and
    not on the path yet. The last step (``left = 0``) takes only entries into t, which is on
    no partial path, so every one is valid: ``None``.
    """
    if left == 0:
        return None
    return (dist[nxt] <= left) & (nxt != 1) & ~(nodes[owner] == nxt.unsqueeze(1)).any(1)


class _Entries:
    """The entries a beam step may take from each node, in incidence order, with their weights.

    Entry ``j`` of node ``v`` is position ``ptr[v] + j`` of ``slots`` (positions of the
    undirected incidence; ``None``: the incidence itself); ``weight`` holds each position's
    edge relevance.
    """

    def __init__(self, ptr: Tensor, slots: Tensor | None, weight: Tensor) -> None:
        self.ptr, self.slots, self.weight = ptr, slots, weight
        self._ranked: tuple[Tensor, Tensor, Tensor] | None = None

    def _rows(self, end: Tensor, count: Tensor, within: Tensor | None) -> tuple[Tensor, Tensor]:
        """``(owner, position)`` of the first ``count[o]`` entries of each end ``end[o]``.

        Owner-major; within an owner in incidence order, or in the order ``within`` (a
        permutation of the positions that keeps each node's entries in its own range).
        """
        device = end.device
        owner = torch.repeat_interleave(torch.arange(end.numel(), device=device), count)
        first = count.cumsum(0) - count
        pos = self.ptr[end][owner] + torch.arange(owner.numel(), device=device) - first[owner]
        return owner, pos if within is None else within[pos]

    def _by_weight(self) -> tuple[Tensor, Tensor, Tensor]:
        """Each node's entries by decreasing weight, their sort keys, and the distinct weights.

        ``key = node (U + 1) + (U - rank)``, ``rank`` the weight's index among the ``U``
        distinct weights, ascending along the order: exact integer bounds per node below.
        """
        if self._ranked is None:
            node = torch.repeat_interleave(
                torch.arange(self.ptr.numel() - 1, device=self.ptr.device),
                self.ptr[1:] - self.ptr[:-1],
            )
            values, rank = torch.unique(self.weight, return_inverse=True)
            u = values.numel()
            key = node * (u + 1) + (u - rank)
            order = torch.argsort(key, stable=True)  # by node, then weight, then position
            self._ranked = (order, key[order], values)
        return self._ranked

    def extend(
        self,
        end: Tensor,
        score: Tensor,
        k: int,
        dst: Tensor,
        valid: Callable[[Tensor, Tensor], Tensor | None],
    ) -> tuple[Tensor, Tensor, Tensor]:
        r"""The valid extensions ``(owner, slot, total)`` that may be among the ``k`` best.

        Every valid extension of every partial path (owner-major, each end's entries in
        incidence order), ``total = score[owner] + weight``, less those that cannot be in
        :func:`_first_largest`'s ``k`` when there are more than ``8 k``: a lower bound
        :math:`\tau` on the ``k``-th largest total comes from each owner's
        :math:`J = 2 \lceil k / P \rceil` heaviest entries (the ``k``-th largest of a subset
        of the extensions), and an extension of weight below :math:`\tau - \mathrm{score}`
        (less a rounding margin) is left out. The rest come owner-major, each owner's by
        decreasing weight and ties in incidence order; two extensions of one owner tie only
        where their weights do, so every tie keeps its order of the full expansion and
        :func:`_first_largest` (ties by index) picks the same extensions in the same order.
        """
        degree = self.ptr[end + 1] - self.ptr[end]
        total_count = int(degree.sum())
        if total_count > 8 * k:
            order, key, values = self._by_weight()
            heaviest = self._rows(end, degree.clamp(max=2 * -(-k // end.numel())), order)
            _, _, sums = self._valid(*heaviest, score, dst, valid)
            if sums.numel() >= k:
                tau = torch.topk(sums, k, sorted=False).values.min()
                low = tau - score - 1e-9 * (tau.abs() + score.abs() + 1)
                u = values.numel()
                rank = torch.searchsorted(values, low)  # first distinct weight >= low
                bound = end * (u + 1) + (u - rank)
                count = torch.searchsorted(key, bound, right=True) - self.ptr[end]
                owner, pos = self._rows(end, count.clamp(min=0), order)
                return self._valid(owner, pos, score, dst, valid)
        owner, pos = self._rows(end, degree, None)
        return self._valid(owner, pos, score, dst, valid)

    def _valid(
        self,
        owner: Tensor,
        pos: Tensor,
        score: Tensor,
        dst: Tensor,
        valid: Callable[[Tensor, Tensor], Tensor | None],
    ) -> tuple[Tensor, Tensor, Tensor]:
        """``(owner, slot, total)`` of the valid extensions among ``(owner, pos)``."""
        slot = self._slots(pos)
        ok = valid(owner, dst[slot])
        if ok is not None:
            owner, pos, slot = owner[ok], pos[ok], slot[ok]
        return owner, slot, score[owner] + self.weight[pos]

    def _slots(self, pos: Tensor) -> Tensor:
        return pos if self.slots is None else self.slots[pos]


def _first_largest(values: Tensor, k: int) -> Tensor:
    """``torch.argsort(values, descending=True, stable=True)[:k]`` of finite ``values``.

    Only the values above the :math:`k`-th largest, and the first of those equal to it, are
    sorted (a beam step on a dense graph ranks up to a million extensions to keep thousands).
    """
    if values.numel() <= k:
        return torch.argsort(values, descending=True, stable=True)
    kth = torch.topk(values, k, sorted=False).values.min()
    above = values > kth
    ties = torch.nonzero(values == kth).flatten()[: k - int(above.sum())]  # first by index
    chosen = torch.sort(torch.cat([torch.nonzero(above).flatten(), ties])).values
    return chosen[torch.argsort(values[chosen], descending=True, stable=True)]


def gradient_relevance(
    score_local: Callable[[LocalStructure, Tensor], Tensor],
) -> Relevance:
    r"""Edge relevance from a differentiable mask scorer: the two-point integrated gradient.

    .. math::
        I_e = \tfrac12 \bigl(\partial_{w_e} f(\mathbf 0) + \partial_{w_e} f(\mathbf 1)\bigr),

    with :math:`f(w)` the target's score under soft edge weights :math:`w \in [0, 1]^m`
    (Sundararajan et al., ICML 2017, arXiv 1703.01365; module docstring, "Pruning", for why it
    ranks paths by the first-order estimate of the search's objective). Both gradients come
    from one forward and backward pass over the two masks.

    Args:
        score_local: ``(local, mask [C, m] float) -> [C]`` scores, differentiable in the mask,
            e.g. :meth:`kg.explain.evaluator.DistilledEvaluator.score_local`.

    Returns:
        The relevance function for :func:`local_structure`.

    Examples:
        >>> def f(local, w):  # a scorer linear in the weights: I_e is its coefficient
        ...     return w @ torch.tensor([1.0, -2.0])
        >>> ei = torch.tensor([[0, 2], [2, 1]])
        >>> local = local_structure(ei, torch.tensor([0, 1]), (0, 2, 1), hops=1, max_length=2)
        >>> gradient_relevance(f)(local).tolist()
        [1.0, -2.0]
    """

    def relevance(local: LocalStructure) -> Tensor:
        ends = torch.tensor([0.0, 1.0], device=local.edge_type.device)
        mask = ends.unsqueeze(1).expand(2, local.num_edges).clone().requires_grad_(True)
        with torch.enable_grad():
            (grad,) = torch.autograd.grad(score_local(local, mask).sum(), mask)
        return 0.5 * (grad[0] + grad[1])

    return relevance


def model_relevance(model: KGEModel, calibration: tuple[float, float]) -> Relevance:
    r"""Edge relevance from the KGE itself: its calibrated log-probability of each local triple.

    .. math::
        I_e = \log p(e) = \log \sigma\bigl((f(e) - \tau) / \sigma_f\bigr),

    the probability map of :class:`kg.explain.KGExplainer` (``calibration_``), so that
    :math:`R(\pi) = \log \prod_{e \in \pi} p(e)` (module docstring, "Pruning").

    Args:
        model: The KGE (evaluated in eval mode, no gradients; not modified).
        calibration: :math:`(\tau, \sigma_f)`.

    Returns:
        The relevance function for :func:`local_structure`.
    """
    tau, sigma = calibration
    if not (math.isfinite(tau) and math.isfinite(sigma) and sigma > 0):
        raise GraphDataError(
            f"calibration: expected finite (tau, sigma_f) with sigma_f > 0, got {calibration!r}"
        )

    def relevance(local: LocalStructure) -> Tensor:
        return _log_probability(model, (tau, sigma), local.triples)

    return relevance


def _log_probability(model: KGEModel, calibration: tuple[float, float], triples: Tensor) -> Tensor:
    r""":math:`\log \sigma((f(e) - \tau) / \sigma_f)` of triples ``[m, 3]``, float64."""
    tau, sigma = calibration
    with torch.no_grad(), eval_mode(model):
        f = torch.cat(
            [model(x[:, 0], x[:, 1], x[:, 2]) for x in triples.split(4096)]
            or [triples.new_zeros(0, dtype=torch.float)]
        )
    return F.logsigmoid((f.double() - tau) / sigma)


def length_shares(counts: Sequence[int], budget: int) -> list[int]:
    r"""Split a candidate budget evenly across path lengths, passing unused shares on.

    With :math:`c_\ell` paths of length :math:`\ell` and budget :math:`B`: every path is kept
    when :math:`\sum_\ell c_\ell \le B`; otherwise the level
    :math:`s = \max\{s : \sum_\ell \min(c_\ell, s) \le B\}` is filled (water-filling, so a
    length with fewer than its share passes the rest on to the others) and the
    :math:`r = B - \sum_\ell \min(c_\ell, s)` paths left over go one each to the shortest
    lengths with :math:`c_\ell > s`:

    .. math::
        a_\ell = \min(c_\ell, s) + \mathbb{1}\bigl[c_\ell > s \wedge
        |\{\ell' < \ell : c_{\ell'} > s\}| < r\bigr].

    This is the max-min fair split: no length can get more without one that has no more
    getting less. A cap that kept the shortest paths first (the order of
    :class:`graphdata.paths.Paths`) would drop every long path, rule bodies of length 3
    included, whenever short paths alone exceed the budget.

    Args:
        counts: :math:`c_\ell`, the number of paths of each length (length 1 first).
        budget: :math:`B \ge 0`.

    Returns:
        :math:`a_\ell`, how many paths of each length to keep.

    Examples:
        >>> length_shares([2, 40, 300], 100)
        [2, 40, 58]
        >>> length_shares([0, 80, 300], 100)
        [0, 50, 50]
        >>> length_shares([1, 80, 300], 100)
        [1, 50, 49]
    """
    counts = [int(c) for c in counts]
    if sum(counts) <= budget:
        return counts
    low, high = 0, max(counts)  # the level s: sum(min(c, s)) <= budget holds at low
    while low < high:
        mid = (low + high + 1) // 2
        if sum(min(c, mid) for c in counts) <= budget:
            low = mid
        else:
            high = mid - 1
    shares = [min(c, low) for c in counts]
    left = budget - sum(shares)
    for i, c in enumerate(counts):
        if left and c > low:
            shares[i] += 1
            left -= 1
    return shares


#: Nesting depth of :func:`capped_summary`: an inner block leaves its warnings to the outer one.
_SUMMARY_DEPTH = 0


@contextlib.contextmanager
def capped_summary(num_targets: int | None = None) -> Iterator[list[CandidatesCapped]]:
    """Turn the :class:`CandidatesCapped` warnings of a block into one summary warning.

    Inside the block the per-target warnings are collected (the yielded list); at its end one
    :class:`CandidatesCappedSummary` states how many targets were capped, the cap, the range of
    paths found per length over them, and the fix. Every other warning is passed on as it was,
    after the block, under the caller's filters. Nested blocks leave everything to the
    outermost one, so one multi-target call gives one line.

    Args:
        num_targets: How many targets the block explains, for "42 of 60 targets"; default
            ``None``: the count of capped targets only.

    Yields:
        The list the collected :class:`CandidatesCapped` warnings are appended to (filled at the
        block's end).

    Examples:
        >>> ei = torch.tensor([[0, 0, 0], [1, 1, 1]])  # three parallel 0 -> 1 edges
        >>> with warnings.catch_warnings(record=True) as shown:
        ...     warnings.simplefilter("always")
        ...     with capped_summary(num_targets=2) as capped:
        ...         for _ in range(2):
        ...             _ = local_structure(ei, torch.tensor([0, 1, 2]), (0, 3, 1), hops=1,
        ...                                 max_length=1, max_candidates=1)
        >>> len(capped), len(shown), shown[0].category.__name__
        (2, 1, 'CandidatesCappedSummary')
    """
    global _SUMMARY_DEPTH
    capped: list[CandidatesCapped] = []
    if _SUMMARY_DEPTH:
        yield capped
        return
    caught: list[warnings.WarningMessage] = []
    _SUMMARY_DEPTH += 1
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", CandidatesCapped)
            yield capped
    finally:
        _SUMMARY_DEPTH -= 1
        for w in caught:
            if isinstance(w.message, CandidatesCapped):
                capped.append(w.message)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
        if capped:
            warnings.warn(CandidatesCappedSummary(_summary(capped, num_targets)), stacklevel=3)


def _summary(capped: Sequence[CandidatesCapped], num_targets: int | None) -> str:
    """The summary line of :func:`capped_summary`."""
    groups: dict[tuple[int, int, str], list[CandidatesCapped]] = {}
    for w in capped:
        groups.setdefault((w.max_candidates, w.max_length, w.method), []).append(w)
    clauses = []
    for (cap, length, method), group in groups.items():
        ranges = []
        for ell in range(length):
            found = [w.found[ell] for w in group if ell < len(w.found)]
            more = any(w.overflow[ell] for w in group if ell < len(w.overflow))
            low, high = min(found), max(found)
            median = statistics.median(found)
            span = (
                f"{high}{'+' if more else ''}"
                if low == high
                else f"{low}-{high}{'+' if more else ''}"
            )
            median_note = f" (median {median:g})" if len(group) > 1 else ""
            ranges.append(f"{ell + 1}: {span}{median_note}")
        clauses.append(
            f"more than max_candidates={cap} candidate paths of length <= {length}; each kept "
            f"{cap}, the budget split evenly across lengths"
            + (", the most relevant paths of each length" if method == "relevance" else "")
            + f" (found per length over these targets: {', '.join(ranges)})"
        )
    of = f" of {num_targets}" if num_targets is not None else ""
    return (
        f"{len(capped)}{of} targets had {'; '.join(clauses)}; raise max_candidates "
        "(--max-candidates) or lower max_length to search more (each result's `truncated` "
        "says which targets were capped)"
    )
