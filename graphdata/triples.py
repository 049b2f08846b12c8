r"""Knowledge-graph datasets: train/valid/test triple sets that share one vocabulary.

A :class:`KGDataset` holds three :class:`~graphdata.tripleset.TripleSet` objects over the same
entity and relation :class:`~graphdata.vocabulary.Vocabulary`, built from the *training*
triples (sorted labels, :func:`~graphdata.vocabulary.sort_labels`), or read from the id maps of a
PyKEEN or OpenKE folder (:mod:`graphdata.formats`). The id and inverse-relation
conventions are those of :mod:`graphdata.tripleset`. This module also re-exports
:class:`Vocabulary`, :class:`TripleSet` and ``INVERSE_SUFFIX``, so
``from graphdata.triples import KGDataset, TripleSet`` keeps working.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import torch
from torch import Tensor

from graphdata import formats
from graphdata._labels import (
    _as_labeled,
    _entity_labels,
    _examples,
    _inverse_vocabulary,
    _map,
    _with_inverse,
)
from graphdata._tsv import format_labeled_triples, read_labeled_triples, write_text_file
from graphdata.errors import GraphDataError, UnknownLabelsDropped
from graphdata.filter_index import FilterIndex
from graphdata.tripleset import TripleSet
from graphdata.typing import LabeledTriple
from graphdata.vocabulary import INVERSE_SUFFIX, Vocabulary

__all__ = [
    "INVERSE_SUFFIX",
    "ON_UNKNOWN",
    "FolderFormat",
    "OnUnknown",
    "Vocabulary",
    "TripleSet",
    "KGDataset",
]

_SPLITS = ("train", "valid", "test")

#: What :meth:`KGDataset.from_folder` may do with valid/test labels unseen in train.
OnUnknown = Literal["drop", "raise", "extend"]
#: The values of :data:`OnUnknown`, the default first.
ON_UNKNOWN: tuple[str, ...] = ("drop", "raise", "extend")
#: A folder format of :meth:`KGDataset.from_folder` (:mod:`graphdata.formats`).
FolderFormat = Literal["auto", "labeled", "pykeen", "openke"]


class KGDataset:
    """Train/valid/test triple sets that share one entity and one relation vocabulary.

    Args:
        train: The training triples.
        valid: The validation triples.
        test: The test triples.
        name: The dataset's name. Default ``"dataset"``.

    Raises:
        GraphDataError: If the splits' vocabularies differ.

    Examples:
        >>> ds = KGDataset.from_labeled(
        ...     [("a", "parent", "b"), ("b", "parent", "c")], [("a", "parent", "c")],
        ...     [("c", "parent", "a")], name="toy")
        >>> ds
        KGDataset('toy': 3 entities, 1 relations, train 2, valid 1, test 1)
        >>> ds.all_triples().shape
        torch.Size([4, 3])
    """

    def __init__(
        self, train: TripleSet, valid: TripleSet, test: TripleSet, *, name: str = "dataset"
    ) -> None:
        for split, ts in zip(_SPLITS, (train, valid, test)):
            if not isinstance(ts, TripleSet):
                raise GraphDataError(f"{split}: expected a TripleSet, got {type(ts).__name__}")
            if ts.entities != train.entities or ts.relations != train.relations:
                raise GraphDataError(
                    f"{split}: expected the vocabularies of train, got different ones; build the "
                    "splits with one shared Vocabulary (e.g. KGDataset.from_labeled)"
                )
        # One shared vocabulary object, so that identity checks downstream hold.
        self.train = train
        self.valid = TripleSet(valid.mapped_triples, train.entities, train.relations)
        self.test = TripleSet(test.mapped_triples, train.entities, train.relations)
        self.name = name

    @property
    def entities(self) -> Vocabulary:
        """The shared entity vocabulary."""
        return self.train.entities

    @property
    def relations(self) -> Vocabulary:
        """The shared relation vocabulary."""
        return self.train.relations

    @property
    def num_entities(self) -> int:
        """The number of entities."""
        return len(self.entities)

    @property
    def num_relations(self) -> int:
        """The number of relations."""
        return len(self.relations)

    @property
    def splits(self) -> dict[str, TripleSet]:
        """``{"train": ..., "valid": ..., "test": ...}``."""
        return {"train": self.train, "valid": self.valid, "test": self.test}

    def __repr__(self) -> str:
        sizes = ", ".join(f"{k} {len(v)}" for k, v in self.splits.items())
        return (
            f"KGDataset({self.name!r}: {self.num_entities} entities, {self.num_relations} "
            f"relations, {sizes})"
        )

    def to(self, device: torch.device | str) -> KGDataset:
        """Return a copy whose triples live on ``device``.

        Args:
            device: The target device.

        Returns:
            The dataset on ``device``, with the same vocabularies.
        """
        return KGDataset(*(ts.to(device) for ts in self.splits.values()), name=self.name)

    @classmethod
    def from_labeled(
        cls,
        train: Iterable[Sequence[str]],
        valid: Iterable[Sequence[str]],
        test: Iterable[Sequence[str]],
        *,
        name: str = "dataset",
        on_unknown: OnUnknown = "drop",
    ) -> KGDataset:
        """Build a dataset from label triples; the vocabulary comes from the training triples.

        Args:
            train: Training ``(head, relation, tail)`` label tuples.
            valid: Validation label tuples.
            test: Test label tuples.
            name: The dataset's name. Default ``"dataset"``.
            on_unknown: What to do with valid/test labels that never occur in train:
                ``"drop"`` (default, PyKEEN's behaviour) those triples with one
                :class:`~graphdata.errors.UnknownLabelsDropped` warning that counts them per
                split and names the labels; ``"raise"`` a :class:`GraphDataError`; or
                ``"extend"`` the vocabulary: the new labels get ids after all training ids
                (sorted), so ids ``< len(train vocabulary)`` are the ones seen in training.

        Returns:
            The dataset.

        Raises:
            GraphDataError: With ``on_unknown="raise"``, naming the count and examples.

        Warns:
            UnknownLabelsDropped: With ``on_unknown="drop"`` when triples were dropped (once).
        """
        splits = {
            split: _as_labeled(rows, split) for split, rows in zip(_SPLITS, (train, valid, test))
        }
        return cls._build(splits, dict(zip(_SPLITS, _SPLITS)), name=name, on_unknown=on_unknown)

    @classmethod
    def from_folder(
        cls,
        path: str | os.PathLike[str],
        *,
        format: FolderFormat = "auto",
        name: str | None = None,
        on_unknown: OnUnknown = "drop",
        strip: bool = False,
        skip_blank: bool = False,
        duplicates: Literal["raise", "drop", "keep"] = "raise",
        header: bool | None = None,
    ) -> KGDataset:
        """Read a dataset folder: labelled TSV splits, PyKEEN's binary folders or OpenKE's files.

        The layouts are those of :mod:`graphdata.formats`. ``"labeled"``: ``train.txt``,
        ``valid.txt`` and ``test.txt`` (each may be gzip-compressed, also as ``.txt.gz``); the
        ids come from the sorted labels of ``train.txt`` (:func:`~graphdata.vocabulary.sort_labels`:
        by value when every label is a plain integer), or from ``entity_to_id.tsv.gz`` and
        ``relation_to_id.tsv.gz`` when the folder holds them (:meth:`to_folder` writes them when
        the sorted labels would not give back the ids). ``"pykeen"`` and ``"openke"``: the ids
        of the files, kept exactly.

        Args:
            path: The folder.
            format: ``"auto"`` (default, :func:`graphdata.formats.detect_format`),
                ``"labeled"``, ``"pykeen"`` or ``"openke"``.
            name: The dataset's name; default ``None`` uses the folder's name.
            on_unknown: For labelled splits, what to do with valid/test labels missing from the
                vocabulary (the labels of ``train.txt``, or the id maps): ``"drop"`` (default, as
                PyKEEN: FB15k-237 loses 9 valid and 28 test triples), ``"raise"`` or
                ``"extend"`` (see :meth:`from_labeled`). Numeric formats have no unknown labels:
                an id outside the id maps is an error.
            strip: Strip whitespace around fields instead of rejecting it. Default ``False``.
            skip_blank: Skip blank lines instead of rejecting them. Default ``False``.
            duplicates: ``"raise"`` (default), ``"drop"`` or ``"keep"`` repeated triples within
                a labelled file.
            header: For labelled files: ``None`` (default) drops a first line that names the
                columns (:func:`graphdata._tsv.is_header_row`: ``head/relation/tail``,
                ``subject/predicate/object``, ``h/r/t``, ... in any case), ``True`` always drops
                the first line, ``False`` never.

            ``strip``, ``skip_blank``, ``duplicates`` and ``header`` concern labelled files;
            with the numeric formats, whose every row is kept as written, a non-default value
            raises rather than being ignored.

        Returns:
            The dataset.

        Raises:
            FileNotFoundError: If a split file is missing, or the folder holds no known
                layout; the message lists the folder and the layouts expected.
            TSVFormatError: On a malformed line, naming ``file:line``.
            GraphDataError: On an unknown ``format``; on valid/test labels missing from the
                vocabulary with ``on_unknown="raise"``; on ids outside a folder's id maps.

        Warns:
            UnknownLabelsDropped: With ``on_unknown="drop"`` when triples were dropped (once).

        Examples:
            >>> import tempfile
            >>> folder = tempfile.mkdtemp()
            >>> ds = KGDataset.from_labeled([("2", "r", "10")], [], [], name="toy")
            >>> ds.entities.labels
            ('2', '10')
            >>> ds.to_folder(folder, format="openke")
            >>> again = KGDataset.from_folder(folder, name="toy")
            >>> again.entities == ds.entities, again.train.mapped_triples.tolist()
            (True, [[0, 0, 1]])
        """
        folder = Path(path)
        if format not in ("auto", *formats.FORMATS):
            raise GraphDataError(
                f"format: expected 'auto' or one of {formats.FORMATS}, got {format!r}"
            )
        if on_unknown not in ON_UNKNOWN:
            raise GraphDataError(
                f"on_unknown: expected one of {ON_UNKNOWN}, got {on_unknown!r} "
                "(--on-unknown on the command line)"
            )
        kind = formats.detect_format(folder) if format == "auto" else format
        name = folder.resolve().name if name is None else name
        if kind in ("pykeen", "openke"):
            options = [f"{k}=True" for k, v in (("strip", strip), ("skip_blank", skip_blank)) if v]
            if duplicates != "raise":
                options.append(f"duplicates={duplicates!r}")
            if header is not None:
                options.append(f"header={header!r}")
            if options:
                raise GraphDataError(
                    f"{', '.join(options)}: options of labelled files, but {folder} holds the "
                    f"{kind!r} format, whose rows are read exactly as written (every row kept, "
                    "its first line fixed); leave them out (--header) or pass format='labeled'"
                )
            read = formats.read_pykeen_dataset if kind == "pykeen" else formats.read_openke_dataset
            mapped, entities, relations = read(folder)
            sets = [TripleSet(mapped[split], entities, relations) for split in _SPLITS]
            return cls(*sets, name=name)
        files = {split: formats.labeled_split_file(folder, split) for split in _SPLITS}
        missing = [f"{split}.txt" for split, f in files.items() if f is None]
        if missing:
            found = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else None
            raise FileNotFoundError(
                f"path: expected a folder with train.txt, valid.txt and test.txt, but {folder} "
                + (
                    f"lacks {', '.join(missing)} (it holds {found})"
                    if found is not None
                    else "is not a folder"
                )
            )
        paths = {split: f for split, f in files.items() if f is not None}
        splits = {
            split: read_labeled_triples(
                f, strip=strip, skip_blank=skip_blank, duplicates=duplicates, header=header
            )
            for split, f in paths.items()
        }
        sources = {split: str(f) for split, f in paths.items()}
        maps = [folder / m for m in formats.ID_MAP_FILES]
        vocabularies = None
        if any(m.is_file() for m in maps):
            if not all(m.is_file() for m in maps):
                raise FileNotFoundError(
                    f"path: expected both id maps {', '.join(formats.ID_MAP_FILES)} or neither, "
                    f"but {folder} holds only {next(m.name for m in maps if m.is_file())}; "
                    "restore the other or remove it to number the labels anew"
                )
            vocabularies = (
                formats.read_pykeen_id_map(maps[0], kind="entity"),
                formats.read_pykeen_id_map(maps[1], kind="relation"),
            )
            sources["vocabulary"] = f"{maps[0].name}/{maps[1].name}"
        return cls._build(
            splits, sources, name=name, on_unknown=on_unknown, vocabularies=vocabularies
        )

    @classmethod
    def _build(
        cls,
        splits: dict[str, list[LabeledTriple]],
        sources: dict[str, str],
        *,
        name: str,
        on_unknown: str,
        vocabularies: tuple[Vocabulary, Vocabulary] | None = None,
    ) -> KGDataset:
        """Map the labelled splits; the vocabulary is ``vocabularies`` or train's sorted labels."""
        if on_unknown not in ON_UNKNOWN:
            raise GraphDataError(
                f"on_unknown: expected one of {ON_UNKNOWN}, got {on_unknown!r} "
                "(--on-unknown on the command line)"
            )
        train = splits["train"]
        if vocabularies is None:
            entities = Vocabulary.from_labels(_entity_labels(train), kind="entity")
            relations = Vocabulary.from_labels({row[1] for row in train}, kind="relation")
            known_from = sources["train"]
        else:
            entities, relations = vocabularies
            known_from = sources["vocabulary"]
            _check_train_known(train, entities, relations, sources)
        held_out = [row for split in ("valid", "test") for row in splits[split]]
        new_entities = _entity_labels(held_out) - set(entities.labels)
        new_relations = {row[1] for row in held_out} - set(relations.labels)
        if new_entities or new_relations:
            if on_unknown == "raise":
                bad = [
                    (split, row)
                    for split in ("valid", "test")
                    for row in splits[split]
                    if row[0] in new_entities or row[2] in new_entities or row[1] in new_relations
                ]
                raise GraphDataError(
                    f"{len(bad)} valid/test triples ({sources['valid']}, {sources['test']}) use "
                    f"labels missing from {known_from}: {len(new_entities)} entities "
                    f"{_examples(new_entities)} and {len(new_relations)} relations "
                    f"{_examples(new_relations)}, e.g. {bad[0][1]!r} in {sources[bad[0][0]]}. "
                    "Expected every valid/test label in the training triples; pass "
                    "on_unknown='drop' (--on-unknown drop) to drop these triples with a warning, "
                    "as PyKEEN does, or on_unknown='extend' (--on-unknown extend) to add the "
                    "labels to the vocabulary."
                )
            if on_unknown == "extend":
                entities = entities.extend(new_entities)
                relations = relations.extend(new_relations)
        mapped, dropped = {}, {}
        for split, rows in splits.items():
            mapped[split], dropped[split] = _map(rows, entities, relations)
        if any(dropped.values()):
            # One warning for the dataset (not one per split), as PyKEEN gives one per file.
            counts = " and ".join(
                f"{dropped[split]:,} of {len(splits[split]):,} {split}"
                for split in _SPLITS
                if dropped[split]
            )
            warnings.warn(
                f"{name}: dropped {counts} triples whose labels do not occur in "
                f"{Path(known_from).name} ({_counted(new_entities, 'entities')}; "
                f"{_counted(new_relations, 'relations')}); on_unknown='raise' (--on-unknown "
                "raise) refuses them, 'extend' keeps them with new ids",
                UnknownLabelsDropped,
                stacklevel=3,
            )
        sets = [TripleSet(mapped[split], entities, relations) for split in _SPLITS]
        return cls(*sets, name=name)

    def to_folder(
        self,
        path: str | os.PathLike[str],
        *,
        format: Literal["labeled", "pykeen", "openke"] = "labeled",
        id_maps: bool | None = None,
    ) -> None:
        """Write the dataset into the folder ``path`` (created if needed) in one of three layouts.

        Every file is written atomically; :meth:`from_folder` reads the folder back with the
        same ids and the same triples in the same order. The layouts
        (:mod:`graphdata.formats`): ``"labeled"`` (default) writes ``train.txt``,
        ``valid.txt`` and ``test.txt``; ``"pykeen"`` what PyKEEN's
        ``Dataset.to_directory_binary`` writes; ``"openke"`` OpenKE's ``*2id.txt`` files.

        Args:
            path: The folder.
            format: ``"labeled"`` (default), ``"pykeen"`` or ``"openke"``.
            id_maps: For ``"labeled"``: whether to write ``entity_to_id.tsv.gz`` and
                ``relation_to_id.tsv.gz`` beside the splits. Default ``None``: when numbering
                the labels anew would give other ids (a vocabulary from PyKEEN or OpenKE ids,
                an unsorted one, entities in no training triple), and not otherwise; a
                vocabulary extended by ``on_unknown="extend"`` is rebuilt by reading with that
                option, as before. Writing without maps removes stale map files.

        Raises:
            GraphDataError: If a label cannot round-trip through the format; on a bad option.
        """
        folder = Path(path)
        if format not in formats.FORMATS:
            raise GraphDataError(f"format: expected one of {formats.FORMATS}, got {format!r}")
        if id_maps is not None and not isinstance(id_maps, bool):
            raise GraphDataError(f"id_maps: expected True, False or None, got {id_maps!r}")
        mapped = {split: ts.mapped_triples.cpu() for split, ts in self.splits.items()}
        if format == "pykeen":
            formats.write_pykeen_dataset(
                folder, mapped, self.entities, self.relations, name=self.name
            )
            return
        if format == "openke":
            formats.write_openke_dataset(folder, mapped, self.entities, self.relations)
            return
        labeled = {split: ts.to_labeled_triples() for split, ts in self.splits.items()}
        if id_maps is None:
            id_maps = not self._rebuilt_by_labels(labeled)
        # Every split's text first: a label that cannot be written must leave no file changed
        # (a new train.txt beside an old test.txt would be a dataset nobody wrote).
        texts = {}
        for split, rows in labeled.items():
            try:
                texts[split] = format_labeled_triples(rows)
            except GraphDataError as err:
                raise GraphDataError(f"{split} split: {err}; nothing was written") from None
        folder.mkdir(parents=True, exist_ok=True)
        for split, text in texts.items():
            write_text_file(folder / f"{split}.txt", text)
        maps = [folder / m for m in formats.ID_MAP_FILES]
        if id_maps:
            formats.write_pykeen_id_map(maps[0], self.entities)
            formats.write_pykeen_id_map(maps[1], self.relations)
        else:
            for m in maps:
                m.unlink(missing_ok=True)  # stale maps would override the labels' ids

    def _rebuilt_by_labels(self, labeled: dict[str, list[LabeledTriple]]) -> bool:
        """Whether reading the labels alone (``"drop"`` or ``"extend"``) gives these ids."""
        train = labeled["train"]
        entities = Vocabulary.from_labels(_entity_labels(train), kind="entity")
        relations = Vocabulary.from_labels({row[1] for row in train}, kind="relation")
        if (entities, relations) == (self.entities, self.relations):
            return True
        held_out = [row for split in ("valid", "test") for row in labeled[split]]
        extended = (
            entities.extend(_entity_labels(held_out)),
            relations.extend({row[1] for row in held_out}),
        )
        return extended == (self.entities, self.relations)

    def with_inverse_relations(self) -> KGDataset:
        r"""Return the dataset with inverse triples added to every split.

        .. math::
            (h, r, t) \mapsto (t, r + R, h)

        The convention of :meth:`TripleSet.with_inverse_relations`; the three splits share the
        new relation vocabulary. Evaluating tails only on the augmented test split covers both
        sides of the original test triples.

        Returns:
            A dataset with :math:`2R` relations and every split doubled.

        Raises:
            GraphDataError: If the relations already hold inverses, or an inverse label clashes.
        """
        relations = _inverse_vocabulary(self.relations)
        num_relations = self.num_relations
        sets = [
            TripleSet(_with_inverse(ts.mapped_triples, num_relations), self.entities, relations)
            for ts in self.splits.values()
        ]
        return KGDataset(*sets, name=self.name)

    def all_triples(self) -> Tensor:
        """Return train, valid and test mapped triples concatenated.

        Returns:
            ``LongTensor [N_train + N_valid + N_test, 3]``.
        """
        return torch.cat([ts.mapped_triples for ts in self.splits.values()], dim=0)

    def filter_index(self) -> FilterIndex:
        """Return the :class:`FilterIndex` of all known triples (train, valid and test).

        This is the filter of PyKEEN's default ``filter_validation_when_testing``: omitting valid
        inflated test MRR in pykeen issue #397.

        Returns:
            The index, on the device of the triples.
        """
        return FilterIndex.from_triples(
            *(ts.mapped_triples for ts in self.splits.values()),
            num_entities=self.num_entities,
            num_relations=self.num_relations,
        )


def _check_train_known(
    train: list[LabeledTriple],
    entities: Vocabulary,
    relations: Vocabulary,
    sources: dict[str, str],
) -> None:
    """Refuse training labels absent from the id maps: the maps must cover the training split."""
    new_entities = _entity_labels(train) - set(entities.labels)
    new_relations = {row[1] for row in train} - set(relations.labels)
    if new_entities or new_relations:
        raise GraphDataError(
            f"{sources['train']}: expected every training label in the id maps "
            f"{sources['vocabulary']}, got {_counted(new_entities, 'entities')} and "
            f"{_counted(new_relations, 'relations')} missing; the maps belong to another "
            "dataset: remove them to number the labels anew"
        )


def _counted(labels: set[str], kind: str) -> str:
    """``"36 entities, e.g. ['/m/a', ...]"``, or ``"0 relations"``."""
    return f"{len(labels)} {kind}" + (f", e.g. {_examples(labels)}" if labels else "")
