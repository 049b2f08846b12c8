r"""ConvE: a 2-D convolution over stacked head and relation embeddings, scored 1-N."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from graphdata.errors import GraphDataError
from kg._dropout import Dropout
from kg._rows import Embedding
from kg.base import EntitySelection, KGEModel, _check_rate

__all__ = ["ConvE"]


class ConvE(KGEModel):
    r"""ConvE: convolutional 1-N link prediction (Dettmers et al., arXiv 1707.01476).

    Paper: "Convolutional 2D Knowledge Graph Embeddings", AAAI 2018.

    ``forward`` returns the reference code's logit (TimDettmers/ConvE ``model.py``, before the
    sigmoid):

    .. math::
        f(h, r, t) = \mathrm{ReLU}\Bigl(\mathrm{BN}_2\bigl(\mathrm{D}_2\bigl(
            \mathrm{vec}\bigl(\mathrm{D}_1(\mathrm{ReLU}(\mathrm{BN}_1(
            \mathrm{D}_0(\mathrm{BN}_0([\bar{\mathbf{e}}_h; \bar{\mathbf{w}}_r])) \star \omega)))
            \bigr)\, W + \mathbf{b}_W\bigr)\bigr)\Bigr) \cdot \mathbf{e}_t + b_t,

    with :math:`\bar{\mathbf{e}}_h, \bar{\mathbf{w}}_r` the ``H x (d / H)`` reshapes of the
    head and relation embeddings stacked into a ``2H x (d / H)`` image, :math:`\star\,\omega` a
    ``k x k`` convolution with ``num_filters`` filters (with bias, no padding), :math:`W,
    \mathbf{b}_W` the projection back to :math:`\mathbb{R}^d`, :math:`\mathrm{BN}_{0,1,2}` batch
    norms, :math:`\mathrm{D}_0, \mathrm{D}_2` dropouts, :math:`\mathrm{D}_1` channel dropout
    (identity in eval mode) and :math:`b_t` a learned per-entity bias.

    ``score_tails`` is the paper's 1-N scoring: one matmul of the hidden vectors with the entity
    table, plus the biases. ``score_heads`` pushes every (candidate head, relation) pair through
    the network in chunks of at most :attr:`chunk_bytes` of activations (in training mode the
    batch statistics are those of each chunk); prefer reciprocal relations, where head
    prediction is ``score_tails(t, r_inverse)``. Initialisation: ``xavier_normal_`` embeddings,
    zero biases, PyTorch defaults for the convolution, the projection and the batch norms.

    Args:
        num_entities: Number of entities.
        num_relations: Number of relations.
        dim: Embedding size :math:`d`, a multiple of ``embedding_height``.
        embedding_height: :math:`H`, rows of the reshaped embeddings. Default 10 (``10 x 20``
            images for ``d = 200``, as the paper).
        num_filters: Convolution filters. Default 32.
        kernel_size: :math:`k`. Default 3.
        input_dropout: Rate of :math:`\mathrm{D}_0`. Default 0.2.
        feature_map_dropout: Rate of :math:`\mathrm{D}_1`. Default 0.2.
        hidden_dropout: Rate of :math:`\mathrm{D}_2`. Default 0.3 (the paper's rates).

    Shapes:
        forward: ``[B], [B], [B] -> [B]``; score_tails/score_heads: ``[B], [B] -> [B, C]``.

    Examples:
        >>> model = ConvE(5, 2, dim=8, embedding_height=2, num_filters=3).eval()
        >>> model.score_tails(torch.tensor([0]), torch.tensor([1])).shape
        torch.Size([1, 5])
    """

    name = "conve"

    def __init__(
        self,
        num_entities: int,
        num_relations: int,
        dim: int,
        *,
        embedding_height: int = 10,
        num_filters: int = 32,
        kernel_size: int = 3,
        input_dropout: float = 0.2,
        feature_map_dropout: float = 0.2,
        hidden_dropout: float = 0.3,
    ) -> None:
        super().__init__(num_entities, num_relations, dim)
        for arg, value in (("num_filters", num_filters), ("kernel_size", kernel_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise GraphDataError(f"{arg}: expected a positive int, got {value!r}")
        for arg, rate in (
            ("input_dropout", input_dropout),
            ("feature_map_dropout", feature_map_dropout),
            ("hidden_dropout", hidden_dropout),
        ):
            _check_rate(arg, rate)
        valid = isinstance(embedding_height, int) and embedding_height >= 1
        width = dim // embedding_height if valid else 0
        if not valid or dim % embedding_height or min(2 * embedding_height, width) < kernel_size:
            raise GraphDataError(
                f"embedding_height: expected a divisor H of dim={dim} with 2H and dim/H at least "
                f"kernel_size={kernel_size}, got {embedding_height!r}; e.g. dim=200 with H=10"
            )
        self.embedding_height, self.embedding_width = embedding_height, width
        conv_h, conv_w = 2 * embedding_height - kernel_size + 1, width - kernel_size + 1
        # Entity and relation tables, entity biases and the projection [F h w, d].
        self._check_size(
            (num_entities + num_relations) * dim
            + num_entities
            + num_filters * conv_h * conv_w * dim
        )
        self.entity = Embedding(num_entities, dim)
        self.relation = Embedding(num_relations, dim)
        self.bias = torch.nn.Parameter(torch.zeros(num_entities))
        self.bn0 = torch.nn.BatchNorm2d(1)
        self.conv = torch.nn.Conv2d(1, num_filters, kernel_size)
        self.bn1 = torch.nn.BatchNorm2d(num_filters)
        self.fc = torch.nn.Linear(num_filters * conv_h * conv_w, dim)
        self.bn2 = torch.nn.BatchNorm1d(dim)
        self.input_dropout = Dropout(input_dropout)
        self.feature_map_dropout = torch.nn.Dropout2d(feature_map_dropout)
        self.hidden_dropout = Dropout(hidden_dropout)
        self.reset_parameters()

    @property
    def config(self) -> dict[str, Any]:
        """Constructor arguments, including the image shape, filters and dropout rates."""
        return {
            **super().config,
            "embedding_height": self.embedding_height,
            "num_filters": self.conv.out_channels,
            "kernel_size": self.conv.kernel_size[0],
            "input_dropout": self.input_dropout.p,
            "feature_map_dropout": self.feature_map_dropout.p,
            "hidden_dropout": self.hidden_dropout.p,
        }

    @torch.no_grad()
    def reset_parameters(self) -> None:
        """Re-draw embeddings, zero the biases and reset every layer (see the class docstring)."""
        torch.nn.init.xavier_normal_(self.entity.weight)
        torch.nn.init.xavier_normal_(self.relation.weight)
        self.bias.zero_()
        for layer in (self.bn0, self.conv, self.bn1, self.fc, self.bn2):
            layer.reset_parameters()

    def _hidden(self, head: Tensor, rel: Tensor) -> Tensor:
        """Hidden vectors of head and relation embeddings ``[N, d]`` -> ``[N, d]``."""
        shape = (-1, 1, self.embedding_height, self.embedding_width)
        x = torch.cat([head.view(shape), rel.view(shape)], dim=2)  # [N, 1, 2H, W]
        x = self.input_dropout(self.bn0(x))
        x = self.feature_map_dropout(F.relu(self.bn1(self.conv(x))))  # [N, F, 2H-k+1, W-k+1]
        x = self.hidden_dropout(self.fc(x.flatten(1)))  # [N, d]
        return F.relu(self.bn2(x))

    def forward(self, head_index: Tensor, rel_type: Tensor, tail_index: Tensor) -> Tensor:
        """Score each triple, ``[B]`` (see the class docstring)."""
        hidden = self._hidden(self.entity(head_index), self.relation(rel_type))
        return (hidden * self.entity(tail_index)).sum(-1) + self.bias[tail_index]

    def triple_representation(
        self, head_index: Tensor, rel_type: Tensor, tail_index: Tensor
    ) -> Tensor:
        """No per-coordinate form through the convolution: the score itself, ``[B, 1]``."""
        return self(head_index, rel_type, tail_index).unsqueeze(-1)

    def score_tails(
        self, head_index: Tensor, rel_type: Tensor, entities: EntitySelection = None
    ) -> Tensor:
        """Score every candidate tail of ``(h, r, ?)``, ``[B, C]``: one matmul plus biases."""
        hidden = self._hidden(self.entity(head_index), self.relation(rel_type))  # [B, d]
        candidates = self._candidates(self.entity.weight, entities)
        return self._dot_scores(hidden, candidates, self._candidates(self.bias, entities))

    def score_heads(
        self, rel_type: Tensor, tail_index: Tensor, entities: EntitySelection = None
    ) -> Tensor:
        """Score every candidate head of ``(?, r, t)``, ``[B, C]`` (see the class docstring)."""
        rel, tail = self.relation(rel_type), self.entity(tail_index)  # [B, d]
        batch = rel.size(0)
        # Activations per (candidate, relation) pair: about three copies of the feature maps.
        per_pair = 3 * self.fc.in_features * rel.element_size()
        out = [rel.new_empty(batch, 0)]
        for chunk in self._chunks(entities, self.chunk_bytes // max(batch * per_pair, 1)):
            heads = self._candidates(self.entity.weight, chunk)  # [C, d]
            size = heads.size(0)
            pairs = self._hidden(heads.repeat(batch, 1), rel.repeat_interleave(size, dim=0))
            hidden = pairs.view(batch, size, self.dim)  # [B, C, d]
            out.append((hidden * tail.unsqueeze(1)).sum(-1))
        return torch.cat(out, dim=1) + self.bias[tail_index].unsqueeze(1)

    def bytes_per_query(self) -> int:
        """Bytes per query row of ``score_tails``: about three copies of the feature maps."""
        return 3 * self.fc.in_features * 4
