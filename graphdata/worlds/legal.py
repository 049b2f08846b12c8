r"""A legal world: courts in a hierarchy, judges, cases, parties, lawyers, firms and statutes.

Written as a **held-out** world for the explainer, without reading :mod:`kg.explain`, the
explainer benchmarks or their results, and never run with an explainer or trained on while it
was written: designed from the legal domain (a four-level court hierarchy per country, judges
sitting on courts and hearing cases at first instance and on appeal, vertical precedent,
parties, their lawyers and firms, statutes and sections, specialised courts, citations between
decisions and docket classifications), not from how any explainer decides. The rules
(:data:`LEGAL_RULES`, length = body atoms):

* ``counsel_inverse: counsel_for(L,P) <- represented_by(P,L)``, length 1, an **inverse pair**
  (recorded in :attr:`~graphdata.worlds.World.inverse_pairs`; ``represented_by`` N-1: one
  lawyer a party; ``counsel_for`` 1-N);
* ``sued: opposing_party(P,Q) <- plaintiff_in(P,K), defendant_in(Q,K)`` and ``sued_by:
  opposing_party(P,Q) <- defendant_in(P,K), plaintiff_in(Q,K)``, length 2: a **symmetric**
  relation from two **mirrored V-shaped bodies** through the case (the same two relations with
  the roles swapped), never a base fact and never noise; at seed 0 .04 of the
  ``opposing_party`` facts have both bodies (parties who sued each other), and the reversed
  copy of .79 of its 140 held-out targets is in train (not a grounding);
* ``appellate_precedent: binding_on(K,C) <- heard_by(K,J), sits_on(J,D), appeals_to(C,D)``,
  length 3, and ``precedent_descends: binding_on(K,C) <- binding_on(K,D), appeals_to(C,D)``,
  length 2: vertical precedent, a **recursive head with two bodies** of **bounded depth**: a
  decision binds the courts that appeal to a court that heard the case, and every court below
  those; the hierarchy is three appeals deep, so the closure of the base facts adds binding
  facts in exactly three rounds (527, 187 and 116 at seed 0), the last two through the
  recursive body alone; ``binding_on`` is a **derived relation with held-out facts in a
  body** (its own); at seed 0 .17 of its facts have both bodies, .43 only the panel body, .38
  only the recursive one, .02 neither (noise);
* ``specialist_court: concerns(K,A) <- heard_by(K,J), sits_on(J,C), specialised_in(C,A)`` and
  ``statutory_area: concerns(K,A) <- invokes(K,S), section_of(S,T), field_of(T,A)``, both
  length 3: a case's legal area from its specialised court or from the statutes whose
  sections it invokes, **a head with two bodies** ending in the area **hubs** (at seed 0 .09
  of the ``concerns`` facts have both, .09 only the court body, .78 only the statute body,
  .04 neither); ``specialised_in`` is 1-1 (six courts, six areas);
* a **correlated shortcut**: ``docketed_as`` (base: the docket's category, the case's area or a
  misfiling) is in no body of ``concerns``; at seed 0 it links .46 of the ``concerns`` pairs
  and .81 of its training pairs are ``concerns`` pairs
  (:attr:`~graphdata.worlds.World.shortcuts`);
* ``leading_case: leading_case(K,A) <- cites(X,K), cites(Y,K), concerns(K,A), X != Y``, length
  3, a **star** around the cited case whose **inequality is between two non-head variables**,
  the two citing cases (a count: cited by at least two distinct later cases), not between the
  head's ends; without it the 129 (case, area) pairs of the cases cited exactly once would
  qualify. A grounding is an ordered pair of citing cases: the most cited case (100 citing
  cases) has 9,900 groundings per area. Its third atom is the derived ``concerns``, whose
  held-out facts are targets too (it derives in the closure's second round), and parallel to
  the head: the shortcut ``docketed_as`` links .45 of the 289 ``leading_case`` pairs at seed 0;
* ``conflict: conflict_of_interest(L,P) <- represented_by(P,L), represented_by(Q,L),
  opposing_party(P,Q)``, length 3, a **triangle** (lawyer, client, adversary) that uses
  ``represented_by`` twice, once from the head's client and once from an existential one,
  through the derived symmetric ``opposing_party`` (a lawyer acting against a current client);
  at seed 0 46 of the 400 cases have one lawyer on both sides, 64 conflict facts;
* rules of length 1 (one), 2 (three) and 3 (five); 1-1 (``specialised_in``), 1-N
  (``plaintiff_in``, ``defendant_in``, ``counsel_for``, ``conflict_of_interest``), N-1
  (``located_in``, ``appeals_to``, ``sits_on``, ``represented_by``, ``member_of``,
  ``section_of``, ``field_of``, ``docketed_as``) and N-N (``heard_by``, ``invokes``,
  ``cites``, ``opposing_party``, ``binding_on``, ``concerns``, ``leading_case``) relations;
* **exceptions**: 5 % of the ``binding_on`` facts (a decision distinguished or overruled; both
  precedent rules), 3 % of ``specialist_court``'s heads and 8 % of the ``concerns`` facts only
  ``statutory_area`` derives (a section invoked in passing), 10 % of ``leading_case``'s and
  15 % of ``conflict``'s (waived by the clients' informed consent) are withheld; a withheld
  binding fact also withholds the courts below it unless another hearing reaches them;
  **noise**: 2 % of the ``binding_on``, 4 % of the ``concerns``, 5 % of the ``leading_case``
  and 5 % of the ``conflict_of_interest`` facts have no grounding (a noise binding fact
  descends through the recursive rule like any other).

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`): 910
entities (400 cases, 160 parties, 92 judges, 77 sections, 54 courts, 50 lawyers, 20 statutes,
16 cities, 16 firms, 12 legal areas, 8 jurisdictions, 5 countries), 20 relations; 7,408 train,
267 valid and 263 test triples; the valid+test targets per rule of their shortest grounding
are ``statutory_area`` 102, ``appellate_precedent`` 87, ``sued`` 74, ``precedent_descends``
69, ``sued_by`` 66, ``leading_case`` 42, ``counsel_inverse`` 32, ``specialist_court`` 31,
``conflict`` 11 (length 1: 32, 2: 209, 3: 273; ties between the two length-3 ``concerns``
bodies go to ``specialist_court``, listed first), and 16 noise facts; .41 of the targets have
more than one grounding; 158 exceptions (68 ``binding_on``, 47 ``concerns``, 35
``leading_case``, 8 ``conflict_of_interest``). **Hubs**: the busiest legal area has 126
distinct training neighbours, the busiest state (a party) 127, the most cited case 119, the
largest country 54, the busiest court 32; the 2-hop enclosing subgraphs of 200 test targets
hold a median of 1,346 training triples (p90 2,752).

**Base facts** (:func:`legal_world`), with :math:`N` = ``size`` cases: five countries by
weight (.32 down to .12); :math:`\max(5, \lfloor N/50 \rfloor)` jurisdictions (``located_in``
a country, one each first, the rest by weight) and :math:`\max(10, \lfloor N/25 \rfloor)`
cities (``located_in`` a jurisdiction) with a log-normal population; courts (``located_in`` a
city of their jurisdiction, ``appeals_to`` their parent): a supreme court per country, a high
court per jurisdiction, :math:`\max(5, \lfloor N/40 \rfloor)` appellate courts under the high
courts, one specialised trial court for each of six areas (``_AREAS``; ``specialised_in``)
appealing straight to a high court, and :math:`\max(10, \lfloor N/16 \rfloor)` general trial
courts under the appellate courts with a log-normal caseload; judges (``sits_on``): three at
each supreme court, two at each high and appellate court, one at each trial court and
:math:`\lfloor N/40 \rfloor` more by caseload; twelve legal areas and :math:`\max(12,
\lfloor N/20 \rfloor)` statutes (``field_of`` an area, one each first, the rest by statute
share) with :math:`2 + \text{Poisson}(1.5)` sections each (``section_of``) of log-normal
frequency of use; :math:`\max(4, \lfloor N/25 \rfloor)` firms (``located_in`` a city by
population) of log-normal size and :math:`\max(10, \lfloor N/8 \rfloor)` lawyers
(``member_of`` a firm by size) of log-normal popularity; :math:`\max(20, \lfloor 2N/5
\rfloor)` parties, the first five the states (``located_in`` their country), the rest
``located_in`` a country by weight with a log-normal litigiousness, each ``represented_by``
one lawyer by popularity. Each case, in order: an area by case share; its first court the
area's specialised court (.75) if it has one, else a general trial court by caseload (the case
belongs to that court's country); ``heard_by`` one judge of that court, then, appealed up the
hierarchy with probability .35 a level, a panel of up to three judges of each court above
(each appeal doubles its log-normal authority); ``plaintiff_in`` and ``defendant_in``: the
state prosecutes criminal cases and defends administrative, tax and constitutional ones,
otherwise two private parties by litigiousness, the defendant with probability .18 another
client of the plaintiff's lawyer not yet their adversary; ``invokes`` :math:`1 +
\text{Poisson}(1.1)` sections by frequency, the first of the area with probability .85 and the
others .5 (.3 each in a specialised court, which already fixes the area); ``cites``
:math:`\text{Poisson}(4)` distinct earlier cases by authority, four times more likely in the
same area and twice in the same country; ``docketed_as`` the case's area (.9) or any area.

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`LEGAL_RULES`.
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

__all__ = ["LEGAL_RULES", "legal_world"]

#: The planted rules: an inverse counsel pair, a symmetric adversary relation from two mirrored
#: V-shaped bodies, vertical precedent down the court hierarchy (a recursive head with two
#: bodies), a case's legal area from its specialised court or its statutes (two bodies),
#: leading cases from a citation star with an inequality between its two citing cases, and a
#: lawyer's conflict of interest as a triangle through the derived adversary relation.
LEGAL_RULES = """\
counsel_inverse: counsel_for(L,P) <- represented_by(P,L)
sued: opposing_party(P,Q) <- plaintiff_in(P,K), defendant_in(Q,K)
sued_by: opposing_party(P,Q) <- defendant_in(P,K), plaintiff_in(Q,K)
appellate_precedent: binding_on(K,C) <- heard_by(K,J), sits_on(J,D), appeals_to(C,D)
precedent_descends: binding_on(K,C) <- binding_on(K,D), appeals_to(C,D)
specialist_court: concerns(K,A) <- heard_by(K,J), sits_on(J,C), specialised_in(C,A)
statutory_area: concerns(K,A) <- invokes(K,S), section_of(S,T), field_of(T,A)
leading_case: leading_case(K,A) <- cites(X,K), cites(Y,K), concerns(K,A), X != Y
conflict: conflict_of_interest(L,P) <- represented_by(P,L), represented_by(Q,L), opposing_party(P,Q)
"""

_COUNTRIES = (0.32, 0.24, 0.18, 0.14, 0.12)
#: The legal areas (entity ``area_<name>``): each with its share of the cases and of the
#: statutes, and whether one specialised trial court hears it (one court per such area: the
#: relation ``specialised_in`` is 1-1). Criminal cases are brought by the state; in
#: administrative, tax and constitutional cases the state is the defendant.
_AREAS = (
    ("contract", 0.17, 0.10, False),
    ("tort", 0.13, 0.08, False),
    ("property", 0.08, 0.08, False),
    ("criminal", 0.15, 0.10, False),
    ("family", 0.10, 0.07, True),
    ("tax", 0.05, 0.09, True),
    ("labour", 0.07, 0.07, True),
    ("commercial", 0.08, 0.09, True),
    ("administrative", 0.06, 0.08, True),
    ("intellectual_property", 0.04, 0.07, True),
    ("constitutional", 0.03, 0.05, False),
    ("civil_procedure", 0.04, 0.12, False),
)
_STATE_PLAINTIFF = ("criminal",)
_STATE_DEFENDANT = ("administrative", "tax", "constitutional")
#: Withheld heads: a decision distinguished or overruled (precedent), a section invoked in
#: passing or a court sitting outside its field (area), a much-cited case not treated as
#: leading, a conflict waived by the clients' informed consent.
_EXCEPTION_RATES = (
    ("appellate_precedent", 0.05),
    ("precedent_descends", 0.05),
    ("specialist_court", 0.03),
    ("statutory_area", 0.08),
    ("leading_case", 0.1),
    ("conflict", 0.15),
)
#: Heads without grounding: precedent followed by a court outside the hierarchy, an area
#: recorded without a section or court for it, a leading case cited once, a conflict on
#: another ground.
_NOISE_RATES = (
    ("binding_on", 0.02),
    ("concerns", 0.04),
    ("leading_case", 0.05),
    ("conflict_of_interest", 0.05),
)


def legal_world(
    size: int = 400,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the legal world (module docstring) and its ground truth.

    Args:
        size: The number of cases :math:`N \ge 40`. Default 400 (910 entities, 20 relations
            and 7,938 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"legal"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = legal_world(60, seed=0)
        >>> w.exception_rates["conflict"], w.shortcuts
        (0.15, (('docketed_as', 'concerns'),))
        >>> sorted(r.name for r in w.rules if r.head.relation == "binding_on")
        ['appellate_precedent', 'precedent_descends']
    """
    check_world_arguments(size, 40, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    weights = np.asarray(_COUNTRIES)
    n_country, n_area = len(_COUNTRIES), len(_AREAS)
    n_jurisdiction, n_city = max(n_country, n // 50), max(2 * n_country, n // 25)
    n_appellate, n_trial = max(n_country, n // 40), max(2 * n_country, n // 16)
    n_party, n_lawyer, n_firm = max(20, 2 * n // 5), max(10, n // 8), max(4, n // 25)
    n_statute = max(n_area, n // 20)
    countries, cities = entity_labels("country", n_country), entity_labels("city", n_city)
    jurisdictions = entity_labels("jurisdiction", n_jurisdiction)
    cases, parties = entity_labels("case", n), entity_labels("party", n_party)
    lawyers, firms = entity_labels("lawyer", n_lawyer), entity_labels("firm", n_firm)
    statutes = entity_labels("statute", n_statute)
    area_names = [name for name, _, _, _ in _AREAS]
    areas = [f"area_{name}" for name in area_names]
    facts: list[LabeledTriple] = []

    # Places: jurisdictions in countries (one each first, the rest by weight); cities in
    # jurisdictions (one each first, the rest by their country's weight) with a log-normal
    # population.
    jurisdiction_country = (
        list(range(n_country))
        + rng.choice(n_country, size=n_jurisdiction - n_country, p=weights).tolist()
    )
    facts.extend(
        (jurisdictions[j], "located_in", countries[c]) for j, c in enumerate(jurisdiction_country)
    )
    by_weight = weights[jurisdiction_country] / weights[jurisdiction_country].sum()
    city_jurisdiction = (
        list(range(n_jurisdiction))
        + rng.choice(n_jurisdiction, size=n_city - n_jurisdiction, p=by_weight).tolist()
    )
    facts.extend(
        (cities[y], "located_in", jurisdictions[j]) for y, j in enumerate(city_jurisdiction)
    )
    population = rng.lognormal(0.0, 1.0, n_city)

    # Courts, top down (parent -1: none). A supreme court per country (in its first
    # jurisdiction); a high court per jurisdiction, appealing to its country's supreme court;
    # appellate courts (one per jurisdiction first, the rest by weight) appealing to their
    # jurisdiction's high court; one specialised trial court per specialised area (in a
    # jurisdiction by weight), appealing straight to its high court; general trial courts (one
    # per appellate court first, the rest by the appellate court's size) appealing to an
    # appellate court. Each court sits in a city of its jurisdiction by population.
    level = ["supreme"] * n_country + ["high"] * n_jurisdiction
    court_jurisdiction = [jurisdiction_country.index(c) for c in range(n_country)]
    court_jurisdiction += list(range(n_jurisdiction))
    parent = [-1] * n_country + jurisdiction_country
    appellate_jurisdiction = (
        list(range(n_jurisdiction))
        + rng.choice(n_jurisdiction, size=n_appellate - n_jurisdiction, p=by_weight).tolist()
    )
    first_appellate = len(level)
    level += ["appellate"] * n_appellate
    court_jurisdiction += appellate_jurisdiction
    parent += [n_country + j for j in appellate_jurisdiction]
    specialised_court: dict[int, int] = {}
    for a, (_, _, _, has_court) in enumerate(_AREAS):
        if has_court:
            j = int(rng.choice(n_jurisdiction, p=by_weight))
            specialised_court[a] = len(level)
            level.append("specialised")
            court_jurisdiction.append(j)
            parent.append(n_country + j)
    appellate_size = rng.lognormal(0.0, 0.6, n_appellate)
    trial_appellate = (
        list(range(n_appellate))
        + rng.choice(
            n_appellate, size=n_trial - n_appellate, p=appellate_size / appellate_size.sum()
        ).tolist()
    )
    first_trial = len(level)
    level += ["trial"] * n_trial
    court_jurisdiction += [appellate_jurisdiction[a] for a in trial_appellate]
    parent += [first_appellate + a for a in trial_appellate]
    n_court = len(level)
    courts = entity_labels("court", n_court)
    for c in range(n_court):
        pool = [y for y in range(n_city) if city_jurisdiction[y] == court_jurisdiction[c]]
        facts.append((courts[c], "located_in", cities[weighted_pick(rng, pool, population)]))
        if parent[c] >= 0:
            facts.append((courts[c], "appeals_to", courts[parent[c]]))
    facts.extend(
        (courts[c], "specialised_in", areas[a]) for a, c in sorted(specialised_court.items())
    )
    caseload = rng.lognormal(0.0, 0.8, n_trial)  # the general trial courts' (busy ones: hubs)

    # Judges: a bench of three at each supreme court, two at each high and appellate court,
    # one at each trial court, and N/40 more at the trial courts by caseload.
    bench_size = {"supreme": 3, "high": 2, "appellate": 2, "specialised": 1, "trial": 1}
    judge_court = [c for c in range(n_court) for _ in range(bench_size[level[c]])]
    judge_court += (
        first_trial + rng.choice(n_trial, size=n // 40, p=caseload / caseload.sum())
    ).tolist()
    judges = entity_labels("judge", len(judge_court))
    facts.extend((judges[i], "sits_on", courts[c]) for i, c in enumerate(judge_court))
    bench = [[i for i, c in enumerate(judge_court) if c == k] for k in range(n_court)]

    # Statutes: one per area first, the rest by statute share (field_of); each with
    # 2 + Poisson(1.5) sections (section_of) with a log-normal frequency of use.
    statute_share = np.array([s for _, _, s, _ in _AREAS])
    statute_area = (
        list(range(n_area))
        + rng.choice(
            n_area, size=n_statute - n_area, p=statute_share / statute_share.sum()
        ).tolist()
    )
    facts.extend((statutes[t], "field_of", areas[a]) for t, a in enumerate(statute_area))
    section_statute = [t for t in range(n_statute) for _ in range(2 + int(rng.poisson(1.5)))]
    sections = entity_labels("section", len(section_statute))
    facts.extend((sections[s], "section_of", statutes[t]) for s, t in enumerate(section_statute))
    frequency = rng.lognormal(0.0, 1.0, len(sections))
    area_sections = [
        [s for s, t in enumerate(section_statute) if statute_area[t] == a] for a in range(n_area)
    ]
    every_section = list(range(len(sections)))

    # Firms in a city by population, with a log-normal size; lawyers member_of a firm by size,
    # with a log-normal popularity. Parties: the first five are the states (one per country,
    # located_in it), the rest located_in a country by weight with a log-normal litigiousness;
    # each party is represented_by one lawyer by popularity.
    every_city = list(range(n_city))
    facts.extend(
        (firms[f], "located_in", cities[weighted_pick(rng, every_city, population)])
        for f in range(n_firm)
    )
    firm_size = rng.lognormal(0.0, 0.9, n_firm)
    lawyer_firm = rng.choice(n_firm, size=n_lawyer, p=firm_size / firm_size.sum()).tolist()
    facts.extend((lawyers[m], "member_of", firms[f]) for m, f in enumerate(lawyer_firm))
    popularity = rng.lognormal(0.0, 0.7, n_lawyer)
    party_lawyer = rng.choice(n_lawyer, size=n_party, p=popularity / popularity.sum()).tolist()
    facts.extend((parties[p], "represented_by", lawyers[m]) for p, m in enumerate(party_lawyer))
    party_country = list(range(n_country))
    party_country += rng.choice(n_country, size=n_party - n_country, p=weights).tolist()
    facts.extend((parties[p], "located_in", countries[c]) for p, c in enumerate(party_country))
    litigiousness = rng.lognormal(0.0, 1.0, n_party)
    private = list(range(n_country, n_party))
    clients = [[p for p in private if party_lawyer[p] == m] for m in range(n_lawyer)]
    adversaries: list[set[int]] = [set() for _ in range(n_party)]

    # Cases, in chronological order (a case cites earlier ones).
    case_share = np.array([s for _, s, _, _ in _AREAS])
    authority = rng.lognormal(0.0, 1.4, n)
    case_area = np.zeros(n, dtype=np.int64)
    case_country = np.zeros(n, dtype=np.int64)
    specialised = set(specialised_court.values())
    for k in range(n):
        a = int(rng.choice(n_area, p=case_share / case_share.sum()))
        # The court of first instance: the area's specialised court (.75) if it has one, else
        # a general trial court by caseload; the case belongs to that court's country.
        if a in specialised_court and rng.random() < 0.75:
            court = specialised_court[a]
        else:
            court = first_trial + int(rng.choice(n_trial, p=caseload / caseload.sum()))
        country = jurisdiction_country[court_jurisdiction[court]]
        case_area[k], case_country[k] = a, country
        # Hearings: one judge of the first court, then up the hierarchy (probability .3 a
        # level) a panel of up to three judges of each court it is appealed to; each appeal
        # doubles the decision's authority.
        heard = {bench[court][int(rng.integers(len(bench[court])))]}
        top = court
        while parent[top] >= 0 and rng.random() < 0.35:
            top = parent[top]
            heard.update(rng.permutation(bench[top])[:3].tolist())
            authority[k] *= 2.0
        facts.extend((cases[k], "heard_by", judges[i]) for i in sorted(heard))
        # Parties: the state prosecutes criminal cases and defends administrative, tax and
        # constitutional ones; otherwise both sides are private parties by litigiousness,
        # and with probability .18 the defendant is another client of the plaintiff's lawyer
        # (the lawyer acts against a current client: a conflict of interest).
        if area_names[a] in _STATE_PLAINTIFF:
            plaintiff, defendant = country, weighted_pick(rng, private, litigiousness)
        else:
            plaintiff = weighted_pick(rng, private, litigiousness)
            same = [
                q
                for q in clients[party_lawyer[plaintiff]]
                if q != plaintiff and q not in adversaries[plaintiff]
            ]
            if area_names[a] in _STATE_DEFENDANT:
                defendant = country
            elif same and rng.random() < 0.18:
                defendant = same[int(rng.integers(len(same)))]
            else:
                pool = [q for q in private if q != plaintiff]
                defendant = weighted_pick(rng, pool, litigiousness)
        adversaries[plaintiff].add(defendant)
        adversaries[defendant].add(plaintiff)
        facts.append((parties[plaintiff], "plaintiff_in", cases[k]))
        facts.append((parties[defendant], "defendant_in", cases[k]))
        # Sections, by frequency of use: the first of a statute of the case's area with
        # probability .85, 1 + Poisson(1.1) in all, the others of the area with probability
        # .5; in a specialised court, which already fixes the area, each is of the area with
        # probability .3 (else any section: procedure codes are everywhere).
        first, rest = (0.3, 0.3) if court in specialised else (0.85, 0.5)
        invoked: set[int] = set()
        for i in range(1 + int(rng.poisson(1.1))):
            share = first if i == 0 else rest
            pool = area_sections[a] if rng.random() < share and area_sections[a] else every_section
            invoked.add(weighted_pick(rng, pool, frequency))
        facts.extend((cases[k], "invokes", sections[s]) for s in sorted(invoked))
        # Citations: Poisson(4) distinct earlier cases by authority, four times more likely in
        # the same area and twice in the same country.
        m = min(k, int(rng.poisson(4.0)))
        if m:
            w = authority[:k] * np.where(case_area[:k] == a, 4.0, 1.0)
            w *= np.where(case_country[:k] == country, 2.0, 1.0)
            cited = rng.choice(k, size=m, replace=False, p=w / w.sum())
            facts.extend((cases[k], "cites", cases[j]) for j in sorted(cited.tolist()))
        # The docket's category: the case's area (.9) or a misfiling (any area).
        docket = a if rng.random() < 0.9 else int(rng.integers(n_area))
        facts.append((cases[k], "docketed_as", areas[docket]))

    types = {
        **dict.fromkeys(countries, "country"),
        **dict.fromkeys(jurisdictions, "jurisdiction"),
        **dict.fromkeys(cities, "city"),
        **dict.fromkeys(courts, "court"),
        **dict.fromkeys(judges, "judge"),
        **dict.fromkeys(cases, "case"),
        **dict.fromkeys(parties, "party"),
        **dict.fromkeys(lawyers, "lawyer"),
        **dict.fromkeys(firms, "firm"),
        **dict.fromkeys(statutes, "statute"),
        **dict.fromkeys(sections, "section"),
        **dict.fromkeys(areas, "legal_area"),
    }
    return build_world(
        "legal",
        facts,
        LEGAL_RULES,
        seed=seed,
        size=n,
        rng=rng,
        entity_types=types,
        exception_rates=dict(_EXCEPTION_RATES),
        noise_rates=dict(_NOISE_RATES),
        symmetric=("opposing_party",),
        inverse_pairs=(("represented_by", "counsel_for"),),
        shortcuts=(("docketed_as", "concerns"),),
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
    )
