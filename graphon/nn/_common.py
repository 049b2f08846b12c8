"""Private hyperparameter checks and activation names shared by the graphon.nn models."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from graphdata.errors import GraphDataError

__all__ = ["ACTIVATIONS", "TASKS", "check_common", "check_finite"]

#: Pointwise nonlinearities by name (sigmoid as in the Higher-Order-WNNs code).
ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {
    "sigmoid": torch.sigmoid,
    "relu": torch.relu,
    "tanh": torch.tanh,
}
#: Outputs: one vector per graph (invariant) or per node (equivariant).
TASKS = ("graph", "node")


def check_common(
    in_channels: int,
    hidden_channels: int,
    out_channels: int,
    num_layers: int,
    activation: str,
    task: str,
    mlp_hidden: int | None,
) -> None:
    """Validate the hyperparameters shared by every model (raise naming the argument)."""
    for name, value, low in (
        ("in_channels", in_channels, 0),
        ("hidden_channels", hidden_channels, 1),
        ("out_channels", out_channels, 1),
        ("num_layers", num_layers, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise GraphDataError(f"{name}: expected an int >= {low}, got {value!r}")
    if activation not in ACTIVATIONS:
        raise GraphDataError(f"activation: expected one of {list(ACTIVATIONS)}, got {activation!r}")
    if task not in TASKS:
        raise GraphDataError(f"task: expected one of {list(TASKS)}, got {task!r}")
    if mlp_hidden is not None and (not isinstance(mlp_hidden, int) or mlp_hidden < 1):
        raise GraphDataError(f"mlp_hidden: expected None or a positive int, got {mlp_hidden!r}")


def check_finite(
    name: str,
    value: Tensor | None,
    fix: str = "a network carries them into every output: impute or drop those graphs",
) -> None:
    """Raise naming ``name`` if ``value`` holds NaN or inf (one ``isfinite`` pass).

    Args:
        name: The argument, e.g. ``"batch.adj"``.
        value: A tensor ``[B, ...]``, or None (nothing to check).
        fix: How to repair it, the end of the message.

    Raises:
        GraphDataError: With the count of non-finite entries and the fix.
    """
    if value is None or bool(torch.isfinite(value).all()):
        return
    bad = ~torch.isfinite(value)
    graphs = torch.nonzero(bad.reshape(bad.size(0), -1).any(-1)).flatten()[:5].tolist()
    raise GraphDataError(
        f"{name}: expected finite values, got {int(bad.sum())} NaN or inf entries (graphs "
        f"{graphs}); {fix}"
    )
