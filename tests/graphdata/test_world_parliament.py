"""Tests for the parliament world: ground truth by brute force, design, rates, hubs.

The world-agnostic checks (split guarantee, closure, symmetry and inverses, determinism and
file round trips) run on every world of :data:`graphdata.worlds.WORLDS` in ``test_worlds.py``;
these check what :mod:`graphdata.worlds.parliament` states, mostly against a nested-loop join
that does not use :mod:`graphdata.rules`.
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
    PARLIAMENT_RULES,
    World,
    WorldStatistics,
    parliament_world,
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
    return default_world("parliament", seed)


def _parliament_groundings(facts: set[LabeledTriple]) -> Groundings:
    """Every grounding of every parliament rule in ``facts``, by nested loops.

    Rule name -> head triple -> the groundings' body triples in body order; no
    :mod:`graphdata.rules`.
    """
    index = FactIndex(facts)
    pairs, tails, heads, add = index.of, index.tails, index.heads, index.add

    for p, c in pairs("represents"):
        add("seat_inverse", (c, "represented_by", p), (p, "represents", c))
        for r in tails("located_in", c):
            add("home_region", (p, "elected_in", r), (p, "represents", c), (c, "located_in", r))
    for c, p in pairs("represented_by"):
        for x in tails("member_of", p):
            body = ((c, "represented_by", p), (p, "member_of", x))
            add("seat_party", (c, "held_by", x), *body)
    for p, m in pairs("minister_of"):
        for a in tails("covers", m):
            add("ministerial_voice", (p, "speaks_on", a), (p, "minister_of", m), (m, "covers", a))
    for p, b in pairs("sponsored"):
        if "stage_enacted" in tails("stage", b):
            for a in tails("covers", b):
                body = ((p, "sponsored", b), (b, "stage", "stage_enacted"), (b, "covers", a))
                add("legislative_voice", (p, "speaks_on", a), *body)
        for q in heads("sponsored", b):
            if p != q:
                body = ((p, "sponsored", b), (q, "sponsored", b))
                add("co_sponsorship", (p, "co_sponsor", q), *body)
        for x in tails("member_of", p):
            add("bill_party", (x, "endorses", b), (p, "sponsored", b), (p, "member_of", x))
    for lobby, p in pairs("met_with"):
        for c in tails("sits_on", p):
            if c in tails("lobbies", lobby):
                body = ((lobby, "met_with", p), (p, "sits_on", c), (lobby, "lobbies", c))
                add("declared_interest", (p, "declares", lobby), *body)
    for p, b in pairs("voted_for"):
        for x in tails("member_of", p):
            if x in heads("endorses", b):
                body = ((p, "voted_for", b), (p, "member_of", x), (x, "endorses", b))
                add("party_line", (p, "voted_with_party", b), *body)
        for x in heads("endorses", b):
            for y in tails("member_of", p):
                if x != y:
                    body = ((p, "voted_for", b), (x, "endorses", b), (p, "member_of", y))
                    add("cross_party", (p, "voted_across", b), *body)
    return index.found


@cache
def _rounds(seed: int) -> list[set[LabeledTriple]]:
    """The facts each round of the closure adds at the default size and ``seed``."""
    return closure_rounds(_default(seed), _parliament_groundings)


@pytest.fixture(scope="module")
def parliament() -> World:
    return _default(0)  # the default size and seed 0: the module docstring's numbers


@pytest.fixture(scope="module")
def stats(parliament: World) -> WorldStatistics:
    return world_statistics(parliament, max_targets=200)


# ----------------------------------------------------------------------------- design


def test_parliament_world_sizes_lengths_and_cardinalities(
    parliament: World, stats: WorldStatistics
) -> None:
    s = stats
    assert (s.num_entities, s.num_relations) == (926, 22)  # the docstring's numbers at seed 0
    assert entity_kinds(parliament) == {
        "politician": 320,
        "constituency": 228,
        "bill": 192,
        "lobby_group": 64,
        "committee": 35,
        "ministry": 31,
        "region": 20,
        "party": 18,
        "policy_area": 10,
        "country": 4,
        "stage": 4,
    }
    assert s.split_triples == {"train": 8024, "valid": 317, "test": 313}
    assert 900 <= s.num_entities <= 1400 and 6000 <= sum(s.split_triples.values()) <= 9000
    lengths = [r.length for r in parliament.rules]
    assert (lengths.count(1), lengths.count(2), lengths.count(3)) == (1, 5, 4)
    assert s.targets_by_length == {1: 56, 2: 234, 3: 329} and s.noise_targets == 11
    assert s.targets_by_rule == {
        "bill_party": 50,
        "co_sponsorship": 80,
        "cross_party": 126,
        "declared_interest": 57,
        "home_region": 56,
        "legislative_voice": 15,
        "ministerial_voice": 10,
        "party_line": 131,
        "seat_inverse": 56,
        "seat_party": 38,
    }
    assert min(s.targets_by_rule.values()) >= 8  # the benchmark draws 6 a rule
    assert round(s.multi_grounding_share, 2) == 0.08
    card = s.cardinality
    assert (card["coalition_with"], card["represents"], card["represented_by"]) == ("1-1",) * 3
    assert card["endorses"] == "1-N"
    n_to_1 = ("campaigns_in", "covers", "elected_in", "held_by", "lobbies", "located_in")
    n_to_1 += ("member_of", "minister_of", "speaks_on", "stage")
    assert all(card[r] == "N-1" for r in n_to_1)
    n_to_n = ("co_sponsor", "declares", "met_with", "sits_on", "sponsored", "voted_across")
    n_to_n += ("voted_for", "voted_with_party")
    assert all(card[r] == "N-N" for r in n_to_n) and len(card) == 22
    assert parliament.symmetric == ("co_sponsor", "coalition_with")
    assert parliament.inverse_pairs == (("represents", "represented_by"),)
    assert parliament.shortcuts == (("campaigns_in", "elected_in"),)
    assert parliament.rules_text == PARLIAMENT_RULES
    withheld: dict[str, int] = {}
    for _, r, _ in parliament.exceptions:
        withheld[r] = withheld.get(r, 0) + 1
    assert withheld == {
        "voted_with_party": 43,
        "voted_across": 39,
        "declares": 32,
        "held_by": 14,
        "endorses": 10,
        "speaks_on": 6,
        "elected_in": 3,
    }


def test_parliament_every_rule_has_grounded_test_targets(parliament: World) -> None:
    graph, train = parliament.train_graph, train_triples(parliament)
    for rule in parliament.rules:
        grounded = [t for t in parliament.targets("test") if groundings(rule, t, graph)]
        assert len(grounded) >= 3, rule.name
        assert all(set(g) <= train for t in grounded for g in groundings(rule, t, graph))


@pytest.mark.parametrize(("size", "seed"), [(320, 0), (120, 4)])
def test_parliament_ground_truth_matches_a_brute_force_join(size: int, seed: int) -> None:
    w = _default(seed) if size == 320 else world("parliament", size=size, seed=seed)
    everything, base = all_triples(w), set(w.base_triples)
    found = _parliament_groundings(everything)
    assert set(found) == {str(r.name) for r in w.rules}
    heads = {t for by_head in found.values() for t in by_head}
    assert heads - everything == set(w.exceptions)  # closed up to the exceptions
    assert {t for s in SPLITS for t in w.derived_splits[s]} == (everything - base) & heads
    assert {t for s in SPLITS for t in w.noise_splits[s]} == (everything - base) - heads
    in_train, graph = _parliament_groundings(train_triples(w)), w.train_graph
    for target in held_out(w):
        assert any(target in in_train[name] for name in in_train), target  # split guarantee
        for rule in w.rules:
            expected = in_train[str(rule.name)].get(target, set())
            assert set(groundings(rule, target, graph)) == expected, (rule.name, target)


def test_parliament_seats_are_inverse_and_co_sponsors_symmetric(parliament: World) -> None:
    w = parliament
    represents = relation_pairs(w, "represents")
    assert relation_pairs(w, "represented_by") == {(c, p) for p, c in represents}
    assert not any(t[1] == "represented_by" for t in w.base_triples)  # all derived
    assert not noise_pairs(w, "represented_by") and not exception_pairs(w, "represented_by")
    members: dict[str, set[str]] = {}
    for p, c in represents:
        members.setdefault(c, set()).add(p)
    multi = [c for c, ps in members.items() if len(ps) > 1]
    assert (len(represents), len(members), len(multi)) == (282, 228, 20)
    coalition = relation_pairs(w, "coalition_with")
    assert coalition == {(y, x) for x, y in coalition} and len(coalition) == 14
    # co_sponsor by set algebra: two distinct sponsors of one bill.
    sponsors: dict[str, set[str]] = {}
    for p, b in relation_pairs(w, "sponsored"):
        sponsors.setdefault(b, set()).add(p)
    expected = {(p, q) for ps in sponsors.values() for p in ps for q in ps if p != q}
    co = relation_pairs(w, "co_sponsor")
    assert co == expected and co == {(q, p) for p, q in co} and len(co) == 396
    assert not noise_pairs(w, "co_sponsor") and not exception_pairs(w, "co_sponsor")
    # The closure: the rules over base relations in round one; the seats' parties (through
    # the derived holders) and the votes (through the derived parties of a bill) in round two.
    rounds = [{t[1] for t in new} for new in _rounds(0)]
    assert rounds == [
        {"co_sponsor", "declares", "elected_in", "endorses", "represented_by", "speaks_on"},
        {"held_by", "voted_across", "voted_with_party"},
    ]


def test_parliament_seat_party_reads_the_derived_holders(parliament: World) -> None:
    rule = next(r for r in parliament.rules if r.name == "seat_party")
    assert rule.body[0].relation == "represented_by"  # the derived side of the inverse pair
    party = dict(relation_pairs(parliament, "member_of"))
    expected = {(c, party[p]) for p, c in relation_pairs(parliament, "represents")}
    facts = relation_pairs(parliament, "held_by")
    noise, lost = noise_pairs(parliament, "held_by"), exception_pairs(parliament, "held_by")
    assert facts - noise == expected - lost
    assert (len(facts), len(noise), len(lost)) == (252, 8, 14)
    region = dict(relation_pairs(parliament, "located_in"))
    elected = {(p, region[c]) for p, c in relation_pairs(parliament, "represents")}
    lost = exception_pairs(parliament, "elected_in")
    assert relation_pairs(parliament, "elected_in") == elected - lost and len(lost) == 3


def test_parliament_voice_has_two_bodies_one_a_star_with_a_constant(parliament: World) -> None:
    rules = [r for r in parliament.rules if r.head.relation == "speaks_on"]
    assert [(r.name, r.length) for r in rules] == [
        ("ministerial_voice", 2),
        ("legislative_voice", 3),
    ]
    ministerial, legislative = rules
    assert all("B" in a.variables for a in legislative.body)
    assert "B" not in legislative.head.variables
    stage = legislative.body[1]
    assert stage.second.name == "stage_enacted" and not stage.second.is_variable
    facts = {t for t in all_triples(parliament) if t[1] == "speaks_on"}
    found = _parliament_groundings(all_triples(parliament))
    by_ministry, by_bill = (set(found[str(r.name)]) & facts for r in rules)
    assert body_shares(facts, by_ministry, by_bill, noise_facts(parliament)) == [
        0.32,
        0.05,
        0.6,
        0.04,
    ]
    covers = dict(relation_pairs(parliament, "covers"))
    stages = dict(relation_pairs(parliament, "stage"))
    expected = {(p, covers[m]) for p, m in relation_pairs(parliament, "minister_of")}
    expected |= {
        (p, covers[b])
        for p, b in relation_pairs(parliament, "sponsored")
        if stages[b] == "stage_enacted"
    }
    noise, lost = noise_pairs(parliament, "speaks_on"), exception_pairs(parliament, "speaks_on")
    assert relation_pairs(parliament, "speaks_on") - noise == expected - lost
    assert (len(facts), len(noise), len(lost)) == (133, 5, 6)
    # The other stages are in the world too: a sponsor of a defeated bill is no voice.
    assert {s for s in stages.values()} == {
        "stage_committee",
        "stage_defeated",
        "stage_enacted",
        "stage_second_reading",
    }


def test_parliament_declared_interest_is_a_triangle(parliament: World) -> None:
    rule = next(r for r in parliament.rules if r.name == "declared_interest")
    variables = [set(a.variables) for a in rule.body]
    assert len(set().union(*variables)) == 3 and all(len(v) == 2 for v in variables)
    lobbied = relation_pairs(parliament, "lobbies")
    seats = relation_pairs(parliament, "sits_on")
    expected = {
        (p, g)
        for g, p in relation_pairs(parliament, "met_with")
        for q, c in seats
        if q == p and (g, c) in lobbied
    }
    facts = relation_pairs(parliament, "declares")
    noise, lost = noise_pairs(parliament, "declares"), exception_pairs(parliament, "declares")
    assert facts - noise == expected - lost
    assert (len(facts), len(noise), len(lost), len(relation_pairs(parliament, "met_with"))) == (
        303,
        15,
        32,
        547,
    )


def test_parliament_votes_split_by_party_through_the_derived_endorsements(
    parliament: World,
) -> None:
    party = dict(relation_pairs(parliament, "member_of"))
    endorsing: dict[str, set[str]] = {}
    for p, b in relation_pairs(parliament, "sponsored"):
        endorsing.setdefault(b, set()).add(party[p])
    lost = exception_pairs(parliament, "endorses")
    assert (
        relation_pairs(parliament, "endorses")
        == {(x, b) for b, xs in endorsing.items() for x in xs} - lost
    )
    assert len(lost) == 10 and not noise_pairs(parliament, "endorses")
    cross = next(r for r in parliament.rules if r.name == "cross_party")
    (ineq,) = cross.inequalities
    assert ineq.left.name not in cross.head.variables  # two body variables
    assert ineq.right.name not in cross.head.variables
    endorses = relation_pairs(parliament, "endorses")
    votes = relation_pairs(parliament, "voted_for")
    with_party = {(p, b) for p, b in votes if (party[p], b) in endorses}
    across = {(p, b) for p, b in votes if any(x != party[p] for x, c in endorses if c == b)}
    for relation, expected, counts in (
        ("voted_with_party", with_party, (864, 17, 43)),
        ("voted_across", across, (776, 23, 39)),
    ):
        facts = relation_pairs(parliament, relation)
        noise, lost = noise_pairs(parliament, relation), exception_pairs(parliament, relation)
        assert facts - noise == expected - lost, relation
        assert (len(facts), len(noise), len(lost)) == counts, relation
    assert len(votes) == 1261 and len(with_party & across) == 431


def test_parliament_campaigning_is_a_correlated_shortcut(
    parliament: World, stats: WorldStatistics
) -> None:
    heads = relation_pairs(parliament, "elected_in")
    given = relation_pairs(parliament, "campaigns_in", "train")
    cover = len(heads & given) / len(heads)
    assert round(cover, 2) == 0.86
    assert stats.shortcut_cooccurrence[("campaigns_in", "elected_in")] == pytest.approx(cover)
    assert round(stats.shortcut_precision[("campaigns_in", "elected_in")], 2) == 0.66
    assert all("campaigns_in" not in {a.relation for a in r.body} for r in parliament.rules)
    # Pooled over three seeds: a constituency member campaigns in its region with
    # probability .85.
    k = n = 0
    for seed in (0, 1, 2):
        w = _default(seed)
        region = dict(relation_pairs(w, "located_in"))
        campaigns = relation_pairs(w, "campaigns_in")
        seats = relation_pairs(w, "represents")
        k += sum((p, region[c]) in campaigns for p, c in seats)
        n += len(seats)
    assert abs(k / n - 0.85) < 4 * math.sqrt(0.85 * 0.15 / n), (k, n)


def test_parliament_world_has_country_party_and_stage_hubs(
    parliament: World, stats: WorldStatistics
) -> None:
    train = parliament.dataset.train.to_labeled_triples()
    degree = degrees_by_kind(parliament, train)
    kinds = ("country", "party", "stage", "policy_area", "region", "politician")
    top = {kind: max(degree[kind].values()) for kind in kinds}
    assert top == {
        "country": 198,
        "party": 100,
        "stage": 90,
        "policy_area": 54,
        "region": 55,
        "politician": 28,
    }
    first = {kind: max(sorted(degree[kind]), key=degree[kind].__getitem__) for kind in kinds}
    assert (first["country"], first["party"], first["stage"]) == (
        "country_arden",
        "party_arden_social",
        "stage_enacted",
    )
    assert float(np.median(list(degree["politician"].values()))) == 14
    median, p90 = enclosing_quantiles(parliament, set(train))  # 2-hop enclosing subgraphs, BFS
    assert median == stats.subgraph_median == 1683.5  # the docstring
    assert p90 == round(stats.subgraph_p90) == 2430
    assert 1000 <= stats.subgraph_p90 <= 5000


def test_parliament_subgraphs_are_dense_at_every_seed() -> None:
    p90s = []
    for seed in (0, 1, 2, 3):
        w = _default(seed)
        p90s.append(enclosing_quantiles(w, train_triples(w))[1])
    assert p90s == [2430, 2169, 2635, 2040]  # the docstring
    assert all(1000 <= p <= 5000 for p in p90s)


def test_parliament_size_is_bounded_below_and_the_smallest_world_covers_every_country() -> None:
    with pytest.raises(GraphDataError, match=r"size: expected an int >= 60, got 59"):
        parliament_world(59)
    with pytest.raises(GraphDataError, match="seed: expected an int >= 0 or None"):
        parliament_world(80, seed=-1)
    with pytest.raises(GraphDataError, match="expected a sum below 1"):
        parliament_world(80, valid_fraction=0.6, test_fraction=0.4)
    w = parliament_world(60, seed=1)
    kinds = entity_kinds(w)
    assert (kinds["politician"], kinds["bill"], kinds["lobby_group"]) == (60, 36, 12)
    where = dict(relation_pairs(w, "located_in"))
    politicians = [p for p in where if w.entity_types[p] == "politician"]
    assert len({where[p] for p in politicians}) == 4  # a politician in every country
    assert {
        str(r.name) for t in held_out(w) for r in w.rules if groundings(r, t, w.train_graph)
    } == {str(r.name) for r in w.rules}


def test_parliament_exception_and_noise_rates() -> None:
    # Pooled over three seeds at the default size, each exception rate within four binomial
    # sd (of the facts only that rule derives). Noise is drawn to the count (base.py step 2)
    # from the facts of the first closure, so the counts are checked nearly exactly.
    rates = {"home_region": 0.03, "seat_party": 0.05, "ministerial_voice": 0.04}
    rates |= {"legislative_voice": 0.08, "declared_interest": 0.1, "bill_party": 0.03}
    rates |= {"party_line": 0.05, "cross_party": 0.06}
    withheld_n = {name: [0, 0] for name in rates}
    for seed in (0, 1, 2):
        w = _default(seed)
        everything, base = all_triples(w), set(w.base_triples)
        found, withheld = _parliament_groundings(everything), set(w.exceptions)
        assert {r for _, r, _ in withheld} <= {
            "declares",
            "elected_in",
            "endorses",
            "held_by",
            "speaks_on",
            "voted_across",
            "voted_with_party",
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
