import torch

from kg.rescal import RESCAL


def test_equals_bilinear_form_per_relation():
    model = RESCAL(5, 2, dim=3).double()
    gen = torch.Generator().manual_seed(0)
    h, r, t = (torch.randint(n, (12,), generator=gen) for n in (5, 2, 5))
    E = model.entity.weight
    expected = torch.stack(
        [E[hb] @ model.relation.weight[rb].view(3, 3) @ E[tb] for hb, rb, tb in zip(h, r, t)]
    )
    torch.testing.assert_close(model(h, r, t), expected)


def test_hand_computed():
    model = RESCAL(2, 1, dim=2)
    with torch.no_grad():
        model.entity.weight.copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
        model.relation.weight.copy_(torch.tensor([[0.0, 1.0, 2.0, 0.0]]))  # M = [[0, 1], [2, 0]]
    # [1, 2] M = [4, 1]; [4, 1] . [3, 4] = 16
    assert model(torch.tensor([0]), torch.tensor([0]), torch.tensor([1])).item() == 16.0
    # Not symmetric: [3, 4] M = [8, 3]; [8, 3] . [1, 2] = 14
    assert model(torch.tensor([1]), torch.tensor([0]), torch.tensor([0])).item() == 14.0
