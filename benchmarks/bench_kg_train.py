"""KGE training: filtered test metrics, time per epoch and memory, ours vs PyKEEN, Nations/UMLS.

Three modes, all ``.venv/bin/python -m benchmarks.bench_kg_train [--datasets nations,umls]
[--models transe,...] [--threads 1] [--pykeen-python PATH] [--out FILE.json]``:

* quality (default; ``[--seeds 0,1,2] [--epochs N] [--epoch-caps umls/conve=10,...]
  [--sides ours,pykeen] [--json-dir DIR]``): filtered test metrics over seeds, both libraries.
  With ``--json-dir`` every (dataset, model, epoch budget, side, seed) run is written there as
  it finishes and an existing file is reused, so a killed run resumes where it stopped.
* ``--equal-config [--time-epochs 2] [--repeats 2]``: training seconds per epoch of both
  libraries at the *same* configuration (see :func:`equal_config`): the 1-N models train KvsAll
  + BCE with reciprocal relations on both sides (PyKEEN's LCWA: one example per unique (h, r),
  all true tails as targets), TransE and RotatE their tuned sLCWA config on both sides. Runs
  interleave (ours, PyKEEN, ours, PyKEEN; PyKEEN in one ``--serve`` worker so its import is paid
  once), no validation; reported: the best epoch of all repeats per side, training triples per
  second and the ours/PyKEEN ratio. All seven models on both datasets take a few minutes:
  ``.venv/bin/python -m benchmarks.bench_kg_train --equal-config --threads 1 --pykeen-python
  /tmp/pykeen-venv/bin/python``.
* ``--memory [--memory-epochs 2]``: peak resident memory of training (``--memory-epochs`` epochs
  of the tuned defaults) and of the filtered test evaluation, each in a fresh process
  (``benchmarks/_kg_memory.py``; PyKEEN's in ``benchmarks/_kg_pykeen.py``), as the increase of
  the peak over the resident size after imports, data loading and model construction. Target
  (issue 3): evaluation peak <= 2x training peak.

Quality mode: for every dataset, model and seed, ours trains with the model's tuned defaults
(``kg.models.DEFAULTS`` through ``TrainingConfig.from_defaults``: regime, loss, dimension,
learning rate, at most ``epochs`` epochs with early stopping on validation MRR every 10 epochs,
patience 5, best epoch restored) and reports filtered both-sides realistic test MRR and
Hits@1/3/10 (mean and s.d. over seeds) and seconds per epoch. Two timings: ``train s/epoch``
(optimisation only, the median epoch) and ``fit s/epoch`` (the whole fit, validations included,
divided by the epochs run; this one is compared with PyKEEN's ``train_seconds / epochs``, which
also includes its early stopper's evaluations). "At least as good within noise": our mean MRR
>= PyKEEN's mean MRR minus the larger of the two standard deviations.

PyKEEN 1.11 (a separate environment; the library never imports it) runs in a subprocess when
``--pykeen-python /path/to/venv/bin/python`` is given (``benchmarks/_kg_pykeen.py``), with the
same model, dimension(s), optimiser, learning rate, batch size, epoch budget and early stopping.
Regimes map to PyKEEN's training loops: sLCWA -> ``slcwa`` (``basic``/``bernoulli`` sampler,
same negatives per positive, same loss); KvsAll -> ``lcwa`` + ``BCEWithLogitsLoss``; 1vsAll ->
``lcwa`` + ``CrossEntropyLoss`` (PyKEEN has no 1vsAll loop: its LCWA cross-entropy is the
closest, one softmax per (h, r) with all true tails as targets, so an epoch has one step per
unique query instead of one per triple); label smoothing -> ``label_smoothing`` of the LCWA
loop; reciprocal relations -> ``create_inverse_triples``; N3 -> ``powersum`` regulariser with
``p=3`` and weight ``lambda / 3`` on entities and relations (PyKEEN regularises the whole entity
table it scores in LCWA, ours the batch's h and t rows; for DistMult its unit-norm entity
projection is switched off, as ours has none); RotatE -> ``interaction_kwargs={"p": 1}`` (our
sum of complex moduli) and the NSSA margin set to our gamma (PyKEEN's score has none); early
stopping on validation MRR (PyKEEN's default is Hits@10); ComplEx -> ``xavier_normal``
initialisation like ours (PyKEEN's default N(0, 1) collapses). TuckER: same entity and
relation dimensions, the three dropouts (``dropout_0/1/2`` = our input/hidden1/hidden2), batch
norm on, torch's ``xavier_normal_`` embeddings and U(-1, 1) core like ours. RESCAL: same
dimension, N3 as above instead of PyKEEN's default L2 (weight 10), our initialisation
(``xavier_normal_`` entities, N(0, 1/d) matrices) instead of PyKEEN's U(0, 1). ConvE: same
dimension, image height (width = dim / height), filters, kernel, the three dropouts
(``input``/``feature_map``/``output`` = our input/feature_map/hidden), batch norm, torch's
``xavier_normal_`` embeddings, per-entity tail bias in both. Both libraries compute the same
TuckER (D0 after BN0 on the head, D1 on the core-relation product, BN1 then D2) and ConvE
networks (the reference codes'). Not matched: 1vsAll versus LCWA (above); the N3 rows; PyKEEN's
initialisations where ours is not set on its side (TransE, DistMult, RotatE, and ConvE's
convolution and projection layers: PyTorch defaults in both). PyKEEN's constructor defaults are
kept for everything else (TransE's unit-norm entities), so the comparison is "each library's
recipe at the same budget".

Targets (issue 3): our best UMLS model reaches test MRR >= 0.83; every model at least as good as
PyKEEN's run of it within noise (3 seeds); training time per epoch at equal configuration <= 1/3
of PyKEEN's; evaluation peak memory <= 2x the training peak.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

from graphdata.atomic import write_text_atomic
from graphdata.triples import KGDataset
from kg.models import DEFAULTS, MODELS
from kg.training import Trainer, TrainingConfig, build_model

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "kg"
UMLS_TARGET = 0.83

PYKEEN_DRIVER = Path(__file__).resolve().with_name("_kg_pykeen.py")
ROOT = Path(__file__).resolve().parents[1]


def run_ours(folder: Path, name: str, seed: int, epochs: int | None) -> dict:
    """Train model ``name`` with its tuned defaults on ``folder``; return timings and metrics."""
    dataset = KGDataset.from_folder(folder)
    overrides = {"epochs": epochs} if epochs else {}
    config = TrainingConfig.from_defaults(name, seed=seed, progress=False, **overrides)
    model = build_model(name, dataset, config)
    start = time.perf_counter()
    trainer = Trainer(model, config).fit(dataset)
    fit = time.perf_counter() - start
    start = time.perf_counter()
    metrics = trainer.evaluate(dataset)
    evaluation = time.perf_counter() - start
    summary = metrics.summary()
    return {
        "epochs": trainer.epochs_trained_,
        "best_epoch": trainer.best_epoch_,
        "train_s_per_epoch": statistics.median(h["seconds"] for h in trainer.history_),
        "fit_s_per_epoch": fit / trainer.epochs_trained_,
        "eval_s": evaluation,
        **{k: summary[k] for k in ("mrr", "hits_at_1", "hits_at_3", "hits_at_10", "mr")},
        "config": {"dim": model.dim, **{k: v for k, v in vars(config).items() if k in _SPEC}},
    }


_METRICS = ("mrr", "hits_at_1", "hits_at_3", "hits_at_10")
_SPEC = (
    "regime",
    "loss",
    "epochs",
    "batch_size",
    "lr",
    "optimizer",
    "num_negatives",
    "sampler",
    "margin",
    "adversarial_temperature",
    "label_smoothing",
    "reciprocal",
    "regularizer",
    "regularizer_weight",
)


def pykeen_spec(config: TrainingConfig, name: str, folder: Path, seed: int, threads: int) -> dict:
    """The JSON spec ``_kg_pykeen.py`` maps onto PyKEEN for our ``config`` of model ``name``."""
    return {
        **{k: getattr(config, k) for k in _SPEC},
        "loss": config.resolved_loss(),
        "margin": config.resolved_margin(),
        "model": name,
        "dim": DEFAULTS[name].dim,
        "model_kwargs": DEFAULTS[name].model_kwargs,
        "folder": str(folder),
        "seed": seed,
        "threads": threads,
    }


def _subprocess_json(cmd: list[str], threads: int, what: str) -> dict | None:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    if proc.returncode != 0:
        print(f"  {what} failed: {proc.stderr.strip().splitlines()[-3:]}", flush=True)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_pykeen(python: str, folder: Path, name: str, seed: int, epochs: int | None, threads: int):
    """Run the same configuration in PyKEEN (subprocess); ``None`` with a message on failure."""
    config = TrainingConfig.from_defaults(name, seed=seed, **({"epochs": epochs} if epochs else {}))
    spec = {**pykeen_spec(config, name, folder, seed, threads), "job": "quality"}
    return _subprocess_json(
        [python, str(PYKEEN_DRIVER), json.dumps(spec)], threads, f"pykeen {name}"
    )


def _metric_stats(runs: list[dict], prefix: str) -> dict[str, float]:
    """``{prefix}{metric}_mean`` and ``_sd`` over the runs for every metric of ``_METRICS``."""
    out: dict[str, float] = {}
    for key in _METRICS:
        out[f"{prefix}{key}_mean"], out[f"{prefix}{key}_sd"] = _mean_sd(runs, key)
    return out


def _mean_sd(runs: list[dict], key: str) -> tuple[float, float]:
    values = [r[key] for r in runs]
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def _write_json(path: Path, data: object) -> None:
    """Write ``data`` as JSON atomically (temp file in the same folder, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(data, indent=1))


