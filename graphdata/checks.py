"""Checks of scalar arguments shared by the parts: ints, seeds and finite reals in a range.

Each returns the value (as ``int`` or ``float``) or raises :class:`~graphdata.errors.GraphDataError`
with the house message, naming the argument, what was expected, what arrived and the fix:
``lr: expected a finite number > 0, got nan; pass a finite number > 0``. ``kg`` words its
training-config checks with the command-line flag as well (:mod:`kg.config`); the argparse types
of the command line are :mod:`graphdata.cli_types`.
"""

from __future__ import annotations

import math

import numpy as np

from graphdata.errors import GraphDataError

__all__ = ["SEED_MAX", "check_int", "check_real", "check_seed"]

#: Largest seed accepted: ``torch.manual_seed`` and ``torch.Generator.manual_seed`` take unsigned
#: 64-bit values.
SEED_MAX = 2**64 - 1


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
