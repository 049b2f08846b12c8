"""Tests for the ecology world: ground truth by brute force, design, rates, hubs.

The world-agnostic checks (split guarantee, closure, symmetry and inverses, determinism and
file round trips) run on every world of :data:`graphdata.worlds.WORLDS` in ``test_worlds.py``;
these check what :mod:`graphdata.worlds.ecology` states, mostly against a nested-loop join
that does not use :mod:`graphdata.rules`.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import cache

import numpy as np
import pytest

from graphdata.errors import GraphDataError
from graphdata.rules import groundings, parse_rules
from graphdata.typing import LabeledTriple
from graphdata.worlds import (
    ECOLOGY_RULES,
    World,
    WorldStatistics,
    ecology_world,
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
    noise_facts,
    noise_pairs,
    relation_pairs,
    train_triples,
)


def _default(seed: int) -> World:
    """The world at the default size (drawn once per seed for the test session)."""
    return default_world("ecology", seed)


def _ecology_groundings(facts: set[LabeledTriple]) -> Groundings:
    """Every grounding of every ecology rule in ``facts``, by nested loops.

    Rule name -> head triple -> the groundings' body triples in body order; no
    :mod:`graphdata.rules`.
    """
    index = FactIndex(facts)
    pairs, tails, heads, add = index.of, index.tails, index.heads, index.add

    for x, y in pairs("feeds_on"):
        add("prey_inverse", (y, "eaten_by", x), (x, "feeds_on", y))
    for s, a in pairs("breeds_in"):
        add("breeding_presence", (s, "occurs_in", a), (s, "breeds_in", a))
    for s, m in pairs("migrates_along"):
        for a in tails("stopover_at", m):
            body = ((s, "migrates_along", m), (m, "stopover_at", a))
            add("flyway_passage", (s, "occurs_in", a), *body)
    for p, s in pairs("detected"):
        for t in tails("run_from", p):
            for a in tails("located_in", t):
                body = ((p, "detected", s), (p, "run_from", t), (t, "located_in", a))
                add("monitoring_presence", (s, "occurs_in", a), *body)
    for s, r in pairs("native_to"):
        for y in tails("located_in", r):
            body = ((s, "native_to", r), (r, "located_in", y))
            add("native_checklist", (s, "on_checklist", y), *body)
    for s, r in pairs("introduced_to"):
        for y in tails("located_in", r):
            body = ((s, "introduced_to", r), (r, "located_in", y))
            add("alien_checklist", (s, "on_checklist", y), *body)
    for s, a in pairs("occurs_in"):
        for r in tails("located_in", a):
            for y in tails("located_in", r):
                body = ((s, "occurs_in", a), (a, "located_in", r), (r, "located_in", y))
                add("area_checklist", (s, "on_checklist", y), *body)
    for c, a in pairs("corridor_joins"):
        for b in tails("corridor_joins", c):
            if a != b:
                body = ((c, "corridor_joins", a), (c, "corridor_joins", b))
                add("corridor_link", (a, "connected_to", b), *body)
    for s, a in pairs("occurs_in"):
        if "list_annex_ii" in tails("listed_as", s):
            body = ((s, "occurs_in", a), (s, "listed_as", "list_annex_ii"))
            add("site_designation", (a, "designated_for", s), *body)
    for i, s in pairs("feeds_on"):
        for r in tails("introduced_to", i):
            if s in heads("native_to", r):
                body = ((i, "feeds_on", s), (i, "introduced_to", r), (s, "native_to", r))
                add("invasive_threat", (i, "threatens", s), *body)
    for x, p in pairs("works_on"):
        for s in tails("detected", p):
            if "list_annex_iv" in tails("listed_as", s):
                body = ((x, "works_on", p), (p, "detected", s), (s, "listed_as", "list_annex_iv"))
                add("survey_licence", (x, "licensed_for", s), *body)
    return index.found


@cache
def _rounds(seed: int) -> list[set[LabeledTriple]]:
    """The facts each round of the closure adds at the default size and ``seed``."""
    return closure_rounds(_default(seed), _ecology_groundings)


@pytest.fixture(scope="module")
def ecology() -> World:
    return _default(0)  # the default size and seed 0: the module docstring's numbers


@pytest.fixture(scope="module")
def stats(ecology: World) -> WorldStatistics:
    return world_statistics(ecology, max_targets=200)


def _facts_noise_lost(w: World, relation: str) -> tuple[set, set, set]:
    """The pairs of ``relation``: all facts, the noise facts, and the withheld exceptions."""
    return relation_pairs(w, relation), noise_pairs(w, relation), exception_pairs(w, relation)


def _lists(w: World) -> dict[str, set[str]]:
    """Each species' lists (Red List categories and annexes)."""
    out: dict[str, set[str]] = {}
    for s, name in relation_pairs(w, "listed_as"):
        out.setdefault(s, set()).add(name)
    return out


