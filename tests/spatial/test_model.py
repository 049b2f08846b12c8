"""The Celcomen energy against dense brute force; edge weights; local fields = autograd."""

from __future__ import annotations

import pytest
import torch

from graphdata.errors import GraphDataError
from spatial._messages import edge_weights
from spatial.model import CelcomenEnergy

# A tiny irregular directed graph: 0->1, 2->1, 3->1, 1->0, 2->0, 1->3; node 4 isolated.
EDGES = torch.tensor([[0, 2, 3, 1, 2, 1], [1, 1, 1, 0, 0, 3]])
N, G = 5, 3


def _dense_weights(normalization: str) -> torch.Tensor:
    """W[i, j] = w_ij for the edge j -> i, from the formulas written out by hand."""
    a = torch.zeros(N, N, dtype=torch.float64)
    a[EDGES[1], EDGES[0]] = 1.0
    d = a.sum(1)  # in-degree of the target = row sum
    d_safe = torch.where(d > 0, d, torch.ones_like(d))
    if normalization == "gcn":
        return a / torch.sqrt(d_safe[:, None] * d_safe[None, :])
    if normalization == "mean":
        return a / d_safe[:, None]
    return a


def _random_state(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(N, G, generator=gen, dtype=torch.float64)
    x = x / x.norm(dim=1, keepdim=True)
    p, q = (torch.randn(G, G, generator=gen, dtype=torch.float64) for _ in range(2))
    return x, p, q


@pytest.mark.parametrize("normalization", ["gcn", "mean", "none"])
def test_edge_weights_match_dense_formula(normalization):
    w = edge_weights(EDGES, N, normalization=normalization, dtype=torch.float64)
    dense = _dense_weights(normalization)
    torch.testing.assert_close(w, dense[EDGES[1], EDGES[0]])


def test_gcn_weight_of_source_without_in_edges_is_not_dropped():
    # 2 has no in-edges but sends to 0; gcn_norm would give it weight 0.
    w = edge_weights(torch.tensor([[2, 1], [0, 0]]), 3)
    assert torch.all(w > 0)
    torch.testing.assert_close(w, torch.full((2,), 2**-0.5))


@pytest.mark.parametrize("normalization", ["gcn", "mean", "none"])
def test_energy_matches_dense_brute_force(normalization, device):
    x, p, q = _random_state()
    model = CelcomenEnergy(G).to(device=device, dtype=torch.float64)
    model.set_matrices(p.to(device), q.to(device))
    w = edge_weights(EDGES.to(device), N, normalization=normalization, dtype=torch.float64)
    energy = model(x.to(device), EDGES.to(device), w).sum().cpu()
    a_intra, a_inter = (p + p.T) / 2, (q + q.T) / 2
    dense = _dense_weights(normalization)
    brute = sum(x[i] @ a_intra @ x[i] for i in range(N)) + sum(
        dense[i, j] * (x[i] @ a_inter @ x[j]) for i in range(N) for j in range(N)
    )
    torch.testing.assert_close(energy, brute)


def test_local_field_is_autograd_gradient():
    x, p, q = _random_state(1)
    model = CelcomenEnergy(G).double()
    model.set_matrices(p, q)
    w = edge_weights(EDGES, N, dtype=torch.float64)
    xr = x.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(model(xr, EDGES, w).sum(), xr)
    torch.testing.assert_close(model.local_field(x, EDGES, w), grad)


def test_matrices_are_symmetric_and_intra_trace_is_a_constant_on_the_sphere():
    x, p, q = _random_state(2)
    model = CelcomenEnergy(G).double()
    model.set_matrices(p, q)
    assert torch.equal(model.W_intra, model.W_intra.T)
    assert torch.equal(model.W_inter, model.W_inter.T)
    w = edge_weights(EDGES, N, dtype=torch.float64)
    before = model(x, EDGES, w).sum()
    model.set_matrices(p + 3.0 * torch.eye(G, dtype=torch.float64), q)
    torch.testing.assert_close(model(x, EDGES, w).sum(), before + 3.0 * N)


def test_isolated_cell_has_only_intracellular_energy():
    x, p, q = _random_state(3)
    model = CelcomenEnergy(G).double()
    model.set_matrices(p, q)
    w = edge_weights(EDGES, N, dtype=torch.float64)
    torch.testing.assert_close(model(x, EDGES, w)[4], x[4] @ model.W_intra @ x[4])


def test_bad_input():
    with pytest.raises(GraphDataError, match="n_genes: expected an integer >= 2"):
        CelcomenEnergy(1)
    with pytest.raises(GraphDataError, match=r"W_inter: expected a tensor of shape \(3, 3\)"):
        CelcomenEnergy(3).set_matrices(torch.zeros(3, 3), torch.zeros(2, 2))
    with pytest.raises(GraphDataError, match="normalization: expected one of"):
        edge_weights(EDGES, N, normalization="sym")
    assert repr(CelcomenEnergy(3)) == "CelcomenEnergy(n_genes=3)"
