"""What the distilled evaluator learns from its teacher KGE, and who the teacher was (private).

The triple representation is :meth:`kg.base.KGEModel.triple_representation`, written in each
model's file (the per-coordinate interaction whose sum or negative norm is the score; the score
itself, ``[B, 1]``, for TuckER and ConvE); a model without it raises a clear error.
"""

from __future__ import annotations

import hashlib
import json

import torch
from torch import Tensor

from graphdata.errors import GraphDataError
from kg.base import KGEModel

__all__: list[str] = []


def check_finite_parameters(model: KGEModel, argument: str = "model") -> None:
    """Refuse a model with a NaN or infinite parameter, naming the parameter.

    Its scores would be NaN, and the failure would surface later as a calibration or fine-tuning
    error that blames a setting rather than the model.
    """
    for name, value in model.state_dict().items():
        if value.is_floating_point() and not bool(torch.isfinite(value).all()):
            bad = int((~torch.isfinite(value)).sum())
            raise GraphDataError(
                f"{argument}: {model!r} holds {bad} NaN or infinite value(s) in {name}; its "
                "scores would be NaN: pass a model whose training did not diverge (retrain with "
                "a smaller lr, or load an earlier checkpoint)"
            )


def check_depth(name: str, value: int, num_entities: int) -> None:
    """Refuse a path length or radius beyond the graph's entity count.

    No shortest distance or simple path of a graph of ``n`` entities is longer than ``n - 1``, so
    a larger value adds nothing, but the distance-label tables are sized by it (a huge value
    tried to allocate terabytes).
    """
    if value > num_entities:
        raise GraphDataError(
            f"{name}: expected at most the graph's {num_entities} entities (no path or distance "
            f"in it is longer), got {value}; pass a value <= {num_entities}"
        )


@torch.no_grad()
def triple_representation(model: KGEModel, h: Tensor, r: Tensor, t: Tensor) -> Tensor:
    """The teacher's representation of each triple, ``[B, D]`` (the model's own method)."""
    return model.triple_representation(h, r, t)


def model_fingerprint(model: KGEModel) -> str:
    """SHA-256 of the model's name, configuration and parameter values."""
    digest = hashlib.sha256()
    digest.update(model.name.encode())
    digest.update(json.dumps(model.config, sort_keys=True, default=str).encode())
    for key, value in sorted(model.state_dict().items()):
        digest.update(key.encode())
        digest.update(value.detach().to("cpu", torch.float64).contiguous().numpy().tobytes())
    return digest.hexdigest()


#: Entity-indexed parameters that local re-training copies per candidate (ConvE's tail bias too).
ENTITY_PARAMETERS = ("entity.weight", "bias")


def entity_parameters(model: KGEModel) -> dict[str, Tensor]:
    """The model's parameters indexed by entity id, by name."""
    named = dict(model.named_parameters())
    return {
        name: named[name]
        for name in ENTITY_PARAMETERS
        if name in named and named[name].size(0) == model.num_entities
    }
