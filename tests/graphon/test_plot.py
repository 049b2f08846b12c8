import pytest
import torch
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from graphdata.errors import GraphDataError
from graphon.families import make_graphon, sbm
from graphon.plot import log_axis, plot_adjacency, plot_density_convergence, plot_graphon


def test_graphon_heatmap_shows_the_function_values():
    ax = plot_graphon(sbm(2, 0.9, 0.1), resolution=4)
    assert isinstance(ax, Axes) and ax.get_title() == "sbm(2,0.9,0.1)"
    image = ax.get_images()[0].get_array()
    assert image.tolist() == [[0.9, 0.9, 0.1, 0.1]] * 2 + [[0.1, 0.1, 0.9, 0.9]] * 2


def test_adjacency_image_and_errors():
    a = torch.eye(3)
    ax = plot_adjacency(a)
    assert ax.get_images()[0].get_array().tolist() == a.tolist()
    assert "n = 3" in ax.get_title()
    with pytest.raises(GraphDataError, match="one"):
        plot_adjacency(torch.zeros(2, 3, 3))


def test_density_convergence_plots_mean_band_and_limit(tmp_path):
    values = [[0.1, 0.3], [0.18, 0.22], [0.2, 0.2]]
    ax = plot_density_convergence([10, 20, 40], values, 0.2)
    lines = ax.get_lines()
    assert lines[0].get_ydata().tolist() == pytest.approx([0.2, 0.2, 0.2])
    assert list(lines[1].get_ydata()) == [0.2, 0.2]  # the axhline at the limit
    assert ax.get_xscale() == "log"
    ax.figure.savefig(tmp_path / "c.png")
    assert (tmp_path / "c.png").stat().st_size > 0
    with pytest.raises(GraphDataError, match=r"\[len\(sizes\), R\]"):
        plot_density_convergence([10, 20], values, 0.2)
    other = Figure().add_subplot()
    assert plot_graphon(make_graphon("sum"), other, resolution=5) is other  # the given Axes


def drawn_labels(ax, which):
    """The non-empty tick labels matplotlib draws on one axis (major and minor, in view)."""
    ax.figure.canvas.draw()
    axis = ax.xaxis if which == "x" else ax.yaxis
    low, high = sorted(axis.get_view_interval())
    coordinate = 0 if which == "x" else 1
    return [
        label
        for label in axis.get_ticklabels(which="both")
        if label.get_visible()
        and label.get_text()
        and low <= label.get_position()[coordinate] <= high
    ]


def assert_no_collision(labels):
    boxes = [(label.get_text(), label.get_window_extent()) for label in labels]
    for i, (text, box) in enumerate(boxes):
        for other, other_box in boxes[i + 1 :]:
            assert not box.overlaps(other_box), f"tick labels {text!r} and {other!r} overlap"


@pytest.mark.parametrize(
    "sizes, expected",
    [
        ([50, 100, 200, 400], ["50", "100", "200", "400"]),  # under a decade: 3x10^2 hit 4x10^2
        (list(range(20, 420, 20)), ["20", "40", "60", "100", "160", "240", "400"]),  # thinned
        ([10, 30, 100, 300, 1000], ["10", "30", "100", "300", "1000"]),
        ([10**k for k in range(1, 7)], [f"$10^{{{k}}}$" for k in range(1, 7)]),  # six decades
    ],
)
def test_log_size_axis_labels_the_sizes_without_collisions(sizes, expected):
    ax = plot_density_convergence(sizes, [[0.1, 0.2]] * len(sizes))
    labels = drawn_labels(ax, "x")
    assert [label.get_text() for label in labels] == expected
    assert_no_collision(labels)


@pytest.mark.parametrize(
    "low, high, expected",
    [
        (0.81, 0.99, ["0.85", "0.9", "0.95"]),  # a tenth of a decade: linear steps
        (0.12, 0.9, ["0.2", "0.3", "0.5", "0.7", "0.9"]),  # under a decade: round digits
        (3e-3, 0.06, ["0.003", "0.005", "0.01", "0.02", "0.03", "0.05"]),  # 1.3 decades
        # wide: every other decade (the view's margin reaches 1.04, so 10^0 is in)
        (2e-7, 0.5, [r"$10^{-6}$", r"$10^{-4}$", r"$10^{-2}$", r"$10^{0}$"]),
    ],
)
def test_log_axis_labels_do_not_collide_on_small_medium_and_wide_ranges(low, high, expected):
    for which in ("x", "y"):
        ax = Figure(figsize=(5, 3.6)).add_subplot()
        FigureCanvasAgg(ax.figure)
        ax.plot([low, high], [low, high])
        log_axis(ax, which)
        labels = drawn_labels(ax, which)
        assert [label.get_text() for label in labels] == expected
        assert_no_collision(labels)


def test_log_axis_rejects_bad_arguments():
    ax = Figure().add_subplot()
    with pytest.raises(GraphDataError, match="axis: expected 'x' or 'y', got 'z'"):
        log_axis(ax, "z")
    with pytest.raises(GraphDataError, match=r"ticks: a log axis needs positive .*\[0, 10\]"):
        log_axis(ax, "x", ticks=[0, 10])


def test_log_size_axis_with_one_size_falls_back_to_automatic_labels():
    ax = plot_density_convergence([100], [[0.1, 0.2]])
    labels = drawn_labels(ax, "x")
    assert len(labels) >= 2 and "100" in [label.get_text() for label in labels]
    assert_no_collision(labels)
