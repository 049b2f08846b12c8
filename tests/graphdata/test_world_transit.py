"""Tests for the transit world: ground truth by brute force, design, rates, hubs.

The world-agnostic checks (split guarantee, closure, symmetry and inverses, determinism and
file round trips) run on every world of :data:`graphdata.worlds.WORLDS` in ``test_worlds.py``;
these check what :mod:`graphdata.worlds.transit` states, mostly against a nested-loop join that
does not use :mod:`graphdata.rules`.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import cache

import pytest

from graphdata.errors import GraphDataError
from graphdata.rules import groundings, parse_rules
from graphdata.typing import LabeledTriple
from graphdata.worlds import (
    TRANSIT_RULES,
    World,
    WorldStatistics,
    transit_world,
    world,
    world_statistics,
)
from graphdata.worlds.base import SPLITS
from tests.graphdata.world_oracles import (
    FactIndex,
    Groundings,
    all_triples,
    check_noise_counts,
    closure_rounds,
    default_world,
    degrees_by_kind,
    enclosing_quantiles,
    entity_kinds,
    exception_pairs,
    held_out,
    noise_pairs,
    relation_pairs,
    train_triples,
)


def _default(seed: int) -> World:
    """The world at the default size (drawn once per seed for the test session)."""
    return default_world("transit", seed)


def _transit_groundings(facts: set[LabeledTriple]) -> Groundings:
    """Every grounding of every transit rule in ``facts``, by nested loops.

    Rule name -> head triple -> the groundings' body triples in body order; no
    :mod:`graphdata.rules`.
    """
    index = FactIndex(facts)
    pairs, tails, heads, add = index.of, index.tails, index.heads, index.add

    for x, s in pairs("terminates_at"):
        add("timetable_termini", (x, "serves", s), (x, "terminates_at", s))
    for x, o in pairs("operated_by"):
        add("network_inverse", (o, "operates", x), (x, "operated_by", o))
        for e in heads("affects", o):
            if "kind_strike" in tails("of_type", e):
                body = ((x, "operated_by", o), (e, "affects", o), (e, "of_type", "kind_strike"))
                add("strike_disruption", (x, "disrupted_by", e), *body)
        for d in heads("employed_by", o):
            if x in tails("signed_for", d):
                body = ((d, "employed_by", o), (x, "operated_by", o), (d, "signed_for", x))
                add("duty_roster", (d, "rostered_on", x), *body)
    for x, s in pairs("serves"):
        for m in heads("serves", s):
            if m != x:
                body = ((x, "serves", s), (m, "serves", s))
                add("shared_stop_transfer", (x, "transfer_with", m), *body)
        for d in tails("located_in", s):
            add(
                "district_coverage",
                (x, "serves_district", d),
                (x, "serves", s),
                (s, "located_in", d),
            )
        if "mode_metro" in tails("of_type", x):
            head = (s, "has_feature", "feature_tactile_paving")
            add("metro_tactile", head, (x, "serves", s), (x, "of_type", "mode_metro"))
    for v, t in pairs("of_type"):
        for f in tails("runs_on", t):
            add("fleet_fuel", (v, "runs_on", f), (v, "of_type", t), (t, "runs_on", f))
            for x in tails("assigned_to", v):
                body = ((v, "assigned_to", x), (v, "of_type", t), (t, "runs_on", f))
                add("line_fuel", (x, "powered_by", f), *body)
    return index.found


@cache
def _rounds(seed: int) -> list[set[LabeledTriple]]:
    """The facts each round of the closure adds at the default size and ``seed``."""
    return closure_rounds(_default(seed), _transit_groundings)


@pytest.fixture(scope="module")
def transit() -> World:
    return _default(0)  # the default size and seed 0: the module docstring's numbers


@pytest.fixture(scope="module")
def stats(transit: World) -> WorldStatistics:
    return world_statistics(transit, max_targets=200)


def _facts_noise_lost(w: World, relation: str) -> tuple[set, set, set]:
    """The pairs of ``relation``: all facts, the noise facts, and the withheld exceptions."""
    return relation_pairs(w, relation), noise_pairs(w, relation), exception_pairs(w, relation)


def _kind(w: World, kind: str) -> set[str]:
    """The entities of one kind."""
    return {e for e, k in w.entity_types.items() if k == kind}


# ----------------------------------------------------------------------------- design


def test_transit_rules_parse_with_the_generic_parser() -> None:
    rules = parse_rules(TRANSIT_RULES, source="transit rules")
    assert [str(r.name) for r in rules] == [
        "timetable_termini",
        "network_inverse",
        "shared_stop_transfer",
        "fleet_fuel",
        "district_coverage",
        "metro_tactile",
        "strike_disruption",
        "duty_roster",
        "line_fuel",
    ]
    assert [r.length for r in rules] == [1, 1, 2, 2, 2, 2, 3, 3, 3]
    assert sum(bool(r.inequalities) for r in rules) == 1
    constants = {t.name for r in rules for a in r.body for t in (a.first, a.second)}
    constants -= {v for r in rules for v in r.variables}
    assert constants == {"mode_metro", "kind_strike"}
    tactile = next(r for r in rules if r.name == "metro_tactile")
    assert tactile.head.second.name == "feature_tactile_paving"
    assert not tactile.head.second.is_variable
    heads = [r.head.relation for r in rules]
    assert len(set(heads)) == len(heads)  # one body a head
    # Bodies with a head relation: the derived termini (three rules), the types' base fuels.
    through = {str(r.name) for r in rules if set(heads) & {a.relation for a in r.body}}
    assert through == {
        "shared_stop_transfer",
        "fleet_fuel",
        "district_coverage",
        "metro_tactile",
        "line_fuel",
    }
    assert [r.name for r in transit_world(80, seed=0).rules] == [r.name for r in rules]
    assert max(len(line) for line in TRANSIT_RULES.splitlines()) <= 100


def test_transit_world_sizes_lengths_and_cardinalities(
    transit: World, stats: WorldStatistics
) -> None:
    s, w = stats, transit
    assert (s.num_entities, s.num_relations) == (1318, 22)  # the docstring's numbers at seed 0
    assert s.split_triples == {"train": 7877, "valid": 256, "test": 254}
    assert entity_kinds(w) == {
        "stop": 600,
        "vehicle": 290,
        "driver": 144,
        "line": 75,
        "district": 51,
        "disruption": 31,
        "ticket": 30,
        "fare_zone": 24,
        "depot": 18,
        "operator": 11,
        "vehicle_type": 11,
        "city": 6,
        "authority": 6,
        "feature": 6,
        "fuel": 5,
        "disruption_kind": 4,
        "mode": 3,
        "licence": 3,
    }
    assert s.targets_by_length == {1: 46, 2: 324, 3: 134} and s.noise_targets == 6
    assert s.targets_by_rule == {
        "district_coverage": 90,
        "duty_roster": 59,
        "fleet_fuel": 66,
        "line_fuel": 30,
        "metro_tactile": 11,
        "network_inverse": 18,
        "shared_stop_transfer": 157,
        "strike_disruption": 45,
        "timetable_termini": 28,
    }
    assert min(s.targets_by_rule.values()) >= 8
    assert round(s.multi_grounding_share, 2) == 0.31
    card = s.cardinality
    assert all(card[r] == "1-N" for r in ("operates", "terminates_at"))
    n_to_1 = ("affects", "assigned_to", "based_at", "employed_by", "holds_licence", "in_zone")
    n_to_1 += ("located_in", "of_type", "operated_by", "runs_on")
    assert all(card[r] == "N-1" for r in n_to_1)
    n_to_n = ("disrupted_by", "has_feature", "passes_through", "powered_by", "rostered_on")
    n_to_n += ("serves", "serves_district", "signed_for", "transfer_with", "valid_in")
    assert all(card[r] == "N-N" for r in n_to_n) and len(card) == 22
    assert w.symmetric == ("transfer_with",)
    assert w.inverse_pairs == (("operated_by", "operates"),)
    assert w.shortcuts == (("passes_through", "serves_district"),)
    assert w.rules_text == TRANSIT_RULES
    assert Counter(r for _, r, _ in w.exceptions) == {
        "rostered_on": 34,
        "disrupted_by": 18,
        "runs_on": 9,
        "has_feature": 7,
        "powered_by": 7,
        "serves": 6,
    }


@pytest.mark.parametrize(("size", "seed"), [(600, 0), (150, 4)])
def test_transit_ground_truth_matches_a_brute_force_join(size: int, seed: int) -> None:
    w = _default(seed) if size == 600 else world("transit", size=size, seed=seed)
    everything, base = all_triples(w), set(w.base_triples)
    found = _transit_groundings(everything)
    assert set(found) == {str(r.name) for r in w.rules}
    heads = {t for by_head in found.values() for t in by_head}
    assert heads - everything == set(w.exceptions)  # closed up to the exceptions
    assert {t for s in SPLITS for t in w.derived_splits[s]} == (everything - base) & heads
    assert {t for s in SPLITS for t in w.noise_splits[s]} == (everything - base) - heads
    in_train, graph = _transit_groundings(train_triples(w)), w.train_graph
    for target in held_out(w):
        assert any(target in in_train[name] for name in in_train), target  # split guarantee
        for rule in w.rules:
            expected = in_train[str(rule.name)].get(target, set())
            assert set(groundings(rule, target, graph)) == expected, (rule.name, target)


def test_transit_operators_are_an_inverse_pair_and_the_closure_takes_two_rounds(
    transit: World,
) -> None:
    w = transit
    operated = relation_pairs(w, "operated_by")
    assert relation_pairs(w, "operates") == {(o, x) for x, o in operated}
    assert not any(t[1] == "operates" for t in w.base_triples)
    assert not noise_pairs(w, "operates") and not exception_pairs(w, "operates")
    assert len(operated) == 93 and {w.entity_types[x] for x, _ in operated} == {"line", "depot"}
    # Round one: every head; round two: what the derived termini ground.
    rounds = [{t[1] for t in new} for new in _rounds(0)]
    assert rounds[0] == {
        "serves",
        "operates",
        "transfer_with",
        "runs_on",
        "serves_district",
        "has_feature",
        "disrupted_by",
        "rostered_on",
        "powered_by",
    }
    assert rounds[1:] and set().union(*rounds[1:]) <= {
        "transfer_with",
        "serves_district",
        "has_feature",
    }


def test_transit_termini_are_served_and_transfers_are_a_symmetric_star(transit: World) -> None:
    w = transit
    termini = relation_pairs(w, "terminates_at")
    facts, noisy, lost = _facts_noise_lost(w, "serves")
    base = {(x, s) for x, r, s in w.base_triples if r == "serves"}
    assert facts - base == termini - lost and not noisy and not base & termini
    assert (len(facts), len(facts - base), len(lost)) == (911, 144, 6)
    rule = next(r for r in w.rules if r.name == "shared_stop_transfer")
    (ineq,) = rule.inequalities
    assert {ineq.left.name, ineq.right.name} == set(rule.head.variables)
    centre = {v for v in rule.variables if all(v in a.variables for a in rule.body)}
    assert centre == {"S"} and "S" not in rule.head.variables  # a star on the shared stop
    at: dict[str, set[str]] = {}
    for x, s in facts:
        at.setdefault(s, set()).add(x)
    pairs = {(x, y) for group in at.values() for x in group for y in group if x != y}
    linked = relation_pairs(w, "transfer_with")
    assert linked == pairs and linked == {(y, x) for x, y in linked} and len(linked) == 798
    assert not noise_pairs(w, "transfer_with") and not exception_pairs(w, "transfer_with")
    # A line calls only at stops of its city: no transfer crosses a city.
    located = dict(relation_pairs(w, "located_in"))
    city = {x: located[located[s]] for x, s in facts}
    assert all(city[x] == city[y] for x, y in linked)


def test_transit_fuels_run_through_the_vehicle_types(transit: World) -> None:
    w = transit
    type_of = {v: t for v, t in relation_pairs(w, "of_type") if w.entity_types[v] == "vehicle"}
    fuels: dict[str, set[str]] = {}
    for t, f in relation_pairs(w, "runs_on"):
        if w.entity_types[t] == "vehicle_type":
            fuels.setdefault(t, set()).add(f)
    expected = {(v, f) for v, t in type_of.items() for f in fuels[t]}
    facts = {(v, f) for v, f in relation_pairs(w, "runs_on") if w.entity_types[v] == "vehicle"}
    lost = exception_pairs(w, "runs_on")
    assert facts == expected - lost and not noise_pairs(w, "runs_on")
    assert (len(facts), len(lost)) == (328, 9)
    line_of = dict(relation_pairs(w, "assigned_to"))
    expected_l = {(line_of[v], f) for v, t in type_of.items() if v in line_of for f in fuels[t]}
    facts_l, noisy_l, lost_l = _facts_noise_lost(w, "powered_by")
    assert facts_l == expected_l - lost_l and not noisy_l
    assert (len(facts_l), len(lost_l)) == (153, 7)
    # Rail lines are electric; spare vehicles are assigned to no line.
    modes = {x: m for x, m in relation_pairs(w, "of_type") if w.entity_types[x] == "line"}
    rail = {x for x, m in modes.items() if m != "mode_bus"}
    assert {f for x, f in facts_l if x in rail} == {"fuel_electric"}
    assert len(set(type_of) - set(line_of)) == 7


def test_transit_district_coverage_and_its_gps_shortcut(
    transit: World, stats: WorldStatistics
) -> None:
    w = transit
    located = dict(relation_pairs(w, "located_in"))
    served = relation_pairs(w, "serves")
    expected = {(x, located[s]) for x, s in served}
    facts, noisy, lost = _facts_noise_lost(w, "serves_district")
    assert facts - noisy == expected - lost and not lost
    assert (len(facts), len(noisy)) == (456, 9)
    s, h = "passes_through", "serves_district"
    given = relation_pairs(w, s, "train")
    cover = len(facts & given) / len(facts)
    assert round(cover, 2) == 0.68
    assert stats.shortcut_cooccurrence[(s, h)] == pytest.approx(cover)
    assert round(stats.shortcut_precision[(s, h)], 2) == 0.85
    assert all(s not in {a.relation for a in r.body} for r in w.rules)
    assert given == relation_pairs(w, s)  # a base relation: all in train


def test_transit_metro_stations_have_tactile_paving(transit: World) -> None:
    w = transit
    metro = {x for x, m in relation_pairs(w, "of_type") if m == "mode_metro"}
    stations = {s for x, s in relation_pairs(w, "serves") if x in metro}
    tactile = {s for s, f in relation_pairs(w, "has_feature") if f == "feature_tactile_paving"}
    lost = {s for s, f in exception_pairs(w, "has_feature")}
    assert {f for _, f in exception_pairs(w, "has_feature")} == {"feature_tactile_paving"}
    assert tactile & stations == stations - lost and not noise_pairs(w, "has_feature")
    assert (len(metro), len(stations), len(lost)) == (8, 71, 7)
    # No tactile paving is recorded as a base fact at a metro station: only the rule puts it.
    base = {s for s, r, f in w.base_triples if (r, f) == ("has_feature", "feature_tactile_paving")}
    assert not base & stations and len(base) == 181


def test_transit_strikes_disrupt_the_operators_lines(transit: World) -> None:
    w = transit
    kind = {e: k for e, k in relation_pairs(w, "of_type") if w.entity_types[e] == "disruption"}
    operated = relation_pairs(w, "operated_by")
    affects = relation_pairs(w, "affects")
    expected = {
        (x, e) for x, o in operated for e, p in affects if p == o and kind[e] == "kind_strike"
    }
    base = {(x, e) for x, r, e in w.base_triples if r == "disrupted_by"}
    facts, noisy, lost = _facts_noise_lost(w, "disrupted_by")
    assert facts - noisy - base == expected - lost and not base & expected
    assert (len(facts), len(noisy), len(lost), len(base)) == (247, 7, 18, 9)
    # A ticketing outage affects an operator but disrupts no line; roadworks and breakdowns
    # disrupt lines directly and affect no operator.
    assert Counter(kind.values()) == {
        "kind_strike": 21,
        "kind_roadworks": 4,
        "kind_ticketing_outage": 3,
        "kind_breakdown": 3,
    }
    assert {kind[e] for _, e in base} <= {"kind_roadworks", "kind_breakdown"}
    assert {kind[e] for e, _ in affects} == {"kind_strike", "kind_ticketing_outage"}


def test_transit_duty_roster_is_a_triangle(transit: World) -> None:
    w = transit
    rule = next(r for r in w.rules if r.name == "duty_roster")
    assert rule.body[2].variables == rule.head.variables  # parallel to the head
    for v in rule.variables:  # a triangle: every variable in exactly two body atoms
        assert sum(v in a.variables for a in rule.body) == 2
    employer = dict(relation_pairs(w, "employed_by"))
    operator = {x: o for x, o in relation_pairs(w, "operated_by")}
    signed = relation_pairs(w, "signed_for")
    expected = {(d, x) for d, x in signed if operator[x] == employer[d]}
    facts, noisy, lost = _facts_noise_lost(w, "rostered_on")
    assert facts - noisy == expected - lost
    assert (len(facts), len(noisy), len(lost), len(signed - expected)) == (300, 9, 34, 20)


def test_transit_world_has_feature_fuel_licence_and_operator_hubs(
    transit: World, stats: WorldStatistics
) -> None:
    train = transit.dataset.train.to_labeled_triples()
    degree = degrees_by_kind(transit, train)
    kinds = ("feature", "fuel", "licence", "operator", "fare_zone", "line", "vehicle_type")
    kinds += ("mode", "district", "disruption_kind")
    top = {kind: max(degree[kind].values()) for kind in kinds}
    assert top == {
        "feature": 392,
        "fuel": 188,
        "licence": 106,
        "operator": 82,
        "fare_zone": 72,
        "line": 62,
        "vehicle_type": 57,
        "mode": 51,
        "district": 41,
        "disruption_kind": 21,
    }
    first = {kind: max(sorted(degree[kind]), key=degree[kind].__getitem__) for kind in kinds}
    names = ("feature", "fuel", "licence", "mode", "disruption_kind")
    assert [first[k] for k in names] == [
        "feature_step_free",
        "fuel_electric",
        "licence_d",
        "mode_bus",
        "kind_strike",
    ]
    assert sorted(degree["stop"].values())[len(degree["stop"]) // 2] == 6
    median, p90 = enclosing_quantiles(transit, set(train))  # 2-hop enclosing subgraphs, BFS
    assert median == stats.subgraph_median == 1120.5  # the docstring
    assert p90 == round(stats.subgraph_p90) == 2182
    assert stats.subgraph_targets == 200
    assert 800 <= stats.subgraph_median <= 1500 and 1500 <= stats.subgraph_p90 <= 3000


def test_transit_size_and_arguments_are_checked_and_the_smallest_world_is_complete() -> None:
    with pytest.raises(GraphDataError, match=r"size: expected an int >= 80, got 79"):
        transit_world(79)
    with pytest.raises(GraphDataError, match=r"seed: expected an int >= 0 or None, got -1"):
        transit_world(80, seed=-1)
    with pytest.raises(GraphDataError, match="expected a sum below 1"):
        transit_world(80, valid_fraction=0.5, test_fraction=0.5)
    w = transit_world(80, seed=1)
    kinds = entity_kinds(w)
    assert (kinds["stop"], kinds["line"], kinds["city"]) == (80, 12, 6)
    assert {str(r.name) for r in w.rules} == set(_transit_groundings(all_triples(w)))
    assert w.dataset.num_relations <= 22
    again, other = transit_world(80, seed=1), transit_world(80, seed=2)
    assert again.base_triples == w.base_triples and again.exceptions == w.exceptions
    assert again.dataset.test.to_labeled_triples() == w.dataset.test.to_labeled_triples()
    assert other.base_triples != w.base_triples


def test_transit_exception_and_noise_rates() -> None:
    # Pooled over three seeds at the default size, each exception rate within four binomial
    # sd (of the facts only that rule derives); noise drawn to the count (base.py step 2).
    rates = {"timetable_termini": 0.03, "fleet_fuel": 0.04, "metro_tactile": 0.08}
    rates |= {"strike_disruption": 0.10, "duty_roster": 0.08, "line_fuel": 0.05}
    withheld_n = {name: [0, 0] for name in rates}
    for seed in (0, 1, 2):
        w = _default(seed)
        everything, base = all_triples(w), set(w.base_triples)
        found, withheld = _transit_groundings(everything), set(w.exceptions)
        assert w.exception_rates == {str(r.name): rates.get(str(r.name), 0.0) for r in w.rules}
        assert w.noise_rates == {"disrupted_by": 0.03, "rostered_on": 0.03, "serves_district": 0.02}
        for name in rates:
            others = set().union(*(set(found[o]) for o in found if o != name))
            derived = set(found[name]) - base - others
            withheld_n[name][0] += len(derived & withheld)
            withheld_n[name][1] += len(derived)
        closed = set(base).union(*_rounds(seed))  # the first closure, without noise
        check_noise_counts(w, closed, seed)
    for name, q in rates.items():
        k, n = withheld_n[name]
        assert abs(k / n - q) < 4 * math.sqrt(q * (1 - q) / n), (name, k, n)


def test_transit_subgraphs_are_dense_at_every_seed() -> None:
    stats = [world_statistics(_default(seed), max_targets=40) for seed in (1, 2, 3)]
    assert [s.subgraph_median for s in stats] == [1100.5, 1112.0, 1032.5]  # the docstring
    assert [round(s.subgraph_p90, 1) for s in stats] == [2365.0, 2496.0, 1935.9]
    assert all(1500 <= s.subgraph_p90 <= 3000 for s in stats)
