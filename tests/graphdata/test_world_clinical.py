"""Tests for the clinical world: ground truth by brute force, design, rates, hubs.

The world-agnostic checks (split guarantee, closure, symmetry and inverses, determinism and
file round trips) run on every world of :data:`graphdata.worlds.WORLDS` in ``test_worlds.py``;
these check what :mod:`graphdata.worlds.clinical` states, mostly against a nested-loop join that
does not use :mod:`graphdata.rules`.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from graphdata.rules import groundings
from graphdata.typing import LabeledTriple
from graphdata.worlds import (
    CLINICAL_RULES,
    World,
    WorldStatistics,
    world,
    world_statistics,
)
from graphdata.worlds.base import SPLITS
from tests.graphdata.world_oracles import (
    FactIndex,
    Groundings,
    all_triples,
    body_shares,
    check_noise_counts,
    default_world,
    degrees_by_kind,
    enclosing_quantiles,
    held_out,
    noise_facts,
    relation_pairs,
    train_triples,
)

#: The constant of the inr_clinic rule.
_ANTICOAGULANT = "class_anticoagulant"


def _default(seed: int) -> World:
    """The world at the default size (drawn once per seed for the test session)."""
    return default_world("clinical", seed)


@pytest.fixture(scope="module")
def clinical() -> World:
    return _default(0)  # the default size and seed 0: the module docstring's numbers


@pytest.fixture(scope="module")
def stats(clinical: World) -> WorldStatistics:
    return world_statistics(clinical, max_targets=200)


def _clinical_groundings(facts: set[LabeledTriple]) -> Groundings:
    """Every grounding of every clinical rule in ``facts``, by nested loops (no graphdata.rules).

    Rule name -> head triple -> the groundings' body triples in body order.
    """
    index = FactIndex(facts)
    pairs, tails, add = index.pairs, index.tails, index.add

    for m, p in pairs.get("attends", []):
        add("care_inverse", (p, "patient_of", m), (m, "attends", p))
    for e, d in pairs.get("interacts_with", []):
        add("interaction_symmetry", (d, "interacts_with", e), (e, "interacts_with", d))
    works = pairs.get("works_at", [])
    for m, h in works:
        for k, g in works:
            if g == h and k != m:
                add("colleague", (m, "colleague_of", k), (m, "works_at", h), (k, "works_at", h))
    for p, c in pairs.get("diagnosed_with", []):
        for d in tails("first_line", c):
            add(
                "standard_care",
                (p, "prescribed", d),
                (p, "diagnosed_with", c),
                (c, "first_line", d),
            )
    for p, v in pairs.get("carries", []):
        for c in tails("predisposes", v):
            add("predisposition", (p, "at_risk_of", c), (p, "carries", v), (v, "predisposes", c))
    for p, d in pairs.get("prescribed", []):
        given = (p, "prescribed", d)
        for c in tails("adverse_effect", d):
            add("side_effect", (p, "at_risk_of", c), given, (d, "adverse_effect", c))
        for v in tails("carries", p):
            if d in tails("alters_response", v):
                body = (given, (p, "carries", v), (v, "alters_response", d))
                add("pharmacogenomic", (p, "dose_adjusted", d), *body)
        for e in tails("prescribed", p):
            if e in tails("interacts_with", d):
                body = (given, (p, "prescribed", e), (d, "interacts_with", e))
                add("interaction_adjustment", (p, "dose_adjusted", d), *body)
        if _ANTICOAGULANT in tails("in_class", d):
            for h in tails("admitted_to", p):
                body = (given, (d, "in_class", _ANTICOAGULANT), (p, "admitted_to", h))
                add("inr_clinic", (p, "monitored_at", h), *body)
    return index.found


# ----------------------------------------------------------------------------- design


def test_clinical_world_sizes_lengths_and_cardinalities(
    clinical: World, stats: WorldStatistics
) -> None:
    s = stats
    assert (s.num_entities, s.num_relations) == (680, 20)  # the docstring's numbers at seed 0
    kinds = sorted(set(clinical.entity_types.values()))
    assert kinds == [
        "city",
        "clinician",
        "condition",
        "country",
        "drug",
        "drug_class",
        "hospital",
        "patient",
        "variant",
    ]
    assert s.split_triples == {"train": 7301, "valid": 337, "test": 336}
    lengths = [r.length for r in clinical.rules]
    assert (lengths.count(1), lengths.count(2), lengths.count(3)) == (2, 4, 3)
    assert s.targets_by_length == {1: 94, 2: 494, 3: 64} and s.noise_targets == 21
    assert s.targets_by_rule == {
        "care_inverse": 80,
        "colleague": 76,
        "inr_clinic": 28,
        "interaction_adjustment": 21,
        "interaction_symmetry": 14,
        "pharmacogenomic": 15,
        "predisposition": 73,
        "side_effect": 134,
        "standard_care": 211,
    }
    assert round(s.multi_grounding_share, 2) == 0.06
    assert min(s.targets_by_rule.values()) >= 10 and 400 <= sum(s.targets_by_rule.values()) <= 800
    card = s.cardinality
    assert (card["predisposes"], card["attends"], card["patient_of"]) == ("1-1", "1-N", "N-1")
    n_to_1 = ("located_in", "works_at", "admitted_to", "in_class", "first_line")
    assert all(card[r] == "N-1" for r in (*n_to_1, "adverse_effect", "allergic_to", "monitored_at"))
    n_to_n = ("diagnosed_with", "carries", "alters_response", "interacts_with", "dispensed")
    heads = ("colleague_of", "prescribed", "at_risk_of", "dose_adjusted")
    assert all(card[r] == "N-N" for r in (*n_to_n, *heads))
    assert clinical.symmetric == ("colleague_of", "interacts_with")
    assert clinical.inverse_pairs == (("attends", "patient_of"),)
    assert clinical.shortcuts == (("dispensed", "prescribed"),)
    assert clinical.rules_text == CLINICAL_RULES
    assert len(clinical.exceptions) == 396


@pytest.mark.parametrize(("size", "seed"), [(400, 0), (120, 4)])
def test_clinical_ground_truth_matches_a_brute_force_join(size: int, seed: int) -> None:
    w = _default(seed) if size == 400 else world("clinical", size=size, seed=seed)
    everything, base = all_triples(w), set(w.base_triples)
    found = _clinical_groundings(everything)
    assert set(found) == {str(r.name) for r in w.rules}
    heads = {t for by_head in found.values() for t in by_head}
    assert heads - everything == set(w.exceptions)  # closed up to the exceptions
    assert {t for s in SPLITS for t in w.derived_splits[s]} == (everything - base) & heads
    assert {t for s in SPLITS for t in w.noise_splits[s]} == (everything - base) - heads
    in_train, graph = _clinical_groundings(train_triples(w)), w.train_graph
    for target in held_out(w):
        assert any(target in in_train[name] for name in in_train), target  # split guarantee
        for rule in w.rules:
            expected = in_train[str(rule.name)].get(target, set())
            assert set(groundings(rule, target, graph)) == expected, (rule.name, target)


def test_clinical_inverse_pair_and_symmetric_relations(clinical: World) -> None:
    attends, train, base = (
        relation_pairs(clinical, "attends"),
        train_triples(clinical),
        set(clinical.base_triples),
    )
    assert relation_pairs(clinical, "patient_of") == {(p, m) for m, p in attends}
    assert len({p for _, p in attends}) == len(attends) == 400  # one attending clinician each
    # interacts_with: a base relation drawn in one orientation, completed by its length-1 rule.
    interacts = relation_pairs(clinical, "interacts_with")
    assert interacts == {(e, d) for d, e in interacts} and all(d != e for d, e in interacts)
    drawn = {(d, e) for d, r, e in base if r == "interacts_with"}
    assert len(drawn) == len(interacts) // 2 and not drawn & {(e, d) for d, e in drawn}
    targets = held_out(clinical, "interacts_with")
    assert len(targets) == 14 and all((e, r, d) in base for d, r, e in targets)
    # colleague_of: a star with an inequality, every pair of clinicians of one hospital.
    staff: dict[str, set[str]] = {}
    for m, h in relation_pairs(clinical, "works_at"):
        staff.setdefault(h, set()).add(m)
    clique = {(m, k) for s in staff.values() for m in s for k in s if m != k}
    assert relation_pairs(clinical, "colleague_of") == clique
    targets = held_out(clinical, "colleague_of")
    back = sum((k, r, m) in train for m, r, k in targets) / len(targets)
    assert round(back, 2) == 0.79  # the docstring, seed 0


def test_clinical_prescriptions_are_derived_first_and_feed_four_rules(clinical: World) -> None:
    base = set(clinical.base_triples)
    assert not {t for t in base if t[1] == "prescribed"}
    # Round 1 of the closure (the rules on the base facts) derives prescriptions; the four
    # rules with a prescribed body atom derive nothing before round 2.
    first = _clinical_groundings(base)
    later = ("side_effect", "pharmacogenomic", "interaction_adjustment", "inr_clinic")
    assert first["standard_care"] and not set(later) & set(first)
    uses = [r for r in clinical.rules if "prescribed" in {a.relation for a in r.body}]
    assert sorted(str(r.name) for r in uses) == sorted(later)
    assert len(held_out(clinical, "prescribed")) >= 100
    graph = clinical.train_graph
    for rule in uses:
        targets = [t for t in held_out(clinical) if groundings(rule, t, graph)]
        assert len(targets) >= 10, rule.name
        for target in targets:
            for body in groundings(rule, target, graph):
                assert body[0][1] == "prescribed" and body[0] not in base


def test_clinical_withheld_prescriptions_mostly_carry_an_allergy(clinical: World) -> None:
    allergies = relation_pairs(clinical, "allergic_to")
    withheld = [(p, d) for p, r, d in clinical.exceptions if r == "prescribed"]
    covered = sum(pair in allergies for pair in withheld)
    assert len(withheld) == 123
    assert round(covered / len(withheld), 2) == 0.79  # the docstring, seed 0
    assert round(covered / len(allergies), 2) == 0.68
    assert not allergies & relation_pairs(clinical, "prescribed")  # no allergy to a prescribed drug
    # Allergies are base facts about patients and drugs, in no rule body.
    assert all(r.head.relation != "allergic_to" for r in clinical.rules)
    assert all(a.relation != "allergic_to" for r in clinical.rules for a in r.body)
    # The same correlation at another seed.
    other = _default(1)
    allergies = relation_pairs(other, "allergic_to")
    withheld = [(p, d) for p, r, d in other.exceptions if r == "prescribed"]
    assert 0.75 < sum(pair in allergies for pair in withheld) / len(withheld) < 0.95
    assert not allergies & relation_pairs(other, "prescribed")


def test_clinical_at_risk_of_has_two_bodies_one_through_prescribed(clinical: World) -> None:
    everything = all_triples(clinical)
    found = _clinical_groundings(everything)
    assert [str(r.name) for r in clinical.rules if r.head.relation == "at_risk_of"] == [
        "side_effect",
        "predisposition",
    ]
    facts = {t for t in everything if t[1] == "at_risk_of"}
    by_drug, by_allele = set(found["side_effect"]) & facts, set(found["predisposition"]) & facts
    noise = noise_facts(clinical)
    assert by_drug | by_allele == facts - noise
    shares = body_shares(facts, by_drug, by_allele, noise)
    assert shares == [0.03, 0.66, 0.26, 0.05]  # the docstring, seed 0
    in_train = _clinical_groundings(train_triples(clinical))
    targets = held_out(clinical, "at_risk_of")
    only_drug = sum(
        t in in_train["side_effect"] and t not in in_train["predisposition"] for t in targets
    )
    only_allele = sum(
        t in in_train["predisposition"] and t not in in_train["side_effect"] for t in targets
    )
    assert only_drug >= 50 and only_allele >= 50, (only_drug, only_allele)
    # predisposes is 1-1: each risk allele to its own condition.
    risk = relation_pairs(clinical, "predisposes")
    assert len({v for v, _ in risk}) == len({c for _, c in risk}) == len(risk) == 10


def test_clinical_dose_adjusted_has_two_triangle_bodies(clinical: World) -> None:
    everything = all_triples(clinical)
    found = _clinical_groundings(everything)
    facts = {t for t in everything if t[1] == "dose_adjusted"}
    by_gene, by_drug = (
        set(found["pharmacogenomic"]) & facts,
        set(found["interaction_adjustment"]) & facts,
    )
    noise = noise_facts(clinical)
    assert by_gene | by_drug == facts - noise
    shares = body_shares(facts, by_gene, by_drug, noise)
    assert shares == [0.07, 0.32, 0.55, 0.06]  # the docstring, seed 0
    # Triangles: each grounding closes a cycle over three entities, one atom parallel to the
    # head (the patient's prescription of the drug).
    for name in ("pharmacogenomic", "interaction_adjustment"):
        for (p, _, d), bodies in found[name].items():
            for body in bodies:
                assert body[0] == (p, "prescribed", d)
                ends = [{x, y} for x, _, y in body]
                assert len(set().union(*ends)) == 3 and all(len(e) == 2 for e in ends)


def test_clinical_inr_clinic_is_anchored_on_a_constant(clinical: World) -> None:
    everything, train = all_triples(clinical), clinical.dataset.train.to_labeled_triples()
    rule = next(r for r in clinical.rules if r.name == "inr_clinic")
    constants = [t.name for a in rule.body for t in (a.first, a.second) if not t.is_variable]
    assert constants == [_ANTICOAGULANT]
    assert clinical.entity_types[_ANTICOAGULANT] == "drug_class"
    anticoagulants = {d for d, k in relation_pairs(clinical, "in_class") if k == _ANTICOAGULANT}
    assert anticoagulants  # one drug per class at every size
    prescribed, admitted = (
        relation_pairs(clinical, "prescribed"),
        dict(relation_pairs(clinical, "admitted_to")),
    )
    monitored = {(p, h) for p, r, h in everything if r == "monitored_at"}
    on_anticoagulant = {p for p, d in prescribed if d in anticoagulants}
    withheld = {(p, h) for p, r, h in clinical.exceptions if r == "monitored_at"}
    assert monitored | withheld == {(p, admitted[p]) for p in on_anticoagulant}
    assert len(monitored) >= 100 and len(held_out(clinical, "monitored_at")) == 28
    # The constant is three hops from every hospital: no neighbour of a hospital touches it.
    near: dict[str, set[str]] = {}
    for h, _, t in train:
        near.setdefault(h, set()).add(t)
        near.setdefault(t, set()).add(h)
    hospitals = [e for e, kind in clinical.entity_types.items() if kind == "hospital"]
    assert all(_ANTICOAGULANT not in near[x] for h in hospitals for x in near[h])


def test_clinical_shortcut_is_correlated_not_equivalent(
    clinical: World, stats: WorldStatistics
) -> None:
    # A pharmacy dispenses most prescriptions, but prescribed's body is diagnosis + first line.
    heads, given = (
        relation_pairs(clinical, "prescribed"),
        relation_pairs(clinical, "dispensed", "train"),
    )
    cover, precision = len(heads & given) / len(heads), len(heads & given) / len(given)
    assert (round(cover, 2), round(precision, 2)) == (0.82, 0.88)  # the docstring, seed 0
    assert stats.shortcut_cooccurrence[("dispensed", "prescribed")] == pytest.approx(cover)
    assert stats.shortcut_precision[("dispensed", "prescribed")] == pytest.approx(precision)
    assert all(
        "dispensed" not in {a.relation for a in r.body}
        for r in clinical.rules
        if r.head.relation == "prescribed"
    )
    other = _default(2)
    heads, given = relation_pairs(other, "prescribed"), relation_pairs(other, "dispensed", "train")
    assert 0.7 < len(heads & given) / len(heads) < 0.9
    assert 0.8 < len(heads & given) / len(given) < 0.95


def test_clinical_world_has_drug_condition_hospital_and_variant_hubs(
    clinical: World, stats: WorldStatistics
) -> None:
    train = clinical.dataset.train.to_labeled_triples()
    degree = degrees_by_kind(clinical, train)
    top = {
        kind: max(degree[kind].values()) for kind in ("drug", "condition", "hospital", "variant")
    }
    assert top == {"drug": 188, "condition": 171, "hospital": 84, "variant": 67}  # the docstring
    assert top["drug"] >= 10 * float(np.median(list(degree["drug"].values())))

    median, p90 = enclosing_quantiles(clinical, train)  # 2-hop enclosing subgraphs, by BFS
    assert median == stats.subgraph_median == 1055  # the docstring
    assert p90 == round(stats.subgraph_p90) == 2977
    assert 1000 <= stats.subgraph_median and stats.subgraph_p90 <= 5000


def test_clinical_exception_and_noise_rates() -> None:
    # Pooled over three seeds at the default size, each exception rate within four binomial
    # sd. Noise is drawn to the count (base.py step 2) from the facts of the first closure
    # (rebuilt here without noise), so the counts are checked nearly exactly.
    rates = {
        "standard_care": 0.12,
        "side_effect": 0.15,
        "predisposition": 0.1,
        "pharmacogenomic": 0.1,
        "interaction_adjustment": 0.2,
        "inr_clinic": 0.05,
    }
    withheld_n = {name: [0, 0] for name in rates}
    for seed in (0, 1, 2):
        w = _default(seed)
        everything, base = all_triples(w), set(w.base_triples)
        found, withheld = _clinical_groundings(everything), set(w.exceptions)
        heads = {"prescribed", "at_risk_of", "dose_adjusted", "monitored_at"}
        assert {r for _, r, _ in withheld} == heads
        assert w.exception_rates == {str(r.name): rates.get(str(r.name), 0.0) for r in w.rules}
        # predisposition derives in round 1, side_effect from round 2 (through prescribed):
        # where both derive a fact, predisposition's rate applied; pharmacogenomic and
        # interaction_adjustment derive in the same round, and the smaller rate applies.
        own = {name: set(found[name]) for name in rates}
        own["side_effect"] -= own["predisposition"]
        own["interaction_adjustment"] -= own["pharmacogenomic"]
        for name, derived in own.items():
            withheld_n[name][0] += len(derived & withheld)
            withheld_n[name][1] += len(derived)
        assert set(w.noise_rates) == {"prescribed", "at_risk_of", "dose_adjusted"}
        closed = set(base)  # the first closure: facts grounded without noise, by rounds
        while True:
            new = (
                set().union(*map(set, _clinical_groundings(closed).values())) & everything
            ) - closed
            if not new:
                break
            closed |= new
        # a noise fact that an off-label prescription (noise drawn after it) grounds becomes a
        # derived fact: at most a couple per relation
        check_noise_counts(w, closed, seed, tolerance=0.01)
    for name, q in rates.items():
        k, n = withheld_n[name]
        assert abs(k / n - q) < 4 * math.sqrt(q * (1 - q) / n), (name, k, n)
