"""What the per-world tests share: a world's triples, and the index of a nested-loop join.

``test_world_commerce.py``, ``test_world_clinical.py``, ``test_world_legal.py``,
``test_world_energy.py``, ``test_world_agriculture.py``, ``test_world_maritime.py``,
``test_world_telecom.py``, ``test_world_aviation.py``, ``test_world_publishing.py``,
``test_world_banking.py``, ``test_world_railways.py``, ``test_world_parliament.py``,
``test_world_construction.py``, ``test_world_ecology.py``, ``test_world_insurance.py``,
``test_world_schools.py``, ``test_world_heritage.py``, ``test_world_wine.py`` and
``test_world_transit.py`` recompute their world's groundings by nested loops over the facts,
without :mod:`graphdata.rules`; the loops are each world's own, the bookkeeping around them (and
the hub and subgraph-size counts) is here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from functools import cache

import numpy as np

from graphdata.typing import LabeledTriple
from graphdata.worlds import World, world
from graphdata.worlds.base import SPLITS

#: Rule name -> head triple -> the groundings' body triples in body order.
Groundings = dict[str, dict[LabeledTriple, set[tuple[LabeledTriple, ...]]]]


@cache
def default_world(name: str, seed: int) -> World:
    """World ``name`` at its default size (drawn once per ``(name, seed)`` for the test session)."""
    return world(name, seed=seed)


def closure_rounds(
    w: World, groundings: Callable[[set[LabeledTriple]], Groundings]
) -> list[set[LabeledTriple]]:
    """The facts each round of the closure adds to the base facts of ``w``.

    ``groundings`` is the world's nested-loop join (rule -> head -> groundings). Only grounded
    world facts, without noise: the first closure of base.py step 1.
    """
    everything, closed = all_triples(w), set(w.base_triples)
    added = []
    while True:
        found = groundings(closed)
        new = (set().union(*map(set, found.values())) & everything) - closed
        if not new:
            return added
        added.append(new)
        closed |= new


def all_triples(w: World) -> set[LabeledTriple]:
    """Every triple of the world's three splits."""
    return {t for ts in w.dataset.splits.values() for t in ts.to_labeled_triples()}


def train_triples(w: World) -> set[LabeledTriple]:
    """The training triples."""
    return set(w.dataset.train.to_labeled_triples())


def relation_pairs(w: World, relation: str, split: str | None = None) -> set[tuple[str, str]]:
    """The ``(head, tail)`` pairs of ``relation`` in ``split`` (every split when None)."""
    triples = all_triples(w) if split is None else w.dataset.splits[split].to_labeled_triples()
    return {(h, t) for h, r, t in triples if r == relation}


def noise_facts(w: World) -> set[LabeledTriple]:
    """The noise facts of every split."""
    return {t for s in SPLITS for t in w.noise_splits[s]}


def noise_pairs(w: World, relation: str) -> set[tuple[str, str]]:
    """The ``(head, tail)`` pairs of ``relation``'s noise facts."""
    return {(x, y) for x, r, y in noise_facts(w) if r == relation}


def check_noise_counts(
    w: World, closed: set[LabeledTriple], seed: int, tolerance: float = 0.02
) -> None:
    """Noise drawn to the count from the first closure's facts (base.py step 2), checked.

    ``closed`` is the first closure of ``w``'s base facts, without noise. The noise relations are
    those of ``w.noise_rates`` and none of their noise facts is grounded in ``closed``; with
    :math:`n` a relation's closure-derived facts and :math:`k` its noise facts, :math:`k` is
    :math:`\nu n / (1 - \nu)` rounded, or up to two below it (a noise fact that another noise fact
    grounds becomes a derived one), and :math:`k` over all its derived facts is within
    ``tolerance`` of :math:`\nu`.
    """
    everything, base = all_triples(w), set(w.base_triples)
    noise = noise_facts(w)
    assert {t[1] for t in noise} == set(w.noise_rates)
    assert not closed & noise
    for relation, nu in w.noise_rates.items():
        k = sum(t[1] == relation for t in noise)
        n = sum(t[1] == relation for t in closed - base)
        assert 0 <= round(nu * n / (1 - nu)) - k <= 2, (seed, relation, k, n)
        total = sum(t[1] == relation for t in everything - base)
        assert abs(k / total - nu) < tolerance, (seed, relation, k, total)


