import math

import pytest
import torch
import torch.nn.functional as F

from graphdata.errors import GraphDataError
from kg.losses import (
    bce_loss,
    kvsall_bce_loss,
    margin_ranking_loss,
    nssa_loss,
    one_vs_all_loss,
    softplus_loss,
)


def _sp(x: float) -> float:
    return math.log1p(math.exp(x))


def _ls(x: float) -> float:  # log sigmoid
    return -_sp(-x)


def test_margin_ranking_hand_computed():
    pos = torch.tensor([2.0, 0.0])
    neg = torch.tensor([[0.5, 1.5], [1.0, -3.0]])
    # pairs: max(0, 1-2+0.5)=0, max(0,1-2+1.5)=.5, max(0,1-0+1)=2, max(0,1-0-3)=0
    assert margin_ranking_loss(pos, neg).item() == pytest.approx(2.5 / 4)
    expected = (1.5 + 2.5 + 4 + 0) / 4
    assert margin_ranking_loss(pos, neg, margin=3.0).item() == pytest.approx(expected)


def test_margin_ranking_matches_torch_reference():
    g = torch.Generator().manual_seed(0)
    pos, neg = torch.randn(7, generator=g), torch.randn(7, 3, generator=g)
    ref = F.margin_ranking_loss(
        pos[:, None].expand_as(neg).reshape(-1), neg.reshape(-1), torch.ones(21), margin=0.7
    )
    assert margin_ranking_loss(pos, neg, margin=0.7).item() == pytest.approx(ref.item(), rel=1e-6)


def test_margin_ranking_mask_drops_pairs():
    pos = torch.tensor([2.0, 0.0])
    neg = torch.tensor([[0.5, 1.5], [1.0, -3.0]])
    mask = torch.tensor([[True, False], [True, True]])
    assert margin_ranking_loss(pos, neg, mask=mask).item() == pytest.approx(2.0 / 3)
    empty = torch.zeros_like(mask)
    assert margin_ranking_loss(pos, neg, mask=empty).item() == 0.0


def test_softplus_and_bce_hand_computed():
    pos = torch.tensor([1.0, -2.0])
    neg = torch.tensor([[0.5], [3.0]])
    expected = (_sp(-1.0) + _sp(2.0) + _sp(0.5) + _sp(3.0)) / 4
    assert softplus_loss(pos, neg).item() == pytest.approx(expected, rel=1e-6)
    assert bce_loss(pos, neg).item() == pytest.approx(expected, rel=1e-6)
    # masking the second negative removes its term from sum and count
    mask = torch.tensor([[True], [False]])
    expected_masked = (_sp(-1.0) + _sp(2.0) + _sp(0.5)) / 3
    assert softplus_loss(pos, neg, mask=mask).item() == pytest.approx(expected_masked, rel=1e-6)


def test_bce_label_smoothing_matches_torch():
    g = torch.Generator().manual_seed(1)
    pos, neg = torch.randn(5, generator=g), torch.randn(5, 4, generator=g)
    eps = 0.2
    logits = torch.cat([pos, neg.reshape(-1)])
    targets = torch.cat([torch.full((5,), 1 - eps), torch.full((20,), eps)])
    ref = F.binary_cross_entropy_with_logits(logits, targets)
    assert bce_loss(pos, neg, label_smoothing=eps).item() == pytest.approx(ref.item(), rel=1e-6)


def test_nssa_hand_computed():
    pos = torch.tensor([1.0])
    neg = torch.tensor([[0.0, 2.0]])
    alpha, gamma = 0.5, 1.0
    w = [math.exp(alpha * 0.0), math.exp(alpha * 2.0)]
    w = [x / sum(w) for x in w]
    pos_part = -_ls(gamma + 1.0)
    neg_part = -(w[0] * _ls(-gamma - 0.0) + w[1] * _ls(-gamma - 2.0))
    expected = (pos_part + neg_part) / 2
    got = nssa_loss(pos, neg, margin=gamma, adversarial_temperature=alpha)
    assert got.item() == pytest.approx(expected, rel=1e-6)


def test_nssa_matches_rotate_reference_code():
    # DeepGraphLearning/KnowledgeGraphEmbedding codes/model.py, train_step (no subsampling):
    # negative_score = (softmax(neg * alpha).detach() * logsigmoid(-neg)).sum(1)
    # positive_score = logsigmoid(pos); loss = (-pos.mean() - neg.mean()) / 2, with f = gamma - d.
    g = torch.Generator().manual_seed(2)
    d_pos, d_neg = torch.rand(6, generator=g) * 10, torch.rand(6, 8, generator=g) * 10
    gamma, alpha = 9.0, 1.0
    f_pos, f_neg = gamma - d_pos, gamma - d_neg
    ref_neg = (torch.softmax(f_neg * alpha, 1) * F.logsigmoid(-f_neg)).sum(1)
    ref = (-F.logsigmoid(f_pos).mean() - ref_neg.mean()) / 2
    # the same loss from distance-model scores -d with margin gamma, or from gamma - d with margin 0
    ours_margin = nssa_loss(-d_pos, -d_neg, margin=gamma, adversarial_temperature=alpha)
    ours_score = nssa_loss(f_pos, f_neg, margin=0.0, adversarial_temperature=alpha)
    assert ours_margin.item() == pytest.approx(ref.item(), rel=1e-5)
    assert ours_score.item() == pytest.approx(ref.item(), rel=1e-5)


