r"""A geography and transport world: continents, countries, regions, cities, blocs and flights.

Built to break what the family world lets through (issue #18): two **symmetric** relations
(``borders``, ``twinned_with``), an **inverse pair** (``contains`` / ``located_in``), a rule with
a **constant** whose body is a **star** around it (``visa_free`` through membership of
``free_travel_area``), with **exceptions** (10 % of member pairs are not visa free), a length-3
rule whose body holds an atom **parallel to its head** (``language_neighbour(X,Y)`` needs
``borders(X,Y)``, so the target's own pair is one body triple), chains that run through derived
facts (``capital_link`` uses both orientations of ``borders``, one of them derived), **hub**
relations (``on_continent`` and ``in_timezone``, five continents and timezones, and five
international hub airports), **noise** in ``flies_to_country`` (5 % of its facts have no
grounding), and 1-1 (``capital_of``), 1-N (``contains``), N-1 (``on_continent``) and N-N
(``flight``, ``visa_free``) relations. Two **shortcuts**: a direct ``flight`` between
neighbouring capitals parallels the length-3 ``capital_link`` body, and ``borders`` links some
``visa_free`` pairs.

**Base facts** (:func:`geography_world`), with :math:`C` = ``size`` cities:

* five continents; :math:`\max(6, \lfloor C/12 \rfloor)` countries, country :math:`i`
  ``on_continent`` :math:`i \bmod 5`, at a point drawn around its continent's centre;
* every country ``contains`` 2-4 regions and every region at least one city (the rest of the
  cities go to uniform regions); the first city of a country's first region is its
  ``capital_of``;
* ``borders``: each country and its two nearest countries of the same continent, and with
  probability 0.15 its nearest country elsewhere; each border in one random orientation (the
  symmetry rule derives the other);
* two or three languages per continent and one ``lingua_franca``: each country ``speaks`` one
  language of its continent, a second with probability 0.3, and the lingua franca with
  probability 0.2;
* blocs ``free_travel_area``, ``trade_union``, ``defence_pact``: the countries of continents 0
  and 1 join the free travel area with probability 0.6 and each country joins each other bloc
  with probability 0.3 (``member_of``);
* five timezones, one per continent: every country and every city is ``in_timezone`` its
  continent's (a hub relation no rule uses: each timezone touches a fifth of the world);
* ``flight``: each city flies to 1-3 cities drawn with capitals weighted 5 and other cities 1,
  and with probability 0.5 to one of five international hubs (the capitals of countries 0-4),
  directed; and the capitals of two bordering countries fly to each other, each way with
  probability 0.7 (a length-1 shortcut for the length-3 ``capital_link`` rule);
* ``twinned_with``: :math:`\lfloor C/4 \rfloor` draws of a random city pair (repeats and
  self-pairs dropped), one random orientation.

The ground truth comes from :func:`graphdata.worlds.base.build_world` with
:data:`GEOGRAPHY_RULES`.
"""

from __future__ import annotations

import numpy as np

from graphdata.typing import LabeledTriple
from graphdata.worlds.base import World, build_world, check_world_arguments, entity_labels

__all__ = ["GEOGRAPHY_RULES", "geography_world"]

#: The planted rules: symmetry, inverse, chains, a star around a constant, a parallel body atom.
GEOGRAPHY_RULES = """\
border_symmetry: borders(X,Y) <- borders(Y,X)
twin_symmetry: twinned_with(X,Y) <- twinned_with(Y,X)
located_inverse: located_in(X,Y) <- contains(Y,X)
city_country: city_in_country(X,Z) <- contains(Y,X), contains(Z,Y)
visa_rule: visa_free(X,Y) <- member_of(X,free_travel_area), member_of(Y,free_travel_area), X != Y
flight_rule: flies_to_country(X,Z) <- flight(X,Y), contains(R,Y), contains(Z,R)
language_rule: language_neighbour(X,Y) <- borders(X,Y), speaks(X,L), speaks(Y,L)
capital_rule: capital_link(X,Y) <- capital_of(X,A), borders(A,B), capital_of(Y,B)
"""

_CONTINENTS = 5
_BLOCS = ("free_travel_area", "trade_union", "defence_pact")


