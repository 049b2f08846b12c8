import json
import math

import pytest
import torch

from graphdata.errors import GraphDataError, NotFittedError
from graphdata.triples import KGDataset
from kg.complex import ComplEx
from kg.distmult import DistMult
from kg.models import DEFAULTS, MODELS
from kg.rotate import RotatE
from kg.training import Trainer, TrainingConfig, TrainingDivergedError, build_model, train
from kg.transe import TransE


@pytest.fixture(autouse=True)
def _one_thread():
    # Tiny tensors: OpenMP threads only add spin-wait overhead on a shared 2-core machine.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _cycle_kg(n: int = 8) -> KGDataset:
    """Two directed relations on a cycle; valid/test repeat training triples (memorisation)."""
    rows = [(f"e{i}", "next", f"e{(i + 1) % n}") for i in range(n)]
    rows += [(f"e{i}", "skip", f"e{(i + 2) % n}") for i in range(n)]
    return KGDataset.from_labeled(rows, rows[::3], rows[1::3], name="cycle")


def _cfg(**kw) -> TrainingConfig:
    base = dict(epochs=3, batch_size=8, num_negatives=4, progress=False, eval_every=0, lr=0.05)
    return TrainingConfig(**{**base, **kw})


@pytest.mark.parametrize(
    ("regime", "loss", "reciprocal", "sampler"),
    [
        ("slcwa", "nssa", False, "uniform"),
        ("slcwa", "margin", False, "bernoulli"),
        ("slcwa", "softplus", True, "uniform"),
        ("slcwa", "bce", False, "bernoulli"),
        ("kvsall", "bce", False, "uniform"),
        ("kvsall", "bce", True, "uniform"),
        ("1vsall", "cross_entropy", False, "uniform"),
        ("1vsall", "cross_entropy", True, "uniform"),
    ],
)
def test_every_regime_memorises_a_tiny_graph(regime, loss, reciprocal, sampler):
    ds = _cycle_kg()
    relations = ds.num_relations * (2 if reciprocal else 1)
    model = ComplEx(ds.num_entities, relations, dim=8)
    cfg = _cfg(
        regime=regime,
        loss=loss,
        reciprocal=reciprocal,
        sampler=sampler,
        epochs=60,
        filter_negatives=(loss == "bce"),
        label_smoothing=0.1 if loss == "bce" else 0.0,
    )
    trainer = Trainer(model, cfg).fit(ds)
    losses = [h["loss"] for h in trainer.history_]
    assert losses[-1] < losses[0]
    # random ranking of 8 candidates gives MRR ~ 0.34; the graph is fully learnable
    assert trainer.evaluate(ds, split="train").mrr > 0.9


def test_same_seed_same_model_and_global_rng_untouched():
    ds = _cycle_kg()
    model = DistMult(8, 2, dim=6)
    before = torch.get_rng_state()
    a = train(model, ds, _cfg(seed=3)).model_
    assert torch.equal(torch.get_rng_state(), before)
    b = train(DistMult(8, 2, dim=6), ds, _cfg(seed=3)).model_
    c = train(DistMult(8, 2, dim=6), ds, _cfg(seed=4)).model_
    assert all(torch.equal(x, y) for x, y in zip(a.parameters(), b.parameters()))
    assert not torch.equal(a.entity.weight, c.entity.weight)


def test_fit_reinitialises_from_seed():
    ds = _cycle_kg()
    model = DistMult(8, 2, dim=6)
    with torch.no_grad():
        model.entity.weight.fill_(7.0)  # a fit starts from scratch, not from these values
    first = Trainer(model, _cfg(epochs=1)).fit(ds).model_.entity.weight.clone()
    second = Trainer(DistMult(8, 2, dim=6), _cfg(epochs=1)).fit(ds).model_.entity.weight
    assert torch.equal(first, second)


def test_post_step_runs_after_every_optimiser_step():
    ds = _cycle_kg()  # 16 triples, batch 8: 2 steps per epoch

    class Counting(DistMult):
        name = "distmult"
        steps = 0

        def post_step(self):
            self.steps += 1

    model = Counting(8, 2, dim=4)
    train(model, ds, _cfg(epochs=3))
    assert model.steps == 3 * 2
    # TransE's projection keeps entity norms at 1 through training
    model = train(TransE(8, 2, dim=4), ds, _cfg(epochs=2, lr=0.5)).model_
    norms = model.entity.weight.norm(dim=-1)
    torch.testing.assert_close(norms, torch.ones_like(norms))


