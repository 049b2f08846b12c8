import argparse
import json

import pytest
import torch

from graphdata.errors import GraphDataError, UnknownLabelError
from graphdata.triples import KGDataset
from graphlib_ml.cli import main
from graphlib_ml.cli.kg import add_subparser
from kg.datasets import load_dataset
from kg.prediction import load_model, predict_tails


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _run(argv):
    parser = argparse.ArgumentParser()
    add_subparser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.func(args)


@pytest.fixture
def folder(tmp_path):
    n = 9
    rows = [(f"city{i}", "road_to", f"city{(i + 1) % n}") for i in range(n)]
    rows += [(f"city{i}", "near", f"city{(i + 2) % n}") for i in range(n)]
    ds = KGDataset.from_labeled(rows, rows[::5], rows[1::5])
    ds.to_folder(tmp_path / "data")
    return tmp_path / "data"


def _train_argv(folder, out, *extra):
    return [
        "kg",
        "train",
        "--dataset",
        str(folder),
        "--model",
        "distmult",
        "--dim",
        "8",
        "--epochs",
        "3",
        "--batch-size",
        "8",
        "--eval-every",
        "1",
        "--device",
        "cpu",
        "--out",
        str(out),
        "--no-progress",
        *extra,
    ]


def test_train_evaluate_predict_round_trip(folder, tmp_path, capsys):
    out = tmp_path / "run"
    assert _run(_train_argv(folder, out, "--lr", "0.05")) == 0
    printed = capsys.readouterr().out
    # the resolved config is printed: flags override the tuned defaults, the rest come from them
    assert "lr = 0.05" in printed and "regime = '1vsall'" in printed and "epochs = 3" in printed
    written = {p.name for p in out.iterdir()}
    assert written == {"checkpoint.pt", "metrics.jsonl", "test_metrics.json"}
    lines = (out / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(x)["epoch"] for x in lines] == [1, 2, 3]
    saved = json.loads((out / "test_metrics.json").read_text())

    # --compile only changes RotatE's kernel; for other models it must not change a number
    assert (
        _run(
            [
                "kg",
                "evaluate",
                str(out / "checkpoint.pt"),
                "--device",
                "cpu",
                "--compile",
                "--json",
                str(tmp_path / "eval.json"),
            ]
        )
        == 0
    )
    again = json.loads((tmp_path / "eval.json").read_text())
    assert again["metrics"]["both"]["realistic"]["mrr"] == pytest.approx(
        saved["metrics"]["both"]["realistic"]["mrr"]
    )
    capsys.readouterr()

    assert (
        _run(
            [
                "kg",
                "predict",
                str(out / "checkpoint.pt"),
                "--head",
                "city0",
                "--relation",
                "road_to",
                "--top",
                "3",
                "--unfiltered",  # predict_tails ranks every tail; the default drops known ones
                "--device",
                "cpu",
            ]
        )
        == 0
    )
    shown = [line.split()[1] for line in capsys.readouterr().out.splitlines()[1:]]
    model, ckpt = load_model(out / "checkpoint.pt")
    expected = predict_tails(
        model,
        "city0",
        "road_to",
        entity_labels=ckpt["vocabulary"]["entities"],
        relation_labels=ckpt["vocabulary"]["relations"],
        top_k=3,
    )
    assert shown == [label for label, _ in expected]


def test_resume_flag_continues_the_run(folder, tmp_path):
    out = tmp_path / "run"
    _run(_train_argv(folder, out, "--epochs", "2"))
    _run(_train_argv(folder, out, "--epochs", "4", "--resume"))
    lines = (out / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(x)["epoch"] for x in lines] == [1, 2, 3, 4]
    straight = tmp_path / "straight"
    _run(_train_argv(folder, straight, "--epochs", "4"))
    a, _ = load_model(out / "checkpoint.pt")
    b, _ = load_model(straight / "checkpoint.pt")
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def test_evaluate_refuses_another_dataset(folder, tmp_path):
    out = tmp_path / "run"
    _run(_train_argv(folder, out, "--epochs", "1"))
    rows = [("a", "r", "b"), ("b", "r", "c")]
    KGDataset.from_labeled(rows, rows, rows).to_folder(tmp_path / "other")
    with pytest.raises(GraphDataError, match="entity vocabulary"):
        _run(
            [
                "kg",
                "evaluate",
                str(out / "checkpoint.pt"),
                "--dataset",
                str(tmp_path / "other"),
                "--device",
                "cpu",
            ]
        )


def test_predict_unknown_label_lists_closest(folder, tmp_path):
    out = tmp_path / "run"
    _run(_train_argv(folder, out, "--epochs", "1"))
    with pytest.raises(UnknownLabelError, match=r"head: unknown entity label 'cty1'.*'city1'"):
        _run(
            [
                "kg",
                "predict",
                str(out / "checkpoint.pt"),
                "--head",
                "cty1",
                "--relation",
                "road_to",
                "--device",
                "cpu",
            ]
        )
    with pytest.raises(UnknownLabelError, match=r"relation: .*'road_too'.*'road_to'"):
        _run(
            [
                "kg",
                "predict",
                str(out / "checkpoint.pt"),
                "--head",
                "city1",
                "--relation",
                "road_too",
                "--device",
                "cpu",
            ]
        )


