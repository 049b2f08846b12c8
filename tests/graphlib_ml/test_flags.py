"""Flags generated from config dataclasses (graphlib_ml/cli/_flags.py) and the commands."""

import argparse
import dataclasses
from dataclasses import dataclass
from typing import Literal

import pytest

from graphdata import cli_types
from graphdata.errors import GraphDataError
from graphlib_ml.cli import build_parser
from graphlib_ml.cli._flags import add_config_flags, config_values, field_docs

#: Options tuple named in a field comment below (the generator resolves it in this module).
TOY_KINDS = ("fast", "slow")


@dataclass
class Toy:
    """A throwaway config.

    Attributes:
        documented: Text from the Attributes section,
            over two lines.
    """

    steps: int = 10  # optimiser steps
    # a fraction of the work, documented
    # above the field
    share: float = 0.25
    enabled: bool = False  # switch it on
    kind: str = "fast"  # one of TOY_KINDS
    mode: Literal["a", "b"] = "a"  # a Literal
    sizes: tuple[int, ...] = (2, 4)  # comma-separated sizes
    documented: int = 3

    def validate(self) -> None:
        if self.steps < 1:
            raise GraphDataError(f"steps: expected an integer >= 1, got {self.steps!r}")
        if not 0 <= self.share < 1:
            raise GraphDataError(f"share: expected a finite number in [0, 1), got {self.share!r}")


def _parser(cls=Toy, **kwargs):
    parser = argparse.ArgumentParser(prog="toy")
    return parser, add_config_flags(parser, cls, **kwargs)


def _action(parser, flag):
    return next(a for a in parser._actions if flag in a.option_strings)


def test_a_new_field_is_a_new_flag_with_its_default_and_help():
    @dataclass
    class Grown(Toy):
        warmup: int = 7  # warm-up steps before the schedule starts

    parser, flags = _parser(Grown)
    assert flags["warmup"] == "warmup"
    action = _action(parser, "--warmup")
    assert action.help == "warm-up steps before the schedule starts (default: 7)"
    assert action.default is None
    assert "--warmup WARMUP" in parser.format_help()
    assert config_values(parser.parse_args(["--warmup", "9"]), flags) == {"warmup": 9}
    assert config_values(parser.parse_args([]), flags) == {}


def test_types_choices_and_help_come_from_the_dataclass():
    parser, _ = _parser()
    assert _action(parser, "--steps").type.expected == "an integer >= 1"  # from validate()
    assert _action(parser, "--share").type.expected == "a finite number in [0, 1)"
    assert _action(parser, "--share").help.startswith("a fraction of the work, documented above")
    assert isinstance(_action(parser, "--enabled"), argparse.BooleanOptionalAction)
    assert "--no-enabled" in _action(parser, "--enabled").option_strings
    assert _action(parser, "--kind").choices == TOY_KINDS
    # the help spells the options a user can type, not the constant's name
    assert _action(parser, "--kind").help == "one of fast, slow (default: fast)"
    assert _action(parser, "--mode").choices == ("a", "b")
    assert _action(parser, "--documented").help.startswith(
        "Text from the Attributes section, over two lines."
    )
    args = parser.parse_args(["--sizes", "3,5", "--no-enabled", "--share", "0.5"])
    assert (args.sizes, args.enabled, args.share) == ((3, 5), False, 0.5)


def test_generated_flags_refuse_out_of_range_values(capsys):
    parser, _ = _parser()
    for argv in (
        ["--steps", "0"],
        ["--share", "1"],
        ["--share", "nan"],
        ["--kind", "odd"],
        ["--sizes", "1,x"],
    ):
        with pytest.raises(SystemExit):
            parser.parse_args(argv)
    assert "argument --share: expected a finite number in [0, 1), got 'nan'" in (
        capsys.readouterr().err
    )


def test_aliases_prefixes_exclusions_and_notes():
    parser, flags = _parser(
        aliases={"steps": "iterations"},
        prefix="toy-",
        dest_prefix="toy_",
        exclude=("sizes",),
        default_notes={"share": "tuned value"},
    )
    assert "--iterations" in _action(parser, "--iterations").option_strings
    assert flags["toy_share"] == "share" and "--toy-share" in parser.format_help()
    assert "sizes" not in flags.values()
    assert _action(parser, "--toy-share").help.endswith("(default: tuned value)")
    with pytest.raises(TypeError, match="dataclass"):
        add_config_flags(parser, int)


def test_field_docs_reads_trailing_comments():
    from kg.config import TrainingConfig

    docs = field_docs(TrainingConfig)
    assert set(docs) == {f.name for f in dataclasses.fields(TrainingConfig)}
    assert docs["epochs"] == "passes over the training triples (or KvsAll queries)"
    assert docs["side_per_positive"].startswith("sLCWA: draw the corrupted side once")


def _leaf(*path):
    parser = build_parser()
    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return parser


def _flags(parser):
    return {a.dest for a in parser._actions if a.option_strings}


