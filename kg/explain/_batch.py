"""Disjoint-union batches of (perturbed) enclosing subgraphs for the evaluator GNN (private).

Every graph of a batch has its target head and tail marked by position; perturbations of one
local subgraph become copies with some edges dropped (boolean keep masks) or weighted (soft
masks), so that all candidates of a greedy step go through the GNN in one forward pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

__all__: list[str] = []


@dataclass(frozen=True)
class GraphBatch:
    """Graphs as one disjoint union, PyG batch layout.

    Attributes:
        edge_index: ``[2, E]`` node positions in the union (row 0 head, row 1 tail of a triple).
        edge_type: ``[E]`` relation ids of the knowledge graph.
        edge_weight: ``[E]`` weights in ``[0, 1]``, or None for all ones.
        batch: ``[N]`` graph of each node.
        head: ``[B]`` position of each graph's target head.
        tail: ``[B]`` position of each graph's target tail.
        relation: ``[B]`` target relation of each graph.
    """

    edge_index: Tensor
    edge_type: Tensor
    edge_weight: Tensor | None
    batch: Tensor
    head: Tensor
    tail: Tensor
    relation: Tensor

    @property
    def num_graphs(self) -> int:
        """The number of graphs ``B``."""
        return self.head.numel()

    @property
    def num_nodes(self) -> int:
        """The number of nodes ``N`` of the union."""
        return self.batch.numel()


def ranges(start: Tensor, count: Tensor) -> tuple[Tensor, Tensor]:
    """Concatenate ``start[j] : start[j] + count[j]``; return ``(owner j, index)`` per entry."""
    owner = torch.repeat_interleave(torch.arange(start.numel(), device=start.device), count)
    first = count.cumsum(0) - count
    index = start[owner] + torch.arange(owner.numel(), device=start.device) - first[owner]
    return owner, index


def copies(
    num_nodes: int,
    edge_index: Tensor,
    edge_type: Tensor,
    relation: int,
    mask: Tensor,
) -> GraphBatch:
    """``C`` copies of one local subgraph (head at local id 0, tail at 1) under edge masks.

    A boolean ``mask [C, m]`` drops the edges it marks False (the copies only hold kept edges);
    a floating mask keeps every edge with that weight.
    """
    device = edge_index.device
    num_copies = mask.size(0)
    offsets = torch.arange(num_copies, device=device) * num_nodes  # [C]
    if mask.dtype == torch.bool:
        copy, edge = mask.nonzero(as_tuple=True)  # kept (copy, edge) pairs
        weight = None
    else:
        copy = torch.arange(num_copies, device=device).repeat_interleave(edge_index.size(1))
        edge = torch.arange(edge_index.size(1), device=device).repeat(num_copies)
        weight = mask.reshape(-1)  # [C * m], copy-major like (copy, edge)
    return GraphBatch(
        edge_index=edge_index[:, edge] + offsets[copy],
        edge_type=edge_type[edge],
        edge_weight=weight,
        batch=torch.arange(num_copies, device=device).repeat_interleave(num_nodes),
        head=offsets,
        tail=offsets + 1,
        relation=torch.full((num_copies,), relation, dtype=torch.long, device=device),
    )


@dataclass(frozen=True)
class SubgraphBank:
    """Many variable-size subgraphs stored once, from which mini-batches are cut.

    Attributes:
        node_ptr: ``[G + 1]`` node offsets (graph ``g``'s head at ``node_ptr[g]``, tail next).
        edge_ptr: ``[G + 1]`` edge offsets.
        edge_index: ``[2, E]`` node positions in the whole bank.
        edge_type: ``[E]`` relation ids.
        relation: ``[G]`` target relation of each graph.
    """

    node_ptr: Tensor
    edge_ptr: Tensor
    edge_index: Tensor
    edge_type: Tensor
    relation: Tensor

    def select(self, index: Tensor, keep: Tensor | None = None) -> GraphBatch:
        """The graphs ``index`` (in that order) as one batch, without the bank edges ``~keep``."""
        n_start, n_count = self.node_ptr[index], self.node_ptr[index + 1] - self.node_ptr[index]
        e_start, e_count = self.edge_ptr[index], self.edge_ptr[index + 1] - self.edge_ptr[index]
        new_start = n_count.cumsum(0) - n_count  # [b] first node of each selected graph
        owner, edge = ranges(e_start, e_count)
        if keep is not None:
            kept = keep[edge]
            owner, edge = owner[kept], edge[kept]
        shift = (new_start - n_start)[owner]  # old position -> new position, per edge
        return GraphBatch(
            edge_index=self.edge_index[:, edge] + shift,
            edge_type=self.edge_type[edge],
            edge_weight=None,
            batch=torch.repeat_interleave(
                torch.arange(index.numel(), device=index.device), n_count
            ),
            head=new_start,
            tail=new_start + 1,
            relation=self.relation[index],
        )


def distances(batch: GraphBatch, sources: Tensor, max_distance: int) -> Tensor:
    """Undirected hop distance of every node to its graph's source, capped at ``max_distance + 1``.

    One multi-source breadth-first search over the union: graphs are disjoint, so a node is
    reached only from its own graph's source. Edges of weight 0 are ignored.
    """
    num_nodes = batch.num_nodes
    src, dst = batch.edge_index[0], batch.edge_index[1]
    if batch.edge_weight is not None:
        live = batch.edge_weight > 0
        src, dst = src[live], dst[live]
    dist = torch.full((num_nodes,), max_distance + 1, dtype=torch.long, device=src.device)
    dist[sources] = 0
    frontier = torch.zeros(num_nodes, dtype=torch.bool, device=src.device)
    frontier[sources] = True
    for depth in range(1, max_distance + 1):
        reached = torch.zeros_like(frontier)
        reached[dst[frontier[src]]] = True
        reached[src[frontier[dst]]] = True
        frontier = reached & (dist > max_distance)
        if not bool(frontier.any()):
            break
        dist[frontier] = depth
    return dist
