"""Sharded entity tables (kg.sharded) against one process with the whole table.

Two gloo processes on the CPU (torch.multiprocessing, init_method file://) each own half of the
entity rows; the oracle is one process: kg.training.Trainer with the same config and global
batch (parameters to float tolerance, rtol 1e-4 / atol 1e-5 as in test_distributed.py: the same
gradient sums in another order) and kg.evaluation.evaluate (ranks and metrics exactly).
"""

from __future__ import annotations

import dataclasses
import faulthandler
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.distributed as dist

from graphdata.errors import GraphDataError
from graphdata.synthetic import family_kg
from graphdata.triples import KGDataset
from graphdata.tripleset import TripleSet
from graphdata.vocabulary import Vocabulary
from kg.base import KGEModel
from kg.distmult import DistMult
from kg.distributed import leave_together
from kg.evaluation import NonFiniteScoreError, evaluate
from kg.sharded import CommStats, ShardedTable, evaluate_sharded_table, train_sharded
from kg.training import Trainer, TrainingConfig
from kg.transe import TransE
from kg.tucker import TuckER
from tests.kg.conftest import assert_ranks_take_one_process_steps, spawn_ranks

WORLD = 2

#: name -> (model class, model kwargs, unused extra entities, config overrides).
CASES: dict[str, tuple[type[KGEModel], dict[str, Any], int, dict[str, Any]]] = {
    # Filtered negatives and an N3 term: the denominators travel; E = 45 is odd.
    "distmult_rowwise_adagrad": (
        DistMult,
        {},
        0,
        dict(
            optimizer="rowwise_adagrad",
            lr=0.1,
            loss="nssa",
            num_negatives=4,
            filter_negatives=True,
            regularizer="n3",
            regularizer_weight=0.05,
        ),
    ),
    # Lazy Adam and TransE's projection of the touched rows.
    "transe_sparse_adam": (
        TransE,
        {"p": 2},
        0,
        dict(optimizer="sparse_adam", lr=0.05, loss="margin", num_negatives=5),
    ),
    # Batched negatives: a rank's slice (19 or 18 of 37) ends inside a chunk of 8, and the
    # margin's count of kept pairs varies per rank.
    "distmult_batched": (
        DistMult,
        {},
        0,
        dict(
            optimizer="rowwise_adagrad",
            lr=0.1,
            loss="margin",
            num_negatives=5,
            batched_negatives=8,
            side_per_positive=True,
        ),
    ),
    # 100 entities no triple uses (rank 1 owns ids 73..144): with 4 positives and 1 negative
    # per step, some steps touch no row of rank 1 (asserted below).
    "uneven": (
        DistMult,
        {},
        100,
        dict(optimizer="rowwise_adagrad", lr=0.1, num_negatives=1, batch_size=4, epochs=1),
    ),
}


def _dataset(extra: int = 0) -> KGDataset:
    """family_kg(45) (45 entities, 387 train triples), with ``extra`` unused entities after them."""
    base = family_kg(45, seed=2).dataset
    if not extra:
        return base
    labels = list(base.entities.labels) + [f"unused{i}" for i in range(extra)]
    ents = Vocabulary(labels, kind="entity")
    rels = Vocabulary(list(base.relations.labels), kind="relation")
    splits = [TripleSet(s.mapped_triples, ents, rels) for s in (base.train, base.valid, base.test)]
    return KGDataset(*splits, name="family_kg(45) + unused")


def _config(overrides: dict[str, Any]) -> TrainingConfig:
    base = dict(epochs=2, batch_size=37, eval_every=0, progress=False, seed=5)
    return TrainingConfig(**{**base, **overrides})


def _model(cls: type[KGEModel], kwargs: dict[str, Any], dataset: KGDataset) -> KGEModel:
    """The parameters Trainer.fit starts from: reset_parameters() after manual_seed(seed)."""
    model = cls(dataset.num_entities, dataset.num_relations, dim=8, **kwargs)
    with torch.random.fork_rng():
        torch.manual_seed(5)  # _config's seed
        model.reset_parameters()
    return model


