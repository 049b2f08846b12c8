r"""A parliamentary world: politicians, parties, constituencies, committees, bills and votes.

Written in session 31 by a helper as a **held-out** world for the explainer, without reading
:mod:`kg.explain`, the explainer benchmarks or their results, and never run with an explainer or
trained on while it was written: designed from parliamentary politics (politicians of four
countries, elected in single-member constituencies, in multi-member districts or from a party
list, in the regions of their country; parties with regional strongholds, governing coalitions
and opposition pacts; ministries and select committees, each covering a policy area; government
and private members' bills with their sponsors, stages and recorded votes; lobby groups that
lobby committees and meet politicians; where politicians campaign), not from how any explainer
decides. The rules (:data:`PARLIAMENT_RULES`, length = body atoms):

* ``seat_inverse: represented_by(C,P) <- represents(P,C)``, length 1, an **inverse pair**
  (recorded in :attr:`~graphdata.worlds.World.inverse_pairs`; 282 seats in 228 constituencies
  at seed 0, 20 of them districts with several members), with no exception or noise, whose
  **derived side is used in another body** (``seat_party``);
* ``home_region: elected_in(P,R) <- represents(P,C), located_in(C,R)``, length 2, a chain into
  the region hubs beside a **correlated shortcut**: ``campaigns_in`` (base: a constituency
  member campaigns in its own region with probability .85 and in a few others) is in no body;
  at seed 0 it links .86 of the ``elected_in`` pairs and .66 of its training pairs are
  ``elected_in`` pairs (:attr:`~graphdata.worlds.World.shortcuts`);
* ``seat_party: held_by(C,X) <- represented_by(C,P), member_of(P,X)``, length 2, the parties
  holding a seat, **through the derived** ``represented_by`` (derived in the closure's second
  round);
* ``ministerial_voice: speaks_on(P,A) <- minister_of(P,M), covers(M,A)``, length 2, and
  ``legislative_voice: speaks_on(P,A) <- sponsored(P,B), stage(B,stage_enacted), covers(B,A)``,
  length 3: the policy areas a politician speaks on, **a head with two bodies** of different
  lengths and shapes, the second a **star** on the bill ``B`` (in every body atom, not in the
  head) with **a constant** in its middle atom; bills at the three other stages (committee,
  second reading, defeated) are sponsored and cover areas too. Of the 133 ``speaks_on`` facts
  at seed 0, .32 have both bodies (a minister's enacted bill), .05 only the ministry, .60 only
  an enacted bill and .04 none (noise); ``covers`` is one relation for ministries, committees
  and bills;
* ``co_sponsorship: co_sponsor(P,Q) <- sponsored(P,B), sponsored(Q,B), P != Q``, length 2, a
  **symmetric** relation (:attr:`~graphdata.worlds.World.symmetric`; 396 facts at seed 0) from
  a star with an inequality, with no exception or noise; ``coalition_with`` (base: the
  governing coalitions and two opposition pacts, 14 facts) is symmetric too;
* ``declared_interest: declares(P,L) <- met_with(L,P), sits_on(P,C), lobbies(L,C)``, length 3,
  a **triangle** (politician, lobby group, committee) whose first atom is the head reversed: a
  politician declares a lobby group it met that lobbies one of its committees (303 facts from
  547 meetings at seed 0);
* ``bill_party: endorses(X,B) <- sponsored(P,B), member_of(P,X)``, length 2, the parties
  behind a bill (1-N), a **derived relation used in two other bodies**:
* ``party_line: voted_with_party(P,B) <- voted_for(P,B), member_of(P,X), endorses(X,B)``,
  length 3, a **triangle through the derived** ``endorses``, with the first atom parallel to
  the head;
* ``cross_party: voted_across(P,B) <- voted_for(P,B), endorses(X,B), member_of(P,Y), X !=
  Y``, length 3, an **inequality between two body variables**, two parties reached from the
  bill and from the voter by different relations; a vote for a bill with sponsors of two
  parties is both (431 of the 1,261 recorded votes at seed 0, 864 ``voted_with_party`` and 776
  ``voted_across`` facts);
* rules of length 1 (one), 2 (five) and 3 (four); 1-1 (``coalition_with``, ``represents``,
  ``represented_by``, by count at seed 0), 1-N (``endorses``), N-1 (``campaigns_in``,
  ``covers``, ``elected_in``, ``held_by``, ``lobbies``, ``located_in``, ``member_of``,
  ``minister_of``, ``speaks_on``, ``stage``) and N-N (``co_sponsor``, ``declares``,
  ``met_with``, ``sits_on``, ``sponsored``, ``voted_across``, ``voted_for``,
  ``voted_with_party``) relations;
* **exceptions**: 3 % of ``home_region``'s heads (a constituency abolished at a boundary
  review), 5 % of ``seat_party``'s (a member who lost the whip), 4 % of
  ``ministerial_voice``'s (a minister without a public brief), 8 % of ``legislative_voice``'s
  (a sponsor who left the area), 10 % of ``declared_interest``'s (an undeclared interest), 3 %
  of ``bill_party``'s (a sponsor in breach of the whip), 5 % of ``party_line``'s and 6 % of
  ``cross_party``'s (an unrecorded vote) are withheld; a withheld ``endorses`` fact also leaves
  out the votes only it grounds. **Noise**: 3 % of the ``held_by`` (a seat recorded for the
  winner of a by-election), 4 % of the ``speaks_on`` (a spokesperson without a brief), 5 % of
  the ``declares`` (an interest declared after a meeting off the record), 2 % of the
  ``voted_with_party`` and 3 % of the ``voted_across`` facts (a miscoded division) have no
  grounding.

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`): 926
entities (320 politicians, 228 constituencies, 192 bills, 64 lobby groups, 35 committees, 31
ministries, 20 regions, 18 parties, 10 policy areas, 4 countries, 4 stages), 22 relations;
8,024 train, 317 valid and 313 test triples; the valid+test targets per rule of their
shortest grounding are ``party_line`` 131, ``cross_party`` 126, ``co_sponsorship`` 80,
``declared_interest`` 57, ``seat_inverse`` 56, ``home_region`` 56, ``bill_party`` 50,
``seat_party`` 38, ``legislative_voice`` 15, ``ministerial_voice`` 10 (length 1: 56, 2: 234,
3: 329), and 11 noise facts; .08 of the targets have more than one grounding; 147 exceptions
(43 ``voted_with_party``, 39 ``voted_across``, 32 ``declares``, 14 ``held_by``, 10
``endorses``, 6 ``speaks_on``, 3 ``elected_in``). **Hubs**: ``country_arden`` has 198 distinct
training neighbours (its politicians, bills, regions, parties, ministries, committees and lobby
groups are ``located_in`` it), ``party_arden_social`` 100, ``stage_enacted`` 90,
``region_arden_capital`` 55 and ``area_finance`` 54 (a politician a median of 14); the 2-hop
enclosing subgraphs of 200 sampled test targets hold a median of 1,684 training triples (p90
2,430; the p90 is 2,169, 2,635 and 2,040 at seeds 1, 2 and 3).

**Base facts** (:func:`parliament_world`), with :math:`N` = ``size`` politicians: the countries
of ``_COUNTRIES`` with their regions and parties, each ``located_in`` its country; a party has a
strength and a log-normal bias per region (a regional party is concentrated in one region), and
the governing parties of a country and the pacts of ``_PACTS`` are ``coalition_with`` each other
(both ways). Each politician is ``located_in`` a country (one in each first, the rest by
weight), lives in a region by weight and is ``member_of`` a party by strength times its bias
there; a list member (a share of the country's seats) has no constituency; the others of a
region are grouped into constituencies of the country's seat range (one member, or three to
five), each ``located_in`` the region, which they ``represents``; a politician
``campaigns_in`` its region (a constituency member with probability .85) and in Poisson(.35)
draws of the country's regions. Each country has a ministry and a committee for each core area
of ``_CORE_AREAS`` and for each other area of ``_AREAS`` with probability .7 and .6, each
``located_in`` the country and ``covers`` its area; a ministry has one or two ministers (a
member of a governing party, ``minister_of`` it), and a non-minister ``sits_on`` 1 +
Poisson(.9) draws of the country's committees. :math:`\max(20, \operatorname{round}(.6 N))`
bills, ``located_in`` a country by its politicians and ``covers`` an area by weight: a
government bill (probability .5 where the ministry of the area has a minister) is
``sponsored`` by its ministers and, with probability .5, a member of the area's committee; a
private member's bill by a non-minister (of the area's committee with probability .6) and
Poisson(.7) draws of co-sponsors (of its party with probability .6); its ``stage`` is drawn by
the bill's kind from ``_STAGES``. On each bill past committee stage a politician of the
country ``voted_for`` it with probability .18 when a member of its party sponsors it, .12 when
one of a coalition or pact partner does, else .03. :math:`\max(12, \lfloor N/5 \rfloor)` lobby
groups, ``located_in`` a country by weight, with one or two focus areas, ``lobbies`` the
country's committees of those areas and ``met_with`` 4 + Poisson(6) draws of the country's
politicians (a member of a lobbied committee with probability .55, a minister of a focus area
.15, else anyone).

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`PARLIAMENT_RULES`.
"""

