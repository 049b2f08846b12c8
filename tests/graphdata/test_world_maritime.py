"""Tests for the maritime world: ground truth by brute force, design, rates, hubs.

The world-agnostic checks (split guarantee, closure, symmetry and inverses, determinism and
file round trips) run on every world of :data:`graphdata.worlds.WORLDS` in ``test_worlds.py``;
these check what :mod:`graphdata.worlds.maritime` states, mostly against a nested-loop join that
does not use :mod:`graphdata.rules`.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest

from graphdata.errors import GraphDataError
from graphdata.rules import groundings
from graphdata.typing import LabeledTriple
from graphdata.worlds import (
    MARITIME_RULES,
    World,
    WorldStatistics,
    maritime_world,
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
    return default_world("maritime", seed)


@pytest.fixture(scope="module")
def shipping() -> World:
    return _default(0)  # the default size and seed 0: the module docstring's numbers


@pytest.fixture(scope="module")
def stats(shipping: World) -> WorldStatistics:
    return world_statistics(shipping, max_targets=200)


def _maritime_groundings(facts: set[LabeledTriple]) -> Groundings:
    """Every grounding of every maritime rule in ``facts``, by nested loops (no graphdata.rules).

    Rule name -> head triple -> the groundings' body triples in body order.
    """
    index = FactIndex(facts)
    pairs, tails, add = index.of, index.tails, index.add

    for v, c in pairs("operated_by"):
        add("operator_inverse", (c, "operates", v), (v, "operated_by", c))
    for v, s in pairs("deployed_on"):
        for p in tails("service_calls", s):
            add("liner_call", (v, "calls_at", p), (v, "deployed_on", s), (s, "service_calls", p))
    for v, t in pairs("berthed_at"):
        for p in tails("terminal_of", t):
            add("tramp_call", (v, "calls_at", p), (v, "berthed_at", t), (t, "terminal_of", p))
    for v, p in pairs("calls_at"):
        for k in tails("flagged_in", v):
            if k in tails("located_in", p):
                body = ((v, "calls_at", p), (v, "flagged_in", k), (p, "located_in", k))
                add("cabotage", (v, "domestic_call", p), *body)
            if "list_black" in tails("psc_list", k):
                body = ((v, "flagged_in", k), (k, "psc_list", "list_black"), (v, "calls_at", p))
                add("psc_targeting", (v, "inspected_at", p), *body)
    for c, v in pairs("operates"):
        if "cargo_reefer" in tails("carries", v):
            for p in tails("calls_at", v):
                body = ((c, "operates", v), (v, "carries", "cargo_reefer"), (v, "calls_at", p))
                add("reefer_network", (c, "reefer_port", p), *body)
        for k in tails("flagged_in", v):
            for h in tails("located_in", c):
                if k != h:
                    body = ((c, "operates", v), (v, "flagged_in", k), (c, "located_in", h))
                    add("flag_out", (c, "flags_out", k), *body)
    for s, c in pairs("run_by"):
        for d in tails("run_by", s):
            if c != d:
                add("vessel_sharing", (c, "vsa_partner", d), (s, "run_by", c), (s, "run_by", d))
    return index.found


@cache
def _rounds(seed: int) -> list[set[LabeledTriple]]:
    """The facts each round of the closure adds to the base facts of ``_default(seed)``."""
    return closure_rounds(_default(seed), _maritime_groundings)


def _diversions(w: World) -> tuple[int, int, int, int]:
    """Omitted calls, those with a diversion to another port of the omitted port's country
    (any other port where it has none), diversions, and diversions of ships with an omitted
    call."""
    country = dict(relation_pairs(w, "located_in"))
    ports = sorted(p for p in country if w.entity_types[p] == "port")
    diverted: dict[str, set[str]] = {}
    for v, q in relation_pairs(w, "diverted_to"):
        diverted.setdefault(v, set()).add(q)
    lost = [(v, p) for v, r, p in w.exceptions if r == "calls_at"]

    def elsewhere(p: str) -> set[str]:
        same = {q for q in ports if country[q] == country[p] and q != p}
        return same or set(ports) - {p}

    recorded = sum(bool(diverted.get(v, set()) & elsewhere(p)) for v, p in lost)
    on_lost = sum(len(diverted.get(v, set())) for v in {v for v, _ in lost})
    return len(lost), recorded, sum(map(len, diverted.values())), on_lost


# ----------------------------------------------------------------------------- design


def test_maritime_world_sizes_lengths_and_cardinalities(
    shipping: World, stats: WorldStatistics
) -> None:
    s = stats
    assert (s.num_entities, s.num_relations) == (635, 22)  # the docstring's numbers at seed 0
    kinds: dict[str, int] = {}
    for kind in shipping.entity_types.values():
        kinds[kind] = kinds.get(kind, 0) + 1
    assert kinds == {
        "vessel": 340,
        "terminal": 90,
        "owner": 68,
        "port": 42,
        "service": 42,
        "carrier": 22,
        "country": 16,
        "cargo_class": 6,
        "class_society": 6,
        "psc_list": 3,
    }
    assert s.split_triples == {"train": 6865, "valid": 246, "test": 244}
    assert 600 <= s.num_entities <= 900 and 5000 <= sum(s.split_triples.values()) <= 9000
    lengths = [r.length for r in shipping.rules]
    assert (lengths.count(1), lengths.count(2), lengths.count(3)) == (1, 3, 4)
    assert s.targets_by_length == {1: 68, 2: 312, 3: 92} and s.noise_targets == 18
    assert s.targets_by_rule == {
        "cabotage": 22,
        "flag_out": 29,
        "liner_call": 176,
        "operator_inverse": 68,
        "psc_targeting": 32,
        "reefer_network": 9,
        "tramp_call": 124,
        "vessel_sharing": 12,
    }
    assert round(s.multi_grounding_share, 2) == 0.07
    card = s.cardinality
    assert card["operates"] == "1-N"
    n_to_1 = ("carries", "classed_by", "deployed_on", "diverted_to", "domestic_call")
    n_to_1 += ("flagged_in", "handles", "located_in", "operated_by")
    assert all(card[r] == "N-1" for r in (*n_to_1, "owned_by", "psc_list", "terminal_of"))
    n_to_n = ("ais_reported", "berthed_at", "calls_at", "flags_out", "inspected_at")
    assert all(card[r] == "N-N" for r in (*n_to_n, "reefer_port", "run_by", "service_calls"))
    assert card["vsa_partner"] == "N-N" and len(card) == 22
    assert shipping.symmetric == ("vsa_partner",)
    assert shipping.inverse_pairs == (("operated_by", "operates"),)
    assert shipping.shortcuts == (("ais_reported", "calls_at"),)
    assert shipping.rules_text == MARITIME_RULES
    assert len(shipping.exceptions) == 87


@pytest.mark.parametrize(("size", "seed"), [(340, 0), (120, 4)])
def test_maritime_ground_truth_matches_a_brute_force_join(size: int, seed: int) -> None:
    w = _default(seed) if size == 340 else world("maritime", size=size, seed=seed)
    everything, base = all_triples(w), set(w.base_triples)
    found = _maritime_groundings(everything)
    assert set(found) == {str(r.name) for r in w.rules}
    heads = {t for by_head in found.values() for t in by_head}
    assert heads - everything == set(w.exceptions)  # closed up to the exceptions
    assert {t for s in SPLITS for t in w.derived_splits[s]} == (everything - base) & heads
    assert {t for s in SPLITS for t in w.noise_splits[s]} == (everything - base) - heads
    in_train, graph = _maritime_groundings(train_triples(w)), w.train_graph
    for target in held_out(w):
        assert any(target in in_train[name] for name in in_train), target  # split guarantee
        for rule in w.rules:
            expected = in_train[str(rule.name)].get(target, set())
            assert set(groundings(rule, target, graph)) == expected, (rule.name, target)


def test_maritime_inverse_operators_and_the_symmetric_vessel_sharing_star(
    shipping: World,
) -> None:
    operated = relation_pairs(shipping, "operated_by")
    assert relation_pairs(shipping, "operates") == {(c, v) for v, c in operated}
    assert len({v for v, _ in operated}) == len(operated) == 340  # one carrier a vessel
    users = [str(r.name) for r in shipping.rules if "operates" in {a.relation for a in r.body}]
    assert users == ["reefer_network", "flag_out"]  # the derived side in two bodies
    rule = next(r for r in shipping.rules if r.name == "vessel_sharing")
    (inequality,) = rule.inequalities
    assert {inequality.left.name, inequality.right.name} == set(rule.head.variables)
    run: dict[str, set[str]] = {}
    for s, c in relation_pairs(shipping, "run_by"):
        run.setdefault(s, set()).add(c)
    pairs = relation_pairs(shipping, "vsa_partner")
    expected = {(c, d) for group in run.values() for c in group for d in group if c != d}
    assert pairs == expected  # no exception, no noise: exactly the star, both directions
    assert (len(pairs), max(map(len, run.values()))) == (56, 3)  # the docstring
    train, targets = train_triples(shipping), held_out(shipping, "vsa_partner")
    back = sum((d, r, c) in train for c, r, d in targets)
    assert (len(targets), back) == (12, 10)


def test_maritime_calls_have_two_bodies_and_feed_three_length_three_bodies(
    shipping: World,
) -> None:
    rules = [r for r in shipping.rules if r.head.relation == "calls_at"]
    assert [(r.name, r.length) for r in rules] == [("liner_call", 2), ("tramp_call", 2)]
    everything, noise = all_triples(shipping), noise_facts(shipping)
    found = _maritime_groundings(everything)
    facts = {t for t in everything if t[1] == "calls_at"}
    liner, tramp = (set(found[str(r.name)]) & facts for r in rules)
    assert liner | tramp == facts - noise
    assert body_shares(facts, liner, tramp, noise) == [0.05, 0.52, 0.4, 0.03]  # seed 0
    assert len(facts) == 1554 and not {t for t in shipping.base_triples if t[1] == "calls_at"}
    users = [r for r in shipping.rules if "calls_at" in {a.relation for a in r.body}]
    assert [(r.name, r.length) for r in users] == [
        ("cabotage", 3),
        ("psc_targeting", 3),
        ("reefer_network", 3),
    ]
    # Both derived relations follow the closure: calls and operators in round one, the heads
    # of their users in round two.
    rounds = [{t[1] for t in new} for new in _rounds(0)]
    assert rounds == [
        {"calls_at", "operates", "vsa_partner"},
        {"domestic_call", "flags_out", "inspected_at", "reefer_port"},
    ]
    assert len(held_out(shipping, "calls_at")) >= 250


def test_maritime_cabotage_is_a_triangle_through_the_derived_calls(shipping: World) -> None:
    rule = next(r for r in shipping.rules if r.name == "cabotage")
    assert [a.relation for a in rule.body] == ["calls_at", "flagged_in", "located_in"]
    assert {v for a in rule.body for v in a.variables} == {"V", "P", "K"}
    assert (rule.body[0].first.name, rule.body[0].second.name) == rule.head.variables
    flag = dict(relation_pairs(shipping, "flagged_in"))
    country = dict(relation_pairs(shipping, "located_in"))
    noise, withheld = noise_facts(shipping), set(shipping.exceptions)
    calls = relation_pairs(shipping, "calls_at")
    expected = {(v, "domestic_call", p) for v, p in calls if flag[v] == country[p]}
    domestic = {t for t in all_triples(shipping) if t[1] == "domestic_call"}
    assert domestic - noise == expected - withheld
    assert (len(domestic), len(domestic & noise)) == (184, 9)  # the docstring


def test_maritime_inspections_hang_off_the_vessel_two_steps_to_list_black(
    shipping: World,
) -> None:
    rule = next(r for r in shipping.rules if r.name == "psc_targeting")
    branch, anchor, parallel = rule.body
    # V -flagged_in-> K -psc_list-> list_black hangs off the head's first entity; the third
    # atom is parallel to the head.
    assert rule.head.first.name == branch.first.name == "V"
    assert branch.second.name == anchor.first.name == "K" and "K" not in rule.head.variables
    assert (anchor.first.name, anchor.second.name, anchor.second.is_variable) == (
        "K",
        "list_black",
        False,
    )
    assert (parallel.relation, parallel.variables) == ("calls_at", rule.head.variables)
    flag, listed = (
        dict(relation_pairs(shipping, "flagged_in")),
        dict(relation_pairs(shipping, "psc_list")),
    )
    black = {v for v, k in flag.items() if listed[k] == "list_black"}
    base, noise, withheld = (
        set(shipping.base_triples),
        noise_facts(shipping),
        set(shipping.exceptions),
    )
    calls = relation_pairs(shipping, "calls_at")
    expected = {(v, "inspected_at", p) for v, p in calls if v in black}
    inspected = {t for t in all_triples(shipping) if t[1] == "inspected_at"}
    assert inspected - base - noise == expected - withheld
    assert not {v for v, _, _ in inspected & base} & black  # base: ships of other flags only
    assert (len(black), len(expected)) == (42, 201)  # the docstring, seed 0
    assert (len(inspected), len(inspected & base), len(inspected & noise)) == (250, 64, 7)
    assert len(held_out(shipping, "inspected_at")) >= 30


def test_maritime_reefer_anchor_in_the_middle_and_the_flag_out_inequality(
    shipping: World,
) -> None:
    reefer = next(r for r in shipping.rules if r.name == "reefer_network")
    assert [a.relation for a in reefer.body] == ["operates", "carries", "calls_at"]
    middle = reefer.body[1]
    assert (middle.first.name, middle.second.name, middle.second.is_variable) == (
        "V",
        "cargo_reefer",
        False,
    )
    assert reefer.body[0].second.name == "V" == reefer.body[2].first.name
    assert "V" not in reefer.head.variables
    noise, withheld = noise_facts(shipping), set(shipping.exceptions)
    operator, cargo = (
        dict(relation_pairs(shipping, "operated_by")),
        dict(relation_pairs(shipping, "carries")),
    )
    calls = relation_pairs(shipping, "calls_at")
    expected = {(operator[v], "reefer_port", p) for v, p in calls if cargo[v] == "cargo_reefer"}
    ports = {t for t in all_triples(shipping) if t[1] == "reefer_port"}
    assert ports - noise == expected - withheld
    assert (sum(c == "cargo_reefer" for c in cargo.values()), len(ports)) == (31, 56)
    # flags_out(C,K): the flag K of an operated ship unequal to H, which hangs off the head C.
    rule = next(r for r in shipping.rules if r.name == "flag_out")
    (inequality,) = rule.inequalities
    assert {inequality.left.name, inequality.right.name} == {"K", "H"}
    assert rule.body[2].relation == "located_in" and rule.body[2].first.name == "C"
    assert "H" not in rule.head.variables
    flag, home = (
        dict(relation_pairs(shipping, "flagged_in")),
        dict(relation_pairs(shipping, "located_in")),
    )
    expected = {(c, "flags_out", flag[v]) for v, c in operator.items() if flag[v] != home[c]}
    flags = {t for t in all_triples(shipping) if t[1] == "flags_out"}
    assert flags - noise == expected and not flags & withheld  # no exception for flag_out
    assert (len(flags), len(flags & noise), len({c for c, _, _ in flags})) == (175, 9, 22)


def test_maritime_ais_reports_are_a_correlated_shortcut_of_calls(
    shipping: World, stats: WorldStatistics
) -> None:
    heads = relation_pairs(shipping, "calls_at")
    given = relation_pairs(shipping, "ais_reported", "train")
    cover, precision = len(heads & given) / len(heads), len(heads & given) / len(given)
    assert (round(cover, 2), round(precision, 2)) == (0.86, 0.93)  # the docstring, seed 0
    assert stats.shortcut_cooccurrence[("ais_reported", "calls_at")] == pytest.approx(cover)
    assert stats.shortcut_precision[("ais_reported", "calls_at")] == pytest.approx(precision)
    assert all("ais_reported" not in {a.relation for a in r.body} for r in shipping.rules)
    # An omitted call was still reported: the shortcut links most withheld calls.
    lost = {(v, p) for v, r, p in shipping.exceptions if r == "calls_at"}
    assert len(lost & given) >= 0.8 * len(lost)


def test_maritime_omitted_calls_are_mostly_recorded_diversions(shipping: World) -> None:
    everything = all_triples(shipping)
    found = _maritime_groundings(everything)
    lost = {t for t in shipping.exceptions if t[1] == "calls_at"}
    assert lost <= set(found["liner_call"]) and not lost & set(found["tramp_call"])
    assert _diversions(shipping) == (48, 39, 50, 41)  # the docstring, seed 0
    assert all("diverted_to" not in {a.relation for a in r.body} for r in shipping.rules)
    # Pooled over three seeds: .8 of the omitted calls recorded, and the ships without an
    # omitted call diverted at one planned call (a call that is not noise) in a hundred, each
    # within four binomial sd.
    counts = np.zeros(4)
    for seed in (0, 1, 2):
        w = _default(seed)
        lost, recorded, _, _ = _diversions(w)
        omitting = {v for v, r, _ in w.exceptions if r == "calls_at"}
        noise = noise_facts(w)
        planned = sum(v not in omitting for v, r, p in all_triples(w) - noise if r == "calls_at")
        spare = sum(v not in omitting for v, _ in relation_pairs(w, "diverted_to"))
        counts += (recorded, lost, spare, planned)
    for (k, n), q in zip((counts[:2], counts[2:]), (0.8, 0.01)):
        assert abs(k / n - q) < 4 * math.sqrt(q * (1 - q) / n), (k, n, q)


def test_maritime_world_has_port_cargo_and_carrier_hubs(
    shipping: World, stats: WorldStatistics
) -> None:
    train = shipping.dataset.train.to_labeled_triples()
    degree = degrees_by_kind(shipping, train)
    top = {
        kind: max(degree[kind].values())
        for kind in ("port", "cargo_class", "carrier", "class_society", "country")
    }
    assert top == {
        "port": 168,
        "cargo_class": 158,
        "carrier": 100,
        "class_society": 71,
        "country": 62,
    }
    assert float(np.median(list(degree["vessel"].values()))) == 12
    assert top["port"] >= 10 * 12
    median, p90 = enclosing_quantiles(shipping, set(train))  # 2-hop enclosing subgraphs, BFS
    assert median == stats.subgraph_median == 1105.5  # the docstring
    assert p90 == round(stats.subgraph_p90) == 2571
    assert 1000 <= stats.subgraph_median and stats.subgraph_p90 <= 5000


def test_maritime_size_is_bounded_below_and_the_smallest_world_has_every_port_country() -> None:
    with pytest.raises(GraphDataError, match=r"size: expected an int >= 60, got 59"):
        maritime_world(59)
    w = maritime_world(60, seed=1)
    country = {k for p, k in relation_pairs(w, "located_in") if w.entity_types[p] == "port"}
    assert len(country) == 13  # every country with a port weight has a port at the minimum
    assert sum(kind == "port" for kind in w.entity_types.values()) == 16


def test_maritime_exception_and_noise_rates() -> None:
    # Pooled over three seeds at the default size, each exception rate within four binomial
    # sd (of the facts only that rule derives). Noise is drawn to the count (base.py step 2)
    # from the facts of the first closure, so the counts are checked nearly exactly.
    rates = {"liner_call": 0.06, "cabotage": 0.05, "psc_targeting": 0.1}
    rates["reefer_network"] = 0.05
    withheld_n = {name: [0, 0] for name in rates}
    for seed in (0, 1, 2):
        w = _default(seed)
        everything, base = all_triples(w), set(w.base_triples)
        found, withheld = _maritime_groundings(everything), set(w.exceptions)
        relations = {r for _, r, _ in withheld}
        assert relations == {"calls_at", "domestic_call", "inspected_at", "reefer_port"}
        assert w.exception_rates == {str(r.name): rates.get(str(r.name), 0.0) for r in w.rules}
        assert not set(found["tramp_call"]) & withheld  # rate 0 wins a shared head
        own = {name: set(found[name]) - base for name in rates}
        own["liner_call"] -= set(found["tramp_call"])
        for name, derived in own.items():
            withheld_n[name][0] += len(derived & withheld)
            withheld_n[name][1] += len(derived)
        closed = set(base).union(*_rounds(seed))  # the first closure, without noise
        check_noise_counts(w, closed, seed)
    for name, q in rates.items():
        k, n = withheld_n[name]
        assert abs(k / n - q) < 4 * math.sqrt(q * (1 - q) / n), (name, k, n)
