"""Explainers against planted Horn-rule ground truth on worlds they were not designed on (issue 18).

Run: ``.venv/bin/python -m benchmarks.bench_explain_worlds [--worlds academic,geography,family]
[--seeds 0,1] [--per-rule 6] [--methods ...] [--model-training explained|defaults]
[--cache /tmp/explain_worlds] [--out FILE]``.

Per world and seed: a ComplEx model (``--epochs`` 60) is trained on
the world's training split and an evaluator distilled with the library's defaults (both cached
under ``--cache``, keyed on world, seed and size). ``--model-training explained`` (default) trains
the ComplEx the recorded numbers used (:mod:`benchmarks._explain_model`); ``defaults`` trains it
with the library's current ComplEx defaults (dimension included), the model a user now gets,
cached under its own ``_defaults`` key. ``--per-rule`` derived test facts of every rule
are drawn (seeded; valid facts fill in when a rule has too few) and explained by every method
with **no rule knowledge** (no ``path_relations``, no rules file at explanation time). Each
explanation's triples are then scored with :func:`graphdata.rules.score_targets` against the
world's rules over the training graph: F1 against the best-matching grounding per rule length
(L1 / L2 / L3, the target's shortest grounding), the share of targets whose full body is
recovered (recall 1 of the best-matching grounding) and seconds per explanation. A fact named
the other way counts (``graphdata.rules``, "Equivalent triples": the world's symmetric
relations and inverse pairs, :attr:`~graphdata.worlds.World.symmetric`, as the family world's
ground truth does); ``f1_strict`` in the JSON compares the triples as written, the reading of
the numbers recorded before session 30.

Methods: ``patterns`` (the default since issue #18, :mod:`kg.explain.patterns`), ``greedy``
(the old default, the evaluator's greedy search with ``selection="shortest"``), and the
baselines ``shortest``, ``single_best``, ``edge_mask`` and ``random`` of
:mod:`kg.explain.baselines`. The family world is the family
KG's base facts and rules re-closed and re-split by :func:`graphdata.worlds.build_world`
(``--family-size`` people). Biology was the first held-out world, run once the method was
frozen (session 16). ``--worlds software`` (:func:`graphdata.worlds.software_world`) was
written after every other world had been looked at, without reading the explainer's selection
logic, and measured once (issue 18, session 19). ``--worlds corporate``
(:func:`graphdata.worlds.corporate_world`) was written the same way as the held-out world of
session 21's explainer change: run it once, at the end. ``--worlds media``
(:func:`graphdata.worlds.media_world`) is the held-out world of session 22's explainer work,
written the same way (without reading :mod:`kg.explain`), and was run once then. ``--worlds
sports`` (:func:`graphdata.worlds.sports_world`) and ``--worlds commerce``
(:func:`graphdata.worlds.commerce_world`) were the held-out worlds of session 24's two explainer
changes, and ``--worlds travel`` (:func:`graphdata.worlds.travel_world`, written in session 23
without reading :mod:`kg`) was run once with that session's final explainer. ``--worlds
clinical`` (:func:`graphdata.worlds.clinical_world`) was written in session 25 the same way and
run once with the explainer of session 24, unchanged, and ``--worlds legal``
(:func:`graphdata.worlds.legal_world`, written in session 25 the same way) once in session 27 with
the explainer unchanged again, and ``--worlds energy`` (:func:`graphdata.worlds.energy_world`,
written in session 27 the same way) once after that session's change, and ``--worlds
agriculture`` (:func:`graphdata.worlds.agriculture_world`, written in session 27 the same way)
once after session 28's change, and ``--worlds maritime``
(:func:`graphdata.worlds.maritime_world`, written in session 28 the same way) once in session 28
after that session's change, and ``--worlds telecom`` (:func:`graphdata.worlds.telecom_world`,
written in session 28 the same way) once after session 29's change, and ``--worlds aviation``
(:func:`graphdata.worlds.aviation_world`, written in session 29 the same way) once with that
change, and ``--worlds publishing`` (:func:`graphdata.worlds.publishing_world`, written in
session 30 the same way) once with the explainer of session 29, unchanged, and ``--worlds
banking`` (:func:`graphdata.worlds.banking_world`, written in session 30 the same way) once after
that session's change (the mirror step), and ``--worlds railways``
(:func:`graphdata.worlds.railways_world`, written in session 30 the same way) once in session 31
with the explainer unchanged, and ``--worlds parliament``
(:func:`graphdata.worlds.parliament_world`, written in session 31 the same way) once in session
32 with the explainer unchanged, and ``--worlds construction``
(:func:`graphdata.worlds.construction_world`, written in session 32 the same way) once after that
session's change (folding the conjuncts), and ``--worlds ecology``
(:func:`graphdata.worlds.ecology_world`, written in session 33 the same way) once after that
session's change (distinct values), and ``--worlds insurance``
(:func:`graphdata.worlds.insurance_world`, written in session 33 the same way) once with that
change, and ``--worlds schools`` (:func:`graphdata.worlds.schools_world`, written in session 33
the same way) once after session 34's change (the copy), and ``--worlds heritage``
(:func:`graphdata.worlds.heritage_world`, written in session 34 the same way) once in session 38
with that explainer unchanged, and ``--worlds wine`` (:func:`graphdata.worlds.wine_world`, written
in session 38 the same way) once after that session's change (the most confident member), and
``--worlds transit`` (:func:`graphdata.worlds.transit_world`, written in session 38 the same way)
once with that session's final explainer. All of these are seen now: the next explainer change
needs a new world written the same way.
Any name of :data:`graphdata.worlds.WORLDS` works.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

from benchmarks._explain_model import EXPLAINED_DIM, explained_training
from graphdata.atomic import write_text_atomic
from graphdata.rules import groundings, parse_rules, score_targets
from graphdata.synthetic import FAMILY_RULES, family_kg
from graphdata.worlds import World, build_world, world
from kg.evaluation import evaluate
from kg.explain import EvaluatorConfig, ExplainerConfig, KGExplainer
from kg.explain.evaluator import DistilledEvaluator
from kg.explain.local import capped_summary
from kg.training import Trainer, TrainingConfig, build_model

#: Method name -> (strategy, baseline); ``baseline=None`` runs ``explain`` with the strategy.
METHODS: dict[str, tuple[str, str | None]] = {
    "patterns": ("patterns", None),
    "greedy": ("paths", None),
    "shortest": ("paths", "shortest"),
    "single_best": ("paths", "single_best"),
    "edge_mask": ("paths", "edge_mask"),
    "random": ("paths", "random"),
}


def family_world(size: int, seed: int) -> World:
    """The family KG's base facts and rules through :func:`build_world` (re-closed, re-split)."""
    kg = family_kg(size, seed=seed)
    text = "\n".join(f"family_{i}: {rule}" for i, rule in enumerate(FAMILY_RULES))
    parse_rules(text)
    return build_world(
        "family",
        kg.base_triples,
        text,
        seed=seed,
        size=size,
        rng=np.random.default_rng(seed),
        entity_types={p: "person" for p in kg.gender},
        symmetric=("spouse",),
    )