def _shares(facts: set, bodies: list[set], noise: set) -> dict[tuple[bool, ...], float]:
    """Shares of a head's facts (two decimals, three for small ones) by which bodies ground
    them; the key ``(False, False, False)`` is the noise."""
    out = Counter(tuple(t in body for body in bodies) for t in facts)
    assert out[(False,) * len(bodies)] == len(facts & noise)
    return {
        key: round(k / len(facts), 2 if k / len(facts) >= 0.01 else 3) for key, k in out.items()
    }


# ----------------------------------------------------------------------------- design


def test_ecology_rules_parse_with_the_generic_parser() -> None:
    rules = parse_rules(ECOLOGY_RULES, source="ecology rules")
    assert [str(r.name) for r in rules] == [
        "prey_inverse",
        "breeding_presence",
        "flyway_passage",
        "monitoring_presence",
        "native_checklist",
        "alien_checklist",
        "area_checklist",
        "corridor_link",
        "site_designation",
        "invasive_threat",
        "survey_licence",
    ]
    assert [r.length for r in rules] == [1, 1, 2, 3, 2, 2, 3, 2, 2, 3, 3]
    assert sum(bool(r.inequalities) for r in rules) == 1
    constants = {t.name for r in rules for a in r.body for t in (a.first, a.second)}
    constants -= {v for r in rules for v in r.variables}
    assert constants == {"list_annex_ii", "list_annex_iv"}
    heads = [r.head.relation for r in rules]
    assert {h for h in heads if heads.count(h) > 1} == {"occurs_in", "on_checklist"}
    assert heads.count("occurs_in") == heads.count("on_checklist") == 3
    derived = set(heads)
    through = {str(r.name) for r in rules if derived & {a.relation for a in r.body}}
    assert through == {"area_checklist", "site_designation"}
    # The world's parsed rules are the text's, and every line fits the line length.
    assert [r.name for r in ecology_world(80, seed=0).rules] == [r.name for r in rules]
    assert max(len(line) for line in ECOLOGY_RULES.splitlines()) <= 100


def test_ecology_world_sizes_lengths_and_cardinalities(
    ecology: World, stats: WorldStatistics
) -> None:
    s = stats
    assert (s.num_entities, s.num_relations) == (583, 22)  # the docstring's numbers at seed 0
    assert s.split_triples == {"train": 6170, "valid": 216, "test": 214}
    assert entity_kinds(ecology) == {
        "species": 300,
        "researcher": 100,
        "area": 50,
        "programme": 36,
        "station": 25,
        "corridor": 25,
        "region": 18,
        "habitat": 8,
        "class": 7,
        "list": 7,
        "country": 4,
        "flyway": 3,
    }
    assert sorted(r.length for r in ecology.rules) == [1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3]
    assert s.targets_by_length == {1: 184, 2: 181, 3: 60} and s.noise_targets == 5
    assert s.targets_by_rule == {
        "alien_checklist": 16,
        "area_checklist": 11,
        "breeding_presence": 64,
        "corridor_link": 24,
        "flyway_passage": 40,
        "invasive_threat": 12,
        "monitoring_presence": 21,
        "native_checklist": 93,
        "prey_inverse": 120,
        "site_designation": 8,
        "survey_licence": 16,
    }
    assert min(s.targets_by_rule.values()) >= 6  # the benchmark draws 6 a rule
    assert round(s.multi_grounding_share, 2) == 0.25
    card = s.cardinality
    assert card["run_from"] == "1-1"
    assert card["stopover_at"] == card["threatens"] == "1-N"
    n_to_1 = ("in_class", "listed_as", "located_in", "migrates_along", "works_on")
    assert all(card[r] == "N-1" for r in n_to_1)
    n_to_n = ("breeds_in", "connected_to", "corridor_joins", "designated_for", "detected")
    n_to_n += ("eaten_by", "feeds_on", "has_habitat", "introduced_to", "licensed_for")
    n_to_n += ("native_to", "occurs_in", "on_checklist", "reported_in")
    assert all(card[r] == "N-N" for r in n_to_n) and len(card) == 22
    assert ecology.symmetric == ("connected_to",)
    assert ecology.inverse_pairs == (("feeds_on", "eaten_by"),)
    assert ecology.shortcuts == (("reported_in", "occurs_in"),)
    assert ecology.rules_text == ECOLOGY_RULES
    withheld = Counter(r for _, r, _ in ecology.exceptions)
    assert withheld == {"occurs_in": 34, "on_checklist": 20, "designated_for": 9, "licensed_for": 9}


