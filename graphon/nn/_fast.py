"""Private channels-last kernels of :class:`graphon.nn.layers.EquivariantLinear`.

The layer works on the logical layout ``[B, N, ..., N, C]`` (a ``movedim`` view of its
``[B, C, N, ..., N]`` input): channel mixing is one ``[B * N^q, C_in] @ [C_in, C_out]`` matmul
whose result keeps the channel axis innermost in memory, so node transposes move whole channel
vectors (cache lines) and reductions over node axes (forward sums and the broadcast backward
sums) run along contiguous memory. Reducing a channels-first *logical* view of such memory is an
order of magnitude slower in torch, hence the logical channels-last layout throughout.
"""

from __future__ import annotations

import torch
from torch import Tensor

from graphon.nn._contract import Term, normalise

__all__: list[str] = []


def reduce_last(term: Term, x: Tensor, counts: Tensor | float, *, normalize: bool) -> Tensor:
    """Reduce ``x`` ``[B, C, N, ..., N]`` to ``[B, N^q, C]`` (kept axes in input order).

    Sums run in whichever logical layout matches ``x``'s memory (channels innermost: the
    ``[B, N, ..., N, C]`` view; else the given one), then the small result is moved.
    """
    last = x.movedim(1, -1)  # [B, N, ..., N, C]
    if len(set(term.in_blocks)) != len(term.in_blocks):  # a diagonal read: repeated subscript
        subs = [0] + [2 + b for b in term.in_blocks] + [1]
        out = torch.einsum(last, subs, [0] + [2 + b for b in term.kept_in] + [1])
    else:
        summed = [a for a, b in enumerate(term.in_blocks) if b not in term.kept]
        if not summed:
            out = last
        elif last.is_contiguous():
            out = last.sum([1 + a for a in summed])
        else:
            out = x.sum([2 + a for a in summed]).movedim(1, -1)
    return normalise(out, counts, term.summed) if normalize and term.summed else out


def derive_last(
    parent: Tensor,
    parent_kept: tuple[int, ...],
    kept: tuple[int, ...],
    counts: Tensor | float,
    *,
    normalize: bool,
) -> Tensor:
    """A reduction from a larger one of the same input pattern: sum the extra kept axes."""
    dims = [1 + p for p, b in enumerate(parent_kept) if b not in kept]
    out = parent.sum(dims)
    return normalise(out, counts, len(dims)) if normalize else out


def accumulate(parts: list[tuple[Tensor, bool]], target: tuple[int, ...]) -> Tensor:
    """Add broadcastable parts with few full-size passes; ``owned`` parts may be added into.

    Small parts are first folded into small parts whose shape covers theirs; the result starts
    from the largest part (out of place unless owned) and adds the rest in place.
    """
    parts = sorted(parts, key=lambda p: -p[0].numel())
    small: list[Tensor] = []
    for t, _ in (p for p in parts if p[0].shape != target):
        for i, s in enumerate(small):
            if torch.broadcast_shapes(s.shape, t.shape) == s.shape:
                small[i] = s + t
                break
        else:
            small.append(t)
    full = [p for p in parts if p[0].shape == target]
    rest = [t for t, _ in full[1:]] + small
    if not full:
        out = rest[0] + rest[1] if len(rest) > 1 else rest[0]
        rest = rest[2:]
        if out.shape != target:
            out = out.expand(target).clone()
    elif full[0][1] or not rest:
        out = full[0][0]
    else:
        out = full[0][0] + rest.pop(0)
    for t in rest:
        out = out.add_(t) if out.shape == target else out + t
    return out
