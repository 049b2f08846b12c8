"""``graphlib demo``: run every part on its embedded defaults and write one report folder.

The command only parses its flags; the sections and the report live in :mod:`graphlib_ml.demo`
and are imported when the command runs (they pull in torch and matplotlib).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from graphdata import cli_types

__all__ = ["SECTION_NAMES", "add_subparser"]

#: The demo's sections in report order (:data:`graphlib_ml.demo.SECTIONS` holds the functions).
SECTION_NAMES = ("data", "kg", "explain", "graphon", "iwn", "spatial")


def _demo(args: argparse.Namespace) -> int:
    from graphlib_ml.cli._folders import remove_new_folders_on_error
    from graphlib_ml.demo import SECTIONS, run_demo

    parts = list(SECTIONS) if args.parts == "all" else [p.strip() for p in args.parts.split(",")]
    # run_demo creates --out before it checks --device: a refusal then leaves no empty folder.
    with remove_new_folders_on_error(args.out):
        run_demo(Path(args.out), parts=parts, seed=args.seed, device=args.device)
    return 0


def add_subparser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``graphlib demo`` on the top-level subparsers.

    Args:
        subparsers: The ``graphlib`` parser's subparsers.

    Examples:
        >>> parser = argparse.ArgumentParser()
        >>> add_subparser(parser.add_subparsers(dest="command"))
        >>> parser.parse_args(["demo", "--out", "report"]).out
        'report'
    """
    demo = subparsers.add_parser(
        "demo", help="run all parts on embedded defaults and write a report"
    )
    demo.add_argument("--out", default="graphlib-demo", help="report folder (default: %(default)s)")
    # The spatial section's Celcomen config stores its seed in the AnnData: an int64.
    demo.add_argument(
        "--seed", type=cli_types.int64_seed, default=0, help="random seed (default: %(default)s)"
    )
    demo.add_argument("--device", default="auto", help="auto, cpu or cuda (default: %(default)s)")
    demo.add_argument(
        "--parts",
        default="all",
        help=f"comma-separated sections to run, from {','.join(SECTION_NAMES)} "
        "(default: %(default)s)",
    )
    demo.set_defaults(func=_demo)
