r"""A twelfth tissue simulator: Slide-tags single nuclei of the small intestine's crypt-villus axis.

The held-out world of ``bench_celcomen_counts --world slidetags`` (session 32), written by a helper
who did not read the library's Celcomen code (``spatial/celcomen.py``, ``_inputs.py``,
``objectives.py``, ``_solver.py``, ``model.py``, ``tools.py``, ``tl.py``, ``simulate.py``) and
never fitted it on this world. It looks like a **Slide-tags** experiment (Russell et al. 2024): a
section is laid on a bead array whose spatial barcodes tag the nuclei, the nuclei are dissociated
and profiled by **droplet single-nucleus RNA-seq** (whole transcriptome), and each recovered nucleus
is placed back where its tags came from. The observations are single nuclei, but **only some of the
tissue's cells are recovered** (a cell-type-specific fraction), their positions carry the
**localisation error** of the tags, a few droplets hold **two nuclei**, and the UMI counts come
from a finite **sequencing depth**, so a droplet's library **saturates**. The tissue is a
longitudinal section of **small-intestinal mucosa**: a columnar epithelium lining crypts and villi,
a lamina propria inside the villi and between the crypts, and a zonation gradient along the
crypt-villus axis. Its stages differ from the other eleven: the layout (an epithelial monolayer laid
as a 1-D renewal process along a crypt-villus curve, a hard-core stroma, partial and
type-dependent recovery, jittered positions); a **sinh-arcsinh site potential** (Jones & Pewsey's
skewed, light-tailed law) with a **zonation gradient** of its centre; couplings that are **not
quadratic**: products of **clipped-linear (hard-saturating) responses** of the genes (a gene acts
on its partners only between a floor and a ceiling of its log-expression), on **signalling-pathway
cascades with negative feedback** within cells and ligand-receptor relays, Notch-Delta lateral
inhibition and morphogen community effects between cells, the truth the energy's mean Hessian; an
**exact single-site Gibbs sampler** whose conditionals are drawn by **rejection from the site law**
in its Gaussianising coordinates (no step size, no Metropolis test), blocked by a colouring of
cells and of genes; and **droplet snRNA-seq counts**: cell-type-specific nuclear RNA content, a
per-droplet capture efficiency, doublets, and a per-droplet read depth whose UMI detection
:math:`1 - e^{-R/M}` falls as the droplet's library grows. Neither ``spatial.simulate`` nor
``spatial.model`` is imported; the graphs come from :func:`graphdata.spatial.knn_graph`, the
colourings from :mod:`benchmarks.tissue_metropolis`.

**Layout** (:func:`crypt_villus_midline`, :func:`intestine_cells`; units um). A strip of ``U``
crypt-villus units of period :math:`P` = 130 (``x`` along the gut, ``y`` up from the crypt mouths
into the lumen). Unit ``k`` has a **villus** centred at :math:`v_k = kP + 45`, half-width :math:`a_k
\sim U(28, 36)` and height :math:`H_k \sim U(300, 420)`, and a **crypt** centred at :math:`c_k =
kP + 110`, half-width :math:`b` = 14 and depth :math:`D` = 140. The **epithelial midline** (the
curve through the epithelial nuclei) is, per unit: up the villus side :math:`x = v_k - a_k` from
:math:`y = 0` to :math:`H_k - a_k`, over the tip (the half circle of radius :math:`a_k` about
:math:`(v_k, H_k - a_k)`), down :math:`x = v_k + a_k`, along :math:`y = 0` to :math:`c_k - b`, down
the crypt wall to :math:`-(D - b)`, round the crypt base (half circle of radius :math:`b` about
:math:`(c_k, -(D - b))`, lowest point :math:`(c_k, -D)`), up the wall :math:`x = c_k + b` and along
:math:`y = 0` to the next villus; the strip is :math:`0 \le x \le UP`, starting and ending on the
flat. **Epithelial cells** sit on the midline at arc lengths :math:`\ell_1 < \ell_2 < \dots`, a
renewal process with gaps :math:`4.5 + \mathrm{Gamma}(4, 0.6)` (shape 4, scale 0.6; mean 6.9 um: a
columnar monolayer), the first at :math:`U(0, 6.9)`. The **tissue side** of the midline is the
villi's interiors (:math:`|x - v_k| < a_k`, :math:`0 \le y \le H_k - a_k`, or inside the tip's
circle) and :math:`y < 0` outside the crypts' lumens (:math:`|x - c_k| < b` above :math:`-(D - b)`,
or inside the base circle), down to :math:`y_{\min} = -D - 45`. **Stromal cells** (lamina propria,
and a muscularis strip below the crypts): candidates a Poisson process of intensity 1/400 um^-2 on
the tissue side at distance at least 9 um from the midline (the epithelium's thickness), thinned by
a **Matérn type-II hard core** (two clash when closer than 6 um; the one of larger uniform mark
goes). **Zones** (:data:`ZONES`): an epithelial cell is ``crypt_base`` when :math:`y < -D + 30`,
``crypt`` when :math:`y < 0`, else ``villus``; a stromal one ``muscularis`` when :math:`y < -D - 5`,
else ``lamina_propria``. **Cell types** (:data:`CELL_TYPES`) are drawn from their zone's composition
(:data:`ZONE_TYPES`: stem and Paneth cells at the crypt base, transit-amplifying cells above them,
enterocytes on the villi, goblet and enteroendocrine cells throughout the epithelium, fibroblasts,
immune, endothelial and smooth-muscle cells in the stroma). The **crypt-villus axis** coordinate is
:math:`s_i = \mathrm{clip}((y_i + D) / (\bar H + D), 0, 1)`, :math:`\bar H` = 360 (0 at the crypt
base, 1 at a villus tip).

**Recovery and positions.** Each tissue cell's nucleus is recovered and placed with probability
:data:`RECOVERY` of its type (0.40-0.70: fragile Paneth and goblet cells least). The strip is
widened (``U`` grows by a factor 1.3, everything redrawn) until at least ``N`` nuclei are recovered;
the ``N`` of least ``x`` are the **observations**, and the **tissue** is every cell with :math:`x`
up to the last of them (``C`` cells, about 1.7 ``N``). A nucleus is placed at its cell's position
plus :math:`\mathcal N(0, \sigma_{\mathrm{pos}}^2 I_2)` (``position_error``
:math:`\sigma_{\mathrm{pos}}` = 3 um).

**Graphs.** The energy lives on the ``C`` **cells**: directed k-NN on their true positions (k =
6), edges :math:`j \to i`, GCN weights :math:`w_{ij} = 1/\sqrt{d_i d_j}` (every in-degree is k, so
:math:`w = 1/6`; ``A[i, j] = w_ij``). The bench fits on the ``N`` **nuclei**: ``edge_index`` /
``edge_weight`` and ``obsm['spatial']`` are k-NN (k = 6, GCN weights) over their placed positions
(``spatial_neighbors_knn`` rebuilds it). **The truth stays the cell-level energy's** ``W_intra``
and ``W_inter``: unrecovered cells and misplaced nuclei are nuisances of the platform (a nucleus's
graph neighbours are often its cells' second neighbours) which a fit on nuclei must see through.

**Latent field.** :math:`Y \in \mathbb R^{C \times G}`, :math:`y_{ig}` the log-expression of
coupled gene ``g`` in cell ``i``, density :math:`p \propto e^{E}`,

.. math::
    E(Y) = \sum_i \sum_g u_g(y_{ig} - m_{ig})
        + \sum_i \psi(y_i)^\top J\, \psi(y_i)
        + \sum_i \sum_{j \to i} w_{ij}\, \psi(y_i)^\top K\, \psi(y_j),

with the **sinh-arcsinh site** (:func:`site_energy`; the log density of :math:`\sigma_g T`,
:math:`T = \sinh((\mathrm{asinh}\, Z + \epsilon_g) / \delta_g)`, :math:`Z \sim \mathcal N(0, 1)`,
up to a constant)

.. math::
    u_g(v) = -\tfrac12 S^2 + \log \sqrt{1 + S^2} - \tfrac12 \log(1 + t^2), \qquad
    t = v / \sigma_g, \quad S = \sinh(\delta_g\, \mathrm{asinh}\, t - \epsilon_g),

(skewed by :math:`\epsilon_g`, tails :math:`\log p \sim -\tfrac18 (2|t|)^{2\delta_g}`, lighter
than Gaussian for :math:`\delta_g > 1`) and the **clipped-linear response**
:math:`\psi_g(y) = \min(\beta_g, \max(\alpha_g, y)) - o_g` applied entrywise: a gene acts on
its partners in proportion to its log-expression between a **floor** :math:`\alpha_g` (below it
the promoter or receptor is silent) and a **ceiling** :math:`\beta_g` (above it the pathway
saturates), centred by :math:`o_g`, the clipped value's mean under the lone law at :math:`m = 0`
(:func:`lone_clip_mean`, Gauss-Hermite; so a coupling tilts a gene both ways about its usual
level rather than pushing it one way). Site parameters (:func:`site_parameters`):
:math:`\sigma_g \sim U(0.6, 1)`, :math:`\delta_g \sim U(1.1, 1.6)`, :math:`\epsilon_g = \pm
U(0.2, 0.8)`; the window is a pair of the lone law's quantiles, :math:`\alpha_g = \sigma_g
\tau_g(p^{\mathrm{lo}}_g)`, :math:`\beta_g = \sigma_g \tau_g(p^{\mathrm{hi}}_g)`,
:math:`\tau_g(p) = \sinh((\mathrm{asinh}\, \Phi^{-1}(p) + \epsilon_g) / \delta_g)`,
:math:`p^{\mathrm{lo}} \sim U(0.05, 0.3)`, :math:`p^{\mathrm{hi}} \sim U(0.7, 0.95)`. The
**centre** follows the crypt-villus gradient and the compartment: :math:`m_{ig} = \lambda_g (2
s_i - 1) + \gamma_g [i\ \text{stromal}]`, :math:`\lambda_g \sim` ``zonation`` (0.35)
:math:`\times \mathcal N(0, 1)`, :math:`\gamma_g \sim` ``compartment`` (0.3) :math:`\times
\mathcal N(0, 1)` (it moves only the site terms; the window is fixed, so where a gene's centre
sinks below its floor it stops acting). :math:`J` (symmetric, zero diagonal) holds **signalling
cascades** (:func:`draw_couplings`): the genes, in a random order, are cut into pathways of 3-5
(lengths uniform, the last one absorbing a remainder under 3; a cut into one pathway is redrawn);
consecutive genes of a pathway are coupled, activation (+) with probability 0.75 else repression,
magnitude :math:`U(0.5, 1)`; the last gene of each pathway **feeds back negatively** on its first,
:math:`-U(0.5, 1)`; any two genes of different pathways **cross-talk** with probability :math:`1/G`,
sign + with probability 0.5, magnitude :math:`U(0.3, 0.7)`. :math:`K` (symmetric) holds the **relays
between cells**: each pathway's first gene is its **receptor**, paired with a **ligand** drawn from
the non-receptor genes of the other pathways, sign + with probability 0.65, magnitude :math:`U(0.4,
1)`; its diagonal is **Notch-Delta lateral inhibition** :math:`-U(0.3, 0.8)` on :math:`\lceil 0.15 G
\rceil` genes and a **morphogen community effect** :math:`+U(0.3, 1)` on :math:`\lceil 0.3 G \rceil`
others, else 0. A draw without both signs in :math:`J` and in :math:`K` is redrawn whole. The
interaction terms are bounded (:math:`\psi_g + o_g \in [\alpha_g, \beta_g]`), so :math:`e^E` is
integrable for any :math:`J, K`. **Scale**, the linearised analogue of the other worlds': inside the
windows the energy is exactly quadratic; with :math:`q_g = p^{\mathrm{hi}}_g - p^{\mathrm{lo}}_g` a
lone gene's chance to be inside its window and :math:`C_g = 1 / \mathrm{Var}(\sigma_g T_g)`
(:func:`lone_moments`, Gauss-Hermite), :math:`\Lambda = 2 J \circ q q^\top` is scaled to
:math:`\lVert C^{-1/2} \Lambda C^{-1/2}\rVert_2 =` ``intra_norm`` (0.8), and :math:`K = \kappa K_0`
with :math:`\rho(A + A^\top)\,\rho(M^{-1/2} (K_0 \circ q q^\top) M^{-1/2})\,\kappa =` ``margin``
(0.9), :math:`M = \mathrm{diag}(C) - \Lambda` (:func:`benchmarks.tissue_gibbs_pln.coupling_scale`).

**The truth.** :math:`\psi_g' (y) = [\alpha_g < y < \beta_g]` (the gene is in its linear
range), so away from the kinks the mixed second derivatives of :math:`E` are, for :math:`g \ne
h`, :math:`\partial^2 E / \partial y_{ig} \partial y_{ih} = 2 J_{gh} \psi_g'(y_{ig})
\psi_h'(y_{ih})` and, for cells :math:`i \ne j`, :math:`\partial^2 E / \partial y_{ig} \partial
y_{jh} = (w_{ij} + w_{ji}) K_{gh} \psi_g'(y_{ig}) \psi_h'(y_{jh})` (:math:`w_{ij} = 0` without
the edge :math:`j \to i`): a coupling acts only while both genes are in their linear ranges.
**The truth** (:func:`truth_matrices`) is the tissue's mean Hessian in Celcomen's normalisation,
at the tissue's own state :math:`Y` (all ``C`` cells):

.. math::
    W_{\mathrm{intra}} = J \circ \frac1C \sum_i \psi'(y_i) \psi'(y_i)^\top, \qquad
    W_{\mathrm{inter}} = K \circ \frac{\sum_{j \to i} w_{ij} \big[\psi'(y_i) \psi'(y_j)^\top
        + \psi'(y_j) \psi'(y_i)^\top\big]}{2 \sum_{j \to i} w_{ij}},

``W_intra`` with zero diagonal: :math:`J` and :math:`K` weighted by how often the two genes are
**co-active** (within a cell; across the edges). These are the unique matrices (``W_inter``
symmetric) for which Celcomen's energy :math:`\sum_i y_i^\top W_{\mathrm{intra}} y_i + \sum_{j
\to i} w_{ij} y_i^\top W_{\mathrm{inter}} y_j` has the same summed mixed second derivatives over
the tissue as :math:`E`: :math:`\sum_i \partial^2 E / \partial y_{ig} \partial y_{ih} = 2C
(W_{\mathrm{intra}})_{gh}` (:math:`g \ne h`) and :math:`\sum_{i \ne j} \partial^2 E / \partial
y_{ig} \partial y_{jh} = 2 \sum_e w_e\, (W_{\mathrm{inter}})_{gh}`. Their signs are those of
``J`` and ``K`` (wherever a pair is co-active at all); their scale carries the co-activity.

**Sampler** (:func:`rejection_gibbs`). Systematic-scan Gibbs, one entry :math:`y_{ig}` at a time,
all entries of a block at once: blocks are the products of a colour class of the undirected cell
graph and a colour class of :math:`J`'s gene graph
(:func:`benchmarks.tissue_metropolis.greedy_colouring` on both), whose entries are conditionally
independent. The conditional of an entry is

.. math::
    p(y_{ig} \mid \cdot) \propto e^{u_g(y_{ig} - m_{ig}) + h_{ig} \psi_g(y_{ig})}, \qquad
    h_{ig} = 2 (J \psi(y_i))_g + (K \nu_i)_g, \quad
    \nu_i = \sum_{j \to i} w_{ij} \psi(y_j) + \sum_{i \to l} w_{li} \psi(y_l),

the lone site law tilted by a bounded factor. It is drawn **exactly** (:func:`conditional_draw`):
propose :math:`y = m_{ig} + \sigma_g \sinh((\mathrm{asinh}\, Z + \epsilon_g) / \delta_g)`, :math:`Z
\sim \mathcal N(0, 1)` (an exact draw of the lone law), accept with probability :math:`\exp(h\,
\mathrm{clip}(y, \alpha_g, \beta_g) - \max(h \alpha_g, h \beta_g)) \le 1` (:math:`e^{h \psi_g(y)}`
over its supremum), else propose again. The expected number of proposals is :math:`1 / \mathrm
E_{\mathrm{lone}}\, e^{h\, \mathrm{clip}(y, \alpha_g, \beta_g) - \max(h\alpha_g, h\beta_g)}`, at
most :math:`e^{|h| (\beta_g - \alpha_g)}` and at most :math:`1 / P_{\mathrm{lone}} (y \ge \beta_g)`
(:math:`h > 0`; :math:`1 / P(y \le \alpha_g)` for :math:`h < 0`). Every move leaves :math:`e^E`
invariant; nothing is tuned. Two chains, from the uncoupled field (exact lone draws at the centres,
:func:`lone_sites`) and from an over-dispersed one (:math:`Z` doubled); ``burn_in`` (200) sweeps
discarded, then ``sweeps`` (400); every ``thin``-th (2nd) sweep the per-gene mean and mean square
over cells are traced (Gelman-Rubin :math:`\hat R`, integrated autocorrelation time,
:mod:`benchmarks.tissue_panel`'s estimators) and the chains' final second moments compared
(:func:`benchmarks.tissue_gibbs_pln.chain_agreement`); the report gives the mean number of proposals
per draw. The tissue is chain 0's final state.

**Counts** (:func:`droplet_counts`, :func:`droplet_detect`). ``G`` coupled genes sit at random
positions among ``n_other`` other genes (default uniform on 800-2,000; a whole transcriptome),
``var['highly_variable']`` True exactly on the coupled ones. A cell's **nuclear RNA content** is
:math:`v_i = V_{t(i)} e^{0.25 \xi_i}` (:data:`NUCLEAR_CONTENT` by type: transit-amplifying and stem
nuclei largest, immune smallest; :math:`\xi_i \sim \mathcal N(0, 1)`). Expected nuclear molecules:
coupled gene ``g``, :math:`v_i e^{\alpha^0_g + y_{ig}}`, :math:`\alpha^0_g` set so that their mean
over the nuclei is :math:`M_g`, stratified log-uniform on (2, 40); other gene ``j``, :math:`v_i b_j
e^{F_{j t(i)} + z_j (2 s_i - 1)}`, 35 % of them **markers** of one type (:math:`F = U(1.5, 3)` in
it, else 0), 25 % **zonated** (:math:`z_j \sim \mathcal N(0, 0.8^2)`, else 0), :math:`\log b_j \sim
\mathcal N(0, 1.3^2)` scaled so the mean over the nuclei of their sum is ``depth`` (6,000). A
droplet ``d`` holds its nucleus and, with probability ``doublet_rate`` (0.03), a second one, a
uniformly drawn **unrecovered** cell of the tissue (a nucleus lies in one droplet); its expected
molecules :math:`\mu_{dg}` are the sum. Then, stage by stage:

- molecules :math:`n_{dg} \sim \mathrm{Poisson}(\mu_{dg})`;
- **capture** (reverse transcription in the droplet): :math:`k_{dg} \sim \mathrm{Binomial}(n_{dg},
  \pi_d)`, :math:`\pi_d \sim \mathrm{Beta}(6, 14)` (mean 0.3), so :math:`k_{dg} \sim
  \mathrm{Poisson}(\pi_d \mu_{dg})`; the library holds :math:`M_d = \sum_g k_{dg}` molecules;
- **sequencing**: :math:`R_d = r \tilde M e^{0.3 \zeta_d}` reads (``reads_per_molecule``
  :math:`r = 1.5`, :math:`\tilde M` the median over droplets of :math:`\pi_d \sum_g \mu_{dg}`),
  each library molecule gets :math:`\mathrm{Poisson}(R_d / M_d)` reads independently and is
  counted (one UMI) when it gets at least one: :math:`c_{dg} \mid k, M \sim
  \mathrm{Binomial}(k_{dg}, 1 - e^{-R_d / M_d})`.

So :math:`\mathrm E[c_{dg} \mid k_d] = k_{dg} (1 - e^{-R_d / M_d})`, :math:`\mathrm E[c_{dg} \mid
M_d] = M_d\, (\mu_{dg} / \textstyle\sum_h \mu_{dh}) (1 - e^{-R_d / M_d})` (the library is
multinomial over the genes given its size) and :math:`\mathrm E[c_{dg} / (1 - e^{-R_d/M_d})] = \pi_d
\mu_{dg}`, exactly; the ``rate`` reported is :math:`\pi_d \mu_{dg} (1 - e^{-R_d / M_d})`, the
expected capture times the droplet's realised detection. A droplet's total UMIs are about :math:`M_d
(1 - e^{-R_d / M_d})`, which **saturates**: the larger a nucleus's library, the smaller the fraction
of it counted (``sequencing_saturation`` :math:`1 - \sum_g c_{dg} / R_d`). Counts are independent
over droplets; within a droplet they share :math:`M_d`. ``layers['counts']`` and ``X`` are float32
CSR by default (dense int64 with ``sparse=False``); ``obs`` holds ``total_counts``,
``n_genes_by_counts``, ``cell_type``, ``zone`` and ``crypt_villus_axis``; ``layers['log1p']`` is
scanpy's ``normalize_total`` then ``log1p``; ``layers['signed']`` holds :math:`y_i / \lVert
y_i\rVert` of the nucleus's cell in the coupled columns, 0 elsewhere. Recovery, placement error,
doublets, capture and saturation stand between :math:`Y` and the counts, so **signs, support and
Pearson** of the off-diagonals compare; the scale (the inter / intra balance of the truth) is
reported.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

import numpy as np
from scipy.spatial import cKDTree
from scipy.special import ndtri

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
    "N_EPITHELIAL_TYPES",
    "ZONES",
    "ZONE_TYPES",
    "RECOVERY",
    "NUCLEAR_CONTENT",
    "crypt_villus_midline",
    "tissue_side",
    "intestine_cells",
    "draw_couplings",
    "site_parameters",
    "lone_quantile",
    "lone_moments",
    "lone_clip_mean",
    "lone_sites",
    "site_centre",
    "site_energy",
    "response",
    "log_density",
    "local_field",
    "truth_matrices",
    "conditional_draw",
    "rejection_gibbs",
    "droplet_detect",
    "droplet_counts",
    "RejectionGibbsReport",
    "SlideTagsTissue",
    "simulate",
]

CELL_TYPES = (
    "stem",
    "paneth",
    "transit_amplifying",
    "enterocyte",
    "goblet",
    "enteroendocrine",
    "fibroblast",
    "immune",
    "endothelial",
    "smooth_muscle",
)
#: The first six types are epithelial, the rest stromal.
N_EPITHELIAL_TYPES = 6
ZONES = ("crypt_base", "crypt", "villus", "lamina_propria", "muscularis")
#: Type composition per zone, rows in ZONES order, columns in CELL_TYPES order.
ZONE_TYPES = np.array(
    [
        [0.55, 0.38, 0.00, 0.00, 0.03, 0.04, 0.0, 0.0, 0.0, 0.0],
        [0.05, 0.00, 0.78, 0.00, 0.13, 0.04, 0.0, 0.0, 0.0, 0.0],
        [0.00, 0.00, 0.00, 0.83, 0.15, 0.02, 0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.42, 0.40, 0.13, 0.05],
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.20, 0.10, 0.10, 0.60],
    ]
)
#: Probability that a cell's nucleus is recovered and placed, by type (CELL_TYPES order).
RECOVERY = np.array([0.60, 0.40, 0.65, 0.60, 0.40, 0.50, 0.55, 0.70, 0.50, 0.45])
#: Nuclear RNA content relative to an enterocyte's, by type (CELL_TYPES order).
NUCLEAR_CONTENT = np.array([1.3, 0.9, 1.4, 1.0, 0.8, 0.7, 0.8, 0.55, 0.7, 0.9])
#: Geometry (um): unit period, villus / crypt centre offsets in the unit, crypt half-width and
#: depth, mean villus height (the axis' scale), the strip's floor, the epithelium's thickness
#: and the stroma's hard core.
PERIOD, VILLUS_AT, CRYPT_AT = 130.0, 45.0, 110.0
CRYPT_HALF, CRYPT_DEPTH, MEAN_HEIGHT = 14.0, 140.0, 360.0
FLOOR = -CRYPT_DEPTH - 45.0
EPITHELIUM, HARD_CORE = 9.0, 6.0


def _segment(a: tuple[float, float], b: tuple[float, float], step: float) -> np.ndarray:
    n = max(2, math.ceil(math.hypot(b[0] - a[0], b[1] - a[1]) / step) + 1)
    t = np.linspace(0.0, 1.0, n)[:, None]
    return (1 - t) * np.asarray(a) + t * np.asarray(b)


def _arc(
    centre: tuple[float, float], radius: float, start: float, stop: float, step: float
) -> np.ndarray:
    n = max(2, math.ceil(abs(stop - start) * radius / step) + 1)
    theta = np.linspace(start, stop, n)
    return np.column_stack([centre[0] + radius * np.cos(theta), centre[1] + radius * np.sin(theta)])


def crypt_villus_midline(
    n_units: int, rng: np.random.Generator, *, step: float = 0.25
) -> dict[str, np.ndarray]:
    """The epithelial midline of ``n_units`` crypt-villus units (module docstring).

    Returns ``points`` ``[M, 2]`` (a polyline, vertices ``step`` um apart at most), ``arc``
    ``[M]`` (arc length at each vertex), and per unit ``villus_centre``, ``villus_half``,
    ``villus_height`` and ``crypt_centre`` ``[U]``.
    """
    if n_units < 1:
        raise GraphDataError(f"n_units: expected >= 1, got {n_units}")
    half = rng.uniform(28.0, 36.0, n_units)
    height = rng.uniform(300.0, 420.0, n_units)
    v = np.arange(n_units) * PERIOD + VILLUS_AT
    c = np.arange(n_units) * PERIOD + CRYPT_AT
    b, base = CRYPT_HALF, -(CRYPT_DEPTH - CRYPT_HALF)
    pieces = [_segment((0.0, 0.0), (v[0] - half[0], 0.0), step)]
    for k in range(n_units):
        a, top = half[k], height[k] - half[k]
        nxt = n_units * PERIOD if k == n_units - 1 else v[k + 1] - half[k + 1]
        pieces += [
            _segment((v[k] - a, 0.0), (v[k] - a, top), step),
            _arc((v[k], top), a, math.pi, 0.0, step),
            _segment((v[k] + a, top), (v[k] + a, 0.0), step),
            _segment((v[k] + a, 0.0), (c[k] - b, 0.0), step),
            _segment((c[k] - b, 0.0), (c[k] - b, base), step),
            _arc((c[k], base), b, math.pi, 2 * math.pi, step),
            _segment((c[k] + b, base), (c[k] + b, 0.0), step),
            _segment((c[k] + b, 0.0), (nxt, 0.0), step),
        ]
    pts = np.concatenate([p if i == 0 else p[1:] for i, p in enumerate(pieces)])
    arc = np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(pts, axis=0), axis=1))]
    return {
        "points": pts,
        "arc": arc,
        "villus_centre": v,
        "villus_half": half,
        "villus_height": height,
        "crypt_centre": c,
    }


def tissue_side(points: np.ndarray, midline: dict[str, np.ndarray]) -> np.ndarray:
    """Whether each point ``[M, 2]`` lies on the tissue side of the midline (module docstring):
    inside a villus, or below the crypt mouths outside the crypts' lumens, above the floor."""
    x, y = np.asarray(points, dtype=np.float64).T
    n_units = len(midline["villus_centre"])
    kv = np.clip(np.round((x - VILLUS_AT) / PERIOD), 0, n_units - 1).astype(np.int64)
    dv = np.abs(x - midline["villus_centre"][kv])
    a, top = midline["villus_half"][kv], midline["villus_height"][kv] - midline["villus_half"][kv]
    villus = (y >= 0) & (
        ((dv < a) & (y <= top)) | ((y > top) & (dv**2 + (y - top) ** 2 < a**2))
    )  # fmt: skip
    kc = np.clip(np.round((x - CRYPT_AT) / PERIOD), 0, n_units - 1).astype(np.int64)
    dc = np.abs(x - midline["crypt_centre"][kc])
    base = -(CRYPT_DEPTH - CRYPT_HALF)
    lumen = ((dc < CRYPT_HALF) & (y >= base)) | (
        (y < base) & (dc**2 + (y - base) ** 2 < CRYPT_HALF**2)
    )
    return (villus | ((y < 0) & ~lumen)) & (y >= FLOOR)


