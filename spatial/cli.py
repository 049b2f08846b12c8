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

import anndata
import numpy as np
import scipy.sparse

from graphdata import atomic, cli_types
from graphdata.atomic import atomic_path
from graphdata.device import resolve_device
from graphdata.errors import GraphDataError
from graphdata.run_folder import check_output_file
from spatial import tools
from spatial.celcomen import OBJECTIVES, Celcomen, CelcomenConfig
from spatial.simulate import simulate_tissue

__all__ = ["add_subparser", "estimate_h5ad_bytes", "parse_genes", "read_h5ad", "write_h5ad"]

#: Room asked for beyond the arrays' bytes: HDF5 metadata, obs/var tables, ``uns`` (bytes).
H5AD_MARGIN_BYTES = 4 * 2**20

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
        if not math.isfinite(out[name]):
            raise GraphDataError(
                f"--gene: expected a finite VALUE in NAME=VALUE, got {item!r}; pass a finite "
                "number, e.g. IFITM3=0"
            )
    return out


def _array_bytes(value: object) -> int:
    """Bytes of a dense or sparse array (0 for anything else, e.g. a DataFrame in obsm)."""
    if scipy.sparse.issparse(value):
        return sum(int(getattr(value, name).nbytes)
                   for name in ("data", "indices", "indptr", "row", "col") if hasattr(value, name))
    nbytes = getattr(value, "nbytes", None)
    return int(nbytes) if isinstance(nbytes, (int, np.integer)) else 0


def estimate_h5ad_bytes(adata: anndata.AnnData) -> int:
    """An upper estimate of the bytes ``adata.write_h5ad`` writes, uncompressed.

    Sums ``X``, ``layers``, ``obsm``, ``obsp``, ``varm`` and ``varp`` (sparse matrices by their
    ``data``/``indices``/``indptr``), adds 10 % and :data:`H5AD_MARGIN_BYTES` for the metadata,
    the obs/var tables and ``uns``.

    Args:
        adata: The object about to be written.

    Returns:
        The estimate in bytes.

    Examples:
        >>> adata = anndata.AnnData(np.zeros((100, 10), dtype=np.float32))
        >>> estimate_h5ad_bytes(adata) - H5AD_MARGIN_BYTES
        4400
    """
    arrays = [adata.X]
    for mapping in (adata.layers, adata.obsm, adata.obsp, adata.varm, adata.varp):
        arrays.extend(mapping[key] for key in mapping.keys())
    total = sum(_array_bytes(a) for a in arrays if a is not None)
    return int(total * 1.1) + H5AD_MARGIN_BYTES


def read_h5ad(path: str | Path, *, argument: str = "input") -> anndata.AnnData:
    """Read an ``.h5ad`` file; a file that is not one ends with a GraphDataError naming it.

    The file is opened once first so that a missing or unreadable file raises the usual
    :class:`OSError` with its name (h5py's own errors carry neither errno nor file name).

    Args:
        path: The file.
        argument: The argument that named it, for the message. Default ``"input"``.

    Returns:
        The AnnData object.

    Raises:
        OSError: If the file is missing, a folder, or not readable by this user.
        GraphDataError: If it is not HDF5, is truncated, or is not an AnnData file.
    """
    with open(path, "rb"):
        pass
    try:
        return anndata.read_h5ad(path)
    except GraphDataError:
        raise
    # h5py reports a bad signature or a truncated file as a bare OSError; anndata reports a
    # foreign HDF5 layout as KeyError/ValueError/TypeError.
    except (OSError, KeyError, ValueError, TypeError, RuntimeError, AttributeError) as err:
        raise GraphDataError(
            f"{argument}: {str(path)!r} is not a readable .h5ad file ({type(err).__name__}: "
            f"{err}); it may be truncated or not an AnnData file: pass a file written by "
            "anndata (e.g. `graphlib spatial simulate --out FILE.h5ad`)"
        ) from err


