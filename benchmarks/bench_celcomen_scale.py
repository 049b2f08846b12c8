"""Celcomen fit at real sizes on one CPU thread: wall time, peak memory, GFLOP/s vs plain matmul.

Synthetic tissue: ``--cells`` uniform random positions, a directed 6-NN graph, and
non-negative unit rows ``|z| / ||z||`` with ``z ~ N(0, I)`` (``--genes`` genes), the shape of
normalised counts. The fit is ``Celcomen(progress=False).fit(x, edge_index)`` with the defaults
(score matching by conjugate gradients); a pass costs the four ``[N, G] x [G, G]`` products
``x @ W_intra``, ``n @ W_inter`` and the two gradient products, ``8 N G^2`` flops, which is
compared with a plain ``torch.matmul`` of the same shapes. ``--counts``: raw counts instead,
``Poisson(exp(2 + z))`` per cell and gene, which the default ``transform="auto"`` fits by the
log-counts route (the route a user with raw counts now takes).

Usage::

    python -m benchmarks.bench_celcomen_scale --cells 100000 --genes 500
    python -m benchmarks.bench_celcomen_scale --cells 1000000 --genes 200

Targets (issue 19): 100k x 500 in <= 5 minutes and <= 4 GiB peak RSS; 1M x 200 within 24 GiB.
"""

from __future__ import annotations

import argparse
import json
import resource
import time

import torch


def _peak_rss_gib() -> float:
    # Linux reports ru_maxrss in KiB.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _matmul_gflops(n: int, g: int, repeats: int = 3) -> float:
    """GFLOP/s of ``[N, G] @ [G, G]`` in chunks of the fit's size (same thread count)."""
    chunk = max(1024, 2**22 // g)
    a = torch.rand(chunk, g)
    w = torch.rand(g, g)
    a @ w  # warm-up
    start = time.perf_counter()
    rows = 0
    for _ in range(repeats):
        for s in range(0, n, chunk):
            rows += (a[: min(chunk, n - s)] @ w).shape[0]
    return 2.0 * rows * g * g / (time.perf_counter() - start) / 1e9


def main() -> None:
    """Fit once and print a JSON record."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=100_000)
    parser.add_argument("--genes", type=int, default=500)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--counts", action="store_true", help="raw counts (log-counts route)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    from graphdata.spatial import knn_graph
    from spatial.celcomen import Celcomen

    gen = torch.Generator().manual_seed(args.seed)
    coords = torch.rand(args.cells, 2, generator=gen) * (args.cells**0.5)
    edge_index, _ = knn_graph(coords, 6)
    del coords
    x = torch.randn(args.cells, args.genes, generator=gen)
    if args.counts:
        x = torch.poisson(x.add_(2.0).exp_(), generator=gen)
    else:
        x.abs_()
        x /= x.norm(dim=1, keepdim=True)
    rss_data = _peak_rss_gib()

    start = time.perf_counter()
    est = Celcomen(progress=False).fit(x, edge_index)
    fit_s = time.perf_counter() - start
    passes = est.n_iter_ + 2  # the b = grad(0) pass and the final check
    flops = 8.0 * args.cells * args.genes**2 * passes
    fit_gflops = flops / fit_s / 1e9
    plain = _matmul_gflops(args.cells, args.genes)
    record = {
        "cells": args.cells,
        "genes": args.genes,
        "threads": args.threads,
        "transform": est.transform_,
        "fit_s": round(fit_s, 1),
        "cg_iterations": est.n_iter_,
        "relative_gradient": est.relative_gradient_,
        "converged": est.converged_,
        "s_per_pass": round(fit_s / passes, 2),
        "peak_rss_gib": round(_peak_rss_gib(), 2),
        "rss_after_data_gib": round(rss_data, 2),
        "fit_gflops": round(fit_gflops, 1),
        "plain_matmul_gflops": round(plain, 1),
        "gflops_ratio": round(fit_gflops / plain, 2),
    }
    print(json.dumps(record))


if __name__ == "__main__":
    main()