def test_without_validation_the_best_mrr_is_undefined_not_nan(tmp_path):
    # eval_every=0: no validation MRR exists; best_valid_mrr_ was NaN, now None (undefined), and
    # the best epoch is the last one, as documented; the log holds no valid_mrr.
    log = tmp_path / "metrics.jsonl"
    trainer = train(TransE(8, 2, dim=4), _cycle_kg(), _cfg(epochs=2, log_path=str(log)))
    assert trainer.best_valid_mrr_ is None
    assert trainer.best_epoch_ == trainer.epochs_trained_ == 2 and not trainer.still_improving_
    assert all("valid_mrr" not in json.loads(x) for x in log.read_text().splitlines())


def test_history_log_and_validation(tmp_path):
    ds = _cycle_kg()
    log = tmp_path / "run" / "metrics.jsonl"
    trainer = train(
        RotatE(8, 2, dim=4, margin=2.0),
        ds,
        _cfg(epochs=4, eval_every=2, patience=None, log_path=str(log)),
    )
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert [x["epoch"] for x in lines] == [1, 2, 3, 4]
    assert lines == json.loads(json.dumps(trainer.history_))
    assert ["valid_mrr" in x for x in lines] == [False, True, False, True]
    best = max((x for x in lines if "valid_mrr" in x), key=lambda x: x["valid_mrr"])
    assert trainer.best_epoch_ == best["epoch"]
    assert trainer.best_valid_mrr_ == pytest.approx(best["valid_mrr"])
    # the reported validation MRR is what kg.evaluation gives for the restored model
    assert trainer.evaluate(ds, split="valid").mrr == pytest.approx(trainer.best_valid_mrr_)


def test_early_stopping_when_validation_mrr_stalls():
    ds = _cycle_kg()
    # SGD with a vanishing step leaves every rank unchanged: MRR never improves after epoch 1
    cfg = _cfg(epochs=50, optimizer="sgd", lr=1e-12, eval_every=1, patience=2)
    trainer = train(DistMult(8, 2, dim=6), ds, cfg)
    assert trainer.stopped_early_
    assert trainer.epochs_trained_ == 3 and trainer.best_epoch_ == 1


def test_gradient_clipping_bounds_the_step():
    ds = _cycle_kg()
    kw = dict(epochs=1, batch_size=64, optimizer="sgd", regime="1vsall")  # one step per epoch

    def fitted(**extra):
        return train(DistMult(8, 2, dim=6), ds, _cfg(**kw, **extra)).model_

    # every fit starts from the same seeded initialisation; lr 1e-30 leaves it unchanged
    init = [p.detach().clone() for p in fitted(lr=1e-30).parameters()]

    def step(model):
        pairs = zip(model.parameters(), init)
        return math.sqrt(sum(float((p.detach() - q).square().sum()) for p, q in pairs))

    # one SGD step with lr 1 moves the parameters by exactly the (clipped) gradient norm
    assert step(fitted(lr=1.0, grad_clip=1e-3)) == pytest.approx(1e-3, rel=1e-3)
    assert step(fitted(lr=1.0)) > 1e-2


def test_n3_regulariser_shrinks_embeddings():
    ds = _cycle_kg()
    plain = train(ComplEx(8, 2, dim=8), ds, _cfg(epochs=30, regime="1vsall"))
    reg = train(
        ComplEx(8, 2, dim=8),
        ds,
        _cfg(epochs=30, regime="1vsall", regularizer="n3", regularizer_weight=0.5),
    )
    assert reg.model_.entity.weight.norm() < 0.8 * plain.model_.entity.weight.norm()


def test_nan_loss_stops_with_learning_rate_and_last_good_epoch(tmp_path):
    ds = _cycle_kg()
    ckpt = tmp_path / "run.pt"

    class Poisoned(DistMult):
        name = "distmult"
        poison = False

        def forward(self, h, r, t):
            out = super().forward(h, r, t)
            return out * float("nan") if self.poison else out

    model = Poisoned(8, 2, dim=6)
    train(model, ds, _cfg(epochs=2, checkpoint_path=str(ckpt)))
    saved = ckpt.read_bytes()
    good = {k: v.clone() for k, v in model.state_dict().items()}
    model.poison = True
    match = r"epoch 3 with learning rate lr=0\.05; the last good epoch is 2"
    with pytest.raises(TrainingDivergedError, match=match):
        train(model, ds, _cfg(epochs=4, checkpoint_path=str(ckpt)), resume=True)
    assert ckpt.read_bytes() == saved  # the last good checkpoint is kept
    assert all(torch.equal(v, good[k]) for k, v in model.state_dict().items())


