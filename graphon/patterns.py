r"""Patterns :math:`(F, d)` for homomorphism densities: loopless multigraphs with vertex exponents.

Conventions (used by every density function in :mod:`graphon.homomorphism`):

- **Multi-edges** are allowed: an edge of multiplicity :math:`m` contributes :math:`W^m`.
- **Self-loops are refused**: the diagonal of a graphon is a null set, so a loop's density is
  not a graphon invariant. To weight a vertex by a graph's diagonal, pass
  ``torch.diagonal(adj, dim1=-2, dim2=-1)`` as a signal channel with exponent 1 at that vertex.
- **Isolated vertices are allowed**: an isolated vertex :math:`v` contributes the factor
  :math:`\int f^{d_v}` (``1`` without a signal), so :math:`t(F \sqcup K_1) = t(F)\,t(K_1)`.
- **Vertex exponents** :math:`d \in \mathbb{N}_0^{V \times C}` weight :math:`v` by
  :math:`\prod_c f_c(x_v)^{d_{v,c}}`.
- **Edge-list strings**: ``"0-1,1-2,2-0"`` is a pattern too. Tokens are separated by commas;
  ``u-v`` is an edge, ``u-v:m`` an edge of multiplicity ``m`` (repeating ``u-v`` adds up), and
  a lone ``u`` declares a vertex (isolated if no edge touches it): ``"0-1,2"`` is an edge plus an
  isolated vertex. Vertices are non-negative ints, relabelled ``0 .. k-1`` in sorted order
  (``"5-7"`` becomes the edge ``(0, 1)``), so exponents are given in that order.
- **Vertex order of the named patterns** (:data:`PATTERNS`) fixes which vertex an exponent
  weights. ``diamond`` is :math:`K_4` minus the edge ``2-3``: edges ``(0,1), (0,2), (0,3),
  (1,2), (1,3)``, so vertices 0 and 1 (the shared edge of the two triangles) have degree 3 and
  vertices 2 and 3 degree 2. ``star3`` has its centre at 0; paths and cycles run ``0, 1, ...``.
"""

from __future__ import annotations

import math
import numbers
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

import networkx as nx
import torch

from graphdata.errors import GraphDataError, UnknownLabelError

__all__ = ["Pattern", "PATTERNS", "as_pattern", "PatternLike"]

#: Named patterns: name -> (number of vertices, edge list); repeated pairs are multi-edges.
PATTERNS: dict[str, tuple[int, list[tuple[int, int]]]] = {
    "vertex": (1, []),
    "edge": (2, [(0, 1)]),
    "double_edge": (2, [(0, 1), (0, 1)]),
    "path3": (3, [(0, 1), (1, 2)]),
    "path4": (4, [(0, 1), (1, 2), (2, 3)]),
    "star3": (4, [(0, 1), (0, 2), (0, 3)]),
    "triangle": (3, [(0, 1), (1, 2), (0, 2)]),
    "square": (4, [(0, 1), (1, 2), (2, 3), (0, 3)]),
    "cycle5": (5, [(0, 1), (1, 2), (2, 3), (3, 4), (0, 4)]),
    "cycle6": (6, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (0, 5)]),
    # K4 minus 2-3: vertices 0 and 1 have degree 3, vertices 2 and 3 degree 2.
    "diamond": (4, [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3)]),
    "k4": (4, [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]),
    "k5": (5, [(i, j) for i in range(5) for j in range(i + 1, 5)]),
}


