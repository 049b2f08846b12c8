r"""Private: where a graphon given as a plain function is not smooth, found by probing it.

Two kinds of non-smooth sets are recognised, the ones graphons have in practice:

- **the diagonal** :math:`x = y` (a kink: functions of :math:`\max`, :math:`\min`,
  :math:`|x - y|`; a symmetric :math:`W` cannot jump there), found by comparing the one-sided
  slopes of :math:`x \mapsto W(x, y_0)` at :math:`x = y_0`. Both one-sided second-order
  differences have the same leading error :math:`-h^2 W'''/3`, so for a smooth slice their gap
  is :math:`O(h^3)` and shrinks 8-fold when :math:`h` halves, while a kink's gap stays put;
- **axis-parallel lines** :math:`x = c` (and :math:`y = c` by symmetry), jumps or kinks of
  step-like functions and of signals, found as spikes of third differences on a fine grid of
  slices :math:`W(\cdot, y_0)`, located by repeated zooming (a jump to a few ulps, a kink to
  about :math:`10^{-9}`, whose effect on an integral is quadratic in the offset). A spike that
  moves with :math:`y_0` lies on some other curve: reported as ``other`` so that the caller warns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

__all__: list[str] = []

#: Slices y = y0 probed; irrational-looking so that they avoid breakpoints users write.
_SLICES = (0.1234567, 0.3141593, 0.5772157, 0.7071068, 0.8862269)
_GRID = 4096  # grid intervals of a slice scan
_F64 = torch.float64


@dataclass(frozen=True)
class Structure:
    """Where a function of ``[0, 1]`` (or ``[0, 1]^2``) is not smooth.

    Attributes:
        diagonal: Kinked across ``x = y``.
        breaks: Sorted points ``c`` in ``(0, 1)``: jumps or kinks on ``x = c`` (and ``y = c``).
        other: Non-smooth on a curve that is neither (the integration cannot follow it).
    """

    diagonal: bool = False
    breaks: tuple[float, ...] = ()
    other: bool = False

    def merged(self, other: Structure) -> Structure:
        return Structure(
            self.diagonal or other.diagonal,
            _dedupe(self.breaks + other.breaks),
            self.other or other.other,
        )


def _dedupe(points: tuple[float, ...], tol: float = 1e-9) -> tuple[float, ...]:
    out: list[float] = []
    for c in sorted(points):
        if not out or c - out[-1] > tol:
            out.append(c)
    return tuple(out)


def _spikes(values: Tensor, scale: float) -> list[int]:
    """Indices ``i`` whose third difference stands out: non-smooth within ``[x_i, x_{i+3}]``."""
    d3 = values.diff(n=3).abs()  # [N - 2]
    if d3.numel() == 0:
        return []
    typical = float(d3.median())
    threshold = max(1e3 * typical, 1e-11 * max(scale, 1e-300))
    hot = (d3 > threshold).nonzero().flatten().tolist()
    # One non-smooth point lights up to 3 neighbouring differences: keep the largest of a run.
    groups: list[list[int]] = []
    for i in hot:
        if groups and i - groups[-1][-1] <= 3:
            groups[-1].append(i)
        else:
            groups.append([i])
    return [max(g, key=lambda i: float(d3[i])) for g in groups]


def _locate(fn: Callable[[Tensor], Tensor], low: float, high: float) -> float | None:
    """Zoom on the non-smooth point of ``fn`` in ``[low, high]``; ``None`` if there is none.

    Each round keeps the span of the largest third difference (the point lies inside it) and
    stops when that difference sinks to rounding level: then the point is as close as float64
    can tell.
    """
    for round_ in range(60):
        x = torch.linspace(low, high, 65, dtype=_F64)
        values = fn(x)
        d3 = values.diff(n=3).abs()  # [62]
        noise = 64 * torch.finfo(_F64).eps * float(values.abs().max()) + 1e-300
        peak = float(d3.max())
        if peak <= max(1e3 * float(d3.median()), noise):
            return None if round_ == 0 else 0.5 * (low + high)
        i = int(d3.argmax())
        step = (high - low) / 64
        low, high = max(0.0, float(x[i]) - step), min(1.0, float(x[min(i + 3, 64)]) + step)
        if high - low < 1e-13:
            break
    return 0.5 * (low + high)


def _scan(fn: Callable[[Tensor], Tensor], exclude: float | None = None) -> list[float]:
    """Located non-smooth points of a 1-D function on ``(0, 1)`` (``exclude``: skip near it)."""
    x = torch.linspace(0.0, 1.0, _GRID + 1, dtype=_F64)
    values = fn(x)
    scale = float(values.abs().max())
    h = 1.0 / _GRID
    found = []
    for i in _spikes(values, scale):
        low, high = max(0.0, (i - 1) * h), min(1.0, (i + 4) * h)
        if exclude is not None and low - 2 * h <= exclude <= high + 2 * h:
            continue
        c = _locate(fn, low, high)
        if c is not None and 1e-12 < c < 1 - 1e-12:
            found.append(c)
    return found


def _diagonal_kink(w: Callable[[Tensor, Tensor], Tensor], y0: float) -> bool:
    """Whether ``W(., y0)`` has a slope jump at ``y0`` (the module's one-sided test)."""

    def gap(h: float) -> float:
        x = torch.tensor([y0 - 2 * h, y0 - h, y0, y0 + h, y0 + 2 * h], dtype=_F64)
        g = w(x, torch.full_like(x, y0)).double()
        left = (3 * g[2] - 4 * g[1] + g[0]) / (2 * h)
        right = (-3 * g[2] + 4 * g[3] - g[4]) / (2 * h)
        return float(right - left)

    small, large = gap(1e-4), gap(2e-4)
    slope = abs(float(w(torch.tensor([y0 + 1e-3], dtype=_F64), torch.tensor([y0], dtype=_F64))))
    if abs(small) <= 1e-8 * (1.0 + slope):
        return False
    return abs(large - small) <= 0.5 * abs(small)  # a kink keeps its size, smooth terms shrink


def _lines(
    graphon: Callable[[Tensor, Tensor], Tensor],
    check: Callable[[Tensor, Tensor, Tensor], None] | None,
) -> tuple[list[float], bool]:
    """Axis-parallel breakpoints of the slices ``W(., y0)``, and whether a spike moved."""
    breaks: list[float] = []
    other = False
    for y0 in _SLICES:

        def row(x: Tensor, y0: float = y0) -> Tensor:
            y = torch.full_like(x, y0)
            values = graphon(x, y).double()
            if check is not None:
                check(values, x, y)
            return values

        for c in _scan(row, exclude=y0):
            # An axis-parallel line stays at c when y0 moves; a slanted curve does not.
            def moved(x: Tensor, y0: float = y0 + 1e-3) -> Tensor:
                return graphon(x, torch.full_like(x, y0)).double()

            width = 8.0 / _GRID
            again = _locate(moved, max(0.0, c - width), min(1.0, c + width))
            if again is not None and abs(again - c) < 1e-6:
                breaks.append(c)
            else:
                other = True
    return breaks, other


def detect(
    graphon: Callable[[Tensor, Tensor], Tensor] | None,
    signal: Callable[[Tensor], Tensor] | None = None,
    *,
    check: Callable[[Tensor, Tensor, Tensor], None] | None = None,
    check_signal: Callable[[Tensor, Tensor], None] | None = None,
    lines: bool = True,
) -> Structure:
    """Probe ``graphon`` (and ``signal``, each channel) for the non-smooth sets of the module.

    ``check(values, x, y)`` and ``check_signal(values, x)`` vet every value the scans
    evaluate (NaN would hide a non-smooth set from the comparisons); ``lines=False`` probes
    the graphon's diagonal only (its lines are declared).
    """
    diagonal, other = False, False
    breaks: list[float] = []
    if graphon is not None:
        diagonal = any(_diagonal_kink(graphon, y0) for y0 in _SLICES)
    if graphon is not None and lines:
        breaks, other = _lines(graphon, check)
    if signal is not None:
        probe = signal(torch.linspace(0.0, 1.0, 3, dtype=_F64))
        channels = 1 if probe.dim() == 1 else probe.size(-1)
        for ch in range(channels):

            def channel(x: Tensor, ch: int = ch) -> Tensor:
                out = signal(x).double()
                if check_signal is not None:
                    check_signal(out, x)
                return out if out.dim() == 1 else out[..., ch]

            breaks.extend(_scan(channel))
    return Structure(diagonal, _dedupe(tuple(breaks)), other)
