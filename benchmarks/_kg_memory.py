"""Peak resident memory of our KGE training or evaluation, measured in a fresh process.

Run by ``bench_kg_train --memory`` as ``python -m benchmarks._kg_memory SPEC_JSON`` (one
process per dataset, model and phase, so neither phase sees the other's allocator caches).
After imports, data loading and model construction the peak resident size (``VmHWM``) is reset
to the current one through ``/proc/self/clear_refs`` (Linux >= 4.0); the reported peak is
``VmHWM`` after the phase minus the resident size at that point. ``phase="train"``: ``epochs``
epochs with the model's tuned defaults, no validation; ``phase="eval"``: filtered both-sides
evaluation of the test set (filter index construction included).
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import torch

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
    dataset = KGDataset.from_folder(Path(spec["folder"]))
    config = TrainingConfig.from_defaults(
        spec["model"], epochs=spec["epochs"], eval_every=0, progress=False, seed=0
    )
    model = build_model(spec["model"], dataset, config)
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")  # reset VmHWM to the current resident size
    base = _kib("VmRSS")
    start = time.perf_counter()
    if spec["phase"] == "train":
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
