"""``graphlib kg predict``: both sides, filtered by default, batch TSV, JSON."""

import argparse
import json

import pytest
import torch

from graphdata.errors import GraphDataError, UnknownLabelError
from graphdata.triples import KGDataset
from graphlib_ml.cli.kg import add_subparser
from kg.datasets import load_dataset
from kg.prediction import load_model, predict


def _run(argv):
    parser = argparse.ArgumentParser()
    add_subparser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.func(args)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("predict_cli")
    n = 9
    rows = [(f"city{i}", "road_to", f"city{(i + 1) % n}") for i in range(n)]
    rows += [(f"city{i}", "near", f"city{(i + 2) % n}") for i in range(n)]
    KGDataset.from_labeled(rows, rows[::5], rows[1::5]).to_folder(root / "data")
    argv = ["kg", "train", "--dataset", str(root / "data"), "--model", "distmult", "--dim", "8"]
    argv += ["--epochs", "2", "--batch-size", "8", "--device", "cpu", "--no-progress"]
    assert _run([*argv, "--out", str(root / "run")]) == 0
    torch.set_num_threads(threads)
    return root


def _shown(text):
    """Labels of the printed ranking lines (after the header line of each query)."""
    return [line.split()[1] for line in text.splitlines() if line[:4].strip().isdigit()]


def _expected(root, pairs, side, filtered=True):
    model, ckpt = load_model(root / "run" / "checkpoint.pt")
    dataset = load_dataset(str(root / "data"))
    vocab = ckpt["vocabulary"]
    return predict(
        model,
        pairs,
        side=side,
        filtered=filtered,
        known=dataset.filter_index() if filtered else None,
        top_k=3,
        reciprocal=ckpt["training"]["config"]["reciprocal"],
        entity_labels=vocab["entities"],
        relation_labels=vocab["relations"],
    )


@pytest.mark.parametrize(
    ("flag", "side", "query"),
    [("--head", "tail", "(city0, road_to, ?)"), ("--tail", "head", "(?, road_to, city0)")],
)
def test_head_and_tail_side_are_filtered(run, capsys, flag, side, query):
    ckpt = str(run / "run" / "checkpoint.pt")
    argv = ["kg", "predict", ckpt, flag, "city0", "--relation", "road_to", "--top-k", "3"]
    assert _run([*argv, "--device", "cpu", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith(query) and "filtered" in captured.out
    assert captured.err == ""  # --no-progress: no bar
    expected = _expected(run, [("city0", "road_to")], side)
    assert _shown(captured.out) == expected.labels()[0]
    known = "city1" if side == "tail" else "city8"  # (city0, road_to, city1), (city8, ..., city0)
    assert known not in _shown(captured.out)
    assert _run([*argv, "--device", "cpu", "--unfiltered"]) == 0
    raw = _expected(run, [("city0", "road_to")], side, filtered=False)
    assert _shown(capsys.readouterr().out) == raw.labels()[0]


def test_queries_file_and_json(run, tmp_path, capsys):
    queries = tmp_path / "q.tsv"
    queries.write_text("# entity\trelation\ncity2\tnear\n\ncity5\troad_to\n")
    out = tmp_path / "p.json"
    ckpt = str(run / "run" / "checkpoint.pt")
    argv = ["kg", "predict", ckpt, "--queries", str(queries), "--side", "head", "--top", "3"]
    assert _run([*argv, "--json", str(out), "--device", "cpu", "--exclude-self"]) == 0
    data = json.loads(out.read_text())
    assert data["filtered"] is True
    assert [q["query"] for q in data["queries"]] == [
        ["?", "near", "city2"],
        ["?", "road_to", "city5"],
    ]
    model, ckpt_dict = load_model(run / "run" / "checkpoint.pt")
    expected = predict(
        model,
        [("city2", "near"), ("city5", "road_to")],
        side="head",
        known=load_dataset(str(run / "data")).filter_index(),
        top_k=3,
        exclude_self=True,
        reciprocal=ckpt_dict["training"]["config"]["reciprocal"],
        entity_labels=ckpt_dict["vocabulary"]["entities"],
        relation_labels=ckpt_dict["vocabulary"]["relations"],
    )
    assert [[a["label"] for a in q["answers"]] for q in data["queries"]] == expected.labels()
    assert _shown(capsys.readouterr().out) == sum(expected.labels(), [])


def test_bad_queries_are_clear_errors(run, tmp_path):
    ckpt = str(run / "run" / "checkpoint.pt")
    with pytest.raises(UnknownLabelError, match=r"^--tail: unknown entity label 'cty1'"):
        _run(["kg", "predict", ckpt, "--tail", "cty1", "--relation", "near", "--device", "cpu"])
    with pytest.raises(GraphDataError, match="--relation: required with --head or --tail"):
        _run(["kg", "predict", ckpt, "--head", "city1", "--device", "cpu"])
    with pytest.raises(GraphDataError, match="--side: only with --queries"):
        _run(["kg", "predict", ckpt, "--head", "city1", "--relation", "near", "--side", "head"])
    bad = tmp_path / "bad.tsv"
    bad.write_text("city1\tnear\textra\n")
    with pytest.raises(GraphDataError, match=r"bad.tsv:1: expected 2 tab-separated fields"):
        _run(["kg", "predict", ckpt, "--queries", str(bad), "--device", "cpu"])