@pytest.mark.parametrize(("size", "seed"), [(300, 0), (100, 4)])
def test_ecology_ground_truth_matches_a_brute_force_join(size: int, seed: int) -> None:
    w = _default(seed) if size == 300 else world("ecology", size=size, seed=seed)
    everything, base = all_triples(w), set(w.base_triples)
    found = _ecology_groundings(everything)
    assert set(found) == {str(r.name) for r in w.rules}
    heads = {t for by_head in found.values() for t in by_head}
    assert heads - everything == set(w.exceptions)  # closed up to the exceptions
    assert {t for s in SPLITS for t in w.derived_splits[s]} == (everything - base) & heads
    assert {t for s in SPLITS for t in w.noise_splits[s]} == (everything - base) - heads
    in_train, graph = _ecology_groundings(train_triples(w)), w.train_graph
    for target in held_out(w):
        assert any(target in in_train[name] for name in in_train), target  # split guarantee
        for rule in w.rules:
            expected = in_train[str(rule.name)].get(target, set())
            assert set(groundings(rule, target, graph)) == expected, (rule.name, target)


def test_ecology_food_web_is_an_inverse_pair_and_corridor_links_are_symmetric(
    ecology: World,
) -> None:
    w = ecology
    feeds_on = relation_pairs(w, "feeds_on")
    assert relation_pairs(w, "eaten_by") == {(y, x) for x, y in feeds_on}
    assert not any(t[1] == "eaten_by" for t in w.base_triples)  # all derived, no exception
    assert len(feeds_on) == 597 and not any(x == y for x, y in feeds_on)
    assert not noise_pairs(w, "eaten_by") and not exception_pairs(w, "eaten_by")
    connected = relation_pairs(w, "connected_to")
    assert connected == {(b, a) for a, b in connected} and len(connected) == 122
    # The closure: trophic links, occurrences, checklists from the ranges, corridor links,
    # threats and licences in round one; designations and checklists from the occurrences
    # (through the derived occurs_in) in round two.
    rounds = [{t[1] for t in new} for new in _rounds(0)]
    assert rounds == [
        {"connected_to", "eaten_by", "licensed_for", "occurs_in", "on_checklist", "threatens"},
        {"designated_for", "on_checklist"},
    ]


