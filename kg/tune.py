r"""Hyper-parameter search for a KGE model with Optuna: TPE, median pruning, a resumable study.

:func:`tune` runs an Optuna study (Akiba et al., "Optuna: A Next-generation Hyperparameter
Optimization Framework", KDD 2019, arXiv:1907.10902) that maximises the filtered validation MRR
of :class:`kg.training.Trainer` (the best validation of each trial, early stopping included):

* sampler: TPE (Bergstra et al., NeurIPS 2011) seeded with ``seed`` plus the number of trials
  already in the study (modulo ``2**32``), so a resumed study draws new points instead of
  replaying the first ones;
* pruner: :class:`optuna.pruners.MedianPruner`: each validation reports its MRR at
  ``step=epoch`` (through a :class:`graphdata.tracking.Tracker` handed to ``fit``) and a trial
  whose MRR is below the median of earlier trials at that epoch is stopped;
* storage: the SQLite file ``out/study.db`` with the fixed study name :data:`STUDY_NAME`, loaded
  when it exists: running the same search again after a kill continues the study. Trials
  ``trials`` counts in total, so the resumed run only runs what is missing; a trial that was
  running when the process died (or was interrupted) is marked failed and its parameters are
  tried again first. The sampler's random state is not saved, so a resumed study is a valid
  continuation, not a replay of an uninterrupted one.

After every trial it writes, atomically, ``out/trials.jsonl`` (one line per trial: number,
state, value (for a pruned trial its last validation MRR), parameters, seconds (null for a
trial not started or not ended, such as one queued again), the epoch a pruned trial stopped
at; strict JSON, never NaN) and
``out/best_config.json``, the best trial's full training configuration, which
``graphlib kg train --config out/best_config.json`` reads (:func:`load_train_config`).

The search spaces (:data:`SEARCH_SPACES`) are small and follow PyKEEN's HPO defaults
(``pykeen.hpo``, Ali et al., JMLR 2021, arXiv:2007.14175): embedding size a power of two in
[32, 256] (``DEFAULT_EMBEDDING_HPO_EMBEDDING_DIM_RANGE``), Adam learning rate log-uniform in
[1e-3, 1e-1] (``optimizers_hpo_defaults``), batch size a power of two (narrowed from PyKEEN's
[16, 4096] to [64, 512] for small graphs), sLCWA negatives log-uniform in [1, 100]
(``num_negs_per_pos``) with the NSSA temperature in [0.5, 1] step 0.1 and, for TransE, its
margin in [3, 30] step 3 (``NSSALoss.hpo_default``). The N3 weight of the 1vsAll models is
log-uniform in [1e-3, 1e-1] around the tuned 1e-2 (LibKGE searches [1e-20, 1e-1], Ruffinelli et
al., ICLR 2020), and label smoothing of TuckER and ConvE is in [0, 0.3] step 0.1. The loss and
regime stay the model's tuned ones (:data:`kg.models.DEFAULTS`).

Optuna is an optional extra (``pip install 'graphlib-ml[tune]'``), imported only inside
:func:`tune`.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from graphdata.atomic import write_text_atomic
from graphdata.errors import GraphDataError
from graphdata.tracking import Tracker, _add_note
from graphdata.triples import KGDataset
from kg.config import TrainingConfig, _choice
from kg.models import DEFAULTS, MODELS

__all__ = [
    "SEARCH_SPACES",
    "STUDY_NAME",
    "TRAIN_CONFIG_KEYS",
    "TuneResult",
    "load_train_config",
    "save_train_config",
    "tune",
]

#: The Optuna study name inside ``out/study.db`` (fixed, so that a second run resumes it).
STUDY_NAME = "graphlib-kg-tune"

#: TrainingConfig fields a config file never holds: set by the command (paths) or display only.
_NOT_IN_FILE = ("log_path", "checkpoint_path", "progress")
#: Keys of a training config file (:func:`load_train_config`): the ``kg train`` flags that
#: describe the experiment (model, embedding size, dataset) and every TrainingConfig field that
#: has a flag (``progress`` included, which :func:`save_train_config` leaves out).
TRAIN_CONFIG_KEYS: tuple[str, ...] = (
    "model",
    "dim",
    "dataset",
    "num_people",
    *(f.name for f in dataclasses.fields(TrainingConfig) if f.name not in _NOT_IN_FILE[:2]),
)

#: A search-space entry: ``("choice", values)``, ``("log", low, high)`` (float, log-uniform),
#: ``("int_log", low, high)`` or ``("step", low, high, step)`` (float on a grid).
Spec = tuple[Any, ...]
_BASE: dict[str, Spec] = {
    "dim": ("choice", (32, 64, 128, 256)),
    "lr": ("log", 1e-3, 1e-1),
    "batch_size": ("choice", (64, 128, 256, 512)),
}
_SLCWA: dict[str, Spec] = {
    "num_negatives": ("int_log", 1, 100),
    "adversarial_temperature": ("step", 0.5, 1.0, 0.1),
}
_N3: dict[str, Spec] = {"regularizer_weight": ("log", 1e-3, 1e-1)}
_SMOOTHING: dict[str, Spec] = {"label_smoothing": ("step", 0.0, 0.3, 0.1)}

#: Model name -> field -> search-space entry (``dim`` is the embedding size, the rest are
#: TrainingConfig fields). RESCAL and TuckER stop at 128 (cost d^2 per relation, d^3 core);
#: ConvE's size must be a multiple of its embedding height 10. See the module docstring for
#: the sources of the ranges.
SEARCH_SPACES: dict[str, dict[str, Spec]] = {
    "transe": {**_BASE, **_SLCWA, "margin": ("step", 3.0, 30.0, 3.0)},
    "rotate": {**_BASE, **_SLCWA},
    "distmult": {**_BASE, **_N3},
    "complex": {**_BASE, **_N3},
    "rescal": {**_BASE, "dim": ("choice", (32, 64, 128)), **_N3},
    "tucker": {**_BASE, "dim": ("choice", (32, 64, 128)), **_SMOOTHING},
    "conve": {**_BASE, "dim": ("choice", (100, 200)), **_SMOOTHING},
}

#: Median pruning: no pruning before this many trials have finished (a median of fewer is
#: noise) nor before this epoch of a trial (early validations are all low).
_PRUNER_STARTUP_TRIALS = 3
_PRUNER_WARMUP_EPOCHS = 4


@dataclass(frozen=True)
class TuneResult:
    """What :func:`tune` found.

    Attributes:
        best_value: The best trial's best validation MRR.
        best_trial: Its trial number.
        best_config: The training config file it wrote (see :func:`save_train_config`).
        trials: Trials finished in the study, resumed ones included (complete, pruned, failed).
        pruned: How many of them were pruned.
        out: The output folder (``study.db``, ``trials.jsonl``, ``best_config.json``).
    """

    best_value: float
    best_trial: int
    best_config: dict[str, Any]
    trials: int
    pruned: int
    out: Path


def save_train_config(
    path: str | os.PathLike[str],
    *,
    model: str,
    dim: int,
    config: TrainingConfig,
    dataset: str | None = None,
    num_people: int | None = None,
) -> dict[str, Any]:
    """Write a training config file (JSON, atomically) that ``kg train --config`` reads.

    One flat object: ``model``, ``dim``, optionally ``dataset`` and ``num_people``, then every
    TrainingConfig field except ``log_path``, ``checkpoint_path`` and ``progress`` (``null``
    for None, e.g. ``"regularizer": null``).

    Args:
        path: The file to write.
        model: A key of :data:`kg.models.MODELS`.
        dim: The embedding size.
        config: The training configuration.
        dataset: The dataset spec (a folder or ``synthetic``), if it should be recorded.
        num_people: The synthetic KG's size, if it should be recorded.

    Returns:
        The dict written.
    """
    data: dict[str, Any] = {"model": model, "dim": dim}
    if dataset is not None:
        data["dataset"] = dataset
    if num_people is not None:
        data["num_people"] = num_people
    data.update({k: v for k, v in dataclasses.asdict(config).items() if k not in _NOT_IN_FILE})
    write_text_atomic(path, json.dumps(data, indent=1, allow_nan=False) + "\n")
    return data


def load_train_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a training config file: JSON (``.json``) or TOML (``.toml``, Python 3.11+).

    Keys are those of :data:`TRAIN_CONFIG_KEYS` (field names with ``_``, as the flags with
    ``-``); ``null`` or ``"none"`` set ``regularizer`` (and the other optional fields) to
    None. ``model``, ``dim``, ``dataset`` and ``num_people`` are checked here; the training
    fields are checked together with the flags that override them, by
    :meth:`kg.config.TrainingConfig.validate` (a file may hold ``"regularizer": null`` while a
    flag sets ``--regularizer-weight 0``).

    Args:
        path: The file.

    Returns:
        Key -> value, only the keys the file sets.

    Raises:
        GraphDataError: On a file that is not a JSON/TOML object, an unknown key (the message
            lists the valid ones), or a bad value.
        OSError: When the file cannot be read.

    Examples:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "c.json"
        >>> _ = path.write_text('{"model": "distmult", "lr": 0.01, "regularizer": null}')
        >>> load_train_config(path)
        {'model': 'distmult', 'lr': 0.01, 'regularizer': None}
    """
    path = Path(path)
    text = path.read_text()
    data: Any
    if path.suffix == ".toml":
        data = _read_toml(path, text)
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise GraphDataError(
                f"--config: {path} is not valid JSON ({err}); fix it, or name a TOML file .toml"
            ) from err
    if not isinstance(data, dict):
        raise GraphDataError(
            f"--config: expected a JSON/TOML object of settings in {path}, got "
            f'{type(data).__name__}; write {{"model": ..., "lr": ...}}'
        )
    unknown = sorted(set(data) - set(TRAIN_CONFIG_KEYS))
    if unknown:
        raise GraphDataError(
            f"--config: unknown keys {unknown} in {path}; expected some of "
            f"{sorted(TRAIN_CONFIG_KEYS)} (flag names with '_' for '-')"
        )
    values = {k: (None if v == "none" else v) for k, v in data.items()}
    _check_file_values(path, values)
    return values


