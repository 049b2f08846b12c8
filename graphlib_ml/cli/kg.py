"""``graphlib kg``: train, evaluate and query knowledge-graph embeddings from the shell.

* ``graphlib kg train --dataset PATH|synthetic [--model auto] [--epochs ...] --out DIR`` trains
  with the model's tuned defaults (:data:`kg.models.DEFAULTS`) overridden by the flags given;
  without ``--model`` (``auto``) it races ComplEx and DistMult for ``eval_every * patience``
  epochs on validation MRR and continues the better (:func:`kg.selection.race`; ``race.json``),
  prints the resolved configuration, writes ``DIR/checkpoint.pt``, ``DIR/metrics.jsonl`` and
  ``DIR/test_metrics.json``, and prints the filtered test metrics. ``--resume`` continues a
  killed run from ``DIR/checkpoint.pt``; a ``DIR`` that already holds a run (a checkpoint or
  ``test_metrics.json``) is refused unless ``--resume`` or ``--overwrite`` (start over) is given.
  The run holds a lock on ``DIR`` (:func:`graphdata.run_folder.run_lock`): a second run into it
  stops at once with the first one's pid.
  At the end it says how the run ended: "stopped early" only when patience ran out, and
  "reached --epochs N while validation MRR was still improving ...; raise --epochs" when the
  best validation was the last one (:attr:`kg.training.Trainer.still_improving_`).
  ``--config FILE`` (JSON, or TOML) sets the same settings as the flags (a flag given on the
  command line overrides the file); ``--tracker {jsonl,tensorboard,mlflow}`` also logs to
  TensorBoard or MLflow (:mod:`graphlib_ml.cli.tune`).
  Data-parallel on one machine: ``--nproc N`` starts N worker processes itself (torch's elastic
  launcher, :func:`kg.distributed.launch`; one thread each unless ``OMP_NUM_THREADS`` is set),
  and ``torchrun --nproc-per-node N $(which graphlib) kg train ...`` works the same way: with
  ``WORLD_SIZE > 1`` in the environment the command joins the process group (gloo on CPU,
  NCCL on CUDA), ``--batch-size`` stays the global batch, rank 0 alone prepares ``--out``,
  prints, and writes the checkpoint and metrics (:mod:`kg.distributed`). ``--shard-entities``
  gives each rank a slice of the entity table instead of a replica (:mod:`kg.sharded`: sLCWA,
  a row-wise optimiser, no validation, a checkpoint that is not resumable).
* ``graphlib kg tune --dataset D --model M --trials N --out DIR`` searches hyper-parameters with
  Optuna and writes ``DIR/best_config.json`` for ``kg train --config`` (:mod:`kg.tune`).
* ``graphlib kg evaluate CHECKPOINT [--dataset ...]`` prints filtered metrics of a checkpoint.
* ``graphlib kg predict CHECKPOINT --head LABEL --relation LABEL --top-k 10`` prints the most
  plausible tails, by label (``--tail LABEL``: heads; ``--queries FILE``: a TSV batch), with the
  known answers of the checkpoint's dataset removed unless ``--unfiltered``
  (:func:`kg.prediction.predict`).

The ``train`` flags are generated from :class:`kg.config.TrainingConfig`
(:func:`graphlib_ml.cli._flags.add_config_flags`): a new field is a new flag. An unset flag
takes the model's tuned value where :class:`kg.models.ModelDefaults` has one, else the
dataclass default; ``--regularizer none`` is ``regularizer=None``. Divergence is reported by
the top-level handler of :func:`graphlib_ml.cli.main` (exit 1, with a hint).

Output paths are checked before any work (:mod:`graphdata.run_folder`) and every numeric flag
is validated at parse time (:mod:`graphdata.cli_types`): ``--margin nan`` ends with argparse's
usage message and exit code 2.

``PATH`` is a folder with ``train.txt``, ``valid.txt`` and ``test.txt`` (labelled TSV, e.g.
Nations, UMLS or FB15k-237); ``synthetic`` is the embedded family KG
(:func:`graphdata.synthetic.family_kg`). ``--on-unknown {drop,raise,extend}`` (``train``,
``evaluate``, ``explain``) says what to do with valid/test triples whose labels never occur in
``train.txt``: ``drop`` them (the default, PyKEEN's behaviour; one ``graphlib: warning:`` line
on stderr counts them), ``raise`` an error, or ``extend`` the vocabulary. The mode is recorded
in the checkpoint's dataset name, so ``evaluate`` and ``explain`` reload the same vocabulary
without the flag.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import io
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import torch

from graphdata import cli_types
from graphdata.atomic import write_text_atomic
from graphdata.errors import GraphDataError, UnknownLabelError
from graphdata.run_folder import (
    check_output_file,
    check_output_folder,
    check_run_state,
    remove_run_files,
    run_lock,
)
from graphdata.triples import KGDataset
from graphlib_ml.cli._datasets import (
    add_header_flag,
    add_on_unknown_flag,
    compute_device,
    dropped_triples_as_lines,
    resolve_world,
    user_warnings_as_lines,
)
from graphlib_ml.cli._flags import add_config_flags
from graphlib_ml.cli._folders import remove_new_folders_on_error
from graphlib_ml.cli.tune import (
    GivenStore,
    TrainSettings,
    add_tracker_flags,
    add_tune_subparser,
    train_settings,
    train_tracker,
)
from graphlib_ml.outputs import json_text
from kg.checkpoint import save_checkpoint
from kg.config import LOSSES, REGULARIZERS, SPARSE_OPTIMIZERS, TrainingConfig
from kg.datasets import load_checkpoint_with_dataset, load_dataset
from kg.distributed import init_from_env, launch, leave_together
from kg.distributed import rank as dist_rank
from kg.distributed import world_size as dist_world_size
from kg.evaluation import RANK_TYPES, evaluate
from kg.models import DEFAULTS, MODELS
from kg.prediction import load_model, predict
from kg.selection import RACE_MODELS, race, race_files
from kg.sharded import ShardedTable, evaluate_sharded_table, sharded_checkpoint, train_sharded
from kg.training import Trainer, build_model

__all__ = ["RUN_FILES", "add_subparser"]

#: TrainingConfig fields ``kg train`` sets itself (from ``--out``), so they get no flag.
_SET_BY_COMMAND = ("log_path", "checkpoint_path")
#: Choices the config's validation cannot list by itself: every regime's losses, and "none".
_CHOICES = {
    "loss": sorted({loss for names in LOSSES.values() for loss in names}),
    "regularizer": [*REGULARIZERS, "none"],
}
#: ``kg train`` flags that are TrainingConfig fields (argparse dest -> field), filled when the
#: parser is built.
_TRAIN_FLAGS: dict[str, str] = {}

#: One-line help of ``kg explain`` (graphlib_ml.cli.explain builds its parser).
_EXPLAIN_HELP = "explain a predicted triple by synergistic paths (KGExplainer)"

#: One-line help of ``kg tune`` (graphlib_ml.cli.tune builds its parser).
_TUNE_HELP = "search hyper-parameters with Optuna (TPE, median pruning); resumable"

#: ``--model`` value (the default) that races :data:`kg.selection.RACE_MODELS` on validation MRR.
AUTO = "auto"

#: Files a ``kg train`` run writes in ``--out`` (what ``--overwrite`` removes first): the run's,
#: and the race's without ``--model`` (:func:`kg.selection.race_files`).
RUN_FILES = ("checkpoint.pt", "metrics.jsonl", "test_metrics.json", *race_files())


def _print_config(title: str, values: dict) -> None:
    print(title)
    for key, value in values.items():
        print(f"  {key} = {value!r}")


def _train(args: argparse.Namespace) -> int:
    if args.nproc > 1 and int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        if _races(train_settings(args, _TRAIN_FLAGS)):
            _refuse_parallel_race(args)  # here, once: each worker would print the same line
        codes = launch(_train_worker, (args,), args.nproc)  # workers come back through _train
        return max(int(code or 0) for code in codes.values())
    device = compute_device(args.device)
    if device.type == "cuda" and "LOCAL_RANK" in os.environ:
        device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
        torch.cuda.set_device(device)
    if init_from_env(device):
        with leave_together(), user_warnings_as_lines():
            return _train_ranks(args, device)
    with _run_folder(args) as out, user_warnings_as_lines():
        return _train_locked(args, out, device)


def _user_warnings_as_lines(command: Callable[[argparse.Namespace], int]) -> Callable[..., int]:
    """``command`` with its user warnings as ``graphlib: warning:`` lines (not Python's format)."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        with user_warnings_as_lines():
            return command(args)

    return run


def _train_worker(args: argparse.Namespace) -> int:
    """One ``--nproc`` worker: ``_train`` under the launcher's environment, errors as lines."""
    from graphlib_ml.cli import build_parser, describe_failure

    build_parser("kg", "train")  # a spawned worker fills _TRAIN_FLAGS as the parent did
    if "OMP_NUM_THREADS" not in os.environ:  # torchrun's default for several workers too
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // max(args.nproc, 1)))
    # The launcher's RANK, read now: _train destroys the process group before its error
    # reaches us, and dist_rank() is 0 without a group.
    rank = _launched_rank()
    try:
        return _train(args)
    except Exception as err:
        code, line = describe_failure(err, args)
        print(f"[rank {rank}] {line}", file=sys.stderr, flush=True)
        return code


def _launched_rank() -> int:
    """This worker's rank: the process group's, else the ``RANK`` the launcher set (else 0)."""
    if dist_world_size() > 1:
        return dist_rank()
    try:
        return int(os.environ.get("RANK", "0"))
    except ValueError:
        return 0


def _train_ranks(args: argparse.Namespace, device: torch.device) -> int:
    """Data-parallel ``kg train``: rank 0 prepares and locks ``--out``, every rank trains."""
    with contextlib.ExitStack() as stack:
        failure: Exception | None = None
        if dist_rank() == 0:
            try:
                stack.enter_context(_run_folder(args))
            except Exception as err:
                failure = err
        sent = [None if failure is None else str(failure)]
        torch.distributed.broadcast_object_list(sent, src=0)
        if failure is not None:
            raise failure
        if sent[0] is not None:
            raise GraphDataError(f"--out: rank 0 could not prepare the run: {sent[0]}")
        out = Path(args.out)
        if dist_rank() == 0:
            print(f"world size: {dist_world_size()} processes (torch.distributed)")
        if dist_rank():  # one copy of the printed config and metrics, from rank 0
            stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
        return _train_locked(args, out, device)


@contextlib.contextmanager
def _run_folder(args: argparse.Namespace) -> Iterator[Path]:
    """Check ``--out``, hold its lock, apply ``--overwrite``/``--resume``; yield the folder.

    ``--overwrite`` removes the old run's files (:data:`RUN_FILES`) through their symbolic
    links: a link stays and the file it names goes
    (:func:`graphdata.run_folder.remove_run_files`), so the new run writes through the link
    where the old one did. A run refused before it wrote
    anything (e.g. ``--on-unknown raise`` on unknown labels) removes the folders it created
    (:func:`graphlib_ml.cli._folders.remove_new_folders_on_error`).
    """
    out = check_output_folder(args.out, argument="--out")
    with remove_new_folders_on_error(out):
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
                removed = remove_run_files(old, argument="--overwrite")
                if removed:
                    names = [
                        f"{file.name} (through its link, {real})"
                        if file.is_symlink()
                        else file.name
                        for file, real in removed
                    ]
                    print(f"--overwrite: removed {', '.join(names)} from {out}")
            raced = [name for name in race_files() if (out / name).is_file()]
            if raced and not (args.resume or args.overwrite):
                raise GraphDataError(
                    f"--out: {str(out)!r} holds a race that did not finish ({', '.join(raced)}); "
                    "pass --resume (without --model) to continue it or --overwrite to start over"
                )
            if args.resume and not raced and not (out / "checkpoint.pt").is_file():
                print(f"--resume: no checkpoint at {out / 'checkpoint.pt'}; starting from scratch")
            yield out


def _train_locked(args: argparse.Namespace, out: Path, device: torch.device) -> int:
    settings = train_settings(args, _TRAIN_FLAGS)  # flags given over --config over defaults
    overrides = settings.overrides
    if settings.config_file:
        print(f"config file: {settings.config_file} (flags given override it)")
    with dropped_triples_as_lines():
        dataset = load_dataset(
            resolve_world(settings.dataset, seed=overrides.get("seed") or 0),
            num_people=settings.num_people,
            seed=overrides.get("seed") or 0,
            on_unknown=args.on_unknown,
            header=args.header,
        )
    _refuse_empty_split(dataset, "test", "--dataset")
    if settings.model == AUTO:
        if _races(settings):
            return _train_race(args, out, device, settings, dataset)
        print(
            f"model: auto: --eval-every 0 leaves no validation to race on; training "
            f"{RACE_MODELS[0]}, the first candidate"
        )
        settings = dataclasses.replace(settings, model=RACE_MODELS[0])
    _refuse_undecided_race(args, out, settings.model)
    config = TrainingConfig.from_defaults(
        settings.model,
        **overrides,
        log_path=str(out / "metrics.jsonl"),
        checkpoint_path=str(out / "checkpoint.pt"),
    )
    config.validate(flags=True)
    if args.shard_entities:
        return _train_sharded(args, out, device, settings, dataset, config)
    model = build_model(settings.model, dataset, config, dim=settings.dim).to(device)
    print(f"dataset: {dataset}")
    _print_config(f"model: {model!r}", {"name": settings.model, **model.config})
    _print_config("training config:", dataclasses.asdict(config))
    print(f"device: {device}")
    trainer = Trainer(model, config)
    tracker = train_tracker(args, out, model=settings.model) if dist_rank() == 0 else None
    try:
        trainer.fit(dataset, resume=args.resume, tracker=tracker)
    finally:
        if tracker is not None:
            tracker.close()
    return _finish(trainer, dataset, out)


def _races(settings: TrainSettings) -> bool:
    """Whether ``kg train`` races the models: ``--model auto`` with validation to race on."""
    if settings.model != AUTO:
        return False
    return bool(TrainingConfig.from_defaults(RACE_MODELS[0], **settings.overrides).eval_every)


def _refuse_parallel_race(args: argparse.Namespace) -> None:
    """Refuse the race (one process only) under ``--shard-entities``, ``--nproc`` or torchrun."""
    if args.shard_entities or args.nproc > 1 or dist_world_size() > 1:
        what = "--shard-entities" if args.shard_entities else "--nproc/torchrun"
        raise GraphDataError(
            f"--model: the default race (auto: {', '.join(RACE_MODELS)}) runs in one process, "
            f"got {what}; pass one --model, e.g. --model {RACE_MODELS[0]}"
        )


def _refuse_empty_split(dataset: KGDataset, split: str, argument: str) -> None:
    """Refuse to rank an empty split before any work: its metrics would be NaN."""
    if len(dataset.splits[split].mapped_triples) == 0:
        raise GraphDataError(
            f"{argument}: the {split} split of {dataset.name!r} holds no triples (an empty "
            f"{split}.txt, or every triple dropped for labels not in train.txt), so there is "
            f"nothing to rank; add {split} triples"
            + (" or pass --on-unknown extend" if split != "train" else "")
        )


def _refuse_undecided_race(args: argparse.Namespace, out: Path, model: str) -> None:
    """Refuse ``--resume`` of one model over a race that has not handed over to its winner.

    Its candidates' progress is in ``race_<model>.pt``; the one-model run would ignore it and
    start from scratch. Once ``race.json`` names the winner and its race checkpoint became
    ``checkpoint.pt``, ``--model <winner> --resume`` continues that checkpoint as the race does.
    """
    if not args.resume:
        return
    present = [name for name in race_files() if (out / name).is_file()]
    checkpoints = [name for name in present if name.endswith(".pt")]
    if checkpoints or (present and "race.json" not in present):  # candidates, or no winner yet
        raise GraphDataError(
            f"--model: {str(out)!r} holds a race that did not finish "
            f"({', '.join(checkpoints or present)}), which --model {model} --resume would not "
            "continue; drop --model to resume the race (it picks the model), or pass "
            f"--overwrite to train --model {model} from scratch"
        )


def _finish(trainer: Trainer, dataset: KGDataset, out: Path, *, extra: str = "") -> int:
    """Evaluate the test split, write ``test_metrics.json``, print how the run ended."""
    metrics = trainer.evaluate(dataset, split="test")  # sharded across ranks, exact
    if dist_rank() == 0:
        _write_json(out / "test_metrics.json", metrics.to_dict())
    print(_end_of_run(trainer))
    print(metrics.table())
    print(
        f"wrote {out / 'checkpoint.pt'}, {out / 'metrics.jsonl'}, {out / 'test_metrics.json'}"
        + extra
    )
    return 0


def _train_race(
    args: argparse.Namespace,
    out: Path,
    device: torch.device,
    settings: TrainSettings,
    dataset: KGDataset,
) -> int:
    """``kg train`` without ``--model``: race ComplEx and DistMult, continue the better.

    :func:`kg.selection.race` with ``folder=--out``: each candidate trains with its tuned
    defaults and the flags given for ``eval_every * patience`` epochs, the better by validation
    MRR continues to ``--epochs`` (the same run as ``--model`` of it); ``race.json`` records the
    race. One process only: the race is refused with ``--nproc``/torchrun and
    ``--shard-entities``.
    """
    _refuse_parallel_race(args)
    print(f"dataset: {dataset}")
    print(
        f"model: auto: race {' and '.join(RACE_MODELS)} on validation MRR for eval_every x "
        "patience epochs each, then continue the better (kg.selection; --model NAME trains one)"
    )
    for name in RACE_MODELS:
        config = TrainingConfig.from_defaults(name, **settings.overrides)
        config.validate(flags=True)  # before anything is printed, as for one model
        _print_config(f"training config of {name}:", dataclasses.asdict(config))
    print(f"device: {device}")
    tracker = train_tracker(args, out, model=AUTO)
    try:
        result = race(
            dataset,
            dim=settings.dim,
            overrides=settings.overrides,
            folder=out,
            resume=args.resume,
            device=device,
            tracker=tracker,
            announce=print,
        )
    finally:
        if tracker is not None:
            tracker.close()
    print(f"model: {result.trainer.model!r}")
    return _finish(result.trainer, dataset, out, extra=f", {out / 'race.json'}")


def _train_sharded(
    args: argparse.Namespace,
    out: Path,
    device: torch.device,
    settings: TrainSettings,
    dataset: KGDataset,
    config: TrainingConfig,
) -> int:
    """``kg train --shard-entities``: each rank owns a slice of the entity table (kg.sharded).

    PyTorch-BigGraph's partitioned update (:func:`kg.sharded.train_sharded`): ``--epochs``
    epochs of sLCWA with a row-wise optimiser, no validation or early stopping; then the exact
    sharded test evaluation and one ordinary checkpoint written by rank 0
    (:func:`kg.sharded.sharded_checkpoint`), which cannot be resumed.
    """
    if args.resume:
        raise GraphDataError(
            "--resume: a --shard-entities run keeps its optimiser state in the ranks' slices "
            "and saves none, so it cannot be resumed; drop --resume (or --shard-entities)"
        )
    if args.tracker not in (None, "jsonl"):
        raise GraphDataError(
            f"--tracker: a --shard-entities run writes metrics.jsonl only, got --tracker "
            f"{args.tracker}; drop --tracker (or --shard-entities)"
        )
    if config.regime != "slcwa" or config.optimizer not in SPARSE_OPTIMIZERS:
        raise GraphDataError(
            f"--shard-entities: trains with --regime slcwa and a row-wise --optimizer "
            f"({' or '.join(SPARSE_OPTIMIZERS)}), got --regime {config.regime} --optimizer "
            f"{config.optimizer}; pass --regime slcwa --optimizer rowwise_adagrad"
        )
    defaults = DEFAULTS[settings.model]
    relations = dataset.num_relations * (2 if config.reciprocal else 1)
    dim = defaults.dim if settings.dim is None else settings.dim
    table = ShardedTable.build(
        MODELS[settings.model],
        dataset.num_entities,
        relations,
        dim,
        seed=config.seed,
        **defaults.model_kwargs,
    )
    table.model.to(device)
    print(f"dataset: {dataset}")
    _print_config(
        f"model: {settings.model}, dim {dim}", {"name": settings.model, **table.model.config}
    )
    _print_config("training config:", dataclasses.asdict(config))
    print(
        f"sharded entity table: {table.world_size} rank(s); rank 0 owns rows "
        f"[{table.start}, {table.stop}) of {table.num_entities}; no validation, --epochs "
        f"{config.epochs} epochs"
    )
    result = train_sharded(table, dataset, config)
    metrics = evaluate_sharded_table(
        table,
        dataset.test.mapped_triples,
        dataset.filter_index().to(device),
        reciprocal=config.reciprocal,
    )
    checkpoint = sharded_checkpoint(table, dataset, config, result)  # rank 0; None elsewhere
    per_step = result.comm.per_step()
    if checkpoint is not None:
        for record in checkpoint["training"]["history"]:
            record["comm_bytes_per_step"] = per_step["total"]
        save_checkpoint(out / "checkpoint.pt", checkpoint)
        write_text_atomic(
            out / "metrics.jsonl",
            "".join(
                json.dumps(r, allow_nan=False) + "\n" for r in checkpoint["training"]["history"]
            ),
        )
        _write_json(out / "test_metrics.json", metrics.to_dict())
    print(
        f"trained {len(result.losses)} epochs in {result.seconds:.1f} s (final loss "
        f"{result.losses[-1]:.4f}); sent per step and rank: {per_step['total'] / 2**20:.2f} MiB"
    )
    print(metrics.table())
    print(f"wrote {out / 'checkpoint.pt'}, {out / 'metrics.jsonl'}, {out / 'test_metrics.json'}")
    return 0


def _end_of_run(trainer: Trainer) -> str:
    """How the run ended, in one line: at the cap while improving, stopped early, or neither.

    "stopped early" only when patience ran out; "raise --epochs" when the run reached the cap
    with its best validation at the last one (:attr:`Trainer.still_improving_`).
    """
    epoch, mrr = trainer.best_epoch_, trainer.best_valid_mrr_
    if mrr is None:
        note = "no validation"
    elif trainer.still_improving_:
        note = (
            f"reached --epochs {trainer.config.epochs} while validation MRR was still "
            f"improving: best at epoch {epoch}, MRR {mrr:.4f}; raise --epochs"
        )
    else:
        note = f"best validation epoch {epoch}, MRR {mrr:.4f}"
        if trainer.stopped_early_:
            patience = trainer.config.patience
            note += ", stopped early" + (
                f": {patience} validations without improvement (--patience)" if patience else ""
            )
    return f"trained {trainer.epochs_trained_} epochs ({note})"


def _evaluate(args: argparse.Namespace) -> int:
    if args.json:
        check_output_file(args.json, argument="--json")
    device = compute_device(args.device)
    with dropped_triples_as_lines():
        model, ckpt, dataset = load_checkpoint_with_dataset(
            args.checkpoint,
            resolve_world(args.dataset),
            device,
            on_unknown=args.on_unknown,
            header=args.header,
        )
    _refuse_empty_split(dataset, args.split, "--split")
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
        progress=not args.no_progress,
    )
    print(metrics.table(per_relation=args.per_relation, labels=dataset.relations.labels))
    if args.json:
        _write_json(Path(args.json), metrics.to_dict())
        print(f"wrote {args.json}")
    return 0