def _cached(json_dir: Path | None, key: str, fn, *fn_args) -> dict | None:
    """``fn(*fn_args)``, stored as ``json_dir/key.json``; an existing file is read instead."""
    path = json_dir / f"{key}.json" if json_dir else None
    if path is not None and path.exists():
        return json.loads(path.read_text())
    out = fn(*fn_args)
    if path is not None and out is not None:
        _write_json(path, out)
    return out


def _epoch_caps(text: str) -> dict[str, int]:
    """``"umls/rescal=20,umls/conve=30"`` -> ``{"umls/rescal": 20, ...}``."""
    caps = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        key, _, value = item.partition("=")
        caps[key] = int(value)
    return caps


def _within_noise(ours: list[dict], theirs: list[dict]) -> bool:
    """Ours at least as good within noise: mean MRR >= PyKEEN's mean minus the larger s.d."""
    o_mean, o_sd = _mean_sd(ours, "mrr")
    p_mean, p_sd = _mean_sd(theirs, "mrr")
    return o_mean >= p_mean - max(o_sd, p_sd, 1e-9)


def quality(args: argparse.Namespace, models: list[str], seeds: list[int]) -> dict:
    """Filtered test metrics over seeds, ours and (optionally) PyKEEN; see the module docstring."""
    results: dict = {"threads": args.threads, "seeds": seeds, "runs": {}}
    sides = [s for s in args.sides.split(",") if s != "pykeen" or args.pykeen_python]
    caps = _epoch_caps(args.epoch_caps)
    header = (
        f"{'data':8} {'model':9} {'MRR':>13} {'H@1':>6} {'H@3':>6} {'H@10':>6} {'epochs':>7} "
        f"{'train s/ep':>10} {'fit s/ep':>9} {'eval s':>7}"
    )
    for data in args.datasets.split(","):
        folder = args.data / data
        print(header + ("   PyKEEN MRR  fit s/ep  ours/PyKEEN" if "pykeen" in sides else ""))
        for name in models:
            epochs = caps.get(f"{data}/{name}", args.epochs)
            ours, theirs = [], []
            for seed in seeds:  # both sides per seed, so a partial run has matched pairs
                if "ours" in sides:
                    key = f"{data}_{name}_e{epochs}_ours_s{seed}"
                    out = _cached(args.json_dir, key, run_ours, folder, name, seed, epochs)
                    ours.append(out)
                if "pykeen" in sides:
                    key = f"{data}_{name}_e{epochs}_pykeen_s{seed}"
                    out = _cached(
                        args.json_dir,
                        key,
                        run_pykeen,
                        args.pykeen_python,
                        folder,
                        name,
                        seed,
                        epochs,
                        args.threads,
                    )
                    if out is not None:
                        theirs.append(out)
            row: dict = {"epoch_budget": epochs}
            line = f"{data:8} {name:9}"
            if ours:
                row.update(_metric_stats(ours, ""))
                mrr, sd = row["mrr_mean"], row["mrr_sd"]
                row.update(
                    ours=ours,
                    train_s_per_epoch=statistics.median(r["train_s_per_epoch"] for r in ours),
                    fit_s_per_epoch=statistics.median(r["fit_s_per_epoch"] for r in ours),
                    eval_s=statistics.median(r["eval_s"] for r in ours),
                )
                line += (
                    f" {mrr:.3f}±{sd:.3f} {row['hits_at_1_mean']:6.3f} "
                    f"{row['hits_at_3_mean']:6.3f} {row['hits_at_10_mean']:6.3f} "
                    f"{statistics.median(r['epochs'] for r in ours):7.0f} "
                    f"{row['train_s_per_epoch']:10.3f} {row['fit_s_per_epoch']:9.3f} "
                    f"{row['eval_s']:7.3f}"
                )
            if theirs:
                row.update(_metric_stats(theirs, "pykeen_"))
                p_mrr, p_sd = row["pykeen_mrr_mean"], row["pykeen_mrr_sd"]
                row.update(
                    pykeen=theirs,
                    pykeen_fit_s_per_epoch=statistics.median(t["fit_s_per_epoch"] for t in theirs),
                    pykeen_eval_s=statistics.median(t["eval_s"] for t in theirs),
                    pykeen_epochs=statistics.median(t["epochs"] for t in theirs),
                )
                if ours:
                    row.update(
                        time_ratio=row["fit_s_per_epoch"] / row["pykeen_fit_s_per_epoch"],
                        eval_ratio=row["eval_s"] / row["pykeen_eval_s"],
                        at_least_as_good=_within_noise(ours, theirs),
                    )
                    line += (
                        f"   {p_mrr:.3f}±{p_sd:.3f} {row['pykeen_fit_s_per_epoch']:9.3f} "
                        f"{row['time_ratio']:11.2f}"
                    )
                line += (
                    f"\n{'':8} {'(PyKEEN)':9} {p_mrr:.3f}±{p_sd:.3f} "
                    f"{row['pykeen_hits_at_1_mean']:6.3f} {row['pykeen_hits_at_3_mean']:6.3f} "
                    f"{row['pykeen_hits_at_10_mean']:6.3f} {row['pykeen_epochs']:7.0f} "
                    f"{'':>10} {row['pykeen_fit_s_per_epoch']:9.3f} {row['pykeen_eval_s']:7.3f}"
                )
                if ours:
                    line += (
                        f"   eval ours/PyKEEN {row['eval_ratio']:.2f}; ours at least as good "
                        f"within noise: {'yes' if row['at_least_as_good'] else 'NO'}"
                    )
            print(line, flush=True)
            results["runs"][f"{data}/{name}"] = row
    umls = {k: v for k, v in results["runs"].items() if k.startswith("umls/") and "ours" in v}
    if umls:
        best = max(umls, key=lambda k: umls[k]["mrr_mean"])
        ok = umls[best]["mrr_mean"] >= UMLS_TARGET
        results["umls_best"] = {"run": best, "mrr": umls[best]["mrr_mean"], "target_met": ok}
        print(
            f"best UMLS model: {best} MRR {umls[best]['mrr_mean']:.3f} (target >= {UMLS_TARGET}: "
            f"{'met' if ok else 'NOT met'})"
        )
    return results


