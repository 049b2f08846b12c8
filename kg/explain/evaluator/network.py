"""The evaluator's relational GNN over enclosing subgraphs (private; see ``distilled.py``)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from kg.explain._batch import GraphBatch, distances
from kg.explain.evaluator.rgcn import RelationalConv

__all__: list[str] = []


class SubgraphGNN(torch.nn.Module):
    r"""Score a target triple from its (perturbed) enclosing subgraph.

    Node features are GraIL's structural labels (Teru et al., ICML 2020, arXiv 1911.06962):
    learned embeddings of the hop distances to the target's head and tail, recomputed on each
    perturbed graph and capped at :math:`K + 1`; no entity ids, so the score can only come from
    the structure that a perturbation removes (the reference's node-id embeddings let a network
    score a triple without looking at its subgraph). ``num_layers`` :class:`RelationalConv`
    layers run over the triples and their inverses (relation :math:`r + R`); with
    :math:`x^{(\ell)}` the layer outputs and :math:`\bar{x} = \sum_\ell x^{(\ell)}`,

    .. math::
        z = \bigl[\operatorname{mean}_{v \in G} \bar{x}_v,\ \bar{x}_h,\ \bar{x}_t,\ w_r,\
            \bar{x}_h \circ w_r,\ \bar{x}_t \circ w_r\bigr], \qquad
        u = \operatorname{ReLU}(W_1 z + b_1), \qquad s = w_s^\top u + b_s, \qquad
        \hat{\rho} = W_\rho u + b_\rho,

    the standardised score :math:`s` and the teacher-representation estimate
    :math:`\hat{\rho} \in \mathbb{R}^D`.

    Args:
        num_relations: Relations :math:`R` of the knowledge graph.
        teacher_dim: Size :math:`D` of the teacher's triple representation.
        hidden: Width of every layer.
        num_layers: Message-passing layers.
        num_bases: Bases of each relational layer.
        max_distance: :math:`K`, the largest distance label (the subgraph's radius).
        dropout: Dropout after each layer while training.
    """

    def __init__(
        self,
        num_relations: int,
        teacher_dim: int,
        *,
        hidden: int,
        num_layers: int,
        num_bases: int,
        max_distance: int,
        dropout: float,
    ) -> None:
        super().__init__()
        self.num_relations = num_relations
        self.max_distance = max_distance
        self.dropout = dropout
        self.dist_head = torch.nn.Embedding(max_distance + 2, hidden)
        self.dist_tail = torch.nn.Embedding(max_distance + 2, hidden)
        self.convs = torch.nn.ModuleList(
            RelationalConv(hidden, hidden, 2 * num_relations, num_bases) for _ in range(num_layers)
        )
        self.relation = torch.nn.Embedding(num_relations, hidden)
        self.lin1 = torch.nn.Linear(6 * hidden, 2 * hidden)
        self.lin_score = torch.nn.Linear(2 * hidden, 1)
        self.lin_rep = torch.nn.Linear(2 * hidden, teacher_dim)

    def forward(self, batch: GraphBatch) -> tuple[Tensor, Tensor]:
        """Standardised scores ``[B]`` and representations ``[B, D]`` of the batch's graphs."""
        dh = distances(batch, batch.head, self.max_distance)  # [N]
        dt = distances(batch, batch.tail, self.max_distance)
        x = self.dist_head(dh) + self.dist_tail(dt)  # [N, hidden]
        edge_index = torch.cat([batch.edge_index, batch.edge_index.flip(0)], dim=1)  # [2, 2E]
        edge_type = torch.cat([batch.edge_type, batch.edge_type + self.num_relations])
        weight = batch.edge_weight
        if weight is not None:
            weight = torch.cat([weight, weight])
        total = torch.zeros_like(x)
        for conv in self.convs:
            x = F.relu(conv(x, edge_index, edge_type, weight))
            x = F.dropout(x, self.dropout, self.training)
            total = total + x
        num_graphs = batch.num_graphs
        counts = torch.bincount(batch.batch, minlength=num_graphs).clamp_min(1).to(x.dtype)
        pooled = total.new_zeros(num_graphs, total.size(1)).index_add(0, batch.batch, total)
        pooled = pooled / counts.unsqueeze(1)  # [B, hidden] mean over each graph's nodes
        rel = self.relation(batch.relation)
        head, tail = total[batch.head], total[batch.tail]
        z = torch.cat([pooled, head, tail, rel, head * rel, tail * rel], dim=1)  # [B, 6 hidden]
        u = F.relu(self.lin1(z))
        return self.lin_score(u).squeeze(-1), self.lin_rep(u)
