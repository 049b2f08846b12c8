r"""A civil aviation world: airlines, alliances, airports, aircraft, pilots, authorities, slots.

Written in session 29 as a **held-out** world for the explainer, without reading
:mod:`kg.explain`, the explainer benchmarks or their results, and never run with an explainer or
trained on while it was written (run once in session 29 with that session's explainer: RESULTS.md,
"A seventeenth world, aviation"): designed from the civil aviation domain (a network carrier in
each of fourteen countries and more network, low-cost and regional carriers; regional carriers
flying for a mainline partner under capacity purchase agreements; three alliances of network
carriers; bilateral codeshare agreements; hubs and bases; airports in cities, under the
jurisdiction of their country's aviation authority (EASA for the five EU members), fully
slot-coordinated or not; airframes of fifteen types from six manufacturers, with common type
ratings across families; pilots employed by airlines, type-rated and checked in simulators;
air operator certificates and foreign operator permits), not from how any explainer decides.
The rules (:data:`AVIATION_RULES`, length = body atoms):

* ``partner_inverse: capacity_partner(M,R) <- operates_for(R,M)``, length 1, an **inverse
  pair** (recorded in :attr:`~graphdata.worlds.World.inverse_pairs`; 1-N by count: 18 regional
  carriers fly for 11 mainlines at seed 0) whose derived side is used in
* ``regional_codes: markets(M,H) <- capacity_partner(M,R), serves(R,H)``, length 2, a mainline's
  code on its regional partners' flights, and
* ``partner_codes: markets(A,H) <- codeshare(A,B), hub(B,H)``, length 2, an airline's code on
  its codeshare partners' flights into their hubs: **a head with two bodies**, each through a
  derived relation; of the 281 ``markets`` facts at seed 0, .01 have both bodies, .25 only the
  first, .71 only the second and .03 none (noise);
* ``codeshare_mirror: codeshare(A,B) <- codeshare(B,A)``, length 1: a **symmetric** relation
  (:attr:`~graphdata.worlds.World.symmetric`) completed by a rule whose body is its own head
  relation; the recorded agreements (70 base facts at seed 0, one direction each) are its only
  base facts (140 facts; the reversed copy of every one of its 14 held-out targets is in train);
* ``fleet_rollup: fleet_type(A,T) <- operated_by(P,A), of_type(P,T)``, length 2, the types in
  an airline's fleet rolled up from its airframes: a head with **many groundings** (111 of the
  114 facts at seed 0 derived, a median of 4 groundings and at most 11), used in
* ``crew_assignment: flies_type(X,T) <- employed_by(X,A), fleet_type(A,T), type_rated(X,T)``,
  length 3, the types a pilot flies: a **triangle** through the derived ``fleet_type`` whose
  last atom is **parallel to the head**; the rating alone derives more (earlier ratings and
  new hires: 826 ratings, 426 of them on a type of the employer's fleet, and 382 facts at seed
  0, 11 of them noise);
* ``slot_holding: holds_slots(A,H) <- serves(A,H), coordination(H,level_3)``, length 2, slots
  at the fully coordinated airports an airline serves: a body atom parallel to the head and
  one **anchored on the constant** ``level_3`` off the tail (26 of the 100 airports at seed 0;
  276 facts, 17 of them noise);
* ``lounge_access: lounge_access(A,H) <- member_of(A,L), member_of(B,L), hub(B,H)``, length 3,
  the lounges an alliance member's passengers may use: the hubs of every member of its alliance,
  its own included (``B`` may be ``A``), **a star on the alliance** (18 members, 152 facts at
  seed 0, 5 of them noise);
* ``foreign_permit: permit_from(A,U) <- serves(A,H), regulated_by(H,U), regulated_by(A,V),
  U != V``, length 3, the foreign operator permits an airline needs: ``regulated_by`` twice,
  once from the airport and once from the airline (its air operator certificate), with an
  **inequality** between the two authorities; flights inside the EASA area need none (190
  pairs of an airline and the authority of an airport it serves at seed 0, 124 of them
  foreign, 117 facts);
* a **correlated shortcut**: ``sim_check`` (base: recurrent simulator checks, on each type a
  pilot flies with probability .8, never on one it is not current on, and with probability .1
  a conversion course on a type it is not rated on) is in no body; at seed 0 it links .82 of
  the ``flies_type`` pairs and .88 of its training pairs are ``flies_type`` pairs
  (:attr:`~graphdata.worlds.World.shortcuts`);
* rules of length 1 (two), 2 (four) and 3 (three); 1-N (``capacity_partner``), N-1
  (``built_by``, ``coordination``, ``employed_by``, ``flies_type``, ``kind``, ``located_in``,
  ``member_of``, ``of_type``, ``operated_by``, ``operates_for``, ``regulated_by``,
  ``sim_check``) and N-N (``codeshare``, ``fleet_type``, ``holds_slots``, ``hub``,
  ``lounge_access``, ``markets``, ``permit_from``, ``serves``, ``type_rated``) relations (by
  count at seed 0);
* **exceptions**: 8 % of ``regional_codes``'s heads (a regional route the mainline does not
  sell: the regional's own brand), 6 % of ``partner_codes``'s (a codeshare that leaves out a
  partner's hub: a bilateral or antitrust carve-out), 5 % of ``lounge_access``'s (a hub lounge
  in a terminal the airline does not use), 10 % of ``crew_assignment``'s (a pilot rated on a
  type of the fleet but not current on it: assigned to another fleet, in training, on leave)
  and 5 % of ``foreign_permit``'s (a foreign airport served under a wet-lease partner's permit)
  are withheld. ``codeshare``, ``capacity_partner``, ``fleet_type`` and ``holds_slots`` have
  no exceptions (the first two stay symmetric and inverse); **noise**: 3 % of the
  ``fleet_type`` (a type on order or wet-leased in the fleet list), ``markets`` (a code on an
  interline flight), ``lounge_access`` (a paid lounge contract) and ``flies_type`` (flying for
  a wet-lease partner) and 6 % of the ``holds_slots`` facts (slots held at a coordinated
  airport the airline does not serve, kept against use-it-or-lose-it) have no grounding (a
  noise ``fleet_type`` fact feeds ``crew_assignment`` like any other); ``permit_from`` has
  none.

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`):
1,099 entities (400 aircraft, 400 pilots, 100 airports, 79 cities, 66 airlines (23 network,
22 low-cost, 21 regional), 15 aircraft types, 14 countries, 10 authorities, 6 manufacturers, 3
alliances, 3 airline kinds, 3 coordination levels), 22 relations; 5,072 train, 129 valid and
131 test triples; the valid+test targets per rule of their shortest grounding are
``crew_assignment`` 61, ``slot_holding`` 51, ``partner_codes`` 36, ``lounge_access`` 29,
``foreign_permit`` 24, ``fleet_rollup`` 22, ``codeshare_mirror`` 14, ``regional_codes`` 12,
``partner_inverse`` 4 (length 1: 18, 2: 121, 3: 114), and 7 noise facts; .16 of the targets
have more than one grounding; 94 exceptions (55 ``flies_type``, 19 ``markets``, 13
``lounge_access``, 7 ``permit_from``). **Hubs**: the commonest aircraft type has 234 distinct
training neighbours, the best-connected airline 92, EASA 68, ``level_1`` 54, the busiest airport 33,
the largest alliance 8 (a pilot a median of 3); the 2-hop enclosing subgraphs of the 126 test
targets hold a median of 1,392 training triples (p90 2,258).

**Base facts** (:func:`aviation_world`), with :math:`N` = ``size`` aircraft: :math:`\max(30,
\lfloor N/4 \rfloor)` airports, one in each country of ``_COUNTRIES`` first and the rest by weight,
of log-normal size; an airport is ``located_in`` a city of its own (with probability .2, one after
the first of its country is a second airport of the city of the country's largest airport so far),
the city ``located_in`` the country; the airport is ``regulated_by`` the country's authority and of
a ``coordination`` level: ``level_3`` with probability .7 for the largest third, else .15 (five
fourteenths of that in the USA, where the FAA designates few); else ``level_2`` with probability
.35, else ``level_1``. :math:`\max(24, \lfloor N/6 \rfloor)` airlines: a network carrier in each
country first, then two regional and two low-cost carriers, the rest of a kind by weight (low-cost
.45, regional .35, network .2), each in a country by weight (``located_in``, ``regulated_by`` the
country's authority, ``kind``), of log-normal fleet weight by kind. A regional carrier
``operates_for`` a network carrier of its country by fleet weight (the first always, the others
with probability .85); a network carrier is ``member_of`` an alliance by weight with probability
.75. ``hub``: a network carrier :math:`1 + \text{Poisson}(.5)` (at most 3) airports of its country
by size, one that is no network hub yet first; a low-cost carrier :math:`1 + \text{Poisson}(1)` (at
most 4) bases by size in its market (the European market, EU and UK, for a European carrier, its
own country twice as likely; else its country); a regional carrier one or (with probability .4) two
of its mainline's hubs, one airport of its country without a mainline. ``serves``: its hubs, and a
network carrier each other domestic airport with probability .6 and :math:`6 + \text{Poisson}(6)`
foreign airports by size squared; a low-cost carrier :math:`6 + \text{Poisson}(5)` airports of its
market by size; a regional carrier :math:`3 + \text{Poisson}(3)` domestic airports, uniformly.
``codeshare`` (recorded in one direction at random): two network carriers with probability .55 in
the same alliance, .1 otherwise, a network and a low-cost carrier .04, none with a regional
carrier. Each type of ``_TYPES`` is ``built_by`` its manufacturer (``located_in`` its home
country). Fleet plans: a network carrier one narrow-body and one wide-body type and
:math:`\text{Poisson}(1)` (at most 3) more, a low-cost carrier one narrow-body type (two with
probability .3), a regional carrier one regional type (two with probability .3), by type weight,
COMAC types for Chinese airlines only. :math:`N` aircraft, two for each airline first and the rest
by fleet weight, are ``operated_by`` the airline and ``of_type`` a type of its plan by weight.
:math:`N` pilots (at least 60) are ``employed_by`` an airline by its number of aircraft and
``type_rated`` on the type of one of its aircraft with probability .92, else on a type its fleet
lacks, and with probability .3 on one more type by weight; a rating on a member of a common type
rating family (A320neo and A321neo, 737-800 and 737 MAX 8, E175 and E190) is one on every member.
``sim_check`` follows the closure and is drawn after a first
:func:`~graphdata.worlds.base.build_world` (above). It is in no rule body, so adding it leaves the
closure, the noise and the split as they were, and a second build from the generator state of the
first gives the same world with it.

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`AVIATION_RULES`.
"""

