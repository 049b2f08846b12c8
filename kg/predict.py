"""Labels in, labels out: load a trained model from its checkpoint and rank candidate tails."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from graphdata.errors import GraphDataError, UnknownLabelError
from graphdata.typing import PathLike
from kg.base import KGEModel
from kg.checkpoint import check_state_shapes, load_checkpoint
from kg.models import MODELS

__all__ = ["MAX_MODEL_BYTES", "load_model", "predict_tails"]


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


def predict_tails(
    model: KGEModel,
    head: str,
    relation: str,
    *,
    entity_labels: Sequence[str],
    relation_labels: Sequence[str],
    top_k: int = 10,
) -> list[tuple[str, float]]:
    r"""The ``top_k`` most plausible tails of ``(head, relation, ?)``, best first.

    Scores every entity :math:`e` by :math:`f(h, r, e)` (``model.score_tails``) and returns the
    highest; ties keep the lower id first. Known training triples are not removed.

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
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise GraphDataError(f"top_k: expected a positive int, got {top_k!r}")
    head_id = _lookup(head, entity_labels, "entity", "head")
    rel_id = _lookup(relation, relation_labels, "relation", "relation")
    device = next(model.parameters()).device
    with torch.no_grad():
        scores = model.score_tails(
            torch.tensor([head_id], device=device), torch.tensor([rel_id], device=device)
        )[0]  # [E]
    # A stable descending sort keeps the lower id first among equal scores.
    order = torch.sort(scores, descending=True, stable=True).indices[:top_k]
    return [(entity_labels[i], float(scores[i])) for i in order.tolist()]


def _lookup(label: str, labels: Sequence[str], kind: str, argument: str) -> int:
    try:
        return list(labels).index(label)
    except ValueError:
        raise UnknownLabelError(kind, label, labels, argument) from None
