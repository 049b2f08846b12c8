"""Tests for the construction world: ground truth by brute force, design, rates, hubs.

The world-agnostic checks (split guarantee, closure, symmetry and inverses, determinism and
file round trips) run on every world of :data:`graphdata.worlds.WORLDS` in ``test_worlds.py``;
these check what :mod:`graphdata.worlds.construction` states, mostly against a nested-loop join
that does not use :mod:`graphdata.rules`.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest

from graphdata.errors import GraphDataError
from graphdata.rules import groundings, parse_rules
from graphdata.typing import LabeledTriple
from graphdata.worlds import (
    CONSTRUCTION_RULES,
    World,
    WorldStatistics,
    construction_world,
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
    entity_kinds,
    exception_pairs,
    held_out,
    noise_facts,
    noise_pairs,
    relation_pairs,
    train_triples,
)


def _default(seed: int) -> World:
    """The world at the default size (drawn once per seed for the test session)."""
    return default_world("construction", seed)


def _construction_groundings(facts: set[LabeledTriple]) -> Groundings:
    """Every grounding of every construction rule in ``facts``, by nested loops.

    Rule name -> head triple -> the groundings' body triples in body order; no
    :mod:`graphdata.rules`.
    """
    index = FactIndex(facts)
    pairs, tails, heads, add = index.of, index.tails, index.heads, index.add

    for s, c in pairs("built_by"):
        add("contract_inverse", (c, "builds", s), (s, "built_by", c))
    for d, bank in pairs("facility_with"):
        add("facility_lending", (bank, "lends_to", d), (d, "facility_with", bank))
    for s, bank in pairs("financed_by"):
        for d in tails("developed_by", s):
            body = ((s, "financed_by", bank), (s, "developed_by", d))
            add("project_lending", (bank, "lends_to", d), *body)
    for p, s in pairs("permit_for"):
        for a in tails("issued_by", p):
            add("permit_issuer", (s, "permitted_by", a), (p, "permit_for", s), (p, "issued_by", a))
    for s, d in pairs("located_in"):
        for y in tails("located_in", d):
            for a in heads("jurisdiction", y):
                body = ((s, "located_in", d), (d, "located_in", y), (a, "jurisdiction", y))
                add("local_authority", (s, "permitted_by", a), *body)
    for c, s in pairs("builds"):
        for d in tails("developed_by", s):
            body = ((c, "builds", s), (s, "developed_by", d))
            add("client_relationship", (c, "works_for", d), *body)
    for k, s in pairs("works_on"):
        for a in tails("permitted_by", s):
            body = ((k, "works_on", s), (s, "permitted_by", a))
            add("trade_registration", (k, "registers_with", a), *body)
    for s, c in pairs("built_by"):
        for t in tails("adjacent_to", s):
            for k in tails("built_by", t):
                if c != k:
                    body = ((s, "built_by", c), (s, "adjacent_to", t), (t, "built_by", k))
                    add("coordination", (c, "coordinates_with", k), *body)
    for s, a in pairs("permitted_by"):
        for x in heads("inspected", s):
            if a in tails("employed_by", x):
                body = ((s, "permitted_by", a), (x, "inspected", s), (x, "employed_by", a))
                add("completion_signoff", (s, "certified_by", a), *body)
    for s, d in pairs("developed_by"):
        if "use_residential" in tails("use_class", s):
            for a in tails("permitted_by", s):
                body = ((s, "developed_by", d), (s, "use_class", "use_residential"))
                add("housing_levy", (d, "owes_levy", a), *body, (s, "permitted_by", a))
    return index.found


@cache
def _rounds(seed: int) -> list[set[LabeledTriple]]:
    """The facts each round of the closure adds at the default size and ``seed``."""
    return closure_rounds(_default(seed), _construction_groundings)


@pytest.fixture(scope="module")
def construction() -> World:
    return _default(0)  # the default size and seed 0: the module docstring's numbers


@pytest.fixture(scope="module")
def stats(construction: World) -> WorldStatistics:
    return world_statistics(construction, max_targets=200)


def _facts_noise_lost(w: World, relation: str) -> tuple[set, set, set]:
    """The pairs of ``relation``: all facts, the noise facts, and the withheld exceptions."""
    return relation_pairs(w, relation), noise_pairs(w, relation), exception_pairs(w, relation)


# ----------------------------------------------------------------------------- design


def test_construction_rules_parse_with_the_generic_parser() -> None:
    rules = parse_rules(CONSTRUCTION_RULES, source="construction rules")
    assert [str(r.name) for r in rules] == [
        "contract_inverse",
        "facility_lending",
        "project_lending",
        "permit_issuer",
        "local_authority",
        "client_relationship",
        "trade_registration",
        "coordination",
        "completion_signoff",
        "housing_levy",
    ]
    assert [r.length for r in rules] == [1, 1, 2, 2, 3, 2, 2, 3, 3, 3]
    assert sum(bool(r.inequalities) for r in rules) == 1
    constants = {t.name for r in rules for a in r.body for t in (a.first, a.second)}
    constants -= {v for r in rules for v in r.variables}
    assert constants == {"use_residential"}
    heads = [r.head.relation for r in rules]
    assert {h for h in heads if heads.count(h) == 2} == {"lends_to", "permitted_by"}
    derived = set(heads)
    through = {str(r.name) for r in rules if derived & {a.relation for a in r.body}}
    assert through == {
        "client_relationship",
        "trade_registration",
        "completion_signoff",
        "housing_levy",
    }
    # The world's parsed rules are the text's, and every line fits the line length.
    assert [r.name for r in construction_world(60, seed=0).rules] == [r.name for r in rules]
    assert max(len(line) for line in CONSTRUCTION_RULES.splitlines()) <= 100


def test_construction_world_sizes_lengths_and_cardinalities(
    construction: World, stats: WorldStatistics
) -> None:
    s = stats
    assert (s.num_entities, s.num_relations) == (1213, 22)  # the docstring's numbers at seed 0
    assert s.split_triples == {"train": 7318, "valid": 181, "test": 183}
    assert entity_kinds(construction) == {
        "permit": 508,
        "site": 360,
        "subcontractor": 72,
        "district": 60,
        "developer": 60,
        "inspector": 60,
        "contractor": 45,
        "authority": 15,
        "city": 12,
        "lender": 12,
        "use_class": 6,
        "country": 3,
    }
    assert sorted(r.length for r in construction.rules) == [1, 1, 2, 2, 2, 2, 3, 3, 3, 3]
    assert s.targets_by_length == {1: 86, 2: 168, 3: 104} and s.noise_targets == 6
    assert s.targets_by_rule == {
        "client_relationship": 27,
        "completion_signoff": 27,
        "contract_inverse": 72,
        "coordination": 40,
        "facility_lending": 14,
        "housing_levy": 15,
        "local_authority": 22,
        "permit_issuer": 57,
        "project_lending": 28,
        "trade_registration": 56,
    }
    assert min(s.targets_by_rule.values()) >= 8  # the benchmark draws 6 a rule
    assert round(s.multi_grounding_share, 2) == 0.39
    card = s.cardinality
    assert card["builds"] == card["inspected"] == "1-N"
    assert card["adjacent_to"] == card["jurisdiction"] == "1-1"
    n_to_1 = ("built_by", "certified_by", "developed_by", "employed_by", "facility_with")
    n_to_1 += ("financed_by", "issued_by", "located_in", "permit_for", "permitted_by")
    n_to_1 += ("use_class",)
    assert all(card[r] == "N-1" for r in n_to_1)
    n_to_n = ("coordinates_with", "framework_with", "lends_to", "owes_levy", "registers_with")
    n_to_n += ("works_for", "works_on")
    assert all(card[r] == "N-N" for r in n_to_n) and len(card) == 22
    assert construction.symmetric == ("adjacent_to", "coordinates_with")
    assert construction.inverse_pairs == (("built_by", "builds"),)
    assert construction.shortcuts == (("framework_with", "works_for"),)
    assert construction.rules_text == CONSTRUCTION_RULES
    withheld: dict[str, int] = {}
    for _, r, _ in construction.exceptions:
        withheld[r] = withheld.get(r, 0) + 1
    assert withheld == {
        "certified_by": 17,
        "owes_levy": 14,
        "permitted_by": 13,
        "registers_with": 13,
        "lends_to": 8,
        "works_for": 5,
    }


@pytest.mark.parametrize(("size", "seed"), [(360, 0), (100, 4)])
def test_construction_ground_truth_matches_a_brute_force_join(size: int, seed: int) -> None:
    w = _default(seed) if size == 360 else world("construction", size=size, seed=seed)
    everything, base = all_triples(w), set(w.base_triples)
    found = _construction_groundings(everything)
    assert set(found) == {str(r.name) for r in w.rules}
    heads = {t for by_head in found.values() for t in by_head}
    assert heads - everything == set(w.exceptions)  # closed up to the exceptions
    assert {t for s in SPLITS for t in w.derived_splits[s]} == (everything - base) & heads
    assert {t for s in SPLITS for t in w.noise_splits[s]} == (everything - base) - heads
    in_train, graph = _construction_groundings(train_triples(w)), w.train_graph
    for target in held_out(w):
        assert any(target in in_train[name] for name in in_train), target  # split guarantee
        for rule in w.rules:
            expected = in_train[str(rule.name)].get(target, set())
            assert set(groundings(rule, target, graph)) == expected, (rule.name, target)


def test_construction_contracts_are_inverse_and_adjacency_is_symmetric(
    construction: World,
) -> None:
    w = construction
    built_by = relation_pairs(w, "built_by")
    assert relation_pairs(w, "builds") == {(c, s) for s, c in built_by}
    assert not any(t[1] == "builds" for t in w.base_triples)  # all derived, no exception
    assert len(built_by) == len({s for s, _ in built_by}) == 360  # one main contractor a site
    adjacent = relation_pairs(w, "adjacent_to")
    assert adjacent == {(b, a) for a, b in adjacent} and len(adjacent) == 362
    assert not noise_pairs(w, "builds") and not exception_pairs(w, "builds")
    # The closure: contracts, lending, authorities and coordination in round one; clients,
    # registrations, sign-offs and levies (through contracts or authorities) in round two.
    rounds = [{t[1] for t in new} for new in _rounds(0)]
    assert rounds == [
        {"builds", "coordinates_with", "lends_to", "permitted_by"},
        {"certified_by", "owes_levy", "registers_with", "works_for"},
    ]


def test_construction_lending_and_authorities_are_heads_with_two_bodies(
    construction: World,
) -> None:
    w = construction
    everything, noise = all_triples(w), noise_facts(w)
    found = _construction_groundings(everything)
    shares = {}
    for head, (first, second) in {
        "lends_to": ("facility_lending", "project_lending"),
        "permitted_by": ("permit_issuer", "local_authority"),
    }.items():
        facts = {t for t in everything if t[1] == head}
        one, two = (set(found[name]) & facts for name in (first, second))
        shares[head] = body_shares(facts, one, two, noise)
    assert shares == {
        "lends_to": [0.32, 0.09, 0.56, 0.03],
        "permitted_by": [0.59, 0.11, 0.28, 0.02],
    }
    # lends_to by set algebra: a facility read backwards, or a project loan to the developer.
    developer = dict(relation_pairs(w, "developed_by"))
    expected = {(bank, d) for d, bank in relation_pairs(w, "facility_with")}
    expected |= {(bank, developer[s]) for s, bank in relation_pairs(w, "financed_by")}
    facts, noisy, lost = _facts_noise_lost(w, "lends_to")
    assert facts - noisy == expected - lost and (len(facts), len(noisy), len(lost)) == (211, 6, 8)
    # permitted_by: a permit's issuer, or the authority with jurisdiction over the site's city.
    site = dict(relation_pairs(w, "permit_for"))
    expected = {(site[p], a) for p, a in relation_pairs(w, "issued_by")}
    where = dict(relation_pairs(w, "located_in"))
    authority = {y: a for a, y in relation_pairs(w, "jurisdiction")}
    sites = [e for e, kind in w.entity_types.items() if kind == "site"]
    expected |= {(s, authority[where[where[s]]]) for s in sites}
    facts, noisy, lost = _facts_noise_lost(w, "permitted_by")
    assert facts - noisy == expected - lost and (len(facts), len(noisy), len(lost)) == (403, 8, 13)
    devcorp = {(s, a) for s, a in facts - noisy if a.startswith("devcorp_")}
    assert len(devcorp) == 21  # the regeneration districts' sites, only through their permits
    unpermitted = {(s, a) for s, a in facts - noisy if s not in set(site.values())}
    assert len(unpermitted) == 85  # only through the city


def test_construction_clients_and_registrations_go_through_derived_relations(
    construction: World,
) -> None:
    w = construction
    rules = {str(r.name): r for r in w.rules}
    assert rules["client_relationship"].body[0].relation == "builds"  # the derived inverse
    assert rules["trade_registration"].body[1].relation == "permitted_by"  # two bodies
    developer = dict(relation_pairs(w, "developed_by"))
    expected = {(c, developer[s]) for s, c in relation_pairs(w, "built_by")}
    facts, noisy, lost = _facts_noise_lost(w, "works_for")
    assert facts - noisy == expected - lost and (len(facts), len(noisy), len(lost)) == (157, 5, 5)
    permitted = relation_pairs(w, "permitted_by")  # with its noise, which feeds the body
    authorities: dict[str, set[str]] = {}
    for s, a in permitted:
        authorities.setdefault(s, set()).add(a)
    expected = {(k, a) for k, s in relation_pairs(w, "works_on") for a in authorities.get(s, ())}
    facts, noisy, lost = _facts_noise_lost(w, "registers_with")
    assert facts - noisy == expected - lost and (len(facts), len(noisy), len(lost)) == (352, 6, 13)


def test_construction_coordination_is_symmetric_with_an_inequality(construction: World) -> None:
    w = construction
    rule = next(r for r in w.rules if r.name == "coordination")
    (ineq,) = rule.inequalities
    assert {ineq.left.name, ineq.right.name} == set(rule.head.variables)
    contractor = dict(relation_pairs(w, "built_by"))
    adjacent = relation_pairs(w, "adjacent_to")
    pairs = {(contractor[s], contractor[t]) for s, t in adjacent}
    same = {(c, k) for c, k in pairs if c == k}
    facts = relation_pairs(w, "coordinates_with")
    assert facts == pairs - same and facts == {(k, c) for c, k in facts}
    assert not noise_pairs(w, "coordinates_with") and not exception_pairs(w, "coordinates_with")
    assert (len(facts), len(same)) == (200, 8)  # neighbouring sites of one contractor


def test_construction_signoff_is_a_triangle_through_the_derived_authority(
    construction: World,
) -> None:
    w = construction
    rule = next(r for r in w.rules if r.name == "completion_signoff")
    assert rule.body[0].variables == rule.head.variables  # parallel to the head, derived
    assert rule.body[0].relation == "permitted_by"
    employer = dict(relation_pairs(w, "employed_by"))
    visited = {(s, employer[x]) for x, s in relation_pairs(w, "inspected")}
    permitted = relation_pairs(w, "permitted_by")
    facts, noisy, lost = _facts_noise_lost(w, "certified_by")
    assert facts - noisy == (visited & permitted) - lost
    outside = visited - permitted  # an inspector of an authority that did not permit the site
    assert (len(facts), len(noisy), len(lost), len(outside)) == (177, 5, 17, 35)
    assert not facts & outside


def test_construction_levy_is_a_star_on_a_constant(construction: World) -> None:
    w = construction
    rule = next(r for r in w.rules if r.name == "housing_levy")
    centre = {v for v in rule.variables if all(v in a.variables for a in rule.body)}
    assert centre == {"S"} and "S" not in rule.head.variables  # a star on the site
    assert rule.body[1].second.name == "use_residential" and not rule.body[1].second.is_variable
    use = dict(relation_pairs(w, "use_class"))
    developer = dict(relation_pairs(w, "developed_by"))
    permitted = relation_pairs(w, "permitted_by")
    expected = {(developer[s], a) for s, a in permitted if use[s] == "use_residential"}
    student = {(developer[s], a) for s, a in permitted if use[s] == "use_student"}
    facts, noisy, lost = _facts_noise_lost(w, "owes_levy")
    assert facts - noisy == expected - lost
    assert (len(facts), len(noisy), len(lost), len(student - expected)) == (82, 3, 14, 24)
    assert not (facts - noisy) & (student - expected)  # student housing owes no levy


def test_construction_frameworks_are_a_correlated_shortcut(
    construction: World, stats: WorldStatistics
) -> None:
    s, h = "framework_with", "works_for"
    heads = relation_pairs(construction, h)
    given = relation_pairs(construction, s, "train")
    cover = len(heads & given) / len(heads)
    assert round(cover, 2) == 0.68
    assert stats.shortcut_cooccurrence[(s, h)] == pytest.approx(cover)
    assert round(stats.shortcut_precision[(s, h)], 2) == 0.63
    assert all(s not in {a.relation for a in r.body} for r in construction.rules)
    # Pooled over three seeds: a site is built by a framework contractor of its developer with
    # probability .85, or by chance (a framework contractor is also a contractor of the country).
    k = n = 0
    for seed in (0, 1, 2):
        w = _default(seed)
        framework = relation_pairs(w, "framework_with")
        developer = dict(relation_pairs(w, "developed_by"))
        built = relation_pairs(w, "built_by")
        k += sum((c, developer[site]) in framework for site, c in built)
        n += len(built)
    assert abs(k / n - 0.85) < 4 * math.sqrt(0.85 * 0.15 / n) + 0.04, (k, n)


def test_construction_world_has_authority_trade_and_use_hubs(
    construction: World, stats: WorldStatistics
) -> None:
    train = construction.dataset.train.to_labeled_triples()
    degree = degrees_by_kind(construction, train)
    kinds = ("authority", "subcontractor", "use_class", "lender", "contractor", "site")
    top = {kind: max(degree[kind].values()) for kind in kinds}
    assert top == {
        "authority": 517,
        "subcontractor": 172,
        "use_class": 143,
        "lender": 124,
        "contractor": 82,
        "site": 21,
    }
    first = {kind: max(sorted(degree[kind]), key=degree[kind].__getitem__) for kind in kinds}
    assert (first["authority"], first["use_class"]) == (
        "authority_city_poland_0",
        "use_residential",
    )
    assert float(np.median(list(degree["site"].values()))) == 14
    median, p90 = enclosing_quantiles(construction, set(train))  # 2-hop enclosing subgraphs, BFS
    assert median == stats.subgraph_median == 1928.0  # the docstring
    assert p90 == round(stats.subgraph_p90) == 3533
    assert 1000 <= stats.subgraph_p90 <= 5000


def test_construction_size_is_bounded_below_and_the_smallest_world_covers_every_country() -> None:
    with pytest.raises(GraphDataError, match=r"size: expected an int >= 60, got 59"):
        construction_world(59)
    w = construction_world(60, seed=1)
    kinds = entity_kinds(w)
    assert (kinds["site"], kinds["district"], kinds["city"], kinds["developer"]) == (60, 24, 12, 12)
    where = dict(relation_pairs(w, "located_in"))
    sites = [s for s, kind in w.entity_types.items() if kind == "site"]
    assert len({where[where[where[s]]] for s in sites}) == 3  # a site in every country
    assert {str(r.name) for r in w.rules} == set(_construction_groundings(all_triples(w)))


def test_construction_exception_and_noise_rates() -> None:
    # Pooled over three seeds at the default size, each exception rate within four binomial
    # sd (of the facts only that rule derives). Noise is drawn to the count (base.py step 2)
    # from the facts of the first closure, so the counts are checked nearly exactly.
    rates = {"facility_lending": 0.03, "project_lending": 0.05, "permit_issuer": 0.02}
    rates |= {"local_authority": 0.06, "client_relationship": 0.04, "trade_registration": 0.03}
    rates |= {"completion_signoff": 0.08, "housing_levy": 0.10}
    withheld_n = {name: [0, 0] for name in rates}
    for seed in (0, 1, 2):
        w = _default(seed)
        everything, base = all_triples(w), set(w.base_triples)
        found, withheld = _construction_groundings(everything), set(w.exceptions)
        assert {r for _, r, _ in withheld} <= set(w.noise_rates)
        assert w.exception_rates == {str(r.name): rates.get(str(r.name), 0.0) for r in w.rules}
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


def test_construction_subgraphs_are_dense_at_every_seed() -> None:
    p90 = [world_statistics(_default(seed), max_targets=40).subgraph_p90 for seed in (1, 2, 3)]
    assert [round(x, 1) for x in p90] == [3977.8, 3920.2, 3984.6]  # the docstring
    assert all(1000 <= x <= 5000 for x in p90)
