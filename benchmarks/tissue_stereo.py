r"""A tenth tissue simulator: a sub-cellular sequencing array read through cell segmentation.

The held-out world of ``bench_celcomen_counts --world stereo`` (session 24), written by a helper who
did not read the library's Celcomen code (``spatial/celcomen.py``, ``_inputs.py``,
``objectives.py``, ``_solver.py``, ``model.py``, ``tools.py``, ``tl.py``) and never fitted it on
this world. It looks like a **Stereo-seq / Visium HD** slide analysed the way such data are:
transcripts are captured in **2 um bins** over a confluent tissue, cells are **segmented** from a
nuclear image (nuclei expanded into the bins around them, bin2cell-style), and the observations are
the **segmented objects**, whose counts are the transcripts of their bins. The segmentation errs as
real ones do: transcripts **diffuse** a little before capture and cytoplasm reaches past the
nuclei's expansion, so part of each cell's RNA is counted in the **neighbouring object** (spillover,
proportional to the shared boundary) or in **unassigned bins (lost)**; small cells are sometimes
**merged** with a neighbour and large ones **split** in two. Depth is low (300-1,500 UMIs per object
over a whole transcriptome of 1,000-3,000 other genes). Its stages differ from the other nine: the
layout (a power diagram of cells on a bin grid, segmented by nucleus expansion); a
**generalised-Gaussian site potential** :math:`-\gamma |t - o|^p`, :math:`p \in (1.6, 2.8)`, with a
Gaussian part; a **stochastic-block-model gene graph** with module relays between cells; an
**elliptical slice sampler within Gibbs**, blocked by cell and gene module, on a moment-matched
Gaussian reference; and **Poisson-Beta (telegraph-model bursting) counts** thinned through the
segmentation with **ambient RNA** added to every object. Neither ``spatial.simulate`` nor
``spatial.model`` is imported.

**Cells** (:func:`tissue_cells`; units um). A square of side :math:`L = \sqrt{C a_0}`,
:math:`a_0` = 110 um^2 per cell. ``C`` centres i.i.d. with density :math:`\propto \tau(x) =
\exp(\alpha \tanh f(x))` (:math:`\alpha` = 0.5, :math:`f` a unit-variance smooth random field,
64 random Fourier features of length 150 um), then relaxed 30 rounds
(:func:`benchmarks.tissue_beads._relax`, disc radius :math:`s(x)/2`, :math:`s(x) =
\lambda(x)^{-1/2}` the local spacing, :math:`\lambda = \lambda_0 \tau`, :math:`\lambda_0 = C /
(L^2 \bar\tau)`). Each cell has a cytoplasm **reach** :math:`r_c = 0.62\, s(x_c)\, e^{0.1
\xi_c}`. *Cell types* (:data:`CELL_TYPES`): the argmax of three smooth fields (length 120 um;
epithelial, fibroblast and muscle domains), and **immune** cells scattered with probability 0.1.

**Bins** (:func:`bin_grid`). Square 2 um bins over :math:`[-m, L + m]^2` (:math:`m = \max r +
8` um, so no diffused transcript leaves the grid); 68,000 bins at 2,000 cells. Bin ``b`` (centre
:math:`x_b`) belongs to the cell of least **power distance** among those that reach it,

.. math::
    \mathrm{owner}(b) = \arg\min_{c:\ \lVert x_b - x_c \rVert \le r_c}
        \big(\lVert x_b - x_c\rVert^2 - r_c^2\big),

else to none (extracellular): a confluent tissue with rounded corners, larger cells where the
density is low; :math:`n_c` bins per cell (median 25, i.e. 100 um^2).

**Segmentation** (:func:`detect_nuclei`, :func:`segment_bins`). Nuclei are detected at
:math:`x_c + \mathcal N(0, 0.8^2 I)`. **Merges**: in random order, a cell with :math:`n_c` at
most the 20 % quantile is merged, with probability ``merge`` (0.3), with its nearest cell when
neither is merged already (one object, two nuclei). **Splits**: a cell with :math:`n_c` at least
the 80 % quantile, not merged, is split with probability ``split`` (0.25): two nuclei at
:math:`x_c \pm 0.35 \sqrt{4 n_c / \pi}\, u` (:math:`u` a uniform direction), two objects. Then
**nucleus expansion**: a bin's label :math:`\ell(b)` is the object of its nearest nucleus if that
is within ``segment_reach`` (5.5 um), else :math:`-1` (**lost**: not assigned to any object);
objects with fewer than 4 bins are dropped (their bins lost). The expansion does not know the
cells' sizes, so boundaries between a large and a small cell are misplaced, and cytoplasm beyond
5.5 um of a nucleus is lost. At 2,000 cells (seed 0): 1,978 objects, 120 merged and 196 split
pieces.

**Diffusion and footprint** (:func:`diffusion_kernel`, :func:`footprint`,
:func:`transcript_labels`). A cell's transcripts are made in its bins uniformly (content is spread
over the cytoplasm) and each is displaced before capture by :math:`(\delta_x, \delta_y)`, i.i.d.
per axis with law :math:`q(d) \propto \Phi((d + \frac12)/s) - \Phi((d - \frac12)/s)`, :math:`|d|
\le 3`, :math:`s = \sigma_d / 2` um, :math:`\sigma_d` = ``diffusion`` (1.2 um; :math:`q(\pm 1)` =
0.196, :math:`\mathbb E D^+ = \sum_{d \ge 1} d\, q(d)` = 0.209). A transcript is counted in the
object that labels its landing bin, or lost. So cell ``c``'s transcripts go to object ``s`` with
probability

.. math::
    F_{sc} = \frac{1}{n_c} \sum_{b \in c} \sum_{\delta} q(\delta_x) q(\delta_y)\,
        [\ell(b + \delta) = s], \qquad F_{\varnothing c} = 1 - \sum_s F_{sc}
        \ \text{(lost)},

every transcript to exactly one object or the lost set. **Spillover follows the shared
boundary**: for two rectangular cells sharing a straight edge of :math:`\ell` bins, each at least
3 bins deep and segmented exactly, :math:`F_{sc} = \mathbb E D^+ \sum_{y, y' \in \mathrm{edge}}
q(y' - y) / n_c \approx \ell\, \mathbb E D^+ / n_c` (module tests), and the segmentation's
misplaced boundaries add a share of the same boundary's bins. At 2,000 cells a cell's spill
(:math:`1 - F_{\mathrm{own}} - F_\varnothing`, own = its nucleus's object) has median 0.13, and
its lost fraction mean 0.15.

**Graphs.** The energy lives on the *cells*: directed k-NN on cell centres (k = 6), edges
:math:`j \to i`, GCN weights :math:`w_{ij} = 1/\sqrt{d_i d_j} = 1/6`. The bench fits on the
*objects*: ``edge_index`` / ``edge_weight`` and ``obsm['spatial']`` are the objects' (centroids
of their bins; k-NN, k = 6, GCN weights; ``spatial_neighbors_knn`` rebuilds it). **The truth
stays the cell-level energy's** ``W_intra`` and ``W_inter``: spillover, merges and splits mix
neighbouring cells into one observation, a nuisance a fit on objects must see through.

**Latent field.** :math:`Y \in \mathbb R^{C \times G}` over the ``C`` cells, :math:`p \propto
e^E`,

.. math::
    E(Y) = \sum_i \Big[\sum_g \phi_g(y_{ig}) + y_i^\top W_{\mathrm{intra}}\, y_i\Big]
        + \sum_i \sum_{j \to i} w_{ij}\, y_i^\top W_{\mathrm{inter}}\, y_j, \qquad
    \phi_g(t) = -\tfrac{\lambda_g}{2} t^2 + \psi_g(t),\ \ \psi_g(t) = -\gamma_g |t - o_g|^{p_g},

a **Gaussian times generalised-Gaussian site potential**: :math:`\lambda_g \sim U(0.2, 0.45)`,
:math:`\gamma_g \sim U(0.3, 0.8)`, :math:`p_g \sim U(1.6, 2.8)`, :math:`o_g = \pm U(0.3, 0.9)`. For
:math:`p_g < 2` the peak at :math:`o_g` is sharpened (its curvature :math:`\gamma p (p - 1)
|t - o|^{p - 2}` is unbounded there: leptokurtic, lone-site excess kurtosis up to +0.4), for
:math:`p_g > 2` it is flattened (platykurtic, down to -0.5); every :math:`\phi_g` is concave,
so :math:`E` is concave. The truth is the two matrices: :math:`\partial^2 E / \partial y_{ig}
\partial y_{ih} = 2 (W_{\mathrm{intra}})_{gh}` (:math:`g \ne h`) and :math:`\partial^2 E /
\partial y_{ig} \partial y_{jh} = w_{ij} (W_{\mathrm{inter}})_{gh}` (for an edge :math:`j \to i`
without its reverse; :math:`(w_{ij} + w_{ji}) (W_{\mathrm{inter}})_{gh}` with it).

``W_intra`` (symmetric, zero diagonal) lives on a **stochastic block model**
(:func:`draw_couplings`): :math:`n_m = \mathrm{clip}(\mathrm{round}(G/6), 2, 4)` modules of
near-equal size (2 at G = 10, 3 at G = 20), an edge within a module with probability :math:`\min(1,
2.5 / (G/n_m - 1))`, between modules with probability :math:`0.15\, G / \#\{\text{between pairs}\}`
(about :math:`0.15 G` edges), at least one between-module edge; signs positive with probability 0.8
within modules (co-regulated programmes) and 0.25 between them (antagonistic programmes), magnitudes
:math:`U(0.5, 1)`. ``W_inter`` (symmetric): **module relays**, one sender per module coupled to one
receiver in the next module (cyclically), and :math:`\max(1, \mathrm{round}(G/10))` **juxtacrine
pairs** within modules, signs :math:`\pm` with probability 1/2 (both present), magnitudes
:math:`U(0.5, 1)`; a **positive diagonal** :math:`U(0.3, 0.8)` on about 30 % of the genes (community
effect) and a **negative diagonal** :math:`-U(0.2, 0.5)` on about 15 % (contact inhibition); the
rest 0.

**Scale and normalisability** (as in the visium world): with :math:`D = \mathrm{diag}(\lambda)`,
:math:`\Lambda_\circ = -2 W_{\mathrm{intra}}` is scaled to :math:`\lVert D^{-1/2} \Lambda_\circ
D^{-1/2}\rVert_2 =` ``intra_norm`` (0.6), so :math:`M = D + \Lambda_\circ \succ 0`, and
:math:`W_{\mathrm{inter}} = \kappa K_0` with :math:`\rho(A + A^\top)\,\rho(M^{-1/2} K_0
M^{-1/2})\,\kappa =` ``margin`` (0.9) (:func:`benchmarks.tissue_gibbs_pln.coupling_scale`), so
:math:`Q_0 = I_C \otimes M - (A + A^\top) \otimes W_{\mathrm{inter}} \succeq (1 - 0.9)\, I_C
\otimes M \succ 0`. Then :math:`E(Y) = -\frac12 \mathrm{vec}(Y)^\top Q_0 \mathrm{vec}(Y) +
\sum_{i,g} \psi_g(y_{ig})` and :math:`\psi_g \le 0`, so :math:`e^{E} \le e^{-\frac12
\mathrm{vec}(Y)^\top Q_0 \mathrm{vec}(Y)}`, which is integrable: the energy is normalisable
(and :math:`p` is log-concave, hence unimodal).

**Sampler** (:func:`elliptical_gibbs`): **elliptical slice sampling** (Murray, Adams & MacKay
2010) within Gibbs, **blocked by cell and gene module**: one block :math:`y_{iB}` (cell ``i``,
the genes of one ``W_intra`` module ``B``) at a time, all cells of a colour class of the cell
graph at once (conditionally independent). With :math:`K = \mathrm{diag}(\kappa)` and :math:`P =
M + K`, the block's conditional is

.. math::
    \pi(y_B) \propto \exp\Big(-\tfrac12 y^\top M y + y^\top W_{\mathrm{inter}} n_i
        + \textstyle\sum_{g \in B} \psi_g(y_g)\Big)
    = \mathcal N\big(y_B;\ m_{iB}, P_{BB}^{-1}\big)\, L_B(y_B),

:math:`n_i = \sum_{j \to i} w_{ij} y_j + \sum_{i \to l} w_{li} y_l`, :math:`m_{iB} =
P_{BB}^{-1} (W_{\mathrm{inter}} n_i + K c + 2 W_{\mathrm{intra}} y_{i\bar B})_B`, :math:`\log
L_B(y_B) = \sum_{g \in B} [\psi_g(y_g) + \frac{\kappa_g}{2} (y_g - c_g)^2]` (+ const): the
product is exactly :math:`\pi` whatever :math:`K`, which only sets the efficiency. The reference
is **moment-matched** (:func:`reference_fit`): :math:`c_g` and :math:`1 / (\lambda_g + \kappa_g)`
are the mean and variance of the lone site density :math:`e^{\phi_g}` (a grid integral) where
:math:`p_g > 2`; where :math:`p_g \le 2`, :math:`\kappa_g = 0`, because :math:`\psi_g` then grows
more slowly than any quadratic and :math:`\kappa_g > 0` would make :math:`L_B` unbounded (a chain
started in the tails would be held there; the grid-oracle test caught it). So :math:`L_B` is
bounded above. One step: :math:`\nu \sim \mathcal N(0, P_{BB}^{-1})`, a level :math:`\log
L_B(y_B) + \log u`, an angle :math:`\theta \sim U(0, 2\pi)` and bracket :math:`[\theta - 2\pi,
\theta]`; propose :math:`m + (y_B - m)\cos\theta + \nu \sin\theta` and, until :math:`\log L_B`
exceeds the level, shrink the bracket towards 0 and redraw :math:`\theta` in it. The step is
reversible with respect to :math:`\pi` and terminates with probability 1; there is no step size,
nothing is tuned or adapted. Two chains (from 0 and from 3 envelope sds :math:`\lambda^{-1/2}`
times a standard normal); ``burn_in`` sweeps, then ``sweeps``; every ``thin``-th sweep the
per-gene mean and mean square over cells are traced for the largest Gelman-Rubin :math:`\hat R`
and autocorrelation time (:mod:`benchmarks.tissue_panel`); the report adds the two chains'
agreement, ``acceptance`` (the fraction of block updates taking their first angle, after
burn-in), the angles tried per block update and the configurational temperature :math:`\sum
(\partial E)^2 / \sum (-\partial^2 E)` (1 at equilibrium; :math:`-\partial^2 E` has an
integrable :math:`|t - o|^{p - 2}` peak for :math:`p < 2`, of finite variance since :math:`p >
1.5`). The tissue is chain 0. At 2,000 cells the first angle is taken in about 40 % of block
updates (3 angles per update) and the chains decorrelate in 10-16 sweeps (the bench's ``SWEEPS``
comment), so ``bench_celcomen_counts --world stereo`` samples 600 burn-in + 1,200 kept sweeps.

**Counts** (:func:`burst_rates`, :func:`segmented_rates`). ``G`` coupled genes sit at random
positions among ``n_other`` other genes (default uniform on 1,000-3,000),
``var['highly_variable']`` True exactly on the coupled ones. Cell ``c`` has an RNA content
:math:`v_c = (n_c / \mathrm{median}\, n) \cdot \mathrm{LogNormal}(0, 0.2^2)` (proportional to its
area) and a **capture efficiency** :math:`e_c = \exp(\sigma_e (f_p(x_c) + \varepsilon_c) /
\sqrt 2 - \sigma_e^2 / 2)`, :math:`f_p` a unit-variance smooth field (length 200 um: uneven
permeabilisation across the chip), :math:`\varepsilon_c \sim \mathcal N(0, 1)`, :math:`\sigma_e`
= ``capture_sd`` (0.3). Its expected captured transcripts are :math:`\mu_{cg} = \Delta e_c v_c
e^{\beta_g + y_{cg}}` for a coupled gene and :math:`\mu_{cj} = \Delta e_c v_c P_{t_c j}` for
another (:math:`P_{tj} = b_j e^{f_{tj}} / Z_t`, :math:`\log b_j \sim \mathcal N(0, 1.2^2)`, 25 %
of them **markers** of one of the 4 types with :math:`f = U(1, 2.5)` there, :math:`Z_t` keeping
every type's total equal); cell types move only the other genes. :math:`\Delta` is set so the
median over objects of :math:`\sum_{j\ \mathrm{other}} (F\mu)_{sj}` is ``depth`` (log-uniform on
300-1,500 unless given), :math:`\beta_g` so that :math:`\mathrm{mean}_s (F\mu)_{sg} = m_g`
(stratified log-uniform on (0.1, 10)).

Transcription is **bursty** (the telegraph model's steady state): :math:`\Lambda_{cj} = \mu_{cj}
B_{cj} (a_j + b_j) / a_j`, :math:`B_{cj} \sim \mathrm{Beta}(a_j, b_j)` (the fraction of time the
promoter is on), :math:`a_j \sim \log U(1, 5)`, :math:`b_j \sim \log U(0.5, 3)` for the coupled
genes, both :math:`\log U(0.5, 5)` for the others. A cell's transcripts are
:math:`\mathrm{Poisson}(\Lambda_{cj})` (**Poisson-Beta**), each landing in object ``s`` with
probability :math:`F_{sc}` independently, so by Poisson thinning the object receives independent
:math:`\mathrm{Poisson}(F_{sc} \Lambda_{cj})` from each cell. **Ambient RNA** (from lysed cells,
settling evenly on the bins) adds :math:`A_{sj} = \rho\, |s|\, \pi_j`, :math:`|s|` the object's
bins, :math:`\pi_j = \sum_c \mu_{cj} / \sum_{c,j} \mu_{cj}` the tissue's mean profile,
:math:`\rho` set so the median object's ambient UMIs are ``ambient`` (:math:`U(0.02, 0.06)`
unless given) times the median object's expected cell-derived UMIs. So

.. math::
    c_{sj} \mid \Lambda \sim \mathrm{Poisson}\Big(\sum_c F_{sc} \Lambda_{cj} + A_{sj}\Big),
    \qquad \mathrm E\, c_{sj} = (F\mu)_{sj} + A_{sj},

.. math::
    \mathrm{Var}\, c_{sj} = \mathrm E\, c_{sj} + v_j \sum_c F_{sc}^2 \mu_{cj}^2, \quad
    \mathrm{Cov}(c_{sj}, c_{s'j}) = v_j \sum_c F_{sc} F_{s'c} \mu_{cj}^2, \quad
    v_j = \frac{b_j}{a_j (a_j + b_j + 1)},

(given :math:`\mu`; a lone cell has :math:`P(c = 0) = {}_1F_1(a; a + b; -\mu (a + b) / a)`), the
covariance coming from the bursts a cell shares between the objects it spills into. Objects
with no UMI are drawn again (:func:`benchmarks.tissue_gibbs_pln.draw_nonempty`). At 2,000 cells,
seed 0: a median of about 1,230 UMIs per object, ambient 3.7 % of them; the coupled genes' mean
counts 0.1-10 with zero fractions 0.03-0.9.

``X`` / ``layers['counts']`` are float32 CSR (dense int64 with ``sparse=False``);
``layers['log1p']`` is ``normalize_total`` + ``log1p``; ``layers['signed']`` holds the object's
transcript-weighted latent :math:`\sum_c F_{sc} e_c v_c y_c / \sum_c F_{sc} e_c v_c` on the
sphere in the coupled columns; ``obs`` has ``total_counts``, ``n_genes_by_counts``, ``n_bins``,
``area_um2``, ``segmentation`` (single, merged or split), ``capture_efficiency``,
``ambient_umis`` (expected) and ``cell_type`` (those of the object's dominant cell, the largest
:math:`F_{sc} e_c v_c`). Signs, support and Pearson of the off-diagonals compare; the scale has
no target.
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
from scipy.special import ndtr

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
from benchmarks.tissue_visium import smooth_field
from benchmarks.tissue_wholetx import coupled_anndata
from benchmarks.tissue_xenium import coupling_energy
from graphdata.errors import GraphDataError

__all__ = [
    "BIN_SIZE",
    "CELL_TYPES",
    "KERNEL_RADIUS",
    "SEGMENT_KINDS",
    "tissue_cells",
    "bin_grid",
    "detect_nuclei",
    "segment_bins",
    "diffusion_kernel",
    "footprint",
    "transcript_labels",
    "draw_couplings",
    "site_parameters",
    "site_potential",
    "log_density",
    "grad_log_density",
    "reference_fit",
    "elliptical_gibbs",
    "EllipticalReport",
    "burst_rates",
    "poisson_beta_counts",
    "segmented_rates",
    "StereoTissue",
    "simulate",
]

CELL_TYPES = ("epithelial", "fibroblast", "muscle", "immune")
SEGMENT_KINDS = ("single", "merged", "split")
BIN_SIZE = 2.0
KERNEL_RADIUS = 3


def tissue_cells(
    n_cells: int,
    rng: np.random.Generator,
    *,
    cell_area: float = 110.0,
    density_amplitude: float = 0.5,
    reach_scale: float = 0.62,
) -> dict[str, np.ndarray]:
    """True cells of the tissue (module docstring): ``centres`` [C, 2], ``reach`` [C] (the
    cytoplasm's radius), ``spacing`` [C] (local mean spacing), ``cell_type`` [C] and ``side``
    (the square's side, um)."""
    if n_cells < 10:
        raise GraphDataError(f"n_cells: expected >= 10, got {n_cells}")
    if not (cell_area > 0 and density_amplitude >= 0 and reach_scale > 0):
        raise GraphDataError(
            f"cell_area, density_amplitude, reach_scale: expected > 0, >= 0, > 0, got "
            f"{cell_area}, {density_amplitude}, {reach_scale}"
        )
    side = math.sqrt(n_cells * cell_area)
    field_rng, type_rng, size_rng = rng.spawn(3)
    omega = field_rng.standard_normal((64, 2)) / 150.0
    phase = field_rng.uniform(0.0, 2 * math.pi, 64)

    def tilt(x: np.ndarray) -> np.ndarray:
        f = math.sqrt(2.0 / 64) * np.cos(x @ omega.T + phase).sum(1)
        return np.exp(density_amplitude * np.tanh(f))

    top = math.exp(density_amplitude)
    found: list[np.ndarray] = []
    got = 0
    while got < n_cells:
        cand = rng.random((2 * n_cells, 2)) * side
        cand = cand[rng.random(len(cand)) < tilt(cand) / top]
        found.append(cand)
        got += len(cand)
    cells = np.concatenate(found)[:n_cells]
    g = (np.arange(64) + 0.5) / 64 * side
    grid = np.stack(np.meshgrid(g, g, indexing="ij"), -1).reshape(-1, 2)
    density = n_cells / side**2 / float(tilt(grid).mean())  # lambda_0 of the module docstring
    cells = _relax(cells, 0.5 / np.sqrt(density * tilt(cells)), side, rounds=30)
    spacing = 1.0 / np.sqrt(density * tilt(cells))
    reach = reach_scale * spacing * np.exp(0.1 * size_rng.standard_normal(n_cells))
    fields = np.stack([smooth_field(cells, type_rng, length=120.0) for _ in range(3)], 1)
    cell_type = fields.argmax(1)
    cell_type[type_rng.random(n_cells) < 0.1] = 3
    return {
        "centres": cells,
        "reach": reach,
        "spacing": spacing,
        "cell_type": cell_type.astype(np.int64),
        "side": np.asarray(side),
    }


def bin_grid(centres: np.ndarray, reach: np.ndarray, side: float) -> dict[str, np.ndarray]:
    r"""The 2 um bin grid over the tissue and each bin's true cell: ``xy`` [B, 2] bin centres,
    ``shape`` (nx, ny), ``origin``, ``owner`` [B] (the cell of least power distance
    :math:`\lVert x - c\rVert^2 - r_c^2` among those within their reach :math:`r_c`, -1 for
    extracellular bins) and ``n_bins`` [C]. A margin of ``reach.max()`` + 2 (``KERNEL_RADIUS``
    + 1) bins keeps every diffused transcript on the grid."""
    n = len(centres)
    pad = float(reach.max()) + 2 * BIN_SIZE * (KERNEL_RADIUS + 1)
    shape = (math.ceil((side + 2 * pad) / BIN_SIZE),) * 2
    origin = np.array([-pad, -pad])
    ax = origin[0] + (np.arange(shape[0]) + 0.5) * BIN_SIZE
    xy = np.stack(np.meshgrid(ax, ax, indexing="ij"), -1).reshape(-1, 2)
    k = min(8, n)
    dist, idx = cKDTree(centres).query(xy, k, distance_upper_bound=float(reach.max()))
    dist, idx = dist.reshape(len(xy), k), idx.reshape(len(xy), k)
    safe = np.minimum(idx, n - 1)
    inside = (idx < n) & (dist <= reach[safe])
    power = np.where(inside, dist**2 - reach[safe] ** 2, np.inf)
    best = power.argmin(1)
    owner = np.where(np.isfinite(power.min(1)), idx[np.arange(len(xy)), best], -1)
    # guard: a cell whose every bin went to neighbours keeps the bin under its centre
    n_bins = np.bincount(owner[owner >= 0], minlength=n)
    for c in np.flatnonzero(n_bins == 0):
        i, j = ((centres[c] - origin) // BIN_SIZE).astype(np.int64)
        owner[i * shape[1] + j] = c
    return {
        "xy": xy,
        "shape": np.asarray(shape),
        "origin": origin,
        "owner": owner.astype(np.int64),
        "n_bins": np.bincount(owner[owner >= 0], minlength=n),
    }


def detect_nuclei(
    centres: np.ndarray,
    n_bins: np.ndarray,
    rng: np.random.Generator,
    *,
    jitter: float = 0.8,
    merge: float = 0.3,
    split: float = 0.25,
) -> dict[str, np.ndarray]:
    """Nuclei found in the nuclear image and the objects they seed (module docstring):
    ``nuclei`` [K, 2], ``cell_of`` [K] (true cell of each nucleus), ``object_of`` [K] (the
    segmented object each seeds, before the size filter), ``kind`` [S0] (index into
    :data:`SEGMENT_KINDS`)."""
    if not (jitter >= 0 and 0 <= merge <= 1 and 0 <= split <= 1):
        raise GraphDataError(
            f"jitter, merge, split: expected >= 0 and in [0, 1], got {jitter}, {merge}, {split}"
        )
    n = len(centres)
    small, large = np.quantile(n_bins, [0.2, 0.8])
    _, near = cKDTree(centres).query(centres, 2)
    busy = np.zeros(n, dtype=bool)
    partner = np.full(n, -1)
    for c in rng.permutation(n):
        other = near[c, 1]
        if n_bins[c] <= small and not busy[c] and not busy[other] and rng.random() < merge:
            partner[c], busy[c], busy[other] = other, True, True
    is_split = (n_bins >= large) & ~busy & (rng.random(n) < split)
    cell_of = np.r_[np.arange(n), np.flatnonzero(is_split)]
    nuclei = centres[cell_of] + jitter * rng.standard_normal((len(cell_of), 2))
    direction = rng.standard_normal((int(is_split.sum()), 2))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    offset = 0.35 * np.sqrt(n_bins[is_split] * BIN_SIZE**2 / math.pi)[:, None] * direction
    nuclei[np.flatnonzero(is_split)] += offset
    nuclei[n:] -= offset
    # objects: a merged pair shares one, a split cell has two, every other cell one
    root = np.arange(n)
    root[partner >= 0] = partner[partner >= 0]
    roots, object_of = np.unique(root, return_inverse=True)
    n_obj = len(roots)
    object_of = np.r_[object_of, n_obj + np.arange(int(is_split.sum()))]
    kind = np.zeros(n_obj + int(is_split.sum()), dtype=np.int64)
    kind[object_of[:n][partner >= 0]] = 1
    kind[object_of[:n][is_split]] = 2
    kind[n_obj:] = 2
    return {"nuclei": nuclei, "cell_of": cell_of, "object_of": object_of, "kind": kind}


def segment_bins(
    xy: np.ndarray,
    nuclei: np.ndarray,
    object_of: np.ndarray,
    *,
    reach: float = 5.5,
    min_bins: int = 4,
) -> tuple[np.ndarray, np.ndarray]:
    """Each bin's segmented object: that of the nearest nucleus when it is within ``reach`` um,
    else -1 (lost); objects with fewer than ``min_bins`` bins are dropped (their bins lost) and
    the rest renumbered ``0..S-1``. Returns ``(labels [B], kept [S0] -> new id or -1)``."""
    if not (reach > 0 and min_bins >= 1):
        raise GraphDataError(f"reach, min_bins: expected > 0 and >= 1, got {reach}, {min_bins}")
    dist, idx = cKDTree(nuclei).query(xy, distance_upper_bound=reach)
    raw = np.where(np.isfinite(dist), object_of[np.minimum(idx, len(nuclei) - 1)], -1)
    n_obj = int(object_of.max()) + 1
    size = np.bincount(raw[raw >= 0], minlength=n_obj)
    keep = size >= min_bins
    new_id = np.where(keep, np.cumsum(keep) - 1, -1)
    labels = np.where(raw >= 0, new_id[np.maximum(raw, 0)], -1)
    return labels.astype(np.int64), new_id.astype(np.int64)


def diffusion_kernel(diffusion: float) -> np.ndarray:
    r"""``[2 R + 1]`` the per-axis bin offset law :math:`q(d) \propto \Phi((d + \frac12)/s) -
    \Phi((d - \frac12)/s)`, :math:`s` = ``diffusion`` / 2 um, :math:`|d| \le R` =
    ``KERNEL_RADIUS``, normalised (``diffusion`` 0: no displacement)."""
    if diffusion < 0:
        raise GraphDataError(f"diffusion: expected >= 0, got {diffusion}")
    d = np.arange(-KERNEL_RADIUS, KERNEL_RADIUS + 1, dtype=np.float64)
    if diffusion == 0:
        return (d == 0).astype(np.float64)
    s = diffusion / BIN_SIZE
    q = ndtr((d + 0.5) / s) - ndtr((d - 0.5) / s)
    return q / q.sum()


def footprint(
    owner: np.ndarray, labels: np.ndarray, shape: Any, q: np.ndarray, n_cells: int
) -> sp.csr_matrix:
    r""":math:`F` ``[S + 1, C]``: :math:`F_{sc}` the fraction of cell ``c``'s transcripts that
    land in a bin of object ``s`` (row ``S``: lost), :math:`F_{sc} = \frac{1}{n_c} \sum_{b \in c}
    \sum_{\delta} q(\delta_x) q(\delta_y) [\ell(b + \delta) = s]`; columns sum to 1."""
    nx, ny = int(shape[0]), int(shape[1])
    n_obj = int(labels.max()) + 1 if (labels >= 0).any() else 0
    owned = np.flatnonzero(owner >= 0)
    bx, by = owned // ny, owned % ny
    cell = owner[owned]
    n_bins = np.bincount(cell, minlength=n_cells).astype(np.float64)
    rows, cols, vals = [], [], []
    for dx in range(-KERNEL_RADIUS, KERNEL_RADIUS + 1):
        for dy in range(-KERNEL_RADIUS, KERNEL_RADIUS + 1):
            w = q[dx + KERNEL_RADIUS] * q[dy + KERNEL_RADIUS]
            if w == 0:
                continue
            tx, ty = bx + dx, by + dy
            if (tx < 0).any() or (tx >= nx).any() or (ty < 0).any() or (ty >= ny).any():
                raise GraphDataError("footprint: a transcript left the grid; widen its margin")
            lab = labels[tx * ny + ty]
            rows.append(np.where(lab >= 0, lab, n_obj))
            cols.append(cell)
            vals.append(w / n_bins[cell])
    f = sp.coo_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(n_obj + 1, n_cells),
    )
    return f.tocsr()


def transcript_labels(
    origin: np.ndarray, labels: np.ndarray, shape: Any, q: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Transcript by transcript: each transcript made in bin ``origin`` [T] is displaced by
    :math:`(\\delta_x, \\delta_y)` drawn from ``q`` per axis and counted in the object of the bin it
    lands in (-1: lost). The explicit process that :func:`footprint` sums up."""
    ny = int(shape[1])
    d = rng.choice(len(q), size=(len(origin), 2), p=q) - KERNEL_RADIUS
    return labels[(origin // ny + d[:, 0]) * ny + origin % ny + d[:, 1]]


def draw_couplings(
    n_genes: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Unscaled ``W0`` (stochastic block model support, zero diagonal) and ``K0`` (module
    relays, juxtacrine pairs, signed diagonal), symmetric ``[G, G]``; ``genes`` holds
    ``module``, ``senders``, ``receivers``, ``community`` and ``inhibit``."""
    g = n_genes
    if g < 6:
        raise GraphDataError(f"n_genes: expected >= 6, got {g}")
    n_mod = int(np.clip(round(g / 6), 2, 4))
    upper = np.triu(np.ones((g, g), dtype=bool), 1)
    while True:
        module = np.empty(g, dtype=np.int64)
        module[rng.permutation(g)] = np.arange(g) % n_mod
        same = module[:, None] == module[None, :]
        p_in = min(1.0, 2.5 / (g / n_mod - 1))
        p_out = 0.15 * g / (upper & ~same).sum()
        support = upper & (rng.random((g, g)) < np.where(same, p_in, p_out))
        positive = rng.random((g, g)) < np.where(same, 0.8, 0.25)
        w0 = np.where(support, np.where(positive, 1.0, -1.0) * rng.uniform(0.5, 1.0, (g, g)), 0)
        w0 = w0 + w0.T
        if (w0 > 0).any() and (w0 < 0).any() and (support & ~same).any():
            break
    members = [rng.permutation(np.flatnonzero(module == m)) for m in range(n_mod)]
    senders = np.array([mem[0] for mem in members])
    receivers = np.array([members[(m + 1) % n_mod][1] for m in range(n_mod)])
    pairs = list(zip(senders.tolist(), receivers.tolist()))
    within = np.argwhere(upper & same)
    for a, b in within[rng.permutation(len(within))[: max(1, round(g / 10))]]:
        if (a, b) not in pairs and (b, a) not in pairs:
            pairs.append((int(a), int(b)))
    while True:
        sign = np.where(rng.random(len(pairs)) < 0.5, 1.0, -1.0)
        if len(pairs) < 2 or (sign > 0).any() and (sign < 0).any():
            break
    k0 = np.zeros((g, g))
    for (a, b), s in zip(pairs, sign):
        k0[a, b] = k0[b, a] = s * rng.uniform(0.5, 1.0)
    role = rng.random(g)
    community, inhibit = np.flatnonzero(role < 0.3), np.flatnonzero(role > 0.85)
    k0[community, community] = rng.uniform(0.3, 0.8, len(community))
    k0[inhibit, inhibit] = -rng.uniform(0.2, 0.5, len(inhibit))
    return (
        w0,
        k0,
        {
            "module": module,
            "senders": senders,
            "receivers": receivers,
            "community": community,
            "inhibit": inhibit,
        },
    )


def site_parameters(n_genes: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Site parameters ``lam``, ``gamma``, ``power``, ``offset`` ``[G]`` (module docstring)."""
    return {
        "lam": rng.uniform(0.2, 0.45, n_genes),
        "gamma": rng.uniform(0.3, 0.8, n_genes),
        "power": rng.uniform(1.6, 2.8, n_genes),
        "offset": rng.choice([-1.0, 1.0], n_genes) * rng.uniform(0.3, 0.9, n_genes),
    }


def site_potential(
    y: np.ndarray, site: dict[str, np.ndarray], order: int = 0, *, gaussian: bool = True
) -> np.ndarray:
    r""":math:`\phi_g`, :math:`\phi_g'` or :math:`\phi_g''` entrywise (``order`` 0, 1, 2) for
    ``y`` ``[..., G]``; ``gaussian=False`` leaves out the :math:`-\lambda_g t^2 / 2` part (the
    generalised-Gaussian term :math:`\psi_g` alone)."""
    lam, gam, p = site["lam"] * gaussian, site["gamma"], site["power"]
    u = y - site["offset"]
    a = np.abs(u)
    if order == 0:
        return -0.5 * lam * y**2 - gam * a**p
    if order == 1:
        return -lam * y - gam * p * np.sign(u) * a ** (p - 1)
    with np.errstate(divide="ignore"):
        return -lam - gam * p * (p - 1) * a ** (p - 2)


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


def reference_fit(
    site: dict[str, np.ndarray], *, points: int = 4001
) -> tuple[np.ndarray, np.ndarray]:
    r"""``(kappa, c)`` ``[G]``: the ellipse's reference adds :math:`\kappa_g (t - c_g)^2 / 2`
    per gene. Where :math:`p_g > 2`, :math:`c_g` and :math:`1 / (\lambda_g + \kappa_g)` are the
    mean and variance of the lone site density :math:`e^{\phi_g}` (a grid integral;
    :math:`\kappa_g \ge 0` since :math:`\psi_g` only narrows :math:`e^{-\lambda_g t^2 / 2}`);
    where :math:`p_g \le 2`, :math:`\kappa_g = 0`, so that :math:`\psi_g + \kappa_g (t - c_g)^2
    / 2` is bounded above for every gene."""
    t = np.linspace(-12.0, 12.0, points)[:, None]
    w = np.exp(site_potential(t, site) - site_potential(t, site).max(0))
    w /= w.sum(0)
    mean = (w * t).sum(0)
    var = (w * (t - mean) ** 2).sum(0)
    kappa = np.where(site["power"] > 2, np.maximum(1.0 / var - site["lam"], 0.0), 0.0)
    return kappa, mean


@dataclass
class EllipticalReport(GibbsReport):
    """Diagnostics of :func:`elliptical_gibbs`: a Gibbs run's, and these."""

    r_hat_max: float
    autocorrelation_sweeps: float
    thin: int
    acceptance: float  # fraction of block updates taking their first angle, after burn-in
    evaluations_per_update: float  # angles tried per block update, after burn-in
    n_blocks: int  # gene blocks of a row (the W_intra modules in simulate)
    config_temperature: float  # sum (dE)^2 / sum (-d2E), chain 0's final state (1 = at rest)


def _ellipse(
    cur: np.ndarray,
    mean: np.ndarray,
    nu: np.ndarray,
    log_l: Any,
    cur_l: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """One elliptical slice step for each row of ``cur`` ``[m, d]`` (reference mean ``mean``,
    reference draw ``nu``, log-likelihood ``log_l`` with current values ``cur_l``); returns
    ``(new, new_l, first-angle acceptances, angles tried)``."""
    m = len(cur)
    z0 = cur - mean
    level = cur_l - rng.standard_exponential(m)
    theta = rng.uniform(0.0, 2 * math.pi, m)
    lo, hi = theta - 2 * math.pi, theta.copy()
    new, new_l = cur.copy(), cur_l.copy()
    active = np.arange(m)
    first, angles, tries = 0, 0, 0
    while active.size:
        th = theta[active]
        prop = mean[active] + z0[active] * np.cos(th)[:, None] + nu[active] * np.sin(th)[:, None]
        lp = log_l(prop)
        ok = lp > level[active]
        angles += active.size
        if tries == 0:
            first = int(ok.sum())
        new[active[ok]], new_l[active[ok]] = prop[ok], lp[ok]
        rej, th = active[~ok], th[~ok]
        lo[rej] = np.where(th < 0, th, lo[rej])
        hi[rej] = np.where(th < 0, hi[rej], th)
        theta[rej] = rng.uniform(lo[rej], hi[rej])
        active = rej
        tries += 1
        if tries > 2000:
            raise GraphDataError("elliptical_gibbs: the slice did not shrink (NaN?)")
    return new, new_l, first, angles


def elliptical_gibbs(
    edge_index: np.ndarray,
    weight: np.ndarray,
    site: dict[str, np.ndarray],
    w_intra: np.ndarray,
    w_inter: np.ndarray,
    n_cells: int,
    *,
    blocks: list[np.ndarray] | None = None,
    sweeps: int = 1200,
    burn_in: int = 600,
    thin: int = 2,
    seed: int = 0,
) -> tuple[np.ndarray, EllipticalReport]:
    """Two chains of elliptical slice sampling within Gibbs over cell colour classes and gene
    ``blocks`` (a partition of the genes; default one block), on the moment-matched Gaussian
    reference of each block's conditional (module docstring); returns final states ``[C, 2, G]``
    and an :class:`EllipticalReport`."""
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    g = w_intra.shape[0]
    if not (np.allclose(w_intra, w_intra.T) and np.allclose(w_inter, w_inter.T)):
        raise GraphDataError("w_intra, w_inter: expected symmetric matrices")
    if np.any(np.diag(w_intra) != 0):
        raise GraphDataError("w_intra: expected a zero diagonal (the site potential holds it)")
    if thin < 1 or sweeps < 1 or burn_in < 0:
        raise GraphDataError(
            f"thin, sweeps, burn_in: expected >= 1, >= 1, >= 0, got {thin}, {sweeps}, {burn_in}"
        )
    if (np.asarray(site["gamma"]) < 0).any() or (np.asarray(site["power"]) < 1).any():
        raise GraphDataError("site: expected gamma >= 0 and power >= 1")
    if (np.asarray(site["lam"]) <= 0).any():
        raise GraphDataError("site: expected lam > 0 (it makes p normalisable)")
    blocks = [np.arange(g)] if blocks is None else [np.asarray(b, np.int64) for b in blocks]
    if sorted(np.concatenate(blocks).tolist()) != list(range(g)):
        raise GraphDataError(f"blocks: expected a partition of the {g} genes")
    try:
        np.linalg.cholesky(np.diag(site["lam"]) - 2 * w_intra)  # M
    except np.linalg.LinAlgError as err:
        raise GraphDataError(
            "diag(lam) - 2 w_intra: expected positive definite (it makes p normalisable)"
        ) from err
    kappa, centre = reference_fit(site)
    prec = np.diag(site["lam"] + kappa) - 2 * w_intra  # M + K
    parts = []
    for b in blocks:
        p_bb = prec[np.ix_(b, b)]
        others = np.setdiff1d(np.arange(g), b)
        sub = {key: np.asarray(val)[b] for key, val in site.items()}
        parts.append(
            {
                "genes": b,
                "others": others,
                "cov": np.linalg.inv(p_bb),  # conditional covariance of the block
                "noise": np.linalg.inv(np.linalg.cholesky(p_bb)).T,
                "w_in": w_inter[:, b],
                "w_rest": 2 * w_intra[np.ix_(others, b)],
                "kc": kappa[b] * centre[b],
                "log_l": _block_likelihood(sub, kappa[b], centre[b]),
            }
        )
    s = symmetric_adjacency(edge_index, weight, n_cells)
    colours = greedy_colouring(edge_index, n_cells)
    rows = [s[idx] for idx in colours]
    y = np.zeros((n_cells, 2, g))
    y[:, 1] = 3.0 / np.sqrt(site["lam"]) * rng.standard_normal((n_cells, g))
    cur_l = [part["log_l"](y[..., part["genes"]]) for part in parts]  # [C, 2] per block
    first, updates, angles, trace = 0, 0, 0, []
    for sweep in range(burn_in + sweeps):
        for idx, s_rows in zip(colours, rows):
            m = 2 * len(idx)
            msg = (s_rows @ y.reshape(n_cells, 2 * g)).reshape(m, g)
            yi = y[idx].reshape(m, g)
            for part, ll in zip(parts, cur_l):
                b = part["genes"]
                lin = msg @ part["w_in"] + part["kc"] + yi[:, part["others"]] @ part["w_rest"]
                nu = rng.standard_normal((m, len(b))) @ part["noise"].T
                new, new_l, ok, tried = _ellipse(
                    yi[:, b], lin @ part["cov"], nu, part["log_l"], ll[idx].reshape(m), rng
                )
                yi[:, b] = new
                ll[idx] = new_l.reshape(len(idx), 2)
                if sweep >= burn_in:
                    first, angles, updates = first + ok, angles + tried, updates + m
            y[idx] = yi.reshape(len(idx), 2, g)
        if sweep >= burn_in and (sweep - burn_in + 1) % thin == 0:
            trace.append(np.concatenate([y.mean(0), (y**2).mean(0)], -1))
    if not np.isfinite(y).all():
        raise GraphDataError("elliptical_gibbs: non-finite state")
    y0 = y[:, 0]
    grad = grad_log_density(y0, s, site, w_intra, w_inter)
    max_z, null_median = chain_agreement(y)
    traced = np.asarray(trace).reshape(-1, 2, 2 * g)
    return y, EllipticalReport(
        x2_max_z=max_z,
        x2_z_null_median=null_median,
        n_colours=len(colours),
        sweeps=burn_in + sweeps,
        seconds=time.perf_counter() - start,
        r_hat_max=_r_hat(traced),
        autocorrelation_sweeps=thin * _autocorrelation_time(traced),
        thin=thin,
        acceptance=first / max(updates, 1),
        evaluations_per_update=angles / max(updates, 1),
        n_blocks=len(blocks),
        config_temperature=float((grad**2).sum() / -site_potential(y0, site, 2).sum()),
    )


def _block_likelihood(sub: dict[str, np.ndarray], kappa: np.ndarray, centre: np.ndarray) -> Any:
    r""":math:`\log L` of a block: :math:`\sum_{g \in B} [\psi_g(v_g) + \kappa_g (v_g - c_g)^2
    / 2]` over the last axis of ``v``."""

    def log_l(v: np.ndarray) -> np.ndarray:
        return site_potential(v, sub, gaussian=False).sum(-1) + 0.5 * (
            kappa * (v - centre) ** 2
        ).sum(-1)

    return log_l


def burst_rates(
    mu: np.ndarray, a: np.ndarray, b: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    r"""Bursting rates :math:`\Lambda = \mu\, B (a + b) / a`, :math:`B \sim \mathrm{Beta}(a, b)`
    per entry (mean :math:`\mu`) for ``mu`` ``[N, P]`` and ``a``, ``b`` ``[P]``."""
    mu = np.asarray(mu, np.float64)
    a = np.broadcast_to(np.asarray(a, np.float64), mu.shape)
    b = np.broadcast_to(np.asarray(b, np.float64), mu.shape)
    if (mu < 0).any() or not ((a > 0).all() and (b > 0).all()):
        raise GraphDataError(
            f"mu, a, b: expected >= 0, > 0, > 0, got min {mu.min()}, {a.min()}, {b.min()}"
        )
    return mu * rng.beta(a, b) * ((a + b) / a)


def poisson_beta_counts(
    mu: np.ndarray, a: np.ndarray, b: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    r"""Poisson-Beta (telegraph) counts of mean ``mu`` ``[N, P]``: :math:`\mathrm{Poisson}`
    of :func:`burst_rates`; int64."""
    return rng.poisson(burst_rates(mu, a, b, rng)).astype(np.int64)


def segmented_rates(
    fobj: Any,
    mu: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    ambient_rate: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    r"""The objects' Poisson rates :math:`F \Lambda + A` ``[S, P]`` (module docstring): the
    cells' bursting rates :math:`\Lambda` (:func:`burst_rates` of ``mu`` ``[C, P]``) thinned
    through the footprint ``fobj`` ``[S, C]`` (lost row excluded), plus ``ambient_rate``."""
    if fobj.shape[1] != mu.shape[0] or np.shape(ambient_rate) != (fobj.shape[0], mu.shape[1]):
        raise GraphDataError(
            f"fobj, mu, ambient_rate: expected [S, C], [C, P], [S, P], got {fobj.shape}, "
            f"{mu.shape}, {np.shape(ambient_rate)}"
        )
    if (np.asarray(ambient_rate) < 0).any():
        raise GraphDataError("ambient_rate: expected >= 0")
    return np.asarray(fobj @ burst_rates(mu, a, b, rng)) + ambient_rate


@dataclass(kw_only=True)
class StereoTissue:
    """A tissue of :func:`simulate`: segmented objects (the observations: ``coords``, graph,
    ``counts`` ``[S, P]``), the true cells (``cells``), the bins, and the cell-level truth."""

    coords: np.ndarray  # [S, 2] object centroids, um
    edge_index: np.ndarray  # [2, E] object k-NN, j -> i
    edge_weight: np.ndarray  # [E]
    W_intra: np.ndarray  # noqa: N815
    W_inter: np.ndarray  # noqa: N815
    x: np.ndarray  # [S, G] object's transcript-weighted latent on the sphere
    latent: np.ndarray  # [C, G] cell latent (chain 0)
    counts: np.ndarray  # [S, P] int64
    coupled: np.ndarray  # [G] columns of the coupled genes
    log1p: np.ndarray
    cells: dict[str, np.ndarray]
    segmentation: dict[str, Any]
    count_params: dict[str, Any]
    report: EllipticalReport
    field: dict[str, np.ndarray]
    genes: dict[str, np.ndarray]
    params: dict[str, Any] = dataclasses.field(default_factory=dict)

    def to_anndata(self, *, sparse: bool = True) -> Any:
        """AnnData over the segmented objects (module docstring), ``uns['tissue_stereo']`` the
        truth."""
        import pandas as pd

        seg, p = self.segmentation, self.count_params
        obs = {
            "total_counts": self.counts.sum(1),
            "n_genes_by_counts": (self.counts > 0).sum(1),
            "n_bins": seg["n_bins"],
            "area_um2": seg["n_bins"] * BIN_SIZE**2,
            "segmentation": pd.Categorical(
                [SEGMENT_KINDS[k] for k in seg["kind"]], categories=SEGMENT_KINDS
            ),
            "capture_efficiency": p["capture"][seg["dominant"]],
            "ambient_umis": p["ambient_rate"].sum(1),
            "cell_type": pd.Categorical(
                [CELL_TYPES[t] for t in self.cells["cell_type"][seg["dominant"]]],
                categories=CELL_TYPES,
            ),
        }
        return coupled_anndata(self, key="tissue_stereo", digits=4, obs=obs, sparse=sparse)


def simulate(
    n_cells: int,
    n_genes: int,
    *,
    seed: int = 0,
    k: int = 6,
    sweeps: int = 1200,
    burn_in: int = 600,
    thin: int = 2,
    intra_norm: float = 0.6,
    margin: float = 0.9,
    n_other: int | None = None,
    depth: float | None = None,
    ambient: float | None = None,
    capture_sd: float = 0.3,
    diffusion: float = 1.2,
    segment_reach: float = 5.5,
    merge: float = 0.3,
    split: float = 0.25,
) -> StereoTissue:
    """Tissue, bins, segmentation, cell field and segmented counts of one tissue (module
    docstring); ``n_cells`` true cells (the bench's ``--cells``; the segmented objects number
    within a few per cent of it). Every draw comes from ``default_rng(seed)``'s spawned
    streams."""
    if n_cells <= k:
        raise GraphDataError(f"n_cells: expected more than k = {k}, got {n_cells}")
    if not (0 < intra_norm < 1 and 0 < margin < 1):
        raise GraphDataError(f"intra_norm, margin: expected in (0, 1), got {intra_norm}, {margin}")
    if capture_sd < 0 or (depth is not None and depth <= 0):
        raise GraphDataError(f"capture_sd, depth: expected >= 0 and > 0, got {capture_sd}, {depth}")
    if ambient is not None and not 0 <= ambient < 1:
        raise GraphDataError(f"ambient: expected in [0, 1), got {ambient}")
    if n_other is not None and n_other < 1:
        raise GraphDataError(f"n_other: expected >= 1 (they carry the library size), got {n_other}")
    streams = np.random.default_rng(seed).spawn(6)
    tis = tissue_cells(n_cells, streams[0])
    grid = bin_grid(tis["centres"], tis["reach"], float(tis["side"]))
    found = detect_nuclei(tis["centres"], grid["n_bins"], streams[1], merge=merge, split=split)
    labels, new_id = segment_bins(
        grid["xy"], found["nuclei"], found["object_of"], reach=segment_reach
    )
    n_obj = int(new_id.max()) + 1
    kind = found["kind"][new_id >= 0]
    q = diffusion_kernel(diffusion)
    foot = footprint(grid["owner"], labels, grid["shape"], q, n_cells)
    fobj = foot[:n_obj]  # [S, C]
    n_bins_obj = np.bincount(labels[labels >= 0], minlength=n_obj)
    on = labels >= 0
    coords = np.stack(
        [np.bincount(labels[on], grid["xy"][on, d], minlength=n_obj) / n_bins_obj for d in (0, 1)],
        1,
    )
    # the latent field on the true cells
    cell_edges = knn_edges(tis["centres"], k)
    cell_weight = gcn_weights(cell_edges, n_cells)
    w0, k0, genes = draw_couplings(n_genes, streams[2])
    site = site_parameters(n_genes, streams[3])
    half = 1.0 / np.sqrt(site["lam"])
    lam_off = -2.0 * w0
    lam_off *= intra_norm / np.linalg.norm(half[:, None] * lam_off * half[None], 2)
    kappa, rho_s = coupling_scale(
        cell_edges, cell_weight, n_cells, np.diag(site["lam"]) + lam_off, k0, margin,
        v0=np.ones(n_cells),
    )  # fmt: skip
    w_intra, w_inter = -0.5 * lam_off, kappa * k0
    states, report = elliptical_gibbs(
        cell_edges, cell_weight, site, w_intra, w_inter, n_cells, sweeps=sweeps,
        burn_in=burn_in, thin=thin, seed=int(streams[4].integers(2**62)),
        blocks=[np.flatnonzero(genes["module"] == m) for m in range(genes["module"].max() + 1)],
    )  # fmt: skip
    latent = states[:, 0]
    # counts
    rng = streams[5]
    if n_other is None:
        n_other = int(rng.integers(1000, 3001))
    if depth is None:
        depth = float(np.exp(rng.uniform(math.log(300.0), math.log(1500.0))))
    if ambient is None:
        ambient = float(rng.uniform(0.02, 0.06))
    n_vars = n_genes + n_other
    coupled = np.sort(rng.choice(n_vars, n_genes, replace=False))
    others = np.setdiff1d(np.arange(n_vars), coupled)
    cell_type = tis["cell_type"]
    n_types = len(CELL_TYPES)
    n_bins_cell = grid["n_bins"].astype(np.float64)
    content = n_bins_cell / np.median(n_bins_cell) * rng.lognormal(0.0, 0.2, n_cells)
    perm_field = smooth_field(tis["centres"], rng, length=200.0)
    capture = np.exp(
        capture_sd * (perm_field + rng.standard_normal(n_cells)) / math.sqrt(2.0)
        - 0.5 * capture_sd**2
    )
    base = np.exp(1.2 * rng.standard_normal(n_other))
    marker_type = np.where(rng.random(n_other) < 0.25, rng.integers(n_types, size=n_other), -1)
    fold = np.where(marker_type >= 0, rng.uniform(1.0, 2.5, n_other), 0.0)
    profile = base * np.exp(np.where(marker_type == np.arange(n_types)[:, None], fold, 0))
    profile *= base.sum() / profile.sum(1, keepdims=True)  # [T, n_other], equal totals
    cell_scale = capture * content  # e_c v_c
    scale = depth / float(np.median(fobj @ cell_scale * base.sum()))
    strata = (rng.permutation(n_genes) + rng.random(n_genes)) / n_genes
    gene_mean = np.exp(math.log(0.1) + strata * math.log(100.0))
    beta = np.log(gene_mean) - np.log(
        np.asarray(fobj @ (scale * cell_scale[:, None] * np.exp(latent))).mean(0)
    )
    mu = np.empty((n_cells, n_vars))  # expected captured transcripts per true cell
    mu[:, others] = scale * cell_scale[:, None] * profile[cell_type]
    mu[:, coupled] = scale * cell_scale[:, None] * np.exp(beta + latent)
    burst_a, burst_b = np.empty(n_vars), np.empty(n_vars)
    burst_a[coupled] = np.exp(rng.uniform(0.0, math.log(5.0), n_genes))
    burst_b[coupled] = np.exp(rng.uniform(math.log(0.5), math.log(3.0), n_genes))
    burst_a[others] = np.exp(rng.uniform(math.log(0.5), math.log(5.0), n_other))
    burst_b[others] = np.exp(rng.uniform(math.log(0.5), math.log(5.0), n_other))
    expected = np.asarray(fobj @ mu)  # [S, P] cell-derived expected counts
    pool = mu.sum(0) / mu.sum()  # ambient profile pi
    per_bin = ambient * float(np.median(expected.sum(1))) / float(np.median(n_bins_obj))
    ambient_rate = per_bin * n_bins_obj[:, None] * pool  # [S, P]
    observed_rate = segmented_rates(fobj, mu, burst_a, burst_b, ambient_rate, rng)
    counts = draw_nonempty(lambda r: rng.poisson(r).astype(np.int64), observed_rate)
    # object latent: the transcript-weighted mean of its cells' rows
    share = fobj.multiply(cell_scale[None]).tocsr()  # [S, C]
    dominant = np.asarray(share.argmax(1)).ravel()
    weight_sum = np.asarray(share.sum(1))  # [S, 1]; > 0: a nucleus lies in its cell's bins
    if (weight_sum <= 0).any():
        raise GraphDataError("simulate: an object got no transcript of any cell")
    mix = np.asarray(share @ latent) / weight_sum
    edge_index = knn_edges(coords, k)
    lost = np.asarray(foot[n_obj].todense()).ravel()
    principal = new_id[found["object_of"][:n_cells]]  # the object of the cell's nucleus
    own = np.where(
        principal >= 0,
        np.asarray(fobj[np.maximum(principal, 0), np.arange(n_cells)]).ravel(),
        0.0,
    )
    spill = 1.0 - lost - own
    totals = counts.sum(1)
    base_mean = np.full(n_vars, np.nan)
    base_mean[others] = base
    markers = np.full(n_vars, -1)
    markers[others] = marker_type
    params = {
        "n_cells": n_cells, "n_objects": n_obj, "n_genes": n_genes, "seed": seed, "k": k,
        "sweeps": sweeps, "burn_in": burn_in, "thin": thin, "intra_norm": intra_norm,
        "margin": margin, "kappa": kappa, "rho_adjacency": rho_s, "n_other": n_other,
        "depth": depth, "ambient": ambient, "capture_sd": capture_sd, "diffusion": diffusion,
        "segment_reach": segment_reach, "merge": merge, "split": split,
        "n_merged": int((kind == 1).sum()), "n_split_pieces": int((kind == 2).sum()),
        "n_dropped": int((new_id < 0).sum()), "n_bins": int(len(labels)),
        "median_cell_bins": float(np.median(n_bins_cell)),
        "median_object_bins": float(np.median(n_bins_obj)),
        "mean_lost_fraction": float(lost.mean()), "median_spill": float(np.median(spill)),
        "mean_spill": float(spill.mean()), "median_total_counts": float(np.median(totals)),
    }  # fmt: skip
    return StereoTissue(
        coords=coords,
        edge_index=edge_index,
        edge_weight=gcn_weights(edge_index, n_obj),
        W_intra=w_intra,
        W_inter=w_inter,
        x=mix / np.linalg.norm(mix, axis=1, keepdims=True),
        latent=latent,
        counts=counts,
        coupled=coupled,
        log1p=_log1p_normalised(counts),
        cells={
            "centres": tis["centres"],
            "reach": tis["reach"],
            "cell_type": cell_type,
            "content": content,
            "n_bins": grid["n_bins"],
            "object": principal,
            "lost": lost,
            "spill": spill,
            "edge_index": cell_edges,
            "edge_weight": cell_weight,
        },  # fmt: skip
        segmentation={
            "labels": labels,
            "owner": grid["owner"],
            "shape": grid["shape"],
            "origin": grid["origin"],
            "nuclei": found["nuclei"],
            "nucleus_cell": found["cell_of"],
            "nucleus_object": new_id[found["object_of"]],
            "kind": kind,
            "n_bins": n_bins_obj,
            "footprint": foot,
            "kernel": q,
            "dominant": dominant,
        },  # fmt: skip
        count_params={
            "rate": mu,
            "expected": expected,
            "observed_rate": observed_rate,
            "ambient_rate": ambient_rate,
            "ambient_profile": pool,
            "capture": capture,
            "depth_scale": scale,
            "burst_a": burst_a,
            "burst_b": burst_b,
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
