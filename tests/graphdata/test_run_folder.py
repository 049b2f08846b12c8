"""Fault injection: graphdata.run_folder (output checks, the run lock) and graphdata.cli_types."""

import argparse
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphdata import cli_types
from graphdata.errors import GraphDataError
from graphdata.run_folder import (
    LOCK_NAME,
    RunFolderLockedError,
    check_output_file,
    check_output_folder,
    check_run_state,
    lock_holder,
    remove_run_files,
    run_lock,
)

REPO = Path(__file__).resolve().parents[2]

#: Every ready-made type of the module, by name (the table the tests walk).
TYPES = {
    name: value
    for name, value in vars(cli_types).items()
    if isinstance(value, cli_types.NumberType)
}
NON_FINITE = ["nan", "NaN", "-nan", "inf", "-inf", "+inf", "Infinity", "1e999", "-1e999"]


# --------------------------------------------------------------------------- cli_types


def test_the_module_offers_the_documented_types():
    assert {
        "positive_float",
        "nonnegative_float",
        "positive_int",
        "nonnegative_int",
        "probability",
        "fraction",
        "seed",
    } <= set(TYPES)


@pytest.mark.parametrize("name", sorted(TYPES))
@pytest.mark.parametrize("text", NON_FINITE)
def test_every_type_refuses_every_non_finite_string(name, text):
    kind = TYPES[name]
    got = re.escape(repr(text))
    with pytest.raises(argparse.ArgumentTypeError, match=rf"expected .*, got {got}; pass"):
        kind(text)


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_finite_float_accepts_exactly_the_finite_in_range_values(x):
    kind = cli_types.finite_float(-2.5, 7.0, max_inclusive=False)
    ok = math.isfinite(x) and -2.5 <= x < 7.0
    if ok:
        assert kind(repr(x)) == x
    else:
        with pytest.raises(argparse.ArgumentTypeError, match=r"in \[-2.5, 7\)"):
            kind(repr(x))


@given(st.integers(min_value=-(10**30), max_value=10**30))
def test_integer_types_accept_exactly_their_range(n):
    for name, kind in TYPES.items():
        if kind.kind != "int":
            continue
        inside = (kind.min is None or n >= kind.min) and (kind.max is None or n <= kind.max)
        if inside:
            assert kind(str(n)) == n, name
        else:
            with pytest.raises(argparse.ArgumentTypeError, match=f"got '{n}'"):
                kind(str(n))


@given(st.floats(min_value=1e-300, max_value=1e300))
def test_positive_float_round_trips_positive_values(x):
    assert cli_types.positive_float(repr(x)) == x
    assert cli_types.nonnegative_float(repr(x)) == x


@pytest.mark.parametrize("text", ["1.5", "1e3", "two", "", "0x10"])
def test_integer_types_refuse_non_integer_text(text):
    with pytest.raises(argparse.ArgumentTypeError, match="expected an integer >= 1"):
        cli_types.positive_int(text)


def test_boundaries_and_messages():
    assert cli_types.nonnegative_float("0") == 0.0
    with pytest.raises(argparse.ArgumentTypeError, match=r"expected a finite number > 0, got '0'"):
        cli_types.positive_float("0")
    assert cli_types.probability("1") == 1.0
    with pytest.raises(argparse.ArgumentTypeError, match=r"in \[0, 1\), got '1'"):
        cli_types.fraction("1")
    assert cli_types.seed(str(cli_types.SEED_MAX)) == cli_types.SEED_MAX
    with pytest.raises(argparse.ArgumentTypeError):
        cli_types.seed(str(cli_types.SEED_MAX + 1))


def test_argparse_reports_the_flag_and_exits_2(capsys):
    parser = argparse.ArgumentParser(prog="p")
    parser.add_argument("--margin", type=cli_types.nonnegative_float)
    with pytest.raises(SystemExit) as stop:
        parser.parse_args(["--margin", "nan"])
    assert stop.value.code == 2
    assert "argument --margin: expected a finite number >= 0, got 'nan'" in capsys.readouterr().err


def test_bad_bounds_are_refused_when_the_type_is_built():
    with pytest.raises(ValueError, match="min"):
        cli_types.finite_float(math.nan)
    with pytest.raises(ValueError, match="min <= max"):
        cli_types.integer(3, 1)


# --------------------------------------------------------------------------- output checks


def test_output_file_accepts_new_existing_symlink_fifo_and_dev_null(tmp_path):
    assert check_output_file(tmp_path / "a" / "b" / "new.json", argument="--json")
    existing = tmp_path / "old.json"
    existing.write_text("{}")
    assert check_output_file(existing, argument="--json") == existing
    link = tmp_path / "link.json"
    link.symlink_to(existing)
    assert check_output_file(link, argument="--json") == link
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert check_output_file(fifo, argument="--json") == fifo
    assert check_output_file("/dev/null", argument="--json") == Path("/dev/null")


