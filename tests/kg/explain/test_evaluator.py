import math
import struct

import networkx as nx
import pytest
import torch
from torch_geometric.nn import RGCNConv

from graphdata.errors import GraphDataError, NotFittedError
from graphdata.synthetic import family_kg
from kg.distmult import DistMult
from kg.explain._batch import GraphBatch, distances
from kg.explain._teacher import triple_representation
from kg.explain.evaluator import DistilledEvaluator, EvaluatorConfig, distillation_targets
from kg.explain.evaluator.rgcn import RelationalConv
from kg.explain.evaluator.sampling import draw_negatives
from kg.rotate import RotatE
from kg.transe import TransE
from tests.kg.explain.conftest import unpruned


def test_relational_conv_equals_pyg_rgcnconv_mean():
    torch.manual_seed(0)
    x = torch.randn(7, 5)
    edge_index = torch.randint(0, 7, (2, 20))
    edge_type = torch.randint(0, 3, (20,))
    ours = RelationalConv(5, 4, num_relations=3, num_bases=2)
    pyg = RGCNConv(5, 4, num_relations=3, num_bases=2, aggr="mean")
    with torch.no_grad():
        pyg.weight.copy_(ours.basis)
        pyg.comp.copy_(ours.comp)
        pyg.root.copy_(ours.root)
        pyg.bias.copy_(torch.randn(4))
        ours.bias.copy_(pyg.bias)
    torch.testing.assert_close(ours(x, edge_index, edge_type), pyg(x, edge_index, edge_type))


@pytest.mark.parametrize("e", [40, 20])  # 9 x 11 slots per relation <= 40 x 3 per basis; > 20 x 3
def test_relational_conv_weighted_equals_its_equation(e):
    # x_i' = Theta_0 x_i + b + sum_r (1 / c_ir) sum_{j in N_r(i)} w_ji Theta_r x_j, with
    # Theta_r = sum_k a_rk V_k and c_ir = max(1, sum_j w_ji), summed edge by edge (the oracle);
    # many relations over few bases, fractional weights, the weights' gradient, and both ways
    # the layer aggregates (per relation or per basis, whichever has fewer slots).
    torch.manual_seed(3)
    n, rels = 9, 11
    x = torch.randn(n, 5, dtype=torch.float64)
    edge_index = torch.randint(0, n, (2, e))
    edge_type = torch.randint(0, rels, (e,))
    weight = torch.rand(e, dtype=torch.float64, requires_grad=True)
    conv = RelationalConv(5, 4, num_relations=rels, num_bases=3).double()
    with torch.no_grad():
        conv.bias.copy_(torch.randn(4))
    theta = torch.einsum("rk,kio->rio", conv.comp, conv.basis)
    c = {}
    for _, i, r, w in zip(*edge_index.tolist(), edge_type.tolist(), weight):
        c[i, r] = c.get((i, r), 0.0) + w
    rows = []
    for i in range(n):
        out = x[i] @ conv.root + conv.bias
        for j, dst, r, w in zip(*edge_index.tolist(), edge_type.tolist(), weight):
            if dst == i:
                out = out + w / torch.clamp(c[i, r], min=1.0) * (x[j] @ theta[r])
        rows.append(out)
    expected = torch.stack(rows)
    got = conv(x, edge_index, edge_type, weight)
    torch.testing.assert_close(got, expected)
    (grad_got,) = torch.autograd.grad(got.sin().sum(), weight)
    (grad_expected,) = torch.autograd.grad(expected.sin().sum(), weight)
    torch.testing.assert_close(grad_got, grad_expected)


def test_zero_weight_is_a_missing_edge():
    torch.manual_seed(1)
    x = torch.randn(6, 3)
    edge_index = torch.randint(0, 6, (2, 12))
    edge_type = torch.randint(0, 2, (12,))
    conv = RelationalConv(3, 3, num_relations=2, num_bases=2)
    keep = torch.rand(12) < 0.5
    weighted = conv(x, edge_index, edge_type, keep.float())
    dropped = conv(x, edge_index[:, keep], edge_type[keep])
    torch.testing.assert_close(weighted, dropped)


