import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from graphdata.triples import KGDataset
from graphlib_ml.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def folder(tmp_path):
    n = 9
    rows = [(f"city{i}", "road_to", f"city{(i + 1) % n}") for i in range(n)]
    rows += [(f"city{i}", "near", f"city{(i + 2) % n}") for i in range(n)]
    KGDataset.from_labeled(rows, rows[::5], rows[1::5]).to_folder(tmp_path / "data")
    return tmp_path / "data"


def _train(folder, out, *extra):
    argv = ["kg", "train", "--dataset", str(folder), "--device", "cpu", "--out", str(out)]
    return main([*argv, "--no-progress", *extra])


def _training_config(out):
    ckpt = torch.load(out / "checkpoint.pt", weights_only=True)
    return ckpt["model"], ckpt["training"]["config"]


def test_tune_then_train_with_its_best_config(folder, tmp_path, capsys):
    pytest.importorskip("optuna")
    out = tmp_path / "tune"
    argv = ["kg", "tune", "--dataset", str(folder), "--model", "distmult", "--trials", "2"]
    assert main([*argv, "--epochs", "2", "--eval-every", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "best trial" in printed and f"--config {out / 'best_config.json'}" in printed
    best = json.loads((out / "best_config.json").read_text())
    assert len((out / "trials.jsonl").read_text().splitlines()) == 2
    assert [json.loads(x)["trial"] for x in (out / "metrics.jsonl").read_text().splitlines()] == [
        0,
        1,
    ]
    # kg train --config: the run's resolved config is the best trial's, but for the flag given.
    run = tmp_path / "run"
    assert _train(folder, run, "--config", str(out / "best_config.json"), "--epochs", "1") == 0
    assert "config file:" in capsys.readouterr().out
    model, config = _training_config(run)
    assert model["name"] == "distmult" and model["config"]["dim"] == best["dim"]
    assert config["epochs"] == 1
    for key, value in best.items():
        if key not in ("model", "dim", "dataset", "epochs"):
            assert config[key] == value, key


def test_flags_given_override_the_config_file(folder, tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"model": "complex", "dim": 6, "lr": 0.02, "epochs": 5}))
    run = tmp_path / "run"
    assert _train(folder, run, "--config", str(path), "--model", "distmult", "--epochs", "1") == 0
    model, config = _training_config(run)
    assert (model["name"], model["config"]["dim"]) == ("distmult", 6)
    assert (config["lr"], config["epochs"]) == (0.02, 1)


def test_an_unknown_config_key_is_one_line_with_the_valid_names(folder, tmp_path, capsys):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"learning_rate": 0.1}))
    assert _train(folder, tmp_path / "run", "--config", str(path)) == 2
    err = capsys.readouterr().err
    assert err.startswith("graphlib: error: --config: unknown keys ['learning_rate']")
    assert "'lr'" in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_a_bad_value_from_the_file_names_the_file(folder, tmp_path, capsys):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"lr": -1.0}))
    assert _train(folder, tmp_path / "run", "--config", str(path)) == 2
    err = capsys.readouterr().err
    assert "lr (--lr): expected a finite number > 0, got -1.0" in err
    assert f"with lr from --config {path}" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "module", "extra"),
    [
        (["kg", "train", "--tracker", "tensorboard"], "tensorboard", "tensorboard"),
        (["kg", "train", "--tracker", "mlflow"], "mlflow", "mlflow"),
        (["kg", "tune", "--trials", "1"], "optuna", "tune"),
    ],
)
def test_a_missing_extra_is_one_line_naming_it(
    folder, tmp_path, capsys, monkeypatch, argv, module, extra
):
    monkeypatch.setitem(sys.modules, module, None)
    command = [*argv, "--dataset", str(folder), "--device", "cpu", "--out", str(tmp_path / "o")]
    assert main([*command, "--epochs", "1"]) == 1
    err = capsys.readouterr().err
    assert f"pip install 'graphlib-ml[{extra}]'" in err
    assert "Traceback" not in err and len(err.splitlines()) == 1


def test_train_with_tensorboard_keeps_metrics_jsonl(folder, tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run = tmp_path / "run"
    assert (
        _train(folder, run, "--model", "distmult", "--epochs", "2", "--tracker", "tensorboard") == 0
    )
    records = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    events = EventAccumulator(str(run / "tensorboard"))
    events.Reload()
    got = [(e.step, e.value) for e in events.Scalars("loss")]
    assert [s for s, _ in got] == [1, 2]
    assert [v for _, v in got] == pytest.approx([r["loss"] for r in records], rel=1e-6)


def test_tracking_uri_needs_the_mlflow_tracker(folder, tmp_path, capsys):
    argv = ["--tracking-uri", "sqlite:///x.db", "--epochs", "1"]
    assert _train(folder, tmp_path / "run", *argv) == 2
    assert "only the 'mlflow' tracker" in capsys.readouterr().err


def test_spatial_fit_with_a_tracker_logs_the_losses_it_stores(tmp_path):
    import anndata
    import numpy as np

    from spatial.simulate import simulate_tissue

    tissue = tmp_path / "tissue.h5ad"
    adata = simulate_tissue(40, 3, steps=5, seed=0).to_anndata()
    adata.X = np.abs(adata.X) + 0.01  # expression is non-negative
    adata.write_h5ad(tissue)
    fit = ["spatial", "fit", str(tissue), "--epochs", "4", "--no-progress", "--device", "cpu"]
    assert main([*fit, "--out", str(tmp_path / "plain.h5ad")]) == 0
    assert main([*fit, "--out", str(tmp_path / "fit.h5ad"), "--tracker", "jsonl"]) == 0
    plain, tracked = (anndata.read_h5ad(tmp_path / f) for f in ("plain.h5ad", "fit.h5ad"))
    losses = tracked.uns["celcomen"]["losses"]
    records = [
        json.loads(x) for x in (tmp_path / "fit.tracking/metrics.jsonl").read_text().splitlines()
    ]
    assert records == [{"epoch": i + 1, "loss": float(v)} for i, v in enumerate(losses)]
    for key in ("celcomen_intra", "celcomen_inter"):
        np.testing.assert_array_equal(plain.varp[key], tracked.varp[key])
    np.testing.assert_array_equal(plain.uns["celcomen"]["losses"], losses)


def test_help_and_tune_parser_import_neither_optuna_nor_the_trackers():
    probe = (
        "import contextlib, io, json, sys\n"
        "from graphlib_ml.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['kg', 'tune', '--help'])\n"
        "print(json.dumps([m for m in ('optuna', 'tensorboard', 'mlflow') if m in sys.modules]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


def test_tune_refused_before_writing_leaves_no_new_out(tmp_path, capsys):
    # --out (and its missing parents) was created under the lock before the dataset was read:
    # an unreadable --dataset left an empty folder. A folder that existed before stays.
    argv = ["kg", "tune", "--dataset", str(tmp_path / "missing"), "--model", "distmult"]
    out = tmp_path / "new" / "tune"
    assert main([*argv, "--trials", "1", "--device", "cpu", "--out", str(out)]) != 0
    assert "is not a folder" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()
    old = tmp_path / "old"
    old.mkdir()
    assert main([*argv, "--trials", "1", "--device", "cpu", "--out", str(old)]) != 0
    assert old.is_dir() and not any(old.iterdir())
