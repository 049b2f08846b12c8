"""The evaluator cache of ``graphlib kg explain`` (issue #18, usability)."""

import argparse
import re

import pytest

from graphlib_ml.cli._datasets import user_warnings_as_lines
from graphlib_ml.cli.explain import add_explain_subparser
from kg.datasets import load_dataset
from kg.explain.evaluator.distilled import DistilledEvaluator
from kg.training import Trainer, TrainingConfig, build_model

# The 40-person family world caps some targets' candidates; that warning is tested elsewhere.
pytestmark = pytest.mark.filterwarnings("ignore::kg.explain.local.CandidatesCapped")


def _train(path, seed=0):
    dataset = load_dataset("synthetic", num_people=40)
    config = TrainingConfig(
        regime="1vsall",
        epochs=2,
        batch_size=64,
        lr=0.05,
        reciprocal=True,
        eval_every=0,
        progress=False,
        seed=seed,
        checkpoint_path=str(path),
    )
    Trainer(build_model("distmult", dataset, config, dim=8), config).fit(dataset)
    return dataset


@pytest.fixture
def checkpoint(tmp_path):
    path = tmp_path / "run" / "checkpoint.pt"
    path.parent.mkdir()
    _train(path)
    return path


@pytest.fixture
def fits(monkeypatch):
    """Count the distillations (the real fit still runs)."""
    calls = []
    real = DistilledEvaluator.fit

    def spy(self, *args, **kwargs):
        calls.append(self.config)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(DistilledEvaluator, "fit", spy)
    return calls


def _run(checkpoint, tmp_path, *extra):
    from graphdata.synthetic import family_kg

    world = family_kg(40, seed=0)
    h, r, t = next(x for x in world.derived_triples("test") if x[1] == "child_of")
    parser = argparse.ArgumentParser()
    add_explain_subparser(parser.add_subparsers(dest="kg_command"))
    argv = [
        "explain",
        str(checkpoint),
        "--triple",
        f"{h} {r} {t}",
        "--evaluator-steps",
        "3",
        "--evaluator-hidden",
        "16",
        "--device",
        "cpu",
        "--no-progress",
        "--out",
        str(tmp_path / "x.png"),
        *extra,
    ]
    args = parser.parse_args(argv)
    with user_warnings_as_lines():  # as graphlib's main runs every command
        return args.func(args)


def _cached(checkpoint):
    return sorted(checkpoint.parent.glob("evaluator-*.pt"))


def test_second_call_loads_the_cache(checkpoint, tmp_path, fits, capsys):
    assert _run(checkpoint, tmp_path) == 0
    out = capsys.readouterr().out
    (cache,) = _cached(checkpoint)
    assert len(fits) == 1 and f"evaluator cache: wrote {cache}" in out
    assert _run(checkpoint, tmp_path) == 0
    out = capsys.readouterr().out
    assert len(fits) == 1  # no second distillation
    assert f"evaluator cache: loaded {cache}" in out and "distilling" not in out


def test_changed_flag_or_checkpoint_misses(checkpoint, tmp_path, fits, capsys):
    assert _run(checkpoint, tmp_path) == 0
    assert _run(checkpoint, tmp_path, "--evaluator-hidden", "8") == 0
    assert len(fits) == 2 and [c.hidden for c in fits] == [16, 8]
    assert len(_cached(checkpoint)) == 2
    _train(checkpoint, seed=1)  # the same file, other parameters
    assert _run(checkpoint, tmp_path) == 0
    assert len(fits) == 3 and len(_cached(checkpoint)) == 3
    assert "evaluator cache: loaded" not in capsys.readouterr().out


def test_corrupt_cache_is_distilled_again_with_a_warning(checkpoint, tmp_path, fits, capsys):
    assert _run(checkpoint, tmp_path) == 0
    (cache,) = _cached(checkpoint)
    cache.write_bytes(b"not a torch file")
    capsys.readouterr()
    assert _run(checkpoint, tmp_path) == 0
    err = capsys.readouterr().err
    assert re.search(r"^graphlib: warning: evaluator cache: .*evaluator-.*\.pt.*distilling", err)
    assert len(fits) == 2
    DistilledEvaluator.load(cache)  # replaced by a valid file
    assert _run(checkpoint, tmp_path) == 0
    assert len(fits) == 2 and "evaluator cache: loaded" in capsys.readouterr().out


def test_no_evaluator_cache_writes_nothing(checkpoint, tmp_path, fits, capsys):
    assert _run(checkpoint, tmp_path, "--no-evaluator-cache") == 0
    assert _run(checkpoint, tmp_path, "--no-evaluator-cache") == 0
    assert len(fits) == 2 and _cached(checkpoint) == []
    assert "evaluator cache: off (--no-evaluator-cache)" in capsys.readouterr().out


def test_unwritable_folder_warns_once_and_goes_on(checkpoint, tmp_path, fits, monkeypatch, capsys):
    def refuse(self, path):
        raise OSError(13, "Permission denied", str(path))

    monkeypatch.setattr(DistilledEvaluator, "save", refuse)
    assert _run(checkpoint, tmp_path) == 0
    err = capsys.readouterr().err
    assert "could not write" in err and err.count("graphlib: warning: evaluator cache") == 1
    assert (tmp_path / "x.png").is_file() and _cached(checkpoint) == []


def test_save_evaluator_also_writes_a_loaded_cache(checkpoint, tmp_path, fits):
    assert _run(checkpoint, tmp_path) == 0
    assert _run(checkpoint, tmp_path, "--save-evaluator", str(tmp_path / "ev.pt")) == 0
    assert len(fits) == 1
    DistilledEvaluator.load(tmp_path / "ev.pt")