from __future__ import annotations

import numpy as np

from graphdata.typing import LabeledTriple
from graphdata.worlds.base import (
    World,
    build_world,
    check_world_arguments,
    entity_labels,
)

__all__ = ["PARLIAMENT_RULES", "parliament_world"]

#: The planted rules: seat holders (an inverse pair), the region a member is elected in, the
#: party holding a seat (through the derived holders), a member's policy voice from a ministry
#: or from an enacted bill (two bodies, one a star with a constant), co-sponsors (symmetric, an
#: inequality), declared interests (a triangle), the parties behind a bill, votes with the own
#: party (a triangle through the derived parties) and votes across party lines (an inequality
#: between two body variables).
PARLIAMENT_RULES = """\
seat_inverse: represented_by(C,P) <- represents(P,C)
home_region: elected_in(P,R) <- represents(P,C), located_in(C,R)
seat_party: held_by(C,X) <- represented_by(C,P), member_of(P,X)
ministerial_voice: speaks_on(P,A) <- minister_of(P,M), covers(M,A)
legislative_voice: speaks_on(P,A) <- sponsored(P,B), stage(B,stage_enacted), covers(B,A)
co_sponsorship: co_sponsor(P,Q) <- sponsored(P,B), sponsored(Q,B), P != Q
declared_interest: declares(P,L) <- met_with(L,P), sits_on(P,C), lobbies(L,C)
bill_party: endorses(X,B) <- sponsored(P,B), member_of(P,X)
party_line: voted_with_party(P,B) <- voted_for(P,B), member_of(P,X), endorses(X,B)
cross_party: voted_across(P,B) <- voted_for(P,B), endorses(X,B), member_of(P,Y), X != Y
"""