def exception_pairs(w: World, relation: str) -> set[tuple[str, str]]:
    """The ``(head, tail)`` pairs of ``relation``'s facts that the rules' exceptions withheld."""
    return {(x, y) for x, r, y in w.exceptions if r == relation}


def entity_kinds(w: World) -> dict[str, int]:
    """How many entities of each kind the world has."""
    return dict(Counter(w.entity_types.values()))


def held_out(w: World, relation: str | None = None) -> list[LabeledTriple]:
    """The valid and test targets (of ``relation`` only, when given)."""
    return [
        t for s in ("valid", "test") for t in w.targets(s) if relation is None or t[1] == relation
    ]


def neighbours(triples: Iterable[LabeledTriple]) -> dict[str, set[str]]:
    """Each entity's neighbours, either direction."""
    out: dict[str, set[str]] = {}
    for h, _, t in triples:
        out.setdefault(h, set()).add(t)
        out.setdefault(t, set()).add(h)
    return out


def degrees_by_kind(w: World, triples: Iterable[LabeledTriple]) -> dict[str, dict[str, int]]:
    """Each entity's number of distinct neighbours (either direction), by entity kind."""
    out: dict[str, dict[str, int]] = {}
    for entity, near in neighbours(triples).items():
        out.setdefault(w.entity_types[entity], {})[entity] = len(near)
    return out


class FactIndex:
    """Facts by relation for a nested-loop join, and the groundings it finds.

    ``pairs[r]`` lists the ``(head, tail)`` pairs of ``r`` in sorted order (a deterministic
    loop); :meth:`tails` and :meth:`heads` look one step up; :meth:`add` records a grounding in
    :attr:`found`.
    """

    def __init__(self, facts: Iterable[LabeledTriple]) -> None:
        self.pairs: dict[str, list[tuple[str, str]]] = {}
        self._out: dict[tuple[str, str], set[str]] = {}
        self._into: dict[tuple[str, str], set[str]] = {}
        for h, r, t in sorted(facts):
            self.pairs.setdefault(r, []).append((h, t))
            self._out.setdefault((r, h), set()).add(t)
            self._into.setdefault((r, t), set()).add(h)
        self.found: Groundings = {}

    def of(self, relation: str) -> list[tuple[str, str]]:
        """The pairs of ``relation`` (none when it has no fact)."""
        return self.pairs.get(relation, [])

    def tails(self, relation: str, head: str) -> set[str]:
        """The tails of ``relation`` from ``head``."""
        return self._out.get((relation, head), set())

    def heads(self, relation: str, tail: str) -> set[str]:
        """The heads of ``relation`` into ``tail``."""
        return self._into.get((relation, tail), set())

    def add(self, name: str, head: LabeledTriple, *body: LabeledTriple) -> None:
        """Record that rule ``name`` grounds ``head`` with ``body``."""
        self.found.setdefault(name, {}).setdefault(head, set()).add(body)


def enclosing_sizes(w: World, train: set[LabeledTriple], count: int = 200) -> list[int]:
    """Training triples in the 2-hop enclosing subgraphs of ``count`` seeded test targets.

    By breadth-first search, independently of :func:`graphdata.worlds.world_statistics`: the
    nodes within two hops (directions ignored) of both ends, and the ends themselves even when
    they are further apart; the targets are the statistics' seeded sample.
    """
    near = neighbours(train)

    def ball(e: str) -> set[str]:
        one = near.get(e, set()) | {e}
        return one.union(*(near[x] for x in one if x in near))

    test = w.targets("test")
    order = sorted(np.random.default_rng(0).permutation(len(test))[:count].tolist())
    sizes = []
    for i in order:
        h, _, t = test[i]
        nodes = ball(h) & ball(t) | {h, t}
        sizes.append(sum(x in nodes and y in nodes for x, _, y in train))
    return sizes


def enclosing_quantiles(w: World, train: set[LabeledTriple]) -> tuple[float, int]:
    """Median and rounded 90th percentile of :func:`enclosing_sizes` (the docstrings' figures)."""
    sizes = enclosing_sizes(w, train)
    return float(np.median(sizes)), round(float(np.percentile(sizes, 90)))


def body_shares(facts: set[LabeledTriple], first: set, second: set, noise: set) -> list[float]:
    """Shares of a two-body head's facts (two decimals): both bodies, only the first, only the
    second, and noise (no body)."""
    parts = (first & second, first - second, second - first, facts & noise)
    return [round(len(x) / len(facts), 2) for x in parts]
