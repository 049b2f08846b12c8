r"""A book publishing world: works, editions, imprints, literary agencies, translators, prizes.

Written in session 30 as a **held-out** world for the explainer, without reading
:mod:`kg.explain`, the explainer benchmarks or their results, and never run with an explainer or
trained on while it was written: designed from the trade publishing domain (authors based in
fourteen countries, writing in their market's language and mostly in one genre, some of their
works in series; literary agencies that represent authors at home and appoint co-agents abroad
to sell translation rights; six multinational publishing groups with imprints in several
countries beside independent imprints; original editions, reissues and translations in four
formats, issued by an imprint, sold in the markets of their language and deposited with the
national library of the imprint's country; translators into eleven languages; national literary
prizes open to the authors based in their country and a prize for fiction translated into
English), not from how any explainer decides. The rules (:data:`PUBLISHING_RULES`, length = body
atoms):

* ``agency_inverse: represented_by(A,G) <- represents(G,A)``, length 1, an **inverse pair**
  (recorded in :attr:`~graphdata.worlds.World.inverse_pairs`; 1-N by count: 21 agencies
  represent 56 authors at seed 0);
* ``coagent_appointed: co_agents(G,H) <- appointed_coagent(G,H)`` and ``coagent_appointing:
  co_agents(G,H) <- appointed_coagent(H,G)``, both length 1: a **symmetric** relation
  (:attr:`~graphdata.worlds.World.symmetric`) with **two bodies**, one reading an appointment
  forwards and one backwards, neither through the head relation itself; all of its facts are
  derived (59 appointments at seed 0, 3 pairs of them reciprocal, 112 facts), and it is used in
* ``rights_territory: sells_rights_in(G,K) <- co_agents(G,H), based_in(H,K)``, length 2, the
  foreign territories an agency sells translation rights in: a chain through the derived
  symmetric relation into the country hubs (several groundings where two co-agents share a
  country; 98 facts at seed 0, 4 of them noise);
* ``series_continues: in_series(W,S) <- sequel_of(W,V), in_series(V,S)``, length 2, the
  volumes of a series: **recursive**, its second atom is its own head relation; the opener is
  a series' only recorded member, so each later volume needs the one before it derived first
  (36 series at seed 0, the longest of 9 volumes: the closure takes 8 rounds) and a withheld
  volume leaves the series without the volumes after it;
* ``translation: translation_of(E,W) <- edition_of(E,W), language(E,L), language(W,M), L !=
  M``, length 3, an edition in a language other than its work's: the first atom is **parallel
  to the head**, the other two hang off its two ends through one relation, and an
  **inequality between the two body variables** they reach tells a translation from an
  original or a reissue (375 of the 747 editions at seed 0; 372 facts, 7 of them noise);
  ``translated_by``, in no body, credits a translator on .92 of the translations and never on
  an edition in its work's language;
* ``national_prize: eligible_for(W,Z) <- written_by(W,A), based_in(A,K), open_to(Z,K)``,
  length 3, the national prizes open to a work's authors: a chain into the prize, and
* ``translated_prize: eligible_for(W,prize_translated) <- translation_of(E,W),
  language(E,lang_english)``, length 2, the translated-fiction prize: **a constant in the head**
  and one in the body, through the derived ``translation_of``: **a head with two bodies** whose
  facts are disjoint (of the 299 ``eligible_for`` facts at seed 0, .76 have the first body, .21
  the second and .03 none);
* ``rights_sale: handled_rights(G,W) <- represents(G,A), written_by(W,A), translation_of(E,W)``,
  length 3, the agency that sold a work's translation rights: a chain from the agency to the
  work with an **existential branch** off the tail, a translation ``E`` that occurs in no other
  atom (any one will do: a median of 2 groundings a fact and at most 12; 134 facts at seed 0, 5
  of them noise);
* ``legal_deposit: deposited_in(E,K) <- issued_by(E,I), based_in(I,K), format(E,F), F !=
  format_ebook``, length 3, legal deposit of every edition but an e-book with the national
  library of its imprint's country: a chain into the country hubs and a branch to a variable
  held by an **inequality with a constant** (80 of the 747 editions at seed 0 are e-books; 647
  facts, 13 of them noise);
* a **correlated shortcut**: ``sold_in`` (base: an edition is sold in its imprint's country
  with probability .95, in the other countries of its language with probability .45, an e-book
  .85, and an English edition in each other country with probability .04) is in no body; at
  seed 0 it links .92 of the ``deposited_in`` pairs and .57 of its training pairs are
  ``deposited_in`` pairs (:attr:`~graphdata.worlds.World.shortcuts`);
* rules of length 1 (three), 2 (three) and 3 (four); 1-1 (``open_to``, ``sequel_of``), 1-N
  (``handled_rights``, ``represents``), N-1 (``based_in``, ``deposited_in``, ``edition_of``,
  ``eligible_for``, ``format``, ``genre``, ``imprint_of``, ``in_series``, ``issued_by``,
  ``language``, ``represented_by``, ``sold_in``, ``translated_by``, ``translation_of``,
  ``written_by``) and N-N (``appointed_coagent``, ``co_agents``, ``sells_rights_in``) relations
  (by count at seed 0);
* **exceptions**: 5 % of ``series_continues``'s heads (a sequel published as a standalone,
  outside the numbered series), 3 % of ``translation``'s (an author's self-translation
  catalogued as a second original), 6 % of ``translated_prize``'s (an English translation
  published only outside the prize's territory), 4 % of ``national_prize``'s (a work outside
  the prize's rules: a reissue of an older work, self-published), 8 % of ``rights_sale``'s
  (world rights held by the original publisher, whose rights department sold the
  translations) and 4 % of ``legal_deposit``'s (an edition never deposited) are withheld; a
  withheld ``translation_of`` fact also leaves out the heads only it grounds. ``co_agents``,
  ``represented_by`` and ``sells_rights_in`` have no exceptions (the first two stay symmetric
  and inverse); **noise**: 3 % of the ``in_series`` (a work catalogued in a series it does not
  belong to), 2 % of the ``translation_of`` (a translation linked to the wrong work), 3 % of
  the ``eligible_for`` (a work eligible under a prize's special rules), 4 % of the
  ``handled_rights`` (rights sold before the translation appeared, or by a former agency), 4 %
  of the ``sells_rights_in`` (a territory an agency sells into at book fairs, without a
  co-agent) and 2 % of the ``deposited_in`` facts (an imported edition deposited by its
  distributor, or an e-book deposited voluntarily; all 13 at seed 0 are imports) have no
  grounding; a noise ``in_series`` or ``translation_of`` fact feeds the rules above like any
  other.

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`):
1,343 entities (747 editions, 300 works, 75 authors, 45 imprints, 37 translators, 36 series, 30
agencies, 24 publishing groups (6 multinational), 14 countries, 11 languages, 10 genres, 10
prizes, 4 formats), 22 relations; 7,284 train, 177 valid and 179 test triples; the valid+test
targets per rule of their shortest grounding are ``legal_deposit`` 128, ``translation`` 73,
``national_prize`` 46, ``rights_sale`` 22, ``rights_territory`` 18, ``series_continues`` 15,
``agency_inverse`` 12, ``coagent_appointing`` 12, ``coagent_appointed`` 10, ``translated_prize``
10 (length 1: 34, 2: 43, 3: 269), and 10 noise facts; .06 of the targets have more than one
grounding; 64 exceptions (33 ``deposited_in``, 10 ``translation_of``, 9 ``eligible_for``, 7
``handled_rights``, 5 ``in_series``). **Hubs**: ``format_paperback`` has 354 distinct training
neighbours, English 330, the USA 210, the busiest imprint 62, the national prize of the USA 57,
the best-connected author 39 and agency 35 (a work a median of 7, an edition 6); the
2-hop enclosing subgraphs of the 173 test targets hold a median of 418 training triples (p90
1,486).

**Base facts** (:func:`publishing_world`), with :math:`N` = ``size`` works: each country of
``_COUNTRIES`` has the ``language`` of its market; each national prize is ``open_to`` its country
and of its ``language``, ``prize_translated`` of English. Each multinational group of ``_GROUPS``
is ``based_in`` its home country with an imprint in each country of its presence; then
:math:`\max(14, \lfloor N/14 \rfloor)` independent imprints, one in each country first and the
rest by weight, each of an independent group of its country (a new one, or with probability .35
one already there); an imprint is an ``imprint_of`` its group and ``based_in`` its country, of
log-normal weight. :math:`\max(30, \lfloor N/4 \rfloor)` authors, one ``based_in`` each country
first and the rest by weight, write in their country's language (in English with probability
.07 elsewhere), with a main genre by weight and a log-normal popularity.
:math:`\max(14, \lfloor N/10 \rfloor)` agencies, one ``based_in`` each country first and the rest
by weight, of log-normal size: an agency of the author's country (by size) ``represents`` an
author with probability .9 in the English-language markets, .7 elsewhere; an agency in an
English-language market ``appointed_coagent`` :math:`2 + \text{Poisson}(2)` agencies abroad,
another :math:`\text{Poisson}(1.2)`, by size, at most one in a country.
:math:`\max(22, \lfloor N/8 \rfloor)` translators, one into each language first and the rest by
the language's market weight (``_LANGUAGES``), ``based_in`` a country of that language.
:math:`N` works, one ``written_by`` each author first and the rest by log-normal productivity
(with probability .05 also by another author of the same country), in the first author's
``language``, of its main ``genre`` with probability .85 (else one by weight); an author's works
in its main genre form runs in order, each with the genre's chance (``_GENRES``) a series of
:math:`2 + \text{Poisson}(3)` works (as many as are left), whose opener is ``in_series`` and each
later volume a ``sequel_of`` the one before. Editions, each an ``edition_of`` its work, in a
``language`` and of a ``format`` by kind (``_FORMATS``): the original, in the work's language,
``issued_by`` an imprint of the author's country (with probability .85 when the country speaks
the language, else of a country that does, by weight), the author's imprint there with
probability .7 once it has one; :math:`\min(3, \text{Poisson}(.25 p))` reissues in that language,
with :math:`p` the work's popularity (the author's times a log-normal factor of mean 1), by the
same imprint with probability .7; :math:`\min(6, \text{Poisson}(1.6\, p\, s\, g))` translations
into distinct languages by market weight, with :math:`s` and :math:`g` how readily the work's
language and genre are translated, each issued by an imprint of a country of its language and
``translated_by`` a translator into it (by experience) with probability .9; every edition
``sold_in`` as above.

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`PUBLISHING_RULES`.
"""