def test_diverged_training_exits_1_with_message(folder, tmp_path, capsys):
    out = tmp_path / "run"
    argv = _train_argv(
        folder,
        out,
        "--optimizer",
        "sgd",
        "--lr",
        "1e30",
        "--regime",
        "slcwa",
        "--loss",
        "softplus",
        "--no-reciprocal",
    )
    assert main(argv) == 1  # the top-level handler maps TrainingDivergedError
    err = capsys.readouterr().err
    assert "graphlib: error: training diverged:" in err and "--lr 1e+30" in err and "lr=" not in err
    assert "lower --lr" in err and len(err.strip().splitlines()) == 1


def test_synthetic_dataset_spec_round_trips():
    ds = load_dataset("synthetic", num_people=60, seed=2)
    again = load_dataset(ds.name)
    assert again.name == ds.name == "synthetic:num_people=60,seed=2"
    assert torch.equal(again.train.mapped_triples, ds.train.mapped_triples)
    with pytest.raises(FileNotFoundError, match="train.txt"):
        load_dataset("/nonexistent/folder")


_SHARDED = ("--regime", "slcwa", "--optimizer", "rowwise_adagrad", "--lr", "0.1")
_SHARDED += ("--loss", "softplus", "--eval-every", "0")


def test_shard_entities_in_one_process_matches_the_trainer(folder, tmp_path, capsys):
    # Oracle: the same flags without --shard-entities (kg.training.Trainer); one rank owns every
    # row, draws the Trainer's parameters and takes its steps. The checkpoint evaluates to the
    # sharded evaluation's ranks through `kg evaluate`.
    sharded, plain = tmp_path / "sharded", tmp_path / "plain"
    assert main(_train_argv(folder, sharded, *_SHARDED, "--shard-entities")) == 0
    assert "sharded entity table: 1 rank(s)" in capsys.readouterr().out
    assert main(_train_argv(folder, plain, *_SHARDED)) == 0
    logs = [
        [json.loads(x) for x in (d / "metrics.jsonl").read_text().splitlines()]
        for d in (sharded, plain)
    ]
    assert [x["world_size"] for x in logs[0]] == [1, 1, 1]
    assert [x["loss"] for x in logs[0]] == pytest.approx([x["loss"] for x in logs[1]], rel=1e-5)
    tests = [json.loads((d / "test_metrics.json").read_text()) for d in (sharded, plain)]
    mrr = [t["metrics"]["both"]["realistic"]["mrr"] for t in tests]
    assert mrr[0] == pytest.approx(mrr[1], rel=1e-6)
    out = tmp_path / "eval.json"
    assert main(["kg", "evaluate", str(sharded / "checkpoint.pt"), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["metrics"] == tests[0]["metrics"]


def test_shard_entities_refusals_name_the_flags(folder, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(_train_argv(folder, out, "--shard-entities")) == 2  # 1vsAll, Adam: no
    err = capsys.readouterr().err
    assert "--shard-entities: trains with --regime slcwa" in err and "Traceback" not in err
    assert "--optimizer rowwise_adagrad" in err
    assert main(_train_argv(folder, out, *_SHARDED, "--shard-entities")) == 0
    assert main(_train_argv(folder, out, *_SHARDED, "--shard-entities", "--resume")) == 2
    assert "cannot be resumed; drop --resume" in capsys.readouterr().err
    assert main(_train_argv(folder, out, *_SHARDED, "--resume", "--epochs", "4")) == 2
    assert "not resumed: train afresh" in capsys.readouterr().err
    tracked = _train_argv(folder, tmp_path / "t", *_SHARDED, "--shard-entities")
    assert main([*tracked, "--tracker", "tensorboard"]) == 2
    assert "--tracker: a --shard-entities run writes metrics.jsonl only" in capsys.readouterr().err


def _refuse_constant(name):
    raise AssertionError(f"non-strict JSON constant {name} written")


def test_written_metrics_are_strict_json_with_null_for_undefined_metrics(folder, tmp_path):
    # 9 entities: every query has at most 9 <= 10 candidates, so E[Hits@10] = 1 and the
    # adjusted Hits@10 is undefined: JSON null, where it used to be written as NaN.
    out = tmp_path / "run"
    assert _run(_train_argv(folder, out)) == 0
    text = (out / "test_metrics.json").read_text()
    both = json.loads(text, parse_constant=_refuse_constant)["metrics"]["both"]["realistic"]
    assert both["hits_at_10"] == 1.0 and both["adjusted_hits_at_10"] is None
    assert both["z_hits_at_10"] is None and isinstance(both["adjusted_hits_at_1"], float)
