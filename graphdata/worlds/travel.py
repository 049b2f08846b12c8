r"""A travel world: airports, cities, regions, countries, airlines, alliances, aircraft, pilots.

Written as a **held-out** world without reading :mod:`kg` (models, defaults, training,
explainers) or the model-default benchmark, to check which embedding model a training command
picks without flags and later an explainer; no model was trained on it while it was written.
Designed from the air-travel domain (airports in cities, cities in regions of countries,
airlines with hubs and networks of served airports, hub-and-spoke and point-to-point routes,
alliances and codeshares, fleets, pilots), not from how any embedding model or explainer
decides. The rules (:data:`TRAVEL_RULES`, length = body atoms):

* ``hub_inverse: hub_of(P,A) <- has_hub(A,P)``, length 1, an **inverse pair** (recorded in
  :attr:`~graphdata.worlds.World.inverse_pairs`);
* ``hub_service: serves(A,P) <- has_hub(A,P)``, length 1, a sub-relation (an airline serves its
  hubs; no hub's service is a base fact), so ``serves`` is partly **derived** and feeds
  ``hub_spoke`` and ``feeder``;
* ``hub_spoke: route(H,P) <- has_hub(A,H), serves(A,P), H != P``, length 2, a **shared
  variable** (the airline) **with an inequality**: an airline flies from each of its hubs to
  each airport it serves (between two of its hubs through the derived ``serves``), and
  ``return_route: route(Q,P) <- route(P,Q)``, length 1, **recursive**: a route is mostly flown
  both ways. **A head with two bodies**; ``route`` is directed and mostly but not always
  reciprocated (at seed 0 .94 of the routes are flown back; the one-way routes are the
  exceptions). Every route flown back is grounded by ``return_route``: at seed 0 .43 of the
  ``route`` facts have both bodies, .05 only ``hub_spoke`` (their return withheld), .51 only
  ``return_route`` (spoke to hub, and the point-to-point routes), .01 neither (one-way
  point-to-point routes, base facts);
* ``city_country: city_country(C,K) <- in_region(C,R), region_of(R,K)``, length 2, a chain up
  the **hierarchy** (airport, city, region, country: ``located_in``, ``in_region``,
  ``region_of``, all N-1) into a **country hub**;
* ``airline_country: based_in(A,K) <- has_hub(A,P), located_in(P,C), city_country(C,K)``,
  length 3, a chain **through the derived** ``city_country`` (an airline with a foreign hub
  gets a second country);
* ``pilot_nationality: nationality(X,K) <- born_in(X,C), city_country(C,K)``, length 2, also
  through ``city_country``;
* ``alliance_partner: alliance_partner(A,B) <- member_of(A,L), member_of(B,L), A != B``,
  length 2, a **symmetric** relation from a **star with a shared variable and an inequality**
  around an **alliance hub**;
* ``feeder: feeds(A,B) <- codeshare(A,B), has_hub(B,P), serves(A,P)``, length 3, a
  **triangle** (an airline, its codeshare partner, the partner's hub) whose head is
  **parallel** to a body atom: a codeshare partner that flies to an airline's hub feeds it
  passengers;
* a **correlated shortcut**: ``codeshare`` (base, **symmetric**) is in no body of
  ``alliance_partner``, but codeshares are mostly agreed inside an alliance: at seed 0
  ``codeshare`` links .54 of the ``alliance_partner`` pairs in train and .57 of its training
  pairs are alliance partners (:attr:`~graphdata.worlds.World.shortcuts`);
* rules of length 1 (three), 2 (four) and 3 (two); 1-N (``hub_of``, ``feeds``), N-1
  (``located_in``, ``in_region``, ``region_of``, ``has_hub``, ``member_of``, ``works_for``,
  ``born_in``, ``city_country``, ``based_in``, ``nationality``) and N-N (``route``,
  ``serves``, ``operates``, ``codeshare``, ``alliance_partner``) relations;
* **exceptions**: 8 % of ``hub_spoke``'s heads (an airline serves an airport from one hub
  only), 10 % of the routes only ``return_route`` derives (one-way routes), 10 % of
  ``airline_country``'s and ``pilot_nationality``'s heads and 20 % of ``feeder``'s are
  withheld; **noise**: 3 % of the ``based_in``, 4 % of the ``nationality`` and 5 % of the
  ``feeds`` facts have no grounding.

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`): 881
entities (360 pilots, 240 airports, 120 cities, 80 airlines, 40 regions, 24 aircraft types, 14
countries, 3 alliances), 17 relations; 4,425 train, 218 valid and 221 test triples; the
valid+test targets per rule of their shortest grounding are ``return_route`` 222,
``alliance_partner`` 62, ``pilot_nationality`` 46, ``city_country`` 24, ``hub_inverse`` 24,
``hub_service`` 24, ``hub_spoke`` 15, ``airline_country`` 12, ``feeder`` 10 (length 1: 270, 2:
147, 3: 22), and no noise fact (all 17 noise facts drew train at this seed); .25 of the targets
have more than one grounding; 218 exceptions (141 routes). **Hubs**: the largest country has
85 distinct training neighbours, the busiest airport 57, the busiest airline 59, the largest
alliance 13; the 2-hop enclosing subgraphs of 200 test targets hold a median of 1,213 training
triples (p90 2,007).

**Base facts** (:func:`travel_world`), with :math:`N` = ``size`` airports: fourteen countries by
weight (.20 down to .02); :math:`\max(14, \lfloor N/6 \rfloor)` regions (``region_of``, one per
country first, the rest by country weight); :math:`\max(\text{regions}, \lfloor N/2 \rfloor)`
cities (``in_region``, one per region first, the rest by region weight) with a log-normal
population; :math:`N` airports (``located_in``, one per city first, the rest by population),
whose traffic is their city's population times a log-normal factor (halved for a city's further
airports); :math:`\max(8, \lfloor N/3 \rfloor)` airlines, a flag carrier per country first, the
rest at home in a country by weight, each with a log-normal size (doubled for flag carriers) and
:math:`1 + \text{Bernoulli}(.35) + \text{Bernoulli}(.12)` hubs (``has_hub``) drawn by traffic to
the power 1.5 among the airports of its country (a hub after the first among all airports with
probability .1); three alliances (``member_of``, weights .4, .35, .25) that the larger third of
the airlines joins with probability .75 and the rest with .3; ``codeshare`` (both directions)
between alliance partners with probability .5 and :math:`\text{Poisson}(.6)` further partners
per airline by size; ``serves``: each airline :math:`\max(2, \operatorname{round}(4 s))`
airports (:math:`s` its size), not in the cities of its hubs, by traffic, three times as likely
at home and four times as likely a codeshare partner's hub; :math:`\lfloor N/2 \rfloor`
point-to-point ``route`` facts (one direction) between airports of different cities by traffic;
:math:`\max(6, \lfloor N/10 \rfloor)` aircraft types by popularity (``operates``, :math:`1 +
\text{Poisson}(2 s)` types each); :math:`\lfloor 3N/2 \rfloor` pilots, ``works_for`` an airline
by size and ``born_in`` a city by population (of the airline's country with probability .8).

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`TRAVEL_RULES`.
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

__all__ = ["TRAVEL_RULES", "travel_world"]

#: The planted rules: an inverse pair and a sub-relation of ``has_hub``, a route head with a
#: hub-and-spoke body and a recursive return body, a hierarchy chain into country hubs used by
#: two more chains, a symmetric alliance star with an inequality, and a codeshare triangle.
TRAVEL_RULES = """\
hub_inverse: hub_of(P,A) <- has_hub(A,P)
hub_service: serves(A,P) <- has_hub(A,P)
hub_spoke: route(H,P) <- has_hub(A,H), serves(A,P), H != P
return_route: route(Q,P) <- route(P,Q)
city_country: city_country(C,K) <- in_region(C,R), region_of(R,K)
airline_country: based_in(A,K) <- has_hub(A,P), located_in(P,C), city_country(C,K)
pilot_nationality: nationality(X,K) <- born_in(X,C), city_country(C,K)
alliance_partner: alliance_partner(A,B) <- member_of(A,L), member_of(B,L), A != B
feeder: feeds(A,B) <- codeshare(A,B), has_hub(B,P), serves(A,P)
"""

_COUNTRIES = (0.2, 0.14, 0.12, 0.1, 0.08, 0.07, 0.06, 0.05, 0.04, 0.04, 0.03, 0.03, 0.02, 0.02)
_ALLIANCES = (0.4, 0.35, 0.25)


def _fill(rng: np.random.Generator, n: int, weight: np.ndarray) -> list[int]:
    """``n`` parents: one per parent first (``len(weight) <= n``), the rest by ``weight``."""
    k = len(weight)
    rest = rng.choice(k, size=n - k, p=weight / weight.sum()).tolist() if n > k else []
    return list(range(k)) + [int(x) for x in rest]


def travel_world(
    size: int = 240,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the travel world (module docstring) and its ground truth.

    Args:
        size: The number of airports :math:`N \ge 40`. Default 240 (881 entities, 17
            relations and about 4,860 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"travel"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = travel_world(60, seed=0)
        >>> w.exception_rates["return_route"], w.noise_rates["feeds"]
        (0.1, 0.05)
        >>> sorted(r.name for r in w.rules if r.head.relation == "route")
        ['hub_spoke', 'return_route']
    """
    check_world_arguments(size, 40, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    weights = np.asarray(_COUNTRIES)
    n_country = len(_COUNTRIES)
    n_region = max(n_country, n // 6)
    n_city = max(n_region, n // 2)
    n_airline, n_type, n_pilot = max(8, n // 3), max(6, n // 10), 3 * n // 2
    countries, regions = entity_labels("country", n_country), entity_labels("region", n_region)
    cities, airports = entity_labels("city", n_city), entity_labels("airport", n)
    airlines, alliances = entity_labels("airline", n_airline), entity_labels("alliance", 3)
    aircraft, pilots = entity_labels("aircraft", n_type), entity_labels("pilot", n_pilot)
    facts: list[LabeledTriple] = []

    # The hierarchy: regions of countries, cities of regions, airports of cities.
    region_country = _fill(rng, n_region, weights)
    per_country = np.bincount(region_country, minlength=n_country)
    region_weight = np.array([weights[c] / per_country[c] for c in region_country])
    city_region = _fill(rng, n_city, region_weight)
    population = rng.lognormal(0.0, 1.0, n_city) * region_weight[city_region]
    airport_city = _fill(rng, n, population)
    traffic = population[airport_city] * rng.lognormal(0.0, 0.5, n)
    traffic[n_city:] *= 0.5  # a city's second airport is smaller
    airport_country = np.array([region_country[city_region[y]] for y in airport_city])
    facts.extend((regions[r], "region_of", countries[c]) for r, c in enumerate(region_country))
    facts.extend((cities[y], "in_region", regions[r]) for y, r in enumerate(city_region))
    facts.extend((airports[p], "located_in", cities[y]) for p, y in enumerate(airport_city))

    # Airlines: a flag carrier per country first; hubs among the busiest airports at home.
    airline_home = _fill(rng, n_airline, weights)
    scale = rng.lognormal(0.0, 0.6, n_airline)
    scale[:n_country] *= 2.0
    hubs: list[list[int]] = []
    for a in range(n_airline):
        wanted = 1 + int(rng.random() < 0.35) + int(rng.random() < 0.12)
        own: list[int] = []
        for _ in range(wanted):
            home = [p for p in range(n) if airport_country[p] == airline_home[a] and p not in own]
            abroad = [p for p in range(n) if p not in own]
            pool = home if home and (not own or rng.random() >= 0.1) else abroad
            own.append(weighted_pick(rng, pool, traffic**1.5))
        hubs.append(own)
        facts.extend((airlines[a], "has_hub", airports[p]) for p in own)
    # Alliances: the larger third joins with probability .75, the rest with .3.
    large = set(np.argsort(-scale)[: max(1, n_airline // 3)].tolist())
    member = [
        int(rng.choice(3, p=np.asarray(_ALLIANCES)))
        if rng.random() < (0.75 if a in large else 0.3)
        else -1
        for a in range(n_airline)
    ]
    facts.extend((airlines[a], "member_of", alliances[m]) for a, m in enumerate(member) if m >= 0)
    # Codeshares: alliance partners with probability .5, and Poisson(.6) further partners each.
    partners: list[set[int]] = [set() for _ in range(n_airline)]
    for a in range(n_airline):
        for b in range(a + 1, n_airline):
            if member[a] >= 0 and member[a] == member[b] and rng.random() < 0.5:
                partners[a].add(b)
                partners[b].add(a)
    for a in range(n_airline):
        for _ in range(int(rng.poisson(0.6))):
            pool = [b for b in range(n_airline) if b != a and b not in partners[a]]
            if pool:
                b = weighted_pick(rng, pool, scale)
                partners[a].add(b)
                partners[b].add(a)
    for a in range(n_airline):
        facts.extend((airlines[a], "codeshare", airlines[b]) for b in sorted(partners[a]))
    # Networks: airports served from the hubs, by traffic, at home and at partners' hubs more.
    for a in range(n_airline):
        hub_cities = {airport_city[h] for h in hubs[a]}
        pool = [p for p in range(n) if airport_city[p] not in hub_cities]
        boost = np.ones(n)
        boost[airport_country == airline_home[a]] *= 3.0
        for b in partners[a]:
            boost[hubs[b]] *= 4.0
        w = (traffic * boost)[pool]
        k = min(len(pool), max(2, round(4 * float(scale[a]))))
        served = rng.choice(len(pool), size=k, replace=False, p=w / w.sum())
        facts.extend((airlines[a], "serves", airports[pool[int(i)]]) for i in sorted(served))
    # Point-to-point routes (one direction; return_route flies most of them back).
    seen: set[tuple[int, int]] = set()
    while len(seen) < n // 2:
        p, q = (int(x) for x in rng.choice(n, size=2, p=traffic / traffic.sum()))
        if airport_city[p] != airport_city[q] and (q, p) not in seen:
            seen.add((p, q))
    facts.extend((airports[p], "route", airports[q]) for p, q in sorted(seen))
    # Fleets: aircraft types by popularity.
    popularity = 1.0 / np.arange(1, n_type + 1) ** 0.8
    for a in range(n_airline):
        k = min(n_type, 1 + int(rng.poisson(2.0 * float(scale[a]))))
        fleet = rng.choice(n_type, size=k, replace=False, p=popularity / popularity.sum())
        facts.extend((airlines[a], "operates", aircraft[int(t)]) for t in sorted(fleet))
    # Pilots: an airline by size, a birth city mostly in the airline's country.
    city_country = [region_country[r] for r in city_region]
    cities_of = [[y for y in range(n_city) if city_country[y] == c] for c in range(n_country)]
    everywhere = list(range(n_city))
    for x in range(n_pilot):
        a = int(rng.choice(n_airline, p=scale / scale.sum()))
        pool = cities_of[airline_home[a]] if rng.random() < 0.8 else everywhere
        y = weighted_pick(rng, pool, population)
        facts.append((pilots[x], "works_for", airlines[a]))
        facts.append((pilots[x], "born_in", cities[y]))
    types = {
        **dict.fromkeys(countries, "country"),
        **dict.fromkeys(regions, "region"),
        **dict.fromkeys(cities, "city"),
        **dict.fromkeys(airports, "airport"),
        **dict.fromkeys(airlines, "airline"),
        **dict.fromkeys(alliances, "alliance"),
        **dict.fromkeys(aircraft, "aircraft"),
        **dict.fromkeys(pilots, "pilot"),
    }
    return build_world(
        "travel",
        facts,
        TRAVEL_RULES,
        seed=seed,
        size=n,
        rng=rng,
        entity_types=types,
        exception_rates={
            "hub_spoke": 0.08,
            "return_route": 0.1,
            "airline_country": 0.1,
            "pilot_nationality": 0.1,
            "feeder": 0.2,
        },
        noise_rates={"based_in": 0.03, "nationality": 0.04, "feeds": 0.05},
        symmetric=("alliance_partner", "codeshare"),
        inverse_pairs=(("has_hub", "hub_of"),),
        shortcuts=(("codeshare", "alliance_partner"),),
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
    )
