r"""A second tissue simulator, written independently of :mod:`spatial.simulate`: Metropolis.

The held-out world of the unseen-data Celcomen benchmark (``bench_celcomen_counts``, issue 19).
It shares nothing with the library's simulator or model code (neither ``spatial.simulate`` nor
``spatial.model`` is imported): the graph comes from :func:`graphdata.spatial.knn_graph`, the
rest is NumPy.

**Tissue.** ``N`` cells at uniform random positions in a square of side :math:`\sqrt N` (a
binomial point process, the Poisson process conditioned on ``N`` points) or on a hexagonal grid
jittered by :math:`\mathcal N(0, 0.15^2)` per coordinate; the directed k-NN graph (k = 6) has
the edges :math:`j \to i` for the k nearest neighbours :math:`j` of :math:`i`, weighted as GCN
(the reference's ``GCNConv``) by :math:`w_{ij} = 1/\sqrt{d_i d_j}`, :math:`d` the in-degree.

**Energy.** Each cell carries :math:`x_i \in S^{G-1}`; the tissue's density on
:math:`(S^{G-1})^N` is :math:`p(X) \propto e^{E(X)}` with the energy Celcomen assumes

.. math::
    E(X) = \sum_i x_i^\top W_{\mathrm{intra}} x_i
         + \sum_i \sum_{j \to i} w_{ij}\, x_i^\top W_{\mathrm{inter}} x_j .

Moving one cell :math:`c` from :math:`x_c` to :math:`x_c'` changes it by

.. math::
    \Delta E_c = x_c'^\top W_{\mathrm{intra}} x_c' - x_c^\top W_{\mathrm{intra}} x_c
        + (x_c' - x_c)^\top W_{\mathrm{inter}} n_c, \qquad
    n_c = \sum_{j \to c} w_{cj} x_j + \sum_{c \to i} w_{ic} x_i

(both matrices symmetric; :math:`n_c` sums the messages in and out of :math:`c`).

**Truth** (:func:`draw_couplings`), drawn differently from ``spatial.simulate.random_couplings``
(i.i.d. density 0.6, :math:`U(0.5, 1)` magnitudes): :math:`W_{\mathrm{intra}}` gives every gene
exactly :math:`2r` partners (a circulant graph with offsets :math:`1..r` on a random order of the
genes), random signs, magnitudes :math:`\Gamma(3, 1/3)`; :math:`W_{\mathrm{inter}}` is modular:
genes fall into modules of 5, pairs inside a module couple with probability 1/2 (positive with
probability 0.8), pairs across modules with probability :math:`2/G` (negative with probability
0.8), magnitudes :math:`\mathrm{LogNormal}(0, 0.35^2)`. Both have zero diagonal and are scaled to
spectral norms :math:`\rho_{\mathrm{intra}} G/2` and :math:`\rho_{\mathrm{inter}} G/2`
(defaults 1 and 1: a Bingham / vMF field is informative once its concentration is comparable
to :math:`G/2`). :math:`W_{\mathrm{inter}}` is then rescaled (``inter_margin``, default 0.8) to
80 % of the mean-field ordering point of :func:`ordering_criterion`,
:math:`2\,\rho(\chi^{1/2} W_{\mathrm{inter}} \chi^{1/2}) = 0.8`, where :math:`\chi` is the
second-moment matrix of a lone cell under :math:`W_{\mathrm{intra}}` and 2 the total weight of
a cell's messages in and out: at :math:`\rho_{\mathrm{inter}} = 1` the criterion is 1.1-1.5
(G = 10-100), and at G = 100 on :math:`10^4` cells two chains then never met (the tissue
orders). The two-chain diagnostic below checks that the chain mixes.

**Sampler** (:func:`metropolis_sample`). Random-walk Metropolis-Hastings on the sphere: propose
:math:`x_c' = (x_c + s\xi)/\lVert x_c + s\xi \rVert`, :math:`\xi \sim \mathcal N(0, I_G)`, whose
density depends on :math:`x_c^\top x_c'` only and so is symmetric; accept with probability
:math:`\min(1, e^{\Delta E_c})`. A greedy colouring of the undirected graph splits the cells into
independent sets (no edge between two cells of a set), whose conditionals are independent
given the rest: one sweep updates the colours in turn, all cells of a colour at once, with
``substeps`` proposals each (its :math:`n_c` stays fixed meanwhile). During burn-in
:math:`\log s` follows a Robbins-Monro rule towards 30 % acceptance, :math:`\log s
\mathrel{+}= \max(2 t^{-0.6}, 0.2)\,(\hat a_t - 0.3)` after sweep :math:`t` (capped at
:math:`s = 4`, where the proposal is nearly uniform on the sphere, so a diffuse target may
accept more); it is then frozen. Two or
more chains run side by side from different starts (uniform on the sphere; every cell at one
random point). The diagnostic: their per-cell energy traces, and the largest
:math:`|z|` over gene pairs of the difference of :math:`\overline{x_g x_h}` between chains 0 and
1 (standard errors from the spread over cells, treated as independent, so optimistic), next to
the median of that maximum when the chains agree. The tissue is the final state of chain 0.

**Counts** (:func:`counts_from_sphere`), not :math:`\mathrm{Poisson}(L(1 + x))`: negative
binomial with a log link on the coordinate in units of its RMS over genes,
:math:`z_{ig} = \sqrt G\, x_{ig}`,

.. math::
    \mu_{ig} = \ell_i \exp(a_g + b\, z_{ig}), \qquad
    c_{ig} \sim \mathrm{NB}(\text{mean } \mu_{ig},\ \mathrm{var}\ \mu_{ig} + \mu_{ig}^2/\theta),

with library sizes :math:`\ell_i = D \exp(\sigma_\ell \varepsilon_i)`,
:math:`\varepsilon_i \sim \mathcal N(0, 1)` (median :math:`D` counts per gene), per-gene
baselines :math:`a_g = \log \pi_g - \log \bar\pi`, :math:`\log \pi_g \sim \mathcal N(0, 1)`,
log fold change :math:`b` per RMS unit and dispersion :math:`\theta` (drawn as Gamma-Poisson).
A cell whose counts are all zero is redrawn (``filter_cells(min_counts=1)`` would drop it).
``log1p`` is scanpy's ``normalize_total`` (median total) then ``log1p`` on a copy.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch
from scipy.stats import norm

from graphdata.errors import GraphDataError
from graphdata.spatial import knn_graph

__all__ = [
    "tissue_positions",
    "knn_edges",
    "gcn_weights",
    "draw_couplings",
    "greedy_colouring",
    "metropolis_sample",
    "ordering_criterion",
    "counts_from_sphere",
    "MetropolisTissue",
    "simulate",
    "tissue_anndata",
]

LAYOUTS = ("random", "jittered_grid")


def tissue_positions(n_cells: int, layout: str, rng: np.random.Generator) -> np.ndarray:
    """Cell positions ``[N, 2]``: uniform in a square of side sqrt(N), or a jittered hex grid."""
    if layout not in LAYOUTS:
        raise GraphDataError(f"layout: expected one of {LAYOUTS}, got {layout!r}")
    if layout == "random":
        return rng.random((n_cells, 2)) * math.sqrt(n_cells)
    side = math.ceil(math.sqrt(n_cells))
    row, col = np.divmod(np.arange(n_cells), side)
    grid = np.stack([col + 0.5 * (row % 2), row * math.sqrt(3) / 2], axis=1)
    return grid + 0.15 * rng.standard_normal((n_cells, 2))


def knn_edges(coords: np.ndarray, k: int = 6) -> np.ndarray:
    """Directed k-NN edges ``[2, N k]`` (row 0 neighbour j, row 1 centre i), as spatial reads."""
    edge_index, _ = knn_graph(torch.from_numpy(np.asarray(coords, dtype=np.float64)), k)
    return edge_index.numpy()


def gcn_weights(edge_index: np.ndarray, n_cells: int) -> np.ndarray:
    r"""GCN weights :math:`w_{ij} = 1/\sqrt{d_i d_j}`, :math:`d` the in-degree (0 counts as 1)."""
    degree = np.bincount(edge_index[1], minlength=n_cells).astype(np.float64)
    degree[degree == 0] = 1.0
    return 1.0 / np.sqrt(degree[edge_index[1]] * degree[edge_index[0]])


def _scale(w: np.ndarray, spectral_norm: float) -> np.ndarray:
    return w * (spectral_norm / np.linalg.norm(w, 2))


def draw_couplings(
    n_genes: int,
    rng: np.random.Generator,
    *,
    partners: int = 4,
    module_size: int = 5,
    rho_intra: float = 1.0,
    rho_inter: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Sparse signed symmetric truths (zero diagonal), see the module docstring.

    Returns ``(W_intra, W_inter)`` float64 ``[G, G]``, spectral norms ``rho * G / 2``.
    """
    g = n_genes
    if g < 4 or partners < 2 or partners % 2 or partners >= g:
        raise GraphDataError(
            f"n_genes, partners: expected n_genes >= 4 and an even 2 <= partners < n_genes, got "
            f"n_genes={g}, partners={partners}"
        )
    # intra: circulant with offsets 1..r on a random gene order: exactly 2r partners per gene
    order = rng.permutation(g)
    intra = np.zeros((g, g))
    for offset in range(1, partners // 2 + 1):
        a, b = order, np.roll(order, -offset)
        values = rng.choice([-1.0, 1.0], g) * rng.gamma(3.0, 1.0 / 3.0, g)
        intra[a, b] = values
        intra[b, a] = values
    # inter: modules of module_size on a fresh order; in-module mostly positive, across negative
    module = np.empty(g, dtype=np.int64)
    module[rng.permutation(g)] = np.arange(g) // module_size
    same = module[:, None] == module[None, :]
    upper = np.triu(np.ones((g, g), dtype=bool), 1)
    support = np.zeros((g, g), dtype=bool)
    while not support.any():  # redraw an empty pattern (possible only for a handful of genes)
        support = upper & np.where(same, rng.random((g, g)) < 0.5, rng.random((g, g)) < 2.0 / g)
    positive = np.where(same, rng.random((g, g)) < 0.8, rng.random((g, g)) < 0.2)
    magnitude = rng.lognormal(0.0, 0.35, (g, g))
    inter = np.where(support, np.where(positive, 1.0, -1.0) * magnitude, 0.0)
    inter = inter + inter.T
    return _scale(intra, rho_intra * g / 2), _scale(inter, rho_inter * g / 2)


def greedy_colouring(edge_index: np.ndarray, n_cells: int) -> list[np.ndarray]:
    """Independent sets of the undirected graph (greedy, largest degree first)."""
    undirected = sp.coo_matrix(
        (np.ones(edge_index.shape[1]), (edge_index[1], edge_index[0])), shape=(n_cells, n_cells)
    )
    undirected = (undirected + undirected.T).tocsr()
    indptr, indices = undirected.indptr, undirected.indices
    colour = np.full(n_cells, -1, dtype=np.int64)
    for cell in np.argsort(-np.diff(indptr), kind="stable"):
        used = set(colour[indices[indptr[cell] : indptr[cell + 1]]].tolist())
        c = 0
        while c in used:
            c += 1
        colour[cell] = c
    return [np.flatnonzero(colour == c) for c in range(int(colour.max()) + 1)]


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def energy_per_cell(
    x: np.ndarray, neighbour: sp.csr_matrix, w_intra: np.ndarray, w_inter: np.ndarray
) -> np.ndarray:
    r"""E(X)/N of each chain, x ``[N, C, G]``: intra plus half of :math:`x_i^\top W n_i`."""
    n, c, g = x.shape
    msg = (neighbour @ x.reshape(n, c * g)).reshape(n, c, g)  # [N, C, G] n_i
    intra = ((x @ w_intra) * x).sum((0, 2), dtype=np.float64)
    inter = 0.5 * ((msg @ w_inter) * x).sum((0, 2), dtype=np.float64)  # edges counted twice
    return (intra + inter) / n


@dataclass
class SamplerReport:
    """Diagnostics of :func:`metropolis_sample` (acceptance, step size, chain agreement)."""

    step_size: float
    acceptance: float  # after burn-in, step frozen
    burn_in_acceptance: list[float]
    energy_trace: np.ndarray  # [sweeps + 1, C] E/N per chain
    x2_max_z: float  # max over (g, h) of |mean x_g x_h, chain 0 - chain 1| / its standard error
    energy_gap_z: float  # |mean E/N over the last half, chain 0 - chain 1| / its standard error
    x2_z_null_median: float  # median of max |z| over the G(G+1)/2 pairs if the chains agree
    n_colours: int
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary (the energy trace thinned to at most 50 points per chain)."""
        stride = max(1, len(self.energy_trace) // 50)
        return {
            "step_size": self.step_size,
            "acceptance": self.acceptance,
            "burn_in_acceptance_last": self.burn_in_acceptance[-1:],
            "x2_max_z": self.x2_max_z,
            "energy_gap_z": self.energy_gap_z,
            "x2_z_null_median": self.x2_z_null_median,
            "n_colours": self.n_colours,
            "seconds": self.seconds,
            "energy_trace": self.energy_trace[::stride].tolist(),
        }


def metropolis_sample(
    edge_index: np.ndarray,
    weight: np.ndarray,
    w_intra: np.ndarray,
    w_inter: np.ndarray,
    n_cells: int,
    *,
    sweeps: int = 600,
    burn_in: int = 300,
    chains: int = 2,
    substeps: int = 2,
    step_size: float = 0.3,
    target: float = 0.3,
    seed: int = 0,
    dtype: type = np.float64,
) -> tuple[np.ndarray, SamplerReport]:
    r"""Sample :math:`p(X) \propto e^{E(X)}` by coloured random-walk Metropolis on the sphere.

    Args:
        edge_index: ``[2, E]`` edges j -> i (row 0 source j, row 1 target i).
        weight: ``[E]`` edge weights :math:`w_{ij}`.
        w_intra: ``[G, G]`` symmetric.
        w_inter: ``[G, G]`` symmetric.
        n_cells: ``N``.
        sweeps: Sweeps after burn-in (default 600).
        burn_in: Sweeps with step-size adaptation (default 300), then the step is frozen.
        chains: Chains run side by side (default 2; >= 2 for the diagnostic): chain 0 starts
            uniform on the sphere, chain 1 with every cell at one random point, others uniform.
        substeps: Proposals per cell per visit (default 2).
        step_size: Initial proposal scale ``s`` (default 0.3).
        target: Acceptance the burn-in adapts to (default 0.3).
        seed: Seed of the starts, proposals and acceptances.
        dtype: Float type of the states and proposals (default float64; float32 halves the time
            at G = 100, and its rounding of :math:`\Delta E` is far below the acceptance noise).

    Returns:
        ``(x, report)``: states ``[N, C, G]`` after the last sweep and a :class:`SamplerReport`.
    """
    start_time = time.perf_counter()
    rng = np.random.default_rng(seed)
    g = w_intra.shape[0]
    if not (np.allclose(w_intra, w_intra.T) and np.allclose(w_inter, w_inter.T)):
        raise GraphDataError("w_intra, w_inter: expected symmetric matrices")
    src, dst = edge_index
    neighbour = sp.coo_matrix(
        (np.r_[weight, weight], (np.r_[dst, src], np.r_[src, dst])),
        shape=(n_cells, n_cells),
    ).tocsr()  # S = A + A^T, A[i, j] = w_ij: (S x)_c = n_c, messages in and out
    neighbour = neighbour.astype(dtype)
    w_intra, w_inter = w_intra.astype(dtype), w_inter.astype(dtype)
    colours = greedy_colouring(edge_index, n_cells)
    rows = [neighbour[idx] for idx in colours]
    x = _unit(rng.standard_normal((n_cells, chains, g))).astype(dtype)  # [N, C, G]
    if chains > 1:
        x[:, 1] = _unit(rng.standard_normal(g))
    log_s = math.log(step_size)
    trace = [energy_per_cell(x, neighbour, w_intra, w_inter)]
    burn_acc: list[float] = []
    sampled_acc: list[float] = []
    for sweep in range(burn_in + sweeps):
        s = math.exp(log_s)
        accepted = 0
        for idx, s_rows in zip(colours, rows):
            m = len(idx)
            field_inter = (s_rows @ x.reshape(n_cells, chains * g)).reshape(m, chains, g)
            field_inter = field_inter @ w_inter  # [m, C, G] W_inter n_c
            xc = x[idx]  # [m, C, G]
            quad = np.einsum("mcg,mcg->mc", xc @ w_intra, xc)
            for _ in range(substeps):
                prop = _unit(xc + dtype(s) * rng.standard_normal(xc.shape, dtype=dtype))
                quad_prop = np.einsum("mcg,mcg->mc", prop @ w_intra, prop)
                delta = quad_prop - quad + np.einsum("mcg,mcg->mc", prop - xc, field_inter)
                # log(1 - U), U ~ U[0, 1): a finite log-uniform; accept w.p. min(1, e^dE)
                accept = np.log1p(-rng.random(delta.shape, dtype=dtype)) < delta
                xc = np.where(accept[..., None], prop, xc)
                quad = np.where(accept, quad_prop, quad)
                accepted += int(accept.sum())
            x[idx] = xc
        rate = accepted / (n_cells * chains * substeps)
        if sweep < burn_in:  # Robbins-Monro on log s, frozen afterwards
            # gain floor 0.2: s keeps tracking while the state still concentrates
            log_s += (rate - target) * max(2.0 / (1.0 + sweep) ** 0.6, 0.2)
            log_s = min(log_s, math.log(4.0))  # beyond, the proposal is ~uniform on the sphere
            burn_acc.append(rate)
        else:
            sampled_acc.append(rate)
        trace.append(energy_per_cell(x, neighbour, w_intra, w_inter))
        if not np.isfinite(x).all():
            raise GraphDataError(f"metropolis_sample: non-finite state at sweep {sweep}")
    energy = np.asarray(trace)  # [1 + burn_in + sweeps, C]
    x2_z = energy_z = float("nan")
    if chains > 1:
        moments, variances = [], []
        for chain in (0, 1):
            xs = x[:, chain].astype(np.float64)  # [N, G]
            second = xs.T @ xs / n_cells  # [G, G] mean of x_g x_h over cells
            moments.append(second)
            variances.append(np.maximum((xs**2).T @ xs**2 / n_cells - second**2, 1e-300))
        se = np.sqrt((variances[0] + variances[1]) / n_cells)  # iid-cell standard error
        x2_z = float((np.abs(moments[0] - moments[1]) / se).max())
        half = energy[len(energy) - max(1, sweeps // 2) :, :2]  # [T, 2]
        spread = half.std(0, ddof=1) if len(half) > 1 else np.ones(2)
        energy_z = float(abs(half[:, 0].mean() - half[:, 1].mean()) / np.sqrt(np.sum(spread**2)))
    report = SamplerReport(
        step_size=math.exp(log_s),
        acceptance=float(np.mean(sampled_acc)) if sampled_acc else float("nan"),
        burn_in_acceptance=burn_acc,
        energy_trace=energy,
        x2_max_z=x2_z,
        energy_gap_z=energy_z,
        # P(max of M |N(0,1)| < q) = 1/2  <=>  P(|N(0,1)| > q) ~ ln 2 / M
        x2_z_null_median=float(norm.isf(math.log(2) / (g * (g + 1)))),
        n_colours=len(colours),
        seconds=time.perf_counter() - start_time,
    )
    return x, report


def ordering_criterion(
    w_intra: np.ndarray, w_inter: np.ndarray, *, n_cells: int = 2000, seed: int = 0
) -> float:
    r"""Mean-field ordering criterion :math:`2\,\rho(\chi^{1/2} W_{\mathrm{inter}} \chi^{1/2})`.

    :math:`\chi = \mathbb E[x x^\top]` of one isolated cell, :math:`p(x) \propto
    e^{x^\top W_{\mathrm{intra}} x}`, estimated by :func:`metropolis_sample` on ``n_cells`` cells
    without edges; :math:`\rho` the spectral radius; 2 the total weight of a cell's messages in
    and out. A disordered tissue is linearly unstable (mean field) once the criterion exceeds 1.
    """
    g = w_intra.shape[0]
    none = np.zeros((2, 0), dtype=np.int64)
    x, _ = metropolis_sample(
        none,
        np.zeros(0),
        w_intra,
        np.zeros((g, g)),
        n_cells,
        sweeps=100,
        burn_in=150,
        chains=1,
        seed=seed,
        dtype=np.float32,
    )
    xs = x[:, 0].astype(np.float64)  # [n, G]
    value, vector = np.linalg.eigh(xs.T @ xs / n_cells)  # chi
    half = (vector * np.sqrt(np.clip(value, 0.0, None))) @ vector.T  # chi^(1/2)
    return float(2.0 * np.abs(np.linalg.eigvalsh(half @ w_inter @ half)).max())


def counts_from_sphere(
    x: np.ndarray,
    rng: np.random.Generator,
    *,
    depth: float = 20.0,
    library_sigma: float = 0.4,
    log_fold: float = 0.75,
    dispersion: float = 10.0,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    r"""Negative-binomial counts :math:`\mu_{ig} = \ell_i e^{a_g + b\sqrt G x_{ig}}` (see module).

    Returns ``(counts int64 [N, G], {"library_size", "baseline"})``.
    """
    n, g = x.shape
    library = depth * np.exp(library_sigma * rng.standard_normal(n))  # [N] l_i
    log_pi = rng.standard_normal(g)
    baseline = log_pi - np.log(np.exp(log_pi).mean())  # [G] a_g, mean e^a = 1
    mean = library[:, None] * np.exp(baseline[None, :] + log_fold * math.sqrt(g) * x)
    counts = rng.poisson(rng.gamma(dispersion, mean / dispersion))
    zero = counts.sum(1) == 0
    while zero.any():  # condition on a non-zero total, as filter_cells(min_counts=1) would
        counts[zero] = rng.poisson(rng.gamma(dispersion, mean[zero] / dispersion))
        zero = counts.sum(1) == 0
    return counts.astype(np.int64), {"library_size": library, "baseline": baseline}


def _log1p_normalised(counts: np.ndarray) -> np.ndarray:
    import scanpy as sc
    from anndata import AnnData

    tmp = AnnData(counts.astype(np.float32))
    sc.pp.normalize_total(tmp)
    sc.pp.log1p(tmp)
    return np.asarray(tmp.X, dtype=np.float32)


def tissue_anndata(
    tissue: Any,
    uns_key: str,
    obs: dict[str, np.ndarray] | None = None,
    sampler: dict[str, Any] | None = None,
) -> Any:
    """AnnData of a simulated tissue: X = counts, layers counts / signed / log1p, graph, truth.

    Writes ``layers['counts']`` (int64), ``layers['signed']`` (float32 latent rows on the
    sphere), ``layers['log1p']``, the columns ``obs``, ``obsm['spatial']``, the graph of
    :func:`graphdata.spatial_anndata.spatial_neighbors_knn`, ``varp['true_intra']``,
    ``varp['true_inter']`` and ``uns[uns_key]``: the parameters and ``sampler`` (default the
    sampler report's ``as_dict()``).
    """
    from anndata import AnnData

    from graphdata.spatial_anndata import spatial_neighbors_knn

    n, g = tissue.x.shape
    adata = AnnData(
        X=tissue.counts.astype(np.float32), obsm={"spatial": tissue.coords.astype(np.float64)}
    )
    adata.obs_names = [f"cell{i}" for i in range(n)]
    adata.var_names = [f"gene{j}" for j in range(g)]
    for key, column in (obs or {}).items():
        adata.obs[key] = column
    adata.layers["counts"] = tissue.counts.copy()
    adata.layers["signed"] = tissue.x.astype(np.float32)
    adata.layers["log1p"] = tissue.log1p.copy()
    spatial_neighbors_knn(adata, int(tissue.params.get("k", 6)))
    adata.varp["true_intra"] = tissue.W_intra.copy()
    adata.varp["true_inter"] = tissue.W_inter.copy()
    report = tissue.report.as_dict() if sampler is None else sampler
    adata.uns[uns_key] = {"params": dict(tissue.params), "sampler": report}
    return adata


@dataclass
class MetropolisTissue:
    """A tissue of :func:`simulate`: positions, graph, truth, signed states, counts, log1p."""

    coords: np.ndarray  # [N, 2]
    edge_index: np.ndarray  # [2, E] j -> i
    edge_weight: np.ndarray  # [E] GCN weights
    W_intra: np.ndarray  # [G, G]  # noqa: N815
    W_inter: np.ndarray  # [G, G]  # noqa: N815
    x: np.ndarray  # [N, G] signed unit rows (chain 0)
    counts: np.ndarray  # [N, G] int64
    log1p: np.ndarray  # [N, G] float32 normalize_total + log1p
    count_params: dict[str, Any]
    report: SamplerReport
    params: dict[str, Any] = field(default_factory=dict)

    def to_anndata(self) -> Any:
        """AnnData (:func:`tissue_anndata`); the sampler diagnostics without the energy trace."""
        report = self.report.as_dict()
        report.pop("energy_trace", None)
        return tissue_anndata(self, "tissue_metropolis", sampler=report)


def simulate(
    n_cells: int,
    n_genes: int,
    *,
    seed: int = 0,
    layout: str = "random",
    k: int = 6,
    sweeps: int = 600,
    burn_in: int = 300,
    chains: int = 2,
    rho_intra: float = 1.0,
    rho_inter: float = 1.0,
    inter_margin: float | None = 0.8,
    depth: float = 20.0,
    library_sigma: float = 0.4,
    log_fold: float = 0.75,
    dispersion: float = 10.0,
    dtype: type = np.float64,
) -> MetropolisTissue:
    r"""Positions, graph, truth, Metropolis states and counts of one tissue (module docstring).

    Every random draw comes from ``numpy.random.default_rng(seed)`` (and its spawned streams),
    so a seed reproduces the tissue exactly. ``library_sigma`` is :math:`\sigma_\ell`, the
    standard deviation of the log library sizes (0: every cell has depth :math:`D`; the other
    draws are unchanged, so only the size factors differ).
    """
    if n_cells <= k:
        raise GraphDataError(f"n_cells: expected more than k = {k} cells, got {n_cells}")
    streams = np.random.default_rng(seed).spawn(5)
    coords = tissue_positions(n_cells, layout, streams[0])
    edge_index = knn_edges(coords, k)
    weight = gcn_weights(edge_index, n_cells)
    w_intra, w_inter = draw_couplings(n_genes, streams[1], rho_intra=rho_intra, rho_inter=rho_inter)
    criterion = ordering_criterion(w_intra, w_inter, seed=int(streams[4].integers(2**62)))
    if inter_margin is not None:
        w_inter = w_inter * (inter_margin / criterion)
    states, report = metropolis_sample(
        edge_index,
        weight,
        w_intra,
        w_inter,
        n_cells,
        sweeps=sweeps,
        burn_in=burn_in,
        chains=chains,
        seed=int(streams[2].integers(2**62)),
        dtype=dtype,
    )
    x = _unit(states[:, 0].astype(np.float64))
    counts, count_params = counts_from_sphere(
        x,
        streams[3],
        depth=depth,
        library_sigma=library_sigma,
        log_fold=log_fold,
        dispersion=dispersion,
    )
    params = {
        "n_cells": n_cells,
        "n_genes": n_genes,
        "seed": seed,
        "layout": layout,
        "k": k,
        "sweeps": sweeps,
        "burn_in": burn_in,
        "chains": chains,
        "rho_intra": rho_intra,
        "rho_inter": rho_inter,
        "inter_margin": inter_margin,
        "ordering_criterion_drawn": criterion,
        "spectral_norm_intra": float(np.linalg.norm(w_intra, 2)),
        "spectral_norm_inter": float(np.linalg.norm(w_inter, 2)),
        "depth": depth,
        "library_sigma": library_sigma,
        "log_fold": log_fold,
        "dispersion": dispersion,
        "dtype": np.dtype(dtype).name,
    }
    return MetropolisTissue(
        coords=coords,
        edge_index=edge_index,
        edge_weight=weight,
        W_intra=w_intra,
        W_inter=w_inter,
        x=x,
        counts=counts,
        log1p=_log1p_normalised(counts),
        count_params=count_params,
        report=report,
        params=params,
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Simulate one tissue and print (and optionally write) the sampler diagnostics."""
    import argparse
    import json
    from pathlib import Path

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=10_000)
    parser.add_argument("--genes", type=int, default=100)
    parser.add_argument("--sweeps", type=int, default=600)
    parser.add_argument("--burn-in", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--float32", action="store_true", help="sample in float32 (2x faster)")
    parser.add_argument("--out", default=None, help="write the diagnostics as JSON here")
    args = parser.parse_args(argv)
    tissue = simulate(
        args.cells,
        args.genes,
        seed=args.seed,
        sweeps=args.sweeps,
        burn_in=args.burn_in,
        dtype=np.float32 if args.float32 else np.float64,
    )
    out = {"params": tissue.params, "sampler": tissue.report.as_dict()}
    r = tissue.report
    print(
        f"N={args.cells} G={args.genes}: {r.seconds:.0f} s, {r.n_colours} colours, step "
        f"{r.step_size:.3f}, acceptance {r.acceptance:.3f}, two-chain x x^T max z "
        f"{r.x2_max_z:.2f} (null median {r.x2_z_null_median:.2f}), energy gap z "
        f"{r.energy_gap_z:.2f}, E/N last "
        f"{r.energy_trace[-1].round(3).tolist()}"
    )
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1, default=float))
    return out


if __name__ == "__main__":
    main()
