r"""TuckER: a Tucker decomposition of the binary adjacency tensor."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from graphdata.errors import GraphDataError
from kg._dropout import Dropout
from kg._rows import Embedding
from kg.base import EntitySelection, KGEModel, _check_rate

__all__ = ["TuckER"]


class TuckER(KGEModel):
    r"""TuckER: Tucker decomposition scores (Balažević et al., arXiv 1901.09590).

    Paper: "TuckER: Tensor Factorization for Knowledge Graph Completion", EMNLP 2019.

    ``forward`` returns the reference code's score (ibalazevic/TuckER ``model.py``, logits before
    the sigmoid):

    .. math::
        f(h, r, t) = \Bigl[\mathrm{D}_2\, \mathrm{BN}_1\bigl(
            \mathrm{D}_0(\mathrm{BN}_0(\mathbf{e}_h))^\top\, \mathrm{D}_1(W_r)\bigr)\Bigr]^\top
            \mathbf{e}_t, \qquad
        (W_r)_{ik} = \sum_{j=1}^{d_r} \mathcal{W}_{ijk}\, w_{r,j},

    so that without batch norm and dropout :math:`f = \mathcal{W} \times_1 \mathbf{e}_h \times_2
    \mathbf{w}_r \times_3 \mathbf{e}_t = \sum_{ijk} \mathcal{W}_{ijk} e_{h,i} w_{r,j} e_{t,k}`.
    :math:`\mathbf{e} \in \mathbb{R}^{d_e}`, :math:`\mathbf{w}_r \in \mathbb{R}^{d_r}`, core
    :math:`\mathcal{W} \in \mathbb{R}^{d_e \times d_r \times d_e}` (stored relation mode first,
    ``core[j, i, k]``, so :math:`W_r` is one matmul), :math:`\mathrm{BN}_0, \mathrm{BN}_1` are
    batch norms over the :math:`d_e` features and :math:`\mathrm{D}_0, \mathrm{D}_1,
    \mathrm{D}_2` dropouts (identity in eval mode, where a batch norm is the per-feature affine
    map :math:`x \mapsto a \circ x + c` of its running statistics).

    ``score_tails`` is one matmul of the hidden vectors with the entity table. ``score_heads`` in
    eval mode is one matmul too, using that the score is affine in :math:`\mathbf{e}_h`:
    :math:`f = \mathbf{e}_h \cdot (a_0 \circ u) + c_0 \cdot u + c_1 \cdot \mathbf{e}_t` with
    :math:`u = W_r (a_1 \circ \mathbf{e}_t)`. In training mode it pushes every candidate head
    through the network (batch statistics over all ``B * C`` pairs; no chunking, memory
    ``B * C * d_e``); train with reciprocal relations to avoid it. Initialisation as the
    reference: ``xavier_normal_`` embeddings, core :math:`\mathcal{U}(-1, 1)`.

    Args:
        num_entities: Number of entities.
        num_relations: Number of relations.
        dim: Entity embedding size :math:`d_e`.
        relation_dim: Relation embedding size :math:`d_r`; ``None`` uses ``dim``. Default None.
        input_dropout: Rate of :math:`\mathrm{D}_0`. Default 0.3.
        hidden_dropout1: Rate of :math:`\mathrm{D}_1`. Default 0.4.
        hidden_dropout2: Rate of :math:`\mathrm{D}_2`. Default 0.5 (the paper's FB15k-237 rates).

    Shapes:
        forward: ``[B], [B], [B] -> [B]``; score_tails/score_heads: ``[B], [B] -> [B, C]``.

    Examples:
        >>> model = TuckER(5, 2, dim=4, relation_dim=3).eval()
        >>> model.core.shape
        torch.Size([3, 4, 4])
    """

    name = "tucker"

    def __init__(
        self,
        num_entities: int,
        num_relations: int,
        dim: int,
        *,
        relation_dim: int | None = None,
        input_dropout: float = 0.3,
        hidden_dropout1: float = 0.4,
        hidden_dropout2: float = 0.5,
    ) -> None:
        super().__init__(num_entities, num_relations, dim)
        relation_dim = dim if relation_dim is None else relation_dim
        bad = isinstance(relation_dim, bool) or not isinstance(relation_dim, int)
        if bad or relation_dim < 1:
            raise GraphDataError(f"relation_dim: expected a positive int, got {relation_dim!r}")
        self.relation_dim = relation_dim
        for arg, rate in (
            ("input_dropout", input_dropout),
            ("hidden_dropout1", hidden_dropout1),
            ("hidden_dropout2", hidden_dropout2),
        ):
            _check_rate(arg, rate)
        # The core W [d_r, d_e, d_e] dominates: d_e = 10^4 alone is 400 GB per relation dim.
        self._check_size(
            num_entities * dim + num_relations * relation_dim + relation_dim * dim * dim
        )
        self.entity = Embedding(num_entities, dim)
        self.relation = Embedding(num_relations, relation_dim)
        self.core = torch.nn.Parameter(torch.empty(relation_dim, dim, dim))
        self.bn0 = torch.nn.BatchNorm1d(dim)
        self.bn1 = torch.nn.BatchNorm1d(dim)
        self.input_dropout = Dropout(input_dropout)
        self.hidden_dropout1 = Dropout(hidden_dropout1)
        self.hidden_dropout2 = Dropout(hidden_dropout2)
        self.reset_parameters()

    @property
    def config(self) -> dict[str, Any]:
        """Constructor arguments, including ``relation_dim`` and the dropout rates."""
        return {
            **super().config,
            "relation_dim": self.relation_dim,
            "input_dropout": self.input_dropout.p,
            "hidden_dropout1": self.hidden_dropout1.p,
            "hidden_dropout2": self.hidden_dropout2.p,
        }

    def reset_parameters(self) -> None:
        """Re-draw embeddings and core and reset both batch norms (statistics included)."""
        torch.nn.init.xavier_normal_(self.entity.weight)
        torch.nn.init.xavier_normal_(self.relation.weight)
        torch.nn.init.uniform_(self.core, -1.0, 1.0)
        self.bn0.reset_parameters()
        self.bn1.reset_parameters()

    def _core_matrices(self, rel_type: Tensor) -> Tensor:
        w = self.relation(rel_type) @ self.core.view(self.relation_dim, -1)  # [B, d_e * d_e]
        return w.view(-1, self.dim, self.dim)  # [B, d_e, d_e]

    def _hidden(self, head_index: Tensor, rel_type: Tensor) -> Tensor:
        x = self.input_dropout(self.bn0(self.entity(head_index)))  # [B, d_e]
        w = self.hidden_dropout1(self._core_matrices(rel_type))
        x = torch.bmm(x.unsqueeze(1), w).squeeze(1)  # [B, d_e]
        return self.hidden_dropout2(self.bn1(x))

    def forward(self, head_index: Tensor, rel_type: Tensor, tail_index: Tensor) -> Tensor:
        """Score each triple, ``[B]`` (see the class docstring)."""
        return (self._hidden(head_index, rel_type) * self.entity(tail_index)).sum(-1)

    def triple_representation(
        self, head_index: Tensor, rel_type: Tensor, tail_index: Tensor
    ) -> Tensor:
        """No per-coordinate form over the core tensor: the score itself, ``[B, 1]``."""
        return self(head_index, rel_type, tail_index).unsqueeze(-1)

    def score_tails(
        self, head_index: Tensor, rel_type: Tensor, entities: EntitySelection = None
    ) -> Tensor:
        """Score every candidate tail of ``(h, r, ?)``, ``[B, C]``: one matmul."""
        hidden = self._hidden(head_index, rel_type)  # [B, d_e]
        return self._dot_scores(hidden, self._candidates(self.entity.weight, entities))

    def score_heads(
        self, rel_type: Tensor, tail_index: Tensor, entities: EntitySelection = None
    ) -> Tensor:
        """Score every candidate head of ``(?, r, t)``, ``[B, C]`` (see the class docstring)."""
        tail = self.entity(tail_index)  # [B, d_e]
        candidates = self._candidates(self.entity.weight, entities)  # [C, d_e]
        if self.training:
            x = self.input_dropout(self.bn0(candidates))  # [C, d_e]
            w = self.hidden_dropout1(self._core_matrices(rel_type))  # [B, d_e, d_e]
            hidden = torch.einsum("ci,bik->bck", x, w)  # [B, C, d_e]
            hidden = self.bn1(hidden.reshape(-1, self.dim)).view_as(hidden)
            return (self.hidden_dropout2(hidden) * tail.unsqueeze(1)).sum(-1)
        a0, c0 = _affine(self.bn0)
        a1, c1 = _affine(self.bn1)
        u = torch.bmm(self._core_matrices(rel_type), (a1 * tail).unsqueeze(-1)).squeeze(-1)
        offset = u @ c0 + tail @ c1  # [B]
        return (a0 * u) @ candidates.t() + offset.unsqueeze(1)

    def bytes_per_query(self) -> int:
        """Bytes per query row: the ``d_e x d_e`` matrix ``W_r`` (and its dropout copy)."""
        return 2 * self.dim * self.dim * 4 + 8 * self.dim * 4


def _affine(bn: torch.nn.BatchNorm1d) -> tuple[Tensor, Tensor]:
    """Eval-mode batch norm as ``x -> a * x + c`` (running statistics)."""
    mean, var = bn.running_mean, bn.running_var
    if mean is None or var is None:  # TuckER builds its norms with the statistics tracked
        raise RuntimeError("TuckER batch norm: expected running statistics, got none")
    a = bn.weight / torch.sqrt(var + bn.eps)
    return a, bn.bias - a * mean
