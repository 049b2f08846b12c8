r"""A rule set's greedy search over a pool held as one bit array (small, dense graphs).

:func:`~kg.explain.patterns.rule_sets.rule_set` grows the set :math:`B_r` over a pool
:math:`P_r` of patterns (:mod:`~kg.explain.patterns.rule_sets`, "Heads with several bodies"). On
a small, dense graph the pool is most patterns there are: on Nations (14 countries, 55 relations,
1,592 triples) every pair of countries is joined by about 100,000 patterns of up to three steps,
and a pool holds 670,000-760,000 of them. :class:`~kg.explain.patterns.rule_sets._Union` counts
each candidate on its own (a few numpy calls each, tens of microseconds), so one relation's set
took about a minute there (issue #18, session 34). Here the pairs that every pool pattern joins
are one ``[P, N W]`` uint64 array (bit :math:`i` of word :math:`y W + i / 64` set when the
pattern joins :math:`(x_i, y)`, :math:`x_i \in X_r`, the layout of
:meth:`~kg.explain.patterns.bank.PatternBank._bits`), built one step per distinct prefix for all
the patterns that share it, and each round of the search counts every candidate at once: what it
adds to the union is ``bits & ~union``, its facts the set bits that are also facts.

It is the same search: the same counts, the same Dice values in the same floating-point
operations, the same binomial p-values and the same order among ties (the first of largest
:math:`D` in decreasing order of the bound of :func:`~kg.explain.patterns.rule_sets._best_disjunct`,
then the pool's order), so it returns the same set (tested against it and against every union
counted from scratch). :func:`fits` chooses it where a row is short and the array small.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from scipy.stats import binom

from kg.explain.patterns._bits import _dice as _dice_of
from kg.explain.patterns._bits import _row_popcounts, _sorted_unique_inverse
from kg.explain.patterns.bank import _pattern_digits, _patterns_of
from kg.explain.patterns.significance import ALPHA, _weakest_member

if TYPE_CHECKING:
    from kg.explain.patterns.bank import Pattern, PatternBank

#: Most words of one pattern's row of the bit array (8 KiB) for the search of this module: it
#: reads every word of every candidate in each round, where
#: :class:`~kg.explain.patterns.rule_sets._Union` reads the pairs each candidate adds at a cost of
#: tens of microseconds a candidate. Measured per relation, the two searches over the same pools
#: (session 35, one thread): Nations (14 words a row) 0.7-1.1 s against 23-38 s, UMLS (135-405)
#: 1.8 s against 17.7 s for its 46 relations; the synthetic worlds (740-14,170) equal to within a
#: few milliseconds; FB15k-237 (14,505-232,080) 203 s against 4.4 s for its first 30 relations.
#: Both give the same set (tested), so the bound chooses the time, not the result.
DENSE_ROW_WORDS = 1 << 10
#: Most words of the whole bit array (256 MiB of uint64; a round of the search holds up to three
#: more arrays of that size while it counts).
DENSE_WORDS = 1 << 25


def fits(bank: PatternBank, relation: int, size: int) -> bool:
    """Whether a pool of ``size`` patterns is searched here.

    Where a pattern's row holds at most :data:`DENSE_ROW_WORDS` words and the pool's array at
    most :data:`DENSE_WORDS`.
    """
    row = bank.num_nodes * bank._row_words(relation)
    return row <= DENSE_ROW_WORDS and size * row <= DENSE_WORDS


def grow(bank: PatternBank, relation: int, keys: np.ndarray) -> tuple[Pattern, ...]:
    r""":func:`~kg.explain.patterns.rule_sets._grow_rule_set` over the pool of ``keys``.

    The rule set of :mod:`~kg.explain.patterns.rule_sets` ("Heads with several bodies"): the
    union's agreement :math:`D_B = 2 s_B / (b_B + n_r)`, a pattern admitted when
    :math:`P(\mathrm{Bin}(d, D_B / 2) \ge d_1) < \alpha` and :math:`D` rises, one exchange
    pass after each addition, then the backward elimination with the same test. ``keys`` are
    the pool's patterns as :func:`~kg.explain.patterns.bank._pattern_keys`, in the pool's order.
    Returns the members in the order they hold in the set.
    """
    if keys.size == 0:
        return ()
    loops_bits, facts_bits = bank._pair_bits(relation)
    bits, order = _pool_bits(bank, relation, keys)
    heads = bank._heads[relation].size
    if bank._row_words(relation) == 1 and heads <= 32:  # rows of one word, half of it unused
        bits = _packed(bits, heads)
        facts_bits, loops_bits = (
            _packed(each.reshape(1, -1).copy(), heads) for each in (facts_bits, loops_bits)
        )
    pool = _Pool(bits, facts_bits, loops_bits, bank.num_facts(relation), order)
    members = [pool.first()]
    while True:
        _, index = pool.best(members, members, admit=True)
        if index is None:
            break
        members.append(index)
        for i in range(len(members) - 1):  # one exchange pass over the earlier members
            current = _dice_of(*pool.counts(members), pool.facts)
            others = members[:i] + members[i + 1 :]
            value, other = pool.best(members, others, admit=False, floor=current)
            if other is not None and value > current:
                members[i] = other
    while len(members) > 1:  # backward elimination with the same test
        rests = [pool.counts(members[:i] + members[i + 1 :]) for i in range(len(members))]
        weakest = _weakest_member(pool.counts(members), rests, pool.facts)
        if weakest is None:
            break
        del members[weakest]
    return tuple(_patterns_of(keys[order[members]], bank.num_steps))


class _Pool:
    """What every round of the search reads.

    The pool's ``[P, K]`` bit array, row ``j`` the pattern at place ``order[j]`` of the pool
    (default: row ``j``), the ``[K]`` bits of the facts and of the pairs ``y = x``,
    :math:`n_r`, and each pattern's own counts :math:`(s, b)`. Ties go to the first in the
    pool's order, whatever the order of the rows.
    """

    def __init__(
        self,
        bits: np.ndarray,
        facts_bits: np.ndarray,
        loops_bits: np.ndarray,
        facts: float,
        order: np.ndarray | None = None,
    ) -> None:
        self.bits = bits
        self.order = np.arange(bits.shape[0]) if order is None else order
        self.facts_bits = facts_bits.ravel()
        self.loops_bits = loops_bits.ravel()
        self.facts = facts  # n_r
        self._words = np.empty_like(bits)  # one buffer for every masked copy of the array
        self.support = self._masked_counts(self.facts_bits)
        self.body = self._masked_counts(~self.loops_bits)

    def _masked_counts(self, mask: np.ndarray) -> np.ndarray:
        """``[P]`` float: the set bits of each row of the array that are set in ``mask [K]``."""
        return _counts(np.bitwise_and(self.bits, mask, out=self._words))

    def first(self) -> int:
        """The row of the first pattern of largest :math:`D` in the pool's order."""
        dice = _dice(self.support, self.body, self.facts)
        top = np.flatnonzero(dice == dice.max())
        return int(top[np.argmin(self.order[top])])

    def union(self, members: list[int]) -> np.ndarray:
        """``[K]`` the bits of the pairs some member joins."""
        return np.bitwise_or.reduce(self.bits[members], axis=0)

    def counts(self, members: list[int]) -> tuple[float, float]:
        """``(s, b)`` of the union of ``members`` (the pairs y = x not counted)."""
        return self._union_counts(self.union(members))

    def _union_counts(self, union: np.ndarray) -> tuple[float, float]:
        """``(s, b)`` of the ``[K]`` bits ``union``."""
        both = np.stack([union & self.facts_bits, union & ~self.loops_bits])
        support, body = _counts(both)
        return float(support), float(body)

    def best(
        self, members: list[int], base: list[int], *, admit: bool, floor: float = 0.0
    ) -> tuple[float, int | None]:
        """:func:`~kg.explain.patterns.rule_sets._best_disjunct`, every candidate counted at once.

        The candidates are the patterns outside ``members``, each joined to the union of the
        patterns ``base``; returns ``(D, index)`` or ``(max(D of that union, floor), None)``.
        """
        union = self.union(base)
        s, b = self._union_counts(union)
        value = _dice_of(s, b, self.facts)
        start = max(value, floor)
        free = ~(union | self.loops_bits)  # [K] the pairs a candidate can add
        added_true = self._masked_counts(free & self.facts_bits)
        added = self._masked_counts(free)
        joint = _dice(s + added_true, b + added, self.facts)
        take = joint > start
        take[members] = False
        if admit and take.any():
            where = np.flatnonzero(take)
            take[where] = _p_values(added_true[where], added[where], value) < ALPHA
        if not take.any():
            return start, None
        where = np.flatnonzero(take)
        top = joint[where].max()
        where = where[joint[where] == top]
        # the first in the order of the bound (then the pool): the search's order among ties
        support, body = self.support[where], self.body[where]
        negative = -2 * (s + support) / (np.maximum(b + support, body) + self.facts)
        return float(top), int(where[np.lexsort((self.order[where], negative))[0]])