def _read_toml(path: Path, text: str) -> Any:
    """Parse TOML with :mod:`tomllib` (Python 3.11+); on 3.10, say to write JSON."""
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            raise GraphDataError(f"--config: {path} is not valid TOML ({err}); fix it") from err
    raise GraphDataError(
        f"--config: {path} is TOML, which needs Python 3.11 (tomllib); write it as JSON "
        "(.json) instead"
    )


def _check_file_values(path: Path, values: Mapping[str, Any]) -> None:
    """Refuse a bad model, dim, dataset or num_people in a config file."""
    model = values.get("model", "complex")
    if model not in MODELS and model != "auto":  # "auto": kg train's race (kg.selection)
        raise GraphDataError(
            f"--config: {path}: model: expected 'auto' or one of {sorted(MODELS)}, got {model!r}"
        )
    for key in ("dim", "num_people"):
        value = values.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise GraphDataError(
                f"--config: {path}: {key}: expected an int >= 1 or null, got {value!r}"
            )
    if values.get("dataset") is not None and not isinstance(values["dataset"], str):
        raise GraphDataError(
            f"--config: {path}: dataset: expected a folder or 'synthetic', got "
            f"{values['dataset']!r}"
        )


def _suggest(trial: Any, space: Mapping[str, Spec]) -> dict[str, Any]:
    """One value per entry of ``space`` from an Optuna trial."""
    out: dict[str, Any] = {}
    for name, spec in space.items():
        kind = spec[0]
        if kind == "choice":
            out[name] = trial.suggest_categorical(name, list(spec[1]))
        elif kind == "log":
            out[name] = trial.suggest_float(name, spec[1], spec[2], log=True)
        elif kind == "int_log":
            out[name] = trial.suggest_int(name, spec[1], spec[2], log=True)
        else:
            out[name] = round(trial.suggest_float(name, spec[1], spec[2], step=spec[3]), 10)
    return out


