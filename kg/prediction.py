r"""Labels in, labels out: load a trained model from its checkpoint and rank candidates.

:func:`predict` answers a batch of link-prediction queries :math:`(h, r, ?)` (``side="tail"``)
or :math:`(?, r, t)` (``side="head"``) with the ``top_k`` best-scoring entities. *Filtered*
(the default) removes every known answer first, as filtered ranking does (Bordes et al.,
"Translating Embeddings for Modeling Multi-relational Data", NeurIPS 2013): for a tail query the
candidates are

.. math::
    \mathcal{E} \setminus \{t' : (h, r, t') \in \mathcal{K}\},

with :math:`\mathcal{K}` the known triples (``known=``, e.g. train + valid + test), so a query
never returns a triple it was trained on. This follows PyKEEN's ``pykeen.predict.predict_target``
with its ``triples=`` filter: only known answers are removed; the query entity itself stays a
candidate unless :math:`(h, r, h)` is known. ``exclude_self=True`` also removes it, for
relations that are never reflexive (nobody is their own spouse), which the caller knows and the
triples do not say.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from graphdata.errors import GraphDataError, UnknownLabelError
from graphdata.filter_index import FilterIndex
from graphdata.triples import KGDataset
from graphdata.typing import PathLike
from kg.base import KGEModel
from kg.checkpoint import check_state_shapes, load_checkpoint
from kg.models import MODELS

__all__ = ["MAX_MODEL_BYTES", "Predictions", "load_model", "predict", "predict_tails"]

#: The two query sides: ``"tail"`` answers ``(h, r, ?)``, ``"head"`` answers ``(?, r, t)``.
SIDES = ("tail", "head")


def load_model(
    path: PathLike, *, device: str | torch.device = "cpu"
) -> tuple[KGEModel, dict[str, Any]]:
    """Rebuild the trained model stored in a checkpoint, in eval mode.

    The parameters are the best validation state when the run kept one (``restore_best``),
    otherwise the state of the last finished epoch.

    Before anything is allocated the stored model is checked against itself: the architecture is
    first built on the ``meta`` device (shapes only, no memory) from the stored config, and the
    file is refused if that architecture would exceed :data:`MAX_MODEL_BYTES`, if its entity and
    relation counts differ from the stored vocabulary's (twice the relations for reciprocal
    training), or if the stored state's keys and shapes differ from it. A state holding NaN or
    infinite values (a diverged run) is refused too.

    Args:
        path: A checkpoint written by :class:`kg.training.Trainer` (``graphlib kg train``).
        device: Where to put the model. Default ``"cpu"``.

    Returns:
        ``(model, checkpoint)``; the checkpoint dictionary carries the vocabularies
        (``checkpoint["vocabulary"]``) and the training config
        (``checkpoint["training"]["config"]``).

    Raises:
        GraphDataError: If the file is not a readable checkpoint, fails its checksum, names an
            unknown model, or its config, vocabulary and state do not agree (see above).
    """
    ckpt = load_checkpoint(path, map_location=device)
    source = str(path)
    name, config, state = _model_entry(ckpt, source)
    vocab = ckpt.get("vocabulary")
    training = ckpt.get("training")
    if not isinstance(vocab, dict) or not all(
        isinstance(vocab.get(key), (list, tuple)) for key in ("entities", "relations")
    ):
        raise GraphDataError(
            f"checkpoint: {source!r} has no 'vocabulary' with 'entities' and 'relations' label "
            "lists; pass a checkpoint written by `graphlib kg train`"
        )
    if not isinstance(training, dict) or not isinstance(training.get("config"), dict):
        raise GraphDataError(
            f"checkpoint: {source!r} has no 'training' entry with a 'config' dict; pass a "
            "checkpoint written by `graphlib kg train`"
        )
    best = training.get("best_state")
    use_best = best is not None and training["config"].get("restore_best", True)
    chosen = best if best is not None and use_best else state
    skeleton = _skeleton(name, config, source)
    _check_sizes(skeleton, vocab, training["config"].get("reciprocal"), source)
    for label, candidate in (("model.state", state), ("training.best_state", best)):
        if candidate is not None:
            _check_state(skeleton, candidate, label, source)
    _check_finite(chosen, "training.best_state" if use_best else "model.state", source)
    try:
        # The constructor's random initialisation is overwritten by the stored state: draw it
        # from a forked RNG, so loading leaves the caller's global torch state untouched.
        with torch.random.fork_rng(devices=[]):
            model = MODELS[name](**config)
        model.load_state_dict(chosen)
    except (RuntimeError, TypeError, ValueError) as err:  # shapes were checked: a last guard
        raise GraphDataError(
            f"checkpoint: {source!r} could not be loaded into {name} ({err}); pass a checkpoint "
            "written by `graphlib kg train`"
        ) from err
    return model.to(device).eval(), ckpt


#: Largest model :func:`load_model` builds, in bytes of its parameters and buffers (16 GiB):
#: far above any KGE graphlib trains, far below what a crafted ``dim`` can ask for.
MAX_MODEL_BYTES = 16 * 2**30


def _model_entry(ckpt: dict, source: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The checkpoint's model name, config and state, checked for their types."""
    entry = ckpt.get("model")
    if not isinstance(entry, dict):
        raise GraphDataError(
            f"checkpoint: {source!r} has no 'model' entry; pass a checkpoint written by "
            "`graphlib kg train`"
        )
    name, config, state = entry.get("name"), entry.get("config"), entry.get("state")
    if not isinstance(name, str) or name not in MODELS:
        raise GraphDataError(
            f"checkpoint: model {name!r} is not one of {sorted(MODELS)}; was it written by a "
            "newer graphlib?"
        )
    if not isinstance(config, dict) or not all(isinstance(key, str) for key in config):
        raise GraphDataError(
            f"checkpoint: {source!r} stores the model config {config!r}, expected a dict of "
            f"{name} constructor arguments; pass a checkpoint written by `graphlib kg train`"
        )
    if not isinstance(state, dict):
        raise GraphDataError(
            f"checkpoint: {source!r} stores no model state dict (got {type(state).__name__}); "
            "pass a checkpoint written by `graphlib kg train`"
        )
    return name, config, state


