import itertools
import math

import pytest
import torch

from graphdata.errors import GraphDataError
from graphon.densities import graphon_density, monte_carlo_density, sample_density
from graphon.families import erdos_renyi, make_graphon, sbm
from graphon.graphons import AnalyticGraphon, GraphonSignal, StepGraphon
from graphon.homomorphism import hom_density, inj_density
from graphon.patterns import as_pattern

PRODUCT = AnalyticGraphon(lambda x, y: x * y, name="xy")


@pytest.mark.parametrize(
    "name, want",
    [
        ("edge", 1 / 4),
        ("path3", 1 / 12),
        ("triangle", 1 / 27),
        ("double_edge", 1 / 9),
        ("diamond", 1 / 144),
        ("k4", 1 / 256),
    ],
)
def test_product_graphon_is_product_of_inverse_degrees(name, want, device):
    est = graphon_density(name, PRODUCT, device=device)
    assert est.method == "quadrature"
    assert est.value == pytest.approx(want, rel=1e-12) and est.error < 1e-12
    # the closed form itself: prod_v 1 / (deg v + 1)
    assert want == pytest.approx(math.prod(1 / (d + 1) for d in as_pattern(name).degrees))


def test_signal_weighted_product_graphon():
    ws = GraphonSignal(PRODUCT, lambda x: x)
    assert graphon_density("triangle", ws, exponents=[1, 1, 1]).value == pytest.approx(1 / 64)
    est = graphon_density("path3", ws, exponents=[2, 0, 1])
    assert est.value == pytest.approx(1 / (1 + 1 + 2) / (2 + 1) / (1 + 1 + 1))


def test_step_graphons_are_exact_block_sums(device):
    w = sbm()
    lam, b = w.measures.tolist(), w.probs
    want = sum(
        lam[i] * lam[j] * lam[k] * float(b[i, j] * b[j, k] * b[i, k])
        for i, j, k in itertools.product(range(5), repeat=3)
    )
    est = graphon_density("triangle", w, device=device)
    assert est.method == "exact" and est.error == 0.0
    assert est.value == pytest.approx(want, rel=1e-12)
    assert graphon_density("k4", erdos_renyi(0.3)).value == pytest.approx(0.3**6)
    step = GraphonSignal(StepGraphon([[0.9, 0.2], [0.2, 0.4]], [1, 3]), torch.tensor([2.0, -1.0]))
    want = sum(
        [0.25, 0.75][i] * [0.25, 0.75][j] * [2.0, -1.0][i] ** 2 * [[0.9, 0.2], [0.2, 0.4]][i][j]
        for i, j in itertools.product(range(2), repeat=2)
    )
    assert graphon_density("edge", step, exponents=[2, 0]).value == pytest.approx(want)


def test_step_graphon_with_smooth_signal_uses_per_block_quadrature():
    ws = GraphonSignal(erdos_renyi(0.5), lambda x: x)
    est = graphon_density("triangle", ws, exponents=[1, 1, 1])
    assert est.method == "quadrature"
    assert est.value == pytest.approx(0.125 / 8, rel=1e-12)


def test_quadrature_error_estimate_covers_the_true_error_on_a_kink():
    # W = |x - y| has a kink on the diagonal: t(K2) = 1/3; the triangle against order 384
    w = make_graphon("abs_diff")
    est = graphon_density("edge", w)
    assert abs(est.value - 1 / 3) <= est.error < 1e-3
    ref = graphon_density("triangle", w, order=384).value
    est = graphon_density("triangle", w, order=64)
    assert abs(est.value - ref) <= est.error


def test_monte_carlo_interval_covers_exact_values():
    est = monte_carlo_density("triangle", PRODUCT, num_samples=50_000, seed=1)
    assert est.method == "monte_carlo"
    assert est.low <= 1 / 27 <= est.high and est.error < 2e-3
    same = monte_carlo_density("triangle", PRODUCT, num_samples=50_000, seed=1)
    assert same == est
    ws = GraphonSignal(PRODUCT, lambda x: x)
    sig = monte_carlo_density(
        "triangle", ws, exponents=[1, 1, 1], num_samples=50_000, confidence=0.999, seed=2
    )
    assert sig.low <= 1 / 64 <= sig.high


def test_monte_carlo_on_a_graph_matches_exact_hom_and_injective(device):
    g = torch.Generator().manual_seed(0)
    a = torch.rand(12, 12, generator=g, dtype=torch.float64)
    a = ((a + a.T) / 2).to(device)
    x = torch.rand(12, generator=g, dtype=torch.float64).to(device)
    pat = as_pattern("square", exponents=[1, 0, 1, 0])
    exact = float(hom_density(pat, a, x))
    est = monte_carlo_density(pat, a, x, num_samples=40_000, confidence=0.999, seed=3)
    assert est.low <= exact <= est.high
    inj = float(inj_density(pat, a, x))
    est = monte_carlo_density(
        pat, a, x, num_samples=40_000, injective=True, confidence=0.999, seed=4
    )
    assert est.low <= inj <= est.high


@pytest.mark.parametrize(("n", "injective"), [(12, False), (12, True), (90, True)])
def test_monte_carlo_on_a_graph_takes_a_cpu_generator_for_a_graph_on_any_device(
    n, injective, device
):
    # A passed torch.Generator() is a CPU one: the nodes were drawn with device=the graph's,
    # and on CUDA torch refused ("Expected a 'cuda' device type for generator but found
    # 'cpu'"). They are drawn on the generator's device and moved; on the CPU the draws, so the
    # estimates, are those of seed=3 bit for bit.
    g = torch.Generator().manual_seed(1)
    a = torch.rand(n, n, generator=g, dtype=torch.float64)
    a = (a + a.T) / 2
    kw = {"num_samples": 4_000, "injective": injective, "confidence": 0.999}
    est = monte_carlo_density(
        "square", a.to(device), generator=torch.Generator().manual_seed(3), **kw
    )
    by_seed = monte_carlo_density("square", a, seed=3, **kw)
    assert est.value == pytest.approx(by_seed.value, rel=1e-12, abs=0)
    if device.type == "cpu":
        assert (est.value, est.error) == (by_seed.value, by_seed.error)
    exact = float((inj_density if injective else hom_density)("square", a))
    assert est.low <= exact <= est.high


