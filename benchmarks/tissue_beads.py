r"""An eighth tissue simulator: a bead array (Slide-seq-like), where one observation mixes cells.

The held-out world of ``bench_celcomen_counts --world beads`` (session 22), written by a helper
who did not read the library's Celcomen code (``spatial/celcomen.py``, ``_inputs.py``,
``objectives.py``, ``_solver.py``, ``model.py``) and never fitted it on this world. Unlike the
other seven, **the observations are not the cells**: cells (which carry the latent state) are
disjoint discs of a 2-D hard-core point process, and the observations are 10 um **beads** in a
disordered close packing that each capture transcripts from the 1-3 cells they overlap. Neither
``spatial.simulate`` nor ``spatial.model`` is imported.

**Layout** (:func:`bead_array`, :func:`mixing_weights`; units um). A square of side ``L``.
*Cells*: discs of radius :math:`U(5, 9)` (0.8 of the area), centres
uniform then relaxed (:func:`_relax`: each disc pushed off every overlapping one by half the
overlap, 150 rounds, kept in the square; residual overlaps of a few um), a jammed tissue; cell
types (5) are Voronoi domains of seeds at 1 per 20,000 um^2, each domain's type uniform.
*Beads*: radius :math:`\rho = 5`, uniform centres relaxed the same way at packing fraction 0.78
(``1.3 N`` beads at first; 2-D random close packing is about 0.82-0.84; nearest-neighbour
distances 9-10 um). *Mixing*: bead ``b`` overlaps cell ``c`` by the lens area
:math:`A_{bc}` of two discs; the 3 cells of largest overlap are kept (a fourth, on about 4 % of
the beads, holds about 0.1 % of the overlap), :math:`a_{bc} = A_{bc} / \sum_{c'} A_{bc'}` (the
**mixing weights**, rows summing to 1) and :math:`f_b = \sum_c A_{bc} / (\pi \rho^2)` the
bead's **covered fraction**. Beads covered less than 20 % are dropped (a UMI threshold would drop
them); the ``N`` kept are those nearest the square's centre (a round puck), ``L`` grown until
``N`` are found.

**Graphs.** The energy lives on the *cells*: directed k-NN on cell centres (k = 6), edges
:math:`j \to i`, GCN weights :math:`w_{ij} = 1/\sqrt{d_i d_j} = 1/6`. The bench fits on the
*beads*: ``edge_index`` / ``edge_weight`` and ``obsm['spatial']`` are the beads' (k-NN, k = 6,
GCN weights; ``spatial_neighbors_knn`` rebuilds it). **The truth stays the cell-level energy's**
``W_intra`` and ``W_inter``: bead mixing is a nuisance of real bead arrays (a bead's profile is a
weighted average of neighbouring cells' profiles, so within-bead gene-gene covariance picks up
cross-cell terms and neighbouring beads share cells), which a fit on beads must see through.

**Latent field.** :math:`Y \in \mathbb R^{C \times G}` over the ``C`` cells, :math:`p \propto
e^E`,

.. math::
    E(Y) = \sum_i \Big[\sum_g \phi_g(y_{ig}) + y_i^\top W_{\mathrm{intra}}\, y_i\Big]
        + \sum_i \sum_{j \to i} w_{ij}\, y_i^\top W_{\mathrm{inter}}\, y_j, \qquad
    \phi_g(t) = -\tfrac{\lambda_g}{2} t^2 + \log \Phi\Big(\alpha_g \frac{t - o_g}{s_g}\Big),

a **skew-normal site potential** (:math:`\Phi` the standard normal cdf; :math:`\lambda_g \sim
U(0.5, 1)`, skewness :math:`\alpha_g = \pm U(2, 6)`, :math:`s_g \sim U(0.7, 1.3)`, :math:`o_g
\sim U(-0.3, 0.3)`): one soft flank and one steep wall (:math:`\log\Phi(z) \approx -z^2/2` as
:math:`z \to -\infty`, :math:`\to 0` as :math:`z \to \infty`), log-concave per entry. This is
Celcomen's quadratic energy plus per-entry site terms, so the truth is the two matrices:
:math:`\partial^2 E / \partial y_{ig} \partial y_{ih} = 2 (W_{\mathrm{intra}})_{gh}` and
:math:`\partial^2 E / \partial y_{ig} \partial y_{jh} = w_{ij} (W_{\mathrm{inter}})_{gh}`.
``W_intra`` (symmetric, zero diagonal) lives on a **Watts-Strogatz** gene graph (ring lattice of
degree 4, each edge's far end rewired with probability 0.2), signs positive with probability
0.6, magnitudes :math:`U(0.5, 1)`. ``W_inter`` (symmetric): :math:`\lceil G/3 \rceil` random
gene pairs off the WS graph, signs :math:`\pm` (1/2), magnitudes :math:`U(0.4, 1)`, and a
**signed diagonal**: :math:`U(0.3, 1)` for 60 % of the genes, :math:`-U(0.3, 0.8)` for 25 %, 0
for 15 %. **Scale and normalisability**: with :math:`D = \mathrm{diag}(\lambda)`,
:math:`\Lambda_\circ = -2 W_{\mathrm{intra}}` is scaled to :math:`\lVert D^{-1/2} \Lambda_\circ
D^{-1/2}\rVert_2 =` ``intra_norm`` (0.6), so :math:`M = D + \Lambda_\circ \succ 0`, and
:math:`W_{\mathrm{inter}} = \kappa K_0` with :math:`\rho(A + A^\top)\rho(M^{-1/2} K_0
M^{-1/2})\kappa =` ``margin`` (0.9) (:func:`benchmarks.tissue_gibbs_pln.coupling_scale`), so
:math:`Q_0 = I_C \otimes M - (A + A^\top) \otimes W_{\mathrm{inter}} \succ 0`. Since
:math:`\log\Phi \le 0`, :math:`e^{E} \le e^{-\frac12 \mathrm{vec}(Y)^\top Q_0 \mathrm{vec}(Y)}`,
which is integrable: the energy is normalisable.

**Sampler** (:func:`chromatic_mala`): Metropolis-adjusted Langevin, one cell's row at a time,
all cells of a colour class of the cell graph at once (they are conditionally independent, so
each row's accept / reject is its own Metropolis-within-Gibbs step). The row's conditional has
:math:`\nabla = \phi'(y_i) + 2 W_{\mathrm{intra}} y_i + W_{\mathrm{inter}} n_i`, :math:`n_i =
\sum_{j \to i} w_{ij} y_j + \sum_{i \to l} w_{li} y_l`; the proposal is :math:`y' = y +
\tfrac h2 C \nabla + \sqrt h\, L \xi`, :math:`C = L L^\top = P^{-1}`, the fixed preconditioner
:math:`P = \mathrm{diag}(\lambda + \alpha^2 / (2 s^2)) - 2 W_{\mathrm{intra}}`. The step
:math:`h` (one for all cells) adapts **during burn-in only** (Robbins-Monro on :math:`\log h`
toward acceptance 0.574, gain :math:`(t + 1)^{-0.6}`) and is frozen after, so the kept sweeps
are an exact, time-homogeneous chain. Two chains (from 0 and from 3 envelope sds times a
standard normal); ``burn_in`` sweeps, then ``sweeps``; every ``thin``-th sweep the per-gene
mean and mean square over cells are traced for the largest Gelman-Rubin :math:`\hat R` and
autocorrelation time (:mod:`benchmarks.tissue_panel`); the report adds the two chains'
agreement, the acceptance after burn-in, the step and the configurational temperature
:math:`\sum (\partial E)^2 / \sum(-\partial^2 E)` (1 at equilibrium). The tissue is chain 0.
The chains mix slowly: at 2,000 beads, G = 20, seed 0, :math:`\hat R` is 1.21 after 300 burn-in
and 600 kept sweeps and 1.05 after 900 and 1,800 (checked at integration, session 22), so
``bench_celcomen_counts --world beads`` samples 900 + 1,800 sweeps by default.

**Counts** (:func:`bead_rates`, :func:`capture`). ``G`` coupled genes sit at random positions
among ``n_other`` other genes (default uniform on 500-1,000), ``var['highly_variable']`` True
exactly on the coupled ones. Cell-level rates: coupled :math:`r_{cg} = e^{\beta_g + y_{cg}}`,
:math:`\beta_g` so that :math:`\mathrm{mean}_c\, r_{cg} = m_g` (stratified log-uniform on (2,
40)); other gene ``j``: :math:`r_{cj} = b_j e^{f_{cj}}`, :math:`\log b_j \sim \mathcal N(0, 1)`,
30 % of them **markers** of one of the 5 types (:math:`f = U(1.5, 3)` in that type, else 0).
Bead rates :math:`\mu_{bj} = D f_b \sum_c a_{bc} r_{cj}`, ``D`` set so that the median of
:math:`\sum_j \mu_{bj}` is ``depth`` (200 UMIs). Counts: a per-bead **capture efficiency**
:math:`e_b \sim \mathrm{Gamma}(k, k)` (mean 1, ``capture_shape`` :math:`k = 4`), then
:math:`c_{bj} \sim \mathrm{Poisson}(e_b \mu_{bj})`; marginally over :math:`e_b`, negative
binomial (counts are then redrawn for a bead of total 0, as ``filter_cells(min_counts=1)``
would leave them):

.. math::
    \mathrm E c = \mu, \quad \mathrm{Var}\, c = \mu + \mu^2 / k, \quad
    P(c = 0) = (k / (k + \mu))^k .

``X`` / ``layers['counts']`` are float32 CSR (dense int64 with ``sparse=False``);
``layers['log1p']`` is ``normalize_total`` + ``log1p``; ``layers['signed']`` holds the bead's
mixed latent :math:`\sum_c a_{bc} y_c` on the sphere in the coupled columns; ``obs`` has
``total_counts``, ``n_genes_by_counts``, ``n_cells_mixed``, ``covered_fraction`` and
``cell_type`` (of the bead's largest cell). Signs, support and Pearson of the off-diagonals
compare; the scale has no target.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.spatial import cKDTree
from scipy.special import log_ndtr

from benchmarks.tissue_gibbs_pln import (
    GibbsReport,
    chain_agreement,
    coupling_scale,
    draw_nonempty,
    symmetric_adjacency,
)
from benchmarks.tissue_metropolis import (
    _log1p_normalised,
    gcn_weights,
    greedy_colouring,
    knn_edges,
)
from benchmarks.tissue_panel import _autocorrelation_time, _r_hat
from benchmarks.tissue_wholetx import coupled_anndata
from benchmarks.tissue_xenium import coupling_energy
from graphdata.errors import GraphDataError

__all__ = [
    "CELL_TYPES",
    "BEAD_RADIUS",
    "lens_area",
    "mixing_weights",
    "bead_array",
    "draw_couplings",
    "site_parameters",
    "log_density",
    "grad_log_density",
    "chromatic_mala",
    "MalaReport",
    "bead_rates",
    "capture",
    "BeadTissue",
    "simulate",
]

CELL_TYPES = ("epithelial", "neuron", "glia", "immune", "stromal")
BEAD_RADIUS = 5.0


def lens_area(d: np.ndarray, r1: np.ndarray, r2: np.ndarray) -> np.ndarray:
    """Area of the intersection of two discs of radii ``r1``, ``r2`` whose centres are ``d``
    apart (broadcast)."""
    d, r1, r2 = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (d, r1, r2)))
    out = np.zeros(d.shape)
    inside = d <= np.abs(r1 - r2)
    out[inside] = math.pi * np.minimum(r1, r2)[inside] ** 2
    part = ~inside & (d < r1 + r2)
    dd, a, b = d[part], r1[part], r2[part]
    ca = np.clip((dd**2 + a**2 - b**2) / (2 * dd * a), -1, 1)
    cb = np.clip((dd**2 + b**2 - a**2) / (2 * dd * b), -1, 1)
    k = (-dd + a + b) * (dd + a - b) * (dd - a + b) * (dd + a + b)
    out[part] = a**2 * np.arccos(ca) + b**2 * np.arccos(cb) - 0.5 * np.sqrt(np.maximum(k, 0))
    return out


def mixing_weights(
    beads: np.ndarray, cells: np.ndarray, radii: np.ndarray, *, bead_radius: float = BEAD_RADIUS,
    max_cells: int = 3,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """``(index [B, max_cells], weight [B, max_cells], covered [B])``: each bead's cells of
    largest overlap (index ``-1`` and weight 0 where fewer), weights the overlap areas normalised
    to sum 1 (all 0 for a bead over no cell), ``covered`` the kept overlap over the bead's
    area."""
    reach = bead_radius + float(radii.max())
    k = min(12, len(cells))
    dist, idx = cKDTree(cells).query(beads, k, distance_upper_bound=reach)
    dist, idx = dist.reshape(len(beads), k), idx.reshape(len(beads), k)
    valid = idx < len(cells)
    safe = np.where(valid, idx, 0)
    area = np.where(valid, lens_area(np.where(valid, dist, 1e9), bead_radius, radii[safe]), 0.0)
    top = np.argsort(-area, axis=1, kind="stable")[:, :max_cells]
    area = np.take_along_axis(area, top, 1)
    index = np.where(area > 0, np.take_along_axis(safe, top, 1), -1)
    total = area.sum(1)
    weight = area / np.where(total > 0, total, 1.0)[:, None]
    return index, weight, total / (math.pi * bead_radius**2)


def _relax(pts: np.ndarray, radius: np.ndarray, side: float, rounds: int = 150) -> np.ndarray:
    """Overlap removal: each disc pushed off every overlapping one by half the overlap, kept in
    the square; a jammed, disordered packing."""
    for _ in range(rounds):
        pairs = cKDTree(pts).query_pairs(2 * float(radius.max()), output_type="ndarray")
        delta = pts[pairs[:, 0]] - pts[pairs[:, 1]]
        dist = np.maximum(np.linalg.norm(delta, axis=1, keepdims=True), 1e-9)
        gap = (radius[pairs[:, 0]] + radius[pairs[:, 1]])[:, None] - dist
        if not (gap > 0).any():
            break
        push = 0.5 * np.maximum(gap, 0) * delta / dist
        move = np.zeros_like(pts)
        np.add.at(move, pairs[:, 0], push)
        np.add.at(move, pairs[:, 1], -push)
        pts = np.clip(pts + move, radius[:, None], side - radius[:, None])
    return pts


def bead_array(n_beads: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Cells, beads and mixing of one puck (module docstring): ``cells`` [C, 2], ``radius``
    [C], ``cell_type`` [C], ``beads`` [N, 2], ``index`` / ``weight`` [N, 3], ``covered`` [N],
    ``side`` (L)."""
    if n_beads < 10:
        raise GraphDataError(f"n_beads: expected >= 10, got {n_beads}")
    side = math.sqrt(1.3 * n_beads * math.pi * BEAD_RADIUS**2 / 0.78)
    while True:
        area = side**2
        radius = rng.uniform(5.0, 9.0, int(0.8 * area / (math.pi * 151.0 / 3)))  # E r^2
        cells = _relax(rng.random((len(radius), 2)) * side, radius, side)
        seeds = rng.random((max(1, int(rng.poisson(area / 20_000.0))), 2)) * side
        seed_type = rng.integers(len(CELL_TYPES), size=len(seeds))
        cell_type = seed_type[cKDTree(seeds).query(cells)[1]]
        n_place = int(0.78 * area / (math.pi * BEAD_RADIUS**2))
        beads = _relax(rng.random((n_place, 2)) * side, np.full(n_place, BEAD_RADIUS), side)
        index, weight, covered = mixing_weights(beads, cells, radius)
        seen = covered >= 0.2
        if seen.sum() >= n_beads and len(cells) > 10:
            break
        side *= 1.15
    centre = np.linalg.norm(beads - side / 2, axis=1)
    keep = np.sort(np.flatnonzero(seen)[np.argsort(centre[seen], kind="stable")[:n_beads]])
    return {
        "cells": cells,
        "radius": radius,
        "cell_type": cell_type,
        "beads": beads[keep],
        "index": index[keep],
        "weight": weight[keep],
        "covered": covered[keep],
        "side": np.float64(side),
    }