def _tie_model(dataset: KGDataset) -> DistMult:
    """Dyadic values (every score exact in any order) and ties: entities 3 and 40 are equal."""
    model = DistMult(dataset.num_entities, dataset.num_relations, dim=8)
    gen = torch.Generator().manual_seed(7)
    with torch.no_grad():
        model.entity.weight.copy_(torch.randint(-2, 3, model.entity.weight.shape, generator=gen))
        model.entity.weight.div_(2)
        model.relation.weight.copy_(
            torch.randint(-1, 2, model.relation.weight.shape, generator=gen)
        )
        model.entity.weight[40] = model.entity.weight[3]  # on rank 0 and rank 1: a tie across
        model.entity.weight[41] = model.entity.weight[3]
    return model


def _eval_models(dataset: KGDataset) -> dict[str, tuple[KGEModel, dict[str, Any]]]:
    """name -> (model, keyword arguments of both evaluations)."""
    reciprocal = DistMult(dataset.num_entities, 2 * dataset.num_relations, dim=8)
    broken = _tie_model(dataset)
    with torch.no_grad():
        reciprocal.entity.weight.copy_(_tie_model(dataset).entity.weight)
        reciprocal.relation.weight.copy_(
            torch.linspace(-1, 1, 8 * 2 * dataset.num_relations).round().view(-1, 8)
        )
        broken.entity.weight[7] = float("nan")  # every query with 7 as candidate: worst rank
        broken.entity.weight[30, 0] = float("inf")
    return {
        "ties": (_tie_model(dataset), {}),
        "transe_l1": (_model(TransE, {"p": 1}, dataset), {}),
        "distmult": (_model(DistMult, {}, dataset), {}),
        "reciprocal": (reciprocal, {"reciprocal": True}),
        "nonfinite_worst": (broken, {"nonfinite": "worst"}),
    }


def _worker(rank: int, init_file: str, out: str) -> None:
    torch.set_num_threads(1)
    faulthandler.enable()  # a native abort (SIGABRT) prints every thread's Python stack
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=WORLD)
    with leave_together():
        result: dict[str, Any] = {}
        for name, (cls, kwargs, extra, overrides) in CASES.items():
            dataset = _dataset(extra)
            table = ShardedTable.from_model(_model(cls, kwargs, dataset))
            fit = train_sharded(table, dataset, _config(overrides))
            result[name] = {
                "state": table.gather().state_dict(),
                "losses": fit.losses,
                "comm": dataclasses.asdict(fit.comm),
            }
        dataset = _dataset()
        for name, (model, kwargs) in _eval_models(dataset).items():
            table = ShardedTable.from_model(model)
            for filtered in (True, False):
                index = dataset.filter_index() if filtered else None
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # nonfinite="worst" warns
                    m = evaluate_sharded_table(table, dataset.test, index, **kwargs)
                result[f"eval_{name}_{filtered}"] = (m.optimistic, m.pessimistic, m.options)
        # The hand-calculated case: E = 61, d = 8, rank 0 owns ids 0..30, rank 1 ids 31..60.
        table = ShardedTable.from_model(DistMult(61, 2, dim=8))
        for rows in ([0, 1, 2, 40], [0, 1, 2]):
            stats = CommStats()
            ids = torch.tensor(rows)
            fetched = table.fetch(ids, stats)
            grad = torch.arange(len(rows) * 8, dtype=torch.float32).view(-1, 8)
            mine = table.reduce_rows(ids, grad, stats)
            result[f"hand_{len(rows)}"] = (fetched, mine, dataclasses.asdict(stats))
        result["hand_full"] = table.gather().entity.weight.detach()
        to_zero = table.gather(dst=0)
        result["hand_to_zero"] = None if to_zero is None else to_zero.entity.weight.detach()
        torch.save(result, Path(out) / f"rank{rank}.pt")


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out = spawn_ranks(_worker, tmp_path_factory.mktemp("sharded"), WORLD)
    return [torch.load(out / f"rank{r}.pt") for r in range(WORLD)]


