"""Progress bars of evaluator distillation and KGExplainer.explain_all (terminal only)."""

import io
import warnings

import pytest

from kg.explain.evaluator import DistilledEvaluator, EvaluatorConfig


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_distillation_shows_a_bar_on_a_terminal_only(world, teacher, monkeypatch, capsys):
    cfg = EvaluatorConfig(steps=4, batch_size=8, num_train_triples=40, hidden=4)
    DistilledEvaluator(cfg).fit(teacher, world.dataset.train)
    assert capsys.readouterr().err == ""  # not a terminal
    stream = _Terminal()
    monkeypatch.setattr("sys.stderr", stream)
    DistilledEvaluator(cfg).fit(teacher, world.dataset.train)
    assert "distil evaluator" in stream.getvalue() and "4/4" in stream.getvalue()


@pytest.mark.parametrize("progress", [False, True])
def test_explain_all_equals_explain_one_by_one(explainer, world, monkeypatch, progress):
    targets = world.derived_triples("test")[:2]
    stream = _Terminal()
    monkeypatch.setattr("sys.stderr", stream)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the candidate cap
        many = explainer.explain_all(targets, progress=progress)
        one = [explainer.explain(t) for t in targets]
    assert [e.triples for e in many] == [e.triples for e in one]
    assert [e.target for e in many] == [tuple(t) for t in targets] or len(many) == 2
    assert ("explain" in stream.getvalue()) is progress
