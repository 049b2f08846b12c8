"""Paths of the distillation subgraphs, to reduce training graphs to explanation shape (private).

See :mod:`kg.explain.evaluator.training` (path reduction).
"""

from __future__ import annotations

import dataclasses

import torch
from torch import Tensor

from graphdata.paths import enumerate_paths_batch
from graphdata.triples import TripleSet
from kg.explain._batch import SubgraphBank, ranges

__all__: list[str] = []


@dataclasses.dataclass(frozen=True)
class PathTable:
    """The ``h``-to-``t`` paths of every bank graph, as bank edge positions.

    Attributes:
        edges: ``[T, L]`` bank positions of each path's edges, ``-1`` past its end.
        weight: ``[T]`` sampling weight, one over the number of paths of the same length in the
            same graph (so that long paths, far more numerous, do not crowd out short ones, and
            the reverse).
        ptr: ``[G + 1]`` offsets of each graph's paths (paths ordered by graph).
    """

    edges: Tensor
    weight: Tensor
    ptr: Tensor


def path_table(
    triples: Tensor,
    graph: TripleSet,
    bank: SubgraphBank,
    edge_id: Tensor,
    max_length: int,
    max_paths: int,
) -> PathTable:
    """Enumerate up to ``max_paths`` paths of length <= ``max_length`` per bank graph."""
    triples_all = graph.mapped_triples.to(triples.device)
    edge_index, edge_type = triples_all[:, [0, 2]].t().contiguous(), triples_all[:, 1]
    found = enumerate_paths_batch(
        edge_index,
        edge_type,
        triples[:, [0, 2]],
        max_length,
        num_nodes=graph.num_entities,
        max_paths=max_paths,
        on_overflow="truncate",
        target_relations=triples[:, 1],
    )
    num_graphs, num_edges = triples.size(0), max(edge_index.size(1), 1)
    counts = torch.tensor([len(p) for p in found], dtype=torch.long)
    rows = [p.edge_ids for p in found if len(p)]
    global_ids = torch.cat(rows) if rows else torch.zeros(0, max_length, dtype=torch.long)
    lengths = torch.cat([p.length for p in found if len(p)]) if rows else counts[:0]
    global_ids = torch.nn.functional.pad(global_ids, (0, max_length - global_ids.size(1)), value=-1)
    owner = torch.repeat_interleave(torch.arange(num_graphs), counts).to(triples.device)
    global_ids, lengths = global_ids.to(triples.device), lengths.to(triples.device)
    # Bank edge of (graph g, global edge e): key g * E + e, looked up by binary search.
    bank_owner = torch.repeat_interleave(
        torch.arange(num_graphs, device=triples.device), bank.edge_ptr.diff()
    )
    keys = bank_owner * num_edges + edge_id
    sorted_keys, order = keys.sort()
    if sorted_keys.numel() == 0:  # no edges at all: no usable path
        sorted_keys, order = keys.new_full((1,), -1), keys.new_zeros(1)
    query = owner.unsqueeze(1) * num_edges + global_ids.clamp_min(0)  # [T, L]
    at = torch.searchsorted(sorted_keys, query).clamp_max(sorted_keys.numel() - 1)
    valid = global_ids >= 0
    # Every path of length <= k + 1 lies in the k-hop enclosing subgraph; the check is a guard.
    usable = ((sorted_keys[at] == query) | ~valid).all(dim=1)
    positions = torch.where(valid, order[at], -1)[usable]
    owner, lengths = owner[usable], lengths[usable]
    same = torch.zeros(num_graphs, max_length + 1, device=triples.device)
    same.index_put_((owner, lengths), torch.ones_like(lengths, dtype=same.dtype), accumulate=True)
    ptr = torch.zeros(num_graphs + 1, dtype=torch.long, device=triples.device)
    ptr[1:] = torch.bincount(owner, minlength=num_graphs).cumsum(0)
    return PathTable(positions, 1.0 / same[owner, lengths], ptr)


def path_keep(
    table: PathTable,
    bank: SubgraphBank,
    graphs: Tensor,
    generator: torch.Generator,
    max_kept: int = 3,
) -> Tensor:
    r"""Bank edge keep mask that reduces each of ``graphs`` to 1..``max_kept`` random paths.

    Each reduced graph keeps the union of :math:`k \sim U\{1..K\}` of its paths drawn without
    replacement with probability proportional to :attr:`PathTable.weight` (Gumbel top-k), the
    shape of an explanation the greedy search scores; a graph without paths loses every edge.
    """
    device = bank.edge_type.device
    keep = torch.ones(bank.edge_type.numel(), dtype=torch.bool, device=device)
    e_start, e_count = bank.edge_ptr[graphs], bank.edge_ptr[graphs + 1] - bank.edge_ptr[graphs]
    keep[ranges(e_start, e_count)[1]] = False
    p_start, p_count = table.ptr[graphs], table.ptr[graphs + 1] - table.ptr[graphs]
    owner, path = ranges(p_start, p_count)
    if path.numel() == 0:
        return keep
    uniform = torch.rand(path.numel(), generator=generator).to(device).clamp(1e-12, 1 - 1e-12)
    key = table.weight[path].log() - (-uniform.log()).log()  # Gumbel perturbed log-weights
    order = torch.argsort(key, descending=True, stable=True)
    order = order[torch.argsort(owner[order], stable=True)]  # by graph, best key first
    first = torch.zeros(graphs.numel() + 1, dtype=torch.long, device=device)
    first[1:] = p_count.cumsum(0)
    rank = torch.arange(order.numel(), device=device) - first[owner[order]]
    budget = torch.randint(1, max_kept + 1, (graphs.numel(),), generator=generator).to(device)
    chosen = path[order[rank < budget[owner[order]]]]
    edges = table.edges[chosen].flatten()
    keep[edges[edges >= 0]] = True
    return keep
