r"""Folder formats of knowledge-graph datasets with numeric ids: PyKEEN's and OpenKE's.

:meth:`graphdata.triples.KGDataset.from_folder` reads three layouts, told apart by
:func:`detect_format` (``format="auto"``) or named with ``format=``:

``"labeled"``
    ``train.txt``, ``valid.txt``, ``test.txt``: ``head<TAB>relation<TAB>tail`` labels
    (:mod:`graphdata._tsv`; each file may be gzip-compressed, e.g. ``train.txt.gz``), optionally
    with the id maps ``entity_to_id.tsv.gz`` and ``relation_to_id.tsv.gz`` (PyKEEN's id-map
    format below), which then fix the ids.
``"pykeen"``
    What PyKEEN 1.11's ``Dataset.to_directory_binary`` writes: folders ``training/``,
    ``validation/`` and ``testing/``, each what ``TriplesFactory.to_path_binary`` writes:

    * ``numeric_triples.tsv.gz``: gzip TSV, the header ``head<TAB>relation<TAB>tail``, then one
      ``head_id<TAB>relation_id<TAB>tail_id`` row per triple (pandas ``to_csv``, no index);
    * ``entity_to_id.tsv.gz``, ``relation_to_id.tsv.gz``: gzip TSV, the header ``id<TAB>label``,
      then ``id<TAB>label`` rows by id; a label holding a tab, a newline or ``"`` is quoted as
      the :mod:`csv` module does (``"c""q"`` for ``c"q``), which is what pandas writes;
    * ``base.pth``: ``torch.save`` of ``{num_entities, num_relations, create_inverse_triples,
      metadata}``;

    and a ``metadata.pth`` (``{"name": ...}``) beside the folders. PyKEEN reads the maps with
    pandas, which infers column types: labels that are all integers (``"0", "1"``) come back to
    PyKEEN as ``int`` keys (ids and triples still agree); this module keeps them ``str``.
    ``.pth`` files are read with ``torch.load(weights_only=True)`` only, to cross-check the
    counts; one that would need unpickling (PyKEEN may store a ``pathlib.Path`` in
    ``metadata``) is not read: the counts are those of the id maps either way.
``"openke"``
    The benchmarks of OpenKE (thunlp/OpenKE ``benchmarks/FB15K237``): ``train2id.txt``,
    ``valid2id.txt``, ``test2id.txt``, whose first line is the number of triples and whose other
    lines are ``head_id tail_id relation_id`` (**head, tail, relation**: OpenKE's C reader does
    ``fscanf("%d %d %d", &h, &t, &r)``; any whitespace separates), and ``entity2id.txt``,
    ``relation2id.txt``, whose first line is the number of labels and whose other lines are
    ``label<TAB>id``.

Every reader checks what the writers guarantee: a count line equal to the number of rows, ids
that are plain non-negative integers, id maps whose ids are ``0, ..., n-1`` once each, triples
whose ids are in the maps. A violation is a :class:`~graphdata.errors.TSVFormatError` naming
``file:line``. Writers write each file atomically; ``.gz`` files carry no time stamp, so the same
dataset gives the same bytes. A write then read gives back the same ids and triples, in order.
"""

from __future__ import annotations

import csv
import io
import os
import pickle
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor

from graphdata._tsv import is_header_row, read_file_bytes, read_text_file, write_text_file
from graphdata.atomic import atomic_path
from graphdata.errors import GraphDataError, TSVFormatError
from graphdata.vocabulary import Vocabulary

__all__ = [
    "FORMATS",
    "ID_MAP_FILES",
    "Splits",
    "detect_format",
    "labeled_split_file",
    "read_pykeen_id_map",
    "write_pykeen_id_map",
    "read_openke_id_map",
    "write_openke_id_map",
    "read_pykeen_factory",
    "write_pykeen_factory",
    "read_pykeen_dataset",
    "write_pykeen_dataset",
    "read_openke_dataset",
    "write_openke_dataset",
]

