"""``graphlib kg ... --on-unknown`` and the end-of-run line of ``graphlib kg train``."""

from __future__ import annotations

import argparse
import json
import warnings

import pytest
import torch

from graphdata.errors import GraphDataError, UnknownLabelsDropped
from graphdata.triples import KGDataset
from graphlib_ml.cli import main
from graphlib_ml.cli.explain import add_explain_subparser
from graphlib_ml.cli.kg import dropped_triples_as_lines


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


N = 9
ROWS = [(f"city{i}", "road_to", f"city{(i + 1) % N}") for i in range(N)]
ROWS += [(f"city{i}", "near", f"city{(i + 2) % N}") for i in range(N)]
# valid: 1 of 5 triples names the unseen entity 'ghost'; test: 2 of 6, 'ghost' and 'flies_to'
VALID = [*ROWS[::5], ("city1", "road_to", "ghost")]
TEST = [*ROWS[1::5], ("ghost", "near", "city3"), ("city2", "flies_to", "city4")]


@pytest.fixture
def folder(tmp_path):
    """A standard split whose valid/test use labels absent from train (as FB15k-237's do)."""
    KGDataset.from_labeled(ROWS, VALID, TEST, on_unknown="extend").to_folder(tmp_path / "data")
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
        "--regime",
        "1vsall",
        "--reciprocal",
        "--regularizer",
        "none",
        "--regularizer-weight",
        "0",
        "--optimizer",
        "adam",
        "--lr",
        "0.05",
        "--device",
        "cpu",
        "--out",
        str(out),
        "--no-progress",
        *extra,
    ]


