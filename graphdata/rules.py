r"""Horn rules of any body shape, their groundings by joins, and explanations scored against them.

A world-agnostic ground truth for explainers (issue #18): any :class:`~graphdata.KGDataset`
plus a rules file. Where :class:`graphdata.synthetic.HornRule` only holds chains, a
:class:`Rule` is any function-free Horn clause over binary atoms, with shared variables,
constants and inequality constraints, e.g.
``competitor(A,B) <- supplier_of(S,A), supplier_of(S,B), same_sector(A,B), A != B``.

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

**Semantics.** A *grounding* of rule :math:`\rho = h \leftarrow b_1, \dots, b_n, c_1, \dots,
c_m` for a target :math:`\tau = (x, r, y)` in a graph :math:`G` is a substitution
:math:`\theta` of entities for the rule's variables with :math:`h\theta = \tau`,
:math:`b_i\theta \in G` for every atom and :math:`u\theta \ne v\theta` for every constraint
:math:`c_j = (u \ne v)`. Distinct variables may take the same entity unless a constraint says
otherwise (standard Datalog). The grounding is reported as its body triples
:math:`(b_1\theta, \dots, b_n\theta)`, in body order; since every variable occurs in the body,
distinct substitutions give distinct tuples. The target itself may be a body triple when it is
in :math:`G` (a rule ``r(X,Y) <- r(Y,X)`` grounds a symmetric loop ``r(a,a)`` with itself).

**Joins.** :class:`RuleGraph` indexes a graph once, relation :math:`\to` head :math:`\to` tails
and relation :math:`\to` tail :math:`\to` heads. :func:`groundings` binds the head variables from
the target, then repeatedly joins the remaining atom with the fewest candidates under the current
binding (both terms bound: a membership test; one bound: the adjacency list of the bound entity;
none: the relation's triples), checking shared variables on unification and each constraint as
soon as both its sides are bound. Measured on random graphs of 100,000 triples (10
relations, uniform heads and tails; mean over 1,000 targets, one shared CPU core): with 10,000
entities the groundings of one target take about 0.02 ms under a length-3 chain rule and 0.01 ms
under a triangle rule; with 1,000 entities (ten times the degree) 0.2 ms and 0.01 ms. Building
the index is a one-off 0.2 to 0.5 s.

**Scoring** (:func:`explanation_scores`) uses the definition of
:mod:`kg.explain.ground_truth`: set overlap of labelled triples, :math:`0/0 = 0`,

.. math::
    P = \frac{|S \cap B|}{|S|}, \quad R = \frac{|S \cap B|}{|B|}, \quad
    F_1 = \frac{2PR}{P + R},

with :math:`S` the set of explanation triples and :math:`B` the set of body triples of one
grounding, taken at the grounding with the highest :math:`F_1` (ties: the shortest body, then
rule order, then the sorted grounding order).

**Equivalent triples.** A fact can have two names: under ``roams_with(X,Y) <- roams_with(Y,X)``
the triples ``(a, roams_with, b)`` and ``(b, roams_with, a)`` hold together, and of an inverse
pair (every ``hosts(o,m)`` has ``hosted_by(m,o)`` and back) either triple says the other. An
explanation that names the fact one way where the grounding names it the other way has found it.
Both sets are therefore compared in a canonical form (:func:`relation_classes`,
:func:`canonical_form`). Oriented relations :math:`(r, +)` (a triple read forwards) and
:math:`(r, -)` (backwards) are joined when they imply each other:

* through the rules: a length-1 rule ``h(X,Y) <- b(Y,X)`` makes :math:`(b, -)` imply
  :math:`(h, +)` (and :math:`(b, +)` imply :math:`(h, -)`), and two oriented relations are
  joined when each implies the other along these rules (a strongly connected component: a
  symmetric rule, or an inverse pair written both ways);
* through what the caller states: ``symmetric`` relations :math:`r` (joining :math:`(r, +)` with
  :math:`(r, -)`) and ``inverse_pairs`` :math:`(r, s)` with :math:`(x, r, y) \in G
  \Leftrightarrow (y, s, x) \in G` (joining :math:`(r, +)` with :math:`(s, -)`), such as
  :attr:`graphdata.worlds.World.symmetric` and :attr:`~graphdata.worlds.World.inverse_pairs`.

A one-way rule joins nothing: under ``plays_for(P,T) <- captain_of(P,T)`` a ``plays_for`` fact
does not say that ``P`` captains ``T``. With :math:`C(r, +)` the class of :math:`(r, +)`, a triple
is named by its smallest rendering,

.. math::
    \kappa(x, r, y) = \min\bigl(\{(x, r', y) : (r', +) \in C(r, +)\} \cup
    \{(y, r', x) : (r', -) \in C(r, +)\}\bigr),

and :math:`S` and :math:`B` above are :math:`\kappa(S)` and :math:`\kappa(B)` (a fact named
both ways counts once). This is the convention of :mod:`kg.explain.ground_truth` on the family
world, which joins along every length-1 rule of that world (all of them equivalences there).
``equivalent=False`` compares the triples as written (the strict reading).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from graphdata.errors import GraphDataError
from graphdata.typing import LabeledTriple

if TYPE_CHECKING:
    from graphdata.tripleset import TripleSet

__all__ = [
    "Term",
    "Atom",
    "Inequality",
    "Rule",
    "RuleSyntaxError",
    "parse_rule",
    "parse_rules",
    "read_rules",
    "RuleGraph",
    "groundings",
    "derived",
    "ExplanationScore",
    "LengthSummary",
    "TargetScores",
    "relation_classes",
    "canonical_form",
    "explanation_scores",
    "score_targets",
]


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


# ---------------------------------------------------------------------------------------------
# Joins
# ---------------------------------------------------------------------------------------------


class RuleGraph:
    r"""A graph indexed for rule joins; build once per graph and reuse.

    Holds relation :math:`\to` head :math:`\to` tails and relation :math:`\to` tail
    :math:`\to` heads, as dicts of sets of labels.

    Args:
        triples: A :class:`~graphdata.TripleSet` or labelled ``(head, relation, tail)`` triples
            (repeats are merged).

    Examples:
        >>> graph = RuleGraph([("a", "r", "b"), ("a", "r", "c")])
        >>> len(graph), sorted(graph.tails("r", "a"))
        (2, ['b', 'c'])
    """

    def __init__(self, triples: TripleSet | Iterable[Sequence[str]]) -> None:
        if hasattr(triples, "to_labeled_triples"):
            rows: Iterable[Sequence[str]] = triples.to_labeled_triples()
        elif isinstance(triples, (str, bytes)) or not isinstance(triples, Iterable):
            raise GraphDataError(
                f"triples: expected a TripleSet or (head, relation, tail) label triples, got "
                f"{type(triples).__name__}"
            )
        else:
            rows = triples
        self._out: dict[str, dict[str, set[str]]] = {}
        self._in: dict[str, dict[str, set[str]]] = {}
        self._pairs: dict[str, list[tuple[str, str]]] = {}
        for row in rows:
            if len(row) != 3:
                raise GraphDataError(
                    f"triples: expected (head, relation, tail) label triples, got {row!r}"
                )
            h, r, t = row
            tails = self._out.setdefault(r, {}).setdefault(h, set())
            if t not in tails:
                tails.add(t)
                self._in.setdefault(r, {}).setdefault(t, set()).add(h)
                self._pairs.setdefault(r, []).append((h, t))
        self._size = sum(len(p) for p in self._pairs.values())

    def __len__(self) -> int:
        return self._size

    def __repr__(self) -> str:
        return f"RuleGraph({self._size} triples, {len(self._pairs)} relations)"

    def __contains__(self, triple: object) -> bool:
        if not isinstance(triple, tuple) or len(triple) != 3:
            return False
        h, r, t = triple
        return t in self._out.get(r, {}).get(h, ())

    def tails(self, relation: str, head: str) -> frozenset[str] | set[str]:
        """The tails ``t`` with ``(head, relation, t)`` in the graph."""
        return self._out.get(relation, {}).get(head, frozenset())

    def heads(self, relation: str, tail: str) -> frozenset[str] | set[str]:
        """The heads ``h`` with ``(h, relation, tail)`` in the graph."""
        return self._in.get(relation, {}).get(tail, frozenset())

    def pairs(self, relation: str) -> Sequence[tuple[str, str]]:
        """All ``(head, tail)`` pairs of a relation, in first-seen order."""
        return self._pairs.get(relation, ())

    def triples(self) -> Iterator[LabeledTriple]:
        """All triples, relation by relation."""
        for r, pairs in self._pairs.items():
            for h, t in pairs:
                yield (h, r, t)


def _as_graph(graph: RuleGraph | TripleSet | Iterable[Sequence[str]]) -> RuleGraph:
    return graph if isinstance(graph, RuleGraph) else RuleGraph(graph)


def _value(term: Term, binding: Mapping[str, str]) -> str | None:
    return binding.get(term.name) if term.is_variable else term.name


def _candidates(
    atom: Atom, binding: Mapping[str, str], graph: RuleGraph
) -> tuple[int, Iterable[tuple[str, str]]]:
    """The (head, tail) pairs an atom may match under ``binding``, with their count."""
    x, y = _value(atom.first, binding), _value(atom.second, binding)
    if x is not None and y is not None:
        found = y in graph.tails(atom.relation, x)
        return int(found), [(x, y)] if found else ()
    if x is not None:
        tails = graph.tails(atom.relation, x)
        return len(tails), ((x, t) for t in tails)
    if y is not None:
        heads = graph.heads(atom.relation, y)
        return len(heads), ((h, y) for h in heads)
    pairs = graph.pairs(atom.relation)
    return len(pairs), pairs


def _consistent(rule: Rule, binding: Mapping[str, str]) -> bool:
    """Whether no inequality whose sides are both bound is violated."""
    for c in rule.inequalities:
        u, v = _value(c.left, binding), _value(c.right, binding)
        if u is not None and u == v:
            return False
    return True


def _join(rule: Rule, binding: dict[str, str], graph: RuleGraph) -> Iterator[dict[str, str]]:
    """Every extension of ``binding`` that grounds all body atoms (most-bound atom first)."""
    remaining = list(range(rule.length))

    def extend(binding: dict[str, str]) -> Iterator[dict[str, str]]:
        if not remaining:
            yield binding
            return
        # Dynamic join order: the atom with the fewest candidates under this binding.
        best, best_count, best_pairs = -1, -1, None
        for i in remaining:
            count, pairs = _candidates(rule.body[i], binding, graph)
            if best < 0 or count < best_count:
                best, best_count, best_pairs = i, count, pairs
            if count == 0:
                return
        atom = rule.body[best]
        remaining.remove(best)
        a, b = atom.first, atom.second
        for x, y in best_pairs or ():
            new = binding
            if a.is_variable and a.name not in binding:
                new = {**binding, a.name: x}
            if b.is_variable:
                bound = new.get(b.name)
                if bound is None:
                    new = {**new, b.name: y}
                elif bound != y:  # a repeated variable r(X,X) or one bound by the first term
                    continue
            if _consistent(rule, new):
                yield from extend(new)
        remaining.append(best)

    if _consistent(rule, binding):
        yield from extend(binding)


def _unify_head(rule: Rule, triple: Sequence[str]) -> dict[str, str] | None:
    h, r, t = triple
    if r != rule.head.relation:
        return None
    binding: dict[str, str] = {}
    for term, value in ((rule.head.first, h), (rule.head.second, t)):
        if not term.is_variable:
            if term.name != value:
                return None
        elif binding.setdefault(term.name, value) != value:
            return None
    return binding


def _body(rule: Rule, binding: Mapping[str, str]) -> tuple[LabeledTriple, ...]:
    get = binding.get
    return tuple(
        (
            get(a.first.name, a.first.name) if a.first.is_variable else a.first.name,
            a.relation,
            get(a.second.name, a.second.name) if a.second.is_variable else a.second.name,
        )
        for a in rule.body
    )


def _check_rule(rule: object, argument: str = "rule") -> Rule:
    if not isinstance(rule, Rule):
        raise GraphDataError(
            f"{argument}: expected a Rule, got {type(rule).__name__}; build it with "
            "parse_rule('h(X,Y) <- r(X,Z), s(Z,Y)')"
        )
    return rule


def _check_triple(triple: object, argument: str) -> LabeledTriple:
    if not isinstance(triple, Sequence) or isinstance(triple, str) or len(triple) != 3:
        raise GraphDataError(
            f"{argument}: expected a (head, relation, tail) label triple, got {triple!r}"
        )
    h, r, t = triple
    return (str(h), str(r), str(t))


def groundings(
    rule: Rule,
    triple: Sequence[str],
    graph: RuleGraph | TripleSet | Iterable[Sequence[str]],
) -> tuple[tuple[LabeledTriple, ...], ...]:
    """Every grounding of ``rule`` in ``graph`` that derives ``triple`` (module docstring).

    Args:
        rule: The rule.
        triple: The target ``(head, relation, tail)`` labels.
        graph: A :class:`RuleGraph` (build it once when grounding many targets), a
            :class:`~graphdata.TripleSet` or labelled triples.

    Returns:
        The groundings, each the tuple of its labelled body triples in body order, sorted;
        ``()`` when the rule's head does not match the target or nothing grounds it.

    Examples:
        >>> graph = RuleGraph([("s", "supplier_of", "a"), ("s", "supplier_of", "b"),
        ...                    ("a", "same_sector", "b")])
        >>> rule = parse_rule(
        ...     "competitor(A,B) <- supplier_of(S,A), supplier_of(S,B), same_sector(A,B)")
        >>> groundings(rule, ("a", "competitor", "b"), graph)
        ((('s', 'supplier_of', 'a'), ('s', 'supplier_of', 'b'), ('a', 'same_sector', 'b')),)
    """
    rule = _check_rule(rule)
    target = _check_triple(triple, "triple")
    index = _as_graph(graph)
    binding = _unify_head(rule, target)
    if binding is None:
        return ()
    return tuple(sorted(_body(rule, b) for b in _join(rule, binding, index)))


def derived(
    rules: Iterable[Rule], graph: RuleGraph | TripleSet | Iterable[Sequence[str]]
) -> set[LabeledTriple]:
    r"""The triples the rules derive from the graph in one step (no recursion).

    :math:`\{h\theta : \rho \in \text{rules}, \theta \text{ grounds } \rho \text{ in } G\}`,
    including derived triples that are already in the graph.

    Args:
        rules: The rules.
        graph: A :class:`RuleGraph`, a :class:`~graphdata.TripleSet` or labelled triples.

    Returns:
        The derived labelled triples.

    Examples:
        >>> sorted(derived(parse_rules("gp(X,Z) <- p(X,Y), p(Y,Z)"),
        ...                [("a", "p", "b"), ("b", "p", "c")]))
        [('a', 'gp', 'c')]
    """
    checked = [_check_rule(rule, "rules") for rule in rules]
    index = _as_graph(graph)
    out: set[LabeledTriple] = set()
    for rule in checked:
        first, second = rule.head.first, rule.head.second
        for b in _join(rule, {}, index):
            h = b[first.name] if first.is_variable else first.name
            t = b[second.name] if second.is_variable else second.name
            out.add((h, rule.head.relation, t))
    return out


# ---------------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExplanationScore:
    """An explanation scored against the best-matching grounding of its target.

    Attributes:
        precision: :math:`P` (module docstring).
        recall: :math:`R`.
        f1: :math:`F_1`, the largest over all groundings.
        rule: The rule of the best-matching grounding.
        rule_length: That rule's body length.
        grounding: The best-matching grounding's body triples.
        num_groundings: How many groundings the target has over all rules.
        target_length: The body length of the target's shortest grounding: the ``Ln`` bucket
            of :func:`score_targets`, a property of the target alone (not of the explanation).
    """

    precision: float
    recall: float
    f1: float
    rule: Rule
    rule_length: int
    grounding: tuple[LabeledTriple, ...]
    num_groundings: int
    target_length: int


def _prf(predicted: set[LabeledTriple], true: set[LabeledTriple]) -> tuple[float, float, float]:
    common = len(predicted & true)
    precision = common / len(predicted) if predicted else 0.0
    recall = common / len(true) if true else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


OrientedRelation = tuple[str, bool]
"""A relation read forwards (``False``: the pair ``(x, y)`` of ``(x, r, y)``) or backwards."""


def _one_step(rule: Rule) -> tuple[str, str, bool] | None:
    """``(body relation, head relation, flipped)`` of a rule ``h(X,Y) <- b(X,Y)`` or ``b(Y,X)``."""
    head, body = rule.head, rule.body
    if len(body) != 1 or rule.inequalities:
        return None
    h1, h2, (b1, b2) = head.first, head.second, (body[0].first, body[0].second)
    if not (h1.is_variable and h2.is_variable and b1.is_variable and b2.is_variable):
        return None
    if h1.name == h2.name:
        return None
    if (b1.name, b2.name) == (h1.name, h2.name):
        return body[0].relation, head.relation, False
    if (b1.name, b2.name) == (h2.name, h1.name):
        return body[0].relation, head.relation, True
    return None


def relation_classes(
    rules: Rule | Iterable[Rule] = (),
    *,
    symmetric: Iterable[str] = (),
    inverse_pairs: Iterable[tuple[str, str]] = (),
) -> dict[OrientedRelation, frozenset[OrientedRelation]]:
    r"""Classes of oriented relations that name the same facts (module docstring, "Equivalent").

    Two oriented relations are joined when the length-1 rules make each imply the other (a
    strongly connected component of the implications, e.g. ``s(X,Y) <- s(Y,X)``), or when the
    caller states it (``symmetric``, ``inverse_pairs``); the classes are the transitive closure
    of both. Rules with a constant, a repeated variable or a constraint join nothing.

    Args:
        rules: The rules (longer rules are ignored).
        symmetric: Relations :math:`r` with :math:`(x, r, y) \in G \Leftrightarrow (y, r, x)
            \in G`.
        inverse_pairs: Pairs :math:`(r, s)` with :math:`(x, r, y) \in G \Leftrightarrow
            (y, s, x) \in G`.

    Returns:
        Each oriented relation in a class of two or more, mapped to its class.

    Examples:
        >>> rules = parse_rules('''
        ... hosts(O,M) <- hosted_by(M,O)
        ... roams(X,Y) <- roams(Y,X)
        ... plays_for(P,T) <- captain_of(P,T)
        ... ''')
        >>> sorted(relation_classes(rules)[("roams", False)])
        [('roams', False), ('roams', True)]
        >>> ("hosts", False) in relation_classes(rules)  # one way only
        False
        >>> stated = relation_classes(rules, inverse_pairs=[("hosted_by", "hosts")])
        >>> sorted(stated[("hosts", False)])
        [('hosted_by', True), ('hosts', False)]
    """
    implies: dict[OrientedRelation, set[OrientedRelation]] = {}
    for rule in _check_rules(rules):
        step = _one_step(rule)
        if step is None:
            continue
        body, head, flipped = step
        for f in (False, True):
            implies.setdefault((body, f != flipped), set()).add((head, f))

    def reach(start: OrientedRelation) -> set[OrientedRelation]:
        seen, stack = {start}, [start]
        while stack:
            for nxt in implies.get(stack.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen

    parent: dict[OrientedRelation, OrientedRelation] = {}

    def find(x: OrientedRelation) -> OrientedRelation:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def join(a: OrientedRelation, b: OrientedRelation) -> None:
        parent[find(a)] = find(b)

    reached = {node: reach(node) for node in implies}
    for a, ahead in reached.items():
        for b in ahead:
            if b != a and a in reached.get(b, ()):
                join(a, b)
    for r in symmetric:
        join((str(r), False), (str(r), True))
    for pair in inverse_pairs:
        r, s = (str(x) for x in pair)
        join((r, False), (s, True))
        join((r, True), (s, False))
    groups: dict[OrientedRelation, set[OrientedRelation]] = {}
    for node in list(parent):
        groups.setdefault(find(node), set()).add(node)
    return {node: frozenset(group) for group in groups.values() if len(group) > 1 for node in group}


def canonical_form(
    triple: Sequence[str], classes: Mapping[OrientedRelation, frozenset[OrientedRelation]]
) -> LabeledTriple:
    r"""The canonical name :math:`\kappa` of a triple (module docstring, "Equivalent triples").

    Args:
        triple: ``(head, relation, tail)`` labels.
        classes: From :func:`relation_classes`.

    Returns:
        The smallest rendering of the triple over its relation's class (itself when it has none).

    Examples:
        >>> classes = relation_classes(symmetric=["roams"])
        >>> canonical_form(("b", "roams", "a"), classes)
        ('a', 'roams', 'b')
    """
    x, r, y = triple
    group = classes.get((r, False))
    if group is None:
        return (x, r, y)
    return min((y, rel, x) if flipped else (x, rel, y) for rel, flipped in group)


def _check_rules(rules: Rule | Iterable[Rule]) -> list[Rule]:
    if isinstance(rules, Rule):
        return [rules]
    return [_check_rule(rule, "rules") for rule in rules]


def _classes(
    rules: list[Rule],
    equivalent: bool,
    symmetric: Iterable[str],
    inverse_pairs: Iterable[tuple[str, str]],
) -> dict[OrientedRelation, frozenset[OrientedRelation]]:
    if not equivalent:
        return {}
    if isinstance(symmetric, str):
        raise GraphDataError(
            f"symmetric: expected relation names, got the string {symmetric!r}; pass a list, "
            f"[{symmetric!r}]"
        )
    pairs = list(inverse_pairs)
    for pair in pairs:
        if isinstance(pair, str) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise GraphDataError(
                f"inverse_pairs: expected (relation, relation) pairs, got {pair!r}"
            )
    return relation_classes(rules, symmetric=symmetric, inverse_pairs=pairs)


def _score(
    explanation: set[LabeledTriple],
    target: LabeledTriple,
    rules: list[Rule],
    graph: RuleGraph,
    classes: Mapping[OrientedRelation, frozenset[OrientedRelation]],
) -> ExplanationScore | None:
    best: tuple[tuple[float, int], ExplanationScore] | None = None
    count, shortest = 0, 0
    named = {canonical_form(t, classes) for t in explanation}
    for rule in rules:
        for body in groundings(rule, target, graph):
            count += 1
            shortest = rule.length if count == 1 else min(shortest, rule.length)
            p, r, f1 = _prf(named, {canonical_form(t, classes) for t in body})
            key = (f1, -rule.length)  # higher F1 first, then the shorter body
            if best is None or key > best[0]:
                best = (key, ExplanationScore(p, r, f1, rule, rule.length, body, 0, 0))
    if best is None:
        return None
    s = best[1]
    return ExplanationScore(
        s.precision, s.recall, s.f1, s.rule, s.rule_length, s.grounding, count, shortest
    )


def explanation_scores(
    explanation_triples: Iterable[Sequence[str]],
    target: Sequence[str],
    rules: Rule | Iterable[Rule],
    graph: RuleGraph | TripleSet | Iterable[Sequence[str]],
    *,
    symmetric: Iterable[str] = (),
    inverse_pairs: Iterable[tuple[str, str]] = (),
    equivalent: bool = True,
) -> ExplanationScore | None:
    """Score an explanation against the best-matching grounding of its target (module docstring).

    Args:
        explanation_triples: The explanation's labelled triples (repeats count once).
        target: The explained ``(head, relation, tail)`` labels.
        rules: The rules (a single :class:`Rule` is accepted too).
        graph: The graph the groundings are found in, usually the training triples; a
            :class:`RuleGraph` when scoring many targets.
        symmetric: Relations known to be symmetric in ``graph``, beyond what the rules say
            (:func:`relation_classes`). Default none.
        inverse_pairs: Relation pairs known to be each other's inverse. Default none.
        equivalent: Compare the canonical names of the triples (module docstring, "Equivalent
            triples"); ``False`` compares them as written. Default ``True``.

    Returns:
        The :class:`ExplanationScore` (all zeros for an empty explanation, matched to the shortest
        grounding), or ``None`` when no rule grounds the target in the graph: there is no ground
        truth to compare with, and such targets should be left out of the means.

    Examples:
        >>> rules = parse_rules("gp(X,Z) <- p(X,Y), p(Y,Z)")
        >>> graph = [("a", "p", "b"), ("b", "p", "c"), ("a", "q", "c")]
        >>> s = explanation_scores([("a", "p", "b"), ("a", "q", "c")], ("a", "gp", "c"), rules,
        ...                        graph)
        >>> s.precision, s.recall, s.f1
        (0.5, 0.5, 0.5)
        >>> explanation_scores([], ("c", "gp", "a"), rules, graph) is None
        True
    """
    checked = _check_rules(rules)
    goal = _check_triple(target, "target")
    if isinstance(explanation_triples, (str, bytes)):
        raise GraphDataError("explanation_triples: expected label triples, got a string")
    explanation = {_check_triple(t, "explanation_triples") for t in explanation_triples}
    classes = _classes(checked, equivalent, symmetric, inverse_pairs)
    return _score(explanation, goal, checked, _as_graph(graph), classes)


@dataclass(frozen=True)
class LengthSummary:
    """Mean scores over the targets whose shortest grounding has one body length.

    Attributes:
        precision: Mean :math:`P`.
        recall: Mean :math:`R`.
        f1: Mean :math:`F_1`.
        count: Number of targets.
    """

    precision: float
    recall: float
    f1: float
    count: int


@dataclass(frozen=True)
class TargetScores:
    """Scores of many explanations: per target and per rule length.

    Attributes:
        rows: Each target mapped to its :class:`ExplanationScore`, or ``None`` when no rule
            grounds it (left out of every mean).
        by_length: Body length ``n`` (the ``Ln`` bucket) mapped to the means over the targets
            whose shortest grounding has that length (:attr:`ExplanationScore.target_length`:
            the bucket depends on the target and the rules, never on the explanation), in
            increasing order.
        overall: The means over all grounded targets (``count`` 0 and zeros when none).
    """

    rows: dict[LabeledTriple, ExplanationScore | None]
    by_length: dict[int, LengthSummary]
    overall: LengthSummary


def _mean(scores: Sequence[ExplanationScore]) -> LengthSummary:
    n = len(scores)
    if not n:
        return LengthSummary(0.0, 0.0, 0.0, 0)
    return LengthSummary(
        sum(s.precision for s in scores) / n,
        sum(s.recall for s in scores) / n,
        sum(s.f1 for s in scores) / n,
        n,
    )


def score_targets(
    explanations: Mapping[Sequence[str], Iterable[Sequence[str]]],
    rules: Rule | Iterable[Rule],
    graph: RuleGraph | TripleSet | Iterable[Sequence[str]],
    *,
    symmetric: Iterable[str] = (),
    inverse_pairs: Iterable[tuple[str, str]] = (),
    equivalent: bool = True,
) -> TargetScores:
    """Score many explanations (:func:`explanation_scores`) and average them per rule length.

    Args:
        explanations: Each target ``(head, relation, tail)`` mapped to its explanation triples.
        rules: The rules (a single :class:`Rule` is accepted too).
        graph: The graph the groundings are found in (indexed once here).
        symmetric: As for :func:`explanation_scores`.
        inverse_pairs: As for :func:`explanation_scores`.
        equivalent: As for :func:`explanation_scores`.

    Returns:
        The :class:`TargetScores`.

    Examples:
        >>> rules = parse_rules('''
        ... gp(X,Z) <- p(X,Y), p(Y,Z)
        ... sib(X,Y) <- p(P,X), p(P,Y), X != Y
        ... ''')
        >>> graph = [("a", "p", "b"), ("b", "p", "c"), ("b", "p", "d")]
        >>> table = score_targets({("a", "gp", "c"): [("a", "p", "b")],
        ...                        ("c", "sib", "d"): [("b", "p", "c"), ("b", "p", "d")],
        ...                        ("d", "gp", "a"): []}, rules, graph)
        >>> table.by_length[2].f1, table.by_length[2].count, table.rows[("d", "gp", "a")]
        (0.8333333333333333, 2, None)
    """
    checked = _check_rules(rules)
    if not isinstance(explanations, Mapping):
        raise GraphDataError(
            f"explanations: expected a mapping target -> explanation triples, got "
            f"{type(explanations).__name__}"
        )
    index = _as_graph(graph)
    classes = _classes(checked, equivalent, symmetric, inverse_pairs)
    rows: dict[LabeledTriple, ExplanationScore | None] = {}
    for target, triples in explanations.items():
        goal = _check_triple(target, "explanations")
        found = {_check_triple(t, "explanations") for t in triples}
        rows[goal] = _score(found, goal, checked, index, classes)
    scored = [s for s in rows.values() if s is not None]
    lengths = sorted({s.target_length for s in scored})
    by_length = {n: _mean([s for s in scored if s.target_length == n]) for n in lengths}
    return TargetScores(rows, by_length, _mean(scored))