from __future__ import annotations

import copy

import numpy as np

from graphdata.typing import LabeledTriple
from graphdata.worlds.base import (
    World,
    build_world,
    check_world_arguments,
    entity_labels,
    weighted_pick,
)

__all__ = ["AVIATION_RULES", "aviation_world"]

#: The planted rules: mainline carriers buying the capacity of the regional carriers that fly
#: for them (an inverse pair), codeshare agreements holding both ways (a symmetric relation
#: completed by a length-1 rule), an airline's fleet types rolled up from its airframes, the
#: airports where an airline's code is on a flight it does not operate (through its regional
#: partners or its codeshare partners' hubs: a head with two bodies, each through a derived
#: relation), slots at the airports it serves that are fully coordinated (anchored on
#: ``level_3``), lounge access at the hubs of its alliance's members, the types a pilot flies
#: (a triangle through the derived fleet), and the foreign operator permits an airline needs
#: (an inequality between two authorities).
AVIATION_RULES = """\
partner_inverse: capacity_partner(M,R) <- operates_for(R,M)
codeshare_mirror: codeshare(A,B) <- codeshare(B,A)
fleet_rollup: fleet_type(A,T) <- operated_by(P,A), of_type(P,T)
regional_codes: markets(M,H) <- capacity_partner(M,R), serves(R,H)
partner_codes: markets(A,H) <- codeshare(A,B), hub(B,H)
slot_holding: holds_slots(A,H) <- serves(A,H), coordination(H,level_3)
lounge_access: lounge_access(A,H) <- member_of(A,L), member_of(B,L), hub(B,H)
crew_assignment: flies_type(X,T) <- employed_by(X,A), fleet_type(A,T), type_rated(X,T)
foreign_permit: permit_from(A,U) <- serves(A,H), regulated_by(H,U), regulated_by(A,V), U != V
"""

