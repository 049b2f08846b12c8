r"""Relation-path patterns mined from the training graph: which candidate path is a rule body.

A perturbation search scores each candidate path of a target :math:`(h, r, t)` by what it does to
the target's score *in this one local graph*; a correlated shortcut (a relation that links most
pairs the rule links) moves that score as much as the rule body does, and a shorter one wins the
parsimony tie-break (issue #18: one academic-world explanation picked ``knows`` over the shared
paper, F1 0). Whether a path is a *reason* is a property of its **pattern** over the whole
graph, the question rule miners ask (AMIE: Galárraga et al., "AMIE: Association Rule Mining under
Incomplete Evidence in Ontological Knowledge Bases", WWW 2013, doi:10.1145/2488388.2488425):
does :math:`r(x, y)` hold wherever the pattern joins :math:`x` to :math:`y`, and does the
pattern join the pairs where :math:`r` holds?

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

**Explanation** (:func:`pattern_search`). Below :math:`S(\Pi) = D_\Pi`, the agreement of a
conjunction :math:`\Pi` (pairs :math:`R_{\pi_1} \odot R_{\pi_2} \odot \cdots`). The candidate
patterns are every candidate path's pattern and, with ``anchors``, each of its patterns with one
intermediate node held constant. A path of length two or more that uses the target's relation
:math:`r` is no candidate unless ``recursive``: a body that routes through another :math:`r` fact,
:math:`r(x, z) \Leftarrow s(x, y) \land r(y, z)`, is taken only where nothing else explains the
target (the explainer asks for it when the local graph has no other path; the length-1 inverse
:math:`r^{-1}`, a symmetry, is always one). The first pattern :math:`\pi_1` is one of largest score
:math:`S` ("Ties" below). With the conjunction :math:`\Pi = (\pi_1, \dots, \pi_k)` so far, of counts
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

**Heads with several bodies** (a known limitation). For a head derived by two rules,
:math:`r \Leftarrow \beta_1 \lor \beta_2`, :math:`D_{\beta_1}` counts the facts of
:math:`\beta_2` as missed (:math:`s_{\beta_1}` is :math:`\beta_1`'s share of :math:`n_r`), and a
path through a third relation derived from the same facts joins the facts of both bodies at the
same precision, so it agrees better and is chosen. On the family world (issue #18, session 18)
``aunt`` :math:`\Leftarrow` ``sister, parent`` (57 % of the ``aunt`` facts, :math:`D = .66`) or
``spouse, brother, parent`` (39 %, :math:`D = .53`) loses to ``parent, cousin`` (71 %,
:math:`D = .75`), all three at precision :math:`s / b` of .78-.83; every body is among its
target's candidates. The counts do not tell which of two relations that derive each other is
the derived one: ``aunt`` and ``cousin`` derive each other (``cousin`` :math:`\Leftarrow`
``parent``:math:`^{-1}`, ``aunt`` at :math:`D = .78`), and so do the academic world's
``works_in_country`` and ``located_in`` (:math:`D = 1` both ways), where the rule body is the
path through ``located_in``. Measured on the tuning worlds and not kept, each lowering the F1
of at least one of them: the precision :math:`s / b`; Dice with the facts that another candidate
pattern joins taken as explained; :math:`D^{\mathrm{cw}}` as the score rather than the
tie-break ("Ties": family .30 -> .44 and academic .70 -> 1.00 at length 3, geography .83 -> .69
with :math:`\hat b_0`, unchanged only with every entity counted); dropping a candidate whose
cycle with the target agrees with one of its own relations as well as with :math:`r`; dropping a
candidate through a fact that another candidate derives.

Cost: a pattern's reach is ``max_heads`` sparse rows pushed through :math:`L` sparse products;
counts are cached per ``(relation, patterns)``, so targets of one relation share them, and the
walks of patterns and their prefixes in a bounded cache (:class:`PatternBank`). The matrices are
0/1, so each sum of an elementwise product is the number of entries the factors share: the
counts intersect the walks' sorted linear keys :math:`x N + y` and count those of :math:`T_r`
and of the pairs :math:`y = x` among them, the same integers as the sums without building a
product matrix; an anchored step computes column :math:`a` of its product alone, the rows whose
walks hold an entity with a step into :math:`a`. On 100 FB15k-237 targets (one thread) the two
halved the mean explanation time (1.17 s to 0.59 s), the explanations unchanged.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import torch
from scipy.stats import binom, norm
from torch import Tensor

from graphdata.errors import GraphDataError
from kg.explain.local import LocalStructure

__all__ = [
    "Pattern",
    "PatternBank",
    "PatternChoice",
    "path_pattern",
    "pattern_mask",
    "pattern_search",
    "significantly_better",
]

#: A relation-path pattern: ``((relation, forward, anchor), ...)``, one step from h to t;
#: ``anchor`` is the entity the step must end on (a constant of the pattern), or -1 for any.
Pattern = tuple[tuple[int, bool, int], ...]

#: Level of the one-sided binomial test that admits a further pattern (module docstring): the
#: conventional 5 %, not tuned.
ALPHA = 0.05
#: Most stored entries of the walk matrices a :class:`PatternBank` keeps (about 130 MB of
#: float32 values and int32 column indices, and as much again for their int64 linear keys).
CACHE_NONZEROS = 1 << 24


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


class PatternBank:
    r"""Counts :math:`s_\pi, b_\pi, n_r` of relation-path patterns over a graph (module docstring).

    Counts are cached per ``(relation, patterns)``, and the walk matrices of patterns and of
    their prefixes (:math:`A_{r_1}^{d_1} E_{a_1} \cdots` from the rows :math:`X_r`, the pairs
    :math:`y = x` still in) per ``(relation, pattern)`` in a least-recently-used cache of at
    most :data:`CACHE_NONZEROS` stored entries: a search scores every conjunction of the chosen
    patterns with each candidate, so it would otherwise recompute the chosen patterns' walks,
    and patterns that share a prefix its walk, for every candidate (87 % of an explanation's
    time on FB15k-237). The pairs :math:`y = x` are left out of :math:`b` by subtraction. The
    closed-world counts (``closed_world=True``) walk from the rows :math:`Y`, shared by every
    relation.

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
        self._self_pairs: dict[int, sp.csr_matrix] = {}
        self._matrices: OrderedDict[tuple[int, Pattern], sp.csr_matrix] = OrderedDict()
        self._stored = 0  # entries held by _matrices

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
        """Sorted linear keys :func:`_linear` of :meth:`_loops`: ``i * N + x_i`` of row ``i``."""
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

    def _loops(self, heads: int) -> sp.csr_matrix:
        """``[X, N]`` 0/1 with the entries ``(x, x)`` of the rows (the pairs y = x)."""
        if heads not in self._self_pairs:
            self._self_pairs[heads] = self._walk(heads, ())
        return self._self_pairs[heads]

    def _walk(self, heads: int, prefix: Pattern) -> sp.csr_matrix:
        """``[X, N]`` 0/1 walks of ``prefix`` from the rows :meth:`_rows` (``y = x`` included).

        ``heads`` is the relation :math:`r` for the rows :math:`X_r`, or -1 for the rows
        :math:`Y` (shared by every relation).
        """
        key = (heads, prefix)
        if key in self._matrices:
            self._matrices.move_to_end(key)
            return self._matrices[key]
        x = self._rows(heads)
        if not prefix:
            ones = np.ones(x.size, dtype=np.float32)
            return sp.csr_matrix((ones, (np.arange(x.size), x)), shape=(x.size, self.num_nodes))
        rel, forward, anchor = prefix[-1]
        walk = self._walk(heads, prefix[:-1])  # [X, N] walks of the prefix but its last step
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
        return self._keep(key, reach)

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

    def _joint(self, heads: int, patterns: tuple[Pattern, ...]) -> sp.csr_matrix:
        """``[X, N]`` 0/1 product of the walks of ``patterns`` (``y = x`` still in)."""
        joint = None
        for pattern in patterns:
            walk = self._walk(heads, pattern)
            joint = walk if joint is None else joint.multiply(walk).tocsr()
        assert joint is not None
        return joint

    def counts(
        self, relation: int, patterns: Sequence[Pattern], *, closed_world: bool = False
    ) -> tuple[float, float]:
        r"""``(s, b)`` of the conjunction of ``patterns`` for head relation ``relation``.

        :math:`s = \sum_{x \in X_r} \sum_y (R_{\pi_1} \odot \cdots)[x, y]\, T_r[x, y]` and
        :math:`b = \sum_{x \in X_r} \sum_y (R_{\pi_1} \odot \cdots)[x, y]` (module docstring);
        with ``closed_world``, :math:`(s, b + \hat b_0)`, the body pairs of the entities without
        an :math:`r` fact added (module docstring, "Ties").
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
            support = float(_intersect(joint, self._facts_keys(relation)).size)
            body = float(joint.size - _intersect(joint, self._loops_keys(relation)).size)
        self._counts[key] = (support, body)
        return support, body

    def _body_without_facts(self, relation: int, patterns: tuple[Pattern, ...]) -> float:
        r""":math:`\hat b_0` of the conjunction of ``patterns`` (module docstring, "Ties")."""
        facts_per_row = np.diff(self._adjacency[relation].indptr)  # [N] r facts of each entity
        without = facts_per_row[self._everyone] == 0  # [Y] the drawn entities without one
        if not without.any():
            return 0.0
        num_heads = int((facts_per_row > 0).sum())  # |H_r|
        joint = self._joint(-1, patterns)  # [Y, N]
        pairs = np.asarray(joint.sum(axis=1)).ravel()  # [Y]
        pairs -= np.asarray(joint.multiply(self._loops(-1)).sum(axis=1)).ravel()  # y != x
        share = self._heads[relation].size / num_heads  # |X_r| / |H_r|
        scale = share * (self._num_active - num_heads) / int(without.sum())
        return scale * float(pairs[without].sum())

    def num_facts(self, relation: int) -> float:
        r""":math:`n_r = \sum_{x \in X_r} \sum_{y \ne x} T_r[x, y]` (module docstring)."""
        return float(self._facts(relation).sum())

    def agreement(
        self, relation: int, patterns: Sequence[Pattern], *, closed_world: bool = False
    ) -> float:
        r"""Dice :math:`D = 2 s / (b + n_r)` of the conjunction of ``patterns`` (0 when s = 0).

        With ``closed_world``, :math:`D^{\mathrm{cw}} = 2 s / (b + \hat b_0 + n_r)` (module
        docstring, "Ties").
        """
        support, body = self.counts(relation, patterns, closed_world=closed_world)
        return 2.0 * support / (body + self.num_facts(relation)) if support else 0.0


def _linear(matrix: sp.csr_matrix) -> np.ndarray:
    """Sorted int64 keys ``row * num_columns + column`` of the stored entries of ``matrix``.

    The walks, facts and pairs ``y = x`` are 0/1 matrices without duplicate entries, so the
    keys are unique; their column indices are sorted in place first (a sparse product leaves
    them in any order), so the keys of consecutive rows are sorted as well.
    """
    if not matrix.has_sorted_indices:
        matrix.sort_indices()
    rows = np.repeat(np.arange(matrix.shape[0], dtype=np.int64), np.diff(matrix.indptr))
    return rows * matrix.shape[1] + matrix.indices


def _intersect(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The keys in both of the sorted unique arrays ``a`` and ``b`` (sorted).

    For two 0/1 matrices this is the set of stored entries of their elementwise product, and
    its size the product's sum. Arrays of similar sizes are merged (a stable sort of the two
    sorted runs is a merge; a key in both is a repeated neighbour), twice as fast there as the
    binary search of each key of the shorter array in the longer one used otherwise.
    """
    if a.size > b.size:
        a, b = b, a
    if a.size == 0:
        return a
    if 8 * a.size >= b.size:
        merged = np.concatenate([a, b])
        merged.sort(kind="stable")
        return merged[1:][merged[1:] == merged[:-1]]
    at = np.searchsorted(b, a)  # [a] where each key would go in b
    at[at == b.size] = 0  # past the end: not in b (b[0] < that key)
    return a[b[at] == a]