class _Reporter:
    """A tracker that reports each validation MRR to the trial and prunes when told to."""

    def __init__(self, trial: Any, pruned: type[Exception]) -> None:
        self.trial = trial
        self.pruned = pruned

    def log_params(self, params: Mapping[str, Any]) -> None:
        """Nothing to log: the trial's parameters are in the study already."""

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        if "valid_mrr" not in metrics:
            return
        self.trial.report(float(metrics["valid_mrr"]), step)
        if self.trial.should_prune():
            self.trial.set_user_attr("pruned_at_epoch", step)
            raise self.pruned(f"validation MRR {metrics['valid_mrr']:.4f} at epoch {step}")

    def close(self) -> None:
        """Nothing to release: the trial belongs to the study."""


def tune(
    dataset: KGDataset,
    model: str,
    *,
    out: str | os.PathLike[str],
    trials: int,
    timeout: float | None = None,
    seed: int = 0,
    overrides: Mapping[str, Any] | None = None,
    device: torch.device | str = "cpu",
    pruner: Any = None,
    tracker: Tracker | None = None,
    dataset_spec: str | None = None,
    num_people: int | None = None,
    verbose: bool = False,
) -> TuneResult:
    """Search the hyper-parameters of ``model`` on ``dataset`` (see the module docstring).

    Args:
        dataset: The dataset; trials train on ``train`` and are scored on ``valid``.
        model: A key of :data:`kg.models.MODELS` (its space is ``SEARCH_SPACES[model]``).
        out: Output folder: ``study.db``, ``trials.jsonl``, ``best_config.json``.
        trials: Trials the study should hold when done (resumed ones count).
        timeout: Stop starting trials after this many seconds (None: no limit).
        seed: Seeds the sampler (plus the trials already done, modulo ``2**32``, NumPy's range)
            and every trial's training; an int in ``[0, 2**64 - 1]``.
        overrides: TrainingConfig fields fixed for every trial (e.g. ``epochs``,
            ``eval_every``); a fixed field is left out of the search. Default: the model's
            tuned values for what the space does not set.
        device: Where trials train (models are built on the CPU and moved there).
        pruner: An Optuna pruner instead of the median pruner (tests pass a stub).
        tracker: Also log the study's settings once and each trial (``valid_mrr``, absent for
            a failed trial, ``pruned``, ``seconds`` and the numeric parameters as
            ``param.<name>``) at ``step=trial number``; a resumed study first logs its finished
            trials again (those a killed run stored but had not logged included). The caller
            closes it.
        dataset_spec: Recorded as ``dataset`` in ``best_config.json`` (the CLI's --dataset).
        num_people: Recorded as ``num_people`` in ``best_config.json`` (synthetic KGs).
        verbose: Print one line per trial to stdout. Default False.

    Returns:
        The best trial and counts (:class:`TuneResult`).

    Raises:
        GraphDataError: On a bad argument, a study in ``out`` of another model or dataset,
            or a study in which no trial completed.
        ImportError: Without Optuna (``pip install 'graphlib-ml[tune]'``).
    """
    _choice("model", model, tuple(MODELS))
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise GraphDataError(f"trials: expected an int >= 1, got {trials!r}; pass --trials 20")
    if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0):
        raise GraphDataError(f"timeout: expected seconds > 0 or None, got {timeout!r}")
    if not isinstance(dataset, KGDataset):
        raise GraphDataError(f"dataset: expected a KGDataset, got {type(dataset).__name__}")
    fixed = dict(overrides or {})
    base = TrainingConfig.from_defaults(model, **fixed, seed=seed, progress=False)
    base.validate()
    if base.eval_every == 0:
        raise GraphDataError(
            "overrides: eval_every=0 never validates, and trials are scored by validation MRR; "
            "pass eval_every >= 1"
        )
    optuna = _import_optuna()
    from kg.training import TrainingDivergedError

    space = {k: v for k, v in SEARCH_SPACES[model].items() if k not in fixed}
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    storage = optuna.storages.RDBStorage(f"sqlite:///{(folder / 'study.db').resolve()}")
    done_before = _count_done(optuna, storage)
    study = optuna.create_study(
        study_name=STUDY_NAME,
        storage=storage,
        direction="maximize",
        load_if_exists=True,
        # Optuna's sampler takes NumPy's seeds, [0, 2**32 - 1]; the seed is torch's 64 bits (as
        # graphdata.device.seed_everything seeds NumPy).
        sampler=optuna.samplers.TPESampler(seed=(seed + done_before) % 2**32),
        pruner=pruner
        if pruner is not None
        else optuna.pruners.MedianPruner(
            n_startup_trials=_PRUNER_STARTUP_TRIALS, n_warmup_steps=_PRUNER_WARMUP_EPOCHS
        ),
    )
    settings = {"model": model, "dataset": dataset.name, "space": repr(space)}
    _check_same_study(study, settings, folder)
    _retry_interrupted(optuna, study, storage)
    if tracker is not None:
        tracker.log_params({**settings, "trials": trials, "seed": seed, **fixed})

    def objective(trial: Any) -> float:
        values = _suggest(trial, space)
        dim = values.pop("dim", None)
        config = dataclasses.replace(base, **values)
        config.validate()
        trial.set_user_attr("config", dataclasses.asdict(config))
        trial.set_user_attr("dim", dim if dim is not None else DEFAULTS[model].dim)
        from kg.training import Trainer, build_model

        net = build_model(model, dataset, config, dim=dim).to(device)
        try:
            trainer = Trainer(net, config).fit(
                dataset, tracker=_Reporter(trial, optuna.TrialPruned)
            )
        except KeyboardInterrupt:
            trial.set_user_attr("interrupted", True)
            study.enqueue_trial(trial.params, user_attrs={"retry_of": trial.number})
            raise
        if trainer.best_valid_mrr_ is None:  # eval_every >= 1 was checked above; a guard
            raise GraphDataError(f"trial {trial.number}: no validation MRR; pass eval_every >= 1")
        return float(trainer.best_valid_mrr_)

    def log_trial(trial: Any) -> None:
        if tracker is not None:
            numeric = {
                f"param.{k}": float(v)
                for k, v in trial.params.items()
                if isinstance(v, (int, float)) and not isinstance(v, bool)
            }
            # a failed trial (no value) logs no valid_mrr: NaN is never a result
            value = {} if trial.value is None else {"valid_mrr": float(trial.value)}
            seconds = _seconds(trial)
            tracker.log_metrics(
                {
                    **value,
                    "pruned": float(trial.state == optuna.trial.TrialState.PRUNED),
                    **({} if seconds is None else {"seconds": seconds}),
                    **numeric,
                },
                step=trial.number,
            )

    # Optuna stores a trial before the callback logs it, so a killed study may hold finished
    # trials its tracker never got: log them all again (the tracker's purge replaces the old).
    for trial in study.get_trials(deepcopy=False):
        if trial.state.is_finished() and not trial.user_attrs.get("interrupted", False):
            log_trial(trial)

    def after_trial(study: Any, trial: Any) -> None:
        _write_outputs(optuna, study, folder, model, dataset_spec, num_people)
        log_trial(trial)
        if verbose:
            value = "-" if trial.value is None else f"{trial.value:.4f}"
            print(
                f"trial {trial.number}: {trial.state.name.lower()} valid MRR {value} {trial.params}"
            )

    remaining = trials - _count_done(optuna, storage)
    if remaining > 0:
        study.optimize(
            objective,
            n_trials=remaining,
            timeout=timeout,
            catch=(TrainingDivergedError,),
            callbacks=[after_trial],
            gc_after_trial=False,
        )
    _write_outputs(optuna, study, folder, model, dataset_spec, num_people)
    finished = _done_trials(optuna, study.get_trials(deepcopy=False))
    complete = [t for t in finished if t.state == optuna.trial.TrialState.COMPLETE]
    if not complete:
        raise GraphDataError(
            f"tune: no trial of the study in {folder} completed (all pruned or diverged); "
            "raise trials, or lower the learning-rate range with a fixed lr"
        )
    best = study.best_trial
    return TuneResult(
        best_value=float(best.value),
        best_trial=int(best.number),
        best_config=json.loads((folder / "best_config.json").read_text()),
        trials=len(finished),
        pruned=sum(t.state == optuna.trial.TrialState.PRUNED for t in finished),
        out=folder,
    )


