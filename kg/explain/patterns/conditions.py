r"""Conditions on a constant at a node of a chosen path, distinct values, and conditioned picks.

These are two steps of the pattern search (:mod:`kg.explain.patterns.search`), taken after its
picks; they use the counts of :mod:`kg.explain.patterns.bank` (:math:`S(\Pi) = D_\Pi`, the
agreement of a conjunction :math:`\Pi` of patterns with the target relation's facts).

**Conditions** (:func:`_condition`), after the orientation step. A rule body can hold an atom on a
constant that no path from :math:`h` to :math:`t` walks, at a node of one that does:
``coal_exit(A, P) <= supplies_area(P, A), fuel(P, fuel_coal)``, whose ``fuel`` atom hangs off the
path at the plant. With :math:`C_a = \mathrm{diag}(\mathbb{1}[s(u, c) \in \mathcal{G}])_u` for the
atom :math:`a = s(\cdot, c)` (or :math:`s(c, \cdot)`), conditioning node :math:`i` of
:math:`\pi` gives

.. math::
    R_{\pi, i, a}[x, y] = \mathbb{1}\big[(A_{r_1}^{d_1} E_{a_1} \cdots A_{r_i}^{d_i} E_{a_i} C_a
    A_{r_{i+1}}^{d_{i+1}} \cdots A_{r_L}^{d_L} E_{a_L})[x, y] > 0\big]\; \mathbb{1}[x \ne y]

(:meth:`PatternBank.condition_counts`). The candidates: for every non-empty subset
:math:`\Sigma` of the chosen patterns, every node :math:`i = 1 .. L` (the tail included) of each
member's path, every local triple at the node's entity :math:`v` whose relation is not :math:`r`
and whose other end :math:`c` is on none of :math:`\Sigma`'s paths, the conjunction
:math:`\Sigma` with that member conditioned on :math:`s(\cdot, c)`; only atoms that at least two
entities hold (one holder is an anchor, a candidate already). A condition removes pairs from
:math:`\Sigma`'s, so it is admitted by the test of a further conjunct,
:math:`P(\mathrm{Bin}(d, D_\Sigma / 2) \le d_1) < \alpha`, and must raise :math:`S(\Sigma)`. The
admitted option of largest :math:`S`, then fewest triples (the first in that order), replaces the
explanation when it agrees better than the chosen patterns, or as well with fewer triples (the
comparisons exact in the integer counts): the plant's other coal plant in the same area, a path
``supplies_area, fuel, fuel^-1`` that the search conjoins for want of the atom, joins the same
pairs as the atom on the path ``supplies_area`` with one triple instead of three. The head
(:math:`i = 0`) takes no condition: the counts take every head of :math:`X_r` to have its
:math:`r` facts, and a condition on it removes whole rows of them. One condition at most, from the
target's local graph (the evidence the explanation is drawn from; on FB15k-237 the pruned union of
its kept paths). Measured on the thirteen seen worlds and FB15k-237 (issue #18, session 28,
RESULTS.md, "Conditions on a constant"): energy's ``coal_phaseout`` and biology's
``apoptosis_rule`` gain their atom (9 explanations, F1 up; no other explanation of the worlds
changes); a condition on the head such as clinical's ``inr_clinic`` (``prescribed(P, D),
in_class(D, class_anticoagulant)``, two atoms off the path) is still missed. On 100 FB15k-237
targets 10 explanations gain a condition and the fidelity figures move within their noise; there
the test admits conditions that raise :math:`S` by .006-.012 over thousands of pairs (the country
of a film's release region taking part in an Olympic sport), as it admits such filters. A condition
refines the chosen paths only; a body that is never picked without its atom is "Conditioned
picks"' case.

**Distinct values** (:func:`_apart_options`, :meth:`_Best.weigh_apart`), in the same step. A rule
body can compare a value of one end with the other end: ``spends_abroad(C, K) <= paid(C, M),
located_in(M, K), located_in(C, J), K != J``, the customer's own country differing from the
merchant's. The path ``paid, located_in`` also joins every customer to the countries of the
merchants at home, which are no facts; the rule's ``located_in(C, J), J != K`` removes exactly those
pairs when ``located_in`` is a **function** (no entity has two values), and then it reads
:math:`\neg\, s(x, y)`. For a relation :math:`s` read forward or backward from the pair's head
(or tail), :math:`A` = :math:`A_s` or :math:`A_s^\top`, and the end :math:`e` with the other end
:math:`o`,

.. math::
    R_{\Sigma, s}[x, y] = R_\Sigma[x, y]\; \mathbb{1}\big[\lnot (A[e, o] = 1 \land
    \textstyle\sum_z A[e, z] = 1)\big]

(:meth:`PatternBank._apart_removed`: a pair is removed iff the end's one :math:`s` value is the
other end; an end with none keeps its pairs, so no whole row of :math:`X_r` goes, as no atom
conditions the head, above). The candidates: every local triple at :math:`h` (at :math:`t`) whose
relation is not :math:`r`, read as a function from that end (:meth:`PatternBank._functional`, over
the whole graph), and whose other end is neither :math:`t` (:math:`h`) nor on :math:`\Sigma`'s
paths; the triple is the explanation's witness (the customer's ``located_in``), the first in order
for each :math:`(s, \text{direction}, \text{end})`. They are admitted, weighed and ordered with the
atoms (after those of the same subset): the same test, :math:`S(\Sigma)` raised, largest :math:`S`,
then fewest triples. Why a function: a first version took any relation, removing the pairs of the
ends of degree one, and read relations that are none: one exclusive of :math:`r` on a pair
(parliament's ``voted_across`` beside ``voted_with_party``, F1 1 -> .4 on six targets) and
clinical's ``allergic_to``, the cause of the exceptions of ``prescribed`` but no part of its rule
(six targets, two of them 1 -> .8). Measured on the twenty-one seen worlds and on FB15k-237 (issue
#18, session 33, RESULTS.md, "Distinct values"): 22 of 1,105 explanations change and none for the
worse (banking's ``foreign_spend``, railways' ``track_access``, maritime's ``flag_out`` and
aviation's ``foreign_permit`` gain the witness; seed 1: 12 of 486, none worse; FB15k-237: none of
100). An inequality between two values, or between a middle node and a value (publishing's
``translation``, parliament's ``cross_party``), is not this shape.

**Conditioned picks** (:func:`_conditioned_pick`, :func:`_takes_place`), last. A body whose chain
agrees badly without its atom is never chosen, so no condition can refine it: the held-out maritime
world's ``reefer_network``, ``reefer_port(C, P) <= operates(C, V), carries(V, cargo_reefer),
calls_at(V, P)``, whose chain joins the ports of every ship of the carrier (:math:`D = .28`) and
lost to ``ais_reported`` paths (F1 0, session 28). So every other candidate path (none with an
:math:`r` triple, the recursive search aside) is weighed with one condition as in "Conditions", the
atoms drawn from its own nodes (each path of a pattern is a candidate of its own: a pattern's paths
pass different entities), by the same test against the path's pattern alone. The admissible option
of largest :math:`S`, then fewest triples, then first in order, that agrees better than the
explanation takes its place when it agrees *significantly* better: it is a new pick, not a
refinement of the chosen paths, and a tie goes to the search (the test of
:func:`significantly_better` on the two sets of pairs). Where the relation's rule set with the
target's admissible candidates (as "Heads with several bodies" takes them) has two members or more
and the explanation's first pattern is one of them, the test is between the unions, the other
members with the candidate against the other members with the explanation: one body of several
joins its share of the facts only, and a path that joins some facts of every body agrees better
than that body and worse than the set. Session 28's prototype took the candidate whenever it agreed
better, and replaced correct explanations by such paths on six worlds (F1 1 -> 0 at corporate's
``subsidiary_presence``, energy's ``registered_supply``, sports' ``award_country``, legal's
``specialist_court``, commerce's ``brand_market``, software's ``own_alert``); with the test on the
two sets of pairs alone, corporate's, energy's and sports' were still replaced (9 explanations);
with the unions, none (session 29, RESULTS.md, "Conditioned picks"). Measured on the fifteen worlds
(seed 0, telecom kept out): 12 explanations change, none for the worse: maritime's
``reefer_network`` (F1 at length 3 .23 -> .37), biology's ``apoptosis_rule`` (.67 -> .83, the
pathway atom on the shared protein) and agriculture's ``local_sourcing`` (.63 -> .80, the two
``located_in`` atoms with a condition that is no part of the rule); the other twelve worlds'
explanations are unchanged.

Cost. The middle entities of a pattern at a node (:meth:`PatternBank._middles`) are counted once
for all its paths, the atoms at one entity once for the paths through it, and the candidates are
weighed in decreasing order of their bound :math:`2 s / (s + n_r)`, one that cannot beat the best
so far skipped. The picks of one target count at most :data:`PICK_ENDS` entries in all, the
(pair, middle) entries and the (pair, atom) entries of their products with the atoms' holders; the
search ends before the node that would pass it, and the candidates left, of lower bounds, are not
weighed. On the fifteen worlds it ends 102 of 757 searches and changes none of their explanations
(against no budget); at a quarter of it two of maritime's changed. On FB15k-237 it bounds the
hubs' searches (one target took 32 s without it): the mean time per explanation .35-.38 s -> .44
s, the slowest 1.78-1.83 s -> 1.95-1.97 s, all 100 within 2 s at load .3-.95 (at load 1.4, 98-99
until the rule-set admission counted by popcounts, `_Union.added_to_fixed`); 8 of 100
explanations change and their fidelity figures move within noise.

"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.stats import binom

from kg.explain.local import LocalStructure
from kg.explain.patterns._bits import _absent, _contains, _exact_dice, _intersect
from kg.explain.patterns.rule_sets import _members
from kg.explain.patterns.significance import ALPHA, _keys_significantly_better

if TYPE_CHECKING:
    from kg.explain.patterns.bank import Apart, Atom, Pattern, PatternBank
#: Most entries that the conditioned picks of one target count, the (pair, middle entity) entries
#: and the (pair, atom) entries of their products with the atoms' holders, over all their
#: patterns and nodes, in decreasing order of the candidates' bounds (module docstring,
#: "Conditioned picks"): the budget of one node's counts in the condition step, for a whole
#: target's picks.
PICK_ENDS = 1 << 22
#: Most (pair, prefix end) entries for which the condition search counts every atom of a node at
#: once (module docstring, "Conditions"; about 100 MB of int64 at the most); beyond it, the pairs
#: of the options that the bounds do not rule out are walked. The same counts either way.
MIDDLE_ENDS = 1 << 22


class _LocalAtoms:
    """The candidate atoms at the local graph's nodes, for :func:`_condition`."""

    def __init__(self, local: LocalStructure, bank: PatternBank, relation: int) -> None:
        self._bank, self._relation = bank, relation
        self._nodes = local.nodes.tolist()
        self._heads, self._tails = local.edge_index.tolist()
        self._types = local.edge_type.tolist()
        self._at: dict[int, list[int]] = {}  # local node -> the local triples at it
        for e, (u, v) in enumerate(zip(self._heads, self._tails)):
            self._at.setdefault(u, []).append(e)
            self._at.setdefault(v, []).append(e)
        self._holders: dict[Atom, np.ndarray] = {}
        self._reached: dict[Pattern, tuple[np.ndarray, int]] = {}  # prefix -> entities, count

    def entity(self, node: int) -> int:
        """The global id of local node ``node``."""
        return self._nodes[node]

    def at(self, node: int, prefix: Pattern) -> list[tuple[np.ndarray, list[tuple[int, int]]]]:
        """The atoms at local node ``node``, grouped by the holders that ``prefix`` reaches.

        Each local triple at the node whose relation is not :math:`r` gives the atom on its
        other end (one holder: an anchor, a candidate already, so none). Only the holders that
        some walk of ``prefix`` from :math:`X_r` reaches matter: atoms with the same such holders
        join the same pairs and are one group (sorted holders, then ``(local triple, local
        other end)`` per atom in order); an atom held by all or none of them changes nothing or
        drops every pair, and is left out.
        """
        if prefix not in self._reached:
            reached = np.zeros(self._bank.num_nodes, dtype=bool)
            reached[self._bank._walk(self._relation, prefix).indices] = True
            self._reached[prefix] = (reached, int(reached.sum()))
        reached, count = self._reached[prefix]
        groups: dict[bytes, tuple[np.ndarray, list[tuple[int, int]]]] = {}
        tried: set[Atom] = set()
        for e in self._at.get(node, ()):
            forward = self._heads[e] == node
            other = self._tails[e] if forward else self._heads[e]
            atom = (self._types[e], forward, self._nodes[other])
            if self._types[e] == self._relation or atom in tried:
                continue
            tried.add(atom)
            if atom not in self._holders:
                self._holders[atom] = self._bank._holders(atom)
            if self._holders[atom].size < 2:
                continue
            here = self._holders[atom][reached[self._holders[atom]]]
            if 0 < here.size < count:
                groups.setdefault(here.tobytes(), (here, []))[1].append((e, other))
        return list(groups.values())


