r"""Sparse walks, sorted linear keys and bit rows: the integer arithmetic under the pattern counts.

Helpers of :mod:`kg.explain.patterns.bank` and the modules that count with it. A set of pairs
:math:`(x, y)` of a walk is held as the sorted int64 keys :math:`x N + y`, or as bit rows (one row
of :math:`\lceil |X_r| / 64 \rceil` words per entity reached, bit :math:`i` set when head
:math:`x_i` reaches it); :func:`_dice` and :func:`_exact_dice` are the agreement
:math:`D = 2 s / (b + n_r)` in floats and in exact fractions.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import scipy.sparse as sp


def _one_hot(columns: np.ndarray, num_columns: int) -> sp.csr_matrix:
    """``[K, num_columns]`` 0/1: row ``i`` holds column ``columns[i]`` alone."""
    ones = np.ones(columns.size, dtype=np.float32)
    return sp.csr_matrix(
        (ones, (np.arange(columns.size), columns)), shape=(columns.size, num_columns)
    )


def _keep_columns(matrix: sp.csr_matrix, keep: np.ndarray) -> sp.csr_matrix:
    """``matrix`` with the entries outside the columns where ``keep`` ([N] bool) is True dropped."""
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    hit = keep[matrix.indices]
    return sp.csr_matrix((matrix.data[hit], (rows[hit], matrix.indices[hit])), shape=matrix.shape)


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


def _bit_step(
    at: np.ndarray, bits: np.ndarray, into: sp.csr_matrix, reached: np.ndarray, num_nodes: int
) -> tuple[np.ndarray, np.ndarray]:
    """The bit rows of a walk one step on: row ``v`` ORs the rows of the ``u`` in ``into[v]``.

    The walk reaches the sorted entities ``at`` with ``[V, W]`` bit rows ``bits``
    (:meth:`PatternBank._pool_counts`); ``into`` is ``[N, N]`` CSR, row ``v`` holding the ``u``
    with a step ``u -> v``, and ``reached`` its rows that hold some ``u``. Returns ``(at, bits)``
    of the next walk: the sorted ``v`` of ``reached`` and their ``[R, W]`` bit rows (some of 0).

    With rows of several words, the steps from an entity that the walk does not reach are left
    out before the rows are gathered where they are a quarter of the steps or more, and so are
    the ``v`` that only such steps reach (their rows would be 0): a step then costs a look-up
    per triple of the relation and :math:`W` words per step from the walk, not :math:`W` per
    triple. The OR of the same nonzero rows: the same bits.
    """
    if reached.size == 0:
        return reached, np.zeros((0, bits.shape[1]), dtype=bits.dtype)
    if bits.shape[1] >= 4:
        member = np.zeros(num_nodes, dtype=bool)
        member[at] = True
        keep = member[into.indices]  # [nnz] the steps from an entity of the walk
        kept = int(np.count_nonzero(keep))
        if 4 * kept <= 3 * into.nnz:
            total = np.concatenate([[0], np.cumsum(keep)])  # [nnz + 1] kept steps before each
            start, stop = total[into.indptr[reached]], total[into.indptr[reached + 1]]
            some = stop > start  # [R] the v with a kept step
            if not some.any():
                return reached[:0], np.zeros((0, bits.shape[1]), dtype=bits.dtype)
            place = np.zeros(num_nodes, dtype=np.intp)  # the row of each entity of at
            place[at] = np.arange(at.size)
            gathered = bits[place[into.indices[keep]]]  # [kept, W] the row of u of each step
            return reached[some], np.bitwise_or.reduceat(gathered, start[some], axis=0)
    dense = np.zeros((num_nodes, bits.shape[1]), dtype=bits.dtype)  # [N, W]
    dense[at] = bits
    gathered = dense[into.indices]  # [nnz, W] the row of u of each step u -> v
    # the rows between two reached v are empty, so each segment is one row's u
    return reached, np.bitwise_or.reduceat(gathered, into.indptr[reached], axis=0)  # [R, W]


def _bit_step_from(
    at: np.ndarray, bits: np.ndarray, out_of: sp.csr_matrix, degree: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_bit_step` from the steps of the walk's entities: ``(at, bits)`` of the next.

    ``out_of`` is ``[N, N]`` CSR, row ``u`` holding the ``v`` with a step ``u -> v``;
    ``degree`` the ``[V]`` steps of each entity of ``at``. Each step ``u -> v`` ORs the row of
    ``u`` into that of ``v``: the cost of the walk's own steps, for a walk of few entities.
    """
    total = int(degree.sum())
    if total == 0:
        return at[:0], bits[:0]
    owner = np.repeat(np.arange(at.size), degree)  # [m] the row of u of each step
    offset = np.arange(total) - np.repeat(np.cumsum(degree) - degree, degree)
    ends = out_of.indices[np.repeat(out_of.indptr[at], degree) + offset]  # [m] v of each step
    order = np.argsort(ends, kind="stable")
    ends, owner = ends[order], owner[order]
    first = np.flatnonzero(np.r_[True, ends[1:] != ends[:-1]])  # [R] each v's first step
    return ends[first], np.bitwise_or.reduceat(bits[owner], first, axis=0)


