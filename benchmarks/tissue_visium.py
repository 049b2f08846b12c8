r"""A ninth tissue simulator: a 10x Visium slide, where each spot sums the cells under it.

The held-out world of ``bench_celcomen_counts --world visium`` (session 24), written by a helper
who did not read the library's Celcomen code (``spatial/celcomen.py``, ``_inputs.py``,
``objectives.py``, ``_solver.py``, ``model.py``, ``tools.py``, ``tl.py``) and never fitted it on
this world. Like the beads world the observations are not the cells, but here they look like a
**10x Visium** slide, the commonest spatial data: 55 um spots on a 100 um hexagonal lattice, each
**summing** the transcripts of the 3-15 cells it covers (a spot with more cells has more UMIs),
the cells between spots never observed, and a whole-transcriptome library of 5,000-15,000 UMIs
per spot. Its stages differ from the other eight: the layout (an exact hexagonal spot lattice
over a continuous tissue of cells of smoothly varying density, in layered domains); a
**Gaussian-tilted type-IV logistic site potential**; a **preferential-attachment (scale-free)
gene graph** with hub genes; **ligand-receptor** intercellular pairs with paracrine ligand and
lateral-inhibition receptor diagonals; an **independence Metropolis-within-Gibbs sampler with
Student-t Laplace proposals**; and negative-binomial counts of summed cells under a log-normal
spot capture efficiency. Neither ``spatial.simulate`` nor ``spatial.model`` is imported.

**Layout** (:func:`visium_slide`; units um). *Spots*: the lattice :math:`(100\,i + 50\,(j
\bmod 2),\ 50\sqrt 3\, j)` (centre spacing 100 um, the Visium capture area's), spot radius
:math:`\rho` = 27.5 um; the section is an ellipse (aspect :math:`U(1.2, 1.6)`, uniform
orientation): the ``N`` lattice points of least elliptical radius are kept, then jittered by
:math:`\mathcal N(0, 1)` um per coordinate (image registration; k-NN then has no exact ties).
*Tissue*: the points within 75 um of a kept spot (the whole lattice cell of every spot, and a
rim beyond the outer spots). *Cells*: an inhomogeneous Poisson process of intensity
:math:`\lambda(x) = \lambda_0 \exp(\alpha \tanh f(x))`, :math:`\lambda_0 =` ``cells_per_spot`` /
:math:`(\pi \rho^2)` (6.5 cells per spot area), :math:`\alpha` = ``density_amplitude`` = 0.4
(so :math:`\lambda` stays within :math:`e^{\pm 0.4} \lambda_0`),
:math:`f` a unit-variance smooth random field (64 random Fourier features, squared-exponential
kernel, length 300 um), relaxed 30 rounds (:func:`benchmarks.tissue_beads._relax`, disc radius
:math:`0.5 / \sqrt{\lambda(x)}`, so the spacing is locally even and the counts per spot are
sub-Poisson). A cell belongs to the spot whose disc holds its centre (at most one, since
:math:`2\rho < 100`); about 73 % of the cells lie between spots. A spot holding fewer than 3
cells gets cells added within 3 um of its centre (``params['cells_added']``: 15-22 in 2,000
spots). *Cell types* (:data:`CELL_TYPES`): three **layers** (tertiles of :math:`h(x) =
u^\top x + 150\, f_2(x)`, :math:`u` a uniform direction, :math:`f_2` a second smooth field),
and scattered **immune** cells (each cell with probability 0.08). Each cell has an RNA content
:math:`v_c \sim \mathrm{LogNormal}(0, 0.3^2)`.

**Graphs.** The energy lives on the *cells*: directed k-NN on cell centres (k = 6), edges
:math:`j \to i`, GCN weights :math:`w_{ij} = 1/\sqrt{d_i d_j} = 1/6`. The bench fits on the
*spots*: ``edge_index`` / ``edge_weight`` and ``obsm['spatial']`` are the spots' (k-NN, k = 6,
GCN weights; ``spatial_neighbors_knn`` rebuilds it). **The truth stays the cell-level
energy's** ``W_intra`` and ``W_inter`` (as in the beads world): a spot sums about 7 cells that
are each other's neighbours, so within-spot gene-gene covariance mixes both matrices.

**Latent field.** :math:`Y \in \mathbb R^{C \times G}` over the ``C`` cells, :math:`p \propto
e^E`,

.. math::
    E(Y) = \sum_i \Big[\sum_g \phi_g(y_{ig}) + y_i^\top W_{\mathrm{intra}}\, y_i\Big]
        + \sum_i \sum_{j \to i} w_{ij}\, y_i^\top W_{\mathrm{inter}}\, y_j, \qquad
    \phi_g(t) = -\tfrac{\lambda_g}{2} t^2 + a_g u - (a_g + b_g) \log(1 + e^u),\
    u = \frac{t - o_g}{s_g},

a **Gaussian-tilted type-IV (generalised) logistic site potential**: :math:`a u - (a + b)
\log(1 + e^u)` is the log density of :math:`\log X`, :math:`X \sim \beta'(a, b)` (beta prime),
with exponential tails of slopes :math:`a` (left) and :math:`b` (right), skewed to the side of
the smaller; :math:`\lambda_g \sim U(0.4, 0.8)`, :math:`a_g, b_g \sim U(0.4, 2)`, :math:`s_g \sim
U(0.6, 1)`, :math:`o_g \sim U(-0.5, 0.5)`. Its curvature :math:`-\phi_g'' = \lambda_g + (a_g +
b_g) \sigma(u)(1 - \sigma(u)) / s_g^2` lies in :math:`[\lambda_g, \lambda_g + (a_g + b_g) /
(4 s_g^2)]`: log-concave per entry, with bounded curvature. The truth is the two matrices:
:math:`\partial^2 E / \partial y_{ig} \partial y_{ih} = 2 (W_{\mathrm{intra}})_{gh}` and
:math:`\partial^2 E / \partial y_{ig} \partial y_{jh} = w_{ij} (W_{\mathrm{inter}})_{gh}` (for an
edge :math:`j \to i` without its reverse; :math:`(w_{ij} + w_{ji}) (W_{\mathrm{inter}})_{gh}`
with it).

``W_intra`` (symmetric, zero diagonal) lives on a **preferential-attachment gene graph**
(:func:`draw_couplings`): genes arrive in a random order, the first three form a triangle, each
later gene links to 1 or 2 (probability 1/2 each) earlier genes chosen with probability proportional
to their degree (Barabási-Albert), so a few early genes become **hubs** (largest degree 7-16 at G =
20, 6-7 at G = 10; 26-32 and 12-15 edges); every gene has a polarity (activator w.p. 0.6, else
repressor) and an edge takes the polarity of its older endpoint, flipped w.p. 0.2; magnitudes
:math:`U(0.5, 1)`. ``W_inter`` (symmetric): :math:`\max(2, \mathrm{round}(G/4))` disjoint
**ligand-receptor** pairs, sign + w.p. 0.65, magnitudes :math:`U(0.5, 1)`; a **positive diagonal on
the ligands**, :math:`U(0.3, 0.8)` (paracrine spread: a ligand-rich cell's neighbours are
ligand-rich), and a **negative diagonal on half of the receptors**, :math:`-U(0.2, 0.5)` (lateral
inhibition, Notch-Delta-like: neighbours anti-correlate); other genes have none.

**Scale and normalisability** (as in the beads world): with :math:`D = \mathrm{diag}(\lambda)`,
:math:`\Lambda_\circ = -2 W_{\mathrm{intra}}` is scaled to :math:`\lVert D^{-1/2} \Lambda_\circ
D^{-1/2}\rVert_2 =` ``intra_norm`` (0.6), so :math:`M = D + \Lambda_\circ \succ 0`, and
:math:`W_{\mathrm{inter}} = \kappa K_0` with :math:`\rho(A + A^\top)\,\rho(M^{-1/2} K_0
M^{-1/2})\,\kappa =` ``margin`` (0.9) (:func:`benchmarks.tissue_gibbs_pln.coupling_scale`), so
:math:`Q_0 = I_C \otimes M - (A + A^\top) \otimes W_{\mathrm{inter}} \succ 0`. The logistic part
:math:`\psi_g(u) = a_g u - (a_g + b_g) \log(1 + e^u)` is concave with maximum :math:`\psi_g^* =
a_g \log(a_g / b_g) - (a_g + b_g) \log((a_g + b_g) / b_g)` (at :math:`\sigma(u) = a_g / (a_g +
b_g)`), so :math:`e^{E} \le e^{C \sum_g \psi_g^*} e^{-\frac12 \mathrm{vec}(Y)^\top Q_0
\mathrm{vec}(Y)}`, which is integrable: the energy is normalisable.

**Sampler** (:func:`independence_gibbs`): Metropolis-within-Gibbs with **independence proposals**,
one entry :math:`y_{ig}` at a time, all cells of a colour class of the cell graph and all genes of a
colour class of the ``W_intra`` graph at once (such entries are conditionally independent). The
entry's conditional is :math:`\pi(t) \propto \exp(\phi_g(t) + \ell t)`, :math:`\ell = 2
(W_{\mathrm{intra}} y_i)_g + (W_{\mathrm{inter}} n_i)_g` (:math:`n_i = \sum_{j \to i} w_{ij} y_j +
\sum_{i \to l} w_{li} y_l`; neither depends on :math:`y_{ig}`). Its **Laplace point** :math:`m`
comes from the lone site's mode :math:`\mu_g` shifted by :math:`\ell / h_g(\mu_g)`, then ``newton``
Newton steps; the proposal is :math:`t' = m + h^{-1/2} T`, :math:`T` a Student-t with ``dof`` (5)
degrees of freedom, :math:`h = -\phi_g''` where the last Newton step was taken (:math:`h_g(\mu_g)`
with ``newton`` = 0; default 1). It depends on the other entries only (through :math:`\ell`), never
on :math:`y_{ig}`, so accepting with probability :math:`\min(1, \pi(t') q(t) / (\pi(t) q(t')))`
leaves the conditional invariant (an independence Metropolis-Hastings step), and every move of the
scan is exact; no step size is tuned, and nothing adapts. Since :math:`\pi` has a Gaussian tail
(curvature :math:`\ge \lambda_g`) and the t proposal a polynomial one, :math:`\pi / q` is bounded,
so each entry's update is **uniformly ergodic** (Mengersen & Tweedie 1996), accepting at least
:math:`1 / \sup (\pi / q)` of its proposals. Two chains (from 0 and from 3 envelope sds times a
standard normal); ``burn_in`` sweeps, then ``sweeps``; every ``thin``-th sweep the per-gene mean and
mean square over cells are traced for the largest Gelman-Rubin :math:`\hat R` and autocorrelation
time (:mod:`benchmarks.tissue_panel`); the report adds the two chains' agreement, the acceptance
after burn-in and the configurational temperature :math:`\sum (\partial E)^2 / \sum (-\partial^2 E)`
(1 at equilibrium). The tissue is chain 0. The acceptance is about 0.94 and the chains mix in a few
sweeps (module tests; the numbers at 2,000 spots are in the bench's ``SWEEPS`` comment), so
``bench_celcomen_counts --world visium`` samples 75 burn-in + 150 kept sweeps by default.

**Counts** (:func:`spot_rates`, :func:`capture_efficiency`, :func:`nb_counts`). ``G`` coupled genes
sit at random positions among ``n_other`` other genes (default uniform on 1,000-3,000),
``var['highly_variable']`` True exactly on the coupled ones. Cell-level rates: coupled :math:`r_{cg}
= v_c e^{\beta_g + y_{cg}}`; other gene ``j`` :math:`r_{cj} = v_c\, b_j e^{f_{t_c j}} / Z_{t_c}`,
:math:`\log b_j \sim \mathcal N(0, 1.2^2)`, 25 % of them **markers** of one of the 4 types (:math:`f
= U(1, 2.5)` in that type, else 0), :math:`Z_t = \sum_j b_j e^{f_{tj}} / \sum_j b_j` (markers
redistribute a type's transcripts without changing its total). Cell types move only these other
genes, never the coupled ones. A spot **sums** its cells: :math:`R_{sj} = \sum_{c \in s} r_{cj}`; it
has a **capture efficiency** :math:`e_s \sim \mathrm{LogNormal}(-\sigma_e^2/2, \sigma_e^2)`,
:math:`\sigma_e` = ``capture_sd`` (0.3), and :math:`\mu_{sj} = e_s \Delta R_{sj}`, :math:`\Delta`
set so the median over spots of :math:`\sum_{j \notin \mathrm{coupled}} \mu_{sj}` is ``depth``
(log-uniform on 5,000-15,000 UMIs unless given), and :math:`\beta_g` so that :math:`\mathrm{mean}_s
\mu_{sg} = m_g` (stratified log-uniform on (0.5, 30)). Counts are **negative binomial** with a
gene-specific dispersion :math:`\theta_j` (log-uniform on (4, 20) for the coupled genes, (2, 30) for
the others): :math:`c_{sj} \mid \mu \sim \mathrm{Poisson}(\Gamma)`, :math:`\Gamma \sim
\mathrm{Gamma}(\theta_j, \theta_j / \mu_{sj})`, so

.. math::
    \mathrm E[c \mid \mu] = \mu, \quad \mathrm{Var}[c \mid \mu] = \mu + \mu^2 / \theta, \quad
    P(c = 0 \mid \mu) = (\theta / (\theta + \mu))^\theta,

and over :math:`e_s` (for a fixed :math:`\bar\mu = \Delta R`): :math:`\mathrm E c = \bar\mu`,
:math:`\mathrm{Var}\, c = \bar\mu + \bar\mu^2 ((1 + 1/\theta) e^{\sigma_e^2} - 1)`.
``X`` / ``layers['counts']`` are float32 CSR (dense int64 with ``sparse=False``);
``layers['log1p']`` is ``normalize_total`` + ``log1p``; ``layers['signed']`` holds the spot's
mean latent :math:`\frac{1}{|s|} \sum_{c \in s} y_c` on the sphere in the coupled columns;
``obs`` has ``total_counts``, ``n_genes_by_counts``, ``n_cells`` (cells under the spot),
``capture_efficiency`` and ``cell_type`` (the spot's most frequent). Signs, support and Pearson
of the off-diagonals compare; the scale has no target.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree

from benchmarks.tissue_beads import _relax
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
    "SPOT_SPACING",
    "SPOT_RADIUS",
    "hex_lattice",
    "smooth_field",
    "visium_slide",
    "spot_membership",
    "draw_couplings",
    "site_parameters",
    "site_potential",
    "log_density",
    "grad_log_density",
    "independence_gibbs",
    "IndependenceReport",
    "spot_rates",
    "capture_efficiency",
    "nb_counts",
    "VisiumTissue",
    "simulate",
]

CELL_TYPES = ("layer1", "layer2", "layer3", "immune")
SPOT_SPACING = 100.0
SPOT_RADIUS = 27.5


def hex_lattice(n_spots: int, rng: np.random.Generator) -> np.ndarray:
    """``[n_spots, 2]`` Visium spot centres: the hexagonal lattice of spacing 100 um, the points
    of least elliptical radius (aspect ``U(1.2, 1.6)``, uniform orientation), before jitter."""
    if n_spots < 10:
        raise GraphDataError(f"n_spots: expected >= 10, got {n_spots}")
    aspect, angle = rng.uniform(1.2, 1.6), rng.uniform(0.0, math.pi)
    half = math.ceil(math.sqrt(n_spots * aspect)) + 4
    j, i = np.meshgrid(np.arange(-half, half + 1), np.arange(-half, half + 1), indexing="ij")
    pts = np.stack(
        [SPOT_SPACING * (i + 0.5 * (j % 2)), SPOT_SPACING * math.sqrt(3) / 2 * j], -1
    ).reshape(-1, 2)
    rot = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
    local = pts @ rot
    radius = np.hypot(local[:, 0] / aspect, local[:, 1])
    keep = np.argsort(radius, kind="stable")[:n_spots]
    return pts[np.sort(keep)]


def smooth_field(
    points: np.ndarray, rng: np.random.Generator, *, length: float = 300.0, features: int = 64
) -> np.ndarray:
    r"""A unit-variance smooth random field at ``points`` ``[M, 2]``: :math:`\sqrt{2/F}
    \sum_f \cos(\omega_f^\top x + \varphi_f)`, :math:`\omega_f \sim \mathcal N(0, I/\ell^2)`
    (random Fourier features of the squared-exponential kernel of length ``length``)."""
    omega = rng.standard_normal((features, 2)) / length
    phase = rng.uniform(0.0, 2 * math.pi, features)
    return math.sqrt(2.0 / features) * np.cos(points @ omega.T + phase).sum(1)


def spot_membership(cells: np.ndarray, spots: np.ndarray) -> np.ndarray:
    """``[C]`` the spot whose disc (radius :data:`SPOT_RADIUS`) holds each cell centre, -1 for
    cells between spots."""
    dist, idx = cKDTree(spots).query(cells, distance_upper_bound=SPOT_RADIUS)
    return np.where(np.isfinite(dist), idx, -1).astype(np.int64)


def visium_slide(
    n_spots: int,
    rng: np.random.Generator,
    *,
    cells_per_spot: float = 6.5,
    density_amplitude: float = 0.4,
) -> dict[str, np.ndarray]:
    """Spots, cells and their membership (module docstring): ``spots`` [N, 2], ``cells`` [C, 2],
    ``spot_of`` [C] (-1 between spots), ``cell_type`` [C], ``content`` [C] (RNA content),
    ``density`` [C] (the intensity at each cell, per um^2)."""
    if cells_per_spot <= 0 or density_amplitude < 0:
        raise GraphDataError(
            f"cells_per_spot, density_amplitude: expected > 0 and >= 0, got {cells_per_spot}, "
            f"{density_amplitude}"
        )
    spots = hex_lattice(n_spots, rng) + rng.standard_normal((n_spots, 2))
    lo = spots.min(0) - 80.0
    spots = spots - lo  # the tissue's bounding box starts at 0
    side = float((spots.max(0) + 80.0).max())
    lam0 = cells_per_spot / (math.pi * SPOT_RADIUS**2)
    field_rng, type_rng = rng.spawn(2)
    omega = field_rng.standard_normal((64, 2)) / 300.0
    phase = field_rng.uniform(0.0, 2 * math.pi, 64)

    def intensity(x: np.ndarray) -> np.ndarray:
        f = math.sqrt(2.0 / 64) * np.cos(x @ omega.T + phase).sum(1)
        return lam0 * np.exp(density_amplitude * np.tanh(f))

    top = lam0 * math.exp(density_amplitude)  # the intensity's bound
    cand = rng.random((int(rng.poisson(top * side**2)), 2)) * side
    near = cKDTree(spots).query(cand, distance_upper_bound=75.0)[0] < np.inf
    cand = cand[near]
    cells = cand[rng.random(len(cand)) < np.minimum(intensity(cand) / top, 1.0)]
    cells = _relax(cells, 0.5 / np.sqrt(intensity(cells)), side, rounds=30)
    spot_of = spot_membership(cells, spots)
    have = np.bincount(spot_of[spot_of >= 0], minlength=n_spots)
    short = np.repeat(np.arange(n_spots), np.maximum(3 - have, 0))
    if len(short):  # guard: a spot with fewer than 3 cells gets them near its centre
        extra = spots[short] + rng.uniform(-3.0, 3.0, (len(short), 2))
        cells = np.vstack([cells, extra])
        spot_of = np.r_[spot_of, short]
    u = type_rng.standard_normal(2)
    h = cells @ (u / np.linalg.norm(u)) + 150.0 * smooth_field(cells, type_rng)
    cell_type = np.searchsorted(np.quantile(h, [1 / 3, 2 / 3]), h)
    cell_type[type_rng.random(len(cells)) < 0.08] = 3
    return {
        "spots": spots,
        "cells": cells,
        "spot_of": spot_of,
        "cell_type": cell_type.astype(np.int64),
        "content": type_rng.lognormal(0.0, 0.3, len(cells)),
        "density": intensity(cells),
        "added": np.asarray(len(short)),
    }


def draw_couplings(
    n_genes: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Unscaled ``W0`` (preferential-attachment support, zero diagonal) and ``K0``
    (ligand-receptor pairs, ligand and receptor diagonals), symmetric ``[G, G]``; ``genes``
    holds ``degree``, ``hubs`` (the 3 of largest degree), ``ligands`` and ``receptors``."""
    g = n_genes
    if g < 6:
        raise GraphDataError(f"n_genes: expected >= 6, got {g}")
    while True:
        order = rng.permutation(g)
        arrival = np.empty(g, dtype=np.int64)
        arrival[order] = np.arange(g)
        support = np.zeros((g, g), dtype=bool)
        for a, b in ((0, 1), (1, 2), (0, 2)):
            support[order[a], order[b]] = support[order[b], order[a]] = True
        for t in range(3, g):
            earlier = order[:t]
            degree = support[earlier].sum(1).astype(np.float64)
            m = 1 + int(rng.random() < 0.5)
            for b in rng.choice(earlier, m, replace=False, p=degree / degree.sum()):
                support[order[t], b] = support[b, order[t]] = True
        polarity = np.where(rng.random(g) < 0.6, 1.0, -1.0)
        older = np.where(arrival[:, None] < arrival[None, :], np.arange(g)[:, None], np.arange(g))
        sign = polarity[older] * np.where(rng.random((g, g)) < 0.2, -1.0, 1.0)
        w0 = np.triu(np.where(support, sign * rng.uniform(0.5, 1.0, (g, g)), 0.0), 1)
        w0 = w0 + w0.T
        if (w0 > 0).any() and (w0 < 0).any():
            break
    n_pairs = max(2, round(g / 4))
    pick = rng.permutation(g)
    ligands, receptors = pick[:n_pairs], pick[n_pairs : 2 * n_pairs]
    k0 = np.zeros((g, g))
    sign_lr = np.where(rng.random(n_pairs) < 0.65, 1.0, -1.0)
    k0[ligands, receptors] = sign_lr * rng.uniform(0.5, 1.0, n_pairs)
    k0 = k0 + k0.T
    k0[ligands, ligands] = rng.uniform(0.3, 0.8, n_pairs)
    inhibit = receptors[rng.random(n_pairs) < 0.5]
    k0[inhibit, inhibit] = -rng.uniform(0.2, 0.5, len(inhibit))
    degree = support.sum(1)
    return (
        w0,
        k0,
        {
            "degree": degree,
            "hubs": np.sort(np.argsort(-degree, kind="stable")[:3]),
            "ligands": np.sort(ligands),
            "receptors": np.sort(receptors),
            "inhibit": np.sort(inhibit),
        },
    )


