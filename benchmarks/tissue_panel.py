r"""A fifth tissue simulator: a gene panel inside a whole transcriptome, on a Visium-like section.

The fourth held-out world of the Celcomen benchmark (``bench_celcomen_counts --world panel``,
issue 19, session 20), written after ``metropolis``, ``gibbs_pln`` and ``bistable_nb`` had all
been looked at. Its mechanism differs from theirs at every stage: spots on a **hexagonal lattice
clipped to a lobed outline with holes** (not a uniform square or clusters); latent log-rates
with a **skewed log-gamma-type potential** per gene (not a Gaussian, nor a quartic double well);
couplings with **hub regulators** and **ligand-receptor pairs** (not Erdős–Rényi, circulant or
modular patterns); **univariate slice sampling** (not Metropolis, exact Gaussian Gibbs or MALA);
and counts from a **multinomial draw of each spot's UMI total over the panel plus 2,000
background genes** (not independent Poisson or negative-binomial draws). Neither
``spatial.simulate`` nor ``spatial.model`` is imported; the graph comes from
:func:`graphdata.spatial.knn_graph`, the colouring from :mod:`benchmarks.tissue_metropolis`.

**Layout** (:func:`section_positions`). The points of a hexagonal lattice of spacing 1 (Visium
spots), jittered by :math:`\mathcal N(0, 0.05^2)` per coordinate (so k-NN has no exact ties),
inside an outline: the union of ``n_lobes`` = 6 discs, radii :math:`r_k \sim U(0.4, 1)`, lobe
:math:`k` centred a step of :math:`(0.8 + 0.4 U)(r_p + r_k)/2` in a uniform direction from a
uniformly chosen earlier lobe :math:`p` (a branching outline, each lobe overlapping its parent),
minus ``n_holes`` = 3 **holes**, discs of radius :math:`0.35 r_k` at the centres of the three
largest lobes (inside the outline). The outline is scaled until it holds at least ``N`` points,
and the ``N`` points deepest inside (largest distance to the outline in shape units) are kept.
A spot is on the **boundary** (:func:`boundary_spots`) when fewer than 6 others lie within 1.25
(the first lattice shell): 14-17 % of 2,000 spots, against 8 % for a disc. Directed k-NN graph
(k = 6), edges :math:`j \to i`, GCN weights :math:`w_{ij} = 1/\sqrt{d_i d_j}` (``A[i, j] =
w_ij``; every in-degree is k, so :math:`w = 1/6`), the graph and weighting Celcomen's default
fits with (``spatial_neighbors_knn`` rebuilds it from ``obsm['spatial']``). Inside, the graph is
the lattice's (6 neighbours at distance about 1, the next shell at :math:`\sqrt 3`); at the
edges and holes it reaches further and is not symmetric.

**Latent field.** :math:`Y \in \mathbb R^{N \times G}`, rows :math:`y_i` (log-rates), with density

.. math::
    \log p(Y) = \sum_i \Big[\sum_g \big(a_g y_{ig} - b_g e^{y_{ig}} - c_g e^{-y_{ig}}\big)
        - \tfrac12 y_i^\top \Lambda_\circ\, y_i\Big]
        + \sum_i \sum_{j \to i} w_{ij}\, y_i^\top K\, y_j + \mathrm{const}.

The **site potential** :math:`a y - b e^y` is the log density of :math:`y = \log r`,
:math:`r \sim \mathrm{Gamma}(a, b)`: skewed, with a long lower tail. Alone it confines
:math:`y` below only linearly, which cannot hold a quadratic coupling: two genes with a positive
:math:`W_{\mathrm{intra}}` entry going to :math:`-\infty` together would make :math:`p`
non-normalisable. The barrier :math:`-c e^{-y}` (with it :math:`r` is generalised inverse
Gaussian, which tends to the gamma as :math:`c \to 0`) confines faster than any quadratic in both
directions, so :math:`p` is normalisable for every coupling. Shapes :math:`\log a_g \sim U(0,
\log 4)`, :math:`c_g = \epsilon a_g` (:math:`\epsilon` = ``barrier`` = 0.15), :math:`b_g = a_g +
c_g` (a lone gene's mode at 0): a lone gene has sd 0.85-0.44 and skewness -0.34 to -0.28 for
:math:`a` = 1-4 (a Gaussian: 0).

:math:`\Lambda_\circ` (zero diagonal, symmetric) has **hub regulators**: ``max(2, round(G/5))``
hubs, alternately activators and repressors; a hub is coupled to each non-hub gene with
probability 0.5, with its own sign with probability 0.8; hub-hub pairs couple with probability
0.5 (random sign), other pairs with probability :math:`0.5/G`; magnitudes :math:`U(0.4, 1)`. The
intercellular :math:`K` (symmetric) is **ligand-receptor**-like: ``max(2, round(0.3 G))`` ligand
genes and as many receptor genes (disjoint, drawn independently of the hubs); each ligand binds
one receptor of a random matching and each other receptor with probability 0.25, positive with
probability 0.75, magnitudes :math:`U(0.5, 1)` (a ligand in spot j drives its receptor in spot
i; the energy holds the pair symmetrically, as it must); the diagonal :math:`K_{gg} \sim U(0.2,
1)` (gene-specific spatial autocorrelation). **Scale**: with :math:`D = \mathrm{diag}(2\sqrt{b_g
c_g})`, the least curvature of the site potentials (:math:`b e^y + c e^{-y} \ge 2\sqrt{bc}`),
:math:`\Lambda_\circ` is scaled to :math:`\lVert D^{-1/2}\Lambda_\circ D^{-1/2}\rVert_2 =`
``intra_norm`` (0.6) and :math:`K = \kappa K_0` with :math:`\rho(A + A^\top)\,\rho(M^{-1/2} K_0
M^{-1/2})\,\kappa = ` ``margin`` (0.9), :math:`M = D + \Lambda_\circ`
(:func:`benchmarks.tissue_gibbs_pln.coupling_scale`). Then :math:`-\nabla^2 \log p \succeq I_N
\otimes M - (A + A^\top) \otimes K \succ 0` everywhere: :math:`\log p` is **strictly concave**,
so the field has one mode and cannot freeze into an ordered phase. On 2,000-spot tissues at G =
10 and 20 the same-gene correlation of a spot with its neighbours' mean is 0.05-0.08 on average
(up to 0.19), a gene's skewness about -0.33 and its kurtosis about 3.

**Truth in Celcomen's sign convention.** Celcomen's energy is :math:`E(X) = \sum_i x_i^\top
W_{\mathrm{intra}} x_i + \sum_i \sum_{j \to i} w_{ij} x_i^\top W_{\mathrm{inter}} x_j` with
:math:`p \propto e^{E}`. Term by term against :math:`\log p(Y)`: the site potential is a sum of
functions of single entries :math:`y_{ig}` (no product of two entries), so it has no
off-diagonal part; the within-cell quadratic form gives :math:`W_{\mathrm{intra}} =
-\Lambda_\circ/2`; the pair term is the same bilinear form:

.. math::
    W_{\mathrm{intra}} = -\tfrac12 \Lambda_\circ, \qquad W_{\mathrm{inter}} = K ,

i.e. :math:`\partial^2 \log p / \partial y_{ig} \partial y_{ih} = 2 (W_{\mathrm{intra}})_{gh}`
(:math:`g \ne h`) and :math:`\partial^2 \log p / \partial y_{ig} \partial y_{jh} = w_{ij}
(W_{\mathrm{inter}})_{gh}` for an edge :math:`j \to i` only (:math:`w_{ij} + w_{ji}` when both
edges exist). ``W_intra`` has a zero diagonal (the sphere cannot identify its trace; the site
potential sets the diagonal's effective value). The map is exact for the off-diagonal entries of
the latent energy; the counts pass through a baseline per gene, a compositional multinomial draw
and a log-normal UMI total, and Celcomen fits rows on the sphere, so **signs, support and
Pearson** of the off-diagonals compare, and the benchmark's scale ``ratio`` is reported without a
claim that the latent energy fixes it.

**Sampler** (:func:`slice_sample`). Given the rest, one entry has the log-concave conditional

.. math::
    \ell(t) = (a_g + h_{ig})\, t - b_g e^{t} - c_g e^{-t}, \qquad
    h_{ig} = -(\Lambda_\circ y_i)_g + (K n_i)_g, \quad
    n_i = \sum_{j \to i} w_{ij}\, y_j + \sum_{i \to l} w_{li}\, y_l ,

updated by univariate slice sampling (:func:`slice_step`; Neal 2003, `doi:10.1214/aos/1056562461
<https://doi.org/10.1214/aos/1056562461>`_): level :math:`\log u = \ell(t_0) - \mathrm{Exp}(1)`,
an interval of width :math:`w_g = 2.5/\sqrt{b_g + c_g}` (about 2.5 lone-gene sds) placed
uniformly around :math:`t_0`, **stepping out** (at most ``max_steps`` = 32 steps, split at
random between the two ends, Neal's Fig. 3) and **shrinkage** (Fig. 5). Entries :math:`(i, g)`
and :math:`(j, h)` are conditionally independent unless :math:`i = j` and
:math:`(\Lambda_\circ)_{gh} \ne 0`, or :math:`i, j` are neighbours: the product of a colouring of
the spots (graph) and one of the genes (support of :math:`\Lambda_\circ`) gives classes of
entries updated together, vectorised; a sweep visits every class once (a systematic-scan Gibbs
sampler whose every move leaves :math:`p` invariant; nothing adapts). Two chains, from 0 and
from :math:`3/\sqrt{b_g + c_g}` times a standard normal per entry, run ``burn_in`` (100,
discarded) + ``sweeps`` (200) sweeps; after burn-in every ``thin``-th (2nd) sweep's per-gene
mean and mean square over spots are traced, and their largest Gelman-Rubin :math:`\hat R` and
integrated autocorrelation time are reported, with the two chains' final second moments
(:func:`benchmarks.tissue_gibbs_pln.chain_agreement`) and the log-density evaluations per
update (about 4.9). The tissue is the final state of chain 0.

**Counts** (:func:`panel_counts`). The panel's G genes are measured inside a transcriptome with
:math:`B` = 2,000 background genes of log-rates :math:`\beta_j + \varepsilon_{ij}`,
:math:`\beta_j \sim \mathcal N(0, 1.5^2)`, :math:`\varepsilon_{ij} \sim \mathcal N(0, 0.5^2)`
(independent log-normal levels); the panel's log-rates are :math:`\alpha_g + y_{ig}`. A spot's
UMI total is :math:`T_i = \max(1, \mathrm{round}(T_{50} e^{0.5 \xi_i}))`, :math:`\xi_i \sim
\mathcal N(0, 1)` (median :math:`T_{50}` = 5,000), and

.. math::
    (c_{i1}, \dots, c_{iG}, c_{i,\mathrm{rest}}) \sim \mathrm{Multinomial}\Big(T_i,\
        \mathrm{softmax}\big(\alpha_1 + y_{i1}, \dots, \alpha_G + y_{iG},\
        \beta_1 + \varepsilon_{i1}, \dots, \beta_B + \varepsilon_{iB}\big)\Big),

the background merged into one "rest" category (exact: merged categories of a multinomial are
multinomial), drawn as sequential binomials (:func:`sequential_multinomial`) :math:`c_{ig} \sim
\mathrm{Bin}\big(T_i - \sum_{h<g} c_{ih},\ p_{ig} / (1 - \sum_{h<g} p_{ih})\big)` (the chain
rule of the multinomial, exact). The baselines :math:`\alpha_g` are set so that the expected mean
count of gene g over the tissue is :math:`m_g`, stratified log-uniform on (0.2, 20) (one draw per
G-quantile: 35 % of the genes below one count per spot). Only the panel counts are returned
(about 0.8 % of a spot's UMIs at G = 10, 1.5 % at G = 20); a spot with no panel count is drawn
again with its own total (``filter_cells(min_counts=1)``). The panel shares its denominator with
the background, so a spot's panel composition and its library size are coupled as in real UMI
data. ``log1p`` is scanpy's ``normalize_total`` then ``log1p`` of the panel; ``signed`` holds the
latent rows :math:`y_i / \lVert y_i\rVert` (the coordinates an oracle would fit).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.spatial import cKDTree

from benchmarks.tissue_gibbs_pln import (
    GibbsReport,
    LatentTissue,
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
    tissue_anndata,
)
from graphdata.errors import GraphDataError

__all__ = [
    "section_positions",
    "boundary_spots",
    "draw_couplings",
    "site_parameters",
    "log_density",
    "slice_step",
    "slice_sample",
    "sequential_multinomial",
    "panel_counts",
    "SliceReport",
    "PanelTissue",
    "simulate",
]


def section_positions(
    n_cells: int,
    rng: np.random.Generator,
    *,
    n_lobes: int = 6,
    n_holes: int = 3,
    hole: float = 0.35,
    jitter: float = 0.05,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Jittered hex-lattice spots ``[N, 2]`` inside a lobed outline with holes (module doc).

    Returns ``(coords, outline)``; ``outline`` holds ``hole_centres`` ``[H, 2]`` and
    ``hole_radii`` ``[H]``, and the lobes' ``centres`` ``[L, 2]`` and ``radii`` ``[L]``, in the
    coordinates' units.
    """
    if n_cells < 1 or n_lobes < 1 or n_holes < 0 or not 0.0 < hole < 1.0:
        raise GraphDataError(
            f"n_cells, n_lobes, n_holes, hole: expected >= 1, >= 1, >= 0 and in (0, 1), got "
            f"{n_cells}, {n_lobes}, {n_holes}, {hole}"
        )
    radii = rng.uniform(0.4, 1.0, n_lobes)
    centres = np.zeros((n_lobes, 2))
    for k in range(1, n_lobes):
        # from a random earlier lobe: a branching outline, each lobe overlapping its parent
        parent = int(rng.integers(k))
        step = (0.8 + 0.4 * rng.random()) * 0.5 * (radii[parent] + radii[k])
        angle = rng.uniform(0.0, 2.0 * math.pi)
        centres[k] = centres[parent] + step * np.array([math.cos(angle), math.sin(angle)])
    holed = np.argsort(-radii, kind="stable")[: min(n_holes, n_lobes)]  # the largest lobes
    hole_centres, hole_radii = centres[holed], hole * radii[holed]

    def depth(p: np.ndarray) -> np.ndarray:  # [M, 2] in shape units -> distance to the outline
        to_lobe = radii[None] - np.linalg.norm(p[:, None] - centres[None], axis=-1)  # [M, L]
        to_hole = np.linalg.norm(p[:, None] - hole_centres[None], axis=-1) - hole_radii[None]
        return np.minimum(to_lobe.max(1), to_hole.min(1))

    # area of the outline by a fine grid, to start the scale near N spots
    lo, hi = (centres - radii[:, None]).min(0), (centres + radii[:, None]).max(0)
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], 300), np.linspace(lo[1], hi[1], 300))
    inside = depth(np.stack([gx.ravel(), gy.ravel()], 1)) > 0
    area = inside.mean() * float(np.prod(hi - lo))
    scale = math.sqrt(n_cells * math.sqrt(3) / 2 / area)  # a spot covers sqrt(3)/2
    while True:
        span = scale * np.stack([lo, hi])  # [2, 2] box of the scaled outline
        rows = np.arange(math.floor(span[0, 1] / (math.sqrt(3) / 2)) - 1,
                         math.ceil(span[1, 1] / (math.sqrt(3) / 2)) + 2)  # fmt: skip
        cols = np.arange(math.floor(span[0, 0]) - 2, math.ceil(span[1, 0]) + 2)
        r, c = np.meshgrid(rows, cols, indexing="ij")
        lattice = np.stack([c + 0.5 * (r % 2), r * math.sqrt(3) / 2], -1).reshape(-1, 2)
        points = lattice + jitter * rng.standard_normal(lattice.shape)
        score = depth(points / scale)
        if (score > 0).sum() >= n_cells:
            break
        scale *= 1.02
    keep = np.sort(np.argsort(-score, kind="stable")[:n_cells])  # the N deepest, lattice order
    coords = points[keep]
    shift = coords.min(0)
    outline = {
        "hole_centres": scale * hole_centres - shift,
        "hole_radii": scale * hole_radii,
        "centres": scale * centres - shift,
        "radii": scale * radii,
    }
    return coords - shift, outline