def _bits_at(
    at: np.ndarray, bits: np.ndarray, row: np.ndarray, column: np.ndarray, num_nodes: int
) -> np.ndarray:
    """``[k]`` 0/1: whether the walk (``at``, ``bits``) joins ``x_row`` to entity ``column``."""
    if at.size == 0 or row.size == 0:
        return np.zeros(row.size, dtype=np.uint64)
    if 8 * row.size < at.size:  # few entries: binary search of the sorted at
        where = np.searchsorted(at, column)  # [k]
        where[where == at.size] = 0
        where[at[where] != column] = at.size
    else:  # many: an [N] map from each entity to its row
        place = np.full(num_nodes, at.size, dtype=np.intp)  # past the end: not reached
        place[at] = np.arange(at.size)
        where = place[column]  # [k]
    flat = np.minimum(where, at.size - 1) * bits.shape[1] + (row >> 6)  # [k] into bits.ravel()
    words = bits.ravel()[flat]  # [k]
    words[where == at.size] = 0  # an entity the walk does not reach
    return np.right_shift(words, (row & 63).astype(np.uint64)) & np.uint64(1)


def _popcount(words: np.ndarray) -> int:
    """The number of set bits of the unsigned integer array ``words``."""
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        return int(np.bitwise_count(words).sum(dtype=np.int64))
    table = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)
    return int(table[np.ascontiguousarray(words).view(np.uint8)].sum())


def _row_popcounts(words: np.ndarray) -> np.ndarray:
    """``[P]`` int64: the set bits of each row of the ``[P, K]`` uint64 array ``words``."""
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        return np.bitwise_count(words).sum(axis=-1, dtype=np.int64)
    table = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)
    octets = np.ascontiguousarray(words).view(np.uint8).reshape(words.shape[0], -1)
    return table[octets].sum(axis=-1)


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


def _equal_pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every index pair ``(i, j)`` with ``a[i] == b[j]`` (a join of two unsorted arrays)."""
    order = np.argsort(b, kind="stable")
    ordered = b[order]
    low = np.searchsorted(ordered, a, side="left")
    many = np.searchsorted(ordered, a, side="right") - low  # [a] matches of each a[i]
    left = np.repeat(np.arange(a.size), many)
    offset = np.arange(int(many.sum())) - np.repeat(np.cumsum(many) - many, many)
    return left, order[np.repeat(low, many) + offset]


def _absent(keys: np.ndarray, union: np.ndarray) -> np.ndarray:
    """The keys of the sorted unique ``keys`` that are not in the sorted unique ``union``."""
    if union.size == 0 or keys.size == 0:
        return keys
    at = np.searchsorted(union, keys)
    at[at == union.size] = 0  # past the end: not in union (union[0] < that key)
    return keys[union[at] != keys]


def _run_starts(ordered: np.ndarray) -> np.ndarray:
    """``[n]`` bool: where each run of equal values of the sorted ``ordered`` begins."""
    first = np.ones(ordered.size, dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    return first


def _sorted_unique(values: np.ndarray, space: int | None = None) -> np.ndarray:
    """``np.unique(values)`` of an int array, by one sort, or by marks where that is cheaper.

    numpy 2.4's ``unique`` hashes first: tens of times slower on the hundreds of thousands of
    pattern keys of a fact of a dense graph (:meth:`PatternBank._between_keys`). Where the
    values are known to lie in ``[0, space)`` and fill an eighth of it or more (a fact of
    Nations: 700,000 keys of 1.4 million), each is marked in a ``[space]`` bool array and the
    marks read back in order, a third of the time of the sort; the same array.
    """
    if space is not None and 8 * values.size >= space:
        marks = np.zeros(space, dtype=bool)
        marks[values] = True
        return np.flatnonzero(marks)
    ordered = np.sort(values)
    return ordered[_run_starts(ordered)]


def _sorted_unique_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_sorted_unique` and each value's place in it (``np.unique``'s ``return_inverse``)."""
    order = np.argsort(values)
    ordered = values[order]
    first = _run_starts(ordered)
    places = np.empty(values.size, dtype=np.int64)
    places[order] = np.cumsum(first) - 1
    return ordered[first], places


def _dice(support: float, body: float, facts: float) -> float:
    """:math:`2 s / (b + n_r)`, 0 when :math:`s = 0`."""
    return 2.0 * support / (body + facts) if support else 0.0


def _exact_dice(support: float, body: float, facts: float) -> Fraction:
    """:func:`_dice` as an exact fraction of the integer counts (ties compare equal)."""
    return Fraction(2 * int(support), int(body + facts)) if support else Fraction(0)


def _bit_positions(at: np.ndarray, bits: np.ndarray, span: int) -> np.ndarray:
    r"""Positions :math:`y \cdot` ``span`` :math:`+ i` of the set bits of (``at``, ``bits``).

    ``span`` is 64 times the words of a row, so that a position indexes the bits of ``[N, W]``
    bit rows laid out row by row (:func:`_bit_test`); sorted, as ``at`` is.
    """
    flat = np.flatnonzero(bits)  # [k] the words with a set bit, row by row
    if flat.size == 0:
        return np.zeros(0, dtype=np.int64)
    row, word = np.divmod(flat, bits.shape[1])
    octets = bits.ravel()[flat].astype("<u8").view(np.uint8).reshape(-1, 8)  # [k, 8]
    which, bit = np.nonzero(np.unpackbits(octets, axis=1, bitorder="little"))  # [m]
    return at[row[which]].astype(np.int64) * span + word[which].astype(np.int64) * 64 + bit


def _bit_test(dense: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """``[k]`` 0/1: the bits at ``positions`` (:func:`_bit_positions`) of ``[N, W]`` bit rows."""
    words = dense.ravel()[positions >> 6]
    return np.right_shift(words, (positions & 63).astype(np.uint64)) & np.uint64(1)


def _contains(keys: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """``[k]`` bool: whether each of ``queries`` is in the sorted unique ``keys``."""
    if keys.size == 0:
        return np.zeros(queries.size, dtype=bool)
    at = np.searchsorted(keys, queries)
    at[at == keys.size] = 0  # past the end: not in keys (keys[0] < that query)
    return keys[at] == queries
