r"""Sharded entity table (kg.sharded) against the replicated one (kg.distributed): bytes, memory.

A synthetic power-law KG (:func:`benchmarks.bench_kg_large.synthetic_kg`: ``--entities``
entities, ``--relations`` relations, ``--triples`` training triples, zipf exponent ``--zipf``)
is trained by ``--world`` gloo processes on 127.0.0.1 (torch.multiprocessing, init_method
file://), each with ``--threads`` torch threads, with sLCWA, PyTorch-BigGraph's batched
negatives (``--chunk`` positives share ``--negatives`` entities) and row-wise Adagrad, for
``--steps`` optimiser steps of the first epoch (``kg._epochs.Run.batches`` truncated, as
``bench_kg_large --max-batches`` does), two ways:

* ``sharded``: :func:`kg.sharded.train_sharded` on a :class:`kg.sharded.ShardedTable` built
  with :meth:`~kg.sharded.ShardedTable.build` (rank :math:`w` allocates only its
  :math:`E/W` rows and their accumulators);
* ``replicated``: :class:`kg.training.Trainer` under the same process group (every rank holds
  the whole table and optimiser state; the union-index all-reduce of the touched rows,
  :func:`kg.distributed.all_reduce_gradients` with ``sparse=True``).

Measured per rank: the bytes handed to each collective (``torch.distributed`` calls wrapped
and counted: element count times dtype size; for the sharded side also by purpose,
:class:`kg.sharded.CommStats`), the wall time inside collectives (including the wait for the
other rank) and outside them (compute), training triples per second (the steps' triples over
their wall time), each rank's CPU seconds of building and training (on a loaded machine the
wall clock also counts the wait for a core), and the peak resident memory during training
(``VmHWM`` after a reset, ``bench_kg_large._PeakRSS``) above the memory before the model was
built (Python, torch and the dataset), next to the rank's parameter and optimiser-state bytes.
The machine's load average is recorded at the start and end of each side.

Modelled, not measured: the per-step communication and step time at ``--project`` ranks with
the same global batch. A ring moves, per rank, :math:`2 (W-1)/W \cdot n` bytes for an
``all_reduce`` of :math:`n` bytes in :math:`2 (W-1)` hops and :math:`(W-1) c` bytes for an
``all_gather`` / ``reduce_scatter`` of :math:`c`-byte chunks in :math:`W-1` hops, so

.. math::
    T_{comm}(W) = \sum_{c} \bigl(\text{hops}_c(W)\, \alpha + \text{sent}_c(W) / \beta\bigr),
    \qquad T_W = T_{compute}(2) \cdot 2 / W + T_{comm}(W),

with the measured union :math:`|\mathcal{U}|` (a property of the global batch, the same for
every :math:`W`), runs :math:`m = |\mathcal{U}| / W` (entity ids are a random permutation of
popularity, so the runs are balanced), the compute of :math:`W = 2` divided among the ranks
(optimistic: the draws and the union are replicated work) and the stated bandwidth
:math:`\beta` = ``--bandwidth`` (default 12.5 GB/s: a 100 Gb/s Ethernet or InfiniBand NIC,
a common cluster link, per direction) and latency :math:`\alpha` = ``--latency`` per hop
(default 10 us: RDMA is a few us, kernel TCP tens). The replicated side is modelled the same
way: the ``all_reduce`` of the ``[|U| + |R_B|, d]`` block, the loss and :math:`D_t`
``all_reduce`` calls, and the ``all_gather`` calls of each rank's row counts and of the ids of
the rows its slice touched (int64; the measured ones of :math:`W = 2`, shrunk by
:math:`2 / W` with the slice).

Run: ``OMP_NUM_THREADS=1 .venv/bin/python -m benchmarks.bench_kg_sharded [--entities 200000
--triples 1000000 --dim 128 --steps 100 --out FILE.json]``; a quick check: ``--entities 5000
--triples 20000 --steps 5``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any
from unittest import mock

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from benchmarks.bench_kg_large import MODELS, _PeakRSS, _rss, add_graph_arguments, synthetic_kg
from graphdata.atomic import write_text_atomic
from kg import _epochs
from kg.distributed import leave_together
from kg.sharded import ShardedTable, train_sharded
from kg.training import Trainer, TrainingConfig

#: Collectives counted, with the hops of a ring of W ranks (per call).
_RING_HOPS = {"all_reduce": 2, "all_gather": 1, "reduce_scatter": 1, "broadcast": 1}


def _config(spec: dict[str, Any]) -> TrainingConfig:
    return TrainingConfig(
        epochs=1,
        batch_size=spec["batch_size"],
        num_negatives=spec["negatives"],
        batched_negatives=spec["chunk"],
        side_per_positive=True,
        optimizer="rowwise_adagrad",
        lr=0.1,
        loss="softplus",
        eval_every=0,
        progress=False,
        seed=0,
    )


class _Counted:
    """Wraps ``torch.distributed`` collectives: bytes handed in and seconds spent, per op."""

    def __init__(self) -> None:
        self.bytes: dict[str, int] = {}
        self.int_bytes: dict[str, int] = {}  # of which integer tensors (row ids, counts)
        self.seconds = 0.0
        self.active = False

    def wrap(self, name: str, fn: Any) -> Any:
        def counted(*args: Any, **kwargs: Any) -> Any:
            tensors = [a for a in args if isinstance(a, torch.Tensor)]
            lists = [a for a in args if isinstance(a, list)]
            # The buffer: the reduced tensor, the W gathered chunks, the W scattered inputs.
            if name == "all_gather":
                tensor = args[1]
                size = tensor.numel() * tensor.element_size() * len(args[0])
            elif name == "reduce_scatter":
                size = sum(t.numel() * t.element_size() for t in lists[0])
                tensor = lists[0][0]
            else:
                tensor = tensors[0]
                size = tensor.numel() * tensor.element_size()
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                if self.active:
                    self.seconds += time.perf_counter() - started
                    self.bytes[name] = self.bytes.get(name, 0) + size
                    if not tensor.is_floating_point():
                        self.int_bytes[name] = self.int_bytes.get(name, 0) + size

        return counted


def _worker(rank: int, world: int, init_file: str, spec: dict[str, Any], out: str) -> None:
    torch.set_num_threads(spec["threads"])
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    with leave_together():
        dataset = synthetic_kg(
            spec["entities"], spec["relations"], spec["triples"], zipf=spec["zipf"], seed=0
        )
        config = _config(spec)
        counter = _Counted()
        plain_batches = _epochs.Run.batches

        plain_epoch = _epochs.Run.epoch
        epoch_seconds: list[float] = []

        taken: list[int] = []  # steps of each epoch

        def bounded(run: _epochs.Run) -> list[torch.Tensor]:
            batches = plain_batches(run)[: spec["steps"]]
            taken.append(len(batches))
            return batches

        def timed_epoch(run: _epochs.Run, bar: Any, epoch: int) -> float:
            # The Trainer's steps alone, without its end-of-epoch checks of the whole table.
            started = time.perf_counter()
            try:
                return plain_epoch(run, bar, epoch)
            finally:
                epoch_seconds.append(time.perf_counter() - started)

        patches = [
            mock.patch.object(_epochs.Run, "batches", bounded),
            mock.patch.object(_epochs.Run, "epoch", timed_epoch),
        ]
        for name in _RING_HOPS:
            patches.append(mock.patch.object(dist, name, counter.wrap(name, getattr(dist, name))))
        cls = MODELS[spec["model"]]
        base = _rss()
        load = os.getloadavg()
        for patch in patches:
            patch.start()
        cpu = time.process_time()
        try:
            with _PeakRSS() as peak:
                if spec["side"] == "sharded":
                    table = ShardedTable.build(
                        cls, dataset.num_entities, dataset.num_relations, spec["dim"], seed=0
                    )
                    model = table.model
                    dist.barrier()  # start the clocks together (the first collective would wait)
                    counter.active = True
                    fit = train_sharded(table, dataset, config)
                    counter.active = False
                    seconds, steps, comm = fit.seconds, fit.steps, fit.comm
                    # row-wise Adagrad: one float32 per owned entity row and per relation row
                    optimizer_bytes = (table.stop - table.start + dataset.num_relations) * 4
                else:
                    model = cls(dataset.num_entities, dataset.num_relations, spec["dim"])
                    dist.barrier()
                    counter.active = True
                    Trainer(model, config).fit(dataset)
                    counter.active = False
                    seconds, steps, comm = epoch_seconds[0], taken[0], None
                    optimizer_bytes = dataset.num_entities * 4 + dataset.num_relations * 4
        finally:
            for patch in patches:
                patch.stop()
        cpu = time.process_time() - cpu  # building and training (the waits cost no CPU)
        params = sum(p.numel() * p.element_size() for p in model.parameters())
        record = {
            "rank": rank,
            "cpu_seconds_build_and_train": cpu,
            "steps": steps,
            "seconds": seconds,
            "comm_seconds": counter.seconds,
            "collective_bytes": counter.bytes,
            "collective_int_bytes": counter.int_bytes,
            "parameter_bytes": params,
            "optimizer_bytes": optimizer_bytes,
            "rss_before_model_bytes": base,
            "peak_rss_bytes": peak.peak,
            "training_peak_bytes": peak.peak - base,
            "peak_rss_method": peak.method,
            "load_average": [load, os.getloadavg()],
        }
        if comm is not None:
            record["comm_by_purpose_sent_per_step"] = comm.per_step()
            record["comm_by_purpose_buffer_bytes"] = comm.buffer_bytes
            record["union_rows_mean"] = sum(comm.union_rows) / max(len(comm.union_rows), 1)
            record["owned_rows_mean"] = sum(comm.owned_rows) / max(len(comm.owned_rows), 1)
            record["relation_rows_mean"] = (
                comm.buffer_bytes["relation_gradient"] / 4 / max(comm.steps, 1) - 1
            ) / spec["dim"]
        Path(out, f"{spec['side']}_r{rank}.json").write_text(json.dumps(record))


def run_side(side: str, spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Train ``spec['steps']`` steps on ``spec['world']`` processes; every rank's record."""
    spec = {**spec, "side": side}
    with tempfile.TemporaryDirectory() as tmp:
        world = spec["world"]
        mp.spawn(_worker, args=(world, f"{tmp}/init", spec, tmp), nprocs=world, join=True)
        return [json.loads(Path(tmp, f"{side}_r{r}.json").read_text()) for r in range(world)]


