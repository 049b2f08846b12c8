"""Model-faithful necessity and sufficiency of explanations against the baselines (issue 18).

Run: ``.venv/bin/python -m benchmarks.bench_explain_faithful [--worlds academic,geography,
biology,family] [--size 200] [--people 300] [--targets 20] [--epochs 60] [--out FILE]``.

Per world (:func:`graphdata.worlds.world`, and the family world of
:func:`graphdata.synthetic.family_kg`): ComplEx with its library defaults (1vsAll, reciprocal,
N3) trained ``--epochs`` epochs; targets are rule-derived test facts the model predicts (filtered
tail rank <= 10), the first ``--targets`` of a seeded shuffle; the explainer is the current
default ``KGExplainer(model).fit(dataset)`` (public API, so a change of the default method is
picked up), and the baselines are :data:`kg.explain.explainer.BASELINES`.

**Equal budget.** With :math:`n` the explanation's number of triples, each baseline's triples
are trimmed to its first :math:`n` (its own order: path order, as ``PathExplanation.triples``)
or padded to :math:`n`: ``shortest`` with its next candidate paths, every other baseline with the
triples of a seeded random order of the local candidate paths (:func:`kg.explain.faithful.
equal_budget`, repeats skipped).

**Measures** (:mod:`kg.explain.faithful`, defaults ``FaithfulConfig()``): necessity
:math:`\\Delta_{nec}` = rank after relearning :math:`h, t` without the triples minus the
control's rank (nothing removed); sufficiency rank = rank after relearning with the triples
touching :math:`h` or :math:`t` reduced to the method's; per method the mean, the paired mean
difference explainer - baseline with a 95% bootstrap interval (2,000 resamples of the targets,
seeded), and the Spearman correlation of :math:`\\Delta_{nec}` with the ground-truth F1 of the
same (budgeted) triples (:func:`graphdata.rules.explanation_scores`; family: the best-matching
planted explanation).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from scipy.stats import spearmanr

from benchmarks._explain_model import EXPLAINED_DIM, explained_training
from graphdata.atomic import write_text_atomic
from graphdata.rules import explanation_scores
from graphdata.synthetic import family_kg
from graphdata.triples import KGDataset
from graphdata.worlds import world
from kg.explain import KGExplainer
from kg.explain.explainer import BASELINES
from kg.explain.explanation import PathExplanation
from kg.explain.faithful import FaithfulConfig, FaithfulEvaluator, equal_budget
from kg.training import build_model, train

METHOD = "kgexplainer"


def _prf(predicted: set[tuple[str, str, str]], true: set[tuple[str, str, str]]) -> float:
    common = len(predicted & true)
    if not common:
        return 0.0
    p, r = common / len(predicted), common / len(true)
    return 2 * p * r / (p + r)


def load(name: str, size: int | None, people: int, seed: int) -> tuple[KGDataset, Any, list]:
    """Dataset, an F1 function ``f1(triples, target)`` and the candidate targets."""
    if name == "family":
        fkg = family_kg(people, seed=seed)
        truth = fkg.explanations

        def f1_family(triples: list, target: tuple) -> float:
            got = {tuple(t) for t in triples}
            return max((_prf(got, set(e.path)) for e in truth.get(target, ())), default=0.0)

        return fkg.dataset, f1_family, list(fkg.derived_splits["test"])
    w = world(name, seed=seed, size=size)

    def f1_world(triples: list, target: tuple) -> float:
        score = explanation_scores(
            triples,
            target,
            w.rules,
            w.train_graph,
            symmetric=w.symmetric,
            inverse_pairs=w.inverse_pairs,
        )
        return 0.0 if score is None else score.f1

    targets = [t for t in w.targets("test") if w.groundings(t)]
    return w.dataset, f1_world, targets


@torch.no_grad()
def predicted(model: Any, dataset: KGDataset, targets: list, k: int = 10) -> list:
    """The targets whose filtered tail rank is at most ``k``."""
    index = dataset.filter_index()
    out = []
    for target in targets:
        h, r, t = (
            dataset.entities.id(target[0]),
            dataset.relations.id(target[1]),
            dataset.entities.id(target[2]),
        )
        scores = model.score_tails(torch.tensor([h]), torch.tensor([r]))[0]
        known = index.tails(torch.tensor([h]), torch.tensor([r]))[1]
        star = scores[t].clone()
        scores[known] = -math.inf
        if int((scores > star).sum()) + 1 <= k:
            out.append(target)
    return out


def path_triples(explainer: KGExplainer, target: tuple, order: list[int]) -> list:
    """The local candidate paths' triples, paths in ``order``."""
    local = explainer.local_structure(target)
    ent, rel = explainer.graph_.entities.labels, explainer.graph_.relations.labels
    nodes, ei, et = local.nodes.tolist(), local.edge_index.tolist(), local.edge_type.tolist()
    label = [(ent[nodes[ei[0][j]]], rel[et[j]], ent[nodes[ei[1][j]]]) for j in range(len(et))]
    return [label[j] for i in order if i < len(local.paths) for j in local.paths[i]]