#: The countries (entity ``country_<name>``), the authority that certificates its airlines and
#: has jurisdiction over its airports (entity ``authority_<name>``; EASA for the five EU
#: members), its weight for airports and airlines, and whether it is in the European market
#: (EU or UK: a European low-cost carrier bases and flies anywhere in it).
_COUNTRIES = (
    ("usa", "faa", 0.2, False),
    ("china", "caac", 0.11, False),
    ("germany", "easa", 0.08, True),
    ("uk", "ukcaa", 0.08, True),
    ("france", "easa", 0.07, True),
    ("spain", "easa", 0.07, True),
    ("japan", "jcab", 0.06, False),
    ("italy", "easa", 0.05, True),
    ("canada", "tcca", 0.05, False),
    ("brazil", "anac", 0.05, False),
    ("uae", "gcaa", 0.04, False),
    ("australia", "casa", 0.04, False),
    ("netherlands", "easa", 0.04, True),
    ("india", "dgca", 0.06, False),
)
#: The aircraft types (entity ``type_<name>``): manufacturer (entity ``maker_<name>``), the
#: segment that flies it (``narrow``, ``wide`` or ``regional``), its weight in fleets, and its
#: common type rating family (a pilot rated on one member is rated on all; ``""``: none). The
#: COMAC types are validated by the CAAC only, so only Chinese airlines fly them.
_TYPES = (
    ("a220", "airbus", "narrow", 0.4, ""),
    ("a320neo", "airbus", "narrow", 1.0, "a320"),
    ("a321neo", "airbus", "narrow", 0.8, "a320"),
    ("a330", "airbus", "wide", 0.5, ""),
    ("a350", "airbus", "wide", 0.5, ""),
    ("b737_800", "boeing", "narrow", 1.0, "b737"),
    ("b737max8", "boeing", "narrow", 0.9, "b737"),
    ("b787_9", "boeing", "wide", 0.6, ""),
    ("b777_300er", "boeing", "wide", 0.5, ""),
    ("e175", "embraer", "regional", 0.8, "ejet"),
    ("e190", "embraer", "regional", 0.6, "ejet"),
    ("atr72", "atr", "regional", 0.7, ""),
    ("dash8_400", "dehavilland", "regional", 0.4, ""),
    ("c919", "comac", "narrow", 0.4, ""),
    ("arj21", "comac", "regional", 0.4, ""),
)
#: The manufacturers and their home country.
_MAKERS = (
    ("airbus", "france"),
    ("boeing", "usa"),
    ("embraer", "brazil"),
    ("atr", "france"),
    ("dehavilland", "canada"),
    ("comac", "china"),
)
#: The alliances (entity ``alliance_<name>``) and their weight among the network carriers.
_ALLIANCES = (("star", 0.4), ("oneworld", 0.3), ("skyteam", 0.3))
#: Kinds of the airlines after the first network carrier of each country, by weight.
_KINDS = (("lowcost", 0.45), ("regional", 0.35), ("network", 0.2))
#: Withheld heads: a regional route the mainline does not sell (the regional's own brand), a
#: codeshare that leaves out a partner's hub (a bilateral or antitrust carve-out), a hub lounge
#: in a terminal the airline does not use, a pilot rated on a type of the fleet but not
#: current on it (assigned to another fleet, in training, on leave), and a foreign airport
#: served under a wet-lease partner's permit.
_EXCEPTION_RATES = (
    ("regional_codes", 0.08),
    ("partner_codes", 0.06),
    ("lounge_access", 0.05),
    ("crew_assignment", 0.1),
    ("foreign_permit", 0.05),
)
#: Heads without grounding: a type on order or wet-leased in the fleet list, a code on an
#: interline flight, slots held at an airport not served (kept against use-it-or-lose-it), a
#: paid lounge contract, a pilot flying a type for a wet-lease partner.
_NOISE_RATES = (
    ("fleet_type", 0.03),
    ("markets", 0.03),
    ("holds_slots", 0.06),
    ("lounge_access", 0.03),
    ("flies_type", 0.03),
)


