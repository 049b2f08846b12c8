r"""Relation-labelled simple paths between two nodes of a multi-relational graph.

Path-based explanations of knowledge-graph completion (Ma et al., "Towards Synergistic Path-based
Explanations for Knowledge Graph Completion", ICLR 2025, arXiv:2404.03893) pick a few such paths
between the head and the tail of a predicted triple. A step may follow an edge forwards (head to
tail) or backwards, and parallel edges give distinct paths: these are the simple edge paths of
the undirected multigraph view, as networkx's ``all_simple_edge_paths`` yields them on a
``MultiGraph``. The enumeration is vectorised: blocks of partial paths are expanded all at once
through a CSR adjacency, never by per-node Python recursion.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from graphdata._adjacency import (
    Csr,
    bfs_distances,
    build_csr,
    check_graph,
    check_int,
    check_nodes,
    check_pairs,
    check_relations,
    keep_mask,
    pair_chunks,
)
from graphdata._path_search import paths_of_length
from graphdata.errors import GraphDataError

__all__ = ["Paths", "Step", "count_paths", "enumerate_paths", "enumerate_paths_batch"]

#: One step of a path: the edge's stored triple ``(head, relation, tail)`` and whether the path
#: walks it forwards (from head to tail) or backwards.
Step = tuple[int, int, int, bool]

#: Valid values of ``on_overflow``.
ON_OVERFLOW = ("raise", "truncate")


@dataclass(frozen=True)
class Paths:
    """Simple paths from ``source`` to ``target``, shorter first, then lexicographic.

    Path ``p`` visits ``nodes[p, :length[p] + 1]``; its step ``i`` goes from ``nodes[p, i]`` to
    ``nodes[p, i + 1]`` along edge ``edge_ids[p, i]`` of relation ``relations[p, i]``,
    forwards (head to tail) when ``forward[p, i]``. Padding is ``-1`` (``False`` in
    ``forward``). Within a length, paths are ordered lexicographically by their steps, a step
    compared by the node it enters, then its edge id, then forwards before backwards.

    Attributes:
        nodes: The visited nodes, source first.
        edge_ids: Positions of the edges in the original edge list.
        relations: The relation of each step.
        forward: Whether each step follows its edge from head to tail.
        length: The number of steps of each path.
        source: The source node.
        target: The target node.
        truncated: True when ``on_overflow="truncate"`` cut the enumeration at ``max_paths``.

    Shapes:
        ``nodes``: ``[P, L + 1]``; ``edge_ids``, ``relations``, ``forward``: ``[P, L]``;
        ``length``: ``[P]``. ``L`` is the ``max_length`` asked for, capped at
        ``max(1, N' - 1)``, ``N'`` the nodes on some edge (no simple path is longer).
    """

    nodes: Tensor
    edge_ids: Tensor
    relations: Tensor
    forward: Tensor
    length: Tensor
    source: int
    target: int
    truncated: bool = False

    def __len__(self) -> int:
        return self.length.numel()

    @property
    def max_length(self) -> int:
        """The maximum length ``L`` the paths were enumerated up to (the capped width)."""
        return self.edge_ids.size(1)

    def to_list(self) -> list[tuple[Step, ...]]:
        """Every path as a tuple of steps ``(head, relation, tail, forward)``.

        ``(head, relation, tail)`` is the stored triple of the step's edge, whatever the
        direction of travel; ``forward`` says whether the path went from head to tail.
        """
        nodes, rels = self.nodes.tolist(), self.relations.tolist()
        fwd, lengths = self.forward.tolist(), self.length.tolist()
        out = []
        for p, n in enumerate(lengths):
            steps = []
            for i in range(n):
                a, b = nodes[p][i], nodes[p][i + 1]
                head, tail = (a, b) if fwd[p][i] else (b, a)
                steps.append((head, rels[p][i], tail, bool(fwd[p][i])))
            out.append(tuple(steps))
        return out

    def __iter__(self) -> Iterator[tuple[Step, ...]]:
        return iter(self.to_list())

    def to_labeled(
        self,
        entity_labels: Sequence[str] | Mapping[int, str],
        relation_labels: Sequence[str] | Mapping[int, str],
    ) -> list[tuple[tuple[str, str, str, bool], ...]]:
        """Like :meth:`to_list`, with entity and relation ids replaced by labels.

        Args:
            entity_labels: Label of each entity id (a list indexed by id, or a mapping).
            relation_labels: Label of each relation id.

        Returns:
            Every path as a tuple of ``(head_label, relation_label, tail_label, forward)``.
        """
        return [
            tuple((entity_labels[h], relation_labels[r], entity_labels[t], f) for h, r, t, f in p)
            for p in self.to_list()
        ]


def enumerate_paths(
    edge_index: Tensor,
    edge_type: Tensor,
    source: int,
    target: int,
    max_length: int,
    *,
    num_nodes: int | None = None,
    max_paths: int | None = None,
    on_overflow: str = "raise",
    exclude_edges: Tensor | None = None,
    exclude_triples: Tensor | tuple[int, int, int] | None = None,
    min_length: int = 1,
) -> Paths:
    r"""Relation-labelled simple paths from ``source`` to ``target``, ``min_length`` to L steps.

    A path :math:`(v_0, e_1, v_1, \dots, e_\ell, v_\ell)` uses edges
    :math:`e_i \in G \setminus X` (excluded edges removed), each joining :math:`v_{i-1}` and
    :math:`v_i` in either direction, and visits no node twice:

    .. math::
        \mathcal{P}_L(s, t) = \{(e_1, \dots, e_\ell) : \ell_{\min} \le \ell \le L,\ v_0 = s,\
        v_\ell = t,\ v_i \ne v_j \text{ for } i \ne j\},

    with :math:`\ell_{\min}` = ``min_length`` (default 1).

    Paths of each length :math:`\ell` are built by frontier expansion: blocks of partial paths
    are extended through every incident edge at once; an extension is dropped when it revisits
    a node, enters :math:`t` early, or ends at a node :math:`v` farther from :math:`t` than the
    steps left (:math:`d(v, t) > \ell - i`, :math:`d` the undirected hop distance in
    :math:`G \setminus X`; this never drops a path that could complete). The last step is a
    binary search for the edges joining the end to :math:`t`. Blocks are processed depth first,
    so the working memory stays bounded whatever the number of paths.

    Args:
        edge_index: Edges, row 0 heads and row 1 tails.
        edge_type: The relation of each edge.
        source: The source node :math:`s`.
        target: The target node :math:`t`; ``source == target`` gives no path (none is simple).
        max_length: The maximum number of steps :math:`L`, ``>= 1``. No simple path has more
            than :math:`N' - 1` steps, :math:`N'` the nodes on some edge (excluded or not),
            so a larger value searches and pads to :math:`\max(1, N' - 1)` only.
        num_nodes: The number of nodes. Default ``None``: ``edge_index.max() + 1``.
        max_paths: The most paths to return, ``>= 1``. Default ``None``: no cap.
        on_overflow: What happens when more than ``max_paths`` paths exist: ``"raise"``
            (default) raises :class:`~graphdata.errors.GraphDataError`; ``"truncate"`` keeps
            the first ``max_paths`` in the order of :class:`Paths` (every shorter path before
            any longer one) and sets ``truncated``.
        exclude_edges: Edge ids ``[M]`` or a mask ``[E]`` of edges no path may use. Default None.
        exclude_triples: ``(h, r, t)`` or ``[M, 3]``: edges equal to one of these triples are
            not used. An explainer passes the triple it explains. Default None.
        min_length: The shortest paths enumerated, ``1 <= min_length <= L`` (``L`` alone: the
            paths of exactly ``L`` steps, each length capped by its own ``max_paths``).
            Default 1.

    Returns:
        The :class:`Paths`.

    Raises:
        GraphDataError: On malformed input, or with ``on_overflow="raise"`` when there are more
            than ``max_paths`` paths.

    Shapes:
        ``edge_index``: ``[2, E]``; ``edge_type``: ``[E]``.

    Examples:
        >>> ei = torch.tensor([[0, 1, 2, 0], [1, 2, 0, 2]])  # 0->1->2, 2->0 and 0->2 in parallel
        >>> paths = enumerate_paths(ei, torch.tensor([5, 6, 7, 8]), 0, 2, 2)
        >>> paths.to_list()
        [((2, 7, 0, False),), ((0, 8, 2, True),), ((0, 5, 1, True), (1, 6, 2, True))]
        >>> len(enumerate_paths(ei, torch.tensor([5, 6, 7, 8]), 0, 2, 2, exclude_triples=(0, 8, 2)))
        2
    """
    num_nodes = check_graph(edge_index, edge_type, num_nodes)
    for name, node in (("source", source), ("target", target)):
        check_nodes(name, torch.tensor([check_int(name, node, 0)]), num_nodes)
    pairs = torch.tensor([[source, target]], dtype=torch.long, device=edge_index.device)
    return enumerate_paths_batch(
        edge_index,
        edge_type,
        pairs,
        max_length,
        num_nodes=num_nodes,
        max_paths=max_paths,
        on_overflow=on_overflow,
        exclude_edges=exclude_edges,
        exclude_triples=exclude_triples,
        min_length=min_length,
    )[0]


def count_paths(
    edge_index: Tensor,
    source: int,
    target: int,
    max_length: int,
    *,
    num_nodes: int | None = None,
    exclude_edges: Tensor | None = None,
) -> list[int]:
    r"""The number of simple paths of 1, ..., ``max_length`` steps from ``source`` to ``target``.

    Entry :math:`\ell - 1` is ``len(enumerate_paths(..., ell, min_length=ell))``, found without
    enumerating them, for ``max_length`` up to 3. With :math:`M_{uv}` the number of usable edges
    joining :math:`u \ne v` in either direction (parallel edges count apart, as they give
    distinct paths), :math:`a_u = M_{su}` and :math:`b_u = M_{ut}` for
    :math:`u \notin \{s, t\}` (0 at :math:`s` and :math:`t`):

    .. math::
        |\mathcal{P}_1| = M_{st}, \qquad
        |\mathcal{P}_2| = \sum_u a_u b_u, \qquad
        |\mathcal{P}_3| = a^\top M b,

    since a path :math:`s, u, v, t` is simple when :math:`u, v \notin \{s, t\}` and
    :math:`u \ne v`, and :math:`M_{uu} = 0` (an edge from a node to itself is on no simple
    path). Exact integers, :math:`O(E)`; a longer path can revisit a node in more ways and is
    not counted here. ``source == target`` gives zeros, as no path is simple.

    Args:
        edge_index: Edges ``[2, E]``, row 0 heads and row 1 tails.
        source: The source node :math:`s`.
        target: The target node :math:`t`.
        max_length: The longest paths counted, 1, 2 or 3.
        num_nodes: The number of nodes. Default ``None``: ``edge_index.max() + 1``.
        exclude_edges: Edge ids ``[M]`` or a mask ``[E]`` of edges no path may use, as in
            :func:`enumerate_paths`. Default None.

    Returns:
        The number of paths of each length, shortest first.

    Raises:
        GraphDataError: On malformed input or a ``max_length`` outside 1-3.

    Examples:
        >>> ei = torch.tensor([[0, 1, 2, 0], [1, 2, 0, 2]])  # 0->1->2, 2->0 and 0->2 in parallel
        >>> count_paths(ei, 0, 2, 3)
        [2, 1, 0]
    """
    shaped = isinstance(edge_index, Tensor) and edge_index.dim() == 2
    edge_type = edge_index.new_zeros(edge_index.size(1)) if shaped else torch.zeros(0)
    num_nodes = check_graph(edge_index, edge_type.long(), num_nodes)
    for name, node in (("source", source), ("target", target)):
        check_nodes(name, torch.tensor([check_int(name, node, 0)]), num_nodes)
    max_length = check_int("max_length", max_length, 1)
    if max_length > 3:
        raise GraphDataError(
            f"max_length: expected 1, 2 or 3 (longer paths are counted by enumerate_paths), "
            f"got {max_length}"
        )
    if source == target:
        return [0] * max_length
    keep = keep_mask(edge_index, edge_type, exclude_edges, None)
    u, v = edge_index if keep is None else edge_index[:, keep]
    joins = u != v  # an edge from a node to itself is on no simple path
    u, v = u[joins], v[joins]
    ends = torch.cat([u, v]), torch.cat([v, u])  # each edge in both directions
    a = torch.bincount(ends[1][ends[0] == source], minlength=num_nodes)  # [N] M_su
    b = torch.bincount(ends[0][ends[1] == target], minlength=num_nodes)  # [N] M_ut
    counts = [int(a[target])]
    a[[source, target]] = 0
    b[[source, target]] = 0
    if max_length >= 2:
        counts.append(int((a * b).sum()))
    if max_length >= 3:
        counts.append(int((a[ends[0]] * b[ends[1]]).sum()))
    return counts


def enumerate_paths_batch(
    edge_index: Tensor,
    edge_type: Tensor,
    pairs: Tensor,
    max_length: int,
    *,
    num_nodes: int | None = None,
    max_paths: int | None = None,
    on_overflow: str = "raise",
    target_relations: Tensor | None = None,
    exclude_edges: Tensor | None = None,
    exclude_triples: Tensor | tuple[int, int, int] | None = None,
    min_length: int = 1,
) -> list[Paths]:
    r"""The paths of :func:`enumerate_paths` for many ``(source, target)`` pairs at once.

    All pairs share one adjacency and one batched search (rows of all pairs are expanded
    together), which saves the per-call overhead when there are many pairs with few paths each.
    ``max_paths`` and ``on_overflow`` apply to every pair separately.

    Args:
        edge_index: Edges, row 0 heads and row 1 tails.
        edge_type: The relation of each edge.
        pairs: The ``(source, target)`` pairs.
        max_length: The maximum number of steps :math:`L`, ``>= 1``; capped at
            :math:`\max(1, N' - 1)` as in :func:`enumerate_paths` (one width for every pair).
        num_nodes: The number of nodes. Default ``None``: ``edge_index.max() + 1``.
        max_paths: The most paths per pair, ``>= 1``. Default ``None``: no cap.
        on_overflow: ``"raise"`` (default, names the first pair over the cap) or
            ``"truncate"``, as in :func:`enumerate_paths`.
        target_relations: If given, pair ``b`` is the triple :math:`(s_b, r_b, t_b)` and its
            paths may not use the edges equal to it (only a one-step path could). Default None.
        exclude_edges: Edge ids ``[M]`` or a mask ``[E]`` no path may use. Default None.
        exclude_triples: ``(h, r, t)`` or ``[M, 3]``, not used by any path. Default None.
        min_length: The shortest paths enumerated, ``1 <= min_length <= L``. Default 1.

    Returns:
        One :class:`Paths` per pair, in pair order.

    Shapes:
        ``pairs``: ``[B, 2]``; ``target_relations``: ``[B]``; ``edge_index``: ``[2, E]``.

    Examples:
        >>> ei = torch.tensor([[0, 1, 2], [1, 2, 3]])  # the path 0 - 1 - 2 - 3
        >>> out = enumerate_paths_batch(ei, torch.zeros(3, dtype=torch.long),
        ...                             torch.tensor([[0, 3], [3, 1], [1, 1]]), 3)
        >>> [p.nodes.tolist() for p in out]
        [[[0, 1, 2, 3]], [[3, 2, 1, -1]], []]
    """
    num_nodes = check_graph(edge_index, edge_type, num_nodes)
    check_pairs(pairs, edge_index, num_nodes, "(source, target)")
    max_length = check_int("max_length", max_length, 1)
    min_length = check_int("min_length", min_length, 1)
    if min_length > max_length:
        raise GraphDataError(
            f"min_length: expected at most max_length={max_length}, got {min_length}"
        )
    if max_paths is not None:
        max_paths = check_int("max_paths", max_paths, 1)
    if on_overflow not in ON_OVERFLOW:
        raise GraphDataError(f"on_overflow: expected one of {ON_OVERFLOW}, got {on_overflow!r}")
    num_pairs = pairs.size(0)
    own = None
    if target_relations is not None:
        check_relations("target_relations", target_relations, num_pairs, edge_index)
        own = (target_relations, edge_index, edge_type)
    keep = keep_mask(edge_index, edge_type, exclude_edges, exclude_triples)

    csr = build_csr(edge_index, num_nodes, keep)
    # A simple path visits distinct nodes, each on some edge, so it has at most (those nodes - 1)
    # steps: longer lengths are neither searched nor padded (L = 10**9 on a small graph would
    # allocate [P, 10**9 + 1]). Counted over every edge, excluded ones included, so the width is
    # the same for every pair and exclusion (a batch equals its single calls).
    on_edge = torch.zeros(num_nodes, dtype=torch.bool, device=edge_index.device)
    on_edge[edge_index.reshape(-1)] = True
    touched = int(on_edge.sum())
    max_length = max(1, min(max_length, touched - 1))
    results: list[Paths] = []
    for start, stop in pair_chunks(num_pairs, num_nodes):
        results += _enumerate_chunk(
            csr,
            edge_type,
            num_nodes,
            pairs[start:stop],
            max_length,
            max_paths,
            on_overflow,
            None if own is None else (own[0][start:stop], *own[1:]),
            start,
            min_length,
        )
    return results


def _enumerate_chunk(
    csr: Csr,
    edge_type: Tensor,
    num_nodes: int,
    pairs: Tensor,
    max_length: int,
    max_paths: int | None,
    on_overflow: str,
    own: tuple[Tensor, Tensor, Tensor] | None,
    offset: int,
    min_length: int = 1,
) -> list[Paths]:
    """Paths of one chunk of pairs (``offset``: index of its first pair, for messages)."""
    num_pairs = pairs.size(0)
    sources, targets = pairs[:, 0], pairs[:, 1]
    to_target = bfs_distances(csr, targets, num_nodes, max_length - 1)  # [B * N]
    found = torch.zeros(num_pairs, dtype=torch.long, device=pairs.device)
    truncated = torch.zeros(num_pairs, dtype=torch.bool, device=pairs.device)
    blocks = []
    for ell in range(min_length, max_length + 1):
        # Look for one path beyond the cap, to know whether a pair exceeds it.
        limits = None if max_paths is None else torch.where(truncated, 0, max_paths + 1 - found)
        pair, nodes, eids, fwd = paths_of_length(
            csr, sources, targets, to_target, num_nodes, ell, limits=limits, own=own
        )
        got = torch.bincount(pair, minlength=num_pairs)
        if max_paths is not None and bool((over := found + got > max_paths).any()):
            b = int(over.nonzero()[0])
            if on_overflow == "raise":
                raise GraphDataError(
                    f"max_paths: pair {offset + b} ({int(sources[b])} -> {int(targets[b])}) has "
                    f"more than max_paths={max_paths} simple paths of length <= {max_length} "
                    f"(at least {int(found[b] + got[b])}, counting stopped at length {ell}); "
                    "raise max_paths, lower max_length, or pass on_overflow='truncate' to keep "
                    "the shortest ones"
                )
            rank = torch.arange(pair.numel(), device=pair.device) - torch.searchsorted(pair, pair)
            fits = rank < max_paths - found[pair]  # rows are sorted by pair, lexicographic
            pair, nodes, eids, fwd = pair[fits], nodes[fits], eids[fits], fwd[fits]
            truncated |= over
            got = torch.bincount(pair, minlength=num_pairs)
        found += got
        pad = max_length - ell
        blocks.append(
            (
                pair,
                torch.nn.functional.pad(nodes, (0, pad), value=-1),  # [P_ell, L + 1]
                torch.nn.functional.pad(eids, (0, pad), value=-1),  # [P_ell, L]
                torch.nn.functional.pad(fwd, (0, pad), value=False),
                torch.full_like(pair, ell),
            )
        )
    if not blocks:  # min_length beyond the longest simple path: no path, width L
        none = pairs.new_empty(0)
        blank = pairs.new_empty(0, max_length)
        blocks.append((none, pairs.new_empty(0, max_length + 1), blank, blank.bool(), none))
    pair, nodes, eids, fwd, length = (torch.cat(parts) for parts in zip(*blocks))
    if num_pairs > 1:
        order = torch.sort(pair, stable=True).indices  # by pair; lengths and order kept inside
        nodes, eids, fwd, length = nodes[order], eids[order], fwd[order], length[order]
    relations = torch.where(eids >= 0, edge_type[eids.clamp_min(0)], -1)
    sizes = found.tolist()
    return [
        Paths(n, e, r, f, ln, source=s, target=t, truncated=c)
        for n, e, r, f, ln, s, t, c in zip(
            torch.split(nodes, sizes),
            torch.split(eids, sizes),
            torch.split(relations, sizes),
            torch.split(fwd, sizes),
            torch.split(length, sizes),
            sources.tolist(),
            targets.tolist(),
            truncated.tolist(),
        )
    ]
