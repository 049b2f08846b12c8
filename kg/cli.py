"""``graphlib kg``: train, evaluate and query knowledge-graph embeddings from the shell.

* ``graphlib kg train --dataset PATH|synthetic --model rotate [--epochs ...] --out DIR`` trains
  with the model's tuned defaults (:data:`kg.models.DEFAULTS`) overridden by the flags given,
  prints the resolved configuration, writes ``DIR/checkpoint.pt``, ``DIR/metrics.jsonl`` and
  ``DIR/test_metrics.json``, and prints the filtered test metrics. ``--resume`` continues a
  killed run from ``DIR/checkpoint.pt``; a ``DIR`` that already holds a run (a checkpoint or
  ``test_metrics.json``) is refused unless ``--resume`` or ``--overwrite`` (start over) is given.
  The run holds a lock on ``DIR`` (:func:`graphdata.run_folder.run_lock`): a second run into it
  stops at once with the first one's pid.
* ``graphlib kg evaluate CHECKPOINT [--dataset ...]`` prints filtered metrics of a checkpoint.
* ``graphlib kg predict CHECKPOINT --head LABEL --relation LABEL --top 10`` prints the most
  plausible tails, by label.

Output paths are checked before any work (:mod:`graphdata.run_folder`) and every numeric flag
is validated at parse time (:mod:`graphdata.cli_types`): ``--margin nan`` ends with argparse's
usage message and exit code 2.

``PATH`` is a folder with ``train.txt``, ``valid.txt`` and ``test.txt`` (labelled TSV, e.g.
Nations or UMLS); ``synthetic`` is the embedded family KG (:func:`graphdata.synthetic.family_kg`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import re
import sys
from pathlib import Path

import torch

from graphdata import cli_types
from graphdata.atomic import write_text_atomic
from graphdata.device import resolve_device
from graphdata.errors import GraphDataError
from graphdata.run_folder import check_output_file, check_output_folder, check_run_state, run_lock
from graphdata.synthetic import family_kg
from graphdata.triples import KGDataset
from kg.base import KGEModel
from kg.checkpoint import check_compatible, dataset_fingerprint
from kg.evaluation import RANK_TYPES, evaluate
from kg.explain.cli import add_explain_subparser
from kg.models import MODELS
from kg.predict import load_model, predict_tails
from kg.training import (
    LOSSES,
    OPTIMIZERS,
    REGIMES,
    REGULARIZERS,
    SAMPLERS,
    Trainer,
    TrainingConfig,
    TrainingDivergedError,
    build_model,
)

__all__ = ["add_subparser", "load_dataset", "RUN_FILES"]

_SYNTHETIC = re.compile(r"^synthetic:num_people=(\d+),seed=(\d+)$")

#: ``kg train`` flags that override a TrainingConfig field: flag dest -> field name.
_CONFIG_FLAGS = {
    "regime": "regime",
    "loss": "loss",
    "epochs": "epochs",
    "batch_size": "batch_size",
    "lr": "lr",
    "optimizer": "optimizer",
    "num_negatives": "num_negatives",
    "sampler": "sampler",
    "side_per_positive": "side_per_positive",
    "filter_negatives": "filter_negatives",
    "margin": "margin",
    "adversarial_temperature": "adversarial_temperature",
    "label_smoothing": "label_smoothing",
    "reciprocal": "reciprocal",
    "regularizer": "regularizer",
    "regularizer_weight": "regularizer_weight",
    "grad_clip": "grad_clip",
    "eval_every": "eval_every",
    "patience": "patience",
    "seed": "seed",
    "checkpoint_every": "checkpoint_every",
}


#: Files a ``kg train`` run writes in ``--out`` (what ``--overwrite`` removes first).
RUN_FILES = ("checkpoint.pt", "metrics.jsonl", "test_metrics.json")


def load_dataset(spec: str, *, num_people: int = 300, seed: int = 0) -> KGDataset:
    """Load ``spec``: a folder of labelled TSV splits, or ``synthetic`` (the family KG).

    The dataset's ``name`` records where it came from (the folder's absolute path, or
    ``synthetic:num_people=N,seed=S``), so that ``kg evaluate`` can reload it from a checkpoint.

    Args:
        spec: A folder path, ``"synthetic"``, or a name recorded by this function.
        num_people: People in the synthetic family world. Default 300.
        seed: Seed of the synthetic world. Default 0.

    Returns:
        The dataset.

    Raises:
        FileNotFoundError: If the folder or one of its split files is missing.

    Examples:
        >>> load_dataset("synthetic", num_people=60).name
        'synthetic:num_people=60,seed=0'
    """
    match = _SYNTHETIC.match(spec)
    if match:
        num_people, seed = int(match.group(1)), int(match.group(2))
    if spec == "synthetic" or match:
        data = family_kg(num_people, seed=seed).dataset
        name = f"synthetic:num_people={num_people},seed={seed}"
        return KGDataset(data.train, data.valid, data.test, name=name)
    path = Path(spec)
    return KGDataset.from_folder(path, name=str(path.resolve()))


def _print_config(title: str, values: dict) -> None:
    print(title)
    for key, value in values.items():
        print(f"  {key} = {value!r}")


def _train(args: argparse.Namespace) -> int:
    out = check_output_folder(args.out, argument="--out")
    with run_lock(out, argument="--out"):
        old = check_run_state(
            out,
            resume=args.resume,
            overwrite=args.overwrite,
            finished="test_metrics.json",
            checkpoint="checkpoint.pt",
            owned=RUN_FILES,
        )
        if args.overwrite:
            for path in old:
                path.unlink()
            if old:
                print(f"--overwrite: removed {', '.join(p.name for p in old)} from {out}")
        if args.resume and not (out / "checkpoint.pt").is_file():
            print(f"--resume: no checkpoint at {out / 'checkpoint.pt'}; starting from scratch")
        return _train_locked(args, out)


def _train_locked(args: argparse.Namespace, out: Path) -> int:
    device = resolve_device(args.device)
    dataset = load_dataset(args.dataset, num_people=args.num_people, seed=args.seed or 0)
    overrides = {
        field: getattr(args, dest)
        for dest, field in _CONFIG_FLAGS.items()
        if getattr(args, dest) is not None
    }
    if overrides.get("regularizer") == "none":
        overrides["regularizer"] = None
    config = TrainingConfig.from_defaults(
        args.model,
        **overrides,
        progress=not args.no_progress,
        log_path=str(out / "metrics.jsonl"),
        checkpoint_path=str(out / "checkpoint.pt"),
    )
    config.validate()
    model = build_model(args.model, dataset, config, dim=args.dim).to(device)
    print(f"dataset: {dataset}")
    _print_config(f"model: {model!r}", {"name": args.model, **model.config})
    _print_config("training config:", dataclasses.asdict(config))
    print(f"device: {device}")
    trainer = Trainer(model, config)
    try:
        trainer.fit(dataset, resume=args.resume)
    except TrainingDivergedError as err:
        print(f"graphlib: training stopped: {err}", file=sys.stderr)
        return 1
    metrics = trainer.evaluate(dataset, split="test")
    _write_json(out / "test_metrics.json", metrics.to_dict())
    if math.isnan(trainer.best_valid_mrr_):
        note = "no validation"
    else:
        note = f"best validation epoch {trainer.best_epoch_}, MRR {trainer.best_valid_mrr_:.4f}"
    if trainer.stopped_early_:
        note += ", stopped early"
    print(f"trained {trainer.epochs_trained_} epochs ({note})")
    print(metrics.table())
    print(f"wrote {out / 'checkpoint.pt'}, {out / 'metrics.jsonl'}, {out / 'test_metrics.json'}")
    return 0


def load_checkpoint_with_dataset(
    checkpoint: str, dataset_spec: str | None, device: torch.device
) -> tuple[KGEModel, dict, KGDataset]:
    """Load a trained model and the dataset it was trained on, refusing a mismatch.

    Args:
        checkpoint: A ``checkpoint.pt`` written by ``graphlib kg train``.
        dataset_spec: A folder or synthetic spec; ``None`` uses the one the checkpoint names.
        device: Where to load the model.

    Returns:
        The model, the checkpoint dictionary and the dataset.

    Raises:
        GraphDataError: If no dataset is known, or the checkpoint belongs to another model,
            vocabulary or set of triples.
    """
    model, ckpt = load_model(checkpoint, device=device)
    spec = dataset_spec or ckpt.get("dataset_name")
    if spec is None:
        raise GraphDataError("--dataset: the checkpoint does not say which dataset; pass one")
    dataset = load_dataset(spec)
    check_compatible(
        ckpt,
        model_name=model.name,
        entity_labels=dataset.entities.labels,
        relation_labels=dataset.relations.labels,
        fingerprint=dataset_fingerprint(
            dataset.entities.labels,
            dataset.relations.labels,
            [ts.mapped_triples for ts in dataset.splits.values()],
        ),
    )
    return model, ckpt, dataset


def _evaluate(args: argparse.Namespace) -> int:
    if args.json:
        check_output_file(args.json, argument="--json")
    device = resolve_device(args.device)
    model, ckpt, dataset = load_checkpoint_with_dataset(args.checkpoint, args.dataset, device)
    reciprocal = bool(ckpt["training"]["config"]["reciprocal"])
    print(f"checkpoint: {args.checkpoint} ({model!r}, epoch {ckpt['training']['epoch']})")
    print(f"dataset: {dataset}; split {args.split}; reciprocal={reciprocal}; device {device}")
    metrics = evaluate(
        model,
        dataset.splits[args.split].mapped_triples,
        dataset.filter_index(),
        reciprocal=reciprocal,
        rank_type=args.rank_type,
        compile=args.compile,
    )
    print(metrics.table(per_relation=args.per_relation, labels=dataset.relations.labels))
    if args.json:
        _write_json(Path(args.json), metrics.to_dict())
        print(f"wrote {args.json}")
    return 0


def _predict(args: argparse.Namespace) -> int:
    device = resolve_device(args.device)
    model, ckpt = load_model(args.checkpoint, device=device)
    vocab = ckpt["vocabulary"]
    ranked = predict_tails(
        model,
        args.head,
        args.relation,
        entity_labels=vocab["entities"],
        relation_labels=vocab["relations"],
        top_k=args.top,
    )
    print(f"({args.head}, {args.relation}, ?) by {model!r}:")
    width = max(len(label) for label, _ in ranked)
    for rank, (label, score) in enumerate(ranked, start=1):
        print(f"{rank:>4}  {label:<{width}}  {score:.4f}")
    return 0


def _write_json(path: Path, data: dict) -> None:
    write_text_atomic(path, json.dumps(data, indent=1))


def add_subparser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``graphlib kg`` with its ``train``, ``evaluate`` and ``predict`` commands.

    Args:
        subparsers: The ``graphlib`` parser's subparsers.

    Examples:
        >>> parser = argparse.ArgumentParser()
        >>> add_subparser(parser.add_subparsers(dest="command"))
        >>> args = parser.parse_args(["kg", "train", "--dataset", "synthetic", "--epochs", "3"])
        >>> args.model, args.epochs, args.lr
        ('rotate', 3, None)
    """
    kg = subparsers.add_parser("kg", help="knowledge-graph embeddings: train, evaluate, explain")
    sub = kg.add_subparsers(dest="kg_command", required=True)

    train = sub.add_parser(
        "train",
        help="train a model (tuned defaults per model; flags override them)",
        description="Unset flags take the model's tuned default (kg.models.DEFAULTS), "
        "else the TrainingConfig default.",
    )
    train.add_argument("--dataset", default="synthetic", help="folder or 'synthetic' (default)")
    train.add_argument("--model", default="rotate", choices=sorted(MODELS), help="(default rotate)")
    train.add_argument(
        "--num-people",
        type=cli_types.positive_int,
        default=300,
        help="synthetic KG size (300)",
    )
    train.add_argument("--dim", type=cli_types.positive_int, default=None, help="embedding size")
    train.add_argument("--epochs", type=cli_types.positive_int)
    train.add_argument("--batch-size", type=cli_types.positive_int)
    train.add_argument("--lr", type=cli_types.positive_float, help="learning rate")
    train.add_argument("--optimizer", choices=sorted(OPTIMIZERS))
    train.add_argument("--regime", choices=REGIMES)
    losses = sorted({loss for names in LOSSES.values() for loss in names})
    train.add_argument("--loss", choices=losses)
    train.add_argument(
        "--num-negatives",
        type=cli_types.positive_int,
        help="sLCWA negatives per positive",
    )
    train.add_argument("--sampler", choices=SAMPLERS, help="sLCWA negative sampler")
    train.add_argument(
        "--side-per-positive",
        action=argparse.BooleanOptionalAction,
        help="sLCWA: all negatives of a positive corrupt the same side",
    )
    train.add_argument(
        "--filter-negatives", action=argparse.BooleanOptionalAction, help="drop true negatives"
    )
    train.add_argument(
        "--margin", type=cli_types.nonnegative_float, help="margin / NSSA gamma (>= 0)"
    )
    train.add_argument(
        "--adversarial-temperature", type=cli_types.nonnegative_float, help="NSSA alpha (>= 0)"
    )
    train.add_argument("--label-smoothing", type=cli_types.fraction, help="in [0, 1)")
    train.add_argument("--reciprocal", action=argparse.BooleanOptionalAction)
    train.add_argument("--regularizer", choices=[*REGULARIZERS, "none"])
    train.add_argument("--regularizer-weight", type=cli_types.nonnegative_float)
    train.add_argument("--grad-clip", type=cli_types.positive_float, help="max gradient norm")
    train.add_argument(
        "--eval-every",
        type=cli_types.nonnegative_int,
        help="epochs between validations (0: never)",
    )
    train.add_argument(
        "--patience",
        type=cli_types.positive_int,
        help="validations without improvement",
    )
    train.add_argument("--seed", type=cli_types.seed, help="random seed (default 0)")
    train.add_argument("--device", default="auto", help="auto, cpu or cuda (default auto)")
    train.add_argument("--out", default="kg-run", help="output folder (default kg-run)")
    train.add_argument(
        "--checkpoint-every",
        type=cli_types.positive_int,
        help="epochs between checkpoints (1)",
    )
    again = train.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true", help="continue OUT/checkpoint.pt")
    again.add_argument(
        "--overwrite",
        action="store_true",
        help="start over in an OUT that holds a run (removes its checkpoint and metrics)",
    )
    train.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    train.set_defaults(func=_train)

    ev = sub.add_parser("evaluate", help="filtered rank-based metrics of a checkpoint")
    ev.add_argument("checkpoint", help="a checkpoint.pt written by `graphlib kg train`")
    ev.add_argument("--dataset", help="folder or synthetic spec (default: the one trained on)")
    ev.add_argument("--split", default="test", choices=("train", "valid", "test"))
    ev.add_argument("--rank-type", default="realistic", choices=RANK_TYPES)
    ev.add_argument("--per-relation", action="store_true", help="add one row per relation")
    ev.add_argument("--json", help="also write the metrics to this JSON file")
    ev.add_argument("--device", default="auto", help="auto, cpu or cuda (default auto)")
    ev.add_argument("--compile", action="store_true",
                    help="score with the model's torch.compile kernel where it has one (RotatE): "
                         "seconds of compilation, then several times faster")
    ev.set_defaults(func=_evaluate)

    pr = sub.add_parser("predict", help="most plausible tails of (head, relation, ?)")
    pr.add_argument("checkpoint", help="a checkpoint.pt written by `graphlib kg train`")
    pr.add_argument("--head", required=True, help="head entity label")
    pr.add_argument("--relation", required=True, help="relation label")
    pr.add_argument(
        "--top",
        type=cli_types.positive_int,
        default=10,
        help="how many tails (default 10)",
    )
    pr.add_argument("--device", default="auto", help="auto, cpu or cuda (default auto)")
    pr.set_defaults(func=_predict)

    add_explain_subparser(sub)

