r"""Horn rules as text: their syntax, their validation, and the parsed :class:`Rule`.

Part of :mod:`graphdata.rules`; the joins that ground a rule are :mod:`graphdata.rules.joins`.

**Syntax** (:func:`parse_rule`, one rule per line in :func:`parse_rules`)::

    [weight] [name:] head(T,T) <- atom(T,T), ..., T != T, ... [.]

* ``<-`` or Datalog's ``:-`` separates head and body; a final ``.`` is optional; ``#`` starts a
  comment that runs to the end of the line.
* A relation is an identifier (letters, digits, ``_``, not starting with a digit) or a quoted
  string, ``'/film/film/genre'(X,Y)``. Every atom has exactly two terms.
* A term is a **variable** when it starts with an uppercase letter or ``_`` (``X``, ``Person``,
  ``_y``), as in Datalog and Prolog; anything else is a **constant**: an identifier starting with
  a lowercase letter (``alice``), a number (``1984``), or a quoted string (``'Alice'``,
  ``"New York"``), which is how a constant starting with an uppercase letter is written.
* ``weight`` (a number) and ``name:`` (an identifier and a colon) are optional labels.

**Validation** (:class:`RuleSyntaxError`, naming line and column): unknown syntax, an atom whose
arity is not 2, a head variable that no body atom contains (range restriction: otherwise the
rule derives triples over every entity), an inequality over a variable that no body atom
contains, an inequality between two constants or of a term with itself, a body atom listed
twice, a non-finite weight and (in :func:`parse_rules`) a rule name used twice.

"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from graphdata.errors import GraphDataError


class RuleSyntaxError(GraphDataError):
    """A rule that does not parse or does not validate.

    Args:
        line: The 1-based line number (1 for :func:`parse_rule`).
        column: The 1-based column of the offending token.
        message: What was expected, what arrived and how to fix it.
        source: The file or text the rule came from, named in the message when given.
    """

    def __init__(self, line: int, column: int, message: str, source: str | None = None) -> None:
        self.line = int(line)
        self.column = int(column)
        where = f"{source}:" if source else "line "
        super().__init__(f"{where}{self.line}:{self.column}: {message}")


@dataclass(frozen=True)
class Term:
    """A variable or a constant of an atom.

    Args:
        name: The variable's name or the constant's label (quotes removed).
        is_variable: ``True`` for a variable.
    """

    name: str
    is_variable: bool

    def __str__(self) -> str:
        if self.is_variable or re.fullmatch(r"[a-z][A-Za-z0-9_]*|[0-9]+(\.[0-9]+)?", self.name):
            return self.name
        return "'" + self.name.replace("'", "\\'") + "'"


@dataclass(frozen=True)
class Atom:
    """A binary atom ``relation(first, second)``, matching triples ``(first, relation, second)``.

    Args:
        relation: The relation label.
        first: The head-entity term.
        second: The tail-entity term.
    """

    relation: str
    first: Term
    second: Term

    @property
    def variables(self) -> tuple[str, ...]:
        """The names of the atom's variables, in order, without repeats."""
        names = [t.name for t in (self.first, self.second) if t.is_variable]
        return tuple(dict.fromkeys(names))

    def __str__(self) -> str:
        relation = self.relation
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", relation):
            relation = "'" + relation.replace("'", "\\'") + "'"
        return f"{relation}({self.first},{self.second})"


@dataclass(frozen=True)
class Inequality:
    """A constraint ``left != right``: the two terms take different entities.

    Args:
        left: One term.
        right: The other term.
    """

    left: Term
    right: Term

    def __str__(self) -> str:
        return f"{self.left} != {self.right}"