@pytest.mark.parametrize("name", list(CASES))
def test_sharded_training_takes_the_steps_of_one_process(
    two_ranks: list[dict[str, Any]], name: str
) -> None:
    cls, kwargs, extra, overrides = CASES[name]
    dataset = _dataset(extra)
    assert dataset.num_entities % WORLD == 1  # E not divisible by W
    single = Trainer(_model(cls, kwargs, dataset), _config(overrides)).fit(dataset)
    assert_ranks_take_one_process_steps([two_ranks[r][name] for r in range(WORLD)], single)
    assert two_ranks[0][name]["losses"] == two_ranks[1][name]["losses"]


def test_gather_to_one_rank_equals_the_all_gather(two_ranks: list[dict[str, Any]]) -> None:
    """gather(dst=0): rank 0 receives the whole table (as all_gather's), rank 1 nothing."""
    assert torch.equal(two_ranks[0]["hand_to_zero"], two_ranks[0]["hand_full"])
    assert two_ranks[1]["hand_to_zero"] is None
    table = ShardedTable.from_model(DistMult(5, 2, dim=3))
    with pytest.raises(GraphDataError, match=r"dst: expected a rank in \[0, 1\), got 1"):
        table.gather(dst=1)


def test_a_rank_that_owns_no_row_of_the_batch(two_ranks: list[dict[str, Any]]) -> None:
    """Rank 1 owns no row of some steps' union (and still takes part in every collective)."""
    owned = [two_ranks[r]["uneven"]["comm"]["owned_rows"] for r in range(WORLD)]
    union = two_ranks[0]["uneven"]["comm"]["union_rows"]
    assert 0 in owned[1]
    assert [a + b for a, b in zip(*owned)] == union


@pytest.mark.parametrize(
    "model_name", ["ties", "transe_l1", "distmult", "reciprocal", "nonfinite_worst"]
)
@pytest.mark.parametrize("filtered", [True, False])
def test_sharded_evaluation_equals_one_process_exactly(
    two_ranks: list[dict[str, Any]], model_name: str, filtered: bool
) -> None:
    dataset = _dataset()
    model, kwargs = _eval_models(dataset)[model_name]
    index = dataset.filter_index() if filtered else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        single = evaluate(model, dataset.test.mapped_triples, index, **kwargs)
    for rank in range(WORLD):
        optimistic, pessimistic, options = two_ranks[rank][f"eval_{model_name}_{filtered}"]
        assert torch.equal(optimistic, single.optimistic)
        assert torch.equal(pessimistic, single.pessimistic)
        assert torch.equal(options, single.options)
    if model_name == "ties":
        assert bool((single.pessimistic > single.optimistic).any())  # ties were ranked
    if model_name == "nonfinite_worst":
        assert single.nonfinite is not None and bool(single.nonfinite.any())


def test_sharded_metrics_equal_one_process(two_ranks: list[dict[str, Any]]) -> None:
    """MRR and Hits@k: the same ranks through kg.evaluation.rank_metrics (one process here)."""
    dataset = _dataset()
    model = _tie_model(dataset)
    table = ShardedTable.from_model(model)  # no process group: one rank owns every row
    broken = ShardedTable.from_model(_eval_models(dataset)["nonfinite_worst"][0])
    with pytest.raises(NonFiniteScoreError, match="scores: .*nonfinite='worst'"):
        evaluate_sharded_table(broken, dataset.test, None)  # nonfinite="raise", as evaluate
    sharded = evaluate_sharded_table(table, dataset.test, dataset.filter_index(), batch_size=5)
    single = evaluate(model, dataset.test, dataset.filter_index())
    assert sharded.mrr == single.mrr and sharded.mr == single.mr
    assert sharded.hits_at(1) == single.hits_at(1) and sharded.hits_at(10) == single.hits_at(10)
    optimistic, pessimistic, _ = two_ranks[0]["eval_ties_True"]
    assert torch.equal(optimistic, sharded.optimistic)
    assert torch.equal(pessimistic, sharded.pessimistic)


