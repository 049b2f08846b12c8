"""Synthetic worlds by name on the command line (``--dataset academic``; issue #18)."""

import pytest

from graphdata.errors import GraphDataError
from graphdata.triples import KGDataset
from graphdata.worlds import WORLDS, world
from graphlib_ml.cli import main
from graphlib_ml.cli._datasets import resolve_world, world_folder


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHLIB_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home" / "datasets"


def test_world_name_is_written_once_and_matches_the_generator(home, capsys):
    folder = resolve_world("academic:size=30,seed=2")
    assert folder == str(world_folder("academic", seed=2, size=30))
    assert folder.startswith(str(home))
    out = capsys.readouterr().out
    assert f"wrote {folder}" in out and f"rules: {folder}/rules.txt" in out
    expected = world("academic", seed=2, size=30)
    loaded = KGDataset.from_folder(folder)
    for split in ("train", "valid", "test"):
        assert set(map(tuple, loaded.splits[split].to_labeled_triples())) == set(
            map(tuple, expected.dataset.splits[split].to_labeled_triples())
        )
    assert (home / "worlds" / "academic-seed2-size30" / "rules.txt").read_text() == (
        expected.rules_text
    )
    stamp = (home / "worlds" / "academic-seed2-size30" / "train.txt").stat().st_mtime_ns
    assert resolve_world("academic:size=30,seed=2") == folder  # the cached draw, not rewritten
    assert "wrote" not in capsys.readouterr().out
    assert (home / "worlds" / "academic-seed2-size30" / "train.txt").stat().st_mtime_ns == stamp


def test_seed_comes_from_the_argument_unless_the_spec_gives_one(home):
    assert resolve_world("biology:size=40", seed=3).endswith("biology-seed3-size40")
    assert resolve_world("biology:size=40,seed=1", seed=3).endswith("biology-seed1-size40")


def test_existing_folder_synthetic_and_other_names_are_left_alone(home, tmp_path):
    (tmp_path / "academic").mkdir()
    assert resolve_world("academic") == "academic"  # an existing folder wins
    for spec in ("synthetic", "fb15k237", "no-such-world", "some/path", None):
        assert resolve_world(spec) == spec
    assert not (home / "worlds").exists()


def test_bad_world_spec(home):
    with pytest.raises(GraphDataError, match=r"--dataset: a world spec is NAME or NAME:size=N"):
        resolve_world("geography:size=big")
    with pytest.raises(GraphDataError, match=r"--dataset: a world spec.*'depth=2'"):
        resolve_world("geography:depth=2")
    with pytest.raises(GraphDataError, match="geography:size=30: size=N expected an int >= 40"):
        resolve_world("geography:size=30")


def test_an_unknown_name_lists_the_worlds_too(home):
    # The library's message listed the folder, 'synthetic' and the registered datasets only:
    # `graphlib kg train --dataset family` never said that the worlds are choices too.
    with pytest.raises(GraphDataError) as caught:
        resolve_world("family")
    message = str(caught.value)
    assert message.startswith("--dataset: expected a folder, 'synthetic', a synthetic world (")
    assert all(name in message for name in WORLDS) and "fb15k237" in message
    assert message.endswith("got 'family' (no such folder either)")
    assert resolve_world("nations") == "nations"  # registered: left to load_dataset


def test_train_on_a_world_folder_then_explain_with_its_rules(home, tmp_path, capsys):
    folder = resolve_world("academic:size=30")
    out = tmp_path / "run"
    argv = ["kg", "train", "--dataset", folder, "--model", "distmult", "--dim", "8"]
    argv += ["--epochs", "1", "--batch-size", "64", "--device", "cpu", "--out", str(out)]
    assert main([*argv, "--no-progress"]) == 0
    capsys.readouterr()
    w = world("academic", seed=0, size=30)
    target = next(t for t in w.targets("test") if w.groundings(t))
    argv = ["kg", "explain", str(out / "checkpoint.pt"), "--triple", " ".join(target)]
    argv += ["--dataset", "academic:size=30", "--rules", f"{folder}/rules.txt"]
    argv += ["--evaluator-steps", "3", "--evaluator-hidden", "8", "--device", "cpu"]
    argv += ["--no-progress", "--no-evaluator-cache", "--out", str(tmp_path / "x.png")]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert f"world academic (seed 0, size 30): {folder}" in text
    assert "ground truth (--rules, " in text and "grounding(s) in train" in text


def test_train_and_evaluate_take_a_world_name(home, tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["kg", "train", "--dataset", "academic:size=30", "--model", "distmult", "--dim", "8"]
    argv += ["--epochs", "1", "--batch-size", "64", "--device", "cpu", "--out", str(out)]
    assert main([*argv, "--no-progress"]) == 0
    folder = world_folder("academic", seed=0, size=30)
    assert f"world academic (seed 0, size 30): wrote {folder}" in capsys.readouterr().out
    # the world the run trained on is the generator's: same training triples, same vocabulary
    trained = KGDataset.from_folder(folder)
    expected = world("academic", seed=0, size=30).dataset
    assert len(trained.train) == len(expected.train) > 0
    argv = ["kg", "evaluate", str(out / "checkpoint.pt"), "--dataset", "academic:size=30"]
    assert main([*argv, "--device", "cpu"]) == 0
    assert "mrr" in capsys.readouterr().out.lower()
