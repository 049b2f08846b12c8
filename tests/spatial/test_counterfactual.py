"""Counterfactual relaxation: exact clamping, sham consistency, one hop per step, rings.

The gradient protocol (``method="gradient"``) and what both methods share; the mean-field
equilibrium's own properties are in test_counterfactual_equilibrium.py.
"""

from __future__ import annotations

import pytest
import torch

from graphdata.errors import GraphDataError
from graphdata.spatial import knn_graph
from spatial._messages import edge_weights, neighbour_operator
from spatial.counterfactual import (
    _operator_norm,
    auto_step_size,
    relax,
    ring_index,
    ring_summary,
    simulate_intervention,
)
from spatial.model import CelcomenEnergy
from spatial.simulate import hex_grid, random_couplings

N, G = 49, 5


def _setup(device, *, inter: bool = True, seed: int = 0):
    edges, _ = knn_graph(hex_grid(N), 6)
    edges = edges.to(device)
    w_intra, w_inter = random_couplings(G, seed=seed)
    model = CelcomenEnergy(G).to(device)
    model.set_matrices(w_intra.to(device), (w_inter if inter else torch.zeros(G, G)).to(device))
    gen = torch.Generator().manual_seed(seed)
    x = torch.rand(N, G, generator=gen).to(device) + 0.1  # non-negative expression
    return model, x, edges, edge_weights(edges, N)


def test_clamped_coordinates_stay_exactly_clamped(device):
    model, x, edges, w = _setup(device)
    start = torch.nn.functional.normalize(x, dim=1)
    clamped = torch.zeros(N, G, dtype=torch.bool, device=device)
    clamped[:5, 0] = True
    clamped[7, 1:3] = True
    out = relax(model, start, edges, w, clamped=clamped, steps=40, step_size=0.1)
    assert torch.equal(out[clamped], start[clamped])
    torch.testing.assert_close(out.norm(dim=1), torch.ones(N, device=device))
    assert not torch.allclose(out[~clamped], start[~clamped])


GRADIENT = {"method": "gradient", "steps": 30}


@pytest.mark.parametrize("options", [{}, GRADIENT], ids=["mean_field", "gradient"])
def test_knockout_value_is_held_at_zero(options, device):
    model, x, edges, w = _setup(device)
    cells = torch.zeros(N, dtype=torch.bool, device=device)
    cells[[10, 24]] = True
    result = simulate_intervention(model, x, edges, w, {2: 0.0}, cells, **options)
    assert torch.all(result.perturbed[cells, 2] == 0)
    assert torch.equal(result.clamped.any(1), cells)


@pytest.mark.parametrize("options", [{}, GRADIENT], ids=["mean_field", "gradient"])
def test_zero_perturbation_gives_exactly_zero_delta(options, device):
    model, x, edges, w = _setup(device)
    cells = torch.zeros(N, dtype=torch.bool, device=device)
    cells[[3, 30]] = True
    x[cells, 1] = 0.0
    result = simulate_intervention(model, x, edges, w, {1: 0.0}, cells, **options)
    assert torch.count_nonzero(result.delta) == 0
    assert torch.count_nonzero(result.ring_mean) == 0


# These couplings sit at the mean field's critical point (2 ||W_intra||_2 / G = 1), where
# the fixed-point iteration converges slowly: a looser tolerance keeps the test fast.
@pytest.mark.parametrize("options", [{"tolerance": 1e-5}, GRADIENT], ids=["mean_field", "gradient"])
def test_without_intercellular_coupling_effects_stay_in_the_perturbed_cells(options, device):
    model, x, edges, w = _setup(device, inter=False)
    cells = torch.zeros(N, dtype=torch.bool, device=device)
    cells[24] = True
    result = simulate_intervention(model, x, edges, w, {0: 0.0}, cells, **options)
    assert torch.count_nonzero(result.delta[~cells]) == 0
    assert torch.count_nonzero(result.delta[cells]) > 0


@pytest.mark.parametrize("steps", [1, 2])
def test_effects_travel_one_graph_hop_per_step(steps, device):
    model, x, edges, w = _setup(device)
    cells = torch.zeros(N, dtype=torch.bool, device=device)
    cells[24] = True
    result = simulate_intervention(
        model, x, edges, w, {0: 0.0}, cells, method="gradient", steps=steps
    )
    changed = (result.delta != 0).any(1)
    assert torch.equal(changed, result.ring <= steps)


def test_relaxation_increases_energy_monotonically():
    model, x, edges, w = _setup(torch.device("cpu"))
    state = torch.nn.functional.normalize(x, dim=1)
    energies = []
    for _ in range(5):
        energies.append(float(model(state, edges, w).sum().detach()))
        state = relax(model, state, edges, w, steps=1, step_size=0.01)
    assert all(b > a for a, b in zip(energies, energies[1:]))