def draw_couplings(
    n_genes: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Unscaled ``W0`` (Watts-Strogatz support, zero diagonal) and ``K0`` (pairs off it and a
    signed diagonal), symmetric ``[G, G]``; ``genes`` holds the WS ``support`` and ``inhibit``
    (genes with a negative ``K0`` diagonal)."""
    g = n_genes
    if g < 5:
        raise GraphDataError(f"n_genes: expected >= 5, got {g}")
    while True:
        support = np.zeros((g, g), dtype=bool)
        for a in range(g):
            for step in (1, 2):  # ring lattice of degree 4, far ends rewired w.p. 0.2
                b = (a + step) % g
                if rng.random() < 0.2:
                    free = np.flatnonzero(~support[a] & (np.arange(g) != a))
                    b = int(rng.choice(free))
                support[a, b] = support[b, a] = True
        sign = np.where(rng.random((g, g)) < 0.6, 1.0, -1.0)
        w0 = np.triu(np.where(support, sign * rng.uniform(0.5, 1.0, (g, g)), 0.0), 1)
        w0 = w0 + w0.T
        off = np.flatnonzero(np.triu(~support & ~np.eye(g, dtype=bool), 1).ravel())
        k0 = np.zeros((g, g))
        for code in rng.choice(off, min(len(off), math.ceil(g / 3)), replace=False):
            a, b = divmod(int(code), g)
            k0[a, b] = k0[b, a] = (1.0 if rng.random() < 0.5 else -1.0) * rng.uniform(0.4, 1.0)
        if (w0 > 0).any() and (w0 < 0).any():
            break
    u = rng.random(g)
    diag = np.where(u < 0.6, rng.uniform(0.3, 1.0, g), -rng.uniform(0.3, 0.8, g))
    diag[u >= 0.85] = 0.0
    return w0, k0 + np.diag(diag), {"support": support, "inhibit": np.flatnonzero(diag < 0)}


def site_parameters(n_genes: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Skew-normal site parameters ``lam``, ``skew``, ``scale``, ``offset`` ``[G]``."""
    sign = np.where(rng.random(n_genes) < 0.5, 1.0, -1.0)
    return {
        "lam": rng.uniform(0.5, 1.0, n_genes),
        "skew": sign * rng.uniform(2.0, 6.0, n_genes),
        "scale": rng.uniform(0.7, 1.3, n_genes),
        "offset": rng.uniform(-0.3, 0.3, n_genes),
    }


def _site(y: np.ndarray, site: dict[str, np.ndarray], order: int = 0) -> np.ndarray:
    """:math:`\\phi`, :math:`\\phi'` or :math:`\\phi''` entrywise (``order`` 0, 1, 2)."""
    c = site["skew"] / site["scale"]
    z = c * (y - site["offset"])
    if order == 0:
        return -0.5 * site["lam"] * y**2 + log_ndtr(z)
    ratio = np.exp(-0.5 * z**2 - 0.5 * math.log(2 * math.pi) - log_ndtr(z))  # phi(z) / Phi(z)
    if order == 1:
        return -site["lam"] * y + c * ratio
    return -site["lam"] - c**2 * ratio * (z + ratio)


def log_density(
    y: np.ndarray,
    edge_index: np.ndarray,
    weight: np.ndarray,
    site: dict[str, np.ndarray],
    w_intra: np.ndarray,
    w_inter: np.ndarray,
) -> float:
    r""":math:`E(Y)` of the module docstring (log p up to its constant), ``y`` ``[C, G]``."""
    return float(_site(y, site).sum()) + coupling_energy(y, edge_index, weight, w_intra, w_inter)


def grad_log_density(
    y: np.ndarray, s: Any, site: dict[str, np.ndarray], w_intra: np.ndarray, w_inter: np.ndarray
) -> np.ndarray:
    r""":math:`\nabla E` for ``y`` ``[C, ..., G]``, ``s`` = :math:`A + A^\top`."""
    msg = (s @ y.reshape(y.shape[0], -1)).reshape(y.shape)
    return _site(y, site, 1) + 2 * y @ w_intra + msg @ w_inter


@dataclass
class MalaReport(GibbsReport):
    """Diagnostics of :func:`chromatic_mala`: a Gibbs run's, and these."""

    r_hat_max: float
    autocorrelation_sweeps: float
    thin: int
    acceptance: float  # mean acceptance after burn-in
    step: float  # the frozen step h
    config_temperature: float  # sum (dE)^2 / sum (-d2E), chain 0's final state (1 = at rest)


def chromatic_mala(
    edge_index: np.ndarray,
    weight: np.ndarray,
    site: dict[str, np.ndarray],
    w_intra: np.ndarray,
    w_inter: np.ndarray,
    n_cells: int,
    *,
    sweeps: int = 300,
    burn_in: int = 150,
    thin: int = 2,
    seed: int = 0,
) -> tuple[np.ndarray, MalaReport]:
    """Two chains of row-wise preconditioned MALA over colour classes (module docstring);
    returns final states ``[C, 2, G]`` and a :class:`MalaReport`."""
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    g = w_intra.shape[0]
    if not (np.allclose(w_intra, w_intra.T) and np.allclose(w_inter, w_inter.T)):
        raise GraphDataError("w_intra, w_inter: expected symmetric matrices")
    if thin < 1 or sweeps < 1 or burn_in < 0:
        raise GraphDataError(f"thin, sweeps, burn_in: got {thin}, {sweeps}, {burn_in}")
    lam = np.asarray(site["lam"], np.float64)
    prec = np.diag(lam + 0.5 * (site["skew"] / site["scale"]) ** 2) - 2 * w_intra
    try:
        chol = np.linalg.cholesky(np.linalg.inv(prec))  # C = L L^T
    except np.linalg.LinAlgError as err:
        raise GraphDataError("preconditioner: expected positive definite") from err
    cov = chol @ chol.T
    s = symmetric_adjacency(edge_index, weight, n_cells)
    colours = greedy_colouring(edge_index, n_cells)
    rows = [s[idx] for idx in colours]
    y = np.zeros((n_cells, 2, g))
    y[:, 1] = 3.0 / np.sqrt(lam) * rng.standard_normal((n_cells, g))
    log_h, accepted, proposed, trace = math.log(0.5), 0.0, 0, []

    def cond(v: np.ndarray, msg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        logp = _site(v, site).sum(-1) + np.einsum("...g,gh,...h->...", v, w_intra, v)
        logp += (v * (msg @ w_inter)).sum(-1)
        return logp, _site(v, site, 1) + 2 * v @ w_intra + msg @ w_inter

    for sweep in range(burn_in + sweeps):
        for idx, s_rows in zip(colours, rows):
            h = math.exp(log_h)
            msg = (s_rows @ y.reshape(n_cells, 2 * g)).reshape(len(idx), 2, g)
            cur = y[idx]
            lp, grad = cond(cur, msg)
            new = (
                cur + 0.5 * h * grad @ cov + math.sqrt(h) * rng.standard_normal(cur.shape) @ chol.T
            )
            lp_new, grad_new = cond(new, msg)
            fwd, bwd = new - cur - 0.5 * h * grad @ cov, cur - new - 0.5 * h * grad_new @ cov
            log_q = -0.5 / h * (np.einsum("...g,gh,...h->...", bwd, prec, bwd)
                                - np.einsum("...g,gh,...h->...", fwd, prec, fwd))  # fmt: skip
            ok = np.log(rng.random(lp.shape)) < lp_new - lp + log_q
            y[idx] = np.where(ok[..., None], new, cur)
            if sweep < burn_in:
                log_h += (ok.mean() - 0.574) / (sweep + 1) ** 0.6
            else:
                accepted, proposed = accepted + ok.sum(), proposed + ok.size
        if sweep >= burn_in and (sweep - burn_in + 1) % thin == 0:
            trace.append(np.concatenate([y.mean(0), (y**2).mean(0)], -1))
    if not np.isfinite(y).all():
        raise GraphDataError("chromatic_mala: non-finite state")
    y0 = y[:, 0]
    grad = grad_log_density(y0, s, site, w_intra, w_inter)
    max_z, null_median = chain_agreement(y)
    traced = np.asarray(trace).reshape(-1, 2, 2 * g)
    return y, MalaReport(
        x2_max_z=max_z,
        x2_z_null_median=null_median,
        n_colours=len(colours),
        sweeps=burn_in + sweeps,
        seconds=time.perf_counter() - start,
        r_hat_max=_r_hat(traced),
        autocorrelation_sweeps=thin * _autocorrelation_time(traced),
        thin=thin,
        acceptance=float(accepted / max(proposed, 1)),
        step=math.exp(log_h),
        config_temperature=float((grad**2).sum() / -_site(y0, site, 2).sum()),
    )


def bead_rates(
    cell_rate: np.ndarray, index: np.ndarray, weight: np.ndarray, covered: np.ndarray
) -> np.ndarray:
    r""":math:`f_b \sum_c a_{bc} r_{cj}` ``[N, P]`` from cell rates ``[C, P]`` (before depth)."""
    mixed = np.einsum("bk,bkj->bj", weight, cell_rate[np.maximum(index, 0)])
    return covered[:, None] * mixed


def capture(mu: np.ndarray, rng: np.random.Generator, *, shape: float = 4.0) -> np.ndarray:
    """Counts: per-bead efficiency ``Gamma(shape, rate shape)`` times Poisson(mu) (docstring)."""
    mu = np.asarray(mu, np.float64)
    if (mu < 0).any() or shape <= 0:
        raise GraphDataError(f"mu, capture shape: expected >= 0 and > 0, got {mu.min()}, {shape}")
    eff = rng.gamma(shape, 1.0 / shape, mu.shape[0])
    return rng.poisson(eff[:, None] * mu).astype(np.int64)


@dataclass(kw_only=True)
class BeadTissue:
    """A tissue of :func:`simulate`: beads (the observations, ``coords``, graph, ``counts``
    ``[N, P]``), the cells under them (``cells``), and the cell-level truth."""

    coords: np.ndarray  # [N, 2] bead centres, um
    edge_index: np.ndarray  # [2, E] bead k-NN, j -> i
    edge_weight: np.ndarray  # [E]
    W_intra: np.ndarray  # noqa: N815
    W_inter: np.ndarray  # noqa: N815
    x: np.ndarray  # [N, G] bead's mixed latent on the sphere
    latent: np.ndarray  # [C, G] cell latent (chain 0)
    counts: np.ndarray  # [N, P] int64
    coupled: np.ndarray  # [G] columns of the coupled genes
    log1p: np.ndarray
    cells: dict[str, np.ndarray]  # centres, radius, cell_type, edge_index, edge_weight
    mixing: dict[str, np.ndarray]  # index, weight, covered
    count_params: dict[str, Any]
    report: MalaReport
    field: dict[str, np.ndarray]
    genes: dict[str, np.ndarray]
    params: dict[str, Any] = field(default_factory=dict)

    def to_anndata(self, *, sparse: bool = True) -> Any:
        """AnnData over the beads (module docstring), ``uns['tissue_beads']`` the truth."""
        import pandas as pd

        top = self.cells["cell_type"][self.mixing["index"][:, 0]]
        obs = {
            "total_counts": self.counts.sum(1),
            "n_genes_by_counts": (self.counts > 0).sum(1),
            "n_cells_mixed": (self.mixing["index"] >= 0).sum(1),
            "covered_fraction": self.mixing["covered"],
            "cell_type": pd.Categorical([CELL_TYPES[t] for t in top]),
        }
        return coupled_anndata(self, key="tissue_beads", digits=4, obs=obs, sparse=sparse)


def simulate(
    n_beads: int,
    n_genes: int,
    *,
    seed: int = 0,
    k: int = 6,
    sweeps: int = 300,
    burn_in: int = 150,
    thin: int = 2,
    intra_norm: float = 0.6,
    margin: float = 0.9,
    n_other: int | None = None,
    depth: float = 200.0,
    capture_shape: float = 4.0,
) -> BeadTissue:
    """Puck, cell field, bead counts of one tissue (module docstring); ``n_beads`` observations
    (the bench's ``--cells``). Every draw comes from ``default_rng(seed)``'s spawned streams."""
    if n_beads <= k:
        raise GraphDataError(f"n_beads: expected more than k = {k}, got {n_beads}")
    if not (0 < intra_norm < 1 and 0 < margin < 1):
        raise GraphDataError(f"intra_norm, margin: expected in (0, 1), got {intra_norm}, {margin}")
    streams = np.random.default_rng(seed).spawn(5)
    puck = bead_array(n_beads, streams[0])
    n_cells = len(puck["cells"])
    cell_edges = knn_edges(puck["cells"], k)
    cell_weight = gcn_weights(cell_edges, n_cells)
    w0, k0, genes = draw_couplings(n_genes, streams[1])
    site = site_parameters(n_genes, streams[2])
    half = 1.0 / np.sqrt(site["lam"])
    lam_off = -2.0 * w0
    lam_off *= intra_norm / np.linalg.norm(half[:, None] * lam_off * half[None], 2)
    kappa, rho_s = coupling_scale(
        cell_edges, cell_weight, n_cells, np.diag(site["lam"]) + lam_off, k0, margin,
        v0=np.ones(n_cells),
    )  # fmt: skip
    w_intra, w_inter = -0.5 * lam_off, kappa * k0
    states, report = chromatic_mala(
        cell_edges, cell_weight, site, w_intra, w_inter, n_cells, sweeps=sweeps,
        burn_in=burn_in, thin=thin, seed=int(streams[3].integers(2**62)),
    )  # fmt: skip
    latent = states[:, 0]
    rng = streams[4]
    if n_other is None:
        n_other = int(rng.integers(500, 1001))
    n_vars = n_genes + n_other
    coupled = np.sort(rng.choice(n_vars, n_genes, replace=False))
    others = np.setdiff1d(np.arange(n_vars), coupled)
    strata = (rng.permutation(n_genes) + rng.random(n_genes)) / n_genes
    gene_mean = np.exp(math.log(2.0) + strata * math.log(20.0))
    rate = np.empty((n_cells, n_vars))
    beta = np.log(gene_mean) - np.log(np.exp(latent).mean(0))
    rate[:, coupled] = np.exp(beta + latent)
    base = np.full(n_vars, np.nan)
    base[others] = np.exp(rng.standard_normal(n_other))
    marker_type = np.full(n_vars, -1)
    is_marker = rng.random(n_other) < 0.3
    marker_type[others[is_marker]] = rng.integers(len(CELL_TYPES), size=int(is_marker.sum()))
    fold = np.where(marker_type >= 0, rng.uniform(1.5, 3.0, n_vars), 0.0)
    hit = puck["cell_type"][:, None] == marker_type[None, others]
    rate[:, others] = base[others] * np.exp(np.where(hit, fold[others], 0.0))
    mixed = bead_rates(rate, puck["index"], puck["weight"], puck["covered"])
    scale = depth / float(np.median(mixed.sum(1)))
    mu = scale * mixed
    counts = draw_nonempty(lambda m: capture(m, rng, shape=capture_shape), mu)
    bead_latent = np.einsum("bk,bkg->bg", puck["weight"], latent[np.maximum(puck["index"], 0)])
    edge_index = knn_edges(puck["beads"], k)
    params = {
        "n_beads": n_beads, "n_cells": n_cells, "n_genes": n_genes, "seed": seed, "k": k,
        "sweeps": sweeps, "burn_in": burn_in, "thin": thin, "intra_norm": intra_norm,
        "margin": margin, "kappa": kappa, "rho_adjacency": rho_s, "n_other": n_other,
        "depth": depth, "capture_shape": capture_shape, "side_um": float(puck["side"]),
        "mean_cells_per_bead": float((puck["index"] >= 0).sum(1).mean()),
    }  # fmt: skip
    return BeadTissue(
        coords=puck["beads"],
        edge_index=edge_index,
        edge_weight=gcn_weights(edge_index, n_beads),
        W_intra=w_intra,
        W_inter=w_inter,
        x=bead_latent / np.linalg.norm(bead_latent, axis=1, keepdims=True),
        latent=latent,
        counts=counts,
        coupled=coupled,
        log1p=_log1p_normalised(counts),
        cells={
            "centres": puck["cells"],
            "radius": puck["radius"],
            "cell_type": puck["cell_type"],
            "edge_index": cell_edges,
            "edge_weight": cell_weight,
        },  # fmt: skip
        mixing={k_: puck[k_] for k_ in ("index", "weight", "covered")},
        count_params={
            "rate": mu,
            "cell_rate": rate,
            "depth_scale": scale,
            "gene_mean": gene_mean,
            "baseline": beta,
            "base_mean": base,
            "marker_type": marker_type,
        },  # fmt: skip
        report=report,
        field={**site, "W_intra": w_intra, "W_inter": w_inter},
        genes=genes,
        params=params,
    )
