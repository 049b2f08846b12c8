"""Kinked and discontinuous graphons: detection, the ordered-simplex rule, honest errors."""

from __future__ import annotations

import math
import warnings

import pytest
import torch

from graphdata.errors import GraphDataError
from graphon._simplex import sorted_classes
from graphon._smoothness import detect
from graphon.densities import graphon_density
from graphon.families import make_graphon
from graphon.graphons import AnalyticGraphon, GraphonSignal, StepGraphon
from graphon.patterns import as_pattern

F64 = torch.float64


def _one_minus_max(x, y):
    return 1 - torch.maximum(x, y)


# --- detection --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fn", "diagonal", "breaks", "other"),
    [
        (_one_minus_max, True, (), False),
        (lambda x, y: torch.exp(-3 * (x - y).abs()), True, (), False),
        (lambda x, y: x * y, False, (), False),
        (lambda x, y: torch.exp(-(torch.sin((x - y) ** 2 / 0.05) ** 2)), False, (), False),
        (lambda x, y: (x + y - 1).abs(), False, (), True),  # anti-diagonal: not followed
        (lambda x, y: torch.where((x < 0.37) == (y < 0.37), 0.8, 0.1), False, (0.37,), False),
        (lambda x, y: torch.clamp(x, min=0.41) * torch.clamp(y, min=0.41), False, (0.41,), False),
    ],
)
def test_detect_finds_the_diagonal_and_axis_lines(fn, diagonal, breaks, other):
    found = detect(fn)
    assert found.diagonal is diagonal and found.other is other
    assert len(found.breaks) == len(breaks)
    for got, want in zip(found.breaks, breaks):
        assert abs(got - want) < 1e-9


def test_detect_finds_signal_breaks():
    found = detect(None, lambda x: torch.where(x < 0.6180339, x, 1 - x))
    assert len(found.breaks) == 1 and abs(found.breaks[0] - 0.6180339) < 1e-9


# --- the ordered-simplex rule against closed forms ----------------------------------------


@pytest.mark.parametrize(
    ("pattern", "exact"),
    [("edge", 1 / 3), ("path3", 2 / 15), ("triangle", 1 / 15), ("k4", 2 / 210)],
)
def test_one_minus_max_closed_forms(pattern, exact):
    # t(K_k, 1 - max) = k! * int_{y_1 < ... < y_k} prod_j (1 - y_j)^(j - 1) dy = 2 / (k + 1)!
    # for cliques, and the path3 value 2/15 by the same ordering argument.
    est = graphon_density(pattern, AnalyticGraphon(_one_minus_max))
    assert est.method == "simplex_quadrature" and not est.bound
    assert abs(est.value - exact) <= 1e-13 and est.error >= abs(est.value - exact) - 1e-15


def test_exp_abs_edge_closed_form_and_declared_kinks_skip_probing():
    # int int exp(-a|x - y|) = 2/a - 2(1 - e^-a)/a^2.
    a = 3.0
    exact = 2 / a - 2 * (1 - math.exp(-a)) / a**2
    auto = graphon_density("edge", AnalyticGraphon(lambda x, y: torch.exp(-a * (x - y).abs())))
    declared = graphon_density(
        "edge", AnalyticGraphon(lambda x, y: torch.exp(-a * (x - y).abs()), kinks="diagonal")
    )
    assert abs(auto.value - exact) < 1e-14 and abs(declared.value - exact) < 1e-14
    # Declaring "none" forces the product rule: its error falls as q^-2, and it says so.
    with pytest.warns(UserWarning, match="did not reach two orders agreeing"):
        forced = graphon_density(
            "edge", AnalyticGraphon(lambda x, y: torch.exp(-a * (x - y).abs())), kinks="none"
        )
    assert forced.method == "quadrature" and 1e-9 < abs(forced.value - exact) <= forced.error


def test_orderings_are_grouped_by_the_sorted_pattern():
    assert sum(sorted_classes(as_pattern("k4")).values()) == 24
    assert len(sorted_classes(as_pattern("k4"))) == 1  # every ordering of K4 looks the same
    assert len(sorted_classes(as_pattern("path3"))) == 3  # the middle vertex at rank 0, 1, 2


# --- step graphons written as plain functions: breaks found, errors honest ----------------


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("pattern", ["edge", "triangle", "square", "diamond"])
def test_random_step_functions_match_the_exact_block_sum(seed, pattern):
    g = torch.Generator().manual_seed(seed)
    k = 2 + seed % 3
    probs = torch.rand(k, k, generator=g, dtype=F64)
    step = StepGraphon((probs + probs.T) / 2, sizes=0.2 + torch.rand(k, generator=g, dtype=F64))
    exact = graphon_density(pattern, step)
    assert exact.bound and exact.error == 0.0
    est = graphon_density(pattern, AnalyticGraphon(lambda x, y: step(x, y), name="plain"))
    gap = abs(est.value - exact.value)
    assert gap <= 1e-12 and est.error + 1e-14 >= gap


