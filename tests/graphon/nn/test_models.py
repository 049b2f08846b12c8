import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from graphdata.dense import DenseGraphBatch
from graphdata.errors import GraphDataError
from graphon.nn.inputs import dense_input
from graphon.nn.models import IGN, IWN, MODELS, MPNN


def _random_graph(n, channels, seed):
    g = torch.Generator().manual_seed(seed)
    a = torch.rand(n, n, generator=g, dtype=torch.float64)
    return (a + a.T) / 2, torch.rand(n, channels, generator=g, dtype=torch.float64)


def _model(cls, seed=0, **kwargs):
    torch.manual_seed(0)
    model = cls(2, 6, 2, num_layers=3, **kwargs).double()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():  # N(0, 1) everywhere, biases included: nothing is zero
            p.normal_(generator=g)
    return model.eval()


def _batch(adjs, xs):
    return DenseGraphBatch.from_adjacency(adjs, xs)


@settings(max_examples=20, deadline=None)
@given(
    data=st.data(),
    name=st.sampled_from(sorted(MODELS)),
    task=st.sampled_from(["graph", "node"]),
)
def test_permutation_invariance_and_equivariance(data, name, task):
    n = data.draw(st.integers(2, 7), label="n")
    perm = torch.tensor(data.draw(st.permutations(range(n)), label="perm"))
    seed = data.draw(st.integers(0, 2**16), label="seed")
    a, x = _random_graph(n, 2, seed)
    model = _model(MODELS[name], seed=seed % 5, task=task)
    with torch.no_grad():
        out = model(_batch([a], [x]))
        pout = model(_batch([a[perm][:, perm]], [x[perm]]))
    expected = out if task == "graph" else out[:, perm]
    torch.testing.assert_close(pout, expected)


@pytest.mark.parametrize(
    ("cls", "kwargs"),
    [(IWN, {}), (IWN, {"order": 3}), (IWN, {"task": "node"}), (MPNN, {}), (MPNN, {"task": "node"})],
)
def test_blow_up_invariance(cls, kwargs):
    # B.5: G and G (x) J_m induce one graphon-signal; averaging networks cannot tell them apart.
    n, m = 7, 3
    a, x = _random_graph(n, 2, seed=11)
    big, xb = torch.kron(a, torch.ones(m, m, dtype=torch.float64)), x.repeat_interleave(m, 0)
    model = _model(cls, **kwargs)
    with torch.no_grad():
        out, out_big = model(_batch([a], [x])), model(_batch([big], [xb]))
    if kwargs.get("task") == "node":
        out = out.repeat_interleave(m, 1)
    assert float((out - out_big).abs().max()) < 1e-6


@pytest.mark.parametrize("signal", ["diagonal", "broadcast"])
def test_full_ign_is_not_blow_up_invariant(signal):
    n, m = 7, 3
    a, x = _random_graph(n, 2, seed=11)
    big, xb = torch.kron(a, torch.ones(m, m, dtype=torch.float64)), x.repeat_interleave(m, 0)
    model = _model(IGN, signal=signal)
    with torch.no_grad():
        gap = (model(_batch([a], [x])) - model(_batch([big], [xb]))).abs().max()
    assert float(gap) > 1e-3  # diagonal reads/writes see the blow-up's larger diagonal blocks


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("task", ["graph", "node"])
def test_padded_graph_gives_the_output_alone(name, task):
    a, x = _random_graph(4, 2, seed=1)
    b, y = _random_graph(6, 2, seed=2)
    model = _model(MODELS[name], task=task)
    with torch.no_grad():
        both = model(_batch([a, b], [x, y]))
        alone = model(_batch([a], [x]))
    if task == "graph":
        torch.testing.assert_close(both[:1], alone)
    else:
        torch.testing.assert_close(both[0, :4], alone[0])
        assert float(both[0, 4:].abs().max()) == 0.0


def test_mpnn_dense_and_pyg_edge_paths_agree():
    a, x = _random_graph(5, 2, seed=3)
    b, y = _random_graph(3, 2, seed=4)
    a[0, 1] = a[1, 0] = 0.0  # a missing edge: absent from the PyG edge list
    batch = _batch([a, b], [x, y])
    for task in ("graph", "node"):
        dense = _model(MPNN, task=task, root_weight=True, mlp_hidden=4)
        edges = MPNN(2, 6, 2, num_layers=3, task=task, root_weight=True, mlp_hidden=4,
                     aggregation="edges").double()  # fmt: skip
        edges.load_state_dict(dense.state_dict())
        with torch.no_grad():
            torch.testing.assert_close(edges(batch), dense(batch))


