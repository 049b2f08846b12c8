"""Model-faithful necessity and sufficiency (kg.explain.faithful): oracles that could fail."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F
from torch.func import functional_call

from graphdata.errors import GraphDataError, UnknownLabelError
from graphdata.triples import KGDataset
from kg.complex import ComplEx
from kg.config import TrainingConfig
from kg.distmult import DistMult
from kg.explain.faithful import (
    FaithfulConfig,
    FaithfulEvaluator,
    equal_budget,
    necessity,
    sufficiency,
)
from kg.training import build_model, train
from kg.transe import TransE


def _chain_world() -> tuple[KGDataset, list, list]:
    """g(A, C) <- p(A, B), q(B, C) on 16 chains; the target g(a0, c0) is held out.

    Every a_i and c_i also has two ``s`` facts to its own private entities, so an unrelated
    removal of the same size touches the target's head and tail too.
    """
    train, test = [], [("a0", "g", "c0")]
    for i in range(16):
        a, b, c = f"a{i}", f"b{i}", f"c{i}"
        train += [(a, "p", b), (b, "q", c), (a, "s", f"x{i}"), (c, "s", f"y{i}")]
        if i:
            train.append((a, "g", c))
    valid = [("a1", "g", "c1")]
    path = [("a0", "p", "b0"), ("b0", "q", "c0")]
    unrelated = [("a0", "s", "x0"), ("c0", "s", "y0")]
    return KGDataset.from_labeled(train, valid, test), path, unrelated


@pytest.fixture(scope="module")
def chain():
    dataset, path, unrelated = _chain_world()
    cfg = TrainingConfig.from_defaults(
        "complex", epochs=150, batch_size=64, eval_every=0, progress=False, seed=0
    )
    model = build_model("complex", dataset, cfg, dim=16)
    train(model, dataset, cfg)
    return model.eval(), dataset, cfg, path, unrelated


def _evaluator(chain, **kwargs):
    model, dataset, cfg, _, _ = chain
    return FaithfulEvaluator(model, dataset, training=cfg, config=FaithfulConfig(**kwargs))


def test_removing_nothing_is_the_control_exactly(chain):
    report = _evaluator(chain, steps=30).necessity(("a0", "g", "c0"), {"empty": []})
    assert report.drop("control") == 0.0
    assert report.arms["empty"].num_removed == 0
    assert report.arms["empty"].rank == report.control.rank
    assert report.arms["empty"].score == pytest.approx(report.control.score, abs=1e-5)


def test_path_is_more_necessary_than_an_unrelated_removal(chain):
    _, _, _, path, unrelated = chain
    for seed in (0, 1, 2):
        report = _evaluator(chain, seed=seed).necessity(
            ("a0", "g", "c0"), {"path": path, "unrelated": unrelated}
        )
        assert report.arms["path"].num_removed == report.arms["unrelated"].num_removed == 2
        assert report.drop("path") > report.drop("unrelated") + 1.0, seed


def test_path_is_more_sufficient_than_an_unrelated_set(chain):
    _, _, _, path, unrelated = chain
    report = _evaluator(chain).sufficiency(
        ("a0", "g", "c0"), {"path": path, "unrelated": unrelated}
    )
    assert report.arms["path"].rank < report.arms["unrelated"].rank
    assert set(report.arms) == {"path", "unrelated", "none"}


def test_sufficiency_of_the_whole_neighbourhood_is_the_control(chain):
    _, dataset, _, _, _ = chain
    rows = dataset.train.to_labeled_triples()
    touching = [x for x in rows if {x[0], x[2]} & {"a0", "c0"}]
    report = _evaluator(chain, steps=20).sufficiency(("a0", "g", "c0"), {"all": touching})
    assert report.arms["all"].rank == report.control.rank
    # per side the triples of the relearned endpoint (a0: 2, c0: 2); the larger count
    assert report.arms["none"].num_removed == 2 == len(touching) // 2


def test_batched_arms_equal_arms_alone(chain):
    _, _, _, path, unrelated = chain
    ev = _evaluator(chain, steps=25)
    both = ev.necessity(("a0", "g", "c0"), {"path": path, "unrelated": unrelated})
    alone = ev.necessity(("a0", "g", "c0"), {"path": path})
    assert alone.arms["path"].score == pytest.approx(both.arms["path"].score, abs=1e-4)
    assert alone.control.score == pytest.approx(both.control.score, abs=1e-4)


def test_user_model_unchanged_and_reproducible(chain):
    model, dataset, cfg, path, _ = chain
    before = {k: v.clone() for k, v in model.state_dict().items()}
    first = necessity(model, dataset, ("a0", "g", "c0"), path, steps=20, training=cfg, seed=3)
    again = necessity(model, dataset, ("a0", "g", "c0"), path, steps=20, training=cfg, seed=3)
    other = necessity(model, dataset, ("a0", "g", "c0"), path, steps=20, training=cfg, seed=4)
    for key, value in model.state_dict().items():
        assert torch.equal(value, before[key]), key
    assert first == again
    assert first.arms["removed"].score != other.arms["removed"].score
    suff = sufficiency(model, dataset, ("a0", "g", "c0"), path, steps=5, training=cfg)
    assert "explanation" in suff.arms


def test_original_arm_is_the_trained_model(chain):
    model, dataset, cfg, _, _ = chain
    report = _evaluator(chain, steps=0, init="pretrained").necessity(("a0", "g", "c0"), {})
    h, r, t = (dataset.entities.id("a0"), dataset.relations.id("g"), dataset.entities.id("c0"))
    inverse = r + dataset.num_relations  # the reciprocal model ranks heads as inverse tails
    with torch.no_grad():
        score = float(model(torch.tensor([h]), torch.tensor([r]), torch.tensor([t]))[0])
        back = float(model(torch.tensor([t]), torch.tensor([inverse]), torch.tensor([h]))[0])
    assert report.original.tail_score == pytest.approx(score, abs=1e-5)
    assert report.original.head_score == pytest.approx(back, abs=1e-5)
    # zero steps from the trained rows: the control is the untouched model
    assert report.control.rank == report.original.rank


def test_bad_inputs_raise_clear_errors(chain):
    ev = _evaluator(chain, steps=1)
    with pytest.raises(GraphDataError, match="not a training triple"):
        ev.necessity(("a0", "g", "c0"), {"x": [("a0", "q", "b0")]})
    with pytest.raises(GraphDataError, match="holds the target"):
        ev.necessity(("a1", "g", "c1"), {"x": [("a1", "g", "c1")]})
    with pytest.raises(UnknownLabelError):
        ev.necessity(("a0", "g", "nobody"), {})
    with pytest.raises(GraphDataError, match="reserved"):
        ev.necessity(("a0", "g", "c0"), {"control": []})
    with pytest.raises(GraphDataError, match="two arms are named '1'"):  # one was dropped
        ev.necessity(("a0", "g", "c0"), {1: [], "1": [("a0", "p", "b0")]})
    with pytest.raises(GraphDataError, match="mapping"):
        ev.necessity(("a0", "g", "c0"), [("a0", "p", "b0")])  # type: ignore[arg-type]
    with pytest.raises(GraphDataError, match="lr"):
        FaithfulConfig(lr=float("nan")).validate()
    model, dataset, _, _, _ = chain
    slcwa = TrainingConfig.from_defaults("complex", regime="slcwa", loss="nssa")
    with pytest.raises(GraphDataError, match="1vsall"):
        FaithfulEvaluator(model, dataset, training=slcwa)
    with pytest.raises(GraphDataError, match="does not fit"):
        FaithfulEvaluator(model, dataset, training=TrainingConfig(regime="1vsall"))
    broken = copy.deepcopy(model)
    with torch.no_grad():
        broken.entity.weight[0, 0] = float("inf")
    # Was "fine-tuning with lr=0.05 ... gave non-finite scores; lower FaithfulConfig.lr".
    with pytest.raises(GraphDataError, match="1 NaN or infinite value.*entity.weight"):
        FaithfulEvaluator(broken, dataset, training=ev.training)


def test_equal_budget_trims_and_pads():
    a, b, c = ("a", "r", "b"), ("b", "r", "c"), ("c", "r", "d")
    assert equal_budget([a, b, c], 2) == (a, b)
    assert equal_budget([a], 3, [a, c, b]) == (a, c, b)
    assert equal_budget([a], 3) == (a,)
    with pytest.raises(GraphDataError, match="n:"):
        equal_budget([a], -1)


@pytest.mark.parametrize("reciprocal", [True, False])
@pytest.mark.parametrize("cls", [ComplEx, DistMult])
def test_objective_gradient_matches_the_full_training_loss(cls, reciprocal):
    """The exact objective: its gradient equals autograd through the trainer's full loss."""
    dataset, path, _ = _chain_world()
    cfg = TrainingConfig(
        regime="1vsall", reciprocal=reciprocal, regularizer="n3", regularizer_weight=0.05
    )
    relations = dataset.num_relations * (2 if reciprocal else 1)
    torch.manual_seed(0)
    model = cls(dataset.num_entities, relations, dim=6).eval()
    ev = FaithfulEvaluator(model, dataset, training=cfg)
    target = ("a0", "g", "c0")
    ids, base = ev._prepare(target)
    keep = base.clone()
    keep[ev._removal(ids, path, "removals")] = False
    kept = dataset.train.mapped_triples[keep]
    if reciprocal:
        inv = torch.stack([kept[:, 2], kept[:, 1] + dataset.num_relations, kept[:, 0]], 1)
        rows_all = torch.cat([kept, inv])
    else:
        rows_all = kept
    h, r, t = rows_all.unbind(1)

    class Full(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self):
            loss = F.cross_entropy(self.model.score_tails(h, r), t)
            if not reciprocal:
                loss = (loss + F.cross_entropy(self.model.score_heads(r, t), h)) / 2
            return loss + 0.05 * self.model.regularization(h, r, t, kind="n3")

    for side in ("tail", "head"):
        ev._use(ids, side)
        relearn = ev._current.relearn  # the endpoint and its neighbours
        assert relearn.numel() == 3  # a0: b0, x0; c0: b0, y0
        assert ev._current.b_linear is not None  # bilinear: the cached queries are checked here
        rows = torch.randn(1, relearn.numel(), model.entity.weight.size(1), requires_grad=True)
        ours = torch.autograd.grad(ev._loss(rows, keep.unsqueeze(0)), rows)[0]
        # brute force: the whole table with the rows replaced, the trainer's 1vsAll loss
        w = rows.detach().clone().requires_grad_(True)
        table = model.entity.weight.detach().index_put((relearn,), w[0])
        params = {f"model.{k}": v.detach() for k, v in model.named_parameters()}
        params["model.entity.weight"] = table
        brute = torch.autograd.grad(functional_call(Full(), params, ()), w)[0]
        assert torch.allclose(ours, brute, atol=1e-6, rtol=1e-4), side


