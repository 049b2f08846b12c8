"""Device leaks found without a GPU (tests/_device_leaks.py): the main public APIs, inputs on the
CPU, with every tensor the library makes without its inputs' device landing on meta."""

from __future__ import annotations

import pytest
import torch

from graphdata.dense import DenseGraphBatch
from graphdata.filter_index import FilterIndex
from graphdata.paths import enumerate_paths, enumerate_paths_batch
from graphdata.spatial import knn_graph, radius_graph
from graphdata.synthetic import family_kg
from graphon.cut import cut_norm
from graphon.densities import graphon_density, monte_carlo_density
from graphon.families import make_graphon, sbm
from graphon.homomorphism import hom_density, inj_density
from graphon.nn.models import IGN, IWN
from kg.distmult import DistMult
from kg.evaluation import evaluate
from kg.explain.evaluator import EvaluatorConfig
from kg.explain.explainer import ExplainerConfig, KGExplainer
from kg.models import MODELS
from kg.training import Trainer, TrainingConfig
from spatial.celcomen import Celcomen
from spatial.simulate import simulate_tissue
from tests._device_leaks import foreign_default_device


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def kg_world():
    return family_kg(20, seed=0)


def test_a_planted_leak_raises_and_its_fix_does_not():
    def leak(x):
        return torch.zeros(x.shape[0]) + x

    def fixed(x):
        return x.new_zeros(x.shape[0]) + x

    x = torch.arange(3.0)
    with foreign_default_device():
        with pytest.raises(RuntimeError, match="meta"):
            leak(x)
        with pytest.raises(RuntimeError, match="meta"):
            torch.tensor([1.0, 2.0, 3.0]) + x
        assert torch.equal(fixed(x), x)
        assert torch.equal(torch.tensor([1.0, 2.0, 3.0], device=x.device) - 1, x)
        # a generator's draw stays on its device (moved with .to, as the docs ask)
        assert torch.rand(3, generator=torch.Generator().manual_seed(0)).device == x.device


