"""Candidate caps over many targets give one summary line (issue #18, usability)."""

import warnings

import pytest
import torch

from kg.explain.explainer import KGExplainer
from kg.explain.local import (
    CandidatesCapped,
    CandidatesCappedSummary,
    capped_summary,
    local_structure,
)

# Target A = (0, 9, 1): 3 direct edges and 2 two-step paths (via 4 and 5), counts [3, 2].
# Target B = (2, 9, 3): 1 direct edge and 4 two-step paths (via 6, 7, 8, 10), counts [1, 4].
# Target C = (11, 9, 12): 1 direct edge only, never capped.
_EDGES = [(0, 1)] * 3 + [(0, 4), (4, 1), (0, 5), (5, 1), (2, 3)]
_EDGES += [e for m in (6, 7, 8, 10) for e in ((2, m), (m, 3))] + [(11, 12)]
EDGE_INDEX = torch.tensor(_EDGES).t()
EDGE_TYPE = torch.zeros(len(_EDGES), dtype=torch.long)


def _local(target, cap=4):
    return local_structure(EDGE_INDEX, EDGE_TYPE, target, hops=1, max_length=2, max_candidates=cap)


def test_one_target_keeps_its_own_warning_with_the_figures():
    with pytest.warns(CandidatesCapped, match="max_candidates=4") as record:
        local = _local((0, 9, 1))
    assert len(record) == 1 and local.truncated and local.found == (3, 2)
    w = record[0].message
    assert w.target == (0, 9, 1) and w.found == (3, 2) and w.kept == (2, 2)
    assert w.overflow == (False, False) and w.max_candidates == 4 and w.max_length == 2


def test_many_capped_targets_give_exactly_one_summary_line():
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with capped_summary(num_targets=5) as capped:
            locals_ = [_local(t) for t in [(0, 9, 1), (2, 9, 3), (11, 9, 12)] * 2][:5]
    assert len(shown) == 1 and shown[0].category is CandidatesCappedSummary
    assert [x.truncated for x in locals_] == [True, True, False, True, True]
    assert len(capped) == 4
    text = str(shown[0].message)
    assert text.startswith("4 of 5 targets had more than max_candidates=4 candidate paths")
    # Found per length over the four capped targets: length 1 in {3, 1, 3, 1}, 2 in {2, 4, 2, 4}.
    assert "1: 1-3 (median 2), 2: 2-4 (median 3)" in text
    assert "raise max_candidates (--max-candidates)" in text


def test_other_warnings_pass_through_and_nested_blocks_give_one_line():
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with capped_summary(num_targets=2):
            with capped_summary(num_targets=1):
                _local((0, 9, 1))
            warnings.warn("unrelated", RuntimeWarning, stacklevel=1)
            _local((2, 9, 3))
    kinds = sorted(w.category.__name__ for w in shown)
    assert kinds == ["CandidatesCappedSummary", "RuntimeWarning"]
    assert any(str(w.message).startswith("2 of 2 targets") for w in shown)


def test_no_capped_target_no_summary():
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with capped_summary(num_targets=1) as capped:
            _local((11, 9, 12))
    assert shown == [] and capped == []


def test_explain_all_warns_once_over_many_capped_targets(world, teacher, explainer, small_config):
    capped = KGExplainer(teacher, small_config(max_candidates=3)).fit(
        world.dataset, evaluator=explainer.evaluator_
    )
    targets = [t for t in world.derived_triples("test") if t[1] == "grandparent"][:4]
    assert len(targets) == 4
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        results = capped.explain_all(targets, progress=False)
    num_capped = sum(r.truncated for r in results)
    assert num_capped >= 2
    assert [w.category for w in shown] == [CandidatesCappedSummary]
    assert str(shown[0].message).startswith(f"{num_capped} of 4 targets had more than")
