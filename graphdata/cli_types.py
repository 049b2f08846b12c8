"""Argparse ``type=`` functions that refuse non-finite and out-of-range numbers at parse time.

Every numeric flag of the ``graphlib`` command takes one of these, so ``--margin nan`` or
``--epochs 0`` stop at parse time with argparse's usage line and exit code 2, before any file
is read or any work starts::

    graphlib kg train: error: argument --margin: expected a finite number >= 0, got 'nan';
    pass a finite number >= 0

argparse prefixes the message of an :class:`argparse.ArgumentTypeError` with the flag
(``argument --margin: ...``), so a type names what was expected, what arrived and the fix, and
argparse supplies the argument. ``float("1e999")`` is ``inf``, so huge literals are refused as
non-finite too.

Examples:
    >>> parser = argparse.ArgumentParser()
    >>> _ = parser.add_argument("--lr", type=positive_float)
    >>> parser.parse_args(["--lr", "0.05"]).lr
    0.05
    >>> positive_int("3")
    3
    >>> probability("0.25")
    0.25
"""

from __future__ import annotations

import argparse
import math

__all__ = [
    "NumberType",
    "finite_float",
    "integer",
    "positive_float",
    "nonnegative_float",
    "positive_int",
    "nonnegative_int",
    "probability",
    "fraction",
    "seed",
    "int64_seed",
    "SEED_MAX",
    "INT64_SEED_MAX",
    "INT64_MAX",
]

#: Largest seed accepted: :data:`graphdata.checks.SEED_MAX` (torch's unsigned 64-bit seeds), as
#: the configs' seeds; a literal here, so the argument types import no NumPy.
SEED_MAX = 2**64 - 1
#: Largest int stored in an int64 field: a Celcomen config and a perturbation record are written
#: to the AnnData's ``uns``, whose ``.h5ad`` file holds signed 64-bit ints.
INT64_MAX = 2**63 - 1
#: Largest seed of a config stored in an int64 field (:data:`INT64_MAX`).
INT64_SEED_MAX = INT64_MAX


def _bound_text(
    low: float | None, high: float | None, low_inclusive: bool, high_inclusive: bool
) -> str:
    """``'>= 0'``, ``'> 0'``, ``'in [0, 1)'`` or ``''``: the range as a reader writes it."""

    def show(x: float) -> str:
        return str(x) if isinstance(x, int) else f"{x:g}"

    if low is not None and high is not None:
        left = "[" if low_inclusive else "("
        right = "]" if high_inclusive else ")"
        return f"in {left}{show(low)}, {show(high)}{right}"
    if low is not None:
        return f"{'>=' if low_inclusive else '>'} {show(low)}"
    if high is not None:
        return f"{'<=' if high_inclusive else '<'} {show(high)}"
    return ""