def test_spatial_graphs_and_paths_take_the_inputs_device():
    pts = torch.rand(40, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    batch = torch.arange(40) // 20
    ei = torch.tensor([[0, 1, 2, 0], [1, 2, 0, 2]])
    et = torch.tensor([5, 6, 7, 8])
    pairs = torch.tensor([[0, 2], [2, 1]])
    with foreign_default_device():
        for method in ("kdtree", "torch"):
            knn_graph(pts, 4, method=method)
            knn_graph(pts, 4, batch=batch, method=method)
        radius_graph(pts, 0.2)
        radius_graph(pts, 0.2, batch=batch)
        paths = enumerate_paths(ei, et, 0, 2, 2)
        batched = enumerate_paths_batch(ei, et, pairs, 3)
    # the same paths as outside the context: 0-2 by either parallel edge and 0-1-2
    assert paths.to_list() == enumerate_paths(ei, et, 0, 2, 2).to_list() and len(paths) == 3
    assert [p.to_list() for p in batched] == [
        p.to_list() for p in enumerate_paths_batch(ei, et, pairs, 3)
    ]


def test_filter_index_takes_the_inputs_device():
    t = torch.tensor([[0, 0, 1], [0, 0, 2], [2, 1, 1], [1, 1, 0]])
    h, r, tail = t.unbind(1)
    with foreign_default_device():
        index = FilterIndex.from_triples(t, num_entities=3, num_relations=2)
        index.tails(h, r), index.heads(r, tail), index.both_coo((r, tail), (h, r))
        keys = index.stacked_keys(h, r, tail)
        index.stacked_coo(keys), index.stacked_score_mask(keys)
        known = index.contains(t)
    assert bool(known.all())


@pytest.mark.parametrize("name", sorted(MODELS))
def test_kge_models_score_on_the_inputs_device(name, kg_world):
    ds = kg_world.dataset
    kw = {"embedding_height": 2} if name == "conve" else {}
    model = MODELS[name](ds.num_entities, ds.num_relations, dim=8, **kw).eval()
    h, r, t = ds.train.mapped_triples[:6].unbind(1)
    with foreign_default_device():
        scores = model(h, r, t)
        tails, heads = model.score_tails(h, r), model.score_heads(r, t)
        model.train()
        model(h, r, t)
    assert torch.allclose(tails[torch.arange(6), t], scores, atol=1e-5)
    assert torch.allclose(heads[torch.arange(6), h], scores, atol=1e-5)


def test_training_and_filtered_evaluation_take_the_models_device(kg_world):
    ds = kg_world.dataset
    base = {"epochs": 1, "batch_size": 16, "progress": False, "seed": 0}
    runs = [
        {"regime": "slcwa", "filter_negatives": True, "eval_every": 1},
        {"regime": "slcwa", "side_per_positive": True, "batched_negatives": 4},
        {"regime": "1vsall", "regularizer": "n3", "regularizer_weight": 0.1},
        {"regime": "kvsall", "eval_every": 0},
    ]
    for extra in runs:
        model = DistMult(ds.num_entities, ds.num_relations, dim=8)
        with foreign_default_device():
            Trainer(model, TrainingConfig(**{**base, **extra})).fit(ds)
    with foreign_default_device():
        metrics = evaluate(model, ds.test.mapped_triples, ds.filter_index(), progress=False)
    assert 0.0 < metrics.mrr <= 1.0


@pytest.mark.filterwarnings("ignore::kg.explain.local.CandidatesCapped")
def test_kg_explainer_takes_the_models_device(kg_world):
    ds = kg_world.dataset
    model = DistMult(ds.num_entities, 2 * ds.num_relations, dim=8)
    cfg = TrainingConfig(regime="1vsall", epochs=2, batch_size=64, reciprocal=True,
                         eval_every=0, progress=False, seed=0)  # fmt: skip
    Trainer(model, cfg).fit(ds)
    model.eval()
    evaluator = EvaluatorConfig(steps=5, batch_size=16, num_train_triples=40, hidden=8)
    triple = tuple(int(v) for v in ds.test.mapped_triples[0])
    for mode in ("evaluator", "retrain"):
        config = ExplainerConfig(evaluator=evaluator, max_candidates=20, mode=mode)
        with foreign_default_device():
            explanation = KGExplainer(model, config).fit(ds, progress=False).explain(triple)
        assert explanation.target[0] == ds.train.entities.labels[triple[0]]


def test_graphon_densities_cut_norm_and_networks_take_the_inputs_device():
    g = torch.Generator().manual_seed(0)
    a = torch.rand(8, 8, generator=g, dtype=torch.float64)
    a = (a + a.T) / 2
    b = torch.randn(30, 30, generator=g, dtype=torch.float64)
    step, smooth = sbm(2, 0.8, 0.1), make_graphon("exp_abs_diff")
    graphs = DenseGraphBatch.from_adjacency(
        [torch.ones(3, 3), torch.ones(4, 4) - torch.eye(4)], [torch.ones(3, 1), torch.ones(4, 1)]
    )
    networks = [IGN(1, 4, 1), IWN(1, 4, 1), IWN(1, 4, 1, order=3)]
    with foreign_default_device():
        hom = hom_density("triangle", a)
        inj_density("triangle", a)
        monte_carlo_density("triangle", a, num_samples=100, seed=0)
        monte_carlo_density("triangle", a, num_samples=100, injective=True, seed=0)
        graphon_density("triangle", step, device="cpu")
        graphon_density("triangle", smooth, device="cpu", order=16)
        for method in ("exact", "sdp"):
            cut_norm(a - a.mean(), method=method)
        cut_norm(b)
        for net in networks:
            net(graphs).sum().backward()
    assert float(hom) == pytest.approx(float(torch.einsum("ij,jk,ki->", a, a, a)) / 8**3)


@pytest.mark.filterwarnings("ignore:the fit has not converged")
def test_celcomen_fit_and_intervene_take_the_data_device():
    tissue = simulate_tissue(60, 3, steps=20, step_size=0.005, seed=0)
    for kw in ({}, {"optimizer": "adam", "batch_size": 16}, {"init": "uniform"}):
        est = Celcomen(epochs=3, progress=False, seed=0, **kw)
        with foreign_default_device():
            est.fit(tissue.x, tissue.edge_index, device="cpu")
    runs = (
        ("mean_field", {}),
        ("langevin", {"seed": 0, "steps": 20, "burn_in": 10}),
        ("gradient", {"steps": 20}),
    )
    for method, extra in runs:
        with foreign_default_device():
            out = est.intervene(tissue.x, {0: 0.0}, [0, 1], edge_index=tissue.edge_index,
                                method=method, progress=False, **extra)  # fmt: skip
        assert out is not None
