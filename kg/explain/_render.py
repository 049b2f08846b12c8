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
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.text import Text

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

    @property
    def conditions(self) -> tuple[_Triple, ...]:
        """The triples that are facts on a constant at a node of a path."""


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


#: One colour per path, in selection order (the target is crimson, context grey).
PATH_COLORS = (
    "tab:blue",
    "tab:green",
    "tab:orange",
    "tab:purple",
    "tab:brown",
    "tab:pink",
    "tab:olive",
    "tab:cyan",
)
#: Node colours by role.
ROLE_COLORS = {"head": "gold", "tail": "skyblue", "other": "lightgrey"}
#: Curvature (matplotlib ``arc3`` ``rad``) of the k-th extra edge between one pair of nodes:
#: the first edge of a pair is straight, the next ones bend to alternate sides, further out.
_RADS = (0.0, 0.35, -0.35, 0.65, -0.65, 0.9, -0.9)
_NODE_SIZE = 500  # scatter marker area, points^2
_SHRINK = 13.0  # points: arrows stop at the marker's rim (radius sqrt(500 / pi) ~ 12.6)


def _edge_styles(
    explanation: Drawable, context_triples: list[_Triple]
) -> list[tuple[_Triple, str, str]]:
    """``(triple, kind, colour)`` per drawn edge: the target, the paths' triples, context."""
    h, rel, t = explanation.target
    edges: list[tuple[_Triple, str, str]] = [((h, rel, t), "target", "crimson")]
    seen: set[_Triple] = set()
    for i, path in enumerate(explanation.paths):
        for triple in path.triples:
            if triple not in seen:
                seen.add(triple)
                edges.append((triple, f"path {i + 1}", PATH_COLORS[i % len(PATH_COLORS)]))
    for triple in explanation.conditions:  # facts on a constant, or an end's distinct value
        if triple not in seen:
            seen.add(triple)
            edges.append((triple, "condition", "black"))
    for triple in explanation.triples:  # an edge-mask explanation has triples but no paths
        if triple not in seen:
            seen.add(triple)
            edges.append((triple, "explanation", "black"))
    edges += [(triple, "context", "darkgrey") for triple in context_triples]
    return edges


def _curvatures(edges: list[tuple[_Triple, str, str]]) -> list[float]:
    """An ``arc3`` radius per edge so that edges between the same two nodes never coincide.

    Radii are given per unordered pair, in drawing order (the target first, so it is straight
    and a length-1 path beside it bends away). ``arc3`` bends to the left of the direction of
    travel, so an edge drawn the other way round gets the opposite sign to keep its side.
    """
    count: dict[frozenset[str], int] = {}
    rads = []
    for (a, _, b), _, _ in edges:
        pair = frozenset((a, b))
        k = count.get(pair, 0)
        count[pair] = k + 1
        rad = _RADS[k] if k < len(_RADS) else 0.9 + 0.1 * (k - len(_RADS) + 1)
        rads.append(rad if a <= b else -rad)
    return rads


