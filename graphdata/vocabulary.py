r"""Stable label <-> id vocabularies for the entities and relations of a knowledge graph.

A :class:`Vocabulary` maps labels to the ids :math:`0, \dots, n-1`. Vocabularies built from
data list their labels sorted (:func:`sort_labels`), so the same labels always get the same ids
whatever order the triples arrive in:

* by Unicode code point, as PyKEEN's ``TriplesFactory`` does, in general;
* by integer value when *every* label is a decimal integer written without sign, spaces or leading
  zeros (``"0"``, ``"7"``, ``"10"``): the labels of a numeric dump (a PyG ``edge_index`` written as
  ``0<TAB>3<TAB>7`` rows) then keep their order, and labels ``0, ..., n-1`` get ids equal to
  themselves. PyKEEN's labelled reader puts ``"10"`` before ``"2"``; to reproduce its ids for such
  a file, read the ``entity_to_id.tsv.gz`` it writes next to its triples
  (:func:`graphdata.formats.read_pykeen_id_map`). Zero-padded labels of equal width (WN18RR's
  ``00260881``) sort the same both ways.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator, Sequence

import torch
from torch import Tensor

from graphdata.errors import GraphDataError, UnknownLabelError

__all__ = ["INVERSE_SUFFIX", "Vocabulary", "sort_labels"]

#: Suffix of the label of an inverse relation: the inverse of ``"parent"`` is ``"parent_inverse"``.
INVERSE_SUFFIX = "_inverse"


def _is_plain_integer(label: str) -> bool:
    """Whether ``label`` is ``0`` or a run of ASCII digits that does not start with ``0``."""
    return label.isascii() and label.isdigit() and (label == "0" or label[0] != "0")


def sort_labels(labels: Iterable[str]) -> list[str]:
    """Return the distinct ``labels`` in vocabulary order (see the module docstring).

    By integer value when every label is a plain decimal integer (no sign, no leading zero),
    else by Unicode code point.

    Args:
        labels: Labels, repeats allowed.

    Returns:
        The distinct labels, sorted.

    Examples:
        >>> sort_labels(["10", "2", "0", "2"])
        ['0', '2', '10']
        >>> sort_labels(["10", "2", "b"]), sort_labels(["010", "2"])
        (['10', '2', 'b'], ['010', '2'])
    """
    distinct = set(labels)
    if distinct and all(isinstance(x, str) and _is_plain_integer(x) for x in distinct):
        # Plain integers compare by value exactly when they compare by (length, text).
        return sorted(distinct, key=lambda x: (len(x), x))
    return sorted(distinct)


class Vocabulary:
    """An immutable map between distinct string labels and the ids ``0, ..., len - 1``.

    The id of a label is its position in :attr:`labels`. Use :meth:`from_labels` to build one
    from data (sorted by default, :func:`sort_labels`).

    Args:
        labels: The labels in id order; distinct, non-empty strings.
        kind: What the labels name, used in error messages. Default ``"entity"``.

    Examples:
        >>> vocab = Vocabulary.from_labels(["paris", "berlin", "paris"])
        >>> vocab.labels
        ('berlin', 'paris')
        >>> vocab["paris"], vocab.label(0), "rome" in vocab
        (1, 'berlin', False)
        >>> vocab.ids(["paris", "berlin"])
        tensor([1, 0])
        >>> vocab.labels_of(torch.tensor([0, 1, 1]))
        ['berlin', 'paris', 'paris']
    """

    def __init__(self, labels: Iterable[str], *, kind: str = "entity") -> None:
        self._labels = tuple(labels)
        self.kind = kind
        for label in self._labels:
            if not isinstance(label, str) or not label:
                raise GraphDataError(f"labels: expected non-empty str {kind} labels, got {label!r}")
        self._index = {label: i for i, label in enumerate(self._labels)}
        if len(self._index) != len(self._labels):
            first = next(i for i, x in enumerate(self._labels) if self._index[x] != i)
            raise GraphDataError(
                f"labels: expected distinct {kind} labels, got {self._labels[first]!r} twice"
            )

    @classmethod
    def from_labels(
        cls, labels: Iterable[str], *, kind: str = "entity", sort: bool = True
    ) -> Vocabulary:
        """Build a vocabulary from labels that may repeat.

        Args:
            labels: Labels, repeats allowed.
            kind: What the labels name. Default ``"entity"``.
            sort: Order ids by sorted label (default; :func:`sort_labels`: by value when every
                label is a plain integer, else by code point as PyKEEN); ``False`` keeps first
                appearance.

        Returns:
            The vocabulary of the distinct labels.

        Examples:
            >>> Vocabulary.from_labels(["10", "2", "0"]).labels
            ('0', '2', '10')
        """
        return cls(sort_labels(labels) if sort else dict.fromkeys(labels), kind=kind)

    def extend(self, labels: Iterable[str]) -> Vocabulary:
        """Return a vocabulary with the new ``labels`` appended (:func:`sort_labels`); ids are kept.

        Args:
            labels: Labels to add; ones already present are ignored.

        Returns:
            The extended vocabulary.
        """
        new = sort_labels(set(labels) - self._index.keys())
        return Vocabulary(self._labels + tuple(new), kind=self.kind)

    @property
    def labels(self) -> tuple[str, ...]:
        """The labels in id order."""
        return self._labels

    def __len__(self) -> int:
        return len(self._labels)

    def __contains__(self, label: object) -> bool:
        return label in self._index

    def __iter__(self) -> Iterator[str]:
        return iter(self._labels)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocabulary) and self._labels == other._labels

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Vocabulary({len(self)} {self.kind} labels)"

    def id(self, label: str) -> int:
        """Return the id of ``label`` (also ``vocab[label]``).

        Args:
            label: A label of this vocabulary.

        Returns:
            Its id, the position of ``label`` in :attr:`labels`.

        Raises:
            UnknownLabelError: If ``label`` is unknown; the message lists the closest labels.
        """
        try:
            return self._index[label]
        except (KeyError, TypeError):
            raise UnknownLabelError(self.kind, str(label), self._labels, "label") from None

    __getitem__ = id

    def label(self, id: int) -> str:
        """Return the label of ``id``.

        Args:
            id: An id in ``[0, len)`` (a Python, NumPy or one-element tensor integer).

        Returns:
            The label.

        Raises:
            GraphDataError: If ``id`` is not an integer in ``[0, len)``.
        """
        try:
            position = operator.index(id) if not isinstance(id, Tensor) else int(id.item())
        except (TypeError, RuntimeError):
            position = -1
        if isinstance(id, bool) or not 0 <= position < len(self._labels):
            raise GraphDataError(
                f"id: expected an integer in [0, {len(self)}) ({self.kind} ids), got {id!r}"
            )
        return self._labels[position]

    def ids(self, labels: Iterable[str]) -> Tensor:
        """Return the ids of ``labels`` as a ``LongTensor`` on the CPU.

        Args:
            labels: Labels of this vocabulary (not a single ``str``: use :meth:`id`).

        Returns:
            ``LongTensor [len(labels)]``.

        Raises:
            UnknownLabelError: At the first unknown label.
            GraphDataError: If ``labels`` is a single string.
        """
        if isinstance(labels, str):
            raise GraphDataError(
                f"labels: expected an iterable of labels, got the str {labels!r}; use "
                "vocab.id(label) for one label"
            )
        index = self._index
        labels = list(labels)
        try:
            return torch.tensor([index[x] for x in labels], dtype=torch.long)
        except (KeyError, TypeError):
            bad = next(x for x in labels if not isinstance(x, str) or x not in index)
            raise UnknownLabelError(self.kind, str(bad), self._labels, "labels") from None

    def labels_of(self, ids: Tensor | Sequence[int]) -> list[str]:
        """Return the labels of ``ids``.

        Args:
            ids: Ids in ``[0, len)``; a tensor of any shape (on any device) is flattened.

        Returns:
            The labels, in the order of the flattened ``ids``.

        Raises:
            GraphDataError: If an id is outside ``[0, len)``.
        """
        values = ids.reshape(-1).tolist() if isinstance(ids, Tensor) else [int(i) for i in ids]
        if values and (min(values) < 0 or max(values) >= len(self)):
            raise GraphDataError(
                f"ids: expected {self.kind} ids in [0, {len(self)}), got min {min(values)} "
                f"and max {max(values)}"
            )
        return [self._labels[i] for i in values]
