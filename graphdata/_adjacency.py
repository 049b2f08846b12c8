"""Private helpers for subgraph extraction and path enumeration: validation, CSR, BFS.

The multi-relational graph is ``edge_index [2, E]`` (row 0 head/source, row 1 tail/target) with
``edge_type [E]``. Both public modules walk it in both directions, so the central structure is a
CSR over the *undirected incidence*: every edge ``e = (u, v)`` appears once in row ``u`` (going
forwards to ``v``) and once in row ``v`` (going backwards to ``u``). Within a row, entries are
ordered by neighbour, then edge id, the forward entry before the backward one: path enumeration
relies on this order to emit paths lexicographically, and finds the entries joining ``u`` to a
given ``v`` by binary search on ``row * num_nodes + col``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import torch
from torch import Tensor

from graphdata.checks import check_int as check_int
from graphdata.errors import GraphDataError

__all__: list[str] = []


class Csr(NamedTuple):
    """Compressed rows of (possibly a filtered subset of) the both-direction incidence."""

    rowptr: Tensor  # [N + 1]
    row: Tensor  # [S] node the entry leaves from
    col: Tensor  # [S] node the entry arrives at
    eid: Tensor  # [S] id into the original edge list
    forward: Tensor  # [S] True when the entry follows the edge from head to tail


def check_graph(edge_index: Tensor, edge_type: Tensor, num_nodes: int | None) -> int:
    """Validate the graph tensors and return the number of nodes."""
    if not isinstance(edge_index, Tensor) or edge_index.dim() != 2 or edge_index.size(0) != 2:
        got = tuple(edge_index.shape) if isinstance(edge_index, Tensor) else type(edge_index)
        raise GraphDataError(
            f"edge_index: expected a LongTensor of shape [2, E] (row 0 heads, row 1 tails), "
            f"got {got}; transpose a [E, 2] tensor with .t()"
        )
    if edge_index.dtype != torch.long:
        raise GraphDataError(f"edge_index: expected dtype torch.long, got {edge_index.dtype}")
    if not isinstance(edge_type, Tensor) or edge_type.shape != (edge_index.size(1),):
        got = tuple(edge_type.shape) if isinstance(edge_type, Tensor) else type(edge_type)
        raise GraphDataError(
            f"edge_type: expected shape [E] = ({edge_index.size(1)},) to match edge_index, "
            f"got {got}"
        )
    if edge_type.dtype != torch.long:
        raise GraphDataError(f"edge_type: expected dtype torch.long, got {edge_type.dtype}")
    if edge_type.device != edge_index.device:
        raise GraphDataError(
            f"edge_type: expected the device of edge_index ({edge_index.device}), "
            f"got {edge_type.device}"
        )
    low = int(edge_index.min()) if edge_index.numel() else 0
    high = int(edge_index.max()) + 1 if edge_index.numel() else 0
    if num_nodes is None:
        num_nodes = high
    if isinstance(num_nodes, bool) or not isinstance(num_nodes, int) or num_nodes < 0:
        raise GraphDataError(f"num_nodes: expected a non-negative int, got {num_nodes!r}")
    if low < 0 or high > num_nodes:
        raise GraphDataError(
            f"edge_index: expected node ids in [0, {num_nodes}) (num_nodes={num_nodes}), got "
            f"ids in [{low}, {high - 1}]; pass a larger num_nodes or fix the ids"
        )
    return num_nodes


def check_nodes(name: str, nodes: Tensor, num_nodes: int) -> None:
    """Raise unless every id in ``nodes`` lies in ``[0, num_nodes)``."""
    if nodes.numel() and (int(nodes.min()) < 0 or int(nodes.max()) >= num_nodes):
        raise GraphDataError(
            f"{name}: expected node ids in [0, {num_nodes}) (num_nodes={num_nodes}), got ids in "
            f"[{int(nodes.min())}, {int(nodes.max())}]"
        )


def check_pairs(pairs: object, edge_index: Tensor, num_nodes: int, roles: str) -> None:
    """Raise unless ``pairs`` is a LongTensor ``[B, 2]`` of node ids on ``edge_index``'s device.

    ``roles`` names the two columns in the message, e.g. ``"(head, tail)"``.
    """
    if not isinstance(pairs, Tensor) or pairs.dim() != 2 or pairs.size(1) != 2:
        got = tuple(pairs.shape) if isinstance(pairs, Tensor) else type(pairs)
        raise GraphDataError(f"pairs: expected a LongTensor of shape [B, 2] {roles}, got {got}")
    if pairs.dtype != torch.long or pairs.device != edge_index.device:
        raise GraphDataError(
            f"pairs: expected dtype torch.long on {edge_index.device} (the device of "
            f"edge_index), got {pairs.dtype} on {pairs.device}"
        )
    check_nodes("pairs", pairs, num_nodes)


def check_relations(name: str, relations: object, num_pairs: int, edge_index: Tensor) -> None:
    """Raise unless ``relations`` is a LongTensor ``[B]`` on the device of ``edge_index``."""
    if (
        not isinstance(relations, Tensor)
        or relations.shape != (num_pairs,)
        or relations.dtype != torch.long
    ):
        got = (
            (relations.dtype, tuple(relations.shape))
            if isinstance(relations, Tensor)
            else relations
        )
        raise GraphDataError(
            f"{name}: expected a LongTensor of shape [B] = ({num_pairs},), one relation per "
            f"pair, got {got!r}"
        )
    _check_device(name, relations, edge_index)


def matching_edges(edge_index: Tensor, edge_type: Tensor, triples: Tensor) -> Tensor:
    """Boolean mask ``[E]`` of the edges equal to any ``(head, relation, tail)`` row of triples."""
    edges = torch.stack([edge_index[0], edge_type, edge_index[1]], dim=1)  # [E, 3]
    # One id per distinct triple (no hashing, so no int64 overflow on huge graphs).
    _, inverse = torch.unique(torch.cat([edges, triples]), dim=0, return_inverse=True)
    return torch.isin(inverse[: edges.size(0)], inverse[edges.size(0) :])


def keep_mask(
    edge_index: Tensor,
    edge_type: Tensor,
    exclude_edges: Tensor | None,
    exclude_triples: Tensor | tuple[int, int, int] | None,
) -> Tensor | None:
    """Validate the exclusion arguments and return the mask ``[E]`` of kept edges (None: all)."""
    num_edges = edge_index.size(1)
    keep: Tensor | None = None
    if exclude_edges is not None:
        if not isinstance(exclude_edges, Tensor) or exclude_edges.dim() != 1:
            raise GraphDataError(
                "exclude_edges: expected a 1-D LongTensor of edge ids or a BoolTensor mask of "
                f"shape [E] = ({num_edges},), got {exclude_edges!r}"
            )
        _check_device("exclude_edges", exclude_edges, edge_index)
        if exclude_edges.dtype == torch.bool:
            if exclude_edges.numel() != num_edges:
                raise GraphDataError(
                    f"exclude_edges: a boolean mask must have shape [E] = ({num_edges},), "
                    f"got ({exclude_edges.numel()},)"
                )
            keep = ~exclude_edges
        elif exclude_edges.dtype == torch.long:
            if exclude_edges.numel() and (
                int(exclude_edges.min()) < 0 or int(exclude_edges.max()) >= num_edges
            ):
                raise GraphDataError(
                    f"exclude_edges: expected edge ids in [0, {num_edges}), got ids in "
                    f"[{int(exclude_edges.min())}, {int(exclude_edges.max())}]"
                )
            keep = torch.ones(num_edges, dtype=torch.bool, device=edge_index.device)
            keep[exclude_edges] = False
        else:
            raise GraphDataError(
                f"exclude_edges: expected dtype torch.long (edge ids) or torch.bool (mask), "
                f"got {exclude_edges.dtype}"
            )
    if exclude_triples is not None:
        if isinstance(exclude_triples, Tensor):
            _check_device("exclude_triples", exclude_triples, edge_index)
        triples = torch.as_tensor(exclude_triples, dtype=torch.long, device=edge_index.device)
        if triples.dim() == 1:
            triples = triples.unsqueeze(0)  # [1, 3]: a single (h, r, t)
        if triples.dim() != 2 or triples.size(1) != 3:
            raise GraphDataError(
                "exclude_triples: expected one (head, relation, tail) triple or a LongTensor of "
                f"shape [M, 3], got shape {tuple(triples.shape)}"
            )
        hit = matching_edges(edge_index, edge_type, triples)
        keep = ~hit if keep is None else keep & ~hit
    return keep


def _check_device(name: str, tensor: Tensor, edge_index: Tensor) -> None:
    if tensor.device != edge_index.device:
        raise GraphDataError(
            f"{name}: expected a tensor on {edge_index.device} (the device of edge_index), got "
            f"one on {tensor.device}; move it with .to(edge_index.device)"
        )


def build_csr(
    edge_index: Tensor, num_nodes: int, keep: Tensor | None = None, *, both: bool = True
) -> Csr:
    """CSR over the kept edges, in both directions (``both``) or forwards only."""
    eid = torch.arange(edge_index.size(1), device=edge_index.device)
    if keep is not None:
        eid = eid[keep]
    src, dst = edge_index[0, eid], edge_index[1, eid]
    if both:
        # Interleave so that entries run by edge id, the forward entry before the backward one.
        row = torch.stack([src, dst], dim=1).flatten()  # [2 E']
        col = torch.stack([dst, src], dim=1).flatten()
        eid = eid.repeat_interleave(2)
        forward = torch.arange(row.numel(), device=row.device) % 2 == 0
    else:
        row, col = src, dst
        forward = torch.ones_like(row, dtype=torch.bool)
    # Rows by node, inside a row by neighbour; the stable sort keeps (edge id, forward first).
    order = torch.sort(row * num_nodes + col, stable=True).indices
    row, col, eid, forward = row[order], col[order], eid[order], forward[order]
    return Csr(_rowptr(row, num_nodes), row, col, eid, forward)


def _rowptr(row: Tensor, num_nodes: int) -> Tensor:
    counts = torch.bincount(row, minlength=num_nodes)
    return torch.cat([counts.new_zeros(1), counts.cumsum(0)])


def expand(rowptr: Tensor, nodes: Tensor) -> tuple[Tensor, Tensor]:
    """All CSR entries of every node in ``nodes``, vectorised (repeat_interleave + gather).

    Returns ``(parent, idx)``: entry ``idx[i]`` of the CSR belongs to ``nodes[parent[i]]``;
    parents appear in order and, within a parent, entries in CSR order.
    """
    start = rowptr[nodes]
    return expand_ranges(start, rowptr[nodes + 1] - start)


def expand_ranges(start: Tensor, count: Tensor) -> tuple[Tensor, Tensor]:
    """Concatenate the index ranges ``start[j] : start[j] + count[j]``, tagged with ``j``."""
    parent = torch.repeat_interleave(torch.arange(start.numel(), device=start.device), count)
    first = count.cumsum(0) - count  # [F] output position of each range's first index
    idx = start[parent] + torch.arange(parent.numel(), device=start.device) - first[parent]
    return parent, idx


#: Most ``pairs * num_nodes`` entries one dense distance table may hold (32 MiB of int64);
#: larger batches of pairs are processed in chunks of ``max(1, PAIR_CHUNK_ENTRIES // N)``.
PAIR_CHUNK_ENTRIES = 1 << 22


def pair_chunks(num_pairs: int, num_nodes: int) -> list[tuple[int, int]]:
    """Consecutive ``(start, stop)`` ranges of pairs whose distance tables fit the chunk size."""
    size = max(1, PAIR_CHUNK_ENTRIES // max(num_nodes, 1))
    return [(i, min(i + size, num_pairs)) for i in range(0, num_pairs, size)]


def bfs_distances(
    csr: Csr,
    sources: Tensor,
    num_nodes: int,
    max_depth: int,
    *,
    first_hop_skip: Callable[[Tensor, Tensor], Tensor] | None = None,
) -> Tensor:
    """Hop distances from each of ``B`` sources, up to ``max_depth``, by frontier expansion.

    The frontier is a set of keys ``b * num_nodes + v`` (pair ``b`` has reached node ``v``);
    each hop expands all of them at once through the CSR and keeps the unvisited keys, made
    unique with a scratch table instead of a sort. ``first_hop_skip(b, eid) -> mask``
    marks entries not to follow on the first hop only: that is all it takes to remove edges
    joining the two ends of a pair (GraIL's target link), since any later hop along such an
    edge arrives at an end that is already visited.

    Returns:
        The flat table ``[B * num_nodes]`` of distances, ``-1`` beyond ``max_depth``.
    """
    num_pairs = sources.numel()
    dist = torch.full((num_pairs * num_nodes,), -1, dtype=torch.long, device=sources.device)
    owner = torch.full_like(dist, -1, dtype=torch.int32)  # scratch: who claimed a key
    frontier = torch.arange(num_pairs, device=sources.device) * num_nodes + sources
    dist[frontier] = 0
    rowptr, col = csr.rowptr, csr.col
    for depth in range(1, max_depth + 1):
        if frontier.numel() == 0:
            break
        if depth == 2:
            # Past the first hop edge ids no longer matter: parallel edges and the two
            # directions of an edge collapse into one neighbour entry.
            key = torch.unique_consecutive(csr.row * num_nodes + csr.col)  # CSR is sorted
            rowptr, col = _rowptr(key // num_nodes, num_nodes), key % num_nodes
        parent, idx = expand(rowptr, frontier % num_nodes)
        pair = frontier[parent] // num_nodes
        if depth == 1 and first_hop_skip is not None:
            follow = ~first_hop_skip(pair, csr.eid[idx])
            pair, idx = pair[follow], idx[follow]
        cand = pair * num_nodes + col[idx]
        cand = cand[dist[cand] < 0]
        # Deduplicate without sorting: one (arbitrary) writer wins per key; keep the winners.
        mark = torch.arange(cand.numel(), dtype=torch.int32, device=cand.device)
        owner[cand] = mark
        frontier = cand[owner[cand] == mark]
        dist[frontier] = depth
    return dist
