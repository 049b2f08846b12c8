"""Filtered KGE evaluation speed: ours vs PyG's ``KGEModel.test`` (and PyKEEN when given).

Run: ``.venv/bin/python -m benchmarks.bench_kg_eval [--data PATH] [--dim 128] [--repeats 5]
[--pykeen-python PATH]``.

* UMLS test set (661 triples, 135 entities), ComplEx with the same weights in both libraries
  (our ``[re | im]`` tables copied into PyG's ``ComplEx``): ours ranks both sides, filtered
  (train + valid + test), realistic ties; PyG ranks tails only, raw, in a Python loop. Same
  scores, so PyG's raw tail mean rank is checked against our raw tail ranks. Ours is timed
  twice: with the ``FilterIndex`` built beforehand (reused across calls, as during training)
  and with it built from the triples inside the timed call (a one-off evaluation; PyKEEN
  filters from the raw triples inside every ``evaluate`` call, so this is the time its ratio
  uses).
* RotatE: equal-size models (PyG's RotatE scores a different norm, so weights cannot be shared).
* FB15k-237-sized synthetic graph (14,505 entities, 237 relations, 310k known triples): our
  throughput on ``--scale-triples`` test triples against PyG's on ``--pyg-triples`` of them
  (PyG's cost is linear in triples, so per-triple rates compare).
* 1-N scoring throughput: ``ComplEx.score_tails`` on an FB15k-237-sized table (14,505
  entities) against a plain ``torch.matmul`` of the same shape, in GFLOP/s.
* PyKEEN (a separate environment; the library never imports it): ``--pykeen-python
  /path/to/venv/bin/python`` times PyKEEN 1.x's ``RankBasedEvaluator`` on the same data and
  model size (ComplEx; RotatE with ``interaction_kwargs={"p": 1}``, our sum of complex moduli,
  instead of PyKEEN's default L2 norm; same thread count) in a subprocess.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
from torch_geometric.nn.kge import ComplEx as PyGComplEx
from torch_geometric.nn.kge import RotatE as PyGRotatE

from graphdata.filter_index import FilterIndex
from graphdata.triples import KGDataset
from kg.complex import ComplEx
from kg.evaluation import evaluate
from kg.rotate import RotatE

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "kg" / "umls"

PYKEEN_SCRIPT = r"""
import json, sys, time
import torch
from pykeen.evaluation import RankBasedEvaluator
from pykeen.models import ComplEx, RotatE
from pykeen.triples import TriplesFactory

folder, dim, repeats, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
if threads:
    torch.set_num_threads(threads)
train = TriplesFactory.from_path(f"{folder}/train.txt")
kw = dict(entity_to_id=train.entity_to_id, relation_to_id=train.relation_to_id)
valid = TriplesFactory.from_path(f"{folder}/valid.txt", **kw)
test = TriplesFactory.from_path(f"{folder}/test.txt", **kw)
out = {"threads": torch.get_num_threads()}
# RotatE with p = 1: our score, the sum of complex moduli (PyKEEN's default p = 2 is one L2 norm
# per pair, PyG's score, a cheaper function than ours), as benchmarks/_kg_pykeen.py maps it.
p1 = {"interaction_kwargs": {"p": 1}}
for name, cls, extra in (("complex", ComplEx, {}), ("rotate", RotatE, p1)):
    model = cls(triples_factory=train, embedding_dim=dim, random_seed=0, **extra).eval()
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = RankBasedEvaluator().evaluate(
            model, test.mapped_triples, additional_filter_triples=[train.mapped_triples,
            valid.mapped_triples], use_tqdm=False)
        times.append(time.perf_counter() - start)
    out[name] = {"times": times,
                 "mrr": float(result.get_metric("both.realistic.inverse_harmonic_mean_rank"))}
