"""Tests for the telecommunications world: ground truth by brute force, design, rates, hubs.

The world-agnostic checks (split guarantee, closure, symmetry and inverses, determinism and
file round trips) run on every world of :data:`graphdata.worlds.WORLDS` in ``test_worlds.py``;
these check what :mod:`graphdata.worlds.telecom` states, mostly against a nested-loop join that
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
    TELECOM_RULES,
    World,
    WorldStatistics,
    telecom_world,
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
    return default_world("telecom", seed)


@pytest.fixture(scope="module")
def network() -> World:
    return _default(0)  # the default size and seed 0: the module docstring's numbers


@pytest.fixture(scope="module")
def stats(network: World) -> WorldStatistics:
    return world_statistics(network, max_targets=200)


def _telecom_groundings(facts: set[LabeledTriple]) -> Groundings:
    """Every grounding of every telecom rule in ``facts``, by nested loops (no graphdata.rules).

    Rule name -> head triple -> the groundings' body triples in body order.
    """
    index = FactIndex(facts)
    pairs, tails, add = index.of, index.tails, index.add

    for o, p in pairs("roams_with"):
        add("agreement_mirror", (p, "roams_with", o), (o, "roams_with", p))
    for m, o in pairs("hosted_by"):
        add("host_inverse", (o, "hosts", m), (m, "hosted_by", o))
    for o, m in pairs("hosts"):
        for p in tails("roams_with", o):
            add("host_roaming", (m, "roams_with", p), (o, "hosts", m), (o, "roams_with", p))
    for o, p in pairs("roams_with"):
        for k in tails("located_in", p):
            add("roaming_footprint", (o, "roams_in", k), (o, "roams_with", p), (p, "located_in", k))
    for t, o in pairs("operated_by"):
        for b in tails("broadcasts", t):
            add("band_deployment", (o, "deploys", b), (t, "operated_by", o), (t, "broadcasts", b))
    for d, b in pairs("supports"):
        for o in index.heads("licensed", b):
            if b in tails("deploys", o):
                body = ((d, "supports", b), (o, "licensed", b), (o, "deploys", b))
                add("device_compatibility", (d, "compatible", o), *body)
    for s, x in pairs("subscribes_to"):
        if "kind_mno" in tails("kind", x):
            body = ((s, "subscribes_to", x), (x, "kind", "kind_mno"))
            add("own_network", (s, "home_network", x), *body)
        for o in tails("hosted_by", x):
            add(
                "mvno_network", (s, "home_network", o), (s, "subscribes_to", x), (x, "hosted_by", o)
            )
    for s, f in pairs("has_feature"):
        if f != "feature_roaming":
            continue
        for o in tails("home_network", s):
            for k in tails("roams_in", o):
                body = ((s, "has_feature", f), (s, "home_network", o), (o, "roams_in", k))
                add("roaming_plan", (s, "can_roam_in", k), *body)
    return index.found


@cache
def _rounds(seed: int) -> list[set[LabeledTriple]]:
    """The facts each round of the closure adds to the base facts of ``_default(seed)``."""
    return closure_rounds(_default(seed), _telecom_groundings)


def _roaming_closure(w: World) -> set[tuple[str, str]]:
    """The recorded agreements closed under both directions and the hosts' inheritance, by a
    fixpoint over pairs (no rule text)."""
    base = {(o, p) for o, r, p in w.base_triples if r == "roams_with"}
    host = dict(relation_pairs(w, "hosted_by"))
    pairs = set(base)
    while True:
        grown = pairs | {(p, o) for o, p in pairs}
        grown |= {(m, p) for m, o in host.items() for q, p in pairs if q == o}
        if grown == pairs:
            return pairs
        pairs = grown


# ----------------------------------------------------------------------------- design


def test_telecom_world_sizes_lengths_and_cardinalities(
    network: World, stats: WorldStatistics
) -> None:
    s = stats
    kinds: dict[str, int] = {}
    for kind in network.entity_types.values():
        kinds[kind] = kinds.get(kind, 0) + 1
    assert (s.num_entities, s.num_relations) == (677, 20)  # the docstring's numbers at seed 0
    assert kinds == {
        "subscriber": 400,
        "tower": 160,
        "city": 33,
        "device": 25,
        "operator": 16,
        "mvno": 16,
        "country": 8,
        "band": 8,
        "vendor": 5,
        "feature": 4,
        "operator_kind": 2,
    }
    assert s.split_triples == {"train": 5870, "valid": 136, "test": 138}
    assert 600 <= s.num_entities <= 900 and 5000 <= sum(s.split_triples.values()) <= 9000
    lengths = [r.length for r in network.rules]
    assert (lengths.count(1), lengths.count(2), lengths.count(3)) == (2, 5, 2)
    assert s.targets_by_length == {1: 50, 2: 106, 3: 106} and s.noise_targets == 12
    assert s.targets_by_rule == {
        "agreement_mirror": 46,
        "band_deployment": 8,
        "device_compatibility": 42,
        "host_inverse": 4,
        "mvno_network": 16,
        "own_network": 60,
        "roaming_footprint": 22,
        "roaming_plan": 64,
    }
    assert round(s.multi_grounding_share, 2) == 0.19
    card = s.cardinality
    assert card["hosted_by"] == card["hosts"] == "1-1"
    n_to_1 = ("home_network", "kind", "located_in", "operated_by", "subscribes_to")
    assert all(card[r] == "N-1" for r in (*n_to_1, "supplied_by", "uses_device"))
    n_to_n = ("attached_to", "billed_in", "broadcasts", "can_roam_in", "compatible", "deploys")
    n_to_n += ("has_feature", "licensed", "roams_in", "roams_with", "supports")
    assert all(card[r] == "N-N" for r in n_to_n) and len(card) == 20
    assert network.symmetric == ("roams_with",)
    assert network.inverse_pairs == (("hosted_by", "hosts"),)
    assert network.shortcuts == (("billed_in", "can_roam_in"),)
    assert network.rules_text == TELECOM_RULES
    assert len(network.exceptions) == 81


@pytest.mark.parametrize(("size", "seed"), [(400, 0), (120, 4)])
def test_telecom_ground_truth_matches_a_brute_force_join(size: int, seed: int) -> None:
    w = _default(seed) if size == 400 else world("telecom", size=size, seed=seed)
    everything, base = all_triples(w), set(w.base_triples)
    found = _telecom_groundings(everything)
    assert set(found) == {str(r.name) for r in w.rules}
    heads = {t for by_head in found.values() for t in by_head}
    assert heads - everything == set(w.exceptions)  # closed up to the exceptions
    assert {t for s in SPLITS for t in w.derived_splits[s]} == (everything - base) & heads
    assert {t for s in SPLITS for t in w.noise_splits[s]} == (everything - base) - heads
    in_train, graph = _telecom_groundings(train_triples(w)), w.train_graph
    for target in held_out(w):
        assert any(target in in_train[name] for name in in_train), target  # split guarantee
        for rule in w.rules:
            expected = in_train[str(rule.name)].get(target, set())
            assert set(groundings(rule, target, graph)) == expected, (rule.name, target)


def test_telecom_roaming_is_symmetric_and_inherited_through_the_derived_hosts(
    network: World,
) -> None:
    hosted = relation_pairs(network, "hosted_by")
    assert relation_pairs(network, "hosts") == {(o, m) for m, o in hosted}
    assert len({m for m, _ in hosted}) == len(hosted) == 16  # one host a virtual operator
    rules = [r for r in network.rules if r.head.relation == "roams_with"]
    assert [(r.name, r.length) for r in rules] == [("agreement_mirror", 1), ("host_roaming", 2)]
    assert [a.relation for a in rules[1].body] == ["hosts", "roams_with"]  # derived, recursive
    pairs = relation_pairs(network, "roams_with")
    assert pairs == _roaming_closure(network)  # no exception, no noise: exactly the closure
    assert pairs == {(p, o) for o, p in pairs} and not any(o == p for o, p in pairs)
    base = {(o, p) for o, r, p in network.base_triples if r == "roams_with"}
    virtual = {(o, p) for o, p in pairs if o.startswith("mvno_") or p.startswith("mvno_")}
    both = {(o, p) for o, p in virtual if o.startswith("mvno_") and p.startswith("mvno_")}
    assert (len(pairs), len(base), len(virtual), len(both)) == (284, 34, 216, 74)  # the docstring
    everything = all_triples(network)
    found = _telecom_groundings(everything)
    inherited = set(found["host_roaming"])
    assert all((p, "roams_with", o) in found["agreement_mirror"] for o, p in pairs)
    assert inherited and inherited <= set(found["agreement_mirror"])  # both bodies hold
    train, targets = train_triples(network), held_out(network, "roams_with")
    back = sum((d, r, c) in train for c, r, d in targets)
    assert (len(targets), back) == (46, 46)
    # The closure: the inverse, deployments, home networks, footprints and the first
    # agreements in round one; agreements need four rounds, feeding footprints and roaming.
    rounds = [{t[1] for t in new} for new in _rounds(0)]
    assert rounds == [
        {"deploys", "home_network", "hosts", "roams_in", "roams_with"},
        {"can_roam_in", "compatible", "roams_in", "roams_with"},
        {"can_roam_in", "roams_in", "roams_with"},
        {"roams_with"},
    ]


def test_telecom_home_network_has_two_disjoint_bodies_one_anchored_on_kind_mno(
    network: World,
) -> None:
    rules = [r for r in network.rules if r.head.relation == "home_network"]
    assert [(r.name, r.length) for r in rules] == [("own_network", 2), ("mvno_network", 2)]
    parallel, anchor = rules[0].body
    assert (parallel.relation, parallel.variables) == ("subscribes_to", rules[0].head.variables)
    assert (anchor.first.name, anchor.second.name, anchor.second.is_variable) == (
        "O",
        "kind_mno",
        False,
    )
    operator = dict(relation_pairs(network, "subscribes_to"))
    host = dict(relation_pairs(network, "hosted_by"))
    expected = {(s, "home_network", host.get(x, x)) for s, x in operator.items()}
    facts = {t for t in all_triples(network) if t[1] == "home_network"}
    noise, withheld = noise_facts(network), set(network.exceptions)
    assert facts - noise == expected - withheld
    assert len(operator) == 400 and sum(x in host for x in operator.values()) == 66
    found = _telecom_groundings(all_triples(network))
    own, virtual = (set(found[str(r.name)]) & facts for r in rules)
    assert body_shares(facts, own, virtual, noise) == [0.0, 0.82, 0.16, 0.02]  # seed 0
    assert (len(facts), len(facts & noise), len(facts & withheld)) == (406, 8, 0)
    assert sum(t[1] == "home_network" for t in withheld) == 2


def test_telecom_compatibility_needs_two_atoms_on_one_operator_and_band(
    network: World,
) -> None:
    rule = next(r for r in network.rules if r.name == "device_compatibility")
    radio, licence, deployment = rule.body
    assert [a.relation for a in rule.body] == ["supports", "licensed", "deploys"]
    assert licence.variables == deployment.variables == ("O", "B")  # a cycle of length two
    assert radio.second.name == "B" and "B" not in rule.head.variables
    supports = relation_pairs(network, "supports")
    licensed, deploys = relation_pairs(network, "licensed"), relation_pairs(network, "deploys")

    def join(bands: set[tuple[str, str]]) -> set[tuple[str, str]]:
        return {(d, o) for d, b in supports for o, c in bands if b == c}

    expected = join(licensed & deploys)
    facts = {t for t in all_triples(network) if t[1] == "compatible"}
    noise, withheld = noise_facts(network), set(network.exceptions)
    assert {(d, o) for d, _, o in facts - noise} == expected - {(d, o) for d, _, o in withheld}
    assert (len(facts), len(facts & noise), len(expected)) == (252, 10, 262)
    # Either atom alone derives more: licences not in use and bands on leased spectrum.
    assert (len(licensed - deploys), len(deploys - licensed)) == (14, 5)
    assert (len(join(licensed)), len(join(deploys))) == (305, 292)
    # band_deployment rolls towers up: most deployments have several groundings.
    found = _telecom_groundings(all_triples(network))
    counts = [len(g) for t, g in found["band_deployment"].items() if t[1] == "deploys"]
    assert (len(deploys), len(counts), float(np.median(counts)), max(counts)) == (42, 41, 5.0, 22)


def test_telecom_roaming_plan_hangs_feature_roaming_off_the_head_through_two_derived(
    network: World,
) -> None:
    rule = next(r for r in network.rules if r.name == "roaming_plan")
    anchor, home, reach = rule.body
    assert (anchor.first.name, anchor.second.name, anchor.second.is_variable) == (
        "S",
        "feature_roaming",
        False,
    )
    assert rule.head.first.name == "S" == home.first.name and home.second.name == reach.first.name
    derived_heads = {r.head.relation for r in network.rules}
    assert {home.relation, reach.relation} <= derived_heads  # both atoms derived
    roaming = {s for s, f in relation_pairs(network, "has_feature") if f == "feature_roaming"}
    homes, reach_of = relation_pairs(network, "home_network"), relation_pairs(network, "roams_in")
    expected = {(s, k) for s, o in homes if s in roaming for p, k in reach_of if p == o}
    facts = {t for t in all_triples(network) if t[1] == "can_roam_in"}
    noise, withheld = noise_facts(network), set(network.exceptions)
    assert {(s, k) for s, _, k in facts - noise} == expected - {(s, k) for s, _, k in withheld}
    assert (len(roaming), len(facts), len(facts & noise)) == (128, 456, 13)  # the docstring
    footprint = {t for t in all_triples(network) if t[1] == "roams_in"}
    assert (len(footprint), len(footprint & noise)) == (119, 5)
    assert len(held_out(network, "can_roam_in")) >= 60


def test_telecom_billing_is_a_correlated_shortcut_of_roaming(
    network: World, stats: WorldStatistics
) -> None:
    heads = relation_pairs(network, "can_roam_in")
    given = relation_pairs(network, "billed_in", "train")
    cover, precision = len(heads & given) / len(heads), len(heads & given) / len(given)
    assert (round(cover, 2), round(precision, 2)) == (0.67, 0.92)  # the docstring, seed 0
    assert stats.shortcut_cooccurrence[("billed_in", "can_roam_in")] == pytest.approx(cover)
    assert stats.shortcut_precision[("billed_in", "can_roam_in")] == pytest.approx(precision)
    assert all("billed_in" not in {a.relation for a in r.body} for r in network.rules)
    # A barred subscriber is not billed there but by a day pass: 1 of the 50 at seed 0.
    lost = {(s, k) for s, r, k in network.exceptions if r == "can_roam_in"}
    assert (len(lost), len(lost & given), len(given)) == (50, 1, 330)
    # Pooled over three seeds: .7 of the roaming pairs billed, within four binomial sd; a day
    # pass (.08 of the subscribers, one country each) can only add to it.
    k = n = passes = 0
    for seed in (0, 1, 2):
        w = _default(seed)
        pairs = relation_pairs(w, "can_roam_in")
        k += len(pairs & relation_pairs(w, "billed_in"))
        n += len(pairs)
        passes += len({s for s, _ in pairs})
    sd = math.sqrt(0.7 * 0.3 / n)
    assert -4 * sd < k / n - 0.7 < 4 * sd + 0.08 * passes / n, (k, n)


def test_telecom_world_has_feature_country_operator_and_band_hubs(
    network: World, stats: WorldStatistics
) -> None:
    train = network.dataset.train.to_labeled_triples()
    degree = degrees_by_kind(network, train)
    kinds = ("feature", "country", "operator", "device", "band", "vendor", "city")
    top = {kind: max(degree[kind].values()) for kind in kinds}
    assert top == {
        "feature": 213,
        "country": 115,
        "operator": 100,
        "device": 71,
        "band": 64,
        "vendor": 53,
        "city": 52,
    }
    assert float(np.median(list(degree["subscriber"].values()))) == 9
    assert top["feature"] >= 20 * 9
    median, p90 = enclosing_quantiles(network, set(train))  # 2-hop enclosing subgraphs, BFS
    assert median == stats.subgraph_median == 2040  # the docstring
    assert p90 == round(stats.subgraph_p90) == 3091
    assert 1000 <= stats.subgraph_median and stats.subgraph_p90 <= 5000


def test_telecom_size_is_bounded_below_and_the_smallest_world_has_every_network() -> None:
    with pytest.raises(GraphDataError, match=r"size: expected an int >= 60, got 59"):
        telecom_world(59)
    w = telecom_world(60, seed=1)
    kinds = list(w.entity_types.values())
    assert (kinds.count("operator"), kinds.count("mvno"), kinds.count("city")) == (16, 4, 12)
    country = {e: k for e, k in relation_pairs(w, "located_in") if w.entity_types[e] == "city"}
    assert len(set(country.values())) == 8  # a city in every country at the minimum
    towers: dict[str, int] = {}
    for _, o in relation_pairs(w, "operated_by"):
        towers[o] = towers.get(o, 0) + 1
    assert len(towers) == 16 and min(towers.values()) >= 2  # two towers per network first


def test_telecom_exception_and_noise_rates() -> None:
    # Pooled over three seeds at the default size, each exception rate within four binomial
    # sd (of the facts only that rule derives). Noise is drawn to the count (base.py step 2)
    # from the facts of the first closure, so the counts are checked nearly exactly.
    rates = {"roaming_footprint": 0.06, "device_compatibility": 0.08}
    rates |= {"mvno_network": 0.04, "roaming_plan": 0.1}
    withheld_n = {name: [0, 0] for name in rates}
    for seed in (0, 1, 2):
        w = _default(seed)
        everything, base = all_triples(w), set(w.base_triples)
        found, withheld = _telecom_groundings(everything), set(w.exceptions)
        relations = {r for _, r, _ in withheld}
        assert relations == {"can_roam_in", "compatible", "home_network", "roams_in"}
        assert w.exception_rates == {str(r.name): rates.get(str(r.name), 0.0) for r in w.rules}
        assert not set(found["own_network"]) & withheld  # rate 0 for the own operator
        own = {name: set(found[name]) - base for name in rates}
        own["mvno_network"] -= set(found["own_network"])
        for name, derived in own.items():
            withheld_n[name][0] += len(derived & withheld)
            withheld_n[name][1] += len(derived)
        closed = set(base).union(*_rounds(seed))  # the first closure, without noise
        check_noise_counts(w, closed, seed)
    for name, q in rates.items():
        k, n = withheld_n[name]
        assert abs(k / n - q) < 4 * math.sqrt(q * (1 - q) / n), (name, k, n)
