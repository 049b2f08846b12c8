import dataclasses
import json
import math
import warnings

import numpy as np
import pytest
import torch

from graphdata.errors import GraphDataError, NotFittedError, UnknownLabelError
from graphdata.triples import KGDataset
from kg.distmult import DistMult
from kg.explain.evaluator.config import EvaluatorConfig
from kg.explain.explainer import ExplainerConfig, KGExplainer
from kg.explain.faithful import FaithfulConfig
from kg.explain.fidelity import characterization_score
from kg.explain.retrain import RetrainConfig

# A hand-built world: the target (ann, likes, cat) is planted on ann -owns-> dog -chases-> cat;
# ann -knows-> bob -knows-> cat, ann -sees-> cat and the far pair (eve, knows, fay) distract.
ROWS = [
    ("ann", "owns", "dog"),
    ("dog", "chases", "cat"),
    ("ann", "knows", "bob"),
    ("bob", "knows", "cat"),
    ("ann", "sees", "cat"),
    ("eve", "knows", "fay"),
    ("gus", "likes", "ann"),
]
PLANTED = [("ann", "owns", "dog"), ("dog", "chases", "cat")]


class OracleExplainer(KGExplainer):
    """The teacher's score is 1 exactly when every planted triple is present."""

    def scorer(self, local, *, mode=None):
        labels = self.graph_.entities.labels
        rels = self.graph_.relations.labels
        triples = [(labels[h], rels[r], labels[t]) for h, r, t in local.triples.tolist()]
        if not all(t in triples for t in PLANTED):  # pruned away (a candidate cap): never 1
            return lambda keep: torch.zeros(keep.size(0))
        planted = [triples.index(t) for t in PLANTED]
        return lambda keep: keep[:, planted].all(dim=1).float()


#: The configs' seed refusal: graphdata.checks.check_seed's range, [0, 2**64 - 1].
_SEED = r"seed: expected an int in \[0, 18446744073709551615\], got "


@pytest.fixture(scope="module")
def toy():
    dataset = KGDataset.from_labeled(ROWS, ROWS[:1], ROWS[:1], name="toy")
    model = DistMult(dataset.num_entities, dataset.num_relations, dim=4)
    return dataset, model


def test_oracle_pipeline_recovers_the_planted_path(toy):
    dataset, model = toy
    explainer = OracleExplainer(
        model, ExplainerConfig(mode="retrain", strategy="paths", max_length=2, hops=1)
    )
    explanation = explainer.fit(dataset).explain(("ann", "likes", "cat"))
    assert [p.triples for p in explanation.paths] == [tuple(PLANTED)]
    assert explanation.triples == tuple(PLANTED)
    assert explanation.paths[0].entities == ("ann", "dog", "cat")
    assert explanation.paths[0].forward == (True, True)
    assert explanation.paths[0].to_text() == "ann -[owns]-> dog -[chases]-> cat"
    assert (explanation.full_score, explanation.empty_score) == (1.0, 0.0)
    assert (explanation.joint_score, explanation.complement_score) == (1.0, 0.0)
    assert explanation.stop_reason == "min_gain" and explanation.mode == "retrain"
    assert explanation.sparsity == pytest.approx(1 - 2 / len(explanation.local_triples))


def test_a_body_through_r_is_the_fallback_where_nothing_else_explains():
    # r(x, z) <- s(x, y), r(y, z) everywhere; targets 0-5 also have a path through g.
    rows = []
    for i in range(12):
        x, y, z = f"x{i}", f"y{i}", f"z{i}"
        rows += [(x, "s", y), (y, "r", z), (x, "r", z)]
        if i < 6:
            rows += [(x, "g", f"w{i}"), (f"w{i}", "g", z)]
    dataset = KGDataset.from_labeled(rows, rows[:3], rows[:3], name="recursive")
    model = DistMult(dataset.num_entities, dataset.num_relations, dim=4)
    explainer = KGExplainer(model, ExplainerConfig(mode="retrain", max_length=2, hops=2))
    explainer.fit(dataset)
    with_g = explainer.explain(("x0", "r", "z0"))
    only_through_r = explainer.explain(("x9", "r", "z9"))
    assert {t[1] for t in with_g.triples} == {"g"}
    assert set(only_through_r.triples) == {("x9", "s", "y9"), ("y9", "r", "z9")}