def _rule_problems(
    head: Atom, body: Sequence[Atom], inequalities: Sequence[Inequality]
) -> list[tuple[str, str, int]]:
    """Validation failures as (message, kind, index); kind is "head", "atom" or "ineq"."""
    problems: list[tuple[str, str, int]] = []
    if not body:
        problems.append(("expected at least one body atom, got none", "head", 0))
    bound = {v for atom in body for v in atom.variables}
    for v in head.variables:
        if v not in bound:
            problems.append(
                (
                    f"head variable {v} occurs in no body atom (range restriction); add a body "
                    f"atom that contains {v} or make it a constant ('{v.lower()}')",
                    "head",
                    0,
                )
            )
    seen: set[Atom] = set()
    for i, atom in enumerate(body):
        if atom in seen:
            problems.append((f"body atom {atom} is listed twice; remove one", "atom", i))
        seen.add(atom)
    for i, c in enumerate(inequalities):
        if not (c.left.is_variable or c.right.is_variable):
            problems.append((f"inequality {c} compares two constants; drop it", "ineq", i))
        elif c.left == c.right:
            problems.append(
                (
                    f"inequality {c} compares {c.left.name} with itself and never holds; drop it",
                    "ineq",
                    i,
                )
            )
        for term in (c.left, c.right):
            if term.is_variable and term.name not in bound:
                problems.append(
                    (
                        f"inequality {c} uses variable {term.name}, which occurs in no body "
                        "atom; constrain body variables only",
                        "ineq",
                        i,
                    )
                )
    return problems


@dataclass(frozen=True)
class Rule:
    r"""A Horn rule ``head <- body, constraints`` over binary atoms (module docstring).

    Args:
        head: The head atom.
        body: The body atoms (at least one, no repeats); every head variable must occur here.
        inequalities: Constraints ``u != v`` over body variables (and constants). Default none.
        name: An optional name. Default ``None``.
        weight: An optional weight or confidence. Default ``None``.

    Raises:
        GraphDataError: If the rule breaks a validation rule of the module docstring.

    Examples:
        >>> rule = parse_rule("competitor(A,B) <- supplier_of(S,A), supplier_of(S,B), A != B")
        >>> rule.length, rule.variables
        (2, ('A', 'B', 'S'))
        >>> print(rule)
        competitor(A,B) <- supplier_of(S,A), supplier_of(S,B), A != B
    """

    head: Atom
    body: tuple[Atom, ...]
    inequalities: tuple[Inequality, ...] = ()
    name: str | None = field(default=None, compare=False)
    weight: float | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "body", tuple(self.body))
        object.__setattr__(self, "inequalities", tuple(self.inequalities))
        if not isinstance(self.head, Atom) or not all(isinstance(a, Atom) for a in self.body):
            raise GraphDataError(
                f"head, body: expected Atom objects, got {self.head!r}, {self.body!r}; "
                "build rules with parse_rule('h(X,Y) <- r(X,Z), s(Z,Y)')"
            )
        problems = _rule_problems(self.head, self.body, self.inequalities)
        if problems:
            raise GraphDataError(f"rule {self}: {problems[0][0]}")

    @property
    def length(self) -> int:
        """The number of body atoms."""
        return len(self.body)

    @property
    def variables(self) -> tuple[str, ...]:
        """The rule's variables: the head's first, then the body's in order of appearance."""
        names = [v for atom in (self.head, *self.body) for v in atom.variables]
        return tuple(dict.fromkeys(names))

    def __str__(self) -> str:
        prefix = "" if self.weight is None else f"{self.weight:g} "
        prefix += "" if self.name is None else f"{self.name}: "
        items = [str(a) for a in self.body] + [str(c) for c in self.inequalities]
        return f"{prefix}{self.head} <- {', '.join(items)}"


