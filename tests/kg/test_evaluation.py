"""Filtered rank-based evaluation against brute force, hand computation and expectations."""

from __future__ import annotations

import json
import math

import pytest
import torch

import kg.rotate
from graphdata.errors import GraphDataError
from graphdata.filter_index import FilterIndex
from graphdata.triples import KGDataset
from kg import _ranks
from kg.distmult import DistMult
from kg.evaluation import RankMetrics, evaluate
from kg.rotate import RotatE

E, R = 6, 2


@pytest.fixture(params=["dense", "csr"])
def filter_path(request, monkeypatch):
    """Run a test with the filter read from a dense mask table and from the CSR look-up."""
    if request.param == "csr":
        monkeypatch.setattr(FilterIndex, "DENSE_MASK_LIMIT", 0)
    return request.param


def table_scorer(table: torch.Tensor):
    """A plain scorer reading a fixed [E, R, E] score table."""

    def score(h, r, t):
        return table.to(h.device)[h, r, t]

    return score


def tiny_kg(seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    # Integer scores in {0, 1, 2}: many exact ties.
    table = torch.randint(0, 3, (E, R, E), generator=gen).float()
    known = torch.randint(0, E, (14, 3), generator=gen)
    known[:, 1] %= R
    known = torch.unique(known, dim=0)
    test = known[::2]
    return table, known, test


@torch.no_grad()
def brute_force(score_fn, test, known, num_entities):
    """Per triple and side: filtered candidate set, optimistic/pessimistic ranks, options."""
    known_set = {tuple(x) for x in known.tolist()}
    out = {"head": [], "tail": []}
    for h, r, t in test.tolist():
        for side in ("head", "tail"):
            true = h if side == "head" else t
            cands = []
            for e in range(num_entities):
                triple = (e, r, t) if side == "head" else (h, r, e)
                if e != true and triple in known_set:
                    continue
                cands.append(float(score_fn(*(torch.tensor([x]) for x in triple))))
            s_true = float(score_fn(*(torch.tensor([x]) for x in (h, r, t))))
            opt = 1 + sum(s > s_true for s in cands)
            pes = sum(s >= s_true for s in cands)
            out[side].append((opt, pes, sum(math.isfinite(s) for s in cands)))
    return {side: torch.tensor(v) for side, v in out.items()}


def check_against(metrics: RankMetrics, expected) -> None:
    for i, side in enumerate(("head", "tail")):
        assert metrics.optimistic[i].tolist() == expected[side][:, 0].tolist()
        assert metrics.pessimistic[i].tolist() == expected[side][:, 1].tolist()
        assert metrics.options[i].tolist() == expected[side][:, 2].tolist()
        realistic = expected[side][:, :2].double().mean(1)
        assert metrics.ranks(side).tolist() == realistic.tolist()


def test_plain_scorer_ranks_match_brute_force_with_ties(device, filter_path):
    table, known, test = tiny_kg()
    index = FilterIndex.from_triples(known.to(device), num_entities=E, num_relations=R)
    metrics = evaluate(table_scorer(table), test.to(device), index, num_entities=E)
    expected = brute_force(table_scorer(table), test, known, E)
    check_against(metrics, expected)
    # Ties are present and handled: some optimistic and pessimistic ranks differ.
    assert (metrics.optimistic != metrics.pessimistic).any()
    assert (metrics.options < E).any()  # filtering removed candidates


def test_non_finite_scores_are_not_options(filter_path):
    table, known, test = tiny_kg(4)
    gen = torch.Generator().manual_seed(5)
    mask = torch.rand(table.shape, generator=gen)
    table[mask < 0.15] = float("-inf")  # -inf candidates are not options
    # NaN and +inf at filtered cells are ignored (a NaN or +inf candidate that is not filtered
    # makes the query non-finite: tests/kg/test_faults_numerics.py).
    filtered_only = known[
        ~FilterIndex.from_triples(test, num_entities=E, num_relations=R).contains(known)
    ].t()
    table[filtered_only[0], filtered_only[1], filtered_only[2]] = torch.where(
        torch.arange(filtered_only.size(1)) % 2 == 0, float("nan"), float("inf")
    )
    true = test.t()
    table[true[0], true[1], true[2]] = 1.0  # keep the evaluated triples' own scores finite
    index = FilterIndex.from_triples(known, num_entities=E, num_relations=R)
    metrics = evaluate(table_scorer(table), test, index, num_entities=E)
    check_against(metrics, brute_force(table_scorer(table), test, known, E))
    assert (metrics.options < E).any()


def test_shared_queries_and_unfiltered_targets_match_brute_force(device, filter_path):
    # Distinct queries are scored once and shared (evaluation.filtered_ranks): several test
    # triples per (h, r) and per (r, t), half of them absent from the filter (their own cell
    # stays unmasked), ties and non-finite scores included, over several batch sizes.
    table, known, _ = tiny_kg(6)
    gen = torch.Generator().manual_seed(7)
    mask = torch.rand(table.shape, generator=gen)
    table[mask < 0.1] = float("-inf")
    h, r = known[0, 0], known[0, 1]
    shared = torch.stack([torch.full((E,), int(h)), torch.full((E,), int(r)), torch.arange(E)], 1)
    test = torch.cat([shared, known[:4], known[:4, [0, 1, 0]]])  # duplicates included
    true = test.t()
    table[true[0], true[1], true[2]] = 2.0  # a -inf true score is non-finite: never ranked
    index = FilterIndex.from_triples(known.to(device), num_entities=E, num_relations=R)
    assert not index.contains(test.to(device)).all() and index.contains(test.to(device)).any()
    expected = brute_force(table_scorer(table), test, known, E)
    for batch_size in (None, 1, 5):
        metrics = evaluate(
            table_scorer(table), test.to(device), index, num_entities=E, batch_size=batch_size
        )
        check_against(metrics, expected)


def test_sign_counts_in_small_blocks_match_brute_force(filter_path, monkeypatch):
    # kg._ranks counts the signs a few rows at a time in one reused block; with a block of
    # 2 rows (and of 1 row, below E) every query crosses block boundaries.
    table, known, _ = tiny_kg(6)
    table[torch.rand(table.shape, generator=torch.Generator().manual_seed(2)) < 0.1] = -math.inf
    test = known[:9]
    table[test[:, 0], test[:, 1], test[:, 2]] = 2.0
    index = FilterIndex.from_triples(known, num_entities=E, num_relations=R)
    expected = brute_force(table_scorer(table), test, known, E)
    for block in (2 * E, 3):
        monkeypatch.setattr(_ranks, "SIGN_BLOCK", block)
        check_against(evaluate(table_scorer(table), test, index, num_entities=E), expected)


def test_every_batch_but_the_last_scores_the_same_number_of_rows(filter_path):
    # evaluate fills each batch's distinct queries up to 2B rows (the last one repeated) when
    # more batches follow, so the C heap sees one block size; the ranks stay exact.
    table, known, _ = tiny_kg(6)
    h, r = known[0, 0], known[0, 1]
    shared = torch.stack([torch.full((E,), int(h)), torch.full((E,), int(r)), torch.arange(E)], 1)
    test = torch.cat([shared, known[:4]])  # 5 of the first 5 triples share (h, r)
    rows: list[int] = []

    def score(hh, rr, tt):
        rows.append(hh.numel() // E)  # candidate rows of one side
        return table[hh, rr, tt]

    index = FilterIndex.from_triples(known, num_entities=E, num_relations=R)
    metrics = evaluate(score, test, index, num_entities=E, batch_size=5)
    check_against(metrics, brute_force(table_scorer(table), test, known, E))
    per_batch = [a + b for a, b in zip(rows[::2], rows[1::2])]
    assert per_batch[:-1] == [10] * (len(per_batch) - 1)
    assert per_batch[-1] <= 2 * (test.size(0) % 5 or 5)
    rows.clear()  # one batch only: the distinct queries alone (6 of 10 here)
    evaluate(score, test[:5], index, num_entities=E, batch_size=5)
    assert sum(rows) == 6


def test_half_precision_scores_with_many_entities_count_exactly():
    # float16 holds integers exactly only up to 2048: the rank counts must not be summed in it.
    num_entities, gen = 3000, torch.Generator().manual_seed(8)
    table = torch.randint(-4, 5, (num_entities, 1, num_entities), generator=gen).half()
    test = torch.tensor([[0, 0, 5], [7, 0, 2999], [12, 0, 5]])
    known = torch.cat([test, torch.tensor([[0, 0, 9], [3, 0, 5]])])
    index = FilterIndex.from_triples(known, num_entities=num_entities, num_relations=1)
    metrics = evaluate(table_scorer(table), test, index, num_entities=num_entities)
    known_set = {tuple(x) for x in known.tolist()}
    for i, (h, r, t) in enumerate(test.tolist()):
        row = table[h, r].float()  # tail side: (h, r, ?)
        keep = torch.tensor([(h, r, e) not in known_set or e == t for e in range(num_entities)])
        assert metrics.optimistic[1, i] == 1 + int(((row > row[t]) & keep).sum())
        assert metrics.pessimistic[1, i] == int(((row >= row[t]) & keep).sum())
    assert (metrics.options[1] > 2048).all()  # the sums over a row exceed float16's integers


def test_relations_beyond_the_filter_index_are_refused():
    # The filter look-up trusts the ids that evaluate checked once: a relation id the index
    # does not know must be refused there, not alias another relation's known triples.
    table, known, test = tiny_kg()
    index = FilterIndex.from_triples(known, num_entities=E, num_relations=R)
    bad = test.clone()
    bad[0, 1] = R
    wide = torch.zeros(E, R + 1, E)
    with pytest.raises(GraphDataError, match=r"relation ids must lie in \[0, 2\) of filter_index"):
        evaluate(table_scorer(wide), bad, index, num_entities=E)


def test_model_ranks_match_brute_force(device, filter_path):
    _, known, test = tiny_kg(1)
    model = DistMult(E, R, dim=3).to(device)
    with torch.no_grad():  # integer embeddings: exact float scores, with ties
        gen = torch.Generator().manual_seed(3)
        model.entity.weight.copy_(torch.randint(-1, 2, (E, 3), generator=gen).float())
        model.relation.weight.copy_(torch.randint(-1, 2, (R, 3), generator=gen).float())
    index = FilterIndex.from_triples(known.to(device), num_entities=E, num_relations=R)
    metrics = evaluate(model, test.to(device), index, batch_size=2)
    cpu_model = model.cpu()
    check_against(metrics, brute_force(cpu_model, test, known, E))
    # Raw (unfiltered) ranks: every entity is an option.
    raw = evaluate(cpu_model, test, None)
    assert (raw.options == E).all()
    assert (raw.optimistic >= metrics.optimistic.cpu()).all()


def test_hand_computed_metrics():
    # Both sides of two triples: realistic ranks 1, 2.5 (head) and 4, 1 (tail); C = 5, 4, 5, 4.
    m = RankMetrics(
        optimistic=torch.tensor([[1, 2], [4, 1]]),
        pessimistic=torch.tensor([[1, 3], [4, 1]]),
        options=torch.tensor([[5, 4], [5, 4]]),
        relation=torch.tensor([0, 1]),
    )
    ranks = [1.0, 2.5, 4.0, 1.0]
    s = m.summary()
    assert s["mr"] == pytest.approx(sum(ranks) / 4)
    assert s["mrr"] == pytest.approx(sum(1 / x for x in ranks) / 4)
    assert s["hits_at_1"] == 0.5 and s["hits_at_3"] == 0.75 and s["hits_at_10"] == 1.0
    e_mr = (3 + 2.5 + 3 + 2.5) / 4
    assert s["amr"] == pytest.approx(s["mr"] / e_mr)
    assert s["amri"] == pytest.approx(1 - (s["mr"] - 1) / (e_mr - 1))
    h5, h4 = 1 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 5, 1 + 1 / 2 + 1 / 3 + 1 / 4
    e_mrr = (h5 / 5 + h4 / 4) / 2
    assert s["adjusted_mrr"] == pytest.approx((s["mrr"] - e_mrr) / (1 - e_mrr))
    e_h1 = (1 / 5 + 1 / 4) / 2
    assert s["adjusted_hits_at_1"] == pytest.approx((0.5 - e_h1) / (1 - e_h1))
    var_mr = ((25 - 1) / 12 + (16 - 1) / 12) * 2 / 16
    assert s["z_mr"] == pytest.approx((e_mr - s["mr"]) / math.sqrt(var_mr))
    # Sides and tie handling.
    assert m.summary("head")["mr"] == pytest.approx(1.75)
    assert m.summary("tail", "pessimistic")["mr"] == pytest.approx(2.5)
    assert m.summary("both", "optimistic")["mr"] == pytest.approx(2.0)
    assert m.hits_at(2) == 0.5 and m.mrr == pytest.approx(s["mrr"])
    # Per relation: relation 0 holds ranks 1 (head) and 4 (tail).
    per = m.per_relation()
    assert per[0]["mr"] == pytest.approx(2.5) and per[1]["mr"] == pytest.approx(1.75)
    assert per[0]["count"] == 2.0


def test_random_scores_have_zero_adjusted_metrics_in_expectation():
    gen = torch.Generator().manual_seed(0)
    n_ent, n_rel = 40, 3
    table = torch.rand(n_ent, n_rel, n_ent, generator=gen)
    test = torch.stack(
        [
            torch.randint(n_ent, (600,), generator=gen),
            torch.randint(n_rel, (600,), generator=gen),
            torch.randint(n_ent, (600,), generator=gen),
        ],
        dim=1,
    )
    index = FilterIndex.from_triples(test, num_entities=n_ent, num_relations=n_rel)
    s = evaluate(table_scorer(table), test, index, num_entities=n_ent).summary()
    # sd(AMRI) ~ 0.02 here; sd of z-scores is 1.
    assert abs(s["amri"]) < 0.08
    assert abs(s["adjusted_mrr"]) < 0.08 and abs(s["adjusted_hits_at_10"]) < 0.08
    assert abs(s["z_mr"]) < 4 and abs(s["z_mrr"]) < 4 and abs(s["z_hits_at_10"]) < 4
    assert 0.9 < s["amr"] < 1.1


def test_perfect_scores_give_one():
    _, known, test = tiny_kg(2)
    true = {tuple(x) for x in known.tolist()}

    def oracle(h, r, t):
        return torch.tensor(
            [float((a, b, c) in true) for a, b, c in zip(h.tolist(), r.tolist(), t.tolist())]
        )

    index = FilterIndex.from_triples(known, num_entities=E, num_relations=R)
    s = evaluate(oracle, test, index, num_entities=E).summary()
    assert s["mr"] == 1.0 and s["mrr"] == 1.0 and s["amri"] == 1.0
    assert s["adjusted_mrr"] == pytest.approx(1.0) and s["adjusted_hits_at_1"] == pytest.approx(1.0)


def test_filtering_uses_validation_triples():
    # pykeen #397: the valid triple (a, r, c) outscores the test triple (a, r, b).
    ds = KGDataset.from_labeled(
        [("a", "r", "a"), ("b", "r", "c"), ("c", "r", "a")], [("a", "r", "c")], [("a", "r", "b")]
    )
    ids = {x: ds.entities.id(x) for x in "abc"}
    table = torch.zeros(3, 1, 3)
    table[ids["a"], 0, ids["c"]] = 2.0  # the valid triple
    table[ids["a"], 0, ids["b"]] = 1.0  # the test triple
    scorer = table_scorer(table)
    full = evaluate(scorer, ds.test, ds.filter_index(), num_entities=3)
    assert full.ranks("tail").tolist() == [1.0]
    no_valid = FilterIndex.from_triples(
        ds.train.mapped_triples, ds.test.mapped_triples, num_entities=3, num_relations=1
    )
    assert evaluate(scorer, ds.test, no_valid, num_entities=3).ranks("tail").tolist() == [2.0]


@pytest.mark.parametrize("error", ["cuda", "runtime"])
def test_out_of_memory_halves_the_batch_and_the_chunk(error):
    table, known, test = tiny_kg()
    base = table_scorer(table)
    calls = []

    def fragile(h, r, t):
        calls.append(h.numel())
        if h.numel() > 4:  # fits only 4 scored triples: batch 1 and candidate chunks of 4 or less
            if error == "cuda":
                raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB")
            raise RuntimeError(
                "[enforce fail at alloc_cpu.cpp] DefaultCPUAllocator: can't "
                "allocate memory: you tried to allocate 8 GB"
            )
        return base(h, r, t)

    index = FilterIndex.from_triples(known, num_entities=E, num_relations=R)
    metrics = evaluate(fragile, test, index, num_entities=E, batch_size=64)
    reference = evaluate(base, test, index, num_entities=E, batch_size=1)
    assert torch.equal(metrics.optimistic, reference.optimistic)
    assert torch.equal(metrics.pessimistic, reference.pessimistic)
    assert max(calls) > 4 and calls[-1] <= 4


def test_other_errors_propagate():
    def broken(h, r, t):
        raise RuntimeError("shape mismatch")

    with pytest.raises(RuntimeError, match="shape mismatch"):
        evaluate(broken, torch.tensor([[0, 0, 1]]), None, num_entities=E)


def test_reciprocal_heads_use_inverse_relation_tails():
    model = RotatE(E, 2 * R, dim=4)
    _, known, test = tiny_kg(3)
    index = FilterIndex.from_triples(known, num_entities=E, num_relations=R)
    metrics = evaluate(model, test, index, reciprocal=True)

    def inverse_scorer(h, r, t):  # score (h, r, t) as (t, r + R, h)
        return model(t, r + R, h)

    expected = brute_force(inverse_scorer, test, known, E)
    assert metrics.optimistic[0].tolist() == expected["head"][:, 0].tolist()
    tail_only = brute_force(model, test, known, E)
    assert metrics.optimistic[1].tolist() == tail_only["tail"][:, 0].tolist()


def test_model_mode_is_restored_and_outputs_serialise():
    model = DistMult(E, R, dim=3).train()
    _, known, test = tiny_kg()
    index = FilterIndex.from_triples(known, num_entities=E, num_relations=R)
    metrics = evaluate(model, test, index)
    assert model.training
    data = json.loads(json.dumps(metrics.to_dict()))
    assert set(data["metrics"]) == {"both", "head", "tail"}
    assert data["metrics"]["both"]["realistic"]["mrr"] == pytest.approx(metrics.mrr)
    text = metrics.table(per_relation=True, labels=["likes", "knows"])
    assert "mrr" in text and "likes" in text and "hits_at_10" in text
    both, head, tail = (metrics.summary(s)["mrr"] for s in ("both", "head", "tail"))
    assert both == pytest.approx((head + tail) / 2)


def test_bad_inputs_are_refused():
    model = DistMult(E, R, dim=3)
    with pytest.raises(GraphDataError, match=r"triples: expected a LongTensor \[N, 3\]"):
        evaluate(model, torch.zeros(4, 2, dtype=torch.long), None)
    with pytest.raises(GraphDataError, match="entity ids must lie in"):
        evaluate(model, torch.tensor([[0, 0, E]]), None)
    with pytest.raises(GraphDataError, match="relation ids must lie in"):
        evaluate(model, torch.tensor([[0, 1, 1]]), None, reciprocal=True)
    with pytest.raises(GraphDataError, match="reciprocal: only applies to a KGEModel"):
        evaluate(
            lambda h, r, t: h.float(),
            torch.tensor([[0, 0, 1]]),
            None,
            num_entities=E,
            reciprocal=True,
        )
    with pytest.raises(GraphDataError, match="num_entities: required"):
        evaluate(lambda h, r, t: h.float(), torch.tensor([[0, 0, 1]]), None)
    with pytest.raises(GraphDataError, match="filter_index: built for 3 entities"):
        evaluate(
            model,
            torch.tensor([[0, 0, 1]]),
            FilterIndex.from_triples(torch.tensor([[0, 0, 1]]), num_entities=3, num_relations=R),
        )
    with pytest.raises(GraphDataError, match="rank_type: expected one of"):
        evaluate(model, torch.tensor([[0, 0, 1]]), None, rank_type="average")


def test_untrained_model_on_umls_is_near_random(datasets_dir):
    ds = KGDataset.from_folder(datasets_dir / "kg" / "umls")
    model = DistMult(ds.num_entities, ds.num_relations, dim=32)
    metrics = evaluate(model, ds.test, ds.filter_index())
    assert metrics.num_triples == 661
    assert abs(metrics.amri) < 0.15  # filtered and untrained: close to a random ranker


def test_compiled_rotate_ranks_match_eager():
    # evaluate(..., compile=True) scores RotatE with one torch.compile kernel; the ranks agree
    # with the eager tiles (random weights: no exact near-ties) and the flag is restored.
    _, known, test = tiny_kg(2)
    model = RotatE(E, R, dim=20)
    index = FilterIndex.from_triples(known, num_entities=E, num_relations=R)
    eager = evaluate(model, test, index)
    compiled = evaluate(model, test, index, compile=True)
    assert kg.rotate._COMPILED is not False, "torch.compile fell back to eager (see the warning)"
    assert not model.compile_scoring
    assert torch.equal(compiled.optimistic, eager.optimistic)
    assert torch.equal(compiled.pessimistic, eager.pessimistic)
    with torch.no_grad():
        model.compile_scoring = True
        scores = model.score_tails(test[:, 0], test[:, 1])
        model.compile_scoring = False
        torch.testing.assert_close(scores, model.score_tails(test[:, 0], test[:, 1]))


def test_failed_compilation_warns_and_scores_eagerly(monkeypatch):
    def broken(*args):
        raise RuntimeError("no C++ compiler found")

    monkeypatch.setattr(kg.rotate, "_COMPILED", broken)
    _, known, test = tiny_kg(2)
    model = RotatE(E, R, dim=20)
    index = FilterIndex.from_triples(known, num_entities=E, num_relations=R)
    with pytest.warns(RuntimeWarning, match="torch.compile failed .*no C\\+\\+ compiler"):
        compiled = evaluate(model, test, index, compile=True)
    assert kg.rotate._COMPILED is False  # later calls go straight to the eager tiles
    assert torch.equal(compiled.optimistic, evaluate(model, test, index).optimistic)


# --------------------------------------------------------------------------- probes, round 5


def _small():
    torch.manual_seed(0)
    model = DistMult(5, 2, dim=4)
    triples = torch.tensor([[0, 0, 1], [1, 1, 2], [2, 0, 3]])
    return model, triples, FilterIndex.from_triples(triples, num_entities=5, num_relations=2)


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(batch_size=True), r"batch_size: expected a positive int or None, got True"),
        (dict(memory_budget=True), r"memory_budget: expected positive int bytes, got True"),
        (dict(reciprocal="yes"), r"reciprocal: expected True or False, got 'yes'"),
        (dict(reciprocal=1), r"reciprocal: expected True or False, got 1"),
        (dict(ks=(1.5,)), r"ks: expected positive ints, e.g. \(1, 3, 10\), got \(1.5,\)"),
        (dict(ks=(True,)), r"ks: expected positive ints"),
        (dict(ks=(math.nan,)), r"ks: expected positive ints"),
        (dict(ks="10"), r"ks: expected positive ints"),
    ],
)
def test_evaluate_refuses_bools_truthy_and_fractional_options(kw, match):
    model, triples, index = _small()
    with pytest.raises(GraphDataError, match=match):
        evaluate(model, triples, index, progress=False, **kw)


