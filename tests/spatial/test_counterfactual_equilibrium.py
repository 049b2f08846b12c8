"""The clamped mean-field counterfactual: the right fixed point, with no horizon to depend on."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from scipy import integrate, optimize
from scipy.special import iv

from graphdata.errors import GraphDataError
from graphdata.spatial import knn_graph
from spatial._messages import edge_weights, neighbour_operator
from spatial.counterfactual import simulate_intervention
from spatial.equilibrium import clamped_mean_field, conditional_mean, sampled_contrast
from spatial.model import CelcomenEnergy
from spatial.simulate import hex_grid, random_couplings

N, G = 49, 5


def _setup(device, *, strength: float = 1.0, seed: int = 0):
    # strength 1 (spectral norm of each matrix) keeps the mean field away from its critical
    # point 2 ||W_intra|| / G + ||S|| ||W_inter|| / G = 1, so it converges in tens of updates.
    edges, _ = knn_graph(hex_grid(N), 6)
    edges = edges.to(device)
    w_intra, w_inter = random_couplings(G, strength=strength, seed=seed)
    model = CelcomenEnergy(G).to(device)
    model.set_matrices(w_intra.to(device), w_inter.to(device))
    model.set_fields(torch.linspace(-0.5, 1.0, G).to(device), torch.full((G,), 0.2).to(device))
    gen = torch.Generator().manual_seed(seed)
    x = torch.rand(N, G, generator=gen).to(device) + 0.1
    cells = torch.zeros(N, dtype=torch.bool, device=device)
    cells[[17, 24]] = True
    return model, x, edges, edge_weights(edges, N), cells


def test_conditional_mean_matches_quadrature_on_the_clamped_circle():
    # G = 3, gene 0 clamped at c: the free part lives on the circle of radius sqrt(1 - c^2).
    c, h = 0.6, torch.tensor([0.7, -1.1, 2.3], dtype=torch.float64)
    r = math.sqrt(1 - c * c)

    def moment(k: int) -> float:
        def f(phi: float) -> float:
            y = (r * math.cos(phi), r * math.sin(phi))
            weight = math.exp(float(h[1]) * y[0] + float(h[2]) * y[1])
            return weight * (1.0 if k < 0 else y[k])

        return integrate.quad(f, 0, 2 * math.pi, epsabs=1e-13, epsrel=1e-13)[0]

    expected = [c, moment(0) / moment(-1), moment(1) / moment(-1)]
    clamp = torch.tensor([[True, False, False]])
    got = conditional_mean(
        h.unsqueeze(0), torch.tensor([[c, 0.0, 0.0]], dtype=torch.float64), clamp
    )
    np.testing.assert_allclose(got[0].numpy(), expected, rtol=1e-10, atol=1e-12)


def test_conditional_mean_closed_forms_without_clamp_and_with_one_free_coordinate():
    h = torch.tensor([[1.5, -2.0, 0.0], [0.3, 0.0, 0.0]], dtype=torch.float64)
    fixed = torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.8, 0.0]], dtype=torch.float64)
    clamp = torch.tensor([[False, False, False], [False, True, True]])
    got = conditional_mean(h, fixed, clamp)
    kappa = 2.5  # ||h_0||: S^2, A_3 = coth - 1/kappa along h
    np.testing.assert_allclose(
        got[0].numpy(), (1 / math.tanh(kappa) - 1 / kappa) * h[0].numpy() / kappa, rtol=1e-12
    )
    # one free coordinate on {-0.6, +0.6}: mean 0.6 tanh(0.6 * 0.3); clamped ones unchanged
    np.testing.assert_allclose(got[1].numpy(), [0.6 * math.tanh(0.18), 0.8, 0.0], rtol=1e-12)


def test_fixed_point_solves_the_mean_field_equations_as_scipy_root_does():
    model, x, edges, w, cells = _setup(torch.device("cpu"))
    start = torch.nn.functional.normalize(x, dim=1).double()
    clamped = torch.zeros(N, G, dtype=torch.bool)
    clamped[cells, 0] = True
    start[cells, 0] = 0.0
    start = torch.nn.functional.normalize(start, dim=1)
    out = clamped_mean_field(model, start, edges, w, clamped=clamped, tolerance=1e-12)
    assert out.converged and out.residual <= 1e-12 and out.iterations > 0
    model64 = CelcomenEnergy(G).double()
    model64.load_state_dict(model.state_dict())
    op = neighbour_operator(edges, w.double(), N).to_dense()
    strength = op.sum(1)

    def residual(flat: np.ndarray) -> np.ndarray:
        m = torch.from_numpy(flat.reshape(N, G))
        with torch.no_grad():
            field = model64.field_from(m, op @ m, strength)
        return (conditional_mean(field, start, clamped) - m).numpy().ravel()

    root = optimize.root(residual, start.numpy().ravel(), method="hybr", tol=1e-13)
    assert root.success
    np.testing.assert_allclose(out.mean64.numpy().ravel(), root.x, atol=1e-9)
    assert torch.equal(out.mean64[clamped], start[clamped])  # clamps exactly held


def test_effect_is_stable_past_convergence_and_independent_of_the_damping(device):
    model, x, edges, w, cells = _setup(device)
    base = simulate_intervention(model, x, edges, w, {0: 0.0}, cells, progress=False)
    assert base.method == "mean_field" and base.step_size is None
    protocol = base.protocol
    assert protocol["converged"] and protocol["residual"] <= protocol["tolerance"] == 1e-8
    k = protocol["iterations"]
    assert k > 0
    # iterate k and 2k updates past convergence (a tolerance never reached, then the cap)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        longer = [
            simulate_intervention(
                model, x, edges, w, {0: 0.0}, cells, tolerance=1e-300,
                max_iterations=protocol["sham_iterations"] + extra, progress=False,
            )
            for extra in (k, 2 * k)
        ]  # fmt: skip
    for other in longer:
        torch.testing.assert_close(other.delta, base.delta, atol=1e-7, rtol=0)
    for damping in (0.25, 0.9):
        other = simulate_intervention(
            model, x, edges, w, {0: 0.0}, cells, damping=damping, progress=False
        )
        assert other.protocol["iterations"] != k
        torch.testing.assert_close(other.delta, base.delta, atol=1e-7, rtol=0)
    assert float(base.delta[cells].abs().max()) > 1e-2  # a real effect, not a trivial zero


def test_gradient_effect_depends_on_the_horizon_but_the_equilibrium_has_none():
    model, x, edges, w, cells = _setup(torch.device("cpu"))
    far = lambda r: float(r.ring_mean[3].abs().mean())  # noqa: E731 - mean |effect| at ring 3
    short, long = (
        simulate_intervention(
            model, x, edges, w, {0: 0.0}, cells, method="gradient", steps=50, horizon=horizon
        )
        for horizon in (4.0, 40.0)
    )
    assert long.protocol == {"method": "gradient", "steps": 50, "step_size": long.step_size,
                             "horizon": 40.0}  # fmt: skip
    # ascent to the energy's mode: the far effect changes by a large factor with the horizon
    assert max(far(long), far(short)) > 10 * min(far(long), far(short))
    eq = simulate_intervention(model, x, edges, w, {0: 0.0}, cells)
    assert eq.protocol["converged"] and far(eq) > 0


def test_non_convergence_warns_with_the_residual_and_the_fix():
    model, x, edges, w, cells = _setup(torch.device("cpu"))
    with pytest.warns(RuntimeWarning, match=r"did not converge in 3 updates \(residual .*raise"):
        out = simulate_intervention(model, x, edges, w, {0: 0.0}, cells, max_iterations=3)
    assert out.protocol["converged"] is False and out.protocol["iterations"] == 3


def test_gradient_only_options_and_bad_settings_are_refused():
    model, x, edges, w, cells = _setup(torch.device("cpu"))
    for name, value, users in (
        ("steps", 50, "'langevin' or 'gradient'"),
        ("step_size", 0.01, "'langevin' or 'gradient'"),
        ("horizon", 4.0, "'gradient'"),
    ):
        with pytest.raises(GraphDataError, match=f"{name}: applies to method={users} only"):
            simulate_intervention(model, x, edges, w, {0: 0.0}, cells, **{name: value})
    with pytest.raises(GraphDataError, match="tolerance: applies to method='mean_field' only"):
        simulate_intervention(model, x, edges, w, {0: 0.0}, cells, method="langevin",
                              tolerance=1e-6)  # fmt: skip
    with pytest.raises(GraphDataError, match="method: expected one of"):
        simulate_intervention(model, x, edges, w, {0: 0.0}, cells, method="sampled")
    with pytest.raises(GraphDataError, match=r"damping: expected a finite number > 0 and <= 1"):
        simulate_intervention(model, x, edges, w, {0: 0.0}, cells, damping=1.5)
    with pytest.raises(GraphDataError, match="tolerance: expected a finite number > 0"):
        clamped_mean_field(model, x, edges, w, tolerance=0.0)
    with pytest.raises(GraphDataError, match="clamped: expected a boolean mask"):
        clamped_mean_field(model, x, edges, w, clamped=torch.zeros(N, G))


def test_closed_form_single_cell_with_a_field_only():
    # One cell, no couplings, field h on S^1 (G = 2) with gene 1 knocked out: the sham mean is
    # A_2(|h|) h / |h| restricted to its clamp; the knocked-out cell puts all mass on gene 0.
    model = CelcomenEnergy(2)
    model.set_matrices(torch.zeros(2, 2), torch.zeros(2, 2))
    model.set_fields(torch.tensor([1.0, 0.5]), torch.zeros(2))
    x = torch.tensor([[0.6, 0.8]], dtype=torch.float64)
    no_edges = torch.zeros(2, 0, dtype=torch.long)
    out = simulate_intervention(
        model.double(), x, no_edges, torch.zeros(0).double(), {1: 0.0}, torch.tensor([True])
    )
    # perturbed: gene 0 free on {-1, 1}: tanh(1); sham: gene 0 free on {-0.6, 0.6}, gene 1 = 0.8
    np.testing.assert_allclose(out.perturbed.numpy(), [[math.tanh(1.0), 0.0]], atol=1e-7)
    np.testing.assert_allclose(out.sham.numpy(), [[0.6 * math.tanh(0.6), 0.8]], atol=1e-7)


def test_sampled_means_match_the_von_mises_fisher_closed_forms():
    # 1000 independent cells (no edges), field h only, G = 3, gene 2 clamped at 0 (first chain:
    # the unit circle, mean A_2(k) h/k) and at 0.6 (second: radius 0.8, 0.8 A_2(0.8 k) h/k).
    n = 1000
    model = CelcomenEnergy(3).double()
    model.set_matrices(torch.zeros(3, 3), torch.zeros(3, 3))
    model.set_fields(torch.tensor([1.2, -0.9, 0.0]), torch.zeros(3))
    kappa = 1.5
    gen = torch.Generator().manual_seed(0)
    circle_start = torch.nn.functional.normalize(torch.randn(n, 2, generator=gen).double(), dim=1)
    clamped = torch.zeros(n, 3, dtype=torch.bool)
    clamped[:, 2] = True
    zeros = torch.zeros(n, 1, dtype=torch.float64)
    first = torch.cat([circle_start, zeros], 1)  # gene 2 clamped at 0
    second = torch.cat([0.8 * circle_start, zeros + 0.6], 1)  # gene 2 clamped at 0.6
    out = sampled_contrast(
        model, torch.stack([first, second]), torch.zeros(2, 0, dtype=torch.long),
        torch.zeros(0, dtype=torch.float64), clamped=clamped, steps=3000, burn_in=500,
        step_size=0.002, seed=1, progress=False,
    )  # fmt: skip
    h = torch.tensor([1.2, -0.9], dtype=torch.float64)
    circle = lambda r: r * iv(1, r * kappa) / iv(0, r * kappa) * h / kappa  # noqa: E731
    got = out.mean.mean(1)  # [2, G], averaged over the cells
    err = out.delta_stderr.mean(0) / math.sqrt(n)  # independent cells: s.e. of the cell average
    np.testing.assert_allclose(got[0, :2].numpy(), circle(1.0).numpy(), atol=0.02)
    np.testing.assert_allclose(got[1, :2].numpy(), circle(0.8).numpy(), atol=0.02)
    expected = (circle(1.0) - circle(0.8)).numpy()
    assert np.all(np.abs(out.delta.mean(0)[:2].numpy() - expected) < 6 * err[:2].numpy() + 5e-3)
    torch.testing.assert_close(out.mean[1, :, 2], second[:, 2], rtol=0, atol=1e-12)  # clamp


def test_langevin_method_zero_perturbation_is_exactly_zero_and_reports_its_error(device):
    model, x, edges, w, cells = _setup(device)
    x[cells, 1] = 0.0
    options = {"method": "langevin", "steps": 200, "burn_in": 20, "progress": False}
    same = simulate_intervention(model, x, edges, w, {1: 0.0}, cells, **options)
    assert torch.count_nonzero(same.delta) == 0 and torch.count_nonzero(same.ring_mean) == 0
    real = simulate_intervention(model, x, edges, w, {0: 0.0}, cells, **options)
    assert real.protocol == {"method": "langevin", "steps": 200, "burn_in": 20,
                             "step_size": 0.002, "seed": 0, "batches": 10}  # fmt: skip
    assert real.ring_stderr is not None and real.ring_stderr.shape == (4, G)
    assert float(real.ring_stderr[0].max()) > 0 and float(real.delta[cells].abs().max()) > 0
    again = simulate_intervention(model, x, edges, w, {0: 0.0}, cells, **options)
    assert torch.equal(again.delta, real.delta)  # seeded


def test_langevin_refuses_a_cell_with_one_free_coordinate():
    model = CelcomenEnergy(2)
    x = torch.tensor([[0.6, 0.8], [0.8, 0.6]])
    edges = torch.tensor([[0], [1]])
    with pytest.raises(GraphDataError, match="one free coordinate .* use the mean field"):
        simulate_intervention(
            model, x, edges, torch.ones(1), {0: 0.0}, torch.tensor([True, False]),
            method="langevin", steps=10,
        )  # fmt: skip


def test_stalled_iteration_halves_the_damping_and_keeps_the_fixed_point(monkeypatch):
    # One cell, G = 3, strong self-inhibition W_intra = -12 I: near M = 0 the undamped map has
    # Jacobian about 2 W / G = -8 I (A_3(k) ~ k / 3), so the damped update's eigenvalue
    # 1 - alpha (1 + 8) needs alpha < 2 / 9: alpha = 0.5 oscillates forever.
    model = CelcomenEnergy(3)
    model.set_matrices(-12.0 * torch.eye(3), torch.zeros(3, 3))
    model.set_fields(torch.tensor([0.3, 0.1, 0.0]), torch.zeros(3))
    x = torch.tensor([[0.2, 0.9, 0.4]])
    x = x / x.norm()
    no_edges, no_weights = torch.zeros(2, 0, dtype=torch.long), torch.zeros(0)
    adapted = clamped_mean_field(model, x, no_edges, no_weights, progress=False)
    assert adapted.converged and adapted.damping == 0.125  # halved twice, below 2 / 9
    small = clamped_mean_field(model, x, no_edges, no_weights, damping=0.02, progress=False)
    assert small.converged and small.damping == 0.02  # contracting: never halved
    torch.testing.assert_close(adapted.mean64, small.mean64, rtol=0, atol=1e-8)
    # The fixed point of the linearised map M = A_3(|h|) h / |h|, h = -24 M + h_intra, is
    # M ~ h_intra / (3 + 24) = (0.3, 0.1, 0) / 27.
    expected = torch.tensor([[0.3, 0.1, 0.0]], dtype=torch.float64) / 27
    torch.testing.assert_close(adapted.mean64, expected, rtol=1e-3, atol=1e-6)
    import spatial.equilibrium as equilibrium

    monkeypatch.setattr(equilibrium, "DAMPING_HALVINGS", 0)  # the fixed damping of before
    with pytest.warns(RuntimeWarning, match="did not converge"):
        fixed = clamped_mean_field(
            model, x, no_edges, no_weights, max_iterations=2000, progress=False
        )
    assert fixed.residual > 0.5  # a 2-cycle, not a slow approach
