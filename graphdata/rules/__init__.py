r"""Horn rules of any body shape, their groundings by joins, and explanations scored against them.

A world-agnostic ground truth for explainers (issue #18): any :class:`~graphdata.KGDataset`
plus a rules file. Where :class:`graphdata.synthetic.HornRule` only holds chains, a
:class:`Rule` is any function-free Horn clause over binary atoms, with shared variables,
constants and inequality constraints, e.g.
``competitor(A,B) <- supplier_of(S,A), supplier_of(S,B), same_sector(A,B), A != B``.

The parts:

* :mod:`~graphdata.rules.syntax`: the rule language, its validation and :class:`Rule`
  (:func:`parse_rule`, :func:`parse_rules`, :func:`read_rules`);
* :mod:`~graphdata.rules.joins`: groundings of a rule for a target in a graph, and the triples a
  rule derives (:class:`RuleGraph`, :func:`groundings`, :func:`derived`);
* :mod:`~graphdata.rules.scoring`: an explanation's precision, recall and F1 against the best
  grounding, with facts that have two names compared in one canonical form
  (:func:`explanation_scores`, :func:`score_targets`, :func:`relation_classes`,
  :func:`canonical_form`).
"""

from graphdata.rules.joins import RuleGraph, derived, groundings
from graphdata.rules.scoring import (
    ExplanationScore,
    LengthSummary,
    TargetScores,
    canonical_form,
    explanation_scores,
    relation_classes,
    score_targets,
)
from graphdata.rules.syntax import (
    Atom,
    Inequality,
    Rule,
    RuleSyntaxError,
    Term,
    parse_rule,
    parse_rules,
    read_rules,
)

__all__ = [
    "Term",
    "Atom",
    "Inequality",
    "Rule",
    "RuleSyntaxError",
    "parse_rule",
    "parse_rules",
    "read_rules",
    "RuleGraph",
    "groundings",
    "derived",
    "ExplanationScore",
    "LengthSummary",
    "TargetScores",
    "relation_classes",
    "canonical_form",
    "explanation_scores",
    "score_targets",
]
