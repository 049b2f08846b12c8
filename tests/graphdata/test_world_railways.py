"""Tests for the railways world: ground truth by brute force, design, rates, hubs.

The world-agnostic checks (split guarantee, closure, symmetry and inverses, determinism and
file round trips) run on every world of :data:`graphdata.worlds.WORLDS` in ``test_worlds.py``;
these check what :mod:`graphdata.worlds.railways` states, mostly against a nested-loop join that
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
    RAILWAYS_RULES,
    World,
    WorldStatistics,
    railways_world,
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
    return default_world("railways", seed)


def _railways_groundings(facts: set[LabeledTriple]) -> Groundings:
    """Every grounding of every railways rule in ``facts``, by nested loops.

    Rule name -> head triple -> the groundings' body triples in body order; no
    :mod:`graphdata.rules`.
    """
    index = FactIndex(facts)
    pairs, tails, heads, add = index.of, index.tails, index.heads, index.add

    for u, d in pairs("allocated_to"):
        add("allocation_inverse", (d, "allocated", u), (u, "allocated_to", d))
    for x, c in pairs("trained_on"):
        add("type_training", (x, "can_drive", c), (x, "trained_on", c))
        for v in heads("variant_of", c):
            body = ((x, "trained_on", c), (v, "variant_of", c))
            add("variant_training", (x, "can_drive", v), *body)
    for d, u in pairs("allocated"):
        for c in tails("of_class", u):
            add("fleet_maintenance", (d, "maintains", c), (d, "allocated", u), (u, "of_class", c))
    for s, line in pairs("on_line"):
        for other in tails("on_line", s):
            if line != other:
                body = ((s, "on_line", line), (s, "on_line", other))
                add("interchange", (line, "interchange_with", other), *body)
    for x, v in pairs("rostered_on"):
        for c in tails("formed_of", v):
            if c in tails("can_drive", x):
                body = ((x, "rostered_on", v), (v, "formed_of", c), (x, "can_drive", c))
                add("qualified_driver", (x, "drives", v), *body)
    for v, line in pairs("runs_on"):
        for m in tails("managed_by", line):
            for o in tails("operated_by", v):
                if m != o:
                    body = ((v, "runs_on", line), (line, "managed_by", m), (v, "operated_by", o))
                    add("track_access", (v, "charged_by", m), *body)
    for v, c in pairs("formed_of"):
        if "traction_diesel" in tails("traction", c):
            for s in tails("calls_at", v):
                body = ((v, "formed_of", c), (c, "traction", "traction_diesel"), (v, "calls_at", s))
                add("diesel_emissions", (v, "diesel_at", s), *body)
    for v, o in pairs("operated_by"):
        for s in tails("calls_at", v):
            for y in tails("located_in", s):
                body = ((v, "operated_by", o), (v, "calls_at", s), (s, "located_in", y))
                add("town_service", (o, "serves_town", y), *body)
    return index.found


@cache
def _rounds(seed: int) -> list[set[LabeledTriple]]:
    """The facts each round of the closure adds at the default size and ``seed``."""
    return closure_rounds(_default(seed), _railways_groundings)


@pytest.fixture(scope="module")
def railways() -> World:
    return _default(0)  # the default size and seed 0: the module docstring's numbers


@pytest.fixture(scope="module")
def stats(railways: World) -> WorldStatistics:
    return world_statistics(railways, max_targets=200)


# ----------------------------------------------------------------------------- design


def test_railways_world_sizes_lengths_and_cardinalities(
    railways: World, stats: WorldStatistics
) -> None:
    s = stats
    assert (s.num_entities, s.num_relations) == (1169, 22)  # the docstring's numbers at seed 0
    assert s.split_triples == {"train": 6916, "valid": 227, "test": 225}
    assert entity_kinds(railways) == {
        "unit": 415,
        "station": 240,
        "service": 240,
        "driver": 120,
        "town": 60,
        "line": 26,
        "unit_class": 16,
        "depot": 15,
        "region": 14,
        "operator": 12,
        "country": 4,
        "manager": 4,
        "traction": 3,
    }
    assert sorted(r.length for r in railways.rules) == [1, 1, 2, 2, 2, 3, 3, 3, 3]
    assert s.targets_by_length == {1: 120, 2: 115, 3: 207} and s.noise_targets == 10
    assert s.targets_by_rule == {
        "allocation_inverse": 84,
        "diesel_emissions": 66,
        "fleet_maintenance": 21,
        "interchange": 54,
        "qualified_driver": 53,
        "town_service": 45,
        "track_access": 43,
        "type_training": 36,
        "variant_training": 40,
    }
    assert min(s.targets_by_rule.values()) >= 8  # the benchmark draws 6 a rule
    assert round(s.multi_grounding_share, 2) == 0.19
    card = s.cardinality
    assert card["allocated"] == "1-N"
    n_to_1 = ("allocated_to", "charged_by", "formed_of", "located_in", "managed_by")
    n_to_1 += ("of_class", "operated_by", "pathed_by", "runs_on", "traction")
    assert all(card[r] == "N-1" for r in n_to_1)
    n_to_n = ("calls_at", "can_drive", "diesel_at", "drives", "interchange_with", "maintains")
    n_to_n += ("on_line", "rostered_on", "serves_town", "trained_on")
    assert all(card[r] == "N-N" for r in n_to_n) and card["variant_of"] == "1-1" and len(card) == 22
    assert railways.symmetric == ("interchange_with",)
    assert railways.inverse_pairs == (("allocated_to", "allocated"),)
    assert railways.shortcuts == (("pathed_by", "charged_by"),)
    assert railways.rules_text == RAILWAYS_RULES
    withheld: dict[str, int] = {}
    for _, r, _ in railways.exceptions:
        withheld[r] = withheld.get(r, 0) + 1
    assert withheld == {
        "drives": 22,
        "can_drive": 17,
        "diesel_at": 14,
        "charged_by": 8,
        "maintains": 5,
        "serves_town": 4,
    }


@pytest.mark.parametrize(("size", "seed"), [(240, 0), (100, 4)])
def test_railways_ground_truth_matches_a_brute_force_join(size: int, seed: int) -> None:
    w = _default(seed) if size == 240 else world("railways", size=size, seed=seed)
    everything, base = all_triples(w), set(w.base_triples)
    found = _railways_groundings(everything)
    assert set(found) == {str(r.name) for r in w.rules}
    heads = {t for by_head in found.values() for t in by_head}
    assert heads - everything == set(w.exceptions)  # closed up to the exceptions
    assert {t for s in SPLITS for t in w.derived_splits[s]} == (everything - base) & heads
    assert {t for s in SPLITS for t in w.noise_splits[s]} == (everything - base) - heads
    in_train, graph = _railways_groundings(train_triples(w)), w.train_graph
    for target in held_out(w):
        assert any(target in in_train[name] for name in in_train), target  # split guarantee
        for rule in w.rules:
            expected = in_train[str(rule.name)].get(target, set())
            assert set(groundings(rule, target, graph)) == expected, (rule.name, target)


def test_railways_allocation_is_inverse_and_interchanges_are_symmetric(railways: World) -> None:
    w = railways
    allocated_to = relation_pairs(w, "allocated_to")
    assert relation_pairs(w, "allocated") == {(d, u) for u, d in allocated_to}
    assert not any(t[1] == "allocated" for t in w.base_triples)  # all derived, no exception
    assert len(allocated_to) == len({u for u, _ in allocated_to}) == 415
    # interchange_with by set algebra: two distinct lines through one station.
    lines_at: dict[str, set[str]] = {}
    for s, line in relation_pairs(w, "on_line"):
        lines_at.setdefault(s, set()).add(line)
    expected = {(a, b) for ls in lines_at.values() for a in ls for b in ls if a != b}
    inter = relation_pairs(w, "interchange_with")
    assert inter == expected and inter == {(b, a) for a, b in inter} and len(inter) == 266
    assert not noise_pairs(w, "interchange_with") and not exception_pairs(w, "interchange_with")
    # The closure: allocation, competence, interchanges, charges, diesel calls and towns in
    # round one; maintenance (through allocation) and drivers (through competence) in round two.
    rounds = [{t[1] for t in new} for new in _rounds(0)]
    assert rounds == [
        {"allocated", "can_drive", "charged_by", "diesel_at", "interchange_with", "serves_town"},
        {"drives", "maintains"},
    ]


def test_railways_competence_has_two_bodies_and_feeds_the_triangle(railways: World) -> None:
    rules = [r for r in railways.rules if r.head.relation == "can_drive"]
    assert [(r.name, r.length) for r in rules] == [("type_training", 1), ("variant_training", 2)]
    trained = relation_pairs(railways, "trained_on")
    parent = dict(relation_pairs(railways, "variant_of"))
    expected = trained | {(x, c) for x, k in trained for c, p in parent.items() if p == k}
    facts = relation_pairs(railways, "can_drive")
    noise, lost = noise_pairs(railways, "can_drive"), exception_pairs(railways, "can_drive")
    assert facts - noise == expected - lost
    only_variant = expected - trained
    assert (len(facts), len(noise), len(lost), len(only_variant)) == (396, 12, 17, 212)
    triangle = next(r for r in railways.rules if r.name == "qualified_driver")
    assert triangle.body[0].variables == triangle.head.variables  # parallel to the head
    assert triangle.body[2].relation == "can_drive"  # the derived two-body relation
    formed = dict(relation_pairs(railways, "formed_of"))
    drives = {(x, v) for x, v in relation_pairs(railways, "rostered_on") if (x, formed[v]) in facts}
    facts = relation_pairs(railways, "drives")
    noise, lost = noise_pairs(railways, "drives"), exception_pairs(railways, "drives")
    assert facts - noise == drives - lost
    assert (len(facts), len(noise), len(lost)) == (360, 11, 22)


def test_railways_maintenance_goes_through_the_derived_allocation(railways: World) -> None:
    rule = next(r for r in railways.rules if r.name == "fleet_maintenance")
    assert rule.body[0].relation == "allocated"  # the derived inverse
    of_class = dict(relation_pairs(railways, "of_class"))
    expected = {(d, of_class[u]) for u, d in relation_pairs(railways, "allocated_to")}
    facts = relation_pairs(railways, "maintains")
    noise, lost = noise_pairs(railways, "maintains"), exception_pairs(railways, "maintains")
    assert facts - noise == expected - lost
    assert (len(facts), len(noise), len(lost)) == (122, 5, 5)


def test_railways_access_charges_compare_a_head_and_a_body_variable(railways: World) -> None:
    rule = next(r for r in railways.rules if r.name == "track_access")
    (ineq,) = rule.inequalities
    assert ineq.left.name in rule.head.variables and ineq.right.name not in rule.head.variables
    manager = dict(relation_pairs(railways, "managed_by"))
    operator = dict(relation_pairs(railways, "operated_by"))
    runs = relation_pairs(railways, "runs_on")
    expected = {(v, manager[line]) for v, line in runs if manager[line] != operator[v]}
    own = {(v, manager[line]) for v, line in runs if manager[line] == operator[v]}
    facts = relation_pairs(railways, "charged_by")
    noise, lost = noise_pairs(railways, "charged_by"), exception_pairs(railways, "charged_by")
    assert facts - noise == expected - lost
    assert not facts & own  # an integrated railway's own services on its own lines
    assert (len(facts), len(noise), len(lost), len(own)) == (220, 4, 8, 60)


def test_railways_diesel_calls_read_a_constant(railways: World) -> None:
    rule = next(r for r in railways.rules if r.name == "diesel_emissions")
    assert rule.body[1].second.name == "traction_diesel" and not rule.body[1].second.is_variable
    traction = dict(relation_pairs(railways, "traction"))
    formed = dict(relation_pairs(railways, "formed_of"))
    calls = relation_pairs(railways, "calls_at")
    expected = {(v, s) for v, s in calls if traction[formed[v]] == "traction_diesel"}
    bimode = {(v, s) for v, s in calls if traction[formed[v]] == "traction_bimode"}
    facts = relation_pairs(railways, "diesel_at")
    noise, lost = noise_pairs(railways, "diesel_at"), exception_pairs(railways, "diesel_at")
    assert facts - noise == expected - lost and not facts & bimode
    assert (len(facts), len(noise), len(lost), len(bimode)) == (331, 7, 14, 201)


def test_railways_towns_served_are_a_chain_through_the_calls(railways: World) -> None:
    operator = dict(relation_pairs(railways, "operated_by"))
    town = dict(relation_pairs(railways, "located_in"))
    expected = {(operator[v], town[s]) for v, s in relation_pairs(railways, "calls_at")}
    facts = relation_pairs(railways, "serves_town")
    noise, lost = noise_pairs(railways, "serves_town"), exception_pairs(railways, "serves_town")
    assert facts - noise == expected - lost
    assert (len(facts), len(noise), len(lost)) == (225, 7, 4)


def test_railways_paths_are_a_correlated_shortcut(railways: World, stats: WorldStatistics) -> None:
    s, h = "pathed_by", "charged_by"
    heads = relation_pairs(railways, h)
    given = relation_pairs(railways, s, "train")
    cover = len(heads & given) / len(heads)
    assert round(cover, 2) == 0.72
    assert stats.shortcut_cooccurrence[(s, h)] == pytest.approx(cover)
    assert round(stats.shortcut_precision[(s, h)], 2) == 0.66
    assert all(s not in {a.relation for a in r.body} for r in railways.rules)
    # Pooled over three seeds: a service is pathed by its first line's manager with
    # probability .9 (or by chance, one of the four national managers).
    k = n = 0
    for seed in (0, 1, 2):
        w = _default(seed)
        manager = dict(relation_pairs(w, "managed_by"))
        lines = {v: sorted(ls) for v, ls in _lines_of(w).items()}
        pathed = dict(relation_pairs(w, "pathed_by"))
        k += sum(pathed[v] in {manager[x] for x in ls} for v, ls in lines.items())
        n += len(lines)
    assert abs(k / n - 0.9) < 4 * math.sqrt(0.9 * 0.1 / n) + 0.04, (k, n)


def _lines_of(w: World) -> dict[str, set[str]]:
    lines: dict[str, set[str]] = {}
    for v, line in relation_pairs(w, "runs_on"):
        lines.setdefault(v, set()).add(line)
    return lines


def test_railways_world_has_class_operator_and_line_hubs(
    railways: World, stats: WorldStatistics
) -> None:
    train = railways.dataset.train.to_labeled_triples()
    degree = degrees_by_kind(railways, train)
    kinds = ("unit_class", "operator", "line", "station", "driver")
    top = {kind: max(degree[kind].values()) for kind in kinds}
    assert top == {"unit_class": 167, "operator": 69, "line": 75, "station": 70, "driver": 15}
    first = {kind: max(sorted(degree[kind]), key=degree[kind].__getitem__) for kind in kinds}
    assert (first["unit_class"], first["operator"]) == ("class_e100", "operator_002")
    assert float(np.median(list(degree["driver"].values()))) == 7
    median, p90 = enclosing_quantiles(railways, set(train))  # 2-hop enclosing subgraphs, BFS
    assert median == stats.subgraph_median == 592.5  # the docstring
    assert p90 == round(stats.subgraph_p90) == 1501
    assert 1000 <= stats.subgraph_p90 <= 5000


def test_railways_size_is_bounded_below_and_the_smallest_world_covers_every_country() -> None:
    with pytest.raises(GraphDataError, match=r"size: expected an int >= 60, got 59"):
        railways_world(59)
    w = railways_world(60, seed=1)
    kinds = entity_kinds(w)
    assert (kinds["station"], kinds["town"], kinds["line"], kinds["service"]) == (60, 20, 12, 60)
    region = dict(relation_pairs(w, "located_in"))
    towns = [y for y, kind in w.entity_types.items() if kind == "town"]
    assert len({region[region[y]] for y in towns}) == 4  # a town in every country


def test_railways_exception_and_noise_rates() -> None:
    # Pooled over three seeds at the default size, each exception rate within four binomial
    # sd (of the facts only that rule derives). Noise is drawn to the count (base.py step 2)
    # from the facts of the first closure, so the counts are checked nearly exactly.
    rates = {"type_training": 0.02, "variant_training": 0.08, "qualified_driver": 0.05}
    rates |= {"fleet_maintenance": 0.04, "track_access": 0.04, "diesel_emissions": 0.05}
    rates |= {"town_service": 0.03}
    withheld_n = {name: [0, 0] for name in rates}
    for seed in (0, 1, 2):
        w = _default(seed)
        everything, base = all_triples(w), set(w.base_triples)
        found, withheld = _railways_groundings(everything), set(w.exceptions)
        assert {r for _, r, _ in withheld} <= {
            "can_drive",
            "drives",
            "maintains",
            "charged_by",
            "diesel_at",
            "serves_town",
        }
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


def test_railways_subgraphs_are_dense_at_every_seed() -> None:
    p90 = [world_statistics(_default(seed), max_targets=40).subgraph_p90 for seed in (1, 2, 3)]
    assert [round(x, 1) for x in p90] == [1103.2, 1251.1, 1259.4]  # the docstring
