"""Fault injection for graphon.nn: non-finite inputs, numeric options, diverging training.

The old models carried a NaN in one adjacency entry into every output, the configs accepted
NaN learning rates and weight scales, and a diverged fit returned NaN weights; each probe
asserts the clear error that replaces them.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from graphdata.dense import DenseGraphBatch
from graphdata.errors import GraphDataError
from graphon.nn import (
    IGN,
    IWN,
    MPNN,
    ConvergenceConfig,
    EquivariantLinear,
    SizeGeneralizationConfig,
    bernoulli_lift,
    full_random_graphs,
    randomize_parameters,
    untrained_convergence,
)
from graphon.nn.generalization import build_regressor, train_regressor

NON_FINITE = [math.nan, math.inf, -math.inf]
MODELS = {
    "iwn": lambda: IWN(1, 4, 1, num_layers=2),
    "ign": lambda: IGN(1, 4, 1, num_layers=2),
    "mpnn": lambda: MPNN(1, 4, 1, num_layers=2),
}


def _batch(adj_bad: float | None = None, x_bad: float | None = None) -> DenseGraphBatch:
    adj = torch.ones(2, 5, 5) - torch.eye(5)
    x = torch.ones(2, 5, 1)
    if adj_bad is not None:
        adj[1, 0, 1] = adj[1, 1, 0] = adj_bad
    if x_bad is not None:
        x[1, 3, 0] = x_bad
    return DenseGraphBatch(adj, x, torch.ones(2, 5, dtype=torch.bool))


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("bad", NON_FINITE)
def test_models_refuse_non_finite_inputs(name, bad):
    model = MODELS[name]()
    with pytest.raises(GraphDataError, match=r"batch.adj: expected finite values, got 2 .*\[1\]"):
        model(_batch(adj_bad=bad))
    with pytest.raises(GraphDataError, match=r"batch.x: expected finite values, got 1 .*\[1\]"):
        model(_batch(x_bad=bad))


@pytest.mark.parametrize("name", list(MODELS))
def test_models_give_finite_equal_outputs_on_clean_isomorphic_graphs(name):
    model = MODELS[name]()
    out = model(_batch())
    assert torch.isfinite(out).all()
    torch.testing.assert_close(out[0], out[1])  # the two graphs are identical


def test_layer_refuses_non_finite_input():
    layer = EquivariantLinear(2, 3, 2, 2)
    x = torch.zeros(1, 2, 4, 4)
    x[0, 1, 2, 3] = math.inf
    with pytest.raises(GraphDataError, match="x: expected finite values, got 1 NaN or inf"):
        layer(x)


def test_bernoulli_lift_refuses_nan_probabilities():
    model = IWN(0, 4, 1)
    probs = torch.full((1, 4, 4), 0.5)
    probs[0, 0, 1] = probs[0, 1, 0] = math.nan  # nan < 0 and nan > 1 are both False
    with pytest.raises(GraphDataError, match="probs: expected finite values"):
        bernoulli_lift(model, probs)


@pytest.mark.parametrize("bad", [*NON_FINITE, 0.0, -1.0])
def test_weight_std_is_validated(bad):
    with pytest.raises(GraphDataError, match="config.weight_std: expected a finite number > 0"):
        ConvergenceConfig(weight_std=bad)
    with pytest.raises(GraphDataError, match="std: expected a finite number > 0"):
        randomize_parameters(MPNN(1, 2, 1), std=bad, generator=torch.Generator())


@pytest.mark.parametrize(
    ("field", "value"),
    [("samples", 1), ("samples", 2.5), ("batch_size", 0), ("limit_size", 1),
     ("hidden_channels", 0), ("num_layers", math.nan), ("latents", "random"),
     ("activation", "gelu"), ("models", "iwn"), ("dtype", torch.int64)],
)  # fmt: skip
def test_convergence_config_fields_are_validated(field, value):
    with pytest.raises(GraphDataError, match=f"config.{field}: expected"):
        ConvergenceConfig(**{field: value})


def test_untrained_convergence_refuses_overflowing_outputs():
    # relu with weights ~ 1e30: the second layer overflows float32, the old run returned inf.
    config = ConvergenceConfig(
        sizes=(8,), samples=2, models=("mpnn",), activation="relu", weight_std=1e30,
        hidden_channels=4,
    )  # fmt: skip
    with pytest.raises(GraphDataError, match="config.weight_std: model 'mpnn' .*non-finite"):
        untrained_convergence("erdos_renyi", config)


@pytest.mark.parametrize(
    ("field", "value"),
    [("lr", math.nan), ("lr", math.inf), ("lr", 0.0), ("weight_decay", math.nan),
     ("weight_decay", -1.0), ("val_fraction", math.nan), ("val_fraction", 1.0), ("epochs", 0),
     ("batch_size", 1.5), ("train_size", 0), ("test_sizes", (50, 0)), ("seeds", (-1,)),
     ("best_of", 0), ("patience", 0), ("lr_patience", -1), ("eval_entries", 0),
     ("mlp_hidden", 0), ("standardize_target", 1)],
)  # fmt: skip
def test_size_generalization_config_fields_are_validated(field, value):
    with pytest.raises(GraphDataError, match=f"config.{field}: expected"):
        SizeGeneralizationConfig(**{field: value})


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from(["lr", "weight_decay", "val_fraction"]),
    st.sampled_from(NON_FINITE),
)
def test_non_finite_float_fields_are_always_refused(field, bad):
    with pytest.raises(GraphDataError, match=f"config.{field}: expected a finite number"):
        SizeGeneralizationConfig(**{field: bad})


@settings(max_examples=30, deadline=None)
@given(st.floats(1e-8, 10.0), st.floats(0.0, 1.0), st.floats(0.0, 0.99), st.floats(1e-3, 10.0))
def test_in_range_fields_are_accepted(lr, weight_decay, val_fraction, std):
    config = SizeGeneralizationConfig(lr=lr, weight_decay=weight_decay, val_fraction=val_fraction)
    assert (config.lr, config.weight_decay, config.val_fraction) == (lr, weight_decay, val_fraction)
    assert ConvergenceConfig(weight_std=std).weight_std == std


def test_diverging_training_raises_instead_of_returning_nan_weights():
    gen = torch.Generator().manual_seed(0)
    batch, y = full_random_graphs(6, 8, generator=gen)
    config = SizeGeneralizationConfig(
        epochs=5, batch_size=4, lr=1e30, weight_decay=0.0, hidden_channels=3, mlp_hidden=4
    )
    model = build_regressor("mpnn", config)
    with pytest.raises(GraphDataError, match=r"config.lr: training diverged .*lower lr"):
        train_regressor(model, batch, y, config, generator=torch.Generator().manual_seed(1))
