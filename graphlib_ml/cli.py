"""The ``graphlib`` console command: ``demo``, ``data`` and one subcommand per part.

The parser is built from a visible dict of the parts' ``add_subparser`` functions (no plugin
registry, no signature introspection). Each subcommand sets ``func(args) -> int``.

Examples:
    >>> parser = build_parser()
    >>> parser.parse_args(["demo", "--out", "report"]).out
    'report'
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import graphon.cli
import kg.cli
import spatial.cli
from graphdata.errors import GraphDataError

__all__ = ["build_parser", "main"]

#: Subcommands contributed by the parts: name -> function registering it on the subparsers.
PARTS: dict[str, Callable[[argparse._SubParsersAction], None]] = {
    "kg": kg.cli.add_subparser,
    "graphon": graphon.cli.add_subparser,
    "spatial": spatial.cli.add_subparser,
}


def _demo(args: argparse.Namespace) -> int:
    from graphlib_ml.demo import SECTIONS, run_demo

    parts = list(SECTIONS) if args.parts == "all" else [p.strip() for p in args.parts.split(",")]
    run_demo(Path(args.out), parts=parts, seed=args.seed, device=args.device)
    return 0


def _data_stats(args: argparse.Namespace) -> int:
    from graphdata.kg_stats import describe

    print(describe(args.path))
    return 0


def _data_family(args: argparse.Namespace) -> int:
    from graphdata.synthetic import family_kg

    world = family_kg(args.num_people, seed=args.seed)
    world.dataset.to_folder(args.out)
    print(
        f"wrote the synthetic family KG ({args.num_people} people, seed {args.seed}) "
        f"to {args.out}"
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    """Build the ``graphlib`` argument parser with every subcommand registered.

    Returns:
        The parser; ``parse_args`` yields a namespace whose ``func`` runs the command.
    """
    parser = argparse.ArgumentParser(
        prog="graphlib",
        description="Graph learning on knowledge graphs, graphons and spatial transcriptomics.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="run all parts on embedded defaults and write a report")
    demo.add_argument("--out", default="graphlib-demo", help="report folder (default: %(default)s)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    demo.add_argument("--device", default="auto", help="auto, cpu or cuda (default: %(default)s)")
    demo.add_argument(
        "--parts", default="all", help="comma-separated sections to run (default: %(default)s)"
    )
    demo.set_defaults(func=_demo)

    data = sub.add_parser("data", help="inspect and generate datasets")
    data_sub = data.add_subparsers(dest="data_command", required=True)
    stats = data_sub.add_parser("stats", help="print a knowledge graph's statistics")
    stats.add_argument("path", help="a folder with train/valid/test.txt or one labelled TSV file")
    stats.set_defaults(func=_data_stats)
    family = data_sub.add_parser("family", help="write the synthetic family KG as a folder")
    family.add_argument("out", help="output folder (train.txt, valid.txt, test.txt)")
    family.add_argument("--num-people", type=int, default=500, help="(default: %(default)s)")
    family.add_argument("--seed", type=int, default=0, help="(default: %(default)s)")
    family.set_defaults(func=_data_family)

    for add_subparser in PARTS.values():
        add_subparser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``graphlib`` command; bad input ends with its message and exit code 2.

    Args:
        argv: The arguments without the program name; ``None`` reads ``sys.argv``.

    Returns:
        The exit code.
    """
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (GraphDataError, FileNotFoundError, KeyError) as err:
        print(f"graphlib: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