#: The folder formats :meth:`~graphdata.triples.KGDataset.from_folder` reads, ``"auto"`` aside.
FORMATS: tuple[str, ...] = ("labeled", "pykeen", "openke")
#: Train/valid/test mapped triples, ``LongTensor [N, 3]`` (head, relation, tail) each.
Splits = dict[str, Tensor]
#: PyKEEN's id maps, in a ``to_path_binary`` folder or beside labelled splits.
ID_MAP_FILES: tuple[str, str] = ("entity_to_id.tsv.gz", "relation_to_id.tsv.gz")

_SPLITS = ("train", "valid", "test")
#: Our split names -> PyKEEN's ``Dataset.factory_dict`` keys (its sub-folders).
_PYKEEN_SPLITS = {"train": "training", "valid": "validation", "test": "testing"}
_PYKEEN_TRIPLES = "numeric_triples.tsv.gz"
_PYKEEN_BASE = "base.pth"
_PYKEEN_METADATA = "metadata.pth"
_OPENKE_SPLITS = {"train": "train2id.txt", "valid": "valid2id.txt", "test": "test2id.txt"}
_OPENKE_MAPS = ("entity2id.txt", "relation2id.txt")
#: The separators each row format allows, deleted before the digits-only check.
_SEPARATORS = {
    "hrt": str.maketrans("", "", "\t"),
    "htr": str.maketrans("", "", " \t\x0b\x0c\r"),
}
_LAYOUTS = (
    "labeled: train.txt, valid.txt, test.txt (labels, optionally gzip-compressed as .txt.gz)",
    "pykeen: training/, validation/, testing/ folders with numeric_triples.tsv.gz and "
    "entity_to_id.tsv.gz (PyKEEN's Dataset.to_directory_binary)",
    "openke: train2id.txt, valid2id.txt, test2id.txt, entity2id.txt, relation2id.txt",
)


def _is_id(field: str) -> bool:
    return field.isascii() and field.isdigit()


def _lines(text: str) -> list[str]:
    """The lines of ``text``, without the final newline."""
    if not text:
        return []
    return (text[:-1] if text.endswith("\n") else text).split("\n")


def _vocabulary(pairs: list[tuple[int, str, int]], source: str, kind: str) -> Vocabulary:
    """Build a vocabulary from ``(id, label, line)``; the ids must be ``0..n-1`` once each."""
    by_id: dict[int, tuple[str, int]] = {}
    for id_, label, line in pairs:
        if id_ in by_id:
            raise TSVFormatError(
                source,
                line,
                f"expected each {kind} id once, got id {id_} again (first on line "
                f"{by_id[id_][1]}); give every label its own id",
            )
        by_id[id_] = (label, line)
    missing = next((i for i in range(len(by_id)) if i not in by_id), None)
    if missing is not None:
        top = max(by_id)
        raise TSVFormatError(
            source,
            by_id[top][1],
            f"expected the {kind} ids 0..{len(by_id) - 1} (one per line), got id {top} while id "
            f"{missing} is missing; renumber the ids from 0 without gaps",
        )
    seen: dict[str, int] = {}
    labels = []
    for i in range(len(by_id)):
        label, line = by_id[i]
        if not label:
            raise TSVFormatError(source, line, f"expected a non-empty {kind} label, got ''")
        if label in seen:
            raise TSVFormatError(
                source,
                line,
                f"expected distinct {kind} labels, got {label!r} again (first on line "
                f"{seen[label]})",
            )
        seen[label] = line
        labels.append(label)
    return Vocabulary(labels, kind=kind)


