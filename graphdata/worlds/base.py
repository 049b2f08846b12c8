r"""A synthetic world: base facts, rules as text, and the ground truth graphdata.rules computes.

The generators of :mod:`graphdata.worlds` (academic, geography, biology, software) only draw
**base facts**; everything rule-related happens here, world-agnostically, with the rule engine of
:mod:`graphdata.rules` (:func:`~graphdata.rules.parse_rules`, :func:`~graphdata.rules.derived`,
:func:`~graphdata.rules.groundings`). :func:`build_world` turns base facts plus rules text into a
:class:`World`:

1. **Closure with exceptions.** :math:`K_0 = \mathcal{B}`, the base facts. Step :math:`k` derives
   :math:`N_k = \bigcup_\rho \text{derived}(\rho, K_k) \setminus (K_k \cup W_k)` one rule at a
   time; a new triple :math:`\tau` is an **exception** (its head is withheld: the body holds in
   the world but the head does not) with probability :math:`q_\tau = \min_{\rho \text{ derives }
   \tau} q_\rho`, the smallest exception rate among the rules that derive it at that step, drawn
   once; :math:`W_{k+1}` collects the exceptions and :math:`K_{k+1} = K_k \cup (N_k \setminus
   W_{k+1})`. The loop stops when :math:`N_k = \emptyset` (the least fixpoint when every rate is
   0). A rule whose head relation no other rule derives therefore withholds a
   :math:`q_\rho` fraction of its heads, up to sampling noise.
2. **Noise.** For a head relation :math:`r` with noise rate :math:`\nu_r > 0`,
   :math:`\operatorname{round}(\nu_r n_r / (1 - \nu_r))` facts :math:`(x, r, y)` are added, with
   :math:`n_r` the derived facts of :math:`r`, :math:`x` drawn from the heads and :math:`y` from
   the tails of those facts (so types stay right), rejecting self-pairs and pairs already in the
   world, withheld, or grounded by a rule (after :math:`50 \times` the wanted number of draws
   it stops short); then step 1 runs again (noise may feed other rules' bodies). The noise
   share of :math:`r`'s non-base facts is then about :math:`\nu_r`.
3. **Labels.** Every non-base fact with at least one grounding in the final world :math:`K` is
   *derived*; one with none is *noise* (only the facts of step 2).
4. **Split.** Base facts go to train. Per relation, the derived and noise facts are shuffled
   (seeded) and :math:`\lfloor f_\text{valid} n + \frac12 \rfloor` go to valid,
   :math:`\lfloor f_\text{test} n + \frac12 \rfloor` to test (at least one stays in train). A
   held-out derived fact with no grounding in the training triples (its body used another
   held-out fact) goes back to train; moving triples into train only adds groundings, so one
   pass gives the **split guarantee**: every derived valid/test fact has a grounding whose body
   triples are all in train. Noise facts in valid/test have no grounding anywhere; leave them
   out of explanation means (:func:`graphdata.rules.explanation_scores` returns ``None``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from graphdata.atomic import write_text_atomic
from graphdata.checks import check_size
from graphdata.errors import GraphDataError
from graphdata.rules import Rule, RuleGraph, derived, groundings, parse_rules
from graphdata.triples import KGDataset
from graphdata.typing import LabeledTriple

__all__ = [
    "SPLITS",
    "WORLD_BYTES_PER_ENTITY",
    "World",
    "build_world",
    "check_world_arguments",
    "entity_labels",
    "weighted_pick",
]

#: The split names, in file order.
SPLITS = ("train", "valid", "test")

#: A lower bound of the peak memory of a world generator per primary entity (``size``), in
#: bytes: the tracemalloc peak of every generator of :mod:`graphdata.worlds` at sizes 100 and
#: 400 (seed 0) grew by 11,900 (geography) to 29,700 (travel) bytes per primary entity, and
#: that of :func:`graphdata.synthetic.family_kg` by 9,500 per person. A size whose
#: ``size * WORLD_BYTES_PER_ENTITY`` exceeds the machine's memory is refused
#: (:func:`check_world_arguments`) instead of allocating until the machine runs out.
WORLD_BYTES_PER_ENTITY = 8192


@dataclass(frozen=True)
class World:
    r"""A synthetic knowledge graph with planted rules, exceptions, noise and its ground truth.

    Attributes:
        name: The world's name (also the dataset's name).
        dataset: Train/valid/test triples; train holds every base fact.
        rules: The planted rules, parsed from :attr:`rules_text` by
            :func:`graphdata.rules.parse_rules`.
        rules_text: The rules as text, one per line, each named (``name: head <- body``).
        base_triples: The generated base facts, all in train.
        derived_splits: The rule-derived facts (at least one grounding in the world) per split.
        noise_splits: The noise facts (facts of a rule-head relation with no grounding) per
            split.
        exceptions: Triples some rule derives but the world withholds (not in any split).
        exception_rates: Rule name mapped to its exception rate :math:`q_\rho` (0 if absent).
        noise_rates: Head relation mapped to its noise rate :math:`\nu_r` (0 if absent).
        symmetric: Relations :math:`r` with :math:`(x, r, y) \in K \Leftrightarrow
            (y, r, x) \in K`.
        inverse_pairs: Pairs ``(r, s)`` with :math:`(x, r, y) \in K \Leftrightarrow
            (y, s, x) \in K`.
        shortcuts: Pairs ``(s, h)``: relation ``s`` is not in any body of a rule for ``h`` but
            links many pairs that ``h`` links, a trap for explainers (a correlated shortcut).
        entity_types: Each entity mapped to its type (``"author"``, ``"country"``, ...).
        seed: The seed the world was drawn with.
        size: The size argument it was drawn with (the number of its primary entities).
    """

    name: str
    dataset: KGDataset
    rules: tuple[Rule, ...]
    rules_text: str
    base_triples: tuple[LabeledTriple, ...] = field(repr=False)
    derived_splits: dict[str, tuple[LabeledTriple, ...]] = field(repr=False)
    noise_splits: dict[str, tuple[LabeledTriple, ...]] = field(repr=False)
    exceptions: tuple[LabeledTriple, ...] = field(repr=False)
    exception_rates: dict[str, float] = field(repr=False)
    noise_rates: dict[str, float] = field(repr=False)
    symmetric: tuple[str, ...] = field(repr=False)
    inverse_pairs: tuple[tuple[str, str], ...] = field(repr=False)
    shortcuts: tuple[tuple[str, str], ...] = field(repr=False)
    entity_types: dict[str, str] = field(repr=False)
    seed: int | None = None
    size: int = 0

    @cached_property
    def train_graph(self) -> RuleGraph:
        """The training triples indexed for :func:`graphdata.rules.groundings` (built once)."""
        return RuleGraph(self.dataset.train)

    def targets(self, split: str) -> tuple[LabeledTriple, ...]:
        """The derived facts of ``"valid"`` or ``"test"``: the targets with a ground truth.

        Args:
            split: ``"train"``, ``"valid"`` or ``"test"``.

        Returns:
            The split's rule-derived facts (noise facts excluded), in split order.

        Raises:
            GraphDataError: If ``split`` is not one of the three names.
        """
        if split not in SPLITS:
            raise GraphDataError(
                f"split: expected one of {SPLITS}, got {split!r}; pick 'test' for the targets "
                "to explain"
            )
        return self.derived_splits[split]

    def groundings(self, triple: Sequence[str]) -> tuple[tuple[LabeledTriple, ...], ...]:
        """Every grounding of every rule that derives ``triple`` in the training triples.

        Args:
            triple: A ``(head, relation, tail)`` label tuple.

        Returns:
            The groundings' body triples, rule by rule in :attr:`rules` order; ``()`` for a
            noise fact, a base fact no rule derives, or a triple not in the world.
        """
        graph = self.train_graph
        return tuple(g for rule in self.rules for g in groundings(rule, triple, graph))

    def write(self, folder: str | os.PathLike[str]) -> Path:
        """Write the world into ``folder`` (created if needed), every file atomically.

        Writes ``train.txt``, ``valid.txt`` and ``test.txt`` (tab-separated label triples,
        :meth:`graphdata.KGDataset.to_folder`; ``graphlib kg train --dataset FOLDER`` reads
        them), ``rules.txt`` (:attr:`rules_text`; ``graphlib kg explain --rules``) and
        ``world.json`` (name, seed, size, rates, symmetric and inverse relations, shortcuts,
        and the noise facts of each split and the exceptions, as label lists).

        Args:
            folder: The destination folder.

        Returns:
            The folder as a :class:`~pathlib.Path`.
        """
        path = Path(folder)
        self.dataset.to_folder(path)
        write_text_atomic(path / "rules.txt", self.rules_text)
        meta = {
            "name": self.name,
            "seed": self.seed,
            "size": self.size,
            "exception_rates": self.exception_rates,
            "noise_rates": self.noise_rates,
            "symmetric": list(self.symmetric),
            "inverse_pairs": [list(p) for p in self.inverse_pairs],
            "shortcuts": [list(p) for p in self.shortcuts],
            "noise": {s: [list(t) for t in self.noise_splits[s]] for s in SPLITS},
            "exceptions": [list(t) for t in self.exceptions],
        }
        write_text_atomic(
            path / "world.json", json.dumps(meta, indent=1, sort_keys=True, allow_nan=False) + "\n"
        )
        return path


def entity_labels(prefix: str, n: int) -> list[str]:
    """``n`` entity labels ``prefix_000``, ``prefix_001``, ... (at least three digits).

    Examples:
        >>> entity_labels("city", 3)
        ['city_000', 'city_001', 'city_002']
    """
    width = max(3, len(str(n - 1)))
    return [f"{prefix}_{i:0{width}d}" for i in range(n)]


def weighted_pick(rng: np.random.Generator, pool: list[int], weight: np.ndarray) -> int:
    """One element of ``pool`` drawn with probability proportional to ``weight[pool]``."""
    w = weight[pool]
    return pool[int(rng.choice(len(pool), p=w / w.sum()))]


def check_world_arguments(
    size: object, minimum: int, seed: object, valid_fraction: object, test_fraction: object
) -> None:
    """Validate the arguments every world generator shares; raise a clear error on a bad one.

    Args:
        size: The number of primary entities; an int of at least ``minimum`` and at most the
            machine's physical memory over :data:`WORLD_BYTES_PER_ENTITY` (a world any larger
            cannot be held in memory; :func:`graphdata.checks.check_size`).
        minimum: The smallest allowed size.
        seed: An int or ``None``.
        valid_fraction: A number in ``[0, 1)``.
        test_fraction: A number in ``[0, 1)``, with ``valid_fraction + test_fraction < 1``.

    Raises:
        GraphDataError: Naming the argument, the expectation and the value.
    """
    if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < minimum:
        raise GraphDataError(
            f"size: expected an int >= {minimum}, got {size!r}; pass e.g. size={4 * minimum}"
        )
    check_size("size", size, minimum, bytes_each=WORLD_BYTES_PER_ENTITY, what="primary entities")
    if seed is not None and (
        not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0
    ):
        raise GraphDataError(
            f"seed: expected an int >= 0 or None, got {seed!r}; pass e.g. seed=0 (NumPy seeds "
            "are non-negative)"
        )
    for name, value in (("valid_fraction", valid_fraction), ("test_fraction", test_fraction)):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok or not 0.0 <= float(value) < 1.0:  # type: ignore[arg-type]
            raise GraphDataError(f"{name}: expected a number in [0, 1), got {value!r}")
    if float(valid_fraction) + float(test_fraction) >= 1.0:  # type: ignore[arg-type]
        raise GraphDataError(
            f"valid_fraction, test_fraction: expected a sum below 1, got {valid_fraction} + "
            f"{test_fraction}; lower them (0.1 each is usual)"
        )


def _check_rates(
    rates: Mapping[str, float], known: Iterable[str], argument: str, what: str
) -> dict[str, float]:
    known = set(known)
    out: dict[str, float] = {}
    for key, value in rates.items():
        if key not in known:
            raise GraphDataError(
                f"{argument}: {key!r} is not a {what} of the rules; expected one of {sorted(known)}"
            )
        if not isinstance(value, (int, float)) or not 0.0 <= float(value) < 1.0:
            raise GraphDataError(f"{argument}[{key!r}]: expected a rate in [0, 1), got {value!r}")
        out[key] = float(value)
    return out


def _close(
    facts: set[LabeledTriple],
    withheld: set[LabeledTriple],
    rules: Sequence[Rule],
    rates: Sequence[float],
    rng: np.random.Generator,
) -> None:
    """Step 1 of the module docstring, in place on ``facts`` and ``withheld``."""
    while True:
        graph = RuleGraph(sorted(facts))
        rate: dict[LabeledTriple, float] = {}
        for rule, q in zip(rules, rates):
            for triple in derived([rule], graph):
                if triple not in facts and triple not in withheld:
                    rate[triple] = min(rate.get(triple, 1.0), q)
        if not rate:
            return
        new = sorted(rate)
        draws = rng.random(len(new))
        for triple, u in zip(new, draws.tolist()):
            (withheld if u < rate[triple] else facts).add(triple)


def _add_noise(
    facts: set[LabeledTriple],
    withheld: set[LabeledTriple],
    base: set[LabeledTriple],
    rules: Sequence[Rule],
    noise_rates: Mapping[str, float],
    rng: np.random.Generator,
) -> None:
    """Step 2 of the module docstring, in place on ``facts``."""
    graph = RuleGraph(sorted(facts))
    for relation, nu in sorted(noise_rates.items()):
        if nu <= 0:
            continue
        own = sorted(t for t in facts if t[1] == relation and t not in base)
        if not own:
            continue
        wanted = round(nu * len(own) / (1.0 - nu))
        heads = sorted({h for h, _, _ in own})
        tails = sorted({t for _, _, t in own})
        head_rules = [rule for rule in rules if rule.head.relation == relation]
        added, tries = 0, 0
        while added < wanted and tries < 50 * max(wanted, 1):
            tries += 1
            x = heads[int(rng.integers(len(heads)))]
            y = tails[int(rng.integers(len(tails)))]
            triple = (x, relation, y)
            if x == y or triple in facts or triple in withheld:
                continue
            if any(groundings(rule, triple, graph) for rule in head_rules):
                continue
            facts.add(triple)
            added += 1


def _split(
    pool: Sequence[LabeledTriple],
    valid_fraction: float,
    test_fraction: float,
    rng: np.random.Generator,
) -> dict[LabeledTriple, str]:
    """Per relation: a seeded shuffle, then valid, test, and the rest in train."""
    by_relation: dict[str, list[LabeledTriple]] = {}
    for triple in pool:
        by_relation.setdefault(triple[1], []).append(triple)
    where: dict[LabeledTriple, str] = {}
    for relation in sorted(by_relation):
        rows = by_relation[relation]
        n = len(rows)
        order = rng.permutation(n).tolist()
        n_valid = min(int(np.floor(valid_fraction * n + 0.5)), max(n - 1, 0))
        n_test = min(int(np.floor(test_fraction * n + 0.5)), max(n - 1 - n_valid, 0))
        for rank, i in enumerate(order):
            where[rows[i]] = (
                "valid" if rank < n_valid else "test" if rank < n_valid + n_test else "train"
            )
    return where


def build_world(
    name: str,
    base_triples: Iterable[Sequence[str]],
    rules_text: str,
    *,
    seed: int | None,
    size: int,
    rng: np.random.Generator,
    entity_types: Mapping[str, str],
    exception_rates: Mapping[str, float] | None = None,
    noise_rates: Mapping[str, float] | None = None,
    symmetric: Sequence[str] = (),
    inverse_pairs: Sequence[tuple[str, str]] = (),
    shortcuts: Sequence[tuple[str, str]] = (),
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Close base facts under rules with exceptions and noise, label and split them.

    The four steps of the module docstring; the ground truth comes from
    :mod:`graphdata.rules` alone, so any world generator (or user) that draws base facts gets
    the same guarantees.

    Args:
        name: The world's name.
        base_triples: The base facts as label triples (repeats merged).
        rules_text: The rules, :func:`graphdata.rules.parse_rules` syntax, each with a name.
        seed: The seed the caller drew ``rng`` from, recorded in the world.
        size: The size the caller drew the world at, recorded.
        rng: The generator for exceptions, noise and the split (continues the caller's).
        entity_types: Each entity mapped to its type; every base-fact entity must be listed,
            and the types of entities in no base fact are dropped.
        exception_rates: Rule name mapped to :math:`q_\rho \in [0, 1)`. Default none.
        noise_rates: Head relation mapped to :math:`\nu_r \in [0, 1)`. Default none.
        symmetric: Relations the generator made symmetric (recorded). Default none.
        inverse_pairs: Relation pairs the generator made inverse (recorded). Default none.
        shortcuts: ``(shortcut, head)`` relation pairs (recorded). Default none.
        valid_fraction: Held-out share per relation for validation. Default 0.1.
        test_fraction: Held-out share per relation for testing. Default 0.1.

    Returns:
        The :class:`World`.

    Raises:
        GraphDataError: On unnamed or repeated rule names, a rate for an unknown rule or
            relation, an out-of-range rate, or an entity without a type.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> base = [("a", "p", "b"), ("b", "p", "c"), ("c", "p", "d")]
        >>> w = build_world("toy", base, "gp: gp(X,Z) <- p(X,Y), p(Y,Z)", seed=0, size=4,
        ...                 rng=rng, entity_types=dict.fromkeys("abcd", "node"),
        ...                 valid_fraction=0.0, test_fraction=0.5)
        >>> w.targets("test"), w.groundings(w.targets("test")[0])
        ((('b', 'gp', 'd'),), ((('b', 'p', 'c'), ('c', 'p', 'd')),))
    """
    rules = parse_rules(rules_text, source=f"{name} rules")
    names = [rule.name for rule in rules]
    if any(n is None for n in names) or len(set(names)) != len(names):
        raise GraphDataError(
            f"rules_text: expected every rule to have a distinct name ('name: head <- body'), "
            f"got names {names}"
        )
    q = _check_rates(exception_rates or {}, [str(n) for n in names], "exception_rates", "rule name")
    nu = _check_rates(
        noise_rates or {}, {rule.head.relation for rule in rules}, "noise_rates", "head relation"
    )
    base = {(str(h), str(r), str(t)) for h, r, t in base_triples}
    entities = {e for h, _, t in base for e in (h, t)}
    untyped = sorted(entities - set(entity_types))
    if untyped:
        raise GraphDataError(
            f"entity_types: expected a type for every entity, got none for {untyped[:3]}"
        )
    rates = [q.get(str(rule.name), 0.0) for rule in rules]
    facts, withheld = set(base), set[LabeledTriple]()
    _close(facts, withheld, rules, rates, rng)
    _add_noise(facts, withheld, base, rules, nu, rng)
    _close(facts, withheld, rules, rates, rng)
    final = RuleGraph(sorted(facts))
    pool = sorted(facts - base)
    noise = {t for t in pool if not any(groundings(rule, t, final) for rule in rules)}
    where = _split(pool, valid_fraction, test_fraction, rng)
    train_graph = RuleGraph(sorted(base | {t for t in pool if where[t] == "train"}))
    for triple in pool:  # the split guarantee: one pass suffices (train only grows)
        if where[triple] != "train" and triple not in noise:
            if not any(groundings(rule, triple, train_graph) for rule in rules):
                where[triple] = "train"
    ordered_base = tuple(sorted(base))
    splits = {s: [t for t in pool if where[t] == s] for s in SPLITS}
    dataset = KGDataset.from_labeled(
        ordered_base + tuple(splits["train"]),
        splits["valid"],
        splits["test"],
        name=name,
        on_unknown="raise",
    )
    return World(
        name=name,
        dataset=dataset,
        rules=rules,
        rules_text=rules_text.strip() + "\n",
        base_triples=ordered_base,
        derived_splits={s: tuple(t for t in splits[s] if t not in noise) for s in SPLITS},
        noise_splits={s: tuple(t for t in splits[s] if t in noise) for s in SPLITS},
        exceptions=tuple(sorted(withheld)),
        exception_rates={str(n): rates[i] for i, n in enumerate(names)},
        noise_rates=dict(sorted(nu.items())),
        symmetric=tuple(symmetric),
        inverse_pairs=tuple((str(a), str(b)) for a, b in inverse_pairs),
        shortcuts=tuple((str(a), str(b)) for a, b in shortcuts),
        entity_types={e: kind for e, kind in entity_types.items() if e in entities},
        seed=seed,
        size=int(size),
    )
