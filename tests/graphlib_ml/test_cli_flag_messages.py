"""Library refusals met through the CLI name the flags the user typed, not Python keywords.

Through :func:`graphlib_ml.cli.main`: each bad value or combination ends with one
``graphlib: error:`` line that names the flag (``--batched-negatives``, ``--head``, ``--hops``),
what was expected, what arrived and the fix, and none of the keyword spellings
(``batched_negatives=``, ``regime='1vsall'``, ``queries[0]``) the library's own messages use;
the library's messages are unchanged for library users (checked next to each CLI line).
"""

from __future__ import annotations

import numpy as np
import pytest

from graphdata.errors import GraphDataError
from graphlib_ml.cli import EXIT_RUNTIME, EXIT_USAGE, main
from kg.config import TrainingConfig

pytestmark = pytest.mark.usefixtures("one_thread_quiet")


def _error(argv, capsys, code=EXIT_USAGE):
    """The one ``graphlib: error:`` line of ``graphlib ARGV`` (no traceback; exit ``code``)."""
    done = main(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("graphlib: error:")]
    assert len(lines) == 1 and "Traceback" not in err and "unexpected" not in err, err
    assert done == code, err
    return lines[0]


# ---- kg train: combinations of TrainingConfig fields ---------------------------------------


@pytest.mark.parametrize(
    ("flags", "start", "fix", "keyword"),
    [
        (
            ["--model", "distmult", "--batched-negatives", "4"],
            "--batched-negatives: negatives only exist in --regime slcwa, got "
            "--batched-negatives 4 with --regime 1vsall",
            "drop --batched-negatives, or pass --regime slcwa",
            "regime='1vsall'",
        ),
        (
            ["--model", "rotate", "--batched-negatives", "4"],
            "--batched-negatives: a chunk scores its shared negatives on one side per positive, "
            "got --batched-negatives 4 with --no-side-per-positive",
            "pass --side-per-positive, or drop --batched-negatives",
            "side_per_positive=False",
        ),
        (
            ["--model", "rotate", "--regime", "kvsall"],
            "--loss: --regime kvsall takes bce, got nssa",
            "pass --loss bce with --regime kvsall, or keep --loss nssa with --regime slcwa",
            "loss='bce'",
        ),
        (
            ["--model", "rotate", "--loss", "softplus", "--margin", "1"],
            "--margin: the 'softplus' loss has no margin, got --margin 1",
            "drop --margin, or pass --loss margin or nssa",
            "margin=None",
        ),
        (
            ["--model", "rotate", "--label-smoothing", "0.1"],
            "--label-smoothing: the 'nssa' loss has no labels to smooth, got --label-smoothing 0.1",
            "drop --label-smoothing, or pass --loss bce or --regime kvsall or 1vsall",
            "label_smoothing=0",
        ),
        (
            ["--model", "distmult", "--optimizer", "rowwise_adagrad"],
            "--optimizer: rowwise_adagrad updates the rows a batch touches, which needs --regime "
            "slcwa; --regime 1vsall",
            "pass --optimizer adam or adagrad, or --regime slcwa",
            "optimizer='adam'",
        ),
        (
            ["--model", "rotate", "--optimizer", "rowwise_adagrad", "--grad-clip", "1"],
            "--grad-clip: not supported with --optimizer rowwise_adagrad",
            "drop --grad-clip, or pass --optimizer adam",
            "grad_clip=None",
        ),
        (
            ["--model", "rotate", "--regularizer-weight", "0.1"],
            "--regularizer-weight: expected 0, or > 0 with --regularizer n3 or l2, got "
            "--regularizer-weight 0.1 with --regularizer none",
            "pass --regularizer n3 or l2, or drop --regularizer-weight",
            "regularizer=None",
        ),
    ],
)
def test_kg_train_combinations_name_the_flags(flags, start, fix, keyword, tmp_path, capsys):
    out = tmp_path / "run"
    line = _error(["kg", "train", *flags, "--epochs", "1", "--out", str(out)], capsys)
    assert line.startswith(f"graphlib: error: {start}"), line
    assert fix in line and keyword not in line
    assert not out.exists()


