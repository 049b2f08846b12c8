r"""A passenger railways world: stations, lines, operators, services, rolling stock, drivers.

Written in session 30 as a **held-out** world for the explainer, without reading :mod:`kg.explain`,
the explainer benchmarks or their results, and never run with an explainer or trained on while it
was written: designed from the railway domain (stations in towns of four countries; lines, some
crossing a border, managed by a national infrastructure manager or by an integrated regional
railway; services of incumbent, open-access and regional operators calling at runs of a line's
stations and sometimes continuing over a second line; unit classes with their variants and
traction; units allocated to depots; drivers trained and rostered), not from how any explainer
decides. The rules (:data:`RAILWAYS_RULES`, length = body atoms):

* ``allocation_inverse: allocated(D,U) <- allocated_to(U,D)``, length 1, an **inverse pair**
  (recorded in :attr:`~graphdata.worlds.World.inverse_pairs`; 1-N, 415 units at seed 0) with
  no exception or noise;
* ``type_training: can_drive(X,C) <- trained_on(X,C)``, length 1, and ``variant_training:
  can_drive(X,C) <- trained_on(X,K), variant_of(C,K)``, length 2: **a head with two bodies**,
  the second through a class's parent (training on a class covers its variants);
* ``fleet_maintenance: maintains(D,C) <- allocated(D,U), of_class(U,C)``, length 2, a chain
  whose first atom is the **derived** inverse;
* ``interchange: interchange_with(L,M) <- on_line(S,L), on_line(S,M), L != M``, length 2, a
  **symmetric** relation (:attr:`~graphdata.worlds.World.symmetric`, 266 facts at seed 0)
  with no exception or noise;
* ``qualified_driver: drives(X,V) <- rostered_on(X,V), formed_of(V,C), can_drive(X,C)``,
  length 3, a **triangle** whose first atom is parallel to the head and whose last atom is the
  derived two-body ``can_drive`` (a driver rostered on a service of a class it cannot drive
  does not drive it);
* ``track_access: charged_by(V,M) <- runs_on(V,L), managed_by(L,M), operated_by(V,O), M !=
  O``, length 3, the access charges of a service: an **inequality between a head variable and
  a body variable** of the same type (an integrated railway's own services on its own lines
  pay no charge);
* ``diesel_emissions: diesel_at(V,S) <- formed_of(V,C), traction(C,traction_diesel),
  calls_at(V,S)``, length 3, with **a constant** in the middle atom: bimode classes
  (``traction_bimode``, in no body) run on the same lines;
* ``town_service: serves_town(O,Y) <- operated_by(V,O), calls_at(V,S), located_in(S,Y)``,
  length 3, a **chain** that starts by reversing an N-1 relation, through the dense
  ``calls_at``;
* a **correlated shortcut** (:attr:`~graphdata.worlds.World.shortcuts`), in no body:
  ``pathed_by`` (the manager that timetabled the service: its first line's with probability
  .9) links .72 of the ``charged_by`` pairs, and .66 of its training pairs are ``charged_by``
  pairs (seed 0);
* rules of length 1 (two), 2 (three) and 3 (four); 1-N (``allocated``), N-1 (``allocated_to``,
  ``charged_by``, ``formed_of``, ``located_in``, ``managed_by``, ``of_class``, ``operated_by``,
  ``pathed_by``, ``runs_on``, ``traction``), 1-1 (``variant_of``) and N-N (``calls_at``,
  ``can_drive``, ``diesel_at``, ``drives``, ``interchange_with``, ``maintains``, ``on_line``,
  ``rostered_on``, ``serves_town``, ``trained_on``) relations (by count at seed 0);
* **exceptions**: 2 % of ``type_training``'s heads (a lapsed licence), 8 % of
  ``variant_training``'s (a variant that needs conversion training), 5 % of
  ``qualified_driver``'s (a driver replaced on the day), 4 % of ``fleet_maintenance``'s (a
  depot that only stables a class), 4 % of ``track_access``'s (a grandfathered access
  agreement), 5 % of ``diesel_emissions``'s (an engine shut down at a station) and 3 % of
  ``town_service``'s (calls not marketed in a town) are withheld; a withheld ``can_drive``
  fact also leaves out the heads only it grounds. **Noise**: 3 % of the ``can_drive`` (a
  competence from a previous employer), 3 % of the ``drives`` (a rest-day working), 4 % of the
  ``maintains`` (contract maintenance), 2 % of the ``charged_by`` (an ad-hoc path), 2 % of the
  ``diesel_at`` (a failed train hauled by a diesel) and 3 % of the ``serves_town`` facts (a
  coach connection) have no grounding; a noise ``can_drive`` fact feeds ``qualified_driver``
  like any other.

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`):
1,169 entities (415 units, 240 stations, 240 services, 120 drivers, 60 towns, 26 lines, 16
unit classes, 15 depots, 14 regions, 12 operators, 4 countries, 4 infrastructure managers, 3
tractions), 22 relations; 6,916 train, 227 valid and 225 test triples; the valid+test targets
per rule of their shortest grounding are ``allocation_inverse`` 84, ``diesel_emissions`` 66,
``interchange`` 54, ``qualified_driver`` 53, ``town_service`` 45, ``track_access`` 43,
``variant_training`` 40, ``type_training`` 36, ``fleet_maintenance`` 21 (length 1: 120, 2:
115, 3: 207), and 10 noise facts; .19 of the targets have more than one grounding; 70
exceptions (22 ``drives``, 17 ``can_drive``, 14 ``diesel_at``, 8 ``charged_by``, 5
``maintains``, 4 ``serves_town``). **Hubs**: ``class_e100`` has 167 distinct training
neighbours, ``depot_000`` 78, ``line_008`` 75, the busiest station 70 (a driver a median of
7); the 2-hop enclosing subgraphs of 200 sampled test targets hold a median of 592.5 training
triples (p90 1,500.7; at seeds 1-3, 40 targets each, p90 1,103.2, 1,251.1 and 1,259.4).

**Base facts** (:func:`railways_world`), with :math:`N` = ``size`` stations: each region of
``_COUNTRIES`` is ``located_in`` its country, and :math:`\max(20, \lfloor N/4 \rfloor)` towns
of log-normal size, one in each region first and the rest by country weight, are
``located_in`` a region; stations, one in each town first and the rest by town size, are
``located_in`` their town. An incumbent operator and an infrastructure manager in each country,
and :math:`\max(6, \lfloor N/30 \rfloor)` other operators by country weight, each an integrated
regional railway with probability .4, are ``located_in`` their country.
:math:`\max(12, \lfloor N/9 \rfloor)` lines: a country by weight, 6 + Poisson(8) of its
stations by weight (big towns' stations become junctions) and, with probability .15, two
stations of a neighbouring country (``_BORDERS``); ``on_line`` for each, ``managed_by`` an
integrated railway of the country with probability .35 (else its manager), electrified with
probability .7. Unit classes (``_CLASSES``) have a ``traction`` and, for a variant,
``variant_of`` its parent. :math:`\max(60, N)` services on a line by log-normal weight:
``operated_by`` its integrated railway with probability .7, else the incumbent with
probability .5, else an operator of the country (any with probability .1); ``calls_at`` a
contiguous run of three or more of its stations and, with probability .3, a few more on a line
that meets it at its last call (``runs_on`` both), ``formed_of`` a class that fits the first
line's electrification (bimode and some diesel classes on electrified lines) and ``pathed_by``
the first line's manager with probability .9. :math:`\max(10, \lfloor N/16 \rfloor)` depots,
each of an operator (every operator with services first), ``located_in`` a town of its
country. 1 + Poisson(.8) units a service, ``of_class`` its class, ``allocated_to`` a depot of
its operator. :math:`\max(40, \lfloor N/2 \rfloor)` drivers, each of an operator (by its
services), ``trained_on`` 1 + Poisson(.7) classes it runs (a variant's parent with
probability .6) and ``rostered_on`` 3 + Poisson(3) of the operator's services (of a class it
can drive with probability .8).

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`RAILWAYS_RULES`.
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

__all__ = ["RAILWAYS_RULES", "railways_world"]

#: The planted rules: unit allocation (an inverse pair), driving competence (two bodies, one
#: through a class's parent), depot maintenance (through the derived allocation), line
#: interchanges (symmetric), qualified drivers (a triangle through the derived competence),
#: access charges (an inequality with a head variable), diesel calls (a constant) and the towns
#: an operator serves (a chain through the dense calls).
RAILWAYS_RULES = """\
allocation_inverse: allocated(D,U) <- allocated_to(U,D)
type_training: can_drive(X,C) <- trained_on(X,C)
variant_training: can_drive(X,C) <- trained_on(X,K), variant_of(C,K)
fleet_maintenance: maintains(D,C) <- allocated(D,U), of_class(U,C)
interchange: interchange_with(L,M) <- on_line(S,L), on_line(S,M), L != M
qualified_driver: drives(X,V) <- rostered_on(X,V), formed_of(V,C), can_drive(X,C)
track_access: charged_by(V,M) <- runs_on(V,L), managed_by(L,M), operated_by(V,O), M != O
diesel_emissions: diesel_at(V,S) <- formed_of(V,C), traction(C,traction_diesel), calls_at(V,S)
town_service: serves_town(O,Y) <- operated_by(V,O), calls_at(V,S), located_in(S,Y)
"""

#: The countries (entity ``country_<name>``): weight among towns, lines and operators, and the
#: number of regions (entity ``region_<name>_<i>``). Each has an infrastructure manager
#: (entity ``im_<name>``) and an incumbent operator (entity ``operator_<name>_rail``).
_COUNTRIES = (
    ("uk", 0.38, 5),
    ("france", 0.30, 4),
    ("belgium", 0.14, 2),
    ("netherlands", 0.18, 3),
)
#: Neighbouring countries (a line may cross into the next one).
_BORDERS = (("uk", "france"), ("france", "belgium"), ("belgium", "netherlands"))
#: Unit classes (entity ``class_<name>``): traction (``traction_electric``,
#: ``traction_diesel`` or ``traction_bimode``), the class it is a variant of (or ``None``),
#: its builder (not in the graph) and weight.
_CLASSES = (
    ("e100", "electric", None, "alder", 2.0),
    ("e100b", "electric", "e100", "alder", 1.0),
    ("e100c", "electric", "e100", "alder", 0.6),
    ("e200", "electric", None, "birchwood", 1.6),
    ("e200r", "electric", "e200", "birchwood", 0.8),
    ("e300", "electric", None, "cedar", 1.2),
    ("e400", "electric", None, "alder", 0.7),
    ("d150", "diesel", None, "cedar", 1.8),
    ("d150x", "diesel", "d150", "cedar", 0.9),
    ("d150y", "diesel", "d150", "cedar", 0.5),
    ("d220", "diesel", None, "dunmore", 1.4),
    ("d220m", "diesel", "d220", "dunmore", 0.8),
    ("d70", "diesel", None, "dunmore", 0.6),
    ("b800", "bimode", None, "birchwood", 1.3),
    ("b800s", "bimode", "b800", "birchwood", 0.7),
    ("b900", "bimode", None, "alder", 0.6),
)
#: Withheld heads: a driver whose licence on a class lapsed, a variant that needs conversion
#: training, a rostered driver replaced on the day, a depot that only stables a class, a
#: service under a grandfathered access agreement, a diesel service that shuts down its engine
#: at a station, an operator's calls not marketed in a town.
_EXCEPTION_RATES = (
    ("type_training", 0.02),
    ("variant_training", 0.08),
    ("qualified_driver", 0.05),
    ("fleet_maintenance", 0.04),
    ("track_access", 0.04),
    ("diesel_emissions", 0.05),
    ("town_service", 0.03),
)
#: Heads without grounding: a competence held from a previous employer, a driver on a service
#: from a rest-day working, a depot maintaining another operator's class under contract, a
#: charge for an ad-hoc path, a diesel locomotive hauling a failed train, a coach connection
#: advertised as a rail service.
_NOISE_RATES = (
    ("can_drive", 0.03),
    ("drives", 0.03),
    ("maintains", 0.04),
    ("charged_by", 0.02),
    ("diesel_at", 0.02),
    ("serves_town", 0.03),
)


def _pick(rng: np.random.Generator, weight: np.ndarray) -> int:
    """One index drawn with probability proportional to ``weight``."""
    return int(rng.choice(len(weight), p=weight / weight.sum()))


def railways_world(
    size: int = 240,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the railways world (module docstring) and its ground truth.

    Args:
        size: The number of stations :math:`N \ge 60`. Default 240 (1,169 entities, 22
            relations and 7,368 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"railways"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = railways_world(80, seed=0)
        >>> w.exception_rates["variant_training"], w.inverse_pairs
        (0.08, (('allocated_to', 'allocated'),))
        >>> sorted(r.length for r in w.rules if r.head.relation == "can_drive")
        [1, 2]
        >>> w.symmetric, w.shortcuts[0]
        (('interchange_with',), ('pathed_by', 'charged_by'))
    """
    check_world_arguments(size, 60, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    n_country = len(_COUNTRIES)
    names = [name for name, _, _ in _COUNTRIES]
    countries = [f"country_{name}" for name in names]
    country_index = {name: k for k, name in enumerate(names)}
    country_weight = np.array([w for _, w, _ in _COUNTRIES])
    neighbours: dict[int, list[int]] = {k: [] for k in range(n_country)}
    for one, two in _BORDERS:
        neighbours[country_index[one]].append(country_index[two])
        neighbours[country_index[two]].append(country_index[one])
    facts: list[LabeledTriple] = []

    # Regions and towns: each region located_in its country; max(20, N/4) towns, one in each
    # region first and the rest by country weight, of log-normal size, located_in a region.
    region_labels: list[str] = []
    region_country: list[int] = []
    for k, (name, _, count) in enumerate(_COUNTRIES):
        for i in range(count):
            region_labels.append(f"region_{name}_{i}")
            region_country.append(k)
    facts.extend(
        (region_labels[r], "located_in", countries[k]) for r, k in enumerate(region_country)
    )
    n_region = len(region_labels)
    n_town = max(20, n // 4)
    town_region: list[int] = []
    for j in range(n_town):
        if j < n_region:
            town_region.append(j)
        else:
            k = _pick(rng, country_weight)
            own = [r for r in range(n_region) if region_country[r] == k]
            town_region.append(own[int(rng.integers(len(own)))])
    town_country = [region_country[r] for r in town_region]
    town_size = rng.lognormal(0.0, 1.1, n_town)
    towns = entity_labels("town", n_town)
    facts.extend((towns[y], "located_in", region_labels[r]) for y, r in enumerate(town_region))

    # Stations: N, one in each town first, the rest by town size; located_in their town.
    station_town = list(range(n_town)) + [_pick(rng, town_size) for _ in range(n - n_town)]
    station_country = [town_country[y] for y in station_town]
    station_weight = town_size[station_town] * rng.lognormal(0.0, 0.5, n)
    stations = entity_labels("station", n)
    facts.extend((stations[s], "located_in", towns[y]) for s, y in enumerate(station_town))
    stations_in = {k: [s for s in range(n) if station_country[s] == k] for k in range(n_country)}

    # Operators: an incumbent in each country, then max(6, N/30) others by country weight,
    # each an integrated regional railway (managing its own lines) with probability .4.
    operator_labels = [f"operator_{name}_rail" for name in names]
    operator_country = list(range(n_country))
    integrated = [False] * n_country
    for j in range(max(6, n // 30)):
        operator_labels.append(f"operator_{j:03d}")
        operator_country.append(_pick(rng, country_weight))
        integrated.append(bool(rng.random() < 0.4))
    n_operator = len(operator_labels)
    facts.extend(
        (operator_labels[o], "located_in", countries[k]) for o, k in enumerate(operator_country)
    )
    managers = [f"im_{name}" for name in names]
    facts.extend((managers[k], "located_in", countries[k]) for k in range(n_country))

    # Lines: max(12, N/9), a country by weight, 6 + Poisson(8) distinct stations of it drawn
    # by weight (big towns' stations are junctions), ending with probability .15 in two
    # stations of a neighbouring country; on_line for each; managed_by an integrated operator
    # of the country with probability .35 (when there is one), else the country's manager;
    # electrified with probability .7 (not in the graph: it picks the services' classes).
    n_line = max(12, n // 9)
    line_stops: list[list[int]] = []
    line_country: list[int] = []
    line_manager: list[str] = []
    line_electric: list[bool] = []
    line_operator: list[int | None] = []
    for _ in range(n_line):
        k = _pick(rng, country_weight)
        pool = stations_in[k]
        count = min(len(pool), 6 + int(rng.poisson(8.0)))
        w = station_weight[pool]
        stops = [pool[i] for i in rng.choice(len(pool), size=count, replace=False, p=w / w.sum())]
        if neighbours[k] and rng.random() < 0.15:
            other = neighbours[k][int(rng.integers(len(neighbours[k])))]
            far = stations_in[other]
            w = station_weight[far]
            stops += [far[i] for i in rng.choice(len(far), size=2, replace=False, p=w / w.sum())]
        own = [o for o in range(n_operator) if integrated[o] and operator_country[o] == k]
        owner = own[int(rng.integers(len(own)))] if own and rng.random() < 0.35 else None
        line_stops.append(stops)
        line_country.append(k)
        line_operator.append(owner)
        line_manager.append(managers[k] if owner is None else operator_labels[owner])
        line_electric.append(bool(rng.random() < 0.7))
    lines = entity_labels("line", n_line)
    for i, stops in enumerate(line_stops):
        facts.extend((stations[s], "on_line", lines[i]) for s in stops)
        facts.append((lines[i], "managed_by", line_manager[i]))
    lines_at: dict[int, list[int]] = {}
    for i, stops in enumerate(line_stops):
        for s in stops:
            lines_at.setdefault(s, []).append(i)

    # Unit classes: traction and variant_of their parent.
    classes = [f"class_{name}" for name, _, _, _, _ in _CLASSES]
    class_index = {name: c for c, (name, _, _, _, _) in enumerate(_CLASSES)}
    class_traction = [t for _, t, _, _, _ in _CLASSES]
    class_parent = [None if p is None else class_index[p] for _, _, p, _, _ in _CLASSES]
    class_weight = np.array([w for _, _, _, _, w in _CLASSES])
    for c, (_, traction, parent, _, _) in enumerate(_CLASSES):
        facts.append((classes[c], "traction", f"traction_{traction}"))
        if parent is not None:
            facts.append((classes[c], "variant_of", f"class_{parent}"))
    electric_ok = np.array(
        [0.0 if t == "diesel" else w for t, w in zip(class_traction, class_weight)]
    )
    electric_ok *= np.array([1.0 if t == "electric" else 0.35 for t in class_traction])
    electric_ok += np.array(
        [w * 0.15 if t == "diesel" else 0.0 for t, w in zip(class_traction, class_weight)]
    )
    diesel_ok = np.array(
        [0.0 if t == "electric" else w for t, w in zip(class_traction, class_weight)]
    )

    # Services: max(60, N), on a line by log-normal weight, operated_by its integrated
    # owner with probability .7, else the incumbent with probability .5, else an operator of
    # the country (any with probability .1); calling at a contiguous run of 3 or more of its
    # stations and, with probability .3, continuing over a line that meets it at its last call
    # (runs_on both). formed_of a class fitting the first line's electrification, pathed_by
    # the first line's manager with probability .9 (else a country's manager).
    n_service = max(60, n)
    line_weight = rng.lognormal(0.0, 0.8, n_line)
    service_rows: list[tuple[int, list[int], list[int], int]] = []  # operator, lines, calls, class
    operators_in = {
        k: [o for o in range(n_operator) if operator_country[o] == k] for k in range(n_country)
    }
    for _ in range(n_service):
        i = _pick(rng, line_weight)
        k = line_country[i]
        owner = line_operator[i]
        if owner is not None and rng.random() < 0.7:
            o = owner
        elif rng.random() < 0.5:
            o = k
        elif rng.random() < 0.1:
            o = int(rng.integers(n_operator))
        else:
            pool = operators_in[k]
            o = pool[int(rng.integers(len(pool)))]
        stops = line_stops[i]
        a = int(rng.integers(len(stops) - 2))
        b = int(rng.integers(a + 3, len(stops) + 1))
        calls = stops[a:b]
        used = [i]
        if rng.random() < 0.3:
            onward = [j for j in lines_at[calls[-1]] if j != i]
            if onward:
                j = onward[int(rng.integers(len(onward)))]
                nxt = line_stops[j]
                at = nxt.index(calls[-1])
                more = (
                    nxt[at + 1 : at + 1 + int(rng.integers(2, 6))] or nxt[max(0, at - 3) : at][::-1]
                )
                calls = calls + [s for s in more if s not in calls]
                used.append(j)
        c = _pick(rng, electric_ok if line_electric[i] else diesel_ok)
        service_rows.append((o, used, calls, c))
    services = entity_labels("service", n_service)
    service_weight = rng.lognormal(0.0, 0.5, n_service)
    for v, (o, used, calls, c) in enumerate(service_rows):
        facts.append((services[v], "operated_by", operator_labels[o]))
        facts.extend((services[v], "runs_on", lines[i]) for i in used)
        facts.extend((services[v], "calls_at", stations[s]) for s in calls)
        facts.append((services[v], "formed_of", classes[c]))
        first = used[0]
        m = line_manager[first] if rng.random() < 0.9 else managers[_pick(rng, country_weight)]
        facts.append((services[v], "pathed_by", m))

    # Depots: max(10, N/16), each of an operator (every operator with services first) and
    # located_in a town of its country by size. Units: 1 + Poisson(.8) for each service, of its
    # class, allocated_to a depot of its operator (by a log-normal weight).
    active = sorted({o for o, _, _, _ in service_rows})
    n_depot = max(10, n // 16, len(active))
    depot_operator = active + [
        active[int(rng.integers(len(active)))] for _ in range(n_depot - len(active))
    ]
    depots = entity_labels("depot", n_depot)
    depot_weight = rng.lognormal(0.0, 0.7, n_depot)
    for d, o in enumerate(depot_operator):
        pool = [y for y in range(n_town) if town_country[y] == operator_country[o]]
        y = weighted_pick(rng, pool, town_size)
        facts.append((depots[d], "located_in", towns[y]))
    depots_of = {o: [d for d in range(n_depot) if depot_operator[d] == o] for o in active}
    unit_rows: list[tuple[int, int]] = []  # class, depot
    for o, _, _, c in service_rows:
        for _ in range(1 + int(rng.poisson(0.8))):
            unit_rows.append((c, weighted_pick(rng, depots_of[o], depot_weight)))
    units = entity_labels("unit", len(unit_rows))
    for u, (c, d) in enumerate(unit_rows):
        facts.append((units[u], "of_class", classes[c]))
        facts.append((units[u], "allocated_to", depots[d]))

    # Drivers: max(40, N/2), each of an operator with services (by their count). trained_on
    # 1 + Poisson(.7) classes its operator runs, each a class's parent with probability .6 when
    # it has one (training covers the variants); rostered_on 3 + Poisson(3) of the operator's
    # services, each of a class it can drive with probability .8 (when there is one).
    n_driver = max(40, n // 2)
    operator_load = np.zeros(n_operator)
    for o, _, _, _ in service_rows:
        operator_load[o] += 1.0
    services_of = {o: [v for v in range(n_service) if service_rows[v][0] == o] for o in active}
    classes_of = {o: sorted({service_rows[v][3] for v in services_of[o]}) for o in active}
    variants = {
        c: [x for x in range(len(classes)) if class_parent[x] == c] for c in range(len(classes))
    }
    drivers = entity_labels("driver", n_driver)
    for x in range(n_driver):
        o = _pick(rng, operator_load)
        load = np.array([class_weight[c] for c in classes_of[o]])
        trained: set[int] = set()
        for _ in range(1 + int(rng.poisson(0.7))):
            c = classes_of[o][_pick(rng, load)]
            p = class_parent[c]
            trained.add(p if p is not None and rng.random() < 0.6 else c)
        facts.extend((drivers[x], "trained_on", classes[c]) for c in sorted(trained))
        able = sorted(trained | {y for c in trained for y in variants[c]})
        mine = services_of[o]
        fit = [v for v in mine if service_rows[v][3] in able]
        rostered: set[int] = set()
        for _ in range(3 + int(rng.poisson(3.0))):
            pool = fit if fit and rng.random() < 0.8 else mine
            rostered.add(weighted_pick(rng, pool, service_weight))
        facts.extend((drivers[x], "rostered_on", services[v]) for v in sorted(rostered))

    kind_types = {
        **dict.fromkeys(countries, "country"),
        **dict.fromkeys(region_labels, "region"),
        **dict.fromkeys(towns, "town"),
        **dict.fromkeys(stations, "station"),
        **dict.fromkeys(operator_labels, "operator"),
        **dict.fromkeys(managers, "manager"),
        **dict.fromkeys(lines, "line"),
        **dict.fromkeys(classes, "unit_class"),
        **{f"traction_{t}": "traction" for t in ("electric", "diesel", "bimode")},
        **dict.fromkeys(services, "service"),
        **dict.fromkeys(depots, "depot"),
        **dict.fromkeys(units, "unit"),
        **dict.fromkeys(drivers, "driver"),
    }
    return build_world(
        "railways",
        facts,
        RAILWAYS_RULES,
        seed=seed,
        size=n,
        rng=rng,
        entity_types=kind_types,
        exception_rates=dict(_EXCEPTION_RATES),
        noise_rates=dict(_NOISE_RATES),
        symmetric=("interchange_with",),
        inverse_pairs=(("allocated_to", "allocated"),),
        shortcuts=(("pathed_by", "charged_by"),),
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
    )