def figure(explanation: Drawable, *, context: bool) -> Figure:
    """The explanation drawn on a bare Agg ``Figure``: paths, target, context, legend.

    Every edge is its own arrow: edges between the same two nodes are bent apart (``arc3``
    arcs of alternating sign), so a length-1 path beside the target is a visible arc, not
    hidden under the dashed target. Relation labels sit at their arc's midpoint in a white
    box; node labels sit under their node (above it where every triple of the node comes from
    below, as a condition's constant above its path); overlapping labels are then moved apart
    on the rendered canvas. The legend names the target, each path (by its text), context
    triples and the node roles.
    """
    import networkx as nx
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrowPatch

    h, rel, t = explanation.target
    chosen = set(explanation.triples)
    shown = {h, t} | {x for tr in chosen for x in (tr[0], tr[2])}
    context_triples: list[_Triple] = []
    if context:
        # Only context between nodes already drawn, so the picture stays readable.
        context_triples = [
            tr
            for tr in explanation.local_triples
            if tr not in chosen and tr[0] in shown and tr[2] in shown
        ]
    layout_graph = nx.Graph()
    layout_graph.add_nodes_from(sorted(shown))
    layout_graph.add_edges_from((a, b) for a, _, b in chosen)
    layout_graph.add_edge(h, t)
    pos = _path_layout(explanation)
    if any(n not in pos for n in layout_graph):  # an edge-mask explanation has no paths
        pos = nx.spring_layout(layout_graph, pos=pos, fixed=list(pos), seed=0)
    pos = {n: (float(x), float(y)) for n, (x, y) in pos.items()}

    # A bare Figure on the Agg canvas: no pyplot figure to close, and the user's backend (a
    # notebook's inline one, say) stays as it is; matplotlib.use here would switch it.
    fig = Figure(figsize=(7, 5.5))
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    ax.set_aspect("equal")  # arc3 bends in display space: equal axes keep midpoints in data
    nodes = sorted(shown)
    roles = ["head" if n == h else "tail" if n == t else "other" for n in nodes]
    ax.scatter(
        [pos[n][0] for n in nodes],
        [pos[n][1] for n in nodes],
        s=_NODE_SIZE,
        c=[ROLE_COLORS[r] for r in roles],
        edgecolors="black",
        linewidths=0.8,
        zorder=3,
    )
    edges = _edge_styles(explanation, context_triples)
    # a node whose every triple comes from below (a condition's constant above its path) takes
    # its label above it, clear of the arrows
    below: dict[str, list[bool]] = {}
    for (a, _, b), _, _ in edges:
        below.setdefault(a, []).append(pos[b][1] < pos[a][1])
        below.setdefault(b, []).append(pos[a][1] < pos[b][1])
    labels: list[Text] = []
    for n in nodes:
        up = bool(below.get(n)) and all(below[n])
        note = ax.annotate(
            n,
            pos[n],
            xytext=(0, 15 if up else -15),
            textcoords="offset points",
            ha="center",
            va="bottom" if up else "top",
            fontsize=7,
            zorder=5,
        )
        note.set_gid(f"node:{n}")
        labels.append(note)

    xs, ys = [p[0] for p in pos.values()], [p[1] for p in pos.values()]
    for ((a, r, b), kind, color), rad in zip(edges, _curvatures(edges)):
        (x1, y1), (x2, y2) = pos[a], pos[b]
        arrow = FancyArrowPatch(
            (x1, y1),
            (x2, y2),
            connectionstyle=f"arc3,rad={rad}",
            arrowstyle="-|>",
            mutation_scale=12,
            shrinkA=_SHRINK,
            shrinkB=_SHRINK,
            color=color,
            linestyle={"target": "--", "condition": ":"}.get(kind, "-"),
            linewidth={"target": 1.5, "context": 0.8}.get(kind, 2.0),
            zorder=1 if kind == "context" else 2,
        )
        arrow.set_gid(f"edge:{kind}:{a}|{r}|{b}")
        ax.add_patch(arrow)
        # The quadratic Bezier of arc3 peaks at t = 1/2: midpoint + rad / 2 * (dy, -dx).
        mx, my = (x1 + x2) / 2 + rad / 2 * (y2 - y1), (y1 + y2) / 2 - rad / 2 * (x2 - x1)
        xs.append(mx)  # the axes must hold every arc's apex and its label
        ys.append(my)
        text = ax.text(
            mx,
            my,
            r,
            ha="center",
            va="center",
            fontsize=7,
            color=color if kind != "context" else "dimgrey",
            bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": color, "lw": 0.6},
            zorder=4,
        )
        text.set_gid(f"label:{kind}:{a}|{r}|{b}")
        labels.append(text)

    pad = 0.45
    ax.set_xlim(min(xs) - pad, max(xs) + pad)
    ax.set_ylim(min(ys) - pad, max(ys) + pad)
    ax.axis("off")
    ax.set_title(
        f"({h}, {rel}, {t}): {len(explanation.paths)} path(s), mode {explanation.mode}",
        fontsize=9,
    )
    handles = [Line2D([], [], color="crimson", linestyle="--", label=f"target ({h}, {rel}, {t})")]
    for i, path in enumerate(explanation.paths):
        words = _path_text(path)
        handles.append(
            Line2D(
                [],
                [],
                color=PATH_COLORS[i % len(PATH_COLORS)],
                lw=2,
                label=f"path {i + 1}: {words if len(words) <= 60 else words[:57] + '...'}",
            )
        )
    if any(kind == "condition" for _, kind, _ in edges):
        label = "condition: a fact on a constant"
        handles.append(Line2D([], [], color="black", lw=2, ls=":", label=label))
    if any(kind == "explanation" for _, kind, _ in edges):
        handles.append(Line2D([], [], color="black", lw=2, label="explanation triple"))
    if context_triples:
        handles.append(Line2D([], [], color="darkgrey", lw=0.8, label="context triple"))
    for role in ("head", "tail", "other"):
        if role in roles:
            handles.append(
                Line2D(
                    [],
                    [],
                    marker="o",
                    linestyle="",
                    markersize=9,
                    markerfacecolor=ROLE_COLORS[role],
                    markeredgecolor="black",
                    label={"head": "head entity", "tail": "tail entity"}.get(role, "entity"),
                )
            )
    ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        fontsize=7,
        ncol=2,
        frameon=False,
    )
    fig.tight_layout()
    _fit_height(fig)
    _separate_labels(fig, ax, labels)
    return fig


