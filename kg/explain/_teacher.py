"""What the distilled evaluator learns from its teacher KGE, and who the teacher was (private).

The triple representation is the per-coordinate interaction whose sum (or negative norm) is the
score: the KGExplainer reference regresses its graph embedding onto ``h + r - t`` (TransE) and
``h * r * t`` (DistMult); the same idea is written out here for ComplEx, RotatE and RESCAL.
Models without a per-coordinate form (TuckER, ConvE) fall back to the score itself, ``[B, 1]``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

import torch
from torch import Tensor

from kg.base import KGEModel

__all__: list[str] = []


def _transe(model: KGEModel, h: Tensor, r: Tensor, t: Tensor) -> Tensor:
    return model.entity(h) + model.relation(r) - model.entity(t)  # [B, d]


def _distmult(model: KGEModel, h: Tensor, r: Tensor, t: Tensor) -> Tensor:
    return model.entity(h) * model.relation(r) * model.entity(t)  # [B, d]


def _complex(model: KGEModel, h: Tensor, r: Tensor, t: Tensor) -> Tensor:
    a_h, b_h = model.entity(h).chunk(2, dim=-1)
    a_r, b_r = model.relation(r).chunk(2, dim=-1)
    a_t, b_t = model.entity(t).chunk(2, dim=-1)
    return a_h * a_r * a_t + b_h * a_r * b_t + a_h * b_r * b_t - b_h * b_r * a_t  # [B, d]


def _rotate(model: KGEModel, h: Tensor, r: Tensor, t: Tensor) -> Tensor:
    a_h, b_h = model.entity(h).chunk(2, dim=-1)
    a_t, b_t = model.entity(t).chunk(2, dim=-1)
    theta = model.relation(r)
    re = a_h * torch.cos(theta) - b_h * torch.sin(theta) - a_t
    im = a_h * torch.sin(theta) + b_h * torch.cos(theta) - b_t
    return (re.square() + im.square()).sqrt()  # [B, d] moduli; score = margin - sum


def _rescal(model: KGEModel, h: Tensor, r: Tensor, t: Tensor) -> Tensor:
    matrices = model.relation(r).view(-1, model.dim, model.dim)  # [B, d, d]
    return model.entity(h) * torch.bmm(matrices, model.entity(t).unsqueeze(-1)).squeeze(-1)


#: Model name -> per-coordinate triple representation; others use the score, ``[B, 1]``.
REPRESENTATIONS: dict[str, Callable[[KGEModel, Tensor, Tensor, Tensor], Tensor]] = {
    "transe": _transe,
    "distmult": _distmult,
    "complex": _complex,
    "rotate": _rotate,
    "rescal": _rescal,
}


@torch.no_grad()
def triple_representation(model: KGEModel, h: Tensor, r: Tensor, t: Tensor) -> Tensor:
    """The teacher's representation of each triple, ``[B, D]``."""
    function = REPRESENTATIONS.get(model.name)
    if function is None:
        return model(h, r, t).unsqueeze(-1)
    return function(model, h, r, t)


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