@pytest.mark.parametrize(
    ("fields", "start"),
    [
        ({"regime": "kvsall", "loss": "bce", "batched_negatives": 4}, "batched_negatives: "),
        ({"regime": "slcwa", "loss": "softplus", "margin": 1.0}, "margin: the 'softplus'"),
        ({"regularizer_weight": 0.1}, "regularizer_weight: expected 0"),
    ],
)
def test_training_config_keeps_its_keywords_for_library_users(fields, start):
    with pytest.raises(GraphDataError, match=f"^{start}"):
        TrainingConfig(**fields).validate()
    with pytest.raises(GraphDataError, match=f"^--{start.split(':')[0].replace('_', '-')}:"):
        TrainingConfig(**fields).validate(flags=True)


def test_kg_train_divergence_names_the_flags(tmp_path, capsys):
    # Was: "... with learning rate lr=1e+300 ... (e.g. lr=1e+299) or set grad_clip ...".
    argv = ["kg", "train", "--model", "transe", "--epochs", "1", "--lr", "1e300", "--no-progress"]
    line = _error([*argv, "--out", str(tmp_path / "run")], capsys, EXIT_RUNTIME)
    assert "with learning rate --lr 1e+300;" in line
    assert "(e.g. --lr 1e+299) or set --grad-clip, then retrain" in line
    assert "lr=" not in line and "grad_clip" not in line


# ---- kg tune -----------------------------------------------------------------------------


def test_kg_tune_eval_every_zero_names_the_flag(tmp_path, capsys):
    # Was: "overrides: eval_every=0 never validates ...; pass eval_every >= 1".
    argv = ["kg", "tune", "--trials", "1", "--eval-every", "0", "--out", str(tmp_path / "t")]
    line = _error(argv, capsys)
    assert line == (
        "graphlib: error: --eval-every: 0 never validates, and trials are scored by validation "
        "MRR; pass --eval-every 1 or more"
    )


# ---- kg predict and kg explain on one small checkpoint -------------------------------------


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    out = tmp_path_factory.mktemp("kg") / "run"
    argv = ["kg", "train", "--model", "distmult", "--epochs", "1", "--no-progress"]
    assert main([*argv, "--out", str(out), "--device", "cpu"]) == 0
    return out / "checkpoint.pt"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (["--head", "nobody", "--relation", "aunt"], "--head: unknown entity label 'nobody'."),
        (["--tail", "nobody", "--relation", "aunt"], "--tail: unknown entity label 'nobody'."),
        (
            ["--head", "person_0001", "--relation", "aunnt"],
            "--relation: unknown relation label 'aunnt'. Closest known relation labels: 'aunt'",
        ),
    ],
)
def test_predict_unknown_labels_name_the_flag(query, expected, checkpoint, capsys):
    # Was: "queries[0] head: unknown entity label ...".
    line = _error(["kg", "predict", str(checkpoint), *query, "--device", "cpu"], capsys)
    assert line.startswith(f"graphlib: error: {expected}") and "queries[" not in line


def test_predict_unknown_label_of_queries_names_the_line(checkpoint, tmp_path, capsys):
    path = tmp_path / "q.tsv"
    path.write_text("person_0001\taunt\n\n# a comment\nperson_0002\tnope\n", encoding="utf-8")
    line = _error(["kg", "predict", str(checkpoint), "--queries", str(path)], capsys)
    assert line.startswith(
        f"graphlib: error: --queries: line 4 of {str(path)!r}: unknown relation label 'nope'."
    )
    assert "queries[1]" not in line


def _explain(checkpoint, tmp_path, *flags):
    return [
        "kg",
        "explain",
        str(checkpoint),
        "--triple",
        "person_0000 aunt person_0001",
        "--no-evaluator-cache",
        "--no-progress",
        "--device",
        "cpu",
        "--out",
        str(tmp_path / "e.png"),
        *flags,
    ]


