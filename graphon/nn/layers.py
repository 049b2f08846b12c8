r"""Linear permutation-equivariant layers between tensor orders (IGN and IWN bases).

Maron, Ben-Hamu, Shamir, Lipman, "Invariant and Equivariant Graph Networks", ICLR 2019, arXiv
1812.09902; the IWN basis of Herbst & Jegelka, "Higher-Order Graphon Neural Networks:
Approximation and Cut Distance", ICLR 2025, arXiv 2503.14338. The basis is generated from set
partitions (:mod:`graphon.nn.basis`) and applied to dense masked batches without
materialising any operator or broadcast output: per element one reduction (a sum over its
summed indices, or an einsum for a diagonal read), one channel-mixing matmul on the reduced
tensor, and a broadcast (or diagonal) write. An order-2 IWN layer thus costs
:math:`O(n^2 C_{in} C_{out})` time and :math:`O(n^2 (C_{in} + C_{out}))` memory; outputs keep
the channel axis innermost in memory (``[B, C, N, N]`` shape, channels-last strides), which the
next layer reads without a copy.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from graphdata.errors import GraphDataError
from graphon.nn._common import check_finite
from graphon.nn._contract import (
    GroupKey,
    Term,
    arrange,
    group_key,
    mask_product,
    node_counts,
    write,
)
from graphon.nn._fast import accumulate, derive_last, reduce_last
from graphon.nn.basis import check_basis, equivariant_basis

__all__ = ["EquivariantLinear"]


def _check_channels(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise GraphDataError(f"{name}: expected a positive int, got {value!r}")
    return value


class EquivariantLinear(nn.Module):
    r"""A linear :math:`S_n`-equivariant map from order-:math:`k` to order-:math:`l` tensors.

    .. math::
        Y_{b,e} = \sum_{d=1}^{C_{in}} \sum_{\pi \in \mathcal{B}} \theta_{d,e,\pi}\,
        \mathrm{Op}_\pi(X_{b,d}) + \sum_{\rho \in \mathcal{B}_0} \beta_{e,\rho}\,
        \mathrm{Op}_\rho(1), \qquad Y_{b,e} \leftarrow Y_{b,e} \odot M_b^{\otimes l},

    where :math:`\mathcal{B}` is :func:`~graphon.nn.basis.equivariant_basis` ``(k, l, basis)``,
    :math:`\mathrm{Op}_\pi` averages (``normalize=True``: divides by the graph's own node count
    :math:`n_b` per summed index) or sums over the summed indices, :math:`\mathcal{B}_0` is the
    ``0 -> l`` basis (IWN: one constant bias per channel; IGN: Bell(l) biases, for ``l = 2`` the
    constant and the diagonal bias of Maron et al.), and :math:`M_b^{\otimes l}` zeroes the
    padding (:math:`M_b` the node mask of graph :math:`b`).

    Args:
        in_channels: :math:`C_{in}`.
        out_channels: :math:`C_{out}`.
        in_order: :math:`k` in ``0..4``.
        out_order: :math:`l` in ``0..4``.
        basis: ``"iwn"`` (default; no diagonal reads or writes) or ``"ign"`` (full basis).
        normalize: Average instead of sum over summed indices. Default ``True``; the IWN basis
            requires it (an unnormalised IWN is unbounded on graphons).
        bias: Learn the ``0 -> l`` bias terms. Default ``True``.

    Attributes:
        weight: :math:`\theta`, ``[C_in, C_out, |B|]``.
        bias: :math:`\beta`, ``[C_out, |B_0|]``, or None.

    Shapes:
        x: ``[B, C_in, N, ..., N]`` (``k`` node axes; padding must be zero); mask: ``[B, N]``;
        output: ``[B, C_out, N, ..., N]`` (``l`` node axes), zero on padding.

    Examples:
        >>> layer = EquivariantLinear(1, 1, 2, 2)
        >>> len(layer.elements), tuple(layer.weight.shape)
        (7, (1, 1, 7))
        >>> x = torch.rand(1, 1, 4, 4)
        >>> perm = torch.randperm(4)
        >>> y = layer(x[:, :, perm][:, :, :, perm])
        >>> torch.allclose(y, layer(x)[:, :, perm][:, :, :, perm], atol=1e-6)
        True
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        in_order: int,
        out_order: int,
        *,
        basis: str = "iwn",
        normalize: bool = True,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.in_channels = _check_channels("in_channels", in_channels)
        self.out_channels = _check_channels("out_channels", out_channels)
        self.basis = check_basis(basis)
        for flag, value in (("normalize", normalize), ("bias", bias)):
            if not isinstance(value, bool):
                raise GraphDataError(f"{flag}: expected True or False, got {value!r}")
        if basis == "iwn" and not normalize:
            raise GraphDataError(
                "normalize: the IWN basis averages every summed index (normalize=True); use "
                "basis='ign' for unnormalised sums"
            )
        self.elements = equivariant_basis(in_order, out_order, basis=basis)
        self.in_order, self.out_order = in_order, out_order
        self.normalize = bool(normalize)
        self.weight = nn.Parameter(torch.empty(in_channels, out_channels, len(self.elements)))
        self.bias_elements = equivariant_basis(0, out_order, basis=basis) if bias else []
        self.bias = (
            nn.Parameter(torch.empty(out_channels, len(self.bias_elements))) if bias else None
        )
        self._plan_contractions()
        self.reset_parameters()

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        r"""Draw :math:`\theta \sim \mathcal{N}(0, 2 / (C_{in}|\mathcal{B}| + C_{out}))`, zero bias.

        Args:
            generator: Generator to draw from (on the parameters' device). Default: torch's
                global generator, as ``torch.nn.Linear`` does.
        """
        fan = self.in_channels * len(self.elements) + self.out_channels
        with torch.no_grad():
            self.weight.normal_(0.0, math.sqrt(2.0 / fan), generator=generator)
            if self.bias is not None:
                self.bias.zero_()

    def forward(
        self, x: Tensor, mask: Tensor | None = None, *, averaged: Tensor | None = None
    ) -> Tensor:
        """Apply the layer.

        Args:
            x: Input ``[B, C_in, N, ..., N]``, zero outside the mask.
            mask: Real nodes ``[B, N]`` (bool). None: every node is real. Required when
                ``in_order = 0 < out_order`` (it gives ``N``).
            averaged: Optional tensor of the shape of ``x`` that the averaging elements (those
                with a summed index) read instead of ``x``; entry-local elements still read
                ``x``. Used by :func:`graphon.nn.bernoulli.bernoulli_lift`. Default None.

        Returns:
            ``[B, C_out, N, ..., N]`` with ``out_order`` node axes.
        """
        n = self._check(x, mask, averaged)
        batch = x.size(0)
        if mask is not None and bool(mask.all()):
            mask = None  # equal sizes: the plain n and no masking pass
        counts = node_counts(mask, x, n)
        # Channels-last logical layout inside the layer (see graphon.nn._fast).
        reduced: list[Tensor] = []  # [B, N^q, C_in] each
        for term, parent in self._reductions:
            source = x if averaged is None or term.local else averaged
            if parent is None:
                reduced.append(reduce_last(term, source, counts, normalize=self.normalize))
            else:
                up = self._reductions[parent][0].kept_in
                red = derive_last(
                    reduced[parent], up, term.kept_in, counts, normalize=self.normalize
                )
                reduced.append(red)
        groups: dict[GroupKey, tuple[Tensor, bool]] = {}
        weights = self.weight.permute(2, 0, 1)  # [E, C_in, C_out]
        flats: dict[int, Tensor] = {}
        for index, (term, key) in enumerate(self._terms):
            r = self._source[index]
            t = reduced[r]  # [B, N^q, C_in]: kept axes in input order
            if r not in flats:  # a view when channels are innermost, else one copy per input
                flats[r] = t.reshape(-1, self.in_channels)  # [B * N^q, C_in]
            mixed = (flats[r] @ weights[index]).view(t.shape[:-1] + (self.out_channels,))
            axes = [1 + a for a in term.to_output]
            # Output block order, size-1 axes for the broadcast blocks: [B, d_1.., d_m, C_out].
            part = arrange(mixed.permute(0, *axes, -1), key, channels_last=True)
            if key in groups:
                groups[key] = (groups[key][0] + part, True)
            else:
                groups[key] = (part, False)
        if self.bias is not None:
            for j, key in enumerate(self._bias_keys):
                block = self.bias[:, j].view((1,) + (1,) * len(key[1]) + (-1,))  # [1, 1.., C]
                prev = groups.get(key)
                groups[key] = (block, False) if prev is None else (prev[0] + block, True)
        parts = []
        for key, (part, owned) in groups.items():
            written = write(part, key, n, batch, channels_last=True)
            parts.append((written, owned or written is not part))
        target = (batch,) + (n,) * self.out_order + (self.out_channels,)
        out = accumulate(parts, target)  # [B, N, ..., N, C_out]
        if mask is not None and self.out_order:
            out = out * mask_product(mask, self.out_order).unsqueeze(-1).to(out.dtype)
        return out.movedim(-1, 1)  # [B, C_out, N, ..., N], channels innermost in memory

    def _plan_contractions(self) -> None:
        """Precompute the reductions, their parents and the elements reading each one."""
        terms = [e.term for e in self.elements]
        self._terms = [(t, group_key(t)) for t in terms]
        keys = sorted({(t.in_blocks, t.kept_in) for t in terms}, key=lambda k: -len(k[1]))
        self._reductions: list[tuple[Term, int | None]] = []
        for in_blocks, kept_in in keys:
            term = next(t for t in terms if (t.in_blocks, t.kept_in) == (in_blocks, kept_in))
            parent = None
            if not term.local:
                # Derive from the smallest averaging reduction that keeps a superset of axes.
                candidates = [
                    r
                    for r, (u, _) in enumerate(self._reductions)
                    if u.in_blocks == in_blocks and not u.local and set(kept_in) < set(u.kept_in)
                ]
                if candidates:
                    parent = min(candidates, key=lambda r: len(self._reductions[r][0].kept_in))
            self._reductions.append((term, parent))
        order = [(t.in_blocks, t.kept_in) for t, _ in self._reductions]
        self._source = [order.index((t.in_blocks, t.kept_in)) for t in terms]
        self._bias_keys = [group_key(e.term) for e in self.bias_elements]

    def _check(self, x: Tensor, mask: Tensor | None, averaged: Tensor | None) -> int:
        k = self.in_order
        if not isinstance(x, Tensor) or x.dim() != 2 + k:
            got = tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__
            raise GraphDataError(
                f"x: expected a tensor [B, C_in] + {k} node axes (order {k}), got {got}"
            )
        if any(s != x.size(-1) for s in x.shape[2:]):
            raise GraphDataError(
                f"x: expected equal (square) node axes, got shape {tuple(x.shape)}"
            )
        if x.size(1) != self.in_channels:
            raise GraphDataError(
                f"x: expected {self.in_channels} channels in dim 1, got {x.size(1)} (shape "
                f"{tuple(x.shape)}); check the model's in_channels"
            )
        mixed = x.dtype != self.weight.dtype and not torch.is_autocast_enabled(x.device.type)
        if mixed or x.device != self.weight.device:  # under autocast, matmuls mix dtypes
            raise GraphDataError(
                f"x: expected dtype {self.weight.dtype} on {self.weight.device} (the layer's "
                f"parameters), got {x.dtype} on {x.device}; convert one, e.g. "
                f"module.to(x.dtype) or x.to({self.weight.dtype})"
            )
        if mask is not None:
            want = (x.size(0), x.size(-1)) if k else (x.size(0), mask.size(-1))
            if mask.dtype != torch.bool or tuple(mask.shape) != want or mask.dim() != 2:
                raise GraphDataError(
                    f"mask: expected a bool tensor [B, N] = {list(want)} matching x of shape "
                    f"{tuple(x.shape)}, got shape {tuple(mask.shape)} and dtype {mask.dtype}"
                )
            if mask.device != x.device:
                raise GraphDataError(
                    f"mask: expected the device of x ({x.device}), got {mask.device}; move it"
                )
            empty = (~mask.any(-1)).nonzero().flatten().tolist() if mask.size(-1) else []
            if empty and self.normalize:
                raise GraphDataError(
                    f"mask: graphs {empty[:8]} have no real node (an all-False row), so their "
                    "averages are 0/0; drop those graphs from the batch"
                )
        elif k == 0 and self.out_order > 0:
            raise GraphDataError("mask: an order-0 input needs the node mask [B, N] to give N")
        if averaged is not None and averaged.shape != x.shape:
            raise GraphDataError(
                f"averaged: expected the shape of x {tuple(x.shape)}, got {tuple(averaged.shape)}"
            )
        fix = (
            "impute or drop those graphs; inside a model this is a hidden tensor whose weights "
            "overflowed: lower the weight scale or the learning rate"
        )
        check_finite("x", x, fix)
        check_finite("averaged", averaged, fix)
        return x.size(-1) if k else (mask.size(1) if mask is not None else 1)

    def extra_repr(self) -> str:
        """Channels, orders and basis, for ``repr``."""
        return (
            f"{self.in_channels}, {self.out_channels}, order {self.in_order}->{self.out_order}, "
            f"basis={self.basis!r} ({len(self.elements)} maps), normalize={self.normalize}"
        )
