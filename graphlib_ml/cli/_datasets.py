"""Dataset flags shared by ``graphlib kg`` and ``graphlib kg explain``: ``--on-unknown`` etc.

Its own module so that :mod:`graphlib_ml.cli.kg` and :mod:`graphlib_ml.cli.explain` both import
it and neither imports the other (no import circle, ``tests/kg/explain/test_layout.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from collections.abc import Iterator

from graphdata.errors import UnknownLabelsDropped
from graphdata.triples import ON_UNKNOWN

__all__ = ["add_header_flag", "add_on_unknown_flag", "dropped_triples_as_lines"]


def add_on_unknown_flag(parser: argparse.ArgumentParser, *, checkpoint: bool) -> None:
    """Add ``--on-unknown {drop,raise,extend}`` (dest ``on_unknown``, default ``None``).

    ``None`` means the mode the dataset spec records (a checkpoint's dataset name), else
    ``drop``: :func:`kg.datasets.load_dataset` takes it as it is.

    Args:
        parser: The command's parser.
        checkpoint: Whether the command reads a checkpoint (``evaluate``, ``explain``): the help
            then says that the checkpoint's mode is the default.
    """
    default = "the checkpoint's mode, else drop" if checkpoint else "drop"
    parser.add_argument(
        "--on-unknown",
        choices=ON_UNKNOWN,
        default=None,
        help="valid/test triples with labels not in train.txt: drop them with a warning "
        f"(PyKEEN's behaviour), raise an error, or extend the vocabulary (default {default})",
    )


def add_header_flag(parser: argparse.ArgumentParser) -> None:
    """Add ``--header`` / ``--no-header`` (dest ``header``, default ``None``: detect).

    The value is :meth:`graphdata.triples.KGDataset.from_folder`'s ``header``: ``None`` drops a
    first line of a labelled split file that names the columns (``head/relation/tail``,
    ``subject/predicate/object``, ``h/r/t``, ... in any case; :func:`graphdata._tsv.is_header_row`),
    ``True`` (``--header``) always drops the first line, ``False`` (``--no-header``) never does.

    Args:
        parser: The command's parser.
    """
    parser.add_argument(
        "--header",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the labelled split files start with a header row: --header drops each file's "
        "first line, --no-header keeps it (default: drop a first line naming the columns, "
        "e.g. head/relation/tail or subject/predicate/object)",
    )


@contextlib.contextmanager
def dropped_triples_as_lines() -> Iterator[None]:
    """Show :class:`~graphdata.errors.UnknownLabelsDropped` as one plain stderr line.

    The warning is printed as ``graphlib: warning: <message>`` (no Python warning formatting,
    no source line), once per warning; every other warning raised inside is passed on as it
    was.
    """
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UnknownLabelsDropped)
            yield
    finally:
        # After the block, so that the caller's filters apply to the warnings passed on.
        for w in caught:
            if issubclass(w.category, UnknownLabelsDropped):
                print(f"graphlib: warning: {w.message}", file=sys.stderr, flush=True)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
