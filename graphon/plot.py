"""Plots: a graphon heatmap, a sampled adjacency matrix, density convergence against n.

Each function draws one thing on the given Axes (or a new figure's) and returns the Axes. New
figures are :class:`matplotlib.figure.Figure` objects rendered by the Agg canvas, so no pyplot
state or GUI backend is touched; save them with ``ax.figure.savefig(path)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from torch import Tensor

from graphdata.errors import GraphDataError
from graphon.graphons import Graphon

__all__ = ["plot_graphon", "plot_adjacency", "plot_density_convergence"]


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
    ax.set_xscale("log")
    ax.set(xlabel="n (nodes)", ylabel="density")
    ax.legend()
    return ax
