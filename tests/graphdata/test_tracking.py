import json
import math
import sys

import pytest
import torch

from graphdata.errors import GraphDataError
from graphdata.tracking import (
    JsonlTracker,
    Tracker,
    make_tracker,
)
from graphdata.triples import KGDataset
from kg.config import TrainingConfig
from kg.distmult import DistMult
from kg.training import Trainer


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def _no_mlflow_telemetry(monkeypatch):
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    monkeypatch.setenv("DO_NOT_TRACK", "true")


@pytest.fixture
def dataset():
    n = 9
    rows = [(f"c{i}", "to", f"c{(i + 1) % n}") for i in range(n)]
    rows += [(f"c{i}", "near", f"c{(i + 2) % n}") for i in range(n)]
    return KGDataset.from_labeled(rows, rows[::5], rows[1::5])


def _config(tmp_path, **kwargs):
    base = dict(
        epochs=3,
        batch_size=8,
        num_negatives=2,
        eval_every=2,
        progress=False,
        log_path=str(tmp_path / "metrics.jsonl"),
    )
    return TrainingConfig(**{**base, **kwargs})


def _fit(dataset, config, tracker=None, resume=False):
    model = DistMult(dataset.num_entities, dataset.num_relations, dim=8)
    return Trainer(model, config).fit(dataset, tracker=tracker, resume=resume)


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_three_trackers_satisfy_the_protocol(tmp_path):
    from graphdata.tracking import MlflowTracker, TensorBoardTracker

    assert isinstance(make_tracker("jsonl", tmp_path), Tracker)
    # Classes, so that the optional packages need not be installed.
    for cls in (JsonlTracker, TensorBoardTracker, MlflowTracker):
        assert issubclass(cls, Tracker), cls

    class NoClose:  # the protocol check can fail: a sink without close() is not a Tracker
        def log_params(self, params):
            return None

        def log_metrics(self, metrics, step):
            return None

    assert not issubclass(NoClose, Tracker)


def test_jsonl_tracker_writes_the_bytes_of_the_trainer_log(tmp_path, dataset):
    tracker = JsonlTracker(tmp_path / "tracked.jsonl", step_key="epoch")
    with tracker:
        trainer = _fit(dataset, _config(tmp_path), tracker)
    log = (tmp_path / "metrics.jsonl").read_bytes()
    assert (tmp_path / "tracked.jsonl").read_bytes() == log
    # Validation at epochs 2 and 3 (the last), losses at every epoch.
    records = _lines(tmp_path / "metrics.jsonl")
    assert [r["epoch"] for r in records] == [1, 2, 3]
    assert ["valid_mrr" in r for r in records] == [False, True, True]
    assert records == trainer.history_
    params = json.loads((tmp_path / "tracked.params.json").read_text())
    assert params["model"] == "distmult" and params["model.dim"] == 8
    assert params["epochs"] == 3 and params["log_path"] == str(tmp_path / "metrics.jsonl")


def test_a_resumed_fit_leaves_the_tracker_file_equal_to_the_rewritten_log(tmp_path, dataset):
    ckpt = str(tmp_path / "ckpt.pt")
    with JsonlTracker(tmp_path / "tracked.jsonl", step_key="epoch") as tracker:
        _fit(dataset, _config(tmp_path, epochs=2, checkpoint_path=ckpt), tracker)
    # A killed run may have logged an epoch past its checkpoint: the resumed run replaces it.
    with open(tmp_path / "tracked.jsonl", "a") as handle:
        handle.write(json.dumps({"epoch": 3, "loss": 123.0, "seconds": 0.0}) + "\n")
    with JsonlTracker(tmp_path / "tracked.jsonl", step_key="epoch") as tracker:
        trainer = _fit(dataset, _config(tmp_path, epochs=4, checkpoint_path=ckpt), tracker, True)
    log = (tmp_path / "metrics.jsonl").read_bytes()
    assert (tmp_path / "tracked.jsonl").read_bytes() == log
    assert [r["epoch"] for r in _lines(tmp_path / "tracked.jsonl")] == [1, 2, 3, 4]
    assert all(r["loss"] != 123.0 for r in trainer.history_)


def test_jsonl_purge_drops_from_the_first_step_and_append_keeps_all(tmp_path):
    path = tmp_path / "m.jsonl"
    with JsonlTracker(path) as tracker:
        for step in (1, 2, 3):
            tracker.log_metrics({"x": float(step)}, step)
    with JsonlTracker(path) as tracker:
        tracker.log_metrics({"x": 20.0}, 2)
        tracker.log_metrics({"x": 30.0}, 3)
    assert _lines(path) == [{"step": 1, "x": 1.0}, {"step": 2, "x": 20.0}, {"step": 3, "x": 30.0}]
    with JsonlTracker(path, purge=False) as tracker:
        tracker.log_metrics({"x": 1.5}, 1)
    assert [r["x"] for r in _lines(path)] == [1.0, 20.0, 30.0, 1.5]


