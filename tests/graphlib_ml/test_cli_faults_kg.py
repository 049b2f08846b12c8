"""Fault injection for the ``graphlib kg`` commands, and every numeric flag of every part.

Output paths are checked before the work, a run folder is locked, a finished run is not
overwritten by accident, and no numeric flag of any subcommand accepts ``nan``.
"""

import argparse
import json
import os
import signal
import time
from pathlib import Path

import pytest
import torch

from graphdata import cli_types
from graphdata.errors import GraphDataError
from graphdata.run_folder import LOCK_NAME, RunFolderLockedError
from graphdata.triples import KGDataset
from graphlib_ml.cli import build_parser
from graphlib_ml.cli.kg import add_subparser
from tests.graphdata.test_run_folder import start_lock_holder


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
        "2",
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


def _epochs(out: Path) -> list[int]:
    return [json.loads(x)["epoch"] for x in (out / "metrics.jsonl").read_text().splitlines()]


# --------------------------------------------------------------------------- output paths


def test_train_refuses_out_at_an_existing_file(folder, tmp_path):
    taken = tmp_path / "taken"
    taken.write_text("mine")
    with pytest.raises(GraphDataError, match=r"--out: expected a folder, got the existing file"):
        _run(_train_argv(folder, taken))
    assert taken.read_text() == "mine"


def test_evaluate_refuses_json_at_a_folder_before_evaluating(tmp_path):
    # The checkpoint does not even exist: the output check comes first, in milliseconds.
    start = time.perf_counter()
    with pytest.raises(GraphDataError, match=r"--json: expected a file path, got the folder"):
        _run(
            [
                "kg",
                "evaluate",
                str(tmp_path / "missing.pt"),
                "--json",
                str(tmp_path),
                "--device",
                "cpu",
            ]
        )
    assert time.perf_counter() - start < 0.5


def test_outputs_in_an_unwritable_folder_are_refused_up_front(folder, tmp_path, monkeypatch):
    locked = tmp_path / "ro"
    locked.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: Path(p) != locked and real(p, mode))
    with pytest.raises(GraphDataError, match=r"--out: expected a writable folder"):
        _run(_train_argv(folder, locked / "run"))
    with pytest.raises(GraphDataError, match=r"--json: expected a writable folder"):
        _run(["kg", "evaluate", str(tmp_path / "missing.pt"), "--json", str(locked / "m.json")])
    assert list(locked.iterdir()) == []