def test_communication_matches_a_hand_calculation(two_ranks: list[dict[str, Any]]) -> None:
    """E = 61, d = 8, float32 (4 bytes), W = 2; rank 0 owns ids 0..30, rank 1 ids 31..60."""
    full = two_ranks[0]["hand_full"]
    d, b = 8, 4
    # U = {0, 1, 2, 40}: runs u = (3, 1), m = 3, W m = 6 < 2 |U| = 8: all_gather and
    # reduce_scatter of W x m x d = 48 values (192 bytes); a ring sends (W - 1) m d = 24 (96 B).
    for rank in range(WORLD):
        fetched, mine, stats = two_ranks[rank]["hand_4"]
        assert torch.equal(fetched, full[[0, 1, 2, 40]])
        grad = torch.arange(32, dtype=torch.float32).view(4, 8)
        assert torch.equal(mine, 2 * (grad[:3] if rank == 0 else grad[3:]))
        assert stats["buffer_bytes"] == {"fetch": 2 * 3 * d * b, "entity_gradient": 2 * 3 * d * b}
        assert stats["sent_bytes"] == {"fetch": 3 * d * b, "entity_gradient": 3 * d * b}
    # U = {0, 1, 2}, rank 1 owns none: W m = 6 = 2 |U|, so all_reduce of |U| d = 24 values
    # (96 bytes); a ring sends 2 (W - 1) / W x 96 = 96 bytes.
    for rank in range(WORLD):
        fetched, mine, stats = two_ranks[rank]["hand_3"]
        assert torch.equal(fetched, full[:3])
        assert mine.shape == ((3, d) if rank == 0 else (0, d))
        assert stats["buffer_bytes"] == {"fetch": 3 * d * b, "entity_gradient": 3 * d * b}
        assert stats["sent_bytes"] == {"fetch": 3 * d * b, "entity_gradient": 3 * d * b}


def test_training_communication_follows_the_union(two_ranks: list[dict[str, Any]]) -> None:
    """Per step: fetch and gradient O(|U| d), relations |R_B| d + 1, filtered D_t 2 float64."""
    comm = two_ranks[0]["distmult_rowwise_adagrad"]["comm"]
    steps, d = comm["steps"], 8
    dataset = _dataset()
    assert steps == 2 * 11  # 387 triples in batches of 37, two epochs
    # A step's fetch sends at most |U| d floats per rank (the all_reduce bound) and at least
    # half of them ((W - 1) m d with m >= |U| / 2).
    fetch, union = comm["sent_bytes"]["fetch"], sum(comm["union_rows"])
    assert union * d * 4 / 2 <= fetch <= union * d * 4
    assert comm["sent_bytes"]["entity_gradient"] == fetch  # the same rule, the same runs
    rel = comm["buffer_bytes"]["relation_gradient"] / 4 - steps  # minus the loss scalars
    assert rel % d == 0 and rel / d <= steps * dataset.num_relations
    assert comm["buffer_bytes"]["denominators"] == steps * 2 * 8
    assert comm["calls"] == {
        "fetch": steps,
        "entity_gradient": steps,
        "relation_gradient": steps,
        "denominators": steps,
    }


