import pytest
import torch

from graphdata.errors import GraphDataError
from graphon.families import erdos_renyi, make_graphon, sbm
from graphon.graphons import Graphon, GraphonSignal
from graphon.sampling import sample_graphs, sample_latents


def test_latent_grids(device):
    assert sample_latents(4, latents="grid", device=device).tolist() == [0.0, 0.25, 0.5, 0.75]
    mid = sample_latents(4, latents="midpoint", batch_size=2, device=device, dtype=torch.float64)
    assert mid.shape == (2, 4) and mid[1].tolist() == [0.125, 0.375, 0.625, 0.875]
    u = sample_latents(1000, seed=0, device=device)
    assert u.device.type == device.type
    assert torch.all(u[1:] >= u[:-1]) and 0 <= float(u.min()) and float(u.max()) < 1


def test_same_seed_same_graphs_and_generator_device(device):
    w = make_graphon("sum")
    a = sample_graphs(w, 30, batch_size=3, seed=7, device=device)
    b = sample_graphs(w, 30, batch_size=3, seed=7, device=device)
    c = sample_graphs(w, 30, batch_size=3, seed=8, device=device)
    assert torch.equal(a.adj, b.adj) and not torch.equal(a.adj, c.adj)
    assert a.adj.device.type == device.type and a.adj.dtype == torch.float32
    gen = torch.Generator(device=device).manual_seed(7)
    d = sample_graphs(w, 30, batch_size=3, generator=gen)
    assert d.adj.device.type == device.type


def test_simple_graphs_are_symmetric_loopless_binary(device):
    s = sample_graphs(sbm(), 60, batch_size=4, seed=0, device=device)
    adj = s.adj
    assert adj.shape == (4, 60, 60) and s.signal is None
    assert torch.equal(adj, adj.mT)
    assert float(torch.diagonal(adj, dim1=-2, dim2=-1).abs().sum()) == 0
    assert set(adj.unique().tolist()) <= {0.0, 1.0}


def test_loops_and_extreme_probabilities():
    full = sample_graphs(erdos_renyi(1.0), 5, loops=True, seed=0)
    assert torch.equal(full.adj, torch.ones(5, 5))
    empty = sample_graphs(erdos_renyi(0.0), 5, loops=True, seed=0)
    assert float(empty.adj.sum()) == 0


def test_weighted_graph_is_w_at_the_latents():
    w = make_graphon("product")
    s = sample_graphs(w, 6, edges="weighted", loops=True, seed=1, dtype=torch.float64)
    assert torch.allclose(s.adj, s.latents[:, None] * s.latents[None, :])
    s0 = sample_graphs(w, 6, edges="weighted", seed=1, dtype=torch.float64)
    assert torch.equal(torch.diagonal(s0.adj), torch.zeros(6, dtype=torch.float64))


def test_edge_frequencies_match_probabilities():
    # SBM 0.8/0.3 with 5 equal blocks on the grid: expected edge density known exactly
    s = sample_graphs(sbm(), 400, batch_size=4, latents="midpoint", seed=3, dtype=torch.float64)
    probs = sbm().matrix(s.latents[0])
    want = float((probs.sum() - torch.diagonal(probs).sum()) / (400 * 399))
    got = float(s.adj.sum() / (4 * 400 * 399))
    # 4 * 400 * 399 / 2 Bernoulli draws: sd below 1e-3
    assert got == pytest.approx(want, abs=4e-3)


def test_signals_follow_the_latents():
    ws = GraphonSignal(make_graphon("sum"), lambda x: torch.stack([x, x**2], -1))
    s = sample_graphs(ws, 10, batch_size=2, seed=0, dtype=torch.float64)
    assert s.signal.shape == (2, 10, 2)
    assert torch.allclose(s.signal[..., 1], s.latents**2)


class _Broken(Graphon):
    name = "broken"

    def __call__(self, x, y):
        return x + y + 0.5


def test_sampling_errors():
    with pytest.raises(GraphDataError, match=r"n: expected an int >= 1, got 0"):
        sample_graphs(make_graphon("sum"), 0)
    with pytest.raises(GraphDataError, match="batch_size"):
        sample_graphs(make_graphon("sum"), 3, batch_size=0)
    with pytest.raises(GraphDataError, match="latents"):
        sample_graphs(make_graphon("sum"), 3, latents="random")
    with pytest.raises(GraphDataError, match="at most one"):
        sample_graphs(make_graphon("sum"), 3, seed=0, generator=torch.Generator())
    with pytest.raises(GraphDataError, match=r"'broken' returned W\(x, y\) = .* outside \[0, 1\]"):
        sample_graphs(_Broken(), 4, seed=0)
    with pytest.raises(GraphDataError, match="Graphon or GraphonSignal"):
        sample_graphs(lambda x, y: x, 4)
    one = sample_graphs(make_graphon("sum"), 1, seed=0)
    assert one.adj.shape == (1, 1) and float(one.adj) == 0.0


@pytest.mark.parametrize("dtype", [torch.int64, torch.bool, "float32"])
def test_a_non_floating_dtype_is_refused_by_name(dtype):
    with pytest.raises(GraphDataError, match=r"dtype: expected a floating torch dtype.*float32"):
        sample_graphs(erdos_renyi(0.5), 3, seed=0, dtype=dtype)
    with pytest.raises(GraphDataError, match=r"dtype: expected a floating torch dtype"):
        sample_latents(3, seed=0, dtype=dtype)
