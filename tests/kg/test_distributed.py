"""Data-parallel training and sharded evaluation (kg.distributed) against one process.

Two gloo processes on the CPU (torch.multiprocessing, init_method file://) train with the global
batch B split B/2 per rank; one process trains with B in this process. The oracle is the single
process: parameters and losses equal to float tolerance (the same sums in another order),
sharded ranks equal exactly (integers), both ranks bit-equal to each other.
"""

from __future__ import annotations

import dataclasses
import faulthandler
import json
import math
import os
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from graphdata.errors import GraphDataError
from graphdata.synthetic import family_kg
from graphdata.triples import KGDataset
from kg.distmult import DistMult
from kg.distributed import (
    evaluate_sharded,
    init_from_env,
    launch,
    leave_together,
    shard_bounds,
)
from kg.evaluation import NonFiniteScoreError, evaluate
from kg.training import Trainer, TrainingConfig
from kg.transe import TransE
from kg.tucker import TuckER
from tests.kg.conftest import assert_ranks_take_one_process_steps, spawn_ranks

WORLD = 2

#: name -> (model class, config overrides); each exercises another loss denominator. TransE's
#: L1 subgradients (sums of +-1/D) cancel to an exact 0 in exact arithmetic but to a rounding
#: residual in one process, which Adam's first step turns into a step of size lr: it trains
#: with SGD, whose steps are linear in the gradient.
CASES: dict[str, tuple[type, dict[str, Any]]] = {
    # margin over kept pairs (filtered negatives), an N3 term over positives, a ragged last batch
    "slcwa_margin_filtered": (
        TransE,
        dict(
            regime="slcwa",
            optimizer="sgd",
            lr=0.5,
            loss="margin",
            filter_negatives=True,
            num_negatives=4,
            regularizer="n3",
            regularizer_weight=0.05,
        ),
    ),
    "slcwa_nssa": (DistMult, dict(regime="slcwa", loss="nssa", num_negatives=3, grad_clip=0.5)),
    # KvsAll's regulariser is a mean over answer triples, not over queries
    "kvsall_n3": (DistMult, dict(regime="kvsall", regularizer="n3", regularizer_weight=0.1)),
    "1vsall": (DistMult, dict(regime="1vsall", label_smoothing=0.1)),
    # The sparse path: row gradients all-reduced over the union of touched rows. Chunks of 8
    # positives share their negatives; a rank's slice (19 or 18 of 37) ends inside a chunk, and
    # the mask of negatives equal to the replaced entity makes the margin's count vary per rank.
    "slcwa_rowwise_adagrad_batched": (
        DistMult,
        dict(
            regime="slcwa",
            optimizer="rowwise_adagrad",
            lr=0.1,
            loss="margin",
            num_negatives=5,
            batched_negatives=8,
            side_per_positive=True,
        ),
    ),
    "slcwa_sparse_adam_filtered": (
        DistMult,
        dict(
            regime="slcwa",
            optimizer="sparse_adam",
            loss="nssa",
            num_negatives=4,
            filter_negatives=True,
            regularizer="n3",
            regularizer_weight=0.05,
        ),
    ),
}


def _dataset() -> KGDataset:
    return family_kg(60, seed=1).dataset


def _config(overrides: dict[str, Any], **more: Any) -> TrainingConfig:
    base = dict(epochs=2, batch_size=37, lr=0.05, eval_every=1, progress=False, seed=5)
    return TrainingConfig(**{**base, **overrides, **more})


def _model(cls: type, dataset: KGDataset) -> torch.nn.Module:
    return cls(dataset.num_entities, dataset.num_relations, dim=8)


