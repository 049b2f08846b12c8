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

from kg.base import KGEModel

__all__: list[str] = []


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
