"""KGE at benchmark scale (issue 17): FB15k-237 or any folder, ours vs PyKEEN 1.11 in one run.

``.venv/bin/python -m benchmarks.bench_kg_scale [--data FOLDER] [--pykeen-python PATH]
[--parts epoch,flops,quality,memory] [--models transe,...] [--threads 1] [--max-batches N]
[--budget-min 60] [--out FILE.json]``. ``--data`` defaults to the shared FB15k-237
(``../shared/datasets/kg/fb15k237``); any folder with labelled ``train/valid/test.txt`` works.
Valid/test triples with labels unseen in train are dropped on both sides (ours
``on_unknown="drop"``, PyKEEN's ``TriplesFactory.from_path`` with the training vocabulary:
FB15k-237 loses 9 valid and 28 test triples). PyKEEN runs in subprocesses of its own
environment (``benchmarks/_kg_pykeen.py``); without it only our side runs. Every number goes to
``--out`` (atomic JSON) with the machine, threads, torch version and git commit.

Parts:

* ``epoch``: training seconds per epoch at equal configuration
  (:func:`benchmarks.bench_kg_train.equal_config`: sLCWA models keep their tuned sLCWA config,
  1-N models train KvsAll + BCE with reciprocal relations, PyKEEN's LCWA), every model, both
  libraries interleaved (ours, PyKEEN, ours, PyKEEN; PyKEEN in one ``--serve`` worker), best
  run per side. Whole epochs by default (``--time-epochs``, default 2, per run: PyKEEN's first
  epoch interval holds its setup, LCWA instances included, so the best is a later one).
  ``--max-batches N`` instead times batches 2 .. N + 1 of epoch 1 (batch 1 is a warm-up;
  fewer once they took ``--max-batch-s``, default 60 s) and extrapolates: mean batch seconds x
  batches per epoch (:func:`extrapolate_epoch`, the same arithmetic for both sides). Ours
  stamps each batch in the progress-bar hook ``Run.epoch`` calls after every optimiser step
  (:class:`BatchClock`); PyKEEN in a ``pre_batch`` training callback, its batch count is the
  length of its data loader (``benchmarks/_kg_pykeen.py``, job ``time_batches``). Per-epoch
  work outside batches (the shuffle, PyKEEN's end-of-epoch ``gc.collect``) is left out on
  both sides.
* ``flops``: achieved GFLOP/s of the 1-N scorer ``model.score_tails(h, r) -> [B, E]``, forward
  (eval mode, no grad: the evaluation path) and forward + backward (train mode, upstream
  gradient of ones, the score product in a kept buffer lent as the trainer lends it,
  :mod:`kg._product`, and the embedding tables' gradients in their kept buffers, zeroed before
  and collected after each backward as the trainer's dense-optimiser step does, :mod:`kg._rows`:
  the training path), against a plain ``torch.matmul``
  ``[B, D] @ [D, E]`` (the ``[E, D]`` table transposed, as the models do; backward = two
  matmuls) in the same run, interleaved, best of
  ``--flops-repeats``. B is the equal-config batch size, E the dataset's entities, d from
  ``kg.models.DEFAULTS``. Counts (multiply-add = 2 FLOPs; :data:`FLOPS`): DistMult
  2BdE + Bd (D = d); ComplEx 2B(2d)E + 6Bd (D = 2d: the real and imaginary halves); RESCAL
  2BdE + 2Bd^2; TuckER 2BdE + 2B d_r d^2 + 2Bd^2 (relation x core, then the bmm); ConvE
  2BdE + BE + 2B F k^2 H'W' + 2B (F H'W') d (projection, bias, convolution, fully connected
  layer; H' = 2h - k + 1, W' = d/h - k + 1). Batch norm, dropout and ReLU are not counted;
  forward + backward counts 3x the forward (exact for the matmuls). Target: scorer / matmul
  >= 0.70. The plain matmul's fp32 and bf16 GFLOP/s at the same shapes and at 2048^3 give the
  machine context.
* ``quality``: time to quality. Both libraries train the same recipe (``--quality-model``,
  default the no-flag model of ``graphlib kg train``, its ``TrainingConfig.from_defaults``
  config; PyKEEN the mapping of :func:`benchmarks.bench_kg_train.pykeen_spec`) under the same
  wall budget ``--budget-min``: they validate (filtered MRR on the whole validation split, or
  on the same ``--valid-triples`` seeded ones, train/valid/test filtered; the validation time
  counts in the wall time) at the end of the
  first epoch at or past each multiple of ``--valid-every-min`` (default budget / 12) and after
  the last epoch, and stop at the first epoch end at or past the budget (or the config's epoch
  cap); the best-validation state is restored and its filtered both-sides test MRR and
  Hits@1/3/10 measured. The wall clock starts before the optimiser, data loader (PyKEEN's
  LCWA instances, our training index) and re-initialisation of each side, after data loading
  and model construction. PyKEEN's target is its best validation MRR within the budget (its
  final one unless it declined), the time is that of the first validation reaching it on each
  side (:func:`time_to_quality`). Target: ours / PyKEEN <= 1/3. ``--quality-set KEY=VALUE``
  (repeatable; TrainingConfig fields, :func:`parse_overrides`) and ``--quality-dim N`` change
  the recipe of both sides; the JSON records them (``overrides``, ``dim``). By default both
  sides run concurrently (one thread each, separate processes: ``--sequential`` to run one
  after the other); the output says which.
* ``memory``: peak resident memory of training (the tuned defaults, the first
  ``--memory-batches`` batches of epoch 1, or whole epochs with ``--memory-batches 0``) and of
  the filtered test evaluation, each in a fresh process (``benchmarks/_kg_memory.py`` and the
  ``memory`` job of ``_kg_pykeen.py``), as the rise of the peak over the resident size after
  imports, data and model construction; the evaluation's seconds too. Target: eval peak /
  train peak <= 2.

Measurements share a 2-core machine: run with one thread (``--threads 1``, the default) and
read ratios from one run, not across runs.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from benchmarks.bench_kg_train import (
    DEFAULT_DATA,
    PYKEEN_DRIVER,
    ROOT,
    _PyKEENWorker,
    _write_json,
    equal_config,
    pykeen_spec,
)
from graphdata.errors import GraphDataError
from graphdata.triples import KGDataset
from kg import _epochs
from kg._distance import Workspace
from kg._rows import grad_buffers
from kg.base import KGEModel
from kg.evaluation import evaluate
from kg.models import DEFAULTS, MODELS
from kg.training import Trainer, TrainingConfig, _make_optimizer, build_model

DEFAULT_FOLDER = DEFAULT_DATA / "fb15k237"
DEFAULT_PYKEEN = "/tmp/pykeen-venv/bin/python"
PARTS = ("epoch", "flops", "quality", "memory")
QUALITY_TARGET = 1 / 3  # ours' time to PyKEEN's validation MRR / PyKEEN's time
FLOPS_TARGET = 0.70  # scorer GFLOP/s / matmul GFLOP/s
MEMORY_TARGET = 2.0  # eval peak / train peak


# ---- data ------------------------------------------------------------------------------------


def load(folder: Path) -> tuple[KGDataset, list[str]]:
    """The dataset of ``folder`` with unseen valid/test labels dropped, and the warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dataset = KGDataset.from_folder(folder, on_unknown="drop")
    return dataset, [str(w.message) for w in caught]