# ---------------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""(?P<ws>\s+)
      | (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
      | (?P<arrow><-|:-)
      | (?P<neq>!=)
      | (?P<number>-?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)
      | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<punct>[(),:.])
    """,
    re.VERBOSE,
)


@dataclass(frozen=True)
class _Token:
    kind: str  # ws/string/arrow/neq/number/ident/punct, or "end"
    text: str
    column: int  # 1-based


def _tokens(line: str, number: int, source: str | None) -> list[_Token]:
    out: list[_Token] = []
    pos = 0
    while pos < len(line):
        m = _TOKEN.match(line, pos)
        if m is None:
            raise RuleSyntaxError(
                number,
                pos + 1,
                f"unexpected character {line[pos]!r}; rules read like "
                "'h(X,Y) <- r(X,Z), s(Z,Y), X != Y' (quote labels with other characters)",
                source,
            )
        kind = m.lastgroup or ""
        if kind != "ws":
            out.append(_Token(kind, m.group(), pos + 1))
        pos = m.end()
    out.append(_Token("end", "", len(line) + 1))
    return out


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])


class _Parser:
    """A recursive-descent parser over one line's tokens (grammar in the module docstring)."""

    def __init__(self, line: str, number: int, source: str | None) -> None:
        self.tokens = _tokens(line, number, source)
        self.pos = 0
        self.number = number
        self.source = source

    def peek(self, ahead: int = 0) -> _Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def fail(self, token: _Token, expected: str) -> RuleSyntaxError:
        got = "the end of the line" if token.kind == "end" else repr(token.text)
        return RuleSyntaxError(
            self.number,
            token.column,
            f"expected {expected}, got {got}; rules read like 'h(X,Y) <- r(X,Z), s(Z,Y), X != Y'",
            self.source,
        )

    def take(self, text: str, expected: str) -> _Token:
        token = self.peek()
        if token.text != text or token.kind not in ("punct", "arrow", "neq"):
            raise self.fail(token, expected)
        self.pos += 1
        return token

    def term(self) -> Term:
        token = self.peek()
        if token.kind == "string":
            self.pos += 1
            return Term(_unquote(token.text), is_variable=False)
        if token.kind == "number":
            self.pos += 1
            return Term(token.text, is_variable=False)
        if token.kind == "ident":
            self.pos += 1
            first = token.text[0]
            return Term(token.text, is_variable=first == "_" or first.isupper())
        raise self.fail(token, "a variable or a constant")

    def atom(self) -> tuple[Atom, int]:
        token = self.peek()
        if token.kind not in ("ident", "string"):
            raise self.fail(token, "an atom such as r(X,Y)")
        self.pos += 1
        relation = _unquote(token.text) if token.kind == "string" else token.text
        self.take("(", f"'(' after the relation {relation!r}")
        terms = [self.term()]
        while self.peek().text == "," and self.peek().kind == "punct":
            self.pos += 1
            terms.append(self.term())
        close = self.peek()
        if close.text != ")":
            raise self.fail(close, "',' or ')'")
        self.pos += 1
        if len(terms) != 2:
            raise RuleSyntaxError(
                self.number,
                token.column,
                f"atom {relation!r} has {len(terms)} term(s); expected exactly 2 (binary "
                "relations of a knowledge graph), e.g. r(X,Y)",
                self.source,
            )
        return Atom(relation, terms[0], terms[1]), token.column

    def is_atom_start(self) -> bool:
        return self.peek().kind in ("ident", "string") and self.peek(1).text == "("

    def rule(self) -> Rule:
        weight: float | None = None
        name: str | None = None
        if self.peek().kind == "number":
            weight = float(self.peek().text)
            if not math.isfinite(weight):
                raise self.fail(self.peek(), "a finite weight")
            self.pos += 1
        if self.peek().kind == "ident" and self.peek(1).text == ":":
            name = self.peek().text
            self.pos += 2
        head, head_col = self.atom()
        arrow = self.peek()
        if arrow.kind != "arrow":
            raise self.fail(arrow, "'<-' or ':-' after the head atom")
        self.pos += 1
        body: list[Atom] = []
        columns: dict[tuple[str, int], int] = {("head", 0): head_col}
        inequalities: list[Inequality] = []
        while True:
            start = self.peek()
            if self.is_atom_start():
                atom, col = self.atom()
                columns[("atom", len(body))] = col
                body.append(atom)
            else:
                left = self.term()
                self.take("!=", "'!=' (or an atom r(X,Y))")
                columns[("ineq", len(inequalities))] = start.column
                inequalities.append(Inequality(left, self.term()))
            if self.peek().text == "," and self.peek().kind == "punct":
                self.pos += 1
                continue
            break
        if self.peek().text == "." and self.peek().kind == "punct":
            self.pos += 1
        if self.peek().kind != "end":
            raise self.fail(self.peek(), "',' or the end of the rule")
        problems = _rule_problems(head, body, inequalities)
        if problems:
            message, kind, index = problems[0]
            raise RuleSyntaxError(self.number, columns[(kind, index)], message, self.source)
        return Rule(head, tuple(body), tuple(inequalities), name=name, weight=weight)


