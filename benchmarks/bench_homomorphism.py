"""Exact homomorphism densities by variable elimination against brute-force enumeration.

Targets (issue 5): every connected pattern on <= 6 vertices with treewidth <= 2 at n = 2000,
K4 (treewidth 3) at n = 400; the ratio against brute force (all n^|V| maps, vectorised over
the images of all vertices but one) at the largest n brute force finishes within the budget;
the measured scaling exponent in n against tw + 1; and a pattern out of reach (K5 at n = 2000)
refused with its estimated cost before any work starts.

Both sides compute the same float64 value on the same random symmetric weighted graph (checked
before timing is reported). Timings are the best of ``--repeats`` runs, wall and process CPU
(this machine is shared; with one torch thread CPU time measures the work itself).

Run: ``.venv/bin/python -m benchmarks.bench_homomorphism [--n 2000 --n-k4 400 --threads 1]``.
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from collections.abc import Callable

import networkx as nx
import torch

from graphdata.errors import GraphDataError
from graphon.homomorphism import estimate_cost, hom_density
from graphon.patterns import Pattern, as_pattern

F64 = torch.float64


def _best(fn: Callable[..., object], repeats: int, *args: object) -> tuple[dict, object]:
    wall, cpu, out = float("inf"), float("inf"), None
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        out = fn(*args)
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    return {"wall": wall, "cpu": cpu}, out


def _graph(n: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    a = torch.rand(n, n, generator=g, dtype=F64)
    return (a + a.T) / 2


def exact_treewidth(graph: nx.Graph) -> int:
    """Treewidth by trying every elimination order (fine for <= 7 vertices)."""
    best = len(graph)
    for order in itertools.permutations(graph.nodes):
        nbrs = {v: set(graph[v]) for v in graph}
        width = 0
        for v in order:
            ns = nbrs.pop(v)
            width = max(width, len(ns))
            for a in ns:
                nbrs[a] |= ns - {a}
                nbrs[a].discard(v)
            if width >= best:
                break
        best = min(best, width)
    return best


def small_patterns(max_vertices: int = 6, max_tw: int = 2) -> list[tuple[str, Pattern, int]]:
    """Every connected graph on 2..max_vertices vertices with treewidth <= max_tw (atlas)."""
    out = []
    for i, graph in enumerate(nx.graph_atlas_g()):
        if not 2 <= len(graph) <= max_vertices or not nx.is_connected(graph):
            continue
        tw = exact_treewidth(graph)
        if tw <= max_tw:
            out.append((f"G{i}", as_pattern(graph), tw))
    return out


def brute_force(pattern: Pattern, adj: torch.Tensor) -> float:
    """n^-k times the sum over all maps V -> [n]: vertex 0 looped, the rest broadcast."""
    k, n = pattern.num_vertices, adj.size(0)
    total = 0.0
    for i in range(n):
        prod = torch.ones((n,) * (k - 1), dtype=adj.dtype)
        for u, v, m in pattern.edges:
            shape = [1] * (k - 1)
            if u == 0:
                shape[v - 1] = n
                factor = adj[i].reshape(shape)
            else:
                shape[u - 1] = shape[v - 1] = n
                factor = adj.reshape(shape)
            prod = prod * (factor if m == 1 else factor**m)
        total += float(prod.sum())
    return total / n**k


def _anchor(name: str, pattern: Pattern, budget: float, repeats: int) -> dict:
    """Grow n until brute force exceeds the budget; compare at the largest n it finished."""
    k, last = pattern.num_vertices, None
    n = 8
    while n ** (k - 1) <= 2**25:
        adj = _graph(n)
        brute_t, brute_v = _best(brute_force, 1, pattern, adj)
        if brute_t["cpu"] > budget:
            break
        ours_t, ours_v = _best(hom_density, repeats, pattern, adj)
        ours_v = float(ours_v)
        assert math.isclose(brute_v, ours_v, rel_tol=1e-9), (name, n, brute_v, ours_v)
        last = {"n": n, "brute_s": brute_t, "ours_s": ours_t}
        n = int(n * 1.5)
    ratio = last["brute_s"]["cpu"] / last["ours_s"]["cpu"]
    print(
        f"  {name:8s} brute force finishes n = {last['n']:4d} in {last['brute_s']['cpu']:.2f} s "
        f"CPU; ours {last['ours_s']['cpu'] * 1e3:.2f} ms CPU: {ratio:,.0f}x"
    )
    return {**last, "ratio": ratio}


def _exponent(pattern: Pattern, sizes: list[int], repeats: int) -> dict:
    times = []
    for n in sizes:
        adj = _graph(n)
        hom_density(pattern, adj)  # warm-up
        t, _ = _best(hom_density, repeats, pattern, adj)
        times.append(t["cpu"])  # CPU time: the machine is shared, one torch thread
    xs, ys = [math.log(n) for n in sizes], [math.log(t) for t in times]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return {"sizes": sizes, "seconds": times, "slope": slope}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="graph size for tw <= 2 patterns")
    parser.add_argument("--n-k4", type=int, default=400, help="graph size for K4")
    parser.add_argument("--budget", type=float, default=3.0, help="brute-force CPU s per run")
    parser.add_argument("--repeats", type=int, default=2, help="best of this many runs")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} thread(s), float64")
    results: dict = {"threads": args.threads}

    patterns = small_patterns()
    adj = _graph(args.n)
    per = []
    for name, pattern, tw in patterns:
        t, _ = _best(hom_density, 1, pattern, adj)
        per.append(
            {
                "pattern": name,
                "vertices": pattern.num_vertices,
                "edges": pattern.num_edges,
                "tw": tw,
                "width": estimate_cost(pattern, args.n).width,
                "wall_s": t["wall"],
                "cpu_s": t["cpu"],
            }
        )
    assert all(p["width"] == p["tw"] for p in per), "min-fill width differs from treewidth"
    secs = sorted(p["cpu_s"] for p in per)
    worst = max(per, key=lambda p: p["cpu_s"])
    print(
        f"{len(per)} connected patterns on <= 6 vertices with tw <= 2 at n = {args.n}: CPU "
        f"total {sum(secs):.1f} s (wall {sum(p['wall_s'] for p in per):.1f} s), median "
        f"{secs[len(secs) // 2]:.2f} s, max {worst['cpu_s']:.2f} s ({worst['vertices']} "
        f"vertices, {worst['edges']} edges, tw {worst['tw']})"
    )
    results["tw_le_2_at_n"] = {
        "n": args.n,
        "count": len(per),
        "total_cpu_s": sum(secs),
        "total_wall_s": sum(p["wall_s"] for p in per),
        "median_cpu_s": secs[len(secs) // 2],
        "max_cpu_s": worst["cpu_s"],
        "per_pattern": per,
    }

    k4 = as_pattern("k4")
    adj4 = _graph(args.n_k4)
    t, _ = _best(hom_density, args.repeats, k4, adj4)
    print(f"K4 at n = {args.n_k4}: {t['wall']:.2f} s wall, {t['cpu']:.2f} s CPU")
    results["k4"] = {"n": args.n_k4, "seconds": t}

    print(f"CPU-time ratios against brute force (budget {args.budget:.0f} s per run):")
    anchors = {"path6": [(i, i + 1) for i in range(5)], "cycle6": "cycle6", "k4": "k4"}
    results["brute_force"] = {
        name: _anchor(name, as_pattern(p), args.budget, args.repeats) for name, p in anchors.items()
    }

    print("scaling exponent of CPU time in n (least squares on log-log) against tw + 1:")
    scaling = {
        "star5 (tw 1)": (
            as_pattern([(0, i) for i in range(1, 6)]),
            [1000, 1414, 2000, 2828, 4000],
            1,
        ),
        "cycle5 (tw 2)": (as_pattern("cycle5"), [500, 707, 1000, 1414, 2000], 2),
        "k4 (tw 3)": (as_pattern("k4"), [100, 141, 200, 283, 400], 3),
    }
    results["scaling"] = {}
    for name, (pattern, sizes, tw) in scaling.items():
        fit = _exponent(pattern, sizes, args.repeats)
        results["scaling"][name] = {**fit, "tw_plus_1": tw + 1}
        print(
            f"  {name:14s} n = {sizes}: CPU s {[round(t, 4) for t in fit['seconds']]}, "
            f"exponent {fit['slope']:.2f} (tw + 1 = {tw + 1})"
        )

    start = time.perf_counter()
    try:
        hom_density("k5", adj)
        refused = None
    except GraphDataError as err:
        refused = str(err)
    elapsed = time.perf_counter() - start
    print(f"K5 at n = {args.n}: refused after {elapsed * 1e3:.1f} ms: {refused}")
    results["k5_refused"] = {"message": refused, "seconds": elapsed}
    return results


if __name__ == "__main__":
    main()
