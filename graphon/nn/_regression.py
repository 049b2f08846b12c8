r"""Private training helpers of :mod:`graphon.nn.size_generalization`.

A target-standardising wrapper (the network fits :math:`(y - \mu) / \sigma`, its output is
mapped back), the learning-rate schedules, graph subsets and masked node MSEs.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, TypeAlias

import torch
from torch import Tensor, nn

from graphdata.dense import DenseGraphBatch
from graphdata.errors import GraphDataError

if TYPE_CHECKING:
    from graphon.nn.models import IGN, IWN
    from graphon.nn.mpnn import MPNN

#: The node regressors :func:`graphon.nn.generalization.build_regressor` builds.
NodeRegressor: TypeAlias = "IWN | IGN | MPNN"

__all__: list[str] = []

#: Learning-rate schedules of :func:`graphon.nn.generalization.train_regressor`.
LR_SCHEDULES = ("constant", "cosine", "plateau")


class Standardized(nn.Module):
    r"""Wrap a node regressor so that it fits the standardised target.

    .. math::
        \hat y = \mu + \sigma\, g(G),

    with :math:`\mu, \sigma` the mean and standard deviation of the training targets (buffers,
    saved with the state dict) and :math:`g` the wrapped network, so the squared error of
    :math:`\hat y` is :math:`\sigma^2` times that of :math:`g` on :math:`(y - \mu) / \sigma`.
    """

    def __init__(self, model: NodeRegressor, mean: float, std: float) -> None:
        super().__init__()
        self.model = model
        self.register_buffer("mean", torch.tensor(float(mean)))
        self.register_buffer("std", torch.tensor(float(std)))

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Re-draw the wrapped network's parameters (the statistics stay)."""
        self.model.reset_parameters(generator=generator)

    def forward(self, batch: DenseGraphBatch) -> Tensor:
        """``mean + std * model(batch)``, zero on padding as the wrapped output."""
        out = self.model(batch)
        keep = batch.mask.unsqueeze(-1).to(out.dtype)  # [B, N, 1]
        return (self.mean.to(out.dtype) + self.std.to(out.dtype) * out) * keep


def node_mse(pred: Tensor, y: Tensor, mask: Tensor) -> Tensor:
    """Node MSE over real nodes: ``pred`` ``[B, N, 1]``; ``y``, ``mask`` ``[B, N]``."""
    err = (pred.squeeze(-1) - y) ** 2 * mask
    return err.sum() / mask.sum()


def subset(batch: DenseGraphBatch, idx: Tensor) -> DenseGraphBatch:
    """The graphs ``idx`` of ``batch`` (an index tensor on the batch's device)."""
    x = None if batch.x is None else batch.x[idx]
    return DenseGraphBatch(batch.adj[idx], x, batch.mask[idx])


@torch.no_grad()
def batched_mse(model: nn.Module, batch: DenseGraphBatch, y: Tensor, batch_size: int) -> float:
    """Node MSE of ``model`` on ``batch`` (targets ``y`` ``[G, N]``), in minibatches, eval mode."""
    model.eval()
    total, count = 0.0, 0.0
    for start in range(0, len(batch), batch_size):
        idx = torch.arange(start, min(start + batch_size, len(batch)), device=batch.device)
        sub = subset(batch, idx)
        nodes = float(sub.mask.sum())
        total += float(node_mse(model(sub), y[idx], sub.mask)) * nodes
        count += nodes
    return total / count


def cosine_lr(lr: float, epoch: int, epochs: int, floor: float = 0.01) -> float:
    r"""Cosine decay from ``lr`` to ``floor * lr`` over ``epochs`` (epoch counted from 0)."""
    t = epoch / max(1, epochs - 1)
    return lr * (floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * t)))


def check_schedule(name: str) -> str:
    """Validate a schedule name (raise naming ``config.lr_schedule``)."""
    if name not in LR_SCHEDULES:
        raise GraphDataError(
            f"config.lr_schedule: expected one of {list(LR_SCHEDULES)}, got {name!r}"
        )
    return name