def read_pykeen_id_map(path: str | os.PathLike[str], *, kind: str = "entity") -> Vocabulary:
    r"""Read PyKEEN's ``entity_to_id.tsv.gz`` / ``relation_to_id.tsv.gz``.

    The format of ``TriplesFactory.to_path_binary`` (PyKEEN 1.11): the header ``id<TAB>label``,
    then ``id<TAB>label`` rows, CSV quoting for labels with a tab, newline or ``"``; gzip or not.

    Args:
        path: The file.
        kind: What the labels name, for messages: ``"entity"`` (default) or ``"relation"``.

    Returns:
        The vocabulary: label ``l`` on the row with id ``i`` gets id ``i``.

    Raises:
        TSVFormatError: On a missing header, a row without 2 fields, a non-integer, repeated or
            missing id, or a repeated label, naming ``path:line``.
    """
    source = str(path)
    data = read_file_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise TSVFormatError(
            source, data.count(b"\n", 0, err.start) + 1, "expected UTF-8 text; re-encode it"
        ) from None
    text = text.removeprefix("\ufeff")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t")
    pairs: list[tuple[int, str, int]] = []
    header_seen = False
    for row in reader:
        line = reader.line_num
        if not header_seen:
            if [field.lower() for field in row] != ["id", "label"]:
                raise TSVFormatError(
                    source,
                    line,
                    f"expected the header 'id<TAB>label' (PyKEEN's id-map format), got {row!r}",
                )
            header_seen = True
            continue
        if len(row) != 2 or not _is_id(row[0]):
            raise TSVFormatError(
                source,
                line,
                f"expected 'id<TAB>label' with a non-negative integer id, got {row!r}",
            )
        pairs.append((int(row[0]), row[1], line))
    if not header_seen:
        raise TSVFormatError(source, 1, "expected the header 'id<TAB>label', got an empty file")
    return _vocabulary(pairs, source, kind)


def write_pykeen_id_map(path: str | os.PathLike[str], vocabulary: Vocabulary) -> None:
    r"""Write ``vocabulary`` as PyKEEN's id map (``id<TAB>label`` header, rows by id).

    Byte for byte what PyKEEN 1.11's ``to_path_binary`` writes before compression (pandas
    ``to_csv(sep="\t")``, minimal CSV quoting); gzip-compressed when ``path`` ends in ``.gz``.

    Args:
        path: The destination file.
        vocabulary: The labels in id order.

    Examples:
        >>> import tempfile, gzip, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> write_pykeen_id_map(folder / "e.tsv.gz", Vocabulary(["b", 'c"q']))
        >>> gzip.decompress((folder / "e.tsv.gz").read_bytes())
        b'id\tlabel\n0\tb\n1\t"c""q"\n'
        >>> read_pykeen_id_map(folder / "e.tsv.gz").labels
        ('b', 'c"q')
    """
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow(["id", "label"])
    writer.writerows(enumerate(vocabulary.labels))
    write_text_file(path, buffer.getvalue())


def read_openke_id_map(path: str | os.PathLike[str], *, kind: str = "entity") -> Vocabulary:
    """Read OpenKE's ``entity2id.txt`` / ``relation2id.txt``: a count line, then ``label<TAB>id``.

    A line without a tab is split at its last run of whitespace (``label id``).

    Args:
        path: The file.
        kind: What the labels name, for messages. Default ``"entity"``.

    Returns:
        The vocabulary: each label gets its id.

    Raises:
        TSVFormatError: On a count line that is not the number of rows, a row without a label
            and an integer id, a repeated or missing id, or a repeated label.
    """
    source = str(path)
    lines = _lines(read_text_file(path))
    count = _count_line(lines, source, f"{kind} labels")
    pairs = []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t") if "\t" in line else line.rsplit(None, 1)
        if len(fields) != 2 or not _is_id(fields[1].strip()) or not fields[0]:
            raise TSVFormatError(
                source,
                number,
                f"expected 'label<TAB>id' with a non-negative integer id (OpenKE's "
                f"{Path(source).name}), got {line!r}",
            )
        pairs.append((int(fields[1]), fields[0], number))
    _check_count(count, len(pairs), source, f"{kind} labels")
    return _vocabulary(pairs, source, kind)


def write_openke_id_map(path: str | os.PathLike[str], vocabulary: Vocabulary) -> None:
    r"""Write ``vocabulary`` as OpenKE's ``entity2id.txt``: the count, then ``label\tid`` lines.

    Args:
        path: The destination file.
        vocabulary: The labels in id order.

    Raises:
        GraphDataError: If a label holds a tab or a newline (it would not read back).
    """
    _check_plain_labels(vocabulary, path)
    rows = "".join(f"{label}\t{i}\n" for i, label in enumerate(vocabulary.labels))
    write_text_file(path, f"{len(vocabulary)}\n{rows}")


