"""Every ``--seed`` flag takes what its command's config takes (issue: the flag stopped at
``2**63 - 1`` while a config takes torch's ``2**64 - 1``); ``graphlib spatial`` and ``demo`` stop
at ``2**63 - 1``, since a Celcomen config stores its seed in the AnnData as an int64.

Through :func:`graphlib_ml.cli.main`: the first refused value is a usage error naming the flag,
and the largest accepted one runs.
"""

from __future__ import annotations

import pytest

from graphdata.triples import KGDataset
from graphlib_ml.cli import EXIT_USAGE, main
from tests.graphlib_ml.test_cli_explain import checkpoint  # noqa: F401 - a fixture

TORCH_MAX = 2**64 - 1
INT64_MAX = 2**63 - 1


pytestmark = pytest.mark.usefixtures("one_thread_quiet")


@pytest.mark.parametrize(
    ("command", "flag", "largest"),
    [
        (["data", "family", "out"], "--seed", TORCH_MAX),
        (["kg", "train"], "--seed", TORCH_MAX),
        (["kg", "tune"], "--seed", TORCH_MAX),
        (["kg", "explain", "ckpt.pt"], "--seed", TORCH_MAX),
        (["kg", "explain", "ckpt.pt"], "--evaluator-seed", TORCH_MAX),
        (["kg", "explain", "ckpt.pt"], "--retrain-seed", TORCH_MAX),
        (["graphon", "densities"], "--seed", TORCH_MAX),
        (["graphon", "transfer"], "--seed", TORCH_MAX),
        (["demo"], "--seed", INT64_MAX),
        (["spatial", "simulate", "--out", "t.h5ad"], "--seed", INT64_MAX),
        (["spatial", "fit", "t.h5ad", "--out", "f.h5ad"], "--seed", INT64_MAX),
        (["spatial", "perturb", "t.h5ad", "--gene", "a=0", "--cells", "c"], "--seed", INT64_MAX),
    ],
)
def test_the_first_seed_past_the_range_is_refused_naming_the_flag(
    command, flag, largest, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    assert main([*command, flag, str(largest + 1)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert f"argument {flag}: expected an integer in [0, {largest}]" in err, err
    assert "Traceback" not in err and not any(tmp_path.iterdir())


@pytest.fixture
def folder(tmp_path):
    n = 9
    rows = [(f"city{i}", "road_to", f"city{(i + 1) % n}") for i in range(n)]
    rows += [(f"city{i}", "near", f"city{(i + 2) % n}") for i in range(n)]
    KGDataset.from_labeled(rows, rows[::5], rows[1::5]).to_folder(tmp_path / "data")
    return tmp_path / "data"


def test_the_largest_torch_seed_runs_the_kg_commands(folder, tmp_path):
    # Before: refused by the flag; kg tune past 2**32 - 1 died in Optuna's sampler (NumPy seed).
    pytest.importorskip("optuna")
    seed = ["--seed", str(TORCH_MAX), "--device", "cpu"]
    train = ["kg", "train", "--dataset", str(folder), "--model", "distmult", "--epochs", "1"]
    assert main([*train, "--no-progress", "--out", str(tmp_path / "run"), *seed]) == 0
    tune = ["kg", "tune", "--dataset", str(folder), "--model", "distmult", "--trials", "2"]
    argv = [*tune, "--epochs", "1", "--eval-every", "1", "--out", str(tmp_path / "tune"), *seed]
    assert main(argv) == 0
    assert main(["data", "family", str(tmp_path / "family"), "--num-people", "20", *seed[:2]]) == 0


def test_the_largest_torch_seed_runs_the_graphon_commands(tmp_path):
    # Before: graphon transfer derived seed * 1000 + i and died past torch's range (at 2**63 - 1
    # already) with an unexpected ValueError.
    seed = ["--seed", str(TORCH_MAX), "--device", "cpu"]
    png = str(tmp_path / "d.png")
    assert (
        main(["graphon", "densities", "--sizes", "10", "--samples", "1", "--out", png, *seed]) == 0
    )
    small = ["--sizes", "10,20", "--samples", "2", "--models", "iwn"]
    argv = ["graphon", "transfer", *small, "--limit-size", "30", "--out", str(tmp_path / "u")]
    assert main([*argv, *seed]) == 0
    trained = ["graphon", "transfer", "--experiment", "trained", *small, "--epochs", "1"]
    trained += ["--train-graphs", "2", "--train-size", "10", "--seeds", f"0,{TORCH_MAX}"]
    assert main([*trained, "--out", str(tmp_path / "t"), *seed]) == 0


def test_the_largest_torch_seeds_run_kg_explain(checkpoint, tmp_path):  # noqa: F811
    from graphdata.synthetic import family_kg

    path, _ = checkpoint
    h, r, t = next(x for x in family_kg(40, seed=0).derived_triples("test") if x[1] == "child_of")
    argv = ["kg", "explain", str(path), "--triple", f"{h} {r} {t}", "--device", "cpu"]
    argv += ["--evaluator-steps", "5", "--evaluator-hidden", "16", "--max-candidates", "30"]
    argv += ["--out", str(tmp_path / "x.png")]
    for flag in ("--seed", "--evaluator-seed"):
        argv += [flag, str(TORCH_MAX)]
    assert main(argv) == 0
    retrain = ["--mode", "retrain", "--retrain-steps", "2", "--retrain-seed", str(TORCH_MAX)]
    assert main([*argv, *retrain]) == 0


def test_the_largest_int64_seed_runs_the_spatial_commands(tmp_path):
    seed = ["--seed", str(INT64_MAX)]
    sim, fit, out = tmp_path / "s.h5ad", tmp_path / "f.h5ad", tmp_path / "p.h5ad"
    argv = ["spatial", "simulate", "--cells", "40", "--genes", "3", "--steps", "20"]
    assert main([*argv, "--out", str(sim), *seed]) == 0
    argv = ["spatial", "fit", str(sim), "--signed", "--epochs", "3", "--no-progress"]
    assert main([*argv, "--device", "cpu", "--out", str(fit), *seed]) == 0
    argv = ["spatial", "perturb", str(fit), "--gene", "gene_1=0", "--cells", "cell_3"]
    argv += ["--method", "langevin", "--steps", "20", "--burn-in", "10", "--no-progress"]
    assert main([*argv, "--device", "cpu", "--out", str(out), *seed]) == 0
