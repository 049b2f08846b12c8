import pytest
import torch

from graphdata.errors import GraphDataError
from kg.complex import ComplEx
from kg.distmult import DistMult
from kg.explain.local import local_structure
from kg.explain.retrain import RetrainConfig, RetrainScorer
from kg.transe import TransE

EDGES = [(0, 0, 2), (2, 1, 1), (0, 2, 3), (3, 2, 1), (0, 3, 1), (0, 0, 4), (4, 4, 1), (5, 1, 2)]


def _local():
    triples = torch.tensor(EDGES)
    return local_structure(triples[:, [0, 2]].t(), triples[:, 1], (0, 5, 1), hops=2, max_length=2)


def _masks(local, count=5, seed=0):
    generator = torch.Generator().manual_seed(seed)
    masks = torch.rand(count, local.num_edges, generator=generator) < 0.5
    masks[0] = True
    masks[1] = False
    return masks


@pytest.mark.parametrize("model_cls", [DistMult, TransE, ComplEx])
@pytest.mark.parametrize("init", ["pretrained", "random"])
def test_scores_do_not_depend_on_candidate_order(model_cls, init):
    torch.manual_seed(0)
    model = model_cls(6, 6, dim=4)
    local = _local()
    scorer = RetrainScorer(model, local, RetrainConfig(steps=5, init=init))
    masks = _masks(local)
    scores = scorer(masks)
    order = torch.tensor([3, 0, 4, 2, 1])
    torch.testing.assert_close(scorer(masks[order]), scores[order], rtol=1e-5, atol=1e-5)
    # A candidate alone, after others were scored, gets its batched score: state is reset.
    for c in range(masks.size(0)):
        torch.testing.assert_close(
            scorer(masks[c : c + 1]), scores[c : c + 1], rtol=1e-5, atol=1e-5
        )


def test_batched_equals_sequential_protocol():
    torch.manual_seed(1)
    model = DistMult(6, 6, dim=4)
    local = _local()
    masks = _masks(local, count=6, seed=3)
    batched = RetrainScorer(model, local, RetrainConfig(steps=8, max_batch=64))(masks)
    sequential = RetrainScorer(model, local, RetrainConfig(steps=8, max_batch=1))(masks)
    torch.testing.assert_close(batched, sequential, rtol=1e-5, atol=1e-5)


def test_chunks_follow_the_triple_budget():
    torch.manual_seed(1)
    model = DistMult(6, 6, dim=4)
    local = _local()  # 8 local triples
    masks = _masks(local, count=7, seed=3)
    reference = RetrainScorer(model, local, RetrainConfig(steps=4, max_batch=1))(masks)
    for max_batch, budget, size in ((16, 4000, 16), (16, 24, 3), (16, 7, 1), (2, 4000, 2)):
        config = RetrainConfig(steps=4, max_batch=max_batch, max_batch_triples=budget)
        scorer = RetrainScorer(model, local, config)
        assert scorer.chunk_size == size
        torch.testing.assert_close(scorer(masks), reference, rtol=1e-5, atol=1e-5)


def test_retraining_moves_scores_and_leaves_the_model_untouched():
    torch.manual_seed(2)
    model = DistMult(6, 6, dim=4)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    local = _local()
    scorer = RetrainScorer(model, local, RetrainConfig(steps=10, init="pretrained"))
    scores = scorer(_masks(local))
    for key, value in model.state_dict().items():
        assert torch.equal(value, before[key])
    # No kept triple: nothing to train on, so the score is the model's own.
    own = model(torch.tensor([0]), torch.tensor([5]), torch.tensor([1]))
    torch.testing.assert_close(scores[1:2], own)
    assert not torch.allclose(scores[0], own)  # the full local graph re-trains the rows
    assert model.entity.weight.grad is None and model.relation.weight.grad is None


def test_reciprocal_model_trains_inverse_triples():
    torch.manual_seed(3)
    model = DistMult(6, 12, dim=4)
    local = _local()
    plain = RetrainScorer(model, local, RetrainConfig(steps=5), reciprocal=False)(_masks(local))
    both = RetrainScorer(model, local, RetrainConfig(steps=5), reciprocal=True)(_masks(local))
    assert both.shape == plain.shape
    assert not torch.allclose(both[0], plain[0])


def test_transe_rows_stay_on_the_unit_sphere():
    torch.manual_seed(4)
    model = TransE(6, 6, dim=4)
    local = _local()
    scorer = RetrainScorer(model, local, RetrainConfig(steps=3, init="random"))
    assert torch.allclose(scorer.rows["entity.weight"].norm(dim=-1), torch.ones(local.num_nodes))
    scorer(_masks(local))


def test_bad_config_and_masks():
    model = DistMult(6, 6, dim=4)
    local = _local()
    with pytest.raises(GraphDataError, match="init: expected one of"):
        RetrainScorer(model, local, RetrainConfig(init="zeros"))
    with pytest.raises(GraphDataError, match="steps: expected a positive int"):
        RetrainScorer(model, local, RetrainConfig(steps=0))
    with pytest.raises(GraphDataError, match="max_batch_triples: expected a positive int"):
        RetrainScorer(model, local, RetrainConfig(max_batch_triples=0))
    with pytest.raises(GraphDataError, match=r"keep: expected a mask of shape \[C, 8\]"):
        RetrainScorer(model, local)(torch.ones(2, 3, dtype=torch.bool))
