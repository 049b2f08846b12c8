import json
import sys

import pytest
import torch

from graphdata.errors import GraphDataError
from graphdata.tracking import JsonlTracker
from graphdata.triples import KGDataset
from kg.config import TrainingConfig
from kg.tune import SEARCH_SPACES, TRAIN_CONFIG_KEYS, load_train_config, save_train_config, tune

optuna = pytest.importorskip("optuna", reason="the tune extra (optuna) is not installed")

#: Few epochs, one validation each: trials of about a second on one core.
FAST = {"epochs": 3, "eval_every": 1}


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def dataset():
    n = 9
    rows = [(f"c{i}", "to", f"c{(i + 1) % n}") for i in range(n)]
    rows += [(f"c{i}", "near", f"c{(i + 2) % n}") for i in range(n)]
    return KGDataset.from_labeled(rows, rows[::5], rows[1::5])


def _trials(out):
    return [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]


def _study(out):
    return optuna.load_study(study_name="graphlib-kg-tune", storage=f"sqlite:///{out}/study.db")


def test_a_second_run_continues_the_study_up_to_the_total(tmp_path, dataset):
    out = tmp_path / "t"
    first = tune(dataset, "distmult", out=out, trials=2, overrides=FAST)
    before = _trials(out)
    assert first.trials == 2 and [t["number"] for t in before] == [0, 1]
    second = tune(dataset, "distmult", out=out, trials=4, overrides=FAST)
    after = _trials(out)
    assert second.trials == 4 and [t["number"] for t in after] == [0, 1, 2, 3]
    assert after[:2] == before  # the first trials are kept, not rerun
    # The resumed sampler is seeded past the first trials: no point is drawn twice.
    assert len({json.dumps(t["params"], sort_keys=True) for t in after}) == 4
    # The best value is the best completed trial's, and its config file is that trial's.
    complete = [t for t in after if t["state"] == "complete"]
    best = max(complete, key=lambda t: t["value"])
    assert second.best_value == best["value"] and second.best_trial == best["number"]
    assert second.best_config["lr"] == best["params"]["lr"]
    assert second.best_config["dim"] == best["params"]["dim"]
    # Enough already: a third run starts no trial.
    assert tune(dataset, "distmult", out=out, trials=3, overrides=FAST).trials == 4


def test_a_trial_left_running_by_a_killed_process_is_failed_and_retried(tmp_path, dataset):
    out = tmp_path / "t"
    tune(dataset, "distmult", out=out, trials=1, overrides=FAST)
    # What kill -9 leaves behind: a RUNNING trial with its parameters drawn.
    study = _study(out)
    killed = study.ask()
    params = {"dim": 32, "lr": 0.01, "batch_size": 64, "regularizer_weight": 0.01}
    killed.suggest_categorical("dim", [32, 64, 128, 256])
    killed.suggest_float("lr", 1e-3, 1e-1, log=True)
    killed.suggest_categorical("batch_size", [64, 128, 256, 512])
    killed.suggest_float("regularizer_weight", 1e-3, 1e-1, log=True)
    killed_params = killed.params
    result = tune(dataset, "distmult", out=out, trials=2, overrides=FAST)
    rows = _trials(out)
    assert [r["state"] for r in rows] == ["complete", "fail", "complete"]
    assert rows[1]["interrupted"] and not rows[2]["interrupted"]
    assert rows[2]["params"] == killed_params  # queued again and run first
    assert set(params) == set(killed_params)
    assert result.trials == 2  # the interrupted trial does not count


def test_a_queued_trial_has_no_seconds_and_trials_jsonl_is_strict_json(tmp_path, dataset):
    # A trial left running by a killed process is failed and queued again; a rerun with nothing
    # left to run writes the queued trial (never started): its seconds were NaN, not JSON.
    out = tmp_path / "t"
    tune(dataset, "distmult", out=out, trials=1, overrides=FAST)
    killed = _study(out).ask()
    killed.suggest_categorical("dim", [32, 64, 128, 256])
    tune(dataset, "distmult", out=out, trials=1, overrides=FAST)

    def no_constants(name):
        raise AssertionError(f"non-JSON constant {name} in trials.jsonl")

    lines = (out / "trials.jsonl").read_text().splitlines()
    rows = [json.loads(line, parse_constant=no_constants) for line in lines]
    assert [r["state"] for r in rows] == ["complete", "fail", "waiting"]
    assert rows[2]["seconds"] is None and rows[2]["value"] is None
    study = _study(out)  # oracle: the stored timestamps of the ended trials
    for row, trial in zip(rows[:2], study.get_trials(deepcopy=False)):
        spent = (trial.datetime_complete - trial.datetime_start).total_seconds()
        assert row["seconds"] == pytest.approx(spent) and spent >= 0


