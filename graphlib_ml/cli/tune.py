"""``graphlib kg tune`` and what ``kg train`` needs for ``--config`` and ``--tracker``.

* ``graphlib kg tune --dataset D --model M --trials N --out DIR [--timeout S] [--seed 0]`` runs
  :func:`kg.tune.tune`: an Optuna study (TPE, median pruning on validation MRR) stored in
  ``DIR/study.db``; the same command after a kill continues the study up to ``N`` trials in
  total. It writes ``DIR/trials.jsonl`` and ``DIR/best_config.json``, which
  ``graphlib kg train --config DIR/best_config.json`` trains with. ``--tracker`` logs one step
  per trial (default ``jsonl``: ``DIR/metrics.jsonl`` and ``DIR/params.json``). Optuna is the
  ``tune`` extra; without it the command ends with one line naming
  ``pip install 'graphlib-ml[tune]'``.
* ``kg train --config FILE`` (JSON, or TOML on Python 3.11+) sets the same settings as the
  flags: ``model``, ``dim``, ``dataset`` and every training field
  (:data:`kg.tune.TRAIN_CONFIG_KEYS`). A flag given on the command line overrides the file;
  the file overrides the model's tuned defaults. Unknown keys are refused with the valid names.
* ``kg train --tracker {jsonl,tensorboard,mlflow}``: ``jsonl`` (the default) is the run's
  ``metrics.jsonl`` as always; ``tensorboard`` also writes ``OUT/tensorboard/`` and ``mlflow``
  an MLflow run in ``OUT/mlflow.db`` (or ``--tracking-uri``), next to ``metrics.jsonl``
  (:mod:`graphdata.tracking`).

This module imports neither torch nor Optuna at import time: ``graphlib --help`` stays light.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphdata import cli_types
from graphdata.tracking import TRACKERS, Tracker

__all__ = [
    "GivenStore",
    "TrainSettings",
    "add_tracker_flags",
    "add_tune_subparser",
    "train_settings",
    "train_tracker",
]

#: Flags of ``kg train`` whose argparse default is a value, not None: :class:`GivenStore`
#: records when they are given, so that ``--config`` knows what the command line set.
_GIVEN = "given_flags"


class GivenStore(argparse._StoreAction):
    """``store``, plus the dest recorded in ``namespace.given_flags`` (a set).

    An option with a default (``--model complex``) looks the same whether it was typed or
    not; this action tells them apart, so that a ``--config`` file only yields to flags the
    user gave.
    """

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        """Store ``values`` and record the dest as given."""
        super().__call__(parser, namespace, values, option_string)
        given = set(getattr(namespace, _GIVEN, None) or ())
        given.add(self.dest)
        setattr(namespace, _GIVEN, given)


@dataclass(frozen=True)
class TrainSettings:
    """What ``kg train`` trains: flags over a ``--config`` file over the tuned defaults.

    Attributes:
        model: The model name.
        dim: The embedding size (None: the model's tuned size).
        dataset: The dataset spec.
        num_people: The synthetic KG's size.
        overrides: TrainingConfig fields set by the file or the flags.
        config_file: The ``--config`` file, or None.
    """

    model: str
    dim: int | None
    dataset: str
    num_people: int
    overrides: dict[str, Any]
    config_file: str | None


def train_settings(args: argparse.Namespace, flags: Mapping[str, str]) -> TrainSettings:
    """Merge ``--config FILE`` with the flags: a flag given on the command line wins.

    Args:
        args: The parsed ``kg train`` command line (``config``, ``model``, ``dim``,
            ``dataset``, ``num_people`` and the TrainingConfig flags).
        flags: argparse dest -> TrainingConfig field, from ``add_config_flags``.

    Returns:
        The settings.

    Raises:
        GraphDataError: On a bad config file (see :func:`kg.tune.load_train_config`).
    """
    from graphlib_ml.cli._flags import config_values

    given = set(getattr(args, _GIVEN, None) or ())
    fields = config_values(args, flags)
    if fields.get("regularizer") == "none":
        fields["regularizer"] = None
    file: dict[str, Any] = {}
    if getattr(args, "config", None):
        from kg.tune import load_train_config

        file = load_train_config(args.config)

    def pick(key: str) -> Any:
        value = getattr(args, key)
        return file[key] if key in file and key not in given else value

    dim = args.dim if args.dim is not None else file.get("dim")
    training = {k: v for k, v in file.items() if k not in ("model", "dim", "dataset", "num_people")}
    settings = TrainSettings(
        model=pick("model"),
        dim=dim,
        dataset=pick("dataset"),
        num_people=pick("num_people"),
        overrides={**training, **fields},
        config_file=getattr(args, "config", None),
    )
    if training:
        _check_merged(settings, sorted(set(training) - set(fields)))
    return settings


def _check_merged(settings: TrainSettings, from_file: list[str]) -> None:
    """Validate the merged training fields; name the ``--config`` file when it set any."""
    from graphdata.errors import GraphDataError
    from kg.config import TrainingConfig
    from kg.selection import RACE_MODELS

    names = RACE_MODELS if settings.model == "auto" else (settings.model,)  # "auto": the race
    try:
        for name in names:
            TrainingConfig.from_defaults(name, **settings.overrides).validate(flags=True)
    except (GraphDataError, TypeError) as err:
        if not from_file:
            raise
        raise GraphDataError(
            f"{err} (with {', '.join(from_file)} from --config {settings.config_file}; fix "
            "the file or override it with the flag)"
        ) from err


def add_tracker_flags(parser: argparse.ArgumentParser, *, default: str | None = "jsonl") -> None:
    """Add ``--tracker {jsonl,tensorboard,mlflow}`` and ``--tracking-uri URI``.

    Args:
        parser: The command's parser.
        default: The default tracker (None: no tracking unless asked).
    """
    shown = default if default is not None else "none"
    parser.add_argument(
        "--tracker",
        choices=TRACKERS,
        default=default,
        help="log metrics to JSON lines, TensorBoard (extra 'tensorboard') or MLflow "
        f"(extra 'mlflow') (default {shown})",
    )
    parser.add_argument(
        "--tracking-uri",
        default=None,
        help="--tracker mlflow: the MLflow tracking URI (default: sqlite:///OUT/mlflow.db)",
    )


def train_tracker(args: argparse.Namespace, out: Path, *, model: str) -> Tracker | None:
    """The extra tracker of ``kg train``: None for ``jsonl`` (``metrics.jsonl`` is the log).

    Args:
        args: The parsed command line (``tracker``, ``tracking_uri``).
        out: The run folder.
        model: The model name (the MLflow run is named ``kg train MODEL``).

    Returns:
        The tracker to hand to ``Trainer.fit``, or None.

    Raises:
        GraphDataError: ``--tracking-uri`` without ``--tracker mlflow``.
        ImportError: When the tracker's package is missing (the note names the extra).
    """
    from graphdata.tracking import make_tracker

    if args.tracker == "jsonl" and args.tracking_uri is None:
        return None
    return make_tracker(
        args.tracker, out, tracking_uri=args.tracking_uri, run_name=f"kg train {model}"
    )


def _tune(args: argparse.Namespace) -> int:
    from graphdata.errors import GraphDataError
    from graphdata.run_folder import check_output_folder, run_lock
    from graphdata.tracking import make_tracker
    from graphlib_ml.cli._datasets import compute_device, dropped_triples_as_lines
    from graphlib_ml.cli._flags import config_values
    from graphlib_ml.cli._folders import remove_new_folders_on_error
    from kg.datasets import load_dataset
    from kg.tune import SEARCH_SPACES, tune

    if args.eval_every == 0:  # kg.tune refuses it naming its keyword, after loading the data
        raise GraphDataError(
            "--eval-every: 0 never validates, and trials are scored by validation MRR; pass "
            "--eval-every 1 or more"
        )
    out = check_output_folder(args.out, argument="--out")
    device = compute_device(args.device)
    # A refusal before the study wrote anything (e.g. an unreadable --dataset) leaves no --out.
    with remove_new_folders_on_error(out), run_lock(out, argument="--out"):
        with dropped_triples_as_lines():
            dataset = load_dataset(
                args.dataset,
                num_people=args.num_people,
                seed=args.seed,
                on_unknown=args.on_unknown,
                header=args.header,
            )
        overrides = config_values(args, _FIXED_FLAGS)
        print(f"dataset: {dataset}")
        print(f"kg tune: model={args.model} trials={args.trials} seed={args.seed} out={out}")
        print(f"search space: {SEARCH_SPACES[args.model]}")
        print(f"fixed: {overrides or 'the model tuned defaults'}; device: {device}")
        step_key = {"step_key": "trial"} if args.tracker == "jsonl" else {}
        tracker = make_tracker(
            args.tracker,
            out,
            tracking_uri=args.tracking_uri,
            run_name=f"kg tune {args.model}",
            **step_key,
        )
        try:
            result = tune(
                dataset,
                args.model,
                out=out,
                trials=args.trials,
                timeout=args.timeout,
                seed=args.seed,
                overrides=overrides,
                device=device,
                tracker=tracker,
                dataset_spec=dataset.name,
                verbose=True,
            )
        finally:
            tracker.close()
    print(
        f"best trial {result.best_trial}: valid MRR {result.best_value:.4f} "
        f"({result.trials} trials, {result.pruned} pruned)"
    )
    print(f"wrote {out / 'best_config.json'}, {out / 'trials.jsonl'}, {out / 'study.db'}")
    print(f"train it: graphlib kg train --config {out / 'best_config.json'} --out RUN")
    return 0


#: The TrainingConfig fields ``kg tune`` fixes for every trial from the command line (the search
#: space sets the others).
FIXED_FIELDS = ("epochs", "eval_every", "patience")
#: argparse dest -> field of the generated :data:`FIXED_FIELDS` flags (filled when built).
_FIXED_FLAGS: dict[str, str] = {}


def add_tune_subparser(sub: argparse._SubParsersAction, *, help_text: str) -> None:
    """Build ``graphlib kg tune`` in ``graphlib kg``'s subparsers.

    Args:
        sub: The ``kg`` subparsers.
        help_text: The one-line help.

    Examples:
        >>> parser = argparse.ArgumentParser()
        >>> add_tune_subparser(parser.add_subparsers(), help_text="tune")
        >>> args = parser.parse_args(["tune", "--model", "distmult", "--trials", "3"])
        >>> args.model, args.trials, args.out, args.tracker
        ('distmult', 3, 'kg-tune', 'jsonl')
    """
    from graphlib_ml.cli._datasets import add_header_flag, add_on_unknown_flag
    from graphlib_ml.cli._flags import add_config_flags
    from kg.config import TrainingConfig
    from kg.models import DEFAULT_MODEL, MODELS

    tune = sub.add_parser(
        "tune",
        help=help_text,
        description="Optuna search (TPE sampler, median pruning on validation MRR) over the "
        "model's search space (kg.tune.SEARCH_SPACES); OUT/study.db resumes a killed study.",
    )
    tune.add_argument(
        "--dataset",
        default="synthetic",
        help="folder, a registered name (graphlib data list) or 'synthetic' (default)",
    )
    add_on_unknown_flag(tune, checkpoint=False)
    add_header_flag(tune)
    tune.add_argument(
        "--model", default=DEFAULT_MODEL, choices=sorted(MODELS), help=f"(default {DEFAULT_MODEL})"
    )
    tune.add_argument(
        "--num-people", type=cli_types.positive_int, default=300, help="synthetic KG size (300)"
    )
    tune.add_argument(
        "--trials",
        type=cli_types.positive_int,
        default=20,
        help="trials in the study when done, resumed ones included (default 20)",
    )
    tune.add_argument(
        "--timeout",
        type=cli_types.positive_float,
        default=None,
        help="stop starting trials after this many seconds (default: no limit)",
    )
    tune.add_argument(
        "--seed", type=cli_types.seed, default=0, help="sampler and training seed (0)"
    )
    # The fields every trial shares, flags generated from TrainingConfig as `kg train` does.
    fixed = [f.name for f in dataclasses.fields(TrainingConfig) if f.name not in FIXED_FIELDS]
    _FIXED_FLAGS.clear()
    _FIXED_FLAGS.update(
        add_config_flags(
            tune, TrainingConfig, exclude=fixed, default_notes={"epochs": "model's tuned value"}
        )
    )
    tune.add_argument("--device", default="auto", help="auto, cpu or cuda (default auto)")
    tune.add_argument("--out", default="kg-tune", help="output folder (default kg-tune)")
    add_tracker_flags(tune)
    tune.set_defaults(func=_tune)
