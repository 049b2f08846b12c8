"""``graphlib kg train`` without ``--model``: the race of kg.selection from the command line.

The race's own oracles (winner = argmax of independent runs, the winner's run = the
single-model run, resume) are in tests/kg/test_selection.py; here: the command's result equals
``--model <winner>``'s, a killed race is refused without ``--resume`` and continued with it,
and the settings it cannot race are refused or fall back with a note.
"""

import argparse
import json

import pytest
import torch

from graphdata.errors import GraphDataError
from graphdata.triples import KGDataset
from graphlib_ml.cli.kg import add_subparser
from kg.selection import RACE_MODELS


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
    KGDataset.from_labeled(rows, rows[::5], rows[1::5]).to_folder(tmp_path / "data")
    return tmp_path / "data"


def _argv(folder, out, *extra):
    small = ["--dim", "8", "--epochs", "10", "--patience", "2", "--batch-size", "8"]
    return ["kg", "train", "--dataset", str(folder), *small, "--no-progress", "--out", str(out)] + [
        *extra
    ]


def test_no_model_races_and_ends_with_the_run_of_the_winner(folder, tmp_path, capsys):
    assert _run(_argv(folder, tmp_path / "auto")) == 0
    printed = capsys.readouterr().out
    record = json.loads((tmp_path / "auto" / "race.json").read_text())
    winner = record["winner"]
    assert record["race_epochs"] == 4  # eval_every 2 x patience 2
    assert set(record["candidates"]) == set(RACE_MODELS)
    best = max(RACE_MODELS, key=lambda name: record["candidates"][name]["best_valid_mrr"])
    assert winner == best
    assert f"continued {winner}" in printed and "race: training complex for 4 epochs" in printed
    # oracle: the same test metrics and history as training the winner alone
    assert _run(_argv(folder, tmp_path / "alone", "--model", winner)) == 0
    for name in ("test_metrics.json", "metrics.jsonl"):
        auto = (tmp_path / "auto" / name).read_text().splitlines()
        alone = (tmp_path / "alone" / name).read_text().splitlines()
        if name == "metrics.jsonl":
            auto = [{k: v for k, v in json.loads(x).items() if k != "seconds"} for x in auto]
            alone = [{k: v for k, v in json.loads(x).items() if k != "seconds"} for x in alone]
        assert auto == alone, name
    ckpt = torch.load(tmp_path / "auto" / "checkpoint.pt", weights_only=True)
    assert ckpt["model"]["name"] == winner


def test_a_killed_race_is_refused_without_resume_and_continued_with_it(folder, tmp_path):
    out = tmp_path / "run"
    assert _run(_argv(folder, tmp_path / "whole")) == 0
    # a race killed after its first candidate: that candidate's race files only
    assert _run(_argv(folder, out, "--model", RACE_MODELS[0], "--epochs", "4")) == 0
    (out / "checkpoint.pt").rename(out / f"race_{RACE_MODELS[0]}.pt")
    (out / "test_metrics.json").unlink()
    with pytest.raises(GraphDataError, match=r"holds a race that did not finish.*--resume"):
        _run(_argv(folder, out))
    assert _run(_argv(folder, out, "--resume")) == 0
    assert json.loads((out / "race.json").read_text()) == json.loads(
        (tmp_path / "whole" / "race.json").read_text()
    )
    whole = json.loads((tmp_path / "whole" / "test_metrics.json").read_text())
    assert json.loads((out / "test_metrics.json").read_text()) == whole
    # a finished race: --overwrite removes every race file with the run's
    assert _run(_argv(folder, out, "--overwrite")) == 0
    assert json.loads((out / "test_metrics.json").read_text()) == whole


def test_what_cannot_race_is_refused_or_trains_the_first_candidate(folder, tmp_path, capsys):
    with pytest.raises(GraphDataError, match=r"runs in one process, got --shard-entities"):
        _run(_argv(folder, tmp_path / "a", "--shard-entities"))
    assert _run(_argv(folder, tmp_path / "b", "--eval-every", "0")) == 0
    printed = capsys.readouterr().out
    assert f"no validation to race on; training {RACE_MODELS[0]}" in printed
    ckpt = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=True)
    assert ckpt["model"]["name"] == RACE_MODELS[0]
    assert not (tmp_path / "b" / "race.json").exists()


def test_the_race_under_nproc_is_refused_in_one_line_before_any_worker(folder, tmp_path, capsys):
    # Each of the N workers printed the same refusal (twice for --nproc 2); the launcher's
    # process now refuses once, before it starts workers or creates --out.
    from graphlib_ml.cli import EXIT_USAGE, main

    assert main(_argv(folder, tmp_path / "n", "--nproc", "2", "--device", "cpu")) == EXIT_USAGE
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [
        f"graphlib: error: --model: the default race (auto: {', '.join(RACE_MODELS)}) runs in "
        f"one process, got --nproc/torchrun; pass one --model, e.g. --model {RACE_MODELS[0]}"
    ]
    assert not (tmp_path / "n").exists()


def test_a_config_file_may_ask_for_the_race_and_a_flag_for_one_model(folder, tmp_path):
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"model": "auto", "epochs": 6}))
    assert _run(_argv(folder, tmp_path / "file", "--config", str(config))) == 0
    assert json.loads((tmp_path / "file" / "race.json").read_text())["race_epochs"] == 4
    given = _argv(folder, tmp_path / "flag", "--config", str(config), "--model", "distmult")
    assert _run(given) == 0
    assert not (tmp_path / "flag" / "race.json").exists()
    ckpt = torch.load(tmp_path / "flag" / "checkpoint.pt", weights_only=True)
    assert ckpt["model"]["name"] == "distmult"


def test_one_model_resume_over_an_unfinished_race_is_refused(folder, tmp_path):
    out = tmp_path / "run"
    # a race killed after its first candidate: that candidate's race files only
    assert _run(_argv(folder, out, "--model", RACE_MODELS[0], "--epochs", "4")) == 0
    (out / "checkpoint.pt").rename(out / f"race_{RACE_MODELS[0]}.pt")
    (out / "test_metrics.json").unlink()
    for name in RACE_MODELS:  # it would restart from scratch and leave the race files behind
        with pytest.raises(GraphDataError, match=r"race that did not finish.*drop --model"):
            _run(_argv(folder, out, "--model", name, "--resume"))
    with pytest.raises(GraphDataError, match=r"race that did not finish.*drop --model"):
        _run(_argv(folder, out, "--eval-every", "0", "--resume"))  # auto falls back to one model
    assert not (out / "checkpoint.pt").exists()
    assert _run(_argv(folder, out, "--resume")) == 0  # the race itself resumes
