"""benchmarks.bench_kg_scale part (c) with a recipe other than the defaults.

``--quality-set KEY=VALUE`` (TrainingConfig fields) and ``--quality-dim N``: parsing, the clear
errors, that the defaults are unchanged without them, and that the override reaches the model.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks import bench_kg_scale as scale
from graphdata.errors import GraphDataError
from graphdata.synthetic import family_kg
from kg.training import TrainingConfig


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("family")
    family_kg(60, seed=0).dataset.to_folder(path)
    return path


def test_parse_value() -> None:
    assert scale.parse_value("5e-2") == 0.05 and isinstance(scale.parse_value("1000"), int)
    assert scale.parse_value("None") is None and scale.parse_value("true") is True
    assert scale.parse_value("false") is False and scale.parse_value("adagrad") == "adagrad"


def test_parse_overrides() -> None:
    out = scale.parse_overrides(["optimizer=adagrad", "lr=0.1", "batch-size=1000", "lr=0.05"])
    assert out == {"optimizer": "adagrad", "lr": 0.05, "batch_size": 1000}  # last one wins
    assert scale.parse_overrides([]) == {}
    with pytest.raises(ValueError, match="learning_rate: not a TrainingConfig field"):
        scale.parse_overrides(["learning_rate=0.1"])
    with pytest.raises(ValueError, match="expected KEY=VALUE"):
        scale.parse_overrides(["lr"])
    with pytest.raises(ValueError, match="patience: set by the bench"):
        scale.parse_overrides(["patience=3"])


def test_quality_config_overrides() -> None:
    default = scale.quality_config("complex")
    assert default == TrainingConfig.from_defaults(
        "complex", seed=0, eval_every=0, patience=None, progress=False
    )  # no flags: the tuned defaults, unchanged
    tuned = scale.quality_config("complex", overrides={"regularizer_weight": 0.05, "lr": 0.1})
    assert tuned.regularizer_weight == 0.05 and tuned.lr == 0.1
    assert tuned.batch_size == default.batch_size and tuned.patience is None
    with pytest.raises(GraphDataError, match="optimizer"):
        scale.quality_config("complex", overrides={"optimizer": "adamw"})


def test_quality_ours_dim_and_overrides(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dataset = scale.load(folder)[0]
    dims: list[int] = []
    build = scale.build_model

    def spy(name, dataset, config, *, dim=None):  # type: ignore[no-untyped-def]
        model = build(name, dataset, config, dim=dim)
        dims.append(model.dim)
        assert config.optimizer == "adagrad" and config.batch_size == 32
        return model

    monkeypatch.setattr(scale, "build_model", spy)
    out = scale.quality_ours(
        dataset,
        "complex",
        budget_s=0.0,
        valid_every_s=3600.0,
        overrides={"optimizer": "adagrad", "lr": 0.1, "batch_size": 32},
        dim=12,
    )
    assert dims == [12] and out["epochs"] == 1 and 0 < out["test"]["mrr"] <= 1


def test_main_records_the_recipe(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # main() sets OMP_NUM_THREADS and torch's thread count for its subprocesses: restore both,
    # or every later test (and the CLI processes they start) runs under them.
    monkeypatch.setenv("OMP_NUM_THREADS", os.environ.get("OMP_NUM_THREADS", "1"))  # undone after
    monkeypatch.setattr(scale.torch, "set_num_threads", lambda n: None)
    argv = ["--data", str(folder), "--pykeen-python", "", "--parts", "quality"]
    argv += ["--quality-model", "distmult", "--budget-min", "0.001", "--out", str(tmp_path / "q")]
    out = scale.main([*argv, "--quality-set", "regularizer_weight=0.05", "--quality-dim", "16"])
    assert out["quality"]["dim"] == 16 and out["quality"]["overrides"] == {
        "regularizer_weight": 0.05
    }
    assert out["quality"]["config"]["regularizer_weight"] == 0.05
    plain = scale.main(argv)["quality"]
    assert plain["overrides"] == {} and plain["dim"] == scale.DEFAULTS["distmult"].dim


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--quality-set", "nope=1"], "nope: not a TrainingConfig field"),
        (["--quality-set", "optimizer=adamw"], "optimizer"),
        (["--quality-dim", "0"], "--quality-dim"),
    ],
)
def test_main_rejects_bad_recipe(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        scale.main(["--pykeen-python", "", "--parts", "quality", *extra])
    assert message in capsys.readouterr().err
