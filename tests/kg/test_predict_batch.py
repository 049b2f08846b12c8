"""kg.prediction.predict: filtered batch prediction against a brute-force oracle."""

import pytest
import torch

from graphdata.errors import GraphDataError, UnknownLabelError
from graphdata.filter_index import FilterIndex
from graphdata.tripleset import TripleSet
from graphdata.vocabulary import Vocabulary
from kg.complex import ComplEx
from kg.distmult import DistMult
from kg.prediction import Predictions, predict, predict_tails

E, R = 7, 3
ENTITIES = [f"e{i}" for i in range(E)]
RELATIONS = ["likes", "spouse", "near"]
KNOWN = torch.tensor(
    [[0, 0, 1], [0, 0, 3], [0, 1, 0], [2, 1, 4], [4, 1, 2], [5, 2, 5], [1, 0, 3], [6, 0, 3]]
)


def _model(cls=ComplEx, num_relations=R) -> torch.nn.Module:
    torch.manual_seed(0)
    return cls(E, num_relations, dim=4).eval()


def _oracle(model, entity, rel, side, known, k, exclude_self=False, reciprocal=False):
    """Score all E triples one by one with forward(), mask known answers, stable sort."""
    cand = torch.arange(E)
    with torch.no_grad():
        if side == "tail":
            scores = model(torch.full((E,), entity), torch.full((E,), rel), cand)
        elif reciprocal:
            scores = model(torch.full((E,), entity), torch.full((E,), rel + R), cand)
        else:
            scores = model(cand, torch.full((E,), rel), torch.full((E,), entity))
    drop = set()
    for h, r, t in known.tolist():
        if r == rel and side == "tail" and h == entity:
            drop.add(t)
        if r == rel and side == "head" and t == entity:
            drop.add(h)
    if exclude_self:
        drop.add(entity)
    ranked = sorted((i for i in range(E) if i not in drop), key=lambda i: (-float(scores[i]), i))
    ranked = ranked[:k]
    pad = min(k, E) - len(ranked)  # predict pads a query left with too few candidates
    return ranked + [-1] * pad, [float(scores[i]) for i in ranked] + [float("-inf")] * pad


@pytest.mark.parametrize("side", ["tail", "head"])
@pytest.mark.parametrize("exclude_self", [False, True])
def test_filtered_top_k_equals_brute_force(side, exclude_self):
    model = _model()
    queries = torch.tensor([[e, r] for e in range(E) for r in range(R)])
    got = predict(
        model, queries, side=side, known=KNOWN, top_k=4, exclude_self=exclude_self, batch_size=5
    )
    assert isinstance(got, Predictions) and got.ids.shape == (E * R, 4)
    for n, (e, r) in enumerate(queries.tolist()):
        ids, scores = _oracle(model, e, r, side, KNOWN, 4, exclude_self)
        assert got.ids[n].tolist() == ids, (side, e, r)
        assert torch.allclose(got.scores[n], torch.tensor(scores), atol=1e-5)


def test_filtered_never_returns_a_known_answer_and_counts_removed():
    got = predict(_model(), torch.tensor([[0, 0], [0, 1]]), known=KNOWN, top_k=E)
    # (e0, likes, ?) knows e1, e3; (e0, spouse, ?) knows e0 itself (a known answer: removed)
    assert got.num_removed.tolist() == [2, 1]
    assert not {1, 3} & set(got.ids[0].tolist()) and 0 not in got.ids[1].tolist()
    # E - removed answers remain; the rest is padding (-1, -inf), dropped by to_list
    assert got.ids[0].tolist().count(-1) == 2 and torch.isinf(got.scores[0, -2:]).all()
    assert [len(row) for row in got.to_list()] == [E - 2, E - 1]


