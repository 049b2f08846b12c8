"""Checks of scalar arguments shared by the parts: ints, seeds and finite reals in a range.

Each returns the value (as ``int`` or ``float``) or raises :class:`~graphdata.errors.GraphDataError`
with the house message, naming the argument, what was expected, what arrived and the fix:
``lr: expected a finite number > 0, got nan; pass a finite number > 0``. ``kg`` words its
training-config checks with the command-line flag as well (:mod:`kg.config`); the argparse types
of the command line are :mod:`graphdata.cli_types`.
"""

from __future__ import annotations

import math
import os

import numpy as np

from graphdata.errors import GraphDataError

__all__ = [
    "INT64_MAX",
    "SEED_MAX",
    "check_int",
    "check_real",
    "check_seed",
    "check_size",
    "physical_memory",
]

#: Largest seed accepted: ``torch.manual_seed`` and ``torch.Generator.manual_seed`` take unsigned
#: 64-bit values.
SEED_MAX = 2**64 - 1
#: Largest count that has an int64 id or index (NumPy and torch index with int64).
INT64_MAX = 2**63 - 1


def check_int(name: str, value: object, minimum: int, maximum: int | None = None) -> int:
    """Return ``value`` if it is an int (not a bool) in ``[minimum, maximum]``, else raise.

    Examples:
        >>> check_int("steps", 3, 1)
        3
        >>> check_int("steps", 0, 1)
        Traceback (most recent call last):
        ...
        graphdata.errors.GraphDataError: steps: expected an int >= 1, got 0; pass an int >= 1
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or value < minimum
        or (maximum is not None and value > maximum)
    ):
        want = f"an int >= {minimum}" if maximum is None else f"an int in [{minimum}, {maximum}]"
        raise GraphDataError(f"{name}: expected {want}, got {value!r}; pass {want}")
    return int(value)


def check_seed(name: str, value: object, *, required: bool = False) -> int | None:
    """Return ``value`` if it is an int in ``[0, SEED_MAX]`` (a seed), or None, else raise.

    ``required``: refuse None too (for a config that draws from its seed whatever it is).
    """
    return None if value is None and not required else check_int(name, value, 0, SEED_MAX)


def check_real(
    name: str,
    value: object,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    fix: str = "",
) -> float:
    """Return ``value`` as a float if it is a finite real in the given interval, else raise.

    The message names the argument, the interval, the value and ``fix`` (how to repair it).

    Examples:
        >>> check_real("margin", 1, low=0)
        1.0
        >>> check_real("margin", float("nan"), low=0, low_open=True, fix="pass a positive margin")
        Traceback (most recent call last):
        ...
        graphdata.errors.GraphDataError: margin: expected a finite number > 0, got nan; pass a positive margin
    """  # noqa: E501
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low:g}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high:g}")
    want = "a finite number" + (f" {' and '.join(parts)}" if parts else "")
    ok, number = False, math.nan
    if not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating)):
        ok, number = True, float(value)
    if ok and math.isfinite(number):
        ok = (low is None or (number > low if low_open else number >= low)) and (
            high is None or (number < high if high_open else number <= high)
        )
    else:
        ok = False
    if not ok:
        hint = f"; {fix}" if fix else f"; pass {want}"
        raise GraphDataError(f"{name}: expected {want}, got {value!r}{hint}")
    return number


def physical_memory() -> int | None:
    """This machine's physical memory in bytes (``SC_PAGE_SIZE * SC_PHYS_PAGES``), or None."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # not POSIX
        return None


def check_size(
    name: str, value: object, minimum: int, *, bytes_each: int, what: str, power: int = 1
) -> int:
    """Return ``value`` if it is an int in ``[minimum, bound]``, else raise; ``bound`` from memory.

    A generator that holds at least ``bytes_each`` bytes per unit of ``value ** power`` cannot
    finish above ``bound = (physical_memory() // bytes_each) ** (1 / power)`` (rounded down):
    it would allocate until the machine runs out of memory (or, for Python loops, run for days
    first). ``bound`` is also at most :data:`INT64_MAX` (the largest int64 id), which is the
    bound where the memory is unknown.

    Args:
        name: The argument's name, for the message.
        value: What arrived.
        minimum: The smallest accepted value.
        bytes_each: A lower bound of the memory held per unit of ``value ** power``, in bytes.
        what: The units in words, plural (``"primary entities"``), for the message.
        power: 1 (default) for memory linear in ``value``, 2 for a ``[value, value]`` matrix.

    Raises:
        GraphDataError: ``size: expected an int in [20, 1,677,721], got 9223372036854775808
            (primary entities take at least 8,192 bytes each and this machine has 12.8 GiB of
            memory); pass a smaller size``.

    Examples:
        >>> check_size("size", 400, 20, bytes_each=8192, what="primary entities")
        400
    """
    number = check_int(name, value, minimum)
    memory = physical_memory()
    units = None if memory is None else memory // bytes_each
    if units is not None and power == 2:
        units = math.isqrt(units)
    bound = INT64_MAX if units is None else min(INT64_MAX, max(minimum, units))
    if number > bound:
        why = (
            "the largest int64 id"
            if memory is None or bound == INT64_MAX
            else f"{what} take at least {bytes_each:,} bytes each and this machine has "
            f"{memory / 2**30:.1f} GiB of memory"
        )
        raise GraphDataError(
            f"{name}: expected an int in [{minimum}, {bound:,}], got {value!r} ({why}); pass a "
            f"smaller {name}"
        )
    return number