def test_invalid_configs_raise():
    ds = _cycle_kg()
    m = DistMult(8, 2, dim=4)
    cases = [
        (dict(regime="lcwa"), r"regime: expected one of \('slcwa', 'kvsall', '1vsall'\)"),
        (dict(regime="kvsall", loss="nssa"), r"loss \(regime 'kvsall'\): expected one of"),
        (dict(loss="softplus", margin=1.0), "margin: the 'softplus' loss has no margin"),
        (dict(loss="nssa", label_smoothing=0.1), "label_smoothing: the 'nssa' loss has no labels"),
        (dict(regularizer_weight=0.1), "regularizer_weight: expected 0, or > 0 with regularizer"),
        (dict(optimizer="adamw"), "optimizer: expected one of"),
        (dict(epochs=0), r"epochs \(--epochs\): expected an int >= 1, got 0"),
        (dict(lr=float("nan")), r"lr \(--lr\): expected a finite number > 0, got nan"),
    ]
    for kw, match in cases:
        with pytest.raises(GraphDataError, match=match):
            train(m, ds, _cfg(**kw))
    with pytest.raises(GraphDataError, match=r"expected 8 entities and 4 relations \(reciprocal"):
        train(m, ds, _cfg(reciprocal=True))
    with pytest.raises(GraphDataError, match="resume: True needs config.checkpoint_path"):
        train(m, ds, _cfg(), resume=True)
    with pytest.raises(NotFittedError, match="not fitted, call fit"):
        Trainer(m, _cfg()).evaluate(ds)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_tuned_defaults_build_and_train(name):
    ds = _cycle_kg()
    cfg = TrainingConfig.from_defaults(name, epochs=1, progress=False, eval_every=0)
    assert cfg.regime == DEFAULTS[name].regime and cfg.lr == DEFAULTS[name].lr
    dim = 8 if name != "conve" else 40  # ConvE: a 10 x 4 image per embedding
    model = build_model(name, ds, cfg, dim=dim)
    trainer = train(model, ds, cfg)
    assert math.isfinite(trainer.history_[0]["loss"])


def test_training_on_device(device):
    ds = _cycle_kg()
    model = ComplEx(8, 2, dim=4).to(device)
    trainer = train(model, ds, _cfg(regime="slcwa", sampler="bernoulli", filter_negatives=True))
    assert trainer.model_.entity.weight.device.type == device.type


def test_batches_never_hold_a_single_example():
    from kg._epochs import _batch_sizes

    assert _batch_sizes(17, 8) == [8, 9]  # a trailing batch of one joins the previous one
    assert _batch_sizes(16, 8) == [8, 8]
    assert _batch_sizes(18, 8) == [8, 8, 2]
    assert _batch_sizes(1, 8) == [1]
    # ConvE's batch norm cannot train on one example: 17 triples in batches of 8 must work
    rows = [(f"e{i}", "r", f"e{(i * 3 + 1) % 17}") for i in range(17)]
    ds = KGDataset.from_labeled(rows, rows[:2], rows[2:4])
    model = MODELS["conve"](17, 2, 8, embedding_height=2, num_filters=2)
    trainer = train(model, ds, _cfg(regime="1vsall", reciprocal=True, epochs=1))
    assert math.isfinite(trainer.history_[0]["loss"])


def test_a_tuned_loss_the_new_regime_lacks_is_refused_with_the_flag_to_pass():
    # distmult's tuned loss is cross_entropy (1vsall); --regime slcwa alone kept it.
    cfg = TrainingConfig.from_defaults("distmult", regime="slcwa")
    with pytest.raises(
        GraphDataError,
        match=r"got 'cross_entropy'; pass --loss nssa \(loss='nssa'\) with --regime slcwa, "
        r"or keep 'cross_entropy' with --regime 1vsall",
    ):
        cfg.validate()


def test_a_tuned_margin_goes_with_its_tuned_loss():
    # TransE's tuned nssa margin 9.0 stayed when the loss was overridden, so
    # `graphlib kg train --model transe --loss bce` was a refused config ("the 'bce' loss has
    # no margin") that no flag could fix.
    transe = TrainingConfig.from_defaults("transe")
    assert (transe.loss, transe.margin) == ("nssa", 9.0)
    bce = TrainingConfig.from_defaults("transe", loss="bce")
    assert bce.margin is None
    bce.validate()
    assert TrainingConfig.from_defaults("transe", loss="margin").resolved_margin() == 1.0
    assert TrainingConfig.from_defaults("transe", loss="bce", margin=2.0).margin == 2.0
    assert TrainingConfig.from_defaults("transe", epochs=3).margin == 9.0  # same loss: kept