def _packed(words: np.ndarray, used: int) -> np.ndarray:
    r"""``[P, \lceil K / f \rceil]``: ``[P, K]`` words of ``used`` low bits, :math:`f` to a word.

    :math:`f = \lfloor 64 / \text{used} \rfloor`; word :math:`k` moves to word
    :math:`\lfloor k / f \rfloor`, shifted by :math:`(k \bmod f)` ``used`` bits. The search
    only ANDs, ORs and counts bits of rows laid out alike, so packing every array it reads
    changes no count, and reads a fraction of the words (Nations: 14 countries of which at
    most 14 heads, 14 words a row become 4). ``words`` is overwritten.
    """
    fields = 64 // used
    shifts = (np.arange(words.shape[1], dtype=np.uint64) % np.uint64(fields)) * np.uint64(used)
    np.left_shift(words, shifts, out=words)  # in place: no second array of the pool's size
    return np.bitwise_or.reduceat(words, np.arange(0, words.shape[1], fields), axis=1)


def _p_values(added_true: np.ndarray, added: np.ndarray, dice: float) -> np.ndarray:
    """:func:`~kg.explain.patterns.significance._disjunct_p_value` of each candidate."""
    out = np.ones(added.size)
    some = added > 0
    out[some] = binom.sf(added_true[some] - 1, added[some], dice / 2)
    return out


