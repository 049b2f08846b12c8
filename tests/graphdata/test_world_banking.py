"""Tests for the banking world: ground truth by brute force, design, rates, hubs.

The world-agnostic checks (split guarantee, closure, symmetry and inverses, determinism and
file round trips) run on every world of :data:`graphdata.worlds.WORLDS` in ``test_worlds.py``;
these check what :mod:`graphdata.worlds.banking` states, mostly against a nested-loop join that
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
    BANKING_RULES,
    World,
    WorldStatistics,
    banking_world,
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
    return default_world("banking", seed)


def _banking_groundings(facts: set[LabeledTriple]) -> Groundings:
    """Every grounding of every banking rule in ``facts``, by nested loops.

    Rule name -> head triple -> the groundings' body triples in body order; no
    :mod:`graphdata.rules`.
    """
    index = FactIndex(facts)
    pairs, tails, heads, add = index.of, index.tails, index.heads, index.add

    for a, c in pairs("held_by"):
        add("holder_inverse", (c, "holds", a), (a, "held_by", c))
    for c, loan in pairs("borrower_on"):
        add("borrower_liable", (c, "liable_for", loan), (c, "borrower_on", loan))
    for c, loan in pairs("guarantor_of"):
        add("guarantor_liable", (c, "liable_for", loan), (c, "guarantor_of", loan))
    for c, loan in pairs("borrower_on"):
        for b in tails("lent_by", loan):
            body = ((c, "borrower_on", loan), (loan, "lent_by", b))
            add("lending_relationship", (c, "banks_with", b), *body)
        for d in heads("borrower_on", loan):
            if c != d:
                body = ((c, "borrower_on", loan), (d, "borrower_on", loan))
                add("co_borrowers", (c, "co_borrower", d), *body)
    for c, a in pairs("holds"):
        for h in tails("held_at", a):
            for b in tails("branch_of", h):
                body = ((c, "holds", a), (a, "held_at", h), (h, "branch_of", b))
                add("account_relationship", (c, "banks_with", b), *body)
    for c, loan in pairs("borrower_on"):
        for p in tails("secured_by", loan):
            if "loan_residential" in tails("loan_type", loan):
                body = (
                    (c, "borrower_on", loan),
                    (loan, "secured_by", p),
                    (loan, "loan_type", "loan_residential"),
                )
                add("owner_occupier", (c, "occupies", p), *body)
    for c, m in pairs("paid"):
        for k in tails("located_in", m):
            for j in tails("located_in", c):
                if k != j:
                    body = ((c, "paid", m), (m, "located_in", k), (c, "located_in", j))
                    add("foreign_spend", (c, "spends_abroad", k), *body)
    for c, b in pairs("banks_with"):
        for k in tails("located_in", c):
            if k in tails("lists", "list_fatf_grey"):
                body = ((c, "banks_with", b), (c, "located_in", k), ("list_fatf_grey", "lists", k))
                add("due_diligence", (b, "reviews", c), *body)
    for c, e in pairs("employed_by"):
        for b in tails("banks_with", e):
            if b in tails("banks_with", c):
                body = ((c, "employed_by", e), (e, "banks_with", b), (c, "banks_with", b))
                add("staff_banking", (c, "in_programme", b), *body)
    return index.found


@cache
def _rounds(seed: int) -> list[set[LabeledTriple]]:
    """The facts each round of the closure adds at the default size and ``seed``."""
    return closure_rounds(_default(seed), _banking_groundings)


@pytest.fixture(scope="module")
def banking() -> World:
    return _default(0)  # the default size and seed 0: the module docstring's numbers


@pytest.fixture(scope="module")
def stats(banking: World) -> WorldStatistics:
    return world_statistics(banking, max_targets=200)


# ----------------------------------------------------------------------------- design


def test_banking_world_sizes_lengths_and_cardinalities(
    banking: World, stats: WorldStatistics
) -> None:
    s = stats
    assert (s.num_entities, s.num_relations) == (1358, 22)  # the docstring's numbers at seed 0
    assert entity_kinds(banking) == {
        "account": 547,
        "person": 246,
        "loan": 204,
        "property": 122,
        "business": 74,
        "branch": 63,
        "merchant": 40,
        "city": 25,
        "bank": 18,
        "country": 12,
        "loan_type": 5,
        "watch_list": 2,
    }
    assert s.split_triples == {"train": 6465, "valid": 223, "test": 220}
    assert 600 <= s.num_entities <= 1400 and 5000 <= sum(s.split_triples.values()) <= 9000
    lengths = [r.length for r in banking.rules]
    assert (lengths.count(1), lengths.count(2), lengths.count(3)) == (3, 2, 5)
    assert s.targets_by_length == {1: 178, 2: 47, 3: 210} and s.noise_targets == 8
    assert s.targets_by_rule == {
        "account_relationship": 49,
        "borrower_liable": 44,
        "co_borrowers": 10,
        "due_diligence": 13,
        "foreign_spend": 116,
        "guarantor_liable": 16,
        "holder_inverse": 118,
        "lending_relationship": 37,
        "owner_occupier": 20,
        "staff_banking": 12,
    }
    assert min(s.targets_by_rule.values()) >= 8  # the benchmark draws 6 a rule
    assert round(s.multi_grounding_share, 2) == 0.17
    card = s.cardinality
    assert (card["holds"], card["borrower_on"], card["liable_for"]) == ("1-N", "1-N", "1-N")
    one_to_one = ("co_borrower", "guarantor_of", "occupies", "secured_by", "spouse_of")
    assert all(card[r] == "1-1" for r in one_to_one)
    n_to_1 = ("branch_of", "card_issuer", "employed_by", "held_at", "held_by", "in_programme")
    n_to_1 += ("lent_by", "loan_type", "located_in")
    assert all(card[r] == "N-1" for r in n_to_1)
    n_to_n = ("banks_with", "lists", "paid", "reviews", "spends_abroad")
    assert all(card[r] == "N-N" for r in n_to_n) and len(card) == 22
    assert banking.symmetric == ("co_borrower", "spouse_of")
    assert banking.inverse_pairs == (("held_by", "holds"),)
    assert banking.shortcuts == (("card_issuer", "banks_with"), ("spouse_of", "co_borrower"))
    assert banking.rules_text == BANKING_RULES
    withheld: dict[str, int] = {}
    for _, r, _ in banking.exceptions:
        withheld[r] = withheld.get(r, 0) + 1
    assert withheld == {
        "spends_abroad": 41,
        "in_programme": 15,
        "banks_with": 11,
        "liable_for": 10,
        "occupies": 5,
        "reviews": 2,
    }


@pytest.mark.parametrize(("size", "seed"), [(320, 0), (120, 4)])
def test_banking_ground_truth_matches_a_brute_force_join(size: int, seed: int) -> None:
    w = _default(seed) if size == 320 else world("banking", size=size, seed=seed)
    everything, base = all_triples(w), set(w.base_triples)
    found = _banking_groundings(everything)
    assert set(found) == {str(r.name) for r in w.rules}
    heads = {t for by_head in found.values() for t in by_head}
    assert heads - everything == set(w.exceptions)  # closed up to the exceptions
    assert {t for s in SPLITS for t in w.derived_splits[s]} == (everything - base) & heads
    assert {t for s in SPLITS for t in w.noise_splits[s]} == (everything - base) - heads
    in_train, graph = _banking_groundings(train_triples(w)), w.train_graph
    for target in held_out(w):
        assert any(target in in_train[name] for name in in_train), target  # split guarantee
        for rule in w.rules:
            expected = in_train[str(rule.name)].get(target, set())
            assert set(groundings(rule, target, graph)) == expected, (rule.name, target)


def test_banking_holders_are_inverse_and_co_borrowers_symmetric(banking: World) -> None:
    w = banking
    held_by = relation_pairs(w, "held_by")
    assert relation_pairs(w, "holds") == {(c, a) for a, c in held_by}
    assert not any(t[1] == "holds" for t in w.base_triples)  # all derived, no exception
    joint = {a for a, _ in held_by if sum(x == a for x, _ in held_by) == 2}
    assert (len(held_by), len({a for a, _ in held_by}), len(joint)) == (591, 547, 44)
    spouse = relation_pairs(w, "spouse_of")
    assert spouse == {(y, x) for x, y in spouse} and len(spouse) == 98
    holders = {}
    for a, c in held_by:
        holders.setdefault(a, set()).add(c)
    assert all(tuple(sorted(cs)) in spouse for cs in holders.values() if len(cs) == 2)
    # co_borrower by set algebra: two distinct borrowers on one loan.
    borrowers: dict[str, set[str]] = {}
    for c, loan in relation_pairs(w, "borrower_on"):
        borrowers.setdefault(loan, set()).add(c)
    expected = {(c, d) for cs in borrowers.values() for c in cs for d in cs if c != d}
    co = relation_pairs(w, "co_borrower")
    assert co == expected and co == {(d, c) for c, d in co} and len(co) == 50
    assert not noise_pairs(w, "co_borrower") and not exception_pairs(w, "co_borrower")
    # The closure: holds, liabilities, loan relationships, co-borrowers, occupancy and
    # foreign spending in round one; account relationships (through holds) and what the loan
    # relationships feed in round two; what the account relationships feed in round three.
    rounds = [{t[1] for t in new} for new in _rounds(0)]
    assert rounds == [
        {"banks_with", "co_borrower", "holds", "liable_for", "occupies", "spends_abroad"},
        {"banks_with", "in_programme", "reviews"},
        {"in_programme", "reviews"},
    ]


def test_banking_relationships_have_two_bodies_one_through_derived_holds(
    banking: World,
) -> None:
    rules = [r for r in banking.rules if r.head.relation == "banks_with"]
    assert [(r.name, r.length) for r in rules] == [
        ("lending_relationship", 2),
        ("account_relationship", 3),
    ]
    lending, accounts = rules
    assert accounts.body[0].relation == "holds"  # the derived inverse
    facts = {t for t in all_triples(banking) if t[1] == "banks_with"}
    noise = noise_facts(banking)
    found = _banking_groundings(all_triples(banking))
    by_loan, by_account = (set(found[str(r.name)]) & facts for r in (lending, accounts))
    assert body_shares(facts, by_loan, by_account, noise) == [0.29, 0.1, 0.59, 0.02]
    bank = dict(relation_pairs(banking, "branch_of"))
    at = dict(relation_pairs(banking, "held_at"))
    lender = dict(relation_pairs(banking, "lent_by"))
    expected = {(c, bank[at[a]]) for a, c in relation_pairs(banking, "held_by")}
    expected |= {(c, lender[loan]) for c, loan in relation_pairs(banking, "borrower_on")}
    lost = exception_pairs(banking, "banks_with")
    assert {(c, b) for c, _, b in facts - noise} == expected - lost
    assert (len(facts), len(facts & noise), len(lost)) == (480, 10, 11)


def test_banking_liability_has_two_length_one_bodies(banking: World) -> None:
    facts = relation_pairs(banking, "liable_for")
    borrowers = relation_pairs(banking, "borrower_on")
    guarantors = relation_pairs(banking, "guarantor_of")
    assert not borrowers & guarantors  # a guarantor is never a borrower on the same loan
    noise, lost = noise_pairs(banking, "liable_for"), exception_pairs(banking, "liable_for")
    assert facts - noise == (borrowers | guarantors) - lost
    assert (len(borrowers), len(guarantors), len(facts), len(noise), len(lost)) == (
        238,
        66,
        300,
        6,
        10,
    )


def test_banking_owner_occupation_is_a_star_on_the_loan_with_a_constant(banking: World) -> None:
    rule = next(r for r in banking.rules if r.name == "owner_occupier")
    assert all("L" in a.variables for a in rule.body) and "L" not in rule.head.variables
    assert rule.body[2].second.name == "loan_residential" and not rule.body[2].second.is_variable
    kind = dict(relation_pairs(banking, "loan_type"))
    secured = dict(relation_pairs(banking, "secured_by"))
    expected = {
        (c, secured[loan])
        for c, loan in relation_pairs(banking, "borrower_on")
        if kind[loan] == "loan_residential" and loan in secured
    }
    facts = relation_pairs(banking, "occupies")
    noise, lost = noise_pairs(banking, "occupies"), exception_pairs(banking, "occupies")
    assert facts - noise == expected - lost
    let = {loan for loan, t in kind.items() if t == "loan_buy_to_let"}
    assert all(loan in secured for loan in let)  # secured, but the rule's constant skips them
    assert (len(facts), len(noise), len(lost), len(let)) == (101, 3, 5, 18)


def test_banking_foreign_spend_compares_a_head_and_a_body_variable(banking: World) -> None:
    rule = next(r for r in banking.rules if r.name == "foreign_spend")
    (ineq,) = rule.inequalities
    assert ineq.left.name in rule.head.variables and ineq.right.name not in rule.head.variables
    country = dict(relation_pairs(banking, "located_in"))
    expected = {
        (c, country[m]) for c, m in relation_pairs(banking, "paid") if country[m] != country[c]
    }
    facts = relation_pairs(banking, "spends_abroad")
    noise, lost = noise_pairs(banking, "spends_abroad"), exception_pairs(banking, "spends_abroad")
    assert facts - noise == expected - lost
    home = {(c, k) for c, k in noise if country[c] == k}
    assert (len(facts), len(noise), len(lost), len(home)) == (600, 18, 41, 1)


def test_banking_due_diligence_reads_a_constant_subject(banking: World) -> None:
    rule = next(r for r in banking.rules if r.name == "due_diligence")
    listed = rule.body[2]
    assert listed.first.name == "list_fatf_grey" and not listed.first.is_variable
    assert rule.head.variables == tuple(reversed(rule.body[0].variables))  # banks_with reversed
    lists = relation_pairs(banking, "lists")
    grey = {k for x, k in lists if x == "list_fatf_grey"}
    eu = {k for x, k in lists if x == "list_eu_highrisk"}
    assert grey == {"country_panama", "country_turkey", "country_uae"}
    assert eu == {"country_cayman", "country_panama", "country_uae"}  # a distractor list
    country = dict(relation_pairs(banking, "located_in"))
    expected = {(b, c) for c, b in relation_pairs(banking, "banks_with") if country[c] in grey}
    facts = relation_pairs(banking, "reviews")
    noise, lost = noise_pairs(banking, "reviews"), exception_pairs(banking, "reviews")
    assert facts - noise == expected - lost
    assert (len(facts), len(noise), len(lost)) == (84, 3, 2)


def test_banking_staff_programme_is_a_triangle(banking: World) -> None:
    banks = relation_pairs(banking, "banks_with")
    expected = {
        (c, b)
        for c, e in relation_pairs(banking, "employed_by")
        for f, b in banks
        if f == e and (c, b) in banks
    }
    facts = relation_pairs(banking, "in_programme")
    noise, lost = noise_pairs(banking, "in_programme"), exception_pairs(banking, "in_programme")
    assert facts - noise == expected - lost
    assert (len(facts), len(noise), len(lost)) == (118, 6, 15)


def test_banking_cards_and_spouses_are_correlated_shortcuts(
    banking: World, stats: WorldStatistics
) -> None:
    for s, h, cover_precision in (
        ("card_issuer", "banks_with", (0.43, 0.92)),
        ("spouse_of", "co_borrower", (0.84, 0.43)),
    ):
        heads = relation_pairs(banking, h)
        given = relation_pairs(banking, s, "train")
        given |= {(y, x) for x, y in given}
        cover = len(heads & given) / len(heads)
        assert round(cover, 2) == cover_precision[0], s
        assert stats.shortcut_cooccurrence[(s, h)] == pytest.approx(cover)
        assert round(stats.shortcut_precision[(s, h)], 2) == cover_precision[1], s
        assert all(s not in {a.relation for a in r.body} for r in banking.rules)
    # Pooled over three seeds: a person holds a card with probability .75.
    k = n = 0
    for seed in (0, 1, 2):
        w = _default(seed)
        persons = {e for e, kind in w.entity_types.items() if kind == "person"}
        k += len({c for c, _ in relation_pairs(w, "card_issuer")} & persons)
        n += len(persons)
    assert abs(k / n - 0.75) < 4 * math.sqrt(0.75 * 0.25 / n), (k, n)


def test_banking_world_has_country_merchant_and_bank_hubs(
    banking: World, stats: WorldStatistics
) -> None:
    train = banking.dataset.train.to_labeled_triples()
    degree = degrees_by_kind(banking, train)
    kinds = ("country", "merchant", "bank", "loan_type", "branch", "person")
    top = {kind: max(degree[kind].values()) for kind in kinds}
    assert top == {
        "country": 213,
        "merchant": 171,
        "bank": 136,
        "loan_type": 76,
        "branch": 33,
        "person": 25,
    }
    first = {kind: max(sorted(degree[kind]), key=degree[kind].__getitem__) for kind in kinds}
    assert (first["country"], first["bank"]) == ("country_uk", "bank_albion")
    assert float(np.median(list(degree["person"].values()))) == 13
    median, p90 = enclosing_quantiles(banking, set(train))  # 2-hop enclosing subgraphs, BFS
    assert median == stats.subgraph_median == 599  # the docstring
    assert p90 == round(stats.subgraph_p90) == 1723
    assert 1000 <= stats.subgraph_p90 <= 5000


def test_banking_size_is_bounded_below_and_the_smallest_world_covers_every_country() -> None:
    with pytest.raises(GraphDataError, match=r"size: expected an int >= 60, got 59"):
        banking_world(59)
    w = banking_world(60, seed=1)
    kinds = entity_kinds(w)
    assert (kinds["person"] + kinds["business"], kinds["merchant"], kinds["bank"]) == (60, 30, 18)
    country = dict(relation_pairs(w, "located_in"))
    banks = [b for b in country if w.entity_types[b] == "bank"]
    assert len({country[b] for b in banks}) == 12  # a bank headquartered in every country
    branch_city = {h: country[h] for h in country if w.entity_types[h] == "branch"}
    assert len({country[y] for y in branch_city.values()}) == 12  # branches everywhere


def test_banking_exception_and_noise_rates() -> None:
    # Pooled over three seeds at the default size, each exception rate within four binomial
    # sd (of the facts only that rule derives). Noise is drawn to the count (base.py step 2)
    # from the facts of the first closure, so the counts are checked nearly exactly.
    rates = {"borrower_liable": 0.02, "guarantor_liable": 0.06, "lending_relationship": 0.04}
    rates |= {"account_relationship": 0.03, "owner_occupier": 0.06, "foreign_spend": 0.05}
    rates |= {"due_diligence": 0.05, "staff_banking": 0.12}
    withheld_n = {name: [0, 0] for name in rates}
    for seed in (0, 1, 2):
        w = _default(seed)
        everything, base = all_triples(w), set(w.base_triples)
        found, withheld = _banking_groundings(everything), set(w.exceptions)
        assert {r for _, r, _ in withheld} <= {
            "banks_with",
            "in_programme",
            "liable_for",
            "occupies",
            "reviews",
            "spends_abroad",
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
