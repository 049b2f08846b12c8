r"""Explanations scored against planted ground truth: precision, recall, F1, Jaccard, rule hit.

The synthetic family KG (:func:`graphdata.synthetic.family_kg`) records, for every derived
triple, all groundings of the Horn rules that derive it (the spirit of Royalty-20k/30k, Halliwell,
Gandon and Lécué, WI-IAT 2021, doi:10.1145/3486622.3493921). The original KGExplainer evaluation
(Ma et al., ICLR 2025, arXiv 2404.03893) never measured against such ground truth.

**Convention for equivalent triples.** The world's length-1 rules make some triples say the same
thing: ``child_of(X,Y) <- parent(Y,X)`` and the symmetric ``spouse(X,Y) <- spouse(Y,X)``. An
explainer that picks ``(y, child_of, x)`` where the rule body reads ``(x, parent, y)`` names the
same fact, so both sides are first mapped to a canonical form: the length-1 rules join oriented
relations :math:`(r, \pm)` into classes, and a triple becomes the smallest (lexicographic)
rendering of itself over its class, :math:`\kappa(x, r, y) = \min\{(x, r', y) : (r', +) \sim
(r, +)\} \cup \{(y, r', x) : (r', -) \sim (r, +)\}`. Then, with :math:`\hat S` the canonical
explanation triples and :math:`T = \bigcup_e \kappa(\text{body}(e))` over all ground-truth
explanations :math:`e` of the target,

.. math::
    P = \frac{|\hat S \cap T|}{|\hat S|}, \quad R = \frac{|\hat S \cap T|}{|T|}, \quad
    F_1 = \frac{2PR}{P + R}, \quad J = \frac{|\hat S \cap T|}{|\hat S \cup T|}, \quad
    \text{hit} = \mathbb{1}\bigl[\exists e : \kappa(\text{body}(e)) \subseteq \hat S\bigr]

(:math:`0/0 = 0`). ``best_f1`` is the largest :math:`F_1` against a single explanation's body,
fairer when a target has several groundings (cousins through either parent) and the explainer
reports one; ``hit`` is the Recall@1-style success of recovering one full rule body.

**Unfolding** (``unfold=True``, :func:`unfold_triples`). The training graph also holds derived
triples (``grandparent``, ``uncle``, ...), so ``grandparent(x, z), parent(z, w)`` is a valid
two-step reason for ``great_grandparent(x, w)`` that names no rule body. Unfolding replaces each
derived explanation triple by the body of its first grounding of length :math:`\ge 2` (rules in
the world's order, so the shortest rule first), recursively, and scores the result: the
rule-level reason that the explanation stands for. It never looks at the target's own
groundings; the raw score (``unfold=False``) stays the primary figure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from graphdata.errors import GraphDataError
from graphdata.synthetic import FamilyKG, HornRule
from graphdata.typing import LabeledTriple

__all__ = [
    "GroundTruthScores",
    "canonical_triple",
    "ground_truth_scores",
    "equivalence_classes",
    "unfold_triples",
]


def equivalence_classes(rules: Sequence[HornRule]) -> dict[tuple[str, bool], frozenset]:
    """Classes of oriented relations joined by the length-1 rules.

    ``(r, False)`` reads a triple forwards, ``(r, True)`` backwards; a rule
    ``head(X,Y) <- a(Y,X)`` joins ``(head, False)`` with ``(a, True)`` (and the flipped pair).

    Args:
        rules: The world's rules; longer rules are ignored.

    Returns:
        Each oriented relation that occurs in a length-1 rule, mapped to its class.

    Examples:
        >>> rule = HornRule.from_string("child_of(X,Y) <- parent(Y,X)")
        >>> sorted(equivalence_classes([rule])[("child_of", False)])
        [('child_of', False), ('parent', True)]
    """
    links: dict[tuple[str, bool], set[tuple[str, bool]]] = {}
    for rule in rules:
        if rule.length != 1:
            continue
        atom = rule.body[0]
        for flip in (False, True):
            a, b = (rule.head, flip), (atom.relation, flip != atom.inverse)
            links.setdefault(a, set()).add(b)
            links.setdefault(b, set()).add(a)
    classes: dict[tuple[str, bool], frozenset] = {}
    for start in links:
        if start in classes:
            continue
        seen, stack = {start}, [start]
        while stack:
            for nxt in links[stack.pop()] - seen:
                seen.add(nxt)
                stack.append(nxt)
        group = frozenset(seen)
        for member in group:
            classes[member] = group
    return classes


def canonical_triple(
    triple: Sequence[str], classes: dict[tuple[str, bool], frozenset]
) -> LabeledTriple:
    r"""The canonical form :math:`\kappa` of a triple (module docstring).

    Args:
        triple: ``(head, relation, tail)`` labels.
        classes: From :func:`equivalence_classes`.

    Returns:
        The smallest rendering of the triple over its class (itself when it has none).

    Examples:
        >>> classes = equivalence_classes([HornRule.from_string("spouse(X,Y) <- spouse(Y,X)")])
        >>> canonical_triple(("bo", "spouse", "al"), classes)
        ('al', 'spouse', 'bo')
    """
    x, r, y = triple
    group = classes.get((r, False))
    if group is None:
        return (x, r, y)
    return min((y, rel, x) if flipped else (x, rel, y) for rel, flipped in group)


@dataclass(frozen=True)
class GroundTruthScores:
    r"""Agreement of one explanation with the ground truth of its target.

    Attributes:
        precision: :math:`P`.
        recall: :math:`R` against the union of all ground-truth bodies.
        f1: :math:`F_1`.
        jaccard: :math:`J`.
        hit: Whether one full rule body is inside the explanation.
        best_f1: The best :math:`F_1` against a single rule body.
        rule_length: Length of the target's shortest ground-truth explanation.
        num_predicted: :math:`|\hat S|` (canonical triples).
        num_true: :math:`|T|`.
    """

    precision: float
    recall: float
    f1: float
    jaccard: float
    hit: bool
    best_f1: float
    rule_length: int
    num_predicted: int
    num_true: int


def _f1(predicted: set, true: set) -> tuple[float, float, float]:
    common = len(predicted & true)
    precision = common / len(predicted) if predicted else 0.0
    recall = common / len(true) if true else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def unfold_triples(
    triples: Iterable[Sequence[str]], world: FamilyKG, *, max_depth: int = 8
) -> tuple[LabeledTriple, ...]:
    r"""Replace derived triples by the bodies of their groundings, recursively (module docstring).

    With :math:`\mathcal{E}(\tau)` the groundings of :math:`\tau` in rule order,
    :math:`u(\tau) = \bigcup_{b \in \text{body}(e^*)} u(b)` for the first
    :math:`e^* \in \mathcal{E}(\tau)` of length :math:`\ge 2`, and :math:`u(\tau) = \{\tau\}`
    for a base fact or a triple derived only by length-1 rules (equivalent forms, handled by
    :func:`canonical_triple`).

    Args:
        triples: Labelled triples of the world's graph.
        world: The synthetic world (its recorded groundings).
        max_depth: Most nested unfoldings (a guard for recursive rules). Default 8.

    Returns:
        The unfolded triples, first occurrence order, without repeats.

    Examples:
        >>> from graphdata.synthetic import family_kg
        >>> world = family_kg(40, seed=0)
        >>> target = next(t for t in world.derived_triples("train") if t[1] == "grandparent")
        >>> unfold_triples([target], world) == world.explanations_for(target)[0].path
        True
    """

    def expand(triple: LabeledTriple, depth: int) -> list[LabeledTriple]:
        if depth >= max_depth:
            return [triple]
        for grounding in world.explanations.get(triple, ()):
            if grounding.length >= 2:
                return [u for b in grounding.path for u in expand(tuple(b), depth + 1)]
        return [triple]

    out = [u for t in triples for u in expand(tuple(t), 0)]
    return tuple(dict.fromkeys(out))


def ground_truth_scores(
    predicted: Iterable[Sequence[str]],
    world: FamilyKG,
    target: Sequence[str],
    *,
    unfold: bool = False,
) -> GroundTruthScores:
    """Score an explanation's triples against the planted explanations of ``target``.

    Args:
        predicted: The explanation's labelled triples, as stored in the graph.
        world: The synthetic world (its rules and recorded explanations).
        target: The explained triple, ``(head, relation, tail)`` labels.
        unfold: Score the explanation after :func:`unfold_triples` (derived triples replaced
            by the rule bodies they stand for). Default ``False``: the raw triples.

    Returns:
        The :class:`GroundTruthScores`.

    Raises:
        GraphDataError: If the target is a base fact (it has no explanation to compare with).
        UnknownLabelError: If a label of the target is not in the world.

    Examples:
        >>> from graphdata.synthetic import family_kg
        >>> world = family_kg(40, seed=0)
        >>> target = next(t for t in world.derived_triples("test") if t[1] == "grandparent")
        >>> body = world.explanations_for(target)[0].path
        >>> ground_truth_scores(body, world, target).hit
        True
    """
    explanations = world.explanations_for(target)
    if not explanations:
        raise GraphDataError(
            f"target: {tuple(target)!r} is a base fact of the world, which has no planted "
            "explanation; score derived triples (world.derived_triples(split))"
        )
    classes = equivalence_classes(world.rules)
    if unfold:
        predicted = unfold_triples(predicted, world)
    guess = {canonical_triple(t, classes) for t in predicted}
    bodies = [{canonical_triple(t, classes) for t in e.path} for e in explanations]
    true = set().union(*bodies)
    precision, recall, f1 = _f1(guess, true)
    union = guess | true
    return GroundTruthScores(
        precision=precision,
        recall=recall,
        f1=f1,
        jaccard=len(guess & true) / len(union) if union else 0.0,
        hit=any(body <= guess for body in bodies),
        best_f1=max(_f1(guess, body)[2] for body in bodies),
        rule_length=min(e.length for e in explanations),
        num_predicted=len(guess),
        num_true=len(true),
    )
