r"""Celcomen on unseen data: recovery from counts, signed coordinates and log1p (issue 19).

Tissues come from :mod:`benchmarks.tissue_metropolis`, a simulator written independently of the
library's (Metropolis on the sphere from the stated energy, negative-binomial counts with a log
link); the ``log_counts`` route was developed against it (session 12), so it is a tuning world now,
as are ``--world gibbs_pln`` (session 18 looked at it) and ``--world bistable_nb`` (session 19); the
held-out ones are ``--world panel`` (session 20), ``--world wholetx`` (session 21), ``--world
xenium`` (session 22), ``--world beads`` (session 22), ``--world visium`` (session 24, never fitted
before its held-out check), ``--world stereo`` (session 24, kept out until its one held-out run in
session 27 with the code unchanged), ``--world merfish`` (session 27, kept out until its one
held-out run in session 32 with the code unchanged) and ``--world slidetags`` (written in session 32
without reading spatial's Celcomen code, held out, never fitted). For each tissue the library is
fitted with its defaults, through the AnnData wrapper ``spatial.tools.celcomen``, on five routes:

- ``signed``: the sphere coordinates themselves (``layers['signed']``, ``allow_negative=True``;
  through ``Celcomen.fit`` + ``store_fit`` while the wrapper has no ``allow_negative``);
- ``counts``: the raw counts (``layers['counts']``), what a user with a Visium / Xenium slide has,
  through the default ``transform="auto"``, which takes the log-counts route on raw counts
  (gene-centred log counts, :func:`spatial._inputs.log_counts_coordinates`; the ``log_counts``
  route of sessions 12-15) with the default size factors: the total counts of the genes not
  fitted when the AnnData has such genes (``--background-genes``; session 21), the couplings
  then reported whole, else none and the couplings reported orthogonal to the library-size
  direction (1 for well-expressed genes);
- ``counts_nosf``: the same with ``size_factors=False`` (the default before session 21);
- ``log1p``: scanpy's ``normalize_total`` + ``log1p`` (``layers['log1p']``);
- ``counts_sphere``: the raw counts with ``transform="sphere"``, the paper's :math:`c / \lVert c
  \rVert` (the default before session 16, the ``counts`` route of sessions 11-15).

``--world gibbs_pln`` draws the tissues from :mod:`benchmarks.tissue_gibbs_pln` instead
(Poisson log-normal counts on a Gaussian Markov random field, cell types and domains, dropout;
written before the ``log_counts`` route and never used to tune it): there only signs, support
and Pearson compare, not the scale. ``--world bistable_nb`` draws them from
:mod:`benchmarks.tissue_bistable_nb` (bistable gene switches sampled by MALA, clustered cells,
negative-binomial counts with per-gene dispersions, gene means from 0.2 to 20 and log-normal
size factors; written in session 19 after gibbs_pln had been looked at, and looked at since):
again signs, support and Pearson compare, and the scale is reported without a target.
``--world panel`` draws them from :mod:`benchmarks.tissue_panel` (a Visium-like lattice clipped
to a lobed outline with holes, a skewed log-gamma-type latent field with hub regulators and
ligand-receptor pairs sampled by univariate slice sampling, and a gene panel's counts from a
multinomial over the panel and 2,000 background genes with log-normal UMI totals; written in
session 20 after the other three had been looked at, and held out since): signs, support and
Pearson compare, the scale has no target. ``--world wholetx`` draws them from
:mod:`benchmarks.tissue_wholetx` (a whole-transcriptome slide: G coupled genes among 2,000 other
genes, marked ``var['highly_variable']``, on two regions of different cell density; a
leptokurtic log-cosh latent field on a geometric gene network sampled by Hamiltonian Monte Carlo;
Poisson-inverse-Gaussian counts with cell-type and cell-size dependent size factors, X and
``layers['counts']`` sparse; written in session 21 by a helper that did not read the library's
Celcomen code, and held out from session 21's counts change): the routes fit the highly variable
genes (the library's default) and are scored on them; signs, support and Pearson compare, the
scale has no target. ``--world xenium`` draws them from :mod:`benchmarks.tissue_xenium` (an
imaging-based single-cell slide, Xenium / MERSCOPE-like: segmented cells of irregular density
with gland-like rings, G coupled genes in a targeted panel of 300-480 genes marked
``var['highly_variable']``, a Student-t latent field sampled by exact scale-mixture Gibbs, Poisson
transcripts with per-gene detection efficiency, area-dependent size factors, segmentation
spillover into touching cells and a low zero inflation, X and ``layers['counts']`` sparse;
written in session 22 by a helper that did not read the library's Celcomen code, held out):
scored as wholetx. ``--world beads`` draws them from :mod:`benchmarks.tissue_beads` (a
Slide-seq-like bead array: the observations are 10 um beads in a disordered close packing, each
mixing the 1-3 cells it overlaps by overlap area; the graph is k-NN over the beads, the truth the
cell-level energy's W_intra and W_inter, so bead mixing is a nuisance; a skew-normal latent field
sampled by chromatic MALA, G coupled genes among 500-1,000 others marked
``var['highly_variable']``, Poisson counts with a Gamma per-bead capture efficiency at about 200
UMIs per bead, X and ``layers['counts']`` sparse; written in session 22 by a helper that did not
read the library's Celcomen code, held out): scored as wholetx. ``--world visium`` draws them
from :mod:`benchmarks.tissue_visium` (a 10x Visium-like slide: 55 um spots on a 100 um hexagonal
lattice over a continuous tissue of cells, each spot **summing** the counts of the 3-15 cells it
covers, the cells between spots unobserved; the graph is k-NN over the spots, the truth the
cell-level energy's W_intra and W_inter; a Gaussian-tilted type-IV logistic latent field on a
preferential-attachment gene graph with ligand-receptor intercellular pairs, sampled by an
independence Metropolis-within-Gibbs sampler with Student-t Laplace proposals; G coupled genes
among 1,000-3,000 others marked ``var['highly_variable']``, cell types in layered domains that
move only the other genes, negative-binomial counts with gene-specific dispersions under a
log-normal spot capture efficiency at 5,000-15,000 UMIs per spot, X and ``layers['counts']``
sparse; written in session 24 by a helper that did not read the library's Celcomen code and never
fitted it on this world, held out for one later check): scored as wholetx. ``--world stereo``
draws them from :mod:`benchmarks.tissue_stereo` (a Stereo-seq / Visium HD-like sub-cellular
array: transcripts captured in 2 um bins over a confluent tissue of cells, the observations the
objects of a nucleus-expansion cell segmentation, with transcript diffusion and misplaced
boundaries spilling part of each cell into its neighbours' objects in proportion to their shared
boundary, cytoplasm beyond the expansion lost, small cells merged and large ones split; the
graph is k-NN over the objects, the truth the cell-level energy's W_intra and W_inter; a Gaussian
times generalised-Gaussian :math:`|t - o|^p` latent field on a stochastic-block-model gene graph
with module relays between cells, sampled by elliptical slice sampling within Gibbs on a
moment-matched Gaussian reference; G coupled genes among 1,000-3,000 others marked
``var['highly_variable']``, Poisson-Beta (transcriptional bursting) counts thinned through the
segmentation under a per-cell capture efficiency, ambient RNA at 2-6 %, 300-1,500 UMIs per
object, X and ``layers['counts']`` sparse; written in session 24 by a helper that did not read
the library's Celcomen code and never fitted it on this world before its one held-out run,
session 27): scored as wholetx. ``--world merfish`` draws them from :mod:`benchmarks.tissue_merfish`
(a MERFISH / CosMx-like section of a layered cortex: cells are spheres of a 3-D hard-core process
in wavy laminae of different densities and cell types, cut by a 10 um section that keeps a
fraction of each; the latent field is the stationary law of a gene-regulatory SDE whose energy
couples Hill functions of the genes, a transcription-factor network within cells and
ligand-receptor pairs between them, with a log-generalised-inverse-Gaussian site and laminar set
points, sampled by blocked kinetic Langevin (generalised HMC); the truth is the drift's mean
Jacobian in Celcomen's normalisation; G coupled genes in a panel of 120-500 marked
``var['highly_variable']``, Poisson counts after section capture, per-gene decoding efficiency,
optical crowding and false-positive codewords at 20-260 transcripts per cell, X and
``layers['counts']`` sparse; written in session 27 by a helper that did not read the library's
Celcomen code and never fitted it on this world, held out): scored as wholetx. ``--world
slidetags`` draws them from :mod:`benchmarks.tissue_slidetags` (a Slide-tags-like experiment on
the small intestine's crypt-villus axis: single nuclei profiled by droplet snRNA-seq and placed
where their spatial tags came from, only a cell-type-dependent 40-70 % of the tissue's cells
recovered, positions jittered by 3 um; the energy lives on all the tissue's cells, an epithelial
monolayer laid along crypts and villi and a hard-core stroma, and the graph is k-NN over the
placed nuclei, the truth the cell-level energy's mean Hessian; a sinh-arcsinh site with a
zonation gradient, couplings of clipped-linear (hard-saturating) responses on signalling cascades
with negative feedback, ligand-receptor relays, Notch-Delta lateral inhibition and morphogen
community effects, sampled by exact single-site Gibbs with rejection from the site law; G coupled
genes among 800-2,000 others marked ``var['highly_variable']``, counts through cell-type nuclear
RNA content, per-droplet capture, 3 % doublets and a per-droplet read depth that saturates large
libraries, about 1,300 UMIs per nucleus, X and ``layers['counts']`` sparse; written in session 32
by a helper that did not read the library's Celcomen code and never fitted it on this world,
held out): scored as wholetx.

Baselines on each route: ``benchmarks.bench_celcomen.correlation_baselines`` (gene-gene
correlation for intra, symmetrised own-vs-neighbour-mean correlation for inter) of the
expression the route sees (``counts``: :math:`\log(1 + c)` of the raw counts; ``counts_sphere``:
the raw counts). Metrics on the
off-diagonal entries: sign agreement on the true non-zeros, support AUROC, Pearson, Spearman
(``benchmarks.bench_celcomen.scores``), and the scale: one common beta by least squares
of the fitted [intra, inter] off-diagonals on the true ones, then per matrix the least-squares
slope (through 0) of fitted on beta x truth (``ratio``; 1 = the inter/intra balance of
the truth), and ``zero_offset``, the mean fitted entry where the truth is 0 in units of
beta x mean |truth| (the common offset that Pearson and Spearman cannot see).

Targets (issue 19, counts route at G = 10 and 20): sign agreement >= .9 (intra) and >= .85
(inter); off-diagonal Pearson within .05 of the signed route; ratio within .8-1.25 for both.

``--background-genes B`` adds a whole transcriptome around the tissue's genes
(:func:`with_background`: B genes sharing the cells' size factors, independent of the latent
field; on the panel world its own background, as one column): ``var['highly_variable']`` marks
the tissue's genes, which every route fits (``mask_var``'s default), and the rest give the
counts route its size factors.

Both tuning worlds draw log-normal library sizes (sd of :math:`\log \ell_i` 0.4 on metropolis,
0.5 on gibbs_pln); ``--size-factor-sd S`` sets that sd (0: equal depth in every cell, every other
draw unchanged), and is refused for bistable_nb and the held-out panel, wholetx, xenium,
beads, visium, stereo, merfish and slidetags, which draw their own.

Run: ``.venv/bin/python -m benchmarks.bench_celcomen_counts [--genes 10,20] [--cells 2000]
[--seeds 2]
[--world metropolis|gibbs_pln|bistable_nb|panel|wholetx|xenium|beads|visium|stereo|merfish|
slidetags]
[--size-factor-sd S] [--background-genes B] [--out FILE.json]``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

import spatial.tools
from benchmarks import (
    tissue_beads,
    tissue_bistable_nb,
    tissue_gibbs_pln,
    tissue_merfish,
    tissue_metropolis,
    tissue_panel,
    tissue_slidetags,
    tissue_stereo,
    tissue_visium,
    tissue_wholetx,
    tissue_xenium,
)
from benchmarks.bench_celcomen import _offdiag, correlation_baselines, scores
from graphdata.atomic import write_text_atomic
from graphdata.errors import GraphDataError
from spatial.celcomen import Celcomen

ROUTES = {
    "signed": "signed",
    "counts": "counts",
    "counts_nosf": "counts",
    "log1p": "log1p",
    "counts_sphere": "counts",
}
#: Route -> fit overrides ("counts_sphere": the raw counts through transform="sphere";
#: "counts_nosf": the raw counts without size factors, reported orthogonal to the library-size
#: direction, the default before session 21).
ROUTE_PARAMS: dict[str, dict[str, Any]] = {
    "counts_sphere": {"transform": "sphere"},
    "counts_nosf": {"size_factors": False},
}
#: World name -> simulator module (each has ``simulate(n_cells, n_genes, seed=...)``).
WORLDS = {
    "metropolis": tissue_metropolis,
    "gibbs_pln": tissue_gibbs_pln,
    "bistable_nb": tissue_bistable_nb,
    "panel": tissue_panel,
    "wholetx": tissue_wholetx,
    "xenium": tissue_xenium,
    "beads": tissue_beads,
    "visium": tissue_visium,  # held out (session 24): never fitted before its one check
    "stereo": tissue_stereo,  # held out (session 24) until its one run (session 27)
    "merfish": tissue_merfish,  # held out (session 27) until its one run in session 32
    "slidetags": tissue_slidetags,  # held out (session 32): never fitted
}
METHODS = ("celcomen", "correlation")
#: Default (sweeps, burn-in) of a world's sampler where 600 / 300 does not fit it: the beads
#: world's MALA mixes slowly (at 2,000 beads, G = 20, seed 0: R-hat 1.21 after 600 / 300 sweeps,
#: 1.05 after 1,800 / 900; the coupling margin does not change it: 1.20-1.25 at .7-.9).
#: The visium world's independence sampler mixes in a few sweeps (2,000 spots, seed 0, 75 burn-in
#: + 150 sweeps: acceptance 0.94, R-hat 1.05 / 1.03 and autocorrelation time 5 sweeps at G = 10 /
#: 20; session 24), and its 51,000 cells cost 0.15 / 0.29 s a sweep (simulate 37 / 69 s, one
#: thread), so it samples 75 + 150.
#: The stereo world's elliptical slice sampler (blocked by cell and gene module) decorrelates in
#: 10-16 sweeps (2,000 cells, 600 burn-in + 1,200 sweeps: first-angle acceptance 0.46 / 0.38,
#: R-hat 1.012 / 1.018, autocorrelation time 16 / 15 sweeps at G = 10 / 20, seed 0; 1.009 /
#: 1.013 and 9 / 16 at seed 1; session 24), and its 2,000 cells cost 16 / 25 ms a sweep
#: (simulate 31 / 47 s, one thread, on a machine shared with a long run), so it samples 600 +
#: 1,200.
SWEEPS = {"beads": (1800, 900), "visium": (150, 75), "stereo": (1200, 600)}


def sign_agreement(estimate: np.ndarray, truth: np.ndarray) -> float:
    """Fraction of true non-zero off-diagonal entries whose estimate has the same sign."""
    est, tru = _offdiag(estimate), _offdiag(truth)
    nonzero = tru != 0
    return float(np.mean(np.sign(est[nonzero]) == np.sign(tru[nonzero])))


def scale_report(
    fitted: tuple[np.ndarray, np.ndarray], truth: tuple[np.ndarray, np.ndarray]
) -> dict:
    """Common beta over both matrices, per-matrix ratio to beta x truth, offset on true zeros."""
    f = [_offdiag(m) for m in fitted]
    t = [_offdiag(m) for m in truth]
    beta = sum(float(a @ b) for a, b in zip(f, t)) / sum(float(b @ b) for b in t)
    out: dict[str, Any] = {"beta": beta}
    for name, fa, ta in zip(("intra", "inter"), f, t):
        ratio = float(fa @ ta) / (beta * float(ta @ ta)) if beta != 0 else float("nan")
        zero = ta == 0
        unit = abs(beta) * float(np.abs(ta[~zero]).mean())
        out[name] = {
            "ratio": ratio,
            "zero_offset": float(fa[zero].mean()) / unit if zero.any() and unit > 0 else 0.0,
        }
    return out


def matrix_metrics(
    fitted: tuple[np.ndarray, np.ndarray], truth: tuple[np.ndarray, np.ndarray]
) -> dict:
    """Scores, sign agreement and scale of one method on one route."""
    scale = scale_report(fitted, truth)
    out: dict[str, Any] = {"beta": scale["beta"]}
    for name, est, tru in zip(("intra", "inter"), fitted, truth):
        out[name] = {
            **scores(est, tru),
            "sign_agreement": sign_agreement(est, tru),
            **scale[name],
        }
    return out


def fit_route(adata: Any, route: str, seed: int) -> tuple[tuple[np.ndarray, np.ndarray], dict]:
    r"""Fit with the library's defaults on one route; return the matrices and fit facts.

    A route on the sphere (:math:`c / \lVert c \rVert`) refuses cells with no expression in
    the fitted genes (low-depth beads); it is then fitted as its error message tells a user,
    without those cells (``dropped_empty_cells`` counts them; 0 where none was refused).
    """
    layer = ROUTES[route]
    start = time.perf_counter()
    dropped = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wrapper_takes_signed = (
            "allow_negative" in inspect.signature(spatial.tools.celcomen).parameters
        )
        try:
            _fit_on(adata, route, layer, seed, wrapper_takes_signed)
        except GraphDataError as err:
            if "zero expression" not in str(err):
                raise
            x = adata.layers[layer][:, _tissue_genes(adata)]
            keep = np.asarray(abs(x).sum(1)).ravel() > 0
            dropped = int((~keep).sum())
            adata = adata[keep].copy()
            _fit_on(adata, route, layer, seed, wrapper_takes_signed)
    fit_s = time.perf_counter() - start
    losses = np.asarray(adata.uns["celcomen"]["losses"])
    facts = {
        "dropped_empty_cells": dropped,
        "fit_s": fit_s,
        "final_loss": float(losses[-1]),
        "epochs": int(len(losses)),
        "warnings": sorted({str(w.message)[:160] for w in caught}),
        "signed_via": "wrapper" if wrapper_takes_signed else "Celcomen.fit + store_fit",
    }
    facts["size_factors"] = adata.uns["celcomen"].get("params", {}).get("size_factors")
    fitted = (_fitted_block(adata, "celcomen_intra"), _fitted_block(adata, "celcomen_inter"))
    return fitted, facts


def _fit_on(adata: Any, route: str, layer: str, seed: int, wrapper_takes_signed: bool) -> None:
    """One fit of ``route`` on ``adata`` (results in ``adata.uns`` / ``adata.varp``)."""
    if route != "signed" or wrapper_takes_signed:
        extra: dict[str, Any] = {"allow_negative": True} if route == "signed" else {}
        extra.update(ROUTE_PARAMS.get(route, {}))
        spatial.tools.celcomen(adata, layer=layer, progress=False, seed=seed, **extra)
    else:
        est = Celcomen(progress=False, seed=seed).fit(adata, layer=layer, allow_negative=True)
        spatial.tools.store_fit(adata, est, layer=layer)


def _tissue_genes(adata: Any) -> np.ndarray:
    """Positions of the tissue's coupled genes: ``var['highly_variable']`` when present."""
    if "highly_variable" in adata.var:
        return np.flatnonzero(np.asarray(adata.var["highly_variable"], dtype=bool))
    return np.arange(adata.n_vars)


