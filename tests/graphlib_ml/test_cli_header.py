"""``graphlib kg train/evaluate --header``: header rows detected, forced or refused."""

from __future__ import annotations

import json

import pytest
import torch

from graphlib_ml.cli import main
from kg.prediction import load_model

N = 6
ROWS = [(f"c{i}", "road_to", f"c{(i + 1) % N}") for i in range(N)]
ROWS += [(f"c{i}", "near", f"c{(i + 2) % N}") for i in range(N)]


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _folder(path, header):
    path.mkdir()
    for split, rows in (("train", ROWS), ("valid", ROWS[:3]), ("test", ROWS[3:6])):
        lines = ([header] if header else []) + ["\t".join(r) for r in rows]
        (path / f"{split}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _train(folder, out, *extra):
    argv = ["kg", "train", "--dataset", str(folder), "--model", "distmult", "--dim", "4"]
    argv += ["--epochs", "1", "--batch-size", "4", "--device", "cpu", "--no-progress"]
    return main([*argv, "--out", str(out), *extra])


def _entities(out):
    _, ckpt = load_model(out / "checkpoint.pt")
    return list(ckpt["vocabulary"]["entities"]), list(ckpt["vocabulary"]["relations"])


@pytest.mark.parametrize("header", ["head\trelation\ttail", "Subject\tPredicate\tObject"])
def test_a_header_naming_the_columns_is_detected(tmp_path, header):
    folder = _folder(tmp_path / "data", header)
    assert _train(folder, tmp_path / "run") == 0
    entities, relations = _entities(tmp_path / "run")
    assert entities == [f"c{i}" for i in range(N)]
    assert relations == ["near", "road_to"]


def test_header_flag_drops_an_unusual_header_and_evaluate_needs_it_again(tmp_path, capsys):
    folder = _folder(tmp_path / "data", "from\tedge\tto")
    # Without the flag the first line is a triple: 'from' and 'to' become entities.
    assert _train(folder, tmp_path / "plain") == 0
    assert {"from", "to"} <= set(_entities(tmp_path / "plain")[0])
    assert _train(folder, tmp_path / "run", "--header") == 0
    assert _entities(tmp_path / "run")[0] == [f"c{i}" for i in range(N)]
    ckpt = str(tmp_path / "run" / "checkpoint.pt")
    report = tmp_path / "m.json"
    argv = ["kg", "evaluate", ckpt, "--device", "cpu", "--json", str(report)]
    assert main([*argv, "--header"]) == 0
    assert json.loads(report.read_text())["metrics"]["both"]["realistic"]["count"] == 6
    capsys.readouterr()
    # Read without the flag, the header row is a triple of unknown labels: another dataset.
    assert main(argv) != 0
    assert "graphlib: error:" in capsys.readouterr().err


def test_no_header_keeps_a_first_line_that_looks_like_one(tmp_path):
    folder = _folder(tmp_path / "data", "head\trelation\ttail")
    assert _train(folder, tmp_path / "run", "--no-header") == 0
    entities, relations = _entities(tmp_path / "run")
    assert "head" in entities and "relation" in relations