class _Middles(NamedTuple):
    """A pattern's middle entities at a node (:meth:`PatternBank._middles`), as cached.

    Of every pair where they number at most :data:`MIDDLE_ENDS` (``exact``), else of the facts
    alone; ``pairs`` the keys of those pairs, ``is_fact`` which are facts, ``rows`` the pair of
    each stored entry.
    """

    middle: sp.csr_matrix
    exact: bool
    pairs: np.ndarray
    is_fact: np.ndarray
    rows: np.ndarray

    @classmethod
    def of(
        cls, bank: PatternBank, relation: int, pattern: Pattern, node: int, pairs: np.ndarray
    ) -> _Middles:
        """The middles of ``pattern`` at ``node``: of every pair of ``pairs`` if they fit."""
        middle = bank._middles(relation, pattern, node, pairs, MIDDLE_ENDS)
        if middle is not None:
            return cls.exact_of(bank, relation, middle, pairs)
        pairs = _intersect(pairs, bank._facts_keys(relation))  # the facts alone
        middle = bank._middles(relation, pattern, node, pairs, math.inf)
        assert middle is not None
        rows = np.repeat(np.arange(pairs.size), np.diff(middle.indptr))
        return cls(middle, False, pairs, np.ones(pairs.size, dtype=bool), rows)

    @classmethod
    def exact_of(
        cls, bank: PatternBank, relation: int, middle: sp.csr_matrix, pairs: np.ndarray
    ) -> _Middles:
        """The middles ``middle`` of every pair of ``pairs``."""
        rows = np.repeat(np.arange(pairs.size), np.diff(middle.indptr))
        return cls(middle, True, pairs, _contains(bank._facts_keys(relation), pairs), rows)