def _fit_height(fig: Figure) -> None:
    """Make the figure taller until the title and the legend below the axes lie inside it.

    With equal aspect the axes cannot shrink in height alone, so ``tight_layout`` can leave the
    title and the legend's last row outside the figure (cut off by a plain ``savefig``).
    """
    for _ in range(3):
        renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
        box = fig.get_tightbbox(renderer)  # inches
        overflow = max(0.0, -box.y0) + max(0.0, box.y1 - fig.get_figheight())
        if overflow <= 0.01:
            return
        fig.set_size_inches(fig.get_figwidth(), fig.get_figheight() + overflow + 0.1)
        fig.tight_layout()


def _path_text(path: _Path) -> str:
    """``h -[r]-> x <-[s]- t``, the text of :meth:`ExplainedPath.to_text`."""
    to_text = getattr(path, "to_text", None)
    if callable(to_text):
        return str(to_text())
    return " ".join(path.entities)


def _separate_labels(fig: Figure, ax: Axes, labels: list[Text], *, tries: int = 16) -> None:
    """Move relation labels until no two label boxes overlap on the rendered canvas.

    Node labels stay. Each relation label, in drawing order, that overlaps another label is
    moved vertically from its midpoint by one, minus one, two, minus two, ... of its own
    heights, to the first place where it overlaps none; after ``tries`` places it stays where
    it was, so a very crowded figure may keep an overlap.
    """
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    inverse = ax.transData.inverted()
    boxes = [label.get_window_extent(renderer) for label in labels]
    for i, label in enumerate(labels):
        if (label.get_gid() or "").startswith("node:"):
            continue
        others = [box for j, box in enumerate(boxes) if j != i]
        if not any(boxes[i].overlaps(box) for box in others):
            continue
        x, y = ax.transData.transform(label.get_position())
        step = boxes[i].height + 2
        for k in range(1, tries + 1):
            shift = step * ((k + 1) // 2) * (1 if k % 2 else -1)
            box = boxes[i].translated(0, shift)
            if not any(box.overlaps(other) for other in others):
                label.set_position(tuple(inverse.transform((x, y + shift))))
                boxes[i] = box
                break


def plot(explanation: Drawable, path: Path, *, context: bool) -> Path:
    """Draw :func:`figure` to a PNG, atomically."""
    fig = figure(explanation, context=context)
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=110, bbox_inches="tight")
    return path