def test_injective_monte_carlo_on_a_large_graph_uses_distinct_nodes():
    g = torch.Generator().manual_seed(5)
    a = torch.rand(90, 90, generator=g, dtype=torch.float64)
    a = (a + a.T) / 2
    inj = float(inj_density("square", a))
    est = monte_carlo_density("square", a, injective=True, confidence=0.999, seed=6)
    assert est.low <= inj <= est.high and est.error < 1e-3


def test_sampled_graph_densities_are_unbiased_for_simple_patterns():
    est = sample_density("triangle", erdos_renyi(0.5), 60, num_graphs=20, confidence=0.999, seed=0)
    assert est.method == "sampled_graphs" and est.low <= 0.125 <= est.high
    weighted = sample_density("double_edge", erdos_renyi(0.5), 30, edges="weighted", seed=0)
    assert weighted.value == pytest.approx(0.25) and weighted.error == pytest.approx(0, abs=1e-15)


def test_double_edge_on_bernoulli_samples_warns_and_sits_at_one_half():
    with pytest.warns(UserWarning, match="simple version"):
        est = sample_density("double_edge", erdos_renyi(0.5), 200, num_graphs=4, seed=0)
    assert est.value == pytest.approx(0.5, abs=0.01)
    assert graphon_density("double_edge", erdos_renyi(0.5)).value == pytest.approx(0.25)


def test_density_errors():
    with pytest.raises(GraphDataError, match="GraphonSignal"):
        graphon_density("edge", PRODUCT, exponents=[1, 1])
    with pytest.raises(GraphDataError, match="exponents"):
        graphon_density("edge", GraphonSignal(PRODUCT, lambda x: x))
    with pytest.raises(GraphDataError, match="Graphon or GraphonSignal"):
        graphon_density("edge", torch.ones(3, 3))
    with pytest.raises(GraphDataError, match="confidence"):
        monte_carlo_density("edge", PRODUCT, confidence=1.5)
    with pytest.raises(GraphDataError, match="injective"):
        monte_carlo_density("edge", PRODUCT, injective=True)
    with pytest.raises(GraphDataError, match="cannot map injectively"):
        monte_carlo_density("k4", torch.ones(3, 3), injective=True)
    with pytest.raises(GraphDataError, match="multiply-adds"):
        graphon_density("k5", PRODUCT, order=400, max_cost=1e8)


def test_sample_density_refuses_graphs_smaller_than_the_injective_pattern():
    with pytest.raises(GraphDataError, match=r"n: the injective density of the 3-vertex .*n=2"):
        sample_density("triangle", erdos_renyi(0.5), 2, seed=0)
    est = sample_density("triangle", erdos_renyi(1.0), 2, injective=False, seed=0)
    assert est.value == 0.0  # t(K3, K2) = 0: homomorphisms need no room


def _cos_block_integrals(k: int, freq: float) -> torch.Tensor:
    """``int_{I_b} cos(freq x) dx`` over the ``k`` equal blocks (closed form)."""
    a = torch.arange(k + 1, dtype=torch.float64) / k
    return (torch.sin(freq * a[1:]) - torch.sin(freq * a[:-1])) / freq


@pytest.mark.filterwarnings("ignore:graphon_density")
def test_product_rule_error_is_never_a_rule_compared_with_itself():
    # 20 blocks: 16 and 32 nodes in all both give 2 Gauss nodes per block, one rule; the old
    # code took their gap (0.0) as agreement and returned t(vertex) off by 1.1e-2 with error 0
    ws = GraphonSignal(sbm(20, 0.9, 0.2), lambda x: torch.cos(60 * x))
    est = graphon_density("vertex", ws, exponents=[2])
    exact = 0.5 + math.sin(120) / 240  # int_0^1 cos^2(60 x) dx
    assert est.error > 0 and abs(est.value - exact) <= est.error
    moments = _cos_block_integrals(20, 60.0)
    exact = float(moments @ sbm(20, 0.9, 0.2).probs @ moments)  # sum_kl B_kl F_k F_l
    est = graphon_density("edge", ws, exponents=[1, 1])
    assert est.error > 0 and abs(est.value - exact) <= est.error
    # order=2 on one panel: q = 1 and q = 2 are both the 2-point rule
    est = graphon_density("edge", AnalyticGraphon(lambda x, y: torch.exp(-3 * (x + y))), order=2)
    exact = ((1 - math.exp(-3)) / 3) ** 2
    assert est.error > 0 and abs(est.value - exact) <= est.error


@pytest.mark.filterwarnings("ignore:graphon_density")
def test_warped_rule_with_two_nodes_per_panel_is_a_quadrature_not_a_refused_measure():
    # Sidi-warped 2-point weights sum to 0.76 per panel; the old code passed them to
    # hom_density as node measures and raised "node_weights: ... summing to 1"
    ws = GraphonSignal(sbm(10, 0.9, 0.2), lambda x: torch.cos(60 * x))
    est = graphon_density("vertex", ws, exponents=[2])
    exact = 0.5 + math.sin(120) / 240
    assert abs(est.value - exact) <= est.error < 1e-4
