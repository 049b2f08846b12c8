r"""An urban public-transport world: lines and stops, operators, fleets, drivers, disruptions.

Written in session 38 by a helper as a **held-out** world for the explainer, without reading
:mod:`kg.explain`, the explainer benchmarks or their results, and never run with an explainer or
trained on while it was written: designed from urban public transport and mobility (six cities,
each a municipality divided into districts in rings around its centre, with a transit authority
whose tariff area holds one fare zone per ring and ticket products valid in some of them; bus,
tram and metro lines calling at the stops of their city, two interchange hubs a city, the
districts a line's route geometry passes through; a municipal operator and private groups that
win bus contracts, their depots, vehicles of eleven types and five fuels, drivers with their
licences and route knowledge; strikes, ticketing outages, roadworks and breakdowns; the
accessibility features of stops and vehicle types), not from how any explainer decides. The
rules (:data:`TRANSIT_RULES`, length = body atoms):

* ``timetable_termini: serves(L,S) <- terminates_at(L,S)``, length 1: a line's two termini are
  stops it serves (a timetable lists both ends); the termini are recorded only as
  ``terminates_at`` facts, so 144 of the 911 ``serves`` facts at seed 0 are derived;
* ``network_inverse: operates(O,L) <- operated_by(L,O)``, length 1, an **inverse pair**
  (:attr:`~graphdata.worlds.World.inverse_pairs`) with no exception or noise: the operator's
  list of the lines and depots it runs and the operator named on each (93 facts at seed 0);
* ``shared_stop_transfer: transfer_with(L,M) <- serves(L,S), serves(M,S), L != M``, length 2:
  passengers can change between two lines that call at one stop, a **symmetric** head
  (:attr:`~graphdata.worlds.World.symmetric`; 798 facts at seed 0, no exception or noise) from a
  **star** on the shared stop with an **inequality between the two head variables**, through
  the derived termini;
* ``fleet_fuel: runs_on(V,F) <- of_type(V,T), runs_on(T,F)``, length 2, a chain from a vehicle
  through its type into the fuel hubs (a hybrid or fuel-cell type runs on two); the types' fuels
  are base facts of the head relation;
* ``district_coverage: serves_district(L,X) <- serves(L,S), located_in(S,X)``, length 2, a
  chain through the derived termini: the districts where a line stops (a municipality's
  coverage report; 456 facts at seed 0);
* ``metro_tactile: has_feature(S,feature_tactile_paving) <- serves(L,S), of_type(L,mode_metro)``,
  length 2, **anchored on the constant** ``mode_metro`` in the body and
  ``feature_tactile_paving`` in the head: platform-edge tactile paving is mandatory at metro
  stations (accessibility regulations for platforms, the EU's TSI PRM), while at bus and tram
  stops it is a base feature recorded with a probability of .25 and .5;
* ``strike_disruption: disrupted_by(L,E) <- operated_by(L,O), affects(E,O),
  of_type(E,kind_strike)``, length 3, **anchored on the constant** ``kind_strike``: a strike at
  an operator disrupts its lines, while a ticketing outage affects an operator without
  disrupting service, and roadworks and breakdowns disrupt single lines (base ``disrupted_by``
  facts) without affecting an operator;
* ``duty_roster: rostered_on(D,L) <- employed_by(D,O), operated_by(L,O), signed_for(D,L)``,
  length 3, a **triangle** (driver, operator, line) whose last atom is parallel to the head: a
  driver is rostered on the lines they have route knowledge of that their employer runs; the
  route knowledge of a line another operator runs (learnt before a tender moved it, or at a
  previous employer) gives no duty;
* ``line_fuel: powered_by(L,F) <- assigned_to(V,L), of_type(V,T), runs_on(T,F)``, length 3, a
  chain from a line through its allocated vehicles and their types into the fuel hubs (the
  fuels of a line's fleet mix, as emissions reports give them; several groundings a head);
* a **correlated shortcut** (:attr:`~graphdata.worlds.World.shortcuts`), in no body:
  ``passes_through`` (the districts a line's GPS route traces cross: each district where it
  stops with probability .7, the traces of the rest lost, and each other district of its city
  with .2, a section without stops) links .68 of the ``serves_district`` pairs, and .85 of its
  training pairs are ``serves_district`` pairs (seed 0);
* rules of length 1 (two), 2 (four) and 3 (three); 1-N (``operates``, ``terminates_at``), N-1
  (``affects``, ``assigned_to``, ``based_at``, ``employed_by``, ``holds_licence``, ``in_zone``,
  ``located_in``, ``of_type``, ``operated_by``, ``runs_on``) and N-N (``disrupted_by``,
  ``has_feature``, ``passes_through``, ``powered_by``, ``rostered_on``, ``serves``,
  ``serves_district``, ``signed_for``, ``transfer_with``, ``valid_in``) relations (by count at
  seed 0);
* **exceptions**: 3 % of ``timetable_termini``'s heads (a terminus that is an arrival-only
  stand where passengers are set down, not a timetabled stop), 4 % of ``fleet_fuel``'s (a
  vehicle repowered after delivery, a diesel bus converted to battery-electric), 8 % of
  ``metro_tactile``'s (an older metro station not yet refitted), 10 % of
  ``strike_disruption``'s (a line run under a guaranteed minimum service, as the French
  *service minimum* and the Italian *fasce di garanzia* require), 8 % of ``duty_roster``'s
  (route knowledge lapsed after six months off the line, or a driver on long-term leave) and 5 %
  of ``line_fuel``'s (a reserve vehicle of that fuel that never runs on the line) are withheld;
  a withheld terminus also leaves out the transfers and districts only it grounds. **Noise**:
  3 % of the ``disrupted_by`` (a sympathy walkout at a contractor not named in the strike call),
  3 % of the ``rostered_on`` (a driver on loan to another operator for a duty) and 2 % of the
  ``serves_district`` facts (a temporary stop during a diversion that the stop register never
  recorded) have no grounding.

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`):
1,318 entities (600 stops, 290 vehicles, 144 drivers, 75 lines, 51 districts, 31 disruptions,
30 ticket products, 24 fare zones, 18 depots, 11 operators, 11 vehicle types, 6 cities, 6
authorities, 6 features, 5 fuels, 4 disruption kinds, 3 modes, 3 licences), 22 relations; 7,877
train, 256 valid and 254 test triples; the valid+test targets per rule of their shortest
grounding are ``shared_stop_transfer`` 157, ``district_coverage`` 90, ``fleet_fuel`` 66,
``duty_roster`` 59, ``strike_disruption`` 45, ``line_fuel`` 30, ``timetable_termini`` 28,
``network_inverse`` 18, ``metro_tactile`` 11 (length 1: 46, 2: 324, 3: 134), and 6 noise facts;
.31 of the targets have more than one grounding; 81 exceptions (34 ``rostered_on``, 18
``disrupted_by``, 9 ``runs_on``, 7 ``has_feature``, 7 ``powered_by``, 6 ``serves``). **Hubs**:
``feature_step_free`` has 392 distinct training neighbours, ``fuel_electric`` 188, ``licence_d``
106, the busiest operator 82, the busiest fare zone 72, the busiest line 62, the busiest vehicle
type 57, ``mode_bus`` 51, the busiest district 41 and ``kind_strike`` 21 (a stop a median of 6);
the 2-hop enclosing subgraphs of the 200 sampled test targets hold a median of 1,120.5
training triples (p90 2,182.2; at seeds 1-3, 40 targets each, medians 1,100.5, 1,112.0 and
1,032.5, p90 2,365.0, 2,496.0 and 1,935.9). Sizes were adjusted while the world was written,
never from an explainer's results: the number of private groups and the strike rate so that
``strike_disruption`` has enough held-out targets, and the GPS probabilities so that the
shortcut covers about two thirds of its head's pairs.

**Base facts** (:func:`transit_world`), with :math:`N` = ``size`` stops: each city of
``_CITIES`` has an authority ``located_in`` it; :math:`\max(12, \lfloor N/12 \rfloor)`
districts (at least three a city, by weight) are ``located_in`` their city, in rings 0 (the
centre) to 3 by rank, with a fare zone per ring ``located_in`` the authority. Each stop is in a
city by weight (the first two of each city its interchange hubs, in the centre), ``located_in``
a district (the centre 2.5 times as likely) and ``in_zone`` its ring's zone (and the next ring's
with probability .1, a boundary stop). :math:`\max(12, \lfloor N/8 \rfloor)` lines, each in a
city by weight, are metro, tram or bus lines by the city's shares (``of_type`` the mode); a line
calls at 8-18 stops of its city (a metro line 7-12, three times as likely central ones): the
first hub with probability .8, the second with .4, then stops by weight (an unserved one four
times as likely); it ``terminates_at`` the first and last and ``serves`` the others, and
``passes_through`` districts as the shortcut says. A stop ``has_feature`` each of ``_FEATURES``
with the probability of the highest mode calling there. A municipal operator per city runs its
metro and tram lines and each bus line with probability .45; the others go to one of three
private groups of the city (:math:`\max(4, \lfloor N/60 \rfloor)` groups of log-normal size); a
depot per operator and city, and one more per eight of its lines there, is ``located_in`` a
district and ``operated_by`` the operator. Each vehicle type of ``_TYPES`` ``runs_on`` its fuels
(and ``has_feature`` ``feature_low_floor`` if low-floor); each line has 2 + Poisson(1.5)
vehicles (a rail line 3 + Poisson(1)) ``of_type`` a type of its mode by weight (the operator's
preferred type three times as likely), ``based_at`` a depot of its operator in its city and
``assigned_to`` the line, and one spare per ten lines is assigned to none. Each line has 1 +
Poisson(1) drivers ``employed_by`` its operator, who ``holds_licence`` its mode's licence (and
the bus licence with probability .3 for a rail driver) and is ``signed_for`` the line, Poisson(1.5)
more lines of their licences at their employer in the city and, with probability .3, a line of
another operator there. Each operator has Poisson(1.5) strikes and Poisson(.5) ticketing
outages (``of_type`` their kind) that ``affects`` it (a strike a second operator of its city
with probability .2, a city-wide union call); each city has Poisson(.5 + 6 weight) roadworks
and breakdowns that each ``disrupted_by`` 1 + Poisson(1) of its lines (a breakdown one). Each
ticket product of ``_TICKETS`` of each city is ``valid_in`` the zones up to its ring.

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`TRANSIT_RULES`.
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

__all__ = ["TRANSIT_RULES", "transit_world"]

#: The planted rules: a line's termini are stops it serves, an operator's lines (an inverse
#: pair), transfers between lines that share a stop (symmetric, a star with an inequality), a
#: vehicle's fuel from its type, the districts a line serves, the tactile paving of metro
#: stations (a constant), the lines a strike disrupts (a constant), the lines a driver is
#: rostered on (a triangle) and the fuels a line's fleet runs on.
TRANSIT_RULES = """\
timetable_termini: serves(L,S) <- terminates_at(L,S)
network_inverse: operates(O,L) <- operated_by(L,O)
shared_stop_transfer: transfer_with(L,M) <- serves(L,S), serves(M,S), L != M
fleet_fuel: runs_on(V,F) <- of_type(V,T), runs_on(T,F)
district_coverage: serves_district(L,X) <- serves(L,S), located_in(S,X)
metro_tactile: has_feature(S,feature_tactile_paving) <- serves(L,S), of_type(L,mode_metro)
strike_disruption: disrupted_by(L,E) <- operated_by(L,O), affects(E,O), of_type(E,kind_strike)
duty_roster: rostered_on(D,L) <- employed_by(D,O), operated_by(L,O), signed_for(D,L)
line_fuel: powered_by(L,F) <- assigned_to(V,L), of_type(V,T), runs_on(T,F)
"""

#: The cities (entity ``city_<name>``): weight among the stops and lines, and the shares of
#: their lines that are metro and tram lines (the rest are bus lines).
_CITIES = (
    ("lyon", 0.22, 0.15, 0.25),
    ("turin", 0.18, 0.06, 0.35),
    ("leeds", 0.15, 0.0, 0.0),
    ("porto", 0.15, 0.25, 0.06),
    ("graz", 0.12, 0.0, 0.4),
    ("utrecht", 0.18, 0.0, 0.12),
)
#: The modes (entity ``mode_<name>``).
_MODES = ("bus", "tram", "metro")
#: The fuels (entity ``fuel_<name>``).
_FUELS = ("diesel", "electric", "hybrid_diesel", "cng", "hydrogen")
#: The vehicle types (entity ``vtype_<name>``): mode, fuels, whether low-floor, and weight among
#: a mode's new vehicles.
_TYPES = (
    ("citaro_diesel", "bus", ("diesel",), True, 1.0),
    ("articulated_diesel", "bus", ("diesel",), True, 0.5),
    ("hybrid_bus", "bus", ("hybrid_diesel", "electric"), True, 0.7),
    ("battery_bus", "bus", ("electric",), True, 0.8),
    ("cng_bus", "bus", ("cng",), True, 0.35),
    ("fuel_cell_bus", "bus", ("hydrogen", "electric"), True, 0.15),
    ("highfloor_coach", "bus", ("diesel",), False, 0.2),
    ("citadis_tram", "tram", ("electric",), True, 1.0),
    ("classic_tram", "tram", ("electric",), False, 0.4),
    ("automatic_metro", "metro", ("electric",), True, 0.6),
    ("classic_metro", "metro", ("electric",), False, 0.6),
)
#: The accessibility and passenger features (entity ``feature_<name>``) a stop has by mode
#: (bus, tram, metro): probability of each (tactile paving: not for metro stations, where the
#: rule puts it).
_FEATURES = (
    ("step_free", (0.55, 0.85, 0.6)),
    ("tactile_paving", (0.25, 0.5, 0.0)),
    ("real_time_display", (0.3, 0.7, 0.9)),
    ("shelter", (0.6, 0.8, 0.0)),
    ("audio_announcement", (0.05, 0.3, 0.8)),
)
#: The kinds of disruption (entity ``kind_<name>``).
_KINDS = ("strike", "ticketing_outage", "roadworks", "breakdown")
#: The driving licences (entity ``licence_<name>``) a mode needs.
_LICENCES = {"bus": "licence_d", "tram": "licence_tram", "metro": "licence_metro"}
#: The ticket products (entity ``ticket_<city>_<name>``): the outermost zone ring they are
#: valid to (-1: every zone).
_TICKETS = (("single", 0), ("day", -1), ("weekly", 1), ("monthly", -1), ("student", 1))
#: Withheld heads: an arrival-only terminus stand, a repowered vehicle, a metro station not
#: yet refitted, a line under guaranteed minimum service, a lapsed route knowledge, a reserve
#: vehicle's fuel.
_EXCEPTION_RATES = (
    ("timetable_termini", 0.03),
    ("fleet_fuel", 0.04),
    ("metro_tactile", 0.08),
    ("strike_disruption", 0.10),
    ("duty_roster", 0.08),
    ("line_fuel", 0.05),
)
#: Heads without grounding: a sympathy walkout, a driver on loan, a district served by an
#: unrecorded temporary stop.
_NOISE_RATES = (
    ("disrupted_by", 0.03),
    ("rostered_on", 0.03),
    ("serves_district", 0.02),
)


def _pick(rng: np.random.Generator, weight: np.ndarray) -> int:
    """One index drawn with probability proportional to ``weight``."""
    return int(rng.choice(len(weight), p=weight / weight.sum()))


def transit_world(
    size: int = 600,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the transit world (module docstring) and its ground truth.

    Args:
        size: The number of stops :math:`N \ge 80`. Default 600 (1,318 entities, 22 relations
            and 8,387 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"transit"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = transit_world(80, seed=0)
        >>> w.exception_rates["strike_disruption"], w.inverse_pairs
        (0.1, (('operated_by', 'operates'),))
        >>> sorted(r.length for r in w.rules)
        [1, 1, 2, 2, 2, 2, 3, 3, 3]
        >>> w.symmetric, w.shortcuts
        (('transfer_with',), (('passes_through', 'serves_district'),))
    """
    check_world_arguments(size, 80, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    facts: list[LabeledTriple] = []

    # Places: each city has a transit authority located_in it; max(12, N/12) districts, at
    # least three a city (by weight), each located_in its city, in a ring 0 (the centre) to 3
    # by its rank; a fare zone per ring, located_in the authority's area.
    cities = [f"city_{name}" for name, *_ in _CITIES]
    city_weight = np.array([c[1] for c in _CITIES])
    authorities = [f"authority_{name}" for name, *_ in _CITIES]
    facts.extend((authorities[c], "located_in", cities[c]) for c in range(len(cities)))
    n_district = max(12, n // 12)
    per_city = np.maximum(3, np.round(city_weight / city_weight.sum() * n_district)).astype(int)
    districts: list[str] = []
    district_city: list[int] = []
    district_ring: list[int] = []
    zones: dict[tuple[int, int], str] = {}
    for c, (name, *_) in enumerate(_CITIES):
        k = int(per_city[c])
        for i in range(k):
            d = len(districts)
            districts.append(f"district_{name}_{i:02d}")
            district_city.append(c)
            ring = min(3, (4 * i) // k) if i else 0
            district_ring.append(ring)
            facts.append((districts[d], "located_in", cities[c]))
            if (c, ring) not in zones:
                zones[(c, ring)] = f"zone_{name}_{ring}"
                facts.append((zones[(c, ring)], "located_in", authorities[c]))
    city_districts = [[d for d in range(len(districts)) if district_city[d] == c] for c in range(6)]
    district_weight = np.array([2.5 if r == 0 else 1.0 for r in district_ring])

    # Stops: N, each in a city by weight and located_in one of its districts (the centre 2.5
    # times as likely), in_zone its ring's zone and, on a zone boundary (probability .1), the
    # next ring's too. The first two stops of a city are its interchange hubs, in the centre.
    stops = entity_labels("stop", n)
    stop_city = [int(c) for c in range(6) for _ in range(2)]
    stop_city += [_pick(rng, city_weight) for _ in range(n - len(stop_city))]
    stop_district: list[int] = []
    hubs: list[list[int]] = [[] for _ in cities]
    for s in range(n):
        c = stop_city[s]
        if len(hubs[c]) < 2 and s < 12:
            hubs[c].append(s)
            stop_district.append(city_districts[c][0])
        else:
            stop_district.append(weighted_pick(rng, city_districts[c], district_weight))
        d = stop_district[s]
        facts.append((stops[s], "located_in", districts[d]))
        c, ring = district_city[d], district_ring[d]
        facts.append((stops[s], "in_zone", zones[(c, ring)]))
        if (c, ring + 1) in zones and rng.random() < 0.1:
            facts.append((stops[s], "in_zone", zones[(c, ring + 1)]))
    city_stops = [[s for s in range(n) if stop_city[s] == c] for c in range(6)]

    # Lines: max(12, N/8), each in a city by weight; a city's metro and tram lines by its shares.
    # A line calls at 8-18 stops of its city (a metro line 7-12, mostly central): its city's
    # first hub with probability .8, the second with .4, then stops by weight (an unserved
    # stop four times as likely); it terminates_at the first and last of them and serves the
    # others.
    n_line = max(12, n // 8)
    line_city = sorted(_pick(rng, city_weight) for _ in range(n_line))
    lines = entity_labels("line", n_line)
    line_mode: list[int] = []
    line_stops: list[list[int]] = []
    served = np.zeros(n)
    for i, c in enumerate(line_city):
        rank = sum(1 for j in range(i) if line_city[j] == c)
        total = line_city.count(c)
        metro, tram = _CITIES[c][2], _CITIES[c][3]
        share = rank / total
        mode = 2 if share < metro else 1 if share < metro + tram else 0
        line_mode.append(mode)
        length = int(rng.integers(7, 13)) if mode == 2 else int(rng.integers(8, 19))
        chosen: list[int] = []
        for h, p in zip(hubs[c], (0.8, 0.4)):
            if rng.random() < p:
                chosen.append(h)
        pool = [s for s in city_stops[c] if s not in chosen]
        weight = np.array(
            [
                (4.0 if served[s] == 0 else 1.0)
                * (3.0 if mode == 2 and district_ring[stop_district[s]] <= 1 else 1.0)
                for s in pool
            ]
        )
        want = min(len(pool), max(0, length - len(chosen)))
        picked = rng.choice(len(pool), size=want, replace=False, p=weight / weight.sum())
        chosen += [pool[int(j)] for j in picked]
        order = rng.permutation(len(chosen)).tolist()
        seq = [chosen[j] for j in order]
        line_stops.append(seq)
        for s in seq:
            served[s] += 1
        facts.append((lines[i], "of_type", f"mode_{_MODES[mode]}"))
        facts.append((lines[i], "terminates_at", stops[seq[0]]))
        facts.append((lines[i], "terminates_at", stops[seq[-1]]))
        facts.extend((lines[i], "serves", stops[s]) for s in seq[1:-1])

    # Route geometry: a line passes_through the district of each stop it calls at with
    # probability .7 (the GPS traces of the rest were lost) and another district of its city
    # with probability .2 each (a section without stops).
    for i, seq in enumerate(line_stops):
        own = sorted({stop_district[s] for s in seq})
        geo = {d for d in own if rng.random() < 0.7}
        geo |= {d for d in city_districts[line_city[i]] if d not in own and rng.random() < 0.2}
        facts.extend((lines[i], "passes_through", districts[d]) for d in sorted(geo))

    # Stop features: each with its probability for the busiest mode calling there (no tactile
    # paving recorded at a metro station: the metro_tactile rule's).
    best = [-1] * n
    for i, seq in enumerate(line_stops):
        for s in seq:
            best[s] = max(best[s], line_mode[i])
    for s in range(n):
        m = max(best[s], 0)
        for name, probs in _FEATURES:
            if rng.random() < probs[m]:
                facts.append((stops[s], "has_feature", f"feature_{name}"))

    # Operators: a municipal operator per city runs its metro and tram lines and each bus line
    # with probability .45; the others go to the private groups (max(4, N/60), log-normal size,
    # three a city). A depot per operator and city, and one more per eight lines, is
    # located_in a district and operated_by its operator.
    n_group = max(4, n // 60)
    municipal = [f"operator_{name}_transport" for name, *_ in _CITIES]
    groups = entity_labels("operator_group", n_group)
    operators = municipal + groups
    group_weight = rng.lognormal(0.0, 0.9, n_group)
    city_groups = [
        sorted(rng.choice(n_group, size=3, replace=False, p=group_weight / group_weight.sum()))
        for _ in cities
    ]
    line_operator: list[int] = []
    for i in range(n_line):
        c = line_city[i]
        if line_mode[i] > 0 or rng.random() < 0.45:
            o = c
        else:
            o = len(municipal) + weighted_pick(rng, city_groups[c], group_weight)
        line_operator.append(o)
        facts.append((lines[i], "operated_by", operators[o]))
    depots: list[str] = []
    depot_of: dict[tuple[int, int], list[int]] = {}
    for (o, c), count in sorted(
        {(line_operator[i], line_city[i]): 0 for i in range(n_line)}.items()
    ):
        k = 1 + sum(1 for i in range(n_line) if (line_operator[i], line_city[i]) == (o, c)) // 8
        del count
        for _ in range(k):
            x = len(depots)
            depots.append(f"depot_{x:03d}")
            depot_of.setdefault((o, c), []).append(x)
            d = city_districts[c][int(rng.integers(len(city_districts[c])))]
            facts.append((depots[x], "located_in", districts[d]))
            facts.append((depots[x], "operated_by", operators[o]))

    # Vehicles: each line has 2 + Poisson(1.5) (a metro or tram line 3 + Poisson(1)) of a type
    # of its mode, by weight (the operator's preferred type three times as likely), based_at
    # a depot of its operator in its city; one in ten more is a spare assigned to no line.
    types = [f"vtype_{name}" for name, *_ in _TYPES]
    for t, (_, _, fuels, low, _) in enumerate(_TYPES):
        facts.extend((types[t], "runs_on", f"fuel_{f}") for f in fuels)
        if low:
            facts.append((types[t], "has_feature", "feature_low_floor"))
    preferred = [int(rng.integers(len(_TYPES))) for _ in operators]
    vehicles: list[str] = []
    for i in range(n_line + n_line // 10):
        spare = i >= n_line
        line = int(rng.integers(n_line)) if spare else i
        mode = line_mode[line]
        count = 1 if spare else (3 + int(rng.poisson(1.0)) if mode else 2 + int(rng.poisson(1.5)))
        o = line_operator[line]
        pool = [t for t in range(len(_TYPES)) if _TYPES[t][1] == _MODES[mode]]
        weight = np.array([_TYPES[t][4] * (3.0 if t == preferred[o] else 1.0) for t in pool])
        for _ in range(count):
            v = f"vehicle_{len(vehicles):04d}"
            vehicles.append(v)
            facts.append((v, "of_type", types[pool[_pick(rng, weight)]]))
            home = depot_of[(o, line_city[line])]
            facts.append((v, "based_at", depots[home[int(rng.integers(len(home)))]]))
            if not spare:
                facts.append((v, "assigned_to", lines[line]))

    # Drivers: 1 + Poisson(1) for each line, employed_by its operator, holding the licence of
    # its mode (and the bus licence with probability .3 for a rail driver), signed_for (route
    # knowledge) 1 + Poisson(1.5) lines of their licences at their employer, and with
    # probability .3 a line of the same city another operator runs (learnt before a tender moved
    # it, or at a previous employer).
    drivers: list[str] = []
    for i in range(n_line):
        o, c = line_operator[i], line_city[i]
        for _ in range(1 + int(rng.poisson(1.0))):
            person = f"driver_{len(drivers):04d}"
            drivers.append(person)
            facts.append((person, "employed_by", operators[o]))
            modes = {line_mode[i]}
            if line_mode[i] and rng.random() < 0.3:
                modes.add(0)
            facts.extend((person, "holds_licence", _LICENCES[_MODES[m]]) for m in sorted(modes))
            own = [j for j in range(n_line) if line_operator[j] == o and line_mode[j] in modes]
            own = [j for j in own if line_city[j] == c and j != i]
            signed = {i}
            want = min(len(own), int(rng.poisson(1.5)))
            signed |= {own[int(j)] for j in rng.choice(len(own), size=want, replace=False)}
            other = [
                j
                for j in range(n_line)
                if line_city[j] == c and line_operator[j] != o and line_mode[j] in modes
            ]
            if other and rng.random() < 0.3:
                signed.add(other[int(rng.integers(len(other)))])
            facts.extend((person, "signed_for", lines[j]) for j in sorted(signed))

    # Disruptions: each operator has Poisson(1.5) strikes and Poisson(.5) ticketing outages,
    # each affects it (a strike affects a second operator of its city with probability .2, a
    # city-wide union call); each city has Poisson(.5 + 6 weight) roadworks and breakdowns
    # that disrupt 1 + Poisson(1) of its lines (a breakdown one).
    events: list[str] = []
    for o in range(len(operators)):
        my_cities = sorted({line_city[i] for i in range(n_line) if line_operator[i] == o})
        if not my_cities:
            continue
        for kind, rate in ((0, 1.5), (1, 0.5)):
            for _ in range(int(rng.poisson(rate))):
                e = f"event_{len(events):03d}"
                events.append(e)
                facts.append((e, "of_type", f"kind_{_KINDS[kind]}"))
                facts.append((e, "affects", operators[o]))
                if kind == 0 and rng.random() < 0.2:
                    c = my_cities[int(rng.integers(len(my_cities)))]
                    others = sorted(
                        {line_operator[i] for i in range(n_line) if line_city[i] == c} - {o}
                    )
                    if others:
                        p = others[int(rng.integers(len(others)))]
                        facts.append((e, "affects", operators[p]))
    for c in range(len(cities)):
        mine = [i for i in range(n_line) if line_city[i] == c]
        if not mine:
            continue
        for _ in range(int(rng.poisson(0.5 + 6 * city_weight[c]))):
            kind = 2 if rng.random() < 0.6 else 3
            e = f"event_{len(events):03d}"
            events.append(e)
            facts.append((e, "of_type", f"kind_{_KINDS[kind]}"))
            count = 1 if kind == 3 else min(len(mine), 1 + int(rng.poisson(1.0)))
            for j in rng.choice(len(mine), size=count, replace=False):
                facts.append((lines[mine[int(j)]], "disrupted_by", e))

    # Ticket products: each of _TICKETS in each city, valid_in the zones up to its ring.
    tickets: list[str] = []
    for c, (name, *_) in enumerate(_CITIES):
        rings = sorted(r for (cc, r) in zones if cc == c)
        for product, top in _TICKETS:
            label = f"ticket_{name}_{product}"
            tickets.append(label)
            for r in rings:
                if top < 0 or r <= top:
                    facts.append((label, "valid_in", zones[(c, r)]))

    kinds = {
        **dict.fromkeys(cities, "city"),
        **dict.fromkeys(authorities, "authority"),
        **dict.fromkeys(districts, "district"),
        **dict.fromkeys(zones.values(), "fare_zone"),
        **dict.fromkeys(stops, "stop"),
        **dict.fromkeys(lines, "line"),
        **dict.fromkeys((f"mode_{m}" for m in _MODES), "mode"),
        **dict.fromkeys(operators, "operator"),
        **dict.fromkeys(depots, "depot"),
        **dict.fromkeys(types, "vehicle_type"),
        **dict.fromkeys((f"fuel_{f}" for f in _FUELS), "fuel"),
        **dict.fromkeys(vehicles, "vehicle"),
        **dict.fromkeys(drivers, "driver"),
        **dict.fromkeys(_LICENCES.values(), "licence"),
        **dict.fromkeys(events, "disruption"),
        **dict.fromkeys((f"kind_{k}" for k in _KINDS), "disruption_kind"),
        **dict.fromkeys(tickets, "ticket"),
        **dict.fromkeys((f"feature_{f}" for f, _ in _FEATURES), "feature"),
        "feature_low_floor": "feature",
    }
    return build_world(
        "transit",
        facts,
        TRANSIT_RULES,
        seed=seed,
        size=n,
        rng=rng,
        entity_types=kinds,
        exception_rates=dict(_EXCEPTION_RATES),
        noise_rates=dict(_NOISE_RATES),
        symmetric=("transfer_with",),
        inverse_pairs=(("operated_by", "operates"),),
        shortcuts=(("passes_through", "serves_district"),),
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
    )
