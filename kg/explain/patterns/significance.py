r"""Statistical tests of the pattern search: admitting a pattern, comparing two sets of pairs.

Two questions recur in :mod:`kg.explain.patterns`, each answered by a test at level
:data:`ALPHA` on the counts of :mod:`kg.explain.patterns.bank` (:math:`D = 2 s / (b + n_r)`, the
agreement of a set of pairs with the :math:`n_r` facts of the head relation :math:`r`):

* **Does a pattern add or remove the right pairs?** A pattern that adds :math:`d` pairs to a
  union of agreement :math:`D`, :math:`d_1` of them facts, raises :math:`D` iff the share of
  facts among them exceeds :math:`D / 2`; it is admitted to a rule set when the one-sided
  binomial test rejects the opposite, :math:`P(\mathrm{Bin}(d, D / 2) \ge d_1) < \alpha`
  (:func:`_disjunct_p_value`; the mirror image, for a conjunct that removes pairs, is in
  :func:`~kg.explain.patterns.search.pattern_search`).
* **Does one set of pairs agree significantly better than another?**
  (:func:`significantly_better`): a paired test on the discordant pairs, McNemar's argument
  weighted by what each pair does to :math:`D`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import binom, norm

from kg.explain.patterns._bits import _dice, _intersect

if TYPE_CHECKING:
    from kg.explain.patterns.bank import Pattern, PatternBank

#: Level of the one-sided binomial test that admits a further pattern (module docstring): the
#: conventional 5 %, not tuned.
ALPHA = 0.05
#: The one-sided normal quantile of :data:`ALPHA` that :func:`significantly_better` compares
#: its statistic with (computed once: scipy's ``isf`` costs about 90 microseconds a call, and a
#: target of a dense graph makes some 700 tests).
_THRESHOLD = float(norm.isf(ALPHA))


def _disjunct_p_value(added_true: float, added: float, dice: float) -> float:
    r"""The admission test's p-value :math:`P(\mathrm{Bin}(d, D / 2) \ge d_1)` (1 when d = 0).

    ``added_true`` is :math:`d_1`, the facts among the :math:`d` = ``added`` pairs a pattern adds
    to a union of agreement :math:`D` = ``dice`` (:mod:`~kg.explain.patterns.rule_sets`, "Heads with
    several bodies").
    """
    return float(binom.sf(added_true - 1, added, dice / 2)) if added > 0 else 1.0


def _weakest_member(
    union: tuple[float, float], rests: Sequence[tuple[float, float]], facts: float
) -> int | None:
    r"""The member that fails the admission test given the others, of largest p-value, or None.

    The backward elimination of a rule set (:mod:`~kg.explain.patterns.rule_sets`, "Heads with
    several bodies"): ``union`` is :math:`(s, b)` of the members' union, ``rests[i]`` that of
    the union without member :math:`i`; member :math:`i` fails when :math:`D_B \le D_{B
    \setminus i}` or :math:`P(\mathrm{Bin}(b - b_i, D_{B \setminus i} / 2) \ge s - s_i) \ge
    \alpha`. Of several, the first of largest p-value.
    """
    value = _dice(*union, facts)
    worst: tuple[float, int] | None = None
    for i, (s_rest, b_rest) in enumerate(rests):
        rest_value = _dice(s_rest, b_rest, facts)
        p = 1.0
        if value > rest_value:
            p = _disjunct_p_value(union[0] - s_rest, union[1] - b_rest, rest_value)
        if p >= ALPHA and (worst is None or p > worst[0]):
            worst = (p, i)
    return None if worst is None else worst[1]


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
    return _discordance_test(
        bank.counts(relation, better),
        bank.counts(relation, than),
        lambda: _both_counts(bank, relation, better, than),
        bank.num_facts(relation),
    )


def _both_counts(
    bank: PatternBank, relation: int, better: Sequence[Pattern], than: Sequence[Pattern]
) -> tuple[float, float]:
    """:meth:`PatternBank.counts` of ``[*better, *than]``: the pairs both conjunctions join.

    Where ``than`` adds one pattern to ``better`` (a pick's options share the chosen
    patterns), the pairs of ``better`` are looked up in that pattern's walk
    (:meth:`PatternBank._extended_counts`): the same integers.
    """
    extra = [pattern for pattern in than if pattern not in better]
    if len(extra) != 1:
        return bank.counts(relation, [*better, *than])
    return bank._extended_counts(relation, better, bank._joint_keys(relation, better), extra[0])


def _union_significantly_better(
    bank: PatternBank, relation: int, better: Sequence[Pattern], than: Sequence[Pattern]
) -> bool:
    """:func:`significantly_better` for the unions of ``better`` and of ``than``."""
    return _keys_significantly_better(
        bank, relation, bank._union_keys(relation, better), bank._union_keys(relation, than)
    )


def _keys_significantly_better(
    bank: PatternBank, relation: int, better: np.ndarray, than: np.ndarray
) -> bool:
    """:func:`significantly_better` for two sets of pairs, by their sorted linear keys."""
    return _discordance_test(
        bank._key_counts(relation, better),
        bank._key_counts(relation, than),
        lambda: bank._key_counts(relation, _intersect(better, than)),
        bank.num_facts(relation),
    )


def _discordance_test(
    better: tuple[float, float],
    than: tuple[float, float],
    both: Callable[[], tuple[float, float]],
    facts: float,
) -> bool:
    r"""The test of :func:`significantly_better` from ``(s, b)`` of two pair sets.

    ``better`` and ``than`` are ``(s, b)``, ``both()`` gives that of their intersection;
    ``facts`` is :math:`n_r`. The statistic does not depend on the intersection
    (:math:`f_1 - f_0 = s_1 - s_0`, and so for the other pairs), and the variance is largest
    when the two share no pair and smallest when they share as many facts and as many other
    pairs as the smaller of the two holds, so the intersection is counted only where these
    do not decide the test: a statistic :math:`\le 0` fails it, one that passes with the
    largest variance passes with any, and one that fails with the smallest fails with any.
    The counts are integers (exact in floats) and each rounding is monotone, so the skipped
    cases give the same answer as the full test (tested).
    """
    d = _dice(*than, facts)
    statistic, most = _discordance(better, than, (0.0, 0.0), d)
    if statistic <= 0:
        return False
    threshold = _THRESHOLD
    if statistic / math.sqrt(most) > threshold:
        return True
    facts_shared = min(better[0], than[0])
    shared = (facts_shared, facts_shared + min(better[1] - better[0], than[1] - than[0]))
    least = _discordance(better, than, shared, d)[1]
    if least > 0 and statistic / math.sqrt(least) <= threshold:
        return False
    statistic, variance = _discordance(better, than, both(), d)
    if variance <= 0:
        return False
    return bool(statistic / math.sqrt(variance) > threshold)


def _discordance(
    better: tuple[float, float], than: tuple[float, float], both: tuple[float, float], d: float
) -> tuple[float, float]:
    """The statistic and variance of :func:`significantly_better` (``d``: D of ``than``)."""
    f1, f0 = better[0] - both[0], than[0] - both[0]
    o1, o0 = better[1] - both[1] - f1, than[1] - both[1] - f0
    variance = (2 - d) ** 2 * (f0 + f1) + d**2 * (o0 + o1)
    return (2 - d) * (f1 - f0) - d * (o1 - o0), variance
