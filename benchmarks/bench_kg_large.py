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

Reported: training triples per second (the epoch's ``seconds``, and by the process's CPU time of the
epoch, which on a loaded machine excludes the wait for a core), the parameter bytes and the
optimiser's state bytes, the peak resident memory during ``fit`` (sampled every 5 ms from
``/proc/self/statm``) both in total and above the resident memory just before the model was
built (Python, torch and the dataset), the ratio of that training memory to parameters plus
optimiser rows, and the memory per entity. The machine's load average and torch's thread count
are recorded.

Run: ``OMP_NUM_THREADS=1 .venv/bin/python -m benchmarks.bench_kg_large [--entities 1000000
--triples 10000000 --dim 128 --threads 1 --out FILE.json]``; quick point: ``--entities 100000
--triples 1000000``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import threading
import time
from typing import Any

import torch

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


class _PeakRSS:
    """Sample the resident memory every ``interval`` seconds in a thread; keep the maximum."""

    def __init__(self, interval: float = 0.005) -> None:
        self.interval, self.peak, self._stop = interval, _rss(), threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _rss())
            time.sleep(self.interval)

    def __enter__(self) -> _PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss())


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
    plain_epoch = _epochs.Run.epoch

    def timed_epoch(run: _epochs.Run, bar: Any, epoch: int) -> float:
        # CPU time of the epoch: on a loaded machine wall time also counts the wait for a core.
        start = time.process_time()
        try:
            return plain_epoch(run, bar, epoch)
        finally:
            epoch_cpu.append(time.process_time() - start)

    _epochs.Run.epoch = timed_epoch  # type: ignore[method-assign]
    with _PeakRSS() as peak:
        model = MODELS[args.model](dataset.num_entities, dataset.num_relations, args.dim)
        trainer = Trainer(model, cfg).fit(dataset)
    _epochs.Run.epoch = plain_epoch  # type: ignore[method-assign]
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    # The optimiser's state of the last run: RowwiseAdagrad's row sums, SparseAdam's moments.
    optimizer_bytes = _optimizer_bytes(model, cfg)
    epoch = trainer.history_[-1]
    training = peak.peak - base_rss
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
        "epoch_seconds": epoch["seconds"],
        "triples_per_second": args.triples / epoch["seconds"],
        "epoch_cpu_seconds": epoch_cpu[-1],
        "triples_per_cpu_second": args.triples / epoch_cpu[-1],
        "losses": [h["loss"] for h in trainer.history_],
        "parameter_bytes": params,
        "optimizer_bytes": optimizer_bytes,
        "rss_before_model_bytes": base_rss,
        "peak_rss_bytes": peak.peak,
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


def _optimizer_bytes(model: torch.nn.Module, cfg: TrainingConfig) -> int:
    """Bytes of optimiser state the config's optimiser keeps for ``model`` (built afresh)."""
    from kg.training import _make_optimizer

    params = list(model.parameters())
    opt = _make_optimizer(cfg.optimizer, params, cfg.lr)
    if cfg.optimizer == "sparse_adam":
        return 2 * sum(p.numel() * p.element_size() for p in params)  # exp_avg, exp_avg_sq
    return sum(
        t.numel() * t.element_size()
        for state in opt.state.values()
        for t in state.values()
        if isinstance(t, torch.Tensor)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=1_000_000)
    parser.add_argument("--relations", type=int, default=1000)
    parser.add_argument("--triples", type=int, default=10_000_000)
    parser.add_argument("--zipf", type=float, default=0.75)
    parser.add_argument("--model", choices=sorted(MODELS), default="distmult")
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=2500)
    parser.add_argument("--chunk", type=int, default=250, help="positives sharing negatives")
    parser.add_argument("--negatives", type=int, default=100, help="negatives per chunk")
    parser.add_argument("--optimizer", default="rowwise_adagrad")
    parser.add_argument("--loss", default="softplus")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--epochs", type=int, default=1)
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