def geography_world(
    size: int = 800,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the geography world (module docstring) and its ground truth.

    Args:
        size: The number of cities :math:`C \ge 40`. Default 800 (1,090 entities, 15 relations
            and about 9,200 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"geography"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = geography_world(80, seed=0)
        >>> w.symmetric, w.exception_rates["visa_rule"]
        (('borders', 'twinned_with'), 0.1)
    """
    check_world_arguments(size, 40, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n_city = int(size)
    n_country = max(6, n_city // 12)
    continents = entity_labels("continent", _CONTINENTS)
    countries = entity_labels("country", n_country)
    facts: list[LabeledTriple] = []
    centre = rng.normal(scale=10.0, size=(_CONTINENTS, 2))  # [5, 2]
    cont = [i % _CONTINENTS for i in range(n_country)]
    where = centre[cont] + rng.normal(size=(n_country, 2))  # [n_country, 2]
    for i, c in enumerate(cont):
        facts.append((countries[i], "on_continent", continents[c]))
    # Regions: 2-4 per country; cities: one per region, the rest uniform.
    region_country: list[int] = []
    for i in range(n_country):
        region_country.extend([i] * int(rng.integers(2, 5)))
    regions = entity_labels("region", len(region_country))
    if n_city < len(regions):
        region_country = region_country[:n_city]
        regions = regions[:n_city]
    for r, i in enumerate(region_country):
        facts.append((countries[i], "contains", regions[r]))
    city_region = (
        list(range(len(regions))) + rng.integers(len(regions), size=n_city - len(regions)).tolist()
    )
    cities = entity_labels("city", n_city)
    capital = [-1] * n_country
    for c, r in enumerate(city_region):
        facts.append((regions[r], "contains", cities[c]))
        i = region_country[r]
        if capital[i] < 0:
            capital[i] = c
    for i, c in enumerate(capital):
        if c >= 0:
            facts.append((cities[c], "capital_of", countries[i]))
    distance = np.linalg.norm(where[:, None, :] - where[None, :, :], axis=-1)  # [n, n]
    pairs: set[tuple[int, int]] = set()
    for i in range(n_country):
        same = [j for j in np.argsort(distance[i]).tolist() if j != i and cont[j] == cont[i]]
        other = [j for j in np.argsort(distance[i]).tolist() if cont[j] != cont[i]]
        near = same[:2] + (other[:1] if rng.random() < 0.15 else [])
        for j in near:
            pairs.add((min(i, j), max(i, j)))
    for i, j in sorted(pairs):
        a, b = (i, j) if rng.random() < 0.5 else (j, i)
        facts.append((countries[a], "borders", countries[b]))
    languages: list[list[str]] = []
    for c in range(_CONTINENTS):
        languages.append([f"language_{c}_{k}" for k in range(int(rng.integers(2, 4)))])
    for i in range(n_country):
        pool = languages[cont[i]]
        spoken = {pool[int(rng.integers(len(pool)))]}
        if rng.random() < 0.3:
            spoken.add(pool[int(rng.integers(len(pool)))])
        if rng.random() < 0.2:
            spoken.add("lingua_franca")
        facts.extend((countries[i], "speaks", lang) for lang in sorted(spoken))
    for i in range(n_country):
        if cont[i] in (0, 1) and rng.random() < 0.6:
            facts.append((countries[i], "member_of", _BLOCS[0]))
        for bloc in _BLOCS[1:]:
            if rng.random() < 0.3:
                facts.append((countries[i], "member_of", bloc))
    zones = entity_labels("timezone", _CONTINENTS)
    for i in range(n_country):
        facts.append((countries[i], "in_timezone", zones[cont[i]]))
    for c, r in enumerate(city_region):
        facts.append((cities[c], "in_timezone", zones[cont[region_country[r]]]))
    weight = np.ones(n_city)
    weight[[c for c in capital if c >= 0]] = 5.0
    weight /= weight.sum()
    hubs = [c for c in capital[:_CONTINENTS] if c >= 0]  # one international hub per continent
    for c in range(n_city):
        picks = rng.choice(n_city, size=int(rng.integers(1, 4)), p=weight).tolist()
        if rng.random() < 0.5:
            picks.append(hubs[int(rng.integers(len(hubs)))])
        for hub in sorted(set(picks)):
            if hub != c:
                facts.append((cities[c], "flight", cities[hub]))
    for i, j in sorted(pairs):  # neighbouring capitals fly to each other: a capital_link shortcut
        for a, b in ((i, j), (j, i)):
            if capital[a] >= 0 and capital[b] >= 0 and rng.random() < 0.7:
                facts.append((cities[capital[a]], "flight", cities[capital[b]]))
    twins: set[tuple[int, int]] = set()
    for _ in range(n_city // 4):
        a, b = (int(x) for x in rng.integers(n_city, size=2))
        if a != b and (b, a) not in twins:
            twins.add((a, b))
    facts.extend((cities[a], "twinned_with", cities[b]) for a, b in sorted(twins))
    all_languages = [lang for pool in languages for lang in pool] + ["lingua_franca"]
    types = {
        **dict.fromkeys(continents, "continent"),
        **dict.fromkeys(countries, "country"),
        **dict.fromkeys(regions, "region"),
        **dict.fromkeys(cities, "city"),
        **dict.fromkeys(all_languages, "language"),
        **dict.fromkeys(_BLOCS, "bloc"),
        **dict.fromkeys(zones, "timezone"),
    }
    return build_world(
        "geography",
        facts,
        GEOGRAPHY_RULES,
        seed=seed,
        size=n_city,
        rng=rng,
        entity_types=types,
        exception_rates={"visa_rule": 0.1},
        noise_rates={"flies_to_country": 0.05},
        symmetric=("borders", "twinned_with"),
        inverse_pairs=(("located_in", "contains"),),
        shortcuts=(("flight", "capital_link"), ("borders", "visa_free")),
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
    )