def equal_config(name: str, epochs: int, seed: int = 0) -> TrainingConfig:
    """The training config both libraries time in ``--equal-config`` mode.

    1-N models (tuned 1vsAll) switch to KvsAll + BCE with reciprocal relations, PyKEEN's LCWA
    (one example per unique (h, r), all true tails as multi-hot targets); sLCWA models keep
    their tuned sLCWA config. No validation, no early stopping.
    """
    overrides: dict = {"epochs": epochs, "eval_every": 0, "patience": None, "progress": False}
    if DEFAULTS[name].regime != "slcwa":
        overrides.update(regime="kvsall", loss="bce", reciprocal=True)
    return TrainingConfig.from_defaults(name, seed=seed, **overrides)


class _PyKEENWorker:
    """A ``_kg_pykeen.py --serve`` subprocess: one JSON spec in, one JSON line out."""

    def __init__(self, python: str, threads: int) -> None:
        env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
        self.proc = subprocess.Popen(
            [python, str(PYKEEN_DRIVER), "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )

    def __call__(self, spec: dict) -> dict:
        self.proc.stdin.write(json.dumps(spec) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the PyKEEN worker exited; run it by hand to see why")
        return json.loads(line)

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
        self.proc.stdout.close()


def _time_ours(folder: Path, name: str, epochs: int) -> dict:
    dataset = KGDataset.from_folder(folder)
    config = equal_config(name, epochs)
    model = build_model(name, dataset, config)
    trainer = Trainer(model, config).fit(dataset)
    return {
        "epoch_s": [h["seconds"] for h in trainer.history_],
        "train_triples": dataset.train.mapped_triples.size(0),
    }


def timing(args: argparse.Namespace, models: list[str]) -> dict:
    """Equal-configuration training time per epoch, ours vs PyKEEN (``--equal-config``)."""
    if not args.pykeen_python:
        raise SystemExit("--equal-config needs --pykeen-python PATH")
    worker = _PyKEENWorker(args.pykeen_python, args.threads)
    results: dict = {"threads": args.threads, "epochs": args.time_epochs, "runs": {}}
    print(
        f"{'data':8} {'model':9} {'regime':8} {'ours s/ep':>10} {'PyKEEN s/ep':>12} "
        f"{'ours/PyKEEN':>12} {'ours triples/s':>15} {'PyKEEN triples/s':>17}"
    )
    try:
        for data in args.datasets.split(","):
            folder = args.data / data
            for name in models:
                config = equal_config(name, args.time_epochs)
                spec = {**pykeen_spec(config, name, folder, 0, args.threads), "job": "time"}
                ours_s, theirs_s, triples, error = [], [], 0, None
                for _ in range(args.repeats):  # interleaved: ours, PyKEEN, ours, PyKEEN, ...
                    mine = _time_ours(folder, name, args.time_epochs)
                    ours_s += mine["epoch_s"]
                    triples = mine["train_triples"]
                    try:
                        theirs = worker(spec)
                    except (RuntimeError, OSError, json.JSONDecodeError) as err:
                        worker.close()  # a crashed worker is replaced for the next model
                        worker = _PyKEENWorker(args.pykeen_python, args.threads)
                        theirs = {"error": str(err)}
                    if "error" in theirs:
                        error = theirs["error"]
                        break
                    theirs_s += theirs["epoch_s"]
                row = {
                    "regime": config.regime,
                    "loss": config.resolved_loss(),
                    "ours_epoch_s": ours_s,
                    "pykeen_epoch_s": theirs_s,
                    "train_triples": triples,
                }
                if error:
                    row["pykeen_error"] = error
                    print(f"{data:8} {name:9} PyKEEN failed: {error}", flush=True)
                else:
                    best_ours, best_theirs = min(ours_s), min(theirs_s)
                    row.update(
                        ours_s_per_epoch=best_ours,
                        pykeen_s_per_epoch=best_theirs,
                        ratio=best_ours / best_theirs,
                        ours_triples_per_s=triples / best_ours,
                        pykeen_triples_per_s=triples / best_theirs,
                    )
                    print(
                        f"{data:8} {name:9} {config.regime:8} {best_ours:10.4f} "
                        f"{best_theirs:12.4f} {row['ratio']:12.2f} "
                        f"{row['ours_triples_per_s']:15.0f} {row['pykeen_triples_per_s']:17.0f}",
                        flush=True,
                    )
                results["runs"][f"{data}/{name}"] = row
    finally:
        worker.close()
    return results


def memory(args: argparse.Namespace, models: list[str]) -> dict:
    """Peak memory of evaluation vs training, each in a fresh process (``--memory``)."""
    results: dict = {"threads": args.threads, "epochs": args.memory_epochs, "runs": {}}
    print(
        f"{'data':8} {'model':9} {'train MiB':>10} {'eval MiB':>9} {'eval/train':>11}"
        + ("   PyKEEN train  eval  eval/train" if args.pykeen_python else "")
    )
    for data in args.datasets.split(","):
        folder = args.data / data
        for name in models:
            row: dict = {}
            base = {
                "folder": str(folder),
                "model": name,
                "threads": args.threads,
                "epochs": args.memory_epochs,
            }
            for phase in ("train", "eval"):
                spec = {**base, "phase": phase}
                cmd = [sys.executable, "-m", "benchmarks._kg_memory", json.dumps(spec)]
                row[f"ours_{phase}"] = _subprocess_json(cmd, args.threads, f"ours {name}")
            line = f"{data:8} {name:9}"
            if row["ours_train"] and row["ours_eval"]:
                t, e = row["ours_train"]["peak_mib"], row["ours_eval"]["peak_mib"]
                row["ratio"] = e / max(t, 1e-9)
                line += f" {t:10.1f} {e:9.1f} {row['ratio']:11.2f}"
            if args.pykeen_python:
                config = TrainingConfig.from_defaults(name, epochs=args.memory_epochs)
                spec = {**pykeen_spec(config, name, folder, 0, args.threads), "job": "memory"}
                for phase in ("train", "eval"):
                    cmd = [
                        args.pykeen_python,
                        str(PYKEEN_DRIVER),
                        json.dumps({**spec, "phase": phase}),
                    ]
                    row[f"pykeen_{phase}"] = _subprocess_json(cmd, args.threads, f"pykeen {name}")
                if row["pykeen_train"] and row["pykeen_eval"]:
                    t, e = row["pykeen_train"]["peak_mib"], row["pykeen_eval"]["peak_mib"]
                    row["pykeen_ratio"] = e / max(t, 1e-9)
                    line += f"   {t:12.1f} {e:5.1f} {row['pykeen_ratio']:10.2f}"
            print(line, flush=True)
            results["runs"][f"{data}/{name}"] = row
    return results


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of datasets")
    parser.add_argument("--datasets", default="nations,umls")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--epochs", type=int, default=None, help="max epochs (default: tuned)")
    parser.add_argument(
        "--epoch-caps",
        default="",
        help="per dataset/model max epochs, e.g. 'umls/rescal=20,umls/conve=30'",
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--pykeen-python", default=None, help="python of a PyKEEN environment")
    parser.add_argument(
        "--sides",
        default="ours,pykeen",
        help="quality: 'ours', 'pykeen' or both (PyKEEN needs --pykeen-python)",
    )
    parser.add_argument(
        "--json-dir",
        type=Path,
        default=None,
        help="quality mode: one JSON per run here; existing ones are reused",
    )
    parser.add_argument(
        "--equal-config",
        action="store_true",
        help="time both libraries per epoch at the same configuration",
    )
    parser.add_argument("--time-epochs", type=int, default=2, help="equal-config: epochs per run")
    parser.add_argument(
        "--repeats",
        type=int,
        default=2,
        help="equal-config: interleaved runs per side (best epoch of all)",
    )
    parser.add_argument(
        "--memory",
        action="store_true",
        help="peak memory of evaluation vs training, fresh process each",
    )
    parser.add_argument("--memory-epochs", type=int, default=2, help="memory: training epochs")
    parser.add_argument("--out", type=Path, default=None, help="also write the results as JSON")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    seeds = [int(s) for s in args.seeds.split(",")]
    models = [m.strip() for m in args.models.split(",")]
    mode = "equal-config" if args.equal_config else "memory" if args.memory else "quality"
    print(
        f"{mode}: torch {torch.__version__}, {args.threads} thread(s), {platform.machine()}, "
        f"PyKEEN: {args.pykeen_python or 'not run (pass --pykeen-python)'}"
    )
    if args.equal_config:
        results = timing(args, models)
    elif args.memory:
        results = memory(args, models)
    else:
        results = quality(args, models, seeds)
    if args.out:
        _write_json(args.out, results)
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