def intestine_cells(
    n_nuclei: int,
    rng: np.random.Generator,
    *,
    position_error: float = 3.0,
) -> dict[str, Any]:
    """Cells of a crypt-villus strip and the nuclei recovered from them (module docstring).

    Returns, over the ``C`` tissue cells, ``coords`` ``[C, 2]`` (true positions, um),
    ``epithelial`` (bool), ``zone`` (index into ZONES), ``cell_type`` (index into CELL_TYPES) and
    ``axis`` (:math:`s`) ``[C]``; ``observed`` ``[N]`` (the nuclei's cells, increasing ``x``),
    ``nucleus_coords`` ``[N, 2]`` (placed positions), ``n_units`` and ``width`` (the strip's kept
    width), and the ``midline`` (:func:`crypt_villus_midline`).
    """
    if n_nuclei < 20:
        raise GraphDataError(f"n_nuclei: expected >= 20, got {n_nuclei}")
    if not (position_error >= 0 and math.isfinite(position_error)):
        raise GraphDataError(f"position_error: expected finite >= 0, got {position_error}")
    n_units = math.ceil(1.2 * n_nuclei / (0.56 * 420.0)) + 1
    while True:
        mid = crypt_villus_midline(n_units, rng)
        gaps = 4.5 + rng.gamma(4.0, 0.6, int(mid["arc"][-1] / 4.5) + 2)
        at = rng.uniform(0, 6.9) + np.cumsum(np.r_[0.0, gaps])
        at = at[at < mid["arc"][-1]]
        epi = np.column_stack([np.interp(at, mid["arc"], mid["points"][:, d]) for d in (0, 1)])
        width, top = n_units * PERIOD, float(mid["villus_height"].max())
        m = int(rng.poisson(width * (top - FLOOR) / 400.0))
        cand = rng.random((m, 2)) * [width, top - FLOOR] + [0.0, FLOOR]
        dist = cKDTree(mid["points"]).query(cand)[0]
        cand = cand[tissue_side(cand, mid) & (dist >= EPITHELIUM)]
        marks = rng.random(len(cand))
        pairs = cKDTree(cand).query_pairs(HARD_CORE, output_type="ndarray")
        alive = np.ones(len(cand), dtype=bool)
        alive[np.where(marks[pairs[:, 0]] > marks[pairs[:, 1]], pairs[:, 0], pairs[:, 1])] = False
        stroma = cand[alive]
        coords = np.concatenate([epi, stroma])
        epithelial = np.arange(len(coords)) < len(epi)
        y = coords[:, 1]
        zone = np.where(
            epithelial,
            np.where(y < -CRYPT_DEPTH + 30, 0, np.where(y < 0, 1, 2)),
            np.where(y < -CRYPT_DEPTH - 5, 4, 3),
        )
        cdf = np.cumsum(ZONE_TYPES, 1)[zone]
        cell_type = np.minimum((rng.random(len(coords))[:, None] > cdf).sum(1), len(CELL_TYPES) - 1)
        recovered = rng.random(len(coords)) < RECOVERY[cell_type]
        if recovered.sum() >= n_nuclei:
            break
        n_units = math.ceil(1.3 * n_units)
    seen = np.flatnonzero(recovered)
    observed_all = seen[np.argsort(coords[seen, 0], kind="stable")[:n_nuclei]]
    cut = float(coords[observed_all, 0].max())
    keep = np.flatnonzero(coords[:, 0] <= cut)
    new = np.full(len(coords), -1)
    new[keep] = np.arange(len(keep))
    observed = new[observed_all]
    coords = coords[keep]
    jitter = position_error * rng.standard_normal((n_nuclei, 2))
    return {
        "coords": coords,
        "epithelial": epithelial[keep],
        "zone": zone[keep],
        "cell_type": cell_type[keep],
        "axis": np.clip((coords[:, 1] + CRYPT_DEPTH) / (MEAN_HEIGHT + CRYPT_DEPTH), 0.0, 1.0),
        "observed": observed,
        "nucleus_coords": coords[observed] + jitter,
        "n_units": n_units,
        "width": cut,
        "midline": mid,
    }