def projection(
    sharded: dict[str, Any], replicated: dict[str, Any], spec: dict[str, Any]
) -> dict[str, Any]:
    """Modelled bytes and step time at ``spec['project']`` ranks (module docstring)."""
    d, f, w2 = spec["dim"], 4, spec["world"]
    beta, alpha = spec["bandwidth"], spec["latency"]
    steps = sharded["steps"]
    union, rel = sharded["union_rows_mean"], sharded["relation_rows_mean"]
    compute2 = (sharded["seconds"] - sharded["comm_seconds"]) / steps
    compute2_rep = (replicated["seconds"] - replicated["comm_seconds"]) / steps
    ids2 = replicated["collective_int_bytes"].get("all_gather", 0) / steps  # W chunks of ids
    out: dict[str, Any] = {}
    for w in [w2, *spec["project"]]:
        ring = 2 * (w - 1) / w
        # Sharded: fetch all_gather + gradient reduce_scatter of runs m = |U| / W (each sends
        # (W - 1) m d f), relation rows and the loss all_reduce, the D_t all_reduce (2 float64).
        fetch = (w - 1) * (union / w) * d * f
        relation = ring * (rel * d + 1) * f
        denominators = ring * 16
        sharded_bytes = 2 * fetch + relation + denominators
        sharded_hops = 2 * (w - 1) + 2 * 2 * (w - 1)
        # Replicated: counts and ids all_gathers ((W - 1) chunks each; a rank's ids shrink as
        # 2 / W), the [|U| + |R_B|, d] all_reduce, the loss and D_t all_reduces.
        id_chunk = ids2 / w2 * (2 / w)
        replicated_bytes = (w - 1) * id_chunk + ring * ((union + rel) * d * f + 4 + 16)
        replicated_hops = 2 * (w - 1) + 3 * 2 * (w - 1)
        t_sharded = sharded_hops * alpha + sharded_bytes / beta
        t_replicated = replicated_hops * alpha + replicated_bytes / beta
        out[str(w)] = {
            "sharded_sent_bytes_per_step": sharded_bytes,
            "replicated_sent_bytes_per_step": replicated_bytes,
            "sharded_comm_s": t_sharded,
            "replicated_comm_s": t_replicated,
            "sharded_step_s": compute2 * w2 / w + t_sharded,
            "replicated_step_s": compute2_rep * w2 / w + t_replicated,
            "entity_rows_per_rank": spec["entities"] / w,
            "entity_table_bytes_per_rank": spec["entities"] / w * d * f,
        }
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_graph_arguments(parser, entities=200_000, triples=1_000_000)
    parser.add_argument("--steps", type=int, default=100, help="optimiser steps per side")
    parser.add_argument("--world", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--project", default="8,64", help="rank counts of the model")
    parser.add_argument("--bandwidth", type=float, default=12.5e9, help="bytes/s, model only")
    parser.add_argument("--latency", type=float, default=10e-6, help="s per hop, model only")
    parser.add_argument("--out", default=None, help="also write the result here (JSON)")
    args = parser.parse_args(argv)
    spec = {k: v for k, v in vars(args).items() if k != "out"}
    spec["project"] = [int(w) for w in args.project.split(",")]
    started = time.perf_counter()
    sides = {side: run_side(side, spec) for side in ("sharded", "replicated")}
    result: dict[str, Any] = {"benchmark": "bench_kg_sharded", "config": spec}
    for side, ranks in sides.items():
        seconds = max(r["seconds"] for r in ranks)
        result[side] = {
            "ranks": ranks,
            "triples_per_s": ranks[0]["steps"] * args.batch_size / seconds,
            "step_s": seconds / ranks[0]["steps"],
            "comm_s_per_step": max(r["comm_seconds"] for r in ranks) / ranks[0]["steps"],
            "collective_bytes_per_step": {
                k: v / ranks[0]["steps"] for k, v in ranks[0]["collective_bytes"].items()
            },
            "training_peak_bytes_per_rank": [r["training_peak_bytes"] for r in ranks],
            "parameter_bytes_per_rank": [r["parameter_bytes"] for r in ranks],
        }
    result["model"] = {
        "bandwidth_bytes_per_s": args.bandwidth,
        "latency_s_per_hop": args.latency,
        "worlds": projection(sides["sharded"][0], sides["replicated"][0], spec),
    }
    result["wall_s"] = time.perf_counter() - started
    result["machine"] = {"cpus": os.cpu_count(), "platform": platform.platform()}
    result["torch"] = torch.__version__
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        write_text_atomic(args.out, text + "\n")
    return result


if __name__ == "__main__":
    main()