# ---- partial epochs --------------------------------------------------------------------------


class _Enough(Exception):
    """Raised by :class:`BatchClock` to leave ``Run.epoch`` after the batches asked for."""


class BatchClock:
    """A progress-bar stand-in for ``kg._epochs.Run.epoch`` that stamps every batch.

    ``Run.epoch`` calls ``bar.update(1)`` after each optimiser step; the clock appends
    ``time.perf_counter()`` (after a CUDA synchronisation when ``device`` is a GPU) and, once
    ``stop_after`` batches have finished, raises ``_Enough`` (caught by the caller); ``None``
    never stops. With ``max_seconds`` it also stops once the batches after the first (the
    warm-up) have taken that long, after at least one of them. The interval between two stamps
    is one whole batch: indexing, forward, backward, optimiser step.
    """

    def __init__(
        self,
        stop_after: int | None = None,
        device: torch.device | None = None,
        max_seconds: float | None = None,
    ) -> None:
        self.stop_after = stop_after
        self.max_seconds = max_seconds
        self.cuda = device is not None and device.type == "cuda"
        self.stamps: list[float] = []

    def update(self, n: int = 1) -> None:
        if self.cuda:
            torch.cuda.synchronize()
        self.stamps.append(time.perf_counter())
        if self.stop_after is not None and len(self.stamps) >= self.stop_after:
            raise _Enough
        timed = self.stamps[-1] - self.stamps[0]
        if self.max_seconds is not None and len(self.stamps) >= 2 and timed >= self.max_seconds:
            raise _Enough

    def set_description(self, *args: Any, **kwargs: Any) -> None:
        """Ignored (the bar's label)."""

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        """Ignored (the bar's running loss)."""


def start_run(model: KGEModel, dataset: KGDataset, config: TrainingConfig) -> _epochs.Run:
    """What :meth:`kg.training.Trainer.fit` does before its first epoch, minus checkpoints.

    Validates ``config``, re-initialises the model from ``config.seed`` (torch's global state:
    call it inside ``torch.random.fork_rng``), builds the optimiser (fused Adam where torch has
    it) and the regime's tensors (``kg._epochs.Run.build``).
    """
    config.validate()
    device = next(model.parameters()).device
    optimizer = _make_optimizer(config.optimizer, list(model.parameters()), config.lr)
    run = _epochs.Run.build(model, dataset, config, device, optimizer)
    torch.manual_seed(config.seed)
    model.reset_parameters()
    return run


def train_batches(
    model: KGEModel,
    dataset: KGDataset,
    config: TrainingConfig,
    batches: int,
    *,
    max_seconds: float | None = None,
) -> dict[str, Any]:
    """Train the first ``batches`` batches of epoch 1 as ``Trainer.fit`` would.

    ``max_seconds`` stops sooner, once the batches after the first took that long (see
    :class:`BatchClock`).

    Returns:
        ``stamps`` (``perf_counter()`` after each finished batch; fewer when the epoch is
        shorter) and ``batches_per_epoch``.
    """
    with torch.random.fork_rng(devices=[]):
        run = start_run(model, dataset, config)
        clock = BatchClock(stop_after=batches, device=run.device, max_seconds=max_seconds)
        model.train()
        with contextlib.suppress(_Enough):
            run.epoch(clock, 1)
    model.eval()
    return {"stamps": clock.stamps, "batches_per_epoch": run.batches_per_epoch}


def extrapolate_epoch(batch_s: Sequence[float], batches_per_epoch: int) -> float:
    """Seconds of a whole epoch from timed batches: their mean x ``batches_per_epoch``."""
    if not batch_s:
        raise ValueError("batch_s: expected at least one timed batch, got none")
    return statistics.fmean(batch_s) * batches_per_epoch


def _intervals(stamps: Sequence[float]) -> list[float]:
    return [b - a for a, b in zip(stamps, stamps[1:])]


# ---- (a) epoch -------------------------------------------------------------------------------


def time_ours(
    dataset: KGDataset,
    name: str,
    *,
    epochs: int,
    max_batches: int | None,
    max_seconds: float | None = None,
) -> dict:
    """Our seconds per epoch at ``equal_config``: whole epochs, or extrapolated batches."""
    config = equal_config(name, epochs)
    model = build_model(name, dataset, config)
    if max_batches is None:
        trainer = Trainer(model, config).fit(dataset)
        return {"epoch_s": [h["seconds"] for h in trainer.history_]}
    # Batch 1 is the warm-up: the stamps after batches 1 .. N + 1 bound batches 2 .. N + 1.
    out = train_batches(model, dataset, config, max_batches + 1, max_seconds=max_seconds)
    batch_s = _intervals(out["stamps"])
    return {
        "batch_s": batch_s,
        "batches_per_epoch": out["batches_per_epoch"],
        "epoch_s": [extrapolate_epoch(batch_s, out["batches_per_epoch"])],
    }


