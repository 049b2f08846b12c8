"""Tests for the civil aviation world: ground truth by brute force, design, rates, hubs.

The world-agnostic checks (split guarantee, closure, symmetry and inverses, determinism and
file round trips) run on every world of :data:`graphdata.worlds.WORLDS` in ``test_worlds.py``;
these check what :mod:`graphdata.worlds.aviation` states, mostly against a nested-loop join that
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
    AVIATION_RULES,
    World,
    WorldStatistics,
    aviation_world,
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
    return default_world("aviation", seed)


@pytest.fixture(scope="module")
def aviation() -> World:
    return _default(0)  # the default size and seed 0: the module docstring's numbers


@pytest.fixture(scope="module")
def stats(aviation: World) -> WorldStatistics:
    return world_statistics(aviation, max_targets=200)


def _aviation_groundings(facts: set[LabeledTriple]) -> Groundings:
    """Every grounding of every aviation rule in ``facts``, by nested loops (no graphdata.rules).

    Rule name -> head triple -> the groundings' body triples in body order.
    """
    index = FactIndex(facts)
    pairs, tails, heads, add = index.of, index.tails, index.heads, index.add

    for r, m in pairs("operates_for"):
        add("partner_inverse", (m, "capacity_partner", r), (r, "operates_for", m))
    for b, a in pairs("codeshare"):
        add("codeshare_mirror", (a, "codeshare", b), (b, "codeshare", a))
    for p, a in pairs("operated_by"):
        for t in tails("of_type", p):
            add("fleet_rollup", (a, "fleet_type", t), (p, "operated_by", a), (p, "of_type", t))
    for m, r in pairs("capacity_partner"):
        for h in tails("serves", r):
            add("regional_codes", (m, "markets", h), (m, "capacity_partner", r), (r, "serves", h))
    for a, b in pairs("codeshare"):
        for h in tails("hub", b):
            add("partner_codes", (a, "markets", h), (a, "codeshare", b), (b, "hub", h))
    for a, h in pairs("serves"):
        if "level_3" in tails("coordination", h):
            body = ((a, "serves", h), (h, "coordination", "level_3"))
            add("slot_holding", (a, "holds_slots", h), *body)
    for a, alliance in pairs("member_of"):
        for b in heads("member_of", alliance):
            for h in tails("hub", b):
                body = ((a, "member_of", alliance), (b, "member_of", alliance), (b, "hub", h))
                add("lounge_access", (a, "lounge_access", h), *body)
    for x, a in pairs("employed_by"):
        for t in tails("fleet_type", a):
            if t in tails("type_rated", x):
                body = ((x, "employed_by", a), (a, "fleet_type", t), (x, "type_rated", t))
                add("crew_assignment", (x, "flies_type", t), *body)
    for a, h in pairs("serves"):
        for u in tails("regulated_by", h):
            for v in tails("regulated_by", a):
                if u != v:
                    body = ((a, "serves", h), (h, "regulated_by", u), (a, "regulated_by", v))
                    add("foreign_permit", (a, "permit_from", u), *body)
    return index.found


@cache
def _rounds(seed: int) -> list[set[LabeledTriple]]:
    """The facts each round of the closure adds at the default size and ``seed``."""
    return closure_rounds(_default(seed), _aviation_groundings)


# ----------------------------------------------------------------------------- design


def test_aviation_world_sizes_lengths_and_cardinalities(
    aviation: World, stats: WorldStatistics
) -> None:
    s = stats
    kinds: dict[str, int] = {}
    for kind in aviation.entity_types.values():
        kinds[kind] = kinds.get(kind, 0) + 1
    assert (s.num_entities, s.num_relations) == (1099, 22)  # the docstring's numbers at seed 0
    assert kinds == {
        "aircraft": 400,
        "pilot": 400,
        "airport": 100,
        "city": 79,
        "airline": 66,
        "aircraft_type": 15,
        "country": 14,
        "authority": 10,
        "manufacturer": 6,
        "alliance": 3,
        "airline_kind": 3,
        "coordination_level": 3,
    }
    assert s.split_triples == {"train": 5072, "valid": 129, "test": 131}
    assert 800 <= s.num_entities <= 1500 and 5000 <= sum(s.split_triples.values()) <= 20000
    lengths = [r.length for r in aviation.rules]
    assert (lengths.count(1), lengths.count(2), lengths.count(3)) == (2, 4, 3)
    assert s.targets_by_length == {1: 18, 2: 121, 3: 114} and s.noise_targets == 7
    assert s.targets_by_rule == {
        "codeshare_mirror": 14,
        "crew_assignment": 61,
        "fleet_rollup": 22,
        "foreign_permit": 24,
        "lounge_access": 29,
        "partner_codes": 36,
        "partner_inverse": 4,
        "regional_codes": 12,
        "slot_holding": 51,
    }
    assert round(s.multi_grounding_share, 2) == 0.16
    card = s.cardinality
    assert card["capacity_partner"] == "1-N" and card["operates_for"] == "N-1"
    n_to_1 = ("built_by", "coordination", "employed_by", "flies_type", "kind", "located_in")
    n_to_1 += ("member_of", "of_type", "operated_by", "regulated_by", "sim_check")
    assert all(card[r] == "N-1" for r in n_to_1)
    n_to_n = ("codeshare", "fleet_type", "holds_slots", "hub", "lounge_access", "markets")
    n_to_n += ("permit_from", "serves", "type_rated")
    assert all(card[r] == "N-N" for r in n_to_n) and len(card) == 22
    assert aviation.symmetric == ("codeshare",)
    assert aviation.inverse_pairs == (("operates_for", "capacity_partner"),)
    assert aviation.shortcuts == (("sim_check", "flies_type"),)
    assert aviation.rules_text == AVIATION_RULES
    assert len(aviation.exceptions) == 94


@pytest.mark.parametrize(("size", "seed"), [(400, 0), (120, 4)])
def test_aviation_ground_truth_matches_a_brute_force_join(size: int, seed: int) -> None:
    w = _default(seed) if size == 400 else world("aviation", size=size, seed=seed)
    everything, base = all_triples(w), set(w.base_triples)
    found = _aviation_groundings(everything)
    assert set(found) == {str(r.name) for r in w.rules}
    heads = {t for by_head in found.values() for t in by_head}
    assert heads - everything == set(w.exceptions)  # closed up to the exceptions
    assert {t for s in SPLITS for t in w.derived_splits[s]} == (everything - base) & heads
    assert {t for s in SPLITS for t in w.noise_splits[s]} == (everything - base) - heads
    in_train, graph = _aviation_groundings(train_triples(w)), w.train_graph
    for target in held_out(w):
        assert any(target in in_train[name] for name in in_train), target  # split guarantee
        for rule in w.rules:
            expected = in_train[str(rule.name)].get(target, set())
            assert set(groundings(rule, target, graph)) == expected, (rule.name, target)


def test_aviation_codeshares_are_symmetric_and_capacity_partners_inverse(
    aviation: World,
) -> None:
    flies_for = relation_pairs(aviation, "operates_for")
    assert relation_pairs(aviation, "capacity_partner") == {(m, r) for r, m in flies_for}
    mainlines = {m for _, m in flies_for}
    assert (len(flies_for), len(mainlines)) == (18, 11)  # 1-N: a mainline buys from several
    kind = dict(relation_pairs(aviation, "kind"))
    assert all(kind[r] == "kind_regional" and kind[m] == "kind_network" for r, m in flies_for)
    pairs = relation_pairs(aviation, "codeshare")
    assert pairs == {(b, a) for a, b in pairs} and not any(a == b for a, b in pairs)
    base = {(a, b) for a, r, b in aviation.base_triples if r == "codeshare"}
    assert (len(pairs), len(base)) == (140, 70) and base.isdisjoint({(b, a) for a, b in base})
    assert not any(kind[a] == "kind_regional" for a, _ in pairs)
    train, targets = train_triples(aviation), held_out(aviation, "codeshare")
    assert len(targets) == 14 and all((b, r, a) in train for a, r, b in targets)
    # The closure: mirrors, the inverse, fleets, codes, slots, lounges and permits in round
    # one; the codes of a mainline through its regional partners and the pilots' types
    # (through the derived fleet) in round two.
    rounds = [{t[1] for t in new} for new in _rounds(0)]
    assert rounds == [
        {
            "capacity_partner",
            "codeshare",
            "fleet_type",
            "holds_slots",
            "lounge_access",
            "markets",
            "permit_from",
        },
        {"flies_type", "markets"},
    ]


def test_aviation_markets_has_two_bodies_through_derived_relations(aviation: World) -> None:
    rules = [r for r in aviation.rules if r.head.relation == "markets"]
    assert [(r.name, r.length) for r in rules] == [("regional_codes", 2), ("partner_codes", 2)]
    derived_heads = {r.head.relation for r in aviation.rules}
    assert all(r.body[0].relation in derived_heads for r in rules)  # both through a derived atom
    facts = {t for t in all_triples(aviation) if t[1] == "markets"}
    noise, withheld = noise_facts(aviation), set(aviation.exceptions)
    found = _aviation_groundings(all_triples(aviation))
    regional, partner = (set(found[str(r.name)]) & facts for r in rules)
    assert body_shares(facts, regional, partner, noise) == [0.01, 0.25, 0.71, 0.03]  # seed 0
    assert (len(facts), len(facts & noise), len(facts & withheld)) == (281, 8, 0)
    assert sum(t[1] == "markets" for t in withheld) == 19
    # The oracle by set algebra: a mainline's codes on its regionals' airports, an airline's
    # on its codeshare partners' hubs.
    partners = relation_pairs(aviation, "capacity_partner")
    serves, hubs = relation_pairs(aviation, "serves"), relation_pairs(aviation, "hub")
    codeshares = relation_pairs(aviation, "codeshare")
    expected = {(m, h) for m, r in partners for s, h in serves if s == r}
    expected |= {(a, h) for a, b in codeshares for c, h in hubs if c == b}
    lost = {(a, h) for a, r, h in withheld if r == "markets"}
    assert {(a, h) for a, _, h in facts - noise} == expected - lost


def test_aviation_pilots_fly_a_triangle_through_the_derived_fleet(aviation: World) -> None:
    rule = next(r for r in aviation.rules if r.name == "crew_assignment")
    employer, fleet, rating = rule.body
    assert rating.variables == rule.head.variables  # a body atom parallel to the head
    assert (employer.second.name, fleet.first.name) == ("A", "A")  # X-A-T-X, a triangle
    assert fleet.relation in {r.head.relation for r in aviation.rules}  # derived
    employed = dict(relation_pairs(aviation, "employed_by"))
    fleet_of = relation_pairs(aviation, "fleet_type")
    rated = relation_pairs(aviation, "type_rated")
    expected = {(x, t) for x, t in rated if (employed[x], t) in fleet_of}
    facts = {t for t in all_triples(aviation) if t[1] == "flies_type"}
    noise, withheld = noise_facts(aviation), set(aviation.exceptions)
    lost = {(x, t) for x, r, t in withheld if r == "flies_type"}
    assert {(x, t) for x, _, t in facts - noise} == expected - lost
    # The rating alone derives more: earlier ratings and new hires' types outside the fleet.
    assert (len(rated), len(expected), len(facts), len(facts & noise)) == (826, 426, 382, 11)
    # fleet_rollup rolls airframes up: most fleet types have several groundings.
    found = _aviation_groundings(all_triples(aviation))
    counts = [len(g) for t, g in found["fleet_rollup"].items() if t[1] == "fleet_type"]
    assert (len(fleet_of), len(counts), float(np.median(counts)), max(counts)) == (
        114,
        111,
        4.0,
        11,
    )


def test_aviation_slots_are_anchored_on_level_3(aviation: World) -> None:
    rule = next(r for r in aviation.rules if r.name == "slot_holding")
    parallel, anchor = rule.body
    assert parallel.variables == rule.head.variables
    assert (anchor.first.name, anchor.second.name, anchor.second.is_variable) == (
        "H",
        "level_3",
        False,
    )
    level = dict(relation_pairs(aviation, "coordination"))
    serves = relation_pairs(aviation, "serves")
    expected = {(a, h) for a, h in serves if level[h] == "level_3"}
    facts = {(a, h) for a, r, h in all_triples(aviation) if r == "holds_slots"}
    noise = {(a, h) for a, r, h in noise_facts(aviation) if r == "holds_slots"}
    assert facts - noise == expected  # no exception
    assert noise and all(level[h] == "level_3" and (a, h) not in serves for a, h in noise)
    counts = {k: sum(v == k for v in level.values()) for k in ("level_1", "level_2", "level_3")}
    assert counts == {"level_1": 54, "level_2": 20, "level_3": 26}
    assert (len(facts), len(noise)) == (276, 17)


def test_aviation_lounges_and_permits(aviation: World) -> None:
    lounge = next(r for r in aviation.rules if r.name == "lounge_access")
    assert lounge.body[0].second == lounge.body[1].second  # both members of one alliance
    member = relation_pairs(aviation, "member_of")
    hubs = relation_pairs(aviation, "hub")
    expected = {(a, h) for a, x in member for b, y in member if x == y for c, h in hubs if c == b}
    facts = {(a, h) for a, r, h in all_triples(aviation) if r == "lounge_access"}
    noise = {(a, h) for a, r, h in noise_facts(aviation) if r == "lounge_access"}
    lost = {(a, h) for a, r, h in aviation.exceptions if r == "lounge_access"}
    assert facts - noise == expected - lost
    assert (len(member), len(facts), len(noise), len(lost)) == (18, 152, 5, 13)
    permit = next(r for r in aviation.rules if r.name == "foreign_permit")
    assert [(c.left.name, c.right.name) for c in permit.inequalities] == [("U", "V")]
    regulator = dict(relation_pairs(aviation, "regulated_by"))
    serves = relation_pairs(aviation, "serves")
    every = {(a, regulator[h]) for a, h in serves}
    expected = {(a, u) for a, u in every if u != regulator[a]}
    facts = {(a, u) for a, r, u in all_triples(aviation) if r == "permit_from"}
    lost = {(a, u) for a, r, u in aviation.exceptions if r == "permit_from"}
    assert facts == expected - lost  # no noise
    assert not any(t[1] == "permit_from" for t in noise_facts(aviation))
    # The inequality does the work: without it every airline would need one from its own
    # authority (EASA carriers flying within the single market need none).
    assert (len(every), len(expected), len(facts), len(lost)) == (190, 124, 117, 7)


def test_aviation_simulator_checks_are_a_correlated_shortcut_of_the_types_flown(
    aviation: World, stats: WorldStatistics
) -> None:
    heads = relation_pairs(aviation, "flies_type")
    given = relation_pairs(aviation, "sim_check", "train")
    cover, precision = len(heads & given) / len(heads), len(heads & given) / len(given)
    assert (round(cover, 2), round(precision, 2)) == (0.82, 0.88)  # the docstring, seed 0
    assert stats.shortcut_cooccurrence[("sim_check", "flies_type")] == pytest.approx(cover)
    assert stats.shortcut_precision[("sim_check", "flies_type")] == pytest.approx(precision)
    assert all("sim_check" not in {a.relation for a in r.body} for r in aviation.rules)
    lost = {(x, t) for x, r, t in aviation.exceptions if r == "flies_type"}
    assert not lost & given  # a pilot not current on a type is not checked on it
    rated = relation_pairs(aviation, "type_rated")
    assert all((x, t) not in rated for x, t in given - heads)  # conversion courses
    # Pooled over three seeds: .8 of the flying pairs checked, within four binomial sd.
    k = n = 0
    for seed in (0, 1, 2):
        w = _default(seed)
        pairs = relation_pairs(w, "flies_type")
        k += len(pairs & relation_pairs(w, "sim_check"))
        n += len(pairs)
    sd = math.sqrt(0.8 * 0.2 / n)
    assert abs(k / n - 0.8) < 4 * sd, (k, n)


def test_aviation_world_has_airport_type_and_authority_hubs(
    aviation: World, stats: WorldStatistics
) -> None:
    train = aviation.dataset.train.to_labeled_triples()
    degree = degrees_by_kind(aviation, train)
    kinds = ("coordination_level", "aircraft_type", "authority", "airline", "airport", "alliance")
    top = {kind: max(degree[kind].values()) for kind in kinds}
    assert top == {
        "coordination_level": 54,
        "aircraft_type": 234,
        "authority": 68,
        "airline": 92,
        "airport": 33,
        "alliance": 8,
    }
    first = {kind: max(sorted(degree[kind]), key=degree[kind].__getitem__) for kind in kinds}
    assert first["authority"] == "authority_easa" and first["alliance"] == "alliance_star"
    assert first["coordination_level"] == "level_1"
    assert float(np.median(list(degree["pilot"].values()))) == 3
    median, p90 = enclosing_quantiles(aviation, set(train))  # 2-hop enclosing subgraphs, BFS
    assert median == stats.subgraph_median == 1392  # the docstring
    assert p90 == round(stats.subgraph_p90) == 2258
    assert 1000 <= stats.subgraph_median and stats.subgraph_p90 <= 5000


def test_aviation_size_is_bounded_below_and_the_smallest_world_has_every_country() -> None:
    with pytest.raises(GraphDataError, match=r"size: expected an int >= 60, got 59"):
        aviation_world(59)
    w = aviation_world(60, seed=1)
    kinds = list(w.entity_types.values())
    assert (kinds.count("airline"), kinds.count("airport"), kinds.count("pilot")) == (24, 30, 60)
    country = {e: k for e, k in relation_pairs(w, "located_in") if w.entity_types[e] == "airline"}
    kind = dict(relation_pairs(w, "kind"))
    network = {country[a] for a in country if kind[a] == "kind_network"}
    assert len(network) == 14  # a network carrier in every country
    fleet: dict[str, int] = {}
    for _, a in relation_pairs(w, "operated_by"):
        fleet[a] = fleet.get(a, 0) + 1
    assert len(fleet) == 24 and min(fleet.values()) >= 2  # two aircraft per airline first
    assert relation_pairs(w, "operates_for")  # the first regional carrier always flies for one


def test_aviation_comac_types_fly_in_china_only(aviation: World) -> None:
    country = dict(relation_pairs(aviation, "located_in"))
    operator = dict(relation_pairs(aviation, "operated_by"))
    model = dict(relation_pairs(aviation, "of_type"))
    maker = dict(relation_pairs(aviation, "built_by"))
    comac = [p for p, t in model.items() if maker[t] == "maker_comac"]
    assert comac and all(country[operator[p]] == "country_china" for p in comac)


def test_aviation_exception_and_noise_rates() -> None:
    # Pooled over three seeds at the default size, each exception rate within four binomial
    # sd (of the facts only that rule derives). Noise is drawn to the count (base.py step 2)
    # from the facts of the first closure, so the counts are checked nearly exactly.
    rates = {"regional_codes": 0.08, "partner_codes": 0.06, "lounge_access": 0.05}
    rates |= {"crew_assignment": 0.1, "foreign_permit": 0.05}
    withheld_n = {name: [0, 0] for name in rates}
    for seed in (0, 1, 2):
        w = _default(seed)
        everything, base = all_triples(w), set(w.base_triples)
        found, withheld = _aviation_groundings(everything), set(w.exceptions)
        relations = {r for _, r, _ in withheld}
        assert relations == {"flies_type", "lounge_access", "markets", "permit_from"}
        assert w.exception_rates == {str(r.name): rates.get(str(r.name), 0.0) for r in w.rules}
        own = {name: set(found[name]) - base for name in rates}
        own["regional_codes"] -= set(found["partner_codes"])
        own["partner_codes"] -= set(found["regional_codes"])
        for name, derived in own.items():
            withheld_n[name][0] += len(derived & withheld)
            withheld_n[name][1] += len(derived)
        closed = set(base).union(*_rounds(seed))  # the first closure, without noise
        check_noise_counts(w, closed, seed)
    for name, q in rates.items():
        k, n = withheld_n[name]
        assert abs(k / n - q) < 4 * math.sqrt(q * (1 - q) / n), (name, k, n)
