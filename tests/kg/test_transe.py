import pytest
import torch

from graphdata.errors import GraphDataError
from kg.transe import TransE


def tiny(p: int) -> TransE:
    model = TransE(3, 1, dim=2, p=p)
    with torch.no_grad():
        model.entity.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]]))
        model.relation.weight.copy_(torch.tensor([[0.5, -1.0]]))
    return model


@pytest.mark.parametrize(("p", "expected"), [(1, [-3.5, -0.9]), (2, [-2.5, -(0.65**0.5)])])
def test_hand_computed_scores(p, expected):
    model = tiny(p)
    h, r, t = torch.tensor([0, 1]), torch.tensor([0, 0]), torch.tensor([1, 2])
    # e0 + r - e1 = (1.5, -2.0); e1 + r - e2 = (-0.1, -0.8).
    assert model(h, r, t).tolist() == pytest.approx(expected)
    # Every candidate tail of (e0, r): e0 + r = (1.5, -1.0) against e0, e1, e2.
    diffs = torch.tensor([[0.5, -1.0], [1.5, -2.0], [0.9, -1.8]])
    by_hand = -diffs.abs().sum(-1) if p == 1 else -diffs.square().sum(-1).sqrt()
    torch.testing.assert_close(model.score_tails(h[:1], r[:1])[0], by_hand)


def test_entities_stay_on_the_unit_sphere():
    model = TransE(10, 2, dim=4)
    torch.testing.assert_close(model.entity.weight.norm(dim=-1), torch.ones(10))
    with torch.no_grad():
        model.entity.weight.mul_(3.0)
    model.post_step()
    torch.testing.assert_close(model.entity.weight.norm(dim=-1), torch.ones(10))
    torch.testing.assert_close(model.relation.weight.norm(dim=-1), torch.ones(2))


def test_p_is_validated():
    with pytest.raises(GraphDataError, match="p: expected the norm order 1 or 2, got 3"):
        TransE(3, 1, dim=2, p=3)
