r"""Knowledge-graph triples with stable entity and relation vocabularies.

A knowledge graph is a set of triples :math:`(h, r, t) \in \mathcal{E} \times \mathcal{R} \times
\mathcal{E}`. A :class:`Vocabulary` maps labels to the ids :math:`0, \dots, n-1`; a
:class:`TripleSet` holds the *mapped* triples as a ``LongTensor [N, 3]`` with columns head,
relation, tail (PyKEEN's ``mapped_triples``) next to its entity and relation vocabularies; a
:class:`graphdata.triples.KGDataset` holds train/valid/test triple sets sharing one vocabulary.

**Id convention.** Vocabularies built from data list their labels sorted
(:func:`graphdata.vocabulary.sort_labels`): by Unicode code point, as PyKEEN's ``TriplesFactory``
does, except that labels that are all plain integers sort by value (``"2"`` before ``"10"``), so
the same labels always get the same ids whatever order the triples arrive in. A dataset's
vocabulary is built from its *training* triples, or read from id maps (:mod:`graphdata.formats`).

**Conversions.** :meth:`TripleSet.to_pyg` gives a homogeneous PyG ``Data`` with ``edge_type``;
:meth:`TripleSet.to_hetero_data` a ``HeteroData`` with one edge type per relation;
:mod:`graphdata.pykeen` converts to and from PyKEEN's ``TriplesFactory``.

**Inverse (reciprocal) relations** (Lacroix et al., "Canonical Tensor Decomposition for Knowledge
Base Completion", ICML 2018, arXiv 1806.07297; Dettmers et al., ConvE, arXiv 1707.01476): for
:math:`R` relations, the inverse of relation id :math:`r` gets id :math:`r + R` and the label
``f"{label}_inverse"``, and every triple :math:`(h, r, t)` gains :math:`(t, r + R, h)`, appended
after the original triples. Head prediction for :math:`(?, r, t)` becomes tail prediction for
:math:`(t, r + R, ?)`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Literal

import torch
from torch import Tensor

from graphdata._labels import (
    _as_labeled,
    _entity_labels,
    _inverse_vocabulary,
    _map,
    _raise_unknown,
    _with_inverse,
)
from graphdata._tsv import read_labeled_triples, write_labeled_triples
from graphdata.errors import GraphDataError
from graphdata.typing import LabeledTriple
from graphdata.vocabulary import Vocabulary

if TYPE_CHECKING:
    import networkx as nx
    from torch_geometric.data import Data, HeteroData

__all__ = ["TripleSet"]

_ON_UNKNOWN = ("raise", "drop")


class TripleSet:
    r"""Mapped knowledge-graph triples with their entity and relation vocabularies.

    Args:
        mapped_triples: ``LongTensor [N, 3]`` of ids, columns head, relation, tail.
        entities: The entity vocabulary (head and tail ids index it).
        relations: The relation vocabulary.

    Shapes:
        - mapped_triples: :math:`[N, 3]`, ``int64``, ``0 <= h, t < num_entities`` and
          ``0 <= r < num_relations``.

    Raises:
        GraphDataError: On a wrong shape or dtype, or an id outside its vocabulary.

    Examples:
        >>> ts = TripleSet.from_labeled_triples([("ann", "parent", "bob"), ("bob", "parent", "cy")])
        >>> ts.mapped_triples
        tensor([[0, 0, 1],
                [1, 0, 2]])
        >>> ts.entities.labels, ts.num_relations, len(ts)
        (('ann', 'bob', 'cy'), 1, 2)
        >>> ts.with_inverse_relations().to_labeled_triples()[2]
        ('bob', 'parent_inverse', 'ann')
    """

    def __init__(self, mapped_triples: Tensor, entities: Vocabulary, relations: Vocabulary) -> None:
        if not isinstance(entities, Vocabulary) or not isinstance(relations, Vocabulary):
            raise GraphDataError(
                f"entities, relations: expected Vocabulary objects, got "
                f"{type(entities).__name__} and {type(relations).__name__}"
            )
        if (
            not isinstance(mapped_triples, Tensor)
            or mapped_triples.dim() != 2
            or (mapped_triples.shape[1] != 3)
        ):
            shape = tuple(mapped_triples.shape) if isinstance(mapped_triples, Tensor) else None
            raise GraphDataError(
                f"mapped_triples: expected a LongTensor [N, 3] (head, relation, tail), got "
                f"{type(mapped_triples).__name__} of shape {shape}"
            )
        dtype = mapped_triples.dtype
        if dtype.is_floating_point or dtype.is_complex or dtype == torch.bool:
            raise GraphDataError(
                f"mapped_triples: expected integer ids, got dtype {mapped_triples.dtype}"
            )
        mapped_triples = mapped_triples.long()
        if mapped_triples.numel():
            low = mapped_triples.amin(dim=0).tolist()
            high = mapped_triples.amax(dim=0).tolist()
            bounds = (len(entities), len(relations), len(entities))
            for column, name in enumerate(("head", "relation", "tail")):
                if low[column] < 0 or high[column] >= bounds[column]:
                    raise GraphDataError(
                        f"mapped_triples: expected {name} ids in [0, {bounds[column]}), got min "
                        f"{low[column]} and max {high[column]}"
                    )
        self.mapped_triples = mapped_triples
        self.entities = entities
        self.relations = relations

    @property
    def num_entities(self) -> int:
        """The number of entities (size of the entity vocabulary)."""
        return len(self.entities)

    @property
    def num_relations(self) -> int:
        """The number of relations (size of the relation vocabulary)."""
        return len(self.relations)

    @property
    def device(self) -> torch.device:
        """The device of :attr:`mapped_triples`."""
        return self.mapped_triples.device

    def __len__(self) -> int:
        return self.mapped_triples.shape[0]

    def __repr__(self) -> str:
        return (
            f"TripleSet({len(self)} triples, {self.num_entities} entities, "
            f"{self.num_relations} relations, device={self.device})"
        )

    def to(self, device: torch.device | str) -> TripleSet:
        """Return a copy whose mapped triples live on ``device``.

        Args:
            device: The target device.

        Returns:
            A triple set sharing this one's vocabularies.
        """
        return TripleSet(self.mapped_triples.to(device), self.entities, self.relations)

    @classmethod
    def from_labeled_triples(
        cls,
        triples: Iterable[Sequence[str]],
        *,
        entities: Vocabulary | None = None,
        relations: Vocabulary | None = None,
        on_unknown: Literal["raise", "drop"] = "raise",
    ) -> TripleSet:
        """Map labelled triples to ids.

        Args:
            triples: ``(head, relation, tail)`` label tuples.
            entities: The entity vocabulary; default ``None`` builds the sorted vocabulary of
                the heads and tails.
            relations: The relation vocabulary; default ``None`` builds it sorted from the data.
            on_unknown: With given vocabularies, ``"raise"`` (default) on an unknown label, or
                ``"drop"`` the triples that use one, with a warning that counts them.

        Returns:
            The triple set, in input order.

        Raises:
            UnknownLabelError: On an unknown label with ``on_unknown="raise"``.
            GraphDataError: If a triple is not 3 strings, or ``on_unknown`` is invalid.
        """
        if on_unknown not in _ON_UNKNOWN:
            raise GraphDataError(f"on_unknown: expected one of {_ON_UNKNOWN}, got {on_unknown!r}")
        rows = _as_labeled(triples, "triples")
        if entities is None:
            entities = Vocabulary.from_labels(_entity_labels(rows), kind="entity")
        if relations is None:
            relations = Vocabulary.from_labels({row[1] for row in rows}, kind="relation")
        mapped, dropped = _map(rows, entities, relations)
        if dropped:
            if on_unknown == "raise":
                _raise_unknown(rows, entities, relations, "triples")
            warnings.warn(
                f"dropped {dropped} of {len(rows)} triples whose labels are not in the given "
                "vocabularies (on_unknown='drop')",
                stacklevel=2,
            )
        return cls(mapped, entities, relations)

    def to_labeled_triples(self) -> list[LabeledTriple]:
        """Return the triples as labels.

        Returns:
            ``(head, relation, tail)`` label tuples, in row order.
        """
        e, r = self.entities.labels, self.relations.labels
        heads, rels, tails = self.mapped_triples.t().tolist()  # columns: 20x faster than rows
        return list(
            zip(map(e.__getitem__, heads), map(r.__getitem__, rels), map(e.__getitem__, tails))
        )

    def with_inverse_relations(self) -> TripleSet:
        r"""Return the triples plus their inverses (reciprocal relations, as in ConvE).

        .. math::
            (h, r, t) \mapsto (t, r + R, h), \qquad r \in \{0, \dots, R - 1\}

        Relation id :math:`r` keeps its id; its inverse gets id :math:`r + R` and the label
        ``f"{label}_inverse"``. Row :math:`i + N` holds the inverse of row :math:`i`.

        Returns:
            A triple set with :math:`2N` triples and :math:`2R` relations.

        Raises:
            GraphDataError: If the relations already hold inverses, or an inverse label clashes.
        """
        relations = _inverse_vocabulary(self.relations)
        return TripleSet(
            _with_inverse(self.mapped_triples, self.num_relations), self.entities, relations
        )

    @classmethod
    def read_tsv(
        cls,
        path: str | os.PathLike[str],
        *,
        entities: Vocabulary | None = None,
        relations: Vocabulary | None = None,
        on_unknown: Literal["raise", "drop"] = "raise",
        strip: bool = False,
        skip_blank: bool = False,
        duplicates: Literal["raise", "drop", "keep"] = "raise",
        header: bool | None = None,
    ) -> TripleSet:
        """Read a labelled TSV file (``head<TAB>relation<TAB>tail``, UTF-8, gzip or not).

        Args:
            path: The file.
            entities: Entity vocabulary; default ``None`` builds it sorted from the file.
            relations: Relation vocabulary; default ``None`` builds it sorted from the file.
            on_unknown: ``"raise"`` (default) or ``"drop"`` triples with labels outside given
                vocabularies.
            strip: Strip whitespace around fields instead of rejecting it. Default ``False``.
            skip_blank: Skip blank lines instead of rejecting them. Default ``False``.
            duplicates: ``"raise"`` (default), ``"drop"`` or ``"keep"`` repeated triples.
            header: ``None`` (default) drops a first line naming the columns
                (:func:`graphdata._tsv.is_header_row`), ``True`` always drops the first line,
                ``False`` never.

        Returns:
            The triple set in file order.

        Raises:
            TSVFormatError: On a malformed line, naming ``path:line``; a BOM and CRLF line
                endings are accepted silently.
        """
        rows = read_labeled_triples(
            path, strip=strip, skip_blank=skip_blank, duplicates=duplicates, header=header
        )
        return cls.from_labeled_triples(
            rows, entities=entities, relations=relations, on_unknown=on_unknown
        )

    def write_tsv(self, path: str | os.PathLike[str]) -> None:
        """Write the labelled triples to ``path`` atomically (temporary file, then replace).

        Reading the file back with :meth:`read_tsv` gives the same labelled triples, and the same
        ids when the vocabularies are sorted and every label occurs in a triple.

        Args:
            path: The destination file; its folder must exist. A name ending in ``.gz`` gives
                a gzip-compressed file.

        Raises:
            GraphDataError: If a label cannot round-trip through the format (a tab, newline,
                surrounding whitespace or a leading U+FEFF); nothing is written then.
        """
        write_labeled_triples(path, self.to_labeled_triples())

    def to_pyg(self) -> Data:
        """Return a ``torch_geometric.data.Data`` with edges head -> tail typed by relation.

        Returns:
            ``Data(edge_index, edge_type, num_nodes=num_entities)`` on this device.

        Shapes:
            - edge_index: :math:`[2, N]`, rows head and tail ids.
            - edge_type: :math:`[N]`, relation ids.
        """
        from torch_geometric.data import Data

        mapped = self.mapped_triples
        return Data(
            edge_index=mapped[:, [0, 2]].t().contiguous(),  # [2, N]
            edge_type=mapped[:, 1].clone(),
            num_nodes=self.num_entities,
        )

    @classmethod
    def from_pyg(
        cls,
        data: Data,
        entities: Vocabulary | None = None,
        relations: Vocabulary | None = None,
    ) -> TripleSet:
        """Build a triple set from ``Data(edge_index, edge_type)`` and vocabularies.

        Without vocabularies, ids become labels (``"0", "1", ...``): written with
        :meth:`write_tsv` or :meth:`KGDataset.to_folder` and read back, they keep their ids
        (plain-integer labels sort by value, :func:`graphdata.vocabulary.sort_labels`).

        Args:
            data: Holds ``edge_index`` (head -> tail) and ``edge_type``; ``num_nodes``, when set,
                must equal ``len(entities)``.
            entities: The entity vocabulary node ids index; default ``None``: the labels
                ``"0", ..., "n-1"`` for ``n = data.num_nodes`` (or the largest id + 1).
            relations: The relation vocabulary edge types index; default ``None``: ``"0", ...,
                "R-1"`` for ``R = data.num_relations`` when set, else the largest type + 1.

        Returns:
            One triple per edge, in edge order.

        Shapes:
            - data.edge_index: :math:`[2, N]`.
            - data.edge_type: :math:`[N]`.

        Raises:
            GraphDataError: If ``edge_index``/``edge_type`` are missing or mis-shaped, or
                ``data.num_nodes`` differs from ``len(entities)``.
        """
        edge_index = getattr(data, "edge_index", None)
        edge_type = getattr(data, "edge_type", None)
        if (
            not isinstance(edge_index, Tensor)
            or not isinstance(edge_type, Tensor)
            or (
                edge_index.dim() != 2
                or edge_index.shape[0] != 2
                or edge_type.shape != (edge_index.shape[1],)
            )
        ):
            raise GraphDataError(
                "data: expected edge_index [2, N] and edge_type [N], got "
                f"{getattr(edge_index, 'shape', None)} and {getattr(edge_type, 'shape', None)}"
            )
        if entities is None:
            size = data.num_nodes if "num_nodes" in data.keys() else None
            if size is None:
                size = int(edge_index.max()) + 1 if edge_index.numel() else 0
            entities = Vocabulary([str(i) for i in range(size)], kind="entity")
        if relations is None:
            count = getattr(data, "num_relations", None)
            if not isinstance(count, int):
                count = int(edge_type.max()) + 1 if edge_type.numel() else 0
            relations = Vocabulary([str(i) for i in range(count)], kind="relation")
        if "num_nodes" in data.keys() and data.num_nodes != len(entities):
            raise GraphDataError(
                f"data.num_nodes: expected {len(entities)} (the size of entities), got "
                f"{data.num_nodes}"
            )
        mapped = torch.stack([edge_index[0], edge_type, edge_index[1]], dim=1)  # [N, 3]
        return cls(mapped, entities, relations)

    def to_hetero_data(self, node_type: str = "entity") -> HeteroData:
        """Return a PyG ``HeteroData``: one node type, one edge type per relation.

        Edge type ``(node_type, label, node_type)`` holds the triples of the relation ``label``:
        ``edge_index`` (head -> tail) and ``triple_index``, their rows in
        :attr:`mapped_triples`. Every relation gets its edge type, in id order, also one with no
        triples (an empty ``edge_index [2, 0]``), so :meth:`from_hetero_data` gives back the
        relation ids from the edge types' order and the triple order from ``triple_index``.
        Entity labels are not stored: pass ``entities`` back to :meth:`from_hetero_data`.

        Args:
            node_type: The name of the node type. Default ``"entity"``.

        Returns:
            The graph, on this device, with ``num_nodes = num_entities``.

        Shapes:
            - edge_index of relation :math:`r`: :math:`[2, N_r]`, head and tail ids.
            - triple_index of relation :math:`r`: :math:`[N_r]`.

        Examples:
            >>> ts = TripleSet.from_labeled_triples([("a", "likes", "b"), ("b", "knows", "a")])
            >>> data = ts.to_hetero_data()
            >>> data.edge_types
            [('entity', 'knows', 'entity'), ('entity', 'likes', 'entity')]
            >>> data["entity", "likes", "entity"].edge_index.tolist()
            [[0], [1]]
            >>> back = TripleSet.from_hetero_data(data, entities=ts.entities)
            >>> back.to_labeled_triples() == ts.to_labeled_triples()
            True
        """
        from torch_geometric.data import HeteroData

        if not isinstance(node_type, str) or not node_type:
            raise GraphDataError(f"node_type: expected a non-empty str, got {node_type!r}")
        data = HeteroData()
        data[node_type].num_nodes = self.num_entities
        mapped = self.mapped_triples
        rel = mapped[:, 1]
        for r, label in enumerate(self.relations.labels):
            rows = (rel == r).nonzero().view(-1)  # [N_r], in row order
            store = data[node_type, label, node_type]
            store.edge_index = mapped[rows][:, [0, 2]].t().contiguous()  # [2, N_r]
            store.triple_index = rows
        return data

    @classmethod
    def from_hetero_data(
        cls,
        data: HeteroData,
        *,
        entities: Vocabulary | None = None,
        relations: Vocabulary | None = None,
    ) -> TripleSet:
        """Build a triple set from a ``HeteroData``: one node type, an edge type per relation.

        The inverse of :meth:`to_hetero_data`. Edge type ``(n, label, n)`` gives relation
        ``label``; its ``edge_index`` rows are head and tail ids.

        Args:
            data: A graph with exactly one node type (``num_nodes`` set) whose edge types all
                join it to itself.
            entities: The entity vocabulary node ids index; default ``None``: the labels
                ``"0", ..., "num_nodes - 1"`` (ids equal to labels).
            relations: The relation vocabulary; default ``None``: the edge types' relation
                names in edge-type order (the ids :meth:`to_hetero_data` gave). When given, each
                edge type's name is looked up in it.

        Returns:
            The triple set: in the order of ``triple_index`` when every edge type holds one and
            together they number the edges ``0..N-1``; else edge type by edge type.

        Raises:
            GraphDataError: If the graph has another shape, ``num_nodes`` differs from
                ``len(entities)``, or ``triple_index`` is malformed.
            UnknownLabelError: If an edge type names a relation missing from ``relations``.
        """
        node_types = list(getattr(data, "node_types", []))
        if len(node_types) != 1:
            raise GraphDataError(
                f"data: expected a HeteroData with one node type (entities), got node types "
                f"{node_types}; merge them first (e.g. data.to_homogeneous())"
            )
        (node_type,) = node_types
        bad = [et for et in data.edge_types if et[0] != node_type or et[2] != node_type]
        if bad:
            raise GraphDataError(
                f"data: expected edge types ({node_type!r}, relation, {node_type!r}), got {bad[0]}"
            )
        num_nodes = data[node_type].num_nodes
        if num_nodes is None:
            raise GraphDataError(f"data[{node_type!r}].num_nodes: expected an int, got None")
        if entities is None:
            entities = Vocabulary([str(i) for i in range(num_nodes)], kind="entity")
        elif num_nodes != len(entities):
            raise GraphDataError(
                f"data[{node_type!r}].num_nodes: expected {len(entities)} (the size of "
                f"entities), got {num_nodes}"
            )
        labels = [et[1] for et in data.edge_types]
        if relations is None:
            relations = Vocabulary(labels, kind="relation")
        ids = relations.ids(labels).tolist()
        parts, positions = [], []
        for edge_type, r in zip(data.edge_types, ids):
            store = data[edge_type]
            edge_index = getattr(store, "edge_index", None)
            if (
                not isinstance(edge_index, Tensor)
                or edge_index.dim() != 2
                or (edge_index.shape[0] != 2)
            ):
                raise GraphDataError(
                    f"data[{edge_type}].edge_index: expected a LongTensor [2, N], got "
                    f"{getattr(edge_index, 'shape', edge_index)}"
                )
            rel = torch.full_like(edge_index[0], r)
            parts.append(torch.stack([edge_index[0], rel, edge_index[1]], dim=1))  # [N_r, 3]
            positions.append(getattr(store, "triple_index", None))
        if not parts:
            return cls(torch.empty(0, 3, dtype=torch.long), entities, relations)
        mapped = torch.cat(parts, dim=0)  # [N, 3], edge type by edge type
        if all(isinstance(p, Tensor) for p in positions):
            order = torch.cat([p.reshape(-1) for p in positions])  # type: ignore[union-attr]
            if order.shape[0] != mapped.shape[0] or not torch.equal(
                order.sort().values, torch.arange(order.shape[0], device=order.device)
            ):
                raise GraphDataError(
                    "data: expected the triple_index of all edge types to number the edges "
                    f"0..{mapped.shape[0] - 1} once each, got {order.shape[0]} values that do "
                    "not; delete triple_index to keep the edge-type order"
                )
            restored = torch.empty_like(mapped)
            restored[order] = mapped
            mapped = restored
        return cls(mapped, entities, relations)

    def to_networkx(self) -> nx.MultiDiGraph:
        """Return a ``networkx.MultiDiGraph``: nodes are entity labels, one edge per triple.

        Every entity becomes a node (in id order), also isolated ones. An edge ``h -> t`` has key
        and attribute ``relation`` equal to the relation label, so a repeated triple is one edge.
        ``graph.graph["relations"]`` holds the relation labels in id order (relations without
        triples included).

        Returns:
            The graph; :meth:`from_networkx` reads it back with the same vocabularies and ids.
        """
        import networkx as nx

        graph = nx.MultiDiGraph(relations=list(self.relations.labels))
        graph.add_nodes_from(self.entities.labels)
        graph.add_edges_from((h, t, r, {"relation": r}) for h, r, t in self.to_labeled_triples())
        return graph

    @classmethod
    def from_networkx(
        cls,
        graph: nx.Graph,
        relation_attr: str = "relation",
        *,
        entities: Vocabulary | None = None,
        relations: Vocabulary | None = None,
    ) -> TripleSet:
        """Build a triple set from a directed networkx graph whose edges carry a relation label.

        Args:
            graph: A ``DiGraph`` or ``MultiDiGraph`` with string node labels.
            relation_attr: The edge attribute holding the relation label. Default ``"relation"``.
            entities: Entity vocabulary; default ``None``: all nodes (isolated ones too), in
                node order for a graph from :meth:`to_networkx` (it holds
                ``graph.graph["relations"]``), else sorted.
            relations: Relation vocabulary; default ``None``: ``graph.graph["relations"]`` when
                it lists every edge's relation (what :meth:`to_networkx` stores), else the
                edges' relations, sorted.

        Returns:
            One triple per edge, in networkx edge order.

        Raises:
            GraphDataError: If the graph is undirected, a node is not a string, or an edge lacks
                a string ``relation_attr``.
        """
        if not graph.is_directed():
            raise GraphDataError(
                "graph: expected a directed graph (DiGraph or MultiDiGraph), got an undirected "
                f"{type(graph).__name__}; call graph.to_directed() if both directions hold"
            )
        bad = next((n for n in graph.nodes if not isinstance(n, str)), None)
        if bad is not None:
            raise GraphDataError(
                f"graph: expected str node labels, got {bad!r}; relabel with "
                "networkx.relabel_nodes(graph, str)"
            )
        rows = []
        for u, v, rel in graph.edges(data=relation_attr, default=None):
            if not isinstance(rel, str):
                raise GraphDataError(
                    f"graph: expected every edge to have a str {relation_attr!r} attribute, got "
                    f"{rel!r} on the edge ({u!r}, {v!r})"
                )
            rows.append((u, rel, v))
        # A graph of to_networkx keeps the ids: its nodes in id order, its relations listed.
        stored = graph.graph.get("relations")
        ours = isinstance(stored, list) and all(isinstance(x, str) for x in stored)
        if ours and not {row[1] for row in rows} <= set(stored):
            ours = False  # edges added since name other relations: number them anew
        if entities is None:
            entities = Vocabulary.from_labels(graph.nodes, kind="entity", sort=not ours)
        if relations is None and ours:
            relations = Vocabulary(stored, kind="relation")
        return cls.from_labeled_triples(rows, entities=entities, relations=relations)
