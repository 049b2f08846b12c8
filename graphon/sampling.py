r"""W-random graphs :math:`\mathbb{G}(n, W)` and weighted graphs :math:`W[X]`, with signals.

Lovász & Szegedy, "Limits of dense graph sequences", J. Comb. Theory B 96 (2006),
DOI 10.1016/j.jctb.2006.05.002; with signals, Levie (NeurIPS 2023, arXiv 2305.15987). Every
choice is an explicit argument: the latent positions (``latents``), Bernoulli or weighted edges
(``edges``), with or without self-loops (``loops``). Randomness enters only through ``seed`` or
``generator``; tensors are created on ``device`` (or the generator's device).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from graphdata.device import make_generator
from graphdata.errors import GraphDataError
from graphon._validation import (
    check_choice,
    check_graphon_values,
    check_int,
    check_seed,
    check_signal_values,
)
from graphon.graphons import Graphon, GraphonSignal

__all__ = ["GraphSample", "sample_latents", "sample_graphs", "LATENTS", "EDGES"]

#: Latent positions: iid uniform, the left grid ``i/n`` (Herbst-Jegelka and Cai-Wang code), or
#: the midpoint grid ``(i + 1/2)/n`` (the midpoint rule).
LATENTS = ("uniform", "grid", "midpoint")
#: Edge models: 0/1 Bernoulli draws, or the weights ``W(x_i, x_j)`` themselves.
EDGES = ("bernoulli", "weighted")


@dataclass(frozen=True)
class GraphSample:
    """Sampled graphs with their latent positions and signals.

    Shapes:
        adj: ``[B, n, n]`` (``[n, n]`` when ``batch_size`` was ``None``); latents: ``[B, n]``;
        signal: ``[B, n, C]`` or ``None`` when the graphon carries no signal.
    """

    adj: Tensor
    latents: Tensor
    signal: Tensor | None


def _generator(
    seed: int | None, generator: torch.Generator | None, device: torch.device | str | None
) -> torch.Generator:
    if seed is not None and generator is not None:
        raise GraphDataError("seed, generator: pass at most one of them")
    check_seed("seed", seed)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise GraphDataError(
            f"generator: expected a torch.Generator, got {type(generator).__name__}; pass "
            "seed=... instead"
        )
    if generator is not None:
        if device is not None and torch.device(device) != generator.device:
            raise GraphDataError(
                f"device: {device} differs from the generator's device {generator.device}; drop "
                "the device argument or make the generator there"
            )
        return generator
    return make_generator(seed, "cpu" if device is None else device)


def _check_dtype(dtype: object) -> None:
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise GraphDataError(
            f"dtype: expected a floating torch dtype (latents and edge probabilities), got "
            f"{dtype!r}; pass torch.float32 or torch.float64"
        )


def sample_latents(
    n: int,
    *,
    batch_size: int | None = None,
    latents: str = "uniform",
    seed: int | None = None,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> Tensor:
    r"""Latent positions :math:`X_1, \dots, X_n \in [0, 1]`.

    .. math::
        \text{uniform: } X_i \overset{iid}{\sim} U[0,1], \qquad
        \text{grid: } x_i = \tfrac{i}{n}, \qquad
        \text{midpoint: } x_i = \tfrac{i + 1/2}{n}, \qquad i = 0, \dots, n - 1.

    Args:
        n: The number of nodes (``>= 1``).
        batch_size: Independent draws ``B``; ``None`` returns one unbatched vector.
        latents: ``"uniform"`` (default), ``"grid"`` or ``"midpoint"``. Uniform latents are
            sorted so that plots show block structure (the law of a graph is unchanged).
        seed: Seed of a fresh generator (``None`` with no generator: nondeterministic).
        generator: A generator to draw from (its device is used).
        device: Where to create tensors. Default: the generator's device, else ``"cpu"``.
        dtype: Floating dtype. Default ``torch.float32``.

    Returns:
        The latents, ``[B, n]`` or ``[n]``.

    Examples:
        >>> sample_latents(4, latents="midpoint").tolist()
        [0.125, 0.375, 0.625, 0.875]
    """
    check_int("n", n, 1)
    if batch_size is not None:
        check_int("batch_size", batch_size, 1)
    check_choice("latents", latents, LATENTS)
    _check_dtype(dtype)
    gen = _generator(seed, generator, device)
    dev = gen.device
    bsz = 1 if batch_size is None else batch_size
    if latents == "uniform":
        x = torch.rand(bsz, n, generator=gen, device=dev, dtype=dtype).sort(-1).values
    else:
        offset = 0.0 if latents == "grid" else 0.5
        x = ((torch.arange(n, device=dev, dtype=dtype) + offset) / n).expand(bsz, n).clone()
    return x if batch_size is not None else x[0]


def sample_graphs(
    graphon: Graphon | GraphonSignal,
    n: int,
    *,
    batch_size: int | None = None,
    latents: str = "uniform",
    edges: str = "bernoulli",
    loops: bool = False,
    seed: int | None = None,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> GraphSample:
    r"""Sample W-random graphs (and their signals) from a graphon or graphon-signal.

    .. math::
        \text{bernoulli: } A_{ij} = A_{ji} \sim \mathrm{Bernoulli}\big(W(X_i, X_j)\big)
        \ (i < j,\ \text{independent}), \qquad
        \text{weighted: } A_{ij} = W(X_i, X_j), \qquad x_i = f(X_i).

    The diagonal is :math:`0` when ``loops=False``; with ``loops=True`` it holds
    :math:`\mathrm{Bernoulli}(W(X_i, X_i))` draws (as the Higher-Order-WNNs code samples) or the
    weights :math:`W(X_i, X_i)` (the step graphon of the weighted graph then matches
    :math:`W` on the grid cells, diagonal cells included).

    Args:
        graphon: A :class:`Graphon` or a :class:`GraphonSignal`.
        n: Nodes per graph (``>= 1``).
        batch_size: The number of independent graphs ``B``; ``None`` returns one graph.
        latents: ``"uniform"`` (default, iid sorted), ``"grid"`` (``i/n``) or ``"midpoint"``.
        edges: ``"bernoulli"`` (default) or ``"weighted"``.
        loops: Keep the diagonal (see above). Default ``False``.
        seed: Seed of a fresh generator on ``device``. Default ``None`` (nondeterministic).
        generator: A generator; its device is used.
        device: Where to create tensors. Default: the generator's device, else ``"cpu"``.
        dtype: Floating dtype of all outputs. Default ``torch.float32``.

    Returns:
        A :class:`GraphSample`; ``signal`` is ``None`` for a plain graphon.

    Raises:
        GraphDataError: If the graphon returns values outside :math:`[0, 1]`, or an argument is
            invalid.

    Shapes:
        adj: ``[B, n, n]`` or ``[n, n]``; latents: ``[B, n]`` or ``[n]``; signal: ``[B, n, C]``
        or ``[n, C]``.

    Examples:
        >>> from graphon.families import erdos_renyi
        >>> s = sample_graphs(erdos_renyi(1.0), 3, seed=0)
        >>> s.adj.tolist()
        [[0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]]
    """
    if isinstance(graphon, GraphonSignal):
        w, with_signal = graphon.graphon, graphon
    elif isinstance(graphon, Graphon):
        w, with_signal = graphon, None
    else:
        raise GraphDataError(
            f"graphon: expected a Graphon or GraphonSignal, got {type(graphon).__name__}; see "
            "graphon.families.make_graphon"
        )
    check_int("n", n, 1)
    if batch_size is not None:
        check_int("batch_size", batch_size, 1)
    check_choice("edges", edges, EDGES)
    _check_dtype(dtype)
    if not isinstance(loops, bool):
        raise GraphDataError(f"loops: expected True or False, got {loops!r}")
    gen = _generator(seed, generator, device)
    x = sample_latents(
        n, batch_size=batch_size or 1, latents=latents, generator=gen, dtype=dtype
    )  # [B, n]
    probs = w.matrix(x)  # [B, n, n]
    check_graphon_values(
        probs, x.unsqueeze(-1), x.unsqueeze(-2), graphon=w.name, where="at the sampled latents"
    )
    if edges == "bernoulli":
        upper = torch.rand(probs.shape, generator=gen, device=gen.device, dtype=dtype) < probs
        upper = torch.triu(upper, diagonal=0 if loops else 1).to(dtype)
        adj = upper + torch.triu(upper, diagonal=1).mT
    else:
        adj = probs if loops else probs * (1 - torch.eye(n, device=probs.device, dtype=dtype))
    signal = None
    if with_signal is not None:
        signal = with_signal.signal(x).to(dtype)  # [B, n, C]
        check_signal_values(signal, x, graphon=with_signal.name, where="at the sampled latents")
    if batch_size is None:
        return GraphSample(adj[0], x[0], None if signal is None else signal[0])
    return GraphSample(adj, x, signal)
