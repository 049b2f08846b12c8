r"""A sports world: players, coaches, clubs, stadiums, leagues, season awards, cities, countries.

Written as a **held-out** world for issue 18 without reading :mod:`kg.explain`, held out for
the explainer work after session 22 and never run with an explainer: designed from the domain
(football and basketball clubs in national leagues, squads and captains, youth academies,
national-team eligibility, season awards), not from how any explainer decides. The rules
(:data:`SPORTS_RULES`, length = body atoms):

* ``squad_inverse: has_player(T,P) <- plays_for(P,T)``, length 1, an **inverse pair**
  (recorded in :attr:`~graphdata.worlds.World.inverse_pairs`);
* ``captain_member: plays_for(P,T) <- captain_of(P,T)``, length 1: a captain's membership is
  never a base fact, so ``has_player`` and ``teammate`` of captains go through it (chaining
  of length-1 into length-1 and length-2 rules);
* ``teammate: teammate(P,Q) <- plays_for(P,T), plays_for(Q,T), P != Q``, length 2, a
  **symmetric** relation from a **star with a shared variable and an inequality** (N-N, the
  largest head);
* ``birth_eligibility: represents(P,K) <- born_in(P,Y), located_in(Y,K)``, length 2, and
  ``academy_eligibility: represents(P,K) <- youth_club(P,T), club_country(T,K)``, length 2
  **through the derived** ``club_country``: **a head with two bodies** (players and coaches by
  birth, players also by their youth club's country; at seed 0 .36 of the ``represents`` facts
  have both, .45 only the birth body, .15 only the academy body);
* ``club_country: club_country(T,K) <- plays_at(T,S), located_in(S,Y), located_in(Y,K)``,
  length 3, a chain through the stadium and its city into a **country hub**;
* ``career_country: plays_in(P,K) <- plays_for(P,T), in_league(T,L), league_country(L,K)``,
  length 3, a chain through a **league hub** into a country, and ``award_country:
  plays_in(P,K) <- won_award(P,A), award_of(A,L), league_country(L,K)``, length 3: a second
  body that mostly agrees where it applies (an award of a league won by one of its players: at
  seed 0 .10 of the ``plays_in`` facts have both, .79 only the career body, .05 only the award
  body, the loan winners);
* a **correlated shortcut**: the derived ``represents`` is in no body of ``plays_in``, but a
  player mostly plays where they were born: at seed 0 it links .50 of the ``plays_in`` pairs and
  .66 of its training pairs are ``plays_in`` facts (:attr:`~graphdata.worlds.World.shortcuts`);
  ``club_country`` and ``in_league`` followed by ``league_country`` disagree only for the
  clubs (.05) playing in a foreign league;
* rules of length 1 (two), 2 (three) and 3 (three); 1-N (``manages``, ``won_award``,
  ``has_player``), N-1 (``born_in``, ``youth_club``, ``in_league``, ``plays_for``,
  ``represents``, ...), 1-1 (``captain_of``, ``plays_at``) and N-N (``teammate``) relations;
* **exceptions**: 10 % of ``birth_eligibility``'s heads are withheld (players who chose
  another nation), 30 % of the ``represents`` facts only ``academy_eligibility`` derives;
  **noise**: 4 % of the ``represents`` facts (naturalised players) and 5 % of the ``plays_in``
  facts (spells the records miss) have no grounding.

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`): 740
entities (400 players, 33 coaches, 80 clubs, 74 stadiums, 100 awards, 25 cities, 16 leagues, 12
countries), 16 relations; 6,994 train, 630 valid and 632 test triples; the valid+test targets
per rule of their shortest grounding are ``teammate`` 927, ``squad_inverse`` 106,
``birth_eligibility`` 84, ``career_country`` 84, ``club_country`` 16, ``captain_member`` 14,
``award_country`` 11, ``academy_eligibility`` 10 (length 1: 120, 2: 1,021, 3: 111), and 10
noise facts; .05 of the targets have more than one grounding; 63 exceptions. **Hubs**: the
largest country has 139 distinct training neighbours, the busiest player 49; the 2-hop
enclosing subgraphs of 200 test targets hold a median of 1,408.5 training triples (p90 2,094).

**Base facts** (:func:`sports_world`), with :math:`N` = ``size`` players: twelve countries by
weight (.22 down to .02), a football league each and a basketball league in the four largest
(``league_country``); :math:`\max(12, \lfloor N/16 \rfloor)` cities (``located_in``);
:math:`\max(16, \lfloor N/5 \rfloor)` clubs, ``in_league`` one per league first and the rest by
league weight, each ``plays_at`` a stadium ``located_in`` a city of the league's country
(a foreign one with probability .05; an existing stadium of the city shared with probability
.15); players ``born_in`` a city of a country by weight, with a ``youth_club`` with probability
.7 (at home with probability .65) and a career of :math:`1 + \text{Poisson}(.35)` clubs (the
first at home with probability .9, the others .7; clubs drawn proportionally to their squad
plus 4); one captain per club of two or more (``captain_of``); :math:`\max(4, \lfloor N/12
\rfloor)` coaches ``born_in`` a city, one ``manages`` each club (at home with probability .6,
proportionally to their clubs plus one); :math:`\max(4, \lfloor N/4 \rfloor)` season awards
``award_of`` a league by weight, ``won_award`` by a player of its clubs with probability .7
(else one outside the league), proportionally to 1 + 3 times the awards already won.

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`SPORTS_RULES`.
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

__all__ = ["SPORTS_RULES", "sports_world"]

#: The planted rules: an inverse pair fed by a length-1 rule, a symmetric star, a head with two
#: agreeing bodies of lengths 2 and 3, a league chain into a country hub, and a head with two
#: bodies (one through the derived ``club_country``, one a length-3 chain through awards).
SPORTS_RULES = """\
squad_inverse: has_player(T,P) <- plays_for(P,T)
captain_member: plays_for(P,T) <- captain_of(P,T)
teammate: teammate(P,Q) <- plays_for(P,T), plays_for(Q,T), P != Q
birth_eligibility: represents(P,K) <- born_in(P,Y), located_in(Y,K)
academy_eligibility: represents(P,K) <- youth_club(P,T), club_country(T,K)
club_country: club_country(T,K) <- plays_at(T,S), located_in(S,Y), located_in(Y,K)
career_country: plays_in(P,K) <- plays_for(P,T), in_league(T,L), league_country(L,K)
award_country: plays_in(P,K) <- won_award(P,A), award_of(A,L), league_country(L,K)
"""

_COUNTRIES = (0.22, 0.16, 0.13, 0.1, 0.08, 0.07, 0.06, 0.05, 0.05, 0.04, 0.02, 0.02)
#: Countries with a second (basketball) league besides their football league.
_TWO_LEAGUES = (0, 1, 2, 3)


def sports_world(
    size: int = 400,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the sports world (module docstring) and its ground truth.

    Args:
        size: The number of players :math:`N \ge 20`. Default 400 (740 entities, 16 relations
            and about 8,250 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"sports"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = sports_world(60, seed=0)
        >>> w.exception_rates["academy_eligibility"], w.noise_rates["plays_in"]
        (0.3, 0.05)
        >>> sorted(r.name for r in w.rules if r.head.relation == "represents")
        ['academy_eligibility', 'birth_eligibility']
    """
    check_world_arguments(size, 20, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    weights = np.asarray(_COUNTRIES)
    n_country = len(_COUNTRIES)
    league_country = list(range(n_country)) + list(_TWO_LEAGUES)
    n_league = len(league_country)
    league_weight = np.array([weights[c] / league_country.count(c) for c in league_country])
    n_city, n_club = max(n_country, n // 16), max(n_league, n // 5)
    n_coach, n_award = max(4, n // 12), max(4, n // 4)
    players, coaches, clubs = (
        entity_labels("player", n),
        entity_labels("coach", n_coach),
        entity_labels("club", n_club),
    )
    cities, countries = entity_labels("city", n_city), entity_labels("country", n_country)
    leagues, awards = entity_labels("league", n_league), entity_labels("award", n_award)
    stadiums: list[str] = []
    facts: list[LabeledTriple] = []
    facts.extend((leagues[g], "league_country", countries[c]) for g, c in enumerate(league_country))
    city_country = [
        c if c < n_country else int(rng.choice(n_country, p=weights)) for c in range(n_city)
    ]
    cities_of: list[list[int]] = [[] for _ in range(n_country)]
    for y, c in enumerate(city_country):
        cities_of[c].append(y)
        facts.append((cities[y], "located_in", countries[c]))

    def city_in(country: int) -> int:
        pool = cities_of[country]
        return pool[int(rng.integers(len(pool)))]

    # Clubs: one per league first, the rest by league weight; a stadium in a city of the
    # league's country, shared with an earlier club of that city with probability .15.
    club_league = [
        g if g < n_league else int(rng.choice(n_league, p=league_weight / league_weight.sum()))
        for g in range(n_club)
    ]
    # A club plays in its country's league, or with probability .05 in a foreign one (Monaco).
    club_home = [
        league_country[g] if rng.random() >= 0.05 else int(rng.choice(n_country, p=weights))
        for g in club_league
    ]
    stadium_of_city: dict[int, list[int]] = {}
    for t, g in enumerate(club_league):
        facts.append((clubs[t], "in_league", leagues[g]))
        y = city_in(club_home[t])
        shared = stadium_of_city.get(y, [])
        if shared and rng.random() < 0.15:
            s = shared[int(rng.integers(len(shared)))]
        else:
            s = len(stadiums)
            stadiums.append(f"stadium_{s:03d}")
            stadium_of_city.setdefault(y, []).append(s)
            facts.append((stadiums[s], "located_in", cities[y]))
        facts.append((clubs[t], "plays_at", stadiums[s]))
    clubs_in = [[t for t in range(n_club) if club_home[t] == c] for c in range(n_country)]
    everywhere = list(range(n_club))
    # Players: a birth city, a youth club (.7; at home .8), a career of 1 + Poisson(.35) clubs,
    # the first at home with probability .7; clubs attach preferentially (big squads).
    squad_size = np.zeros(n_club)
    squads: list[list[int]] = [[] for _ in range(n_club)]
    home = [0] * n
    for p in range(n):
        home[p] = int(rng.choice(n_country, p=weights))
        facts.append((players[p], "born_in", cities[city_in(home[p])]))
        local = clubs_in[home[p]] or everywhere
        if rng.random() < 0.7:
            pool = local if rng.random() < 0.65 else everywhere
            facts.append((players[p], "youth_club", clubs[pool[int(rng.integers(len(pool)))]]))
        career: list[int] = []
        for k in range(1 + int(rng.poisson(0.35))):
            pool = local if rng.random() < (0.9 if k == 0 else 0.7) else everywhere
            pool = [t for t in pool if t not in career] or [
                t for t in everywhere if t not in career
            ]
            career.append(weighted_pick(rng, pool, squad_size + 4.0))
            squad_size[career[-1]] += 1
        for t in career:
            squads[t].append(p)
    # A captain per club of two or more players: their membership is left to captain_member.
    captain = {
        t: squad[int(rng.integers(len(squad)))] for t, squad in enumerate(squads) if len(squad) >= 2
    }
    for t, squad in enumerate(squads):
        for p in squad:
            facts.append(
                (players[p], "captain_of" if captain.get(t) == p else "plays_for", clubs[t])
            )
    # Coaches: born mostly where they coach; each club one manager, coaches attach
    # preferentially (1 + their clubs), every coach manages at least one club when possible.
    coach_home = [int(rng.choice(n_country, p=weights)) for _ in range(n_coach)]
    for c in range(n_coach):
        facts.append((coaches[c], "born_in", cities[city_in(coach_home[c])]))
    jobs = np.zeros(n_coach)
    for t in range(n_club):
        if t < n_coach:
            c = t
        else:
            local = [c for c in range(n_coach) if coach_home[c] == club_home[t]]
            pool = local if local and rng.random() < 0.6 else list(range(n_coach))
            c = weighted_pick(rng, pool, jobs + 1.0)
        jobs[c] += 1
        facts.append((coaches[c], "manages", clubs[t]))
    # Season awards of a league: a winner from its clubs' squads with probability .9 (stars win
    # again: weight 1 + awards won), else any player (a loan spell not in plays_for).
    won = np.zeros(n)
    league_players = [
        sorted({p for t in range(n_club) if club_league[t] == g for p in squads[t]})
        for g in range(n_league)
    ]
    for a in range(n_award):
        g = int(rng.choice(n_league, p=league_weight / league_weight.sum()))
        facts.append((awards[a], "award_of", leagues[g]))
        inside = league_players[g]
        pool = inside if inside and rng.random() < 0.7 else sorted(set(range(n)) - set(inside))
        p = weighted_pick(rng, pool, 1.0 + 3.0 * won)
        won[p] += 1
        facts.append((players[p], "won_award", awards[a]))
    types = {
        **dict.fromkeys(players, "player"),
        **dict.fromkeys(coaches, "coach"),
        **dict.fromkeys(clubs, "club"),
        **dict.fromkeys(stadiums, "stadium"),
        **dict.fromkeys(leagues, "league"),
        **dict.fromkeys(awards, "award"),
        **dict.fromkeys(cities, "city"),
        **dict.fromkeys(countries, "country"),
    }
    return build_world(
        "sports",
        facts,
        SPORTS_RULES,
        seed=seed,
        size=n,
        rng=rng,
        entity_types=types,
        exception_rates={"birth_eligibility": 0.1, "academy_eligibility": 0.3},
        noise_rates={"represents": 0.04, "plays_in": 0.05},
        symmetric=("teammate",),
        inverse_pairs=(("plays_for", "has_player"),),
        shortcuts=(("represents", "plays_in"),),
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
    )
