r"""Fused N3 kernels for :meth:`kg.base.KGEModel.regularization`.

Both compute :math:`\sum_u w_u \sum_i |x_{ui}|^3` (row weights :math:`w_u`, e.g. how often a
row occurs in a batch) with a hand-written gradient :math:`3 w_u |x_{ui}| x_{ui}` (real) or
:math:`3 w_u |z_{ui}| z_{ui}` per complex coordinate, the exact derivative (0 at 0). Autograd
through ``abs().pow(3)`` (or through ``torch.complex(...).abs()``) takes 2-3x longer: complex
``abs``/``sgn`` kernels, ``pow`` with a fractional exponent, and more temporaries.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

__all__ = ["n3_sum"]


class _RealCubes(torch.autograd.Function):
    """Weighted sum of ``|x|^3`` over the rows of a real tensor."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, weight: Tensor) -> Tensor:
        a = x.abs()
        ctx.save_for_backward(x, a, weight)
        return torch.dot(weight, (a * a * a).sum(-1))  # [U] row sums, weighted

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None]:
        x, a, weight = ctx.saved_tensors
        return (x * a).mul_((3 * grad * weight).unsqueeze(-1)), None


class _ComplexCubes(torch.autograd.Function):
    """Weighted sum of ``|z|^3`` over rows ``[re | im]`` of complex coordinates ``re + i im``."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, weight: Tensor) -> Tensor:
        re2, im2 = (x * x).chunk(2, dim=-1)
        squared = re2 + im2  # [U, m]: |z|^2
        modulus = squared.sqrt()
        ctx.save_for_backward(x, modulus, weight)
        return torch.dot(weight, (squared * modulus).sum(-1))  # sum_u w_u sum_i |z|^2 |z|

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None]:
        x, modulus, weight = ctx.saved_tensors
        # d|z|^3 / d re = 3 |z| re (and likewise im): both halves scale by 3 w |z|.
        scale = (modulus * (3 * grad * weight).unsqueeze(-1)).unsqueeze(-2)  # [U, 1, m]
        return (x.unflatten(-1, (2, -1)) * scale).flatten(-2), None  # [U, 2, m] -> [U, 2 m]


def n3_sum(x: Tensor, *, complex_rows: bool = False, row_weight: Tensor | None = None) -> Tensor:
    r"""Weighted sum of cubed moduli, the N3 norm (Lacroix et al., arXiv 1806.07297).

    .. math::
        \Omega(x) = \sum_u w_u \sum_i |x_{ui}|^3

    with :math:`|x_{ui}|` the absolute value of a real coordinate, or, with ``complex_rows``, the
    modulus :math:`\sqrt{\mathrm{re}_{ui}^2 + \mathrm{im}_{ui}^2}` of coordinate :math:`i` of row
    :math:`u` stored as ``[re | im]`` halves.

    Args:
        x: The embeddings, one per row (floating point, any device).
        complex_rows: Whether each row holds ``[re | im]`` halves. Default False.
        row_weight: :math:`w_u` per row; ``None`` (default) weighs every row 1.

    Returns:
        A differentiable scalar (in ``x``).

    Shapes:
        ``x: [U, m]`` (``[U, 2 m]`` with ``complex_rows``), ``row_weight: [U]`` -> ``[]``.

    Examples:
        >>> n3_sum(torch.tensor([[3.0, -1.0]]))
        tensor(28.)
        >>> n3_sum(torch.tensor([[3.0, 4.0]]), complex_rows=True)  # |3 + 4i| = 5
        tensor(125.)
        >>> n3_sum(torch.tensor([[1.0], [2.0]]), row_weight=torch.tensor([2.0, 0.5]))
        tensor(6.)
    """
    if row_weight is None:
        row_weight = x.new_ones(x.size(0))
    row_weight = row_weight.to(x.dtype)
    return _ComplexCubes.apply(x, row_weight) if complex_rows else _RealCubes.apply(x, row_weight)
