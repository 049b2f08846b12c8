import json

import pytest
import torch

import kg._epochs
import kg.checkpoint
import kg.training
from graphdata.errors import GraphDataError
from graphdata.triples import KGDataset
from kg.checkpoint import (
    check_compatible,
    dataset_fingerprint,
    load_checkpoint,
    save_checkpoint,
)
from kg.conve import ConvE
from kg.rotate import RotatE
from kg.training import Trainer, TrainingConfig, train
from kg.transe import TransE
from kg.tucker import TuckER


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _kg(n: int = 10, shift: int = 0) -> KGDataset:
    rows = [(f"e{i}", "next", f"e{(i + 1 + shift) % n}") for i in range(n)]
    rows += [(f"e{i}", "skip", f"e{(i + 2) % n}") for i in range(n)]
    rows += [(f"e{i}", "back", f"e{(i - 1) % n}") for i in range(0, n, 2)]
    return KGDataset.from_labeled(rows, rows[::4], rows[1::4], name="cycle")


# (model factory, config) per regime; dropout models test the global-RNG restore.
CASES = {
    "rotate-slcwa": (
        lambda ds: RotatE(ds.num_entities, ds.num_relations, dim=4, margin=3.0),
        dict(regime="slcwa", sampler="bernoulli", filter_negatives=True, num_negatives=3),
    ),
    "conve-1vsall-reciprocal": (
        lambda ds: ConvE(
            ds.num_entities, 2 * ds.num_relations, dim=8, embedding_height=2, num_filters=2
        ),
        dict(regime="1vsall", reciprocal=True),
    ),
    "tucker-kvsall": (
        lambda ds: TuckER(ds.num_entities, ds.num_relations, dim=4, relation_dim=3),
        dict(regime="kvsall", label_smoothing=0.1),
    ),
}


def _config(tmp_path, epochs, **kw):
    return TrainingConfig(
        epochs=epochs,
        batch_size=8,
        lr=0.01,
        progress=False,
        eval_every=1,
        patience=None,
        checkpoint_path=str(tmp_path / "ckpt.pt"),
        log_path=str(tmp_path / "log.jsonl"),
        **kw,
    )