def _skeleton(name: str, config: dict[str, Any], source: str) -> KGEModel:
    """Build the architecture on the meta device (no memory) and bound its size."""
    try:
        with torch.device("meta"):
            skeleton = MODELS[name](**config)
    except (GraphDataError, TypeError, ValueError, RuntimeError, OverflowError) as err:
        raise GraphDataError(
            f"checkpoint: {source!r} stores a {name} config {config!r} that does not build a "
            f"model ({err}); pass a checkpoint written by `graphlib kg train`"
        ) from err
    nbytes = sum(t.numel() * t.element_size() for t in skeleton.state_dict().values())
    if nbytes > MAX_MODEL_BYTES:
        raise GraphDataError(
            f"checkpoint: {source!r} stores a {name} config {config!r} whose parameters would "
            f"take {nbytes / 2**30:.3g} GiB, expected at most {MAX_MODEL_BYTES / 2**30:.0f} GiB; "
            "the file is damaged or crafted: pass a checkpoint written by `graphlib kg train`"
        )
    return skeleton


def _check_sizes(skeleton: KGEModel, vocab: dict, reciprocal: Any, source: str) -> None:
    """The model's entity and relation counts must be those of the stored vocabulary.

    ``reciprocal`` is the training config's flag; ``None`` (not stored) accepts both counts.
    """
    entities, relations = len(vocab["entities"]), len(vocab["relations"])
    expected = relations * (2 if reciprocal else 1)
    allowed = {relations, 2 * relations} if reciprocal is None else {expected}
    why = " (reciprocal training: twice the relation labels)" if reciprocal else ""
    if skeleton.num_entities != entities or skeleton.num_relations not in allowed:
        raise GraphDataError(
            f"checkpoint: {source!r} stores a model of {skeleton.num_entities} entities and "
            f"{skeleton.num_relations} relations, expected {entities} and {expected}{why} from "
            "its vocabulary; the file is damaged or crafted: pass a checkpoint written by "
            "`graphlib kg train`"
        )


def _check_state(skeleton: KGEModel, state: Any, label: str, source: str) -> None:
    """The stored state must have the skeleton's keys and shapes (nothing else is allocated)."""
    check_state_shapes(
        state,
        skeleton,
        where=f"checkpoint: {source!r} entry {label}",
        fix="pass a checkpoint written by `graphlib kg train`",
    )


