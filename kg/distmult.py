r"""DistMult: a diagonal bilinear score, symmetric in head and tail."""

from __future__ import annotations

import torch
from torch import Tensor

from kg._rows import Embedding
from kg.base import EntitySelection, KGEModel

__all__ = ["DistMult"]


class DistMult(KGEModel):
    r"""DistMult: diagonal bilinear scores (Yang et al., arXiv 1412.6575).

    Paper: "Embedding Entities and Relations for Learning and Inference in Knowledge Bases",
    ICLR 2015.

    ``forward`` returns the trilinear product

    .. math::
        f(h, r, t) = \langle \mathbf{e}_h, \mathbf{w}_r, \mathbf{e}_t \rangle
            = \sum_{i=1}^{d} e_{h,i}\, w_{r,i}\, e_{t,i},

    with entity and relation embeddings in :math:`\mathbb{R}^d`. The score is symmetric,
    :math:`f(h, r, t) = f(t, r, h)`, so DistMult cannot tell a relation from its inverse.
    ``score_tails`` is one matmul, :math:`(\mathbf{e}_h \circ \mathbf{w}_r) E^\top`, and
    ``score_heads`` is :math:`(\mathbf{w}_r \circ \mathbf{e}_t) E^\top`. Initialisation:
    ``xavier_normal_`` for both tables.

    Args:
        num_entities: Number of entities.
        num_relations: Number of relations.
        dim: Embedding size :math:`d`.

    Shapes:
        forward: ``[B], [B], [B] -> [B]``; score_tails/score_heads: ``[B], [B] -> [B, C]``.

    Examples:
        >>> model = DistMult(5, 2, dim=4)
        >>> h, r, t = torch.tensor([0, 1]), torch.tensor([1, 0]), torch.tensor([2, 3])
        >>> torch.allclose(model(h, r, t), model(t, r, h))
        True
    """

    name = "distmult"

    def __init__(self, num_entities: int, num_relations: int, dim: int) -> None:
        super().__init__(num_entities, num_relations, dim)
        self.entity = Embedding(num_entities, dim)
        self.relation = Embedding(num_relations, dim)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw both tables from ``xavier_normal_``."""
        torch.nn.init.xavier_normal_(self.entity.weight)
        torch.nn.init.xavier_normal_(self.relation.weight)

    def forward(self, head_index: Tensor, rel_type: Tensor, tail_index: Tensor) -> Tensor:
        """Score each triple, ``[B]`` (see the class docstring)."""
        h, r, t = self.entity(head_index), self.relation(rel_type), self.entity(tail_index)
        return (h * r * t).sum(dim=-1)

    def triple_representation(
        self, head_index: Tensor, rel_type: Tensor, tail_index: Tensor
    ) -> Tensor:
        """The summand of the score, ``h * r * t``, ``[B, d]`` (KGExplainer's reference)."""
        return self.entity(head_index) * self.relation(rel_type) * self.entity(tail_index)

    def score_tails(
        self, head_index: Tensor, rel_type: Tensor, entities: EntitySelection = None
    ) -> Tensor:
        """Score every candidate tail of ``(h, r, ?)``, ``[B, C]``: one matmul."""
        query = self.entity(head_index) * self.relation(rel_type)  # [B, d]
        return self._dot_scores(query, self._candidates(self.entity.weight, entities))

    def score_heads(
        self, rel_type: Tensor, tail_index: Tensor, entities: EntitySelection = None
    ) -> Tensor:
        """Score every candidate head of ``(?, r, t)``, ``[B, C]``: one matmul."""
        query = self.relation(rel_type) * self.entity(tail_index)  # [B, d]
        return self._dot_scores(query, self._candidates(self.entity.weight, entities))

    def _both_sides(
        self,
        head_side: tuple[Tensor, Tensor],
        tail_side: tuple[Tensor, Tensor],
        entities: EntitySelection,
    ) -> Tensor:
        (rel_h, tail_index), (head_index, rel_t) = head_side, tail_side
        entity = self.entity(torch.cat([tail_index, head_index]))
        queries = self.relation(torch.cat([rel_h, rel_t])) * entity  # [B_h + B_t, d]
        return queries @ self._candidates(self.entity.weight, entities).t()
