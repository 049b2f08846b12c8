"""Private canonical hashing for colour refinement: deterministic across calls and processes.

Colours are 64-bit hashes of their signatures (splitmix64 mixing, Steele, Lea & Flood, OOPSLA
2014, DOI 10.1145/2660193.2660195), so colourings of different graphs computed separately are
directly comparable: running them one by one equals running them on the disjoint union.
Multisets hash as the sum (mod 2^64) of their mixed elements, after merging equal keys and
adding their weights (counts, or measures for step graphons). A collision needs two different
signatures with equal 64-bit hashes (probability about 2^-64 per pair).
"""

from __future__ import annotations

import numpy as np

__all__: list[str] = []

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_FNV = np.uint64(0x100000001B3)
#: Weights (counts or measures) are compared after rounding to this many decimals.
WEIGHT_DECIMALS = 9


def mix(z: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser, elementwise on a uint64 array (wrapping arithmetic)."""
    z = np.asarray(z, dtype=np.uint64) + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def combine(*parts: np.ndarray) -> np.ndarray:
    """An order-sensitive hash of broadcast uint64 arrays."""
    h = mix(parts[0])
    for part in parts[1:]:
        h = mix((h * _FNV) ^ mix(part))
    return h


def quantize(values: np.ndarray, decimals: int) -> np.ndarray:
    """Round floats to ``decimals`` and reinterpret as uint64 (so -0.0 == 0.0)."""
    scaled = np.rint(np.asarray(values, dtype=np.float64) * 10.0**decimals) + 0.0
    return scaled.astype(np.int64).view(np.uint64)


def multiset(keys: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Hash each row's weighted multiset of keys: ``[T, n]`` keys, ``[n]`` weights -> ``[T]``."""
    t, n = keys.shape
    rows = np.repeat(np.arange(t), n)
    flat = keys.reshape(-1)
    w = np.broadcast_to(weights, (t, n)).reshape(-1)
    order = np.lexsort((flat, rows))
    rows, flat, w = rows[order], flat[order], w[order]
    start = np.ones(rows.size, dtype=bool)
    start[1:] = (rows[1:] != rows[:-1]) | (flat[1:] != flat[:-1])
    idx = np.flatnonzero(start)
    total = np.add.reduceat(w, idx)  # merged weight of each distinct (row, key)
    element = combine(flat[idx], quantize(total, WEIGHT_DECIMALS))
    out = np.zeros(t, dtype=np.uint64)
    np.add.at(out, rows[idx], element)
    return out
