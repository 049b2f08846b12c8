"""networkx conversion and matplotlib drawing of a PathExplanation (private).

The functions read an explanation through the small :class:`Drawable` protocol (the fields they
draw), so this module does not import :mod:`kg.explain.explanation`, which calls it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from graphdata.atomic import atomic_path

if TYPE_CHECKING:
    import networkx as nx

__all__: list[str] = []

_Triple = tuple[str, str, str]


class _Path(Protocol):
    """The fields of an ExplainedPath that are drawn (read-only: the dataclass is frozen)."""

    @property
    def triples(self) -> tuple[_Triple, ...]:
        """The path's triples, target head first."""

    @property
    def entities(self) -> tuple[str, ...]:
        """The entities along the path."""


class Drawable(Protocol):
    """The fields of a PathExplanation that are drawn (kg.explain.explanation), read-only."""

    @property
    def target(self) -> _Triple:
        """The explained triple."""

    @property
    def triples(self) -> tuple[_Triple, ...]:
        """The explanation's distinct triples."""

    @property
    def local_entities(self) -> tuple[str, ...]:
        """The local graph's entities, head and tail first."""

    @property
    def local_triples(self) -> tuple[_Triple, ...]:
        """The local graph's triples (target excluded)."""

    @property
    def mode(self) -> str:
        """How the explanation was made."""

    @property
    def paths(self) -> Sequence[_Path]:
        """The explanation's paths, in selection order."""


def to_networkx(explanation: Drawable) -> nx.MultiDiGraph:
    """Local triples as edges (``relation``, ``in_explanation``), plus the target edge."""
    import networkx as nx

    graph = nx.MultiDiGraph(target=explanation.target, mode=explanation.mode)
    h, _, t = explanation.target
    for entity in explanation.local_entities:
        graph.add_node(entity, role="head" if entity == h else "tail" if entity == t else "")
    chosen = set(explanation.triples)
    for triple in explanation.local_triples:
        graph.add_edge(
            triple[0], triple[2], relation=triple[1], in_explanation=triple in chosen, target=False
        )
    graph.add_edge(h, t, relation=explanation.target[1], in_explanation=False, target=True)
    return graph


def _path_layout(explanation: Drawable) -> dict[str, tuple[float, float]]:
    """Head left, tail right, each path's inner nodes on its own row (0.8, -0.8, 1.6, ...)."""
    h, _, t = explanation.target
    pos = {h: (-1.0, 0.0), t: (1.0, 0.0)}
    for i, path in enumerate(explanation.paths):
        row = 0.8 * (i // 2 + 1) * (1 if i % 2 == 0 else -1)
        steps = len(path.entities) - 1
        for j, entity in enumerate(path.entities[1:-1], start=1):
            pos.setdefault(entity, (-1.0 + 2.0 * j / steps, row))
    return pos


def plot(explanation: Drawable, path: Path, *, context: bool) -> Path:
    """Draw the explanation (bold, labelled), the target (dashed) and context (faint) to a PNG."""
    import networkx as nx
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    h, rel, t = explanation.target
    chosen = set(explanation.triples)
    shown = {h, t} | {x for tr in chosen for x in (tr[0], tr[2])}
    context_triples = [tr for tr in explanation.local_triples if tr not in chosen]
    if context:
        # Only context between nodes already drawn, so the picture stays readable.
        context_triples = [tr for tr in context_triples if tr[0] in shown and tr[2] in shown]
    else:
        context_triples = []
    layout_graph = nx.Graph()
    layout_graph.add_nodes_from(sorted(shown))
    layout_graph.add_edges_from((a, b) for a, _, b in chosen)
    layout_graph.add_edge(h, t)
    pos = _path_layout(explanation)
    rest = [n for n in layout_graph if n not in pos]
    if rest:  # nodes of an edge-mask explanation, which has no paths to lay out
        pos = nx.spring_layout(layout_graph, pos=pos, fixed=list(pos), seed=0)

    # A bare Figure on the Agg canvas: no pyplot figure to close, and the user's backend (a
    # notebook's inline one, say) stays as it is; matplotlib.use here would switch it.
    fig = Figure(figsize=(7, 5))
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    colors = ["tab:red" if n == h else "tab:blue" if n == t else "lightgrey" for n in layout_graph]
    nx.draw_networkx_nodes(layout_graph, pos, ax=ax, node_color=colors, node_size=500)
    nx.draw_networkx_labels(layout_graph, pos, ax=ax, font_size=7)

    def draw(triples: list, **style: object) -> None:
        labels: dict[tuple[str, str], list[str]] = {}
        for a, r, b in triples:
            labels.setdefault((a, b), []).append(r)
        digraph = nx.DiGraph(list(labels))
        nx.draw_networkx_edges(digraph, pos, ax=ax, arrows=True, node_size=500, **style)
        nx.draw_networkx_edge_labels(
            digraph,
            pos,
            ax=ax,
            font_size=7,
            edge_labels={k: " / ".join(v) for k, v in labels.items()},
        )

    if context_triples:
        draw(context_triples, edge_color="lightgrey", width=0.8)
    if chosen:
        draw(sorted(chosen), edge_color="black", width=2.0)
    draw([(h, rel, t)], edge_color="tab:red", style="dashed", width=1.5)
    title = f"({h}, {rel}, {t}): {len(explanation.paths)} path(s), mode {explanation.mode}"
    ax.set_title(title, fontsize=9)
    ax.axis("off")
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=110, bbox_inches="tight")
    return path