def test_jsonl_tracker_refuses_bad_metrics_steps_and_use_after_close(tmp_path):
    tracker = JsonlTracker(tmp_path / "m.jsonl")
    with pytest.raises(GraphDataError, match=r"metrics\['name'\]: expected a real number"):
        tracker.log_metrics({"name": "distmult"}, 1)
    with pytest.raises(GraphDataError, match="step: expected an int >= 0, got -1"):
        tracker.log_metrics({"x": 1.0}, -1)
    tracker.close()
    with pytest.raises(GraphDataError, match="was closed"):
        tracker.log_metrics({"x": 1.0}, 1)


def test_make_tracker_refuses_an_unknown_name_and_a_uri_without_mlflow(tmp_path):
    with pytest.raises(GraphDataError, match=r"tracker: expected one of \('jsonl'"):
        make_tracker("wandb", tmp_path)
    with pytest.raises(GraphDataError, match="only the 'mlflow' tracker"):
        make_tracker("jsonl", tmp_path, tracking_uri="sqlite:///x.db")


@pytest.mark.parametrize(("name", "extra"), [("tensorboard", "tensorboard"), ("mlflow", "mlflow")])
def test_a_missing_extra_names_the_pip_command(tmp_path, monkeypatch, name, extra):
    monkeypatch.setitem(sys.modules, name, None)  # makes `import name` fail
    with pytest.raises(ImportError, match=f"the '{name}' tracker needs") as caught:
        make_tracker(name, tmp_path)
    assert caught.value.__notes__ == [f"install the extra: pip install 'graphlib-ml[{extra}]'"]


def test_tensorboard_events_hold_the_values_of_metrics_jsonl(tmp_path, dataset):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    with make_tracker("tensorboard", tmp_path / "run") as tracker:
        _fit(dataset, _config(tmp_path), tracker)
    records = _lines(tmp_path / "metrics.jsonl")
    events = EventAccumulator(str(tmp_path / "run" / "tensorboard"))
    events.Reload()
    assert set(events.Tags()["scalars"]) == {"loss", "seconds", "valid_mrr", "valid_hits_at_10"}
    for tag in ("loss", "valid_mrr", "valid_hits_at_10"):
        expected = [(r["epoch"], r[tag]) for r in records if tag in r]
        got = [(e.step, e.value) for e in events.Scalars(tag)]
        assert [s for s, _ in got] == [s for s, _ in expected]
        for (_, value), (_, want) in zip(got, expected):
            assert value == pytest.approx(want, rel=1e-6)  # TensorBoard stores float32
    assert "params/text_summary" in events.Tags()["tensors"]


def test_tensorboard_purge_replaces_the_steps_a_killed_run_logged(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from graphdata.tracking import TensorBoardTracker

    with TensorBoardTracker(tmp_path / "tb") as tracker:
        for step in (1, 2, 3):
            tracker.log_metrics({"loss": float(step)}, step)
    with TensorBoardTracker(tmp_path / "tb") as tracker:
        tracker.log_metrics({"loss": 20.0}, 2)
    events = EventAccumulator(str(tmp_path / "tb"))
    events.Reload()
    assert [(e.step, e.value) for e in events.Scalars("loss")] == [(1, 1.0), (2, 20.0)]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # SQLAlchemy inside MLflow
def test_mlflow_run_holds_the_values_of_metrics_jsonl(tmp_path, dataset):
    pytest.importorskip("mlflow", reason="the mlflow extra is not installed (not part of dev)")
    from mlflow.tracking import MlflowClient

    tracker = make_tracker("mlflow", tmp_path / "run", run_name="test")
    with tracker:
        _fit(dataset, _config(tmp_path), tracker)
    records = _lines(tmp_path / "metrics.jsonl")
    client = MlflowClient(tracking_uri=tracker.tracking_uri)
    assert tracker.tracking_uri.startswith("sqlite:///") and (tmp_path / "run/mlflow.db").is_file()
    run = client.get_run(tracker.run_id)
    assert run.info.status == "FINISHED" and run.info.run_name == "test"
    assert run.data.params["model"] == "distmult" and run.data.params["lr"] == "0.001"
    assert run.data.params["regularizer"] == "None"
    for tag in ("loss", "valid_mrr"):
        history = sorted((m.step, m.value) for m in client.get_metric_history(tracker.run_id, tag))
        assert history == [(r["epoch"], r[tag]) for r in records if tag in r]  # float64: exact


def test_celcomen_fit_logs_its_losses(tmp_path):
    from spatial.celcomen import Celcomen
    from spatial.simulate import simulate_tissue

    tissue = simulate_tissue(40, 3, steps=20, seed=0)
    with JsonlTracker(tmp_path / "fit.jsonl", step_key="epoch") as tracker:
        est = Celcomen(epochs=4, progress=False).fit(tissue.x, tissue.edge_index, tracker=tracker)
    records = _lines(tmp_path / "fit.jsonl")
    assert records == [{"epoch": i + 1, "loss": loss} for i, loss in enumerate(est.losses_)]
    assert all(math.isfinite(r["loss"]) for r in records)
    params = json.loads((tmp_path / "fit.params.json").read_text())
    assert (params["n_cells"], params["n_genes"], params["epochs"]) == (40, 3, 4)
