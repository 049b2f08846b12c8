"""``graphlib spatial``: simulate a tissue, fit Celcomen, run a knock-out counterfactual.

``graphlib spatial simulate --cells 600 --genes 8 --out tissue.h5ad`` writes a simulated tissue
(signed sphere coordinates in ``X``, truth in ``varp['true_*']``); ``graphlib spatial fit
IN.h5ad --out OUT.h5ad`` writes ``varp['celcomen_intra'/'celcomen_inter']``; ``graphlib spatial
intervene IN.h5ad --gene IFITM3=0 --cells-where cluster=3 --out OUT.h5ad`` writes the
counterfactual layers. Outputs are written atomically, after a check that their folder has
room for them (h5py crashes on a full disk); ``--out`` is checked before the work starts, inputs
that are not readable ``.h5ad`` files end with one message naming the file, and every numeric
flag is validated at parse time (:mod:`graphdata.cli_types`).
"""

from __future__ import annotations

import argparse
import math
from dataclasses import asdict
from pathlib import Path
from typing import Any

from graphdata import cli_types
from graphdata.errors import GraphDataError
from graphdata.tracking import TRACKERS
from graphlib_ml.cli._flags import add_config_flags, config_values

__all__ = ["ESTIMATORS", "add_subparser", "parse_genes"]

#: Estimator names (one today; a visible tuple, no registry): ``celcomen`` is
#: :class:`spatial.celcomen.Celcomen`.
ESTIMATORS = ("celcomen",)
#: CelcomenConfig fields ``spatial fit`` flags (argparse dest -> field), filled with the parser.
_FIT_FLAGS: dict[str, str] = {}


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
        if not math.isfinite(out[name]):
            raise GraphDataError(
                f"--gene: expected a finite VALUE in NAME=VALUE, got {item!r}; pass a finite "
                "number, e.g. IFITM3=0"
            )
    return out


def _simulate(args: argparse.Namespace) -> int:
    from graphdata.run_folder import check_output_file
    from spatial.io import write_h5ad
    from spatial.simulate import simulate_tissue

    check_output_file(args.out, argument="--out")
    print(
        f"spatial simulate: cells={args.cells} genes={args.genes} layout={args.layout} "
        f"steps={args.steps} seed={args.seed} out={args.out}"
    )
    tissue = simulate_tissue(
        args.cells, args.genes, layout=args.layout, steps=args.steps, seed=args.seed
    )
    write_h5ad(tissue.to_anndata(), args.out)
    print(f"wrote {args.out}")
    return 0


def _fit(args: argparse.Namespace) -> int:
    from graphdata.device import resolve_device
    from graphdata.run_folder import check_output_file
    from spatial import tools
    from spatial.celcomen import CelcomenConfig
    from spatial.io import read_h5ad, write_h5ad

    check_output_file(args.out, argument="--out")
    device = resolve_device(args.device)
    config = CelcomenConfig(**config_values(args, _FIT_FLAGS))
    print(f"spatial fit: estimator={args.estimator} device={device} config={asdict(config)}")
    adata = read_h5ad(args.input)
    tracker = None
    if args.tracker is not None:
        from graphdata.tracking import make_tracker

        folder = _tracking_folder(args)
        tracker = make_tracker(
            args.tracker,
            folder,
            tracking_uri=args.tracking_uri,
            run_name="spatial fit",
            step_key="epoch",
        )
        print(f"tracking: {args.tracker} in {args.tracking_uri or folder}")
    try:
        tools.celcomen(
            adata,
            spatial_key=args.spatial_key,
            layer=args.layer,
            config=config,
            device=device,
            tracker=tracker,
        )
    finally:
        if tracker is not None:
            tracker.close()
    losses = adata.uns["celcomen"]["losses"]
    print(f"final loss {losses[-1]:.4f} after {len(losses)} epochs")
    write_h5ad(adata, args.out)
    print(f"wrote {args.out}")
    return 0


def _tracking_folder(args: argparse.Namespace) -> Path:
    """``--tracker-dir``, else ``OUT`` without ``.h5ad`` plus ``.tracking`` next to it."""
    if args.tracker_dir is not None:
        return Path(args.tracker_dir)
    out = Path(args.out)
    return out.with_name(out.stem + ".tracking")


