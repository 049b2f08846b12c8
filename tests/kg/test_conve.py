import pytest
import torch
import torch.nn.functional as F

from graphdata.errors import GraphDataError
from kg.conve import ConvE, _channel_mask, _folded_feature_maps, _Patches


def reference_logits(model: ConvE, h: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """ConvE's eval-mode forward written out with functional ops (Dettmers et al. model.py)."""

    def bn(x, layer):
        return F.batch_norm(
            x,
            layer.running_mean,
            layer.running_var,
            layer.weight,
            layer.bias,
            False,
            0.0,
            layer.eps,
        )

    e1 = model.entity.weight[h].view(-1, 1, 2, 4)
    rel = model.relation.weight[r].view(-1, 1, 2, 4)
    x = bn(torch.cat([e1, rel], 2), model.bn0)
    x = F.relu(bn(F.conv2d(x, model.conv.weight, model.conv.bias), model.bn1))
    x = F.relu(bn(F.linear(x.view(x.size(0), -1), model.fc.weight, model.fc.bias), model.bn2))
    return x @ model.entity.weight.t() + model.bias


def test_matches_functional_reference_and_bias():
    model = ConvE(6, 2, dim=8, embedding_height=2, num_filters=4).double().eval()
    with torch.no_grad():
        model.bias.copy_(torch.arange(6.0))
        model.bn1.running_mean.uniform_(-1, 1)
        model.bn2.running_var.uniform_(0.5, 2)
    h, r = torch.tensor([0, 3, 5]), torch.tensor([1, 0, 1])
    torch.testing.assert_close(model.score_tails(h, r), reference_logits(model, h, r))
    # The per-entity bias shifts exactly that entity's column.
    before = model.score_tails(h, r)
    with torch.no_grad():
        model.bias[2] += 1.5
    delta = model.score_tails(h, r) - before
    torch.testing.assert_close(delta[:, 2], torch.full((3,), 1.5, dtype=torch.float64))
    torch.testing.assert_close(delta[:, [0, 1, 3, 4, 5]], torch.zeros(3, 5, dtype=torch.float64))


def test_bad_image_shape_is_refused():
    with pytest.raises(GraphDataError, match="embedding_height: expected a divisor H of dim=10"):
        ConvE(4, 2, dim=10, embedding_height=3)


def _module_chain(x, conv, bn, mask):
    """The feature maps as the module chain computes them: conv, batch norm, ReLU, dropout."""
    return (F.relu(bn(conv(x))) * mask[:, :, None, None]).flatten(1)


@pytest.mark.parametrize("momentum", [0.1, None])
def test_folded_feature_maps_equal_the_module_chain(momentum):
    # Oracle: conv -> BatchNorm2d (training) -> ReLU -> channel mask, in value, in every
    # gradient (input, filters, conv bias, gamma, beta) and in the running statistics.
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(5, 2, 6, 7, generator=gen, dtype=torch.float64) + 0.7
    mask = _channel_mask_for_test(5, 4, gen)
    upstream = torch.randn(5, 4 * 4 * 5, generator=gen, dtype=torch.float64)
    results = []
    for fold in (False, True):
        torch.manual_seed(0)
        conv = torch.nn.Conv2d(2, 4, 3).double()
        bn = torch.nn.BatchNorm2d(4, momentum=momentum).double()
        init = torch.Generator().manual_seed(4)
        with torch.no_grad():
            bn.weight.uniform_(0.5, 1.5, generator=init)
            bn.bias.uniform_(-0.5, 0.5, generator=init)
            bn.running_mean.uniform_(-1, 1, generator=init)
        leaf = x.clone().requires_grad_(True)
        for _ in range(2):  # two batches: the running statistics' update compounds
            out = (_folded_feature_maps if fold else _module_chain)(leaf, conv, bn, mask)
        out.backward(upstream)
        grads = [leaf.grad, conv.weight.grad, conv.bias.grad, bn.weight.grad, bn.bias.grad]
        stats = [bn.running_mean, bn.running_var, bn.num_batches_tracked.double()]
        results.append([out.detach(), *grads, *stats])
    for reference, folded in zip(*results):
        torch.testing.assert_close(folded, reference)


def _channel_mask_for_test(batch, channels, gen):
    keep = torch.rand(batch, channels, generator=gen) >= 0.3
    return keep.double() / 0.7


@pytest.mark.parametrize("p", [0.0, 0.25, 1.0])
def test_channel_mask_is_dropout2d_mask(p):
    # Oracle: Dropout2d's mask law: values in {0, 1/(1-p)}, kept with probability 1 - p.
    torch.manual_seed(0)
    mask = _channel_mask(400, 50, p, torch.empty(0))
    if p == 1.0:
        assert bool((mask == 0).all())
        return
    scale = torch.tensor(1 / (1 - p))  # float32, as the mask
    assert bool(((mask == 0) | (mask == scale)).all())
    kept = float((mask > 0).double().mean())
    assert abs(kept - (1 - p)) < 4 * ((p * (1 - p)) / mask.numel()) ** 0.5 + 1e-12


def test_training_step_matches_module_chain_without_dropout():
    # With every dropout rate 0 the model's training-mode scores and gradients are those of
    # the functional chain with batch statistics (the folded path against F.batch_norm).
    model = (
        ConvE(
            7,
            3,
            dim=8,
            embedding_height=2,
            num_filters=4,
            input_dropout=0.0,
            feature_map_dropout=0.0,
            hidden_dropout=0.0,
        )
        .double()
        .train()
    )
    h, r = torch.tensor([0, 3, 5, 6]), torch.tensor([1, 0, 2, 1])

    def chain():
        e1 = model.entity.weight[h].view(-1, 1, 2, 4)
        rel = model.relation.weight[r].view(-1, 1, 2, 4)
        x = F.batch_norm(
            torch.cat([e1, rel], 2),
            None,
            None,
            model.bn0.weight,
            model.bn0.bias,
            True,
            0.0,
            model.bn0.eps,
        )
        x = F.batch_norm(
            F.conv2d(x, model.conv.weight, model.conv.bias),
            None,
            None,
            model.bn1.weight,
            model.bn1.bias,
            True,
            0.0,
            model.bn1.eps,
        )
        x = F.linear(F.relu(x).flatten(1), model.fc.weight, model.fc.bias)
        x = F.relu(
            F.batch_norm(x, None, None, model.bn2.weight, model.bn2.bias, True, 0.0, model.bn2.eps)
        )
        return x @ model.entity.weight.t() + model.bias

    upstream = torch.randn(4, 7, dtype=torch.float64)
    grads = []
    for fn in (chain, lambda: model.score_tails(h, r)):
        model.zero_grad(set_to_none=True)
        scores = fn()
        scores.backward(upstream)
        grads.append([scores.detach()] + [p.grad for p in model.parameters()])
    for reference, ours in zip(*grads):
        torch.testing.assert_close(ours, reference)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_patches_equal_unfold_and_its_gradient(k):
    # Oracle: F.unfold's values and, by gradcheck, the exact Jacobian of the strided copy.
    x = torch.randn(3, 2, 5, 6, dtype=torch.float64, requires_grad=True)
    torch.testing.assert_close(_Patches.apply(x, k), F.unfold(x, k))
    assert torch.autograd.gradcheck(lambda t: _Patches.apply(t, k), (x,))