def test_evaluate_still_takes_numpy_and_python_ints():
    import numpy as np

    model, triples, index = _small()
    a = evaluate(model, triples, index, ks=(np.int64(1), 3), batch_size=2, progress=False)
    b = evaluate(model, triples, index, ks=(1, 3), progress=False)
    assert a.ks == (1, 3) and a.mrr == b.mrr


def test_metrics_of_no_triples_are_refused_not_nan_or_key_error():
    model, triples, index = _small()
    metrics = evaluate(model, triples[:0], index, progress=False)
    assert metrics.num_triples == 0 and "nan" not in json.dumps(metrics.to_dict()).lower()
    for get in (lambda m: m.mrr, lambda m: m.mr, lambda m: m.amri, lambda m: m.hits_at(10)):
        with pytest.raises(GraphDataError, match=r"no triples were ranked .*at least one triple"):
            get(metrics)


def _oracle_summary(ranks, options, ks):
    """Rank metrics from their definitions (Hoyt et al. 2022), None where 0/0, over lists."""
    n = len(ranks)
    harmonic = [sum(1 / i**p for i in range(1, c + 1)) for p in (1, 2) for c in options]
    h1, h2 = harmonic[:n], harmonic[n:]
    mr, e_mr = sum(ranks) / n, sum((c + 1) / 2 for c in options) / n
    mrr = sum(1 / r for r in ranks) / n
    e_rr = [a / c for a, c in zip(h1, options)]
    var_mr = sum((c * c - 1) / 12 for c in options) / n**2
    var_rr = sum(b / c - e * e for b, c, e in zip(h2, options, e_rr)) / n**2
    e_mrr = sum(e_rr) / n
    out = {
        "mr": mr,
        "amri": None if e_mr == 1 else 1 - (mr - 1) / (e_mr - 1),
        "z_mr": None if var_mr == 0 else (e_mr - mr) / math.sqrt(var_mr),
        "mrr": mrr,
        "adjusted_mrr": None if e_mrr == 1 else (mrr - e_mrr) / (1 - e_mrr),
        "z_mrr": None if var_rr <= 0 else (mrr - e_mrr) / math.sqrt(var_rr),
    }
    for k in ks:
        p = [min(k / c, 1.0) for c in options]
        hits, e_hits = sum(r <= k for r in ranks) / n, sum(p) / n
        var = sum(q * (1 - q) for q in p) / n**2
        out[f"hits_at_{k}"] = hits
        out[f"adjusted_hits_at_{k}"] = None if e_hits == 1 else (hits - e_hits) / (1 - e_hits)
        out[f"z_hits_at_{k}"] = None if var == 0 else (hits - e_hits) / math.sqrt(var)
    return out


