"""The explanation figure: legend, a length-1 path apart from the target, labels that do not
overlap (inspected on the rendered Agg canvas)."""

import itertools

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.patches import FancyArrowPatch

from tests.kg.explain.test_export import CASES, many_triples, one_triple


def _arrows(fig):
    ax = fig.axes[0]
    return {p.get_gid(): p for p in ax.patches if isinstance(p, FancyArrowPatch)}


def _offsets(arrow):
    """Signed distances of an arrow's path vertices (data coordinates) from the line y = 0
    through ann (-1, 0) and bob (1, 0), the closing vertex of its head left out."""
    path = arrow.get_path()
    keep = path.codes != path.CLOSEPOLY if path.codes is not None else slice(None)
    return path.vertices[keep][:, 1]


def test_figure_is_a_bare_agg_figure_with_a_legend_naming_each_path():
    explanation = many_triples()
    fig = explanation.figure()
    assert isinstance(fig.canvas, FigureCanvasAgg)
    legend = fig.axes[0].get_legend()
    entries = [t.get_text() for t in legend.get_texts()]
    assert entries == [
        "target (ann, spouse, bob)",
        f"path 1: {explanation.paths[0].to_text()}",
        f"path 2: {explanation.paths[1].to_text()}",
        "context triple",
        "head entity",
        "tail entity",
        "entity",
    ]
    # the legend's line colours are the drawn edges' colours
    arrows = _arrows(fig)
    colors = [line.get_color() for line in legend.get_lines()[:3]]
    gid = "edge:path 2:ann|parent|cy"
    assert arrows[gid].get_edgecolor() == arrows["edge:path 2:bob|parent|cy"].get_edgecolor()
    from matplotlib.colors import to_rgba

    assert to_rgba(colors[2]) == arrows[gid].get_edgecolor()
    assert to_rgba(colors[0]) == arrows["edge:target:ann|spouse|bob"].get_edgecolor()
    # one arrow per target, path triple and context triple between drawn nodes
    # one arrow per target, path triple and context triple between drawn nodes: (bob, likes,
    # ann) is context; (cy, sibling, dee) and the others reach nodes no path visits
    assert len(arrows) == 1 + 3 + 1
    assert "edge:context:bob|likes|ann" in arrows


def test_length_one_path_is_an_arc_beside_the_dashed_target():
    fig = one_triple().figure()
    fig.canvas.draw()
    arrows = _arrows(fig)
    target, path = arrows["edge:target:ann|spouse|bob"], arrows["edge:path 1:ann|lives_with|bob"]
    assert target.get_linestyle() == "--" and path.get_linestyle() == "-"
    assert np.abs(_offsets(target)).max() < 0.1  # straight (the head is ~0.05 wide)
    # the path's arc leaves the target's line: its control point is far from it
    assert np.abs(_offsets(path)).max() > 0.3
    # and its relation label sits on the arc, not on the target's label
    labels = {x.get_gid(): x for x in fig.axes[0].texts}
    renderer = fig.canvas.get_renderer()
    mine = labels["label:path 1:ann|lives_with|bob"].get_window_extent(renderer)
    theirs = labels["label:target:ann|spouse|bob"].get_window_extent(renderer)
    assert not mine.overlaps(theirs)


@pytest.mark.parametrize("case", CASES)
def test_no_two_labels_overlap_on_the_canvas(case):
    fig = CASES[case]().figure()
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = [t for t in fig.axes[0].texts if t.get_text()]
    assert len(texts) >= 3
    boxes = [t.get_window_extent(renderer) for t in texts]
    for (i, a), (j, b) in itertools.combinations(enumerate(boxes), 2):
        assert not a.overlaps(b), (texts[i].get_text(), texts[j].get_text())


def test_crowded_labels_are_moved_apart():
    # Five relations between the same two entities and two crossing triples: label boxes at
    # nearby midpoints; the separation pass must leave no overlap.
    from tests.kg.explain.test_export import _explanation

    local = [("ann", f"rel{i}", "bob") for i in range(5)] + [("bob", "back", "ann")]
    paths = [([tr], [True], ["ann", "bob"]) for tr in local[:5]]
    explanation = _explanation(local, paths, ["ann", "bob"])
    fig = explanation.figure()
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in fig.axes[0].texts]
    assert len(boxes) == 2 + 7
    assert not any(a.overlaps(b) for a, b in itertools.combinations(boxes, 2))
    # seven arrows, pairwise distinct paths
    apexes = set()
    for arrow in _arrows(fig).values():
        offsets = _offsets(arrow)
        apexes.add(round(float(offsets[np.abs(offsets).argmax()]), 1))
    assert len(apexes) == 7


@pytest.mark.parametrize("case", [one_triple, many_triples])
def test_title_and_legend_fit_inside_the_figure(case):
    # A plain savefig (no bbox_inches="tight") must not cut off the title or the legend.
    fig = case().figure()
    fig.canvas.draw()
    box = fig.get_tightbbox(fig.canvas.get_renderer())
    assert box.y0 >= -0.01 and box.y1 <= fig.get_figheight() + 0.01
    assert box.x0 >= -0.01 and box.x1 <= fig.get_figwidth() + 0.01


def test_a_condition_is_drawn_dotted_with_its_legend_entry():
    from tests.kg.explain.test_export import with_condition

    fig = with_condition().figure()
    arrows = _arrows(fig)
    assert arrows["edge:condition:bob|fuel|coal"].get_linestyle() == ":"
    assert "edge:path 1:bob|supplies|ann" in arrows
    entries = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "condition: a fact on a constant" in entries


@pytest.mark.parametrize("case", ["condition", "reefer"])
def test_a_node_label_sits_above_a_node_whose_triples_all_come_from_below(case):
    # A condition's constant drawn above its path would have its label under it, across the
    # dotted arrow (session 29's maritime figure): a node whose every neighbour lies below it
    # takes its label above it; every other node keeps it below.
    from tests.kg.explain.test_export import _explanation, with_condition

    if case == "condition":
        explanation = with_condition()
    else:
        # maritime's figure: the target's head ann is a carrier and its tail bob a port
        local = [
            ("vessel", "operated_by", "ann"),
            ("vessel", "calls_at", "bob"),
            ("vessel", "carries", "cargo_reefer"),
            ("vessel", "ais_reported", "bob"),
        ]
        path = (local[:2], [False, True], ["ann", "vessel", "bob"])
        explanation = _explanation(
            local, [path], ["ann", "vessel", "bob", "cargo_reefer"], conditions=[local[2]]
        )
    fig = explanation.figure()
    ax = fig.axes[0]
    notes = {
        t.get_gid()[len("node:") :]: t for t in ax.texts if (t.get_gid() or "").startswith("node:")
    }
    assert notes
    ups = 0
    for name, note in notes.items():
        x, y = note.xy
        neighbours = [
            (a if b == name else b)
            for a, _, b in [*explanation.local_triples, explanation.target]
            if name in (a, b) and (a if b == name else b) in notes
        ]
        ys = [notes[m].xy[1] for m in neighbours]
        up = bool(ys) and all(v < y for v in ys)
        assert (note.get_va(), note.xyann[1] > 0) == (("bottom", True) if up else ("top", False))
        ups += up
    assert ups >= (1 if case == "reefer" else 0)
