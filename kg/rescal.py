r"""RESCAL: a full bilinear form per relation."""

from __future__ import annotations

import torch
from torch import Tensor

from kg._rows import Embedding
from kg.base import EntitySelection, KGEModel

__all__ = ["RESCAL"]


class RESCAL(KGEModel):
    r"""RESCAL: one full bilinear form per relation (Nickel et al., ICML 2011).

    Paper: "A Three-Way Model for Collective Learning on Multi-Relational Data", ICML 2011
    (https://icml.cc/2011/papers/438_icmlpaper.pdf; no arXiv version).

    ``forward`` returns

    .. math::
        f(h, r, t) = \mathbf{e}_h^\top M_r\, \mathbf{e}_t
            = \sum_{i=1}^{d} \sum_{j=1}^{d} e_{h,i}\, (M_r)_{ij}\, e_{t,j},

    with entity embeddings :math:`\mathbf{e} \in \mathbb{R}^d` and one matrix
    :math:`M_r \in \mathbb{R}^{d \times d}` per relation (stored flattened, ``[R, d * d]``).
    ``score_tails`` is one matmul, :math:`(\mathbf{e}_h^\top M_r) E^\top`, and ``score_heads``
    is :math:`(M_r \mathbf{e}_t)^\top E^\top`. Initialisation: ``xavier_normal_`` for entities
    and for each :math:`M_r` (standard deviation :math:`1/\sqrt{d}`). The regulariser penalises
    :math:`\mathbf{e}_h`, the entries of :math:`M_r` and :math:`\mathbf{e}_t`.

    Args:
        num_entities: Number of entities.
        num_relations: Number of relations.
        dim: Embedding size :math:`d` (relations have ``d * d`` parameters).

    Shapes:
        forward: ``[B], [B], [B] -> [B]``; score_tails/score_heads: ``[B], [B] -> [B, C]``.

    Examples:
        >>> model = RESCAL(5, 2, dim=3)
        >>> model.relation.weight.shape
        torch.Size([2, 9])
    """

    name = "rescal"

    def __init__(self, num_entities: int, num_relations: int, dim: int) -> None:
        super().__init__(num_entities, num_relations, dim)
        self._check_size(num_entities * dim + num_relations * dim * dim)  # W_r: dim x dim each
        self.entity = Embedding(num_entities, dim)
        self.relation = Embedding(num_relations, dim * dim)
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self) -> None:
        """Draw entities from ``xavier_normal_`` and each ``M_r`` from ``N(0, 1/d)``."""
        torch.nn.init.xavier_normal_(self.entity.weight)
        # xavier_normal_ of a d x d matrix has std sqrt(2 / (d + d)) = 1 / sqrt(d).
        torch.nn.init.normal_(self.relation.weight, std=self.dim**-0.5)

    def _matrices(self, rel_type: Tensor) -> Tensor:
        return self.relation(rel_type).view(-1, self.dim, self.dim)  # [B, d, d]

    def forward(self, head_index: Tensor, rel_type: Tensor, tail_index: Tensor) -> Tensor:
        """Score each triple, ``[B]`` (see the class docstring)."""
        h, t = self.entity(head_index), self.entity(tail_index)
        return torch.einsum("bi,bij,bj->b", h, self._matrices(rel_type), t)

    def triple_representation(
        self, head_index: Tensor, rel_type: Tensor, tail_index: Tensor
    ) -> Tensor:
        """The per-coordinate summands ``h * (W_r t)`` of the bilinear score, ``[B, d]``."""
        matrices = self.relation(rel_type).view(-1, self.dim, self.dim)  # [B, d, d]
        tails = self.entity(tail_index).unsqueeze(-1)  # [B, d, 1]
        return self.entity(head_index) * torch.bmm(matrices, tails).squeeze(-1)  # [B, d]

    def score_tails(
        self, head_index: Tensor, rel_type: Tensor, entities: EntitySelection = None
    ) -> Tensor:
        """Score every candidate tail of ``(h, r, ?)``, ``[B, C]``: one matmul."""
        query = torch.bmm(self.entity(head_index).unsqueeze(1), self._matrices(rel_type))
        candidates = self._candidates(self.entity.weight, entities)
        return self._dot_scores(query.squeeze(1), candidates)  # [B, C]

    def score_heads(
        self, rel_type: Tensor, tail_index: Tensor, entities: EntitySelection = None
    ) -> Tensor:
        """Score every candidate head of ``(?, r, t)``, ``[B, C]``: one matmul."""
        query = torch.bmm(self._matrices(rel_type), self.entity(tail_index).unsqueeze(-1))
        candidates = self._candidates(self.entity.weight, entities)
        return self._dot_scores(query.squeeze(-1), candidates)  # [B, C]
