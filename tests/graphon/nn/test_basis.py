import itertools

import pytest
import torch

from graphdata.errors import GraphDataError
from graphon.nn._partitions import bell, set_partitions
from graphon.nn.basis import apply_basis, basis_size, equivariant_basis

IGN_COUNTS = [((1, 1), 2), ((1, 2), 5), ((2, 1), 5), ((2, 2), 15), ((2, 0), 2), ((3, 3), 203)]
IWN_COUNTS = [
    ((1, 1), 2), ((2, 2), 7), ((3, 3), 34), ((4, 4), 209),
    ((2, 1), 3), ((1, 2), 3), ((2, 0), 1), ((0, 2), 1),
]  # fmt: skip


@pytest.mark.parametrize(("orders", "count"), IGN_COUNTS)
def test_ign_counts_are_bell_numbers(orders, count):
    assert len(equivariant_basis(*orders, basis="ign")) == count
    assert basis_size(*orders, basis="ign") == count == bell(sum(orders))


@pytest.mark.parametrize(("orders", "count"), IWN_COUNTS)
def test_iwn_counts_match_partial_bijections(orders, count):
    elements = equivariant_basis(*orders, basis="iwn")
    assert len(elements) == count == basis_size(*orders, basis="iwn")
    assert all(not e.reads_diagonal and not e.writes_diagonal for e in elements)


def test_set_partitions_are_distinct_and_counted():
    for size in range(7):
        parts = set_partitions(size)
        assert len(parts) == len(set(parts)) == bell(size)


def test_iwn_2_to_2_is_the_herbst_jegelka_operator_list():
    # models/iwn.py of Higher-Order-WNNs: ij->ik, ij->jk, ij->ki, ij->kj, ij->ij, ij->ji, ij->kl.
    ours = {e.equation for e in equivariant_basis(2, 2)}
    assert ours == {"ab->ac", "ab->bc", "ab->ca", "ab->cb", "ab->ab", "ab->ba", "ab->cd"}
    assert {e.equation for e in equivariant_basis(2, 1)} == {"ab->a", "ab->b", "ab->c"}
    assert {e.equation for e in equivariant_basis(1, 2)} == {"a->ab", "a->ba", "a->bc"}


def test_2_to_2_operators_against_closed_forms():
    g = torch.Generator().manual_seed(0)
    x = torch.rand(1, 1, 4, 4, generator=g, dtype=torch.float64)
    u = x[0, 0]
    ones = torch.ones(4, 4, dtype=torch.float64)
    rows, cols = u.mean(1), u.mean(0)  # r_a = mean_j U_aj, c_b = mean_i U_ib
    expected = {
        "ab->ab": u,
        "ab->ba": u.T,
        "ab->ac": rows[:, None] * ones,
        "ab->ca": rows[None, :] * ones,
        "ab->bc": cols[:, None] * ones,
        "ab->cb": cols[None, :] * ones,
        "ab->cd": u.mean() * ones,
        "aa->aa": torch.diag(torch.diag(u)),
        "ab->cc": u.mean() * torch.eye(4, dtype=torch.float64),
        "aa->bc": torch.diag(u).mean() * ones,
    }
    elements = {e.equation: e for e in equivariant_basis(2, 2, basis="ign")}
    for equation, value in expected.items():
        got = apply_basis(x, [elements[equation]])[0, 0, 0]
        torch.testing.assert_close(got, value, msg=equation)
    # Unnormalised: sums instead of means, one factor n per summed index.
    total = apply_basis(x, [elements["ab->cd"]], normalize=False)[0, 0, 0]
    torch.testing.assert_close(total, u.sum() * ones)


def _permutation_matrix(perm: list[int], order: int) -> torch.Tensor:
    p = torch.eye(len(perm), dtype=torch.float64)[perm]  # (P v)_i = v_{perm[i]}
    out = torch.ones(1, 1, dtype=torch.float64)
    for _ in range(order):
        out = torch.kron(out, p)
    return out


def _operator_matrix(element, n: int, normalize: bool = True) -> torch.Tensor:
    """The [n^l, n^k] matrix of one basis element, applied to the standard basis."""
    k, ell = element.in_order, element.out_order
    eye = torch.eye(n**k, dtype=torch.float64).reshape((n**k, 1) + (n,) * k)
    mask = torch.ones(n**k, n, dtype=torch.bool)
    out = apply_basis(eye, [element], mask, normalize=normalize)  # [n^k, 1, 1, n, ..., n]
    return out.reshape(n**k, n**ell).T


