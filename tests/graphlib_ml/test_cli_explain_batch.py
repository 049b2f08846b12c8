"""``graphlib kg explain --triples FILE [--workers N]``: many targets, one fitted explainer."""

import json
import re

import pytest

from graphdata.errors import GraphDataError
from graphdata.rules import read_rules, score_targets
from graphdata.synthetic import family_kg
from tests.graphlib_ml.test_cli_explain import _run, checkpoint  # noqa: F401

FLAGS = ["--evaluator-steps", "5", "--evaluator-hidden", "16", "--device", "cpu"]
FLAGS += ["--max-candidates", "30", "--no-progress", "--no-evaluator-cache"]


def _targets(n: int) -> list[tuple[str, str, str]]:
    world = family_kg(40, seed=0)
    return [t for t in world.derived_triples("test") if t[1] == "child_of"][:n]


def test_triples_file_serial_and_parallel_agree_and_score(checkpoint, tmp_path, capsys):  # noqa: F811
    path, dataset = checkpoint
    targets = _targets(3)
    lines = ["# targets", ""] + ["\t".join(t) for t in targets]
    (tmp_path / "t.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rules = tmp_path / "rules.txt"
    rules.write_text("child_of(X,Y) <- parent(Y,X)\n", encoding="utf-8")
    argv = [str(path), "--triples", str(tmp_path / "t.txt"), *FLAGS, "--rules", str(rules)]
    assert _run([*argv, "--json", str(tmp_path / "serial.json")]) == 0
    serial_out = capsys.readouterr().out
    assert (
        _run(
            [*argv, "--workers", "2", "--json", str(tmp_path / "par.json")]
            + ["--out", str(tmp_path / "figs")]
        )
        == 0
    )
    out, err = capsys.readouterr()
    # the capped targets as one summary line, without Python's warning format
    assert len(re.findall(r"^graphlib: warning: \d of 3 targets had more than", err, re.M)) == 1
    assert ".py:" not in err
    serial = json.loads((tmp_path / "serial.json").read_text())
    parallel = json.loads((tmp_path / "par.json").read_text())
    assert [e["target"] for e in serial] == [list(t) for t in targets]
    for a, b in zip(serial, parallel):  # the same explanations but for the wall time
        assert a["triples"] == b["triples"] and a["joint_score"] == b["joint_score"]
    assert "explained 3 targets in" in out and "2 workers" in out
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == ["0.png", "1.png", "2.png"]
    assert (tmp_path / "figs" / "0.png").read_bytes()[:4] == b"\x89PNG"
    assert not list(tmp_path.glob("explanation.png"))  # no single-target figure in batch mode
    # The printed means are score_targets' over the written explanations.
    table = score_targets(
        {tuple(e["target"]): [tuple(x) for x in e["triples"]] for e in serial},
        read_rules(rules),
        dataset.train,
    )
    (row,) = table.by_length.values()
    expected = f"length 1: 3 targets, precision {row.precision:.2f} recall {row.recall:.2f} F1"
    assert expected in serial_out and f"F1 {row.f1:.2f}" in serial_out
    assert "3 of 3 targets grounded in train" in out


def test_bad_batch_arguments_fail_before_any_work(checkpoint, tmp_path):  # noqa: F811
    path, _ = checkpoint
    bad = tmp_path / "bad.txt"
    bad.write_text("a child_of b\n\nc child_of\n", encoding="utf-8")
    with pytest.raises(GraphDataError, match=r"--triples: line 3 .* got 'c child_of'"):
        _run([str(path), "--triples", str(bad)])
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(GraphDataError, match="holds no triple"):
        _run([str(path), "--triples", str(empty)])
    with pytest.raises(GraphDataError, match="cannot read"):
        _run([str(path), "--triples", str(tmp_path / "missing.txt")])
    with pytest.raises(GraphDataError, match="--workers: parallel explanation needs several"):
        _run([str(path), "--triple", "a child_of b", "--workers", "2"])
    good = tmp_path / "good.txt"
    good.write_text("a child_of b\n", encoding="utf-8")
    with pytest.raises(SystemExit):  # --workers 0: refused by the parser (an integer >= 1)
        _run([str(path), "--triples", str(good), "--workers", "0"])
    with pytest.raises(GraphDataError, match="--out: with --triples, expected a folder"):
        _run([str(path), "--triples", str(good), "--out", str(bad)])
    with pytest.raises(SystemExit):  # --triple and --triples together: argparse refuses
        _run([str(path), "--triple", "a child_of b", "--triples", str(good)])


def test_targets_are_checked_against_the_graph_before_distillation(
    checkpoint,  # noqa: F811
    tmp_path,
    monkeypatch,
):
    path, _ = checkpoint

    def no_distillation(*args, **kwargs):
        raise AssertionError("distilled before the targets were checked")

    monkeypatch.setattr("kg.explain.explainer.DistilledEvaluator.fit", no_distillation)
    (a, _, b), (c, _, d) = _targets(2)
    targets = tmp_path / "t.txt"
    # A BOM (Windows editors) and CRLF line ends; the typo is on line 3.
    targets.write_bytes(f"\ufeff{a} child_of {b}\r\n\r\n{c} chlid_of {d}\r\n".encode())
    with pytest.raises(GraphDataError, match=r"--triples: line 3 of .*'chlid_of'.*'child_of'"):
        _run([str(path), "--triples", str(targets), *FLAGS])
    targets.write_text(f"\ufeff{a} child_of {b}\n{c} child_of {c}\n", encoding="utf-8")
    with pytest.raises(GraphDataError, match=r"--triples: line 2 of .* head != tail"):
        _run([str(path), "--triples", str(targets), *FLAGS])
    with pytest.raises(GraphDataError, match=r"--triple: unknown entity label 'person_9'"):
        _run([str(path), "--triple", f"person_9 child_of {b}", *FLAGS])


def test_a_refusal_after_the_figure_folder_was_made_leaves_no_new_folder(tmp_path):
    # --out with --triples is created before the checkpoint is loaded: a missing checkpoint
    # left an empty folder (and its new parent). A folder that existed before stays.
    good = tmp_path / "good.txt"
    good.write_text("a child_of b\n", encoding="utf-8")
    argv = [str(tmp_path / "missing.pt"), "--triples", str(good), "--device", "cpu"]
    with pytest.raises(GraphDataError, match="checkpoint: no file at"):
        _run([*argv, "--out", str(tmp_path / "new" / "figs")])
    assert not (tmp_path / "new").exists()
    (tmp_path / "old").mkdir()
    with pytest.raises(GraphDataError, match="checkpoint: no file at"):
        _run([*argv, "--out", str(tmp_path / "old")])
    assert (tmp_path / "old").is_dir()