def _import_optuna() -> Any:
    try:
        # Through importlib: mypy then needs no optuna where the extra is not installed.
        optuna: Any = importlib.import_module("optuna")
    except ImportError as err:
        missing = ImportError(
            f"kg tune needs the 'optuna' package, which is not installed ({err})", name="optuna"
        )
        _add_note(missing, "install the extra: pip install 'graphlib-ml[tune]'")
        raise missing from err
    optuna.logging.set_verbosity(optuna.logging.WARNING)  # one line per trial is ours
    return optuna


def _done_trials(optuna: Any, trials: list[Any]) -> list[Any]:
    """Trials that ended by themselves: complete, pruned, or failed but not interrupted."""
    states = optuna.trial.TrialState
    ended = (states.COMPLETE, states.PRUNED, states.FAIL)
    return [t for t in trials if t.state in ended and not t.user_attrs.get("interrupted")]


def _count_done(optuna: Any, storage: Any) -> int:
    try:
        study_id = storage.get_study_id_from_name(STUDY_NAME)
    except KeyError:
        return 0
    return len(_done_trials(optuna, storage.get_all_trials(study_id, deepcopy=False)))


def _check_same_study(study: Any, settings: Mapping[str, str], folder: Path) -> None:
    """Record the study's model, dataset and space; refuse to resume a different study."""
    old = study.user_attrs
    if not old:
        for key, value in settings.items():
            study.set_user_attr(key, value)
        return
    changed = [k for k, v in settings.items() if old.get(k) != v]
    if changed:
        raise GraphDataError(
            f"--out: {folder / 'study.db'} holds a study with another "
            + ", ".join(f"{k} ({old.get(k)!r}, now {settings[k]!r})" for k in changed)
            + "; pass another --out, or the same settings to resume it"
        )


