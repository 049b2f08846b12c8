import argparse
import json

import pytest
import torch

from graphdata.errors import GraphDataError
from graphlib_ml.cli.iwn import add_transfer_subparser
from graphlib_ml.demo.iwn import demo_section
from graphon.nn.generalization import SizeGeneralizationConfig, SizeGeneralizationResult
from graphon.nn.plot import plot_bernoulli_lift, plot_convergence, plot_size_generalization
from graphon.nn.transfer import ConvergenceConfig, ConvergenceCurve, ConvergenceResult


def _parser():
    parser = argparse.ArgumentParser(prog="graphlib graphon")
    add_transfer_subparser(parser.add_subparsers(dest="graphon_command", required=True))
    return parser


def _result():
    outputs = torch.tensor([[1.0, 1.2, 0.9], [1.05, 1.1, 1.0]], dtype=torch.float64)
    curves = {
        "iwn": ConvergenceCurve("iwn", [10, 20], outputs, limit=0.8, lift=1.04),
        "mpnn": ConvergenceCurve("mpnn", [10, 20], outputs - 0.2, limit=0.84),
    }
    return ConvergenceResult("toy", ConvergenceConfig(sizes=(10, 20)), curves)


def test_convergence_plots_draw_one_line_per_model():
    result = _result()
    ax = plot_convergence(result, metric="mae")
    assert len(ax.get_lines()) == 2 and ax.get_lines()[0].get_ydata()[0] == pytest.approx(1.0)
    ax = plot_convergence(result, metric="spread", normalize=False)
    torch.testing.assert_close(
        torch.tensor(ax.get_lines()[0].get_ydata()), result.curves["iwn"].spread
    )
    lift_ax = plot_bernoulli_lift(result.curves["iwn"])
    assert [line.get_ydata()[0] for line in lift_ax.get_lines()[1:]] == [1.04, 0.8]
    with pytest.raises(GraphDataError, match="has no Bernoulli-lift value"):
        plot_bernoulli_lift(result.curves["mpnn"])
    with pytest.raises(GraphDataError, match="metric: expected 'mae' or 'spread'"):
        plot_convergence(result, metric="rmse")


def test_size_generalization_plot_shows_the_median():
    config = SizeGeneralizationConfig(test_sizes=(50, 100), seeds=(0, 1, 2))
    mse = torch.tensor([[1e-5, 2e-6], [3e-5, 1e-6], [2e-5, 5e-6]], dtype=torch.float64)
    result = SizeGeneralizationResult(config, {"iwn": mse}, {"iwn": 1.0}, {"iwn": [0.0] * 3})
    ax = plot_size_generalization(result)
    assert list(ax.get_lines()[0].get_ydata()) == pytest.approx([2e-5, 2e-6])


def test_cli_untrained_writes_table_json_and_plots(tmp_path, capsys):
    args = _parser().parse_args(
        ["transfer", "--graphon", "sbm", "--models", "iwn,mpnn", "--sizes", "10,20",
         "--samples", "3", "--hidden", "4", "--device", "cpu", "--out", str(tmp_path)]
    )  # fmt: skip
    assert args.func(args) == 0
    for name in ("transfer_table.md", "transfer.json", "transfer_mae.png", "transfer_lift.png"):
        assert (tmp_path / name).stat().st_size > 0
    data = json.loads((tmp_path / "transfer.json").read_text())
    assert set(data["curves"]) == {"iwn", "mpnn"} and data["curves"]["iwn"]["sizes"] == [10, 20]
    assert "config:" in capsys.readouterr().out


def test_cli_trained_and_bad_flags(tmp_path):
    args = _parser().parse_args(
        ["transfer", "--experiment", "trained", "--models", "mpnn", "--sizes", "8,12",
         "--samples", "2", "--train-graphs", "4", "--epochs", "1", "--seeds", "0",
         "--hidden", "3", "--device", "cpu", "--out", str(tmp_path)]
    )  # fmt: skip
    assert args.func(args) == 0
    data = json.loads((tmp_path / "size_generalization.json").read_text())
    assert len(data["median"]["mpnn"]) == 2
    assert data["config"]["lr_schedule"] == "constant" and data["config"]["weight_decay"] == 0.1
    bad = _parser().parse_args(["transfer", "--models", "iwn,gcn", "--out", str(tmp_path)])
    with pytest.raises(GraphDataError, match="--models: expected names from"):
        bad.func(bad)


def test_cli_trained_training_flags_reach_the_config(tmp_path):
    args = _parser().parse_args(
        ["transfer", "--experiment", "trained", "--models", "mpnn", "--sizes", "8",
         "--samples", "2", "--train-graphs", "10", "--epochs", "1", "--seeds", "0",
         "--hidden", "3", "--device", "cpu", "--out", str(tmp_path), "--lr", "0.003",
         "--lr-schedule", "cosine", "--weight-decay", "0", "--batch-size", "4",
         "--val-fraction", "0.3", "--best-of", "2", "--standardize"]
    )  # fmt: skip
    assert args.func(args) == 0
    config = json.loads((tmp_path / "size_generalization.json").read_text())["config"]
    assert (config["lr"], config["lr_schedule"], config["weight_decay"]) == (0.003, "cosine", 0.0)
    assert (config["batch_size"], config["val_fraction"], config["best_of"]) == (4, 0.3, 2)
    assert config["standardize_target"] is True


def test_demo_section_writes_its_figures(tmp_path, monkeypatch):
    # The embedded configuration takes seconds; the wiring is the same at a smaller size.
    small = ConvergenceConfig(sizes=(10, 20), samples=3, hidden_channels=4)
    monkeypatch.setattr("graphlib_ml.demo.iwn._CONFIG", small)
    text = demo_section(tmp_path, seed=0, device=torch.device("cpu"))
    assert text.startswith("## ")
    for name in ("graphon_nn_mae.png", "graphon_nn_spread.png", "graphon_nn_lift.png"):
        assert name in text and (tmp_path / name).stat().st_size > 0


def test_cli_refused_config_leaves_no_new_out(tmp_path):
    # The device is resolved after run_lock created --out: the refusal left an empty folder
    # (and its new parent). A folder that existed before stays.
    out = tmp_path / "new" / "transfer"
    argv = ["transfer", "--experiment", "trained", "--models", "iwn", "--sizes", "10,20"]
    argv += ["--device", "foo"]
    args = _parser().parse_args([*argv, "--out", str(out)])
    with pytest.raises(GraphDataError, match=r"device"):
        args.func(args)
    assert not (tmp_path / "new").exists()
    args = _parser().parse_args([*argv, "--out", str(tmp_path)])
    with pytest.raises(GraphDataError, match=r"device"):
        args.func(args)
    assert tmp_path.is_dir()


def test_an_lr_past_float32s_step_is_refused_naming_the_flag(capsys):
    # Was torch's bare "value cannot be converted to type float without overflow" (exit 1).
    from graphlib_ml.cli import main
    from graphon.nn.generalization import LR_MAX

    argv = ["graphon", "transfer", "--experiment", "trained", "--lr", "1e300"]
    assert main(argv) == 2
    assert "argument --lr: expected a finite number in (0, 1e+37]" in capsys.readouterr().err
    with pytest.raises(GraphDataError, match=r"config.lr: .*<= 1e\+37"):
        SizeGeneralizationConfig(lr=LR_MAX * 10, epochs=1)
    assert SizeGeneralizationConfig(lr=LR_MAX).lr == LR_MAX