def draw_couplings(
    n_genes: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Unscaled ``J0`` (pathway cascades, zero diagonal) and ``K0`` (ligand-receptor relays,
    signed diagonal), float64 ``[G, G]`` symmetric (module docstring).

    Returns ``(J0, K0, genes)``; ``genes`` holds ``pathway`` ``[G]`` (each gene's pathway),
    ``order`` (the genes in pathway order), ``receptor`` and ``ligand`` (paired, one per
    pathway), ``notch`` and ``morphogen`` (genes with a negative / positive ``K0`` diagonal).
    """
    g = n_genes
    if g < 6:
        raise GraphDataError(f"n_genes: expected >= 6 (two pathways), got {g}")
    while True:
        order = rng.permutation(g)
        lengths: list[int] = []
        while sum(lengths) < g:
            lengths.append(int(rng.integers(3, 6)))
        lengths[-1] -= sum(lengths) - g
        if lengths[-1] < 3:
            last = lengths.pop()
            lengths[-1] += last
        if len(lengths) < 2:
            continue
        bounds = np.cumsum([0, *lengths])
        paths = [order[bounds[p] : bounds[p + 1]] for p in range(len(lengths))]
        pathway = np.empty(g, dtype=np.int64)
        for p, genes_p in enumerate(paths):
            pathway[genes_p] = p
        j0 = np.zeros((g, g))
        for genes_p in paths:
            for a, b in zip(genes_p[:-1], genes_p[1:]):
                j0[a, b] = (1.0 if rng.random() < 0.75 else -1.0) * rng.uniform(0.5, 1.0)
            j0[genes_p[-1], genes_p[0]] = -rng.uniform(0.5, 1.0)  # negative feedback
        for a in range(g):
            for b in range(a + 1, g):
                if pathway[a] != pathway[b] and rng.random() < 1.0 / g:
                    j0[a, b] = (1.0 if rng.random() < 0.5 else -1.0) * rng.uniform(0.3, 0.7)
        j0 = j0 + j0.T
        receptor = np.array([genes_p[0] for genes_p in paths])
        ligand = np.empty(len(paths), dtype=np.int64)
        k0 = np.zeros((g, g))
        for p, rec in enumerate(receptor):
            pool = np.flatnonzero((pathway != p) & ~np.isin(np.arange(g), receptor))
            ligand[p] = lig = int(rng.choice(pool))
            k0[lig, rec] = k0[rec, lig] = (1.0 if rng.random() < 0.65 else -1.0) * rng.uniform(
                0.4, 1.0
            )
        diag_order = rng.permutation(g)
        n_notch, n_morph = math.ceil(0.15 * g), math.ceil(0.3 * g)
        notch = np.sort(diag_order[:n_notch])
        morphogen = np.sort(diag_order[n_notch : n_notch + n_morph])
        diag = np.zeros(g)
        diag[notch] = -rng.uniform(0.3, 0.8, n_notch)
        diag[morphogen] = rng.uniform(0.3, 1.0, n_morph)
        k0 = k0 + np.diag(diag)
        if (j0 > 0).any() and (j0 < 0).any() and (k0 > 0).any() and (k0 < 0).any():
            break
    genes = {
        "pathway": pathway,
        "order": np.concatenate(paths),
        "receptor": receptor,
        "ligand": ligand,
        "notch": notch,
        "morphogen": morphogen,
    }
    return j0, k0, genes


def lone_quantile(site: dict[str, np.ndarray], p: Any) -> np.ndarray:
    r"""The ``p`` quantile of a lone gene's :math:`y - m` (no coupling): :math:`\sigma_g
    \sinh((\mathrm{asinh}\, \Phi^{-1}(p) + \epsilon_g) / \delta_g)`, broadcast over ``[..., G]``."""
    z = ndtri(np.asarray(p, dtype=np.float64))
    return site["sigma"] * np.sinh((np.arcsinh(z) + site["epsilon"]) / site["delta"])


def site_parameters(
    n_genes: int,
    rng: np.random.Generator,
    *,
    zonation: float = 0.35,
    compartment: float = 0.3,
) -> dict[str, np.ndarray]:
    """Site parameters ``sigma``, ``delta``, ``epsilon``, the window ``p_lo``, ``p_hi``, ``lo``
    (:math:`\\alpha_g`), ``hi`` (:math:`\\beta_g`), the response's ``offset`` (:math:`o_g`) and
    the centre's ``zonation``
    (:math:`\\lambda_g`) and ``compartment`` (:math:`\\gamma_g`), all ``[G]`` (module
    docstring)."""
    if zonation < 0 or compartment < 0:
        raise GraphDataError(f"zonation, compartment: expected >= 0, got {zonation}, {compartment}")
    site = {
        "sigma": rng.uniform(0.6, 1.0, n_genes),
        "delta": rng.uniform(1.1, 1.6, n_genes),
        "epsilon": np.where(rng.random(n_genes) < 0.5, 1.0, -1.0) * rng.uniform(0.2, 0.8, n_genes),
        "p_lo": rng.uniform(0.05, 0.3, n_genes),
        "p_hi": rng.uniform(0.7, 0.95, n_genes),
    }
    site["lo"] = lone_quantile(site, site["p_lo"])
    site["hi"] = lone_quantile(site, site["p_hi"])
    site["offset"] = lone_clip_mean(site)
    site["zonation"] = zonation * rng.standard_normal(n_genes)
    site["compartment"] = compartment * rng.standard_normal(n_genes)
    return site


def lone_moments(site: dict[str, np.ndarray], *, nodes: int = 120) -> tuple[np.ndarray, ...]:
    r"""``(mean, variance)`` ``[G]`` of a lone gene's :math:`y - m = \sigma T`, by Gauss-Hermite
    quadrature over :math:`Z` (:math:`T = \sinh((\mathrm{asinh}\, Z + \epsilon) / \delta)`)."""
    z, w = np.polynomial.hermite_e.hermegauss(nodes)
    w = w / w.sum()
    t = site["sigma"] * np.sinh((np.arcsinh(z)[:, None] + site["epsilon"]) / site["delta"])
    mean = w @ t
    return mean, w @ (t - mean) ** 2


def lone_clip_mean(site: dict[str, np.ndarray], *, nodes: int = 120) -> np.ndarray:
    r""":math:`o_g = \mathrm E_{\mathrm{lone}}\, \mathrm{clip}(y, \alpha_g, \beta_g)` at
    :math:`m = 0`, ``[G]``, by Gauss-Hermite quadrature over :math:`Z`."""
    z, w = np.polynomial.hermite_e.hermegauss(nodes)
    t = site["sigma"] * np.sinh((np.arcsinh(z)[:, None] + site["epsilon"]) / site["delta"])
    return (w / w.sum()) @ np.clip(t, site["lo"], site["hi"])


def site_centre(site: dict[str, np.ndarray], axis: np.ndarray, stromal: np.ndarray) -> np.ndarray:
    r""":math:`m_{ig} = \lambda_g (2 s_i - 1) + \gamma_g [i\ \text{stromal}]`, ``[C, G]``."""
    s = np.asarray(axis, dtype=np.float64)[:, None]
    return site["zonation"] * (2 * s - 1) + site["compartment"] * np.asarray(stromal)[:, None]


def lone_sites(
    site: dict[str, np.ndarray], centre: np.ndarray, rng: np.random.Generator, *, spread: float = 1
) -> np.ndarray:
    r"""Exact draws of lone genes' :math:`y` at ``centre`` ``[..., G]``: :math:`m + \sigma
    \sinh((\mathrm{asinh}(c Z) + \epsilon) / \delta)`, ``spread`` :math:`c` = 1 (2: the
    over-dispersed start of chain 1)."""
    z = spread * rng.standard_normal(np.shape(centre))
    return centre + site["sigma"] * np.sinh((np.arcsinh(z) + site["epsilon"]) / site["delta"])


def site_energy(y: np.ndarray, site: dict[str, np.ndarray], centre: Any) -> np.ndarray:
    r""":math:`u_g(y - m)` entrywise (module docstring), ``y`` ``[..., G]``."""
    t = (y - centre) / site["sigma"]
    s = np.sinh(site["delta"] * np.arcsinh(t) - site["epsilon"])
    return -0.5 * s**2 + 0.5 * np.log1p(s**2) - 0.5 * np.log1p(t**2)


def response(y: np.ndarray, site: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    r"""``(psi, psi')``: :math:`\mathrm{clip}(y, \alpha_g, \beta_g) - o_g` and the indicator
    :math:`[\alpha_g < y < \beta_g]` (float), entrywise over ``[..., G]``."""
    lo, hi = site["lo"], site["hi"]
    return np.clip(y, lo, hi) - site["offset"], ((y > lo) & (y < hi)).astype(np.float64)


def log_density(
    y: np.ndarray,
    edge_index: np.ndarray,
    weight: np.ndarray,
    site: dict[str, np.ndarray],
    centre: np.ndarray,
    j_mat: np.ndarray,
    k_mat: np.ndarray,
) -> float:
    r""":math:`E(Y)` of the module docstring (:math:`\log p` up to its constant), ``y`` and
    ``centre`` ``[C, G]``."""
    psi = response(y, site)[0]
    src, dst = edge_index
    single = float(site_energy(y, site, centre).sum())
    own = float(np.einsum("ig,gh,ih->", psi, j_mat, psi))
    pairs = float((weight * np.einsum("eg,gh,eh->e", psi[dst], k_mat, psi[src])).sum())
    return single + own + pairs


def local_field(
    y: np.ndarray, s: Any, site: dict[str, np.ndarray], j_mat: np.ndarray, k_mat: np.ndarray
) -> np.ndarray:
    r""":math:`h_{ig} = 2 (J\psi(y_i))_g + (K \nu_i)_g` for every entry of ``y`` ``[C, G]``,
    ``s`` = :math:`A + A^\top` (:func:`benchmarks.tissue_gibbs_pln.symmetric_adjacency`): the
    conditional of :math:`y_{ig}` is :math:`\propto e^{u_g(y - m_{ig}) + h_{ig} \psi_g(y)}`."""
    psi = response(y, site)[0]
    return 2.0 * psi @ j_mat + (s @ psi) @ k_mat


def truth_matrices(
    y: np.ndarray,
    edge_index: np.ndarray,
    weight: np.ndarray,
    site: dict[str, np.ndarray],
    j_mat: np.ndarray,
    k_mat: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    r"""``(W_intra, W_inter)``: the mean Hessian of :math:`E` at the state ``y`` ``[C, G]`` in
    Celcomen's normalisation, :math:`J` and :math:`K` times the co-activity (module docstring),
    float64 ``[G, G]`` symmetric."""
    d1 = response(y, site)[1]
    intra = j_mat * (d1.T @ d1) / len(y)
    np.fill_diagonal(intra, 0.0)
    src, dst = edge_index
    cross = (weight[:, None] * d1[dst]).T @ d1[src]  # [G, G] sum_e w_e psi'(y_i) psi'(y_j)^T
    inter = k_mat * (cross + cross.T) / (2.0 * weight.sum())
    return intra, inter


def conditional_draw(
    h: np.ndarray,
    centre: Any,
    site: dict[str, np.ndarray],
    rng: np.random.Generator,
    *,
    max_rounds: int = 10_000,
) -> tuple[np.ndarray, int]:
    r"""Exact draws from :math:`\propto e^{u_g(y - m) + h \psi_g(y)}`, entrywise (module
    docstring): lone-law proposals at ``centre`` accepted with probability :math:`e^{h\,
    \mathrm{clip}(y, \alpha_g, \beta_g) - \max(h \alpha_g, h \beta_g)}`.

    ``h`` is ``[..., G]``, ``centre`` broadcasts to it, ``site`` holds ``[G]`` parameters.
    Returns ``(y, proposals)``: the draws (``h``'s shape) and the number of proposals made.
    """
    h = np.asarray(h, dtype=np.float64)
    shape = h.shape
    cols = {key: np.broadcast_to(site[key], shape).ravel() for key in
            ("sigma", "delta", "epsilon", "lo", "hi")}  # fmt: skip
    cen = np.broadcast_to(centre, shape).ravel()
    hv = h.ravel()
    top = np.maximum(hv * cols["lo"], hv * cols["hi"])
    out = np.empty(hv.size)
    pending = np.arange(hv.size)
    proposals = 0
    for _ in range(max_rounds):
        if pending.size == 0:
            return out.reshape(shape), proposals
        proposals += pending.size
        z = rng.standard_normal(pending.size)
        t = np.sinh((np.arcsinh(z) + cols["epsilon"][pending]) / cols["delta"][pending])
        yv = cen[pending] + cols["sigma"][pending] * t
        log_acc = hv[pending] * np.clip(yv, cols["lo"][pending], cols["hi"][pending]) - top[pending]
        ok = np.log(rng.random(pending.size)) < log_acc
        out[pending[ok]] = yv[ok]
        pending = pending[~ok]
    raise GraphDataError(
        f"conditional_draw: {pending.size} draws pending after {max_rounds} rounds"
    )


@dataclass
class RejectionGibbsReport(GibbsReport):
    """Diagnostics of :func:`rejection_gibbs`: a Gibbs run's, and these."""

    r_hat_max: float  # largest Gelman-Rubin R-hat of the traced per-gene means / mean squares
    autocorrelation_sweeps: float  # largest integrated autocorrelation time, in sweeps
    thin: int  # sweeps between the traced states
    n_gene_colours: int  # colour classes of J's gene graph
    proposals_per_draw: float  # mean rejection-sampler proposals per conditional draw


def rejection_gibbs(
    edge_index: np.ndarray,
    weight: np.ndarray,
    site: dict[str, np.ndarray],
    centre: np.ndarray,
    j_mat: np.ndarray,
    k_mat: np.ndarray,
    n_cells: int,
    *,
    sweeps: int = 400,
    burn_in: int = 200,
    thin: int = 2,
    seed: int = 0,
) -> tuple[np.ndarray, RejectionGibbsReport]:
    r"""Two chains of the blocked exact Gibbs sampler of :math:`p \propto e^E` (module docstring).

    Args:
        edge_index: ``[2, E]`` edges j -> i of the cell graph.
        weight: ``[E]`` edge weights.
        site: :func:`site_parameters`' ``[G]`` arrays.
        centre: ``[C, G]`` :math:`m_{ig}` (:func:`site_centre`).
        j_mat: ``J`` ``[G, G]`` symmetric, zero diagonal.
        k_mat: ``K`` ``[G, G]`` symmetric.
        n_cells: ``C``.
        sweeps: Sweeps after burn-in (default 400).
        burn_in: Sweeps first (default 200), discarded; nothing adapts.
        thin: Sweeps between the states traced after burn-in (default 2).
        seed: Seed of the starts and the draws.

    Returns:
        ``(y, report)``: final states ``[C, 2, G]`` and a :class:`RejectionGibbsReport`.
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
    if (site["sigma"] <= 0).any() or (site["delta"] <= 0).any() or (site["lo"] >= site["hi"]).any():
        raise GraphDataError("site: expected sigma, delta > 0 and lo < hi")
    s = symmetric_adjacency(edge_index, weight, n_cells)
    colours = greedy_colouring(edge_index, n_cells)
    rows = [s[idx] for idx in colours]
    gene_edges = np.array(np.nonzero(j_mat))
    gene_colours = greedy_colouring(gene_edges, g)
    cen = np.asarray(centre, dtype=np.float64)[:, None, :]  # [C, 1, G]
    y = np.empty((n_cells, 2, g))
    y[:, 0] = lone_sites(site, cen[:, 0], rng)
    y[:, 1] = lone_sites(site, cen[:, 0], rng, spread=2.0)
    psi = response(y, site)[0]
    trace, proposals, draws = [], 0, 0
    for sweep in range(burn_in + sweeps):
        for idx, s_rows in zip(colours, rows):
            m = len(idx)
            nu_k = ((s_rows @ psi.reshape(n_cells, 2 * g)).reshape(m, 2, g)) @ k_mat  # [m, 2, G]
            y_c, psi_c, c = y[idx], psi[idx], cen[idx]
            for genes in gene_colours:
                h = 2.0 * psi_c @ j_mat[:, genes] + nu_k[..., genes]  # [m, 2, q]
                sub = {key: site[key][genes] for key in ("sigma", "delta", "epsilon", "lo", "hi")}
                new, made = conditional_draw(h, c[..., genes], sub, rng)
                y_c[..., genes] = new
                psi_c[..., genes] = np.clip(new, sub["lo"], sub["hi"]) - site["offset"][genes]
                if sweep >= burn_in:
                    proposals += made
                    draws += new.size
            y[idx], psi[idx] = y_c, psi_c
        if sweep >= burn_in and (sweep - burn_in + 1) % thin == 0:
            trace.append(np.concatenate([y.mean(0), (y**2).mean(0)], -1))  # [2, 2G]
    if not np.isfinite(y).all():
        raise GraphDataError("rejection_gibbs: non-finite state")
    max_z, null_median = chain_agreement(y)
    traced = np.asarray(trace).reshape(-1, 2, 2 * g)
    report = RejectionGibbsReport(
        x2_max_z=max_z,
        x2_z_null_median=null_median,
        n_colours=len(colours),
        sweeps=burn_in + sweeps,
        seconds=time.perf_counter() - start,
        r_hat_max=_r_hat(traced),
        autocorrelation_sweeps=thin * _autocorrelation_time(traced),
        thin=thin,
        n_gene_colours=len(gene_colours),
        proposals_per_draw=proposals / max(draws, 1),
    )
    return y, report


def droplet_detect(
    expected: np.ndarray,
    capture: np.ndarray,
    reads: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Droplet snRNA-seq detection, stage by stage (module docstring): molecules
    :math:`\mathrm{Poisson}(\text{expected})` ``[D, P]``, captured with probability ``capture``
    ``[D]``, then counted with probability :math:`1 - e^{-R_d / M_d}` (``reads`` ``[D]``,
    :math:`M_d` the droplet's captured molecules). Returns ``(counts, captured)``, int64 ``[D,
    P]``."""
    mu = np.asarray(expected, dtype=np.float64)
    pi, r = np.asarray(capture, dtype=np.float64), np.asarray(reads, dtype=np.float64)
    if not np.isfinite(mu).all() or (mu < 0).any():
        raise GraphDataError("expected: expected finite expected molecule counts >= 0")
    if not ((pi >= 0) & (pi <= 1)).all():
        raise GraphDataError(
            f"capture: expected probabilities in [0, 1], got min {pi.min()}, max {pi.max()}"
        )
    if not np.isfinite(r).all() or (r < 0).any():
        raise GraphDataError("reads: expected finite read depths >= 0")
    captured = rng.binomial(rng.poisson(mu), pi[:, None])
    library = captured.sum(1)
    detect = -np.expm1(-r / np.maximum(library, 1))
    return rng.binomial(captured, detect[:, None]).astype(np.int64), captured.astype(np.int64)


def droplet_counts(
    latent: np.ndarray,
    cells: dict[str, Any],
    rng: np.random.Generator,
    *,
    n_other: int,
    depth: float = 6000.0,
    doublet_rate: float = 0.03,
    reads_per_molecule: float = 1.5,
    capture: tuple[float, float] = (6.0, 14.0),
    mean_range: tuple[float, float] = (2.0, 40.0),
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    r"""Whole-transcriptome counts of the recovered nuclei's droplets (module docstring).

    ``latent`` is ``[C, G]`` over the tissue cells. Returns ``(counts int64 [N, P], coupled [G]
    positions in var, params)``; ``params``: ``nuclear_content`` ``[C]`` (:math:`v`),
    ``doublet_partner`` ``[N]`` (the second nucleus' cell, -1: none), ``expected`` ``[N, P]``
    (:math:`\mu`), ``capture`` ``[N]`` (:math:`\pi`), ``reads`` ``[N]`` (:math:`R`), ``library``
    ``[N]`` (:math:`M`), ``detection`` ``[N]`` (:math:`1 - e^{-R/M}`), ``rate`` ``[N, P]``
    (:math:`\pi \mu (1 - e^{-R/M})`), ``gene_mean`` ``[G]`` (:math:`M_g`), ``baseline`` ``[G]``
    (:math:`\alpha^0_g`), ``base_mean`` ``[P]`` (:math:`b_j`, NaN on coupled genes),
    ``marker_type`` ``[P]`` (-1: none), ``zonation`` ``[P]`` (:math:`z_j`), ``role`` ``[P]``
    (str), ``size_factor`` ``[N]`` (:math:`v \pi (1 - e^{-R/M})`, geometric mean 1),
    ``sequencing_saturation`` ``[N]`` and ``total_counts`` ``[N]``.
    """
    n_cells, g = latent.shape
    if n_other < 10:
        raise GraphDataError(f"n_other: expected >= 10, got {n_other}")
    if not (0 <= doublet_rate < 1 and reads_per_molecule > 0 and depth > 0):
        raise GraphDataError(
            f"doublet_rate, reads_per_molecule, depth: expected in [0, 1), > 0 and > 0, got "
            f"{doublet_rate}, {reads_per_molecule}, {depth}"
        )
    observed, cell_type, axis = cells["observed"], cells["cell_type"], cells["axis"]
    n = len(observed)
    p_all = g + n_other
    content = NUCLEAR_CONTENT[cell_type] * np.exp(0.25 * rng.standard_normal(n_cells))
    spare = np.setdiff1d(np.arange(n_cells), observed)
    partner = np.full(n, -1)
    doublet = rng.random(n) < doublet_rate
    if doublet.any() and spare.size:
        partner[doublet] = rng.choice(spare, int(doublet.sum()), replace=spare.size < doublet.sum())
    coupled = np.sort(rng.choice(p_all, g, replace=False))
    others = np.setdiff1d(np.arange(p_all), coupled)
    lo, hi = np.log(mean_range)
    strata = (rng.permutation(g) + rng.random(g)) / g
    gene_mean = np.exp(lo + strata * (hi - lo))
    own = content[observed, None] * np.exp(latent[observed])  # [N, G]
    alpha = np.log(gene_mean) - np.log(own.mean(0))
    marker_type = np.full(p_all, -1)
    is_marker = rng.random(n_other) < 0.35
    marker_type[others[is_marker]] = rng.integers(len(CELL_TYPES), size=int(is_marker.sum()))
    fold = np.where(marker_type >= 0, rng.uniform(1.5, 3.0, p_all), 0.0)
    zon = np.where(rng.random(p_all) < 0.25, 0.8 * rng.standard_normal(p_all), 0.0)
    zon[coupled] = 0.0
    base = np.full(p_all, np.nan)
    base[others] = np.exp(1.3 * rng.standard_normal(n_other))

    def molecules(cell: np.ndarray) -> np.ndarray:  # [len(cell), P] expected nuclear molecules
        out = np.empty((len(cell), p_all))
        out[:, coupled] = content[cell, None] * np.exp(alpha + latent[cell])
        effect = np.where(cell_type[cell, None] == marker_type[None, others], fold[others], 0.0)
        effect = effect + zon[others] * (2 * axis[cell, None] - 1)
        out[:, others] = content[cell, None] * base[others] * np.exp(effect)
        return out

    primary = molecules(observed)
    scale_other = depth / primary[:, others].sum(1).mean()
    base[others] *= scale_other
    primary[:, others] *= scale_other
    expected = primary.copy()
    if doublet.any():
        expected[doublet] += molecules(partner[doublet])
    pi = rng.beta(capture[0], capture[1], n)
    typical = float(np.median(pi * expected.sum(1)))
    reads = reads_per_molecule * typical * np.exp(0.3 * rng.standard_normal(n))
    counts, captured = droplet_detect(expected, pi, reads, rng)
    library = captured.sum(1)
    detection = -np.expm1(-reads / np.maximum(library, 1))
    rate = expected * (pi * detection)[:, None]
    size = content[observed] * pi * detection
    role = np.full(p_all, "other", dtype=object)
    role[marker_type >= 0] = "marker"
    role[coupled] = "coupled"
    params = {
        "nuclear_content": content,
        "doublet_partner": partner,
        "expected": expected,
        "capture": pi,
        "reads": reads,
        "library": library,
        "detection": detection,
        "rate": rate,
        "gene_mean": gene_mean,
        "baseline": alpha,
        "base_mean": base,
        "marker_type": marker_type,
        "zonation": zon,
        "role": role.astype(str),
        "size_factor": size / np.exp(np.log(size).mean()),
        "sequencing_saturation": 1.0 - counts.sum(1) / reads,
        "total_counts": counts.sum(1),
    }
    return counts, coupled, params


@dataclass(kw_only=True)
class SlideTagsTissue:
    """A tissue of :func:`simulate`: the recovered nuclei (the observations: ``coords``, graph,
    ``counts`` ``[N, P]`` in var order, coupled genes at ``coupled``), the tissue's cells under
    them (``cells``, ``latent``) and the cell-level truth."""

    coords: np.ndarray  # [N, 2] placed nucleus positions, um
    edge_index: np.ndarray  # [2, E] k-NN over the nuclei, j -> i
    edge_weight: np.ndarray  # [E] GCN weights
    W_intra: np.ndarray  # [G, G] mean Hessian within cells, zero diagonal  # noqa: N815
    W_inter: np.ndarray  # [G, G] mean Hessian across cell-graph edges  # noqa: N815
    x: np.ndarray  # [N, G] the nuclei's cells' latent rows on the sphere
    latent: np.ndarray  # [C, G] every tissue cell's latent row (chain 0)
    counts: np.ndarray  # [N, P] int64
    coupled: np.ndarray  # [G] positions of the coupled genes in var, increasing
    log1p: np.ndarray  # [N, P] float32
    cell_type: np.ndarray  # [N] index into CELL_TYPES (of the nucleus' cell)
    cells: dict[str, np.ndarray]  # C cells: coords, epithelial, zone, cell_type, axis, graph
    count_params: dict[str, Any]
    report: RejectionGibbsReport
    field: dict[str, np.ndarray]  # site parameters, centre, J, K, W_intra, W_inter
    genes: dict[str, np.ndarray]  # pathway, order, receptor, ligand, notch, morphogen
    params: dict[str, Any] = dataclass_field(default_factory=dict)

    def to_anndata(self, *, sparse: bool = True) -> Any:
        """AnnData of the nuclei: ``X`` and ``layers['counts']`` (float32 CSR, or dense int64
        with ``sparse=False``), ``layers['log1p']``, ``layers['signed']``,
        ``var['highly_variable']`` True exactly on the coupled genes, ``obs['total_counts']``,
        ``obs['n_genes_by_counts']``, ``obs['cell_type']``, ``obs['zone']``,
        ``obs['crypt_villus_axis']``, ``obsm['spatial']`` (placed positions; um), the graph of
        ``spatial_neighbors_knn`` and ``uns['tissue_slidetags']`` (parameters, sampler, the
        truth ``W_intra`` / ``W_inter`` and the coupled genes' names)."""
        import pandas as pd

        observed = self.cells["observed"]
        obs = {
            "total_counts": self.counts.sum(1),
            "n_genes_by_counts": (self.counts > 0).sum(1),
            "cell_type": pd.Categorical(
                [CELL_TYPES[t] for t in self.cell_type], categories=list(CELL_TYPES)
            ),
            "zone": pd.Categorical(
                [ZONES[z] for z in self.cells["zone"][observed]], categories=list(ZONES)
            ),
            "crypt_villus_axis": self.cells["axis"][observed],
        }
        return coupled_anndata(self, key="tissue_slidetags", digits=5, obs=obs, sparse=sparse)


def simulate(
    n_cells: int,
    n_genes: int,
    *,
    seed: int = 0,
    k: int = 6,
    sweeps: int = 400,
    burn_in: int = 200,
    thin: int = 2,
    intra_norm: float = 0.8,
    margin: float = 0.9,
    n_other: int | None = None,
    position_error: float = 3.0,
    zonation: float = 0.35,
    compartment: float = 0.3,
    depth: float = 6000.0,
    doublet_rate: float = 0.03,
    reads_per_molecule: float = 1.5,
) -> SlideTagsTissue:
    """Strip, nuclei, graphs, couplings, Gibbs states, truth and droplet counts of one tissue
    (module docstring). ``n_cells`` is the number of recovered nuclei ``N`` (the observations;
    the tissue holds about 1.7 times as many cells). ``n_other`` None draws it uniformly from
    800-2,000. Every draw comes from ``numpy.random.default_rng(seed)`` and its spawned
    streams, so a seed reproduces the tissue."""
    if n_cells <= k or n_cells < 20:
        raise GraphDataError(
            f"n_cells: expected at least 20 nuclei and more than k = {k}, got {n_cells}"
        )
    if not (0 < intra_norm < 1 and 0 < margin < 1):
        raise GraphDataError(
            f"intra_norm, margin: expected in (0, 1) (the linearised field stable), got "
            f"{intra_norm}, {margin}"
        )
    if not 0 <= doublet_rate < 1 or reads_per_molecule <= 0 or depth <= 0:
        raise GraphDataError(
            f"doublet_rate, reads_per_molecule, depth: expected in [0, 1), > 0 and > 0, got "
            f"{doublet_rate}, {reads_per_molecule}, {depth}"
        )
    if n_other is not None and n_other < 10:
        raise GraphDataError(f"n_other: expected >= 10, got {n_other}")
    streams = np.random.default_rng(seed).spawn(5)
    cells = intestine_cells(n_cells, streams[0], position_error=position_error)
    n_tissue = len(cells["coords"])
    cell_edges = knn_edges(cells["coords"], k)
    cell_weight = gcn_weights(cell_edges, n_tissue)
    j0, k0, genes = draw_couplings(n_genes, streams[1])
    site = site_parameters(n_genes, streams[2], zonation=zonation, compartment=compartment)
    centre = site_centre(site, cells["axis"], ~cells["epithelial"])
    active = site["p_hi"] - site["p_lo"]
    curv = 1.0 / lone_moments(site)[1]
    lin = 2.0 * j0 * np.outer(active, active)
    half = 1.0 / np.sqrt(curv)
    scale_j = intra_norm / np.linalg.norm(half[:, None] * lin * half[None], 2)
    j_mat = scale_j * j0
    kappa, rho_s = coupling_scale(
        cell_edges, cell_weight, n_tissue, np.diag(curv) - scale_j * lin,
        k0 * np.outer(active, active), margin, v0=np.ones(n_tissue),
    )  # fmt: skip
    k_mat = kappa * k0
    states, report = rejection_gibbs(
        cell_edges, cell_weight, site, centre, j_mat, k_mat, n_tissue, sweeps=sweeps,
        burn_in=burn_in, thin=thin, seed=int(streams[3].integers(2**62)),
    )  # fmt: skip
    latent = states[:, 0]
    w_intra, w_inter = truth_matrices(latent, cell_edges, cell_weight, site, j_mat, k_mat)
    rng = streams[4]
    if n_other is None:
        n_other = int(rng.integers(800, 2001))
    counts, coupled, count_params = droplet_counts(
        latent, cells, rng, n_other=n_other, depth=depth, doublet_rate=doublet_rate,
        reads_per_molecule=reads_per_molecule,
    )  # fmt: skip
    coords = cells["nucleus_coords"]
    edge_index = knn_edges(coords, k)
    weight = gcn_weights(edge_index, n_cells)
    observed = cells["observed"]
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
        "scale_J": float(scale_j),
        "kappa": kappa,
        "rho_adjacency": rho_s,
        "n_other": n_other,
        "n_tissue_cells": n_tissue,
        "n_units": cells["n_units"],
        "strip_width": cells["width"],
        "position_error": position_error,
        "zonation": zonation,
        "compartment": compartment,
        "depth": depth,
        "doublet_rate": doublet_rate,
        "reads_per_molecule": reads_per_molecule,
    }
    return SlideTagsTissue(
        coords=coords,
        edge_index=edge_index,
        edge_weight=weight,
        W_intra=w_intra,
        W_inter=w_inter,
        x=latent[observed] / np.linalg.norm(latent[observed], axis=1, keepdims=True),
        latent=latent,
        counts=counts,
        coupled=coupled,
        log1p=_log1p_normalised(counts),
        cell_type=cells["cell_type"][observed],
        cells={
            "coords": cells["coords"],
            "epithelial": cells["epithelial"],
            "zone": cells["zone"],
            "cell_type": cells["cell_type"],
            "axis": cells["axis"],
            "observed": observed,
            "edge_index": cell_edges,
            "edge_weight": cell_weight,
        },
        count_params=count_params,
        report=report,
        field={
            **site,
            "centre": centre,
            "J": j_mat,
            "K": k_mat,
            "W_intra": w_intra,
            "W_inter": w_inter,
        },
        genes=genes,
        params=params,
    )