def _retry_interrupted(optuna: Any, study: Any, storage: Any) -> None:
    """Fail the trials a killed process left running and queue their parameters again.

    The caller holds the output folder's lock, so no other process runs them.
    """
    study_id = storage.get_study_id_from_name(STUDY_NAME)
    for trial in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
        trial_id = storage.get_trial_id_from_study_id_trial_number(study_id, trial.number)
        storage.set_trial_user_attr(trial_id, "interrupted", True)
        storage.set_trial_state_values(trial_id, optuna.trial.TrialState.FAIL)
        if trial.params:
            study.enqueue_trial(trial.params, user_attrs={"retry_of": trial.number})


def _seconds(trial: Any) -> float | None:
    """The trial's run time; undefined (None) for a trial not started or not ended."""
    if trial.datetime_start is None or trial.datetime_complete is None:
        return None
    return (trial.datetime_complete - trial.datetime_start).total_seconds()


def _write_outputs(
    optuna: Any,
    study: Any,
    folder: Path,
    model: str,
    dataset_spec: str | None,
    num_people: int | None,
) -> None:
    """Rewrite ``trials.jsonl`` and (once a trial completed) ``best_config.json``."""
    rows = []
    for t in study.get_trials(deepcopy=False):
        rows.append(
            {
                "number": t.number,
                "state": t.state.name.lower(),
                "value": t.value,
                "params": t.params,
                "seconds": _seconds(t),
                "pruned_at_epoch": t.user_attrs.get("pruned_at_epoch"),
                "interrupted": bool(t.user_attrs.get("interrupted", False)),
                "fail_reason": t.system_attrs.get("fail_reason"),
            }
        )
    text = "".join(json.dumps(r, allow_nan=False) + "\n" for r in rows)  # values are finite
    write_text_atomic(folder / "trials.jsonl", text)
    complete = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    if not complete:
        return
    best = max(complete, key=lambda t: t.value)
    config = TrainingConfig(**best.user_attrs["config"])
    save_train_config(
        folder / "best_config.json",
        model=model,
        dim=int(best.user_attrs["dim"]),
        config=dataclasses.replace(config, progress=True),
        dataset=dataset_spec,
        num_people=num_people,
    )