def _check_plain_labels(vocabulary: Vocabulary, path: str | os.PathLike[str]) -> None:
    bad = next((x for x in vocabulary.labels if "\t" in x or "\n" in x or "\r" in x), None)
    if bad is not None:
        raise GraphDataError(
            f"{vocabulary.kind} labels: {bad!r} holds a tab or a line break, which {path} cannot "
            "store; rename it"
        )


def _count_line(lines: list[str], source: str, what: str) -> int:
    if not lines or not _is_id(lines[0].strip()):
        got = repr(lines[0]) if lines else "an empty file"
        raise TSVFormatError(
            source, 1, f"expected a first line holding the number of {what} (OpenKE), got {got}"
        )
    return int(lines[0])


def _check_count(count: int, rows: int, source: str, what: str) -> None:
    if count != rows:
        raise TSVFormatError(
            source,
            1,
            f"expected the first line to count the {what} that follow, got {count} while "
            f"{rows} follow; fix the count line",
        )


def _parse_ids(lines: list[str], source: str, start: int, order: str) -> Tensor:
    """Parse ``lines`` of 3 integer ids each; ``order`` names the columns (``"hrt"``/``"htr"``).

    ``start`` is the file's line number of ``lines[0]``. PyKEEN's rows are split at tabs, OpenKE's
    at any whitespace. Clean files take one pass of C-level checks and one numpy conversion; the
    line-by-line pass runs only to name the first bad line.
    """
    rows = [line.split("\t") if order == "hrt" else line.split() for line in lines]
    if not rows:
        return torch.empty(0, 3, dtype=torch.long)
    # Only digits besides the separators: no sign, no decimal point, no stray space in a field.
    digits = "".join(lines).translate(_SEPARATORS[order])
    try:
        if not (digits.isascii() and digits.isdigit()):
            raise ValueError("not digits")
        ids = np.array(rows, dtype=np.int64)  # ragged rows or an empty field raise ValueError
        if ids.shape != (len(rows), 3):
            raise ValueError("not 3 fields per line")
    except ValueError:
        expected = (
            "head_id<TAB>relation_id<TAB>tail_id (PyKEEN's numeric triples)"
            if order == "hrt"
            else "'head_id tail_id relation_id' (OpenKE's order: head, tail, relation)"
        )
        for number, (line, row) in enumerate(zip(lines, rows), start=start):
            if len(row) != 3 or not all(_is_id(x) for x in row) or not line.isascii():
                raise TSVFormatError(
                    source,
                    number,
                    f"expected {expected}, three non-negative integers, got {line!r}",
                ) from None
        raise TSVFormatError(source, start, f"expected {expected} on every line") from None
    if order == "htr":
        ids = ids[:, [0, 2, 1]]  # [N, 3] head, tail, relation -> head, relation, tail
    return torch.from_numpy(np.ascontiguousarray(ids))


def _check_in_maps(
    mapped: Tensor, entities: Vocabulary, relations: Vocabulary, source: str, maps: str
) -> None:
    if not mapped.numel():
        return
    for column, vocab in ((0, entities), (1, relations), (2, entities)):
        top = int(mapped[:, column].max())
        if top >= len(vocab):
            row = int((mapped[:, column] >= len(vocab)).nonzero()[0, 0])
            raise GraphDataError(
                f"{source}: expected {vocab.kind} ids in [0, {len(vocab)}) (the ids of {maps}), "
                f"got {top} (triple {row}); the triples and the id maps do not belong together"
            )


