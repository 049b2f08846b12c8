r"""Relation-path patterns and their counts over the training graph: :class:`PatternBank`.

The pattern search (:mod:`kg.explain.patterns`) asks of every candidate path whether its
**pattern** is a rule body over the whole graph; this module defines the pattern and counts it.

**Pattern.** A candidate path :math:`h = v_0, v_1, \dots, v_L = t` has the pattern
:math:`\pi = ((r_1, d_1, a_1), \dots, (r_L, d_L, a_L))`: :math:`d_i = +1` (``forward``) when its
:math:`i`-th triple is :math:`(v_{i-1}, r_i, v_i)` and :math:`-1` when it is
:math:`(v_i, r_i, v_{i-1})`; :math:`a_i` is the entity :math:`v_i` when that node is a constant
of the pattern (an *anchor*, such as the language in ``speaks(X, english)``) and :math:`-1`
otherwise. With :math:`A_s` the training graph's 0/1 adjacency of relation :math:`s`
(:math:`A_s^{+1} = A_s`, :math:`A_s^{-1} = A_s^\top`) and :math:`E_a` the diagonal 0/1 matrix
that keeps column :math:`a` only (:math:`E_{-1} = I`),

.. math::
    R_\pi[x, y] = \mathbb{1}\big[(A_{r_1}^{d_1} E_{a_1} \cdots A_{r_L}^{d_L} E_{a_L})[x, y] > 0
    \big]\; \mathbb{1}[x \ne y].

A conjunction of patterns (a body of several paths between :math:`h` and :math:`t`, such as
``borders(X, Y), speaks(X, L), speaks(Y, L)``) joins :math:`R_{\pi_1} \odot R_{\pi_2} \odot
\cdots`.

**Counts.** Over a seeded draw :math:`X_r` of at most ``max_heads`` heads that have an :math:`r`
fact (AMIE's partial-completeness assumption: only their :math:`r` facts are taken as known),
with :math:`T_r[x, y] = \mathbb{1}[r(x, y) \in \mathcal{G}]`,

.. math::
    s_\pi = \sum_{x \in X_r} \sum_y R_\pi[x, y]\, T_r[x, y], \qquad
    b_\pi = \sum_{x \in X_r} \sum_y R_\pi[x, y], \qquad
    n_r = \sum_{x \in X_r} \sum_{y \ne x} T_r[x, y],

the support, the body size and the number of :math:`r` facts (:meth:`PatternBank.counts`).

**Score**: the Dice agreement of the pattern's pairs with the :math:`r` facts,

.. math::
    D_\pi = \frac{2\, s_\pi}{b_\pi + n_r}

(:meth:`PatternBank.agreement`; 0 when :math:`s_\pi = 0`). A rule body joins nearly every pair
:math:`r` holds on and little else, so :math:`D_\pi \approx 1` up to the rule's exceptions and
the facts held out of training; a correlated shortcut joins pairs :math:`r` does not hold on
(:math:`b_\pi > s_\pi`) or misses some that it does (:math:`s_\pi < n_r`), and a rare pattern
such as an anchored one holds on few of the :math:`r` facts (:math:`s_\pi \ll n_r`). Measured
and removed (issue #18, ``benchmarks/bench_explain_worlds.py``, RESULTS.md): AMIE's PCA
confidence :math:`(s + 1) / (b + 2)`, the Wilson lower bound of :math:`s / b`, and the Dice
agreement with the explained model's facts (:math:`T_r` replaced by
:math:`\mathbb{1}[p(x, r, y) \ge 1/2]`, or by the model's top :math:`|T_r[x]|` tails) did not
recover the rule bodies better on every tuning world.

Cost: a pattern's reach is ``max_heads`` sparse rows pushed through :math:`L` sparse products;
counts are cached per ``(relation, patterns)``, so targets of one relation share them, and the walks
of patterns and their prefixes in a bounded cache (:class:`PatternBank`). The matrices are 0/1, so
each sum of an elementwise product is the number of entries the factors share: the counts intersect
the walks' sorted linear keys :math:`x N + y` and count those of :math:`T_r` and of the pairs
:math:`y = x` among them, the same integers as the sums without building a product matrix; an
anchored step computes column :math:`a` of its product alone, the rows whose walks hold an entity
with a step into :math:`a`. On 100 FB15k-237 targets (one thread) the two halved the mean
explanation time (1.17 s to 0.59 s), the explanations unchanged. A rule set is built once per
relation, at its first target: the paths of 20 facts (:meth:`PatternBank.between`, at most 0.2 s on
FB15k-237), the counts of a pool of up to about two thousand patterns and the greedy search, its
admissible candidates tried in decreasing order of a bound on the union's :math:`D` until none can
win; the search keeps its union (:class:`_Union`): the pairs each candidate adds to it (bit
positions, the facts apart, narrowed by each member appended with one look-up each in the union's
bit rows), and the pairs only one member joins, so the exchange pass counts a candidate against one
member's pairs, and skips it where a bound on :math:`D` cannot beat the best so far or the union
with that member (a member is replaced only by a pattern that beats it). On a small, dense graph
the pool is most patterns there are (Nations: about 700,000 per relation, each pair of countries
joined by some 100,000): the paths are enumerated as integer keys (:meth:`_between_keys`, the
patterns' order) and the search runs over one bit array of the whole pool
(:mod:`kg.explain.patterns._dense`), 0.7-0.8 s per relation where it took 60-100 s (sessions
35-36).

Around FB15k-237's hubs a walk of two or three steps from a thousand heads joins most pairs, and a
sparse product costs as much as the pairs it joins. So a pattern counted alone (a rule set's pool,
a target's candidates for the first pick) is walked as **bit rows** (:meth:`PatternBank._bits`):
one row of :math:`\lceil |X_r| / 64 \rceil` words per entity reached, bit :math:`i` set when
:math:`x_i` reaches it. A step ORs, into each entity, the rows of the entities with a step into it,
:math:`|X_r| / 64` words per triple of the step's relation however many pairs the walk joins (or,
for a walk of few entities such as one through an anchor, only the steps out of those); :math:`b`
and :math:`s` are the set bits, less the pairs :math:`y = x`, and the set bits at the facts. The
walks of the prefixes are shared in a bounded cache. Where a search needs the pairs that a
conjunction and one more pattern both join, it intersects the conjunction's keys once per round and
looks each up in the candidate's bit rows (:meth:`PatternBank._extended_counts`) unless the
candidate's keys are cached, or, where the candidate's rows hold fewer words than the conjunction
has pairs, lays those pairs out once as bit rows and ANDs the candidate's rows with them; the rule
set's union takes a candidate's added pairs from its bit rows less the union's the first time. The
closed-world :math:`\hat b_0` counts the set bits of the rows of :math:`Y` without an :math:`r`
fact, and :func:`_pick` counts it for the tied options in decreasing :math:`S` only while
:math:`S \ge D^{\mathrm{cw}}` can still beat the largest so far. Exact bounds skip work:
:func:`pattern_search`'s addition and exchange passes skip a candidate where
:math:`2 m / (m + n_r)`, :math:`m` the smaller support of the chosen patterns and the candidate,
cannot beat the agreement so far (:math:`s \le m`, :math:`b \ge s`); and the test of
:func:`significantly_better` counts the two sides' intersection only where its statistic, which
does not depend on it, is positive and neither the largest variance (no shared pair) passes it nor
the smallest (as many shared as the smaller side holds) fails it. Each count is the same integer as
before and each bound is monotone in exact integers, so every explanation is the same (tested
against the plain computations and brute force). On the 100 FB15k-237 targets (session 22, one
thread, four alternated A/B pairs, load 0.6-1.7) the mean explanation time went from 0.62-0.67 s to
0.34-0.37 s and the slowest from 4.4-5.0 s to 1.7-2.0 s, 94-95 to all 100 within 2 s (a fifth,
separate run: 0.65 to 0.39 s, 94 to 99 within 2 s, the slowest 2.06 s), no explanation changed, nor
any on six synthetic worlds; the rule sets of the 39 relations of those targets took 6 s instead of
28 s (load 2-3). Of the 1.7-2.0 s left at the three slowest targets, about 1 s is the evaluator's
scoring of the local graph (:mod:`kg.explain.evaluator`), which the pattern strategy runs for the
reported fidelities, and at a relation's first target up to 1.2 s the rule set's greedy search (the
set of 8 members). Session 23 (three alternated A/B pairs, one thread, load 1.9-2.1): the kept
union's bit positions, the floor of the exchange pass, the conjunction's pairs as bit rows, the
closed-world counts skipped in :func:`_pick` and the bit steps that leave out the steps from
outside the walk took the mean from 0.38-0.39 s to 0.31-0.38 s and the slowest from 1.91-1.99 s to
1.46-1.75 s (all 100 within 2 s in each run), no explanation, rule set or synthetic-world
explanation changed; relation 96's rule set took 0.6 s instead of 1.2 s. What is left at the
slowest targets is mostly the evaluator's second.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from torch import Tensor

from graphdata.checks import check_int
from graphdata.errors import GraphDataError
from kg.explain.local import LocalStructure
from kg.explain.patterns._bits import (
    _bit_step,
    _bit_step_from,
    _bits_at,
    _contains,
    _dice,
    _equal_pairs,
    _intersect,
    _keep_columns,
    _linear,
    _one_hot,
    _popcount,
    _sorted_unique,
)

#: A relation-path pattern: ``((relation, forward, anchor), ...)``, one step from h to t;
#: ``anchor`` is the entity the step must end on (a constant of the pattern), or -1 for any.
Pattern = tuple[tuple[int, bool, int], ...]
#: A fact on a constant, ``(relation s, forward, constant c)``: :math:`s(u, c)` when ``forward``,
#: else :math:`s(c, u)`; a condition on the entity :math:`u` at one node of a pattern.
Atom = tuple[int, bool, int]
#: A distinct-value condition ``(s, forward, at_head)`` (:mod:`~kg.explain.patterns.conditions`,
#: "Distinct values"): the pair's end (the head, or the tail) has an :math:`s` fact, read forward
#: or backward from it, whose other end is not the pair's other end.
Apart = tuple[int, bool, bool]
#: Longest pattern in a rule set's pool (:meth:`PatternBank.between` enumerates the paths between
#: a fact's two ends to here; :mod:`~kg.explain.patterns.rule_sets`).
POOL_LENGTH = 3
#: Most stored entries of the walk matrices a :class:`PatternBank` keeps (about 130 MB of
#: float32 values and int32 column indices, and as much again for their int64 linear keys).
CACHE_NONZEROS = 1 << 24
#: Most words of the bit rows of walks a :class:`PatternBank` keeps (64 MB of uint64).
CACHE_WORDS = 1 << 23


def path_pattern(local: LocalStructure, path: int, anchor: int | None = None) -> Pattern:
    r"""The pattern :math:`\pi` of candidate path ``path`` of ``local`` (module docstring).

    Args:
        local: The local structure.
        path: Index into ``local.paths``.
        anchor: Which intermediate node (1 .. L - 1, in path order) is a constant of the
            pattern. Default ``None``: none.

    Returns:
        ``((relation id, forward, anchor entity or -1), ...)`` from ``h`` to ``t``.

    Raises:
        GraphDataError: For an ``anchor`` that is not an intermediate node of the path.
    """
    edges, nodes = local.paths[path], local.path_nodes[path]
    if anchor is not None and not 1 <= anchor < len(edges):
        raise GraphDataError(
            f"anchor: expected an intermediate node 1 .. {len(edges) - 1} of path {path} "
            f"(length {len(edges)}), got {anchor!r}; pass None for a pattern without constants"
        )
    heads = local.edge_index[0]
    steps = []
    for i, e in enumerate(edges):
        fixed = int(local.nodes[nodes[i + 1]]) if anchor == i + 1 else -1
        steps.append((int(local.edge_type[e]), int(heads[e]) == nodes[i], fixed))
    return tuple(steps)


@dataclass(frozen=True)
class _Rest:
    """Walks of a pattern's suffix from the entities its prefix reaches (sorted ``starts``).

    As sorted linear keys ``i * N + y`` for the walk from ``starts[i]`` to ``y``.
    """

    starts: np.ndarray
    keys: np.ndarray


class PatternBank:
    r"""Counts :math:`s_\pi, b_\pi, n_r` of relation-path patterns over a graph (module docstring).

    Counts are cached per ``(relation, patterns)``, and the walk matrices of patterns and of
    their prefixes (:math:`A_{r_1}^{d_1} E_{a_1} \cdots` from the rows :math:`X_r`, the pairs
    :math:`y = x` still in) per ``(relation, pattern)`` in a least-recently-used cache of at
    most :data:`CACHE_NONZEROS` stored entries: a search scores every conjunction of the chosen
    patterns with each candidate, so it would otherwise recompute the chosen patterns' walks,
    and patterns that share a prefix its walk, for every candidate (87 % of an explanation's
    time on FB15k-237). Patterns counted alone are walked as bit rows (:meth:`_bits`, module
    docstring, "Cost"), kept in their own least-recently-used cache of at most
    :data:`CACHE_WORDS` words. The pairs :math:`y = x` are left out of :math:`b` by subtraction. The
    closed-world counts (``closed_world=True``) walk from the rows :math:`Y`, shared by every
    relation. The rule sets of the relations (:func:`~kg.explain.patterns.rule_sets.rule_set`)
    are cached on the bank per relation; their pools enumerate paths (:meth:`between`) over an
    index of every entity's triples, built on first use.

    Args:
        edge_index: ``[2, E]`` heads and tails of the training triples (global ids).
        edge_type: ``[E]`` their relations.
        num_nodes: The number of entities.
        num_relations: The number of relations.
        max_heads: Most heads of :math:`X_r` used per relation. Default 1000.
        seed: Seeds the draw of the heads. Default 0.
    """

    def __init__(
        self,
        edge_index: Tensor,
        edge_type: Tensor,
        num_nodes: int,
        num_relations: int,
        *,
        max_heads: int = 1000,
        seed: int = 0,
    ) -> None:
        if isinstance(max_heads, bool) or not isinstance(max_heads, int) or max_heads < 1:
            raise GraphDataError(
                f"max_heads: expected a positive int (heads sampled per relation), got "
                f"{max_heads!r}; pass e.g. 1000"
            )
        heads = edge_index[0].cpu().numpy()
        tails = edge_index[1].cpu().numpy()
        types = edge_type.cpu().numpy()
        self.num_nodes = num_nodes
        self._seed = seed
        self._triples = (heads, types, tails)
        self._incidence: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._rule_sets: dict[tuple[int, int], tuple[Pattern, ...]] = {}
        # (relation, L) -> (s, b) of the rule set's union, and per pattern the (d_1, d) it adds
        # (the targets' own candidates; the union itself is not kept: its bit rows are large)
        self._set_counts: dict[tuple[int, int], tuple[float, float]] = {}
        self._set_added: dict[tuple[int, int], dict[Pattern, tuple[float, float]]] = {}
        self._adjacency: list[sp.csr_matrix] = []
        self._transpose: list[sp.csr_matrix] = []
        shape = (num_nodes, num_nodes)
        for r in range(num_relations):
            pick = types == r
            ones = np.ones(int(pick.sum()), dtype=np.float32)
            a = sp.csr_matrix((ones, (heads[pick], tails[pick])), shape=shape)
            a.data[:] = 1.0  # duplicates count once
            self._adjacency.append(a)
            self._transpose.append(a.T.tocsr())
        rng = np.random.default_rng(seed)
        self._heads: list[np.ndarray] = []
        for r in range(num_relations):
            x = np.unique(heads[types == r])
            if x.size > max_heads:
                x = np.sort(rng.choice(x, size=max_heads, replace=False))
            self._heads.append(x)
        # Y: the entities in some triple (no pattern reaches anything from the others), or a
        # draw of max_heads of them, drawn after the X_r so that those do not depend on it.
        active = np.unique(np.concatenate([heads, tails]))
        self._num_active = active.size
        if active.size > max_heads:
            active = np.sort(rng.choice(active, size=max_heads, replace=False))
        self._everyone = active
        self._truth: dict[int, sp.csr_matrix] = {}
        self._truth_keys: dict[int, np.ndarray] = {}
        # sorted linear keys of the cached walks, dropped with them: (walk, keys)
        self._linear: dict[tuple[int, Pattern], tuple[sp.csr_matrix, np.ndarray]] = {}
        self._counts: dict[tuple[int, bool, tuple[Pattern, ...]], tuple[float, float]] = {}
        self._matrices: OrderedDict[tuple[int, Pattern], sp.csr_matrix] = OrderedDict()
        self._stored = 0  # entries held by _matrices
        self._bit_rows: OrderedDict[tuple[int, Pattern], tuple[np.ndarray, np.ndarray]] = (
            OrderedDict()
        )
        self._bit_words = 0  # words held by _bit_rows
        self._reached: dict[tuple[int, bool], np.ndarray] = {}  # rows of A^d with an entry
        empty, none = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
        # keys, their relation, rows, columns, facts, pairs y != x and, built on use, the bit
        # rows of the facts and of the other pairs (_extended_counts)
        self._split: tuple[
            np.ndarray, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None
        ] = (empty, -1, empty, empty, none, none, None)
        self._num_facts: dict[int, float] = {}
        self._functions: dict[tuple[int, bool], bool] = {}  # _functional
        self._stacked_steps: sp.csr_matrix | None = None  # _dense._steps_into

    def _rows(self, heads: int) -> np.ndarray:
        """The heads :math:`X_r` for ``heads = r``; the entities :math:`Y` for -1."""
        return self._everyone if heads < 0 else self._heads[heads]

    def _facts(self, relation: int) -> sp.csr_matrix:
        """``[X, N]`` 0/1 rows of :math:`T_r` over :math:`X_r`, without :math:`y = x`."""
        if relation not in self._truth:
            x = self._heads[relation]
            rows = self._adjacency[relation][x].tocoo()
            keep = x[rows.row] != rows.col  # y != x, as in R_pi
            ones = np.ones(int(keep.sum()), dtype=np.float32)
            self._truth[relation] = sp.csr_matrix(
                (ones, (rows.row[keep], rows.col[keep])), shape=(x.size, self.num_nodes)
            )
        return self._truth[relation]

    def _facts_keys(self, relation: int) -> np.ndarray:
        """Sorted linear keys :func:`_linear` of :meth:`_facts`."""
        if relation not in self._truth_keys:
            self._truth_keys[relation] = _linear(self._facts(relation))
        return self._truth_keys[relation]

    def _loops_keys(self, heads: int) -> np.ndarray:
        """Sorted linear keys :func:`_linear` of the pairs y = x: ``i * N + x_i`` of row ``i``."""
        x = self._rows(heads)
        return np.arange(x.size, dtype=np.int64) * self.num_nodes + x

    def _keys(self, heads: int, pattern: Pattern) -> np.ndarray:
        """Sorted linear keys :func:`_linear` of :meth:`_walk`, cached with the walk."""
        key = (heads, pattern)
        walk = self._walk(heads, pattern)
        cached = self._linear.get(key)
        if cached is not None and cached[0] is walk:
            return cached[1]
        keys = _linear(walk)
        if key in self._matrices:
            self._linear[key] = (walk, keys)
        return keys

    def _walk(self, heads: int, prefix: Pattern) -> sp.csr_matrix:
        """``[X, N]`` 0/1 walks of ``prefix`` from the rows :meth:`_rows` (``y = x`` included).

        ``heads`` is the relation :math:`r` for the rows :math:`X_r`, or -1 for the rows
        :math:`Y` (shared by every relation).
        """
        key = (heads, prefix)
        if key in self._matrices:
            self._matrices.move_to_end(key)
            return self._matrices[key]
        if not prefix:
            return _one_hot(self._rows(heads), self.num_nodes)
        walk = self._walk(heads, prefix[:-1])  # [X, N] walks of the prefix but its last step
        return self._keep(key, self._advance(walk, prefix[-1]))

    def _advance(self, walk: sp.csr_matrix, step: tuple[int, bool, int]) -> sp.csr_matrix:
        """``[X, N]`` 0/1 walks of ``walk`` one ``step`` further (``y = x`` included)."""
        rel, forward, anchor = step
        if anchor >= 0:
            # E_a: column a of walk @ A^d alone. Every stored entry is positive, so (x, a) is
            # non-zero iff row x of the walk holds some u with A^d[u, a] != 0, the entries of
            # row a of the other orientation; no full product, no column slice of it.
            other = self._transpose[rel] if forward else self._adjacency[rel]
            into = np.zeros(self.num_nodes, dtype=bool)  # [N] the u with A^d[u, a] != 0
            into[other.indices[other.indptr[anchor] : other.indptr[anchor + 1]]] = True
            rows = np.repeat(np.arange(walk.shape[0]), np.diff(walk.indptr))  # [nnz]
            hit = np.unique(rows[into[walk.indices]])  # [hits] rows whose walks reach a
            ones = np.ones(hit.size, dtype=np.float32)
            reach = sp.csr_matrix(
                (ones, (hit, np.full(hit.size, anchor))), shape=(walk.shape[0], self.num_nodes)
            )
        else:
            reach = walk @ (self._adjacency[rel] if forward else self._transpose[rel])
        reach.data[:] = 1.0
        return reach

    def holders(self, atom: Atom) -> np.ndarray:
        r"""Sorted entities :math:`u` with the fact ``atom`` (:math:`s(u, c)` or :math:`s(c, u)`).

        Args:
            atom: ``(s, forward, c)``: ``forward`` for :math:`s(u, c)`, else :math:`s(c, u)`.

        Raises:
            GraphDataError: For an atom that is not ``(relation id, bool, entity id)`` of this
                graph.
        """
        return self._holders(_check_atom(atom, len(self._adjacency), self.num_nodes))

    def _holders(self, atom: Atom) -> np.ndarray:
        """:meth:`holders` of a checked ``atom``."""
        rel, forward, constant = atom
        other = self._transpose[rel] if forward else self._adjacency[rel]
        return np.sort(other.indices[other.indptr[constant] : other.indptr[constant + 1]])

    def _conditioned_keys(
        self,
        relation: int,
        pattern: Pattern,
        node: int,
        holders: np.ndarray,
        prefix: sp.csc_matrix | None = None,
    ) -> np.ndarray:
        r"""Sorted linear keys of :math:`R_\pi` with node ``node`` kept to ``holders``.

        The walk :math:`A_{r_1}^{d_1} E_{a_1} \cdots A_{r_i}^{d_i} E_{a_i} C\, A_{r_{i+1}}^{d_{i+1}}
        \cdots` from the rows :math:`X_r`, :math:`C` the diagonal 0/1 matrix of ``holders``
        (:mod:`~kg.explain.patterns.conditions`, "Conditions"); ``y = x`` included, as
        :meth:`_keys`. Computed as the prefix's walk restricted to the holders' columns times the
        walks of the rest of the pattern from the holders alone, so its cost follows the holders,
        not the walk. ``prefix``: the prefix's walk :meth:`_walk` of ``pattern[:node]`` as CSC, if
        at hand.
        """
        if prefix is None:
            prefix = self._walk(relation, pattern[:node]).tocsc()
        part = prefix[:, holders].tocsr()  # [X, H] the walks that reach a holder at the node
        if node == len(pattern):  # the tail: the pairs (x, holder), holders sorted
            part.sort_indices()
            rows = np.repeat(np.arange(part.shape[0], dtype=np.int64), np.diff(part.indptr))
            return rows * self.num_nodes + holders[part.indices]
        walk = part @ self._walks_from(holders, pattern[node:])  # the rest from each holder
        walk.data[:] = 1.0
        return _linear(walk)

    def _middles(
        self, relation: int, pattern: Pattern, node: int, keys: np.ndarray, most: float
    ) -> sp.csr_matrix | None:
        r"""``[K, N]`` 0/1: the entities at ``node`` of the walks of ``pattern`` per pair.

        Row :math:`j` holds the :math:`h` with a walk of ``pattern[:node]`` from :math:`x` to
        :math:`h` and of the rest from :math:`h` to :math:`y`, for the pair :math:`(x, y)` of
        ``keys[j]`` (sorted linear keys of pairs the pattern joins); a condition at ``node``
        keeps the pair iff it holds for one of them. The candidates are expanded from the
        shorter side: the ends of :math:`x`'s prefix walk (:meth:`_walk`), each looked up in the
        walks of the rest from every entity the prefix reaches; or, where the rest is shorter,
        the starts of the rest's walks into :math:`y` (the rest walked backwards from the
        tails), each looked up in :math:`x`'s prefix walk. At the tail, :math:`h = y`.

        Returns:
            The matrix, or None where the candidates would number more than ``most``.
        """
        rows, tails = keys // self.num_nodes, keys % self.num_nodes
        if node == len(pattern):  # the tail: the pair's own (every key is a pair it joins)
            return _one_hot(tails, self.num_nodes)
        if len(pattern) - node < node:  # the rest is shorter: from y backwards
            ends, at = np.unique(tails, return_inverse=True)
            back = _one_hot(ends, self.num_nodes)
            for rel, forward, anchor in reversed(pattern[node:]):
                if anchor >= 0:  # the step ends on the constant
                    keep = np.zeros(self.num_nodes, dtype=bool)
                    keep[anchor] = True
                    back = _keep_columns(back, keep)
                back = back @ (self._transpose[rel] if forward else self._adjacency[rel])
                back.data[:] = 1.0
            sides, pair_rows = back, at
            lookup = self._keys(relation, pattern[:node])  # x * N + h of the prefix's walks
        else:
            walk = self._walk(relation, pattern[:node])
            sides, pair_rows = walk, rows
            lookup = None
        counts = np.diff(sides.indptr)[pair_rows]
        if counts.sum() > most:
            return None
        pair = np.repeat(np.arange(keys.size), counts)  # [E] each pair, once per candidate
        first = np.repeat(sides.indptr[pair_rows] - np.cumsum(counts) + counts, counts)
        middle = sides.indices[first + np.arange(pair.size)]  # [E] the candidates h
        if lookup is not None:
            hit = _contains(lookup, rows[pair] * self.num_nodes + middle)
        else:
            rest = self._rest(relation, pattern, node)
            hit = _contains(
                rest.keys, np.searchsorted(rest.starts, middle) * self.num_nodes + tails[pair]
            )
        ones = np.ones(int(hit.sum()), dtype=np.float32)
        return sp.csr_matrix((ones, (pair[hit], middle[hit])), shape=(keys.size, self.num_nodes))

    def _rest(self, relation: int, pattern: Pattern, node: int) -> _Rest:
        """The walks of ``pattern[node:]`` from every entity that ``pattern[:node]`` reaches."""
        starts = np.unique(self._walk(relation, pattern[:node]).indices)
        return _Rest(starts, _linear(self._walks_from(starts, pattern[node:])))

    def _walks_from(self, starts: np.ndarray, steps: Pattern) -> sp.csr_matrix:
        """``[S, N]`` 0/1 walks of ``steps`` from each entity of ``starts`` (``y = x`` included)."""
        walk = _one_hot(starts, self.num_nodes)
        for step in steps:
            walk = self._advance(walk, step)
        return walk

    def condition_counts(
        self, relation: int, patterns: Sequence[Pattern], which: int, node: int, atom: Atom
    ) -> tuple[float, float]:
        r"""``(s, b)`` of the conjunction ``patterns`` with ``atom`` conditioning one node.

        The pairs of :math:`R_{\pi_1} \odot \cdots`, with :math:`\pi_{\mathrm{which}}`'s
        node ``node`` (1 .. L, the tail last) kept to the entities with the fact ``atom``
        (:meth:`holders`; :mod:`~kg.explain.patterns.conditions`, "Conditions"), counted as
        :meth:`counts` does.

        Args:
            relation: The head relation :math:`r`.
            patterns: The conjunction.
            which: Index into ``patterns`` of the conditioned pattern.
            node: Its node, 1 .. ``len(patterns[which])``.
            atom: ``(s, forward, c)``.
        """
        pattern = patterns[check_int("which", which, 0, len(patterns) - 1)]
        if not 1 <= node <= len(pattern):
            raise GraphDataError(
                f"node: expected a node 1 .. {len(pattern)} of pattern {which}, got {node!r}; "
                "the head (node 0) takes no condition"
            )
        keys = self._conditioned_keys(relation, pattern, node, self.holders(atom))
        others = [p for k, p in enumerate(patterns) if k != which]
        if others:
            keys = _intersect(keys, self._joint_keys(relation, others))
        return self._key_counts(relation, keys)

    def _functional(self, relation: int, forward: bool) -> bool:
        """Whether no entity has two ``relation`` facts read from it (``forward``: as head)."""
        key = (relation, forward)
        if key not in self._functions:
            matrix = self._adjacency[relation] if forward else self._transpose[relation]
            self._functions[key] = bool(np.diff(matrix.indptr).max(initial=0) <= 1)
        return self._functions[key]

    def _apart_removed(self, relation: int, keys: np.ndarray, apart: Apart) -> np.ndarray:
        r"""Sorted keys of the pairs of ``keys`` that the distinct-value condition ``apart`` drops.

        For ``apart = (s, forward, at_head)`` and :math:`A = A_s` (``forward``) or :math:`A_s^\top`,
        the end :math:`e` of a pair (:math:`x` if ``at_head``, else :math:`y`) and its other end
        :math:`o`, the pair is removed iff :math:`A[e, o] = 1` and :math:`\sum_z A[e, z] = 1`: the
        end's one :math:`s` value is the other end (:mod:`~kg.explain.patterns.conditions`,
        "Distinct values"). An end with no :math:`s` value keeps its pairs. The candidates are
        the pairs :math:`(e, A\text{'s one column of row } e)` of the entities of degree one, so the
        cost follows the entities, not ``keys``.

        Args:
            relation: The head relation :math:`r` (``keys`` over its rows :math:`X_r`).
            keys: Sorted linear keys of pairs.
            apart: ``(s, forward, at_head)``.
        """
        rel, forward, at_head = apart
        matrix = self._adjacency[rel] if forward else self._transpose[rel]
        ends = np.flatnonzero(np.diff(matrix.indptr) == 1)
        values = matrix.indices[matrix.indptr[ends]]
        x, y = (ends, values) if at_head else (values, ends)
        rows = self._rows(relation)
        at = np.searchsorted(rows, x)
        at[at == rows.size] = 0
        held = rows[at] == x  # pairs whose x is a row of X_r
        candidates = np.unique(at[held].astype(np.int64) * self.num_nodes + y[held])
        return candidates[_contains(keys, candidates)]

    def _keep(self, key: tuple[int, Pattern], matrix: sp.csr_matrix) -> sp.csr_matrix:
        """Cache ``matrix`` under ``key``, dropping the least recently used beyond the budget."""
        if matrix.nnz <= CACHE_NONZEROS:
            self._matrices[key] = matrix
            self._stored += matrix.nnz
            while self._stored > CACHE_NONZEROS:
                old, dropped = self._matrices.popitem(last=False)
                self._stored -= dropped.nnz
                self._linear.pop(old, None)
        return matrix

    def counts(
        self, relation: int, patterns: Sequence[Pattern], *, closed_world: bool = False
    ) -> tuple[float, float]:
        r"""``(s, b)`` of the conjunction of ``patterns`` for head relation ``relation``.

        :math:`s = \sum_{x \in X_r} \sum_y (R_{\pi_1} \odot \cdots)[x, y]\, T_r[x, y]` and
        :math:`b = \sum_{x \in X_r} \sum_y (R_{\pi_1} \odot \cdots)[x, y]` (module docstring);
        with ``closed_world``, :math:`(s, b + \hat b_0)`, the body pairs of the entities without
        an :math:`r` fact added (:mod:`~kg.explain.patterns.search`, "Ties").
        """
        if not patterns:
            raise GraphDataError(
                "patterns: expected at least one pattern, got none; pass [path_pattern(...)]"
            )
        key = (relation, closed_world, tuple(sorted(patterns)))
        if key in self._counts:
            return self._counts[key]
        if closed_world:
            support, body = self.counts(relation, key[2])
            body += self._body_without_facts(relation, key[2])
        else:
            # The product of the walks is R_pi1 . R_pi2 ... with the pairs y = x still in; T_r
            # has none, so they count only in b, and are subtracted there (no filtered copy of
            # every walk).
            # Every matrix here is 0/1, so each sum of a product is the number of entries the
            # factors share: the conjunction is the intersection of the walks' sorted linear
            # keys x * N + y, counted against those of T_r and of the pairs y = x without
            # building a product matrix (scipy builds and checks a matrix for every product).
            joint = self._keys(relation, key[2][0])
            for pattern in key[2][1:]:
                joint = _intersect(joint, self._keys(relation, pattern))
            support, body = self._key_counts(relation, joint)
        self._counts[key] = (support, body)
        return support, body

    def _joint_keys(self, relation: int, patterns: Sequence[Pattern]) -> np.ndarray:
        """Sorted linear keys of the pairs that every pattern of ``patterns`` joins."""
        ordered = sorted(patterns)
        joint = self._keys(relation, ordered[0])
        for pattern in ordered[1:]:
            joint = _intersect(joint, self._keys(relation, pattern))
        return joint

    def _extended_counts(
        self, relation: int, patterns: Sequence[Pattern], keys: np.ndarray, pattern: Pattern
    ) -> tuple[float, float]:
        r""":meth:`counts` of ``[*patterns, pattern]``, given ``keys``, those of ``patterns``.

        A search that tries every candidate with the same chosen patterns intersects their
        pairs once, not once per candidate, and looks them up in the candidate's bit rows
        (:meth:`_bits`) unless its keys are cached: the same integers, cached with them. Which
        of ``keys`` are facts of :math:`T_r` and which pairs :math:`y = x` is found once for
        every candidate too, so that a candidate's counts are those of its hits among them.
        Where the candidate's bit rows hold fewer words than ``keys`` has pairs (on FB15k-237
        a median of about 1,000 words against 11,000 pairs), the pairs are laid out once as
        bit rows of the facts and of the other pairs (:math:`y \ne x`), and the counts are the
        set bits of the candidate's rows ANDed with theirs: the same integers.
        """
        key = (relation, False, tuple(sorted([*patterns, pattern])))
        if key not in self._counts:
            if (relation, pattern) in self._linear:  # the pattern's keys are cached
                joint = _intersect(keys, self._keys(relation, pattern))
                self._counts[key] = self._key_counts(relation, joint)
            else:  # the pairs of keys that the pattern's bit rows join
                at, bits = self._bits(relation, pattern)
                if self._split[0] is not keys or self._split[1] != relation:  # the same keys
                    row, column = np.divmod(keys, self.num_nodes)
                    fact = _contains(self._facts_keys(relation), keys)
                    pair = column != self._heads[relation][row]  # not y = x
                    self._split = (keys, relation, row, column, fact, pair, None)
                _, _, row, column, fact, pair, dense = self._split
                if bits.size < keys.size:  # fewer words of the pattern than pairs of keys
                    if dense is None:  # [2, N, W] bit rows of the facts and other pairs y != x
                        dense = np.zeros((2, self.num_nodes, bits.shape[1]), dtype=np.uint64)
                        shifts = np.left_shift(np.uint64(1), (row % 64).astype(np.uint64))
                        np.bitwise_or.at(dense, (1 - fact, column, row // 64), shifts * pair)
                        self._split = (*self._split[:-1], dense)
                    support = _popcount(bits & dense[0, at])
                    self._counts[key] = (
                        float(support),
                        float(support + _popcount(bits & dense[1, at])),
                    )
                else:
                    hit = _bits_at(at, bits, row, column, self.num_nodes) != 0
                    self._counts[key] = (
                        float(np.count_nonzero(hit & fact)),
                        float(np.count_nonzero(hit & pair)),
                    )
        return self._counts[key]

    def _pool_counts(
        self, relation: int, pool: Sequence[Pattern]
    ) -> dict[Pattern, tuple[float, float]]:
        r""":meth:`counts` of each pattern of ``pool`` alone, from its bit rows (:meth:`_bits`).

        :math:`b` is the number of set bits less those of the pairs :math:`y = x`, :math:`s`
        the number of set bits at the facts of :math:`T_r`: looked up in the pattern's rows, or,
        where the rows hold fewer words than there are pairs and facts to look up, the set bits
        of the rows ANDed with those of the pairs and of the facts. The patterns are walked in
        sorted order, so a prefix is walked once while its patterns follow it. The same integers
        as :meth:`counts` (tested), cached with them.
        """
        rows = self._heads[relation]
        index = np.arange(rows.size)
        facts = self._facts(relation).tocoo()
        row = np.concatenate([index, facts.row])  # [X + n_r] the pairs y = x, then the facts
        column = np.concatenate([rows, facts.col])
        dense: np.ndarray | None = None  # [2, N, W] bit rows of the pairs y = x and the facts
        out: dict[Pattern, tuple[float, float]] = {}
        for pattern in sorted(pool):
            key = (relation, False, (pattern,))
            if key not in self._counts:
                at, bits = self._bits(relation, pattern)
                if bits.size < row.size:  # fewer words than pairs to look up: AND the rows
                    if dense is None:
                        dense = self._pair_bits(relation)
                    loops, support = _popcount(bits & dense[0, at]), _popcount(bits & dense[1, at])
                else:  # the pairs y = x and the facts looked up in one pass (one map of at)
                    hit = _bits_at(at, bits, row, column, self.num_nodes)
                    loops, support = int(hit[: rows.size].sum()), int(hit[rows.size :].sum())
                self._counts[key] = (float(support), float(_popcount(bits) - loops))
            out[pattern] = self._counts[key]
        return out

    def _row_words(self, relation: int) -> int:
        r""":math:`W = \lceil |X_r| / 64 \rceil`: the words of a bit row (:meth:`_bits`)."""
        return -(-self._heads[relation].size // 64)

    def _pair_bits(self, relation: int) -> np.ndarray:
        """``[2, N, W]`` bit rows (:meth:`_bits`) of the pairs ``y = x`` (0) and the facts (1).

        Row :math:`y` of the first has bit :math:`i` set iff :math:`y = x_i` (the walk of no
        step), of the second iff :math:`r(x_i, y)` is a fact of :math:`T_r`.
        """
        rows = self._heads[relation]
        facts = self._facts(relation).tocoo()
        row = np.concatenate([np.arange(rows.size), facts.row])  # the pairs y = x, then the facts
        column = np.concatenate([rows, facts.col])
        which = (np.arange(row.size) >= rows.size).astype(np.intp)
        out = np.zeros((2, self.num_nodes, self._row_words(relation)), dtype=np.uint64)
        shifts = np.left_shift(np.uint64(1), (row % 64).astype(np.uint64))
        np.bitwise_or.at(out, (which, column, row // 64), shifts)
        return out

    def _bits(self, relation: int, pattern: Pattern) -> tuple[np.ndarray, np.ndarray]:
        r"""The walk of ``pattern`` from :math:`X_r` as bit rows: ``(at, bits)``.

        ``relation`` is :math:`r` for the rows :math:`X_r`, or -1 for the rows :math:`Y`.

        ``at`` holds ``[V]`` sorted entities, ``bits`` their ``[V, W]`` rows of :math:`W =
        \lceil |X_r| / 64 \rceil` words: bit :math:`i` of the row of :math:`y` is set iff the
        pattern joins :math:`x_i` to :math:`y` (the pairs :math:`y = x` still in; an entity of
        ``at`` may have a row of 0). A step along :math:`A^d` ORs, for each :math:`v`, the rows
        of the :math:`u` with :math:`A^d[u, v] \ne 0`, :math:`W` words per triple of the
        step's relation however many pairs the walk joins, where a sparse product's cost
        grows with the pairs (most pairs around FB15k-237's hubs); an anchored step ORs the
        rows into :math:`a` alone. Cached per ``(relation, pattern)`` in a least-recently-used
        cache of at most :data:`CACHE_WORDS` words.
        """
        key = (relation, pattern)
        if key in self._bit_rows:
            self._bit_rows.move_to_end(key)
            return self._bit_rows[key]
        if not pattern:
            rows = self._rows(relation)  # sorted
            index = np.arange(rows.size)
            bits = np.zeros((rows.size, -(-rows.size // 64)), dtype=np.uint64)  # [X, W]
            bits[index, index // 64] = np.left_shift(np.uint64(1), (index % 64).astype(np.uint64))
            return rows, bits
        at, bits = self._bits(relation, pattern[:-1])
        rel, forward, anchor = pattern[-1]
        # the u with A^d[u, v] != 0 for each v: row v of the other orientation
        into = self._transpose[rel] if forward else self._adjacency[rel]
        if anchor >= 0:
            sources = into.indices[into.indptr[anchor] : into.indptr[anchor + 1]]
            where = np.minimum(np.searchsorted(at, sources), max(at.size - 1, 0))
            where = where[at[where] == sources] if at.size else where[:0]  # [k] rows of u
            row = np.bitwise_or.reduce(bits[where], axis=0, initial=np.uint64(0))  # [W]
            value = (np.array([anchor]), row.reshape(1, -1))
        else:
            out_of = self._adjacency[rel] if forward else self._transpose[rel]  # row u: its v
            degree = out_of.indptr[at + 1] - out_of.indptr[at]  # [V] steps from each u
            if 4 * int(degree.sum()) < into.nnz:  # few steps from the walk: take those alone
                value = _bit_step_from(at, bits, out_of, degree)
            else:  # every v of the relation
                if (rel, forward) not in self._reached:
                    self._reached[rel, forward] = np.flatnonzero(np.diff(into.indptr))
                reached = self._reached[rel, forward]
                value = _bit_step(at, bits, into, reached, self.num_nodes)
        if value[1].size <= CACHE_WORDS:
            self._bit_rows[key] = value
            self._bit_words += value[1].size
            while self._bit_words > CACHE_WORDS:
                self._bit_words -= self._bit_rows.popitem(last=False)[1][1].size
        return value

    def _key_counts(self, relation: int, keys: np.ndarray) -> tuple[float, float]:
        """``(s, b)`` of the pairs with sorted linear keys ``keys`` over the rows :math:`X_r`."""
        if keys.size == 0:
            return 0.0, 0.0
        support = _intersect(keys, self._facts_keys(relation)).size
        body = keys.size - _intersect(keys, self._loops_keys(relation)).size
        return float(support), float(body)

    def _union_keys(self, relation: int, patterns: Sequence[Pattern]) -> np.ndarray:
        """Sorted linear keys of the pairs that some pattern of ``patterns`` joins."""
        keys = self._keys(relation, patterns[0])
        for pattern in patterns[1:]:
            keys = np.union1d(keys, self._keys(relation, pattern))
        return keys

    def union_counts(self, relation: int, patterns: Sequence[Pattern]) -> tuple[float, float]:
        r"""``(s, b)`` of the union (disjunction) of ``patterns`` for head relation ``relation``.

        :math:`s_B = \sum_{x \in X_r} \sum_y R_B[x, y]\, T_r[x, y]` and :math:`b_B = \sum_{x \in
        X_r} \sum_y R_B[x, y]` with :math:`R_B = \max_j R_{\beta_j}`
        (:mod:`~kg.explain.patterns.rule_sets`, "Heads with several bodies").
        """
        if not patterns:
            raise GraphDataError(
                "patterns: expected at least one pattern, got none; pass [path_pattern(...)]"
            )
        return self._key_counts(relation, self._union_keys(relation, patterns))

    def union_agreement(self, relation: int, patterns: Sequence[Pattern]) -> float:
        r"""Dice :math:`D_B = 2 s_B / (b_B + n_r)` of the union of ``patterns`` (0 when s = 0)."""
        return _dice(*self.union_counts(relation, patterns), self.num_facts(relation))

    def between(self, head: int, relation: int, tail: int, max_length: int) -> set[Pattern]:
        r"""The plain patterns of the simple paths from ``head`` to ``tail`` in the whole graph.

        Paths of :math:`1 .. \min(L, 3)` steps (:data:`POOL_LENGTH`), each step forwards or
        backwards, no node twice, the triple ``(head, relation, tail)`` itself left out and no
        triple of ``relation`` on a path of two or more steps: the candidate patterns without
        anchors of :func:`pattern_search` on an unpruned local structure of that triple
        (``through_relation=False``), enumerated from both ends without building one.

        Args:
            head: The head entity.
            relation: The relation :math:`r` whose fact this is.
            tail: The tail entity (``!= head``).
            max_length: The longest path :math:`L`.

        Returns:
            The set of patterns ``((relation, forward, -1), ...)``.
        """
        return set(
            _patterns_of(self._between_keys(head, relation, tail, max_length), self.num_steps)
        )

    @property
    def num_steps(self) -> int:
        """The number of plain steps, :math:`2 |R|` (each relation forwards and backwards)."""
        return 2 * len(self._adjacency)

    @property
    def _key_space(self) -> int:
        """Every key of :func:`_pattern_keys` is below this: :math:`(2 |R| + 1)^3`."""
        return (self.num_steps + 1) ** POOL_LENGTH

    def _between_keys(self, head: int, relation: int, tail: int, max_length: int) -> np.ndarray:
        """:meth:`between` as the sorted unique int64 keys of :func:`_pattern_keys`.

        The keys sort as the patterns do, so a pool drawn from several facts is ordered without
        building a tuple per pattern (a fact of Nations has about 100,000 patterns).
        """
        ptr, node, code = self._around()
        width = self.num_steps  # codes 2 s (forward) and 2 s + 1 (backward)
        length = min(max_length, POOL_LENGTH)
        found = []
        ends_x, steps_x = node[ptr[head] : ptr[head + 1]], code[ptr[head] : ptr[head + 1]]
        ends_y, steps_y = node[ptr[tail] : ptr[tail + 1]], code[ptr[tail] : ptr[tail + 1]] ^ 1
        # steps_y: the step from each neighbour z of the tail into the tail (direction flipped)
        one = steps_x[(ends_x == tail) & (steps_x != 2 * relation)]  # not the fact itself
        found.append(_pattern_keys(width, one))
        if length >= 2:
            keep_x = (ends_x != tail) & (steps_x // 2 != relation)
            keep_y = (ends_y != head) & (steps_y // 2 != relation)
            ends_x, steps_x = ends_x[keep_x], steps_x[keep_x]
            ends_y, steps_y = ends_y[keep_y], steps_y[keep_y]
            left, right = _equal_pairs(ends_x, ends_y)
            found.append(_pattern_keys(width, steps_x[left], steps_y[right]))
        if length >= 3 and ends_x.size and ends_y.size:
            middle = np.unique(ends_x)  # z1, one step from the head
            counts = ptr[middle + 1] - ptr[middle]
            owner = np.repeat(middle, counts)  # [m] z1 of each step z1 -> z2
            at = np.repeat(ptr[middle] - np.cumsum(counts) + counts, counts) + np.arange(
                int(counts.sum())
            )
            far, step = node[at], code[at]  # [m] z2 and the step's code
            keep = (step // 2 != relation) & (far != head) & (far != tail) & (far != owner)
            keep &= np.isin(far, ends_y)
            owner, far, step = owner[keep], far[keep], step[keep]
            # (first step, middle step) per z2, then the last step of each z2
            left, right = _equal_pairs(owner, ends_x)
            firsts = _sorted_unique(
                far[left] * (width * width) + steps_x[right] * width + step[left]
            )
            far, two = np.divmod(firsts, width * width)  # [k] z2, first * width + middle step
            # each (first, middle) prefix's key and each last step's, added for every z2 they
            # share (hundreds of thousands of pairs on a dense graph: two gathers and a sum)
            prefixes = _pattern_keys(width, *np.divmod(two, width))
            lasts = _pattern_keys(width, steps_y) // (width + 1) ** (POOL_LENGTH - 1)
            left, right = _equal_pairs(far, ends_y)
            found.append(prefixes[left] + lasts[right])
        return _sorted_unique(np.concatenate(found), self._key_space)

    def _around(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every entity's incident triples, built once: ``(ptr, other end, code)``.

        Entity ``u``'s triples are entries ``ptr[u] .. ptr[u + 1]``; code ``2 s`` is the step
        from ``u`` along ``s(u, v)`` (forwards) and ``2 s + 1`` along ``s(v, u)`` (backwards).
        """
        if self._incidence is None:
            heads, types, tails = self._triples
            start = np.concatenate([heads, tails]).astype(np.int64)
            end = np.concatenate([tails, heads]).astype(np.int64)
            code = np.concatenate([2 * types, 2 * types + 1]).astype(np.int64)
            keep = start != end
            start, end, code = start[keep], end[keep], code[keep]
            order = np.lexsort((code, end, start))
            ptr = np.zeros(self.num_nodes + 1, dtype=np.int64)
            np.add.at(ptr, start + 1, 1)
            self._incidence = (np.cumsum(ptr), end[order], code[order])
        return self._incidence

    def _body_without_facts(self, relation: int, patterns: tuple[Pattern, ...]) -> float:
        r""":math:`\hat b_0` of the conjunction of ``patterns``.

        :mod:`~kg.explain.patterns.search`, "Ties".
        """
        facts_per_row = np.diff(self._adjacency[relation].indptr)  # [N] r facts of each entity
        without = facts_per_row[self._everyone] == 0  # [Y] the drawn entities without one
        if not without.any():
            return 0.0
        num_heads = int((facts_per_row > 0).sum())  # |H_r|
        # the conjunction's bit rows from Y (_bits), its pairs counted in the rows without:
        # the same integer as the sum of the product of the walks
        at, bits = self._bits(-1, patterns[0])
        if len(patterns) > 1:
            joint = np.zeros((self.num_nodes, bits.shape[1]), dtype=np.uint64)  # [N, W]
            joint[at] = bits
            for pattern in patterns[1:]:
                other = np.zeros_like(joint)
                where, words = self._bits(-1, pattern)
                other[where] = words
                joint &= other
            at, bits = np.arange(self.num_nodes), joint
        rows = np.flatnonzero(without)  # [k] the rows of Y without an r fact
        mask = np.zeros(bits.shape[1], dtype=np.uint64)  # [W] their bits
        shifts = np.left_shift(np.uint64(1), (rows % 64).astype(np.uint64))  # [k]
        np.bitwise_or.at(mask, rows // 64, shifts)
        loops = int(_bits_at(at, bits, rows, self._everyone[rows], self.num_nodes).sum())
        pairs = _popcount(bits & mask) - loops
        share = self._heads[relation].size / num_heads  # |X_r| / |H_r|
        scale = share * (self._num_active - num_heads) / int(without.sum())
        return scale * float(pairs)

    def num_facts(self, relation: int) -> float:
        r""":math:`n_r = \sum_{x \in X_r} \sum_{y \ne x} T_r[x, y]` (module docstring)."""
        if relation not in self._num_facts:
            self._num_facts[relation] = float(self._facts(relation).sum())
        return self._num_facts[relation]

    def agreement(
        self, relation: int, patterns: Sequence[Pattern], *, closed_world: bool = False
    ) -> float:
        r"""Dice :math:`D = 2 s / (b + n_r)` of the conjunction of ``patterns`` (0 when s = 0).

        With ``closed_world``, :math:`D^{\mathrm{cw}} = 2 s / (b + \hat b_0 + n_r)`
        (:mod:`~kg.explain.patterns.search`, "Ties").
        """
        support, body = self.counts(relation, patterns, closed_world=closed_world)
        return 2.0 * support / (body + self.num_facts(relation)) if support else 0.0


def _check_atom(atom: object, num_relations: int, num_nodes: int) -> Atom:
    """``atom`` as ``(relation, forward, constant)`` of a graph of these sizes, or an error."""
    parts = atom if isinstance(atom, tuple) and len(atom) == 3 else (None, None, None)
    rel, forward, constant = parts

    def index(value: object, size: int) -> bool:
        return (
            isinstance(value, (int, np.integer))
            and not isinstance(value, bool)
            and 0 <= int(value) < size
        )

    if not (isinstance(forward, bool) and index(rel, num_relations) and index(constant, num_nodes)):
        raise GraphDataError(
            f"atom: expected (relation id 0 .. {num_relations - 1}, forward bool, entity id "
            f"0 .. {num_nodes - 1}), got {atom!r}; pass e.g. (2, True, 10) for s_2(u, 10)"
        )
    return int(rel), forward, int(constant)  # type: ignore[arg-type]


def _pattern_keys(width: int, *steps: np.ndarray) -> np.ndarray:
    r"""int64 keys of plain patterns of ``len(steps)`` steps, sorted as the patterns are.

    ``steps[i]`` holds the :math:`i`-th step's code of each pattern, :math:`2 s` forwards and
    :math:`2 s + 1` backwards along relation :math:`s` (:meth:`PatternBank._around`). Step
    :math:`i` becomes the digit :math:`e_i + 1` in base ``width + 1`` with :math:`e = 2 s + 1`
    forwards and :math:`2 s` backwards (the order of ``(s, forward)``, False first), at the
    place of :math:`(w + 1)^{2 - i}`; a shorter pattern has the digit 0 where it has no step, so
    it sorts before its extensions, as a tuple before the longer tuples it begins.
    """
    base = width + 1
    key = np.zeros(steps[0].size if steps else 0, dtype=np.int64)
    for i, code in enumerate(steps):
        key += ((np.asarray(code, dtype=np.int64) ^ 1) + 1) * base ** (POOL_LENGTH - 1 - i)
    return key


def _pattern_digits(keys: np.ndarray, width: int) -> np.ndarray:
    """``[K, 3]`` the digits of :func:`_pattern_keys` (0 where a pattern has no step)."""
    base = width + 1
    return np.stack([keys // base**2, keys // base % base, keys % base], axis=1)


def _patterns_of(keys: np.ndarray, width: int) -> list[Pattern]:
    """The patterns of the keys of :func:`_pattern_keys`, in their order."""
    return [
        tuple(((int(d) - 1) // 2, (int(d) - 1) % 2 == 1, -1) for d in row if d)
        for row in _pattern_digits(keys, width)
    ]
