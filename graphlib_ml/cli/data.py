"""``graphlib data``: KG statistics, the synthetic family KG, registered benchmarks.

``graphlib data list`` prints the registered datasets (:mod:`graphdata.datasets`) with their
triple counts and whether they are cached; ``graphlib data download NAME [--root DIR]
[--from PATH] [--force]`` puts one in the cache (``GRAPHLIB_HOME``), downloading and verifying
it, or installing a local copy given with ``--from`` after checking its checksums.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from graphdata import cli_types

__all__ = ["add_subparser"]

#: ``family_kg``'s refusals of ``num_people``, spelled with the flag (the command draws the
#: default 5 generations, so at least 10 people).
_FAMILY_FAILURES = {
    "num_people: expected an int >= 2 * num_generations": {
        "num_people: expected an int >= 2 * num_generations = 10": (
            "--num-people: expected an int >= 10 (two people per generation, 5 generations)"
        ),
        "; ask for more people or fewer generations": "; pass --num-people 10 or more",
    },
    "num_people: expected an int in": {
        "num_people:": "--num-people:",
        "pass a smaller num_people": "pass a smaller --num-people",
    },
}

#: ``graphdata.datasets``' refusals of a registered name and of a local copy (``path=``),
#: spelled with the command's argument and flag.
_DOWNLOAD_FAILURES = {
    "dataset: expected one of": {
        "dataset: expected one of": "name: expected one of",
        "; or pass a folder with train.txt, valid.txt and test.txt": (
            "; `graphlib data list` lists them (a folder of your own needs no download: pass "
            "it to --dataset)"
        ),
    },
    "path: ": {"path: ": "--from: "},
}


def _data_stats(args: argparse.Namespace) -> int:
    from graphdata.kg_stats import describe

    print(describe(args.path))
    return 0


def _data_family(args: argparse.Namespace) -> int:
    from graphdata.synthetic import family_kg
    from graphlib_ml.cli._flags import flag_spellings

    with flag_spellings(_FAMILY_FAILURES):
        world = family_kg(args.num_people, seed=args.seed)
    world.dataset.to_folder(args.out)
    print(
        f"wrote the synthetic family KG ({args.num_people} people, seed {args.seed}) to {args.out}"
    )
    return 0


def _data_list(args: argparse.Namespace) -> int:
    from graphdata import datasets

    root = datasets.cache_root(args.root)
    print(f"{'name':<10} {'train':>9} {'valid':>7} {'test':>7}  cached  source")
    for name in datasets.names():
        spec = datasets.REGISTRY[name]
        counts = spec.counts
        cached = "yes" if (root / name / datasets.MANIFEST).is_file() else "no"
        print(
            f"{name:<10} {counts['train']:>9,} {counts['valid']:>7,} {counts['test']:>7,}  "
            f"{cached:<6}  {spec.source}"
        )
    print(f"cache: {root} (GRAPHLIB_HOME)")
    return 0


def _data_download(args: argparse.Namespace) -> int:
    from graphdata import datasets
    from graphlib_ml.cli._flags import flag_spellings

    with flag_spellings(_DOWNLOAD_FAILURES):
        spec = datasets.get_spec(args.name)
    if args.source is not None:
        with flag_spellings(_DOWNLOAD_FAILURES):
            datasets.load(spec, root=args.root, path=args.source)
        folder = datasets.path(spec, root=args.root)
        if not (folder / datasets.MANIFEST).is_file():
            folder = Path(args.source)  # a verified folder of split files, read in place
        print(f"{spec.name}: verified {args.source}; use it with --dataset {folder}")
        return 0
    folder = datasets.download(spec, root=args.root, force=args.force)
    print(f"{spec.name}: verified, in {folder}")
    return 0


def add_subparser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``graphlib data``: ``stats``, ``family``, ``list`` and ``download``.

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
    listing = data_sub.add_parser("list", help="list the registered benchmark datasets")
    listing.add_argument("--root", help="cache folder (default: $GRAPHLIB_HOME/datasets)")
    listing.set_defaults(func=_data_list)
    download = data_sub.add_parser(
        "download",
        help="download a registered dataset into the cache, verifying its checksums",
        description="Download a registered dataset (see `graphlib data list`) from its pinned "
        "source, verify each file's SHA-256 before use and move it into the cache; "
        "`graphlib kg train --dataset NAME` then reads it from there. Set "
        "GRAPHLIB_DATASETS_URL to use a mirror.",
    )
    download.add_argument("name", help="a registered name, e.g. fb15k237")
    download.add_argument("--root", help="cache folder (default: $GRAPHLIB_HOME/datasets)")
    download.add_argument(
        "--from",
        dest="source",
        metavar="PATH",
        help="no network: verify a copy you obtained yourself (the registered archive, a "
        "folder holding the registered files, or a folder of train/valid/test.txt)",
    )
    download.add_argument(
        "--force", action="store_true", help="download again even if the cache holds a copy"
    )
    download.set_defaults(func=_data_download)
