r"""A maritime shipping world: vessels, carriers, owners, flags, ports, terminals, liner services.

Written in session 28 as a **held-out** world for the explainer, without reading :mod:`kg.explain`,
the explainer benchmarks or their results, and never run with an explainer or trained on while it
was written (run once after session 28's explainer change: RESULTS.md, "A condition on a constant at
a node of a path"): designed from the shipping domain (vessels of six cargo classes owned by
shipowners, registered under sixteen flag states on the Paris MoU white, grey and black lists,
classed by six classification societies and operated by carriers; liner ships deployed on services
that carriers run alone or under vessel-sharing agreements, tramps berthing at the terminals of
ports that handle their cargo; AIS position reports, port state control inspections and diversions),
not from how any explainer decides. The rules (:data:`MARITIME_RULES`, length = body atoms):

* ``operator_inverse: operates(C,V) <- operated_by(V,C)``, length 1, an **inverse pair**
  (recorded in :attr:`~graphdata.worlds.World.inverse_pairs`; ``operated_by`` N-1: one carrier
  a vessel; ``operates`` 1-N) whose **derived side is used in two other bodies**;
* ``liner_call: calls_at(V,P) <- deployed_on(V,S), service_calls(S,P)`` and ``tramp_call:
  calls_at(V,P) <- berthed_at(V,T), terminal_of(T,P)``, both length 2: the ports a vessel calls
  at, **a head with two bodies** (its liner service's rotation, or the terminals it berthed at;
  a liner ship also has a berth record at a call with probability .12); of the 1,554
  ``calls_at`` facts at seed 0, .05 have both bodies, .52 only the liner one, .40 only the
  tramp one and .03 none (noise); ``calls_at`` is never a base fact and is **used in three
  other bodies**, each of length 3:
* ``cabotage: domestic_call(V,P) <- calls_at(V,P), flagged_in(V,K), located_in(P,K)``, a
  **triangle** (vessel, port, flag state) through the derived ``calls_at``, parallel to the
  head (184 facts at seed 0, 9 of them noise; a tramp berths in its flag state with
  probability .35 where it can);
* ``psc_targeting: inspected_at(V,P) <- flagged_in(V,K), psc_list(K,list_black),
  calls_at(V,P)``, port state control targeting ships of black-listed flags at every call: the
  atom ``calls_at(V,P)`` is parallel to the head and the constant ``list_black`` **hangs off the
  head entity through two steps** (vessel, flag state, list), **anchored on the constant**; a
  head relation that also has base facts (random inspections of ships of other flags: a call
  with probability .05, .2 for a grey-listed flag); at seed 0 42 ships fly a black-listed flag,
  with 201 calls, and 179 of the 250 ``inspected_at`` facts are derived, 64 base and 7 noise;
* ``reefer_network: reefer_port(C,P) <- operates(C,V), carries(V,cargo_reefer),
  calls_at(V,P)``, the ports a carrier serves with refrigerated ships: a chain from the carrier
  through the vessel to the port through **two derived relations**, **anchored at its middle
  node** (the vessel) on ``cargo_reefer`` by the middle atom (31 reefer ships and 56 facts at
  seed 0);
* ``vessel_sharing: vsa_partner(C,D) <- run_by(S,C), run_by(S,D), C != D``, length 2, a
  **symmetric** relation from a **star with an inequality** around the service (a service is
  run by a lead carrier, with probability .6 a partner and then .35 another, an alliance
  partner four times more likely; 56 facts at seed 0; the reversed copy of 10 of its 12
  held-out targets is in train);
* ``flag_out: flags_out(C,K) <- operates(C,V), flagged_in(V,K), located_in(C,H), K !=
  H``, length 3, the foreign flags a carrier registers its ships under: a chain through the
  derived ``operates`` with an atom **hanging off the head entity** whose variable is
  **unequal to the tail** (175 facts over the 22 carriers at seed 0, 9 of them noise);
* a **correlated shortcut**: ``ais_reported`` (base: AIS position reports inside a port's
  limits, at each planned call with probability .9, including the calls a ship then omitted,
  and with probability .15 at a port it passed) is in no body; at seed 0 it links .86 of the
  ``calls_at`` pairs and .93 of its training pairs are ``calls_at`` pairs
  (:attr:`~graphdata.worlds.World.shortcuts`);
* rules of length 1 (one), 2 (three) and 3 (four); 1-N (``operates``), N-1 (``carries``,
  ``classed_by``, ``deployed_on``, ``diverted_to``, ``domestic_call``, ``flagged_in``,
  ``handles``, ``located_in``, ``operated_by``, ``owned_by``,
  ``psc_list``, ``terminal_of``) and N-N (``ais_reported``, ``berthed_at``, ``calls_at``,
  ``flags_out``, ``inspected_at``, ``reefer_port``, ``run_by``, ``service_calls``,
  ``vsa_partner``) relations (by count at seed 0);
* **exceptions**: 6 % of the ``calls_at`` facts only ``liner_call`` derives (a port omitted
  from the rotation; a berth record is never withheld), 5 % of ``cabotage``'s heads (a call at
  a home port on an international voyage), 10 % of ``psc_targeting``'s (a ship that left
  before the inspectors boarded) and 5 % of ``reefer_network``'s (a reefer ship calling for
  bunkers only) are withheld; a withheld ``calls_at`` fact also leaves out the heads only that
  call grounds. The omitted calls are **correlated with another relation**: the ship is
  ``diverted_to`` another port of the omitted port's country (any other port where it has
  none) with probability .8 (39 of the 48 omitted calls at seed 0; 41 of the 50 diversions
  are of ships with an omitted call, the others one planned call in a hundred); **noise**: 3 %
  of the ``calls_at`` and ``reefer_port``, 4 % of the ``inspected_at`` (of its non-base facts)
  and 5 % of the ``domestic_call`` and ``flags_out`` facts have no grounding (a noise
  ``calls_at`` fact feeds the rules above like any other).

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`): 635
entities (340 vessels, 90 terminals, 68 owners, 42 ports, 42 services, 22 carriers, 16
countries, 6 cargo classes, 6 classification societies, 3 Paris MoU lists), 22 relations;
6,865 train, 246 valid and 244 test triples; the valid+test targets per rule of their shortest
grounding are ``liner_call`` 176, ``tramp_call`` 124, ``operator_inverse`` 68,
``psc_targeting`` 32, ``flag_out`` 29, ``cabotage`` 22, ``vessel_sharing`` 12,
``reefer_network`` 9 (length 1: 68, 2: 312, 3: 92), and 18 noise facts; .07 of the targets
have more than one grounding; 87 exceptions (48 ``calls_at``, 22 ``inspected_at``, 13
``domestic_call``, 4 ``reefer_port``). **Hubs**: the busiest port has 168 distinct training
neighbours, the commonest cargo class 158, the largest carrier 100, the commonest
classification society 71, the commonest flag state 62 (a vessel a median of 12); the 2-hop
enclosing subgraphs of 200 test targets hold a median of 1,106 training triples (p90 2,571).

**Base facts** (:func:`maritime_world`), with :math:`N` = ``size`` vessels: every country of
``_COUNTRIES`` is on a Paris MoU list (``psc_list``); :math:`\max(16, \lfloor N/8 \rfloor)` ports
are ``located_in`` a country (one in each country with a port weight first, the rest by weight)
with a log-normal traffic and :math:`1 + \text{Poisson}(1)` terminals each (``terminal_of``); a
terminal ``handles`` a cargo class of ``_CARGO`` by fleet share (a port's first a container one
with probability .6) and with probability .3 a second. :math:`\max(8, \lfloor N/15 \rfloor)`
carriers and :math:`\max(12, \lfloor N/5 \rfloor)` owners are ``located_in`` a country (their
headquarters) by weight, with log-normal sizes; a carrier is in one of three latent alliances.
:math:`\max(10, \lfloor N/8 \rfloor)` liner services (one for each liner cargo class first, the
rest by the classes' liner fleet shares) have :math:`4 + \text{Poisson}(2)` distinct ports by
traffic (``service_calls``) and are ``run_by`` a lead carrier by size, with probability .6 a
partner and then .35 another (of the lead's alliance four times more likely). A vessel ``carries``
a cargo class by share, is ``owned_by`` an owner by fleet size, ``flagged_in`` the owner's country
with probability .3 and else a flag by share, and ``classed_by`` a society by share; it sails on a
liner service with its class's liner share (container 1, vehicles .7, reefer .6, bulk, crude and
LNG 0): then it is ``deployed_on`` a service of its class by a log-normal weight, ``operated_by``
one of that service's carriers and, with probability .12 at each call, ``berthed_at`` a terminal
there handling its cargo; else it is ``operated_by`` a carrier by size and ``berthed_at``
:math:`2 + \text{Poisson}(1.5)` terminals handling its cargo (any terminal if none does) by port
traffic, each in its flag state with probability .35 where there is one. ``ais_reported`` and the
random ``inspected_at`` facts follow the planned calls (above). ``diverted_to`` follows the closure
and is drawn after a first :func:`~graphdata.worlds.base.build_world`: for each withheld
``calls_at`` fact with probability .8 and for each planned call with probability .01, to a port by
traffic. It is in no rule body, so adding it leaves the closure, the noise and the split as they
were, and a second build from the generator state of the first gives the same world with it.

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`MARITIME_RULES`.
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

__all__ = ["MARITIME_RULES", "maritime_world"]

#: The planted rules: carriers operating the vessels that name them (an inverse pair), the
#: ports a vessel calls at on its liner service or at the terminals it berths at (a head with
#: two bodies), domestic calls in the flag state (a triangle), port state control inspections
#: of black-listed flags (a two-step branch off the vessel to ``list_black``), the ports a
#: carrier serves with reefer ships (anchored on ``cargo_reefer`` at the path's middle node),
#: vessel-sharing partners (a symmetric star with an inequality) and the foreign flags a
#: carrier registers its ships under (an inequality between the tail and a branch off the head).
MARITIME_RULES = """\
operator_inverse: operates(C,V) <- operated_by(V,C)
liner_call: calls_at(V,P) <- deployed_on(V,S), service_calls(S,P)
tramp_call: calls_at(V,P) <- berthed_at(V,T), terminal_of(T,P)
cabotage: domestic_call(V,P) <- calls_at(V,P), flagged_in(V,K), located_in(P,K)
psc_targeting: inspected_at(V,P) <- flagged_in(V,K), psc_list(K,list_black), calls_at(V,P)
reefer_network: reefer_port(C,P) <- operates(C,V), carries(V,cargo_reefer), calls_at(V,P)
vessel_sharing: vsa_partner(C,D) <- run_by(S,C), run_by(S,D), C != D
flag_out: flags_out(C,K) <- operates(C,V), flagged_in(V,K), located_in(C,H), K != H
"""

#: The countries (entity ``country_<name>``): each with its share of the flags, its weight for
#: ports, its weight for the headquarters of carriers and owners, and its Paris MoU performance
#: list (entity ``list_<name>``).
_COUNTRIES = (
    ("panama", 0.14, 0.05, 0.0, "white"),
    ("liberia", 0.12, 0.0, 0.0, "white"),
    ("marshall_islands", 0.1, 0.0, 0.0, "white"),
    ("malta", 0.05, 0.03, 0.0, "white"),
    ("singapore", 0.07, 0.1, 0.08, "white"),
    ("greece", 0.06, 0.07, 0.16, "white"),
    ("china", 0.08, 0.22, 0.2, "white"),
    ("norway", 0.04, 0.05, 0.1, "white"),
    ("germany", 0.03, 0.09, 0.13, "white"),
    ("netherlands", 0.02, 0.11, 0.07, "white"),
    ("japan", 0.05, 0.11, 0.14, "white"),
    ("denmark", 0.02, 0.04, 0.12, "white"),
    ("sierra_leone", 0.04, 0.02, 0.0, "grey"),
    ("togo", 0.07, 0.03, 0.0, "black"),
    ("cameroon", 0.06, 0.03, 0.0, "black"),
    ("comoros", 0.05, 0.0, 0.0, "black"),
)
#: The Paris MoU performance lists.
_LISTS = ("white", "grey", "black")
#: The cargo classes (entity ``cargo_<name>``): each with its share of the fleet and the share
#: of its ships on liner services (the rest are tramps, chartered voyage by voyage).
_CARGO = (
    ("container", 0.32, 1.0),
    ("vehicles", 0.08, 0.7),
    ("reefer", 0.12, 0.6),
    ("dry_bulk", 0.26, 0.0),
    ("crude", 0.15, 0.0),
    ("lng", 0.07, 0.0),
)
#: The classification societies (entity ``society_<name>``) and their share of the fleet.
_SOCIETIES = (
    ("dnv", 0.22),
    ("lr", 0.18),
    ("abs", 0.18),
    ("classnk", 0.16),
    ("bv", 0.14),
    ("ccs", 0.12),
)
#: Withheld heads: a port omitted from a liner rotation (blank sailing; the ship is mostly
#: recorded diverted to another port), a call at a home port on an international voyage, a
#: black-listed ship that left before the inspectors boarded, a reefer ship calling for
#: bunkers only.
_EXCEPTION_RATES = (
    ("liner_call", 0.06),
    ("cabotage", 0.05),
    ("psc_targeting", 0.1),
    ("reefer_network", 0.05),
)
#: Heads without grounding: a call for bunkers or crew change off the records, a domestic
#: leg recorded under another flag, an inspection at an anchorage after a complaint, a reefer
#: call by a chartered ship, a flag held through a subsidiary.
_NOISE_RATES = (
    ("calls_at", 0.03),
    ("domestic_call", 0.05),
    ("inspected_at", 0.04),
    ("reefer_port", 0.03),
    ("flags_out", 0.05),
)


def maritime_world(
    size: int = 340,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the maritime world (module docstring) and its ground truth.

    Args:
        size: The number of vessels :math:`N \ge 60`. Default 340 (635 entities, 22
            relations and 7,355 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"maritime"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = maritime_world(80, seed=0)
        >>> w.exception_rates["liner_call"], w.shortcuts
        (0.06, (('ais_reported', 'calls_at'),))
        >>> sorted(r.length for r in w.rules if r.head.relation == "calls_at")
        [2, 2]
    """
    check_world_arguments(size, 60, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    n_country, n_cargo = len(_COUNTRIES), len(_CARGO)
    n_port, n_carrier = max(16, n // 8), max(8, n // 15)
    n_service, n_owner = max(10, n // 8), max(12, n // 5)
    countries = [f"country_{name}" for name, *_ in _COUNTRIES]
    lists = [f"list_{name}" for name in _LISTS]
    cargos = [f"cargo_{name}" for name, _, _ in _CARGO]
    societies = [f"society_{name}" for name, _ in _SOCIETIES]
    vessels, ports = entity_labels("vessel", n), entity_labels("port", n_port)
    carriers, services = entity_labels("carrier", n_carrier), entity_labels("service", n_service)
    owners = entity_labels("owner", n_owner)
    facts: list[LabeledTriple] = []

    # Countries on the Paris MoU lists (psc_list: N-1).
    facts.extend((countries[k], "psc_list", f"list_{row[4]}") for k, row in enumerate(_COUNTRIES))
    flag_share = np.array([row[1] for row in _COUNTRIES])
    port_weight = np.array([row[2] for row in _COUNTRIES])
    hq_weight = np.array([row[3] for row in _COUNTRIES])
    cargo_share = np.array([s for _, s, _ in _CARGO])
    liner_share = np.array([s for _, _, s in _CARGO])
    liner = [c for c in range(n_cargo) if liner_share[c] > 0]

    # Ports: one in each country of port weight first, the rest by weight (located_in), each
    # with a log-normal traffic and 1 + Poisson(1) terminals (terminal_of); a terminal handles
    # a cargo class by fleet share (the port's first terminal a container one with probability
    # .6) and with probability .3 a second (handles).
    port_countries = [k for k in range(n_country) if port_weight[k] > 0]
    port_country = (
        port_countries
        + rng.choice(
            n_country, size=n_port - len(port_countries), p=port_weight / port_weight.sum()
        ).tolist()
    )
    facts.extend((ports[p], "located_in", countries[k]) for p, k in enumerate(port_country))
    traffic = rng.lognormal(0.0, 0.9, n_port)
    terminal_port: list[int] = []
    terminal_cargo: list[set[int]] = []
    for p in range(n_port):
        for i in range(1 + int(rng.poisson(1.0))):
            main = 0 if i == 0 and rng.random() < 0.6 else int(rng.choice(n_cargo, p=cargo_share))
            handled = {main}
            if rng.random() < 0.3:
                handled.add(int(rng.choice(n_cargo, p=cargo_share)))
            terminal_port.append(p)
            terminal_cargo.append(handled)
    terminals = entity_labels("terminal", len(terminal_port))
    facts.extend((terminals[t], "terminal_of", ports[p]) for t, p in enumerate(terminal_port))
    facts.extend(
        (terminals[t], "handles", cargos[c])
        for t, handled in enumerate(terminal_cargo)
        for c in sorted(handled)
    )

    # Carriers (located_in a country by weight: their headquarters) of log-normal size in three
    # latent alliances; owners located_in a country by weight, of log-normal fleet size.
    carrier_hq = rng.choice(n_country, size=n_carrier, p=hq_weight / hq_weight.sum())
    facts.extend((carriers[c], "located_in", countries[int(k)]) for c, k in enumerate(carrier_hq))
    carrier_size = rng.lognormal(0.0, 0.8, n_carrier)
    alliance = rng.integers(3, size=n_carrier)
    owner_hq = rng.choice(n_country, size=n_owner, p=hq_weight / hq_weight.sum())
    facts.extend((owners[o], "located_in", countries[int(k)]) for o, k in enumerate(owner_hq))
    owner_size = rng.lognormal(0.0, 0.8, n_owner)

    # Liner services: one for each liner cargo class first, the rest by the classes' shares;
    # each calls at 4 + Poisson(2) distinct ports by traffic (service_calls) and is run_by a
    # lead carrier by size, with probability .45 a partner and then with .25 another (an
    # alliance partner four times more likely): a vessel-sharing agreement.
    w = (cargo_share * liner_share)[liner]
    service_cargo = liner + [
        liner[int(i)] for i in rng.choice(len(liner), size=n_service - len(liner), p=w / w.sum())
    ]
    service_ports: list[list[int]] = []
    service_carriers: list[list[int]] = []
    for s in range(n_service):
        k = min(n_port, 4 + int(rng.poisson(2.0)))
        stops = sorted(rng.choice(n_port, size=k, replace=False, p=traffic / traffic.sum()))
        service_ports.append([int(p) for p in stops])
        facts.extend((services[s], "service_calls", ports[int(p)]) for p in stops)
        run = [weighted_pick(rng, list(range(n_carrier)), carrier_size)]
        for chance in (0.6, 0.35):
            if rng.random() >= chance:
                break
            pool = [c for c in range(n_carrier) if c not in run]
            w = carrier_size * np.where(alliance == alliance[run[0]], 4.0, 1.0)
            run.append(weighted_pick(rng, pool, w))
        service_carriers.append(run)
        facts.extend((services[s], "run_by", carriers[c]) for c in sorted(run))
    service_weight = rng.lognormal(0.0, 0.5, n_service)

    # Vessels: a cargo class by share (carries), an owner by fleet size (owned_by), a flag
    # (flagged_in: the owner's country with probability .3, else by flag share) and a
    # classification society by share (classed_by). A ship sails on a liner service with its
    # class's liner share: it is deployed_on a service of its class by weight and operated_by
    # one of the service's carriers; a tramp
    # is operated_by a carrier by size and berthed_at 2 + Poisson(1.5) terminals handling its
    # cargo (if any, by port traffic; each with probability .35 in its flag state where there
    # is one). A liner call is also a berth record with probability .12.
    society_share = np.array([s for _, s in _SOCIETIES])
    every_carrier, every_owner = list(range(n_carrier)), list(range(n_owner))
    vessel_cargo = rng.choice(n_cargo, size=n, p=cargo_share).tolist()
    vessel_flag: list[int] = []
    planned: list[set[int]] = []  # the ports each vessel is meant to call at
    for v in range(n):
        c = int(vessel_cargo[v])
        o = weighted_pick(rng, every_owner, owner_size)
        home = int(owner_hq[o])
        flag = home if rng.random() < 0.3 else int(rng.choice(n_country, p=flag_share))
        vessel_flag.append(flag)
        facts.append((vessels[v], "carries", cargos[c]))
        facts.append((vessels[v], "owned_by", owners[o]))
        facts.append((vessels[v], "flagged_in", countries[flag]))
        society = societies[int(rng.choice(len(societies), p=society_share))]
        facts.append((vessels[v], "classed_by", society))
        fit = [t for t in range(len(terminals)) if c in terminal_cargo[t]]
        calls: set[int] = set()
        if rng.random() < liner_share[c]:
            pool = [s for s in range(n_service) if service_cargo[s] == c]
            s = weighted_pick(rng, pool, service_weight)
            operator = service_carriers[s][int(rng.integers(len(service_carriers[s])))]
            facts.append((vessels[v], "deployed_on", services[s]))
            calls.update(service_ports[s])
            for p in service_ports[s]:
                here = [t for t in fit if terminal_port[t] == p]
                if here and rng.random() < 0.12:
                    t = here[int(rng.integers(len(here)))]
                    facts.append((vessels[v], "berthed_at", terminals[t]))
        else:
            operator = weighted_pick(rng, every_carrier, carrier_size)
            pool = fit or list(range(len(terminals)))
            domestic = [t for t in pool if port_country[terminal_port[t]] == flag]
            w = traffic[terminal_port]
            berths: set[int] = set()
            for _ in range(min(len(pool), 2 + int(rng.poisson(1.5)))):
                near = [t for t in domestic if t not in berths]
                rest = [t for t in pool if t not in berths]
                t = weighted_pick(rng, near if near and rng.random() < 0.35 else rest, w)
                berths.add(t)
            facts.extend((vessels[v], "berthed_at", terminals[t]) for t in sorted(berths))
            calls.update(terminal_port[t] for t in berths)
        facts.append((vessels[v], "operated_by", carriers[operator]))
        planned.append(calls)

    # AIS position reports inside port limits (ais_reported, base): each planned call with
    # probability .9 (a ship that waits at anchorage and then omits the call is still seen)
    # and, with probability .15, a port the ship passed by traffic: a correlated shortcut of
    # calls_at, in no body. Random port state control inspections (inspected_at, base): each
    # planned call of a ship not on the black list with probability .05, on the grey list .2.
    for v in range(n):
        seen = {p for p in planned[v] if rng.random() < 0.9}
        if rng.random() < 0.15:
            seen.add(int(rng.choice(n_port, p=traffic / traffic.sum())))
        facts.extend((vessels[v], "ais_reported", ports[p]) for p in sorted(seen))
        status = _COUNTRIES[vessel_flag[v]][4]
        if status != "black":
            rate = 0.2 if status == "grey" else 0.05
            facts.extend(
                (vessels[v], "inspected_at", ports[p])
                for p in sorted(planned[v])
                if rng.random() < rate
            )

    types = {
        **dict.fromkeys(countries, "country"),
        **dict.fromkeys(lists, "psc_list"),
        **dict.fromkeys(cargos, "cargo_class"),
        **dict.fromkeys(societies, "class_society"),
        **dict.fromkeys(vessels, "vessel"),
        **dict.fromkeys(ports, "port"),
        **dict.fromkeys(terminals, "terminal"),
        **dict.fromkeys(carriers, "carrier"),
        **dict.fromkeys(services, "service"),
        **dict.fromkeys(owners, "owner"),
    }

    def build(base: list[LabeledTriple], generator: np.random.Generator) -> World:
        return build_world(
            "maritime",
            base,
            MARITIME_RULES,
            seed=seed,
            size=n,
            rng=generator,
            entity_types=types,
            exception_rates=dict(_EXCEPTION_RATES),
            noise_rates=dict(_NOISE_RATES),
            symmetric=("vsa_partner",),
            inverse_pairs=(("operated_by", "operates"),),
            shortcuts=(("ais_reported", "calls_at"),),
            valid_fraction=valid_fraction,
            test_fraction=test_fraction,
        )

    # Diversions follow the closure, so they are drawn after a first build: the relation is in
    # no rule body, so adding it leaves the closure, the noise and the split unchanged, and a
    # second build from the same generator state gives the same world with it. An omitted
    # liner call (a withheld calls_at fact) is mostly recorded as a diversion (.8: diverted_to
    # another port of the omitted port's country if there is one, else a port by traffic);
    # besides, each planned call is a diversion with probability .01.
    replay = copy.deepcopy(rng)
    first = build(facts, rng)
    vessel_index = {label: v for v, label in enumerate(vessels)}
    port_index = {label: p for p, label in enumerate(ports)}
    diverted: set[tuple[int, int]] = set()
    every_port = list(range(n_port))
    for x, relation, y in first.exceptions:
        if relation == "calls_at" and rng.random() < 0.8:
            v, p = vessel_index[x], port_index[y]
            pool = [q for q in every_port if port_country[q] == port_country[p] and q != p]
            pool = pool or [q for q in every_port if q != p]
            diverted.add((v, weighted_pick(rng, pool, traffic)))
    for v in range(n):
        for p in sorted(planned[v]):
            if rng.random() < 0.01:
                diverted.add((v, weighted_pick(rng, [q for q in every_port if q != p], traffic)))
    facts.extend((vessels[v], "diverted_to", ports[p]) for v, p in sorted(diverted))
    return build(facts, replay)
