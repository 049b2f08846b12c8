"""Fault injection for ``graphlib graphon densities`` and ``graphlib graphon transfer``.

Outputs are checked before any graph is sampled or network built; ``transfer`` locks its
``--out`` folder; numeric flags refuse non-finite values at parse time.
"""

import argparse
import signal
import time

import pytest

from graphdata.errors import GraphDataError
from graphdata.run_folder import RunFolderLockedError
from graphlib_ml.cli.graphon import add_subparser
from tests.graphdata.test_run_folder import start_lock_holder


def _run(argv):
    parser = argparse.ArgumentParser(prog="graphlib")
    add_subparser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["graphon", *argv])
    return args.func(args)


_DENSITIES = ["densities", "--sizes", "1500", "--samples", "20", "--device", "cpu"]
_TRANSFER = [
    "transfer",
    "--models",
    "mpnn",
    "--sizes",
    "10,20",
    "--samples",
    "3",
    "--hidden",
    "3",
    "--device",
    "cpu",
]


def test_densities_refuses_out_at_a_folder_before_sampling(tmp_path):
    # 20 graphs of 1,500 nodes take seconds: the refusal must come first.
    start = time.perf_counter()
    with pytest.raises(GraphDataError, match=r"--out: expected a file path, got the folder"):
        _run([*_DENSITIES, "--out", str(tmp_path)])
    assert time.perf_counter() - start < 0.5


def test_densities_refuses_out_under_a_regular_file(tmp_path):
    blocker = tmp_path / "f"
    blocker.write_text("x")
    with pytest.raises(GraphDataError, match=r"--out: .* is a file, not a folder"):
        _run([*_DENSITIES, "--out", str(blocker / "d.png")])


def test_transfer_refuses_out_at_an_existing_file(tmp_path):
    taken = tmp_path / "taken"
    taken.write_text("mine")
    with pytest.raises(GraphDataError, match=r"--out: expected a folder, got the existing file"):
        _run([*_TRANSFER, "--out", str(taken)])
    assert taken.read_text() == "mine"


def test_transfer_refuses_a_folder_where_one_of_its_files_goes(tmp_path):
    (tmp_path / "transfer.json").mkdir()
    start = time.perf_counter()
    refused = r"--out: expected a file path, got the folder .*transfer.json'"
    with pytest.raises(GraphDataError, match=refused):
        _run([*_TRANSFER, "--out", str(tmp_path)])
    assert time.perf_counter() - start < 0.5
    assert not (tmp_path / "transfer_table.md").exists()


def test_transfer_bad_sizes_are_refused_before_the_folder_is_made(tmp_path):
    with pytest.raises(GraphDataError, match="--sizes: expected ints >= 2"):
        _run([*_TRANSFER[:3], "--sizes", "1,5", "--out", str(tmp_path / "new")])
    assert not (tmp_path / "new").exists()


def test_transfer_into_a_locked_folder_names_the_holder(tmp_path):
    out = tmp_path / "run"
    holder = start_lock_holder(out)
    try:
        with pytest.raises(RunFolderLockedError, match=rf"in use .*pid {holder.pid}"):
            _run([*_TRANSFER, "--out", str(out)])
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
    assert _run([*_TRANSFER, "--out", str(out)]) == 0
    assert (out / "transfer.json").stat().st_size > 0


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["densities", "--samples", "nan"], "--samples"),
        (["transfer", "--val-fraction", "nan"], "--val-fraction"),
        (["transfer", "--lr", "inf"], "--lr"),
        (["transfer", "--weight-decay", "1e999"], "--weight-decay"),
        (["transfer", "--samples", "1"], "--samples"),
    ],
)
def test_numeric_flags_refuse_at_parse_time(argv, flag, capsys):
    with pytest.raises(SystemExit) as stop:
        _run(argv)
    assert stop.value.code == 2
    assert f"argument {flag}: expected " in capsys.readouterr().err
