import torch

from kg.distmult import DistMult


def test_hand_computed_and_symmetric():
    model = DistMult(3, 1, dim=2)
    with torch.no_grad():
        model.entity.weight.copy_(torch.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]]))
        model.relation.weight.copy_(torch.tensor([[2.0, 1.0]]))
    h, r, t = torch.tensor([0, 1]), torch.tensor([0, 0]), torch.tensor([1, 2])
    # 1*2*3 + 2*1*(-1) = 4;  3*2*0.5 + (-1)*1*0.5 = 2.5
    assert model(h, r, t).tolist() == [4.0, 2.5]
    assert model(t, r, h).tolist() == [4.0, 2.5]
    torch.testing.assert_close(model.score_tails(h, r), model.score_heads(r, h))


def test_symmetric_for_random_embeddings():
    model = DistMult(20, 4, dim=8)
    gen = torch.Generator().manual_seed(0)
    h, r, t = (torch.randint(n, (50,), generator=gen) for n in (20, 4, 20))
    torch.testing.assert_close(model(h, r, t), model(t, r, h))