class _NodeCounts:
    r""":math:`s'` and :math:`b'` of conditions at one node of one pattern, for every atom.

    The module docstring, "Conditions", and :func:`_condition`'s "Cost": from the pairs' middle
    entities where they number at most :data:`MIDDLE_ENDS` (:attr:`exact`), else :math:`s'`
    from the facts' and a lower bound on :math:`b'`, with :meth:`walked` for the exact counts.
    ``pairs``: the sorted keys of the pairs ``y != x`` the pattern joins; ``vertex``: the target's
    own entity at the node, which holds every atom there; ``holders``: each option's holders
    (sorted); ``middles``: a cache of the pattern's middle entities at the node (they depend on
    neither the vertex nor the atoms), shared by the paths of one search.
    """

    def __init__(
        self,
        bank: PatternBank,
        relation: int,
        pattern: Pattern,
        pairs: np.ndarray,
        node: int,
        vertex: int,
        holders: list[np.ndarray],
        middles: dict[tuple[Pattern, int], _Middles] | None = None,
    ) -> None:
        self._bank, self._relation, self._pattern, self._node = bank, relation, pattern, node
        self._vertex = vertex
        known = None if middles is None else middles.get((pattern, node))
        if known is None:
            known = _Middles.of(bank, relation, pattern, node, pairs)
            if middles is not None:
                middles[pattern, node] = known
        middle, self.exact, pairs, self._is_fact, _ = known
        self._pairs = pairs
        self._alone: tuple[np.ndarray, np.ndarray] | None = None  # options() of the pattern alone
        self._via_v = np.zeros(pairs.size, dtype=bool)  # [K] the pairs whose walks pass v
        self._via_v[known.rows[middle.indices == vertex]] = True
        sets = [here[here != vertex] for here in holders]
        sizes = np.array([here.size for here in sets])
        indicator = sp.csc_matrix(
            (
                np.ones(int(sizes.sum()), dtype=np.float32),
                (np.concatenate(sets), np.repeat(np.arange(len(sets)), sizes)),
            ),
            shape=(bank.num_nodes, len(sets)),
        )
        passes = middle[~self._via_v] @ indicator  # [K', A] kept through another holder
        passes.data[:] = 1.0
        self._passes_t = passes.T  # [A, K'] (a CSC view: no copy)
        if not self.exact:
            # b' >= the pairs of the rows whose every prefix walk ends on a holder (v with them)
            walk = bank._walk(relation, pattern[:node])  # [X, N] the prefix's walks
            inside = (walk @ indicator).tocoo()
            inside.data += (walk[:, [vertex]] @ np.ones((1, len(sets))))[inside.row, inside.col]
            full = inside.data == np.diff(walk.indptr)[inside.row]
            self._whole = sp.csr_matrix(
                (np.ones(int(full.sum())), (inside.col[full], inside.row[full])),
                shape=(len(sets), walk.shape[0]),
            )
            # and b' >= the pairs through v itself
            self._prefix = walk.tocsc()
            self._through_v = bank._conditioned_keys(
                relation, pattern, node, np.array([vertex]), self._prefix
            )

    def options(self, subset: _Subset, others: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """``[A]`` :math:`s'` and :math:`b'` (exact) or a lower bound on :math:`b'`.

        ``others``: the keys of the subset's other patterns' pairs (None: the pattern alone).
        """
        alone = subset.pairs is self._pairs and others is None  # every pair counted
        if alone and self._alone is not None:
            return self._alone
        in_subset = (
            np.ones(self._pairs.size, dtype=bool) if alone else _contains(subset.pairs, self._pairs)
        )
        facts = in_subset & self._is_fact
        s1s = int((facts & self._via_v).sum()) + self._passes_t @ facts[~self._via_v].astype(
            np.float64
        )
        if self.exact:
            b1s = int((in_subset & self._via_v).sum()) + self._passes_t @ in_subset[
                ~self._via_v
            ].astype(np.float64)
        else:
            through = self._through_v if others is None else _intersect(self._through_v, others)
            at_v = _absent(through, self._bank._loops_keys(self._relation)).size
            per_row = subset.per_row(self._bank.num_nodes).astype(np.float64)
            b1s = np.maximum(np.maximum(s1s, self._whole @ per_row), at_v)
        if alone:
            self._alone = (s1s, b1s)
        return s1s, b1s

    def walked(self, holders: np.ndarray, others: np.ndarray | None) -> tuple[float, float]:
        """:math:`(s', b')` of one option by its walk (:meth:`PatternBank._conditioned_keys`)."""
        keys = self._bank._conditioned_keys(
            self._relation, self._pattern, self._node, holders, self._prefix
        )
        return self._bank._key_counts(
            self._relation, keys if others is None else _intersect(keys, others)
        )


@dataclass
class _Subset:
    """A conjunction whose conditions :func:`_condition` or :func:`_conditioned_pick` weighs.

    A subset of the chosen patterns, or one candidate pattern.
    """

    support: float  # s
    body: float  # b
    dice: Fraction  # S, exactly
    rate: float  # D / 2, the test's rate
    nodes: set[int]  # the local nodes on its paths
    triples: int  # its paths' triples and the atom's
    pairs: np.ndarray  # sorted keys of the pairs y != x it joins
    rows: int  # |X_r|
    position: int  # its place in the order of the options (ties go to the first)
    _per_row: np.ndarray | None = None

    def per_row(self, num_nodes: int) -> np.ndarray:
        """``[X]`` its pairs per row of :math:`X_r`."""
        if self._per_row is None:
            self._per_row = np.bincount(self.pairs // num_nodes, minlength=self.rows)
        return self._per_row


@dataclass
class _Placed:
    """Where a condition sits, and :math:`S` (``value``) of the conditioned conjunction.

    Pattern ``member``'s node ``node`` is kept to ``holders`` by the local triple ``edge``, on
    the subset ``kept`` (positions) of the patterns weighed; with ``apart``, the distinct-value
    condition of :meth:`PatternBank._apart_removed` instead, ``edge`` its witness (``member``
    -1, ``node`` 0, no ``holders``).
    """

    kept: tuple[int, ...]
    member: int
    node: int
    edge: int
    holders: np.ndarray
    value: Fraction
    apart: Apart | None = None  # a distinct-value condition instead ("Distinct values")


class _Best:
    r"""The best condition so far: largest :math:`S`, then fewest triples, then first in order.

    It starts at :math:`S` and the triples of the explanation it must beat (no order: an option
    that ties it exactly does not).
    """

    def __init__(self, value: Fraction, triples: int) -> None:
        self.key = (value, -triples)
        self.order: tuple[int, ...] | None = None
        self.placed: _Placed | None = None

    def beats(self, value: Fraction, triples: int, order: tuple[int, ...]) -> bool:
        key = (value, -triples)
        return key > self.key or (key == self.key and self.order is not None and order < self.order)

    def admits(
        self, sub: _Subset, s1: float, b1: float, value: Fraction, order: tuple[int, ...]
    ) -> bool:
        r"""Whether an option leaving ``(s1, b1)`` of ``sub``'s counts, :math:`S` = ``value``, wins.

        It must raise :math:`S(\Sigma)`, beat the best so far (:meth:`beats`) and pass the
        conjunction test on the pairs it removes, :math:`P(\mathrm{Bin}(b - b', D_\Sigma / 2) \le
        s - s') < \alpha`.
        """
        return (
            value > sub.dice
            and self.beats(value, sub.triples, order)
            and binom.cdf(sub.support - s1, sub.body - b1, sub.rate) < ALPHA
        )

    def take(self, value: Fraction, triples: int, order: tuple[int, ...], placed: _Placed) -> None:
        """Make ``placed`` the best so far."""
        self.key, self.order, self.placed = (value, -triples), order, placed

    def weigh(
        self,
        counts: _NodeCounts,
        groups: list[tuple[np.ndarray, list[tuple[int, int]]]],
        sub: _Subset,
        others: np.ndarray | None,
        facts: float,
        place: tuple[tuple[int, ...], int, int],
    ) -> None:
        r"""Weigh the atoms ``groups`` at one node of one pattern of ``sub`` (``counts``).

        The best admissible option (:meth:`admits`) is kept. ``others``: the keys of the subset's
        other patterns' pairs (None: the pattern alone); ``place``: ``(kept, member, node)``.
        """
        s1s, b1s = counts.options(sub, others)  # [A] s' and b' (or b' >=)
        # S (or a bound on it) must beat S(subset) and the best so far: a float filter with a
        # margin, then the exact comparisons
        rough = 2 * s1s / (b1s + facts)
        floor = max(float(sub.dice), float(self.key[0])) * (1 - 1e-9)
        for a in np.flatnonzero(rough >= floor):
            here, members = groups[a]
            first = next((e for e, other in members if other not in sub.nodes), None)
            if first is None:
                continue
            s1, b1 = float(s1s[a]), float(b1s[a])
            value = _exact_dice(s1, b1, facts)
            order = (sub.position, place[1], place[2], first)
            # the test's p-value falls with the pairs removed, at most b - b1
            if not self.admits(sub, s1, b1, value, order):
                continue
            if not counts.exact:
                s1, b1 = counts.walked(here, others)
                value = _exact_dice(s1, b1, facts)
                if not self.admits(sub, s1, b1, value, order):
                    continue
            self.take(value, sub.triples, order, _Placed(*place, first, here, value))

    def weigh_apart(
        self,
        bank: PatternBank,
        relation: int,
        sub: _Subset,
        options: list[tuple[Apart, int]],
        facts: float,
        kept: tuple[int, ...],
        after: int,
    ) -> None:
        r"""Weigh the distinct-value conditions ``options`` on the subset ``sub``.

        Module docstring, "Distinct values": each ``(apart, edge)`` removes the pairs of
        :meth:`PatternBank._apart_removed` from :math:`\Sigma`'s and is admitted as an atom is
        (:meth:`admits`); ``after`` orders them after every atom of the subset.
        """
        truth = bank._facts_keys(relation)
        for apart, edge in options:
            removed = bank._apart_removed(relation, sub.pairs, apart)
            if removed.size == 0:
                continue
            s1 = sub.support - float(_contains(truth, removed).sum())
            b1 = sub.body - float(removed.size)
            value = _exact_dice(s1, b1, facts)
            order = (sub.position, after, 0, edge)
            if self.admits(sub, s1, b1, value, order):
                placed = _Placed(kept, -1, 0, edge, np.zeros(0, dtype=np.int64), value, apart)
                self.take(value, sub.triples, order, placed)


def _apart_options(
    local: LocalStructure,
    bank: PatternBank,
    atoms: _LocalAtoms,
    relation: int,
    path: int,
    nodes: set[int],
) -> list[tuple[Apart, int]]:
    """The distinct-value conditions at the ends of local ``path``, each with its witness triple.

    Module docstring, "Distinct values": every local triple at the head (the tail) whose
    relation :math:`s` is not :math:`r` and a function read from that end
    (:meth:`PatternBank._functional`), and whose other end is neither the tail (the head) nor on
    the subset's paths (``nodes``); the first triple in order for each ``(s, forward, at_head)``.
    """
    ends = local.path_nodes[path]
    head, tail = ends[0], ends[-1]
    options: dict[Apart, int] = {}
    for end, other, at_head in ((head, tail, True), (tail, head, False)):
        for e in atoms._at.get(end, []):
            u, v, rel = atoms._heads[e], atoms._tails[e], atoms._types[e]
            if rel == relation or u == v:
                continue
            forward = u == end
            value = v if forward else u
            if value == other or value in nodes or not bank._functional(rel, forward):
                continue
            options.setdefault((rel, forward, at_head), e)
    return [(apart, e) for apart, e in options.items()]


def _subset(
    local: LocalStructure,
    bank: PatternBank,
    relation: int,
    patterns: list[Pattern],
    paths: list[int],
    position: int,
) -> _Subset:
    """The :class:`_Subset` of the conjunction of ``patterns`` (of local ``paths``)."""
    s, b = bank.counts(relation, patterns)
    facts = bank.num_facts(relation)
    return _Subset(
        support=s,
        body=b,
        dice=_exact_dice(s, b, facts),
        rate=s / (b + facts),
        nodes={v for p in paths for v in local.path_nodes[p]},
        triples=len({e for p in paths for e in local.paths[p]}) + 1,
        pairs=_absent(bank._joint_keys(relation, patterns), bank._loops_keys(relation)),
        rows=bank._rows(relation).size,
        position=position,
    )


def _condition(
    local: LocalStructure,
    bank: PatternBank,
    relation: int,
    patterns: list[Pattern],
    chosen: list[int],
    atoms: _LocalAtoms,
) -> _Placed | None:
    r"""The condition atom that refines the chosen paths, if any (module docstring).

    "Conditions": over every non-empty subset :math:`\Sigma` of the chosen patterns (in
    order), every node :math:`i \ge 1` of each member's path, and every local triple at that
    node's entity :math:`v` whose relation is not :math:`r` and whose other end :math:`c` is on
    none of :math:`\Sigma`'s paths and is the constant of at least two entities' facts
    (:meth:`PatternBank.holders`; one is an anchor), the option :math:`(\Sigma, \text{atom})`
    is admissible when the pairs it removes from :math:`\Sigma`'s pass the conjunction test and
    it raises :math:`S(\Sigma)`. The distinct values of the ends ("Distinct values",
    :func:`_apart_options`) are options too, after the atoms of their subset. The option of
    largest :math:`S`, then fewest triples, then first in that order, replaces the explanation
    when it agrees better than the chosen patterns, or as well with fewer triples.

    Cost (the same choice as counting every option, tested against that). A condition keeps a
    pair iff one of the entities its walks pass at the node holds the atom
    (:meth:`PatternBank._middles`), so all the atoms at a node are counted at once: one sparse
    product of the pairs' middle entities with the atoms' holders, then one product per subset
    for :math:`s'` and :math:`b'`. Only the holders that the prefix's walks reach matter, so
    atoms with the same such holders are one option (the first in order), and an atom held by
    all or none of them is none; :math:`v` holds every atom at it, so the pairs through
    :math:`v` are counted once for all. Where the pairs' middle entities would exceed
    :data:`MIDDLE_ENDS` (FB15k-237's hubs), the middles of the facts alone give :math:`s'`
    exactly, :math:`b'` is bounded below by the pairs through :math:`v` and those of the rows of
    :math:`X_r` whose every prefix walk ends on a holder, and only an option whose bounds can
    still beat :math:`S(\Sigma)`, the best so far and the test (whose p-value falls with the
    pairs removed, at most :math:`b - b'`) is walked (:meth:`PatternBank._conditioned_keys`). A
    subset whose :math:`2 s / (s + n_r)` cannot reach the best is skipped.

    Returns:
        Where the condition sits (its ``kept``: the positions in ``chosen`` kept), or None for
        no change.
    """
    facts = bank.num_facts(relation)
    support, body = bank.counts(relation, patterns)
    width = len({e for p in chosen for e in local.paths[p]})
    # the chosen patterns themselves: an option must beat them, not tie
    best = _Best(_exact_dice(support, body, facts), width)
    subsets = [
        kept
        for size in range(1, len(chosen) + 1)
        for kept in itertools.combinations(range(len(chosen)), size)
    ]
    state: dict[tuple[int, ...], _Subset] = {}
    for kept in subsets:
        s, _ = bank.counts(relation, [patterns[k] for k in kept])
        triples = len({e for k in kept for e in local.paths[chosen[k]]}) + 1
        if not s or (_exact_dice(s, s, facts), -triples) < best.key:
            continue  # no condition raises s; S <= 2 s / (s + n_r) cannot reach the best
        state[kept] = _subset(
            local,
            bank,
            relation,
            [patterns[k] for k in kept],
            [chosen[k] for k in kept],
            len(state),
        )
    for k in range(len(chosen)):
        mine = [kept for kept in subsets if k in kept and kept in state]
        if not mine:
            continue
        others = {
            kept: bank._joint_keys(relation, [patterns[q] for q in kept if q != k])
            for kept in mine
            if len(kept) > 1
        }
        path_nodes = local.path_nodes[chosen[k]]
        pairs = _absent(bank._keys(relation, patterns[k]), bank._loops_keys(relation))  # y != x
        for node in range(1, len(path_nodes)):
            groups = atoms.at(path_nodes[node], patterns[k][:node])
            if not groups:
                continue
            vertex = atoms.entity(path_nodes[node])
            holders = [here for here, _ in groups]
            counts = _NodeCounts(bank, relation, patterns[k], pairs, node, vertex, holders)
            for kept in mine:
                best.weigh(counts, groups, state[kept], others.get(kept), facts, (kept, k, node))
    for kept, sub in state.items():  # "Distinct values"
        options = _apart_options(local, bank, atoms, relation, chosen[kept[0]], sub.nodes)
        best.weigh_apart(bank, relation, sub, options, facts, kept, len(chosen))
    return best.placed


def _conditioned_pick(
    local: LocalStructure,
    bank: PatternBank,
    relation: int,
    candidates: list[tuple[Pattern, int]],
    atoms: _LocalAtoms,
    value: Fraction,
    triples: int,
) -> tuple[int, _Placed] | None:
    r"""The best conditioned candidate path that agrees better than the explanation, if any.

    Module docstring, "Conditioned picks": over the ``candidates`` (plain pattern and local path,
    in order; a condition is drawn from the path's own nodes, so every path of a pattern is
    one), every node :math:`i \ge 1` and every atom there as in
    :func:`_condition` (the same test against the pattern alone), the admissible option of
    largest :math:`S`, then fewest triples, then first in order, that beats ``value`` with
    ``triples`` (:math:`S` and the triples of the explanation). A candidate whose
    :math:`2 s / (s + n_r)` cannot beat the best so far is not counted.

    Returns:
        The candidate's local path and its condition, placed on ``[its pattern]``; or None.
    """
    facts = bank.num_facts(relation)
    best = _Best(value, triples)
    subsets: dict[Pattern, _Subset] = {}
    middles: dict[tuple[Pattern, int], _Middles] = {}
    # the paths of a pattern through one entity at a node share its atoms and their counts
    counted: dict[tuple[Pattern, int, int], tuple[list, _NodeCounts | None]] = {}
    spent = 0  # the middle entries counted so far, of PICK_ENDS

    def found() -> tuple[int, _Placed] | None:
        """The best option's candidate path (its order starts with the position) and place."""
        if best.placed is None or best.order is None:
            return None
        return candidates[best.order[0]][1], best.placed

    # the candidates by decreasing bound 2 s / (s + n_r) on S, so that a good option found early
    # rules out the rest; the choice is the same in any order (ties go to the first position)
    bounds = [
        _exact_dice(s, s, facts) for s, _ in (bank.counts(relation, [p]) for p, _ in candidates)
    ]
    for position in sorted(range(len(candidates)), key=lambda i: (-bounds[i], i)):
        pattern, path = candidates[position]
        if not bounds[position] or (bounds[position], -(len(pattern) + 1)) < best.key:
            continue
        if pattern not in subsets:
            subsets[pattern] = _subset(local, bank, relation, [pattern], [path], position)
        path_nodes = local.path_nodes[path]
        sub = replace(subsets[pattern], nodes=set(path_nodes), position=position)
        for node in range(1, len(path_nodes)):
            key = (pattern, node, path_nodes[node])
            if key not in counted:
                groups = atoms.at(path_nodes[node], pattern[:node])
                counts = None
                if groups:
                    if (pattern, node) not in middles:
                        middle = bank._middles(
                            relation, pattern, node, sub.pairs, PICK_ENDS - spent
                        )
                        if middle is None:
                            return found()  # the budget is spent (module docstring)
                        spent += middle.nnz
                        middles[pattern, node] = _Middles.exact_of(
                            bank, relation, middle, sub.pairs
                        )
                    holders = [here for here, _ in groups]
                    # the (pair, atom) entries of the product of the middles with the holders
                    held = np.bincount(np.concatenate(holders), minlength=bank.num_nodes)
                    spent += int(held[middles[pattern, node].middle.indices].sum())
                    if spent > PICK_ENDS:
                        return found()
                    vertex = atoms.entity(path_nodes[node])
                    counts = _NodeCounts(
                        bank, relation, pattern, sub.pairs, node, vertex, holders, middles
                    )
                counted[key] = (groups, counts)
            groups, counts = counted[key]
            if counts is not None:
                best.weigh(counts, groups, sub, None, facts, ((0,), 0, node))
    return found()


def _placed_keys(
    bank: PatternBank, relation: int, patterns: list[Pattern], placed: _Placed | None
) -> np.ndarray:
    """Sorted keys of the pairs ``y != x`` of ``patterns``' conjunction, or of ``placed``'s.

    With ``placed``: the conjunction of the patterns at ``placed.kept``, pattern
    ``placed.member`` conditioned as it says.
    """
    if placed is None:
        keys = bank._joint_keys(relation, patterns)
    elif placed.apart is not None:
        keys = _absent(
            bank._joint_keys(relation, [patterns[k] for k in placed.kept]),
            bank._loops_keys(relation),
        )
        return _absent(keys, bank._apart_removed(relation, keys, placed.apart))
    else:
        keys = bank._conditioned_keys(
            relation, patterns[placed.member], placed.node, placed.holders
        )
        rest = [patterns[k] for k in placed.kept if k != placed.member]
        if rest:
            keys = _intersect(keys, bank._joint_keys(relation, rest))
    return _absent(keys, bank._loops_keys(relation))


def _takes_place(
    local: LocalStructure,
    bank: PatternBank,
    relation: int,
    candidates: dict[Pattern, int],
    pick: Pattern,
    keys: np.ndarray,
    explanation: np.ndarray,
) -> bool:
    r"""Whether the conditioned candidate of pairs ``keys`` replaces the explanation's.

    Module docstring, "Conditioned picks": with :math:`B` the relation's rule set and the
    target's admissible candidates (as :func:`_member_instead` takes them), when :math:`B` has
    two members or more and the explanation's first pattern ``pick`` is one of them, the union
    of the other members with ``keys`` must agree significantly better than their union with
    ``explanation`` (the pairs of the explanation); else ``keys`` than ``explanation``
    (:func:`significantly_better`'s test).
    """
    members = _members(local, bank, relation, candidates, pick)
    if len(members) >= 2 and pick in members:
        rest = bank._union_keys(relation, [m for m in members if m != pick])
        keys, explanation = np.union1d(rest, keys), np.union1d(rest, explanation)
    return _keys_significantly_better(bank, relation, keys, explanation)
