r"""Model selection by validation: race two 1-N bilinear models, continue the better one.

No one KGE model is best on every KG. ComplEx (Trouillon et al., ICML 2016, arXiv 1606.06357)
can score asymmetric relations; DistMult (Yang et al., ICLR 2015, arXiv 1412.6575) scores every
relation symmetrically, :math:`\langle e_h, w_r, e_t \rangle`, which is exactly right for a
symmetric relation and which ComplEx has to learn. Measured at each model's tuned defaults
(``benchmarks/RESULTS.md``, issue 17): ComplEx is the better of the two on UMLS, Kinships,
FB15k-237 and the corporate and software worlds, DistMult on Nations and on the media world,
where a symmetric relation holds half the test triples (test MRR .779 against .867).

:func:`race` trains every candidate (:data:`RACE_MODELS`) with its tuned defaults
(:data:`kg.models.DEFAULTS`, overridden by the same ``overrides``) for the race's

.. math::
    R = \min(\text{epochs}, \; \text{eval\_every} \cdot \text{patience})

epochs: the epochs early stopping waits for a model to improve before giving up on it, the
same horizon here to give up on a model against another (with ``patience=None``, R is the whole
epoch cap: both are trained in full). The winner is the candidate of largest best validation
MRR

.. math::
    m^\star = \arg\max_m \max_{e \le R,\ e \,\in\, \text{validated}} \text{MRR}_\text{valid}(m, e)

(the first of :data:`RACE_MODELS` on a tie), and it continues from its race checkpoint to its
own epoch cap and early stopping. A resumed checkpoint restores the parameters, the optimiser,
the random states and the early-stopping counters, so **the winner's run is the run of
``--model winner``**: the same parameters at every epoch. The cost of the race is R epochs of
each loser; on the small KGs seconds, on FB15k-237 (one CPU thread, about 190 s per DistMult
epoch with its validation) about an hour (``benchmarks/RESULTS.md``).

The rule was read off validation curves of seen KGs (Nations, UMLS, the corporate, software and
media worlds: after 20 epochs it picks the model of better test MRR on all five, after 10 it
misses UMLS), so its claim on an unseen KG is what the held-out worlds in
``benchmarks/RESULTS.md`` show.

Files, with ``folder`` (``graphlib kg train`` passes ``--out``): ``race_<model>.pt`` and
``race_<model>.jsonl`` (each candidate's race checkpoint and epoch log), ``race.json`` (the
race: horizon, each candidate's validation curve and best, the winner; written when the race is
decided), then the winner's ``checkpoint.pt`` (its race checkpoint copied, then continued) and
``metrics.jsonl`` (its whole history, race epochs included). The race checkpoints are removed
once the winner's is in place (written atomically, through a symlink at ``checkpoint.pt``); a
``race_<model>.pt`` that is a symlink stays, and the checkpoint written at its target is
removed (:func:`graphdata.run_folder.remove_run_files`, as ``--overwrite`` does).
``resume=True`` continues a killed race where it stopped: a candidate from its race
checkpoint, or, once ``race.json`` names the winner, the winner from ``checkpoint.pt``; the race
keeps the horizon R it started with (a race checkpoint's epoch cap), so that other ``epochs``,
``eval_every`` or ``patience`` on resume change the winner's run, not the race.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from graphdata.atomic import write_bytes_atomic, write_text_atomic
from graphdata.errors import GraphDataError
from graphdata.run_folder import remove_run_files
from graphdata.tracking import Tracker
from graphdata.triples import KGDataset
from kg.checkpoint import load_checkpoint
from kg.config import TrainingConfig
from kg.models import MODELS
from kg.training import Trainer, TrainingDivergedError, build_model

__all__ = ["RACE_MODELS", "RaceResult", "race", "race_epochs", "race_files"]

#: The candidates of ``graphlib kg train`` without ``--model``, in the order they are trained;
#: the first wins a tie.
RACE_MODELS: tuple[str, ...] = ("complex", "distmult")

#: TrainingConfig fields the race sets itself per candidate.
_SET_BY_RACE = ("checkpoint_path", "log_path")


@dataclass(frozen=True)
class RaceResult:
    """What :func:`race` decided, and the winner's trainer.

    Attributes:
        winner: The model that won and was continued.
        trainer: The winner's :class:`~kg.training.Trainer`, fitted to its full schedule
            (``trainer.model_``, ``trainer.history_``, ``trainer.best_valid_mrr_``, ...).
        race_epochs: R, the epochs each candidate trained in the race.
        candidates: Per candidate: ``best_valid_mrr``, ``best_epoch``, ``epochs`` (trained in
            the race), ``valid_mrr`` (``[epoch, MRR]`` of every race validation) and
            ``diverged`` (the error message, or ``None``).
    """

    winner: str
    trainer: Trainer
    race_epochs: int
    candidates: dict[str, dict[str, Any]]

    def summary(self) -> str:
        """One line: each candidate's best validation MRR in the race, and the winner."""
        parts = []
        for name, info in self.candidates.items():
            if info["diverged"] is not None:
                parts.append(f"{name} diverged")
            else:
                parts.append(f"{name} {info['best_valid_mrr']:.4f} (epoch {info['best_epoch']})")
        return (
            f"race over {self.race_epochs} epochs, best validation MRR: {', '.join(parts)}; "
            f"continued {self.winner}"
        )


