"""Fault injection for the ``graphlib`` command's one top-level handler (issue 15).

Every expected failure must end as ONE ``graphlib: error:`` line on stderr with its exit code
(2 bad input, 1 failed run, 130 interrupted, 141 closed stdout), never a traceback; ``--debug``
(or ``GRAPHLIB_DEBUG=1``) shows the traceback. The table tests the mapping itself; the other
tests inject the faults for real (a path under a file, an unreadable file, a failing file
object, a tiny tmpfs, SIGINT, a closed pipe) in-process through ``main`` or in a subprocess.
"""

import builtins
import errno
import io
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphdata.kg_stats
import graphlib_ml.cli.spatial
import graphlib_ml.demo
from graphdata.errors import GraphDataError, TSVFormatError
from graphlib_ml.cli import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_RUNTIME,
    EXIT_USAGE,
    describe_failure,
    main,
)
from kg.training import TrainingDivergedError

ROOT = Path(__file__).resolve().parents[2]
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
TORCH_FULL_DISK = "[enforce fail at inline_container.cc:672] . unexpected pos 576 vs 534"


def _one_error_line(err: str) -> str:
    """The single non-empty stderr line, checked to be a graphlib error and no traceback."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err, err
    assert len(lines) == 1, err
    assert lines[0].startswith("graphlib: error: "), err
    return lines[0]


# ---------------------------------------------------------------------------------------------
# The mapping: exception -> exit code and message fragments.

CASES = [
    (
        PermissionError(13, "Permission denied", "/data/train.txt"),
        EXIT_RUNTIME,
        ["permission denied", "/data/train.txt", "permissions"],
    ),
    (
        FileNotFoundError(2, "No such file or directory", "/data/missing"),
        EXIT_RUNTIME,
        ["no such file or directory", "/data/missing", "existing"],
    ),
    (
        FileNotFoundError("path: expected a folder with train.txt, but /d is not a folder"),
        EXIT_RUNTIME,
        ["/d is not a folder", "check the path"],
    ),
    (
        IsADirectoryError(21, "Is a directory", "/runs/out.json"),
        EXIT_RUNTIME,
        ["is a directory", "/runs/out.json", "pass a file path"],
    ),
    (
        NotADirectoryError(20, "Not a directory", "/runs/file/out"),
        EXIT_RUNTIME,
        ["not a directory", "/runs/file/out", "is a file, not a folder"],
    ),
    (
        OSError(errno.ENOSPC, "No space left on device"),
        EXIT_RUNTIME,
        ["no space left on device", "writing OUT", "free some space"],
    ),
    (
        OSError(errno.ENOSPC, "No space left on device", "/full/ckpt.pt"),
        EXIT_RUNTIME,
        ["no space left on device", "/full/ckpt.pt"],
    ),
    (
        OSError(errno.EROFS, "Read-only file system", "/mnt/ro/x.json"),
        EXIT_RUNTIME,
        ["read-only file system", "/mnt/ro/x.json", "writable file system"],
    ),
    (
        OSError(errno.EACCES, "Permission denied", "/a", None, "/b"),
        EXIT_RUNTIME,
        ["permission denied", "/a -> /b"],
    ),
    (
        OSError("Unable to synchronously open file (file signature not found)"),
        EXIT_RUNTIME,
        ["file signature not found", "ARG"],
    ),
    (
        RuntimeError(TORCH_FULL_DISK),
        EXIT_RUNTIME,
        ["unexpected pos", "disk is probably full", "writing OUT"],
    ),
    (
        RuntimeError(
            "PytorchStreamReader failed reading zip archive: failed finding central directory"
        ),
        EXIT_USAGE,
        ["could not be read as a torch file", "ARG"],
    ),
    (
        pickle.UnpicklingError("Weights only load failed.\n\nIn PyTorch 2.6 ..."),
        EXIT_USAGE,
        ["weights-only torch file", "Weights only load failed", "ARG"],
    ),
    (
        TrainingDivergedError("the loss is nan at epoch 3"),
        EXIT_RUNTIME,
        ["training diverged", "nan at epoch 3", "--lr"],
    ),
    (MemoryError(), EXIT_RUNTIME, ["out of memory", "--batch-size"]),
    (
        torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"),
        EXIT_RUNTIME,
        ["out of memory", "Tried to allocate", "--batch-size"],
    ),
    (
        ModuleNotFoundError("No module named 'torch_geometric'", name="torch_geometric"),
        EXIT_RUNTIME,
        ["package is missing", "pip install torch_geometric"],
    ),
    (KeyboardInterrupt(), EXIT_INTERRUPTED, ["interrupted"]),
    (
        GraphDataError("--margin: expected a finite number > 0, got nan; pass a positive --margin"),
        EXIT_USAGE,
        ["--margin: expected a finite number > 0, got nan"],
    ),
    (
        TSVFormatError("/d/train.txt", 7, "expected 3 columns, got 2"),
        EXIT_USAGE,
        ["/d/train.txt:7"],
    ),
    (
        KeyError("obsm['spatial']: no coordinates; pass spatial_key"),
        EXIT_USAGE,
        ["obsm['spatial']: no coordinates"],
    ),
    (
        UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
        EXIT_USAGE,
        ["not UTF-8", "invalid start byte", "ARG"],
    ),
    (
        RuntimeError("boom"),
        EXIT_RUNTIME,
        ["unexpected RuntimeError: boom", "--debug for the traceback", "ARG"],
    ),
    (
        ValueError("first line\nsecond line\nthird"),
        EXIT_RUNTIME,
        ["unexpected ValueError: first line", "--debug"],
    ),
    (IndexError("pop from empty list"), EXIT_RUNTIME, ["unexpected IndexError", "--debug"]),
]


@pytest.mark.parametrize(
    "err, code, fragments", CASES, ids=[f"{i}-{type(c[0]).__name__}" for i, c in enumerate(CASES)]
)
def test_every_failure_is_one_line_with_its_exit_code(
    err, code, fragments, tmp_path, monkeypatch, capsys
):
    # Raise it from inside a real subcommand with an input and an output, so that main's
    # handler runs and can name them: ARG is the input, OUT the output.
    source, target = str(tmp_path / "in.h5ad"), str(tmp_path / "out.h5ad")

    def fail(args):
        raise err

    monkeypatch.setattr(graphlib_ml.cli.spatial, "_fit", fail)  # bound when main builds the parser
    assert main(["spatial", "fit", source, "--out", target]) == code
    captured = capsys.readouterr()
    line = _one_error_line(captured.err)
    for fragment in fragments:
        assert fragment.replace("ARG", source).replace("OUT", target) in line, line
    assert captured.out == ""


def test_the_mapping_without_a_command_line():
    for err, code, _ in CASES:
        got, line = describe_failure(err)
        assert got == code and line.startswith("graphlib: error: ") and "\n" not in line


def test_interrupted_kg_train_points_at_resume_only_when_a_checkpoint_exists(tmp_path):
    args = _train_namespace(tmp_path)
    code, line = describe_failure(KeyboardInterrupt(), args)
    assert code == EXIT_INTERRUPTED and "no checkpoint was written yet" in line
    (tmp_path / "checkpoint.pt").write_bytes(b"x")
    code, line = describe_failure(KeyboardInterrupt(), args)
    assert "--resume" in line and str(tmp_path / "checkpoint.pt") in line


def _train_namespace(out):
    from graphlib_ml.cli import build_parser

    return build_parser().parse_args(["kg", "train", "--out", str(out)])


# ---------------------------------------------------------------------------------------------
# --debug and GRAPHLIB_DEBUG re-raise.


def _raise_from_stats(monkeypatch, err):
    def fail(path):
        raise err

    monkeypatch.setattr(graphdata.kg_stats, "describe", fail)


def test_debug_flag_reraises(monkeypatch, tmp_path):
    monkeypatch.delenv("GRAPHLIB_DEBUG", raising=False)
    _raise_from_stats(monkeypatch, RuntimeError("boom"))
    with pytest.raises(RuntimeError, match="boom"):
        main(["--debug", "data", "stats", str(tmp_path)])


def test_debug_environment_variable(monkeypatch, tmp_path, capsys):
    _raise_from_stats(monkeypatch, RuntimeError("boom"))
    for value in ("0", "", "no"):
        monkeypatch.setenv("GRAPHLIB_DEBUG", value)
        assert main(["data", "stats", str(tmp_path)]) == EXIT_RUNTIME
        assert "--debug" in _one_error_line(capsys.readouterr().err)
    for value in ("1", "true", "YES"):
        monkeypatch.setenv("GRAPHLIB_DEBUG", value)
        with pytest.raises(RuntimeError, match="boom"):
            main(["data", "stats", str(tmp_path)])


def test_debug_after_the_subcommand_is_a_usage_error_not_a_flag(capsys, tmp_path):
    assert main(["data", "stats", str(tmp_path), "--debug"]) == EXIT_USAGE
    line = _one_error_line(capsys.readouterr().err)
    assert "unrecognized arguments: --debug" in line and "graphlib --help" in line


# ---------------------------------------------------------------------------------------------
# argparse's own errors: one line, exit 2 (returned by main, not raised).


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["nope"], "invalid choice: 'nope'"),
        (["data", "family"], "the following arguments are required: out"),
        (["data", "family", "x", "--num-people", "many"], "--num-people"),
        (["kg", "train", "--model", "nope"], "--model"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(argv, fragment, capsys):
    assert main(argv) == EXIT_USAGE
    line = _one_error_line(capsys.readouterr().err)
    assert fragment in line and "--help" in line


def test_help_still_exits_0(capsys):
    assert main(["--help"]) == 0
    assert "--debug" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------
# Real faults, in-process.


def test_input_under_a_file_is_one_line_exit_1(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    assert main(["data", "stats", str(afile / "train.txt")]) == EXIT_RUNTIME
    assert str(afile / "train.txt") in _one_error_line(capsys.readouterr().err)


def test_permission_denied_on_an_input_file(tmp_path, monkeypatch, capsys):
    # Root reads through chmod 000, so the denial is injected where the reader opens the file.
    data = tmp_path / "kg.tsv"
    data.write_text("a\tr\tb\n", encoding="utf-8")
    real_open = builtins.open

    def guarded_open(file, *args, **kwargs):
        if os.fspath(file) == str(data):
            raise PermissionError(errno.EACCES, "Permission denied", str(data))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded_open)
    monkeypatch.setattr(io, "open", guarded_open)  # pathlib's read_bytes opens through io.open
    assert main(["data", "stats", str(data)]) == EXIT_RUNTIME
    line = _one_error_line(capsys.readouterr().err)
    assert "permission denied" in line and str(data) in line


@pytest.mark.skipif(
    IS_ROOT,
    reason="root reads files whatever their mode, so chmod 000 "
    "denies nothing; the injected variant above covers it",
)
def test_permission_denied_on_an_input_file_chmod(tmp_path, capsys):
    data = tmp_path / "kg.tsv"
    data.write_text("a\tr\tb\n", encoding="utf-8")
    data.chmod(0)
    try:
        assert main(["data", "stats", str(data)]) == EXIT_RUNTIME
    finally:
        data.chmod(0o600)
    assert "permission denied" in _one_error_line(capsys.readouterr().err)


def test_missing_dataset_folder(tmp_path, capsys):
    missing = tmp_path / "no-such-dataset"
    code = main(
        ["kg", "train", "--dataset", str(missing), "--out", str(tmp_path / "run"), "--no-progress"]
    )
    assert code == EXIT_RUNTIME
    assert str(missing) in _one_error_line(capsys.readouterr().err)


class _FullDiskFile:
    """A writable file object whose every write fails as on a full disk."""

    def __init__(self, handle):
        self._handle = handle

    def write(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    def __getattr__(self, name):
        return getattr(self._handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._handle.close()


def test_full_disk_from_a_failing_file_object(tmp_path, monkeypatch, capsys):
    out = tmp_path / "family"
    real_open = builtins.open

    def full_disk_open(file, mode="r", *args, **kwargs):
        handle = real_open(file, mode, *args, **kwargs)
        inside = str(os.fspath(file)).startswith(str(out)) if not isinstance(file, int) else False
        return _FullDiskFile(handle) if inside and ("w" in mode or "a" in mode) else handle

    monkeypatch.setattr(builtins, "open", full_disk_open)
    assert main(["data", "family", str(out), "--num-people", "40"]) == EXIT_RUNTIME
    line = _one_error_line(capsys.readouterr().err)
    assert "no space left on device" in line and str(out) in line
    assert not [p for p in out.rglob("*") if p.is_file() and p.stat().st_size]  # nothing half


def test_full_disk_inside_torch_save_during_kg_train(tmp_path, monkeypatch, capsys):
    def full_disk_save(*args, **kwargs):
        raise RuntimeError(TORCH_FULL_DISK)

    monkeypatch.setattr(torch, "save", full_disk_save)
    out = tmp_path / "run"
    code = main(
        [
            "kg",
            "train",
            "--dataset",
            "synthetic",
            "--num-people",
            "40",
            "--epochs",
            "1",
            "--dim",
            "8",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == EXIT_RUNTIME
    line = _one_error_line(capsys.readouterr().err)
    assert "disk is probably full" in line or "no space left on device" in line
    assert str(out) in line


def test_unexpected_error_from_a_subcommand(monkeypatch, capsys):
    import graphlib_ml.cli.graphon

    def bug(args):
        raise RuntimeError("a bug in the list command")

    # The parser binds func when it is built, so patch the part's function before main runs.
    monkeypatch.setattr(graphlib_ml.cli.graphon, "_list", bug)
    assert main(["graphon", "list"]) == EXIT_RUNTIME
    line = _one_error_line(capsys.readouterr().err)
    assert "unexpected RuntimeError: a bug in the list command, in `graphlib graphon list`" in line
    assert "run again with --debug for the traceback" in line
    with pytest.raises(RuntimeError, match="a bug in the list command"):
        main(["--debug", "graphon", "list"])


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    code = main(
        [
            "kg",
            "train",
            "--dataset",
            "synthetic",
            "--num-people",
            "40",
            "--epochs",
            "1",
            "--dim",
            "8",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    return out / "checkpoint.pt"


def test_checkpoint_with_wrong_shapes_given_to_kg_evaluate(checkpoint, tmp_path, capsys):
    ckpt = torch.load(checkpoint, weights_only=True)
    state = ckpt["model"]["state"]
    name = next(iter(state))
    state[name] = torch.zeros(3, 2)  # a shape no model of this vocabulary has
    crafted = tmp_path / "crafted.pt"
    torch.save(ckpt, crafted)
    capsys.readouterr()
    code = main(["kg", "evaluate", str(crafted), "--device", "cpu"])
    line = _one_error_line(capsys.readouterr().err)
    # 2 where the checkpoint loader refuses it as bad input, 1 from the handler otherwise.
    assert code in (EXIT_USAGE, EXIT_RUNTIME)
    assert "crafted.pt" in line or "--debug" in line


def test_bad_file_given_to_kg_explain_evaluator(checkpoint, tmp_path, capsys):
    bad = tmp_path / "evaluator.pt"
    bad.write_bytes(os.urandom(3000))  # not a zip: torch's weights-only unpickler trips on it
    capsys.readouterr()
    code = main(
        [
            "kg",
            "explain",
            str(checkpoint),
            "--triple",
            "a b c",
            "--evaluator",
            str(bad),
            "--out",
            str(tmp_path / "e.png"),
            "--device",
            "cpu",
        ]
    )
    line = _one_error_line(capsys.readouterr().err)
    assert code in (EXIT_USAGE, EXIT_RUNTIME) and "evaluator.pt" in line


@pytest.mark.parametrize("content", [b"hello, not HDF5\n", "truncated"])
def test_unreadable_h5ad_given_to_spatial_fit(content, tmp_path, capsys):
    source = tmp_path / "bad.h5ad"
    if content == "truncated":
        assert (
            main(
                [
                    "spatial",
                    "simulate",
                    "--cells",
                    "30",
                    "--genes",
                    "3",
                    "--steps",
                    "5",
                    "--out",
                    str(tmp_path / "good.h5ad"),
                ]
            )
            == 0
        )
        source.write_bytes((tmp_path / "good.h5ad").read_bytes()[:3000])
    else:
        source.write_bytes(content)
    capsys.readouterr()
    code = main(
        [
            "spatial",
            "fit",
            str(source),
            "--out",
            str(tmp_path / "o.h5ad"),
            "--epochs",
            "2",
            "--device",
            "cpu",
        ]
    )
    line = _one_error_line(capsys.readouterr().err)
    # 2 where spatial names the bad file as input; 1 for h5py's OSError reaching the handler.
    assert code in (EXIT_USAGE, EXIT_RUNTIME) and str(source) in line.replace("'", "")
    assert not (tmp_path / "o.h5ad").exists()


def test_h5py_error_mapped_directly(tmp_path):
    import anndata

    source = tmp_path / "bad.h5ad"
    source.write_bytes(b"not HDF5 at all")
    with pytest.raises(OSError) as info:
        anndata.read_h5ad(source)
    from graphlib_ml.cli import build_parser

    args = build_parser().parse_args(["spatial", "fit", str(source), "--out", "o.h5ad"])
    code, line = describe_failure(info.value, args)
    assert code == EXIT_RUNTIME and str(source) in line and "HDF5" in line


# ---------------------------------------------------------------------------------------------
# The demo checks its report folder before any section runs.


def test_demo_out_is_a_file(tmp_path, capsys):
    target = tmp_path / "report"
    target.write_text("keep me", encoding="utf-8")
    assert main(["demo", "--out", str(target), "--parts", "data", "--device", "cpu"]) == 2
    captured = capsys.readouterr()
    assert str(target) in _one_error_line(captured.err) and "[graphlib demo]" not in captured.out
    assert target.read_text(encoding="utf-8") == "keep me"
    assert main(["demo", "--out", str(target / "sub"), "--parts", "data"]) == 2
    assert "lies under" in _one_error_line(capsys.readouterr().err)


def test_demo_out_not_writable_injected(tmp_path, monkeypatch, capsys):
    out = tmp_path / "report"
    real_mkstemp = graphlib_ml.demo.tempfile.mkstemp

    def denied(*args, dir=None, **kwargs):
        if dir is not None and Path(dir) == out:
            raise PermissionError(errno.EACCES, "Permission denied", str(out / ".probe"))
        return real_mkstemp(*args, dir=dir, **kwargs)

    monkeypatch.setattr(graphlib_ml.demo.tempfile, "mkstemp", denied)
    assert main(["demo", "--out", str(out), "--parts", "data", "--device", "cpu"]) == 1
    captured = capsys.readouterr()
    line = _one_error_line(captured.err)
    assert f"permission denied, {out}," in line and "[graphlib demo]" not in captured.out


@pytest.mark.skipif(
    IS_ROOT,
    reason="root writes into any folder whatever its mode; the injected variant above covers it",
)
def test_demo_out_not_writable_chmod(tmp_path, capsys):
    out = tmp_path / "report"
    out.mkdir()
    out.chmod(0o500)
    try:
        assert main(["demo", "--out", str(out), "--parts", "data", "--device", "cpu"]) == 1
    finally:
        out.chmod(0o700)
    assert "permission denied" in _one_error_line(capsys.readouterr().err)


# ---------------------------------------------------------------------------------------------
# A real full disk: a tiny tmpfs (needs root and mount rights; skipped elsewhere).


@pytest.fixture
def tiny_disk(mount_tmpfs):
    return mount_tmpfs("16k")


def test_real_full_disk_data_family(tiny_disk, capsys):
    out = tiny_disk / "family"
    assert main(["data", "family", str(out), "--num-people", "500"]) == EXIT_RUNTIME
    line = _one_error_line(capsys.readouterr().err)
    assert "no space left on device" in line and str(out) in line


def test_real_full_disk_kg_train(tiny_disk, capsys):
    out = tiny_disk / "run"
    code = main(
        [
            "kg",
            "train",
            "--dataset",
            "synthetic",
            "--num-people",
            "40",
            "--epochs",
            "1",
            "--dim",
            "32",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == EXIT_RUNTIME
    line = _one_error_line(capsys.readouterr().err)
    assert "no space left on device" in line or "disk is probably full" in line


# ---------------------------------------------------------------------------------------------
# Process level: python -m graphlib_ml.cli, SIGINT, a closed pipe, --debug.


def _cli(*argv, env=None, **kwargs):
    environment = {k: v for k, v in os.environ.items() if k != "GRAPHLIB_DEBUG"}
    environment.update({"PYTHONPATH": str(ROOT), **(env or {})})
    return subprocess.Popen(
        [sys.executable, "-m", "graphlib_ml.cli", *argv], cwd=ROOT, env=environment, **kwargs
    )


def test_process_debug_shows_the_traceback(tmp_path):
    # Without --debug the same failure is one line (tested in-process above).
    missing = str(tmp_path / "missing")
    debug = _cli(
        "--debug", "data", "stats", missing, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    _, err = debug.communicate(timeout=120)
    assert debug.returncode == 1
    assert "Traceback" in err.decode() and "FileNotFoundError" in err.decode()


def test_process_closed_stdout_is_silent(datasets_dir):
    proc = _cli(
        "data",
        "stats",
        str(datasets_dir / "kg" / "nations"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # like `| head -0`: the reader is gone before the first write
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert proc.returncode == EXIT_BROKEN_PIPE, err
    assert "BrokenPipeError" not in err and "Traceback" not in err and err == ""


def test_process_sigint_during_kg_train_then_resume(tmp_path):
    out = tmp_path / "run"
    argv = [
        "kg",
        "train",
        "--dataset",
        "synthetic",
        "--num-people",
        "60",
        "--dim",
        "16",
        "--out",
        str(out),
        "--no-progress",
        "--eval-every",
        "0",
    ]
    # A runner started in the background (`cmd &` without job control) ignores SIGINT, and so
    # would the child, which Python then starts without its KeyboardInterrupt handler: the
    # child gets the default disposition back, as a terminal's foreground process has it.
    proc = _cli(
        *argv,
        "--epochs",
        "1000",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 90
    while not (out / "checkpoint.pt").is_file() and time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode()
        time.sleep(0.1)
    assert (out / "checkpoint.pt").is_file(), "no checkpoint within 90 s"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    err = err.decode()
    assert proc.returncode == EXIT_INTERRUPTED, err
    line = _one_error_line(err)
    assert "interrupted" in line and "--resume" in line and str(out / "checkpoint.pt") in line
    epoch = int(torch.load(out / "checkpoint.pt", weights_only=True)["training"]["epoch"])
    assert 1 <= epoch < 1000
    resumed = _cli(
        *argv,
        "--epochs",
        str(epoch + 1),
        "--resume",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    stdout, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err.decode()
    again = torch.load(out / "checkpoint.pt", weights_only=True)["training"]
    assert int(again["epoch"]) == epoch + 1
    assert f"trained {epoch + 1} epochs" in stdout.decode()
    logged = (out / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(logged) == epoch + 1  # the interrupted run's epochs kept, one more appended


# ---------------------------------------------------------------------------------------------
# The numeric flags of demo and data, property-tested (every flag is walked in
# tests/graphlib_ml/test_cli_faults_kg.py).

_BAD_COUNTS = st.one_of(
    st.integers(max_value=0).map(str),
    st.sampled_from(["nan", "inf", "-inf", "1.5", "1e3", "", "ten", "0x10"]),
)
_BAD_SEEDS = st.one_of(
    st.integers(max_value=-1).map(str),
    st.integers(min_value=2**64).map(str),  # past torch's range: every command refuses it
    st.sampled_from(["nan", "inf", "0.5", "seed"]),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=_BAD_COUNTS)
def test_data_family_num_people_refused_at_parse_time(value, tmp_path, capsys):
    out = tmp_path / "never-written"
    assert main(["data", "family", str(out), f"--num-people={value}"]) == EXIT_USAGE
    line = _one_error_line(capsys.readouterr().err)
    assert "--num-people" in line and repr(value) in line and not out.exists()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=_BAD_SEEDS, command=st.sampled_from(["demo", "family"]))
def test_seeds_refused_at_parse_time(value, command, tmp_path, capsys):
    out = tmp_path / "never-written"
    argv = ["demo", "--out", str(out)] if command == "demo" else ["data", "family", str(out)]
    assert main([*argv, f"--seed={value}"]) == EXIT_USAGE
    assert "--seed" in _one_error_line(capsys.readouterr().err) and not out.exists()


def test_demo_seeds_stop_at_int64_where_data_family_takes_torchs_range(tmp_path, capsys):
    # demo's spatial part stores its seed in the AnnData (int64); data family's is torch's.
    out = tmp_path / "never-written"
    assert main(["demo", "--out", str(out), f"--seed={2**63}"]) == EXIT_USAGE
    assert "--seed" in _one_error_line(capsys.readouterr().err) and not out.exists()
    family = tmp_path / "family"
    assert main(["data", "family", str(family), "--num-people", "40", f"--seed={2**64 - 1}"]) == 0
    assert (family / "train.txt").is_file()


def test_a_cpu_allocation_failure_reads_as_out_of_memory_not_as_a_bug():
    err = RuntimeError(
        "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
        "memory: you tried to allocate 160000000000 bytes."
    )
    code, line = describe_failure(err)
    assert code == EXIT_RUNTIME and "out of memory" in line and "please report" not in line