from __future__ import annotations

import numpy as np

from graphdata.typing import LabeledTriple
from graphdata.worlds.base import (
    World,
    build_world,
    check_world_arguments,
    entity_labels,
    weighted_pick,
)

__all__ = ["PUBLISHING_RULES", "publishing_world"]

#: The planted rules: authors and the literary agencies that represent them (an inverse pair),
#: co-agents abroad (a symmetric relation from either direction of an appointment: two bodies
#: of length 1) and the territories an agency sells rights in through them, the volumes of a
#: series (recursive through the derived series membership), translations (an edition in a
#: language other than its work's: an inequality between two body variables), prize
#: eligibility (a national prize from the author's country; the translated-fiction prize, a
#: constant in the head, from an English translation), the agency that sold a work's
#: translation rights (an existential translation) and legal deposit of every edition but an
#: e-book (an inequality with a constant).
PUBLISHING_RULES = """\
agency_inverse: represented_by(A,G) <- represents(G,A)
coagent_appointed: co_agents(G,H) <- appointed_coagent(G,H)
coagent_appointing: co_agents(G,H) <- appointed_coagent(H,G)
series_continues: in_series(W,S) <- sequel_of(W,V), in_series(V,S)
rights_territory: sells_rights_in(G,K) <- co_agents(G,H), based_in(H,K)
translated_prize: eligible_for(W,prize_translated) <- translation_of(E,W), language(E,lang_english)
translation: translation_of(E,W) <- edition_of(E,W), language(E,L), language(W,M), L != M
national_prize: eligible_for(W,Z) <- written_by(W,A), based_in(A,K), open_to(Z,K)
rights_sale: handled_rights(G,W) <- represents(G,A), written_by(W,A), translation_of(E,W)
legal_deposit: deposited_in(E,K) <- issued_by(E,I), based_in(I,K), format(E,F), F != format_ebook
"""