def test_kg_train_has_a_flag_for_every_training_config_field():
    from kg.config import TrainingConfig

    train = _leaf("kg", "train")
    fields = {f.name for f in dataclasses.fields(TrainingConfig)}
    assert fields - {"log_path", "checkpoint_path"} <= _flags(train)
    lr = _action(train, "--lr")
    assert lr.type is not None and lr.type.expected == "a finite number > 0"
    assert "(default: model's tuned value)" in lr.help and lr.help.startswith("learning rate")
    assert "(default: 2)" in _action(train, "--eval-every").help
    assert _action(train, "--seed").type is cli_types.seed
    assert isinstance(_action(train, "--no-progress"), argparse.BooleanOptionalAction)


def test_kg_explain_has_a_flag_for_every_scalar_field_of_the_three_configs():
    from kg.explain import EvaluatorConfig, ExplainerConfig, RetrainConfig

    explain = _leaf("kg", "explain")
    dests = _flags(explain)
    scalar = (int, float, bool, str)
    for cls, prefix in (
        (ExplainerConfig, ""),
        (EvaluatorConfig, "evaluator_"),
        (RetrainConfig, "retrain_"),
    ):
        for f in dataclasses.fields(cls):
            if f.default is not dataclasses.MISSING and isinstance(f.default, scalar):
                assert prefix + f.name in dests, (cls.__name__, f.name)
    assert "--paths" in _action(explain, "--paths").option_strings  # today's name of max_paths


def test_spatial_fit_has_a_flag_for_every_celcomen_config_field():
    from spatial.celcomen import CelcomenConfig

    fit = _leaf("spatial", "fit")
    assert {f.name for f in dataclasses.fields(CelcomenConfig)} <= _flags(fit)
    assert _action(fit, "--objective").choices == ("score_matching", "mean_field", "reference")
    assert _action(fit, "--weight-decay").type.expected == "a finite number >= 0"


def test_kg_explain_builds_the_configs_the_flags_describe():
    from graphlib_ml.cli.explain import _config
    from kg.explain import ExplainerConfig

    parser = build_parser()
    base = ["kg", "explain", "c.pt", "--triple", "a r b"]
    default = _config(parser.parse_args(base))
    assert default == ExplainerConfig(evaluator=default.evaluator)  # every unset flag: default
    config = _config(
        parser.parse_args(
            [
                *base,
                "--hops",
                "1",
                "--max-length",
                "2",
                "--seed",
                "4",
                "--paths",
                "2",
                "--evaluator-steps",
                "7",
                "--retrain-steps",
                "3",
            ]
        )
    )
    assert (config.hops, config.max_length, config.max_paths, config.seed) == (1, 2, 2, 4)
    assert (config.evaluator.hops, config.evaluator.seed, config.evaluator.steps) == (1, 4, 7)
    assert config.retrain.steps == 3
    given = _config(parser.parse_args([*base, "--hops", "2", "--evaluator-seed", "9"]))
    assert (given.evaluator.hops, given.evaluator.seed, given.seed) == (2, 9, 0)


def test_graphon_transfer_reaches_every_field_of_both_experiment_configs():
    import torch

    from graphlib_ml.cli import iwn
    from graphon.nn.generalization import SizeGeneralizationConfig
    from graphon.nn.transfer import ConvergenceConfig

    transfer = _leaf("graphon", "transfer")
    for cls, flags, shared in (
        (ConvergenceConfig, iwn._UNTRAINED_FLAGS, iwn._UNTRAINED_SHARED),
        (SizeGeneralizationConfig, iwn._TRAINING_FLAGS, iwn._SHARED_FIELDS),
    ):
        fields = {f.name for f in dataclasses.fields(cls) if f.type not in ("torch.dtype",)}
        assert fields == set(flags.values()) | set(shared), cls.__name__
    assert ConvergenceConfig.__dataclass_fields__["dtype"].default is torch.float32
    weight = _action(transfer, "--untrained-weight-std")
    assert weight.type.expected == "a finite number > 0"  # from ConvergenceConfig's validation
    args = transfer.parse_args(["--untrained-weight-std", "0.5", "--standardize"])
    assert (args.untrained_weight_std, args.trained_standardize_target) == (0.5, True)


def test_the_cli_seed_bound_is_the_library_one():
    # cli_types keeps a literal so that it imports no NumPy; it must equal graphdata.checks'.
    from graphdata import checks, device

    assert cli_types.SEED_MAX == checks.SEED_MAX == device.SEED_MAX == 2**64 - 1


def test_help_names_the_options_not_the_constant():
    from graphlib_ml.cli._flags import _spell_choices

    options = ("best", "shortest")
    assert _spell_choices("key of SELECTIONS", "SELECTIONS", options) == "one of best, shortest"
    assert _spell_choices("autocast (SELECTIONS)", "SELECTIONS", options) == "autocast"
    assert _spell_choices("SELECTIONS: x", "SELECTIONS", options) == "best, shortest: x"
    # every generated flag of the real commands: no options constant left in a help text
    from graphlib_ml.cli import build_parser

    parser = build_parser()
    for name in ("kg", "spatial"):
        (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        for command in sub.choices[name]._actions[-1].choices.values():
            for action in command._actions:
                for word in ("MODES", "SELECTIONS", "STRATEGIES", "INITS", "OPTIMIZERS"):
                    assert word not in (action.help or ""), (action.option_strings, action.help)
