import dataclasses
import json
import warnings

import pytest

from kg.explain.explanation import PathExplanation


@pytest.fixture(scope="module")
def explanation(explainer, world):
    # The greedy path search (strategy "paths"): it gives multi-path explanations on this tiny
    # world; the default pattern search rarely admits a second pattern here.
    config = dataclasses.replace(explainer.config, strategy="paths")
    greedy = type(explainer)(explainer.model, config).fit(
        world.dataset, evaluator=explainer.evaluator_
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the candidate cap
        for target in world.derived_triples("test"):
            found = greedy.explain(target)
            if len(found.paths) >= 2:
                return found
    raise AssertionError("no test triple got an explanation of two paths")


def test_json_round_trip(explanation, tmp_path):
    text = explanation.to_json(tmp_path / "explanation.json")
    assert (tmp_path / "explanation.json").read_text() == text
    back = PathExplanation.from_json(text)
    assert back == explanation
    assert json.loads(text)["paths"][0]["triples"][0] == list(explanation.paths[0].triples[0])


def test_pyg_explanation_mask_is_the_chosen_triples(explanation):
    pyg = explanation.to_pyg_explanation()
    assert pyg.edge_mask.shape == (len(explanation.local_triples),)
    entities, relations = pyg.entity_labels, pyg.relation_labels
    masked = pyg.edge_mask > 0
    chosen = {
        (entities[h], relations[r], entities[t])
        for (h, t), r in zip(pyg.edge_index[:, masked].t().tolist(), pyg.edge_type[masked].tolist())
    }
    assert chosen == set(explanation.triples)
    assert int(masked.sum()) == len(explanation.triples)
    sub = pyg.get_explanation_subgraph()
    assert sub.edge_index.size(1) == len(explanation.triples)
    assert entities[0] == explanation.target[0] and entities[1] == explanation.target[2]
    complement = pyg.get_complement_subgraph()
    assert complement.edge_index.size(1) == len(explanation.local_triples) - len(
        explanation.triples
    )
    assert pyg.validate(raise_on_error=True)
    assert pyg.edge_label_index.tolist() == [[0], [1]]
    assert relations[pyg.target_relation] == explanation.target[1]


def test_networkx_view(explanation):
    graph = explanation.to_networkx()
    flagged = {(u, d["relation"], v) for u, v, d in graph.edges(data=True) if d["in_explanation"]}
    assert flagged == set(explanation.triples)
    targets = [(u, d["relation"], v) for u, v, d in graph.edges(data=True) if d["target"]]
    assert targets == [explanation.target]
    assert graph.number_of_edges() == len(explanation.local_triples) + 1


def test_text_and_plot(explanation, tmp_path):
    text = explanation.to_text()
    assert str(explanation.target[1]) in text
    for path in explanation.paths:
        assert path.to_text() in text
    png = explanation.plot(tmp_path / "figure.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(tmp_path.glob(".*.png"))  # no temporary file left behind
