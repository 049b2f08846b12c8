"""Set partitions as restricted growth strings, and the Bell numbers that count them."""

from __future__ import annotations

from functools import cache
from math import comb

__all__: list[str] = []


@cache
def set_partitions(size: int) -> tuple[tuple[int, ...], ...]:
    """All set partitions of ``{0, ..., size - 1}`` as restricted growth strings.

    A partition is written ``labels`` with ``labels[i]`` the block of element ``i``, blocks
    numbered by first appearance (``labels[0] = 0``, ``labels[i] <= max(labels[:i]) + 1``), so
    every partition has exactly one string. Strings come in lexicographic order.

    Examples:
        >>> set_partitions(3)
        ((0, 0, 0), (0, 0, 1), (0, 1, 0), (0, 1, 1), (0, 1, 2))
    """
    if size == 0:
        return ((),)
    out: list[tuple[int, ...]] = []

    def grow(prefix: list[int], blocks: int) -> None:
        if len(prefix) == size:
            out.append(tuple(prefix))
            return
        for label in range(blocks + 1):
            prefix.append(label)
            grow(prefix, max(blocks, label + 1))
            prefix.pop()

    grow([0], 1)
    return tuple(out)


@cache
def bell(size: int) -> int:
    """The Bell number :math:`B_{size}` (number of set partitions), by the recurrence.

    Examples:
        >>> [bell(m) for m in range(7)]
        [1, 1, 2, 5, 15, 52, 203]
    """
    if size == 0:
        return 1
    return sum(comb(size - 1, j) * bell(j) for j in range(size))
