r"""Train a knowledge-graph embedding model: sLCWA, KvsAll or 1vsAll (papers in :mod:`kg.losses`).

:class:`Trainer` follows scikit-learn: ``__init__`` stores the model and one
:class:`TrainingConfig`, :meth:`Trainer.fit` trains and returns ``self``, and what it learns ends
in ``_``. Per epoch it shuffles the training triples with its own seeded generator, minimises

.. math::
    L = L_{\text{regime}} + \lambda\,\Omega, \qquad \Omega \in \{\Omega_{N3}, \Omega_{L2}\}

(the regime's loss from :mod:`kg.losses`; one regulariser, ``TrainingConfig.regularizer``, from
:meth:`kg.base.KGEModel.regularization` over the batch's training triples, weighted by
:math:`\lambda` = ``regularizer_weight``, none when it is ``None`` or 0), calls the model's
``post_step()`` after every optimiser step, evaluates the filtered validation MRR every
``eval_every`` epochs for early stopping, appends one JSON line of metrics per epoch, and writes
an atomic checkpoint from which ``fit(..., resume=True)`` continues a killed run bit-identically
on CPU.

Divergence is checked after every epoch on the loss, on every parameter and buffer (TuckER's
batch-norm ``running_var`` overflows to inf at a huge learning rate while the loss stays finite)
and on the scores of a few training queries; a validation with non-finite scores
(:class:`kg.evaluation.NonFiniteScoreError`) or a NaN MRR is divergence too, never an
improvement. A state that fails these checks is never written to the checkpoint nor kept as the
best one; :class:`TrainingDivergedError` is raised instead, with the model reset to the last
good state.

Regimes, for a batch of training triples (or, for KvsAll, of training queries):

* ``"slcwa"``: ``num_negatives`` corrupted copies per positive (:mod:`kg.sampling`), one of the
  pairwise/pointwise losses ``margin``, ``softplus``, ``bce``, ``nssa``. With
  ``batched_negatives=C`` every chunk of ``C`` positives shares ``num_negatives`` entities
  (PyTorch-BigGraph's batched negatives, :func:`kg.sampling.chunk_negatives`), and the
  optimisers ``"rowwise_adagrad"`` / ``"sparse_adam"`` update only the embedding rows a batch
  touches (:mod:`kg._sparse_optim`), which large tables need.
* ``"kvsall"``: every distinct query :math:`(h, r, ?)` (and :math:`(?, r, t)` without reciprocal
  relations) against its multi-hot answers, :func:`kg.losses.kvsall_bce_loss`.
* ``"1vsall"``: every triple as a softmax over all tails (and heads without reciprocal
  relations), :func:`kg.losses.one_vs_all_loss`.

With ``reciprocal=True`` the model is trained on the dataset with inverse relations
(``KGDataset.with_inverse_relations``: the inverse of ``r`` is ``r + R``) and only tails are
predicted; the model must then have ``2 R`` relations.

Under a :mod:`torch.distributed` process group (started by the caller, e.g. ``torchrun`` and
``graphlib kg train``; never by the trainer) each rank trains on its slice of every global batch
and the gradients are all-reduced (:mod:`kg.distributed`), so ``W`` ranks take one process's
steps; validation is sharded with exact metrics, rank 0 alone writes the checkpoint and the log
(each record then holds ``world_size``), and every rank can resume it, on any world size.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any, NoReturn

import torch
from tqdm import tqdm

from graphdata.atomic import write_text_atomic
from graphdata.errors import GraphDataError, NotFittedError
from graphdata.tracking import Tracker
from graphdata.triples import KGDataset
from kg import _epochs
from kg._sparse_optim import SPARSE_OPTIMIZERS, check_sparse_fit
from kg.base import KGEModel, eval_mode
from kg.checkpoint import (
    capture_rng_state,
    check_compatible,
    dataset_fingerprint,
    load_checkpoint,
    restore_rng_state,
    save_checkpoint,
)
from kg.config import (
    LOSSES,
    OPTIMIZERS,
    REGIMES,
    REGULARIZERS,
    SAMPLERS,
    TrainingConfig,
    _choice,
)
from kg.distributed import evaluate_sharded
from kg.evaluation import NonFiniteScoreError, RankMetrics
from kg.models import DEFAULTS, MODELS

__all__ = [
    "OPTIMIZERS",
    "REGIMES",
    "LOSSES",
    "SAMPLERS",
    "REGULARIZERS",
    "TrainingConfig",
    "TrainingDivergedError",
    "Trainer",
    "build_model",
    "train",
]


class TrainingDivergedError(FloatingPointError):
    """Training diverged: a NaN or infinite loss, parameter, buffer or score; names the fix."""


#: Training queries whose scores are checked for NaN/inf after each epoch (a cheap probe of
#: overflow that finite parameters can still produce).
_PROBE_QUERIES = 64


class Trainer:
    """Fit a :class:`~kg.base.KGEModel` to a :class:`~graphdata.triples.KGDataset`.

    ``fit`` re-initialises the model's parameters from ``config.seed`` (scikit-learn semantics:
    every fit starts from scratch) unless it resumes a checkpoint. All randomness (initialisation,
    shuffling, negatives, dropout) comes from ``config.seed``; torch's global random state is
    forked for the run, so the caller's is left untouched.

    Args:
        model: The model to train, on the device to train on. With ``config.reciprocal`` it
            must have twice the dataset's relations.
        config: The hyperparameters. Default ``TrainingConfig()``.

    Attributes:
        model_: The trained model (the same object as ``model``).
        history_: One dict per epoch: ``epoch``, ``loss``, ``seconds`` and, on validation
            epochs, ``valid_mrr``, ``valid_hits_at_10``.
        best_epoch_: The epoch of the best validation MRR (the last epoch without validation).
        best_valid_mrr_: That MRR; undefined (None) without validation (``eval_every=0``).
        epochs_trained_: Epochs run in total, resumed ones included.
        stopped_early_: Whether early stopping ended the run (patience ran out).
        still_improving_: Whether the run ended at the epoch cap (``config.epochs``, not
            stopped early) while validation MRR was still improving, by one rule: the best
            validation MRR is that of the last validated epoch (the last validation improved
            on every earlier one; with a single validation, that one). More epochs would
            likely help: raise ``epochs``. False without validation.

    Examples:
        >>> from graphdata.triples import KGDataset
        >>> from kg.distmult import DistMult
        >>> rows = [("a", "r", "b"), ("b", "r", "c"), ("c", "r", "a")]
        >>> ds = KGDataset.from_labeled(rows, rows[:1], rows[1:2])
        >>> cfg = TrainingConfig(epochs=2, batch_size=2, num_negatives=2, progress=False)
        >>> trainer = Trainer(DistMult(3, 1, dim=4), cfg).fit(ds)
        >>> [h["epoch"] for h in trainer.history_]
        [1, 2]
    """

    def __init__(self, model: KGEModel, config: TrainingConfig | None = None) -> None:
        self.model = model
        self.config = config if config is not None else TrainingConfig()

    def fit(
        self, dataset: KGDataset, *, resume: bool = False, tracker: Tracker | None = None
    ) -> Trainer:
        """Train on ``dataset.train``, validating on ``dataset.valid``.

        Args:
            dataset: The dataset (valid is used for early stopping; test is never read).
            resume: Continue from ``config.checkpoint_path`` when that file exists (checked to
                belong to the same model, vocabulary and triples); otherwise start afresh.
                Default False.
            tracker: Also log to this :class:`graphdata.tracking.Tracker` (TensorBoard,
                MLflow, another JSON-lines file): the model name, its config (``model.<key>``)
                and the training config once, then each epoch's record without ``epoch``
                (``loss``, ``seconds``, and ``valid_mrr``, ``valid_hits_at_10`` on validation
                epochs) at ``step=epoch``, after the ``log_path`` line and before the checkpoint
                of that epoch (a run killed between them resumes from the previous checkpoint
                and logs the epoch again, which the tracker's purge replaces); a resumed run
                logs the epochs it trains. The caller closes it. An exception the tracker
                raises ends the fit before that epoch's checkpoint (``kg.tune`` prunes trials
                so).
                Default None.

        Returns:
            ``self``.

        Raises:
            GraphDataError: On an invalid config, a model whose sizes do not fit the dataset,
                validation (``eval_every``) with an empty valid split, or an incompatible
                checkpoint.
            TrainingDivergedError: When the loss, a parameter or buffer, the probe scores or
                the validation scores become NaN or infinite (or a resumed checkpoint holds such
                a state); the model is reset to the last good state: this run's last
                checkpoint, else the best validated state, when there is one.
        """
        cfg, model = self.config, self.model
        cfg.validate()
        if not isinstance(dataset, KGDataset):
            raise GraphDataError(f"dataset: expected a KGDataset, got {type(dataset).__name__}")
        if resume and cfg.checkpoint_path is None:
            raise GraphDataError(
                "resume: True needs config.checkpoint_path (the checkpoint to continue)"
            )
        path = cfg.checkpoint_path
        real = None if path is None else os.path.realpath(path)  # the file a link names
        if real is not None and os.path.lexists(real) and not Path(real).is_file():
            # A folder (or FIFO, ...) there would be silently skipped by resume and then fail
            # only when the first checkpoint is saved, after an epoch of work.
            raise GraphDataError(
                f"checkpoint_path: expected a checkpoint file (or no file yet), got the "
                f"non-file entry {str(path)!r}; remove it or pass another checkpoint_path"
            )
        if cfg.eval_every and not len(dataset.valid):
            # validation would fail only after eval_every epochs of work, on an MRR of nothing
            raise GraphDataError(
                f"eval_every: validation every {cfg.eval_every} epochs needs valid triples, got "
                f"an empty valid split ({dataset.name!r}); add valid triples, or pass "
                "eval_every=0 (--eval-every 0) to train without validation and early stopping"
            )
        _check_sizes(model, dataset, cfg.reciprocal)
        if cfg.optimizer in SPARSE_OPTIMIZERS:
            check_sparse_fit(model, cfg.optimizer)
        device = next(model.parameters()).device
        optimizer = _make_optimizer(cfg.optimizer, list(model.parameters()), cfg.lr)
        run = _epochs.Run.build(model, dataset, cfg, device, optimizer)
        devices = [device.index or 0] if device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(cfg.seed)  # dropout and initialisation draw from the global state
            state = self._start(run, dataset, resume)
            if tracker is not None:
                model_config = {f"model.{k}": v for k, v in model.config.items()}
                tracker.log_params({"model": model.name, **model_config, **dataclasses.asdict(cfg)})
            self._loop(run, dataset, state, tracker)
        return self

    def _start(self, run: _epochs.Run, dataset: KGDataset, resume: bool) -> dict[str, Any]:
        """Fresh state, or the state of the checkpoint being resumed."""
        cfg, model = self.config, self.model
        fingerprint = _fingerprint(dataset)
        path = cfg.checkpoint_path
        if resume and path is not None and Path(path).is_file():
            ckpt = load_checkpoint(path, map_location=run.device)
            if ckpt["training"].get("sharded"):
                raise GraphDataError(
                    f"checkpoint: {path!r} was written by a sharded-table run "
                    f"(kg.sharded, world size {ckpt['training']['sharded'].get('world_size')}), "
                    "which keeps no optimiser state; it can be evaluated and used for "
                    "predictions, not resumed: train afresh without resume"
                )
            check_compatible(
                ckpt,
                model_name=model.name,
                entity_labels=dataset.entities.labels,
                relation_labels=dataset.relations.labels,
                fingerprint=fingerprint,
            )
            if ckpt["model"]["config"] != model.config:
                saved = ckpt["model"]["config"]
                keys = sorted(set(saved) | set(model.config))
                differ = [k for k in keys if saved.get(k) != model.config.get(k)]
                flags = [f"--{k} {saved[k]}" for k in differ if k in ("dim", "margin")]
                if "num_relations" in differ:  # the inverse relations double the count
                    twice = saved.get("num_relations") == 2 * dataset.num_relations
                    flags.append("--reciprocal" if twice else "--no-reciprocal")
                hint = f"; `graphlib kg train --resume`: pass {' '.join(flags)}" if flags else ""
                raise GraphDataError(
                    f"checkpoint: its model config {saved} differs from the model's "
                    f"{model.config} in {', '.join(differ)}; build the model with the checkpoint's "
                    f"config{hint}, or train afresh without resume"
                )
            problem = _nonfinite_entries(ckpt["model"]["state"])
            if problem is not None:
                raise TrainingDivergedError(
                    f"checkpoint: {path!r} holds a non-finite model state ({problem}), written by "
                    "a diverged run; it cannot be resumed: retrain without resume (a lower "
                    "learning rate or grad_clip)"
                )
            model.load_state_dict(ckpt["model"]["state"])
            run.optimizer.load_state_dict(ckpt["optimizer"])
            for group in run.optimizer.param_groups:
                group["lr"] = cfg.lr  # the state dict restores the old rate; the config rules
            restore_rng_state(ckpt["rng"], run.generator)
            state = dict(ckpt["training"])
            _warn_changed(state.pop("config"), dataclasses.asdict(cfg))
            state["resumed_from"] = int(state["epoch"])
            self._saved_epoch = int(state["epoch"])
            if run.rank == 0:
                _rewrite_log(cfg.log_path, state["history"])
        else:
            model.reset_parameters()
            self._saved_epoch = 0  # no checkpoint of this run yet (a file there is another's)
            state = {
                "epoch": 0,
                "history": [],
                "best_mrr": -math.inf,
                "best_epoch": 0,
                "bad_evals": 0,
                "best_state": None,
                "stopped_early": False,
            }
            if run.rank == 0:
                _rewrite_log(cfg.log_path, [])
        state["fingerprint"] = fingerprint
        return state

    def _loop(
        self,
        run: _epochs.Run,
        dataset: KGDataset,
        state: dict[str, Any],
        tracker: Tracker | None = None,
    ) -> None:
        cfg, model = self.config, self.model
        if run.rank != 0:
            tracker = None  # rank 0 logs for the group
        todo = 0 if state["stopped_early"] else max(cfg.epochs - state["epoch"], 0)
        bar = tqdm(
            total=todo * run.batches_per_epoch,
            disable=not cfg.progress or run.rank != 0,
            file=sys.stderr,
            desc=f"{model.name} {cfg.regime}",
            dynamic_ncols=True,
        )
        # Filter with every split, as for test (LibKGE's choice), so that validation and test
        # MRR are comparable; only candidates are removed, no test label is scored.
        # Built only when validating: at 10M triples the index is hundreds of megabytes.
        valid_index = dataset.filter_index().to(run.device) if cfg.eval_every else None
        try:
            for epoch in range(state["epoch"] + 1, state["epoch"] + todo + 1):
                started = time.perf_counter()
                model.train()
                loss = run.epoch(bar, epoch)
                if not math.isfinite(loss):
                    self._diverged(state, epoch, f"loss became {loss}")
                problem = _nonfinite_entries(model.state_dict())
                if problem is not None:
                    self._diverged(state, epoch, f"the model state became non-finite ({problem})")
                if not _probe_finite(model, run.train[:_PROBE_QUERIES]):
                    self._diverged(
                        state, epoch, "the scores of training queries overflowed to NaN/inf"
                    )
                record: dict[str, Any] = {
                    "epoch": epoch,
                    "loss": loss,
                    "seconds": time.perf_counter() - started,
                }
                if run.world_size > 1:
                    record["world_size"] = run.world_size
                stop = False
                # Validate every eval_every epochs and after the last one, so that restoring
                # the best epoch never discards a final stretch that was never validated.
                if cfg.eval_every and (epoch % cfg.eval_every == 0 or epoch == cfg.epochs):
                    try:
                        metrics = evaluate_sharded(
                            model,
                            dataset.valid.mapped_triples,
                            valid_index,
                            reciprocal=cfg.reciprocal,
                            relation_labels=dataset.relations.labels,
                        )
                    except NonFiniteScoreError as err:
                        self._diverged(state, epoch, f"validation failed: {err}")
                    if not math.isfinite(metrics.mrr):
                        self._diverged(state, epoch, f"the validation MRR became {metrics.mrr}")
                    record["valid_mrr"] = metrics.mrr
                    record["valid_hits_at_10"] = metrics.hits_at(10)
                    bar.set_postfix(loss=f"{loss:.4f}", valid_mrr=f"{metrics.mrr:.4f}")
                    stop = self._early_stopping(state, epoch, metrics.mrr)
                state["epoch"] = epoch
                state["history"].append(record)
                state["stopped_early"] = stop
                last = stop or epoch == cfg.epochs
                # Log before the checkpoint: a run killed between the two then resumes from
                # the previous checkpoint and logs this epoch again (the logs purge it), where
                # the other order lost the epoch from the tracker.
                if run.rank == 0:
                    _append_log(cfg.log_path, record)
                if tracker is not None:
                    tracker.log_metrics(
                        {k: v for k, v in record.items() if k not in ("epoch", "world_size")},
                        step=epoch,
                    )
                if cfg.checkpoint_path and (last or epoch % cfg.checkpoint_every == 0):
                    self._save(cfg.checkpoint_path, run, state)
                if stop:
                    break
        finally:
            bar.close()
        if cfg.restore_best and state["best_state"] is not None:
            model.load_state_dict(state["best_state"])
        model.eval()
        self.model_ = model
        self.history_ = state["history"]
        self.epochs_trained_ = state["epoch"]
        self.stopped_early_ = bool(state["stopped_early"])
        validated = state["best_mrr"] > -math.inf
        self.still_improving_ = _still_improving(state, cfg.epochs) if validated else False
        self.best_epoch_ = state["best_epoch"] if validated else state["epoch"]
        self.best_valid_mrr_: float | None = state["best_mrr"] if validated else None

    def _early_stopping(self, state: dict[str, Any], epoch: int, mrr: float) -> bool:
        """Record a validation MRR; return whether patience has run out."""
        if mrr > state["best_mrr"]:
            state["best_mrr"], state["best_epoch"], state["bad_evals"] = mrr, epoch, 0
            if self.config.restore_best:
                state["best_state"] = {
                    k: v.detach().clone() for k, v in self.model.state_dict().items()
                }
            return False
        state["bad_evals"] += 1
        return self.config.patience is not None and state["bad_evals"] >= self.config.patience

    def _save(self, path: str, run: _epochs.Run, state: dict[str, Any]) -> None:
        model = self.model
        training = {k: v for k, v in state.items() if k not in ("fingerprint", "resumed_from")}
        training["config"] = dataclasses.asdict(self.config)
        # Never write a non-finite state over a good checkpoint (the epoch loop checked the
        # model; this guards every other path to the file).
        problem = _nonfinite_entries(model.state_dict())
        if problem is not None:
            raise TrainingDivergedError(
                f"checkpoint: refusing to save a non-finite model state ({problem}) over "
                f"{path!r}; lower the learning rate or set grad_clip"
            )
        if run.rank != 0:  # rank 0 writes for the group (ranks hold equal states)
            self._saved_epoch = int(state["epoch"])
            return
        save_checkpoint(
            path,
            {
                "model": {"name": model.name, "config": model.config, "state": model.state_dict()},
                "training": training,
                "optimizer": run.optimizer.state_dict(),
                "rng": capture_rng_state(run.generator),
                "vocabulary": {
                    "entities": list(run.entity_labels),
                    "relations": list(run.relation_labels),
                },
                "dataset_fingerprint": state["fingerprint"],
                "dataset_name": run.dataset_name,
            },
        )
        self._saved_epoch = int(state["epoch"])

    def _diverged(self, state: dict[str, Any], epoch: int, what: str) -> NoReturn:
        """Reset the model to the last good state, then raise :class:`TrainingDivergedError`.

        The last good state is this run's last checkpoint (re-checked to be finite), else the
        best validated state held in memory; a state that is not finite is never restored.
        """
        cfg = self.config
        good = state["epoch"]
        path = cfg.checkpoint_path
        kept = ""
        saved = getattr(self, "_saved_epoch", 0)
        restored = False
        if path is not None and saved > 0 and Path(path).is_file():
            ckpt = load_checkpoint(path, map_location=next(self.model.parameters()).device)
            if _nonfinite_entries(ckpt["model"]["state"]) is None:
                self.model.load_state_dict(ckpt["model"]["state"])
                restored = True
                kept = (
                    f"; the model holds the last good checkpoint {path!r} "
                    f"(epoch {ckpt['training']['epoch']})"
                )
        best = state.get("best_state")
        if not restored and best is not None and _nonfinite_entries(best) is None:
            self.model.load_state_dict(best)
            kept = f"; the model holds the best validated state (epoch {state['best_epoch']})"
        raise TrainingDivergedError(
            f"{what} in epoch {epoch} with learning rate lr={cfg.lr:g}; the last good "
            f"epoch is {good}{kept}. Lower the learning rate (e.g. lr={cfg.lr / 10:g}) or set "
            "grad_clip, then retrain"
        )

    def evaluate(self, dataset: KGDataset, *, split: str = "test", **kwargs: Any) -> RankMetrics:
        """Filtered both-sides evaluation of the trained model on one split of ``dataset``.

        Filters with train, valid and test (PyKEEN's default) and passes ``reciprocal`` on.
        Under a :mod:`torch.distributed` process group the triples are sharded across ranks
        and the ranks gathered (:func:`kg.distributed.evaluate_sharded`): every rank returns
        the same, exact metrics.

        Args:
            dataset: The dataset the model was trained on.
            split: ``"test"`` (default), ``"valid"`` or ``"train"``.
            **kwargs: Passed to :func:`kg.evaluation.evaluate` (``rank_type``, ``ks``, ...).

        Returns:
            The ranks and metrics.

        Raises:
            NotFittedError: Before :meth:`fit`.
        """
        if not hasattr(self, "model_"):
            raise NotFittedError("Trainer: not fitted, call fit(dataset) first")
        _choice("split", split, ("train", "valid", "test"))
        triples = dataset.splits[split].mapped_triples
        index = dataset.filter_index()
        return evaluate_sharded(
            self.model_, triples, index, reciprocal=self.config.reciprocal, **kwargs
        )


def build_model(
    name: str, dataset: KGDataset, config: TrainingConfig, *, dim: int | None = None
) -> KGEModel:
    """Build model ``name`` for ``dataset`` with its tuned constructor defaults.

    ``MODELS[name](num_entities, num_relations, dim, **DEFAULTS[name].model_kwargs)``, with
    twice the relations when ``config.reciprocal``. Initialisation draws from a forked global
    generator seeded with ``config.seed``, so the caller's random state is left untouched (and
    :meth:`Trainer.fit` re-initialises from the same seed anyway).

    Args:
        name: A key of :data:`kg.models.MODELS`.
        dataset: The dataset (for the entity and relation counts).
        config: The training config (for ``reciprocal`` and ``seed``).
        dim: Embedding size; ``None`` (default) takes ``DEFAULTS[name].dim``.

    Returns:
        The model, on the CPU.

    Examples:
        >>> from graphdata.triples import KGDataset
        >>> rows = [("a", "r", "b"), ("b", "r", "c")]
        >>> ds = KGDataset.from_labeled(rows, rows, rows)
        >>> build_model("distmult", ds, TrainingConfig(reciprocal=True), dim=8)
        DistMult(3, num_relations=2, dim=8)
    """
    _choice("name", name, tuple(MODELS))
    defaults = DEFAULTS[name]
    relations = dataset.num_relations * (2 if config.reciprocal else 1)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        return MODELS[name](
            dataset.num_entities,
            relations,
            defaults.dim if dim is None else dim,
            **defaults.model_kwargs,
        )


def train(
    model: KGEModel,
    dataset: KGDataset,
    config: TrainingConfig | None = None,
    *,
    resume: bool = False,
    tracker: Tracker | None = None,
) -> Trainer:
    """Train ``model`` on ``dataset``: ``Trainer(model, config).fit(dataset, ...)``.

    Args:
        model: The model, on the device to train on.
        dataset: The dataset.
        config: The hyperparameters. Default ``TrainingConfig()``.
        resume: Continue from ``config.checkpoint_path`` if it exists. Default False.
        tracker: Also log parameters and per-epoch metrics here (see :meth:`Trainer.fit`).

    Returns:
        The fitted :class:`Trainer` (``trainer.model_``, ``trainer.history_``, ...).
    """
    return Trainer(model, config).fit(dataset, resume=resume, tracker=tracker)


def _still_improving(state: dict[str, Any], epochs: int) -> bool:
    """Whether the run ended at the epoch cap with its best validation at the last validation.

    The best epoch is the last validated epoch of the history (resumed epochs included), the run
    was not stopped early, and it reached ``epochs``.
    """
    validated = [record["epoch"] for record in state["history"] if "valid_mrr" in record]
    return (
        not state["stopped_early"]
        and state["epoch"] >= epochs
        and bool(validated)
        and state["best_epoch"] == validated[-1]
    )


def _nonfinite_entries(state: dict[str, torch.Tensor]) -> str | None:
    """Name the floating-point entries of a state dict holding NaN or inf; ``None`` if none.

    One finiteness flag per tensor (:func:`_all_finite`, a reduction without temporaries the
    size of the table), read back together (a single device synchronisation).
    """
    items = [(k, v) for k, v in state.items() if v.is_floating_point() or v.is_complex()]
    if not items:
        return None
    flags = torch.stack([_all_finite(v).to(items[0][1].device) for _, v in items])
    if bool(flags.all()):
        return None
    bad = [(k, v) for (k, v), ok in zip(items, flags.tolist()) if not ok]
    names = [f"{k!r} holds {'nan' if bool(torch.isnan(v).any()) else 'inf'}" for k, v in bad[:3]]
    more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
    return ", ".join(names) + more


def _all_finite(values: torch.Tensor) -> torch.Tensor:
    """``torch.isfinite(values).all()`` as a ``[]`` bool, from ``torch.aminmax`` (no [N] temporary).

    ``aminmax`` propagates NaN, and an infinity is the minimum or maximum, so both extremes are
    finite exactly when every entry is. ``isfinite`` of a million-row table allocates a bool
    table and, through the allocator, kept 110 MB more at the end of a 1M-entity epoch; the
    reduction allocates nothing and is about 14x faster. Complex tensors are read as real pairs.
    """
    if not values.numel():
        return torch.ones((), dtype=torch.bool, device=values.device)
    flat = torch.view_as_real(values) if values.is_complex() else values
    low, high = torch.aminmax(flat.reshape(-1))
    return torch.isfinite(low) & torch.isfinite(high)


def _probe_finite(model: KGEModel, triples: torch.Tensor) -> bool:
    """Whether the model scores the tails of a few training queries finitely (eval mode)."""
    if not triples.numel():
        return True
    # Candidates in slices of at most 2^20 scores: a [64, E] matrix is 256 MB at a million
    # entities, more than a training step needs.
    step = max(1, 2**20 // triples.size(0))
    with torch.no_grad(), eval_mode(model):
        for lo in range(0, model.num_entities, step):
            piece = slice(lo, min(lo + step, model.num_entities))
            scores = model.score_tails(triples[:, 0], triples[:, 1], piece)  # [B, C]
            if not bool(torch.isfinite(scores).all()):
                return False
    return True


def _check_sizes(model: KGEModel, dataset: KGDataset, reciprocal: bool) -> None:
    if not isinstance(model, KGEModel):
        raise GraphDataError(f"model: expected a KGEModel, got {type(model).__name__}")
    relations = dataset.num_relations * (2 if reciprocal else 1)
    if model.num_entities != dataset.num_entities or model.num_relations != relations:
        why = " (reciprocal: twice the dataset's relations)" if reciprocal else ""
        raise GraphDataError(
            f"model: expected {dataset.num_entities} entities and {relations} relations{why} for "
            f"dataset {dataset.name!r}, got {model.num_entities} and {model.num_relations}; "
            f"build it as {type(model).__name__}({dataset.num_entities}, {relations}, ...)"
        )


def _make_optimizer(
    name: str, params: list[torch.nn.Parameter], lr: float
) -> torch.optim.Optimizer:
    """``OPTIMIZERS[name](params, lr=lr)``, Adam and Adagrad with their fused kernels.

    A fused step runs one kernel per parameter instead of about ten, with no temporaries: Adam 2x
    faster on the small KGE tables, Adagrad 4x on ComplEx's ``[14,505, 512]`` FB15k-237 table
    (18.5 -> 4.5 ms on one core, where the unfused step page-faults in a fresh ``sqrt`` of the
    sums). Each computes the same update up to float rounding (about 1e-7 relative).
    """
    cls = OPTIMIZERS[name]
    fusable = all(p.device.type in ("cpu", "cuda") and p.is_floating_point() for p in params)
    if cls in (torch.optim.Adam, torch.optim.Adagrad) and fusable:
        return cls(params, lr=lr, fused=True)
    return cls(params, lr=lr)


#: Config fields that may change on resume without affecting the optimisation itself.
_RESUMABLE = ("epochs", "progress", "log_path", "checkpoint_path", "checkpoint_every")


def _warn_changed(saved: dict[str, Any], current: dict[str, Any]) -> None:
    """Warn when a resumed run's config differs from the checkpoint's beyond ``_RESUMABLE``."""
    changed = [
        f"{k} ({saved.get(k)!r} -> {v!r})"
        for k, v in current.items()
        if k not in _RESUMABLE and saved.get(k) != v
    ]
    if changed:
        warnings.warn(
            "resuming with a config that differs from the checkpoint's in "
            + ", ".join(changed)
            + "; the run will not match an uninterrupted one",
            stacklevel=4,
        )


def _fingerprint(dataset: KGDataset) -> str:
    return dataset_fingerprint(
        dataset.entities.labels,
        dataset.relations.labels,
        [ts.mapped_triples for ts in dataset.splits.values()],
    )


def _rewrite_log(path: str | None, history: list[dict[str, Any]]) -> None:
    """Make the JSON-lines log hold exactly ``history`` (atomic); a resumed run then appends."""
    if path is None:
        return
    # allow_nan=False: the epoch loop refuses a non-finite loss or MRR before it logs one
    write_text_atomic(
        path, "".join(json.dumps(record, allow_nan=False) + "\n" for record in history)
    )


def _append_log(path: str | None, record: dict[str, Any]) -> None:
    if path is not None:
        with open(path, "a") as handle:
            handle.write(json.dumps(record, allow_nan=False) + "\n")
