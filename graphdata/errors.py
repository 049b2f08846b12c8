"""Exception types raised on bad input across graphlib, and the warnings about input.

Every error message names the argument (or ``file:line``), what was expected, what arrived and
how to fix it. All exception types derive from :class:`GraphDataError`, itself a
:class:`ValueError`, so ``except ValueError`` keeps working for callers that do not care about
the finer types. :class:`UnknownLabelsDropped` is a :class:`UserWarning`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = [
    "GraphDataError",
    "TSVFormatError",
    "UnknownLabelError",
    "NotFittedError",
    "UnknownLabelsDropped",
    "closest_labels",
]


class GraphDataError(ValueError):
    """Bad input to a graphlib function: wrong shape, type, range or content."""


class TSVFormatError(GraphDataError):
    """A malformed line in a labelled triple file.

    Args:
        path: The file that was read.
        line: The 1-based line number of the offending line.
        message: What was expected, what arrived and how to fix it.
    """

    def __init__(self, path: str, line: int, message: str) -> None:
        self.path = str(path)
        self.line = int(line)
        super().__init__(f"{self.path}:{self.line}: {message}")


class UnknownLabelError(GraphDataError):
    """A label that is not in a vocabulary; the message lists the closest known labels.

    Args:
        kind: What the label names, e.g. ``"entity"`` or ``"relation"``.
        label: The label that was not found.
        known: The known labels, searched for close matches.
        argument: The name of the argument the label came from, if any.
    """

    def __init__(
        self, kind: str, label: str, known: Iterable[str], argument: str | None = None
    ) -> None:
        self.kind = kind
        self.label = label
        self.suggestions = closest_labels(label, known)
        where = f"{argument}: " if argument else ""
        hint = (
            f" Closest known {kind} labels: {', '.join(repr(s) for s in self.suggestions)}."
            if self.suggestions
            else ""
        )
        super().__init__(f"{where}unknown {kind} label {label!r}.{hint}")


class NotFittedError(GraphDataError, AttributeError):
    """A lifecycle object (scikit-learn style) was used before ``fit`` was called."""


class UnknownLabelsDropped(UserWarning):
    """Valid/test triples with labels that never occur in train were dropped (PyKEEN's default).

    Emitted once per dataset by :meth:`graphdata.triples.KGDataset.from_folder` and
    :meth:`~graphdata.triples.KGDataset.from_labeled` with ``on_unknown="drop"``; filter it with
    ``warnings.filterwarnings("ignore", category=UnknownLabelsDropped)``.
    """


def closest_labels(label: str, known: Iterable[str], n: int = 5) -> list[str]:
    """Return up to ``n`` known labels closest to ``label`` (difflib ratio, best first).

    Examples:
        >>> closest_labels("parnt", ["parent", "spouse", "sibling"])
        ['parent']
    """
    return difflib.get_close_matches(label, list(known), n=n, cutoff=0.5)
