r"""An academic world: authors, papers, venues, institutions, fields and supervision.

Built to break what the family world lets through (issue #18): a **triangle** rule with an
inequality (coauthorship through a shared paper), a **hub** relation with six fields that every
author is attached to (2-hop enclosing subgraphs of coauthor targets hold every author of a field
and their links), a length-3 chain next to a **length-1 shortcut** (``active_in`` is what
``interested_in`` says most of the time), a derived relation that another derived relation
shadows (``trained_in`` mostly equals ``works_in_country``, since students sit at their
advisor's institution), an inverse pair, 1-N (``supervised``), N-1 (``affiliated_with``) and
N-N (``wrote``, ``coauthor``) relations, and a correlated base relation ``knows`` that links
60 % of coauthor pairs.

**Base facts** (:func:`academic_world`), with :math:`A` = ``size`` authors:

* :math:`\max(4, \lfloor A/20 \rfloor)` institutions, ``located_in`` one of
  :math:`\min(8, \max(3, \lfloor I/2 \rfloor))` countries (round robin); every author is
  ``affiliated_with`` one institution (the first :math:`I` authors round robin, the rest
  uniformly);
* six fields; each author is ``interested_in`` one uniform field, and a second with
  probability 0.4; :math:`\max(6, \lfloor A/25 \rfloor)` venues, venue :math:`v` has
  ``venue_field`` field :math:`v \bmod 6`;
* :math:`\lfloor 1.5 A \rfloor` papers: a uniform lead author, a field among the lead's
  interests, a venue of that field (``published_in``), and 1 or 2 more authors with
  probability 0.85 (else none), each drawn from the lead's institution with probability 0.7,
  else from the authors interested in the field (repeats dropped); all of them ``wrote`` the
  paper;
* each paper ``cites`` Poisson(1.5) earlier papers: with probability 0.7 one of the same field
  among the 200 before it (when there is one), else a uniform earlier paper;
* the first 30 % of authors are seniors; every other author has, with probability 0.6, a senior
  of the same institution who ``supervised`` them (when there is one);
* ``knows(a, b)``, one random orientation, for 60 % of coauthor pairs, plus as many random
  same-institution pairs as 30 % of the coauthor pairs.

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`ACADEMIC_RULES`; no exceptions, no noise.
"""

from __future__ import annotations

import numpy as np

from graphdata.typing import LabeledTriple
from graphdata.worlds.base import World, build_world, check_world_arguments, entity_labels

__all__ = ["ACADEMIC_RULES", "academic_world"]

#: The planted rules (lengths 1-3; a triangle, a star with an inequality, chains).
ACADEMIC_RULES = """\
coauthor_rule: coauthor(A,B) <- wrote(A,P), wrote(B,P), A != B
advisor_inverse: advised_by(S,A) <- supervised(A,S)
country_rule: works_in_country(A,C) <- affiliated_with(A,I), located_in(I,C)
venue_rule: publishes_at(A,V) <- wrote(A,P), published_in(P,V)
field_rule: active_in(A,F) <- wrote(A,P), published_in(P,V), venue_field(V,F)
sibling_rule: academic_sibling(A,B) <- supervised(S,A), supervised(S,B), A != B
lineage_rule: trained_in(S,C) <- supervised(A,S), affiliated_with(A,I), located_in(I,C)
"""

_FIELDS = 6


