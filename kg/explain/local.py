r"""The local structure of a target triple: its enclosing subgraph and candidate paths.

KGExplainer (Ma et al., "Towards Synergistic Path-based Explanations for Knowledge Graph
Completion: Exploration and Evaluation", ICLR 2025, arXiv 2404.03893) explains a prediction
:math:`(h, r, t)` by paths between :math:`h` and :math:`t` in a small subgraph around them. The
reference code extracts one subgraph for the explainer and another (GraIL's) for its evaluator;
here one definition serves both: the ``k``-hop enclosing subgraph (Teru et al., ICML 2020,
arXiv 1911.06962), edge directions ignored, with the target triple removed, and the candidate
paths are the simple relation-labelled paths from :math:`h` to :math:`t` inside it. Every node
of a path of length :math:`\le k + 1` lies within :math:`k` hops of both ends, so ``hops=2``
holds every path of length up to 3. When there are more candidates than the cap, the budget is
split evenly across path lengths (:func:`length_shares`): paths of length 3 outnumber shorter
ones by far in a dense neighbourhood, and a cap that kept the shortest would drop every long
rule body whenever the short paths alone filled it.

A capped target gives one :class:`CandidatesCapped` warning; over many targets
(:meth:`kg.explain.KGExplainer.explain_all`, a benchmark loop) :func:`capped_summary` turns them
into a single summary line at the end, and each result's ``truncated`` says which were capped.
"""

from __future__ import annotations

import contextlib
import statistics
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from graphdata.errors import GraphDataError
from graphdata.paths import enumerate_paths
from graphdata.subgraph import k_hop_enclosing_subgraph

__all__ = [
    "CandidatesCapped",
    "CandidatesCappedSummary",
    "LocalStructure",
    "capped_summary",
    "length_shares",
    "local_structure",
]


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
    ) -> None:
        super().__init__(message)
        self.target = target
        self.found = found
        self.kept = kept
        self.overflow = overflow
        self.max_candidates = max_candidates
        self.max_length = max_length


