"""Tests for graphdata.synthetic: the planted-rule family world against a brute-force oracle."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphdata.errors import GraphDataError, UnknownLabelError
from graphdata.synthetic import (
    BASE_RELATIONS,
    FAMILY_RULES,
    BodyAtom,
    Explanation,
    HornRule,
    apply_rules,
    family_kg,
)

ANCESTOR_RULES = (
    HornRule.from_string("ancestor(X,Y) <- parent(X,Y)"),
    HornRule.from_string("ancestor(X,Z) <- parent(X,Y), ancestor(Y,Z)"),
    HornRule.from_string("kin(X,Y) <- ancestor(Y,X)"),
)


# --- brute-force oracle: Python sets, hash-indexed nested loops, no NumPy -----------------------


def _groundings(rule, facts):
    """All (head triple, body path) of a chain rule over a set of triples, by nested loops."""
    out_edges, in_edges = defaultdict(list), defaultdict(list)
    for h, r, t in facts:
        out_edges[r, h].append((h, r, t))
        in_edges[r, t].append((h, r, t))
    starts = {x for h, _, t in facts for x in (h, t)}
    found = []

    def walk(x0, at, i, path):
        if i == len(rule.body):
            found.append(((x0, rule.head, at), tuple(path)))
            return
        atom = rule.body[i]
        if atom.inverse:
            for h, r, t in in_edges[atom.relation, at]:
                walk(x0, h, i + 1, [*path, (h, r, t)])
        else:
            for h, r, t in out_edges[atom.relation, at]:
                walk(x0, t, i + 1, [*path, (h, r, t)])

    for x in sorted(starts):
        walk(x, x, 0, [])
    return found


def _brute_force(base, rules):
    """Least fixpoint by repeated rule application; all groundings of derived heads."""
    base = set(base)
    facts = set(base)
    while True:
        new = {head for rule in rules for head, _ in _groundings(rule, facts)} - facts
        if not new:
            break
        facts |= new
    explanations = defaultdict(set)
    for rule in rules:
        for head, path in _groundings(rule, facts):
            if head not in base:
                explanations[head].add((rule, path))
    return facts, dict(explanations)


def _as_sets(explanations):
    return {k: {(e.rule, e.path) for e in v} for k, v in explanations.items()}


def _train(kg):
    return set(kg.dataset.splits["train"].to_labeled_triples())


# --- ground truth against the oracle ----------------------------------------------------------


@pytest.mark.parametrize(
    ("num_people", "seed", "generations"), [(150, 0, 5), (120, 7, 4), (60, 3, 6), (10, 1, 2)]
)
def test_explanations_match_brute_force(num_people, seed, generations):
    kg = family_kg(num_people, seed=seed, num_generations=generations)
    facts, expected = _brute_force(kg.base_triples, FAMILY_RULES)
    assert _as_sets(kg.explanations) == expected
    derived = {x for s in ("train", "valid", "test") for x in kg.derived_triples(s)}
    assert derived == facts - set(kg.base_triples) == set(kg.explanations)
    # each triple's explanations come ordered by rule, without repeats
    for expl in kg.explanations.values():
        ranks = [FAMILY_RULES.index(e.rule) for e in expl]
        assert ranks == sorted(ranks) and len(set(expl)) == len(expl)


@settings(max_examples=25, deadline=None)
@given(
    generations=st.integers(2, 6),
    extra=st.integers(0, 60),
    marriage_rate=st.sampled_from([0.05, 0.5, 1.0]),
    outsider_rate=st.sampled_from([0.0, 0.3, 1.0]),
    seed=st.integers(0, 2**32 - 1),
)
def test_any_small_world_is_exact(generations, extra, marriage_rate, outsider_rate, seed):
    num_people = 2 * generations + extra
    kg = family_kg(
        num_people,
        num_generations=generations,
        seed=seed,
        marriage_rate=marriage_rate,
        outsider_rate=outsider_rate,
    )
    assert len(kg.gender) == num_people  # exactly, whatever the draws
    assert set(kg.generation.values()) == set(range(generations))
    assert _as_sets(kg.explanations) == _brute_force(kg.base_triples, FAMILY_RULES)[1]
    train = _train(kg)
    held = kg.derived_triples("valid") + kg.derived_triples("test")
    assert all(kg.ground_truth_triples(x) <= train for x in held)


def test_recursive_rules_match_brute_force_and_keep_guarantee():
    kg = family_kg(100, seed=2, rules=ANCESTOR_RULES, valid_fraction=0.2, test_fraction=0.2)
    _, expected = _brute_force(kg.base_triples, ANCESTOR_RULES)
    assert _as_sets(kg.explanations) == expected
    train = _train(kg)
    held = kg.derived_triples("valid") + kg.derived_triples("test")
    assert held and all(kg.ground_truth_triples(x) <= train for x in held)


def test_world_has_triples_with_several_explanations():
    # cousin marriages (allowed, never sibling ones) give a child two paths to a grandparent
    kg = family_kg(200, seed=0)
    multi = [k for k, v in kg.explanations.items() if len(v) > 1]
    assert multi
    _, expected = _brute_force(kg.base_triples, FAMILY_RULES)
    assert all(len(expected[k]) == len(kg.explanations[k]) for k in multi)


def test_apply_rules_hand_built_family():
    # ann+bob have cat (f) and dan (m); cat+eli have fay, dan+gil have hal; the first cousins
    # fay and hal marry and have ivy, so ann reaches ivy by two great-grandparent paths.
    base = [
        ("ann", "spouse", "bob"),
        ("ann", "parent", "cat"),
        ("bob", "parent", "cat"),
        ("ann", "parent", "dan"),
        ("bob", "parent", "dan"),
        ("cat", "sister", "dan"),
        ("dan", "brother", "cat"),
        ("eli", "spouse", "cat"),
        ("cat", "parent", "fay"),
        ("eli", "parent", "fay"),
        ("dan", "spouse", "gil"),
        ("dan", "parent", "hal"),
        ("gil", "parent", "hal"),
        ("fay", "spouse", "hal"),
        ("fay", "parent", "ivy"),
        ("hal", "parent", "ivy"),
    ]
    out = apply_rules(base, FAMILY_RULES)
    assert [e.path for e in out["ann", "great_grandparent", "ivy"]] == [
        (("ann", "parent", "cat"), ("cat", "parent", "fay"), ("fay", "parent", "ivy")),
        (("ann", "parent", "dan"), ("dan", "parent", "hal"), ("hal", "parent", "ivy")),
    ]
    assert out["bob", "spouse", "ann"] == (
        Explanation(FAMILY_RULES[0], (("ann", "spouse", "bob"),)),
    )
    assert ("ann", "spouse", "bob") not in out  # base facts have no explanation
    # uncle by marriage through the base spouse(eli, cat) ...
    assert [e.path for e in out["eli", "uncle", "hal"]] == [
        (("eli", "spouse", "cat"), ("cat", "sister", "dan"), ("dan", "parent", "hal"))
    ]
    # ... and aunt by marriage through the derived spouse(gil, dan)
    assert ("gil", "spouse", "dan") in out
    assert [e.path for e in out["gil", "aunt", "fay"]] == [
        (("gil", "spouse", "dan"), ("dan", "brother", "cat"), ("cat", "parent", "fay"))
    ]
    assert [e.path for e in out["dan", "uncle", "fay"]] == [
        (("dan", "brother", "cat"), ("cat", "parent", "fay"))
    ]
    assert [e.path for e in out["fay", "cousin", "hal"]] == [
        (("cat", "parent", "fay"), ("cat", "sister", "dan"), ("dan", "parent", "hal"))
    ]
    assert [e.rule.length for e in out["cat", "grandparent", "ivy"]] == [2]
    assert _as_sets(out) == _brute_force(base, FAMILY_RULES)[1]


# --- paths, split guarantee, ratios -----------------------------------------------------------


def test_every_explanation_is_a_valid_path():
    kg = family_kg(300, seed=4)
    train = _train(kg)
    everything = train | {x for s in ("valid", "test") for x in kg.derived_triples(s)}
    held = set(kg.derived_triples("valid") + kg.derived_triples("test"))
    for (x, rel, z), expl in kg.explanations.items():
        for e in expl:
            assert e.rule.head == rel and e.length == e.rule.length == len(e.path)
            at = x
            for atom, (h, r, t) in zip(e.rule.body, e.path):
                assert r == atom.relation and (h, r, t) in everything
                assert (h, r, t) in train or (x, rel, z) not in held  # the split guarantee
                assert (t if atom.inverse else h) == at
                at = h if atom.inverse else t
            assert at == z


def test_split_guarantee_is_exercised_by_derived_body_triples():
    kg = family_kg(400, seed=5, valid_fraction=0.3, test_fraction=0.3)
    train = _train(kg)
    held = kg.derived_triples("valid") + kg.derived_triples("test")
    assert all(kg.ground_truth_triples(x) <= train for x in held)
    base = set(kg.base_triples)
    # some held-out triple's explanation uses a derived (non-base) body triple
    assert any(kg.ground_truth_triples(x) - base for x in held)
    assert set(kg.base_triples) <= train


@pytest.mark.parametrize(("valid_fraction", "test_fraction"), [(0.1, 0.1), (0.05, 0.25), (0, 0.3)])
def test_split_ratios_per_relation(valid_fraction, test_fraction):
    kg = family_kg(500, seed=1, valid_fraction=valid_fraction, test_fraction=test_fraction)
    per = defaultdict(lambda: defaultdict(int))
    for split in ("train", "valid", "test"):
        for _, r, _ in kg.derived_triples(split):
            per[r][split] += 1
    for counts in per.values():
        n = sum(counts.values())
        assert counts["valid"] == np.floor(valid_fraction * n + 0.5)
        assert counts["test"] == np.floor(test_fraction * n + 0.5)
    num_derived = len(kg.explanations)
    assert abs(len(kg.derived_triples("test")) / num_derived - test_fraction) < 0.01
    assert len(kg.dataset.splits["valid"]) == len(kg.derived_triples("valid"))
    assert len(kg.dataset.splits["train"]) == len(kg.base_triples) + len(
        kg.derived_triples("train")
    )


def test_seed_determinism():
    a, b, c = family_kg(200, seed=3), family_kg(200, seed=3), family_kg(200, seed=4)
    for split in ("train", "valid", "test"):
        assert a.dataset.splits[split].to_labeled_triples() == (
            b.dataset.splits[split].to_labeled_triples()
        )
    assert a.explanations == b.explanations and a.gender == b.gender
    assert a.base_triples != c.base_triples
    assert a.derived_triples("test") != c.derived_triples("test")


# --- the world is a consistent genealogy ------------------------------------------------------


def test_world_consistency():
    kg = family_kg(600, seed=6)
    people = sorted(kg.gender)
    assert len(people) == 600 and people[0] == "person_0000" and people[-1] == "person_0599"
    everything = _train(kg) | {x for s in ("valid", "test") for x in kg.derived_triples(s)}
    by_rel = defaultdict(set)
    for h, r, t in everything:
        assert h != t
        by_rel[r].add((h, t))
    parents = defaultdict(set)
    for p, c in by_rel["parent"]:
        parents[c].add(p)
        assert kg.generation[p] == kg.generation[c] - 1  # hence no one is their own ancestor
    assert max(len(v) for v in parents.values()) == 2
    assert all(len(parents[c]) == 2 for _, c in by_rel["parent"])
    assert all((b, a) in by_rel["spouse"] for a, b in by_rel["spouse"])
    for a, b in by_rel["spouse"]:
        assert kg.gender[a] != kg.gender[b] and kg.generation[a] == kg.generation[b]
        assert not parents[a] & parents[b]  # siblings never marry
    for rel, gender in (("brother", "male"), ("sister", "female")):
        for a, b in by_rel[rel]:
            assert kg.gender[a] == gender and parents[a] == parents[b] and parents[a]
    for rel, gender in (("uncle", "male"), ("aunt", "female")):
        assert all(kg.gender[a] == gender for a, _ in by_rel[rel])
    assert by_rel["child_of"] == {(c, p) for p, c in by_rel["parent"]}
    assert all((b, a) in by_rel["cousin"] for a, b in by_rel["cousin"])


def test_hundred_thousand_triples():
    kg = family_kg(5500, seed=0)
    sizes = {s: len(kg.dataset.splits[s]) for s in ("train", "valid", "test")}
    assert sum(sizes.values()) >= 100_000
    assert len(kg.explanations) == sum(len(kg.derived_triples(s)) for s in sizes)
    train = _train(kg)
    assert all(
        kg.ground_truth_triples(x) <= train
        for x in kg.derived_triples("test") + kg.derived_triples("valid")
    )


@pytest.mark.slow
def test_million_triples():
    kg = family_kg(52_000, seed=0)
    assert sum(len(s) for s in kg.dataset.splits.values()) >= 1_000_000


# --- rules: string forms and parsing ----------------------------------------------------------


def test_rule_strings_and_round_trip():
    assert [str(r) for r in FAMILY_RULES] == [
        "spouse(X,Y) <- spouse(Y,X)",
        "child_of(X,Y) <- parent(Y,X)",
        "grandparent(X,Z) <- parent(X,Y), parent(Y,Z)",
        "uncle(X,Z) <- brother(X,Y), parent(Y,Z)",
        "aunt(X,Z) <- sister(X,Y), parent(Y,Z)",
        "great_grandparent(X,W) <- parent(X,Y), parent(Y,Z), parent(Z,W)",
        "uncle(X,W) <- spouse(X,Y), sister(Y,Z), parent(Z,W)",
        "aunt(X,W) <- spouse(X,Y), brother(Y,Z), parent(Z,W)",
        "cousin(X,W) <- parent(Y,X), brother(Y,Z), parent(Z,W)",
        "cousin(X,W) <- parent(Y,X), sister(Y,Z), parent(Z,W)",
    ]
    assert sorted({r.length for r in FAMILY_RULES}) == [1, 2, 3]
    for rule in FAMILY_RULES:
        assert HornRule.from_string(str(rule)) == rule
    assert HornRule.from_string("child_of(A, B) <- parent(B, A)") == HornRule(
        "child_of", (BodyAtom("parent", inverse=True),)
    )
    long = HornRule("r", tuple(BodyAtom("p") for _ in range(4)))
    assert str(long) == "r(X0,X4) <- p(X0,X1), p(X1,X2), p(X2,X3), p(X3,X4)"
    assert HornRule.from_string(str(long)) == long


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("grandparent(X,Z) parent(X,Y)", "expected a rule like"),
        ("g(X,Z) <- parent(X,Y) parent(Y,Z)", "expected a rule like"),
        ("g(X,Z) <- parent(Y,W), parent(W,Z)", "does not continue the chain from variable X"),
        ("g(X,Z) <- parent(X,Y), parent(Y,X), parent(X,Z)", "to a new variable"),
        ("g(X,Z) <- parent(X,Y)", "ends at Y"),
    ],
)
def test_rule_parse_errors(text, match):
    with pytest.raises(GraphDataError, match=match):
        HornRule.from_string(text)


# --- bad input and lookups --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"num_people": 5}, r"num_people: expected an int >= 2 \* num_generations = 10"),
        ({"num_generations": 1}, "num_generations: expected an int >= 2"),
        ({"valid_fraction": 0.6, "test_fraction": 0.5}, "valid_fraction \\+ test_fraction"),
        ({"test_fraction": -0.1}, r"test_fraction: expected a number in \[0, 1\), got -0.1"),
        ({"marriage_rate": 0}, r"marriage_rate: expected a number in \(0, 1\]"),
        ({"outsider_rate": 1.5}, "outsider_rate"),
        ({"rules": ["grandparent(X,Z) <- parent(X,Y), parent(Y,Z)"]}, "HornRule.from_string"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(GraphDataError, match=match):
        family_kg(**{"num_people": 100, **kwargs})


def test_unknown_body_relation_and_unmeetable_fractions():
    rule = HornRule.from_string("grandparent(X,Z) <- parnet(X,Y), parent(Y,Z)")
    with pytest.raises(UnknownLabelError, match="'parent'"):
        family_kg(100, rules=[rule])
    with pytest.raises(UnknownLabelError, match="parnet"):
        apply_rules([("a", "parent", "b")], [rule])
    # a chain of kin: every held-out kin triple needs the one it is derived from in train
    chain = [HornRule.from_string(f"kin{i + 1}(X,Y) <- kin{i}(X,Y)") for i in range(4)]
    chain.insert(0, HornRule.from_string("kin0(X,Y) <- spouse(Y,X)"))
    with pytest.raises(GraphDataError, match="cannot be met"):
        family_kg(100, rules=chain, valid_fraction=0.45, test_fraction=0.45)


def test_lookups():
    kg = family_kg(100, seed=0)
    base = kg.base_triples[0]
    assert kg.explanations_for(base) == () and kg.ground_truth_triples(base) == set()
    derived = kg.derived_triples("valid")[0]
    assert kg.explanations_for(list(derived)) == kg.explanations[derived]
    with pytest.raises(UnknownLabelError, match="unknown entity label 'person_001'"):
        kg.explanations_for(("person_001", "parent", "person_0002"))
    with pytest.raises(UnknownLabelError, match="grandparent"):
        kg.explanations_for(("person_0001", "grandparnet", "person_0002"))
    with pytest.raises(GraphDataError, match="neither a base fact nor derived"):
        kg.explanations_for(("person_0001", "parent", "person_0001"))
    with pytest.raises(GraphDataError, match="split: expected one of"):
        kg.derived_triples("validation")
    assert set(BASE_RELATIONS) == {r for _, r, _ in kg.base_triples}
    with pytest.raises(GraphDataError, match="triples: expected"):
        apply_rules([("a", "parent")], FAMILY_RULES)
    with pytest.raises(GraphDataError, match="body: expected a non-empty tuple"):
        HornRule("r", ())


def test_num_people_that_cannot_fit_in_memory_is_refused(monkeypatch):
    # 2**63 people at >= 8 KiB each fit no machine: refused at once (it used to allocate or
    # fail inside NumPy). Oracle for the bound: memory for exactly 40 people gives [10, 40].
    from graphdata import _family_rules, checks

    with pytest.raises(GraphDataError, match=r"num_people: expected an int in \[10, [\d,]+\]"):
        family_kg(2**63)
    monkeypatch.setattr(checks, "physical_memory", lambda: 40 * _family_rules.BYTES_PER_PERSON)
    assert len(family_kg(40).gender) == 40
    with pytest.raises(GraphDataError, match=r"\[10, 40\], got 41 \(people take at least 8,192"):
        family_kg(41)
