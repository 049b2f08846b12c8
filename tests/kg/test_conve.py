import pytest
import torch
import torch.nn.functional as F

from graphdata.errors import GraphDataError
from kg.conve import ConvE


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