def _worker(rank: int, init_file: str, out: str) -> None:
    torch.set_num_threads(1)
    faulthandler.enable()  # a native abort (SIGABRT) prints every thread's Python stack
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=WORLD)
    with leave_together():
        dataset = _dataset()
        result: dict[str, Any] = {}
        for name, (cls, overrides) in CASES.items():
            trainer = Trainer(_model(cls, dataset), _config(overrides)).fit(dataset)
            result[name] = {
                "state": trainer.model_.state_dict(),
                "losses": [h["loss"] for h in trainer.history_],
                "valid_mrr": [h["valid_mrr"] for h in trainer.history_],
            }
        # Sharded evaluation of a freshly initialised model (same parameters on every side).
        model = _model(DistMult, dataset)
        with torch.random.fork_rng():
            torch.manual_seed(11)
            model.reset_parameters()
        m = evaluate_sharded(model, dataset.test.mapped_triples, dataset.filter_index())
        result["eval"] = {"optimistic": m.optimistic, "pessimistic": m.pessimistic}
        with torch.no_grad():
            model.entity.weight[3] = math.nan
        try:
            evaluate_sharded(model, dataset.test.mapped_triples, dataset.filter_index())
            result["nonfinite"] = None
        except NonFiniteScoreError as err:  # on every rank, after the gather
            result["nonfinite"] = (err.count, err.total)
        # TuckER's batch norm and dropout see one rank's slice: a warning says so.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tucker = TuckER(dataset.num_entities, dataset.num_relations, 8)
            Trainer(tucker, _config({"regime": "1vsall"}, epochs=1, eval_every=0)).fit(dataset)
        result["warnings"] = [str(w.message) for w in caught if w.category is UserWarning]
        # A checkpointed run that one process will resume.
        cls, overrides = CASES["slcwa_margin_filtered"]
        run = Path(out) / "run"
        cfg = _config(
            overrides,
            checkpoint_path=str(run / "ckpt.pt"),
            log_path=str(run / "metrics.jsonl"),
        )
        if rank == 0:
            run.mkdir(exist_ok=True)
        dist.barrier()
        Trainer(_model(cls, dataset), cfg).fit(dataset)
        torch.save(result, Path(out) / f"rank{rank}.pt")


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    out = spawn_ranks(_worker, tmp_path_factory.mktemp("distributed"), WORLD)
    return out, [torch.load(out / f"rank{r}.pt") for r in range(WORLD)]


def test_shard_bounds_partition_contiguously() -> None:
    for n in range(0, 12):
        for world in range(1, 5):
            bounds = [shard_bounds(n, w, world) for w in range(world)]
            assert bounds[0][0] == 0 and bounds[-1][1] == n
            assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
            sizes = [hi - lo for lo, hi in bounds]
            assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)
    with pytest.raises(GraphDataError, match="rank: expected 0 <= rank < world_size"):
        shard_bounds(4, 2, 2)


def test_no_group_is_one_process() -> None:
    """Without a process group the trainer's path and evaluate_sharded are the plain ones."""
    dataset = _dataset()
    model = _model(DistMult, dataset)
    a = evaluate_sharded(model, dataset.test.mapped_triples, dataset.filter_index())
    b = evaluate(model, dataset.test.mapped_triples, dataset.filter_index())
    assert torch.equal(a.optimistic, b.optimistic) and torch.equal(a.pessimistic, b.pessimistic)


@pytest.mark.parametrize("name", list(CASES))
def test_two_ranks_take_the_steps_of_one_process(two_ranks: Any, name: str) -> None:
    _, results = two_ranks
    cls, overrides = CASES[name]
    dataset = _dataset()
    assert len(dataset.train.mapped_triples) % 37 not in (0, 1)  # a ragged last batch
    single = Trainer(_model(cls, dataset), _config(overrides)).fit(dataset)
    assert_ranks_take_one_process_steps([results[r][name] for r in range(WORLD)], single)
    mrr = [h["valid_mrr"] for h in single.history_]
    assert results[0][name]["valid_mrr"] == pytest.approx(mrr, rel=1e-4)
    assert results[0][name]["valid_mrr"] == results[1][name]["valid_mrr"]


def test_sharded_evaluation_equals_one_process_exactly(two_ranks: Any) -> None:
    _, results = two_ranks
    dataset = _dataset()
    assert len(dataset.test.mapped_triples) % WORLD == 1  # ragged shards
    model = _model(DistMult, dataset)
    with torch.random.fork_rng():
        torch.manual_seed(11)
        model.reset_parameters()
    single = evaluate(model, dataset.test.mapped_triples, dataset.filter_index())
    for rank in range(WORLD):
        assert torch.equal(results[rank]["eval"]["optimistic"], single.optimistic)
        assert torch.equal(results[rank]["eval"]["pessimistic"], single.pessimistic)


def test_sharded_nonfinite_scores_raise_on_every_rank(two_ranks: Any) -> None:
    _, results = two_ranks
    dataset = _dataset()
    model = _model(DistMult, dataset)
    with torch.random.fork_rng():
        torch.manual_seed(11)
        model.reset_parameters()
    with torch.no_grad():
        model.entity.weight[3] = math.nan
    with pytest.raises(NonFiniteScoreError) as single:
        evaluate(model, dataset.test.mapped_triples, dataset.filter_index())
    expected = (single.value.count, single.value.total)
    assert expected[0] > 0
    assert [results[r]["nonfinite"] for r in range(WORLD)] == [expected] * WORLD


def test_batch_norm_and_dropout_are_named_under_two_ranks(two_ranks: Any) -> None:
    _, results = two_ranks
    for rank in range(WORLD):
        [message] = [m for m in results[rank]["warnings"] if "step for step" in m]
        assert "BatchNorm1d, Dropout layers see one rank's slice" in message


