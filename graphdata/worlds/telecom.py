r"""A telecommunications world: operators, virtual operators, towers, spectrum, subscribers.

Written in session 28 as a **held-out** world for the explainer, without reading
:mod:`kg.explain`, the explainer benchmarks or their results, and never run with an explainer or
trained on while it was written (run once after session 29's explainer change: RESULTS.md,
"Conditioned picks"): designed from the mobile telecommunications domain (two
network operators in each of eight countries, holding spectrum licences in eight bands, some in
use on their towers and some bands leased; virtual operators without towers hosted on a network
operator's radio network; bilateral roaming agreements that a virtual operator inherits from its
host; towers in cities from five radio vendors; device models supporting some bands; subscribers
in cities with plan features, attached to their network's towers and billed for roaming), not
from how any explainer decides. The rules (:data:`TELECOM_RULES`, length = body atoms):

* ``agreement_mirror: roams_with(O,P) <- roams_with(P,O)``, length 1: a **symmetric** relation
  (:attr:`~graphdata.worlds.World.symmetric`) completed by a rule whose body is its own head
  relation; the recorded agreements (base facts, one direction each) are its only base facts;
* ``host_inverse: hosts(O,M) <- hosted_by(M,O)``, length 1, an **inverse pair** (recorded in
  :attr:`~graphdata.worlds.World.inverse_pairs`; 1-1 by count: 16 virtual operators on 12
  hosts at seed 0) whose derived side is used in
* ``host_roaming: roams_with(M,P) <- hosts(O,M), roams_with(O,P)``, length 2: a virtual
  operator inherits its host's partners, the second body of ``roams_with``: **a head with two
  bodies**, recursive, both of whose body atoms are derived; the closure needs four rounds for
  it. Of the 284 ``roams_with`` facts at seed 0, 34 are recorded agreements, 216 involve a
  virtual operator (74 of them between two) and 145 have a ``host_roaming`` grounding, each
  also a mirror one (the reversed copy of every one of its 46 held-out targets is in train);
* ``roaming_footprint: roams_in(O,K) <- roams_with(O,P), located_in(P,K)``, length 2, the
  countries an operator's partners cover: a chain through the derived ``roams_with`` into the
  country hubs (119 facts at seed 0, 5 of them noise);
* ``band_deployment: deploys(O,B) <- operated_by(T,O), broadcasts(T,B)``, length 2, the bands
  an operator has on air, rolled up from its towers: a dense head whose facts have **many
  groundings** (41 derived facts at seed 0, a median of 5 groundings and at most 22);
* ``device_compatibility: compatible(D,O) <- supports(D,B), licensed(O,B), deploys(O,B)``,
  length 3, the devices an operator supports: the band a device supports must be one the
  operator both holds a licence for and has on air, **two body atoms on the same pair of
  variables** (a cycle of length two, not a chain), one of them derived; either alone derives
  more (at seed 0 14 licences are not in use and 5 deployments are on leased spectrum; the
  join with ``licensed`` alone gives 305 pairs, with ``deploys`` alone 292, both 262) (252
  facts at seed 0, 10 of them noise);
* ``own_network: home_network(S,O) <- subscribes_to(S,O), kind(O,kind_mno)`` and
  ``mvno_network: home_network(S,O) <- subscribes_to(S,M), hosted_by(M,O)``, both length 2:
  the network that carries a subscriber, **a head with two disjoint bodies**, the first
  parallel to the head and **anchored on the constant** ``kind_mno`` hanging off the tail;
  of the 406 ``home_network`` facts at seed 0, .82 have only the first body, .16 only the
  second and .02 none (noise);
* ``roaming_plan: can_roam_in(S,K) <- has_feature(S,feature_roaming), home_network(S,O),
  roams_in(O,K)``, length 3, the countries a subscriber can roam in: the constant
  ``feature_roaming`` **hangs off the head entity** one step, and the chain goes on **through
  two derived relations**, the second itself derived from the recursive ``roams_with`` (128
  subscribers with the feature and 456 facts at seed 0, 13 of them noise);
* a **correlated shortcut**: ``billed_in`` (base: roaming charges, in each country a subscriber
  can roam in with probability .7, never where it is barred, and with probability .08 a day
  pass in a country other than its own, by weight) is in no body; at seed 0 it links .67 of
  the ``can_roam_in`` pairs and .92 of its training pairs are ``can_roam_in`` pairs
  (:attr:`~graphdata.worlds.World.shortcuts`);
* rules of length 1 (two), 2 (five) and 3 (two); 1-1 (``hosted_by``, ``hosts``), N-1
  (``home_network``, ``kind``, ``located_in``, ``operated_by``, ``subscribes_to``,
  ``supplied_by``, ``uses_device``) and N-N (``attached_to``, ``billed_in``, ``broadcasts``,
  ``can_roam_in``, ``compatible``, ``deploys``, ``has_feature``, ``licensed``, ``roams_in``,
  ``roams_with``, ``supports``) relations (by count at seed 0);
* **exceptions**: 6 % of ``roaming_footprint``'s heads (an agreement that excludes the
  partner's country for that operator), 8 % of ``device_compatibility``'s (a device variant the
  operator never certified), 4 % of ``mvno_network``'s (a virtual operator running its own
  core for some subscribers; ``own_network`` is never withheld) and 10 % of
  ``roaming_plan``'s (a subscriber barred from roaming in a country: fair use, a spending cap)
  are withheld; a withheld ``roams_in`` or ``home_network`` fact also leaves out the roaming
  heads only it grounds, and a barred country is never billed (1 of the 50 barred pairs at
  seed 0 has a day pass). ``roams_with`` and ``hosts`` have neither exceptions nor noise (they
  stay symmetric and inverse); **noise**: 2 % of the ``home_network``, 3 % of the ``deploys``
  and ``can_roam_in`` and 4 % of the ``roams_in`` and ``compatible`` facts have no grounding
  (a noise ``home_network``, ``roams_in`` or ``deploys`` fact feeds the rules above like any
  other).

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`): 677
entities (400 subscribers, 160 towers, 33 cities, 25 device models, 16 network and 16 virtual
operators, 8 countries, 8 bands, 5 vendors, 4 features, 2 operator kinds), 20 relations; 5,870
train, 136 valid and 138 test triples; the valid+test targets per rule of their shortest
grounding are ``roaming_plan`` 64, ``own_network`` 60, ``agreement_mirror`` 46,
``device_compatibility`` 42, ``roaming_footprint`` 22, ``mvno_network`` 16,
``band_deployment`` 8, ``host_inverse`` 4 (length 1: 50, 2: 106, 3: 106), and 12 noise facts;
.19 of the targets have more than one grounding; 81 exceptions (50 ``can_roam_in``, 20
``compatible``, 9 ``roams_in``, 2 ``home_network``). **Hubs**: the commonest feature has 213
distinct training neighbours, the largest country 115, the largest network operator 100, the
most popular device 71, the commonest band 64, the commonest vendor 53, the largest city 52 (a
subscriber a median of 9); the 2-hop enclosing subgraphs of the 131 test targets hold a median
of 2,040 training triples (p90 3,091).

**Base facts** (:func:`telecom_world`), with :math:`N` = ``size`` subscribers:
:math:`\max(12, \lfloor N/12 \rfloor)` cities are ``located_in`` a country of ``_COUNTRIES``
(one each first, the rest by weight) with a log-normal size. Each country has two network
operators (``located_in``, ``kind`` ``kind_mno``) of log-normal market share, each
``licensed`` :math:`2 + \text{Poisson}(1)` distinct bands of ``_BANDS`` by licence weight, a
licence in use with probability .8 (at least one), with a main vendor of ``_VENDORS`` by share;
two network operators record a roaming agreement (``roams_with``, one direction at random) with
probability .3 across borders and .08 in one country. :math:`\max(4, \lfloor N/25 \rfloor)`
virtual operators (``kind`` ``kind_mvno``) are ``located_in`` the countries in order of weight,
round robin, each ``hosted_by`` one of its country's network operators by market share.
:math:`\max(40, \lfloor N/2.5 \rfloor)` towers (two for each network operator first, in a city
of its country by size; the rest in a city by size, of one of its country's operators by
share) are ``located_in`` the city and ``operated_by`` the operator, ``broadcasts`` each band in
use with probability .6 (at least one) and, with probability .05, a band by licence weight
(leased spectrum where the operator holds no licence for it), and are ``supplied_by`` the
operator's main vendor with probability .8, else one by share. :math:`\max(12, \lfloor N/16
\rfloor)` device models ``supports`` :math:`2 + \text{Poisson}(1.5)` distinct bands by radio
weight and have a log-normal popularity. A
subscriber is ``located_in`` a city by size, ``subscribes_to`` one of its country's virtual
operators (uniformly) with probability .2, else a network operator by share, ``uses_device`` a
model by popularity, ``has_feature`` each of ``_FEATURES`` by share and is ``attached_to``
:math:`2 + \text{Poisson}(1.5)` towers of its network (its operator or its virtual operator's
host) in its city first, then in the rest of the network, and with probability .15 one more
tower of its city. ``billed_in`` follows the closure and is drawn after a first
:func:`~graphdata.worlds.base.build_world` (above). It is in no rule body, so adding it leaves
the closure, the noise and the split as they were, and a second build from the generator state
of the first gives the same world with it.

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`TELECOM_RULES`.
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

__all__ = ["TELECOM_RULES", "telecom_world"]

#: The planted rules: roaming agreements holding both ways (a symmetric relation completed by a
#: length-1 rule), network operators hosting the virtual operators that name them (an inverse
#: pair), virtual operators inheriting their host's roaming partners (a head with two bodies,
#: recursive through the derived inverse), the countries an operator's partners cover, the
#: bands an operator deploys on its towers, the devices an operator supports (two body atoms on
#: the same operator and band), a subscriber's home network from its own operator (anchored on
#: ``kind_mno``) or its virtual operator's host, and the countries a subscriber with the
#: roaming feature can roam in (anchored on ``feature_roaming`` off the head, through two
#: derived relations).
TELECOM_RULES = """\
agreement_mirror: roams_with(O,P) <- roams_with(P,O)
host_inverse: hosts(O,M) <- hosted_by(M,O)
host_roaming: roams_with(M,P) <- hosts(O,M), roams_with(O,P)
roaming_footprint: roams_in(O,K) <- roams_with(O,P), located_in(P,K)
band_deployment: deploys(O,B) <- operated_by(T,O), broadcasts(T,B)
device_compatibility: compatible(D,O) <- supports(D,B), licensed(O,B), deploys(O,B)
own_network: home_network(S,O) <- subscribes_to(S,O), kind(O,kind_mno)
mvno_network: home_network(S,O) <- subscribes_to(S,M), hosted_by(M,O)
roaming_plan: can_roam_in(S,K) <- has_feature(S,feature_roaming), home_network(S,O), roams_in(O,K)
"""

#: The countries (entity ``country_<name>``) and their weight for cities and subscribers; each
#: has two network operators.
_COUNTRIES = (
    ("germany", 0.2),
    ("france", 0.16),
    ("italy", 0.14),
    ("spain", 0.13),
    ("poland", 0.1),
    ("netherlands", 0.09),
    ("sweden", 0.09),
    ("portugal", 0.09),
)
#: The spectrum bands (entity ``band_<MHz>``): each with its weight in the operators' licences
#: and in the devices' radios.
_BANDS = (
    ("700", 0.9, 0.9),
    ("800", 1.0, 1.0),
    ("900", 0.7, 0.8),
    ("1800", 1.0, 1.0),
    ("2100", 0.8, 0.9),
    ("2600", 0.6, 0.7),
    ("3500", 0.7, 0.5),
    ("26000", 0.2, 0.15),
)
#: The plan features (entity ``feature_<name>``) and the share of subscribers with each.
_FEATURES = (
    ("roaming", 0.3),
    ("5g", 0.35),
    ("tethering", 0.4),
    ("volte", 0.5),
)
#: The radio equipment vendors (entity ``vendor_<name>``) and their share of the operators.
_VENDORS = (
    ("ericsson", 0.3),
    ("nokia", 0.3),
    ("huawei", 0.2),
    ("samsung", 0.1),
    ("zte", 0.1),
)
#: Withheld heads: a partner's agreement that excludes its home country for that operator (a
#: sanctions or licence carve-out), a device variant the operator never certified, a virtual
#: operator running its own core network for some subscribers, a subscriber barred from
#: roaming in a country (fair use, spending cap).
_EXCEPTION_RATES = (
    ("roaming_footprint", 0.06),
    ("device_compatibility", 0.08),
    ("mvno_network", 0.04),
    ("roaming_plan", 0.1),
)
#: Heads without grounding: a roaming country reached through a hub provider, a device
#: certified from a lab test, a second SIM recorded as a home network, a roaming add-on bought
#: for one trip, a band deployed on a small cell off the tower records.
_NOISE_RATES = (
    ("roams_in", 0.04),
    ("compatible", 0.04),
    ("home_network", 0.02),
    ("can_roam_in", 0.03),
    ("deploys", 0.03),
)


def telecom_world(
    size: int = 400,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the telecommunications world (module docstring) and its ground truth.

    Args:
        size: The number of subscribers :math:`N \ge 60`. Default 400 (677 entities, 20
            relations and 6,144 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"telecom"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = telecom_world(80, seed=0)
        >>> w.exception_rates["roaming_plan"], w.shortcuts
        (0.1, (('billed_in', 'can_roam_in'),))
        >>> sorted(r.length for r in w.rules if r.head.relation == "roams_with")
        [1, 2]
    """
    check_world_arguments(size, 60, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    n_country, n_band = len(_COUNTRIES), len(_BANDS)
    n_mno, n_mvno = 2 * n_country, max(4, n // 25)
    n_city, n_tower, n_device = max(12, n // 12), max(40, int(n / 2.5)), max(12, n // 16)
    countries = [f"country_{name}" for name, _ in _COUNTRIES]
    bands = [f"band_{name}" for name, _, _ in _BANDS]
    features = [f"feature_{name}" for name, _ in _FEATURES]
    vendors = [f"vendor_{name}" for name, _ in _VENDORS]
    kinds = ["kind_mno", "kind_mvno"]
    mnos, mvnos = entity_labels("operator", n_mno), entity_labels("mvno", n_mvno)
    cities, towers = entity_labels("city", n_city), entity_labels("tower", n_tower)
    devices, subscribers = entity_labels("device", n_device), entity_labels("subscriber", n)
    facts: list[LabeledTriple] = []
    country_weight = np.array([w for _, w in _COUNTRIES])
    licence_weight = np.array([w for _, w, _ in _BANDS])
    radio_weight = np.array([w for _, _, w in _BANDS])
    vendor_share = np.array([w for _, w in _VENDORS])

    # Cities: one in each country first, the rest by weight (located_in), of log-normal size.
    city_country = (
        list(range(n_country))
        + rng.choice(
            n_country, size=n_city - n_country, p=country_weight / country_weight.sum()
        ).tolist()
    )
    facts.extend((cities[c], "located_in", countries[k]) for c, k in enumerate(city_country))
    city_size = rng.lognormal(0.0, 0.8, n_city)

    # Network operators: two in each country (located_in, kind_mno), of log-normal market
    # share, each licensed 2 + Poisson(1) distinct bands by licence weight, a licence in use
    # with probability .8 (at least one), and a main radio vendor by share.
    mno_country = [o // 2 for o in range(n_mno)]
    facts.extend((mnos[o], "located_in", countries[k]) for o, k in enumerate(mno_country))
    facts.extend((mnos[o], "kind", "kind_mno") for o in range(n_mno))
    market = rng.lognormal(0.0, 0.5, n_mno)
    in_use: list[list[int]] = []
    for o in range(n_mno):
        k = min(n_band, 2 + int(rng.poisson(1.0)))
        held = sorted(
            int(b)
            for b in rng.choice(
                n_band, size=k, replace=False, p=licence_weight / licence_weight.sum()
            )
        )
        facts.extend((mnos[o], "licensed", bands[b]) for b in held)
        used = [b for b in held if rng.random() < 0.8]
        in_use.append(used or [held[int(rng.integers(len(held)))]])
    main_vendor = rng.choice(len(vendors), size=n_mno, p=vendor_share).tolist()

    # Roaming agreements between network operators (roams_with, base, recorded in one
    # direction): a pair in different countries with probability .3, in the same country .08
    # (national roaming).
    for o in range(n_mno):
        for p in range(o + 1, n_mno):
            chance = 0.08 if mno_country[o] == mno_country[p] else 0.3
            if rng.random() < chance:
                a, b = (o, p) if rng.random() < 0.5 else (p, o)
                facts.append((mnos[a], "roams_with", mnos[b]))

    # Virtual operators: one in each of the largest countries first, the rest by weight
    # (located_in, kind_mvno), each hosted_by a network operator of its country by share.
    order = np.argsort(-country_weight, kind="stable").tolist()
    mvno_country = (order * n_mvno)[:n_mvno]
    mvno_host: list[int] = []
    for m, k in enumerate(mvno_country):
        host = weighted_pick(rng, [2 * k, 2 * k + 1], market)
        mvno_host.append(host)
        facts.append((mvnos[m], "located_in", countries[k]))
        facts.append((mvnos[m], "kind", "kind_mvno"))
        facts.append((mvnos[m], "hosted_by", mnos[host]))

    # Towers: two for each network operator first (in a city of its country by size), the
    # rest in a city by size, operated_by an operator of its country by market share; a tower
    # broadcasts each band in use by its operator with probability .6 (at least one) and, with
    # probability .05, a band its operator does not hold (leased spectrum); it is supplied_by
    # its operator's main vendor with probability .8, else by share.
    tower_city: list[int] = []
    tower_operator: list[int] = []
    every_city = list(range(n_city))
    for t in range(n_tower):
        if t < 2 * n_mno:
            o = t // 2
            c = weighted_pick(
                rng, [c for c in every_city if city_country[c] == mno_country[o]], city_size
            )
        else:
            c = weighted_pick(rng, every_city, city_size)
            k = city_country[c]
            o = weighted_pick(rng, [2 * k, 2 * k + 1], market)
        tower_city.append(c)
        tower_operator.append(o)
        on_air = {b for b in in_use[o] if rng.random() < 0.6}
        on_air = on_air or {in_use[o][int(rng.integers(len(in_use[o])))]}
        if rng.random() < 0.05:
            on_air.add(int(rng.choice(n_band, p=licence_weight / licence_weight.sum())))
        facts.append((towers[t], "located_in", cities[c]))
        facts.append((towers[t], "operated_by", mnos[o]))
        facts.extend((towers[t], "broadcasts", bands[b]) for b in sorted(on_air))
        vendor = (
            main_vendor[o] if rng.random() < 0.8 else int(rng.choice(len(vendors), p=vendor_share))
        )
        facts.append((towers[t], "supplied_by", vendors[vendor]))

    # Device models: each supports 2 + Poisson(1.5) distinct bands by radio weight, of
    # log-normal popularity.
    for d in range(n_device):
        k = min(n_band, 2 + int(rng.poisson(1.5)))
        radios = rng.choice(n_band, size=k, replace=False, p=radio_weight / radio_weight.sum())
        facts.extend((devices[d], "supports", bands[int(b)]) for b in sorted(radios))
    popularity = rng.lognormal(0.0, 1.0, n_device)

    # Subscribers: located_in a city by size; subscribes_to a virtual operator of the city's
    # country with probability .2 where there is one (by a uniform pick), else a network
    # operator of the country by market share; uses_device a model by popularity; has_feature
    # each feature by its share. A subscriber is attached_to 2 + Poisson(1.5) distinct towers
    # of its network (its operator, or its virtual operator's host) in its city, then in its
    # country, and with probability .15 one more tower of its city of any operator.
    feature_share = [s for _, s in _FEATURES]
    every_tower = list(range(n_tower))
    subscriber_city: list[int] = []
    for s in range(n):
        c = weighted_pick(rng, every_city, city_size)
        subscriber_city.append(c)
        k = city_country[c]
        virtual = [m for m in range(n_mvno) if mvno_country[m] == k]
        if virtual and rng.random() < 0.2:
            m = virtual[int(rng.integers(len(virtual)))]
            operator, network = mvnos[m], mvno_host[m]
        else:
            network = weighted_pick(rng, [2 * k, 2 * k + 1], market)
            operator = mnos[network]
        facts.append((subscribers[s], "located_in", cities[c]))
        facts.append((subscribers[s], "subscribes_to", operator))
        facts.append(
            (
                subscribers[s],
                "uses_device",
                devices[weighted_pick(rng, list(range(n_device)), popularity)],
            )
        )
        facts.extend(
            (subscribers[s], "has_feature", features[f])
            for f in range(len(features))
            if rng.random() < feature_share[f]
        )
        own = [t for t in every_tower if tower_operator[t] == network]
        local = [t for t in own if tower_city[t] == c]
        wanted = min(len(own), 2 + int(rng.poisson(1.5)))
        chosen = [int(t) for t in rng.permutation(local)[:wanted]]
        rest = [t for t in own if t not in chosen]
        chosen += [int(t) for t in rng.permutation(rest)[: wanted - len(chosen)]]
        if rng.random() < 0.15:
            nearby = [t for t in every_tower if tower_city[t] == c and t not in chosen]
            if nearby:
                chosen.append(nearby[int(rng.integers(len(nearby)))])
        facts.extend((subscribers[s], "attached_to", towers[t]) for t in sorted(chosen))

    types = {
        **dict.fromkeys(countries, "country"),
        **dict.fromkeys(bands, "band"),
        **dict.fromkeys(features, "feature"),
        **dict.fromkeys(vendors, "vendor"),
        **dict.fromkeys(kinds, "operator_kind"),
        **dict.fromkeys(mnos, "operator"),
        **dict.fromkeys(mvnos, "mvno"),
        **dict.fromkeys(cities, "city"),
        **dict.fromkeys(towers, "tower"),
        **dict.fromkeys(devices, "device"),
        **dict.fromkeys(subscribers, "subscriber"),
    }

    def build(base: list[LabeledTriple], generator: np.random.Generator) -> World:
        return build_world(
            "telecom",
            base,
            TELECOM_RULES,
            seed=seed,
            size=n,
            rng=generator,
            entity_types=types,
            exception_rates=dict(_EXCEPTION_RATES),
            noise_rates=dict(_NOISE_RATES),
            symmetric=("roams_with",),
            inverse_pairs=(("hosted_by", "hosts"),),
            shortcuts=(("billed_in", "can_roam_in"),),
            valid_fraction=valid_fraction,
            test_fraction=test_fraction,
        )

    # Roaming charges follow the closure, so they are drawn after a first build: the relation
    # is in no rule body, so adding it leaves the closure, the noise and the split unchanged,
    # and a second build from the same generator state gives the same world with it. A
    # subscriber is billed_in each country it can roam in with probability .7 (a barred one,
    # a withheld can_roam_in fact, never), and with probability .08 in one country by weight
    # other than its own (a pay-per-use day pass).
    replay = copy.deepcopy(rng)
    first = build(facts, rng)
    roaming = sorted(
        (x, y)
        for split in first.dataset.splits.values()
        for x, relation, y in split.to_labeled_triples()
        if relation == "can_roam_in"
    )
    billed = {(x, y) for x, y in roaming if rng.random() < 0.7}
    every_country = list(range(n_country))
    for s in range(n):
        if rng.random() < 0.08:
            home = city_country[subscriber_city[s]]
            other = weighted_pick(rng, [k for k in every_country if k != home], country_weight)
            billed.add((subscribers[s], countries[other]))
    facts.extend((x, "billed_in", y) for x, y in sorted(billed))
    return build(facts, replay)
