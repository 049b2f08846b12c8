"""``graphlib spatial``: simulate a tissue, fit Celcomen, run a knock-out counterfactual.

``graphlib spatial simulate --cells 600 --genes 8 --out tissue.h5ad`` writes a simulated tissue
(signed sphere coordinates in ``X``, truth in ``varp['true_*']``); ``graphlib spatial fit
IN.h5ad --out OUT.h5ad`` writes ``varp['celcomen_intra'/'celcomen_inter']``; ``graphlib spatial
intervene IN.h5ad --gene IFITM3=0 --cells-where cluster=3 --out OUT.h5ad`` writes the
counterfactual layers. Outputs are written atomically.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

import anndata
import numpy as np

from graphdata.atomic import atomic_path
from graphdata.device import resolve_device
from graphdata.errors import GraphDataError
from spatial import tools
from spatial.celcomen import OBJECTIVES, Celcomen, CelcomenConfig
from spatial.simulate import simulate_tissue

__all__ = ["add_subparser", "parse_genes", "write_h5ad"]

#: Estimator name -> class (one today; a visible dict, no registry).
ESTIMATORS = {"celcomen": Celcomen}


def parse_genes(items: list[str]) -> dict[str, float]:
    """Parse ``["IFITM3=0", "CD74=2.5"]`` into ``{"IFITM3": 0.0, "CD74": 2.5}``.

    Examples:
        >>> parse_genes(["IFITM3=0", "CD74=2.5"])
        {'IFITM3': 0.0, 'CD74': 2.5}
    """
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            out[name] = float(value)
        except ValueError:
            sep = ""
        if not sep or not name:
            raise GraphDataError(f"--gene: expected NAME=VALUE, e.g. IFITM3=0, got {item!r}")
    return out


def write_h5ad(adata: anndata.AnnData, path: str | Path) -> None:
    """Write ``adata`` to ``path`` atomically (temporary file in the same folder, then rename)."""
    with atomic_path(path, suffix=".h5ad") as tmp:
        adata.write_h5ad(tmp)


def _simulate(args: argparse.Namespace) -> int:
    print(f"spatial simulate: cells={args.cells} genes={args.genes} layout={args.layout} "
          f"steps={args.steps} seed={args.seed} out={args.out}")
    tissue = simulate_tissue(args.cells, args.genes, layout=args.layout, steps=args.steps,
                             seed=args.seed)
    write_h5ad(tissue.to_anndata(), args.out)
    print(f"wrote {args.out}")
    return 0


def _fit(args: argparse.Namespace) -> int:
    device = resolve_device(args.device)
    config = CelcomenConfig(objective=args.objective, epochs=args.epochs, lr=args.lr,
                            batch_size=args.batch_size, seed=args.seed)
    print(f"spatial fit: estimator={args.estimator} device={device} config={asdict(config)}")
    adata = anndata.read_h5ad(args.input)
    tools.celcomen(adata, spatial_key=args.spatial_key, layer=args.layer, config=config,
                   device=device)
    losses = adata.uns["celcomen"]["losses"]
    print(f"final loss {losses[-1]:.4f} after {len(losses)} epochs")
    write_h5ad(adata, args.out)
    print(f"wrote {args.out}")
    return 0


def _intervene(args: argparse.Namespace) -> int:
    device = resolve_device(args.device)
    genes = parse_genes(args.gene)
    adata = anndata.read_h5ad(args.input)
    if args.cells_where:
        column, _, value = args.cells_where.partition("=")
        if column not in adata.obs:
            raise GraphDataError(f"--cells-where: no obs column {column!r}")
        cells = np.asarray(adata.obs[column].astype(str) == value)
    else:
        cells = [c for c in args.cells.split(",") if c]
    shown = int(np.sum(cells)) if args.cells_where else cells
    print(f"spatial intervene: genes={genes} cells={shown} steps={args.steps} "
          f"step_size={args.step_size or 'auto'} horizon={args.horizon} device={device}")
    tools.intervene(adata, genes, cells, steps=args.steps, step_size=args.step_size,
                    horizon=args.horizon, layer=args.layer, device=device)
    print(f"step size used: {adata.uns['celcomen']['perturbation']['step_size']:.4g}")
    size = adata.uns["celcomen"]["perturbation"]["ring_size"]
    print(f"cells per ring (0, 1, 2, 3+): {size.tolist()}")
    write_h5ad(adata, args.out)
    print(f"wrote {args.out}")
    return 0


def add_subparser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``graphlib spatial`` with ``simulate``, ``fit`` and ``intervene``."""
    parser = subparsers.add_parser("spatial", help="Celcomen on spatial transcriptomics")
    sub = parser.add_subparsers(dest="spatial_command", required=True)

    sim = sub.add_parser("simulate", help="write a simulated tissue as .h5ad")
    sim.add_argument("--cells", type=int, default=600, help="cells (default: %(default)s)")
    sim.add_argument("--genes", type=int, default=8, help="genes (default: %(default)s)")
    sim.add_argument("--layout", choices=("hex", "random"), default="hex")
    sim.add_argument("--steps", type=int, default=2000, help="Langevin steps")
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--out", required=True, help="output .h5ad")
    sim.set_defaults(func=_simulate)

    fit = sub.add_parser("fit", help="fit Celcomen and store varp['celcomen_*']")
    fit.add_argument("input", help="input .h5ad (coordinates in obsm or a graph in obsp)")
    fit.add_argument("--out", required=True, help="output .h5ad")
    fit.add_argument("--estimator", choices=sorted(ESTIMATORS), default="celcomen")
    fit.add_argument("--objective", choices=sorted(OBJECTIVES), default="score_matching")
    fit.add_argument("--epochs", type=int, default=300)
    fit.add_argument("--lr", type=float, default=0.05)
    fit.add_argument("--batch-size", type=int, default=None)
    fit.add_argument("--layer", default=None, help="expression layer (default: X)")
    fit.add_argument("--spatial-key", default="spatial")
    fit.add_argument("--seed", type=int, default=0)
    fit.add_argument("--device", default="auto", help="auto, cpu or cuda (default: auto)")
    fit.set_defaults(func=_fit)

    cf = sub.add_parser("intervene", help="clamp genes in cells and store the effect")
    cf.add_argument("input", help="fitted .h5ad")
    cf.add_argument("--out", required=True, help="output .h5ad")
    cf.add_argument("--gene", action="append", required=True, help="NAME=VALUE, repeatable")
    group = cf.add_mutually_exclusive_group(required=True)
    group.add_argument("--cells", help="comma-separated obs names")
    group.add_argument("--cells-where", help="COLUMN=VALUE selecting cells by an obs column")
    cf.add_argument("--steps", type=int, default=50)
    cf.add_argument("--step-size", type=float, default=None,
                    help="Riemannian step; default: --horizon model time units over --steps")
    cf.add_argument("--horizon", type=float, default=4.0,
                    help="relaxation time in model time units 1/L (used without --step-size)")
    cf.add_argument("--layer", default=None)
    cf.add_argument("--device", default="auto")
    cf.set_defaults(func=_intervene)
