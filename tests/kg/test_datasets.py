"""kg.datasets: on_unknown recorded in the dataset name, so checkpoints reload their vocabulary."""

from __future__ import annotations

import warnings

import pytest
import torch

from graphdata.errors import GraphDataError, UnknownLabelsDropped
from graphdata.triples import KGDataset
from kg.checkpoint import load_checkpoint, save_checkpoint
from kg.datasets import dataset_on_unknown, load_checkpoint_with_dataset, load_dataset
from kg.training import Trainer, TrainingConfig, build_model

CPU = torch.device("cpu")


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _rows(n=6):
    return [(f"e{i}", "next", f"e{(i + 1) % n}") for i in range(n)]


@pytest.fixture
def unseen(tmp_path):
    """A folder whose valid and test splits use an entity ('stranger') absent from train."""
    rows = _rows()
    valid = [rows[0], ("e1", "next", "stranger")]
    test = [rows[1], ("stranger", "next", "e2"), ("e3", "next", "stranger")]
    KGDataset.from_labeled(rows, valid, test, on_unknown="extend").to_folder(tmp_path / "kg")
    return tmp_path / "kg"


def _quiet_load(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownLabelsDropped)
        return load_dataset(*args, **kwargs)


def test_names_record_a_non_default_mode_and_reload_it(unseen):
    with pytest.warns(UnknownLabelsDropped, match=r"dropped 1 of 2 valid and 2 of 3 test"):
        dropped = load_dataset(str(unseen))
    assert dropped.name == str(unseen.resolve())  # the default keeps the plain path
    assert (len(dropped.valid), len(dropped.test), dropped.num_entities) == (1, 1, 6)
    extended = load_dataset(str(unseen), on_unknown="extend")
    assert extended.name == f"{unseen.resolve()};on_unknown=extend"
    assert (len(extended.valid), len(extended.test), extended.num_entities) == (2, 3, 7)
    again = load_dataset(extended.name)  # the recorded mode is used
    assert again.name == extended.name and again.entities == extended.entities
    assert torch.equal(again.all_triples(), extended.all_triples())
    assert load_dataset(extended.name, on_unknown="extend").entities == extended.entities
    assert [dataset_on_unknown(d.name) for d in (dropped, extended)] == ["drop", "extend"]
    with pytest.raises(GraphDataError, match=r"3 valid/test triples .* 1 entities \['stranger'\]"):
        load_dataset(str(unseen), on_unknown="raise")


def test_a_mode_that_contradicts_the_recorded_one_is_refused(unseen):
    name = f"{unseen.resolve()};on_unknown=extend"
    with pytest.raises(
        GraphDataError, match=r"records on_unknown='extend', got 'drop'.*pass the plain folder"
    ):
        load_dataset(name, on_unknown="drop")
    with pytest.raises(GraphDataError, match=r"on_unknown: expected one of .*got 'keep'"):
        load_dataset(str(unseen), on_unknown="keep")  # type: ignore[arg-type]


def _train(dataset, path):
    config = TrainingConfig(
        epochs=1, batch_size=4, eval_every=0, progress=False, checkpoint_path=str(path)
    )
    Trainer(build_model("distmult", dataset, config, dim=4), config).fit(dataset)
    return path


def test_checkpoint_trained_with_extend_reloads_with_extend(unseen, tmp_path):
    dataset = load_dataset(str(unseen), on_unknown="extend")
    ckpt = _train(dataset, tmp_path / "run" / "checkpoint.pt")
    model, saved, reloaded = load_checkpoint_with_dataset(str(ckpt), None, CPU)
    assert saved["dataset_name"] == dataset.name
    assert list(reloaded.entities.labels) == saved["vocabulary"]["entities"]
    assert torch.equal(reloaded.test.mapped_triples, dataset.test.mapped_triples)
    assert model.num_entities == 7
    # the plain folder is read with drop: another vocabulary, refused with the fix
    with (
        pytest.warns(UnknownLabelsDropped),
        pytest.raises(
            GraphDataError,
            match=r"entity vocabulary \(7 labels\).*on_unknown='extend'.*pass --on-unknown extend",
        ),
    ):
        load_checkpoint_with_dataset(str(ckpt), str(unseen), CPU)
    with pytest.raises(GraphDataError, match=r"records on_unknown='extend', got 'raise'"):
        load_checkpoint_with_dataset(str(ckpt), None, CPU, on_unknown="raise")


def test_checkpoint_trained_with_drop_refuses_extend(unseen, tmp_path):
    dataset = _quiet_load(str(unseen))
    ckpt = _train(dataset, tmp_path / "run" / "checkpoint.pt")
    with pytest.warns(UnknownLabelsDropped):
        _, _, reloaded = load_checkpoint_with_dataset(str(ckpt), None, CPU)
    assert torch.equal(reloaded.all_triples(), dataset.all_triples())
    with pytest.raises(GraphDataError, match=r"vocabulary.*pass --on-unknown drop"):
        load_checkpoint_with_dataset(str(ckpt), None, CPU, on_unknown="extend")


def test_old_checkpoint_with_a_plain_path_name_still_loads(tmp_path):
    # Before drop became the default, the CLI read folders with "raise" and named them by
    # their plain absolute path; such a folder has no unknown labels, so drop reads the same.
    rows = _rows()
    KGDataset.from_labeled(rows, rows[:2], rows[2:4]).to_folder(tmp_path / "kg")
    folder = (tmp_path / "kg").resolve()
    old = KGDataset.from_folder(folder, name=str(folder), on_unknown="raise")
    ckpt = _train(old, tmp_path / "run" / "checkpoint.pt")
    assert load_checkpoint(ckpt)["dataset_name"] == str(folder)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, _, reloaded = load_checkpoint_with_dataset(str(ckpt), None, CPU)
    assert reloaded.name == str(folder)
    assert torch.equal(reloaded.all_triples(), old.all_triples())


def test_fingerprint_still_refuses_other_triples_with_the_same_vocabulary(unseen, tmp_path):
    dataset = load_dataset(str(unseen), on_unknown="extend")
    ckpt = _train(dataset, tmp_path / "run" / "checkpoint.pt")
    data = load_checkpoint(ckpt)
    data["dataset_fingerprint"] = "0" * 64
    save_checkpoint(tmp_path / "edited.pt", data)
    with pytest.raises(GraphDataError, match=r"trained on other triples"):
        load_checkpoint_with_dataset(str(tmp_path / "edited.pt"), None, CPU)


def test_fb15k237_loads_with_pykeen_counts(datasets_dir):
    folder = datasets_dir / "kg" / "fb15k237"
    if not (folder / "train.txt").is_file():
        pytest.skip(f"{folder} is absent")
    with pytest.warns(UnknownLabelsDropped) as record:
        ds = load_dataset(str(folder))
    assert len(record) == 1
    assert (
        str(record[0].message)
        .split(" whose")[0]
        .endswith("dropped 9 of 17,535 valid and 28 of 20,466 test triples")
    )
    # PyKEEN's FB15k237 factories: 272,115 / 17,526 / 20,438 triples, 14,505 training entities
    assert (len(ds.train), len(ds.valid), len(ds.test)) == (272_115, 17_526, 20_438)
    assert (ds.num_entities, ds.num_relations) == (14_505, 237)