@pytest.mark.parametrize(("flag", "value"), [("--hops", 10**12), ("--max-length", 301)])
def test_explain_depth_past_the_graph_names_the_flag(flag, value, checkpoint, tmp_path, capsys):
    # Was: "hops: expected at most ..." / "max_length: ..."; the world has 300 entities.
    line = _error(_explain(checkpoint, tmp_path, flag, str(value)), capsys)
    assert line == (
        f"graphlib: error: {flag}: expected at most the graph's 300 entities (no path or "
        f"distance in it is longer), got {value}; pass a value <= 300"
    )
    assert not (tmp_path / "e.png").exists()


def test_explain_unknown_path_relation_names_the_flag(checkpoint, tmp_path, capsys):
    # Was: "path_relations: unknown relation label 'aunnt'. ...".
    line = _error(_explain(checkpoint, tmp_path, "--path-relations", "aunt,aunnt"), capsys)
    assert line.startswith("graphlib: error: --path-relations: unknown relation label 'aunnt'.")
    assert "Closest known relation labels: 'aunt'" in line


@pytest.mark.parametrize(
    ("flag", "value", "follows", "mine"),
    [("--evaluator-hops", 5, "--hops", 2), ("--evaluator-max-length", 7, "--max-length", 3)],
)
def test_explain_evaluator_mismatch_names_the_flags(
    flag, value, follows, mine, checkpoint, tmp_path, capsys
):
    # Was: "evaluator: EvaluatorConfig(hops=5) differs from ExplainerConfig(hops=2); ...".
    line = _error(_explain(checkpoint, tmp_path, flag, str(value)), capsys)
    assert line == (
        f"graphlib: error: {flag}: the evaluator must be distilled on the subgraphs and path "
        f"lengths the explainer scores, got {flag} {value} with {follows} {mine}; drop {flag} "
        f"(it follows {follows}) or pass {follows} {value}"
    )
    assert "Config(" not in line


# ---- graphon transfer ------------------------------------------------------------------------

_TRAINED = ["graphon", "transfer", "--experiment", "trained", "--samples", "2", "--sizes", "10,20"]
_TRAINED += ["--epochs", "1", "--seeds", "0", "--train-graphs", "4", "--models", "iwn"]


def test_transfer_activation_is_a_choice(tmp_path, capsys):
    # Was: "activation: expected one of ['sigmoid', 'relu', 'tanh'], got 'foo'".
    line = _error([*_TRAINED, "--activation", "foo", "--out", str(tmp_path / "t")], capsys)
    assert "argument --activation: invalid choice: 'foo'" in line
    assert "'sigmoid', 'relu', 'tanh'" in line


def test_transfer_divergence_names_the_flags(tmp_path, capsys):
    # Was: "config.lr: training diverged ...; lower lr (now 0.001) or raise weight_decay".
    argv = [*_TRAINED, "--weight-decay", "1e308", "--device", "cpu", "--out", str(tmp_path / "t")]
    line = _error(argv, capsys)
    assert line.startswith("graphlib: error: --lr: training diverged at epoch 1 (loss ")
    assert line.endswith("; lower --lr (now 0.001) or raise --weight-decay")


# ---- spatial fit and perturb: failures found while the library runs -------------------------


@pytest.fixture(scope="module")
def tissue(tmp_path_factory):
    from spatial.simulate import simulate_tissue

    path = tmp_path_factory.mktemp("tissue") / "sim.h5ad"
    simulate_tissue(40, 3, steps=5, seed=0).to_anndata().write_h5ad(path)
    return path


def _fit(tissue, out, *flags):
    return ["spatial", "fit", str(tissue), "--signed", *flags, "--out", str(out), "--device", "cpu"]