def test_ecology_occurrences_are_a_head_with_three_bodies(ecology: World) -> None:
    w = ecology
    everything, noise = all_triples(w), noise_facts(w)
    found = _ecology_groundings(everything)
    facts = {t for t in everything if t[1] == "occurs_in"}
    names = ("breeding_presence", "flyway_passage", "monitoring_presence")
    shares = _shares(facts, [set(found[name]) & facts for name in names], noise)
    assert shares == {
        (True, False, False): 0.38,
        (False, True, False): 0.31,
        (False, False, True): 0.18,
        (True, False, True): 0.06,
        (False, True, True): 0.04,
        (True, True, False): 0.01,
        (True, True, True): 0.003,
        (False, False, False): 0.02,
    }
    # occurs_in by set algebra: a breeding record, a stopover on the species' flyway, or a
    # detection by a programme run from a station in the area.
    expected = set(relation_pairs(w, "breeds_in"))
    stopovers: dict[str, set[str]] = {}
    for m, a in relation_pairs(w, "stopover_at"):
        stopovers.setdefault(m, set()).add(a)
    expected |= {(s, a) for s, m in relation_pairs(w, "migrates_along") for a in stopovers[m]}
    where = dict(relation_pairs(w, "located_in"))
    station = dict(relation_pairs(w, "run_from"))
    expected |= {(s, where[station[p]]) for p, s in relation_pairs(w, "detected")}
    facts_, noisy, lost = _facts_noise_lost(w, "occurs_in")
    assert facts_ - noisy == expected - lost
    assert (len(facts_), len(noisy), len(lost)) == (636, 13, 34)


def test_ecology_checklists_are_a_head_with_three_bodies(ecology: World) -> None:
    w = ecology
    everything, noise = all_triples(w), noise_facts(w)
    found = _ecology_groundings(everything)
    facts = {t for t in everything if t[1] == "on_checklist"}
    names = ("native_checklist", "alien_checklist", "area_checklist")
    shares = _shares(facts, [set(found[name]) & facts for name in names], noise)
    assert shares == {
        (True, False, False): 0.41,
        (True, False, True): 0.36,
        (False, False, True): 0.11,
        (False, True, False): 0.06,
        (False, True, True): 0.04,
        (True, True, False): 0.002,
        (True, True, True): 0.002,
        (False, False, False): 0.02,
    }
    # on_checklist by set algebra: the countries of the native and introduced regions, and of
    # the areas the species occurs in (noise occurrences included: they feed the body).
    where = dict(relation_pairs(w, "located_in"))
    expected = {(s, where[r]) for s, r in relation_pairs(w, "native_to")}
    expected |= {(s, where[r]) for s, r in relation_pairs(w, "introduced_to")}
    expected |= {(s, where[where[a]]) for s, a in relation_pairs(w, "occurs_in")}
    facts_, noisy, lost = _facts_noise_lost(w, "on_checklist")
    assert facts_ - noisy == expected - lost
    assert (len(facts_), len(noisy), len(lost)) == (622, 12, 20)
    # Only through an occurrence: mostly migrants on passage outside their range.
    migrants = {s for s, _ in relation_pairs(w, "migrates_along")}
    only_area = {t for t in facts if t in found["area_checklist"]} - set(found["native_checklist"])
    only_area -= set(found["alien_checklist"])
    assert len(only_area) == 70 and sum(s in migrants for s, _, _ in only_area) > 35


def test_ecology_corridor_links_are_a_symmetric_star_with_an_inequality(ecology: World) -> None:
    w = ecology
    rule = next(r for r in w.rules if r.name == "corridor_link")
    (ineq,) = rule.inequalities
    assert {ineq.left.name, ineq.right.name} == set(rule.head.variables)
    centre = {v for v in rule.variables if all(v in a.variables for a in rule.body)}
    assert centre == {"C"} and "C" not in rule.head.variables  # a star on the corridor
    joins: dict[str, set[str]] = {}
    for c, a in relation_pairs(w, "corridor_joins"):
        joins.setdefault(c, set()).add(a)
    pairs = {(a, b) for group in joins.values() for a in group for b in group if a != b}
    assert relation_pairs(w, "connected_to") == pairs
    assert not noise_pairs(w, "connected_to") and not exception_pairs(w, "connected_to")
    where = dict(relation_pairs(w, "located_in"))
    across = sum(len({where[where[a]] for a in group}) > 1 for group in joins.values())
    sizes = Counter(len(group) for group in joins.values())
    assert (len(joins), across, sizes) == (25, 11, {2: 9, 3: 12, 4: 3, 5: 1})


