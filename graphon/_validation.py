"""Private input checks shared by the public ``graphon`` functions (boundaries only, no loops)."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from graphdata.checks import check_int as check_int
from graphdata.checks import check_real as check_real
from graphdata.checks import check_seed as check_seed
from graphdata.errors import GraphDataError

__all__: list[str] = []


def _first_bad(bad: Tensor) -> int:
    return int(torch.nonzero(bad.reshape(-1))[0, 0])


def check_graphon_values(values: Tensor, x: Tensor, y: Tensor, *, graphon: str, where: str) -> None:
    """Raise unless the graphon values ``W(x, y)`` evaluated at ``where`` are finite, in [0, 1].

    ``values``, ``x`` and ``y`` broadcast to one shape; the message names the graphon, the first
    offending point and its value. Cheap: one pass over the array already computed.
    """
    low, high = torch.aminmax(values.detach()) if values.numel() else (values.new_zeros(()),) * 2
    finite = bool(torch.isfinite(low) & torch.isfinite(high))
    if finite and 0.0 <= float(low) and float(high) <= 1.0:
        return
    values, x, y = torch.broadcast_tensors(values.detach(), x.detach(), y.detach())
    bad = ~torch.isfinite(values) | (values < 0) | (values > 1)
    at = _first_bad(bad)
    raise GraphDataError(
        f"graphon: {graphon!r} returned W(x, y) = {float(values.reshape(-1)[at]):.6g} at "
        f"x={float(x.reshape(-1)[at]):.6g}, y={float(y.reshape(-1)[at]):.6g} ({int(bad.sum())} "
        f"of {bad.numel()} values evaluated {where} are NaN, inf or outside [0, 1]); fix or clip "
        "the graphon function, e.g. fn(x, y).clamp(0, 1)"
    )


def check_signal_values(values: Tensor, x: Tensor, *, graphon: str, where: str) -> None:
    """Raise unless the signal values ``f(x)`` (``[..., C]`` for points ``[...]``) are finite."""
    if bool(torch.isfinite(values.detach()).all()):
        return
    bad = ~torch.isfinite(values.detach()).reshape(x.numel(), -1).any(-1)
    at = _first_bad(bad)
    raise GraphDataError(
        f"signal: graphon-signal {graphon!r} returned a NaN or inf f(x) at "
        f"x={float(x.detach().reshape(-1)[at]):.6g} ({int(bad.sum())} of {bad.numel()} points "
        f"evaluated {where}); fix the signal function"
    )


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``choices``, else raise listing them."""
    if not isinstance(value, str) or value not in choices:
        raise GraphDataError(f"{name}: expected one of {list(choices)}, got {value!r}")
    return value


def _probe_generator() -> torch.Generator:
    # A fixed seed: the probe vector is part of the check, not a source of randomness.
    return torch.Generator().manual_seed(20_250_101)


def check_adjacency(
    adj: object, *, name: str = "adj", symmetric: bool = True, unit: bool = False
) -> tuple[Tensor, bool]:
    """Validate a dense ``[N, N]`` or ``[B, N, N]`` adjacency; return it as ``[B, N, N]``.

    Returns:
        The batched floating tensor and whether the input had a batch dimension.
    """
    if not isinstance(adj, Tensor):
        raise GraphDataError(
            f"{name}: expected a torch.Tensor of shape [N, N] or [B, N, N], got "
            f"{type(adj).__name__}; convert with torch.as_tensor(...)"
        )
    if adj.dim() not in (2, 3) or adj.size(-1) != adj.size(-2):
        raise GraphDataError(
            f"{name}: expected a square matrix of shape [N, N] or a batch [B, N, N], got shape "
            f"{tuple(adj.shape)}"
        )
    if not adj.is_floating_point():
        raise GraphDataError(
            f"{name}: expected a floating dtype, got {adj.dtype}; use adj.double() (float64 for "
            "exact densities)"
        )
    if adj.size(-1) == 0:
        raise GraphDataError(f"{name}: expected at least one node, got shape {tuple(adj.shape)}")
    if adj.dim() == 3 and adj.size(0) == 0:
        raise GraphDataError(
            f"{name}: expected at least one graph in the batch [B, N, N], got shape "
            f"{tuple(adj.shape)}; pass B >= 1 graphs (skip the call for an empty batch)"
        )
    # Fast path, O(n^2) with matvec speed: A r and r A for a fixed random r are finite iff A
    # is (r has no zeros), and agree to rounding iff A is symmetric up to a null event. Only
    # when they do not is the exact elementwise check (which allocates n^2 temporaries) run.
    r = torch.rand(adj.size(-1), generator=_probe_generator(), dtype=torch.float64)
    r = (r + 0.5).to(device=adj.device, dtype=adj.dtype)
    right, left = adj @ r, r @ adj  # [..., n] each
    if not bool(torch.isfinite(right).all() & torch.isfinite(left).all()):
        if not bool(torch.isfinite(adj).all()):
            count = int((~torch.isfinite(adj)).sum())
            raise GraphDataError(
                f"{name}: expected finite entries, got {count} NaN or infinite entries; replace "
                "them, e.g. torch.nan_to_num(adj)"
            )
    low, high = torch.aminmax(adj)
    scale = max(abs(float(low)), abs(float(high))) * float(r.sum())
    tol = 64 * torch.finfo(adj.dtype).eps * adj.size(-1) ** 0.5 * scale + 1e-300
    suspect = symmetric and not bool(((right - left).abs() <= tol).all())
    if suspect and not torch.allclose(adj, adj.mT, rtol=1e-6, atol=1e-9):
        gap = float((adj - adj.mT).abs().max())
        raise GraphDataError(
            f"{name}: expected a symmetric (undirected) matrix, got max |A - A^T| = {gap:.3g}; "
            "symmetrise with (A + A.mT) / 2"
        )
    if unit and (float(adj.min()) < 0.0 or float(adj.max()) > 1.0):
        raise GraphDataError(
            f"{name}: expected entries in [0, 1] (a graphon's values), got range "
            f"[{float(adj.min()):.4g}, {float(adj.max()):.4g}]; rescale the weights into [0, 1]"
        )
    batched = adj.dim() == 3
    return (adj if batched else adj.unsqueeze(0)), batched


