"""Import cost of the packages and of ``graphlib --help``: median of fresh interpreters.

Each statement runs ``--repeats`` times (default 5) in a new ``python -c`` process, so nothing is
cached in ``sys.modules``; the table reports the median wall time and the median CPU time of the
child (user + system, from ``getrusage(RUSAGE_CHILDREN)``). CPU time is reported too because the
machine may be shared: wall time also counts waiting for a core. ``import torch`` is the floor of
anything that touches a model; ``import kg`` itself is lazy (PEP 562) and imports torch only when
a name such as ``kg.TransE`` is first used, which the ``from kg import ...`` row measures.

``graphlib --help`` builds no part's parser and imports no torch (the target is < 1.5 s);
``graphlib kg train --help`` builds the ``kg`` parser only, whose flags come from the config
dataclasses (torch included).

Run: ``.venv/bin/python -m benchmarks.bench_imports [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Row label -> Python statement run with ``python -c``.
STATEMENTS: dict[str, str] = {
    "import torch (floor)": "import torch",
    "import graphdata": "import graphdata",
    "import kg": "import kg",
    "import graphon": "import graphon",
    "import spatial": "import spatial",
    "from kg import TransE, train, evaluate": "from kg import TransE, train, evaluate",
    "from graphon import hom_density": "from graphon import hom_density",
    "from spatial import Celcomen": "from spatial import Celcomen",
}


def _time(command: list[str]) -> tuple[float, float]:
    """Wall and child CPU seconds of one run of ``command`` (which must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _median(command: list[str], repeats: int) -> dict[str, float]:
    runs = [_time(command) for _ in range(repeats)]
    return {
        "wall": statistics.median(w for w, _ in runs),
        "cpu": statistics.median(c for _, c in runs),
    }


def _graphlib_command(*words: str) -> list[str]:
    """``graphlib WORDS`` from the interpreter's own scripts folder, else the module."""
    script = Path(sys.executable).with_name("graphlib")
    if script.exists():
        return [str(script), *words]
    found = shutil.which("graphlib")
    if found:
        return [found, *words]
    return [sys.executable, "-c", f"from graphlib_ml.cli import main; main({list(words)!r})"]


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs per statement (default 5)")
    args = parser.parse_args(argv)
    commands = {label: [sys.executable, "-c", code] for label, code in STATEMENTS.items()}
    commands["graphlib --help"] = _graphlib_command("--help")
    # A part's help builds only that part's parser; it may import torch (the configs do).
    commands["graphlib kg train --help"] = _graphlib_command("kg", "train", "--help")
    results: dict[str, dict[str, float]] = {}
    print(f"median of {args.repeats} fresh processes ({os.cpu_count()} CPUs)")
    print(f"{'statement':<40} {'wall s':>8} {'cpu s':>8}")
    for label, command in commands.items():
        results[label] = _median(command, args.repeats)
        print(
            f"{label:<40} {results[label]['wall']:>8.2f} {results[label]['cpu']:>8.2f}", flush=True
        )
    return results


if __name__ == "__main__":
    main()