def _world(name: str, seed: int, family_size: int) -> World:
    return family_world(family_size, seed) if name == "family" else world(name, seed=seed)


def prepare(
    w: World,
    seed: int,
    cache: Path,
    epochs: int,
    steps: int | None = None,
    training: str = "explained",
) -> tuple:
    """The trained ComplEx (cached), its test MRR and a distilled evaluator (cached).

    ``steps``: the evaluator's distillation steps; ``None``: the library's default.
    ``training``: ``"explained"``, the pinned ComplEx, or ``"defaults"``, the library's defaults.
    """
    cache.mkdir(parents=True, exist_ok=True)
    tag = "_defaults" if training == "defaults" else ""
    stem = cache / f"{w.name}_s{seed}_n{w.size}_e{epochs}{tag}"
    dataset = w.dataset
    options = {"epochs": epochs, "eval_every": 0, "progress": False, "seed": seed}
    if training == "defaults":
        config = TrainingConfig.from_defaults("complex", **options)
        model = build_model("complex", dataset, config)
    else:
        config = explained_training("complex", **options)
        model = build_model("complex", dataset, config, dim=EXPLAINED_DIM)
    model_file = stem.with_suffix(".model.pt")
    start = time.perf_counter()
    if model_file.exists():
        model.load_state_dict(torch.load(model_file, weights_only=True))
    else:
        Trainer(model, config).fit(dataset)
        torch.save(model.state_dict(), model_file)
    train_s = time.perf_counter() - start
    model.eval()
    mrr = evaluate(
        model, dataset.test.mapped_triples, dataset.filter_index(), reciprocal=config.reciprocal
    ).mrr
    evaluator_cfg = (
        EvaluatorConfig(seed=seed) if steps is None else EvaluatorConfig(seed=seed, steps=steps)
    )
    suffix = "" if steps is None else f"_steps{steps}"
    evaluator_file = stem.with_name(stem.name + suffix).with_suffix(".evaluator.pt")
    start = time.perf_counter()
    if evaluator_file.exists():
        evaluator = DistilledEvaluator.load(evaluator_file)
    else:
        evaluator = DistilledEvaluator(evaluator_cfg).fit(model, dataset.train, progress=False)
        evaluator.save(evaluator_file)
    distil_s = time.perf_counter() - start
    return model, float(mrr), evaluator, train_s, distil_s


