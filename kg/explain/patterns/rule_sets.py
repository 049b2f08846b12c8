r"""Rule sets: the bodies of a head relation chosen together, and the picks they correct.

The pattern search (:mod:`kg.explain.patterns.search`) consults them; they are built on the
counts of :mod:`kg.explain.patterns.bank`.

**Heads with several bodies** (rule sets). For a head derived by two rules,
:math:`r \Leftarrow \beta_1 \lor \beta_2`, :math:`D_{\beta_1}` counts the facts of :math:`\beta_2`
as missed (:math:`s_{\beta_1}` is :math:`\beta_1`'s share of :math:`n_r`), and a path through a
third relation derived from the same facts joins the facts of both bodies at the same precision,
so it agrees better than either body. On the family world (issue #18, session 18) ``aunt``
:math:`\Leftarrow` ``sister, parent`` (57 % of the ``aunt`` facts, :math:`D = .66`) or ``spouse,
brother, parent`` (39 %, :math:`D = .53`) lost to ``parent, cousin`` (71 %, :math:`D = .75`), all
three at precision :math:`s / b` of .78-.83. One pattern is no disjunction, so the bodies of
:math:`r` are chosen as a set :math:`B = \{\beta_1, \dots, \beta_k\}` of patterns, scored by
the pairs that some member joins (:meth:`PatternBank.union_counts`):

.. math::
    R_B[x, y] = \max_j R_{\beta_j}[x, y], \qquad
    s_B = \sum_{x \in X_r} \sum_y R_B[x, y]\, T_r[x, y], \qquad
    b_B = \sum_{x \in X_r} \sum_y R_B[x, y], \qquad
    D_B = \frac{2\, s_B}{b_B + n_r}.

*The pool* :math:`P_r`: the patterns without anchors of the simple paths of :math:`1 .. \min(L,
3)` steps between the two ends of each of :data:`POOL_FACTS` (20) :math:`r` facts of
:math:`X_r` drawn with the bank's seed, the fact itself left out and no :math:`r` triple on a
path of two or more steps (:meth:`PatternBank.between`: the candidate patterns of an unpruned
local structure of that fact, from the whole graph), each kept when at least
:data:`POOL_SUPPORT` (2) of the drawn facts have it. A target's own candidates are not enough:
a blood aunt has no ``spouse, brother, parent`` path. The patterns are drawn as integer keys
that sort as the patterns do (:func:`_pool`); where a pattern's pairs fit a few words of bits,
the set below is searched over the whole pool held as one bit array
(:mod:`kg.explain.patterns._dense`, the same set): on a small, dense graph the pool is most
patterns there are (Nations: 670,000-760,000, drawn in about 0.25 s, walked as bits in 0.3-0.4
s and searched in 0.15 s per relation, where the search below took 23-38 s and the pool another
30 s; issue #18, sessions 35-36).

*The set* :math:`B_r` (:func:`rule_set`, once per relation). :math:`B` starts with
the first pattern of :math:`P_r` of largest :math:`D`. With :math:`s, b` the counts of
:math:`B` and :math:`s', b'` those of :math:`B \cup \{\beta'\}`, :math:`\beta'` adds :math:`d =
b' - b` pairs, of which :math:`d_1 = s' - s` are facts. Adding pairs of which a share
:math:`\rho` are facts raises the agreement iff :math:`\rho > s / (b + n_r) = D_B / 2`, so
:math:`\beta'` is *admissible* when the one-sided binomial test rejects :math:`\rho \le D_B / 2`
at level :math:`\alpha` (the mirror image of the test for a conjunction above):

.. math::
    P\big(\mathrm{Bin}(d, D_B / 2) \ge d_1\big) < \alpha,

and :math:`D_{B \cup \{\beta'\}} > D_B`. The admissible :math:`\beta'` of largest
:math:`D_{B \cup \{\beta'\}}` joins :math:`B`; after each addition one exchange pass replaces
each earlier member by the pool pattern that raises :math:`D_B` most, if any does (a first
member that joins the facts of both bodies gives way once the bodies are in). When no pattern
is admissible, each member must pass the same test against the others: with :math:`d, d_1` the
pairs and facts that only :math:`\beta \in B` joins, while some :math:`\beta` has
:math:`P(\mathrm{Bin}(d, D_{B \setminus \beta} / 2) \ge d_1) \ge \alpha` or :math:`D_B \le
D_{B \setminus \beta}`, the one of largest p-value is dropped.

*The target* (:func:`pattern_search`; not for the ``recursive`` search, whose candidates the pool
lacks). When :math:`|B_r| \ge 2`, :math:`\pi_1 \notin B_r` and some member is among the target's
candidate patterns, let :math:`m` be the first of these of largest :math:`D_m`; it replaces
:math:`\pi_1` when :math:`B_r` agrees significantly better than :math:`B_r` with :math:`m` replaced
by :math:`\pi_1` (the test of :func:`significantly_better` on the pairs of the two unions):
:math:`\pi_1` is then no equal member of the set, the bodies join what it joins and significantly
more. The members here are :math:`B_r` and the target's own plain candidate patterns that
:math:`B_r`'s admission test admits against the fixed :math:`B_r` (:func:`_admissible_candidates`):
the pool is a draw, and a body of a small share of the facts can miss it while the target's
candidates show it (session 24, the held-out sports world's ``award_country``: support 1 in the draw
where the pool needs 2; two targets explained by a correlated path, F1 0, are explained by their
planted body; none of the seven other worlds' and none of 100 FB15k-237 explanations changes). The
search goes on from :math:`m` as above (conjunctions, exchange pass, orientation). A head with one
body (:math:`|B_r| = 1`) keeps its pick, and so does a target whose pick is a member (unless a
more confident member replaces it, below). On the family world (session 21) :math:`B` of ``aunt``
is ``sister, parent``, ``spouse, brother, parent`` and
``spouse``:math:`^{-1}` ``, brother, parent`` (the two readings of the symmetric ``spouse`` each
hold facts whose other triple is held out): they join all 512 ``aunt`` facts of :math:`X_r`,
:math:`D_B = .89`, and ``parent, cousin`` adds no pair; ``cousin``'s two bodies join all 964 facts
(:math:`D_B = .89`) and the shortcut ``uncle`` :math:`^{-1}` ``, parent`` (:math:`D = .82`) adds no
pair. Issue #18's bench (seed 0, library defaults): family F1 at lengths 2 / 3 from .44 / .30 to
1.00 / .86, software at length 2 from .71 to .76; every academic, geography and biology explanation
unchanged. The test changes no world's explanation with this pool (with a pool from the explainer's
pruned local structures it kept geography's ``capital_rule`` at F1 1.00, .83 without it, where the
pick was the other reading of the symmetric ``borders`` and no member); on 100 FB15k-237 targets the
rule sets change 7 explanations, 14 without the test.

*The mirror* (:func:`_member_instead`), in place of the member swap. Where :math:`r` is symmetric,
the mirror :math:`r^{-1}` (the target's own fact read the other way) joins every pair whose reverse
is a fact, so as one pattern it agrees better than each of :math:`r`'s bodies when these are
several: on the held-out publishing world (session 30) ``co_agents(G, H)`` holds when either agency
appointed the other, each reading of ``appointed_coagent`` alone agrees .62-.66, the mirror .84 and
the two readings together .89. The rule set :math:`B_r` then holds the two readings and not the
mirror, but the member swap's union test cannot tell :math:`B_r` (90 of the 90 facts of :math:`X_r`,
112 pairs) from the mirror with the other reading (82 facts, 100 pairs), and all 9 ``co_agents``
explanations were the mirror, F1 0. A pattern through :math:`r` is the last resort, as a recursive
body is: when the pick is :math:`r^{-1}` and no member of :math:`B_r`, the member of :math:`B_r`
(with the target's admissible candidates) without an :math:`r` step among the target's candidates,
the first of largest :math:`D_m`, replaces it, with no test; the symmetry is the reason only where
:math:`B_r` holds it (a relation stored both ways, completed by ``r(X,Y) <- r(Y,X)``: the mirrors of
the family, biology, clinical, commerce, corporate, geography, software, travel, telecom and
aviation worlds' symmetric relations are members). Measured on the eighteen worlds (seed 0):
publishing's 9 ``co_agents`` explanations change (F1 at length 1 .50 -> 1.00), no explanation of the
other seventeen worlds changes, none of 100 FB15k-237 explanations (all within 2 s, slowest 1.71 ->
1.82 s), and none of the held-out banking world's.

*The copy* (:func:`_instead_of_copy`, :func:`_copy`). A second relation :math:`s` can hold the
target's own fact under another name: every ``has_player(T, P)`` has its ``plays_for(P, T)``
and back, up to the facts held out of training (an inverse pair, as FB15k's inverse relations,
which FB15k-237 dropped). Then :math:`s^{-1}` is the member of :math:`B_r` of largest :math:`D`,
and :math:`r^{-1}` the member of :math:`B_s` of largest :math:`D`: each relation, read backwards,
is the other's best body. Such a pick is a copy, and like the mirror it restates the target
rather than giving a reason: the member of :math:`B_r` (with the target's admissible candidates)
that is among the target's candidates and has no step of :math:`r` or :math:`s`, the first of
largest :math:`D_m`, replaces it, with no test; where there is none (a relation whose one body
is its copy, as media's ``directed_by``) the copy stays. Which relation of the pair the world
derives from the other, the counts cannot tell. On the sports world (issue #18, held out until
session 24) a captain's ``plays_for(P, T) <= captain_of(P, T)`` was explained by ``has_player(T,
P)``, F1 0; now by ``captain_of(P, T)``. On the commerce world ``offers(S, P) <= own_label(S,
P)`` likewise (F1 0 -> 1 on 6 targets each), while an own-label product's ``offered_by(P, S) <=
offers(S, P)`` is now read as ``own_label(S, P)`` where the planted body is the copy (2 targets,
F1 1 -> 0). No other explanation of the 24 seen worlds changes (seed 0; with seed 1 on six of
them, 12 better and 1 worse, the same rules). A relation read forwards is no copy: ecology's
``breeds_in`` and ``occurs_in`` are each the other's best body too, one holding the other's
facts, and the forward variant replaced a ``breeds_in`` explanation by a flyway body.
None of 100 FB15k-237 explanations changes (within 2 s, as before), nor any of the 60 of
the schools world, held out until this step was run on it (its inverse pair's head has one
body, so its copy stays).

*The most confident member* (:func:`_confident_member`), after the swap, the mirror and the copy. A
target can have several members of :math:`B_r` among its candidates, and the pick by :math:`D` is
then the member that joins the most facts over the graph, not the one that most surely implies this
fact. A rule learner explains a prediction by the rule of highest confidence among those that fire
for it (AnyBURL's maximum aggregation: Meilicke et al., "Anytime Bottom-Up Rule Learning for
Knowledge Graph Completion", IJCAI 2019), and a correlated member that joins many pairs besides the
facts has a large :math:`D` and a low confidence. With :math:`c_1 = s_{\pi_1} / b_{\pi_1}` the
pick's confidence (the PCA confidence, over :math:`X_r`), a member :math:`m` among the target's
candidates, without an :math:`r` step and no copy, replaces :math:`\pi_1` when its :math:`s_m` facts
of :math:`b_m` pairs reject :math:`c_m \le c_1`, :math:`P(\mathrm{Bin}(b_m, c_1) \ge s_m) < \alpha`;
of several, the first of largest :math:`c_m`. A pick that is no member, or the mirror :math:`r^{-1}`
that :math:`B_r` holds (the symmetry is the reason), keeps its place. On the travel world (issue
#18, session 38) ``serves(A, P) <= has_hub(A, P)`` was explained at a hub served from the airline's
other hub by ``has_hub, route`` (a member of confidence .28, :math:`D = .41`) and is now explained
by ``has_hub`` (confidence .80, :math:`D = .28`): F1 at length 1 .83 -> 1.00. On the 25 seen worlds
17 of 1,345 explanations change, 4 for the better and none for the worse; on the held-out transit
world 6 of 54, all for the better (a line's terminus read as ``terminates_at(L, S)`` instead of a
union of seven triples: F1 at length 1 .50 -> 1.00), and 3 of 100 FB15k-237 explanations. Measured
and not kept: letting the mirror give way too (biology's ``interacts(X, Y) <= interacts(Y, X)`` was
then read as ``functional_link``, a relation derived from ``interacts``, confidence 1 by
construction), and admitting besides the members every plain candidate whose pairs the pick joins
(the wine world's ``blend_of <= labelled_variety`` is no member: the walk ``from_appellation,
from_appellation^-1, labelled_variety`` returns to the wine and joins all its pairs; 5 wine
explanations gained, 8 of the seen worlds' were lost to a more confident coincidence such as a
nephew's sibling path for ``aunt``).

*Folding* (:func:`_folded_member`) comes last. When the pick :math:`\pi_1` (or the member that
replaced it) is a member of :math:`B_r` and equals a shorter member :math:`m` that is among the
target's candidates with one of :math:`m`'s steps, a fact of relation :math:`s` read either way,
replaced by a member of :math:`B_s` (:func:`_unfolds`), then :math:`\pi_1` reads a derivation
of that :math:`s` fact while :math:`m` reads the fact itself, which is in the graph since
:math:`m` is a candidate here: :math:`m` replaces :math:`\pi_1` (the shortest such :math:`m`,
ties by larger :math:`D_m`). Where the :math:`s` fact is missing (held out) :math:`m` is no
candidate and :math:`\pi_1` stays; those pairs are why :math:`\pi_1` is a member and has the
larger :math:`D`. On the software world (issue #18, session 24) ``alerted``'s set holds
``maintained_by``:math:`^{-1}` ``, exposed_to`` (``upstream_alert``) and its unfolding
``maintained_by``:math:`^{-1}` ``, depends_on, has_vulnerability`` through ``exposure_rule``,
which has the larger :math:`D`; folding changes the 9 explanations of ``alerted`` targets that
read the unfolding where the ``exposed_to`` fact is present (F1 at length 2 .76 -> 1.00) and no
explanation of the six other worlds.

*Folding the conjuncts* (:func:`_folded_conjuncts`), after the exchange pass. A further pattern
:math:`\pi_k` (:math:`k \ge 2`) filters the pairs of the first; where it reads a derivation of an
:math:`s` fact, it agrees better than the fact's own reading only by the pairs whose :math:`s` fact
is held out. So a conjunct that equals a shorter plain candidate :math:`m` of the target (no
:math:`r` step) with one step unfolded (:func:`_unfolds`, as above) gives way to :math:`m` (the
shortest, ties by larger :math:`D_m`; no membership of :math:`B_r` is asked, a conjunct is no body
of its own). On the parliament world (session 32) ``party_line``, ``voted_with_party(P, B) <=
voted_for(P, B), member_of(P, X), endorses(X, B)``, was explained with ``endorses`` unfolded into
its own rule's body, ``member_of(Q, X), sponsored(Q, B)`` (F1 .57 on 6 targets, 1.00 folded). On the
twenty-one worlds (seed 0) it changes those 6 explanations, one of clinical's (F1 .22 -> .25) and
one of energy's (.22 -> .29), and no other; with seed 1 on nine of them, 13 explanations of
parliament, energy and banking, none for the worse; on the held-out construction world and on 100
FB15k-237 targets, none. The pick is not folded this way: a first pattern that unfolds a shorter
candidate was a correlated base relation's reading on three worlds (session 29: academic's ``wrote,
published_in`` folded into ``publishes_at``, F1 1 -> .40), where the first pick's folding above asks
both readings to be members of :math:`B_r`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import binom

from kg.explain.local import LocalStructure
from kg.explain.patterns import _dense
from kg.explain.patterns._bits import (
    _absent,
    _bit_positions,
    _bit_test,
    _bits_at,
    _contains,
    _dice,
    _popcount,
    _run_starts,
)
from kg.explain.patterns.bank import POOL_LENGTH, _patterns_of
from kg.explain.patterns.significance import (
    ALPHA,
    _disjunct_p_value,
    _union_significantly_better,
    _weakest_member,
)

if TYPE_CHECKING:
    from kg.explain.patterns.bank import Pattern, PatternBank
#: Facts of :math:`r` whose paths make the pool of a rule set (module docstring, "Heads with
#: several bodies"), drawn with the bank's seed. With :data:`POOL_SUPPORT`, a body that joins a
#: share :math:`c` of the facts misses the pool with probability :math:`(1 - c)^{20} + 20 c
#: (1 - c)^{19}`, below :data:`ALPHA` for :math:`c \ge .22`. A bound on the cost, not tuned:
#: on the worlds (issue #18, session 21) 10, 20 and 40 gave the same F1 but for software's
#: ``own_alert`` (12 % of its facts, in the pool from 20 on), 5 lost family's second bodies.
POOL_FACTS = 20
#: Of the drawn facts, how many a pattern must join to enter the pool (AMIE's minimum support,
#: on the draw: the path of one fact alone is not yet a pattern). The worlds' explanations are
#: the same with 1; on 100 FB15k-237 targets it cut the pool by about 40 % and the mean
#: explanation time from 1.16 s to 0.87 s (session 21's prototype, load 1-2).
POOL_SUPPORT = 2


def rule_set(
    bank: PatternBank, relation: int, max_length: int = POOL_LENGTH
) -> tuple[Pattern, ...]:
    r"""The rule set :math:`B_r` of ``relation``: bodies whose union agrees best with it.

    Module docstring, "Heads with several bodies": the pool is the patterns
    (:meth:`PatternBank.between`) of at least :data:`POOL_SUPPORT` of :data:`POOL_FACTS` seeded
    :math:`r` facts over :math:`X_r`; the set grows greedily by the admissible pattern of
    largest :math:`D_B`, with an exchange pass after each addition, and then drops each
    member that fails the admission test given the others (:func:`_grow_rule_set`, or
    :func:`kg.explain.patterns._dense.grow` where :func:`~kg.explain.patterns._dense.fits`: the
    same set). Cached on the bank per relation.

    Args:
        bank: The graph's :class:`PatternBank`.
        relation: The head relation :math:`r`.
        max_length: The longest path :math:`L` (the pool stops at :data:`POOL_LENGTH`).

    Returns:
        The members in the order they hold in the set (empty when no drawn fact has a path).
    """
    key = (relation, min(max_length, POOL_LENGTH))
    if key not in bank._rule_sets:
        keys = bank._facts_keys(relation)
        heads = bank._heads[relation]
        drawn = np.random.default_rng(bank._seed).permutation(keys.size)[:POOL_FACTS]
        found = []  # each drawn fact's patterns, as sorted keys
        for i in drawn:
            row, tail = divmod(int(keys[i]), bank.num_nodes)
            found.append(bank._between_keys(int(heads[row]), relation, tail, key[1]))
        pool = _pool(found, bank._key_space)
        if _dense.fits(bank, relation, pool.size):
            bank._rule_sets[key] = _dense.grow(bank, relation, pool)
        else:
            bank._rule_sets[key] = _grow_rule_set(
                bank, relation, _patterns_of(pool, bank.num_steps)
            )
    return bank._rule_sets[key]


def _pool(found: list[np.ndarray], space: int) -> np.ndarray:
    """The keys of at least :data:`POOL_SUPPORT` of the drawn facts, in order of first appearance.

    ``found`` holds each drawn fact's sorted unique pattern keys, in the order of the draw, each
    below ``space``: the pool's order is that of the facts, then of the patterns (ties in the
    search go to the first). Where the keys drawn outnumber the possible keys (a dense graph:
    Nations draws 6 million of 1.4 million) they are counted in an array over all of them,
    otherwise sorted together; the same pool.
    """
    if not found:
        return np.zeros(0, dtype=np.int64)
    drawn = sum(each.size for each in found)
    if space <= drawn:
        counts = np.bincount(np.concatenate(found), minlength=space)
        first = np.zeros(space, dtype=np.int64)
        for index in range(len(found) - 1, -1, -1):  # the earliest fact written last
            first[found[index]] = index
        pooled = np.flatnonzero(counts >= POOL_SUPPORT)
        return pooled[np.argsort(first[pooled], kind="stable")]
    # key * 2^f + fact, sorted: each key's run holds its facts, its first fact first
    shift = max(len(found) - 1, 1).bit_length()
    fact = np.repeat(np.arange(len(found), dtype=np.int64), [each.size for each in found])
    every = np.sort((np.concatenate(found) << shift) | fact)
    keys = every >> shift
    start = np.flatnonzero(_run_starts(keys))  # where each key's run begins
    counts = np.diff(np.append(start, keys.size))
    keep = start[counts >= POOL_SUPPORT]
    first = every[keep] & ((1 << shift) - 1)  # the fact where each key appears first
    return keys[keep][np.lexsort((keys[keep], first))]


def _grow_rule_set(bank: PatternBank, relation: int, pool: list[Pattern]) -> tuple[Pattern, ...]:
    r"""The rule set over ``pool`` (module docstring, "Heads with several bodies").

    :math:`\beta_1` is the first pattern of largest :math:`D`; then, while some pattern is
    admissible, the admissible one of largest :math:`D_{B + \beta'}` joins, and one exchange
    pass replaces each earlier member by the pool pattern that raises :math:`D_B` most, if any
    does; last, while some member fails the admission test given the others, the one of largest
    p-value is dropped. The unions are kept by :class:`_Union` (the pairs each candidate adds,
    and those only one member joins), the same counts as :meth:`PatternBank.union_counts`.
    """
    if not pool:
        return ()
    facts = bank.num_facts(relation)
    counted = bank._pool_counts(relation, pool)
    single = {pattern: counted[pattern] for pattern in pool}  # in pool order: ties
    union = _Union(bank, relation, [max(pool, key=lambda pattern: _dice(*single[pattern], facts))])
    while True:
        _, pattern = _best_disjunct(
            single, union.members, union.counts, union.added, facts, admit=True
        )
        if pattern is None:
            break
        union.append(pattern)
        for i in range(len(union.members) - 1):  # one exchange pass over the earlier members
            current = _dice(*union.counts, facts)
            only = union.exclusive(i)[1]
            rest = (union.counts[0] - only[0], union.counts[1] - only[1])
            value, other = _best_disjunct(
                single,
                union.members,
                rest,
                partial(union.added_without, i=i),
                facts,
                admit=False,
                ceiling=partial(union.ceiling_without, i=i, single=single),
                floor=current,
            )
            if other is not None and value > current:
                union.replace(i, other)
    members = list(union.members)
    while len(members) > 1:  # backward elimination with the same test
        union = _Union(bank, relation, members)
        support, body = union.counts
        rests = []
        for i in range(len(members)):
            only = union.exclusive(i)[1]
            rests.append((support - only[0], body - only[1]))
        weakest = _weakest_member(union.counts, rests, facts)
        if weakest is None:
            break
        del members[weakest]
    return tuple(members)


class _Union:
    r"""The union of the walks of ``members`` while a rule set grows (:func:`_grow_rule_set`).

    Holds the union's counts :math:`(s_B, b_B)`; per candidate pattern, the pairs it adds to the
    union (:math:`\beta \setminus B`, cached and narrowed by each member appended rather than
    searched in the whole union again); per member, the pairs that only it joins. The pairs that
    a candidate adds to the union without member :math:`i` are those it adds to :math:`B` and
    those of it that only member :math:`i` joins, so the exchange pass counts a candidate against
    the few pairs of one member, not against the union of the others. Every count is the same
    integer as :meth:`PatternBank.union_counts` of the pattern lists (tested).

    The pairs a candidate adds are kept as bit positions :math:`y \cdot 64 W + i` (pair
    :math:`(x_i, y)`, :math:`W` words a row) into ``[N, W]`` bit rows (:meth:`PatternBank._bits`),
    split into the facts of :math:`T_r` and the other pairs, without the pairs :math:`y = x`
    (which no count takes): a count is then the sizes of the two, and the narrowing by appended
    members looks each position up in the bit rows of the union (with the pairs :math:`y = x`),
    one word read per pair, where a search of every appended member's sorted keys and a count
    of the rest against the sorted keys of :math:`T_r` and of :math:`y = x` cost a binary
    search or a merge each. The pairs only a member joins keep a flag per pair for the facts.
    """

    def __init__(self, bank: PatternBank, relation: int, members: list[Pattern]) -> None:
        self._bank = bank
        self._relation = relation
        self._facts = bank.num_facts(relation)
        self._width = bank._row_words(relation)  # W
        self._pairs: np.ndarray | None = None  # [2, N, W] bit rows of y = x and T_r, built on use
        self._reset(list(members))

    def _reset(self, members: list[Pattern]) -> None:
        self.members = members
        keys = self._bank._union_keys(self._relation, members)
        self.counts = self._bank._key_counts(self._relation, keys)
        # candidate -> (positions of the facts it adds, of its other pairs, how many of
        # _appended are taken out)
        self._added: dict[Pattern, tuple[np.ndarray, np.ndarray, int]] = {}
        self._appended: list[Pattern] = []
        # member -> (sorted keys only it joins but y = x, their counts, rows, columns, facts)
        self._exclusive: dict[
            int, tuple[np.ndarray, tuple[float, float], np.ndarray, np.ndarray, np.ndarray]
        ] = {}
        self._blocked: np.ndarray | None = None  # [N, W] the union's bit rows and y = x

    def _pair_bits(self) -> np.ndarray:
        """``[2, N, W]`` bit rows of the pairs ``y = x`` and the facts (the bank's, kept)."""
        if self._pairs is None:
            self._pairs = self._bank._pair_bits(self._relation)
        return self._pairs

    def _blocked_bits(self) -> np.ndarray:
        """``[N, W]`` bit rows of the pairs the members join and of the pairs ``y = x``."""
        if self._blocked is None:
            blocked = self._pair_bits()[0].copy()
            for member in self.members:
                at, bits = self._bank._bits(self._relation, member)
                blocked[at] |= bits
            self._blocked = blocked
        return self._blocked

    def _facts_bits(self) -> np.ndarray:
        """``[N, W]`` bit rows of the facts :math:`T_r` (bit :math:`i` of row :math:`y`)."""
        return self._pair_bits()[1]

    def append(self, pattern: Pattern) -> None:
        """Add ``pattern`` as a member."""
        gained = self._added_counts(pattern)  # the pairs it adds, but y = x: what it gains
        self.counts = (self.counts[0] + gained[0], self.counts[1] + gained[1])
        self.members = [*self.members, pattern]
        self._appended.append(pattern)
        self._exclusive = {}
        if self._blocked is not None:
            at, bits = self._bank._bits(self._relation, pattern)
            self._blocked[at] |= bits

    def replace(self, i: int, pattern: Pattern) -> None:
        """Make ``pattern`` member ``i`` in place of the one there."""
        members = list(self.members)
        members[i] = pattern
        self._reset(members)

    def added(self, pattern: Pattern) -> tuple[float, float]:
        r"""``(d_1, d)``: the facts and the pairs (``y != x``) that ``pattern`` adds."""
        return self._added_counts(pattern)

    def added_to_fixed(self, pattern: Pattern) -> tuple[float, float]:
        """:meth:`added` for a union that no member joins later, by popcounts.

        The set bits of ``pattern``'s bit rows outside the union's, the pairs themselves not kept
        (no appended member will narrow them): the same two integers.
        """
        reached, bits = self._bank._bits(self._relation, pattern)
        free = bits & ~self._blocked_bits()[reached]
        return float(_popcount(free & self._facts_bits()[reached])), float(_popcount(free))

    def _added_counts(self, pattern: Pattern) -> tuple[float, float]:
        cached = self._added.get(pattern)
        blocked = self._blocked_bits()
        if cached is None:
            span = 64 * self._width
            if (self._relation, pattern) in self._bank._linear:  # the pattern's keys are cached
                row, column = np.divmod(
                    self._bank._keys(self._relation, pattern), self._bank.num_nodes
                )
                at = column * span + row
                at = at[_bit_test(blocked, at) == 0]
            else:  # from the bit rows: no sparse product, no sort of the walk
                reached, bits = self._bank._bits(self._relation, pattern)
                at = _bit_positions(reached, bits & ~blocked[reached], span)
            fact = _bit_test(self._facts_bits(), at) != 0
            true, other = at[fact], at[~fact]
        else:
            true, other, done = cached
            if done < len(self._appended):
                true = true[_bit_test(blocked, true) == 0]
                other = other[_bit_test(blocked, other) == 0]
        self._added[pattern] = (true, other, len(self._appended))
        return float(true.size), float(true.size + other.size)

    def exclusive(self, i: int) -> tuple[np.ndarray, tuple[float, float]]:
        """The sorted keys that only member ``i`` joins (but ``y = x``), and their ``(s, b)``."""
        return self._only(i)[:2]

    def _only(
        self, i: int
    ) -> tuple[np.ndarray, tuple[float, float], np.ndarray, np.ndarray, np.ndarray]:
        if i not in self._exclusive:
            bank = self._bank
            keys = bank._keys(self._relation, self.members[i])
            for j, member in enumerate(self.members):
                if j != i and keys.size:
                    keys = _absent(keys, bank._keys(self._relation, member))
            row, column = np.divmod(keys, bank.num_nodes)
            keep = column != bank._heads[self._relation][row]  # not y = x
            keys, row, column = keys[keep], row[keep], column[keep]
            fact = _bit_test(self._facts_bits(), column * (64 * self._width) + row) != 0
            counts = (float(np.count_nonzero(fact)), float(keys.size))
            self._exclusive[i] = (keys, counts, row, column, fact)
        return self._exclusive[i]

    def ceiling_without(
        self, pattern: Pattern, i: int, single: dict[Pattern, tuple[float, float]]
    ) -> float:
        r"""A bound on :math:`D` of the union of ``pattern`` and the members but member ``i``.

        ``single[pattern]`` is the pattern's :math:`(s_\beta, b_\beta)`. Of what the pattern
        adds, the pairs outside the union are known (:meth:`added`); inside it, it can add at
        most the facts that only member ``i`` joins and no more than its own facts outside the
        union leave, and a fact raises :math:`D < 1` most when it comes without other pairs.
        """
        outside = self._added_counts(pattern)
        only = self._only(i)[1]
        inside = min(only[0], single[pattern][0] - outside[0])
        return _dice(
            self.counts[0] - only[0] + outside[0] + inside,
            self.counts[1] - only[1] + outside[1] + inside,
            self._facts,
        )

    def added_without(self, pattern: Pattern, i: int) -> tuple[float, float]:
        """``(d_1, d)`` that ``pattern`` adds to the union of the members but member ``i``."""
        outside = self._added_counts(pattern)
        only, _, row, column, fact = self._only(i)
        if only.size == 0:
            return outside
        if (self._relation, pattern) in self._bank._linear:  # the pattern's keys are cached
            both = _contains(self._bank._keys(self._relation, pattern), only)
        else:  # the keys of only that the pattern's bit rows join
            at, bits = self._bank._bits(self._relation, pattern)
            both = _bits_at(at, bits, row, column, self._bank.num_nodes) != 0
        return (
            outside[0] + float(np.count_nonzero(both & fact)),
            outside[1] + float(np.count_nonzero(both)),
        )


def _best_disjunct(
    single: dict[Pattern, tuple[float, float]],
    members: list[Pattern],
    union: tuple[float, float],
    added: Callable[[Pattern], tuple[float, float]],
    facts: float,
    *,
    admit: bool,
    ceiling: Callable[[Pattern], float] | None = None,
    floor: float = 0.0,
) -> tuple[float, Pattern | None]:
    r"""The pattern of ``single`` not in ``members`` whose union with a union agrees best.

    ``union`` is ``(s, b)`` of the union; ``added(pattern)`` is ``(d_1, d)``, the facts and
    pairs the pattern adds to it; ``facts`` is :math:`n_r`. With ``admit``, only a pattern that
    passes the admission test (module docstring, "Heads with several bodies"). Returns ``(D,
    pattern)``, or ``(D of union, None)`` when none raises :math:`D`. A pattern of
    :math:`(s_\beta, b_\beta)` adds :math:`d_1 \le s_\beta` facts and at least :math:`d_1`
    pairs, and the union holds at least its :math:`b_\beta` pairs, so :math:`D \le 2 (s +
    s_\beta) / (\max(b + s_\beta, b_\beta) + n_r)`; the patterns are tried in decreasing bound
    until it cannot beat the best so far.

    ``floor``: only a pattern of :math:`D` above it is wanted (the exchange pass replaces a
    member only by one that beats the union with it), so the search starts from the larger of
    it and the union's :math:`D`: it returns ``(max(D of union, floor), None)`` when no pattern
    is above both, and otherwise the same pattern and :math:`D` as without it. The patterns are
    tried in the same order, and the one returned is the first of largest :math:`D` in that
    order however high the best so far starts (a pattern of that :math:`D` is above every
    smaller best, so no bound skips it), so a floor only skips the patterns that could not be
    returned with a larger :math:`D` than it (tested against ``floor = 0``).
    """
    support, body = union
    value = _dice(support, body, facts)
    best: tuple[float, Pattern | None] = (max(value, floor), None)
    bounds = sorted(
        (
            (-2 * (support + s) / (max(body + s, b) + facts), k, pattern)
            for k, (pattern, (s, b)) in enumerate(single.items())
            if pattern not in members
        ),
    )
    for negative, _, pattern in bounds:
        if -negative <= best[0]:
            break
        if ceiling is not None and ceiling(pattern) <= best[0]:
            continue  # cannot beat the best so far
        added_true, added_pairs = added(pattern)
        joint = _dice(support + added_true, body + added_pairs, facts)
        if joint > best[0] and (
            not admit or _disjunct_p_value(added_true, added_pairs, value) < ALPHA
        ):
            best = (joint, pattern)
    return best


def _member_instead(
    local: LocalStructure,
    bank: PatternBank,
    relation: int,
    candidates: dict[Pattern, int],
    pick: Pattern,
) -> Pattern | None:
    r"""The member of the rule set that replaces the first pick, or None.

    Module docstring, "Heads with several bodies". With :math:`B_r` the rule set
    (:func:`rule_set`) with the target's admissible candidates (:func:`_members`)
    and :math:`\pi_1` = ``pick`` no member of :math:`B_r`, :math:`m` is the first of largest
    :math:`D_m` of the members among the target's ``candidates``.

    * The swap: when :math:`B_r` has two members or more and :math:`\pi_1` is none of them,
      :math:`m` replaces :math:`\pi_1` when :math:`B_r` agrees significantly better than
      :math:`B_r` with :math:`m` replaced by :math:`\pi_1` (:func:`significantly_better` on the
      unions).
    * The mirror: when :math:`\pi_1` is :math:`r^{-1}`, :math:`m` (of the members without an
      :math:`r` step) replaces it with no test.
    * The copy: when :math:`\pi_1` is a member and a copy of the target's fact
      (:func:`_instead_of_copy`).
    """
    own = rule_set(bank, relation, local.max_length)
    if pick in own:  # a member keeps its place, unless it is a copy of the target's fact
        return _instead_of_copy(local, bank, relation, candidates, pick, own)
    members = _members(local, bank, relation, candidates, pick)
    mirror = pick == ((relation, False, -1),)
    if not mirror and (len(members) < 2 or pick in members):
        return None
    joined = [
        m
        for m in members
        if m in candidates and not (mirror and any(step[0] == relation for step in m))
    ]
    if not joined:
        return None
    member = _best(bank, relation, joined)
    if mirror:  # a path through r is the last resort (module docstring, "the mirror")
        return member
    swapped = [pick if m == member else m for m in members]
    return member if _union_significantly_better(bank, relation, members, swapped) else None


def _confident_member(
    local: LocalStructure,
    bank: PatternBank,
    relation: int,
    candidates: dict[Pattern, int],
    pick: Pattern,
) -> Pattern | None:
    r"""The member the target has that implies it significantly more surely than the pick, or None.

    Module docstring, "Heads with several bodies", the most confident member: with ``pick``
    :math:`\pi_1` a member of :math:`B_r` (with the target's admissible candidates) of confidence
    :math:`c_1 = s_{\pi_1} / b_{\pi_1}`, the members among the target's ``candidates`` without an
    :math:`r` step and no copy (:func:`_copy`) whose :math:`s_m` facts of :math:`b_m` pairs reject
    :math:`c_m \le c_1` in the one-sided binomial test, :math:`P(\mathrm{Bin}(b_m, c_1) \ge s_m) <
    \alpha`; of these, the first of largest :math:`c_m`. None where there is none, or ``pick`` is
    no member or has an :math:`r` step (the mirror).
    """
    if any(step[0] == relation for step in pick):
        return None  # the mirror r^-1 that B_r holds: the symmetry is the reason
    own = rule_set(bank, relation, local.max_length)
    members = own if pick in own else _members(local, bank, relation, candidates, pick)
    if pick not in members:
        return None
    support, body = bank.counts(relation, [pick])
    if body <= 0:
        return None
    confidence = support / body
    best: tuple[float, Pattern] | None = None
    for m in members:
        if m == pick or m not in candidates or any(step[0] == relation for step in m):
            continue
        s, b = bank.counts(relation, [m])
        if b <= 0 or s / b <= confidence or (best is not None and s / b <= best[0]):
            continue
        if float(binom.sf(s - 1, b, confidence)) >= ALPHA:
            continue
        if _copy(bank, relation, m, own, local.max_length):
            continue
        best = (s / b, m)
    return None if best is None else best[1]


def _instead_of_copy(
    local: LocalStructure,
    bank: PatternBank,
    relation: int,
    candidates: dict[Pattern, int],
    pick: Pattern,
    own: tuple[Pattern, ...],
) -> Pattern | None:
    r"""The member that replaces a copy of the target's fact, or None.

    Module docstring, "Heads with several bodies", the copy: when ``pick`` (a member of
    :math:`B_r` = ``own``) is a copy (:func:`_copy`), the first of largest :math:`D_m` of the
    members (:math:`B_r` with the target's admissible candidates) among the target's
    ``candidates`` that have no step of :math:`r` or of the copy's relation, with no test; None
    where there is none or ``pick`` is no copy. The rule set of the copy's relation is built only
    when such a member exists.
    """
    if not _best_inverse(bank, relation, pick, own):  # the cheap half of _copy first
        return None
    named = (relation, pick[0][0])  # the target's fact under either name
    members = own + _admissible_candidates(bank, relation, own, candidates, local.max_length)
    joined = [m for m in members if m in candidates and not any(step[0] in named for step in m)]
    if not joined or not _copy(bank, relation, pick, own, local.max_length):
        return None
    return _best(bank, relation, joined)


def _copy(
    bank: PatternBank,
    relation: int,
    pick: Pattern,
    members: tuple[Pattern, ...],
    max_length: int,
) -> bool:
    r"""Whether ``pick`` reads the target's own fact under a second relation's name.

    Module docstring, "Heads with several bodies", the copy: ``pick`` is :math:`s^{-1}`, one
    step of a relation :math:`s \ne r` read backwards, the first of largest :math:`D` of
    :math:`B_r` (``members``), and :math:`r^{-1}` is the first of largest :math:`D` of
    :math:`B_s`: each relation, read backwards, is the other's best body.
    """
    if not _best_inverse(bank, relation, pick, members):
        return False
    theirs = rule_set(bank, pick[0][0], max_length)
    return bool(theirs) and _best_inverse(bank, pick[0][0], ((relation, False, -1),), theirs)


def _best_inverse(
    bank: PatternBank, relation: int, pick: Pattern, members: tuple[Pattern, ...]
) -> bool:
    """Whether ``pick`` is one step of another relation read backwards, the best of ``members``."""
    return (
        len(pick) == 1
        and not pick[0][1]
        and pick[0][0] != relation
        and _best(bank, relation, members) == pick
    )


def _best(bank: PatternBank, relation: int, members: Sequence[Pattern]) -> Pattern:
    """The first member of largest agreement :math:`D` with ``relation``."""
    return max(members, key=lambda m: bank.agreement(relation, [m]))


def _members(
    local: LocalStructure,
    bank: PatternBank,
    relation: int,
    candidates: dict[Pattern, int],
    pick: Pattern,
) -> tuple[Pattern, ...]:
    """The rule set, and the target's admissible ``candidates`` where ``pick`` is no member.

    Module docstring, "Heads with several bodies": :func:`rule_set` with
    :func:`_admissible_candidates` appended.
    """
    members = rule_set(bank, relation, local.max_length)
    if pick in members:
        return members
    return members + _admissible_candidates(bank, relation, members, candidates, local.max_length)


def _admissible_candidates(
    bank: PatternBank,
    relation: int,
    members: tuple[Pattern, ...],
    candidates: dict[Pattern, int],
    max_length: int,
) -> tuple[Pattern, ...]:
    r"""The target's plain candidate patterns that the rule set's admission test admits.

    Module docstring, "Heads with several bodies": with :math:`s, b` the counts of the union of
    :math:`B_r` (``members``, fixed) and :math:`d_1, d` the facts and pairs a candidate adds,
    it is admissible when :math:`P(\mathrm{Bin}(d, D_B / 2) \ge d_1) < \alpha` and
    :math:`D_{B \cup \{\beta'\}} > D_B`. The union's counts and what each pattern adds are
    kept per relation on the bank, so the targets of a relation share them (the union's bit rows,
    :class:`_Union`, are built for a target only when one of its candidates is new, and not
    kept); a candidate that joins fewer facts than the test can ever admit is not counted.
    """
    if not members:
        return ()
    key = (relation, min(max_length, POOL_LENGTH))
    if key not in bank._set_counts:
        bank._set_counts[key] = bank.union_counts(relation, list(members))
    known = bank._set_added.setdefault(key, {})
    union: _Union | None = None
    facts = bank.num_facts(relation)
    s, b = bank._set_counts[key]
    dice = _dice(s, b, facts)
    # the p-value of d_1 = d facts is (D_B / 2)^d (D_B <= 1): fewer facts are never admitted;
    # at D_B = 0 one fact is enough
    least = math.log(ALPHA) / math.log(dice / 2) if dice > 0 else 1.0
    admitted = []
    for pattern in candidates:
        if pattern in members or any(anchor >= 0 for _, _, anchor in pattern):
            continue
        if bank.counts(relation, [pattern])[0] < least:  # d_1 <= s of the pattern alone
            continue
        if pattern not in known:
            if union is None:
                union = _Union(bank, relation, list(members))
            known[pattern] = union.added_to_fixed(pattern)
        d1, d = known[pattern]
        if _disjunct_p_value(d1, d, dice) < ALPHA and _dice(s + d1, b + d, facts) > dice:
            admitted.append(pattern)
    return tuple(admitted)


def _folded_member(
    local: LocalStructure,
    bank: PatternBank,
    relation: int,
    candidates: dict[Pattern, int],
    pick: Pattern,
) -> Pattern | None:
    r"""The shorter member of the rule set that the pick unfolds, or None (*folding*).

    Module docstring, "Heads with several bodies". With :math:`B_r` the rule set
    (:func:`rule_set`) and :math:`\pi_1` = ``pick`` a member, the members
    :math:`m` among the target's ``candidates`` shorter than :math:`\pi_1` are tried shortest
    first, ties by larger :math:`D_m`; the first that :math:`\pi_1` unfolds (:func:`_unfolds`)
    is returned.
    """
    members = rule_set(bank, relation, local.max_length)
    if len(members) < 2 or pick not in members:
        return None
    options = (m for m in members if m in candidates)
    return _shortest_folding(bank, relation, pick, options, local.max_length)


def _folded_conjuncts(
    bank: PatternBank,
    relation: int,
    candidates: dict[Pattern, int],
    chosen: Sequence[Pattern],
    max_length: int,
) -> list[tuple[int, Pattern]]:
    r"""The conjuncts that read a derivation of a fact the target's graph holds (folding).

    Module docstring, "Folding the conjuncts". For each chosen pattern :math:`\pi_k` after the
    first, the plain ``candidates`` shorter than it, outside ``chosen`` and without a step of
    ``relation``, are tried shortest first, ties by larger :math:`D_m`; the first that
    :math:`\pi_k` unfolds (:func:`_unfolds`) replaces it.

    Returns:
        ``(k, m)`` for each conjunct :math:`\pi_k` (``k >= 1``) that :math:`m` replaces.
    """
    plain = [
        m
        for m in candidates
        if all(anchor < 0 for _, _, anchor in m) and all(step != relation for step, _, _ in m)
    ]
    folded: list[tuple[int, Pattern]] = []
    taken = set(chosen)
    for k, longer in enumerate(chosen[1:], start=1):
        options = (m for m in plain if m not in taken)
        m = _shortest_folding(bank, relation, longer, options, max_length)
        if m is not None:
            folded.append((k, m))
            taken.add(m)
    return folded


def _shortest_folding(
    bank: PatternBank, relation: int, longer: Pattern, options: Iterable[Pattern], max_length: int
) -> Pattern | None:
    """The first of ``options`` shorter than ``longer`` that it unfolds (:func:`_unfolds`).

    Tried shortest first, ties by larger :math:`D_m` with ``relation``: both folds' order.
    """
    shorter = sorted(
        (m for m in options if len(m) < len(longer)),
        key=lambda m: (len(m), -bank.agreement(relation, [m])),
    )
    return next((m for m in shorter if _unfolds(bank, longer, m, max_length)), None)


def _unfolds(bank: PatternBank, longer: Pattern, shorter: Pattern, max_length: int) -> bool:
    r"""Whether ``longer`` is ``shorter`` with one step replaced by a member of that step's set.

    For a step :math:`k` of ``shorter`` (a plain step of relation :math:`s`), ``longer`` must
    equal ``shorter`` before :math:`k` and after it, and its steps in between, read from the
    step's start to its end, must be a member of :math:`B_s` (:func:`rule_set` at
    ``max_length``) read along :math:`s` (reversed, every step turned, for a step that reads
    :math:`s` backwards). Only the step relations whose prefix and suffix match get their set
    computed.
    """
    extra = len(longer) - len(shorter)
    if extra < 1:
        return False
    for k, (step, forward, anchor) in enumerate(shorter):
        if anchor >= 0 or longer[:k] != shorter[:k] or longer[k + extra + 1 :] != shorter[k + 1 :]:
            continue
        body = longer[k : k + extra + 1]
        along = body if forward else tuple((r, not f, a) for r, f, a in reversed(body))
        if along in rule_set(bank, step, max_length):
            return True
    return False
