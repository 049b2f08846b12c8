r"""A sixth tissue simulator: coupled genes inside a whole transcriptome, on a two-density slide.

The fifth held-out world of the Celcomen benchmark (``bench_celcomen_counts --world wholetx``,
issue 19, session 21), written by a helper who did not read the library's Celcomen code
(``spatial/celcomen.py``, ``_inputs.py``, ``_solver.py``) and never fitted it on this world. It
looks like a whole-transcriptome slide (Slide-seq, Stereo-seq cell bins, Visium HD segmented
cells): ``G`` coupled genes are measured among ``B`` (1,000-3,000) other genes, and the user has
marked the coupled genes as ``var['highly_variable']``. Its mechanism differs from the other
five at every stage: **two tissue regions of different cell density** (hard-core cell centres,
not a square, a hex lattice or clusters); a **leptokurtic log-cosh site potential** per gene
(not a sphere, a Gaussian, a double well or a log-gamma); couplings on a **geometric gene
network with structurally balanced signs** (not Erdős–Rényi, circulant, modules or hubs);
**Hamiltonian Monte Carlo** on the whole field (not Metropolis, Gibbs, MALA or slice sampling);
and counts from a **Poisson-inverse-Gaussian** model over the whole transcriptome with cell-type
and size-dependent size factors (not Poisson, negative binomial, Poisson log-normal or a
multinomial panel). Neither ``spatial.simulate`` nor ``spatial.model`` is imported; the graph
comes from :func:`graphdata.spatial.knn_graph` (through :mod:`benchmarks.tissue_metropolis`).

**Layout** (:func:`two_region_positions`). A square :math:`[0, L]^2` is cut by a wavy boundary
:math:`v = L\,(0.5 + 0.08 \sin(3\pi u / L + \phi))`, :math:`\phi \sim U(0, 2\pi)`: above it a
**dense** region (a cortex-like band of small cells), below it a **sparse** one, with candidate
intensities in the ratio ``density_ratio`` = 3. Candidates (uniform in the square, kept with
probability :math:`\lambda(x)/\lambda_{\max}`) are thinned by a **Matérn type-II hard core**:
each gets a uniform mark and is removed when another candidate closer than :math:`(r_i +
r_j)/2` has a smaller mark, with :math:`r(x) = \sqrt{c / (\pi \lambda(x))}`, :math:`c` = 1.5
(so both regions keep the same fraction :math:`(1 - e^{-c})/c`, and the density ratio stays
3); ``N`` of the survivors are kept uniformly at random. The units give the sparse region
about one cell per unit area. Directed k-NN graph (k = 6), edges :math:`j \to i`, GCN weights
:math:`w_{ij} = 1/\sqrt{d_i d_j}` (``A[i, j] = w_ij``; every in-degree is k, so :math:`w =
1/6`), the graph and weighting Celcomen's default fits with (``spatial_neighbors_knn``
rebuilds it from ``obsm['spatial']``). Across the boundary a dense cell's neighbours are all
dense, a sparse cell near the boundary reaches into the dense band: the graph is not symmetric
there. Cell types: ``n_types`` = 6, with proportions :math:`\mathrm{Dirichlet}(0.8, \dots,
0.8)` per region, drawn independently per cell.

**Latent field.** :math:`Y \in \mathbb R^{N \times G}`, rows :math:`y_i` (log-rate deviations
of the coupled genes), with density

.. math::
    \log p(Y) = \sum_i \Big[\sum_g \Big(-\tfrac{\lambda_g}{2} y_{ig}^2
        - \kappa_g \log\cosh\frac{y_{ig} - o_g}{\delta}\Big)
        - \tfrac12 y_i^\top \Lambda_\circ\, y_i\Big]
        + \sum_i \sum_{j \to i} w_{ij}\, y_i^\top K\, y_j + \mathrm{const}.

The **site potential** is a Gaussian times :math:`\mathrm{sech}^{\kappa_g}((y - o_g)/\delta)`:
a Laplace-like peak (slope :math:`\kappa_g/\delta` in the flanks, rounded over a width
:math:`\delta` = 0.4) at an offset :math:`o_g` from the Gaussian's centre, so a lone gene is
**leptokurtic** (kurtosis 3.6-4.0) and mildly skewed either way (skewness :math:`\mp`0.1-0.2
for :math:`o_g \gtrless 0`), with sd 0.6-0.9. :math:`\lambda_g \sim U(0.6, 1.2)`, the slope
:math:`\kappa_g/\delta \sim U(0.8, 1.6)`, :math:`o_g = \pm U(0.3, 0.8)` (random sign). Since
:math:`-\log\cosh` is concave, the site's curvature :math:`\lambda_g + (\kappa_g/\delta^2)
\mathrm{sech}^2` is at least :math:`\lambda_g`.

:math:`\Lambda_\circ` (zero diagonal, symmetric) lives on a **geometric gene network**: gene
:math:`g` gets a point :math:`z_g` uniform in the unit square ("pathway space") and a polarity
:math:`\sigma_g = \pm 1`; pairs closer than :math:`r_G = \sqrt{3 / (\pi (G - 1))}` (mean
degree 3) are coupled, and so is every gene to its nearest other gene (no isolated gene); the
sign of :math:`W_{\mathrm{intra}}` is :math:`\sigma_g \sigma_h` (**structural balance**: genes of
one polarity activate each other and repress the other polarity), flipped for 15 % of the pairs
(frustration), magnitude :math:`U(0.5, 1)\,e^{-\lVert z_g - z_h\rVert / r_G}`. The network
has triangles (clustering), unlike Erdős–Rényi, hub or circulant patterns. The intercellular
:math:`K` (symmetric): pairs within :math:`1.5\, r_G` in pathway space *not* coupled within a cell
(juxtacrine cross-talk between neighbouring programmes), each kept with probability 0.7, with
sign :math:`-\sigma_g \sigma_h` for 70 % (a neighbour's programme opposes one's own) and
magnitude :math:`U(0.4, 1)`; and a **signed diagonal**: :math:`K_{gg} \sim U(0.2, 1)` for 70 %
of the genes (community effect) and :math:`-U(0.3, 0.8)` for 30 % (lateral inhibition, as
Notch-Delta). **Scale**: with :math:`D = \mathrm{diag}(\lambda_g)`, :math:`\Lambda_\circ` is
scaled to :math:`\lVert D^{-1/2} \Lambda_\circ D^{-1/2} \rVert_2 =` ``intra_norm`` (0.6) and
:math:`K = \kappa K_0` with :math:`\rho(A + A^\top)\,\rho(M^{-1/2} K_0 M^{-1/2})\,\kappa =`
``margin`` (0.9), :math:`M = D + \Lambda_\circ` (:func:`benchmarks.tissue_gibbs_pln.
coupling_scale`). Then :math:`-\nabla^2 \log p \succeq I_N \otimes M - (A + A^\top) \otimes K
\succ 0` everywhere: :math:`\log p` is **strictly concave** (one mode, no ordered phase).

**Truth in Celcomen's sign convention.** Celcomen's energy is :math:`E(X) = \sum_i x_i^\top
W_{\mathrm{intra}} x_i + \sum_i \sum_{j \to i} w_{ij} x_i^\top W_{\mathrm{inter}} x_j` with
:math:`p \propto e^{E}`. Term by term against :math:`\log p(Y)`: the site potential is a sum of
functions of single entries :math:`y_{ig}`, so it has no off-diagonal part; the within-cell
quadratic form gives :math:`W_{\mathrm{intra}} = -\Lambda_\circ/2`; the pair term is the same
bilinear form:

.. math::
    W_{\mathrm{intra}} = -\tfrac12 \Lambda_\circ, \qquad W_{\mathrm{inter}} = K ,

i.e. :math:`\partial^2 \log p / \partial y_{ig} \partial y_{ih} = 2 (W_{\mathrm{intra}})_{gh}`
(:math:`g \ne h`) and :math:`\partial^2 \log p / \partial y_{ig} \partial y_{jh} = w_{ij}
(W_{\mathrm{inter}})_{gh}` for an edge :math:`j \to i` only (:math:`w_{ij} + w_{ji}` when both
edges exist). ``W_intra`` has a zero diagonal. Both matrices are over the G coupled genes in
their ``var`` order (the order of ``var['highly_variable']``'s True entries). The counts pass
through baselines, size factors and technical overdispersion, so **signs, support and
Pearson** of the off-diagonals compare; the scale has no target.

**Sampler** (:func:`hmc_sample`). Hamiltonian Monte Carlo (Duane et al. 1987; Neal 2011,
`arXiv:1206.1901 <https://arxiv.org/abs/1206.1901>`_) on the whole field at once: momenta
:math:`p \sim \mathcal N(0, M)` with a diagonal mass per gene :math:`m_g = \lambda_g +
\kappa_g / (2\delta^2)` (the site's mean curvature, roughly), a uniform number of leapfrog steps in
[8, 24] (``steps`` = 16 on average) of size :math:`\epsilon\, U(0.8, 1.2)` (both jittered,
against periodic orbits) with the gradient

.. math::
    \nabla_{y_i} \log p = -\lambda \circ y_i - \frac{\kappa}{\delta} \circ
        \tanh\frac{y_i - o}{\delta} - \Lambda_\circ y_i + K n_i, \qquad
    n_i = \sum_{j \to i} w_{ij}\, y_j + \sum_{i \to l} w_{li}\, y_l ,

and a Metropolis accept / reject on the Hamiltonian :math:`-\log p(Y) + \tfrac12 p^\top M^{-1}
p` per chain (the whole field moves or stays). The step size is tuned during ``burn_in`` (200
iterations, discarded) by dual averaging (Hoffman & Gelman 2014) towards an acceptance of
0.75, then frozen for the ``sweeps`` (300) iterations after it: nothing adapts while the kept
states are drawn. Two chains, from 0 and from 3 lone-gene sds times a standard normal per
entry; after burn-in every ``thin``-th (2nd) iteration's per-gene mean and mean square over
cells are traced, and their largest Gelman-Rubin :math:`\hat R` and integrated autocorrelation
time are reported (:mod:`benchmarks.tissue_panel`'s estimators), with the two chains' final
second moments (:func:`benchmarks.tissue_gibbs_pln.chain_agreement`), the acceptance, the step
size and the number of divergent trajectories (energy error above 1,000). The tissue is the
final state of chain 0.

**Counts** (:func:`wholetx_counts`). ``n_vars`` = G + B genes; the coupled genes sit at random
positions in ``var`` (kept in their order). Size factors (capture efficiency times total RNA):

.. math::
    s_i \propto \exp\big(\tau_{t_i} - \nu \log(\lambda(x_i) / \bar\lambda) + \sigma_s \xi_i\big),
    \qquad \tau_t \sim \mathcal N(0, 0.35^2),\ \xi_i \sim \mathcal N(0, 1),

normalised to geometric mean 1: cell type :math:`t_i` sets its total RNA (a 2-fold range
between types is usual), a dense-region cell is smaller (:math:`\nu` = 0.5: 3x the density,
:math:`\sqrt 3` fewer UMIs) and capture varies by :math:`\sigma_s` = 0.35. Rates:

- coupled gene g: :math:`\mu_{ig} = s_i e^{\alpha_g + y_{ig}}`, :math:`\alpha_g` set so that
  :math:`\mathrm{mean}_i\, \mu_{ig} = m_g`, :math:`m_g` stratified log-uniform on (0.3, 30) (one
  draw per G-quantile);
- other gene j: :math:`\mu_{ij} = s_i b_j e^{f_{ij}} / \mathrm{mean}_l\, e^{f_{lj}}` with base
  means :math:`\log b_j \sim \mathcal N(\log 0.12, 1.3^2)` for 97 % of the genes and
  :math:`\mathcal N(\log 15, 0.8^2)` for 3 % (housekeeping, ribosomal, mitochondrial), all
  rescaled so that a median cell's expected total is ``depth`` (2,000); :math:`f_{ij}` = 0
  except for **markers** (15 %: :math:`f_{ij} = U(1, 3)` when :math:`t_i` is the gene's type),
  **regional** genes (5 %: :math:`\pm U(0.5, 1.5)` in the dense region) and **gradient** genes
  (5 %: :math:`\pm U(0.5, 1.5)\,(2 u_i / L - 1)` along the slide). These structures depend on
  cell type and position only, not on :math:`Y`.

Every count is **Poisson-inverse-Gaussian**:

.. math::
    c_{ij} \mid Z_{ij} \sim \mathrm{Poisson}(\mu_{ij} Z_{ij}), \qquad
    Z_{ij} \sim \mathrm{IG}(\text{mean } 1,\ \text{shape } 1/\phi_j),

so :math:`\mathrm E c = \mu`, :math:`\mathrm{Var}\, c = \mu + \phi \mu^2` (as a negative
binomial) but the third cumulant is :math:`\mu + 3\phi\mu^2 + 3\phi^2\mu^3` (a negative
binomial's: :math:`2\phi^2\mu^3`): a heavier upper tail. Dispersions follow a mean trend with
log-normal scatter, :math:`\phi_j = \min\big(4, (0.08 + 0.3 / \sqrt{\bar\mu_j})\, e^{0.5
\zeta_j}\big)`, :math:`\bar\mu_j` the gene's mean rate: rare genes look more overdispersed, as
in real UMI data. ``obs['total_counts']`` is the total over all genes (scanpy's QC);
``layers['log1p']`` is scanpy's ``normalize_total`` then ``log1p`` over all genes;
``layers['signed']`` holds the latent rows :math:`y_i / \lVert y_i \rVert` in the coupled
columns and 0 elsewhere. :meth:`WholeTxTissue.to_anndata` stores ``X`` and
``layers['counts']`` as float32 CSR by default (as ``sc.read_10x_h5`` gives them);
``sparse=False`` gives dense int64 as the other worlds.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.spatial import cKDTree

from benchmarks.tissue_gibbs_pln import (
    GibbsReport,
    chain_agreement,
    coupling_scale,
    symmetric_adjacency,
)
from benchmarks.tissue_metropolis import _log1p_normalised, gcn_weights, knn_edges
from benchmarks.tissue_panel import _autocorrelation_time, _r_hat
from graphdata.errors import GraphDataError

__all__ = [
    "two_region_positions",
    "draw_couplings",
    "site_parameters",
    "log_density",
    "grad_log_density",
    "hmc_sample",
    "pig_counts",
    "wholetx_counts",
    "HMCReport",
    "WholeTxTissue",
    "simulate",
]

DELTA = 0.4  # width of the log-cosh peak


def two_region_positions(
    n_cells: int,
    rng: np.random.Generator,
    *,
    density_ratio: float = 3.0,
    hard_core: float = 1.5,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Matérn-II hard-core cells in two regions of different density (module docstring).

    Returns ``(coords [N, 2], layout)``; ``layout`` holds ``dense`` (bool ``[N]``: above the
    boundary), ``intensity`` ``[N]`` (the relative intensity at each cell, sparse region 1),
    ``radius`` ``[N]`` (the hard-core radii :math:`r_i`), ``side`` (L) and ``phase``.
    """
    if n_cells < 1 or density_ratio < 1 or hard_core <= 0:
        raise GraphDataError(
            f"n_cells, density_ratio, hard_core: expected >= 1, >= 1 and > 0, got {n_cells}, "
            f"{density_ratio}, {hard_core}"
        )
    phase = rng.uniform(0.0, 2.0 * math.pi)
    keep = (1.0 - math.exp(-hard_core)) / hard_core  # Matérn II survival, both regions
    # the sparse region keeps ~1 cell per unit area: candidate intensity 1 / keep there
    side = math.sqrt(n_cells / (0.5 * (1 + density_ratio)))
    lam_sparse = 1.0 / keep
    factor = 1.15
    while True:
        lam_max = density_ratio * lam_sparse
        n_cand = int(rng.poisson(factor * lam_max * side**2))
        points = rng.random((n_cand, 2)) * side
        boundary = side * (0.5 + 0.08 * np.sin(3 * math.pi * points[:, 0] / side + phase))
        dense = points[:, 1] > boundary
        lam = np.where(dense, lam_max, lam_sparse)
        kept = rng.random(n_cand) < lam / lam_max
        points, dense, lam = points[kept], dense[kept], lam[kept] * factor
        radius = np.sqrt(hard_core / (math.pi * lam))
        marks = rng.random(len(points))
        pairs = cKDTree(points).query_pairs(float(radius.max()), output_type="ndarray")
        dist = np.linalg.norm(points[pairs[:, 0]] - points[pairs[:, 1]], axis=1)
        clash = pairs[dist < 0.5 * (radius[pairs[:, 0]] + radius[pairs[:, 1]])]
        # type II: removed when a clashing candidate (removed or not) has a smaller mark
        loser = np.where(marks[clash[:, 0]] > marks[clash[:, 1]], clash[:, 0], clash[:, 1])
        alive = np.ones(len(points), dtype=bool)
        alive[loser] = False
        if alive.sum() >= n_cells:
            break
        factor *= 1.1
    chosen = np.sort(rng.choice(np.flatnonzero(alive), n_cells, replace=False))
    layout = {
        "dense": dense[chosen],
        "intensity": np.where(dense[chosen], density_ratio, 1.0),
        "radius": radius[chosen],
        "side": side,
        "phase": phase,
    }
    return points[chosen], layout