def test_ecology_designation_is_anchored_on_a_constant_through_derived_occurrences(
    ecology: World,
) -> None:
    w = ecology
    rule = next(r for r in w.rules if r.name == "site_designation")
    assert rule.body[0].relation == "occurs_in"  # the derived three-body head
    assert rule.body[1].second.name == "list_annex_ii" and not rule.body[1].second.is_variable
    lists = _lists(w)
    occurs = relation_pairs(w, "occurs_in")  # with its noise, which feeds the body
    expected = {(a, s) for s, a in occurs if "list_annex_ii" in lists.get(s, ())}
    birds = {(a, s) for s, a in occurs if "list_birds_annex_i" in lists.get(s, ())}
    strict = {(a, s) for s, a in occurs if lists.get(s, set()) >= {"list_annex_iv"}} - expected
    facts, noisy, lost = _facts_noise_lost(w, "designated_for")
    assert facts - noisy == expected - lost
    assert (len(facts), len(noisy), len(lost), len(birds), len(strict)) == (56, 2, 9, 102, 54)
    assert not (facts - noisy) & (birds | strict)  # Birds Directive and Annex IV: no body
    assert not birds & expected  # birds are on neither Habitats Directive annex


def test_ecology_invasive_threat_is_a_triangle(ecology: World) -> None:
    w = ecology
    rule = next(r for r in w.rules if r.name == "invasive_threat")
    assert rule.body[0].variables == rule.head.variables  # parallel to the head
    for v in rule.variables:  # a triangle: every variable in exactly two body atoms
        assert sum(v in a.variables for a in rule.body) == 2
    introduced: dict[str, set[str]] = {}
    for s, r in relation_pairs(w, "introduced_to"):
        introduced.setdefault(s, set()).add(r)
    native: dict[str, set[str]] = {}
    for s, r in relation_pairs(w, "native_to"):
        native.setdefault(s, set()).add(r)
    alien_links = {(i, s) for i, s in relation_pairs(w, "feeds_on") if i in introduced}
    triangles = {(i, s) for i, s in alien_links if introduced[i] & native.get(s, set())}
    facts, noisy, lost = _facts_noise_lost(w, "threatens")
    assert facts - noisy == triangles - lost
    outside = alien_links - triangles
    assert (len(facts), len(noisy), len(lost), len(triangles), len(outside)) == (61, 2, 0, 59, 24)
    assert not facts & outside


def test_ecology_survey_licence_is_a_chain_ending_on_a_constant(ecology: World) -> None:
    w = ecology
    rule = next(r for r in w.rules if r.name == "survey_licence")
    assert rule.body[2].second.name == "list_annex_iv" and not rule.body[2].second.is_variable
    lists = _lists(w)
    detected: dict[str, set[str]] = {}
    for p, s in relation_pairs(w, "detected"):
        detected.setdefault(p, set()).add(s)
    reach = {(x, s) for x, p in relation_pairs(w, "works_on") for s in detected.get(p, ())}
    expected = {(x, s) for x, s in reach if "list_annex_iv" in lists.get(s, ())}
    other = {(x, s) for x, s in reach if lists.get(s, set()) >= {"list_annex_ii"}} - expected
    facts, noisy, lost = _facts_noise_lost(w, "licensed_for")
    assert facts - noisy == expected - lost
    assert (len(facts), len(noisy), len(lost), len(expected), len(other)) == (80, 2, 9, 87, 135)
    assert not facts & other  # Annex II alone needs no licence


def test_ecology_citizen_reports_are_a_correlated_shortcut(
    ecology: World, stats: WorldStatistics
) -> None:
    s, h = "reported_in", "occurs_in"
    heads = relation_pairs(ecology, h)
    given = relation_pairs(ecology, s, "train")
    cover = len(heads & given) / len(heads)
    assert round(cover, 2) == 0.56
    assert stats.shortcut_cooccurrence[(s, h)] == pytest.approx(cover)
    assert round(stats.shortcut_precision[(s, h)], 2) == 0.44
    assert all(s not in {a.relation for a in r.body} for r in ecology.rules)
    # Pooled over three seeds: two fifths of the native birds are migrants on a flyway.
    k = n = 0
    for seed in (0, 1, 2):
        w = _default(seed)
        natives = {x for x, _ in relation_pairs(w, "native_to")}
        birds = {x for x, c in relation_pairs(w, "in_class") if c == "class_bird"} & natives
        migrants = {x for x, _ in relation_pairs(w, "migrates_along")}
        assert migrants <= natives
        k += len(birds & migrants)
        n += len(birds)
    assert abs(k / n - 0.4) < 4 * math.sqrt(0.4 * 0.6 / n), (k, n)


