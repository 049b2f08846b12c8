"""explain_parallel: workers sharing one fitted explainer give explain_all's output (issue 22)."""

import dataclasses
import warnings

import pytest

from graphdata.errors import GraphDataError
from kg.explain.explainer import KGExplainer
from kg.explain.local import CandidatesCappedSummary
from kg.explain.parallel import explain_parallel

pytestmark = pytest.mark.filterwarnings("ignore::kg.explain.local.CandidatesCappedSummary")


def _without_time(explanations):
    return [dataclasses.replace(e, seconds=0.0).to_dict() for e in explanations]


def _targets(world, n):
    test = world.derived_triples("test")
    return (test * 3)[:n]


def test_two_workers_equal_the_serial_output_in_order(world, explainer):
    targets = _targets(world, 7)[::-1]  # not the test order: the merge must keep the input's
    serial = explainer.explain_all(targets, progress=False)
    parallel = explain_parallel(explainer, targets, workers=2, threads=1)
    assert [e.target for e in parallel] == [tuple(t) for t in targets]
    assert _without_time(parallel) == _without_time(serial)
    # Blocks of 3 targets per hand-out, more workers than needed, and baselines untouched.
    chunked = explain_parallel(explainer, targets[:4], workers=3, chunk_size=3)
    assert _without_time(chunked) == _without_time(serial[:4])


def test_the_workers_do_not_distil_again(world, explainer, monkeypatch):
    from kg.explain.evaluator import DistilledEvaluator

    def refuse(*args, **kwargs):
        raise AssertionError("a worker re-distilled the evaluator")

    monkeypatch.setattr(DistilledEvaluator, "fit", refuse)  # inherited by the forked workers
    out = explain_parallel(explainer, _targets(world, 2), workers=2)
    assert len(out) == 2 and all(e.mode == "evaluator" for e in out)


def test_capped_targets_give_one_summary_line(world, teacher, explainer, small_config):
    capped = KGExplainer(teacher, small_config(max_candidates=3)).fit(
        world.dataset, evaluator=explainer.evaluator_
    )
    targets = [t for t in world.derived_triples("test") if t[1] == "grandparent"][:4]
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        results = explain_parallel(capped, targets, workers=2)
    num_capped = sum(r.truncated for r in results)
    assert num_capped >= 2
    assert [w.category for w in shown] == [CandidatesCappedSummary]
    assert str(shown[0].message).startswith(f"{num_capped} of 4 targets had more than")


def test_bad_arguments_fail_in_the_parent(world, explainer):
    targets = _targets(world, 2)
    with pytest.raises(GraphDataError, match="workers: expected a positive int, got 0"):
        explain_parallel(explainer, targets, workers=0)
    with pytest.raises(GraphDataError, match="start_method: expected one of"):
        explain_parallel(explainer, targets, start_method="thread")
    with pytest.raises(GraphDataError, match="unknown entity|not_a_person"):
        explain_parallel(explainer, [("not_a_person", "parent", targets[0][2])], workers=2)
    assert explain_parallel(explainer, [], workers=2) == []


def test_explain_all_with_workers_is_explain_parallel(world, explainer):
    targets = _targets(world, 3)
    serial = explainer.explain_all(targets, progress=False)
    assert _without_time(explainer.explain_all(targets, workers=2)) == _without_time(serial)
    with pytest.raises(GraphDataError, match="workers: expected a positive int, got 0"):
        explainer.explain_all(targets, workers=0)