print(json.dumps(out))
"""


def _best_of(fn, repeats: int, *, min_total_s: float = 1.0) -> tuple[float, object]:
    """Best wall time of at least ``repeats`` calls, repeating fast calls for ``min_total_s``.

    On a shared machine, single runs of a few milliseconds are dominated by other processes;
    the minimum over many runs estimates the undisturbed time.
    """
    times, out = [], None
    start = time.perf_counter()
    while len(times) < repeats or (time.perf_counter() - start < min_total_s and len(times) < 200):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def _interleaved_best(fns: list, rounds: int) -> list[tuple[float, object]]:
    """Best wall time of each function over ``rounds`` rounds that call them in turn.

    Alternating the contenders exposes them to the same background load, so their ratio
    holds on a shared machine even when absolute times drift. Each turn repeats its calls for
    at least 0.2 s (three at least; the best counts): a millisecond call right after another
    contender otherwise measures that contender's cache and allocator state, and the minimum
    of few samples overstates the undisturbed time.
    """
    best: list[tuple[float, object]] = [(float("inf"), None)] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            t, out = _best_of(fn, 3, min_total_s=0.2)
            if t < best[i][0]:
                best[i] = (t, out)
    return best


def _pyg_complex_from(ours: ComplEx) -> PyGComplEx:
    d = ours.dim
    pyg = PyGComplEx(ours.num_entities, ours.num_relations, d)
    with torch.no_grad():
        pyg.node_emb.weight.copy_(ours.entity.weight[:, :d])
        pyg.node_emb_im.weight.copy_(ours.entity.weight[:, d:])
        pyg.rel_emb.weight.copy_(ours.relation.weight[:, :d])
        pyg.rel_emb_im.weight.copy_(ours.relation.weight[:, d:])
    return pyg


def _pyg_test(model, test: torch.Tensor) -> tuple[float, float, float]:
    h, r, t = test.t()
    with torch.no_grad():
        return model.test(h, r, t, batch_size=model.num_nodes, k=10, log=False)


def _gflops(num_queries: int, num_entities: int, dim: int, repeats: int) -> dict[str, float]:
    torch.manual_seed(0)
    model = ComplEx(num_entities, 237, dim).eval()
    gen = torch.Generator().manual_seed(0)
    h = torch.randint(num_entities, (num_queries,), generator=gen)
    r = torch.randint(237, (num_queries,), generator=gen)
    query = torch.randn(num_queries, 2 * dim)
    table = model.entity.weight.detach()
    flops = 2.0 * num_queries * num_entities * 2 * dim
    with torch.no_grad():
        t_ours, _ = _best_of(lambda: model.score_tails(h, r), repeats)
        t_mm, _ = _best_of(lambda: torch.matmul(query, table.t()), repeats)
    return {
        "shape": f"[{num_queries}, {2 * dim}] x [{2 * dim}, {num_entities}]",
        "score_tails_gflops": flops / t_ours / 1e9,
        "matmul_gflops": flops / t_mm / 1e9,
        "fraction_of_matmul": t_mm / t_ours,
    }


def _at_scale(args: argparse.Namespace) -> dict[str, float]:
    """FB15k-237-sized synthetic graph: ours on ``--scale-triples``, PyG on ``--pyg-triples``."""
    num_entities, num_relations = 14505, 237
    gen = torch.Generator().manual_seed(0)
    known = torch.stack(
        [
            torch.randint(num_entities, (310_000,), generator=gen),
            torch.randint(num_relations, (310_000,), generator=gen),
            torch.randint(num_entities, (310_000,), generator=gen),
        ],
        dim=1,
    )
    index = FilterIndex.from_triples(known, num_entities=num_entities, num_relations=num_relations)
    test = known[: args.scale_triples]
    torch.manual_seed(0)
    ours = ComplEx(num_entities, num_relations, args.dim).eval()
    pyg = _pyg_complex_from(ours).eval()
    evaluate(ours, test[:64], index)  # warm-up
    t_ours, _ = _best_of(lambda: evaluate(ours, test, index), 1)
    t_pyg, _ = _best_of(lambda: _pyg_test(pyg, test[: args.pyg_triples]), 1)
    ours_per_triple = t_ours / test.size(0)
    pyg_per_triple = t_pyg / args.pyg_triples
    return {
        "entities": num_entities,
        "ours_triples": test.size(0),
        "ours_s": t_ours,
        "ours_triples_per_s": 1 / ours_per_triple,
        "pyg_triples": args.pyg_triples,
        "pyg_s": t_pyg,
        "pyg_triples_per_s": 1 / pyg_per_triple,
        "speedup_vs_pyg_per_triple": pyg_per_triple / ours_per_triple,
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="UMLS folder")
    parser.add_argument("--dim", type=int, default=128, help="complex dimensions")
    parser.add_argument("--repeats", type=int, default=5, help="timings per measurement (best)")
    parser.add_argument("--pykeen-python", default=None, help="python of a PyKEEN environment")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: all)")
    parser.add_argument(
        "--scale-triples",
        type=int,
        default=2000,
        help="test triples ranked by ours on the FB15k-237-sized graph (0: skip)",
    )
    parser.add_argument(
        "--pyg-triples",
        type=int,
        default=200,
        help="test triples ranked by PyG on that graph (its time per triple)",
    )
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)

    ds = KGDataset.from_folder(args.data)
    test = ds.test.mapped_triples
    index = ds.filter_index()
    n = test.size(0)
    results: dict[str, object] = {
        "dataset": str(args.data),
        "test_triples": n,
        "threads": torch.get_num_threads(),
    }

    torch.manual_seed(0)
    ours = ComplEx(ds.num_entities, ds.num_relations, args.dim).eval()
    pyg = _pyg_complex_from(ours).eval()
    evaluate(ours, test, index)  # warm-up
    # Ours twice: the index built beforehand, and built from the triples inside the call
    # (ds.filter_index() builds a fresh FilterIndex, its cached dense mask included).
    (t_ours, metrics), (t_ours_cold, _), (t_pyg, (pyg_mr, pyg_mrr, pyg_h10)) = _interleaved_best(
        [
            lambda: evaluate(ours, test, index),
            lambda: evaluate(ours, test, ds.filter_index()),
            lambda: _pyg_test(pyg, test),
        ],
        args.repeats,
    )
    raw = evaluate(ours, test, None)
    results["complex"] = {
        "ours_filtered_both_sides_s": t_ours,
        "ours_index_built_in_s": t_ours_cold,
        "pyg_raw_tail_only_s": t_pyg,
        "speedup_vs_pyg": t_pyg / t_ours,
        "speedup_vs_pyg_index_built_in": t_pyg / t_ours_cold,
        "ours_triples_per_s": n / t_ours,
        "ours_ranks_per_s": 2 * n / t_ours,
        "ours_filtered_mrr": metrics.mrr,
        # Same scores: PyG's 0-based raw tail mean rank = our raw optimistic tail MR - 1
        # (up to argsort tie-breaking).
        "pyg_raw_tail_mr_0based": pyg_mr,
        "ours_raw_tail_optimistic_mr_minus_1": float(raw.ranks("tail", "optimistic").mean()) - 1,
        "pyg_raw_tail_mrr": pyg_mrr,
        "pyg_raw_tail_hits_at_10": pyg_h10,
    }

    torch.manual_seed(0)
    ours_rot = RotatE(ds.num_entities, ds.num_relations, args.dim).eval()
    pyg_rot = PyGRotatE(ds.num_entities, ds.num_relations, args.dim).eval()
    evaluate(ours_rot, test, index)
    eager_ranks = evaluate(ours_rot, test, index).ranks()
    # The compiled kernel (evaluate(..., compile=True)): the first call includes compilation
    # (torch.compile caches on disk, so a second process compiles faster).
    t0 = time.perf_counter()
    compiled_ranks = evaluate(ours_rot, test, index, compile=True).ranks()
    first_call = time.perf_counter() - t0
    (t_ours_rot, _), (t_ours_rot_cold, _), (t_comp_rot, _), (t_pyg_rot, _) = _interleaved_best(
        [
            lambda: evaluate(ours_rot, test, index),
            lambda: evaluate(ours_rot, test, ds.filter_index()),
            lambda: evaluate(ours_rot, test, index, compile=True),
            lambda: _pyg_test(pyg_rot, test),
        ],
        args.repeats,
    )
    results["rotate"] = {
        "ours_filtered_both_sides_s": t_ours_rot,
        "ours_index_built_in_s": t_ours_rot_cold,
        "pyg_raw_tail_only_s": t_pyg_rot,
        "speedup_vs_pyg": t_pyg_rot / t_ours_rot,
        "speedup_vs_pyg_index_built_in": t_pyg_rot / t_ours_rot_cold,
        "ours_triples_per_s": n / t_ours_rot,
        "compiled_s": t_comp_rot,
        "compiled_speedup_vs_pyg": t_pyg_rot / t_comp_rot,
        "compiled_first_call_s": first_call,
        # Compiled and eager sums round differently: ranks may differ at exact near-ties only.
        "compiled_rank_changes": int((compiled_ranks != eager_ranks).sum()),
    }

    results["one_to_n_scoring"] = _gflops(1024, 14505, args.dim, args.repeats)
    results["fb15k237_scale"] = _at_scale(args) if args.scale_triples else "skipped"

    if args.pykeen_python:
        # Same thread count in both processes: the subprocess would otherwise use all cores.
        proc = subprocess.run(
            [
                args.pykeen_python,
                "-c",
                PYKEEN_SCRIPT,
                str(args.data),
                str(args.dim),
                str(args.repeats),
                str(args.threads or 0),
            ],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"PyKEEN run failed:\n{proc.stderr[-2000:]}")
        pykeen = json.loads(proc.stdout.strip().splitlines()[-1])
        # Like for like: PyKEEN builds its filter from the triples in every call, so ours is
        # the time with the index built inside the call; the prebuilt-index ratio is kept too.
        for name, t_cold, t_warm in (
            ("complex", t_ours_cold, t_ours),
            ("rotate", t_ours_rot_cold, t_ours_rot),
        ):
            t_pk = min(pykeen[name]["times"])
            results[f"pykeen_{name}"] = {
                "wall_s": t_pk,
                "ours_s": t_cold,
                "ours_speedup": t_pk / t_cold,
                "ours_index_prebuilt_s": t_warm,
                "ours_speedup_index_prebuilt": t_pk / t_warm,
                "median_s": statistics.median(pykeen[name]["times"]),
                "threads": pykeen["threads"],
            }
    else:
        results["pykeen_complex"] = "not run (pass --pykeen-python PATH)"

    c, rot, g = results["complex"], results["rotate"], results["one_to_n_scoring"]
    print(
        f"UMLS test ({n} triples), {results['threads']} threads, best of {args.repeats} "
        "interleaved rounds"
    )
    print(
        f"ComplEx d={args.dim}: ours filtered both sides "
        f"{c['ours_filtered_both_sides_s'] * 1e3:.1f} ms vs PyG raw tail-only "
        f"{c['pyg_raw_tail_only_s'] * 1e3:.1f} ms -> "
        f"{c['speedup_vs_pyg']:.1f}x; {c['ours_triples_per_s']:.0f} triples/s; index built "
        f"in the call {c['ours_index_built_in_s'] * 1e3:.1f} ms -> "
        f"{c['speedup_vs_pyg_index_built_in']:.1f}x"
    )
    print(
        f"  same weights: PyG raw tail MR (0-based) {c['pyg_raw_tail_mr_0based']:.3f}, ours "
        f"{c['ours_raw_tail_optimistic_mr_minus_1']:.3f}"
    )
    print(
        f"RotatE d={args.dim}: ours {rot['ours_filtered_both_sides_s'] * 1e3:.1f} ms vs PyG "
        f"{rot['pyg_raw_tail_only_s'] * 1e3:.1f} ms -> {rot['speedup_vs_pyg']:.1f}x (index "
        f"built in the call {rot['ours_index_built_in_s'] * 1e3:.1f} ms -> "
        f"{rot['speedup_vs_pyg_index_built_in']:.1f}x); compiled "
        f"(compile=True) {rot['compiled_s'] * 1e3:.1f} ms -> "
        f"{rot['compiled_speedup_vs_pyg']:.1f}x (first call incl. compilation "
        f"{rot['compiled_first_call_s']:.1f} s; {rot['compiled_rank_changes']} of {2 * n} "
        "ranks differ from eager)"
    )
    print(
        f"1-N scoring {g['shape']}: score_tails {g['score_tails_gflops']:.1f} GFLOP/s, matmul "
        f"{g['matmul_gflops']:.1f} GFLOP/s ({g['fraction_of_matmul']:.2f} of matmul)"
    )
    if args.scale_triples:
        f = results["fb15k237_scale"]
        print(
            f"FB15k-237-sized ComplEx ({f['entities']} entities): ours "
            f"{f['ours_triples_per_s']:.0f} triples/s (both sides, filtered) vs PyG "
            f"{f['pyg_triples_per_s']:.1f} triples/s (tail, raw) -> "
            f"{f['speedup_vs_pyg_per_triple']:.0f}x per triple"
        )
    for name in ("complex", "rotate"):
        pk = results.get(f"pykeen_{name}")
        if isinstance(pk, dict):
            print(
                f"PyKEEN {name} d={args.dim} (RankBasedEvaluator, filtered both sides): "
                f"{pk['wall_s'] * 1e3:.1f} ms vs ours, index built in the call, "
                f"{pk['ours_s'] * 1e3:.1f} ms -> ours {pk['ours_speedup']:.1f}x faster (index "
                f"prebuilt: {pk['ours_speedup_index_prebuilt']:.1f}x; {pk['threads']} thread(s))"
            )
    if not args.pykeen_python:
        print(f"PyKEEN: {results['pykeen_complex']}")
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