def _leave_worker(rank: int, init_file: str, out: str) -> None:
    """Rank 1 ends each block later than rank 0: normally 1 s later, by an error 2 s later."""
    faulthandler.enable()
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=2)
    with leave_together():
        if rank == 1:
            time.sleep(1.0)
        arrived = time.time()
    record = {"arrived": arrived, "left": time.time(), "group_after": dist.is_initialized()}
    dist.init_process_group("gloo", init_method=f"file://{init_file}2", rank=rank, world_size=2)
    try:
        with leave_together():
            if rank == 1:
                time.sleep(2.0)
            record["raised"] = time.time()
            raise ValueError(f"rank {rank}")
    except ValueError as err:
        record["error"] = str(err)
    record["error_left"] = time.time()
    record["group_after_error"] = dist.is_initialized()
    Path(out, f"leave{rank}.json").write_text(json.dumps(record))


def test_leave_together_waits_for_every_rank_then_destroys(tmp_path: Path) -> None:
    """A normal exit leaves only once the last rank arrives; an error leaves without waiting."""
    mp.spawn(_leave_worker, args=(str(tmp_path / "init"), str(tmp_path)), nprocs=2, join=True)
    r0, r1 = (json.loads((tmp_path / f"leave{r}.json").read_text()) for r in range(2))
    assert r0["left"] >= r1["arrived"]  # rank 0 waited at the barrier for the later rank 1
    assert not r0["group_after"] and not r1["group_after"]
    assert r0["error"] == "rank 0" and r1["error"] == "rank 1"  # the block's error goes on
    assert r0["error_left"] < r1["raised"]  # rank 0 did not wait for rank 1
    assert not r0["group_after_error"] and not r1["group_after_error"]


def test_init_from_env_and_launch_reject_bad_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("MASTER_ADDR", raising=False)
    with pytest.raises(GraphDataError, match="WORLD_SIZE: is 2, but the environment lacks RANK"):
        init_from_env(torch.device("cpu"))
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert init_from_env(torch.device("cpu")) is False and not dist.is_initialized()
    with pytest.raises(GraphDataError, match="nproc: expected a positive int, got 0"):
        launch(print, (), 0)


