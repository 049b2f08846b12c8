"""What each synthetic world stresses: counts, cardinalities, rule lengths, hubs, shortcuts.

Draws every world of :data:`graphdata.worlds.WORLDS` (and the family world for comparison) at
its default size and prints :func:`graphdata.worlds.world_statistics`, with the wall time of
drawing it; ``--json FILE`` also writes the numbers. One thread (``torch.set_num_threads(1)``).

    python benchmarks/world_stats.py [--seed 0] [--max-targets 200] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from dataclasses import asdict

import numpy as np
import torch

from graphdata.atomic import write_text_atomic
from graphdata.rules import parse_rules
from graphdata.synthetic import FAMILY_RULES, family_kg
from graphdata.worlds import WORLDS, World, build_world, world, world_statistics


def _family_world(seed: int) -> World:
    """The family world's base facts and rules through build_world (re-closed and re-split)."""
    kg = family_kg(1000, seed=seed)
    text = "\n".join(f"family_{i}: {rule}" for i, rule in enumerate(FAMILY_RULES))
    parse_rules(text)  # the chain rules read as general rules
    people = {p: "person" for p in kg.gender}
    return build_world(
        "family",
        kg.base_triples,
        text,
        seed=seed,
        size=1000,
        rng=np.random.default_rng(seed),
        entity_types=people,
        symmetric=("spouse",),
    )


def main() -> None:
    """Print (and optionally write) the statistics of every world."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-targets", type=int, default=200)
    parser.add_argument("--json", help="also write the numbers to this file")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = {}
    makers = {name: (lambda n=name: world(n, seed=args.seed)) for name in WORLDS}
    makers["family"] = lambda: _family_world(args.seed)
    for name, make in makers.items():
        start = time.perf_counter()
        w = make()
        drawn = time.perf_counter() - start
        start = time.perf_counter()
        stats = world_statistics(w, max_targets=args.max_targets, seed=args.seed)
        measured = time.perf_counter() - start
        print(stats.to_text())
        print(f"drawn in {drawn:.1f} s, measured in {measured:.1f} s (one thread)\n")
        row = asdict(stats)
        row["shortcut_cooccurrence"] = {
            f"{s}->{h}": v for (s, h), v in stats.shortcut_cooccurrence.items()
        }
        row["shortcut_precision"] = {
            f"{s}->{h}": v for (s, h), v in stats.shortcut_precision.items()
        }
        row["seconds_to_draw"] = drawn
        rows[name] = row
    if args.json:
        meta = {"hardware": platform.processor() or platform.machine(), "seed": args.seed}
        write_text_atomic(args.json, json.dumps({"meta": meta, "worlds": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
