r"""Explanations scored against the groundings of Horn rules: P, R and F1 per target.

Part of :mod:`graphdata.rules`; the groundings are found by :mod:`graphdata.rules.joins`.

**Scoring** (:func:`explanation_scores`) uses the definition of
:mod:`kg.explain.ground_truth`: set overlap of labelled triples, :math:`0/0 = 0`,

.. math::
    P = \frac{|S \cap B|}{|S|}, \quad R = \frac{|S \cap B|}{|B|}, \quad
    F_1 = \frac{2PR}{P + R},

with :math:`S` the set of explanation triples and :math:`B` the set of body triples of one
grounding, taken at the grounding with the highest :math:`F_1` (ties: the shortest body, then
rule order, then the sorted grounding order).

**Equivalent triples.** A fact can have two names: under ``roams_with(X,Y) <- roams_with(Y,X)``
the triples ``(a, roams_with, b)`` and ``(b, roams_with, a)`` hold together, and of an inverse
pair (every ``hosts(o,m)`` has ``hosted_by(m,o)`` and back) either triple says the other. An
explanation that names the fact one way where the grounding names it the other way has found it.
Both sets are therefore compared in a canonical form (:func:`relation_classes`,
:func:`canonical_form`). Oriented relations :math:`(r, +)` (a triple read forwards) and
:math:`(r, -)` (backwards) are joined when they imply each other:

* through the rules: a length-1 rule ``h(X,Y) <- b(Y,X)`` makes :math:`(b, -)` imply
  :math:`(h, +)` (and :math:`(b, +)` imply :math:`(h, -)`), and two oriented relations are
  joined when each implies the other along these rules (a strongly connected component: a
  symmetric rule, or an inverse pair written both ways);
* through what the caller states: ``symmetric`` relations :math:`r` (joining :math:`(r, +)` with
  :math:`(r, -)`) and ``inverse_pairs`` :math:`(r, s)` with :math:`(x, r, y) \in G
  \Leftrightarrow (y, s, x) \in G` (joining :math:`(r, +)` with :math:`(s, -)`), such as
  :attr:`graphdata.worlds.World.symmetric` and :attr:`~graphdata.worlds.World.inverse_pairs`.

A one-way rule joins nothing: under ``plays_for(P,T) <- captain_of(P,T)`` a ``plays_for`` fact
does not say that ``P`` captains ``T``. With :math:`C(r, +)` the class of :math:`(r, +)`, a triple
is named by its smallest rendering,

.. math::
    \kappa(x, r, y) = \min\bigl(\{(x, r', y) : (r', +) \in C(r, +)\} \cup
    \{(y, r', x) : (r', -) \in C(r, +)\}\bigr),

and :math:`S` and :math:`B` above are :math:`\kappa(S)` and :math:`\kappa(B)` (a fact named
both ways counts once). This is the convention of :mod:`kg.explain.ground_truth` on the family
world, which joins along every length-1 rule of that world (all of them equivalences there).
``equivalent=False`` compares the triples as written (the strict reading).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphdata.errors import GraphDataError
from graphdata.rules.joins import RuleGraph, _as_graph, _check_triple, groundings
from graphdata.rules.syntax import Rule, _check_rule
from graphdata.typing import LabeledTriple

if TYPE_CHECKING:
    from graphdata.tripleset import TripleSet


@dataclass(frozen=True)
class ExplanationScore:
    """An explanation scored against the best-matching grounding of its target.

    Attributes:
        precision: :math:`P` (module docstring).
        recall: :math:`R`.
        f1: :math:`F_1`, the largest over all groundings.
        rule: The rule of the best-matching grounding.
        rule_length: That rule's body length.
        grounding: The best-matching grounding's body triples.
        num_groundings: How many groundings the target has over all rules.
        target_length: The body length of the target's shortest grounding: the ``Ln`` bucket
            of :func:`score_targets`, a property of the target alone (not of the explanation).
    """

    precision: float
    recall: float
    f1: float
    rule: Rule
    rule_length: int
    grounding: tuple[LabeledTriple, ...]
    num_groundings: int
    target_length: int


def _prf(predicted: set[LabeledTriple], true: set[LabeledTriple]) -> tuple[float, float, float]:
    common = len(predicted & true)
    precision = common / len(predicted) if predicted else 0.0
    recall = common / len(true) if true else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


OrientedRelation = tuple[str, bool]
"""A relation read forwards (``False``: the pair ``(x, y)`` of ``(x, r, y)``) or backwards."""


def _one_step(rule: Rule) -> tuple[str, str, bool] | None:
    """``(body relation, head relation, flipped)`` of a rule ``h(X,Y) <- b(X,Y)`` or ``b(Y,X)``."""
    head, body = rule.head, rule.body
    if len(body) != 1 or rule.inequalities:
        return None
    h1, h2, (b1, b2) = head.first, head.second, (body[0].first, body[0].second)
    if not (h1.is_variable and h2.is_variable and b1.is_variable and b2.is_variable):
        return None
    if h1.name == h2.name:
        return None
    if (b1.name, b2.name) == (h1.name, h2.name):
        return body[0].relation, head.relation, False
    if (b1.name, b2.name) == (h2.name, h1.name):
        return body[0].relation, head.relation, True
    return None


def relation_classes(
    rules: Rule | Iterable[Rule] = (),
    *,
    symmetric: Iterable[str] = (),
    inverse_pairs: Iterable[tuple[str, str]] = (),
) -> dict[OrientedRelation, frozenset[OrientedRelation]]:
    r"""Classes of oriented relations that name the same facts (module docstring, "Equivalent").

    Two oriented relations are joined when the length-1 rules make each imply the other (a
    strongly connected component of the implications, e.g. ``s(X,Y) <- s(Y,X)``), or when the
    caller states it (``symmetric``, ``inverse_pairs``); the classes are the transitive closure
    of both. Rules with a constant, a repeated variable or a constraint join nothing.

    Args:
        rules: The rules (longer rules are ignored).
        symmetric: Relations :math:`r` with :math:`(x, r, y) \in G \Leftrightarrow (y, r, x)
            \in G`.
        inverse_pairs: Pairs :math:`(r, s)` with :math:`(x, r, y) \in G \Leftrightarrow
            (y, s, x) \in G`.

    Returns:
        Each oriented relation in a class of two or more, mapped to its class.

    Examples:
        >>> from graphdata.rules import parse_rules
        >>> rules = parse_rules('''
        ... hosts(O,M) <- hosted_by(M,O)
        ... roams(X,Y) <- roams(Y,X)
        ... plays_for(P,T) <- captain_of(P,T)
        ... ''')
        >>> sorted(relation_classes(rules)[("roams", False)])
        [('roams', False), ('roams', True)]
        >>> ("hosts", False) in relation_classes(rules)  # one way only
        False
        >>> stated = relation_classes(rules, inverse_pairs=[("hosted_by", "hosts")])
        >>> sorted(stated[("hosts", False)])
        [('hosted_by', True), ('hosts', False)]
    """
    implies: dict[OrientedRelation, set[OrientedRelation]] = {}
    for rule in _check_rules(rules):
        step = _one_step(rule)
        if step is None:
            continue
        body, head, flipped = step
        for f in (False, True):
            implies.setdefault((body, f != flipped), set()).add((head, f))

    def reach(start: OrientedRelation) -> set[OrientedRelation]:
        seen, stack = {start}, [start]
        while stack:
            for nxt in implies.get(stack.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen

    parent: dict[OrientedRelation, OrientedRelation] = {}

    def find(x: OrientedRelation) -> OrientedRelation:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def join(a: OrientedRelation, b: OrientedRelation) -> None:
        parent[find(a)] = find(b)

    reached = {node: reach(node) for node in implies}
    for a, ahead in reached.items():
        for b in ahead:
            if b != a and a in reached.get(b, ()):
                join(a, b)
    for r in symmetric:
        join((str(r), False), (str(r), True))
    for pair in inverse_pairs:
        r, s = (str(x) for x in pair)
        join((r, False), (s, True))
        join((r, True), (s, False))
    groups: dict[OrientedRelation, set[OrientedRelation]] = {}
    for node in list(parent):
        groups.setdefault(find(node), set()).add(node)
    return {node: frozenset(group) for group in groups.values() if len(group) > 1 for node in group}


def canonical_form(
    triple: Sequence[str], classes: Mapping[OrientedRelation, frozenset[OrientedRelation]]
) -> LabeledTriple:
    r"""The canonical name :math:`\kappa` of a triple (module docstring, "Equivalent triples").

    Args:
        triple: ``(head, relation, tail)`` labels.
        classes: From :func:`relation_classes`.

    Returns:
        The smallest rendering of the triple over its relation's class (itself when it has none).

    Examples:
        >>> classes = relation_classes(symmetric=["roams"])
        >>> canonical_form(("b", "roams", "a"), classes)
        ('a', 'roams', 'b')
    """
    x, r, y = triple
    group = classes.get((r, False))
    if group is None:
        return (x, r, y)
    return min((y, rel, x) if flipped else (x, rel, y) for rel, flipped in group)


def _check_rules(rules: Rule | Iterable[Rule]) -> list[Rule]:
    if isinstance(rules, Rule):
        return [rules]
    return [_check_rule(rule, "rules") for rule in rules]


def _classes(
    rules: list[Rule],
    equivalent: bool,
    symmetric: Iterable[str],
    inverse_pairs: Iterable[tuple[str, str]],
) -> dict[OrientedRelation, frozenset[OrientedRelation]]:
    if not equivalent:
        return {}
    if isinstance(symmetric, str):
        raise GraphDataError(
            f"symmetric: expected relation names, got the string {symmetric!r}; pass a list, "
            f"[{symmetric!r}]"
        )
    pairs = list(inverse_pairs)
    for pair in pairs:
        if isinstance(pair, str) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise GraphDataError(
                f"inverse_pairs: expected (relation, relation) pairs, got {pair!r}"
            )
    return relation_classes(rules, symmetric=symmetric, inverse_pairs=pairs)


def _score(
    explanation: set[LabeledTriple],
    target: LabeledTriple,
    rules: list[Rule],
    graph: RuleGraph,
    classes: Mapping[OrientedRelation, frozenset[OrientedRelation]],
) -> ExplanationScore | None:
    best: tuple[tuple[float, int], ExplanationScore] | None = None
    count, shortest = 0, 0
    named = {canonical_form(t, classes) for t in explanation}
    for rule in rules:
        for body in groundings(rule, target, graph):
            count += 1
            shortest = rule.length if count == 1 else min(shortest, rule.length)
            p, r, f1 = _prf(named, {canonical_form(t, classes) for t in body})
            key = (f1, -rule.length)  # higher F1 first, then the shorter body
            if best is None or key > best[0]:
                best = (key, ExplanationScore(p, r, f1, rule, rule.length, body, 0, 0))
    if best is None:
        return None
    s = best[1]
    return ExplanationScore(
        s.precision, s.recall, s.f1, s.rule, s.rule_length, s.grounding, count, shortest
    )


def explanation_scores(
    explanation_triples: Iterable[Sequence[str]],
    target: Sequence[str],
    rules: Rule | Iterable[Rule],
    graph: RuleGraph | TripleSet | Iterable[Sequence[str]],
    *,
    symmetric: Iterable[str] = (),
    inverse_pairs: Iterable[tuple[str, str]] = (),
    equivalent: bool = True,
) -> ExplanationScore | None:
    """Score an explanation against the best-matching grounding of its target (module docstring).

    Args:
        explanation_triples: The explanation's labelled triples (repeats count once).
        target: The explained ``(head, relation, tail)`` labels.
        rules: The rules (a single :class:`Rule` is accepted too).
        graph: The graph the groundings are found in, usually the training triples; a
            :class:`RuleGraph` when scoring many targets.
        symmetric: Relations known to be symmetric in ``graph``, beyond what the rules say
            (:func:`relation_classes`). Default none.
        inverse_pairs: Relation pairs known to be each other's inverse. Default none.
        equivalent: Compare the canonical names of the triples (module docstring, "Equivalent
            triples"); ``False`` compares them as written. Default ``True``.

    Returns:
        The :class:`ExplanationScore` (all zeros for an empty explanation, matched to the shortest
        grounding), or ``None`` when no rule grounds the target in the graph: there is no ground
        truth to compare with, and such targets should be left out of the means.

    Examples:
        >>> from graphdata.rules import parse_rules
        >>> rules = parse_rules("gp(X,Z) <- p(X,Y), p(Y,Z)")
        >>> graph = [("a", "p", "b"), ("b", "p", "c"), ("a", "q", "c")]
        >>> s = explanation_scores([("a", "p", "b"), ("a", "q", "c")], ("a", "gp", "c"), rules,
        ...                        graph)
        >>> s.precision, s.recall, s.f1
        (0.5, 0.5, 0.5)
        >>> explanation_scores([], ("c", "gp", "a"), rules, graph) is None
        True
    """
    checked = _check_rules(rules)
    goal = _check_triple(target, "target")
    if isinstance(explanation_triples, (str, bytes)):
        raise GraphDataError("explanation_triples: expected label triples, got a string")
    explanation = {_check_triple(t, "explanation_triples") for t in explanation_triples}
    classes = _classes(checked, equivalent, symmetric, inverse_pairs)
    return _score(explanation, goal, checked, _as_graph(graph), classes)


@dataclass(frozen=True)
class LengthSummary:
    """Mean scores over the targets whose shortest grounding has one body length.

    Attributes:
        precision: Mean :math:`P`.
        recall: Mean :math:`R`.
        f1: Mean :math:`F_1`.
        count: Number of targets.
    """

    precision: float
    recall: float
    f1: float
    count: int


@dataclass(frozen=True)
class TargetScores:
    """Scores of many explanations: per target and per rule length.

    Attributes:
        rows: Each target mapped to its :class:`ExplanationScore`, or ``None`` when no rule
            grounds it (left out of every mean).
        by_length: Body length ``n`` (the ``Ln`` bucket) mapped to the means over the targets
            whose shortest grounding has that length (:attr:`ExplanationScore.target_length`:
            the bucket depends on the target and the rules, never on the explanation), in
            increasing order.
        overall: The means over all grounded targets (``count`` 0 and zeros when none).
    """

    rows: dict[LabeledTriple, ExplanationScore | None]
    by_length: dict[int, LengthSummary]
    overall: LengthSummary


def _mean(scores: Sequence[ExplanationScore]) -> LengthSummary:
    n = len(scores)
    if not n:
        return LengthSummary(0.0, 0.0, 0.0, 0)
    return LengthSummary(
        sum(s.precision for s in scores) / n,
        sum(s.recall for s in scores) / n,
        sum(s.f1 for s in scores) / n,
        n,
    )


def score_targets(
    explanations: Mapping[Sequence[str], Iterable[Sequence[str]]],
    rules: Rule | Iterable[Rule],
    graph: RuleGraph | TripleSet | Iterable[Sequence[str]],
    *,
    symmetric: Iterable[str] = (),
    inverse_pairs: Iterable[tuple[str, str]] = (),
    equivalent: bool = True,
) -> TargetScores:
    """Score many explanations (:func:`explanation_scores`) and average them per rule length.

    Args:
        explanations: Each target ``(head, relation, tail)`` mapped to its explanation triples.
        rules: The rules (a single :class:`Rule` is accepted too).
        graph: The graph the groundings are found in (indexed once here).
        symmetric: As for :func:`explanation_scores`.
        inverse_pairs: As for :func:`explanation_scores`.
        equivalent: As for :func:`explanation_scores`.

    Returns:
        The :class:`TargetScores`.

    Examples:
        >>> from graphdata.rules import parse_rules
        >>> rules = parse_rules('''
        ... gp(X,Z) <- p(X,Y), p(Y,Z)
        ... sib(X,Y) <- p(P,X), p(P,Y), X != Y
        ... ''')
        >>> graph = [("a", "p", "b"), ("b", "p", "c"), ("b", "p", "d")]
        >>> table = score_targets({("a", "gp", "c"): [("a", "p", "b")],
        ...                        ("c", "sib", "d"): [("b", "p", "c"), ("b", "p", "d")],
        ...                        ("d", "gp", "a"): []}, rules, graph)
        >>> table.by_length[2].f1, table.by_length[2].count, table.rows[("d", "gp", "a")]
        (0.8333333333333333, 2, None)
    """
    checked = _check_rules(rules)
    if not isinstance(explanations, Mapping):
        raise GraphDataError(
            f"explanations: expected a mapping target -> explanation triples, got "
            f"{type(explanations).__name__}"
        )
    index = _as_graph(graph)
    classes = _classes(checked, equivalent, symmetric, inverse_pairs)
    rows: dict[LabeledTriple, ExplanationScore | None] = {}
    for target, triples in explanations.items():
        goal = _check_triple(target, "explanations")
        found = {_check_triple(t, "explanations") for t in triples}
        rows[goal] = _score(found, goal, checked, index, classes)
    scored = [s for s in rows.values() if s is not None]
    lengths = sorted({s.target_length for s in scored})
    by_length = {n: _mean([s for s in scored if s.target_length == n]) for n in lengths}
    return TargetScores(rows, by_length, _mean(scored))
