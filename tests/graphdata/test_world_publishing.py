"""Tests for the book publishing world: ground truth by brute force, design, rates, hubs.

The world-agnostic checks (split guarantee, closure, symmetry and inverses, determinism and
file round trips) run on every world of :data:`graphdata.worlds.WORLDS` in ``test_worlds.py``;
these check what :mod:`graphdata.worlds.publishing` states, mostly against a nested-loop join
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
    PUBLISHING_RULES,
    World,
    WorldStatistics,
    publishing_world,
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
    held_out,
    noise_facts,
    relation_pairs,
    train_triples,
)


def _default(seed: int) -> World:
    """The world at the default size (drawn once per seed for the test session)."""
    return default_world("publishing", seed)


def _publishing_groundings(facts: set[LabeledTriple]) -> Groundings:
    """Every grounding of every publishing rule in ``facts``, by nested loops.

    Rule name -> head triple -> the groundings' body triples in body order; no
    :mod:`graphdata.rules`.
    """
    index = FactIndex(facts)
    pairs, tails, heads, add = index.of, index.tails, index.heads, index.add

    for g, a in pairs("represents"):
        add("agency_inverse", (a, "represented_by", g), (g, "represents", a))
    for g, h in pairs("appointed_coagent"):
        add("coagent_appointed", (g, "co_agents", h), (g, "appointed_coagent", h))
        add("coagent_appointing", (h, "co_agents", g), (g, "appointed_coagent", h))
    for w, v in pairs("sequel_of"):
        for s in tails("in_series", v):
            body = ((w, "sequel_of", v), (v, "in_series", s))
            add("series_continues", (w, "in_series", s), *body)
    for g, h in pairs("co_agents"):
        for k in tails("based_in", h):
            body = ((g, "co_agents", h), (h, "based_in", k))
            add("rights_territory", (g, "sells_rights_in", k), *body)
    for e, w in pairs("translation_of"):
        if "lang_english" in tails("language", e):
            body = ((e, "translation_of", w), (e, "language", "lang_english"))
            add("translated_prize", (w, "eligible_for", "prize_translated"), *body)
    for e, w in pairs("edition_of"):
        for lang in tails("language", e):
            for m in tails("language", w):
                if lang != m:
                    body = ((e, "edition_of", w), (e, "language", lang), (w, "language", m))
                    add("translation", (e, "translation_of", w), *body)
    for w, a in pairs("written_by"):
        for k in tails("based_in", a):
            for z in heads("open_to", k):
                body = ((w, "written_by", a), (a, "based_in", k), (z, "open_to", k))
                add("national_prize", (w, "eligible_for", z), *body)
    for g, a in pairs("represents"):
        for w in heads("written_by", a):
            for e in heads("translation_of", w):
                body = ((g, "represents", a), (w, "written_by", a), (e, "translation_of", w))
                add("rights_sale", (g, "handled_rights", w), *body)
    for e, i in pairs("issued_by"):
        for k in tails("based_in", i):
            for f in tails("format", e):
                if f != "format_ebook":
                    body = ((e, "issued_by", i), (i, "based_in", k), (e, "format", f))
                    add("legal_deposit", (e, "deposited_in", k), *body)
    return index.found


@cache
def _rounds(seed: int) -> list[set[LabeledTriple]]:
    """The facts each round of the closure adds at the default size and ``seed``."""
    return closure_rounds(_default(seed), _publishing_groundings)


@pytest.fixture(scope="module")
def publishing() -> World:
    return _default(0)  # the default size and seed 0: the module docstring's numbers


@pytest.fixture(scope="module")
def stats(publishing: World) -> WorldStatistics:
    return world_statistics(publishing, max_targets=200)


# ----------------------------------------------------------------------------- design


def test_publishing_world_sizes_lengths_and_cardinalities(
    publishing: World, stats: WorldStatistics
) -> None:
    s = stats
    assert (s.num_entities, s.num_relations) == (1343, 22)  # the docstring's numbers at seed 0
    assert entity_kinds(publishing) == {
        "edition": 747,
        "work": 300,
        "author": 75,
        "imprint": 45,
        "translator": 37,
        "series": 36,
        "agency": 30,
        "publishing_group": 24,
        "country": 14,
        "language": 11,
        "genre": 10,
        "prize": 10,
        "format": 4,
    }
    assert s.split_triples == {"train": 7284, "valid": 177, "test": 179}
    assert 800 <= s.num_entities <= 1500 and 5000 <= sum(s.split_triples.values()) <= 20000
    lengths = [r.length for r in publishing.rules]
    assert (lengths.count(1), lengths.count(2), lengths.count(3)) == (3, 3, 4)
    assert s.targets_by_length == {1: 34, 2: 43, 3: 269} and s.noise_targets == 10
    assert s.targets_by_rule == {
        "agency_inverse": 12,
        "coagent_appointed": 10,
        "coagent_appointing": 12,
        "legal_deposit": 128,
        "national_prize": 46,
        "rights_sale": 22,
        "rights_territory": 18,
        "series_continues": 15,
        "translated_prize": 10,
        "translation": 73,
    }
    assert min(s.targets_by_rule.values()) >= 10  # the benchmark draws 6 a rule
    assert round(s.multi_grounding_share, 2) == 0.06
    card = s.cardinality
    assert (card["open_to"], card["sequel_of"]) == ("1-1", "1-1")
    assert (card["represents"], card["handled_rights"]) == ("1-N", "1-N")
    n_to_1 = ("based_in", "deposited_in", "edition_of", "eligible_for", "format", "genre")
    n_to_1 += ("imprint_of", "in_series", "issued_by", "language", "represented_by", "sold_in")
    n_to_1 += ("translated_by", "translation_of", "written_by")
    assert all(card[r] == "N-1" for r in n_to_1)
    n_to_n = ("appointed_coagent", "co_agents", "sells_rights_in")
    assert all(card[r] == "N-N" for r in n_to_n) and len(card) == 22
    assert publishing.symmetric == ("co_agents",)
    assert publishing.inverse_pairs == (("represents", "represented_by"),)
    assert publishing.shortcuts == (("sold_in", "deposited_in"),)
    assert publishing.rules_text == PUBLISHING_RULES
    withheld = {}
    for _, r, _ in publishing.exceptions:
        withheld[r] = withheld.get(r, 0) + 1
    assert withheld == {
        "deposited_in": 33,
        "translation_of": 10,
        "eligible_for": 9,
        "handled_rights": 7,
        "in_series": 5,
    }


@pytest.mark.parametrize(("size", "seed"), [(300, 0), (120, 4)])
def test_publishing_ground_truth_matches_a_brute_force_join(size: int, seed: int) -> None:
    w = _default(seed) if size == 300 else world("publishing", size=size, seed=seed)
    everything, base = all_triples(w), set(w.base_triples)
    found = _publishing_groundings(everything)
    assert set(found) == {str(r.name) for r in w.rules}
    heads = {t for by_head in found.values() for t in by_head}
    assert heads - everything == set(w.exceptions)  # closed up to the exceptions
    assert {t for s in SPLITS for t in w.derived_splits[s]} == (everything - base) & heads
    assert {t for s in SPLITS for t in w.noise_splits[s]} == (everything - base) - heads
    in_train, graph = _publishing_groundings(train_triples(w)), w.train_graph
    for target in held_out(w):
        assert any(target in in_train[name] for name in in_train), target  # split guarantee
        for rule in w.rules:
            expected = in_train[str(rule.name)].get(target, set())
            assert set(groundings(rule, target, graph)) == expected, (rule.name, target)


def test_publishing_co_agents_are_symmetric_and_agencies_inverse(publishing: World) -> None:
    w = publishing
    represents = relation_pairs(w, "represents")
    assert relation_pairs(w, "represented_by") == {(a, g) for g, a in represents}
    assert (len(represents), len({g for g, _ in represents})) == (56, 21)  # 1-N
    kind = w.entity_types
    assert all(kind[g] == "agency" and kind[a] == "author" for g, a in represents)
    country = dict(relation_pairs(w, "based_in"))
    assert all(country[g] == country[a] for g, a in represents)  # an agency at home
    appointed = relation_pairs(w, "appointed_coagent")
    co = relation_pairs(w, "co_agents")
    assert co == appointed | {(h, g) for g, h in appointed}  # both bodies, nothing else
    assert co == {(h, g) for g, h in co} and not any(g == h for g, h in co)
    assert not any(t[1] == "co_agents" for t in w.base_triples)
    reciprocal = sum((h, g) in appointed for g, h in appointed) // 2
    assert (len(appointed), reciprocal, len(co)) == (59, 3, 112)
    assert all(country[g] != country[h] for g, h in appointed)  # co-agents abroad
    # The territories an agency sells rights in: its co-agents' countries, by set algebra.
    territories = relation_pairs(w, "sells_rights_in")
    noise = {(g, k) for g, r, k in noise_facts(w) if r == "sells_rights_in"}
    assert territories - noise == {(g, country[h]) for g, h in co}  # no exception
    assert (len(territories), len(noise)) == (98, 4)
    # The closure: represented_by, co_agents, translations, deposits, national prizes and the
    # second volumes in round one; territories, rights sales, the translated-fiction prize in
    # round two; then one more volume of the longest series a round.
    rounds = [{t[1] for t in new} for new in _rounds(0)]
    assert rounds[:2] == [
        {
            "co_agents",
            "deposited_in",
            "eligible_for",
            "in_series",
            "represented_by",
            "translation_of",
        },
        {"eligible_for", "handled_rights", "in_series", "sells_rights_in"},
    ]
    assert rounds[2:] == [{"in_series"}] * 6


def test_publishing_series_membership_is_recursive(publishing: World) -> None:
    rule = next(r for r in publishing.rules if r.name == "series_continues")
    assert rule.body[1].relation == rule.head.relation == "in_series"  # recursive
    base = {(w, s) for w, r, s in publishing.base_triples if r == "in_series"}
    sequel = dict(relation_pairs(publishing, "sequel_of"))  # later volume -> the one before
    assert len(sequel) == len(relation_pairs(publishing, "sequel_of"))  # one predecessor each
    nxt = {v: w for w, v in sequel.items()}
    assert len(nxt) == len(sequel)  # one sequel each: series are chains
    assert not set(sequel) & {w for w, _ in base}  # an opener is no sequel
    # The oracle: walk each series from its opener; a withheld volume ends the walk (its
    # sequels have no other grounding) unless a noise fact puts a volume in a series again.
    facts = relation_pairs(publishing, "in_series")
    noise = {(w, s) for w, r, s in noise_facts(publishing) if r == "in_series"}
    lost = {(w, s) for w, r, s in publishing.exceptions if r == "in_series"}
    expected: set[tuple[str, str]] = set()
    for w, s in sorted(base | noise):
        while w in nxt:
            w = nxt[w]
            if (w, s) in lost:
                break
            expected.add((w, s))
    assert facts == base | noise | expected
    sizes: dict[str, int] = {}
    for _, s in facts - noise:
        sizes[s] = sizes.get(s, 0) + 1
    assert (len(base), len(facts), len(noise), len(lost), max(sizes.values())) == (
        36,
        122,
        3,
        5,
        9,
    )


def test_publishing_translations_differ_in_language_from_their_work(publishing: World) -> None:
    rule = next(r for r in publishing.rules if r.name == "translation")
    parallel, edition_language, work_language = rule.body
    assert parallel.variables == rule.head.variables  # a body atom parallel to the head
    assert edition_language.relation == work_language.relation == "language"
    (ineq,) = rule.inequalities
    assert {ineq.left.name, ineq.right.name} == {
        edition_language.second.name,
        work_language.second.name,
    }  # between two body variables, neither in the head
    language = dict(relation_pairs(publishing, "language"))
    editions = relation_pairs(publishing, "edition_of")
    other = {(e, w) for e, w in editions if language[e] != language[w]}
    facts = relation_pairs(publishing, "translation_of")
    noise = {(e, w) for e, r, w in noise_facts(publishing) if r == "translation_of"}
    lost = {(e, w) for e, r, w in publishing.exceptions if r == "translation_of"}
    assert facts - noise == other - lost
    assert (len(editions), len(other), len(facts), len(noise), len(lost)) == (
        747,
        375,
        372,
        7,
        10,
    )
    assert all((e, w) not in editions for e, w in noise)  # linked to the wrong work
    # translated_by credits translators on most translations and never on an original.
    credited = {e for e, _ in relation_pairs(publishing, "translated_by")}
    assert credited <= {e for e, _ in other}
    assert round(len(credited) / len(other), 2) == 0.92


def test_publishing_eligibility_has_two_bodies_one_with_a_constant_head(
    publishing: World,
) -> None:
    rules = [r for r in publishing.rules if r.head.relation == "eligible_for"]
    assert [(r.name, r.length) for r in rules] == [("translated_prize", 2), ("national_prize", 3)]
    translated, national = rules
    assert translated.head.second.name == "prize_translated"
    assert not translated.head.second.is_variable  # a constant in the head
    assert translated.body[1].second.name == "lang_english"  # and one in the body
    assert translated.body[0].relation in {r.head.relation for r in publishing.rules}  # derived
    facts = {t for t in all_triples(publishing) if t[1] == "eligible_for"}
    noise = noise_facts(publishing)
    found = _publishing_groundings(all_triples(publishing))
    by_nation, by_translation = (set(found[str(r.name)]) & facts for r in (national, translated))
    assert body_shares(facts, by_nation, by_translation, noise) == [0.0, 0.76, 0.21, 0.03]
    # The oracle by set algebra: the prizes open to an author's country; the translated
    # prize for a work with an English translation.
    country = dict(relation_pairs(publishing, "based_in"))
    open_to = relation_pairs(publishing, "open_to")
    expected = {
        (w, z)
        for w, a in relation_pairs(publishing, "written_by")
        for z, k in open_to
        if country[a] == k
    }
    language = dict(relation_pairs(publishing, "language"))
    expected |= {
        (w, "prize_translated")
        for e, w in relation_pairs(publishing, "translation_of")
        if language[e] == "lang_english"
    }
    lost = {(w, z) for w, r, z in publishing.exceptions if r == "eligible_for"}
    assert {(w, z) for w, _, z in facts - noise} == expected - lost
    tails = {z for _, _, z in facts}
    assert len(facts) == 299 and len(tails) == 10 and len(facts & noise) == 9


def test_publishing_rights_sales_have_an_existential_translation(publishing: World) -> None:
    rule = next(r for r in publishing.rules if r.name == "rights_sale")
    atoms = (rule.head, *rule.body)
    once = [v for v in rule.variables if sum(v in a.variables for a in atoms) == 1]
    assert once == ["E"]  # the translation occurs in one atom only: any one will do
    writers = relation_pairs(publishing, "written_by")
    translated = {w for _, w in relation_pairs(publishing, "translation_of")}
    expected = {
        (g, w)
        for g, a in relation_pairs(publishing, "represents")
        for w, b in writers
        if a == b and w in translated
    }
    facts = relation_pairs(publishing, "handled_rights")
    noise = {(g, w) for g, r, w in noise_facts(publishing) if r == "handled_rights"}
    lost = {(g, w) for g, r, w in publishing.exceptions if r == "handled_rights"}
    assert facts - noise == expected - lost
    assert (len(facts), len(noise), len(lost)) == (134, 5, 7)
    # One grounding per translation of the work (and per represented co-author).
    found = _publishing_groundings(all_triples(publishing))["rights_sale"]
    counts = [len(g) for t, g in found.items() if (t[0], t[2]) in facts]
    assert (len(counts), float(np.median(counts)), max(counts)) == (129, 2.0, 12)


def test_publishing_legal_deposit_excludes_e_books_by_an_inequality(publishing: World) -> None:
    rule = next(r for r in publishing.rules if r.name == "legal_deposit")
    (ineq,) = rule.inequalities
    assert (ineq.left.name, ineq.right.name, ineq.right.is_variable) == (
        "F",
        "format_ebook",
        False,
    )  # a variable against a constant
    country = dict(relation_pairs(publishing, "based_in"))
    form = dict(relation_pairs(publishing, "format"))
    issued = relation_pairs(publishing, "issued_by")
    expected = {(e, country[i]) for e, i in issued if form[e] != "format_ebook"}
    facts = relation_pairs(publishing, "deposited_in")
    noise = {(e, k) for e, r, k in noise_facts(publishing) if r == "deposited_in"}
    lost = {(e, k) for e, r, k in publishing.exceptions if r == "deposited_in"}
    assert facts - noise == expected - lost
    ebooks = {e for e, f in form.items() if f == "format_ebook"}
    assert (len(ebooks), len(facts), len(noise), len(lost)) == (80, 647, 13, 33)
    imprint = dict(issued)
    imported = {(e, k) for e, k in noise if country[imprint[e]] != k}
    assert noise - imported <= {(e, country[imprint[e]]) for e in ebooks}  # else an e-book
    assert (len(imported), len(noise - imported)) == (13, 0)


def test_publishing_sales_are_a_correlated_shortcut_of_legal_deposit(
    publishing: World, stats: WorldStatistics
) -> None:
    heads = relation_pairs(publishing, "deposited_in")
    given = relation_pairs(publishing, "sold_in", "train")
    cover, precision = len(heads & given) / len(heads), len(heads & given) / len(given)
    assert (round(cover, 2), round(precision, 2)) == (0.92, 0.57)  # the docstring, seed 0
    assert stats.shortcut_cooccurrence[("sold_in", "deposited_in")] == pytest.approx(cover)
    assert stats.shortcut_precision[("sold_in", "deposited_in")] == pytest.approx(precision)
    assert all("sold_in" not in {a.relation for a in r.body} for r in publishing.rules)
    # Pooled over three seeds: an edition is sold in its imprint's country with probability
    # .95, within four binomial sd.
    k = n = 0
    for seed in (0, 1, 2):
        w = _default(seed)
        country = dict(relation_pairs(w, "based_in"))
        sold = relation_pairs(w, "sold_in")
        issued = relation_pairs(w, "issued_by")
        k += sum((e, country[i]) in sold for e, i in issued)
        n += len(issued)
    assert abs(k / n - 0.95) < 4 * math.sqrt(0.95 * 0.05 / n), (k, n)


def test_publishing_world_has_language_country_format_and_imprint_hubs(
    publishing: World, stats: WorldStatistics
) -> None:
    train = publishing.dataset.train.to_labeled_triples()
    degree = degrees_by_kind(publishing, train)
    kinds = ("format", "language", "country", "imprint", "prize", "author", "agency")
    top = {kind: max(degree[kind].values()) for kind in kinds}
    assert top == {
        "format": 354,
        "language": 330,
        "country": 210,
        "imprint": 62,
        "prize": 57,
        "author": 39,
        "agency": 35,
    }
    first = {kind: max(sorted(degree[kind]), key=degree[kind].__getitem__) for kind in kinds}
    assert (first["format"], first["language"]) == ("format_paperback", "lang_english")
    assert (first["country"], first["prize"]) == ("country_usa", "prize_usa")
    assert float(np.median(list(degree["work"].values()))) == 7
    assert float(np.median(list(degree["edition"].values()))) == 6
    median, p90 = enclosing_quantiles(publishing, set(train))  # 2-hop enclosing subgraphs, BFS
    assert median == stats.subgraph_median == 418  # the docstring
    assert p90 == round(stats.subgraph_p90) == 1486
    assert stats.subgraph_p90 >= 1000 and stats.subgraph_p90 <= 5000


def test_publishing_size_is_bounded_below_and_the_smallest_world_covers_every_market() -> None:
    with pytest.raises(GraphDataError, match=r"size: expected an int >= 60, got 59"):
        publishing_world(59)
    w = publishing_world(60, seed=1)
    kinds = entity_kinds(w)
    assert (kinds["work"], kinds["author"], kinds["agency"], kinds["translator"]) == (
        60,
        30,
        14,
        22,
    )
    country = dict(relation_pairs(w, "based_in"))
    for kind in ("author", "agency", "imprint"):
        assert len({country[e] for e in country if w.entity_types[e] == kind}) == 14, kind
    language = dict(relation_pairs(w, "language"))
    translators = [x for x in country if w.entity_types[x] == "translator"]
    assert len({language[country[x]] for x in translators}) == 11  # into every language


def test_publishing_exception_and_noise_rates() -> None:
    # Pooled over three seeds at the default size, each exception rate within four binomial
    # sd (of the facts only that rule derives). Noise is drawn to the count (base.py step 2)
    # from the facts of the first closure, so the counts are checked nearly exactly.
    rates = {"series_continues": 0.05, "translation": 0.03, "translated_prize": 0.06}
    rates |= {"national_prize": 0.04, "rights_sale": 0.08, "legal_deposit": 0.04}
    withheld_n = {name: [0, 0] for name in rates}
    for seed in (0, 1, 2):
        w = _default(seed)
        everything, base = all_triples(w), set(w.base_triples)
        found, withheld = _publishing_groundings(everything), set(w.exceptions)
        relations = {r for _, r, _ in withheld}
        assert relations <= {
            "deposited_in",
            "eligible_for",
            "handled_rights",
            "in_series",
            "translation_of",
        }
        assert w.exception_rates == {str(r.name): rates.get(str(r.name), 0.0) for r in w.rules}
        for name in rates:
            derived = set(found[name]) - base
            withheld_n[name][0] += len(derived & withheld)
            withheld_n[name][1] += len(derived)
        closed = set(base).union(*_rounds(seed))  # the first closure, without noise
        check_noise_counts(w, closed, seed)
    for name, q in rates.items():
        k, n = withheld_n[name]
        assert abs(k / n - q) < 4 * math.sqrt(q * (1 - q) / n), (name, k, n)
