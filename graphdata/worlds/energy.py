r"""An electricity world: plants, fuels, operators, substations, lines, areas, markets, contracts.

Written in session 27 as a **held-out** world for the explainer, without reading
:mod:`kg.explain`, the explainer benchmarks or their results, and never run with an explainer or
trained on while it was written: designed from the electricity domain (power plants of eight
fuels run by generation companies, connected to substations of a five-level voltage hierarchy
run by each country's grid operator, lines carrying power down the hierarchy, balancing areas
trading on wholesale markets, regulators, power purchase agreements with buyers, market bids
and outages), not from how any explainer decides. The rules (:data:`ENERGY_RULES`, length =
body atoms):

* ``operator_inverse: operates(O,P) <- operated_by(P,O)``, length 1, an **inverse pair**
  (recorded in :attr:`~graphdata.worlds.World.inverse_pairs`; ``operated_by`` N-1: a plant's
  generation company, a substation's grid operator; ``operates`` 1-N) whose **derived side is
  used twice in another body** (``competition``);
* ``line_feed: feeds(A,B) <- line_from(L,A), line_to(L,B)`` and ``feeds_on: feeds(A,C) <-
  feeds(A,B), feeds(B,C)``, both length 2: power flow, a **transitive relation closed to a
  bounded depth** by a **recursive** body that uses the head relation twice. Lines run only
  from one voltage level to the next, so ``feeds`` goes down at most four levels and the two
  bodies never derive the same fact (at seed 0 .38 of the 278 ``feeds`` facts come from a
  line, .62 from the closure); the closure adds ``feeds`` facts in three rounds (106, 83 and
  89 at seed 0: a path of four lines closes in the third round as two paths of two, unless
  a withheld fact delays it to a fourth); six pairs of substations are joined by a double circuit,
  whose ``feeds`` fact has two groundings (two lines meeting the same two substations);
  ``feeds`` is a **derived relation with held-out facts in two bodies**, its own and
  ``exported_supply``'s;
* ``registered_supply: supplies_area(P,A) <- registered_in(P,A)``, length 1, ``local_supply:
  supplies_area(P,A) <- connected_to(P,S), in_area(S,A)``, length 2, and ``exported_supply:
  supplies_area(P,A) <- connected_to(P,S), feeds(S,T), in_area(T,A)``, length 3: the areas a
  plant supplies, **a head with three bodies of lengths 1, 2 and 3**, the third through the
  derived ``feeds``; of the 513 ``supplies_area`` facts at seed 0, .11 have only the
  registration body, .18 only the local one, .32 only the export one, .09 the first two, .05
  the first and third, .16 the last two, .07 all three and .03 none (noise); ``supplies_area``
  is never a base fact and its held-out facts are used in **two other bodies**:
* ``market_sale: sells_in(P,M) <- supplies_area(P,A), trades_on(A,M)``, length 2, through the
  derived ``supplies_area``, beside a **correlated shortcut**: ``bids_into`` (base: a plant
  bids into most markets it sells in, and sometimes into another) is in no body; at seed 0 it
  links .81 of the ``sells_in`` pairs and .90 of its training pairs are ``sells_in`` pairs
  (:attr:`~graphdata.worlds.World.shortcuts`);
* ``coal_phaseout: coal_exit(A,P) <- supplies_area(P,A), fuel(P,fuel_coal)``, length 2, a
  **constant anchor at the end of the chain** from the area through the plant to the fuel
  ``fuel_coal`` (present at every size and seed), through the derived ``supplies_area``: it
  derives in the closure's rounds two to five (29, 12, 12 and 6 at seed 0; 65 facts over 28
  of the 29 coal plants);
* ``wind_ppa: renewable_ppa(K,O) <- contract_seller(K,P), fuel(P,fuel_wind),
  operated_by(P,O)``, length 3, a **constant anchor in the middle**: the chain from the
  contract through the plant to its company is anchored at the plant, its middle node, on
  ``fuel_wind``, by the middle atom (69 facts at seed 0);
* ``shared_connection: shares_connection(P,Q) <- connected_to(P,S), connected_to(Q,S), P !=
  Q``, length 2, a **symmetric** relation from a **star with an inequality** around the
  substation (1,062 facts at seed 0, 182 of them at the busiest substation's 14 plants; the
  reversed copy of .83 of its 212 held-out targets is in train);
* ``competition: competes_with(O,Q) <- operates(O,P), shares_connection(P,R), operates(Q,R), O
  != Q``, length 3, a **four-node cycle** (company, plant, plant, company) that **uses the same
  relation twice**, the derived ``operates``, through the derived symmetric
  ``shares_connection``: **symmetric** too, with an inequality between the head's ends (264
  facts at seed 0, derived in the closure's second round; the reversed copy of .89 of its 35
  held-out targets is in train);
* rules of length 1 (two), 2 (six) and 3 (three); 1-1 (``regulates``: one regulator a
  country; ``line_to`` and ``outage_of`` by count), 1-N (``operates``), N-1 (``fuel``,
  ``operated_by``, ``connected_to``, ``line_from``, ``in_area``, ``located_in``,
  ``trades_on``, ``registered_in``, ``contract_seller``, ``contract_buyer``, ``bids_into``,
  ``sells_in``, ``renewable_ppa``) and N-N (``feeds``, ``supplies_area``, ``coal_exit``,
  ``shares_connection``, ``competes_with``) relations;
* **exceptions**: 10 % of ``line_feed``'s heads (a line out of service) and 3 % of
  ``feeds_on``'s (a normally-open point), 2 % of the ``supplies_area`` facts ``local_supply``
  derives and ``registered_supply`` does not and 10 % of those only ``exported_supply`` derives
  (exports curtailed by congestion; a registered plant is never withheld), 5 % of
  ``market_sale``'s, 15 % of ``coal_phaseout``'s (a coal plant kept as a strategic reserve)
  and 8 % of ``wind_ppa``'s are withheld; a withheld ``feeds`` fact also cuts the feeds
  to the substations below it unless another path reaches them. The withheld line feeds are
  **correlated with another relation**: a line out of service is mostly a recorded outage
  (``outage_of`` holds for a line of all 8 withheld line feeds at seed 0, and 10 of the 20
  line outages are on them; the others are planned outages, besides 14 plant maintenance
  outages); **noise**: 3 % of the ``supplies_area`` and ``sells_in`` facts, 5 % of the
  ``coal_exit`` and ``renewable_ppa`` facts have no grounding (a noise ``supplies_area`` fact
  feeds the two rules above like any other).

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`): 773
entities (260 plants, 156 contracts, 120 lines, 104 substations, 35 outages, 32 generation
companies, 26 buyers, 13 areas, 8 fuels, 5 countries, 5 regulators, 5 grid operators, 4
markets), 22 relations; 4,802 train, 275 valid and 275 test triples; the valid+test targets
per rule of their shortest grounding are ``shared_connection`` 212, ``operator_inverse`` 72,
``market_sale`` 52, ``competition`` 35, ``exported_supply`` 35, ``registered_supply`` 33,
``feeds_on`` 32, ``local_supply`` 30, ``line_feed`` 19, ``wind_ppa`` 13, ``coal_phaseout`` 11
(length 1: 105, 2: 356, 3: 83), and 6 noise facts; .21 of the targets have more than one
grounding; 80 exceptions (29 ``supplies_area``, 16 ``feeds``, 16 ``coal_exit``, 12
``sells_in``, 7 ``renewable_ppa``). **Hubs**: the busiest market has 119 distinct training
neighbours, the largest country 101, the busiest area 74, the commonest fuel 53, the largest
company 44, the largest buyer 43; the 2-hop enclosing subgraphs of 200 test targets hold a
median of 1,054 training triples (p90 1,386).

**Base facts** (:func:`energy_world`), with :math:`N` = ``size`` plants: five countries by
weight (.3 down to .11), one regulator each (``regulates``) and one grid operator each
(``located_in``); :math:`\max(10, \lfloor N/20 \rfloor)` balancing areas (``located_in`` a
country, one each first, the rest by weight) ``trades_on`` their country's market (.9; four
markets, two countries coupled in one) or any; :math:`\max(20, \lfloor 2N/5 \rfloor)`
substations on five voltage levels (``_LEVELS``: .08 of them at the top down to .32 at the
bottom), ``in_area`` an area (the last ones one per area, the others by their country's weight)
and ``operated_by`` its country's grid operator; each below the top level is fed by a line
(``line_from`` the feeder, ``line_to`` it) from a substation of the level above, of its own
area (.6) or its country, by a log-normal strength, with probability .25 by a second one of
its country, each by a double circuit with probability .08; :math:`\max(5, \lfloor N/8
\rfloor)` generation companies (``located_in`` a country, one each first, the rest by weight)
of log-normal size. Each plant: a ``fuel`` by share (``_FUELS``, one plant per fuel first),
``connected_to`` a substation of a level drawn by the fuel's weights (coal and nuclear at the
top, solar and biomass at the bottom) by a log-normal site attractiveness, ``located_in`` its
country, ``operated_by`` a company of that country (.85) or any, by size, and with probability
.5 ``registered_in`` an area (its own .5, one it feeds .3, else any). :math:`\max(5,
\lfloor N/10 \rfloor)` buyers (``located_in`` a country) of log-normal size and
:math:`\lfloor 3N/5 \rfloor` contracts, each with a seller plant (``contract_seller``) by its
fuel's weight (wind 4, solar 3, nuclear 2, hydro 1.5, oil .3, ...) times a log-normal appeal
and :math:`1 + \text{Poisson}(.5)` draws of a buyer (``contract_buyer``) of the plant's country
(.7) or any, by size. Two relations follow the closure and are drawn after a first
:func:`~graphdata.worlds.base.build_world`: an outage (``outage_of``) on each line of .85 of
the withheld line feeds, on each line with probability .04 and on each plant with probability
.08; a plant ``bids_into`` each market it sells in with probability .8 and into another with
probability .1. Neither is in a rule body, so adding them leaves the closure, the noise and the
split as they were, and a second build from the generator state of the first gives the same
world with them.

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`ENERGY_RULES`.
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

__all__ = ["ENERGY_RULES", "energy_world"]

#: The planted rules: an inverse operator pair, power flow along lines closed transitively to
#: the depth of the voltage hierarchy, the areas a plant supplies from three bodies of lengths
#: 1, 2 and 3, the markets it sells in through them, a coal phase-out anchored on a fuel at
#: the end of a chain, renewable purchase agreements anchored on a fuel in the middle, plants
#: sharing a grid connection and operators competing at one (a four-node cycle).
ENERGY_RULES = """\
operator_inverse: operates(O,P) <- operated_by(P,O)
line_feed: feeds(A,B) <- line_from(L,A), line_to(L,B)
feeds_on: feeds(A,C) <- feeds(A,B), feeds(B,C)
registered_supply: supplies_area(P,A) <- registered_in(P,A)
local_supply: supplies_area(P,A) <- connected_to(P,S), in_area(S,A)
exported_supply: supplies_area(P,A) <- connected_to(P,S), feeds(S,T), in_area(T,A)
market_sale: sells_in(P,M) <- supplies_area(P,A), trades_on(A,M)
coal_phaseout: coal_exit(A,P) <- supplies_area(P,A), fuel(P,fuel_coal)
wind_ppa: renewable_ppa(K,O) <- contract_seller(K,P), fuel(P,fuel_wind), operated_by(P,O)
shared_connection: shares_connection(P,Q) <- connected_to(P,S), connected_to(Q,S), P != Q
competition: competes_with(O,Q) <- operates(O,P), shares_connection(P,R), operates(Q,R), O != Q
"""

_COUNTRIES = (0.3, 0.24, 0.2, 0.15, 0.11)
#: The wholesale market of each country's areas (countries 2 and 3 are coupled in one).
_COUNTRY_MARKET = (0, 1, 2, 2, 3)
_MARKETS = 4
#: The share of the substations at each voltage level, from the extra-high-voltage hubs (0)
#: down to the distribution substations (4); lines run from one level to the next.
_LEVELS = (0.08, 0.14, 0.2, 0.26, 0.32)
#: The fuels (entity ``fuel_<name>``): each with its share of the plants, the weights of the
#: voltage levels it connects at (large thermal and nuclear units at the top, wind, solar and
#: biomass at the bottom) and its weight as the seller of a power purchase agreement (mostly
#: renewable).
_FUELS = (
    ("gas", 0.21, (0.25, 0.35, 0.3, 0.1, 0.0), 1.0),
    ("wind", 0.2, (0.0, 0.1, 0.3, 0.35, 0.25), 4.0),
    ("solar", 0.17, (0.0, 0.0, 0.2, 0.35, 0.45), 3.0),
    ("coal", 0.15, (0.55, 0.45, 0.0, 0.0, 0.0), 0.5),
    ("hydro", 0.1, (0.15, 0.3, 0.3, 0.2, 0.05), 1.5),
    ("biomass", 0.07, (0.0, 0.0, 0.3, 0.4, 0.3), 1.0),
    ("oil", 0.05, (0.0, 0.2, 0.3, 0.3, 0.2), 0.3),
    ("nuclear", 0.05, (0.8, 0.2, 0.0, 0.0, 0.0), 2.0),
)
#: Withheld heads: a line out of service (recorded as an outage) or a normally-open point
#: (feeds), a connection or an export curtailed by congestion (supplies_area), a plant
#: barred from a market, a coal plant kept as a strategic reserve (a phase-out derogation), a
#: wind agreement signed through a trading arm.
_EXCEPTION_RATES = (
    ("line_feed", 0.1),
    ("feeds_on", 0.03),
    ("local_supply", 0.02),
    ("exported_supply", 0.1),
    ("market_sale", 0.05),
    ("coal_phaseout", 0.15),
    ("wind_ppa", 0.08),
)
#: Heads without grounding: supply or sales recorded by a trader, a retirement announced for
#: another reason, an agreement booked against another operator.
_NOISE_RATES = (
    ("supplies_area", 0.03),
    ("sells_in", 0.03),
    ("coal_exit", 0.05),
    ("renewable_ppa", 0.05),
)


def energy_world(
    size: int = 260,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the electricity world (module docstring) and its ground truth.

    Args:
        size: The number of power plants :math:`N \ge 40`. Default 260 (773 entities, 22
            relations and 5,352 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"energy"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = energy_world(60, seed=0)
        >>> w.exception_rates["coal_phaseout"], w.shortcuts
        (0.15, (('bids_into', 'sells_in'),))
        >>> sorted(r.length for r in w.rules if r.head.relation == "supplies_area")
        [1, 2, 3]
    """
    check_world_arguments(size, 40, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    weights = np.asarray(_COUNTRIES)
    n_country, n_fuel, n_level = len(_COUNTRIES), len(_FUELS), len(_LEVELS)
    n_area, n_substation = max(2 * n_country, n // 20), max(4 * n_country, 2 * n // 5)
    n_operator, n_buyer, n_contract = max(n_country, n // 8), max(n_country, n // 10), 3 * n // 5
    countries, regulators = (
        entity_labels("country", n_country),
        entity_labels("regulator", n_country),
    )
    grid_operators = entity_labels("tso", n_country)
    areas, markets = entity_labels("area", n_area), entity_labels("market", _MARKETS)
    substations, plants = entity_labels("substation", n_substation), entity_labels("plant", n)
    operators, buyers = entity_labels("operator", n_operator), entity_labels("buyer", n_buyer)
    contracts = entity_labels("contract", n_contract)
    fuel_names = [name for name, _, _, _ in _FUELS]
    fuels = [f"fuel_{name}" for name in fuel_names]
    facts: list[LabeledTriple] = []

    # Countries, one regulator each (1-1); balancing areas in countries (one each first, the
    # rest by weight), trading on their country's market (.9) or a neighbour's.
    facts.extend((regulators[c], "regulates", countries[c]) for c in range(n_country))
    area_country = (
        list(range(n_country)) + rng.choice(n_country, size=n_area - n_country, p=weights).tolist()
    )
    facts.extend((areas[a], "located_in", countries[c]) for a, c in enumerate(area_country))
    for a, c in enumerate(area_country):
        market = _COUNTRY_MARKET[c] if rng.random() < 0.9 else int(rng.integers(_MARKETS))
        facts.append((areas[a], "trades_on", markets[market]))

    # Substations by voltage level (_LEVELS, top down). Each is in a balancing area: the last
    # n_area (the bottom level) one per area, every other by its country's weight shared
    # among its areas. Each below the top level hangs off one substation of the level above (a
    # line line_from it, line_to this one), of its own area (.6) if there is one, else of its
    # country, else any, by a log-normal strength; with probability .25 a second feeder of its
    # country (a meshed grid); each feeder with probability .08 by a double circuit (two
    # parallel lines between the same two substations).
    per_level = [max(1, round(share * n_substation)) for share in _LEVELS[:-1]]
    per_level.append(n_substation - sum(per_level))
    level = [k for k, m in enumerate(per_level) for _ in range(m)]
    area_weight = weights[area_country] / np.bincount(area_country)[area_country]
    substation_area = rng.choice(n_area, size=n_substation, p=area_weight / area_weight.sum())
    substation_area[-n_area:] = np.arange(n_area)
    strength = rng.lognormal(0.0, 0.7, n_substation)
    at_level = [[s for s in range(n_substation) if level[s] == k] for k in range(n_level)]
    edges: list[tuple[int, int]] = []
    for s in range(n_substation):
        if level[s] == 0:
            continue
        above = at_level[level[s] - 1]
        a = int(substation_area[s])
        same_area = [u for u in above if substation_area[u] == a]
        same_country = [u for u in above if area_country[substation_area[u]] == area_country[a]]
        pool = same_area if same_area and rng.random() < 0.6 else same_country or above
        feeders = [weighted_pick(rng, pool, strength)]
        others = [u for u in (same_country or above) if u != feeders[0]]
        if others and rng.random() < 0.25:
            feeders.append(weighted_pick(rng, others, strength))
        for u in feeders:
            edges.extend([(u, s)] * (2 if rng.random() < 0.08 else 1))
    lines = entity_labels("line", len(edges))
    for i, (u, s) in enumerate(edges):
        facts.append((lines[i], "line_from", substations[u]))
        facts.append((lines[i], "line_to", substations[s]))
    facts.extend((substations[s], "in_area", areas[int(a)]) for s, a in enumerate(substation_area))
    # Each country's grid operator (a TSO) runs its substations (operated_by).
    facts.extend((grid_operators[c], "located_in", countries[c]) for c in range(n_country))
    facts.extend(
        (substations[s], "operated_by", grid_operators[area_country[a]])
        for s, a in enumerate(substation_area)
    )
    children: list[list[int]] = [[] for _ in range(n_substation)]
    for u, s in edges:
        children[u].append(s)

    def downstream(s: int) -> set[int]:
        out, stack = set(), list(children[s])
        while stack:
            x = stack.pop()
            if x not in out:
                out.add(x)
                stack.extend(children[x])
        return out

    # Generation companies: one per country first, the rest by weight, with a log-normal size
    # (the big utilities are hubs).
    operator_country = (
        list(range(n_country))
        + rng.choice(n_country, size=n_operator - n_country, p=weights).tolist()
    )
    facts.extend((operators[o], "located_in", countries[c]) for o, c in enumerate(operator_country))
    operator_size = rng.lognormal(0.0, 1.0, n_operator)
    every_operator = list(range(n_operator))

    # Plants: one per fuel first, the rest by fuel share; connected_to a substation of a
    # voltage level drawn by the fuel's weights, by a log-normal site attractiveness (busy
    # substations are hubs), and located_in that substation's country; operated_by a company
    # of that country (.85) or any (a foreign investor), by size; with probability .5
    # registered_in an area as a capacity resource: its own area (.5), else (.3) an area it
    # feeds power into if there is one, else any area.
    share = np.array([s for _, s, _, _ in _FUELS])
    plant_fuel = (
        list(range(n_fuel)) + rng.choice(n_fuel, size=n - n_fuel, p=share / share.sum()).tolist()
    )
    site = rng.lognormal(0.0, 0.5, n_substation)
    plant_substation: list[int] = []
    for p in range(n):
        levels = np.asarray(_FUELS[plant_fuel[p]][2])
        k = int(rng.choice(n_level, p=levels / levels.sum()))
        s = weighted_pick(rng, at_level[k], site)
        plant_substation.append(s)
        a = int(substation_area[s])
        facts.append((plants[p], "fuel", fuels[plant_fuel[p]]))
        facts.append((plants[p], "connected_to", substations[s]))
        facts.append((plants[p], "located_in", countries[area_country[a]]))
        home = [o for o in every_operator if operator_country[o] == area_country[a]]
        pool = home if rng.random() < 0.85 else every_operator
        facts.append((plants[p], "operated_by", operators[weighted_pick(rng, pool, operator_size)]))
        if rng.random() < 0.5:
            draw = rng.random()
            fed = sorted({int(substation_area[t]) for t in downstream(s)} - {a})
            if draw < 0.5:
                registered = a
            elif draw < 0.8 and fed:
                registered = fed[int(rng.integers(len(fed)))]
            else:
                registered = int(rng.integers(n_area))
            facts.append((plants[p], "registered_in", areas[registered]))

    # Buyers (retail suppliers, large industry) in countries (one each first, the rest by
    # weight), with a log-normal size; contracts (power purchase agreements): a seller plant by
    # its fuel's weight times a log-normal appeal, and 1 + Poisson(.5) draws of a buyer of the
    # plant's country (.7) or any, by size (a consortium signs together).
    buyer_country = (
        list(range(n_country)) + rng.choice(n_country, size=n_buyer - n_country, p=weights).tolist()
    )
    facts.extend((buyers[b], "located_in", countries[c]) for b, c in enumerate(buyer_country))
    buyer_size = rng.lognormal(0.0, 1.2, n_buyer)
    every_buyer = list(range(n_buyer))
    appeal = np.array([_FUELS[f][3] for f in plant_fuel]) * rng.lognormal(0.0, 0.5, n)
    for k in range(n_contract):
        p = int(rng.choice(n, p=appeal / appeal.sum()))
        c = area_country[int(substation_area[plant_substation[p]])]
        home = [b for b in every_buyer if buyer_country[b] == c]
        pool = home if home and rng.random() < 0.7 else every_buyer
        facts.append((contracts[k], "contract_seller", plants[p]))
        signed = {weighted_pick(rng, pool, buyer_size) for _ in range(1 + int(rng.poisson(0.5)))}
        facts.extend((contracts[k], "contract_buyer", buyers[b]) for b in sorted(signed))

    types = {
        **dict.fromkeys(countries, "country"),
        **dict.fromkeys(regulators, "regulator"),
        **dict.fromkeys(areas, "area"),
        **dict.fromkeys(markets, "market"),
        **dict.fromkeys(substations, "substation"),
        **dict.fromkeys(lines, "line"),
        **dict.fromkeys(plants, "plant"),
        **dict.fromkeys(fuels, "fuel"),
        **dict.fromkeys(operators, "operator"),
        **dict.fromkeys(grid_operators, "grid_operator"),
        **dict.fromkeys(buyers, "buyer"),
        **dict.fromkeys(contracts, "contract"),
    }

    def build(base: list[LabeledTriple], generator: np.random.Generator) -> World:
        return build_world(
            "energy",
            base,
            ENERGY_RULES,
            seed=seed,
            size=n,
            rng=generator,
            entity_types=types,
            exception_rates=dict(_EXCEPTION_RATES),
            noise_rates=dict(_NOISE_RATES),
            symmetric=("shares_connection", "competes_with"),
            inverse_pairs=(("operated_by", "operates"),),
            shortcuts=(("bids_into", "sells_in"),),
            valid_fraction=valid_fraction,
            test_fraction=test_fraction,
        )

    # Outages and market bids follow the closure, so they are drawn after a first build: both
    # relations are in no rule body, so adding them leaves the closure, the noise and the
    # split unchanged, and a second build from the same generator state gives the same world
    # with them.
    replay = copy.deepcopy(rng)
    first = build(facts, rng)
    line_of: dict[tuple[str, str], list[str]] = {}
    for i, (u, s) in enumerate(edges):
        line_of.setdefault((substations[u], substations[s]), []).append(lines[i])
    # A withheld direct feed is mostly a line out of service (.85: an outage on each of its
    # lines); besides, each line has a planned outage with probability .04 and each plant a
    # maintenance outage with probability .08.
    outage_targets: list[str] = []
    for x, r, y in first.exceptions:
        if r == "feeds" and (x, y) in line_of and rng.random() < 0.85:
            outage_targets.extend(line_of[(x, y)])
    outage_targets.extend(line for line in lines if rng.random() < 0.04)
    outage_targets.extend(plant for plant in plants if rng.random() < 0.08)
    outages = entity_labels("outage", len(outage_targets))
    facts.extend((e, "outage_of", x) for e, x in zip(outages, outage_targets))
    # Market bids: a plant bids into .8 of the markets it sells in, and with probability .1
    # into another market (a bid that clears nowhere): a correlated shortcut of sells_in.
    selling: dict[str, set[str]] = {}
    for split in first.dataset.splits.values():
        for x, r, y in split.to_labeled_triples():
            if r == "sells_in":
                selling.setdefault(x, set()).add(y)
    bids: set[tuple[str, str]] = set()
    for plant in plants:
        own = sorted(selling.get(plant, ()))
        bids.update((plant, label) for label in own if rng.random() < 0.8)
        elsewhere = [label for label in markets if label not in own]
        if elsewhere and rng.random() < 0.1:
            bids.add((plant, elsewhere[int(rng.integers(len(elsewhere)))]))
    facts.extend((x, "bids_into", label) for x, label in sorted(bids))
    types.update(dict.fromkeys(outages, "outage"))
    return build(facts, replay)
