r"""Untrained-network convergence on W-random graphs (Herbst & Jegelka, Appendix H).

Herbst & Jegelka, "Higher-Order Graphon Neural Networks: Approximation and Cut Distance", ICLR
2025, arXiv 2503.14338, Figures 2-3: networks with random weights :math:`\theta \sim
\mathcal{N}(0, 1)`, shared by all graphs, evaluated on simple graphs :math:`\mathbb{G}(n, W)`
(grid latents) of growing :math:`n`. The mean absolute error to the output on the weighted
graph at the largest :math:`n` (the graphon value) vanishes for the MPNN and plateaus for the
IWN; the spread of outputs contracts for both (transferability). The IWN's plateau is the gap to
its Bernoulli lift (:func:`graphon.nn.bernoulli.bernoulli_lift`), which the sample means
approach instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor, nn

from graphdata.dense import DenseGraphBatch
from graphdata.errors import GraphDataError, UnknownLabelError
from graphon._validation import check_choice, check_int, check_real, check_seed
from graphon.families import make_graphon
from graphon.graphons import Graphon, GraphonSignal
from graphon.nn._common import ACTIVATIONS
from graphon.nn.bernoulli import bernoulli_lift
from graphon.nn.models import IWN, MODELS
from graphon.sampling import LATENTS, sample_graphs

__all__ = [
    "ConvergenceConfig",
    "ConvergenceCurve",
    "ConvergenceResult",
    "build_model",
    "randomize_parameters",
    "sample_batch",
    "untrained_convergence",
]


@dataclass(frozen=True)
class ConvergenceConfig:
    """Configuration of :func:`untrained_convergence`; defaults follow Appendix H."""

    sizes: tuple[int, ...] = (200, 400, 600, 800, 1000)  # graph sizes n (paper: 200..1000)
    samples: int = 100  # simple graphs per size (paper: 100)
    limit_size: int | None = None  # weighted-graph size of the "graphon" output; None: max(sizes)
    models: tuple[str, ...] = ("iwn", "ign", "mpnn")  # keys of graphon.nn.models.MODELS
    hidden_channels: int = 16  # paper: 16
    num_layers: int = 2  # paper: 2 (one hidden layer and the readout)
    activation: str = "sigmoid"  # paper: sigmoid
    weight_std: float = 1.0  # theta ~ N(0, weight_std^2), biases included (paper: N(0, 1))
    latents: str = "grid"  # x_i = i/n as in the paper's code; "uniform" for iid latents
    batch_size: int = 10  # graphs per forward pass (memory: batch * n^2 * hidden floats)
    dtype: torch.dtype = torch.float32  # float64 for tight comparisons

    def __post_init__(self) -> None:
        """Validate every field at construction (argument, expected, got, fix)."""
        _check_config(self)


@dataclass
class ConvergenceCurve:
    """Outputs of one model across sizes.

    Attributes:
        model: Model key.
        sizes: Graph sizes, length ``S``.
        outputs: Outputs on the sampled simple graphs, ``[S, R]``.
        limit: Output on the weighted graph of ``limit_size`` nodes (the graphon value).
        lift: The Bernoulli-lift prediction (order-2 IWN only), else None.
    """

    model: str
    sizes: list[int]
    outputs: Tensor
    limit: float
    lift: float | None = None

    @property
    def mae(self) -> Tensor:
        r"""Mean absolute error to the limit per size, :math:`\frac1R\sum_r |N(G_r) - N(W)|`."""
        return (self.outputs - self.limit).abs().mean(1)

    @property
    def spread(self) -> Tensor:
        """The output spread per size, quantile 0.9 minus quantile 0.1 (the paper's code)."""
        q = torch.quantile(self.outputs, torch.tensor([0.1, 0.9], dtype=self.outputs.dtype), dim=1)
        return q[1] - q[0]


@dataclass
class ConvergenceResult:
    """All curves of one run, with the configuration and graphon name."""

    graphon: str
    config: ConvergenceConfig
    curves: dict[str, ConvergenceCurve] = field(default_factory=dict)

    def table(self) -> str:
        """A markdown table: per model and size, mean, MAE to the limit, spread (and lift)."""
        lines = [
            f"graphon {self.graphon}: outputs of untrained networks on simple graphs",
            "",
            "| model | n | mean | MAE to limit | spread q.9-q.1 | limit | Bernoulli lift |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, curve in self.curves.items():
            lift = "-" if curve.lift is None else f"{curve.lift:.5f}"
            for s, n in enumerate(curve.sizes):
                lines.append(
                    f"| {name} | {n} | {float(curve.outputs[s].mean()):.5f} | "
                    f"{float(curve.mae[s]):.3e} | {float(curve.spread[s]):.3e} | "
                    f"{curve.limit:.5f} | {lift} |"
                )
        return "\n".join(lines)


def randomize_parameters(model: nn.Module, *, std: float = 1.0, generator: torch.Generator) -> None:
    r"""Draw every parameter of ``model`` i.i.d. :math:`\mathcal{N}(0, \mathrm{std}^2)` in place.

    Args:
        model: Any module; parameters are drawn in ``named_parameters`` order.
        std: Standard deviation. Default ``1.0`` (Herbst & Jegelka's untrained networks).
        generator: The generator (on the parameters' device).
    """
    check_real("std", std, low=0.0, low_open=True, fix="pass a positive standard deviation")
    with torch.no_grad():
        for _, param in model.named_parameters():
            param.normal_(0.0, std, generator=generator)


def build_model(name: str, in_channels: int, config: ConvergenceConfig, **kwargs: Any) -> nn.Module:
    """Build ``MODELS[name]`` with the configuration's width, depth and activation.

    Args:
        name: Key of :data:`graphon.nn.models.MODELS`.
        in_channels: Node-signal channels.
        config: Supplies ``hidden_channels``, ``num_layers`` and ``activation``.
        **kwargs: Further model arguments (``task``, ``mlp_hidden``, ...).

    Returns:
        The model (global-RNG initialisation; re-draw with a generator as needed).
    """
    if name not in MODELS:
        raise UnknownLabelError("model", name, MODELS, argument="models")
    return MODELS[name](
        in_channels,
        config.hidden_channels,
        1,
        num_layers=config.num_layers,
        activation=config.activation,
        **kwargs,
    )


def sample_batch(
    graphon: Graphon | GraphonSignal,
    n: int,
    batch_size: int,
    *,
    edges: str = "bernoulli",
    latents: str = "grid",
    generator: torch.Generator,
    dtype: torch.dtype = torch.float32,
) -> DenseGraphBatch:
    """Sample graphs from ``graphon`` as a :class:`DenseGraphBatch` (signal 1 if it has none).

    Args:
        graphon: A graphon or graphon-signal.
        n: Nodes per graph.
        batch_size: Graphs.
        edges: ``"bernoulli"`` (simple, loopless) or ``"weighted"`` (loopless weights).
        latents: Latent positions (see :func:`graphon.sampling.sample_latents`).
        generator: Generator for the draws (its device is used).
        dtype: Floating dtype. Default ``torch.float32``.

    Returns:
        The batch; ``x`` is ``[B, n, C]`` (``C = 1``, all ones, for a plain graphon).
    """
    sample = sample_graphs(
        graphon,
        n,
        batch_size=batch_size,
        latents=latents,
        edges=edges,
        generator=generator,
        dtype=dtype,
    )
    adj = sample.adj  # [B, n, n]
    x = sample.signal if sample.signal is not None else adj.new_ones(batch_size, n, 1)
    mask = torch.ones(batch_size, n, dtype=torch.bool, device=adj.device)
    return DenseGraphBatch(adj, x, mask)


def _as_graphon(graphon: Graphon | GraphonSignal | str) -> Graphon | GraphonSignal:
    if isinstance(graphon, str):
        return make_graphon(graphon)
    if not isinstance(graphon, (Graphon, GraphonSignal)):
        raise GraphDataError(
            f"graphon: expected a name, Graphon or GraphonSignal, got {type(graphon).__name__}"
        )
    return graphon


def _check_config(config: ConvergenceConfig) -> None:
    sizes: Sequence[int] = config.sizes
    if (
        not isinstance(sizes, (tuple, list))
        or not sizes
        or any(isinstance(n, bool) or not isinstance(n, int) or n < 2 for n in sizes)
    ):
        raise GraphDataError(
            f"config.sizes: expected a non-empty tuple of graph sizes >= 2, got {sizes!r}; pass "
            "e.g. sizes=(200, 400)"
        )
    check_int("config.samples", config.samples, 2)
    if config.limit_size is not None:
        check_int("config.limit_size", config.limit_size, 2)
    if isinstance(config.models, str) or not config.models:
        raise GraphDataError(
            f"config.models: expected a non-empty tuple of model keys, got {config.models!r}; "
            f"pass e.g. models=('iwn', 'mpnn') from {list(MODELS)}"
        )
    for name in config.models:
        if name not in MODELS:
            raise UnknownLabelError("model", name, MODELS, argument="config.models")
    check_int("config.hidden_channels", config.hidden_channels, 1)
    check_int("config.num_layers", config.num_layers, 1)
    if config.activation not in ACTIVATIONS:
        raise GraphDataError(
            f"config.activation: expected one of {list(ACTIVATIONS)}, got {config.activation!r}"
        )
    check_real(
        "config.weight_std",
        config.weight_std,
        low=0.0,
        low_open=True,
        fix="pass a positive standard deviation, e.g. 1.0 (the paper's)",
    )
    check_choice("config.latents", config.latents, LATENTS)
    check_int("config.batch_size", config.batch_size, 1)
    if not isinstance(config.dtype, torch.dtype) or not config.dtype.is_floating_point:
        raise GraphDataError(
            f"config.dtype: expected a floating torch dtype, got {config.dtype!r}; pass "
            "torch.float32 or torch.float64"
        )


@torch.no_grad()
def untrained_convergence(
    graphon: Graphon | GraphonSignal | str,
    config: ConvergenceConfig = ConvergenceConfig(),
    *,
    seed: int = 0,
    device: torch.device | str = "cpu",
) -> ConvergenceResult:
    r"""Outputs of untrained IWN, IGN and MPNN on simple graphs of growing size.

    For each model (weights :math:`\theta \sim \mathcal{N}(0, \mathrm{std}^2)` from ``seed``,
    shared by every graph) and each size :math:`n`, sample ``samples`` simple graphs
    :math:`G \sim \mathbb{G}(n, W)` and record :math:`N(G)`; the limit :math:`N(W)` is the output
    on the loopless weighted graph :math:`W(x_i, x_j)` of ``limit_size`` nodes. Then

    .. math::
        \mathrm{MAE}_n = \frac1R \sum_{r=1}^R |N(G_{n,r}) - N(W)|, \qquad
        \mathrm{spread}_n = q_{0.9}(N(G_{n,\cdot})) - q_{0.1}(N(G_{n,\cdot})),

    and, for an order-2 IWN, the Bernoulli lift (:func:`~graphon.nn.bernoulli.bernoulli_lift`)
    on the same weighted graph, the value the sample means approach.

    Args:
        graphon: A graphon, graphon-signal or a key of :data:`graphon.families.GRAPHONS`.
        config: The run's configuration. Default :class:`ConvergenceConfig` (the paper's).
        seed: Seeds the weights and the graphs, an int in ``[0, 2**64 - 1]`` (model ``i``'s
            generator gets ``(1000 seed + i) mod 2**64``). Default ``0``.
        device: Where to run. Default ``"cpu"``.

    Returns:
        A :class:`ConvergenceResult` (``table()`` gives markdown).

    Examples:
        >>> cfg = ConvergenceConfig(sizes=(20, 40), samples=3, models=("mpnn",))
        >>> result = untrained_convergence("erdos_renyi", cfg, seed=0)
        >>> tuple(result.curves["mpnn"].outputs.shape)
        (2, 3)
    """
    if not isinstance(config, ConvergenceConfig):
        raise GraphDataError(f"config: expected a ConvergenceConfig, got {type(config).__name__}")
    _check_config(config)
    check_seed("seed", seed)
    graphon = _as_graphon(graphon)
    name = graphon.name
    device = torch.device(device)
    limit_size = config.limit_size or max(config.sizes)
    result = ConvergenceResult(name, config)
    for index, model_name in enumerate(config.models):
        # One generator per model: adding a model does not change the others' draws.
        # Modulo 2**64: torch's seed range, which a seed near its top would overflow.
        gen = torch.Generator(device=device).manual_seed((seed * 1000 + index) % 2**64)
        channels = graphon.channels if isinstance(graphon, GraphonSignal) else 1
        with torch.random.fork_rng(devices=[]):  # redrawn from gen: leave the caller's RNG
            model = build_model(model_name, channels, config)
        model = model.to(device=device, dtype=config.dtype)
        randomize_parameters(model, std=config.weight_std, generator=gen)
        model.eval()
        outputs = []
        for n in config.sizes:
            values = []
            for start in range(0, config.samples, config.batch_size):
                count = min(config.batch_size, config.samples - start)
                batch = sample_batch(
                    graphon, n, count, latents=config.latents, generator=gen, dtype=config.dtype
                )
                values.append(model(batch)[:, 0].double().cpu())
            outputs.append(torch.cat(values))
        weighted = sample_batch(
            graphon,
            limit_size,
            1,
            edges="weighted",
            latents=config.latents,
            generator=gen,
            dtype=config.dtype,
        )
        limit = float(model(weighted)[0, 0])
        lift = None
        if isinstance(model, IWN) and model.order == 2:
            lift = float(bernoulli_lift(model, weighted.adj, weighted.x, weighted.mask)[0, 0])
        stacked = torch.stack(outputs)  # [S, R]
        finite = bool(torch.isfinite(stacked).all()) and math.isfinite(limit)
        if not finite or (lift is not None and not math.isfinite(lift)):
            bad = int((~torch.isfinite(stacked)).sum())
            raise GraphDataError(
                f"config.weight_std: model {model_name!r} with weights N(0, "
                f"{config.weight_std:g}^2) gave non-finite outputs ({bad} of {stacked.numel()} "
                f"sampled, limit {limit}); lower weight_std or use dtype=torch.float64"
            )
        result.curves[model_name] = ConvergenceCurve(
            model_name, list(config.sizes), stacked, limit, lift
        )
    return result