def read_pykeen_factory(path: str | os.PathLike[str]) -> tuple[Tensor, Vocabulary, Vocabulary]:
    """Read a folder written by PyKEEN's ``TriplesFactory.to_path_binary``.

    Args:
        path: The folder holding ``numeric_triples.tsv.gz``, ``entity_to_id.tsv.gz`` and
            ``relation_to_id.tsv.gz`` (``base.pth`` is optional).

    Returns:
        ``(mapped_triples [N, 3], entities, relations)``, the triples in file order.

    Raises:
        FileNotFoundError: If a file is missing; the message lists the folder.
        TSVFormatError: On a malformed file, naming ``file:line``.
        GraphDataError: If a triple's id is outside the id maps, or ``base.pth`` counts
            differ from the maps.
    """
    folder = Path(path)
    names = (_PYKEEN_TRIPLES, *ID_MAP_FILES)
    missing = [name for name in names if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"path: expected a PyKEEN TriplesFactory folder (to_path_binary) with "
            f"{', '.join(names)}, but {folder} lacks {', '.join(missing)} "
            f"(it holds {_listing(folder)})"
        )
    entities = read_pykeen_id_map(folder / ID_MAP_FILES[0], kind="entity")
    relations = read_pykeen_id_map(folder / ID_MAP_FILES[1], kind="relation")
    source = str(folder / _PYKEEN_TRIPLES)
    lines = _lines(read_text_file(source))
    if not lines or not is_header_row(lines[0].split("\t")):
        got = repr(lines[0]) if lines else "an empty file"
        raise TSVFormatError(
            source,
            1,
            f"expected the header 'head<TAB>relation<TAB>tail' (pandas reads the first line of "
            f"PyKEEN's numeric triples as column names), got {got}",
        )
    mapped = _parse_ids(lines[1:], source, 2, "hrt")
    _check_in_maps(mapped, entities, relations, source, "entity_to_id.tsv.gz/relation_to_id.tsv.gz")
    base = _load_plain(folder / _PYKEEN_BASE)
    if isinstance(base, dict):
        for key, vocab in (("num_entities", entities), ("num_relations", relations)):
            if key in base and base[key] != len(vocab):
                raise GraphDataError(
                    f"{folder / _PYKEEN_BASE}: expected {key} {len(vocab)} (the rows of the id "
                    f"map), got {base[key]!r}; the files come from different factories"
                )
    return mapped, entities, relations


def write_pykeen_factory(
    path: str | os.PathLike[str],
    mapped_triples: Tensor,
    entities: Vocabulary,
    relations: Vocabulary,
) -> None:
    """Write a folder as PyKEEN 1.11's ``TriplesFactory.to_path_binary`` does.

    ``TriplesFactory.from_path_binary`` reads it back with the same ids and triples.

    Args:
        path: The folder; created if missing.
        mapped_triples: ``LongTensor [N, 3]``, head, relation, tail ids.
        entities: The entity vocabulary.
        relations: The relation vocabulary.
    """
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    rows = "".join(f"{h}\t{r}\t{t}\n" for h, r, t in mapped_triples.tolist())
    write_text_file(folder / _PYKEEN_TRIPLES, "head\trelation\ttail\n" + rows)
    write_pykeen_id_map(folder / ID_MAP_FILES[0], entities)
    write_pykeen_id_map(folder / ID_MAP_FILES[1], relations)
    state = {
        "num_entities": len(entities),
        "num_relations": len(relations),
        "create_inverse_triples": False,
        "metadata": {},
    }
    _save_plain(folder / _PYKEEN_BASE, state)


def _save_plain(path: Path, value: dict[str, Any]) -> None:
    with atomic_path(path, suffix=".tmp") as temp:
        torch.save(value, temp)


def _load_plain(path: Path) -> object:
    """``torch.load(weights_only=True)`` of ``path``, or ``None`` if absent or not plain data."""
    if not path.is_file():
        return None
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, OSError):
        return None  # needs unpickling (e.g. a pathlib.Path in metadata): never executed


