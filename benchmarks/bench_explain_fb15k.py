"""KGExplainer on FB15k-237: hub local structures, fidelity against baselines, parallel speed-up.

Run: ``.venv/bin/python -m benchmarks.bench_explain_fb15k --checkpoint CKPT [--evaluator FILE]
[--strategy NAME] [--targets 100] [--parallel-targets 20] [--faithful N] [--out FILE]``. ``CKPT``
is a ``graphlib kg train`` checkpoint of a model trained on ``--dataset`` (default
``../shared/datasets/kg/fb15k237`` next to the repository; without ``--checkpoint`` a ComplEx is
trained here with the library's defaults for ``--epochs`` epochs). ``--evaluator FILE`` is a
cache: loaded when it exists, else distilled (library defaults but ``hops``/``max_length``) and
written there, so a second run (e.g. with another ``--strategy``) skips the distillation.
Issues 18 (last bullet) and 22 ("Explanations at scale").

* **Configuration**: the library's ``hops`` and ``max_length`` (:class:`ExplainerConfig`, 2 and
  3) by default. Until session 31 the defaults were 1 and 2: around FB15k-237's hubs the 2-hop
  enclosing subgraph holds tens of thousands of triples (the ``--hub-targets`` part measures
  them), which the explanations now prune (:mod:`kg.explain.local`, "Pruning") but the
  evaluator's agreement step scored whole and ran out of memory; it now scores the subgraphs cut
  as the distillation cuts them (:meth:`DistilledEvaluator.score_triples` with the teacher).
  ``--strategy`` defaults to the library's default.

* **Targets**: test triples the model ranks first (filtered tail rank 1), ``--targets`` of them
  drawn with ``--seed``.
* **Graph**: the training triples without their self-loops (FB15k-237 has 1,625; no simple path
  between two entities uses one, and the distillation refuses self-pairs).
* **Local structure** per target: nodes, triples, candidate paths enumerated and kept per
  length, and how they were pruned (:class:`kg.explain.local.Pruning`); with ``--hub-targets``
  also the ``hops=2``/``max_length=3`` structures (beam search with the KGE's edge
  probabilities, :func:`kg.explain.local.model_relevance`) to show their size.
* **Fidelity**: probability and model fidelity (:mod:`kg.explain.fidelity`) of KGExplainer and
  of baselines at the **same number of triples** :math:`k = |S|` on the same local graph: ``k``
  random local triples, the first ``k`` triples of the shortest candidate paths, the ``k``
  triples of largest integrated-gradient relevance, the GNNExplainer edge mask (at most ``k``),
  and KGExplainer on the candidates of the old cap (first paths of each length in enumeration
  order) for the pruned targets.
* **Time**: seconds per explanation (local structure and search), one thread; the graph's
  adjacency (:class:`kg.explain.local.LocalIndex`) is built before the clock starts (reported
  apart), the distillation is timed on its own. ``--max-seconds`` stops the loop early.
* **Parallel** (``--parallel-targets``): :func:`kg.explain.parallel.explain_parallel` with 2
  workers of one thread against the serial ``explain_all`` on one thread, outputs compared.
* **Model-faithful** (``--faithful N``, off by default): on ``N`` targets (the first, or from
  ``--faithful-offset``, to continue a run stopped by ``--faithful-max-seconds``), necessity
  (the KGE's filtered rank after relearning the target's endpoints without the triples, minus
  the control's with nothing removed) and sufficiency (the rank when the endpoints keep only
  those of their triples) of :meth:`KGExplainer.explain` and of the baselines
  ``--faithful-baselines`` (:data:`kg.explain.explainer.BASELINES`) at the explanation's size,
  with :mod:`kg.explain.faithful` (``FaithfulConfig`` defaults unless ``--faithful-steps`` or
  ``--faithful-endpoint-only``) and the equal-budget rule, summary and paired bootstrap of
  ``benchmarks.bench_explain_faithful``. Seconds per target for the explanations and for the
  relearning are reported apart; ``--faithful-max-seconds`` stops the loop early. There is no
  ground truth on FB15k-237: no F1.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import math
import os
import platform
import resource
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch

from benchmarks._explain_model import EXPLAINED_DIM, explained_training
from benchmarks.bench_explain_faithful import (
    METHOD,
    budgeted,
    faithful_fields,
    faithful_summary,
    markdown,
    method_triples,
)
from graphdata.triples import KGDataset, TripleSet
from kg.base import KGEModel
from kg.config import TrainingConfig
from kg.evaluation import evaluate
from kg.explain.baselines import edge_mask_explainer
from kg.explain.evaluator import DistilledEvaluator, EvaluatorConfig
from kg.explain.explainer import BASELINES, SEARCHES, STRATEGIES, ExplainerConfig, KGExplainer
from kg.explain.faithful import FaithfulConfig, FaithfulEvaluator
from kg.explain.fidelity import characterization_score, model_fidelity, probability_fidelity
from kg.explain.local import (
    CandidatesCapped,
    LocalStructure,
    gradient_relevance,
    local_structure,
    model_relevance,
)
from kg.explain.parallel import explain_parallel

DEFAULT_DATASET = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "kg" / "fb15k237"
#: The baselines at equal size, in table order.
BASELINE_NAMES = ("random", "shortest", "relevance_topk", "edge_mask", "old_cap")


def _load() -> list[float]:
    """The 1-, 5- and 15-minute load averages (the machine is shared: timings depend on it)."""
    return [round(x, 2) for x in os.getloadavg()]


def _peak_rss_gib() -> float:
    """Peak resident memory of this process so far, GiB (Linux: ``ru_maxrss`` in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _model_and_dataset(args: argparse.Namespace) -> tuple[KGEModel, KGDataset, TrainingConfig]:
    """The model, its dataset and the training config it was trained with."""
    if args.checkpoint:
        from kg.datasets import load_checkpoint_with_dataset

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the dropped unseen labels (PyKEEN's behaviour)
            model, ckpt, dataset = load_checkpoint_with_dataset(
                args.checkpoint, str(args.dataset), torch.device("cpu"), on_unknown="drop"
            )
        return model.eval(), dataset, TrainingConfig(**ckpt["training"]["config"])
    from kg.training import Trainer, build_model

    dataset = KGDataset.from_folder(args.dataset, on_unknown="drop")
    config = explained_training(
        "complex", epochs=args.epochs, eval_every=0, progress=False, seed=args.seed
    )
    model = build_model("complex", dataset, config, dim=EXPLAINED_DIM)
    Trainer(model, config).fit(dataset)
    return model.eval(), dataset, config


def _targets(
    model: KGEModel, dataset: KGDataset, reciprocal: bool, n: int, seed: int
) -> tuple[list, dict[str, float]]:
    """``n`` test triples of filtered tail rank 1 (no self-loops), and the test metrics."""
    test = dataset.test.mapped_triples
    metrics = evaluate(model, test, dataset.filter_index(), reciprocal=reciprocal, progress=False)
    ranks = metrics.ranks("tail")
    both = metrics.ranks("both")
    summary = {
        "test_mrr": float((1.0 / both).mean()),
        "test_hits_at_10": float((both <= 10).double().mean()),
        "test_tail_rank1": int((ranks == 1.0).sum()),
        "test_triples": test.size(0),
    }
    first = test[ranks == 1.0]
    first = first[first[:, 0] != first[:, 2]]
    pick = torch.randperm(first.size(0), generator=torch.Generator().manual_seed(seed))[:n]
    print(
        f"test MRR {summary['test_mrr']:.3f}, Hits@10 {summary['test_hits_at_10']:.3f}; "
        f"test triples ranked first (tail): {first.size(0)} of {test.size(0)}; explaining "
        f"{pick.numel()}",
        flush=True,
    )
    return [tuple(int(x) for x in row) for row in first[pick].tolist()], summary


def _first_k(local: LocalStructure, order: list[int], k: int) -> torch.Tensor:
    mask = torch.zeros(local.num_edges, dtype=torch.bool)
    mask[order[:k]] = True
    return mask


def _baseline_masks(
    explainer: KGExplainer, local: LocalStructure, k: int, seed: int
) -> dict[str, torch.Tensor]:
    """Masks of ``k`` triples (at most) of each equal-size baseline on one local graph."""
    m = local.num_edges
    generator = torch.Generator().manual_seed(seed)
    shortest: list[int] = []
    for path in local.paths:  # shortest first, then enumeration order
        shortest += [e for e in path if e not in shortest]
    assert explainer.evaluator_ is not None
    relevance = gradient_relevance(explainer.evaluator_.score_local)(local)
    _, edge_mask = edge_mask_explainer(
        local, explainer.evaluator_, explainer.probability, max_triples=k, seed=seed
    )
    return {
        "random": _first_k(local, torch.randperm(m, generator=generator).tolist(), k),
        "shortest": _first_k(local, shortest, k),
        "relevance_topk": _first_k(
            local, torch.argsort(relevance, descending=True, stable=True).tolist(), k
        ),
        "edge_mask": edge_mask,
    }


def _probabilities(
    explainer: KGExplainer, local: LocalStructure, masks: list[torch.Tensor]
) -> tuple[float, list[tuple[float, float]]]:
    """``(p(G), [(p(S), p(G \\ S)) per mask])`` under the evaluator."""
    scorer = explainer.scorer(local)
    full = torch.ones(1, local.num_edges, dtype=torch.bool)
    rows = torch.cat([full] + [torch.stack([s, ~s]) for s in masks])
    p = explainer.probability(scorer(rows))
    return float(p[0]), [(float(p[1 + 2 * i]), float(p[2 + 2 * i])) for i in range(len(masks))]


def _fidelity(rows: list[dict], name: str) -> dict:
    sel = [r for r in rows if name in r["methods"]]
    if not sel:
        return {"n": 0}
    full = torch.tensor([r["p_full"] for r in sel])
    joint = torch.tensor([r["methods"][name]["p_joint"] for r in sel])
    comp = torch.tensor([r["methods"][name]["p_complement"] for r in sel])
    fp, fm = probability_fidelity(full, comp, joint)
    mp, mm = model_fidelity(full, comp, joint)
    return {
        "n": len(sel),
        "fid_plus": fp,
        "fid_minus": fm,
        "characterization": characterization_score(fp, fm),
        "model_fid_plus": mp,
        "model_fid_minus": mm,
        "mean_triples": statistics.fmean(r["methods"][name]["size"] for r in sel),
        "vs_kgexplainer": _paired(sel, name),
    }


def _paired(rows: list[dict], name: str) -> dict:
    """KGExplainer against ``name`` target by target (rows holding both).

    ``necessity_wins``: targets where removing KGExplainer's triples lowers :math:`p` more
    (p(G without S) smaller); ``sufficiency_wins``: where its triples alone keep
    more (p(S) larger); ``*_losses`` the reverse, ties (equal within 1e-6) in neither;
    ``equal_size``: targets where both have the same number of triples.
    """
    if name == "kgexplainer":
        return {}
    pairs = [(r["methods"]["kgexplainer"], r["methods"][name]) for r in rows]
    tol = 1e-6
    return {
        "n": len(pairs),
        "equal_size": sum(a["size"] == b["size"] for a, b in pairs),
        "necessity_wins": sum(a["p_complement"] < b["p_complement"] - tol for a, b in pairs),
        "necessity_losses": sum(a["p_complement"] > b["p_complement"] + tol for a, b in pairs),
        "sufficiency_wins": sum(a["p_joint"] > b["p_joint"] + tol for a, b in pairs),
        "sufficiency_losses": sum(a["p_joint"] < b["p_joint"] - tol for a, b in pairs),
    }


def _explain_targets(
    explainer: KGExplainer, targets: list, seed: int, max_seconds: float | None = None
) -> list[dict]:
    """Explain each target and score the equal-size baselines; stop after ``max_seconds``."""
    cfg = explainer.config
    rows: list[dict] = []
    loop_start = time.perf_counter()
    for i, target in enumerate(targets):
        if max_seconds is not None and time.perf_counter() - loop_start > max_seconds:
            print(f"  --max-seconds {max_seconds:g} reached: {i} of {len(targets)} explained")
            break
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CandidatesCapped)  # recorded in local.pruning
            local = explainer.local_structure(target)
            local_seconds = time.perf_counter() - start
            e = SEARCHES[cfg.strategy](explainer, local, explainer.scorer(local), cfg.mode, start)
        seconds = time.perf_counter() - start
        pruning = local.pruning
        assert pruning is not None
        row = {
            "target": target,
            "seconds": seconds,
            "local_seconds": local_seconds,
            "nodes": local.num_nodes,
            "triples": local.num_edges,
            "enumerated": pruning.enumerated,
            "kept": pruning.kept,
            "overflow": pruning.overflow,
            "pruning": pruning.method,
            "p_full": e.full_probability,
            "paths": len(e.paths),
            "stop_reason": e.stop_reason,
            "methods": {},
        }
        k = len(e.triples)
        if k and local.num_edges:
            row["methods"]["kgexplainer"] = {
                "size": k,
                "p_joint": e.joint_probability,
                "p_complement": e.complement_probability,
            }
            masks = _baseline_masks(explainer, local, k, seed + i)
            p_full, probs = _probabilities(explainer, local, list(masks.values()))
            row["p_full_check"] = p_full
            for (name, mask), (pj, pc) in zip(masks.items(), probs):
                row["methods"][name] = {"size": int(mask.sum()), "p_joint": pj, "p_complement": pc}
            if pruning.method == "relevance":  # the same search on the old cap's candidates
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", CandidatesCapped)
                    old = local_structure(
                        explainer._edge_index,
                        explainer._edge_type,
                        target,
                        num_nodes=explainer.graph_.num_entities,
                        hops=cfg.hops,
                        max_length=cfg.max_length,
                        max_candidates=cfg.max_candidates,
                    )
                o = SEARCHES[cfg.strategy](explainer, old, explainer.scorer(old), cfg.mode, 0.0)
                row["methods"]["old_cap"] = {
                    "size": len(o.triples),
                    "p_joint": o.joint_probability,
                    "p_complement": o.complement_probability,
                }
        rows.append(row)
        if (i + 1) % 10 == 0 or i + 1 == len(targets):
            print(
                f"  {i + 1}/{len(targets)} explained; mean "
                f"{statistics.fmean(r['seconds'] for r in rows):.2f} s"
                f" per explanation, {sum(r['pruning'] == 'relevance' for r in rows)} pruned; "
                f"load {_load()}",
                flush=True,
            )
    return rows


def _hub_structures(explainer: KGExplainer, targets: list, hops: int, max_length: int) -> list:
    """Size and time of the ``hops``/``max_length`` local structures (model relevance)."""
    out = []
    relevance = model_relevance(explainer.model, explainer.calibration_)
    for target in targets:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CandidatesCapped)
            local = local_structure(
                explainer._edge_index,
                explainer._edge_type,
                target,
                num_nodes=explainer.graph_.num_entities,
                hops=hops,
                max_length=max_length,
                max_candidates=explainer.config.max_candidates,
                relevance=relevance,
            )
        assert local.pruning is not None
        out.append(
            {
                "target": target,
                "seconds": time.perf_counter() - start,
                "nodes": local.num_nodes,
                "triples": local.num_edges,
                "enumerated": local.pruning.enumerated,
                "kept": local.pruning.kept,
                "overflow": local.pruning.overflow,
                "pruning": local.pruning.method,
            }
        )
    return out


