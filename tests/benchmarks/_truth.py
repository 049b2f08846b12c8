"""A shared oracle of the tissue simulators' tests: the energy's mixed derivatives are the truth.

A simulator module with ``draw_couplings``, ``site_parameters``, ``log_density`` and
``grad_log_density`` (Celcomen's sign convention, ``benchmarks.tissue_beads``) is checked on a
30-cell, 6-gene k-NN graph by central finite differences: within a cell the mixed derivative is
``2 W_intra``; across an edge ``j -> i`` without its reverse ``w_ij W_inter``, across a two-way
edge ``(w_ij + w_ji) W_inter``, between non-neighbours 0; and the gradient matches the energy's
difference quotients.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

from benchmarks.tissue_gibbs_pln import symmetric_adjacency
from benchmarks.tissue_metropolis import gcn_weights, knn_edges


def check_energy_truth(world: ModuleType) -> tuple[dict, np.ndarray]:
    """Assert the module docstring's oracle for ``world``'s energy; return its site and ``y``."""
    rng = np.random.default_rng(0)
    n, g = 30, 6
    edge_index = knn_edges(rng.random((n, 2)) * 6, 6)
    weight = gcn_weights(edge_index, n)
    w0, k0, _ = world.draw_couplings(g, rng)
    site = world.site_parameters(g, rng)
    y = 1.5 * rng.standard_normal((n, g))
    w_intra, w_inter = 0.1 * w0, 0.05 * k0

    def energy(v: np.ndarray) -> float:
        return world.log_density(v, edge_index, weight, site, w_intra, w_inter)

    def mixed(i: int, gi: int, j: int, gj: int, h: float = 1e-3) -> float:
        out = 0.0
        for si, sj in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
            v = y.copy()
            v[i, gi] += si * h
            v[j, gj] += sj * h
            out += si * sj * energy(v)
        return out / (4 * h * h)

    # within a cell: 2 W_intra, exactly (the site terms are separate per entry)
    for i, ga, gb in [(0, 0, 1), (4, 2, 5), (17, 3, 4), (29, 1, 3)]:
        assert mixed(i, ga, i, gb) == pytest.approx(2 * w_intra[ga, gb], abs=1e-6)
    w = {(int(j), int(i)): float(x) for (j, i), x in zip(edge_index.T, weight)}  # (src, dst)
    one_way = [(i, j) for (j, i) in w if (i, j) not in w]
    both = [(i, j) for (j, i) in w if (i, j) in w]
    assert one_way and both
    for i, j in one_way[:3]:  # edge j -> i only: w_ij W_inter
        for ga, gb in [(0, 0), (1, 4), (5, 2)]:
            assert mixed(i, ga, j, gb) == pytest.approx(w[(j, i)] * w_inter[ga, gb], abs=1e-6)
    for i, j in both[:3]:  # both directions: (w_ij + w_ji) W_inter
        for ga, gb in [(2, 2), (3, 0)]:
            expect = (w[(j, i)] + w[(i, j)]) * w_inter[ga, gb]
            assert mixed(i, ga, j, gb) == pytest.approx(expect, abs=1e-6)
    far = next(j for j in range(n) if (0, j) not in w and (j, 0) not in w and j != 0)
    assert mixed(0, 1, far, 2) == pytest.approx(0.0, abs=1e-6)
    # the gradient against the energy's difference quotients (away from any kink of the site)
    s = symmetric_adjacency(edge_index, weight, n)
    grad = world.grad_log_density(y, s, site, w_intra, w_inter)
    h = 1e-5
    for i, gene in [(0, 0), (7, 3), (29, 5), (12, 1)]:
        up, down = y.copy(), y.copy()
        up[i, gene] += h
        down[i, gene] -= h
        assert (energy(up) - energy(down)) / (2 * h) == pytest.approx(grad[i, gene], rel=1e-6)
    return site, y