def read_pykeen_dataset(path: str | os.PathLike[str]) -> tuple[Splits, Vocabulary, Vocabulary]:
    """Read a folder written by PyKEEN's ``Dataset.to_directory_binary``.

    Args:
        path: The folder holding ``training/``, ``validation/`` and ``testing/``.

    Returns:
        ``({"train": ..., "valid": ..., "test": ...}, entities, relations)``.

    Raises:
        FileNotFoundError: If a split folder or file is missing.
        TSVFormatError: On a malformed file.
        GraphDataError: If the splits' id maps differ.
    """
    folder = Path(path)
    _check_folder(folder, "PyKEEN's dataset folders training/, validation/ and testing/")
    splits: Splits = {}
    vocabularies: dict[str, tuple[Vocabulary, Vocabulary]] = {}
    for split, key in _PYKEEN_SPLITS.items():
        if not (folder / key).is_dir():
            raise FileNotFoundError(
                f"path: expected PyKEEN's dataset folders training/, validation/ and testing/, "
                f"but {folder} lacks {key}/ (it holds {_listing(folder)})"
            )
        splits[split], *vocabs = read_pykeen_factory(folder / key)
        vocabularies[split] = (vocabs[0], vocabs[1])
    entities, relations = vocabularies["train"]
    for split in ("valid", "test"):
        if vocabularies[split] != (entities, relations):
            raise GraphDataError(
                f"path: expected the id maps of {_PYKEEN_SPLITS[split]}/ to equal those of "
                f"training/ in {folder}, got different ones; write the splits from one "
                "PyKEEN Dataset (they share the training factory's maps)"
            )
    return splits, entities, relations


def write_pykeen_dataset(
    path: str | os.PathLike[str],
    splits: Mapping[str, Tensor],
    entities: Vocabulary,
    relations: Vocabulary,
    *,
    name: str = "dataset",
) -> None:
    """Write train/valid/test as PyKEEN 1.11's ``Dataset.to_directory_binary`` does.

    ``pykeen.datasets.Dataset.from_directory_binary`` reads it back with the same ids.

    Args:
        path: The folder; created if missing.
        splits: ``{"train": ..., "valid": ..., "test": ...}`` mapped triples.
        entities: The shared entity vocabulary.
        relations: The shared relation vocabulary.
        name: Stored as ``metadata.pth``'s ``name``. Default ``"dataset"``.
    """
    folder = Path(path)
    for split, key in _PYKEEN_SPLITS.items():
        write_pykeen_factory(folder / key, splits[split], entities, relations)
    _save_plain(folder / _PYKEEN_METADATA, {"name": name})


def read_openke_dataset(path: str | os.PathLike[str]) -> tuple[Splits, Vocabulary, Vocabulary]:
    """Read an OpenKE benchmark folder (``train2id.txt``, ..., ``entity2id.txt``).

    Args:
        path: The folder.

    Returns:
        ``({"train": ..., "valid": ..., "test": ...}, entities, relations)``; the triples'
        columns are reordered from OpenKE's head, tail, relation to head, relation, tail.

    Raises:
        FileNotFoundError: If a file is missing; the message lists the folder.
        TSVFormatError: On a malformed file (a wrong count line, a non-integer id, ...).
        GraphDataError: If a triple's id is outside ``entity2id.txt``/``relation2id.txt``.
    """
    folder = Path(path)
    names = (*_OPENKE_SPLITS.values(), *_OPENKE_MAPS)
    _check_folder(folder, f"an OpenKE folder with {', '.join(names)}")
    missing = [name for name in names if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"path: expected an OpenKE folder with {', '.join(names)}, but {folder} lacks "
            f"{', '.join(missing)} (it holds {_listing(folder)})"
        )
    entities = read_openke_id_map(folder / _OPENKE_MAPS[0], kind="entity")
    relations = read_openke_id_map(folder / _OPENKE_MAPS[1], kind="relation")
    splits: Splits = {}
    for split, name in _OPENKE_SPLITS.items():
        source = str(folder / name)
        lines = _lines(read_text_file(source))
        count = _count_line(lines, source, "triples")
        splits[split] = _parse_ids(lines[1:], source, 2, "htr")
        _check_count(count, len(splits[split]), source, "triples")
        _check_in_maps(splits[split], entities, relations, source, "entity2id.txt/relation2id.txt")
    return splits, entities, relations