def test_pruning_stops_trials_at_the_epoch_the_pruner_says(tmp_path, dataset):
    class PruneAfterTheFirst(optuna.pruners.BasePruner):
        def prune(self, study, trial):
            return trial.number >= 1

    out = tmp_path / "t"
    result = tune(
        dataset, "distmult", out=out, trials=3, overrides=FAST, pruner=PruneAfterTheFirst()
    )
    rows = _trials(out)
    assert [r["state"] for r in rows] == ["complete", "pruned", "pruned"]
    assert [r["pruned_at_epoch"] for r in rows] == [None, 1, 1]  # the first validation
    assert result.pruned == 2 and result.trials == 3 and result.best_trial == 0


def test_the_median_pruner_stops_a_clearly_worse_trial(tmp_path, dataset):
    # Three trials that learn (lr 0.05), then one that cannot in a few epochs (lr 1e-3):
    # the median pruner (3 startup trials, 4 warm-up epochs) stops it at its 4th validation.
    out = tmp_path / "t"
    out.mkdir()
    study = optuna.create_study(
        study_name="graphlib-kg-tune", storage=f"sqlite:///{out}/study.db", direction="maximize"
    )
    good = {"dim": 64, "batch_size": 64, "regularizer_weight": 0.001, "lr": 0.05}
    for _ in range(3):
        study.enqueue_trial(good)
    study.enqueue_trial({"dim": 32, "batch_size": 512, "regularizer_weight": 0.1, "lr": 1e-3})
    fixed = {"epochs": 6, "eval_every": 1, "patience": None}
    result = tune(dataset, "distmult", out=out, trials=4, overrides=fixed)
    rows = _trials(out)
    assert [r["state"] for r in rows] == ["complete"] * 3 + ["pruned"]
    assert rows[-1]["pruned_at_epoch"] == 4 and rows[-1]["params"]["lr"] == 1e-3
    assert rows[-1]["value"] < min(r["value"] for r in rows[:3])
    assert result.pruned == 1


def test_best_config_round_trips_into_the_trial_config(tmp_path, dataset):
    out = tmp_path / "t"
    result = tune(dataset, "complex", out=out, trials=2, overrides=FAST, dataset_spec="synthetic")
    loaded = load_train_config(out / "best_config.json")
    model, dim = loaded.pop("model"), loaded.pop("dim")
    assert (model, loaded.pop("dataset")) == ("complex", "synthetic")
    trial = _study(out).trials[result.best_trial]
    expected = TrainingConfig(**{**trial.user_attrs["config"], "progress": True})
    assert TrainingConfig.from_defaults(model, **loaded) == expected
    assert dim == trial.params["dim"]
    assert set(loaded) | {"model", "dim", "dataset"} <= set(TRAIN_CONFIG_KEYS)


def test_the_tracker_gets_one_step_per_trial(tmp_path, dataset):
    out = tmp_path / "t"
    with JsonlTracker(tmp_path / "trials.jsonl", step_key="trial") as tracker:
        tune(dataset, "rotate", out=out, trials=2, overrides=FAST, tracker=tracker)
    logged = [json.loads(line) for line in (tmp_path / "trials.jsonl").read_text().splitlines()]
    rows = _trials(out)
    assert [r["trial"] for r in logged] == [0, 1]
    assert [r["valid_mrr"] for r in logged] == [r["value"] for r in rows]
    assert [r["param.num_negatives"] for r in logged] == [
        r["params"]["num_negatives"] for r in rows
    ]
    params = json.loads((tmp_path / "trials.params.json").read_text())
    assert params["model"] == "rotate" and params["trials"] == 2


