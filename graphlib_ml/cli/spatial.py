"""``graphlib spatial``: simulate a tissue, fit Celcomen, run a knock-out counterfactual.

``graphlib spatial simulate --cells 600 --genes 8 --out tissue.h5ad`` writes a simulated tissue
(signed sphere coordinates in ``X``, truth in ``varp['true_*']``) and prints the fit command
that follows; ``graphlib spatial fit IN.h5ad --out OUT.h5ad`` (:func:`spatial.tl.celcomen`)
writes ``varp['celcomen_intra'/'celcomen_inter']``, with ``--signed`` for signed input,
``--coords-obs COLX,COLY`` for coordinates in ``obs`` columns, ``--layer``, ``--genes`` /
``--mask-var`` / ``--all-genes`` for the genes, ``--size-factors`` for the library sizes of
raw counts and ``--protocol reference`` for the reference protocol; ``graphlib spatial perturb
IN.h5ad --gene IFITM3=0 --cells-where cluster=3 --out OUT.h5ad`` (alias ``intervene``;
:func:`spatial.tl.perturb`) writes the counterfactual layers, on the layer the fit used.
Outputs are written atomically, after a check that their folder has room for them (h5py crashes
on a full disk); ``--out`` is checked before the work starts, inputs that are not readable
``.h5ad`` files end with one message naming the file, and every numeric flag is validated at
parse time (:mod:`graphdata.cli_types`).
"""

from __future__ import annotations

import argparse
import inspect
import math
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from graphdata import cli_types
from graphdata.errors import GraphDataError
from graphdata.tracking import TRACKERS
from graphlib_ml.cli._flags import add_config_flags, config_values, flag_spellings

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
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if name in out:
            raise GraphDataError(
                f"--gene: {name} is given twice ({name}={out[name]:g} and {item!r}); pass each "
                "gene once"
            )
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
    with flag_spellings(_SIMULATE_FAILURES):
        tissue = simulate_tissue(
            args.cells, args.genes, layout=args.layout, steps=args.steps, seed=args.seed
        )
    write_h5ad(tissue.to_anndata(), args.out)
    print(f"wrote {args.out}")
    out = Path(args.out)
    fitted = out.with_name(out.stem + "_fit.h5ad")
    # X holds signed sphere coordinates, so the fit needs --signed (counts never do).
    print(f"next: graphlib spatial fit {out} --signed --out {fitted}")
    return 0


#: simulate_tissue's refusals of sizes above the machine's memory, spelled with the flags.
_SIMULATE_FAILURES = {
    "n_cells: expected an int in": {"n_cells:": "--cells:", "smaller n_cells": "smaller --cells"},
    "n_genes: expected an int in": {"n_genes:": "--genes:", "smaller n_genes": "smaller --genes"},
}


#: The fit's refusals found while it runs (spatial.celcomen), whose messages name the config's
#: keywords: start of the message -> {keyword spelling: flag}.
_FIT_FAILURES = {
    "lr: the fit diverged": {
        "lr: the fit": "--lr: the fit",
        "lower lr (now": "lower --lr (now",
        "raise weight_decay": "raise --weight-decay",
    },
    "lr: the loss rose": {
        "lr: the loss": "--lr: the loss",
        "lower lr (now": "lower --lr (now",
        "the default optimizer='auto'": "the default --optimizer auto",
    },
    "data: the score-matching fit produced non-finite values": {
        "raise weight_decay (now": "raise --weight-decay (now",
    },
}


def _size_factor_failure(layer: str | None) -> dict[str, dict[str, str]]:
    """The fit's refusal of size factors for a fit not on raw counts, spelled with the flags.

    The library decides the route (``transform="auto"``: raw counts or the sphere) when it reads
    the fitted genes, so the CLI re-spells its refusal instead of scanning them a second time.
    """
    return {
        "size_factors: apply to raw counts": {
            "size_factors: apply to raw counts (transform='log_counts'), got a transform=": (
                "--size-factors: applies to raw counts (--transform log_counts, or auto on "
                "non-negative integer counts), got a "
            ),
            " fit; drop size_factors, or fit the raw counts (layer='counts')": (
                f" fit of {_where(layer)}; drop --size-factors, or fit the raw counts with "
                "--layer LAYER"
            ),
        }
    }


