import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from graphdata.errors import GraphDataError
from graphon.cut import cut_norm
from graphon.distance import cut_distance
from graphon.families import erdos_renyi, sbm
from graphon.graphons import StepGraphon
from graphon.sampling import sample_graphs

F64 = torch.float64
GROTHENDIECK = 1.7823


def brute_force_cut_norm(a):
    """max over all S and all T of |sum_{S x T} a| / n^2, both sets enumerated."""
    n = a.size(0)
    codes = torch.arange(2**n)
    subsets = ((codes[:, None] >> torch.arange(n)) & 1).to(a.dtype)  # [2^n, n]
    return float((subsets @ a @ subsets.T).abs().max()) / n**2


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 8), seed=st.integers(0, 10_000))
def test_exact_cut_norm_matches_brute_force_over_s_and_t(n, seed):
    a = torch.randn(n, n, generator=torch.Generator().manual_seed(seed), dtype=F64)
    res = cut_norm(a, method="exact")
    assert res.value == pytest.approx(brute_force_cut_norm(a), rel=1e-12, abs=1e-15)
    attained = abs(float(res.rows.to(F64) @ a @ res.cols.to(F64))) / n**2
    assert attained == pytest.approx(res.value, rel=1e-12, abs=1e-15)
    assert res.upper == res.value and res.method == "exact"


def test_closed_form_cut_norms(device):
    assert cut_norm(torch.ones(5, 5, device=device)).value == pytest.approx(1.0)
    signs = torch.tensor([[1.0, -1.0], [-1.0, 1.0]], device=device)
    assert cut_norm(signs).value == pytest.approx(0.25)
    g = torch.Generator().manual_seed(2)
    a = torch.randn(5, 5, generator=g, dtype=F64).to(device)
    blow = a.repeat_interleave(2, 0).repeat_interleave(2, 1)  # same step function
    assert cut_norm(blow).value == pytest.approx(cut_norm(a).value, rel=1e-12)
    w = torch.tensor([0.5, 0.25, 0.25], dtype=F64, device=device)
    b = torch.randn(3, 3, generator=g, dtype=F64).to(device)
    expanded = b[[0, 0, 1, 2]][:, [0, 0, 1, 2]]  # block 0 has measure 1/2
    assert cut_norm(b, node_weights=w).value == pytest.approx(cut_norm(expanded).value, rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_sdp_brackets_the_exact_value(seed):
    g = torch.Generator().manual_seed(seed)
    n = 6 + seed
    a = torch.randn(n, n, generator=g, dtype=F64)
    if seed % 2:
        a = (torch.rand(n, n, generator=g, dtype=F64) < 0.5).to(F64) - 0.5
    exact = cut_norm(a, method="exact").value
    sdp = cut_norm(a, method="sdp", seed=seed)
    assert sdp.method == "sdp"
    assert sdp.value <= exact + 1e-12 <= sdp.upper + 2e-12
    assert sdp.upper <= GROTHENDIECK * exact
    attained = abs(float(sdp.rows.to(F64) @ a @ sdp.cols.to(F64))) / n**2
    assert attained == pytest.approx(sdp.value, rel=1e-12)


def test_two_independent_er_graphs_are_far_in_l1_but_close_in_cut_distance():
    s = sample_graphs(erdos_renyi(0.5), 100, batch_size=2, seed=1, dtype=F64)
    a, b = s.adj
    assert float((a - b).abs().mean()) == pytest.approx(0.5, abs=0.03)
    res = cut_distance(a, b, align="identity")
    assert res.method == "sdp"
    assert res.lower <= res.value <= res.upper < 0.08


def test_cut_distance_of_relabelled_graphs_and_blow_ups_is_zero():
    g = torch.Generator().manual_seed(3)
    a = torch.rand(5, 5, generator=g, dtype=F64)
    a = (a + a.T) / 2
    perm = torch.randperm(5, generator=g)
    shuffled = a[perm][:, perm]
    assert cut_distance(a, shuffled, align="identity").upper > 0.01
    res = cut_distance(a, shuffled, align="permutations")
    assert res.upper == pytest.approx(0.0, abs=1e-15)
    assert cut_distance(a, shuffled, align="degree").upper == pytest.approx(0.0, abs=1e-15)
    blow = a.repeat_interleave(3, 0).repeat_interleave(3, 1)
    assert cut_distance(a, blow, align="identity").upper == pytest.approx(0.0, abs=1e-15)
    split = StepGraphon([[0.9, 0.9, 0.1], [0.9, 0.9, 0.1], [0.1, 0.1, 0.9]], [1, 1, 2])
    assert cut_distance(sbm(2, 0.9, 0.1), split, align="identity").upper == pytest.approx(0.0)


def test_counting_lemma_lower_bound_is_below_every_alignment():
    two = StepGraphon([[0.9, 0.1], [0.1, 0.9]])
    flat = erdos_renyi(0.5)
    res = cut_distance(two, flat, align="permutations")
    # the difference is +-0.4 on a 2x2 checkerboard of equal blocks: S = T = block 0 gives 0.1
    assert res.upper == pytest.approx(0.1) and res.method == "exact"
    # both are 1/2-regular, so trees agree; the triangle gives (0.189 - 0.125) / 3
    # (t(K3) = (2 * 0.9^3 + 6 * 0.9 * 0.1^2) / 8 = 0.189), the 4-cycle only 0.0256 / 4
    assert res.lower == pytest.approx((0.189 - 0.125) / 3, rel=1e-9)
    assert 0 < res.lower <= res.upper


def test_cut_errors():
    with pytest.raises(GraphDataError, match="at most 20 nodes"):
        cut_norm(torch.zeros(21, 21), method="exact")
    with pytest.raises(GraphDataError, match="summing to 1"):
        cut_norm(torch.zeros(3, 3), node_weights=torch.ones(3))
    with pytest.raises(GraphDataError, match="square matrix"):
        cut_norm(torch.zeros(2, 3))
    with pytest.raises(GraphDataError, match="method"):
        cut_norm(torch.zeros(2, 2), method="greedy")
    with pytest.raises(GraphDataError, match=r"\[0, 1\]"):
        cut_distance(2 * torch.ones(3, 3), torch.ones(3, 3))
    with pytest.raises(GraphDataError, match="align='degree'"):
        cut_distance(torch.ones(3, 3), torch.ones(8, 8), align="permutations")
    with pytest.raises(GraphDataError, match="at most 15 blocks"):
        cut_distance(torch.ones(12, 12), torch.ones(5, 5), align="permutations")


def test_a_generator_alone_replaces_the_default_seed():
    a = torch.randn(16, 16, generator=torch.Generator().manual_seed(1), dtype=F64)
    by_gen = cut_norm(a, method="sdp", generator=torch.Generator().manual_seed(0))
    by_seed = cut_norm(a, method="sdp", seed=0)
    assert by_gen.value == by_seed.value and by_gen.upper == by_seed.upper
    with pytest.raises(GraphDataError, match="seed, generator: pass at most one"):
        cut_norm(a, method="sdp", seed=3, generator=torch.Generator())
    with pytest.raises(GraphDataError, match="generator: expected a torch.Generator, got int"):
        cut_norm(a, method="sdp", seed=None, generator=7)
