import pytest
import torch

from graphdata.dense import DenseGraphBatch
from graphdata.errors import GraphDataError
from graphon.families import erdos_renyi
from graphon.nn.bernoulli import bernoulli_lift
from graphon.nn.models import IGN, IWN
from graphon.nn.transfer import randomize_parameters, sample_batch

DT = torch.float64


def _iwn(seed, **kwargs):
    model = IWN(1, 8, 1, **kwargs).to(DT)
    randomize_parameters(model, generator=torch.Generator().manual_seed(seed))
    return model.eval()


@pytest.mark.parametrize("p", [0.0, 1.0])
def test_deterministic_entries_reduce_to_the_plain_output(p):
    # With P in {0, 1} every entry is surely 0 or 1: the lift is the network on that graph.
    model = _iwn(0, num_layers=3)
    n = 6
    probs = torch.full((1, n, n), p, dtype=DT) * (1 - torch.eye(n, dtype=DT))
    x = torch.rand(1, n, 1, generator=torch.Generator().manual_seed(1), dtype=DT)
    batch = DenseGraphBatch(probs, x, torch.ones(1, n, dtype=torch.bool))
    with torch.no_grad():
        torch.testing.assert_close(bernoulli_lift(model, probs, x), model(batch))


def test_two_layer_lift_against_the_closed_form_for_constant_w():
    # W = p, x = 1: every mean of the input is a constant, so a hidden entry off the diagonal
    # is sigma(z(a)) with a = A_ij in {0, 1}; the lift averages it over Bernoulli(p), the
    # (loopless) diagonal keeps a = 0, and the readout takes the channel means.
    model = _iwn(3)
    n, p = 5, 0.3
    probs = torch.full((1, n, n), p, dtype=DT) * (1 - torch.eye(n, dtype=DT))
    layer, readout = model.layers[0], model.readout
    eq = [e.equation for e in layer.elements]
    theta = layer.weight  # [2 channels (A, x), hidden, 7]
    local = theta[:, :, eq.index("ab->ab")] + theta[:, :, eq.index("ab->ba")]
    means = sum(
        theta[:, :, eq.index(q)] for q in ("ab->ac", "ab->bc", "ab->ca", "ab->cb", "ab->cd")
    )
    mean_a = p * (n - 1) / n  # row, column and total mean of the loopless P
    with torch.no_grad():
        hidden = []
        for a in (0.0, 1.0):
            z = local[0] * a + local[1] + means[0] * mean_a + means[1] + layer.bias[:, 0]
            hidden.append(torch.sigmoid(z))
        off = p * hidden[1] + (1 - p) * hidden[0]
        entry_mean = ((n * n - n) * off + n * hidden[0]) / (n * n)  # [hidden]
        expected = entry_mean @ readout.weight[:, :, 0] + readout.bias[:, 0]
        got = bernoulli_lift(model, probs, torch.ones(1, n, 1, dtype=DT))
    torch.testing.assert_close(got[0], expected)


def test_sample_means_approach_the_lift_not_the_graphon_value():
    # B.6, tested as a relation: on G(n, 1/2) the IWN's mean output converges to the
    # Bernoulli lift; the gap to the weighted-graph value N(W) is the plateau.
    w = erdos_renyi(0.5)
    model = _iwn(1)
    gen = torch.Generator().manual_seed(0)
    weighted = sample_batch(w, 120, 1, edges="weighted", generator=gen, dtype=DT)
    with torch.no_grad():
        graphon_value = float(model(weighted))
        lift = float(bernoulli_lift(model, weighted.adj, weighted.x))
        gaps = []
        for n in (30, 120):
            outputs = model(sample_batch(w, n, 12, generator=gen, dtype=DT))
            gaps.append(abs(float(outputs.mean()) - lift))
    plateau = abs(graphon_value - lift)
    assert plateau > 0.05  # this network has a visible plateau
    assert gaps[1] < 0.1 * plateau  # the samples sit at the lift, far from N(W)
    assert gaps[1] < gaps[0]  # and approach it as n grows


def test_lift_rejects_other_models_and_bad_probabilities():
    probs = torch.full((1, 4, 4), 0.5)
    with pytest.raises(GraphDataError, match="model: expected an order-2 IWN, got IGN"):
        bernoulli_lift(IGN(0), probs)
    with pytest.raises(GraphDataError, match="of order 3"):
        bernoulli_lift(IWN(0, order=3), probs)
    with pytest.raises(GraphDataError, match="probs: expected probabilities in \\[0, 1\\]"):
        bernoulli_lift(IWN(0), probs * 3)
