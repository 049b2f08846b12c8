r"""RotatE: relations as rotations in complex space."""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor

from kg.base import EntitySelection, KGEModel

__all__ = ["RotatE"]


class RotatE(KGEModel):
    r"""RotatE: relations rotate complex embeddings (Sun et al., arXiv 1902.10197).

    Paper: "RotatE: Knowledge Graph Embedding by Relational Rotation in Complex Space",
    ICLR 2019.

    ``forward`` returns the margin minus a sum of complex moduli, as the reference code
    (DeepGraphLearning/KnowledgeGraphEmbedding ``codes/model.py``) computes it:

    .. math::
        f(h, r, t) = \gamma - \sum_{i=1}^{d} \bigl| e_{h,i}\, w_{r,i} - e_{t,i} \bigr|,
        \qquad w_{r,i} = e^{\mathrm{i} \theta_{r,i}},

    with entity embeddings :math:`\mathbf{e} \in \mathbb{C}^d` (stored as ``[real | imaginary]``
    rows of ``2 d`` reals), relation phases :math:`\theta_r \in \mathbb{R}^d` and margin
    :math:`\gamma`. The paper writes :math:`-\lVert \mathbf{e}_h \circ \mathbf{w}_r -
    \mathbf{e}_t \rVert`; PyG's ``RotatE`` documents that but returns a margin minus the L2 norm
    over all ``2 d`` reals, which is a different score. Losses that add their own margin must
    get ``margin=0`` for this model (``kg.losses.nssa_loss``).

    ``score_tails`` compares :math:`\mathbf{e}_h \circ \mathbf{w}_r` with every candidate and
    ``score_heads`` compares :math:`\mathbf{e}_t \circ \bar{\mathbf{w}}_r` (rotations preserve
    moduli), broadcasting ``[B, C, d]`` over candidate chunks of at most :attr:`chunk_bytes`.
    Initialisation as in the reference code: entities
    :math:`\mathcal{U}(-\frac{\gamma + 2}{d}, \frac{\gamma + 2}{d})`, phases
    :math:`\mathcal{U}(-\pi, \pi)`. The regulariser penalises entity moduli only (relation
    moduli are 1).

    Args:
        num_entities: Number of entities.
        num_relations: Number of relations.
        dim: Number of complex coordinates :math:`d`.
        margin: :math:`\gamma`. Default 9.0 (the reference FB15k-237 configuration).

    Shapes:
        forward: ``[B], [B], [B] -> [B]``; score_tails/score_heads: ``[B], [B] -> [B, C]``.

    Examples:
        >>> model = RotatE(4, 1, dim=2, margin=6.0)
        >>> with torch.no_grad():
        ...     _ = model.relation.weight.zero_()  # identity rotation
        >>> model(torch.tensor([1]), torch.tensor([0]), torch.tensor([1])).item()
        6.0
    """

    name = "rotate"

    def __init__(
        self, num_entities: int, num_relations: int, dim: int, *, margin: float = 9.0
    ) -> None:
        super().__init__(num_entities, num_relations, dim)
        self.margin = float(margin)
        self.entity = torch.nn.Embedding(num_entities, 2 * dim)
        self.relation = torch.nn.Embedding(num_relations, dim)  # phases theta
        self.reset_parameters()

    @property
    def config(self) -> dict[str, Any]:
        """Constructor arguments, including ``margin``."""
        return {**super().config, "margin": self.margin}

    def reset_parameters(self) -> None:
        """Draw entities and phases as the reference code does (see the class docstring)."""
        bound = (self.margin + 2.0) / self.dim
        torch.nn.init.uniform_(self.entity.weight, -bound, bound)
        torch.nn.init.uniform_(self.relation.weight, -math.pi, math.pi)

    def _rotate(self, index: Tensor, rel_type: Tensor, *, conjugate: bool) -> tuple[Tensor, Tensor]:
        a, b = self.entity(index).chunk(2, dim=-1)  # [B, d] each
        theta = self.relation(rel_type)
        cos, sin = torch.cos(theta), torch.sin(theta)
        if conjugate:
            sin = -sin
        return a * cos - b * sin, a * sin + b * cos

    def forward(self, head_index: Tensor, rel_type: Tensor, tail_index: Tensor) -> Tensor:
        """Score each triple, ``[B]`` (see the class docstring)."""
        q_re, q_im = self._rotate(head_index, rel_type, conjugate=False)
        a_t, b_t = self.entity(tail_index).chunk(2, dim=-1)
        return self.margin - ((q_re - a_t).square() + (q_im - b_t).square()).sqrt().sum(-1)

    def score_tails(
        self, head_index: Tensor, rel_type: Tensor, entities: EntitySelection = None
    ) -> Tensor:
        """Score every candidate tail of ``(h, r, ?)``, ``[B, C]``."""
        return self._against_candidates(*self._rotate(head_index, rel_type, conjugate=False),
                                        entities)

    def score_heads(
        self, rel_type: Tensor, tail_index: Tensor, entities: EntitySelection = None
    ) -> Tensor:
        """Score every candidate head of ``(?, r, t)``, ``[B, C]``."""
        # |c r - t| = |c - t conj(r)| because |r_i| = 1.
        return self._against_candidates(*self._rotate(tail_index, rel_type, conjugate=True),
                                        entities)

    def _against_candidates(self, q_re: Tensor, q_im: Tensor, entities: EntitySelection) -> Tensor:
        # Three [B, C, d] temporaries live at once; bound them by chunking the candidates.
        per_candidate = 3 * q_re.numel() * q_re.element_size()
        inplace = not torch.is_grad_enabled()  # evaluation: reuse buffers, fewer memory passes
        out = [q_re.new_empty(q_re.size(0), 0)]
        for chunk in self._chunks(entities, self.chunk_bytes // max(per_candidate, 1)):
            a_c, b_c = self._candidates(self.entity.weight, chunk).chunk(2, dim=-1)  # [C, d]
            d_re = q_re.unsqueeze(1) - a_c.unsqueeze(0)  # [B, C, d]
            d_im = q_im.unsqueeze(1) - b_c.unsqueeze(0)
            if inplace:
                moduli = d_re.square_().add_(d_im.square_()).sqrt_()
            else:
                moduli = (d_re.square() + d_im.square()).sqrt()
            out.append(self.margin - moduli.sum(-1))
        return torch.cat(out, dim=1)

    def _regularized(
        self, head_index: Tensor, rel_type: Tensor, tail_index: Tensor
    ) -> tuple[Tensor, ...]:
        # Entities only, as complex tensors (complex moduli); the rotations have modulus 1.
        return tuple(
            torch.complex(*self.entity(index).chunk(2, dim=-1))  # [B, d]
            for index in (head_index, tail_index)
        )
