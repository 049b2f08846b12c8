"""Command-line flags generated from a configuration dataclass: one generator for every command.

:func:`add_config_flags` adds one flag per field of a config dataclass
(``kg.config.TrainingConfig``, ``spatial.celcomen.CelcomenConfig``, the explainer's configs,
``graphon.nn``'s experiment configs), so a new field is a new flag with no second edit:

* name: ``--field-name`` (``prefix`` in front for a nested config; a small alias dict keeps
  today's names where they differ, e.g. ``--paths`` for ``max_paths``);
* type: from the annotation. ``bool`` is :class:`argparse.BooleanOptionalAction`; ``int`` and
  ``float`` are :mod:`graphdata.cli_types` number types whose range is read off the config's
  own validation (:func:`number_type` tries values at the usual bounds and keeps those the
  config accepts: no second table of ranges); a ``Literal`` or an options tuple named in the
  field's comment (``# one of MODES``) gives ``choices``; ``tuple[int, ...]`` and
  ``tuple[str, ...]`` are comma-separated;
* default shown in ``--help``: the dataclass default, or a note such as "model's tuned value";
* help: the field's documentation, parsed from the source: its trailing ``#`` comment, the
  ``#`` lines above it, or the class docstring's ``Attributes:`` entry.

Flags default to ``None`` (argparse's dest is ``<dest_prefix><field>``), so
:func:`config_values` returns only what the user set and the config's own defaults apply to
everything else. Flags that are not config fields (``--dataset``, ``--out``, ``--device``) are
written by hand in the command modules.

Examples:
    >>> import dataclasses
    >>> @dataclasses.dataclass
    ... class Toy:
    ...     steps: int = 10  # optimiser steps
    >>> parser = argparse.ArgumentParser()
    >>> flags = add_config_flags(parser, Toy)
    >>> config_values(parser.parse_args(["--steps", "3"]), flags)
    {'steps': 3}
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import inspect
import io
import re
import sys
import textwrap
import tokenize
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from graphdata import cli_types
from graphdata.errors import GraphDataError

__all__ = [
    "add_config_flags",
    "config_values",
    "field_docs",
    "flag_spellings",
    "number_type",
    "spell_flags",
]

#: Flag name -> the cli_types type used for a field of that name, whatever its validation says
#: (seeds are bounded by torch's unsigned 64-bit generator, as the configs' checks are; a
#: config that stores its seed in an int64 field passes its own type in ``types_``).
_NAMED_TYPES: dict[str, cli_types.NumberType] = {"seed": cli_types.seed}
#: Probe values for the range of a float field: below zero, zero, just above, inside and at 1.
_FLOAT_PROBES = (-1.0, 0.0, 1e-9, 0.5, 1.0, 2.0)
#: Probe values for the range of an int field.
_INT_PROBES = (-1, 0, 1, 2)


def field_docs(cls: type) -> dict[str, str]:
    """The documentation of each field of dataclass ``cls``, parsed from its source.

    A field's text is its trailing ``#`` comment, else the ``#`` lines right above it, else its
    entry in the class docstring's ``Attributes:`` section. Base classes are read too.

    Args:
        cls: A dataclass.

    Returns:
        Field name -> one line of text (``""`` where the source documents nothing).

    Examples:
        >>> from kg.config import TrainingConfig
        >>> field_docs(TrainingConfig)["lr"]
        'learning rate'
    """
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__[:-1]):
        if dataclasses.is_dataclass(klass):
            docs.update(_own_field_docs(klass))
    return {f.name: docs.get(f.name, "") for f in dataclasses.fields(cls)}


def _own_field_docs(cls: type) -> dict[str, str]:
    """Comments and ``Attributes:`` entries of the fields defined in ``cls`` itself."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return _attribute_entries(inspect.getdoc(cls) or "")
    comments: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string.lstrip("#").strip()
    lines = source.splitlines()
    docs = _attribute_entries(inspect.getdoc(cls) or "")
    body = ast.parse(source).body[0]
    assert isinstance(body, ast.ClassDef)
    for node in body.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        name = node.target.id
        end = node.end_lineno or node.lineno
        trailing = next(
            (
                comments[n]
                for n in range(end, node.lineno - 1, -1)
                if n in comments and not lines[n - 1].lstrip().startswith("#")
            ),
            "",
        )
        above: list[str] = []
        number = node.lineno - 1
        while number in comments and lines[number - 1].lstrip().startswith("#"):
            above.insert(0, comments[number])
            number -= 1
        text = trailing or " ".join(above)
        if text:
            docs[name] = text
    return docs


