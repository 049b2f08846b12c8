"""Run every benchmark side by side with its anchor: ``python -m benchmarks.run [name ...]``.

Each benchmark module has ``main(argv=None) -> dict``; the collected numbers are written to
``benchmarks/out/results.json`` with the hardware and wall time, and the human-readable record
of the latest run lives in ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import importlib
import json
import os
import platform
import sys
import time
from pathlib import Path

import torch

from graphdata.atomic import write_text_atomic

#: Benchmark name -> module; each module's ``main()`` prints ratios and returns its numbers.
BENCHMARKS = {
    "paths": "benchmarks.bench_paths",
    "filter_index": "benchmarks.bench_filter_index",
    "knn": "benchmarks.bench_knn",
    "kg_eval": "benchmarks.bench_kg_eval",
    "kg_train": "benchmarks.bench_kg_train",
    "kg_scale": "benchmarks.bench_kg_scale",
    "homomorphism": "benchmarks.bench_homomorphism",
    "cutnorm": "benchmarks.bench_cutnorm",
    "iwn": "benchmarks.bench_iwn",
    "explain": "benchmarks.bench_explain",
    "celcomen": "benchmarks.bench_celcomen",
    "celcomen_counts": "benchmarks.bench_celcomen_counts",
    "counterfactual": "benchmarks.bench_counterfactual",
    "kg_distributed": "benchmarks.bench_kg_distributed",
    "imports": "benchmarks.bench_imports",
}


#: Arguments ``make bench`` passes, so that the whole run takes well under an hour on a 2-core
#: CPU; run a module directly for the full configuration (e.g. all models, 3 seeds).
ARGS: dict[str, list[str]] = {
    "kg_distributed": ["--batch-size", "4096"],
    "celcomen_counts": ["--genes", "10,20", "--cells", "2000", "--seeds", "2"],
    "counterfactual": ["--genes", "10", "--seeds", "1", "--cells", "1000"],
    "kg_train": ["--models", "transe,distmult,complex,rotate", "--seeds", "0", "--epochs", "50"],
    # FB15k-237: the epoch table of four models from 20 batches (at most 20 s a side), the
    # flops table, ComplEx's time to quality in 10 minutes a side (concurrent; 1,000 seeded
    # validation triples: PyKEEN's RotatE ranks 17.5k in ~30 min). About 25 minutes; the
    # memory part (PyKEEN's distance-model evaluations take minutes each) only when run directly.
    "kg_scale": [
        "--parts",
        "epoch,flops,quality",
        "--models",
        "transe,distmult,complex,rotate",
        "--max-batches",
        "20",
        "--max-batch-s",
        "20",
        "--repeats",
        "1",
        "--quality-model",
        "complex",
        "--budget-min",
        "10",
        "--valid-triples",
        "1000",
    ],
}


def main(argv: list[str] | None = None) -> int:
    names = (argv if argv is not None else sys.argv[1:]) or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s) {unknown}; choose from {list(BENCHMARKS)}", file=sys.stderr)
        return 2
    results: dict[str, object] = {
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor(),
            "cpus": os.cpu_count(),
            "torch": torch.__version__,
            "cuda": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
        }
    }
    for name in names:
        print(f"=== {name} ===", flush=True)
        start = time.perf_counter()
        numbers = importlib.import_module(BENCHMARKS[name]).main(ARGS.get(name, []))
        results[name] = {"wall_s": time.perf_counter() - start, "results": numbers}
    out = Path(__file__).parent / "out"
    out.mkdir(exist_ok=True)
    write_text_atomic(out / "results.json", json.dumps(results, indent=2, default=str))
    print(f"results written to {out / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
