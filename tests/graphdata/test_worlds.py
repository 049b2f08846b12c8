"""Tests for graphdata.worlds: ground truth by graphdata.rules, rates, symmetry, splits, files."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from graphdata.errors import GraphDataError
from graphdata.kg_stats import kg_statistics
from graphdata.rules import RuleGraph, derived, groundings, parse_rules, read_rules
from graphdata.synthetic import family_kg
from graphdata.triples import KGDataset
from graphdata.typing import LabeledTriple
from graphdata.worlds import (
    WORLDS,
    World,
    build_world,
    world,
    world_statistics,
)
from graphdata.worlds.base import SPLITS
from tests.graphdata.world_oracles import neighbours

SIZES = {
    "academic": 80,
    "geography": 120,
    "biology": 100,
    "software": 100,
    "corporate": 120,
    "media": 120,
    "sports": 120,
    "travel": 120,
    "commerce": 120,
    "clinical": 120,
    "legal": 120,
    "energy": 120,
    "agriculture": 120,
    "maritime": 120,
    "telecom": 120,
    "aviation": 120,
    "publishing": 120,
    "banking": 120,
    "railways": 120,
    "parliament": 120,
    "construction": 120,
    "ecology": 120,
    "insurance": 120,
    "schools": 120,
    "heritage": 120,
    "wine": 120,
    "transit": 120,
}


@pytest.fixture(scope="module", params=sorted(WORLDS))
def small(request: pytest.FixtureRequest) -> World:
    return world(request.param, size=SIZES[request.param], seed=3)


def _all(w: World) -> set[LabeledTriple]:
    return {t for ts in w.dataset.splits.values() for t in ts.to_labeled_triples()}


def _train(w: World) -> set[LabeledTriple]:
    return set(w.dataset.train.to_labeled_triples())


# ----------------------------------------------------------------------------- ground truth


def test_every_held_out_target_is_grounded_in_train(small: World) -> None:
    train = RuleGraph(sorted(_train(small)))
    for split in ("valid", "test"):
        targets = small.targets(split)
        assert targets, f"{small.name} has no {split} targets"
        for target in targets:
            found = [g for rule in small.rules for g in groundings(rule, target, train)]
            assert found, (small.name, split, target)
            assert all(set(g) <= _train(small) for g in found)
            assert target not in _train(small)


def test_noise_facts_have_no_grounding_anywhere(small: World) -> None:
    everything = RuleGraph(sorted(_all(small)))
    noise = [t for s in ("train", "valid", "test") for t in small.noise_splits[s]]
    for triple in noise:
        assert not any(groundings(rule, triple, everything) for rule in small.rules)
        assert triple[1] in small.noise_rates
    held = set(small.dataset.valid.to_labeled_triples()) | set(
        small.dataset.test.to_labeled_triples()
    )
    assert held == set(small.targets("valid")) | set(small.targets("test")) | {
        t for s in ("valid", "test") for t in small.noise_splits[s]
    }


def test_world_is_closed_under_its_rules_up_to_exceptions(small: World) -> None:
    # The oracle: one more application of every rule derives nothing new but exceptions.
    everything = _all(small)
    closure = derived(small.rules, RuleGraph(sorted(everything)))
    assert closure - everything <= set(small.exceptions)
    # Every exception is grounded in the world (its body holds) but is absent from it.
    for triple in small.exceptions:
        assert triple not in everything
        assert any(groundings(rule, triple, RuleGraph(sorted(everything))) for rule in small.rules)
    # Every non-base fact is derived (grounded) or documented noise.
    base = set(small.base_triples)
    labelled = {t for s in ("train", "valid", "test") for t in small.derived_splits[s]}
    noise = {t for s in ("train", "valid", "test") for t in small.noise_splits[s]}
    assert everything - base == labelled | noise and not labelled & noise


def test_symmetric_and_inverse_relations(small: World) -> None:
    everything = _all(small)
    assert small.symmetric
    for r in small.symmetric:
        pairs = {(h, t) for h, rel, t in everything if rel == r}
        assert pairs and pairs == {(t, h) for h, t in pairs}, r
    assert small.inverse_pairs or small.name == "software"  # software: symmetric relations only
    for r, s in small.inverse_pairs:
        forward = {(h, t) for h, rel, t in everything if rel == r}
        backward = {(t, h) for h, rel, t in everything if rel == s}
        assert forward and forward == backward, (r, s)


def test_splits_are_disjoint_and_base_is_in_train(small: World) -> None:
    splits = {s: set(ts.to_labeled_triples()) for s, ts in small.dataset.splits.items()}
    assert not splits["train"] & splits["valid"]
    assert not splits["train"] & splits["test"]
    assert not splits["valid"] & splits["test"]
    assert set(small.base_triples) <= splits["train"]
    assert not set(small.exceptions) & (splits["train"] | splits["valid"] | splits["test"])


def test_world_design_rules_relations_and_lengths(small: World) -> None:
    assert 5 <= len(small.rules) <= 11  # energy: 11 rules, 22 relations (15-22 asked for it)
    assert {1, 2, 3} <= {rule.length for rule in small.rules}
    assert 10 <= small.dataset.num_relations <= 22
    # A non-chain body: some variable occurs in three or more atom positions, or an inequality
    # or a constant constrains the body.
    shapes = [
        bool(rule.inequalities)
        or any(not term.is_variable for a in rule.body for term in (a.first, a.second))
        or rule.length >= 3
        and any(sum(v in a.variables for a in (rule.head, *rule.body)) >= 3 for v in rule.variables)
        for rule in small.rules
    ]
    assert any(shapes)
    for s, h in small.shortcuts:
        assert all(
            s not in {a.relation for a in r.body} for r in small.rules if r.head.relation == h
        )


# ----------------------------------------------------------------------------- rates


def test_exception_and_noise_rates_match_on_a_large_toy_world() -> None:
    n = 3000
    base = [(f"x{i}", "p", f"y{i}") for i in range(n)]
    base += [(f"y{i}", "q", f"z{i % 50}") for i in range(n)]
    rules = "one: h(X,Y) <- p(X,Y)\ntwo: g(X,Z) <- p(X,Y), q(Y,Z)"
    types = {e: "node" for h, _, t in base for e in (h, t)}
    w = build_world(
        "toy",
        base,
        rules,
        seed=0,
        size=n,
        rng=np.random.default_rng(0),
        entity_types=types,
        exception_rates={"one": 0.3},
        noise_rates={"g": 0.2},
    )
    everything = _all(w)
    heads = {(f"x{i}", "h", f"y{i}") for i in range(n)}
    withheld = len(heads - everything) / n
    sd = math.sqrt(0.3 * 0.7 / n)
    assert abs(withheld - 0.3) < 4 * sd
    assert heads - everything == set(w.exceptions)
    g_facts = [t for t in everything if t[1] == "g"]
    noise = [t for s in ("train", "valid", "test") for t in w.noise_splits[s]]
    assert abs(len(noise) / len(g_facts) - 0.2) < 0.01  # drawn to the count, not by chance
    assert all(t[1] == "g" for t in noise)


def test_biology_exception_rates_within_binomial_tolerance() -> None:
    w = world("biology", size=400, seed=1)
    everything = RuleGraph(sorted(_all(w)))
    withheld = set(w.exceptions)
    for rule in w.rules:
        q = w.exception_rates[str(rule.name)]
        heads = derived([rule], everything)  # the world's facts ground these
        heads |= {t for t in withheld if groundings(rule, t, everything)}
        if not heads:
            continue
        rate = len(heads & withheld) / len(heads)
        sd = math.sqrt(max(q * (1 - q), 0.01) / len(heads))
        assert abs(rate - q) < 4 * sd + 1e-9, (rule.name, rate, q, len(heads))


# ----------------------------------------------------------------------------- the split rule


def test_held_out_fact_whose_body_is_held_out_goes_back_to_train() -> None:
    # t is derived only through s, itself derived; half of each is drawn for test.
    base = [(f"a{i}", "r", f"b{i}") for i in range(60)]
    rules = "s_rule: s(X,Y) <- r(Y,X)\nt_rule: t(X,Y) <- s(X,Y)"
    w = build_world(
        "chain",
        base,
        rules,
        seed=0,
        size=60,
        rng=np.random.default_rng(0),
        entity_types={e: "node" for h, _, t in base for e in (h, t)},
        valid_fraction=0.0,
        test_fraction=0.5,
    )
    train = _train(w)
    held_t = [x for x in w.targets("test") if x[1] == "t"]
    assert held_t
    for h, _, t in held_t:
        assert (h, "s", t) in train
    # The held-out s facts whose t would lose its body made their t go back to train.
    held_s = [x for x in w.targets("test") if x[1] == "s"]
    assert held_s and all((h, "t", t) in train for h, _, t in held_s)


# ----------------------------------------------------------------------------- files


def test_same_seed_same_files_and_round_trips(tmp_path: Path) -> None:
    a = world("geography", size=60, seed=7).write(tmp_path / "a")
    b = world("geography", size=60, seed=7).write(tmp_path / "b")
    c = world("geography", size=60, seed=8).write(tmp_path / "c")
    names = ["train.txt", "valid.txt", "test.txt", "rules.txt", "world.json"]
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert (a / "train.txt").read_bytes() != (c / "train.txt").read_bytes()
    w = world("geography", size=60, seed=7)
    back = KGDataset.from_folder(a)
    for split in ("train", "valid", "test"):
        assert (
            back.splits[split].to_labeled_triples() == w.dataset.splits[split].to_labeled_triples()
        )
    assert read_rules(a / "rules.txt") == w.rules
    assert not list(a.glob(".*tmp*"))  # atomic writes leave no temporary files


def test_rules_text_parses_and_round_trips(small: World) -> None:
    rules = parse_rules(small.rules_text)
    assert rules == small.rules
    assert [r.name for r in rules] == [r.name for r in small.rules]
    again = parse_rules("\n".join(str(r) for r in rules))
    assert again == rules and [r.name for r in again] == [r.name for r in rules]


# ----------------------------------------------------------------------------- statistics


def test_statistics_cardinalities_and_shortcuts() -> None:
    w = world("academic", size=120, seed=0)
    s = world_statistics(w, max_targets=10)
    assert s.cardinality["supervised"] == "1-N"
    assert s.cardinality["affiliated_with"] == "N-1"
    assert s.cardinality["coauthor"] == "N-N"
    assert s.cardinality == {r.label: r.cardinality for r in kg_statistics(w.dataset).relations}
    # knows is drawn for 60 % of coauthor pairs (plus random colleagues).
    assert 0.45 < s.shortcut_cooccurrence[("knows", "coauthor")] < 0.8
    targets = len(w.targets("valid")) + len(w.targets("test"))
    assert sum(s.targets_by_length.values()) == targets == sum(s.targets_by_rule.values())
    assert s.subgraph_targets == 10 and s.subgraph_p90 >= s.subgraph_median > 0
    geo = world_statistics(world("geography", size=120, seed=0), max_targets=5).cardinality
    assert (geo["capital_of"], geo["contains"], geo["on_continent"]) == ("1-1", "1-N", "N-1")


def test_multi_grounding_share_against_brute_force() -> None:
    w = world("biology", size=80, seed=2)
    s = world_statistics(w, max_targets=5)
    targets = list(w.targets("valid")) + list(w.targets("test"))
    multi = sum(len(w.groundings(t)) > 1 for t in targets)
    assert s.multi_grounding_share == pytest.approx(multi / len(targets))


# ----------------------------------------------------------------------------- errors


def test_bad_arguments_give_clear_errors() -> None:
    with pytest.raises(GraphDataError, match="name: expected one of .*'academic'"):
        world("business")
    with pytest.raises(GraphDataError, match=r"size: expected an int >= 20, got 5"):
        world("academic", size=5)
    with pytest.raises(GraphDataError, match="seed: expected an int >= 0 or None"):
        world("biology", seed="x")  # type: ignore[arg-type]
    with pytest.raises(GraphDataError, match="expected a sum below 1"):
        world("geography", valid_fraction=0.5, test_fraction=0.5)
    with pytest.raises(GraphDataError, match="test_fraction: expected a number in"):
        world("geography", test_fraction=-0.1)
    base = [("a", "p", "b")]
    kwargs = dict(seed=0, size=2, rng=np.random.default_rng(0), entity_types={"a": "n", "b": "n"})
    with pytest.raises(GraphDataError, match="exception_rates: 'nope' is not a rule name"):
        build_world("t", base, "one: h(X,Y) <- p(X,Y)", exception_rates={"nope": 0.1}, **kwargs)
    with pytest.raises(GraphDataError, match=r"exception_rates\['one'\]: expected a rate"):
        build_world("t", base, "one: h(X,Y) <- p(X,Y)", exception_rates={"one": 1.5}, **kwargs)
    with pytest.raises(GraphDataError, match="noise_rates: 'p' is not a head relation"):
        build_world("t", base, "one: h(X,Y) <- p(X,Y)", noise_rates={"p": 0.1}, **kwargs)
    with pytest.raises(GraphDataError, match="distinct name"):
        build_world("t", base, "h(X,Y) <- p(X,Y)", **kwargs)
    with pytest.raises(GraphDataError, match="split: expected one of"):
        world("academic", size=20).targets("dev")
    with pytest.raises(GraphDataError, match="world: expected a World, got KGDataset"):
        world_statistics(world("academic", size=20).dataset)  # type: ignore[arg-type]
    with pytest.raises(GraphDataError, match="max_targets: expected an int >= 1, got 0"):
        world_statistics(world("academic", size=20), max_targets=0)


def test_default_worlds_have_dense_local_subgraphs() -> None:
    # The issue asks for hub worlds whose 2-hop enclosing subgraphs reach 1,000-5,000 triples.
    for name in SIZES:  # every world of graphdata.worlds.WORLDS
        s = world_statistics(world(name), max_targets=40)
        assert s.subgraph_p90 >= 1000, (name, s.subgraph_p90)


# ----------------------------------------------------------------------------- software world


@pytest.fixture(scope="module")
def software() -> World:
    return world("software", seed=1)


def test_software_world_sizes_and_cardinalities(software: World) -> None:
    s = world_statistics(software, max_targets=20, seed=1)
    assert 500 <= s.num_entities <= 900 and 12 <= s.num_relations <= 20
    assert len(software.rules) == 7 and not software.inverse_pairs
    assert {"conflicts_with", "co_maintainer"} == set(software.symmetric)
    card = s.cardinality
    assert card["has_vulnerability"] == "1-N"
    assert (card["member_of"], card["written_in"], card["has_license"]) == ("N-1",) * 3
    assert all(card[r] == "N-N" for r in ("depends_on", "alerted", "relies_on_org"))
    assert set(s.targets_by_rule) == {str(r.name) for r in software.rules}
    assert s.noise_targets > 0 and s.multi_grounding_share > 0.05


def test_software_world_has_dependency_hubs(software: World) -> None:
    dependents: dict[str, int] = {}
    for _, r, t in software.base_triples:
        if r == "depends_on":
            dependents[t] = dependents.get(t, 0) + 1
    counts = sorted(dependents.values(), reverse=True)
    assert counts[0] >= 50 and counts[0] >= 10 * float(np.median(counts))


def test_software_alerts_have_two_bodies_one_through_a_derived_relation(software: World) -> None:
    graph = software.train_graph
    own, upstream = (r for r in software.rules if r.head.relation == "alerted")
    assert (own.name, upstream.name) == ("own_alert", "upstream_alert")
    targets = [t for s in ("valid", "test") for t in software.targets(s) if t[1] == "alerted"]
    only_own = only_up = both = 0
    non_base = _all(software) - set(software.base_triples)  # derived, or noise feeding a body
    for target in targets:
        a, b = list(groundings(own, target, graph)), list(groundings(upstream, target, graph))
        only_own += bool(a) and not b
        only_up += bool(b) and not a
        both += bool(a) and bool(b)
        for body in b:  # the chained body uses a derived exposed_to fact, never a base one
            assert body[1][1] == "exposed_to" and body[1] in non_base
    assert only_own and only_up and both and only_own + only_up + both == len(targets)


def test_software_length_two_shortcut_is_correlated_not_equivalent(software: World) -> None:
    # relies_on_org's body is depends_on, maintained_by, member_of (length 3); the path
    # depends_on, sponsored_by reaches many of its pairs, mostly correctly, but not all.
    deps: dict[str, set[str]] = {}
    sponsors: dict[str, set[str]] = {}
    for h, r, t in software.dataset.train.to_labeled_triples():
        if r == "depends_on":
            deps.setdefault(h, set()).add(t)
        elif r == "sponsored_by":
            sponsors.setdefault(h, set()).add(t)
    heads = {(h, t) for h, r, t in _all(software) if r == "relies_on_org"}
    path = {(p, o) for p, qs in deps.items() for q in qs for o in sponsors.get(q, ())}
    cover, precision = len(heads & path) / len(heads), len(heads & path) / len(path)
    assert 0.45 < cover < 0.75 and 0.8 < precision < 0.97, (cover, precision)


def test_software_exception_and_noise_rates(software: World) -> None:
    everything = RuleGraph(sorted(_all(software)))
    withheld = set(software.exceptions)
    for name, q in (("exposure_rule", 0.15), ("internal_rule", 0.1)):
        rule = next(r for r in software.rules if r.name == name)
        assert software.exception_rates[name] == q
        heads = derived([rule], everything) | {
            t for t in withheld if groundings(rule, t, everything)
        }
        rate = len(heads & withheld) / len(heads)
        assert abs(rate - q) < 4 * math.sqrt(q * (1 - q) / len(heads)), (name, rate, len(heads))
    noise = [t for s in SPLITS for t in software.noise_splits[s]]
    for relation in ("exposed_to", "relies_on_org"):
        facts = [t for t in _all(software) - set(software.base_triples) if t[1] == relation]
        share = sum(t[1] == relation for t in noise) / len(facts)
        assert abs(share - 0.05) < 0.01, (relation, share)


def test_software_internal_dependencies_are_triangles(software: World) -> None:
    everything = _all(software)
    maintainers: dict[str, set[str]] = {}
    for p, r, m in everything:
        if r == "maintained_by":
            maintainers.setdefault(p, set()).add(m)
    internal = [t for t in everything if t[1] == "internal_dependency"]
    assert internal
    for p, _, q in internal:
        assert (p, "depends_on", q) in everything and maintainers[p] & maintainers[q]


# academic plants no exception and geography draws none at size 80 (seed 5 or 6), so "another
# seed, other exceptions" cannot hold there; geography's files are checked above.
@pytest.mark.parametrize("name", [name for name in SIZES if name not in ("academic", "geography")])
def test_world_same_seed_same_world_and_files(name: str, tmp_path: Path) -> None:
    a, b, c = (world(name, size=80, seed=s) for s in (5, 5, 6))
    for split in SPLITS:
        assert a.dataset.splits[split].to_labeled_triples() == (
            b.dataset.splits[split].to_labeled_triples()
        )
    assert a.exceptions == b.exceptions and a.noise_splits == b.noise_splits
    assert a.base_triples == b.base_triples and a.rules_text == b.rules_text
    assert a.dataset.train.to_labeled_triples() != c.dataset.train.to_labeled_triples()
    assert a.base_triples != c.base_triples and a.exceptions != c.exceptions
    first, second = a.write(tmp_path / "a"), b.write(tmp_path / "b")
    for file in ("train.txt", "valid.txt", "test.txt", "rules.txt", "world.json"):
        assert (first / file).read_bytes() == (second / file).read_bytes(), file
    assert WORLDS[name](80, seed=5).base_triples == a.base_triples  # the generator itself


# ----------------------------------------------------------------------------- corporate world


@pytest.fixture(scope="module")
def corporate() -> World:
    return world("corporate")  # the default size and seed 0: the module docstring's numbers


def _pairs(w: World, relation: str, split: str | None = None) -> set[tuple[str, str]]:
    triples = _all(w) if split is None else w.dataset.splits[split].to_labeled_triples()
    return {(h, t) for h, r, t in triples if r == relation}


def test_corporate_world_sizes_lengths_and_cardinalities(corporate: World) -> None:
    s = world_statistics(corporate, max_targets=200)
    assert 600 <= s.num_entities <= 900 and 12 <= s.num_relations <= 20
    assert 5000 <= s.split_triples["train"] <= 9000
    assert len(corporate.rules) == 10
    lengths = [r.length for r in corporate.rules]
    assert (lengths.count(1), lengths.count(2), lengths.count(3)) == (3, 5, 2)
    assert all(s.targets_by_length[n] >= 100 for n in (1, 2, 3)), s.targets_by_length
    assert set(s.targets_by_rule) == {str(r.name) for r in corporate.rules}
    card = s.cardinality
    assert card["partner_of"] == "1-1"
    assert card["owns"] == card["chairs"] == card["director_of"] == "1-N"
    assert card["subsidiary_of"] == card["headquartered_in"] == card["in_sector"] == "N-1"
    assert all(card[r] == "N-N" for r in ("supplies", "controls", "operates_in", "exposed_to"))
    assert {"partner_of", "interlocked_with", "rival_interlock"} == set(corporate.symmetric)
    assert corporate.inverse_pairs == (("owns", "subsidiary_of"),)
    # The docstring: 2-hop enclosing subgraphs of about 2,000 triples, p90 3,500.
    assert 1000 <= s.subgraph_median <= 3000 and 3000 <= s.subgraph_p90 <= 4000, s


def test_corporate_world_has_country_and_control_hubs(corporate: World) -> None:
    neighbours: dict[str, set[str]] = {}
    for h, _, t in corporate.dataset.train.to_labeled_triples():
        neighbours.setdefault(h, set()).add(t)
        neighbours.setdefault(t, set()).add(h)
    country = max(len(v) for e, v in neighbours.items() if e.startswith("country_"))
    assert country == 219  # the docstring's number at seed 0
    controlled: dict[str, int] = {}
    for d, _ in _pairs(corporate, "controls"):
        controlled[d] = controlled.get(d, 0) + 1
    counts = sorted(controlled.values(), reverse=True)
    assert counts[0] >= 30 and counts[0] >= 10 * float(np.median(counts))


@pytest.mark.parametrize(
    ("head", "first", "second", "overlap"),
    [
        ("controls", "chair_control", "group_control", 0.08),
        ("operates_in", "export_presence", "subsidiary_presence", 0.03),
    ],
)
def test_corporate_two_bodies_ground_mostly_disjoint_facts(
    corporate: World, head: str, first: str, second: str, overlap: float
) -> None:
    # Brute force over the whole world: which facts of the head each body grounds.
    everything = _all(corporate)
    graph = RuleGraph(sorted(everything))
    a, b = (next(r for r in corporate.rules if r.name == n) for n in (first, second))
    assert [r for r in corporate.rules if r.head.relation == head] == [a, b]
    facts = [t for t in everything if t[1] == head]
    by_a = {t for t in facts if groundings(a, t, graph)}
    by_b = {t for t in facts if groundings(b, t, graph)}
    assert len(by_a) >= 100 and len(by_b) >= 100
    assert len(by_a | by_b) / len(facts) >= 0.95  # all but the noise facts
    assert round(len(by_a & by_b) / len(facts), 2) == overlap  # the docstring's shares
    # Both bodies give test targets whose only grounding is theirs.
    graph = corporate.train_graph
    targets = [t for t in corporate.targets("test") if t[1] == head]
    only_a = sum(bool(groundings(a, t, graph)) and not groundings(b, t, graph) for t in targets)
    only_b = sum(bool(groundings(b, t, graph)) and not groundings(a, t, graph) for t in targets)
    assert only_a >= 10 and only_b >= 5, (only_a, only_b)


def test_corporate_rule_chaining_through_derived_relations(corporate: World) -> None:
    base = set(corporate.base_triples)
    graph = corporate.train_graph
    rules = {r.name: r for r in corporate.rules}
    deep = 0
    for target in corporate.targets("test"):
        if target[1] == "controls":
            for body in groundings(rules["group_control"], target, graph):
                assert body[0][1] == "controls" and body[0] not in base
                deep += (body[0][0], "chairs", body[0][2]) not in base  # itself inherited
        elif target[1] == "rival_interlock":
            for body in groundings(rules["rival_interlock"], target, graph):
                assert body[0][1] == "interlocked_with" and body[0] not in base
    assert deep > 0  # some control passes through two or more ownership levels


def test_corporate_derived_shortcut_is_correlated_not_equivalent(corporate: World) -> None:
    # exposed_to's body is supplies, subsidiary_of, headquartered_in (length 3); the derived
    # sources_from (a supplier in the country) links most of its pairs, mostly correctly.
    heads, linked = _pairs(corporate, "exposed_to"), _pairs(corporate, "sources_from")
    cover, precision = len(heads & linked) / len(heads), len(heads & linked) / len(linked)
    assert (round(cover, 2), round(precision, 2)) == (0.87, 0.77)  # the docstring, seed 0
    # Brute force from the base facts: the shortcut's pairs are exactly its rule's join.
    supplies = _pairs(corporate, "supplies")
    country = dict(_pairs(corporate, "headquartered_in"))
    assert linked == {(a, country[s]) for s, a in supplies}
    # In train (what an explainer sees), a fifth of the shortcut's facts are held out.
    train_cover = len(heads & _pairs(corporate, "sources_from", "train")) / len(heads)
    assert 0.6 < train_cover < cover
    # The same pattern on other seeds, looser: hub suppliers move the numbers.
    other = world("corporate", size=300, seed=4)
    heads, linked = _pairs(other, "exposed_to"), _pairs(other, "sources_from")
    assert 0.7 < len(heads & linked) / len(heads) < 0.97
    assert 0.6 < len(heads & linked) / len(linked) < 0.95


def test_corporate_rival_interlocks_are_triangles(corporate: World) -> None:
    everything = _all(corporate)
    sector = dict(_pairs(corporate, "in_sector"))
    boards: dict[str, set[str]] = {}
    for d, c in _pairs(corporate, "director_of"):
        boards.setdefault(c, set()).add(d)
    interlocks = _pairs(corporate, "interlocked_with")
    assert interlocks == {
        (a, b) for a in boards for b in boards if a != b and boards[a] & boards[b]
    }
    rivals = _pairs(corporate, "rival_interlock")
    assert rivals and rivals == {(a, b) for a, b in interlocks if sector[a] == sector[b]}
    assert all((a, "interlocked_with", b) in everything for a, b in rivals)


def test_corporate_exception_and_noise_rates(corporate: World) -> None:
    everything = RuleGraph(sorted(_all(corporate)))
    withheld = set(corporate.exceptions)
    rules = {r.name: r for r in corporate.rules}
    chaired = derived([rules["chair_control"]], everything)  # never withheld (rate 0)
    for name, q in (("group_control", 0.1), ("owner_exposure", 0.05)):
        rule = rules[name]
        assert corporate.exception_rates[name] == q
        heads = derived([rule], everything) | {
            t for t in withheld if groundings(rule, t, everything)
        }
        heads -= chaired
        rate = len(heads & withheld) / len(heads)
        assert abs(rate - q) < 4 * math.sqrt(q * (1 - q) / len(heads)), (name, rate, len(heads))
    assert {r for _, r, _ in withheld} == {"controls", "exposed_to"}
    noise = [t for s in SPLITS for t in corporate.noise_splits[s]]
    non_base = _all(corporate) - set(corporate.base_triples)
    for relation, nu in (("exposed_to", 0.05), ("operates_in", 0.03)):
        facts = [t for t in non_base if t[1] == relation]
        share = sum(t[1] == relation for t in noise) / len(facts)
        assert abs(share - nu) < 0.01, (relation, share)
    assert {t[1] for t in noise} == {"exposed_to", "operates_in"}


# ----------------------------------------------------------------------------- media world


@pytest.fixture(scope="module")
def media() -> World:
    return world("media")  # the default size and seed 0: the module docstring's numbers


_Groundings = dict[str, dict[LabeledTriple, set[tuple[LabeledTriple, ...]]]]


def _media_groundings(facts: set[LabeledTriple]) -> _Groundings:
    """Every grounding of every media rule in ``facts``, by nested loops (no graphdata.rules).

    Rule name -> head triple -> the groundings' body triples in body order, the oracle the
    world's ground truth is checked against.
    """
    pairs: dict[str, list[tuple[str, str]]] = {}
    out: dict[tuple[str, str], set[str]] = {}
    for h, r, t in sorted(facts):
        pairs.setdefault(r, []).append((h, t))
        out.setdefault((r, h), set()).add(t)

    def tails(relation: str, head: str) -> set[str]:
        return out.get((relation, head), set())

    found: _Groundings = {}

    def add(name: str, head: LabeledTriple, *body: LabeledTriple) -> None:
        found.setdefault(name, {}).setdefault(head, set()).add(body)

    for p, f in pairs.get("directed", []):
        add("directing_inverse", (f, "directed_by", p), (p, "directed", f))
        for y in tails("born_in", p):
            for c in tails("located_in", y):
                body = ((p, "directed", f), (p, "born_in", y), (y, "located_in", c))
                add("director_country", (f, "film_country", c), *body)
    for p, a in pairs.get("released", []):
        add("solo_credit", (p, "performs_on", a), (p, "released", a))
    for p, b in pairs.get("member_of", []):
        for a in tails("released", b):
            add("band_credit", (p, "performs_on", a), (p, "member_of", b), (b, "released", a))
        for c in tails("nationality", p):
            add(
                "band_nationality",
                (b, "nationality", c),
                (p, "member_of", b),
                (p, "nationality", c),
            )
    cast: dict[str, set[str]] = {}
    for p, f in pairs.get("acted_in", []):
        cast.setdefault(f, set()).add(p)
    for f, people in cast.items():
        for p in people:
            for q in people - {p}:
                add("co_star", (p, "co_star", q), (p, "acted_in", f), (q, "acted_in", f))
    for p, y in pairs.get("born_in", []):
        for c in tails("located_in", y):
            add("birth_nationality", (p, "nationality", c), (p, "born_in", y), (y, "located_in", c))
    for f, s in pairs.get("produced_by", []):
        for y in tails("located_in", s):
            for c in tails("located_in", y):
                body = ((f, "produced_by", s), (s, "located_in", y), (y, "located_in", c))
                add("production_country", (f, "film_country", c), *body)
    for f, c in pairs.get("film_country", []):
        for lang in tails("official_language", c):
            add(
                "film_language",
                (f, "film_language", lang),
                (f, "film_country", c),
                (c, "official_language", lang),
            )
    return found


def test_media_world_sizes_lengths_and_cardinalities(media: World) -> None:
    s = world_statistics(media, max_targets=200)
    assert (s.num_entities, s.num_relations) == (773, 16)  # the docstring's numbers at seed 0
    assert s.split_triples == {"train": 4373, "valid": 246, "test": 251}
    assert len(media.rules) == 9
    lengths = [r.length for r in media.rules]
    assert (lengths.count(1), lengths.count(2), lengths.count(3)) == (2, 5, 2)
    assert s.targets_by_length == {1: 68, 2: 372, 3: 48} and s.noise_targets == 9
    assert set(s.targets_by_rule) == {str(r.name) for r in media.rules}
    card = s.cardinality
    assert card["directed"] == card["released"] == "1-N"
    assert all(card[r] == "N-N" for r in ("acted_in", "co_star", "performs_on"))
    n_to_1 = ("born_in", "located_in", "produced_by", "directed_by", "nationality", "film_country")
    assert all(card[r] == "N-1" for r in n_to_1)
    assert media.symmetric == ("co_star",)
    assert media.inverse_pairs == (("directed", "directed_by"),)
    assert media.shortcuts == (("shot_in", "film_country"),)
    # The issue asks for 2-hop local subgraphs of 1,000-5,000 triples (docstring: 1,480, p90 2,346).
    assert 1000 <= s.subgraph_median <= 2000 and s.subgraph_p90 <= 5000, s


@pytest.mark.parametrize(("size", "seed"), [(320, 0), (150, 4)])
def test_media_ground_truth_matches_a_brute_force_join(size: int, seed: int) -> None:
    w = world("media", size=size, seed=seed)
    everything, base = _all(w), set(w.base_triples)
    found = _media_groundings(everything)
    assert set(found) == {str(r.name) for r in w.rules}
    heads = {t for by_head in found.values() for t in by_head}
    withheld = set(w.exceptions)
    # Closed up to exceptions: a head of the world's facts is a fact or an exception.
    assert heads - everything == withheld
    derived_facts = {t for s in SPLITS for t in w.derived_splits[s]}
    noise = {t for s in SPLITS for t in w.noise_splits[s]}
    assert derived_facts == (everything - base) & heads
    assert noise == (everything - base) - heads
    # The explained targets: their groundings in train are exactly the brute-force ones.
    in_train = _media_groundings(_train(w))
    graph = w.train_graph
    for target in w.targets("valid") + w.targets("test"):
        for rule in w.rules:
            expected = in_train[str(rule.name)].get(target, set())
            assert set(groundings(rule, target, graph)) == expected, (rule.name, target)


def test_media_world_has_country_language_and_star_hubs(media: World) -> None:
    train = media.dataset.train.to_labeled_triples()
    near = neighbours(train)
    degree = {e: len(v) for e, v in near.items()}
    by_type = {
        kind: sorted((d for e, d in degree.items() if e.startswith(kind)), reverse=True)
        for kind in ("country", "language", "person")
    }
    # The docstring's numbers at seed 0: the largest country, English, the busiest actor.
    assert (by_type["country"][0], by_type["language"][0], by_type["person"][0]) == (260, 146, 188)
    assert by_type["person"][0] >= 10 * float(np.median(by_type["person"]))

    # 2-hop enclosing subgraphs by breadth-first search: nodes within two hops (directions
    # ignored) of both ends, the training triples among them; the statistics' seeded sample.
    def ball(e: str) -> set[str]:
        one = near.get(e, set()) | {e}
        return one.union(*(near[x] for x in one if x in near))

    test = media.targets("test")
    order = np.random.default_rng(0).permutation(len(test))[:200]
    sizes = []
    for i in sorted(order.tolist()):
        h, _, t = test[i]
        nodes = ball(h) & ball(t)
        sizes.append(sum(x in nodes and y in nodes for x, _, y in train))
    s = world_statistics(media, max_targets=200)
    assert float(np.median(sizes)) == s.subgraph_median == 1480
    # Targets touching the largest country sit in its hub: larger subgraphs than the rest.
    hub = max((e for e in degree if e.startswith("country")), key=degree.__getitem__)
    at_hub = [n for i, n in zip(sorted(order.tolist()), sizes) if hub in test[i]]
    assert len(at_hub) >= 10 and 1000 <= float(np.median(at_hub)) <= 5000


@pytest.mark.parametrize(
    ("head", "first", "second", "overlap"),
    [
        ("performs_on", "solo_credit", "band_credit", 0.02),
        ("nationality", "birth_nationality", "band_nationality", 0.0),
        ("film_country", "production_country", "director_country", 0.65),
    ],
)
def test_media_heads_with_two_bodies(
    media: World, head: str, first: str, second: str, overlap: float
) -> None:
    # Brute force over the whole world: which facts of the head each body grounds.
    everything = _all(media)
    found = _media_groundings(everything)
    assert [str(r.name) for r in media.rules if r.head.relation == head] == [first, second]
    facts = {t for t in everything if t[1] == head}
    by_a, by_b = set(found[first]) & facts, set(found[second]) & facts
    assert len(by_a) >= 20 and len(by_b) >= 20
    noise = {t for s in SPLITS for t in media.noise_splits[s]}
    assert by_a | by_b == facts - noise
    assert round(len(by_a & by_b) / len(facts), 2) == overlap  # the docstring's shares
    # Both bodies give held-out targets whose only grounding in train is theirs.
    in_train = _media_groundings(_train(media))
    targets = [t for s in ("valid", "test") for t in media.targets(s) if t[1] == head]
    only_a = sum(t in in_train[first] and t not in in_train[second] for t in targets)
    only_b = sum(t in in_train[second] and t not in in_train[first] for t in targets)
    assert only_a >= 5 and only_b >= 5, (only_a, only_b)


def test_media_co_star_is_a_symmetric_star(media: World) -> None:
    everything = _all(media)
    co_star = _pairs(media, "co_star")
    assert co_star == {(q, p) for p, q in co_star} and all(p != q for p, q in co_star)
    films: dict[str, set[str]] = {}
    for p, f in _pairs(media, "acted_in"):
        films.setdefault(p, set()).add(f)
    assert co_star == {(p, q) for p in films for q in films if p != q and films[p] & films[q]}
    assert all((f, "directed_by", p) in everything for p, f in _pairs(media, "directed"))


def test_media_shortcut_is_correlated_not_equivalent(media: World) -> None:
    # film_country's bodies go through the studio or the director; where a film was shot is
    # in neither, but a film is mostly shot at home (world_statistics' two shares).
    heads, shot = _pairs(media, "film_country"), _pairs(media, "shot_in", "train")
    cover, precision = len(heads & shot) / len(heads), len(heads & shot) / len(shot)
    assert (round(cover, 2), round(precision, 2)) == (0.78, 0.70)  # the docstring, seed 0
    s = world_statistics(media, max_targets=1)
    assert s.shortcut_cooccurrence[("shot_in", "film_country")] == pytest.approx(cover)
    other = world("media", size=200, seed=5)
    heads, shot = _pairs(other, "film_country"), _pairs(other, "shot_in", "train")
    assert 0.6 < len(heads & shot) / len(heads) < 0.9
    assert 0.55 < len(heads & shot) / len(shot) < 0.85


def test_media_exception_and_noise_rates() -> None:
    # Pooled over three seeds at the default size, each rate within four binomial sd.
    withheld_n = {"birth_nationality": [0, 0], "director_country": [0, 0]}
    noise_n = {"film_language": [0, 0], "nationality": [0, 0]}
    for seed in (0, 1, 2):
        w = world("media", seed=seed)
        everything = _all(w)
        found = _media_groundings(everything)
        withheld = set(w.exceptions)
        assert {r for _, r, _ in withheld} == {"nationality", "film_country"}
        # director_country's rate applies to the facts production_country does not derive.
        own = {
            "birth_nationality": set(found["birth_nationality"]),
            "director_country": set(found["director_country"]) - set(found["production_country"]),
        }
        for name, heads in own.items():
            withheld_n[name][0] += len(heads & withheld)
            withheld_n[name][1] += len(heads)
        noise = [t for s in SPLITS for t in w.noise_splits[s]]
        assert {t[1] for t in noise} == set(noise_n)
        non_base = everything - set(w.base_triples)
        for relation in noise_n:
            noise_n[relation][0] += sum(t[1] == relation for t in noise)
            noise_n[relation][1] += sum(t[1] == relation for t in non_base)
    for name, q in (("birth_nationality", 0.1), ("director_country", 0.3)):
        k, n = withheld_n[name]
        assert abs(k / n - q) < 4 * math.sqrt(q * (1 - q) / n), (name, k, n)
    for relation, nu in (("film_language", 0.05), ("nationality", 0.04)):
        k, n = noise_n[relation]
        assert abs(k / n - nu) < 0.01, (relation, k, n)  # drawn to the count, not by chance


# ----------------------------------------------------------------------------- sports world


@pytest.fixture(scope="module")
def sports() -> World:
    return world("sports")  # the default size and seed 0: the module docstring's numbers


def _sports_groundings(facts: set[LabeledTriple]) -> _Groundings:
    """Every grounding of every sports rule in ``facts``, by nested loops (no graphdata.rules)."""
    pairs: dict[str, list[tuple[str, str]]] = {}
    out: dict[tuple[str, str], set[str]] = {}
    for h, r, t in sorted(facts):
        pairs.setdefault(r, []).append((h, t))
        out.setdefault((r, h), set()).add(t)

    def tails(relation: str, head: str) -> set[str]:
        return out.get((relation, head), set())

    found: _Groundings = {}

    def add(name: str, head: LabeledTriple, *body: LabeledTriple) -> None:
        found.setdefault(name, {}).setdefault(head, set()).add(body)

    squads: dict[str, set[str]] = {}
    for p, t in pairs.get("plays_for", []):
        squads.setdefault(t, set()).add(p)
        add("squad_inverse", (t, "has_player", p), (p, "plays_for", t))
        for g in tails("in_league", t):
            for k in tails("league_country", g):
                body = ((p, "plays_for", t), (t, "in_league", g), (g, "league_country", k))
                add("career_country", (p, "plays_in", k), *body)
    for p, t in pairs.get("captain_of", []):
        add("captain_member", (p, "plays_for", t), (p, "captain_of", t))
    for t, squad in squads.items():
        for p in squad:
            for q in squad - {p}:
                add("teammate", (p, "teammate", q), (p, "plays_for", t), (q, "plays_for", t))
    for p, y in pairs.get("born_in", []):
        for k in tails("located_in", y):
            add("birth_eligibility", (p, "represents", k), (p, "born_in", y), (y, "located_in", k))
    for p, t in pairs.get("youth_club", []):
        for k in tails("club_country", t):
            body = ((p, "youth_club", t), (t, "club_country", k))
            add("academy_eligibility", (p, "represents", k), *body)
    for t, s in pairs.get("plays_at", []):
        for y in tails("located_in", s):
            for k in tails("located_in", y):
                body = ((t, "plays_at", s), (s, "located_in", y), (y, "located_in", k))
                add("club_country", (t, "club_country", k), *body)
    for p, a in pairs.get("won_award", []):
        for g in tails("award_of", a):
            for k in tails("league_country", g):
                body = ((p, "won_award", a), (a, "award_of", g), (g, "league_country", k))
                add("award_country", (p, "plays_in", k), *body)
    return found


def test_sports_world_sizes_lengths_and_cardinalities(sports: World) -> None:
    s = world_statistics(sports, max_targets=200)
    assert (s.num_entities, s.num_relations) == (740, 16)  # the docstring's numbers at seed 0
    assert s.split_triples == {"train": 6994, "valid": 630, "test": 632}
    lengths = [r.length for r in sports.rules]
    assert (lengths.count(1), lengths.count(2), lengths.count(3)) == (2, 3, 3)
    assert s.targets_by_length == {1: 120, 2: 1021, 3: 111} and s.noise_targets == 10
    assert s.targets_by_rule == {
        "teammate": 927,
        "squad_inverse": 106,
        "birth_eligibility": 84,
        "career_country": 84,
        "club_country": 16,
        "captain_member": 14,
        "award_country": 11,
        "academy_eligibility": 10,
    }
    card = s.cardinality
    assert (card["manages"], card["won_award"], card["teammate"]) == ("1-N", "1-N", "N-N")
    assert card["has_player"] == "1-N" and card["plays_for"] == "N-1"
    assert all(card[r] == "N-1" for r in ("born_in", "youth_club", "in_league", "represents"))
    assert sports.symmetric == ("teammate",)
    assert sports.inverse_pairs == (("plays_for", "has_player"),)
    assert sports.shortcuts == (("represents", "plays_in"),)
    assert s.subgraph_median == 1408.5 and round(s.subgraph_p90) == 2094  # the issue: 1-5k


@pytest.mark.parametrize(("size", "seed"), [(400, 0), (150, 4)])
def test_sports_ground_truth_matches_a_brute_force_join(size: int, seed: int) -> None:
    w = world("sports", size=size, seed=seed)
    everything, base = _all(w), set(w.base_triples)
    found = _sports_groundings(everything)
    assert set(found) == {str(r.name) for r in w.rules}
    heads = {t for by_head in found.values() for t in by_head}
    assert heads - everything == set(w.exceptions)  # closed up to the exceptions
    assert {t for s in SPLITS for t in w.derived_splits[s]} == (everything - base) & heads
    assert {t for s in SPLITS for t in w.noise_splits[s]} == (everything - base) - heads
    in_train, graph = _sports_groundings(_train(w)), w.train_graph
    for target in w.targets("valid") + w.targets("test"):
        for rule in w.rules:
            expected = in_train[str(rule.name)].get(target, set())
            assert set(groundings(rule, target, graph)) == expected, (rule.name, target)


@pytest.mark.parametrize(
    ("head", "first", "second", "overlap"),
    [
        ("represents", "birth_eligibility", "academy_eligibility", 0.36),
        ("plays_in", "career_country", "award_country", 0.1),
    ],
)
def test_sports_heads_with_two_bodies(
    sports: World, head: str, first: str, second: str, overlap: float
) -> None:
    everything = _all(sports)
    found = _sports_groundings(everything)
    assert [str(r.name) for r in sports.rules if r.head.relation == head] == [first, second]
    facts = {t for t in everything if t[1] == head}
    by_a, by_b = set(found[first]) & facts, set(found[second]) & facts
    noise = {t for s in SPLITS for t in sports.noise_splits[s]}
    assert by_a | by_b == facts - noise
    assert round(len(by_a & by_b) / len(facts), 2) == overlap  # the docstring's shares
    in_train = _sports_groundings(_train(sports))
    targets = [t for s in ("valid", "test") for t in sports.targets(s) if t[1] == head]
    only_a = sum(t in in_train[first] and t not in in_train[second] for t in targets)
    only_b = sum(t in in_train[second] and t not in in_train[first] for t in targets)
    assert only_a >= 5 and only_b >= 5, (only_a, only_b)


def test_sports_teammate_is_symmetric_and_has_player_inverse(sports: World) -> None:
    teammate, plays_for = _pairs(sports, "teammate"), _pairs(sports, "plays_for")
    assert teammate == {(q, p) for p, q in teammate} and all(p != q for p, q in teammate)
    assert _pairs(sports, "has_player") == {(t, p) for p, t in plays_for}
    # Captains' memberships come from captain_member alone (none is a base fact).
    captains = _pairs(sports, "captain_of")
    assert captains <= plays_for
    assert not {(p, "plays_for", t) for p, t in captains} & set(sports.base_triples)


def test_sports_shortcut_is_correlated_not_equivalent(sports: World) -> None:
    # A player mostly plays in the country they represent, but neither plays_in body uses it.
    heads, rep = _pairs(sports, "plays_in"), _pairs(sports, "represents", "train")
    cover, precision = len(heads & rep) / len(heads), len(heads & rep) / len(rep)
    assert (round(cover, 2), round(precision, 2)) == (0.5, 0.66)  # the docstring, seed 0
    s = world_statistics(sports, max_targets=1)
    assert s.shortcut_cooccurrence[("represents", "plays_in")] == pytest.approx(cover)


def test_sports_exception_and_noise_rates() -> None:
    # Pooled over three seeds at the default size, each rate within four binomial sd.
    withheld_n = {"birth_eligibility": [0, 0], "academy_eligibility": [0, 0]}
    noise_n = {"represents": [0, 0], "plays_in": [0, 0]}
    for seed in (0, 1, 2):
        w = world("sports", seed=seed)
        everything = _all(w)
        found, withheld = _sports_groundings(everything), set(w.exceptions)
        assert {r for _, r, _ in withheld} == {"represents"}
        birth = set(found["birth_eligibility"])  # derived first, so it sets the shared rate
        own = {
            "birth_eligibility": birth,
            "academy_eligibility": set(found["academy_eligibility"]) - birth,
        }
        for name, heads in own.items():
            withheld_n[name][0] += len(heads & withheld)
            withheld_n[name][1] += len(heads)
        noise = [t for s in SPLITS for t in w.noise_splits[s]]
        non_base = everything - set(w.base_triples)
        for relation in noise_n:
            noise_n[relation][0] += sum(t[1] == relation for t in noise)
            noise_n[relation][1] += sum(t[1] == relation for t in non_base)
    for name, q in (("birth_eligibility", 0.1), ("academy_eligibility", 0.3)):
        k, n = withheld_n[name]
        assert abs(k / n - q) < 4 * math.sqrt(q * (1 - q) / n), (name, k, n)
    for relation, nu in (("represents", 0.04), ("plays_in", 0.05)):
        k, n = noise_n[relation]
        assert abs(k / n - nu) < 0.01, (relation, k, n)  # drawn to the count, not by chance


# ----------------------------------------------------------------------------- travel world


@pytest.fixture(scope="module")
def travel() -> World:
    return world("travel")  # the default size and seed 0: the module docstring's numbers


def _travel_groundings(facts: set[LabeledTriple]) -> _Groundings:
    """Every grounding of every travel rule in ``facts``, by nested loops (no graphdata.rules)."""
    pairs: dict[str, list[tuple[str, str]]] = {}
    out: dict[tuple[str, str], set[str]] = {}
    for h, r, t in sorted(facts):
        pairs.setdefault(r, []).append((h, t))
        out.setdefault((r, h), set()).add(t)

    def tails(relation: str, head: str) -> set[str]:
        return out.get((relation, head), set())

    found: _Groundings = {}

    def add(name: str, head: LabeledTriple, *body: LabeledTriple) -> None:
        found.setdefault(name, {}).setdefault(head, set()).add(body)

    for a, p in pairs.get("has_hub", []):
        add("hub_inverse", (p, "hub_of", a), (a, "has_hub", p))
        add("hub_service", (a, "serves", p), (a, "has_hub", p))
        for q in tails("serves", a):
            if q != p:
                add("hub_spoke", (p, "route", q), (a, "has_hub", p), (a, "serves", q))
        for c in tails("located_in", p):
            for k in tails("city_country", c):
                body = ((a, "has_hub", p), (p, "located_in", c), (c, "city_country", k))
                add("airline_country", (a, "based_in", k), *body)
    for p, q in pairs.get("route", []):
        add("return_route", (q, "route", p), (p, "route", q))
    for c, r in pairs.get("in_region", []):
        for k in tails("region_of", r):
            add("city_country", (c, "city_country", k), (c, "in_region", r), (r, "region_of", k))
    for x, c in pairs.get("born_in", []):
        for k in tails("city_country", c):
            body = ((x, "born_in", c), (c, "city_country", k))
            add("pilot_nationality", (x, "nationality", k), *body)
    members: dict[str, set[str]] = {}
    for a, group in pairs.get("member_of", []):
        members.setdefault(group, set()).add(a)
    for group, airlines in members.items():
        for a in airlines:
            for b in airlines - {a}:
                body = ((a, "member_of", group), (b, "member_of", group))
                add("alliance_partner", (a, "alliance_partner", b), *body)
    for a, b in pairs.get("codeshare", []):
        for p in tails("has_hub", b):
            if p in tails("serves", a):
                body = ((a, "codeshare", b), (b, "has_hub", p), (a, "serves", p))
                add("feeder", (a, "feeds", b), *body)
    return found


def test_travel_world_sizes_lengths_and_cardinalities(travel: World) -> None:
    s = world_statistics(travel, max_targets=200)
    assert (s.num_entities, s.num_relations) == (881, 17)  # the docstring's numbers at seed 0
    kinds = sorted(set(travel.entity_types.values()))
    assert kinds == [
        "aircraft",
        "airline",
        "airport",
        "alliance",
        "city",
        "country",
        "pilot",
        "region",
    ]
    assert s.split_triples == {"train": 4425, "valid": 218, "test": 221}
    lengths = [r.length for r in travel.rules]
    assert (lengths.count(1), lengths.count(2), lengths.count(3)) == (3, 4, 2)
    assert s.targets_by_length == {1: 270, 2: 147, 3: 22} and s.noise_targets == 0
    assert s.targets_by_rule == {
        "return_route": 222,
        "alliance_partner": 62,
        "pilot_nationality": 46,
        "city_country": 24,
        "hub_inverse": 24,
        "hub_service": 24,
        "hub_spoke": 15,
        "airline_country": 12,
        "feeder": 10,
    }
    card = s.cardinality
    assert (card["has_hub"], card["hub_of"], card["feeds"]) == ("N-1", "1-N", "1-N")
    n_to_1 = ("located_in", "in_region", "region_of", "city_country", "member_of", "works_for")
    assert all(card[r] == "N-1" for r in (*n_to_1, "born_in", "nationality", "based_in"))
    n_to_n = ("route", "serves", "operates", "codeshare", "alliance_partner")
    assert all(card[r] == "N-N" for r in n_to_n)
    assert travel.symmetric == ("alliance_partner", "codeshare")
    assert travel.inverse_pairs == (("has_hub", "hub_of"),)
    assert travel.shortcuts == (("codeshare", "alliance_partner"),)


@pytest.mark.parametrize(("size", "seed"), [(240, 0), (120, 4)])
def test_travel_ground_truth_matches_a_brute_force_join(size: int, seed: int) -> None:
    w = world("travel", size=size, seed=seed)
    everything, base = _all(w), set(w.base_triples)
    found = _travel_groundings(everything)
    assert set(found) == {str(r.name) for r in w.rules}
    heads = {t for by_head in found.values() for t in by_head}
    assert heads - everything == set(w.exceptions)  # closed up to the exceptions
    assert {t for s in SPLITS for t in w.derived_splits[s]} == (everything - base) & heads
    assert {t for s in SPLITS for t in w.noise_splits[s]} == (everything - base) - heads
    in_train, graph = _travel_groundings(_train(w)), w.train_graph
    for target in w.targets("valid") + w.targets("test"):
        assert any(target in in_train[name] for name in in_train), target  # split guarantee
        for rule in w.rules:
            expected = in_train[str(rule.name)].get(target, set())
            assert set(groundings(rule, target, graph)) == expected, (rule.name, target)


def test_travel_split_guarantee_and_base_facts(travel: World) -> None:
    splits = {s: set(travel.dataset.splits[s].to_labeled_triples()) for s in SPLITS}
    assert set(travel.base_triples) <= splits["train"]
    assert not (splits["train"] & splits["valid"] or splits["train"] & splits["test"])
    assert not splits["valid"] & splits["test"]
    # Per relation, round(.1 n) of its non-base facts were drawn for valid and for test; the
    # split guarantee only moves facts back to train, so each held-out share is at most that.
    non_base = _all(travel) - set(travel.base_triples)
    for relation in {r for _, r, _ in non_base}:
        n = sum(t[1] == relation for t in non_base)
        for split in ("valid", "test"):
            held = sum(t[1] == relation for t in splits[split])
            assert held <= math.floor(0.1 * n + 0.5), (relation, split)
    # No derived relation is a base relation but route and serves (point-to-point routes and
    # the non-hub airports an airline serves are drawn).
    base_relations = {r for _, r, _ in travel.base_triples}
    heads = {r.head.relation for r in travel.rules}
    assert base_relations & heads == {"route", "serves"}


def test_travel_route_has_a_hub_spoke_and_a_return_body(travel: World) -> None:
    everything = _all(travel)
    found = _travel_groundings(everything)
    assert [str(r.name) for r in travel.rules if r.head.relation == "route"] == [
        "hub_spoke",
        "return_route",
    ]
    facts = {t for t in everything if t[1] == "route"}
    base = {t for t in travel.base_triples if t[1] == "route"}
    spoke, back = set(found["hub_spoke"]) & facts, set(found["return_route"]) & facts
    assert spoke | back | base == facts and len(base) == 240 // 2
    # The docstring's shares at seed 0: both bodies (a hub-and-spoke route flown back), the
    # hub-and-spoke body only (its return withheld), the return body only (spoke to hub, and
    # the point-to-point routes).
    shares = [round(len(x) / len(facts), 2) for x in (spoke & back, spoke - back, back - spoke)]
    assert shares == [0.43, 0.05, 0.51]
    # Neither body: point-to-point base routes whose return was withheld (.01).
    neither = facts - spoke - back
    assert neither <= base and len(neither) == 10
    assert not {(q, r, p) for p, r, q in neither} & facts
    # Both bodies give held-out targets whose only grounding in train is theirs.
    in_train = _travel_groundings(_train(travel))
    targets = [t for s in ("valid", "test") for t in travel.targets(s) if t[1] == "route"]
    only_spoke = sum(
        t in in_train["hub_spoke"] and t not in in_train["return_route"] for t in targets
    )
    only_back = sum(
        t in in_train["return_route"] and t not in in_train["hub_spoke"] for t in targets
    )
    assert (only_spoke, only_back) == (15, 116)


def test_travel_symmetry_inverses_and_mostly_reciprocated_routes(travel: World) -> None:
    for relation in ("alliance_partner", "codeshare"):
        pairs = _pairs(travel, relation)
        assert pairs == {(b, a) for a, b in pairs} and all(a != b for a, b in pairs)
    groups: dict[str, set[str]] = {}
    for a, group in _pairs(travel, "member_of"):
        groups.setdefault(group, set()).add(a)
    clique = {(a, b) for m in groups.values() for a in m for b in m if a != b}
    assert _pairs(travel, "alliance_partner") == clique
    hubs = _pairs(travel, "has_hub")
    assert _pairs(travel, "hub_of") == {(p, a) for a, p in hubs}
    assert hubs <= _pairs(travel, "serves")
    assert not {(a, "serves", p) for a, p in hubs} & set(travel.base_triples)
    # route is directed: mostly, not always, flown both ways (one-way routes are exceptions).
    routes = _pairs(travel, "route")
    back = sum((q, p) in routes for p, q in routes) / len(routes)
    assert round(back, 2) == 0.94 and all(p != q for p, q in routes)


def test_travel_feeder_is_a_triangle(travel: World) -> None:
    everything = _all(travel)
    noise = {t for s in SPLITS for t in travel.noise_splits[s]}
    feeds = {t for t in everything if t[1] == "feeds"} - noise
    assert len(feeds) >= 30
    hubs, served = _pairs(travel, "has_hub"), _pairs(travel, "serves")
    for a, _, b in feeds:
        assert (a, "codeshare", b) in everything
        assert any((a, p) in served for x, p in hubs if x == b), (a, b)  # b's hub, a serves


def test_travel_world_has_country_airport_and_airline_hubs(travel: World) -> None:
    train = travel.dataset.train.to_labeled_triples()
    near = neighbours(train)
    degree = {e: len(v) for e, v in near.items()}
    top = {
        kind: max(d for e, d in degree.items() if travel.entity_types[e] == kind)
        for kind in ("country", "airport", "airline", "alliance")
    }
    # The docstring's numbers at seed 0: distinct training neighbours of the largest hubs.
    assert top == {"country": 85, "airport": 57, "airline": 59, "alliance": 13}
    airports = [d for e, d in degree.items() if travel.entity_types[e] == "airport"]
    assert top["airport"] >= 8 * float(np.median(airports))

    # 2-hop enclosing subgraphs by breadth-first search: nodes within two hops (directions
    # ignored) of both ends, the training triples among them; the statistics' seeded sample.
    def ball(e: str) -> set[str]:
        one = near.get(e, set()) | {e}
        return one.union(*(near[x] for x in one if x in near))

    test = travel.targets("test")
    order = sorted(np.random.default_rng(0).permutation(len(test))[:200].tolist())
    sizes = []
    for i in order:
        h, _, t = test[i]
        nodes = ball(h) & ball(t)
        sizes.append(sum(x in nodes and y in nodes for x, _, y in train))
    s = world_statistics(travel, max_targets=200)
    assert float(np.median(sizes)) == s.subgraph_median == 1213  # the issue: 1,000-5,000
    assert 1000 <= s.subgraph_median and s.subgraph_p90 <= 5000


def test_travel_shortcut_is_correlated_not_equivalent(travel: World) -> None:
    # Codeshares are mostly agreed inside an alliance, but alliance_partner's body is membership.
    heads, code = _pairs(travel, "alliance_partner"), _pairs(travel, "codeshare", "train")
    cover, precision = len(heads & code) / len(heads), len(heads & code) / len(code)
    assert (round(cover, 2), round(precision, 2)) == (0.54, 0.57)  # the docstring, seed 0
    s = world_statistics(travel, max_targets=1)
    assert s.shortcut_cooccurrence[("codeshare", "alliance_partner")] == pytest.approx(cover)
    assert s.shortcut_precision[("codeshare", "alliance_partner")] == pytest.approx(precision)
    other = world("travel", size=200, seed=5)
    heads, code = _pairs(other, "alliance_partner"), _pairs(other, "codeshare", "train")
    assert 0.35 < len(heads & code) / len(heads) < 0.75
    assert 0.4 < len(heads & code) / len(code) < 0.85


def test_travel_exception_and_noise_rates() -> None:
    # Pooled over three seeds at the default size, each exception rate within four binomial
    # sd; noise is drawn to the count (base.py step 2), so the counts are checked exactly.
    rates = {
        "hub_spoke": 0.08,
        "return_route": 0.1,
        "airline_country": 0.1,
        "pilot_nationality": 0.1,
        "feeder": 0.2,
    }
    withheld_n = {name: [0, 0] for name in rates}
    for seed in (0, 1, 2):
        w = world("travel", seed=seed)
        everything = _all(w)
        found, withheld = _travel_groundings(everything), set(w.exceptions)
        assert {r for _, r, _ in withheld} == {"route", "based_in", "nationality", "feeds"}
        for name in ("hub_inverse", "hub_service", "city_country", "alliance_partner"):
            assert not set(found[name]) & withheld, name
        spoke = set(found["hub_spoke"])  # the smaller rate wins where both derive a route
        own = {name: set(found[name]) for name in rates}
        own["return_route"] -= spoke
        for name, heads in own.items():
            withheld_n[name][0] += len(heads & withheld)
            withheld_n[name][1] += len(heads)
        noise = [t for s in SPLITS for t in w.noise_splits[s]]
        assert {t[1] for t in noise} == set(w.noise_rates) == {"based_in", "nationality", "feeds"}
        non_base = everything - set(w.base_triples)
        for relation, nu in w.noise_rates.items():
            k = sum(t[1] == relation for t in noise)
            n = sum(t[1] == relation for t in non_base)
            assert k == round(nu * (n - k) / (1 - nu)), (seed, relation, k, n)
    for name, q in rates.items():
        k, n = withheld_n[name]
        assert abs(k / n - q) < 4 * math.sqrt(q * (1 - q) / n), (name, k, n)


def test_negative_seeds_are_refused_by_name() -> None:
    # NumPy's default_rng refuses negative seeds: world, family_kg raised its bare
    # "ValueError: expected non-negative integer" from numpy/random/bit_generator.pyx.
    with pytest.raises(GraphDataError, match=r"seed: expected an int >= 0 or None, got -1"):
        world("academic", size=60, seed=-1)
    with pytest.raises(GraphDataError, match=r"seed: expected an int >= 0 or None, got -1"):
        family_kg(30, num_generations=3, seed=-1)


# ------------------------------------------------------------- sizes above the memory


@pytest.mark.parametrize("name", sorted(WORLDS))
def test_a_size_that_cannot_fit_in_memory_is_refused_before_drawing(name) -> None:
    # 2**63 primary entities at >= 8 KiB each fit no machine: refused at once (it used to build
    # 2**63 labels in a Python list), naming the argument, the bound and the fix.
    with pytest.raises(GraphDataError, match=r"size: expected an int in \[\d+, [\d,]+\], got "):
        WORLDS[name](2**63)


def test_the_size_bound_is_the_memory_over_the_bytes_per_entity(monkeypatch) -> None:
    # Oracle: with 50 * WORLD_BYTES_PER_ENTITY bytes of memory the bound is exactly 50.
    from graphdata import checks
    from graphdata.worlds.base import WORLD_BYTES_PER_ENTITY

    monkeypatch.setattr(checks, "physical_memory", lambda: 50 * WORLD_BYTES_PER_ENTITY + 1)
    assert world("academic", size=50).size == 50
    with pytest.raises(GraphDataError, match=r"size: expected an int in \[20, 50\], got 51 .*"):
        world("academic", size=51)
    monkeypatch.setattr(checks, "physical_memory", lambda: None)  # unknown: int64 ids bound
    with pytest.raises(GraphDataError, match=r"got 9223372036854775808 \(the largest int64 id"):
        world("academic", size=2**63)
