r"""A construction and real-estate world: sites, developers, contractors, permits, inspections.

Written in session 32 by a helper as a **held-out** world for the explainer, without reading
:mod:`kg.explain`, the explainer benchmarks or their results, and never run with an explainer or
trained on while it was written: designed from the construction and real-estate domain (sites in
the districts of cities in three countries, each city with a building authority and each country
with a development corporation that permits the sites of its regeneration districts; developers
with their framework contractors and corporate lenders; main contractors and the subcontractors of
their supply chains; project finance; permits; building inspectors and their visits), not from how
any explainer decides. The rules (:data:`CONSTRUCTION_RULES`, length = body atoms):

* ``contract_inverse: builds(C,S) <- built_by(S,C)``, length 1, an **inverse pair** (recorded in
  :attr:`~graphdata.worlds.World.inverse_pairs`; 1-N, 360 sites at seed 0, one main contractor
  each) with no exception or noise;
* ``facility_lending: lends_to(L,D) <- facility_with(D,L)``, length 1, reading a corporate
  facility backwards (a one-way rule, not an inverse pair), and ``project_lending: lends_to(L,D)
  <- financed_by(S,L), developed_by(S,D)``, length 2: **a head with two bodies** (of the 211
  ``lends_to`` facts at seed 0, .32 have both, .09 only the facility, .56 only a project loan,
  .03 neither);
* ``permit_issuer: permitted_by(S,A) <- permit_for(P,S), issued_by(P,A)``, length 2, and
  ``local_authority: permitted_by(S,A) <- located_in(S,D), located_in(D,Y), jurisdiction(A,Y)``,
  length 3, a chain up the place hierarchy: **a second head with two bodies**, mostly agreeing
  (of the 403 ``permitted_by`` facts at seed 0, .59 have both, .11 only a permit, 21 of them of a
  development corporation and the rest of another city's authority, .28 only the city, 85 of
  them for a site without a permit yet, and .02 neither);
* ``client_relationship: works_for(C,D) <- builds(C,S), developed_by(S,D)``, length 2, a chain
  whose first atom is the **derived** inverse;
* ``trade_registration: registers_with(K,A) <- works_on(K,S), permitted_by(S,A)``, length 2, the
  authorities a subcontractor registers with, through the **derived** two-body ``permitted_by``
  (a dense N-N head, 352 facts at seed 0);
* ``coordination: coordinates_with(C,K) <- built_by(S,C), adjacent_to(S,T), built_by(T,K), C !=
  K``, length 3, the main contractors of neighbouring sites: a **symmetric** head
  (:attr:`~graphdata.worlds.World.symmetric`, 200 facts at seed 0, no exception or noise) from a
  chain through the symmetric base ``adjacent_to`` (362 facts), with an **inequality between the
  two head variables** (8 contractors build two neighbouring sites themselves);
* ``completion_signoff: certified_by(S,A) <- permitted_by(S,A), inspected(X,S),
  employed_by(X,A)``, length 3, a **triangle** whose first atom is the derived two-body
  ``permitted_by``, parallel to the head: an inspector of an authority that did not permit the
  site (35 such site-authority pairs at seed 0) signs nothing off;
* ``housing_levy: owes_levy(D,A) <- developed_by(S,D), use_class(S,use_residential),
  permitted_by(S,A)``, length 3, the affordable-housing levy a developer owes an authority: a
  **star** on the site ``S`` (in every body atom, not in the head) with **a constant** in the
  second atom and the derived ``permitted_by`` in the third; student housing (``use_student``,
  in no body; 24 developer-authority pairs at seed 0 only through it) owes none;
* a **correlated shortcut** (:attr:`~graphdata.worlds.World.shortcuts`), in no body:
  ``framework_with`` (a developer's framework contractors, which build its sites with probability
  .85) links .68 of the ``works_for`` pairs, and .63 of its training pairs are ``works_for``
  pairs (seed 0);
* rules of length 1 (two), 2 (four) and 3 (four); 1-1 (``adjacent_to``, ``jurisdiction``), 1-N
  (``builds``, ``inspected``), N-1 (``built_by``, ``certified_by``, ``developed_by``,
  ``employed_by``, ``facility_with``, ``financed_by``, ``issued_by``, ``located_in``,
  ``permit_for``, ``permitted_by``, ``use_class``) and N-N (``coordinates_with``,
  ``framework_with``, ``lends_to``, ``owes_levy``, ``registers_with``, ``works_for``,
  ``works_on``) relations (by count at seed 0);
* **exceptions**: 3 % of ``facility_lending``'s heads (a cancelled facility), 5 % of
  ``project_lending``'s (a loan sold to a debt fund), 2 % of ``permit_issuer``'s (a permit
  surrendered), 6 % of ``local_authority``'s (building control with a private approved
  inspector), 4 % of ``client_relationship``'s (work done through a subsidiary), 3 % of
  ``trade_registration``'s (a trade working under its contractor's registration), 8 % of
  ``completion_signoff``'s (a sign-off pending snagging) and 10 % of ``housing_levy``'s (a
  viability waiver) are withheld; a withheld ``permitted_by`` fact also leaves out the heads only
  it grounds. **Noise**: 3 % of the ``lends_to`` (a bilateral loan), 2 % of the
  ``permitted_by`` (a delegation agreement), 3 % of the ``works_for`` (call-off work), 2 % of the
  ``registers_with`` (a registration ahead of a tender), 3 % of the ``certified_by`` (an earlier
  phase signed off) and 4 % of the ``owes_levy`` facts (a legacy planning agreement) have no
  grounding; a noise ``permitted_by`` fact feeds the other bodies like any other.

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`):
1,213 entities (508 permits, 360 sites, 72 subcontractors, 60 districts, 60 developers, 60
inspectors, 45 main contractors, 15 authorities (12 city authorities and 3 development
corporations), 12 cities, 12 lenders, 6 use classes, 3 countries), 22 relations; 7,318 train, 181
valid and 183 test triples; the valid+test targets per rule of their shortest grounding are
``contract_inverse`` 72, ``permit_issuer`` 57, ``trade_registration`` 56, ``coordination`` 40,
``project_lending`` 28, ``client_relationship`` 27, ``completion_signoff`` 27,
``local_authority`` 22, ``housing_levy`` 15, ``facility_lending`` 14 (length 1: 86, 2: 168, 3:
104), and 6 noise facts; .39 of the targets have more than one grounding; 70 exceptions (17
``certified_by``, 14 ``owes_levy``, 13 ``permitted_by``, 13 ``registers_with``, 8 ``lends_to``, 5
``works_for``). **Hubs**: ``authority_city_poland_0`` has 517 distinct training neighbours, the
busiest subcontractor 172, ``use_residential`` 143, the busiest lender 124, the busiest main
contractor 82 (a site a median of 14); the 2-hop enclosing subgraphs of 180 sampled test targets
hold a median of 1,928 training triples (p90 3,532.8; at seeds 1-3, 40 targets each, p90
3,977.8, 3,920.2 and 3,984.6).

**Base facts** (:func:`construction_world`), with :math:`N` = ``size`` sites: the cities of
``_COUNTRIES`` (the first a capital, three times larger) are ``located_in`` their country, each
with an authority that has ``jurisdiction`` over it; each country's development corporation is
``located_in`` its capital. :math:`\max(24, \lfloor N/6 \rfloor)` districts, one in each city first
and the rest by city size, are ``located_in`` a city; each is a regeneration district of the
development corporation with probability .12 (not in the graph).
:math:`\max(12, \lfloor N/6 \rfloor)` developers, :math:`\max(12, \lfloor N/8 \rfloor)` main
contractors and :math:`\max(20, \lfloor N/5 \rfloor)` subcontractors are ``located_in`` a city of a
country drawn by weight, :math:`\max(6, \lfloor N/30 \rfloor)` lenders in a capital; each has a
log-normal market weight. A developer has 2 + Poisson(1) framework contractors of its country
(``framework_with``) and 1 + Poisson(.5) facility lenders (``facility_with``); a main contractor
a supply chain of 5 + Poisson(3) subcontractors of its country (not in the graph). Each site is
``located_in`` a district by weight and has a ``use_class`` (``_TYPES``); it is
``developed_by`` a developer of its country (any with probability .25), ``built_by`` one of the
developer's framework contractors with probability .85 (else a contractor of the country, any
with probability .1), ``financed_by`` 0 (.15), 1 (.6) or 2 (.25) lenders (the first a facility
lender of the developer with probability .6), and 3 + Poisson(3) subcontractors ``works_on`` it
(each from the contractor's supply chain with probability .7). In each district the sites line a
street in a random order, consecutive ones ``adjacent_to`` each other with probability .6 (both
directions). A site has Poisson(1.3) permits (``permit_for``), ``issued_by`` the development
corporation in a regeneration district (probability .9), else by its city's authority or, with
probability .04, another authority of the country. :math:`\max(30, \lfloor N/6 \rfloor)`
inspectors are ``employed_by`` a city authority by city size or (probability .1) a development
corporation; a completed site (probability .6) is ``inspected`` by 1 + Poisson(.4) inspectors,
each of an authority that permitted it with probability .85, else of any authority of the
country.

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`CONSTRUCTION_RULES`.
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

__all__ = ["CONSTRUCTION_RULES", "construction_world"]

#: The planted rules: main contracts (an inverse pair), lending to developers (a corporate
#: facility or a project loan), the authority that permits a site (its permits or its city),
#: a contractor's clients (through the derived contracts), trade registration (through the
#: derived authority), neighbouring contractors (symmetric, with an inequality), completion
#: sign-off (a triangle through the derived authority) and affordable-housing contributions (a
#: star with a constant).
CONSTRUCTION_RULES = """\
contract_inverse: builds(C,S) <- built_by(S,C)
facility_lending: lends_to(L,D) <- facility_with(D,L)
project_lending: lends_to(L,D) <- financed_by(S,L), developed_by(S,D)
permit_issuer: permitted_by(S,A) <- permit_for(P,S), issued_by(P,A)
local_authority: permitted_by(S,A) <- located_in(S,D), located_in(D,Y), jurisdiction(A,Y)
client_relationship: works_for(C,D) <- builds(C,S), developed_by(S,D)
trade_registration: registers_with(K,A) <- works_on(K,S), permitted_by(S,A)
coordination: coordinates_with(C,K) <- built_by(S,C), adjacent_to(S,T), built_by(T,K), C != K
completion_signoff: certified_by(S,A) <- permitted_by(S,A), inspected(X,S), employed_by(X,A)
housing_levy: owes_levy(D,A) <- developed_by(S,D), use_class(S,use_residential), permitted_by(S,A)
"""

#: The countries (entity ``country_<name>``): weight among sites and firms, and the number of
#: cities (entity ``city_<name>_<i>``, the first its capital). Each city has a building
#: authority (entity ``authority_<city>``); each country a development corporation (entity
#: ``devcorp_<name>``) that permits the sites of its designated regeneration districts.
_COUNTRIES = (
    ("ireland", 0.22, 3),
    ("portugal", 0.33, 4),
    ("poland", 0.45, 5),
)
#: Building types (entity ``type_<name>``) and their shares of sites. Student housing is
#: residential in use but not ``use_residential``, so it owes no contribution.
_TYPES = (
    ("residential", 0.36),
    ("office", 0.17),
    ("retail", 0.10),
    ("industrial", 0.10),
    ("mixed_use", 0.15),
    ("student", 0.12),
)
#: Withheld heads: a cancelled corporate facility, a project loan sold to a debt fund, a
#: permit surrendered, a site whose building control went to a private approved inspector, work
#: done through a subsidiary, a trade working under its contractor's registration, a sign-off
#: pending snagging, a viability waiver of the contribution.
_EXCEPTION_RATES = (
    ("facility_lending", 0.03),
    ("project_lending", 0.05),
    ("permit_issuer", 0.02),
    ("local_authority", 0.06),
    ("client_relationship", 0.04),
    ("trade_registration", 0.03),
    ("completion_signoff", 0.08),
    ("housing_levy", 0.10),
)
#: Heads without grounding: a bilateral loan outside any project or facility, an authority
#: acting under a delegation agreement, a contractor's call-off work for a developer, a trade
#: registered ahead of a tender, a sign-off of an earlier phase, a contribution under a legacy
#: planning agreement.
_NOISE_RATES = (
    ("lends_to", 0.03),
    ("permitted_by", 0.02),
    ("works_for", 0.03),
    ("registers_with", 0.02),
    ("certified_by", 0.03),
    ("owes_levy", 0.04),
)


def _pick(rng: np.random.Generator, weight: np.ndarray) -> int:
    """One index drawn with probability proportional to ``weight``."""
    return int(rng.choice(len(weight), p=weight / weight.sum()))


def construction_world(
    size: int = 360,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the construction world (module docstring) and its ground truth.

    Args:
        size: The number of construction sites :math:`N \ge 60`. Default 360 (1,213 entities,
            22 relations and 7,682 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"construction"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = construction_world(80, seed=0)
        >>> w.exception_rates["housing_levy"], w.inverse_pairs
        (0.1, (('built_by', 'builds'),))
        >>> sorted(r.length for r in w.rules if r.head.relation == "permitted_by")
        [2, 3]
        >>> w.symmetric, w.shortcuts[0]
        (('adjacent_to', 'coordinates_with'), ('framework_with', 'works_for'))
    """
    check_world_arguments(size, 60, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    n_country = len(_COUNTRIES)
    names = [name for name, _, _ in _COUNTRIES]
    countries = [f"country_{name}" for name in names]
    country_weight = np.array([w for _, w, _ in _COUNTRIES])
    facts: list[LabeledTriple] = []

    # Cities: the countries' cities (the first a capital), located_in their country, of
    # log-normal size (a capital three times larger); each has a building authority with
    # jurisdiction over it. Districts: max(24, N/6), one in each city first, the rest by city
    # size, located_in their city; each designated to its country's development corporation with
    # probability .12 (a regeneration area; not in the graph).
    city_labels: list[str] = []
    city_country: list[int] = []
    for k, (name, _, count) in enumerate(_COUNTRIES):
        for i in range(count):
            city_labels.append(f"city_{name}_{i}")
            city_country.append(k)
    n_city = len(city_labels)
    city_size = rng.lognormal(0.0, 0.6, n_city)
    for k in range(n_country):
        capital = city_country.index(k)
        city_size[capital] *= 3.0
    city_size *= np.array([country_weight[k] for k in city_country])
    facts.extend((city_labels[y], "located_in", countries[k]) for y, k in enumerate(city_country))
    authorities = [f"authority_{c}" for c in city_labels]
    facts.extend((authorities[y], "jurisdiction", city_labels[y]) for y in range(n_city))
    devcorps = [f"devcorp_{name}" for name in names]
    capitals = [city_country.index(k) for k in range(n_country)]
    facts.extend((devcorps[k], "located_in", city_labels[capitals[k]]) for k in range(n_country))
    n_district = max(24, n // 6)
    district_city = list(range(n_city)) + [
        _pick(rng, city_size) for _ in range(n_district - n_city)
    ]
    district_weight = rng.lognormal(0.0, 0.5, n_district) * city_size[district_city]
    designated = (rng.random(n_district) < 0.12).tolist()
    districts = entity_labels("district", n_district)
    facts.extend((districts[d], "located_in", city_labels[y]) for d, y in enumerate(district_city))

    # Firms, each located_in a city of its country (by size): max(12, N/6) developers,
    # max(12, N/8) main contractors, max(20, N/5) subcontractors and max(6, N/30) lenders (in
    # capitals). Each firm has a log-normal market weight.
    def firms(prefix: str, count: int, capital_only: bool = False) -> tuple[list[str], list[int]]:
        labels = entity_labels(prefix, count)
        home: list[int] = []
        for label in labels:
            k = _pick(rng, country_weight)
            pool = (
                [capitals[k]]
                if capital_only
                else [y for y in range(n_city) if city_country[y] == k]
            )
            y = weighted_pick(rng, pool, city_size)
            home.append(y)
            facts.append((label, "located_in", city_labels[y]))
        return labels, home

    developers, developer_city = firms("developer", max(12, n // 6))
    contractors, contractor_city = firms("contractor", max(12, n // 8))
    subs, sub_city = firms("subcontractor", max(20, n // 5))
    lenders, _ = firms("lender", max(6, n // 30), capital_only=True)
    developer_weight = rng.lognormal(0.0, 0.8, len(developers))
    contractor_weight = rng.lognormal(0.0, 0.8, len(contractors))
    sub_weight = rng.lognormal(0.0, 0.7, len(subs))
    lender_weight = rng.lognormal(0.0, 0.6, len(lenders))

    def in_country(home: list[int], k: int) -> list[int]:
        return [i for i, y in enumerate(home) if city_country[y] == k]

    # Frameworks and facilities: each developer has 2 + Poisson(1) framework contractors of its
    # country (by weight) and 1 + Poisson(.5) corporate facility lenders (by weight).
    framework: list[list[int]] = []
    for dev, y in enumerate(developer_city):
        pool = in_country(contractor_city, city_country[y]) or list(range(len(contractors)))
        want = min(len(pool), 2 + int(rng.poisson(1.0)))
        w = contractor_weight[pool]
        chosen = rng.choice(len(pool), size=want, replace=False, p=w / w.sum())
        framework.append(sorted(pool[i] for i in chosen))
        facts.extend((contractors[pool[i]], "framework_with", developers[dev]) for i in chosen)
    facility: list[list[int]] = []
    for dev in range(len(developers)):
        want = min(len(lenders), 1 + int(rng.poisson(0.5)))
        chosen = rng.choice(
            len(lenders), size=want, replace=False, p=lender_weight / lender_weight.sum()
        )
        facility.append(sorted(int(i) for i in chosen))
        facts.extend((developers[dev], "facility_with", lenders[int(i)]) for i in chosen)

    # Supply chains: each main contractor's 5 + Poisson(3) preferred subcontractors of its
    # country (by weight).
    supply: list[list[int]] = []
    for y in contractor_city:
        pool = in_country(sub_city, city_country[y]) or list(range(len(subs)))
        want = min(len(pool), 5 + int(rng.poisson(3.0)))
        w = sub_weight[pool]
        chosen = rng.choice(len(pool), size=want, replace=False, p=w / w.sum())
        supply.append(sorted(pool[i] for i in chosen))

    # Sites: N, in a district by weight; a use_class by share; developed_by a developer of the
    # country with probability .75 (else any), by weight; built_by a framework contractor of
    # the developer with probability .85, else a contractor of the country (any with
    # probability .1); financed_by 0 (.15), 1 (.6) or 2 (.25) lenders, the first a facility
    # lender of the developer with probability .6; works_on by 3 + Poisson(3) subcontractors,
    # each from the contractor's supply chain with probability .7, else of the country.
    sites = entity_labels("site", n)
    type_labels = [f"use_{name}" for name, _ in _TYPES]
    type_share = np.array([p for _, p in _TYPES])
    site_district = [_pick(rng, district_weight) for _ in range(n)]
    site_city = [district_city[d] for d in site_district]
    for s in range(n):
        k = city_country[site_city[s]]
        facts.append((sites[s], "located_in", districts[site_district[s]]))
        facts.append((sites[s], "use_class", type_labels[_pick(rng, type_share)]))
        pool = in_country(developer_city, k)
        if not pool or rng.random() < 0.25:
            pool = list(range(len(developers)))
        dev = weighted_pick(rng, pool, developer_weight)
        facts.append((sites[s], "developed_by", developers[dev]))
        if rng.random() < 0.85:
            pool = framework[dev]
        else:
            pool = in_country(contractor_city, k)
            if not pool or rng.random() < 0.1:
                pool = list(range(len(contractors)))
        c = weighted_pick(rng, pool, contractor_weight)
        facts.append((sites[s], "built_by", contractors[c]))
        u = rng.random()
        count = 0 if u < 0.15 else 1 if u < 0.75 else 2
        banks: set[int] = set()
        for _ in range(count):
            pool = facility[dev] if not banks and rng.random() < 0.6 else list(range(len(lenders)))
            banks.add(weighted_pick(rng, pool, lender_weight))
        facts.extend((sites[s], "financed_by", lenders[i]) for i in sorted(banks))
        trades: set[int] = set()
        local = in_country(sub_city, k) or list(range(len(subs)))
        for _ in range(3 + int(rng.poisson(3.0))):
            pool = supply[c] if rng.random() < 0.7 else local
            trades.add(weighted_pick(rng, pool, sub_weight))
        facts.extend((subs[i], "works_on", sites[s]) for i in sorted(trades))

    # Adjacency: in each district, the sites along a street (a random order), consecutive ones
    # adjacent_to each other with probability .6; both directions (symmetric).
    adjacent: set[tuple[int, int]] = set()
    for d in range(n_district):
        row = [s for s in range(n) if site_district[s] == d]
        row = [row[i] for i in rng.permutation(len(row))]
        for a, b in zip(row, row[1:]):
            if rng.random() < 0.6:
                adjacent |= {(a, b), (b, a)}
    facts.extend((sites[a], "adjacent_to", sites[b]) for a, b in sorted(adjacent))

    # Permits: Poisson(1.3) a site (planning, building, demolition, hoarding; the kind is not in
    # the graph), permit_for it and issued_by its development corporation (in a designated
    # district, with probability .9), else by its city's authority, or (probability .04, a
    # site across a boundary) another authority of its country.
    permit_rows: list[tuple[int, str]] = []
    for s in range(n):
        y, k = site_city[s], city_country[site_city[s]]
        for _ in range(int(rng.poisson(1.3))):
            if designated[site_district[s]] and rng.random() < 0.9:
                issuer = devcorps[k]
            elif rng.random() < 0.04:
                others = [x for x in range(n_city) if city_country[x] == k and x != y]
                issuer = (
                    authorities[others[int(rng.integers(len(others)))]]
                    if others
                    else authorities[y]
                )
            else:
                issuer = authorities[y]
            permit_rows.append((s, issuer))
    permits = entity_labels("permit", len(permit_rows))
    for p, (s, issuer) in enumerate(permit_rows):
        facts.append((permits[p], "permit_for", sites[s]))
        facts.append((permits[p], "issued_by", issuer))
    site_issuers: dict[int, set[str]] = {}
    for s, issuer in permit_rows:
        site_issuers.setdefault(s, set()).add(issuer)

    # Inspectors: max(30, N/6), employed_by a city authority (by city size) or a development
    # corporation (probability .1). A completed site (probability .6) is inspected by
    # 1 + Poisson(.4) inspectors: one of an authority that permitted it (its city's, or a
    # permit issuer's) with probability .85, else of another authority of the country.
    n_inspector = max(30, n // 6)
    inspectors = entity_labels("inspector", n_inspector)
    employer: list[str] = []
    for x in range(n_inspector):
        if rng.random() < 0.1:
            employer.append(devcorps[_pick(rng, country_weight)])
        else:
            employer.append(authorities[_pick(rng, city_size)])
        facts.append((inspectors[x], "employed_by", employer[x]))
    staff: dict[str, list[int]] = {}
    for x, boss in enumerate(employer):
        staff.setdefault(boss, []).append(x)
    authority_country = {authorities[y]: city_country[y] for y in range(n_city)}
    authority_country |= {devcorps[k]: k for k in range(n_country)}
    country_staff = {
        k: [x for x in range(n_inspector) if authority_country[employer[x]] == k]
        for k in range(n_country)
    }
    for s in range(n):
        if rng.random() >= 0.6:
            continue
        y, k = site_city[s], city_country[site_city[s]]
        own = sorted({authorities[y]} | site_issuers.get(s, set()))
        mine = [x for boss in own for x in staff.get(boss, [])]
        visits: set[int] = set()
        for _ in range(1 + int(rng.poisson(0.4))):
            pool = mine if mine and rng.random() < 0.85 else country_staff[k]
            if pool:
                visits.add(pool[int(rng.integers(len(pool)))])
        facts.extend((inspectors[x], "inspected", sites[s]) for x in sorted(visits))

    kind_types = {
        **dict.fromkeys(countries, "country"),
        **dict.fromkeys(city_labels, "city"),
        **dict.fromkeys(districts, "district"),
        **dict.fromkeys(authorities, "authority"),
        **dict.fromkeys(devcorps, "authority"),
        **dict.fromkeys(developers, "developer"),
        **dict.fromkeys(contractors, "contractor"),
        **dict.fromkeys(subs, "subcontractor"),
        **dict.fromkeys(lenders, "lender"),
        **dict.fromkeys(sites, "site"),
        **dict.fromkeys(type_labels, "use_class"),
        **dict.fromkeys(permits, "permit"),
        **dict.fromkeys(inspectors, "inspector"),
    }
    return build_world(
        "construction",
        facts,
        CONSTRUCTION_RULES,
        seed=seed,
        size=n,
        rng=rng,
        entity_types=kind_types,
        exception_rates=dict(_EXCEPTION_RATES),
        noise_rates=dict(_NOISE_RATES),
        symmetric=("adjacent_to", "coordinates_with"),
        inverse_pairs=(("built_by", "builds"),),
        shortcuts=(("framework_with", "works_for"),),
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
    )
