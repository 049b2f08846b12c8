r"""A fourth tissue simulator: bistable gene switches, MALA-within-Gibbs, negative-binomial counts.

The third held-out world of the Celcomen benchmark (``bench_celcomen_counts --world
bistable_nb``, issue 19, session 19), written after ``gibbs_pln`` had been looked at, to keep one
world nobody has tuned against. Its mechanism differs from all three other simulators:
:mod:`spatial.simulate` (Langevin on the sphere, :math:`\mathrm{Poisson}(d(1 + x))`),
:mod:`benchmarks.tissue_metropolis` (Metropolis on the sphere, negative binomial with one
dispersion and a log link) and :mod:`benchmarks.tissue_gibbs_pln` (exact Gibbs on a Gaussian field,
Poisson log-normal counts with dropout). Here each gene is a **two-state switch**: the latent field
is non-Gaussian (a quartic double well per gene, so a gene's latent level is bimodal), it is sampled
by **Metropolis-adjusted Langevin moves** per cell, cells sit in **clusters** of unequal density,
and counts are **negative binomial** with a dispersion per gene, a wide range of gene means (several
genes below one count per cell) and log-normal size factors. Neither ``spatial.simulate`` nor
``spatial.model`` is imported; the graph comes from
:func:`graphdata.spatial.knn_graph`, the colouring from :mod:`benchmarks.tissue_metropolis`.

**Tissue.** ``N`` cells in a square of side :math:`\sqrt N` from a Thomas cluster process:
:math:`\lceil N / 100 \rceil` uniform centres; each cell joins a uniformly chosen centre with
probability ``clustered`` (0.7, offset :math:`\mathcal N(0, r^2 I_2)`, :math:`r` = 1.5 spacing
units, positions wrapped into the square) or is uniform (the background, density 0.3 against
about 5 at a cluster's centre). Local density varies far more than on the uniform tissues of the
other worlds: the ratio of the 90th to the 10th percentile of the distance to the 6th neighbour
is 4.3 at 2,000 cells (1.7 on a uniform square). Directed k-NN graph (k = 6), edges :math:`j \to
i`, GCN weights :math:`w_{ij} = 1/\sqrt{d_i d_j}` (``A[i, j] = w_ij``): the graph and weighting that
Celcomen's default fits with (``spatial_neighbors_knn`` rebuilds it from ``obsm['spatial']``).

**Latent field.** :math:`Y \in \mathbb R^{N \times G}`, rows :math:`y_i`, with density

.. math::
    \log p(Y) = \sum_i \Big[-\tfrac12 y_i^\top \Lambda\, y_i
        + \sum_g \big(\tfrac{\alpha_g}{2} y_{ig}^2 - \tfrac{\beta_g}{4} y_{ig}^4\big)\Big]
        + \sum_i \sum_{j \to i} w_{ij}\, y_i^\top K\, y_j + \mathrm{const}.

:math:`\Lambda = \sigma^{-2}(I - R)` (:math:`\sigma` = 0.6); :math:`R` symmetric with zero
diagonal and a **module** structure: genes fall into programs of ``module_size`` = 5 genes
(after a random permutation); a pair inside a program is coupled with probability 0.5 and is
positive (co-regulation), a pair across programs with probability :math:`1/G` and is negative
with probability 0.8 (repression); magnitudes :math:`U(0.5, 1)`, scaled to :math:`\lVert
R\rVert_2 = 0.6`. The **switch term** has :math:`\alpha_g = (1 + \gamma)\Lambda_{gg}` and
:math:`\beta_g = \gamma \Lambda_{gg} / v^2` (:math:`\gamma` = ``switch_strength`` = 1,
:math:`v` = ``switch_level`` :math:`\times\,\sigma` = :math:`1.25\sigma`): a lone gene without
partners has the Ginzburg-Landau double well :math:`-\tfrac{\gamma\Lambda_{gg}}{4v^2}(y^2 -
v^2)^2`, wells at :math:`\pm v` ("off" / "on") and a barrier of :math:`\gamma (v/\sigma)^2/4`
= 0.39 nats. The quartic confines every entry, so :math:`p` is normalisable for any coupling;
the scale below keeps the field disordered (same-gene neighbour correlation about .1, kurtosis
of a gene's latent level about 1.7 against 3 for a Gaussian). The intercellular coupling
:math:`K = \kappa K_0`: :math:`K_0` symmetric, each off-diagonal pair coupled with probability
:math:`1.5/G` (at least one pair), positive with probability 0.6, magnitudes :math:`U(0.5, 1)`,
diagonal 0.5; :math:`\kappa` makes :math:`\rho(A + A^\top)\,\rho(\Lambda^{-1/2} K_0
\Lambda^{-1/2})\,\kappa = ` ``margin`` (0.7), the scale of ``tissue_gibbs_pln`` (where it makes
the Gaussian field's precision positive definite).

**Truth in Celcomen's sign convention.** Celcomen's energy is :math:`E(X) = \sum_i x_i^\top
W_{\mathrm{intra}} x_i + \sum_i \sum_{j \to i} w_{ij} x_i^\top W_{\mathrm{inter}} x_j` with
:math:`p \propto e^{E}`. Term by term against :math:`\log p(Y)`: the within-cell quadratic form
gives :math:`W_{\mathrm{intra}} = -\Lambda/2`; the switch term is a sum of functions of single
entries :math:`y_{ig}` (its quadratic part is diagonal, its quartic part not quadratic), so it
has no off-diagonal part; the pair term is the same bilinear form:

.. math::
    W_{\mathrm{intra}} = -\tfrac12 \Lambda \ (\text{off-diagonal: } R/(2\sigma^2)), \qquad
    W_{\mathrm{inter}} = K .

``W_intra`` is stored with a zero diagonal (the sphere cannot identify its trace, and the
switch term changes only the diagonal's effective value). The map is exact for the off-diagonal
entries of the latent field's energy; the counts pass through gene means, size factors, a log
link and negative-binomial noise, and Celcomen fits rows on the sphere, so **signs, support and
Pearson** of the off-diagonals compare, and the benchmark's scale ``ratio`` is reported without
a claim that the latent energy fixes it.

**Sampler** (:func:`mala_sample`). Cells of one colour of the undirected graph are
conditionally independent given the rest; cell :math:`c`'s conditional log density is

.. math::
    \ell_c(y) = -\tfrac12 y^\top \Lambda y + \sum_g \big(\tfrac{\alpha_g}{2} y_g^2
        - \tfrac{\beta_g}{4} y_g^4\big) + y^\top K n_c,
    \qquad n_c = \sum_{j \to c} w_{cj}\, y_j + \sum_{c \to i} w_{ic}\, y_i ,

and each cell of the colour makes one preconditioned MALA move (Roberts and Tweedie 1996,
`doi:10.2307/3318418 <https://doi.org/10.2307/3318418>`_) with preconditioner
:math:`M = \Lambda^{-1}` and a truncated drift (MALTA, Atchadé 2006,
`doi:10.1007/s11009-006-8550-0 <https://doi.org/10.1007/s11009-006-8550-0>`_):
:math:`y' = y + D(y) + \epsilon L^{-\top}\xi`, :math:`\Lambda = L L^\top`,
:math:`D(y) = d / \max(1, \lVert d\rVert_\Lambda / (2\sqrt G))`, :math:`d =
\tfrac{\epsilon^2}{2} M \nabla \ell_c(y)` (the cubic force would throw a far start further out),
accepted with probability :math:`\min\{1, e^{\ell_c(y') - \ell_c(y)} q(y \mid y') / q(y' \mid
y)\}`, :math:`\log q(y' \mid y) = -\lVert L^\top(y' - y - D(y)) \rVert^2 / (2\epsilon^2)`.
Every move leaves the conditional, hence :math:`p`, invariant (Metropolis-within-Gibbs).
:math:`\epsilon` is adapted towards acceptance 0.574 during ``burn_in`` only and fixed after. Two
chains (from 0 and from :math:`3\sigma` per entry); the diagnostic is the largest :math:`|z|` over
gene pairs of the difference of :math:`\overline{y_g y_h}` between the chains' final states, next to
its null median. The tissue is the final state of chain 0.

**Counts** (:func:`counts_from_field`): gene means :math:`\log\mu_g \sim U(\log 0.2, \log 20)`
(the rate of gene g at :math:`y = 0` and size factor 1; :math:`P(\mu_g < 1) = .35`; on two
2,000-cell tissues 30% and 25% of the genes average below one count per cell); size factors
:math:`s_i = e^{0.5 \varepsilon_i}`, :math:`\varepsilon_i \sim \mathcal N(0, 1)` (log-normal, sd
0.5 on the log scale); dispersions :math:`\log\phi_g \sim U(\log 0.05, \log 1)`;

.. math::
    r_{ig} = s_i\, \mu_g\, e^{y_{ig}}, \qquad
    c_{ig} \sim \mathrm{NB}(\text{mean } r_{ig},\ \mathrm{Var} = r_{ig} + \phi_g r_{ig}^2),

drawn as :math:`\mathrm{Poisson}(\mathrm{Gamma}(1/\phi_g,\ \phi_g r_{ig}))`. A cell with all
counts zero is redrawn (``filter_cells(min_counts=1)``). ``log1p`` is scanpy's
``normalize_total`` then ``log1p``; ``signed`` holds the latent rows :math:`y_i / \lVert
y_i\rVert` (the coordinates an oracle would fit).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

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
    "clustered_positions",
    "draw_couplings",
    "mala_sample",
    "counts_from_field",
    "BistableTissue",
    "simulate",
]


def clustered_positions(
    n_cells: int,
    rng: np.random.Generator,
    *,
    clustered: float = 0.7,
    cells_per_cluster: int = 100,
    radius: float = 1.5,
) -> np.ndarray:
    """Thomas-process positions ``[N, 2]`` in a square of side sqrt(N) (module docstring)."""
    side = math.sqrt(n_cells)
    n_clusters = max(1, math.ceil(n_cells / cells_per_cluster))
    centres = rng.random((n_clusters, 2)) * side
    member = rng.random(n_cells) < clustered
    which = rng.integers(n_clusters, size=n_cells)
    around = centres[which] + radius * rng.standard_normal((n_cells, 2))
    uniform = rng.random((n_cells, 2)) * side
    return np.where(member[:, None], np.mod(around, side), uniform)


def draw_couplings(
    n_genes: int,
    rng: np.random.Generator,
    *,
    sigma: float = 0.6,
    intra_norm: float = 0.6,
    module_size: int = 5,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Intracellular precision :math:`\Lambda` (gene programs) and unscaled :math:`K_0`.

    Returns ``(Lambda, K0)`` float64 ``[G, G]``, symmetric; :math:`\Lambda \succ 0`.
    """
    g = n_genes
    if g < 4:
        raise GraphDataError(f"n_genes: expected >= 4, got {g}")
    upper = np.triu(np.ones((g, g), dtype=bool), 1)
    program = np.empty(g, dtype=np.int64)
    program[rng.permutation(g)] = np.arange(g) // module_size
    same = program[:, None] == program[None, :]
    r = np.zeros((g, g))
    while not (r != 0).any():
        within = same & (rng.random((g, g)) < 0.5)
        across = ~same & (rng.random((g, g)) < 1.0 / g)
        sign = np.where(within, 1.0, np.where(rng.random((g, g)) < 0.8, -1.0, 1.0))
        r = np.where(upper & (within | across), sign * rng.uniform(0.5, 1.0, (g, g)), 0.0)
    r = r + r.T
    r *= intra_norm / np.linalg.norm(r, 2)
    lam = (np.eye(g) - r) / sigma**2
    support = upper & (rng.random((g, g)) < 1.5 / g)
    if not support.any():
        a, b = sorted(rng.choice(g, 2, replace=False))
        support[a, b] = True
    sign = np.where(rng.random((g, g)) < 0.6, 1.0, -1.0)
    k0 = np.where(support, sign * rng.uniform(0.5, 1.0, (g, g)), 0.0)
    k0 = k0 + k0.T + 0.5 * np.eye(g)
    return lam, k0