def _parallel(explainer: KGExplainer, targets: list, mode: str) -> dict:
    """Serial ``explain_all`` (one thread) against 2 forked workers of one thread each.

    The pattern strategy caches its path counts per relation, and forked workers inherit the
    parent's caches. So the two sides are timed cold, each on its own copy of the explainer as
    fitted (a user's first call), and then warm: once more each, the parent's caches now filled
    by the serial run.
    """
    torch.set_num_threads(1)
    load_before = _load()
    cold_copy = copy.deepcopy(explainer)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        serial = explainer.explain_all(targets, progress=False, mode=mode)
        serial_s = time.perf_counter() - start
        start = time.perf_counter()
        parallel = explain_parallel(cold_copy, targets, workers=2, threads=1, mode=mode)
        parallel_s = time.perf_counter() - start
        start = time.perf_counter()
        explainer.explain_all(targets, progress=False, mode=mode)
        warm_serial_s = time.perf_counter() - start
        start = time.perf_counter()
        explain_parallel(explainer, targets, workers=2, threads=1, mode=mode)
        warm_parallel_s = time.perf_counter() - start

    def strip(xs: list) -> list[str]:
        # JSON text: NaN fields (a gain the pattern and node searches do not have) compare equal
        return [json.dumps(dataclasses.replace(x, seconds=0.0).to_dict()) for x in xs]

    a, b = strip(serial), strip(parallel)
    return {
        "targets": len(targets),
        "mode": mode,
        "serial_seconds": serial_s,
        "parallel2_seconds": parallel_s,
        "speedup": serial_s / max(parallel_s, 1e-9),
        "warm_serial_seconds": warm_serial_s,
        "warm_parallel2_seconds": warm_parallel_s,
        "warm_speedup": warm_serial_s / max(warm_parallel_s, 1e-9),
        "identical": a == b,
        "differing_targets": sum(x != y for x, y in zip(a, b)),
        "load_average_before": load_before,
        "load_average_after": _load(),
    }