def site_parameters(n_genes: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Site parameters ``lam``, ``a``, ``b``, ``scale``, ``offset`` ``[G]`` (module
    docstring)."""
    return {
        "lam": rng.uniform(0.4, 0.8, n_genes),
        "a": rng.uniform(0.4, 2.0, n_genes),
        "b": rng.uniform(0.4, 2.0, n_genes),
        "scale": rng.uniform(0.6, 1.0, n_genes),
        "offset": rng.uniform(-0.5, 0.5, n_genes),
    }


def site_potential(
    y: np.ndarray, site: dict[str, np.ndarray], order: int = 0, genes: Any = slice(None)
) -> np.ndarray:
    r""":math:`\phi_g`, :math:`\phi_g'` or :math:`\phi_g''` entrywise (``order`` 0, 1, 2) for
    ``y`` ``[..., len(genes)]``, the parameters of ``genes`` (default all)."""
    lam, a, b = site["lam"][genes], site["a"][genes], site["b"][genes]
    sc = site["scale"][genes]
    u = (y - site["offset"][genes]) / sc
    e = np.exp(-np.abs(u))
    if order == 0:
        return -0.5 * lam * y**2 + a * u - (a + b) * (np.maximum(u, 0.0) + np.log1p(e))
    sig = np.where(u > 0, 1.0, e) / (1.0 + e)  # the logistic sigma(u)
    if order == 1:
        return -lam * y + (a - (a + b) * sig) / sc
    return -lam - (a + b) * sig * (1.0 - sig) / sc**2


def log_density(
    y: np.ndarray,
    edge_index: np.ndarray,
    weight: np.ndarray,
    site: dict[str, np.ndarray],
    w_intra: np.ndarray,
    w_inter: np.ndarray,
) -> float:
    r""":math:`E(Y)` of the module docstring (log p up to its constant), ``y`` ``[C, G]``."""
    return float(site_potential(y, site).sum()) + coupling_energy(
        y, edge_index, weight, w_intra, w_inter
    )


def grad_log_density(
    y: np.ndarray, s: Any, site: dict[str, np.ndarray], w_intra: np.ndarray, w_inter: np.ndarray
) -> np.ndarray:
    r""":math:`\nabla E` for ``y`` ``[C, ..., G]``, ``s`` = :math:`A + A^\top`."""
    msg = (s @ y.reshape(y.shape[0], -1)).reshape(y.shape)
    return site_potential(y, site, 1) + 2 * y @ w_intra + msg @ w_inter


@dataclass
class IndependenceReport(GibbsReport):
    """Diagnostics of :func:`independence_gibbs`: a Gibbs run's, and these."""

    r_hat_max: float
    autocorrelation_sweeps: float
    thin: int
    acceptance: float  # mean acceptance after burn-in
    dof: float  # the Student-t proposals' degrees of freedom
    n_gene_colours: int
    config_temperature: float  # sum (dE)^2 / sum (-d2E), chain 0's final state (1 = at rest)


def _gene_colouring(w_intra: np.ndarray) -> list[np.ndarray]:
    """Independent sets of the ``W_intra`` support (greedy, largest degree first)."""
    g = w_intra.shape[0]
    adjacent = (w_intra != 0) & ~np.eye(g, dtype=bool)
    colour = np.full(g, -1, dtype=np.int64)
    for gene in np.argsort(-adjacent.sum(1), kind="stable"):
        used = set(colour[adjacent[gene]].tolist())
        c = 0
        while c in used:
            c += 1
        colour[gene] = c
    return [np.flatnonzero(colour == c) for c in range(int(colour.max()) + 1)]


def _lone_modes(site: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    r"""Mode :math:`\mu_g` of each lone site potential :math:`\phi_g` (Newton from 0; concave)
    and the curvature :math:`-\phi_g''(\mu_g)` there."""
    mu = np.zeros_like(site["lam"])
    for _ in range(100):
        step = site_potential(mu, site, 1) / -site_potential(mu, site, 2)
        mu = mu + step
        if np.abs(step).max() < 1e-12:
            break
    return mu, -site_potential(mu, site, 2)


def independence_gibbs(
    edge_index: np.ndarray,
    weight: np.ndarray,
    site: dict[str, np.ndarray],
    w_intra: np.ndarray,
    w_inter: np.ndarray,
    n_cells: int,
    *,
    sweeps: int = 150,
    burn_in: int = 75,
    thin: int = 2,
    dof: float = 5.0,
    newton: int = 1,
    seed: int = 0,
) -> tuple[np.ndarray, IndependenceReport]:
    """Two chains of entry-wise independence Metropolis-within-Gibbs over cell and gene colour
    classes, Student-t Laplace proposals (module docstring); returns final states ``[C, 2, G]``
    and an :class:`IndependenceReport`."""
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    g = w_intra.shape[0]
    if not (np.allclose(w_intra, w_intra.T) and np.allclose(w_inter, w_inter.T)):
        raise GraphDataError("w_intra, w_inter: expected symmetric matrices")
    if np.any(np.diag(w_intra) != 0):
        raise GraphDataError("w_intra: expected a zero diagonal (the site potential holds it)")
    if thin < 1 or sweeps < 1 or burn_in < 0 or newton < 0 or not dof > 0:
        raise GraphDataError(
            f"thin, sweeps, burn_in, newton, dof: expected >= 1, >= 1, >= 0, >= 0, > 0, got "
            f"{thin}, {sweeps}, {burn_in}, {newton}, {dof}"
        )
    if (np.asarray(site["lam"]) <= 0).any():
        raise GraphDataError("site: expected lam > 0 (it makes p normalisable)")
    mu, h_mu = _lone_modes(site)
    s = symmetric_adjacency(edge_index, weight, n_cells)
    colours = greedy_colouring(edge_index, n_cells)
    rows = [s[idx] for idx in colours]
    gene_colours = _gene_colouring(w_intra)
    y = np.zeros((n_cells, 2, g))
    y[:, 1] = 3.0 / np.sqrt(site["lam"]) * rng.standard_normal((n_cells, g))
    cache = site_potential(y, site)  # phi(y) of the current state, entrywise
    accepted, proposed, trace = 0.0, 0, []
    for sweep in range(burn_in + sweeps):
        for idx, s_rows in zip(colours, rows):
            field_in = (s_rows @ y.reshape(n_cells, 2 * g)).reshape(len(idx), 2, g) @ w_inter
            yi, ci = y[idx], cache[idx]
            for genes in gene_colours:
                lin = field_in[..., genes] + 2 * yi @ w_intra[:, genes]
                m = mu[genes] + lin / h_mu[genes]
                h = np.broadcast_to(h_mu[genes], m.shape)
                for _ in range(newton):
                    h = -site_potential(m, site, 2, genes)
                    m = m + (site_potential(m, site, 1, genes) + lin) / h
                sd = 1.0 / np.sqrt(h)
                cur = yi[..., genes]
                new = m + sd * rng.standard_t(dof, m.shape)
                phi_new = site_potential(new, site, 0, genes)
                z_new, z_cur = ((new - m) / sd) ** 2 / dof, ((cur - m) / sd) ** 2 / dof
                log_q = -0.5 * (dof + 1) * (np.log1p(z_new) - np.log1p(z_cur))
                log_ratio = phi_new - ci[..., genes] + (new - cur) * lin - log_q
                ok = -rng.standard_exponential(m.shape) < log_ratio
                yi[..., genes] = np.where(ok, new, cur)
                ci[..., genes] = np.where(ok, phi_new, ci[..., genes])
                if sweep >= burn_in:
                    accepted, proposed = accepted + ok.sum(), proposed + ok.size
            y[idx], cache[idx] = yi, ci
        if sweep >= burn_in and (sweep - burn_in + 1) % thin == 0:
            trace.append(np.concatenate([y.mean(0), (y**2).mean(0)], -1))
    if not np.isfinite(y).all():
        raise GraphDataError("independence_gibbs: non-finite state")
    y0 = y[:, 0]
    grad = grad_log_density(y0, s, site, w_intra, w_inter)
    max_z, null_median = chain_agreement(y)
    traced = np.asarray(trace).reshape(-1, 2, 2 * g)
    return y, IndependenceReport(
        x2_max_z=max_z,
        x2_z_null_median=null_median,
        n_colours=len(colours),
        sweeps=burn_in + sweeps,
        seconds=time.perf_counter() - start,
        r_hat_max=_r_hat(traced),
        autocorrelation_sweeps=thin * _autocorrelation_time(traced),
        thin=thin,
        acceptance=float(accepted / max(proposed, 1)),
        dof=dof,
        n_gene_colours=len(gene_colours),
        config_temperature=float((grad**2).sum() / -site_potential(y0, site, 2).sum()),
    )


def spot_rates(cell_rate: np.ndarray, spot_of: np.ndarray, n_spots: int) -> np.ndarray:
    r""":math:`R_{sj} = \sum_{c \in s} r_{cj}` ``[N, P]`` from cell rates ``[C, P]``: each spot
    **sums** the cells its disc holds (``spot_of`` ``[C]``, -1 between spots: not observed)."""
    seen = spot_of >= 0
    if (spot_of >= n_spots).any():
        raise GraphDataError(f"spot_of: expected < n_spots = {n_spots}")
    agg = sp.csr_matrix(
        (np.ones(int(seen.sum())), (spot_of[seen], np.flatnonzero(seen))),
        shape=(n_spots, len(spot_of)),
    )
    return np.asarray(agg @ cell_rate)


def capture_efficiency(n_spots: int, sd: float, rng: np.random.Generator) -> np.ndarray:
    r"""``[n_spots]`` capture efficiencies :math:`e_s \sim \mathrm{LogNormal}(-\sigma^2/2,
    \sigma^2)`, :math:`\sigma` = ``sd`` (mean 1)."""
    if sd < 0:
        raise GraphDataError(f"capture_sd: expected >= 0, got {sd}")
    return np.exp(sd * rng.standard_normal(n_spots) - 0.5 * sd**2)


def nb_counts(mu: np.ndarray, theta: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    r"""Negative-binomial counts of mean ``mu`` ``[N, P]`` and dispersion ``theta`` ``[P]``
    (:math:`\mathrm{Var} = \mu + \mu^2 / \theta`): Poisson of a Gamma(theta, theta / mu)."""
    mu = np.asarray(mu, np.float64)
    theta = np.broadcast_to(np.asarray(theta, np.float64), mu.shape)
    if (mu < 0).any() or not (theta > 0).all():
        raise GraphDataError(f"mu, theta: expected >= 0 and > 0, got min {mu.min()}, {theta.min()}")
    return rng.poisson(rng.standard_gamma(theta) * (mu / theta)).astype(np.int64)


@dataclass(kw_only=True)
class VisiumTissue:
    """A tissue of :func:`simulate`: spots (the observations, ``coords``, graph, ``counts``
    ``[N, P]``), the cells under and between them (``cells``), and the cell-level truth."""

    coords: np.ndarray  # [N, 2] spot centres, um
    edge_index: np.ndarray  # [2, E] spot k-NN, j -> i
    edge_weight: np.ndarray  # [E]
    W_intra: np.ndarray  # noqa: N815
    W_inter: np.ndarray  # noqa: N815
    x: np.ndarray  # [N, G] spot's mean latent on the sphere
    latent: np.ndarray  # [C, G] cell latent (chain 0)
    counts: np.ndarray  # [N, P] int64
    coupled: np.ndarray  # [G] columns of the coupled genes
    log1p: np.ndarray
    cells: dict[str, np.ndarray]  # centres, spot_of, cell_type, content, edge_index, ...
    count_params: dict[str, Any]
    report: IndependenceReport
    field: dict[str, np.ndarray]
    genes: dict[str, np.ndarray]
    params: dict[str, Any] = dataclasses.field(default_factory=dict)

    def to_anndata(self, *, sparse: bool = True) -> Any:
        """AnnData over the spots (module docstring), ``uns['tissue_visium']`` the truth."""
        import pandas as pd

        n = len(self.coords)
        spot_of, types = self.cells["spot_of"], self.cells["cell_type"]
        seen = spot_of >= 0
        tally = np.zeros((n, len(CELL_TYPES)), dtype=np.int64)
        np.add.at(tally, (spot_of[seen], types[seen]), 1)
        obs = {
            "total_counts": self.counts.sum(1),
            "n_genes_by_counts": (self.counts > 0).sum(1),
            "n_cells": tally.sum(1),
            "capture_efficiency": self.count_params["capture"],
            "cell_type": pd.Categorical([CELL_TYPES[t] for t in tally.argmax(1)]),
        }
        return coupled_anndata(self, key="tissue_visium", digits=4, obs=obs, sparse=sparse)


def simulate(
    n_spots: int,
    n_genes: int,
    *,
    seed: int = 0,
    k: int = 6,
    sweeps: int = 150,
    burn_in: int = 75,
    thin: int = 2,
    intra_norm: float = 0.6,
    margin: float = 0.9,
    n_other: int | None = None,
    depth: float | None = None,
    capture_sd: float = 0.3,
    cells_per_spot: float = 6.5,
) -> VisiumTissue:
    """Slide, cell field, spot counts of one tissue (module docstring); ``n_spots``
    observations (the bench's ``--cells``). Every draw comes from ``default_rng(seed)``'s
    spawned streams."""
    if n_spots <= k:
        raise GraphDataError(f"n_spots: expected more than k = {k}, got {n_spots}")
    if not (0 < intra_norm < 1 and 0 < margin < 1):
        raise GraphDataError(f"intra_norm, margin: expected in (0, 1), got {intra_norm}, {margin}")
    if capture_sd < 0 or (depth is not None and depth <= 0):
        raise GraphDataError(f"capture_sd, depth: expected >= 0 and > 0, got {capture_sd}, {depth}")
    if n_other is not None and n_other < 1:
        raise GraphDataError(f"n_other: expected >= 1 (they carry the library size), got {n_other}")
    streams = np.random.default_rng(seed).spawn(5)
    slide = visium_slide(n_spots, streams[0], cells_per_spot=cells_per_spot)
    n_cells = len(slide["cells"])
    cell_edges = knn_edges(slide["cells"], k)
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
    states, report = independence_gibbs(
        cell_edges, cell_weight, site, w_intra, w_inter, n_cells, sweeps=sweeps,
        burn_in=burn_in, thin=thin, seed=int(streams[3].integers(2**62)),
    )  # fmt: skip
    latent = states[:, 0]
    rng = streams[4]
    if n_other is None:
        n_other = int(rng.integers(1000, 3001))
    if depth is None:
        depth = float(np.exp(rng.uniform(math.log(5000.0), math.log(15000.0))))
    n_vars = n_genes + n_other
    coupled = np.sort(rng.choice(n_vars, n_genes, replace=False))
    others = np.setdiff1d(np.arange(n_vars), coupled)
    spot_of, cell_type, content = slide["spot_of"], slide["cell_type"], slide["content"]
    # other genes: a type's profile b_j e^{f_tj} / Z_t; a spot's rate is sum_t V[s, t] profile_t
    base = np.exp(1.2 * rng.standard_normal(n_other))
    marker_type = np.where(
        rng.random(n_other) < 0.25, rng.integers(len(CELL_TYPES), size=n_other), -1
    )
    fold = np.where(marker_type >= 0, rng.uniform(1.0, 2.5, n_other), 0.0)
    profile = base * np.exp(np.where(marker_type == np.arange(len(CELL_TYPES))[:, None], fold, 0))
    profile *= base.sum() / profile.sum(1, keepdims=True)  # [T, n_other], equal totals
    by_type = np.zeros((n_cells, len(CELL_TYPES)))
    by_type[np.arange(n_cells), cell_type] = content
    rate_other = spot_rates(by_type, spot_of, n_spots) @ profile  # [N, n_other]
    capture = capture_efficiency(n_spots, capture_sd, rng)
    scale = depth / float(np.median(capture * rate_other.sum(1)))
    strata = (rng.permutation(n_genes) + rng.random(n_genes)) / n_genes
    gene_mean = np.exp(math.log(0.5) + strata * math.log(60.0))
    summed = spot_rates(content[:, None] * np.exp(latent), spot_of, n_spots)  # [N, G]
    beta = np.log(gene_mean) - np.log((capture[:, None] * scale * summed).mean(0))
    mu = np.empty((n_spots, n_vars))
    mu[:, others] = capture[:, None] * scale * rate_other
    mu[:, coupled] = capture[:, None] * scale * np.exp(beta) * summed
    theta = np.empty(n_vars)
    theta[coupled] = np.exp(rng.uniform(math.log(4.0), math.log(20.0), n_genes))
    theta[others] = np.exp(rng.uniform(math.log(2.0), math.log(30.0), n_other))
    counts = draw_nonempty(lambda m: nb_counts(m, theta[: m.shape[1]], rng), mu)
    n_in = np.bincount(spot_of[spot_of >= 0], minlength=n_spots)
    spot_latent = spot_rates(latent, spot_of, n_spots) / n_in[:, None]
    edge_index = knn_edges(slide["spots"], k)
    params = {
        "n_spots": n_spots, "n_cells": n_cells, "n_genes": n_genes, "seed": seed, "k": k,
        "sweeps": sweeps, "burn_in": burn_in, "thin": thin, "intra_norm": intra_norm,
        "margin": margin, "kappa": kappa, "rho_adjacency": rho_s, "n_other": n_other,
        "depth": depth, "capture_sd": capture_sd, "cells_per_spot": cells_per_spot,
        "mean_cells_per_spot": float(n_in.mean()), "min_cells_per_spot": int(n_in.min()),
        "max_cells_per_spot": int(n_in.max()),
        "fraction_cells_between_spots": float((spot_of < 0).mean()),
        "cells_added": int(slide["added"]),
    }  # fmt: skip
    base_mean = np.full(n_vars, np.nan)
    base_mean[others] = base
    markers = np.full(n_vars, -1)
    markers[others] = marker_type
    return VisiumTissue(
        coords=slide["spots"],
        edge_index=edge_index,
        edge_weight=gcn_weights(edge_index, n_spots),
        W_intra=w_intra,
        W_inter=w_inter,
        x=spot_latent / np.linalg.norm(spot_latent, axis=1, keepdims=True),
        latent=latent,
        counts=counts,
        coupled=coupled,
        log1p=_log1p_normalised(counts),
        cells={
            "centres": slide["cells"],
            "spot_of": spot_of,
            "cell_type": cell_type,
            "content": content,
            "density": slide["density"],
            "edge_index": cell_edges,
            "edge_weight": cell_weight,
        },  # fmt: skip
        count_params={
            "rate": mu,
            "capture": capture,
            "depth_scale": scale,
            "dispersion": theta,
            "gene_mean": gene_mean,
            "baseline": beta,
            "base_mean": base_mean,
            "marker_type": markers,
            "profile": profile,
        },  # fmt: skip
        report=report,
        field={**site, "W_intra": w_intra, "W_inter": w_inter},
        genes=genes,
        params=params,
    )