def part_epoch(args: argparse.Namespace, dataset: KGDataset, models: list[str]) -> dict:
    """(a) Equal-configuration seconds per epoch, ours vs PyKEEN, interleaved."""
    n = args.max_batches
    method = (
        f"whole epochs, {args.time_epochs} per run"
        if n is None
        else f"batches 2..{n + 1} of epoch 1 (batch 1 a warm-up; at most "
        f"{args.max_batch_s:g} s of them), mean x batches per epoch"
    )
    print(f"(a) seconds per epoch at equal configuration ({method}; best of {args.repeats} runs)")
    print(
        f"{'model':9} {'regime':7} {'batches':>8} {'timed':>11} {'ours s/ep':>10} "
        f"{'PyKEEN s/ep':>12} {'ours/PyKEEN':>12} {'ours triples/s':>15}"
    )
    worker = _PyKEENWorker(args.pykeen_python, args.threads) if args.pykeen_python else None
    rows: dict[str, dict] = {}
    triples = dataset.train.mapped_triples.size(0)
    try:
        for name in models:
            config = equal_config(name, args.time_epochs if n is None else 1)
            spec = {**pykeen_spec(config, name, args.data, 0, args.threads)}
            spec.update(
                job="time" if n is None else "time_batches",
                max_batches=n,
                max_seconds=args.max_batch_s,
            )
            row: dict[str, Any] = {"regime": config.regime, "loss": config.resolved_loss()}
            ours, theirs = [], []
            for _ in range(args.repeats):  # interleaved: ours, PyKEEN, ours, PyKEEN, ...
                mine = time_ours(
                    dataset,
                    name,
                    epochs=args.time_epochs,
                    max_batches=n,
                    max_seconds=args.max_batch_s,
                )
                ours.append(mine)
                if worker is None or "pykeen_error" in row:
                    continue
                try:
                    out = worker(spec)
                except (RuntimeError, OSError, json.JSONDecodeError) as err:
                    worker.close()  # a crashed worker is replaced for the next model
                    worker = _PyKEENWorker(args.pykeen_python, args.threads)
                    out = {"error": str(err)}
                if n is not None and "error" not in out and not out["batch_s"]:
                    out = {"error": "no batch after the warm-up: the epoch is too short"}
                if "error" in out:
                    row["pykeen_error"] = out["error"]
                elif n is not None:
                    out["epoch_s"] = [extrapolate_epoch(out["batch_s"], out["batches_per_epoch"])]
                    theirs.append(out)
                else:
                    theirs.append(out)
            row["ours_runs"], row["pykeen_runs"] = ours, theirs
            row["ours_s_per_epoch"] = min(min(r["epoch_s"]) for r in ours)
            row["ours_triples_per_s"] = triples / row["ours_s_per_epoch"]
            batches = ours[0].get("batches_per_epoch", "")
            timed = "whole" if n is None else f"{len(ours[0]['batch_s'])}"
            if n is not None and theirs:
                timed += f"/{len(theirs[0]['batch_s'])}"
            line = (
                f"{name:9} {config.regime:7} {batches:>8} {timed:>11} "
                f"{row['ours_s_per_epoch']:10.3f} "
            )
            if theirs:
                row["pykeen_s_per_epoch"] = min(min(r["epoch_s"]) for r in theirs)
                row["ratio"] = row["ours_s_per_epoch"] / row["pykeen_s_per_epoch"]
                line += f"{row['pykeen_s_per_epoch']:12.3f} {row['ratio']:12.2f} "
            else:
                line += f"{row.get('pykeen_error', 'not run')[:25]:>25} "
            print(line + f"{row['ours_triples_per_s']:15.0f}", flush=True)
            rows[name] = row
    finally:
        if worker is not None:
            worker.close()
    ratios = [r["ratio"] for r in rows.values() if "ratio" in r]
    if ratios:
        print(f"    worst ours/PyKEEN {max(ratios):.2f} (target <= 1/3 for every model)")
    return {"method": method, "max_batches": n, "repeats": args.repeats, "runs": rows}


# ---- (b) flops -------------------------------------------------------------------------------


def _flops_distmult(model: Any, b: int, e: int) -> tuple[int, int]:
    d = model.dim
    return 2 * b * d * e + b * d, d


def _flops_complex(model: Any, b: int, e: int) -> tuple[int, int]:
    d = model.dim  # complex coordinates: 2d reals per row
    return 2 * b * (2 * d) * e + 6 * b * d, 2 * d


def _flops_rescal(model: Any, b: int, e: int) -> tuple[int, int]:
    d = model.dim
    return 2 * b * d * e + 2 * b * d * d, d


def _flops_tucker(model: Any, b: int, e: int) -> tuple[int, int]:
    d, d_r = model.dim, model.relation_dim
    return 2 * b * d * e + 2 * b * d_r * d * d + 2 * b * d * d, d


def _flops_conve(model: Any, b: int, e: int) -> tuple[int, int]:
    d, conv = model.dim, model.conv
    k = conv.kernel_size[0]
    maps = model.fc.in_features  # F H' W'
    return 2 * b * d * e + b * e + 2 * b * maps * k * k + 2 * b * maps * d, d


#: Model -> (forward FLOPs of ``score_tails`` for B queries against E entities, matmul inner
#: dimension D); see the module docstring for the formulas.
FLOPS: dict[str, Callable[[Any, int, int], tuple[int, int]]] = {
    "distmult": _flops_distmult,
    "complex": _flops_complex,
    "rescal": _flops_rescal,
    "tucker": _flops_tucker,
    "conve": _flops_conve,
}


def matmul_flops(b: int, d: int, e: int, *, backward: bool = False) -> int:
    """FLOPs of ``[b, d] @ [d, e]`` (2bde), times 3 with its backward (two more matmuls)."""
    return 2 * b * d * e * (3 if backward else 1)


