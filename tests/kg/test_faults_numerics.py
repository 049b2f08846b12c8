"""Fault injection for KG numerics: non-finite scores, diverging training, numeric options.

Issue #15 ("Wrong numbers"): a NaN true score used to rank 0.5 (MRR 2.0, Hits@1 1.0, MR 0.5,
exit 0), divergence was seen on the loss only (TuckER's ``bn1.running_var = inf`` went into the
checkpoint), and ``nan``/``inf`` options were accepted. Each test here fails on that code.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from graphdata.errors import GraphDataError
from graphdata.filter_index import FilterIndex
from graphdata.triples import KGDataset
from kg.checkpoint import load_checkpoint, save_checkpoint
from kg.config import TrainingConfig
from kg.distmult import DistMult
from kg.evaluation import NonFiniteScoreError, RankMetrics, evaluate
from kg.losses import bce_loss, margin_ranking_loss, nssa_loss, one_vs_all_loss
from kg.models import MODELS
from kg.rotate import RotatE
from kg.training import Trainer, TrainingDivergedError, train
from kg.tucker import TuckER

E, R = 7, 2
NAN, INF = float("nan"), float("inf")


@pytest.fixture(params=["dense", "csr"])
def filter_path(request, monkeypatch):
    """Run a test with the filter read from a dense mask table and from the CSR look-up."""
    if request.param == "csr":
        monkeypatch.setattr(FilterIndex, "DENSE_MASK_LIMIT", 0)
    return request.param


def table_scorer(table: torch.Tensor):
    """A plain scorer reading a fixed ``[E, R, E]`` score table."""

    def score(h, r, t):
        return table[h, r, t]

    return score


def tiny(seed: int = 0):
    """Integer scores (ties), known triples and the test triples (every other known one)."""
    gen = torch.Generator().manual_seed(seed)
    table = torch.randint(0, 3, (E, R, E), generator=gen).float()
    known = torch.randint(0, E, (16, 3), generator=gen)
    known[:, 1] %= R
    known = torch.unique(known, dim=0)
    return table, known, known[::2]


def reference(table, test, known):
    """Brute force per side: (optimistic, pessimistic, options, non-finite) of each query.

    A query is non-finite when its true score is non-finite or an unfiltered candidate scores
    NaN or +inf; it then gets the worst rank, the number of unfiltered candidates.
    """
    known_set = {tuple(x) for x in known.tolist()}
    out = []
    for side in ("head", "tail"):
        rows = []
        for h, r, t in test.tolist():
            true = h if side == "head" else t
            cells = [(e, r, t) if side == "head" else (h, r, e) for e in range(E)]
            cands = [
                float(table[c]) for e, c in enumerate(cells) if e == true or c not in known_set
            ]
            s = float(table[h, r, t])
            broken = not math.isfinite(s) or any(math.isnan(c) or c == INF for c in cands)
            if broken:
                rows.append((len(cands), len(cands), len(cands), True))
            else:
                rows.append(
                    (
                        1 + sum(c > s for c in cands),
                        sum(c >= s for c in cands),
                        sum(math.isfinite(c) for c in cands),
                        False,
                    )
                )
        out.append(rows)
    return torch.tensor(out, dtype=torch.float64)  # [2, N, 4]


def assert_in_range(m: RankMetrics) -> None:
    """Every headline metric lies in its range, for every side and rank type."""
    for side in ("both", "head", "tail"):
        for kind in ("realistic", "optimistic", "pessimistic"):
            s = m.summary(side, kind)
            assert 0 < s["mrr"] <= 1 and s["mr"] >= 1, s
            assert all(0 <= s[f"hits_at_{k}"] <= 1 for k in m.ks), s
    assert (m.ranks() <= m.options.flatten()).all() and (m.ranks() >= 1).all()


# ---- ranking a model whose scores are NaN / +inf on some rows --------------------------------


def test_nan_true_score_is_never_ranked_and_the_error_names_count_relation_and_side(filter_path):
    table, known, test = tiny(1)
    rel1 = test[test[:, 1] == 1]
    table[rel1[:, 0], 1, rel1[:, 2]] = NAN  # relation 1's true scores: a diverged model
    index = FilterIndex.from_triples(known, num_entities=E, num_relations=R)
    with pytest.raises(NonFiniteScoreError) as info:
        evaluate(
            table_scorer(table), test, index, num_entities=E, relation_labels=["parent", "child"]
        )
    err = info.value
    # Every relation-1 query is non-finite on both sides (its true score is NaN); relation-0
    # queries may be too where a relation-1 test cell is one of their unfiltered candidates.
    assert err.relations == [1] and err.count == 2 * rel1.size(0)
    assert err.total == 2 * test.size(0)
    assert err.sides == {"head": rel1.size(0), "tail": rel1.size(0)}
    message = str(err)
    assert f"{err.count} of {err.total} ranked queries" in message and "1 ('child')" in message
    assert "lower learning rate" in message and "nonfinite='worst'" in message
    # Before the fix: rank 0.5 for each such query, so the MRR exceeded 1.
    with pytest.warns(RuntimeWarning, match=f"{err.count} of {err.total} ranked queries"):
        worst = evaluate(table_scorer(table), test, index, num_entities=E, nonfinite="worst")
    assert worst.num_nonfinite == err.count
    assert_in_range(worst)


@pytest.mark.parametrize(
    "poison",
    ["nan_true", "inf_true", "minus_inf_true", "nan_candidate", "inf_candidate", "nan_row"],
)
def test_worst_mode_matches_brute_force_and_stays_in_range(poison, filter_path):
    table, known, test = tiny(2)
    h, r, t = test[0].tolist()
    if poison.endswith("_true"):
        table[h, r, t] = {"nan": NAN, "inf": INF, "minus": -INF}[poison.split("_")[0]]
    elif poison == "nan_row":
        table[h, r, :] = NAN
    else:
        known_cells = {tuple(x) for x in known.tolist()}
        cell = next(e for e in range(E) if e != t and (h, r, e) not in known_cells)
        table[h, r, cell] = NAN if poison == "nan_candidate" else INF
    index = FilterIndex.from_triples(known, num_entities=E, num_relations=R)
    with pytest.raises(NonFiniteScoreError):
        evaluate(table_scorer(table), test, index, num_entities=E)
    with pytest.warns(RuntimeWarning, match="counted as the worst rank"):
        m = evaluate(table_scorer(table), test, index, num_entities=E, nonfinite="worst")
    expected = reference(table, test, known)
    assert m.optimistic.tolist() == expected[..., 0].long().tolist()
    assert m.pessimistic.tolist() == expected[..., 1].long().tolist()
    assert m.options.tolist() == expected[..., 2].long().tolist()
    assert m.nonfinite.tolist() == expected[..., 3].bool().tolist()
    assert m.nonfinite[1, 0]  # the poisoned tail query (h, r, ?) of triple 0
    assert m.to_dict()["num_nonfinite_queries"] == m.num_nonfinite > 0
    assert_in_range(m)


def test_nan_and_inf_at_filtered_cells_are_ignored(filter_path):
    # Filtered cells read -inf by construction (+inf - inf = NaN with the additive mask): not
    # to be confused with the model's own non-finite scores.
    table, known, test = tiny(3)
    others = known[~FilterIndex.from_triples(test, num_entities=E, num_relations=R).contains(known)]
    table[others[:, 0], others[:, 1], others[:, 2]] = torch.tensor([NAN, INF] * len(others))[
        : len(others)
    ]
    table[0, 0, 0] = -INF if not (test == torch.tensor([0, 0, 0])).all(1).any() else 0.0
    index = FilterIndex.from_triples(known, num_entities=E, num_relations=R)
    m = evaluate(table_scorer(table), test, index, num_entities=E)
    expected = reference(table, test, known)
    assert not expected[..., 3].any() and m.nonfinite is None
    assert m.optimistic.tolist() == expected[..., 0].long().tolist()
    assert m.options.tolist() == expected[..., 2].long().tolist()


@given(
    seed=st.integers(0, 2**16),
    kinds=st.lists(st.sampled_from([NAN, INF, -INF]), min_size=1, max_size=12),
    raw=st.booleans(),
)
def test_any_injected_non_finite_scores_raise_exactly_when_brute_force_says(seed, kinds, raw):
    table, known, test = tiny(seed % 50)
    gen = torch.Generator().manual_seed(seed)
    cells = torch.randint(0, E * R * E, (len(kinds),), generator=gen)
    table.view(-1)[cells] = torch.tensor(kinds)
    index = None if raw else FilterIndex.from_triples(known, num_entities=E, num_relations=R)
    expected = reference(table, test, known if not raw else known[:0])
    broken = bool(expected[..., 3].any())
    if broken:
        with pytest.raises(NonFiniteScoreError):
            evaluate(table_scorer(table), test, index, num_entities=E)
    with torch.no_grad(), pytest.MonkeyPatch.context() as mp:
        mp.setattr("warnings.warn", lambda *a, **k: None)
        m = evaluate(table_scorer(table), test, index, num_entities=E, nonfinite="worst")
    assert m.optimistic.tolist() == expected[..., 0].long().tolist()
    assert m.pessimistic.tolist() == expected[..., 1].long().tolist()
    assert m.num_nonfinite == int(expected[..., 3].sum())
    assert_in_range(m)


def test_a_model_with_a_nan_embedding_is_refused_on_both_scoring_paths():
    torch.manual_seed(0)
    model = DistMult(E, R, dim=4)
    with torch.no_grad():
        model.entity.weight[3] = NAN  # every query scores entity 3 as a NaN candidate
    test = torch.tensor([[0, 0, 1], [2, 1, 4]])
    index = FilterIndex.from_triples(test, num_entities=E, num_relations=R)
    with pytest.raises(NonFiniteScoreError, match="4 of 4 ranked queries"):
        evaluate(model, test, index)
    with pytest.warns(RuntimeWarning, match="counted as the worst rank"):
        m = evaluate(model, test, index, nonfinite="worst", batch_size=1)
    assert (m.optimistic == E).all() and (m.options == E).all()  # nothing filtered but itself
    assert_in_range(m)


def test_invalid_nonfinite_choice_is_refused():
    table, known, test = tiny()
    with pytest.raises(GraphDataError, match=r"nonfinite: expected one of \('raise', 'worst'\)"):
        evaluate(table_scorer(table), test, None, num_entities=E, nonfinite="ignore")


# ---- diverging training ----------------------------------------------------------------------


def _cycle_kg(n: int = 8) -> KGDataset:
    rows = [(f"e{i}", "next", f"e{(i + 1) % n}") for i in range(n)]
    rows += [(f"e{i}", "skip", f"e{(i + 2) % n}") for i in range(n)]
    return KGDataset.from_labeled(rows, rows[::3], rows[1::3], name="cycle")


def _cfg(**kw) -> TrainingConfig:
    base = dict(epochs=3, batch_size=8, num_negatives=4, progress=False, eval_every=0, lr=0.05)
    return TrainingConfig(**{**base, **kw})


def _finite(state) -> bool:
    return all(torch.isfinite(v).all() for v in state.values() if v.is_floating_point())


class Poisoned(DistMult):
    """DistMult that, from epoch ``poison_at`` on, breaks one way after each optimiser step."""

    name = "distmult"

    def __init__(self, *args, how: str = "buffer", poison_at: int = 10**9, **kw) -> None:
        super().__init__(*args, **kw)
        self.how, self.poison_at, self.steps = how, poison_at, 0
        self.register_buffer("running", torch.zeros(3))

    def post_step(self) -> None:
        self.steps += 1
        if self.steps < self.poison_at:
            return
        with torch.no_grad():
            if self.how == "buffer":
                self.running.fill_(INF)  # the loss stays finite: only the buffer shows it
            elif self.how == "parameter":
                self.relation.weight[0, 0] = NAN
            elif self.how == "overflow":
                self.entity.weight.fill_(1e30)  # finite parameters, inf scores

    def _both_sides(self, head_side, tail_side, entities):
        out = super()._both_sides(head_side, tail_side, entities)
        if self.how == "valid" and self.steps >= self.poison_at:
            out = out.clone()
            out[:, 0] = NAN  # evaluation (not training) scores NaN, parameters finite
        return out


def test_real_divergence_sgd_huge_lr_raises_instead_of_reporting_mrr_two(tmp_path):
    # The reproduction in miniature: one SGD step at lr 1e30, validated after it. The
    # loss of that step is finite; before the fix the run reported MRR 2.0 and saved the state.
    ds, ckpt = _cycle_kg(), tmp_path / "run.pt"
    cfg = _cfg(
        epochs=1,
        batch_size=100_000,
        optimizer="sgd",
        lr=1e30,
        eval_every=1,
        regime="1vsall",
        checkpoint_path=str(ckpt),
    )
    with pytest.raises(TrainingDivergedError, match=r"in epoch 1 with learning rate lr=1e\+30"):
        train(DistMult(8, 2, dim=16), ds, cfg)
    assert not ckpt.exists()  # nothing non-finite was written


def test_real_tucker_batch_norm_running_var_overflow_is_divergence(tmp_path):
    ds, ckpt = _cycle_kg(), tmp_path / "run.pt"
    cfg = TrainingConfig.from_defaults(
        "tucker", epochs=2, batch_size=8, lr=1e6, progress=False, checkpoint_path=str(ckpt)
    )
    with pytest.raises(TrainingDivergedError, match=r"'bn1\.running_var' holds inf"):
        train(TuckER(8, 4, dim=8, relation_dim=4), ds, cfg)
    assert not ckpt.exists()


@pytest.mark.parametrize(
    ("how", "match"),
    [
        ("buffer", r"'running' holds inf"),
        ("parameter", r"'relation\.weight' holds nan"),
        ("overflow", r"scores of training queries overflowed"),
    ],
)
def test_checkpoint_is_never_overwritten_by_a_non_finite_state(tmp_path, how, match):
    ds, ckpt = _cycle_kg(), tmp_path / "run.pt"
    model = Poisoned(8, 2, dim=6, how=how)
    train(model, ds, _cfg(epochs=2, checkpoint_path=str(ckpt)))
    saved, good = ckpt.read_bytes(), {k: v.clone() for k, v in model.state_dict().items()}
    model.poison_at = model.steps + 2  # the last step of epoch 3 (two batches an epoch)
    expected = match + r".* in epoch 3 .*last good epoch is 2"
    with pytest.raises(TrainingDivergedError, match=expected):
        train(model, ds, _cfg(epochs=4, checkpoint_path=str(ckpt)), resume=True)
    assert ckpt.read_bytes() == saved
    # The model holds the last good checkpoint, which is finite.
    assert _finite(model.state_dict())
    assert all(torch.equal(v, good[k]) for k, v in model.state_dict().items())


def test_non_finite_validation_is_divergence_and_the_best_state_restored_is_finite():
    ds = _cycle_kg()
    model = Poisoned(8, 2, dim=6, how="valid")
    batches = 2  # 16 training triples in batches of 8
    model.poison_at = 2 * batches + 1  # validation after epoch 3 sees NaN scores
    trainer = Trainer(model, _cfg(epochs=6, eval_every=1, patience=None))
    with pytest.raises(TrainingDivergedError, match=r"validation failed: scores: .* in epoch 3"):
        trainer.fit(ds)
    assert _finite(model.state_dict())
    model.how = "plain"  # the restored state is the best validated one and scores finitely
    evaluate(model, ds.valid.mapped_triples, ds.filter_index())


def test_resuming_a_checkpoint_that_holds_inf_is_refused(tmp_path):
    # A checkpoint written by the old code (inf in a buffer) must not be trained on.
    ds, ckpt = _cycle_kg(), tmp_path / "run.pt"
    model = Poisoned(8, 2, dim=6)
    train(model, ds, _cfg(epochs=1, checkpoint_path=str(ckpt)))
    data = load_checkpoint(ckpt)
    data["model"]["state"]["running"] = torch.full((3,), INF)
    save_checkpoint(ckpt, data)
    with pytest.raises(TrainingDivergedError, match=r"holds a non-finite model state"):
        train(Poisoned(8, 2, dim=6), ds, _cfg(epochs=2, checkpoint_path=str(ckpt)), resume=True)


class NanScores(DistMult):
    """DistMult whose training scores (not the parameters) are NaN while ``poison`` is set."""

    name = "distmult"
    poison = False

    def score_tails(self, head_index, rel_type, entities=None):
        scores = super().score_tails(head_index, rel_type, entities)
        return scores * NAN if self.poison and self.training else scores


@pytest.mark.parametrize("loss", ["cross_entropy", "bce"])
def test_a_nan_loss_is_divergence_and_the_last_good_checkpoint_is_kept(tmp_path, loss):
    # kg.losses follows torch: NaN scores give a NaN loss; the trainer's guard (kg.training)
    # turns it into TrainingDivergedError instead of a NaN epoch loss or a NaN model.
    ds, ckpt = _cycle_kg(), tmp_path / "run.pt"
    regime = "1vsall" if loss == "cross_entropy" else "kvsall"
    model = NanScores(8, 2, dim=6)
    train(model, ds, _cfg(epochs=1, regime=regime, loss=loss, checkpoint_path=str(ckpt)))
    saved, good = ckpt.read_bytes(), {k: v.clone() for k, v in model.state_dict().items()}
    model.poison = True
    cfg = _cfg(epochs=2, regime=regime, loss=loss, checkpoint_path=str(ckpt))
    with pytest.raises(
        TrainingDivergedError, match=r"^loss became nan in epoch 2 .*last good epoch is 1"
    ):
        train(model, ds, cfg, resume=True)
    assert ckpt.read_bytes() == saved
    assert all(torch.equal(v, good[k]) for k, v in model.state_dict().items())


def test_a_finite_run_is_unchanged_by_the_checks():
    ds = _cycle_kg()
    a = train(DistMult(8, 2, dim=6), ds, _cfg(eval_every=1))
    assert a.epochs_trained_ == 3 and 0 < a.best_valid_mrr_ <= 1


# ---- numeric options -------------------------------------------------------------------------

#: Float fields: (name, flag, an in-range finite value strategy).
FLOAT_FIELDS = {
    "lr": st.floats(1e-8, 10.0),
    "margin": st.floats(0.0, 100.0),
    "adversarial_temperature": st.floats(0.0, 10.0),
    "label_smoothing": st.floats(0.0, 0.999),
    "regularizer_weight": st.floats(0.0, 1.0),
    "grad_clip": st.floats(1e-6, 100.0),
}


def _with(name, value) -> TrainingConfig:
    extra = {}
    if name == "margin":
        extra["loss"] = "margin"
    if name == "label_smoothing":
        extra = {"regime": "1vsall"}
    if name == "regularizer_weight":
        extra["regularizer"] = "n3"
    return TrainingConfig(**{**extra, name: value})


@given(
    name=st.sampled_from(sorted(FLOAT_FIELDS)),
    value=st.sampled_from([NAN, INF, -INF, -NAN, 1e308 * 10]),
)
def test_every_float_option_refuses_non_finite_values_naming_field_flag_and_fix(name, value):
    flag = "--" + name.replace("_", "-")
    with pytest.raises(
        GraphDataError,
        match=rf"^{name} \({flag}\): expected a finite number .*"
        rf"got {value!r}; pass ",
    ):
        _with(name, value).validate()


@given(data=st.data(), name=st.sampled_from(sorted(FLOAT_FIELDS)))
def test_every_float_option_accepts_in_range_finite_values(data, name):
    _with(name, data.draw(FLOAT_FIELDS[name])).validate()


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        (dict(lr=0.0), r"lr \(--lr\): expected a finite number > 0, got 0.0"),
        (dict(lr=-1e-3), r"lr \(--lr\): expected a finite number > 0"),
        (dict(margin=-1.0, loss="margin"), r"margin \(--margin\): expected a finite number >= 0"),
        (dict(adversarial_temperature=-0.5), r"adversarial_temperature .*>= 0, got -0.5"),
        (dict(label_smoothing=1.0, regime="1vsall"), r"label_smoothing .*in \[0, 1\), got 1.0"),
        (dict(regularizer_weight=-1.0, regularizer="n3"), r"regularizer_weight .*>= 0"),
        (dict(grad_clip=0.0), r"grad_clip \(--grad-clip\): expected a finite number > 0 or None"),
        (dict(lr="0.1"), r"lr \(--lr\): expected a finite number > 0, got '0.1'"),
        (dict(epochs=2.5), r"epochs \(--epochs\): expected an int >= 1, got 2.5"),
        (dict(epochs=True), r"epochs \(--epochs\): expected an int >= 1, got True"),
        (dict(batch_size=0), r"batch_size \(--batch-size\): expected an int >= 1, got 0"),
        (dict(num_negatives=-3), r"num_negatives \(--num-negatives\): expected an int >= 1"),
        (dict(eval_every=-1), r"eval_every \(--eval-every\): expected an int >= 0, got -1"),
        (dict(eval_every=1.5), r"eval_every \(--eval-every\): expected an int >= 0, got 1.5"),
        (dict(patience=0), r"patience \(--patience\): expected an int >= 1 or None, got 0"),
        (dict(seed=-1), r"seed \(--seed\): expected an int in \[0, 18446744073709551615\]"),
        (dict(seed=2**64), r"seed \(--seed\): expected an int in"),
        (
            dict(checkpoint_every=0),
            r"checkpoint_every \(--checkpoint-every\): expected an int >= 1",
        ),
        (dict(reciprocal="yes"), r"reciprocal: expected True or False, got 'yes'"),
    ],
)
def test_out_of_range_and_mistyped_options_are_refused(kw, match):
    with pytest.raises(GraphDataError, match=match):
        TrainingConfig(**kw).validate()


@given(
    name=st.sampled_from(
        [
            "epochs",
            "batch_size",
            "num_negatives",
            "checkpoint_every",
            "eval_every",
            "patience",
            "seed",
        ]
    ),
    value=st.integers(-(2**70), 2**70),
)
def test_int_options_accept_exactly_their_range(name, value):
    low = 0 if name in ("eval_every", "seed") else 1
    high = 2**64 - 1 if name == "seed" else math.inf
    cfg = TrainingConfig(**{name: value})
    if low <= value <= high:
        cfg.validate()
    else:
        with pytest.raises(GraphDataError, match=rf"^{name} \(--"):
            cfg.validate()


def test_nan_temperature_no_longer_drops_every_negative_in_the_loss():
    pos, neg = torch.tensor([1.0]), torch.tensor([[0.5, 2.0]])
    with pytest.raises(GraphDataError, match=r"adversarial_temperature: expected a finite"):
        nssa_loss(pos, neg, adversarial_temperature=NAN)
    for fn, kw in (
        (nssa_loss, dict(margin=INF)),
        (margin_ranking_loss, dict(margin=NAN)),
        (bce_loss, dict(label_smoothing=NAN)),
    ):
        with pytest.raises(GraphDataError, match="expected a finite number"):
            fn(pos, neg, **kw)
    with pytest.raises(GraphDataError, match=r"label_smoothing: expected a finite number in"):
        one_vs_all_loss(torch.zeros(1, 3), torch.tensor([0]), label_smoothing=1.5)


# ---- model constructors ----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(MODELS))
def test_absurd_dim_is_refused_before_anything_is_allocated(name):
    dim = 10**12  # ConvE's default embedding_height 10 divides it
    expected = r"dim: .*needs about [\d,.]+ GiB .* pass a smaller dim"
    with pytest.raises(GraphDataError, match=expected):
        MODELS[name](100, 4, dim)


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: TuckER(5, 2, dim=4, input_dropout=NAN), r"input_dropout: expected a dropout rate"),
        (lambda: TuckER(5, 2, dim=4, hidden_dropout2=1.0), r"hidden_dropout2: expected a dropout"),
        (
            lambda: MODELS["conve"](
                5, 2, dim=8, embedding_height=2, num_filters=2, hidden_dropout=-0.1
            ),
            r"hidden_dropout: expected a dropout rate",
        ),
        (
            lambda: MODELS["conve"](5, 2, dim=8, embedding_height=2, num_filters=0),
            r"num_filters: expected a positive int",
        ),
        (lambda: RotatE(5, 2, dim=4, margin=NAN), r"margin: expected a finite number >= 0"),
        (lambda: TuckER(5, 2, dim=4, relation_dim=True), r"relation_dim: expected a positive int"),
    ],
)
def test_non_finite_model_arguments_are_refused(build, match):
    with pytest.raises(GraphDataError, match=match):
        build()


def test_a_folder_at_the_checkpoint_path_is_refused_before_training(tmp_path):
    # Before: resume skipped the folder (not a file), trained from scratch for an epoch, then
    # died in save_checkpoint with IsADirectoryError.
    from graphdata.synthetic import family_kg
    from kg import Trainer, TrainingConfig, build_model

    dataset = family_kg(40, seed=0).dataset
    (tmp_path / "checkpoint.pt").mkdir()
    config = TrainingConfig.from_defaults(
        "distmult", epochs=1, progress=False, checkpoint_path=str(tmp_path / "checkpoint.pt")
    )
    trainer = Trainer(build_model("distmult", dataset, config, dim=8), config)
    for resume in (True, False):
        with pytest.raises(GraphDataError, match=r"checkpoint_path: expected a checkpoint file"):
            trainer.fit(dataset, resume=resume)


@given(
    n=st.integers(1, 5000),
    position=st.floats(0, 1, exclude_max=True),
    bad=st.sampled_from([NAN, INF, -INF, None]),
    dtype=st.sampled_from([torch.float32, torch.bfloat16, torch.complex64]),
)
def test_nonfinite_check_agrees_with_isfinite(n, position, bad, dtype):
    # Oracle: torch.isfinite entry by entry; one bad value anywhere in the table must be found.
    from kg.training import _nonfinite_entries

    values = torch.randn(n, dtype=torch.float32).to(dtype)
    if bad is not None:
        values[int(position * n)] = bad
    expected_ok = bool(torch.isfinite(values).all())
    problem = _nonfinite_entries({"w": values, "steps": torch.tensor([3])})
    assert (problem is None) == expected_ok
    if not expected_ok:
        assert problem.startswith("'w' holds")
    assert _nonfinite_entries({"empty": torch.zeros(0)}) is None
