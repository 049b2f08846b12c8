r"""The Bernoulli lift: the large-n limit of an order-2 IWN on simple W-random graphs.

Herbst & Jegelka, "Higher-Order Graphon Neural Networks: Approximation and Cut Distance", ICLR
2025, arXiv 2503.14338, observe that an IWN with a nonlinear activation does not converge to its
graphon value :math:`N(W)` on sampled simple graphs :math:`\mathbb{G}(n, W)` (Figure 2, the
plateau), though outputs stay transferable. The reason: entry-local maps (identity, transpose)
pass each 0/1 entry :math:`A_{ij}` to the nonlinearity unaveraged, so every later mean averages
:math:`\sigma(\ldots A_{ij} \ldots)` over the entry's Bernoulli law, not :math:`\sigma` at the
mean :math:`W(x_i, x_j)`. Evaluating the network on that law gives the limit of the outputs.
"""

from __future__ import annotations

import torch
from torch import Tensor

from graphdata.dense import DenseGraphBatch
from graphdata.errors import GraphDataError
from graphon.nn._common import ACTIVATIONS, check_finite
from graphon.nn._contract import mask_product
from graphon.nn.inputs import dense_input
from graphon.nn.models import IWN

__all__ = ["bernoulli_lift"]


def bernoulli_lift(
    model: IWN, probs: Tensor, x: Tensor | None = None, mask: Tensor | None = None
) -> Tensor:
    r"""Evaluate an order-2 IWN on the Bernoulli law of each adjacency entry.

    Each hidden entry :math:`(i, j)` depends on the one random entry :math:`A_{ij} = A_{ji}
    \sim \mathrm{Bernoulli}(p_{ij})` and on means, which concentrate. Carry the two branches
    :math:`H^{(t)}_a` (the entry conditioned on :math:`A_{ij} = a \in \{0, 1\}`):

    .. math::
        \bar H^{(t)} = P \odot H^{(t)}_1 + (1 - P) \odot H^{(t)}_0, \qquad
        H^{(t+1)}_a = \sigma\big(L_{t+1}^{\mathrm{local}}(H^{(t)}_a)
        + L_{t+1}^{\mathrm{mean}}(\bar H^{(t)})\big), \qquad
        y = \mathrm{MLP}\big(L_T(\bar H^{(T-1)})\big),

    where :math:`L^{\mathrm{local}}` holds the layer's entry-local elements (no summed index:
    identity, transpose), :math:`L^{\mathrm{mean}}` the averaging ones plus the bias, and
    :math:`H^{(0)}_a` the input with adjacency channel :math:`a` (signal channels as usual).
    With ``probs`` the loopless matrix :math:`W(x_i, x_j)[i \ne j]` of large :math:`n`, this
    is the limit of the IWN's outputs on :math:`\mathbb{G}(n, W)`: it differs from the value on
    the weighted graph :math:`W(x_i, x_j)` whenever :math:`\sigma` is nonlinear.

    Args:
        model: An order-2 :class:`~graphon.nn.models.IWN`.
        probs: Edge probabilities :math:`P` in :math:`[0, 1]`, symmetric.
        x: Node signals, or None (as the model's ``in_channels`` requires).
        mask: Real nodes; default all.

    Returns:
        The lifted output, as ``model(batch)`` would return it.

    Shapes:
        probs: ``[B, N, N]``; x: ``[B, N, F]``; mask: ``[B, N]``; output ``[B, out]`` (graph
        task) or ``[B, N, out]`` (node task).

    Examples:
        >>> model = IWN(0, 4, activation="relu")
        >>> probs = torch.ones(1, 5, 5)  # A = 1 surely: the lift is the plain output
        >>> batch = DenseGraphBatch(probs, None, torch.ones(1, 5, dtype=torch.bool))
        >>> torch.allclose(bernoulli_lift(model, probs), model(batch))
        True
    """
    if not isinstance(model, IWN) or model.order != 2:
        raise GraphDataError(
            f"model: expected an order-2 IWN, got {type(model).__name__}"
            f"{'' if not isinstance(model, IWN) else f' of order {model.order}'}; the lift "
            "tracks one Bernoulli entry per hidden entry, which holds for order 2 only"
        )
    if not isinstance(probs, Tensor) or probs.dim() != 3 or probs.size(1) != probs.size(2):
        raise GraphDataError(
            f"probs: expected a [B, N, N] tensor, got {getattr(probs, 'shape', probs)}"
        )
    check_finite("probs", probs, "pass edge probabilities, e.g. W(x_i, x_j) of a graphon")
    if probs.numel() and (float(probs.min()) < 0.0 or float(probs.max()) > 1.0):
        raise GraphDataError(
            f"probs: expected probabilities in [0, 1], got range [{float(probs.min()):.4g}, "
            f"{float(probs.max()):.4g}]; clip or rescale them"
        )
    if x is not None:
        check_finite("x", x)
    if mask is None:
        mask = torch.ones(probs.shape[:2], dtype=torch.bool, device=probs.device)
    keep = mask_product(mask, 2).unsqueeze(1).to(probs.dtype)  # [B, 1, N, N]
    branches = [
        dense_input(DenseGraphBatch(torch.full_like(probs, float(a)) * keep[:, 0], x, mask))
        for a in (0, 1)
    ]  # [B, 1 + F, N, N] each
    weight = probs.unsqueeze(1)  # [B, 1, N, N]: probability of branch 1
    act = ACTIVATIONS[model.activation]
    for layer in model.layers:
        mean = weight * branches[1] + (1 - weight) * branches[0]
        branches = [act(layer(h, mask, averaged=mean)) * keep for h in branches]
    mean = weight * branches[1] + (1 - weight) * branches[0]
    return model.finish(model.readout(mean, mask), mask)
