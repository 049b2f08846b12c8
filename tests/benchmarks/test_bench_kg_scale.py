"""benchmarks.bench_kg_scale: the ours-side of each part on a tiny synthetic folder.

Checks the arithmetic the tables rest on (FLOP counts, extrapolation, time to quality, the
validation cadence), that the partial-epoch driver trains exactly as ``Trainer.fit`` does, and
(when ``/tmp/pykeen-venv`` exists) PyKEEN's batch timing and budgeted training jobs.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from benchmarks import bench_kg_scale as scale
from benchmarks._kg_memory import measure
from benchmarks.bench_kg_train import _PyKEENWorker, equal_config, pykeen_spec
from graphdata.synthetic import family_kg
from kg.complex import ComplEx
from kg.conve import ConvE
from kg.distmult import DistMult
from kg.rescal import RESCAL
from kg.training import Trainer, build_model
from kg.tucker import TuckER

PYKEEN = Path(scale.DEFAULT_PYKEEN)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("family")
    family_kg(60, seed=0).dataset.to_folder(path)
    return path


@pytest.fixture(scope="module")
def dataset(folder: Path):
    return scale.load(folder)[0]


# ---- (b) FLOP counts --------------------------------------------------------------------------


def test_flop_formulas_by_hand() -> None:
    # DistMult d=4, B=3, E=5: the product h*r (3*4) and the matmul 2*3*4*5.
    assert scale.FLOPS["distmult"](DistMult(5, 2, dim=4), 3, 5) == (12 + 120, 4)
    # ComplEx d=2 (4 reals), B=3, E=5: 6 FLOPs per complex coordinate, matmul 2*3*4*5.
    assert scale.FLOPS["complex"](ComplEx(5, 2, dim=2), 3, 5) == (36 + 120, 4)
    # RESCAL d=3, B=2, E=5: bmm 2*2*3*3, matmul 2*2*3*5.
    assert scale.FLOPS["rescal"](RESCAL(5, 2, dim=3), 2, 5) == (36 + 60, 3)
    # TuckER d_e=4, d_r=3, B=2, E=5: r x core 2*2*3*16, bmm 2*2*16, matmul 2*2*4*5.
    tucker = TuckER(5, 2, dim=4, relation_dim=3)
    assert scale.FLOPS["tucker"](tucker, 2, 5) == (192 + 64 + 80, 4)
    # ConvE d=8, h=2 (4x4 image), 3 filters 3x3 -> 3*2*2 = 12 maps, B=2, E=7:
    # conv 2*2*12*9, fc 2*2*12*8, matmul 2*2*8*7, bias 2*7.
    conve = ConvE(7, 3, dim=8, embedding_height=2, num_filters=3)
    assert scale.FLOPS["conve"](conve, 2, 7) == (432 + 384 + 224 + 14, 8)
    assert scale.matmul_flops(3, 4, 5) == 120
    assert scale.matmul_flops(3, 4, 5, backward=True) == 360


@pytest.mark.parametrize(
    ("model", "elementwise"),
    [
        (DistMult(11, 3, dim=6), lambda b, e: b * 6),
        (ComplEx(11, 3, dim=6), lambda b, e: 6 * b * 6),
        (RESCAL(11, 3, dim=5), lambda b, e: 0),
        (TuckER(11, 3, dim=6, relation_dim=4), lambda b, e: 0),
        # ConvE's batch norm folded into its filters (kg.conve._folded_feature_maps) adds
        # products the formula leaves out, like batch norm's own work: the bias row of the
        # batched product 2BFL, the patches' second moments 2BK^2L and w Sigma 2FK^2
        # (F = 3 filters, K = 9, L = 4 positions), minus the convolution's element-wise B E.
        (
            ConvE(11, 3, dim=8, embedding_height=2, num_filters=3),
            lambda b, e: b * e - 2 * b * 3 * 4 - 2 * b * 81 * 4 - 2 * 3 * 81,
        ),
    ],
    ids=lambda x: getattr(x, "name", ""),
)
def test_flop_formulas_match_torch_counter(model, elementwise) -> None:
    """torch's FlopCounterMode counts the matmuls, bmm and convolutions of score_tails.

    It does not count elementwise work, so formula - elementwise terms must equal it; its
    backward count must be twice its forward one (the "fwd+bwd = 3x fwd" rule).
    """
    b, e = 4, model.num_entities
    head, rel = torch.arange(b) % e, torch.arange(b) % model.num_relations
    model.train()
    with FlopCounterMode(display=False) as forward:
        scores = model.score_tails(head, rel)
    with FlopCounterMode(display=False) as backward:
        scores.backward(torch.ones_like(scores))
    count, _ = scale.FLOPS[model.name](model, b, e)
    assert forward.get_total_flops() == count - elementwise(b, e)
    assert backward.get_total_flops() == 2 * forward.get_total_flops()


def test_measure_flops_small_model(dataset) -> None:
    config = equal_config("complex", 1)
    model = build_model("complex", dataset, config)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    row = scale.measure_flops(model, 16, repeats=1)
    assert row["shape"] == {"B": 16, "D": 2 * model.dim, "E": dataset.num_entities}
    assert row["forward_gflop"] == scale.FLOPS["complex"](model, 16, dataset.num_entities)[0] / 1e9
    for key in ("forward_ratio", "backward_ratio", "matmul_bf16_forward_gflops"):
        assert math.isfinite(row[key]) and row[key] > 0
    # Measuring never changes the model: no optimiser step, gradients cleared, eval mode.
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert not model.training and all(p.grad is None for p in model.parameters())


# ---- (a) partial epochs and extrapolation ----------------------------------------------------


def test_extrapolate_epoch() -> None:
    assert scale.extrapolate_epoch([0.1, 0.3], 10) == pytest.approx(2.0)
    assert scale.extrapolate_epoch([0.5], 3) == pytest.approx(1.5)
    with pytest.raises(ValueError, match="batch_s"):
        scale.extrapolate_epoch([], 10)


@pytest.mark.parametrize("name", ["transe", "complex"])
def test_whole_epoch_of_train_batches_is_trainer_fit(dataset, name: str) -> None:
    """start_run + Run.epoch mirrors Trainer.fit: one whole epoch gives identical parameters."""
    config = equal_config(name, 1)
    config.batch_size = 64
    ours = build_model(name, dataset, config)
    out = scale.train_batches(ours, dataset, config, 10**6)
    assert len(out["stamps"]) == out["batches_per_epoch"]
    reference = Trainer(build_model(name, dataset, config), config).fit(dataset).model_
    for key, value in reference.state_dict().items():
        assert torch.equal(value, ours.state_dict()[key]), key


def test_time_ours_max_batches(dataset) -> None:
    config = equal_config("transe", 1)
    n_train = dataset.train.mapped_triples.size(0)  # 496: 2 batches of 256 (sLCWA: per triple)
    out = scale.time_ours(dataset, "transe", epochs=1, max_batches=1)
    assert out["batches_per_epoch"] == math.ceil(n_train / config.batch_size) == 2
    assert len(out["batch_s"]) == 1  # batch 2 timed, batch 1 the warm-up
    assert out["epoch_s"] == [pytest.approx(out["batch_s"][0] * 2)]
    capped = scale.time_ours(dataset, "distmult", epochs=1, max_batches=50, max_seconds=0.0)
    assert len(capped["batch_s"]) == 1  # the cap ends timing after one timed batch
    whole = scale.time_ours(dataset, "transe", epochs=2, max_batches=None)
    assert len(whole["epoch_s"]) == 2


def test_batch_clock_stops() -> None:
    clock = scale.BatchClock(stop_after=2)
    clock.update(1)
    with pytest.raises(scale._Enough):
        clock.update(1)
    assert len(clock.stamps) == 2 and clock.stamps[0] <= clock.stamps[1]
    # A time cap stops after the first timed batch (the warm-up never counts), not sooner.
    capped = scale.BatchClock(stop_after=100, max_seconds=0.0)
    capped.update(1)
    with pytest.raises(scale._Enough):
        capped.update(1)
    assert len(capped.stamps) == 2


# ---- (c) time to quality ---------------------------------------------------------------------


def test_first_reach_and_time_to_quality_hand_curve() -> None:
    pykeen = [
        {"wall_s": 100.0, "valid_mrr": 0.20},
        {"wall_s": 200.0, "valid_mrr": 0.30},
        {"wall_s": 300.0, "valid_mrr": 0.28},  # declined: the target is its best, 0.30
    ]
    ours = [
        {"wall_s": 20.0, "valid_mrr": 0.25},
        {"wall_s": 50.0, "valid_mrr": 0.30},  # reaches 0.30 exactly here
        {"wall_s": 80.0, "valid_mrr": 0.35},
    ]
    assert scale.first_reach(ours, 0.26) == 50.0
    assert scale.first_reach(ours, 0.36) is None
    ttq = scale.time_to_quality(ours, pykeen)
    assert ttq["target_mrr"] == 0.30 and ttq["pykeen_final_mrr"] == 0.28
    assert ttq["pykeen_s"] == 200.0 and ttq["ours_s"] == 50.0
    assert ttq["ratio"] == pytest.approx(0.25) and ttq["target_met"]
    slow = [{"wall_s": 150.0, "valid_mrr": 0.31}]
    assert scale.time_to_quality(slow, pykeen)["ratio"] == pytest.approx(0.75)
    never = scale.time_to_quality([{"wall_s": 9.0, "valid_mrr": 0.1}], pykeen)
    assert never["ours_s"] is None and never["ratio"] is None and not never["target_met"]
    nan = [{"wall_s": 1.0, "valid_mrr": math.nan}]
    assert scale.time_to_quality(ours, nan)["target_mrr"] is None


def test_next_due() -> None:
    assert scale.next_due(0.0, 60.0) == 60.0
    assert scale.next_due(59.9, 60.0) == 60.0
    assert scale.next_due(60.0, 60.0) == 120.0
    assert scale.next_due(185.0, 60.0) == 240.0  # missed slots are skipped, not queued


def test_quality_ours_budget_rule(dataset) -> None:
    # A zero budget: one epoch, validated once (the last epoch), best state = that one.
    out = scale.quality_ours(dataset, "distmult", budget_s=0.0, valid_every_s=3600.0)
    assert [p["epoch"] for p in out["curve"]] == [1] and out["epochs"] == 1
    assert out["best_valid_mrr"] == out["curve"][0]["valid_mrr"] and out["best_epoch"] == 1
    assert 0 < out["test"]["hits_at_1"] <= out["test"]["hits_at_3"] <= out["test"]["hits_at_10"]
    assert out["test"]["hits_at_1"] <= out["test"]["mrr"] <= 1
    # A short budget, validation at every epoch end: the best point is the curve's maximum and
    # the run ends at the first epoch end past the budget.
    out = scale.quality_ours(dataset, "distmult", budget_s=1.0, valid_every_s=1e-9)
    epochs = [p["epoch"] for p in out["curve"]]
    assert epochs == list(range(1, len(epochs) + 1))
    walls = [p["wall_s"] for p in out["curve"]]
    assert walls == sorted(walls) and out["wall_s"] >= 1.0
    assert all(w < 1.0 for w in walls[:-2])  # validation follows the epoch end that passed 1 s
    best = max(out["curve"], key=lambda p: p["valid_mrr"])
    assert out["best_valid_mrr"] == best["valid_mrr"] and out["best_epoch"] == best["epoch"]


def test_valid_subset(dataset) -> None:
    full = dataset.valid.mapped_triples
    assert torch.equal(scale.valid_subset(dataset, 0), full)
    assert torch.equal(scale.valid_subset(dataset, 10**6), full)
    sub = scale.valid_subset(dataset, 7, seed=3)
    assert torch.equal(sub, scale.valid_subset(dataset, 7, seed=3))  # seeded
    rows = [full.tolist().index(t) for t in sub.tolist()]
    assert len(set(rows)) == 7 and rows == sorted(rows)  # distinct rows, in file order


def test_cli_default_model_is_a_model() -> None:
    assert scale.cli_default_model() in scale.MODELS


def test_load_drops_unseen_labels(tmp_path: Path) -> None:
    (tmp_path / "train.txt").write_text("a\tr\tb\nb\tr\tc\n")
    (tmp_path / "valid.txt").write_text("a\tr\tc\n")
    (tmp_path / "test.txt").write_text("a\tr\tz\nc\tr\ta\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # load() records the warning instead of emitting it
        dataset, dropped = scale.load(tmp_path)
    assert dataset.test.mapped_triples.size(0) == 1 and len(dropped) == 1


# ---- (d) memory ------------------------------------------------------------------------------


def test_memory_measure_max_batches(folder: Path) -> None:
    spec = {"folder": str(folder), "model": "complex", "threads": 1, "epochs": 1}
    out = measure({**spec, "phase": "train", "max_batches": 1})
    assert out["peak_mib"] >= 0 and out["s"] > 0 and out["base_mib"] > 0


# ---- PyKEEN side -----------------------------------------------------------------------------


@pytest.mark.skipif(not PYKEEN.exists(), reason=f"no PyKEEN environment at {PYKEEN}")
def test_pykeen_jobs(folder: Path, dataset) -> None:
    worker = _PyKEENWorker(str(PYKEEN), 1)
    try:
        config = equal_config("transe", 1)
        spec = {**pykeen_spec(config, "transe", folder, 0, 1), "job": "time_batches"}
        out = worker({**spec, "max_batches": 1})
        n_train = dataset.train.mapped_triples.size(0)
        assert out["batches_per_epoch"] == math.ceil(n_train / config.batch_size) == 2
        assert len(out["batch_s"]) == 1 and out["batch_s"][0] > 0
        # Asking for more batches than the epoch has: the epoch's last stamp closes batch 2.
        assert len(worker({**spec, "max_batches": 5})["batch_s"]) == 1
        capped = worker({**spec, "job": "time_batches", "max_batches": 50, "max_seconds": 0.0})
        assert len(capped["batch_s"]) == 1
        quality = scale.quality_config("distmult")
        spec = {
            **pykeen_spec(quality, "distmult", folder, 0, 1),
            "job": "quality_budget",
            "budget_s": 0.0,
            "valid_every_s": 3600.0,
        }
        out = worker(spec)
        assert "error" not in out, out
        assert [p["epoch"] for p in out["curve"]] == [1] and out["best_epoch"] == 1
        assert 0 < out["test"]["hits_at_1"] <= out["test"]["hits_at_10"] <= 1
        # A labelled validation subset (--valid-triples): the same recipe and seed, fewer
        # queries; the test metrics of the (same) one-epoch state are unchanged.
        ent, rel = dataset.entities.labels, dataset.relations.labels
        labels = [[ent[h], rel[r], ent[t]] for h, r, t in scale.valid_subset(dataset, 5).tolist()]
        subset = worker({**spec, "valid_labels": labels})
        assert "error" not in subset, subset
        assert subset["test"] == out["test"]
    finally:
        worker.close()