def _best_seconds(fns: Sequence[Callable[[], object]], repeats: int) -> list[float]:
    """Best wall seconds of each function over ``repeats`` interleaved rounds (one warm-up)."""
    for fn in fns:
        fn()
    best = [math.inf] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def measure_flops(model: KGEModel, batch: int, *, repeats: int = 5, seed: int = 0) -> dict:
    """GFLOP/s of ``model.score_tails`` and of the plain matmul of its shapes (see module doc)."""
    e = model.num_entities
    forward_flops, d = FLOPS[model.name](model, batch, e)
    gen = torch.Generator().manual_seed(seed)
    head = torch.randint(e, (batch,), generator=gen)
    rel = torch.randint(model.num_relations, (batch,), generator=gen)
    q = torch.randn(batch, d, generator=gen, requires_grad=True)
    w = torch.randn(e, d, generator=gen, requires_grad=True)  # [E, D], used transposed
    upstream = torch.ones(batch, e)
    q16, w16 = q.detach().bfloat16(), w.detach().bfloat16()

    def scorer_forward() -> object:
        with torch.no_grad():
            return model.score_tails(head, rel)  # [B, E]

    workspace = Workspace(count=1)  # the trainer's kept score buffer (kg._epochs)

    def matmul_forward() -> object:
        with torch.no_grad():
            return torch.matmul(q, w.t())  # [B, E]

    def matmul_backward() -> None:
        q.grad = w.grad = None
        torch.matmul(q, w.t()).backward(upstream)

    def bf16_forward() -> object:
        return torch.matmul(q16, w16.t())

    model.eval()
    fwd, mm_fwd, mm16 = _best_seconds([scorer_forward, matmul_forward, bf16_forward], repeats)
    model.train()
    with grad_buffers(model) as buffers:  # the tables' kept gradient buffers (kg._rows)

        def scorer_backward() -> None:
            model.zero_grad(set_to_none=True)
            buffers.zero()  # the trainer's step: zero, backward, collect (kg._epochs)
            model.score_workspace = workspace
            try:
                model.score_tails(head, rel).backward(upstream)
            finally:
                model.score_workspace = None
            buffers.collect()

        bwd, mm_bwd = _best_seconds([scorer_backward, matmul_backward], repeats)
    model.eval()
    model.zero_grad(set_to_none=True)
    mm = matmul_flops(batch, d, e)
    out = {
        "shape": {"B": batch, "D": d, "E": e},
        "forward_gflop": forward_flops / 1e9,
        "scorer_forward_gflops": forward_flops / fwd / 1e9,
        "matmul_forward_gflops": mm / mm_fwd / 1e9,
        "scorer_backward_gflops": 3 * forward_flops / bwd / 1e9,
        "matmul_backward_gflops": 3 * mm / mm_bwd / 1e9,
        "matmul_bf16_forward_gflops": mm / mm16 / 1e9,
    }
    out["forward_ratio"] = out["scorer_forward_gflops"] / out["matmul_forward_gflops"]
    out["backward_ratio"] = out["scorer_backward_gflops"] / out["matmul_backward_gflops"]
    return out


def peak_matmul(n: int = 2048, repeats: int = 3) -> dict[str, float]:
    """GFLOP/s of an ``n x n x n`` matmul in fp32 and bf16 (the machine's context)."""
    a = torch.randn(n, n)
    b = torch.randn(n, n)
    a16, b16 = a.bfloat16(), b.bfloat16()
    s32, s16 = _best_seconds([lambda: a @ b, lambda: a16 @ b16], repeats)
    flops = matmul_flops(n, n, n)
    return {"n": n, "fp32_gflops": flops / s32 / 1e9, "bf16_gflops": flops / s16 / 1e9}


def part_flops(args: argparse.Namespace, dataset: KGDataset, models: list[str]) -> dict:
    """(b) Achieved GFLOP/s of the 1-N scorers against a plain matmul of their shapes."""
    names = [m for m in models if m in FLOPS]
    print(
        f"(b) 1-N scorer GFLOP/s vs torch.matmul of the same shapes ({args.threads} thread(s), "
        f"best of {args.flops_repeats}; fwd+bwd counted as 3x fwd)"
    )
    print(
        f"{'model':9} {'B x D x E':>18} {'fwd':>7} {'matmul':>7} {'ratio':>6} "
        f"{'fwd+bwd':>8} {'matmul':>7} {'ratio':>6} {'bf16 matmul':>12}"
    )
    rows = {}
    for name in names:
        config = equal_config(name, 1)
        model = build_model(name, dataset, config)
        row = measure_flops(model, config.batch_size, repeats=args.flops_repeats)
        s = row["shape"]
        print(
            f"{name:9} {s['B']:>6}x{s['D']:>4}x{s['E']:>6} {row['scorer_forward_gflops']:7.1f} "
            f"{row['matmul_forward_gflops']:7.1f} {row['forward_ratio']:6.2f} "
            f"{row['scorer_backward_gflops']:8.1f} {row['matmul_backward_gflops']:7.1f} "
            f"{row['backward_ratio']:6.2f} {row['matmul_bf16_forward_gflops']:12.1f}",
            flush=True,
        )
        rows[name] = row
    peak = peak_matmul()
    print(
        f"    plain {peak['n']}^3 matmul: fp32 {peak['fp32_gflops']:.1f} GFLOP/s, bf16 "
        f"{peak['bf16_gflops']:.1f} GFLOP/s; target scorer/matmul >= {FLOPS_TARGET}"
    )
    return {"runs": rows, "peak_matmul": peak, "threads": args.threads}


# ---- (c) quality -----------------------------------------------------------------------------