def test_resume_a_two_rank_checkpoint_in_one_process(two_ranks: Any) -> None:
    out, _ = two_ranks
    cls, overrides = CASES["slcwa_margin_filtered"]
    dataset = _dataset()
    lines = [json.loads(x) for x in (out / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [x["world_size"] for x in lines] == [WORLD, WORLD]
    cfg = _config(
        overrides,
        epochs=3,
        checkpoint_path=str(out / "run" / "ckpt.pt"),
        log_path=str(out / "run" / "metrics.jsonl"),
    )
    resumed = Trainer(_model(cls, dataset), cfg).fit(dataset, resume=True)
    straight = Trainer(
        _model(cls, dataset), dataclasses.replace(cfg, checkpoint_path=None, log_path=None)
    )
    straight.fit(dataset)
    assert resumed.epochs_trained_ == 3
    for key, value in straight.model_.state_dict().items():
        torch.testing.assert_close(resumed.model_.state_dict()[key], value, rtol=1e-4, atol=1e-5)
    assert math.isclose(resumed.history_[-1]["loss"], straight.history_[-1]["loss"], rel_tol=1e-4)
    lines = [json.loads(x) for x in (out / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [x.get("world_size", 1) for x in lines] == [WORLD, WORLD, 1]


@pytest.mark.slow  # two elastic-launched workers import torch and the CLI: ~20 s loaded
def test_cli_nproc_matches_one_process(tmp_path: Path) -> None:
    """``graphlib kg train --nproc 2`` logs the losses and test metrics of one process."""
    from graphlib_ml.cli import main

    flags = ["--dataset", "synthetic", "--num-people", "80", "--model", "distmult"]
    flags += ["--epochs", "2", "--device", "cpu", "--no-progress"]
    assert main(["kg", "train", *flags, "--out", str(tmp_path / "one")]) == 0
    assert main(["kg", "train", *flags, "--nproc", "2", "--out", str(tmp_path / "two")]) == 0
    one, two = (
        [json.loads(x) for x in (tmp_path / d / "metrics.jsonl").open()] for d in ("one", "two")
    )
    assert [x.get("world_size", 1) for x in two] == [2, 2] and "world_size" not in one[0]
    assert [x["loss"] for x in two] == pytest.approx([x["loss"] for x in one], rel=1e-5)
    test_one = json.loads((tmp_path / "one" / "test_metrics.json").read_text())
    test_two = json.loads((tmp_path / "two" / "test_metrics.json").read_text())
    assert test_two["num_triples"] == test_one["num_triples"]
    mrr = [t["metrics"]["both"]["realistic"]["mrr"] for t in (test_one, test_two)]
    assert mrr[1] == pytest.approx(mrr[0], rel=1e-3)


@pytest.mark.slow  # two elastic-launched workers import torch and the CLI: ~20 s loaded
def test_cli_shard_entities_on_two_ranks(tmp_path: Path) -> None:
    """``kg train --nproc 2 --shard-entities``: each rank owns half of the entity rows; the
    checkpoint rank 0 writes evaluates (one process, whole table) to the sharded test ranks."""
    from graphlib_ml.cli import main

    flags = ["--dataset", "synthetic", "--num-people", "80", "--model", "distmult"]
    flags += ["--epochs", "2", "--device", "cpu", "--no-progress", "--regime", "slcwa"]
    flags += ["--optimizer", "rowwise_adagrad", "--lr", "0.1", "--loss", "softplus"]
    out = tmp_path / "two"
    assert main(["kg", "train", *flags, "--nproc", "2", "--shard-entities", "--out", str(out)]) == 0
    log = [json.loads(x) for x in (out / "metrics.jsonl").open()]
    assert [x["world_size"] for x in log] == [2, 2]
    assert all(x["comm_bytes_per_step"] > 0 and math.isfinite(x["loss"]) for x in log)
    sharded = json.loads((out / "test_metrics.json").read_text())
    again = tmp_path / "eval.json"
    assert main(["kg", "evaluate", str(out / "checkpoint.pt"), "--json", str(again)]) == 0
    assert json.loads(again.read_text())["metrics"] == sharded["metrics"]


def _leaves(x: Any, path: str = "") -> dict[str, Any]:
    """Every leaf of a nested checkpoint dict, by key path."""
    if isinstance(x, dict):
        return {
            k: v for key, value in x.items() for k, v in _leaves(value, f"{path}.{key}").items()
        }
    if isinstance(x, (list, tuple)):
        return {
            k: v for i, value in enumerate(x) for k, v in _leaves(value, f"{path}[{i}]").items()
        }
    return {path: x}


@pytest.mark.slow  # four elastic-launched workers import torch and the CLI: ~30 s loaded
def test_cli_nproc_runs_with_one_seed_are_bit_identical(tmp_path: Path) -> None:
    """Two ``kg train --nproc 2`` runs of one seed: the same checkpoint (parameters, optimiser
    and random states), epoch log and test metrics, bit for bit; only wall times and paths
    differ. sLCWA draws negatives on each rank, so the per-rank generators are covered."""
    from graphlib_ml.cli import main

    flags = ["--dataset", "synthetic", "--num-people", "80", "--model", "distmult"]
    flags += ["--epochs", "2", "--device", "cpu", "--no-progress", "--regime", "slcwa"]
    flags += ["--loss", "nssa", "--seed", "7"]
    for run in ("a", "b"):
        assert main(["kg", "train", *flags, "--nproc", "2", "--out", str(tmp_path / run)]) == 0
    a, b = (
        _leaves(torch.load(tmp_path / run / "checkpoint.pt", weights_only=True))
        for run in ("a", "b")
    )
    assert a.keys() == b.keys()
    differ = sorted(k for k in a if not _equal(a[k], b[k]))
    assert all(k.endswith(".seconds") or k.endswith("_path") for k in differ), differ
    assert any(isinstance(v, torch.Tensor) and v.numel() > 1000 for v in a.values())
    logs = [
        [{k: v for k, v in json.loads(x).items() if k != "seconds"} for x in path.open()]
        for path in (tmp_path / "a" / "metrics.jsonl", tmp_path / "b" / "metrics.jsonl")
    ]
    assert logs[0] == logs[1] and [x["world_size"] for x in logs[0]] == [2, 2]
    assert (tmp_path / "a" / "test_metrics.json").read_bytes() == (
        tmp_path / "b" / "test_metrics.json"
    ).read_bytes()


def _equal(x: Any, y: Any) -> bool:
    if isinstance(x, torch.Tensor):
        return isinstance(y, torch.Tensor) and x.dtype == y.dtype and torch.equal(x, y)
    return bool(x == y)


def _abort_first_try(rank: int, init_file: str, out: str) -> None:
    """Rank 1 aborts natively in the first folder; every rank raises in a folder named bad."""
    if "bad" in out:
        raise ValueError("a Python error")
    if rank == 1 and out.endswith("try1"):
        os.abort()
    Path(out, f"rank{rank}").touch()


def test_spawn_ranks_retries_a_native_abort_once(tmp_path: Path) -> None:
    """The fixtures' retry: a signal death runs the ranks again (warned); an error fails."""
    with pytest.warns(RuntimeWarning, match="rank 1 died of SIGABRT"):
        out = spawn_ranks(_abort_first_try, tmp_path, 2)
    assert out.name == "try2" and sorted(p.name for p in out.glob("rank*")) == ["rank0", "rank1"]
    (tmp_path / "bad").mkdir()
    with pytest.raises(mp.ProcessRaisedException, match="a Python error"):
        spawn_ranks(_abort_first_try, tmp_path / "bad", 2)