@pytest.mark.parametrize("orders", [(1, 1), (1, 2), (2, 1), (2, 2)])
def test_basis_spans_the_commutant_at_n5(orders):
    k, ell = orders
    n = 5
    gens = [[1, 0, 2, 3, 4], [1, 2, 3, 4, 0]]  # a transposition and an n-cycle generate S_n
    # L is equivariant iff (P_l kron P_k) vec(L) = vec(L) for both generators (row-major vec).
    system = torch.cat(
        [
            torch.kron(_permutation_matrix(g, ell), _permutation_matrix(g, k))
            - torch.eye(n ** (k + ell), dtype=torch.float64)
            for g in gens
        ]
    )
    # Null-space dimension from the spectrum of the normal matrix (faster than an SVD).
    spectrum = torch.linalg.eigvalsh(system.T @ system)
    commutant_dim = int((spectrum < 1e-9).sum())
    ign = torch.stack(
        [_operator_matrix(e, n).reshape(-1) for e in equivariant_basis(*orders, basis="ign")]
    )
    iwn = torch.stack([_operator_matrix(e, n).reshape(-1) for e in equivariant_basis(*orders)])
    assert commutant_dim == len(ign) == bell(k + ell)
    assert int(torch.linalg.matrix_rank(ign)) == len(ign)  # independent
    assert int(torch.linalg.matrix_rank(iwn)) == len(iwn)
    assert float((system @ ign.T).abs().max()) < 1e-12  # every element is equivariant
    # Together with the commutant's dimension: the IGN basis spans it exactly.
    assert int(torch.linalg.matrix_rank(torch.cat([ign, iwn]))) == commutant_dim


def test_padding_matches_the_graph_alone():
    g = torch.Generator().manual_seed(1)
    small = torch.rand(1, 2, 3, 3, generator=g, dtype=torch.float64)
    padded = torch.zeros(1, 2, 5, 5, dtype=torch.float64)
    padded[:, :, :3, :3] = small
    mask = torch.tensor([[True, True, True, False, False]])
    elements = equivariant_basis(2, 2, basis="ign")
    alone = apply_basis(small, elements)
    with_pad = apply_basis(padded, elements, mask)
    torch.testing.assert_close(with_pad[..., :3, :3], alone)
    assert float(with_pad[..., 3:, :].abs().max()) == 0.0


def test_elements_are_permutation_equivariant_for_order_3():
    g = torch.Generator().manual_seed(2)
    x = torch.rand(1, 1, 4, 4, 4, generator=g, dtype=torch.float64)
    perm = torch.tensor([2, 0, 3, 1])
    px = x[:, :, perm][:, :, :, perm][:, :, :, :, perm]
    elements = equivariant_basis(3, 2, basis="ign")
    out, pout = apply_basis(x, elements), apply_basis(px, elements)
    torch.testing.assert_close(pout, out[..., perm, :][..., perm])


@pytest.mark.parametrize(
    ("args", "match"),
    [((5, 2), "in_order: expected a tensor order in 0..4"), ((2, -1), "out_order")],
)
def test_orders_outside_range_raise(args, match):
    with pytest.raises(GraphDataError, match=match):
        equivariant_basis(*args)


def test_unknown_basis_and_bad_inputs_raise():
    with pytest.raises(GraphDataError, match="basis: expected one of"):
        equivariant_basis(2, 2, basis="full")
    with pytest.raises(GraphDataError, match="equal node axes"):
        apply_basis(torch.zeros(1, 1, 3, 4), equivariant_basis(2, 2))
    mixed = equivariant_basis(2, 2)[:1] + equivariant_basis(2, 1)[:1]
    with pytest.raises(GraphDataError, match="one \\(in_order, out_order\\) pair"):
        apply_basis(torch.zeros(1, 1, 3, 3), mixed)


def test_partition_strings_are_restricted_growth():
    for labels in itertools.chain.from_iterable(set_partitions(m) for m in range(6)):
        assert all(labels[i] <= max(labels[:i], default=-1) + 1 for i in range(len(labels)))
