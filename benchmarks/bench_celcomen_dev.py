r"""Celcomen recovery from counts vs signed coordinates on the library's own simulator (dev set).

Tissues: :func:`spatial.simulate.simulate_tissue` (hex grid, 6-NN, Langevin, distinct signed
truths), ``--cells`` cells, G in ``--genes``, seeds ``0 .. --seeds - 1``. Routes: the signed
sphere coordinates (``allow_negative=True``), ``layers['counts']`` ~ Poisson(depth (1 + x))
(:meth:`SimulatedTissue.to_anndata`) through the default ``transform="auto"`` (the log-counts
route on raw counts), scanpy ``normalize_total`` + ``log1p`` of the counts, and
``counts_sphere``: the counts with ``transform="sphere"`` (the paper's :math:`c / \lVert c
\rVert`; the default before session 16).
Configurations: ``ours`` (defaults), ``paper_energy`` (``fields=False``), ``old_default`` (the
former default: Adam 300 epochs, no fields, ridge 1e-2 on the mean loss = lambda 0.01 N).

Metrics on the off-diagonals: sign agreement on the true non-zeros, support AUROC of
``|fitted|``, Pearson, and the scale fitted / (beta x truth) with beta one least-squares scale
over both matrices. Beside each route, the correlation baselines of
``benchmarks.bench_celcomen.correlation_baselines`` on the expression that route sees (config
``correlation``; ``counts`` sees ``log1p`` of the counts, whose correlations the gene centring
leaves unchanged; ``counts_sphere`` the raw counts). This is the development set the estimator
was built on; the other worlds are ``bench_celcomen_counts --world metropolis`` (where the
log-counts route was developed), ``--world gibbs_pln`` (held out until session 18 looked at it),
``--world bistable_nb`` (held out in session 19) and ``--world panel`` (held out since session
20).

Usage::

    python -m benchmarks.bench_celcomen_dev --cells 2000 --depth 100 \
        [--configs ours] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import warnings

import numpy as np
import torch


def _offdiag(a) -> np.ndarray:
    a = np.asarray(a)
    return a[np.triu_indices(a.shape[0], 1)]


def _metrics(est, tissue) -> dict:
    """Sign, support AUROC, Pearson and scale of ``est`` (``W_intra_``, ``W_inter_``)."""
    return _matrix_metrics(est.W_intra_, est.W_inter_, tissue)


def _matrix_metrics(w_intra, w_inter, tissue) -> dict:
    """Off-diagonal metrics of a pair of fitted matrices against the tissue's truth."""
    from sklearn.metrics import roc_auc_score

    fit = {"intra": _offdiag(w_intra), "inter": _offdiag(w_inter)}
    truth = {"intra": _offdiag(tissue.W_intra), "inter": _offdiag(tissue.W_inter)}
    f_all, t_all = np.concatenate(list(fit.values())), np.concatenate(list(truth.values()))
    beta = f_all @ t_all / (t_all @ t_all)
    out = {}
    for k in fit:
        f, t = fit[k], truth[k]
        nz = t != 0
        out[k] = {
            "sign": float((np.sign(f[nz]) == np.sign(t[nz])).mean()),
            "auroc": float(roc_auc_score(nz, np.abs(f))),
            "pearson": float(np.corrcoef(f, t)[0, 1]),
            "scale": float((f @ t / (t @ t)) / beta),
        }
    return out


ROUTES = ("signed", "counts", "log1p", "counts_sphere")
CONFIGS = {
    "ours": {},
    "paper_energy": {"fields": False},
    "old_default": {"fields": False, "optimizer": "adam", "weight_decay_per_cell": 1e-2},
}


def main() -> None:
    """Fit every route and configuration and print a table and a JSON summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=1000)
    parser.add_argument("--genes", type=int, nargs="+", default=[10, 20])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--depth", type=float, default=100.0)
    parser.add_argument(
        "--configs",
        nargs="+",
        choices=tuple(CONFIGS),
        default=list(CONFIGS),
        help="configurations to fit (default all)",
    )
    parser.add_argument(
        "--routes", nargs="+", choices=ROUTES, default=list(ROUTES), help="default all"
    )
    parser.add_argument("--out", default=None, help="write the summary as JSON here")
    args = parser.parse_args()
    torch.set_num_threads(1)

    import scanpy as sc

    from benchmarks.bench_celcomen import correlation_baselines
    from spatial.celcomen import Celcomen
    from spatial.simulate import simulate_tissue

    table = collections.defaultdict(list)
    for g in args.genes:
        for seed in range(args.seeds):
            tissue = simulate_tissue(args.cells, g, steps=4000, seed=seed)
            adata = tissue.to_anndata(depth=args.depth, seed=seed)
            logged = adata.copy()
            logged.X = logged.layers["counts"].copy()
            sc.pp.normalize_total(logged)
            sc.pp.log1p(logged)
            seen = {
                "signed": np.asarray(adata.X, dtype=np.float64),
                "counts": np.log1p(np.asarray(adata.layers["counts"], dtype=np.float64)),
                "log1p": np.asarray(logged.X, dtype=np.float64),
                "counts_sphere": np.asarray(adata.layers["counts"], dtype=np.float64),
            }
            edges = tissue.edge_index.numpy()
            for route in args.routes:
                base = correlation_baselines(seen[route], edges)
                table[("correlation", route, g)].append(_matrix_metrics(*base, tissue))
            for name in args.configs:
                params = dict(CONFIGS[name])
                if "weight_decay_per_cell" in params:
                    params["weight_decay"] = params.pop("weight_decay_per_cell") * args.cells
                for route in args.routes:
                    extra = {"transform": "sphere"} if route == "counts_sphere" else {}
                    est = Celcomen(progress=False, **params, **extra)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        if route == "signed":
                            est.fit(adata, allow_negative=True)
                        elif route in ("counts", "counts_sphere"):
                            est.fit(adata, layer="counts")
                        else:
                            est.fit(logged)
                    table[(name, route, g)].append(_metrics(est, tissue))
    print(f"cells={args.cells} depth={args.depth} seeds={args.seeds} (means over seeds)")
    print("config       route      G   | intra sign auroc pearson scale | inter sign auroc ...")
    summary = {}
    for (name, route, g), runs in table.items():
        mean = {
            k: {q: float(np.mean([r[k][q] for r in runs])) for q in runs[0][k]}
            for k in ("intra", "inter")
        }
        summary[f"{name}/{route}/G{g}"] = mean
        cells = " | ".join(
            " ".join(f"{mean[k][q]:.3f}" for q in ("sign", "auroc", "pearson", "scale"))
            for k in ("intra", "inter")
        )
        print(f"{name:12s} {route:10s} {g:3d} | {cells}")
    print(json.dumps(summary))
    if args.out:
        with open(args.out, "w") as handle:
            json.dump({"args": vars(args), "summary": summary}, handle, indent=1)


if __name__ == "__main__":
    main()