def write_openke_dataset(
    path: str | os.PathLike[str],
    splits: Mapping[str, Tensor],
    entities: Vocabulary,
    relations: Vocabulary,
) -> None:
    """Write train/valid/test as an OpenKE benchmark folder (head, tail, relation columns).

    Args:
        path: The folder; created if missing.
        splits: ``{"train": ..., "valid": ..., "test": ...}`` mapped triples.
        entities: The shared entity vocabulary.
        relations: The shared relation vocabulary.

    Raises:
        GraphDataError: If a label holds a tab or a line break; nothing is written then.
    """
    _check_plain_labels(entities, _OPENKE_MAPS[0])
    _check_plain_labels(relations, _OPENKE_MAPS[1])
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    for split, name in _OPENKE_SPLITS.items():
        triples = splits[split].tolist()
        rows = "".join(f"{h} {t} {r}\n" for h, r, t in triples)  # OpenKE's order: h t r
        write_text_file(folder / name, f"{len(triples)}\n{rows}")
    write_openke_id_map(folder / _OPENKE_MAPS[0], entities)
    write_openke_id_map(folder / _OPENKE_MAPS[1], relations)


def _check_folder(folder: Path, expected: str) -> None:
    if not folder.is_dir():
        what = "does not exist" if not folder.exists() else "is not a folder"
        raise FileNotFoundError(f"path: expected {expected}, but {folder} {what}")


def _listing(folder: Path) -> list[str]:
    if not folder.is_dir():
        return []
    return sorted(p.name + ("/" if p.is_dir() else "") for p in folder.iterdir())


def labeled_split_file(folder: Path, split: str) -> Path | None:
    """The labelled file of ``split`` in ``folder``: ``{split}.txt`` or ``{split}.txt.gz``.

    Args:
        folder: The dataset folder.
        split: ``"train"``, ``"valid"`` or ``"test"``.

    Returns:
        The file that exists, or ``None``.

    Raises:
        GraphDataError: If both exist: which one holds the split cannot be told.
    """
    found = [
        folder / name for name in (f"{split}.txt", f"{split}.txt.gz") if (folder / name).is_file()
    ]
    if len(found) > 1:
        raise GraphDataError(
            f"path: {folder} holds both {split}.txt and {split}.txt.gz, expected one file per "
            "split; remove the one that is not the split to read"
        )
    return found[0] if found else None


def detect_format(path: str | os.PathLike[str]) -> Literal["labeled", "pykeen", "openke"]:
    """Tell which layout the dataset folder ``path`` holds (see the module docstring).

    The markers: ``train.txt`` (or ``train.txt.gz``) for ``"labeled"``,
    ``training/numeric_triples.tsv.gz`` for ``"pykeen"``, ``train2id.txt`` for ``"openke"``.

    Args:
        path: The folder.

    Returns:
        The format name.

    Raises:
        FileNotFoundError: If ``path`` is not a folder, or holds no known layout; the message
            lists what it holds and the layouts expected.
        GraphDataError: If it holds the markers of more than one layout.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise FileNotFoundError(
            f"path: expected a folder with train.txt, valid.txt and test.txt, but {folder} is not "
            "a folder"
        )
    found: list[Literal["labeled", "pykeen", "openke"]] = []
    if labeled_split_file(folder, "train") is not None:
        found.append("labeled")
    if (folder / _PYKEEN_SPLITS["train"] / _PYKEEN_TRIPLES).is_file():
        found.append("pykeen")
    if (folder / _OPENKE_SPLITS["train"]).is_file():
        found.append("openke")
    if len(found) > 1:
        raise GraphDataError(
            f"path: {folder} holds the files of several formats ({', '.join(found)}); pass "
            "format= to say which to read"
        )
    if not found:
        raise FileNotFoundError(
            f"path: expected a dataset folder in one of these layouts: {'; '.join(_LAYOUTS)}; "
            f"but {folder} holds {_listing(folder)}"
        )
    return found[0]
