"""Path enumeration on UMLS pairs: graphdata.paths.enumerate_paths against networkx.

For a fixed, seeded sample of (head, tail) pairs from the UMLS test split, both sides enumerate
every relation-labelled simple path of length <= L on the training graph (edge directions
ignored, parallel edges distinct): ours with ``enumerate_paths``, the anchor with networkx's
``all_simple_edge_paths`` on the undirected ``MultiGraph``. Path counts must agree pair by pair.
Ours is timed twice: one ``enumerate_paths`` call per pair, and one ``enumerate_paths_batch``
call for all pairs. Both sides run on one thread.

Run: ``.venv/bin/python -m benchmarks.bench_paths [--pairs 30 --max-length 2 3 --seed 0]``.
"""

from __future__ import annotations

import argparse
import csv
import random
import time
from pathlib import Path

import networkx as nx
import torch

from graphdata.paths import enumerate_paths, enumerate_paths_batch

#: The shared datasets folder (read directly: the benchmark does not depend on other modules).
UMLS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "kg" / "umls"


def _read(path: Path) -> list[tuple[str, str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return [tuple(row) for row in csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)]


def load_umls(folder: Path) -> tuple[torch.Tensor, torch.Tensor, list[tuple[int, int]]]:
    """Training edges as ``(edge_index, edge_type)`` and the test pairs with known entities."""
    train, test = _read(folder / "train.txt"), _read(folder / "test.txt")
    entities = {e: i for i, e in enumerate(sorted({x for h, _, t in train for x in (h, t)}))}
    relations = {r: i for i, r in enumerate(sorted({r for _, r, _ in train}))}
    heads, tails = [entities[h] for h, _, _ in train], [entities[t] for *_, t in train]
    edge_index = torch.tensor([heads, tails])
    edge_type = torch.tensor([relations[r] for _, r, _ in train])
    pairs = [
        (entities[h], entities[t]) for h, _, t in test if h in entities and t in entities and h != t
    ]
    return edge_index, edge_type, pairs


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=30, help="test pairs sampled (seeded)")
    parser.add_argument("--max-length", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (networkx: 1)")
    parser.add_argument("--data", type=Path, default=UMLS)
    args = parser.parse_args(argv)

    if not (args.data / "train.txt").is_file():
        raise SystemExit(f"UMLS not found: {args.data}/train.txt is missing; pass --data FOLDER")
    edge_index, edge_type, test_pairs = load_umls(args.data)
    pairs = random.Random(args.seed).sample(test_pairs, min(args.pairs, len(test_pairs)))
    graph = nx.MultiGraph()
    for e, (u, v) in enumerate(edge_index.t().tolist()):
        graph.add_edge(u, v, key=e)
    print(
        f"UMLS train: {graph.number_of_nodes()} entities, {edge_index.size(1)} edges; "
        f"{len(pairs)} test pairs (seed {args.seed}); torch threads {args.threads}"
    )

    # One thread, as networkx uses one; on a shared machine more threads also add noise.
    threads = torch.get_num_threads()
    torch.set_num_threads(args.threads)
    pair_tensor = torch.tensor(pairs)
    enumerate_paths(edge_index, edge_type, *pairs[0], 2)  # warm-up (allocator, first calls)
    results: dict[str, object] = {"pairs": len(pairs), "seed": args.seed, "threads": args.threads}
    try:
        for max_length in args.max_length:
            start = time.perf_counter()
            ours = [len(enumerate_paths(edge_index, edge_type, h, t, max_length)) for h, t in pairs]
            ours_s = time.perf_counter() - start
            start = time.perf_counter()
            batch = enumerate_paths_batch(edge_index, edge_type, pair_tensor, max_length)
            batch_s = time.perf_counter() - start
            start = time.perf_counter()
            theirs = [
                sum(1 for _ in nx.all_simple_edge_paths(graph, h, t, cutoff=max_length))
                for h, t in pairs
            ]
            nx_s = time.perf_counter() - start
            assert ours == theirs, f"path counts differ at L={max_length}: {ours} vs {theirs}"
            assert [len(p) for p in batch] == theirs, f"batched counts differ at L={max_length}"
            print(
                f"L<={max_length}: {sum(ours)} paths over {len(pairs)} pairs (max {max(ours)} "
                f"per pair); networkx {nx_s:.3f} s; ours per pair {ours_s:.3f} s "
                f"(x{nx_s / ours_s:.1f}), batched {batch_s:.3f} s (x{nx_s / batch_s:.1f}); "
                "target >= x10"
            )
            results[f"L{max_length}"] = {
                "paths": sum(ours),
                "max_paths_per_pair": max(ours),
                "networkx_s": nx_s,
                "ours_per_pair_s": ours_s,
                "ours_batched_s": batch_s,
                "speedup_per_pair": nx_s / ours_s,
                "speedup_batched": nx_s / batch_s,
            }
    finally:
        torch.set_num_threads(threads)
    return results


if __name__ == "__main__":
    main()
