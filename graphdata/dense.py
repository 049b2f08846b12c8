r"""Dense graph batches: padded adjacency ``[B, N, N]``, node signals ``[B, N, C]`` and a mask.

Invariant and graphon networks (``graphon.nn``) consume graphs as dense tensors. A
:class:`DenseGraphBatch` pads graphs of different sizes to the largest one, ``N = max_b n_b``,
with a boolean node mask; every padding entry of ``adj`` and ``x`` is zero. The adjacency follows
PyG's ``to_dense_adj`` convention: an edge ``(s, t)`` with weight ``w`` is ``adj[b, s, t] = w``
(row = source), and parallel edges are summed.

.. math::
    A_{b,st} = \sum_{e:\,(s_e, t_e) = (s, t)} w_e, \qquad
    M_{b,i} = [\, i < n_b \,], \qquad A_{b,st} = 0 \text{ unless } M_{b,s} M_{b,t}.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import torch
from torch import Tensor

from graphdata.errors import GraphDataError
from graphdata.typing import DeviceLike

if TYPE_CHECKING:
    # Only the conversions need them; they import them when called, so that graphon.nn and
    # everything else batching dense graphs loads neither networkx nor PyG.
    import networkx as nx
    from torch_geometric.data import Data

__all__ = ["DenseGraph", "DenseGraphBatch"]


class DenseGraph(NamedTuple):
    """One graph of a :class:`DenseGraphBatch`, cut to its own ``n`` nodes.

    Attributes:
        adj: Adjacency ``[n, n]``, ``adj[s, t]`` the weight of edge ``s -> t``.
        x: Node signals ``[n, C]``, or None.
    """

    adj: Tensor
    x: Tensor | None


@dataclass(frozen=True, eq=False)  # eq=False: `==` on tensors has no single truth value
class DenseGraphBatch:
    r"""A batch of B graphs as zero-padded dense tensors with a node mask.

    .. math::
        \mathrm{mask}_{b,i} = [\, i < n_b \,], \qquad
        \mathrm{adj}_{b,st} = \mathrm{x}_{b,s,c} = 0 \ \text{ for } s \ge n_b \text{ or }
        t \ge n_b,

    where :math:`n_b` is the number of nodes of graph b. Node i of graph b keeps its index i.
    Build batches with :meth:`from_adjacency`, :meth:`from_pyg` or :meth:`from_networkx`; the
    constructor checks shapes, not values.

    Args:
        adj: Floating adjacency, ``adj[b, s, t]`` the (summed) weight of edge ``s -> t``.
        x: Node signals, or None.
        mask: Boolean node mask, True for real nodes (a prefix of each row).

    Shapes:
        adj: ``[B, N, N]``; x: ``[B, N, C]``; mask: ``[B, N]``; num_nodes: ``[B]``.

    Examples:
        >>> path = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
        >>> batch = DenseGraphBatch.from_adjacency([path, torch.zeros(3, 3)])
        >>> batch.adj.shape, batch.num_nodes
        (torch.Size([2, 3, 3]), tensor([2, 3]))
        >>> batch.mask
        tensor([[ True,  True, False],
                [ True,  True,  True]])
    """

    adj: Tensor
    x: Tensor | None
    mask: Tensor

    def __post_init__(self) -> None:
        adj, x, mask = self.adj, self.x, self.mask
        if adj.dim() != 3 or adj.shape[1] != adj.shape[2] or not adj.is_floating_point():
            raise GraphDataError(
                f"adj: expected a floating tensor [B, N, N], got shape {tuple(adj.shape)} "
                f"and dtype {adj.dtype}"
            )
        if mask.dtype != torch.bool or mask.shape != adj.shape[:2]:
            raise GraphDataError(
                f"mask: expected a bool tensor [B, N] = {list(adj.shape[:2])}, got shape "
                f"{tuple(mask.shape)} and dtype {mask.dtype}"
            )
        if x is not None and (x.dim() != 3 or x.shape[:2] != adj.shape[:2]):
            raise GraphDataError(
                f"x: expected a tensor [B, N, C] with [B, N] = {list(adj.shape[:2])}, got "
                f"shape {tuple(x.shape)}"
            )
        devices = {adj.device, mask.device} | ({x.device} if x is not None else set())
        if len(devices) > 1:
            raise GraphDataError(
                f"adj, x, mask: expected one device, got {sorted(map(str, devices))}"
            )

    # ---------------------------------------------------------------- constructors

    @classmethod
    def from_adjacency(
        cls,
        adjs: Sequence[Tensor],
        x: Sequence[Tensor] | None = None,
        *,
        dtype: torch.dtype | None = None,
    ) -> DenseGraphBatch:
        """Pad a list of square adjacency matrices (weighted allowed) into a batch.

        Args:
            adjs: B adjacency matrices ``[n_b, n_b]`` on one device, ``n_b >= 1``; integer and
                boolean matrices are cast to ``dtype``.
            x: B node-signal matrices ``[n_b, C]`` with one C, or None (default).
            dtype: Float dtype of ``adj``; None (default) keeps a floating ``adjs[0].dtype``,
                else the default float dtype. ``x`` keeps its floating dtype likewise.

        Returns:
            The padded batch.

        Raises:
            GraphDataError: On an empty list, a non-square or empty matrix, mixed devices,
                ``x`` that does not match ``adjs`` in length, node counts or C, a NaN or inf
                entry, or a non-floating ``dtype``.
        """
        adjs = _nonempty_list(adjs, "adjs")
        mats = [torch.as_tensor(a) for a in adjs]
        for b, a in enumerate(mats):
            if a.dim() != 2 or a.shape[0] != a.shape[1] or a.shape[0] == 0:
                raise GraphDataError(
                    f"adjs[{b}]: expected a square matrix [n, n] with n >= 1, got shape "
                    f"{tuple(a.shape)}"
                )
            _check_finite(a, f"adjs[{b}]")
        sizes = [a.shape[0] for a in mats]
        device = _one_device(mats, "adjs")
        dtype = _check_dtype(dtype) or _float_dtype(mats[0])
        out = torch.zeros(len(mats), max(sizes), max(sizes), dtype=dtype, device=device)
        for b, a in enumerate(mats):
            out[b, : sizes[b], : sizes[b]] = a.to(dtype)
        return cls(out, _pad_signals(x, sizes, device, "x"), _mask(sizes, device))

    @classmethod
    def from_pyg(
        cls,
        data_list: Sequence[Data],
        *,
        edge_weight: str | None = None,
        dtype: torch.dtype | None = None,
    ) -> DenseGraphBatch:
        """Batch PyG ``Data`` objects (``edge_index``, ``num_nodes``, optional ``x``).

        Args:
            data_list: B graphs with ``n_b >= 1`` nodes each; set ``num_nodes`` explicitly when
                trailing nodes are isolated. Either all or none carry ``x`` ``[n_b, C]``.
            edge_weight: Name of a ``[E_b]`` edge attribute holding weights, e.g.
                ``"edge_weight"``; None (default) gives every edge weight 1. Parallel edges sum.
            dtype: Float dtype of ``adj``; None (default) keeps a floating weight dtype, else
                the default float dtype.

        Returns:
            The padded batch with ``adj[b, s, t]`` summed over edges ``s -> t``.

        Raises:
            GraphDataError: On an empty list, a graph with no nodes, a bad ``edge_index`` or
                weight attribute, ``x`` present on only some graphs, a NaN or inf weight or
                signal, or a non-floating ``dtype``.
        """
        data_list = _nonempty_list(data_list, "data_list")
        sizes, indices, weights = [], [], []
        for b, data in enumerate(data_list):
            n = data.num_nodes
            if n is None or n < 1:
                raise GraphDataError(
                    f"data_list[{b}]: expected a graph with num_nodes >= 1, got {n}"
                )
            ei = data.edge_index
            if ei is None:
                ei = torch.zeros(2, 0, dtype=torch.long)
            if (
                ei.dim() != 2
                or ei.shape[0] != 2
                or ei.is_floating_point()
                or ei.is_complex()
                or ei.dtype == torch.bool
            ):
                raise GraphDataError(
                    f"data_list[{b}].edge_index: expected an integer tensor [2, E], got shape "
                    f"{tuple(ei.shape)} and dtype {ei.dtype}"
                )
            ei = ei.long()  # uint8/int32 ids: uint8 would index as a mask
            if ei.numel() and (int(ei.min()) < 0 or int(ei.max()) >= n):
                raise GraphDataError(
                    f"data_list[{b}].edge_index: expected node ids in [0, {n}) (num_nodes = "
                    f"{n}), got range [{int(ei.min())}, {int(ei.max())}]; set num_nodes"
                )
            sizes.append(n)
            indices.append(ei)
            weights.append(_edge_weights(data, b, edge_weight, ei.shape[1]))
        device = _one_device(indices, "data_list edge_index")
        dtype = _check_dtype(dtype) or _float_dtype(weights[0])
        n_max = max(sizes)
        adj = torch.zeros(len(sizes), n_max, n_max, dtype=dtype, device=device)  # [B, N, N]
        for b, (ei, w) in enumerate(zip(indices, weights)):
            value = torch.ones(ei.shape[1], dtype=dtype, device=device) if w is None else w
            graph = torch.full_like(ei[0], b)
            # accumulate=True sums parallel edges, as to_dense_adj does.
            adj.index_put_((graph, ei[0], ei[1]), value.to(device=device, dtype=dtype), True)
        xs = [data.x for data in data_list]
        if any(v is None for v in xs) and not all(v is None for v in xs):
            missing = [b for b, v in enumerate(xs) if v is None]
            raise GraphDataError(
                f"data_list: expected x on all graphs or on none, got no x on graphs {missing}"
            )
        x = None if xs[0] is None else _pad_signals(xs, sizes, device, "data_list[].x")
        return cls(adj, x, _mask(sizes, device))

    @classmethod
    def from_networkx(
        cls,
        graphs: Sequence[nx.Graph],
        *,
        weight: str | None = "weight",
        node_attr: str | None = None,
        dtype: torch.dtype | None = None,
    ) -> DenseGraphBatch:
        """Batch networkx graphs; node i of graph b is the i-th node of ``graph.nodes``.

        Undirected graphs give symmetric ``adj``; directed edges ``u -> v`` fill
        ``adj[b, u, v]``; multigraph edges sum (``networkx.to_numpy_array`` semantics). Node
        labels are not kept: :meth:`to_networkx` numbers nodes ``0..n_b-1``.

        Args:
            graphs: B networkx graphs (``Graph``, ``DiGraph`` or multigraphs), ``n_b >= 1``.
            weight: Edge attribute holding the weight (default ``"weight"``; edges without it
                weigh 1); None gives every edge weight 1.
            node_attr: Node attribute holding a number or a length-C sequence, stacked into
                ``x`` ``[n_b, C]``; None (default) gives ``x = None``.
            dtype: Float dtype of ``adj`` and ``x``; None (default) the default float dtype.

        Returns:
            The padded batch, on the CPU.

        Raises:
            GraphDataError: On an empty list, a graph without nodes, a node missing
                ``node_attr`` or with a signal of another length, a non-numeric, NaN or inf
                weight or signal, or a non-floating ``dtype``.
        """
        import networkx as nx

        graphs = _nonempty_list(graphs, "graphs")
        dtype = _check_dtype(dtype) or torch.get_default_dtype()
        mats, signals = [], []
        for b, graph in enumerate(graphs):
            if graph.number_of_nodes() == 0:
                raise GraphDataError(f"graphs[{b}]: expected a graph with >= 1 node, got none")
            nodes = list(graph.nodes)
            try:
                adj = nx.to_numpy_array(graph, nodelist=nodes, weight=weight)
            except (TypeError, ValueError) as err:
                raise GraphDataError(
                    f"weight: expected numeric {weight!r} edge attributes in graphs[{b}], got "
                    f"one that is not ({err}); fix the attribute or pass weight=None"
                ) from None
            mats.append(torch.from_numpy(adj))
            _check_finite(mats[-1], f"graphs[{b}] (edge attribute {weight!r})")
            if node_attr is not None:
                signals.append(_node_signals(graph, nodes, node_attr, b))
        batch = cls.from_adjacency(mats, signals or None, dtype=dtype)
        x = None if batch.x is None else batch.x.to(dtype)
        return cls(batch.adj, x, batch.mask)

    # ---------------------------------------------------------------- conversions back

    def to_pyg(self, *, edge_weight: str | None = "edge_weight") -> list[Data]:
        """Convert back to PyG ``Data``: one edge per non-zero entry of ``adj``.

        Zero-weight edges vanish (the dense form cannot store them); summed parallel edges
        come back as one edge. Edges are listed by source, then target.

        Args:
            edge_weight: Attribute name for the ``[E]`` weights (default ``"edge_weight"``);
                None stores no weights.

        Returns:
            B ``Data`` objects with ``edge_index`` ``[2, E_b]``, ``num_nodes = n_b``, ``x``
            ``[n_b, C]`` when the batch has signals, and the weights.
        """
        from torch_geometric.data import Data

        out = []
        for b, n in enumerate(self.num_nodes.tolist()):
            a = self.adj[b, :n, :n]
            edge_index = a.nonzero().t()  # [2, E], row-major: by source, then target
            data = Data(edge_index=edge_index, num_nodes=n)
            if self.x is not None:
                data.x = self.x[b, :n]
            if edge_weight is not None:
                data[edge_weight] = a[edge_index[0], edge_index[1]]
            out.append(data)
        return out

    def to_networkx(
        self,
        *,
        directed: bool = False,
        weight: str | None = "weight",
        node_attr: str | None = None,
    ) -> list[nx.Graph]:
        """Convert back to networkx graphs with nodes ``0..n_b-1`` (isolated ones included).

        Args:
            directed: Build ``nx.DiGraph`` (edge ``s -> t`` per non-zero ``adj[b, s, t]``);
                False (default) builds ``nx.Graph`` and requires a symmetric ``adj``.
            weight: Edge attribute to store the weight in (default ``"weight"``); None stores
                none.
            node_attr: Node attribute to store ``x[b, i]`` in, as a list of C floats; None
                (default) stores none.

        Returns:
            B networkx graphs.

        Raises:
            GraphDataError: If ``directed`` is False and a graph's ``adj`` is not symmetric, or
                ``node_attr`` is given for a batch without ``x``.
        """
        import networkx as nx

        if node_attr is not None and self.x is None:
            raise GraphDataError(
                f"node_attr: the batch has no node signals x to store as {node_attr!r}; "
                "pass node_attr=None"
            )
        x = self.x
        graphs = []
        for b, n in enumerate(self.num_nodes.tolist()):
            a = self.adj[b, :n, :n].detach().cpu()
            if not directed and not torch.equal(a, a.t()):
                raise GraphDataError(
                    f"directed: graph {b} has a non-symmetric adjacency, which nx.Graph "
                    "cannot hold; pass directed=True"
                )
            graph = nx.DiGraph() if directed else nx.Graph()
            graph.add_nodes_from(range(n))
            if node_attr is not None and x is not None:  # x is None raised above
                rows = x[b, :n].detach().cpu().tolist()
                nx.set_node_attributes(graph, dict(enumerate(rows)), node_attr)
            src, dst = (a if directed else torch.triu(a)).nonzero(as_tuple=True)
            values = a[src, dst].tolist()
            for s, t, w in zip(src.tolist(), dst.tolist(), values):
                graph.add_edge(s, t, **({weight: w} if weight is not None else {}))
            graphs.append(graph)
        return graphs

    # ---------------------------------------------------------------- container protocol

    @property
    def num_nodes(self) -> Tensor:
        """Nodes per graph, ``LongTensor [B]``."""
        return self.mask.sum(dim=1)

    @property
    def device(self) -> torch.device:
        """The device of the tensors."""
        return self.adj.device

    def to(self, device: DeviceLike) -> DenseGraphBatch:
        """Return a copy of the batch on ``device``."""
        x = None if self.x is None else self.x.to(device)
        return DenseGraphBatch(self.adj.to(device), x, self.mask.to(device))

    def __len__(self) -> int:
        return self.adj.shape[0]

    def __getitem__(self, index: int | slice) -> DenseGraph | DenseGraphBatch:
        """Graph ``index`` cut to its nodes (a :class:`DenseGraph`), or a sub-batch for a slice."""
        if isinstance(index, slice):
            x = None if self.x is None else self.x[index]
            return DenseGraphBatch(self.adj[index], x, self.mask[index])
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise GraphDataError(f"index: expected an int or a slice, got {type(index).__name__}")
        if not -len(self) <= index < len(self):
            raise IndexError(f"index: expected -{len(self)} <= index < {len(self)}, got {index}")
        n = int(self.mask[index].sum())
        x = None if self.x is None else self.x[index, :n]
        return DenseGraph(self.adj[index, :n, :n], x)


def _nonempty_list(items: Sequence, name: str) -> list:
    if isinstance(items, (Tensor, np.ndarray)) or not isinstance(items, Sequence):
        raise GraphDataError(f"{name}: expected a list of graphs, got {type(items).__name__}")
    if len(items) == 0:
        raise GraphDataError(f"{name}: expected at least one graph, got an empty list")
    return list(items)


def _float_dtype(t: Tensor | None) -> torch.dtype:
    return t.dtype if t is not None and t.is_floating_point() else torch.get_default_dtype()


def _one_device(tensors: Sequence[Tensor], name: str) -> torch.device:
    devices = {t.device for t in tensors}
    if len(devices) > 1:
        raise GraphDataError(f"{name}: expected one device, got {sorted(map(str, devices))}")
    return tensors[0].device


def _check_finite(t: Tensor, name: str) -> None:
    """Refuse NaN or inf entries: they would spread into every result computed from the batch."""
    if (t.is_floating_point() or t.is_complex()) and not bool(torch.isfinite(t).all()):
        count = int((~torch.isfinite(t)).sum())
        raise GraphDataError(
            f"{name}: expected finite values, got {count} NaN or inf entries; drop or impute "
            "them first"
        )


def _check_dtype(dtype: torch.dtype | None) -> torch.dtype | None:
    if dtype is not None and (not isinstance(dtype, torch.dtype) or not dtype.is_floating_point):
        raise GraphDataError(
            f"dtype: expected None or a floating torch dtype (e.g. torch.float32), got {dtype!r}"
        )
    return dtype


def _mask(sizes: Sequence[int], device: torch.device) -> Tensor:
    n = torch.tensor(sizes, device=device)
    return torch.arange(max(sizes), device=device) < n[:, None]  # [B, N]


def _pad_signals(
    xs: Sequence[Tensor] | None, sizes: Sequence[int], device: torch.device, name: str
) -> Tensor | None:
    """Stack per-graph signals ``[n_b, C]`` into a zero-padded ``[B, N, C]``."""
    if xs is None:
        return None
    if isinstance(xs, Tensor) or len(xs) != len(sizes):
        got = "a tensor" if isinstance(xs, Tensor) else f"{len(xs)} entries"
        raise GraphDataError(
            f"{name}: expected a list of {len(sizes)} matrices [n_b, C], got {got}"
        )
    xs = [torch.as_tensor(v) for v in xs]
    channels = xs[0].shape[-1] if xs[0].dim() == 2 else None
    for b, (v, n) in enumerate(zip(xs, sizes)):
        if v.dim() != 2 or v.shape[0] != n or v.shape[1] != channels:
            hint = " (for one channel use x.unsqueeze(-1))" if v.dim() == 1 else ""
            raise GraphDataError(
                f"{name}[{b}]: expected node signals [n_b, C] = [{n}, {channels}], got shape "
                f"{tuple(v.shape)}{hint}"
            )
        _check_finite(v, f"{name}[{b}]")
    assert channels is not None  # the loop raised unless xs[0] is [n_0, C]
    _one_device([*xs, torch.empty(0, device=device)], name)
    dtype = _float_dtype(xs[0])
    out = torch.zeros(len(xs), max(sizes), channels, dtype=dtype, device=device)  # [B, N, C]
    for b, v in enumerate(xs):
        out[b, : sizes[b]] = v.to(dtype)
    return out


def _edge_weights(data: Data, b: int, name: str | None, num_edges: int) -> Tensor | None:
    if name is None:
        return None
    w = data[name] if name in data else None
    if w is None:
        raise GraphDataError(
            f"edge_weight: graph data_list[{b}] has no attribute {name!r}; pass the name of a "
            "[E] weight attribute or edge_weight=None"
        )
    if w.shape != (num_edges,):
        raise GraphDataError(
            f"data_list[{b}].{name}: expected edge weights [E] = [{num_edges}], got shape "
            f"{tuple(w.shape)}"
        )
    _check_finite(w, f"data_list[{b}].{name}")
    return w


def _node_signals(graph: nx.Graph, nodes: list, attr: str, b: int) -> Tensor:
    rows = []
    for node in nodes:
        if attr not in graph.nodes[node]:
            raise GraphDataError(
                f"node_attr: node {node!r} of graphs[{b}] has no attribute {attr!r}"
            )
        rows.append(np.atleast_1d(np.asarray(graph.nodes[node][attr], dtype=np.float64)))
    lengths = {len(r) for r in rows}
    if len(lengths) != 1:
        raise GraphDataError(
            f"node_attr: expected one signal length per graph, got lengths {sorted(lengths)} "
            f"in graphs[{b}]"
        )
    return torch.from_numpy(np.stack(rows))  # [n, C]