def _fitted_block(adata: Any, key: str) -> np.ndarray:
    """The fitted matrix over the tissue's genes, in var order as the truth, dense float64.

    The library fits ``var['highly_variable']`` by default and writes ``[n_vars, n_vars]``
    matrices (CSR over the fitted block for a subset).
    """
    stored = adata.varp[key]
    genes = _tissue_genes(adata)
    block = stored[genes][:, genes]
    return np.asarray(block.toarray() if hasattr(block, "toarray") else block, dtype=np.float64)


def with_background(tissue: Any, adata: Any, genes: int, seed: int) -> Any:
    r"""``adata`` with a background transcriptome after the tissue's genes (``--background-genes``).

    A whole-transcriptome slide measures many genes besides the coupled ones; a user fits the
    highly variable ones, and the rest carry each cell's library size (the default size
    factors of the counts route, :mod:`spatial.celcomen`). ``genes`` background genes get
    counts :math:`\mathrm{Poisson}(s_i \nu_b)` with the tissue's own size factors :math:`s_i`
    (``count_params['size_factor']`` or ``['library_size']``), independent of the latent field,
    gene levels :math:`\nu_b \propto e^{1.5 z_b}` (:math:`z_b` standard normal) scaled so the
    background holds 10 times the tissue genes' mean count per cell. The panel world already
    draws its spots' UMIs over 2,000 background genes and keeps only their total
    (``obs['total_counts']``), so there the background is one column, the total less the panel.
    ``var['highly_variable']`` marks the tissue's genes; ``layers['log1p']`` becomes
    ``normalize_total`` over all genes then ``log1p`` (what the user computes); the signed
    layer is 0 on the background (never fitted).
    """
    from anndata import AnnData

    counts = np.asarray(adata.layers["counts"], dtype=np.float64)
    n, g = counts.shape
    if "total_counts" in adata.obs and "size_factor" not in tissue.count_params:
        rest = np.asarray(adata.obs["total_counts"], dtype=np.float64) - counts.sum(1)
        background = rest[:, None]  # [N, 1]: the panel world's background, summed
    else:
        params = tissue.count_params
        sizes = np.asarray(params.get("size_factor", params.get("library_size")), float)
        rng = np.random.default_rng([seed, 21])
        level = np.exp(1.5 * rng.standard_normal(genes))
        level *= 10 * counts.sum(1).mean() / (sizes.mean() * level.sum())
        background = rng.poisson(np.outer(sizes, level)).astype(np.float64)
    allc = np.hstack([counts, background])  # [N, G + B]
    totals = allc.sum(1, keepdims=True)
    out = AnnData(X=allc.astype(np.float32), obs=adata.obs.copy(), obsm=dict(adata.obsm))
    out.obs_names = adata.obs_names
    out.var_names = [*map(str, adata.var_names), *(f"bg{b}" for b in range(allc.shape[1] - g))]
    out.var["highly_variable"] = np.arange(allc.shape[1]) < g
    out.layers["counts"] = allc.astype(np.int64)
    out.layers["log1p"] = np.log1p(allc / totals * np.median(totals)).astype(np.float32)
    signed = np.zeros(allc.shape, dtype=np.float32)
    signed[:, :g] = np.asarray(adata.layers["signed"])
    out.layers["signed"] = signed
    for key in adata.obsp:
        out.obsp[key] = adata.obsp[key]
    out.uns = dict(adata.uns)
    return out


