import torch

from kg.tucker import TuckER


def test_fresh_eval_model_equals_core_contraction():
    # Fresh batch norms (mean 0, var 1, weight 1, bias 0) scale by 1 / sqrt(1 + eps) each.
    model = TuckER(6, 3, dim=4, relation_dim=5).double().eval()
    gen = torch.Generator().manual_seed(0)
    h, r, t = (torch.randint(n, (10,), generator=gen) for n in (6, 3, 6))
    eh, wr, et = model.entity(h), model.relation(r), model.entity(t)
    core = model.core.permute(1, 0, 2)  # stored [d_r, d_e, d_e] -> W[i, j, k]
    expected = torch.einsum("ijk,bi,bj,bk->b", core, eh, wr, et) / (1 + model.bn0.eps)
    torch.testing.assert_close(model(h, r, t), expected)


def test_training_mode_head_scores_equal_forward_on_all_pairs():
    # With B = 1 the head-side batch statistics are those of forward on the E candidate pairs.
    model = TuckER(5, 2, dim=4, input_dropout=0.0, hidden_dropout1=0.0, hidden_dropout2=0.0)
    model = model.double().train()
    r, t = torch.tensor([1]), torch.tensor([3])
    heads = model.score_heads(r, t)
    pairs = model(torch.arange(5), r.repeat(5), t.repeat(5))
    torch.testing.assert_close(heads[0], pairs)


def test_dropout_only_in_training_mode():
    model = TuckER(5, 2, dim=4).double()
    h, r, t = torch.tensor([0, 1, 2]), torch.tensor([0, 1, 1]), torch.tensor([2, 3, 4])
    model.eval()
    assert torch.equal(model(h, r, t), model(h, r, t))
    model.train()
    torch.manual_seed(0)
    first = model(h, r, t)
    assert not torch.equal(first, model(h, r, t))
