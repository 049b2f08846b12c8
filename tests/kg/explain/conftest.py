"""Small shared worlds for the kg.explain tests: a tiny family KG, a briefly trained teacher."""

from __future__ import annotations

import warnings
from contextlib import contextmanager

import pytest
import torch

from graphdata.synthetic import family_kg
from kg.distmult import DistMult
from kg.explain.evaluator import EvaluatorConfig
from kg.explain.explainer import ExplainerConfig, KGExplainer
from kg.explain.local import CandidatesCapped, LocalStructure, local_structure
from kg.training import Trainer, TrainingConfig


@contextmanager
def _threads(n: int):
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@pytest.fixture(autouse=True)
def _one_thread():
    # Small tensors: thread start-up costs more than it saves on a shared 2-core machine.
    with _threads(1):
        yield


@pytest.fixture(scope="session")
def world():
    """A 40-person family world (343 training triples, 10 relations)."""
    return family_kg(40, seed=0)


@pytest.fixture(scope="session")
def teacher(world):
    """A reciprocal DistMult trained for 30 epochs of 1vsAll on the world."""
    ds = world.dataset
    config = TrainingConfig(
        regime="1vsall",
        epochs=30,
        batch_size=64,
        lr=0.05,
        reciprocal=True,
        eval_every=0,
        progress=False,
        seed=0,
    )
    model = DistMult(ds.num_entities, 2 * ds.num_relations, dim=16)
    with _threads(1):  # session fixtures run before the autouse function fixture
        Trainer(model, config).fit(ds)
    return model.eval()


def _small_config(**overrides) -> ExplainerConfig:
    evaluator = EvaluatorConfig(steps=30, batch_size=16, num_train_triples=120, hidden=8)
    return ExplainerConfig(**{"evaluator": evaluator, "max_candidates": 40, **overrides})


@pytest.fixture(scope="session")
def small_config():
    """A factory of small ExplainerConfigs (overrides as keyword arguments)."""
    return _small_config


@pytest.fixture(scope="session")
def explainer(world, teacher):
    """A KGExplainer with a quickly distilled evaluator."""
    with _threads(1):
        return KGExplainer(teacher, _small_config()).fit(world.dataset)


def unpruned(explainer: KGExplainer, local: LocalStructure) -> LocalStructure:
    """The target's whole enclosing subgraph and every candidate path (no budget, no pruning)."""
    return local_structure(
        explainer._edge_index,
        explainer._edge_type,
        local.target,
        num_nodes=explainer.graph_.num_entities,
        hops=local.hops,
        max_length=local.max_length,
        max_candidates=10**6,
    )


def capped_grandparent(
    world, teacher, explainer: KGExplainer, small_config, max_candidates: int
) -> tuple[KGExplainer, tuple[int, int, int]]:
    """An explainer capped at ``max_candidates`` paths (the shared evaluator) and the first
    grandparent test fact whose candidates it prunes."""
    capped = KGExplainer(teacher, small_config(max_candidates=max_candidates)).fit(
        world.dataset, evaluator=explainer.evaluator_
    )
    targets = [t for t in world.derived_triples("test") if t[1] == "grandparent"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CandidatesCapped)
        target = next(t for t in targets if capped.local_structure(t).truncated)
    return capped, target