def route_matrix(adata: Any, route: str) -> np.ndarray:
    r"""The expression a route's baseline sees, dense float64 ``[N, G]``.

    ``counts`` sees :math:`\log(1 + c)` of the raw counts (its correlations are those of the
    gene-centred log counts the default route fits on raw counts); the others their layer as
    stored. Only the tissue's genes (``var['highly_variable']`` when present), dense.
    """
    layer = adata.layers[ROUTES[route]][:, _tissue_genes(adata)]
    x = np.asarray(layer.toarray() if hasattr(layer, "toarray") else layer, dtype=np.float64)
    return np.log1p(x) if route in ("counts", "counts_nosf") else x


def run_tissue(g: int, seed: int, args: argparse.Namespace) -> dict:
    start = time.perf_counter()
    tissue = WORLDS[args.world].simulate(
        args.cells,
        g,
        seed=seed,
        sweeps=args.sweeps,
        burn_in=args.burn_in,
        **(
            {"dtype": np.float32 if args.float32 else np.float64}
            if args.world == "metropolis"
            else {}
        ),
        **({} if args.size_factor_sd is None else {"library_sigma": args.size_factor_sd}),
    )
    sim_s = time.perf_counter() - start
    adata = tissue.to_anndata()
    if args.background_genes:
        adata = with_background(tissue, adata, args.background_genes, seed)
    truth = (tissue.W_intra, tissue.W_inter)
    run: dict[str, Any] = {
        "genes": g,
        "seed": seed,
        "cells": args.cells,
        "simulate_s": sim_s,
        "sampler": {k: v for k, v in tissue.report.as_dict().items() if k != "energy_trace"},
        "median_total_counts": float(np.median(tissue.counts.sum(1))),
        "zero_fraction": float((tissue.counts == 0).mean()),
        "routes": {},
    }
    matrices = {}
    for route in ROUTES:
        fitted, facts = fit_route(adata, route, seed)
        matrices[route] = fitted
        baseline = correlation_baselines(route_matrix(adata, route), tissue.edge_index)
        run["routes"][route] = {
            "celcomen": {**matrix_metrics(fitted, truth), **facts},
            "correlation": matrix_metrics(baseline, truth),
        }
    # Raw counts cannot identify the all-ones direction (library sizes move every cell along
    # it), so the log-counts route reports P W P, P = I - u u^T (u = 1 / sqrt(G) for
    # well-expressed genes; spatial._inputs.library_size_direction). The signed route keeps that
    # direction; scored as P W P with P = I - 1 1^T / G it is the reference a counts fit can
    # reach, and P W P of the true matrices is the ceiling of any counts fit.
    signed = run["routes"]["signed"]["celcomen"]
    project = np.eye(g) - np.full((g, g), 1.0 / g)
    reference = {}
    for which, est, tru in zip(("intra", "inter"), matrices["signed"], truth):
        reference[which] = scores(project @ est @ project, tru)["pearson"]
        signed[which]["pearson_projected"] = reference[which]
        signed[which]["pearson_ceiling_projected_truth"] = scores(project @ tru @ project, tru)[
            "pearson"
        ]
    for route in ROUTES:
        entry = run["routes"][route]["celcomen"]
        for which in ("intra", "inter"):
            entry[which]["pearson_gap_vs_signed"] = (
                entry[which]["pearson"] - signed[which]["pearson"]
            )
            entry[which]["pearson_gap_vs_signed_projected"] = (
                entry[which]["pearson"] - reference[which]
            )
    return run