def test_disconnected_pair_gives_an_empty_explanation_that_says_so(toy):
    dataset, model = toy
    explainer = KGExplainer(model, ExplainerConfig(mode="retrain", max_length=2, hops=1))
    explanation = explainer.fit(dataset).explain(("ann", "knows", "fay"))
    assert explanation.is_empty and explanation.stop_reason == "no_paths"
    assert "not connected within 1 hops" in explanation.message
    assert "empty explanation" in explanation.to_text()


def test_candidate_cap_warns_with_the_cap(toy):
    dataset, model = toy
    config = ExplainerConfig(
        mode="retrain", strategy="paths", max_length=2, hops=1, max_candidates=1
    )
    explainer = OracleExplainer(model, config).fit(dataset)
    with pytest.warns(UserWarning, match="max_candidates=1 candidate paths"):
        explanation = explainer.explain(("ann", "likes", "cat"))
    assert explanation.truncated and "capped at max_candidates = 1" in explanation.message
    assert explanation.num_candidates == 1


def test_bad_input(toy, explainer, teacher, world, small_config):
    dataset, model = toy
    with pytest.raises(NotFittedError, match="not fitted"):
        KGExplainer(model).explain(("ann", "likes", "cat"))
    fitted = KGExplainer(model, ExplainerConfig(mode="retrain")).fit(dataset)
    with pytest.raises(UnknownLabelError, match="triple: unknown relation label 'lieks'.*'likes'"):
        fitted.explain(("ann", "lieks", "cat"))
    with pytest.raises(UnknownLabelError, match="unknown entity label 'anne'.*'ann'"):
        fitted.explain(("anne", "likes", "cat"))
    with pytest.raises(GraphDataError, match="expected \\(head, relation, tail\\)"):
        fitted.explain(("ann", "likes"))
    with pytest.raises(GraphDataError, match="three labels or three ids"):
        fitted.explain(("ann", 0, "cat"))
    with pytest.raises(GraphDataError, match="tail id 99 outside"):
        fitted.explain((0, 0, 99))
    with pytest.raises(GraphDataError, match="head != tail"):
        fitted.explain(("ann", "likes", "ann"))
    with pytest.raises(GraphDataError, match="mode: expected one of"):
        fitted.explain(("ann", "likes", "cat"), mode="gnn")
    with pytest.raises(GraphDataError, match="selection: expected one of"):
        KGExplainer(DistMult(3, 1, dim=2), ExplainerConfig(selection="longest")).fit(dataset)
    with pytest.raises(GraphDataError, match="min_gain: expected a fraction >= 0"):
        KGExplainer(DistMult(3, 1, dim=2), ExplainerConfig(min_gain=-0.1)).fit(dataset)
    with pytest.raises(GraphDataError, match="does not fit the graph"):
        KGExplainer(DistMult(3, 1, dim=2)).fit(dataset)
    # An evaluator distilled from another model, on another graph or radius is refused.
    other = DistMult(teacher.num_entities, teacher.num_relations, dim=16)
    with pytest.raises(GraphDataError, match="distilled from another model"):
        KGExplainer(other, small_config()).fit(world.dataset, evaluator=explainer.evaluator_)
    with pytest.raises(GraphDataError, match="distilled on another graph"):
        KGExplainer(teacher, small_config()).fit(
            world.dataset.valid, evaluator=explainer.evaluator_
        )
    with pytest.raises(GraphDataError, match="hops=2 subgraphs, the explainer uses hops=1"):
        KGExplainer(teacher, small_config(hops=1)).fit(
            world.dataset, evaluator=explainer.evaluator_
        )


def _target(world):
    return next(t for t in world.derived_triples("test") if t[1] == "grandparent")