#: The countries (entity ``country_<name>``): the language of its book market (entity
#: ``lang_<name>``), its weight among authors, agencies and independent imprints, and whether
#: it has a national literary prize (entity ``prize_<name>``, open to authors based there).
_COUNTRIES = (
    ("usa", "english", 0.20, True),
    ("uk", "english", 0.13, True),
    ("canada", "english", 0.04, True),
    ("france", "french", 0.10, True),
    ("germany", "german", 0.10, True),
    ("spain", "spanish", 0.07, True),
    ("mexico", "spanish", 0.04, False),
    ("italy", "italian", 0.06, True),
    ("japan", "japanese", 0.07, True),
    ("brazil", "portuguese", 0.05, False),
    ("sweden", "swedish", 0.04, True),
    ("netherlands", "dutch", 0.04, False),
    ("poland", "polish", 0.03, False),
    ("china", "chinese", 0.03, False),
)
#: The languages: the weight of their publishers among buyers of translation rights (English
#: is the most sought market for rights sold from another language), and how readily works
#: written in them are translated.
_LANGUAGES = (
    ("english", 5.0, 1.2),
    ("german", 1.0, 0.9),
    ("french", 0.9, 1.1),
    ("spanish", 0.8, 1.0),
    ("italian", 0.5, 0.9),
    ("japanese", 0.6, 1.1),
    ("portuguese", 0.4, 0.8),
    ("swedish", 0.3, 1.0),
    ("dutch", 0.45, 0.7),
    ("polish", 0.35, 0.7),
    ("chinese", 0.45, 0.8),
)
#: The genres (entity ``genre_<name>``): weight among authors' main genres, the chance that a
#: run of an author's works in it is a series, and how readily it is translated.
_GENRES = (
    ("literary", 0.22, 0.1, 1.1),
    ("crime", 0.16, 0.7, 1.3),
    ("thriller", 0.10, 0.55, 1.2),
    ("fantasy", 0.09, 0.8, 1.2),
    ("scifi", 0.06, 0.6, 1.0),
    ("romance", 0.10, 0.6, 0.9),
    ("historical", 0.08, 0.35, 0.9),
    ("children", 0.07, 0.7, 1.0),
    ("nonfiction", 0.10, 0.0, 0.7),
    ("poetry", 0.02, 0.0, 0.5),
)
#: The multinational publishing groups (entity ``group_<name>``): home country and the
#: countries where each has an imprint.
_GROUPS = (
    ("prh", "usa", ("usa", "uk", "canada", "germany", "spain", "mexico")),
    ("hachette", "france", ("france", "uk", "usa", "spain")),
    ("harpercollins", "usa", ("usa", "uk", "canada", "italy", "brazil")),
    ("macmillan", "germany", ("usa", "uk", "germany")),
    ("bonnier", "sweden", ("sweden", "germany", "uk")),
    ("planeta", "spain", ("spain", "mexico", "france")),
)
#: The edition formats (entity ``format_<name>``) with their weights for an original edition,
#: a reissue in the original language and a translation.
_FORMATS = (
    ("hardcover", 0.5, 0.0, 0.3),
    ("paperback", 0.42, 0.45, 0.55),
    ("ebook", 0.08, 0.35, 0.1),
    ("audio", 0.0, 0.2, 0.05),
)
#: Withheld heads: a sequel published as a standalone outside the numbered series, an author's
#: self-translation catalogued as a second original, an English translation published outside
#: the translated-fiction prize's territory, a work outside a national prize's rules (a reissue,
#: self-published), world rights held by the original publisher (whose rights department sold
#: the translations), and an edition its publisher never deposited.
_EXCEPTION_RATES = (
    ("series_continues", 0.05),
    ("translation", 0.03),
    ("translated_prize", 0.06),
    ("national_prize", 0.04),
    ("rights_sale", 0.08),
    ("legal_deposit", 0.04),
)
#: Heads without grounding: a work catalogued in a series it does not belong to, a translation
#: linked to the wrong work, a work eligible by a prize's special rules, rights sold before the
#: translation appeared (or by a former agency), a territory an agency sells into at book fairs
#: without a co-agent, and an imported edition deposited by its distributor (or an e-book
#: deposited voluntarily).
_NOISE_RATES = (
    ("in_series", 0.03),
    ("translation_of", 0.02),
    ("eligible_for", 0.03),
    ("handled_rights", 0.04),
    ("sells_rights_in", 0.04),
    ("deposited_in", 0.02),
)


