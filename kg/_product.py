r"""The 1-N score product of training, written into a kept buffer.

The dot-product models (DistMult, ComplEx, RESCAL, TuckER, ConvE) score a batch of queries
:math:`Q \in \mathbb{R}^{B \times d}` against the candidate rows
:math:`C \in \mathbb{R}^{E \times d}` as :math:`S = Q C^\top`, computed as :math:`(C Q^\top)^\top`
(``kg.base.KGEModel._dot_scores``). On FB15k-237 that is a fresh ``[B, E]`` tensor of 15-58 MB
per batch, and on a CPU each fresh block of that size is page-faulted in again (glibc returns
freed large blocks to the system): before this module a third of RESCAL's forward product went
to page faults. :func:`kept_product` writes :math:`C Q^\top` into a :class:`kg._distance.Workspace`
buffer kept from batch to batch; its backward is the matrix product's,

.. math::
    \frac{\partial L}{\partial C} = G^\top Q, \qquad \frac{\partial L}{\partial Q} = G C

for the gradient :math:`G = \partial L / \partial S`, and hands the buffer back. When :math:`C` is
the whole entity table and the table has a kept gradient buffer (:mod:`kg._rows`), :math:`G^\top
Q` is added into that buffer (``addmm_``) instead of a fresh ``[E, d]`` gradient (30 MB for
ComplEx's defaults), as the table's lookups add theirs. The trainer lends the workspace
(``KGEModel.score_workspace``) only while it trains, where each batch's scores are read by the
loss and dropped before the next batch.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from kg._distance import Workspace

__all__ = ["kept_product"]


class _KeptProduct(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any,
        candidates: Tensor,
        query: Tensor,
        bias: Tensor | None,
        workspace: Workspace | None,
        candidates_grad: Tensor | None,
    ) -> Tensor:
        buffers = None
        if workspace is not None:
            buffers = workspace.take(candidates.size(0), query.size(0), candidates)
        if buffers is None:  # no workspace, or lent to a graph still alive: our own tensor
            out = torch.mm(candidates, query.t())
            ctx.workspace = None
        else:
            out = torch.mm(candidates, query.t(), out=buffers[0])
            ctx.workspace = workspace
        if bias is not None:
            out.add_(bias.unsqueeze(1))  # [E, B] storage: one bias per storage row
        ctx.candidates_grad, ctx.has_bias = candidates_grad, bias is not None
        ctx.save_for_backward(candidates, query)
        return out.t()  # [B, E], stored as [E, B]

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
        candidates, query = ctx.saved_tensors
        grad_candidates = grad_bias = None
        if ctx.needs_input_grad[0]:
            if ctx.candidates_grad is not None:
                ctx.candidates_grad.addmm_(grad.t(), query)  # G^T Q into the kept buffer
            else:
                grad_candidates = grad.t().mm(query)
        grad_query = grad.mm(candidates) if ctx.needs_input_grad[1] else None
        if ctx.has_bias and ctx.needs_input_grad[2]:
            # sum over the queries as a matrix-vector product: ATen's sum over the first
            # dimension of a [B, E] tensor is several times slower on a CPU
            grad_bias = torch.mv(grad.t(), grad.new_ones(grad.size(0)))
        if ctx.workspace is not None:
            ctx.workspace.lent = False
        return grad_candidates, grad_query, grad_bias, None, None


def kept_product(
    candidates: Tensor,
    query: Tensor,
    workspace: Workspace | None,
    *,
    bias: Tensor | None = None,
    candidates_grad: Tensor | None = None,
) -> Tensor:
    r""":math:`S = Q C^\top + \mathbf 1 b^\top` (``[B, E]``, stored as ``[E, B]``), kept.

    Args:
        candidates: :math:`C`, ``[E, d]``.
        query: :math:`Q`, ``[B, d]``.
        workspace: A one-buffer :class:`kg._distance.Workspace`; while it is lent to a graph
            that has not run its backward, or when ``None``, the product takes a tensor of its
            own.
        bias: :math:`b`, one score offset per candidate ``[E]`` (ConvE's entity biases), added
            in place; its gradient is :math:`G^\top \mathbf 1`. Default ``None``: none.
        candidates_grad: A kept ``[E, d]`` gradient buffer of the table ``candidates`` is: the
            backward adds :math:`G^\top Q` into it and gives ``candidates`` no gradient.
            Default ``None``: an ordinary gradient.

    Returns:
        The scores, a view of the buffer until the backward pass has run.
    """
    if not torch.is_grad_enabled() or torch.is_autocast_enabled(candidates.device.type):
        product = torch.mm(candidates, query.t()).t()
        return product if bias is None else product + bias
    out: Tensor = _KeptProduct.apply(candidates, query, bias, workspace, candidates_grad)
    return out