class CandidatesCappedSummary(UserWarning):
    """The one line :func:`capped_summary` gives for all the capped targets of a block."""


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
        found: Candidate paths found per length, length 1 first, before the cap; each at most
            ``max_candidates`` (a lower bound where the enumeration stopped there). Default
            ``()``.

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
        for p in paths:
            mask[list(self.paths[p])] = True
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
) -> LocalStructure:
    r"""Extract the enclosing subgraph of ``target`` and its ``h``-to-``t`` paths.

    With :math:`G' = G \setminus \{(h, r, t)\}` and :math:`d` the undirected hop distance in
    :math:`G'`, the local nodes are :math:`V = \{h, t\} \cup \{v : d(h, v) \le k \wedge
    d(t, v) \le k\}`, the local triples are those of :math:`G'` between nodes of :math:`V`, and
    the candidates are the simple paths of length :math:`1 .. L` from :math:`h` to :math:`t`
    over local triples, each step forwards or backwards (:func:`graphdata.paths.enumerate_paths`).

    Args:
        edge_index: The graph's triples' heads (row 0) and tails (row 1), global ids.
        edge_type: The graph's triples' relations.
        target: The triple ``(h, r, t)`` to explain, global ids, ``h != t``.
        num_nodes: The number of entities. Default ``None``: ``edge_index.max() + 1``.
        hops: The radius :math:`k`. Default 2.
        max_length: The longest path :math:`L`. Default 3.
        max_candidates: The most candidate paths kept, the budget split evenly across path
            lengths (:func:`length_shares`; within a length, the first in the order of
            :class:`graphdata.paths.Paths`); more give a :class:`CandidatesCapped` warning
            that states the cap and the split (one line for many targets inside
            :func:`capped_summary`). Default 300.
        path_relations: Relation ids candidate paths may use; default ``None``: all. The local
            graph keeps every relation (the scorer still sees all triples).

    Returns:
        The :class:`LocalStructure`; without any path (``h`` and ``t`` not joined within the
        subgraph) its :attr:`~LocalStructure.paths` is empty.

    Raises:
        GraphDataError: If ``h == t`` or an id is out of range.

    Shapes:
        ``edge_index``: ``[2, E]``; ``edge_type``: ``[E]``.

    Examples:
        >>> ei = torch.tensor([[0, 2, 0], [2, 1, 1]])  # 0 -a-> 2 -b-> 1 and the target 0 -c-> 1
        >>> local = local_structure(ei, torch.tensor([0, 1, 2]), (0, 2, 1), hops=1, max_length=2)
        >>> local.nodes.tolist(), local.paths, local.triples.tolist()
        ([0, 1, 2], ((0, 1),), [[0, 0, 2], [2, 1, 1]])
    """
    head, relation, tail = (int(x) for x in target)
    if head == tail:
        raise GraphDataError(
            f"target: expected a triple with head != tail, got {target!r}; a self-loop has no "
            "path between two distinct entities to explain it"
        )
    if (
        isinstance(max_candidates, bool)
        or not isinstance(max_candidates, int)
        or max_candidates < 1
    ):
        raise GraphDataError(f"max_candidates: expected a positive int, got {max_candidates!r}")
    sub = k_hop_enclosing_subgraph(
        head,
        tail,
        edge_index,
        edge_type,
        num_nodes,
        k=hops,
        exclude_triples=(head, relation, tail),
    )
    excluded = None
    if path_relations is not None:
        excluded = ~torch.isin(sub.edge_type, path_relations.to(sub.edge_type.device))
    # Each length is enumerated on its own, up to the whole budget, so the cap can be split.
    by_length = [
        enumerate_paths(
            sub.edge_index,
            sub.edge_type,
            0,
            1,
            ell,
            num_nodes=sub.num_nodes,
            max_paths=max_candidates,
            on_overflow="truncate",
            exclude_edges=excluded,
            min_length=ell,
        )
        for ell in range(1, max_length + 1)
    ]
    counts = [len(p) for p in by_length]
    truncated = sum(counts) > max_candidates or any(p.truncated for p in by_length)
    kept = length_shares(counts, max_candidates)
    if truncated:
        found = ", ".join(
            f"{ell}: {n} of {c}{'+' if p.truncated else ''}"
            for ell, (n, c, p) in enumerate(zip(kept, counts, by_length), start=1)
        )
        warnings.warn(
            CandidatesCapped(
                f"target {target}: more than max_candidates={max_candidates} candidate paths of "
                f"length <= {max_length}; kept {sum(kept)}, the budget split evenly across "
                f"lengths (kept of found per length: {found}) (raise max_candidates or lower "
                "max_length to search more)",
                target=(head, relation, tail),
                found=tuple(counts),
                kept=tuple(kept),
                overflow=tuple(p.truncated for p in by_length),
                max_candidates=max_candidates,
                max_length=max_length,
            ),
            stacklevel=2,
        )
    edge_paths: list[tuple[int, ...]] = []
    node_paths: list[tuple[int, ...]] = []
    for ell, (paths, n) in enumerate(zip(by_length, kept), start=1):
        edge_paths += [tuple(row[:ell]) for row in paths.edge_ids[:n].tolist()]
        node_paths += [tuple(row[: ell + 1]) for row in paths.nodes[:n].tolist()]
    return LocalStructure(
        target=(head, relation, tail),
        nodes=sub.nodes,
        edge_index=sub.edge_index,
        edge_type=sub.edge_type,
        paths=tuple(edge_paths),
        path_nodes=tuple(node_paths),
        truncated=truncated,
        hops=hops,
        max_length=max_length,
        found=tuple(counts),
    )


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
    groups: dict[tuple[int, int], list[CandidatesCapped]] = {}
    for w in capped:
        groups.setdefault((w.max_candidates, w.max_length), []).append(w)
    clauses = []
    for (cap, length), group in groups.items():
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
            ranges.append(f"{ell + 1}: {span} (median {median:g})")
        clauses.append(
            f"more than max_candidates={cap} candidate paths of length <= {length}; each kept "
            f"{cap}, the budget split evenly across lengths (found per length over these "
            f"targets: {', '.join(ranges)})"
        )
    of = f" of {num_targets}" if num_targets is not None else ""
    return (
        f"{len(capped)}{of} targets had {'; '.join(clauses)}; raise max_candidates "
        "(--max-candidates) or lower max_length to search more (each result's `truncated` "
        "says which targets were capped)"
    )