def _check_finite(state: dict[str, Any], label: str, source: str) -> None:
    """A NaN or infinite parameter or buffer would only ever produce wrong scores."""
    for key, t in state.items():
        if t.is_floating_point() or t.is_complex():
            bad = int((~torch.isfinite(t)).sum())
            if bad:
                raise GraphDataError(
                    f"checkpoint: {source!r} entry {label}: {key} holds {bad} NaN or infinite "
                    f"value(s) of {t.numel()}; the run diverged: retrain with a smaller --lr "
                    "(or resume from an earlier checkpoint)"
                )


@dataclass(frozen=True)
class Predictions:
    """The ``top_k`` answers of a batch of queries, best first (:func:`predict`).

    Row ``n`` answers query ``n``. A filtered query with fewer than ``top_k`` candidates left
    is padded with id ``-1`` and score ``-inf``; :meth:`to_list` drops the padding.

    Attributes:
        side: ``"tail"`` (queries ``(h, r, ?)``) or ``"head"`` (queries ``(?, r, t)``).
        queries: The queries as ids, ``(entity, relation)`` per row, ``LongTensor [N, 2]``.
        ids: Answer entity ids, ``LongTensor [N, k]``.
        scores: Their scores :math:`f(h, r, t)`, ``FloatTensor [N, k]``.
        num_removed: Candidates removed per query (known answers, and the query entity with
            ``exclude_self``), ``LongTensor [N]``.
        filtered: Whether known answers were removed.
        entity_labels: Entity labels in id order, or ``None`` (ids only).
    """

    side: str
    queries: Tensor
    ids: Tensor
    scores: Tensor
    num_removed: Tensor
    filtered: bool
    entity_labels: tuple[str, ...] | None = None

    def __len__(self) -> int:
        return self.ids.size(0)

    def labels(self) -> list[list[str]]:
        """The answers' labels per query, padding dropped.

        Raises:
            GraphDataError: If the predictions were made without ``entity_labels``.
        """
        if self.entity_labels is None:
            raise GraphDataError(
                "entity_labels: these predictions carry ids only; pass entity_labels= to "
                "kg.predict to get labels"
            )
        names = self.entity_labels
        return [[names[i] for i in row if i >= 0] for row in self.ids.tolist()]

    def to_list(self) -> list[list[tuple[str | int, float]]]:
        """``[(label or id, score), ...]`` per query, best first, padding dropped."""
        names = self.entity_labels
        return [
            [(names[i] if names is not None else i, s) for i, s in zip(ids, scores) if i >= 0]
            for ids, scores in zip(self.ids.tolist(), self.scores.tolist())
        ]


