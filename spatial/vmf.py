r"""The von Mises-Fisher log-normaliser on :math:`S^{d-1}`, stable and differentiable.

The mean-field partition function of Celcomen (Megas et al., "Celcomen: spatial causal
disentanglement for single-cell and tissue perturbation modeling", arXiv:2409.05804) integrates
:math:`\exp(h^\top x)` over the unit sphere of gene space. For :math:`d` genes,

.. math::
    \zeta_d(g) = \log \int_{S^{d-1}} e^{h^\top x}\, d\sigma(x)
    = \tfrac{d}{2} \log 2\pi + \log I_\nu(g) - \nu \log g,
    \qquad \nu = \tfrac{d}{2} - 1,\quad g = \lVert h \rVert,

with :math:`\sigma` the surface measure and :math:`I_\nu` the modified Bessel function of the
first kind (Mardia & Jupp, *Directional Statistics*, 2000, eq. 9.3.4). At :math:`g = 0` it is the
log surface area :math:`\log(2\pi^{d/2}/\Gamma(d/2))`; :math:`d = 3` gives
:math:`\log(4\pi \sinh g / g)` and :math:`d = 2` gives :math:`\log(2\pi I_0(g))`. Its derivative
is the mean resultant length :math:`A_d(g) = I_{d/2}(g) / I_{d/2-1}(g)`.

The reference implementation (Teichlab/celcomen) uses the 3-D formula for every :math:`d`,
which is the normaliser of :math:`S^2` only; :func:`reference_log_partition_3d` keeps it as a
"compat" mode for the reference protocol.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch.autograd.function import FunctionCtx, once_differentiable

from graphdata.errors import GraphDataError
from spatial._bessel import iv_ratio, log_iv_scaled

__all__ = ["vmf_log_partition", "vmf_mean_resultant_length", "reference_log_partition_3d"]


def _check_dim(dim: int) -> int:
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 2:
        raise GraphDataError(
            f"dim: expected the sphere's ambient dimension, an integer >= 2 (the number of "
            f"genes), got {dim!r}"
        )
    return int(dim)


def _to_host(kappa: Tensor) -> np.ndarray:
    # float64 on the host: scipy evaluates the Bessel functions; the result goes back to the
    # input's device and dtype, so callers never see a device move.
    return kappa.detach().to(device="cpu", dtype=torch.float64).numpy()


class _VMFLogPartition(torch.autograd.Function):
    """zeta_d(kappa) with the analytic derivative I_{nu+1}/I_nu (first order only)."""

    @staticmethod
    def forward(ctx: FunctionCtx, kappa: Tensor, dim: int) -> Tensor:  # noqa: D102
        nu = dim / 2.0 - 1.0
        host = _to_host(kappa)
        value = 0.5 * dim * math.log(2.0 * math.pi) + log_iv_scaled(nu, host.ravel())
        ratio = iv_ratio(nu, host.ravel())
        ctx.save_for_backward(torch.as_tensor(ratio.reshape(host.shape)).to(kappa))
        return torch.as_tensor(value.reshape(host.shape)).to(kappa)

    # ctx is Any: at run time it is torch's BackwardCFunction, whose ``saved_tensors`` the
    # FunctionCtx stub does not declare.
    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad_output: Tensor) -> tuple[Tensor, None]:  # noqa: D102
        (ratio,) = ctx.saved_tensors
        return grad_output * ratio, None


def vmf_log_partition(kappa: Tensor, dim: int) -> Tensor:
    r"""Log-normaliser :math:`\zeta_d(\kappa)` of the von Mises-Fisher distribution on S^(d-1).

    .. math::
        \zeta_d(\kappa) = \log \int_{S^{d-1}} e^{\kappa\, \mu^\top x}\, d\sigma(x)
        = \tfrac{d}{2} \log 2\pi + \log I_\nu(\kappa) - \nu \log \kappa,
        \qquad \nu = \tfrac{d}{2} - 1,

    so the density is :math:`e^{\kappa \mu^\top x - \zeta_d(\kappa)}` for :math:`\lVert\mu\rVert
    = 1`. Evaluated in float64 on the host (``scipy.special.ive``, uniform asymptotics where it
    underflows, see :mod:`spatial._bessel`), accurate to about 1e-12 relative for every
    :math:`\kappa \ge 0` and :math:`d`; the gradient is
    :math:`\partial \zeta_d / \partial\kappa = I_{\nu+1}(\kappa)/I_\nu(\kappa)`, first order only.

    Args:
        kappa: Concentrations :math:`\kappa \ge 0`, any shape, floating point, any device.
        dim: The ambient dimension :math:`d \ge 2` (the number of genes).

    Returns:
        :math:`\zeta_d(\kappa)`, same shape, dtype and device as ``kappa``.

    Raises:
        GraphDataError: If ``dim < 2`` or ``kappa`` has negative or non-finite entries.

    Examples:
        >>> k = torch.tensor([0.0, 2.0], dtype=torch.float64)
        >>> vmf_log_partition(k, 3)  # log(4 pi), log(4 pi sinh 2 / 2)
        tensor([2.5310, 3.1262], dtype=torch.float64)
    """
    dim = _check_dim(dim)
    if not torch.is_floating_point(kappa):
        raise GraphDataError(f"kappa: expected a floating-point tensor, got {kappa.dtype}")
    if not bool(torch.isfinite(kappa).all()) or bool((kappa < 0).any()):
        raise GraphDataError(
            "kappa: expected finite concentrations >= 0 (norms of local fields), got negative "
            "or non-finite values; check the interaction matrices for NaN or overflow"
        )
    return _VMFLogPartition.apply(kappa, dim)


def vmf_mean_resultant_length(kappa: Tensor, dim: int) -> Tensor:
    r"""Mean resultant length :math:`A_d(\kappa) = I_{d/2}(\kappa) / I_{d/2-1}(\kappa)`.

    .. math::
        A_d(\kappa) = \frac{d\, \zeta_d}{d\kappa} = \frac{I_{d/2}(\kappa)}{I_{d/2-1}(\kappa)}
        = \lVert \mathbb{E}_{\mathrm{vMF}(\mu, \kappa)}[x] \rVert.

    Args:
        kappa: Concentrations :math:`\kappa \ge 0`, any shape, any device.
        dim: The ambient dimension :math:`d \ge 2`.

    Returns:
        Values in ``[0, 1)``, same shape, dtype and device as ``kappa`` (not differentiable).

    Examples:
        >>> vmf_mean_resultant_length(torch.tensor([2.0], dtype=torch.float64), 3)  # coth 2 - 1/2
        tensor([0.5373], dtype=torch.float64)
    """
    dim = _check_dim(dim)
    ratio = iv_ratio(dim / 2.0 - 1.0, _to_host(kappa).ravel())
    return torch.as_tensor(ratio.reshape(tuple(kappa.shape))).to(kappa)


def reference_log_partition_3d(kappa: Tensor) -> Tensor:
    r"""The reference implementation's normaliser: 3-D, without :math:`\log 2\pi`, hard switch.

    Kept only as the "compat" mode of the reference protocol (Teichlab/celcomen
    ``celcomen.z_interaction``); it is wrong for any number of genes other than 3 and is off by
    the constant :math:`\log 2\pi` there.

    .. math::
        \zeta^{\mathrm{ref}}(g) = \begin{cases} \log(2 \sinh g / g) & g \le 20 \\
        g - \log g & g > 20 \end{cases}

    The reference evaluates :math:`(e^g - e^{-g})/g`, which is NaN at :math:`g = 0`; here
    :math:`g` is floored at 1e-12 so the limit :math:`\log 2` comes out instead.

    Args:
        kappa: Norms :math:`g \ge 0`, any shape and device.

    Returns:
        :math:`\zeta^{\mathrm{ref}}(g)`, differentiable with torch autograd.

    Examples:
        >>> reference_log_partition_3d(torch.tensor([1.0, 30.0]))
        tensor([ 0.8546, 26.5988])
    """
    g = kappa.clamp(min=1e-12)
    small = torch.log(torch.expm1(2.0 * g.clamp(max=20.0)) / g) - g.clamp(max=20.0)
    return torch.where(g > 20.0, g - torch.log(g), small)
