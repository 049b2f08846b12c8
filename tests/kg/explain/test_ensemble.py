"""The evaluator ensemble: k networks distilled on the same targets, scores averaged."""

import dataclasses

import pytest
import torch

from graphdata.errors import GraphDataError
from kg.explain._network import SubgraphGNN
from kg.explain.evaluator import DistilledEvaluator, EvaluatorConfig, member_seed

CONFIG = EvaluatorConfig(steps=20, batch_size=16, num_train_triples=80, hidden=8, max_length=3)


@pytest.fixture(scope="module")
def fitted(world, teacher):
    """The single evaluator and ensembles of two and three, same config and seed."""
    graph, before = world.dataset.train, torch.get_num_threads()
    torch.set_num_threads(1)  # module fixtures run before the autouse one-thread fixture
    try:
        return {
            k: DistilledEvaluator(dataclasses.replace(CONFIG, ensemble=k)).fit(teacher, graph)
            for k in (1, 2, 3)
        }
    finally:
        torch.set_num_threads(before)


@pytest.fixture(scope="module")
def local(world, small_config, teacher, fitted):
    from kg.explain.explainer import KGExplainer

    explainer = KGExplainer(teacher, small_config()).fit(world.dataset, evaluator=fitted[1])
    with pytest.warns(UserWarning, match="max_candidates=40"):
        return explainer.local_structure(world.derived_triples("test")[0])


def test_ensemble_of_one_is_the_single_evaluator(fitted, world):
    single, pair, triple = fitted[1], fitted[2], fitted[3]
    assert isinstance(single.network_, SubgraphGNN)  # the version-2 file layout
    triples = world.dataset.test.mapped_triples[:8]
    for ensemble in (pair, triple):
        first = ensemble.member(0)
        state, other = single.network_.state_dict(), first.network_.state_dict()
        assert all(torch.equal(state[key], other[key]) for key in state)
        assert torch.equal(first.score_triples(triples), single.score_triples(triples))
        assert first.history_ == single.history_


def test_ensemble_scores_are_the_mean_of_its_members(fitted, world, local):
    triples = world.dataset.test.mapped_triples[:8]
    masks = torch.rand(5, local.num_edges, generator=torch.Generator().manual_seed(0)) < 0.5
    for k in (2, 3):
        ensemble = fitted[k]
        members = [ensemble.member(j) for j in range(k)]
        expected = torch.stack([m.score_triples(triples) for m in members]).mean(0)
        torch.testing.assert_close(ensemble.score_triples(triples), expected)
        with torch.no_grad():
            expected = torch.stack([m.score_local(local, masks) for m in members]).mean(0)
            torch.testing.assert_close(ensemble.score_local(local, masks), expected)
        # The members differ (different initialisation and mini-batch streams).
        assert not torch.allclose(
            members[0].score_triples(triples), members[1].score_triples(triples)
        )
    assert [e["member"] for e in fitted[2].history_].count(1) == len(fitted[1].history_)


def test_all_candidates_of_a_step_in_one_call_per_member(fitted, local):
    ensemble = fitted[3]
    calls = [0, 0, 0]
    handles = [
        member.register_forward_hook(lambda *_, j=j: calls.__setitem__(j, calls[j] + 1))
        for j, member in enumerate(ensemble.network_.members)
    ]
    try:
        keep = torch.ones(7, local.num_edges, dtype=torch.bool)
        assert ensemble.scorer(local)(keep).shape == (7,)
    finally:
        for handle in handles:
            handle.remove()
    assert calls == [1, 1, 1]


def test_ensemble_save_load_round_trip(fitted, world, teacher, tmp_path):
    triples = world.dataset.test.mapped_triples[:6]
    for k in (1, 3):
        path = fitted[k].save(tmp_path / f"ensemble{k}.pt")
        loaded = DistilledEvaluator.load(path)
        assert loaded.config.ensemble == k
        assert torch.equal(
            loaded.score_triples(triples, world.dataset.train), fitted[k].score_triples(triples)
        )
        loaded.check_compatible(teacher, world.dataset.train)
    # A version-2 file (no ``ensemble`` in its config) loads as a single evaluator.
    data = torch.load(tmp_path / "ensemble1.pt", weights_only=True)
    data["version"] = 2
    del data["config"]["ensemble"]
    torch.save(data, tmp_path / "v2.pt")
    old = DistilledEvaluator.load(tmp_path / "v2.pt")
    assert old.config.ensemble == 1
    assert torch.equal(
        old.score_triples(triples, world.dataset.train), fitted[1].score_triples(triples)
    )
    data["version"] = 99
    torch.save(data, tmp_path / "v99.pt")
    with pytest.raises(GraphDataError, match="version 99, this graphlib reads versions up to 3"):
        DistilledEvaluator.load(tmp_path / "v99.pt")


@pytest.mark.parametrize("k", [0, -2, 1.5, True])
def test_bad_ensemble_size_is_rejected(k, world, teacher):
    with pytest.raises(GraphDataError, match=r"ensemble: expected the number k .* got "):
        DistilledEvaluator(dataclasses.replace(CONFIG, ensemble=k)).fit(
            teacher, world.dataset.train
        )


def test_member_index_and_seeds(fitted):
    with pytest.raises(GraphDataError, match=r"index: expected a member index in \[0, 2\)"):
        fitted[2].member(2)
    # Ensembles with seeds 0 and 1 share no member seed.
    assert not {member_seed(0, j) for j in range(5)} & {member_seed(1, j) for j in range(5)}
    assert member_seed(7, 0) == 7


def test_members_are_the_single_evaluators_of_their_seeds(fitted, world, teacher):
    """With ``resample=True`` member j is exactly the single evaluator of seed member_seed(0, j)."""
    triples = world.dataset.test.mapped_triples[:8]
    cfg = dataclasses.replace(CONFIG, seed=member_seed(0, 1))
    single = DistilledEvaluator(cfg).fit(teacher, world.dataset.train)
    member = fitted[2].member(1)
    assert member.score_mean_ == single.score_mean_ and member.score_std_ == single.score_std_
    assert torch.equal(member.score_triples(triples), single.score_triples(triples))
    # Without resampling the members share member 0's sample (and its standardisation).
    shared = DistilledEvaluator(dataclasses.replace(CONFIG, ensemble=2, resample=False))
    shared.fit(teacher, world.dataset.train)
    first, second = shared.member(0), shared.member(1)
    assert (first.score_mean_, first.score_std_) == (second.score_mean_, second.score_std_)
    assert torch.equal(first.score_triples(triples), fitted[1].score_triples(triples))
    assert not torch.allclose(first.score_triples(triples), second.score_triples(triples))
    with pytest.raises(GraphDataError, match="resample: expected a bool"):
        dataclasses.replace(CONFIG, resample=1).validate()