def _sample(rng: np.random.Generator, pool: list[int], weight: np.ndarray, k: int) -> list[int]:
    """Up to ``k`` distinct elements of ``pool``, drawn without replacement by ``weight[pool]``."""
    k = min(k, len(pool))
    if k <= 0:
        return []
    w = weight[pool]
    return [pool[int(i)] for i in rng.choice(len(pool), size=k, replace=False, p=w / w.sum())]


def aviation_world(
    size: int = 400,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the civil aviation world (module docstring) and its ground truth.

    Args:
        size: The number of aircraft (airframes) :math:`N \ge 60`. Default 400 (1,099 entities, 22
            relations and 5,332 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"aviation"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = aviation_world(80, seed=0)
        >>> w.exception_rates["crew_assignment"], w.shortcuts
        (0.1, (('sim_check', 'flies_type'),))
        >>> sorted(r.length for r in w.rules if r.head.relation == "markets")
        [2, 2]
    """
    check_world_arguments(size, 60, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    n_country, n_type = len(_COUNTRIES), len(_TYPES)
    n_airport, n_airline, n_pilot = max(30, n // 4), max(24, n // 6), max(60, n)
    countries = [f"country_{name}" for name, _, _, _ in _COUNTRIES]
    authority_of = [f"authority_{a}" for _, a, _, _ in _COUNTRIES]
    authorities = sorted(set(authority_of))
    types = [f"type_{name}" for name, _, _, _, _ in _TYPES]
    makers = [f"maker_{name}" for name, _ in _MAKERS]
    alliances = [f"alliance_{name}" for name, _ in _ALLIANCES]
    kinds = ["kind_network", "kind_lowcost", "kind_regional"]
    levels = ["level_1", "level_2", "level_3"]
    airports, airlines = entity_labels("airport", n_airport), entity_labels("airline", n_airline)
    aircraft, pilots = entity_labels("aircraft", n), entity_labels("pilot", n_pilot)
    facts: list[LabeledTriple] = []
    country_weight = np.array([w for _, _, w, _ in _COUNTRIES])
    europe = [k for k, (_, _, _, eu) in enumerate(_COUNTRIES) if eu]
    china = countries.index("country_china")
    usa = countries.index("country_usa")
    type_weight = np.array([w for _, _, _, w, _ in _TYPES])
    segment = [s for _, _, s, _, _ in _TYPES]
    family = [f for _, _, _, _, f in _TYPES]
    comac = {i for i, (_, maker, _, _, _) in enumerate(_TYPES) if maker == "comac"}

    # Manufacturers in their home country; each type built_by its manufacturer.
    maker_index = {name: i for i, (name, _) in enumerate(_MAKERS)}
    facts.extend(
        (makers[i], "located_in", countries[countries.index(f"country_{home}")])
        for i, (_, home) in enumerate(_MAKERS)
    )
    facts.extend(
        (types[t], "built_by", makers[maker_index[maker]])
        for t, (_, maker, _, _, _) in enumerate(_TYPES)
    )

    # Airports: one in each country first, the rest by weight, of log-normal size. An airport
    # serves a city of its own, except that with probability .2 one after the first of its
    # country is a second airport of the city of the country's largest airport so far (a
    # metropolitan area with two airports). Each is regulated_by the
    # country's authority; its slot coordination level: level_3 with probability .7 for the
    # largest third, else .15 (five fourteenths of that in the USA, where the FAA designates
    # few); else level_2 with probability .35, else level_1.
    airport_country = (
        list(range(n_country))
        + rng.choice(
            n_country, size=n_airport - n_country, p=country_weight / country_weight.sum()
        ).tolist()
    )
    airport_size = rng.lognormal(0.0, 1.0, n_airport)
    city_of: list[int] = []
    city_country: list[int] = []
    main_city: dict[int, tuple[int, float]] = {}
    for h, k in enumerate(airport_country):
        if k in main_city and rng.random() < 0.2:
            c = main_city[k][0]
        else:
            c = len(city_country)
            city_country.append(k)
            if k not in main_city or airport_size[h] > main_city[k][1]:
                main_city[k] = (c, float(airport_size[h]))
        city_of.append(c)
    cities = entity_labels("city", len(city_country))
    facts.extend((cities[c], "located_in", countries[k]) for c, k in enumerate(city_country))
    facts.extend((airports[h], "located_in", cities[c]) for h, c in enumerate(city_of))
    facts.extend(
        (airports[h], "regulated_by", authority_of[k]) for h, k in enumerate(airport_country)
    )
    large = airport_size >= np.quantile(airport_size, 2 / 3)
    airport_level: list[int] = []
    for h in range(n_airport):
        chance = (0.7 if large[h] else 0.15) * (0.25 / 0.7 if airport_country[h] == usa else 1.0)
        if rng.random() < chance:
            level = 2
        else:
            level = 1 if rng.random() < 0.35 else 0
        airport_level.append(level)
        facts.append((airports[h], "coordination", levels[level]))

    # Airlines: a network carrier in each country first; then two regional and two low-cost
    # carriers, the rest of a kind by weight; a country by weight. Each is located_in its
    # country, regulated_by its authority (its air operator certificate) and of a kind; its
    # fleet weight is log-normal by kind.
    kind_weight = np.array([w for _, w in _KINDS])
    airline_kind: list[str] = ["network"] * n_country
    airline_country = list(range(n_country))
    for i in range(n_country, n_airline):
        j = i - n_country
        if j < 4:
            airline_kind.append("regional" if j % 2 == 0 else "lowcost")
        else:
            airline_kind.append(_KINDS[int(rng.choice(len(_KINDS), p=kind_weight))][0])
        airline_country.append(int(rng.choice(n_country, p=country_weight / country_weight.sum())))
    scale = {"network": (1.0, 0.5), "lowcost": (0.6, 0.5), "regional": (0.0, 0.4)}
    airline_weight = np.array([rng.lognormal(*scale[kind]) for kind in airline_kind])
    for a in range(n_airline):
        k = airline_country[a]
        facts.append((airlines[a], "located_in", countries[k]))
        facts.append((airlines[a], "regulated_by", authority_of[k]))
        facts.append((airlines[a], "kind", f"kind_{airline_kind[a]}"))
    network = [a for a in range(n_airline) if airline_kind[a] == "network"]

    # Regional carriers operates_for a network carrier of their country by fleet weight (a
    # capacity purchase agreement), the first always, the others with probability .85.
    mainline: dict[int, int] = {}
    first_regional = True
    for a in range(n_airline):
        if airline_kind[a] != "regional":
            continue
        if first_regional or rng.random() < 0.85:
            home = [m for m in network if airline_country[m] == airline_country[a]]
            mainline[a] = weighted_pick(rng, home, airline_weight)
            facts.append((airlines[a], "operates_for", airlines[mainline[a]]))
        first_regional = False

    # Alliances: a network carrier is member_of one by weight with probability .75.
    alliance_weight = np.array([w for _, w in _ALLIANCES])
    member: dict[int, int] = {}
    for a in network:
        if rng.random() < 0.75:
            member[a] = int(rng.choice(len(alliances), p=alliance_weight))
            facts.append((airlines[a], "member_of", alliances[member[a]]))

    # Hubs (hub): a network carrier 1 + Poisson(.5) (at most 3) airports of its country by
    # size, one not yet a network hub first where there is one; a low-cost carrier
    # 1 + Poisson(1) (at most 4) bases by size in its country (in the European market: any
    # airport of it, its own country's twice as likely); a regional carrier one or two of its
    # mainline's hubs (one airport of its country by size without a mainline).
    every_airport = list(range(n_airport))
    domestic = {k: [h for h in every_airport if airport_country[h] == k] for k in range(n_country)}
    european = [h for h in every_airport if airport_country[h] in europe]
    hubs: dict[int, list[int]] = {}
    taken: set[int] = set()
    order = network + [a for a in range(n_airline) if airline_kind[a] == "lowcost"]
    order += [a for a in range(n_airline) if airline_kind[a] == "regional"]
    for a in order:
        k, kind = airline_country[a], airline_kind[a]
        if kind == "network":
            free = [h for h in domestic[k] if h not in taken] or domestic[k]
            chosen = _sample(rng, free, airport_size, 1)
            rest = [h for h in domestic[k] if h not in chosen]
            chosen += _sample(rng, rest, airport_size, min(2, int(rng.poisson(0.5))))
            taken.update(chosen)
        elif kind == "lowcost":
            pool = european if k in europe else domestic[k]
            weight = airport_size * np.where(np.array(airport_country) == k, 2.0, 1.0)
            chosen = _sample(rng, pool, weight, 1 + min(3, int(rng.poisson(1.0))))
        elif a in mainline:
            own = hubs[mainline[a]]
            wanted = 1 if len(own) == 1 or rng.random() < 0.6 else 2
            chosen = sorted(int(h) for h in rng.permutation(own)[:wanted])
        else:
            chosen = [weighted_pick(rng, domestic[k], airport_size)]
        hubs[a] = sorted(chosen)
        facts.extend((airlines[a], "hub", airports[h]) for h in hubs[a])

    # Service (serves): its hubs, and a network carrier each other domestic airport with
    # probability .6 and 6 + Poisson(6) foreign airports by size squared (gateways draw the
    # long haul); a low-cost carrier 6 + Poisson(5) airports of its market by size; a regional
    # carrier 3 + Poisson(3) domestic airports (spokes), uniformly.
    for a in range(n_airline):
        k, kind = airline_country[a], airline_kind[a]
        out = set(hubs[a])
        if kind == "network":
            out |= {h for h in domestic[k] if h not in out and rng.random() < 0.6}
            foreign = [h for h in every_airport if airport_country[h] != k]
            out |= set(_sample(rng, foreign, airport_size**2, 6 + int(rng.poisson(6.0))))
        elif kind == "lowcost":
            market = european if k in europe else domestic[k]
            pool = [h for h in market if h not in out]
            out |= set(_sample(rng, pool, airport_size, 6 + int(rng.poisson(5.0))))
        else:
            pool = [h for h in domestic[k] if h not in out]
            uniform = np.ones(n_airport)
            out |= set(_sample(rng, pool, uniform, 3 + int(rng.poisson(3.0))))
        facts.extend((airlines[a], "serves", airports[h]) for h in sorted(out))

    # Codeshare agreements (codeshare, base, recorded in one direction): two network carriers
    # with probability .55 in the same alliance, .1 otherwise; a network and a low-cost carrier
    # .04; regional carriers none (their flights carry the mainline's code).
    for a in range(n_airline):
        for b in range(a + 1, n_airline):
            pair = {airline_kind[a], airline_kind[b]}
            if "regional" in pair or pair == {"lowcost"}:
                continue
            if pair == {"network"}:
                same = a in member and member.get(b) == member[a]
                chance = 0.55 if same else 0.1
            else:
                chance = 0.04
            if rng.random() < chance:
                x, y = (a, b) if rng.random() < 0.5 else (b, a)
                facts.append((airlines[x], "codeshare", airlines[y]))

    # Fleet plans: a network carrier 2 + Poisson(1) (at most 5) distinct types, at least one
    # wide-body and one narrow-body; a low-cost carrier one narrow-body (two with probability
    # .3); a regional carrier one regional type (two with probability .3); by fleet weight,
    # COMAC types for Chinese airlines only.
    plan: list[list[int]] = []
    for a in range(n_airline):
        kind = airline_kind[a]
        allowed = [t for t in range(n_type) if airline_country[a] == china or t not in comac]

        narrow = [t for t in allowed if segment[t] == "narrow"]
        wide = [t for t in allowed if segment[t] == "wide"]
        regional = [t for t in allowed if segment[t] == "regional"]
        if kind == "network":
            own = _sample(rng, narrow, type_weight, 1) + _sample(rng, wide, type_weight, 1)
            more = min(3, int(rng.poisson(1.0)))
            own += _sample(rng, [t for t in narrow + wide if t not in own], type_weight, more)
        elif kind == "lowcost":
            own = _sample(rng, narrow, type_weight, 2 if rng.random() < 0.3 else 1)
        else:
            own = _sample(rng, regional, type_weight, 2 if rng.random() < 0.3 else 1)
        plan.append(sorted(own))

    # Aircraft: two for each airline first, the rest by fleet weight; each operated_by its
    # airline and of_type a type of its plan by fleet weight.
    fleet: list[list[int]] = [[] for _ in range(n_airline)]
    every_airline = list(range(n_airline))
    for p in range(n):
        a = p // 2 if p < 2 * n_airline else weighted_pick(rng, every_airline, airline_weight)
        t = weighted_pick(rng, plan[a], type_weight)
        fleet[a].append(t)
        facts.append((aircraft[p], "operated_by", airlines[a]))
        facts.append((aircraft[p], "of_type", types[t]))

    # Pilots: employed_by an airline by its number of aircraft; type_rated on the type of one
    # of its aircraft (uniformly) with probability .92, else on a type its fleet lacks (a new
    # hire), and with probability .3 on one more type by weight (an earlier rating); a rating
    # on a member of a common type rating family is one on every member.
    size_weight = np.array([len(f) for f in fleet], dtype=float)
    employer: list[int] = []
    for x in range(n_pilot):
        a = weighted_pick(rng, every_airline, size_weight)
        employer.append(a)
        allowed = [t for t in range(n_type) if airline_country[a] == china or t not in comac]
        if rng.random() < 0.92:
            ratings = {fleet[a][int(rng.integers(len(fleet[a])))]}
        else:
            ratings = {weighted_pick(rng, [t for t in allowed if t not in fleet[a]], type_weight)}
        if rng.random() < 0.3:
            ratings.add(weighted_pick(rng, allowed, type_weight))
        ratings |= {
            t for t in range(n_type) for r in ratings if family[r] and family[t] == family[r]
        }
        facts.append((pilots[x], "employed_by", airlines[a]))
        facts.extend((pilots[x], "type_rated", types[t]) for t in sorted(ratings))

    kind_types = {
        **dict.fromkeys(countries, "country"),
        **dict.fromkeys(authorities, "authority"),
        **dict.fromkeys(types, "aircraft_type"),
        **dict.fromkeys(makers, "manufacturer"),
        **dict.fromkeys(alliances, "alliance"),
        **dict.fromkeys(kinds, "airline_kind"),
        **dict.fromkeys(levels, "coordination_level"),
        **dict.fromkeys(cities, "city"),
        **dict.fromkeys(airports, "airport"),
        **dict.fromkeys(airlines, "airline"),
        **dict.fromkeys(aircraft, "aircraft"),
        **dict.fromkeys(pilots, "pilot"),
    }

    def build(base: list[LabeledTriple], generator: np.random.Generator) -> World:
        return build_world(
            "aviation",
            base,
            AVIATION_RULES,
            seed=seed,
            size=n,
            rng=generator,
            entity_types=kind_types,
            exception_rates=dict(_EXCEPTION_RATES),
            noise_rates=dict(_NOISE_RATES),
            symmetric=("codeshare",),
            inverse_pairs=(("operates_for", "capacity_partner"),),
            shortcuts=(("sim_check", "flies_type"),),
            valid_fraction=valid_fraction,
            test_fraction=test_fraction,
        )

    # Simulator checks follow the closure, so they are drawn after a first build: the relation
    # is in no rule body, so adding it leaves the closure, the noise and the split unchanged,
    # and a second build from the same generator state gives the same world with it. A pilot
    # has a recurrent sim_check on each type it flies with probability .8 (a withheld
    # flies_type fact, never), and with probability .1 a conversion course on one type by
    # weight that it is not rated on (COMAC types for pilots of Chinese airlines only).
    replay = copy.deepcopy(rng)
    first = build(facts, rng)
    flying = sorted(
        (x, y)
        for split in first.dataset.splits.values()
        for x, relation, y in split.to_labeled_triples()
        if relation == "flies_type"
    )
    checked = {(x, y) for x, y in flying if rng.random() < 0.8}
    rated = {(x, y) for x, r, y in facts if r == "type_rated"}
    every_type = list(range(n_type))
    for x in range(n_pilot):
        if rng.random() < 0.1:
            china_based = airline_country[employer[x]] == china
            other = [
                t
                for t in every_type
                if (pilots[x], types[t]) not in rated and (china_based or t not in comac)
            ]
            checked.add((pilots[x], types[weighted_pick(rng, other, type_weight)]))
    facts.extend((x, "sim_check", y) for x, y in sorted(checked))
    return build(facts, replay)
