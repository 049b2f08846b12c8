"""KGExplainer on FB15k-237: hub local structures, fidelity against baselines, parallel speed-up.

Run: ``.venv/bin/python -m benchmarks.bench_explain_fb15k --checkpoint CKPT [--evaluator FILE]
[--targets 100] [--parallel-targets 20] [--out FILE]``. ``CKPT`` is a ``graphlib kg train``
checkpoint of a model trained on ``--dataset`` (default ``../shared/datasets/kg/fb15k237``;
without ``--checkpoint`` a ComplEx is trained here with the library's defaults for ``--epochs``
epochs). Issues 18 (last bullet) and 22 ("Explanations at scale").

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
* **Time**: seconds per explanation (local structure and search), one thread.
* **Parallel** (``--parallel-targets``): :func:`kg.explain.parallel.explain_parallel` with 2
  workers of one thread against the serial ``explain_all`` on one thread, outputs compared.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch

from graphdata.triples import KGDataset, TripleSet
from kg.evaluation import evaluate
from kg.explain.baselines import edge_mask_explainer
from kg.explain.evaluator import DistilledEvaluator, EvaluatorConfig
from kg.explain.explainer import SEARCHES, ExplainerConfig, KGExplainer
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


def _model_and_dataset(args: argparse.Namespace):
    if args.checkpoint:
        from kg.datasets import load_checkpoint_with_dataset

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the dropped unseen labels (PyKEEN's behaviour)
            model, _, dataset = load_checkpoint_with_dataset(
                args.checkpoint, str(args.dataset), torch.device("cpu"), on_unknown="drop"
            )
        return model.eval(), dataset, 2 * dataset.num_relations == model.num_relations
    from kg.models import build_model
    from kg.training import Trainer, TrainingConfig

    dataset = KGDataset.from_folder(args.dataset, on_unknown="drop")
    config = TrainingConfig.from_defaults(
        "complex", epochs=args.epochs, eval_every=0, progress=False, seed=args.seed
    )
    model = build_model("complex", dataset, config)
    Trainer(model, config).fit(dataset)
    return model.eval(), dataset, config.reciprocal


def _targets(model, dataset: KGDataset, reciprocal: bool, n: int, seed: int) -> list:
    test = dataset.test.mapped_triples
    ranks = evaluate(model, test, dataset.filter_index(), reciprocal=reciprocal).ranks("tail")
    first = test[ranks == 1.0]
    first = first[first[:, 0] != first[:, 2]]
    pick = torch.randperm(first.size(0), generator=torch.Generator().manual_seed(seed))[:n]
    print(f"test triples ranked first (tail): {first.size(0)} of {test.size(0)}; explaining {n}")
    return [tuple(int(x) for x in row) for row in first[pick].tolist()]


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


def _probabilities(explainer: KGExplainer, local: LocalStructure, masks: list[torch.Tensor]):
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
    }


def _explain_targets(explainer: KGExplainer, targets: list, seed: int) -> list[dict]:
    cfg = explainer.config
    rows = []
    for i, target in enumerate(targets):
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
                f" per explanation, {sum(r['pruning'] == 'relevance' for r in rows)} pruned",
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
    torch.set_num_threads(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        serial = explainer.explain_all(targets, progress=False, mode=mode)
        serial_s = time.perf_counter() - start
        start = time.perf_counter()
        parallel = explain_parallel(explainer, targets, workers=2, threads=1, mode=mode)
        parallel_s = time.perf_counter() - start

    def strip(xs: list) -> list:
        return [dataclasses.replace(x, seconds=0.0).to_dict() for x in xs]

    return {
        "targets": len(targets),
        "mode": mode,
        "serial_seconds": serial_s,
        "parallel2_seconds": parallel_s,
        "speedup": serial_s / max(parallel_s, 1e-9),
        "identical": strip(serial) == strip(parallel),
        "load_average": os.getloadavg(),
    }


def _summary(values: list[float]) -> dict:
    if not values:
        return {}
    ordered = sorted(values)
    return {
        "mean": statistics.fmean(ordered),
        "median": statistics.median(ordered),
        "p90": ordered[int(0.9 * (len(ordered) - 1))],
        "max": ordered[-1],
    }


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark (module docstring); return the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--checkpoint", default=None, help="graphlib kg train checkpoint.pt")
    parser.add_argument("--epochs", type=int, default=1, help="training without --checkpoint")
    parser.add_argument("--evaluator", default=None, help="a saved evaluator; distilled if absent")
    parser.add_argument("--save-evaluator", default=None)
    parser.add_argument("--evaluator-steps", type=int, default=EvaluatorConfig.steps)
    parser.add_argument("--hops", type=int, default=1)
    parser.add_argument("--max-length", type=int, default=2)
    parser.add_argument("--max-candidates", type=int, default=300)
    parser.add_argument("--targets", type=int, default=100)
    parser.add_argument("--hub-targets", type=int, default=20)
    parser.add_argument("--parallel-targets", type=int, default=20)
    parser.add_argument(
        "--parallel-mode", default="evaluator", choices=("evaluator", "retrain"), help="scorer"
    )
    parser.add_argument("--skip-fidelity", action="store_true", help="parallel part only")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    wall = time.perf_counter()
    model, dataset, reciprocal = _model_and_dataset(args)
    train = dataset.train.mapped_triples
    loops = train[:, 0] == train[:, 2]
    graph = TripleSet(train[~loops], dataset.train.entities, dataset.train.relations)
    print(f"dataset {dataset}; model {model!r}; {int(loops.sum())} self-loop triples left out")
    targets = _targets(model, dataset, reciprocal, args.targets, args.seed)
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
    evaluator = DistilledEvaluator.load(args.evaluator) if args.evaluator else None
    start = time.perf_counter()
    explainer = KGExplainer(model, config).fit(graph, evaluator=evaluator, progress=False)
    fit_seconds = time.perf_counter() - start
    assert explainer.evaluator_ is not None
    if evaluator is not None:
        explainer.evaluator_.graph_ = graph  # a loaded evaluator keeps no graph
    elif args.save_evaluator:
        explainer.evaluator_.save(args.save_evaluator)
    print(f"explainer fitted in {fit_seconds:.1f} s ({'loaded' if evaluator else 'distilled'})")
    test = dataset.test.mapped_triples
    agreement = explainer.evaluator_.agreement(
        model, test[test[:, 0] != test[:, 2]][:500], num_queries=20, seed=args.seed
    )
    print(f"evaluator agreement with the model (500 test triples): {agreement}")
    rows = [] if args.skip_fidelity else _explain_targets(explainer, targets, args.seed)
    fidelity = {name: _fidelity(rows, name) for name in ("kgexplainer",) + BASELINE_NAMES}
    for name, f in fidelity.items():
        if f["n"]:
            print(
                f"  {name:>14}: n {f['n']:3d}, |S| {f['mean_triples']:.2f}, "
                f"fid+ {f['fid_plus']:.3f}, "
                f"fid- {f['fid_minus']:.3f}, charact {f['characterization']:.3f}, model fid+ "
                f"{f['model_fid_plus']:.3f} fid- {f['model_fid_minus']:.3f}"
            )
    results = {
        "host": platform.node(),
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "threads": args.threads,
        "load_average_start": os.getloadavg(),
        "config": {k: str(v) for k, v in vars(args).items()},
        "fit_seconds": fit_seconds,
        "evaluator_agreement": agreement,
        "seconds_per_explanation": _summary([r["seconds"] for r in rows]),
        "local_seconds": _summary([r["local_seconds"] for r in rows]),
        "local_triples": _summary([float(r["triples"]) for r in rows]),
        "candidates_enumerated": _summary([float(sum(r["enumerated"])) for r in rows]),
        "candidates_kept": _summary([float(sum(r["kept"])) for r in rows]),
        "pruned_targets": sum(r["pruning"] == "relevance" for r in rows),
        "empty_explanations": sum(not r["methods"] for r in rows),
        "fidelity": fidelity,
        "rows": rows,
    }
    print(
        "seconds per explanation "
        + ", ".join(f"{k} {v:.2f}" for k, v in results["seconds_per_explanation"].items())
        + "; local triples "
        + ", ".join(f"{k} {v:.0f}" for k, v in results["local_triples"].items())
    )
    if args.hub_targets:
        hubs = _hub_structures(explainer, targets[: args.hub_targets], 2, 3)
        results["hops2"] = hubs
        print(
            f"  hops=2, max_length=3 local structures of {len(hubs)} targets: triples "
            + ", ".join(
                f"{k} {v:.0f}" for k, v in _summary([float(h["triples"]) for h in hubs]).items()
            )
            + f"; {sum(any(h['overflow']) for h in hubs)} needed the beam; seconds "
            + ", ".join(f"{k} {v:.2f}" for k, v in _summary([h["seconds"] for h in hubs]).items())
        )
    if args.parallel_targets:
        results["parallel"] = _parallel(
            explainer, targets[: args.parallel_targets], args.parallel_mode
        )
        print(f"  parallel: {results['parallel']}")
    results["wall_seconds"] = time.perf_counter() - wall
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1))
    return results


if __name__ == "__main__":
    main()