def test_refusals_name_the_argument() -> None:
    dataset = _dataset()
    table = ShardedTable.from_model(_model(DistMult, {}, dataset))
    with pytest.raises(GraphDataError, match=r"config\.regime: .*got 'kvsall'.*regime='slcwa'"):
        train_sharded(table, dataset, _config(dict(regime="kvsall")))
    with pytest.raises(GraphDataError, match=r"config\.optimizer: .*got 'adam'.*rowwise_adagrad"):
        train_sharded(table, dataset, _config(dict(optimizer="adam")))
    with pytest.raises(GraphDataError, match=r"model: TuckER cannot shard .*use TransE"):
        ShardedTable.from_model(TuckER(dataset.num_entities, dataset.num_relations, dim=4))
    other = ShardedTable.from_model(DistMult(50, dataset.num_relations, dim=8))
    with pytest.raises(GraphDataError, match=r"dataset: has 45 entities.*the table 50"):
        train_sharded(other, dataset, _config(dict(optimizer="rowwise_adagrad")))
    with pytest.raises(GraphDataError, match=r"rank_type: expected one of"):
        evaluate_sharded_table(table, dataset.test, None, rank_type="best")
    with pytest.raises(GraphDataError, match=r"model: rank 0 of 1 owns entity rows \[0, 45\)"):
        ShardedTable(DistMult(44, 2, dim=8), 45)


def test_one_process_table_trains_as_the_trainer() -> None:
    """Without a process group the sharded path is one rank owning every row."""
    dataset = _dataset()
    overrides = dict(optimizer="rowwise_adagrad", lr=0.1, num_negatives=3, epochs=1)
    table = ShardedTable.from_model(_model(DistMult, {}, dataset))
    fit = train_sharded(table, dataset, _config(overrides))
    single = Trainer(_model(DistMult, {}, dataset), _config(overrides)).fit(dataset)
    for key, value in single.model_.state_dict().items():
        torch.testing.assert_close(table.gather().state_dict()[key], value, rtol=1e-5, atol=1e-6)
    assert fit.losses == pytest.approx([h["loss"] for h in single.history_], rel=1e-5)
    assert fit.comm.sent_bytes == {}  # nothing to communicate


def test_built_table_of_one_rank_is_the_trainers_model(tmp_path: Path) -> None:
    """build() with one rank draws the Trainer's parameters; its checkpoint loads and evaluates
    as the table does, and the Trainer refuses to resume it (no optimiser state)."""
    from kg.checkpoint import load_checkpoint, save_checkpoint
    from kg.prediction import load_model
    from kg.sharded import sharded_checkpoint

    dataset = _dataset()
    overrides = dict(optimizer="rowwise_adagrad", lr=0.1, num_negatives=3, epochs=2)
    config = _config(overrides)
    table = ShardedTable.build(
        DistMult, dataset.num_entities, dataset.num_relations, 8, seed=config.seed
    )
    fit = train_sharded(table, dataset, config)
    single = Trainer(_model(DistMult, {}, dataset), config).fit(dataset)
    assert fit.losses == pytest.approx([h["loss"] for h in single.history_], rel=1e-5)
    path = tmp_path / "ckpt.pt"
    save_checkpoint(path, sharded_checkpoint(table, dataset, config, fit))
    model, ckpt = load_model(path)
    assert ckpt["training"]["epoch"] == 2 and ckpt["training"]["sharded"] == {"world_size": 1}
    for key, value in single.model_.state_dict().items():
        torch.testing.assert_close(model.state_dict()[key], value, rtol=1e-5, atol=1e-6)
    index = dataset.filter_index()
    sharded = evaluate_sharded_table(table, dataset.test, index)
    single_metrics = evaluate(model, dataset.test, index)
    assert torch.equal(sharded.optimistic, single_metrics.optimistic)
    assert torch.equal(sharded.pessimistic, single_metrics.pessimistic)
    resumed = dataclasses.replace(config, checkpoint_path=str(path), epochs=3)
    with pytest.raises(GraphDataError, match=r"sharded-table run .*not resumed"):
        Trainer(_model(DistMult, {}, dataset), resumed).fit(dataset, resume=True)
    assert load_checkpoint(path)["optimizer"] == {}
