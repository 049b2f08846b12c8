r"""Knowledge-graph datasets: train/valid/test triple sets that share one vocabulary.

A :class:`KGDataset` holds three :class:`~graphdata.tripleset.TripleSet` objects over the same
entity and relation :class:`~graphdata.vocabulary.Vocabulary`, built from the *training*
triples (sorted labels, as PyKEEN's ``TriplesFactory``). The id and inverse-relation
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

from graphdata._labels import (
    _as_labeled,
    _entity_labels,
    _examples,
    _inverse_vocabulary,
    _map,
    _with_inverse,
)
from graphdata._tsv import read_labeled_triples
from graphdata.errors import GraphDataError, UnknownLabelsDropped
from graphdata.filter_index import FilterIndex
from graphdata.tripleset import TripleSet
from graphdata.typing import LabeledTriple
from graphdata.vocabulary import INVERSE_SUFFIX, Vocabulary

__all__ = ["INVERSE_SUFFIX", "ON_UNKNOWN", "OnUnknown", "Vocabulary", "TripleSet", "KGDataset"]

_SPLITS = ("train", "valid", "test")

#: What :meth:`KGDataset.from_folder` may do with valid/test labels unseen in train.
OnUnknown = Literal["drop", "raise", "extend"]
#: The values of :data:`OnUnknown`, the default first.
ON_UNKNOWN: tuple[str, ...] = ("drop", "raise", "extend")


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
        name: str | None = None,
        on_unknown: OnUnknown = "drop",
        strip: bool = False,
        skip_blank: bool = False,
        duplicates: Literal["raise", "drop", "keep"] = "raise",
    ) -> KGDataset:
        """Read a folder holding ``train.txt``, ``valid.txt`` and ``test.txt`` (labelled TSV).

        Args:
            path: The folder.
            name: The dataset's name; default ``None`` uses the folder's name.
            on_unknown: ``"drop"`` (default, as PyKEEN: FB15k-237 loses 9 valid and 28 test
                triples), ``"raise"`` or ``"extend"``, for valid/test labels missing from
                ``train.txt`` (see :meth:`from_labeled`).
            strip: Strip whitespace around fields instead of rejecting it. Default ``False``.
            skip_blank: Skip blank lines instead of rejecting them. Default ``False``.
            duplicates: ``"raise"`` (default), ``"drop"`` or ``"keep"`` repeated triples within
                a file.

        Returns:
            The dataset, with ids from the sorted labels of ``train.txt``.

        Raises:
            FileNotFoundError: If a split file is missing; the message lists the folder.
            TSVFormatError: On a malformed line, naming ``file:line``.
            GraphDataError: On valid/test labels missing from train with ``on_unknown="raise"``.

        Warns:
            UnknownLabelsDropped: With ``on_unknown="drop"`` when triples were dropped (once).
        """
        folder = Path(path)
        files = {split: folder / f"{split}.txt" for split in _SPLITS}
        missing = [f.name for f in files.values() if not f.is_file()]
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
        splits = {
            split: read_labeled_triples(
                f, strip=strip, skip_blank=skip_blank, duplicates=duplicates
            )
            for split, f in files.items()
        }
        sources = {split: str(f) for split, f in files.items()}
        return cls._build(
            splits,
            sources,
            name=folder.resolve().name if name is None else name,
            on_unknown=on_unknown,
        )

    @classmethod
    def _build(
        cls,
        splits: dict[str, list[LabeledTriple]],
        sources: dict[str, str],
        *,
        name: str,
        on_unknown: str,
    ) -> KGDataset:
        if on_unknown not in ON_UNKNOWN:
            raise GraphDataError(
                f"on_unknown: expected one of {ON_UNKNOWN}, got {on_unknown!r} "
                "(--on-unknown on the command line)"
            )
        train = splits["train"]
        entities = Vocabulary.from_labels(_entity_labels(train), kind="entity")
        relations = Vocabulary.from_labels({row[1] for row in train}, kind="relation")
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
                    f"labels missing from {sources['train']}: {len(new_entities)} entities "
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
                f"{Path(sources['train']).name} ({_counted(new_entities, 'entities')}; "
                f"{_counted(new_relations, 'relations')}); on_unknown='raise' (--on-unknown "
                "raise) refuses them, 'extend' keeps them with new ids",
                UnknownLabelsDropped,
                stacklevel=3,
            )
        sets = [TripleSet(mapped[split], entities, relations) for split in _SPLITS]
        return cls(*sets, name=name)

    def to_folder(self, path: str | os.PathLike[str]) -> None:
        """Write ``train.txt``, ``valid.txt`` and ``test.txt`` into ``path`` (created if needed).

        Each file is written atomically. Only labels are stored: reading the folder back gives
        the same triples, and the same ids when the vocabulary is the sorted training labels
        (after ``on_unknown="extend"``, read it back with that option too).

        Args:
            path: The folder.

        Raises:
            GraphDataError: If a label cannot round-trip through the TSV format.
        """
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        for split, ts in self.splits.items():
            ts.write_tsv(folder / f"{split}.txt")

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


def _counted(labels: set[str], kind: str) -> str:
    """``"36 entities, e.g. ['/m/a', ...]"``, or ``"0 relations"``."""
    return f"{len(labels)} {kind}" + (f", e.g. {_examples(labels)}" if labels else "")
