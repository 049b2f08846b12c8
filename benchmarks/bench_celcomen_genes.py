"""Celcomen on a slide with many genes: the HVG mask, sparse X read in blocks, the size refusal.

Issue 19's target: "2,000 highly variable genes of a 20,000-gene slide: fits with the HVG mask
in <= 10 minutes on CPU; without a mask, a clear refusal naming the memory needed and the fix".

Default run (one thread): a 2,000 cells x 20,000 genes sparse CSR AnnData of Poisson counts
(density 0.05, a random per-gene rate, so some genes vary more than others), highly variable
genes by ``sc.pp.highly_variable_genes(n_top_genes=2000, flavor="seurat")`` on a
normalize_total + log1p copy (the flag is copied to the counts AnnData, whose X stays sparse);
then

1. ``Celcomen().fit(adata, mask_var=False)`` (every gene): the refusal, its time and the RSS
   it added (nothing large is allocated);
2. ``Celcomen(epochs=E).fit(adata)`` with the flag (the default ``mask_var``): time and peak
   RSS; ``--epochs`` (default: the config's 300, the solver stops earlier at ``tol``).

``--calibrate`` instead measures the peak RSS increase of fits at several (N, G), each in a
fresh process, and compares it with :func:`spatial._inputs.fit_memory_bytes` (the estimate
must not be below the measurement). Peak RSS is ``resource.getrusage(...).ru_maxrss``.

Run: ``python -m benchmarks.bench_celcomen_genes [--epochs 300] [--calibrate]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np


def _rss_now() -> int:
    """Current resident set size in bytes (Linux /proc)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def make_slide(n_cells: int, n_genes: int, density: float, seed: int):
    """Sparse CSR Poisson counts with obsm['spatial'] and var['highly_variable'] (seurat)."""
    import scanpy as sc
    import scipy.sparse as sp
    from anndata import AnnData

    rng = np.random.default_rng(seed)
    rate = rng.gamma(0.5, 4.0, size=n_genes)  # per-gene mean: a few genes vary a lot
    x = sp.random(n_cells, n_genes, density=density, format="csr", random_state=seed)
    x.data = (1.0 + rng.poisson(rate[x.indices])).astype(np.float32)
    x.sort_indices()
    adata = AnnData(X=x.astype(np.float32), obsm={"spatial": rng.random((n_cells, 2)) * 100})
    adata.var_names = [f"g{j}" for j in range(n_genes)]
    log = adata.copy()
    sc.pp.normalize_total(log)
    sc.pp.log1p(log)
    sc.pp.highly_variable_genes(log, n_top_genes=2000, flavor="seurat")
    adata.var["highly_variable"] = log.var["highly_variable"].to_numpy()
    return adata


def run_slide(args: argparse.Namespace) -> dict:
    import torch

    from graphdata.errors import GraphDataError
    from spatial.celcomen import Celcomen

    torch.set_num_threads(1)
    adata = make_slide(args.cells, args.genes, args.density, args.seed)
    out: dict = {
        "cells": args.cells,
        "genes": args.genes,
        "hvg": int(adata.var["highly_variable"].sum()),
        "nnz": int(adata.X.nnz),
        "x_format": adata.X.format,
    }
    base = _rss_now()
    start = time.perf_counter()
    try:
        Celcomen(progress=False).fit(adata, mask_var=False)
        out["refusal"] = None
    except GraphDataError as e:
        out["refusal"] = str(e)
    out["refusal_s"] = time.perf_counter() - start
    out["refusal_rss_increase_gib"] = (_rss_now() - base) / 2**30
    out["rss_before_fit_gib"] = _rss_now() / 2**30
    start = time.perf_counter()
    est = Celcomen(epochs=args.epochs, progress=False).fit(adata)
    out["fit_s"] = time.perf_counter() - start
    out["fit_iterations"] = est.n_iter_  # losses_ has one entry per iteration (not n + 1)
    out["converged"] = bool(getattr(est, "converged_", True))
    out["relative_gradient"] = est.relative_gradient_  # None (JSON null) for adam/sgd
    out["genes_used"] = len(est.var_names_)
    out["peak_rss_gib"] = _peak_rss() / 2**30
    out["x_still_sparse"] = adata.X.format
    return out


def _one_calibration(n: int, g: int, optimizer: str) -> dict:
    """Fit once in this process; peak RSS increase over the state just before the fit."""
    import scipy.sparse as sp
    import torch
    from anndata import AnnData

    from spatial._inputs import fit_memory_bytes
    from spatial.celcomen import Celcomen

    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    x = sp.random(n, g, density=0.1, format="csr", random_state=0, dtype=np.float32)
    x.data[:] = 1.0 + rng.poisson(3.0, size=x.nnz)
    x = x + sp.csr_matrix((np.ones(n, np.float32), (np.arange(n), np.arange(n) % g)), (n, g))
    adata = AnnData(X=x.tocsr(), obsm={"spatial": rng.random((n, 2))})
    import gc

    gc.collect()
    base = _rss_now()
    est = Celcomen(optimizer=optimizer, epochs=3, progress=False)
    est.fit(adata, mask_var=False, max_genes=None)
    measured = _peak_rss() - base
    estimate = fit_memory_bytes(n, g)
    return {"n": n, "g": g, "optimizer": optimizer, "measured": measured, "estimate": estimate}


def calibrate() -> list[dict]:
    sizes = [
        (60000, 100), (20000, 200), (30000, 500), (8000, 800), (2000, 1500), (4000, 2000),
        (200, 2500), (1000, 3000), (500, 4000),
    ]  # fmt: skip
    rows = []
    for n, g in sizes:
        for optimizer in ("auto", "adam"):
            code = (
                "import json, benchmarks.bench_celcomen_genes as b; "
                f"print(json.dumps(b._one_calibration({n}, {g}, {optimizer!r})))"
            )
            env = {**os.environ, "OMP_NUM_THREADS": "1"}
            done = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
            )
            row = json.loads(done.stdout.strip().splitlines()[-1])
            row["ratio"] = row["measured"] / row["estimate"]
            rows.append(row)
            print(
                f"N={n:>6} G={g:>5} {optimizer:>5}: measured {row['measured'] / 2**20:8.1f} MiB, "
                f"estimate {row['estimate'] / 2**20:8.1f} MiB, ratio {row['ratio']:.2f}",
                flush=True,
            )
    # Least squares per solver of the measured bytes on (4 N G, 4 G^2, 1 MB), for the record.
    for optimizer in ("auto", "adam"):
        mine = [r for r in rows if r["optimizer"] == optimizer]
        a = np.array([[4 * r["n"] * r["g"], 4 * r["g"] ** 2, 1e6] for r in mine], dtype=float)
        coef = np.linalg.lstsq(a, np.array([r["measured"] for r in mine], float), rcond=None)[0]
        print(
            f"{optimizer}: bytes ~ 4 x ({coef[0]:.1f} N G + {coef[1]:.1f} G^2) + "
            f"{coef[2]:.0f} MB; worst measured / estimate "
            f"{max(r['ratio'] for r in mine):.2f}"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=2000)
    parser.add_argument("--genes", type=int, default=20000)
    parser.add_argument("--density", type=float, default=0.05)
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--calibrate", action="store_true")
    args = parser.parse_args()
    if args.calibrate:
        calibrate()
        return
    out = run_slide(args)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
