"""Fault injection for ``graphlib graphon density``, ``densities`` and ``transfer``.

Outputs are checked before any graph is sampled or network built; ``transfer`` locks its
``--out`` folder; numeric flags refuse non-finite values at parse time. Every bad input to
``density`` (graphon name or expression, matrix file, pattern, signal, exponents, parameters)
ends through ``graphlib``'s ``main`` as exit code 2 and one line naming the flag.
"""

import argparse
import importlib
import json
import re
import signal
import time

import numpy as np
import pytest

from graphdata.errors import GraphDataError
from graphdata.run_folder import RunFolderLockedError
from graphlib_ml.cli import EXIT_USAGE, main
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


def _no_sampling(monkeypatch):
    """Make sample_graphs fail for the densities command, which looks it up when it runs."""
    import graphon.sampling

    # Modules that bind sample_graphs at import are imported first, so they keep the real one.
    for name in ("graphon.densities", "graphon.nn.transfer", "graphlib_ml.cli.iwn"):
        importlib.import_module(name)

    def refuse(*args, **kwargs):
        raise AssertionError("sample_graphs ran before the inputs were checked")

    monkeypatch.setattr(graphon.sampling, "sample_graphs", refuse)


def test_densities_refuses_out_at_a_folder_before_sampling(tmp_path, monkeypatch):
    # 20 graphs of 1,500 nodes take seconds: the refusal must come first.
    _no_sampling(monkeypatch)
    with pytest.raises(GraphDataError, match=r"--out: expected a file path, got the folder"):
        _run([*_DENSITIES, "--out", str(tmp_path)])


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


