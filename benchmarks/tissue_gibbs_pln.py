r"""A third tissue simulator: Poisson log-normal counts on a Gaussian Markov random field (Gibbs).

The second held-out world of the Celcomen benchmark (``bench_celcomen_counts --world
gibbs_pln``, issue 19), written before the counts route was changed and never used to tune it.
Its mechanism differs from both other simulators: :mod:`spatial.simulate` (Langevin on the
sphere, counts :math:`\mathrm{Poisson}(d(1 + x))`) and :mod:`benchmarks.tissue_metropolis`
(Metropolis on the sphere, negative-binomial counts with a log link). Here nothing lives on the
sphere: the latent log-rates are a Gaussian field over the whole tissue, cells have types mixed
by spatial domain, and counts are Poisson with expression-dependent dropout. Neither
``spatial.simulate`` nor ``spatial.model`` is imported; the graph comes from
:func:`graphdata.spatial.knn_graph`, the colouring from :mod:`benchmarks.tissue_metropolis`.

**Tissue.** ``N`` cells uniform in a square of side :math:`\sqrt N`; directed k-NN graph (k = 6),
edges :math:`j \to i`, GCN weights :math:`w_{ij} = 1/\sqrt{d_i d_j}` (``A[i, j] = w_ij``), the
graph and weighting Celcomen's default fits with. ``n_domains`` = 4 spatial domains (the
Voronoi cells of uniform centres); each domain has cell-type proportions
:math:`\mathrm{Dirichlet}(1, \dots, 1)` over ``n_types`` = 3 types, and each cell draws its type.

**Latent field.** :math:`Y \in \mathbb R^{N \times G}` (one row :math:`y_i` per cell) is a
zero-mean Gaussian Markov random field with density

.. math::
    \log p(Y) = -\tfrac12 \sum_i y_i^\top \Lambda\, y_i
        + \sum_i \sum_{j \to i} w_{ij}\, y_i^\top K\, y_j + \mathrm{const},

i.e. precision :math:`Q = I_N \otimes \Lambda - (A + A^\top) \otimes K`. The intracellular
precision is :math:`\Lambda = \sigma^{-2}(I - R)`, :math:`R` symmetric with zero diagonal on an
Erdős–Rényi gene graph (edge probability :math:`3/(G-1)`, mean degree 3), random signs,
magnitudes :math:`U(0.5, 1)`, scaled to :math:`\lVert R \rVert_2 = 0.6`. The intercellular
coupling is "ligand-receptor"-like: a random perfect matching of the genes, each matched pair
coupled with probability 0.8, plus any other pair with probability :math:`1/G`; positive with
probability 0.7, magnitudes :math:`U(0.5, 1)`, and a diagonal 0.5 (each gene's own spatial
autocorrelation). :math:`K = \kappa K_0` with :math:`\kappa` set so that
:math:`\rho(A + A^\top)\,\rho(\Lambda^{-1/2} K_0 \Lambda^{-1/2})\,\kappa = ` ``margin`` (0.7),
which makes :math:`Q` positive definite (for every eigenvalue :math:`s` of :math:`A + A^\top`,
:math:`\Lambda - sK \succ 0`).

**Truth in Celcomen's sign convention.** Celcomen's energy is :math:`E(X) = \sum_i x_i^\top
W_{\mathrm{intra}} x_i + \sum_i \sum_{j \to i} w_{ij} x_i^\top W_{\mathrm{inter}} x_j` with
:math:`p \propto e^{E}`; matching it term by term to :math:`\log p(Y)` gives

.. math::
    W_{\mathrm{intra}} = -\tfrac12 \Lambda \ (\text{off-diagonal: } R/(2\sigma^2)), \qquad
    W_{\mathrm{inter}} = K .

``W_intra`` is stored with a zero diagonal (the sphere cannot identify its trace). The map holds
for the latent field; the counts pass through type means, library sizes, a log link, Poisson
noise, dropout and the library's normalisation, so only **signs and support** (and the pattern,
Pearson) of the off-diagonal entries are comparable, not their scale (the intra/inter ``ratio``
of the benchmark is reported but has no target here).

**Sampler** (:func:`gibbs_sample`). Exact conditionals, blocked by a colouring of the undirected
graph (cells of one colour are conditionally independent given the rest):

.. math::
    y_c \mid Y_{-c} \sim \mathcal N\big(\Lambda^{-1} K\, n_c,\ \Lambda^{-1}\big), \qquad
    n_c = \sum_{j \to c} w_{cj}\, y_j + \sum_{c \to i} w_{ic}\, y_i ,

drawn as :math:`\Lambda^{-1} K n_c + L^{-\top}\varepsilon`, :math:`\Lambda = L L^\top`. Two
chains (from 0 and from an overdispersed start, :math:`3\sigma` per entry) run ``burn_in`` +
``sweeps`` sweeps; the diagnostic is the largest :math:`|z|` over gene pairs of the difference
of :math:`\overline{y_g y_h}` between the final states (i.i.d.-cell standard errors) next to the
null median of that maximum. The tissue is the final state of chain 0.

**Counts** (:func:`counts_from_field`): log-rate :math:`\eta_{ig} = a_g + \mu_{t_i g} + y_{ig}`,
baselines :math:`a_g = \log \pi_g - \log \bar\pi`, :math:`\log \pi_g \sim \mathcal N(0, 1)`,
type profiles :math:`\mu_{tg} \sim \mathcal N(0, \tau^2)` (:math:`\tau` = 0.3); library sizes
:math:`\ell_i = D e^{\sigma_\ell \varepsilon_i}` (:math:`\sigma_\ell` = 0.5,
``library_sigma``); :math:`c_{ig} \sim \mathrm{Poisson}(\ell_i e^{\eta_{ig}})`, then each
count is set to 0 with probability :math:`\pi_0/(1 + \ell_i e^{\eta_{ig}})` (:math:`\pi_0` =
0.3: dropout hits lowly expressed entries). A cell with all
counts zero is redrawn. ``log1p`` is scanpy's ``normalize_total`` then ``log1p``; ``signed``
holds the latent rows :math:`y_i / \lVert y_i \rVert` (the coordinates an oracle would fit).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import eigsh
from scipy.stats import norm

from benchmarks.tissue_metropolis import (
    _log1p_normalised,
    gcn_weights,
    greedy_colouring,
    knn_edges,
    tissue_anndata,
)
from graphdata.errors import GraphDataError

__all__ = [
    "draw_precision",
    "domains_and_types",
    "gibbs_sample",
    "counts_from_field",
    "LatentTissue",
    "GibbsTissue",
    "simulate",
    "coupling_scale",
    "chain_agreement",
    "draw_nonempty",
    "symmetric_adjacency",
]


def symmetric_adjacency(edge_index: np.ndarray, weight: np.ndarray, n: int) -> sp.csr_matrix:
    """:math:`S = A + A^\\top`, ``A[i, j] = w_ij`` for the edge j -> i: ``(S y)_c = n_c``."""
    src, dst = edge_index
    return sp.coo_matrix(
        (np.r_[weight, weight], (np.r_[dst, src], np.r_[src, dst])), shape=(n, n)
    ).tocsr()


def coupling_scale(
    edge_index: np.ndarray,
    weight: np.ndarray,
    n_cells: int,
    lam: np.ndarray,
    k0: np.ndarray,
    margin: float,
    *,
    v0: np.ndarray | None = None,
) -> tuple[float, float]:
    r"""``(kappa, rho(A + A^T))`` for the intercellular scale (module docstring).

    :math:`\kappa` solves :math:`\rho(A + A^\top)\,\rho(\Lambda^{-1/2} K_0
    \Lambda^{-1/2})\,\kappa =` ``margin``.

    ``v0``: ARPACK's start vector (``None``: its random one, which moves :math:`\kappa` in the
    last bits from run to run).
    """
    s = symmetric_adjacency(edge_index, weight, n_cells)
    rho_s = float(abs(eigsh(s, k=1, which="LM", v0=v0, return_eigenvectors=False)[0]))
    val, vec = np.linalg.eigh(lam)
    half_inv = (vec / np.sqrt(val)) @ vec.T  # Lambda^{-1/2}
    rho_k = float(np.abs(np.linalg.eigvalsh(half_inv @ k0 @ half_inv)).max())
    return margin / (rho_s * rho_k), rho_s


def chain_agreement(states: np.ndarray) -> tuple[float, float]:
    r"""Two chains' second moments compared: ``(max z, its median when the chains agree)``.

    ``states`` is ``[N, 2, G]``; z is :math:`|\overline{y_g y_h}^{(0)} -
    \overline{y_g y_h}^{(1)}|` over its standard error, maximised over the :math:`G(G+1)/2`
    pairs; under agreement its median is :math:`\Phi^{-1}(1 - \log 2 / (G (G + 1)))`.
    """
    n_cells, _, g = states.shape
    moments, variances = [], []
    for chain in (0, 1):
        ys = states[:, chain]
        second = ys.T @ ys / n_cells
        moments.append(second)
        variances.append(np.maximum((ys**2).T @ ys**2 / n_cells - second**2, 1e-300))
    se = np.sqrt((variances[0] + variances[1]) / n_cells)
    max_z = float((np.abs(moments[0] - moments[1]) / se).max())
    return max_z, float(norm.isf(math.log(2) / (g * (g + 1))))


def draw_nonempty(draw: Callable[[np.ndarray], np.ndarray], rate: np.ndarray) -> np.ndarray:
    """``draw(rate)`` with every all-zero row drawn again: counts conditioned on a non-zero
    total, as ``scanpy.pp.filter_cells(min_counts=1)`` would leave them (``rate`` ``[N, G]``)."""
    counts = draw(rate)
    zero = counts.sum(1) == 0
    while zero.any():
        counts[zero] = draw(rate[zero])
        zero = counts.sum(1) == 0
    return counts


def draw_precision(
    n_genes: int,
    rng: np.random.Generator,
    *,
    sigma: float = 0.6,
    intra_norm: float = 0.6,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Intracellular precision :math:`\Lambda` and unscaled coupling :math:`K_0` (module doc).

    Returns ``(Lambda, K0)`` float64 ``[G, G]``, symmetric; :math:`\Lambda \succ 0`.
    """
    g = n_genes
    if g < 4:
        raise GraphDataError(f"n_genes: expected >= 4, got {g}")
    upper = np.triu(np.ones((g, g), dtype=bool), 1)
    r = np.zeros((g, g))
    while not (r != 0).any():
        support = upper & (rng.random((g, g)) < 3.0 / (g - 1))
        r = np.where(support, rng.choice([-1.0, 1.0], (g, g)) * rng.uniform(0.5, 1.0, (g, g)), 0)
    r = r + r.T
    r *= intra_norm / np.linalg.norm(r, 2)
    lam = (np.eye(g) - r) / sigma**2
    order = rng.permutation(g)
    matched = np.zeros((g, g), dtype=bool)
    for a, b in zip(order[0::2], order[1::2]):
        matched[min(a, b), max(a, b)] = rng.random() < 0.8
    support = upper & (matched | (rng.random((g, g)) < 1.0 / g))
    if not support.any():
        a, b = sorted(order[:2])
        support[a, b] = True
    sign = np.where(rng.random((g, g)) < 0.7, 1.0, -1.0)
    k0 = np.where(support, sign * rng.uniform(0.5, 1.0, (g, g)), 0.0)
    k0 = k0 + k0.T + 0.5 * np.eye(g)
    return lam, k0