def test_distilled_explanation_is_consistent(explainer, world):
    target = _target(world)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the candidate cap
        explanation = explainer.explain(target)
        again = explainer.explain(target)
        by_id = explainer.explain(explainer.resolve(target))
    assert dataclasses.replace(again, seconds=0.0) == dataclasses.replace(explanation, seconds=0.0)
    assert dataclasses.replace(by_id, seconds=0.0) == dataclasses.replace(explanation, seconds=0.0)
    assert explanation.target == target and explanation.mode == "evaluator"
    assert 1 <= len(explanation.paths) <= explainer.config.max_paths
    local = set(explanation.local_triples)
    assert target not in local
    union = []
    for path in explanation.paths:
        assert path.entities[0] == target[0] and path.entities[-1] == target[2]
        assert set(path.triples) <= local and 1 <= len(path.triples) <= 3
        union += path.triples
    assert explanation.triples == tuple(dict.fromkeys(union))
    p = explainer.probability(
        torch.tensor(
            [explanation.full_score, explanation.joint_score, explanation.complement_score]
        )
    ).tolist()
    assert explanation.fid_plus == pytest.approx(p[0] - p[2])
    assert explanation.fid_minus == pytest.approx(p[0] - p[1])
    assert explanation.characterization == pytest.approx(
        characterization_score(explanation.fid_plus, explanation.fid_minus)
    )
    with torch.no_grad():
        ids = torch.tensor(explainer.resolve(target)).view(3, 1)
        assert explanation.teacher_score == pytest.approx(float(explainer.model(*ids)[0]))