def race_epochs(config: TrainingConfig) -> int:
    """R: ``min(epochs, eval_every * patience)``, or ``epochs`` when ``patience`` is None.

    Raises:
        GraphDataError: When ``eval_every`` is 0: without validation there is nothing to
            choose by.

    Examples:
        >>> race_epochs(TrainingConfig(epochs=200, eval_every=2, patience=10))
        20
        >>> race_epochs(TrainingConfig(epochs=200, eval_every=2, patience=None))
        200
    """
    if not config.eval_every:
        raise GraphDataError(
            "eval_every (--eval-every): the race chooses a model by validation MRR, got "
            "eval_every=0 (no validation); pass --eval-every 2, or one --model"
        )
    if config.patience is None:
        return config.epochs
    return min(config.epochs, config.eval_every * config.patience)


def race_files(candidates: Sequence[str] = RACE_MODELS) -> tuple[str, ...]:
    """The file names :func:`race` writes in its folder besides the winner's run files."""
    return (
        "race.json",
        *(f"race_{name}.pt" for name in candidates),
        *(f"race_{name}.jsonl" for name in candidates),
    )


def race(
    dataset: KGDataset,
    *,
    candidates: Sequence[str] = RACE_MODELS,
    dim: int | None = None,
    overrides: Mapping[str, Any] | None = None,
    folder: str | os.PathLike[str] | None = None,
    resume: bool = False,
    device: torch.device | str = "cpu",
    tracker: Tracker | None = None,
    announce: Callable[[str], None] | None = None,
) -> RaceResult:
    r"""Train each candidate for R epochs, keep the best by validation MRR, continue it.

    Implements the rule of the module docstring: R = :func:`race_epochs` of the first
    candidate's config, :math:`m^\star = \arg\max_m` best validation MRR within R epochs (the
    first on a tie), then the winner resumes from its race checkpoint to its own
    ``epochs``/``patience``: the same run as training ``m*`` alone.

    Args:
        dataset: The dataset (its valid split chooses; test is never read).
        candidates: Model names of :data:`kg.models.MODELS`, at least two, trained in this
            order. Default :data:`RACE_MODELS`.
        dim: Embedding size of every candidate; ``None`` (default) takes each one's tuned
            ``DEFAULTS[name].dim``.
        overrides: :class:`~kg.config.TrainingConfig` fields set for every candidate over its
            tuned defaults (``checkpoint_path`` and ``log_path`` are the race's own).
        folder: Where the race and the winner's run are written (module docstring, "Files");
            ``None`` (default): a temporary folder, removed afterwards (the returned trainer
            then has no checkpoint path).
        resume: Continue a killed race in ``folder``. Default False.
        device: Where the models train. Default CPU.
        tracker: Logs the winner's continued epochs (see :meth:`kg.training.Trainer.fit`).
        announce: Called with one line as each candidate starts and when the race is decided
            (``graphlib kg train`` prints them). Default None.

    Returns:
        The :class:`RaceResult`.

    Raises:
        GraphDataError: On fewer than two or unknown candidates, an override the race sets,
            ``eval_every=0``, an empty valid split, ``resume`` without ``folder``, or a
            ``race.json`` that cannot be read or does not match the candidates.
        TrainingDivergedError: When every candidate diverges in the race (one that diverges
            is out of the race), or when the winner diverges after it.
    """
    names = list(candidates)
    unknown = [name for name in names if name not in MODELS]
    if len(names) < 2 or unknown or len(set(names)) != len(names):
        raise GraphDataError(
            f"candidates: expected two or more distinct names of {sorted(MODELS)}, got {names!r}"
        )
    settings = dict(overrides or {})
    clash = sorted(set(settings) & set(_SET_BY_RACE))
    if clash:
        raise GraphDataError(
            f"overrides: the race sets {clash} itself (from folder); leave them out"
        )
    if resume and folder is None:
        raise GraphDataError("resume: True needs folder (the race to continue)")
    if not len(dataset.valid):
        raise GraphDataError(
            f"dataset: the race chooses a model by validation MRR, got an empty valid split "
            f"({dataset.name!r}: 0 valid triples); add valid triples, or train one model "
            f"without validation (--model {names[0]} --eval-every 0)"
        )
    say = announce if announce is not None else (lambda line: None)
    if folder is None:
        with tempfile.TemporaryDirectory(prefix="graphlib-race-") as tmp:
            result = _race(dataset, names, dim, settings, Path(tmp), False, device, tracker, say)
        config = dataclasses.replace(result.trainer.config, checkpoint_path=None, log_path=None)
        result.trainer.config = config
        return result
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    return _race(dataset, names, dim, settings, out, resume, device, tracker, say)


