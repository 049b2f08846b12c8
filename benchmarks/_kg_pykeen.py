"""PyKEEN side of the KGE benchmarks: a script run by a PyKEEN environment's python.

Not imported by graphlib (PyKEEN is not a dependency): ``benchmarks/bench_kg_train.py`` runs
``<pykeen python> benchmarks/_kg_pykeen.py SPEC_JSON`` (one job, one JSON line out) or
``... --serve`` (a worker that answers one JSON spec per stdin line with one JSON line, so
timing repeats interleave with ours without paying PyKEEN's import each time). Only the
standard library, torch and pykeen are imported.

A spec holds our resolved training config (``regime``, ``loss``, ``margin``, ``dim``,
``model_kwargs``, ``batch_size``, ``lr``, ...) plus ``job``:

* ``"quality"``: ``pykeen.pipeline`` with early stopping on validation MRR; filtered
  both-sides realistic test metrics.
* ``"time"``: ``epochs`` epochs of PyKEEN's training loop (no evaluation); wall seconds of
  every epoch from a ``post_epoch`` callback.
* ``"time_batches"``: the first ``max_batches + 1`` batches of one epoch (fewer once those
  after the first took ``max_seconds``); the seconds of each batch after the first (a
  warm-up), from a ``pre_batch`` callback (the interval between two
  ``pre_batch`` calls is one whole batch: forward, backward, optimiser step and the loading of
  the next batch), and the epoch's batch count (the length of the loop's data loader, read by
  wrapping ``_create_training_data_loader``). ``benchmarks/bench_kg_scale.py`` extrapolates.
* ``"memory"``: peak resident memory (VmHWM, reset through ``/proc/self/clear_refs``) above the
  resident memory after imports, data loading and model construction, while training
  ``epochs`` epochs, or only the first ``max_batches`` batches when the spec has it
  (``phase="train"``), or while evaluating the test set (``phase="eval"``). With
  ``announce_base`` the baseline is printed first as ``{"base_mib": ...}`` (for a parent that
  may stop the job at a time limit and read its peak from ``/proc``).
* ``"quality_budget"``: train under a wall budget (``budget_s``), validating (filtered MRR on
  the whole validation split, or on the labelled triples ``valid_labels`` when given;
  train/valid/test filtered) at the end of the first epoch at or
  past each multiple of ``valid_every_s`` and after the last epoch; stop at the first epoch end
  at or past the budget (or at ``epochs``); then test metrics of the best-validation state.
  The same rule as ``bench_kg_scale.quality_ours``.

Mapping of our configuration onto PyKEEN (also stated in ``bench_kg_train``'s docstring):
sLCWA -> ``slcwa`` loop (``basic`` / ``bernoulli`` sampler, same negatives per positive);
KvsAll -> ``lcwa`` + ``BCEWithLogitsLoss``; 1vsAll -> ``lcwa`` + ``CrossEntropyLoss``;
reciprocal -> ``create_inverse_triples``; N3 -> ``powersum`` p = 3, weight lambda / 3.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import sys
import time

NAMES = {
    "transe": "TransE",
    "distmult": "DistMult",
    "complex": "ComplEx",
    "rotate": "RotatE",
    "tucker": "TuckER",
    "rescal": "RESCAL",
    "conve": "ConvE",
}


@functools.lru_cache(maxsize=2)
def _cached_factories(folder, inverse):
    """Train, valid and test factories of ``folder``, with inverse triples when ``inverse``.

    Cached: a ``--serve`` worker reads FB15k-237 once per setting (the benchmark loads our
    dataset once too); training never modifies a factory.
    """
    from pykeen.triples import TriplesFactory

    train = TriplesFactory.from_path(f"{folder}/train.txt", create_inverse_triples=inverse)
    kw = dict(
        entity_to_id=train.entity_to_id,
        relation_to_id=train.relation_to_id,
        create_inverse_triples=inverse,
    )
    valid = TriplesFactory.from_path(f"{folder}/valid.txt", **kw)
    test = TriplesFactory.from_path(f"{folder}/test.txt", **kw)
    return train, valid, test


def _factories(spec):
    return _cached_factories(spec["folder"], spec["reciprocal"])


def _model_kwargs(spec):
    """PyKEEN model kwargs for our model ``spec["model"]`` and its NSSA margin."""
    import torch

    name, ours = spec["model"], spec["model_kwargs"]
    kwargs = {"embedding_dim": spec["dim"]}
    margin = spec["margin"]
    if name == "transe":
        kwargs["scoring_fct_norm"] = ours.get("p", 1)
    if name == "complex":
        # PyKEEN's default N(0, 1) initialisation collapses on UMLS (test MRR 0.09 after 50
        # epochs, REFERENCES.md A.4b); ours draws xavier_normal_, so PyKEEN gets its too.
        kwargs.update(entity_initializer="xavier_normal", relation_initializer="xavier_normal")
    if name == "rotate":
        # ours: gamma - sum_i |h_i r_i - t_i| (gamma in the score, loss margin 0); PyKEEN's score
        # has no gamma (NSSALoss adds it) and an L2 norm by default: use the sum of moduli.
        kwargs["interaction_kwargs"] = {"p": 1}
        margin += ours.get("margin", 9.0)
    if name == "tucker":
        kwargs.update(
            relation_dim=ours.get("relation_dim") or spec["dim"],
            dropout_0=ours.get("input_dropout", 0.3),
            dropout_1=ours.get("hidden_dropout1", 0.4),
            dropout_2=ours.get("hidden_dropout2", 0.5),
            apply_batch_normalization=True,
            # ours: torch's xavier_normal_ (std sqrt(2 / (n + d))); PyKEEN's own xavier_normal
            # uses std sqrt(2 / d). Core U(-1, 1) is both libraries' default.
            entity_initializer=torch.nn.init.xavier_normal_,
            relation_initializer=torch.nn.init.xavier_normal_,
        )
    if name == "rescal":
        # PyKEEN's default: U(0, 1) entries and an L2 regulariser of weight 10; ours:
        # xavier_normal_ entities, N(0, 1/d) relation matrices (regulariser below).
        kwargs.update(
            entity_initializer=torch.nn.init.xavier_normal_,
            relation_initializer=functools.partial(torch.nn.init.normal_, std=spec["dim"] ** -0.5),
        )
    if name == "conve":
        height = ours.get("embedding_height", 10)
        kwargs.update(
            embedding_height=height,
            embedding_width=spec["dim"] // height,
            output_channels=ours.get("num_filters", 32),
            kernel_height=ours.get("kernel_size", 3),
            kernel_width=ours.get("kernel_size", 3),
            input_dropout=ours.get("input_dropout", 0.2),
            feature_map_dropout=ours.get("feature_map_dropout", 0.2),
            output_dropout=ours.get("hidden_dropout", 0.3),
            apply_batch_normalization=True,
            entity_initializer=torch.nn.init.xavier_normal_,
            relation_initializer=torch.nn.init.xavier_normal_,
        )
    if spec["regularizer"] == "n3":
        # ours: lambda / (3B) * sum over the batch's h, r, t of sum_i |x_i|^3 (complex modulus).
        # PyKEEN's "powersum" adds weight * mean_b sum_i |x_i|^3 per representation call, so the
        # weight is lambda / 3. ("lp" would be the cube root of that, not N3.)
        reg = {
            "regularizer": "powersum",
            "regularizer_kwargs": {"p": 3.0, "weight": spec["regularizer_weight"] / 3},
        }
        kwargs.update(reg)
        if name == "distmult":
            # PyKEEN's DistMult regularises relations only and projects entities to unit norm;
            # ours regularises both and has no projection.
            kwargs.update(entity_constrainer=None, entity_representations_kwargs=reg)
    elif name == "rescal":
        kwargs["regularizer"] = None
    return kwargs, margin


def _loss(spec, margin):
    losses = {
        "nssa": (
            "NSSALoss",
            {"margin": margin, "adversarial_temperature": spec["adversarial_temperature"]},
        ),
        "margin": ("MarginRankingLoss", {"margin": spec["margin"]}),
        "softplus": ("SoftplusLoss", {}),
        "bce": ("BCEWithLogitsLoss", {}),
        "cross_entropy": ("CrossEntropyLoss", {}),
    }
    return losses[spec["loss"]]


def _loop_kwargs(spec):
    """Training-loop choice and kwargs, and the extra ``train()`` kwargs."""
    train_kwargs = {}
    if spec["regime"] == "slcwa":
        loop = {
            "training_loop": "slcwa",
            "negative_sampler": "basic" if spec["sampler"] == "uniform" else "bernoulli",
            "negative_sampler_kwargs": {"num_negs_per_pos": spec["num_negatives"]},
        }
    else:
        loop = {"training_loop": "lcwa"}
        if spec["label_smoothing"]:
            train_kwargs["label_smoothing"] = spec["label_smoothing"]
    return loop, train_kwargs


def quality(spec):
    """Pipeline run with early stopping; filtered test metrics."""
    from pykeen.pipeline import pipeline

    train, valid, test = _factories(spec)
    model_kwargs, margin = _model_kwargs(spec)
    loss, loss_kwargs = _loss(spec, margin)
    loop, train_kwargs = _loop_kwargs(spec)
    result = pipeline(
        training=train,
        validation=valid,
        testing=test,
        model=NAMES[spec["model"]],
        model_kwargs=model_kwargs,
        loss=loss,
        loss_kwargs=loss_kwargs,
        optimizer=spec["optimizer"],
        optimizer_kwargs={"lr": spec["lr"]},
        training_kwargs={
            "num_epochs": spec["epochs"],
            "batch_size": spec["batch_size"],
            **train_kwargs,
        },
        stopper="early",
        stopper_kwargs={
            "frequency": 10,
            "patience": 5,
            "relative_delta": 0.0,
            "metric": "inverse_harmonic_mean_rank",
        },
        random_seed=spec["seed"],
        device="cpu",
        use_tqdm=False,
        **loop,
    )
    epochs = len(result.losses)
    get = result.metric_results.get_metric
    return {
        "epochs": epochs,
        "fit_s_per_epoch": result.train_seconds / max(epochs, 1),
        "eval_s": result.evaluate_seconds,
        "mrr": float(get("both.realistic.inverse_harmonic_mean_rank")),
        "hits_at_1": float(get("both.realistic.hits_at_1")),
        "hits_at_3": float(get("both.realistic.hits_at_3")),
        "hits_at_10": float(get("both.realistic.hits_at_10")),
        "mr": float(get("both.realistic.arithmetic_mean_rank")),
    }


def _build(spec, train):
    """Model, optimiser and training loop as ``pipeline`` builds them."""
    from pykeen.losses import loss_resolver
    from pykeen.models import model_resolver
    from pykeen.optimizers import optimizer_resolver
    from pykeen.training import training_loop_resolver

    model_kwargs, margin = _model_kwargs(spec)
    loss, loss_kwargs = _loss(spec, margin)
    model = model_resolver.make(
        NAMES[spec["model"]],
        model_kwargs,
        triples_factory=train,
        loss=loss_resolver.make(loss, loss_kwargs),
        random_seed=spec["seed"],
    )
    optimizer = optimizer_resolver.make(
        spec["optimizer"], {"lr": spec["lr"]}, params=model.get_grad_params()
    )
    loop, train_kwargs = _loop_kwargs(spec)
    name = loop.pop("training_loop")
    training_loop = training_loop_resolver.make(
        name, model=model, triples_factory=train, optimizer=optimizer, **loop
    )
    return model, training_loop, train_kwargs


def _train(spec, train, training_loop, train_kwargs, epochs, callbacks=None):
    return training_loop.train(
        triples_factory=train,
        num_epochs=epochs,
        batch_size=spec["batch_size"],
        use_tqdm=False,
        callbacks=callbacks,
        **train_kwargs,
    )


def timing(spec):
    """Seconds of each of ``spec["epochs"]`` training epochs (PyKEEN's loop, no evaluation)."""
    import torch
    from pykeen.training.callbacks import TrainingCallback

    torch.set_num_threads(spec["threads"])
    train, _, _ = _factories(spec)
    _, training_loop, train_kwargs = _build(spec, train)
    stamps = [time.perf_counter()]

    class Stamp(TrainingCallback):
        def post_epoch(self, epoch, epoch_loss, **kwargs):
            stamps.append(time.perf_counter())

    _train(spec, train, training_loop, train_kwargs, spec["epochs"], callbacks=[Stamp()])
    return {
        "epoch_s": [b - a for a, b in zip(stamps, stamps[1:])],
        "train_triples": int(train.num_triples),
    }


class _Enough(Exception):
    """Raised by :func:`_batch_clock`'s callback to end PyKEEN's training loop early.

    Not a ``RuntimeError``: the loop catches those (and ``MemoryError``) to write a failure
    checkpoint; this one passes through untouched.
    """


def _batch_clock(stop_after, max_seconds=None):
    """A callback stamping ``time.perf_counter()`` at every ``pre_batch`` call.

    After ``stop_after`` whole batches (at the next ``pre_batch``) it raises :class:`_Enough`;
    ``None``: never; with ``max_seconds`` also once the batches after the first (a warm-up)
    took that long, after at least one of them (the rule of ``bench_kg_scale.BatchClock``). An
    epoch that ends first gets a last stamp at ``post_epoch``. PyKEEN calls
    the user's callbacks before its optimiser callback, so the interval between two
    ``pre_batch`` stamps is one whole batch (forward, backward, step) plus the data loader's
    fetch of the next batch.
    """
    from pykeen.training.callbacks import TrainingCallback

    class Clock(TrainingCallback):
        def __init__(self):
            super().__init__()
            self.stamps = []

        def pre_batch(self, **kwargs):
            self.stamps.append(time.perf_counter())
            if stop_after is not None and len(self.stamps) > stop_after:
                raise _Enough
            if max_seconds is not None and len(self.stamps) > 2:
                if self.stamps[-1] - self.stamps[1] >= max_seconds:
                    raise _Enough

        def post_epoch(self, epoch, epoch_loss, **kwargs):
            # Reached only when the epoch has at most stop_after batches: this stamp ends its
            # last batch (plus the epoch's final gc.collect), as ours stamps after each step.
            self.stamps.append(time.perf_counter())

    return Clock()


def _count_batches(training_loop):
    """Record the batches per epoch (``len`` of the loop's data loader) in the returned dict."""
    seen = {}
    make = training_loop._create_training_data_loader

    def counted(*args, **kwargs):
        loader = make(*args, **kwargs)
        seen["batches"] = len(loader)
        return loader

    training_loop._create_training_data_loader = counted
    return seen


def time_batches(spec):
    """Seconds of batches 2 .. ``max_batches + 1`` of epoch 1 and the epoch's batch count."""
    train, _, _ = _factories(spec)
    _, training_loop, train_kwargs = _build(spec, train)
    seen = _count_batches(training_loop)
    clock = _batch_clock(spec["max_batches"] + 1, spec.get("max_seconds"))
    with contextlib.suppress(_Enough):  # the clock stops the loop after the batches asked
        _train(spec, train, training_loop, train_kwargs, 1, callbacks=[clock])
    stamps = clock.stamps  # one per started batch; an epoch shorter than asked gives fewer
    return {
        "batch_s": [b - a for a, b in zip(stamps[1:], stamps[2:])],
        "batches_per_epoch": seen["batches"],
        "train_triples": int(train.num_triples),
    }


def _rank_eval(model, evaluator, triples, filters):
    """Filtered (``triples`` plus ``filters``) both-sides realistic MRR, and the whole result."""
    result = evaluator.evaluate(model, triples, additional_filter_triples=filters, use_tqdm=False)
    return float(result.get_metric("both.realistic.inverse_harmonic_mean_rank")), result


def quality_budget(spec):
    """Validation MRR against wall time under ``budget_s``; test metrics of the best state."""
    import torch
    from pykeen.evaluation import RankBasedEvaluator
    from pykeen.training.callbacks import TrainingCallback

    train, valid, test = _factories(spec)
    model, training_loop, train_kwargs = _build(spec, train)
    evaluator = RankBasedEvaluator()
    budget, every = spec["budget_s"], spec["valid_every_s"]
    queries = valid.mapped_triples
    if spec.get("valid_labels"):  # a subset, as labels (the benchmark's --valid-triples)
        ent, rel = train.entity_to_id, train.relation_to_id
        rows = [[ent[h], rel[r], ent[t]] for h, r, t in spec["valid_labels"]]
        queries = torch.tensor(rows, dtype=valid.mapped_triples.dtype)
    filters = [train.mapped_triples, valid.mapped_triples, test.mapped_triples]
    curve, best = [], {"mrr": -1.0, "epoch": 0, "state": None}
    due = [every]  # the next validation is due at the first epoch end at or past this time

    class Budget(TrainingCallback):
        def post_epoch(self, epoch, epoch_loss, **kwargs):
            now = time.perf_counter() - start
            last = now >= budget or epoch >= spec["epochs"]
            if now >= due[0] or last:
                mrr, _ = _rank_eval(model, evaluator, queries, filters)
                now = time.perf_counter() - start
                curve.append({"epoch": epoch, "wall_s": now, "valid_mrr": mrr})
                if mrr > best["mrr"]:  # NaN never improves
                    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
                    best.update(mrr=mrr, epoch=epoch, state=state)
                due[0] = (now // every + 1) * every
            if last:
                self.training_loop._should_stop = True

    start = time.perf_counter()
    _train(spec, train, training_loop, train_kwargs, spec["epochs"], callbacks=[Budget()])
    wall = time.perf_counter() - start
    if best["state"] is not None:
        model.load_state_dict(best["state"])
    started = time.perf_counter()
    _, result = _rank_eval(
        model, evaluator, test.mapped_triples, [train.mapped_triples, valid.mapped_triples]
    )
    get = result.get_metric
    return {
        "curve": curve,
        "epochs": curve[-1]["epoch"] if curve else 0,
        "wall_s": wall,
        "best_epoch": best["epoch"],
        "best_valid_mrr": best["mrr"],
        "test_eval_s": time.perf_counter() - started,
        "test": {
            "mrr": float(get("both.realistic.inverse_harmonic_mean_rank")),
            "hits_at_1": float(get("both.realistic.hits_at_1")),
            "hits_at_3": float(get("both.realistic.hits_at_3")),
            "hits_at_10": float(get("both.realistic.hits_at_10")),
        },
    }


def _kib(key):
    with open("/proc/self/status") as handle:
        return int(re.search(rf"{key}:\s+(\d+)", handle.read()).group(1))


def memory(spec):
    """Peak resident memory above the post-setup baseline, training or evaluating."""
    import torch
    from pykeen.evaluation import RankBasedEvaluator

    torch.set_num_threads(spec["threads"])
    train, valid, test = _factories(spec)
    model, training_loop, train_kwargs = _build(spec, train)
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")  # reset VmHWM to the current resident size
    base = _kib("VmRSS")
    if spec.get("announce_base"):  # for a parent that may stop this process (bench_kg_scale)
        print(json.dumps({"base_mib": base / 1024}), flush=True)
    start = time.perf_counter()
    if spec["phase"] == "train" and spec.get("max_batches"):
        clock = _batch_clock(spec["max_batches"])
        with contextlib.suppress(_Enough):  # the first max_batches batches of epoch 1
            _train(spec, train, training_loop, train_kwargs, 1, callbacks=[clock])
    elif spec["phase"] == "train":
        _train(spec, train, training_loop, train_kwargs, spec["epochs"])
    else:
        RankBasedEvaluator().evaluate(
            model,
            test.mapped_triples,
            additional_filter_triples=[train.mapped_triples, valid.mapped_triples],
            use_tqdm=False,
        )
    seconds = time.perf_counter() - start
    return {"peak_mib": (_kib("VmHWM") - base) / 1024, "base_mib": base / 1024, "s": seconds}


JOBS = {
    "quality": quality,
    "time": timing,
    "time_batches": time_batches,
    "memory": memory,
    "quality_budget": quality_budget,
}


def run(spec):
    """Run one spec (dispatch on ``spec["job"]``) and return its JSON-ready result."""
    import torch

    torch.set_num_threads(spec["threads"])
    return JOBS[spec["job"]](spec)


if __name__ == "__main__":
    import warnings

    # PyKEEN's data loaders ask for pinned memory, which a CPU-only torch warns about per call.
    warnings.filterwarnings("ignore", message=".*pin_memory.*")
    if sys.argv[1:] == ["--serve"]:
        for line in sys.stdin:
            try:
                out = run(json.loads(line))
            except Exception as err:  # report and keep serving: one bad model ends no run
                out = {"error": f"{type(err).__name__}: {err}"}
            print(json.dumps(out), flush=True)
    else:
        print(json.dumps(run(json.loads(sys.argv[1]))))
