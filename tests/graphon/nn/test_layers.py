import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from graphdata.errors import GraphDataError
from graphon.nn._contract import mask_product, write
from graphon.nn.basis import apply_basis
from graphon.nn.layers import EquivariantLinear

PAIRS = [(0, 2), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2), (2, 3), (3, 1), (3, 3)]


def _layer(k, ell, basis, seed=0, channels=(3, 4)):
    torch.manual_seed(seed)  # initialisation only; the test draws its data from a generator
    layer = EquivariantLinear(*channels, k, ell, basis=basis).double()
    with torch.no_grad():
        layer.bias.normal_(generator=torch.Generator().manual_seed(seed))
    return layer


@pytest.mark.parametrize("basis", ["iwn", "ign"])
@pytest.mark.parametrize(("k", "ell"), PAIRS)
def test_layer_equals_materialised_reference(basis, k, ell):
    # Oracle: every basis output materialised (Maron et al.'s form), then the channel sum.
    layer = _layer(k, ell, basis)
    g = torch.Generator().manual_seed(k * 10 + ell)
    mask = torch.tensor([[True] * 5, [True, True, True, False, False]])
    x = torch.rand((2, 3) + (5,) * k, generator=g, dtype=torch.float64)
    if k:
        x = x * mask_product(mask, k).unsqueeze(1)
    ops = apply_basis(x, layer.elements, mask)  # [B, C_in, E, N, ...]
    ref = torch.einsum("bce...,cfe->bf...", ops, layer.weight)
    bias = apply_basis(torch.ones(2, 1, dtype=torch.float64), layer.bias_elements, mask)
    ref = ref + torch.einsum("bce...,fe->bf...", bias, layer.bias)
    torch.testing.assert_close(layer(x, mask), ref)


@settings(max_examples=25, deadline=None)
@given(
    data=st.data(),
    pair=st.sampled_from([(2, 2), (2, 1), (1, 2), (2, 0), (3, 3)]),
    basis=st.sampled_from(["iwn", "ign"]),
)
def test_equivariance_under_random_permutations(data, pair, basis):
    k, ell = pair
    n = data.draw(st.integers(2, 6 if k < 3 else 4), label="n")
    perm = torch.tensor(data.draw(st.permutations(range(n)), label="perm"))
    seed = data.draw(st.integers(0, 2**16), label="seed")
    layer = _layer(k, ell, basis, seed=seed % 7)
    x = torch.rand(
        (2, 3) + (n,) * k, generator=torch.Generator().manual_seed(seed), dtype=torch.float64
    )

    def permute(t, order):
        for axis in range(2, 2 + order):
            t = t.index_select(axis, perm)
        return t

    torch.testing.assert_close(layer(permute(x, k)), permute(layer(x), ell))


@pytest.mark.parametrize("basis", ["iwn", "ign"])
def test_padded_graph_gives_the_output_alone(basis):
    layer = _layer(2, 2, basis)
    g = torch.Generator().manual_seed(3)
    small = torch.rand(1, 3, 4, 4, generator=g, dtype=torch.float64)
    other = torch.rand(1, 3, 6, 6, generator=g, dtype=torch.float64)
    padded = torch.zeros(1, 3, 6, 6, dtype=torch.float64)
    padded[..., :4, :4] = small
    x = torch.cat([padded, other])
    mask = torch.tensor([[True] * 4 + [False] * 2, [True] * 6])
    with torch.no_grad():
        out = layer(x, mask)
        torch.testing.assert_close(out[:1, :, :4, :4], layer(small))
        torch.testing.assert_close(out[1:], layer(other))
    assert float(out[0, :, 4:].abs().max()) == 0.0 and float(out[0, :, :, 4:].abs().max()) == 0.0


def test_iwn_means_and_ign_sums_scale_as_documented():
    x = torch.ones(1, 1, 4, 4, dtype=torch.float64)
    mean = EquivariantLinear(1, 1, 2, 0, bias=False).double()
    total = EquivariantLinear(1, 1, 2, 0, basis="ign", normalize=False, bias=False).double()
    with torch.no_grad():
        mean.weight.fill_(1.0)
        total.weight.copy_(torch.tensor([[[0.0, 1.0]]]))  # elements: aa-> (trace), ab-> (sum)
    assert [e.equation for e in total.elements] == ["aa->", "ab->"]
    assert mean(x).item() == 1.0 and total(x).item() == 16.0


def test_parameters_are_registered_and_follow_the_module(device):
    layer = EquivariantLinear(2, 3, 2, 2, basis="ign")
    names = {name for name, _ in layer.named_parameters()}
    assert names == {"weight", "bias"}
    assert tuple(layer.weight.shape) == (2, 3, 15) and tuple(layer.bias.shape) == (3, 2)
    layer = layer.to(device=device, dtype=torch.float64)
    x = torch.rand(2, 2, 5, 5, device=device, dtype=torch.float64, requires_grad=True)
    layer(x).square().sum().backward()
    assert layer.weight.grad.device.type == device.type and x.grad is not None
    assert float(layer.bias.grad.abs().sum()) > 0