def next_due(now: float, every: float) -> float:
    """The first multiple of ``every`` after ``now``: when the next validation falls due."""
    return (now // every + 1) * every


def first_reach(curve: Sequence[dict], target: float) -> float | None:
    """Wall seconds of the first point of ``curve`` with ``valid_mrr >= target``; else None."""
    for point in curve:
        if point["valid_mrr"] >= target:
            return float(point["wall_s"])
    return None


def time_to_quality(ours: Sequence[dict], theirs: Sequence[dict]) -> dict[str, Any]:
    """Ours' wall time to PyKEEN's best validation MRR, and the ratio to PyKEEN's own time.

    Args:
        ours: Our validation points ``{"wall_s", "valid_mrr", ...}`` in time order.
        theirs: PyKEEN's.

    Returns:
        ``target_mrr`` (PyKEEN's best finite validation MRR within the budget, its final one
        unless it declined), ``pykeen_final_mrr``, ``pykeen_s`` and ``ours_s`` (first points
        at or above the target; ``ours_s`` None when never reached), ``ratio`` (``ours_s /
        pykeen_s`` or None) and ``target_met`` (ratio <= 1/3).
    """
    finite = [p["valid_mrr"] for p in theirs if math.isfinite(p["valid_mrr"])]
    if not finite:
        return {"target_mrr": None, "ours_s": None, "pykeen_s": None, "ratio": None}
    target = max(finite)
    pykeen_s = first_reach(theirs, target)
    ours_s = first_reach(ours, target)
    ratio = ours_s / pykeen_s if ours_s is not None and pykeen_s else None
    return {
        "target_mrr": target,
        "pykeen_final_mrr": theirs[-1]["valid_mrr"],
        "pykeen_s": pykeen_s,
        "ours_s": ours_s,
        "ratio": ratio,
        "target_met": ratio is not None and ratio <= QUALITY_TARGET,
    }


#: TrainingConfig fields part (c) sets itself (the budget replaces stopping; no side files).
QUALITY_FIXED = ("seed", "eval_every", "patience", "progress", "log_path", "checkpoint_path")


def parse_value(text: str) -> Any:
    """``KEY=VALUE``'s value: ``none`` -> None, ``true``/``false`` -> bool, else int, float, str."""
    lowered = text.strip().lower()
    if lowered == "none":
        return None
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        with contextlib.suppress(ValueError):
            return kind(text)
    return text


def parse_overrides(pairs: Sequence[str]) -> dict[str, Any]:
    """``--quality-set KEY=VALUE`` pairs as TrainingConfig overrides (the last of a key wins).

    Raises:
        ValueError: On a pair without ``=``, a key that is not a TrainingConfig field, or one
            of :data:`QUALITY_FIXED`; the message names the key.
    """
    fields = {f.name for f in dataclasses.fields(TrainingConfig)}
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise ValueError(f"--quality-set {pair!r}: expected KEY=VALUE")
        if key not in fields:
            raise ValueError(
                f"--quality-set {key}: not a TrainingConfig field; choose from {sorted(fields)}"
            )
        if key in QUALITY_FIXED:
            raise ValueError(f"--quality-set {key}: set by the bench itself ({QUALITY_FIXED})")
        out[key] = parse_value(value)
    return out


def quality_config(
    name: str, seed: int = 0, overrides: dict[str, Any] | None = None
) -> TrainingConfig:
    """The recipe of part (c): model ``name``'s tuned defaults (with ``overrides``, fields of
    :class:`TrainingConfig`); the budget replaces stopping. Validated."""
    config = TrainingConfig.from_defaults(
        name, **(overrides or {}), seed=seed, eval_every=0, patience=None, progress=False
    )
    config.validate()
    return config


def valid_subset(dataset: KGDataset, n: int, seed: int = 0) -> torch.Tensor:
    """``n`` validation triples drawn without replacement (seeded, in file order); 0: all."""
    triples = dataset.valid.mapped_triples
    if n <= 0 or n >= triples.size(0):
        return triples
    gen = torch.Generator().manual_seed(seed)
    rows = torch.randperm(triples.size(0), generator=gen)[:n].sort().values
    return triples[rows]  # [n, 3]


def quality_ours(
    dataset: KGDataset,
    name: str,
    *,
    budget_s: float,
    valid_every_s: float,
    valid_triples: torch.Tensor | None = None,
    seed: int = 0,
    overrides: dict[str, Any] | None = None,
    dim: int | None = None,
) -> dict[str, Any]:
    """Validation MRR against wall time under ``budget_s``; test metrics of the best state.

    Validates (on ``valid_triples``, default the whole validation split; filtered with every
    split) at the end of the first epoch at or past each multiple of ``valid_every_s`` and
    after the last epoch; stops at the first epoch end at or past ``budget_s`` or at the
    config's epoch cap (the rule of ``_kg_pykeen.py``'s ``quality_budget`` job). ``overrides``
    (TrainingConfig fields) and ``dim`` (default ``DEFAULTS[name].dim``) change the recipe.
    """
    queries = dataset.valid.mapped_triples if valid_triples is None else valid_triples
    config = quality_config(name, seed, overrides)
    model = build_model(name, dataset, config, dim=dim)
    curve: list[dict] = []
    best: dict[str, Any] = {"mrr": -math.inf, "epoch": 0, "state": None}
    with torch.random.fork_rng(devices=[]):
        start = time.perf_counter()
        run = start_run(model, dataset, config)
        index = dataset.filter_index()  # train, valid and test, as Trainer validates
        due = valid_every_s
        for epoch in range(1, config.epochs + 1):
            model.train()
            run.epoch(BatchClock(), epoch)
            now = time.perf_counter() - start
            last = now >= budget_s or epoch >= config.epochs
            if now >= due or last:
                metrics = evaluate(
                    model,
                    queries,
                    index,
                    reciprocal=config.reciprocal,
                    nonfinite="worst",
                )
                now = time.perf_counter() - start
                curve.append({"epoch": epoch, "wall_s": now, "valid_mrr": metrics.mrr})
                if metrics.mrr > best["mrr"]:  # NaN never improves
                    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
                    best.update(mrr=metrics.mrr, epoch=epoch, state=state)
                due = next_due(now, valid_every_s)
            if last:
                break
        wall = time.perf_counter() - start
    if best["state"] is not None:
        model.load_state_dict(best["state"])
    started = time.perf_counter()
    test = evaluate(model, dataset.test.mapped_triples, index, reciprocal=config.reciprocal)
    summary = test.summary()
    return {
        "curve": curve,
        "epochs": curve[-1]["epoch"] if curve else 0,
        "wall_s": wall,
        "best_epoch": best["epoch"],
        "best_valid_mrr": best["mrr"],
        "test_eval_s": time.perf_counter() - started,
        "test": {k: summary[k] for k in ("mrr", "hits_at_1", "hits_at_3", "hits_at_10")},
    }


def _start_pykeen(python: str, spec: dict, threads: int) -> tuple[subprocess.Popen, Any, Any]:
    """Start one ``_kg_pykeen.py --serve`` job; its output goes to temporary files.

    The spec goes in on stdin: with ``--valid-triples`` it holds thousands of labelled
    triples, too long for a command line.
    """
    out, err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    proc = subprocess.Popen(
        [python, str(PYKEEN_DRIVER), "--serve"],
        stdin=subprocess.PIPE,
        stdout=out,
        stderr=err,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(spec) + "\n")
    proc.stdin.close()  # one job: the worker exits after answering it
    return proc, out, err


def _finish_pykeen(job: tuple[subprocess.Popen, Any, Any]) -> dict:
    proc, out, err = job
    proc.wait()
    out.seek(0)
    err.seek(0)
    lines = out.read().strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"error": " | ".join(err.read().strip().splitlines()[-3:])}
    return json.loads(lines[-1])  # an exception in the job arrives as {"error": ...}


def _curve_line(curve: Sequence[dict]) -> str:
    return ", ".join(f"{p['wall_s']:.0f}s {p['valid_mrr']:.3f}" for p in curve)