def test_batched_distances_match_networkx():
    graph_a = [(0, 2), (2, 3), (3, 1)]  # a path head - 2 - 3 - tail
    graph_b = [(1, 0), (2, 3)]  # head and tail adjacent; 2, 3 unreachable
    edges = [(u, v) for u, v in graph_a] + [(u + 4, v + 4) for u, v in graph_b]
    batch = GraphBatch(
        edge_index=torch.tensor(edges).t(),
        edge_type=torch.zeros(len(edges), dtype=torch.long),
        edge_weight=None,
        batch=torch.tensor([0, 0, 0, 0, 1, 1, 1, 1]),
        head=torch.tensor([0, 4]),
        tail=torch.tensor([1, 5]),
        relation=torch.tensor([0, 0]),
    )
    got = distances(batch, batch.head, max_distance=2).tolist()
    expected = []
    for pairs in (graph_a, graph_b):
        g = nx.Graph(pairs)
        g.add_nodes_from(range(4))
        lengths = nx.single_source_shortest_path_length(g, 0)
        expected += [min(lengths.get(v, 3), 3) for v in range(4)]
    assert got == expected
    assert distances(batch, batch.tail, max_distance=2).tolist() == [3, 0, 2, 1, 1, 0, 3, 3]


@pytest.mark.parametrize("model_cls", [DistMult, TransE, RotatE])
def test_negative_targets_come_from_the_negative_triples(model_cls):
    torch.manual_seed(2)
    teacher = model_cls(8, 2, dim=4)
    positives = torch.tensor([[0, 0, 1], [2, 1, 3]])
    negatives = torch.tensor([[[0, 0, 5], [6, 0, 1]], [[2, 1, 7], [4, 1, 3]]])
    out = distillation_targets(teacher, positives, negatives)
    flat = negatives.reshape(-1, 3)
    with torch.no_grad():
        expected_score = teacher(flat[:, 0], flat[:, 1], flat[:, 2]).view(2, 2)
    expected_rep = triple_representation(teacher, flat[:, 0], flat[:, 1], flat[:, 2]).view(2, 2, -1)
    torch.testing.assert_close(out.negative_score, expected_score)
    torch.testing.assert_close(out.negative_representation, expected_rep)
    # The reference's bug would copy the positive's targets; they differ here.
    assert not torch.allclose(out.negative_score, out.positive_score.unsqueeze(1).expand(2, 2))
    assert not torch.allclose(out.negative_representation[:, 0], out.positive_representation)


def test_representation_sums_to_the_score():
    torch.manual_seed(3)
    h, r, t = torch.tensor([0, 1]), torch.tensor([1, 0]), torch.tensor([2, 3])
    distmult = DistMult(4, 2, dim=5)
    torch.testing.assert_close(triple_representation(distmult, h, r, t).sum(-1), distmult(h, r, t))
    rotate = RotatE(4, 2, dim=5, margin=3.0)
    torch.testing.assert_close(
        3.0 - triple_representation(rotate, h, r, t).sum(-1), rotate(h, r, t)
    )


def test_negatives_corrupt_exactly_one_side_and_never_make_self_pairs():
    world = family_kg(24, seed=1)
    teacher = DistMult(world.dataset.num_entities, world.dataset.num_relations, dim=4)
    positives = world.dataset.train.mapped_triples[:50]
    neg = draw_negatives(
        teacher,
        positives,
        torch.Generator().manual_seed(0),
        num_negatives=4,
        hard_fraction=0.5,
        relation_fraction=0.0,
    )
    assert neg.shape == (50, 4, 3)
    pos = positives.unsqueeze(1).expand_as(neg)
    assert torch.equal(neg[..., 1], pos[..., 1])
    same_head, same_tail = neg[..., 0] == pos[..., 0], neg[..., 2] == pos[..., 2]
    assert bool((same_head | same_tail).all())
    assert bool((neg[..., 0] != neg[..., 2]).all())