def _assert_matches_oracle(metrics: RankMetrics, expected, ks) -> None:
    ranks = [float(x) for side in ("head", "tail") for x in expected[side][:, :2].double().mean(1)]
    options = [int(c) for side in ("head", "tail") for c in expected[side][:, 2]]
    oracle = _oracle_summary(ranks, options, ks)
    got = metrics.summary()
    for key, value in oracle.items():
        if value is None:
            assert got[key] is None, key
        else:
            assert got[key] == pytest.approx(value), key


@pytest.mark.parametrize("ks", [(20,), (1, 3, 10, 12)])
def test_adjusted_metrics_are_none_when_every_query_has_at_most_k_candidates(ks):
    # 12 entities: every query has C <= 12 candidates, so E[Hits@k] = 1 for k >= 12 and the
    # adjusted Hits@k and its z-score are 0/0; they used to be NaN (and JSON NaN).
    n_ent, n_rel = 12, 2
    gen = torch.Generator().manual_seed(3)
    table = torch.randint(0, 4, (n_ent, n_rel, n_ent), generator=gen).float()
    known = torch.randint(0, n_ent, (40, 3), generator=gen)
    known[:, 1] %= n_rel
    known = torch.unique(known, dim=0)
    test = known[::3]
    index = FilterIndex.from_triples(known, num_entities=n_ent, num_relations=n_rel)
    scorer = table_scorer(table)
    metrics = evaluate(scorer, test, index, num_entities=n_ent, ks=ks, progress=False)
    expected = brute_force(scorer, test, known, n_ent)
    check_against(metrics, expected)
    _assert_matches_oracle(metrics, expected, ks)
    k = max(ks)
    s = metrics.summary()
    assert s[f"hits_at_{k}"] == 1.0
    assert s[f"adjusted_hits_at_{k}"] is None and s[f"z_hits_at_{k}"] is None
    assert all(isinstance(s[key], float) for key in ("amri", "adjusted_mrr", "z_mr", "z_mrr"))
    data = metrics.to_dict()
    text = json.dumps(data, allow_nan=False)  # strict JSON: no NaN anywhere
    assert json.loads(text)["metrics"]["tail"]["optimistic"][f"adjusted_hits_at_{k}"] is None
    for per in metrics.per_relation().values():
        assert per[f"adjusted_hits_at_{k}"] is None and per[f"z_hits_at_{k}"] is None


