r"""A seventh tissue simulator: an imaging-based single-cell slide (Xenium / MERSCOPE-like).

The sixth held-out world of the Celcomen benchmark (``bench_celcomen_counts --world xenium``,
issue 19, session 22), written by a helper who did not read the library's Celcomen code
(``spatial/celcomen.py``, ``_inputs.py``, ``objectives.py``, ``_solver.py``, ``model.py``) and
never fitted it on this world. It looks like an imaging-based, single-cell-resolution slide:
**segmented cells** (nuclei expanded by up to 5 um, their masks' centroids as positions) of
irregular density with **gland-like double rings** around empty lumens, a **targeted panel** of
300-480 genes of which ``G`` are coupled (``var['highly_variable']``), the rest uncoupled panel
genes (many of them cell-type markers). Its mechanism differs from the other six at every stage:
a clustered, ringed, segmented layout (not a square, lattice, two-density band or plain
clusters); a **Student-t site potential** per gene (not a Gaussian, a log-cosh, a sphere, a
double well or a log-gamma); couplings on a **random recursive tree with a few cycles** with
**paracrine relays** between cells (not Erdős–Rényi, circulant, modules, hubs or a geometric
network); an **exactly Gibbs sampler with a Gamma scale-mixture augmentation**, blocked per cell
on a colouring (no accept / reject, no step size); and **imaging detection**: per-gene log-normal
detection efficiency, area-dependent size factors, Poisson transcripts, **segmentation
spillover** into touching cells and a low zero inflation. Neither ``spatial.simulate`` nor
``spatial.model`` is imported; the graph comes from :func:`graphdata.spatial.knn_graph`, the
colouring from :mod:`benchmarks.tissue_metropolis`.

**Layout** (:func:`xenium_nuclei`, :func:`segment`; units um). Nucleus candidates inside a disc
around a star-shaped outline :math:`r(\theta) = R (1 + 0.15 \sin(2\theta + \phi_1) + 0.1
\sin(3\theta + \phi_2))`: **stroma**, a homogeneous Poisson process of intensity 1/150 um^-2
(fibroblasts 75 %, endothelial 25 %, nucleus radius :math:`U(2.5, 4)`); **immune aggregates**, a
Matérn cluster process (parents 1 per 40,000 um^2, Poisson(25) offspring uniform in a disc of 25
um, radius :math:`U(2, 3)`); **glands**, 1 per 60,000 um^2 (centres uniform, at least
:math:`R_a + R_b + 30` um apart), each a ring of luminal epithelial nuclei at radius :math:`R_g
\sim U(18, 35)` spaced 8 um and an outer ring of myoepithelial nuclei at :math:`R_g + 8` spaced
10 um (radial jitter 0.7 um), the lumen and the ring band emptied of stroma and immune
candidates. A **Matérn type-II hard core** on the nuclei (two clash when closer than
:math:`r_a + r_b + 0.5`; ring nuclei have the smaller marks and win) keeps them disjoint; the
``N`` kept are those of least normalised radius :math:`|x| / r(\theta)` (the outline shrunk
until it holds ``N``). **Segmentation** on a 1 um pixel grid: a pixel belongs to the nucleus of
least :math:`\lVert x - c_a\rVert - r_a` when that is at most ``expansion`` (5 um; Xenium's
nucleus expansion, stopping where two cells meet), else to no cell. A cell's position is its
mask's **centroid**, its area the mask's pixel count, its perimeter the number of mask-pixel
edges to other pixels, its contact :math:`b_{ab}` with cell ``b`` the number of shared pixel
edges. Directed k-NN graph on the centroids (k = 6), edges :math:`j \to i`, GCN weights
:math:`w_{ij} = 1/\sqrt{d_i d_j}` (``A[i, j] = w_ij``; every in-degree is k, so :math:`w =
1/6`), the graph and weighting Celcomen's default fits with (``spatial_neighbors_knn``
rebuilds it from ``obsm['spatial']``); the contacts are used only by the spillover.

**Latent field.** :math:`Y \in \mathbb R^{N \times G}`, rows :math:`y_i` (latent log-expression
of the coupled genes), with density :math:`p \propto e^{E}`,

.. math::
    E(Y) = \sum_i \Big[\sum_g \Big(-\tfrac{\lambda_g}{2} y_{ig}^2
        - \tfrac{\nu_g + 1}{2} \log\Big(1 + \frac{(y_{ig} - o_g)^2}{\nu_g s_g^2}\Big)\Big)
        + y_i^\top W_{\mathrm{intra}}\, y_i\Big]
        + \sum_i \sum_{j \to i} w_{ij}\, y_i^\top W_{\mathrm{inter}}\, y_j .

The **site potential** is a Student-t kernel (scale :math:`s_g \sim U(0.8, 1.3)`, degrees of
freedom :math:`\nu_g \sim U(1.5, 4)`, centre :math:`o_g = \pm U(0.2, 0.5)`) times a Gaussian
envelope (:math:`\lambda_g \sim U(0.4, 0.8)`): a peak with heavy, bursty flanks (a lone gene has
sd 0.7-1.1 and excess kurtosis 0.2-1.6 over the corners of these ranges; a Gaussian: 0); the
Student-t part is not log-concave, so neither is :math:`E`.
This is **the energy Celcomen writes**, :math:`E(X) = \sum_i x_i^\top W_{\mathrm{intra}} x_i +
\sum_i \sum_{j \to i} w_{ij} x_i^\top W_{\mathrm{inter}} x_j` with :math:`p \propto e^E`, plus
per-entry site terms, so the truth is the two matrices themselves: :math:`\partial^2 E /
\partial y_{ig} \partial y_{ih} = 2 (W_{\mathrm{intra}})_{gh}` (:math:`g \ne h`) and
:math:`\partial^2 E / \partial y_{ig} \partial y_{jh} = w_{ij} (W_{\mathrm{inter}})_{gh}` for an
edge :math:`j \to i` (:math:`w_{ij} + w_{ji}` when both edges exist). ``W_intra`` (symmetric,
zero diagonal) lives on a **random recursive tree** (gene g > 0 attaches to a uniform earlier
gene) plus :math:`\lceil G/5 \rceil` extra random pairs (cycles), signs positive with probability
0.6, magnitudes :math:`U(0.5, 1)`. ``W_inter`` (symmetric) holds **paracrine relays**: each gene
is, with probability 0.4, coupled to a uniform gene at tree distance 2 (a signal that skips one
regulator between cells), sign positive with probability 0.5, magnitude :math:`U(0.4, 1)`; its
diagonal is :math:`U(0.3, 1)` for 60 % of the genes, :math:`-U(0.3, 0.8)` for 20 % (lateral
inhibition) and 0 for 20 % (no spatial memory). **Scale**, as the other worlds: with
:math:`D = \mathrm{diag}(\lambda)`, :math:`\Lambda_\circ = -2 W_{\mathrm{intra}}` is scaled to
:math:`\lVert D^{-1/2}\Lambda_\circ D^{-1/2}\rVert_2 =` ``intra_norm`` (0.6) and
:math:`W_{\mathrm{inter}} = \kappa K_0` with :math:`\rho(A + A^\top)\,\rho(M^{-1/2} K_0
M^{-1/2})\,\kappa =` ``margin`` (0.9), :math:`M = D + \Lambda_\circ`
(:func:`benchmarks.tissue_gibbs_pln.coupling_scale`). Then :math:`Q_0 = I_N \otimes M - (A +
A^\top) \otimes W_{\mathrm{inter}} \succ 0`, and since the Student-t term is at most 0,
:math:`p \le e^{-\frac12 \mathrm{vec}(Y)^\top Q_0 \mathrm{vec}(Y) + \mathrm{const}}`: normalisable.

**Sampler** (:func:`scale_mixture_gibbs`). The Student-t kernel is a Gamma scale mixture of
Gaussians, :math:`(1 + r^2/(\nu s^2))^{-(\nu+1)/2} \propto \int_0^\infty \tau^{(\nu+1)/2 - 1}
e^{-\tau(\nu + r^2/s^2)/2}\, d\tau`, so with one auxiliary :math:`\tau_{ig} \ge 0` per entry the
joint density has two exact conditionals:

.. math::
    \tau_{ig} \mid Y \sim \mathrm{Gamma}\Big(\tfrac{\nu_g + 1}{2},\
        \mathrm{rate}\ \tfrac{\nu_g + (y_{ig} - o_g)^2 / s_g^2}{2}\Big), \qquad
    y_i \mid \tau, Y_{-i} \sim \mathcal N\big(P_i^{-1} h_i, P_i^{-1}\big),

:math:`P_i = \mathrm{diag}(\lambda + \tau_i / s^2) - 2 W_{\mathrm{intra}}` (positive definite,
as :math:`M` is), :math:`h_i = \tau_i \circ o / s^2 + W_{\mathrm{inter}} n_i`, :math:`n_i =
\sum_{j \to i} w_{ij} y_j + \sum_{i \to l} w_{li} y_l`. A sweep draws every :math:`\tau` at once,
then every cell's whole row :math:`y_i` (a G-dimensional Gaussian, by a batched Cholesky
factor) one colour class of the undirected graph at a time (cells of a class are conditionally
independent). Exact Gibbs: nothing is tuned or rejected. Two chains, from 0 and from 3 envelope
sds times a standard normal; ``burn_in`` (100) sweeps discarded, then ``sweeps`` (200); every
``thin``-th (2nd) sweep after burn-in the per-gene mean and mean square over cells are traced,
giving the largest Gelman-Rubin :math:`\hat R` and integrated autocorrelation time
(:mod:`benchmarks.tissue_panel`'s estimators), plus the two chains' final second moments
(:func:`benchmarks.tissue_gibbs_pln.chain_agreement`) and the **configurational temperature**
:math:`\sum (\partial E)^2 / \sum (-\partial^2 E)` of chain 0's final state over all entries
(1 at equilibrium by integration by parts; Jepps et al. 2000). The tissue is chain 0's final
state.

**Counts** (:func:`xenium_counts`, :func:`detect`). The panel has ``panel_size`` genes (default
drawn uniformly from 300-480); the coupled genes sit at random positions in ``var`` (kept in
their order). Size factors :math:`s_i = (A_i / \tilde A)\, e^{0.25 \xi_i}`, normalised to
geometric mean 1 (:math:`A_i` the segmented area, :math:`\tilde A` its median; the 0.25 is
capture and section-depth scatter). Each gene has a **detection efficiency** :math:`\eta_g
\sim \mathrm{LogNormal}(0, 0.5^2)` (probe design). Expected transcripts (before spillover):

- coupled gene g: :math:`\mu_{ig} = s_i \eta_g e^{\alpha_g + y_{ig}}`, :math:`\alpha_g` set so
  that :math:`\mathrm{mean}_i\, \mu_{ig} = \eta_g m_g`, :math:`m_g` stratified log-uniform on
  (0.8, 25);
- other panel gene j: :math:`\mu_{ij} = s_i \eta_j b_j e^{f_{ij}}` with :math:`\log b_j \sim
  \mathcal N(\log 0.15, 1)`; 40 % of them are **markers** of one of the five cell types
  (:math:`f_{ij} = U(2, 3.5)` in that type, else 0), the rest :math:`f = 0`. These depend on the
  cell's type and area only, not on :math:`Y`.

Each cell's transcripts are :math:`T_{jg} \sim \mathrm{Poisson}(\mu_{jg})`; each transcript is
**assigned by the segmentation** to its own cell with probability :math:`1 - \epsilon_j` and to a
touching cell :math:`l` with probability :math:`\epsilon_j \pi_{jl}`, :math:`\pi_{jl} = b_{jl} /
\sum_m b_{jm}`, :math:`\epsilon_j = \epsilon\, \sum_m b_{jm} / \mathrm{perimeter}_j` (a cell
spills only across the part of its boundary that touches other cells; ``spillover``
:math:`\epsilon` = 0.08, a mean of about 5 %). By Poisson splitting, the transcripts a cell
receives are independent Poisson with mean :math:`\lambda_{ig} = (1 - \epsilon_i) \mu_{ig} +
\sum_j \epsilon_j \pi_{ji} \mu_{jg}` (:func:`spillover_matrix`: :math:`\lambda = S\mu`, columns of
:math:`S` summing to 1). Then a **decoding dropout**: an observed count is 0 with probability
``zero_inflation`` :math:`\pi_0` (0.02), else the received count, so

.. math::
    \mathrm E c = (1 - \pi_0)\lambda, \quad \mathrm{Var}\, c = (1 - \pi_0)\lambda(1 + \pi_0
    \lambda), \quad P(c = 0) = \pi_0 + (1 - \pi_0) e^{-\lambda}.

``layers['counts']`` and ``X`` are float32 CSR by default (a ``cell_feature_matrix`` as read by
scanpy / spatialdata-io), dense int64 with ``sparse=False``; ``obs['total_counts']`` is the
panel total (also ``obs['transcript_counts']``, Xenium's name), ``obs['cell_area']`` the
segmented area; ``layers['log1p']`` is scanpy's ``normalize_total`` then ``log1p`` over the
panel; ``layers['signed']`` holds :math:`y_i / \lVert y_i\rVert` in the coupled columns, 0
elsewhere. The counts pass through efficiencies, size factors and spillover, so **signs, support
and Pearson** of the off-diagonals compare; the scale has no target.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree

from benchmarks.tissue_gibbs_pln import (
    GibbsReport,
    chain_agreement,
    coupling_scale,
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
from graphdata.errors import GraphDataError

__all__ = [
    "CELL_TYPES",
    "xenium_nuclei",
    "segment",
    "draw_couplings",
    "site_parameters",
    "log_density",
    "grad_log_density",
    "configurational_temperature",
    "scale_mixture_gibbs",
    "spillover_matrix",
    "detect",
    "xenium_counts",
    "ScaleMixtureReport",
    "XeniumTissue",
    "simulate",
]

CELL_TYPES = ("luminal", "myoepithelial", "fibroblast", "immune", "endothelial")


def _outline(theta: np.ndarray, phase: np.ndarray) -> np.ndarray:
    """Relative outline radius :math:`r(\\theta) / R` (module docstring)."""
    return 1.0 + 0.15 * np.sin(2 * theta + phase[0]) + 0.1 * np.sin(3 * theta + phase[1])


def _disc(radius: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` points uniform in the disc of ``radius`` around 0, ``[n, 2]``."""
    r = radius * np.sqrt(rng.random(n))
    t = rng.uniform(0, 2 * math.pi, n)
    return np.stack([r * np.cos(t), r * np.sin(t)], 1)