def part_quality(args: argparse.Namespace, dataset: KGDataset) -> dict:
    """(c) Time to quality under the same wall budget, then test metrics of the best state."""
    name = args.quality_model or cli_default_model()
    budget_s = args.budget_min * 60
    every_s = (args.valid_every_min or args.budget_min / 12) * 60
    overrides = parse_overrides(args.quality_set)
    config = quality_config(name, overrides=overrides)
    dim = args.quality_dim or DEFAULTS[name].dim
    how = "one after the other" if args.sequential else "concurrently"
    queries = valid_subset(dataset, args.valid_triples)
    recipe = ", ".join(f"{k}={v!r}" for k, v in overrides.items())
    print(
        f"(c) time to quality: {name} ({config.regime}, {config.resolved_loss()}, dim "
        f"{dim}{'' if args.quality_dim else ' (default)'}; "
        f"{'overrides ' + recipe if overrides else 'default recipe'}: {config.optimizer} lr "
        f"{config.lr:g}, batch {config.batch_size}, {config.regularizer} "
        f"{config.regularizer_weight:g}), budget {args.budget_min:g} min per side, "
        f"validation on {queries.size(0)} triples every {every_s / 60:.3g} min (first epoch end "
        f"past it), both sides {how} "
        f"({args.threads} thread(s) each, separate processes)",
        flush=True,
    )
    spec = {
        **pykeen_spec(config, name, args.data, 0, args.threads),
        "job": "quality_budget",
        "budget_s": budget_s,
        "valid_every_s": every_s,
        "dim": dim,
    }
    if queries.size(0) < dataset.valid.mapped_triples.size(0):
        ent, rel = dataset.entities.labels, dataset.relations.labels
        spec["valid_labels"] = [[ent[h], rel[r], ent[t]] for h, r, t in queries.tolist()]
    job = None
    if args.pykeen_python and not args.sequential:
        job = _start_pykeen(args.pykeen_python, spec, args.threads)
    print(
        f"{'side':7} {'epochs':>6} {'best ep':>7} {'val MRR':>8} {'test MRR':>8} "
        f"{'H@1':>6} {'H@3':>6} {'H@10':>6} {'test eval s':>11}",
        flush=True,
    )
    ours = quality_ours(
        dataset,
        name,
        budget_s=budget_s,
        valid_every_s=every_s,
        valid_triples=queries,
        overrides=overrides,
        dim=dim,
    )
    _quality_row("ours", ours)  # printed now: PyKEEN's side may take much longer to finish
    if args.pykeen_python and args.sequential:
        job = _start_pykeen(args.pykeen_python, spec, args.threads)
    theirs = _finish_pykeen(job) if job is not None else None
    _quality_row("PyKEEN", theirs)
    result: dict[str, Any] = {
        "model": name,
        "dim": dim,
        "overrides": overrides,  # --quality-set, parsed; {} = the model's tuned defaults
        "config": {k: v for k, v in vars(config).items() if not k.endswith("_path")},
        "budget_s": budget_s,
        "valid_every_s": every_s,
        "valid_triples": queries.size(0),
        "concurrent": job is not None and not args.sequential,
        "ours": ours,
        "pykeen": theirs,
    }
    if theirs is not None and "error" not in theirs:
        ttq = time_to_quality(ours["curve"], theirs["curve"])
        result["time_to_quality"] = ttq
        if ttq["target_mrr"] is not None:
            reached = (
                f"ours reached it at {ttq['ours_s']:.0f} s: ratio {ttq['ratio']:.2f}"
                if ttq["ratio"] is not None
                else "ours never reached it within the budget"
            )
            print(
                f"    PyKEEN's best validation MRR {ttq['target_mrr']:.3f} (final "
                f"{ttq['pykeen_final_mrr']:.3f}) at {ttq['pykeen_s']:.0f} s; {reached} "
                f"(target <= 1/3)",
                flush=True,
            )
    return result


def _quality_row(side: str, out: dict | None) -> None:
    if out is None or "error" in out:
        print(f"{side:7} {'not run' if out is None else out['error']}", flush=True)
        return
    t = out["test"]
    print(
        f"{side:7} {out['epochs']:6d} {out['best_epoch']:7d} {out['best_valid_mrr']:8.3f} "
        f"{t['mrr']:8.3f} {t['hits_at_1']:6.3f} {t['hits_at_3']:6.3f} "
        f"{t['hits_at_10']:6.3f} {out['test_eval_s']:11.1f}\n"
        f"        curve (wall s, valid MRR): {_curve_line(out['curve'])}; "
        f"wall {out['wall_s']:.0f} s",
        flush=True,
    )


def cli_default_model() -> str:
    """The model ``graphlib kg train`` trains first without flags (read from its parser).

    Without ``--model`` the command races (``auto``, :func:`kg.selection.race`): its first
    ``eval_every * patience`` epochs (20) are those of the first candidate,
    :data:`kg.selection.RACE_MODELS[0] <kg.selection.RACE_MODELS>`, which is returned then;
    a time-to-quality curve of it is the no-flag run's curve over those epochs.
    """
    from graphlib_ml.cli.kg import AUTO, add_subparser
    from kg.selection import RACE_MODELS

    parser = argparse.ArgumentParser()
    add_subparser(parser.add_subparsers(dest="command"), only="train")
    name = str(parser.parse_args(["kg", "train"]).model)
    return RACE_MODELS[0] if name == AUTO else name


# ---- (d) memory ------------------------------------------------------------------------------


def _status_kib(pid: int, key: str) -> int | None:
    """``key`` (``VmHWM``, ``VmRSS``) of process ``pid`` in KiB from ``/proc``; None if gone."""
    with contextlib.suppress(OSError, AttributeError):
        text = Path(f"/proc/{pid}/status").read_text()
        return int(re.search(rf"{key}:\s+(\d+)", text).group(1))  # type: ignore[union-attr]
    return None


def _announced_base(out: Any) -> float | None:
    """The ``base_mib`` a memory job printed into the file ``out`` so far, or None.

    Reads with ``os.pread`` at offset 0: the child shares the file's offset, so a ``seek``
    here would move where the child writes.
    """
    size = os.fstat(out.fileno()).st_size
    for line in os.pread(out.fileno(), size, 0).decode().splitlines():
        if line.startswith('{"base_mib"'):
            return float(json.loads(line)["base_mib"])
    return None


