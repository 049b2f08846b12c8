"""Mined path-pattern confidences and the pattern search (kg.explain.patterns)."""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from graphdata.errors import GraphDataError
from kg.explain.local import local_structure
from kg.explain.patterns import PatternBank, path_pattern, pattern_search, wilson_lower


def _graph(triples):
    t = torch.tensor(triples, dtype=torch.long)
    return t[:, [0, 2]].t().contiguous(), t[:, 1].contiguous()


def _brute_counts(triples, relation, patterns, num_nodes):
    """(s, b) of a conjunction of patterns by enumerating every walk (the oracle)."""
    facts = {(h, r, t) for h, r, t in triples}
    heads = sorted({h for h, r, _ in facts if r == relation})

    def reach(x, pattern):
        frontier = {x}
        for rel, forward in pattern:
            nxt = set()
            for u in frontier:
                for v in range(num_nodes):
                    if ((u, rel, v) if forward else (v, rel, u)) in facts:
                        nxt.add(v)
            frontier = nxt
        return frontier - {x}

    s = b = 0
    for x in heads:
        joint = set.intersection(*(reach(x, p) for p in patterns))
        b += len(joint)
        s += sum((x, relation, y) in facts for y in joint)
    return s, b


def test_counts_match_brute_force_walks():
    generator = torch.Generator().manual_seed(3)
    n, r = 9, 3
    triples = sorted(
        {
            tuple(x)
            for x in torch.stack(
                [
                    torch.randint(n, (40,), generator=generator),
                    torch.randint(r, (40,), generator=generator),
                    torch.randint(n, (40,), generator=generator),
                ],
                dim=1,
            ).tolist()
            if x[0] != x[2]
        }
    )
    bank = PatternBank(*_graph(triples), n, r)
    steps = [(rel, fwd) for rel in range(r) for fwd in (True, False)]
    patterns = [(a,) for a in steps] + list(itertools.product(steps, repeat=2))[:12]
    for relation in range(r):
        for pattern in patterns:
            assert bank.counts(relation, [pattern]) == _brute_counts(
                triples, relation, [pattern], n
            )
        pair = [patterns[0], patterns[7]]
        assert bank.counts(relation, pair) == _brute_counts(triples, relation, pair, n)


def test_path_pattern_reads_directions():
    # 0 -p-> 2 <-q- 1 (target 0 -gp-> 1): the pattern is (p forward, q backward).
    edge_index, edge_type = _graph([(0, 0, 2), (1, 1, 2)])
    local = local_structure(edge_index, edge_type, (0, 2, 1), hops=1, num_nodes=3)
    assert [path_pattern(local, p) for p in range(len(local.paths))] == [((0, True), (1, False))]


def test_wilson_lower_is_the_lower_root_of_the_score_interval():
    # Oracle: the lower root of (p_hat - p)^2 = z^2 p (1 - p) / n, solved as a quadratic.
    z = 1.6448536269514722
    for s, n in ((8, 10), (1, 2), (95, 100), (0, 7)):
        p_hat = s / n
        a = 1 + z * z / n
        b = -(2 * p_hat + z * z / n)
        c = p_hat * p_hat
        root = (-b - math.sqrt(b * b - 4 * a * c)) / (2 * a)
        assert wilson_lower(s, n) == pytest.approx(root, abs=1e-12)
    assert wilson_lower(0, 0) == 0.0


def _shortcut_world():
    """gp(x, z) <- p(x, y), p(y, z) on 8 chains; a shortcut s covers 6 of the 8 gp pairs and
    4 non-gp pairs. Relations: p=0, gp=1, s=2. Returns triples and the explained target."""
    triples = []
    for c in range(8):
        x, y, z = 3 * c, 3 * c + 1, 3 * c + 2
        triples += [(x, 0, y), (y, 0, z)]
        if c > 0:  # chain 0's gp is the held-out target
            triples.append((x, 1, z))
        if c < 6:
            triples.append((x, 2, z))
    for c in range(4):  # s between unrelated people
        triples.append((3 * c, 2, 3 * c + 4))
    return triples, (0, 1, 2)


def test_confidence_prefers_the_body_over_a_correlated_shortcut():
    triples, target = _shortcut_world()
    bank = PatternBank(*_graph(triples), 24, 3)
    body = ((0, True), (0, True))
    shortcut = ((2, True),)
    # body: 7 gp heads, each reaches its z: s = 7, b = 7; shortcut: 5 gp pairs among the
    # s-links of gp heads (chains 1-5) and chains 1-3 also have an unrelated s-link.
    assert bank.counts(1, [body]) == (7, 7)
    assert bank.counts(1, [shortcut]) == (5, 8)
    assert bank.confidence(1, [body]) == pytest.approx(8 / 9)
    assert bank.confidence(1, [shortcut]) == pytest.approx(6 / 10)
    edge_index, edge_type = _graph(triples)
    local = local_structure(edge_index, edge_type, target, hops=2, num_nodes=24)
    # The shortcut is the shorter candidate; the search still takes the body.
    assert path_pattern(local, 0) == shortcut
    choice = pattern_search(local, bank, max_paths=3)
    assert [path_pattern(local, p) for p in choice.chosen] == [body]
    assert choice.confidence == (pytest.approx(8 / 9),)


def test_a_second_path_joins_only_when_the_conjunction_is_reliable_beyond_doubt():
    # ln(x, y) <- b(x, y), sp(x, l), sp(y, l): b alone and sp-sp alone hold half the time.
    # Relations: b=0, sp=1, ln=2.
    triples = []
    for c in range(30):
        x, y, lang, far, near = (5 * c + i for i in range(5))
        triples += [(x, 0, y), (x, 1, lang), (y, 1, lang), (x, 2, y)]
        triples += [(x, 0, far), (near, 1, lang)]  # a border without, a language without
    num_nodes = 150
    edge_index, edge_type = _graph(triples)
    bank = PatternBank(edge_index, edge_type, num_nodes, 3)
    border, language = ((0, True),), ((1, True), (1, False))
    joint = bank.counts(2, [border, language])
    assert joint[0] == joint[1] == 30  # the conjunction always holds
    assert bank.confidence(2, [border]) < 0.8 and bank.confidence(2, [language]) < 0.8
    # Explain a held-out pair of chain 0 (remove its ln fact from the graph).
    kept = [t for t in triples if t != (0, 2, 1)]
    edge_index, edge_type = _graph(kept)
    bank = PatternBank(edge_index, edge_type, num_nodes, 3)
    local = local_structure(edge_index, edge_type, (0, 2, 1), hops=1, num_nodes=num_nodes)
    chosen = pattern_search(local, bank, max_paths=3).chosen
    assert sorted(path_pattern(local, p) for p in chosen) == sorted([border, language])
    one = pattern_search(local, bank, max_paths=1).chosen
    assert len(one) == 1


def test_bank_rejects_a_bad_head_budget():
    edge_index, edge_type = _graph([(0, 0, 1)])
    with pytest.raises(GraphDataError, match="max_heads"):
        PatternBank(edge_index, edge_type, 2, 1, max_heads=0)


def test_no_candidate_gives_an_empty_choice():
    edge_index, edge_type = _graph([(0, 0, 1), (2, 0, 3)])
    bank = PatternBank(edge_index, edge_type, 4, 2)
    local = local_structure(edge_index, edge_type, (0, 1, 3), hops=1, num_nodes=4)
    choice = pattern_search(local, bank, max_paths=3)
    assert choice.chosen == () and choice.num_patterns == 0