@dataclass(frozen=True)
class Pattern:
    r"""A loopless multigraph pattern with optional vertex exponents (see the module conventions).

    Args:
        num_vertices: :math:`|V(F)| \ge 1`; vertices are ``0 .. num_vertices - 1``.
        edges: ``(u, v, m)`` triples with ``u < v`` and multiplicity ``m >= 1``, one per pair.
        exponents: Per-vertex exponent tuples (``num_vertices`` rows of ``C`` ints ``>= 0``), or
            ``None`` for no signal.
        name: A display name. Default ``"pattern"``.

    Examples:
        >>> F = as_pattern([(0, 1), (1, 2), (0, 2)])
        >>> F.num_edges, F.degrees, F.is_simple
        (3, (2, 2, 2), True)
    """

    num_vertices: int
    edges: tuple[tuple[int, int, int], ...]
    exponents: tuple[tuple[int, ...], ...] | None = None
    name: str = "pattern"

    def __post_init__(self) -> None:
        k = self.num_vertices
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise GraphDataError(f"pattern: expected at least one vertex, got {k!r}")
        seen = set()
        for u, v, m in self.edges:
            if u == v:
                raise GraphDataError(
                    f"pattern: self-loop at vertex {u}; densities here are for loopless patterns "
                    "(a graphon's diagonal is a null set). Remove the loop, or weight the vertex "
                    "by a graph's diagonal: pass torch.diagonal(adj, dim1=-2, dim2=-1) as a "
                    "signal channel with exponent 1 there"
                )
            if not (0 <= u < v < k) or m < 1 or (u, v) in seen:
                raise GraphDataError(
                    f"pattern: edge {(u, v, m)} must satisfy 0 <= u < v < {k}, m >= 1, one per pair"
                )
            seen.add((u, v))
        if self.exponents is not None:
            rows = self.exponents
            width = len(rows[0]) if len(rows) else 0
            if len(rows) != k or width == 0 or any(len(r) != width for r in rows):
                raise GraphDataError(
                    f"exponents: expected {k} rows of C >= 1 ints (one row per vertex), got {rows}"
                )
            if any(isinstance(d, bool) or not isinstance(d, int) or d < 0 for r in rows for d in r):
                raise GraphDataError(f"exponents: expected non-negative ints, got {rows}")

    @property
    def num_edges(self) -> int:
        """:math:`|E(F)|`, multi-edges counted with multiplicity."""
        return sum(m for _, _, m in self.edges)

    @property
    def is_simple(self) -> bool:
        """Whether every edge has multiplicity 1."""
        return all(m == 1 for _, _, m in self.edges)

    @property
    def degrees(self) -> tuple[int, ...]:
        """Vertex degrees, multi-edges counted with multiplicity."""
        deg = [0] * self.num_vertices
        for u, v, m in self.edges:
            deg[u] += m
            deg[v] += m
        return tuple(deg)

    @property
    def channels(self) -> int:
        """The number of signal channels the exponents refer to (``0`` without exponents)."""
        return 0 if self.exponents is None else len(self.exponents[0])

    def to_networkx(self) -> nx.MultiGraph:
        """The pattern as a networkx multigraph on ``0 .. num_vertices - 1``."""
        graph = nx.MultiGraph()
        graph.add_nodes_from(range(self.num_vertices))
        for u, v, m in self.edges:
            graph.add_edges_from([(u, v)] * m)
        return graph

    def disjoint_union(self, other: Pattern) -> Pattern:
        r"""The disjoint union :math:`F_1 \sqcup F_2` (``other``'s vertices shifted)."""
        if (self.exponents is None) != (other.exponents is None) or self.channels != other.channels:
            raise GraphDataError("other: both patterns need exponents with equal channels, or none")
        k = self.num_vertices
        edges = self.edges + tuple((u + k, v + k, m) for u, v, m in other.edges)
        exps = None
        if self.exponents is not None and other.exponents is not None:  # both or none (above)
            exps = self.exponents + other.exponents
        return Pattern(k + other.num_vertices, edges, exps, f"{self.name}+{other.name}")


#: Anything :func:`as_pattern` accepts.
PatternLike: TypeAlias = Pattern | str | nx.Graph | Sequence[tuple[int, int]]


def _edges_from_pairs(pairs: Sequence[tuple[object, object]], index: Mapping) -> tuple:
    counts: Counter = Counter()
    for pair in pairs:
        u, v = index[pair[0]], index[pair[1]]
        counts[(min(u, v), max(u, v))] += 1
    return tuple(sorted((u, v, m) for (u, v), m in counts.items()))


