import argparse
import json

import pytest

from graphdata.errors import GraphDataError, UnknownLabelError
from graphlib_ml.cli._datasets import user_warnings_as_lines
from graphlib_ml.cli.explain import add_explain_subparser
from kg.datasets import load_dataset
from kg.training import Trainer, TrainingConfig, build_model


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    dataset = load_dataset("synthetic", num_people=40)
    path = tmp_path_factory.mktemp("ckpt") / "checkpoint.pt"
    config = TrainingConfig(
        regime="1vsall",
        epochs=5,
        batch_size=64,
        lr=0.05,
        reciprocal=True,
        eval_every=0,
        progress=False,
        checkpoint_path=str(path),
    )
    Trainer(build_model("distmult", dataset, config, dim=8), config).fit(dataset)
    return path, dataset


def _run(argv):
    parser = argparse.ArgumentParser()
    add_explain_subparser(parser.add_subparsers(dest="kg_command"))
    args = parser.parse_args(["explain", *argv])
    with user_warnings_as_lines():  # as graphlib's main runs every command
        return args.func(args)


def _triple(dataset):
    from graphdata.synthetic import family_kg

    world = family_kg(40, seed=0)
    return next(t for t in world.derived_triples("test") if t[1] == "child_of")


def test_explain_prints_paths_ground_truth_and_writes_files(checkpoint, tmp_path, capsys):
    path, dataset = checkpoint
    h, r, t = _triple(dataset)
    png, out_json, ev = tmp_path / "x.png", tmp_path / "x.json", tmp_path / "ev.pt"
    common = [
        str(path),
        "--triple",
        f"{h} {r} {t}",
        "--evaluator-steps",
        "5",
        "--evaluator-hidden",
        "16",
        "--device",
        "cpu",
        "--max-candidates",
        "30",
        "--out",
        str(png),
    ]
    assert _run([*common, "--json", str(out_json), "--save-evaluator", str(ev)]) == 0
    out, err = capsys.readouterr()
    # the cap as one line, without Python's warning format
    assert err.startswith("graphlib: warning: 1 of 1 targets had more than max_candidates=30 ")
    assert "--max-candidates" in err and ".py:" not in err and "Warning" not in err
    assert f"explanation of ({h}, {r}, {t})" in out
    assert "max_paths = 3" in out and "ground truth (planted rule groundings):" in out
    assert "'hidden': 16" in out  # a generated EvaluatorConfig flag reaches the config
    assert "distilling the evaluator (5 steps" in out and "--save-evaluator FILE" not in out
    assert "parent(" in out and "best single-rule F1" in out
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert json.loads(out_json.read_text())["target"] == [h, r, t]
    # Reusing the saved evaluator skips distillation and gives the same explanation.
    assert _run([*common, "--evaluator", str(ev), "--json", str(tmp_path / "y.json")]) == 0
    out, err = capsys.readouterr()
    assert "max_candidates=30" in err
    assert "distilled the evaluator" not in out and "distilling" not in out
    first = json.loads(out_json.read_text())
    second = json.loads((tmp_path / "y.json").read_text())
    assert first["triples"] == second["triples"] and first["joint_score"] == second["joint_score"]


def test_bad_triples(checkpoint):
    path, dataset = checkpoint
    with pytest.raises(GraphDataError, match="three space-separated labels"):
        _run([str(path), "--triple", "person_0001 parent"])
    with pytest.raises(UnknownLabelError, match="Closest known relation labels: 'parent'"):
        _run(
            [
                str(path),
                "--triple",
                "person_0001 parnet person_0002",
                "--device",
                "cpu",
                "--mode",
                "retrain",
            ]
        )


def test_ground_truth_of_a_symmetric_target_counts_the_mirrored_proof(capsys):
    from graphdata.synthetic import family_kg
    from graphlib_ml.cli.explain import _print_ground_truth

    world = family_kg(40, seed=0)
    h, r, t = next(x for x in world.explanations if x[1] == "cousin")
    mirror = world.explanations[(t, r, h)][0].path  # the proof named from the other side
    _print_ground_truth(world, (h, r, t), mirror)
    out = capsys.readouterr().out
    assert "cousin is symmetric" in out and "F1 1.00" in out