#: The policy areas (entity ``area_<name>``) with their weights among bills and lobby groups.
_AREAS = (
    ("finance", 1.6),
    ("health", 1.4),
    ("education", 1.1),
    ("justice", 1.0),
    ("defence", 0.8),
    ("foreign", 0.7),
    ("environment", 1.0),
    ("agriculture", 0.6),
    ("transport", 0.8),
    ("labour", 0.9),
)
#: Areas every country has a ministry and a committee for.
_CORE_AREAS = ("finance", "health", "justice", "foreign")
#: Bill stages (entity ``stage_<name>``): the chance of each for a government bill and for a
#: private member's bill, and whether a bill at that stage reached a recorded division.
_STAGES = (
    ("enacted", 0.68, 0.34, True),
    ("defeated", 0.08, 0.24, True),
    ("second_reading", 0.10, 0.18, True),
    ("committee", 0.14, 0.24, False),
)
#: The countries (entity ``country_<name>``): weight among politicians, seats per constituency
#: (a range; 0 for none), the share of list members without a constituency, its regions
#: (entity ``region_<country>_<name>``) with weights, and its parties (entity
#: ``party_<country>_<family>``): strength, whether in government, and the region (if any)
#: where it is concentrated.
_COUNTRIES = (
    (
        "arden",
        0.32,
        (1, 1),
        0.0,
        (
            ("capital", 0.25),
            ("north", 0.2),
            ("midlands", 0.2),
            ("south", 0.2),
            ("highland", 0.08),
            ("coast", 0.07),
        ),
        (
            ("social", 0.37, True, None),
            ("conservative", 0.35, False, None),
            ("liberal", 0.15, True, None),
            ("regional", 0.13, False, "highland"),
        ),
    ),
    (
        "borvia",
        0.28,
        (1, 1),
        0.4,
        (("capital", 0.25), ("river", 0.25), ("forest", 0.2), ("mountain", 0.15), ("plain", 0.15)),
        (
            ("christian", 0.3, True, None),
            ("social", 0.26, True, None),
            ("green", 0.15, False, None),
            ("liberal", 0.12, False, None),
            ("left", 0.1, False, None),
            ("national", 0.07, False, "plain"),
        ),
    ),
    (
        "calmont",
        0.24,
        (3, 5),
        0.0,
        (("capital", 0.3), ("lakes", 0.2), ("north", 0.15), ("valley", 0.2), ("islands", 0.15)),
        (
            ("centre", 0.28, True, None),
            ("agrarian", 0.2, True, "valley"),
            ("green", 0.14, True, None),
            ("conservative", 0.22, False, None),
            ("social", 0.16, False, None),
        ),
    ),
    (
        "dunmere",
        0.16,
        (1, 1),
        0.0,
        (("capital", 0.4), ("east", 0.22), ("west", 0.22), ("south", 0.16)),
        (
            ("national", 0.42, True, None),
            ("social", 0.36, False, None),
            ("liberal", 0.22, False, None),
        ),
    ),
)
#: Opposition pacts besides the governing coalitions (``coalition_with`` both ways).
_PACTS = (("borvia", "green", "left"), ("calmont", "conservative", "social"))
#: Withheld heads: a constituency abolished at a boundary review, a member who lost the whip,
#: a minister without a public brief, a sponsor who left the area, an undeclared interest, a
#: bill sponsored by a member in breach of the whip, an unrecorded vote.
_EXCEPTION_RATES = (
    ("home_region", 0.03),
    ("seat_party", 0.05),
    ("ministerial_voice", 0.04),
    ("legislative_voice", 0.08),
    ("declared_interest", 0.1),
    ("bill_party", 0.03),
    ("party_line", 0.05),
    ("cross_party", 0.06),
)
#: Heads without grounding: a seat recorded for the party that won a by-election, a
#: spokesperson without a brief, a declared interest after a meeting off the record, a
#: miscoded division.
_NOISE_RATES = (
    ("held_by", 0.03),
    ("speaks_on", 0.04),
    ("declares", 0.05),
    ("voted_with_party", 0.02),
    ("voted_across", 0.03),
)