def _faithful(
    explainer: KGExplainer,
    dataset: KGDataset,
    training: TrainingConfig,
    targets: list,
    args: argparse.Namespace,
    results: dict,
) -> dict:
    """Necessity and sufficiency on the KGE of the explainer and the baselines at equal size.

    Per target: :func:`benchmarks.bench_explain_faithful.method_triples` (the explanation and
    each of ``--faithful-baselines``), then, for a non-empty explanation of ``n`` triples,
    :func:`~benchmarks.bench_explain_faithful.budgeted` (every method cut or padded to ``n``)
    and one :meth:`FaithfulEvaluator.necessity` and one :meth:`~FaithfulEvaluator.sufficiency`
    call over all methods (their arms share the control and the fine-tuning batch). The summary
    is :func:`~benchmarks.bench_explain_faithful.faithful_summary` over the non-empty rows.
    ``results["faithful"]`` is rewritten to ``--out`` after every target.
    """
    baselines = tuple(b for b in args.faithful_baselines.split(",") if b)
    unknown = sorted(set(baselines) - set(BASELINES))
    if unknown:
        raise SystemExit(f"--faithful-baselines: unknown {unknown}; choose from {BASELINES}")
    methods = [METHOD, *baselines]
    config = FaithfulConfig(
        steps=args.faithful_steps, neighbours=not args.faithful_endpoint_only, seed=args.seed
    )
    start = time.perf_counter()
    evaluator = FaithfulEvaluator(explainer.model, dataset, training=training, config=config)
    init_seconds = time.perf_counter() - start
    train = dataset.train.mapped_triples
    degree = torch.bincount(train[:, [0, 2]].reshape(-1), minlength=dataset.num_entities)
    labels, relations = dataset.entities.labels, dataset.relations.labels
    print(
        f"faithful: {len(targets)} targets, methods {methods}, {config}; evaluator built in "
        f"{init_seconds:.1f} s (the frozen log-normalisers of every training query); load "
        f"{_load()}",
        flush=True,
    )
    out: dict = {
        "config": dataclasses.asdict(config),
        "methods": methods,
        "init_seconds": init_seconds,
        "load_average_start": _load(),
        "rows": [],
    }
    results["faithful"] = out
    rows: list[dict] = out["rows"]
    loop_start = time.perf_counter()
    for i, target in enumerate(targets):
        if (
            args.faithful_max_seconds is not None
            and time.perf_counter() - loop_start > args.faithful_max_seconds
        ):
            print(f"  --faithful-max-seconds reached: {i} of {len(targets)} evaluated")
            break
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CandidatesCapped)  # recorded in local.pruning
            own, explanation = method_triples(explainer, target, baselines)
            explain_seconds = time.perf_counter() - t0
            n = len(own[METHOD])
            row: dict = {
                "index": args.faithful_offset + i,
                "target": list(target),
                "labels": [labels[target[0]], relations[target[1]], labels[target[2]]],
                "head_degree": int(degree[target[0]]),
                "tail_degree": int(degree[target[2]]),
                "n": n,
                "explain_seconds": explain_seconds,
            }
            if n == 0:
                note = f": {explanation.message}" if explanation.message else ""
                row["note"] = explanation.stop_reason + note
                rows.append(row)
                continue
            index = args.faithful_offset + i  # the target's place in the draw: as in one run
            sets = budgeted(explainer, target, own, args.seed + index)
        t0 = time.perf_counter()
        nec = evaluator.necessity(target, sets)
        suf = evaluator.sufficiency(target, sets)
        row.update(
            {
                "faithful_seconds": time.perf_counter() - t0,
                **faithful_fields(nec, suf, sets, own, methods),
            }
        )
        rows.append(row)
        print(
            f"  {i + 1}/{len(targets)} n={n} deg h {row['head_degree']} t {row['tail_degree']}: "
            f"{row['faithful_seconds']:.1f} s; ctrl {row['control_rank']:.1f} nec "
            + " ".join(f"{m} {row['necessity'][m]:.1f}" for m in methods)
            + f"; load {_load()}",
            flush=True,
        )
        _write(args.out, results)
    done = [r for r in rows if r["n"]]
    summary = faithful_summary(rows, methods, args.seed)
    summary["targets"] = len(rows)
    out.update(
        {
            "evaluated": len(rows),
            "explained": len(done),
            "empty": len(rows) - len(done),
            "explain_seconds": _summary([r["explain_seconds"] for r in rows]),
            "faithful_seconds": _summary([r["faithful_seconds"] for r in done]),
            "loop_seconds": time.perf_counter() - loop_start,
            "load_average_end": _load(),
            "summary": summary,
            "markdown": markdown([{"world": "FB15k-237", "summary": summary}]),
        }
    )
    print(out["markdown"], flush=True)
    return out