def test_cached_queries_give_the_general_paths_loss_and_gradient(chain):
    """Keys anchored outside the relearned rows: cached queries = the model's own scoring."""
    ev = _evaluator(chain, steps=0)
    width = ev.model.entity.weight.size(1)  # 2 d: ComplEx's real and imaginary parts
    ids, base = ev._prepare(("a0", "g", "c0"))
    keep = torch.stack([base, base.clone()])
    keep[1, ev._removal(ids, chain[3], "removals")] = False  # two arms: all, and no path
    for side in ("tail", "head"):
        ev._use(ids, side)
        cached = ev._current.b_linear
        assert cached is not None and cached[0].shape == (ev._current.b_keys.numel(), width)
        assert torch.equal(cached[1], torch.zeros_like(cached[1]))  # no offset in ComplEx
        rows = torch.randn(2, ev._current.relearn.numel(), width, requires_grad=True)
        fast = ev._loss(rows, keep)
        fast_grad = torch.autograd.grad(fast, rows)[0]
        ev._current.b_linear = None  # the model's score_tails/score_heads every step
        try:
            slow = ev._loss(rows, keep)
            slow_grad = torch.autograd.grad(slow, rows)[0]
        finally:
            ev._current.b_linear = cached
        assert fast.item() == pytest.approx(slow.item(), rel=1e-6)
        assert torch.allclose(fast_grad, slow_grad, atol=1e-6, rtol=1e-5), side


def test_a_distance_model_keeps_the_general_path():
    """TransE is not linear in the candidate row: no cached queries, the objective still exact."""
    dataset, _, _ = _chain_world()
    cfg = TrainingConfig(regime="1vsall", reciprocal=True, regularizer=None)
    torch.manual_seed(0)
    model = TransE(dataset.num_entities, 2 * dataset.num_relations, dim=6).eval()
    ev = FaithfulEvaluator(model, dataset, training=cfg, config=FaithfulConfig(steps=2))
    ids, _ = ev._prepare(("a0", "g", "c0"))
    ev._use(ids, "tail")
    assert ev._current.b_linear is None
    assert ev.necessity(("a0", "g", "c0"), {"none removed": []}).drop("none removed") == 0.0