def _strip_comment(line: str) -> str:
    """The line up to its first ``#`` outside quotes."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == "\\":
                continue
            if ch == quote and line[i - 1] != "\\":
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            return line[:i]
    return line


def parse_rule(line: str) -> Rule:
    """Parse one rule (syntax in the module docstring).

    Args:
        line: The rule's text; a trailing ``#`` comment is ignored.

    Returns:
        The rule.

    Raises:
        RuleSyntaxError: If the text is not one valid rule (line 1, with the column).

    Examples:
        >>> parse_rule("uncle(X,W) :- spouse(X,Y), sister(Y,Z), parent(Z,W).").length
        3
        >>> parse_rule("born_in(X,'New York') <- lives_in(X,nyc)").head.second
        Term(name='New York', is_variable=False)
    """
    if not isinstance(line, str):
        raise GraphDataError(f"line: expected a str, got {type(line).__name__}")
    if not _strip_comment(line).strip():
        raise RuleSyntaxError(1, 1, "expected a rule, got an empty line")
    return _Parser(_strip_comment(line), 1, None).rule()


def parse_rules(text: str, *, source: str | None = None) -> tuple[Rule, ...]:
    """Parse one rule per line; blank lines and ``#`` comments are skipped.

    A leading byte-order mark is dropped (Windows editors write one); names must be distinct.

    Args:
        text: The rules.
        source: A name for the text (a file path) used in error messages. Default ``None``.

    Returns:
        The rules, in line order.

    Raises:
        RuleSyntaxError: At the first invalid line, naming its line and column.

    Examples:
        >>> rules = parse_rules('''
        ... # family
        ... grandparent(X,Z) <- parent(X,Y), parent(Y,Z)
        ... sibling(X,Y) <- parent(P,X), parent(P,Y), X != Y
        ... ''')
        >>> [r.head.relation for r in rules]
        ['grandparent', 'sibling']
    """
    if not isinstance(text, str):
        raise GraphDataError(f"text: expected a str, got {type(text).__name__}")
    rules = []
    named: dict[str, int] = {}
    for number, raw in enumerate(text.removeprefix("\ufeff").splitlines(), start=1):
        line = _strip_comment(raw)
        if line.strip():
            rule = _Parser(line, number, source).rule()
            if rule.name is not None and rule.name in named:
                raise RuleSyntaxError(
                    number,
                    len(raw) - len(raw.lstrip()) + 1,
                    f"rule name {rule.name!r} is already used on line {named[rule.name]}; give "
                    "each rule its own name",
                    source,
                )
            if rule.name is not None:
                named[rule.name] = number
            rules.append(rule)
    return tuple(rules)


def read_rules(path: str | os.PathLike[str]) -> tuple[Rule, ...]:
    """Read a rules file (UTF-8, :func:`parse_rules` syntax).

    Args:
        path: The file.

    Returns:
        The rules, in line order.

    Raises:
        GraphDataError: If the file cannot be read.
        RuleSyntaxError: At the first invalid line, as ``path:line:column: message``.
    """
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise GraphDataError(
            f"path: cannot read the rules file {os.fspath(path)!r} ({e}); pass a UTF-8 text "
            "file with one rule per line"
        ) from e
    return parse_rules(text, source=os.fspath(path))


def _check_rule(rule: object, argument: str = "rule") -> Rule:
    if not isinstance(rule, Rule):
        raise GraphDataError(
            f"{argument}: expected a Rule, got {type(rule).__name__}; build it with "
            "parse_rule('h(X,Y) <- r(X,Z), s(Z,Y)')"
        )
    return rule
