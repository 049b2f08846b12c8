"""Private: depth-first search over *blocks* of partial paths, each block expanded at once.

A breadth-first expansion of all partial paths is the simplest vectorisation, but the frontier
can outgrow memory on dense graphs long before the paths are counted. Here a stack holds blocks
of partial paths (tensors, rows of many (source, target) pairs together); popping a block expands
all its rows through the CSR in one go and pushes the children back in pieces of bounded size.
Children are pushed above the rest of their parents' block, and each expansion keeps parent order
and CSR order (neighbour, edge id, forwards first), so completed paths come out sorted by pair,
then lexicographically by their steps: truncation is deterministic, and a pair that reaches its
limit can be dropped at once.
"""

from __future__ import annotations

import torch
from torch import Tensor

from graphdata._adjacency import Csr, expand, expand_ranges

__all__: list[str] = []

#: Upper bound (up to one row's degree) on the CSR entries a single block expansion touches;
#: it bounds the working memory at about ``L * _EXPANSION_BUDGET`` partial paths besides the
#: output itself. Tests shrink it to exercise the splitting.
_EXPANSION_BUDGET = 1 << 18


def paths_of_length(
    csr: Csr,
    sources: Tensor,
    targets: Tensor,
    to_target: Tensor,
    num_nodes: int,
    ell: int,
    *,
    limits: Tensor | None = None,
    own: tuple[Tensor, Tensor, Tensor] | None = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The simple paths of exactly ``ell`` steps of every pair, at most ``limits[b]`` per pair.

    Args:
        csr: Both-direction CSR of the usable edges (see ``_adjacency.build_csr``).
        sources: Source of each pair, ``[B]``.
        targets: Target of each pair, ``[B]``; pairs with ``source == target`` have no path.
        to_target: Flat table ``[B * N]`` of hop distances to each pair's target (``-1``:
            farther than ``ell - 1``), from ``bfs_distances``: a partial path whose end is
            farther from its target than the steps left is pruned.
        num_nodes: The number of nodes ``N``.
        ell: The exact number of steps.
        limits: The most paths kept per pair, ``[B]``; None for no limit.
        own: ``(relation [B], edge_index, edge_type)``: pair ``b`` may not use the edges
            ``(source[b], relation[b], target[b])``.

    Returns:
        ``(pair [P], nodes [P, ell + 1], edge_ids [P, ell], forward [P, ell])``, sorted by pair,
        then lexicographically (entered node, edge id, forwards first, step by step).
    """
    device = sources.device
    # Key of every CSR entry for a binary search of the entries joining u to v.
    entry_key = csr.row * num_nodes + csr.col
    count = torch.zeros(sources.numel(), dtype=torch.long, device=device)
    pair = torch.arange(sources.numel(), device=device)
    live = sources != targets
    if limits is not None:
        live &= limits > 0
    pair = pair[live]
    no_steps = torch.empty(pair.numel(), 0, dtype=torch.long, device=device)
    root = (pair, sources[pair].unsqueeze(1), no_steps, no_steps.bool())
    stack = [root] if ell == 1 or pair.numel() == 0 else list(reversed(_pieces(csr.rowptr, *root)))
    out: list[tuple[Tensor, Tensor, Tensor, Tensor]] = []
    while stack:
        pair, nodes, eids, fwd = stack.pop()
        if limits is not None:
            active = count[pair] < limits[pair]
            pair, nodes, eids, fwd = pair[active], nodes[active], eids[active], fwd[active]
        if pair.numel() == 0:
            continue
        depth = nodes.size(1) - 1
        remaining = ell - depth - 1  # steps left after this one
        if remaining == 0:
            # Last step: only the entries joining the end to the target, by binary search.
            key = nodes[:, -1] * num_nodes + targets[pair]
            lo = torch.searchsorted(entry_key, key)
            hi = torch.searchsorted(entry_key, key, right=True)
            parent, idx = expand_ranges(lo, hi - lo)
        else:
            parent, idx = expand(csr.rowptr, nodes[:, -1])
        child_pair, nxt = pair[parent], csr.col[idx]
        if remaining > 0:
            d = to_target[child_pair * num_nodes + nxt]
            ok = (d >= 0) & (d <= remaining) & (nxt != targets[child_pair])
            # Simple paths only: the new node must not be on the path already.
            ok &= (nodes[parent] != nxt.unsqueeze(1)).all(dim=1)
            parent, idx, child_pair, nxt = parent[ok], idx[ok], child_pair[ok], nxt[ok]
        elif own is not None and ell == 1:
            # A simple path can only use an edge joining source and target as its only step.
            relation, edge_index, edge_type = own
            e = csr.eid[idx]
            mine = (
                (edge_type[e] == relation[child_pair])
                & (edge_index[0, e] == sources[child_pair])
                & (edge_index[1, e] == targets[child_pair])
            )
            parent, idx, child_pair, nxt = parent[~mine], idx[~mine], child_pair[~mine], nxt[~mine]
        child_nodes = torch.cat([nodes[parent], nxt.unsqueeze(1)], dim=1)  # [C, depth + 2]
        child_eids = torch.cat([eids[parent], csr.eid[idx].unsqueeze(1)], dim=1)  # [C, depth + 1]
        child_fwd = torch.cat([fwd[parent], csr.forward[idx].unsqueeze(1)], dim=1)
        if remaining == 0:
            if limits is not None:
                # Rank of each path within its pair (rows are sorted by pair), after earlier ones.
                rank = torch.arange(child_pair.numel(), device=device)
                rank = rank - torch.searchsorted(child_pair, child_pair) + count[child_pair]
                keep = rank < limits[child_pair]
                child_pair, child_nodes = child_pair[keep], child_nodes[keep]
                child_eids, child_fwd = child_eids[keep], child_fwd[keep]
            count += torch.bincount(child_pair, minlength=count.numel())
            out.append((child_pair, child_nodes, child_eids, child_fwd))
        elif child_pair.numel() == 0:
            continue
        elif remaining == 1:
            # The next expansion only yields completed paths, which are output anyway.
            stack.append((child_pair, child_nodes, child_eids, child_fwd))
        else:
            pieces = _pieces(csr.rowptr, child_pair, child_nodes, child_eids, child_fwd)
            stack.extend(reversed(pieces))  # first piece on top: depth first, in order
    if not out:
        empty = torch.empty(0, ell, dtype=torch.long, device=device)
        return empty.new_empty(0), empty.new_empty(0, ell + 1), empty, empty.bool()
    pair, nodes, eids, fwd = (torch.cat(parts) for parts in zip(*out))
    return pair, nodes, eids, fwd


def _pieces(
    rowptr: Tensor, pair: Tensor, nodes: Tensor, eids: Tensor, fwd: Tensor
) -> list[tuple[Tensor, Tensor, Tensor, Tensor]]:
    """Cut a block into consecutive pieces whose next expansion touches about the budget."""
    end = nodes[:, -1]
    degree = rowptr[end + 1] - rowptr[end]
    piece = (degree.cumsum(0) - degree) // _EXPANSION_BUDGET
    counts = torch.bincount(piece)
    sizes: list[int] = counts[counts > 0].tolist()
    return list(
        zip(
            torch.split(pair, sizes),
            torch.split(nodes, sizes),
            torch.split(eids, sizes),
            torch.split(fwd, sizes),
        )
    )