def test_adjusted_metrics_keep_their_values_when_some_query_has_more_than_k_candidates():
    # ks (1, 3): most queries have more candidates than k, so every metric is defined.
    table, known, test = tiny_kg(4)
    index = FilterIndex.from_triples(known, num_entities=E, num_relations=R)
    scorer = table_scorer(table)
    metrics = evaluate(scorer, test, index, num_entities=E, ks=(1, 3), progress=False)
    _assert_matches_oracle(metrics, brute_force(scorer, test, known, E), (1, 3))
    assert all(v is not None and math.isfinite(v) for v in metrics.summary().values())


def test_metrics_of_single_candidate_queries_are_none_and_the_amri_property_refuses():
    # Every triple of a 2-entity, 1-relation KG is known: each query keeps only its true
    # entity (C = 1), so E[MR] = E[MRR] = 1 and AMRI, adjusted MRR and all z-scores are 0/0.
    known = torch.tensor([[0, 0, 0], [0, 0, 1], [1, 0, 0], [1, 0, 1]])
    index = FilterIndex.from_triples(known, num_entities=2, num_relations=1)
    metrics = evaluate(DistMult(2, 1, dim=3), known, index, progress=False)
    assert (metrics.options == 1).all()
    s = metrics.summary()
    assert s["mr"] == 1.0 and s["mrr"] == 1.0 and s["amr"] == 1.0 and s["hits_at_1"] == 1.0
    for key in ("amri", "adjusted_mrr", "z_mr", "z_mrr", "adjusted_hits_at_1", "z_hits_at_1"):
        assert s[key] is None, key
    assert "nan" not in json.dumps(metrics.to_dict(), allow_nan=False).lower()
    assert metrics.mr == 1.0 and metrics.mrr == 1.0
    with pytest.raises(GraphDataError, match=r"amri: undefined, every ranked query has exactly"):
        _ = metrics.amri
    table = metrics.table(per_relation=True)
    assert "n/a" in table and "nan" not in table


def test_per_relation_metric_is_none_only_where_it_is_undefined():
    # Relation 0: C = 2 and 3 (both <= k = 3): adjusted Hits@3 undefined. Relation 1: C = 5, 6.
    m = RankMetrics(
        optimistic=torch.tensor([[1, 2], [3, 5]]),
        pessimistic=torch.tensor([[2, 2], [3, 5]]),
        options=torch.tensor([[2, 5], [3, 6]]),
        relation=torch.tensor([0, 1]),
        ks=(3,),
    )
    per = m.per_relation()
    assert per[0]["adjusted_hits_at_3"] is None and per[0]["z_hits_at_3"] is None
    # Relation 1: realistic ranks 2 (head, C = 5) and 5 (tail, C = 6): Hits@3 = 1/2.
    e = (3 / 5 + 3 / 6) / 2
    assert per[1]["adjusted_hits_at_3"] == pytest.approx((0.5 - e) / (1 - e))
    both = m.summary()  # ranks 1.5, 2, 3, 5 with C = 2, 5, 3, 6: Hits@3 = 3/4
    e_both = (1 + 3 / 5 + 1 + 3 / 6) / 4
    assert both["adjusted_hits_at_3"] == pytest.approx((0.75 - e_both) / (1 - e_both))