@dataclass(frozen=True)
class PatternChoice:
    """The outcome of :func:`pattern_search`.

    Attributes:
        chosen: Indices of the chosen candidate paths, in the order they were added.
        scores: The score :math:`S` of the conjunction of the chosen patterns after each
            addition (the last one after the exchange pass and the orientation step).
        num_patterns: How many distinct candidate patterns were scored.
    """

    chosen: tuple[int, ...]
    scores: tuple[float, ...]
    num_patterns: int


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
        The :class:`PatternChoice` (empty when there is no candidate path).

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
    for p, edges in enumerate(local.paths):  # candidates are ordered shortest first
        if (
            not recursive
            and len(edges) > 1
            and any(int(local.edge_type[e]) == relation for e in edges)
        ):
            continue  # a body that recurses on r: only when asked for
        plain = path_pattern(local, p)
        routes.setdefault(_route(local.path_nodes[p], plain), p)  # for the orientation step
        first.setdefault(plain, p)
        for anchor in range(1, len(edges)) if anchors else ():
            first.setdefault(path_pattern(local, p, anchor), p)
    distinct = list(first)
    if not distinct:
        return PatternChoice((), (), 0)
    top, pi = _pick(bank, relation, [], [(bank.agreement(relation, [pi]), pi) for pi in distinct])
    chosen_patterns = [pi]
    chosen, scores = [first[pi]], [top]
    while len(chosen) < max_paths:
        used = set(local.edge_mask(chosen).nonzero().flatten().tolist())
        support, body = bank.counts(relation, chosen_patterns)
        rate = support / (body + bank.num_facts(relation))  # D / 2
        options = []
        for pi in distinct:
            if pi in chosen_patterns or set(local.paths[first[pi]]) <= used:
                continue
            joint = [*chosen_patterns, pi]
            s_joint, b_joint = bank.counts(relation, joint)
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
            swaps = [
                (bank.agreement(relation, [*rest, other]), other)
                for other in distinct
                if other not in chosen_patterns
            ]
            better = max(swaps, key=lambda o: o[0], default=(scores[-1], None))
            if better[0] > scores[-1] and better[1] is not None:
                chosen_patterns[i], chosen[i], scores[-1] = better[1], first[better[1]], better[0]
    _orient(local, bank, relation, routes, chosen_patterns, chosen)
    scores[-1] = bank.agreement(relation, chosen_patterns)
    return PatternChoice(tuple(chosen), tuple(scores), len(distinct))


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
    """
    top, best = max(options, key=lambda o: o[0])  # the first of the largest
    tied = [
        (value, pi)
        for value, pi in options
        if pi == best or not significantly_better(bank, relation, [*chosen, best], [*chosen, pi])
    ]
    if len(tied) == 1:
        return top, best
    return max(
        tied, key=lambda o: (bank.agreement(relation, [*chosen, o[1]], closed_world=True), o[0])
    )


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


def significantly_better(
    bank: PatternBank, relation: int, better: Sequence[Pattern], than: Sequence[Pattern]
) -> bool:
    r"""Whether the patterns ``better`` agree with ``relation`` significantly more than ``than``.

    With :math:`D` the agreement of ``than``, switching to ``better`` raises it iff
    :math:`(2 - D)(f_1 - f_0) - D (o_1 - o_0) > 0` (from :math:`D' > D \iff 2 s' > D (b' + n_r)`),
    where :math:`f_1, o_1` count the facts and the other pairs that only ``better`` joins and
    :math:`f_0, o_0` those that only ``than`` joins. Under the null hypothesis that the two are
    equally good, each of these discordant pairs is as likely on either side (McNemar's
    argument), so the statistic is a sum of independent :math:`\pm w` terms, :math:`w = 2 - D`
    for a fact and :math:`D` for another pair, of variance :math:`(2 - D)^2 (f_0 + f_1) + D^2
    (o_0 + o_1)`; the test is one-sided at level :data:`ALPHA` with the normal approximation.

    Args:
        bank: The graph's :class:`PatternBank`.
        relation: The head relation :math:`r`.
        better: A conjunction of patterns (at least one).
        than: Another conjunction of patterns (at least one).

    Returns:
        True when the statistic exceeds the upper :data:`ALPHA` quantile of the standard normal
        (then :math:`D(\text{better}) > D(\text{than})`); False when no pair is discordant.
    """
    s_better, b_better = bank.counts(relation, better)
    s_than, b_than = bank.counts(relation, than)
    s_both, b_both = bank.counts(relation, [*better, *than])
    d = bank.agreement(relation, than)
    f1, f0 = s_better - s_both, s_than - s_both
    o1, o0 = b_better - b_both - f1, b_than - b_both - f0
    variance = (2 - d) ** 2 * (f0 + f1) + d**2 * (o0 + o1)
    if variance <= 0:
        return False
    statistic = (2 - d) * (f1 - f0) - d * (o1 - o0)
    return bool(statistic / math.sqrt(variance) > norm.isf(ALPHA))


def pattern_mask(local: LocalStructure, choice: PatternChoice) -> Tensor:
    """The edge mask ``[m]`` of the chosen paths (all False when none is chosen)."""
    return (
        local.edge_mask(choice.chosen)
        if choice.chosen
        else torch.zeros(local.num_edges, dtype=torch.bool, device=local.edge_type.device)
    )