def test_step_graphon_with_a_callable_signal_uses_its_boundaries():
    step = StepGraphon([[0.9, 0.2], [0.2, 0.6]], sizes=[0.3, 0.7])
    sig = GraphonSignal(step, lambda x: 1 + x)
    # Edge with exponents (1, 1): sum_kl B_kl (int_{I_k} (1 + x)) (int_{I_l} (1 + x)).
    mass = torch.tensor([0.3 + 0.3**2 / 2, 0.7 + (1 - 0.3**2) / 2], dtype=F64)
    exact = float(mass @ step.probs @ mass)
    est = graphon_density("edge", sig, exponents=[1, 1])
    assert abs(est.value - exact) < 1e-14


# --- endpoint singularities: the warped rule ------------------------------------------------


def test_endpoint_singularity_reaches_full_accuracy():
    # int int (x y)^0.7 = (1/1.7)^2; the plain rule stalls near 1e-8, the warped one does not.
    est = graphon_density("edge", AnalyticGraphon(lambda x, y: (x * y) ** 0.7))
    assert abs(est.value - 1.7**-2) < 1e-13 and est.error >= abs(est.value - 1.7**-2)
    # Kinked and singular at 0 at once: exp(-max(x, y)^0.75) on the edge, against a fine
    # reference computed on the ordered simplex x < y: 2 int_0^1 y exp(-y^0.75) dy.
    w = make_graphon("exp_max")
    reference = graphon_density("edge", w)
    y = torch.linspace(0, 1, 2_000_001, dtype=F64)
    g = 2 * y * torch.exp(-(y**0.75))
    simpson = float((g[0] + g[-1] + 4 * g[1:-1:2].sum() + 2 * g[2:-1:2].sum()) / (3 * 2_000_000))
    assert abs(reference.value - simpson) < 1e-10


# --- refusals and declared structure ------------------------------------------------------


def test_bad_kinks_and_breaks_are_refused_with_the_choices():
    with pytest.raises(GraphDataError, match="kinks: expected one of 'auto', 'none', 'diagonal'"):
        AnalyticGraphon(lambda x, y: x * y, kinks="yes")
    with pytest.raises(GraphDataError, match=r"breaks: expected points strictly inside \(0, 1\)"):
        AnalyticGraphon(lambda x, y: x * y, breaks=[0.5, 1.0])
    with pytest.raises(GraphDataError, match="kinks: expected one of"):
        graphon_density("edge", make_graphon("product"), kinks="max")


def test_declared_breaks_are_used_without_probing():
    step = StepGraphon([[0.9, 0.1], [0.1, 0.5]], sizes=[0.25, 0.75])
    w = AnalyticGraphon(lambda x, y: step(x, y), kinks="none", breaks=[0.25])
    assert (
        abs(graphon_density("triangle", w).value - graphon_density("triangle", step).value) < 1e-14
    )


def test_the_simplex_rule_refuses_large_patterns_and_costs():
    w = AnalyticGraphon(_one_minus_max, kinks="diagonal")
    big = as_pattern([(i, i + 1) for i in range(9)])  # 10 vertices
    with pytest.raises(GraphDataError, match="too many for the ordered-simplex rule"):
        graphon_density(big, w)
    with pytest.raises(GraphDataError, match="over max_cost"):
        graphon_density("k4", w, max_cost=10.0)


def test_a_budget_for_one_simplex_order_is_refused_not_an_infinite_error():
    # t(triangle, exp(-|x - y|)) = 6 int_{x<y<z} exp(-2 (z - x)) = 3 e^-2 (closed form). A
    # max_cost that fits only q = 6 gave that one value with error=inf (no second order to
    # estimate it from): a non-finite result. It is refused, naming the budget that suffices.
    w = AnalyticGraphon(lambda x, y: torch.exp(-(x - y).abs()), kinks="diagonal")
    with pytest.raises(GraphDataError, match=r"max_cost: .* only at 6 nodes per axis") as info:
        graphon_density("triangle", w, max_cost=3000.0)
    needed = float(str(info.value).split("raise max_cost to at least ")[1].split(",")[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # two orders, not yet agreeing to 1e-12: it says so
        est = graphon_density("triangle", w, max_cost=needed * 1.01)
    assert math.isfinite(est.error) and abs(est.value - 3 * math.exp(-2)) <= est.error + 1e-15


def test_the_anti_diagonal_warns_that_it_is_not_followed():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = graphon_density("edge", AnalyticGraphon(lambda x, y: (x + y - 1).abs()))
    assert any("neither the diagonal nor a line" in str(w.message) for w in caught)
    assert abs(est.value - 1 / 3) <= max(est.error, 1e-6)  # int int |x + y - 1| = 1/3
