"""sLCWA on a synthetic KG of a million entities: throughput and memory of the row-wise path.

A synthetic graph of ``--entities`` entities, ``--relations`` relations and ``--triples``
training triples is drawn with torch in a few seconds: heads and tails follow power-law
degrees (entity of popularity rank :math:`i` drawn with probability :math:`\\propto
(i + 1)^{-a}`, ``--zipf`` :math:`a` = 0.75; ranks assigned to ids by a random permutation),
relations uniformly; 1,000 valid and test triples come from the same law (not used: no
validation). :class:`kg.training.Trainer` trains ``--epochs`` epoch(s) of sLCWA with
PyTorch-BigGraph's batched negatives (``--chunk`` positives share ``--negatives`` uniform
entities) and the row-wise optimiser (``--optimizer``, default ``rowwise_adagrad``), which
updates only the rows a batch touches (:mod:`kg._sparse_optim`).

``--max-batches N`` (default 0: whole epochs) trains only the first ``N`` batches of each
epoch's shuffled order, for a bounded measurement at 10M triples on a loaded machine; the epoch
still draws the full permutation of the training triples and runs the trainer's end-of-epoch
checks (finiteness of the whole state, the probe), so its seconds slightly overstate the time of
``N`` steps. Throughput is then the triples of those ``N`` batches over the epoch's seconds.

Reported: training triples per second (the epoch's ``seconds``, and by the process's CPU time of the
epoch, which on a loaded machine excludes the wait for a core), the parameter bytes and the
optimiser's state bytes (the tensors the run's optimiser holds after training: Adam's and
SparseAdam's two moment tables, row-wise Adagrad's one float per row), the peak resident memory
during ``fit`` (exact: the kernel's high-water mark ``VmHWM``, reset just before the model is
built; where the reset is refused, a lower bound sampled every 5 ms) both in total and above the
resident memory just before the model was built (Python, torch, the dataset and the one-time
import of ``torch._dynamo`` by the first optimiser, reported as ``import_bytes``), the ratio of
that training memory to parameters plus optimiser state, and the memory per entity. The
machine's load average and torch's thread count are recorded.

Run: ``OMP_NUM_THREADS=1 .venv/bin/python -m benchmarks.bench_kg_large [--entities 1000000
--triples 10000000 --dim 128 --threads 1 --max-batches N --out FILE.json]``; quick point:
``--entities 100000 --triples 1000000``; the dense path for comparison: ``--optimizer adam
--chunk 0`` (per-positive negatives, ``--negatives`` of them for every positive).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import threading
import time
from typing import Any
from unittest import mock

import torch

from benchmarks.bench_kg_scale import _status_kib
from graphdata.atomic import write_text_atomic
from graphdata.triples import KGDataset
from graphdata.tripleset import TripleSet
from graphdata.vocabulary import Vocabulary
from kg import _epochs
from kg.distmult import DistMult
from kg.training import Trainer, TrainingConfig
from kg.transe import TransE

MODELS = {"distmult": DistMult, "transe": TransE}


def _rss() -> int:
    """Resident set size of this process in bytes (Linux ``/proc/self/statm``)."""
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _high_water_mark() -> int | None:
    """Peak resident set size of this process in bytes (``VmHWM``); None where unreadable."""
    kib = _status_kib(os.getpid(), "VmHWM")
    return None if kib is None else kib * 1024


class _PeakRSS:
    """Peak resident memory inside the block.

    Exact where Linux lets a process reset its high-water mark (``5`` written to
    ``/proc/self/clear_refs``, Linux >= 4.0): ``VmHWM`` read at the end. Otherwise the maximum of
    samples taken every ``interval`` seconds in a thread, a lower bound that can miss a
    transient shorter than the interval (or longer, when a loaded machine delays the sampler).
    """

    def __init__(self, interval: float = 0.005) -> None:
        self.interval, self.peak, self._stop = interval, _rss(), threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.method = "sampled every 5 ms (a lower bound)"
        self._exact = False

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _rss())
            time.sleep(self.interval)

    def __enter__(self) -> _PeakRSS:
        try:
            with open("/proc/self/clear_refs", "w") as handle:
                handle.write("5")
            self._exact = _high_water_mark() is not None
        except OSError:
            self._exact = False
        if self._exact:
            self.method = "VmHWM after a reset (exact)"
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss())
        hwm = _high_water_mark() if self._exact else None
        if hwm is not None:
            self.peak = max(self.peak, hwm)


def synthetic_kg(
    entities: int, relations: int, triples: int, *, zipf: float, seed: int
) -> KGDataset:
    """Power-law heads and tails, uniform relations (module docstring); vectorised torch."""
    gen = torch.Generator().manual_seed(seed)
    weights = torch.arange(1, entities + 1, dtype=torch.float64).pow_(-zipf)
    cdf = torch.cumsum(weights, 0)
    cdf /= cdf[-1].clone()
    ids = torch.randperm(entities, generator=gen)  # popularity rank -> entity id

    def endpoint(n: int) -> torch.Tensor:
        u = torch.rand(n, generator=gen, dtype=torch.float64)
        rank = torch.searchsorted(cdf, u).clamp_max_(entities - 1)
        return ids[rank]

    n = triples + 2000
    mapped = torch.stack(
        [endpoint(n), torch.randint(0, relations, (n,), generator=gen), endpoint(n)], dim=1
    )  # [N, 3]
    ents = Vocabulary([f"e{i}" for i in range(entities)], kind="entity")
    rels = Vocabulary([f"r{i}" for i in range(relations)], kind="relation")
    splits = [TripleSet(part, ents, rels) for part in mapped.split([triples, 1000, 1000])]
    return KGDataset(*splits, name=f"synthetic({entities}, {triples})")


def run(args: argparse.Namespace) -> dict[str, Any]:
    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    dataset = synthetic_kg(
        args.entities, args.relations, args.triples, zipf=args.zipf, seed=args.seed
    )
    generation = time.perf_counter() - started
    # The first torch optimiser imports torch._dynamo (about 73 MiB resident, once per process,
    # whatever the table size): import it before the baseline so that the training peak counts
    # the training's memory, not the import. Reported as "import_bytes".
    before_import = _rss()
    torch.optim.Adagrad([torch.nn.Parameter(torch.zeros(1))])
    base_rss = _rss()
    cfg = TrainingConfig(
        epochs=args.epochs,
        batch_size=args.batch_size,
        num_negatives=args.negatives,
        batched_negatives=args.chunk,
        side_per_positive=True,
        optimizer=args.optimizer,
        lr=args.lr,
        loss=args.loss,
        eval_every=0,
        progress=False,
        seed=args.seed,
    )
    epoch_cpu: list[float] = []
    trained: list[int] = []  # triples trained per epoch (fewer with --max-batches)
    optimizers: list[torch.optim.Optimizer] = []
    plain_epoch, plain_batches = _epochs.Run.epoch, _epochs.Run.batches

    def timed_epoch(run: _epochs.Run, bar: Any, epoch: int) -> float:
        # CPU time of the epoch: on a loaded machine wall time also counts the wait for a core.
        optimizers[:] = [run.optimizer]
        start = time.process_time()
        try:
            return plain_epoch(run, bar, epoch)
        finally:
            epoch_cpu.append(time.process_time() - start)

    def bounded_batches(run: _epochs.Run) -> list[torch.Tensor]:
        batches = plain_batches(run)
        if args.max_batches:
            batches = batches[: args.max_batches]
        trained.append(sum(b.numel() for b in batches))
        return batches

    with (
        mock.patch.object(_epochs.Run, "epoch", timed_epoch),
        mock.patch.object(_epochs.Run, "batches", bounded_batches),
        _PeakRSS() as peak,
    ):
        model = MODELS[args.model](dataset.num_entities, dataset.num_relations, args.dim)
        trainer = Trainer(model, cfg).fit(dataset)
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    optimizer_bytes = _optimizer_bytes(optimizers[0])
    epoch = trainer.history_[-1]
    training = peak.peak - base_rss
    import_bytes = base_rss - before_import
    result = {
        "benchmark": "bench_kg_large",
        "graph": {
            "entities": args.entities,
            "relations": args.relations,
            "train_triples": args.triples,
            "degrees": f"power law, zipf exponent {args.zipf} (heads and tails)",
            "generation_seconds": generation,
        },
        "config": {k: v for k, v in vars(args).items() if k != "out"},
        "model": repr(model),
        "triples_trained_per_epoch": trained[-1],
        "batches_per_epoch": -(-trained[-1] // args.batch_size),
        "epoch_seconds": epoch["seconds"],
        "triples_per_second": trained[-1] / epoch["seconds"],
        "epoch_cpu_seconds": epoch_cpu[-1],
        "triples_per_cpu_second": trained[-1] / epoch_cpu[-1],
        "losses": [h["loss"] for h in trainer.history_],
        "parameter_bytes": params,
        "optimizer_bytes": optimizer_bytes,
        "rss_before_model_bytes": base_rss,
        "import_bytes": import_bytes,
        "peak_rss_bytes": peak.peak,
        "peak_rss_method": peak.method,
        "training_peak_bytes": training,
        "training_peak_over_params_and_optimizer": training / (params + optimizer_bytes),
        "total_peak_over_params_and_optimizer": peak.peak / (params + optimizer_bytes),
        "training_bytes_per_entity": training / args.entities,
        "threads": torch.get_num_threads(),
        "load_average": os.getloadavg(),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "torch": torch.__version__,
    }
    return result


def _optimizer_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes of the tensors ``optimizer`` holds in its state (after training: lazily built too)."""
    return sum(
        t.numel() * t.element_size()
        for state in optimizer.state.values()
        for t in state.values()
        if isinstance(t, torch.Tensor)
    )


def add_graph_arguments(parser: argparse.ArgumentParser, *, entities: int, triples: int) -> None:
    """The synthetic graph's, the model's and the batch's options (shared with bench_kg_sharded)."""
    parser.add_argument("--entities", type=int, default=entities)
    parser.add_argument("--relations", type=int, default=1000)
    parser.add_argument("--triples", type=int, default=triples)
    parser.add_argument("--zipf", type=float, default=0.75)
    parser.add_argument("--model", choices=sorted(MODELS), default="distmult")
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=2500)
    parser.add_argument("--chunk", type=int, default=250, help="positives sharing negatives")
    parser.add_argument("--negatives", type=int, default=100, help="negatives per chunk")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_graph_arguments(parser, entities=1_000_000, triples=10_000_000)
    parser.add_argument("--optimizer", default="rowwise_adagrad")
    parser.add_argument("--loss", default="softplus")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument(
        "--max-batches",
        type=int,
        default=0,
        help="train only the first N batches of each epoch (0: whole epochs); see the docstring",
    )
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="also write the result here (JSON)")
    args = parser.parse_args()
    result = run(args)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        write_text_atomic(args.out, text + "\n")


if __name__ == "__main__":
    main()
