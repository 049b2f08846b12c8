r"""Relation-path patterns mined from the training graph: which candidate path is a rule body.

A perturbation search scores each candidate path of a target :math:`(h, r, t)` by what it does to
the target's score *in this one local graph*; a correlated shortcut (a relation that links most
pairs the rule links) moves that score as much as the rule body does, and a shorter one wins the
parsimony tie-break (issue #18: one academic-world explanation picked ``knows`` over the shared
paper, F1 0). Whether a path is a *reason* is a property of its **pattern** over the whole
graph, the question rule miners ask (AMIE: Galárraga et al., "AMIE: Association Rule Mining under
Incomplete Evidence in Ontological Knowledge Bases", WWW 2013, doi:10.1145/2488388.2488425):
does :math:`r(x, y)` hold wherever the pattern joins :math:`x` to :math:`y`?

**Pattern.** A candidate path :math:`h = v_0, v_1, \dots, v_L = t` has the pattern
:math:`\pi = (r_1^{d_1}, \dots, r_L^{d_L})`, :math:`d_i = +1` when its :math:`i`-th triple is
:math:`(v_{i-1}, r_i, v_i)` and :math:`-1` when it is :math:`(v_i, r_i, v_{i-1})`. With
:math:`A_s` the training graph's adjacency of relation :math:`s` (:math:`A_s^{+1} = A_s`,
:math:`A_s^{-1} = A_s^\top`), the pattern joins :math:`x` to :math:`y` when
:math:`R_\pi[x, y] = \mathbb{1}[(A_{r_1}^{d_1} \cdots A_{r_L}^{d_L})[x, y] > 0]`, :math:`x \ne y`.

**Confidence** (AMIE's PCA confidence, over the heads that have an :math:`r` fact):
with :math:`X_r = \{x : \exists y\; r(x, y) \in \mathcal{G}\}` and :math:`T_r[x, y] =
\mathbb{1}[r(x, y) \in \mathcal{G}]`,

.. math::
    s_\pi = \sum_{x \in X_r} \sum_y R_\pi[x, y]\, T_r[x, y], \qquad
    b_\pi = \sum_{x \in X_r} \sum_y R_\pi[x, y], \qquad
    c_\pi = \frac{s_\pi + 1}{b_\pi + 2},

the support, the body size and the confidence with a uniform Beta prior (Laplace's rule of
succession: a pattern seen twice is not certain). A rule body holds wherever it is grounded, up
to the rule's exceptions and the facts held out of training, so :math:`c_\pi \approx (1 - q)
(1 - f_\text{held out})`; a shortcut holds only on the share of its pairs the rule covers. A
conjunction of patterns (a body of several paths between :math:`h` and :math:`t`, such as
``borders(X, Y), speaks(X, L), speaks(Y, L)``) uses :math:`R_{\pi_1} \odot R_{\pi_2}`.

**Explanation** (:func:`pattern_search`). The first path is a candidate of largest
:math:`c_\pi`; among paths of the same best pattern the first (shortest, then lexicographic).
A second path of another pattern joins it only when the conjunction is more reliable beyond
doubt: the Wilson lower bound of :math:`s_{12} / b_{12}` (95 %) exceeds :math:`c_{\pi_1}`, and so
on up to ``max_paths``. Nothing here depends on the local graph's score, so a correlated path is
chosen only when it is the more reliable pattern over the whole graph.

Heads: at most ``max_heads`` of :math:`X_r` (seeded draw), so the cost per pattern is bounded
by ``max_heads`` times the reach of the pattern.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from graphdata.errors import GraphDataError
from kg.explain.local import LocalStructure

__all__ = ["Pattern", "PatternBank", "PatternChoice", "path_pattern", "pattern_search"]

#: A relation-path pattern: ``((relation, forward, anchor), ...)``, one step from h to t;
#: ``anchor`` is the entity the step must end on (a constant of the pattern), or -1 for any.
Pattern = tuple[tuple[int, bool, int], ...]

#: Normal quantile of the one-sided 95 % Wilson bound that admits a further path.
_Z = 1.6448536269514722


def path_pattern(local: LocalStructure, path: int, anchor: int | None = None) -> Pattern:
    r"""The pattern :math:`\pi` of candidate path ``path`` of ``local`` (module docstring).

    Args:
        local: The local structure.
        path: Index into ``local.paths``.
        anchor: Which intermediate node (1 .. L - 1, in path order) is a constant of the
            pattern. Default ``None``: none.

    Returns:
        ``((relation id, forward, anchor entity or -1), ...)`` from ``h`` to ``t``.
    """
    edges, nodes = local.paths[path], local.path_nodes[path]
    heads = local.edge_index[0]
    steps = []
    for i, e in enumerate(edges):
        fixed = int(local.nodes[nodes[i + 1]]) if anchor == i + 1 else -1
        steps.append((int(local.edge_type[e]), int(heads[e]) == nodes[i], fixed))
    return tuple(steps)


def wilson_lower(support: float, body: float, z: float = _Z) -> float:
    r"""The Wilson score lower bound of a proportion ``support / body`` (0 when ``body`` is 0).

    .. math::
        \frac{\hat p + \frac{z^2}{2n} - z\sqrt{\frac{\hat p (1 - \hat p)}{n} +
        \frac{z^2}{4n^2}}}{1 + \frac{z^2}{n}}

    Args:
        support: Successes :math:`s`.
        body: Trials :math:`n`.
        z: The normal quantile. Default the one-sided 95 % quantile.
    """
    if body <= 0:
        return 0.0
    p = support / body
    centre = p + z * z / (2 * body)
    spread = z * math.sqrt(p * (1 - p) / body + z * z / (4 * body * body))
    return (centre - spread) / (1 + z * z / body)


class PatternBank:
    """Confidences of relation-path patterns over a training graph (module docstring).

    Counts are cached per ``(relation, pattern)``; reach rows are recomputed per call.

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
        if max_heads < 1:
            raise GraphDataError(f"max_heads: expected a positive int, got {max_heads!r}")
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
        self._num_facts = [
            float(self._adjacency[r][self._heads[r]].sum()) for r in range(num_relations)
        ]
        self._counts: dict[tuple[int, tuple[Pattern, ...]], tuple[float, float]] = {}

    def _reach(self, relation: int, pattern: Pattern) -> sp.csr_matrix:
        x = self._heads[relation]
        ones = np.ones(x.size, dtype=np.float32)
        reach = sp.csr_matrix((ones, (np.arange(x.size), x)), shape=(x.size, self.num_nodes))
        for rel, forward, anchor in pattern:
            step = self._adjacency[rel] if forward else self._transpose[rel]
            reach = reach @ step  # [X, N] walks of the prefix
            if anchor >= 0:  # a constant: keep the walks that end on it
                column = reach[:, [anchor]].tocoo()
                reach = sp.csr_matrix(
                    (column.data, (column.row, np.full(column.nnz, anchor))), shape=reach.shape
                )
            reach.data[:] = 1.0
        reach = reach.tocoo()
        keep = x[reach.row] != reach.col  # x != y
        return sp.csr_matrix(
            (reach.data[keep], (reach.row[keep], reach.col[keep])), shape=reach.shape
        )

    def counts(self, relation: int, patterns: Sequence[Pattern]) -> tuple[float, float]:
        r"""``(s, b)`` of the conjunction of ``patterns`` for head relation ``relation``."""
        key = (relation, tuple(sorted(patterns)))
        if key not in self._counts:
            joint = None
            for pattern in key[1]:
                reach = self._reach(relation, pattern)
                joint = reach if joint is None else joint.multiply(reach).tocsr()
            assert joint is not None
            truth = self._adjacency[relation][self._heads[relation]]  # [X, N]
            support = float(joint.multiply(truth).sum())
            self._counts[key] = (support, float(joint.sum()))
        return self._counts[key]

    def confidence(self, relation: int, patterns: Sequence[Pattern]) -> float:
        r""":math:`c = (s + 1) / (b + 2)` of the conjunction of ``patterns`` (module docstring)."""
        support, body = self.counts(relation, patterns)
        return (support + 1.0) / (body + 2.0)

    def agreement(self, relation: int, patterns: Sequence[Pattern]) -> float:
        r"""Dice :math:`2 s / (b + n_r)` of the conjunction of ``patterns`` (module docstring)."""
        support, body = self.counts(relation, patterns)
        return 2.0 * support / (body + self._num_facts[relation]) if support else 0.0