def test_mpnn_layer_is_the_mean_normalised_aggregation():
    # h'_i = W (1/n) sum_j A_ij h_j + b on a hand-made graph.
    model = MPNN(1, 1, 1, num_layers=1).double()
    with torch.no_grad():
        model.convs[0].lin.weight.fill_(2.0)
        model.convs[0].lin.bias.fill_(0.5)
    adj = torch.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]], dtype=torch.float64)
    x = torch.tensor([[1.0], [2.0], [3.0]], dtype=torch.float64)
    node = MPNN(1, 1, 1, num_layers=1, task="node").double()
    node.load_state_dict(model.state_dict())
    with torch.no_grad():
        got = node(_batch([adj], [x]))[0, :, 0]
        pooled = model(_batch([adj], [x]))[0, 0]
    expected = 2.0 * torch.tensor([2.0, 4.0, 2.0], dtype=torch.float64) / 3 + 0.5
    torch.testing.assert_close(got, expected)
    torch.testing.assert_close(pooled, expected.mean())


def test_iwn_input_lift_is_broadcast_not_diagonal():
    a, x = _random_graph(4, 1, seed=5)
    lifted = dense_input(_batch([a], [x]))[0, 1]
    torch.testing.assert_close(lifted, x[:, 0].expand(4, 4))  # (i, j) -> x_j, diagonal included
    diag = dense_input(_batch([a], [x]), signal="diagonal")[0, 1]
    torch.testing.assert_close(diag, torch.diag(x[:, 0]))


def test_models_run_on_device_with_registered_parameters(device):
    a, x = _random_graph(5, 2, seed=6)
    batch = _batch([a], [x]).to(device)
    for cls in (IWN, IGN, MPNN):
        model = cls(2, 4, 3, mlp_hidden=5).double().to(device)
        assert all(p.device.type == device.type for p in model.parameters())
        out = model(batch)
        out.sum().backward()
        assert out.shape == (1, 3) and all(p.grad is not None for p in model.parameters())


def test_bad_inputs_raise_clear_errors():
    a, x = _random_graph(4, 3, seed=7)
    with pytest.raises(GraphDataError, match="expected 2 signal channels .* got 3 channels"):
        IWN(2)(_batch([a], [x]))
    with pytest.raises(GraphDataError, match="expected 2 signal channels .* got no signals"):
        MPNN(2)(_batch([a], None))
    with pytest.raises(GraphDataError, match="batch: expected a graphdata.dense.DenseGraphBatch"):
        IGN(3)(a)
    with pytest.raises(GraphDataError, match="mask: expected a bool tensor \\[B, N\\]"):
        DenseGraphBatch(a[None], x[None], torch.ones(1, 5, dtype=torch.bool))
    with pytest.raises(GraphDataError, match="adj: expected a floating tensor \\[B, N, N\\]"):
        DenseGraphBatch(torch.zeros(1, 4, 5), None, torch.ones(1, 4, dtype=torch.bool))
    with pytest.raises(GraphDataError, match="order: expected an int in 2..4"):
        IWN(1, order=5)
    with pytest.raises(GraphDataError, match="activation: expected one of"):
        IWN(1, activation="gelu")
    with pytest.raises(GraphDataError, match="aggregation: expected 'dense' or 'edges'"):
        MPNN(1, aggregation="sparse")


@pytest.mark.parametrize("name", list(MODELS))
def test_a_batch_of_another_dtype_is_refused_by_name(name):
    adj = torch.tensor([[0.0, 1.0], [1.0, 0.0]], dtype=torch.float64)
    batch = DenseGraphBatch.from_adjacency([adj], [torch.ones(2, 1, dtype=torch.float64)])
    model = MODELS[name](1)
    with pytest.raises(GraphDataError, match=r"expected dtype torch.float32.*got torch.float64"):
        model(batch)
    assert model.double()(batch).dtype == torch.float64
