import pytest
import torch

from graphdata.errors import GraphDataError, UnknownLabelError
from graphon.graphons import GraphonSignal, StepGraphon
from graphon.nn.transfer import ConvergenceConfig, randomize_parameters, untrained_convergence

SMALL = ConvergenceConfig(sizes=(12, 24), samples=4, batch_size=4, hidden_channels=4)


def test_small_run_shapes_determinism_and_metrics():
    a = untrained_convergence("erdos_renyi", SMALL, seed=3)
    b = untrained_convergence("erdos_renyi", SMALL, seed=3)
    c = untrained_convergence("erdos_renyi", SMALL, seed=4)
    assert list(a.curves) == ["iwn", "ign", "mpnn"]
    for name, curve in a.curves.items():
        assert curve.outputs.shape == (2, 4) and curve.sizes == [12, 24]
        assert torch.equal(curve.outputs, b.curves[name].outputs)  # same seed, same numbers
        assert not torch.equal(curve.outputs, c.curves[name].outputs)
        expected_mae = (curve.outputs - curve.limit).abs().mean(1)
        torch.testing.assert_close(curve.mae, expected_mae)
        q = torch.quantile(curve.outputs, torch.tensor([0.1, 0.9], dtype=torch.float64), dim=1)
        torch.testing.assert_close(curve.spread, q[1] - q[0])
        assert (curve.lift is not None) == (name == "iwn")
    table = a.table()
    assert table.count("\n| iwn |") == 2 and "Bernoulli lift" in table


def test_untrained_convergence_leaves_the_global_rng_untouched():
    # Each model's constructor initialised it from the caller's global RNG before the seeded
    # redraw: the result did not depend on it, but the caller's next draw changed.
    torch.manual_seed(5)
    expected = torch.rand(4)
    torch.manual_seed(5)
    untrained_convergence("erdos_renyi", SMALL, seed=3)
    assert torch.equal(torch.rand(4), expected)  # oracle: the same seed, nothing drawn between


def test_mpnn_converges_on_a_constant_graphon():
    # On G(n, p) the mean-aggregating MPNN's error to N(W) shrinks with n (B.6: MPNN -> 0).
    config = ConvergenceConfig(sizes=(25, 400), samples=6, models=("mpnn",), dtype=torch.float64)
    curve = untrained_convergence("erdos_renyi", config, seed=0).curves["mpnn"]
    assert float(curve.mae[1]) < 0.5 * float(curve.mae[0])
    assert float(curve.spread[1]) < float(curve.spread[0])


def test_graphon_signal_sets_the_input_channels():
    w = StepGraphon([[0.9, 0.1], [0.1, 0.9]])
    ws = GraphonSignal(w, torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
    config = ConvergenceConfig(sizes=(10,), samples=2, models=("iwn",))
    result = untrained_convergence(ws, config, seed=0)
    assert result.curves["iwn"].outputs.shape == (1, 2)
    # The signal enters the network: same seed and signal give the same outputs, a scaled
    # signal (same graphs, same weights) gives different ones.
    again = untrained_convergence(ws, config, seed=0)
    assert torch.equal(result.curves["iwn"].outputs, again.curves["iwn"].outputs)
    scaled = GraphonSignal(w, torch.tensor([[3.0, 0.0], [0.0, 3.0]]))
    other = untrained_convergence(scaled, config, seed=0)
    assert not torch.allclose(result.curves["iwn"].outputs, other.curves["iwn"].outputs)


def test_randomize_parameters_is_seeded():
    layer_a, layer_b = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    randomize_parameters(layer_a, std=2.0, generator=torch.Generator().manual_seed(1))
    randomize_parameters(layer_b, std=2.0, generator=torch.Generator().manual_seed(1))
    assert torch.equal(layer_a.weight, layer_b.weight) and torch.equal(layer_a.bias, layer_b.bias)


def test_bad_configuration_raises():
    with pytest.raises(UnknownLabelError, match="unknown model label 'gcn'"):
        untrained_convergence("sbm", ConvergenceConfig(sizes=(10,), samples=2, models=("gcn",)))
    with pytest.raises(GraphDataError, match="config.sizes: expected a non-empty tuple of graph"):
        untrained_convergence("sbm", ConvergenceConfig(sizes=(1,), samples=2))
    with pytest.raises(UnknownLabelError, match="unknown graphon label"):
        untrained_convergence("no_such_graphon", SMALL)