def _predict(args: argparse.Namespace) -> int:
    if args.json:
        check_output_file(args.json, argument="--json")
    if args.queries is None and args.relation is None:
        raise GraphDataError("--relation: required with --head or --tail (or pass --queries FILE)")
    if args.queries is not None and args.relation is not None:
        raise GraphDataError(
            "--relation: the relations of --queries come from its second column; drop --relation"
        )
    if args.queries is None and args.side is not None:
        raise GraphDataError(
            "--side: only with --queries; --head ranks tails and --tail ranks heads by themselves"
        )
    if args.unfiltered and (args.dataset is not None or args.on_unknown is not None):
        raise GraphDataError(
            "--unfiltered: the dataset (--dataset, --on-unknown) only serves the filter; drop "
            "them, or drop --unfiltered"
        )
    device = compute_device(args.device)
    if args.unfiltered:
        model, ckpt = load_model(args.checkpoint, device=device)
        known = None
    else:
        with dropped_triples_as_lines():
            model, ckpt, dataset = load_checkpoint_with_dataset(
                args.checkpoint,
                resolve_world(args.dataset),
                device,
                on_unknown=args.on_unknown,
                header=args.header,
            )
        known = dataset.filter_index()
    vocab = ckpt["vocabulary"]
    if args.queries is not None:
        side, numbered = args.side or "tail", _read_queries(Path(args.queries))
        pairs = [pair for _, pair in numbered]
        where = [f"--queries: line {n} of {args.queries!r}" for n, _ in numbered]
    else:
        side = "tail" if args.head is not None else "head"
        pairs = [(args.head if side == "tail" else args.tail, args.relation)]
        where = ["--head" if side == "tail" else "--tail"]
    _check_query_labels(pairs, where, vocab, relation="--relation" if args.queries is None else "")
    found = predict(
        model,
        pairs,
        side=side,
        filtered=not args.unfiltered,
        known=known,
        top_k=args.top_k,
        exclude_self=args.exclude_self,
        reciprocal=bool(ckpt["training"]["config"].get("reciprocal", False)),
        entity_labels=vocab["entities"],
        relation_labels=vocab["relations"],
        progress=not args.no_progress,
    )
    how = "unfiltered" if args.unfiltered else "filtered: known triples of the dataset removed"
    records = []
    for (entity, relation), ranked, removed in zip(
        pairs, found.to_list(), found.num_removed.tolist()
    ):
        query = [entity, relation, "?"] if side == "tail" else ["?", relation, entity]
        print(f"({', '.join(query)}) by {model!r} ({how}; {removed} removed):")
        width = max((len(str(label)) for label, _ in ranked), default=1)
        for rank, (label, score) in enumerate(ranked, start=1):
            print(f"{rank:>4}  {label!s:<{width}}  {score:.4f}")
        if not ranked:
            print("   (no candidate left)")
        records.append(
            {
                "query": query,
                "side": side,
                "removed": removed,
                "answers": [{"label": label, "score": score} for label, score in ranked],
            }
        )
    if args.json:
        _write_json(Path(args.json), {"filtered": not args.unfiltered, "queries": records})
        print(f"wrote {args.json}")
    return 0