#: The same for ``spatial perturb`` (spatial.counterfactual).
_PERTURB_FAILURES = {
    "step_size: the relaxation diverged": {
        "step_size: the": "--step-size: the",
        "lower step_size or leave it None (automatic)": "lower --step-size, or drop it "
        "(automatic, from --horizon)",
    },
}


def _where(layer: str | None) -> str:
    return "X" if layer is None else f"layers[{layer!r}]"


def _check_sign(adata: Any, layer: str | None, signed: bool, transform: str = "auto") -> None:
    """Refuse negative expression naming ``--signed`` or ``--transform log_counts``.

    The library's messages name its keywords; ``log_counts`` takes raw counts only.
    """
    import numpy as np
    import scipy.sparse as sp

    if signed and transform != "log_counts":
        return
    matrix = adata.X if layer is None else adata.layers[layer] if layer in adata.layers else None
    if matrix is None or min(matrix.shape) == 0:
        return  # a missing layer or X: the library's own error says what is there
    low = float(matrix.min())
    if low < 0:
        count = int((matrix < 0).sum()) if sp.issparse(matrix) else int(np.sum(matrix < 0))
        if transform == "log_counts":
            raise GraphDataError(
                f"--transform log_counts: needs non-negative raw counts, got {count:,} negative "
                f"values in {_where(layer)} (min {low:.3g}); pass --layer LAYER with the raw "
                "counts, or --transform sphere for signed coordinates"
            )
        raise GraphDataError(
            f"input: {_where(layer)} holds {count:,} negative values (min {low:.3g}); pass "
            "--signed for signed coordinates on the sphere (what 'graphlib spatial simulate' "
            "writes), or --layer LAYER with non-negative expression (counts or "
            "log1p-normalised counts, not z-scores)"
        )


def _pair(text: str, flag: str, cast: Any) -> tuple[Any, Any]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts):
        raise GraphDataError(f"{flag}: expected two comma-separated values A,B, got {text!r}")
    try:
        return cast(parts[0]), cast(parts[1])
    except ValueError:
        raise GraphDataError(f"{flag}: expected numbers A,B, got {text!r}") from None


def _coords_from_obs(adata: Any, args: argparse.Namespace) -> None:
    """``--coords-obs COLX,COLY`` (times ``--coords-scale``) into ``obsm[--spatial-key]``."""
    import numpy as np

    columns = _pair(args.coords_obs, "--coords-obs", str)
    for column in columns:
        if column not in adata.obs:
            raise GraphDataError(
                f"--coords-obs: no obs column {column!r} (available: "
                f"{sorted(map(str, adata.obs.columns))}); pass the two coordinate columns"
            )
    try:
        coords = adata.obs[list(columns)].to_numpy(dtype=np.float64)
    except (TypeError, ValueError):
        raise GraphDataError(
            f"--coords-obs: obs columns {list(columns)} are not numeric; pass numeric ones"
        ) from None
    if not np.isfinite(coords).all():
        bad = int((~np.isfinite(coords)).any(1).sum())
        raise GraphDataError(
            f"--coords-obs: {bad} cells have NaN or inf in obs {list(columns)}; drop them first"
        )
    scale = (1.0, 1.0)
    if args.coords_scale is not None:
        scale = _pair(args.coords_scale, "--coords-scale", float)
        if not all(math.isfinite(v) and v > 0 for v in scale):
            raise GraphDataError(
                f"--coords-scale: expected two finite numbers > 0, got {args.coords_scale!r}"
            )
    if args.spatial_key in adata.obsm:
        print(f"replacing obsm[{args.spatial_key!r}] with obs {list(columns)}")
    adata.obsm[args.spatial_key] = coords * np.asarray(scale)
    print(f"coordinates: obs {list(columns)} x {scale} -> obsm[{args.spatial_key!r}]")
    graph = f"{args.spatial_key}_connectivities"
    if graph in adata.obsp:
        print(
            f"note: obsp[{graph!r}] exists and is used as it is (the coordinates are stored for "
            f"maps); delete it from the file to build a k-NN graph of these coordinates"
        )