@dataclass(frozen=True)
class PatternChoice:
    """The outcome of :func:`pattern_search`.

    Attributes:
        chosen: Indices of the chosen candidate paths, in the order they were added.
        confidence: :math:`c` of the conjunction of the chosen patterns after each addition.
        num_patterns: How many distinct candidate patterns were scored.
    """

    chosen: tuple[int, ...]
    confidence: tuple[float, ...]
    num_patterns: int


def pattern_search(
    local: LocalStructure,
    bank: PatternBank,
    *,
    max_paths: int,
    score: str = "agreement",
    anchors: bool = True,
) -> PatternChoice:
    """Choose the explanation paths by mined pattern agreement (module docstring).

    Args:
        local: The target's local structure and candidate paths.
        bank: The training graph's :class:`PatternBank`.
        max_paths: The most paths (distinct patterns) in the explanation.
        score: ``"agreement"`` (Dice, :meth:`PatternBank.agreement`, default) or
            ``"confidence"`` (:meth:`PatternBank.confidence`).
        anchors: Also score each path's patterns with one intermediate node held constant.
            Default True.

    Returns:
        The :class:`PatternChoice` (empty when there is no candidate path).
    """
    if not local.paths:
        return PatternChoice((), (), 0)
    relation = local.target[1]
    value = bank.agreement if score == "agreement" else bank.confidence
    first: dict[Pattern, int] = {}
    for p, edges in enumerate(local.paths):  # candidates are ordered shortest first
        for anchor in [None, *range(1, len(edges))] if anchors else [None]:
            first.setdefault(path_pattern(local, p, anchor), p)
    distinct = list(first)
    single = [value(relation, [pi]) for pi in distinct]
    best = int(np.argmax(single))
    chosen_patterns = [distinct[best]]
    chosen, confidence = [first[distinct[best]]], [single[best]]
    while len(chosen) < max_paths:
        used = set(local.edge_mask(chosen).nonzero().flatten().tolist())
        options = []
        for pi in distinct:
            if pi in chosen_patterns or set(local.paths[first[pi]]) <= used:
                continue
            options.append((value(relation, [*chosen_patterns, pi]), pi))
        if not options:
            break
        top, pi = max(options, key=lambda o: o[0])
        if not top > confidence[-1]:
            break
        chosen_patterns.append(pi)
        chosen.append(first[pi])
        confidence.append(top)
    return PatternChoice(tuple(chosen), tuple(confidence), len(distinct))


def pattern_mask(local: LocalStructure, choice: PatternChoice) -> Tensor:
    """The edge mask ``[m]`` of the chosen paths."""
    return (
        local.edge_mask(choice.chosen)
        if choice.chosen
        else torch.zeros(local.num_edges, dtype=torch.bool, device=local.edge_type.device)
    )