def bootstrap(
    diffs: list[float], seed: int, resamples: int = 2000
) -> tuple[float, float] | tuple[None, None]:
    """95% percentile interval of the mean of ``diffs``; ``(None, None)`` for no diffs."""
    if not diffs:
        return None, None
    rng = np.random.default_rng(seed)
    arr = np.asarray(diffs)
    means = arr[rng.integers(0, arr.size, (resamples, arr.size))].mean(1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def method_triples(
    explainer: KGExplainer, target: tuple, baselines: tuple[str, ...] = BASELINES
) -> tuple[dict[str, list], PathExplanation]:
    """Each method's own triples for ``target`` (best first) and the explanation itself.

    The explainer's :meth:`~kg.explain.KGExplainer.explain` and each of ``baselines`` (default
    every one of :data:`kg.explain.explainer.BASELINES`) through ``explain_baseline``.
    """
    explanation = explainer.explain(target)
    own = {METHOD: list(explanation.triples)}
    for baseline in baselines:
        own[baseline] = list(explainer.explain_baseline(target, baseline).triples)
    return own, explanation


def faithful_fields(nec: Any, suf: Any, sets: dict, own: dict, methods: list[str]) -> dict:
    """One target's ranks, per-method necessity and sufficiency, budgets and own sizes."""
    return {
        "original_rank": nec.original.rank,
        "control_rank": nec.control.rank,
        "none_rank": suf.arms["none"].rank,
        "necessity": {m: nec.drop(m) for m in methods},
        "sufficiency": {m: suf.arms[m].rank for m in methods},
        "budget": {m: len(sets[m]) for m in methods},
        "own_size": {m: len(own[m]) for m in methods},
    }


def budgeted(
    explainer: KGExplainer, target: tuple, own: dict[str, list], seed: int
) -> dict[str, tuple]:
    """Every method's triples at the explanation's size ``n`` (the equal-budget rule).

    ``shortest`` is padded with its next candidate paths (enumeration order: shortest first),
    every other method with the triples of the local candidate paths in a random order seeded
    by ``seed`` (:func:`kg.explain.faithful.equal_budget`, repeats skipped).
    """
    n = len(own[METHOD])
    num_paths = len(explainer.local_structure(target).paths)
    generator = torch.Generator().manual_seed(seed)
    random_order = torch.randperm(num_paths, generator=generator).tolist()
    filler_random = path_triples(explainer, target, random_order)
    filler_shortest = path_triples(explainer, target, list(range(num_paths)))
    return {
        m: equal_budget(triples, n, filler_shortest if m == "shortest" else filler_random)
        for m, triples in own.items()
    }


def faithful_summary(rows: list[dict], methods: list[str], seed: int) -> dict[str, Any]:
    """Per method, necessity and sufficiency over the rows with an explanation (``n > 0``).

    Each row holds ``necessity`` (method -> rank drop against the control), ``sufficiency``
    (method -> rank) and the reference ranks ``original_rank``, ``control_rank`` and
    ``none_rank``. Per method: mean and median of both; for every method but the explainer
    (the first of ``methods``), the paired mean difference explainer - method with its 95%
    bootstrap interval (:func:`bootstrap`, seeded by ``seed``).
    """
    done = [r for r in rows if r["n"]]
    first = methods[0]
    summary: dict[str, Any] = {"explained": len(done)}
    for m in methods:
        nec_m = [r["necessity"][m] for r in done]
        suf_m = [r["sufficiency"][m] for r in done]
        entry: dict[str, Any] = {
            "necessity_mean": statistics.fmean(nec_m) if nec_m else None,
            "necessity_median": statistics.median(nec_m) if nec_m else None,
            "sufficiency_mean_rank": statistics.fmean(suf_m) if suf_m else None,
            "sufficiency_median_rank": statistics.median(suf_m) if suf_m else None,
        }
        if m != first:
            d_nec = [r["necessity"][first] - r["necessity"][m] for r in done]
            d_suf = [r["sufficiency"][first] - r["sufficiency"][m] for r in done]
            entry["paired_necessity_diff"] = statistics.fmean(d_nec) if d_nec else None
            entry["paired_necessity_ci"] = bootstrap(d_nec, seed)
            entry["paired_sufficiency_diff"] = statistics.fmean(d_suf) if d_suf else None
            entry["paired_sufficiency_ci"] = bootstrap(d_suf, seed)
        summary[m] = entry
    for key in ("original_rank", "control_rank", "none_rank"):
        summary[f"mean_{key}"] = statistics.fmean(r[key] for r in done) if done else None
    return summary


def run_world(name: str, args: argparse.Namespace) -> dict[str, Any]:
    start = time.perf_counter()
    dataset, f1, candidates = load(name, args.size, args.people, args.seed)
    training = explained_training("complex", epochs=args.epochs, progress=False, seed=args.seed)
    model = build_model("complex", dataset, training, dim=EXPLAINED_DIM)
    trainer = train(model, dataset, training)
    model.eval()
    test_mrr = trainer.evaluate(dataset).mrr
    train_s = time.perf_counter() - start
    print(
        f"[{name}] {dataset.num_entities} entities, {len(dataset.train)} train; ComplEx "
        f"test MRR {test_mrr:.3f} ({train_s:.0f} s)",
        flush=True,
    )
    random.Random(args.seed).shuffle(candidates)
    targets = predicted(model, dataset, candidates)[: args.targets]
    t0 = time.perf_counter()
    explainer = KGExplainer(model).fit(dataset, progress=False)
    fit_s = time.perf_counter() - t0
    evaluator = FaithfulEvaluator(model, dataset, training=training, config=FaithfulConfig())
    methods = [METHOD, *BASELINES]
    rows: list[dict[str, Any]] = []
    explain_s = faithful_s = 0.0
    for i, target in enumerate(targets):
        t0 = time.perf_counter()
        own, explanation = method_triples(explainer, target)
        explain_s += time.perf_counter() - t0
        n = len(own[METHOD])
        if n == 0:
            rows.append({"target": list(target), "n": 0, "note": explanation.message})
            continue
        sets = budgeted(explainer, target, own, args.seed + i)
        t0 = time.perf_counter()
        nec = evaluator.necessity(target, sets)
        suf = evaluator.sufficiency(target, sets)
        faithful_s += time.perf_counter() - t0
        row: dict[str, Any] = {
            "target": list(target),
            "n": n,
            **faithful_fields(nec, suf, sets, own, methods),
            "f1": {m: f1(list(sets[m]), target) for m in methods},
            "f1_own": {m: f1(own[m], target) for m in methods},
        }
        rows.append(row)
        print(
            f"[{name}] {i + 1}/{len(targets)} n={n} ctrl {row['control_rank']:.1f} nec "
            + " ".join(f"{m} {row['necessity'][m]:.1f}" for m in methods),
            flush=True,
        )
    done = [r for r in rows if r["n"]]
    summary = faithful_summary(rows, methods, args.seed)
    summary["targets"] = len(targets)
    for m in methods:
        nec_m = [r["necessity"][m] for r in done]
        f1_m = [r["f1"][m] for r in done]
        entry = summary[m]
        entry["f1_mean"] = statistics.fmean(f1_m) if f1_m else None
        entry["spearman_necessity_f1"] = rank_correlation(nec_m, f1_m)
    return {
        "world": name,
        "num_entities": dataset.num_entities,
        "num_train": len(dataset.train),
        "complex_test_mrr": test_mrr,
        "train_seconds": train_s,
        "explainer_fit_seconds": fit_s,
        "explain_seconds_per_target": explain_s / max(len(targets), 1),
        "faithful_seconds_per_target": faithful_s / max(len(done), 1),
        "summary": summary,
        "rows": rows,
        "seconds": time.perf_counter() - start,
    }


def _num(value: float | None, spec: str) -> str:
    """``value`` formatted by ``spec``; ``n/a`` for None (undefined: nothing to average)."""
    return "n/a" if value is None else format(value, spec)


def _diff(mean: float | None, interval: tuple[float | None, float | None]) -> str:
    """``+d [+lo, +hi]``, ``n/a`` for what is undefined."""
    lo, hi = interval
    return f"{_num(mean, '+.1f')} [{_num(lo, '+.1f')}, {_num(hi, '+.1f')}]"


def _cell(entry: dict[str, Any], key: str) -> str:
    """A table cell: ``-`` where the key is absent (no ground truth), ``n/a`` where undefined."""
    return "-" if key not in entry else _num(entry[key], ".2f")


def rank_correlation(necessity: list[float], f1: list[float]) -> float | None:
    """Spearman's rho of ``necessity`` and ``f1``; None where it is undefined.

    Undefined (a constant side has no ranks to correlate, e.g. a method whose F1 is 0 on every
    target) is reported as None (JSON null, ``n/a`` in the table), never NaN.
    """
    if len(set(necessity)) < 2 or len(set(f1)) < 2:
        return None
    return float(spearmanr(necessity, f1).statistic)


def markdown(results: list[dict[str, Any]]) -> str:
    """The necessity/sufficiency table of RESULTS.md, one block of rows per world.

    Each result holds ``world`` (the row label) and ``summary`` (:func:`faithful_summary`, with
    ``f1_mean`` and ``spearman_necessity_f1`` per method where there is ground truth; ``-``
    where not). Methods missing from a summary are left out.
    """
    methods = [METHOD, *BASELINES]
    lines = [
        "| world | method | necessity mean (median) | paired diff vs KGExplainer [95% CI] | "
        "sufficiency rank mean (median) | paired diff [95% CI] | F1 | Spearman(nec, F1) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for res in results:
        s = res["summary"]
        for m in methods:
            if m not in s:
                continue
            e = s[m]
            if m == METHOD:
                nd = sd = "-"
            else:
                nd = _diff(e["paired_necessity_diff"], e["paired_necessity_ci"])
                sd = _diff(e["paired_sufficiency_diff"], e["paired_sufficiency_ci"])
            # no ground truth (FB15k-237): no F1 columns
            f1 = _cell(e, "f1_mean")
            rho = _cell(e, "spearman_necessity_f1")
            lines.append(
                f"| {res['world']} ({s['explained']}) | {m} | {_num(e['necessity_mean'], '.1f')} "
                f"({_num(e['necessity_median'], '.1f')}) | {nd} | "
                f"{_num(e['sufficiency_mean_rank'], '.1f')} "
                f"({_num(e['sufficiency_median_rank'], '.1f')}) | {sd} | {f1} | {rho} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worlds", default="academic,geography,biology,family")
    parser.add_argument("--size", type=int, default=None, help="world size (default: each world's)")
    parser.add_argument("--people", type=int, default=300, help="family world: people")
    parser.add_argument("--targets", type=int, default=20)
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=None, help="JSON file for the results (default: none)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    results = []
    for name in args.worlds.split(","):
        results.append(run_world(name, args))
        table = markdown(results)
        tree = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "kg/explain"], capture_output=True, text=True
        ).stdout
        payload = {
            "args": vars(args),
            "git_head": tree,
            "kg_explain_uncommitted": dirty.splitlines(),
            "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "hardware": {
                "platform": platform.platform(),
                "cpus": os.cpu_count(),
                "python": sys.version.split()[0],
                "torch": torch.__version__,
            },
            "faithful_config": vars(FaithfulConfig()),
            "results": results,
            "markdown": table,
        }
        if args.out is not None:  # rewritten after every world, so a killed run keeps the rest
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(args.out, json.dumps(payload, indent=1, default=str, allow_nan=False))
    print(markdown(results))


if __name__ == "__main__":
    main()