def _mask_var(adata: Any, args: argparse.Namespace) -> Any:
    """``--genes`` / ``--mask-var`` / ``--all-genes`` as ``mask_var`` (None: the default)."""
    from graphdata.errors import UnknownLabelError

    if args.all_genes:
        return False
    if args.mask_var is not None:
        if args.mask_var not in adata.var.columns:
            boolean = [str(c) for c in adata.var.columns if adata.var[c].dtype == bool]
            raise GraphDataError(
                f"--mask-var: no var column {args.mask_var!r} (boolean columns: {boolean}); "
                "pass a boolean var column (e.g. highly_variable after "
                "sc.pp.highly_variable_genes), --genes A,B,... or --all-genes"
            )
        return args.mask_var
    if args.genes is None:
        return None
    genes = [g.strip() for g in args.genes.split(",") if g.strip()]
    if len(genes) < 2:
        raise GraphDataError(
            f"--genes: expected at least two comma-separated gene names, got {args.genes!r}"
        )
    repeated = sorted({g for g in genes if genes.count(g) > 1})
    if repeated:
        raise GraphDataError(f"--genes: {repeated} given more than once; name each gene once")
    names = list(map(str, adata.var_names))
    known = set(names)
    for gene in genes:
        if gene not in known:
            raise UnknownLabelError("gene", gene, names, argument="--genes")
    return adata.var_names.isin(genes)


def _config(args: argparse.Namespace) -> Any:
    """The CelcomenConfig of the flags; ``--protocol reference`` starts from the reference's."""
    from spatial.celcomen import CelcomenConfig

    values = config_values(args, _FIT_FLAGS)
    if args.protocol == "reference":
        return CelcomenConfig.reference(**values)
    if values.get("objective") == "reference" and args.protocol is None:
        raise GraphDataError(
            "--objective reference: selects the reference package's loss only (with our "
            "optimiser, start and no projection), not the reference protocol; pass --protocol "
            "reference for the protocol (SGD at lr 0.1 from U(0, 1), clipping to [0, 1], "
            "CelcomenConfig.reference()), or add --protocol ours to keep this combination"
        )
    return CelcomenConfig(**values)


def _fit(args: argparse.Namespace) -> int:
    from graphlib_ml.cli._datasets import user_warnings_as_lines

    # The library warns (a fit that has not converged, ...): one "graphlib: warning:" line
    # each, without Python's warning format; other categories pass as they were.
    with user_warnings_as_lines():
        if args.tracker is None:
            return _fit_in(args)
        from graphlib_ml.cli._folders import remove_new_folders_on_error

        # The tracker's folder is made before tl.celcomen checks its input (e.g.
        # --spatial-key): a refusal there leaves no empty folder.
        with remove_new_folders_on_error(_tracking_folder(args)):
            return _fit_in(args)