def summarise(runs: list[dict], genes: list[int]) -> dict:
    keys = ("sign_agreement", "auroc_support", "pearson", "spearman", "ratio", "zero_offset")
    summary: dict[str, Any] = {}
    for g in genes:
        rows = [r for r in runs if r["genes"] == g]
        summary[str(g)] = {}
        for route in ROUTES:
            for method in METHODS:
                entry = {
                    which: {
                        k: float(np.nanmedian([r["routes"][route][method][which][k] for r in rows]))
                        for k in keys
                    }
                    for which in ("intra", "inter")
                }
                summary[str(g)][f"{route}/{method}"] = entry
        for target_route in ("counts", "counts_nosf", "counts_sphere"):
            counts = [r["routes"][target_route]["celcomen"] for r in rows]
            summary[str(g)][f"targets_{target_route}_route"] = _targets(counts)
    return summary


def _targets(counts: list[dict]) -> dict:
    """Issue 19's targets for the fits of one route over seeds."""
    return {
        "sign_intra_ge_0.9": all(c["intra"]["sign_agreement"] >= 0.9 for c in counts),
        "sign_inter_ge_0.85": all(c["inter"]["sign_agreement"] >= 0.85 for c in counts),
        "pearson_within_0.05_of_signed": all(
            abs(c[w]["pearson_gap_vs_signed"]) <= 0.05 for c in counts for w in ("intra", "inter")
        ),
        # against the signed fit reported as P W P, as the counts route reports (run_tissue)
        "pearson_within_0.05_of_signed_projected": all(
            c[w]["pearson_gap_vs_signed_projected"] >= -0.05
            for c in counts
            for w in ("intra", "inter")
        ),
        "ratio_in_0.8_1.25": all(
            0.8 <= c[w]["ratio"] <= 1.25 for c in counts for w in ("intra", "inter")
        ),
    }


