r"""Stable float64 NumPy numerics for the modified Bessel function :math:`I_\nu`, order >= 0.

Two quantities serve the von Mises-Fisher normaliser (:mod:`spatial.vmf`):

* :func:`log_iv_scaled` computes :math:`L_\nu(x) = \log I_\nu(x) - \nu \log x`, which is finite
  at :math:`x = 0` and is exactly the part of the log-normaliser that depends on :math:`x`;
* :func:`iv_ratio` computes :math:`R_\nu(x) = I_{\nu+1}(x) / I_\nu(x)`, the derivative of
  :math:`L_\nu` (from :math:`I_\nu' = I_{\nu+1} + (\nu/x) I_\nu`).

Three regimes, chosen per element:

* ``scipy.special.ive`` (:math:`I_\nu(x) e^{-x}`, never overflows) wherever it returns a normal
  float: :math:`\log I_\nu = \log \mathrm{ive} + x`;
* the power series for :math:`x < 10^{-6}`, where two terms are exact to double precision;
* the uniform (Debye) expansion of DLMF 10.41.3 with :math:`u_1 \dots u_4` where ``ive``
  underflows, which only happens for large orders (the expansion's relative error there is
  :math:`O(\nu^{-5})`), and the backward Gauss continued-fraction recurrence
  :math:`R_{\nu} = x / (2(\nu + 1) + x R_{\nu+1})` for the ratio, started from Amos' (1974)
  approximation 64 orders up; each step contracts the start error by about :math:`R^2 < 1`.
"""

from __future__ import annotations

import numpy as np
from scipy import special

__all__ = ["log_iv_scaled", "iv_ratio"]

#: ``ive`` results below this are treated as underflowed (denormal or zero).
_TINY = 1e-290
#: Below this argument the two-term power series is exact in float64.
_SMALL_X = 1e-6
#: Orders of backward recurrence for the ratio where ``ive`` underflows.
_RECURRENCE_STEPS = 64


def _debye_u(t: np.ndarray) -> list[np.ndarray]:
    """Polynomials u_1..u_4 of DLMF 10.41.10 evaluated at t = 1 / sqrt(1 + z^2)."""
    t2 = t * t
    u1 = t * (3.0 - 5.0 * t2) / 24.0
    u2 = t2 * (81.0 - 462.0 * t2 + 385.0 * t2 * t2) / 1152.0
    u3 = t * t2 * (30375.0 - 369603.0 * t2 + 765765.0 * t2**2 - 425425.0 * t2**3) / 414720.0
    u4 = (
        t2
        * t2
        * (
            4465125.0
            - 94121676.0 * t2
            + 349922430.0 * t2**2
            - 446185740.0 * t2**3
            + 185910725.0 * t2**4
        )
        / 39813120.0
    )
    return [u1, u2, u3, u4]


def _log_iv_scaled_debye(nu: float, x: np.ndarray) -> np.ndarray:
    r"""Uniform expansion of :math:`\log I_\nu(x) - \nu \log x` for large ``nu``.

    With :math:`z = x/\nu`, :math:`s = \sqrt{1+z^2}`:
    :math:`\log I_\nu(\nu z) = \nu(s + \log\frac{z}{1+s}) - \tfrac12\log(2\pi\nu s)
    + \log(1 + \sum_k u_k(1/s)/\nu^k)`. Subtracting :math:`\nu \log x` analytically
    (:math:`\log z - \log x = -\log \nu`) keeps it finite at :math:`x = 0`.
    """
    z = x / nu
    s = np.sqrt(1.0 + z * z)
    series = 1.0 + sum(u / nu ** (k + 1) for k, u in enumerate(_debye_u(1.0 / s)))
    return nu * (s - np.log1p(s) - np.log(nu)) - 0.5 * np.log(2.0 * np.pi * nu * s) + np.log(series)


def _log_iv_scaled_series(nu: float, x: np.ndarray) -> np.ndarray:
    r"""Two-term series :math:`I_\nu(x)/x^\nu = 2^{-\nu}(1 + x^2/(4(\nu+1)))/\Gamma(\nu+1)`."""
    return -nu * np.log(2.0) - special.gammaln(nu + 1.0) + np.log1p(x * x / (4.0 * (nu + 1.0)))


def log_iv_scaled(nu: float, x: np.ndarray) -> np.ndarray:
    r"""Return :math:`\log I_\nu(x) - \nu \log x` elementwise, stable for all ``x >= 0``.

    Args:
        nu: The order, ``>= 0``.
        x: Arguments, ``>= 0``, float64.

    Returns:
        Array of the shape of ``x``.

    Examples:
        >>> float(log_iv_scaled(0.5, np.array([1.0]))[0])  # I_1/2(x) = sqrt(2/(pi x)) sinh x
        -0.0643519...
    """
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    small = x < _SMALL_X
    out[small] = _log_iv_scaled_series(nu, x[small])
    rest = ~small
    xr = x[rest]
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = special.ive(nu, xr)
        ok = (scaled > _TINY) & np.isfinite(scaled)
        vals = np.where(ok, np.log(np.where(ok, scaled, 1.0)) + xr - nu * np.log(xr), 0.0)
    if not ok.all():
        # ive underflows only for large orders (x >= 1e-6 here), where Debye is accurate.
        vals[~ok] = _log_iv_scaled_debye(nu, xr[~ok])
    out[rest] = vals
    return out


def iv_ratio(nu: float, x: np.ndarray) -> np.ndarray:
    r"""Return :math:`I_{\nu+1}(x) / I_\nu(x)` elementwise, stable for all ``x >= 0``.

    Args:
        nu: The order, ``>= 0``.
        x: Arguments, ``>= 0``, float64.

    Returns:
        Array of the shape of ``x``, values in ``[0, 1)``.

    Examples:
        >>> round(float(iv_ratio(0.5, np.array([2.0]))[0]), 6)  # coth(2) - 1/2
        0.537315
    """
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    small = x < _SMALL_X
    xs = x[small]
    # Ratio of the two-term series: x/(2(nu+1)) * (1 + x^2/(4(nu+2))) / (1 + x^2/(4(nu+1))).
    out[small] = (
        xs
        / (2.0 * (nu + 1.0))
        * (1.0 + xs * xs / (4.0 * (nu + 2.0)))
        / (1.0 + xs * xs / (4.0 * (nu + 1.0)))
    )
    rest = ~small
    xr = x[rest]
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        lo, hi = special.ive(nu, xr), special.ive(nu + 1.0, xr)
        ok = (lo > _TINY) & (hi > _TINY) & np.isfinite(lo) & np.isfinite(hi)
        vals = np.where(ok, hi / np.where(ok, lo, 1.0), 0.0)
    if not ok.all():
        vals[~ok] = _ratio_recurrence(nu, xr[~ok])
    out[rest] = vals
    return out


def _ratio_recurrence(nu: float, x: np.ndarray) -> np.ndarray:
    """Backward recurrence of the Gauss continued fraction from an Amos start value."""
    top = nu + _RECURRENCE_STEPS
    # Amos (1974), Math. Comp. 28:239, eq. (16) middle bound: accurate start for large orders.
    ratio = x / (top + 0.5 + np.sqrt((top + 1.5) ** 2 + x * x))
    for k in range(_RECURRENCE_STEPS, 0, -1):
        order = nu + k - 1  # the ratio R_order from R_{order+1}
        ratio = x / (2.0 * (order + 1.0) + x * ratio)
    return ratio
