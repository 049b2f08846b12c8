r"""ConvE: a 2-D convolution over stacked head and relation embeddings, scored 1-N."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from graphdata.errors import GraphDataError
from kg._dropout import Dropout, keep_mask
from kg._rows import Embedding
from kg.base import EntitySelection, KGEModel, _check_rate

__all__ = ["ConvE"]


def _channel_mask(batch: int, channels: int, p: float, like: Tensor) -> Tensor:
    r"""Channel-dropout multipliers ``[B, F]``: :math:`m_{bc} = \mathbb 1[u_{bc} \ge p]/(1-p)`.

    The mask of ``torch.nn.Dropout2d`` (Tompson et al., "Efficient Object Localization Using
    Convolutional Networks", CVPR 2015: a whole feature map is dropped with probability
    :math:`p`, the kept ones scaled by :math:`1/(1-p)`), drawn from uniform variates
    :math:`u_{bc} \sim U[0, 1)` by :func:`kg._dropout.keep_mask`, as the element masks; all
    zeros at :math:`p = 1`, all ones at :math:`p = 0`. Device and dtype from ``like``.
    """
    if p == 0.0:
        return like.new_ones(batch, channels)
    if p >= 1.0:
        return like.new_zeros(batch, channels)
    return keep_mask((batch, channels), p, like)


def _folded_feature_maps(
    x: Tensor, conv: torch.nn.Conv2d, bn: torch.nn.BatchNorm2d, mask: Tensor | None
) -> Tensor:
    r"""ConvE's feature maps in one batched product, ``[B, C_in, H, W] -> [B, F L]``.

    The maps are :math:`\mathrm{D}_1(\mathrm{ReLU}(\mathrm{BN}_1(x \star \omega)))` of
    :class:`ConvE`'s formula.

    Batch norm in training mode normalises each channel :math:`c` of the convolution
    :math:`y_{c\ell} = \mathbf w_c^\top \mathbf p_\ell + b_c` (patch :math:`\mathbf p_\ell`
    of the input at output position :math:`\ell`, over the :math:`n = B L` patches of the batch)
    by its batch mean and biased variance (Ioffe & Szegedy, "Batch Normalization", ICML 2015,
    Alg. 1). Both are linear and quadratic in the filter, so they follow from the patches' mean
    :math:`\bar{\mathbf p}` and biased covariance :math:`\Sigma_p` without the ``[B, F, L]``
    maps:

    .. math::
        \mu_c = \mathbf w_c^\top \bar{\mathbf p} + b_c, \qquad
        \sigma_c^2 = \mathbf w_c^\top \Sigma_p \mathbf w_c, \qquad
        \mathrm{BN}(y)_{c\ell} = \mathbf w_c'^\top \mathbf p_\ell + b_c', \quad
        \mathbf w_c' = s_c \mathbf w_c, \; b_c' = \beta_c + s_c (b_c - \mu_c), \;
        s_c = \frac{\gamma_c}{\sqrt{\sigma_c^2 + \epsilon}}.

    A channel-dropout multiplier :math:`m_{bc} \ge 0` commutes with the ReLU,
    :math:`m \max(z, 0) = \max(m z, 0)`, so it scales sample :math:`b`'s filters:
    the result is :math:`\max(m_{bc} (\mathbf w_c'^\top \mathbf p_{b\ell} + b_c'), 0)`, one
    ``bmm`` of per-sample filters ``[B, F, k^2 C_in + 1]`` with the patches and a row of ones.
    The value and every gradient equal those of ``relu(bn(conv(x))) * mask`` (up to float
    rounding; autograd differentiates through :math:`\bar{\mathbf p}` and :math:`\Sigma_p`),
    and the running statistics are updated as ``bn`` updates them (momentum, unbiased
    variance :math:`\sigma_c^2 n / (n - 1)`). :math:`\Sigma_p` is taken from the uncentred
    second moment, :math:`\overline{\mathbf p \mathbf p^\top} - \bar{\mathbf p}
    \bar{\mathbf p}^\top`: ConvE's input is batch-normalised, so :math:`\bar{\mathbf p}`
    is near zero and nothing cancels. On FB15k-237's ConvE batch at the defaults (256 x 32
    maps of 18 x 8, one core) the training forward and backward take 4.6 ms against the module
    chain's 13.7 ms, the evaluation forward 0.9 ms against 3.6 ms, and the backward keeps one
    copy of the maps instead of three (``benchmarks/RESULTS.md``, issue 17).

    Args:
        x: Input images ``[B, C_in, H, W]``.
        conv: The convolution (stride 1, no padding, dilation 1, one group).
        bn: The batch norm over its ``F`` channels. Its statistics and their update follow
            ``torch.nn.BatchNorm2d``: batch statistics in training mode (or without running
            statistics), the running ones otherwise, which fold into the filters directly
            (:math:`\mu_c, \sigma_c^2` the running mean and variance).
        mask: Channel multipliers ``[B, F]`` (:func:`_channel_mask`); None: no dropout.

    Returns:
        The flattened maps ``[B, F L]`` (``L`` output positions), a fresh tensor.
    """
    batch, f = x.size(0), conv.out_channels
    patches: Tensor = _Patches.apply(x, conv.kernel_size[0])  # [B, K = k^2 C_in, L]
    n = batch * patches.size(2)
    rm, rv = bn.running_mean, bn.running_var
    with torch.autocast(x.device.type, enabled=False):  # statistics in the input's precision
        low = patches.dtype in (torch.float16, torch.bfloat16)
        dtype = torch.float32 if low else patches.dtype
        w = conv.weight.flatten(1).to(dtype)  # [F, K]
        bias = conv.bias.to(dtype) if conv.bias is not None else w.new_zeros(f)
        if not bn.training and rm is not None and rv is not None:  # torch's rule
            batch_stats, mean, var = False, rm.to(dtype), rv.to(dtype)
        else:
            p = patches.to(dtype)
            mean_p = p.mean((0, 2))  # [K]
            second = torch.bmm(p, p.transpose(1, 2)).sum(0) / n  # [K, K]
            cov = second - torch.outer(mean_p, mean_p)
            batch_stats, mean = True, w @ mean_p + bias  # [F]
            var = ((w @ cov) * w).sum(1)  # [F], biased
        gamma = bn.weight.to(dtype) if bn.weight is not None else w.new_ones(f)
        beta = bn.bias.to(dtype) if bn.bias is not None else w.new_zeros(f)
        scale = gamma * torch.rsqrt(var + bn.eps)
        folded = torch.cat([w * scale.unsqueeze(1), (beta + (bias - mean) * scale).unsqueeze(1)], 1)
    if bn.training and bn.track_running_stats and batch_stats:
        _update_running(bn, mean.detach(), var.detach(), n)
    filters = folded.to(patches.dtype).unsqueeze(0)  # [1, F, K + 1]
    if mask is None:
        filters = filters.expand(batch, -1, -1)
    else:
        filters = filters * mask.to(patches.dtype).unsqueeze(2)  # [B, F, K + 1]
    ones = patches.new_ones(batch, 1, patches.size(2))
    maps = torch.bmm(filters, torch.cat([patches, ones], 1)).relu_()  # [B, F, L]
    return maps.view(batch, -1)


class _Patches(torch.autograd.Function):
    """``F.unfold(x, k)`` (stride 1, no padding): a strided copy, and a shifted sum backward.

    The forward copies the ``k x k`` windows of a strided view (no per-sample im2col loop); the
    backward adds each of the ``k^2`` offsets' gradients into its shifted window of the input's
    gradient. On a ConvE batch at d = 200 (``[256, 1, 20, 20]``, k = 3, one core) forward and
    backward take 0.2 + 0.3 ms against ``F.unfold``'s 1.0 + 1.4 ms; the values are
    ``F.unfold``'s (tests).
    """

    @staticmethod
    def forward(ctx: Any, x: Tensor, k: int) -> Tensor:
        b, c, h, w = x.shape
        ctx.shape, ctx.k = x.shape, k
        windows = x.unfold(2, k, 1).unfold(3, k, 1)  # [B, C, H', W', k, k]
        return windows.permute(0, 1, 4, 5, 2, 3).reshape(b, c * k * k, -1)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None]:
        b, c, h, w = ctx.shape
        k = ctx.k
        hh, ww = h - k + 1, w - k + 1
        per_offset = grad.reshape(b, c, k, k, hh, ww)
        out = grad.new_zeros(b, c, h, w)
        for u in range(k):
            for v in range(k):
                out[:, :, u : u + hh, v : v + ww] += per_offset[:, :, u, v]
        return out, None


@torch.no_grad()
def _update_running(bn: torch.nn.BatchNorm2d, mean: Tensor, var: Tensor, n: int) -> None:
    """``bn``'s running-statistics update of one training batch (PyTorch's ``_BatchNorm``)."""
    tracked = bn.num_batches_tracked
    if tracked is not None:
        tracked.add_(1)
    momentum = bn.momentum
    if momentum is None:  # cumulative moving average
        momentum = 1.0 / float(tracked) if tracked is not None else 0.0
    if bn.running_mean is not None and bn.running_var is not None:
        bn.running_mean.lerp_(mean.to(bn.running_mean), momentum)
        bn.running_var.lerp_((var * (n / max(n - 1, 1))).to(bn.running_var), momentum)


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
    (identity in eval mode) and :math:`b_t` a learned per-entity bias. The convolution,
    :math:`\mathrm{BN}_1`, the ReLU and :math:`\mathrm{D}_1` run as one batched product with the
    batch norm folded into the filters (:func:`_folded_feature_maps`: the same values and
    gradients, in a third of the time on FB15k-237's batch). Training-mode
    :math:`\mathrm{BN}_1` subtracts each map's batch mean, so the convolution's bias gets an
    exactly zero gradient then (it counts in eval mode).

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
        p = self.feature_map_dropout.p
        mask = (
            _channel_mask(x.size(0), self.conv.out_channels, p, x) if self.training and p else None
        )
        x = _folded_feature_maps(x, self.conv, self.bn1, mask)  # [N, F (2H-k+1)(W-k+1)]
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
        # Activations per (candidate, relation) pair: at most three copies of the feature maps
        # (the folded maps, one copy, and two of the patches, :func:`_folded_feature_maps`).
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
        """Bytes per query row of ``score_tails``: at most three copies of the feature maps."""
        return 3 * self.fc.in_features * 4
