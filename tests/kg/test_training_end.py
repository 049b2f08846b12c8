"""How a training run ended: ``Trainer.still_improving_`` against ``stopped_early_``."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from graphdata.triples import KGDataset
from kg.distmult import DistMult
from kg.training import Trainer, TrainingConfig


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _cycle_kg(n: int = 8) -> KGDataset:
    rows = [(f"e{i}", "next", f"e{(i + 1) % n}") for i in range(n)]
    rows += [(f"e{i}", "skip", f"e{(i + 2) % n}") for i in range(n)]
    return KGDataset.from_labeled(rows, rows[::3], rows[1::3], name="cycle")


def _fit(**kw) -> Trainer:
    base = dict(
        epochs=4,
        batch_size=8,
        progress=False,
        eval_every=1,
        patience=None,
        regime="1vsall",
        reciprocal=False,
        regularizer=None,
        regularizer_weight=0.0,
        optimizer="adam",
        lr=0.05,
    )
    config = TrainingConfig(**{**base, **kw})
    return Trainer(DistMult(8, 2, dim=6), config).fit(_cycle_kg())


def _oracle(trainer: Trainer) -> bool:
    """The documented rule, from the history: at the cap, best MRR first reached last."""
    validated = [(h["epoch"], h["valid_mrr"]) for h in trainer.history_ if "valid_mrr" in h]
    best = max(mrr for _, mrr in validated)
    first_best = next(epoch for epoch, mrr in validated if mrr == best)
    return not trainer.stopped_early_ and first_best == validated[-1][0]


def test_still_improving_when_the_last_validation_is_the_best():
    trainer = _fit(lr=0.02)
    mrrs = [h["valid_mrr"] for h in trainer.history_]
    assert mrrs[-1] > max(mrrs[:-1])  # this seeded run improves up to its last epoch
    assert trainer.still_improving_ and not trainer.stopped_early_
    assert trainer.best_epoch_ == trainer.epochs_trained_ == 4


def test_not_still_improving_at_the_cap_past_the_peak():
    trainer = _fit()  # lr 0.05: the validation MRR peaks at epoch 3 of 4
    mrrs = [h["valid_mrr"] for h in trainer.history_]
    assert max(mrrs) == mrrs[2] > mrrs[3]
    assert not trainer.still_improving_ and not trainer.stopped_early_
    assert trainer.best_epoch_ == 3


def test_not_still_improving_at_the_cap_after_a_plateau_nor_when_stopped_early():
    # SGD with a vanishing step leaves every rank unchanged: the best stays at epoch 1
    frozen = dict(optimizer="sgd", lr=1e-12)
    capped = _fit(**frozen)
    assert not capped.still_improving_ and not capped.stopped_early_
    assert capped.best_epoch_ == 1 and capped.epochs_trained_ == 4
    stopped = _fit(**frozen, epochs=20, patience=2)
    assert stopped.stopped_early_ and not stopped.still_improving_
    assert stopped.epochs_trained_ == 3


def test_not_still_improving_without_validation():
    trainer = _fit(eval_every=0)
    assert not trainer.still_improving_ and not trainer.stopped_early_


@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(eval_every=2, epochs=5),  # validated at 2, 4 and (the last epoch) 5
        dict(lr=0.5, epochs=6),
        dict(lr=0.01, epochs=3, seed=3),
        dict(optimizer="sgd", lr=1e-12, epochs=3),
        dict(lr=0.5, epochs=12, patience=1),
    ],
)
def test_still_improving_follows_the_documented_rule(kw):
    trainer = _fit(**kw)
    assert trainer.still_improving_ == _oracle(trainer)


def test_a_resumed_run_judges_its_whole_history(tmp_path):
    path = str(tmp_path / "checkpoint.pt")
    first = _fit(epochs=2, checkpoint_path=path)
    assert first.still_improving_  # 2 epochs: the MRR was still rising at the cap
    config = dataclasses.replace(first.config, epochs=4)
    resumed = Trainer(DistMult(8, 2, dim=6), config).fit(_cycle_kg(), resume=True)
    assert [h["epoch"] for h in resumed.history_] == [1, 2, 3, 4]
    # past the peak (epoch 3) now, judged on the whole history as the straight run is
    assert not resumed.still_improving_ and resumed.best_epoch_ == 3
    assert resumed.still_improving_ == _fit(epochs=4).still_improving_ == _oracle(resumed)
