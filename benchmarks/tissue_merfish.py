r"""An eleventh tissue simulator: a MERFISH / CosMx-like section of a layered cortex.

The world of ``bench_celcomen_counts --world merfish`` (session 27), written by a helper who did not
read the library's Celcomen code (``spatial/celcomen.py``, ``_inputs.py``, ``objectives.py``,
``_solver.py``, ``model.py``, ``tools.py``, ``tl.py``) and never fitted it on this world; held out
until its one run in session 32 with the code unchanged (``benchmarks/RESULTS.md``). It looks like
an imaging-based (MERFISH / CosMx) single-cell slide of a **cortex**: a **10 um section of a 3-D
tissue**, so the cells are spheres cut by the slab and each keeps only the **fraction of its volume
the section holds**; **laminae** L1-L6 and white matter with their own cell densities and cell
types; a targeted panel of 120-500 genes of which ``G`` are coupled (``var['highly_variable']``).
Its stages differ from the other ten: the layout (a 3-D hard-core process in wavy laminae,
projected); a **log-generalised-inverse-Gaussian site potential** (:math:`\beta t - \kappa \cosh
t`); couplings that are **not quadratic**: products of **Hill functions** of the genes' expression
(a reciprocal gene regulatory network of transcription factors and their targets, and
ligand-receptor pairs between cells), so the field is the stationary law of a **gene-regulatory
stochastic differential equation** and the truth is its drift's mean Jacobian; a **kinetic Langevin
sampler** (generalised HMC: partial momentum refresh, one leapfrog step, a Metropolis test per
cell); and **imaging detection**: section capture, per-gene decoding efficiency, **optical
crowding** (detection falls with the local density of transcripts) and **false-positive codewords**.
Neither ``spatial.simulate`` nor ``spatial.model`` is imported; the graph comes from
:func:`graphdata.spatial.knn_graph`, the colouring from :mod:`benchmarks.tissue_metropolis`.

**Layout** (:func:`cortex_cells`; units um). A strip of cortex, ``x`` along the surface, ``d``
the depth below the pia, ``z`` across the section. Laminae bounded at depths 120, 360, 500, 700
and 900 (white matter to 1,050), each boundary waving as :math:`b + 12 \sin(2\pi x / 400 +
\phi_b)`; cell centres a Poisson process in 3-D of intensity per lamina (per um^3, x 1e-4: L1
0.35, L2/3 1.3, L4 1.6, L5 0.9, L6 1.2, white matter 0.8) over :math:`z \in [-r_{\max}, T +
r_{\max}]`; cell types by lamina (:data:`LAMINA_TYPES`: excitatory neurons of the lamina,
inhibitory neurons, astrocytes, oligodendrocytes, microglia, endothelial cells) and soma radii by
type (:data:`RADIUS`, uniform in a range: L5 pyramidal 8-11, oligodendrocytes 3.5-4.5); a
**Matérn type-II hard core in 3-D** (two somata clash when closer than :math:`r_a + r_b`; the one
of larger uniform mark goes). The section is :math:`0 \le z \le T` (``thickness`` 10); a cell of
radius ``r`` centred at ``z`` keeps the **section fraction**

.. math::
    f = \frac{V(\mathrm{clip}(T - z)) - V(\mathrm{clip}(-z))}{\tfrac43 \pi r^3}, \qquad
    V(t) = \tfrac{\pi}{3} (r + t)^2 (2r - t), \quad \mathrm{clip}(t) = \min(r, \max(-r, t)),

(:func:`section_fraction`, :math:`V(t)` the volume of the ball below the plane at height ``t``
from its centre), and its **segmented area** is the largest cross-section in the slab,
:math:`\pi(r^2 - \delta^2)`, :math:`\delta` the distance from the centre to the slab (0 inside).
Cells with :math:`f <` ``min_fraction`` (0.15) are not segmented; the ``N`` kept are those of
least ``x`` (the strip is widened until it holds ``N``). Positions: :math:`(x, d)` (the 2-D
projection; cells at different ``z`` may overlap there). Directed k-NN graph on the positions
(k = 6), edges :math:`j \to i`, GCN weights :math:`w_{ij} = 1/\sqrt{d_i d_j}` (every in-degree is
k, so :math:`w = 1/6`; ``A[i, j] = w_ij``), as Celcomen's default (``spatial_neighbors_knn``
rebuilds it from ``obsm['spatial']``).

**Latent field.** :math:`Y \in \mathbb R^{N \times G}`, :math:`y_{ig}` the log-expression of
coupled gene ``g`` in cell ``i``, density :math:`p \propto e^{E}`,

.. math::
    E(Y) = \sum_i \sum_g \big[\beta_g (y_{ig} - m_{ig}) - \kappa_g \cosh(y_{ig} - m_{ig})\big]
        + \sum_i \phi(y_i)^\top J\, \phi(y_i)
        + \sum_i \sum_{j \to i} w_{ij}\, \phi(y_i)^\top K\, \phi(y_j),

with the **Hill function** :math:`\phi_g(y) = x^{n_g} / (x^{n_g} + e^{n_g \theta_g}) =
\sigma(n_g (y - \theta_g))` of the expression :math:`x = e^y` (:math:`\sigma` the logistic;
threshold :math:`e^{\theta_g}`, cooperativity :math:`n_g`), applied entrywise. A lone gene's
:math:`e^{y}` is a generalised inverse Gaussian variable, :math:`\mathrm{GIG}(p = \beta_g, a =
\kappa_g e^{-m}, b = \kappa_g e^{m})` (exponential tails on both sides of the log, skewed by
:math:`\beta_g`). Site parameters (:func:`site_parameters`): :math:`\kappa_g \sim U(0.6, 1.2)`,
:math:`\beta_g = \pm U(0.1, 0.6)`, :math:`n_g \sim U(1.5, 3)`, :math:`\theta_g = \mathrm{asinh}
(\beta_g / \kappa_g) + U(-0.5, 0.5)` (near the lone gene's mode), and a **laminar shift**
:math:`m_{ig} = \delta_{\ell(i) g}`, :math:`\delta \sim` ``layer_shift`` (0.25) :math:`\times
\mathcal N(0, 1)` per lamina and gene (the cell's lamina moves its genes' set points; it enters
only the site terms). :math:`J` (symmetric, zero diagonal) is a **transcription-factor network**
(:func:`draw_couplings`): :math:`\lceil G/4 \rceil` (at least 2) genes are TFs; every other gene
is regulated by 1 or 2 (equally likely) distinct TFs, activation (+) with probability 0.6 else
repression, magnitude :math:`U(0.5, 1)`; each TF pair cross-represses (-) with probability 0.4
(toggle switches), magnitude :math:`U(0.5, 1)`. :math:`K` (symmetric) holds **ligand-receptor
pairs**: :math:`\max(1, \mathrm{round}(G/5))` non-TF genes are ligands, as many others receptors,
each ligand paired with one receptor (a receptor may take several), sign + with probability 0.6,
magnitude :math:`U(0.4, 1)`; its diagonal is a **community effect** :math:`+U(0.3, 1)` for 40 %
of the genes, **lateral inhibition** (Notch-Delta) :math:`-U(0.3, 0.8)` for 15 %, else 0; a draw
without both signs in :math:`J` and in :math:`K` is redrawn whole. The
interaction terms are bounded (:math:`|\phi| \le 1`), so :math:`e^E` is integrable for any
:math:`J, K`. **Scale**, the linearised analogue of the other worlds': with :math:`d_g =
\mathrm E\, \phi_g'` under the lone site density (:func:`lone_slope`) and :math:`C_g =
\sqrt{\kappa_g^2 + \beta_g^2}` (a lone site's curvature at its mode), :math:`\Lambda = 2 J
\circ d d^\top` is scaled to :math:`\lVert C^{-1/2} \Lambda C^{-1/2}\rVert_2 =` ``intra_norm``
(0.8) and :math:`K = \kappa K_0` with :math:`\rho(A +
A^\top)\,\rho(M^{-1/2} (K_0 \circ d d^\top) M^{-1/2})\,\kappa =` ``margin`` (0.9), :math:`M =
\mathrm{diag}(C) - \Lambda` (:func:`benchmarks.tissue_gibbs_pln.coupling_scale`).

**The SDE and the truth.** The tissue's expression follows the gene-regulatory SDE
:math:`dY = b(Y)\,dt + \sqrt 2\, dB`, drift :math:`b = \nabla E`:

.. math::
    b_{ig} = \beta_g - \kappa_g \sinh(y_{ig} - m_{ig})
        + \phi_g'(y_{ig}) \big[2 (J \phi(y_i))_g + (K \nu_i)_g\big], \qquad
    \nu_i = \sum_{j \to i} w_{ij} \phi(y_j) + \sum_{i \to l} w_{li} \phi(y_l),

(degradation / basal production, then regulation by the TFs of the same cell through their Hill
activities gated by the target's own Hill slope, and the ligands of the neighbouring cells), a
gradient drift with unit isotropic noise, so its stationary law is :math:`p \propto e^E`
(Fokker-Planck). The drift's Jacobian is the Hessian of :math:`E`: for :math:`g \ne h`,
:math:`\partial b_{ig} / \partial y_{ih} = 2 J_{gh} \phi_g'(y_{ig}) \phi_h'(y_{ih})` and, for
cells :math:`i \ne j`, :math:`\partial b_{ig} / \partial y_{jh} = (w_{ij} + w_{ji}) K_{gh}
\phi_g'(y_{ig}) \phi_h'(y_{jh})` (:math:`w_{ij} = 0` without the edge :math:`j \to i`). Since
:math:`\phi' > 0`, a positive entry of ``J`` / ``K`` means activation (the drift of ``g`` rises
with ``h``), a negative one repression. **The truth** is the tissue's mean Jacobian in
Celcomen's normalisation (:func:`truth_matrices`), at the tissue's own state :math:`Y`:

.. math::
    W_{\mathrm{intra}} = J \circ \frac1N \sum_i \phi'(y_i) \phi'(y_i)^\top, \qquad
    W_{\mathrm{inter}} = K \circ \frac{\sum_{j \to i} w_{ij} \big[\phi'(y_i) \phi'(y_j)^\top
        + \phi'(y_j) \phi'(y_i)^\top\big]}{2 \sum_{j \to i} w_{ij}},

``W_intra`` with zero diagonal: the unique matrices (``W_inter`` symmetric) for which Celcomen's
energy :math:`\sum_i y_i^\top W_{\mathrm{intra}} y_i + \sum_{j \to i} w_{ij} y_i^\top
W_{\mathrm{inter}} y_j` has the same summed mixed second derivatives over the tissue as
:math:`E`: :math:`\sum_i \partial^2 E / \partial y_{ig} \partial y_{ih} = 2N
(W_{\mathrm{intra}})_{gh}` (:math:`g \ne h`) and :math:`\sum_{i \ne j} \partial^2 E / \partial
y_{ig} \partial y_{jh} = 2 \sum_e w_e\, (W_{\mathrm{inter}})_{gh}`. Its signs are those of
``J`` and ``K``; its scale carries how often the genes sit on the steep part of their Hill
functions.

**Sampler** (:func:`kinetic_langevin`). Generalised HMC (Horowitz 1991) on :math:`e^E` with unit
momenta :math:`p`, blocked by the colour classes of the undirected graph (cells of a class are
conditionally independent, so a class's cells move in parallel): per class, a partial momentum
refresh :math:`p \leftarrow c\,p + \sqrt{1 - c^2}\,\xi` (:math:`c = e^{-\gamma h}`, ``friction``
:math:`\gamma` = 1, ``step`` :math:`h` = 0.5), one leapfrog step (half kick, drift, half kick on
:math:`\nabla E`) and a Metropolis test per cell on :math:`E_i(y_i) - \tfrac12 \lVert p_i
\rVert^2` (the terms of :math:`E` holding :math:`y_i`); a rejected cell keeps its :math:`y_i` and
negates :math:`p_i`. Each move leaves :math:`e^{E} \mathcal N(p; 0, I)` invariant: the kinetic
Langevin discretisation of the SDE, corrected exactly. Two chains, from 0 and from the
uncoupled field (:math:`e^{y_{ig} - m_{ig}}` exact lone-gene GIG draws, :func:`lone_sites`);
``burn_in`` (100) sweeps discarded, then ``sweeps`` (200); every ``thin``-th (2nd) sweep the
per-gene mean and mean square over cells are traced (Gelman-Rubin :math:`\hat R`, integrated
autocorrelation time, :mod:`benchmarks.tissue_panel`'s estimators), the chains' final second
moments compared (:func:`benchmarks.tissue_gibbs_pln.chain_agreement`), the acceptance and the
configurational temperature :math:`\sum (\partial E)^2 / \sum (-\partial^2 E)` of chain 0's
final state (1 at equilibrium) reported. The tissue is chain 0's final state.

**Counts** (:func:`merfish_counts`, :func:`detect`). The panel has ``panel_size`` genes (default
uniform on 120-500); the coupled genes sit at random positions in ``var``. A cell's volume
relative to the median is :math:`V_i = (r_i / \tilde r)^3`. Expected molecules in the **whole**
cell: coupled gene ``g``, :math:`V_i e^{\alpha_g + y_{ig}}`, :math:`\alpha_g` set so that the
mean over cells of the molecules **in the section** :math:`f_i V_i e^{\alpha_g + y_{ig}}` is
:math:`m_g`, stratified log-uniform on (1, 20); other panel gene ``j``: :math:`V_i b_j
e^{F_{j t(i)}}`, :math:`\log b_j \sim \mathcal N(\log 0.5, 1)`, 40 % of them markers of one of
the nine types (:math:`F = U(1.5, 3)` in that type, else 0). They depend on the cell's type,
size and section fraction, not on :math:`Y`. Detection:

- section capture: each molecule lies in the section with probability :math:`f_i` (uniform in
  the soma);
- decoding: detected with probability :math:`\eta_g q_i`, :math:`\eta_g = \sigma(1.4 + 0.7
  z_g)` (per-gene efficiency, median 0.80) and the **optical crowding** factor :math:`q_i =
  \exp(-\gamma_c c_i)`, :math:`c_i` the expected in-section molecules of all panel genes of the
  cells within 10 um of cell ``i`` (itself included) per um^2 (:math:`/ 100\pi`), :math:`\gamma_c`
  set so the median :math:`q` is 1 - ``crowding`` (0.2): overlapping spots of dense regions fail
  to decode;
- **false positives**: misread codewords add :math:`\mathrm{Poisson}(\epsilon_i)` counts to every
  gene, :math:`\epsilon_i =` ``false_positive`` (0.03) :math:`\times a_i / \tilde a` (the
  segmented area over its median).

Drawn stage by stage (molecules Poisson, binomial section capture, binomial decoding, added
false positives), so by Poisson thinning and superposition the count is exactly

.. math::
    c_{ig} \sim \mathrm{Poisson}(\lambda_{ig}), \quad \lambda_{ig} = \eta_g q_i \mu_{ig} +
    \epsilon_i, \quad \mathrm E c = \mathrm{Var}\, c = \lambda, \quad P(c = 0) = e^{-\lambda},

:math:`\mu_{ig}` the expected molecules in the section, independent over cells and genes given
the rates. ``layers['counts']`` and ``X`` are float32 CSR by default (dense int64 with
``sparse=False``); ``obs['total_counts']``, ``obs['cell_area']`` (segmented),
``obs['section_fraction']``, ``obs['lamina']`` and ``obs['cell_type']``; ``layers['log1p']`` is
scanpy's ``normalize_total`` then ``log1p`` over the panel; ``layers['signed']`` holds
:math:`y_i / \lVert y_i\rVert` in the coupled columns, 0 elsewhere. Section fraction,
efficiencies, crowding and false positives stand between :math:`Y` and the counts, so **signs,
support and Pearson** of the off-diagonals compare; the scale (the inter / intra balance of the
truth) is reported.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

import numpy as np
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
    "LAMINAE",
    "LAMINA_TYPES",
    "RADIUS",
    "section_fraction",
    "cortex_cells",
    "draw_couplings",
    "site_parameters",
    "hill",
    "lone_slope",
    "lone_sites",
    "log_density",
    "cell_energy",
    "grad_log_density",
    "truth_matrices",
    "configurational_temperature",
    "kinetic_langevin",
    "detect",
    "merfish_counts",
    "LangevinReport",
    "MerfishTissue",
    "simulate",
]

CELL_TYPES = (
    "exc_L23",
    "exc_L4",
    "exc_L5",
    "exc_L6",
    "inhibitory",
    "astrocyte",
    "oligodendrocyte",
    "microglia",
    "endothelial",
)
#: Soma radius range (um) per type, in CELL_TYPES order.
RADIUS = np.array(
    [[6.0, 8.0], [5.0, 6.5], [8.0, 11.0], [6.0, 8.0], [5.5, 7.5], [4.0, 5.5], [3.5, 4.5],
     [3.0, 4.0], [3.0, 4.5]]
)  # fmt: skip
#: Laminae: name, upper boundary depth (um), cell density (per um^3, x 1e-4).
LAMINAE = (
    ("L1", 0.0, 0.35),
    ("L2/3", 120.0, 1.3),
    ("L4", 360.0, 1.6),
    ("L5", 500.0, 0.9),
    ("L6", 700.0, 1.2),
    ("WM", 900.0, 0.8),
)
#: White matter's lower boundary (um).
BOTTOM = 1050.0
#: Type composition per lamina, rows in LAMINAE order, columns in CELL_TYPES order.
LAMINA_TYPES = np.array(
    [
        [0.0, 0.0, 0.0, 0.0, 0.35, 0.35, 0.0, 0.15, 0.15],
        [0.72, 0.0, 0.0, 0.0, 0.13, 0.07, 0.02, 0.03, 0.03],
        [0.0, 0.78, 0.0, 0.0, 0.10, 0.05, 0.02, 0.02, 0.03],
        [0.0, 0.0, 0.65, 0.0, 0.14, 0.07, 0.07, 0.03, 0.04],
        [0.0, 0.0, 0.0, 0.70, 0.08, 0.06, 0.10, 0.03, 0.03],
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.12, 0.75, 0.08, 0.05],
    ]
)


def section_fraction(z: np.ndarray, radius: np.ndarray, thickness: float) -> np.ndarray:
    r"""Fraction of a ball (centre height ``z``, ``radius``) inside the slab ``0 <= z <= T``
    (module docstring: :math:`[V(\mathrm{clip}(T - z)) - V(\mathrm{clip}(-z))] / \tfrac43 \pi
    r^3`)."""
    z, r = np.asarray(z, np.float64), np.asarray(radius, np.float64)

    def below(t: np.ndarray) -> np.ndarray:  # volume of the ball below height t from its centre
        t = np.clip(t, -r, r)
        return math.pi / 3.0 * (r + t) ** 2 * (2 * r - t)

    return np.clip((below(thickness - z) - below(-z)) / (4.0 / 3.0 * math.pi * r**3), 0.0, 1.0)


def _boundaries(x: np.ndarray, phase: np.ndarray) -> np.ndarray:
    """Depths of the lamina boundaries L1/L2 ... L6/WM at ``x``, ``[len(x), 5]``."""
    base = np.array([lam[1] for lam in LAMINAE[1:]])
    return base + 12.0 * np.sin(2 * math.pi * np.asarray(x)[:, None] / 400.0 + phase)


def cortex_cells(
    n_cells: int,
    rng: np.random.Generator,
    *,
    thickness: float = 10.0,
    min_fraction: float = 0.15,
) -> dict[str, np.ndarray]:
    """Cells of a cortical strip cut by the section (module docstring).

    Returns ``coords`` ``[N, 2]`` (x, depth; um), ``z`` ``[N]`` (centre across the section),
    ``radius``, ``lamina`` (index into LAMINAE), ``cell_type`` (index into CELL_TYPES),
    ``fraction`` (section fraction), ``area`` (segmented area, um^2) ``[N]``, and ``phase``
    ``[5]`` (the boundaries' phases) and ``width`` (the strip's kept width).
    """
    if n_cells < 10:
        raise GraphDataError(f"n_cells: expected >= 10, got {n_cells}")
    if thickness <= 0 or not 0 <= min_fraction < 1:
        raise GraphDataError(
            f"thickness, min_fraction: expected > 0 and in [0, 1), got {thickness}, {min_fraction}"
        )
    phase = rng.uniform(0, 2 * math.pi, len(LAMINAE) - 1)
    r_max = float(RADIUS.max())
    dens = np.array([lam[2] for lam in LAMINAE]) * 1e-4
    zr = (-r_max, thickness + r_max)
    # kept cells per um of strip width, roughly: density x depth x (T + r) x survival
    width = 1.3 * n_cells / (float(dens.mean()) * BOTTOM * (thickness + 6.0) * 0.6)
    while True:
        volume = width * BOTTOM * (zr[1] - zr[0])
        m = int(rng.poisson(volume * dens.max()))
        pts = rng.random((m, 3)) * [width, BOTTOM, zr[1] - zr[0]] + [0.0, 0.0, zr[0]]
        lamina = (pts[:, 1:2] > _boundaries(pts[:, 0], phase)).sum(1)
        keep = rng.random(m) < dens[lamina] / dens.max()  # thinning to the lamina's density
        pts, lamina = pts[keep], lamina[keep]
        cdf = np.cumsum(LAMINA_TYPES, 1)[lamina]  # [M, T]
        cell_type = np.minimum((rng.random(len(pts))[:, None] > cdf).sum(1), len(CELL_TYPES) - 1)
        lo, hi = RADIUS[cell_type, 0], RADIUS[cell_type, 1]
        radius = lo + (hi - lo) * rng.random(len(pts))
        # Matérn II in 3-D: a soma goes when it clashes with one of smaller mark
        marks = rng.random(len(pts))
        pairs = cKDTree(pts).query_pairs(2 * r_max, output_type="ndarray")
        dist = np.linalg.norm(pts[pairs[:, 0]] - pts[pairs[:, 1]], axis=1)
        clash = pairs[dist < radius[pairs[:, 0]] + radius[pairs[:, 1]]]
        alive = np.ones(len(pts), dtype=bool)
        alive[np.where(marks[clash[:, 0]] > marks[clash[:, 1]], clash[:, 0], clash[:, 1])] = False
        frac = section_fraction(pts[:, 2], radius, thickness)
        seen = np.flatnonzero(alive & (frac >= min_fraction) & (frac > 0))
        if len(seen) >= n_cells:
            break
        width *= 1.3
    order = np.sort(seen[np.argsort(pts[seen, 0], kind="stable")[:n_cells]])
    z, r = pts[order, 2], radius[order]
    gap = np.maximum(np.maximum(-z, z - thickness), 0.0)  # centre's distance to the slab
    return {
        "coords": pts[order, :2].copy(),
        "z": z,
        "radius": r,
        "lamina": lamina[order],
        "cell_type": cell_type[order],
        "fraction": frac[order],
        "area": math.pi * (r**2 - gap**2),
        "phase": phase,
        "width": float(pts[order, 0].max()),
    }


def draw_couplings(
    n_genes: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Unscaled ``J0`` (TF network, zero diagonal) and ``K0`` (ligand-receptor pairs, signed
    diagonal), float64 ``[G, G]`` symmetric (module docstring).

    Returns ``(J0, K0, genes)``; ``genes`` holds ``tf``, ``ligand``, ``receptor`` (gene indices),
    ``community`` and ``inhibit`` (genes with a positive / negative ``K0`` diagonal).
    """
    g = n_genes
    if g < 4:
        raise GraphDataError(f"n_genes: expected >= 4, got {g}")
    n_tf = max(2, math.ceil(g / 4))
    n_lr = max(1, round(g / 5))
    while True:
        order = rng.permutation(g)
        tf, rest = np.sort(order[:n_tf]), order[n_tf:]
        j0 = np.zeros((g, g))
        for target in rest:
            for reg in rng.choice(tf, 1 + int(rng.random() < 0.5), replace=False):
                j0[reg, target] = (1.0 if rng.random() < 0.6 else -1.0) * rng.uniform(0.5, 1.0)
        for a in range(n_tf):
            for b in range(a + 1, n_tf):
                if rng.random() < 0.4:
                    j0[tf[a], tf[b]] = -rng.uniform(0.5, 1.0)
        j0 = j0 + j0.T
        lr = rng.permutation(rest)
        ligand, receptor = np.sort(lr[:n_lr]), np.sort(lr[n_lr : 2 * n_lr])
        k0 = np.zeros((g, g))
        for lig in ligand:
            rec = int(rng.choice(receptor))
            k0[lig, rec] = k0[rec, lig] = (1.0 if rng.random() < 0.6 else -1.0) * rng.uniform(
                0.4, 1.0
            )
        u = rng.random(g)
        diag = np.where(u < 0.4, rng.uniform(0.3, 1.0, g), 0.0)
        diag = np.where(u >= 0.85, -rng.uniform(0.3, 0.8, g), diag)
        k0 = k0 + np.diag(diag)
        if (j0 > 0).any() and (j0 < 0).any() and (k0 > 0).any() and (k0 < 0).any():
            break
    genes = {
        "tf": tf,
        "ligand": ligand,
        "receptor": receptor,
        "community": np.flatnonzero(diag > 0),
        "inhibit": np.flatnonzero(diag < 0),
    }
    return j0, k0, genes


