"""Private machinery of :mod:`graphdata.synthetic`: population, vectorised rule grounding, split.

Everything here works on integer ids in NumPy arrays; :mod:`graphdata.synthetic` turns ids into
labels and public objects. The parts:

* :func:`generate_population` draws the family world (couples, children, genders) generation by
  generation, with whole-array operations per generation.
* :func:`close_and_ground` computes the closure of the base facts under chain-shaped Horn rules
  and every grounding of every rule over that closure, by sort-and-search joins of edge arrays
  (no Python loop over people or paths).
* :func:`parse_chain`, :func:`compile_rules` and :func:`check_world_arguments` read and check
  the public arguments.
* :func:`order_groundings` groups the groundings of derived triples for the explanation table.
* :func:`split_derived` assigns derived triples to train/valid/test so that no held-out triple
  has a held-out triple in the body of one of its groundings.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphdata.checks import check_size
from graphdata.errors import GraphDataError, UnknownLabelError

__all__: list[str] = []

#: Base relations, in relation-id order: ``parent(x, y)`` x is a parent of y; ``spouse(x, y)``
#: x is married to y (one orientation per couple, drawn at random); ``brother(x, y)`` /
#: ``sister(x, y)`` x is a brother / sister of y (full siblings, both orientations).
BASE_RELATIONS = ("parent", "spouse", "brother", "sister")
#: Planned growth of the generation sizes from one generation to the next.
GROWTH = 1.3
MALE, FEMALE = 0, 1
#: A lower bound of the peak memory of ``family_kg`` per person, in bytes: its tracemalloc peak
#: grew by 9,500 bytes per person from 500 to 2,000 people (seed 0). ``num_people`` whose
#: ``num_people * BYTES_PER_PERSON`` exceeds the machine's memory is refused.
BYTES_PER_PERSON = 8192

#: A compiled rule: head relation id and body atoms ``(relation id, inverse)``.
CompiledRule = tuple[int, tuple[tuple[int, bool], ...]]


@dataclass
class Population:
    """The family world as id arrays; people are ``0 .. num_people - 1`` ordered by generation."""

    gender: np.ndarray  # [N] MALE or FEMALE
    generation: np.ndarray  # [N]
    head: np.ndarray  # [F] base facts, sorted by (relation, head, tail)
    relation: np.ndarray  # [F] index into BASE_RELATIONS
    tail: np.ndarray  # [F]


def _pairs_within_groups(groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All ordered pairs ``(i, j)``, ``i != j``, of positions with equal ``groups`` (sorted)."""
    _, start, counts = np.unique(groups, return_index=True, return_counts=True)
    size = np.repeat(counts, counts)  # group size per element
    first = np.repeat(start, counts)  # group start per element
    a = np.repeat(np.arange(groups.size), size)
    offset = np.arange(a.size) - np.repeat(np.cumsum(size) - size, size)
    b = np.repeat(first, size) + offset
    keep = a != b
    return a[keep], b[keep]