def test_ecology_world_has_country_region_habitat_and_class_hubs(
    ecology: World, stats: WorldStatistics
) -> None:
    train = ecology.dataset.train.to_labeled_triples()
    degree = degrees_by_kind(ecology, train)
    kinds = ("country", "region", "habitat", "area", "class", "list", "programme", "species")
    top = {kind: max(degree[kind].values()) for kind in kinds}
    assert top == {
        "country": 169,
        "region": 128,
        "habitat": 127,
        "area": 74,
        "class": 71,
        "list": 41,
        "programme": 33,
        "species": 43,
    }
    first = {kind: max(sorted(degree[kind]), key=degree[kind].__getitem__) for kind in kinds}
    assert [first[k] for k in ("country", "region", "habitat", "class", "list")] == [
        "country_germany",
        "region_germany_2",
        "habitat_forest",
        "class_bird",
        "list_annex_iv",
    ]
    assert float(np.median(list(degree["species"].values()))) == 16
    median, p90 = enclosing_quantiles(ecology, set(train))  # 2-hop enclosing subgraphs, BFS
    assert median == stats.subgraph_median == 3401.5  # the docstring
    assert p90 == round(stats.subgraph_p90) == 4413
    assert 1000 <= stats.subgraph_p90 <= 5000


def test_ecology_size_and_arguments_are_checked_and_the_smallest_world_covers_every_country() -> (
    None
):
    with pytest.raises(GraphDataError, match=r"size: expected an int >= 80, got 79"):
        ecology_world(79)
    with pytest.raises(GraphDataError, match=r"seed: expected an int >= 0 or None, got -1"):
        ecology_world(80, seed=-1)
    with pytest.raises(GraphDataError, match="expected a sum below 1"):
        ecology_world(80, valid_fraction=0.5, test_fraction=0.5)
    w = ecology_world(80, seed=1)
    kinds = entity_kinds(w)
    assert (kinds["species"], kinds["area"], kinds["region"], kinds["station"]) == (80, 30, 18, 12)
    where = dict(relation_pairs(w, "located_in"))
    areas = [a for a, kind in w.entity_types.items() if kind == "area"]
    assert len({where[where[a]] for a in areas}) == 4  # protected areas in every country
    assert len({y for _, y in relation_pairs(w, "on_checklist")}) == 4
    assert {str(r.name) for r in w.rules} == set(_ecology_groundings(all_triples(w)))
    # The same seed draws the same world; another seed another.
    again, other = ecology_world(80, seed=1), ecology_world(80, seed=2)
    assert again.base_triples == w.base_triples and again.exceptions == w.exceptions
    assert again.dataset.test.to_labeled_triples() == w.dataset.test.to_labeled_triples()
    assert other.base_triples != w.base_triples


def test_ecology_exception_and_noise_rates() -> None:
    # Pooled over three seeds at the default size, each exception rate within four binomial
    # sd (of the facts only that rule derives). Noise is drawn to the count (base.py step 2)
    # from the facts of the first closure, so the counts are checked nearly exactly.
    rates = {"breeding_presence": 0.03, "flyway_passage": 0.08, "monitoring_presence": 0.04}
    rates |= {"native_checklist": 0.02, "alien_checklist": 0.05, "area_checklist": 0.04}
    rates |= {"site_designation": 0.12, "invasive_threat": 0.10, "survey_licence": 0.06}
    withheld_n = {name: [0, 0] for name in rates}
    for seed in (0, 1, 2):
        w = _default(seed)
        everything, base = all_triples(w), set(w.base_triples)
        found, withheld = _ecology_groundings(everything), set(w.exceptions)
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


def test_ecology_subgraphs_are_dense_at_every_seed() -> None:
    p90 = [world_statistics(_default(seed), max_targets=40).subgraph_p90 for seed in (1, 2, 3)]
    assert [round(x, 1) for x in p90] == [4386.7, 4022.1, 4331.5]  # the docstring
    assert all(1000 <= x <= 5000 for x in p90)
