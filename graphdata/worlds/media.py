r"""A media world: people, films, albums, bands, studios, genres, cities, countries, languages.

Written as a **held-out** world for issue 18, without reading :mod:`kg.explain`, held out from
session 22's explainer work: designed from what the film and music part of Freebase (the
domain of FB15k-237) looks like, people born in cities of countries, films made by studios and
directors with casts, shooting locations and genres, albums released by solo artists and bands,
not from how any explainer decides. The rules (:data:`MEDIA_RULES`, length = body atoms):

* ``directing_inverse: directed_by(F,P) <- directed(P,F)``, length 1, an **inverse pair**
  (``directed`` 1-N, ``directed_by`` N-1; recorded in
  :attr:`~graphdata.worlds.World.inverse_pairs`);
* ``solo_credit: performs_on(P,A) <- released(P,A)``, length 1, and
  ``band_credit: performs_on(P,A) <- member_of(P,B), released(B,A)``, length 2: **a head with
  two bodies** of different lengths that ground **mostly disjoint** facts (a solo album, or an
  album of the artist's band; only band albums co-credited to a member have both: at seed 0
  .02 of the ``performs_on`` facts);
* ``co_star: co_star(P,Q) <- acted_in(P,F), acted_in(Q,F), P != Q``, length 2, a **symmetric**
  relation derived from a **star with a shared variable and an inequality** (N-N, the largest
  head: casts attach preferentially, so stars have co-stars by the dozen);
* ``birth_nationality: nationality(P,C) <- born_in(P,Y), located_in(Y,C)``, length 2, a chain
  through a city into a **country hub**;
* ``band_nationality: nationality(B,C) <- member_of(P,B), nationality(P,C)``, length 2, through
  the derived ``nationality`` (rule chaining; a band has its members' nationalities), the second
  body of ``nationality``, on bands only (no overlap with the first);
* ``production_country: film_country(F,C) <- produced_by(F,S), located_in(S,Y),
  located_in(Y,C)``, length 3, a chain that uses one relation twice (studio in a city, city in
  a country), and ``director_country: film_country(F,C) <- directed(D,F), born_in(D,Y),
  located_in(Y,C)``, length 3: two bodies of one head that **mostly agree** (redundant
  evidence; a director mostly works for a studio of their own country: at seed 0 .65 of the
  ``film_country`` facts have both, .11 only the director's, the independent films and those
  of directors working abroad);
* ``film_language: film_language(F,L) <- film_country(F,C), official_language(C,L)``, length 2,
  through the derived ``film_country`` into a **language hub** (English is the official
  language of five countries, one of them bilingual);
* a **correlated shortcut**: ``shot_in`` (where a film was shot) is in no body of
  ``film_country``, but a film is mostly shot in its home country: at seed 0 ``shot_in`` links
  .78 of the ``film_country`` pairs in train and .70 of its training pairs are
  ``film_country`` facts (recorded in :attr:`~graphdata.worlds.World.shortcuts`);
* rules of length 1 (two), 2 (five) and 3 (two); 1-N (``directed``, ``released``), N-1
  (``born_in``, ``located_in``, ``produced_by``, ``directed_by``, ``nationality``, ...) and N-N
  (``acted_in``, ``co_star``, ``performs_on``) relations;
* **exceptions**: 10 % of ``birth_nationality``'s heads are withheld (people born abroad to
  foreign parents), 30 % of the ``film_country`` facts that only ``director_country`` derives
  (a director's film abroad is not a co-production); **noise**: 5 % of the ``film_language``
  facts (a film in a language not of its country) and 4 % of the ``nationality`` facts (second
  nationalities) have no grounding.

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`): 773
entities, 16 relations; 4,373 train, 246 valid and 251 test triples; the valid+test targets
per rule of their shortest grounding (``production_country`` first on a tie) are
``co_star`` 262, ``birth_nationality`` 53, ``directing_inverse`` 48, ``production_country`` 40,
``film_language`` 36, ``solo_credit`` 20, ``band_credit`` 16, ``director_country`` 8,
``band_nationality`` 5 (length 1: 68, 2: 372, 3: 48), and 9 noise facts; .15 of the targets
have more than one grounding. **Hubs**: the largest country has 260 distinct training
neighbours, English 146, the busiest actor 188; the 2-hop enclosing subgraphs of the test
targets hold a median of 1,480 training triples (p90 2,346).

**Base facts** (:func:`media_world`), with :math:`N` = ``size`` people, created in order:

* sixteen countries with weights .34, .11, .08, .07, .06, .05, .05, .05, .04, .04, .03, .03,
  .02, .01, .01, .01 and ten languages (``official_language``: English for countries 0, 1, 8,
  11 and 15, country 8 also French, Spanish for 6, 10 and 14, one language each otherwise);
  :math:`\max(16, \lfloor N/6 \rfloor)` cities ``located_in`` a country, one per country and the
  rest by weight;
* the people, each ``born_in`` a uniform city of a country drawn by weight, an actor with
  probability .65, a director with .12 and a musician with .28 (independently; an actor if
  none; the first five people cover every role);
* :math:`\max(4, \lfloor N/15 \rfloor)` studios ``located_in`` a uniform city of a country
  drawn with probability proportional to its weight to the power 1.5 (the big markets);
* :math:`\max(10, \lfloor 3N/4 \rfloor)` films. With probability .75 a film is
  ``produced_by`` a studio drawn with probability proportional to its films plus one, its home
  is the studio's country and its director (``directed``) is a director born there with
  probability .7 (when there is one), else any; otherwise it is independent, with any director,
  and its home is the director's birth country. Directors and actors are drawn with probability
  proportional to their films plus one. A director who acts is in the cast with probability .1;
  :math:`1 + \text{Poisson}(2)` actor draws, each born in the film's home country with
  probability .75 (repeats dropped). One film ``genre`` of ten by weight, and with probability
  .35 a second draw (repeats dropped). ``shot_in`` the home country with probability .8, else
  a country by weight, and a second country by weight with probability .15;
* :math:`\max(2, \lfloor N/18 \rfloor)` bands of :math:`2 + \text{Poisson}(1.2)` musicians
  (``member_of``), each born in the band's country (that of a uniform musician) with
  probability .85, drawn with probability proportional to :math:`1 / (1 + 5b)`, :math:`b` the
  bands they are already in;
* :math:`\max(6, \lfloor N/4 \rfloor)` albums, ``released`` by a band with probability .4, else
  by a musician, the artist drawn with probability proportional to its albums plus one; a band
  album is also released by one of its members with probability .1; one music ``genre`` of six,
  the artist's own with probability .8, and with probability .2 a second uniform draw.

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`MEDIA_RULES`.
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

__all__ = ["MEDIA_RULES", "media_world"]

#: The planted rules: an inverse, a symmetric star, a head with two disjoint bodies of lengths 1
#: and 2, a head with two agreeing length-3 bodies, chains into country and language hubs.
MEDIA_RULES = """\
directing_inverse: directed_by(F,P) <- directed(P,F)
solo_credit: performs_on(P,A) <- released(P,A)
band_credit: performs_on(P,A) <- member_of(P,B), released(B,A)
co_star: co_star(P,Q) <- acted_in(P,F), acted_in(Q,F), P != Q
birth_nationality: nationality(P,C) <- born_in(P,Y), located_in(Y,C)
band_nationality: nationality(B,C) <- member_of(P,B), nationality(P,C)
production_country: film_country(F,C) <- produced_by(F,S), located_in(S,Y), located_in(Y,C)
director_country: film_country(F,C) <- directed(D,F), born_in(D,Y), located_in(Y,C)
film_language: film_language(F,L) <- film_country(F,C), official_language(C,L)
"""

_COUNTRIES = (
    0.34, 0.11, 0.08, 0.07, 0.06, 0.05, 0.05, 0.05, 0.04, 0.04, 0.03, 0.03, 0.02, 0.01, 0.01, 0.01
)  # fmt: skip
#: The official languages of each country, by language index; country 8 has two.
_OFFICIAL = (
    (0,), (0,), (1,), (2,), (3,), (4,), (5,), (6,), (0, 1), (7,), (5,), (0,), (8,), (9,), (5,),
    (0,),
)  # fmt: skip
_LANGUAGES = 10
_FILM_GENRES = (0.26, 0.18, 0.12, 0.1, 0.08, 0.07, 0.06, 0.05, 0.04, 0.04)
_MUSIC_GENRES = (0.3, 0.22, 0.16, 0.14, 0.1, 0.08)


def media_world(
    size: int = 320,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the media world (module docstring) and its ground truth.

    Args:
        size: The number of people :math:`N \ge 20`. Default 320 (773 entities, 16 relations
            and about 4,900 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"media"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = media_world(60, seed=0)
        >>> w.exception_rates["director_country"], w.noise_rates["film_language"]
        (0.3, 0.05)
        >>> sorted(r.name for r in w.rules if r.head.relation == "performs_on")
        ['band_credit', 'solo_credit']
    """
    check_world_arguments(size, 20, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    weights = np.asarray(_COUNTRIES)
    n_country = len(_COUNTRIES)
    n_city, n_studio = max(n_country, n // 6), max(4, n // 15)
    n_film, n_band, n_album = max(10, 3 * n // 4), max(2, n // 18), max(6, n // 4)
    people, films = entity_labels("person", n), entity_labels("film", n_film)
    albums = entity_labels("album", n_album)
    bands, studios, cities = (
        entity_labels("band", n_band),
        entity_labels("studio", n_studio),
        entity_labels("city", n_city),
    )
    countries = entity_labels("country", n_country)
    languages = entity_labels("language", _LANGUAGES)
    genres = entity_labels("genre", len(_FILM_GENRES) + len(_MUSIC_GENRES))
    facts: list[LabeledTriple] = []
    for c, langs in enumerate(_OFFICIAL):
        facts.extend((countries[c], "official_language", languages[lang]) for lang in langs)
    # Cities: one per country first (every country has one), the rest by weight.
    city_country = [
        c if c < n_country else int(rng.choice(n_country, p=weights)) for c in range(n_city)
    ]
    cities_of: list[list[int]] = [[] for _ in range(n_country)]
    for y, c in enumerate(city_country):
        cities_of[c].append(y)
        facts.append((cities[y], "located_in", countries[c]))

    def city_in(country: int) -> int:
        pool = cities_of[country]
        return pool[int(rng.integers(len(pool)))]

    # People: a birth city, and roles (actor, director, musician), at least one each.
    birth = [-1] * n
    roles = rng.random((n, 3)) < np.array([0.65, 0.12, 0.28])  # actor, director, musician
    for i, role in enumerate((0, 1, 2, 1, 2)):  # small worlds keep every role
        roles[i, role] = True
    roles[~roles.any(axis=1), 0] = True
    for p in range(n):
        birth[p] = city_in(int(rng.choice(n_country, p=weights)))
        facts.append((people[p], "born_in", cities[birth[p]]))
    home = [city_country[birth[p]] for p in range(n)]
    actors, directors, musicians = (np.flatnonzero(roles[:, k]).tolist() for k in range(3))
    # Studios concentrate in the big markets (weight^1.5: Hollywood).
    studio_weights = weights**1.5 / (weights**1.5).sum()
    studio_country = [int(rng.choice(n_country, p=studio_weights)) for _ in range(n_studio)]
    for s, c in enumerate(studio_country):
        facts.append((studios[s], "located_in", cities[city_in(c)]))
    # Films.
    made = np.zeros(n_studio)
    credits = np.zeros(n)  # films per person (directed or acted in)
    for f in range(n_film):
        if rng.random() < 0.75:
            s = weighted_pick(rng, list(range(n_studio)), made + 1.0)
            made[s] += 1
            facts.append((films[f], "produced_by", studios[s]))
            country = studio_country[s]
            local = [d for d in directors if home[d] == country]
            pool = local if local and rng.random() < 0.7 else directors
            director = weighted_pick(rng, pool, credits + 1.0)
        else:  # an independent film: its home is its director's country
            director = weighted_pick(rng, directors, credits + 1.0)
            country = home[director]
        credits[director] += 1
        facts.append((people[director], "directed", films[f]))
        cast: set[int] = set()
        if roles[director, 0] and rng.random() < 0.1:  # a director acting in their own film
            cast.add(director)
        local = [a for a in actors if home[a] == country]
        for _ in range(1 + int(rng.poisson(2.0))):
            pool = local if local and rng.random() < 0.75 else actors
            a = weighted_pick(rng, pool, credits + 1.0)
            if a not in cast:
                cast.add(a)
                credits[a] += 1
        facts.extend((people[a], "acted_in", films[f]) for a in sorted(cast))
        first = int(rng.choice(len(_FILM_GENRES), p=_FILM_GENRES))
        kinds = {first}
        if rng.random() < 0.35:
            kinds.add(int(rng.choice(len(_FILM_GENRES), p=_FILM_GENRES)))
        facts.extend((films[f], "genre", genres[g]) for g in sorted(kinds))
        shot = {country if rng.random() < 0.8 else int(rng.choice(n_country, p=weights))}
        if rng.random() < 0.15:
            shot.add(int(rng.choice(n_country, p=weights)))
        facts.extend((films[f], "shot_in", countries[c]) for c in sorted(shot))
    # Bands: members mostly from one country, musicians rarely in two bands.
    in_bands = np.zeros(n)
    members_of: list[list[int]] = []
    for b in range(n_band):
        country = home[musicians[int(rng.integers(len(musicians)))]]
        local = [m for m in musicians if home[m] == country]
        members: list[int] = []
        for _ in range(2 + int(rng.poisson(1.2))):
            pool = local if rng.random() < 0.85 else musicians
            pool = [m for m in pool if m not in members] or [
                m for m in musicians if m not in members
            ]
            if not pool:
                break
            m = weighted_pick(rng, pool, 1.0 / (1.0 + 5.0 * in_bands))
            members.append(m)
            in_bands[m] += 1
        members_of.append(members)
        facts.extend((people[m], "member_of", bands[b]) for m in sorted(members))
    # Albums: by a band or a solo musician (prolific artists attach preferentially); an album's
    # genre is mostly its artist's; a band album is sometimes co-credited to one member.
    music = len(_FILM_GENRES)
    style = [int(rng.choice(len(_MUSIC_GENRES), p=_MUSIC_GENRES)) for _ in range(n + n_band)]
    output = np.zeros(n + n_band)  # albums per artist: people first, then bands
    band_ids = list(range(n, n + n_band))
    for a in range(n_album):
        artist = weighted_pick(rng, band_ids if rng.random() < 0.4 else musicians, output + 1.0)
        output[artist] += 1
        if artist >= n:
            b = artist - n
            facts.append((bands[b], "released", albums[a]))
            if members_of[b] and rng.random() < 0.1:
                m = members_of[b][int(rng.integers(len(members_of[b])))]
                facts.append((people[m], "released", albums[a]))
        else:
            facts.append((people[artist], "released", albums[a]))
        kinds = {style[artist] if rng.random() < 0.8 else int(rng.integers(len(_MUSIC_GENRES)))}
        if rng.random() < 0.2:
            kinds.add(int(rng.integers(len(_MUSIC_GENRES))))
        facts.extend((albums[a], "genre", genres[music + g]) for g in sorted(kinds))
    types = {
        **dict.fromkeys(people, "person"),
        **dict.fromkeys(films, "film"),
        **dict.fromkeys(albums, "album"),
        **dict.fromkeys(bands, "band"),
        **dict.fromkeys(studios, "studio"),
        **dict.fromkeys(genres, "genre"),
        **dict.fromkeys(cities, "city"),
        **dict.fromkeys(countries, "country"),
        **dict.fromkeys(languages, "language"),
    }
    return build_world(
        "media",
        facts,
        MEDIA_RULES,
        seed=seed,
        size=n,
        rng=rng,
        entity_types=types,
        exception_rates={"birth_nationality": 0.1, "director_country": 0.3},
        noise_rates={"film_language": 0.05, "nationality": 0.04},
        symmetric=("co_star",),
        inverse_pairs=(("directed", "directed_by"),),
        shortcuts=(("shot_in", "film_country"),),
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
    )
