"""Valid/test labels unseen in train: drop (default, PyKEEN's behaviour), raise or extend."""

from __future__ import annotations

import warnings

import pytest
import torch

from graphdata.errors import GraphDataError, UnknownLabelsDropped
from graphdata.triples import ON_UNKNOWN, KGDataset

TRAIN = [("ann", "parent", "bob"), ("bob", "parent", "cy"), ("cy", "likes", "ann")]
# valid: 1 of 3 uses the unseen entity 'zed'; test: 2 of 4 use 'zed' or the unseen relation
VALID = [("ann", "parent", "cy"), ("zed", "parent", "ann"), ("bob", "likes", "cy")]
TEST = [
    ("bob", "parent", "ann"),
    ("cy", "spouse", "bob"),
    ("ann", "likes", "zed"),
    ("cy", "parent", "bob"),
]
KNOWN_VALID = [VALID[0], VALID[2]]
KNOWN_TEST = [TEST[0], TEST[3]]


def _write(folder, **splits):
    folder.mkdir(parents=True, exist_ok=True)
    for split, rows in splits.items():
        (folder / f"{split}.txt").write_text("".join("\t".join(row) + "\n" for row in rows))
    return folder


def test_default_drops_with_one_warning_counting_each_split(tmp_path):
    folder = _write(tmp_path / "toy", train=TRAIN, valid=VALID, test=TEST)
    with pytest.warns(UnknownLabelsDropped) as record:
        ds = KGDataset.from_folder(folder)
    assert len(record) == 1  # one warning for the dataset, not one per split
    message = str(record[0].message)
    assert message.startswith(
        "toy: dropped 1 of 3 valid and 2 of 4 test triples whose labels do not occur in "
        "train.txt (1 entities, e.g. ['zed']; 1 relations, e.g. ['spouse'])"
    )
    assert "on_unknown='raise' (--on-unknown raise)" in message and "'extend'" in message
    assert issubclass(UnknownLabelsDropped, UserWarning)
    # oracle: the same folder with the unknown triples removed by hand, read strictly
    clean = _write(tmp_path / "clean", train=TRAIN, valid=KNOWN_VALID, test=KNOWN_TEST)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        expected = KGDataset.from_folder(clean, on_unknown="raise")
    assert ds.entities == expected.entities and ds.relations == expected.relations
    for split in ("train", "valid", "test"):
        assert torch.equal(ds.splits[split].mapped_triples, expected.splits[split].mapped_triples)
    assert ds.valid.to_labeled_triples() == KNOWN_VALID
    assert ds.test.to_labeled_triples() == KNOWN_TEST


def test_warning_names_only_the_splits_that_lost_triples_and_counts_with_commas():
    train = [(f"e{i}", "r", f"e{i + 1}") for i in range(1200)]
    test = [*train[:1100], ("e0", "r", "new")]
    with pytest.warns(UnknownLabelsDropped) as record:
        ds = KGDataset.from_labeled(train, train[:5], test, name="big")
    assert [str(w.message).split(" whose")[0] for w in record] == [
        "big: dropped 1 of 1,101 test triples"
    ]
    assert "1 entities, e.g. ['new']; 0 relations)" in str(record[0].message)
    assert len(ds.valid) == 5 and len(ds.test) == 1100


def test_nothing_unknown_means_no_warning_and_every_mode_agrees(tmp_path):
    folder = _write(tmp_path / "ok", train=TRAIN, valid=KNOWN_VALID, test=KNOWN_TEST)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = [KGDataset.from_folder(folder, on_unknown=mode) for mode in ON_UNKNOWN]
    for ds in loaded[1:]:
        assert ds.entities == loaded[0].entities
        assert torch.equal(ds.all_triples(), loaded[0].all_triples())


def test_raise_names_the_keyword_and_the_flag(tmp_path):
    folder = _write(tmp_path / "toy", train=TRAIN, valid=VALID, test=TEST)
    with pytest.raises(
        GraphDataError,
        match=r"3 valid/test triples .*1 entities \['zed'\] and 1 relations \['spouse'\].*"
        r"on_unknown='drop' \(--on-unknown drop\).*on_unknown='extend' \(--on-unknown extend\)",
    ):
        KGDataset.from_folder(folder, on_unknown="raise")


def test_extend_keeps_every_triple_with_new_ids_after_train(tmp_path):
    folder = _write(tmp_path / "toy", train=TRAIN, valid=VALID, test=TEST)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = KGDataset.from_folder(folder, on_unknown="extend")
    assert ds.entities.labels == ("ann", "bob", "cy", "zed")
    assert ds.relations.labels == ("likes", "parent", "spouse")
    assert ds.valid.to_labeled_triples() == VALID and ds.test.to_labeled_triples() == TEST


@pytest.mark.parametrize("mode", ["skip", "Drop", ""])
def test_bad_mode_is_refused_with_the_choices(mode):
    with pytest.raises(GraphDataError, match=r"on_unknown: expected one of \('drop', 'raise'"):
        KGDataset.from_labeled(TRAIN, KNOWN_VALID, KNOWN_TEST, on_unknown=mode)  # type: ignore[arg-type]


def test_warning_can_be_filtered_by_its_class(tmp_path):
    folder = _write(tmp_path / "toy", train=TRAIN, valid=VALID, test=TEST)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=UnknownLabelsDropped)
        ds = KGDataset.from_folder(folder)
    assert len(ds.test) == 2
