import pytest
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from graphdata.errors import GraphDataError
from graphon.families import make_graphon, sbm
from graphon.plot import plot_adjacency, plot_density_convergence, plot_graphon


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
