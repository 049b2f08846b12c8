"""kg._dropout: a Bernoulli(1 - p) keep mask scaled by 1 / (1 - p), drawn from uniform variates."""

from __future__ import annotations

import math

import pytest
import torch

from kg._dropout import Dropout


@pytest.mark.parametrize("p", [0.3, 0.5])
def test_keeps_each_element_with_probability_one_minus_p_and_scales_it(p: float) -> None:
    torch.manual_seed(0)
    n = 200_000
    out = Dropout(p).train()(torch.full((n,), 2.0))
    kept = out != 0
    # Every kept element is 2 / (1 - p); the count is Binomial(n, 1 - p): within 5 sd.
    assert torch.allclose(out[kept], torch.full((int(kept.sum()),), 2.0 / (1.0 - p)))
    assert abs(int(kept.sum()) - n * (1 - p)) < 5 * math.sqrt(n * p * (1 - p))


def test_gradient_is_the_same_mask() -> None:
    torch.manual_seed(1)
    x = torch.randn(64, 32, requires_grad=True)
    out = Dropout(0.4).train()(x)
    out.sum().backward()
    mask = out.detach() / x.detach()
    assert torch.allclose(x.grad, mask)


def test_identity_in_eval_and_at_zero_rate_and_zeros_at_one() -> None:
    x = torch.randn(10)
    assert torch.equal(Dropout(0.5).eval()(x), x)
    assert torch.equal(Dropout(0.0).train()(x), x)
    assert torch.equal(Dropout(1.0).train()(x), torch.zeros(10))
    y = x.clone()
    torch.manual_seed(2)
    out = Dropout(0.5, inplace=True).train()(y)
    assert out.data_ptr() == y.data_ptr()
