import pytest
import torch

from graphdata.errors import GraphDataError
from kg.explain.local import local_structure
from kg.explain.search import MIN_GAIN, MIN_PATHS, SELECTION, greedy_search

#: The plain greedy these tests were written for (greedy_search's defaults before issue #16 gave
#: it ExplainerConfig's: min_gain .25, selection "shortest", min_paths 1); a call's keywords win.
PLAIN = {"min_gain": 0.05, "selection": "best", "min_paths": 0}


def _search(*args, **kwargs):
    return greedy_search(*args, **{**PLAIN, **kwargs})


def test_search_defaults_are_the_explainer_config_defaults():
    import inspect

    from kg.explain import ExplainerConfig

    cfg, params = ExplainerConfig(), inspect.signature(greedy_search).parameters
    for name in ("max_paths", "min_gain", "selection"):
        assert params[name].default == getattr(cfg, name)
    assert (params["min_gain"].default, params["selection"].default) == (MIN_GAIN, SELECTION)
    assert params["min_paths"].default == MIN_PATHS == 1


# A hand-built graph around the target (0, 9, 1):
#   planted  0 -a-> 2 -b-> 1      distractors  0 -c-> 3 -c-> 1,  0 -d-> 1,  0 -a-> 4 -e-> 1
EDGES = [(0, 0, 2), (2, 1, 1), (0, 2, 3), (3, 2, 1), (0, 3, 1), (0, 0, 4), (4, 4, 1), (0, 9, 1)]
TARGET = (0, 9, 1)


def _local(**kwargs):
    triples = torch.tensor(EDGES)
    return local_structure(triples[:, [0, 2]].t(), triples[:, 1], TARGET, hops=1, **kwargs)


def _path_triples(local, p):
    triples = local.triples.tolist()
    return {tuple(triples[e]) for e in local.paths[p]}


def test_local_structure_excludes_target_and_finds_all_paths():
    local = _local(max_length=2)
    assert tuple(TARGET) not in {tuple(t) for t in local.triples.tolist()}
    found = {frozenset(_path_triples(local, p)) for p in range(len(local.paths))}
    expected = {
        frozenset({(0, 0, 2), (2, 1, 1)}),
        frozenset({(0, 2, 3), (3, 2, 1)}),
        frozenset({(0, 3, 1)}),
        frozenset({(0, 0, 4), (4, 4, 1)}),
    }
    assert found == expected
    assert [len(p) for p in local.paths] == sorted(len(p) for p in local.paths)  # shortest first


def _oracle(local, planted, noise=0.01):
    """Score 1 exactly when every triple of the planted path is present, plus a small edge count."""
    edges = list(local.paths[planted])

    def score(keep):
        return keep[:, edges].all(dim=1).float() + noise * keep.float().sum(dim=1)

    return score


def test_recovers_planted_path_with_oracle_teacher():
    local = _local(max_length=2)
    planted = next(
        p for p in range(len(local.paths)) if _path_triples(local, p) == {(0, 0, 2), (2, 1, 1)}
    )
    result = _search(local.paths, local.num_edges, _oracle(local, planted), max_paths=3)
    assert result.chosen == (planted,)
    assert result.stop_reason == "min_gain"
    m = local.num_edges
    assert result.full_score == pytest.approx(1 + 0.01 * m)
    assert result.empty_score == pytest.approx(0.0)
    assert result.explanation_score == pytest.approx(1 + 0.02)  # f(S): the path's two triples
    assert result.complement_score == pytest.approx(0.01 * (m - 2))
    assert result.individual == pytest.approx((1.02,))
    # J(S) - J(empty) = (1.02 - 0.01 (m - 2)) - (0 - 1 - 0.01 m)
    assert result.gains[0] == pytest.approx(2.04)


def _additive(local, values):
    """f = sum of the values of the paths whose triples are all present (independent paths)."""

    def score(keep):
        out = torch.zeros(keep.size(0))
        for p, value in values.items():
            out += value * keep[:, list(local.paths[p])].all(dim=1).float()
        return out

    return score


def test_budget_stop_rule():
    local = _local(max_length=2)
    scorer = _additive(local, {0: 0.2, 1: 0.5, 2: 0.3, 3: 0.4})
    result = _search(local.paths, local.num_edges, scorer, max_paths=2, min_gain=0.0)
    assert result.stop_reason == "budget"
    assert result.chosen == (1, 3)  # best first, then second best
    assert result.gains == pytest.approx((1.0, 0.8))  # J gains twice the value: f(S) - f(G \ S)


def test_min_gain_stop_rule():
    local = _local(max_length=2)
    scorer = _additive(local, {0: 0.6, 1: 0.35, 2: 0.04, 3: 0.01})
    total = 2 * (0.6 + 0.35 + 0.04 + 0.01)
    result = _search(local.paths, local.num_edges, scorer, max_paths=4, min_gain=0.05)
    assert result.chosen == (0, 1)
    assert result.stop_reason == "min_gain"
    assert min(result.gains) >= 0.05 * total
    everything = _search(local.paths, local.num_edges, scorer, max_paths=4, min_gain=0.0)
    assert everything.stop_reason == "budget" and len(everything.chosen) == 4