def test_unfiltered_is_the_score_order_of_score_tails_and_score_heads():
    model = _model(DistMult)
    queries = torch.tensor([[2, 1], [5, 0]])
    with torch.no_grad():
        tails = model.score_tails(queries[:, 0], queries[:, 1])
        heads = model.score_heads(queries[:, 1], queries[:, 0])
    for side, scores in (("tail", tails), ("head", heads)):
        got = predict(model, queries, side=side, filtered=False, top_k=E)
        order = torch.sort(scores, dim=1, descending=True, stable=True)
        assert torch.equal(got.ids, order.indices) and torch.equal(got.scores, order.values)
        assert got.num_removed.tolist() == [0, 0]


def test_reciprocal_heads_are_tails_of_the_inverse_relation():
    model = _model(num_relations=2 * R)
    got = predict(model, torch.tensor([[3, 0], [2, 1]]), side="head", known=KNOWN, reciprocal=True)
    for n, (e, r) in enumerate([(3, 0), (2, 1)]):
        ids, _ = _oracle(model, e, r, "head", KNOWN, 10, reciprocal=True)
        assert got.ids[n].tolist() == ids


def test_known_as_filter_index_tripleset_or_list_agree():
    model = _model()
    queries = torch.tensor([[0, 0], [4, 1]])
    index = FilterIndex.from_triples(KNOWN, num_entities=E, num_relations=R)
    ts = TripleSet(KNOWN, Vocabulary.from_labels(ENTITIES), Vocabulary.from_labels(RELATIONS))
    results = [
        predict(model, queries, known=known).ids
        for known in (index, ts, KNOWN, [KNOWN[:4], KNOWN[4:]])
    ]
    assert all(torch.equal(results[0], r) for r in results[1:])


def test_labels_round_trip_and_match_ids():
    model = _model()
    pairs = [("e0", "likes"), ("e4", "spouse")]
    got = predict(
        model, pairs, known=KNOWN, top_k=3, entity_labels=ENTITIES, relation_labels=RELATIONS
    )
    by_id = predict(model, torch.tensor([[0, 0], [4, 1]]), known=KNOWN, top_k=3)
    assert torch.equal(got.ids, by_id.ids)
    assert got.labels() == [[ENTITIES[i] for i in row] for row in by_id.ids.tolist()]
    assert [label for label, _ in got.to_list()[1]] == got.labels()[1]
    with pytest.raises(GraphDataError, match="ids only; pass entity_labels="):
        by_id.labels()


def test_unfiltered_tail_side_agrees_with_predict_tails():
    model = _model(DistMult)
    rows = predict_tails(
        model, "e2", "near", entity_labels=ENTITIES, relation_labels=RELATIONS, top_k=5
    )
    got = predict(
        model,
        [("e2", "near")],
        filtered=False,
        top_k=5,
        entity_labels=ENTITIES,
        relation_labels=RELATIONS,
    )
    assert got.to_list()[0] == rows


def test_bad_queries_name_the_label_and_the_fix():
    model = _model()
    labels = {"entity_labels": ENTITIES, "relation_labels": RELATIONS}
    with pytest.raises(UnknownLabelError, match=r"queries\[1\] head: unknown entity label 'e9'"):
        predict(model, [("e0", "likes"), ("e9", "likes")], known=KNOWN, **labels)
    with pytest.raises(UnknownLabelError, match=r"queries\[0\] relation: .*'spose'.*'spouse'"):
        predict(model, [("e0", "spose")], known=KNOWN, **labels)
    with pytest.raises(UnknownLabelError, match=r"queries\[0\] tail: unknown entity"):
        predict(model, [("x", "likes")], side="head", known=KNOWN, **labels)
    with pytest.raises(GraphDataError, match="label pairs need entity_labels="):
        predict(model, [("e0", "likes")], known=KNOWN)
    with pytest.raises(GraphDataError, match=r"known: filtered=True needs .*filter_index\(\)"):
        predict(model, torch.tensor([[0, 0]]))
    with pytest.raises(GraphDataError, match="known: ignored when filtered=False"):
        predict(model, torch.tensor([[0, 0]]), filtered=False, known=KNOWN)
    with pytest.raises(GraphDataError, match=r"queries\[0\]: relation id 3 is outside \[0, 3\)"):
        predict(model, torch.tensor([[0, 3]]), known=KNOWN)
    with pytest.raises(GraphDataError, match=r"queries: expected a LongTensor \[N, 2\]"):
        predict(model, torch.zeros(2, 3, dtype=torch.long), known=KNOWN)
    with pytest.raises(GraphDataError, match="side: expected one of"):
        predict(model, torch.tensor([[0, 0]]), side="both", known=KNOWN)
    with pytest.raises(GraphDataError, match="known: expected a FilterIndex, .* got int"):
        predict(model, torch.tensor([[0, 0]]), known=3)
    with pytest.raises(GraphDataError, match="pass reciprocal=True"):
        index = FilterIndex.from_triples(KNOWN, num_entities=E, num_relations=R)
        predict(_model(num_relations=2 * R), torch.tensor([[0, 0]]), known=index, reciprocal=False)
    with pytest.raises(GraphDataError, match="top_k: expected a positive int"):
        predict(model, torch.tensor([[0, 0]]), known=KNOWN, top_k=0)


