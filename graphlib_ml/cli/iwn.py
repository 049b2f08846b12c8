"""``graphlib graphon transfer``: the IWN / IGN / MPNN transferability experiments.

``graphlib graphon transfer --graphon erdos_renyi --models iwn,ign,mpnn --sizes 100,200,400``
runs the untrained-network convergence (Herbst & Jegelka, Appendix H) and writes the table and
plots; ``--experiment trained`` runs the trained size generalisation (Levin et al.) with
``--sizes`` as test sizes. The graphon CLI registers the subcommand with
:func:`add_transfer_subparser`. The flags the two experiments share (``--sizes``, ``--samples``,
``--models``, ``--hidden``, ``--layers``, ``--seeds``, ``--epochs``, ``--train-graphs``) are
written by hand; every other field of
:class:`~graphon.nn.transfer.ConvergenceConfig` is a generated ``--untrained-<field>`` flag and
every other field of :class:`~graphon.nn.generalization.SizeGeneralizationConfig` a
generated flag of the trained experiment (:func:`graphlib_ml.cli._flags.add_config_flags`).
``--out`` and the files in it are checked before the work starts, and the run holds a lock on
``--out`` (:func:`graphdata.run_folder.run_lock`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from graphdata import cli_types
from graphdata.errors import GraphDataError
from graphdata.run_folder import check_output_file, check_output_folder, run_lock
from graphlib_ml.cli._flags import add_config_flags, config_values, flag_spellings
from graphlib_ml.cli._folders import remove_new_folders_on_error
from graphon.families import GRAPHONS
from graphon.nn._common import ACTIVATIONS
from graphon.nn.generalization import LR_MAX, SizeGeneralizationConfig
from graphon.nn.models import MODELS
from graphon.nn.transfer import ConvergenceConfig

__all__ = ["add_transfer_subparser", "run_transfer"]

#: The two experiments of the subcommand.
EXPERIMENTS = ("untrained", "trained")
#: Files each experiment writes in ``--out`` (checked before the work starts).
OUTPUTS = {
    "untrained": (
        "transfer_table.md",
        "transfer.json",
        "transfer_mae.png",
        "transfer_spread.png",
        "transfer_lift.png",
    ),
    "trained": ("size_generalization.md", "size_generalization.json", "size_generalization.png"),
}
#: ConvergenceConfig fields set from the hand-written flags both experiments share; the other
#: fields are generated ``--untrained-<field>`` flags.
_UNTRAINED_SHARED = ("sizes", "samples", "limit_size", "models", "hidden_channels", "num_layers")
#: Generated untrained-experiment flags (argparse dest -> field), filled with the parser.
_UNTRAINED_FLAGS: dict[str, str] = {}
#: SizeGeneralizationConfig fields set from the hand-written flags both experiments share.
_SHARED_FIELDS = (
    "train_graphs",
    "test_sizes",
    "test_graphs",
    "models",
    "seeds",
    "epochs",
    "hidden_channels",
    "num_layers",
)
#: Today's flag names of generated trained-experiment fields that differ from the field name.
_ALIASES = {"standardize_target": "standardize"}
#: Generated trained-experiment flags (argparse dest -> field), filled when the parser is built.
_TRAINING_FLAGS: dict[str, str] = {}
#: The trained experiment's refusals found while it runs (graphon.nn.generalization), whose
#: messages name the config's keywords: start of the message -> {keyword spelling: flag}.
_TRAINING_FAILURES = {
    "config.lr: training diverged": {
        "config.lr: training": "--lr: training",
        "lower lr (now": "lower --lr (now",
        "raise weight_decay": "raise --weight-decay",
    },
}


def _ints(text: str, name: str, low: int) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError as err:
        raise GraphDataError(f"{name}: expected comma-separated ints, got {text!r}") from err
    if not values or min(values) < low:
        raise GraphDataError(f"{name}: expected ints >= {low}, got {text!r}")
    return values


def _models(text: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [n for n in names if n not in MODELS]
    if not names or unknown:
        raise GraphDataError(f"--models: expected names from {list(MODELS)}, got {text!r}")
    return names


def _config_dict(config: object) -> dict[str, Any]:
    import torch

    return {k: (str(v) if isinstance(v, torch.dtype) else v) for k, v in vars(config).items()}


def run_transfer(args: argparse.Namespace) -> int:
    """Run the experiment chosen by ``args`` and write its table, JSON and plots.

    Args:
        args: Parsed arguments of the ``transfer`` subcommand.

    Returns:
        The exit code, 0 on success.
    """
    models = _models(args.models)
    _ints(args.sizes, "--sizes", 2)
    _ints(args.seeds, "--seeds", 0)
    out = check_output_folder(args.out, argument="--out")
    for name in OUTPUTS[args.experiment]:
        check_output_file(out / name, argument="--out")
    # A refusal before anything is written (e.g. an unknown --device) leaves no --out.
    with remove_new_folders_on_error(out), run_lock(out, argument="--out"):
        return _run_transfer(args, out, models)


def _run_transfer(args: argparse.Namespace, out: Path, models: tuple[str, ...]) -> int:
    from graphdata.atomic import write_text_atomic
    from graphdata.device import resolve_device
    from graphlib_ml.outputs import save_figure, write_json
    from graphon.nn.generalization import size_generalization
    from graphon.nn.plot import plot_bernoulli_lift, plot_convergence, plot_size_generalization
    from graphon.nn.transfer import untrained_convergence

    device = resolve_device(args.device)
    config: Any  # ConvergenceConfig or SizeGeneralizationConfig, by experiment
    result: Any
    if args.experiment == "untrained":
        config = ConvergenceConfig(
            sizes=_ints(args.sizes, "--sizes", 2),
            samples=args.samples,
            limit_size=args.limit_size,
            models=models,
            hidden_channels=args.hidden or ConvergenceConfig.hidden_channels,
            num_layers=args.layers or ConvergenceConfig.num_layers,
            **config_values(args, _UNTRAINED_FLAGS),
        )
        print(f"graphon transfer (untrained): graphon={args.graphon} device={device} out={out}")
        print(f"config: {_config_dict(config)}")
        result = untrained_convergence(args.graphon, config, seed=args.seed, device=device)
        table = result.table()
        write_text_atomic(out / "transfer_table.md", table + "\n")
        write_json(
            {
                "graphon": result.graphon,
                "seed": args.seed,
                "config": _config_dict(config),
                "curves": {
                    name: {
                        "sizes": c.sizes,
                        "mae": c.mae.tolist(),
                        "spread": c.spread.tolist(),
                        "mean": c.outputs.mean(1).tolist(),
                        "limit": c.limit,
                        "bernoulli_lift": c.lift,
                    }
                    for name, c in result.curves.items()
                },
            },
            out / "transfer.json",
        )
        save_figure(plot_convergence(result, metric="mae").figure, out / "transfer_mae.png")
        save_figure(plot_convergence(result, metric="spread").figure, out / "transfer_spread.png")
        if "iwn" in result.curves:
            save_figure(plot_bernoulli_lift(result.curves["iwn"]).figure, out / "transfer_lift.png")
    else:
        config = SizeGeneralizationConfig(
            train_graphs=args.train_graphs,
            test_sizes=_ints(args.sizes, "--sizes", 2),
            test_graphs=args.samples,
            models=models,
            seeds=_ints(args.seeds, "--seeds", 0),
            epochs=args.epochs,
            hidden_channels=args.hidden or SizeGeneralizationConfig.hidden_channels,
            num_layers=args.layers or SizeGeneralizationConfig.num_layers,
            **config_values(args, _TRAINING_FLAGS),
        )
        print(f"graphon transfer (trained): full_random graphs, device={device} out={out}")
        print(f"config: {_config_dict(config)}")
        with flag_spellings(_TRAINING_FAILURES):
            result = size_generalization(config, seed=args.seed, device=device, log=print)
        table = result.table()
        write_text_atomic(out / "size_generalization.md", table + "\n")
        write_json(
            {
                "config": _config_dict(config),
                "seed": args.seed,
                "mse": {k: v.tolist() for k, v in result.mse.items()},
                "median": {k: v.tolist() for k, v in result.median().items()},
                "train_seconds": result.train_seconds,
            },
            out / "size_generalization.json",
        )
        save_figure(plot_size_generalization(result).figure, out / "size_generalization.png")
    print(table)
    print(f"wrote {out}")
    return 0


def add_transfer_subparser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``transfer`` subcommand on the ``graphlib graphon`` subparsers.

    Args:
        subparsers: The subparsers action of the ``graphon`` command.
    """
    defaults = ConvergenceConfig()
    trained = SizeGeneralizationConfig()
    p = subparsers.add_parser(
        "transfer", help="IWN / IGN / MPNN transferability across graph sizes"
    )
    p.add_argument(
        "--experiment",
        default="untrained",
        choices=EXPERIMENTS,
        help="untrained convergence or trained size generalisation (default: %(default)s)",
    )
    p.add_argument(
        "--graphon",
        default="erdos_renyi",
        choices=list(GRAPHONS),
        help="named graphon, untrained experiment (default: %(default)s)",
    )
    p.add_argument(
        "--models",
        default="iwn,ign,mpnn",
        help=f"comma-separated, from {list(MODELS)} (default: %(default)s)",
    )
    p.add_argument(
        "--sizes",
        default="100,200,400",
        help="graph sizes; test sizes when trained (default: %(default)s)",
    )
    p.add_argument(
        "--samples",
        type=cli_types.integer(2),
        default=20,
        help="graphs per size (default: %(default)s)",
    )
    p.add_argument(
        "--limit-size",
        type=cli_types.integer(2),
        default=None,
        help="weighted-graph size of the limit (default: the largest size)",
    )
    p.add_argument(
        "--hidden",
        type=cli_types.positive_int,
        default=None,
        help=f"hidden channels (default: {defaults.hidden_channels} untrained, "
        f"{trained.hidden_channels} trained)",
    )
    p.add_argument(
        "--layers",
        type=cli_types.positive_int,
        default=None,
        help=f"equivariant layers incl. readout (default: {defaults.num_layers} "
        f"untrained, {trained.num_layers} trained)",
    )
    p.add_argument(
        "--train-graphs",
        type=cli_types.positive_int,
        default=256,
        help=f"trained: training graphs at n = {trained.train_size} (default: %(default)s)",
    )
    p.add_argument(
        "--epochs",
        type=cli_types.positive_int,
        default=20,
        help="trained: epochs (default: %(default)s)",
    )
    p.add_argument("--seeds", default="0,1", help="trained: training seeds (default: %(default)s)")
    untrained = p.add_argument_group("untrained experiment (ConvergenceConfig fields)")
    _UNTRAINED_FLAGS.clear()
    _UNTRAINED_FLAGS.update(
        add_config_flags(
            untrained,
            ConvergenceConfig,
            exclude=_UNTRAINED_SHARED,
            prefix="untrained-",
            dest_prefix="untrained_",
        )
    )
    group = p.add_argument_group("trained experiment (SizeGeneralizationConfig fields)")
    _TRAINING_FLAGS.clear()
    _TRAINING_FLAGS.update(
        add_config_flags(
            group,
            SizeGeneralizationConfig,
            exclude=_SHARED_FIELDS,
            aliases=_ALIASES,
            dest_prefix="trained_",
            choices={"activation": ACTIVATIONS},  # checked only when a model is built
            types_={"lr": cli_types.finite_float(0, LR_MAX, min_inclusive=False)},
        )
    )
    p.add_argument(
        "--seed",
        type=cli_types.seed,
        default=0,
        help="data/weight seed (default: %(default)s)",
    )
    p.add_argument("--device", default="auto", help="auto, cpu or cuda (default: %(default)s)")
    p.add_argument("--out", default="graphon_transfer", help="output folder (default: %(default)s)")
    p.set_defaults(func=run_transfer)