def _dice(support: np.ndarray, body: np.ndarray, facts: float) -> np.ndarray:
    """:func:`~kg.explain.patterns._bits._dice` of each entry (the same float operations)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(support > 0, 2.0 * support / (body + facts), 0.0)


def _counts(words: np.ndarray) -> np.ndarray:
    """``[P]`` float: the set bits of each row of ``[P, K]`` words."""
    return _row_popcounts(words).astype(np.float64)


def _pool_bits(bank: PatternBank, relation: int, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""``([P, N W], [P])``: the pool patterns' walks from :math:`X_r` and their places.

    Row :math:`j` holds the bits of one pattern's walk, flat, and ``order[j]`` its place in
    the pool: the same bits as :meth:`~kg.explain.patterns.bank.PatternBank._bits`, level by
    level: the walks of the distinct prefixes of one step, then of two, then the patterns of
    three, each level one step on from the walks of its prefixes (:func:`_step`), so a prefix
    is walked once for all the patterns that share it. The rows hold the patterns of one step,
    then of two, then of three, each in the order of their walks: the last level (on Nations,
    90% of the pool) is walked into its rows of the array, not copied there.
    """
    nodes, width = bank.num_nodes, bank._row_words(relation)
    walks = bank._pair_bits(relation)[:1]  # the walk of no step: x_i itself (the pairs y = x)
    digits = _pattern_digits(keys, bank.num_steps)  # [P, 3]
    lengths = np.count_nonzero(digits, axis=1)
    parent = np.zeros(keys.size, dtype=np.int64)  # each pattern's walk so far, in walks
    out = np.zeros((keys.size, nodes, width), dtype=np.uint64)
    order = np.zeros(keys.size, dtype=np.int64)
    filled = 0  # rows of out written
    for level in range(1, 4):
        going = np.flatnonzero(lengths >= level)  # the patterns with a step at this level
        if going.size == 0:
            break
        # the distinct prefixes of `level` steps: (step, walk of the prefix before), in the order
        # of the step, so that the walks taking one step are a block of the next level
        code = digits[going, level - 1] * walks.shape[0] + parent[going]
        distinct, inverse = _sorted_unique_inverse(code)
        parents, codes = distinct % walks.shape[0], distinct // walks.shape[0] - 1
        done = going[lengths[going] == level]
        if done.size == going.size:  # the last level: one walk per pattern, into its rows
            _step(bank, walks, parents, codes, out=out[filled:])
            order[filled + inverse] = going
            break
        walks = _step(bank, walks, parents, codes)
        parent[going] = inverse
        out[filled : filled + done.size] = walks[parent[done]]
        order[filled : filled + done.size] = done
        filled += done.size
    return out.reshape(keys.size, nodes * width), order


