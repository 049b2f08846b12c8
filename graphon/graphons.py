r"""Graphons, step graphons (stochastic block models) and graphon-signals.

A graphon is a symmetric measurable :math:`W: [0,1]^2 \to [0,1]` (Lovász, *Large Networks and
Graph Limits*, AMS 2012); a graphon-signal adds :math:`f: [0,1] \to \mathbb{R}^C` (Levie, "A
Graphon-Signal Analysis of Graph Neural Networks", NeurIPS 2023, arXiv 2305.15987). Graphons are
evaluated on the device and dtype of the points they are given.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import Tensor

from graphdata.errors import GraphDataError
from graphon._validation import (
    check_adjacency,
    check_breaks,
    check_graphon_values,
    check_int,
    check_kinks,
    check_real,
)

__all__ = ["Graphon", "AnalyticGraphon", "StepGraphon", "GraphonSignal"]


class Graphon(ABC):
    r"""A graphon :math:`W: [0,1]^2 \to [0,1]`, symmetric; subclasses define ``__call__``."""

    name: str = "graphon"

    @abstractmethod
    def __call__(self, x: Tensor, y: Tensor) -> Tensor:
        """Evaluate :math:`W(x, y)` elementwise, broadcasting ``x`` against ``y``."""

    def matrix(self, latents: Tensor) -> Tensor:
        r"""The weighted graph :math:`A_{ij} = W(x_i, x_j)` on points ``latents``.

        Args:
            latents: Points in :math:`[0,1]`, shape ``[..., n]``.

        Returns:
            The matrix, shape ``[..., n, n]``, diagonal :math:`W(x_i, x_i)` included.
        """
        return self(latents.unsqueeze(-1), latents.unsqueeze(-2))  # [..., n, n]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class AnalyticGraphon(Graphon):
    r"""A graphon given by a vectorised function ``fn(x, y)``, checked on a probe grid.

    .. math::
        W(x, y) = \mathrm{fn}(x, y), \qquad 0 \le W \le 1, \quad W(x, y) = W(y, x).

    The check evaluates ``fn`` on the ``probe x probe`` grid of equispaced points of
    :math:`[0, 1]` (ends included) in float64 and raises if the result has the wrong shape, is not
    finite, leaves :math:`[0, 1]` or is not symmetric (tolerance ``atol``). Between probe points
    the function is not trusted: every consumer checks the values it evaluates (sampling, Monte
    Carlo and quadrature densities, :meth:`StepGraphon.from_graphon`, graphon WL) and raises
    :class:`~graphdata.errors.GraphDataError` naming the graphon, the point :math:`(x, y)` and
    the value where ``fn`` is NaN, infinite or outside :math:`[0, 1]`.

    Args:
        fn: Elementwise function of two broadcast tensors of equal shape, returning that shape.
        name: A display name. Default ``"analytic"``.
        probe: Number of probe points per axis. Default ``65``.
        atol: Tolerance of the range and symmetry checks. Default ``1e-9``.
        kinks: Where ``fn`` is not smooth, for :func:`~graphon.densities.graphon_density`:
            ``"auto"`` (default: probe it), ``"none"`` (smooth, or kinked only on the lines
            ``breaks``) or ``"diagonal"`` (kinked across :math:`x = y`, e.g. functions of
            :math:`\max`, :math:`\min`, :math:`|x - y|`).
        breaks: Points :math:`c \in (0, 1)` of the lines :math:`x = c` and :math:`y = c` where
            ``fn`` may jump or kink (a step function written as a plain function). Default
            ``None``: probed when ``kinks="auto"``, none otherwise.

    Raises:
        GraphDataError: If the probe check fails; the message names the offending point.

    Examples:
        >>> W = AnalyticGraphon(lambda x, y: x * y, name="xy")
        >>> W(torch.tensor([0.5]), torch.tensor([0.5])).item()
        0.25
    """

    def __init__(
        self,
        fn: Callable[[Tensor, Tensor], Tensor],
        name: str = "analytic",
        *,
        probe: int = 65,
        atol: float = 1e-9,
        kinks: str = "auto",
        breaks: Sequence[float] | None = None,
    ) -> None:
        if not callable(fn):
            raise GraphDataError(f"fn: expected a callable fn(x, y) -> Tensor, got {fn!r}")
        check_int("probe", probe, 2)
        check_real("atol", atol, low=0.0, fix="pass a small non-negative tolerance, e.g. 1e-9")
        self.fn = fn
        self.name = name
        self.kinks = check_kinks(kinks)
        self.breaks = check_breaks(breaks)
        grid = torch.linspace(0.0, 1.0, probe, dtype=torch.float64)
        xs, ys = torch.meshgrid(grid, grid, indexing="ij")  # [P, P] each
        values = fn(xs, ys)
        if not isinstance(values, Tensor) or values.shape != xs.shape:
            got = tuple(values.shape) if isinstance(values, Tensor) else type(values).__name__
            raise GraphDataError(
                f"fn: expected a tensor of the broadcast shape of x and y {tuple(xs.shape)}, got "
                f"{got}; build constants with torch.full_like(x, p)"
            )
        values = values.double()
        if not bool(torch.isfinite(values).all()):
            raise GraphDataError(f"fn: graphon {name!r} returns NaN or inf on the probe grid")
        low, high = float(values.min()), float(values.max())
        if low < -atol or high > 1 + atol:
            at = divmod(int(values.argmin() if low < -atol else values.argmax()), probe)
            raise GraphDataError(
                f"fn: graphon {name!r} must take values in [0, 1], got range [{low:.4g}, "
                f"{high:.4g}] (e.g. at x={float(grid[at[0]]):.4g}, y={float(grid[at[1]]):.4g}); "
                "rescale or clip the function"
            )
        gap = (values - values.T).abs()
        if float(gap.max()) > atol:
            i, j = divmod(int(gap.argmax()), probe)
            raise GraphDataError(
                f"fn: graphon {name!r} must be symmetric, got W(x,y) - W(y,x) = "
                f"{float(values[i, j] - values[j, i]):.4g} at x={float(grid[i]):.4g}, "
                f"y={float(grid[j]):.4g}; symmetrise with (fn(x, y) + fn(y, x)) / 2"
            )

    def __call__(self, x: Tensor, y: Tensor) -> Tensor:
        """Evaluate ``fn`` on the broadcast points."""
        x, y = torch.broadcast_tensors(x, y)
        return self.fn(x, y)


class StepGraphon(Graphon):
    r"""A step graphon (stochastic block model): :math:`W = B_{kl}` on :math:`I_k \times I_l`.

    .. math::
        W(x, y) = B_{k(x)\,l(y)}, \qquad
        I_k = \Big[\textstyle\sum_{m<k} \lambda_m, \sum_{m\le k} \lambda_m\Big), \quad
        \lambda_k = \frac{s_k}{\sum_m s_m}.

    Args:
        probs: Block probabilities :math:`B`, symmetric ``[K, K]`` in :math:`[0, 1]`.
        sizes: Positive block sizes :math:`s` ``[K]`` (counts or measures; normalised to
            :math:`\lambda`). Default: equal blocks.
        name: A display name. Default ``"step"``.

    Shapes:
        probs: ``[K, K]``; sizes: ``[K]``; stored ``probs`` and ``measures`` are float64.

    Examples:
        >>> W = StepGraphon([[0.8, 0.3], [0.3, 0.8]], sizes=[1.0, 3.0])
        >>> x = torch.tensor([0.1, 0.9], dtype=torch.float64)
        >>> W(x, torch.full_like(x, 0.2)).tolist()
        [0.8, 0.3]
    """

    def __init__(
        self,
        probs: Tensor | Sequence[Sequence[float]],
        sizes: Tensor | Sequence[float] | None = None,
        *,
        name: str = "step",
    ) -> None:
        probs = torch.as_tensor(probs, dtype=torch.float64)
        if probs.dim() != 2:
            raise GraphDataError(f"probs: expected a [K, K] matrix, got shape {tuple(probs.shape)}")
        check_adjacency(probs, name="probs", unit=True)
        k = probs.size(0)
        if sizes is None:
            sizes = torch.ones(k, dtype=torch.float64)
        sizes = torch.as_tensor(sizes, dtype=torch.float64).to(probs.device)
        if sizes.shape != (k,) or not bool((torch.isfinite(sizes) & (sizes > 0)).all()):
            got = sizes.tolist() if sizes.numel() <= 16 else f"shape {tuple(sizes.shape)}"
            raise GraphDataError(
                f"sizes: expected {k} finite positive block sizes, got {got}; drop empty blocks "
                "and replace NaN or inf sizes"
            )
        total = float(sizes.sum())
        if not math.isfinite(total):
            raise GraphDataError(
                f"sizes: the block sizes sum to {total} (overflow); rescale them, e.g. "
                "sizes / sizes.max()"
            )
        self.probs = probs  # [K, K]
        self.measures = sizes / sizes.sum()  # [K]
        self.name = name

    @property
    def num_blocks(self) -> int:
        """The number of blocks :math:`K`."""
        return self.probs.size(0)

    def boundaries(self) -> Tensor:
        r"""The inner interval boundaries :math:`\sum_{m \le k} \lambda_m`, ``[K - 1]``."""
        return torch.cumsum(self.measures, 0)[:-1]

    def block_of(self, x: Tensor) -> Tensor:
        """The block index :math:`k(x)` of each point (``long``, shape of ``x``)."""
        edges = self.boundaries().to(device=x.device, dtype=x.dtype)
        return torch.bucketize(x.contiguous(), edges, right=True)

    def __call__(self, x: Tensor, y: Tensor) -> Tensor:
        """Evaluate the block value at each broadcast pair of points."""
        x, y = torch.broadcast_tensors(x, y)
        probs = self.probs.to(device=x.device, dtype=x.dtype)
        return probs[self.block_of(x), self.block_of(y)]

    @classmethod
    def from_graph(cls, adj: Tensor, node_weights: Tensor | None = None) -> StepGraphon:
        r"""The empirical step graphon :math:`W_G` of a weighted graph (block per node).

        .. math::
            W_G(x, y) = A_{ij} \quad \text{on } I_i \times I_j, \qquad |I_i| = w_i
            \ (\text{default } 1/N).

        Args:
            adj: Symmetric weights in :math:`[0, 1]`, ``[N, N]``.
            node_weights: Positive node measures ``[N]``. Default: uniform.

        Returns:
            The step graphon; its ``m``-fold blow-up gives the same graphon.
        """
        checked, batched = check_adjacency(adj, unit=True)
        if batched:
            raise GraphDataError("adj: expected one graph [N, N]; loop over the batch")
        return cls(checked[0].detach().cpu(), node_weights, name="empirical")

    @classmethod
    def from_graphon(cls, graphon: Graphon, resolution: int, *, points: int = 1) -> StepGraphon:
        r"""The step approximation of ``graphon`` on ``resolution`` equal intervals.

        .. math::
            B_{ij} = \sum_{a,b} \omega_a \omega_b\, W(x_{ia}, x_{jb}), \qquad
            x_{ia} = \frac{i + \xi_a}{N},

        with :math:`(\xi_a, \omega_a)` the ``points``-node Gauss-Legendre rule on :math:`[0,1]`;
        ``points=1`` is the midpoint value, larger values approach the cell average
        :math:`W_{\mathcal{P}}` (Lovász 2012, Section 9.1). Step graphons whose breakpoints lie
        on the grid are reproduced exactly.

        Args:
            graphon: The graphon to discretise.
            resolution: The number of intervals :math:`N`.
            points: Quadrature nodes per cell and axis. Default ``1``.

        Returns:
            A step graphon with ``resolution`` equal blocks.
        """
        check_int("resolution", resolution, 1)
        check_int("points", points, 1)
        nodes, weights = np.polynomial.legendre.leggauss(points)
        xi = torch.as_tensor((nodes + 1) / 2, dtype=torch.float64)  # [P]
        om = torch.as_tensor(weights / 2, dtype=torch.float64)
        x = ((torch.arange(resolution, dtype=torch.float64)[:, None] + xi) / resolution).reshape(-1)
        values = graphon.matrix(x)  # [R * P, R * P]
        check_graphon_values(
            values, x[:, None], x[None, :], graphon=graphon.name, where="by from_graphon"
        )
        values = values.double().reshape(resolution, points, resolution, points)
        probs = torch.einsum("iajb,a,b->ij", values, om, om).clamp(0.0, 1.0)
        return cls((probs + probs.T) / 2, name=f"{graphon.name}@{resolution}")


class GraphonSignal:
    r"""A graphon-signal :math:`(W, f)` with :math:`f: [0,1] \to \mathbb{R}^C`.

    Args:
        graphon: The graphon :math:`W`.
        signal: Either a vectorised callable ``f(x)`` returning ``[...]`` (one channel) or
            ``[..., C]``, or, for a :class:`StepGraphon`, block values ``[K]`` or ``[K, C]``
            (a step signal, which keeps homomorphism densities exact).
        name: A display name. Default: the graphon's name.

    Examples:
        >>> ws = GraphonSignal(AnalyticGraphon(lambda x, y: x * y), lambda x: x)
        >>> ws.channels, ws.signal(torch.tensor([0.25])).tolist()
        (1, [[0.25]])
    """

    def __init__(
        self,
        graphon: Graphon,
        signal: Callable[[Tensor], Tensor] | Tensor,
        *,
        name: str | None = None,
    ) -> None:
        if not isinstance(graphon, Graphon):
            raise GraphDataError(f"graphon: expected a Graphon, got {type(graphon).__name__}")
        self.graphon = graphon
        self.name = name or graphon.name
        self.step_values: Tensor | None = None
        if isinstance(signal, Tensor):
            if not isinstance(graphon, StepGraphon):
                raise GraphDataError(
                    "signal: block values need a StepGraphon; pass a callable f(x) instead"
                )
            values = signal.to(torch.float64)
            values = values.unsqueeze(-1) if values.dim() == 1 else values
            if values.dim() != 2 or values.size(0) != graphon.num_blocks:
                raise GraphDataError(
                    f"signal: expected block values [K] or [K, C] with K = {graphon.num_blocks}, "
                    f"got shape {tuple(signal.shape)}"
                )
            if not bool(torch.isfinite(values).all()):
                raise GraphDataError(
                    f"signal: expected finite block values, got {values.flatten().tolist()[:8]} "
                    "(NaN or inf); replace them"
                )
            self.step_values = values  # [K, C]
            self.channels = values.size(1)
            self._fn = None
        elif callable(signal):
            self._fn = signal
            probe = signal(torch.linspace(0.0, 1.0, 17, dtype=torch.float64))
            if not isinstance(probe, Tensor) or probe.dim() not in (1, 2) or probe.size(0) != 17:
                got = tuple(probe.shape) if isinstance(probe, Tensor) else type(probe).__name__
                raise GraphDataError(
                    f"signal: f(x) for x of shape [17] must return [17] or [17, C], got {got}"
                )
            if not bool(torch.isfinite(probe).all()):
                raise GraphDataError(
                    "signal: expected f(x) finite on [0, 1], got NaN or inf on the 17-point "
                    "probe grid; fix the signal function"
                )
            self.channels = 1 if probe.dim() == 1 else probe.size(1)
        else:
            raise GraphDataError(f"signal: expected a callable or a tensor, got {signal!r}")

    def signal(self, x: Tensor) -> Tensor:
        """Evaluate :math:`f(x)`, shape ``[..., C]`` for points ``[...]``."""
        if self.step_values is not None:
            values = self.step_values.to(device=x.device, dtype=x.dtype)
            return values[self.graphon.block_of(x)]  # type: ignore[attr-defined]
        out = self._fn(x)  # type: ignore[misc]
        return out.unsqueeze(-1) if out.dim() == x.dim() else out

    def __repr__(self) -> str:
        return f"GraphonSignal({self.name!r}, channels={self.channels})"