def test_a_failed_trial_logs_no_nan_to_the_tracker(tmp_path, dataset, monkeypatch):
    # A diverged trial is a failed one, with no value: its tracker line used to hold
    # "valid_mrr": NaN, which is not JSON and is never a result.
    import kg.training
    from kg.training import TrainingDivergedError

    original, calls = kg.training.Trainer.fit, []

    def diverge_first(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise TrainingDivergedError("loss became nan in epoch 1 (test)")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(kg.training.Trainer, "fit", diverge_first)
    log = tmp_path / "trials.jsonl"
    with JsonlTracker(log, step_key="trial") as tracker:
        tune(dataset, "distmult", out=tmp_path / "t", trials=2, overrides=FAST, tracker=tracker)

    def no_constants(name):
        raise AssertionError(f"non-JSON constant {name} in the tracker's file")

    lines = log.read_text().splitlines()
    logged = [json.loads(line, parse_constant=no_constants) for line in lines]
    rows = _trials(log.parent / "t")
    assert [r["trial"] for r in logged] == [0, 1] and rows[0]["value"] is None
    assert "valid_mrr" not in logged[0] and logged[0]["pruned"] == 0.0
    assert logged[1]["valid_mrr"] == rows[1]["value"]


def test_a_kill_after_a_trial_is_stored_loses_no_tracker_step(tmp_path, dataset, monkeypatch):
    # Optuna stores a finished trial before it calls the callback that logs it: a kill in
    # between (here in trials.jsonl's write) used to leave that trial out of the tracker.
    import kg.tune

    out, log = tmp_path / "t", tmp_path / "trials.jsonl"
    original, calls = kg.tune._write_outputs, []

    def killed_in_the_second_callback(*args):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt  # trial 1 is in study.db, not yet logged
        return original(*args)

    monkeypatch.setattr(kg.tune, "_write_outputs", killed_in_the_second_callback)
    with pytest.raises(KeyboardInterrupt), JsonlTracker(log, step_key="trial") as tracker:
        tune(dataset, "distmult", out=out, trials=3, overrides=FAST, tracker=tracker)
    monkeypatch.setattr(kg.tune, "_write_outputs", original)
    with JsonlTracker(log, step_key="trial") as tracker:
        tune(dataset, "distmult", out=out, trials=3, overrides=FAST, tracker=tracker)
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    rows = _trials(out)
    assert [r["trial"] for r in logged] == [r["number"] for r in rows] == [0, 1, 2]
    assert [r["valid_mrr"] for r in logged] == [r["value"] for r in rows]


def test_a_study_of_another_model_is_not_resumed(tmp_path, dataset):
    out = tmp_path / "t"
    tune(dataset, "distmult", out=out, trials=1, overrides=FAST)
    with pytest.raises(GraphDataError, match=r"holds a study with another model \('distmult'"):
        tune(dataset, "complex", out=out, trials=2, overrides=FAST)


def test_fixed_fields_leave_the_search_and_bad_arguments_are_refused(tmp_path, dataset):
    out = tmp_path / "t"
    tune(dataset, "distmult", out=out, trials=1, overrides={**FAST, "lr": 0.02})
    assert set(_trials(out)[0]["params"]) == set(SEARCH_SPACES["distmult"]) - {"lr"}
    with pytest.raises(GraphDataError, match="trials: expected an int >= 1, got 0"):
        tune(dataset, "distmult", out=out, trials=0)
    with pytest.raises(GraphDataError, match="eval_every=0 never validates"):
        tune(dataset, "distmult", out=tmp_path / "u", trials=1, overrides={"eval_every": 0})


def test_without_optuna_the_error_names_the_extra(tmp_path, dataset, monkeypatch):
    monkeypatch.setitem(sys.modules, "optuna", None)
    with pytest.raises(ImportError, match="needs the 'optuna' package") as caught:
        tune(dataset, "distmult", out=tmp_path, trials=1)
    assert caught.value.__notes__ == ["install the extra: pip install 'graphlib-ml[tune]'"]


def test_config_files_refuse_unknown_keys_and_bad_values(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"model": "distmult", "learning_rate": 0.1}))
    with pytest.raises(GraphDataError, match=r"unknown keys \['learning_rate'\].*'lr'"):
        load_train_config(path)
    path.write_text(json.dumps({"model": "bert"}))
    expected = r"c.json: model: expected 'auto' or one of \['complex'"
    with pytest.raises(GraphDataError, match=expected):
        load_train_config(path)
    path.write_text(json.dumps({"dim": 0}))
    with pytest.raises(GraphDataError, match=r"c.json: dim: expected an int >= 1 or null, got 0"):
        load_train_config(path)
    path.write_text("[1, 2]")
    with pytest.raises(GraphDataError, match="expected a JSON/TOML object"):
        load_train_config(path)
    path.write_text("{not json")
    with pytest.raises(GraphDataError, match="is not valid JSON"):
        load_train_config(path)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is Python 3.11+")
def test_a_toml_config_reads_like_json(tmp_path):
    (tmp_path / "c.toml").write_text('model = "rotate"\nlr = 0.01\nregularizer = "none"\n')
    assert load_train_config(tmp_path / "c.toml") == {
        "model": "rotate",
        "lr": 0.01,
        "regularizer": None,
    }


def test_save_then_load_gives_back_the_config(tmp_path):
    config = TrainingConfig.from_defaults("transe", epochs=7, lr=0.02)
    written = save_train_config(tmp_path / "c.json", model="transe", dim=48, config=config)
    loaded = load_train_config(tmp_path / "c.json")
    assert loaded == written
    assert loaded.pop("model") == "transe" and loaded.pop("dim") == 48
    assert TrainingConfig.from_defaults("transe", **loaded) == config
