r"""Dense order-2 network inputs from a graph batch: adjacency channel plus lifted node signals.

Herbst & Jegelka, "Higher-Order Graphon Neural Networks: Approximation and Cut Distance", ICLR
2025, arXiv 2503.14338 (IWN input: the signal broadcast along one node axis, the bounded
``1 -> 2`` lift); Maron et al., "Invariant and Equivariant Graph Networks", ICLR 2019, arXiv
1812.09902 (IGN input: the signal on the diagonal).
"""

from __future__ import annotations

import torch
from torch import Tensor

from graphdata.dense import DenseGraphBatch
from graphdata.errors import GraphDataError
from graphon.nn._common import check_finite

__all__ = ["SIGNAL_PLACEMENTS", "check_batch", "dense_input"]

#: Where node signals go in the order-2 input: broadcast along rows (IWN) or on the diagonal.
SIGNAL_PLACEMENTS = ("broadcast", "diagonal")


def check_batch(batch: object, in_channels: int) -> DenseGraphBatch:
    """Check that ``batch`` is a :class:`DenseGraphBatch` with ``in_channels`` signal channels.

    Args:
        batch: The model input.
        in_channels: Expected node-signal channels :math:`F` (0: the batch may carry none).

    Returns:
        The batch.

    Raises:
        GraphDataError: On another type, a signal channel count other than ``in_channels``,
            or NaN / inf in ``batch.adj`` or ``batch.x`` (a network would carry them into every
            output).
    """
    if not isinstance(batch, DenseGraphBatch):
        raise GraphDataError(
            f"batch: expected a graphdata.dense.DenseGraphBatch, got {type(batch).__name__}; "
            "build one with DenseGraphBatch.from_adjacency(adjs, xs)"
        )
    got = 0 if batch.x is None else batch.x.size(-1)
    if got != in_channels and not (batch.x is None and in_channels == 0):
        raise GraphDataError(
            f"batch.x: expected {in_channels} signal channels (the model's in_channels), got "
            f"{'no signals' if batch.x is None else f'{got} channels'}; rebuild the model with "
            f"in_channels={got}"
        )
    for name, value in (("batch.adj", batch.adj), ("batch.x", batch.x)):
        check_finite(name, value)
    return batch


def dense_input(batch: DenseGraphBatch, *, signal: str = "broadcast") -> Tensor:
    r"""The order-2 input tensor: channel 0 the adjacency, channels 1..F the lifted signals.

    .. math::
        X_{b,0,ij} = A_{b,ij}, \qquad
        X_{b,c,ij} = \begin{cases} x_{b,j,c-1}\, M_{b,i} M_{b,j} & \text{broadcast} \\
        x_{b,i,c-1}\, [i = j]\, M_{b,i} & \text{diagonal} \end{cases}

    ``"broadcast"`` fills every entry of row :math:`i`, the diagonal included (the signal is
    *not* placed on the diagonal only), so the step graphon of the input is unchanged by
    blow-ups :math:`G \otimes J_m`.

    Args:
        batch: Graphs with adjacency ``[B, N, N]`` and optional signals ``[B, N, F]``.
        signal: ``"broadcast"`` (default, IWN) or ``"diagonal"`` (Maron et al.'s IGN).

    Returns:
        The input, zero on padding.

    Shapes:
        output: ``[B, 1 + F, N, N]`` (``F = 0`` without signals).

    Examples:
        >>> adj = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
        >>> batch = DenseGraphBatch.from_adjacency([adj], [torch.tensor([[2.0], [3.0]])])
        >>> dense_input(batch)[0, 1].tolist()
        [[2.0, 3.0], [2.0, 3.0]]
        >>> dense_input(batch, signal="diagonal")[0, 1].tolist()
        [[2.0, 0.0], [0.0, 3.0]]
    """
    if signal not in SIGNAL_PLACEMENTS:
        raise GraphDataError(f"signal: expected one of {list(SIGNAL_PLACEMENTS)}, got {signal!r}")
    adj = batch.adj.unsqueeze(1)  # [B, 1, N, N]
    if batch.x is None:
        return adj
    x = batch.x.to(adj.dtype).transpose(1, 2)  # [B, F, N]
    if signal == "diagonal":
        lifted = torch.diag_embed(x)  # [B, F, N, N]
    else:
        rows = batch.mask.to(adj.dtype)[:, None, :, None]  # [B, 1, N, 1]
        lifted = rows * x.unsqueeze(2)  # [B, F, N, N]: entry (i, j) = x_j, zero on padding rows
    return torch.cat([adj, lifted], dim=1)