class NumberType:
    """A callable argparse ``type``: parse a string as an int or a finite float in a range.

    Args:
        kind: ``"int"`` (parsed with :func:`int`, so ``'1.5'`` and ``'1e3'`` are refused) or
            ``"float"`` (parsed with :func:`float`; ``nan``, ``inf`` and overflowing literals
            are refused).
        min: Lower bound, or None for none.
        max: Upper bound, or None for none.
        min_inclusive: Whether ``min`` itself is accepted. Default True.
        max_inclusive: Whether ``max`` itself is accepted. Default True.

    Raises:
        argparse.ArgumentTypeError: When called on a string that is not a number of the kind,
            not finite, or out of range; the message says what was expected, what arrived and
            the fix.

    Examples:
        >>> NumberType("float", min=0, min_inclusive=False)("2.5")
        2.5
        >>> NumberType("int", min=1)("0")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: expected an integer >= 1, got '0'; pass an integer >= 1
    """

    def __init__(
        self,
        kind: str,
        *,
        min: float | None = None,  # noqa: A002 - the natural name for a bound
        max: float | None = None,  # noqa: A002
        min_inclusive: bool = True,
        max_inclusive: bool = True,
    ) -> None:
        if kind not in ("int", "float"):
            raise ValueError(f"kind: expected 'int' or 'float', got {kind!r}")
        for name, bound in (("min", min), ("max", max)):
            if bound is not None and not math.isfinite(bound):
                raise ValueError(f"{name}: expected a finite bound or None, got {bound!r}")
        if min is not None and max is not None and min > max:
            raise ValueError(f"min, max: expected min <= max, got {min!r} > {max!r}")
        self.kind = kind
        self.min = min
        self.max = max
        self.min_inclusive = min_inclusive
        self.max_inclusive = max_inclusive
        noun = "an integer" if kind == "int" else "a finite number"
        bounds = _bound_text(min, max, min_inclusive, max_inclusive)
        #: What the flag expects, e.g. ``'a finite number > 0'``.
        self.expected = f"{noun} {bounds}".strip()
        # argparse names the type in some messages (``invalid <name> value``).
        self.__name__ = self.expected

    def __repr__(self) -> str:
        """The expectation, e.g. ``NumberType('a finite number > 0')``."""
        return f"NumberType({self.expected!r})"

    def _refuse(self, text: str) -> argparse.ArgumentTypeError:
        return argparse.ArgumentTypeError(
            f"expected {self.expected}, got {text!r}; pass {self.expected}"
        )

    def in_range(self, value: float) -> bool:
        """Whether a parsed ``value`` is finite and inside the bounds.

        Args:
            value: A number.

        Returns:
            True when the type accepts ``value``.
        """
        if not math.isfinite(value):
            return False
        if self.min is not None and (
            value < self.min or (value == self.min and not self.min_inclusive)
        ):
            return False
        return not (
            self.max is not None
            and (value > self.max or (value == self.max and not self.max_inclusive))
        )

    def __call__(self, text: str) -> int | float:
        """Parse ``text``; raise :class:`argparse.ArgumentTypeError` if it is refused.

        Args:
            text: The flag's value as typed.

        Returns:
            The number (:class:`int` or :class:`float`).
        """
        raw = str(text).strip()
        try:
            value: int | float = int(raw) if self.kind == "int" else float(raw)
        except (ValueError, OverflowError) as err:
            raise self._refuse(str(text)) from err
        if not self.in_range(value):
            raise self._refuse(str(text))
        return value


def finite_float(
    min: float | None = None,  # noqa: A002
    max: float | None = None,  # noqa: A002
    *,
    min_inclusive: bool = True,
    max_inclusive: bool = True,
) -> NumberType:
    """A type accepting finite floats in a range (both bounds optional).

    Args:
        min: Lower bound, or None (default) for none.
        max: Upper bound, or None (default) for none.
        min_inclusive: Whether ``min`` is accepted. Default True.
        max_inclusive: Whether ``max`` is accepted. Default True.

    Returns:
        The callable type.

    Examples:
        >>> finite_float(0, 1, max_inclusive=False).expected
        'a finite number in [0, 1)'
    """
    return NumberType(
        "float", min=min, max=max, min_inclusive=min_inclusive, max_inclusive=max_inclusive
    )


def integer(
    min: int | None = None,  # noqa: A002
    max: int | None = None,  # noqa: A002
) -> NumberType:
    """A type accepting integers in ``[min, max]`` (both bounds optional).

    Args:
        min: Lower bound, or None (default) for none.
        max: Upper bound, or None (default) for none.

    Returns:
        The callable type.

    Examples:
        >>> integer(2)("5")
        5
    """
    return NumberType("int", min=min, max=max)


#: A finite number > 0 (learning rates, step sizes, gradient clips).
positive_float = finite_float(0, min_inclusive=False)
#: A finite number >= 0 (margins, weights, temperatures).
nonnegative_float = finite_float(0)
#: An integer >= 1 (epochs, sizes, counts).
positive_int = integer(1)
#: An integer >= 0 (intervals where 0 means "never").
nonnegative_int = integer(0)
#: A probability in [0, 1].
probability = finite_float(0, 1)
#: A fraction in [0, 1) (label smoothing, validation share).
fraction = finite_float(0, 1, max_inclusive=False)
#: A random seed in [0, 2**64 - 1].
seed = integer(0, SEED_MAX)
#: A random seed stored in an int64 field (``graphlib spatial``), in [0, 2**63 - 1].
int64_seed = integer(0, INT64_SEED_MAX)
