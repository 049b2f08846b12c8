r"""Invariant Graphon Networks (IWN) and Invariant Graph Networks (IGN) on dense graph batches.

Herbst & Jegelka, "Higher-Order Graphon Neural Networks: Approximation and Cut Distance", ICLR
2025, arXiv 2503.14338 (IWN; reference code dan1elherbst/Higher-Order-WNNs ``models/iwn.py``);
Maron, Ben-Hamu, Shamir, Lipman, "Invariant and Equivariant Graph Networks", ICLR 2019, arXiv
1812.09902 (IGN). Both stack :class:`~graphon.nn.layers.EquivariantLinear` layers with a
pointwise nonlinearity and end in an invariant (graph) or equivariant (node) readout layer; the
MPNN baseline lives in :mod:`graphon.nn.mpnn`.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from graphdata.dense import DenseGraphBatch
from graphdata.errors import GraphDataError
from graphon.nn._common import ACTIVATIONS, TASKS, check_common
from graphon.nn._contract import mask_product
from graphon.nn.inputs import check_batch, dense_input
from graphon.nn.layers import EquivariantLinear
from graphon.nn.mpnn import MPNN

__all__ = ["ACTIVATIONS", "TASKS", "MODELS", "IWN", "IGN", "MPNN"]


class _EquivariantNetwork(nn.Module):
    """The shared stack of :class:`IWN` and :class:`IGN` (see their docstrings)."""

    def __init__(
        self,
        in_channels: int,
        hidden_channels: int,
        out_channels: int,
        *,
        num_layers: int,
        order: int,
        activation: str,
        task: str,
        mlp_hidden: int | None,
        basis: str,
        normalize: bool,
        signal: str,
    ) -> None:
        super().__init__()
        check_common(
            in_channels, hidden_channels, out_channels, num_layers, activation, task, mlp_hidden
        )
        if isinstance(order, bool) or not isinstance(order, int) or not 2 <= order <= 4:
            raise GraphDataError(f"order: expected an int in 2..4, got {order!r}")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.order, self.task, self.activation, self.signal = order, task, activation, signal
        widths = [1 + in_channels] + [hidden_channels] * (num_layers - 1)
        orders = [2] + [order] * (num_layers - 1)
        self.layers = nn.ModuleList(
            EquivariantLinear(
                widths[t], widths[t + 1], orders[t], order, basis=basis, normalize=normalize
            )
            for t in range(num_layers - 1)
        )
        readout_out = out_channels if mlp_hidden is None else mlp_hidden
        self.readout = EquivariantLinear(
            widths[-1],
            readout_out,
            orders[-1],
            0 if task == "graph" else 1,
            basis=basis,
            normalize=normalize,
        )
        self.head = None if mlp_hidden is None else nn.Linear(mlp_hidden, out_channels)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Re-draw every parameter (layers: see :meth:`EquivariantLinear.reset_parameters`)."""
        for layer in [*self.layers, self.readout]:
            layer.reset_parameters(generator)
        if self.head is not None:
            bound = self.head.in_features**-0.5
            with torch.no_grad():
                self.head.weight.uniform_(-bound, bound, generator=generator)
                self.head.bias.zero_()

    def hidden(self, batch: DenseGraphBatch) -> Tensor:
        """The last hidden tensor ``[B, C, N, ..., N]`` (activated, zero on padding)."""
        check_batch(batch, self.in_channels)
        act = ACTIVATIONS[self.activation]
        h = dense_input(batch, signal=self.signal)  # [B, 1 + F, N, N]
        mask = batch.mask
        keep = None
        if not bool(mask.all()):
            keep = mask_product(mask, self.order).unsqueeze(1).to(h.dtype)  # [B, 1, N, ..., N]
        for layer in self.layers:
            h = act(layer(h, mask))
            if keep is not None:  # the activation of a zero padding entry is not zero: re-mask
                h = h * keep
        return h

    def finish(self, pooled: Tensor, mask: Tensor) -> Tensor:
        """Apply the optional MLP head to the readout and lay out the output."""
        if self.task == "node":
            pooled = pooled.transpose(1, 2)  # [B, N, C]
        if self.head is not None:
            pooled = self.head(ACTIVATIONS[self.activation](pooled))
        if self.task == "node":
            pooled = pooled * mask.unsqueeze(-1).to(pooled.dtype)
        return pooled

    def forward(self, batch: DenseGraphBatch) -> Tensor:
        """Evaluate on a batch: ``[B, out]`` (graph task) or ``[B, N, out]`` (node task)."""
        h = self.hidden(batch)
        return self.finish(self.readout(h, batch.mask), batch.mask)

    def extra_repr(self) -> str:
        """Order, task and activation, for ``repr``."""
        return f"order={self.order}, task={self.task!r}, activation={self.activation!r}"