def _step(
    bank: PatternBank,
    walks: np.ndarray,
    parents: np.ndarray,
    codes: np.ndarray,
    out: np.ndarray | None = None,
) -> np.ndarray:
    r"""``[Q, N, W]``: walk ``parents[q]`` of ``walks`` one step on along step ``codes[q]``.

    ``codes`` is sorted, so the walks taking one step :math:`e` are a block. The row of
    :math:`v` ORs the rows of the :math:`u` with a step :math:`u \to v` along :math:`e` (row
    :math:`e N + v` of :func:`_steps_into`): for the block, the rows of the step's :math:`u` are
    gathered at once and OR-reduced per :math:`v` (``bitwise_or.reduceat``), in chunks of at
    most :data:`_GATHER_WORDS` words. Written into ``out`` (zeros, ``[Q, N, W]``) where given.
    """
    nodes, width = walks.shape[1], walks.shape[2]
    into = _steps_into(bank)
    if out is None:
        out = np.zeros((parents.size, nodes, width), dtype=np.uint64)
    bounds = np.searchsorted(codes, np.arange(bank.num_steps + 1))
    for e in np.flatnonzero(np.diff(bounds)):
        ptr = into.indptr[e * nodes : (e + 1) * nodes + 1]
        u = into.indices[ptr[0] : ptr[-1]]  # the u of the step's triples, by v
        if u.size == 0:
            continue
        targets = np.flatnonzero(np.diff(ptr))  # the v with a step into them
        offsets = ptr[targets] - ptr[0]  # where each v's u begin in u
        chunk = max(1, _GATHER_WORDS // (u.size * width))
        for begin in range(bounds[e], bounds[e + 1], chunk):
            end = min(begin + chunk, bounds[e + 1])
            gathered = walks[parents[begin:end, None], u[None, :]]  # [c, m, W]
            out[begin:end, targets] = np.bitwise_or.reduceat(gathered, offsets, axis=1)
    return out


#: Most words :func:`_step` gathers at once (32 MiB of uint64).
_GATHER_WORDS = 1 << 22


def _steps_into(bank: PatternBank) -> sp.csr_matrix:
    r"""``[2 R N, N]`` CSR: row :math:`e N + v` holds the :math:`u` with a step :math:`u \to v`.

    :math:`e = 2 s + 1` is relation :math:`s` forwards (:math:`A_s^\top`, row :math:`v` its
    :math:`u` with :math:`s(u, v)`) and :math:`e = 2 s` backwards (:math:`A_s`).
    """
    if bank._stacked_steps is None:
        blocks = []
        for adjacency, transpose in zip(bank._adjacency, bank._transpose):
            blocks += [adjacency, transpose]
        bank._stacked_steps = sp.vstack(blocks, format="csr")
    return bank._stacked_steps