def _summary(values: list[float]) -> dict:
    if not values:
        return {}
    ordered = sorted(values)
    return {
        "mean": statistics.fmean(ordered),
        "median": statistics.median(ordered),
        "p90": ordered[math.ceil(0.9 * len(ordered)) - 1],  # nearest rank
        "max": ordered[-1],
    }


def _write(path: Path | None, results: dict) -> None:
    """Write the results so far (after each part: a run stopped later keeps them)."""
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results, indent=1))


def _fit(
    args: argparse.Namespace, model: KGEModel, graph: TripleSet, config: ExplainerConfig
) -> tuple[KGExplainer, float | None, float]:
    """The fitted explainer, the distillation's seconds (``None`` when loaded) and the fit's."""
    path = Path(args.evaluator) if args.evaluator else None
    evaluator = None
    distil_seconds = None
    if path is not None and path.exists():
        evaluator = DistilledEvaluator.load(path)
        evaluator.graph_ = graph  # a loaded evaluator keeps no graph
        print(f"evaluator loaded from {path}", flush=True)
    else:
        start = time.perf_counter()
        evaluator = DistilledEvaluator(config.evaluator).fit(model, graph, progress=False)
        distil_seconds = time.perf_counter() - start
        print(
            f"evaluator distilled in {distil_seconds:.1f} s ({config.evaluator}); load {_load()}",
            flush=True,
        )
        if path is not None:
            evaluator.save(path)
            print(f"evaluator written to {path}", flush=True)
    start = time.perf_counter()
    explainer = KGExplainer(model, config).fit(graph, evaluator=evaluator, progress=False)
    return explainer, distil_seconds, time.perf_counter() - start


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark (module docstring); return the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--checkpoint", default=None, help="graphlib kg train checkpoint.pt")
    parser.add_argument("--epochs", type=int, default=1, help="training without --checkpoint")
    parser.add_argument(
        "--evaluator", default=None, help="evaluator cache: loaded if it exists, else written"
    )
    parser.add_argument("--evaluator-steps", type=int, default=EvaluatorConfig.steps)
    parser.add_argument("--strategy", default=None, choices=STRATEGIES, help="default: library's")
    parser.add_argument("--hops", type=int, default=ExplainerConfig.hops)
    parser.add_argument("--max-length", type=int, default=ExplainerConfig.max_length)
    parser.add_argument("--max-candidates", type=int, default=ExplainerConfig.max_candidates)
    parser.add_argument("--targets", type=int, default=100)
    parser.add_argument("--max-seconds", type=float, default=None, help="explanation loop limit")
    parser.add_argument("--hub-targets", type=int, default=20)
    parser.add_argument("--parallel-targets", type=int, default=20)
    parser.add_argument(
        "--parallel-mode", default="evaluator", choices=("evaluator", "retrain"), help="scorer"
    )
    parser.add_argument("--skip-fidelity", action="store_true", help="no evaluator fidelity")
    parser.add_argument("--faithful", type=int, default=0, help="targets relearned (0: none)")
    parser.add_argument("--faithful-baselines", default=",".join(BASELINES))
    parser.add_argument("--faithful-steps", type=int, default=FaithfulConfig.steps)
    parser.add_argument(
        "--faithful-endpoint-only", action="store_true", help="FaithfulConfig(neighbours=False)"
    )
    parser.add_argument("--faithful-max-seconds", type=float, default=None)
    parser.add_argument(
        "--faithful-offset", type=int, default=0, help="skip the first targets (continue a run)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    wall = time.perf_counter()
    results: dict = {
        "host": platform.node(),
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "threads": args.threads,
        "cpu_count": os.cpu_count(),
        "load_average": {"start": _load()},
        "config": {k: str(v) for k, v in vars(args).items()},
    }
    model, dataset, training = _model_and_dataset(args)
    reciprocal = training.reciprocal
    train = dataset.train.mapped_triples
    loops = train[:, 0] == train[:, 2]
    graph = TripleSet(train[~loops], dataset.train.entities, dataset.train.relations)
    print(f"dataset {dataset}; model {model!r}; {int(loops.sum())} self-loop triples left out")
    targets, results["model"] = _targets(model, dataset, reciprocal, args.targets, args.seed)
    evaluator_cfg = EvaluatorConfig(
        hops=args.hops, max_length=args.max_length, steps=args.evaluator_steps, seed=args.seed
    )
    config = ExplainerConfig(
        hops=args.hops,
        max_length=args.max_length,
        max_candidates=args.max_candidates,
        evaluator=evaluator_cfg,
        seed=args.seed,
    )
    if args.strategy is not None:
        config.strategy = args.strategy
    results["strategy"] = config.strategy
    results["load_average"]["before_fit"] = _load()
    explainer, distil_seconds, fit_seconds = _fit(args, model, graph, config)
    results["load_average"]["after_fit"] = _load()
    assert explainer.evaluator_ is not None
    results["distil_seconds"] = distil_seconds
    results["fit_seconds"] = fit_seconds
    print(f"explainer fitted in {fit_seconds:.1f} s (evaluator given; strategy {config.strategy})")
    test = dataset.test.mapped_triples
    agreement = explainer.evaluator_.agreement(
        model, test[test[:, 0] != test[:, 2]][:500], num_queries=20, seed=args.seed
    )
    results["evaluator_agreement"] = agreement
    print(f"evaluator agreement with the model (500 test triples): {agreement}")
    if targets:  # the graph's adjacency, built once, off the per-explanation clock
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CandidatesCapped)
            explainer.local_structure(targets[0])
        results["index_seconds"] = time.perf_counter() - start
    rows = (
        []
        if args.skip_fidelity
        else _explain_targets(explainer, targets, args.seed, args.max_seconds)
    )
    results["load_average"]["after_explanations"] = _load()
    fidelity = {name: _fidelity(rows, name) for name in ("kgexplainer",) + BASELINE_NAMES}
    for name, f in fidelity.items():
        if f["n"]:
            v = f["vs_kgexplainer"]
            print(
                f"  {name:>14}: n {f['n']:3d}, |S| {f['mean_triples']:.2f}, "
                f"fid+ {f['fid_plus']:.3f}, "
                f"fid- {f['fid_minus']:.3f}, charact {f['characterization']:.3f}, model fid+ "
                f"{f['model_fid_plus']:.3f} fid- {f['model_fid_minus']:.3f}"
                + (
                    f"; KGExplainer necessity wins/losses {v['necessity_wins']}/"
                    f"{v['necessity_losses']}, sufficiency {v['sufficiency_wins']}/"
                    f"{v['sufficiency_losses']}, equal size {v['equal_size']}"
                    if v
                    else ""
                )
            )
    results.update(
        {
            "explained": len(rows),
            "seconds_per_explanation": _summary([r["seconds"] for r in rows]),
            "local_seconds": _summary([r["local_seconds"] for r in rows]),
            "local_nodes": _summary([float(r["nodes"]) for r in rows]),
            "local_triples": _summary([float(r["triples"]) for r in rows]),
            "candidates_enumerated": _summary([float(sum(r["enumerated"])) for r in rows]),
            "candidates_kept": _summary([float(sum(r["kept"])) for r in rows]),
            "pruning_methods": {
                m: sum(r["pruning"] == m for r in rows)
                for m in sorted({r["pruning"] for r in rows})
            },
            "pruned_targets": sum(r["pruning"] == "relevance" for r in rows),
            "beam_targets": sum(any(r["overflow"]) for r in rows),
            "empty_explanations": sum(not r["methods"] for r in rows),
            "fidelity": fidelity,
            "rows": rows,
        }
    )
    if rows:
        print(
            "seconds per explanation "
            + ", ".join(f"{k} {v:.2f}" for k, v in results["seconds_per_explanation"].items())
            + "; local triples "
            + ", ".join(f"{k} {v:.0f}" for k, v in results["local_triples"].items())
            + f"; pruning {results['pruning_methods']}, beam {results['beam_targets']}, "
            f"empty {results['empty_explanations']}",
            flush=True,
        )
    _write(args.out, results)
    if args.faithful:
        chosen = targets[args.faithful_offset : args.faithful_offset + args.faithful]
        _faithful(explainer, dataset, training, chosen, args, results)
        _write(args.out, results)
    if args.hub_targets:
        hubs = _hub_structures(explainer, targets[: args.hub_targets], 2, 3)
        results["hops2"] = hubs
        results["load_average"]["after_hops2"] = _load()
        print(
            f"  hops=2, max_length=3 local structures of {len(hubs)} targets: triples "
            + ", ".join(
                f"{k} {v:.0f}" for k, v in _summary([float(h["triples"]) for h in hubs]).items()
            )
            + f"; {sum(any(h['overflow']) for h in hubs)} needed the beam; seconds "
            + ", ".join(f"{k} {v:.2f}" for k, v in _summary([h["seconds"] for h in hubs]).items()),
            flush=True,
        )
        _write(args.out, results)
    if args.parallel_targets:
        results["parallel"] = _parallel(
            explainer, targets[: args.parallel_targets], args.parallel_mode
        )
        print(f"  parallel: {results['parallel']}")
    results["load_average"]["end"] = _load()
    results["peak_rss_gib"] = _peak_rss_gib()
    results["wall_seconds"] = time.perf_counter() - wall
    print(f"peak RSS {results['peak_rss_gib']:.2f} GiB; wall {results['wall_seconds']:.0f} s")
    _write(args.out, results)
    return results


if __name__ == "__main__":
    main()