class IWN(_EquivariantNetwork):
    r"""Invariant Graphon Network of order :math:`k` (Herbst & Jegelka, arXiv 2503.14338).

    .. math::
        H^{(0)} = [A;\ x \otimes \mathbf{1}], \qquad
        H^{(t)} = \sigma\big(L_t(H^{(t-1)})\big)\ (t < T), \qquad
        y = \mathrm{MLP}\big(L_T(H^{(T-1)})\big),

    with :math:`H^{(0)}_{c,ij} = x_{j,c}` the broadcast signal lift
    (:func:`~graphon.nn.inputs.dense_input`), :math:`L_1: 2 \to k` and
    :math:`L_t: k \to k` IWN layers (:class:`~graphon.nn.layers.EquivariantLinear`, basis
    ``"iwn"``: no diagonal reads or writes, means over real nodes), :math:`\sigma` pointwise
    (re-masked), :math:`L_T` the readout layer :math:`k \to 0` (graph; for :math:`k = 2` a
    learned combination of the channel means, the 2 -> 0 mean of the paper) or :math:`k \to 1`
    (node), and the MLP (``mlp_hidden``) :math:`\mathrm{Linear}\circ\sigma` or the identity.
    Every operation is an average, so the output on a graph equals the output on its
    :math:`m`-fold blow-up.

    Args:
        in_channels: Node-signal channels :math:`F` (0: adjacency only).
        hidden_channels: Channels of the hidden tensors. Default ``16``.
        out_channels: Output channels. Default ``1``.
        num_layers: Equivariant layers :math:`T` including the readout. Default ``2`` (the
            paper's 2-layer IWN: one 2 -> 2 layer, sigmoid, the mean readout).
        order: Tensor order :math:`k` of the hidden layers, ``2..4``. Default ``2``.
        activation: Key of :data:`ACTIVATIONS`. Default ``"sigmoid"``.
        task: ``"graph"`` (default) or ``"node"``.
        mlp_hidden: Width of the optional MLP head after the readout. Default None (no head).

    Shapes:
        input: a :class:`~graphdata.dense.DenseGraphBatch` with ``x`` ``[B, N, F]``;
        output: ``[B, out_channels]`` or ``[B, N, out_channels]`` (zero on padding).

    Examples:
        >>> from graphdata.dense import DenseGraphBatch
        >>> adj = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
        >>> batch = DenseGraphBatch.from_adjacency([adj], [torch.ones(2, 1)])
        >>> IWN(1)(batch).shape
        torch.Size([1, 1])
    """

    def __init__(
        self,
        in_channels: int,
        hidden_channels: int = 16,
        out_channels: int = 1,
        *,
        num_layers: int = 2,
        order: int = 2,
        activation: str = "sigmoid",
        task: str = "graph",
        mlp_hidden: int | None = None,
    ) -> None:
        super().__init__(
            in_channels,
            hidden_channels,
            out_channels,
            num_layers=num_layers,
            order=order,
            activation=activation,
            task=task,
            mlp_hidden=mlp_hidden,
            basis="iwn",
            normalize=True,
            signal="broadcast",
        )


class IGN(_EquivariantNetwork):
    r"""Invariant Graph Network with the full basis (Maron et al., arXiv 1812.09902).

    .. math::
        H^{(0)} = [A;\ \mathrm{diag}(x)], \qquad
        H^{(t)} = \sigma\big(L_t(H^{(t-1)})\big)\ (t < T), \qquad
        y = \mathrm{MLP}\big(L_T(H^{(T-1)})\big),

    as :class:`IWN` but with all Bell(k + l) basis elements in every layer (diagonal reads and
    writes, Bell(l) biases), the signal on the diagonal (``signal="diagonal"``, Maron et al.) or
    broadcast, and "inf" normalisation (each summed index divided by the graph's :math:`n_b`;
    ``normalize=False`` sums). The readout :math:`L_T` is the full ``k -> 0`` (graph: diagonal
    and total means for :math:`k = 2`) or ``k -> 1`` (node) layer.

    Args:
        in_channels: Node-signal channels :math:`F`.
        hidden_channels: Hidden channels. Default ``16``.
        out_channels: Output channels. Default ``1``.
        num_layers: Equivariant layers including the readout. Default ``2``.
        order: Hidden tensor order, ``2..4``. Default ``2``.
        activation: Key of :data:`ACTIVATIONS`. Default ``"sigmoid"``.
        task: ``"graph"`` (default) or ``"node"``.
        mlp_hidden: Width of the optional MLP head. Default None.
        normalize: "inf" normalisation. Default ``True``.
        signal: ``"diagonal"`` (default) or ``"broadcast"``.

    Shapes:
        output: ``[B, out_channels]`` or ``[B, N, out_channels]``.

    Examples:
        >>> from graphdata.dense import DenseGraphBatch
        >>> batch = DenseGraphBatch.from_adjacency([torch.ones(3, 3)], [torch.ones(3, 1)])
        >>> IGN(1, task="node")(batch).shape
        torch.Size([1, 3, 1])
    """

    def __init__(
        self,
        in_channels: int,
        hidden_channels: int = 16,
        out_channels: int = 1,
        *,
        num_layers: int = 2,
        order: int = 2,
        activation: str = "sigmoid",
        task: str = "graph",
        mlp_hidden: int | None = None,
        normalize: bool = True,
        signal: str = "diagonal",
    ) -> None:
        if signal not in ("diagonal", "broadcast"):
            raise GraphDataError(f"signal: expected 'diagonal' or 'broadcast', got {signal!r}")
        super().__init__(
            in_channels,
            hidden_channels,
            out_channels,
            num_layers=num_layers,
            order=order,
            activation=activation,
            task=task,
            mlp_hidden=mlp_hidden,
            basis="ign",
            normalize=normalize,
            signal=signal,
        )


#: Model name -> class, for the CLI and the transfer harness.
MODELS: dict[str, type[nn.Module]] = {"iwn": IWN, "ign": IGN, "mpnn": MPNN}
