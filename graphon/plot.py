"""Plots: a graphon heatmap, a sampled adjacency matrix, density convergence against n.

Each function draws one thing on the given Axes (or a new figure's) and returns the Axes. New
figures are :class:`matplotlib.figure.Figure` objects rendered by the Agg canvas, so no pyplot
state or GUI backend is touched; save them with ``ax.figure.savefig(path)``.

Log axes go through :func:`log_axis`, whose labels do not collide: matplotlib's default log
axis labels the minor ticks once the view spans less than about a decade, and ``3x10^2`` then
runs into ``4x10^2``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import Formatter, Locator, LogLocator, MaxNLocator, NullFormatter
from torch import Tensor

from graphdata.errors import GraphDataError
from graphon.graphons import Graphon

__all__ = ["plot_graphon", "plot_adjacency", "plot_density_convergence", "log_axis"]

#: At most this many labelled ticks fit a default-width axis: fixed ticks closer than 1/9 of
#: the axis (in log units) are dropped; at 10 pt a 5-character label is about 1/12 of 5 inches.
_MAX_LABELS = 9


class _LogTicks(Locator):
    """Major ticks of a log axis, chosen from the decades the view spans.

    Under half a decade: 4 or 5 round linear steps (0.12, 0.14, 0.16); under two decades: digits
    times powers of ten, the roundest first (1, 5, 2, 3, ...), none closer than 1/9 of the axis;
    wider: powers of ten, every second or third one when there are more than 6 (matplotlib's
    :class:`~matplotlib.ticker.LogLocator`).
    Given ``fixed`` positions (the graph sizes of a sweep), those in view are kept, thinned so
    that neighbours are at least 1/9 of the axis apart; with fewer than two in view, the
    automatic ticks.
    """

    def __init__(self, fixed: Sequence[float] | None = None) -> None:
        self.fixed = None if fixed is None else sorted(float(v) for v in fixed if v > 0)

    def __call__(self) -> Sequence[float]:
        vmin, vmax = self.axis.get_view_interval() if self.axis is not None else (1.0, 10.0)
        return self.tick_values(vmin, vmax)

    def tick_values(self, vmin: float, vmax: float) -> Sequence[float]:
        lo, hi = sorted((float(vmin), float(vmax)))
        if hi <= 0:
            return []
        lo = lo if lo > 0 else hi / 10
        decades = math.log10(hi / lo)
        gap = decades / _MAX_LABELS  # closest allowed neighbours, in log10 units
        if self.fixed is not None:
            inside = [v for v in self.fixed if lo <= v <= hi]
            kept: list[float] = []
            for value in inside:
                if not kept or math.log10(value / kept[-1]) >= gap:
                    kept.append(value)
            if len(kept) > 1 and kept[-1] != inside[-1]:
                # Label the largest size, not its close neighbour, when the two collide.
                if math.log10(inside[-1] / kept[-2]) >= gap:
                    kept[-1] = inside[-1]
            if len(kept) >= 2:
                return kept
            # Fewer than two given positions in view (a zoom): fall back to the automatic ticks.
        if decades < 0.5:  # log is nearly linear here: round linear steps
            linear = MaxNLocator(nbins=4, steps=[1, 2, 2.5, 5, 10]).tick_values(lo, hi)
            return [float(v) for v in linear if v > 0]
        if decades < 2:
            # Digits times powers of ten, the roundest first, each kept if it is at least
            # ``gap`` from those already kept: 0.2 0.3 0.5 0.7 0.9 on [0.11, 1].
            chosen: list[float] = []
            for digit in (1, 5, 2, 3, 4, 6, 7, 8, 9):
                for power in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
                    value = float(f"{digit}e{power}")
                    if lo <= value <= hi and all(
                        abs(math.log10(value / other)) >= gap for other in chosen
                    ):
                        chosen.append(value)
            return sorted(chosen)
        return list(LogLocator(numticks=6).tick_values(lo, hi))


class _LogLabels(Formatter):
    r"""Tick labels in one style per axis: plain or scientific.

    Plain (``0.002``, ``400``) when every label in view lies in [1e-3, 1e5), else scientific
    (``$2\times10^{-4}$``), so that one axis never mixes ``1000`` with ``$10^{4}$``.
    """

    plain = True

    def set_locs(self, locs: list[float]) -> None:
        super().set_locs(locs)
        low, high = self.axis.get_view_interval() if self.axis is not None else (1e-3, 1e5)
        shown = [abs(v) for v in locs if min(low, high) <= v <= max(low, high) and v != 0]
        self.plain = all(1e-3 <= v < 1e5 for v in shown)

    def __call__(self, x: float, pos: int | None = None) -> str:
        if x <= 0:
            return ""
        if self.plain:
            return f"{x:.6g}"
        exponent = math.floor(math.log10(x))
        mantissa = float(f"{x / 10**exponent:.3g}")
        if mantissa >= 10:  # 9.9996 rounded up
            mantissa, exponent = mantissa / 10, exponent + 1
        if mantissa == 1:
            return rf"$10^{{{exponent}}}$"
        return rf"${mantissa:g}\times10^{{{exponent}}}$"


def log_axis(ax: Axes, axis: str = "x", *, ticks: Sequence[float] | None = None) -> Axes:
    """Put one axis of ``ax`` on a log scale with labels that do not collide.

    The major ticks follow the range in view when the figure is drawn (so they adapt to later
    limits): round linear steps under half a decade, round digits times powers of ten (1, 5, 2,
    3, ..., none closer than 1/9 of the axis) under two decades, powers of ten beyond; minor
    ticks are marked but never labelled. ``ticks`` labels given positions instead
    (the sizes of a sweep), dropping those closer than 1/9 of the axis to a kept neighbour.

    Args:
        ax: The Axes.
        axis: ``"x"`` (default) or ``"y"``.
        ticks: Positions to label (positive); None (default) chooses them from the range.

    Returns:
        The Axes.

    Examples:
        >>> fig = Figure()
        >>> ax = log_axis(fig.add_subplot(), "x", ticks=[50, 100, 200, 400])
        >>> ax.set_xlim(40, 500)
        (40.0, 500.0)
        >>> [label.get_text() for label in ax.get_xticklabels()]
        ['50', '100', '200', '400']
    """
    if axis not in ("x", "y"):
        raise GraphDataError(f"axis: expected 'x' or 'y', got {axis!r}")
    if ticks is not None and not all(np.isfinite(t) and t > 0 for t in ticks):
        raise GraphDataError(
            f"ticks: a log axis needs positive finite positions, got {list(ticks)}; drop the "
            "zeros or pass ticks=None"
        )
    target = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log")  # resets the locators: set ours after
    target.set_major_locator(_LogTicks(ticks))
    target.set_major_formatter(_LogLabels())
    target.set_minor_locator(LogLocator(subs="auto"))
    target.set_minor_formatter(NullFormatter())
    return ax


def _axes(ax: Axes | None, size: tuple[float, float] = (4.0, 3.6)) -> Axes:
    if ax is not None:
        return ax
    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    return fig.add_subplot()


def plot_graphon(graphon: Graphon, ax: Axes | None = None, *, resolution: int = 200) -> Axes:
    """Heatmap of :math:`W(x, y)` on the midpoint grid, origin top left (like a matrix).

    Args:
        graphon: The graphon.
        ax: Axes to draw on. Default: a new figure.
        resolution: Grid points per axis. Default ``200``.

    Returns:
        The Axes.

    Examples:
        >>> from graphon.families import make_graphon
        >>> plot_graphon(make_graphon("sum"), resolution=20).get_title()
        'sum'
    """
    ax = _axes(ax)
    x = (torch.arange(resolution, dtype=torch.float64) + 0.5) / resolution
    image = ax.imshow(
        graphon.matrix(x).cpu().numpy(), extent=(0, 1, 1, 0), vmin=0, vmax=1, cmap="viridis"
    )
    ax.figure.colorbar(image, ax=ax, fraction=0.046)
    ax.set(xlabel="y", ylabel="x", title=graphon.name)
    return ax


def plot_adjacency(adj: Tensor, ax: Axes | None = None, *, title: str = "sampled graph") -> Axes:
    """The adjacency matrix as an image (nodes in the given order, e.g. sorted latents).

    Args:
        adj: ``[N, N]`` weights.
        ax: Axes to draw on. Default: a new figure.
        title: Axes title. Default ``"sampled graph"``.

    Returns:
        The Axes.
    """
    if not isinstance(adj, Tensor) or adj.dim() != 2:
        raise GraphDataError("adj: expected one [N, N] tensor; index a batch first")
    ax = _axes(ax)
    ax.imshow(
        adj.detach().cpu().float().numpy(), cmap="Greys", vmin=0, vmax=1, interpolation="nearest"
    )
    ax.set(title=f"{title} (n = {adj.size(0)})", xticks=[], yticks=[])
    return ax


def plot_density_convergence(
    sizes: Sequence[int],
    values: Tensor | Sequence[Sequence[float]],
    limit: float | None = None,
    ax: Axes | None = None,
    *,
    label: str = "t(F, G_n)",
) -> Axes:
    """Densities of sampled graphs against n: mean with a ±1 sd band, the limit as a line.

    Args:
        sizes: Graph sizes :math:`n`, length ``S``.
        values: Densities ``[S, R]`` (``R`` graphs per size).
        limit: The graphon's value :math:`t(F, W)`, drawn as a dashed line. Default none.
        ax: Axes to draw on. Default: a new figure.
        label: Legend label of the series. Default ``"t(F, G_n)"``.

    Returns:
        The Axes (log-scaled x).
    """
    vals = torch.as_tensor(values, dtype=torch.float64)
    if vals.dim() != 2 or vals.size(0) != len(sizes):
        raise GraphDataError(
            f"values: expected shape [len(sizes), R] = [{len(sizes)}, R], got {tuple(vals.shape)}"
        )
    ax = _axes(ax, (5.0, 3.6))
    mean = vals.mean(1).numpy()
    std = (vals.std(1) if vals.size(1) > 1 else torch.zeros(len(sizes))).numpy()
    line = ax.plot(list(sizes), mean, marker="o", label=label)[0]
    ax.fill_between(list(sizes), mean - std, mean + std, alpha=0.25, color=line.get_color())
    if limit is not None:
        ax.axhline(limit, color="black", linestyle="--", label="t(F, W)")
    log_axis(ax, "x", ticks=list(sizes))
    ax.set(xlabel="n (nodes)", ylabel="density")
    ax.legend()
    return ax