def test_nssa_weights_are_detached():
    pos = torch.tensor([0.3], requires_grad=True)
    neg = torch.tensor([[0.0, 1.0, -1.0]], requires_grad=True)
    nssa_loss(pos, neg, adversarial_temperature=2.0).backward()
    # d/df_j of -(p_j log sigma(-f_j)) with p fixed = p_j * sigma(f_j), halved by the mean of parts
    p = torch.softmax(2.0 * neg.detach(), -1)
    expected = p * torch.sigmoid(neg.detach()) / 2
    torch.testing.assert_close(neg.grad, expected)


def test_nssa_zero_temperature_is_uniform_mean_and_mask():
    pos = torch.tensor([0.0, 1.0])
    neg = torch.tensor([[1.0, 2.0], [0.5, -0.5]])
    uniform = nssa_loss(pos, neg, adversarial_temperature=0.0)
    expected = (-F.logsigmoid(pos).mean() - F.logsigmoid(-neg).mean(1).mean()) / 2
    assert uniform.item() == pytest.approx(expected.item(), rel=1e-6)
    # a fully masked row keeps only its positive part; the loss stays finite
    mask = torch.tensor([[False, False], [True, False]])
    masked = nssa_loss(pos, neg, adversarial_temperature=1.0, mask=mask)
    expected = (-F.logsigmoid(pos).mean() - (F.logsigmoid(torch.tensor(-0.5)) + 0) / 2) / 2
    assert masked.item() == pytest.approx(expected.item(), rel=1e-6)


def test_kvsall_bce_label_smoothing():
    scores = torch.tensor([[2.0, -1.0, 0.0, 0.5]])
    y = torch.tensor([[1.0, 0.0, 0.0, 1.0]])
    eps = 0.1
    ys = [(1 - eps) * v + eps / 4 for v in y[0].tolist()]
    expected = sum(-(t * _ls(s) + (1 - t) * _ls(-s)) for s, t in zip(scores[0].tolist(), ys)) / 4
    got = kvsall_bce_loss(scores, y, label_smoothing=eps)
    assert got.item() == pytest.approx(expected, rel=1e-6)
    ref = F.binary_cross_entropy(torch.sigmoid(scores), y)
    assert kvsall_bce_loss(scores, y).item() == pytest.approx(ref.item(), rel=1e-5)


def test_one_vs_all_hand_computed():
    scores = torch.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    target = torch.tensor([2, 0])
    lse = math.log(math.exp(1) + math.exp(2) + math.exp(3))
    expected = ((lse - 3.0) + math.log(3.0)) / 2
    assert one_vs_all_loss(scores, target).item() == pytest.approx(expected, rel=1e-6)
    # with smoothing: (1-eps) NLL(target) + eps * mean NLL over all classes
    eps = 0.3
    nll = -torch.log_softmax(scores, 1)
    smooth = ((1 - eps) * nll[[0, 1], target] + eps * nll.mean(1)).mean()
    assert one_vs_all_loss(scores, target, label_smoothing=eps).item() == pytest.approx(
        smooth.item(), rel=1e-6
    )


def test_bad_shapes_raise():
    with pytest.raises(GraphDataError, match=r"negative scores \[B, k\]"):
        margin_ranking_loss(torch.zeros(3), torch.zeros(3))
    with pytest.raises(GraphDataError, match="mask: expected the shape"):
        nssa_loss(torch.zeros(2), torch.zeros(2, 3), mask=torch.ones(2, 2, dtype=torch.bool))
    with pytest.raises(GraphDataError, match="targets: expected the shape"):
        kvsall_bce_loss(torch.zeros(2, 3), torch.zeros(2, 4))
    with pytest.raises(GraphDataError, match="target: expected one index per row"):
        one_vs_all_loss(torch.zeros(2, 3), torch.zeros(3, dtype=torch.long))


@pytest.mark.parametrize("loss", [margin_ranking_loss, softplus_loss, bce_loss, nssa_loss])
def test_slcwa_losses_prefer_higher_positive(loss, device):
    neg = torch.zeros(4, 3, device=device)
    low = loss(torch.full((4,), -1.0, device=device), neg)
    high = loss(torch.full((4,), 3.0, device=device), neg)
    assert high.item() < low.item()
    assert high.device.type == device.type
