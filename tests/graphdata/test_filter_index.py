from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from graphdata.errors import GraphDataError
from graphdata.filter_index import FilterIndex


@st.composite
def knowledge_graphs(draw, max_entities=7, max_relations=3):
    num_entities = draw(st.integers(1, max_entities))
    num_relations = draw(st.integers(1, max_relations))
    triple = st.tuples(
        st.integers(0, num_entities - 1),
        st.integers(0, num_relations - 1),
        st.integers(0, num_entities - 1),
    )
    parts = draw(st.lists(st.lists(triple, max_size=25), min_size=1, max_size=3))
    queries = draw(st.lists(triple, max_size=12))
    return num_entities, num_relations, parts, queries


def _tensor(rows):
    return torch.tensor(rows, dtype=torch.long).reshape(-1, 3)


def _check_against_brute_force(index, parts, queries, device):
    known = {tuple(t) for part in parts for t in part}
    q = _tensor(queries).to(device)
    h, r, t = q.unbind(dim=1)
    want_tails = [sorted({c for a, b, c in known if (a, b) == (qh, qr)}) for qh, qr, _ in queries]
    want_heads = [sorted({a for a, b, c in known if (b, c) == (qr, qt)}) for _, qr, qt in queries]

    ptr, index_ = index.tails(h, r)
    assert ptr.device == q.device and index_.device == q.device
    ptr, index_ = ptr.tolist(), index_.tolist()
    assert [index_[ptr[b] : ptr[b + 1]] for b in range(len(queries))] == want_tails
    ptr, index_ = index.heads(r, t)
    ptr, index_ = ptr.tolist(), index_.tolist()
    assert [index_[ptr[b] : ptr[b + 1]] for b in range(len(queries))] == want_heads

    row, col = index.tail_coo(h, r)
    pairs = sorted(zip(row.tolist(), col.tolist()))
    assert pairs == sorted((b, c) for b, cs in enumerate(want_tails) for c in cs)
    assert len(set(pairs)) == len(pairs)
    row, col = index.head_coo(r, t)
    assert sorted(zip(row.tolist(), col.tolist())) == sorted(
        (b, a) for b, hs in enumerate(want_heads) for a in hs
    )
    assert index.contains(q).tolist() == [tuple(x) in known for x in queries]
    assert index.num_triples == len(known)

    # Stacked both sides: the first half's head queries, then every tail query.
    half = len(queries) // 2
    row, col = index.both_coo((r[:half], t[:half]), (h, r))
    unchecked = index.both_coo((r[:half], t[:half]), (h, r), check=False)
    assert torch.equal(unchecked[0], row) and torch.equal(unchecked[1], col)
    assert row.device == q.device
    assert sorted(zip(row.tolist(), col.tolist())) == sorted(
        [(b, a) for b, hs in enumerate(want_heads[:half]) for a in hs]
        + [(half + b, c) for b, cs in enumerate(want_tails) for c in cs]
    )

    # Stacked keys: every head query, then every tail query; COO and additive mask agree, from
    # the cached dense table and, above its size limit, built from the COO.
    keys = index.stacked_keys(h, r, t)
    row, col = index.stacked_coo(keys)
    want = [(b, a) for b, hs in enumerate(want_heads) for a in hs] + [
        (len(queries) + b, c) for b, cs in enumerate(want_tails) for c in cs
    ]
    assert sorted(zip(row.tolist(), col.tolist())) == sorted(want)
    if index.num_entities > 1000:  # no dense rows of 2**40 entities
        return
    dense = torch.zeros(2 * len(queries), index.num_entities)
    for b, a in want:
        dense[b, a] = float("-inf")
    counts = [len(x) for x in want_heads + want_tails]
    assert index.has_dense_mask()
    for limit in (FilterIndex.DENSE_MASK_LIMIT, 0):
        index.DENSE_MASK_LIMIT = limit  # instance attribute: this index only
        mask, count = index.stacked_score_mask(keys)
        assert mask.device == q.device and torch.equal(mask.cpu(), dense)
        assert count.tolist() == counts
    del index.DENSE_MASK_LIMIT


@settings(max_examples=60, deadline=None)
@given(knowledge_graphs())
def test_lookups_match_brute_force_sets(kg):
    num_entities, num_relations, parts, queries = kg
    index = FilterIndex.from_triples(
        *(_tensor(p) for p in parts), num_entities=num_entities, num_relations=num_relations
    )
    _check_against_brute_force(index, parts, queries, "cpu")
    # Every known triple is found, and queries drawn from the known triples hit.
    all_known = [t for p in parts for t in p]
    _check_against_brute_force(index, parts, all_known, "cpu")


def test_on_device_matches_brute_force(device):
    gen = torch.Generator().manual_seed(0)
    triples = torch.randint(0, 6, (80, 3), generator=gen) % torch.tensor([6, 3, 6])
    queries = torch.randint(0, 6, (40, 3), generator=gen) % torch.tensor([6, 3, 6])
    index = FilterIndex.from_triples(
        triples[:50].to(device), triples[50:].to(device), num_entities=6, num_relations=3
    )
    assert index.device.type == device.type
    _check_against_brute_force(index, [triples.tolist()], queries.tolist(), device)
    moved = index.to("cpu")
    assert moved.contains(queries).tolist() == index.contains(queries.to(device)).cpu().tolist()


