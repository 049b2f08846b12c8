"""Simulator: the Langevin sampler hits a closed-form stationary law; grids; couplings; seeds."""

from __future__ import annotations

import math

import pytest
import torch
from scipy import special

from graphdata.errors import GraphDataError
from graphdata.spatial import knn_graph
from spatial._messages import edge_weights
from spatial.model import CelcomenEnergy
from spatial.simulate import (
    hex_grid,
    langevin_sample,
    random_couplings,
    random_positions,
    simulate_tissue,
)


def test_langevin_matches_bingham_on_the_circle():
    # Independent cells on S^1 with p(theta) ~ exp(a cos^2 theta) = exp((a/2) cos 2 theta) * c:
    # E[cos^2 theta] = (1 + I_1(a/2) / I_0(a/2)) / 2.
    a = 3.0
    model = CelcomenEnergy(2)
    model.set_matrices(torch.tensor([[a, 0.0], [0.0, 0.0]]), torch.zeros(2, 2))
    no_edges = torch.zeros(2, 0, dtype=torch.long)
    x = langevin_sample(model, no_edges, torch.zeros(0), 4000, steps=600, step_size=0.01, seed=3)
    want = 0.5 * (1 + special.i1(a / 2) / special.i0(a / 2))
    # 4000 draws: standard error ~ 0.005; discretisation bias O(step) ~ 0.005.
    assert float(x[:, 0].square().mean()) == pytest.approx(want, abs=0.02)
    assert torch.allclose(x.norm(dim=1), torch.ones(4000))


def test_langevin_is_seeded(device):
    model = CelcomenEnergy(3).to(device)
    edges, _ = knn_graph(hex_grid(20), 3)
    w = torch.ones(edges.shape[1], device=device) / 3
    one = langevin_sample(model, edges.to(device), w, 20, steps=10, seed=5)
    two = langevin_sample(model, edges.to(device), w, 20, steps=10, seed=5)
    three = langevin_sample(model, edges.to(device), w, 20, steps=10, seed=6)
    assert torch.equal(one, two) and not torch.equal(one, three)
    assert one.device.type == device.type


def test_hex_grid_interior_points_have_six_unit_neighbours():
    coords = hex_grid(100, spacing=2.0)
    points = coords.double()
    dist = torch.cdist(points, points, compute_mode="donot_use_mm_for_euclid_dist")
    counts = ((dist > 0) & (dist < 2.0 + 1e-5)).sum(1)
    assert counts.max() == 6 and (counts == 6).sum() >= 50
    assert dist[dist > 0].min() == pytest.approx(2.0, rel=1e-6)


def test_random_positions_unit_density_and_seeded():
    pos = random_positions(400, seed=1)
    assert pos.min() >= 0 and pos.max() <= 20
    assert torch.equal(pos, random_positions(400, seed=1))


def test_random_couplings_are_distinct_signed_symmetric_with_given_norm():
    w_intra, w_inter = random_couplings(12, density=0.5, strength=4.0, seed=0)
    for w in (w_intra, w_inter):
        assert torch.equal(w, w.T) and torch.all(w.diagonal() == 0)
        assert (w > 0).any() and (w < 0).any()
        assert float(torch.linalg.matrix_norm(w, ord=2)) == pytest.approx(4.0, rel=1e-5)
    assert not torch.allclose(w_intra, w_inter)
    # default strength is G / 2
    assert float(torch.linalg.matrix_norm(random_couplings(8)[0], ord=2)) == pytest.approx(4.0)


def test_simulate_tissue_is_reproducible_and_uses_knn():
    one = simulate_tissue(60, 4, steps=30, seed=2)
    two = simulate_tissue(60, 4, steps=30, seed=2)
    assert torch.equal(one.x, two.x) and torch.equal(one.W_inter, two.W_inter)
    assert one.edge_index.shape == (2, 360)
    assert torch.equal(torch.bincount(one.edge_index[1]), torch.full((60,), 6))
    adata = one.to_anndata()
    assert adata.obsp["spatial_connectivities"].nnz == 360
    assert adata.varp["true_intra"].shape == (4, 4)
    assert math.isclose(float(abs(adata.X).max()), float(one.x.abs().max()), rel_tol=1e-6)


def test_simulate_tissue_takes_the_largest_seed_its_check_accepts():
    # check_seed accepts 2**64 - 1; the sampling stream's seed seed + 1 is taken modulo 2**64
    # (it was 2**64, which torch refuses). Oracle: the same Langevin run seeded with 0.
    seed = 2**64 - 1
    tissue = simulate_tissue(20, 3, steps=5, seed=seed)
    model = CelcomenEnergy(3)
    model.set_matrices(tissue.W_intra, tissue.W_inter)
    weight = edge_weights(tissue.edge_index, 20)
    x = langevin_sample(model, tissue.edge_index, weight, 20, steps=5, step_size=0.002, seed=0)
    assert torch.equal(tissue.x, x)
    with pytest.raises(
        GraphDataError, match=r"seed: expected an int in \[0, 18446744073709551615\]"
    ):
        simulate_tissue(20, 3, steps=5, seed=2**64)


def test_bad_input():
    with pytest.raises(GraphDataError, match="layout: expected 'hex' or 'random'"):
        simulate_tissue(20, 3, layout="grid")
    with pytest.raises(GraphDataError, match=r"density: expected a finite number > 0 and <= 1"):
        random_couplings(4, density=0.0)


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda: simulate_tissue(2**63), "n_cells"),
        (lambda: simulate_tissue(20, 2**63), "n_genes"),
        (lambda: simulate_tissue(20, 3, steps=2**63), "steps"),
        (lambda: hex_grid(2**63), "n_cells"),
        (lambda: random_positions(2**63), "n_cells"),
        (lambda: random_couplings(2**63), "n_genes"),
    ],
    ids=["tissue-cells", "tissue-genes", "tissue-steps", "hex_grid", "positions", "couplings"],
)
def test_sizes_past_the_memory_or_int64_are_refused_at_once(call, argument):
    # They used to overflow inside torch, or (steps) loop 2**63 times.
    with pytest.raises(GraphDataError, match=rf"^{argument}: expected an int in \[\d+, [\d,]+\]"):
        call()


def test_langevin_refuses_steps_and_cells_past_their_bounds():
    model, no_edges = CelcomenEnergy(2), torch.zeros(2, 0, dtype=torch.long)
    with pytest.raises(
        GraphDataError, match=r"^steps: expected an int in \[0, 9223372036854775807"
    ):
        langevin_sample(model, no_edges, torch.zeros(0), 5, steps=2**63)
    with pytest.raises(GraphDataError, match=r"^n_cells: expected an int in \[1, [\d,]+\], got"):
        langevin_sample(model, no_edges, torch.zeros(0), 2**62, steps=1)


def test_the_cell_bound_is_the_memory_over_the_bytes_per_cell(monkeypatch):
    # Oracle: per cell 4 B x 5 rows x G genes + 32 B (grid) + 16 B x k (int64 edges), so memory
    # for exactly 30 cells of 3 genes and 2 neighbours gives the bound 30.
    from graphdata import checks

    monkeypatch.setattr(checks, "physical_memory", lambda: 30 * (4 * 5 * 3 + 32 + 16 * 2))
    assert simulate_tissue(30, 3, n_neighbors=2, steps=1).x.shape == (30, 3)
    with pytest.raises(GraphDataError, match=r"^n_cells: expected an int in \[2, 30\], got 31"):
        simulate_tissue(31, 3, n_neighbors=2, steps=1)
