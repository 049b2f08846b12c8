"""Fault injection for graphon inputs and numeric options (issue 15, "wrong numbers").

Every probe feeds a value the old code let through to a result (NaN block sizes, a graphon that
is NaN or outside [0, 1] between its probe points, NaN signals, overflowing densities, NaN
options) and asserts a clear error naming the argument, or the exact value where a safe
computation exists.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from graphdata.errors import GraphDataError
from graphon import (
    AnalyticGraphon,
    GraphonSignal,
    StepGraphon,
    cut_norm,
    graphon_density,
    graphon_wl_refine,
    hom_density,
    inj_density,
    make_graphon,
    monte_carlo_density,
    rooted_hom_density,
    sample_graphs,
    wl_refine,
)
from graphon.families import erdos_renyi, sbm

NON_FINITE = [math.nan, math.inf, -math.inf]
# The probe grid of AnalyticGraphon has points k/64; this band lies strictly between 19/64 and
# 20/64, so the constructor's check cannot see it.
LOW, HIGH = 19 / 64 + 5e-4, 20 / 64 - 5e-4


def _band(value: float, name: str) -> AnalyticGraphon:
    """x * y, except ``value`` where x or y falls in the hidden band."""

    def fn(x, y):
        inside = ((x > LOW) & (x < HIGH)) | ((y > LOW) & (y < HIGH))
        return torch.where(inside, torch.full_like(x, value), x * y)

    return AnalyticGraphon(fn, name=name)


# --- 1. step graphons built from arrays ---------------------------------------------------


@pytest.mark.parametrize("bad", [math.nan, math.inf, -1.0, 0.0])
def test_step_graphon_refuses_bad_block_sizes(bad):
    with pytest.raises(GraphDataError, match=r"sizes: expected 2 finite positive block sizes"):
        StepGraphon([[0.5, 0.1], [0.1, 0.5]], sizes=[1.0, bad])


def test_step_graphon_refuses_sizes_whose_sum_overflows():
    with pytest.raises(GraphDataError, match="sizes: the block sizes sum to inf"):
        StepGraphon([[0.5, 0.1], [0.1, 0.5]], sizes=[1e308, 1e308])


@pytest.mark.parametrize("bad", [*NON_FINITE, 1.5, -0.1])
def test_step_graphon_refuses_bad_block_values(bad):
    with pytest.raises(GraphDataError, match="probs: expected"):
        StepGraphon([[0.5, bad], [bad, 0.5]])


@pytest.mark.parametrize("bad", NON_FINITE)
def test_step_signal_refuses_non_finite_values(bad):
    with pytest.raises(GraphDataError, match="signal: expected finite block values"):
        GraphonSignal(sbm(2, 0.9, 0.1), torch.tensor([1.0, bad]))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(1e-6, 1e6), min_size=1, max_size=5))
def test_step_graphon_accepts_finite_positive_sizes(sizes):
    k = len(sizes)
    w = StepGraphon(torch.full((k, k), 0.5), sizes=sizes)
    assert torch.isfinite(w.measures).all() and abs(float(w.measures.sum()) - 1.0) < 1e-12
    # An SBM with constant B has every density equal to the ER value, whatever the sizes.
    assert graphon_density("triangle", w).value == pytest.approx(0.125, rel=1e-12)


# --- 2. a callable graphon that misbehaves between the probe points -----------------------


@pytest.mark.parametrize("value", [math.nan, 1.5, -0.5])
def test_hidden_band_passes_the_probe_check_but_not_the_consumers(value):
    w = _band(value, "band")  # the constructor's probe grid misses the band
    where = r"'band' returned W\(x, y\) = .* at x=.*, y="
    with pytest.raises(GraphDataError, match=where + r".*at the sampled latents"):
        sample_graphs(w, 64, latents="midpoint", seed=0)  # midpoint 19.5/64 is in the band
    with pytest.raises(GraphDataError, match=where + r".*at the Monte Carlo points"):
        monte_carlo_density("edge", w, num_samples=20_000, seed=0)
    # Probing for kinks scans slices at 4097 points, so the band is met there first.
    with pytest.raises(GraphDataError, match=where + r".*while probing kinks"):
        graphon_density("edge", w, order=128)
    with pytest.raises(GraphDataError, match=where + r".*by from_graphon"):
        StepGraphon.from_graphon(w, 64)
    with pytest.raises(GraphDataError, match=where + r".*on the WL grid"):
        graphon_wl_refine([w], resolution=64)


def test_the_error_names_a_point_of_the_band_and_its_value():
    with pytest.raises(GraphDataError) as info:
        sample_graphs(_band(1.5, "band"), 64, latents="midpoint", seed=0)
    text = str(info.value)
    x = float(text.split("x=")[1].split(",")[0])
    y = float(text.split("y=")[1].split(" ")[0])
    assert "W(x, y) = 1.5" in text
    assert LOW < x < HIGH or LOW < y < HIGH


def test_a_callable_signal_with_hidden_nan_is_refused_where_evaluated():
    def f(x):
        return torch.where((x > LOW) & (x < HIGH), torch.full_like(x, math.nan), x)

    ws = GraphonSignal(make_graphon("product"), f, name="sig")  # 17-point probe misses it
    with pytest.raises(GraphDataError, match=r"signal: graphon-signal 'sig' returned a NaN"):
        sample_graphs(ws, 64, latents="midpoint", seed=0)
    with pytest.raises(GraphDataError, match=r"signal: .*while probing kinks"):
        graphon_density("edge", ws, exponents=[[1], [0]], order=128)


def test_well_behaved_graphons_still_give_the_closed_forms():
    w = make_graphon("product")
    assert graphon_density("triangle", w).value == pytest.approx(1 / 27, abs=1e-12)
    est = monte_carlo_density("edge", w, num_samples=20_000, seed=0)
    assert abs(est.value - 0.25) < 4 * est.error


# --- 3. WL signals --------------------------------------------------------------------------


@pytest.mark.parametrize("bad", NON_FINITE)
def test_wl_refine_refuses_non_finite_signals(bad):
    adj = torch.ones(3, 3) - torch.eye(3)
    with pytest.raises(GraphDataError, match="signals: expected finite values, got 1 NaN or inf"):
        wl_refine([adj, adj], [torch.tensor([1.0, 2.0, bad]), torch.tensor([1.0, 2.0, 3.0])])


def test_wl_refine_refuses_non_finite_graphs():
    adj = torch.ones(3, 3)
    adj[0, 1] = adj[1, 0] = math.nan
    with pytest.raises(GraphDataError, match="graphs: expected finite entries"):
        wl_refine([adj])


@pytest.mark.parametrize(("name", "value"), [("decimals", -1), ("decimals", 2.5), ("max_iter", 0)])
def test_wl_refine_refuses_bad_integer_options(name, value):
    adj = torch.ones(3, 3)
    with pytest.raises(GraphDataError, match=f"{name}: expected an int"):
        wl_refine([adj], **{name: value})


# --- 4. overflowing homomorphism densities --------------------------------------------------


def test_hom_density_overflow_raises_instead_of_inf():
    a = torch.full((5, 5), 1e200, dtype=torch.float64)  # t(triangle) = 1e600
    with pytest.raises(GraphDataError, match=r"hom_density: the density overflows torch.float64"):
        hom_density("triangle", a)
    with pytest.raises(GraphDataError, match=r"inj_density: the density overflows"):
        inj_density("triangle", a)
    with pytest.raises(GraphDataError, match=r"rooted_hom_density: the density overflows"):
        rooted_hom_density("triangle", a, root=0)


def test_float32_overflow_suggests_float64_and_float64_gives_the_value():
    a = torch.full((5, 5), 1e15)  # t(triangle) = 1e45: beyond float32, fine in float64
    with pytest.raises(GraphDataError, match=r"overflows torch.float32.*adj.double\(\)"):
        hom_density("triangle", a)
    assert float(hom_density("triangle", a.double())) == pytest.approx(1e45, rel=1e-6)


def test_intermediate_overflow_is_computed_exactly_by_scaling():
    # x^2 = 1e400 overflows in every vertex factor; the density x^2 * A = 1e250 does not.
    a = torch.full((4, 4), 1e-150, dtype=torch.float64)
    x = torch.full((4,), 1e200, dtype=torch.float64)
    value = hom_density("edge", a, x, exponents=[[2], [0]])
    assert float(value) == pytest.approx(1e250, rel=1e-12)
    rooted = rooted_hom_density("edge", a, x, exponents=[[2], [0]], root=1)
    assert torch.allclose(rooted, torch.full((4,), 1e250, dtype=torch.float64), rtol=1e-12)
    # Injective: every ordered pair of distinct nodes weighs 1e-150 * 1e400.
    assert float(inj_density("edge", a, x, exponents=[[2], [0]])) == pytest.approx(1e250)


@settings(max_examples=25, deadline=None)
@given(st.floats(1e-3, 1e3), st.integers(0, 2**16))
def test_density_homogeneity_survives_the_scaling(c, seed):
    gen = torch.Generator().manual_seed(seed)
    a = torch.rand(6, 6, generator=gen, dtype=torch.float64)
    a = (a + a.T) / 2
    base = float(hom_density("path3", a))
    assert float(hom_density("path3", c * a)) == pytest.approx(c**2 * base, rel=1e-9)


@pytest.mark.parametrize("bad", [*NON_FINITE, 0.0, -1.0])
def test_max_cost_must_be_a_positive_finite_budget(bad):
    # NaN used to disable the budget silently (cost > nan is False).
    with pytest.raises(GraphDataError, match="max_cost: expected a finite number > 0"):
        hom_density("triangle", torch.ones(4, 4), max_cost=bad)
    with pytest.raises(GraphDataError, match="max_cost: expected a finite number > 0"):
        graphon_density("triangle", erdos_renyi(0.5), max_cost=bad)


# --- 6. numeric options ---------------------------------------------------------------------

FLOAT_OPTIONS = [
    ("confidence", lambda v: monte_carlo_density("edge", erdos_renyi(), confidence=v)),
    ("p", lambda v: erdos_renyi(v)),
    ("q", lambda v: sbm(2, 0.5, v)),
    ("width", lambda v: make_graphon("narrow", width=v)),
    ("atol", lambda v: AnalyticGraphon(lambda x, y: x * y, atol=v)),
    ("tol", lambda v: cut_norm(torch.ones(3, 3), tol=v)),
]


@pytest.mark.parametrize(("name", "call"), FLOAT_OPTIONS, ids=[n for n, _ in FLOAT_OPTIONS])
@settings(max_examples=10, deadline=None)
@given(bad=st.sampled_from(NON_FINITE))
def test_non_finite_float_options_are_always_refused(name, call, bad):
    with pytest.raises(GraphDataError, match=f"{name}: expected a finite number.*got {bad!r}"):
        call(bad)


@settings(max_examples=25, deadline=None)
@given(st.floats(0.01, 0.99), st.floats(0.0, 1.0))
def test_in_range_options_are_accepted(confidence, p):
    est = monte_carlo_density("edge", erdos_renyi(p), num_samples=8, confidence=confidence, seed=0)
    assert est.value == pytest.approx(p, abs=1e-12) and est.error == pytest.approx(0.0, abs=1e-12)


INT_OPTIONS = [
    ("n", lambda v: sample_graphs(erdos_renyi(), v)),
    ("num_samples", lambda v: monte_carlo_density("edge", erdos_renyi(), num_samples=v)),
    ("order", lambda v: graphon_density("edge", make_graphon("product"), order=v)),
    ("resolution", lambda v: StepGraphon.from_graphon(make_graphon("product"), v)),
    ("seed", lambda v: sample_graphs(erdos_renyi(), 3, seed=v)),
    ("num_blocks", lambda v: sbm(v)),
    ("max_iter", lambda v: cut_norm(torch.ones(16, 16), method="sdp", max_iter=v)),
]


@pytest.mark.parametrize(("name", "call"), INT_OPTIONS, ids=[n for n, _ in INT_OPTIONS])
@pytest.mark.parametrize("bad", [math.nan, math.inf, 2.5, -1, True])
def test_integer_options_refuse_floats_and_out_of_range(name, call, bad):
    with pytest.raises(GraphDataError, match=f"{name}: expected an int"):
        call(bad)


@pytest.mark.parametrize("bad", [math.nan, -0.5])
def test_cut_norm_refuses_bad_node_weights(bad):
    # NaN measures used to pass: nan < 0 is False and |nan - 1| > 1e-9 is False.
    with pytest.raises(GraphDataError, match="node_weights: expected 2 non-negative measures"):
        cut_norm(torch.ones(2, 2), node_weights=torch.tensor([1.5, bad]))