def _state(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _same(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("case", sorted(CASES))
def test_resume_is_bit_identical_to_an_uninterrupted_run(tmp_path, case):
    make, kw = CASES[case]
    ds = _kg()
    straight_dir, split_dir = tmp_path / "straight", tmp_path / "split"
    straight = Trainer(make(ds), _config(straight_dir, 4, **kw)).fit(ds)
    # 2 epochs, then a fresh process-like start (new model object) resuming to 4 epochs
    Trainer(make(ds), _config(split_dir, 2, **kw)).fit(ds)
    resumed = Trainer(make(ds), _config(split_dir, 4, **kw)).fit(ds, resume=True)
    assert _same(_state(straight.model_), _state(resumed.model_))
    assert resumed.epochs_trained_ == 4 and resumed.best_epoch_ == straight.best_epoch_
    a, b = load_checkpoint(straight_dir / "ckpt.pt"), load_checkpoint(split_dir / "ckpt.pt")
    assert _same(a["model"]["state"], b["model"]["state"])
    for key in ("torch_cpu", "generator"):  # the random streams continue identically too
        assert torch.equal(a["rng"][key], b["rng"][key])
    strip = lambda path: [  # noqa: E731
        {k: v for k, v in json.loads(line).items() if k != "seconds"}
        for line in path.read_text().splitlines()
    ]
    assert strip(straight_dir / "log.jsonl") == strip(split_dir / "log.jsonl")


def test_resume_after_a_crash_mid_run(tmp_path, monkeypatch):
    make, kw = CASES["rotate-slcwa"]
    ds = _kg()
    straight = Trainer(make(ds), _config(tmp_path / "a", 4, **kw)).fit(ds)
    original = kg._epochs.Run.epoch

    def crash_in_epoch_3(self, bar, epoch):
        if epoch == 3:
            raise KeyboardInterrupt  # the run is killed half-way through epoch 3
        return original(self, bar, epoch)

    monkeypatch.setattr(kg._epochs.Run, "epoch", crash_in_epoch_3)
    with pytest.raises(KeyboardInterrupt):
        Trainer(make(ds), _config(tmp_path / "b", 4, **kw)).fit(ds)
    assert load_checkpoint(tmp_path / "b" / "ckpt.pt")["training"]["epoch"] == 2
    monkeypatch.setattr(kg._epochs.Run, "epoch", original)
    resumed = Trainer(make(ds), _config(tmp_path / "b", 4, **kw)).fit(ds, resume=True)
    assert _same(_state(straight.model_), _state(resumed.model_))


def test_checkpoint_is_weights_only_and_holds_labels(tmp_path):
    ds = _kg()
    make, kw = CASES["rotate-slcwa"]
    train(make(ds), ds, _config(tmp_path, 1, **kw))
    raw = torch.load(tmp_path / "ckpt.pt", weights_only=True)
    assert raw["format"] == "graphlib-kg-checkpoint"
    assert raw["vocabulary"]["entities"] == list(ds.entities.labels)
    assert raw["vocabulary"]["relations"] == list(ds.relations.labels)
    assert raw["model"]["name"] == "rotate" and raw["model"]["config"]["margin"] == 3.0
    assert raw["training"]["config"]["sampler"] == "bernoulli"
    assert set(raw["rng"]) == {"torch_cpu", "torch_cuda", "generator"}
    assert "state" in raw["optimizer"] and raw["training"]["epoch"] == 1
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_atomic_write_keeps_the_previous_file_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "c.pt"
    save_checkpoint(path, {"model": {"name": "x"}})
    before = path.read_bytes()

    def broken_save(obj, handle):
        handle.write(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(kg.checkpoint.torch, "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(path, {"model": {"name": "y"}})
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.pt"]


def test_refuses_other_model_vocabulary_or_triples(tmp_path):
    ds = _kg()
    make, kw = CASES["rotate-slcwa"]
    cfg = _config(tmp_path, 1, **kw)
    train(make(ds), ds, cfg)
    with pytest.raises(GraphDataError, match="trained with model 'rotate', not 'transe'"):
        train(TransE(ds.num_entities, ds.num_relations, dim=4), ds, cfg, resume=True)
    bigger = _kg(n=12)
    with pytest.raises(GraphDataError, match=r"entity vocabulary \(10 labels\) differs .* \(12"):
        train(make(bigger), bigger, cfg, resume=True)
    shifted = _kg(shift=3)  # same labels, other triples
    with pytest.raises(GraphDataError, match="trained on other triples"):
        train(make(shifted), shifted, cfg, resume=True)
    wider = RotatE(ds.num_entities, ds.num_relations, dim=6, margin=3.0)
    with pytest.raises(GraphDataError, match="model config"):
        train(wider, ds, cfg, resume=True)


def test_check_compatible_names_first_differing_label():
    ckpt = {
        "model": {"name": "rotate"},
        "vocabulary": {"entities": ["a", "b", "c"], "relations": ["r"]},
    }
    labels = ["a", "b", "c"]
    check_compatible(ckpt, model_name="rotate", entity_labels=labels, relation_labels=["r"])
    with pytest.raises(GraphDataError, match="at id 1: checkpoint 'b', dataset 'x'"):
        check_compatible(
            ckpt, model_name="rotate", entity_labels=["a", "x", "c"], relation_labels=["r"]
        )
    with pytest.raises(GraphDataError, match="relation vocabulary"):
        check_compatible(
            ckpt, model_name="rotate", entity_labels=["a", "b", "c"], relation_labels=["r", "s"]
        )


def test_load_rejects_missing_and_foreign_files(tmp_path):
    with pytest.raises(GraphDataError, match="checkpoint: no file at"):
        load_checkpoint(tmp_path / "nope.pt")
    torch.save({"weights": torch.zeros(2)}, tmp_path / "other.pt")
    with pytest.raises(GraphDataError, match="is not a graphlib KG checkpoint"):
        load_checkpoint(tmp_path / "other.pt")
    (tmp_path / "text.pt").write_text("hello")
    with pytest.raises(GraphDataError, match="could not be read as a weights-only torch file"):
        load_checkpoint(tmp_path / "text.pt")
    save_checkpoint(tmp_path / "old.pt", {"model": {}})
    data = torch.load(tmp_path / "old.pt", weights_only=True)
    torch.save({**data, "version": 0}, tmp_path / "old.pt")
    with pytest.raises(GraphDataError, match="layout version 0"):
        load_checkpoint(tmp_path / "old.pt")


def test_fingerprint_sees_labels_order_and_triples():
    t = torch.tensor([[0, 0, 1], [1, 0, 0]])
    base = dataset_fingerprint(["a", "b"], ["r"], [t])
    assert base == dataset_fingerprint(("a", "b"), ("r",), [t.clone()])
    assert base != dataset_fingerprint(["a", "b"], ["r"], [t.flip(0)])
    assert base != dataset_fingerprint(["ab"], ["r"], [t])
    assert base != dataset_fingerprint(["a", "b"], ["r"], [t[:1], t[1:]])


def test_resume_with_changed_hyperparameters_warns(tmp_path):
    ds = _kg()
    make, kw = CASES["rotate-slcwa"]
    train(make(ds), ds, _config(tmp_path, 1, **kw))
    changed = _config(tmp_path, 2, **kw)
    changed.lr = 0.5
    with pytest.warns(UserWarning, match=r"differs from the checkpoint's in lr \(0\.01 -> 0\.5\)"):
        trainer = Trainer(make(ds), changed).fit(ds, resume=True)
    # the new learning rate is used, not the one in the saved optimiser state
    saved = load_checkpoint(tmp_path / "ckpt.pt")["optimizer"]["param_groups"][0]["lr"]
    assert saved == 0.5 and trainer.epochs_trained_ == 2


def test_other_triples_error_names_evaluation_and_the_trained_dataset():
    ckpt = {
        "model": {"name": "distmult"},
        "vocabulary": {"entities": ["a", "b"], "relations": ["r"]},
        "dataset_fingerprint": "0" * 64,
        "dataset_name": "/data/nations",
    }
    with pytest.raises(
        GraphDataError,
        match=r"other triples .* resume, evaluate and predict only with the same dataset files "
        r"\(it was trained on '/data/nations'; pass that --dataset\)",
    ):
        check_compatible(
            ckpt,
            model_name="distmult",
            entity_labels=["a", "b"],
            relation_labels=["r"],
            fingerprint="1" * 64,
        )


def test_a_kill_right_after_the_checkpoint_write_loses_no_tracker_step(tmp_path, monkeypatch):
    # The kill lands after epoch 2's checkpoint is on disk: the resumed run starts at epoch 3,
    # so epoch 2 must already be in the tracker's file (it used to be missing: steps 1, 3, 4).
    from graphdata.tracking import JsonlTracker

    make, kw = CASES["rotate-slcwa"]
    ds = _kg()
    original = kg.training.save_checkpoint

    def killed_after_epoch_2(path, checkpoint):
        written = original(path, checkpoint)
        if checkpoint["training"]["epoch"] == 2:
            raise KeyboardInterrupt  # SIGKILL once the file is whole
        return written

    monkeypatch.setattr(kg.training, "save_checkpoint", killed_after_epoch_2)
    track = tmp_path / "track.jsonl"
    with pytest.raises(KeyboardInterrupt):
        Trainer(make(ds), _config(tmp_path, 4, **kw)).fit(ds, tracker=JsonlTracker(track))
    monkeypatch.setattr(kg.training, "save_checkpoint", original)
    Trainer(make(ds), _config(tmp_path, 4, **kw)).fit(ds, resume=True, tracker=JsonlTracker(track))
    straight = tmp_path / "straight"
    Trainer(make(ds), _config(straight, 4, **kw)).fit(
        ds, tracker=JsonlTracker(straight / "t.jsonl")
    )
    strip = lambda path: [  # noqa: E731
        {k: v for k, v in json.loads(line).items() if k != "seconds"}
        for line in path.read_text().splitlines()
    ]
    assert [r["step"] for r in strip(track)] == [1, 2, 3, 4]
    assert strip(track) == strip(straight / "t.jsonl")  # as if never killed
    logged = [
        json.loads(line)["epoch"] for line in (tmp_path / "log.jsonl").read_text().splitlines()
    ]
    assert logged == [1, 2, 3, 4]
