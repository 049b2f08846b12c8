"""Labels in, labels out: load a trained model from its checkpoint and rank candidate tails."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from graphdata.errors import GraphDataError, UnknownLabelError
from graphdata.typing import PathLike
from kg.base import KGEModel
from kg.checkpoint import load_checkpoint
from kg.models import MODELS

__all__ = ["load_model", "predict_tails"]


def load_model(
    path: PathLike, *, device: str | torch.device = "cpu"
) -> tuple[KGEModel, dict[str, Any]]:
    """Rebuild the trained model stored in a checkpoint, in eval mode.

    The parameters are the best validation state when the run kept one (``restore_best``),
    otherwise the state of the last finished epoch.

    Args:
        path: A checkpoint written by :class:`kg.training.Trainer` (``graphlib kg train``).
        device: Where to put the model. Default ``"cpu"``.

    Returns:
        ``(model, checkpoint)``; the checkpoint dictionary carries the vocabularies
        (``checkpoint["vocabulary"]``) and the training config
        (``checkpoint["training"]["config"]``).

    Raises:
        GraphDataError: If the file is not a readable checkpoint or names an unknown model.
    """
    ckpt = load_checkpoint(path, map_location=device)
    name = ckpt["model"]["name"]
    if name not in MODELS:
        raise GraphDataError(
            f"checkpoint: model {name!r} is not one of {sorted(MODELS)}; was it written by a "
            "newer graphlib?"
        )
    model = MODELS[name](**ckpt["model"]["config"])
    training = ckpt["training"]
    best = training.get("best_state")
    use_best = best is not None and training["config"].get("restore_best", True)
    model.load_state_dict(best if use_best else ckpt["model"]["state"])
    return model.to(device).eval(), ckpt


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
