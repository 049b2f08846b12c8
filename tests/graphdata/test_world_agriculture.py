"""Tests for the agriculture world: ground truth by brute force, design, rates, hubs.

The world-agnostic checks (split guarantee, closure, symmetry and inverses, determinism and
file round trips) run on every world of :data:`graphdata.worlds.WORLDS` in ``test_worlds.py``;
these check what :mod:`graphdata.worlds.agriculture` states, mostly against a nested-loop join that
does not use :mod:`graphdata.rules`.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest

from graphdata.rules import groundings
from graphdata.typing import LabeledTriple
from graphdata.worlds import (
    AGRICULTURE_RULES,
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
    closure_rounds,
    default_world,
    degrees_by_kind,
    enclosing_quantiles,
    held_out,
    noise_facts,
    relation_pairs,
    train_triples,
)


def _default(seed: int) -> World:
    """The world at the default size (drawn once per seed for the test session)."""
    return default_world("agriculture", seed)


@pytest.fixture(scope="module")
def farming() -> World:
    return _default(0)  # the default size and seed 0: the module docstring's numbers


@pytest.fixture(scope="module")
def stats(farming: World) -> WorldStatistics:
    return world_statistics(farming, max_targets=200)


def _agriculture_groundings(facts: set[LabeledTriple]) -> Groundings:
    """Every grounding of every agriculture rule in ``facts``, by nested loops (no
    graphdata.rules).

    Rule name -> head triple -> the groundings' body triples in body order.
    """
    index = FactIndex(facts)
    pairs, tails, heads, add = index.of, index.tails, index.heads, index.add

    for f, a in pairs("advised_by"):
        add("advisor_inverse", (a, "advises", f), (f, "advised_by", a))
    for f, b in pairs("contracted_with"):
        add("contract_supply", (f, "supplies", b), (f, "contracted_with", b))
    for f, k in pairs("member_of"):
        for b in tails("delivers_to", k):
            add("coop_channel", (f, "supplies", b), (f, "member_of", k), (k, "delivers_to", b))
        for g in heads("member_of", k):
            if f != g:
                body = ((f, "member_of", k), (g, "member_of", k))
                add("co_membership", (f, "co_member", g), *body)
        if "cert_globalgap" in tails("certified", k):
            body = ((f, "member_of", k), (k, "certified", "cert_globalgap"))
            add("group_certification", (f, "certified", "cert_globalgap"), *body)
    for field, f in pairs("part_of"):
        for v in tails("grows", field):
            for c in tails("variety_of", v):
                body = ((field, "part_of", f), (field, "grows", v), (v, "variety_of", c))
                add("field_harvest", (f, "produces", c), *body)
    for f, c in pairs("produces"):
        for p in heads("attacks", c):
            add("host_crop", (f, "at_risk", p), (f, "produces", c), (p, "attacks", c))
    for f, b in pairs("supplies"):
        for r in tails("located_in", f):
            if r in tails("located_in", b):
                body = ((f, "supplies", b), (f, "located_in", r), (b, "located_in", r))
                add("local_sourcing", (f, "local_supplier", b), *body)
    return index.found


@cache
def _rounds(seed: int) -> list[set[LabeledTriple]]:
    """The facts each round of the closure adds to the base facts of ``_default(seed)``."""
    return closure_rounds(_default(seed), _agriculture_groundings)


# ----------------------------------------------------------------------------- design


def test_agriculture_world_sizes_lengths_and_cardinalities(
    farming: World, stats: WorldStatistics
) -> None:
    s = stats
    assert (s.num_entities, s.num_relations) == (862, 22)  # the docstring's numbers at seed 0
    kinds = sorted(set(farming.entity_types.values()))
    assert kinds == [
        "agronomist",
        "buyer",
        "certification",
        "climate_zone",
        "cooperative",
        "crop",
        "farm",
        "field",
        "market",
        "pest",
        "region",
        "soil",
        "station",
        "treatment",
        "variety",
    ]
    assert s.split_triples == {"train": 5145, "valid": 285, "test": 290}
    assert 5000 <= sum(s.split_triples.values()) <= 9000
    lengths = [r.length for r in farming.rules]
    assert (lengths.count(1), lengths.count(2), lengths.count(3)) == (2, 4, 2)
    assert s.targets_by_length == {1: 55, 2: 440, 3: 69} and s.noise_targets == 11
    assert s.targets_by_rule == {
        "advisor_inverse": 44,
        "co_membership": 212,
        "contract_supply": 11,
        "coop_channel": 122,
        "field_harvest": 61,
        "group_certification": 12,
        "host_crop": 94,
        "local_sourcing": 8,
    }
    assert round(s.multi_grounding_share, 2) == 0.05
    card = s.cardinality
    assert card["monitors"] == "1-1" and card["advises"] == "1-N"
    n_to_1 = ("advised_by", "certified", "contracted_with", "grows", "local_supplier")
    n_to_1 += ("located_in", "member_of", "part_of", "processes", "soil_of", "storm_damage")
    assert all(card[r] == "N-1" for r in (*n_to_1, "variety_of"))
    n_to_n = ("at_risk", "attacks", "co_member", "controls", "declares", "delivers_to")
    assert all(card[r] == "N-N" for r in (*n_to_n, "produces", "supplies"))
    assert len(card) == 22
    assert farming.symmetric == ("co_member",)
    assert farming.inverse_pairs == (("advised_by", "advises"),)
    assert farming.shortcuts == (("declares", "produces"),)
    assert farming.rules_text == AGRICULTURE_RULES
    assert len(farming.exceptions) == 106


@pytest.mark.parametrize(("size", "seed"), [(220, 0), (90, 4)])
def test_agriculture_ground_truth_matches_a_brute_force_join(size: int, seed: int) -> None:
    w = _default(seed) if size == 220 else world("agriculture", size=size, seed=seed)
    everything, base = all_triples(w), set(w.base_triples)
    found = _agriculture_groundings(everything)
    assert set(found) == {str(r.name) for r in w.rules}
    heads = {t for by_head in found.values() for t in by_head}
    assert heads - everything == set(w.exceptions)  # closed up to the exceptions
    assert {t for s in SPLITS for t in w.derived_splits[s]} == (everything - base) & heads
    assert {t for s in SPLITS for t in w.noise_splits[s]} == (everything - base) - heads
    in_train, graph = _agriculture_groundings(train_triples(w)), w.train_graph
    for target in held_out(w):
        assert any(target in in_train[name] for name in in_train), target  # split guarantee
        for rule in w.rules:
            expected = in_train[str(rule.name)].get(target, set())
            assert set(groundings(rule, target, graph)) == expected, (rule.name, target)


def test_agriculture_inverse_advisors_and_the_symmetric_co_member_star(farming: World) -> None:
    advised = relation_pairs(farming, "advised_by")
    assert relation_pairs(farming, "advises") == {(a, f) for f, a in advised}
    assert len({f for f, _ in advised}) == len(advised) == 220  # one agronomist a farm
    rule = next(r for r in farming.rules if r.name == "co_membership")
    (inequality,) = rule.inequalities
    assert {inequality.left.name, inequality.right.name} == set(rule.head.variables)
    members: dict[str, set[str]] = {}
    for f, k in relation_pairs(farming, "member_of"):
        members.setdefault(k, set()).add(f)
    pairs = relation_pairs(farming, "co_member")
    expected = {(f, g) for group in members.values() for f in group for g in group if f != g}
    assert pairs == expected  # no exception, no noise: exactly the star, both directions
    assert (len(pairs), max(map(len, members.values()))) == (1060, 14)  # the docstring
    train, targets = train_triples(farming), held_out(farming, "co_member")
    back = sum((g, r, f) in train for f, r, g in targets) / len(targets)
    assert len(targets) == 212 and round(back, 2) == 0.78


def test_agriculture_supply_has_two_bodies_and_feeds_a_local_triangle(farming: World) -> None:
    rules = [r for r in farming.rules if r.head.relation == "supplies"]
    assert [(r.name, r.length) for r in rules] == [("contract_supply", 1), ("coop_channel", 2)]
    everything, noise = all_triples(farming), noise_facts(farming)
    found = _agriculture_groundings(everything)
    facts = {t for t in everything if t[1] == "supplies"}
    contract, coop = (set(found[str(r.name)]) & facts for r in rules)
    assert contract | coop == facts - noise
    assert body_shares(facts, contract, coop, noise) == [0.03, 0.07, 0.87, 0.03]  # seed 0
    assert len(facts) == 677 and not {t for t in farming.base_triples if t[1] == "supplies"}
    kinds = {farming.entity_types[b] for _, _, b in facts}
    assert kinds == {"buyer", "market"}  # cooperatives also sell on wholesale markets
    # local_supplier(F,B): a triangle (farm, buyer, region) through the derived supplies.
    rule = next(r for r in farming.rules if r.name == "local_sourcing")
    assert [a.relation for a in rule.body] == ["supplies", "located_in", "located_in"]
    assert {v for a in rule.body for v in a.variables} == {"F", "B", "R"}
    region = dict(relation_pairs(farming, "located_in"))
    local = {t for t in everything if t[1] == "local_supplier"}
    expected = {(f, "local_supplier", b) for f, _, b in facts if region[f] == region[b]}
    assert local - noise == expected and len(local) == 86 and len(local & noise) == 4
    # Both derived relations follow the closure: supplies in round one, local in round two.
    rounds = [{t[1] for t in new} for new in _rounds(0)]
    assert rounds == [
        {"advises", "certified", "co_member", "produces", "supplies"},
        {"at_risk", "local_supplier"},
    ]
    assert len(held_out(farming, "supplies")) >= 100 and len(held_out(farming, "local_supplier"))


def test_agriculture_withheld_harvests_are_mostly_recorded_storms(farming: World) -> None:
    rule = next(r for r in farming.rules if r.name == "field_harvest")
    assert [a.relation for a in rule.body] == ["part_of", "grows", "variety_of"]
    users = [str(r.name) for r in farming.rules if "produces" in {a.relation for a in r.body}]
    assert users == ["host_crop"]  # a derived relation in another body

    def storms(w: World) -> tuple[int, int, int, int]:
        farm, variety = dict(relation_pairs(w, "part_of")), dict(relation_pairs(w, "grows"))
        crop = dict(relation_pairs(w, "variety_of"))
        fields: dict[tuple[str, str], set[str]] = {}
        for field, f in farm.items():
            fields.setdefault((f, crop[variety[field]]), set()).add(field)
        damaged = dict(relation_pairs(w, "storm_damage"))
        lost = [(f, c) for f, r, c in w.exceptions if r == "produces"]
        cut = {field for pair in lost for field in fields[pair]}
        recorded = sum(fields[pair] <= set(damaged) for pair in lost)
        # The region's station records the storm on each field of the lost crop.
        station = {r: s for s, r in relation_pairs(w, "monitors")}
        region = dict(relation_pairs(w, "located_in"))
        assert all(s == station[region[farm[field]]] for field, s in damaged.items())
        return len(lost), recorded, len(damaged), len(set(damaged) & cut)

    assert storms(farming) == (15, 11, 30, 13)  # the docstring, seed 0
    lost, recorded, damaged, on_cut = storms(farming)
    fields = len(relation_pairs(farming, "part_of"))
    assert (damaged - on_cut) / fields < 0.05 < recorded / lost  # the correlation is real
    assert all("storm_damage" not in {a.relation for a in r.body} for r in farming.rules)
    pooled = [storms(_default(seed))[:2] for seed in (1, 2)]
    assert [p[0] for p in pooled] == [24, 22]
    assert sum(p[1] for p in pooled) / sum(p[0] for p in pooled) >= 0.7


def test_agriculture_group_certification_is_anchored_on_globalgap(farming: World) -> None:
    rule = next(r for r in farming.rules if r.name == "group_certification")
    anchor = rule.body[1]
    assert (anchor.relation, anchor.second.name, anchor.second.is_variable) == (
        "certified",
        "cert_globalgap",
        False,
    )
    assert rule.head.second.name == "cert_globalgap" and not rule.head.second.is_variable
    base, withheld = set(farming.base_triples), set(farming.exceptions)
    group = {
        k
        for k, c in relation_pairs(farming, "certified")
        if c == "cert_globalgap" and farming.entity_types[k] == "cooperative"
    }
    expected = {
        (f, "certified", "cert_globalgap")
        for f, k in relation_pairs(farming, "member_of")
        if k in group
    }
    derived = {t for t in all_triples(farming) if t[1] == "certified"} - base
    assert derived == expected - base - withheld  # no noise for certified
    assert (len(group), len(derived), len(withheld & expected)) == (13, 57, 10)
    assert len(held_out(farming, "certified")) == 12


def test_agriculture_declarations_are_a_correlated_shortcut_of_production(
    farming: World, stats: WorldStatistics
) -> None:
    heads = relation_pairs(farming, "produces")
    given = relation_pairs(farming, "declares", "train")
    cover, precision = len(heads & given) / len(heads), len(heads & given) / len(given)
    assert (round(cover, 2), round(precision, 2)) == (0.91, 0.91)  # the docstring, seed 0
    assert stats.shortcut_cooccurrence[("declares", "produces")] == pytest.approx(cover)
    assert stats.shortcut_precision[("declares", "produces")] == pytest.approx(precision)
    assert all("declares" not in {a.relation for a in r.body} for r in farming.rules)
    # A crop lost to a storm was still declared: the shortcut links most withheld harvests.
    lost = {(f, c) for f, r, c in farming.exceptions if r == "produces"}
    assert len(lost & given) >= 0.8 * len(lost)


def test_agriculture_world_has_crop_soil_and_market_hubs(
    farming: World, stats: WorldStatistics
) -> None:
    train = farming.dataset.train.to_labeled_triples()
    degree = degrees_by_kind(farming, train)
    top = {
        kind: max(degree[kind].values())
        for kind in ("soil", "crop", "pest", "buyer", "agronomist", "market", "region")
    }
    assert top == {
        "soil": 162,
        "crop": 99,
        "pest": 81,
        "buyer": 52,
        "agronomist": 52,
        "market": 35,
        "region": 33,
    }
    assert top["crop"] >= 5 * float(np.median(list(degree["farm"].values())))
    median, p90 = enclosing_quantiles(farming, train)  # 2-hop enclosing subgraphs, by BFS
    assert median == stats.subgraph_median == 1570.5  # the docstring
    assert p90 == round(stats.subgraph_p90) == 2240
    assert 1000 <= stats.subgraph_median and stats.subgraph_p90 <= 5000


def test_agriculture_exception_and_noise_rates() -> None:
    # Pooled over three seeds at the default size, each exception rate within four binomial
    # sd (of the facts only that rule derives). Noise is drawn to the count (base.py step 2)
    # from the facts of the first closure, so the counts are checked nearly exactly.
    rates = {"field_harvest": 0.06, "host_crop": 0.05, "coop_channel": 0.08}
    rates["group_certification"] = 0.1
    withheld_n = {name: [0, 0] for name in rates}
    for seed in (0, 1, 2):
        w = _default(seed)
        everything, base = all_triples(w), set(w.base_triples)
        found, withheld = _agriculture_groundings(everything), set(w.exceptions)
        assert {r for _, r, _ in withheld} == {"produces", "at_risk", "supplies", "certified"}
        assert w.exception_rates == {str(r.name): rates.get(str(r.name), 0.0) for r in w.rules}
        assert not set(found["contract_supply"]) & withheld  # rate 0 wins a shared head
        own = {name: set(found[name]) - base for name in rates}
        own["coop_channel"] -= set(found["contract_supply"])
        for name, derived in own.items():
            withheld_n[name][0] += len(derived & withheld)
            withheld_n[name][1] += len(derived)
        closed = set(base).union(*_rounds(seed))  # the first closure, without noise
        check_noise_counts(w, closed, seed)
    for name, q in rates.items():
        k, n = withheld_n[name]
        assert abs(k / n - q) < 4 * math.sqrt(q * (1 - q) / n), (name, k, n)