def _fit_in(args: argparse.Namespace) -> int:
    from graphdata.device import resolve_device
    from graphdata.run_folder import check_output_file
    from spatial import tl
    from spatial._keys import check_key_added
    from spatial.io import read_h5ad, write_h5ad

    check_output_file(args.out, argument="--out")
    check_key_added(args.key_added, "--key-added")
    device = resolve_device(args.device)
    config = _config(args)
    print(
        f"spatial fit: estimator={args.estimator} protocol={args.protocol or 'ours'} "
        f"device={device} config={asdict(config)}"
    )
    adata = read_h5ad(args.input)
    if args.coords_obs is not None:
        _coords_from_obs(adata, args)
    graph = f"{args.spatial_key}_connectivities"
    if args.n_neighbors is not None and graph in adata.obsp:
        # The library uses an existing graph as it is; say so rather than ignore the flag.
        print(
            f"warning: --n-neighbors {args.n_neighbors} is not used: the input has the graph "
            f"obsp[{graph!r}], which is used as it is; delete it from the file to build a k-NN "
            "graph with --n-neighbors",
            file=sys.stderr,
        )
    if args.layer is not None and args.layer not in adata.layers:
        raise GraphDataError(
            f"--layer: no layer {args.layer!r} in {args.input} (layers: "
            f"{sorted(map(str, adata.layers.keys()))}); pass one of them, or drop --layer to "
            "fit X"
        )
    _check_sign(adata, args.layer, args.signed, config.transform)
    mask_var = _mask_var(adata, args)
    _check_fit_size(adata, args, mask_var)
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
    limits: dict[str, Any] = {}  # only what was given: the library's defaults otherwise
    if args.max_genes is not None:
        limits["max_genes"] = args.max_genes or None  # 0: no limit
    if args.max_memory is not None:
        limits["max_memory"] = args.max_memory * 2**30
    if args.size_factors is not None:
        limits["size_factors"] = False if args.size_factors == "none" else args.size_factors
    try:
        with flag_spellings({**_FIT_FAILURES, **_size_factor_failure(args.layer)}):
            tl.celcomen(
                adata,
                spatial_key=args.spatial_key,
                layer=args.layer,
                library_key=args.library_key,
                allow_negative=args.signed,
                mask_var=mask_var,
                **limits,
                config=config,
                key_added=args.key_added,
                device=device,
                tracker=tracker,
            )
    finally:
        if tracker is not None:
            tracker.close()
    record = adata.uns[args.key_added]
    genes = record["params"]["genes"]
    print(f"genes fitted: {len(genes):,} of {adata.n_vars:,} ({_where(args.layer)})")
    if record["params"].get("transform") == "log_counts":
        source = record["params"].get("size_factors")
        print(
            f"size factors: {source}; couplings reported whole"
            if source
            else "size factors: none; couplings reported orthogonal to the library-size "
            "direction (pass --size-factors COLUMN, or fit a gene subset of a larger panel)"
        )
    losses = record["losses"]
    print(f"final loss {losses[-1]:.4f} after {len(losses)} epochs")
    write_h5ad(adata, args.out)
    print(f"wrote {args.out}")
    out = Path(args.out)
    print(
        f"next: graphlib spatial perturb {out} --gene {genes[0]}=0 --cells CELL1,CELL2 "
        f"--out {out.with_name(out.stem + '_perturbed.h5ad')}"
    )
    return 0


def _check_fit_size(adata: Any, args: argparse.Namespace, mask_var: Any) -> None:
    """Refuse a fit above ``--max-genes`` or ``--max-memory`` naming the flags.

    The library's check (:func:`spatial._inputs.check_fit_size`, with the same estimate)
    names its keywords; the device's total memory, when no ``--max-memory`` is given, is left
    to it.
    """
    if args.max_genes == 1:
        raise GraphDataError(
            "--max-genes: expected 0 (no limit) or an integer >= 2 (the model couples at least "
            "two genes), got 1; pass --max-genes 2 or more, or 0"
        )
    from spatial import _inputs

    columns, _ = _inputs.resolve_mask_var(adata.var, adata.n_vars, mask_var)
    genes, cells = len(columns), adata.n_obs
    select = (
        "select genes with --genes A,B,... or --mask-var COLUMN (e.g. highly_variable after "
        "sc.pp.highly_variable_genes)"
    )
    limit = _inputs.MAX_GENES if args.max_genes is None else args.max_genes or None
    need = _inputs.fit_memory_bytes(cells, genes)
    if limit is not None and genes > limit:
        shown = f"{limit:,} (the default)" if args.max_genes is None else f"{limit:,}"
        raise GraphDataError(
            f"--max-genes: the fit would use {genes:,} genes x {cells:,} cells, above "
            f"--max-genes {shown}, and needs about {need / 2**30:.2f} GiB (4 B x (10 N G + "
            f"56 G^2) + 512 MiB); {select}, or pass --max-genes {genes} (0: no limit)"
        )
    if args.max_memory is not None and need > args.max_memory * 2**30:
        raise GraphDataError(
            f"--max-memory: the fit of {genes:,} genes x {cells:,} cells needs about "
            f"{need / 2**30:.2f} GiB (4 B x (10 N G + 56 G^2) + 512 MiB), above --max-memory "
            f"{args.max_memory:g}; {select}, fit fewer cells, or raise --max-memory"
        )


