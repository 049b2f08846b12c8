"""Objectives: mean-field consistency with the energy's weighting, score matching by quadrature."""

from __future__ import annotations

import math

import pytest
import torch

from spatial._messages import edge_weights
from spatial.model import CelcomenEnergy
from spatial.objectives import (
    Neighbourhood,
    mean_field_fields,
    mean_field_terms,
    reference_terms,
    score_matching_terms,
)
from spatial.vmf import reference_log_partition_3d

# Irregular directed graph: in-degrees (1, 3, 0, 1, 0), node 4 isolated.
EDGES = torch.tensor([[0, 2, 3, 1, 2, 1], [1, 1, 1, 0, 0, 3]])
N, G = 5, 4


def _model(seed: int) -> CelcomenEnergy:
    gen = torch.Generator().manual_seed(seed)
    model = CelcomenEnergy(G).double()
    model.set_matrices(*(torch.randn(G, G, generator=gen, dtype=torch.float64) for _ in range(2)))
    return model


@pytest.mark.parametrize("normalization", ["gcn", "mean", "none"])
def test_mean_field_field_is_the_energy_gradient_at_the_mean(normalization):
    # Linearising E at x_i = mu must use the same edge weights as E itself (REFERENCES C.2 #2):
    # the mean-field field equals the exact local field of the state with every row = mu.
    model = _model(0)
    w = edge_weights(EDGES, N, normalization=normalization, dtype=torch.float64)
    mu = torch.tensor([0.5, -0.1, 0.7, 0.2], dtype=torch.float64)
    state = mu.expand(N, G).clone()
    nb = Neighbourhood.from_graph(state, EDGES, w)
    torch.testing.assert_close(mean_field_fields(model, nb), model.local_field(state, EDGES, w))
    # and log Z_MF - E at that state is sum_i zeta(|h_i|) - 2 E(M) (linearisation is exact there)
    from spatial.vmf import vmf_log_partition

    energy = model(state, EDGES, w).sum()
    zeta = vmf_log_partition(mean_field_fields(model, nb).norm(dim=1), G).sum()
    torch.testing.assert_close(mean_field_terms(model, state, nb).sum(), zeta - 2 * energy)


def test_reference_field_disagrees_with_normalised_energy():
    # The reference uses k * W_inter with raw k while its energy uses 1/sqrt(d_i d_j) weights.
    model = _model(1)
    w = edge_weights(EDGES, N, dtype=torch.float64)
    mu = torch.tensor([0.5, -0.1, 0.7, 0.2], dtype=torch.float64)
    state = mu.expand(N, G).clone()
    k = EDGES.shape[1] / N
    reference_field = (k * model.W_inter + 2 * model.W_intra) @ mu
    assert not torch.allclose(reference_field.expand(N, G), model.local_field(state, EDGES, w))


def test_mean_field_at_zero_couplings_is_log_sphere_area():
    model = CelcomenEnergy(G).double()
    x = torch.nn.functional.normalize(torch.randn(N, G, dtype=torch.float64), dim=1)
    nb = Neighbourhood.from_graph(x, EDGES, edge_weights(EDGES, N, dtype=torch.float64))
    area = math.log(2 * math.pi ** (G / 2) / math.gamma(G / 2))
    torch.testing.assert_close(
        mean_field_terms(model, x, nb).sum(), torch.tensor(N * area, dtype=torch.float64)
    )


def test_reference_terms_written_out():
    model = _model(2)
    x = torch.nn.functional.normalize(torch.randn(N, G, dtype=torch.float64), dim=1)
    w = edge_weights(EDGES, N, dtype=torch.float64)
    nb = Neighbourhood.from_graph(x, EDGES, w)
    k, mu = EDGES.shape[1] / N, x.mean(0)
    a, b = model.W_intra, model.W_inter
    g = torch.linalg.norm((k * b + 2 * a) @ mu)
    log_z = N * reference_log_partition_3d(g) - N * mu @ (a + 0.5 * k * b) @ mu
    energy = model(x, EDGES, w).sum()
    torch.testing.assert_close(reference_terms(model, x, nb, beta=0.1).sum(), log_z - 0.1 * energy)


@pytest.mark.parametrize("terms", [mean_field_terms, score_matching_terms, reference_terms])
def test_batch_rows_equal_full_rows(terms):
    model = _model(3)
    x = torch.nn.functional.normalize(torch.randn(N, G, dtype=torch.float64), dim=1)
    nb = Neighbourhood.from_graph(x, EDGES, edge_weights(EDGES, N, dtype=torch.float64))
    cells = torch.tensor([4, 1, 3])
    torch.testing.assert_close(terms(model, x[cells], nb.rows(cells)), terms(model, x, nb)[cells])


