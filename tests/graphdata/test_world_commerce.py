"""Tests for the commerce world: ground truth by brute force, design, rates, hubs.

The world-agnostic checks (split guarantee, closure, symmetry and inverses, determinism and
file round trips) run on every world of :data:`graphdata.worlds.WORLDS` in ``test_worlds.py``;
these check what :mod:`graphdata.worlds.commerce` states, mostly against a nested-loop join that
does not use :mod:`graphdata.rules`.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from graphdata.rules import groundings
from graphdata.typing import LabeledTriple
from graphdata.worlds import COMMERCE_RULES, World, world, world_statistics
from graphdata.worlds.base import SPLITS
from tests.graphdata.world_oracles import (
    FactIndex,
    Groundings,
    all_triples,
    degrees_by_kind,
    enclosing_quantiles,
    held_out,
    relation_pairs,
    train_triples,
)


@pytest.fixture(scope="module")
def commerce() -> World:
    return world("commerce")  # the default size and seed 0: the module docstring's numbers


def _commerce_groundings(facts: set[LabeledTriple]) -> Groundings:
    """Every grounding of every commerce rule in ``facts``, by nested loops (no graphdata.rules).

    Rule name -> head triple -> the groundings' body triples in body order.
    """
    index = FactIndex(facts)
    pairs, tails, add = index.pairs, index.tails, index.add

    offers = pairs.get("offers", [])
    for s, p in offers:
        add("listing_inverse", (p, "offered_by", s), (s, "offers", p))
        for t, q in offers:
            if q == p and t != s:
                add("competitor", (s, "competes_with", t), (s, "offers", p), (t, "offers", p))
        for k in tails("ships_from", s):
            add("seller_market", (p, "available_in", k), (s, "offers", p), (s, "ships_from", k))
    for s, p in pairs.get("own_label", []):
        add("own_label", (s, "offers", p), (s, "own_label", p))
    for t, s in pairs.get("partner_of", []):
        add("partner_symmetry", (s, "partner_of", t), (t, "partner_of", s))
    for p, d in pairs.get("in_category", []):
        for c in tails("subcategory_of", d):
            body = ((p, "in_category", d), (d, "subcategory_of", c))
            add("category_up", (p, "in_category", c), *body)
    for s, w in pairs.get("fulfilled_by", []):
        for y in tails("located_in", w):
            for k in tails("located_in", y):
                body = ((s, "fulfilled_by", w), (w, "located_in", y), (y, "located_in", k))
                add("ships_from", (s, "ships_from", k), *body)
    for p, b in pairs.get("made_by", []):
        for k in tails("brand_origin", b):
            add("brand_market", (p, "available_in", k), (p, "made_by", b), (b, "brand_origin", k))
    for c, b in pairs.get("follows", []):
        for p in tails("purchased", c):
            if b in tails("made_by", p):
                body = ((c, "follows", b), (c, "purchased", p), (p, "made_by", b))
                add("loyalty", (c, "loyal_to", b), *body)
    return index.found


# ----------------------------------------------------------------------------- design


def test_commerce_world_sizes_lengths_and_cardinalities(commerce: World) -> None:
    s = world_statistics(commerce, max_targets=200)
    assert (s.num_entities, s.num_relations) == (868, 18)  # the docstring's numbers at seed 0
    kinds = sorted(set(commerce.entity_types.values()))
    assert kinds == [
        "brand",
        "category",
        "city",
        "country",
        "customer",
        "product",
        "seller",
        "warehouse",
    ]
    assert s.split_triples == {"train": 8759, "valid": 204, "test": 204}
    lengths = [r.length for r in commerce.rules]
    assert (lengths.count(1), lengths.count(2), lengths.count(3)) == (3, 4, 2)
    assert s.targets_by_length == {1: 107, 2: 204, 3: 90} and s.noise_targets == 7
    assert s.targets_by_rule == {
        "brand_market": 22,
        "category_up": 90,
        "competitor": 46,
        "listing_inverse": 71,
        "loyalty": 72,
        "own_label": 16,
        "partner_symmetry": 20,
        "seller_market": 46,
        "ships_from": 18,
    }
    assert min(s.targets_by_rule.values()) >= 10 and 400 <= sum(s.targets_by_rule.values()) <= 800
    card = s.cardinality
    assert (card["own_label"], card["offers"], card["offered_by"]) == ("1-1", "1-N", "N-1")
    n_to_1 = ("lives_in", "located_in", "made_by", "brand_origin", "subcategory_of")
    assert all(card[r] == "N-1" for r in (*n_to_1, "registered_in", "fulfilled_by", "ships_from"))
    n_to_n = ("purchased", "follows", "competes_with", "partner_of", "in_category", "available_in")
    assert all(card[r] == "N-N" for r in n_to_n)
    assert commerce.symmetric == ("competes_with", "partner_of")
    assert commerce.inverse_pairs == (("offers", "offered_by"),)
    assert commerce.shortcuts == (("registered_in", "ships_from"),)
    assert commerce.rules_text == COMMERCE_RULES


@pytest.mark.parametrize(("size", "seed"), [(400, 0), (120, 4)])
def test_commerce_ground_truth_matches_a_brute_force_join(size: int, seed: int) -> None:
    w = world("commerce", size=size, seed=seed)
    everything, base = all_triples(w), set(w.base_triples)
    found = _commerce_groundings(everything)
    assert set(found) == {str(r.name) for r in w.rules}
    heads = {t for by_head in found.values() for t in by_head}
    assert heads - everything == set(w.exceptions)  # closed up to the exceptions
    assert {t for s in SPLITS for t in w.derived_splits[s]} == (everything - base) & heads
    assert {t for s in SPLITS for t in w.noise_splits[s]} == (everything - base) - heads
    in_train, graph = _commerce_groundings(train_triples(w)), w.train_graph
    for target in held_out(w):
        assert any(target in in_train[name] for name in in_train), target  # split guarantee
        for rule in w.rules:
            expected = in_train[str(rule.name)].get(target, set())
            assert set(groundings(rule, target, graph)) == expected, (rule.name, target)


def test_commerce_inverse_pair_fed_by_own_label(commerce: World) -> None:
    offers, train = relation_pairs(commerce, "offers"), train_triples(commerce)
    assert relation_pairs(commerce, "offered_by") == {(p, s) for s, p in offers}
    own = relation_pairs(commerce, "own_label")
    assert own <= offers and not {(s, "offers", p) for s, p in own} & set(commerce.base_triples)
    # Every held-out listing is an own-label one, and its inverse copy is in train.
    targets = held_out(commerce, "offers")
    assert len(targets) >= 10 and all((s, p) in own for s, _, p in targets)
    assert all((p, "offered_by", s) in train for s, _, p in targets)


def test_commerce_partner_of_is_a_base_symmetric_relation(commerce: World) -> None:
    partners, base = relation_pairs(commerce, "partner_of"), set(commerce.base_triples)
    assert partners == {(t, s) for s, t in partners} and all(s != t for s, t in partners)
    drawn = {(s, t) for s, r, t in base if r == "partner_of"}
    assert len(drawn) == len(partners) // 2 and not drawn & {(t, s) for s, t in drawn}
    assert [str(r.name) for r in commerce.rules if r.head.relation == "partner_of"] == [
        "partner_symmetry"
    ]
    targets = held_out(commerce, "partner_of")
    assert len(targets) >= 10 and all((t, r, s) in base for s, r, t in targets)
    # The correlated path: partners mostly share a warehouse (fulfilled_by twice).
    stores: dict[str, set[str]] = {}
    for s, w in relation_pairs(commerce, "fulfilled_by"):
        stores.setdefault(s, set()).add(w)
    shared = sum(bool(stores[s] & stores[t]) for s, t in partners) / len(partners)
    assert round(shared, 2) == 0.51  # the docstring, seed 0


def test_commerce_competitors_are_a_symmetric_star(commerce: World) -> None:
    competes, train = relation_pairs(commerce, "competes_with"), train_triples(commerce)
    assert competes == {(t, s) for s, t in competes} and all(s != t for s, t in competes)
    listed: dict[str, set[str]] = {}
    for s, p in relation_pairs(commerce, "offers"):
        listed.setdefault(s, set()).add(p)
    assert competes == {(s, t) for s in listed for t in listed if s != t and listed[s] & listed[t]}
    targets = held_out(commerce, "competes_with")
    back = sum((t, r, s) in train for s, r, t in targets) / len(targets)
    assert len(targets) >= 10 and back >= 0.75, back  # the reversed copy, mostly in train


def test_commerce_category_recursion_has_finite_depth(commerce: World) -> None:
    everything, base = all_triples(commerce), set(commerce.base_triples)
    parent = dict(relation_pairs(commerce, "subcategory_of"))

    # The tree: every category reaches a top category in at most two steps, without cycles.
    def up(c: str) -> list[str]:
        chain = [c]
        while chain[-1] in parent:
            chain.append(parent[chain[-1]])
            assert len(chain) <= 3, chain
        return chain

    for product, _, c in (t for t in base if t[1] == "in_category"):
        assert {(product, "in_category", d) for d in up(c)} <= everything
    # Closure depth by rounds of category_up from the base facts: two rounds add facts, the
    # third nothing; the second round's facts use a derived in_category body atom.
    rule = next(r for r in commerce.rules if r.name == "category_up")
    known = {t for t in base if t[1] in ("in_category", "subcategory_of")}
    rounds = []
    while True:
        found = _commerce_groundings(known)["category_up"] if known else {}
        new = set(found) - known
        if not new:
            break
        rounds.append(new)
        known |= new
    assert len(rounds) == 2 and all(len(r) >= 50 for r in rounds)
    assert known == {t for t in everything if t[1] in ("in_category", "subcategory_of")}
    graph = commerce.train_graph
    deep = [t for t in held_out(commerce, "in_category") if t in rounds[1]]
    assert deep and all(body[0] not in base for t in deep for body in groundings(rule, t, graph))


def test_commerce_available_in_has_two_bodies_one_through_ships_from(commerce: World) -> None:
    everything, base = all_triples(commerce), set(commerce.base_triples)
    found = _commerce_groundings(everything)
    assert [str(r.name) for r in commerce.rules if r.head.relation == "available_in"] == [
        "seller_market",
        "brand_market",
    ]
    facts = {t for t in everything if t[1] == "available_in"}
    by_a, by_b = set(found["seller_market"]) & facts, set(found["brand_market"]) & facts
    noise = {t for s in SPLITS for t in commerce.noise_splits[s]}
    assert by_a | by_b == facts - noise
    shares = [round(len(x) / len(facts), 2) for x in (by_a & by_b, by_a - by_b, by_b - by_a)]
    assert shares == [0.28, 0.49, 0.19]  # the docstring, seed 0
    in_train = _commerce_groundings(train_triples(commerce))
    targets = held_out(commerce, "available_in")
    only_a = sum(
        t in in_train["seller_market"] and t not in in_train["brand_market"] for t in targets
    )
    only_b = sum(
        t in in_train["brand_market"] and t not in in_train["seller_market"] for t in targets
    )
    assert only_a >= 10 and only_b >= 10, (only_a, only_b)
    # ships_from is derived only (never a base fact), held out for its own targets, and the
    # seller_market bodies use it.
    assert not {t for t in base if t[1] == "ships_from"}
    assert len(held_out(commerce, "ships_from")) >= 10
    graph = commerce.train_graph
    rule = next(r for r in commerce.rules if r.name == "seller_market")
    for target in targets:
        for body in groundings(rule, target, graph):
            assert body[1][1] == "ships_from" and body[1] not in base


def test_commerce_shortcut_is_correlated_not_equivalent(commerce: World) -> None:
    # A seller mostly ships from the country it is registered in, but ships_from's body is
    # the warehouse chain.
    heads, reg = (
        relation_pairs(commerce, "ships_from"),
        relation_pairs(commerce, "registered_in", "train"),
    )
    cover, precision = len(heads & reg) / len(heads), len(heads & reg) / len(reg)
    assert (round(cover, 2), round(precision, 2)) == (0.76, 0.82)  # the docstring, seed 0
    s = world_statistics(commerce, max_targets=1)
    assert s.shortcut_cooccurrence[("registered_in", "ships_from")] == pytest.approx(cover)
    assert s.shortcut_precision[("registered_in", "ships_from")] == pytest.approx(precision)
    other = world("commerce", seed=5)
    heads, reg = (
        relation_pairs(other, "ships_from"),
        relation_pairs(other, "registered_in", "train"),
    )
    assert 0.6 < len(heads & reg) / len(heads) < 0.95
    assert 0.6 < len(heads & reg) / len(reg) < 0.97


def test_commerce_loyalty_is_a_triangle(commerce: World) -> None:
    everything = all_triples(commerce)
    noise = {t for s in SPLITS for t in commerce.noise_splits[s]}
    loyal = {t for t in everything if t[1] == "loyal_to"} - noise
    assert len(loyal) >= 100
    bought, brand = relation_pairs(commerce, "purchased"), dict(relation_pairs(commerce, "made_by"))
    for c, _, b in loyal:
        assert (c, "follows", b) in everything
        assert any(brand[p] == b for x, p in bought if x == c), (c, b)


def test_commerce_world_has_country_category_product_and_brand_hubs(commerce: World) -> None:
    train = commerce.dataset.train.to_labeled_triples()
    degree = degrees_by_kind(commerce, train)
    top = {
        kind: max(degree[kind].values())
        for kind in ("country", "category", "product", "brand", "seller")
    }
    assert top == {"country": 256, "category": 76, "product": 173, "brand": 93, "seller": 43}
    assert top["product"] >= 5 * float(np.median(list(degree["product"].values())))

    median, _ = enclosing_quantiles(commerce, train)  # 2-hop enclosing subgraphs, by BFS
    s = world_statistics(commerce, max_targets=200)
    assert median == s.subgraph_median == 1096  # the docstring
    assert 1000 <= s.subgraph_median <= 3000 and s.subgraph_p90 <= 5000, s


def test_commerce_exception_and_noise_rates() -> None:
    # Pooled over three seeds at the default size, each exception rate within four binomial
    # sd; noise is drawn to the count (base.py step 2), so the counts are checked exactly.
    rates = {"ships_from": 0.05, "seller_market": 0.1, "brand_market": 0.3, "loyalty": 0.15}
    withheld_n = {name: [0, 0] for name in rates}
    for seed in (0, 1, 2):
        w = world("commerce", seed=seed)
        everything = all_triples(w)
        found, withheld = _commerce_groundings(everything), set(w.exceptions)
        assert {r for _, r, _ in withheld} <= {"ships_from", "available_in", "loyal_to"}
        assert w.exception_rates == {str(r.name): rates.get(str(r.name), 0.0) for r in w.rules}
        # brand_market derives in the first round, seller_market only in the second (through
        # the derived ships_from): where both derive a fact, brand_market's rate applied.
        own = {name: set(found[name]) for name in rates}
        own["seller_market"] -= own["brand_market"]
        for name, heads in own.items():
            withheld_n[name][0] += len(heads & withheld)
            withheld_n[name][1] += len(heads)
        noise = [t for s in SPLITS for t in w.noise_splits[s]]
        assert {t[1] for t in noise} == set(w.noise_rates) == {"available_in", "loyal_to"}
        non_base = everything - set(w.base_triples)
        for relation, nu in w.noise_rates.items():
            k = sum(t[1] == relation for t in noise)
            n = sum(t[1] == relation for t in non_base)
            assert k == round(nu * (n - k) / (1 - nu)), (seed, relation, k, n)
    for name, q in rates.items():
        k, n = withheld_n[name]
        assert abs(k / n - q) < 4 * math.sqrt(q * (1 - q) / n), (name, k, n)
