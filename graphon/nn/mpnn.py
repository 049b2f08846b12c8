r"""A mean-normalised message-passing baseline on PyG, fed from dense graph batches.

Herbst & Jegelka, "Higher-Order Graphon Neural Networks: Approximation and Cut Distance", ICLR
2025, arXiv 2503.14338, Appendix H (dan1elherbst/Higher-Order-WNNs ``models/mpnn.py``): the
aggregation divides by the number of nodes :math:`n` of the graph, not by the degree, so the
layer is the graphon operator :math:`T_W` on the induced step graphon and the network converges
on W-random graphs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import torch
from torch import Tensor, nn
from torch_geometric.nn import MessagePassing

from graphdata.dense import DenseGraphBatch
from graphdata.errors import GraphDataError
from graphon.nn._common import ACTIVATIONS, check_common
from graphon.nn.inputs import check_batch

__all__ = ["MeanAggregationConv", "MPNN"]


class MeanAggregationConv(MessagePassing):
    r"""One message-passing layer with aggregation normalised by the graph's node count.

    .. math::
        h'_i = W \Big(\frac{1}{n}\sum_{j} A_{ij}\, h_j\Big) + b \;\big[+\, W_r h_i\big],

    with :math:`A_{ij}` the weight of edge :math:`j \to i` and :math:`n` the node count of the
    graph holding node :math:`i`; the root term :math:`W_r h_i` only with ``root_weight=True``
    (Herbst & Jegelka's layer has none; Levin et al.'s "simple GNN" has one).

    Args:
        in_channels: Input channels.
        out_channels: Output channels.
        root_weight: Add the root term. Default ``False``.

    Shapes:
        x: ``[V, in_channels]``; edge_index: ``[2, E]`` (row 0 source j, row 1 target i);
        edge_weight: ``[E]``; num_nodes: ``[V]`` (node count of each node's graph);
        output: ``[V, out_channels]``.

    Examples:
        >>> conv = MeanAggregationConv(1, 1)
        >>> edge_index = torch.tensor([[0, 1], [1, 0]])
        >>> out = conv(torch.ones(2, 1), edge_index, torch.ones(2), torch.full((2,), 2.0))
        >>> out.shape
        torch.Size([2, 1])
    """

    def __init__(self, in_channels: int, out_channels: int, *, root_weight: bool = False) -> None:
        super().__init__(aggr="sum")
        self.lin = nn.Linear(in_channels, out_channels)
        self.lin_root = nn.Linear(in_channels, out_channels, bias=False) if root_weight else None
        self.reset_parameters()

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Xavier-uniform weights (as the reference code), zero bias."""
        with torch.no_grad():
            for lin in (self.lin, self.lin_root):
                if lin is not None:
                    fan_in, fan_out = lin.in_features, lin.out_features
                    bound = (6.0 / (fan_in + fan_out)) ** 0.5
                    lin.weight.uniform_(-bound, bound, generator=generator)
            self.lin.bias.zero_()

    def forward(
        self, x: Tensor, edge_index: Tensor, edge_weight: Tensor, num_nodes: Tensor
    ) -> Tensor:
        """Aggregate, normalise by :math:`n`, transform (see the class docstring)."""
        aggregated = self.propagate(edge_index, x=x, edge_weight=edge_weight)  # [V, C]
        out = self.lin(aggregated / num_nodes.unsqueeze(-1).to(aggregated.dtype))
        if self.lin_root is not None:
            out = out + self.lin_root(x)
        return out

    def forward_dense(self, x: Tensor, adj: Tensor, num_nodes: Tensor) -> Tensor:
        r"""The same layer on a dense batch: :math:`W (A h) / n + b\ [+ W_r h]`.

        Args:
            x: Node states ``[B, N, C_in]``.
            adj: Adjacency ``[B, N, N]``, ``adj[b, i, j]`` the weight of edge :math:`j \to i`.
            num_nodes: Node counts ``[B]``.

        Returns:
            ``[B, N, C_out]``.
        """
        aggregated = adj @ x / num_nodes.view(-1, 1, 1).to(x.dtype)  # [B, N, C_in]
        out = self.lin(aggregated)
        if self.lin_root is not None:
            out = out + self.lin_root(x)
        return out

    def message(self, x_j: Tensor, edge_weight: Tensor) -> Tensor:
        r"""The message of edge :math:`j \to i`: :math:`A_{ij} h_j` (PyG's ``x_j`` contract)."""
        return edge_weight.unsqueeze(-1) * x_j


def dense_to_edges(batch: DenseGraphBatch) -> tuple[Tensor, Tensor, Tensor]:
    """Flatten a dense batch to one block-diagonal PyG graph over ``B * N`` slots.

    Returns:
        ``edge_index`` ``[2, E]`` (source ``b*N + j``, target ``b*N + i`` for each non-zero
        ``adj[b, i, j]``), ``edge_weight`` ``[E]`` and per-slot node counts ``[B * N]``.
    """
    bsz, n = batch.mask.shape
    b, i, j = batch.adj.nonzero(as_tuple=True)
    edge_index = torch.stack([b * n + j, b * n + i])  # [2, E]: message j -> i
    counts = batch.num_nodes.repeat_interleave(n)  # [B * N]
    return edge_index, batch.adj[b, i, j], counts


class MPNN(nn.Module):
    r"""Mean-normalised MPNN with mean pooling (Herbst & Jegelka's baseline, Appendix H).

    .. math::
        h^{(0)} = x, \qquad h^{(t)} = \sigma\big(\mathrm{Conv}_t(h^{(t-1)})\big)\ (t < T),
        \qquad y = \mathrm{MLP}\Big(\frac{1}{n}\sum_i \mathrm{Conv}_T(h^{(T-1)})_i\Big),

    with :class:`MeanAggregationConv` layers; the node task skips the pooling. A graph
    without signals (``in_channels = 0``) carries the constant signal 1. Every aggregation is a
    mean over the graph's nodes, so the output on a graph equals that on its m-fold blow-up.

    Args:
        in_channels: Node-signal channels :math:`F` (0: the constant signal).
        hidden_channels: Hidden channels. Default ``16``.
        out_channels: Output channels. Default ``1``.
        num_layers: Layers :math:`T`. Default ``2``.
        activation: ``"sigmoid"`` (default), ``"relu"`` or ``"tanh"``.
        task: ``"graph"`` (default) or ``"node"``.
        mlp_hidden: Width of an MLP head :math:`\mathrm{Linear}\circ\sigma` (the last conv then
            outputs ``mlp_hidden`` channels). Default None (identity).
        root_weight: Root term in every layer. Default ``False``.
        aggregation: ``"dense"`` (default; one batched ``A @ h``, fastest on dense graphs) or
            ``"edges"`` (PyG ``propagate`` over the non-zero entries, for sparse graphs); both
            compute the same function.

    Shapes:
        output: ``[B, out_channels]`` or ``[B, N, out_channels]`` (zero on padding).

    Examples:
        >>> from graphdata.dense import DenseGraphBatch
        >>> batch = DenseGraphBatch.from_adjacency([torch.ones(3, 3), torch.ones(2, 2)])
        >>> MPNN(0)(batch).shape
        torch.Size([2, 1])
    """

    def __init__(
        self,
        in_channels: int,
        hidden_channels: int = 16,
        out_channels: int = 1,
        *,
        num_layers: int = 2,
        activation: str = "sigmoid",
        task: str = "graph",
        mlp_hidden: int | None = None,
        root_weight: bool = False,
        aggregation: str = "dense",
    ) -> None:
        super().__init__()
        if aggregation not in ("dense", "edges"):
            raise GraphDataError(f"aggregation: expected 'dense' or 'edges', got {aggregation!r}")
        self.aggregation = aggregation
        check_common(
            in_channels, hidden_channels, out_channels, num_layers, activation, task, mlp_hidden
        )
        self.in_channels, self.out_channels = in_channels, out_channels
        self.task, self.activation = task, activation
        self._act = ACTIVATIONS[activation]
        last = out_channels if mlp_hidden is None else mlp_hidden
        widths = [max(in_channels, 1)] + [hidden_channels] * (num_layers - 1) + [last]
        self.convs = nn.ModuleList(
            MeanAggregationConv(widths[t], widths[t + 1], root_weight=root_weight)
            for t in range(num_layers)
        )
        self.head = None if mlp_hidden is None else nn.Linear(mlp_hidden, out_channels)

    @property
    def _layers(self) -> Sequence[MeanAggregationConv]:
        # nn.ModuleList is not generic; every entry is a MeanAggregationConv (see __init__).
        return cast("Sequence[MeanAggregationConv]", self.convs)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Re-draw every parameter."""
        for conv in self._layers:
            conv.reset_parameters(generator)
        if self.head is not None:
            bound = self.head.in_features**-0.5
            with torch.no_grad():
                self.head.weight.uniform_(-bound, bound, generator=generator)
                self.head.bias.zero_()

    def forward(self, batch: DenseGraphBatch) -> Tensor:
        """Evaluate on a batch: ``[B, out]`` (graph task) or ``[B, N, out]`` (node task)."""
        check_batch(batch, self.in_channels)
        param = next(self.parameters())
        mixed = batch.adj.dtype != param.dtype and not torch.is_autocast_enabled(param.device.type)
        if mixed or batch.adj.device != param.device:  # under autocast, matmuls mix dtypes
            raise GraphDataError(
                f"batch: expected dtype {param.dtype} on {param.device} (the model's parameters), "
                f"got {batch.adj.dtype} on {batch.adj.device}; convert one, e.g. "
                f"model.to(batch.adj.dtype), or build the batch from {param.dtype} tensors"
            )
        bsz, n = batch.mask.shape
        if batch.x is None:
            h = batch.mask.to(batch.adj.dtype).unsqueeze(-1)  # [B, N, 1]: the constant 1
        else:
            h = batch.x.to(batch.adj.dtype)  # [B, N, F]
        if self.aggregation == "dense":
            for t, conv in enumerate(self._layers):
                h = conv.forward_dense(h, batch.adj, batch.num_nodes)
                if t < len(self.convs) - 1:
                    h = self._act(h)
        else:
            edge_index, edge_weight, counts = dense_to_edges(batch)
            h = h.reshape(bsz * n, -1)  # [B*N, C]: one block-diagonal graph
            for t, conv in enumerate(self._layers):
                h = conv(h, edge_index, edge_weight, counts)
                if t < len(self.convs) - 1:
                    h = self._act(h)
            h = h.reshape(bsz, n, -1)  # [B, N, C]
        # Padding nodes have no edges but carry the bias: drop them.
        h = h * batch.mask.unsqueeze(-1).to(h.dtype)
        if self.task == "graph":
            out = h.sum(1) / batch.num_nodes.unsqueeze(-1).to(h.dtype)  # [B, C]
        else:
            out = h
        if self.head is not None:
            out = self.head(self._act(out))
            if self.task == "node":
                out = out * batch.mask.unsqueeze(-1).to(out.dtype)
        return out

    def extra_repr(self) -> str:
        """Task and activation, for ``repr``."""
        return (
            f"task={self.task!r}, activation={self.activation!r}, aggregation={self.aggregation!r}"
        )