def predict(
    model: KGEModel,
    queries: Tensor | Sequence[tuple[str, str]],
    *,
    side: str = "tail",
    filtered: bool = True,
    known: KGDataset | FilterIndex | Tensor | Sequence[Any] | None = None,
    top_k: int = 10,
    exclude_self: bool = False,
    reciprocal: bool | None = None,
    entity_labels: Sequence[str] | None = None,
    relation_labels: Sequence[str] | None = None,
    batch_size: int | None = None,
    progress: bool = False,
) -> Predictions:
    r"""The ``top_k`` best answers of each query, filtered against known triples (module doc).

    A tail query :math:`(h, r)` ranks every entity :math:`e` by :math:`f(h, r, e)`
    (``model.score_tails``); a head query :math:`(t, r)` ranks :math:`f(e, r, t)`
    (``model.score_heads``, or ``score_tails(t, r + R)`` for a reciprocal model). With
    ``filtered=True`` every :math:`e` with :math:`(h, r, e) \in \mathcal{K}` (tail side) or
    :math:`(e, r, t) \in \mathcal{K}` (head side) is removed first; ``exclude_self`` removes
    :math:`e = h` (or :math:`t`) too. Ties keep the lower id first. Queries are scored
    ``batch_size`` at a time under ``torch.no_grad`` on the model's device, where the result
    stays.

    Args:
        model: A trained model (in eval mode, e.g. from :func:`load_model`).
        queries: ``LongTensor [N, 2]`` of ``(entity id, relation id)``, or a sequence of
            ``(entity label, relation label)`` pairs (then ``entity_labels`` and
            ``relation_labels`` are required). The entity is the head of a tail query and the
            tail of a head query.
        side: ``"tail"`` or ``"head"``. Default ``"tail"``.
        filtered: Remove known answers. Default True (then ``known`` is required).
        known: The known triples :math:`\mathcal{K}`: a :class:`~graphdata.triples.KGDataset`
            (train + valid + test; its vocabularies then label queries and answers unless
            ``entity_labels``/``relation_labels`` are given), a
            :class:`~graphdata.filter_index.FilterIndex`, a mapped ``LongTensor [M, 3]`` or
            ``TripleSet``, or a sequence of those. Default None.
        top_k: Answers per query, at most the number of entities. Default 10.
        exclude_self: Never answer the query's own entity. Default False, as PyKEEN.
        reciprocal: The model was trained with reciprocal relations (``2R`` relations).
            Default None: True exactly when the model has twice the relations of ``known``
            (a dataset or index) or of ``relation_labels``, else False.
        entity_labels: Entity labels in id order; also labels the result. Default None.
        relation_labels: Relation labels in id order. Default None.
        batch_size: Queries per batch; ``None``: as many as fit in 64 MiB of scores.
        progress: Show a tqdm bar over the batches (only on a terminal). Default False.

    Returns:
        The :class:`Predictions`.

    Raises:
        UnknownLabelError: If a query label is unknown; it names the query and lists the
            closest known labels.
        GraphDataError: On a bad argument (names it, what was expected, what arrived), or if
            the model scores NaN or infinity (a diverged model).

    Shapes:
        queries: ``[N, 2]``; ``ids`` and ``scores``: ``[N, min(top_k, E)]``.

    Examples:
        >>> from kg.distmult import DistMult
        >>> model = DistMult(3, 1, dim=2)
        >>> with torch.no_grad():
        ...     _ = model.entity.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]]))
        ...     _ = model.relation.weight.fill_(1.0)
        >>> known = torch.tensor([[0, 0, 2]])  # (a, r, c) is known
        >>> got = predict(model, [("a", "r")], known=known, top_k=2,
        ...               entity_labels=["a", "b", "c"], relation_labels=["r"])
        >>> got.to_list()  # c is filtered out; a stays (exclude_self=False)
        [[('a', 1.0), ('b', 0.0)]]
        >>> predict(model, torch.tensor([[0, 0]]), filtered=False, top_k=1).to_list()
        [[(2, 2.0)]]
    """
    from tqdm import tqdm

    if side not in SIDES:
        raise GraphDataError(f"side: expected one of {SIDES}, got {side!r}")
    _positive("top_k", top_k)
    if batch_size is not None:
        _positive("batch_size", batch_size)
    num_entities = model.num_entities
    if isinstance(known, KGDataset):
        if entity_labels is None:
            entity_labels = known.entities.labels
        if relation_labels is None:
            relation_labels = known.relations.labels
        known = known.filter_index()
    if reciprocal is None:
        stated = (
            known.num_relations
            if isinstance(known, FilterIndex)
            else len(relation_labels)
            if relation_labels is not None
            else None
        )
        reciprocal = stated is not None and model.num_relations == 2 * stated
    num_relations = model.num_relations // 2 if reciprocal else model.num_relations
    ids = _query_ids(queries, entity_labels, relation_labels, num_entities, num_relations, side)
    index = _known_index(known, num_entities, num_relations) if filtered else None
    if not filtered and known is not None:
        raise GraphDataError(
            "known: ignored when filtered=False; pass filtered=True to remove known answers, "
            "or drop known="
        )
    param = next(model.parameters(), None)
    device = param.device if param is not None else torch.device("cpu")
    if index is not None and index.device != device:
        index = index.to(device)
    ids = ids.to(device)
    k = min(top_k, num_entities)
    if batch_size is None:
        # Per query: the [E] score row, its sort (values + int64 indices) and the model's
        # own intermediates.
        batch_size = max(1, (64 * 2**20) // (24 * num_entities + model.bytes_per_query()))
    starts = range(0, ids.size(0), batch_size)
    out_ids, out_scores, out_removed = [], [], []
    with torch.no_grad():
        for start in tqdm(starts, desc="predict", unit="batch", disable=not progress or None):
            entity, rel = ids[start : start + batch_size].unbind(dim=1)  # [B] each
            if side == "tail":
                scores = model.score_tails(entity, rel)  # [B, E]
            elif reciprocal:
                scores = model.score_tails(entity, rel + num_relations)  # (t, r^-1, ?)
            else:
                scores = model.score_heads(rel, entity)  # [B, E]
            finite = torch.isfinite(scores)  # [B, E]
            if not bool(finite.all()):  # an infinite score would be printed as an answer
                raise GraphDataError(
                    f"model: scored {int((~finite).sum())} NaN or infinite value(s) for queries "
                    f"{start}..{start + entity.numel() - 1}; the model diverged or overflowed: "
                    "retrain it (e.g. with a smaller --lr or --grad-clip)"
                )
            removed = torch.zeros_like(scores, dtype=torch.bool)  # [B, E]
            if index is not None:
                ptr, answers = (
                    index.tails(entity, rel) if side == "tail" else index.heads(rel, entity)
                )
                rows = torch.repeat_interleave(
                    torch.arange(entity.numel(), device=device), ptr[1:] - ptr[:-1]
                )
                removed[rows, answers] = True
            if exclude_self:
                removed[torch.arange(entity.numel(), device=device), entity] = True
            scores = scores.masked_fill(removed, float("-inf"))
            # A stable descending sort keeps the lower id first among equal scores.
            order = torch.sort(scores, dim=1, descending=True, stable=True).indices[:, :k]
            top = scores.gather(1, order)  # [B, k]
            gone = removed.gather(1, order)
            out_ids.append(order.masked_fill(gone, -1))
            out_scores.append(top)
            out_removed.append(removed.sum(dim=1))
    empty = torch.zeros(0, k, dtype=torch.long, device=device)
    return Predictions(
        side=side,
        queries=ids,
        ids=torch.cat(out_ids) if out_ids else empty,
        scores=torch.cat(out_scores) if out_scores else empty.float(),
        num_removed=torch.cat(out_removed) if out_removed else empty[:, 0],
        filtered=filtered,
        entity_labels=tuple(entity_labels) if entity_labels is not None else None,
    )


def _positive(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise GraphDataError(f"{name}: expected a positive int, got {value!r}")


def _query_ids(
    queries: Tensor | Sequence[tuple[str, str]],
    entity_labels: Sequence[str] | None,
    relation_labels: Sequence[str] | None,
    num_entities: int,
    num_relations: int,
    side: str,
) -> Tensor:
    """Checked ``LongTensor [N, 2]`` of (entity id, relation id) from ids or label pairs."""
    role = "head" if side == "tail" else "tail"
    if isinstance(queries, Tensor):
        if (
            queries.dim() != 2
            or queries.size(1) != 2
            or queries.dtype.is_floating_point
            or queries.dtype.is_complex
            or queries.dtype == torch.bool
        ):
            raise GraphDataError(
                f"queries: expected a LongTensor [N, 2] of ({role} id, relation id), got "
                f"{queries.dtype} {tuple(queries.shape)}"
            )
        ids = queries.long()
    else:
        if entity_labels is None or relation_labels is None:
            raise GraphDataError(
                "queries: label pairs need entity_labels= and relation_labels= (the "
                "checkpoint's vocabulary), or pass a LongTensor [N, 2] of ids"
            )
        entity_of = {label: i for i, label in enumerate(entity_labels)}
        relation_of = {label: i for i, label in enumerate(relation_labels)}
        rows = []
        for n, pair in enumerate(queries):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise GraphDataError(
                    f"queries[{n}]: expected a ({role} label, relation label) pair, got {pair!r}"
                )
            entity, relation = pair
            if entity not in entity_of:
                raise UnknownLabelError("entity", entity, entity_labels, f"queries[{n}] {role}")
            if relation not in relation_of:
                raise UnknownLabelError(
                    "relation", relation, relation_labels, f"queries[{n}] relation"
                )
            rows.append((entity_of[entity], relation_of[relation]))
        ids = torch.tensor(rows, dtype=torch.long).view(-1, 2)
    for column, upper, what in ((0, num_entities, role), (1, num_relations, "relation")):
        bad = (ids[:, column] < 0) | (ids[:, column] >= upper)
        if bool(bad.any()):
            n = int(bad.nonzero()[0, 0])
            raise GraphDataError(
                f"queries[{n}]: {what} id {int(ids[n, column])} is outside [0, {upper}) of the "
                "model; pass ids of its vocabulary"
            )
    return ids


def _known_index(
    known: FilterIndex | Tensor | Sequence[Any] | None, num_entities: int, num_relations: int
) -> FilterIndex:
    """A FilterIndex of ``known`` (an index, mapped triples, TripleSets, or a list of them)."""
    if known is None:
        raise GraphDataError(
            "known: filtered=True needs the known triples; pass known=dataset.filter_index() "
            "(train + valid + test), or filtered=False for raw scores"
        )
    if isinstance(known, FilterIndex):
        index = known
    else:
        single = isinstance(known, Tensor) or hasattr(known, "mapped_triples")
        parts: list[Any] = (
            [known] if single else list(known) if isinstance(known, (list, tuple)) else []
        )
        mapped = [getattr(part, "mapped_triples", part) for part in parts]
        if not mapped or not all(isinstance(m, Tensor) for m in mapped):
            raise GraphDataError(
                "known: expected a FilterIndex, a mapped LongTensor [M, 3], a TripleSet, or a "
                f"sequence of those, got {type(known).__name__}"
            )
        index = FilterIndex.from_triples(
            *mapped, num_entities=num_entities, num_relations=num_relations
        )
    if index.num_entities != num_entities or index.num_relations != num_relations:
        hint = (
            "the model has twice the relations: pass reciprocal=True (the checkpoint's "
            "training config says)"
            if index.num_relations * 2 == num_relations
            else "build it from the model's dataset"
        )
        raise GraphDataError(
            f"known: the index has {index.num_entities} entities and {index.num_relations} "
            f"relations, the model {num_entities} and {num_relations}; {hint}"
        )
    return index


def predict_tails(
    model: KGEModel,
    head: str,
    relation: str,
    *,
    entity_labels: Sequence[str],
    relation_labels: Sequence[str],
    top_k: int = 10,
) -> list[tuple[str, float]]:
    r"""The ``top_k`` most plausible tails of ``(head, relation, ?)``, best first, unfiltered.

    Scores every entity :math:`e` by :math:`f(h, r, e)` (``model.score_tails``) and returns the
    highest; ties keep the lower id first. Known training triples are not removed: use
    :func:`predict` (filtered by default, both sides, batches) for that.

    Args:
        model: A trained model.
        head: The head entity's label.
        relation: The relation's label (an original relation, not an ``_inverse`` one).
        entity_labels: Entity labels in id order (``checkpoint["vocabulary"]["entities"]``).
        relation_labels: Relation labels in id order.
        top_k: How many tails to return (at most the number of entities). Default 10.

    Returns:
        ``[(tail label, score), ...]`` of length ``min(top_k, num_entities)``.

    Raises:
        UnknownLabelError: If ``head`` or ``relation`` is unknown; the message lists the
            closest known labels.
        GraphDataError: If ``top_k`` is not a positive int.

    Examples:
        >>> from kg.distmult import DistMult
        >>> model = DistMult(3, 1, dim=2)
        >>> with torch.no_grad():
        ...     _ = model.entity.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]]))
        ...     _ = model.relation.weight.fill_(1.0)
        >>> predict_tails(model, "a", "r", entity_labels=["a", "b", "c"], relation_labels=["r"],
        ...               top_k=2)
        [('c', 2.0), ('a', 1.0)]
    """
    _positive("top_k", top_k)
    head_id = _lookup(head, entity_labels, "entity", "head")
    rel_id = _lookup(relation, relation_labels, "relation", "relation")
    got = predict(
        model,
        torch.tensor([[head_id, rel_id]]),
        filtered=False,
        top_k=top_k,
        entity_labels=entity_labels,
    )
    return [(str(label), score) for label, score in got.to_list()[0]]


def _lookup(label: str, labels: Sequence[str], kind: str, argument: str) -> int:
    try:
        return list(labels).index(label)
    except ValueError:
        raise UnknownLabelError(kind, label, labels, argument) from None
