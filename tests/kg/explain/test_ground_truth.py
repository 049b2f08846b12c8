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


def _mirror(world, target, grounding):
    """The grounding of the reversed target over the same people (the same proof)."""
    h, r, t = target
    people = {x for a, _, b in grounding.path for x in (a, b)}
    (mirror,) = [
        e
        for e in world.explanations[(t, r, h)]
        if {x for a, _, b in e.path for x in (a, b)} == people
    ]
    return mirror


def test_symmetric_targets_accept_the_mirrored_proof(small_world):
    from kg.explain.ground_truth import is_symmetric

    assert is_symmetric(small_world, "cousin") and not is_symmetric(small_world, "aunt")
    target = next(t for t in small_world.explanations if t[1] == "cousin")
    (grounding,) = small_world.explanations_for(target)
    mirror = _mirror(small_world, target, grounding)
    # parent(Y,X), sister(Y,Z), parent(Z,W) against parent(Z,W), brother(Z,Y), parent(Y,X):
    # the two parent facts are shared, the sibling link is named from the other sibling.
    shared = set(grounding.path) & set(mirror.path)
    assert len(shared) == 2 and set(mirror.path) != set(grounding.path)
    scores = ground_truth_scores(mirror.path, small_world, target)
    assert scores.f1 == 1.0 and scores.hit and scores.best_f1 == 1.0
    strict = ground_truth_scores(mirror.path, small_world, target, symmetric_targets=False)
    assert strict.precision == strict.recall == strict.f1 == pytest.approx(2 / 3)
    assert not strict.hit
    # The target's own body scores the same either way; both renderings at once are one
    # extra triple: P = 3/4 against the better rendering.
    assert ground_truth_scores(grounding.path, small_world, target).f1 == 1.0
    both = ground_truth_scores(grounding.path + mirror.path, small_world, target)
    assert (both.precision, both.recall, both.hit) == (0.75, 1.0, True)


def test_symmetric_targets_choose_a_rendering_per_grounding():
    world = family_kg(80, seed=0)
    target = next(
        t for t in world.explanations if t[1] == "cousin" and len(world.explanations[t]) == 2
    )
    first, second = world.explanations_for(target)
    # The first proof as the target's body, the second as its mirror: both proofs, exactly.
    guess = first.path + _mirror(world, target, second).path
    scores = ground_truth_scores(guess, world, target)
    assert (scores.precision, scores.recall, scores.f1) == (1.0, 1.0, 1.0)
    assert scores.num_true == len(set(guess))
    strict = ground_truth_scores(guess, world, target, symmetric_targets=False)
    assert strict.f1 < 1.0


def test_the_reverse_sibling_edge_is_not_an_aunt_body(small_world):
    # aunt(X,Z) <- sister(X,Y), parent(Y,Z): the reverse edge (brother or sister)(Y,X) does
    # not say that X is a woman, and aunt is not symmetric: half the body, either reading.
    target = next(
        t
        for t in small_world.explanations
        if t[1] == "aunt" and [e.length for e in small_world.explanations[t]] == [2]
    )
    (sister, parent) = small_world.explanations_for(target)[0].path
    (reverse,) = [
        (y, r, x)
        for (y, r, x) in small_world.base_triples
        if (y, x) == (sister[2], sister[0]) and r in ("brother", "sister")
    ]
    for symmetric in (True, False):
        scores = ground_truth_scores(
            [reverse, parent], small_world, target, symmetric_targets=symmetric
        )
        assert scores.f1 == 0.5 and not scores.hit