def test_synergy_redundant_paths_found_together_but_not_by_deletion_alone():
    local = _local(max_length=2)
    a, b = 0, 3  # either path alone gives the full score (logical OR)

    def scorer(keep):
        alone = [keep[:, list(local.paths[p])].all(dim=1) for p in (a, b)]
        return (alone[0] | alone[1]).float()

    both = _search(local.paths, local.num_edges, scorer, max_paths=3)
    assert set(both.chosen) == {a, b}
    assert both.complement_score == 0.0 and both.explanation_score == 1.0
    # Deleting either path alone changes nothing: the reference's deletion objective stops.
    necessity = _search(local.paths, local.num_edges, scorer, objective="necessity")
    assert necessity.chosen == () and necessity.stop_reason == "min_gain"


def test_each_step_scores_all_candidates_in_one_call():
    local = _local(max_length=2)
    calls = []

    def scorer(keep):
        calls.append(keep.size(0))
        return _additive(local, {0: 0.2, 1: 0.5, 2: 0.3, 3: 0.4})(keep)

    result = _search(local.paths, local.num_edges, scorer, max_paths=2, min_gain=0.0)
    # base (G, empty), step 1 (4 candidates x keep/drop), step 2 (3 x 2), final (2 alone + S + G\S)
    assert calls == [2, 8, 6, 4]
    assert result.num_scored == sum(calls)


def test_no_paths_and_no_signal():
    empty = _search([], 3, lambda keep: torch.zeros(keep.size(0)))
    assert empty.chosen == () and empty.stop_reason == "no_paths"
    flat = _search([(0,), (1,)], 2, lambda keep: torch.ones(keep.size(0)))
    assert flat.chosen == () and flat.stop_reason == "no_signal"


def test_bad_arguments():
    with pytest.raises(GraphDataError, match="objective: expected one of"):
        _search([(0,)], 1, lambda k: k.float().sum(1), objective="greedy")
    with pytest.raises(GraphDataError, match="max_paths: expected a positive int"):
        _search([(0,)], 1, lambda k: k.float().sum(1), max_paths=0)
    with pytest.raises(GraphDataError, match="min_gain"):
        _search([(0,)], 1, lambda k: k.float().sum(1), min_gain=-0.1)
    with pytest.raises(GraphDataError, match="head != tail"):
        local_structure(torch.tensor([[0], [1]]), torch.tensor([0]), (1, 0, 1))


def test_shortest_selection_prefers_the_fewest_triples_that_suffice():
    # Path 0 (two triples) carries 0.6 of the score, path 1 (three triples) 1.0: "best" takes
    # path 1; "shortest" takes path 0, the fewest triples whose gain reaches the threshold.
    def scorer(keep):
        return (
            0.6 * (keep[:, 0] & keep[:, 1]).float()
            + 1.0 * (keep[:, 2] & keep[:, 3] & keep[:, 4]).float()
        )

    paths, m = [(0, 1), (2, 3, 4)], 5
    best = _search(paths, m, scorer, max_paths=1, objective="sufficiency")
    short = _search(paths, m, scorer, max_paths=1, objective="sufficiency", selection="shortest")
    assert best.chosen == (1,) and short.chosen == (0,)
    # A threshold that the short path does not reach leaves the long one.
    strict = _search(
        paths, m, scorer, max_paths=1, min_gain=0.5, objective="sufficiency", selection="shortest"
    )
    assert strict.chosen == (1,)
    with pytest.raises(GraphDataError, match="selection: expected one of"):
        _search(paths, m, scorer, selection="longest")


def test_min_paths_takes_the_best_path_below_the_threshold():
    local = _local(max_length=2)
    scorer = _additive(local, {0: 0.1, 1: 0.1, 2: 0.1, 3: 0.3})
    # Path 3 adds 2 * 0.3 of J(G) - J(empty) = 1.2, half of it: under min_gain = 0.6.
    strict = _search(local.paths, local.num_edges, scorer, min_gain=0.6)
    assert strict.chosen == () and strict.stop_reason == "min_gain"
    for selection in ("best", "shortest"):
        one = _search(
            local.paths, local.num_edges, scorer, min_gain=0.6, min_paths=1, selection=selection
        )
        # The first path needs only a positive gain; the second is held to min_gain again.
        assert one.chosen == (3,) and one.gains == pytest.approx((0.6,))
        assert one.stop_reason == "min_gain"
    with pytest.raises(GraphDataError, match="min_paths: expected an int >= 0"):
        _search(local.paths, local.num_edges, scorer, min_paths=-1)