def generate_population(
    num_people: int,
    num_generations: int,
    marriage_rate: float,
    outsider_rate: float,
    rng: np.random.Generator,
) -> Population:
    """Draw the world; the caller has checked ``num_people >= 2 * num_generations``."""
    g_count = num_generations
    weights = GROWTH ** np.arange(g_count)
    planned = num_people * weights / weights.sum()

    def reserve_after(g: int) -> int:
        # Later generations need at least one child each, and each one but the last one
        # outsider (to guarantee a couple), so the exact total num_people stays reachable.
        return (g_count - 1 - g) + max(0, g_count - 2 - g)

    n_couples = max(1, min(int(planned[0] // 2), (num_people - reserve_after(0) - 1) // 2))
    first_male = rng.integers(0, 2, size=n_couples)
    gender = [np.stack([1 - first_male, first_male], axis=1).reshape(-1)]  # [2C]
    ids = np.arange(2 * n_couples).reshape(n_couples, 2)  # [C, 2]
    husbands = np.where(first_male == MALE, ids[:, 0], ids[:, 1])
    wives = np.where(first_male == MALE, ids[:, 1], ids[:, 0])
    generation = [np.zeros(2 * n_couples, dtype=np.int64)]
    parents, children, sib_a, sib_b, sp_a, sp_b = [], [], [], [], [], []
    total = 2 * n_couples

    def marry(h: np.ndarray, w: np.ndarray) -> None:
        flip = rng.random(h.size) < 0.5  # base spouse orientation is random: no gender leak
        sp_a.append(np.where(flip, w, h))
        sp_b.append(np.where(flip, h, w))

    marry(husbands, wives)
    for g in range(1, g_count):
        last = g == g_count - 1
        remaining = num_people - total
        if last:
            c = remaining
        else:
            wanted = round(planned[g] / (1.0 + marriage_rate * outsider_rate))
            c = int(np.clip(wanted, 1, remaining - 1 - reserve_after(g)))
        couple_of = np.sort(rng.integers(0, husbands.size, size=c))  # siblings contiguous
        kids = total + np.arange(c)
        kid_gender = rng.integers(0, 2, size=c)
        parents += [husbands[couple_of], wives[couple_of]]
        children += [kids, kids]
        a, b = _pairs_within_groups(couple_of)
        sib_a.append(kids[a])
        sib_b.append(kids[b])
        gender.append(kid_gender)
        generation.append(np.full(c, g, dtype=np.int64))
        total += c
        if last:
            break
        married = rng.random(c) < marriage_rate
        internal = married & (rng.random(c) >= outsider_rate)
        men = rng.permutation(np.flatnonzero(internal & (kid_gender == MALE)))
        women = rng.permutation(np.flatnonzero(internal & (kid_gender == FEMALE)))
        k = min(men.size, women.size)
        siblings = couple_of[men[:k]] == couple_of[women[:k]]  # siblings never marry
        h_in, w_in = men[:k][~siblings], women[:k][~siblings]
        single = np.concatenate(
            [
                np.flatnonzero(married & ~internal),
                men[k:],
                women[k:],
                men[:k][siblings],
                women[:k][siblings],
            ]
        )
        if h_in.size == 0 and single.size == 0:
            single = np.zeros(1, dtype=np.int64)  # at least one couple, or the line dies out
        budget = num_people - total - reserve_after(g)
        single = np.sort(rng.permutation(single)[:budget])
        outsiders = total + np.arange(single.size)
        gender.append(1 - kid_gender[single])
        generation.append(np.full(single.size, g, dtype=np.int64))
        total += single.size
        is_man = kid_gender[single] == MALE
        husbands = np.concatenate([kids[h_in], np.where(is_man, kids[single], outsiders)])
        wives = np.concatenate([kids[w_in], np.where(is_man, outsiders, kids[single])])
        marry(husbands, wives)
    gender_all = np.concatenate(gender).astype(np.int64)
    sib_a_all, sib_b_all = np.concatenate(sib_a), np.concatenate(sib_b)
    sister = gender_all[sib_a_all] == FEMALE
    head = np.concatenate([*parents, *sp_a, sib_a_all])
    tail = np.concatenate([*children, *sp_b, sib_b_all])
    rel = np.concatenate(
        [
            np.zeros(sum(p.size for p in parents), dtype=np.int64),
            np.ones(sum(s.size for s in sp_a), dtype=np.int64),
            np.where(sister, 3, 2),
        ]
    )
    order = np.lexsort((tail, head, rel))
    return Population(gender_all, np.concatenate(generation), head[order], rel[order], tail[order])


def _join(ends: np.ndarray, src: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Equi-join: all ``(i, j)`` with ``ends[i] == src[j]``, ordered by ``i`` then ``j``."""
    order = np.argsort(src, kind="stable")
    lo = np.searchsorted(src[order], ends, side="left")
    hi = np.searchsorted(src[order], ends, side="right")
    count = hi - lo
    left = np.repeat(np.arange(ends.size), count)
    offset = np.arange(left.size) - np.repeat(np.cumsum(count) - count, count)
    return left, order[np.repeat(lo, count) + offset]


class _Store:
    """Triples grouped by relation, with sorted keys ``h * N + t`` for membership tests."""

    def __init__(self, head: np.ndarray, rel: np.ndarray, tail: np.ndarray, n: int) -> None:
        self.n = n
        self.size = head.size
        self.chunks = [(head, rel, tail)]
        self.by_rel: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        tids = np.arange(head.size)
        for r in np.unique(rel).tolist():
            m = rel == r
            self._put(r, head[m], tail[m], tids[m])

    def _put(self, r: int, h: np.ndarray, t: np.ndarray, tid: np.ndarray) -> None:
        if r in self.by_rel:
            h0, t0, tid0 = self.by_rel[r]
            h, t = np.concatenate([h0, h]), np.concatenate([t0, t])
            tid = np.concatenate([tid0, tid])
        order = np.argsort(h * self.n + t, kind="stable")
        self.by_rel[r] = (h[order], t[order], tid[order])

    def count(self, r: int) -> int:
        return self.by_rel[r][0].size if r in self.by_rel else 0

    def edges(self, r: int, inverse: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        empty = np.zeros(0, dtype=np.int64)
        h, t, tid = self.by_rel.get(r, (empty, empty, empty))
        return (t, h, tid) if inverse else (h, t, tid)

    def lookup(self, r: int, keys: np.ndarray) -> np.ndarray:
        """Triple ids of ``keys`` (``h * N + t``) in relation ``r``; ``-1`` where absent."""
        if r not in self.by_rel:
            return np.full(keys.size, -1, dtype=np.int64)
        h, t, tid = self.by_rel[r]
        known = h * self.n + t
        pos = np.minimum(np.searchsorted(known, keys), max(known.size - 1, 0))
        return np.where(known[pos] == keys, tid[pos], -1)

    def add(self, r: int, keys: np.ndarray) -> None:
        """Append new triples of relation ``r`` (unique keys absent from the store)."""
        h, t = keys // self.n, keys % self.n
        tid = self.size + np.arange(keys.size)
        self.size += keys.size
        self.chunks.append((h, np.full(keys.size, r, dtype=np.int64), t))
        self._put(r, h, t, tid)


def _ground(store: _Store, body: tuple[tuple[int, bool], ...]) -> tuple[np.ndarray, ...]:
    """All groundings of a chain body: start entity, end entity, body triple ids ``[P, n]``."""
    start, end, tid = store.edges(*body[0])
    tids = tid[:, None]  # [P, 1]
    for atom in body[1:]:
        src, dst, atom_tid = store.edges(*atom)
        left, right = _join(end, src)
        start, end = start[left], dst[right]
        tids = np.concatenate([tids[left], atom_tid[right][:, None]], axis=1)  # [P, i + 1]
    return start, end, tids


def close_and_ground(
    head: np.ndarray,
    rel: np.ndarray,
    tail: np.ndarray,
    num_entities: int,
    rules: list[CompiledRule],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """Least fixpoint of the rules over the (duplicate-free) base facts, and all groundings.

    Returns the closure's head, relation and tail arrays (base facts first, in input order, then
    derived triples in order of discovery) and, per rule, the head triple id ``[P]`` and the
    body triple ids ``[P, n]`` of every grounding over the closure.
    """
    store = _Store(head, rel, tail, num_entities)
    done: list[tuple[int, ...] | None] = [None] * len(rules)
    found: list[tuple[np.ndarray, ...]] = [()] * len(rules)
    changed = True
    while changed:  # a rule is re-grounded only when one of its body relations grew
        changed = False
        for i, (head_rel, body) in enumerate(rules):
            sizes = tuple(store.count(r) for r, _ in body)
            if done[i] == sizes:
                continue
            start, end, tids = _ground(store, body)
            done[i], found[i] = sizes, (start, end, tids)
            keys = np.unique(start * num_entities + end)
            new = keys[store.lookup(head_rel, keys) < 0]
            if new.size:
                store.add(head_rel, new)
                changed = True
    groundings = []
    for (head_rel, _), (start, end, tids) in zip(rules, found):
        groundings.append((store.lookup(head_rel, start * num_entities + end), tids))
    h, r, t = (np.concatenate(col) for col in zip(*store.chunks))
    return h, r, t, groundings


def split_derived(
    relation: np.ndarray,
    depends_on: tuple[np.ndarray, np.ndarray],
    valid_fraction: float,
    test_fraction: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Split derived triples ``0 .. D-1`` into train/valid/test.

    Returns the split codes (0 train, 1 valid, 2 test) and the per-relation shortfall of
    held-out triples (all zero unless the pool ran out). Per relation with ``n_r`` derived
    triples, ``floor(f * n_r + 1/2)`` go to valid and to test, leaving at least one in train.
    Triples are taken greedily in a random priority order; a triple is held out only if no
    held-out triple is in the body of one of its groundings and it is in the body of none of
    theirs (``depends_on = (a, b)``: b is in a body of a). Conflicts are resolved in rounds of
    whole-array operations.
    """
    d = relation.size
    a, b = depends_on
    priority = rng.permutation(d)
    state = np.zeros(d, dtype=np.int64)  # 0 undecided, 1 held out, -1 train
    state[a[a == b]] = -1  # a triple in the body of its own grounding can never be held out
    a, b = a[a != b], b[a != b]
    num_rel = int(relation.max()) + 1 if d else 0
    n_r = np.bincount(relation, minlength=num_rel)
    n_valid = np.floor(valid_fraction * n_r + 0.5).astype(np.int64)
    n_test = np.floor(test_fraction * n_r + 0.5).astype(np.int64)
    quota = np.minimum(n_valid + n_test, np.maximum(n_r - 1, 0))
    n_valid = np.minimum(n_valid, quota)
    order = np.lexsort((priority, relation))  # by relation, then priority
    while True:
        held = state == 1
        blocked = np.zeros(d, dtype=bool)
        blocked[a[held[b]]] = True
        blocked[b[held[a]]] = True
        state[blocked & (state == 0)] = -1
        need = quota - np.bincount(relation[state == 1], minlength=num_rel)
        open_sorted = (state[order] == 0).astype(np.int64)
        rank = np.cumsum(open_sorted) - 1  # rank among open triples, per relation below
        rel_sorted = relation[order]
        first = np.searchsorted(rel_sorted, np.arange(num_rel))
        before = np.concatenate([[0], np.cumsum(open_sorted)])[first]
        cand = np.zeros(d, dtype=bool)
        cand[order] = (open_sorted == 1) & (rank - before[rel_sorted] < need[rel_sorted])
        if not cand.any():
            break
        both = cand[a] & cand[b]  # two candidates in conflict: the later one waits
        later = np.where(priority[a[both]] > priority[b[both]], a[both], b[both])
        cand[later] = False
        state[cand] = 1
    held = np.flatnonzero(state == 1)
    held = held[np.lexsort((priority[held], relation[held]))]
    rel_held = relation[held]
    rank_held = np.arange(held.size) - np.searchsorted(rel_held, rel_held)
    codes = np.zeros(d, dtype=np.int64)
    codes[held] = np.where(rank_held < n_valid[rel_held], 1, 2)
    shortfall = quota - np.bincount(rel_held, minlength=num_rel)
    return codes, shortfall


_ATOM = re.compile(r"\s*(\w+)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)\s*")


def parse_chain(text: str) -> tuple[str, list[tuple[str, bool]]]:
    """Parse ``"head(A,B) <- r1(A,C), r2(D,C)"`` into the head and ``(relation, inverse)`` atoms."""
    head_text, sep, body_text = str(text).partition("<-")
    head = _ATOM.fullmatch(head_text)
    matches = [_ATOM.fullmatch(part) for part in re.split(r"(?<=\))\s*,", body_text)]
    atoms = [m for m in matches if m is not None]
    if not sep or head is None or len(atoms) < len(matches):
        raise GraphDataError(
            f"text: expected a rule like 'head(X,Z) <- r1(X,Y), r2(Y,Z)', got {text!r}"
        )
    body: list[tuple[str, bool]] = []
    at = head.group(2)
    seen = {at}
    for m in atoms:
        rel, x, y = m.groups()
        nxt = y if x == at else x
        if at not in (x, y) or nxt in seen:  # a chain visits a new variable at every step
            raise GraphDataError(
                f"text: body atom {m.group(0).strip()!r} of {text!r} does not continue the "
                f"chain from variable {at} to a new variable; list the atoms in path order "
                f"from {head.group(2)} to {head.group(3)}"
            )
        body.append((rel, y == at))
        seen.add(nxt)
        at = nxt
    if at != head.group(3):
        raise GraphDataError(
            f"text: the body of {text!r} ends at {at}, expected the head's second variable "
            f"{head.group(3)}"
        )
    return head.group(1), body


def compile_rules(rules: Sequence[Any], relations: list[str]) -> list[CompiledRule]:
    """Rules as relation ids; appends new head labels to ``relations`` in rule order."""
    index = {label: i for i, label in enumerate(relations)}
    for rule in rules:
        if rule.head not in index:
            index[rule.head] = len(relations)
            relations.append(rule.head)
    for rule in rules:
        for atom in rule.body:
            if atom.relation not in index:
                raise UnknownLabelError("relation", atom.relation, index, argument="rules")
    return [
        (index[rule.head], tuple((index[a.relation], a.inverse) for a in rule.body))
        for rule in rules
    ]


def _check_number(name: str, value: object, low: float, high: float, *, closed: str) -> None:
    """Raise unless ``value`` is a real number in the interval (``closed`` in "[]", "[)", "(]")."""
    ok = False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        ok = (low <= value if closed[0] == "[" else low < value) and (
            value <= high if closed[1] == "]" else value < high
        )
    if not ok:
        raise GraphDataError(
            f"{name}: expected a number in {closed[0]}{low}, {high}{closed[1]}, got {value!r}"
        )


def check_world_arguments(
    num_people: object,
    num_generations: object,
    valid_fraction: float,
    test_fraction: float,
    marriage_rate: float,
    outsider_rate: float,
) -> None:
    """Validate the arguments of ``family_kg`` that shape the world and the split."""
    if not isinstance(num_generations, int) or num_generations < 2:
        raise GraphDataError(f"num_generations: expected an int >= 2, got {num_generations!r}")
    if not isinstance(num_people, int) or num_people < 2 * num_generations:
        raise GraphDataError(
            f"num_people: expected an int >= 2 * num_generations = {2 * num_generations}, got "
            f"{num_people!r}; ask for more people or fewer generations"
        )
    check_size(
        "num_people", num_people, 2 * num_generations, bytes_each=BYTES_PER_PERSON, what="people"
    )
    _check_number("valid_fraction", valid_fraction, 0, 1, closed="[)")
    _check_number("test_fraction", test_fraction, 0, 1, closed="[)")
    if valid_fraction + test_fraction >= 1:
        raise GraphDataError(
            f"valid_fraction + test_fraction: expected < 1, got {valid_fraction} + "
            f"{test_fraction}; lower them so that derived triples remain for training"
        )
    _check_number("marriage_rate", marriage_rate, 0, 1, closed="(]")
    _check_number("outsider_rate", outsider_rate, 0, 1, closed="[]")


def order_groundings(
    groundings: list[tuple[np.ndarray, np.ndarray]], num_base: int
) -> tuple[
    list[np.ndarray], list[np.ndarray], np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]
]:
    """Order the groundings of derived heads by (head, rule, body triple ids).

    Returns per rule the kept body ids ``[P_i, n_i]`` and each one's slot in that order; the
    sorted head ids ``[M]`` and the start of each head's run; and the dependency pairs
    ``(a, b)`` of derived triples (``b`` is in a body of ``a``, both counted from ``num_base``).
    """
    width = max((tids.shape[1] for _, tids in groundings), default=1)
    kept, heads, rule_ids, padded = [], [], [], []
    for i, (head_tid, tids) in enumerate(groundings):
        keep = head_tid >= num_base  # base facts are axioms: no explanation recorded
        kept.append(tids[keep])
        heads.append(head_tid[keep])
        rule_ids.append(np.full(int(keep.sum()), i, dtype=np.int64))
        pad = np.full((int(keep.sum()), width), -1, dtype=np.int64)  # [P_i, width], -1 = none
        pad[:, : tids.shape[1]] = tids[keep]
        padded.append(pad)
    empty = np.zeros(0, dtype=np.int64)
    head = np.concatenate(heads) if heads else empty
    rule_id = np.concatenate(rule_ids) if heads else empty
    body = np.concatenate(padded) if heads else np.zeros((0, width), dtype=np.int64)  # [M, w]
    derived = body >= num_base
    a = np.broadcast_to(head[:, None], body.shape)[derived] - num_base
    pairs = np.unique(np.stack([a, body[derived] - num_base], axis=1), axis=0)  # [E, 2]
    order = np.lexsort([body[:, j] for j in range(width - 1, -1, -1)] + [rule_id, head])
    slot = np.empty_like(order)
    slot[order] = np.arange(order.size)
    bounds = np.cumsum([0] + [k.shape[0] for k in kept])
    slots = [slot[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]
    head = head[order]
    starts = np.flatnonzero(np.diff(head, prepend=-1)) if head.size else empty
    return kept, slots, head, starts, (pairs[:, 0], pairs[:, 1])