def test_retrain_mode_and_baselines(explainer, world):
    target = _target(world)
    retrain = dataclasses.replace(explainer.config, retrain=RetrainConfig(steps=2))
    explainer_b = KGExplainer(explainer.model, retrain).fit(
        world.dataset, evaluator=explainer.evaluator_
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_retrain = explainer_b.explain(target, mode="retrain")
        shortest = explainer.explain_baseline(target, "shortest")
        random_a = explainer.explain_baseline(target, "random", seed=1)
        random_b = explainer.explain_baseline(target, "random", seed=1)
        single = explainer.explain_baseline(target, "single_best")
        mask = explainer.explain_baseline(target, "edge_mask")
    assert by_retrain.mode == "retrain" and len(by_retrain.paths) <= 3
    lengths = [len(p.triples) for p in shortest.paths]
    assert len(lengths) == 3 and lengths == sorted(lengths)
    assert lengths[0] <= min(len(p.triples) for p in random_a.paths)
    assert random_a.triples == random_b.triples and len(random_a.paths) == 3
    assert len(single.paths) <= 1 and single.stop_reason == "baseline"
    assert mask.paths == () and set(mask.triples) <= set(mask.local_triples)
    assert len(mask.triples) <= explainer.config.max_paths * explainer.config.max_length
    with pytest.raises(GraphDataError, match="baseline: expected one of"):
        explainer.explain_baseline(target, "best")


def test_baseline_gains_telescope_and_the_json_is_strict(explainer, world):
    # A baseline's path gains were NaN ("not computed"), so to_json wrote non-JSON NaN. They are
    # g_k = f(S_k) - f(S_{k-1}) as for the pattern strategy: the first is the first path's own
    # score less the empty graph's, and they sum to the explanation's score less the empty one's.
    target = _target(world)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        shortest = explainer.explain_baseline(target, "shortest")
    gains = [p.gain for p in shortest.paths]
    assert len(gains) == 3 and all(math.isfinite(g) for g in gains)
    first = shortest.paths[0].individual_score - shortest.empty_score
    assert gains[0] == pytest.approx(first, abs=1e-5)
    assert sum(gains) == pytest.approx(shortest.joint_score - shortest.empty_score, abs=1e-5)

    def no_constants(name):
        raise AssertionError(f"non-JSON constant {name}")

    assert json.loads(shortest.to_json(), parse_constant=no_constants)["paths"][0]["gain"] == (
        pytest.approx(gains[0])
    )


def test_a_new_baseline_is_one_function_and_one_dict_line(explainer, world, monkeypatch):
    from kg.explain import baselines

    seen = []

    def longest(x: baselines.BaselineInput):
        seen.append((x.max_paths, x.max_length, x.seed, x.evaluator is explainer.evaluator_))
        chosen = (len(x.local.paths) - 1,) if x.local.paths else ()
        return chosen, x.local.edge_mask(chosen)

    monkeypatch.setitem(baselines.BASELINES, "longest", longest)
    target = _target(world)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        explanation = explainer.explain_baseline(target, "longest", seed=5)
    cfg = explainer.config
    assert seen == [(cfg.max_paths, cfg.max_length, 5, True)]
    assert explanation.mode == "longest" and len(explanation.paths) == 1
    assert len(explanation.paths[0].triples) == max(
        len(p) for p in explainer.local_structure(target).paths
    )
    # Fidelity is measured like every baseline's: the scores of the kept and removed triples.
    assert explanation.joint_score != explanation.complement_score


def _shortcut_rows():
    """gp(x, z) <- p(x, y), p(y, z) on 8 chains; a shortcut s covers 6 of the 8 gp pairs and 4
    non-gp pairs; chain 0's gp fact (c0x, gp, c0z) is held out (the target)."""
    rows = []
    for c in range(8):
        x, y, z = f"c{c}x", f"c{c}y", f"c{c}z"
        rows += [(x, "p", y), (y, "p", z)]
        if c > 0:
            rows.append((x, "gp", z))
        if c < 6:
            rows.append((x, "s", z))
    rows += [(f"c{c}x", "s", f"c{c + 1}y") for c in range(4)]
    return rows


def test_pattern_strategy_takes_the_rule_body_over_the_shorter_shortcut():
    # Oracle: the body is planted; by agreement D(body) = 1 > D(s) = 10 / 15 over the training
    # graph (tests/kg/explain/test_patterns.py works the counts out by hand).
    rows = _shortcut_rows()
    dataset = KGDataset.from_labeled(rows, rows[:1], rows[:1], name="shortcut")
    model = DistMult(dataset.num_entities, dataset.num_relations, dim=4)
    config = ExplainerConfig(
        mode="retrain", strategy="patterns", max_length=2, hops=2, retrain=RetrainConfig(steps=2)
    )
    explainer = KGExplainer(model, config).fit(dataset)
    explanation = explainer.explain(("c0x", "gp", "c0z"))
    assert explanation.triples == (("c0x", "p", "c0y"), ("c0y", "p", "c0z"))
    assert explanation.stop_reason == "agreement"


def test_ids_of_any_integer_type_and_self_loops_by_label(toy):
    dataset, model = toy
    fitted = KGExplainer(model, ExplainerConfig(mode="retrain")).fit(dataset)
    ids = fitted.resolve(("ann", "likes", "cat"))
    assert fitted.resolve(tuple(np.int64(i) for i in ids)) == ids  # NumPy ids, e.g. from arrays
    assert fitted.resolve(torch.tensor(ids)) == ids  # a row of mapped_triples
    assert all(type(i) is int for i in fitted.resolve(torch.tensor(ids)))
    with pytest.raises(GraphDataError, match="three labels or three ids"):
        fitted.resolve((True, 0, 1))  # a bool is not an id
    with pytest.raises(GraphDataError, match="head and tail are both 'ann'"):
        fitted.explain((ids[0], ids[1], ids[0]))


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"seed": -1}, _SEED + "-1"),
        ({"seed": True}, _SEED + "True"),
        ({"seed": 2**64}, _SEED + "18446744073709551616"),
        ({"min_gain": float("inf")}, "min_gain: expected a fraction >= 0 .*got inf"),
        ({"path_relations": "owns"}, "path_relations: expected None or a non-empty tuple"),
        ({"path_relations": ()}, "path_relations: expected None or a non-empty tuple"),
        ({"retrain": RetrainConfig(seed=None)}, _SEED + "None"),
        ({"retrain": RetrainConfig(seed=2**64)}, _SEED + "18446744073709551616"),
    ],
)
def test_config_values_torch_would_reject_are_named(toy, overrides, match):
    dataset, model = toy
    with pytest.raises(GraphDataError, match=match):
        KGExplainer(model, ExplainerConfig(mode="retrain", **overrides)).fit(dataset).explain(
            ("ann", "likes", "cat")
        )


