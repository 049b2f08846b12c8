"""Every export of a PathExplanation on hand-built explanations of 0, 1, 2 and many triples."""

import json

import pytest
import torch

from kg.explain.explanation import ExplainedPath, PathExplanation

TARGET = ("ann", "spouse", "bob")


def _explanation(local, paths, entities, chosen=None, conditions=()):
    paths = tuple(
        ExplainedPath(
            triples=tuple(triples),
            forward=tuple(forward),
            entities=tuple(walk),
            individual_score=1.0,
            gain=0.5,
        )
        for triples, forward, walk in paths
    )
    triples = chosen if chosen is not None else []
    if chosen is None:
        for path in paths:
            triples += [t for t in path.triples if t not in triples]
        triples += list(conditions)
    return PathExplanation(
        target=TARGET,
        paths=paths,
        triples=tuple(triples),
        teacher_score=2.0,
        full_score=1.5,
        empty_score=-1.0,
        joint_score=1.2,
        complement_score=0.1,
        full_probability=0.8,
        joint_probability=0.7,
        complement_probability=0.3,
        fid_plus=0.5,
        fid_minus=0.1,
        characterization=0.6,
        sparsity=1 - len(triples) / max(len(local), 1),
        local_entities=tuple(entities),
        local_triples=tuple(local),
        num_candidates=len(paths),
        truncated=False,
        stop_reason="no_gain",
        mode="evaluator",
        seconds=0.01,
        conditions=tuple(conditions),
    )


def one_triple():
    # a length-1 path that runs parallel to the target: the case that raised IndexError
    local = [("ann", "lives_with", "bob")]
    return _explanation(local, [(local, [True], ["ann", "bob"])], ["ann", "bob"])


def two_triples():
    local = [("ann", "parent", "cy"), ("bob", "parent", "cy")]
    path = (local, [True, False], ["ann", "cy", "bob"])
    return _explanation(local, [path], ["ann", "bob", "cy"])


def many_triples():
    local = [
        ("ann", "lives_with", "bob"),
        ("ann", "parent", "cy"),
        ("bob", "parent", "cy"),
        ("bob", "likes", "ann"),
        ("cy", "sibling", "dee"),
        ("dee", "friend", "ann"),
        ("eve", "friend", "bob"),
    ]
    paths = [
        ([local[0]], [True], ["ann", "bob"]),
        ([local[1], local[2]], [True, False], ["ann", "cy", "bob"]),
    ]
    return _explanation(local, paths, ["ann", "bob", "cy", "dee", "eve"])


def with_condition():
    # a path to bob and a fact on a constant at him (kg.explain.patterns.conditions): the
    # constant is on no path
    local = [
        ("bob", "supplies", "ann"),
        ("bob", "fuel", "coal"),
        ("cy", "fuel", "coal"),
        ("ann", "trades_on", "market"),
    ]
    path = ([local[0]], [False], ["ann", "bob"])
    return _explanation(
        local, [path], ["ann", "bob", "coal", "cy", "market"], conditions=[local[1]]
    )


def empty():
    return _explanation([], [], ["ann", "bob"], chosen=[])


CASES = {"one": one_triple, "two": two_triples, "many": many_triples, "condition": with_condition}


@pytest.mark.parametrize("case", [*CASES, "empty"])
def test_pyg_explanation_subgraphs_are_the_chosen_and_the_other_triples(case):
    explanation = CASES.get(case, empty)()
    pyg = explanation.to_pyg_explanation()
    n = len(explanation.local_triples)
    assert pyg.edge_index.shape == (2, n) and pyg.edge_mask.shape == (n,)
    assert pyg.edge_type.shape == (n,) and pyg.get("node_mask") is None
    assert pyg.num_nodes == len(explanation.local_entities)
    assert pyg.validate(raise_on_error=True)

    def triples(data):
        ents, rels = data.entity_labels, data.relation_labels
        pairs = data.edge_index.t().tolist()
        return [(ents[h], rels[r], ents[t]) for (h, t), r in zip(pairs, data.edge_type.tolist())]

    assert triples(pyg) == list(explanation.local_triples)
    sub = pyg.get_explanation_subgraph()  # IndexError on one triple before the fix
    assert sorted(triples(sub)) == sorted(explanation.triples)
    assert bool((sub.edge_mask > 0).all()) and sub.edge_mask.numel() == len(explanation.triples)
    rest = pyg.get_complement_subgraph()
    assert sorted(triples(rest)) == sorted(
        set(explanation.local_triples) - set(explanation.triples)
    )
    # graph-level attributes survive untouched, whatever their size
    for data in (sub, rest):
        assert data.edge_label_index.tolist() == [[0], [1]]
        assert data.entity_labels == list(explanation.local_entities)
        assert data.relation_labels[data.target_relation] == TARGET[1]


@pytest.mark.parametrize("case", [*CASES, "empty"])
def test_json_networkx_and_text_exports(case, tmp_path):
    explanation = CASES.get(case, empty)()
    text = explanation.to_json(tmp_path / "e.json")
    assert PathExplanation.from_json(text) == explanation
    assert json.loads((tmp_path / "e.json").read_text()) == json.loads(text)
    assert json.loads(text)["triples"] == [list(t) for t in explanation.triples]
    graph = explanation.to_networkx()
    assert graph.number_of_edges() == len(explanation.local_triples) + 1
    flagged = {(u, d["relation"], v) for u, v, d in graph.edges(data=True) if d["in_explanation"]}
    assert flagged == set(explanation.triples)
    assert [(u, d["relation"], v) for u, v, d in graph.edges(data=True) if d["target"]] == [TARGET]
    summary = explanation.to_text()
    for path in explanation.paths:
        assert path.to_text() in summary
    for h, r, t in explanation.conditions:
        assert f"  condition: ({h}, {r}, {t})" in summary.splitlines()
    png = explanation.plot(tmp_path / "e.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_edge_mask_matches_the_chosen_triples_in_order():
    explanation = many_triples()
    mask = explanation.to_pyg_explanation().edge_mask
    assert mask.tolist() == [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    assert mask.dtype == torch.float32


def test_json_without_conditions_reads_as_none():
    # an explanation written before conditions existed has no "conditions" key
    data = json.loads(many_triples().to_json())
    del data["conditions"]
    assert PathExplanation.from_dict(data) == many_triples()
    back = PathExplanation.from_json(with_condition().to_json())
    assert back.conditions == (("bob", "fuel", "coal"),)
    assert back.conditions[0] in back.triples and back.conditions[0] not in back.paths[0].triples
