from __future__ import annotations

from collections import defaultdict

import pytest

from graphdata.errors import GraphDataError, TSVFormatError
from graphdata.kg_stats import KGStatistics, describe, kg_statistics
from graphdata.triples import KGDataset, TripleSet

# One relation of each type, plus r5 exactly at the 1.5 threshold (tph = 3/2, counts as N).
TRAIN = [
    ("a", "r1", "b"),
    ("c", "r1", "d"),  # 1-1
    ("a", "r2", "b"),
    ("a", "r2", "c"),
    ("a", "r2", "d"),  # 1-N: tph 3
    ("a", "r3", "d"),
    ("b", "r3", "d"),  # N-1: hpt 2
    ("a", "r4", "b"),
    ("a", "r4", "c"),
    ("b", "r4", "b"),
    ("b", "r4", "c"),  # N-N: 2 and 2
    ("a", "r5", "b"),
    ("a", "r5", "c"),
    ("b", "r5", "d"),  # tph 1.5: 1-N
]
VALID = [("c", "r1", "d"), ("e", "r1", "a")]  # a repeat of a train triple, and a new entity
TEST = [("a", "r2", "c"), ("a", "r2", "c")]  # a duplicate within the split


def test_hand_computed_example():
    ds = KGDataset.from_labeled(TRAIN, VALID, TEST, name="toy", on_unknown="extend")
    stats = kg_statistics(ds)
    assert (stats.name, stats.num_entities, stats.num_relations) == ("toy", 5, 5)
    assert stats.split_triples == {"train": 14, "valid": 2, "test": 2}
    assert stats.split_entities == {"train": 4, "valid": 4, "test": 2}
    assert stats.split_relations == {"train": 5, "valid": 1, "test": 1}
    assert stats.split_duplicates == {"train": 0, "valid": 0, "test": 1}
    assert (stats.unseen_entities, stats.unseen_relations) == (1, 0)
    by_label = {r.label: r for r in stats.relations}
    # r1 over all splits: distinct (a,b), (c,d), (e,a): 3 heads, 3 tails.
    expected = {
        "r1": (4, 1.0, 1.0, "1-1"),
        "r2": (5, 3.0, 1.0, "1-N"),
        "r3": (2, 1.0, 2.0, "N-1"),
        "r4": (4, 2.0, 2.0, "N-N"),
        "r5": (3, 1.5, 1.0, "1-N"),
    }
    for label, (count, tph, hpt, kind) in expected.items():
        rel = by_label[label]
        assert (rel.num_triples, rel.tails_per_head, rel.heads_per_tail, rel.cardinality) == (
            count,
            tph,
            hpt,
            kind,
        )
    assert stats.cardinality_counts == {"1-1": 1, "1-N": 2, "N-1": 1, "N-N": 1}
    # 15 distinct triples; distinct (h, r): r1 3, r2 1, r3 2, r4 2, r5 2 = 10; (r, t): 3+3+1+2+3.
    assert stats.tails_per_head == pytest.approx(15 / 10)
    assert stats.heads_per_tail == pytest.approx(15 / 12)
    assert stats.num_triples == 18


def test_relation_without_triples_has_no_type():
    ds = KGDataset.from_labeled([("a", "r", "b")], [], [])
    ts = TripleSet(ds.train.mapped_triples, ds.entities, ds.relations.extend(["unused"]))
    stats = kg_statistics(ts)
    unused = stats.relations[-1]
    assert unused.label == "unused" and unused.cardinality == "-" and unused.num_triples == 0
    # 0/0 means (no (head, relation) pair) were NaN and printed "nan": undefined is None, "n/a".
    assert unused.tails_per_head is None and unused.heads_per_tail is None
    row = next(x.split() for x in stats.to_text().splitlines() if x.startswith("unused"))
    assert row == ["unused", "0", "n/a", "n/a", "-"]
    assert stats.relations[0].tails_per_head == 1.0 and stats.tails_per_head == 1.0


def test_statistics_of_no_triples_are_undefined_not_nan():
    stats = kg_statistics(TripleSet.from_labeled_triples([]))
    assert stats.tails_per_head is None and stats.heads_per_tail is None
    text = stats.to_text()
    assert "mean tails per (head, relation): n/a; mean heads per (relation, tail): n/a" in text
    assert "nan" not in text