def _check_query_labels(
    pairs: list[tuple[str, str]], where: list[str], vocab: dict, *, relation: str
) -> None:
    """Refuse an unknown label of a query naming its flag (or ``--queries`` line).

    :func:`kg.prediction.predict` refuses it too, naming its ``queries[i]`` argument.
    ``relation`` names the relation's flag (``--relation``); empty: the query's ``where``.
    """
    entities, relations = set(vocab["entities"]), set(vocab["relations"])
    for (entity, label), origin in zip(pairs, where):
        if entity not in entities:
            raise UnknownLabelError("entity", entity, vocab["entities"], origin)
        if label not in relations:
            raise UnknownLabelError("relation", label, vocab["relations"], relation or origin)


def _read_queries(path: Path) -> list[tuple[int, tuple[str, str]]]:
    """``ENTITY<TAB>RELATION`` per line (blank and ``#`` lines skipped) of ``--queries``.

    Returns:
        ``(line number, (entity label, relation label))`` per query.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise GraphDataError(
            f"--queries: cannot read {str(path)!r} ({err}); pass a UTF-8 TSV file"
        ) from err
    pairs = []
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.rstrip("\r").split("\t")
        if len(fields) != 2:
            raise GraphDataError(
                f"--queries: {path}:{number}: expected 2 tab-separated fields (entity label, "
                f"relation label), got {len(fields)}: {line!r}"
            )
        pairs.append((number, (fields[0], fields[1])))
    if not pairs:
        raise GraphDataError(f"--queries: {path} holds no query; write ENTITY<TAB>RELATION lines")
    return pairs


def _write_json(path: Path, data: dict) -> None:
    # Strict JSON: a NaN or infinity is refused, naming its key path (graphlib_ml.outputs).
    write_text_atomic(path, json_text(data, indent=1))


def add_subparser(subparsers: argparse._SubParsersAction, *, only: str | None = None) -> None:
    """Register ``graphlib kg``: ``train``, ``evaluate``, ``predict``, ``tune`` and ``explain``.

    Args:
        subparsers: The ``graphlib`` parser's subparsers.
        only: The ``kg`` command about to run. Unless it is ``"explain"`` (or ``None``, the
            default: build all), ``explain`` is listed with its one-line help only, so that
            ``kg train`` does not import the explainer; likewise ``tune`` is built in full only
            for ``"tune"`` (or ``None``).

    Examples:
        >>> parser = argparse.ArgumentParser()
        >>> add_subparser(parser.add_subparsers(dest="command"))
        >>> args = parser.parse_args(["kg", "train", "--dataset", "synthetic", "--epochs", "3"])
        >>> args.model, args.epochs, args.lr
        ('auto', 3, None)
    """
    kg = subparsers.add_parser("kg", help="knowledge-graph embeddings: train, evaluate, explain")
    sub = kg.add_subparsers(dest="kg_command", required=True)

    train = sub.add_parser(
        "train",
        help="train a model (tuned defaults per model; flags override them)",
        description="Unset flags take the model's tuned default (kg.models.DEFAULTS), "
        "else the TrainingConfig default.",
    )
    train.add_argument(
        "--config",
        default=None,
        metavar="FILE",
        help="JSON (or TOML) file of settings: model, dim, dataset and training fields, e.g. "
        "OUT/best_config.json of `kg tune`; flags given override it",
    )
    train.add_argument(
        "--dataset",
        action=GivenStore,
        default="synthetic",
        help="folder, a registered dataset downloaded on first use (fb15k237, wn18rr, "
        "codex-s, ...: `graphlib data list`), a synthetic world with its rules (academic, "
        "geography, biology, software, corporate, media, sports, travel, commerce, clinical, "
        "legal, energy, agriculture, maritime, telecom, aviation, publishing, banking, railways, "
        "parliament, construction, ecology, insurance, schools, heritage, wine, transit; "
        "NAME:size=N,seed=S) or 'synthetic' (default)",
    )
    add_on_unknown_flag(train, checkpoint=False)
    add_header_flag(train)
    train.add_argument(
        "--model",
        action=GivenStore,
        default=AUTO,
        choices=[AUTO, *sorted(MODELS)],
        help=f"{AUTO} (default): race {' and '.join(RACE_MODELS)} on validation MRR for "
        "eval_every x patience epochs, continue the better (kg.selection); or one model",
    )
    train.add_argument(
        "--num-people",
        action=GivenStore,
        type=cli_types.positive_int,
        default=300,
        help="synthetic KG size (300)",
    )
    train.add_argument("--dim", type=cli_types.positive_int, default=None, help="embedding size")
    tuned = {f.name for f in dataclasses.fields(next(iter(DEFAULTS.values())))}
    _TRAIN_FLAGS.clear()
    _TRAIN_FLAGS.update(
        add_config_flags(
            train,
            TrainingConfig,
            exclude=_SET_BY_COMMAND,
            choices=_CHOICES,
            default_notes={name: "model's tuned value" for name in tuned},
        )
    )
    train.add_argument("--device", default="auto", help="auto, cpu or cuda (default auto)")
    train.add_argument("--out", default="kg-run", help="output folder (default kg-run)")
    train.add_argument(
        "--nproc",
        type=cli_types.positive_int,
        default=1,
        help="data-parallel worker processes on this machine, started by torch's elastic "
        "launcher (default 1; --batch-size stays the global batch)",
    )
    train.add_argument(
        "--shard-entities",
        action="store_true",
        help="each worker owns a slice of the entity table (PyTorch-BigGraph's partitioned "
        "update; with --nproc N or torchrun): sLCWA, a row-wise --optimizer, no validation, "
        "not resumable",
    )
    add_tracker_flags(train)
    again = train.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true", help="continue OUT/checkpoint.pt")
    again.add_argument(
        "--overwrite",
        action="store_true",
        help="start over in an OUT that holds a run (removes its checkpoint and metrics; a "
        "symbolic link among them stays and the file it names is removed, so the new run "
        "writes through it)",
    )
    train.set_defaults(func=_train)

    ev = sub.add_parser("evaluate", help="filtered rank-based metrics of a checkpoint")
    ev.add_argument("checkpoint", help="a checkpoint.pt written by `graphlib kg train`")
    ev.add_argument(
        "--dataset", help="folder, registered name or synthetic spec (default: the one trained on)"
    )
    add_on_unknown_flag(ev, checkpoint=True)
    add_header_flag(ev)
    ev.add_argument(
        "--split",
        default="test",
        choices=("train", "valid", "test"),
        help="the split whose triples are ranked (default: %(default)s)",
    )
    ev.add_argument(
        "--rank-type",
        default="realistic",
        choices=RANK_TYPES,
        help="how ties with the true entity count: realistic (half of them, PyKEEN's default), "
        "optimistic (none) or pessimistic (all) (default: %(default)s)",
    )
    ev.add_argument("--per-relation", action="store_true", help="add one row per relation")
    ev.add_argument("--json", help="also write the metrics to this JSON file")
    ev.add_argument("--device", default="auto", help="auto, cpu or cuda (default auto)")
    ev.add_argument(
        "--compile",
        action="store_true",
        help="score with the model's torch.compile kernel where it has one (RotatE): "
        "seconds of compilation, then several times faster",
    )
    ev.add_argument("--no-progress", action="store_true", help="no progress bar")
    ev.set_defaults(func=_user_warnings_as_lines(_evaluate))

    pr = sub.add_parser(
        "predict",
        help="most plausible tails of (head, relation, ?) or heads of (?, relation, tail)",
        description="Known answers (train + valid + test of the checkpoint's dataset) are "
        "removed unless --unfiltered, as in filtered ranking.",
    )
    pr.add_argument("checkpoint", help="a checkpoint.pt written by `graphlib kg train`")
    query = pr.add_mutually_exclusive_group(required=True)
    query.add_argument("--head", help="head entity label: rank the tails of (HEAD, RELATION, ?)")
    query.add_argument("--tail", help="tail entity label: rank the heads of (?, RELATION, TAIL)")
    query.add_argument(
        "--queries",
        help="TSV file, one ENTITY<TAB>RELATION query per line (the side comes from --side)",
    )
    pr.add_argument("--relation", help="relation label (with --head or --tail)")
    pr.add_argument(
        "--side",
        choices=("tail", "head"),
        default=None,
        help="with --queries: rank tails (ENTITY is the head) or heads (default tail)",
    )
    for flag, note in (("--top-k", "how many answers per query (default 10)"), ("--top", "")):
        pr.add_argument(
            flag,
            dest="top_k",
            type=cli_types.positive_int,
            default=10,
            help=note or "the older name of --top-k",
        )
    pr.add_argument(
        "--unfiltered",
        action="store_true",
        help="keep known answers (raw scores; default: remove them)",
    )
    pr.add_argument(
        "--exclude-self",
        action="store_true",
        help="never answer the query's own entity (irreflexive relations, e.g. spouse)",
    )
    pr.add_argument(
        "--dataset", help="folder, registered name or synthetic spec (default: the one trained on)"
    )
    add_on_unknown_flag(pr, checkpoint=True)
    add_header_flag(pr)
    pr.add_argument("--json", help="also write the predictions to this JSON file")
    pr.add_argument("--device", default="auto", help="auto, cpu or cuda (default auto)")
    pr.add_argument("--no-progress", action="store_true", help="no progress bar")
    pr.set_defaults(func=_user_warnings_as_lines(_predict))

    if only in (None, "tune"):
        add_tune_subparser(sub, help_text=_TUNE_HELP)
    else:
        sub.add_parser("tune", help=_TUNE_HELP, add_help=False)

    if only in (None, "explain"):
        from graphlib_ml.cli.explain import add_explain_subparser

        add_explain_subparser(sub)
    else:
        sub.add_parser("explain", help=_EXPLAIN_HELP, add_help=False)
