"""Converters between :class:`~graphdata.tripleset.TripleSet` and PyKEEN's ``TriplesFactory``.

PyKEEN (Ali et al., "PyKEEN 1.0: A Python Library for Training and Evaluating Knowledge Graph
Embeddings", JMLR 2021, https://jmlr.org/papers/v22/20-825.html) is an optional dependency: it
is imported inside the functions only, so ``import graphdata.pykeen`` costs nothing. Both keep
the ids exactly: a ``TriplesFactory`` holds ``mapped_triples`` (head, relation, tail ids, the
same columns as :attr:`TripleSet.mapped_triples`) next to ``entity_to_id`` and
``relation_to_id``, which become the vocabularies, whatever order PyKEEN gave its labels.
PyKEEN keeps factories on the CPU, so :func:`to_triples_factory` copies the triples there.

For files, :mod:`graphdata.formats` reads and writes PyKEEN's ``to_path_binary`` folders
without PyKEEN.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphdata.errors import GraphDataError
from graphdata.tripleset import TripleSet
from graphdata.vocabulary import Vocabulary

if TYPE_CHECKING:
    # Optional and absent from the type-checking environment: its types are Any to mypy then.
    from pykeen.triples import (  # type: ignore[import-not-found, unused-ignore]
        CoreTriplesFactory,
        TriplesFactory,
    )

__all__ = ["to_triples_factory", "from_triples_factory"]

_INSTALL = "pip install pykeen (graphlib's PyKEEN converters need it; tested with 1.11.1)"


def _import_triples_factory() -> Any:
    try:
        from pykeen.triples import TriplesFactory
    except ImportError as err:
        raise ImportError(
            f"graphdata.pykeen needs PyKEEN, which is not installed ({err}); {_INSTALL}",
            name="pykeen",
        ) from err
    return TriplesFactory


def to_triples_factory(triples: TripleSet) -> TriplesFactory:
    """Return a PyKEEN ``TriplesFactory`` with the same triples, ids and labels.

    Args:
        triples: The triple set.

    Returns:
        ``TriplesFactory(mapped_triples, entity_to_id, relation_to_id)`` on the CPU, with
        ``num_entities``/``num_relations`` the vocabulary sizes (entities in no triple too).

    Raises:
        GraphDataError: If ``triples`` is not a :class:`TripleSet`.
        ImportError: If PyKEEN is not installed (the note says what to install).
    """
    if not isinstance(triples, TripleSet):
        raise GraphDataError(f"triples: expected a TripleSet, got {type(triples).__name__}")
    factory = _import_triples_factory()
    return factory(
        mapped_triples=triples.mapped_triples.cpu(),
        entity_to_id={label: i for i, label in enumerate(triples.entities.labels)},
        relation_to_id={label: i for i, label in enumerate(triples.relations.labels)},
        num_entities=triples.num_entities,
        num_relations=triples.num_relations,
    )


def _vocabulary(mapping: Any, size: int, kind: str) -> Vocabulary:
    """The vocabulary of a PyKEEN ``label -> id`` map covering ``0..size-1``."""
    if mapping is None:  # a CoreTriplesFactory: ids only
        return Vocabulary([str(i) for i in range(size)], kind=kind)
    by_id: dict[int, str] = {}
    for label, id_ in dict(mapping).items():
        by_id[int(id_)] = str(label)
    if sorted(by_id) != list(range(size)):
        raise GraphDataError(
            f"tf.{kind}_to_id: expected the ids 0..{size - 1} once each (num_{kind}s = {size}), "
            f"got {len(by_id)} distinct ids from {min(by_id, default=None)} to "
            f"{max(by_id, default=None)}"
        )
    return Vocabulary([by_id[i] for i in range(size)], kind=kind)


def from_triples_factory(tf: CoreTriplesFactory) -> TripleSet:
    """Return the :class:`TripleSet` of a PyKEEN ``TriplesFactory`` (ids and order kept).

    Inverse triples that PyKEEN creates on the fly (``create_inverse_triples=True``) are not
    part of ``mapped_triples`` and are not added; the relations are the real ones. A
    ``CoreTriplesFactory`` (ids only) gets the labels ``"0", "1", ...``.

    Args:
        tf: A ``TriplesFactory`` or ``CoreTriplesFactory``.

    Returns:
        The triple set, on the device of ``tf.mapped_triples``.

    Raises:
        GraphDataError: If ``tf`` has no ``mapped_triples``, or its id maps do not number
            ``0..n-1``.
    """
    mapped = getattr(tf, "mapped_triples", None)
    if mapped is None:
        raise GraphDataError(
            f"tf: expected a PyKEEN TriplesFactory (with mapped_triples), got {type(tf).__name__}"
        )
    num_relations = getattr(tf, "real_num_relations", None) or tf.num_relations
    entities = _vocabulary(getattr(tf, "entity_to_id", None), tf.num_entities, "entity")
    relations = _vocabulary(getattr(tf, "relation_to_id", None), num_relations, "relation")
    return TripleSet(mapped.long(), entities, relations)
