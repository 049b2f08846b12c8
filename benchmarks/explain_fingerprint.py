"""Fingerprint of KGExplainer's explanations: same seeds must give the same JSON (issue #16).

Trains four small KGEs on the family KG (fixed seed, a few epochs), distils an evaluator with a
short schedule per model, explains ten test triples per model in mode (a) (the distilled
evaluator) with both search strategies and every baseline, and two triples in mode (b) (local
re-training), and writes every explanation's triples and scores to JSON. Run it before and after
a refactor and compare the files: ``python -m benchmarks.explain_fingerprint --out FILE``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import torch

from graphdata.synthetic import family_kg
from kg.explain import EvaluatorConfig, ExplainerConfig, KGExplainer, RetrainConfig
from kg.training import Trainer, TrainingConfig, build_model

MODELS = ("transe", "distmult", "complex", "rotate")
BASELINE_NAMES = ("random", "shortest", "single_best", "edge_mask")
FIELDS = (
    "joint_score",
    "full_score",
    "empty_score",
    "complement_score",
    "fid_plus",
    "fid_minus",
    "characterization",
    "sparsity",
    "num_candidates",
    "stop_reason",
)


def _record(explanation: object) -> dict[str, object]:
    """The triples and scores of one explanation, floats rounded to 6 digits."""
    out: dict[str, object] = {"triples": [list(t) for t in explanation.triples]}  # type: ignore[attr-defined]
    for name in FIELDS:
        value = getattr(explanation, name)
        out[name] = round(value, 6) if isinstance(value, float) else value
    out["paths"] = [
        [[list(t) for t in p.triples], round(p.individual_score, 6), round(p.gain, 6)]
        for p in explanation.paths  # type: ignore[attr-defined]
    ]
    return out


def run() -> dict[str, object]:
    """Train, distil and explain per model; return the fingerprint dictionary."""
    torch.set_num_threads(1)
    world = family_kg(120, seed=0)
    dataset = world.dataset
    result: dict[str, object] = {}
    for name in MODELS:
        config = TrainingConfig(
            regime="1vsall",
            epochs=20,
            lr=5e-3,
            reciprocal=True,
            eval_every=0,
            progress=False,
            seed=0,
        )
        model = build_model(name, dataset, config, dim=16)
        Trainer(model, config).fit(dataset)
        model.eval()
        cfg = ExplainerConfig(
            evaluator=EvaluatorConfig(steps=60, num_train_triples=200, hidden=16),
            retrain=RetrainConfig(steps=5),
            max_candidates=60,
        )
        explainer = KGExplainer(model, cfg).fit(dataset)
        nodes = KGExplainer(model, dataclasses.replace(cfg, strategy="nodes"))
        nodes.fit(dataset, evaluator=explainer.evaluator_)
        targets = [tuple(t) for t in dataset.test.mapped_triples[:10].tolist()]
        per: dict[str, object] = {}
        for target in targets:
            key = "-".join(map(str, target))
            entry = {
                "paths": _record(explainer.explain(target)),
                "nodes": _record(nodes.explain(target)),
            }
            for baseline in BASELINE_NAMES:
                entry[baseline] = _record(explainer.explain_baseline(target, baseline))
            per[key] = entry
        for target in targets[:2]:
            key = "-".join(map(str, target))
            per[key]["retrain"] = _record(explainer.explain(target, mode="retrain"))  # type: ignore[index]
        result[name] = per
    return result


def main() -> None:
    """Write the fingerprint JSON (default benchmarks/explain_fingerprint.json)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("explain_fingerprint.json"))
    args = parser.parse_args()
    start = time.perf_counter()
    data = run()
    args.out.write_text(json.dumps(data, indent=1, sort_keys=True))
    print(f"wrote {args.out} in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
