"""Plots of the transfer experiments; each draws one thing and returns the Axes.

New figures are :class:`matplotlib.figure.Figure` objects on the Agg canvas (no pyplot state);
save them with ``ax.figure.savefig(path)``. Log axes use :func:`graphon.plot.log_axis`: the
sizes label the x axis, thinned where they would collide; y labels never collide.
"""

from __future__ import annotations

import torch
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from graphdata.errors import GraphDataError
from graphon.nn.generalization import SizeGeneralizationResult
from graphon.nn.transfer import ConvergenceCurve, ConvergenceResult
from graphon.plot import log_axis

__all__ = ["plot_convergence", "plot_bernoulli_lift", "plot_size_generalization"]


def _axes(ax: Axes | None, size: tuple[float, float] = (5.0, 3.6)) -> Axes:
    if ax is not None:
        return ax
    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    return fig.add_subplot()


def plot_convergence(
    result: ConvergenceResult,
    ax: Axes | None = None,
    *,
    metric: str = "mae",
    normalize: bool = True,
) -> Axes:
    """Error to the graphon limit (or output spread) against n, one line per model.

    Herbst & Jegelka (arXiv 2503.14338), Figures 2 and 3: curves normalised to 1 at the
    smallest n.

    Args:
        result: An :func:`~graphon.nn.transfer.untrained_convergence` result.
        ax: Axes to draw on. Default: a new figure.
        metric: ``"mae"`` (mean absolute error to the limit, default) or ``"spread"``
            (quantile 0.9 minus 0.1).
        normalize: Divide each curve by its value at the smallest n. Default ``True``.

    Returns:
        The Axes (log-log).
    """
    if metric not in ("mae", "spread"):
        raise GraphDataError(f"metric: expected 'mae' or 'spread', got {metric!r}")
    ax = _axes(ax)
    for name, curve in result.curves.items():
        values = curve.mae if metric == "mae" else curve.spread
        if normalize:
            values = values / values[0].clamp_min(torch.finfo(values.dtype).tiny)
        ax.plot(curve.sizes, values.tolist(), marker="o", label=name.upper())
    sizes = sorted({n for curve in result.curves.values() for n in curve.sizes})
    log_axis(ax, "x", ticks=sizes)  # the sizes themselves, thinned where labels would collide
    log_axis(ax, "y")
    label = "MAE to N(W)" if metric == "mae" else "spread q.9 - q.1"
    ax.set(
        xlabel="n (nodes)",
        ylabel=f"{label}{' (normalised)' if normalize else ''}",
        title=f"untrained networks, {result.graphon}",
    )
    ax.legend()
    return ax


def plot_bernoulli_lift(curve: ConvergenceCurve, ax: Axes | None = None) -> Axes:
    """Sample outputs (mean, q.1-q.9 band) against n with the graphon value and the lift.

    Args:
        curve: A curve with a Bernoulli-lift value (an order-2 IWN).
        ax: Axes to draw on. Default: a new figure.

    Returns:
        The Axes: the sample means approach the lift (dashed), not N(W) (dotted).
    """
    if curve.lift is None:
        raise GraphDataError(
            f"curve: model {curve.model!r} has no Bernoulli-lift value; pass the IWN curve"
        )
    ax = _axes(ax)
    mean = curve.outputs.mean(1).tolist()
    low, high = torch.quantile(curve.outputs, torch.tensor([0.1, 0.9]).double(), dim=1).tolist()
    ax.plot(curve.sizes, mean, marker="o", label="mean N(G_n)")
    ax.fill_between(curve.sizes, low, high, alpha=0.25, label="q.1 - q.9")
    ax.axhline(curve.lift, color="black", linestyle="--", label="Bernoulli lift")
    ax.axhline(curve.limit, color="tab:red", linestyle=":", label="N(W) (weighted graph)")
    log_axis(ax, "x", ticks=curve.sizes)
    ax.set(xlabel="n (nodes)", ylabel="output", title=f"{curve.model.upper()} plateau")
    ax.legend()
    return ax


def plot_size_generalization(result: SizeGeneralizationResult, ax: Axes | None = None) -> Axes:
    """Median test MSE against test size per model, with the min-max band over seeds.

    Levin et al. (NeurIPS 2025), size-generalisation figure.

    Args:
        result: A :func:`~graphon.nn.generalization.size_generalization` result.
        ax: Axes to draw on. Default: a new figure.

    Returns:
        The Axes (log-log).
    """
    ax = _axes(ax)
    sizes = list(result.config.test_sizes)
    for name, mse in result.mse.items():
        median = result.median()[name].tolist()
        line = ax.plot(sizes, median, marker="o", label=name.upper())[0]
        ax.fill_between(
            sizes,
            mse.min(0).values.tolist(),
            mse.max(0).values.tolist(),
            alpha=0.2,
            color=line.get_color(),
        )
    log_axis(ax, "x", ticks=sizes)
    log_axis(ax, "y")
    ax.set(
        xlabel="test graph size n",
        ylabel="test MSE (median over seeds)",
        title=f"trained at n = {result.config.train_size}",
    )
    ax.legend()
    return ax
