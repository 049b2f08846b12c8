"""Progress bars of the counterfactual relaxation: on a terminal only, never with progress=False."""

import io

import torch

from spatial.counterfactual import relax, simulate_intervention
from spatial.model import CelcomenEnergy


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _model() -> CelcomenEnergy:
    model = CelcomenEnergy(2)
    model.set_matrices(torch.tensor([[1.0, 0.0], [0.0, 0.0]]), torch.zeros(2, 2))
    return model


def test_relax_bar_on_a_terminal_and_same_numbers(monkeypatch, capsys):
    x = torch.tensor([[0.6, 0.8], [0.8, 0.6]])
    edges, weight = torch.tensor([[0], [1]]), torch.ones(1)
    quiet = relax(_model(), x, edges, weight, steps=7, progress=False)
    relax(_model(), x, edges, weight, steps=7)
    assert capsys.readouterr().err == ""  # default progress=True, but not a terminal
    stream = _Terminal()
    monkeypatch.setattr("sys.stderr", stream)
    shown = relax(_model(), x, edges, weight, steps=7, desc="relaxing")
    assert "relaxing" in stream.getvalue() and "7/7" in stream.getvalue()
    assert torch.equal(quiet, shown)


def test_intervention_bars_name_both_runs(monkeypatch):
    stream = _Terminal()
    monkeypatch.setattr("sys.stderr", stream)
    x = torch.tensor([[0.6, 0.8], [0.8, 0.6], [0.5, 0.5]])
    edges = torch.tensor([[0, 1, 2], [1, 2, 0]])
    cells = torch.tensor([True, False, False])
    model = CelcomenEnergy(2)  # away from the mean field's critical point: converges fast
    model.set_matrices(torch.tensor([[2.0, 0.0], [0.0, 0.0]]), torch.zeros(2, 2))
    args = (model, x, edges, torch.ones(3), {0: 0.0}, cells)
    for options in ({"method": "gradient", "steps": 5, "step_size": 0.01}, {}):
        stream.seek(0)
        stream.truncate()
        simulate_intervention(*args, **options, progress=False)
        assert stream.getvalue() == ""
        simulate_intervention(*args, **options)
        assert "counterfactual" in stream.getvalue() and "sham" in stream.getvalue()