def domains_and_types(
    coords: np.ndarray, rng: np.random.Generator, *, n_domains: int = 4, n_types: int = 3
) -> tuple[np.ndarray, np.ndarray]:
    """Domain (Voronoi of uniform centres) and cell type (Dirichlet mixture per domain)."""
    side = float(coords.max()) if len(coords) else 1.0
    centres = rng.random((n_domains, 2)) * side
    domain = np.argmin(((coords[:, None, :] - centres[None]) ** 2).sum(-1), axis=1)
    mix = rng.dirichlet(np.ones(n_types), n_domains)  # [D, T]
    u = rng.random(len(coords))
    cell_type = (u[:, None] > np.cumsum(mix[domain], axis=1)).sum(1).clip(max=n_types - 1)
    return domain.astype(np.int64), cell_type.astype(np.int64)


@dataclass
class GibbsReport:
    """Diagnostics of :func:`gibbs_sample`."""

    x2_max_z: float  # max over (g, h) of |mean y_g y_h, chain 0 - chain 1| / standard error
    x2_z_null_median: float  # its median when the chains agree
    n_colours: int
    sweeps: int
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return dict(self.__dict__)


def gibbs_sample(
    edge_index: np.ndarray,
    weight: np.ndarray,
    lam: np.ndarray,
    k: np.ndarray,
    n_cells: int,
    *,
    sweeps: int = 200,
    burn_in: int = 100,
    seed: int = 0,
) -> tuple[np.ndarray, GibbsReport]:
    r"""Two chains of chromatic Gibbs sampling of the Gaussian field (module docstring).

    Args:
        edge_index: ``[2, E]`` edges j -> i.
        weight: ``[E]`` edge weights.
        lam: ``[G, G]`` intracellular precision :math:`\Lambda` (positive definite).
        k: ``[G, G]`` symmetric intercellular coupling :math:`K`.
        n_cells: ``N``.
        sweeps: Sweeps after burn-in (default 200).
        burn_in: Further sweeps first (default 100; there is no adaptation, so the split only
            names the total).
        seed: Seed of the starts and the noise.

    Returns:
        ``(y, report)``: final states ``[N, 2, G]`` and a :class:`GibbsReport`.
    """
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    g = lam.shape[0]
    if not (np.allclose(lam, lam.T) and np.allclose(k, k.T)):
        raise GraphDataError("lam, k: expected symmetric matrices")
    chol = np.linalg.cholesky(lam)  # raises if Lambda is not positive definite
    gain = np.linalg.solve(lam, k)  # [G, G] Lambda^{-1} K
    noise_map = np.linalg.inv(chol).T  # L^{-T}: cov of L^{-T} eps is Lambda^{-1}
    s = symmetric_adjacency(edge_index, weight, n_cells)
    colours = greedy_colouring(edge_index, n_cells)
    rows = [s[idx] for idx in colours]
    sigma = float(np.sqrt(np.diag(np.linalg.inv(lam)).mean()))
    y = np.zeros((n_cells, 2, g))
    y[:, 1] = 3.0 * sigma * rng.standard_normal((n_cells, g))
    for _ in range(burn_in + sweeps):
        for idx, s_rows in zip(colours, rows):
            msg = (s_rows @ y.reshape(n_cells, 2 * g)).reshape(len(idx), 2, g)  # [m, 2, G] n_c
            eps = rng.standard_normal((len(idx), 2, g))
            y[idx] = msg @ gain.T + eps @ noise_map.T
    if not np.isfinite(y).all():
        raise GraphDataError("gibbs_sample: non-finite state (is Q positive definite?)")
    max_z, null_median = chain_agreement(y)
    report = GibbsReport(
        x2_max_z=max_z,
        x2_z_null_median=null_median,
        n_colours=len(colours),
        sweeps=burn_in + sweeps,
        seconds=time.perf_counter() - start,
    )
    return y, report