def write_h5ad(adata: anndata.AnnData, path: str | Path) -> None:
    """Write ``adata`` to ``path`` atomically (temporary file in the same folder, then rename).

    First asks :func:`graphdata.atomic.require_free_space` for :func:`estimate_h5ad_bytes` in the
    folder: h5py crashes the interpreter on a full disk instead of raising.

    Args:
        adata: The object to write.
        path: The ``.h5ad`` file.

    Raises:
        OSError: ``ENOSPC`` if the folder lacks room for the estimate.
    """
    atomic.require_free_space(path, estimate_h5ad_bytes(adata), what=f"the .h5ad file {path}")
    with atomic_path(path, suffix=".h5ad") as tmp:
        adata.write_h5ad(tmp)


def _simulate(args: argparse.Namespace) -> int:
    check_output_file(args.out, argument="--out")
    print(f"spatial simulate: cells={args.cells} genes={args.genes} layout={args.layout} "
          f"steps={args.steps} seed={args.seed} out={args.out}")
    tissue = simulate_tissue(args.cells, args.genes, layout=args.layout, steps=args.steps,
                             seed=args.seed)
    write_h5ad(tissue.to_anndata(), args.out)
    print(f"wrote {args.out}")
    return 0


def _fit(args: argparse.Namespace) -> int:
    check_output_file(args.out, argument="--out")
    device = resolve_device(args.device)
    config = CelcomenConfig(objective=args.objective, epochs=args.epochs, lr=args.lr,
                            batch_size=args.batch_size, seed=args.seed)
    print(f"spatial fit: estimator={args.estimator} device={device} config={asdict(config)}")
    adata = read_h5ad(args.input)
    tools.celcomen(adata, spatial_key=args.spatial_key, layer=args.layer, config=config,
                   device=device)
    losses = adata.uns["celcomen"]["losses"]
    print(f"final loss {losses[-1]:.4f} after {len(losses)} epochs")
    write_h5ad(adata, args.out)
    print(f"wrote {args.out}")
    return 0


def _intervene(args: argparse.Namespace) -> int:
    genes = parse_genes(args.gene)
    check_output_file(args.out, argument="--out")
    device = resolve_device(args.device)
    adata = read_h5ad(args.input)
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
    fit.add_argument("--estimator", choices=sorted(ESTIMATORS), default="celcomen")
    fit.add_argument("--objective", choices=sorted(OBJECTIVES), default="score_matching")
    fit.add_argument("--epochs", type=cli_types.positive_int, default=300)
    fit.add_argument("--lr", type=cli_types.positive_float, default=0.05)
    fit.add_argument("--batch-size", type=cli_types.positive_int, default=None)
    fit.add_argument("--layer", default=None, help="expression layer (default: X)")
    fit.add_argument("--spatial-key", default="spatial")
    fit.add_argument("--seed", type=cli_types.seed, default=0)
    fit.add_argument("--device", default="auto", help="auto, cpu or cuda (default: auto)")
    fit.set_defaults(func=_fit)

    cf = sub.add_parser("intervene", help="clamp genes in cells and store the effect")
    cf.add_argument("input", help="fitted .h5ad")
    cf.add_argument("--out", required=True, help="output .h5ad")
    cf.add_argument("--gene", action="append", required=True, help="NAME=VALUE, repeatable")
    group = cf.add_mutually_exclusive_group(required=True)
    group.add_argument("--cells", help="comma-separated obs names")
    group.add_argument("--cells-where", help="COLUMN=VALUE selecting cells by an obs column")
    cf.add_argument("--steps", type=cli_types.positive_int, default=50)
    cf.add_argument("--step-size", type=cli_types.positive_float, default=None,
                    help="Riemannian step; default: --horizon model time units over --steps")
    cf.add_argument("--horizon", type=cli_types.positive_float, default=4.0,
                    help="relaxation time in model time units 1/L (used without --step-size)")
    cf.add_argument("--layer", default=None)
    cf.add_argument("--device", default="auto")
    cf.set_defaults(func=_intervene)