def _pick(rng: np.random.Generator, weight: np.ndarray) -> int:
    """One index drawn with probability proportional to ``weight``."""
    return int(rng.choice(len(weight), p=weight / weight.sum()))


def parliament_world(
    size: int = 320,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the parliamentary world (module docstring) and its ground truth.

    Args:
        size: The number of politicians :math:`N \ge 60`. Default 320 (926 entities, 22
            relations and 8,654 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"parliament"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = parliament_world(80, seed=0)
        >>> w.exception_rates["declared_interest"], w.inverse_pairs
        (0.1, (('represents', 'represented_by'),))
        >>> sorted(r.length for r in w.rules if r.head.relation == "speaks_on")
        [2, 3]
        >>> w.symmetric, w.shortcuts
        (('co_sponsor', 'coalition_with'), (('campaigns_in', 'elected_in'),))
    """
    check_world_arguments(size, 60, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    n_country = len(_COUNTRIES)
    countries = [f"country_{c[0]}" for c in _COUNTRIES]
    country_weight = np.array([c[1] for c in _COUNTRIES])
    areas = [f"area_{a}" for a, _ in _AREAS]
    area_weight = np.array([w for _, w in _AREAS])
    stages = [f"stage_{s[0]}" for s in _STAGES]
    facts: list[LabeledTriple] = []

    # Regions (located_in their country) and parties (located_in their country), each party
    # of a strength and a log-normal bias per region (a regional party: 6 in its region, .1
    # elsewhere).
    region_labels: list[str] = []
    region_country: list[int] = []
    region_weight: list[float] = []
    party_labels: list[str] = []
    party_country: list[int] = []
    party_strength: list[float] = []
    party_governs: list[bool] = []
    party_bias: list[np.ndarray] = []
    regions_in: dict[int, list[int]] = {}
    parties_in: dict[int, list[int]] = {}
    for k, (name, _, _, _, regions, parties) in enumerate(_COUNTRIES):
        own = []
        for region, w in regions:
            own.append(len(region_labels))
            region_labels.append(f"region_{name}_{region}")
            region_country.append(k)
            region_weight.append(w)
        regions_in[k] = own
        parties_in[k] = []
        for family, strength, governs, home in parties:
            parties_in[k].append(len(party_labels))
            party_labels.append(f"party_{name}_{family}")
            party_country.append(k)
            party_strength.append(strength)
            party_governs.append(governs)
            bias = rng.lognormal(0.0, 0.4, len(regions))
            if home is not None:
                bias = np.where([r == home for r, _ in regions], 6.0, 0.1)
            party_bias.append(bias)
    facts.extend(
        (region_labels[r], "located_in", countries[k]) for r, k in enumerate(region_country)
    )
    facts.extend((party_labels[x], "located_in", countries[k]) for x, k in enumerate(party_country))
    strength_of = np.array(party_strength)
    party_index = {label: x for x, label in enumerate(party_labels)}
    partners: set[tuple[int, int]] = set()
    for k in range(n_country):
        gov = [x for x in parties_in[k] if party_governs[x]]
        partners |= {(x, y) for x in gov for y in gov if x != y}
    for name, left, right in _PACTS:
        x, y = party_index[f"party_{name}_{left}"], party_index[f"party_{name}_{right}"]
        partners |= {(x, y), (y, x)}
    facts.extend((party_labels[x], "coalition_with", party_labels[y]) for x, y in sorted(partners))

    # Politicians: N, a country by weight, a region by weight, a party by strength times its
    # bias in the region; a list member (no constituency) with the country's list share.
    politician_country: list[int] = (
        list(range(n_country))
        + rng.choice(
            n_country, size=n - n_country, p=country_weight / country_weight.sum()
        ).tolist()
    )
    politicians = entity_labels("politician", n)
    region_of: list[int] = []
    party_of: list[int] = []
    is_list: list[bool] = []
    for p in range(n):
        k = politician_country[p]
        own = regions_in[k]
        r = own[_pick(rng, np.array([region_weight[x] for x in own]))]
        region_of.append(r)
        i = own.index(r)
        pool = parties_in[k]
        party_of.append(
            pool[_pick(rng, np.array([strength_of[x] * party_bias[x][i] for x in pool]))]
        )
        is_list.append(bool(rng.random() < _COUNTRIES[k][3]))
    facts.extend((politicians[p], "member_of", party_labels[x]) for p, x in enumerate(party_of))
    facts.extend(
        (politicians[p], "located_in", countries[k]) for p, k in enumerate(politician_country)
    )

    # Constituencies: one a constituency member in a single-member country; in a multi-member
    # country the members of a region in a random order, grouped into districts of the
    # country's seat range. A constituency is located_in its region.
    seat_rows: list[tuple[int, list[int]]] = []  # (region, members)
    for k, (_, _, (low, high), _, _, _) in enumerate(_COUNTRIES):
        for r in regions_in[k]:
            members = [p for p in range(n) if region_of[p] == r and not is_list[p]]
            order = [members[i] for i in rng.permutation(len(members)).tolist()]
            while order:
                m = int(rng.integers(low, high + 1))
                seat_rows.append((r, order[:m]))
                order = order[m:]
    constituencies = entity_labels("constituency", len(seat_rows))
    constituency_of: dict[int, int] = {}
    for c, (r, members) in enumerate(seat_rows):
        facts.append((constituencies[c], "located_in", region_labels[r]))
        for p in members:
            constituency_of[p] = c
            facts.append((politicians[p], "represents", constituencies[c]))

    # Campaigning: a constituency member campaigns_in its region with probability .85, a list
    # member in it always; and each in Poisson(.35) draws of the regions of its country.
    for p in range(n):
        spots: set[int] = set()
        if p not in constituency_of or rng.random() < 0.85:
            spots.add(region_of[p])
        own = regions_in[politician_country[p]]
        for _ in range(int(rng.poisson(0.35))):
            spots.add(own[int(rng.integers(len(own)))])
        facts.extend((politicians[p], "campaigns_in", region_labels[r]) for r in sorted(spots))

    # Ministries and committees: each country has one of each for the core areas and for each
    # other area with probability .7 (ministries) and .6 (committees); each covers its area
    # and is located_in the country. A ministry has one minister_of it, a member of a governing
    # party not yet a minister (uniformly), and a junior one with probability .6; ministers sit
    # on no committee.
    ministry_labels: list[str] = []
    ministry_country: list[int] = []
    ministry_area: list[int] = []
    committee_labels: list[str] = []
    committee_country: list[int] = []
    committee_area: list[int] = []
    for k, (name, *_rest) in enumerate(_COUNTRIES):
        for a, (area, _) in enumerate(_AREAS):
            core = area in _CORE_AREAS
            if core or rng.random() < 0.7:
                ministry_labels.append(f"ministry_{name}_{area}")
                ministry_country.append(k)
                ministry_area.append(a)
            if core or rng.random() < 0.6:
                committee_labels.append(f"committee_{name}_{area}")
                committee_country.append(k)
                committee_area.append(a)
    for labels, where, remit in (
        (ministry_labels, ministry_country, ministry_area),
        (committee_labels, committee_country, committee_area),
    ):
        for i, label in enumerate(labels):
            facts.append((label, "located_in", countries[where[i]]))
            facts.append((label, "covers", areas[remit[i]]))
    ministers_of: dict[int, list[int]] = {}
    is_minister = [False] * n
    for m, k in enumerate(ministry_country):
        pool = [p for p in range(n) if politician_country[p] == k and party_governs[party_of[p]]]
        pool = [p for p in pool if not is_minister[p]] or pool
        count = 2 if rng.random() < 0.6 else 1
        chosen: list[int] = []
        for _ in range(count):
            free = [p for p in pool if p not in chosen]
            if free:
                chosen.append(free[int(rng.integers(len(free)))])
        ministers_of[m] = chosen
        for p in chosen:
            is_minister[p] = True
            facts.append((politicians[p], "minister_of", ministry_labels[m]))

    # Committees: a non-minister sits_on 1 + Poisson(.9) committees of its country.
    members_of: dict[int, list[int]] = {c: [] for c in range(len(committee_labels))}
    for p in range(n):
        if is_minister[p]:
            continue
        own = [c for c, k in enumerate(committee_country) if k == politician_country[p]]
        chosen_c = {own[int(rng.integers(len(own)))] for _ in range(1 + int(rng.poisson(0.9)))}
        for c in sorted(chosen_c):
            members_of[c].append(p)
            facts.append((politicians[p], "sits_on", committee_labels[c]))

    # Bills: max(20, round(.6 N)), located_in a country by its politicians (plus .5), covering
    # an area by weight. A government bill (probability .5 when the country's ministry of the
    # area has a minister) is sponsored by its ministers (by the senior one alone with
    # probability .5 when there are two) and, with probability .5, a member of the area's
    # committee; a private member's bill by a non-minister (a member of the area's committee
    # with probability .6) and Poisson(.7) draws of co-sponsors (of its party with probability
    # .6). A stage by the bill's kind (_STAGES).
    ministry_of = {(k, a): m for m, (k, a) in enumerate(zip(ministry_country, ministry_area))}
    committee_of = {(k, a): c for c, (k, a) in enumerate(zip(committee_country, committee_area))}
    n_bill = max(20, round(0.6 * n))
    bills = entity_labels("bill", n_bill)
    share = np.bincount(politician_country, minlength=n_country).astype(float) + 0.5
    bill_country: list[int] = []
    bill_sponsors: list[list[int]] = []
    bill_stage: list[int] = []
    gov_stage = np.array([s[1] for s in _STAGES])
    private_stage = np.array([s[2] for s in _STAGES])
    for b in range(n_bill):
        k = _pick(rng, share)
        a = _pick(rng, area_weight)
        ministry = ministry_of.get((k, a))
        committee = committee_of.get((k, a))
        scrutiny = members_of[committee] if committee is not None else []
        everyone = [p for p in range(n) if politician_country[p] == k]
        backbench = [p for p in everyone if not is_minister[p]] or everyone
        if ministry is not None and ministers_of[ministry] and rng.random() < 0.5:
            sponsors = list(ministers_of[ministry])
            if len(sponsors) > 1 and rng.random() < 0.5:
                sponsors = sponsors[:1]
            if scrutiny and rng.random() < 0.5:
                sponsors.append(scrutiny[int(rng.integers(len(scrutiny)))])
            stage = _pick(rng, gov_stage)
        else:
            pool = scrutiny if committee is not None and rng.random() < 0.6 else backbench
            pool = pool or backbench
            first = pool[int(rng.integers(len(pool)))]
            sponsors = [first]
            for _ in range(int(rng.poisson(0.7))):
                same = [p for p in backbench if party_of[p] == party_of[first]]
                pool = same if same and rng.random() < 0.6 else backbench
                q = pool[int(rng.integers(len(pool)))]
                if q not in sponsors:
                    sponsors.append(q)
            stage = _pick(rng, private_stage)
        bill_country.append(k)
        bill_sponsors.append(sponsors)
        bill_stage.append(stage)
        facts.append((bills[b], "located_in", countries[k]))
        facts.append((bills[b], "covers", areas[a]))
        facts.append((bills[b], "stage", stages[stage]))
        facts.extend((politicians[p], "sponsored", bills[b]) for p in sponsors)

    # Votes: on each bill of its country that reached a division (_STAGES), a politician
    # voted_for it with probability .18 when a member of its party sponsors it, .12 when one of
    # a coalition partner (or pact party) does, and .03 otherwise (recorded votes only).
    for b in range(n_bill):
        if not _STAGES[bill_stage[b]][3]:
            continue
        behind = {party_of[p] for p in bill_sponsors[b]}
        for p in range(n):
            if politician_country[p] != bill_country[b]:
                continue
            x = party_of[p]
            if x in behind:
                chance = 0.18
            elif any((x, y) in partners for y in behind):
                chance = 0.12
            else:
                chance = 0.03
            if rng.random() < chance:
                facts.append((politicians[p], "voted_for", bills[b]))

    # Lobby groups: max(12, N/5), located_in a country by weight, with one focus area or,
    # with probability .4, two draws (by weight); each lobbies the country's committees of its
    # areas, and met_with 4 + Poisson(6) draws of politicians of its country: a member of a
    # lobbied committee (probability .55), a minister of its areas (.15), else anyone.
    n_lobby = max(12, n // 5)
    lobbies = entity_labels("lobby", n_lobby)
    for g in range(n_lobby):
        k = _pick(rng, country_weight)
        focus = {_pick(rng, area_weight) for _ in range(1 + int(rng.random() < 0.4))}
        facts.append((lobbies[g], "located_in", countries[k]))
        targets = sorted(committee_of[(k, a)] for a in focus if (k, a) in committee_of)
        facts.extend((lobbies[g], "lobbies", committee_labels[c]) for c in targets)
        inside = sorted({p for c in targets for p in members_of[c]})
        ministers = sorted(
            {p for a in focus if (k, a) in ministry_of for p in ministers_of[ministry_of[(k, a)]]}
        )
        everyone = [p for p in range(n) if politician_country[p] == k]
        met: set[int] = set()
        for _ in range(4 + int(rng.poisson(6.0))):
            u = rng.random()
            pool = (
                inside if inside and u < 0.55 else ministers if ministers and u < 0.7 else everyone
            )
            met.add(pool[int(rng.integers(len(pool)))])
        facts.extend((lobbies[g], "met_with", politicians[p]) for p in sorted(met))

    kind_types = {
        **dict.fromkeys(countries, "country"),
        **dict.fromkeys(region_labels, "region"),
        **dict.fromkeys(constituencies, "constituency"),
        **dict.fromkeys(politicians, "politician"),
        **dict.fromkeys(party_labels, "party"),
        **dict.fromkeys(ministry_labels, "ministry"),
        **dict.fromkeys(committee_labels, "committee"),
        **dict.fromkeys(areas, "policy_area"),
        **dict.fromkeys(bills, "bill"),
        **dict.fromkeys(stages, "stage"),
        **dict.fromkeys(lobbies, "lobby_group"),
    }
    return build_world(
        "parliament",
        facts,
        PARLIAMENT_RULES,
        seed=seed,
        size=n,
        rng=rng,
        entity_types=kind_types,
        exception_rates=dict(_EXCEPTION_RATES),
        noise_rates=dict(_NOISE_RATES),
        symmetric=("co_sponsor", "coalition_with"),
        inverse_pairs=(("represents", "represented_by"),),
        shortcuts=(("campaigns_in", "elected_in"),),
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
    )