def test_text_report_lists_splits_types_and_relations():
    ds = KGDataset.from_labeled(TRAIN, VALID, TEST, name="toy", on_unknown="extend")
    text = str(kg_statistics(ds))
    lines = text.splitlines()
    assert lines[0] == "knowledge graph 'toy': 5 entities, 5 relations, 18 triples"
    assert lines[3].split() == ["train", "14", "4", "5", "0"]
    assert lines[5].split() == ["test", "2", "2", "1", "1"]
    assert "threshold 1.5): 1-1: 1, 1-N: 2, N-1: 1, N-N: 1" in text
    header = next(i for i, x in enumerate(lines) if x.split()[:2] == ["relation", "triples"])
    table = lines[header + 1 :]  # by descending count, ties by label
    assert [row.split()[0] for row in table] == ["r2", "r1", "r4", "r5", "r3"]
    assert table[0].split() == ["r2", "5", "3.000", "1.000", "1-N"]


def test_published_datasets_against_brute_force(datasets_dir):
    for name, entities, relations, sizes in [
        ("nations", 14, 55, (1592, 199, 201)),
        ("umls", 135, 46, (5216, 652, 661)),
    ]:
        ds = KGDataset.from_folder(datasets_dir / "kg" / name)
        stats = kg_statistics(ds)
        assert (stats.num_entities, stats.num_relations) == (entities, relations)
        assert tuple(stats.split_triples.values()) == sizes
        assert sum(stats.split_duplicates.values()) == 0 and stats.unseen_entities == 0
        assert sum(stats.cardinality_counts.values()) == relations
        tails, heads = defaultdict(set), defaultdict(set)
        for h, r, t in (
            ds.train.to_labeled_triples()
            + ds.valid.to_labeled_triples()
            + (ds.test.to_labeled_triples())
        ):
            tails[r, h].add(t)
            heads[r, t].add(h)
        for rel in stats.relations:
            per_head = [len(v) for (r, _), v in tails.items() if r == rel.label]
            per_tail = [len(v) for (r, _), v in heads.items() if r == rel.label]
            assert rel.tails_per_head == pytest.approx(sum(per_head) / len(per_head))
            assert rel.heads_per_tail == pytest.approx(sum(per_tail) / len(per_tail))


def test_describe_folder_and_single_file(tmp_path, datasets_dir):
    text = describe(datasets_dir / "kg" / "nations")
    assert text.startswith("knowledge graph 'nations': 14 entities, 55 relations, 1992 triples")
    path = tmp_path / "one.tsv"
    path.write_text("a\tr\tb\na\tr\tc\na\tr\tc\n")
    text = describe(str(path))
    assert text.startswith("knowledge graph 'one.tsv': 3 entities, 1 relations, 3 triples")
    assert text.splitlines()[3].split() == ["triples", "3", "3", "1", "1"]


def test_describe_and_statistics_bad_input(tmp_path):
    with pytest.raises(
        FileNotFoundError, match=r"expected a folder with train.txt.*does not exist"
    ):
        describe(tmp_path / "missing")
    (tmp_path / "bad.tsv").write_text("a\tr\n")
    with pytest.raises(TSVFormatError, match=r"bad.tsv:1: expected 3 tab-separated"):
        describe(tmp_path / "bad.tsv")
    with pytest.raises(GraphDataError, match=r"data: expected a KGDataset or TripleSet, got list"):
        kg_statistics([("a", "r", "b")])
    assert isinstance(kg_statistics(TripleSet.from_labeled_triples([])), KGStatistics)


@pytest.mark.parametrize("layout", ["pykeen", "openke"])
def test_describe_reads_numeric_folders(tmp_path, layout):
    # `graphlib data stats` on a PyKEEN or OpenKE folder was refused with "duplicates='keep':
    # options of labelled files", an option the user never passed.
    ds = KGDataset.from_labeled([("a", "r", "b"), ("b", "r", "c")], [("a", "r", "c")], [], name="t")
    ds.to_folder(tmp_path / layout, format=layout)
    text = describe(tmp_path / layout)
    assert "3 entities, 1 relations, 3 triples" in text
