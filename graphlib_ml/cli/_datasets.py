"""Dataset flags shared by ``graphlib kg`` and ``graphlib kg explain``: ``--on-unknown`` etc.

Its own module so that :mod:`graphlib_ml.cli.kg` and :mod:`graphlib_ml.cli.explain` both import
it and neither imports the other (no import circle, ``tests/kg/explain/test_layout.py``).

:func:`resolve_world` lets ``--dataset`` name a synthetic world of :data:`graphdata.worlds.WORLDS`
(``academic``, ``geography``, ``biology``, ``software``, ``corporate``, ``media``, ``sports``,
``travel``, ``commerce``, ``clinical``, ``legal``, ``energy``, ``agriculture``, ``maritime``,
``telecom``, ``aviation``, ``publishing``, ``banking``, ``railways``, ``parliament``,
``construction``, ``ecology``, ``insurance``, ``schools``, ``heritage``, ``wine``, ``transit``;
``NAME:size=N,seed=S`` for another draw): the world is written once into the dataset cache and the
spec becomes that folder, whose ``rules.txt`` is the ``--rules`` file of ``graphlib kg explain``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO, overload

import torch

from graphdata.device import resolve_device
from graphdata.errors import GraphDataError, UnknownLabelsDropped
from graphdata.triples import ON_UNKNOWN

__all__ = [
    "add_header_flag",
    "compute_device",
    "add_on_unknown_flag",
    "dropped_triples_as_lines",
    "resolve_world",
    "user_warnings_as_lines",
    "world_folder",
]

#: ``NAME`` or ``NAME:key=value,...`` with keys ``size`` and ``seed`` (a world spec).
_WORLD_SPEC = re.compile(r"^(?P<name>[a-z]+)(?::(?P<options>.*))?$")
#: One option of a world spec.
_WORLD_OPTION = re.compile(r"^(size|seed)=(\d+)$")


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


#: Device types that hold data to train and score on (``meta`` and the like hold none).
_COMPUTE_DEVICES = ("cpu", "cuda", "mps", "xpu")


def compute_device(spec: str) -> torch.device:
    """``--device`` of ``graphlib kg``: :func:`~graphdata.device.resolve_device`, checked.

    A device type without data (``meta``, ...) is refused naming the flag, and ``cpu:N`` is
    plain ``cpu`` (torch has one CPU device, and ``torch.load`` cannot map a checkpoint to
    ``cpu:0``).
    """
    device = resolve_device(spec)
    if device.type not in _COMPUTE_DEVICES:
        raise GraphDataError(
            f"--device: expected 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps', got {spec!r}, a "
            f"{device.type!r} device that holds no data to train or score on; pass --device cpu "
            "(or 'auto')"
        )
    return torch.device("cpu") if device.type == "cpu" else device


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


@contextlib.contextmanager
def user_warnings_as_lines() -> Iterator[None]:
    """Show each :class:`UserWarning` raised inside as one ``graphlib: warning: ...`` line.

    At once (a resumed run's changed settings are said before its epochs, not after them), on
    stderr, without Python's warning format and source line; the library's own categories
    (subclasses such as :class:`kg.explain.local.CandidatesCappedSummary`) too. Other
    categories (deprecations and the like) are shown as they were.
    """
    with warnings.catch_warnings():
        shown = warnings.showwarning  # Python's, or a recorder such as pytest's

        def show(
            message: Warning | str,
            category: type[Warning],
            filename: str,
            lineno: int,
            file: TextIO | None = None,
            line: str | None = None,
        ) -> None:
            if issubclass(category, UserWarning):
                sys.stdout.flush()
                print(f"graphlib: warning: {message}", file=sys.stderr, flush=True)
            else:
                shown(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        yield


def world_folder(
    name: str, *, seed: int, size: int | None, root: str | os.PathLike[str] | None = None
) -> Path:
    """The cache folder of a world draw: ``<dataset cache>/worlds/<name>-seed<S>-size<N>``.

    Args:
        name: A key of :data:`graphdata.worlds.WORLDS`.
        seed: The world's seed.
        size: Its size; ``None``: the generator's default (``size-default``).
        root: The dataset cache; default ``None``: :func:`graphdata.datasets.cache_root`
            (``$GRAPHLIB_HOME/datasets``).

    Returns:
        The folder (not created).
    """
    from graphdata.datasets import cache_root

    tag = "default" if size is None else str(size)
    return cache_root(root) / "worlds" / f"{name}-seed{seed}-size{tag}"


@overload
def resolve_world(
    spec: str, *, seed: int = 0, root: str | os.PathLike[str] | None = None
) -> str: ...
@overload
def resolve_world(
    spec: None, *, seed: int = 0, root: str | os.PathLike[str] | None = None
) -> None: ...
def resolve_world(
    spec: str | None, *, seed: int = 0, root: str | os.PathLike[str] | None = None
) -> str | None:
    """Resolve a world name to the folder it is written to; any other spec comes back as it is.

    The order is :func:`kg.datasets.load_dataset`'s, with worlds last: an existing path wins,
    then the synthetic family KG and a registered benchmark (left to ``load_dataset``), then a
    world of :data:`graphdata.worlds.WORLDS`, ``NAME`` or ``NAME:size=N,seed=S``. The world is
    drawn with :func:`graphdata.worlds.world` and written by :meth:`graphdata.worlds.World.write`
    into :func:`world_folder` unless that folder already holds a complete draw (its
    ``world.json``, written last); a line says where, and which ``rules.txt`` to pass to
    ``graphlib kg explain --rules``.

    Args:
        spec: The ``--dataset`` value, or ``None``.
        seed: The world's seed unless the spec gives one (``--seed``, else 0). Default 0.
        root: The dataset cache; default ``None``: ``$GRAPHLIB_HOME/datasets``.

    Returns:
        The folder (as a string) for a world spec; ``spec`` unchanged otherwise.

    Raises:
        GraphDataError: For a world spec with an unknown option or a bad size (the
            generator's message), or a bare name that is no folder, family KG, registered
            dataset or world (every choice listed).

    Examples:
        >>> resolve_world("synthetic"), resolve_world(None)
        ('synthetic', None)
    """
    if spec is None or Path(spec).exists():
        return spec
    match = _WORLD_SPEC.match(spec)
    if match is None:
        return spec
    from graphdata import datasets
    from graphdata.worlds import WORLDS, world

    name = match.group("name")
    if name == "synthetic" or datasets.canonical_name(spec) is not None:
        return spec
    if name not in WORLDS:  # no folder, family KG, benchmark or world: say every choice
        raise GraphDataError(
            f"--dataset: expected a folder, 'synthetic', a synthetic world ({', '.join(WORLDS)}; "
            f"NAME:size=N,seed=S) or a registered dataset ({', '.join(datasets.names())}), got "
            f"{spec!r} (no such folder either)"
        )
    options: dict[str, str] = {}
    for item in (match.group("options") or "").split(",") if match.group("options") else []:
        option = _WORLD_OPTION.match(item.strip())
        if option is None:
            raise GraphDataError(
                f"--dataset: a world spec is NAME or NAME:size=N,seed=S with non-negative "
                f"integers, got {item!r} in {spec!r}; e.g. --dataset {name}:size=100,seed=1"
            )
        options[option.group(1)] = option.group(2)
    seed = int(options.get("seed", seed))
    size = int(options["size"]) if "size" in options else None
    folder = world_folder(name, seed=seed, size=size, root=root)
    if (folder / "world.json").is_file():
        print(f"world {name} (seed {seed}, size {size or 'default'}): {folder}")
    else:
        from graphlib_ml.cli._flags import flag_spellings

        # The generator names its keyword (size: ...); here it is the spec's size=N.
        spelled = {
            "size: expected": {
                "size: expected": f"--dataset {spec}: size=N expected",
                "pass e.g. size=": f"pass e.g. --dataset {name}:size=",
                "pass a smaller size": f"pass a smaller size=N in --dataset {name}:size=N",
            }
        }
        with flag_spellings(spelled):
            drawn = world(name, seed=seed, size=size)
        drawn.write(folder)
        print(f"world {name} (seed {seed}, size {size or 'default'}): wrote {folder}")
    print(f"  rules: {folder / 'rules.txt'} (graphlib kg explain ... --rules this file)")
    return str(folder)