def _tracking_folder(args: argparse.Namespace) -> Path:
    """``--tracker-dir``, else ``OUT`` without ``.h5ad`` plus ``.tracking`` next to it."""
    if args.tracker_dir is not None:
        return Path(args.tracker_dir)
    out = Path(args.out)
    return out.with_name(out.stem + ".tracking")


def _intervene(args: argparse.Namespace) -> int:
    import numpy as np

    from graphdata.device import resolve_device
    from graphdata.errors import UnknownLabelError
    from graphdata.run_folder import check_output_file
    from spatial import tl
    from spatial._keys import check_key_added
    from spatial.counterfactual import METHODS, check_method_options
    from spatial.equilibrium import sampled_contrast
    from spatial.io import read_h5ad, write_h5ad

    genes = parse_genes(args.gene)
    check_key_added(args.key_added, "--key-added")
    check_output_file(args.out, argument="--out")
    device = resolve_device(args.device)
    adata = read_h5ad(args.input)
    cells: Any
    if args.cells_where:
        column, sep, value = args.cells_where.partition("=")
        if not sep or not column:
            raise GraphDataError(
                f"--cells-where: expected COLUMN=VALUE, e.g. cluster=3, got {args.cells_where!r}"
            )
        if column not in adata.obs:
            raise GraphDataError(
                f"--cells-where: no obs column {column!r} (available: "
                f"{sorted(map(str, adata.obs.columns))}); pass COLUMN=VALUE"
            )
        labels = adata.obs[column].astype(str)
        cells = np.asarray(labels == value)
        if not cells.any():
            present = sorted(set(labels))
            raise GraphDataError(
                f"--cells-where: no cell has obs[{column!r}] == {value!r} (values there, as "
                f"text: {present[:10]}{' ...' if len(present) > 10 else ''}); pass one of them"
            )
    else:
        cells = [c for c in args.cells.split(",") if c]
        known = set(map(str, adata.obs_names))
        for cell in cells:
            if cell not in known:
                raise UnknownLabelError(
                    "cell", cell, list(map(str, adata.obs_names)), argument="--cells"
                )
    names = set(map(str, adata.var_names))
    for gene in genes:
        if gene not in names:
            raise UnknownLabelError(
                "gene", gene, list(map(str, adata.var_names)), argument="--gene"
            )
    fitted = adata.uns.get(args.key_added, {}).get("params", {})
    if args.layer is not None and "layer" in fitted and args.layer != fitted["layer"]:
        raise GraphDataError(
            f"--layer: the fit used {_where(fitted['layer'])}, got {_where(args.layer)}; drop "
            "--layer (perturb uses the fit's layer: the couplings are in its units) or refit "
            f"with --layer {args.layer}"
        )
    # Only the options given: the library's defaults (and its checks of combinations) apply.
    options = {
        name: getattr(args, name)
        for name in (
            "method",
            "tolerance",
            "damping",
            "max_iterations",
            "steps",
            "step_size",
            "burn_in",
            "seed",
        )
        if getattr(args, name) is not None
    }
    if args.horizon is not None:
        options["horizon"] = args.horizon
    # The library's check of an option of another method, naming the flags (METHODS[0]: the
    # default method).
    method = options.get("method", METHODS[0])
    check_method_options(method, {k: v for k, v in options.items() if k != "method"}, flags=True)
    batches = inspect.signature(sampled_contrast).parameters["batches"].default  # what tl uses
    if method == "langevin" and options.get("steps", 0) % batches:
        steps = options["steps"]
        raise GraphDataError(
            f"--steps: --method langevin averages {batches} batches of equal length (its "
            f"standard errors), so expects a multiple of {batches}, got {steps}; pass e.g. "
            f"--steps {max(batches, steps - steps % batches)}"
        )
    shown = int(np.sum(cells)) if args.cells_where else cells
    print(f"spatial perturb: genes={genes} cells={shown} options={options} device={device}")
    with flag_spellings(_PERTURB_FAILURES):
        tl.perturb(
            adata,
            genes,
            cells,
            layer=args.layer,
            key_added=args.key_added,
            device=device,
            progress=not args.no_progress,
            **options,
        )
    record = adata.uns[args.key_added]["perturbation"]
    done = {k: record[k] for k in ("method", "iterations", "residual", "converged") if k in record}
    if record.get("step_size") is not None:
        done["step_size"] = float(record["step_size"])
    print(f"counterfactual: {done}")
    print(f"cells per ring (0, 1, 2, 3+): {record['ring_size'].tolist()}")
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
        type=cli_types.integer(7),  # the tissue's k-NN graph gives each cell 6 neighbours
        default=600,
        help="cells, at least 7: each has 6 neighbours (default: %(default)s)",
    )
    sim.add_argument(
        "--genes",
        type=cli_types.integer(2),
        default=8,
        help="genes (default: %(default)s)",
    )
    sim.add_argument(
        "--layout",
        choices=("hex", "random"),
        default="hex",
        help="cell positions: a hexagonal grid or uniform random (default: %(default)s)",
    )
    sim.add_argument(
        "--steps",
        type=cli_types.integer(1, cli_types.INT64_MAX),  # simulate_tissue's bound
        default=2000,
        help="Langevin steps (default: %(default)s)",
    )
    sim.add_argument(
        "--seed", type=cli_types.int64_seed, default=0, help="random seed (default: %(default)s)"
    )
    sim.add_argument("--out", required=True, help="output .h5ad")
    sim.set_defaults(func=_simulate)

    fit = sub.add_parser("fit", help="fit Celcomen and store varp['celcomen_*']")
    fit.add_argument("input", help="input .h5ad (coordinates in obsm or a graph in obsp)")
    fit.add_argument("--out", required=True, help="output .h5ad")
    fit.add_argument(
        "--estimator", choices=ESTIMATORS, default="celcomen", help="(default: %(default)s)"
    )
    fit.add_argument("--layer", default=None, help="expression layer (default: X)")
    fit.add_argument(
        "--signed",
        action="store_true",
        help="accept negative values: signed coordinates on the sphere, as 'spatial simulate' "
        "writes (allow_negative=True); expression must be non-negative otherwise",
    )
    fit.add_argument("--spatial-key", default="spatial", help="obsm key (default: %(default)s)")
    fit.add_argument(
        "--coords-obs",
        metavar="COLX,COLY",
        default=None,
        help="take the coordinates from these two obs columns into obsm[--spatial-key] (e.g. "
        "col,row of an array slide)",
    )
    fit.add_argument(
        "--coords-scale",
        metavar="SX,SY",
        default=None,
        help="with --coords-obs: multiply the two columns by these factors (default 1,1; a "
        "hexagonal Spatial Transcriptomics array: 1,1.7320508 for col,row)",
    )
    fit.add_argument(
        "--library-key",
        default=None,
        help="obs column of tissue sections: one k-NN graph per section (default: one graph)",
    )
    genes = fit.add_mutually_exclusive_group()
    genes.add_argument(
        "--genes",
        metavar="A,B,...",
        default=None,
        help="fit these genes only (comma-separated var_names)",
    )
    genes.add_argument(
        "--mask-var",
        metavar="COLUMN",
        default=None,
        help="fit the genes of this boolean var column (default: var['highly_variable'] when "
        "present, else every gene)",
    )
    genes.add_argument(
        "--all-genes", action="store_true", help="fit every gene, even with highly_variable"
    )
    fit.add_argument(
        "--size-factors",
        metavar="COLUMN|none",
        default=None,
        help="raw counts: each cell's library size from this obs column (e.g. total_counts), "
        "or 'none' to report the couplings orthogonal to the library-size direction (default: "
        "the total counts of the genes not fitted, when the gene selection leaves some out)",
    )
    fit.add_argument(
        "--max-genes",
        type=cli_types.nonnegative_int,
        default=None,
        help="refuse a fit of more genes than this (default: the library's limit; 0: none)",
    )
    fit.add_argument(
        "--max-memory",
        type=cli_types.positive_float,
        metavar="GIB",
        default=None,
        help="refuse a fit whose estimated peak memory exceeds this many GiB (default: the "
        "device's memory)",
    )
    fit.add_argument(
        "--protocol",
        choices=("ours", "reference"),
        default=None,
        help="reference: the reference package's protocol (CelcomenConfig.reference(): its "
        "loss, SGD at lr 0.1 from U(0, 1), clipping to [0, 1]); the config flags below "
        "override its fields. Default: ours",
    )
    fit.add_argument(
        "--key-added",
        default="celcomen",
        help="prefix of the keys written (default: %(default)s)",
    )
    from spatial.celcomen import LR_MAX, CelcomenConfig

    _FIT_FLAGS.clear()
    # The config is stored in uns: its ints are int64s (CelcomenConfig refuses larger ones); lr
    # has the config's bound, past which torch's float32 step overflows.
    int64 = cli_types.integer(1, cli_types.INT64_MAX)
    types_ = {"seed": cli_types.int64_seed, "epochs": int64, "n_neighbors": int64}
    types_ |= {"batch_size": int64, "lr": cli_types.finite_float(0, LR_MAX, min_inclusive=False)}
    _FIT_FLAGS.update(add_config_flags(fit, CelcomenConfig, types_=types_))
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

    cf = sub.add_parser(
        "intervene",
        aliases=["perturb"],
        help="clamp genes in cells and store the effect (spatial.tl.perturb)",
    )
    cf.add_argument("input", help="fitted .h5ad")
    cf.add_argument("--out", required=True, help="output .h5ad")
    cf.add_argument("--gene", action="append", required=True, help="NAME=VALUE, repeatable")
    group = cf.add_mutually_exclusive_group(required=True)
    group.add_argument("--cells", help="comma-separated obs names")
    group.add_argument("--cells-where", help="COLUMN=VALUE selecting cells by an obs column")
    cf.add_argument(
        "--method",
        choices=("mean_field", "langevin", "gradient"),
        default=None,
        help="mean_field (default): the clamped mean-field equilibrium, run to --tolerance; "
        "langevin: the clamped equilibrium sampled over --steps after "
        "--burn-in, with standard errors; gradient: Riemannian ascent over --steps for --horizon",
    )
    cf.add_argument(
        "--tolerance",
        type=cli_types.positive_float,
        default=None,
        help="mean field: residual (default: 1e-08)",
    )
    cf.add_argument(
        "--damping",
        type=cli_types.finite_float(0, 1, min_inclusive=False),
        default=None,
        help="mean field: damping of the fixed-point update, in (0, 1] (default: 0.5)",
    )
    cf.add_argument(
        "--max-iterations",
        type=cli_types.integer(1, cli_types.INT64_MAX),
        default=None,
        help="mean field: updates before giving up with a warning (default: 10000)",
    )
    cf.add_argument(
        "--steps",
        type=cli_types.integer(1, cli_types.INT64_MAX),
        default=None,
        help="gradient: relaxation steps (default: 50); langevin: sampling steps (default: 20000)",
    )
    cf.add_argument(
        "--burn-in",
        type=cli_types.integer(0, cli_types.INT64_MAX),
        default=None,
        help="langevin: steps discarded (default: 2000)",
    )
    cf.add_argument(
        "--seed", type=cli_types.int64_seed, default=None, help="langevin: noise seed (default: 0)"
    )
    cf.add_argument(
        "--step-size",
        type=cli_types.positive_float,
        default=None,
        help="gradient and langevin: step size (langevin default: 0.002; gradient default: "
        "--horizon model time units over --steps)",
    )
    cf.add_argument(
        "--horizon",
        type=cli_types.positive_float,
        default=None,
        help="gradient: relaxation time in model time units 1/L, used without --step-size "
        "(default: 4)",
    )
    cf.add_argument(
        "--layer",
        default=None,
        help="expression layer (default: the one the fit used; another one is refused)",
    )
    cf.add_argument(
        "--key-added", default="celcomen", help="prefix of the fit (default: %(default)s)"
    )
    cf.add_argument("--device", default="auto", help="auto, cpu or cuda (default: %(default)s)")
    cf.add_argument("--no-progress", action="store_true", help="no progress bar")
    cf.set_defaults(func=_intervene)
