"""Tests for the wine world: ground truth by brute force, design, rates, hubs.

The world-agnostic checks (split guarantee, closure, symmetry and inverses, determinism and
file round trips) run on every world of :data:`graphdata.worlds.WORLDS` in ``test_worlds.py``;
these check what :mod:`graphdata.worlds.wine` states, mostly against a nested-loop join that
does not use :mod:`graphdata.rules`.
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
    WINE_RULES,
    World,
    WorldStatistics,
    wine_world,
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
    return default_world("wine", seed)


def _wine_groundings(facts: set[LabeledTriple]) -> Groundings:
    """Every grounding of every wine rule in ``facts``, by nested loops.

    Rule name -> head triple -> the groundings' body triples in body order; no
    :mod:`graphdata.rules`.
    """
    index = FactIndex(facts)
    pairs, tails, heads, add = index.of, index.tails, index.heads, index.add

    for w, e in pairs("made_by"):
        add("portfolio_inverse", (e, "produces", w), (w, "made_by", e))
    for w, g in pairs("labelled_variety"):
        add("varietal_label", (w, "blend_of", g), (w, "labelled_variety", g))
    for e, o in pairs("owned_by"):
        for f in heads("owned_by", o):
            if e != f:
                body = ((e, "owned_by", o), (f, "owned_by", o))
                add("owner_stablemates", (e, "stablemate", f), *body)
    for w, g in pairs("blend_of"):
        for c in tails("berry_colour", g):
            add("grape_colour", (w, "colour_of", c), (w, "blend_of", g), (g, "berry_colour", c))
    for w, e in pairs("made_by"):
        for n in tails("sells_through", e):
            add("en_primeur", (w, "offered_by", n), (w, "made_by", e), (e, "sells_through", n))
        if "cert_organic" in tails("certified", e):
            body = ((w, "made_by", e), (e, "certified", "cert_organic"))
            add("organic_wine", (w, "certified", "cert_organic"), *body)
        for i in heads("agent_for", e):
            for k in tails("located_in", i):
                body = ((w, "made_by", e), (i, "agent_for", e), (i, "located_in", k))
                add("import_market", (w, "available_in", k), *body)
        for a in tails("located_in", e):
            if a in tails("from_appellation", w):
                body = ((w, "made_by", e), (e, "located_in", a), (w, "from_appellation", a))
                add("estate_bottling", (w, "estate_bottled", e), *body)
    for e, w in pairs("produces"):
        for v in tails("of_vintage", w):
            if "weather_frost" in tails("marked_by", v):
                body = ((e, "produces", w), (w, "of_vintage", v), (v, "marked_by", "weather_frost"))
                add("frost_loss", (e, "short_crop", v), *body)
    return index.found


@cache
def _rounds(seed: int) -> list[set[LabeledTriple]]:
    """The facts each round of the closure adds at the default size and ``seed``."""
    return closure_rounds(_default(seed), _wine_groundings)


@pytest.fixture(scope="module")
def wine() -> World:
    return _default(0)  # the default size and seed 0: the module docstring's numbers


@pytest.fixture(scope="module")
def stats(wine: World) -> WorldStatistics:
    return world_statistics(wine, max_targets=200)


def _facts_noise_lost(w: World, relation: str) -> tuple[set, set, set]:
    """The pairs of ``relation``: all facts, the noise facts, and the withheld exceptions."""
    return relation_pairs(w, relation), noise_pairs(w, relation), exception_pairs(w, relation)


def _kind(w: World, kind: str) -> set[str]:
    """The entities of one kind."""
    return {e for e, k in w.entity_types.items() if k == kind}


# ----------------------------------------------------------------------------- design


def test_wine_rules_parse_with_the_generic_parser() -> None:
    rules = parse_rules(WINE_RULES, source="wine rules")
    assert [str(r.name) for r in rules] == [
        "portfolio_inverse",
        "varietal_label",
        "owner_stablemates",
        "grape_colour",
        "en_primeur",
        "organic_wine",
        "import_market",
        "estate_bottling",
        "frost_loss",
    ]
    assert [r.length for r in rules] == [1, 1, 2, 2, 2, 2, 3, 3, 3]
    assert sum(bool(r.inequalities) for r in rules) == 1
    constants = {t.name for r in rules for a in r.body for t in (a.first, a.second)}
    constants -= {v for r in rules for v in r.variables}
    assert constants == {"cert_organic", "weather_frost"}
    organic = next(r for r in rules if r.name == "organic_wine")
    assert organic.head.second.name == "cert_organic" and not organic.head.second.is_variable
    heads = [r.head.relation for r in rules]
    assert len(set(heads)) == len(heads)  # one body a head
    # Bodies with a head relation: the derived blend, the producers' own certificates (base
    # facts of the head relation of the wines'), the derived inverse.
    through = {str(r.name) for r in rules if set(heads) & {a.relation for a in r.body}}
    assert through == {"grape_colour", "organic_wine", "frost_loss"}
    # The world's parsed rules are the text's, and every line fits the line length.
    assert [r.name for r in wine_world(80, seed=0).rules] == [r.name for r in rules]
    assert max(len(line) for line in WINE_RULES.splitlines()) <= 100


def test_wine_world_sizes_lengths_and_cardinalities(wine: World, stats: WorldStatistics) -> None:
    s = stats
    assert (s.num_entities, s.num_relations) == (1228, 22)  # the docstring's numbers at seed 0
    assert s.split_triples == {"train": 9072, "valid": 396, "test": 398}
    assert entity_kinds(wine) == {
        "wine": 600,
        "vintage": 157,
        "estate": 120,
        "winemaker": 115,
        "owner": 78,
        "appellation": 38,
        "importer": 24,
        "grape": 22,
        "region": 17,
        "country": 14,
        "consultant": 10,
        "negociant": 10,
        "critic": 8,
        "cooperative": 5,
        "weather": 5,
        "certification": 3,
        "colour": 2,
    }
    assert sorted(r.length for r in wine.rules) == [1, 1, 2, 2, 2, 2, 3, 3, 3]
    assert s.targets_by_length == {1: 154, 2: 334, 3: 296} and s.noise_targets == 10
    assert s.targets_by_rule == {
        "en_primeur": 161,
        "estate_bottling": 94,
        "frost_loss": 11,
        "grape_colour": 107,
        "import_market": 191,
        "organic_wine": 26,
        "owner_stablemates": 40,
        "portfolio_inverse": 120,
        "varietal_label": 34,
    }
    assert min(s.targets_by_rule.values()) >= 8  # the frost probabilities were chosen for it
    assert round(s.multi_grounding_share, 2) == 0.06
    card = s.cardinality
    assert card["winemaker_at"] == "1-1" and card["produces"] == "1-N"
    n_to_1 = ("berry_colour", "blend_of", "certified", "colour_of", "estate_bottled")
    n_to_1 += ("from_appellation", "labelled_variety", "located_in", "made_by", "marked_by")
    n_to_1 += ("of_vintage", "owned_by")
    assert all(card[r] == "N-1" for r in n_to_1)
    n_to_n = ("agent_for", "available_in", "offered_by", "rated_by", "retail_listed")
    n_to_n += ("sells_through", "short_crop", "stablemate")
    assert all(card[r] == "N-N" for r in n_to_n) and len(card) == 22
    assert wine.symmetric == ("stablemate",)
    assert wine.inverse_pairs == (("made_by", "produces"),)
    assert wine.shortcuts == (("retail_listed", "available_in"),)
    assert wine.rules_text == WINE_RULES
    withheld = Counter(r for _, r, _ in wine.exceptions)
    assert withheld == {
        "available_in": 81,
        "offered_by": 52,
        "estate_bottled": 48,
        "certified": 26,
        "colour_of": 23,
        "short_crop": 12,
        "blend_of": 3,
    }


@pytest.mark.parametrize(("size", "seed"), [(600, 0), (150, 4)])
def test_wine_ground_truth_matches_a_brute_force_join(size: int, seed: int) -> None:
    w = _default(seed) if size == 600 else world("wine", size=size, seed=seed)
    everything, base = all_triples(w), set(w.base_triples)
    found = _wine_groundings(everything)
    assert set(found) == {str(r.name) for r in w.rules}
    heads = {t for by_head in found.values() for t in by_head}
    assert heads - everything == set(w.exceptions)  # closed up to the exceptions
    assert {t for s in SPLITS for t in w.derived_splits[s]} == (everything - base) & heads
    assert {t for s in SPLITS for t in w.noise_splits[s]} == (everything - base) - heads
    in_train, graph = _wine_groundings(train_triples(w)), w.train_graph
    for target in held_out(w):
        assert any(target in in_train[name] for name in in_train), target  # split guarantee
        for rule in w.rules:
            expected = in_train[str(rule.name)].get(target, set())
            assert set(groundings(rule, target, graph)) == expected, (rule.name, target)


def test_wine_portfolio_is_an_inverse_pair_and_the_closure_takes_two_rounds(wine: World) -> None:
    w = wine
    made_by = relation_pairs(w, "made_by")
    assert relation_pairs(w, "produces") == {(e, x) for x, e in made_by}
    assert not any(t[1] == "produces" for t in w.base_triples)  # all derived, no exception
    assert not noise_pairs(w, "produces") and not exception_pairs(w, "produces")
    assert len(made_by) == len({x for x, _ in made_by}) == 600  # one producer a wine
    assert len({e for _, e in made_by}) == 102
    # The closure: every head in round one; the colours of the varietal wines (through the
    # derived blend) and the short crops (through the derived inverse) in round two.
    rounds = [{t[1] for t in new} for new in _rounds(0)]
    assert rounds == [
        {"available_in", "blend_of", "certified", "colour_of", "estate_bottled", "offered_by"}
        | {"produces", "stablemate"},
        {"colour_of", "short_crop"},
    ]


def test_wine_colour_runs_through_the_derived_varietal_blend(wine: World) -> None:
    w = wine
    base = set(w.base_triples)
    labelled = relation_pairs(w, "labelled_variety")
    facts, noisy, lost = _facts_noise_lost(w, "blend_of")
    derived = {(x, g) for x, r, g in all_triples(w) - base if r == "blend_of"}
    assert derived == labelled - lost and not noisy  # a varietal label: the grape, bar exceptions
    assert (len(labelled), len(derived), len(facts - derived), len(lost)) == (171, 168, 725, 3)
    assert not labelled & {(x, g) for x, r, g in base if r == "blend_of"}
    # colour_of by set algebra: the berry colours of the wine's grapes.
    colour = dict(relation_pairs(w, "berry_colour"))
    expected = {(x, colour[g]) for x, g in facts}
    facts_, noisy_, lost_ = _facts_noise_lost(w, "colour_of")
    assert facts_ == expected - lost_ and not noisy_
    assert Counter(c for _, c in facts_) == {"colour_red": 380, "colour_white": 195}
    assert len(lost_) == 23
    # A cuvée is of one colour: no wine has two; a wine with a withheld colour has none.
    per_wine = Counter(x for x, _ in facts_)
    assert max(per_wine.values()) == 1
    assert len(_kind(w, "wine") - set(per_wine)) == 25
    # 120 colours are grounded only through a varietal label (the derived blend).
    everything = all_triples(w)
    found = _wine_groundings(everything)["grape_colour"]
    only = [t for t, gs in found.items() if t in everything and all(g[0] not in base for g in gs)]
    assert len(only) == 120


def test_wine_stablemates_are_a_symmetric_star_with_an_inequality(wine: World) -> None:
    w = wine
    rule = next(r for r in w.rules if r.name == "owner_stablemates")
    (ineq,) = rule.inequalities
    assert {ineq.left.name, ineq.right.name} == set(rule.head.variables)
    centre = {v for v in rule.variables if all(v in a.variables for a in rule.body)}
    assert centre == {"O"} and "O" not in rule.head.variables  # a star on the owner
    members: dict[str, set[str]] = {}
    for e, o in relation_pairs(w, "owned_by"):
        members.setdefault(o, set()).add(e)
    pairs = {(e, f) for group in members.values() for e in group for f in group if e != f}
    linked = relation_pairs(w, "stablemate")
    assert linked == pairs and linked == {(f, e) for e, f in linked}
    assert not noise_pairs(w, "stablemate") and not exception_pairs(w, "stablemate")
    sizes = Counter(len(group) for group in members.values())
    assert (len(linked), sizes) == (200, {1: 58, 2: 11, 3: 4, 4: 2, 5: 2, 10: 1})
    # Every estate has one owner; cooperatives belong to their members and have none.
    assert {e for e, _ in relation_pairs(w, "owned_by")} == _kind(w, "estate")


def test_wine_en_primeur_offers_are_a_chain_through_la_place(wine: World) -> None:
    w = wine
    rule = next(r for r in w.rules if r.name == "en_primeur")
    assert [a.relation for a in rule.body] == ["made_by", "sells_through"]
    producer = dict(relation_pairs(w, "made_by"))
    allocations: dict[str, set[str]] = {}
    for e, n in relation_pairs(w, "sells_through"):
        allocations.setdefault(e, set()).add(n)
    expected = {(x, n) for x, e in producer.items() for n in allocations.get(e, set())}
    facts, noisy, lost = _facts_noise_lost(w, "offered_by")
    assert facts - noisy == expected - lost
    assert (len(facts), len(noisy), len(lost), len(expected)) == (833, 25, 52, 860)
    # La Place: the négociants are in Bordeaux; estates only allocate (most of them in
    # Bordeaux), cooperatives never.
    located = dict(relation_pairs(w, "located_in"))
    assert {located[n] for _, n in relation_pairs(w, "sells_through")} == {"region_bordeaux"}
    assert {w.entity_types[e] for e in allocations} == {"estate"}
    regions = Counter(located[located[e]] for e in allocations)
    assert (len(allocations), regions["region_bordeaux"]) == (38, 20)


def test_wine_organic_wines_are_anchored_on_a_constant_in_head_and_body(wine: World) -> None:
    w = wine
    certified = relation_pairs(w, "certified")
    organic = {x for x, c in certified if c == "cert_organic" and w.entity_types[x] != "wine"}
    producer = dict(relation_pairs(w, "made_by"))
    expected = {(x, "cert_organic") for x, e in producer.items() if e in organic}
    facts = {(x, c) for x, c in certified if w.entity_types[x] == "wine"}
    lost = exception_pairs(w, "certified")
    assert facts == expected - lost and not noise_pairs(w, "certified")
    assert (len(organic), len(facts), len(lost)) == (31, 129, 26)
    # A biodynamic producer is organic too; a sustainable one makes no organic wine.
    by_cert: dict[str, set[str]] = {}
    for x, c in certified:
        by_cert.setdefault(c, set()).add(x)
    assert by_cert["cert_biodynamic"] <= organic and not by_cert["cert_sustainable"] & organic
    assert (len(by_cert["cert_biodynamic"]), len(by_cert["cert_sustainable"])) == (12, 25)
    assert {c for x, c in certified if w.entity_types[x] == "wine"} == {"cert_organic"}


def test_wine_import_markets_are_a_chain_into_the_market_hubs(wine: World) -> None:
    w = wine
    rule = next(r for r in w.rules if r.name == "import_market")
    assert [a.relation for a in rule.body] == ["made_by", "agent_for", "located_in"]
    located = dict(relation_pairs(w, "located_in"))
    markets: dict[str, set[str]] = {}
    for i, e in relation_pairs(w, "agent_for"):
        markets.setdefault(e, set()).add(located[i])
    producer = dict(relation_pairs(w, "made_by"))
    expected = {(x, k) for x, e in producer.items() for k in markets.get(e, set())}
    facts, noisy, lost = _facts_noise_lost(w, "available_in")
    assert facts - noisy == expected - lost
    assert (len(facts), len(noisy), len(lost), len(expected)) == (976, 29, 81, 1028)
    # An importer is no agent in its producer's own country, and one market holds one agent.
    country = {e: located[located[located[e]]] for e in markets}
    assert not any(country[e] in ks for e, ks in markets.items())
    agents = Counter(e for _, e in relation_pairs(w, "agent_for"))
    assert all(agents[e] == len(markets[e]) for e in markets)
    assert (len(markets), sum(agents.values())) == (83, 166)


def test_wine_retail_listings_are_a_correlated_shortcut(
    wine: World, stats: WorldStatistics
) -> None:
    s, h = "retail_listed", "available_in"
    heads = relation_pairs(wine, h)
    given = relation_pairs(wine, s, "train")
    cover = len(heads & given) / len(heads)
    assert round(cover, 2) == 0.59
    assert stats.shortcut_cooccurrence[(s, h)] == pytest.approx(cover)
    assert round(stats.shortcut_precision[(s, h)], 2) == 0.58
    assert all(s not in {a.relation for a in r.body} for r in wine.rules)
    assert given == relation_pairs(wine, s)  # a base relation: all in train
    # Pooled over three seeds: a wine is listed at home with probability .5.
    k = n = 0
    for seed in (0, 1, 2):
        w = _default(seed)
        located = dict(relation_pairs(w, "located_in"))
        producer = dict(relation_pairs(w, "made_by"))
        listed = relation_pairs(w, s)
        home = {x for x, e in producer.items() if (x, located[located[located[e]]]) in listed}
        k += len(home)
        n += len(producer)
    assert abs(k / n - 0.5) < 4 * math.sqrt(0.25 / n), (k, n)


def test_wine_estate_bottling_is_a_triangle(wine: World) -> None:
    w = wine
    rule = next(r for r in w.rules if r.name == "estate_bottling")
    assert rule.body[0].variables == rule.head.variables  # parallel to the head
    for v in rule.variables:  # a triangle: every variable in exactly two body atoms
        assert sum(v in a.variables for a in rule.body) == 2
    located = dict(relation_pairs(w, "located_in"))
    label = dict(relation_pairs(w, "from_appellation"))
    producer = dict(relation_pairs(w, "made_by"))
    expected = {(x, e) for x, e in producer.items() if located[e] == label[x]}
    facts, noisy, lost = _facts_noise_lost(w, "estate_bottled")
    assert facts == expected - lost and not noisy
    assert (len(facts), len(lost), len(expected)) == (474, 48, 522)
    # A wine of another appellation than its producer's (a second wine as regional Bordeaux,
    # a village wine of a neighbouring commune) is not estate bottled.
    other = {x for x, e in producer.items() if located[e] != label[x]}
    assert len(other) == 78 and not {x for x, _ in facts} & other
    assert all(w.entity_types[label[x]] == "appellation" for x in other)


def test_wine_frost_loss_has_a_constant_through_the_derived_inverse(wine: World) -> None:
    w = wine
    rule = next(r for r in w.rules if r.name == "frost_loss")
    assert [a.relation for a in rule.body] == ["produces", "of_vintage", "marked_by"]
    assert rule.body[2].second.name == "weather_frost" and not rule.body[2].second.is_variable
    marked = relation_pairs(w, "marked_by")
    frosty = {v for v, x in marked if x == "weather_frost"}
    vintage = dict(relation_pairs(w, "of_vintage"))
    expected = {(e, vintage[x]) for e, x in relation_pairs(w, "produces") if vintage[x] in frosty}
    facts, noisy, lost = _facts_noise_lost(w, "short_crop")
    assert facts - noisy == expected - lost
    assert (len(facts), len(noisy), len(lost), len(expected)) == (66, 3, 12, 75)
    assert (len(frosty), len(_kind(w, "vintage"))) == (30, 157)
    assert sum(v in frosty for v in vintage.values()) == 97
    assert Counter(x for _, x in marked) == {
        "weather_frost": 30,
        "weather_heatwave": 17,
        "weather_harvest_rain": 16,
        "weather_drought": 14,
        "weather_hail": 13,
    }
    # The frost years of _FROST_YEARS lead.
    years = Counter(v.rsplit("_", 1)[1] for v in frosty)
    assert {y for y, k in years.items() if k == max(years.values())} == {"2016", "2017", "2021"}


def test_wine_world_has_colour_market_critic_and_grape_hubs(
    wine: World, stats: WorldStatistics
) -> None:
    train = wine.dataset.train.to_labeled_triples()
    degree = degrees_by_kind(wine, train)
    kinds = ("colour", "country", "critic", "grape", "certification", "negociant")
    kinds += ("appellation", "estate", "region", "weather", "importer")
    top = {kind: max(degree[kind].values()) for kind in kinds}
    assert top == {
        "colour": 310,
        "country": 251,
        "critic": 213,
        "grape": 144,
        "certification": 134,
        "negociant": 118,
        "appellation": 94,
        "estate": 53,
        "region": 32,
        "weather": 30,
        "importer": 30,
    }
    first = {kind: max(sorted(degree[kind]), key=degree[kind].__getitem__) for kind in kinds}
    names = ("colour", "country", "critic", "grape", "certification", "region", "weather")
    assert [first[k] for k in names] == [
        "colour_red",
        "country_uk",
        "critic_wine_advocate",
        "grape_cabernet_sauvignon",
        "cert_organic",
        "region_bordeaux",
        "weather_frost",
    ]
    assert float(np.median(list(degree["wine"].values()))) == 10
    median, p90 = enclosing_quantiles(wine, set(train))  # 2-hop enclosing subgraphs, BFS
    assert median == stats.subgraph_median == 864.5  # the docstring
    assert p90 == round(stats.subgraph_p90) == 1719
    assert stats.subgraph_targets == 200
    assert 800 <= stats.subgraph_median <= 1500 and 1500 <= stats.subgraph_p90 <= 3000


def test_wine_size_and_arguments_are_checked_and_the_smallest_world_is_complete() -> None:
    with pytest.raises(GraphDataError, match=r"size: expected an int >= 80, got 79"):
        wine_world(79)
    with pytest.raises(GraphDataError, match=r"seed: expected an int >= 0 or None, got -1"):
        wine_world(80, seed=-1)
    with pytest.raises(GraphDataError, match="expected a sum below 1"):
        wine_world(80, valid_fraction=0.5, test_fraction=0.5)
    with pytest.raises(GraphDataError, match="test_fraction: expected a number in"):
        wine_world(80, test_fraction=1.5)
    w = wine_world(80, seed=1)
    kinds = entity_kinds(w)
    assert (kinds["wine"], kinds["estate"], kinds["cooperative"]) == (80, 30, 3)
    assert (kinds["negociant"], kinds["importer"]) == (6, 8)
    assert kinds["consultant"] == 4  # of 6: a consultant no estate hired is in no fact
    assert {str(r.name) for r in w.rules} == set(_wine_groundings(all_triples(w)))
    assert w.dataset.num_relations == 22
    # The same seed draws the same world; another seed another.
    again, other = wine_world(80, seed=1), wine_world(80, seed=2)
    assert again.base_triples == w.base_triples and again.exceptions == w.exceptions
    assert again.dataset.test.to_labeled_triples() == w.dataset.test.to_labeled_triples()
    assert other.base_triples != w.base_triples


def test_wine_exception_and_noise_rates() -> None:
    # Pooled over three seeds at the default size, each exception rate within four binomial
    # sd (of the facts only that rule derives). Noise is drawn to the count (base.py step 2)
    # from the facts of the first closure, so the counts are checked nearly exactly.
    rates = {"varietal_label": 0.03, "grape_colour": 0.05, "en_primeur": 0.08}
    rates |= {"organic_wine": 0.10, "import_market": 0.06, "estate_bottling": 0.08}
    rates |= {"frost_loss": 0.15}
    withheld_n = {name: [0, 0] for name in rates}
    for seed in (0, 1, 2):
        w = _default(seed)
        everything, base = all_triples(w), set(w.base_triples)
        found, withheld = _wine_groundings(everything), set(w.exceptions)
        assert w.exception_rates == {str(r.name): rates.get(str(r.name), 0.0) for r in w.rules}
        assert w.noise_rates == {"available_in": 0.03, "offered_by": 0.03, "short_crop": 0.05}
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


def test_wine_subgraphs_are_dense_at_every_seed() -> None:
    stats = [world_statistics(_default(seed), max_targets=40) for seed in (1, 2, 3)]
    assert [s.subgraph_median for s in stats] == [947.5, 1248.0, 799.0]  # the docstring
    assert [round(s.subgraph_p90, 1) for s in stats] == [2001.1, 2212.2, 2026.6]
    assert all(1500 <= s.subgraph_p90 <= 3000 for s in stats)