def test_the_largest_seed_check_seed_accepts_runs_end_to_end(toy):
    # check_seed's bound, 2**64 - 1 (the configs took any seed >= 0, and 2**64 died in torch):
    # the explainer's and the retrain scorer's seeds reach torch.Generator.manual_seed.
    dataset, model = toy
    largest = 2**64 - 1
    config = ExplainerConfig(
        mode="retrain", max_length=2, hops=1, seed=largest, retrain=RetrainConfig(seed=largest)
    )
    explanation = KGExplainer(model, config).fit(dataset).explain(("ann", "likes", "cat"))
    assert explanation.paths
    for make in (FaithfulConfig, EvaluatorConfig):
        make(seed=largest).validate()
        with pytest.raises(GraphDataError, match=_SEED):
            make(seed=2**64).validate()


def test_graph_bounds_and_bad_models_are_refused_before_distillation(toy, monkeypatch):
    dataset, model = toy

    def no_distillation(*args, **kwargs):
        raise AssertionError("distilled before the input was checked")

    monkeypatch.setattr("kg.explain.explainer.DistilledEvaluator.fit", no_distillation)
    # A radius of 10**12 used to size the distance-label tables: terabytes asked of the allocator.
    with pytest.raises(GraphDataError, match="hops: expected at most the graph's 7 entities"):
        KGExplainer(model, ExplainerConfig(hops=10**12)).fit(dataset)
    with pytest.raises(UnknownLabelError, match="path_relations: unknown relation .*'owns'"):
        KGExplainer(model, ExplainerConfig(path_relations=("own",))).fit(dataset)
    broken = DistMult(dataset.num_entities, dataset.num_relations, dim=4)
    with torch.no_grad():
        broken.entity.weight[2, 1] = float("nan")
    with pytest.raises(GraphDataError, match="1 NaN or infinite value.*entity.weight"):
        KGExplainer(broken).fit(dataset)  # was: "calibration: expected finite (tau, sigma_f)"


def test_a_condition_of_the_pattern_search_is_in_the_explanation(explainer, world, monkeypatch):
    # The wiring from kg.explain.patterns to the explanation: a condition atom (a local triple
    # on no chosen path) is one of the explanation's triples, counted in its fidelity mask, and
    # listed as a condition.
    from kg.explain import explainer as explainer_module
    from kg.explain.patterns import PatternChoice, pattern_search

    calls = []

    def with_condition(local, bank, **kwargs):
        choice = pattern_search(local, bank, **kwargs)
        used = {e for p in choice.chosen for e in local.paths[p]}
        spare = [e for e in range(local.num_edges) if e not in used]
        if not choice.chosen or not spare:
            return choice
        calls.append(spare[0])
        return PatternChoice(choice.chosen, choice.scores, choice.num_patterns, (spare[0],))

    monkeypatch.setattr(explainer_module, "pattern_search", with_condition)
    config = dataclasses.replace(explainer.config, strategy="patterns")
    patterns = type(explainer)(explainer.model, config).fit(
        world.dataset, evaluator=explainer.evaluator_
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the candidate cap
        for target in world.derived_triples("test"):
            found = patterns.explain(target)
            if calls:
                break
    assert calls, "no test triple had a path and a spare local triple"
    (condition,) = found.conditions
    assert condition == found.local_triples[calls[-1]]
    assert condition in found.triples
    assert all(condition not in path.triples for path in found.paths)
    on_paths = {t for path in found.paths for t in path.triples}
    assert set(found.triples) == on_paths | {condition}
    assert f"condition: ({', '.join(condition)})" in found.to_text()
