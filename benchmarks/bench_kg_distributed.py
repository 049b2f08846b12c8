"""Data-parallel sLCWA training: throughput of 1 process against W processes (kg.distributed).

Every side trains one epoch of the same model with the same global batch (``--batch-size``,
split ``B / W`` per rank) through :class:`kg.training.Trainer`, without validation, each
process with ``--threads`` torch threads (default 1: the machine's cores are the resource
being shared out). W > 1 runs under a gloo process group on 127.0.0.1 (torch.multiprocessing,
init_method file://), the path ``graphlib kg train --nproc W`` takes. Reported per side: the
epoch's optimisation time (``history_[0]["seconds"]``) and its CPU time per rank, training
triples per second by wall clock and by the slowest rank's CPU time (what one free core per
process would give; on a loaded machine the wall clock also counts waiting for a core), the
epoch loss and the trained parameters (equal across sides up to float rounding: the same global
batches, :mod:`kg.distributed`; the largest parameter difference is reported), and the bytes
each rank hands to collectives per step, counted by wrapping ``torch.distributed.all_reduce``
/ ``all_gather``: the dense gradients of every parameter, float32, plus the loss scalar (and
denominators when they vary), or, with a row-wise
optimiser (``--optimizer rowwise_adagrad``), the union-index all-reduce of the touched rows
(counts, row ids and the ``[|U|, d]`` block, :func:`kg.distributed.all_reduce_gradients`).
``--batched-negatives C`` trains with PyTorch-BigGraph's batched negatives (chunks of ``C``
positives share ``--num-negatives`` entities). ``--evaluate`` also ranks the test triples
(filtered, both sides) with each side's trained parameters in the parent process.

Per step, each rank's time is split into the gradient all-reduce (``all_reduce_gradients``,
including the wait for the slower rank), the optimiser step (``Run._step``) and the rest
(sampling, forward, backward: the part a rank's slice divides). A stated model, not a
measurement, projects the step time to ``W`` = 8 and 64 ranks from the ``W = 1`` compute and the
``W = 2`` communication: :math:`T_W = T_{\text{rest}}/W + T_{\text{opt}} + T_{\text{comm}}(W)`,
with :math:`T_{\text{comm}}(W) = T_{\text{comm}}(2) \\cdot 2 (W - 1)/W \\cdot b_W / b_2` (a
ring all-reduce moves :math:`2 (W-1)/W` times its payload; the sparse payload :math:`b_W` is the
global batch's touched rows, the same for every :math:`W`, plus :math:`W` id lists).

Data: FB15k-237 from ``../shared/datasets/kg/fb15k237`` (``--data``); when that folder is
absent, the synthetic family KG with 3,000 people (:func:`graphdata.synthetic.family_kg`).

Run: ``.venv/bin/python -m benchmarks.bench_kg_distributed [--world 1,2 --model transe
--batch-size 1024 --num-negatives 32 --dim 128 --threads 1 --optimizer rowwise_adagrad
--batched-negatives 256 --out FILE.json]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from graphdata.atomic import write_text_atomic
from graphdata.errors import UnknownLabelsDropped
from graphdata.synthetic import family_kg
from graphdata.triples import KGDataset
from kg import _epochs
from kg.distributed import leave_together
from kg.evaluation import evaluate
from kg.training import Trainer, TrainingConfig, build_model

FB15K237 = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "kg" / "fb15k237"


def _dataset(data: Path) -> tuple[str, KGDataset]:
    if (data / "train.txt").is_file():
        with warnings.catch_warnings():  # 37 valid/test triples with unseen labels: not used
            warnings.simplefilter("ignore", UnknownLabelsDropped)
            return data.name, KGDataset.from_folder(data, on_unknown="drop")
    return "family_kg(3000)", family_kg(3000, seed=0).dataset


def _worker(rank: int, world: int, init_file: str, spec: dict[str, Any], out: str) -> None:
    torch.set_num_threads(spec["threads"])
    if world > 1:
        dist.init_process_group(
            "gloo", init_method=f"file://{init_file}", rank=rank, world_size=world
        )
    with leave_together() if world > 1 else contextlib.nullcontext():
        _, dataset = _dataset(Path(spec["data"]))
        config = TrainingConfig.from_defaults(
            spec["model"],
            regime="slcwa",
            loss=spec["loss"],
            epochs=1,
            batch_size=spec["batch_size"],
            num_negatives=spec["num_negatives"],
            batched_negatives=spec["batched_negatives"],
            side_per_positive=bool(spec["batched_negatives"]),
            **({"optimizer": spec["optimizer"], "lr": spec["lr"]} if spec["optimizer"] else {}),
            reciprocal=False,
            eval_every=0,
            progress=False,
            seed=0,
        )
        model = build_model(spec["model"], dataset, config, dim=spec["dim"])
        epoch_cpu: list[float] = []
        plain_epoch = _epochs.Run.epoch

        def timed_epoch(run: _epochs.Run, bar: Any, epoch: int) -> float:
            # CPU time of the epoch alone: on a loaded machine wall time also counts the wait
            # for a core, while CPU time measures the work each rank does.
            start = time.process_time()
            try:
                return plain_epoch(run, bar, epoch)
            finally:
                epoch_cpu.append(time.process_time() - start)

        sent = [0]  # bytes this rank hands to collectives during the epoch
        spent = {"comm": 0.0, "opt": 0.0}
        plain_reduce, plain_gather = dist.all_reduce, dist.all_gather

        def counted_reduce(tensor: torch.Tensor, *a: Any, **k: Any) -> Any:
            sent[0] += tensor.numel() * tensor.element_size()
            return plain_reduce(tensor, *a, **k)

        def counted_gather(outputs: list, tensor: torch.Tensor, *a: Any, **k: Any) -> Any:
            sent[0] += tensor.numel() * tensor.element_size()
            return plain_gather(outputs, tensor, *a, **k)

        plain_grads, plain_step = _epochs.all_reduce_gradients, _epochs.Run._step

        def timed_grads(*a: Any, **k: Any) -> Any:
            start = time.perf_counter()
            try:
                return plain_grads(*a, **k)
            finally:
                spent["comm"] += time.perf_counter() - start

        def timed_step(run: _epochs.Run) -> None:
            start = time.perf_counter()
            try:
                plain_step(run)
            finally:
                spent["opt"] += time.perf_counter() - start

        # Patched for the life of this worker process (a spawned child of run_side).
        for owner, name, value in (
            (_epochs.Run, "epoch", timed_epoch),
            (dist, "all_reduce", counted_reduce),
            (dist, "all_gather", counted_gather),
            (_epochs, "all_reduce_gradients", timed_grads),
            (_epochs.Run, "_step", timed_step),
        ):
            setattr(owner, name, value)
        if world > 1:
            dist.barrier()  # start the clocks together
        wall, cpu = time.perf_counter(), time.process_time()
        trainer = Trainer(model, config).fit(dataset)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        steps = -(-dataset.train.mapped_triples.size(0) // spec["batch_size"])
        record = {
            "rank": rank,
            "epoch_s": trainer.history_[0]["seconds"],
            "epoch_cpu_s": epoch_cpu[0],
            "fit_wall_s": wall,
            "fit_cpu_s": cpu,
            "loss": trainer.history_[0]["loss"],
            "steps": steps,
            "allreduce_bytes_per_step": sent[0] / steps,
            "comm_s_per_step": spent["comm"] / steps,
            "opt_s_per_step": spent["opt"] / steps,
            "dense_gradient_bytes": sum(
                p.numel() * p.element_size() for p in model.parameters() if p.requires_grad
            ),
        }
        Path(out, f"w{world}_r{rank}.json").write_text(json.dumps(record))
        if rank == 0:  # the trained parameters, compared across sides in main()
            torch.save(model.state_dict(), Path(out, f"w{world}_params.pt"))


def run_side(world: int, spec: dict[str, Any]) -> dict[str, Any]:
    """Train one epoch on ``world`` processes; rank 0's numbers (and the slowest rank's time)."""
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(_worker, args=(world, f"{tmp}/init", spec, tmp), nprocs=world, join=True)
        ranks = [json.loads(Path(tmp, f"w{world}_r{r}.json").read_text()) for r in range(world)]
        params = torch.load(Path(tmp, f"w{world}_params.pt"), weights_only=True)
    first = ranks[0]
    epoch_s = max(r["epoch_s"] for r in ranks)
    return {
        "world_size": world,
        "threads_per_process": spec["threads"],
        "epoch_s": epoch_s,
        "fit_wall_s": max(r["fit_wall_s"] for r in ranks),
        "fit_cpu_s_per_rank": [r["fit_cpu_s"] for r in ranks],
        "epoch_cpu_s_per_rank": [r["epoch_cpu_s"] for r in ranks],
        "triples_per_s": spec["num_train"] / epoch_s,
        # one core per process: the epoch takes the slowest rank's CPU time
        "triples_per_cpu_s": spec["num_train"] / max(r["epoch_cpu_s"] for r in ranks),
        "loss": first["loss"],
        "steps": first["steps"],
        "allreduce_bytes_per_step": first["allreduce_bytes_per_step"],
        "dense_gradient_bytes": first["dense_gradient_bytes"],
        "comm_s_per_step": max(r["comm_s_per_step"] for r in ranks),
        "opt_s_per_step": max(r["opt_s_per_step"] for r in ranks),
        "step_s": epoch_s / first["steps"],
        "params": params,  # popped by main() after the comparison
    }


def _param_diff(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> tuple[float, float]:
    """Largest absolute entry difference of two state dicts, and it over the largest |entry|."""
    diff = max(float((a[k].double() - b[k].double()).abs().max()) for k in a)
    scale = max(float(a[k].double().abs().max()) for k in a)
    return diff, diff / max(scale, 1e-300)


def _test_metrics(
    name: str, dataset: KGDataset, dim: int, params: dict[str, torch.Tensor]
) -> dict[str, float]:
    """Filtered test MRR and Hits@10 (both-sided, realistic ranks) of trained ``params``."""
    config = TrainingConfig.from_defaults(name, regime="slcwa", reciprocal=False)
    model = build_model(name, dataset, config, dim=dim)
    model.load_state_dict(params)
    model.eval()
    metrics = evaluate(model, dataset.test.mapped_triples, dataset.filter_index())
    return {"mrr": metrics.mrr, "hits@10": metrics.hits_at(10)}


def scaling_model(base: dict[str, Any], two: dict[str, Any], worlds: list[int]) -> dict:
    """Projected step time and speed-up at ``worlds`` ranks (module docstring; a model)."""
    rest = base["step_s"] - base["opt_s_per_step"]  # sampling, forward, backward at W = 1
    comm2, payload2 = two["comm_s_per_step"], two["allreduce_bytes_per_step"]
    out = {}
    for w in worlds:
        comm = comm2 * (2 * (w - 1) / w) / (2 * (2 - 1) / 2)
        step = rest / w + base["opt_s_per_step"] + comm
        out[str(w)] = {
            "step_s": step,
            "speedup": base["step_s"] / step,
            "comm_s": comm,
            "payload_bytes": payload2,
        }
    return out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=FB15K237, help="folder with train/valid/test")
    parser.add_argument("--world", default="1,2", help="process counts to compare (first = base)")
    parser.add_argument("--model", default="transe", help="a key of kg.models.MODELS")
    parser.add_argument("--loss", default="margin", help="an sLCWA loss")
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=1024, help="global batch")
    parser.add_argument("--num-negatives", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1, help="torch threads per process")
    parser.add_argument("--optimizer", default=None, help="default: the model's tuned one")
    parser.add_argument("--lr", type=float, default=0.1, help="with --optimizer")
    parser.add_argument("--batched-negatives", type=int, default=0, help="chunk size C, 0: off")
    parser.add_argument(
        "--evaluate",
        action="store_true",
        help="also evaluate each side's trained parameters (filtered test MRR, Hits@10)",
    )
    parser.add_argument("--out", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    name, dataset = _dataset(args.data)
    worlds = [int(w) for w in args.world.split(",")]
    spec = {
        "data": str(args.data),
        "model": args.model,
        "loss": args.loss,
        "dim": args.dim,
        "batch_size": args.batch_size,
        "num_negatives": args.num_negatives,
        "threads": args.threads,
        "optimizer": args.optimizer,
        "lr": args.lr,
        "batched_negatives": args.batched_negatives,
        "num_train": int(dataset.train.mapped_triples.size(0)),
    }
    print(
        f"{name}: {dataset.num_entities} entities, {spec['num_train']} training triples; "
        f"{args.model} dim {args.dim}, sLCWA {args.loss}, global batch {args.batch_size}, "
        f"{args.num_negatives} negatives (chunks of {args.batched_negatives or 'none'}), "
        f"optimizer {args.optimizer or 'tuned default'}; {args.threads} thread(s) per process; "
        f"{os.cpu_count()} CPUs (loadavg {os.getloadavg()[0]:.1f} at start)"
    )
    sides = []
    for world in worlds:
        side = run_side(world, spec)
        sides.append(side)
        print(
            f"  W={world}: epoch {side['epoch_s']:.2f} s wall, "
            f"{max(side['epoch_cpu_s_per_rank']):.2f} s CPU (slowest rank), "
            f"{side['triples_per_s']:,.0f} triples/s, "
            f"loss {side['loss']:.6f}, all-reduce {side['allreduce_bytes_per_step'] / 2**20:.2f} "
            f"MiB/step over {side['steps']} steps (dense gradients "
            f"{side['dense_gradient_bytes'] / 2**20:.2f} MiB); per step {side['step_s'] * 1e3:.1f}"
            f" ms, all-reduce {side['comm_s_per_step'] * 1e3:.1f} ms, optimiser "
            f"{side['opt_s_per_step'] * 1e3:.1f} ms"
        )
    base = sides[0]
    for side in sides[1:]:
        side["speedup"] = base["epoch_s"] / side["epoch_s"]
        side["cpu_speedup"] = side["triples_per_cpu_s"] / base["triples_per_cpu_s"]
        side["loss_rel_diff"] = abs(side["loss"] - base["loss"]) / abs(base["loss"])
        side["param_max_abs_diff"], side["param_max_rel_diff"] = _param_diff(
            base["params"], side["params"]
        )
        print(
            f"  W={side['world_size']} vs W={base['world_size']}: {side['speedup']:.2f}x "
            f"wall-clock throughput, {side['cpu_speedup']:.2f}x by CPU time (one core per "
            f"process), epoch loss relative difference {side['loss_rel_diff']:.1e}, trained "
            f"parameters max |diff| {side['param_max_abs_diff']:.1e} (relative to the largest "
            f"|entry| {side['param_max_rel_diff']:.1e})"
        )
    if args.evaluate:
        torch.set_num_threads(args.threads)
        for side in sides:
            side["test"] = _test_metrics(args.model, dataset, args.dim, side["params"])
            print(
                f"  W={side['world_size']}: filtered test MRR {side['test']['mrr']:.6f}, "
                f"Hits@10 {side['test']['hits@10']:.6f}"
            )
    for side in sides:
        del side["params"]
    projection = None
    if len(sides) > 1 and sides[0]["world_size"] == 1 and sides[1]["world_size"] == 2:
        projection = scaling_model(sides[0], sides[1], [2, 8, 64])
        for w, p in projection.items():
            print(
                f"  model W={w}: {p['step_s'] * 1e3:.1f} ms/step, {p['speedup']:.2f}x "
                f"(communication {p['comm_s'] * 1e3:.1f} ms)"
            )
    result = {
        "dataset": name,
        "projection": projection,
        "spec": spec,
        "sides": sides,
        "hardware": {
            "machine": platform.machine(),
            "processor": platform.processor(),
            "cpus": os.cpu_count(),
            "loadavg_end": os.getloadavg()[0],
            "torch": torch.__version__,
        },
    }
    if args.out is not None:
        write_text_atomic(args.out, json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