@dataclass
class MalaReport(GibbsReport):
    """Diagnostics of :func:`mala_sample`: those of a Gibbs run, and the MALA step's."""

    acceptance: float  # mean MALA acceptance after burn-in (both chains)
    step_size: float  # epsilon after adaptation


def mala_sample(
    edge_index: np.ndarray,
    weight: np.ndarray,
    lam: np.ndarray,
    k: np.ndarray,
    n_cells: int,
    *,
    switch_strength: float = 1.0,
    switch_level: float = 0.75,
    sweeps: int = 200,
    burn_in: int = 100,
    seed: int = 0,
    target_acceptance: float = 0.574,
) -> tuple[np.ndarray, MalaReport]:
    r"""Two chains of chromatic MALA-within-Gibbs on the switch field (module docstring).

    Args:
        edge_index: ``[2, E]`` edges j -> i.
        weight: ``[E]`` edge weights.
        lam: ``[G, G]`` intracellular precision :math:`\Lambda` (positive definite).
        k: ``[G, G]`` symmetric intercellular coupling :math:`K`.
        n_cells: ``N``.
        switch_strength: :math:`\gamma` of the switch term (default 1; 0 gives the Gaussian
            field).
        switch_level: :math:`v`, a lone gene's wells, in the units of :math:`y` (default 0.75).
        sweeps: Sweeps after burn-in, with a fixed step (default 200).
        burn_in: Sweeps first, adapting :math:`\epsilon` (default 100).
        seed: Seed of the starts and the noise.
        target_acceptance: Acceptance the burn-in adapts towards (default 0.574, the optimum
            for MALA in high dimension).

    Returns:
        ``(y, report)``: final states ``[N, 2, G]`` and a :class:`MalaReport`.
    """
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    g = lam.shape[0]
    if not (np.allclose(lam, lam.T) and np.allclose(k, k.T)):
        raise GraphDataError("lam, k: expected symmetric matrices")
    if switch_level <= 0 or switch_strength < 0:
        raise GraphDataError(
            f"switch_level, switch_strength: expected > 0 and >= 0, got {switch_level}, "
            f"{switch_strength}"
        )
    chol = np.linalg.cholesky(lam)  # raises if Lambda is not positive definite
    precond = np.linalg.inv(lam)  # [G, G] M = Lambda^{-1}
    noise_map = np.linalg.inv(chol).T  # L^{-T}: cov of L^{-T} xi is Lambda^{-1}
    s = symmetric_adjacency(edge_index, weight, n_cells)
    colours = greedy_colouring(edge_index, n_cells)
    rows = [s[idx] for idx in colours]
    sigma = float(np.sqrt(np.diag(precond).mean()))
    alpha = (1.0 + switch_strength) * np.diag(lam)  # [G] alpha_g = (1 + gamma) Lambda_gg
    beta = switch_strength * np.diag(lam) / switch_level**2  # [G] beta_g = gamma Lambda_gg / v^2
    cap = 2.0 * math.sqrt(g)

    def log_target(y: np.ndarray, h: np.ndarray) -> np.ndarray:  # [m, 2, G] -> [m, 2]
        return -0.5 * np.einsum("...g,gh,...h->...", y, lam, y) + (
            0.5 * alpha * y**2 - 0.25 * beta * y**4 + y * h
        ).sum(-1)

    def mean_move(y: np.ndarray, h: np.ndarray, eps: float) -> np.ndarray:
        grad = -y @ lam + alpha * y - beta * y**3 + h  # [m, 2, G] (Lambda symmetric)
        drift = 0.5 * eps**2 * grad @ precond  # [m, 2, G]
        # MALTA: the cubic force would throw a far start further out; truncating the drift at
        # Lambda-norm `cap` keeps moves local, and log_q uses the same map, so it stays exact
        size = np.sqrt(np.einsum("...g,gh,...h->...", drift, lam, drift))[..., None]
        return y + drift / np.maximum(1.0, size / cap)

    def log_q(to: np.ndarray, frm: np.ndarray, h: np.ndarray, eps: float) -> np.ndarray:
        d = to - mean_move(frm, h, eps)
        return -0.5 * np.einsum("...g,gh,...h->...", d, lam, d) / eps**2

    y = np.zeros((n_cells, 2, g))
    y[:, 1] = 3.0 * sigma * rng.standard_normal((n_cells, g))
    log_eps = math.log(1.0)
    accepted = proposed = 0
    for sweep in range(burn_in + sweeps):
        eps = math.exp(log_eps)
        sweep_acc = 0
        for idx, s_rows in zip(colours, rows):
            msg = (s_rows @ y.reshape(n_cells, 2 * g)).reshape(len(idx), 2, g)  # [m, 2, G] n_c
            h = msg @ k  # [m, 2, G] K n_c (K symmetric)
            old = y[idx]
            new = mean_move(old, h, eps) + eps * rng.standard_normal(old.shape) @ noise_map.T
            log_alpha = (
                log_target(new, h) - log_target(old, h) + log_q(old, new, h, eps)
                - log_q(new, old, h, eps)
            )  # fmt: skip
            take = np.log(rng.random(log_alpha.shape)) < log_alpha  # [m, 2]
            y[idx] = np.where(take[..., None], new, old)
            sweep_acc += int(take.sum())
        rate = sweep_acc / (2 * n_cells)
        if sweep < burn_in:  # Robbins-Monro on log epsilon; the step is fixed afterwards
            log_eps += (rate - target_acceptance) / math.sqrt(sweep + 1.0)
        else:
            accepted += sweep_acc
            proposed += 2 * n_cells
    if not np.isfinite(y).all():
        raise GraphDataError("mala_sample: non-finite state")
    max_z, null_median = chain_agreement(y)
    report = MalaReport(
        acceptance=accepted / proposed if proposed else float("nan"),
        step_size=math.exp(log_eps),
        x2_max_z=max_z,
        x2_z_null_median=null_median,
        n_colours=len(colours),
        sweeps=burn_in + sweeps,
        seconds=time.perf_counter() - start,
    )
    return y, report