def _fails(argv, capsys):
    """Run ``graphlib graphon ...`` through main: exit 2, one error line, no traceback."""
    assert main(["graphon", *argv]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    return lines[-1]


XY = ["density", "--graphon", "x*y"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["density", "--graphon", "sbn"], r"--graphon: 'sbn' is neither a named graphon.*'sbm'"),
        (
            ["density", "--graphon", "__import__('os').system('touch pwned')"],
            r"--graphon: .*only plain function names",
        ),
        (["density", "--graphon", "maximum(x, y)"], r"--graphon: .*did you mean 'max'"),
        (["density", "--graphon", "xy"], r"--graphon: .*write x\*y"),
        (["density", "--graphon", "x"], r"--graphon: .*symmetric.*W\(0, 1\) = 0 but W\(1, 0\) = 1"),
        (["density", "--graphon", "x + y"], r"--graphon: .*values in \[0, 1\]"),
        (["density", "--graphon", "x" * 1001], r"--graphon: .*at most 1000 characters"),
        ([*XY, "--pattern", "0-1,,1-2"], r"--pattern: token 2 of the edge list"),
        ([*XY, "--pattern", "2-2"], r"--pattern: edge '2-2' .* self-loop"),
        (
            [*XY, "--pattern", "triangel"],
            r"--pattern: unknown pattern label 'triangel'.*'triangle'",
        ),
        ([*XY, "--signal", "1 + x"], r"--exponents: required with --signal"),
        ([*XY, "--exponents", "1,1,1"], r"--exponents: required with --signal and refused without"),
        (
            [*XY, "--pattern", "edge", "--signal", "x", "--exponents", "1,1,1"],
            r"--exponents: expected 2 ints",
        ),
        (
            [*XY, "--pattern", "edge", "--signal", "x", "--exponents", "a,1"],
            r"--exponents: expected comma-separated",
        ),
        (
            [*XY, "--pattern", "edge", "--signal", "x + y", "--exponents", "1,1"],
            r"--signal: .*function of x only",
        ),
        (
            [*XY, "--pattern", "edge", "--signal", "1/x", "--exponents", "1,1"],
            r"--signal: .*f\(0\) = inf",
        ),
        ([*XY, "--param", "p=0.5"], r"--param: only named graphons take parameters"),
        (
            ["density", "--graphon", "sbm", "--param", "k=2"],
            r"--param: graphon 'sbm'.*does not take \['k'\]",
        ),
        (
            ["density", "--graphon", "erdos_renyi", "--param", "p=2"],
            r"--param: graphon 'erdos_renyi': p: ",
        ),
        (["density", "--graphon", "sbm", "--param", "p"], r"--param: expected name=value"),
        ([*XY, "--measures", "m.npy"], r"--measures: only with --graphon-file"),
        ([*XY, "--order", "1"], r"argument --order: expected an integer >= 2"),
        ([*XY, "--kinks", "sometimes"], r"argument --kinks: invalid choice"),
        (["density"], r"one of the arguments --graphon-file --graphon is required"),
        (
            [*XY, "--graphon-file", "W.npy"],
            r"argument --graphon-file: not allowed with argument --graphon",
        ),
        (["densities", "--graphon", "nope", "--sizes", "5"], r"--graphon: 'nope' is neither"),
        (["densities", "--pattern", "0-0", "--sizes", "5"], r"--pattern: edge '0-0' .* self-loop"),
    ],
)
def test_density_bad_input_exits_2_naming_the_flag(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _no_sampling(monkeypatch)
    line = _fails(argv, capsys)
    assert line.startswith(("graphlib: error: ", "graphlib graphon ")), line
    assert re.search(message, line), line
    assert not (tmp_path / "pwned").exists()
    assert not list(tmp_path.glob("*.png"))  # densities refused before sampling or plotting


def _save(path, array, **kwargs):
    np.save(path, array, **kwargs)
    return str(path)


def test_graphon_file_faults_exit_2_naming_the_flag(tmp_path, capsys):
    good = _save(tmp_path / "good.npy", np.array([[0.5, 0.2], [0.2, 0.5]]))
    cases = [
        (
            _save(tmp_path / "asym.npy", np.array([[0.5, 0.2], [0.4, 0.5]])),
            r"--graphon-file: .*asym.npy: expected a symmetric",
        ),
        (
            _save(tmp_path / "big.npy", np.array([[1.5, 0.2], [0.2, 0.5]])),
            r"--graphon-file: .*big.npy: expected entries in \[0, 1\]",
        ),
        (
            _save(tmp_path / "nan.npy", np.array([[np.nan, 0.2], [0.2, 0.5]])),
            r"--graphon-file: .*nan.npy: expected finite",
        ),
        (
            _save(tmp_path / "rect.npy", np.zeros((2, 3))),
            r"--graphon-file: .*rect.npy: expected a square \[K, K\] matrix",
        ),
        (
            _save(tmp_path / "cube.npy", np.zeros((2, 2, 2))),
            r"--graphon-file: .*expected a square \[K, K\] matrix, got shape \(2, 2, 2\)",
        ),
        (_save(tmp_path / "empty.npy", np.zeros((0, 0))), r"--graphon-file: .*K >= 1"),
        (
            _save(tmp_path / "text.npy", np.array([["a", "b"], ["c", "d"]])),
            r"--graphon-file: .*expected a real \(float\) array, got <U1",
        ),
        (
            _save(tmp_path / "obj.npy", np.array([[{}, 1]], dtype=object), allow_pickle=True),
            r"--graphon-file: cannot read .*obj.npy",
        ),
    ]
    (tmp_path / "junk.npy").write_text("not an array")
    cases.append((str(tmp_path / "junk.npy"), r"--graphon-file: cannot read .*junk.npy as a .npy"))
    np.savez(tmp_path / "keys.npz", B=np.eye(2))
    cases.append(
        (str(tmp_path / "keys.npz"), r"--graphon-file: .*expected the arrays 'probs'.*got \['B'\]")
    )
    for path, message in cases:
        line = _fails(["density", "--graphon-file", path], capsys)
        assert re.search(message, line), (path, line)
    measures = [
        (
            _save(tmp_path / "m3.npy", np.ones(3)),
            r"--measures: .*expected 2 finite positive block measures, got \[1.0, 1.0, 1.0\]",
        ),
        (
            _save(tmp_path / "mneg.npy", np.array([1.0, -1.0])),
            r"--measures: .*expected 2 finite positive",
        ),
        (_save(tmp_path / "m2d.npy", np.ones((2, 1))), r"--measures: .*expected a vector \[K\]"),
    ]
    for path, message in measures:
        line = _fails(["density", "--graphon-file", good, "--measures", path], capsys)
        assert re.search(message, line), (path, line)
    np.savez(tmp_path / "both.npz", probs=np.eye(2) / 2, measures=np.ones(2))
    line = _fails(
        ["density", "--graphon-file", str(tmp_path / "both.npz"), "--measures", measures[0][0]],
        capsys,
    )
    assert "--measures: " in line and "pass them once" in line
    line = _fails(["density", "--graphon-file", good, "--param", "p=0.1"], capsys)
    assert "--param: only named graphons take parameters" in line


def test_a_missing_graphon_file_is_a_runtime_error_naming_the_path(tmp_path, capsys):
    missing = str(tmp_path / "nowhere.npy")
    assert main(["graphon", "density", "--graphon-file", missing]) == 1
    assert f"no such file or directory, {missing}" in capsys.readouterr().err


def test_kinks_reach_graphon_density(capsys):
    argv = [*XY, "--pattern", "edge", "--kinks", "none", "--json"]
    assert main(["graphon", *argv]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["kinks"] == "none" and abs(record["value"] - 0.25) < 1e-14  # int int xy


def test_densities_refuses_sizes_below_the_pattern_order(capsys, tmp_path):
    out = str(tmp_path / "d.png")
    line = _fails(["densities", "--sizes", "2,5", "--samples", "2", "--out", out], capsys)
    assert "--sizes: t_inj of the 3-vertex pattern 'triangle'" in line and "[2]" in line
    assert not (tmp_path / "d.png").exists()


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--sizes", "100000000"], "--sizes: t(F, G_n) of the pattern 'triangle'"),
        (["--pattern", ",".join(f"{i}-{i + 1}" for i in range(11))], "--pattern: injective"),
    ],
)
def test_densities_refuses_work_over_budget_before_sampling(argv, fragment, capsys, tmp_path):
    line = _fails(["densities", "--samples", "2", *argv, "--out", str(tmp_path / "d.png")], capsys)
    assert fragment in line


def test_an_overflowing_measures_file_is_named(capsys, tmp_path):
    probs, measures = tmp_path / "w.npy", tmp_path / "m.npy"
    np.save(probs, np.array([[0.5, 0.1], [0.1, 0.5]]))
    np.save(measures, np.array([1e308, 1e308]))
    line = _fails(["density", "--graphon-file", str(probs), "--measures", str(measures)], capsys)
    assert f"--measures: {measures}: the block sizes sum to inf" in line


def test_kinks_on_a_step_graphon_is_named_as_unused(capsys):
    assert main(["graphon", "density", "--graphon", "sbm", "--kinks", "diagonal"]) == 0
    captured = capsys.readouterr()
    assert "graphlib: warning: --kinks diagonal is unused" in captured.err
    assert "(exact)" in captured.out
    assert main(["graphon", "density", "--graphon", "x*y", "--kinks", "none"]) == 0
    assert "unused" not in capsys.readouterr().err