def test_output_file_refuses_a_folder_and_a_symlink_to_one(tmp_path):
    with pytest.raises(GraphDataError, match=r"--json: expected a file path, got the folder"):
        check_output_file(tmp_path, argument="--json")
    link = tmp_path / "to_dir"
    link.symlink_to(tmp_path)
    with pytest.raises(GraphDataError, match="--out: expected a file path"):
        check_output_file(link, argument="--out")


def test_output_file_refuses_a_path_under_a_regular_file(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(GraphDataError, match=r"--json: .* is a file, not a folder"):
        check_output_file(blocker / "sub" / "m.json", argument="--json")


def test_output_checks_refuse_an_unwritable_folder(tmp_path, monkeypatch):
    # Tests run as root, where os.access is always true: inject the answer a user would get.
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: Path(p) != tmp_path and real(p, mode))
    with pytest.raises(GraphDataError, match=r"--json: expected a writable folder .*cannot write"):
        check_output_file(tmp_path / "m.json", argument="--json")
    with pytest.raises(GraphDataError, match=r"--out: expected a writable folder .*cannot write"):
        check_output_folder(tmp_path / "run", argument="--out")
    with pytest.raises(GraphDataError, match=r"--out: expected a writable folder"):
        check_output_folder(tmp_path, argument="--out")


def test_output_folder_refuses_an_existing_file_and_accepts_folders(tmp_path):
    taken = tmp_path / "taken"
    taken.write_text("x")
    with pytest.raises(GraphDataError, match=r"--out: expected a folder, got the existing file"):
        check_output_folder(taken, argument="--out")
    with pytest.raises(GraphDataError, match="is a file, not a folder"):
        check_output_folder(taken / "run", argument="--out")
    assert check_output_folder(tmp_path, argument="--out") == tmp_path
    assert check_output_folder(tmp_path / "x" / "y", argument="--out") == tmp_path / "x" / "y"
    assert not (tmp_path / "x").exists()  # checking creates nothing


# --------------------------------------------------------------------------- the run lock


def test_lock_is_exclusive_within_a_process_and_released_on_exit(tmp_path):
    run = tmp_path / "run"
    with run_lock(run):
        assert lock_holder(run) == os.getpid()
        with pytest.raises(RunFolderLockedError, match=rf"pid {os.getpid()}\)") as err:
            with run_lock(run, argument="--out"):
                ...
        assert err.value.pid == os.getpid()
        assert isinstance(err.value, GraphDataError)
    assert not (run / LOCK_NAME).exists()
    with run_lock(run):  # free again
        ...


def test_lock_is_released_when_the_block_raises(tmp_path):
    with pytest.raises(RuntimeError):
        with run_lock(tmp_path):
            raise RuntimeError("boom")
    with run_lock(tmp_path):
        ...


def test_a_stale_lock_file_of_a_dead_process_is_taken_over(tmp_path):
    (tmp_path / LOCK_NAME).write_text("999999999\n")
    with run_lock(tmp_path):
        assert lock_holder(tmp_path) == os.getpid()


# The holder imports graphdata.run_folder without running graphdata/__init__ (which imports
# torch, seconds per process): a bare package module whose __path__ is the source folder.
_HOLDER = (
    "import sys, time, types\n"
    "pkg = types.ModuleType('graphdata')\n"
    "pkg.__path__ = [sys.argv[2]]\n"
    "sys.modules['graphdata'] = pkg\n"
    "from graphdata.run_folder import run_lock\n"
    "with run_lock(sys.argv[1]):\n"
    "    print('locked', flush=True)\n"
    "    time.sleep(60)\n"
)