def _race(
    dataset: KGDataset,
    names: list[str],
    dim: int | None,
    settings: dict[str, Any],
    out: Path,
    resume: bool,
    device: torch.device | str,
    tracker: Tracker | None,
    say: Callable[[str], None],
) -> RaceResult:
    configs = {name: TrainingConfig.from_defaults(name, **settings) for name in names}
    for config in configs.values():
        config.validate()
    horizon = race_epochs(configs[names[0]])
    record = out / "race.json"
    final = out / "checkpoint.pt"
    if resume and final.is_file() and not record.is_file():
        raise GraphDataError(
            f"resume: {str(final)!r} is a run of one model, not a race (no race.json beside "
            "it); resume it with that model (--model NAME --resume)"
        )
    if resume and record.is_file():
        winner, info, horizon = _read_record(record, names)
        say(f"race: resuming {winner}, chosen in the race over {horizon} epochs")
    else:
        started = _started_horizon(out, names) if resume else None
        if started is not None and started != horizon:
            say(
                f"race: resuming the race over {started} epochs of the killed run (the settings "
                f"given now make {horizon}: they change the winner's run, not the race)"
            )
            horizon = started
        info = {}
        for name in names:
            say(f"race: training {name} for {horizon} epochs")
            info[name] = _run_candidate(
                dataset, name, dim, configs[name], horizon, out, resume, device
            )
        alive = [name for name in names if info[name]["diverged"] is None]
        if not alive:
            raise TrainingDivergedError(
                "every candidate of the race diverged: "
                + "; ".join(f"{name}: {info[name]['diverged']}" for name in names)
            )
        winner = max(alive, key=lambda name: (info[name]["best_valid_mrr"], -names.index(name)))
        write_text_atomic(
            record,
            json.dumps(
                {"race_epochs": horizon, "winner": winner, "candidates": info},
                indent=2,
                allow_nan=False,  # MRRs are finite or None (a diverged candidate)
            )
            + "\n",
        )
    raced = out / f"race_{winner}.pt"
    if raced.is_file():  # the winner's race checkpoint becomes its run's (atomic, through links)
        write_bytes_atomic(final, raced.read_bytes(), what="the winner's checkpoint")
    # Remove the race checkpoints the race wrote, through links: a race_<name>.pt link keeps
    # pointing where the user put it, and the checkpoint at its target (written through it)
    # goes; unlinking the link alone would orphan that checkpoint (as --overwrite does).
    written = [out / f"race_{name}.pt" for name in names]
    remove_run_files([path for path in written if path.exists()], argument="race")
    config = dataclasses.replace(
        configs[winner], checkpoint_path=str(final), log_path=str(out / "metrics.jsonl")
    )
    model = build_model(winner, dataset, config, dim=dim).to(device)
    trainer = Trainer(model, config).fit(dataset, resume=True, tracker=tracker)
    result = RaceResult(winner=winner, trainer=trainer, race_epochs=horizon, candidates=info)
    say(result.summary())
    return result


