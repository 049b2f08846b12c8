import pytest

from graphdata.errors import GraphDataError, UnknownLabelError
from graphdata.synthetic import FAMILY_RULES, family_kg
from kg.explain.ground_truth import canonical_triple, equivalence_classes, ground_truth_scores

CLASSES = equivalence_classes(FAMILY_RULES)


def test_length_one_rules_join_inverse_and_symmetric_forms():
    assert canonical_triple(("b", "child_of", "a"), CLASSES) == canonical_triple(
        ("a", "parent", "b"), CLASSES
    )
    assert canonical_triple(("x", "spouse", "y"), CLASSES) == canonical_triple(
        ("y", "spouse", "x"), CLASSES
    )
    # Different facts stay different; relations without a length-1 rule are left alone.
    assert canonical_triple(("a", "child_of", "b"), CLASSES) != canonical_triple(
        ("a", "parent", "b"), CLASSES
    )
    assert canonical_triple(("b", "grandparent", "a"), CLASSES) == ("b", "grandparent", "a")


@pytest.fixture(scope="module")
def small_world():
    return family_kg(40, seed=0)


def _target(world, relation, length):
    return next(
        t
        for t in world.derived_triples("test")
        if t[1] == relation and min(e.length for e in world.explanations_for(t)) == length
    )


def test_scores_by_hand(small_world):
    target = _target(small_world, "grandparent", 2)
    explanations = small_world.explanations_for(target)
    body = explanations[0].path
    truth = small_world.ground_truth_triples(target)
    exact = ground_truth_scores(body, small_world, target)
    assert exact.hit and exact.best_f1 == 1.0 and exact.precision == 1.0
    assert exact.recall == pytest.approx(2 / len(truth)) and exact.rule_length == 2
    # One body triple plus one wrong triple: P = 1/2, R = 1/|T|, no full body.
    wrong = ("nobody", "sister", "someone")
    half = ground_truth_scores([body[0], wrong], small_world, target)
    assert half.precision == 0.5 and not half.hit
    assert half.recall == pytest.approx(1 / len(truth))
    assert half.f1 == pytest.approx(2 * 0.5 * half.recall / (0.5 + half.recall))
    assert half.jaccard == pytest.approx(1 / (len(truth) + 1))
    assert half.best_f1 == pytest.approx(2 * 0.5 * 0.5 / (0.5 + 0.5))
    empty = ground_truth_scores([], small_world, target)
    assert (empty.precision, empty.recall, empty.f1, empty.hit) == (0.0, 0.0, 0.0, False)


def test_inverse_triples_count_as_the_rule_body(small_world):
    target = _target(small_world, "grandparent", 2)
    body = small_world.explanations_for(target)[0].path
    assert [r for _, r, _ in body] == ["parent", "parent"]
    # parent(x, y) said as child_of(y, x): the same facts, so the same scores.
    inverted = [(t, "child_of", h) for h, _, t in body]
    direct = ground_truth_scores(body, small_world, target)
    scores = ground_truth_scores(inverted, small_world, target)
    assert scores == direct and scores.hit and scores.best_f1 == 1.0
    # Reversing without the inverse relation names other facts: no credit.
    reversed_only = [(t, "parent", h) for h, _, t in body]
    assert ground_truth_scores(reversed_only, small_world, target).precision == 0.0


def test_bad_targets(small_world):
    base = small_world.base_triples[0]
    with pytest.raises(GraphDataError, match="base fact"):
        ground_truth_scores([], small_world, base)
    with pytest.raises(UnknownLabelError, match="Closest known entity labels"):
        ground_truth_scores([], small_world, ("person_00001", "parent", "person_0002"))


def test_unfolding_replaces_derived_triples_by_their_bodies(small_world):
    from kg.explain.ground_truth import unfold_triples

    target = _target(small_world, "great_grandparent", 3)
    body = small_world.explanations_for(target)[0].path  # parent, parent, parent
    (x, _, y), (_, _, z), (_, _, w) = body
    # grandparent(x, z) is a derived training triple whose first grounding goes through y.
    shortcut = [(x, "grandparent", z), body[2]]
    grounding = small_world.explanations[(x, "grandparent", z)][0].path
    assert unfold_triples(shortcut, small_world) == (*grounding, body[2])
    raw = ground_truth_scores(shortcut, small_world, target)
    unfolded = ground_truth_scores(shortcut, small_world, target, unfold=True)
    assert not raw.hit and raw.precision == 0.5
    assert unfolded.f1 >= raw.f1
    if grounding == body[:2]:  # the shortcut stands for exactly this rule body
        assert unfolded.hit and unfolded.best_f1 == 1.0
    # Base facts and length-1-only derived triples are left as they are.
    assert unfold_triples(body, small_world) == body
    child_of = next(t for t in small_world.derived_triples("train") if t[1] == "child_of")
    assert unfold_triples([child_of], small_world) == (child_of,)
