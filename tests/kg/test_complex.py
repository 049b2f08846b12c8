import torch

from kg.complex import ComplEx


def as_complex(x: torch.Tensor) -> torch.Tensor:
    re, im = x.double().chunk(2, dim=-1)
    return torch.complex(re, im)


def test_equals_complex_trilinear_product_and_four_term_expansion():
    model = ComplEx(6, 3, dim=4)
    gen = torch.Generator().manual_seed(0)
    h, r, t = (torch.randint(n, (20,), generator=gen) for n in (6, 3, 6))
    eh, wr = as_complex(model.entity(h)), as_complex(model.relation(r))
    et = as_complex(model.entity(t))
    by_complex = (eh * wr * et.conj()).sum(-1).real
    a_h, b_h, a_r, b_r, a_t, b_t = eh.real, eh.imag, wr.real, wr.imag, et.real, et.imag
    four_terms = (
        (a_h * a_r * a_t).sum(-1)
        + (b_h * a_r * b_t).sum(-1)
        + (a_h * b_r * b_t).sum(-1)
        - (b_h * b_r * a_t).sum(-1)
    )
    torch.testing.assert_close(by_complex, four_terms)
    torch.testing.assert_close(model(h, r, t).double(), by_complex, rtol=1e-5, atol=1e-6)


def test_can_model_antisymmetric_relations():
    model = ComplEx(4, 1, dim=3)
    with torch.no_grad():
        model.relation.weight[:, :3] = 0.0  # purely imaginary relation: f(h,r,t) = -f(t,r,h)
    h, r, t = torch.tensor([0, 1, 2]), torch.tensor([0, 0, 0]), torch.tensor([3, 2, 0])
    forward, backward = model(h, r, t), model(t, r, h)
    torch.testing.assert_close(forward, -backward)
    assert forward.abs().min() > 0  # not trivially zero


def test_n3_uses_complex_moduli():
    model = ComplEx(2, 1, dim=1)
    with torch.no_grad():
        model.entity.weight.copy_(torch.tensor([[3.0, 4.0], [0.0, 1.0]]))  # |e0| = 5, |e1| = 1
        model.relation.weight.copy_(torch.tensor([[0.0, 2.0]]))  # |w| = 2
    h, r, t = torch.tensor([0]), torch.tensor([0]), torch.tensor([1])
    n3 = model.regularization(h, r, t, kind="n3")
    torch.testing.assert_close(n3, torch.tensor((125.0 + 8.0 + 1.0) / 3))
    l2 = model.regularization(h, r, t, kind="l2")
    torch.testing.assert_close(l2, torch.tensor(25.0 + 4.0 + 1.0))