def _pick(rng: np.random.Generator, weight: np.ndarray) -> int:
    """One index drawn with probability proportional to ``weight``."""
    return int(rng.choice(len(weight), p=weight / weight.sum()))


def publishing_world(
    size: int = 300,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the book publishing world (module docstring) and its ground truth.

    Args:
        size: The number of works :math:`N \ge 60`. Default 300 (1,343 entities, 22 relations
            and 7,640 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"publishing"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = publishing_world(80, seed=0)
        >>> w.exception_rates["rights_sale"], w.shortcuts
        (0.08, (('sold_in', 'deposited_in'),))
        >>> sorted(r.length for r in w.rules if r.head.relation == "eligible_for")
        [2, 3]
        >>> w.symmetric, w.inverse_pairs
        (('co_agents',), (('represents', 'represented_by'),))
    """
    check_world_arguments(size, 60, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    n_country, n_language, n_genre = len(_COUNTRIES), len(_LANGUAGES), len(_GENRES)
    n_author, n_agency = max(30, n // 4), max(n_country, n // 10)
    n_translator, n_indie = max(2 * n_language, n // 8), max(n_country, n // 14)
    countries = [f"country_{name}" for name, _, _, _ in _COUNTRIES]
    languages = [f"lang_{name}" for name, _, _ in _LANGUAGES]
    genres = [f"genre_{name}" for name, _, _, _ in _GENRES]
    formats = [f"format_{name}" for name, _, _, _ in _FORMATS]
    authors, agencies = entity_labels("author", n_author), entity_labels("agency", n_agency)
    translators, works = entity_labels("translator", n_translator), entity_labels("work", n)
    language_index = {name: i for i, (name, _, _) in enumerate(_LANGUAGES)}
    country_index = {name: k for k, (name, _, _, _) in enumerate(_COUNTRIES)}
    country_language = [language_index[lang] for _, lang, _, _ in _COUNTRIES]
    country_weight = np.array([w for _, _, w, _ in _COUNTRIES])
    english = language_index["english"]
    market = np.array([m for _, m, _ in _LANGUAGES])
    source = np.array([s for _, _, s in _LANGUAGES])
    genre_weight = np.array([w for _, w, _, _ in _GENRES])
    series_chance = [s for _, _, s, _ in _GENRES]
    genre_translated = [t for _, _, _, t in _GENRES]
    format_weight = {
        kind: np.array([row[i + 1] for row in _FORMATS])
        for i, kind in enumerate(("original", "reissue", "translation"))
    }
    speakers = {
        lang: [k for k in range(n_country) if country_language[k] == lang]
        for lang in range(n_language)
    }
    facts: list[LabeledTriple] = []

    # Countries speak their market's language; a national prize is open to the authors based
    # in its country and awards works in its language; the translated-fiction prize awards
    # English translations.
    facts.extend(
        (countries[k], "language", languages[country_language[k]]) for k in range(n_country)
    )
    prizes = [f"prize_{name}" for name, _, _, prize in _COUNTRIES if prize]
    for name, tongue, _, prize in _COUNTRIES:
        if prize:
            facts.append((f"prize_{name}", "open_to", f"country_{name}"))
            facts.append((f"prize_{name}", "language", f"lang_{tongue}"))
    facts.append(("prize_translated", "language", "lang_english"))
    prizes.append("prize_translated")

    # Publishing groups and imprints: each multinational group is based_in its home country and
    # has an imprint in each country of its presence; then max(14, N/14) independent imprints,
    # one in each country first and the rest by weight, each of an independent group of its
    # country (a new one, or with probability .35 one already there). Each imprint is an
    # imprint_of its group and based_in its country, of log-normal weight (larger in the
    # multinational groups).
    group_labels = [f"group_{name}" for name, _, _ in _GROUPS]
    facts.extend(
        (group_labels[g], "based_in", countries[country_index[home]])
        for g, (_, home, _) in enumerate(_GROUPS)
    )
    imprint_country: list[int] = []
    imprint_group: list[int] = []
    imprint_weight: list[float] = []
    for g, (_, _, presence) in enumerate(_GROUPS):
        for name in presence:
            imprint_country.append(country_index[name])
            imprint_group.append(g)
            imprint_weight.append(float(rng.lognormal(0.6, 0.6)))
    indie_country: list[int] = []
    for j in range(n_indie):
        k = j if j < n_country else _pick(rng, country_weight)
        own = [i for i, c in enumerate(indie_country) if c == k]
        if own and rng.random() < 0.35:
            g = own[int(rng.integers(len(own)))]
        else:
            g = len(indie_country)
            indie_country.append(k)
        imprint_country.append(k)
        imprint_group.append(len(_GROUPS) + g)
        imprint_weight.append(float(rng.lognormal(0.0, 0.8)))
    indie_groups = entity_labels("group", len(indie_country))
    facts.extend((indie_groups[g], "based_in", countries[k]) for g, k in enumerate(indie_country))
    imprints = entity_labels("imprint", len(imprint_country))
    every_group = group_labels + indie_groups
    for i, imprint in enumerate(imprints):
        facts.append((imprint, "imprint_of", every_group[imprint_group[i]]))
        facts.append((imprint, "based_in", countries[imprint_country[i]]))
    weight_of_imprint = np.array(imprint_weight)
    imprints_in = {
        k: [i for i in range(len(imprints)) if imprint_country[i] == k] for k in range(n_country)
    }

    # Authors: max(30, N/4), one based_in each country first, the rest by weight; each writes
    # in its country's language (in English with probability .07 elsewhere), has a main genre
    # by weight and a log-normal popularity.
    author_country = (
        list(range(n_country))
        + rng.choice(
            n_country, size=n_author - n_country, p=country_weight / country_weight.sum()
        ).tolist()
    )
    author_language: list[int] = []
    for k in author_country:
        lang = country_language[k]
        author_language.append(english if lang != english and rng.random() < 0.07 else lang)
    author_genre = rng.choice(n_genre, size=n_author, p=genre_weight / genre_weight.sum()).tolist()
    popularity = rng.lognormal(-0.5, 1.0, n_author)
    facts.extend((authors[a], "based_in", countries[k]) for a, k in enumerate(author_country))

    # Literary agencies: max(14, N/10), one based_in each country first, the rest by weight, of
    # log-normal size. An author is represented by an agency of its country, by size, with
    # probability .9 in the English-language markets and .7 elsewhere. Co-agents: an agency in
    # an English-language market appoints 2 + Poisson(2) agencies abroad, another Poisson(1.2),
    # by size, at most one in a country (fewer when no country is left).
    agency_country = (
        list(range(n_country))
        + rng.choice(
            n_country, size=n_agency - n_country, p=country_weight / country_weight.sum()
        ).tolist()
    )
    agency_size = rng.lognormal(0.0, 0.9, n_agency)
    facts.extend((agencies[g], "based_in", countries[k]) for g, k in enumerate(agency_country))
    agencies_in = {
        k: [g for g in range(n_agency) if agency_country[g] == k] for k in range(n_country)
    }
    for a, k in enumerate(author_country):
        chance = 0.9 if country_language[k] == english else 0.7
        if rng.random() < chance:
            g = weighted_pick(rng, agencies_in[k], agency_size)
            facts.append((agencies[g], "represents", authors[a]))
    for g in range(n_agency):
        anglophone = country_language[agency_country[g]] == english
        wanted = 2 + int(rng.poisson(2.0)) if anglophone else int(rng.poisson(1.2))
        covered = {agency_country[g]}
        for _ in range(wanted):
            pool = [h for h in range(n_agency) if agency_country[h] not in covered]
            if not pool:
                break
            h = weighted_pick(rng, pool, agency_size)
            covered.add(agency_country[h])
            facts.append((agencies[g], "appointed_coagent", agencies[h]))

    # Translators: max(22, N/8), one into each language first, the rest by the language's
    # market weight; based_in a country of that language by weight, of log-normal experience.
    translator_language = (
        list(range(n_language))
        + rng.choice(n_language, size=n_translator - n_language, p=market / market.sum()).tolist()
    )
    experience = rng.lognormal(0.0, 1.0, n_translator)
    for x, lang in enumerate(translator_language):
        home = speakers[lang]
        k = home[_pick(rng, country_weight[home])]
        facts.append((translators[x], "based_in", countries[k]))
    translators_into = {
        lang: [x for x in range(n_translator) if translator_language[x] == lang]
        for lang in range(n_language)
    }

    # Works: N, one written_by each author first, the rest by log-normal productivity;
    # co-written with probability .05 by another author of the same country; in the first
    # author's language, of its main genre with probability .85 (else one by weight), with the
    # author's popularity times a log-normal factor of mean 1.
    productivity = rng.lognormal(0.0, 1.2, n_author)
    work_author = (
        list(range(n_author))
        + rng.choice(n_author, size=n - n_author, p=productivity / productivity.sum()).tolist()
    )
    authors_in = {
        k: [a for a in range(n_author) if author_country[a] == k] for k in range(n_country)
    }
    work_language, work_genre, work_popularity = [], [], []
    for w, a in enumerate(work_author):
        facts.append((works[w], "written_by", authors[a]))
        if rng.random() < 0.05:
            peers = [b for b in authors_in[author_country[a]] if b != a]
            if peers:
                facts.append(
                    (works[w], "written_by", authors[peers[int(rng.integers(len(peers)))]])
                )
        work_language.append(author_language[a])
        genre = author_genre[a] if rng.random() < 0.85 else _pick(rng, genre_weight)
        work_genre.append(genre)
        work_popularity.append(float(popularity[a] * rng.lognormal(-0.18, 0.6)))
        facts.append((works[w], "language", languages[author_language[a]]))
        facts.append((works[w], "genre", genres[genre]))

    # Series: an author's works in its main genre, in order, form runs; with the genre's chance
    # a run is a series of 2 + Poisson(3) works (as many as are left), else a standalone work.
    # The opener is recorded in_series; each later volume is a sequel_of the one before.
    series_count = 0
    series_facts: list[tuple[int, int]] = []
    written: dict[int, list[int]] = {}
    for w, a in enumerate(work_author):
        if work_genre[w] == author_genre[a]:
            written.setdefault(a, []).append(w)
    for a in range(n_author):
        own = written.get(a, [])
        chance = series_chance[author_genre[a]]
        i = 0
        while i < len(own):
            length = min(2 + int(rng.poisson(3.0)), len(own) - i) if rng.random() < chance else 1
            if length >= 2:
                run = own[i : i + length]
                series_facts.append((run[0], series_count))
                facts.extend((works[v], "sequel_of", works[u]) for u, v in zip(run, run[1:]))
                series_count += 1
            i += length
    series = entity_labels("series", max(series_count, 1))
    facts.extend((works[w], "in_series", series[s]) for w, s in series_facts)

    # Editions. The original, in the work's language, issued in the author's country (with
    # probability .85 when it speaks the language, else in a country that does, by weight) by
    # the author's imprint there (kept with probability .7) or one by weight; min(3,
    # Poisson(.25 x popularity)) reissues in that language, by the same imprint with
    # probability .7 (else one of a country of the language); min(6, Poisson(1.6 x popularity
    # x source x genre)) translations into distinct languages by market weight, each issued by
    # an imprint of a country of that language and translated_by a translator into it (by
    # experience) with probability .9. An edition is of a format by kind, sold_in its
    # imprint's country with probability .95, in each other country of its language with
    # probability .45 (an e-book .85), and, in English, in each other country with probability
    # .04.
    author_imprint: dict[tuple[int, int], int] = {}
    # Each edition as (work, language, imprint, format, translator or None).
    edition_rows: list[tuple[int, int, int, int, int | None]] = []

    def imprint_for(k: int) -> int:
        pool = imprints_in[k]
        return pool[_pick(rng, weight_of_imprint[pool])]

    def country_for(lang: int) -> int:
        pool = speakers[lang]
        return pool[_pick(rng, country_weight[pool])]

    for w in range(n):
        a, lang = work_author[w], work_language[w]
        home = author_country[a]
        k = home if country_language[home] == lang and rng.random() < 0.85 else country_for(lang)
        if (a, k) in author_imprint and rng.random() < 0.7:
            i = author_imprint[(a, k)]
        else:
            i = imprint_for(k)
            author_imprint[(a, k)] = i
        edition_rows.append((w, lang, i, _pick(rng, format_weight["original"]), None))
        for _ in range(min(3, int(rng.poisson(0.25 * work_popularity[w])))):
            j = i if rng.random() < 0.7 else imprint_for(country_for(lang))
            edition_rows.append((w, lang, j, _pick(rng, format_weight["reissue"]), None))
        rate = 1.6 * work_popularity[w] * source[lang] * genre_translated[work_genre[w]]
        count = min(6, int(rng.poisson(rate)))
        others = [m for m in range(n_language) if m != lang]
        chosen = (
            rng.choice(
                others, size=count, replace=False, p=market[others] / market[others].sum()
            ).tolist()
            if count
            else []
        )
        for m in chosen:
            j = imprint_for(country_for(int(m)))
            pool = translators_into[int(m)]
            credit = weighted_pick(rng, pool, experience) if rng.random() < 0.9 else None
            edition_rows.append((w, int(m), j, _pick(rng, format_weight["translation"]), credit))
    editions = entity_labels("edition", len(edition_rows))
    for e, (w, lang, i, f, credit) in enumerate(edition_rows):
        facts.append((editions[e], "edition_of", works[w]))
        facts.append((editions[e], "language", languages[lang]))
        facts.append((editions[e], "issued_by", imprints[i]))
        facts.append((editions[e], "format", formats[f]))
        if credit is not None:
            facts.append((editions[e], "translated_by", translators[credit]))
        k = imprint_country[i]
        sold = {k} if rng.random() < 0.95 else set()
        export = 0.85 if formats[f] == "format_ebook" else 0.45
        sold |= {c for c in speakers[lang] if c != k and rng.random() < export}
        if lang == english:
            sold |= {
                c
                for c in range(n_country)
                if country_language[c] != english and rng.random() < 0.04
            }
        facts.extend((editions[e], "sold_in", countries[c]) for c in sorted(sold))

    kind_types = {
        **dict.fromkeys(countries, "country"),
        **dict.fromkeys(languages, "language"),
        **dict.fromkeys(genres, "genre"),
        **dict.fromkeys(formats, "format"),
        **dict.fromkeys(prizes, "prize"),
        **dict.fromkeys(group_labels + indie_groups, "publishing_group"),
        **dict.fromkeys(imprints, "imprint"),
        **dict.fromkeys(authors, "author"),
        **dict.fromkeys(agencies, "agency"),
        **dict.fromkeys(translators, "translator"),
        **dict.fromkeys(works, "work"),
        **dict.fromkeys(editions, "edition"),
        **dict.fromkeys(series, "series"),
    }
    return build_world(
        "publishing",
        facts,
        PUBLISHING_RULES,
        seed=seed,
        size=n,
        rng=rng,
        entity_types=kind_types,
        exception_rates=dict(_EXCEPTION_RATES),
        noise_rates=dict(_NOISE_RATES),
        symmetric=("co_agents",),
        inverse_pairs=(("represents", "represented_by"),),
        shortcuts=(("sold_in", "deposited_in"),),
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
    )
