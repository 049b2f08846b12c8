"""Peak resident memory of our KGE training or evaluation, measured in a fresh process.

Run by ``bench_kg_train --memory`` as ``python -m benchmarks._kg_memory SPEC_JSON`` (one
process per dataset, model and phase, so neither phase sees the other's allocator caches).
After imports, data loading and model construction the peak resident size (``VmHWM``) is reset
to the current one through ``/proc/self/clear_refs`` (Linux >= 4.0); the reported peak is
``VmHWM`` after the phase minus the resident size at that point. ``phase="train"``: ``epochs``
epochs with the model's tuned defaults, no validation, or only the first ``max_batches`` batches
of epoch 1 when the spec has it (``bench_kg_scale --parts memory`` on FB15k-237, where one 1vsAll
epoch takes minutes; :func:`benchmarks.bench_kg_scale.train_batches`); ``phase="eval"``:
filtered both-sides evaluation of the test set (filter index construction included). Valid and
test triples with labels unseen in train are dropped (``on_unknown="drop"``, PyKEEN's
behaviour). With ``announce_base`` in the spec, the baseline is printed as
``{"base_mib": ...}`` before the phase starts, so a parent that stops the process at a time
limit can turn the peak it reads from ``/proc/<pid>/status`` into a lower bound
(:func:`benchmarks.bench_kg_scale.run_memory_jobs`).
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import torch

from benchmarks.bench_kg_scale import train_batches
from graphdata.triples import KGDataset
from kg.evaluation import evaluate
from kg.training import Trainer, TrainingConfig, build_model

__all__ = ["measure"]


def _kib(key: str) -> int:
    with open("/proc/self/status") as handle:
        return int(re.search(rf"{key}:\s+(\d+)", handle.read()).group(1))


def measure(spec: dict) -> dict:
    """Peak MiB above the post-setup baseline for ``spec`` (keys: folder, model, phase, ...)."""
    torch.set_num_threads(spec["threads"])
    dataset = KGDataset.from_folder(Path(spec["folder"]), on_unknown="drop")
    config = TrainingConfig.from_defaults(
        spec["model"], epochs=spec["epochs"], eval_every=0, progress=False, seed=0
    )
    model = build_model(spec["model"], dataset, config)
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")  # reset VmHWM to the current resident size
    base = _kib("VmRSS")
    if spec.get("announce_base"):  # for a parent that may stop this process (bench_kg_scale)
        print(json.dumps({"base_mib": base / 1024}), flush=True)
    start = time.perf_counter()
    if spec["phase"] == "train" and spec.get("max_batches"):
        train_batches(model, dataset, config, spec["max_batches"])
    elif spec["phase"] == "train":
        Trainer(model, config).fit(dataset)
    else:
        evaluate(
            model.eval(),
            dataset.test.mapped_triples,
            dataset.filter_index(),
            reciprocal=config.reciprocal,
        )
    seconds = time.perf_counter() - start
    return {"peak_mib": (_kib("VmHWM") - base) / 1024, "base_mib": base / 1024, "s": seconds}


if __name__ == "__main__":
    print(json.dumps(measure(json.loads(sys.argv[1]))))