def start_lock_holder(folder: Path) -> subprocess.Popen:
    """A second process that takes the lock on ``folder`` and sleeps (shared with other tests)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(folder), str(REPO / "graphdata")],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_a_second_process_gets_the_holders_pid_and_the_lock_frees_on_sigkill(tmp_path):
    run = tmp_path / "run"
    holder = start_lock_holder(run)
    try:
        with pytest.raises(RunFolderLockedError, match=rf"in use .*\(pid {holder.pid}\); wait"):
            with run_lock(run):
                ...
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
    assert lock_holder(run) == holder.pid  # kill -9: the file stays, the lock does not
    start = time.perf_counter()
    with run_lock(run):
        assert lock_holder(run) == os.getpid()
    assert time.perf_counter() - start < 1.0


# --------------------------------------------------------------------------- run state

_FILES = ("checkpoint.pt", "metrics.jsonl", "test_metrics.json")


def _state(folder, **flags):
    return check_run_state(
        folder, finished="test_metrics.json", checkpoint="checkpoint.pt", owned=_FILES, **flags
    )


@pytest.mark.parametrize(
    ("present", "resume", "overwrite", "refused"),
    [
        ((), False, False, None),
        (("metrics.jsonl",), False, False, None),
        (("test_metrics.json",), False, False, "already holds a finished run"),
        (("checkpoint.pt",), False, False, "already holds a run's checkpoint"),
        (_FILES, False, False, "finished run"),
        (_FILES, True, False, None),
        (_FILES, False, True, None),
        ((), True, True, "expected at most one, got both"),
    ],
)
def test_run_state_table(tmp_path, present, resume, overwrite, refused):
    for name in present:
        (tmp_path / name).write_text("x")
    if refused:
        with pytest.raises(GraphDataError, match=refused):
            _state(tmp_path, resume=resume, overwrite=overwrite)
    else:
        found = _state(tmp_path, resume=resume, overwrite=overwrite)
        assert sorted(p.name for p in found) == sorted(present)


@pytest.mark.parametrize(
    "flags",
    [
        {"resume": True, "overwrite": False},
        {"resume": False, "overwrite": True},
        {"resume": False, "overwrite": False},
    ],
)
def test_a_folder_at_the_checkpoint_path_is_refused_whatever_the_flags(tmp_path, flags):
    (tmp_path / "checkpoint.pt").mkdir()
    with pytest.raises(GraphDataError, match=r"checkpoint.pt.* got a folder; move it away"):
        _state(tmp_path, **flags)


def test_the_refusal_names_both_ways_out(tmp_path):
    (tmp_path / "test_metrics.json").write_text("{}")
    with pytest.raises(GraphDataError, match="pass --resume to continue it, --overwrite to start"):
        _state(tmp_path, resume=False, overwrite=False)


def test_a_missing_folder_is_a_fresh_run(tmp_path):
    assert _state(tmp_path / "nope", resume=False, overwrite=False) == []


@pytest.mark.parametrize(
    "flags",
    [
        {"resume": True, "overwrite": False},
        {"resume": False, "overwrite": True},
        {"resume": False, "overwrite": False},
    ],
)
def test_a_dangling_symlink_at_a_run_file_is_a_file_still_to_write(tmp_path, flags):
    # The atomic writer creates the file a dangling link names, as open() does: nothing is
    # there yet, so the state is that of a missing file (a fresh run), not a refusal.
    for name in ("checkpoint.pt", "test_metrics.json"):
        (tmp_path / name).symlink_to(tmp_path / "elsewhere" / name)
    assert _state(tmp_path, **flags) == []
    loop = tmp_path / "metrics.jsonl"
    loop.symlink_to(loop)  # a link that names itself is still refused
    with pytest.raises(GraphDataError, match=r"metrics.jsonl.* got not a regular file"):
        _state(tmp_path, **flags)


def test_remove_run_files_removes_through_links_and_keeps_the_links(tmp_path):
    # What --overwrite removes: the file a link names (at the end of a chain), never the link,
    # and nothing beside the run's files.
    run, store = tmp_path / "run", tmp_path / "store"
    run.mkdir()
    store.mkdir()
    (run / "test_metrics.json").write_text("{}")
    (store / "ckpt.pt").write_text("old")
    (store / "hop").symlink_to(store / "ckpt.pt")
    (run / "checkpoint.pt").symlink_to(store / "hop")  # a chain: run -> hop -> ckpt.pt
    (store / "keep.txt").write_text("not the run's")
    found = _state(run, resume=False, overwrite=True)
    removed = remove_run_files(found)
    assert {(file.name, real) for file, real in removed} == {
        ("checkpoint.pt", store / "ckpt.pt"),
        ("test_metrics.json", run / "test_metrics.json"),
    }
    assert os.readlink(run / "checkpoint.pt") == str(store / "hop")
    assert os.readlink(store / "hop") == str(store / "ckpt.pt")
    assert not (store / "ckpt.pt").exists() and not (run / "test_metrics.json").exists()
    assert sorted(p.name for p in store.iterdir()) == ["hop", "keep.txt"]
    assert _state(run, resume=False, overwrite=False) == []  # a dangling link: a fresh run


def test_remove_run_files_removes_nothing_when_a_target_folder_is_read_only(tmp_path, monkeypatch):
    run, store = tmp_path / "run", tmp_path / "store"
    run.mkdir()
    store.mkdir()
    (run / "test_metrics.json").write_text("{}")
    (store / "ckpt.pt").write_text("old")
    (run / "checkpoint.pt").symlink_to(store / "ckpt.pt")
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: Path(p) != store and real(p, mode))
    with pytest.raises(
        GraphDataError, match=r"--overwrite: .*checkpoint.pt, .*ckpt.pt' \(named by the link"
    ):
        remove_run_files(_state(run, resume=False, overwrite=True))
    assert (store / "ckpt.pt").read_text() == "old"
    assert (run / "test_metrics.json").read_text() == "{}"