def pick_targets(w: World, per_rule: int, seed: int) -> list[tuple[str, str, str]]:
    """Up to ``per_rule`` derived test facts per rule (valid facts fill in), seeded."""
    graph = w.train_graph
    by_rule: dict[str, list] = defaultdict(list)
    for split in ("test", "valid"):
        for triple in w.targets(split):
            for rule in w.rules:
                if next(iter(groundings(rule, triple, graph)), None) is not None:
                    by_rule[rule.name].append(triple)
                    break
    rng = np.random.default_rng(seed)
    picked: list[tuple[str, str, str]] = []
    for rule in w.rules:
        pool = by_rule.get(rule.name, [])
        test = [t for t in pool if t in set(w.targets("test"))]
        rest = [t for t in pool if t not in set(test)]
        order = [test[i] for i in rng.permutation(len(test))]
        order += [rest[i] for i in rng.permutation(len(rest))]
        picked += [t for t in order[:per_rule] if t not in picked]
    return picked


def run_methods(
    model, evaluator, w: World, targets: list, names: tuple[str, ...], seed: int
) -> dict:
    """Explain every target with every method; F1 per rule length, recovery and seconds."""
    explainers: dict[str, KGExplainer] = {}
    results = {}
    for method in names:
        strategy, baseline = METHODS[method]
        if strategy not in explainers:
            config = ExplainerConfig(strategy=strategy, seed=seed)
            explainers[strategy] = KGExplainer(model, config).fit(w.dataset, evaluator=evaluator)
        explainer = explainers[strategy]
        explanations, seconds = {}, []
        with capped_summary(num_targets=len(targets)):  # one line for the capped targets
            for target in targets:
                start = time.perf_counter()
                if baseline is None:
                    e = explainer.explain(target)
                else:
                    e = explainer.explain_baseline(target, baseline)
                seconds.append(time.perf_counter() - start)
                explanations[tuple(target)] = e.triples
        table = score_targets(
            explanations,
            w.rules,
            w.train_graph,
            symmetric=w.symmetric,
            inverse_pairs=w.inverse_pairs,
        )
        strict = score_targets(explanations, w.rules, w.train_graph, equivalent=False)
        rows = [s for s in table.rows.values() if s is not None]
        results[method] = {
            "f1": {n: s.f1 for n, s in table.by_length.items()},
            "f1_strict": {n: s.f1 for n, s in strict.by_length.items()},
            "count": {n: s.count for n, s in table.by_length.items()},
            "overall_f1": table.overall.f1,
            "recovered": statistics.fmean(float(s.recall == 1.0) for s in rows) if rows else 0.0,
            "recovered_by_length": {
                n: statistics.fmean(float(s.recall == 1.0) for s in rows if s.target_length == n)
                for n in table.by_length
            },
            "seconds": statistics.fmean(seconds),
            "targets": [
                {
                    "target": " ".join(t),
                    "f1": None if s is None else s.f1,
                    "f1_strict": None if (x := strict.rows[t]) is None else x.f1,
                    "rule": None if s is None else s.rule.name,
                    "triples": [" ".join(x) for x in explanations[t]],
                }
                for t, s in table.rows.items()
            ],
        }
    return results