def site_parameters(
    n_genes: int, rng: np.random.Generator, *, n_laminae: int = 6, layer_shift: float = 0.25
) -> dict[str, np.ndarray]:
    """Site and Hill parameters ``kappa``, ``beta``, ``hill_n``, ``theta`` ``[G]`` and the
    laminar shift ``shift`` ``[n_laminae, G]`` (module docstring)."""
    kappa = rng.uniform(0.6, 1.2, n_genes)
    beta = np.where(rng.random(n_genes) < 0.5, 1.0, -1.0) * rng.uniform(0.1, 0.6, n_genes)
    return {
        "kappa": kappa,
        "beta": beta,
        "hill_n": rng.uniform(1.5, 3.0, n_genes),
        "theta": np.arcsinh(beta / kappa) + rng.uniform(-0.5, 0.5, n_genes),
        "shift": layer_shift * rng.standard_normal((n_laminae, n_genes)),
    }


def hill(y: np.ndarray, site: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    r"""``(phi, phi', phi'')`` of :math:`\phi_g(y) = \sigma(n_g (y - \theta_g))` entrywise
    (``y`` ``[..., G]``)."""
    n = site["hill_n"]
    s = 0.5 * (1.0 + np.tanh(0.5 * n * (y - site["theta"])))  # sigma, overflow-free
    d1 = n * s * (1.0 - s)
    return s, d1, n * d1 * (1.0 - 2.0 * s)


def lone_slope(site: dict[str, np.ndarray], *, points: int = 4001) -> np.ndarray:
    r""":math:`d_g = \mathrm E\, \phi_g'(y)` under a lone gene's site density :math:`\propto
    e^{\beta_g y - \kappa_g \cosh y}` (no laminar shift), by quadrature on [-12, 12]; ``[G]``."""
    t = np.linspace(-12.0, 12.0, points)[:, None]  # [T, 1]
    log_p = site["beta"] * t - site["kappa"] * np.cosh(t)  # [T, G]
    p = np.exp(log_p - log_p.max(0))
    return (p * hill(t, site)[1]).sum(0) / p.sum(0)


def lone_sites(site: dict[str, np.ndarray], n: int, rng: np.random.Generator) -> np.ndarray:
    r"""``[n, G]`` exact draws of lone genes' :math:`y` (no laminar shift, no couplings):
    :math:`e^{y} \sim \mathrm{GIG}(\beta_g, \kappa_g, \kappa_g)`, scipy's ``geninvgauss(p =
    beta, b = kappa)``."""
    from scipy.stats import geninvgauss

    beta, kappa = site["beta"], site["kappa"]
    x = geninvgauss.rvs(beta, kappa, size=(n, len(beta)), random_state=rng)
    return np.log(x)


def _centre(site: dict[str, np.ndarray], lamina: np.ndarray, shape: tuple[int, ...]) -> Any:
    """:math:`m_{ig}` broadcast to ``y``'s shape ``[N, ..., G]``."""
    m = site["shift"][lamina]  # [N, G]
    return m.reshape(m.shape[0], *([1] * (len(shape) - 2)), m.shape[1])


def log_density(
    y: np.ndarray,
    edge_index: np.ndarray,
    weight: np.ndarray,
    site: dict[str, np.ndarray],
    lamina: np.ndarray,
    j_mat: np.ndarray,
    k_mat: np.ndarray,
) -> float:
    r""":math:`E(Y)` of the module docstring (:math:`\log p` up to its constant), ``y [N, G]``."""
    t = y - site["shift"][lamina]
    phi = hill(y, site)[0]
    src, dst = edge_index
    single = float((site["beta"] * t - site["kappa"] * np.cosh(t)).sum())
    own = float(np.einsum("ig,gh,ih->", phi, j_mat, phi))
    pairs = float((weight * np.einsum("eg,gh,eh->e", phi[dst], k_mat, phi[src])).sum())
    return single + own + pairs


def cell_energy(
    y: np.ndarray,
    nu: np.ndarray,
    site: dict[str, np.ndarray],
    centre: np.ndarray,
    j_mat: np.ndarray,
    k_mat: np.ndarray,
) -> np.ndarray:
    r""":math:`E_i(y_i)`, the terms of :math:`E` that hold :math:`y_i`, for rows ``y`` ``[m, ...,
    G]`` with their neighbours' Hill sums :math:`\nu_i` and centres :math:`m_i` (same shape)."""
    t = y - centre
    phi = hill(y, site)[0]
    single = (site["beta"] * t - site["kappa"] * np.cosh(t)).sum(-1)
    return single + np.einsum("...g,gh,...h->...", phi, j_mat, phi) + (phi * (nu @ k_mat)).sum(-1)


def _grad(
    y: np.ndarray,
    nu: np.ndarray,
    site: dict[str, np.ndarray],
    centre: np.ndarray,
    j_mat: np.ndarray,
    k_mat: np.ndarray,
) -> np.ndarray:
    phi, d1, _ = hill(y, site)
    t = y - centre
    return site["beta"] - site["kappa"] * np.sinh(t) + d1 * (2.0 * phi @ j_mat + nu @ k_mat)


def grad_log_density(
    y: np.ndarray,
    s: Any,
    site: dict[str, np.ndarray],
    lamina: np.ndarray,
    j_mat: np.ndarray,
    k_mat: np.ndarray,
) -> np.ndarray:
    r""":math:`\nabla E` (the SDE's drift :math:`b`) for ``y`` ``[N, ..., G]`` (any chain axes),
    ``s`` = :math:`A + A^\top` (:func:`benchmarks.tissue_gibbs_pln.symmetric_adjacency`)."""
    n = y.shape[0]
    phi = hill(y, site)[0]
    nu = (s @ phi.reshape(n, -1)).reshape(y.shape)
    return _grad(y, nu, site, _centre(site, lamina, y.shape), j_mat, k_mat)


def truth_matrices(
    y: np.ndarray,
    edge_index: np.ndarray,
    weight: np.ndarray,
    site: dict[str, np.ndarray],
    j_mat: np.ndarray,
    k_mat: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    r"""``(W_intra, W_inter)``: the mean Jacobian of the drift at the state ``y`` ``[N, G]`` in
    Celcomen's normalisation (module docstring), float64 ``[G, G]`` symmetric."""
    d1 = hill(y, site)[1]
    intra = j_mat * (d1.T @ d1) / len(y)
    np.fill_diagonal(intra, 0.0)
    src, dst = edge_index
    cross = (weight[:, None] * d1[dst]).T @ d1[src]  # [G, G] sum_e w_e phi'(y_i) phi'(y_j)^T
    inter = k_mat * (cross + cross.T) / (2.0 * weight.sum())
    return intra, inter


def configurational_temperature(
    y: np.ndarray,
    s: Any,
    site: dict[str, np.ndarray],
    lamina: np.ndarray,
    j_mat: np.ndarray,
    k_mat: np.ndarray,
) -> float:
    r""":math:`\sum (\partial E)^2 / \sum (-\partial^2 E)` over all entries of ``y`` ``[N, G]``:
    1 in expectation under :math:`p \propto e^E`. The diagonal of :math:`\nabla^2 E` is
    :math:`-\kappa_g \cosh(y_{ig} - m_{ig}) + \phi_g''(y_{ig}) [2 (J\phi(y_i))_g + (K
    \nu_i)_g]` (``J`` has a zero diagonal; no self-loops)."""
    phi, _, d2 = hill(y, site)
    nu = s @ phi
    centre = site["shift"][lamina]
    grad = _grad(y, nu, site, centre, j_mat, k_mat)
    curv = site["kappa"] * np.cosh(y - centre) - d2 * (2.0 * phi @ j_mat + nu @ k_mat)
    return float((grad**2).sum() / curv.sum())


@dataclass
class LangevinReport(GibbsReport):
    """Diagnostics of :func:`kinetic_langevin`: a Gibbs run's, and these."""

    acceptance: float  # fraction of cell moves accepted after burn-in
    r_hat_max: float  # largest Gelman-Rubin R-hat of the traced per-gene means / mean squares
    autocorrelation_sweeps: float  # largest integrated autocorrelation time, in sweeps
    thin: int  # sweeps between the traced states
    step: float  # leapfrog step h
    friction: float  # gamma; momentum kept c = exp(-gamma h)
    config_temperature: float  # sum (dE)^2 / sum (-d2E) of chain 0's final state (1 = at rest)


def kinetic_langevin(
    edge_index: np.ndarray,
    weight: np.ndarray,
    site: dict[str, np.ndarray],
    lamina: np.ndarray,
    j_mat: np.ndarray,
    k_mat: np.ndarray,
    n_cells: int,
    *,
    sweeps: int = 200,
    burn_in: int = 100,
    thin: int = 2,
    step: float = 0.5,
    friction: float = 1.0,
    seed: int = 0,
) -> tuple[np.ndarray, LangevinReport]:
    r"""Two chains of the blocked generalised-HMC sampler of :math:`p \propto e^E` (module doc).

    Args:
        edge_index: ``[2, E]`` edges j -> i.
        weight: ``[E]`` edge weights.
        site: ``kappa``, ``beta``, ``hill_n``, ``theta`` ``[G]``, ``shift`` ``[L, G]``
            (:func:`site_parameters`).
        lamina: ``[N]`` each cell's row of ``site['shift']``.
        j_mat: ``J`` ``[G, G]`` symmetric, zero diagonal.
        k_mat: ``K`` ``[G, G]`` symmetric.
        n_cells: ``N``.
        sweeps: Sweeps after burn-in (default 200).
        burn_in: Sweeps first (default 100), discarded; nothing adapts.
        thin: Sweeps between the states traced after burn-in (default 2).
        step: Leapfrog step ``h`` (default 0.5).
        friction: ``gamma`` (default 1): momentum kept per move ``exp(-gamma h)``.
        seed: Seed of the starts and the draws.

    Returns:
        ``(y, report)``: final states ``[N, 2, G]`` and a :class:`LangevinReport`.
    """
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    g = j_mat.shape[0]
    if not (np.allclose(j_mat, j_mat.T) and np.allclose(k_mat, k_mat.T)):
        raise GraphDataError("j_mat, k_mat: expected symmetric matrices")
    if np.any(np.diag(j_mat) != 0):
        raise GraphDataError("j_mat: expected a zero diagonal (the site potential holds it)")
    if thin < 1 or sweeps < 1 or burn_in < 0:
        raise GraphDataError(
            f"thin, sweeps, burn_in: expected >= 1, >= 1 and >= 0, got {thin}, {sweeps}, {burn_in}"
        )
    if not (step > 0 and friction >= 0 and math.isfinite(step) and math.isfinite(friction)):
        raise GraphDataError(
            f"step, friction: expected > 0 and >= 0 (finite), got {step}, {friction}"
        )
    if (site["kappa"] <= 0).any() or (site["hill_n"] <= 0).any():
        raise GraphDataError("site: expected kappa and hill_n > 0 (a confining site potential)")
    s = symmetric_adjacency(edge_index, weight, n_cells)
    colours = greedy_colouring(edge_index, n_cells)
    rows = [s[idx] for idx in colours]
    centre = _centre(site, lamina, (n_cells, 2, g))  # [N, 1, G]
    keep = math.exp(-friction * step)
    y = np.zeros((n_cells, 2, g))
    y[:, 1] = centre[:, 0] + lone_sites(site, n_cells, rng)
    p = rng.standard_normal(y.shape)
    phi = hill(y, site)[0]
    trace, accepted, moves = [], 0, 0
    for sweep in range(burn_in + sweeps):
        for idx, s_rows in zip(colours, rows):
            m = len(idx)
            nu = (s_rows @ phi.reshape(n_cells, 2 * g)).reshape(m, 2, g)  # [m, 2, G]
            c = centre[idx]
            y0 = y[idx]
            p0 = keep * p[idx] + math.sqrt(1.0 - keep**2) * rng.standard_normal((m, 2, g))
            e0 = cell_energy(y0, nu, site, c, j_mat, k_mat) - 0.5 * (p0**2).sum(-1)
            p1 = p0 + 0.5 * step * _grad(y0, nu, site, c, j_mat, k_mat)
            y1 = y0 + step * p1
            p1 = p1 + 0.5 * step * _grad(y1, nu, site, c, j_mat, k_mat)
            e1 = cell_energy(y1, nu, site, c, j_mat, k_mat) - 0.5 * (p1**2).sum(-1)
            with np.errstate(over="ignore", invalid="ignore"):
                ok = np.log(rng.random((m, 2))) < e1 - e0  # [m, 2]; NaN / -inf rejected
            y[idx] = np.where(ok[..., None], y1, y0)
            p[idx] = np.where(ok[..., None], p1, -p0)
            phi[idx] = hill(y[idx], site)[0]
            if sweep >= burn_in:
                accepted += int(ok.sum())
                moves += ok.size
        if sweep >= burn_in and (sweep - burn_in + 1) % thin == 0:
            trace.append(np.concatenate([y.mean(0), (y**2).mean(0)], -1))  # [2, 2G]
    if not np.isfinite(y).all():
        raise GraphDataError("kinetic_langevin: non-finite state")
    max_z, null_median = chain_agreement(y)
    traced = np.asarray(trace).reshape(-1, 2, 2 * g)
    report = LangevinReport(
        x2_max_z=max_z,
        x2_z_null_median=null_median,
        n_colours=len(colours),
        sweeps=burn_in + sweeps,
        seconds=time.perf_counter() - start,
        acceptance=accepted / max(moves, 1),
        r_hat_max=_r_hat(traced),
        autocorrelation_sweeps=thin * _autocorrelation_time(traced),
        thin=thin,
        step=step,
        friction=friction,
        config_temperature=configurational_temperature(y[:, 0], s, site, lamina, j_mat, k_mat),
    )
    return y, report


def detect(
    whole: np.ndarray,
    fraction: np.ndarray,
    efficiency: np.ndarray,
    crowd: np.ndarray,
    false_rate: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    r"""Imaging detection, stage by stage (module docstring): molecules
    :math:`\mathrm{Poisson}(\text{whole})`, kept in the section with probability ``fraction``
    ``[N]``, decoded with probability ``efficiency`` ``[G] x crowd [N]``, plus
    :math:`\mathrm{Poisson}(\text{false\_rate})` ``[N]`` false positives per gene. int64 ``[N,
    G]``, exactly :math:`\mathrm{Poisson}(\text{whole}\, f \eta q + \epsilon)`."""
    whole = np.asarray(whole, dtype=np.float64)
    f, eta, q, eps = (
        np.asarray(v, dtype=np.float64) for v in (fraction, efficiency, crowd, false_rate)
    )
    if not np.isfinite(whole).all() or (whole < 0).any():
        raise GraphDataError("whole: expected finite expected molecule counts >= 0")
    for name, v in (("fraction", f), ("efficiency", eta), ("crowd", q)):
        if not ((v >= 0) & (v <= 1)).all():
            raise GraphDataError(
                f"{name}: expected probabilities in [0, 1], got min {v.min()}, max {v.max()}"
            )
    if not np.isfinite(eps).all() or (eps < 0).any():
        raise GraphDataError("false_rate: expected finite rates >= 0")
    molecules = rng.poisson(whole)  # [N, G] in the whole cell
    section = rng.binomial(molecules, f[:, None])
    decoded = rng.binomial(section, np.clip(eta[None, :] * q[:, None], 0.0, 1.0))
    return (decoded + rng.poisson(np.broadcast_to(eps[:, None], whole.shape))).astype(np.int64)


def merfish_counts(
    y: np.ndarray,
    cells: dict[str, np.ndarray],
    rng: np.random.Generator,
    *,
    panel_size: int,
    crowding: float = 0.2,
    false_positive: float = 0.03,
    mean_range: tuple[float, float] = (1.0, 20.0),
    crowd_radius: float = 10.0,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    r"""Panel counts of a MERFISH-like section (module docstring).

    Returns ``(counts int64 [N, P], coupled [G] positions in var, params)``; ``params``:
    ``volume`` ``[N]`` (:math:`V_i`), ``efficiency`` ``[P]`` (:math:`\eta`), ``crowd`` ``[N]``
    (:math:`q_i`), ``crowd_density`` ``[N]`` (:math:`c_i`), ``crowd_gamma``, ``false_rate``
    ``[N]`` (:math:`\epsilon_i`), ``whole`` ``[N, P]`` (expected molecules in the whole cell),
    ``rate`` ``[N, P]`` (:math:`\lambda`), ``gene_mean`` ``[G]`` (:math:`m_g`), ``baseline``
    ``[G]`` (:math:`\alpha_g`), ``base_mean`` ``[P]`` (:math:`b_j`, NaN on coupled genes),
    ``marker_type`` ``[P]`` (-1: none), ``role`` ``[P]`` (str), ``size_factor`` ``[N]``
    (:math:`f_i V_i q_i`, geometric mean 1) and ``total_counts`` ``[N]``.
    """
    n, g = y.shape
    if panel_size < g + 10:
        raise GraphDataError(f"panel_size: expected >= G + 10 = {g + 10}, got {panel_size}")
    if not 0 <= crowding < 1 or false_positive < 0:
        raise GraphDataError(
            f"crowding, false_positive: expected in [0, 1) and >= 0, got {crowding}, "
            f"{false_positive}"
        )
    frac, radius, area = cells["fraction"], cells["radius"], cells["area"]
    volume = (radius / np.median(radius)) ** 3
    coupled = np.sort(rng.choice(panel_size, g, replace=False))
    others = np.setdiff1d(np.arange(panel_size), coupled)
    lo, hi = np.log(mean_range)
    strata = (rng.permutation(g) + rng.random(g)) / g
    gene_mean = np.exp(lo + strata * (hi - lo))
    alpha = np.log(gene_mean) - np.log((frac[:, None] * volume[:, None] * np.exp(y)).mean(0))
    whole = np.empty((n, panel_size))
    whole[:, coupled] = volume[:, None] * np.exp(alpha + y)
    base = np.full(panel_size, np.nan)
    base[others] = np.exp(math.log(0.5) + rng.standard_normal(len(others)))
    marker_type = np.full(panel_size, -1)
    is_marker = rng.random(len(others)) < 0.4
    marker_type[others[is_marker]] = rng.integers(len(CELL_TYPES), size=int(is_marker.sum()))
    fold = np.where(marker_type >= 0, rng.uniform(1.5, 3.0, panel_size), 0.0)
    effect = np.where(cells["cell_type"][:, None] == marker_type[None, others], fold[others], 0.0)
    whole[:, others] = volume[:, None] * base[others] * np.exp(effect)
    efficiency = 1.0 / (1.0 + np.exp(-(1.4 + 0.7 * rng.standard_normal(panel_size))))
    in_section = frac * whole.sum(1)  # [N] expected molecules in the section, all genes
    tree = cKDTree(cells["coords"])
    near = tree.query_ball_point(cells["coords"], crowd_radius)
    density = np.array([in_section[j].sum() for j in near]) / (math.pi * crowd_radius**2)
    gamma = -math.log(1.0 - crowding) / float(np.median(density))
    crowd = np.exp(-gamma * density)
    false_rate = false_positive * area / np.median(area)
    counts = detect(whole, frac, efficiency, crowd, false_rate, rng)
    rate = whole * frac[:, None] * efficiency[None] * crowd[:, None] + false_rate[:, None]
    size = frac * volume * crowd
    role = np.full(panel_size, "panel", dtype=object)
    role[marker_type >= 0] = "marker"
    role[coupled] = "coupled"
    params = {
        "volume": volume,
        "efficiency": efficiency,
        "crowd": crowd,
        "crowd_density": density,
        "crowd_gamma": gamma,
        "false_rate": false_rate,
        "whole": whole,
        "rate": rate,
        "gene_mean": gene_mean,
        "baseline": alpha,
        "base_mean": base,
        "marker_type": marker_type,
        "role": role.astype(str),
        "size_factor": size / np.exp(np.log(size).mean()),
        "total_counts": counts.sum(1),
    }
    return counts, coupled, params


@dataclass(kw_only=True)
class MerfishTissue:
    """A tissue of :func:`simulate`: cells of the section, graph, truth over the coupled genes,
    latent rows, and the panel's counts (``counts`` ``[N, P]`` in var order; coupled genes at
    ``coupled``)."""

    coords: np.ndarray  # [N, 2] (x, depth), um
    edge_index: np.ndarray  # [2, E] j -> i
    edge_weight: np.ndarray  # [E] GCN weights
    W_intra: np.ndarray  # [G, G] mean drift Jacobian within cells, zero diagonal  # noqa: N815
    W_inter: np.ndarray  # [G, G] mean drift Jacobian across edges  # noqa: N815
    x: np.ndarray  # [N, G] latent rows on the sphere
    latent: np.ndarray  # [N, G]
    counts: np.ndarray  # [N, P] int64
    coupled: np.ndarray  # [G] positions of the coupled genes in var, increasing
    log1p: np.ndarray  # [N, P] float32
    cell_type: np.ndarray  # [N] index into CELL_TYPES
    cells: dict[str, np.ndarray]  # z, radius, lamina, fraction, area
    count_params: dict[str, Any]
    report: LangevinReport
    field: dict[str, np.ndarray]  # site parameters, J, K, W_intra, W_inter
    genes: dict[str, np.ndarray]  # tf, ligand, receptor, community, inhibit
    params: dict[str, Any] = dataclass_field(default_factory=dict)

    def to_anndata(self, *, sparse: bool = True) -> Any:
        """AnnData of the panel: ``X`` and ``layers['counts']`` (float32 CSR, or dense int64 with
        ``sparse=False``), ``layers['log1p']``, ``layers['signed']``, ``var['highly_variable']``
        True exactly on the coupled genes, ``obs['total_counts']``, ``obs['n_genes_by_counts']``,
        ``obs['cell_area']``, ``obs['section_fraction']``, ``obs['lamina']``,
        ``obs['cell_type']``, ``obsm['spatial']`` (x, depth; um), the graph of
        ``spatial_neighbors_knn`` and ``uns['tissue_merfish']`` (parameters, sampler, the truth
        ``W_intra`` / ``W_inter`` and the coupled genes' names)."""
        import pandas as pd

        obs = {
            "total_counts": self.counts.sum(1),
            "n_genes_by_counts": (self.counts > 0).sum(1),
            "cell_area": self.cells["area"],
            "section_fraction": self.cells["fraction"],
            "lamina": pd.Categorical([LAMINAE[t][0] for t in self.cells["lamina"]]),
            "cell_type": pd.Categorical([CELL_TYPES[t] for t in self.cell_type]),
        }
        return coupled_anndata(self, key="tissue_merfish", digits=3, obs=obs, sparse=sparse)


def simulate(
    n_cells: int,
    n_genes: int,
    *,
    seed: int = 0,
    k: int = 6,
    sweeps: int = 200,
    burn_in: int = 100,
    thin: int = 2,
    step: float = 0.5,
    friction: float = 1.0,
    intra_norm: float = 0.8,
    margin: float = 0.9,
    panel_size: int | None = None,
    thickness: float = 10.0,
    min_fraction: float = 0.15,
    layer_shift: float = 0.25,
    crowding: float = 0.2,
    false_positive: float = 0.03,
) -> MerfishTissue:
    """Section, graph, couplings, Langevin states, truth and panel counts of one tissue (module
    docstring). ``panel_size`` None draws it uniformly from 120-500. Every draw comes from
    ``numpy.random.default_rng(seed)`` and its spawned streams, so a seed reproduces the
    tissue."""
    if n_cells <= k:
        raise GraphDataError(f"n_cells: expected more than k = {k} cells, got {n_cells}")
    if not (0 < intra_norm < 1 and 0 < margin < 1):
        raise GraphDataError(
            f"intra_norm, margin: expected in (0, 1) (the linearised field stable), got "
            f"{intra_norm}, {margin}"
        )
    if layer_shift < 0:
        raise GraphDataError(f"layer_shift: expected >= 0, got {layer_shift}")
    if not 0 <= crowding < 1 or false_positive < 0:  # checked again by merfish_counts
        raise GraphDataError(
            f"crowding, false_positive: expected in [0, 1) and >= 0, got {crowding}, "
            f"{false_positive}"
        )
    if panel_size is not None and panel_size < n_genes + 10:
        raise GraphDataError(f"panel_size: expected >= G + 10 = {n_genes + 10}, got {panel_size}")
    streams = np.random.default_rng(seed).spawn(5)
    cells = cortex_cells(n_cells, streams[0], thickness=thickness, min_fraction=min_fraction)
    coords = cells["coords"]
    edge_index = knn_edges(coords, k)
    weight = gcn_weights(edge_index, n_cells)
    j0, k0, genes = draw_couplings(n_genes, streams[1])
    site = site_parameters(n_genes, streams[2], n_laminae=len(LAMINAE), layer_shift=layer_shift)
    slope = lone_slope(site)  # E phi' of a lone gene
    curv = np.hypot(site["kappa"], site["beta"])
    lin = 2.0 * j0 * np.outer(slope, slope)
    half = 1.0 / np.sqrt(curv)
    scale_j = intra_norm / np.linalg.norm(half[:, None] * lin * half[None], 2)
    j_mat = scale_j * j0
    kappa, rho_s = coupling_scale(
        edge_index, weight, n_cells, np.diag(curv) - scale_j * lin, k0 * np.outer(slope, slope),
        margin, v0=np.ones(n_cells),
    )  # fmt: skip
    k_mat = kappa * k0
    states, report = kinetic_langevin(
        edge_index, weight, site, cells["lamina"], j_mat, k_mat, n_cells, sweeps=sweeps,
        burn_in=burn_in, thin=thin, step=step, friction=friction,
        seed=int(streams[3].integers(2**62)),
    )  # fmt: skip
    latent = states[:, 0]
    w_intra, w_inter = truth_matrices(latent, edge_index, weight, site, j_mat, k_mat)
    rng = streams[4]
    if panel_size is None:
        panel_size = int(rng.integers(120, 501))
    counts, coupled, count_params = merfish_counts(
        latent, cells, rng, panel_size=panel_size, crowding=crowding,
        false_positive=false_positive,
    )  # fmt: skip
    params = {
        "n_cells": n_cells,
        "n_genes": n_genes,
        "seed": seed,
        "k": k,
        "sweeps": sweeps,
        "burn_in": burn_in,
        "thin": thin,
        "step": step,
        "friction": friction,
        "intra_norm": intra_norm,
        "margin": margin,
        "scale_J": float(scale_j),
        "kappa": kappa,
        "rho_adjacency": rho_s,
        "panel_size": panel_size,
        "thickness": thickness,
        "min_fraction": min_fraction,
        "layer_shift": layer_shift,
        "crowding": crowding,
        "false_positive": false_positive,
        "strip_width": cells["width"],
    }
    return MerfishTissue(
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
        cell_type=cells["cell_type"],
        cells={key: cells[key] for key in ("z", "radius", "lamina", "fraction", "area")},
        count_params=count_params,
        report=report,
        field={**site, "J": j_mat, "K": k_mat, "W_intra": w_intra, "W_inter": w_inter},
        genes=genes,
        params=params,
    )
