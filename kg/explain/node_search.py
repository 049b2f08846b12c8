r"""The reference's node-by-node greedy search, an option of the explainer (``strategy="nodes"``).

KGExplainer's code (Ma et al., "Towards Synergistic Path-based Explanations for Knowledge Graph
Completion: Exploration and Evaluation", ICLR 2025, arXiv 2404.03893; xiaomingaaa/KGExplainer,
``run_key_pattern.py``) grows the explanation node by node, breadth first from the head:
``queue = key = [h]``; pop :math:`u`; if :math:`t` is adjacent to :math:`u`, add :math:`t` and
stop; otherwise score each neighbour :math:`v \notin` key by its deletion importance

.. math::
    I(v) = \lvert f(G) - f(G \setminus \delta(v)) \rvert,

with :math:`\delta(v)` the triples incident to :math:`v`, add the ``top_k`` most important to
key and enqueue them. The explanation is the set of "synergistic paths": the candidate paths
:math:`h \to t` whose nodes all lie in key. Here all neighbours of a popped node are scored in
one batched call of the scorer, the search walks only the triples of candidate paths (so it
honours ``max_length`` and ``path_relations``), and the depth is bounded by ``max_length - 1``
pops from :math:`h` (the reference's loop had no bound and broke on an empty perturbation).
"""

from __future__ import annotations

from collections import deque

import torch
from torch import Tensor

from graphdata.errors import GraphDataError
from kg.explain.local import LocalStructure
from kg.explain.search import Scorer

__all__ = ["node_greedy_search"]


def node_greedy_search(
    local: LocalStructure, scorer: Scorer, *, top_k: int = 3
) -> tuple[tuple[int, ...], Tensor, int]:
    """Grow the key node set breadth first by deletion importance (module docstring).

    Args:
        local: The target's local structure; head at local id 0, tail at 1.
        scorer: Keep masks ``[C, m]`` -> target scores ``[C]``.
        top_k: Neighbours added to key per popped node. Default 3.

    Returns:
        ``(chosen path indices, edge mask [m] of their triples, number of perturbed graphs
        scored)``; no paths when the search never reaches the tail.

    Raises:
        GraphDataError: If ``top_k`` is not a positive int.

    Examples:
        >>> from kg.explain.local import local_structure
        >>> ei = torch.tensor([[0, 2, 0, 3], [2, 1, 3, 1]])  # 0-2-1 planted, 0-3-1 distractor
        >>> local = local_structure(ei, torch.tensor([0, 1, 2, 2]), (0, 5, 1), hops=1)
        >>> oracle = lambda keep: (keep[:, 0] & keep[:, 1]).float()  # only 0-2-1 matters
        >>> chosen, mask, _ = node_greedy_search(local, oracle, top_k=1)
        >>> [local.nodes[list(local.path_nodes[p])].tolist() for p in chosen]
        [[0, 2, 1]]
    """
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise GraphDataError(f"top_k: expected a positive int, got {top_k!r}")
    device = local.edge_type.device
    m = local.num_edges
    usable = sorted({e for path in local.paths for e in path})
    heads, tails = local.edge_index[0].tolist(), local.edge_index[1].tolist()
    incident: dict[int, list[int]] = {}
    for e in usable:
        incident.setdefault(heads[e], []).append(e)
        incident.setdefault(tails[e], []).append(e)
    full = torch.ones(1, m, dtype=torch.bool, device=device)
    f_full = float(scorer(full)[0])
    num_scored = 1
    key, depth = {0}, {0: 0}
    queue = deque([0])
    while queue:
        u = queue.popleft()
        neighbours = {heads[e] if tails[e] == u else tails[e] for e in incident.get(u, [])}
        if 1 in neighbours:
            key.add(1)
            break
        if depth[u] + 1 >= local.max_length:
            continue  # a node deeper than L - 1 steps cannot be on a path of length <= L
        fresh = sorted(neighbours - key)
        if not fresh:
            continue
        masks = full.repeat(len(fresh), 1)  # [V, m]
        for i, v in enumerate(fresh):
            masks[i, incident[v]] = False
        importance = (f_full - scorer(masks)).abs()  # [V]
        num_scored += len(fresh)
        for i in torch.argsort(importance, descending=True, stable=True)[:top_k].tolist():
            key.add(fresh[i])
            depth[fresh[i]] = depth[u] + 1
            queue.append(fresh[i])
    chosen = tuple(p for p, nodes in enumerate(local.path_nodes) if set(nodes) <= key)
    return chosen, local.edge_mask(chosen), num_scored