def _attribute_entries(doc: str) -> dict[str, str]:
    """``name: text`` entries of a Google-style ``Attributes:`` section, one line each."""
    entries: dict[str, str] = {}
    inside, current = False, None
    for line in doc.splitlines():
        if line.strip() == "Attributes:":
            inside = True
            continue
        if inside and line and not line.startswith(" "):
            break
        match = re.match(r"^ {4}(\w+)(?: \([^)]*\))?: (.*)$", line) if inside else None
        if match:
            current = match.group(1)
            entries[current] = match.group(2).strip()
        elif inside and current and line.strip():
            entries[current] += " " + line.strip()
    return entries


def _plain_type(annotation: Any) -> tuple[Any, bool]:
    """``(T, optional)`` for ``T`` or ``T | None`` (``Optional[T]``)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return annotation, False


def number_type(
    cls: type,
    name: str,
    kind: type,
    *,
    base: Mapping[str, Any] | None = None,
    check: Callable[[Any], object] | None = None,
) -> cli_types.NumberType:
    """The :mod:`graphdata.cli_types` number type of field ``name``, its range read off ``cls``.

    The config is built with the field set to a few probe values at the usual bounds (below 0,
    0, just above 0, 0.5, 1, 2; for ints -1, 0, 1, 2) and checked by its own validation
    (``__post_init__``, and ``check`` or the config's ``validate()`` method); the range is the
    smallest standard one covering the accepted probes: ``> 0``, ``>= 0``, ``[0, 1)``,
    ``[0, 1]``, ``>= 1``, ``>= 2`` or unbounded. A probe refused for another reason than its
    range (a message about a combination of fields, see :func:`_range_refusal`) counts as
    accepted; the config validates the combination again when the command builds it.

    Args:
        cls: The config dataclass.
        name: The field.
        kind: ``int`` or ``float``.
        base: Other field values to build the probes with (default: the dataclass defaults).
        check: Extra validation called on each probe config; default its ``validate`` method.

    Returns:
        The callable argparse type.

    Examples:
        >>> from kg.config import TrainingConfig
        >>> number_type(TrainingConfig, "label_smoothing", float).expected
        'a finite number in [0, 1)'
    """
    if name in _NAMED_TYPES:
        return _NAMED_TYPES[name]
    probes = _INT_PROBES if kind is int else _FLOAT_PROBES
    accepted = [p for p in probes if _accepts(cls, name, p, base or {}, check)]
    if kind is int:
        low = min(accepted) if accepted else None
        if low is None or low < 0:
            return cli_types.integer()
        return cli_types.integer(int(low))
    if -1.0 in accepted:
        return cli_types.finite_float()
    if 0.0 in accepted:
        if 2.0 in accepted:
            return cli_types.nonnegative_float
        return cli_types.probability if 1.0 in accepted else cli_types.fraction
    return cli_types.positive_float


def _accepts(
    cls: type,
    name: str,
    value: Any,
    base: Mapping[str, Any],
    check: Callable[[Any], object] | None,
) -> bool:
    """Whether config ``cls`` with ``name = value`` passes its own range checks."""
    try:
        _validate(cls(**{**base, name: value}), check)
    except (GraphDataError, ValueError, TypeError) as err:
        return not _range_refusal(str(err), name, value)
    return True


def _validate(config: Any, check: Callable[[Any], object] | None) -> None:
    """Run ``check(config)``, else the config's own ``validate()`` method if it has one."""
    if check is not None:
        check(config)
    elif callable(getattr(config, "validate", None)):
        config.validate()


def _range_refusal(message: str, name: str, value: Any) -> bool:
    """Whether ``message`` refuses ``value`` of field ``name`` for its range.

    A range message names the field first and ends its "got" clause at the value
    (``lr: expected a finite number > 0, got 0.0; pass ...``); a message about a combination of
    fields goes on after the value (``regularizer_weight: ... got 0.5 with regularizer=None``)
    or names no value at all (``label_smoothing: the 'nssa' loss has no labels``).
    """
    named = message.startswith((f"{name}:", f"{name} (", f"config.{name}:"))
    ends = re.search(rf"got {re.escape(repr(value))}(?:[;,.)]|$| \()", message)
    return named and ends is not None


def _comment_choices(cls: type, doc: str) -> tuple[str, tuple[str, ...]] | None:
    """The options tuple/dict a field's comment names (``one of MODES``) and that name."""
    module = sys.modules.get(cls.__module__)
    for word in re.findall(r"\b((?:[a-z_][\w]*\.)*[A-Z][A-Z0-9_]{2,})\b", doc):
        *path, attr = word.split(".")
        owner: Any = module
        if path:
            owner = sys.modules.get(".".join(path))
            if owner is None:
                try:
                    owner = __import__(".".join(path), fromlist=[attr])
                except ImportError:
                    continue
        value = getattr(owner, attr, None)
        if (
            isinstance(value, (tuple, list, dict))
            and value
            and all(isinstance(v, str) for v in value)
        ):
            return word, tuple(value)
    return None


def _spell_choices(doc: str, word: str, options: Sequence[str]) -> str:
    """``doc`` with the constant ``word`` replaced by its options, as a user reads them.

    ``one of MODES`` and ``key of OPTIMIZERS`` become ``one of evaluator, retrain``; a bare
    ``(PRECISIONS)`` is dropped (argparse lists the choices); any other mention is the list.
    """
    listed = ", ".join(options)
    doc = re.sub(rf"\b(?:one|key) of {re.escape(word)}\b", f"one of {listed}", doc)
    doc = re.sub(rf"\s*\({re.escape(word)}\)", "", doc)
    return re.sub(rf"\b{re.escape(word)}\b", listed, doc)


def _validated_choices(
    cls: type, name: str, base: Mapping[str, Any], check: Callable[[Any], object] | None
) -> tuple[str, ...] | None:
    """The options the config's own validation lists when it refuses an unknown string.

    The configs refuse a bad choice with ``<name>: expected one of ('a', 'b'), got ...`` (or
    ``choose from [...]``); the listed literal is read back, so the options live in one place.
    """
    probe = "\x00not-an-option"
    try:
        _validate(cls(**{**base, name: probe}), check)
    except (GraphDataError, ValueError, TypeError) as err:
        message = str(err)
        if not message.startswith((f"{name}:", f"{name} (", f"config.{name}:")):
            return None
        found = re.search(r"(?:one of|choose from) (\(.*?\)|\[.*?\])", message)
        if found is None:
            return None
        try:
            options = ast.literal_eval(found.group(1))
        except (ValueError, SyntaxError):
            return None
        if isinstance(options, (tuple, list)) and all(isinstance(o, str) for o in options):
            return tuple(options)
    return None


def _comma_list(item: type, flag: str) -> Callable[[str], tuple[Any, ...]]:
    """A type parsing ``"1,2,3"`` into a tuple of ``item`` (``int`` or ``str``)."""

    def parse(text: str) -> tuple[Any, ...]:
        parts = [part.strip() for part in text.split(",") if part.strip()]
        try:
            values = tuple(item(part) for part in parts)
        except ValueError as err:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated {item.__name__}s, got {text!r}; pass e.g. 1,2,3"
            ) from err
        if not values:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {text!r}")
        return values

    parse.__name__ = f"comma-separated {item.__name__}s"
    parse.list_of = item  # type: ignore[attr-defined]  # marks a list, not a number, flag
    return parse


