"""kg._regularizers: the fused N3 kernels against autograd through abs().pow(3)."""

from __future__ import annotations

import pytest
import torch

from kg._regularizers import n3_sum


@pytest.mark.parametrize("complex_rows", [False, True])
def test_n3_matches_autograd_reference(complex_rows, device):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(5, 8, generator=gen, dtype=torch.float64).to(device)
    weight = 1.7
    ours = x.clone().requires_grad_()
    (weight * n3_sum(ours, complex_rows=complex_rows)).backward()
    ref = x.clone().requires_grad_()
    values = torch.complex(*ref.chunk(2, dim=-1)) if complex_rows else ref
    (weight * values.abs().pow(3).sum()).backward()
    torch.testing.assert_close(ours.grad, ref.grad)
    torch.testing.assert_close(n3_sum(x, complex_rows=complex_rows), values.abs().pow(3).sum())


@pytest.mark.parametrize("complex_rows", [False, True])
def test_n3_gradient_is_zero_at_zero(complex_rows):
    x = torch.zeros(2, 4, requires_grad=True)
    value = n3_sum(x, complex_rows=complex_rows)
    value.backward()
    assert value.item() == 0.0 and torch.equal(x.grad, torch.zeros_like(x))


def test_row_weights_multiply_each_rows_cubes():
    x = torch.tensor([[1.0, -2.0], [3.0, 0.5]], dtype=torch.float64, requires_grad=True)
    weight = torch.tensor([2.0, 0.0], dtype=torch.float64)
    value = n3_sum(x, row_weight=weight)
    value.backward()
    assert value.item() == pytest.approx(2 * (1 + 8))
    torch.testing.assert_close(x.grad, torch.tensor([[6.0, -24.0], [0.0, 0.0]], dtype=x.dtype))


@pytest.mark.parametrize("name", ["distmult", "complex", "rotate", "rescal"])
@pytest.mark.parametrize("size", [3, 40])  # fewer ids than table rows (distinct rows), or more
def test_model_regularization_equals_the_per_triple_formula(name, size):
    # Regularising each distinct row once, weighted by its count, equals the batch formula
    # (1 / 3B) sum_b sum_x sum_i |x_i|^3 over the gathered h, r, t rows (complex moduli).
    from kg.models import MODELS

    torch.manual_seed(0)
    model = MODELS[name](9, 4, dim=4).double()
    gen = torch.Generator().manual_seed(1)
    h, t = torch.randint(9, (size,), generator=gen), torch.randint(9, (size,), generator=gen)
    r = torch.randint(4, (size,), generator=gen)

    def modulus(x):
        return torch.complex(*x.chunk(2, -1)).abs() if name in ("complex", "rotate") else x.abs()

    e = model.entity.weight
    factors = [e[h], e[t]] + ([] if name == "rotate" else [model.relation.weight[r]])
    for kind, power, scale in (("n3", 3, 3 * size), ("l2", 2, size)):
        expected = sum(modulus(x).pow(power).sum() for x in factors) / scale
        torch.testing.assert_close(model.regularization(h, r, t, kind=kind), expected)
        # Same gradients as autograd through the gathered rows.
        model.zero_grad()
        model.regularization(h, r, t, kind=kind).backward()
        tables = (model.entity.weight, model.relation.weight)
        ours = [torch.zeros_like(p) if p.grad is None else p.grad.clone() for p in tables]
        model.zero_grad()
        e = model.entity.weight
        factors = [e[h], e[t]] + ([] if name == "rotate" else [model.relation.weight[r]])
        (sum(modulus(x).pow(power).sum() for x in factors) / scale).backward()
        for a, p in zip(ours, tables):
            torch.testing.assert_close(a, p.grad if p.grad is not None else torch.zeros_like(a))


@pytest.mark.parametrize("name", ["distmult", "complex"])
def test_kbc_weight_w_is_lambda_over_three(name):
    # facebookresearch/kbc's N3(weight=w) is w / B * sum over the (h, r, t) factors of |x|^3
    # (complex moduli for ComplEx) and its F2(weight=w) is w / B * sum x^2: the docstring of
    # KGEModel.regularization says w = lambda / 3 for N3 and w = lambda for L2.
    from kg.models import MODELS

    torch.manual_seed(0)
    model = MODELS[name](6, 3, dim=4).double()
    gen = torch.Generator().manual_seed(2)
    h, t = torch.randint(6, (5,), generator=gen), torch.randint(6, (5,), generator=gen)
    r = torch.randint(3, (5,), generator=gen)

    def factor(x):
        return torch.complex(*x.chunk(2, -1)).abs() if name == "complex" else x

    e, w = model.entity.weight, model.relation.weight
    factors = [factor(e[h]), factor(w[r]), factor(e[t])]
    kbc_n3 = sum(0.05 * f.abs().pow(3).sum() for f in factors) / 5
    kbc_f2 = sum(0.05 * f.pow(2).sum() for f in factors) / 5
    torch.testing.assert_close(3 * 0.05 * model.regularization(h, r, t, kind="n3"), kbc_n3)
    torch.testing.assert_close(0.05 * model.regularization(h, r, t, kind="l2"), kbc_f2)