def draw_couplings(
    n_genes: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    r"""Unscaled geometric-network ``W0`` (Celcomen's sign, zero diagonal) and ``K0``.

    Returns ``(W0, K0, genes)``: float64 ``[G, G]`` symmetric; :math:`\Lambda_\circ \propto
    -2 W_0`; ``genes`` holds the pathway-space points ``z`` ``[G, 2]`` and ``polarity`` ``[G]``.
    """
    g = n_genes
    if g < 4:
        raise GraphDataError(f"n_genes: expected >= 4, got {g}")
    r = math.sqrt(3.0 / (math.pi * (g - 1)))
    upper = np.triu(np.ones((g, g), dtype=bool), 1)
    while True:
        z = rng.random((g, 2))
        polarity = np.where(rng.random(g) < 0.5, 1.0, -1.0)
        dist = np.linalg.norm(z[:, None] - z[None], axis=-1)
        np.fill_diagonal(dist, np.inf)
        near = dist < r
        nearest = np.zeros((g, g), dtype=bool)
        nearest[np.arange(g), dist.argmin(1)] = True
        support = (near | nearest | nearest.T) & upper
        balanced = np.outer(polarity, polarity)
        sign = np.where(rng.random((g, g)) < 0.15, -balanced, balanced)
        mag = rng.uniform(0.5, 1.0, (g, g)) * np.exp(-np.where(np.isfinite(dist), dist, 0) / r)
        w0 = np.where(support, sign * mag, 0.0)
        w0 = w0 + w0.T
        cross = (dist < 1.5 * r) & ~(support | support.T) & upper & (rng.random((g, g)) < 0.7)
        k_sign = np.where(rng.random((g, g)) < 0.7, -balanced, balanced)
        k0 = np.where(cross, k_sign * rng.uniform(0.4, 1.0, (g, g)), 0.0)
        if cross.any() and (w0 > 0).any() and (w0 < 0).any():
            break
    inhibit = rng.random(g) < 0.3
    diag = np.where(inhibit, -rng.uniform(0.3, 0.8, g), rng.uniform(0.2, 1.0, g))
    k0 = k0 + k0.T + np.diag(diag)
    return w0, k0, {"z": z, "polarity": polarity, "lateral_inhibition": np.flatnonzero(inhibit)}


def site_parameters(n_genes: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    r"""Site potentials :math:`-\lambda_g y^2/2 - \kappa_g \log\cosh((y - o_g)/\delta)`:
    ``lam``, ``kappa``, ``offset`` ``[G]`` and ``delta`` (a scalar array), module docstring."""
    lam = rng.uniform(0.6, 1.2, n_genes)
    kappa = DELTA * rng.uniform(0.8, 1.6, n_genes)
    offset = np.where(rng.random(n_genes) < 0.5, 1.0, -1.0) * rng.uniform(0.3, 0.8, n_genes)
    return {"lam": lam, "kappa": kappa, "offset": offset, "delta": np.asarray(DELTA)}


def _log_cosh(u: np.ndarray) -> np.ndarray:
    return np.logaddexp(u, -u) - math.log(2.0)


def log_density(
    y: np.ndarray,
    edge_index: np.ndarray,
    weight: np.ndarray,
    site: dict[str, np.ndarray],
    lam_off: np.ndarray,
    k: np.ndarray,
) -> float:
    r""":math:`\log p(Y)` up to its constant (module docstring), ``y`` ``[N, G]``."""
    src, dst = edge_index
    delta = float(site["delta"])
    single = (
        -0.5 * site["lam"] * y**2 - site["kappa"] * _log_cosh((y - site["offset"]) / delta)
    ).sum()
    intra = -0.5 * np.einsum("ig,gh,ih->", y, lam_off, y)
    inter = float((weight * np.einsum("eg,gh,eh->e", y[dst], k, y[src])).sum())
    return float(single + intra + inter)


def grad_log_density(
    y: np.ndarray, s: Any, site: dict[str, np.ndarray], lam_off: np.ndarray, k: np.ndarray
) -> np.ndarray:
    r"""Gradient of :math:`\log p` for ``y`` ``[N, C, G]`` (C chains), ``s`` = :math:`A +
    A^\top` (:func:`benchmarks.tissue_gibbs_pln.symmetric_adjacency`)."""
    n, c, g = y.shape
    delta = float(site["delta"])
    msg = (s @ y.reshape(n, c * g)).reshape(n, c, g)  # n_i
    return (
        -site["lam"] * y
        - (site["kappa"] / delta) * np.tanh((y - site["offset"]) / delta)
        - y @ lam_off
        + msg @ k
    )


def _log_density_chains(
    y: np.ndarray, s: Any, site: dict[str, np.ndarray], lam_off: np.ndarray, k: np.ndarray
) -> np.ndarray:
    """:math:`\\log p` per chain of ``y`` ``[N, C, G]``, through ``S`` (each edge counted once:
    the pair term is :math:`\\tfrac12 \\sum_i y_i^\\top K n_i`)."""
    n, c, g = y.shape
    delta = float(site["delta"])
    single = -0.5 * site["lam"] * y**2 - site["kappa"] * _log_cosh((y - site["offset"]) / delta)
    msg = (s @ y.reshape(n, c * g)).reshape(n, c, g)
    quad = -0.5 * ((y @ lam_off) * y) + 0.5 * ((msg @ k) * y)
    return (single + quad).sum(axis=(0, 2))


@dataclass
class HMCReport(GibbsReport):
    """Diagnostics of :func:`hmc_sample`: those of a Gibbs run (``n_colours`` = 1, every entry
    moves at once), and Hamiltonian Monte Carlo's."""

    acceptance: float  # mean acceptance probability after burn-in, both chains
    step_size: float  # the frozen leapfrog step (before the +-20 % jitter)
    steps: int  # mean leapfrog steps per trajectory
    divergences: int  # trajectories with an energy error above 1,000 (after burn-in)
    r_hat_max: float  # largest Gelman-Rubin R-hat of the traced per-gene means / mean squares
    autocorrelation_sweeps: float  # largest integrated autocorrelation time, in iterations
    thin: int  # iterations between the traced states


def hmc_sample(
    edge_index: np.ndarray,
    weight: np.ndarray,
    site: dict[str, np.ndarray],
    lam_off: np.ndarray,
    k: np.ndarray,
    n_cells: int,
    *,
    sweeps: int = 300,
    burn_in: int = 200,
    steps: int = 16,
    target: float = 0.75,
    thin: int = 2,
    seed: int = 0,
) -> tuple[np.ndarray, HMCReport]:
    r"""Two chains of Hamiltonian Monte Carlo on the whole field (module docstring).

    Args:
        edge_index: ``[2, E]`` edges j -> i.
        weight: ``[E]`` edge weights.
        site: ``lam``, ``kappa``, ``offset`` ``[G]`` and ``delta`` (:func:`site_parameters`).
        lam_off: ``[G, G]`` symmetric :math:`\Lambda_\circ`, zero diagonal.
        k: ``[G, G]`` symmetric intercellular coupling :math:`K`.
        n_cells: ``N``.
        sweeps: HMC iterations after burn-in (default 300), the step size frozen.
        burn_in: Iterations first (default 200), tuning the step size; discarded.
        steps: Mean leapfrog steps per trajectory (default 16), uniform in
            ``[ceil(steps / 2), steps + floor(steps / 2)]``.
        target: Acceptance the step size is tuned to (default 0.75).
        thin: Iterations between the states traced after burn-in (default 2).
        seed: Seed of the starts, momenta and decisions.

    Returns:
        ``(y, report)``: final states ``[N, 2, G]`` and an :class:`HMCReport`.
    """
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    g = lam_off.shape[0]
    if not (np.allclose(lam_off, lam_off.T) and np.allclose(k, k.T)):
        raise GraphDataError("lam_off, k: expected symmetric matrices")
    if np.any(np.diag(lam_off) != 0):
        raise GraphDataError("lam_off: expected a zero diagonal (the site potential holds it)")
    if thin < 1 or steps < 1 or sweeps < 1 or burn_in < 0 or not 0 < target < 1:
        raise GraphDataError(
            f"thin, steps, sweeps, burn_in, target: expected >= 1, >= 1, >= 1, >= 0 and in "
            f"(0, 1), got {thin}, {steps}, {sweeps}, {burn_in}, {target}"
        )
    lam = np.asarray(site["lam"], dtype=np.float64)
    kappa = np.asarray(site["kappa"], dtype=np.float64)
    if (lam <= 0).any() or (kappa < 0).any():
        raise GraphDataError("site: expected lam > 0 (it makes p normalisable) and kappa >= 0")
    delta = float(site["delta"])
    mass = lam + kappa / (2 * delta**2)  # [G]
    s = symmetric_adjacency(edge_index, weight, n_cells)

    def logp(v: np.ndarray) -> np.ndarray:
        return _log_density_chains(v, s, site, lam_off, k)

    def grad(v: np.ndarray) -> np.ndarray:
        return grad_log_density(v, s, site, lam_off, k)

    y = np.zeros((n_cells, 2, g))
    y[:, 1] = 3.0 / np.sqrt(lam) * rng.standard_normal((n_cells, g))
    current_logp, current_grad = logp(y), grad(y)
    # dual averaging (Hoffman & Gelman 2014, Algorithm 5) on log eps, during burn-in only
    log_eps = math.log(0.5)
    mu, h_bar, log_eps_bar, gamma, t0, kappa_da = math.log(5 * 0.5), 0.0, 0.0, 0.05, 10.0, 0.75
    trace = []
    accepted: list[float] = []
    divergences = 0
    for it in range(burn_in + sweeps):
        eps = math.exp(log_eps if it < burn_in else log_eps_bar) * rng.uniform(0.8, 1.2)
        p = rng.standard_normal(y.shape) * np.sqrt(mass)
        kinetic0 = 0.5 * (p**2 / mass).sum(axis=(0, 2))
        n_steps = int(rng.integers((steps + 1) // 2, steps + steps // 2 + 1))  # mean ~ steps
        q, gr = y.copy(), current_grad
        p = p + 0.5 * eps * gr
        for step in range(n_steps):
            q = q + eps * p / mass
            gr = grad(q)
            if step < n_steps - 1:
                p = p + eps * gr
        p = p + 0.5 * eps * gr
        new_logp = logp(q)
        error = (-new_logp + 0.5 * (p**2 / mass).sum(axis=(0, 2))) - (-current_logp + kinetic0)
        error = np.where(np.isfinite(error), error, np.inf)  # [2]
        accept_prob = np.exp(-np.maximum(error, 0.0))
        take = rng.random(2) < accept_prob
        y[:, take] = q[:, take]
        current_logp = np.where(take, new_logp, current_logp)
        current_grad = current_grad.copy()
        current_grad[:, take] = gr[:, take]
        if it < burn_in:
            m = it + 1
            h_bar = (1 - 1 / (m + t0)) * h_bar + (target - float(accept_prob.mean())) / (m + t0)
            log_eps = mu - math.sqrt(m) / gamma * h_bar
            eta = m**-kappa_da
            log_eps_bar = eta * log_eps + (1 - eta) * log_eps_bar
        else:
            accepted.append(float(accept_prob.mean()))
            divergences += int((error > 1000).sum())
            if (it - burn_in + 1) % thin == 0:
                trace.append(np.concatenate([y.mean(0), (y**2).mean(0)], -1))  # [2, 2G]
    if burn_in == 0:
        log_eps_bar = log_eps
    if not np.isfinite(y).all():
        raise GraphDataError("hmc_sample: non-finite state")
    max_z, null_median = chain_agreement(y)
    traced = np.asarray(trace).reshape(-1, 2, 2 * g)
    report = HMCReport(
        acceptance=float(np.mean(accepted)),
        step_size=math.exp(log_eps_bar),
        steps=steps,
        divergences=divergences,
        r_hat_max=_r_hat(traced),
        autocorrelation_sweeps=thin * _autocorrelation_time(traced),
        thin=thin,
        x2_max_z=max_z,
        x2_z_null_median=null_median,
        n_colours=1,
        sweeps=burn_in + sweeps,
        seconds=time.perf_counter() - start,
    )
    return y, report


def pig_counts(mu: np.ndarray, phi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    r"""Poisson-inverse-Gaussian counts: :math:`\mathrm{Poisson}(\mu Z)`, :math:`Z \sim
    \mathrm{IG}(1, 1/\phi)` (numpy's Wald), broadcast; int64 of ``mu``'s shape."""
    mu = np.asarray(mu, dtype=np.float64)
    phi = np.broadcast_to(np.asarray(phi, dtype=np.float64), mu.shape)
    if (mu < 0).any() or (phi <= 0).any():
        raise GraphDataError("pig_counts: expected mu >= 0 and phi > 0")
    z = rng.wald(1.0, 1.0 / phi)
    return rng.poisson(mu * z).astype(np.int64)


def dispersion_trend(mean: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    r""":math:`\phi_j = \min(4, (0.08 + 0.3/\sqrt{\bar\mu_j}) e^{0.5\zeta_j})` (module doc)."""
    return np.minimum(
        4.0, (0.08 + 0.3 / np.sqrt(mean)) * np.exp(0.5 * rng.standard_normal(mean.shape))
    )


def wholetx_counts(
    y: np.ndarray,
    cell_type: np.ndarray,
    layout: dict[str, Any],
    coords: np.ndarray,
    rng: np.random.Generator,
    *,
    n_other: int = 2000,
    depth: float = 2000.0,
    n_types: int = 6,
    mean_range: tuple[float, float] = (0.3, 30.0),
    capture_sd: float = 0.35,
    type_sd: float = 0.35,
    size_exponent: float = 0.5,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    r"""Whole-transcriptome Poisson-inverse-Gaussian counts (module docstring).

    Returns ``(counts int64 [N, G + B], coupled [G] positions in var, params)``; ``params``:
    ``size_factor`` ``[N]``, ``rate`` ``[N, G + B]`` (:math:`\mu`), ``dispersion`` ``[G + B]``,
    ``gene_mean`` ``[G]`` (:math:`m_g`), ``baseline`` ``[G]`` (:math:`\alpha_g`),
    ``base_mean`` ``[B]`` (:math:`b_j`), ``role`` ``[G + B]`` (str), ``type_effect`` ``[T]``.
    """
    n, g = y.shape
    if n_other < 1 or depth <= 0:
        raise GraphDataError(f"n_other, depth: expected >= 1 and > 0, got {n_other}, {depth}")
    n_vars = g + n_other
    # size factors: cell type (total RNA), cell size (dense region: smaller), capture
    tau = type_sd * rng.standard_normal(n_types)
    intensity = np.asarray(layout["intensity"], dtype=np.float64)
    log_s = (
        tau[cell_type]
        - size_exponent * (np.log(intensity) - np.log(intensity).mean())
        + capture_sd * rng.standard_normal(n)
    )
    size = np.exp(log_s - log_s.mean())  # [N] geometric mean 1
    # coupled genes: stratified log-uniform means
    lo, hi = np.log(mean_range)
    strata = (rng.permutation(g) + rng.random(g)) / g
    gene_mean = np.exp(lo + strata * (hi - lo))
    alpha = np.log(gene_mean) - np.log((size[:, None] * np.exp(y)).mean(0))
    coupled_rate = size[:, None] * np.exp(alpha[None] + y)  # [N, G]
    # other genes: a wide spread of base means, a few very high
    high = rng.random(n_other) < 0.03
    base = np.exp(
        np.where(high, math.log(15.0) + 0.8 * rng.standard_normal(n_other),
                 math.log(0.12) + 1.3 * rng.standard_normal(n_other))
    )  # fmt: skip
    base *= (depth - gene_mean.sum()) / base.sum() if depth > gene_mean.sum() else 1.0
    role = np.full(n_other, "background", dtype=object)
    role[high] = "housekeeping"
    kind = rng.random(n_other)
    marker = ~high & (kind < 0.15)
    regional = ~high & (kind >= 0.15) & (kind < 0.20)
    gradient = ~high & (kind >= 0.20) & (kind < 0.25)
    role[marker], role[regional], role[gradient] = "marker", "regional", "gradient"
    effect = np.zeros((n, n_other))
    gene_type = rng.integers(n_types, size=n_other)
    fold = rng.uniform(1.0, 3.0, n_other)
    effect[:, marker] = np.where(cell_type[:, None] == gene_type[marker], fold[marker], 0.0)
    sign = np.where(rng.random(n_other) < 0.5, 1.0, -1.0) * rng.uniform(0.5, 1.5, n_other)
    dense = np.asarray(layout["dense"], dtype=np.float64)
    effect[:, regional] = dense[:, None] * sign[regional]
    along = 2.0 * coords[:, 0] / float(layout["side"]) - 1.0
    effect[:, gradient] = along[:, None] * sign[gradient]
    shape = np.exp(effect)
    other_rate = size[:, None] * base * shape / shape.mean(0)  # [N, B]
    # var order: the coupled genes at random positions, kept in their order
    coupled = np.sort(rng.choice(n_vars, g, replace=False))
    others = np.setdiff1d(np.arange(n_vars), coupled)
    rate = np.empty((n, n_vars))
    rate[:, coupled] = coupled_rate
    rate[:, others] = other_rate
    roles = np.empty(n_vars, dtype=object)
    roles[coupled] = "coupled"
    roles[others] = role
    dispersion = dispersion_trend(rate.mean(0), rng)
    counts = pig_counts(rate, dispersion, rng)
    empty = counts.sum(1) == 0
    while empty.any():  # filter_cells(min_counts=1): a cell with no UMI is drawn again
        counts[empty] = pig_counts(rate[empty], dispersion, rng)
        empty = counts.sum(1) == 0
    params = {
        "size_factor": size,
        "rate": rate,
        "dispersion": dispersion,
        "gene_mean": gene_mean,
        "baseline": alpha,
        "base_mean": base,
        "role": roles.astype(str),
        "type_effect": tau,
        "total_counts": counts.sum(1),
    }
    return counts, coupled, params


@dataclass(kw_only=True)
class WholeTxTissue:
    """A tissue of :func:`simulate`: graph, truth over the coupled genes, latent rows, and the
    whole transcriptome's counts (``counts`` ``[N, G + B]`` in var order; the coupled genes at
    ``coupled``)."""

    coords: np.ndarray  # [N, 2]
    edge_index: np.ndarray  # [2, E] j -> i
    edge_weight: np.ndarray  # [E] GCN weights
    W_intra: np.ndarray  # [G, G] -Lambda_off / 2, zero diagonal  # noqa: N815
    W_inter: np.ndarray  # [G, G] K  # noqa: N815
    x: np.ndarray  # [N, G] latent rows on the sphere
    latent: np.ndarray  # [N, G]
    counts: np.ndarray  # [N, G + B] int64, all genes
    coupled: np.ndarray  # [G] positions of the coupled genes in var, increasing
    log1p: np.ndarray  # [N, G + B] float32 normalize_total + log1p over all genes
    cell_type: np.ndarray  # [N]
    dense: np.ndarray  # [N] bool
    count_params: dict[str, Any]
    report: HMCReport
    field: dict[str, np.ndarray]  # site parameters, lam_off, K
    genes: dict[str, np.ndarray]  # pathway-space points, polarity, lateral inhibition
    params: dict[str, Any] = field(default_factory=dict)

    def to_anndata(self, *, sparse: bool = True) -> Any:
        """AnnData of all genes: ``X`` and ``layers['counts']`` (float32 CSR, or dense int64
        with ``sparse=False``), ``layers['log1p']``, ``layers['signed']``,
        ``var['highly_variable']`` True exactly on the coupled genes, ``obs['total_counts']``,
        ``obs['n_genes_by_counts']``, ``obs['cell_type']``, ``obs['region']``,
        ``obsm['spatial']``, the graph of ``spatial_neighbors_knn`` and ``uns['tissue_wholetx']``
        (parameters, sampler, the truth ``W_intra`` / ``W_inter`` and the coupled genes' names).
        """
        import pandas as pd

        obs = {
            "total_counts": self.counts.sum(1),
            "n_genes_by_counts": (self.counts > 0).sum(1),
            "cell_type": pd.Categorical([f"type{t}" for t in self.cell_type]),
            "region": pd.Categorical(np.where(self.dense, "dense", "sparse")),
        }
        return coupled_anndata(self, key="tissue_wholetx", digits=5, obs=obs, sparse=sparse)


def coupled_anndata(tissue: Any, *, key: str, digits: int, obs: dict, sparse: bool) -> Any:
    """The AnnData of a tissue whose ``coupled`` genes sit among others (wholetx, xenium).

    ``tissue`` has ``counts`` ``[N, G_all]``, ``coords``, ``coupled`` (the coupled genes'
    columns), ``x`` (their sphere coordinates), ``log1p``, ``params``, ``report``, ``W_intra``
    and ``W_inter``. ``X`` and ``layers['counts']`` are float32 CSR (dense int64 with
    ``sparse=False``); ``layers['log1p']``; ``layers['signed']`` (``x`` on the coupled columns,
    0 elsewhere); ``var['highly_variable']`` True exactly on the coupled genes, var names
    ``gene`` + ``digits`` digits; ``obs`` the columns given, in their order; ``obsm['spatial']``;
    the graph of ``spatial_neighbors_knn`` (``params['k']``, default 6); ``uns[key]`` the
    parameters, the sampler's report, the truth and the coupled genes' names.
    """
    import scipy.sparse as sp
    from anndata import AnnData

    from graphdata.spatial_anndata import spatial_neighbors_knn

    n, n_vars = tissue.counts.shape
    counts: Any = (
        sp.csr_matrix(tissue.counts.astype(np.float32)) if sparse else tissue.counts.copy()
    )
    x = counts.copy() if sparse else tissue.counts.astype(np.float32)
    adata = AnnData(X=x, obsm={"spatial": tissue.coords.astype(np.float64)})
    adata.obs_names = [f"cell{i}" for i in range(n)]
    adata.var_names = [f"gene{j:0{digits}d}" for j in range(n_vars)]
    for name, column in obs.items():
        adata.obs[name] = column
    hvg = np.zeros(n_vars, dtype=bool)
    hvg[tissue.coupled] = True
    adata.var["highly_variable"] = hvg
    adata.layers["counts"] = counts
    adata.layers["log1p"] = tissue.log1p.copy()
    signed = np.zeros((n, n_vars), dtype=np.float32)
    signed[:, tissue.coupled] = tissue.x
    adata.layers["signed"] = signed
    spatial_neighbors_knn(adata, int(tissue.params.get("k", 6)))
    adata.uns[key] = {
        "params": dict(tissue.params),
        "sampler": tissue.report.as_dict(),
        "W_intra": tissue.W_intra.copy(),
        "W_inter": tissue.W_inter.copy(),
        "coupled_genes": list(adata.var_names[tissue.coupled]),
    }
    return adata


def simulate(
    n_cells: int,
    n_genes: int,
    *,
    seed: int = 0,
    k: int = 6,
    sweeps: int = 300,
    burn_in: int = 200,
    steps: int = 16,
    thin: int = 2,
    intra_norm: float = 0.6,
    margin: float = 0.9,
    n_other: int = 2000,
    depth: float = 2000.0,
    n_types: int = 6,
    density_ratio: float = 3.0,
) -> WholeTxTissue:
    """Layout, graph, truth, HMC states and whole-transcriptome counts of one tissue (module
    docstring). Every draw comes from ``numpy.random.default_rng(seed)`` and its spawned
    streams, so a seed reproduces the tissue."""
    if n_cells <= k:
        raise GraphDataError(f"n_cells: expected more than k = {k} cells, got {n_cells}")
    if not (0 < intra_norm < 1 and 0 < margin < 1):
        raise GraphDataError(
            f"intra_norm, margin: expected in (0, 1) (log p strictly concave), got {intra_norm}, "
            f"{margin}"
        )
    if n_types < 1:
        raise GraphDataError(f"n_types: expected >= 1, got {n_types}")
    streams = np.random.default_rng(seed).spawn(6)
    coords, layout = two_region_positions(n_cells, streams[0], density_ratio=density_ratio)
    edge_index = knn_edges(coords, k)
    weight = gcn_weights(edge_index, n_cells)
    proportions = streams[1].dirichlet(np.full(n_types, 0.8), 2)  # [2 regions, T]
    u = streams[1].random(n_cells)
    cdf = np.cumsum(proportions, 1)[np.asarray(layout["dense"], dtype=int)]  # [N, T]
    cell_type = np.minimum((u[:, None] > cdf).sum(1), n_types - 1)
    w0, k0, genes = draw_couplings(n_genes, streams[2])
    site = site_parameters(n_genes, streams[3])
    half = 1.0 / np.sqrt(site["lam"])
    lam_off = -2.0 * w0
    lam_off *= intra_norm / np.linalg.norm(half[:, None] * lam_off * half[None], 2)
    kappa, rho_s = coupling_scale(
        edge_index, weight, n_cells, np.diag(site["lam"]) + lam_off, k0, margin,
        v0=np.ones(n_cells),
    )  # fmt: skip
    k_mat = kappa * k0
    states, report = hmc_sample(
        edge_index, weight, site, lam_off, k_mat, n_cells, sweeps=sweeps, burn_in=burn_in,
        steps=steps, thin=thin, seed=int(streams[4].integers(2**62)),
    )  # fmt: skip
    latent = states[:, 0]
    counts, coupled, count_params = wholetx_counts(
        latent, cell_type, layout, coords, streams[5], n_other=n_other, depth=depth,
        n_types=n_types,
    )  # fmt: skip
    params = {
        "n_cells": n_cells,
        "n_genes": n_genes,
        "seed": seed,
        "k": k,
        "sweeps": sweeps,
        "burn_in": burn_in,
        "steps": steps,
        "thin": thin,
        "intra_norm": intra_norm,
        "margin": margin,
        "kappa": kappa,
        "rho_adjacency": rho_s,
        "n_other": n_other,
        "depth": depth,
        "n_types": n_types,
        "density_ratio": density_ratio,
        "dense_fraction": float(np.mean(layout["dense"])),
    }
    return WholeTxTissue(
        coords=coords,
        edge_index=edge_index,
        edge_weight=weight,
        W_intra=-0.5 * lam_off,
        W_inter=k_mat,
        x=latent / np.linalg.norm(latent, axis=1, keepdims=True),
        latent=latent,
        counts=counts,
        coupled=coupled,
        log1p=_log1p_normalised(counts),
        cell_type=cell_type,
        dense=np.asarray(layout["dense"], dtype=bool),
        count_params=count_params,
        report=report,
        field={**site, "lam_off": lam_off, "K": k_mat},
        genes=genes,
        params=params,
    )
