r"""A seeded synthetic family knowledge graph with planted Horn rules and ground-truth explanations.

The world is a genealogy over several generations: founder couples, their children, marriages
inside a generation (never between siblings; cousins may marry, as royal houses did) or to
outsiders who marry in, and the children of every couple. Its **base facts** use four relations,
``parent(x, y)`` (x is a parent of y), ``spouse(x, y)`` (one orientation per couple, drawn at
random), ``brother(x, y)`` and ``sister(x, y)`` (x is a full brother / sister of y; gender
enters only through these). :data:`FAMILY_RULES` then derive the other facts, with chain-shaped
Horn rules of lengths 1 to 3.

**Semantics.** The knowledge graph :math:`\mathcal{K}` is the least fixpoint of the rules over
the base facts :math:`\mathcal{B}`. A *grounding* of a rule
:math:`r(X_0, X_n) \leftarrow a_1, \dots, a_n` is an assignment of entities to
:math:`X_0, \dots, X_n` whose body triples all lie in :math:`\mathcal{K}`; atom :math:`a_i` with
relation :math:`r_i` is the triple :math:`(X_{i-1}, r_i, X_i)` when traversed forwards and
:math:`(X_i, r_i, X_{i-1})` when traversed backwards (inverse). The ground-truth explanations of a
derived triple :math:`\tau \in \mathcal{K} \setminus \mathcal{B}` are **all** groundings of **all**
rules with head :math:`\tau`: one rule application each, whose body triples may be base facts or
derived ones (``spouse`` in the uncle/aunt-by-marriage rules). Base facts have no explanation.

This is the offline ground truth for path-based explainers (the evaluation of KGExplainer, Ma et
al., "Towards Synergistic Path-based Explanations for Knowledge Graph Completion", ICLR 2025,
arXiv 2404.03893), in the spirit of the Royalty-20k/30k datasets (Halliwell, Gandon and Lécué,
"Linked Data Ground Truth for Quantitative and Qualitative Evaluation of Explanations for
Relational Graph Convolutional Network Link Prediction on Knowledge Graphs", WI-IAT 2021,
doi:10.1145/3486622.3493921), which plant spouse symmetry, inverses and grandparent composition.

**Split guarantee.** :func:`family_kg` puts every base fact in train and keeps every body triple
of every explanation of a valid or test triple in train, so an explainer can find each
ground-truth explanation in the training graph. Explanations of *training* triples may use a
held-out derived triple (e.g. a held-out ``spouse`` triple in a by-marriage uncle's body).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from graphdata._family_rules import (
    BASE_RELATIONS,
    FEMALE,
    check_world_arguments,
    close_and_ground,
    compile_rules,
    generate_population,
    order_groundings,
    parse_chain,
    split_derived,
)
from graphdata.errors import GraphDataError, UnknownLabelError
from graphdata.triples import KGDataset
from graphdata.typing import LabeledTriple

__all__ = [
    "BASE_RELATIONS",
    "BodyAtom",
    "HornRule",
    "Explanation",
    "FAMILY_RULES",
    "FamilyKG",
    "family_kg",
    "apply_rules",
]


@dataclass(frozen=True)
class BodyAtom:
    """One body atom of a chain rule: a relation traversed forwards or backwards.

    Args:
        relation: The relation label.
        inverse: ``False`` (default) matches :math:`(X_{i-1}, r, X_i)`; ``True`` matches
            :math:`(X_i, r, X_{i-1})`, so inverse rules such as
            ``child_of(X,Y) <- parent(Y,X)`` are expressible.
    """

    relation: str
    inverse: bool = False


@dataclass(frozen=True)
class HornRule:
    r"""A chain-shaped Horn rule :math:`r(X_0, X_n) \leftarrow a_1, \dots, a_n` over a path.

    Atom :math:`a_i` links :math:`X_{i-1}` to :math:`X_i` (see :class:`BodyAtom`), so a rule of
    length :math:`n` explains a triple by a path of :math:`n` triples from its head entity to
    its tail entity.

    Args:
        head: The head relation label.
        body: The body atoms, in path order from :math:`X_0` to :math:`X_n` (at least one).

    Examples:
        >>> rule = HornRule("grandparent", (BodyAtom("parent"), BodyAtom("parent")))
        >>> str(rule)
        'grandparent(X,Z) <- parent(X,Y), parent(Y,Z)'
        >>> HornRule.from_string("child_of(X,Y) <- parent(Y,X)").body
        (BodyAtom(relation='parent', inverse=True),)
    """

    head: str
    body: tuple[BodyAtom, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "body", tuple(self.body))
        if not self.body or not all(isinstance(a, BodyAtom) for a in self.body):
            raise GraphDataError(
                f"body: expected a non-empty tuple of BodyAtom, got {self.body!r}; "
                "write e.g. (BodyAtom('parent'), BodyAtom('parent'))"
            )

    @property
    def length(self) -> int:
        """The number of body atoms."""
        return len(self.body)

    def __str__(self) -> str:
        n = len(self.body)
        names = "XYZW" if n <= 3 else [f"X{i}" for i in range(n + 1)]
        atoms = []
        for i, atom in enumerate(self.body):
            x, y = (names[i + 1], names[i]) if atom.inverse else (names[i], names[i + 1])
            atoms.append(f"{atom.relation}({x},{y})")
        return f"{self.head}({names[0]},{names[n]}) <- {', '.join(atoms)}"

    @classmethod
    def from_string(cls, text: str) -> HornRule:
        """Parse ``"head(A,B) <- r1(A,C), r2(D,C), ..."``, a chain from A to B.

        Args:
            text: The rule; variable names are free, atoms are listed in path order.

        Returns:
            The rule.

        Raises:
            GraphDataError: If the text is not a chain rule from the head's first to its second
                variable.
        """
        head, body = parse_chain(text)
        return cls(head, tuple(BodyAtom(r, inverse=inv) for r, inv in body))


#: The planted rules of :func:`family_kg`. Length 1: spouse symmetry, child_of as the inverse
#: of parent. Length 2: grandparent, uncle and aunt by blood. Length 3: great-grandparent, uncle
#: and aunt by marriage (the world's marriages are heterosexual), cousins through either parent.
FAMILY_RULES: tuple[HornRule, ...] = tuple(
    HornRule.from_string(text)
    for text in (
        "spouse(X,Y) <- spouse(Y,X)",
        "child_of(X,Y) <- parent(Y,X)",
        "grandparent(X,Z) <- parent(X,Y), parent(Y,Z)",
        "uncle(X,Z) <- brother(X,Y), parent(Y,Z)",
        "aunt(X,Z) <- sister(X,Y), parent(Y,Z)",
        "great_grandparent(X,W) <- parent(X,Y), parent(Y,Z), parent(Z,W)",
        "uncle(X,W) <- spouse(X,Y), sister(Y,Z), parent(Z,W)",
        "aunt(X,W) <- spouse(X,Y), brother(Y,Z), parent(Z,W)",
        "cousin(X,W) <- parent(Y,X), brother(Y,Z), parent(Z,W)",
        "cousin(X,W) <- parent(Y,X), sister(Y,Z), parent(Z,W)",
    )
)


@dataclass(frozen=True)
class Explanation:
    """One ground-truth explanation: a rule and one grounding of its body.

    Args:
        rule: The rule that was applied.
        path: The body triples ``(head, relation, tail)`` as stored in the graph, one per body
            atom, in path order; a backward atom's triple reads from the later variable.
    """

    rule: HornRule
    path: tuple[LabeledTriple, ...]

    @property
    def length(self) -> int:
        """The rule length (number of body triples)."""
        return len(self.path)

    def __str__(self) -> str:
        body = ", ".join(f"{r}({h},{t})" for h, r, t in self.path)
        return f"{body}  [{self.rule}]"


_SPLIT_NAMES = ("train", "valid", "test")


@dataclass(frozen=True)
class FamilyKG:
    """A generated family world: the dataset, its rules and the ground-truth explanations.

    Args:
        dataset: Train/valid/test triples. Train holds every base fact and the derived triples
            drawn for training; valid and test hold only derived triples.
        rules: The rules that derived the non-base triples.
        explanations: Every derived triple (in any split) mapped to all its explanations, ordered
            by rule (in ``rules`` order) and then by body triples.
        base_triples: The base facts, all in train.
        derived_splits: The derived triples per split name (``"train"``, ``"valid"``,
            ``"test"``).
        gender: Each person's gender, ``"male"`` or ``"female"``.
        generation: Each person's generation, 0 for founders; spouses who marry in share their
            partner's generation, so every parent is one generation above their child.
    """

    dataset: KGDataset
    rules: tuple[HornRule, ...]
    explanations: dict[LabeledTriple, tuple[Explanation, ...]] = field(repr=False)
    base_triples: tuple[LabeledTriple, ...] = field(repr=False)
    derived_splits: dict[str, tuple[LabeledTriple, ...]] = field(repr=False)
    gender: dict[str, str] = field(repr=False)
    generation: dict[str, int] = field(repr=False)

    @cached_property
    def _base_set(self) -> frozenset[LabeledTriple]:
        return frozenset(self.base_triples)

    def explanations_for(self, triple: Sequence[str]) -> tuple[Explanation, ...]:
        """All ground-truth explanations of a triple; ``()`` for a base fact.

        Args:
            triple: A ``(head, relation, tail)`` label tuple of this world.

        Returns:
            The explanations, as in :attr:`explanations`.

        Raises:
            UnknownLabelError: If a label is not in the world (the message lists close ones).
            GraphDataError: If the triple is well-formed but not true in the world.
        """
        key = tuple(triple)
        if key in self.explanations:
            return self.explanations[key]
        if len(key) != 3:
            raise GraphDataError(f"triple: expected (head, relation, tail), got {triple!r}")
        if key in self._base_set:
            return ()
        h, r, t = key
        relations = {*BASE_RELATIONS, *(rule.head for rule in self.rules)}
        for kind, label, known in (
            ("entity", h, self.gender),
            ("relation", r, relations),
            ("entity", t, self.gender),
        ):
            if label not in known:
                raise UnknownLabelError(kind, label, known, argument="triple")
        raise GraphDataError(
            f"triple: {key!r} is neither a base fact nor derived by the rules of this world; "
            "pick one from derived_triples(split) or base_triples"
        )

    def ground_truth_triples(self, triple: Sequence[str]) -> set[LabeledTriple]:
        r"""The union of the body triples of all explanations of a triple.

        .. math::
            \mathrm{GT}(\tau) = \bigcup_{(\rho, p) \in \mathcal{E}(\tau)} \{b : b \in p\}

        Args:
            triple: A ``(head, relation, tail)`` label tuple of this world.

        Returns:
            The set of labelled body triples (empty for a base fact), the reference set for the
            precision and recall of an explainer.

        Raises:
            UnknownLabelError: If a label is not in the world.
            GraphDataError: If the triple is not true in the world.
        """
        return {b for e in self.explanations_for(triple) for b in e.path}

    def derived_triples(self, split: str) -> tuple[LabeledTriple, ...]:
        """The rule-derived triples of one split.

        Args:
            split: ``"train"``, ``"valid"`` or ``"test"``.

        Returns:
            The derived triples of that split, in dataset order.

        Raises:
            GraphDataError: If ``split`` is not one of the three names.
        """
        if split not in _SPLIT_NAMES:
            raise GraphDataError(f"split: expected one of {_SPLIT_NAMES}, got {split!r}")
        return self.derived_splits[split]


def _check_rules(rules: Iterable[HornRule]) -> tuple[HornRule, ...]:
    rules = tuple(rules)
    bad = [rule for rule in rules if not isinstance(rule, HornRule)]
    if bad:
        raise GraphDataError(
            f"rules: expected HornRule objects, got {bad[0]!r}; build them with "
            "HornRule.from_string('grandparent(X,Z) <- parent(X,Y), parent(Y,Z)')"
        )
    return rules


def _collect(
    columns: tuple[np.ndarray, np.ndarray, np.ndarray],
    num_base: int,
    groundings: list[tuple[np.ndarray, np.ndarray]],
    entities: Sequence[str],
    relations: Sequence[str],
    rules: tuple[HornRule, ...],
) -> tuple[
    list[LabeledTriple],
    dict[LabeledTriple, tuple[Explanation, ...]],
    tuple[np.ndarray, np.ndarray],
]:
    """Labels of all triples, explanations of the derived ones, and their derived-body pairs."""
    h, r, t = (c.tolist() for c in columns)
    labels = [(entities[x], relations[y], entities[z]) for x, y, z in zip(h, r, t)]
    bodies, slots, head, starts, depends_on = order_groundings(groundings, num_base)
    found: list[Explanation] = [None] * head.size  # type: ignore[list-item]
    get = labels.__getitem__
    for rule, body, slot in zip(rules, bodies, slots):
        for p, row in zip(slot.tolist(), body.tolist()):
            found[p] = Explanation(rule, tuple(map(get, row)))
    ends = [*starts[1:].tolist(), head.size]
    first = head[starts].tolist()
    explanations = {labels[x]: tuple(found[s:e]) for x, s, e in zip(first, starts.tolist(), ends)}
    return labels, explanations, depends_on


def family_kg(
    num_people: int = 1000,
    *,
    num_generations: int = 5,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
    marriage_rate: float = 0.8,
    outsider_rate: float = 0.3,
    rules: Sequence[HornRule] = FAMILY_RULES,
) -> FamilyKG:
    r"""Generate the seeded family world, derive its rule heads and split them.

    **World.** Generation :math:`g = 0, \dots, G-1` is planned to hold
    :math:`S_g = P \, 1.3^g / \sum_{k<G} 1.3^k` of the :math:`P` people. Generation 0 is
    :math:`\max(1, \lfloor S_0 / 2 \rfloor)` founder couples. Generation :math:`g \ge 1` has
    :math:`c_g = \operatorname{round}(S_g / (1 + m o))` children (:math:`m` = ``marriage_rate``,
    :math:`o` = ``outsider_rate``, so that with the outsiders who marry in it holds about
    :math:`S_g` people); the last generation takes the remainder, so the total is exactly
    :math:`P`. Each child picks one couple of generation :math:`g-1` uniformly at random as its
    parents, and a gender with probability ½. Outside the last generation a person marries with
    probability :math:`m`; a married person marries an outsider (a new person of the opposite
    gender, with no parents) with probability :math:`o`, else a random person of the opposite
    gender from the same generation's pool; would-be pairs of siblings, and people left without
    a partner in the pool, marry outsiders instead. When the head count left for outsiders runs
    out (only in tiny worlds) the rest stay single, and a generation without any couple gets one
    outsider marriage so that the family line continues.

    **Rules.** :math:`\mathcal{K}` is the least fixpoint of ``rules`` over the base facts
    :math:`\mathcal{B}` and :math:`\mathcal{E}(\tau)` the set of all groundings of all rules
    with head :math:`\tau` (see the module docstring), for every
    :math:`\tau \in \mathcal{D} = \mathcal{K} \setminus \mathcal{B}`.

    **Split.** All of :math:`\mathcal{B}` goes to train. Per relation :math:`r` with
    :math:`n_r` derived triples, :math:`\lfloor f_\text{valid} n_r + \tfrac12 \rfloor` go to
    valid and :math:`\lfloor f_\text{test} n_r + \tfrac12 \rfloor` to test (capped so that at
    least one stays in train), drawn greedily in a seeded random order subject to

    .. math::
        \forall \tau \in \text{valid} \cup \text{test},\;
        \forall (\rho, p) \in \mathcal{E}(\tau):\quad p \subseteq \text{train},

    i.e. every body triple of every explanation of a held-out triple is a training triple, so
    an explainer can find the whole explanation in the training graph. Base body triples
    satisfy this by construction; a derived body triple (e.g. ``spouse`` in the by-marriage
    rules) is kept out of valid/test whenever a held-out triple needs it.

    Args:
        num_people: The exact number of people :math:`P`; at least ``2 * num_generations``,
            and at most the machine's physical memory over 8,192 bytes, a lower bound of the
            world's peak memory per person (a larger world cannot be held in memory and is
            refused; :func:`graphdata.checks.check_size`). Default 1000 (about 15k triples;
            5,500 people give about 100k, 52,000 about 1M).
        num_generations: The number of generations :math:`G \ge 2`. Default 5.
        seed: Seed of the NumPy generator that draws the world and the split; ``None`` draws
            fresh entropy. Default 0.
        valid_fraction: Fraction of each relation's derived triples held out for validation.
            Default 0.1.
        test_fraction: Fraction held out for testing; ``valid_fraction + test_fraction < 1``.
            Default 0.1.
        marriage_rate: Probability that a person (outside the last generation) marries, in
            ``(0, 1]``. Default 0.8.
        outsider_rate: Probability that a marriage is to an outsider, in ``[0, 1]``. Default 0.3.
        rules: Chain Horn rules over the base relations :data:`BASE_RELATIONS` and the rules'
            own heads (recursion is allowed). Default :data:`FAMILY_RULES`.

    Returns:
        The world: dataset (name ``"family"``, entities ``person_0000`` ..., zero-padded to at
        least 4 digits), rules, explanations, base facts, derived triples per split, genders and
        generations.

    Raises:
        GraphDataError: On an out-of-range argument, or held-out fractions too large to meet
            the split guarantee (lower them).
        UnknownLabelError: If a rule body uses a relation that is neither a base relation nor
            a rule head.

    Examples:
        >>> kg = family_kg(200, seed=0)
        >>> len(kg.gender), kg.dataset.name
        (200, 'family')
        >>> t = kg.derived_triples("test")[0]
        >>> kg.ground_truth_triples(t) <= set(kg.dataset.train.to_labeled_triples())
        True
    """
    rules = _check_rules(rules)
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 0):
        raise GraphDataError(
            f"seed: expected an int >= 0 or None, got {seed!r}; pass e.g. seed=0 (NumPy seeds "
            "are non-negative)"
        )
    check_world_arguments(
        num_people, num_generations, valid_fraction, test_fraction, marriage_rate, outsider_rate
    )
    rng = np.random.default_rng(seed)
    world = generate_population(num_people, num_generations, marriage_rate, outsider_rate, rng)
    relations = list(BASE_RELATIONS)
    compiled = compile_rules(rules, relations)
    h, r, t, groundings = close_and_ground(
        world.head, world.relation, world.tail, num_people, compiled
    )
    num_base = world.head.size
    width = max(4, len(str(num_people - 1)))
    people = [f"person_{i:0{width}d}" for i in range(num_people)]
    labels, explanations, depends_on = _collect(
        (h, r, t), num_base, groundings, people, relations, rules
    )
    codes, shortfall = split_derived(r[num_base:], depends_on, valid_fraction, test_fraction, rng)
    if shortfall.any():
        short = {relations[i]: int(n) for i, n in enumerate(shortfall) if n}
        raise GraphDataError(
            f"valid_fraction, test_fraction: {valid_fraction}, {test_fraction} cannot be met "
            f"while keeping every explanation of a held-out triple in train (short by {short}); "
            "lower the fractions"
        )
    derived = labels[num_base:]
    splits = {
        name: tuple(x for x, c in zip(derived, codes.tolist()) if c == code)
        for code, name in enumerate(_SPLIT_NAMES)
    }
    base = tuple(labels[:num_base])
    dataset = KGDataset.from_labeled(
        base + splits["train"], splits["valid"], splits["test"], name="family"
    )
    return FamilyKG(
        dataset=dataset,
        rules=rules,
        explanations=explanations,
        base_triples=base,
        derived_splits=splits,
        gender={p: "female" if g == FEMALE else "male" for p, g in zip(people, world.gender)},
        generation=dict(zip(people, world.generation.tolist())),
    )


def apply_rules(
    triples: Iterable[Sequence[str]], rules: Sequence[HornRule]
) -> dict[LabeledTriple, tuple[Explanation, ...]]:
    r"""Close a set of labelled triples under chain Horn rules and explain every derived triple.

    Computes the least fixpoint :math:`\mathcal{K}` of ``rules`` over the given facts
    :math:`\mathcal{B}` and returns :math:`\mathcal{E}(\tau)` for every
    :math:`\tau \in \mathcal{K} \setminus \mathcal{B}` (module docstring), with vectorised joins.

    Args:
        triples: The facts, ``(head, relation, tail)`` label tuples; duplicates are merged.
        rules: The rules; body relations must occur in ``triples`` or as a rule head.

    Returns:
        Every derived triple mapped to all its explanations (ordered by rule, then body).

    Raises:
        GraphDataError: If a triple is not three strings or a rule is not a :class:`HornRule`.
        UnknownLabelError: If a body relation occurs neither in the facts nor as a rule head.

    Examples:
        >>> facts = [("ann", "parent", "bob"), ("bob", "parent", "cy"), ("bob", "parent", "di")]
        >>> rule = HornRule.from_string("grandparent(X,Z) <- parent(X,Y), parent(Y,Z)")
        >>> out = apply_rules(facts, [rule])
        >>> sorted(out)
        [('ann', 'grandparent', 'cy'), ('ann', 'grandparent', 'di')]
        >>> out["ann", "grandparent", "cy"][0].path
        (('ann', 'parent', 'bob'), ('bob', 'parent', 'cy'))
    """
    rules = _check_rules(rules)
    rows = list(dict.fromkeys(tuple(x) for x in triples))
    bad = [x for x in rows if len(x) != 3 or not all(isinstance(s, str) for s in x)]
    if bad:
        raise GraphDataError(f"triples: expected (head, relation, tail) strings, got {bad[0]!r}")
    entities = list(dict.fromkeys(e for h, _, t in rows for e in (h, t)))
    relations = list(dict.fromkeys(r for _, r, _ in rows))
    e_id = {e: i for i, e in enumerate(entities)}
    r_id = {r: i for i, r in enumerate(relations)}
    compiled = compile_rules(rules, relations)
    ids = np.array([(e_id[h], r_id[r], e_id[t]) for h, r, t in rows], dtype=np.int64)
    ids = ids.reshape(-1, 3)  # [F, 3], also when there are no facts
    h, r, t, groundings = close_and_ground(ids[:, 0], ids[:, 1], ids[:, 2], len(entities), compiled)
    return _collect((h, r, t), len(rows), groundings, entities, relations, rules)[1]