def test_huge_vocabularies_use_the_overflow_safe_sort():
    # E * E * R exceeds int64, so the build takes the two-stable-sort path; results must agree.
    num_entities, num_relations = 2**40, 2**10
    big = [
        (2**40 - 1, 5, 3),
        (2**40 - 1, 5, 2**39),
        (7, 2**10 - 1, 2**40 - 1),
        (7, 2**10 - 1, 3),
        (2**40 - 1, 5, 3),
    ]
    index = FilterIndex.from_triples(
        _tensor(big), num_entities=num_entities, num_relations=num_relations
    )
    queries = big + [(7, 5, 3), (2**40 - 1, 5, 2**39 - 1), (0, 0, 0)]
    _check_against_brute_force(index, [big], queries, "cpu")


def test_empty_index_answers_nothing():
    index = FilterIndex.from_triples(num_entities=4, num_relations=2)
    ptr, idx = index.tails(torch.tensor([0, 3]), torch.tensor([1, 0]))
    assert ptr.tolist() == [0, 0, 0] and idx.numel() == 0
    assert index.contains(torch.tensor([[0, 1, 2]])).tolist() == [False]
    assert index.num_triples == 0 and bool(index)  # no __len__: an empty index is truthy
    ptr, idx = index.heads(torch.zeros(0, dtype=torch.long), torch.zeros(0, dtype=torch.long))
    assert ptr.tolist() == [0] and idx.numel() == 0


def test_int32_queries_are_accepted():
    index = FilterIndex.from_triples(torch.tensor([[0, 1, 2]]), num_entities=3, num_relations=2)
    ptr, idx = index.tails(torch.tensor([0], dtype=torch.int32), torch.tensor([1]))
    assert idx.tolist() == [2] and idx.dtype == torch.long


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (
            lambda i: i.tails(torch.tensor([0, 5]), torch.tensor([0, 0])),
            r"head_index: expected ids in \[0, 5\), got min 0 and max 5",
        ),
        (
            lambda i: i.tails(torch.tensor([0]), torch.tensor([2])),
            r"rel_type: expected ids in \[0, 2\), got min 2",
        ),
        (lambda i: i.heads(torch.tensor([0]), torch.tensor([-1])), r"tail_index: expected ids"),
        (
            lambda i: i.tails(torch.tensor([0, 1]), torch.tensor([0])),
            r"head_index, rel_type: expected the same shape \[B\], got \(2,\) and \(1,\)",
        ),
        (lambda i: i.tails(torch.tensor([[0]]), torch.tensor([[0]])), r"expected a 1-D integer"),
        (lambda i: i.tail_coo(torch.tensor([0.0]), torch.tensor([0])), r"expected integer ids"),
        (lambda i: i.contains(torch.tensor([0, 1, 2])), r"mapped: expected a LongTensor \[B, 3\]"),
        (
            lambda i: i.both_coo(
                (torch.tensor([0]), torch.tensor([5])), (torch.tensor([0]), torch.tensor([0]))
            ),
            r"head_side tail_index: expected ids in \[0, 5\), got min 5",
        ),
        (
            lambda i: i.both_coo(
                (torch.tensor([0]), torch.tensor([1])), (torch.tensor([0, 1]), torch.tensor([1]))
            ),
            r"tail_side head_index, tail_side rel_type: expected the same shape",
        ),
        (
            lambda i: i.both_coo(
                (torch.tensor([0]), torch.tensor([1])), (torch.tensor([0]), torch.tensor([2]))
            ),
            r"tail_side rel_type: expected ids in \[0, 2\)",
        ),
        (lambda i: i.contains(torch.tensor([[0, 2, 1]])), r"mapped relations: expected ids"),
        (
            lambda i: i.head_coo(
                torch.zeros(1, dtype=torch.long, device="meta"), torch.tensor([0])
            ),
            r"rel_type: is on meta but the index is on cpu; call index.to\('meta'\)",
        ),
    ],
)
def test_bad_queries_raise_clear_errors(call, match):
    index = FilterIndex.from_triples(torch.tensor([[0, 1, 2]]), num_entities=5, num_relations=2)
    with pytest.raises(GraphDataError, match=match):
        call(index)


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        ((torch.tensor([[0, 0, 5]]),), {}, r"mapped tails: expected ids in \[0, 5\)"),
        ((torch.tensor([[0, 3, 1]]),), {}, r"mapped relations: expected ids in \[0, 2\)"),
        ((torch.tensor([0, 0, 1]),), {}, r"mapped\[0\]: expected a LongTensor \[N, 3\]"),
        ((torch.tensor([[0.0, 0, 1]]),), {}, r"mapped\[0\]: expected integer ids"),
        ((), {"num_entities": 0}, r"num_entities: expected a positive int, got 0"),
        ((), {"num_relations": 1.5}, r"num_relations: expected a positive int"),
        ((), {"num_entities": 2**40, "num_relations": 2**40}, r"at most 2\*\*63 - 1"),
    ],
)
def test_bad_build_inputs_raise_clear_errors(args, kwargs, match):
    sizes = {"num_entities": 5, "num_relations": 2, **kwargs}
    with pytest.raises(GraphDataError, match=match):
        FilterIndex.from_triples(*args, **sizes)
