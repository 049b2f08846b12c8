r"""Dropout with its mask drawn from uniform variates instead of ``bernoulli_``.

Srivastava et al., "Dropout: A Simple Way to Prevent Neural Networks from Overfitting", JMLR
15, 2014: in training each element is kept with probability :math:`1 - p` and scaled by
:math:`1 / (1 - p)`,

.. math::
    \mathrm{D}_p(x)_i = x_i\, \frac{\mathbb{1}[u_i \ge p]}{1 - p}, \qquad u_i \sim U[0, 1),

and :math:`P(u_i \ge p) = 1 - p`, the Bernoulli mask of ``torch.nn.Dropout``. On a CPU
``bernoulli_`` draws element by element: 10.6 ms for TuckER's ``[256, 64, 64]`` core batch on
one core, against 4.7 ms for the uniform draw, the comparison and the product (a quarter of a
TuckER training step on FB15k-237, ``benchmarks/RESULTS.md``, issue 17). The same distribution,
another random stream.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["Dropout", "keep_mask"]


def keep_mask(shape: tuple[int, ...], p: float, like: Tensor) -> Tensor:
    r"""Keep multipliers :math:`\mathbb{1}[u \ge p] / (1 - p)`, :math:`u \sim U[0, 1)`, ``shape``.

    For ``0 < p < 1`` (module docstring); device and dtype from ``like``.
    """
    u = torch.rand(shape, device=like.device, dtype=like.dtype)
    return u.ge_(p).mul_(1.0 / (1.0 - p))


class Dropout(torch.nn.Dropout):
    """``torch.nn.Dropout`` (same arguments, no state) with a uniform-variate mask (module doc).

    Examples:
        >>> layer = Dropout(0.5).eval()
        >>> bool((layer(torch.ones(3)) == 1).all())
        True
    """

    def forward(self, input: Tensor) -> Tensor:
        r""":math:`\mathrm{D}_p(x)` in training (``p < 1``), ``x`` otherwise; zeros at ``p = 1``."""
        if not self.training or self.p == 0.0:
            return input
        if self.p >= 1.0:
            return input * 0.0
        mask = keep_mask(input.shape, self.p, input)
        if self.inplace:
            return input.mul_(mask)
        return input * mask
