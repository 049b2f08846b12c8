"""FilterIndex against a Python dict-of-sets baseline: build time and batched lookups.

Both sides index the same known triples and answer the same batch: the coordinates of all known
tails of each (h, r) and all known heads of each (r, t) as ``(row, col)`` LongTensors (what
filtered ranking needs to mask a ``[B, num_entities]`` score matrix), and membership of each
(h, r, t) as a BoolTensor (false-negative filtering). The baseline builds
``{(h, r): {t}}``, ``{(r, t): {h}}`` and ``{(h, r, t)}`` from ``tolist()`` and loops over the
batch in Python. Answers are checked to be equal before timing is reported.

Datasets: UMLS (all splits known; queries = valid + test triples) and a seeded random KG with
~1M triples (queries = a batch of known triples plus as many random ones).

Run: ``.venv/bin/python -m benchmarks.bench_filter_index [--triples 1000000 --batch 10000]``.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import torch

from graphdata.filter_index import FilterIndex
from graphdata.triples import KGDataset

UMLS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "kg" / "umls"


def _best(fn: Callable[[], object], repeats: int) -> tuple[dict[str, float], object]:
    """Best wall time and best process CPU time over ``repeats`` runs, and the last output.

    CPU time is reported too because this machine is shared: with one torch thread on both
    sides it measures the work itself, while wall time also counts waiting for a core.
    """
    wall, cpu, out = float("inf"), float("inf"), None
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        out = fn()
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    return {"wall": wall, "cpu": cpu}, out


class DictOfSets:
    """The baseline: Python dicts of sets built from ``tolist()``."""

    def __init__(self, mapped: torch.Tensor) -> None:
        self.tails: dict[tuple[int, int], set[int]] = defaultdict(set)
        self.heads: dict[tuple[int, int], set[int]] = defaultdict(set)
        self.known: set[tuple[int, int, int]] = set()
        for h, r, t in mapped.tolist():
            self.tails[h, r].add(t)
            self.heads[r, t].add(h)
            self.known.add((h, r, t))

    def lookup(self, queries: torch.Tensor) -> tuple[torch.Tensor, ...]:
        tail_row, tail_col, head_row, head_col = [], [], [], []
        empty: set[int] = set()
        for b, (h, r, t) in enumerate(queries.tolist()):
            found = self.tails.get((h, r), empty)
            tail_row += [b] * len(found)
            tail_col += found
            found = self.heads.get((r, t), empty)
            head_row += [b] * len(found)
            head_col += found
        return tuple(
            torch.tensor(x, dtype=torch.long) for x in (tail_row, tail_col, head_row, head_col)
        )

    def contains(self, queries: torch.Tensor) -> torch.Tensor:
        known = self.known
        return torch.tensor([(h, r, t) in known for h, r, t in queries.tolist()], dtype=torch.bool)


def _ours_lookup(index: FilterIndex, queries: torch.Tensor) -> tuple[torch.Tensor, ...]:
    h, r, t = queries.t().contiguous()
    return (*index.tail_coo(h, r), *index.head_coo(r, t))


def _same_pairs(a_row: torch.Tensor, a_col: torch.Tensor, b_row: torch.Tensor, b_col: torch.Tensor):
    return sorted(zip(a_row.tolist(), a_col.tolist())) == sorted(
        zip(b_row.tolist(), b_col.tolist())
    )


def compare(
    name: str,
    known: torch.Tensor,
    queries: torch.Tensor,
    num_entities: int,
    num_relations: int,
    repeats: int,
) -> dict:
    build_ours, index = _best(
        lambda: FilterIndex.from_triples(
            known, num_entities=num_entities, num_relations=num_relations
        ),
        repeats,
    )
    # The baseline build takes tens of seconds at 1M triples: run it once there (and say so).
    base_runs = repeats if len(known) <= 10**5 else 1
    build_base, base = _best(lambda: DictOfSets(known), base_runs)
    look_ours, ours_out = _best(lambda: _ours_lookup(index, queries), repeats)
    look_base, base_out = _best(lambda: base.lookup(queries), repeats)
    cont_ours, ours_in = _best(lambda: index.contains(queries), repeats)
    cont_base, base_in = _best(lambda: base.contains(queries), repeats)
    assert _same_pairs(*ours_out[:2], *base_out[:2]) and _same_pairs(*ours_out[2:], *base_out[2:])
    assert torch.equal(ours_in, base_in)
    result = {
        "triples": int(known.shape[0]),
        "distinct_triples": index.num_triples,
        "entities": num_entities,
        "relations": num_relations,
        "batch": int(queries.shape[0]),
        "mask_entries": int(ours_out[0].numel() + ours_out[2].numel()),
        "dict_of_sets_build_runs": base_runs,
    }
    print(
        f"{name}: {result['distinct_triples']} distinct triples, batch {result['batch']}, "
        f"{result['mask_entries']} mask entries (ms: wall / cpu; best of {repeats}, the "
        f"dict-of-sets build of {base_runs})"
    )
    timings = {
        "build": (build_ours, build_base),
        "lookup": (look_ours, look_base),
        "contains": (cont_ours, cont_base),
    }
    for what, (ours, baseline) in timings.items():
        speedup = {k: baseline[k] / ours[k] for k in ("wall", "cpu")}
        result[what] = {"ours_s": ours, "dict_of_sets_s": baseline, "speedup": speedup}
        print(
            f"  {what:<9} ours {ours['wall'] * 1e3:9.2f} / {ours['cpu'] * 1e3:9.2f}   "
            f"dict-of-sets {baseline['wall'] * 1e3:9.2f} / {baseline['cpu'] * 1e3:9.2f}   "
            f"speed-up x{speedup['wall']:.1f} / x{speedup['cpu']:.1f}"
        )
    return result


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=UMLS, help="folder with train/valid/test")
    parser.add_argument("--triples", type=int, default=1_000_000, help="random KG size")
    parser.add_argument("--entities", type=int, default=100_000, help="random KG entities")
    parser.add_argument("--relations", type=int, default=500, help="random KG relations")
    parser.add_argument("--batch", type=int, default=10_000, help="random KG query batch")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (baseline: 1)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} thread(s), best of {args.repeats}")

    results = {}
    if (args.data / "train.txt").is_file():
        ds = KGDataset.from_folder(args.data)
        queries = torch.cat([ds.valid.mapped_triples, ds.test.mapped_triples])
        results["umls"] = compare(
            "UMLS", ds.all_triples(), queries, ds.num_entities, ds.num_relations, args.repeats
        )
    else:
        print(f"skipping UMLS: {args.data} not found")

    gen = torch.Generator().manual_seed(args.seed)
    sizes = torch.tensor([args.entities, args.relations, args.entities])
    known = (torch.rand(args.triples, 3, generator=gen) * sizes).long()  # [N, 3]
    half = args.batch // 2
    picked = known[torch.randint(args.triples, (half,), generator=gen)]
    fresh = (torch.rand(args.batch - half, 3, generator=gen) * sizes).long()
    results["random"] = compare(
        "random KG", known, torch.cat([picked, fresh]), args.entities, args.relations, args.repeats
    )
    return results


if __name__ == "__main__":
    main()