#: One token of an edge-list string: ``u-v``, ``u-v:m`` or a lone vertex ``u``.
_TOKEN = re.compile(r"\s*(\d+)\s*(?:-\s*(\d+)\s*(?::\s*(\d+)\s*)?)?")
#: Strings made of these characters (and a digit) are read as edge lists, not names.
_EDGE_CHARS = re.compile(r"[\d\s,:\-]+")
_EDGE_SYNTAX = "tokens 'u-v' (an edge), 'u-v:m' (multiplicity m >= 1) or 'u' (a vertex)"


def _parse_edge_list(text: str) -> tuple[list[int], tuple[tuple[int, int, int], ...]]:
    """The sorted vertices and the relabelled ``(u, v, m)`` edges of an edge-list string."""
    vertices: set[int] = set()
    counts: Counter = Counter()  # (u, v) -> multiplicity, never a list of m copies
    for position, token in enumerate(text.split(","), start=1):
        match = _TOKEN.fullmatch(token)
        if match is None:
            raise GraphDataError(
                f"pattern: token {position} of the edge list {text!r} is {token.strip()!r}; "
                f"expected {_EDGE_SYNTAX}, separated by commas, with non-negative int vertices, "
                "e.g. '0-1,1-2,2-0'"
            )
        u, v, m = match.groups()
        vertices.add(int(u))
        if v is None:
            continue
        if m is not None and int(m) < 1:
            raise GraphDataError(
                f"pattern: edge {token.strip()!r} of {text!r} has multiplicity {m}; expected "
                "m >= 1 (drop the edge to leave the pair unconnected)"
            )
        if int(u) == int(v):
            raise GraphDataError(
                f"pattern: edge {token.strip()!r} of {text!r} is a self-loop; densities here are "
                "for loopless patterns (a graphon's diagonal is a null set): remove it, or "
                "weight the vertex with an exponent instead"
            )
        vertices.add(int(v))
        counts[(min(int(u), int(v)), max(int(u), int(v)))] += 1 if m is None else int(m)
    nodes = sorted(vertices)
    index = {v: i for i, v in enumerate(nodes)}
    return nodes, tuple(sorted((index[u], index[v], m) for (u, v), m in counts.items()))


def _exponent_rows(exponents: object, nodes: list) -> tuple[tuple[int, ...], ...] | None:
    if exponents is None:
        return None
    if isinstance(exponents, torch.Tensor):
        exponents = exponents.tolist()
    if isinstance(exponents, Mapping):
        missing = [v for v in exponents if v not in nodes]
        if missing:
            raise GraphDataError(f"exponents: keys {missing} are not pattern vertices {nodes}")
        exponents = [exponents.get(v, 0) for v in nodes]
    if not isinstance(exponents, Sequence) or len(exponents) != len(nodes):
        raise GraphDataError(
            f"exponents: expected one entry per pattern vertex ({len(nodes)}), got {exponents!r}"
        )
    rows = [tuple(e) if isinstance(e, Sequence) else (e,) for e in exponents]
    width = max(len(r) for r in rows)
    # A vertex given as plain 0 in a multi-channel pattern means "no signal there".
    rows = [r if len(r) == width or r != (0,) else (0,) * width for r in rows]
    return tuple(tuple(_exponent(d) for d in r) for r in rows)


def _exponent(d: Any) -> Any:
    """``d`` as an int when it is a finite integral real (``2.0``, ``np.int64(2)``); else as is.

    Anything else (a bool, a string, NaN, a fraction) is left for :class:`Pattern` to refuse.
    """
    if isinstance(d, numbers.Real) and not isinstance(d, bool):
        value = float(d)
        if math.isfinite(value) and value == int(value):
            return int(value)
    return d