def test_relation_negatives_keep_the_pair_and_live_on_the_positive_subgraph():
    world = family_kg(24, seed=1)
    ds = world.dataset
    torch.manual_seed(0)
    teacher = DistMult(ds.num_entities, ds.num_relations, dim=4)
    positives = ds.train.mapped_triples[:60]
    neg = draw_negatives(
        teacher,
        positives,
        torch.Generator().manual_seed(0),
        ds.num_relations,
        num_negatives=3,
        relation_fraction=1.0,
        hard_fraction=1.0,
    )
    pos = positives.unsqueeze(1).expand_as(neg)
    assert torch.equal(neg[..., [0, 2]], pos[..., [0, 2]])  # the same pair (h, t)
    assert bool((neg[..., 1] != pos[..., 1]).all())
    assert bool(((neg[..., 1] >= 0) & (neg[..., 1] < ds.num_relations)).all())
    # Hard picks: among the teacher's three best other relations of (h, ., t) (brute force).
    for (h, r, t), rels in zip(positives.tolist(), neg[..., 1].tolist()):
        with torch.no_grad():
            scores = {
                x: float(teacher(*torch.tensor([[h], [x], [t]])))
                for x in range(ds.num_relations)
                if x != r
            }
        best = sorted(scores, key=scores.get, reverse=True)[:3]
        assert set(rels) <= set(best)
    # Uniform picks cover every other relation.
    neg = draw_negatives(
        teacher,
        positives,
        torch.Generator().manual_seed(1),
        ds.num_relations,
        num_negatives=3,
        relation_fraction=1.0,
        hard_fraction=0.0,
    )
    assert bool((neg[..., 1] != pos[..., 1]).all())
    assert set(neg[..., 1].flatten().tolist()) == set(range(ds.num_relations))
    # The default mixes both kinds: a changed relation keeps the pair, else one entity changes.
    mixed = draw_negatives(
        teacher, positives, torch.Generator().manual_seed(3), ds.num_relations, num_negatives=4
    )
    pos = positives.unsqueeze(1).expand_as(mixed)
    on_relation = mixed[..., 1] != pos[..., 1]
    assert 0 < int(on_relation.sum()) < on_relation.numel()
    assert torch.equal(mixed[on_relation][:, [0, 2]], pos[on_relation][:, [0, 2]])
    same_head, same_tail = mixed[..., 0] == pos[..., 0], mixed[..., 2] == pos[..., 2]
    assert bool((same_head | same_tail)[~on_relation].all())
    # The negative is scored on its positive's subgraph: the positive triple removed from both.
    from kg.explain.evaluator.config import NUM_NEGATIVES
    from kg.explain.evaluator.training import draw_sample

    config = EvaluatorConfig(num_train_triples=20)
    sample = draw_sample(teacher, ds.train, config, torch.Generator().manual_seed(2))
    bank = sample.bank
    relation_negatives = 0
    for g in range(sample.count):
        for q in range(NUM_NEGATIVES):
            i = sample.count + g * NUM_NEGATIVES + q
            edges = [bank.select(torch.tensor([j])) for j in (g, i)]
            if int(edges[0].relation) == int(edges[1].relation):
                continue  # an entity corruption: another pair, another subgraph
            relation_negatives += 1
            assert torch.equal(edges[0].edge_index, edges[1].edge_index)
            assert torch.equal(edges[0].edge_type, edges[1].edge_type)
    assert relation_negatives > 0


