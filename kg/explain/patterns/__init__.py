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

The parts, in the order a target meets them:

* :mod:`~kg.explain.patterns.bank`: the pattern :math:`\pi` of a path, its counts over the
  training graph and its agreement :math:`D_\pi` with the target relation (:class:`PatternBank`);
* :mod:`~kg.explain.patterns.search`: the explanation, the first pick and its conjuncts, ties,
  orientation (:func:`pattern_search`, :func:`pattern_mask`);
* :mod:`~kg.explain.patterns.rule_sets`: heads with several bodies, the rule set :math:`B_r` and
  the picks it corrects (the member swap, the mirror, the copy, folding);
* :mod:`~kg.explain.patterns.conditions`: an atom on a constant at a node of a chosen path, an
  end's value that differs from the other end (distinct values), and conditioned picks;
* :mod:`~kg.explain.patterns.significance`: the tests (:func:`significantly_better`, and the
  binomial admission of a pattern at level
  :data:`~kg.explain.patterns.significance.ALPHA`).

Only the names below are public; the modules are the search's parts.

What is left. The counts still cannot tell a derived relation from a base one where a path through
the derived relation agrees as well as the bodies' union: a shortcut whose relation is held out
nowhere joins every fact of both bodies (:math:`D = 1`, it stays the pick); a body through another
fact of the target relation is never folded into, since the pool has no such member (media's
``band_nationality`` is explained by the unfolding ``member_of, born_in, located_in`` of a member's
``nationality``). The pool is a draw: a body of a small share of the facts can miss it (software's
``own_alert``, 12 % of the ``alerted`` facts, entered it with bank seeds 0 and 3, not with 1, 2 or
4); such a body is a member where a target's candidates show it, but not where the pick is itself
admissible. The counts are over walks, so a walk that leaves the head and comes back joins every
pair of a body it then follows: the wine world's ``blend_of <= labelled_variety`` is inside
``from_appellation, from_appellation^-1, labelled_variety``, adds no pair to the rule set's
union and is no member (session 38, "Heads with several bodies", the most confident member). A
head whose bodies share an atom, :math:`r \Leftarrow a \land (b \lor c)`, is explained by
:math:`a` alone: a conjunct of one body drops the other body's facts and lowers :math:`S` (the
held-out clinical world's ``dose_adjusted``, session 25: F1 at length 3 .18). A rule set at the
second position (the union of pool patterns conjoined with :math:`\pi_1`, admitted as the rule set
is) raised it to .34 but added a path to complete bodies elsewhere (geography's ``visa_free``), and
was not kept. A branch of two atoms or more off every path from :math:`h` to :math:`t`, or one on
the head, is no candidate (:mod:`~kg.explain.patterns.conditions` takes one atom at a node of a
path); a distinct value only where one end's relation is a function
(:mod:`~kg.explain.patterns.conditions`, "Distinct values"), not between two other nodes
(parliament's ``cross_party``, ``X != Y`` between an endorsing party and the member's own). Two
unions can be equal: ``cousin``'s set reads the sibling step from the second parent
(``sister(Z, Y)``) where the rule reads it from the first (``brother(Y, Z)``), and ``uncle``'s by
marriage is reported with ``spouse(Y, X)`` where the rule reads ``spouse(X, Y)`` (the orientation
step keeps the reading that agrees significantly better). Measured before the rule sets and not kept
(session 18), each lowering the F1 of a tuning world: the precision :math:`s / b`; Dice with the
facts that another candidate joins taken as explained; :math:`D^{\mathrm{cw}}` as the score
(:mod:`~kg.explain.patterns.search`, "Ties": geography .83 -> .69 at length 3 with :math:`\hat
b_0`); dropping a candidate whose cycle with the target agrees with one of its own relations as well
as with :math:`r`, or one through a fact that another candidate derives.
"""

from kg.explain.patterns.bank import Atom, Pattern, PatternBank, path_pattern
from kg.explain.patterns.search import PatternChoice, pattern_mask, pattern_search
from kg.explain.patterns.significance import significantly_better

__all__ = [
    "Atom",
    "Pattern",
    "PatternBank",
    "PatternChoice",
    "path_pattern",
    "pattern_mask",
    "pattern_search",
    "significantly_better",
]
