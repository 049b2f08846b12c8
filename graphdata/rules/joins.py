r"""Groundings of Horn rules in a graph by joins: :class:`RuleGraph`, :func:`groundings`.

Part of :mod:`graphdata.rules`; the rules are parsed by :mod:`graphdata.rules.syntax`.

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
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from graphdata.errors import GraphDataError
from graphdata.rules.syntax import Atom, Rule, Term, _check_rule
from graphdata.typing import LabeledTriple

if TYPE_CHECKING:
    from graphdata.tripleset import TripleSet


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
        >>> from graphdata.rules import parse_rule
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
        >>> from graphdata.rules import parse_rules
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