def run_memory_jobs(
    cmds: Sequence[Sequence[str]],
    threads: int,
    timeout_s: float,
    *,
    setup_timeout_s: float = 900.0,
    poll_s: float = 0.25,
) -> list[dict[str, Any]]:
    """Run memory jobs concurrently, each phase stopped after ``timeout_s`` with a lower bound.

    A job (``benchmarks._kg_memory`` or ``_kg_pykeen.py``'s ``memory`` job, with
    ``announce_base`` in its spec) prints ``{"base_mib": ...}`` once set up (imports, data,
    model), then its result line. The phase's clock starts when the base line appears. A job
    whose phase still runs ``timeout_s`` later is killed after its peak resident size
    (``VmHWM`` from ``/proc``, polled every ``poll_s``) is read: its result is
    ``{"peak_mib": VmHWM - base, "timed_out": True, "s": seconds, ...}``, a lower bound of
    the phase's peak. A job that fails, or is still setting up after ``setup_timeout_s``,
    gives ``{"error": ...}``.
    """
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    jobs = []
    for cmd in cmds:
        out, err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
        proc = subprocess.Popen(list(cmd), stdout=out, stderr=err, text=True, env=env, cwd=ROOT)
        jobs.append((proc, out, err))
    n = len(jobs)
    started = time.perf_counter()
    base: list[float | None] = [None] * n
    phase_start: list[float | None] = [None] * n
    hwm: list[int | None] = [None] * n
    stopped: list[str | None] = [None] * n
    while any(proc.poll() is None for proc, *_ in jobs):
        now = time.perf_counter()
        for i, (proc, out, _) in enumerate(jobs):
            if proc.poll() is not None:
                continue
            if base[i] is None:
                base[i] = _announced_base(out)
                phase_start[i] = now if base[i] is not None else None
            hwm[i] = _status_kib(proc.pid, "VmHWM") or hwm[i]
            start = phase_start[i]
            if start is not None and now - start >= timeout_s:
                stopped[i] = "phase"
            elif start is None and now - started >= setup_timeout_s:
                stopped[i] = "setup"
            if stopped[i] is not None:
                proc.kill()  # our own child, by its pid
                proc.wait()
        time.sleep(poll_s)
    results: list[dict[str, Any]] = []
    for i, (proc, out, err) in enumerate(jobs):
        out.seek(0)  # the child has exited: its offset no longer matters
        err.seek(0)
        lines = [json.loads(x) for x in out.read().splitlines() if x.startswith("{")]
        if stopped[i] == "phase" and hwm[i] is not None and base[i] is not None:
            results.append(
                {
                    "peak_mib": hwm[i] / 1024 - base[i],  # type: ignore[operator]
                    "base_mib": base[i],
                    "s": timeout_s,
                    "timed_out": True,
                }
            )
        elif stopped[i] is not None:
            results.append({"error": f"still setting up after {setup_timeout_s:g} s"})
        elif proc.returncode != 0 or not lines or "peak_mib" not in lines[-1]:
            tail = " | ".join(err.read().strip().splitlines()[-3:])
            results.append({"error": lines[-1].get("error", tail) if lines else tail})
        else:
            results.append(lines[-1])
        out.close()
        err.close()
    return results


def _ratio_bound(numerator_bound: bool, denominator_bound: bool) -> str:
    """How a ratio of two measurements that may be lower bounds reads: ``>=``, ``<=`` or ``?``.

    A lower bound over an exact value is a lower bound (``>=``), an exact value over a lower
    bound an upper bound (``<=``), two lower bounds bound nothing (``?``).
    """
    return {(False, False): "", (True, False): ">=", (False, True): "<=", (True, True): "?"}[
        (numerator_bound, denominator_bound)
    ]


def _memory_cell(out: dict | None) -> str:
    if out is None:
        return f"{'not run':>8}"
    if "error" in out:
        return f"{'failed':>8}"
    return f"{'>=' if out.get('timed_out') else ''}{out['peak_mib']:.1f}".rjust(8)


def part_memory(args: argparse.Namespace, models: list[str]) -> dict:
    """(d) Peak memory of training and of the filtered test evaluation, fresh processes.

    Per model and phase ours and PyKEEN run at the same time (two processes, one thread each),
    each stopped after ``--memory-timeout-s`` (then its peak so far is a lower bound, ``>=``).
    """
    batches = args.memory_batches or None
    what = f"the first {batches} batches" if batches else f"{args.memory_epochs} epoch(s)"
    print(
        f"(d) peak MiB above the post-setup resident size: training ({what}, tuned defaults), "
        f"filtered test evaluation; ours and PyKEEN concurrently, at most "
        f"{args.memory_timeout_s:g} s per process ('>=': stopped there, a lower bound)",
        flush=True,
    )
    print(
        f"{'model':9} {'train':>8} {'eval':>8} {'eval/train':>10} {'eval s':>7}   "
        f"{'PyKEEN train':>12} {'eval':>8} {'eval/train':>10} {'eval s':>7} {'eval s ours/PK':>14}",
        flush=True,
    )
    rows = {}
    for name in models:
        base = {
            "folder": str(args.data),
            "model": name,
            "threads": args.threads,
            "epochs": args.memory_epochs,
            "max_batches": batches,
            "announce_base": True,
        }
        config = TrainingConfig.from_defaults(name, epochs=args.memory_epochs)
        theirs_spec = {**pykeen_spec(config, name, args.data, 0, args.threads), "job": "memory"}
        theirs_spec.update(max_batches=batches, announce_base=True)
        row: dict[str, Any] = {}
        for phase in ("train", "eval"):
            ours_spec = json.dumps({**base, "phase": phase})
            cmds = [[sys.executable, "-m", "benchmarks._kg_memory", ours_spec]]
            if args.pykeen_python:
                spec = json.dumps({**theirs_spec, "phase": phase})
                cmds.append([args.pykeen_python, str(PYKEEN_DRIVER), spec])
            outs = run_memory_jobs(cmds, args.threads, args.memory_timeout_s)
            for side, out in zip(("ours", "pykeen"), outs):
                row[f"{side}_{phase}"] = out
                if "error" in out:
                    print(f"  {side} {name} {phase} failed: {out['error']}", flush=True)
        line = f"{name:9}"
        for side in ("ours", "pykeen"):
            train, ev = row.get(f"{side}_train"), row.get(f"{side}_eval")
            line += f" {_memory_cell(train)} {_memory_cell(ev)}"
            if train and ev and "error" not in train and "error" not in ev:
                row[f"{side}_ratio"] = ev["peak_mib"] / max(train["peak_mib"], 1e-9)
                bound = _ratio_bound(ev.get("timed_out", False), train.get("timed_out", False))
                row[f"{side}_ratio_bound"] = bound
                ratio = bound + format(row[f"{side}_ratio"], ".2f")
                line += f" {ratio:>10} {ev['s']:7.1f}"
            else:
                line += f" {'':10} {'':7}"
            line += "  " if side == "ours" else ""
        ours_ev, theirs_ev = row.get("ours_eval"), row.get("pykeen_eval")
        if ours_ev and theirs_ev and "error" not in ours_ev and "error" not in theirs_ev:
            row["eval_s_ratio"] = ours_ev["s"] / theirs_ev["s"]
            bound = _ratio_bound(ours_ev.get("timed_out", False), theirs_ev.get("timed_out", False))
            row["eval_s_ratio_bound"] = bound
            line += f" {bound + format(row['eval_s_ratio'], '.2f'):>14}"
        print(line, flush=True)
        rows[name] = row
    print(
        f"    targets: eval/train <= {MEMORY_TARGET:g}; eval seconds ours/PyKEEN <= 1/3 "
        "(a ratio with a timed-out side is a bound)",
        flush=True,
    )
    return {
        "max_batches": batches,
        "epochs": args.memory_epochs,
        "timeout_s": args.memory_timeout_s,
        "concurrent": True,
        "runs": rows,
    }


