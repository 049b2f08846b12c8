import math

import pytest
import torch

from graphdata.dense import DenseGraphBatch
from graphdata.errors import GraphDataError, UnknownLabelError
from graphon.homomorphism import rooted_hom_density
from graphon.nn._regression import Standardized, cosine_lr, node_mse
from graphon.nn.generalization import (
    SizeGeneralizationConfig,
    build_regressor,
    evaluate_mse,
    full_random_graphs,
    signal_triangle_density,
    size_generalization,
    train_regressor,
)

DT = torch.float64


def test_target_against_brute_force_and_the_rooted_density():
    g = torch.Generator().manual_seed(0)
    batch, y = full_random_graphs(7, 3, generator=g, dtype=DT)
    a, x = batch.adj, batch.x[..., 0]
    brute = torch.einsum("bij,bjk,bki,bi,bj,bk->bi", a, a, a, x, x, x) / 7**2
    torch.testing.assert_close(y, brute)
    # The graphon package's rooted homomorphism density (Levin et al.'s target by definition).
    rooted = rooted_hom_density("triangle", a, x, root=0, exponents=[1, 1, 1])
    torch.testing.assert_close(y, rooted)


def test_target_closed_form_and_padding():
    # Complete graph with loops, constant signal c: y_i = c^3.
    y = signal_triangle_density(torch.ones(1, 4, 4, dtype=DT), torch.full((1, 4), 0.5, dtype=DT))
    torch.testing.assert_close(y, torch.full((1, 4), 0.125, dtype=DT))
    g = torch.Generator().manual_seed(1)
    small, _ = full_random_graphs(3, 1, generator=g, dtype=DT)
    padded = torch.zeros(1, 5, 5, dtype=DT)
    padded[0, :3, :3] = small.adj[0]
    xp = torch.zeros(1, 5, dtype=DT)
    xp[0, :3] = small.x[0, :, 0]
    mask = torch.tensor([[True, True, True, False, False]])
    got = signal_triangle_density(padded, xp, mask)
    torch.testing.assert_close(got[:, :3], signal_triangle_density(small.adj, small.x))
    assert float(got[:, 3:].abs().max()) == 0.0


def test_full_random_graphs_are_symmetric_uniform_and_seeded():
    batch, y = full_random_graphs(6, 4, generator=torch.Generator().manual_seed(2))
    again, _ = full_random_graphs(6, 4, generator=torch.Generator().manual_seed(2))
    assert torch.equal(batch.adj, again.adj) and torch.equal(batch.adj, batch.adj.mT)
    assert 0.0 <= float(batch.adj.min()) and float(batch.adj.max()) <= 1.0
    assert y.shape == (4, 6) and batch.x.shape == (4, 6, 1)


def test_training_reduces_the_loss():
    config = SizeGeneralizationConfig(epochs=4, batch_size=16, lr=1e-2, weight_decay=0.0)
    gen = torch.Generator().manual_seed(0)
    batch, y = full_random_graphs(10, 32, generator=gen)
    model = build_regressor("mpnn", config)
    model.reset_parameters(generator=torch.Generator().manual_seed(0))
    history = train_regressor(model, batch, y, config, generator=gen)
    assert len(history) == 4 and history[-1] < 0.5 * history[0]


def test_small_experiment_table_and_medians():
    config = SizeGeneralizationConfig(
        train_size=8, train_graphs=8, test_sizes=(8, 16), test_graphs=2,
        seeds=(0, 1), epochs=1, batch_size=4, hidden_channels=3, num_layers=2, mlp_hidden=4,
    )  # fmt: skip
    lines = []
    result = size_generalization(config, seed=0, log=lines.append)
    assert set(result.mse) == {"iwn", "ign", "mpnn"} and len(lines) == 6
    for name, mse in result.mse.items():
        assert mse.shape == (2, 2) and bool((mse > 0).all())
        torch.testing.assert_close(result.median()[name], mse.mean(0))  # two seeds: the mean
    table = result.table()
    assert "| model | n=8 | n=16 | train s |" in table and table.count("\n| ") == 3


def test_size_generalization_leaves_the_global_rng_untouched():
    # The regressors' constructors drew their (then re-seeded) initialisation from the caller's
    # global RNG; the caller's next draw changed.
    config = SizeGeneralizationConfig(
        train_size=8, train_graphs=4, test_sizes=(8,), test_graphs=1, seeds=(0,), epochs=1,
        batch_size=4, hidden_channels=3, num_layers=2, mlp_hidden=4, models=("iwn",),
    )  # fmt: skip
    torch.manual_seed(5)
    expected = torch.rand(4)
    torch.manual_seed(5)
    size_generalization(config, seed=0)
    assert torch.equal(torch.rand(4), expected)  # oracle: the same seed, nothing drawn between


def test_bad_configuration_raises():
    with pytest.raises(UnknownLabelError, match="unknown model label 'gat'"):
        size_generalization(SizeGeneralizationConfig(models=("gat",)))
    with pytest.raises(GraphDataError, match="config.seeds: expected a non-empty tuple"):
        size_generalization(SizeGeneralizationConfig(seeds=()))
    with pytest.raises(GraphDataError, match="adj, x: expected"):
        signal_triangle_density(torch.zeros(2, 3, 3), torch.zeros(2, 4))


def test_standardized_wrapper_maps_the_output_back():
    config = SizeGeneralizationConfig(hidden_channels=3, num_layers=2, mlp_hidden=4)
    inner = build_regressor("iwn", config).double()
    wrapped = Standardized(inner, 0.25, 0.5).double()
    batch, _ = full_random_graphs(5, 2, generator=torch.Generator().manual_seed(3), dtype=DT)
    torch.testing.assert_close(wrapped(batch), 0.25 + 0.5 * inner(batch))
    assert set(wrapped.state_dict()) >= {"mean", "std"}