def _read_record(record: Path, names: list[str]) -> tuple[str, dict[str, Any], int]:
    """The winner, candidates and horizon of a decided race's ``race.json``, checked."""
    fix = "pass --overwrite to run the race again (or restore the race.json this race wrote)"
    try:
        decided = json.loads(record.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise GraphDataError(
            f"resume: {str(record)!r} is not the JSON a race writes ({err}); {fix}"
        ) from err
    fields = decided if isinstance(decided, dict) else {}  # a list or a number holds none
    candidates, winner, horizon = (fields.get(k) for k in ("candidates", "winner", "race_epochs"))
    if isinstance(candidates, dict) and candidates.keys() != set(names):
        raise GraphDataError(
            f"resume: {str(record)!r} records a race of {sorted(candidates)}, not of "
            f"{sorted(names)}; pass the same candidates or start over"
        )
    entry = ("best_valid_mrr", "best_epoch", "epochs", "valid_mrr", "diverged")
    if (
        not isinstance(candidates, dict)
        or not all(_is_entry(value, entry) for value in candidates.values())
        or winner not in names
        or candidates[winner]["diverged"] is not None
        or isinstance(horizon, bool)
        or not isinstance(horizon, int)
        or horizon < 1
    ):
        raise GraphDataError(
            f"resume: expected {str(record)!r} to hold race_epochs (an integer >= 1), winner "
            f"(one of {names} that did not diverge) and candidates (per candidate: "
            f"{', '.join(entry)}), got {_excerpt(decided)}; {fix}"
        )
    return winner, candidates, horizon


def _is_entry(entry: Any, fields: tuple[str, ...]) -> bool:
    """A candidate of ``race.json``: its fields, and a message if it diverged, else its MRR."""
    if not isinstance(entry, dict) or not set(fields) <= entry.keys():
        return False
    mrr = entry["best_valid_mrr"]
    if entry["diverged"] is not None:
        return isinstance(entry["diverged"], str)
    return isinstance(mrr, (int, float)) and not isinstance(mrr, bool)


def _excerpt(value: Any, limit: int = 200) -> str:
    text = json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _started_horizon(out: Path, names: list[str]) -> int | None:
    """The horizon a killed race started with: the epoch cap of a race checkpoint it wrote."""
    for name in names:
        path = out / f"race_{name}.pt"
        if path.is_file():
            return int(load_checkpoint(path)["training"]["config"]["epochs"])
    return None


def _run_candidate(
    dataset: KGDataset,
    name: str,
    dim: int | None,
    config: TrainingConfig,
    horizon: int,
    out: Path,
    resume: bool,
    device: torch.device | str,
) -> dict[str, Any]:
    """Train one candidate for the race's ``horizon`` epochs; its validation curve and best."""
    raced = dataclasses.replace(
        config,
        epochs=horizon,
        checkpoint_path=str(out / f"race_{name}.pt"),
        log_path=str(out / f"race_{name}.jsonl"),
    )
    model = build_model(name, dataset, raced, dim=dim).to(device)
    trainer = Trainer(model, raced)
    try:
        trainer.fit(dataset, resume=resume)
    except TrainingDivergedError as err:
        return {
            "best_valid_mrr": None,
            "best_epoch": None,
            "epochs": None,
            "valid_mrr": [],
            "diverged": str(err),
        }
    mrr = trainer.best_valid_mrr_
    if mrr is None:  # validation is on (race_epochs checked it); a guard
        raise GraphDataError(f"race: {name} has no validation MRR after {horizon} epochs")
    return {
        "best_valid_mrr": mrr,
        "best_epoch": trainer.best_epoch_,
        "epochs": trainer.epochs_trained_,
        "valid_mrr": [[h["epoch"], h["valid_mrr"]] for h in trainer.history_ if "valid_mrr" in h],
        "diverged": None,
    }
