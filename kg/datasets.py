"""Datasets by spec: a folder, a registered benchmark or the synthetic KG, recorded in the dataset.

:func:`load_dataset` reads a dataset spec (``graphlib kg train --dataset``) and records it in the
dataset's ``name``, so that :func:`load_checkpoint_with_dataset` can reload the dataset a
checkpoint was trained on and refuse a mismatch (the ``graphlib kg`` and ``kg explain`` commands
use both).

A folder's name is its absolute path, followed by ``;on_unknown=MODE`` when it was read with an
``on_unknown`` other than the default ``"drop"`` (``--on-unknown extend`` gives other ids, so a
checkpoint must be reloaded with the same mode). Checkpoints written before the default became
``"drop"`` hold the plain path: they were read with ``"raise"``, which gives the same dataset as
``"drop"`` whenever it succeeded (nothing was unknown), so they reload unchanged.

A registered benchmark (:mod:`graphdata.datasets`: ``fb15k237``, ``wn18rr``, ``codex-s``, ...)
is recorded by its name, with the same ``;on_unknown=MODE`` suffix. A spec is resolved in this
order: the synthetic KG; an existing path is a folder (so a folder called ``fb15k237`` in the
working directory wins over the benchmark: pass ``./fb15k237`` or another path to be explicit);
otherwise a registered name (downloaded on first use, verified, cached under
``GRAPHLIB_HOME``); otherwise, for a spec that looks like a path (it has a ``/``), the folder
reader's :class:`FileNotFoundError`, and for a bare word an error listing the registered names.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from graphdata.errors import GraphDataError
from graphdata.synthetic import family_kg
from graphdata.triples import ON_UNKNOWN, KGDataset, OnUnknown

if TYPE_CHECKING:
    import torch

    from kg.base import KGEModel

__all__ = [
    "FOLDER_NAME",
    "SYNTHETIC_NAME",
    "dataset_on_unknown",
    "load_checkpoint_with_dataset",
    "load_dataset",
]

#: The name :func:`load_dataset` records for the synthetic family KG.
SYNTHETIC_NAME = re.compile(r"^synthetic:num_people=(\d+),seed=(\d+)$")
#: The name :func:`load_dataset` records for a folder read with a non-default ``on_unknown``:
#: ``<absolute path>;on_unknown=<mode>`` (groups ``path`` and ``mode``).
FOLDER_NAME = re.compile(r"^(?P<path>.+);on_unknown=(?P<mode>drop|raise|extend)$")
#: The default ``on_unknown`` of a folder (PyKEEN's behaviour), left out of the recorded name.
_DEFAULT_ON_UNKNOWN = "drop"


def load_dataset(
    spec: str,
    *,
    num_people: int = 300,
    seed: int = 0,
    on_unknown: OnUnknown | None = None,
    header: bool | None = None,
) -> KGDataset:
    """Load ``spec``: a folder of TSV splits, a registered benchmark, or ``synthetic``.

    The dataset's ``name`` records where it came from (the folder's absolute path or the
    registered name, plus ``;on_unknown=MODE`` unless the mode is ``"drop"``; or
    ``synthetic:num_people=N,seed=S``), so that ``kg evaluate`` can reload it from a checkpoint.
    An existing path wins over a registered name (see the module docstring).

    Args:
        spec: A folder path, a registered name (:func:`graphdata.datasets.names`, e.g.
            ``"fb15k237"``), ``"synthetic"``, or a name recorded by this function.
        num_people: People in the synthetic family world. Default 300.
        seed: Seed of the synthetic world. Default 0.
        on_unknown: For a folder, what to do with valid/test triples whose labels do not occur
            in ``train.txt`` (:meth:`KGDataset.from_folder`): ``"drop"`` them with one warning
            (PyKEEN's behaviour), ``"raise"``, or ``"extend"`` the vocabulary. Default
            ``None``: the mode ``spec`` records, else ``"drop"``. Ignored for the synthetic KG
            (every label occurs in its training split).
        header: For a folder of labelled TSV files, whether each file starts with a header row
            (:meth:`KGDataset.from_folder`): ``None`` (default) detects one by its column names
            (``head``/``relation``/``tail`` and their usual synonyms), ``True`` skips the first
            row, ``False`` reads it as a triple. Not recorded in the name: a checkpoint trained
            with a forced ``header`` reloads with the same ``header`` given again.

    Returns:
        The dataset.

    Raises:
        FileNotFoundError: If the folder or one of its split files is missing.
        GraphDataError: If ``on_unknown`` is not a mode, or differs from the one ``spec``
            records; with ``"raise"``, on unknown labels; if ``spec`` is neither a folder nor a
            registered name (the message lists the names).
        graphdata.datasets.DownloadError: If a registered dataset cannot be downloaded.

    Warns:
        UnknownLabelsDropped: When ``"drop"`` dropped triples (once per dataset).

    Examples:
        >>> load_dataset("synthetic", num_people=60).name
        'synthetic:num_people=60,seed=0'
    """
    if on_unknown is not None and on_unknown not in ON_UNKNOWN:
        raise GraphDataError(
            f"on_unknown: expected one of {ON_UNKNOWN}, got {on_unknown!r} "
            "(--on-unknown on the command line)"
        )
    match = SYNTHETIC_NAME.match(spec)
    if match:
        num_people, seed = int(match.group(1)), int(match.group(2))
    if spec == "synthetic" or match:
        data = family_kg(num_people, seed=seed).dataset
        name = f"synthetic:num_people={num_people},seed={seed}"
        return KGDataset(data.train, data.valid, data.test, name=name)
    folder = FOLDER_NAME.match(spec)
    mode = on_unknown or _DEFAULT_ON_UNKNOWN
    if folder is not None:
        recorded = folder.group("mode")
        if on_unknown is not None and on_unknown != recorded:
            raise GraphDataError(
                f"on_unknown: the dataset spec {spec!r} records on_unknown={recorded!r}, got "
                f"{on_unknown!r}; leave out on_unknown (--on-unknown) to use the recorded mode, "
                f"or pass the plain folder {folder.group('path')!r} to read it with another"
            )
        spec, mode = folder.group("path"), recorded
    path = Path(spec)
    if not path.exists():
        from graphdata import datasets

        registered = datasets.canonical_name(spec)
        if registered is not None:
            name = registered if mode == _DEFAULT_ON_UNKNOWN else f"{registered};on_unknown={mode}"
            data = datasets.load(registered, on_unknown=cast(OnUnknown, mode))
            return KGDataset(data.train, data.valid, data.test, name=name)
        if "/" not in spec and os.sep not in spec:
            raise GraphDataError(
                f"--dataset: expected a folder, 'synthetic' or one of "
                f"{', '.join(datasets.names())}, got {spec!r} (no such folder either)"
            )
    absolute = path.resolve()
    name = str(absolute) if mode == _DEFAULT_ON_UNKNOWN else f"{absolute};on_unknown={mode}"
    return KGDataset.from_folder(path, name=name, on_unknown=cast(OnUnknown, mode), header=header)


def dataset_on_unknown(name: str) -> str | None:
    """The ``on_unknown`` mode a dataset name from :func:`load_dataset` records.

    Args:
        name: A dataset's ``name``.

    Returns:
        ``"drop"`` for a plain folder path, the recorded mode for ``PATH;on_unknown=MODE``, and
        ``None`` for the synthetic KG.

    Examples:
        >>> dataset_on_unknown("/data/fb15k237;on_unknown=extend")
        'extend'
        >>> dataset_on_unknown("/data/fb15k237")
        'drop'
        >>> dataset_on_unknown("synthetic:num_people=9,seed=0") is None
        True
    """
    if SYNTHETIC_NAME.match(name):
        return None
    folder = FOLDER_NAME.match(name)
    return _DEFAULT_ON_UNKNOWN if folder is None else folder.group("mode")


def load_checkpoint_with_dataset(
    checkpoint: str,
    dataset_spec: str | None,
    device: torch.device,
    *,
    on_unknown: OnUnknown | None = None,
    header: bool | None = None,
) -> tuple[KGEModel, dict[str, Any], KGDataset]:
    """Load a trained model and the dataset it was trained on, refusing a mismatch.

    Args:
        checkpoint: A ``checkpoint.pt`` written by ``graphlib kg train``.
        dataset_spec: A folder or synthetic spec; ``None`` uses the one the checkpoint names
            (with the ``on_unknown`` mode it was trained with).
        device: Where to load the model.
        on_unknown: Passed to :func:`load_dataset`; default ``None``: the mode the spec
            records, else ``"drop"``.
        header: Passed to :func:`load_dataset` (a folder's header row; default: detected).

    Returns:
        The model, the checkpoint dictionary and the dataset.

    Raises:
        GraphDataError: If no dataset is known, or the checkpoint belongs to another model,
            vocabulary or set of triples (the message then names the ``--on-unknown`` the
            checkpoint was trained with, when it differs).
    """
    from kg.checkpoint import check_compatible, dataset_fingerprint
    from kg.prediction import load_model

    model, ckpt = load_model(checkpoint, device=device)
    spec = dataset_spec or ckpt.get("dataset_name")
    if spec is None:
        raise GraphDataError("--dataset: the checkpoint does not say which dataset; pass one")
    dataset = load_dataset(spec, on_unknown=on_unknown, header=header)
    try:
        check_compatible(
            ckpt,
            model_name=model.name,
            entity_labels=dataset.entities.labels,
            relation_labels=dataset.relations.labels,
            fingerprint=dataset_fingerprint(
                dataset.entities.labels,
                dataset.relations.labels,
                [ts.mapped_triples for ts in dataset.splits.values()],
            ),
        )
    except GraphDataError as err:
        recorded = ckpt.get("dataset_name")
        trained = dataset_on_unknown(recorded) if isinstance(recorded, str) else None
        used = dataset_on_unknown(dataset.name)
        if trained is None or used is None or trained == used:
            raise
        raise GraphDataError(
            f"{err} (the checkpoint was trained on a dataset read with on_unknown={trained!r}, "
            f"this one was read with {used!r}: pass --on-unknown {trained})"
        ) from err
    return model, ckpt, dataset