def test_cosine_schedule_endpoints():
    assert cosine_lr(1e-2, 0, 11) == pytest.approx(1e-2)
    assert cosine_lr(1e-2, 5, 11) == pytest.approx(0.5 * (1e-2 + 1e-4))
    assert cosine_lr(1e-2, 10, 11) == pytest.approx(1e-4)


def test_validation_restores_the_best_epoch_and_stops_early():
    gen = torch.Generator().manual_seed(4)
    train, y = full_random_graphs(8, 16, generator=gen)
    val_batch, val_y = full_random_graphs(8, 8, generator=gen)
    # A large learning rate makes the validation loss non-monotone.
    config = SizeGeneralizationConfig(epochs=12, batch_size=4, lr=0.05, weight_decay=0.0)

    def fit(val):
        model = build_regressor("mpnn", config)
        model.reset_parameters(generator=torch.Generator().manual_seed(0))
        shuffle = torch.Generator().manual_seed(1)
        train_regressor(model, train, y, config, generator=shuffle, val=val)
        with torch.no_grad():
            return float(node_mse(model(val_batch), val_y, val_batch.mask))

    last = fit(None)  # the same trajectory, the last epoch kept
    best = fit((val_batch, val_y))
    assert best <= last
    stopped = SizeGeneralizationConfig(epochs=50, batch_size=4, lr=0.05, patience=2)
    model = build_regressor("mpnn", stopped)
    history = train_regressor(
        model, train, y, stopped, generator=torch.Generator().manual_seed(1), val=(val_batch, val_y)
    )
    assert len(history) < 50


def test_best_of_keeps_the_lowest_validation_run():
    base = dict(
        train_size=8, train_graphs=20, val_fraction=0.25, test_sizes=(8,), test_graphs=2,
        models=("mpnn",), seeds=(0,), epochs=2, batch_size=5, hidden_channels=3, mlp_hidden=4,
        standardize_target=True, lr_schedule="cosine",
    )  # fmt: skip
    one = size_generalization(SizeGeneralizationConfig(**base, best_of=1))
    two = size_generalization(SizeGeneralizationConfig(**base, best_of=2))
    # Trial 0 with best_of=2 trains run seeds 0 and 1; run seed 0 is best_of=1's only run.
    assert two.val_loss["mpnn"][0] <= one.val_loss["mpnn"][0]
    with pytest.raises(GraphDataError, match="config.lr_schedule: expected one of"):
        size_generalization(SizeGeneralizationConfig(**{**base, "lr_schedule": "step"}))
    with pytest.raises(GraphDataError, match=r"config.best_of: expected an int >= 1, got 0"):
        size_generalization(SizeGeneralizationConfig(**base, best_of=0))


def test_signal_triangle_density_refuses_a_mask_off_the_batch():
    # The mask only gives each graph's node count n: the old code took a mask of the wrong
    # shape (here [1, 3] for a [1, 4] batch: n = 3, the density of 4 nodes divided by 9, not 16)
    # and an all-False row (n = 0: 0/0 = NaN) without a word.
    adj, x = torch.ones(1, 4, 4, dtype=DT), torch.full((1, 4), 0.5, dtype=DT)
    full = signal_triangle_density(adj, x, torch.ones(1, 4, dtype=torch.bool))
    torch.testing.assert_close(full, signal_triangle_density(adj, x))  # oracle: no mask
    with pytest.raises(GraphDataError, match=r"mask: expected a bool tensor \[B, N\] = \[1, 4\]"):
        signal_triangle_density(adj, x, torch.ones(1, 3, dtype=torch.bool))
    with pytest.raises(GraphDataError, match=r"mask: expected a bool tensor"):
        signal_triangle_density(adj, x, torch.ones(1, 4))
    with pytest.raises(GraphDataError, match=r"mask: graphs \[0\] have no real node"):
        signal_triangle_density(adj, x, torch.zeros(1, 4, dtype=torch.bool))


class _Constant(torch.nn.Module):
    """Predicts ``value`` at every node (a stand-in for a diverged regressor)."""

    def __init__(self, value: float) -> None:
        super().__init__()
        self.value = value

    def forward(self, batch: DenseGraphBatch) -> torch.Tensor:
        return torch.full(batch.adj.shape[:2] + (1,), self.value, dtype=batch.adj.dtype)


def test_evaluate_mse_squares_in_float64_and_refuses_a_diverged_model():
    # Oracle: a constant prediction c gives MSE = mean((c - y)^2), computed here in float64 from
    # the same graphs. A float32 square of 1e20 was inf (a non-finite result); now it is finite.
    config = SizeGeneralizationConfig()
    for value in (0.5, 1e20):
        got = evaluate_mse(
            _Constant(value), 6, 3, config, generator=torch.Generator().manual_seed(1)
        )
        _, y = full_random_graphs(
            6, 3, generator=torch.Generator().manual_seed(1), dtype=config.dtype
        )
        expected = float(
            ((torch.tensor(float(value), dtype=torch.float32).double() - y.double()) ** 2).mean()
        )
        assert math.isfinite(got) and got == pytest.approx(expected, rel=1e-12)
    for value in (math.inf, math.nan):
        with pytest.raises(GraphDataError, match="predictions on 6-node graphs hold NaN or inf"):
            evaluate_mse(_Constant(value), 6, 3, config, generator=torch.Generator().manual_seed(1))