def test_score_matching_invariant_to_intra_trace():
    model = _model(4)
    x = torch.nn.functional.normalize(torch.randn(N, G, dtype=torch.float64), dim=1)
    nb = Neighbourhood.from_graph(x, EDGES, edge_weights(EDGES, N, dtype=torch.float64))
    before = score_matching_terms(model, x, nb)
    model.set_matrices(model.W_intra + 2.5 * torch.eye(G, dtype=torch.float64), model.W_inter)
    torch.testing.assert_close(score_matching_terms(model, x, nb), before)


def _sphere_grid(n_theta: int = 240, n_phi: int = 480) -> tuple[torch.Tensor, torch.Tensor]:
    """Midpoint quadrature nodes on S^2 ``[n_theta n_phi, 3]`` and their weights sin(theta)."""
    theta = (torch.arange(n_theta, dtype=torch.float64) + 0.5) * math.pi / n_theta
    phi = torch.arange(n_phi, dtype=torch.float64) * 2 * math.pi / n_phi
    t, f = torch.meshgrid(theta, phi, indexing="ij")
    x = torch.stack([t.sin() * f.cos(), t.sin() * f.sin(), t.cos()], -1).reshape(-1, 3)
    return x, t.sin().reshape(-1)


def test_score_matching_is_stationary_at_the_truth_by_quadrature():
    # One cell on S^2 with p(x) ~ exp(x^T A x) (Bingham). The population score-matching
    # objective E_p[J(W)] must have zero gradient at W = A; quadrature on a (theta, phi) grid.
    x, area = _sphere_grid()
    truth = torch.tensor(
        [[1.5, 0.8, -0.4], [0.8, -0.5, 0.3], [-0.4, 0.3, 0.2]], dtype=torch.float64
    )
    density = area * torch.exp((x @ truth * x).sum(1))
    density = density / density.sum()
    no_edges = torch.zeros(2, 0, dtype=torch.long)
    nb = Neighbourhood.from_graph(x, no_edges, torch.zeros(0, dtype=torch.float64))

    def gradient(w_intra):
        model = CelcomenEnergy(3).double()
        model.set_matrices(w_intra, torch.zeros(3, 3, dtype=torch.float64))
        objective = (density * score_matching_terms(model, x, nb)).sum()
        return torch.autograd.grad(objective, model.intra_raw)[0]

    at_truth = gradient(truth).abs().max()
    elsewhere = gradient(truth + 0.3 * torch.eye(3, dtype=torch.float64).flip(0)).abs().max()
    assert at_truth < 1e-3 * elsewhere  # quadrature error ~1e-5; a wrong Laplacian gives ~0.1
    assert elsewhere > 0.05


def test_score_matching_with_fields_is_stationary_at_the_truth_by_quadrature():
    # One cell on S^2 with p(x) ~ exp(x^T A x + h^T x) (Fisher-Bingham). The Laplacian of the
    # linear part is -(G - 1) h^T x (a degree-1 harmonic), which score_matching_terms takes
    # through the radial field: the population gradient in (W_intra, h_intra) must vanish at
    # the truth, and only there.
    x, area = _sphere_grid()
    truth = torch.tensor(
        [[1.5, 0.8, -0.4], [0.8, -0.5, 0.3], [-0.4, 0.3, 0.2]], dtype=torch.float64
    )
    field = torch.tensor([2.0, -1.0, 0.5], dtype=torch.float64)
    density = area * torch.exp((x @ truth * x).sum(1) + x @ field)
    density = density / density.sum()
    no_edges = torch.zeros(2, 0, dtype=torch.long)
    nb = Neighbourhood.from_graph(x, no_edges, torch.zeros(0, dtype=torch.float64))
    zero = torch.zeros(3, dtype=torch.float64)

    def gradient(w_intra, h_intra):
        model = CelcomenEnergy(3).double()
        model.set_matrices(w_intra, torch.zeros(3, 3, dtype=torch.float64))
        model.set_fields(h_intra, zero)
        objective = (density * score_matching_terms(model, x, nb)).sum()
        grads = torch.autograd.grad(objective, [model.intra_raw, model.h_intra])
        return max(float(g.abs().max()) for g in grads)

    at_truth = gradient(truth, field)
    wrong_field = gradient(truth, 0.8 * field)
    wrong_sign = gradient(truth, -field)
    assert at_truth < 1e-3 * min(wrong_field, wrong_sign)
    assert wrong_field > 0.05
