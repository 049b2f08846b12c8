r"""A corporate world: companies in ownership groups, supply chains, boards, countries, sectors.

Written as a **held-out** world for session 21's explainer change: designed from what a
company register joined with supply-chain data looks like (holding companies over trees of
subsidiaries, tiered suppliers, interlocking boards, sanctions screening by owner), not from how
any explainer decides. In realistic proportions it holds:

* **two heads with two bodies each**, grounding mostly disjoint facts: a person ``controls`` a
  company they chair (``chair_control``, length 1) or one whose parent they control
  (``group_control``, length 2); a company ``operates_in`` a country where it supplies a
  customer (``export_presence``) or owns a subsidiary (``subsidiary_presence``), and holding
  companies own but do not trade (at seed 0, .08 of the ``controls`` and .03 of the
  ``operates_in`` facts have both bodies; every non-noise fact has one);
* **rule chaining**: ``group_control``'s body holds the derived ``controls`` itself, so control
  passes down ownership trees of any depth, and ``rival_interlock``'s body holds the derived
  ``interlocked_with``;
* a **derived correlated shortcut**: ``sources_from`` (length 2: a supplier headquartered in
  the country) beside ``exposed_to`` (length 3: a supplier whose *parent* is headquartered
  there, as sanctions screening looks through to owners); subsidiaries mostly sit in their
  parent's country, so at seed 0 ``sources_from`` links .87 of the ``exposed_to`` pairs and
  .77 of its pairs are ``exposed_to`` facts (both over all splits; recorded in
  :attr:`~graphdata.worlds.World.shortcuts`);
* a **star with an inequality** (``board_interlock``: two boards sharing a director) and a
  **triangle** through it (``rival_interlock``: an interlock between two companies of one
  sector, what competition law restricts);
* **symmetric** relations (``partner_of``, joint ventures drawn in one orientation and
  completed by a length-1 rule; ``interlocked_with``; ``rival_interlock``) and an **inverse
  pair** (``owns`` of ``subsidiary_of``, a length-1 rule);
* rules of length 1 (three), 2 (five) and 3 (two);
* **hubs**: sixteen countries of very unequal weight (at seed 0 the largest has 219 distinct
  training neighbours), conglomerates, chairs of holding companies who control dozens of
  companies, suppliers that attach preferentially (2-hop enclosing subgraphs of about 2,000
  triples at seed 0, p90 3,500);
* **exceptions** (10 % of ``group_control``'s heads are withheld: ring-fenced subsidiaries;
  5 % of ``owner_exposure``'s: licensed trade) and **noise** (5 % of ``exposed_to`` facts,
  screening false positives, and 3 % of ``operates_in`` facts have no grounding); 1-1
  (``partner_of``), 1-N (``owns``, ``chairs``, ``director_of``), N-1 (``subsidiary_of``,
  ``headquartered_in``, ``in_sector``) and N-N (``supplies``, ``controls``, ``operates_in``,
  ``exposed_to``, ...) relations.

**Base facts** (:func:`corporate_world`), with :math:`N` = ``size`` companies, created in order:

* sixteen countries with weights .25, .14, .1, .08, .07, .06, .05, .05, .04, .03, .03, .03,
  .02, .02, .02, .01; ten sectors, three tiers of three (raw materials, components, finished
  goods, weights .3, .35, .35, uniform within a tier) and ``sector_009``, holding activities;
* the first :math:`\max(3, \lfloor N/10 \rfloor)` companies are holding companies
  (``in_sector`` ``sector_009``), each after the first ``subsidiary_of`` an earlier holding with
  probability 0.3; every other company is an operating company of a tier drawn by weight and a
  uniform sector of it, a ``subsidiary_of`` a holding (probability .85 x .75) or an earlier
  operating company (.85 x .25), the parent drawn with probability proportional to its
  subsidiaries plus one (conglomerates). A subsidiary is ``headquartered_in`` its parent's
  country with probability 0.92; the other companies in a country drawn by weight;
* ``supplies``: each operating company, in a random order, draws :math:`1 + \text{Poisson}(2)`
  suppliers (:math:`\text{Poisson}(0.4)` in the first tier): with probability 0.15 a sister
  (another operating subsidiary of its parent), else a company of the tier below (with
  probability 0.85, any operating company otherwise), of its own country with probability 0.5,
  drawn with probability proportional to its customers plus 0.25 (repeats dropped);
* :math:`\max(10, \lfloor N/2 \rfloor)` people; every company has one chair (``chairs``), its
  parent's chair with probability 0.2, else a person drawn with probability proportional to
  the companies they chair plus one, and :math:`\text{Poisson}(0.8)` other board seats
  (``director_of``), each with probability 0.5 a person already on a board of the company's
  sector, else a uniform person (repeats dropped);
* ``partner_of``: :math:`\lfloor N/8 \rfloor` draws of an operating company and another, of the
  same sector with probability 0.7 (repeats dropped), one orientation.

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`CORPORATE_RULES`.
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

__all__ = ["CORPORATE_RULES", "corporate_world"]

#: The planted rules: an inverse, a symmetry, two heads with two bodies each (one recursive), a
#: length-2 relation correlated with a length-3 one, a star with an inequality and a triangle.
CORPORATE_RULES = """\
ownership_inverse: owns(P,A) <- subsidiary_of(A,P)
partner_symmetry: partner_of(X,Y) <- partner_of(Y,X)
chair_control: controls(D,A) <- chairs(D,A)
group_control: controls(D,A) <- controls(D,P), subsidiary_of(A,P)
export_presence: operates_in(A,C) <- supplies(A,B), headquartered_in(B,C)
subsidiary_presence: operates_in(A,C) <- subsidiary_of(S,A), headquartered_in(S,C)
supplier_country: sources_from(A,C) <- supplies(S,A), headquartered_in(S,C)
owner_exposure: exposed_to(A,C) <- supplies(S,A), subsidiary_of(S,P), headquartered_in(P,C)
board_interlock: interlocked_with(A,B) <- director_of(D,A), director_of(D,B), A != B
rival_interlock: rival_interlock(A,B) <- interlocked_with(A,B), in_sector(A,S), in_sector(B,S)
"""

_COUNTRIES = (
    0.25, 0.14, 0.1, 0.08, 0.07, 0.06, 0.05, 0.05, 0.04, 0.03, 0.03, 0.03, 0.02, 0.02, 0.02, 0.01
)  # fmt: skip
_TIERS = (0.3, 0.35, 0.35)  # raw materials, components, finished goods
_SECTORS_PER_TIER = 3
_HOLDING_SECTOR = 3 * _SECTORS_PER_TIER  # the last sector: activities of holding companies


def corporate_world(
    size: int = 450,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the corporate world (module docstring) and its ground truth.

    Args:
        size: The number of companies :math:`N \ge 20`. Default 450 (661 entities, 14
            relations and about 7,900 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"corporate"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = corporate_world(60, seed=0)
        >>> w.exception_rates["group_control"], w.noise_rates["exposed_to"]
        (0.1, 0.05)
        >>> sorted(r.name for r in w.rules if r.head.relation == "operates_in")
        ['export_presence', 'subsidiary_presence']
    """
    check_world_arguments(size, 20, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    n_hold, n_people = max(3, n // 10), max(10, n // 2)
    companies, people = entity_labels("company", n), entity_labels("person", n_people)
    countries = entity_labels("country", len(_COUNTRIES))
    sectors = entity_labels("sector", _HOLDING_SECTOR + 1)
    facts: list[LabeledTriple] = []
    country_of = [-1] * n
    sector_of = [-1] * n
    parent_of = [-1] * n
    subs = np.zeros(n)  # subsidiaries per company
    children: list[list[int]] = [[] for _ in range(n)]
    for c in range(n):
        if c < n_hold:  # holding companies first; some are owned by an earlier holding
            sector_of[c] = _HOLDING_SECTOR
            if c > 0 and rng.random() < 0.3:
                parent_of[c] = weighted_pick(rng, list(range(c)), subs + 1.0)
        else:
            tier = int(rng.choice(len(_TIERS), p=_TIERS))
            sector_of[c] = tier * _SECTORS_PER_TIER + int(rng.integers(_SECTORS_PER_TIER))
            if rng.random() < 0.85:
                if rng.random() < 0.75:
                    parent_of[c] = weighted_pick(rng, list(range(n_hold)), subs + 1.0)
                else:
                    parent_of[c] = weighted_pick(rng, list(range(n_hold, c)) or [0], subs + 1.0)
        p = parent_of[c]
        if p >= 0 and rng.random() < 0.92:
            country_of[c] = country_of[p]
        else:
            country_of[c] = int(rng.choice(len(_COUNTRIES), p=_COUNTRIES))
        if p >= 0:
            subs[p] += 1
            children[p].append(c)
            facts.append((companies[c], "subsidiary_of", companies[p]))
        facts.append((companies[c], "headquartered_in", countries[country_of[c]]))
        facts.append((companies[c], "in_sector", sectors[sector_of[c]]))
    operating = list(range(n_hold, n))
    by_tier = [[c for c in operating if sector_of[c] // _SECTORS_PER_TIER == t] for t in range(3)]
    customers = np.zeros(n)  # customers per company
    supplies: set[tuple[int, int]] = set()
    for b in rng.permutation(operating).tolist():
        tier = sector_of[b] // _SECTORS_PER_TIER
        p = parent_of[b]
        sisters = [s for s in children[p] if s != b and s >= n_hold] if p >= 0 else []
        for _ in range(1 + int(rng.poisson(2.0)) if tier > 0 else int(rng.poisson(0.4))):
            if sisters and rng.random() < 0.15:  # intra-group trade
                a = sisters[int(rng.integers(len(sisters)))]
            else:
                pool = by_tier[tier - 1] if tier > 0 and rng.random() < 0.85 else operating
                pool = [c for c in pool if c != b] or [c for c in operating if c != b]
                if rng.random() < 0.5:
                    pool = [c for c in pool if country_of[c] == country_of[b]] or pool
                a = weighted_pick(rng, pool, customers + 0.25)
            if (a, b) not in supplies:
                supplies.add((a, b))
                customers[a] += 1
    facts.extend((companies[a], "supplies", companies[b]) for a, b in sorted(supplies))
    chair_of = [-1] * n
    chaired = np.zeros(n_people)
    insiders: list[set[int]] = [set() for _ in sectors]
    for c in range(n):
        p = parent_of[c]
        if p >= 0 and rng.random() < 0.2:
            chair_of[c] = chair_of[p]
        else:
            chair_of[c] = int(rng.choice(n_people, p=(chaired + 1) / (chaired + 1).sum()))
        chaired[chair_of[c]] += 1
        facts.append((people[chair_of[c]], "chairs", companies[c]))
        board = {chair_of[c]}
        for _ in range(int(rng.poisson(0.8))):
            known = sorted(insiders[sector_of[c]] - board)
            if known and rng.random() < 0.5:
                d = known[int(rng.integers(len(known)))]
            else:
                d = int(rng.integers(n_people))
            if d in board:
                continue
            board.add(d)
            insiders[sector_of[c]].add(d)
            facts.append((people[d], "director_of", companies[c]))
    partners: set[tuple[int, int]] = set()
    for _ in range(n // 8):
        a = operating[int(rng.integers(len(operating)))]
        same = [c for c in operating if c != a and sector_of[c] == sector_of[a]]
        if same and rng.random() < 0.7:
            b = same[int(rng.integers(len(same)))]
        else:
            b = operating[int(rng.integers(len(operating)))]
        if a != b and (b, a) not in partners:
            partners.add((a, b))
    facts.extend((companies[a], "partner_of", companies[b]) for a, b in sorted(partners))
    types = {
        **dict.fromkeys(companies, "company"),
        **dict.fromkeys(people, "person"),
        **dict.fromkeys(countries, "country"),
        **dict.fromkeys(sectors, "sector"),
    }
    return build_world(
        "corporate",
        facts,
        CORPORATE_RULES,
        seed=seed,
        size=n,
        rng=rng,
        entity_types=types,
        exception_rates={"group_control": 0.1, "owner_exposure": 0.05},
        noise_rates={"exposed_to": 0.05, "operates_in": 0.03},
        symmetric=("partner_of", "interlocked_with", "rival_interlock"),
        inverse_pairs=(("owns", "subsidiary_of"),),
        shortcuts=(("sources_from", "exposed_to"),),
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
    )