def add_config_flags(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    cls: type,
    *,
    prefix: str = "",
    dest_prefix: str = "",
    aliases: Mapping[str, str] | None = None,
    exclude: Iterable[str] = (),
    choices: Mapping[str, Iterable[str]] | None = None,
    types_: Mapping[str, Callable[[str], Any]] | None = None,
    default_notes: Mapping[str, str] | None = None,
    base: Mapping[str, Any] | None = None,
    check: Callable[[Any], object] | None = None,
) -> dict[str, str]:
    """Add one flag per field of dataclass ``cls`` to ``parser``; return ``dest -> field``.

    Fields whose type has no flag form (a nested dataclass, a dtype, a tuple of floats) are
    skipped. Every flag's argparse default is ``None``: an unset flag leaves the field to the
    config (or to the model's tuned value where the command says so in ``default_notes``).

    Args:
        parser: The (sub)parser or argument group.
        cls: The config dataclass.
        prefix: Put in front of each flag name, e.g. ``"evaluator-"`` for ``--evaluator-steps``.
        dest_prefix: Put in front of each argparse dest, e.g. ``"evaluator_"``.
        aliases: Field -> flag name (without ``--``) where today's flag differs from the field.
        exclude: Fields that get no flag (set by the command itself, e.g. ``log_path``).
        choices: Field -> allowed values where neither a ``Literal`` nor the comment names them.
        types_: Field -> argparse type, where the command parses a value of its own.
        default_notes: Field -> text shown as the default instead of the dataclass default.
        base: Field values the range probes of :func:`number_type` start from.
        check: Extra validation for the range probes (default: the config's ``validate``).

    Returns:
        argparse dest -> field name, for :func:`config_values`.

    Raises:
        TypeError: If ``cls`` is not a dataclass.
    """
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise TypeError(f"cls: expected a dataclass type, got {cls!r}")
    aliases, choices = dict(aliases or {}), dict(choices or {})
    types_, notes = dict(types_ or {}), dict(default_notes or {})
    skip = set(exclude)
    hints = typing.get_type_hints(cls)
    docs = field_docs(cls)
    flags: dict[str, str] = {}
    for field in dataclasses.fields(cls):
        if field.name in skip or not field.init:
            continue
        kind, _optional = _plain_type(hints[field.name])
        kwargs: dict[str, Any] = {"default": None}
        doc = docs[field.name]
        if field.name in types_:
            kwargs["type"] = types_[field.name]
        elif kind is bool:
            kwargs["action"] = argparse.BooleanOptionalAction
        elif kind in (int, float):
            kwargs["type"] = number_type(cls, field.name, kind, base=base, check=check)
        elif typing.get_origin(kind) is typing.Literal:
            kwargs["choices"] = tuple(typing.get_args(kind))
        elif kind is str:
            named = None if field.name in choices else _comment_choices(cls, doc)
            if named is not None:
                doc = _spell_choices(doc, *named)
            options = (
                choices.get(field.name)
                or (named[1] if named is not None else None)
                or _validated_choices(cls, field.name, base or {}, check)
            )
            if options is not None:
                kwargs["choices"] = tuple(options)
        elif typing.get_origin(kind) is tuple and typing.get_args(kind)[:1] in ((int,), (str,)):
            kwargs["type"] = _comma_list(typing.get_args(kind)[0], field.name)
        else:
            continue  # a nested config, a dtype, ...: no flag form
        if field.name in choices and "choices" not in kwargs:
            kwargs["choices"] = tuple(choices[field.name])
        flag = aliases.get(field.name, prefix + field.name.replace("_", "-"))
        dest = dest_prefix + field.name
        kwargs["help"] = _help(doc, field, notes.get(field.name))
        if "action" not in kwargs and "choices" not in kwargs:
            kwargs["metavar"] = flag.upper().replace("-", "_")  # --lr LR, not the dest
        parser.add_argument(f"--{flag}", dest=dest, **kwargs)
        flags[dest] = field.name
    return flags


