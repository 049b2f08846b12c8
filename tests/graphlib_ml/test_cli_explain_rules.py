"""``graphlib kg explain --rules FILE``: F1 against the rules' groundings, for any dataset."""

import json

import pytest

from graphdata.errors import GraphDataError
from graphdata.rules import explanation_scores, read_rules
from tests.graphlib_ml.test_cli_explain import _run, _triple, checkpoint  # noqa: F401


def test_rules_file_scores_the_explanation_against_its_groundings(checkpoint, tmp_path, capsys):  # noqa: F811
    path, dataset = checkpoint
    h, r, t = _triple(dataset)  # a derived child_of triple of the family world
    rules_file = tmp_path / "rules.txt"
    rules_file.write_text(
        "# child_of is the inverse of parent\nchild_of(X,Y) <- parent(Y,X)\n", encoding="utf-8"
    )
    out_json = tmp_path / "x.json"
    argv = [str(path), "--triple", f"{h} {r} {t}", "--evaluator-steps", "5"]
    argv += ["--evaluator-hidden", "16", "--device", "cpu", "--max-candidates", "30"]
    argv += ["--out", str(tmp_path / "x.png"), "--json", str(out_json), "--rules", str(rules_file)]
    assert _run(argv) == 0
    out, err = capsys.readouterr()
    assert "graphlib: warning: 1 of 1 targets had more than max_candidates=30" in err
    # --rules replaces the family world's own ground truth
    assert "ground truth (planted rule groundings):" not in out
    assert (
        "ground truth (--rules, 1 rules): 1 grounding(s) in train, the shortest of length 1" in out
    )
    assert f"child_of(X,Y) <- parent(Y,X): ({t}, parent, {h})" in out
    predicted = [tuple(x) for x in json.loads(out_json.read_text())["triples"]]
    score = explanation_scores(predicted, (h, r, t), read_rules(rules_file), dataset.train)
    assert score is not None
    assert f"F1 {score.f1:.2f}" in out and f"precision {score.precision:.2f}" in out


def test_a_bad_rules_file_fails_before_any_work(checkpoint, tmp_path):  # noqa: F811
    path, _ = checkpoint
    bad = tmp_path / "rules.txt"
    bad.write_text("child_of(X,Y) <- parent(Y)\n", encoding="utf-8")
    with pytest.raises(GraphDataError, match=r"rules.txt:1:"):
        _run([str(path), "--triple", "a child_of b", "--rules", str(bad)])


def test_rule_labels_not_in_the_graph_are_warned_about(checkpoint, tmp_path, capsys):  # noqa: F811
    path, dataset = checkpoint
    rules = tmp_path / "rules.txt"
    rules.write_text(
        "child_of(X,Y) <- parnet(Y,X)\nchild_of(X,Y) <- parent(Y,X), parent(nobody,X)\n",
        encoding="utf-8",
    )
    flags = ["--evaluator-steps", "2", "--evaluator-hidden", "8", "--max-candidates", "10"]
    flags += ["--no-progress", "--no-evaluator-cache", "--device", "cpu"]
    out = tmp_path / "e.png"
    triple = " ".join(_triple(dataset))
    assert (
        _run([str(path), "--triple", triple, "--rules", str(rules), *flags, "--out", str(out)]) == 0
    )
    err = capsys.readouterr().err
    assert (
        "graphlib: warning: --rules: rule child_of(X,Y) <- parnet(Y,X) names the relation " in err
    )
    assert "'parnet', which is not in the training graph" in err and "'parent'" in err
    assert "names the entity 'nobody'" in err