def markdown(results: dict) -> str:
    """One table per world: F1 L1 / L2 / L3, full bodies recovered, seconds per explanation."""
    lines = []
    for key, entry in results.items():
        lines.append(f"\n{key} (ComplEx test MRR {entry['mrr']:.3f}, {entry['n']} targets)\n")
        lines.append(
            "| method | F1 L1 | F1 L2 | F1 L3 | overall | full body L1 / L2 / L3 | s / expl. |"
        )
        lines.append("| --- | --- | --- | --- | --- | --- | --- |")
        for method, r in entry["methods"].items():
            cells = [
                f"{r['f1'].get(n, float('nan')):.2f} (n={r['count'].get(n, 0)})" for n in (1, 2, 3)
            ]
            full = " / ".join(
                f"{r['recovered_by_length'][n]:.2f}" if n in r["recovered_by_length"] else "-"
                for n in (1, 2, 3)
            )
            lines.append(
                f"| {method} | {' | '.join(cells)} | {r['overall_f1']:.2f} | {full} | "
                f"{r['seconds']:.3f} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark (module docstring) and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", default="academic,geography,family")
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--per-rule", type=int, default=6)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--family-size", type=int, default=400)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--cache", default="/tmp/explain_worlds")
    parser.add_argument("--prepare-only", action="store_true")
    parser.add_argument(
        "--evaluator-steps", type=int, default=None, help="distillation steps (library default)"
    )
    parser.add_argument(
        "--model-training",
        choices=("explained", "defaults"),
        default="explained",
        help="the pinned ComplEx (explained) or the library's current ComplEx defaults",
    )
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    names = tuple(args.methods.split(","))
    for name in names:
        if name not in METHODS:
            parser.error(f"--methods: expected names from {tuple(METHODS)}, got {name!r}")
    results = {}
    for name in args.worlds.split(","):
        for seed in map(int, args.seeds.split(",")):
            w = _world(name, seed, args.family_size)
            model, mrr, evaluator, train_s, distil_s = prepare(
                w, seed, Path(args.cache), args.epochs, args.evaluator_steps, args.model_training
            )
            print(
                f"== {name} seed {seed}: MRR {mrr:.3f}, train {train_s:.0f} s, "
                f"evaluator {distil_s:.0f} s",
                flush=True,
            )
            if args.prepare_only:
                continue
            targets = pick_targets(w, args.per_rule, seed)
            methods = run_methods(model, evaluator, w, targets, names, seed)
            key = f"{name} seed {seed}"
            results[key] = {"mrr": mrr, "n": len(targets), "methods": methods}
            print(markdown({key: results[key]}), flush=True)
    if args.out:
        meta = {"hardware": platform.processor() or platform.machine(), "args": vars(args)}
        payload = {"meta": meta, "results": results, "markdown": markdown(results)}
        write_text_atomic(args.out, json.dumps(payload, indent=1) + "\n")
    return results


if __name__ == "__main__":
    main()
