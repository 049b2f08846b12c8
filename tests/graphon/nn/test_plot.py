"""Transfer-experiment plots: drawn values and log axes whose tick labels do not collide."""

import pytest
import torch

from graphon.nn.generalization import SizeGeneralizationConfig, SizeGeneralizationResult
from graphon.nn.plot import plot_bernoulli_lift, plot_convergence, plot_size_generalization
from graphon.nn.transfer import ConvergenceConfig, ConvergenceCurve, ConvergenceResult
from tests.graphon.test_plot import assert_no_collision, drawn_labels


def _convergence(sizes, scale):
    """Outputs whose error to the limit 0 shrinks from 1 to ``scale`` across the sizes."""
    steps = torch.logspace(0, torch.log10(torch.tensor(scale)), len(sizes), dtype=torch.float64)
    outputs = steps.unsqueeze(1) * torch.tensor([[0.5, 1.0, 1.5]], dtype=torch.float64)
    curves = {"iwn": ConvergenceCurve("iwn", list(sizes), outputs, limit=0.0, lift=0.2)}
    return ConvergenceResult("toy", ConvergenceConfig(sizes=tuple(sizes), samples=3), curves)


@pytest.mark.parametrize(
    "sizes, scale, x_labels, y_labels",
    [
        ((200, 400, 600, 800, 1000), 0.8, ["200", "400", "600", "800", "1000"], None),
        ((50, 100, 200, 400), 0.1, ["50", "100", "200", "400"], None),
        ((10, 100, 1000, 10000), 1e-5, ["10", "100", "1000", "10000"], None),
    ],
)
def test_convergence_axes_label_every_size_and_never_collide(sizes, scale, x_labels, y_labels):
    ax = plot_convergence(_convergence(sizes, scale))
    assert ax.get_lines()[0].get_ydata().tolist() == pytest.approx(
        torch.logspace(0, torch.log10(torch.tensor(scale)), len(sizes)).tolist()
    )
    labels = drawn_labels(ax, "x")
    assert [label.get_text() for label in labels] == x_labels
    assert_no_collision(labels)
    y = drawn_labels(ax, "y")
    assert len(y) >= 2  # at least two labels on every range: the scale can be read
    assert_no_collision(y)


def test_convergence_y_axis_under_one_decade_gets_linear_labels():
    # MAE falls from 1 to 0.8: plain decimals (matplotlib writes 8x10^-1 and 9x10^-1 here)
    ax = plot_convergence(_convergence((200, 400, 600, 800, 1000), 0.8))
    assert [label.get_text() for label in drawn_labels(ax, "y")] == ["0.8", "0.9", "1"]


def test_lift_and_size_generalization_axes_do_not_collide():
    curve = _convergence(list(range(100, 1100, 100)), 0.5).curves["iwn"]  # ten close sizes
    ax = plot_bernoulli_lift(curve)
    labels = drawn_labels(ax, "x")
    assert [label.get_text() for label in labels] == ["100", "200", "300", "400", "600", "1000"]
    assert_no_collision(labels)

    config = SizeGeneralizationConfig(test_sizes=(50, 100, 200, 500, 1000, 2000), seeds=(0, 1))
    mse = torch.tensor([[1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6]] * 2, dtype=torch.float64)
    result = SizeGeneralizationResult(config, {"iwn": mse}, {"iwn": 1.0}, {"iwn": [0.0] * 2})
    ax = plot_size_generalization(result)
    x, y = drawn_labels(ax, "x"), drawn_labels(ax, "y")
    assert [label.get_text() for label in x] == ["50", "100", "200", "500", "1000", "2000"]
    assert [label.get_text() for label in y] == [f"$10^{{{k}}}$" for k in range(-6, 0)]
    assert_no_collision(x)
    assert_no_collision(y)