def test_ring_index_and_summary_written_out():
    # path 0-1-2-3-4 plus an unreachable 5
    path = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 4]])
    ring = ring_index(path, torch.tensor([False, False, True, False, False, False]), 6)
    assert ring.tolist() == [2, 1, 0, 1, 2, 3]
    delta = torch.arange(12, dtype=torch.float32).reshape(6, 2)
    mean, size = ring_summary(delta, ring)
    assert size.tolist() == [1, 2, 2, 1]
    torch.testing.assert_close(
        mean, torch.tensor([[4.0, 5.0], [4.0, 5.0], [4.0, 5.0], [10.0, 11.0]])
    )


def test_knockout_of_the_only_expressed_gene_is_refused():
    model, x, edges, w = _setup(torch.device("cpu"))
    x[0] = torch.tensor([1.0, 0.0, 0.0, 0.0, 0.0])
    cells = torch.zeros(N, dtype=torch.bool)
    cells[0] = True
    with pytest.raises(GraphDataError, match="leaves 1 cells with zero expression"):
        simulate_intervention(model, x, edges, w, {0: 0.0}, cells)


def test_operator_norm_matches_the_dense_spectral_norm():
    model, x, edges, w = _setup(torch.device("cpu"))
    operator = neighbour_operator(edges, w, N)
    dense = torch.linalg.matrix_norm(operator.to_dense().double(), ord=2)
    assert _operator_norm(operator) == pytest.approx(float(dense), rel=1e-4)


def test_auto_step_size_is_the_horizon_over_steps_times_the_field_lipschitz_constant():
    model, x, edges, w = _setup(torch.device("cpu"))
    s_norm = torch.linalg.matrix_norm(neighbour_operator(edges, w, N).to_dense(), ord=2)
    lipschitz = 2 * torch.linalg.matrix_norm(
        model.W_intra.detach(), ord=2
    ) + s_norm * torch.linalg.matrix_norm(model.W_inter.detach(), ord=2)
    expected = 4.0 / (50 * float(lipschitz))
    assert auto_step_size(model, edges, w, N) == pytest.approx(expected, rel=1e-4)
    assert auto_step_size(model, edges, w, N, steps=25, horizon=2.0) == pytest.approx(
        expected, rel=1e-4
    )
    # the field really is L-Lipschitz: ||h(X) - h(Y)||_F <= L ||X - Y||_F
    gen = torch.Generator().manual_seed(1)
    a, b = torch.randn(N, G, generator=gen), torch.randn(N, G, generator=gen)
    op = neighbour_operator(edges, w, N)
    with torch.no_grad():
        s = (op @ torch.ones(N, 1)).squeeze(-1)
        gap = (model.field_from(a, op @ a, s) - model.field_from(b, op @ b, s)).norm()
    assert float(gap) <= float(lipschitz) * float((a - b).norm()) * (1 + 1e-5)


def test_automatic_step_makes_the_effect_invariant_to_rescaling_the_couplings(device):
    model, x, edges, w = _setup(device)
    stronger = CelcomenEnergy(G).to(device)
    stronger.set_matrices(3.0 * model.W_intra.detach(), 3.0 * model.W_inter.detach())
    cells = torch.zeros(N, dtype=torch.bool, device=device)
    cells[24] = True
    weak = simulate_intervention(model, x, edges, w, {0: 0.0}, cells, **GRADIENT)
    strong = simulate_intervention(stronger, x, edges, w, {0: 0.0}, cells, **GRADIENT)
    assert strong.step_size == pytest.approx(weak.step_size / 3.0, rel=1e-4)
    torch.testing.assert_close(strong.delta, weak.delta, atol=1e-5, rtol=1e-4)
    fixed = simulate_intervention(
        stronger, x, edges, w, {0: 0.0}, cells, **GRADIENT, step_size=weak.step_size
    )
    assert fixed.step_size == weak.step_size
    assert not torch.allclose(fixed.delta, weak.delta, atol=1e-3)


def test_non_positive_step_size_is_refused():
    model, x, edges, w = _setup(torch.device("cpu"))
    cells = torch.zeros(N, dtype=torch.bool)
    cells[3] = True
    with pytest.raises(GraphDataError, match="step_size: expected a finite number > 0"):
        simulate_intervention(model, x, edges, w, {0: 0.0}, cells, method="gradient", step_size=0.0)
    with pytest.raises(GraphDataError, match="horizon: expected a finite number > 0"):
        auto_step_size(model, edges, w, N, horizon=-1.0)
