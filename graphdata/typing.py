"""Type aliases shared across graphlib (after PyG's ``torch_geometric/typing.py``)."""

from __future__ import annotations

import os

import torch

__all__ = ["PathLike", "LabeledTriple", "DeviceLike", "Tensor"]

#: A filesystem path.
PathLike = str | os.PathLike[str]
#: One labelled triple ``(head, relation, tail)``.
LabeledTriple = tuple[str, str, str]
#: Anything :func:`torch.device` accepts.
DeviceLike = str | torch.device
#: A tensor.
Tensor = torch.Tensor
