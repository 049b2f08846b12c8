"""Registered datasets on the command line and in kg.load_dataset, served from 127.0.0.1.

``graphlib data list``, ``graphlib data download NAME [--from PATH]``, ``graphlib kg train
--dataset NAME``, and the name ``kg.datasets.load_dataset`` records for checkpoints. A test-only
spec is put into the registry (monkeypatch) and served by the local FileServer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import torch

from graphdata import datasets
from graphdata.errors import GraphDataError
from graphlib_ml.cli import main
from kg.datasets import dataset_on_unknown, load_dataset
from tests.graphdata.test_datasets_registry import EXPECTED, FileServer, tar_spec


@pytest.fixture
def served(tmp_path, monkeypatch) -> Iterator[FileServer]:
    """Register the toy archive dataset as ``toy`` and serve it; GRAPHLIB_HOME in tmp_path."""
    spec, data = tar_spec()
    monkeypatch.setitem(datasets.REGISTRY, "toy", spec)
    monkeypatch.setenv("GRAPHLIB_HOME", str(tmp_path / "home"))
    srv = FileServer()
    srv.files[spec.files[0].path] = data
    monkeypatch.setenv("GRAPHLIB_DATASETS_URL", srv.url)
    monkeypatch.chdir(tmp_path)
    yield srv
    srv.close()


def _labeled(ds) -> dict[str, set[tuple[str, str, str]]]:
    return {name: set(map(tuple, ts.to_labeled_triples())) for name, ts in ds.splits.items()}


def test_load_dataset_by_registered_name_records_it(served):
    ds = load_dataset("toy")
    assert ds.name == "toy" and _labeled(ds) == EXPECTED
    ext = load_dataset("TOY", on_unknown="extend")
    assert ext.name == "toy;on_unknown=extend" and dataset_on_unknown(ext.name) == "extend"
    again = load_dataset(ext.name)  # as a checkpoint reloads it
    assert again.name == ext.name and torch.equal(
        again.train.mapped_triples, ds.train.mapped_triples
    )
    assert len(served.requests) == 1  # downloaded once, then the cache


def test_existing_folder_wins_over_a_registered_name(served, tmp_path):
    (tmp_path / "toy").mkdir()
    for split, rows in {
        "train": "x\tr\ty\ny\tr\tx\n",
        "valid": "x\tr\tx\n",
        "test": "y\tr\ty\n",
    }.items():
        (tmp_path / "toy" / f"{split}.txt").write_text(rows)
    ds = load_dataset("toy")
    assert ds.name == str((tmp_path / "toy").resolve()) and tuple(ds.entities.labels) == ("x", "y")
    assert served.requests == []


def test_unknown_bare_name_lists_the_registered_names(served):
    with pytest.raises(
        GraphDataError,
        match=r"--dataset: expected a folder, 'synthetic' or one of .*fb15k237.*'fb15k'",
    ):
        load_dataset("fb15k")
    with pytest.raises(FileNotFoundError):  # a path keeps the folder reader's error
        load_dataset("no/such/folder")


def test_data_list(served, capsys):
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    assert "fb15k237     272,115  17,535  20,466  no" in out
    assert "cache: " in out and str(datasets.cache_root()) in out
    assert main(["data", "download", "toy"]) == 0
    assert "verified, in" in capsys.readouterr().out
    main(["data", "list"])
    assert "toy" in capsys.readouterr().out


def test_data_download_then_offline_from(served, tmp_path, capsys):
    assert main(["data", "download", "toy", "--root", str(tmp_path / "cache")]) == 0
    assert (tmp_path / "cache" / "toy" / "train.txt").is_file()
    archive = tmp_path / "toy.tar.gz"
    archive.write_bytes(served.files[datasets.REGISTRY["toy"].files[0].path])
    capsys.readouterr()
    assert (
        main(["data", "download", "toy", "--root", str(tmp_path / "c2"), "--from", str(archive)])
        == 0
    )
    assert "toy: verified" in capsys.readouterr().out
    assert (tmp_path / "c2" / "toy" / "test.txt").is_file() and len(served.requests) == 1


@pytest.mark.parametrize("failure", ["404", "corrupt", "unknown"])
def test_data_download_failure_is_one_line(served, capsys, failure):
    path = datasets.REGISTRY["toy"].files[0].path
    name = "toy"
    if failure == "404":
        del served.files[path]
    elif failure == "corrupt":
        served.files[path] = served.files[path][::-1]
    else:
        name = "nope"
    assert main(["data", "download", name]) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("graphlib: error:")
    expected = {"404": "HTTP 404", "corrupt": "has sha256", "unknown": "expected one of"}[failure]
    assert expected in lines[0]


def test_kg_train_with_a_registered_dataset(served, tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["kg", "train", "--dataset", "toy", "--model", "distmult", "--dim", "4", "--epochs", "1"]
    argv += ["--batch-size", "4", "--device", "cpu", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    assert "dataset: KGDataset('toy'" in capsys.readouterr().out
    assert (
        main(["kg", "evaluate", str(out / "checkpoint.pt"), "--json", str(tmp_path / "m.json")])
        == 0
    )
    assert json.loads((tmp_path / "m.json").read_text())
    assert len(served.requests) == 1