def _intervene(args: argparse.Namespace) -> int:
    import numpy as np

    from graphdata.device import resolve_device
    from graphdata.run_folder import check_output_file
    from spatial import tools
    from spatial.io import read_h5ad, write_h5ad

    genes = parse_genes(args.gene)
    check_output_file(args.out, argument="--out")
    device = resolve_device(args.device)
    adata = read_h5ad(args.input)
    cells: Any
    if args.cells_where:
        column, _, value = args.cells_where.partition("=")
        if column not in adata.obs:
            raise GraphDataError(f"--cells-where: no obs column {column!r}")
        cells = np.asarray(adata.obs[column].astype(str) == value)
    else:
        cells = [c for c in args.cells.split(",") if c]
    shown = int(np.sum(cells)) if args.cells_where else cells
    print(
        f"spatial intervene: genes={genes} cells={shown} steps={args.steps} "
        f"step_size={args.step_size or 'auto'} horizon={args.horizon} device={device}"
    )
    tools.intervene(
        adata,
        genes,
        cells,
        steps=args.steps,
        step_size=args.step_size,
        horizon=args.horizon,
        layer=args.layer,
        device=device,
        progress=not args.no_progress,
    )
    print(f"step size used: {adata.uns['celcomen']['perturbation']['step_size']:.4g}")
    size = adata.uns["celcomen"]["perturbation"]["ring_size"]
    print(f"cells per ring (0, 1, 2, 3+): {size.tolist()}")
    write_h5ad(adata, args.out)
    print(f"wrote {args.out}")
    return 0


def add_subparser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``graphlib spatial`` with ``simulate``, ``fit`` and ``intervene``.

    Args:
        subparsers: The ``graphlib`` parser's subparsers.
    """
    parser = subparsers.add_parser("spatial", help="Celcomen on spatial transcriptomics")
    sub = parser.add_subparsers(dest="spatial_command", required=True)

    sim = sub.add_parser("simulate", help="write a simulated tissue as .h5ad")
    sim.add_argument(
        "--cells",
        type=cli_types.integer(2),
        default=600,
        help="cells (default: %(default)s)",
    )
    sim.add_argument(
        "--genes",
        type=cli_types.integer(2),
        default=8,
        help="genes (default: %(default)s)",
    )
    sim.add_argument("--layout", choices=("hex", "random"), default="hex")
    sim.add_argument("--steps", type=cli_types.positive_int, default=2000, help="Langevin steps")
    sim.add_argument("--seed", type=cli_types.seed, default=0)
    sim.add_argument("--out", required=True, help="output .h5ad")
    sim.set_defaults(func=_simulate)

    fit = sub.add_parser("fit", help="fit Celcomen and store varp['celcomen_*']")
    fit.add_argument("input", help="input .h5ad (coordinates in obsm or a graph in obsp)")
    fit.add_argument("--out", required=True, help="output .h5ad")
    fit.add_argument(
        "--estimator", choices=ESTIMATORS, default="celcomen", help="(default: %(default)s)"
    )
    fit.add_argument("--layer", default=None, help="expression layer (default: X)")
    fit.add_argument("--spatial-key", default="spatial", help="obsm key (default: %(default)s)")
    from spatial.celcomen import CelcomenConfig

    _FIT_FLAGS.clear()
    _FIT_FLAGS.update(add_config_flags(fit, CelcomenConfig))
    fit.add_argument("--device", default="auto", help="auto, cpu or cuda (default: auto)")
    fit.add_argument(
        "--tracker",
        choices=TRACKERS,
        default=None,
        help="also log the loss per epoch: JSON lines, TensorBoard (extra 'tensorboard') or "
        "MLflow (extra 'mlflow'); default none (the losses are in uns['celcomen'] anyway)",
    )
    fit.add_argument(
        "--tracker-dir",
        default=None,
        help="folder of the tracker's files (default: OUT without .h5ad, plus .tracking)",
    )
    fit.add_argument(
        "--tracking-uri",
        default=None,
        help="--tracker mlflow: the MLflow tracking URI (default: sqlite in --tracker-dir)",
    )
    fit.set_defaults(func=_fit)

    cf = sub.add_parser("intervene", help="clamp genes in cells and store the effect")
    cf.add_argument("input", help="fitted .h5ad")
    cf.add_argument("--out", required=True, help="output .h5ad")
    cf.add_argument("--gene", action="append", required=True, help="NAME=VALUE, repeatable")
    group = cf.add_mutually_exclusive_group(required=True)
    group.add_argument("--cells", help="comma-separated obs names")
    group.add_argument("--cells-where", help="COLUMN=VALUE selecting cells by an obs column")
    cf.add_argument("--steps", type=cli_types.positive_int, default=50)
    cf.add_argument(
        "--step-size",
        type=cli_types.positive_float,
        default=None,
        help="Riemannian step; default: --horizon model time units over --steps",
    )
    cf.add_argument(
        "--horizon",
        type=cli_types.positive_float,
        default=4.0,
        help="relaxation time in model time units 1/L (used without --step-size)",
    )
    cf.add_argument("--layer", default=None)
    cf.add_argument("--device", default="auto")
    cf.add_argument("--no-progress", action="store_true", help="no relaxation progress bar")
    cf.set_defaults(func=_intervene)