def as_pattern(pattern: PatternLike, exponents: object = None) -> Pattern:
    """Turn a name, networkx graph, edge list or :class:`Pattern` into a :class:`Pattern`.

    Args:
        pattern: A key of :data:`PATTERNS`; an edge-list string such as ``"0-1,1-2:2,3"``
            (syntax in the module docstring; vertices relabelled in sorted order); a networkx
            ``Graph``/``MultiGraph`` (vertices in ``list(G.nodes)`` order; parallel edges are
            multi-edges); a list of ``(u, v)`` int pairs on vertices ``0 .. max`` (repeats are
            multi-edges); or a :class:`Pattern`.
        exponents: Vertex exponents :math:`d`: one int or one length-``C`` sequence per vertex
            (in vertex order), a ``[k]``/``[k, C]`` tensor, or a mapping vertex -> exponent
            (unlisted vertices get 0). Default ``None`` (no signal).

    Returns:
        The pattern.

    Raises:
        GraphDataError: On self-loops, directed graphs, empty patterns, malformed edge-list
            strings (the message names the token), bad exponents, or exponents given twice.
        UnknownLabelError: On a string that is neither a name nor an edge list; the message
            lists the closest names.

    Examples:
        >>> as_pattern("triangle", exponents=[1, 1, 1]).exponents
        ((1,), (1,), (1,))
        >>> as_pattern("0-1:2,1-2,3").edges  # a double edge, an edge, an isolated vertex
        ((0, 1, 2), (1, 2, 1))
    """
    if isinstance(pattern, Pattern):
        if exponents is None:
            return pattern
        if pattern.exponents is not None:
            raise GraphDataError("exponents: the pattern already has exponents; pass them once")
        nodes = list(range(pattern.num_vertices))
        return replace(pattern, exponents=_exponent_rows(exponents, nodes))
    if isinstance(pattern, str) and pattern not in PATTERNS:
        if not (_EDGE_CHARS.fullmatch(pattern) and any(c.isdigit() for c in pattern)):
            err = UnknownLabelError("pattern", pattern, PATTERNS, argument="pattern")
            err.args = (f"{err} Or write an edge list such as '0-1,1-2,2-0': {_EDGE_SYNTAX}.",)
            raise err
        nodes, edges = _parse_edge_list(pattern)
        return Pattern(len(nodes), edges, _exponent_rows(exponents, nodes), pattern.strip())
    if isinstance(pattern, str):
        k, pairs = PATTERNS[pattern]
        nodes = list(range(k))
        edges = _edges_from_pairs(pairs, {v: v for v in nodes})
        return Pattern(k, edges, _exponent_rows(exponents, nodes), pattern)
    if isinstance(pattern, nx.Graph):
        if pattern.is_directed():
            raise GraphDataError("pattern: expected an undirected graph; use G.to_undirected()")
        nodes = list(pattern.nodes)
        index = {v: i for i, v in enumerate(nodes)}
        edges = _edges_from_pairs(list(pattern.edges()), index)
        return Pattern(len(nodes), edges, _exponent_rows(exponents, nodes), "pattern")
    if isinstance(pattern, Sequence):
        pairs = [tuple(p) for p in pattern]
        if not pairs or any(
            len(p) != 2
            or not all(isinstance(u, int) and not isinstance(u, bool) and u >= 0 for u in p)
            for p in pairs
        ):
            raise GraphDataError(
                f"pattern: expected a non-empty list of (u, v) pairs of non-negative ints, got "
                f"{pattern!r}; for a single vertex use 'vertex'"
            )
        k = max(max(p) for p in pairs) + 1
        nodes = list(range(k))
        edges = _edges_from_pairs(pairs, {v: v for v in nodes})
        return Pattern(k, edges, _exponent_rows(exponents, nodes), "pattern")
    raise GraphDataError(
        f"pattern: expected a name in {list(PATTERNS)}, a networkx graph, an edge list or a "
        f"Pattern, got {type(pattern).__name__}"
    )