def counts_from_field(
    y: np.ndarray,
    cell_type: np.ndarray,
    rng: np.random.Generator,
    *,
    n_types: int = 3,
    depth: float = 10.0,
    library_sigma: float = 0.5,
    type_sd: float = 0.3,
    dropout: float = 0.3,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    r"""Poisson log-normal counts with type means, library sizes and dropout (module doc).

    Returns ``(counts int64 [N, G], {"library_size", "baseline", "type_profile"})``.
    """
    n, g = y.shape
    log_pi = rng.standard_normal(g)
    baseline = log_pi - np.log(np.exp(log_pi).mean())  # [G] a_g
    profile = type_sd * rng.standard_normal((n_types, g))  # [T, G] mu_tg
    library = depth * np.exp(library_sigma * rng.standard_normal(n))  # [N] l_i
    rate = library[:, None] * np.exp(baseline[None] + profile[cell_type] + y)  # [N, G]

    def draw(r: np.ndarray) -> np.ndarray:
        c = rng.poisson(r)
        return np.where(rng.random(r.shape) < dropout / (1.0 + r), 0, c)

    counts = draw_nonempty(draw, rate)
    params = {"library_size": library, "baseline": baseline, "type_profile": profile}
    return counts.astype(np.int64), params


@dataclass(kw_only=True)
class LatentTissue:
    """A tissue drawn from a latent field: graph, truth, latent rows and counts.

    The fields shared by :class:`GibbsTissue` and ``tissue_bistable_nb.BistableTissue``.
    """

    coords: np.ndarray  # [N, 2]
    edge_index: np.ndarray  # [2, E] j -> i
    edge_weight: np.ndarray  # [E] GCN weights
    W_intra: np.ndarray  # [G, G] -Lambda / 2, zero diagonal  # noqa: N815
    W_inter: np.ndarray  # [G, G] K  # noqa: N815
    x: np.ndarray  # [N, G] latent rows on the sphere
    latent: np.ndarray  # [N, G] latent field y
    counts: np.ndarray  # [N, G] int64
    log1p: np.ndarray  # [N, G] float32
    count_params: dict[str, Any]
    report: GibbsReport
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class GibbsTissue(LatentTissue):
    """A tissue of :func:`simulate`: a :class:`LatentTissue` with domains and cell types."""

    domain: np.ndarray  # [N]
    cell_type: np.ndarray  # [N]

    def to_anndata(self) -> Any:
        """AnnData (:func:`tissue_anndata`) with ``obs['domain']`` and ``obs['cell_type']``."""
        obs = {"domain": self.domain, "cell_type": self.cell_type}
        return tissue_anndata(self, "tissue_gibbs_pln", obs)


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
    n_domains: int = 4,
    n_types: int = 3,
    depth: float = 10.0,
    library_sigma: float = 0.5,
    type_sd: float = 0.3,
    dropout: float = 0.3,
) -> GibbsTissue:
    r"""Positions, graph, domains, truth, Gibbs states and counts of one tissue (module doc).

    Every draw comes from ``numpy.random.default_rng(seed)`` and its spawned streams, so a
    seed reproduces the tissue. ``library_sigma`` is the standard deviation of the log library
    sizes, :math:`\ell_i = D e^{\sigma_\ell \varepsilon_i}` (0: every cell has depth :math:`D`;
    the other draws are unchanged, so only the size factors differ).
    """
    if n_cells <= k:
        raise GraphDataError(f"n_cells: expected more than k = {k} cells, got {n_cells}")
    streams = np.random.default_rng(seed).spawn(5)
    coords = streams[0].random((n_cells, 2)) * math.sqrt(n_cells)
    edge_index = knn_edges(coords, k)
    weight = gcn_weights(edge_index, n_cells)
    domain, cell_type = domains_and_types(coords, streams[1], n_domains=n_domains, n_types=n_types)
    lam, k0 = draw_precision(n_genes, streams[2], sigma=sigma)
    kappa, rho_s = coupling_scale(edge_index, weight, n_cells, lam, k0, margin)
    k_mat = kappa * k0
    states, report = gibbs_sample(
        edge_index,
        weight,
        lam,
        k_mat,
        n_cells,
        sweeps=sweeps,
        burn_in=burn_in,
        seed=int(streams[3].integers(2**62)),
    )
    latent = states[:, 0]
    counts, count_params = counts_from_field(
        latent, cell_type, streams[4], n_types=n_types, depth=depth,
        library_sigma=library_sigma, type_sd=type_sd, dropout=dropout,
    )  # fmt: skip
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
        "n_domains": n_domains,
        "n_types": n_types,
        "depth": depth,
        "library_sigma": library_sigma,
        "type_sd": type_sd,
        "dropout": dropout,
    }
    return GibbsTissue(
        coords=coords,
        edge_index=edge_index,
        edge_weight=weight,
        W_intra=w_intra,
        W_inter=k_mat,
        x=latent / np.linalg.norm(latent, axis=1, keepdims=True),
        latent=latent,
        counts=counts,
        log1p=_log1p_normalised(counts),
        domain=domain,
        cell_type=cell_type,
        count_params=count_params,
        report=report,
        params=params,
    )