def boundary_spots(coords: np.ndarray, *, radius: float = 1.25, shell: int = 6) -> np.ndarray:
    """Boolean ``[N]``: fewer than ``shell`` other spots within ``radius`` (lattice spacing 1)."""
    tree = cKDTree(coords)
    counts = np.asarray(tree.query_ball_point(coords, radius, return_length=True)) - 1
    return counts < shell


def draw_couplings(
    n_genes: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    r"""Unscaled hub pattern ``W0`` (Celcomen's sign, zero diagonal) and ligand-receptor ``K0``.

    Returns ``(W0, K0, roles)``: float64 ``[G, G]`` symmetric; :math:`\Lambda_\circ \propto
    -2 W_0`; ``roles`` holds the indices of the ``hubs``, ``ligands`` and ``receptors``.
    """
    g = n_genes
    if g < 6:
        raise GraphDataError(f"n_genes: expected >= 6 (hubs, ligands, receptors), got {g}")
    n_hubs = max(2, round(g / 5))
    n_pairs = max(2, round(0.3 * g))
    upper = np.triu(np.ones((g, g), dtype=bool), 1)
    order = rng.permutation(g)
    hubs = np.sort(order[:n_hubs])
    is_hub = np.zeros(g, dtype=bool)
    is_hub[hubs] = True
    w0 = np.zeros((g, g))
    while not (w0 != 0).any() or (np.abs(w0[hubs]) > 0).sum(1).min() == 0:
        hub_sign = np.where(np.arange(n_hubs) % 2 == 0, 1.0, -1.0)  # activator, repressor, ...
        w0 = np.zeros((g, g))
        for sign, h in zip(hub_sign, hubs):
            targets = ~is_hub & (rng.random(g) < 0.5)
            own = np.where(rng.random(g) < 0.8, sign, -sign)
            w0[h] = np.where(targets, own * rng.uniform(0.4, 1.0, g), 0.0)
        both = is_hub[:, None] & is_hub[None, :] & upper & (rng.random((g, g)) < 0.5)
        rest = ~is_hub[:, None] & ~is_hub[None, :] & upper & (rng.random((g, g)) < 0.5 / g)
        extra = np.where(
            both | rest, rng.choice([-1.0, 1.0], (g, g)) * rng.uniform(0.4, 1.0, (g, g)), 0.0
        )
        w0 = w0 + w0.T + extra + extra.T
    # ligands and receptors: a fresh order, so a hub can be a ligand
    order = rng.permutation(g)
    ligands, receptors = order[:n_pairs], order[n_pairs : 2 * n_pairs]
    bind = np.eye(n_pairs, dtype=bool)[:, rng.permutation(n_pairs)] | (
        rng.random((n_pairs, n_pairs)) < 0.25
    )  # [L, R] a matching plus promiscuous pairs
    k0 = np.zeros((g, g))
    sign = np.where(rng.random((n_pairs, n_pairs)) < 0.75, 1.0, -1.0)
    k0[np.ix_(ligands, receptors)] = np.where(bind, sign * rng.uniform(0.5, 1.0, bind.shape), 0)
    k0 = k0 + k0.T + np.diag(rng.uniform(0.2, 1.0, g))
    roles = {"hubs": hubs, "ligands": np.sort(ligands), "receptors": np.sort(receptors)}
    return w0, k0, roles


def site_parameters(
    n_genes: int, rng: np.random.Generator, *, barrier: float = 0.1
) -> dict[str, np.ndarray]:
    r"""Site potentials :math:`a_g y - b_g e^y - c_g e^{-y}` (module docstring): ``a``, ``b``,
    ``c`` ``[G]``, and ``floor`` = :math:`2\sqrt{b_g c_g}`, the least curvature."""
    if barrier <= 0:
        raise GraphDataError(f"barrier: expected > 0 (it makes p normalisable), got {barrier}")
    a = np.exp(rng.uniform(0.0, math.log(4.0), n_genes))
    c = barrier * a
    b = a + c  # a - b + c = 0: a lone gene's mode at y = 0
    return {"a": a, "b": b, "c": c, "floor": 2.0 * np.sqrt(b * c)}


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
    single = (site["a"] * y - site["b"] * np.exp(y) - site["c"] * np.exp(-y)).sum()
    intra = -0.5 * np.einsum("ig,gh,ih->", y, lam_off, y)
    inter = float((weight * np.einsum("eg,gh,eh->e", y[dst], k, y[src])).sum())
    return float(single + intra + inter)


def slice_step(
    t0: np.ndarray,
    slope: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    width: np.ndarray,
    rng: np.random.Generator,
    *,
    max_steps: int = 32,
) -> tuple[np.ndarray, int]:
    r"""One slice-sampling update of every entry of ``t0`` for :math:`\ell(t) = s t - b e^t -
    c e^{-t}` (Neal 2003, stepping out and shrinkage), all arrays broadcast to ``t0.shape``.

    Returns ``(t1, evaluations)``: the new values and the number of :math:`\ell` evaluations per
    entry summed over entries (the cost).
    """
    shape = t0.shape

    def ell(t: np.ndarray) -> np.ndarray:
        return slope * t - b * np.exp(t) - c * np.exp(-t)

    level = ell(t0) - rng.standard_exponential(shape)  # log u, u ~ U(0, f(t0))
    left = t0 - width * rng.random(shape)
    right = left + width
    j = np.floor(max_steps * rng.random(shape))  # steps allowed to the left; the rest right
    m = max_steps - 1 - j
    evaluations = t0.size
    out = (j > 0) & (ell(left) > level)
    evaluations += t0.size
    while out.any():
        left = np.where(out, left - width, left)
        j -= out
        out &= (j > 0) & (ell(left) > level)
        evaluations += int(out.sum())
    out = (m > 0) & (ell(right) > level)
    evaluations += t0.size
    while out.any():
        right = np.where(out, right + width, right)
        m -= out
        out &= (m > 0) & (ell(right) > level)
        evaluations += int(out.sum())
    t1 = t0.copy()
    todo = np.ones(shape, dtype=bool)
    while todo.any():
        draw = left + rng.random(shape) * (right - left)
        ok = todo & (ell(draw) > level)
        evaluations += int(todo.sum())
        t1 = np.where(ok, draw, t1)
        miss = todo & ~ok  # shrink towards t0: the slice keeps t0 inside
        left = np.where(miss & (draw < t0), draw, left)
        right = np.where(miss & (draw >= t0), draw, right)
        todo = miss
    return t1, evaluations


@dataclass
class SliceReport(GibbsReport):
    """Diagnostics of :func:`slice_sample`: those of a Gibbs run, and the slice sampler's."""

    evaluations_per_update: float  # log-density evaluations per entry update after burn-in
    r_hat_max: float  # largest Gelman-Rubin R-hat of the traced per-gene means / mean squares
    autocorrelation_sweeps: float  # largest integrated autocorrelation time of those, in sweeps
    thin: int  # sweeps between the traced states
    n_gene_colours: int


def _r_hat(trace: np.ndarray) -> float:
    """Largest Gelman-Rubin R-hat over the statistics of ``trace`` ``[T, chains, S]``."""
    t = trace.shape[0]
    if t < 2:
        return float("nan")
    within = trace.var(0, ddof=1).mean(0)  # [S] W
    between = t * trace.mean(0).var(0, ddof=1)  # [S] B
    pooled = (t - 1) / t * within + between / t
    return float(np.sqrt(pooled / np.maximum(within, 1e-300)).max())


def _autocorrelation_time(trace: np.ndarray) -> float:
    """Largest integrated autocorrelation time over the series of ``trace`` ``[T, chains, S]``,
    in steps of the trace (Sokal's window: the first M with M >= 5 tau(M))."""
    t = trace.shape[0]
    if t < 4:
        return float("nan")
    x = trace.reshape(t, -1) - trace.reshape(t, -1).mean(0)  # [T, C S]
    spectrum = np.fft.rfft(x, 2 * t, axis=0)
    acf = np.fft.irfft(spectrum * np.conj(spectrum), axis=0)[:t]  # [T, C S]
    acf = acf / np.maximum(acf[:1], 1e-300)
    taus = 2.0 * np.cumsum(acf, axis=0) - 1.0  # [T, C S] tau(M) = 1 + 2 sum_{1..M} rho
    window = np.arange(t)[:, None] >= 5.0 * taus
    first = np.where(window.any(0), window.argmax(0), t - 1)  # [C S]
    return float(taus[first, np.arange(x.shape[1])].max())


def slice_sample(
    edge_index: np.ndarray,
    weight: np.ndarray,
    site: dict[str, np.ndarray],
    lam_off: np.ndarray,
    k: np.ndarray,
    n_cells: int,
    *,
    sweeps: int = 200,
    burn_in: int = 100,
    thin: int = 2,
    width: float = 2.5,
    seed: int = 0,
) -> tuple[np.ndarray, SliceReport]:
    r"""Two chains of coloured univariate slice sampling of the field (module docstring).

    Args:
        edge_index: ``[2, E]`` edges j -> i.
        weight: ``[E]`` edge weights.
        site: ``a``, ``b``, ``c`` ``[G]`` of the site potentials (:func:`site_parameters`).
        lam_off: ``[G, G]`` symmetric :math:`\Lambda_\circ`, zero diagonal.
        k: ``[G, G]`` symmetric intercellular coupling :math:`K`.
        n_cells: ``N``.
        sweeps: Sweeps after burn-in (default 200).
        burn_in: Sweeps first (default 100); nothing adapts, they are discarded.
        thin: Sweeps between the states traced after burn-in for the diagnostics (default 2;
            the tissue is the final state whatever ``thin`` is).
        width: Slice width :math:`w_g` in units of :math:`1/\sqrt{b_g + c_g}` (default 2.5).
        seed: Seed of the starts and the slices.

    Returns:
        ``(y, report)``: final states ``[N, 2, G]`` and a :class:`SliceReport`.
    """
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    g = lam_off.shape[0]
    if not (np.allclose(lam_off, lam_off.T) and np.allclose(k, k.T)):
        raise GraphDataError("lam_off, k: expected symmetric matrices")
    if np.any(np.diag(lam_off) != 0):
        raise GraphDataError("lam_off: expected a zero diagonal (the site potential holds it)")
    if thin < 1 or width <= 0:
        raise GraphDataError(f"thin, width: expected >= 1 and > 0, got {thin}, {width}")
    a, b, c = (np.asarray(site[key], dtype=np.float64) for key in ("a", "b", "c"))
    if (a <= 0).any() or (b <= 0).any() or (c <= 0).any():
        raise GraphDataError("site: expected a, b, c > 0 (c > 0 makes p normalisable)")
    scale = 1.0 / np.sqrt(b + c)  # [G] about a lone gene's sd
    s = symmetric_adjacency(edge_index, weight, n_cells)
    cell_colours = greedy_colouring(edge_index, n_cells)
    rows = [s[idx] for idx in cell_colours]
    gene_graph = np.stack(np.nonzero(np.triu(lam_off != 0, 1)))  # [2, pairs]
    gene_colours = greedy_colouring(gene_graph, g)
    y = np.zeros((n_cells, 2, g))
    y[:, 1] = 3.0 * scale * rng.standard_normal((n_cells, g))
    trace = []
    evaluations = 0
    for sweep in range(burn_in + sweeps):
        for idx, s_rows in zip(cell_colours, rows):
            msg = (s_rows @ y.reshape(n_cells, 2 * g)).reshape(len(idx), 2, g)  # [m, 2, G] n_i
            drive = msg @ k  # [m, 2, G] K n_i; fixed while this colour moves (no inner edges)
            yc = y[idx]  # [m, 2, G]
            for genes in gene_colours:
                slope = a[genes] + drive[..., genes] - yc @ lam_off[:, genes]  # [m, 2, |genes|]
                yc[..., genes], used = slice_step(
                    yc[..., genes], slope, b[genes], c[genes], width * scale[genes], rng
                )
                if sweep >= burn_in:
                    evaluations += used
            y[idx] = yc
        if sweep >= burn_in and (sweep - burn_in + 1) % thin == 0:
            trace.append(np.concatenate([y.mean(0), (y**2).mean(0)], -1))  # [2, 2G]
    if not np.isfinite(y).all():
        raise GraphDataError("slice_sample: non-finite state")
    max_z, null_median = chain_agreement(y)
    traced = np.asarray(trace).reshape(-1, 2, 2 * g)  # [T, chains, 2G]
    report = SliceReport(
        evaluations_per_update=evaluations / max(1, sweeps * n_cells * 2 * g),
        r_hat_max=_r_hat(traced),
        autocorrelation_sweeps=thin * _autocorrelation_time(traced),
        thin=thin,
        n_gene_colours=len(gene_colours),
        x2_max_z=max_z,
        x2_z_null_median=null_median,
        n_colours=len(cell_colours),
        sweeps=burn_in + sweeps,
        seconds=time.perf_counter() - start,
    )
    return y, report


def sequential_multinomial(
    totals: np.ndarray, probs: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    r"""Multinomial counts of the first G categories, :math:`\mathrm{Mult}(T_i, (p_{i1}, \dots,
    p_{iG}, 1 - \sum_g p_{ig}))`, as sequential binomials (exact; module docstring).

    ``totals`` int ``[N]``, ``probs`` ``[N, G]`` with row sums <= 1; returns int64 ``[N, G]``.
    """
    n, g = probs.shape
    left = np.asarray(totals, dtype=np.int64).copy()  # [N] trials not yet assigned
    mass = np.ones(n)  # [N] probability not yet assigned, 1 - sum_{h<g} p_h
    counts = np.zeros((n, g), dtype=np.int64)
    for gene in range(g):
        p = np.clip(probs[:, gene] / np.maximum(mass, 1e-300), 0.0, 1.0)
        counts[:, gene] = rng.binomial(left, p)
        left -= counts[:, gene]
        mass -= probs[:, gene]
    return counts


def panel_counts(
    y: np.ndarray,
    rng: np.random.Generator,
    *,
    n_background: int = 2000,
    median_total: float = 5000.0,
    total_sigma: float = 0.5,
    mean_range: tuple[float, float] = (0.2, 20.0),
    background_sd: float = 1.5,
    background_noise: float = 0.5,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    r"""Panel counts of a multinomial over the panel and the background (module docstring).

    Returns ``(counts int64 [N, G], params)``, ``params``: ``total_counts`` ``[N]`` (UMI totals
    :math:`T_i`, panel and background), ``gene_mean`` ``[G]`` (:math:`m_g`), ``baseline``
    ``[G]`` (:math:`\alpha_g`), ``background_level`` ``[B]`` (:math:`\beta_j`),
    ``background_mass`` ``[N]`` (:math:`\sum_j e^{\beta_j + \varepsilon_{ij}}`) and
    ``panel_probability`` ``[N, G]`` (:math:`p_{ig}`).
    """
    n, g = y.shape
    lo, hi = np.log(mean_range)
    strata = (rng.permutation(g) + rng.random(g)) / g  # one draw per g-quantile: a steady spread
    gene_mean = np.exp(lo + strata * (hi - lo))  # [G] m_g
    level = background_sd * rng.standard_normal(n_background)  # [B] beta_j
    background = np.empty(n)  # [N] sum_j exp(beta_j + eps_ij)
    for first in range(0, n, 256):  # blocks: [256, B] at a time
        block = slice(first, min(n, first + 256))
        noise = background_noise * rng.standard_normal((block.stop - block.start, n_background))
        background[block] = np.exp(level[None] + noise).sum(1)
    totals = np.maximum(1, np.rint(median_total * np.exp(total_sigma * rng.standard_normal(n))))
    totals = totals.astype(np.int64)  # [N] T_i
    expected_total = median_total * math.exp(total_sigma**2 / 2)
    # alpha_g so that E[mean_i c_ig] = m_g; alpha enters the denominator too, so iterate (the
    # panel holds ~1 % of the mass: each step shrinks the error ~100-fold)
    alpha = np.log(gene_mean / expected_total) + np.log(background.mean())
    for _ in range(6):
        rate = np.exp(alpha[None] + y)  # [N, G]
        probs = rate / (rate.sum(1, keepdims=True) + background[:, None])
        alpha += np.log(gene_mean / (expected_total * probs.mean(0)))
    rate = np.exp(alpha[None] + y)
    probs = rate / (rate.sum(1, keepdims=True) + background[:, None])  # [N, G] p_ig

    # a spot without panel counts is drawn again with its own total: draw_nonempty over the
    # spots' indices (a column), so each redraw takes the spot's total and probabilities
    spots = np.arange(n)[:, None]  # [N, 1]
    counts = draw_nonempty(
        lambda s: sequential_multinomial(totals[s[:, 0]], probs[s[:, 0]], rng), spots
    )
    params = {
        "total_counts": totals,
        "background_mass": background,
        "gene_mean": gene_mean,
        "baseline": alpha,
        "background_level": level,
        "panel_probability": probs,
    }
    return counts, params


@dataclass(kw_only=True)
class PanelTissue(LatentTissue):
    """A tissue of :func:`simulate` (:class:`benchmarks.tissue_gibbs_pln.LatentTissue`) with the
    energy it was sampled from, its roles and its outline."""

    field: dict[str, np.ndarray]  # a, b, c, floor [G]; lam_off, K [G, G] as given to the sampler
    roles: dict[str, np.ndarray]  # hubs, ligands, receptors
    outline: dict[str, np.ndarray]  # hole_centres, hole_radii, lobe centres, radii
    boundary: np.ndarray  # [N] bool

    def to_anndata(self) -> Any:
        """AnnData (:func:`benchmarks.tissue_metropolis.tissue_anndata`) with
        ``obs['total_counts']`` (UMI totals, background included) and ``obs['boundary']``."""
        obs = {"total_counts": self.count_params["total_counts"], "boundary": self.boundary}
        return tissue_anndata(self, "tissue_panel", obs)


def simulate(
    n_cells: int,
    n_genes: int,
    *,
    seed: int = 0,
    k: int = 6,
    sweeps: int = 200,
    burn_in: int = 100,
    thin: int = 2,
    barrier: float = 0.15,
    intra_norm: float = 0.6,
    margin: float = 0.9,
    n_background: int = 2000,
    median_total: float = 5000.0,
    total_sigma: float = 0.5,
) -> PanelTissue:
    """Outline, graph, truth, slice-sampler states and panel counts of one tissue (module doc).

    Every draw comes from ``numpy.random.default_rng(seed)`` and its spawned streams, so a seed
    reproduces the tissue.
    """
    if n_cells <= k:
        raise GraphDataError(f"n_cells: expected more than k = {k} cells, got {n_cells}")
    if not (0 < intra_norm < 1 and 0 < margin < 1):
        raise GraphDataError(
            f"intra_norm, margin: expected in (0, 1) (log p strictly concave), got {intra_norm}, "
            f"{margin}"
        )
    streams = np.random.default_rng(seed).spawn(5)
    coords, outline = section_positions(n_cells, streams[0])
    boundary = boundary_spots(coords)
    edge_index = knn_edges(coords, k)
    weight = gcn_weights(edge_index, n_cells)
    w0, k0, roles = draw_couplings(n_genes, streams[1])
    site = site_parameters(n_genes, streams[2], barrier=barrier)
    half = 1.0 / np.sqrt(site["floor"])  # D^{-1/2}
    lam_off = -2.0 * w0
    lam_off *= intra_norm / np.linalg.norm(half[:, None] * lam_off * half[None], 2)
    # a fixed start vector: ARPACK's random one moves kappa in the last bits from run to run
    kappa, rho_s = coupling_scale(
        edge_index, weight, n_cells, np.diag(site["floor"]) + lam_off, k0, margin,
        v0=np.ones(n_cells),
    )  # fmt: skip
    k_mat = kappa * k0
    states, report = slice_sample(
        edge_index, weight, site, lam_off, k_mat, n_cells, sweeps=sweeps, burn_in=burn_in,
        thin=thin, seed=int(streams[3].integers(2**62)),
    )  # fmt: skip
    latent = states[:, 0]
    counts, count_params = panel_counts(
        latent, streams[4], n_background=n_background, median_total=median_total,
        total_sigma=total_sigma,
    )  # fmt: skip
    params = {
        "n_cells": n_cells,
        "n_genes": n_genes,
        "seed": seed,
        "k": k,
        "sweeps": sweeps,
        "burn_in": burn_in,
        "thin": thin,
        "barrier": barrier,
        "intra_norm": intra_norm,
        "margin": margin,
        "kappa": kappa,
        "rho_adjacency": rho_s,
        "n_background": n_background,
        "median_total": median_total,
        "total_sigma": total_sigma,
        "boundary_fraction": float(boundary.mean()),
    }
    return PanelTissue(
        coords=coords,
        edge_index=edge_index,
        edge_weight=weight,
        W_intra=-0.5 * lam_off,
        W_inter=k_mat,
        x=latent / np.linalg.norm(latent, axis=1, keepdims=True),
        latent=latent,
        counts=counts,
        log1p=_log1p_normalised(counts),
        count_params=count_params,
        report=report,
        params=params,
        field={**site, "lam_off": lam_off, "K": k_mat},
        roles=roles,
        outline=outline,
        boundary=boundary,
    )