# ---- main ------------------------------------------------------------------------------------


def _git(*cmd: str) -> str | None:
    try:
        proc = subprocess.run(["git", *cmd], capture_output=True, text=True, cwd=ROOT, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return proc.stdout.strip()


def _pykeen_version(python: str) -> str | None:
    cmd = [python, "-c", "import pykeen; print(pykeen.get_version())"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


def _cpu_name() -> str | None:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    return None


def machine(threads: int) -> dict[str, Any]:
    """Hardware, software, thread count, load average and git commit of this run."""
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "platform": platform.platform(),
        "processor": _cpu_name() or platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "load_average_at_start": os.getloadavg(),
        "torch": torch.__version__,
        "threads": threads,
        "cuda": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": bool(status) if status is not None else None,
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_FOLDER, help="dataset folder")
    parser.add_argument(
        "--pykeen-python",
        default=DEFAULT_PYKEEN,
        help=f"python of a PyKEEN 1.11 environment (default {DEFAULT_PYKEEN}; '' for ours only)",
    )
    parser.add_argument("--parts", default=",".join(PARTS), help="comma list of " + str(PARTS))
    parser.add_argument("--models", default=",".join(MODELS), help="models of parts a, b, d")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument(
        "--max-batches",
        type=int,
        default=None,
        help="epoch: time batches 2..N+1 and extrapolate (default: whole epochs)",
    )
    parser.add_argument(
        "--max-batch-s",
        type=float,
        default=60.0,
        help="epoch, with --max-batches: stop timing a side after this many seconds of batches",
    )
    parser.add_argument(
        "--time-epochs",
        type=int,
        default=2,
        help="epoch, whole epochs: per run (the best; PyKEEN's first holds its setup)",
    )
    parser.add_argument("--repeats", type=int, default=2, help="epoch: interleaved runs per side")
    parser.add_argument("--flops-repeats", type=int, default=5, help="flops: timed rounds")
    parser.add_argument("--quality-model", default=None, help="quality: default the CLI's")
    parser.add_argument("--budget-min", type=float, default=60.0, help="quality: wall budget")
    parser.add_argument(
        "--valid-every-min",
        type=float,
        default=None,
        help="quality: validation cadence (default budget / 12)",
    )
    parser.add_argument(
        "--valid-triples",
        type=int,
        default=0,
        help="quality: validate on this many seeded valid triples (default 0: all)",
    )
    parser.add_argument(
        "--sequential", action="store_true", help="quality: run the sides one after the other"
    )
    parser.add_argument(
        "--quality-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="quality: override a TrainingConfig field of the recipe (repeatable; value "
        "parsed as none/true/false, int, float, else str), e.g. regularizer_weight=5e-2",
    )
    parser.add_argument(
        "--quality-dim",
        type=int,
        default=None,
        help="quality: embedding size (default the model's DEFAULTS dim)",
    )
    parser.add_argument(
        "--memory-batches",
        type=int,
        default=20,
        help="memory: training batches (0: --memory-epochs whole epochs)",
    )
    parser.add_argument("--memory-epochs", type=int, default=1, help="memory: with batches 0")
    parser.add_argument(
        "--memory-timeout-s",
        type=float,
        default=600.0,
        help="memory: stop a process after this many seconds (its peak so far: a lower bound)",
    )
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON")
    args = parser.parse_args(argv)
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    for what, given, known in (("--parts", parts, PARTS), ("--models", models, tuple(MODELS))):
        bad = [x for x in given if x not in known]
        if bad:
            parser.error(f"{what}: unknown {bad}; choose from {list(known)}")
    for flag in ("max_batches", "repeats", "flops_repeats", "threads"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            parser.error(f"--{flag.replace('_', '-')}: expected an int >= 1, got {value}")
    if args.quality_dim is not None and args.quality_dim < 1:
        parser.error(f"--quality-dim: expected an int >= 1, got {args.quality_dim}")
    try:
        quality_config(
            args.quality_model or cli_default_model(), overrides=parse_overrides(args.quality_set)
        )
    except (ValueError, GraphDataError) as err:
        parser.error(str(err))
    if args.budget_min <= 0 or (args.valid_every_min is not None and args.valid_every_min <= 0):
        parser.error("--budget-min and --valid-every-min: expected positive minutes")
    if args.pykeen_python and not Path(args.pykeen_python).exists():
        print(f"PyKEEN python {args.pykeen_python} not found: our side only")
        args.pykeen_python = None
    torch.set_num_threads(args.threads)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)  # for our subprocesses (memory)
    args.data = args.data.resolve()
    info = machine(args.threads)
    if args.pykeen_python:
        info["pykeen"] = _pykeen_version(args.pykeen_python)
    dataset, dropped = load(args.data)
    print(
        f"kg scale: {dataset.name} ({dataset.num_entities} entities, {dataset.num_relations} "
        f"relations, {dataset.train.mapped_triples.size(0)} train triples); torch "
        f"{torch.__version__}, {args.threads} thread(s), {info['processor']}, load "
        f"{info['load_average_at_start'][0]:.2f}; PyKEEN {info.get('pykeen') or 'not run'}"
    )
    for message in dropped:
        print(f"    {message}")
    results: dict[str, Any] = {
        "machine": info,
        "data": str(args.data),
        "dataset": {
            "entities": dataset.num_entities,
            "relations": dataset.num_relations,
            "triples": {k: v.mapped_triples.size(0) for k, v in dataset.splits.items()},
            "dropped": dropped,
        },
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
    }
    runners: dict[str, Callable[[], dict]] = {
        "epoch": lambda: part_epoch(args, dataset, models),
        "flops": lambda: part_flops(args, dataset, models),
        "quality": lambda: part_quality(args, dataset),
        "memory": lambda: part_memory(args, models),
    }
    for part in parts:
        start = time.perf_counter()
        results[part] = runners[part]()
        results[part]["wall_s"] = time.perf_counter() - start
        if args.out:  # after every part, so a killed run keeps what it measured
            _write_json(args.out, results)
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