def test_reset_parameters_with_a_generator_is_deterministic():
    a, b = EquivariantLinear(4, 4, 2, 2), EquivariantLinear(4, 4, 2, 2)
    a.reset_parameters(torch.Generator().manual_seed(5))
    b.reset_parameters(torch.Generator().manual_seed(5))
    assert torch.equal(a.weight, b.weight) and not a.bias.detach().any()


def test_bad_inputs_raise_clear_errors():
    layer = EquivariantLinear(2, 3, 2, 2)
    with pytest.raises(GraphDataError, match="expected equal \\(square\\) node axes"):
        layer(torch.zeros(1, 2, 3, 4))
    with pytest.raises(GraphDataError, match="expected 2 channels in dim 1, got 5"):
        layer(torch.zeros(1, 5, 3, 3))
    with pytest.raises(GraphDataError, match="order 2"):
        layer(torch.zeros(1, 2, 3))
    with pytest.raises(
        GraphDataError, match="mask: expected a bool tensor \\[B, N\\] = \\[1, 3\\]"
    ):
        layer(torch.zeros(1, 2, 3, 3), torch.ones(1, 4, dtype=torch.bool))
    with pytest.raises(GraphDataError, match="mask: expected a bool tensor"):
        layer(torch.zeros(1, 2, 3, 3), torch.ones(1, 3))
    with pytest.raises(GraphDataError, match="normalize: the IWN basis averages"):
        EquivariantLinear(1, 1, 2, 2, normalize=False)
    with pytest.raises(GraphDataError, match="in_order: expected a tensor order in 0..4"):
        EquivariantLinear(1, 1, 5, 2)
    with pytest.raises(GraphDataError, match="in_channels: expected a positive int"):
        EquivariantLinear(0, 1, 2, 2)
    with pytest.raises(GraphDataError, match="order-0 input needs the node mask"):
        EquivariantLinear(1, 1, 0, 2)(torch.zeros(1, 1))


@pytest.mark.parametrize("channels_last", [False, True])
def test_diagonal_write_in_both_layouts_matches_diag_embed(channels_last):
    # One block holding both output slots (the 1 -> 2 diagonal write): key ((0, 0), (True,)).
    vals = torch.rand(2, 3, 5, generator=torch.Generator().manual_seed(0))  # [B, C, N]
    want = torch.diag_embed(vals)  # [B, C, N, N]
    block = vals.movedim(1, -1) if channels_last else vals
    got = write(block, ((0, 0), (True,)), 5, 2, channels_last=channels_last)
    torch.testing.assert_close(got.movedim(-1, 1) if channels_last else got, want)
    # Order 3, slots (0, 0, 1): entries [a, a, b] = v[a, b], zero off the (0, 1) diagonal.
    mat = torch.rand(2, 3, 4, 4, generator=torch.Generator().manual_seed(1))  # [B, C, N, N]
    brute = torch.zeros(2, 3, 4, 4, 4)
    for a in range(4):
        brute[:, :, a, a, :] = mat[:, :, a, :]
    block = mat.movedim(1, -1) if channels_last else mat
    got = write(block, ((0, 0, 1), (True, True)), 4, 2, channels_last=channels_last)
    torch.testing.assert_close(got.movedim(-1, 1) if channels_last else got, brute)


def test_an_input_of_another_dtype_is_refused_by_name():
    layer = EquivariantLinear(2, 3, 2, 2)
    with pytest.raises(GraphDataError, match=r"x: expected dtype torch.float32.*got torch.float64"):
        layer(torch.rand(1, 2, 4, 4, dtype=torch.float64))
    assert layer.double()(torch.rand(1, 2, 4, 4, dtype=torch.float64)).dtype == torch.float64


def test_a_graph_without_real_nodes_is_refused_not_averaged_to_nan():
    layer = EquivariantLinear(2, 3, 2, 2)
    mask = torch.tensor([[True, True, False], [False, False, False]])
    with pytest.raises(GraphDataError, match=r"mask: graphs \[1\] have no real node"):
        layer(torch.rand(2, 2, 3, 3), mask)
    sums = EquivariantLinear(2, 3, 2, 2, basis="ign", normalize=False)
    assert bool(torch.isfinite(sums(torch.rand(2, 2, 3, 3), mask)).all())  # sums are defined


@pytest.mark.parametrize("flag", ["normalize", "bias"])
def test_flags_must_be_bools(flag):
    with pytest.raises(GraphDataError, match=f"{flag}: expected True or False, got 'no'"):
        EquivariantLinear(2, 3, 2, 2, basis="ign", **{flag: "no"})
