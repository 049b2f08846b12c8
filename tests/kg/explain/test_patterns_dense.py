"""The rule set's search over a pool held as one bit array (`kg.explain.patterns._dense`).

The oracles: the search with every union counted from scratch (`_reference_rule_set`), the kept
unions' search (`_grow_rule_set`), the bank's own walks (`_bits`), and the pool's dict of
patterns in order of first appearance that the keys replaced.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from kg.explain.patterns import _dense
from kg.explain.patterns import rule_sets as rule_sets_module
from kg.explain.patterns.bank import PatternBank, _pattern_keys, _patterns_of
from tests.kg.explain.test_patterns import (
    _graph,
    _planted_triples,
    _random_triples,
    _reference_rule_set,
)


def _steps(r):
    return [(rel, fwd, -1) for rel in range(r) for fwd in (True, False)]


def _keys_of(patterns, r):
    """The keys of ``patterns`` by the step codes of `PatternBank._around` (2 s forwards)."""
    keys = []
    for pattern in patterns:
        codes = [np.array([2 * rel + (0 if fwd else 1)]) for rel, fwd, _ in pattern]
        keys.append(int(_pattern_keys(2 * r, *codes)[0]))
    return np.array(keys, dtype=np.int64)


def _three_step_pool(r, seed, size):
    """Every pattern of one and two steps and a draw of ``size`` of three, in a seeded order."""
    steps = _steps(r)
    rng = np.random.default_rng(seed)
    three = list(itertools.product(steps, repeat=3))
    patterns = [(a,) for a in steps] + list(itertools.product(steps, repeat=2))
    patterns += [three[i] for i in rng.choice(len(three), size=size, replace=False)]
    return [patterns[i] for i in rng.permutation(len(patterns))]


def test_keys_sort_as_the_patterns_and_give_them_back():
    # A key per pattern of one to three steps; sorting the keys sorts the tuples (False before
    # True, a pattern before its extensions), and the keys decode to the patterns.
    r = 3
    patterns = _three_step_pool(r, 0, 100)
    keys = _keys_of(patterns, r)
    assert _patterns_of(keys, 2 * r) == patterns
    assert _patterns_of(np.sort(keys), 2 * r) == sorted(patterns)
    assert np.unique(keys).size == len(patterns)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("space", [60, 10**12])
def test_pool_is_the_patterns_of_two_drawn_facts_in_order_of_first_appearance(seed, space):
    # The pool of sorted keys per fact against the dict it replaced: the facts in draw order,
    # each fact's patterns in sorted order, kept where two facts or more have them; counted
    # over every possible key (60 of them, fewer than drawn) or by one sort.
    rng = np.random.default_rng(seed)
    found = [np.unique(rng.integers(0, 60, size=rng.integers(0, 30))) for _ in range(20)]
    seen: dict[int, int] = {}
    for keys in found:
        for key in keys.tolist():
            seen[key] = seen.get(key, 0) + 1
    expected = [key for key, n in seen.items() if n >= rule_sets_module.POOL_SUPPORT]
    assert rule_sets_module._pool(found, space).tolist() == expected
    assert rule_sets_module._pool([], space).size == 0


@pytest.mark.parametrize("n, m", [(12, 60), (150, 1400)])
def test_pool_bits_are_the_banks_walks(n, m):
    # Each pool pattern's row of the bit array against PatternBank._bits of the pattern laid
    # out as [N, W] rows; with 150 entities the heads fill rows of several words.
    r = 3
    triples = _random_triples(7, n, r, m)
    bank = PatternBank(*_graph(triples), n, r)
    patterns = _three_step_pool(r, 1, 60)
    keys = _keys_of(patterns, r)
    widths = []
    for relation in range(r):
        bits, order = _dense._pool_bits(bank, relation, keys)
        assert sorted(order.tolist()) == list(range(len(patterns)))
        width = -(-bank._heads[relation].size // 64)
        widths.append(width)
        for row, place in zip(bits, order.tolist()):
            pattern = patterns[place]
            at, walk = bank._bits(relation, pattern)
            expected = np.zeros((n, width), dtype=np.uint64)
            expected[at] = walk
            assert np.array_equal(row.reshape(n, width), expected), pattern
    assert (max(widths) > 1) == (n > 64)  # the second graph has rows of several words


@pytest.mark.parametrize("seed", range(6))
def test_dense_search_returns_the_rule_set_of_the_reference(seed):
    # The whole search (first member, admission, exchange pass, backward elimination, ties)
    # against every union counted from scratch and against the kept unions' search, on random
    # graphs with three planted bodies of relation 0 and pools with patterns of three steps.
    n, r = 40, 4
    triples = _planted_triples(seed, n)
    sizes = []
    for relation in range(r):
        pool = [p for p in _three_step_pool(r, seed, 150) if (relation, True, -1) not in p]
        keys = _keys_of(pool, r)
        expected = _reference_rule_set(PatternBank(*_graph(triples), n, r), relation, pool)
        kept = rule_sets_module._grow_rule_set(PatternBank(*_graph(triples), n, r), relation, pool)
        assert kept == expected
        assert _dense.grow(PatternBank(*_graph(triples), n, r), relation, keys) == expected
        sizes.append(len(expected))
    assert sizes[0] >= 2  # relation 0's rule set has two bodies or more


@pytest.mark.parametrize("seed", range(2))
def test_dense_search_over_several_words(seed):
    # The same with more than 64 heads of the relation (bit rows of several words).
    n, r = 160, 4
    triples = _planted_triples(seed, n, m=900)
    for relation in range(r):
        pool = [p for p in _three_step_pool(r, seed, 60) if (relation, True, -1) not in p]
        bank = PatternBank(*_graph(triples), n, r)
        assert bank._heads[relation].size > 64
        expected = rule_sets_module._grow_rule_set(bank, relation, pool)
        dense = _dense.grow(PatternBank(*_graph(triples), n, r), relation, _keys_of(pool, r))
        assert dense == expected


def test_rule_set_is_the_same_either_way(monkeypatch):
    # rule_set() takes the bit array where it fits (DENSE_WORDS) and the kept unions where it
    # does not: the same set for every relation, and the dense search does run where it fits.
    n, r = 40, 4
    triples = _planted_triples(3, n)
    calls = []
    grow = _dense.grow

    def counted(*args):
        calls.append(args[1])
        return grow(*args)

    monkeypatch.setattr(_dense, "grow", counted)
    dense = [rule_sets_module.rule_set(PatternBank(*_graph(triples), n, r), k) for k in range(r)]
    assert sorted(calls) == list(range(r))
    monkeypatch.setattr(_dense, "DENSE_WORDS", 0)
    kept = [rule_sets_module.rule_set(PatternBank(*_graph(triples), n, r), k) for k in range(r)]
    assert dense == kept
    assert sorted(calls) == list(range(r))  # no dense search without room for the array
    assert len(dense[0]) >= 2


@pytest.mark.parametrize("seed", range(4))
def test_dense_search_breaks_ties_as_the_reference(seed):
    # Relation 4 is a copy of relation 1 and relation 5 of relation 3, so every pattern through
    # one has a twin through the other with the same walk: the first member, each admission and
    # each exchange are ties, won by the first in the bound's order and then the pool's.
    n, r = 40, 6
    base = _planted_triples(seed, n)
    copies = {1: 4, 3: 5}
    triples = sorted(set(base) | {(h, copies[k], t) for h, k, t in base if k in copies})
    for relation in (0, 2):
        pool = [p for p in _three_step_pool(r, seed, 150) if (relation, True, -1) not in p]
        expected = _reference_rule_set(PatternBank(*_graph(triples), n, r), relation, pool)
        dense = _dense.grow(PatternBank(*_graph(triples), n, r), relation, _keys_of(pool, r))
        assert dense == expected
        if relation == 0:
            assert len(expected) >= 2


@pytest.mark.parametrize("admit", [True, False])
def test_best_is_the_searchs_best_disjunct_among_many_ties(admit):
    # One round of the search on random bit arrays of few bits (ties in D between candidates
    # of different own counts, so of different bounds) against _best_disjunct of rule_sets
    # with the same counts, counted word by word: the same D and the same candidate, with and
    # without a floor.
    from kg.explain.patterns._bits import _popcount

    rng = np.random.default_rng(0)
    for trial in range(300):
        size, words = int(rng.integers(2, 12)), 2
        bits = rng.integers(0, 2**8, size=(size, words), dtype=np.uint64)
        bits &= rng.integers(0, 2**8, size=(size, words), dtype=np.uint64)
        facts_bits = rng.integers(0, 2**8, size=words, dtype=np.uint64)
        loops_bits = rng.integers(0, 2**8, size=words, dtype=np.uint64) & ~facts_bits
        facts = float(_popcount(facts_bits) + rng.integers(0, 3))
        members = sorted(rng.choice(size, size=int(rng.integers(1, size)), replace=False).tolist())
        union = np.bitwise_or.reduce(bits[members], axis=0)
        floor = float(rng.choice([0.0, rng.random()]))
        single = {
            i: (float(_popcount(bits[i] & facts_bits)), float(_popcount(bits[i] & ~loops_bits)))
            for i in range(size)
        }
        counts = (float(_popcount(union & facts_bits)), float(_popcount(union & ~loops_bits)))

        def added(i, bits=bits, union=union, loops_bits=loops_bits, facts_bits=facts_bits):
            free = bits[i] & ~(union | loops_bits)
            return float(_popcount(free & facts_bits)), float(_popcount(free))

        expected = rule_sets_module._best_disjunct(
            single, members, counts, added, facts, admit=admit, floor=floor
        )
        pool = _dense._Pool(bits, facts_bits, loops_bits, facts)
        assert list(zip(pool.support, pool.body)) == list(single.values())
        assert pool.counts(members) == counts
        assert pool.best(members, members, admit=admit, floor=floor) == expected, trial


def test_row_popcounts_without_numpys_bitwise_count(monkeypatch):
    # The table of set bits per octet (numpy < 2.0) against bitwise_count and bin().
    from kg.explain.patterns import _bits

    rng = np.random.default_rng(0)
    words = rng.integers(0, 2**63, size=(7, 5), dtype=np.uint64) | np.uint64(2**63)
    expected = [sum(bin(int(w)).count("1") for w in row) for row in words]
    assert _bits._row_popcounts(words).tolist() == expected
    monkeypatch.delattr(np, "bitwise_count")
    assert _bits._row_popcounts(words).tolist() == expected


def test_rows_in_another_order_keep_the_pools_order_among_ties():
    # _pool_bits returns the rows in the order of their walks, with each row's place in the
    # pool: the first member and every round's candidate are the pool's, whatever the rows'
    # order (few bits per row: many ties).
    rng = np.random.default_rng(1)
    for trial in range(200):
        size, words = int(rng.integers(2, 12)), 2
        bits = rng.integers(0, 2**6, size=(size, words), dtype=np.uint64)
        facts_bits = rng.integers(0, 2**6, size=words, dtype=np.uint64)
        loops_bits = rng.integers(0, 2**6, size=words, dtype=np.uint64) & ~facts_bits
        facts = float(rng.integers(1, 8))
        in_pool_order = _dense._Pool(bits, facts_bits, loops_bits, facts)
        order = rng.permutation(size)  # row j holds the pool's pattern order[j]
        shuffled = _dense._Pool(bits[order], facts_bits, loops_bits, facts, order)
        row_of = np.argsort(order)
        assert shuffled.first() == row_of[in_pool_order.first()]
        members = sorted(rng.choice(size, size=int(rng.integers(1, size)), replace=False).tolist())
        value, index = in_pool_order.best(members, members, admit=False)
        rows = [int(row_of[i]) for i in members]
        got_value, got_row = shuffled.best(rows, rows, admit=False)
        assert got_value == value, trial
        assert (got_row is None) == (index is None)
        if index is not None:
            assert order[got_row] == index, trial


@pytest.mark.parametrize("used", [1, 5, 14, 21, 32])
def test_packed_rows_keep_every_count(used):
    # The search's arrays packed 64 // used fields to a word: every masked count and every
    # union's count is that of the unpacked rows.
    from kg.explain.patterns._bits import _row_popcounts

    rng = np.random.default_rng(used)
    for words in (1, 3, 14, 40):
        rows = rng.integers(0, 2**used, size=(50, words), dtype=np.uint64)
        masks = rng.integers(0, 2**used, size=(4, words), dtype=np.uint64)
        packed = _dense._packed(rows.copy(), used)
        packed_masks = _dense._packed(masks.copy(), used)
        assert packed.shape[1] == -(-words // (64 // used))
        for mask, packed_mask in zip(masks, packed_masks):
            expected = _row_popcounts(rows & mask)
            assert np.array_equal(_row_popcounts(packed & packed_mask), expected)
        union = np.bitwise_or.reduce(rows[:7], axis=0)[None]
        packed_union = np.bitwise_or.reduce(packed[:7], axis=0)[None]
        assert np.array_equal(_row_popcounts(packed_union), _row_popcounts(union))


def test_sorted_unique_by_marks_is_numpys_unique():
    from kg.explain.patterns._bits import _sorted_unique

    rng = np.random.default_rng(0)
    for size, space in [(0, 10), (5, 1000), (900, 1000), (20000, 5000), (300, 300)]:
        values = rng.integers(0, space, size=size)
        expected = np.unique(values)
        assert np.array_equal(_sorted_unique(values), expected)
        assert np.array_equal(_sorted_unique(values, space), expected)
