r"""k-hop enclosing subgraphs of (head, tail) pairs in multi-relational graphs (GraIL).

Teru, Denis and Hamilton, "Inductive Relation Prediction by Subgraph Reasoning", ICML 2020,
arXiv:1911.06962. The enclosing subgraph of a target pair is the graph induced by the nodes that
lie within ``k`` hops of both endpoints, edge directions ignored. KGExplainer's distilled evaluator
(Ma et al., ICLR 2025, arXiv:2404.03893) scores exactly these subgraphs; the explainer extracts
thousands of them, hence the batched, loop-free extraction here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
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
    expand,
    expand_ranges,
    keep_mask,
    pair_chunks,
)
from graphdata.errors import GraphDataError

__all__ = [
    "EnclosingSubgraph",
    "EnclosingSubgraphBatch",
    "k_hop_enclosing_subgraph",
    "k_hop_enclosing_subgraphs",
    "enclosing_subgraph_chunks",
]

#: Valid values of ``mode``: GraIL's intersection of the two k-hop balls, or their union.
MODES = ("intersection", "union")


@dataclass(frozen=True)
class EnclosingSubgraph:
    """The enclosing subgraph of one pair; ``nodes[0]`` is the head and ``nodes[1]`` the tail.

    GraIL's node labels are the pair ``(dist_head, dist_tail)``; note that GraIL measures them
    inside the subgraph with the other end removed, whereas these are whole-graph distances
    (equal whenever a shortest path stays inside the subgraph and avoids the other end).

    Attributes:
        nodes: Original ids of the subgraph's nodes, head first, tail second, then ascending.
        edge_index: The induced edges in local ids (positions in ``nodes``), sorted by head id,
            tail id, then edge id.
        edge_type: The relation of each induced edge.
        edge_id: The position of each induced edge in the original edge list.
        dist_head: Hop distance of each node to the head in the whole graph (edge directions
            ignored, excluded edges removed), or ``-1`` when it is more than ``k``.
        dist_tail: The same for the tail.

    Shapes:
        ``nodes``, ``dist_head``, ``dist_tail``: ``[n]``; ``edge_index``: ``[2, m]``;
        ``edge_type``, ``edge_id``: ``[m]``.
    """

    nodes: Tensor
    edge_index: Tensor
    edge_type: Tensor
    edge_id: Tensor
    dist_head: Tensor
    dist_tail: Tensor

    @property
    def num_nodes(self) -> int:
        """The number of nodes ``n``."""
        return self.nodes.numel()

    @property
    def num_edges(self) -> int:
        """The number of induced edges ``m``."""
        return self.edge_id.numel()


@dataclass(frozen=True)
class EnclosingSubgraphBatch:
    """Enclosing subgraphs of ``B`` pairs as one disjoint union, in PyG's batch layout.

    Pair ``b`` owns nodes ``node_ptr[b]:node_ptr[b+1]`` (its head at ``node_ptr[b]``, its tail
    right after) and edges ``edge_ptr[b]:edge_ptr[b+1]``; ``edge_index`` holds positions in the
    concatenated ``nodes``, so the batch feeds a GNN directly. ``batch[i]`` is then ``b``.

    Attributes:
        nodes: Original node ids, concatenated over pairs.
        node_ptr: Offsets of each pair's nodes.
        edge_index: The induced edges, as positions in ``nodes``; by pair, then head id, tail
            id and edge id.
        edge_type: The relation of each edge.
        edge_id: The position of each edge in the original edge list.
        edge_ptr: Offsets of each pair's edges.
        dist_head: Hop distance of each node to its pair's head, ``-1`` beyond ``k``.
        dist_tail: Hop distance of each node to its pair's tail, ``-1`` beyond ``k``.

    Shapes:
        ``nodes``, ``dist_head``, ``dist_tail``: ``[sum n]``; ``node_ptr``, ``edge_ptr``:
        ``[B + 1]``; ``edge_index``: ``[2, sum m]``; ``edge_type``, ``edge_id``: ``[sum m]``.
    """

    nodes: Tensor
    node_ptr: Tensor
    edge_index: Tensor
    edge_type: Tensor
    edge_id: Tensor
    edge_ptr: Tensor
    dist_head: Tensor
    dist_tail: Tensor

    def __len__(self) -> int:
        return self.node_ptr.numel() - 1

    @property
    def batch(self) -> Tensor:
        """The pair each node belongs to, ``[sum n]`` (PyG's ``batch`` vector)."""
        counts = self.node_ptr.diff()
        return torch.repeat_interleave(torch.arange(len(self), device=counts.device), counts)

    @property
    def head_index(self) -> Tensor:
        """Position of each pair's head in ``nodes``, ``[B]``."""
        return self.node_ptr[:-1]

    @property
    def tail_index(self) -> Tensor:
        """Position of each pair's tail in ``nodes``, ``[B]``."""
        return self.node_ptr[:-1] + 1

    def __getitem__(self, b: int) -> EnclosingSubgraph:
        """The subgraph of pair ``b``, with local edge ids."""
        if not -len(self) <= b < len(self):
            raise IndexError(f"pair index {b} out of range for a batch of {len(self)}")
        b = b % len(self)
        n0, n1 = int(self.node_ptr[b]), int(self.node_ptr[b + 1])
        m0, m1 = int(self.edge_ptr[b]), int(self.edge_ptr[b + 1])
        return EnclosingSubgraph(
            nodes=self.nodes[n0:n1],
            edge_index=self.edge_index[:, m0:m1] - n0,
            edge_type=self.edge_type[m0:m1],
            edge_id=self.edge_id[m0:m1],
            dist_head=self.dist_head[n0:n1],
            dist_tail=self.dist_tail[n0:n1],
        )


def k_hop_enclosing_subgraph(
    head: int,
    tail: int,
    edge_index: Tensor,
    edge_type: Tensor,
    num_nodes: int | None = None,
    *,
    k: int = 2,
    mode: str = "intersection",
    exclude_edges: Tensor | None = None,
    exclude_triples: Tensor | tuple[int, int, int] | None = None,
) -> EnclosingSubgraph:
    r"""The k-hop enclosing subgraph of one pair (GraIL, arXiv:1911.06962).

    With :math:`d(x, v)` the hop distance in the graph :math:`G \setminus X` (excluded edges
    removed) with edge directions ignored, the node set is

    .. math::
        V = \{h, t\} \cup \{v : d(h, v) \le k \wedge d(t, v) \le k\}

    for ``mode="intersection"`` (GraIL) and :math:`\{v : d(h, v) \le k \vee d(t, v) \le k\}`
    for ``mode="union"``; the edges are all :math:`(u, r, w) \in G \setminus X` with
    :math:`u, w \in V` (the induced subgraph, every relation and both directions).

    Args:
        head: The head node :math:`h`.
        tail: The tail node :math:`t`, different from ``head``.
        edge_index: Edges, row 0 heads and row 1 tails.
        edge_type: The relation of each edge.
        num_nodes: The number of nodes. Default ``None``: ``edge_index.max() + 1``.
        k: The radius in hops, ``>= 0``. Default 2, as in GraIL.
        mode: ``"intersection"`` (default, GraIL) or ``"union"``.
        exclude_edges: Edge ids ``[M]`` or a mask ``[E]`` of edges to remove first. Default None.
        exclude_triples: ``(h, r, t)`` or ``[M, 3]``; every edge equal to one of these triples is
            removed first. An explainer passes the triple it explains. Default None.

    Returns:
        The :class:`EnclosingSubgraph`, head at local id 0 and tail at local id 1.

    Shapes:
        ``edge_index``: ``[2, E]``; ``edge_type``: ``[E]``.

    Examples:
        >>> ei = torch.tensor([[0, 1, 2, 0], [1, 2, 3, 2]])
        >>> sub = k_hop_enclosing_subgraph(0, 2, ei, torch.tensor([0, 0, 1, 2]), k=1,
        ...                                exclude_triples=(0, 2, 2))
        >>> sub.nodes.tolist(), sub.edge_id.tolist(), sub.dist_tail.tolist()
        ([0, 2, 1], [0, 1], [-1, 0, 1])
    """
    num_nodes = check_graph(edge_index, edge_type, num_nodes)
    for name, node in (("head", head), ("tail", tail)):
        check_nodes(name, torch.tensor([check_int(name, node, 0)]), num_nodes)
    if head == tail:
        raise GraphDataError(
            f"tail: expected a node different from head (a self-pair has no enclosing "
            f"subgraph), got head = tail = {head}"
        )
    pairs = torch.tensor([[head, tail]], dtype=torch.long, device=edge_index.device)
    batch = k_hop_enclosing_subgraphs(
        pairs,
        edge_index,
        edge_type,
        num_nodes,
        k=k,
        mode=mode,
        exclude_edges=exclude_edges,
        exclude_triples=exclude_triples,
    )
    return batch[0]


def k_hop_enclosing_subgraphs(
    pairs: Tensor,
    edge_index: Tensor,
    edge_type: Tensor,
    num_nodes: int | None = None,
    *,
    k: int = 2,
    mode: str = "intersection",
    target_relations: Tensor | None = None,
    exclude_edges: Tensor | None = None,
    exclude_triples: Tensor | tuple[int, int, int] | None = None,
) -> EnclosingSubgraphBatch:
    r"""Enclosing subgraphs of many pairs at once, as a disjoint-union batch.

    Same definition as :func:`k_hop_enclosing_subgraph`, per pair :math:`(h_b, t_b)`. The
    breadth-first searches run for all pairs together by frontier expansion: each hop expands
    every ``(pair, node)`` of the frontier through a CSR at once (no per-node Python loop) into
    a distance table per pair; pairs are processed in chunks that keep those tables at a few
    tens of MiB. The output itself holds every subgraph, so on hub-heavy graphs with ``k = 2``
    pass the pairs in batches that fit memory.

    Args:
        pairs: The ``(head, tail)`` pairs, heads different from tails.
        edge_index: Edges, row 0 heads and row 1 tails.
        edge_type: The relation of each edge.
        num_nodes: The number of nodes. Default ``None``: ``edge_index.max() + 1``.
        k: The radius in hops, ``>= 0``. Default 2.
        mode: ``"intersection"`` (default, GraIL) or ``"union"``.
        target_relations: If given, pair ``b`` is the target triple
            :math:`(h_b, r_b, t_b)` and its edges are removed from subgraph ``b`` only (GraIL
            removes the target link). Default None.
        exclude_edges: Edge ids ``[M]`` or a mask ``[E]`` removed for every pair. Default None.
        exclude_triples: ``(h, r, t)`` or ``[M, 3]`` removed for every pair. Default None.

    Returns:
        The :class:`EnclosingSubgraphBatch`; pair order is kept.

    Shapes:
        ``pairs``: ``[B, 2]``; ``target_relations``: ``[B]``; ``edge_index``: ``[2, E]``.

    Examples:
        >>> ei = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]])  # a 4-cycle
        >>> sub = k_hop_enclosing_subgraphs(torch.tensor([[0, 2], [0, 1]]), ei,
        ...                                 torch.zeros(4, dtype=torch.long), k=1)
        >>> sub.node_ptr.tolist(), sub[0].nodes.tolist(), sub[1].nodes.tolist()
        ([0, 4, 6], [0, 2, 1, 3], [0, 1])
    """
    parts = [
        batch
        for _, batch in enclosing_subgraph_chunks(
            pairs,
            edge_index,
            edge_type,
            num_nodes,
            k=k,
            mode=mode,
            target_relations=target_relations,
            exclude_edges=exclude_edges,
            exclude_triples=exclude_triples,
        )
    ]
    # Merge the chunks: shift pointers and node positions by what precedes them.
    node_shift = torch.tensor([0] + [p.nodes.numel() for p in parts], device=pairs.device)
    edge_shift = torch.tensor([0] + [p.edge_id.numel() for p in parts], device=pairs.device)
    node_shift, edge_shift = node_shift.cumsum(0), edge_shift.cumsum(0)
    return EnclosingSubgraphBatch(
        nodes=torch.cat([p.nodes for p in parts]),
        node_ptr=torch.cat(
            [parts[0].node_ptr[:1]] + [p.node_ptr[1:] + node_shift[i] for i, p in enumerate(parts)]
        ),
        edge_index=torch.cat([p.edge_index + node_shift[i] for i, p in enumerate(parts)], dim=1),
        edge_type=torch.cat([p.edge_type for p in parts]),
        edge_id=torch.cat([p.edge_id for p in parts]),
        edge_ptr=torch.cat(
            [parts[0].edge_ptr[:1]] + [p.edge_ptr[1:] + edge_shift[i] for i, p in enumerate(parts)]
        ),
        dist_head=torch.cat([p.dist_head for p in parts]),
        dist_tail=torch.cat([p.dist_tail for p in parts]),
    )


def enclosing_subgraph_chunks(
    pairs: Tensor,
    edge_index: Tensor,
    edge_type: Tensor,
    num_nodes: int | None = None,
    *,
    k: int = 2,
    mode: str = "intersection",
    target_relations: Tensor | None = None,
    exclude_edges: Tensor | None = None,
    exclude_triples: Tensor | tuple[int, int, int] | None = None,
    max_pairs: int | None = None,
) -> Iterator[tuple[int, EnclosingSubgraphBatch]]:
    """The enclosing subgraphs of :func:`k_hop_enclosing_subgraphs`, one chunk of pairs at a time.

    Same arguments, checks and subgraphs; yields ``(start, batch)`` with ``batch`` the
    subgraphs of ``pairs[start : start + len(batch)]`` in order, so that a caller that
    reduces each chunk (e.g. cuts large subgraphs) holds one chunk's subgraphs at a time.
    Chunks keep the breadth-first distance tables at a few tens of MiB and hold at most
    ``max_pairs`` pairs (None: no further bound). No pairs: one empty batch.
    """
    num_nodes = check_graph(edge_index, edge_type, num_nodes)
    check_pairs(pairs, edge_index, num_nodes, "(head, tail)")
    same = (pairs[:, 0] == pairs[:, 1]).nonzero().flatten()
    if same.numel():
        raise GraphDataError(
            f"pairs: expected head != tail (a self-pair has no enclosing subgraph), got "
            f"{same.numel()} self-pair(s), first at row {int(same[0])}; drop them with "
            "pairs[pairs[:, 0] != pairs[:, 1]]"
        )
    k = check_int("k", k, 0)
    if mode not in MODES:
        raise GraphDataError(f"mode: expected one of {MODES}, got {mode!r}")
    num_pairs = pairs.size(0)
    if target_relations is not None:
        check_relations("target_relations", target_relations, num_pairs, edge_index)
    keep = keep_mask(edge_index, edge_type, exclude_edges, exclude_triples)

    csr = build_csr(edge_index, num_nodes, keep)
    out_csr = build_csr(edge_index, num_nodes, keep, both=False)
    if not num_pairs:
        yield (
            0,
            EnclosingSubgraphBatch(
                *_extract(csr, out_csr, edge_index, edge_type, num_nodes, pairs, k, mode, None)
            ),
        )
        return
    chunks = pair_chunks(num_pairs, num_nodes)
    if max_pairs is not None:
        size = min(max_pairs, chunks[0][1] - chunks[0][0])
        chunks = [(i, min(i + size, num_pairs)) for i in range(0, num_pairs, size)]
    for start, stop in chunks:
        relations = None if target_relations is None else target_relations[start:stop]
        yield (
            start,
            EnclosingSubgraphBatch(
                *_extract(
                    csr,
                    out_csr,
                    edge_index,
                    edge_type,
                    num_nodes,
                    pairs[start:stop],
                    k,
                    mode,
                    relations,
                )
            ),
        )


def _extract(
    csr: Csr,
    out_csr: Csr,
    edge_index: Tensor,
    edge_type: Tensor,
    num_nodes: int,
    pairs: Tensor,
    k: int,
    mode: str,
    relations: Tensor | None,
) -> tuple[Tensor, ...]:
    """Extract one chunk of pairs, positions local to the chunk.

    Returns ``(nodes, node_ptr, edge_index, edge_type, edge_id, edge_ptr, dist_head, dist_tail)``.
    """
    num_pairs, n = pairs.size(0), num_nodes
    head, tail = pairs[:, 0], pairs[:, 1]

    skip: Callable[[Tensor, Tensor], Tensor] | None = None
    if relations is not None:

        def own(pair: Tensor, eid: Tensor) -> Tensor:
            # Pair b's own target triple (head[b], relations[b], tail[b]).
            return (
                (edge_type[eid] == relations[pair])
                & (edge_index[0, eid] == head[pair])
                & (edge_index[1, eid] == tail[pair])
            )

        skip = own
    dist_head = bfs_distances(csr, head, n, k, first_hop_skip=skip)  # [B * N]
    dist_tail = bfs_distances(csr, tail, n, k, first_hop_skip=skip)
    if mode == "intersection":
        member = (dist_head >= 0) & (dist_tail >= 0)
        offsets = torch.arange(num_pairs, device=pairs.device) * n
        member[offsets + head] = True
        member[offsets + tail] = True
    else:
        member = (dist_head >= 0) | (dist_tail >= 0)
    keys = member.nonzero().flatten()  # sorted: by pair, then node id
    key_b, key_v = keys // n, keys % n
    counts = torch.bincount(key_b, minlength=num_pairs)
    node_ptr = torch.cat([counts.new_zeros(1), counts.cumsum(0)])
    # Position in the output: head, tail, then the other nodes in ascending id (no sort needed).
    start = node_ptr[key_b]
    rest = torch.arange(keys.numel(), device=keys.device) - start
    rest = rest - (head[key_b] < key_v).long() - (tail[key_b] < key_v).long()
    local = torch.where(key_v == head[key_b], 0, torch.where(key_v == tail[key_b], 1, 2 + rest))
    position = torch.full_like(member, -1, dtype=torch.long)
    position[keys] = start + local

    # Induced edges: the forward edges out of every member whose tail is a member of the same
    # pair; they come out by pair, then head id, tail id and edge id (the CSR order).
    parent, idx = expand(out_csr.rowptr, key_v)
    edge_b, eid = key_b[parent], out_csr.eid[idx]
    tail_pos = position[edge_b * n + out_csr.col[idx]]
    inside = tail_pos >= 0
    if relations is not None:
        # Only edges leaving a pair's head can be its target triple: check just those.
        degree = out_csr.rowptr[key_v + 1] - out_csr.rowptr[key_v]  # entries per member
        is_head = (key_v == head[key_b]).nonzero().flatten()
        _, at = expand_ranges((degree.cumsum(0) - degree)[is_head], degree[is_head])
        inside[at[own(edge_b[at], eid[at])]] = False
    edge_b, eid = edge_b[inside], eid[inside]
    edge_counts = torch.bincount(edge_b, minlength=num_pairs)
    head_pos = position[keys[parent[inside]]]
    return (
        _place(key_v, start + local),
        node_ptr,
        torch.stack([head_pos, tail_pos[inside]]),  # [2, m]
        edge_type[eid],
        eid,
        torch.cat([edge_counts.new_zeros(1), edge_counts.cumsum(0)]),
        _place(dist_head[keys], start + local),
        _place(dist_tail[keys], start + local),
    )


def _place(values: Tensor, position: Tensor) -> Tensor:
    """``out[position[i]] = values[i]``."""
    out = torch.empty_like(values)
    out[position] = values
    return out