def test_explain_checks_every_output_before_loading(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    base = ["kg", "explain", str(tmp_path / "missing.pt"), "--triple", "a r b", "--device", "cpu"]
    with pytest.raises(GraphDataError, match=r"--out: expected a file path, got the folder"):
        _run([*base, "--out", str(tmp_path)])
    with pytest.raises(GraphDataError, match=r"--json: .* is a file, not a folder"):
        _run([*base, "--json", str(blocker / "e.json")])
    with pytest.raises(GraphDataError, match=r"--save-evaluator: expected a file path"):
        _run([*base, "--save-evaluator", str(tmp_path)])


# --------------------------------------------------------------------------- run folder


def test_a_second_run_into_a_locked_out_names_the_holder(folder, tmp_path):
    out = tmp_path / "run"
    holder = start_lock_holder(out)
    try:
        with pytest.raises(RunFolderLockedError, match=rf"--out: .*in use .*pid {holder.pid}"):
            _run(_train_argv(folder, out))
        assert not (out / "metrics.jsonl").exists()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
    # kill -9 frees the lock: the next run trains and leaves no lock file behind
    assert _run(_train_argv(folder, out)) == 0
    assert _epochs(out) == [1, 2]
    assert not (out / LOCK_NAME).exists()


def test_a_finished_run_is_refused_then_overwrite_starts_over(folder, tmp_path, capsys):
    out = tmp_path / "run"
    assert _run(_train_argv(folder, out, "--epochs", "3")) == 0
    before = (out / "test_metrics.json").read_bytes()
    with pytest.raises(GraphDataError, match=r"finished run .*--resume .*--overwrite"):
        _run(_train_argv(folder, out))
    assert (out / "test_metrics.json").read_bytes() == before and _epochs(out) == [1, 2, 3]
    capsys.readouterr()
    assert _run(_train_argv(folder, out, "--overwrite")) == 0
    printed = capsys.readouterr().out
    assert "--overwrite: removed checkpoint.pt, metrics.jsonl, test_metrics.json" in printed
    assert _epochs(out) == [1, 2]  # a fresh 2-epoch run, not a continuation of the 3-epoch one
    ckpt = torch.load(out / "checkpoint.pt", weights_only=True)
    assert ckpt["training"]["epoch"] == 2


def test_a_killed_run_with_a_checkpoint_is_refused_without_resume(folder, tmp_path):
    out = tmp_path / "run"
    _run(_train_argv(folder, out))
    (out / "test_metrics.json").unlink()  # killed after the checkpoint, before the test metrics
    with pytest.raises(GraphDataError, match=r"a run's checkpoint \(checkpoint.pt\)"):
        _run(_train_argv(folder, out))
    assert _run(_train_argv(folder, out, "--epochs", "3", "--resume")) == 0
    assert _epochs(out) == [1, 2, 3]


def test_resume_and_overwrite_together_is_a_usage_error(folder, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        _run(_train_argv(folder, tmp_path / "run", "--resume", "--overwrite"))
    assert stop.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_resume_with_a_folder_at_the_checkpoint_is_refused_up_front(folder, tmp_path):
    out = tmp_path / "run"
    (out / "checkpoint.pt").mkdir(parents=True)
    with pytest.raises(GraphDataError, match=r"checkpoint.pt.* got a folder; move it away"):
        _run(_train_argv(folder, out, "--resume"))
    assert not (out / "metrics.jsonl").exists()  # refused before the run wrote anything


def test_resume_without_a_checkpoint_says_it_starts_from_scratch(folder, tmp_path, capsys):
    out = tmp_path / "run"
    assert _run(_train_argv(folder, out, "--resume")) == 0
    assert "--resume: no checkpoint at" in capsys.readouterr().out
    assert _epochs(out) == [1, 2]


def test_train_writes_through_dangling_symlinks_in_out(folder, tmp_path):
    # Links set up before the first run (e.g. the checkpoint on another disk) name files that
    # do not exist yet; the atomic writer creates them, so the run must not refuse the links.
    out, store = tmp_path / "run", tmp_path / "store"
    out.mkdir()
    names = ("checkpoint.pt", "metrics.jsonl", "test_metrics.json")
    for name in names:
        (out / name).symlink_to(store / name)
    assert _run(_train_argv(folder, out)) == 0
    assert all((out / name).is_symlink() and (store / name).is_file() for name in names)
    ckpt = torch.load(store / "checkpoint.pt", weights_only=True)
    assert ckpt["training"]["epoch"] == 2 and _epochs(out) == [1, 2]
    assert _run(_train_argv(folder, out, "--epochs", "3", "--resume")) == 0
    assert _epochs(store) == [1, 2, 3] and (out / "checkpoint.pt").is_symlink()


def _state(path: Path) -> dict:
    return torch.load(path, weights_only=True)["model"]["state"]


def _records(path: Path) -> list[dict]:
    """The log's records without their wall-clock ``seconds``."""
    lines = path.read_text().splitlines()
    return [{k: v for k, v in json.loads(x).items() if k != "seconds"} for x in lines]


def test_overwrite_keeps_symlinks_in_out_and_replaces_their_targets(folder, tmp_path, capsys):
    # --overwrite unlinked the links themselves: the new run then wrote plain files into --out
    # and the old run's checkpoint and log stayed at the link targets.
    out, store, plain = tmp_path / "run", tmp_path / "store", tmp_path / "plain"
    out.mkdir()
    store.mkdir()
    (out / "checkpoint.pt").symlink_to(store / "ckpt.pt")
    (out / "metrics.jsonl").symlink_to(Path("..") / "store" / "log.jsonl")  # a relative link
    (out / "notes.txt").write_text("mine")
    (store / "other.pt").write_text("not the run's")
    assert _run(_train_argv(folder, out, "--epochs", "3")) == 0
    old = _state(store / "ckpt.pt")
    assert [r["epoch"] for r in _records(store / "log.jsonl")] == [1, 2, 3]
    capsys.readouterr()
    assert _run(_train_argv(folder, out, "--overwrite", "--seed", "7")) == 0
    # The links are still there and point where they did.
    assert (out / "checkpoint.pt").is_symlink() and (out / "metrics.jsonl").is_symlink()
    assert os.readlink(out / "checkpoint.pt") == str(store / "ckpt.pt")
    assert os.readlink(out / "metrics.jsonl") == os.path.join("..", "store", "log.jsonl")
    printed = capsys.readouterr().out
    assert f"checkpoint.pt (through its link, {store / 'ckpt.pt'})" in printed
    # Oracle: the same run into a folder without links.
    assert _run(_train_argv(folder, plain, "--seed", "7")) == 0
    new, want = _state(store / "ckpt.pt"), _state(plain / "checkpoint.pt")
    assert new.keys() == want.keys() and all(torch.equal(new[k], want[k]) for k in want)
    assert not all(torch.equal(new[k], old[k]) for k in old)  # not the first (3-epoch) run
    assert _records(store / "log.jsonl") == _records(plain / "metrics.jsonl")
    assert [r["epoch"] for r in _records(store / "log.jsonl")] == [1, 2]
    test_metrics = out / "test_metrics.json"
    assert not test_metrics.is_symlink()
    assert test_metrics.read_text() == (plain / "test_metrics.json").read_text()
    # Nothing but the run's own files was touched.
    assert (out / "notes.txt").read_text() == "mine"
    assert (store / "other.pt").read_text() == "not the run's"
    assert sorted(p.name for p in out.iterdir()) == [
        "checkpoint.pt",
        "metrics.jsonl",
        "notes.txt",
        "test_metrics.json",
    ]
    assert sorted(p.name for p in store.iterdir()) == ["ckpt.pt", "log.jsonl", "other.pt"]


# --------------------------------------------------------------------------- numeric flags


def _subcommands(parser, path=()):
    """Yield (command path, parser) for every leaf subcommand of ``parser``."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for name, child in subs[0].choices.items():
        yield from _subcommands(child, (*path, name))


def _numeric_flags():
    """Every (command path, flag, action) with a ``type`` under every subcommand.

    Comma-separated list flags (``--path-relations a,b``) are not numbers and are left out.
    """
    rows = []
    for path, parser in _subcommands(build_parser()):
        for action in parser._actions:
            if (
                action.type is not None
                and action.option_strings
                and not hasattr(action.type, "list_of")
            ):
                rows.append((path, action.option_strings[-1], action))
    return rows


NUMERIC = _numeric_flags()


def _required_argv(parser, skip):
    """Dummy values for the required arguments of ``parser`` except the action ``skip``."""
    argv = []
    for action in parser._actions:
        if action is skip or isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        if not action.option_strings:
            argv.append("x")
        elif action.required:
            argv += [action.option_strings[-1], "x"]
    for group in parser._mutually_exclusive_groups:
        if group.required:
            argv += [group._group_actions[0].option_strings[-1], "x"]
    return argv


def test_the_walk_finds_the_numeric_flags_of_every_part():
    found = {(path[0], flag) for path, flag, _ in NUMERIC}
    for expected in [
        ("kg", "--margin"),
        ("kg", "--top"),
        ("kg", "--min-gain"),
        ("graphon", "--samples"),
        ("graphon", "--val-fraction"),
        ("spatial", "--horizon"),
        ("spatial", "--cells"),
        ("demo", "--seed"),
        ("data", "--num-people"),
        ("kg", "--evaluator-steps"),
    ]:
        assert expected in found
    assert {path[0] for path, _, _ in NUMERIC} == {"demo", "data", "kg", "graphon", "spatial"}
    assert len(NUMERIC) >= 49  # 49 before the flags were generated from the configs


@pytest.mark.parametrize(
    ("path", "flag", "action"), NUMERIC, ids=[" ".join((*p, f)) for p, f, _ in NUMERIC]
)
def test_every_numeric_flag_uses_a_validating_type_and_refuses_nan(path, flag, action, capsys):
    assert action.type not in (int, float), f"{' '.join(path)} {flag}: use graphdata.cli_types"
    assert isinstance(action.type, cli_types.NumberType), f"{' '.join(path)} {flag}"
    parser = build_parser()
    leaf = dict(_subcommands(parser))[path]
    mine = next(a for a in leaf._actions if flag in a.option_strings)
    argv = [*path, *_required_argv(leaf, mine), flag, "nan"]
    with pytest.raises(SystemExit) as stop:
        parser.parse_args(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}: expected " in err and "got 'nan'" in err
    # the default is kept as it was (a number or None, never re-parsed)
    assert action.default is None or isinstance(action.default, (int, float))
    assert action.default is None or action.type.in_range(action.default)


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [
        ("--margin", "inf", "a finite number >= 0"),
        ("--adversarial-temperature", "nan", "a finite number >= 0"),
        ("--regularizer-weight", "-1e999", "a finite number >= 0"),
        ("--lr", "0", "a finite number > 0"),
        ("--label-smoothing", "1", "a finite number in [0, 1)"),
        ("--epochs", "0", "an integer >= 1"),
        ("--eval-every", "-1", "an integer >= 0"),
    ],
)
def test_kg_train_flags_refuse_bad_values_at_parse_time(flag, value, expected, capsys):
    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args(["kg", "train", f"{flag}={value}"])
    assert stop.value.code == 2
    assert f"argument {flag}: expected {expected}, got {value!r}" in capsys.readouterr().err


def test_valid_values_still_parse_to_the_same_numbers():
    args = build_parser().parse_args(
        ["kg", "train", "--margin", "9", "--lr", "1e-3", "--eval-every", "0", "--seed", "7"]
    )
    assert (args.margin, args.lr, args.eval_every, args.seed) == (9.0, 1e-3, 0, 7)
    assert args.dim is None and args.num_people == 300


# --------------------------------------------------------------------------- bad input files


def test_explain_with_a_file_that_is_not_an_evaluator_gives_one_message(folder, tmp_path):
    out = tmp_path / "run"
    _run(_train_argv(folder, out, "--epochs", "1"))
    junk = tmp_path / "junk.pt"
    for content in (os.urandom(512), b"hello\n", b""):
        junk.write_bytes(content)
        with pytest.raises(GraphDataError, match=r"--evaluator|evaluator"):
            _run(
                [
                    "kg",
                    "explain",
                    str(out / "checkpoint.pt"),
                    "--triple",
                    "city0 road_to city1",
                    "--evaluator",
                    str(junk),
                    "--device",
                    "cpu",
                    "--out",
                    str(tmp_path / "e.png"),
                ]
            )


# --------------------------------------------------------------------------- probes, round 5


@pytest.mark.parametrize("command", ["train", "evaluate", "predict"])
def test_a_device_without_data_is_refused_naming_the_flag(folder, tmp_path, command):
    out = tmp_path / "run"
    if command == "train":
        argv = _train_argv(folder, out)
        argv[argv.index("--device") + 1] = "meta"
    else:
        _run(_train_argv(folder, out))
        argv = ["kg", command, str(out / "checkpoint.pt"), "--device", "meta"]
        argv += ["--head", "city0", "--relation", "near"] if command == "predict" else []
    with pytest.raises(GraphDataError, match=r"--device: expected .* got 'meta'.*--device cpu"):
        _run(argv)


@pytest.mark.parametrize("command", ["evaluate", "predict"])
def test_cpu_with_an_index_loads_a_checkpoint(folder, tmp_path, command, capsys):
    out = tmp_path / "run"
    _run(_train_argv(folder, out))
    argv = ["kg", command, str(out / "checkpoint.pt"), "--device", "cpu:0"]
    argv += ["--head", "city0", "--relation", "near"] if command == "predict" else ["--no-progress"]
    capsys.readouterr()
    assert _run(argv) == 0  # was "could not be read as a weights-only torch file"
    assert ("city" if command == "predict" else "filtered ranks") in capsys.readouterr().out


def test_a_resume_with_changed_settings_warns_in_one_plain_line(folder, tmp_path, capsys):
    out = tmp_path / "run"
    _run(_train_argv(folder, out))
    (out / "test_metrics.json").unlink()  # killed before the test metrics
    capsys.readouterr()
    assert _run(_train_argv(folder, out, "--epochs", "3", "--lr", "0.5", "--resume")) == 0
    err = capsys.readouterr().err
    assert "graphlib: warning: resuming with a config that differs from the checkpoint's in lr" in (
        err
    )
    assert "UserWarning" not in err and "kg.py" not in err  # no Python warning format


def _empty_test_folder(folder: Path, tmp_path: Path) -> Path:
    data = tmp_path / "empty-test"
    data.mkdir()
    for name in ("train.txt", "valid.txt"):
        (data / name).write_text((folder / name).read_text())
    (data / "test.txt").write_text("")
    return data


def test_train_with_an_empty_test_split_is_refused_before_training(folder, tmp_path):
    out = tmp_path / "run"
    with pytest.raises(GraphDataError, match=r"--dataset: the test split .* holds no triples"):
        _run(_train_argv(_empty_test_folder(folder, tmp_path), out))
    assert not (out / "checkpoint.pt").exists()  # refused before any epoch


def test_evaluate_of_an_empty_split_is_refused_never_a_nan_table(folder, tmp_path, capsys):
    from kg.config import TrainingConfig
    from kg.training import Trainer, build_model

    data = _empty_test_folder(folder, tmp_path)
    dataset = KGDataset.from_folder(data)
    config = TrainingConfig.from_defaults(
        "distmult", epochs=1, progress=False, checkpoint_path=str(tmp_path / "ckpt.pt")
    )
    Trainer(build_model("distmult", dataset, config, dim=4), config).fit(dataset)
    argv = ["kg", "evaluate", str(tmp_path / "ckpt.pt"), "--dataset", str(data), "--no-progress"]
    with pytest.raises(GraphDataError, match=r"--split: the test split .* holds no triples"):
        _run(argv)
    assert "nan" not in capsys.readouterr().out


@pytest.mark.parametrize(
    "change, flag",
    [(("--dim", "4"), "pass --dim 8"), (("--no-reciprocal",), "pass --reciprocal")],
)
def test_a_resume_with_another_model_shape_names_the_flag_to_pass(folder, tmp_path, change, flag):
    out = tmp_path / "run"
    _run(_train_argv(folder, out, "--reciprocal"))
    (out / "test_metrics.json").unlink()  # killed before the test metrics
    with pytest.raises(GraphDataError, match=rf"model config .* in \w+;.* {flag}, or train afresh"):
        _run(_train_argv(folder, out, *change, "--resume", "--epochs", "3"))