def test_distillation_leaves_a_training_mode_teacher_untouched():
    # ConvE has dropout and batch norm: scoring it in training mode would make the teacher's
    # targets noisy and move its running statistics.
    from kg.conve import ConvE

    world = family_kg(24, seed=1)
    ds = world.dataset
    torch.manual_seed(0)
    teacher = ConvE(ds.num_entities, ds.num_relations, 20, embedding_height=4).train()
    before = {k: v.clone() for k, v in teacher.state_dict().items()}
    config = EvaluatorConfig(steps=2, num_train_triples=30, hidden=8)
    DistilledEvaluator(config).fit(teacher, ds.train)
    assert teacher.training
    for key, value in teacher.state_dict().items():
        assert torch.equal(value, before[key]), key


def test_batched_perturbations_equal_one_by_one(explainer, world):
    evaluator = explainer.evaluator_
    target = world.derived_triples("test")[0]
    with pytest.warns(UserWarning, match="max_candidates=40"):
        local = explainer.local_structure(target)
    generator = torch.Generator().manual_seed(0)
    masks = torch.rand(6, local.num_edges, generator=generator) < 0.6
    with torch.no_grad():
        batched = evaluator.score_local(local, masks)
        single = torch.cat([evaluator.score_local(local, masks[i : i + 1]) for i in range(6)])
        chunked = evaluator.score_local(local, masks, max_copies=4)
        soft = evaluator.score_local(local, masks.float())
    torch.testing.assert_close(batched, single, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(batched, chunked, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(batched, soft, rtol=1e-4, atol=1e-5)
    # The full mask of the unpruned structure scores the target's own enclosing subgraph, as
    # score_triples does (a pruned one's local graph is the union of its kept paths:
    # kg.explain.local, "Pruning"; tests/kg/explain/test_local_union.py).
    assert local.truncated and local.pruning.triples[1] < local.pruning.triples[0]
    whole = unpruned(explainer, local)
    assert whole.num_edges == local.pruning.triples[0]
    triple = torch.tensor([local.target])
    full = torch.ones(1, whole.num_edges, dtype=torch.bool)
    with torch.no_grad():
        torch.testing.assert_close(
            evaluator.score_local(whole, full),
            evaluator.score_triples(triple),
            rtol=1e-4,
            atol=1e-5,
        )


def test_scores_with_the_teacher_are_those_of_the_explainers_pruned_local_graph(
    explainer, world, teacher, monkeypatch
):
    # score_triples(teacher=...) cuts a subgraph of more than B L triples to the union of its
    # top B candidate paths by the teacher's edge probabilities, as the distillation cuts it;
    # with B the explainer's budget that is the explainer's own pruned local graph
    # (kg.explain.local, "Pruning"), scored by score_local with every triple kept: the oracle.
    from kg.explain.evaluator import sampling

    evaluator = explainer.evaluator_
    budget = explainer.config.max_candidates
    monkeypatch.setattr(sampling, "CANDIDATE_BUDGET", budget)
    target = world.derived_triples("test")[0]
    with pytest.warns(UserWarning, match=f"max_candidates={budget}"):  # every path, as there
        local = explainer.local_structure(target, through_relation=True)
    assert local.truncated and local.pruning.triples[0] > budget * local.max_length
    triple = torch.tensor([local.target])
    full = torch.ones(1, local.num_edges, dtype=torch.bool)
    with torch.no_grad():
        cut = evaluator.score_triples(triple, teacher=teacher)
        torch.testing.assert_close(cut, evaluator.score_local(local, full), rtol=1e-4, atol=1e-5)
        # the whole enclosing subgraph scores otherwise: the cut is what is compared
        assert (cut - evaluator.score_triples(triple)).abs().item() > 1e-3
    # the cut follows the teacher's edge probabilities: another model's is refused
    other = DistMult(teacher.num_entities, teacher.num_relations, dim=16)
    with pytest.raises(GraphDataError, match="distilled from another model"):
        evaluator.score_triples(triple, teacher=other)
    with pytest.raises(GraphDataError, match="distilled from another model"):
        evaluator.agreement(other, world.dataset.test.mapped_triples[:2])


def test_fit_state_persistence_and_compatibility(explainer, world, teacher, tmp_path):
    evaluator = explainer.evaluator_
    with pytest.raises(NotFittedError, match="not fitted"):
        DistilledEvaluator().score_triples(torch.tensor([[0, 0, 1]]))
    assert evaluator.history_[-1]["step"] == evaluator.config.steps
    assert evaluator.score_std_ > 0 and math.isfinite(evaluator.score_mean_)
    path = evaluator.save(tmp_path / "evaluator.pt")
    torch.manual_seed(3)
    expected = torch.rand(4)
    torch.manual_seed(3)
    loaded = DistilledEvaluator.load(path)
    # loading draws nothing from the caller's global RNG (the network's init is overwritten)
    assert torch.equal(torch.rand(4), expected)
    triples = world.dataset.test.mapped_triples[:5]
    torch.testing.assert_close(
        loaded.score_triples(triples, world.dataset.train), evaluator.score_triples(triples)
    )
    with pytest.raises(GraphDataError, match="keeps no graph"):
        loaded.score_triples(triples)
    loaded.check_compatible(teacher, world.dataset.train)
    other = DistMult(teacher.num_entities, teacher.num_relations, dim=16)
    with pytest.raises(GraphDataError, match="distilled from another model"):
        loaded.check_compatible(other, world.dataset.train)
    with pytest.raises(GraphDataError, match="distilled on another graph"):
        loaded.check_compatible(teacher, world.dataset.valid)
    with pytest.raises(GraphDataError, match="not a distilled-evaluator file"):
        torch.save({"format": "x"}, tmp_path / "bad.pt")
        DistilledEvaluator.load(tmp_path / "bad.pt")
    # The statistics are pickled floats, outside the tensor checksum: a damaged one is refused.
    raw = path.read_bytes()
    at = raw.index(struct.pack(">d", evaluator.score_std_))  # pickle's BINFLOAT
    for value, match in ((float("nan"), "expected finite numbers"), (1e6, "is corrupt")):
        damaged = tmp_path / f"damaged-{value}.pt"
        damaged.write_bytes(raw[:at] + struct.pack(">d", value) + raw[at + 8 :])
        with pytest.raises(GraphDataError, match=match):
            DistilledEvaluator.load(damaged)


def test_agreement_figures(explainer, world, teacher):
    figures = explainer.evaluator_.agreement(
        teacher, world.dataset.test.mapped_triples[:10], num_queries=2, max_candidates=15
    )
    assert -1.0 <= figures["spearman"] <= 1.0
    assert 0.0 <= figures["top10_overlap"] <= 1.0 and figures["hits_at_10"] in (0.0, 0.5, 1.0)
    assert figures["num_queries"] == 2 and figures["num_triples"] == 10


def test_agreement_is_undefined_or_refused_never_nan():
    from scipy.stats import spearmanr

    from kg.explain.evaluator.sampling import agreement_figures

    torch.manual_seed(0)
    teacher = DistMult(12, 2, dim=4)
    triples = torch.tensor([[0, 0, 1], [2, 1, 3], [4, 0, 5], [6, 1, 7]])

    def as_teacher(x):
        return teacher(x[:, 0], x[:, 1], x[:, 2]).detach()

    def noisy(x):
        return as_teacher(x) + x[:, 2].float()

    kwargs = {"num_queries": 4, "max_candidates": 11, "seed": 0}
    # Oracle: the teacher against itself agrees perfectly; a shifted scorer gives scipy's rho
    # over the same 8 triples (4 given, 4 tail corruptions, drawn from the seed as here).
    same = agreement_figures(as_teacher, 12, teacher, triples, **kwargs)
    assert same["spearman"] == pytest.approx(1.0) and same["hits_at_10"] == 1.0
    assert same["top10_overlap"] == 1.0 and same["num_queries"] == 4
    generator = torch.Generator().manual_seed(0)
    tails = torch.randint(12, (4,), generator=generator)
    corrupt = triples.clone()
    corrupt[:, 2] = torch.where(tails == triples[:, 0], (tails + 1) % 12, tails)
    both = torch.cat([triples, corrupt])
    rho = spearmanr(noisy(both).numpy(), as_teacher(both).numpy())[0]
    assert agreement_figures(noisy, 12, teacher, triples, **kwargs)["spearman"] == pytest.approx(
        rho
    )
    # A constant evaluator has no rank correlation (rho divides by the rank spread): it was NaN.
    flat = agreement_figures(lambda x: torch.zeros(len(x)), 12, teacher, triples, **kwargs)
    assert flat["spearman"] is None
    assert all(math.isfinite(flat[k]) for k in ("hits_at_10", "top10_overlap"))
    # No triple or no query: every figure was NaN; the call has no meaning and is refused.
    with pytest.raises(GraphDataError, match=r"triples: expected at least one triple, got 0 rows"):
        agreement_figures(as_teacher, 12, teacher, triples[:0], **kwargs)
    with pytest.raises(GraphDataError, match=r"num_queries: expected an int >= 1, got 0"):
        agreement_figures(as_teacher, 12, teacher, triples, **{**kwargs, "num_queries": 0})
    with pytest.raises(GraphDataError, match=r"triples: expected a \[B, 3\] id tensor, got \(4,\)"):
        agreement_figures(as_teacher, 12, teacher, triples[:, 0], **kwargs)
    with pytest.raises(GraphDataError, match=r"evaluator: scored 8 triple\(s\) NaN"):
        agreement_figures(lambda x: torch.full((len(x),), math.nan), 12, teacher, triples, **kwargs)


def test_bad_teacher_or_config(world):
    with pytest.raises(GraphDataError, match="does not fit the graph"):
        DistilledEvaluator(EvaluatorConfig(steps=1)).fit(DistMult(3, 1, dim=2), world.dataset.train)
    with pytest.raises(GraphDataError, match="num_layers: expected a positive int"):
        EvaluatorConfig(num_layers=0).validate()


def test_path_reduction_keeps_exactly_a_few_whole_paths(world):
    from graphdata.paths import enumerate_paths
    from kg.explain._pathbank import path_keep, path_table
    from kg.explain.evaluator.sampling import bank_and_ids

    graph = world.dataset.train
    triples = graph.mapped_triples[:12]
    bank, edge_id = bank_and_ids(triples, graph, graph.num_entities, 2)
    table = path_table(triples, graph, bank, edge_id, 3, 50)
    generator = torch.Generator().manual_seed(0)
    graphs = torch.arange(12)
    keep = path_keep(table, bank, graphs, generator)
    all_edges = graph.mapped_triples[:, [0, 2]].t()
    for g in range(12):
        lo, hi = int(bank.edge_ptr[g]), int(bank.edge_ptr[g + 1])
        kept = set(edge_id[lo:hi][keep[lo:hi]].tolist())
        h, r, t = triples[g].tolist()
        truth = enumerate_paths(
            all_edges, graph.mapped_triples[:, 1], h, t, 3, exclude_triples=(h, r, t)
        )
        paths = [set(row[row >= 0].tolist()) for row in truth.edge_ids]
        if not paths:
            assert not kept
            continue
        # The kept edges are the union of 1 to 3 of the graph's h-t paths, nothing else.
        inside = [p for p in paths if p <= kept]
        assert inside and set().union(*inside) == kept
        assert min(len(p) for p in inside) <= len(kept) <= 9
    # Graphs not reduced keep every edge.
    untouched = path_keep(table, bank, graphs[:0], generator)
    assert bool(untouched.all())