def test_spatial_fit_divergence_names_the_flags(tissue, tmp_path, capsys):
    # Was: "lr: the fit diverged ...; lower lr (now 1e+37) or raise weight_decay".
    out = tmp_path / "f.h5ad"
    argv = _fit(tissue, out, "--lr", "1e37", "--optimizer", "adam", "--epochs", "3")
    line = _error(argv, capsys)
    assert line.startswith("graphlib: error: --lr: the fit diverged at epoch 1 (loss nan")
    assert line.endswith("; lower --lr (now 1e+37) or raise --weight-decay")
    assert not out.exists()


def test_spatial_fit_rising_loss_names_the_flags(tissue, tmp_path, capsys):
    # Was: "lr: the loss rose ...; lower lr (now 10), or use the default optimizer='auto' ...".
    argv = _fit(tissue, tmp_path / "f.h5ad", "--lr", "10", "--optimizer", "sgd", "--epochs", "5")
    line = _error(argv, capsys)
    assert line.startswith("graphlib: error: --lr: the loss rose from ")
    assert "; lower --lr (now 10), or use the default --optimizer auto for score matching" in line


def test_spatial_fit_huge_weight_decay_names_the_flag(tissue, tmp_path, capsys):
    # Was: "data: the score-matching fit produced non-finite values ...; raise weight_decay".
    line = _error(_fit(tissue, tmp_path / "f.h5ad", "--weight-decay", "1e308"), capsys)
    assert line.startswith("graphlib: error: data: the score-matching fit produced non-finite")
    assert line.endswith("raise --weight-decay (now 1e+308)")


def test_spatial_perturb_diverged_relaxation_names_the_flag(tissue, tmp_path, capsys):
    # Was: "step_size: the relaxation diverged (...); lower step_size or leave it None".
    fitted = tmp_path / "fit.h5ad"
    assert main(_fit(tissue, fitted, "--epochs", "2")) == 0
    out = tmp_path / "p.h5ad"
    argv = ["spatial", "perturb", str(fitted), "--gene", "gene_0=0", "--cells", "cell_0"]
    argv += ["--method", "gradient", "--step-size", "1e300", "--out", str(out), "--device", "cpu"]
    line = _error(argv, capsys)
    assert line.startswith("graphlib: error: --step-size: the relaxation diverged (")
    assert "after 50 steps of 1e+300); lower --step-size, or drop it (automatic" in line
    assert not out.exists()


def test_the_library_messages_are_unchanged(tissue):
    # Library users still read the keywords (no flag spelling leaks into the library).
    from spatial.celcomen import Celcomen, CelcomenConfig
    from spatial.simulate import simulate_tissue

    t = simulate_tissue(20, 3, steps=5, seed=0)
    config = CelcomenConfig(lr=1e37, optimizer="adam", epochs=2, progress=False)
    with pytest.raises(GraphDataError, match=r"^lr: the fit diverged .* or raise weight_decay$"):
        Celcomen(config).fit(t.x, t.edge_index, allow_negative=True)
    assert np.isfinite(t.x.numpy()).all()


# ---- kg train --nproc: the rank of a worker's error line -----------------------------------


