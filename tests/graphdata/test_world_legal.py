"""Tests for the legal world: ground truth by brute force, design, rates, hubs.

The world-agnostic checks (split guarantee, closure, symmetry and inverses, determinism and
file round trips) run on every world of :data:`graphdata.worlds.WORLDS` in ``test_worlds.py``;
these check what :mod:`graphdata.worlds.legal` states, mostly against a nested-loop join that
does not use :mod:`graphdata.rules`.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest

from graphdata.rules import groundings
from graphdata.typing import LabeledTriple
from graphdata.worlds import (
    LEGAL_RULES,
    World,
    WorldStatistics,
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
    return default_world("legal", seed)


@pytest.fixture(scope="module")
def legal() -> World:
    return _default(0)  # the default size and seed 0: the module docstring's numbers


@pytest.fixture(scope="module")
def stats(legal: World) -> WorldStatistics:
    return world_statistics(legal, max_targets=200)


def _legal_groundings(facts: set[LabeledTriple]) -> Groundings:
    """Every grounding of every legal rule in ``facts``, by nested loops (no graphdata.rules).

    Rule name -> head triple -> the groundings' body triples in body order.
    """
    index = FactIndex(facts)
    pairs, tails, heads, add = index.pairs, index.tails, index.heads, index.add

    for p, lawyer in pairs.get("represented_by", []):
        add("counsel_inverse", (lawyer, "counsel_for", p), (p, "represented_by", lawyer))
        for q in heads("represented_by", lawyer):
            if q in tails("opposing_party", p):
                body = ((p, "represented_by", lawyer), (q, "represented_by", lawyer))
                add(
                    "conflict", (lawyer, "conflict_of_interest", p), *body, (p, "opposing_party", q)
                )
    for p, k in pairs.get("plaintiff_in", []):
        for q in heads("defendant_in", k):
            add("sued", (p, "opposing_party", q), (p, "plaintiff_in", k), (q, "defendant_in", k))
    for p, k in pairs.get("defendant_in", []):
        for q in heads("plaintiff_in", k):
            add("sued_by", (p, "opposing_party", q), (p, "defendant_in", k), (q, "plaintiff_in", k))
    for k, j in pairs.get("heard_by", []):
        for d in tails("sits_on", j):
            for c in heads("appeals_to", d):
                body = ((k, "heard_by", j), (j, "sits_on", d), (c, "appeals_to", d))
                add("appellate_precedent", (k, "binding_on", c), *body)
            for a in tails("specialised_in", d):
                body = ((k, "heard_by", j), (j, "sits_on", d), (d, "specialised_in", a))
                add("specialist_court", (k, "concerns", a), *body)
    for k, d in pairs.get("binding_on", []):
        for c in heads("appeals_to", d):
            add(
                "precedent_descends",
                (k, "binding_on", c),
                (k, "binding_on", d),
                (c, "appeals_to", d),
            )
    for k, s in pairs.get("invokes", []):
        for t in tails("section_of", s):
            for a in tails("field_of", t):
                body = ((k, "invokes", s), (s, "section_of", t), (t, "field_of", a))
                add("statutory_area", (k, "concerns", a), *body)
    for k, a in pairs.get("concerns", []):
        citing = sorted(heads("cites", k))
        for x in citing:
            for y in citing:
                if x != y:
                    body = ((x, "cites", k), (y, "cites", k), (k, "concerns", a))
                    add("leading_case", (k, "leading_case", a), *body)
    return index.found


@cache
def _rounds(seed: int) -> list[set[LabeledTriple]]:
    """The facts each round of the closure adds to the base facts of ``_default(seed)``."""
    return closure_rounds(_default(seed), _legal_groundings)


# ----------------------------------------------------------------------------- design


def test_legal_world_sizes_lengths_and_cardinalities(legal: World, stats: WorldStatistics) -> None:
    s = stats
    assert (s.num_entities, s.num_relations) == (910, 20)  # the docstring's numbers at seed 0
    kinds = sorted(set(legal.entity_types.values()))
    assert kinds == [
        "case",
        "city",
        "country",
        "court",
        "firm",
        "judge",
        "jurisdiction",
        "lawyer",
        "legal_area",
        "party",
        "section",
        "statute",
    ]
    assert s.split_triples == {"train": 7408, "valid": 267, "test": 263}
    lengths = [r.length for r in legal.rules]
    assert (lengths.count(1), lengths.count(2), lengths.count(3)) == (1, 3, 5)
    assert s.targets_by_length == {1: 32, 2: 209, 3: 273} and s.noise_targets == 16
    assert s.targets_by_rule == {
        "appellate_precedent": 87,
        "conflict": 11,
        "counsel_inverse": 32,
        "leading_case": 42,
        "precedent_descends": 69,
        "specialist_court": 31,
        "statutory_area": 102,
        "sued": 74,
        "sued_by": 66,
    }
    assert round(s.multi_grounding_share, 2) == 0.41
    assert min(s.targets_by_rule.values()) >= 10 and 400 <= sum(s.targets_by_rule.values()) <= 800
    card = s.cardinality
    assert card["specialised_in"] == "1-1"
    one_to_n = ("plaintiff_in", "defendant_in", "counsel_for", "conflict_of_interest")
    assert all(card[r] == "1-N" for r in one_to_n)
    n_to_1 = ("located_in", "appeals_to", "sits_on", "represented_by", "member_of")
    assert all(card[r] == "N-1" for r in (*n_to_1, "section_of", "field_of", "docketed_as"))
    n_to_n = ("heard_by", "invokes", "cites", "opposing_party", "binding_on")
    assert all(card[r] == "N-N" for r in (*n_to_n, "concerns", "leading_case"))
    assert legal.symmetric == ("opposing_party",)
    assert legal.inverse_pairs == (("represented_by", "counsel_for"),)
    assert legal.shortcuts == (("docketed_as", "concerns"),)
    assert legal.rules_text == LEGAL_RULES
    assert len(legal.exceptions) == 158


@pytest.mark.parametrize(("size", "seed"), [(400, 0), (120, 4)])
def test_legal_ground_truth_matches_a_brute_force_join(size: int, seed: int) -> None:
    w = _default(seed) if size == 400 else world("legal", size=size, seed=seed)
    everything, base = all_triples(w), set(w.base_triples)
    found = _legal_groundings(everything)
    assert set(found) == {str(r.name) for r in w.rules}
    heads = {t for by_head in found.values() for t in by_head}
    assert heads - everything == set(w.exceptions)  # closed up to the exceptions
    assert {t for s in SPLITS for t in w.derived_splits[s]} == (everything - base) & heads
    assert {t for s in SPLITS for t in w.noise_splits[s]} == (everything - base) - heads
    in_train, graph = _legal_groundings(train_triples(w)), w.train_graph
    for target in held_out(w):
        assert any(target in in_train[name] for name in in_train), target  # split guarantee
        for rule in w.rules:
            expected = in_train[str(rule.name)].get(target, set())
            assert set(groundings(rule, target, graph)) == expected, (rule.name, target)


def test_legal_inverse_pair_and_mirrored_symmetric_adversaries(legal: World) -> None:
    represented, train = relation_pairs(legal, "represented_by"), train_triples(legal)
    assert relation_pairs(legal, "counsel_for") == {(m, p) for p, m in represented}
    assert len({p for p, _ in represented}) == len(represented) == 160  # one lawyer a party
    # opposing_party: never a base fact, symmetric because its two bodies mirror each other
    # (the same two relations with the roles swapped), never noise.
    base = set(legal.base_triples)
    assert not {t for t in base if t[1] == "opposing_party"}
    sued, sued_by = (next(r for r in legal.rules if r.name == n) for n in ("sued", "sued_by"))
    assert [a.relation for a in sued.body] == ["plaintiff_in", "defendant_in"]
    assert [a.relation for a in sued_by.body] == ["defendant_in", "plaintiff_in"]
    plaintiff = {k: p for p, k in relation_pairs(legal, "plaintiff_in")}
    defendant = {k: p for p, k in relation_pairs(legal, "defendant_in")}
    assert len(plaintiff) == len(defendant) == 400  # one of each per case, never the same
    assert all(plaintiff[k] != defendant[k] for k in plaintiff)
    opposing = relation_pairs(legal, "opposing_party")
    sides = {(plaintiff[k], defendant[k]) for k in plaintiff}
    assert opposing == sides | {(q, p) for p, q in sides}
    found = _legal_groundings(all_triples(legal))
    facts = {t for t in all_triples(legal) if t[1] == "opposing_party"}
    both = set(found["sued"]) & set(found["sued_by"]) & facts
    assert round(len(both) / len(facts), 2) == 0.04  # parties who sued each other
    # The reversed copy of most held-out targets is in train: not a grounding, a trap.
    targets = held_out(legal, "opposing_party")
    back = sum((q, r, p) in train for p, r, q in targets) / len(targets)
    assert len(targets) == 140 and round(back, 2) == 0.79  # the docstring, seed 0


def _levels(w: World) -> dict[str, int]:
    """Each court's depth below its country's supreme court (0 for the supreme courts)."""
    up = dict(relation_pairs(w, "appeals_to"))
    courts = [e for e, kind in w.entity_types.items() if kind == "court"]
    depth = {}
    for c in courts:
        d, x = 0, c
        while x in up:
            d, x = d + 1, up[x]
        depth[c] = d
    return depth


def test_legal_precedent_descends_the_hierarchy_to_a_bounded_depth(legal: World) -> None:
    depth = _levels(legal)
    assert sorted(set(depth.values())) == [0, 1, 2, 3]  # supreme, high, appellate, trial
    assert sum(d == 0 for d in depth.values()) == 5
    # Every binding fact binds a court below one that heard the case (noise aside).
    up = dict(relation_pairs(legal, "appeals_to"))
    court_of = dict(relation_pairs(legal, "sits_on"))
    heard: dict[str, set[str]] = {}
    for k, j in relation_pairs(legal, "heard_by"):
        heard.setdefault(k, set()).add(court_of[j])

    def above(c: str) -> set[str]:
        out = set()
        while c in up:
            c = up[c]
            out.add(c)
        return out

    # The recursion is bounded: the closure of the base facts adds binding facts in three
    # rounds, the last through precedent_descends alone (the hierarchy is three appeals deep).
    rounds = [{t for t in new if t[1] == "binding_on"} for new in _rounds(0)]
    assert len(rounds) == 3 and all(rounds)
    # Each binds a court below one that heard the case (besides these, noise binding facts
    # descend too).
    assert all(heard[k] & above(c) for k, _, c in set().union(*rounds))
    noise = noise_facts(legal)
    binding = {t for t in all_triples(legal) if t[1] == "binding_on"}
    found = _legal_groundings(all_triples(legal))
    assert not rounds[2] & set(found["appellate_precedent"])
    facts = binding
    by_panel, by_descent = (
        set(found["appellate_precedent"]) & facts,
        set(found["precedent_descends"]) & facts,
    )
    assert by_panel | by_descent == facts - noise
    shares = body_shares(facts, by_panel, by_descent, noise)
    assert shares == [0.17, 0.43, 0.38, 0.02]  # the docstring, seed 0
    # Held-out binding facts feed the recursive body of other held-out targets' siblings:
    # the derived relation is in a body, and its own held-out facts are targets.
    graph = legal.train_graph
    rule = next(r for r in legal.rules if r.name == "precedent_descends")
    targets = [t for t in held_out(legal, "binding_on") if groundings(rule, t, graph)]
    assert len(targets) >= 50


def test_legal_concerns_has_two_bodies_and_a_docket_shortcut(
    legal: World, stats: WorldStatistics
) -> None:
    everything = all_triples(legal)
    found = _legal_groundings(everything)
    facts = {t for t in everything if t[1] == "concerns"}
    by_court, by_statute = (
        set(found["specialist_court"]) & facts,
        set(found["statutory_area"]) & facts,
    )
    noise = noise_facts(legal)
    assert by_court | by_statute == facts - noise
    shares = body_shares(facts, by_court, by_statute, noise)
    assert shares == [0.09, 0.09, 0.78, 0.04]  # the docstring, seed 0
    # specialised_in is 1-1: six trial courts, one area each, appealing straight to a high
    # court.
    special = relation_pairs(legal, "specialised_in")
    assert len({c for c, _ in special}) == len({a for _, a in special}) == len(special) == 6
    depth = _levels(legal)
    assert all(depth[c] == 2 for c, _ in special)
    # The docket is a correlated shortcut, in no body of concerns.
    heads, given = relation_pairs(legal, "concerns"), relation_pairs(legal, "docketed_as", "train")
    cover, precision = len(heads & given) / len(heads), len(heads & given) / len(given)
    assert (round(cover, 2), round(precision, 2)) == (0.46, 0.81)  # the docstring, seed 0
    assert stats.shortcut_cooccurrence[("docketed_as", "concerns")] == pytest.approx(cover)
    assert stats.shortcut_precision[("docketed_as", "concerns")] == pytest.approx(precision)
    assert all(
        "docketed_as" not in {a.relation for a in r.body}
        for r in legal.rules
        if r.head.relation == "concerns"
    )
    other = _default(2)
    heads, given = relation_pairs(other, "concerns"), relation_pairs(other, "docketed_as", "train")
    assert 0.35 < len(heads & given) / len(heads) < 0.6
    assert 0.7 < len(heads & given) / len(given) < 0.9


def test_legal_leading_case_is_a_star_with_an_inequality_between_citing_cases(
    legal: World,
) -> None:
    rule = next(r for r in legal.rules if r.name == "leading_case")
    (inequality,) = rule.inequalities
    pair = {inequality.left.name, inequality.right.name}
    assert pair == {"X", "Y"} and not pair & set(rule.head.variables)  # not the head's
    assert [a.relation for a in rule.body] == ["cites", "cites", "concerns"]
    assert all("K" in a.variables for a in rule.body)  # a star around the cited case
    everything, noise = all_triples(legal), noise_facts(legal)
    citers: dict[str, set[str]] = {}
    for x, k in relation_pairs(legal, "cites"):
        citers.setdefault(k, set()).add(x)
    concerns, withheld = relation_pairs(legal, "concerns"), set(legal.exceptions)
    leading = {t for t in everything if t[1] == "leading_case"}
    expected = {(k, "leading_case", a) for k, a in concerns if len(citers.get(k, ())) >= 2}
    assert leading - noise == expected - withheld
    # Without the inequality a case cited once would qualify: it matters for many cases.
    once = {(k, a) for k, a in concerns if len(citers.get(k, ())) == 1}
    assert len(once) >= 50 and not {(k, "leading_case", a) for k, a in once} & (leading - noise)
    assert len(leading) == 289
    # concerns is never a base fact: leading cases come in the closure's second round, and
    # held-out concerns facts are themselves targets.
    assert not {t for t in legal.base_triples if t[1] == "concerns"}
    rounds = _rounds(0)
    assert not {t for t in rounds[0] if t[1] == "leading_case"}
    assert len(held_out(legal, "concerns")) >= 100 and len(held_out(legal, "leading_case")) >= 20
    # The docket parallels the concerns atom for most leading cases (a shortcut for it too).
    docket = relation_pairs(legal, "docketed_as", "train")
    assert round(sum((k, a) in docket for k, _, a in leading) / len(leading), 2) == 0.45


def test_legal_conflict_is_a_triangle_through_the_derived_adversary_relation(
    legal: World,
) -> None:
    found = _legal_groundings(all_triples(legal))
    assert found["conflict"]
    for (lawyer, _, p), bodies in found["conflict"].items():
        for body in bodies:
            assert body[0] == (p, "represented_by", lawyer) and body[1][2] == lawyer
            ends = [{x, y} for x, _, y in body]
            assert len(set().union(*ends)) == 3 and all(len(e) == 2 for e in ends)
    conflicts = {t for t in all_triples(legal) if t[1] == "conflict_of_interest"}
    withheld = [t for t in legal.exceptions if t[1] == "conflict_of_interest"]
    assert (len(conflicts), len(withheld)) == (64, 8)  # the docstring, seed 0
    plaintiff = {k: p for p, k in relation_pairs(legal, "plaintiff_in")}
    defendant = {k: p for p, k in relation_pairs(legal, "defendant_in")}
    lawyer_of = dict(relation_pairs(legal, "represented_by"))
    same = sum(lawyer_of[plaintiff[k]] == lawyer_of[defendant[k]] for k in plaintiff)
    assert same == 46
    # The adversary atom is derived (round 1) and held out too; conflicts come in round 2.
    rounds = _rounds(0)
    assert {t for t in rounds[0] if t[1] == "opposing_party"}
    assert not {t for t in rounds[0] if t[1] == "conflict_of_interest"}
    graph = legal.train_graph
    rule = next(r for r in legal.rules if r.name == "conflict")
    targets = held_out(legal, "conflict_of_interest")
    assert len(targets) == 11 and all(groundings(rule, t, graph) for t in targets)


def test_legal_world_has_area_state_case_and_country_hubs(
    legal: World, stats: WorldStatistics
) -> None:
    train = legal.dataset.train.to_labeled_triples()
    degree = degrees_by_kind(legal, train)
    top = {
        kind: max(degree[kind].values())
        for kind in ("legal_area", "party", "case", "country", "court")
    }
    assert top == {"legal_area": 126, "party": 127, "case": 119, "country": 54, "court": 32}
    states = {f"party_{c:03d}" for c in range(5)}  # the first parties, one per country
    busiest = max((d, e) for e, d in degree["party"].items())
    assert busiest[1] in states
    assert top["case"] >= 5 * float(np.median(list(degree["case"].values())))

    median, p90 = enclosing_quantiles(legal, train)  # 2-hop enclosing subgraphs, by BFS
    assert median == stats.subgraph_median == 1346  # the docstring
    assert p90 == round(stats.subgraph_p90) == 2752
    assert 1000 <= stats.subgraph_median and stats.subgraph_p90 <= 5000


def test_legal_exception_and_noise_rates() -> None:
    # Pooled over three seeds at the default size, each exception rate within four binomial
    # sd. Noise is drawn to the count (base.py step 2) from the facts of the first closure
    # (rebuilt here without noise), so the counts are checked nearly exactly.
    rates = {
        "precedent": 0.05,  # appellate_precedent and precedent_descends, pooled
        "specialist_court": 0.03,
        "statutory_area": 0.08,
        "leading_case": 0.1,
        "conflict": 0.15,
    }
    withheld_n = {name: [0, 0] for name in rates}
    for seed in (0, 1, 2):
        w = _default(seed)
        everything, base = all_triples(w), set(w.base_triples)
        found, withheld = _legal_groundings(everything), set(w.exceptions)
        heads = {"binding_on", "concerns", "leading_case", "conflict_of_interest"}
        assert {r for _, r, _ in withheld} == heads
        assert w.exception_rates["appellate_precedent"] == w.exception_rates["precedent_descends"]
        named = {"appellate_precedent": 0.05, "precedent_descends": 0.05, **rates}
        assert w.exception_rates == {str(r.name): named.get(str(r.name), 0.0) for r in w.rules}
        # The two concerns bodies derive in the same round, and the smaller rate applies.
        own = {
            "precedent": set(found["appellate_precedent"]) | set(found["precedent_descends"]),
            "specialist_court": set(found["specialist_court"]),
            "statutory_area": set(found["statutory_area"]) - set(found["specialist_court"]),
            "leading_case": set(found["leading_case"]),
            "conflict": set(found["conflict"]),
        }
        for name, derived in own.items():
            withheld_n[name][0] += len(derived & withheld)
            withheld_n[name][1] += len(derived)
        assert set(w.noise_rates) == heads
        closed = set(base).union(*_rounds(seed))  # the first closure, without noise
        # a noise fact that another noise fact grounds (a leading case through a noise area)
        # becomes a derived fact: at most a couple per relation
        check_noise_counts(w, closed, seed, tolerance=0.01)
    for name, q in rates.items():
        k, n = withheld_n[name]
        assert abs(k / n - q) < 4 * math.sqrt(q * (1 - q) / n), (name, k, n)
