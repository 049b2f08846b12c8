"""``graphlib data``: print a knowledge graph's statistics, write the synthetic family KG."""

from __future__ import annotations

import argparse

from graphdata import cli_types

__all__ = ["add_subparser"]


def _data_stats(args: argparse.Namespace) -> int:
    from graphdata.kg_stats import describe

    print(describe(args.path))
    return 0


def _data_family(args: argparse.Namespace) -> int:
    from graphdata.synthetic import family_kg

    world = family_kg(args.num_people, seed=args.seed)
    world.dataset.to_folder(args.out)
    print(
        f"wrote the synthetic family KG ({args.num_people} people, seed {args.seed}) to {args.out}"
    )
    return 0


def add_subparser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``graphlib data`` with its ``stats`` and ``family`` commands.

    Args:
        subparsers: The ``graphlib`` parser's subparsers.

    Examples:
        >>> parser = argparse.ArgumentParser()
        >>> add_subparser(parser.add_subparsers(dest="command"))
        >>> parser.parse_args(["data", "family", "out", "--num-people", "40"]).num_people
        40
    """
    data = subparsers.add_parser("data", help="inspect and generate datasets")
    data_sub = data.add_subparsers(dest="data_command", required=True)
    stats = data_sub.add_parser("stats", help="print a knowledge graph's statistics")
    stats.add_argument("path", help="a folder with train/valid/test.txt or one labelled TSV file")
    stats.set_defaults(func=_data_stats)
    family = data_sub.add_parser("family", help="write the synthetic family KG as a folder")
    family.add_argument("out", help="output folder (train.txt, valid.txt, test.txt)")
    family.add_argument(
        "--num-people", type=cli_types.positive_int, default=500, help="(default: %(default)s)"
    )
    family.add_argument("--seed", type=cli_types.seed, default=0, help="(default: %(default)s)")
    family.set_defaults(func=_data_family)
