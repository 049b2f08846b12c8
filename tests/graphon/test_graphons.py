import pytest
import torch

from graphdata.errors import GraphDataError
from graphon.graphons import AnalyticGraphon, GraphonSignal, StepGraphon
from graphon.homomorphism import hom_density

F64 = torch.float64


def test_analytic_graphon_evaluates_and_builds_matrices(device):
    w = AnalyticGraphon(lambda x, y: (x + y) / 2, name="sum")
    x = torch.tensor([0.0, 0.5, 1.0], dtype=F64, device=device)
    want = torch.tensor([[0, 0.25, 0.5], [0.25, 0.5, 0.75], [0.5, 0.75, 1.0]], dtype=F64)
    assert torch.allclose(w.matrix(x).cpu(), want)
    assert w.matrix(x.expand(4, 3)).shape == (4, 3, 3)
    assert repr(w) == "AnalyticGraphon('sum')"


def test_analytic_graphon_rejects_bad_functions():
    with pytest.raises(GraphDataError, match=r"values in \[0, 1\].*rescale"):
        AnalyticGraphon(lambda x, y: x + y)
    with pytest.raises(GraphDataError, match="symmetric.*symmetrise"):
        AnalyticGraphon(lambda x, y: x * (1 - y))
    with pytest.raises(GraphDataError, match="broadcast shape.*full_like"):
        AnalyticGraphon(lambda x, y: torch.tensor(0.5))
    with pytest.raises(GraphDataError, match="NaN"):
        AnalyticGraphon(lambda x, y: torch.log(x * y) * 0)
    with pytest.raises(GraphDataError, match="callable"):
        AnalyticGraphon(0.5)


def test_step_graphon_blocks_and_measures():
    w = StepGraphon([[0.8, 0.3], [0.3, 0.1]], sizes=[30, 70])
    assert w.measures.tolist() == pytest.approx([0.3, 0.7])
    x = torch.tensor([0.0, 0.29, 0.3, 0.99], dtype=F64)
    assert w.block_of(x).tolist() == [0, 0, 1, 1]
    assert w(x, torch.full_like(x, 0.5)).tolist() == [0.3, 0.3, 0.1, 0.1]
    with pytest.raises(GraphDataError, match="positive block sizes"):
        StepGraphon([[0.5]], sizes=[0.0])
    with pytest.raises(GraphDataError, match=r"entries in \[0, 1\]"):
        StepGraphon([[1.5]])
    with pytest.raises(GraphDataError, match="symmetric"):
        StepGraphon([[0.5, 0.1], [0.2, 0.5]])


def test_empirical_graphon_is_invariant_under_blow_up():
    g = torch.Generator().manual_seed(0)
    a = torch.rand(5, 5, generator=g, dtype=F64)
    a = (a + a.T) / 2
    blow = a.repeat_interleave(3, 0).repeat_interleave(3, 1)  # G (x) J_3
    w, wb = StepGraphon.from_graph(a), StepGraphon.from_graph(blow)
    x = torch.rand(200, generator=g, dtype=F64)
    assert torch.equal(w(x[:, None], x[None, :]), wb(x[:, None], x[None, :]))
    for name in ("triangle", "double_edge", "k4"):
        assert float(hom_density(name, blow)) == pytest.approx(float(hom_density(name, a)))
    with pytest.raises(GraphDataError, match=r"\[0, 1\].*rescale"):
        StepGraphon.from_graph(2 * a)


def test_step_approximation_reproduces_aligned_step_graphons():
    sbm = StepGraphon([[0.9, 0.1], [0.1, 0.6]])
    approx = StepGraphon.from_graphon(sbm, 4, points=3)
    want = torch.tensor([[0.9, 0.1], [0.1, 0.6]], dtype=F64).repeat_interleave(2, 0)
    assert torch.allclose(approx.probs, want.repeat_interleave(2, 1), atol=1e-15)
    # cell averages of xy are products of cell means: ((i + 1/2)/N)((j + 1/2)/N)
    avg = StepGraphon.from_graphon(AnalyticGraphon(lambda x, y: x * y), 4, points=2)
    mid = (torch.arange(4, dtype=F64) + 0.5) / 4
    assert torch.allclose(avg.probs, mid[:, None] * mid[None, :])


def test_graphon_signal_callable_and_step_values(device):
    ws = GraphonSignal(AnalyticGraphon(lambda x, y: x * y), lambda x: torch.stack([x, 1 - x], -1))
    x = torch.tensor([0.25, 0.5], dtype=F64, device=device)
    assert ws.channels == 2
    assert ws.signal(x).tolist() == [[0.25, 0.75], [0.5, 0.5]]
    step = GraphonSignal(StepGraphon([[0.5, 0.1], [0.1, 0.5]]), torch.tensor([1.0, -1.0]))
    assert step.signal(x).squeeze(-1).tolist() == [1.0, -1.0]
    with pytest.raises(GraphDataError, match="block values need a StepGraphon"):
        GraphonSignal(AnalyticGraphon(lambda x, y: x * y), torch.ones(2))
    with pytest.raises(GraphDataError, match="K = 2"):
        GraphonSignal(StepGraphon([[0.5, 0.1], [0.1, 0.5]]), torch.ones(3))
    with pytest.raises(GraphDataError, match=r"\[17\] or \[17, C\]"):
        GraphonSignal(AnalyticGraphon(lambda x, y: x * y), lambda x: x.sum())
