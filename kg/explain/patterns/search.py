r"""The pattern search: which candidate paths of a target explain it (:func:`pattern_search`).

The search works on the counts of :mod:`kg.explain.patterns.bank` (the pattern :math:`\pi` of a
path, its support :math:`s_\pi`, body size :math:`b_\pi` and agreement :math:`D_\pi` with the
:math:`n_r` facts of the target relation :math:`r`). The rule sets it consults are in
:mod:`kg.explain.patterns.rule_sets`, the conditions it adds last in
:mod:`kg.explain.patterns.conditions`, the tests in :mod:`kg.explain.patterns.significance`.

**Explanation** (:func:`pattern_search`). Below :math:`S(\Pi) = D_\Pi`, the agreement of a
conjunction :math:`\Pi` (pairs :math:`R_{\pi_1} \odot R_{\pi_2} \odot \cdots`). The candidate
patterns are every candidate path's pattern and, with ``anchors``, each of its patterns with one
intermediate node held constant. A path of length two or more that uses the target's relation
:math:`r` is no candidate unless ``recursive``: a body that routes through another :math:`r` fact,
:math:`r(x, z) \Leftarrow s(x, y) \land r(y, z)`, is taken only where nothing else explains the
target (the explainer asks for it when the local graph has no other path; the length-1 inverse
:math:`r^{-1}`, a symmetry, is always one, and gives way to a body without :math:`r` where "Heads
with several bodies", "the mirror", says so). Such a body is the first pick only: the last resort
that admits it is spent once it explains the target, so no further path through another :math:`r`
fact is conjoined (or exchanged in after the first position). Those paths are filters of the tail by
its other :math:`r` facts; on the legal world (issue #18, session 27) the search had conjoined two
of them to a recursive pick (a case with the same plaintiff, or invoking the same statute section,
that binds the court), each raising :math:`S` significantly, and the explanations of four targets
had F1 .18-.36 against .40 for the pick alone. The first pattern :math:`\pi_1` is one of largest
score :math:`S` ("Ties" below), or the member of the relation's rule set that replaces it ("Heads
with several bodies"). With the conjunction :math:`\Pi = (\pi_1, \dots, \pi_k)` so far, of counts
:math:`s, b`, and :math:`s', b'` those of :math:`(\Pi, \pi')`, the pairs :math:`\pi'` removes number
:math:`d = b - b'`, of which :math:`d_1 = s - s'` are facts. Removing pairs of which a share
:math:`\rho` are facts raises the agreement iff :math:`\rho < s / (b + n_r) = D_\Pi / 2`, so
:math:`\pi'` is *admissible* when the one-sided binomial test rejects :math:`\rho \ge D_\Pi / 2` at
level :math:`\alpha = 0.05`:

.. math::
    P\big(\mathrm{Bin}(d, D_\Pi / 2) \le d_1\big) < \alpha,

and :math:`S(\Pi, \pi') > S(\Pi)` (a correlated filter that raises the agreement by chance alone
is refused). The admissible :math:`\pi'` of largest :math:`S(\Pi, \pi')` ("Ties") whose path's
triples are not all chosen already is added, up to ``max_paths`` paths; after each addition
one exchange pass replaces each earlier :math:`\pi_i` by the candidate that raises :math:`S` of the
conjunction most, if any does (a first pick that only ties the body is undone once the second
pattern shows which first pattern it completes). Nothing here depends on the local graph's
perturbation scores, so a correlated path is chosen only when it is the better-agreeing pattern
over the whole graph. No candidate pattern (no path, or only paths through other :math:`r`
facts) gives an empty choice.

**Ties** (:func:`_pick`). Where the counts over :math:`X_r` cannot tell two candidates apart,
the pairs of the other heads can. Of the candidates for a pick (every pattern for
:math:`\pi_1`, the admissible ones for :math:`\pi'`), let :math:`\pi^*` be the first of largest
:math:`S(\Pi, \cdot)` (:math:`\Pi` empty for :math:`\pi_1`). The candidates *tied* with it
are :math:`\pi^*` and each :math:`\pi'` that it does not agree significantly better than,
:math:`(\Pi, \pi^*)` against :math:`(\Pi, \pi')` in :func:`significantly_better` at level
:math:`\alpha`: the statistic :math:`z \le z_{1 - \alpha}`, or no discordant pair. Of these the
first of largest closed-world agreement, then of largest :math:`S`, is taken:

.. math::
    D^{\mathrm{cw}}_\Pi = \frac{2\, s_\Pi}{b_\Pi + \hat b_{0, \Pi} + n_r}, \qquad
    b_{0, \Pi} = \sum_{x \notin H_r} \sum_y R_\Pi[x, y],

with :math:`H_r` the entities with an :math:`r` fact (:math:`X_r \subseteq H_r`). This is the
Dice agreement with every entity a head: the entities without an :math:`r` fact add body pairs
and no fact. It is the difference between AMIE's standard confidence :math:`s / (b + b_0)`,
which reads a missing fact as false (closed world), and its PCA confidence :math:`s / b`, which
counts only heads with some :math:`r` fact (Galárraga et al. 2013, above). A body that fires
for entities that have no :math:`r` fact at all predicts facts that are nowhere in the graph;
the PCA reading cannot see that, and it is the evidence left when the PCA counts tie. On the
academic world (issue #18, session 19) ``trained_in`` :math:`\Leftarrow` ``supervised``
:math:`^{-1}`, ``affiliated_with, located_in`` and the shortcut ``affiliated_with,
located_in`` join the same 134 pairs of :math:`X_r` (every student is affiliated where the
advisor is); the shortcut also joins every advisor to a country (:math:`b_0 = 266` against
34): :math:`D^{\mathrm{cw}}` .50 against .89; on the four synthetic worlds the tie-break changes
only those 6 targets. As the score itself :math:`D^{\mathrm{cw}}` depends on how :math:`b_0` is
counted: geography's F1 at length 3 is .83 with every entity counted and .69 with the estimate below
("Heads with several bodies"). The sum over :math:`x \notin H_r` is estimated on :math:`Y`, a seeded
draw of ``max_heads`` of the entities in some triple (all of them when there are no more; an entity
in none joins no pair), scaled to the entities without an :math:`r` fact and to the share of the
heads in :math:`X_r`,

.. math::
    \hat b_{0, \Pi} = \frac{|X_r|}{|H_r|}\, \frac{|V \setminus H_r|}{|Y \setminus H_r|}
    \sum_{x \in Y \setminus H_r} \sum_y R_\Pi[x, y],

:math:`V` the entities in some triple; it is exact when neither :math:`X_r` nor :math:`Y` is a
draw. The exchange pass and the orientation step compare :math:`S` alone.

**Orientation.** A chosen step from :math:`u` to :math:`v` along a triple :math:`s(v, u)` is
then turned into :math:`s(u, v)` when that triple is in the local graph too, unless the chosen
orientation agrees significantly better with :math:`r` (:func:`significantly_better`, the
other chosen patterns fixed), so that a body reads from :math:`h` to :math:`t`. The two
orientations of a symmetric relation join the same pairs up to the facts held out of training,
and the greedy choice between them was the noise of those few pairs (issue #18: geography's
``borders(X, Y)`` taken as ``borders(Y, X)`` in 8 of 12 bodies).

"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch
from scipy.stats import binom
from torch import Tensor

from graphdata.errors import GraphDataError
from kg.explain.local import LocalStructure
from kg.explain.patterns._bits import _dice, _exact_dice
from kg.explain.patterns.bank import path_pattern
from kg.explain.patterns.conditions import (
    _condition,
    _conditioned_pick,
    _LocalAtoms,
    _placed_keys,
    _takes_place,
)
from kg.explain.patterns.rule_sets import (
    _confident_member,
    _folded_conjuncts,
    _folded_member,
    _member_instead,
)
from kg.explain.patterns.significance import ALPHA, significantly_better

if TYPE_CHECKING:
    from kg.explain.patterns.bank import Pattern, PatternBank


@dataclass(frozen=True)
class PatternChoice:
    """The outcome of :func:`pattern_search`.

    Attributes:
        chosen: Indices of the chosen candidate paths, in the order they were added.
        scores: The score :math:`S` of the conjunction of the chosen patterns after each
            addition (the last one after the exchange pass and the orientation step).
        num_patterns: How many distinct candidate patterns were scored.
        conditions: Positions in the local graph's triples of the condition atoms, facts on a
            constant at a node of a chosen path (:mod:`~kg.explain.patterns.conditions`,
            "Conditions"), or the witness of a distinct value at an end ("Distinct values").
            Default ``()``.
    """

    chosen: tuple[int, ...]
    scores: tuple[float, ...]
    num_patterns: int
    conditions: tuple[int, ...] = ()


def pattern_search(
    local: LocalStructure,
    bank: PatternBank,
    *,
    max_paths: int,
    anchors: bool = True,
    recursive: bool = False,
) -> PatternChoice:
    """Choose the explanation paths by their mined patterns' scores (module docstring).

    Args:
        local: The target's local structure and candidate paths.
        bank: The graph's :class:`PatternBank`.
        max_paths: The most paths (distinct patterns) in the explanation.
        anchors: Also score each path's patterns with one intermediate node held constant.
            Default True.
        recursive: Also take paths of two or more steps through another fact of the target
            relation as candidates (bodies that recurse on :math:`r`). Default False.

    Returns:
        The :class:`PatternChoice` (empty when there is no candidate path), with a condition atom or
        a distinct value's witness where one agrees better than the chosen paths
        (:mod:`~kg.explain.patterns.conditions`, "Conditions", "Distinct values"; then ``chosen``
        may keep only some of them, and ``scores`` ends with :math:`S` of the result), or one other
        candidate path and its condition where they agree significantly better ("Conditioned picks";
        ``scores`` ends with their :math:`S`).

    Raises:
        GraphDataError: For a ``max_paths`` below 1.
    """
    if isinstance(max_paths, bool) or not isinstance(max_paths, int) or max_paths < 1:
        raise GraphDataError(f"max_paths: expected a positive int, got {max_paths!r}")
    if not local.paths:
        return PatternChoice((), (), 0)
    relation = local.target[1]
    first: dict[Pattern, int] = {}
    routes: dict[tuple[tuple[int, ...], tuple[tuple[int, bool], ...]], int] = {}
    plains: list[tuple[Pattern, int]] = []  # every candidate path's plain pattern
    for p, edges in enumerate(local.paths):  # candidates are ordered shortest first
        if (
            not recursive
            and len(edges) > 1
            and any(int(local.edge_type[e]) == relation for e in edges)
        ):
            continue  # a body that recurses on r: only when asked for
        plain = path_pattern(local, p)
        plains.append((plain, p))
        routes.setdefault(_route(local.path_nodes[p], plain), p)  # for the orientation step
        first.setdefault(plain, p)
        for anchor in range(1, len(edges)) if anchors else ():
            first.setdefault(path_pattern(local, p, anchor), p)
    distinct = list(first)
    if not distinct:
        return PatternChoice((), (), 0)
    bank._pool_counts(relation, distinct)  # each candidate's counts, by bit rows
    top, pi = _pick(bank, relation, [], [(bank.agreement(relation, [pi]), pi) for pi in distinct])
    member = None if recursive else _member_instead(local, bank, relation, first, pi)
    if member is not None:  # "Heads with several bodies"
        top, pi = bank.agreement(relation, [member]), member
    confident = None if recursive else _confident_member(local, bank, relation, first, pi)
    if confident is not None:  # "Heads with several bodies", the most confident member
        top, pi = bank.agreement(relation, [confident]), confident
    folded = None if recursive else _folded_member(local, bank, relation, first, pi)
    if folded is not None:  # "Heads with several bodies", folding
        top, pi = bank.agreement(relation, [folded]), folded
    chosen_patterns = [pi]
    chosen, scores = [first[pi]], [top]
    while len(chosen) < max_paths:
        used = set(local.edge_mask(chosen).nonzero().flatten().tolist())
        support, body = bank.counts(relation, chosen_patterns)
        rate = support / (body + bank.num_facts(relation))  # D / 2
        options = []
        keys: np.ndarray | None = None
        for pi in distinct:
            if pi in chosen_patterns or set(local.paths[first[pi]]) <= used:
                continue
            if _through(pi, relation):
                continue  # recursion is the first pick's last resort, never a filter
            # S of the conjunction is at most 2 m / (m + n_r), m the smaller support (as in
            # the exchange pass below): a candidate that cannot beat S so far is no option
            most = min(support, bank.counts(relation, [pi])[0])
            if _dice(most, most, bank.num_facts(relation)) <= scores[-1]:
                continue
            if keys is None:  # the chosen patterns' pairs, once per addition
                keys = bank._joint_keys(relation, chosen_patterns)
            joint = [*chosen_patterns, pi]
            s_joint, b_joint = bank._extended_counts(relation, chosen_patterns, keys, pi)
            dropped, dropped_true = body - b_joint, support - s_joint
            if dropped > 0 and binom.cdf(dropped_true, dropped, rate) < ALPHA:
                value = bank.agreement(relation, joint)
                if value > scores[-1]:
                    options.append((value, pi))
        if not options:
            break
        top, pi = _pick(bank, relation, chosen_patterns, options)
        chosen_patterns.append(pi)
        chosen.append(first[pi])
        scores.append(top)
        for i in range(len(chosen_patterns) - 1):  # one exchange pass over the earlier ones
            rest = chosen_patterns[:i] + chosen_patterns[i + 1 :]
            # the first of largest S above the current one; the conjunction joins at most
            # the facts of either part, so S <= 2 m / (m + n_r) with m the smaller support,
            # and a candidate whose bound cannot beat the best so far is not counted
            within = bank.counts(relation, rest)[0]
            better: tuple[float, Pattern | None] = (scores[-1], None)
            keys = None
            for other in distinct:
                if other in chosen_patterns or (i > 0 and _through(other, relation)):
                    continue
                most = min(within, bank.counts(relation, [other])[0])
                if _dice(most, most, bank.num_facts(relation)) <= better[0]:
                    continue
                if keys is None:
                    keys = bank._joint_keys(relation, rest)
                value = _dice(
                    *bank._extended_counts(relation, rest, keys, other), bank.num_facts(relation)
                )
                if value > better[0]:
                    better = (value, other)
            if better[1] is not None:
                chosen_patterns[i], chosen[i], scores[-1] = better[1], first[better[1]], better[0]
    if not recursive:  # "Folding the conjuncts" (kg.explain.patterns.rule_sets)
        for k, m in _folded_conjuncts(bank, relation, first, chosen_patterns, local.max_length):
            chosen_patterns[k], chosen[k] = m, first[m]
    _orient(local, bank, relation, routes, chosen_patterns, chosen)
    scores[-1] = bank.agreement(relation, chosen_patterns)
    atoms = _LocalAtoms(local, bank, relation)
    placed = _condition(local, bank, relation, chosen_patterns, chosen, atoms)
    kept = range(len(chosen)) if placed is None else placed.kept
    conditions = () if placed is None else (placed.edge,)
    if placed is not None:
        scores.append(float(placed.value))
    choice = PatternChoice(tuple(chosen[k] for k in kept), tuple(scores), len(distinct), conditions)
    if recursive:
        return choice
    # "Conditioned picks": a candidate path with a condition in the explanation's place
    bare = [
        (pi, p) for pi, p in plains if p not in chosen and all(rel != relation for rel, _, _ in pi)
    ]
    width = len({e for k in kept for e in local.paths[chosen[k]]}) + len(conditions)
    agreed = (
        placed.value
        if placed is not None
        else _exact_dice(*bank.counts(relation, chosen_patterns), bank.num_facts(relation))
    )
    found = _conditioned_pick(local, bank, relation, bare, atoms, agreed, width)
    if found is None:
        return choice
    path, pick = found
    keys = _placed_keys(bank, relation, [path_pattern(local, path)], pick)
    explanation = _placed_keys(bank, relation, chosen_patterns, placed)
    if not _takes_place(local, bank, relation, first, chosen_patterns[kept[0]], keys, explanation):
        return choice
    return PatternChoice((path,), (*scores, float(pick.value)), len(distinct), (pick.edge,))


def _through(pattern: Pattern, relation: int) -> bool:
    """Whether ``pattern`` routes through another fact of ``relation`` (two steps or more)."""
    return len(pattern) > 1 and any(step[0] == relation for step in pattern)


def _pick(
    bank: PatternBank,
    relation: int,
    chosen: list[Pattern],
    options: list[tuple[float, Pattern]],
) -> tuple[float, Pattern]:
    r"""The pick among ``options``: largest :math:`S`, ties by :math:`D^{\mathrm{cw}}` ("Ties").

    ``options`` holds ``(S of chosen + pattern, pattern)`` in candidate order. With
    :math:`\pi^*` the first of largest :math:`S`, the tied options are :math:`\pi^*` and each
    :math:`\pi'` that :math:`\pi^*` is not significantly better than
    (:func:`significantly_better`, ``chosen`` held fixed); of these, the first of largest
    closed-world agreement :math:`D^{\mathrm{cw}}`, then of largest :math:`S`, is returned.

    :math:`S` is the agreement :math:`2 s / (b + n_r)` and :math:`D^{\mathrm{cw}} = 2 s / (b +
    \hat b_0 + n_r)` with :math:`\hat b_0 \ge 0`, so :math:`D^{\mathrm{cw}} \le S` (in floating
    point too: a sum and a quotient of the same numbers rounded monotonically). The tied
    options are tried in decreasing :math:`S` and, once an option's :math:`S` is below the
    largest :math:`D^{\mathrm{cw}}` so far, neither it nor any after it can win, so their
    closed-world counts are skipped; the winner is the same (the first of largest
    :math:`(D^{\mathrm{cw}}, S)` in ``options`` order; tested against the plain maximum).
    """
    top, best = max(options, key=lambda o: o[0])  # the first of the largest
    tied = [
        (value, pi)
        for value, pi in options
        if pi == best or not significantly_better(bank, relation, [*chosen, best], [*chosen, pi])
    ]
    if len(tied) == 1:
        return top, best
    winner: tuple[tuple[float, float, int], tuple[float, Pattern]] | None = None
    for k in sorted(range(len(tied)), key=lambda k: (-tied[k][0], k)):
        value, pi = tied[k]
        if winner is not None and value < winner[0][0]:
            break  # D_cw <= S < the largest D_cw so far, here and after
        key = (bank.agreement(relation, [*chosen, pi], closed_world=True), value, -k)
        if winner is None or key > winner[0]:
            winner = (key, tied[k])
    assert winner is not None
    return winner[1]


def _route(
    nodes: tuple[int, ...], pattern: Pattern
) -> tuple[tuple[int, ...], tuple[tuple[int, bool], ...]]:
    """A path's nodes and its steps' ``(relation, forward)``: which triples it walks."""
    return nodes, tuple((r, f) for r, f, _ in pattern)


def _orient(
    local: LocalStructure,
    bank: PatternBank,
    relation: int,
    routes: dict[tuple[tuple[int, ...], tuple[tuple[int, bool], ...]], int],
    patterns: list[Pattern],
    chosen: list[int],
) -> None:
    r"""Turn each chosen step taken against its triple's direction forward where it may.

    A step from :math:`u` to :math:`v` along :math:`s(v, u)` becomes :math:`s(u, v)` when that
    triple is also in the local graph (a candidate path with the same nodes and the step flipped
    exists) and the chosen orientation does not agree significantly better
    (:func:`significantly_better`, the other chosen patterns held fixed): the path then reads
    from :math:`h` to :math:`t` as a rule body is written. It matters for symmetric relations,
    whose two orientations carry the same evidence up to the facts held out of training.
    ``routes`` maps :func:`_route` of every candidate path to it; ``patterns`` and ``chosen``
    are updated in place.
    """
    for k, (pattern, path) in enumerate(zip(patterns, chosen)):
        for step, (rel, forward, anchor) in enumerate(pattern):
            if forward:
                continue
            flipped = (*pattern[:step], (rel, True, anchor), *pattern[step + 1 :])
            other = routes.get(_route(local.path_nodes[path], flipped))
            rest = patterns[:k] + patterns[k + 1 :]
            if other is None or significantly_better(
                bank, relation, [*rest, pattern], [*rest, flipped]
            ):
                continue
            pattern, path = flipped, other
            patterns[k], chosen[k] = pattern, path


def pattern_mask(local: LocalStructure, choice: PatternChoice) -> Tensor:
    """The edge mask ``[m]`` of the chosen paths (all False when none is chosen)."""
    mask = (
        local.edge_mask(choice.chosen)
        if choice.chosen
        else torch.zeros(local.num_edges, dtype=torch.bool, device=local.edge_type.device)
    )
    mask[list(choice.conditions)] = True
    return mask
