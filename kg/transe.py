r"""TransE: relations as translations between entity embeddings."""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from graphdata.errors import GraphDataError
from kg._rows import Embedding
from kg.base import EntitySelection, SideQueryModel

__all__ = ["TransE"]


class TransE(SideQueryModel):
    r"""TransE: relations translate entity embeddings (Bordes et al., NeurIPS 2013).

    Paper: "Translating Embeddings for Modeling Multi-relational Data", NeurIPS 2013
    (https://papers.nips.cc/paper/5071; no arXiv version). ``forward`` returns

    .. math::
        f(h, r, t) = -\lVert \mathbf{e}_h + \mathbf{w}_r - \mathbf{e}_t \rVert_p
            = -\Bigl(\sum_{i=1}^{d} |e_{h,i} + w_{r,i} - e_{t,i}|^p\Bigr)^{1/p}

    with entity embeddings :math:`\mathbf{e} \in \mathbb{R}^d`, relation translations
    :math:`\mathbf{w}_r \in \mathbb{R}^d` and :math:`p \in \{1, 2\}`; no margin is added (the loss
    carries it, e.g. ``kg.losses.nssa_loss(margin=...)``). As in the paper, entity embeddings
    are kept on the unit L2 sphere: :meth:`reset_parameters` and :meth:`post_step` (called by the
    trainer after each optimiser step) renormalise them. Initialisation is the paper's
    :math:`\mathcal{U}(-6/\sqrt{d}, 6/\sqrt{d})`, relations normalised once.

    ``score_tails`` and ``score_heads`` use :func:`torch.cdist` (no ``[B, C, d]`` intermediate):
    tails compare :math:`\mathbf{e}_h + \mathbf{w}_r` with every entity, heads compare
    :math:`\mathbf{e}_t - \mathbf{w}_r`. For :math:`p = 2` ``cdist`` expands the square, which
    agrees with ``forward`` to about ``1e-6`` relative.

    Args:
        num_entities: Number of entities.
        num_relations: Number of relations.
        dim: Embedding size :math:`d`.
        p: Norm order, 1 or 2. Default 1 (the better choice in the paper's experiments).

    Shapes:
        forward: ``[B], [B], [B] -> [B]``; score_tails/score_heads: ``[B], [B] -> [B, C]``.

    Examples:
        >>> model = TransE(5, 2, dim=4, p=2)
        >>> model(torch.tensor([0]), torch.tensor([1]), torch.tensor([2])).shape
        torch.Size([1])
        >>> model
        TransE(5, num_relations=2, dim=4, p=2)
    """

    name = "transe"
    #: NSSA gamma of TransE's sLCWA default (kg.models.DEFAULTS) and of local re-training:
    #: TransE's score has no margin of its own.
    nssa_margin = 9.0

    def __init__(self, num_entities: int, num_relations: int, dim: int, *, p: int = 1) -> None:
        super().__init__(num_entities, num_relations, dim)
        if p not in (1, 2):
            raise GraphDataError(f"p: expected the norm order 1 or 2, got {p!r}")
        self.p = p
        self.entity = Embedding(num_entities, dim)
        self.relation = Embedding(num_relations, dim)
        self.reset_parameters()

    @property
    def config(self) -> dict[str, Any]:
        """Constructor arguments, including ``p``."""
        return {**super().config, "p": self.p}

    @torch.no_grad()
    def reset_parameters(self) -> None:
        """Draw from the paper's uniform initialisation and normalise (see the class docstring)."""
        bound = 6.0 / math.sqrt(self.dim)
        torch.nn.init.uniform_(self.entity.weight, -bound, bound)
        torch.nn.init.uniform_(self.relation.weight, -bound, bound)
        F.normalize(self.relation.weight, p=2.0, dim=-1, out=self.relation.weight)
        self.post_step()

    @torch.no_grad()
    def post_step(self) -> None:
        """Project every entity embedding back onto the unit L2 sphere (the paper's constraint)."""
        F.normalize(self.entity.weight, p=2.0, dim=-1, out=self.entity.weight)

    def project_rows(self, name: str, rows: Tensor) -> Tensor:
        """Entity rows back onto the unit sphere, as :meth:`post_step` (local re-training)."""
        return F.normalize(rows, dim=-1) if name == "entity.weight" else rows

    def forward(self, head_index: Tensor, rel_type: Tensor, tail_index: Tensor) -> Tensor:
        """Score each triple, ``[B]`` (see the class docstring)."""
        h, r, t = self.entity(head_index), self.relation(rel_type), self.entity(tail_index)
        return -torch.linalg.vector_norm(h + r - t, ord=self.p, dim=-1)

    def triple_representation(
        self, head_index: Tensor, rel_type: Tensor, tail_index: Tensor
    ) -> Tensor:
        """The summand of the score, ``h + r - t``, ``[B, d]`` (KGExplainer's reference)."""
        return self.entity(head_index) + self.relation(rel_type) - self.entity(tail_index)

    def score_tails(
        self, head_index: Tensor, rel_type: Tensor, entities: EntitySelection = None
    ) -> Tensor:
        """Score every candidate tail of ``(h, r, ?)``, ``[B, C]``."""
        query = self.entity(head_index) + self.relation(rel_type)  # [B, d]
        return self._negated_distance(query, entities)

    def score_heads(
        self, rel_type: Tensor, tail_index: Tensor, entities: EntitySelection = None
    ) -> Tensor:
        """Score every candidate head of ``(?, r, t)``, ``[B, C]``."""
        # ||c + r - t|| = ||c - (t - r)||: the same distance kernel with a shifted query.
        query = self.entity(tail_index) - self.relation(rel_type)  # [B, d]
        return self._negated_distance(query, entities)

    def _both_sides(
        self,
        head_side: tuple[Tensor, Tensor],
        tail_side: tuple[Tensor, Tensor],
        entities: EntitySelection,
    ) -> Tensor:
        (rel_h, tail_index), (head_index, rel_t) = head_side, tail_side
        queries = torch.cat(
            [
                self.entity(tail_index) - self.relation(rel_h),
                self.entity(head_index) + self.relation(rel_t),
            ]
        )  # [B_h + B_t, d]
        return self._negated_distance(queries, entities)

    @property
    def _distance_kind(self) -> str:
        return "l1" if self.p == 1 else "l2"

    def _side_queries(
        self, head_index: Tensor, rel_type: Tensor, tail_index: Tensor
    ) -> tuple[Tensor, Tensor]:
        # ||h + r - x|| (tail replaced) and ||x + r - t|| = ||(t - r) - x|| (head replaced).
        r, tail = self.relation(rel_type), self.entity(tail_index)
        return tail, torch.stack([self.entity(head_index) + r, tail - r], dim=1)

    def _from_distance(self, distance: Tensor) -> Tensor:
        return -distance

    def _negated_distance(self, query: Tensor, entities: EntitySelection) -> Tensor:
        """``-||q - e||_p`` against the candidate rows, ``[B, C]``.

        Negated in place when autograd records nothing (evaluation, prediction). ``cdist`` saves
        its output for its backward, so under autograd the negation is a new tensor; without
        autograd a second ``[B, C]`` block would only raise evaluation's peak memory.
        """
        distance = torch.cdist(query, self._candidates(self.entity.weight, entities), p=self.p)
        return distance.neg_() if not distance.requires_grad else -distance