def check_signal(signal: Tensor | None, adj: Tensor, batched: bool) -> Tensor | None:
    """Validate a node signal against a batched adjacency; return it as ``[B, N, C]``."""
    if signal is None:
        return None
    if not isinstance(signal, Tensor):
        raise GraphDataError(f"signal: expected a torch.Tensor, got {type(signal).__name__}")
    lead = tuple(adj.shape[:2]) if batched else (adj.size(1),)
    if signal.dim() == len(lead):
        signal = signal.unsqueeze(-1)
    if signal.dim() != len(lead) + 1 or tuple(signal.shape[: len(lead)]) != lead:
        want = "[B, N] or [B, N, C]" if batched else "[N] or [N, C]"
        raise GraphDataError(
            f"signal: expected shape {want} matching adj of shape "
            f"{tuple(adj.shape) if batched else tuple(adj.shape[1:])}, got {tuple(signal.shape)}"
        )
    if signal.device != adj.device:
        raise GraphDataError(
            f"signal: expected the device of adj ({adj.device}), got {signal.device}; move it "
            "with signal.to(adj.device)"
        )
    if not bool(torch.isfinite(signal).all()):
        count = int((~torch.isfinite(signal)).sum())
        raise GraphDataError(
            f"signal: expected finite values, got {count} NaN or infinite entries; impute or "
            "drop them"
        )
    signal = signal.to(adj.dtype)
    return signal if batched else signal.unsqueeze(0)


def check_weights(
    node_weights: Tensor | None, mask: Tensor | None, adj: Tensor, batched: bool
) -> Tensor:
    """Return node measures ``[B, N]`` from ``node_weights`` or ``mask`` (uniform by default)."""
    bsz, n = adj.size(0), adj.size(1)
    if node_weights is not None and mask is not None:
        raise GraphDataError("node_weights, mask: pass at most one of them")
    if mask is not None:
        if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
            raise GraphDataError("mask: expected a bool tensor [B, N] (True = real node)")
        mask = mask if batched else mask.unsqueeze(0)
        if tuple(mask.shape) != (bsz, n):
            raise GraphDataError(
                f"mask: expected shape {(bsz, n) if batched else (n,)}, got {tuple(mask.shape)}"
            )
        counts = mask.sum(-1, keepdim=True)
        if bool((counts == 0).any()):
            raise GraphDataError("mask: a graph in the batch has no real node")
        return mask.to(adj.dtype) / counts.to(adj.dtype)
    if node_weights is None:
        return torch.full((bsz, n), 1.0 / n, dtype=adj.dtype, device=adj.device)
    if not isinstance(node_weights, Tensor):
        raise GraphDataError("node_weights: expected a torch.Tensor [N] or [B, N]")
    weights = node_weights.to(adj.dtype)
    if weights.dim() == 1 and weights.shape == (n,):
        weights = weights.unsqueeze(0).expand(bsz, n)
    if tuple(weights.shape) != (bsz, n) or weights.device != adj.device:
        raise GraphDataError(
            f"node_weights: expected shape [N] or [B, N] = {(bsz, n)} on {adj.device}, got "
            f"{tuple(node_weights.shape)} on {node_weights.device}"
        )
    if bool((weights < 0).any()) or not torch.allclose(
        weights.sum(-1), torch.ones((), dtype=weights.dtype, device=weights.device)
    ):
        sums = [round(float(t), 6) for t in weights.sum(-1)[:8]]
        raise GraphDataError(
            f"node_weights: expected finite non-negative measures summing to 1 per graph, got "
            f"minimum {float(weights.min()):.4g} and sums {sums}; replace NaN and negative "
            "entries and divide by their sum"
        )
    return weights


#: Declared non-smoothness of a graphon (see :class:`graphon.graphons.AnalyticGraphon`).
KINKS = ("auto", "none", "diagonal")


def check_kinks(kinks: object, name: str = "kinks") -> str:
    """Return ``kinks`` if it is one of :data:`KINKS`, else raise naming the choices."""
    if not isinstance(kinks, str) or kinks not in KINKS:
        raise GraphDataError(
            f"{name}: expected one of {', '.join(map(repr, KINKS))}, got {kinks!r}; 'diagonal' "
            "for functions of max(x, y), min(x, y) or |x - y|"
        )
    return kinks


def check_breaks(breaks: object, name: str = "breaks") -> tuple[float, ...] | None:
    """Return sorted distinct breakpoints in ``(0, 1)`` (``None`` stays ``None``), else raise."""
    if breaks is None:
        return None
    try:
        values = sorted({float(c) for c in breaks})  # type: ignore[attr-defined]
    except (TypeError, ValueError) as err:
        raise GraphDataError(
            f"{name}: expected a sequence of numbers in (0, 1), got {breaks!r}"
        ) from err
    bad = [c for c in values if not (math.isfinite(c) and 0.0 < c < 1.0)]
    if bad:
        raise GraphDataError(
            f"{name}: expected points strictly inside (0, 1), got {bad}; drop 0, 1 and values "
            "outside"
        )
    return tuple(values)