def _main(argv):
    """``main(argv)``, asserting that no UnknownLabelsDropped escapes as a Python warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = main(argv)
    assert not [w for w in caught if issubclass(w.category, UnknownLabelsDropped)]
    return code


def test_train_drops_unseen_labels_with_one_plain_warning_line(folder, tmp_path, capsys):
    assert _main(_train_argv(folder, tmp_path / "run", "--epochs", "1")) == 0
    captured = capsys.readouterr()
    lines = [x for x in captured.err.splitlines() if "dropped" in x]
    assert lines == [
        f"graphlib: warning: {folder.resolve()}: dropped 1 of 5 valid and 2 of 6 test triples "
        "whose labels do not occur in train.txt (1 entities, e.g. ['ghost']; 1 relations, "
        "e.g. ['flies_to']); on_unknown='raise' (--on-unknown raise) refuses them, 'extend' "
        "keeps them with new ids"
    ]
    assert "UnknownLabelsDropped" not in captured.err and "Traceback" not in captured.err
    assert "train 18, valid 4, test 4" in captured.out
    metrics = json.loads((tmp_path / "run" / "test_metrics.json").read_text())
    assert metrics["num_triples"] == 4  # the 4 known test triples, both sides ranked


def test_train_on_unknown_raise_is_one_error_line_naming_the_flag(folder, tmp_path, capsys):
    assert _main(_train_argv(folder, tmp_path / "run", "--on-unknown", "raise")) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("graphlib: error: 3 valid/test triples")
    assert "on_unknown='drop' (--on-unknown drop)" in err
    assert "on_unknown='extend' (--on-unknown extend)" in err
    assert not (tmp_path / "run" / "checkpoint.pt").exists()


def test_train_refused_for_unknown_labels_leaves_no_new_folder(folder, tmp_path, capsys):
    # The refusal came after --out (and its missing parents) was created: an empty folder
    # stayed behind. A folder that existed before stays.
    out = tmp_path / "new" / "run"
    assert _main(_train_argv(folder, out, "--on-unknown", "raise")) == 2
    assert "--on-unknown extend" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()
    (tmp_path / "old").mkdir()
    assert _main(_train_argv(folder, tmp_path / "old", "--on-unknown", "raise")) == 2
    assert (tmp_path / "old").is_dir() and not any((tmp_path / "old").iterdir())


def test_bad_on_unknown_value_is_a_usage_error(folder, tmp_path, capsys):
    assert _main(_train_argv(folder, tmp_path / "run", "--on-unknown", "keep")) == 2
    err = capsys.readouterr().err
    assert "--on-unknown" in err and "'drop', 'raise', 'extend'" in err


def test_extend_run_evaluates_with_its_own_vocabulary(folder, tmp_path, capsys):
    out = tmp_path / "run"
    assert _main(_train_argv(folder, out, "--epochs", "1", "--on-unknown", "extend")) == 0
    printed = capsys.readouterr()
    assert "dropped" not in printed.err
    assert "10 entities, 3 relations, train 18, valid 5, test 6" in printed.out
    ckpt = str(out / "checkpoint.pt")
    # no flag: the checkpoint's recorded mode (extend) is used, all 6 test triples are ranked
    assert _main(["kg", "evaluate", ckpt, "--device", "cpu"]) == 0
    printed = capsys.readouterr()
    assert "dropped" not in printed.err and "test 6" in printed.out
    assert "filtered ranks (realistic), 6 triples" in printed.out
    # --dataset FOLDER reads it with drop: another vocabulary, refused with the fix
    argv = ["kg", "evaluate", ckpt, "--dataset", str(folder), "--device", "cpu"]
    assert _main(argv) == 2
    err = capsys.readouterr().err
    assert "entity vocabulary" in err and "pass --on-unknown extend" in err
    assert _main([*argv, "--on-unknown", "extend"]) == 0
    assert "filtered ranks (realistic), 6 triples" in capsys.readouterr().out


def test_evaluate_of_a_drop_run_shows_the_warning_line_once(folder, tmp_path, capsys):
    out = tmp_path / "run"
    assert _main(_train_argv(folder, out, "--epochs", "1")) == 0
    capsys.readouterr()
    assert _main(["kg", "evaluate", str(out / "checkpoint.pt"), "--device", "cpu"]) == 0
    printed = capsys.readouterr()
    assert [x for x in printed.err.splitlines() if "dropped" in x] == [
        x for x in printed.err.splitlines() if x.startswith("graphlib: warning:")
    ]
    assert len(printed.err.strip().splitlines()) == 1
    assert "filtered ranks (realistic), 4 triples" in printed.out
    # a mode that contradicts the checkpoint's (drop) is refused before anything is scored
    argv = ["kg", "evaluate", str(out / "checkpoint.pt"), "--on-unknown", "extend"]
    assert _main([*argv, "--device", "cpu"]) == 2
    assert "pass --on-unknown drop" in capsys.readouterr().err


def test_explain_takes_on_unknown_and_refuses_a_contradicting_mode(folder, tmp_path):
    out = tmp_path / "run"
    assert _main(_train_argv(folder, out, "--epochs", "1", "--on-unknown", "extend")) == 0
    parser = argparse.ArgumentParser()
    add_explain_subparser(parser.add_subparsers(dest="kg_command"))
    ckpt = str(out / "checkpoint.pt")
    argv = ["explain", ckpt, "--triple", "city1 road_to city2", "--device", "cpu"]
    assert parser.parse_args(argv).on_unknown is None
    args = parser.parse_args([*argv, "--on-unknown", "raise", "--out", str(tmp_path / "x.png")])
    with pytest.raises(GraphDataError, match=r"records on_unknown='extend', got 'raise'"):
        args.func(args)
    assert not (tmp_path / "x.png").exists()


def _valid_mrrs(out):
    lines = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    return [x["valid_mrr"] for x in lines if "valid_mrr" in x]


def test_end_of_run_says_raise_epochs_when_still_improving(folder, tmp_path, capsys):
    out = tmp_path / "run"
    assert _main(_train_argv(folder, out)) == 0
    printed = capsys.readouterr().out
    mrrs = _valid_mrrs(out)
    # this seeded run improves at every validation (the oracle: the last is the strict best)
    assert len(mrrs) == 3 and mrrs[-1] > max(mrrs[:-1])
    assert (
        "trained 3 epochs (reached --epochs 3 while validation MRR was still improving: best "
        f"at epoch 3, MRR {mrrs[-1]:.4f}; raise --epochs)"
    ) in printed
    assert "stopped early" not in printed


def test_end_of_run_says_stopped_early_only_when_patience_ran_out(folder, tmp_path, capsys):
    # SGD with a vanishing step leaves every rank unchanged: no improvement after epoch 1
    frozen = ("--optimizer", "sgd", "--lr", "1e-12", "--epochs", "10")
    assert _main(_train_argv(folder, tmp_path / "a", *frozen, "--patience", "2")) == 0
    printed = capsys.readouterr().out
    mrrs = _valid_mrrs(tmp_path / "a")
    assert len(mrrs) == 3 and mrrs[0] == mrrs[1] == mrrs[2]
    assert (
        f"trained 3 epochs (best validation epoch 1, MRR {mrrs[0]:.4f}, stopped early: 2 "
        "validations without improvement (--patience))"
    ) in printed
    assert "raise --epochs" not in printed
    # at the cap without improvement, and patience not run out: neither note
    short = ("--optimizer", "sgd", "--lr", "1e-12", "--epochs", "3", "--patience", "5")
    assert _main(_train_argv(folder, tmp_path / "b", *short)) == 0
    printed = capsys.readouterr().out
    assert f"trained 3 epochs (best validation epoch 1, MRR {mrrs[0]:.4f})" in printed
    assert "stopped early" not in printed and "raise --epochs" not in printed


def test_end_of_run_without_validation_says_so(folder, tmp_path, capsys):
    # best_valid_mrr_ is None (was NaN) without validation: the line names no MRR, no "nan"
    assert _main(_train_argv(folder, tmp_path / "a", "--eval-every", "0")) == 0
    printed = capsys.readouterr().out
    assert "trained 3 epochs (no validation)" in printed and "nan" not in printed.lower()


def test_only_the_dropped_triples_warning_becomes_a_line(capsys):
    with pytest.warns(RuntimeWarning, match="another warning") as record:
        with dropped_triples_as_lines():
            warnings.warn("another warning", RuntimeWarning, stacklevel=1)
            warnings.warn("toy: dropped 1 of 2 test triples", UnknownLabelsDropped, stacklevel=1)
    assert [w.category for w in record] == [RuntimeWarning]
    assert capsys.readouterr().err == "graphlib: warning: toy: dropped 1 of 2 test triples\n"
    # a failure inside still shows the line (the dataset that raised may have warned first)
    with pytest.raises(GraphDataError), dropped_triples_as_lines():
        warnings.warn("toy: dropped 3 of 4 valid triples", UnknownLabelsDropped, stacklevel=1)
        raise GraphDataError("boom")
    assert capsys.readouterr().err == "graphlib: warning: toy: dropped 3 of 4 valid triples\n"