def counts_from_field(
    y: np.ndarray,
    rng: np.random.Generator,
    *,
    mean_range: tuple[float, float] = (0.2, 20.0),
    size_sigma: float = 0.5,
    dispersion_range: tuple[float, float] = (0.05, 1.0),
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    r"""Negative-binomial counts with gene means, size factors and gene dispersions (module doc).

    Returns ``(counts int64 [N, G], {"size_factor", "gene_mean", "dispersion"})``.
    """
    n, g = y.shape
    gene_mean = np.exp(rng.uniform(*np.log(mean_range), g))  # [G] mu_g
    dispersion = np.exp(rng.uniform(*np.log(dispersion_range), g))  # [G] phi_g
    size = np.exp(size_sigma * rng.standard_normal(n))  # [N] s_i
    rate = size[:, None] * gene_mean[None] * np.exp(y)  # [N, G] r_ig

    def draw(r: np.ndarray) -> np.ndarray:
        # NB as a gamma-Poisson mixture: Gamma(shape 1/phi, scale phi r) has mean r, var phi r^2
        return rng.poisson(rng.gamma(1.0 / dispersion, dispersion * r))

    counts = draw_nonempty(draw, rate)
    params = {"size_factor": size, "gene_mean": gene_mean, "dispersion": dispersion}
    return counts.astype(np.int64), params


@dataclass(kw_only=True)
class BistableTissue(LatentTissue):
    """A tissue of :func:`simulate` (:class:`benchmarks.tissue_gibbs_pln.LatentTissue`)."""

    def to_anndata(self) -> Any:
        """AnnData (:func:`benchmarks.tissue_metropolis.tissue_anndata`) with
        ``obs['size_factor']``."""
        obs = {"size_factor": self.count_params["size_factor"]}
        return tissue_anndata(self, "tissue_bistable_nb", obs)


def simulate(
    n_cells: int,
    n_genes: int,
    *,
    seed: int = 0,
    k: int = 6,
    sweeps: int = 200,
    burn_in: int = 100,
    sigma: float = 0.6,
    margin: float = 0.7,
    switch_strength: float = 1.0,
    switch_level: float = 1.25,
    clustered: float = 0.7,
    size_sigma: float = 0.5,
) -> BistableTissue:
    """Positions, graph, truth, MALA states and counts of one tissue (module docstring).

    ``switch_level`` is in units of ``sigma``. Every draw comes from
    ``numpy.random.default_rng(seed)`` and its spawned streams, so a seed reproduces the tissue.
    """
    if n_cells <= k:
        raise GraphDataError(f"n_cells: expected more than k = {k} cells, got {n_cells}")
    streams = np.random.default_rng(seed).spawn(4)
    coords = clustered_positions(n_cells, streams[0], clustered=clustered)
    edge_index = knn_edges(coords, k)
    weight = gcn_weights(edge_index, n_cells)
    lam, k0 = draw_couplings(n_genes, streams[1], sigma=sigma)
    # a fixed start vector: ARPACK's random one moves kappa in the last bits from run to run
    kappa, rho_s = coupling_scale(edge_index, weight, n_cells, lam, k0, margin, v0=np.ones(n_cells))
    k_mat = kappa * k0
    states, report = mala_sample(
        edge_index,
        weight,
        lam,
        k_mat,
        n_cells,
        switch_strength=switch_strength,
        switch_level=switch_level * sigma,
        sweeps=sweeps,
        burn_in=burn_in,
        seed=int(streams[2].integers(2**62)),
    )
    latent = states[:, 0]
    counts, count_params = counts_from_field(latent, streams[3], size_sigma=size_sigma)
    w_intra = -0.5 * lam
    np.fill_diagonal(w_intra, 0.0)
    params = {
        "n_cells": n_cells,
        "n_genes": n_genes,
        "seed": seed,
        "k": k,
        "sweeps": sweeps,
        "burn_in": burn_in,
        "sigma": sigma,
        "margin": margin,
        "kappa": kappa,
        "rho_adjacency": rho_s,
        "switch_strength": switch_strength,
        "switch_level": switch_level,
        "clustered": clustered,
        "size_sigma": size_sigma,
    }
    return BistableTissue(
        coords=coords,
        edge_index=edge_index,
        edge_weight=weight,
        W_intra=w_intra,
        W_inter=k_mat,
        x=latent / np.linalg.norm(latent, axis=1, keepdims=True),
        latent=latent,
        counts=counts,
        log1p=_log1p_normalised(counts),
        count_params=count_params,
        report=report,
        params=params,
    )
