import math

import torch

from kg.rotate import RotatE


def test_zero_phase_is_margin_minus_summed_complex_moduli():
    model = RotatE(5, 2, dim=3, margin=7.0)
    with torch.no_grad():
        model.relation.weight.zero_()
    h, r, t = torch.tensor([0, 1, 4]), torch.tensor([0, 1, 1]), torch.tensor([2, 3, 4])
    re, im = model.entity.weight.chunk(2, dim=-1)
    moduli = ((re[h] - re[t]).square() + (im[h] - im[t]).square()).sqrt()  # [B, d]
    torch.testing.assert_close(model(h, r, t), 7.0 - moduli.sum(-1))
    assert model(h, r, t)[2].item() == 7.0  # h == t, identity rotation


def test_hand_computed_quarter_turn():
    model = RotatE(2, 1, dim=1, margin=0.0)
    with torch.no_grad():
        model.entity.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 2.0]]))  # 1 and 2i
        model.relation.weight.fill_(math.pi / 2)  # multiply by i
    # 1 * i - 2i = -i: modulus 1. 2i * i - 1 = -3: modulus 3.
    scores = model(torch.tensor([0, 1]), torch.tensor([0, 0]), torch.tensor([1, 0]))
    torch.testing.assert_close(scores, torch.tensor([-1.0, -3.0]))


def test_not_pyg_frobenius_norm():
    # Sum of complex moduli differs from the L2 norm over all 2d reals (PyG's RotatE).
    model = RotatE(2, 1, dim=2, margin=0.0)
    with torch.no_grad():
        model.entity.weight.copy_(torch.tensor([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]))
        model.relation.weight.zero_()
    score = model(torch.tensor([0]), torch.tensor([0]), torch.tensor([1]))
    assert score.item() == -2.0  # |1| + |1|, where the L2 norm would give -sqrt(2)
