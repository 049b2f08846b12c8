"""Progress bars of kg.evaluate and kg.predict: on a terminal only, never with progress=False."""

import io

import torch

from graphdata.filter_index import FilterIndex
from kg.distmult import DistMult
from kg.evaluation import PROGRESS_MIN_BATCHES, evaluate
from kg.prediction import predict


class _Terminal(io.StringIO):
    """A stderr that says it is a terminal, so tqdm's ``disable=None`` shows the bar."""

    def isatty(self) -> bool:
        return True


def _terminal(monkeypatch):
    # Patched in the test body: pytest's capture replaces sys.stderr again after fixtures run.
    stream = _Terminal()
    monkeypatch.setattr("sys.stderr", stream)
    return stream


def _setup(n=2 * PROGRESS_MIN_BATCHES):
    torch.manual_seed(0)
    model = DistMult(5, 2, dim=4)
    triples = torch.stack(
        [torch.randint(5, (n,)), torch.randint(2, (n,)), torch.randint(5, (n,))], dim=1
    )
    return model, triples, FilterIndex.from_triples(triples, num_entities=5, num_relations=2)


def test_evaluate_bar_on_a_terminal_with_many_batches_only(monkeypatch):
    terminal = _terminal(monkeypatch)
    model, triples, index = _setup()
    quiet = evaluate(model, triples, index, batch_size=1, progress=False)
    assert terminal.getvalue() == ""
    shown = evaluate(model, triples, index, batch_size=1)
    # the bar starts at 0/N and is cleared at the end (leave=False)
    assert f"evaluate:   0%|          | 0/{len(triples)}" in terminal.getvalue()
    assert torch.equal(quiet.ranks(), shown.ranks())  # the bar changes no number
    terminal.seek(0)
    terminal.truncate()
    evaluate(model, triples, index, batch_size=len(triples))  # one batch: no bar
    assert terminal.getvalue() == ""


def test_evaluate_is_quiet_when_not_a_terminal(capsys):
    model, triples, index = _setup()
    evaluate(model, triples, index, batch_size=1)
    assert capsys.readouterr().err == ""


def test_predict_bar_when_asked_on_a_terminal(monkeypatch):
    terminal = _terminal(monkeypatch)
    model, triples, index = _setup()
    queries = triples[:6, :2]
    predict(model, queries, known=index, batch_size=2, progress=False)
    assert terminal.getvalue() == ""
    predict(model, queries, known=index, batch_size=2, progress=True)
    assert "predict" in terminal.getvalue() and "3/3" in terminal.getvalue()