def print_table(summary: dict, n_runs: dict[str, int]) -> None:
    header = (
        f"{'G':>4} {'route/method':22s} {'sign':>11s} {'AUROC supp':>11s} {'Pearson':>11s} "
        f"{'Spearman':>11s} {'ratio':>11s} {'zero offs.':>11s}"
    )
    print("\nmedians over seeds, intra / inter (off-diagonal entries)")
    print(header)
    for g, per in summary.items():
        for name, entry in per.items():
            if name.startswith("targets"):
                continue
            cells = " ".join(
                f"{entry['intra'][k]:+.2f}/{entry['inter'][k]:+.2f}"
                for k in (
                    "sign_agreement",
                    "auroc_support",
                    "pearson",
                    "spearman",
                    "ratio",
                    "zero_offset",
                )
            )
            print(f"{g:>4} {name:22s} {cells}")
        for route in ("counts", "counts_nosf", "counts_sphere"):
            print(f"{g:>4} targets ({route}, {n_runs[g]} runs): {per[f'targets_{route}_route']}")


def code_state() -> dict:
    """The commit and the modified files under spatial/ (the benchmark reports the tree it ran)."""
    root = Path(__file__).resolve().parents[1]

    def git(*cmd: str) -> str:
        try:
            proc = subprocess.run(["git", *cmd], cwd=root, capture_output=True, text=True)
        except OSError:
            return ""
        return proc.stdout.strip() if proc.returncode == 0 else ""

    return {
        "commit": git("rev-parse", "HEAD"),
        "modified_spatial": git("diff", "--name-only", "--", "spatial").split(),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--world",
        choices=tuple(WORLDS),
        default="metropolis",
        help="simulator (default metropolis; slidetags, written in session 32, is held out and "
        "has never been fitted)",
    )
    parser.add_argument("--genes", default="10,20", help="gene counts (default 10,20)")
    parser.add_argument("--cells", type=int, default=2000, help="cells per tissue (default 2000)")
    parser.add_argument("--seeds", type=int, default=2, help="tissues per gene count (default 2)")
    parser.add_argument(
        "--sweeps",
        type=int,
        default=None,
        help="sampler sweeps (default 600; beads 1800; visium 150; stereo 1200)",
    )
    parser.add_argument(
        "--burn-in",
        type=int,
        default=None,
        help="burn-in sweeps (default 300; beads 900; visium 75; stereo 600)",
    )
    parser.add_argument("--float32", action="store_true", help="sample in float32 (2x faster)")
    parser.add_argument(
        "--size-factor-sd",
        type=float,
        default=None,
        help="sd of the log library sizes of the metropolis / gibbs_pln tissues (default: the "
        "world's own, 0.4 / 0.5; 0 = equal depth in every cell)",
    )
    parser.add_argument(
        "--background-genes",
        type=int,
        default=0,
        help="add this many background genes sharing the cells' size factors (a whole "
        "transcriptome; the panel world adds its own background as one column); default 0",
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--out", default=None, help="write the results as JSON here")
    args = parser.parse_args(argv)
    sweeps, burn_in = SWEEPS.get(args.world, (600, 300))
    args.sweeps = sweeps if args.sweeps is None else args.sweeps
    args.burn_in = burn_in if args.burn_in is None else args.burn_in
    if args.size_factor_sd is not None:
        if args.world in (
            "bistable_nb",
            "panel",
            "wholetx",
            "xenium",
            "beads",
            "visium",
            "stereo",
            "merfish",
            "slidetags",
        ):
            parser.error(
                f"--size-factor-sd: {args.world} draws its own size factors (bistable_nb: "
                "log-normal size factors; panel, held out: log-normal UMI totals; wholetx, held "
                "out: cell-type and cell-size dependent size factors; xenium, held out: "
                "segmented-area size factors; beads, held out: per-bead capture efficiency; "
                "visium, held out: summed cells and a log-normal spot capture efficiency; "
                "stereo, held out: segmented cells with a per-cell capture efficiency and "
                "ambient RNA; merfish, held out: section fraction, cell volume and optical "
                "crowding; slidetags, held out: nuclear RNA content, droplet capture and "
                "read-depth saturation); use it with --world metropolis or gibbs_pln"
            )
        if args.size_factor_sd < 0:
            parser.error(f"--size-factor-sd: expected >= 0, got {args.size_factor_sd}")
    if args.background_genes and args.world == "wholetx":
        parser.error("--background-genes: wholetx holds its own 2,000 other genes; drop it")
    if args.background_genes and args.world == "xenium":
        parser.error("--background-genes: xenium holds its own panel genes; drop it")
    if args.background_genes and args.world == "beads":
        parser.error("--background-genes: beads holds its own other genes (500-1,000); drop it")
    if args.background_genes and args.world == "visium":
        parser.error("--background-genes: visium holds its own other genes (1,000-3,000); drop it")
    if args.background_genes and args.world == "stereo":
        parser.error("--background-genes: stereo holds its own other genes (1,000-3,000); drop it")
    if args.background_genes and args.world == "merfish":
        parser.error("--background-genes: merfish holds its own panel genes; drop it")
    if args.background_genes and args.world == "slidetags":
        parser.error("--background-genes: slidetags holds its own other genes (800-2,000); drop it")
    if args.background_genes < 0:
        parser.error(f"--background-genes: expected >= 0, got {args.background_genes}")
    genes = [int(v) for v in args.genes.split(",")]
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    runs = []
    for g in genes:
        for seed in range(args.seeds):
            run = run_tissue(g, seed, args)
            runs.append(run)
            c = run["routes"]["counts"]["celcomen"]
            s = run["routes"]["signed"]["celcomen"]
            print(
                f"G={g:3d} seed={seed} sim {run['simulate_s']:.0f}s acc "
                f"{run['sampler'].get('acceptance', 1.0):.2f} chains z "
                f"{run['sampler']['x2_max_z']:.1f} "
                f"(null {run['sampler']['x2_z_null_median']:.1f}) | "
                f"sign counts {c['intra']['sign_agreement']:.2f}/{c['inter']['sign_agreement']:.2f}"
                f" signed {s['intra']['sign_agreement']:.2f}/{s['inter']['sign_agreement']:.2f} | "
                f"ratio counts {c['intra']['ratio']:.2f}/{c['inter']['ratio']:.2f}",
                flush=True,
            )
    summary = summarise(runs, genes)
    print_table(summary, {str(g): sum(r["genes"] == g for r in runs) for g in genes})
    results = {
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "torch": torch.__version__,
            "threads": args.threads,
        },
        "args": vars(args),
        "code": code_state(),
        "runs": runs,
        "summary": summary,
        "wall_s": time.perf_counter() - start,
    }
    if args.out:
        path = Path(args.out)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps(results, indent=1, default=str))
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