def test_nan_scores_are_refused():
    model = _model(DistMult)
    with torch.no_grad():
        model.entity.weight[0] = float("nan")
    with pytest.raises(GraphDataError, match="model: scored .* NaN or infinite .*diverged"):
        predict(model, torch.tensor([[0, 0]]), filtered=False)


def test_progress_bar_only_when_asked(capsys):
    predict(_model(), torch.tensor([[0, 0]] * 4), known=KNOWN, batch_size=1, progress=False)
    assert capsys.readouterr().err == ""


def test_a_dataset_as_known_filters_all_splits_and_labels_the_answers():
    from graphdata.triples import KGDataset

    rows = [("a", "r", "b"), ("a", "r", "c"), ("b", "r", "c"), ("c", "r", "a")]
    data = KGDataset.from_labeled(rows[:2], rows[2:3], rows[3:])
    model = DistMult(data.num_entities, data.num_relations, dim=4)
    got = predict(model, [("a", "r")], known=data, top_k=3)
    # (a, r, b) and (a, r, c) are known (train): only a itself is left.
    assert got.labels() == [["a"]]
    index = predict(
        model,
        [("a", "r")],
        known=data.filter_index(),
        top_k=3,
        entity_labels=data.entities.labels,
        relation_labels=data.relations.labels,
    )
    assert torch.equal(got.ids, index.ids) and torch.equal(got.scores, index.scores)


def test_reciprocal_is_inferred_from_the_known_relations():
    model = _model(num_relations=2 * R)
    index = FilterIndex.from_triples(KNOWN, num_entities=E, num_relations=R)
    queries = torch.tensor([[3, 0], [2, 1]])
    for side in ("tail", "head"):
        inferred = predict(model, queries, side=side, known=index)
        stated = predict(model, queries, side=side, known=index, reciprocal=True)
        assert torch.equal(inferred.ids, stated.ids)
        assert torch.equal(inferred.scores, stated.scores)
    # Same relation count as the index: not reciprocal.
    plain = _model()
    assert torch.equal(
        predict(plain, queries, side="head", known=index).ids,
        predict(plain, queries, side="head", known=index, reciprocal=False).ids,
    )


@pytest.mark.parametrize("value", [float("inf"), 1e30])
def test_infinite_scores_are_refused_never_printed_as_answers(value):
    # 1e30 overflows float32 in the product: -inf or +inf scores, never an answer.
    model = _model(DistMult)
    with torch.no_grad():
        model.entity.weight[0] = value
    for filtered in (False, True):
        with pytest.raises(GraphDataError, match=r"model: scored \d+ NaN or infinite value"):
            predict(
                model,
                torch.tensor([[0, 0]]),
                filtered=filtered,
                known=KNOWN if filtered else None,
            )