def _help(doc: str, field: dataclasses.Field, note: str | None) -> str:
    """``<doc> (default: <value>)`` with ``%`` escaped for argparse."""
    if note is not None:
        shown = note
    elif field.default is not dataclasses.MISSING:
        value = field.default
        shown = ",".join(map(str, value)) if isinstance(value, tuple) else str(value)
    elif field.default_factory is not dataclasses.MISSING:
        shown = str(field.default_factory())
    else:
        shown = "required"
    text = f"{doc} (default: {shown})" if doc else f"(default: {shown})"
    return text.replace("%", "%%")


def config_values(args: argparse.Namespace, flags: Mapping[str, str]) -> dict[str, Any]:
    """The fields the user set on the command line: ``field -> value`` for every flag given.

    Args:
        args: The parsed command line.
        flags: What :func:`add_config_flags` returned.

    Returns:
        Field name -> value, for the flags whose value is not ``None``.
    """
    return {
        field: getattr(args, dest)
        for dest, field in flags.items()
        if getattr(args, dest, None) is not None
    }


def spell_flags(text: str, spellings: Mapping[str, str]) -> str:
    """``text`` with each keyword spelling of ``spellings`` replaced by its flag spelling.

    Examples:
        >>> spell_flags("lower lr (now 1) or raise weight_decay", {"lower lr": "lower --lr"})
        'lower --lr (now 1) or raise weight_decay'
    """
    for keyword, flag in spellings.items():
        text = text.replace(keyword, flag)
    return text


@contextlib.contextmanager
def flag_spellings(known: Mapping[str, Mapping[str, str]]) -> Iterator[None]:
    """Re-raise the library's known refusals of a run with the flags for its keywords.

    Some failures are found only while the library runs (a fit that diverges under ``--lr``),
    and its message names the keyword arguments a library user passes (``lower lr``). A
    :class:`~graphdata.errors.GraphDataError` whose message starts with a key of ``known`` is
    raised again with :func:`spell_flags` of that key's spellings; any other passes unchanged.
    The library's own message is left as it is for library users.

    Args:
        known: Start of a known message -> {keyword spelling: flag spelling}.

    Examples:
        >>> with flag_spellings({"lr: the fit": {"lr:": "--lr:"}}):
        ...     raise GraphDataError("lr: the fit diverged")
        Traceback (most recent call last):
        ...
        graphdata.errors.GraphDataError: --lr: the fit diverged
    """
    try:
        yield
    except GraphDataError as err:
        text = str(err)
        for start, spellings in known.items():
            if text.startswith(start):
                raise GraphDataError(spell_flags(text, spellings)) from err
        raise
