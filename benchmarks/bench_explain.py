"""KGExplainer against planted ground truth, baselines and the reference protocol (issue 4).

Run: ``.venv/bin/python -m benchmarks.bench_explain [--models transe,distmult,complex,rotate]
[--num-people 200] [--targets 10] [--real] [--out FILE]``. ``--targets`` counts test triples per
rule length (default 10: one target moves a per-length mean by .1); the family part takes 8-15
minutes on one thread, depending on the host. The
ground-truth table of RESULTS.md is printed at the end (:func:`markdown_table`) and stored under
``"markdown"``; each method's ``"targets"`` lists its explanation of every target.
``--evaluator-seed`` (default ``--seed``) seeds the evaluator's distillation alone (same models,
same targets; ``--ensemble``, ``--evaluator-negatives`` and ``--relation-negatives`` went with
the EvaluatorConfig fields issue #16 made constants of kg.explain.evaluator.config);
``--methods default`` runs only the default method (raw, unfolded and base-relation paths; no
baselines, no speed part)
for short robustness experiments; ``--evaluator-seeds 0,1,2,3,4`` runs it once per evaluator
seed and prints the robustness tables of RESULTS.md (goals met per model and seed, mean F1,
per-model means over the seeds, best F1 against the closest grounding, the strict F1 that does
not count mirrored proofs of symmetric targets, and the F1 with sibling edges compared in either
direction as a diagnostic; about 35 minutes on one thread). The
evaluator is distilled with the library's defaults (``EvaluatorConfig``: 1,200 steps on 1,000
training triples) unless ``--evaluator-steps`` / ``--evaluator-triples`` say otherwise.

* **Ground truth** (synthetic family KG, :func:`graphdata.synthetic.family_kg`): per model, the
  test triples it ranks first (filtered tail rank 1), stratified by the length of their planted
  rule; precision / recall / F1 (and best single-rule F1, full-rule hit) of the explanation's
  triples against the rule bodies, per rule length, raw and after unfolding (derived triples
  replaced by the bodies of their groundings, :func:`kg.explain.ground_truth.unfold_triples`), for
  KGExplainer (distilled evaluator, all relations) with the step rules ``selection="best"``
  and ``"shortest"`` and the reference's node-by-node growth (``strategy="nodes"``), the same
  restricted to paths over the base relations (``path_relations``: the graph's derived
  relations offer shortcut paths that are valid reasons but no rule body), and the baselines:
  random paths, shortest paths, the single best path and a GNNExplainer-style edge mask on the
  evaluator.
* **Fidelity**: probability fid+ / fid- (Power-Link), PyG's model fid+ / fid-, characterization
  and sparsity of every method; with ``--real`` also on Nations and UMLS, where the three
  scorers below are timed too (``--speed-targets`` targets, ``--speed-cap`` candidates).
* **Evaluator agreement** with its teacher: Spearman of scores, Hits@10 of the teacher's best
  tail in the evaluator's top 10, top-10 overlap.
* **Speed**: seconds per explanation for mode (a) (distilled evaluator), mode (b) (batched local
  re-training, every candidate from a clean state) and the reference protocol (the same
  re-training one candidate at a time, ``max_batch=1``), with their ground-truth F1, on the same
  targets and candidate cap.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import statistics
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path

import torch

from benchmarks._explain_model import explained_training
from graphdata.synthetic import BASE_RELATIONS, FamilyKG, HornRule, family_kg
from graphdata.triples import KGDataset
from kg.evaluation import evaluate
from kg.explain import (
    EvaluatorConfig,
    ExplainerConfig,
    KGExplainer,
    RetrainConfig,
    characterization_score,
    ground_truth_scores,
    model_fidelity,
    probability_fidelity,
)
from kg.training import Trainer, build_model

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "kg"

#: Method name -> (explainer variant, baseline or None).
METHODS = {
    "kgexplainer": ("all", None),
    "kgexplainer_shortest": ("all_shortest", None),
    "kgexplainer_base_paths": ("base", None),
    "kgexplainer_base_paths_shortest": ("base_shortest", None),
    "kgexplainer_nodes": ("all_nodes", None),
    "kgexplainer_base_paths_nodes": ("base_nodes", None),
    "single_best": ("all", "single_best"),
    "shortest": ("all", "shortest"),
    "random": ("all", "random"),
    "edge_mask": ("all", "edge_mask"),
    "single_best_base_paths": ("base", "single_best"),
    "shortest_base_paths": ("base", "shortest"),
    "random_base_paths": ("base", "random"),
}


#: Rows of the ground-truth table: label -> (method, all relations; method, base-relation paths).
TABLE_ROWS = {
    "KGExplainer, shortest sufficient path (default)": (
        "kgexplainer_shortest",
        "kgexplainer_base_paths_shortest",
    ),
    "KGExplainer, best path (plain greedy)": ("kgexplainer", "kgexplainer_base_paths"),
    "KGExplainer, node by node (reference)": ("kgexplainer_nodes", "kgexplainer_base_paths_nodes"),
    "single best path": ("single_best", "single_best_base_paths"),
    "shortest paths": ("shortest", "shortest_base_paths"),
    "random paths": ("random", "random_base_paths"),
    "edge mask (GNNExplainer-style)": ("edge_mask", None),
}

#: ``--methods`` shorthands: the default method (shortest sufficient path, all relations and
#: base-relation paths) alone, for short experiment runs, or everything.
METHOD_SETS = {
    "default": ("kgexplainer_shortest", "kgexplainer_base_paths_shortest"),
    "all": tuple(METHODS),
}


def _methods(spec: str) -> tuple[str, ...]:
    """Resolve ``--methods``: a name of :data:`METHOD_SETS` or a comma list of METHODS keys."""
    if spec in METHOD_SETS:
        return METHOD_SETS[spec]
    names = tuple(n.strip() for n in spec.split(",") if n.strip())
    unknown = [n for n in names if n not in METHODS]
    if unknown or not names:
        raise SystemExit(
            f"--methods: unknown {unknown or spec!r}; expected one of {sorted(METHOD_SETS)} or a "
            f"comma list of {sorted(METHODS)}"
        )
    return names


def _cells(summary: dict | None, key: str) -> str:
    """``a / b / c``: one figure per rule length (``n/a`` without the method)."""
    if summary is None:
        return "n/a"
    per = summary.get("per_rule_length", {})
    return " / ".join(f"{per[k][key]:.2f}".replace("0.", ".") for k in sorted(per))


def markdown_table(family: dict) -> str:
    """The ground-truth table of RESULTS.md: F1 raw / unfolded / base-relation paths per rule
    length, with the base-relation strict F1 (the target's own bodies only, no mirrored proofs
    of symmetric targets), best single-body F1 and full-body hit rate next to it."""
    lines = [
        "| model | test MRR | evaluator vs teacher: Spearman / Hits@10 / top-10 overlap | "
        "method | F1 raw (1 / 2 / 3) | F1 unfolded | F1, base-relation paths | strict F1, base | "
        "best F1, base | hit, base | best F1 / hit, raw |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, entry in family.items():
        agreement = entry["agreement"]
        head = [
            name,
            f"{entry['test_mrr']:.3f}",
            " / ".join(
                "n/a" if agreement[k] is None else f"{agreement[k]:.2f}".replace("0.", ".")
                for k in ("spearman", "hits_at_10", "top10_overlap")
            ),
        ]
        methods = entry["methods"]
        rows = [(label, raw, base) for label, (raw, base) in TABLE_ROWS.items() if raw in methods]
        for i, (label, raw, base) in enumerate(rows):
            r, b = methods[raw], methods.get(base) if base else None
            cells = (head if i == 0 else ["", "", ""]) + [
                label,
                _cells(r, "f1"),
                _cells(r, "f1_unfolded"),
                _cells(b, "f1"),
                _cells(b, "f1_strict"),
                _cells(b, "best_f1"),
                _cells(b, "hit"),
                f"{_cells(r, 'best_f1')}; {_cells(r, 'hit')}",
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _train(name: str, dataset: KGDataset, epochs: int, dim: int, seed: int):
    config = explained_training(name, epochs=epochs, eval_every=0, progress=False, seed=seed)
    model = build_model(name, dataset, config, dim=dim)
    start = time.perf_counter()
    Trainer(model, config).fit(dataset)
    seconds = time.perf_counter() - start
    metrics = evaluate(
        model.eval(),
        dataset.test.mapped_triples,
        dataset.filter_index(),
        reciprocal=config.reciprocal,
    )
    return model, config.reciprocal, metrics, seconds


def _ranked_first(world: FamilyKG, model, reciprocal: bool, per_length: int, seed: int):
    ds = world.dataset
    ranks = evaluate(model, ds.test.mapped_triples, ds.filter_index(), reciprocal=reciprocal).ranks(
        "tail"
    )
    first = [t for t, r in zip(ds.test.to_labeled_triples(), ranks.tolist()) if r == 1.0]
    by_length = defaultdict(list)
    for triple in first:
        by_length[min(e.length for e in world.explanations_for(triple))].append(triple)
    generator = torch.Generator().manual_seed(seed)
    picked = []
    for length in sorted(by_length):
        pool = by_length[length]
        order = torch.randperm(len(pool), generator=generator)[:per_length].tolist()
        picked += [pool[i] for i in order]
    return picked, len(first), len(ranks)


#: The per-target ground-truth figures averaged per method and per rule length.
GROUND_TRUTH_KEYS = (
    "precision",
    "recall",
    "f1",
    "f1_strict",
    "best_f1",
    "hit",
    "f1_unfolded",
    "hit_unfolded",
)


def _summarise(rows: list[dict]) -> dict:
    out: dict = {"n": len(rows)}
    if not rows:
        return out
    for key in (*GROUND_TRUTH_KEYS, "sparsity", "seconds", "num_paths"):
        out[key] = statistics.fmean(float(r[key]) for r in rows)
    p = {k: torch.tensor([r[k] for r in rows]) for k in ("p_full", "p_joint", "p_complement")}
    out["fid_plus"], out["fid_minus"] = probability_fidelity(
        p["p_full"], p["p_complement"], p["p_joint"]
    )
    out["characterization"] = characterization_score(out["fid_plus"], out["fid_minus"])
    out["model_fid_plus"], out["model_fid_minus"] = model_fidelity(
        p["p_full"], p["p_complement"], p["p_joint"]
    )
    by_length = defaultdict(list)
    for r in rows:
        by_length[r["rule_length"]].append(r)
    out["per_rule_length"] = {
        length: {k: statistics.fmean(float(r[k]) for r in group) for k in GROUND_TRUTH_KEYS}
        | {"n": len(group)}
        for length, group in sorted(by_length.items())
    }
    return out


def _row(explanation, world, target) -> dict:
    gt = ground_truth_scores(explanation.triples, world, target)
    strict = ground_truth_scores(explanation.triples, world, target, symmetric_targets=False)
    unfolded = ground_truth_scores(explanation.triples, world, target, unfold=True)
    return {
        "f1_unfolded": unfolded.f1,
        "best_f1_unfolded": unfolded.best_f1,
        "hit_unfolded": unfolded.hit,
        "precision": gt.precision,
        "recall": gt.recall,
        "f1": gt.f1,
        "f1_strict": strict.f1,
        "best_f1": gt.best_f1,
        "hit": gt.hit,
        "rule_length": gt.rule_length,
        "sparsity": explanation.sparsity,
        "seconds": explanation.seconds,
        "num_paths": len(explanation.paths),
        "fid_plus": explanation.fid_plus,
        "fid_minus": explanation.fid_minus,
        "p_full": explanation.full_probability,
        "p_joint": explanation.joint_probability,
        "p_complement": explanation.complement_probability,
        # Per-target record (JSON only): the target and the explanation's triples.
        "target": " ".join(map(str, target)),
        "triples": [" ".join(map(str, t)) for t in explanation.triples],
    }


def _explain_all(explainers: dict, world: FamilyKG, targets: list, names: tuple) -> dict:
    results = {}
    for method in names:
        variant, baseline = METHODS[method]
        explainer = explainers[variant]
        rows = []
        for target in targets:
            if baseline is None:
                explanation = explainer.explain(target)
            else:
                explanation = explainer.explain_baseline(target, baseline)
            rows.append(_row(explanation, world, target))
        results[method] = _summarise(rows)
        results[method]["targets"] = [
            {k: row[k] for k in ("target", "rule_length", "f1", "f1_strict", "triples")}
            for row in rows
        ]
    return results


def _speed_modes(steps: int, *, pretrained: bool = False) -> dict[str, tuple[str, RetrainConfig]]:
    """The timed scorers: mode (a), mode (b) and the reference protocol (one candidate at a
    time), re-training ``steps`` steps from a shared random draw; ``pretrained`` adds mode (b)
    from the trained rows."""
    modes = {
        "a_evaluator": ("evaluator", RetrainConfig()),
        "b_retrain": ("retrain", RetrainConfig(steps=steps, init="random")),
        "reference_sequential": ("retrain", RetrainConfig(steps=steps, init="random", max_batch=1)),
    }
    if pretrained:
        modes["b_retrain_pretrained_init"] = (
            "retrain",
            RetrainConfig(steps=steps, init="pretrained"),
        )
    return modes


def _speed(model, world: FamilyKG, evaluator, targets: list, cap: int, steps: int) -> dict:
    """Mode (a), mode (b) and the sequential reference protocol on the same targets.

    Re-training starts from one shared random draw of the local rows (``init="random"``): from
    the trained rows (the reference's choice, also timed) the re-trained score of the full local
    graph rarely exceeds the untouched one, so the search stops at once with no signal.
    """
    out = {}
    for name, (mode, retrain) in _speed_modes(steps, pretrained=True).items():
        config = ExplainerConfig(mode=mode, max_candidates=cap, retrain=retrain)
        explainer = KGExplainer(model, config).fit(world.dataset, evaluator=evaluator)
        rows = [_row(explainer.explain(t), world, t) for t in targets]
        out[name] = _summarise(rows)
        print(
            f"  speed {name:<22} {out[name]['seconds']:8.2f} s/explanation  "
            f"F1 {out[name]['f1']:.2f}  paths {out[name]['num_paths']:.2f}",
            flush=True,
        )
    ref = out["reference_sequential"]["seconds"]
    out["speedup_a_vs_reference"] = ref / out["a_evaluator"]["seconds"]
    out["speedup_b_vs_reference"] = ref / out["b_retrain"]["seconds"]
    print(
        f"  speed-up over the reference protocol: mode (a) {out['speedup_a_vs_reference']:.1f}x, "
        f"mode (b) {out['speedup_b_vs_reference']:.1f}x",
        flush=True,
    )
    return out


def _family(args: argparse.Namespace) -> dict:
    world = family_kg(args.num_people, seed=args.seed)
    names = _methods(args.methods)
    needed = {METHODS[m][0] for m in names}
    evaluator_seed = args.seed if args.evaluator_seed is None else args.evaluator_seed
    results = {}
    for name in args.models.split(","):
        print(f"== {name} on the family KG ({args.num_people} people)", flush=True)
        model, reciprocal, metrics, train_s = _train(
            name, world.dataset, args.epochs, args.dim, args.seed
        )
        targets, num_first, num_test = _ranked_first(
            world, model, reciprocal, args.targets, args.seed
        )
        print(
            f"  trained in {train_s:.0f} s, test MRR {metrics.mrr:.3f}; {num_first}/{num_test} "
            f"test triples ranked first, explaining {len(targets)}",
            flush=True,
        )
        evaluator_cfg = EvaluatorConfig(
            steps=args.evaluator_steps,
            num_train_triples=args.evaluator_triples,
            seed=evaluator_seed,
        )
        config = ExplainerConfig(
            evaluator=evaluator_cfg,
            max_candidates=args.max_candidates,
            seed=args.seed,
            selection="best",
            strategy="paths",
        )
        full = KGExplainer(model, config).fit(world.dataset)
        evaluator = full.evaluator_
        agreement = evaluator.agreement(
            model,
            world.dataset.test.mapped_triples,
            num_queries=args.agreement_queries,
            seed=args.seed,
        )
        print(
            f"  evaluator distilled in {evaluator.fit_seconds_:.0f} s; agreement {agreement}",
            flush=True,
        )
        variants = {"all": full}
        for variant, relations, selection, strategy in (
            ("all_shortest", None, "shortest", "paths"),
            ("base", tuple(BASE_RELATIONS), "best", "paths"),
            ("base_shortest", tuple(BASE_RELATIONS), "shortest", "paths"),
            ("all_nodes", None, "best", "nodes"),
            ("base_nodes", tuple(BASE_RELATIONS), "best", "nodes"),
        ):
            if variant not in needed:
                continue
            variants[variant] = KGExplainer(
                model,
                ExplainerConfig(
                    evaluator=evaluator_cfg,
                    max_candidates=args.max_candidates,
                    seed=args.seed,
                    path_relations=relations,
                    selection=selection,
                    strategy=strategy,
                ),
            ).fit(world.dataset, evaluator=evaluator)
        methods = _explain_all(variants, world, targets, names)
        for method, summary in methods.items():
            lengths = "  ".join(
                f"L{k}: F1 {v['f1']:.2f} unf {v['f1_unfolded']:.2f} best {v['best_f1']:.2f} "
                f"hit {v['hit']:.2f} (n={v['n']})"
                for k, v in summary.get("per_rule_length", {}).items()
            )
            print(
                f"  {method:<32} {lengths}  fid+ {summary.get('fid_plus', float('nan')):.3f} "
                f"fid- {summary.get('fid_minus', float('nan')):.3f} charact "
                f"{summary.get('characterization', float('nan')):.3f} sparsity "
                f"{summary.get('sparsity', float('nan')):.3f}  "
                f"{summary.get('seconds', float('nan')):.2f} s",
                flush=True,
            )
        entry = {
            "test_mrr": metrics.mrr,
            "train_seconds": train_s,
            "ranked_first": num_first,
            "num_test": num_test,
            "evaluator_seconds": evaluator.fit_seconds_,
            "agreement": agreement,
            "methods": methods,
        }
        if name == args.speed_model and set(names) == set(METHODS):
            entry["speed"] = _speed(
                model,
                world,
                evaluator,
                targets[: args.speed_targets],
                args.speed_cap,
                args.retrain_steps,
            )
        results[name] = entry
    return results


def _real(args: argparse.Namespace) -> dict:
    """Fidelity and speed on Nations and UMLS (1-hop subgraphs, paths up to length 2)."""
    results = {}
    for name in ("nations", "umls"):
        folder = Path(args.datasets) / name
        if not folder.is_dir():
            print(f"  {folder} missing: skipping {name}")
            continue
        dataset = KGDataset.from_folder(folder)
        model, reciprocal, metrics, _ = _train(
            "distmult", dataset, args.epochs, args.dim, args.seed
        )
        ranks = evaluate(
            model, dataset.test.mapped_triples, dataset.filter_index(), reciprocal=reciprocal
        ).ranks("tail")
        first = [t for t, r in zip(dataset.test.to_labeled_triples(), ranks.tolist()) if r == 1.0]
        targets = first[: args.real_targets]
        evaluator_cfg = EvaluatorConfig(
            hops=1,
            max_length=2,
            steps=args.evaluator_steps,
            num_train_triples=args.evaluator_triples,
            seed=args.seed,
        )
        config = ExplainerConfig(
            hops=1,
            max_length=2,
            evaluator=evaluator_cfg,
            max_candidates=args.max_candidates,
            seed=args.seed,
        )
        explainer = KGExplainer(model, config).fit(dataset)
        rows = []
        for target in targets:
            e = explainer.explain(target)
            rows.append(
                {
                    "sparsity": e.sparsity,
                    "seconds": e.seconds,
                    "fid_plus": e.fid_plus,
                    "fid_minus": e.fid_minus,
                    "p_full": e.full_probability,
                    "p_joint": e.joint_probability,
                    "p_complement": e.complement_probability,
                    "num_paths": len(e.paths),
                }
            )
        p = {k: torch.tensor([r[k] for r in rows]) for k in ("p_full", "p_joint", "p_complement")}
        fid_plus, fid_minus = probability_fidelity(p["p_full"], p["p_complement"], p["p_joint"])
        # Speed: the three scorers on the same targets with the same candidate cap.
        speed = {}
        for mode_name, (mode, retrain) in _speed_modes(args.retrain_steps).items():
            timed = KGExplainer(
                model,
                ExplainerConfig(
                    hops=1,
                    max_length=2,
                    mode=mode,
                    max_candidates=args.speed_cap,
                    retrain=retrain,
                ),
            ).fit(dataset, evaluator=explainer.evaluator_)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the cap is the benchmark's choice
                seconds = [timed.explain(t).seconds for t in targets[: args.speed_targets]]
            speed[mode_name] = statistics.fmean(seconds) if seconds else float("nan")
        speedup = speed["reference_sequential"] / max(speed["a_evaluator"], 1e-9)
        print(
            f"  {name} speed, s per explanation (cap {args.speed_cap}): "
            + ", ".join(f"{k} {v:.3f}" for k, v in speed.items())
            + f"; mode (a) {speedup:.1f}x the reference protocol",
            flush=True,
        )
        entry = {
            "test_mrr": metrics.mrr,
            "explained": len(rows),
            "fid_plus": fid_plus,
            "fid_minus": fid_minus,
            "characterization": characterization_score(fid_plus, fid_minus),
            "model_fid": model_fidelity(p["p_full"], p["p_complement"], p["p_joint"]),
            "sparsity": statistics.fmean(r["sparsity"] for r in rows) if rows else float("nan"),
            "explanations_per_second_a": len(rows) / max(sum(r["seconds"] for r in rows), 1e-9),
            "explanations_per_second_b": 1 / max(speed["b_retrain"], 1e-9),
            "speed_seconds": speed,
            "speedup_a_vs_reference": speedup,
            "evaluator_seconds": explainer.evaluator_.fit_seconds_,
        }
        print(f"== {name}: {entry}", flush=True)
        results[name] = entry
    return results


#: The ground-truth goals of issue 4: base-relation F1 per rule length.
GOALS = {2: 0.9, 3: 0.8}


#: Diagnostic length-1 "rules" that make the two stored directions of a sibling link one
#: equivalence class (``brother``/``sister`` compared as unordered pairs); not true rules of the
#: world (``sister(Y,X)`` does not give ``brother(X,Y)`` without the gender), only a reading.
SIBLING_FOLD = tuple(
    HornRule.from_string(text)
    for text in ("brother(X,Y) <- sister(Y,X)", "brother(X,Y) <- brother(Y,X)")
)

#: The readings of :func:`robustness_summary`: F1 as the library defines it (mirrored proofs of
#: symmetric targets count, :func:`kg.explain.ground_truth_scores`), the strict reading (the
#: target's own rule bodies only; sessions 1-5 reported this one), and a diagnostic with sibling
#: edges compared in either direction (:data:`SIBLING_FOLD`).
READINGS = ("f1", "f1_strict", "f1_sibling_fold")


def _regrade(world: FamilyKG, records: list[dict]) -> dict[str, dict[int, float]]:
    """Mean F1 and best F1 per rule length of saved explanations, in every reading."""
    folded = dataclasses.replace(world, rules=world.rules + SIBLING_FOLD)
    per: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in records:
        target = tuple(row["target"].split())
        triples = [tuple(x.split()) for x in row["triples"]]
        scores = ground_truth_scores(triples, world, target)
        strict = ground_truth_scores(triples, world, target, symmetric_targets=False)
        fold = ground_truth_scores(triples, folded, target, symmetric_targets=False)
        length = int(row["rule_length"])
        per["f1"][length].append(scores.f1)
        per["best_f1"][length].append(scores.best_f1)
        per["f1_strict"][length].append(strict.f1)
        per["f1_sibling_fold"][length].append(fold.f1)
    return {
        key: {k: statistics.fmean(v) for k, v in sorted(lengths.items())}
        for key, lengths in per.items()
    }


def _robustness(args: argparse.Namespace) -> dict:
    """The default method once per evaluator seed: goals met per model and seed, and means."""
    seeds = [int(x) for x in args.evaluator_seeds.split(",")]
    world = family_kg(args.num_people, seed=args.seed)
    runs = {}
    for seed in seeds:
        run_args = argparse.Namespace(
            **{**vars(args), "evaluator_seed": seed, "methods": "default"}
        )
        runs[seed] = _family(run_args)
    return robustness_summary(world, runs)


def _meets(f1: dict[int, float]) -> bool:
    return all(f1.get(k, math.nan) >= goal - 1e-9 for k, goal in GOALS.items())


def robustness_summary(world: FamilyKG, runs: dict) -> dict:
    """The robustness tables of per-seed family runs ``{seed: {model: run}}`` (also from JSON).

    Every figure is recomputed from the saved explanations (``"targets"``) with
    :func:`_regrade`, so JSON of earlier sessions renders in today's readings (:data:`READINGS`).
    """
    method = "kgexplainer_base_paths_shortest"
    seeds = list(runs)
    models = list(runs[seeds[0]])
    total = len(models) * len(seeds)
    header = " | ".join(f"{m}: L2 / L3, seeds {','.join(map(str, seeds))}" for m in models)
    lines = [
        f"| reading | {header} | cells meeting both goals | mean L2 / L3 |",
        "|" + " --- |" * (len(models) + 3),
    ]
    graded = {
        (model, seed): _regrade(world, runs[seed][model]["methods"][method]["targets"])
        for model in models
        for seed in seeds
    }
    met = {}
    labels = {
        "f1": "F1",
        "f1_strict": "strict (own bodies only)",
        "f1_sibling_fold": "*sibling edges either way (diagnostic)*",
    }
    for reading in (*READINGS, "best_f1"):
        cells, count, sums = [], 0, defaultdict(float)
        for model in models:
            parts = []
            for seed in seeds:
                f1 = graded[model, seed][reading]
                ok = _meets(f1)
                count += ok
                for k in GOALS:
                    sums[k] += f1.get(k, math.nan) / total
                parts.append(
                    f"{f1.get(2, math.nan):.2f}/{f1.get(3, math.nan):.2f}" + ("" if ok else "x")
                )
            cells.append(", ".join(parts))
        met[reading] = count
        if reading in labels:
            row = [labels[reading], *cells, f"{count} / {total}", f"{sums[2]:.3f} / {sums[3]:.3f}"]
            lines.append("| " + " | ".join(row) + " |")
    per_model = {}
    for model in models:
        per_model[model] = {
            f"{reading}_L{k}": statistics.fmean(
                graded[model, seed][reading].get(k, math.nan) for seed in seeds
            )
            for reading in (*READINGS, "best_f1")
            for k in GOALS
        }
    lines += [
        "",
        "| model | mean over the seeds: F1 L2 / L3 | strict L2 / L3 | best F1 (closest "
        "grounding) L2 / L3 | goals met by the means (F1 / strict) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for model, means in per_model.items():
        ok = _meets({k: means[f"f1_L{k}"] for k in GOALS})
        ok_strict = _meets({k: means[f"f1_strict_L{k}"] for k in GOALS})
        lines.append(
            f"| {model} | {means['f1_L2']:.3f} / {means['f1_L3']:.3f} | "
            f"{means['f1_strict_L2']:.3f} / {means['f1_strict_L3']:.3f} | "
            f"{means['best_f1_L2']:.3f} / {means['best_f1_L3']:.3f} | "
            f"{'yes' if ok else 'no'} / {'yes' if ok_strict else 'no'} |"
        )
    lines.append(
        f"\nRuns meeting both goals with best F1 (closest grounding): {met['best_f1']} / {total}"
    )
    return {
        "seeds": seeds,
        "runs": runs,
        "cells_met": met["f1"],
        "cells_met_strict": met["f1_strict"],
        "cells_met_sibling_fold": met["f1_sibling_fold"],
        "cells_met_best_f1": met["best_f1"],
        "cells": total,
        "per_model_means": per_model,
        "markdown": "\n".join(lines),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="transe,distmult,complex,rotate")
    parser.add_argument("--num-people", type=int, default=200)
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--targets", type=int, default=10, help="targets per rule length")
    parser.add_argument("--max-candidates", type=int, default=150)
    parser.add_argument("--evaluator-steps", type=int, default=EvaluatorConfig.steps)
    parser.add_argument(
        "--evaluator-seed",
        type=int,
        default=None,
        help="seed of the evaluator distillation (default: --seed)",
    )
    parser.add_argument(
        "--evaluator-seeds",
        default=None,
        help="comma list: run the default method once per evaluator seed (same models and "
        "targets) and print the robustness table (cells meeting the goals, means, F1 modulo "
        "the sibling direction); replaces the single-seed family run",
    )
    parser.add_argument(
        "--methods",
        default="all",
        help="'all', 'default' (the default method only; no speed part) or a comma list",
    )
    parser.add_argument("--evaluator-triples", type=int, default=EvaluatorConfig.num_train_triples)
    parser.add_argument("--agreement-queries", type=int, default=10)
    parser.add_argument("--speed-model", default="distmult")
    parser.add_argument("--speed-targets", type=int, default=3)
    parser.add_argument("--speed-cap", type=int, default=20, help="candidate cap of the speed runs")
    parser.add_argument("--retrain-steps", type=int, default=10)
    parser.add_argument("--real", action="store_true", help="also Nations and UMLS")
    parser.add_argument("--skip-family", action="store_true", help="only the real-data part")
    parser.add_argument("--real-targets", type=int, default=10)
    parser.add_argument("--datasets", default=str(DATASETS))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="write the results as JSON")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # candidate caps, reported in each explanation
        if args.evaluator_seeds and not args.skip_family:
            results = {"robustness": _robustness(args)}
            print(results["robustness"]["markdown"], flush=True)
        else:
            results = {} if args.skip_family else {"family": _family(args)}
        if "family" in results:
            results["markdown"] = markdown_table(results["family"])
            print(results["markdown"], flush=True)
        if args.real:
            results["real"] = _real(args)
    results["config"] = vars(args)
    results["hardware"] = {
        "machine": platform.machine(),
        "processor": platform.processor(),
        "cpus": os.cpu_count(),
        "threads": args.threads,
        "torch": torch.__version__,
        "python": platform.python_version(),
    }
    results["wall_seconds"] = time.perf_counter() - start
    print(f"wall time {results['wall_seconds']:.0f} s")
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1, default=str))
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