def xenium_nuclei(
    n_cells: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """Nucleus centres, radii and cell types of the stroma, immune aggregates and glands.

    Returns ``(centres [N, 2] um, radii [N], cell_type [N] int (CELL_TYPES), layout)``;
    ``layout`` holds ``phase`` [2], ``R`` (outline scale of the kept cells), ``glands``
    ``[n, 3]`` (centre x, y, lumen radius R_g) and ``gland`` ``[N]`` (index or -1).
    """
    if n_cells < 10:
        raise GraphDataError(f"n_cells: expected >= 10, got {n_cells}")
    phase = rng.uniform(0, 2 * math.pi, 2)
    # ~120 um^2 per kept cell on average; draw in a disc 1.35 x the outline, grow until enough
    scale = math.sqrt(1.3 * n_cells * 120.0 / math.pi)
    while True:
        big = 1.35 * 1.25 * scale  # the outline's largest radius is 1.25 R
        area = math.pi * big**2

        stroma = _disc(big, int(rng.poisson(area / 150.0)), rng)
        s_type = np.where(rng.random(len(stroma)) < 0.75, 2, 4)
        s_rad = rng.uniform(2.5, 4.0, len(stroma))
        parents = _disc(big, int(rng.poisson(area / 40_000.0)), rng)
        sizes = rng.poisson(25, len(parents))
        offset = 25.0 * np.sqrt(rng.random(sizes.sum()))[:, None]
        angle = rng.uniform(0, 2 * math.pi, sizes.sum())
        immune = np.repeat(parents, sizes, 0) + offset * np.stack([np.cos(angle), np.sin(angle)], 1)
        i_rad = rng.uniform(2.0, 3.0, len(immune))
        glands: list[tuple[float, float, float]] = []
        for _ in range(int(rng.poisson(area / 60_000.0))):
            c, rg = _disc(big, 1, rng)[0], rng.uniform(18.0, 35.0)
            if all(np.hypot(*(c - g[:2])) > rg + g[2] + 30.0 for g in glands):
                glands.append((float(c[0]), float(c[1]), rg))
        ring_pts, ring_type, ring_gland = [], [], []
        for k, (gx, gy, rg) in enumerate(glands):
            for radius, spacing, kind in ((rg, 8.0, 0), (rg + 8.0, 10.0, 1)):
                m = max(6, int(round(2 * math.pi * radius / spacing)))
                t = (np.arange(m) + rng.random()) * 2 * math.pi / m
                rr = radius + 0.7 * rng.standard_normal(m)
                ring_pts.append(np.stack([gx + rr * np.cos(t), gy + rr * np.sin(t)], 1))
                ring_type.append(np.full(m, kind))
                ring_gland.append(np.full(m, k))
        loose = np.concatenate([stroma, immune])
        loose_type = np.concatenate([s_type, np.full(len(immune), 3)])
        loose_rad = np.concatenate([s_rad, i_rad])
        if glands:  # lumen and ring band: no stroma or immune nuclei
            g_arr = np.asarray(glands)
            d = np.linalg.norm(loose[:, None] - g_arr[None, :, :2], axis=-1)  # [M, n_glands]
            out = (d > g_arr[None, :, 2] + 13.0).all(1)
            loose, loose_type, loose_rad = loose[out], loose_type[out], loose_rad[out]
        ring = np.concatenate(ring_pts) if ring_pts else np.zeros((0, 2))
        pts = np.concatenate([ring, loose])
        rad = np.concatenate([rng.uniform(2.5, 3.5, len(ring)), loose_rad])
        kind = np.concatenate([*ring_type, loose_type]).astype(np.int64)
        gland = np.concatenate([*ring_gland, np.full(len(loose), -1)]).astype(np.int64)
        # Matérn II: lose to any clashing nucleus of smaller mark; ring nuclei mark in [0, 1)
        marks = np.concatenate([rng.random(len(ring)), 1.0 + rng.random(len(loose))])
        pairs = cKDTree(pts).query_pairs(2 * float(rad.max()) + 0.5, output_type="ndarray")
        dist = np.linalg.norm(pts[pairs[:, 0]] - pts[pairs[:, 1]], axis=1)
        clash = pairs[dist < rad[pairs[:, 0]] + rad[pairs[:, 1]] + 0.5]
        loser = np.where(marks[clash[:, 0]] > marks[clash[:, 1]], clash[:, 0], clash[:, 1])
        alive = np.ones(len(pts), dtype=bool)
        alive[loser] = False
        theta = np.arctan2(pts[:, 1], pts[:, 0])
        rho = np.linalg.norm(pts, axis=1) / (scale * _outline(theta, phase))
        inside = alive & (rho < 1.3)
        if inside.sum() >= n_cells:
            break
        scale *= 1.15
    order = np.flatnonzero(inside)[np.argsort(rho[inside], kind="stable")[:n_cells]]
    order = np.sort(order)
    g_arr = np.asarray(glands, dtype=np.float64).reshape(-1, 3)
    layout = {
        "phase": phase,
        "R": float(rho[order].max() * scale),
        "glands": g_arr,
        "gland": gland[order],
    }
    return pts[order], rad[order], kind[order], layout


def segment(
    centres: np.ndarray, radii: np.ndarray, *, expansion: float = 5.0, pixel: float = 1.0
) -> dict[str, np.ndarray]:
    r"""Nucleus-expansion segmentation on a pixel grid (module docstring).

    Returns ``centroid`` ``[N, 2]``, ``area`` ``[N]`` (um^2), ``perimeter`` ``[N]`` (um),
    ``contact`` ``[C, 3]`` (cell a, cell b, shared boundary in um; both orders, a != b) and
    ``labels`` (the label image, -1 outside every cell) with ``origin`` (its corner).
    """
    n = len(centres)
    reach = float(radii.max()) + expansion
    lo = centres.min(0) - reach - pixel
    hi = centres.max(0) + reach + pixel
    xs = np.arange(lo[0], hi[0], pixel) + pixel / 2
    ys = np.arange(lo[1], hi[1], pixel) + pixel / 2
    grid = np.stack(np.meshgrid(xs, ys, indexing="ij"), -1).reshape(-1, 2)  # [P, 2]
    k = min(4, n)
    dist, idx = cKDTree(centres).query(grid, k, distance_upper_bound=reach)
    dist, idx = dist.reshape(len(grid), k), idx.reshape(len(grid), k)
    far = idx >= n
    power = np.where(far, np.inf, dist - radii[np.minimum(idx, n - 1)])  # ||x - c|| - r
    best = power.argmin(1)
    label = idx[np.arange(len(grid)), best]
    label = np.where(power[np.arange(len(grid)), best] <= expansion, label, -1)
    labels = label.reshape(len(xs), len(ys))  # [X, Y]
    area = np.bincount(labels[labels >= 0], minlength=n).astype(np.float64)
    if (area == 0).any():
        raise GraphDataError("segment: a nucleus got no pixel; refine the pixel size")
    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    on = labels >= 0
    centroid = np.stack(
        [
            np.bincount(labels[on], gx[on], minlength=n) / area,
            np.bincount(labels[on], gy[on], minlength=n) / area,
        ],
        1,
    )
    padded = np.pad(labels, 1, constant_values=-1)
    a = np.concatenate([padded[:-1, :].ravel(), padded[:, :-1].ravel()])
    b = np.concatenate([padded[1:, :].ravel(), padded[:, 1:].ravel()])
    diff = a != b
    a, b = a[diff], b[diff]
    perimeter = (np.bincount(a[a >= 0], minlength=n) + np.bincount(b[b >= 0], minlength=n)).astype(
        np.float64
    )
    both = (a >= 0) & (b >= 0)
    code = np.concatenate([a[both] * n + b[both], b[both] * n + a[both]])
    uniq, cnt = np.unique(code, return_counts=True)
    contact = np.stack([uniq // n, uniq % n, cnt * pixel], 1).astype(np.float64)
    return {
        "centroid": centroid,
        "area": area * pixel**2,
        "perimeter": perimeter * pixel,
        "contact": contact,
        "labels": labels,
        "origin": lo,
    }


def draw_couplings(
    n_genes: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Unscaled ``W0`` (tree + cycles, zero diagonal) and ``K0`` (relays + signed diagonal).

    Returns ``(W0, K0, genes)``, float64 ``[G, G]`` symmetric; ``genes`` holds ``parent``
    ``[G]`` (the tree, -1 at the root) and ``inhibit`` (genes with a negative ``K0`` diagonal).
    """
    g = n_genes
    if g < 4:
        raise GraphDataError(f"n_genes: expected >= 4, got {g}")
    while True:
        parent = np.r_[-1, [int(rng.integers(c)) for c in range(1, g)]]
        support = np.zeros((g, g), dtype=bool)
        support[np.arange(1, g), parent[1:]] = True
        for _ in range(math.ceil(g / 5)):
            a, b = rng.choice(g, 2, replace=False)
            support[a, b] = True
        support = support | support.T
        sign = np.where(rng.random((g, g)) < 0.6, 1.0, -1.0)
        w0 = np.triu(np.where(support, sign * rng.uniform(0.5, 1.0, (g, g)), 0.0), 1)
        w0 = w0 + w0.T
        tree = np.zeros((g, g), dtype=bool)
        tree[np.arange(1, g), parent[1:]] = True
        tree = tree | tree.T
        two = ((tree.astype(int) @ tree.astype(int)) > 0) & ~tree & ~np.eye(g, dtype=bool)
        k0 = np.zeros((g, g))
        for a in np.flatnonzero(rng.random(g) < 0.4):
            options = np.flatnonzero(two[a])
            if len(options):
                b = int(rng.choice(options))
                k0[a, b] = k0[b, a] = (1.0 if rng.random() < 0.5 else -1.0) * rng.uniform(0.4, 1)
        if (w0 > 0).any() and (w0 < 0).any() and (k0 != 0).any():
            break
    u = rng.random(g)
    diag = np.where(u < 0.6, rng.uniform(0.3, 1.0, g), -rng.uniform(0.3, 0.8, g))
    diag[u >= 0.8] = 0.0
    k0 = k0 + np.diag(diag)
    return w0, k0, {"parent": parent, "inhibit": np.flatnonzero(diag < 0)}


def site_parameters(n_genes: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Site parameters ``lam``, ``scale``, ``dof``, ``offset`` ``[G]`` (module docstring)."""
    return {
        "lam": rng.uniform(0.4, 0.8, n_genes),
        "scale": rng.uniform(0.8, 1.3, n_genes),
        "dof": rng.uniform(1.5, 4.0, n_genes),
        "offset": np.where(rng.random(n_genes) < 0.5, 1.0, -1.0) * rng.uniform(0.2, 0.5, n_genes),
    }


def _site(y: np.ndarray, site: dict[str, np.ndarray]) -> np.ndarray:
    nu, s = site["dof"], site["scale"]
    r = y - site["offset"]
    return -0.5 * site["lam"] * y**2 - 0.5 * (nu + 1) * np.log1p(r**2 / (nu * s**2))


def log_density(
    y: np.ndarray,
    edge_index: np.ndarray,
    weight: np.ndarray,
    site: dict[str, np.ndarray],
    w_intra: np.ndarray,
    w_inter: np.ndarray,
) -> float:
    r""":math:`E(Y)` of the module docstring (:math:`\log p` up to its constant), ``y [N, G]``."""
    return float(_site(y, site).sum()) + coupling_energy(y, edge_index, weight, w_intra, w_inter)


def coupling_energy(
    y: np.ndarray,
    edge_index: np.ndarray,
    weight: np.ndarray,
    w_intra: np.ndarray,
    w_inter: np.ndarray,
) -> float:
    r"""Celcomen's quadratic terms of :math:`E`: :math:`\sum_i y_i^\top W_{\mathrm{intra}} y_i +
    \sum_{j \to i} w_{ij}\, y_i^\top W_{\mathrm{inter}} y_j` for ``y [N, G]`` (also the beads
    world's, :mod:`benchmarks.tissue_beads`)."""
    src, dst = edge_index
    own = np.einsum("ig,gh,ih->", y, w_intra, y)
    pairs = float((weight * np.einsum("eg,gh,eh->e", y[dst], w_inter, y[src])).sum())
    return float(own + pairs)


def grad_log_density(
    y: np.ndarray, s: Any, site: dict[str, np.ndarray], w_intra: np.ndarray, w_inter: np.ndarray
) -> np.ndarray:
    r""":math:`\nabla E` for ``y`` ``[N, ..., G]`` (any chain axes), ``s`` = :math:`A + A^\top`
    (:func:`benchmarks.tissue_gibbs_pln.symmetric_adjacency`)."""
    n = y.shape[0]
    nu, sc = site["dof"], site["scale"]
    r = y - site["offset"]
    msg = (s @ y.reshape(n, -1)).reshape(y.shape)  # n_i
    return -site["lam"] * y - (nu + 1) * r / (nu * sc**2 + r**2) + 2 * y @ w_intra + msg @ w_inter


def configurational_temperature(
    y: np.ndarray, s: Any, site: dict[str, np.ndarray], w_intra: np.ndarray, w_inter: np.ndarray
) -> float:
    r""":math:`\sum (\partial E)^2 / \sum (-\partial^2 E)` over all entries of ``y`` ``[N, G]``:
    1 in expectation under :math:`p \propto e^E` (the diagonal of :math:`\nabla^2 E` is the
    site's, :math:`-\lambda - (\nu + 1)(\nu s^2 - r^2)/(\nu s^2 + r^2)^2`; no self-loops)."""
    grad = grad_log_density(y, s, site, w_intra, w_inter)
    nu, sc = site["dof"], site["scale"]
    r = y - site["offset"]
    curv = site["lam"] + (nu + 1) * (nu * sc**2 - r**2) / (nu * sc**2 + r**2) ** 2
    return float((grad**2).sum() / curv.sum())


@dataclass
class ScaleMixtureReport(GibbsReport):
    """Diagnostics of :func:`scale_mixture_gibbs`: a Gibbs run's, and these."""

    r_hat_max: float  # largest Gelman-Rubin R-hat of the traced per-gene means / mean squares
    autocorrelation_sweeps: float  # largest integrated autocorrelation time, in sweeps
    thin: int  # sweeps between the traced states
    config_temperature: float  # sum (dE)^2 / sum (-d2E) of chain 0's final state (1 = at rest)
    mean_tau: float  # mean auxiliary precision factor of the last sweep (1 = the t prior's)


def scale_mixture_gibbs(
    edge_index: np.ndarray,
    weight: np.ndarray,
    site: dict[str, np.ndarray],
    w_intra: np.ndarray,
    w_inter: np.ndarray,
    n_cells: int,
    *,
    sweeps: int = 200,
    burn_in: int = 100,
    thin: int = 2,
    seed: int = 0,
) -> tuple[np.ndarray, ScaleMixtureReport]:
    r"""Two chains of the scale-mixture Gibbs sampler of :math:`p \propto e^E` (module doc).

    Args:
        edge_index: ``[2, E]`` edges j -> i.
        weight: ``[E]`` edge weights.
        site: ``lam``, ``scale``, ``dof``, ``offset`` ``[G]`` (:func:`site_parameters`).
        w_intra: ``[G, G]`` symmetric, zero diagonal; ``diag(lam) - 2 w_intra`` positive
            definite.
        w_inter: ``[G, G]`` symmetric.
        n_cells: ``N``.
        sweeps: Sweeps after burn-in (default 200).
        burn_in: Sweeps first (default 100), discarded; nothing adapts.
        thin: Sweeps between the states traced after burn-in (default 2).
        seed: Seed of the starts and the draws.

    Returns:
        ``(y, report)``: final states ``[N, 2, G]`` and a :class:`ScaleMixtureReport`.
    """
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    g = w_intra.shape[0]
    if not (np.allclose(w_intra, w_intra.T) and np.allclose(w_inter, w_inter.T)):
        raise GraphDataError("w_intra, w_inter: expected symmetric matrices")
    if np.any(np.diag(w_intra) != 0):
        raise GraphDataError("w_intra: expected a zero diagonal (the site potential holds it)")
    if thin < 1 or sweeps < 1 or burn_in < 0:
        raise GraphDataError(
            f"thin, sweeps, burn_in: expected >= 1, >= 1 and >= 0, got {thin}, {sweeps}, {burn_in}"
        )
    lam, sc, nu, off = (np.asarray(site[k], np.float64) for k in ("lam", "scale", "dof", "offset"))
    if (lam <= 0).any() or (sc <= 0).any() or (nu <= 0).any():
        raise GraphDataError("site: expected lam, scale and dof > 0")
    base = -2.0 * w_intra  # [G, G] Lambda_off
    try:
        np.linalg.cholesky(np.diag(lam) + base)
    except np.linalg.LinAlgError as err:
        raise GraphDataError("diag(lam) - 2 w_intra: expected positive definite") from err
    s = symmetric_adjacency(edge_index, weight, n_cells)
    colours = greedy_colouring(edge_index, n_cells)
    rows = [s[idx] for idx in colours]
    diag = np.arange(g)
    y = np.zeros((n_cells, 2, g))
    y[:, 1] = 3.0 / np.sqrt(lam) * rng.standard_normal((n_cells, g))
    tau = np.ones_like(y)
    trace = []
    for sweep in range(burn_in + sweeps):
        tau = rng.gamma((nu + 1) / 2, 2.0 / (nu + (y - off) ** 2 / sc**2))  # [N, 2, G]
        for idx, s_rows in zip(colours, rows):
            m = len(idx)
            msg = (s_rows @ y.reshape(n_cells, 2 * g)).reshape(m, 2, g)  # [m, 2, G] n_i
            t = tau[idx]
            prec = np.broadcast_to(base, (m, 2, g, g)).copy()  # [m, 2, G, G] P_i
            prec[..., diag, diag] += lam + t / sc**2
            h = t * off / sc**2 + msg @ w_inter  # [m, 2, G]
            chol = np.linalg.cholesky(prec)  # P = L L^T
            z = np.linalg.solve(chol, h[..., None])[..., 0]  # L^{-1} h
            z += rng.standard_normal((m, 2, g))
            y[idx] = np.linalg.solve(np.swapaxes(chol, -1, -2), z[..., None])[..., 0]
        if sweep >= burn_in and (sweep - burn_in + 1) % thin == 0:
            trace.append(np.concatenate([y.mean(0), (y**2).mean(0)], -1))  # [2, 2G]
    if not np.isfinite(y).all():
        raise GraphDataError("scale_mixture_gibbs: non-finite state")
    max_z, null_median = chain_agreement(y)
    traced = np.asarray(trace).reshape(-1, 2, 2 * g)
    report = ScaleMixtureReport(
        x2_max_z=max_z,
        x2_z_null_median=null_median,
        n_colours=len(colours),
        sweeps=burn_in + sweeps,
        seconds=time.perf_counter() - start,
        r_hat_max=_r_hat(traced),
        autocorrelation_sweeps=thin * _autocorrelation_time(traced),
        thin=thin,
        config_temperature=configurational_temperature(y[:, 0], s, site, w_intra, w_inter),
        mean_tau=float(tau.mean()),
    )
    return y, report


def spillover_matrix(
    contact: np.ndarray, perimeter: np.ndarray, spillover: float
) -> tuple[sp.csr_matrix, np.ndarray]:
    r"""``(S, eps)``: :math:`\lambda = S \mu` (module docstring) and the per-cell spill
    :math:`\epsilon_j = \epsilon \sum_m b_{jm} / \mathrm{perimeter}_j`; ``S`` ``[N, N]`` CSR,
    columns summing to 1 (every transcript lands in one cell)."""
    n = len(perimeter)
    a, b, length = contact[:, 0].astype(np.int64), contact[:, 1].astype(np.int64), contact[:, 2]
    touching = np.bincount(a, length, minlength=n)  # [N] sum_m b_am
    eps = spillover * touching / perimeter
    share = eps[a] * length / np.maximum(touching[a], 1e-300)  # eps_a pi_ab
    s = sp.coo_matrix(
        (np.r_[1.0 - eps, share], (np.r_[np.arange(n), b], np.r_[np.arange(n), a])), shape=(n, n)
    )
    return s.tocsr(), eps


def detect(
    mu: np.ndarray,
    contact: np.ndarray,
    perimeter: np.ndarray,
    rng: np.random.Generator,
    *,
    spillover: float = 0.08,
    zero_inflation: float = 0.02,
) -> np.ndarray:
    r"""Imaging detection of transcripts with expected counts ``mu`` ``[N, G]``: Poisson
    transcripts, segmentation spillover into touching cells, decoding dropout (module
    docstring), drawn transcript by transcript (binomial splits). int64 ``[N, G]``."""
    mu = np.asarray(mu, dtype=np.float64)
    if (mu < 0).any() or not 0 <= spillover < 1 or not 0 <= zero_inflation < 1:
        raise GraphDataError(
            f"mu, spillover, zero_inflation: expected >= 0, in [0, 1) and in [0, 1), got min "
            f"{mu.min()}, {spillover}, {zero_inflation}"
        )
    n, g = mu.shape
    _, eps = spillover_matrix(contact, perimeter, spillover)
    own = rng.poisson(mu)  # [N, G] T_jg
    leak = rng.binomial(own, eps[:, None])  # [N, G] transcripts assigned elsewhere
    out = own - leak
    # each cell's leaked transcripts go to its touching cells ~ b_jl: sequential binomials over
    # the cell's contacts (a multinomial), contacts sorted by cell
    a, b, length = contact[:, 0].astype(np.int64), contact[:, 1].astype(np.int64), contact[:, 2]
    order = np.lexsort((b, a))
    a, b, length = a[order], b[order], length[order]
    start = np.searchsorted(a, np.arange(n))
    rank = np.arange(len(a)) - start[a]
    remaining_len = np.bincount(a, length, minlength=n).astype(np.float64)  # [N]
    left = leak.copy()
    for r in range(int(rank.max()) + 1 if len(rank) else 0):
        sel = rank == r
        src, dst, ln = a[sel], b[sel], length[sel]
        p = np.clip(ln / remaining_len[src], 0.0, 1.0)
        moved = rng.binomial(left[src], p[:, None])  # [C_r, G]
        np.add.at(out, dst, moved)
        left[src] -= moved
        remaining_len[src] -= ln
    if zero_inflation > 0:
        out[rng.random((n, g)) < zero_inflation] = 0
    return out.astype(np.int64)


def xenium_counts(
    y: np.ndarray,
    cell_type: np.ndarray,
    seg: dict[str, np.ndarray],
    rng: np.random.Generator,
    *,
    panel_size: int,
    spillover: float = 0.08,
    zero_inflation: float = 0.02,
    mean_range: tuple[float, float] = (0.8, 25.0),
    capture_sd: float = 0.25,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    r"""Panel counts of an imaging slide (module docstring).

    Returns ``(counts int64 [N, P], coupled [G] positions in var, params)``; ``params``:
    ``size_factor`` ``[N]``, ``efficiency`` ``[P]``, ``rate`` ``[N, P]`` (:math:`\mu`, before
    spillover), ``observed_rate`` ``[N, P]`` (:math:`\lambda = S\mu`), ``spill`` ``[N]``
    (:math:`\epsilon_j`), ``gene_mean`` ``[G]`` (:math:`m_g`), ``baseline`` ``[G]``
    (:math:`\alpha_g`), ``base_mean`` ``[P]`` (:math:`b_j`, NaN on coupled genes),
    ``marker_type`` ``[P]`` (-1: none), ``role`` ``[P]`` (str), ``total_counts`` ``[N]``.
    """
    n, g = y.shape
    if panel_size < g + 10:
        raise GraphDataError(f"panel_size: expected >= G + 10 = {g + 10}, got {panel_size}")
    area = seg["area"]
    log_s = np.log(area / np.median(area)) + capture_sd * rng.standard_normal(n)
    size = np.exp(log_s - log_s.mean())  # [N] geometric mean 1
    efficiency = np.exp(0.5 * rng.standard_normal(panel_size))  # [P] eta
    coupled = np.sort(rng.choice(panel_size, g, replace=False))
    others = np.setdiff1d(np.arange(panel_size), coupled)
    lo, hi = np.log(mean_range)
    strata = (rng.permutation(g) + rng.random(g)) / g
    gene_mean = np.exp(lo + strata * (hi - lo))
    eta_c = efficiency[coupled]
    alpha = np.log(gene_mean) - np.log((size[:, None] * np.exp(y)).mean(0))
    rate = np.empty((n, panel_size))
    rate[:, coupled] = size[:, None] * eta_c * np.exp(alpha + y)  # [N, G]
    base = np.full(panel_size, np.nan)
    base[others] = np.exp(math.log(0.15) + rng.standard_normal(len(others)))
    marker_type = np.full(panel_size, -1)
    is_marker = rng.random(len(others)) < 0.4
    marker_type[others[is_marker]] = rng.integers(len(CELL_TYPES), size=int(is_marker.sum()))
    fold = np.where(marker_type >= 0, rng.uniform(2.0, 3.5, panel_size), 0.0)
    effect = np.where(cell_type[:, None] == marker_type[None, others], fold[others], 0.0)
    rate[:, others] = size[:, None] * efficiency[others] * base[others] * np.exp(effect)
    s_mat, eps = spillover_matrix(seg["contact"], seg["perimeter"], spillover)
    counts = detect(
        rate, seg["contact"], seg["perimeter"], rng, spillover=spillover,
        zero_inflation=zero_inflation,
    )  # fmt: skip
    role = np.full(panel_size, "panel", dtype=object)
    role[marker_type >= 0] = "marker"
    role[coupled] = "coupled"
    params = {
        "size_factor": size,
        "efficiency": efficiency,
        "rate": rate,
        "observed_rate": np.asarray(s_mat @ rate),
        "spill": eps,
        "gene_mean": gene_mean,
        "baseline": alpha,
        "base_mean": base,
        "marker_type": marker_type,
        "role": role.astype(str),
        "total_counts": counts.sum(1),
    }
    return counts, coupled, params


@dataclass(kw_only=True)
class XeniumTissue:
    """A tissue of :func:`simulate`: segmented cells, graph, truth over the coupled genes, latent
    rows, and the panel's counts (``counts`` ``[N, P]`` in var order; coupled genes at
    ``coupled``)."""

    coords: np.ndarray  # [N, 2] segmented centroids, um
    edge_index: np.ndarray  # [2, E] j -> i
    edge_weight: np.ndarray  # [E] GCN weights
    W_intra: np.ndarray  # [G, G] zero diagonal  # noqa: N815
    W_inter: np.ndarray  # [G, G]  # noqa: N815
    x: np.ndarray  # [N, G] latent rows on the sphere
    latent: np.ndarray  # [N, G]
    counts: np.ndarray  # [N, P] int64
    coupled: np.ndarray  # [G] positions of the coupled genes in var, increasing
    log1p: np.ndarray  # [N, P] float32
    cell_type: np.ndarray  # [N] index into CELL_TYPES
    segmentation: dict[str, np.ndarray]  # area, perimeter, contact, nucleus centre / radius
    count_params: dict[str, Any]
    report: ScaleMixtureReport
    field: dict[str, np.ndarray]  # site parameters, W_intra, W_inter
    genes: dict[str, np.ndarray]  # tree parents, lateral inhibition
    params: dict[str, Any] = field(default_factory=dict)

    def to_anndata(self, *, sparse: bool = True) -> Any:
        """AnnData of the panel: ``X`` and ``layers['counts']`` (float32 CSR, or dense int64 with
        ``sparse=False``), ``layers['log1p']``, ``layers['signed']``, ``var['highly_variable']``
        True exactly on the coupled genes, ``obs['total_counts']``, ``obs['transcript_counts']``,
        ``obs['n_genes_by_counts']``, ``obs['cell_area']``, ``obs['cell_type']``,
        ``obsm['spatial']`` (centroids, um), the graph of ``spatial_neighbors_knn`` and
        ``uns['tissue_xenium']`` (parameters, sampler, the truth ``W_intra`` / ``W_inter`` and
        the coupled genes' names)."""
        import pandas as pd

        total = self.counts.sum(1)
        obs = {
            "total_counts": total,
            "transcript_counts": total,
            "n_genes_by_counts": (self.counts > 0).sum(1),
            "cell_area": self.segmentation["area"],
            "cell_type": pd.Categorical([CELL_TYPES[t] for t in self.cell_type]),
        }
        return coupled_anndata(self, key="tissue_xenium", digits=3, obs=obs, sparse=sparse)


def simulate(
    n_cells: int,
    n_genes: int,
    *,
    seed: int = 0,
    k: int = 6,
    sweeps: int = 200,
    burn_in: int = 100,
    thin: int = 2,
    intra_norm: float = 0.6,
    margin: float = 0.9,
    panel_size: int | None = None,
    spillover: float = 0.08,
    zero_inflation: float = 0.02,
    expansion: float = 5.0,
) -> XeniumTissue:
    """Segmented layout, graph, truth, Gibbs states and panel counts of one tissue (module
    docstring). ``panel_size`` None draws it uniformly from 300-480. Every draw comes from
    ``numpy.random.default_rng(seed)`` and its spawned streams, so a seed reproduces the
    tissue."""
    if n_cells <= k:
        raise GraphDataError(f"n_cells: expected more than k = {k} cells, got {n_cells}")
    if not (0 < intra_norm < 1 and 0 < margin < 1):
        raise GraphDataError(
            f"intra_norm, margin: expected in (0, 1) (Q_0 positive definite), got {intra_norm}, "
            f"{margin}"
        )
    streams = np.random.default_rng(seed).spawn(5)
    nuclei, radii, cell_type, layout = xenium_nuclei(n_cells, streams[0])
    seg = segment(nuclei, radii, expansion=expansion)
    coords = seg["centroid"]
    edge_index = knn_edges(coords, k)
    weight = gcn_weights(edge_index, n_cells)
    w0, k0, genes = draw_couplings(n_genes, streams[1])
    site = site_parameters(n_genes, streams[2])
    half = 1.0 / np.sqrt(site["lam"])
    lam_off = -2.0 * w0
    lam_off *= intra_norm / np.linalg.norm(half[:, None] * lam_off * half[None], 2)
    kappa, rho_s = coupling_scale(
        edge_index, weight, n_cells, np.diag(site["lam"]) + lam_off, k0, margin,
        v0=np.ones(n_cells),
    )  # fmt: skip
    w_intra, w_inter = -0.5 * lam_off, kappa * k0
    states, report = scale_mixture_gibbs(
        edge_index, weight, site, w_intra, w_inter, n_cells, sweeps=sweeps, burn_in=burn_in,
        thin=thin, seed=int(streams[3].integers(2**62)),
    )  # fmt: skip
    latent = states[:, 0]
    rng = streams[4]
    if panel_size is None:
        panel_size = int(rng.integers(300, 481))
    counts, coupled, count_params = xenium_counts(
        latent, cell_type, seg, rng, panel_size=panel_size, spillover=spillover,
        zero_inflation=zero_inflation,
    )  # fmt: skip
    params = {
        "n_cells": n_cells,
        "n_genes": n_genes,
        "seed": seed,
        "k": k,
        "sweeps": sweeps,
        "burn_in": burn_in,
        "thin": thin,
        "intra_norm": intra_norm,
        "margin": margin,
        "kappa": kappa,
        "rho_adjacency": rho_s,
        "panel_size": panel_size,
        "spillover": spillover,
        "zero_inflation": zero_inflation,
        "expansion": expansion,
        "n_glands": len(layout["glands"]),
        "mean_spill": float(count_params["spill"].mean()),
    }
    segmentation = {
        "area": seg["area"],
        "perimeter": seg["perimeter"],
        "contact": seg["contact"],
        "nucleus": nuclei,
        "nucleus_radius": radii,
        "gland": layout["gland"],
    }
    return XeniumTissue(
        coords=coords,
        edge_index=edge_index,
        edge_weight=weight,
        W_intra=w_intra,
        W_inter=w_inter,
        x=latent / np.linalg.norm(latent, axis=1, keepdims=True),
        latent=latent,
        counts=counts,
        coupled=coupled,
        log1p=_log1p_normalised(counts),
        cell_type=cell_type,
        segmentation=segmentation,
        count_params=count_params,
        report=report,
        field={**site, "W_intra": w_intra, "W_inter": w_inter},
        genes=genes,
        params=params,
    )