def academic_world(
    size: int = 400,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the academic world (module docstring) and its ground truth.

    Args:
        size: The number of authors :math:`A \ge 20`. Default 400 (1,050 entities, 16
            relations and about 9,500 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions and split; ``None`` draws
            fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"academic"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = academic_world(60, seed=0)
        >>> len(w.rules), w.dataset.name
        (7, 'academic')
        >>> t = w.targets("test")[0]
        >>> all(set(g) <= set(w.dataset.train.to_labeled_triples()) for g in w.groundings(t))
        True
    """
    check_world_arguments(size, 20, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n_auth = int(size)
    n_inst = max(4, n_auth // 20)
    n_country = min(8, max(3, n_inst // 2))
    n_venue = max(6, n_auth // 25)
    n_paper = int(1.5 * n_auth)
    authors, papers = entity_labels("author", n_auth), entity_labels("paper", n_paper)
    insts, countries = entity_labels("institution", n_inst), entity_labels("country", n_country)
    venues, fields = entity_labels("venue", n_venue), entity_labels("field", _FIELDS)
    facts: list[LabeledTriple] = []
    for i, inst in enumerate(insts):
        facts.append((inst, "located_in", countries[i % n_country]))
    inst_of = [i % n_inst if i < n_inst else int(rng.integers(n_inst)) for i in range(n_auth)]
    members: list[list[int]] = [[] for _ in range(n_inst)]
    for a, i in enumerate(inst_of):
        members[i].append(a)
        facts.append((authors[a], "affiliated_with", insts[i]))
    interests: list[list[int]] = []
    in_field: list[list[int]] = [[] for _ in range(_FIELDS)]
    for a in range(n_auth):
        first = int(rng.integers(_FIELDS))
        mine = [first]
        if rng.random() < 0.4:
            mine.append(int((first + rng.integers(1, _FIELDS)) % _FIELDS))
        interests.append(mine)
        for f in mine:
            in_field[f].append(a)
            facts.append((authors[a], "interested_in", fields[f]))
    venue_of_field = [[v for v in range(n_venue) if v % _FIELDS == f] for f in range(_FIELDS)]
    for v in range(n_venue):
        facts.append((venues[v], "venue_field", fields[v % _FIELDS]))
    paper_field: list[int] = []
    knows_pairs: set[tuple[int, int]] = set()
    coauthor_pairs: list[tuple[int, int]] = []
    for p in range(n_paper):
        lead = int(rng.integers(n_auth))
        f = interests[lead][int(rng.integers(len(interests[lead])))]
        paper_field.append(f)
        options = venue_of_field[f]
        facts.append((papers[p], "published_in", venues[options[int(rng.integers(len(options)))]]))
        team = [lead]
        extra = int(rng.integers(1, 3)) if rng.random() < 0.85 else 0
        for _ in range(extra):
            pool = members[inst_of[lead]] if rng.random() < 0.7 else in_field[f]
            pick = pool[int(rng.integers(len(pool)))]
            if pick not in team:
                team.append(pick)
        for a in team:
            facts.append((authors[a], "wrote", papers[p]))
        for i, a in enumerate(team):
            for b in team[i + 1 :]:
                coauthor_pairs.append((min(a, b), max(a, b)))
    for p in range(1, n_paper):
        for _ in range(int(rng.poisson(1.5))):
            same = [q for q in range(max(0, p - 200), p) if paper_field[q] == paper_field[p]]
            q = same[int(rng.integers(len(same)))] if same and rng.random() < 0.7 else None
            q = int(rng.integers(p)) if q is None else q
            facts.append((papers[p], "cites", papers[q]))
    n_senior = max(1, int(0.3 * n_auth))
    for s in range(n_senior, n_auth):
        seniors = [a for a in members[inst_of[s]] if a < n_senior]
        if seniors and rng.random() < 0.6:
            facts.append(
                (authors[seniors[int(rng.integers(len(seniors)))]], "supervised", authors[s])
            )
    unique_pairs = sorted(set(coauthor_pairs))
    for a, b in unique_pairs:
        if rng.random() < 0.6:
            knows_pairs.add((a, b) if rng.random() < 0.5 else (b, a))
    for _ in range(int(0.3 * len(unique_pairs))):
        group = members[int(rng.integers(n_inst))]
        a, b = (group[int(rng.integers(len(group)))] for _ in range(2))
        if a != b:
            knows_pairs.add((a, b))
    facts.extend((authors[a], "knows", authors[b]) for a, b in sorted(knows_pairs))
    types = {
        **dict.fromkeys(authors, "author"),
        **dict.fromkeys(papers, "paper"),
        **dict.fromkeys(insts, "institution"),
        **dict.fromkeys(countries, "country"),
        **dict.fromkeys(venues, "venue"),
        **dict.fromkeys(fields, "field"),
    }
    return build_world(
        "academic",
        facts,
        ACADEMIC_RULES,
        seed=seed,
        size=n_auth,
        rng=rng,
        entity_types=types,
        inverse_pairs=(("advised_by", "supervised"),),
        symmetric=("coauthor", "academic_sibling"),
        shortcuts=(
            ("knows", "coauthor"),
            ("interested_in", "active_in"),
            ("works_in_country", "trained_in"),
        ),
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
    )
