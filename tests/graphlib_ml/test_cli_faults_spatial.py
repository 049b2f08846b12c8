"""Fault injection for ``graphlib spatial``: bad ``.h5ad`` inputs, full disks, output paths.

A file that is not a readable ``.h5ad`` ends with one GraphDataError naming it; a folder
without room for the output is refused before h5py writes (h5py crashes on a full disk);
``--out`` is checked before the work starts; numeric flags and ``--gene`` values refuse
non-finite numbers.
"""

import argparse
import errno
import shutil

import anndata
import h5py
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphdata import atomic
from graphdata.errors import GraphDataError
from graphlib_ml.cli.spatial import add_subparser, parse_genes
from spatial.io import estimate_h5ad_bytes, read_h5ad, write_h5ad
from spatial.simulate import simulate_tissue


def _run(argv):
    parser = argparse.ArgumentParser(prog="graphlib")
    add_subparser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["spatial", *argv])
    return args.func(args)


@pytest.fixture(scope="module")
def tissue_h5ad(tmp_path_factory):
    path = tmp_path_factory.mktemp("tissue") / "sim.h5ad"
    adata = simulate_tissue(40, 3, steps=5, seed=0).to_anndata()
    adata.X = np.abs(adata.X) + 0.01
    adata.write_h5ad(path)
    return path


