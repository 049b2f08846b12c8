"""The vMF log-normaliser: closed forms, quadrature, extreme arguments, gradients, devices."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import integrate, special

from graphdata.errors import GraphDataError
from spatial._bessel import iv_ratio, log_iv_scaled
from spatial.vmf import reference_log_partition_3d, vmf_log_partition, vmf_mean_resultant_length

mpmath = pytest.importorskip("mpmath")


def _quadrature_log_partition(kappa: float, d: int) -> float:
    """log int_{S^{d-1}} e^{kappa x_1} = log |S^{d-2}| int_{-1}^{1} e^{kt}(1-t^2)^{(d-3)/2} dt."""
    area = 2 * math.pi ** ((d - 1) / 2) / math.gamma((d - 1) / 2)
    # Scale by e^{-kappa} inside the integral so large kappa does not overflow.
    value, _ = integrate.quad(
        lambda t: math.exp(kappa * (t - 1)) * (1 - t * t) ** ((d - 3) / 2),
        -1,
        1,
        epsabs=0,
        epsrel=1e-12,
        limit=200,
    )
    return math.log(area * value) + kappa


def test_closed_form_d3_and_d2(device):
    kappa = torch.tensor([1e-8, 0.3, 1.0, 5.0, 19.0, 40.0], dtype=torch.float64, device=device)
    got3 = vmf_log_partition(kappa, 3)
    k = kappa.cpu().numpy()
    # log(4 pi sinh k / k), written stably as log(2 pi) + k + log1p(-e^{-2k}) - log k.
    want3 = np.log(2 * np.pi) + k + np.log(-np.expm1(-2 * k)) - np.log(k)
    assert got3.device == kappa.device and got3.dtype == torch.float64
    np.testing.assert_allclose(got3.cpu().numpy(), want3, rtol=1e-12)
    got2 = vmf_log_partition(kappa, 2).cpu().numpy()
    np.testing.assert_allclose(got2, np.log(2 * np.pi) + np.log(special.ive(0, k)) + k, rtol=1e-12)


def test_zero_concentration_is_log_surface_area():
    for d in (2, 3, 7, 50, 1000):
        area = math.log(2) + (d / 2) * math.log(math.pi) - math.lgamma(d / 2)
        got = float(vmf_log_partition(torch.zeros(1, dtype=torch.float64), d))
        assert got == pytest.approx(area, rel=1e-12)


@pytest.mark.parametrize("d", [4, 5, 10, 31])
@pytest.mark.parametrize("kappa", [0.1, 2.0, 30.0, 300.0])
def test_matches_numerical_quadrature(d, kappa):
    got = float(vmf_log_partition(torch.tensor([kappa], dtype=torch.float64), d))
    assert got == pytest.approx(_quadrature_log_partition(kappa, d), rel=1e-9)


@pytest.mark.parametrize(
    "d, kappa",
    [(3, 1e6), (10, 1e5), (2000, 0.5), (2000, 50.0), (2000, 5e3), (20000, 10.0), (400, 1e-7)],
)
def test_large_kappa_and_large_dimension_against_mpmath(d, kappa):
    mpmath.mp.dps = 40
    nu = d / 2 - 1
    want = (
        (d / 2) * mpmath.log(2 * mpmath.pi)
        + mpmath.log(mpmath.besseli(nu, kappa, maxterms=10**6))
        - nu * mpmath.log(kappa)
    )
    got = vmf_log_partition(torch.tensor([kappa], dtype=torch.float64), d)
    assert torch.isfinite(got).all()
    assert float(got) == pytest.approx(float(want), rel=1e-10)
    ratio = float(vmf_mean_resultant_length(torch.tensor([kappa], dtype=torch.float64), d))
    want_ratio = mpmath.besseli(nu + 1, kappa, maxterms=10**6) / mpmath.besseli(
        nu, kappa, maxterms=10**6
    )
    assert ratio == pytest.approx(float(want_ratio), rel=1e-10)


def test_underflow_regime_uses_asymptotics_consistently():
    # ive(999, 1) underflows to 0; the result must stay finite, smooth and monotone.
    nu = 999.0
    x = np.array([1e-3, 1.0, 10.0, 100.0, 500.0])
    assert special.ive(nu, x[:3]).max() == 0.0
    values = log_iv_scaled(nu, x)
    assert np.isfinite(values).all() and np.all(np.diff(values) > 0)
    ratios = iv_ratio(nu, x)
    assert np.all((ratios > 0) & (ratios < 1)) and np.all(np.diff(ratios) > 0)


@pytest.mark.parametrize("d", [2, 3, 10, 100, 2000])
def test_gradient_matches_finite_differences(d):
    kappa = torch.tensor([1e-3, 0.5, 3.0, 50.0, 1e4], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda k: vmf_log_partition(k, d), (kappa,))


def test_gradient_is_mean_resultant_length_d3():
    kappa = torch.tensor([0.5, 2.0, 10.0], dtype=torch.float64, requires_grad=True)
    vmf_log_partition(kappa, 3).sum().backward()
    k = kappa.detach()
    torch.testing.assert_close(kappa.grad, 1 / torch.tanh(k) - 1 / k)


def test_float32_input_keeps_dtype_and_device(device):
    kappa = torch.tensor([0.0, 1.0, 100.0], device=device)
    out = vmf_log_partition(kappa, 8)
    assert out.dtype == torch.float32 and out.device == kappa.device


def test_reference_compat_is_3d_formula_without_log_2pi():
    g = torch.tensor([0.5, 3.0, 19.0], dtype=torch.float64)
    torch.testing.assert_close(
        reference_log_partition_3d(g), vmf_log_partition(g, 3) - math.log(2 * math.pi)
    )
    # Above g = 20 the reference switches to the asymptote g - log g.
    big = torch.tensor([30.0], dtype=torch.float64)
    torch.testing.assert_close(reference_log_partition_3d(big), big - torch.log(big))
    assert torch.isfinite(reference_log_partition_3d(torch.zeros(1))).all()


def test_bad_input():
    with pytest.raises(GraphDataError, match="dim: expected .* >= 2"):
        vmf_log_partition(torch.ones(2), 1)
    with pytest.raises(GraphDataError, match="kappa: expected finite concentrations >= 0"):
        vmf_log_partition(torch.tensor([-1.0]), 3)
    with pytest.raises(GraphDataError, match="kappa: expected finite"):
        vmf_log_partition(torch.tensor([float("nan")]), 3)
