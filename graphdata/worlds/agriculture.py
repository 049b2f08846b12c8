r"""An agriculture world: farms, fields, crops, varieties, soils, regions, cooperatives, buyers.

Written in session 27 as a **held-out** world for the explainer, without reading :mod:`kg.explain`,
the explainer benchmarks or their results, and never run with an explainer or trained on while it
was written (run once after session 28's explainer change: RESULTS.md, "A condition on a constant at
a node of a path"): designed from the farming domain (farms whose fields of six soil types grow
varieties of twelve crops suited to five climate zones, regions with a weather station each,
cooperatives delivering to processors and wholesale markets, supply contracts, agronomists, pests on
host crops, treatments, certifications and the annual crop declaration), not from how any explainer
decides. The rules (:data:`AGRICULTURE_RULES`, length = body atoms):

* ``advisor_inverse: advises(A,F) <- advised_by(F,A)``, length 1, an **inverse pair**
  (recorded in :attr:`~graphdata.worlds.World.inverse_pairs`; ``advised_by`` N-1: one
  agronomist a farm; ``advises`` 1-N);
* ``contract_supply: supplies(F,B) <- contracted_with(F,B)``, length 1, and ``coop_channel:
  supplies(F,B) <- member_of(F,K), delivers_to(K,B)``, length 2: the buyers and markets a farm
  supplies, **a head with two bodies** (a contract, or its cooperative's outlets); of the 677
  ``supplies`` facts at seed 0, .03 have both bodies, .07 only the contract, .87 only the
  cooperative and .03 none (noise); ``supplies`` is never a base fact and is **used in another
  body**:
* ``local_sourcing: local_supplier(F,B) <- supplies(F,B), located_in(F,R), located_in(B,R)``,
  length 3, a **triangle** (farm, buyer, region) through the derived ``supplies``, parallel to
  the head (86 facts at seed 0, 4 of them noise);
* ``field_harvest: produces(F,C) <- part_of(L,F), grows(L,V), variety_of(V,C)``, length 3, a
  **chain** from the farm through a field and its variety to the crop (324 facts at seed 0),
  whose derived relation is **used in another body**:
* ``host_crop: at_risk(F,P) <- produces(F,C), attacks(P,C)``, length 2, a chain through the
  derived ``produces`` (576 facts at seed 0, derived in the closure's second round);
* ``co_membership: co_member(F,G) <- member_of(F,K), member_of(G,K), F != G``, length 2, a
  **symmetric** relation from a **star with an inequality** around the cooperative (1,060
  facts at seed 0, 182 of them among the largest cooperative's 14 members; the reversed copy
  of .78 of its 212 held-out targets is in train);
* ``group_certification: certified(F,cert_globalgap) <- member_of(F,K),
  certified(K,cert_globalgap)``, length 2, **anchored on the constant** ``cert_globalgap`` in
  the body and the head (GlobalGAP group certification: the members of a certified producer
  group are covered; 13 cooperatives and 57 derived facts at seed 0), a head relation that
  also has base facts (a farm's own certificates);
* a **correlated shortcut**: ``declares`` (base: the annual crop declaration, each planted crop
  and sometimes one never sown) is in no body; at seed 0 it links .91 of the ``produces``
  pairs and .91 of its training pairs are ``produces`` pairs
  (:attr:`~graphdata.worlds.World.shortcuts`);
* rules of length 1 (two), 2 (four) and 3 (two); 1-1 (``monitors``: one weather station a
  region), 1-N (``advises``), N-1 (``advised_by``, ``certified``, ``contracted_with``,
  ``grows``, ``local_supplier``, ``located_in``, ``member_of``, ``part_of``, ``processes``,
  ``soil_of``, ``storm_damage``, ``variety_of``) and N-N (``at_risk``, ``attacks``,
  ``co_member``, ``controls``, ``declares``, ``delivers_to``, ``produces``, ``supplies``)
  relations (by count at seed 0);
* **exceptions**: 6 % of ``field_harvest``'s heads (a crop lost to a storm before harvest),
  5 % of ``host_crop``'s (a resistant variety, a rotation break), 8 % of the ``supplies``
  facts only ``coop_channel`` derives (a member selling outside the cooperative that season; a
  contract is never withheld) and 10 % of ``group_certification``'s (a member suspended by
  the group's internal control) are withheld; a withheld ``produces`` fact also leaves out the
  risks only that crop carries. The withheld harvests are **correlated with another
  relation**: the region's weather station records ``storm_damage`` on each of the farm's
  fields of the lost crop with probability .85 (11 of the 15 withheld harvests at seed 0;
  13 of the 30 damaged fields are on them, the others storms a crop survived); **noise**: 2 %
  of the ``produces``, 3 % of the ``at_risk`` and ``supplies`` and 5 % of the
  ``local_supplier`` facts have no grounding (a noise ``produces`` or ``supplies`` fact feeds
  the rules above like any other).

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`): 862
entities (443 fields, 220 farms, 52 varieties, 22 cooperatives, 18 regions, 18 weather
stations, 18 buyers, 14 agronomists, 14 pests, 12 crops, 12 treatments, 6 soils, 5 climate
zones, 4 certifications, 4 markets), 22 relations; 5,145 train, 285 valid and 290 test triples;
the valid+test targets per rule of their shortest grounding are ``co_membership`` 212,
``coop_channel`` 122, ``host_crop`` 94, ``field_harvest`` 61, ``advisor_inverse`` 44,
``group_certification`` 12, ``contract_supply`` 11, ``local_sourcing`` 8 (length 1: 55, 2:
440, 3: 69), and 11 noise facts; .05 of the targets have more than one grounding; 106
exceptions (57 ``supplies``, 24 ``at_risk``, 15 ``produces``, 10 ``certified``). **Hubs**: the
commonest soil has 162 distinct training neighbours, the most planted crop 99, the commonest
pest 81, the busiest buyer and agronomist 52 each, the busiest market 35, the largest region 33
(a farm a median of 16); the 2-hop enclosing subgraphs of 200 test targets hold a median of
1,570 training triples (p90 2,240).

**Base facts** (:func:`agriculture_world`), with :math:`N` = ``size`` farms:
:math:`\max(8, \lfloor N/12 \rfloor)` regions (``located_in`` a climate zone of ``_ZONES``, one
each first, the rest by share) with a log-normal farming weight, a soil mix drawn from a
Dirichlet around the shares of ``_SOILS`` and one weather station each (``monitors``); every
crop of ``_CROPS`` has :math:`2 + \text{Poisson}(2)` varieties (``variety_of``) of log-normal
popularity. Farms are ``located_in`` a region by weight, each with :math:`1 +
\text{Poisson}(1.2)` fields (``part_of``); a field has a soil of its region's mix (``soil_of``)
and ``grows`` a variety, by popularity, of a crop drawn by share times its suitability in the
region's zone and on that soil (a later field repeats one of the farm's crops with
probability .35). A farm ``declares`` each planted crop with probability .92 and, with
probability .12, one more by share. :math:`N_c + 2` pests ``attacks`` one crop each (one per
crop first) and with probability .4 a second; :math:`N_c` treatments ``controls`` :math:`1 +
\text{Poisson}(.8)` pests. :math:`\max(6, \lfloor N/15 \rfloor)` agronomists (``located_in`` a
region by weight) of log-normal reach; each farm is ``advised_by`` one, four times more likely
one of its region. :math:`\max(6, \lfloor N/10 \rfloor)` cooperatives (``located_in`` a region
by weight) of log-normal size; a farm is ``member_of`` one with probability .6, of its region
(.85) if there is one; a cooperative is ``certified`` GlobalGAP with probability .45 and
organic .15, a farm GlobalGAP .15, organic .1, Fairtrade .04 and, growing grapes or olives,
a protected designation of origin .5. :math:`\max(8, \lfloor N/12 \rfloor)` buyers
``processes`` a crop (one for each of the most planted first, the rest by planted area) and
are ``located_in`` a region by that crop's fields there; four markets in distinct regions by
weight. A cooperative ``delivers_to`` a buyer of each of its members' crops with probability .7
(of its region three times more likely) and with probability .6 to a market (its region's
three times more likely); a farm with probability .3 is ``contracted_with`` a buyer of one of
its crops (its region's three times more likely). ``storm_damage`` follows the closure and is
drawn after a first :func:`~graphdata.worlds.base.build_world`: on each field of a withheld
harvest with probability .85 (per harvest) and on each field with probability .04, by the
station of the farm's region. It is in no rule body, so adding it leaves the closure, the noise
and the split as they were, and a second build from the generator state of the first gives
the same world with it.

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`AGRICULTURE_RULES`.
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

__all__ = ["AGRICULTURE_RULES", "agriculture_world"]

#: The planted rules: agronomists advising the farms that name them (an inverse pair), the
#: crops a farm produces from its fields' varieties, the pests a farm is at risk of through its
#: host crops, the buyers a farm supplies under contract or through its cooperative, farms
#: supplying a buyer of their own region (a triangle), co-members of a cooperative (a
#: symmetric star with an inequality) and GlobalGAP group certification anchored on
#: ``cert_globalgap``.
AGRICULTURE_RULES = """\
advisor_inverse: advises(A,F) <- advised_by(F,A)
contract_supply: supplies(F,B) <- contracted_with(F,B)
coop_channel: supplies(F,B) <- member_of(F,K), delivers_to(K,B)
field_harvest: produces(F,C) <- part_of(L,F), grows(L,V), variety_of(V,C)
host_crop: at_risk(F,P) <- produces(F,C), attacks(P,C)
co_membership: co_member(F,G) <- member_of(F,K), member_of(G,K), F != G
group_certification: certified(F,cert_globalgap) <- member_of(F,K), certified(K,cert_globalgap)
local_sourcing: local_supplier(F,B) <- supplies(F,B), located_in(F,R), located_in(B,R)
"""

#: The climate zones (entity ``zone_<name>``) and their share of the regions.
_ZONES = (
    ("oceanic", 0.26),
    ("continental", 0.26),
    ("mediterranean", 0.2),
    ("semi_arid", 0.14),
    ("humid_subtropical", 0.14),
)
#: The soil types (entity ``soil_<name>``) and their share of the fields overall; each region
#: draws its own mix around these shares.
_SOILS = (
    ("clay", 0.22),
    ("loam", 0.3),
    ("sand", 0.18),
    ("silt", 0.14),
    ("peat", 0.06),
    ("chalk", 0.1),
)
#: The crops (entity ``crop_<name>``): each with its share of the fields, its suitability in
#: each climate zone (``_ZONES`` order) and on each soil (``_SOILS`` order).
_CROPS = (
    ("wheat", 0.2, (1.0, 1.0, 0.6, 0.5, 0.2), (1.0, 1.0, 0.5, 0.9, 0.3, 0.9)),
    ("barley", 0.1, (1.0, 1.0, 0.5, 0.6, 0.1), (0.8, 1.0, 0.6, 0.8, 0.3, 1.0)),
    ("maize", 0.14, (0.6, 1.0, 0.5, 0.3, 1.0), (0.8, 1.0, 0.6, 1.0, 0.3, 0.5)),
    ("rapeseed", 0.08, (1.0, 0.8, 0.2, 0.1, 0.1), (1.0, 1.0, 0.4, 0.8, 0.2, 0.8)),
    ("sunflower", 0.06, (0.2, 0.8, 0.8, 0.6, 0.3), (0.6, 1.0, 0.8, 0.8, 0.1, 0.6)),
    ("soybean", 0.06, (0.2, 0.6, 0.2, 0.2, 1.0), (0.6, 1.0, 0.6, 1.0, 0.2, 0.4)),
    ("potato", 0.08, (1.0, 0.8, 0.2, 0.1, 0.3), (0.3, 1.0, 1.0, 0.8, 0.8, 0.3)),
    ("sugar_beet", 0.06, (1.0, 0.8, 0.2, 0.1, 0.1), (0.8, 1.0, 0.4, 1.0, 0.3, 0.6)),
    ("grape", 0.06, (0.3, 0.2, 1.0, 0.6, 0.3), (0.4, 0.6, 0.8, 0.3, 0.05, 1.0)),
    ("olive", 0.05, (0.02, 0.02, 1.0, 0.8, 0.2), (0.5, 0.6, 0.8, 0.4, 0.02, 1.0)),
    ("rice", 0.04, (0.02, 0.1, 0.3, 0.1, 1.0), (1.0, 0.5, 0.1, 0.8, 0.5, 0.1)),
    ("apple", 0.07, (1.0, 0.8, 0.3, 0.2, 0.2), (0.6, 1.0, 0.6, 0.8, 0.2, 0.6)),
)
#: The certifications (entity ``cert_<name>``).
_CERTS = ("globalgap", "organic", "fairtrade", "pdo")
#: Withheld heads: a crop lost to a storm before harvest (recorded by the region's weather
#: station), a pest absent from a farm that grows its host (a resistant variety, a rotation
#: break), a member selling its crop outside the cooperative that season, a member suspended
#: by the group's internal control.
_EXCEPTION_RATES = (
    ("field_harvest", 0.06),
    ("host_crop", 0.05),
    ("coop_channel", 0.08),
    ("group_certification", 0.1),
)
#: Heads without grounding: a crop grown on rented land outside the farm's recorded fields, a
#: pest risk from a neighbour's outbreak, a spot sale to a buyer, a local sale recorded
#: against another region.
_NOISE_RATES = (
    ("produces", 0.02),
    ("at_risk", 0.03),
    ("supplies", 0.03),
    ("local_supplier", 0.05),
)


def agriculture_world(
    size: int = 220,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the agriculture world (module docstring) and its ground truth.

    Args:
        size: The number of farms :math:`N \ge 40`. Default 220 (862 entities, 22
            relations and 5,720 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"agriculture"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = agriculture_world(60, seed=0)
        >>> w.exception_rates["field_harvest"], w.shortcuts
        (0.06, (('declares', 'produces'),))
        >>> sorted(r.length for r in w.rules if r.head.relation == "supplies")
        [1, 2]
    """
    check_world_arguments(size, 40, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    n_zone, n_soil, n_crop = len(_ZONES), len(_SOILS), len(_CROPS)
    n_region, n_coop = max(8, n // 12), max(6, n // 10)
    n_buyer, n_agronomist = max(8, n // 12), max(6, n // 15)
    n_pest, n_treatment, n_market = n_crop + 2, n_crop, 4
    zones = [f"zone_{name}" for name, _ in _ZONES]
    soils = [f"soil_{name}" for name, _ in _SOILS]
    crops = [f"crop_{name}" for name, _, _, _ in _CROPS]
    certs = [f"cert_{name}" for name in _CERTS]
    regions, stations = entity_labels("region", n_region), entity_labels("station", n_region)
    farms, coops = entity_labels("farm", n), entity_labels("coop", n_coop)
    buyers, markets = entity_labels("buyer", n_buyer), entity_labels("market", n_market)
    agronomists = entity_labels("agronomist", n_agronomist)
    pests, treatments = entity_labels("pest", n_pest), entity_labels("treatment", n_treatment)
    facts: list[LabeledTriple] = []

    # Regions in climate zones (one each first, the rest by share), each with a log-normal
    # farming weight, its own soil mix (Dirichlet around the overall shares) and one weather
    # station (monitors: 1-1).
    zone_share = np.array([s for _, s in _ZONES])
    region_zone = (
        list(range(n_zone)) + rng.choice(n_zone, size=n_region - n_zone, p=zone_share).tolist()
    )
    facts.extend((regions[r], "located_in", zones[z]) for r, z in enumerate(region_zone))
    facts.extend((stations[r], "monitors", regions[r]) for r in range(n_region))
    region_weight = rng.lognormal(0.0, 0.6, n_region)
    soil_share = np.array([s for _, s in _SOILS])
    soil_mix = rng.dirichlet(8.0 * soil_share, size=n_region)

    # Crops and varieties: 2 + Poisson(2) varieties a crop, each with a log-normal popularity.
    variety_crop = [c for c in range(n_crop) for _ in range(2 + int(rng.poisson(2.0)))]
    varieties = entity_labels("variety", len(variety_crop))
    facts.extend((varieties[v], "variety_of", crops[c]) for v, c in enumerate(variety_crop))
    popularity = rng.lognormal(0.0, 0.8, len(varieties))
    crop_varieties = [[v for v, c in enumerate(variety_crop) if c == k] for k in range(n_crop)]
    crop_share = np.array([s for _, s, _, _ in _CROPS])
    zone_fit = np.array([z for _, _, z, _ in _CROPS])  # [crop, zone]
    soil_fit = np.array([s for _, _, _, s in _CROPS])  # [crop, soil]

    # Farms in regions by weight, each with 1 + Poisson(1.2) fields (part_of). Each field: a
    # soil from its region's mix, a crop by share times its suitability in the region's zone and
    # on that soil (a later field repeats one of the farm's crops with probability .35: a
    # specialised farm), and a variety of that crop by popularity (grows).
    farm_region = rng.choice(n_region, size=n, p=region_weight / region_weight.sum())
    facts.extend((farms[f], "located_in", regions[int(r)]) for f, r in enumerate(farm_region))
    field_farm: list[int] = []
    field_crop: list[int] = []
    field_soil: list[int] = []
    field_variety: list[int] = []
    for f in range(n):
        r = int(farm_region[f])
        own: list[int] = []
        for _ in range(1 + int(rng.poisson(1.2))):
            s = int(rng.choice(n_soil, p=soil_mix[r]))
            if own and rng.random() < 0.35:
                c = own[int(rng.integers(len(own)))]
            else:
                w = crop_share * zone_fit[:, region_zone[r]] * soil_fit[:, s]
                c = int(rng.choice(n_crop, p=w / w.sum()))
            own.append(c)
            field_farm.append(f)
            field_crop.append(c)
            field_soil.append(s)
            field_variety.append(weighted_pick(rng, crop_varieties[c], popularity))
    fields = entity_labels("field", len(field_farm))
    facts.extend((fields[i], "part_of", farms[f]) for i, f in enumerate(field_farm))
    facts.extend((fields[i], "soil_of", soils[s]) for i, s in enumerate(field_soil))
    facts.extend((fields[i], "grows", varieties[v]) for i, v in enumerate(field_variety))
    farm_crops = [
        sorted({field_crop[i] for i in range(len(fields)) if field_farm[i] == f}) for f in range(n)
    ]

    # Crop declarations (the subsidy claim, base): each planted crop with probability .92 and,
    # with probability .12, a crop the farm planned but did not sow (by share): a correlated
    # shortcut of produces, in no body.
    for f in range(n):
        declared = {c for c in farm_crops[f] if rng.random() < 0.92}
        if rng.random() < 0.12:
            declared.add(int(rng.choice(n_crop, p=crop_share / crop_share.sum())))
        facts.extend((farms[f], "declares", crops[c]) for c in sorted(declared))

    # Pests: one per crop first, the rest on a crop by share; each with probability .4 also on
    # a second crop (attacks). Treatments, each controlling 1 + Poisson(.8)
    # pests (controls).
    pest_crops: list[set[int]] = []
    for p in range(n_pest):
        host = {p if p < n_crop else int(rng.choice(n_crop, p=crop_share / crop_share.sum()))}
        if rng.random() < 0.4:
            host.add(int(rng.integers(n_crop)))
        pest_crops.append(host)
        facts.extend((pests[p], "attacks", crops[c]) for c in sorted(host))
    for t in range(n_treatment):
        k = min(n_pest, 1 + int(rng.poisson(0.8)))
        for p in sorted(rng.choice(n_pest, size=k, replace=False).tolist()):
            facts.append((treatments[t], "controls", pests[p]))

    # Agronomists in regions by weight, each with a log-normal popularity; a farm is
    # advised_by one of them, four times more likely one of its own region.
    agronomist_region = rng.choice(
        n_region, size=n_agronomist, p=region_weight / region_weight.sum()
    )
    facts.extend(
        (agronomists[a], "located_in", regions[int(r)]) for a, r in enumerate(agronomist_region)
    )
    reach = rng.lognormal(0.0, 0.7, n_agronomist)
    every_agronomist = list(range(n_agronomist))
    for f in range(n):
        w = reach * np.where(agronomist_region == farm_region[f], 4.0, 1.0)
        facts.append((farms[f], "advised_by", agronomists[weighted_pick(rng, every_agronomist, w)]))

    # Cooperatives in regions by weight (one in each of the heaviest first), log-normal size;
    # a farm is member_of one with probability .6, of its own region (.85) if there is one.
    # With probability .45 a cooperative holds a GlobalGAP group certificate, with .15 an
    # organic one. Farms hold their own certificates: GlobalGAP .15, organic .1, Fairtrade .04
    # and a protected designation of origin .5 for each grape or olive grower.
    coop_region = rng.choice(n_region, size=n_coop, p=region_weight / region_weight.sum())
    facts.extend((coops[k], "located_in", regions[int(r)]) for k, r in enumerate(coop_region))
    coop_size = rng.lognormal(0.0, 0.7, n_coop)
    every_coop = list(range(n_coop))
    members: list[list[int]] = [[] for _ in range(n_coop)]
    for f in range(n):
        if rng.random() < 0.6:
            home = [k for k in every_coop if coop_region[k] == farm_region[f]]
            pool = home if home and rng.random() < 0.85 else every_coop
            k = weighted_pick(rng, pool, coop_size)
            members[k].append(f)
            facts.append((farms[f], "member_of", coops[k]))
    for k in range(n_coop):
        if rng.random() < 0.45:
            facts.append((coops[k], "certified", "cert_globalgap"))
        if rng.random() < 0.15:
            facts.append((coops[k], "certified", "cert_organic"))
    for f in range(n):
        for cert, rate in (
            ("cert_globalgap", 0.15),
            ("cert_organic", 0.1),
            ("cert_fairtrade", 0.04),
        ):
            if rng.random() < rate:
                facts.append((farms[f], "certified", cert))
        if any(_CROPS[c][0] in ("grape", "olive") for c in farm_crops[f]) and rng.random() < 0.5:
            facts.append((farms[f], "certified", "cert_pdo"))

    # Buyers (mills, maltsters, crushers, sugar factories, wineries, packers): one per crop of
    # the most planted first, the rest by planted area; each processes one crop and sits in a
    # region by that crop's fields there. Markets (wholesale markets, auctions) in regions by
    # weight.
    planted = np.bincount(field_crop, minlength=n_crop).astype(float)
    order = np.argsort(-planted, kind="stable").tolist()
    buyer_crop = order[: min(n_buyer, n_crop)]
    buyer_crop += rng.choice(
        n_crop, size=n_buyer - len(buyer_crop), p=planted / planted.sum()
    ).tolist()
    buyer_region: list[int] = []
    for b, c in enumerate(buyer_crop):
        grown = np.bincount(
            [int(farm_region[field_farm[i]]) for i in range(len(fields)) if field_crop[i] == c],
            minlength=n_region,
        ).astype(float)
        w = grown + 0.05 * region_weight
        buyer_region.append(int(rng.choice(n_region, p=w / w.sum())))
        facts.append((buyers[b], "processes", crops[c]))
        facts.append((buyers[b], "located_in", regions[buyer_region[b]]))
    market_region = rng.choice(
        n_region, size=n_market, replace=False, p=region_weight / region_weight.sum()
    )
    facts.extend((markets[m], "located_in", regions[int(r)]) for m, r in enumerate(market_region))
    near_buyer = np.asarray(buyer_region)[None, :] == farm_region[:, None]  # [farm, buyer]

    # Cooperatives deliver_to the buyers of their members' crops (each crop of the members, a
    # buyer of it with probability .7, of the cooperative's region three times more likely) and
    # with probability .6 to a market (their region's three times more likely).
    every_buyer = list(range(n_buyer))
    for k in range(n_coop):
        grown_by = sorted({c for f in members[k] for c in farm_crops[f]})
        chosen: set[str] = set()
        for c in grown_by:
            pool = [b for b in every_buyer if buyer_crop[b] == c]
            if pool and rng.random() < 0.7:
                w = np.where(np.asarray(buyer_region) == coop_region[k], 3.0, 1.0)
                chosen.add(buyers[weighted_pick(rng, pool, w)])
        if rng.random() < 0.6:
            w = np.where(market_region == coop_region[k], 3.0, 1.0)
            chosen.add(markets[weighted_pick(rng, list(range(n_market)), w)])
        facts.extend((coops[k], "delivers_to", x) for x in sorted(chosen))

    # Contracts (contracted_with): a farm with probability .3 signs with a buyer of one of its
    # crops (its own region's three times more likely), if any.
    for f in range(n):
        pool = [b for b in every_buyer if buyer_crop[b] in farm_crops[f]]
        if pool and rng.random() < 0.3:
            w = np.where(near_buyer[f], 3.0, 1.0)
            facts.append((farms[f], "contracted_with", buyers[weighted_pick(rng, pool, w)]))

    types = {
        **dict.fromkeys(zones, "climate_zone"),
        **dict.fromkeys(soils, "soil"),
        **dict.fromkeys(crops, "crop"),
        **dict.fromkeys(certs, "certification"),
        **dict.fromkeys(regions, "region"),
        **dict.fromkeys(stations, "station"),
        **dict.fromkeys(farms, "farm"),
        **dict.fromkeys(fields, "field"),
        **dict.fromkeys(varieties, "variety"),
        **dict.fromkeys(coops, "cooperative"),
        **dict.fromkeys(buyers, "buyer"),
        **dict.fromkeys(markets, "market"),
        **dict.fromkeys(agronomists, "agronomist"),
        **dict.fromkeys(pests, "pest"),
        **dict.fromkeys(treatments, "treatment"),
    }

    def build(base: list[LabeledTriple], generator: np.random.Generator) -> World:
        return build_world(
            "agriculture",
            base,
            AGRICULTURE_RULES,
            seed=seed,
            size=n,
            rng=generator,
            entity_types=types,
            exception_rates=dict(_EXCEPTION_RATES),
            noise_rates=dict(_NOISE_RATES),
            symmetric=("co_member",),
            inverse_pairs=(("advised_by", "advises"),),
            shortcuts=(("declares", "produces"),),
            valid_fraction=valid_fraction,
            test_fraction=test_fraction,
        )

    # Storm damage follows the closure, so it is drawn after a first build: the relation is in
    # no rule body, so adding it leaves the closure, the noise and the split unchanged, and a
    # second build from the same generator state gives the same world with it. A crop lost
    # before harvest (a withheld produces fact) is mostly a recorded storm (.85: the region's
    # station records damage on each of the farm's fields of that crop); besides, each field
    # has a recorded storm it survived with probability .04.
    replay = copy.deepcopy(rng)
    first = build(facts, rng)
    crop_index = {label: c for c, label in enumerate(crops)}
    farm_index = {label: f for f, label in enumerate(farms)}
    damaged: set[int] = set()
    for x, relation, y in first.exceptions:
        if relation == "produces" and rng.random() < 0.85:
            f, c = farm_index[x], crop_index[y]
            damaged.update(
                i for i in range(len(fields)) if field_farm[i] == f and field_crop[i] == c
            )
    damaged.update(i for i in range(len(fields)) if rng.random() < 0.04)
    facts.extend(
        (fields[i], "storm_damage", stations[int(farm_region[field_farm[i]])])
        for i in sorted(damaged)
    )
    return build(facts, replay)