def _bad_inputs(tmp_path, good):
    data = good.read_bytes()
    files = {
        "random bytes": np.random.default_rng(0).bytes(2000),
        "text": b"cell\tgene\n1\t2\n",
        "empty": b"",
        "truncated half": data[: len(data) // 2],
        "truncated header": data[:600],
    }
    paths = {}
    for name, content in files.items():
        path = tmp_path / f"{name.replace(' ', '_')}.h5ad"
        path.write_bytes(content)
        paths[name] = path
    foreign = tmp_path / "foreign.h5ad"
    with h5py.File(foreign, "w") as handle:  # valid HDF5, not AnnData
        handle["X"] = "not a matrix"
        handle["obs"] = np.arange(3)
    paths["foreign HDF5"] = foreign
    return paths


@pytest.mark.filterwarnings("ignore::anndata.OldFormatWarning")  # the foreign HDF5 file
def test_unreadable_h5ad_inputs_give_one_message_naming_the_file(tmp_path, tissue_h5ad):
    for name, path in _bad_inputs(tmp_path, tissue_h5ad).items():
        with pytest.raises(GraphDataError, match=rf"input: '{path}' is not a readable .h5ad"):
            read_h5ad(path)
        for command in (
            ["fit", str(path), "--epochs", "1"],
            ["intervene", str(path), "--gene", "g=0", "--cells", "c"],
        ):
            with pytest.raises(GraphDataError, match="not a readable .h5ad"):
                _run([*command, "--out", str(tmp_path / "out.h5ad"), "--device", "cpu"])
        assert not (tmp_path / "out.h5ad").exists(), name


@settings(max_examples=25)
@given(st.binary(max_size=512))
def test_arbitrary_bytes_never_escape_as_an_h5py_error(tmp_path_factory, content):
    path = tmp_path_factory.mktemp("bytes") / "x.h5ad"
    path.write_bytes(content)
    with pytest.raises(GraphDataError, match="not a readable .h5ad"):
        read_h5ad(path)


def test_missing_and_folder_inputs_stay_os_errors_with_the_file_name(tmp_path):
    with pytest.raises(FileNotFoundError) as err:
        read_h5ad(tmp_path / "missing.h5ad")
    assert err.value.filename == str(tmp_path / "missing.h5ad")
    with pytest.raises(IsADirectoryError) as err:
        read_h5ad(tmp_path)
    assert err.value.filename == str(tmp_path)


def test_a_good_file_reads_back(tissue_h5ad):
    assert read_h5ad(tissue_h5ad).shape == (40, 3)


def test_the_size_estimate_covers_the_written_file(tmp_path):
    adata = simulate_tissue(300, 6, steps=5, seed=1).to_anndata()
    adata.layers["twice"] = 2 * adata.X
    path = tmp_path / "t.h5ad"
    adata.write_h5ad(path)
    estimate = estimate_h5ad_bytes(adata)
    assert path.stat().st_size <= estimate
    arrays = estimate - 4 * 2**20  # the estimate grows with the arrays, not only the margin
    assert arrays >= 2 * adata.X.nbytes


def _full_disk(monkeypatch, free=1000):
    real = shutil.disk_usage
    monkeypatch.setattr(shutil, "disk_usage", lambda p: real(p)._replace(free=free))


def test_simulate_on_a_full_disk_raises_enospc_and_writes_nothing(tmp_path, monkeypatch):
    _full_disk(monkeypatch)
    out = tmp_path / "sim.h5ad"
    with pytest.raises(OSError) as err:
        _run(["simulate", "--cells", "40", "--genes", "3", "--steps", "5", "--out", str(out)])
    assert err.value.errno == errno.ENOSPC and "no space left" in str(err.value)
    assert list(tmp_path.iterdir()) == []  # no temp file left behind either


def test_fit_on_a_full_disk_raises_enospc_before_writing(tmp_path, monkeypatch, tissue_h5ad):
    _full_disk(monkeypatch)
    out = tmp_path / "fit.h5ad"
    with pytest.raises(OSError) as err:
        _run(["fit", str(tissue_h5ad), "--epochs", "2", "--device", "cpu", "--out", str(out)])
    assert err.value.errno == errno.ENOSPC
    assert not out.exists()


def test_write_h5ad_asks_for_the_estimate(tmp_path, monkeypatch):
    asked = []
    monkeypatch.setattr(
        atomic,
        "require_free_space",
        lambda path, nbytes, *, what: asked.append((str(path), nbytes, what)),
    )
    adata = anndata.AnnData(np.ones((10, 2), dtype=np.float32))
    write_h5ad(adata, tmp_path / "a.h5ad")
    assert asked == [
        (
            str(tmp_path / "a.h5ad"),
            estimate_h5ad_bytes(adata),
            f"the .h5ad file {tmp_path / 'a.h5ad'}",
        )
    ]
    assert anndata.read_h5ad(tmp_path / "a.h5ad").shape == (10, 2)


def test_out_at_a_folder_is_refused_before_simulating(tmp_path, monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("simulated before checking --out")

    monkeypatch.setattr("spatial.simulate.simulate_tissue", never)
    with pytest.raises(GraphDataError, match=r"--out: expected a file path, got the folder"):
        _run(["simulate", "--cells", "3000", "--steps", "5000", "--out", str(tmp_path)])


def test_out_under_a_file_is_refused_before_fitting(tmp_path, tissue_h5ad):
    blocker = tmp_path / "f"
    blocker.write_text("x")
    with pytest.raises(GraphDataError, match=r"--out: .* is a file, not a folder"):
        _run(["fit", str(tissue_h5ad), "--out", str(blocker / "o.h5ad")])


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999", "NaN"])
def test_gene_values_must_be_finite(value):
    with pytest.raises(GraphDataError, match=rf"--gene: expected a finite VALUE .*'A={value}'"):
        parse_genes([f"A={value}"])


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_finite_gene_values_round_trip(x):
    assert parse_genes([f"G={x!r}"]) == {"G": x}


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["simulate", "--out", "x.h5ad", "--cells", "nan"], "--cells"),
        (["simulate", "--out", "x.h5ad", "--genes", "1"], "--genes"),
        (["fit", "in.h5ad", "--out", "x.h5ad", "--lr", "nan"], "--lr"),
        (
            [
                "intervene",
                "in.h5ad",
                "--out",
                "x",
                "--gene",
                "a=0",
                "--cells",
                "c",
                "--horizon",
                "inf",
            ],
            "--horizon",
        ),
        (
            [
                "intervene",
                "in.h5ad",
                "--out",
                "x",
                "--gene",
                "a=0",
                "--cells",
                "c",
                "--step-size",
                "0",
            ],
            "--step-size",
        ),
    ],
)
def test_numeric_flags_refuse_at_parse_time(argv, flag, capsys):
    with pytest.raises(SystemExit) as stop:
        _run(argv)
    assert stop.value.code == 2
    assert f"argument {flag}: expected " in capsys.readouterr().err


def test_a_gene_given_twice_is_refused():
    with pytest.raises(GraphDataError, match=r"--gene: A is given twice \(A=0 and 'A=1'\)"):
        parse_genes(["A=0", "B=2", "A=1"])