def test_a_worker_error_line_names_its_own_rank(tmp_path, monkeypatch, capsys):
    # Was: "[rank 0]" on every rank (the rank was read after destroy_process_group). A worker of
    # rank 1 whose environment lacks MASTER_ADDR fails in init_from_env, before any group.
    from graphlib_ml.cli import build_parser
    from graphlib_ml.cli.kg import _train_worker

    argv = ["kg", "train", "--model", "distmult", "--nproc", "2", "--device", "cpu"]
    args = build_parser("kg", "train").parse_args([*argv, "--out", str(tmp_path / "run")])
    for name in ("MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    assert _train_worker(args) == EXIT_USAGE
    err = capsys.readouterr().err.strip()
    assert err.startswith("[rank 1] graphlib: error: WORLD_SIZE: is 2, but the environment")


def test_spatial_fit_not_converged_is_one_plain_warning_line(tissue, tmp_path, capsys):
    # Was Python's format: ".../spatial/tools.py:144: UserWarning: the fit has not converged..."
    # and the source line under it. The text is the library's, the same as a library user sees.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("always", UserWarning)  # the fixture silences them
        assert main([*_fit(tissue, tmp_path / "f.h5ad", "--epochs", "1"), "--no-progress"]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "has not converged" in line]
    assert len(lines) == 1, err
    assert lines[0].startswith("graphlib: warning: the fit has not converged: after 1 ")
    assert "raise epochs (now 1)" in lines[0]
    assert "UserWarning" not in err and ".py:" not in err and "estimator.fit(" not in err


# ---- graphlib data and sizes past the memory ------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "start", "fix"),
    [
        (
            ["data", "family", "OUT", "--num-people", "2"],
            "--num-people: expected an int >= 10 (two people per generation, 5 generations), got 2",
            "; pass --num-people 10 or more",
        ),
        (
            ["data", "family", "OUT", "--num-people", str(2**63)],
            "--num-people: expected an int in [10, ",
            "8,192 bytes each and this machine has",
        ),
        (
            ["data", "download", "fb15k237", "--root", "ROOT", "--from", "MISSING"],
            "--from: expected a file or folder with the fb15k237 files, got ",
            "which does not exist",
        ),
        (
            ["data", "download", "umls", "--root", "ROOT", "--from", "EMPTY"],
            "--from: expected ",
            "to hold train.txt, valid.txt and test.txt",
        ),
        (
            ["data", "download", "nosuch", "--root", "ROOT"],
            "name: expected one of codex-m, ",
            "got 'nosuch'; `graphlib data list` lists them",
        ),
        (
            ["spatial", "simulate", "--cells", str(2**63), "--out", "OUT.h5ad"],
            "--cells: expected an int in [2, ",
            "; pass a smaller --cells",
        ),
        (
            ["spatial", "simulate", "--genes", str(2**63), "--out", "OUT.h5ad"],
            "--genes: expected an int in [2, ",
            "; pass a smaller --genes",
        ),
        (
            ["spatial", "simulate", "--steps", str(2**63), "--out", "OUT.h5ad"],
            "argument --steps: expected an integer in [1, 9223372036854775807], got ",
            "",
        ),
    ],
)
def test_data_and_simulate_refusals_name_the_flags(argv, start, fix, tmp_path, capsys):
    # Were: "num_people: ...; ask for more people or fewer generations", "path: expected ...",
    # "dataset: expected one of ...; or pass a folder", an out-of-memory error for 2**63 people,
    # an unexpected RuntimeError/TypeError for 2**63 cells or genes, 2**63 Langevin steps.
    (tmp_path / "EMPTY").mkdir()
    names = {"OUT", "ROOT", "MISSING", "EMPTY", "OUT.h5ad"}
    argv = [str(tmp_path / a) if a in names else a for a in argv]
    line = _error(argv, capsys)
    assert line.startswith(f"graphlib: error: {start}"), line
    assert fix in line, line
    for keyword in ("num_people", "n_cells", "n_genes", "path:", "dataset:"):
        assert keyword not in line, line


def test_world_spec_size_past_the_memory_names_the_spec(tmp_path, monkeypatch, capsys):
    # Was "size: expected an int >= 20 ...; pass e.g. size=80" for --dataset academic:size=5,
    # and a hang building 2**63 labels for academic:size=2**63.
    monkeypatch.setenv("GRAPHLIB_HOME", str(tmp_path / "home"))
    for size, start in [
        ("5", "size=N expected an int >= 20, got 5; pass e.g. --dataset academic:size=80"),
        (str(2**63), "size=N expected an int in [20, "),
    ]:
        argv = ["kg", "train", "--dataset", f"academic:size={size}", "--epochs", "1"]
        line = _error([*argv, "--out", str(tmp_path / "run")], capsys)
        assert line.startswith(f"graphlib: error: --dataset academic:size={size}: {start}"), line
