from __future__ import annotations

import random
import tempfile
import warnings
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from graphdata.errors import GraphDataError, UnknownLabelError, UnknownLabelsDropped
from graphdata.filter_index import FilterIndex
from graphdata.triples import KGDataset, TripleSet, Vocabulary

FAMILY = [
    ("ann", "parent", "bob"),
    ("bob", "parent", "cy"),
    ("ann", "spouse", "dan"),
    ("dan", "spouse", "ann"),
    ("cy", "sibling", "eve"),
]

names = st.sampled_from(["ann", "bob", "cy", "dan", "eve", "fay"])
relation_names = st.sampled_from(["parent", "spouse", "sibling"])
labeled = st.lists(st.tuples(names, relation_names, names), max_size=15)
# Held-out splits whose labels all occur in FAMILY (the training split).
VALID = [("bob", "sibling", "ann")]
TEST = [("eve", "parent", "ann"), ("ann", "parent", "cy")]


# --- Vocabulary -------------------------------------------------------------------------------


def test_vocabulary_is_sorted_and_maps_both_ways():
    vocab = Vocabulary.from_labels(["spouse", "parent", "spouse", "child"], kind="relation")
    assert vocab.labels == ("child", "parent", "spouse") and len(vocab) == 3
    assert [vocab.id(x) for x in vocab.labels] == [0, 1, 2] and vocab["spouse"] == 2
    assert [vocab.label(i) for i in range(3)] == list(vocab.labels)
    assert vocab.label(np.int64(1)) == vocab.label(torch.tensor(1)) == "parent"
    assert vocab.ids(["spouse", "child"]).tolist() == [2, 0]
    assert vocab.ids([]).dtype == torch.long
    assert vocab.labels_of(torch.tensor([[2], [0]])) == ["spouse", "child"]
    assert "parent" in vocab and "uncle" not in vocab and list(vocab) == list(vocab.labels)
    first_seen = Vocabulary.from_labels(["b", "a", "b"], sort=False)
    assert first_seen.labels == ("b", "a")


def test_vocabulary_extend_keeps_existing_ids():
    vocab = Vocabulary(["m", "b"]).extend(["z", "a", "b"])
    assert vocab.labels == ("m", "b", "a", "z")


def test_unknown_label_names_closest_known_labels():
    vocab = Vocabulary.from_labels(["parent", "spouse", "sibling"], kind="relation")
    with pytest.raises(UnknownLabelError, match=r"unknown relation label 'parnt'.*'parent'"):
        vocab.id("parnt")
    with pytest.raises(UnknownLabelError, match=r"labels: unknown relation label 'sposue'"):
        vocab.ids(["parent", "sposue"])


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: Vocabulary(["a", "b", "a"]), r"expected distinct entity labels, got 'a' twice"),
        (lambda: Vocabulary(["a", ""]), r"expected non-empty str entity labels, got ''"),
        (lambda: Vocabulary(["a", 3]), r"got 3"),
        (
            lambda: Vocabulary(["a"]).label(1),
            r"id: expected an integer in \[0, 1\) \(entity ids\), got 1",
        ),
        (lambda: Vocabulary(["a"]).label("0"), r"id: expected an integer"),
        (
            lambda: Vocabulary(["a"]).ids("a"),
            r"labels: expected an iterable of labels, got the str",
        ),
        (lambda: Vocabulary(["a"]).labels_of([0, -1]), r"ids: expected entity ids in \[0, 1\)"),
    ],
)
def test_vocabulary_bad_input(call, match):
    with pytest.raises(GraphDataError, match=match):
        call()


# --- TripleSet --------------------------------------------------------------------------------


@given(labeled)
def test_mapping_round_trips_and_ids_do_not_depend_on_order(rows):
    ts = TripleSet.from_labeled_triples(rows)
    assert ts.to_labeled_triples() == rows
    assert ts.entities.labels == tuple(sorted({x for h, _, t in rows for x in (h, t)}))
    assert ts.relations.labels == tuple(sorted({r for _, r, _ in rows}))
    shuffled = random.Random(0).sample(rows, len(rows))
    other = TripleSet.from_labeled_triples(shuffled)
    assert other.entities == ts.entities and other.relations == ts.relations
    assert ts.mapped_triples.shape == (len(rows), 3) and ts.mapped_triples.dtype == torch.long


def test_given_vocabularies_and_unknown_labels():
    entities = Vocabulary(["bob", "ann", "cy"])
    relations = Vocabulary(["parent"], kind="relation")
    ts = TripleSet.from_labeled_triples(
        [("ann", "parent", "bob")], entities=entities, relations=relations
    )
    assert ts.mapped_triples.tolist() == [[1, 0, 0]] and ts.num_entities == 3
    rows = [("ann", "parent", "bob"), ("ann", "spouse", "dan"), ("zed", "parent", "cy")]
    with pytest.raises(UnknownLabelError, match=r"triples: unknown relation label 'spouse'.*drop"):
        TripleSet.from_labeled_triples(rows, entities=entities, relations=relations)
    with pytest.warns(UserWarning, match=r"dropped 2 of 3 triples"):
        kept = TripleSet.from_labeled_triples(
            rows, entities=entities, relations=relations, on_unknown="drop"
        )
    assert kept.to_labeled_triples() == [("ann", "parent", "bob")]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (
            lambda: TripleSet.from_labeled_triples([("a", "r")]),
            r"triples\[0\]: expected a \(head, relation, tail\) tuple of 3 str labels",
        ),
        (
            lambda: TripleSet.from_labeled_triples([("a", "r", "b"), ("a", 1, "b")]),
            r"triples\[1\]: expected",
        ),
        (lambda: TripleSet.from_labeled_triples(["abc"]), r"triples\[0\]"),
        (lambda: TripleSet.from_labeled_triples([], on_unknown="skip"), r"on_unknown: expected"),
        (
            lambda: TripleSet(
                torch.zeros(2, 2, dtype=torch.long), Vocabulary(["a"]), Vocabulary(["r"])
            ),
            r"mapped_triples: expected a LongTensor \[N, 3\]",
        ),
        (
            lambda: TripleSet(torch.zeros(1, 3), Vocabulary(["a"]), Vocabulary(["r"])),
            r"expected integer ids, got dtype torch.float32",
        ),
        (
            lambda: TripleSet(torch.tensor([[0, 0, 2]]), Vocabulary(["a", "b"]), Vocabulary(["r"])),
            r"expected tail ids in \[0, 2\), got min 2 and max 2",
        ),
    ],
)
def test_triple_set_bad_input(call, match):
    with pytest.raises(GraphDataError, match=match):
        call()


@settings(max_examples=40, deadline=None)
@given(labeled)
def test_inverse_relations_are_an_involution(rows):
    ts = TripleSet.from_labeled_triples(rows)
    num_relations, n = ts.num_relations, len(ts)
    inv = ts.with_inverse_relations()
    assert inv.num_relations == 2 * num_relations and len(inv) == 2 * n
    assert torch.equal(inv.mapped_triples[:n], ts.mapped_triples)
    assert inv.relations.labels == ts.relations.labels + tuple(
        f"{x}_inverse" for x in ts.relations.labels
    )

    def flip(m):  # (h, r, t) -> (t, r + R mod 2R, h)
        return torch.stack([m[:, 2], (m[:, 1] + num_relations) % (2 * num_relations), m[:, 0]], 1)

    assert torch.equal(flip(inv.mapped_triples[:n]), inv.mapped_triples[n:])
    assert torch.equal(flip(flip(inv.mapped_triples)), inv.mapped_triples)
    labelled = inv.to_labeled_triples()
    for (h, r, t), (h2, r2, t2) in zip(labelled[:n], labelled[n:]):
        assert (h2, r2, t2) == (t, f"{r}_inverse", h)


def test_inverse_relations_refuse_twice_and_clashes():
    ts = TripleSet.from_labeled_triples(FAMILY).with_inverse_relations()
    with pytest.raises(GraphDataError, match=r"already hold inverse relations"):
        ts.with_inverse_relations()
    clash = TripleSet.from_labeled_triples(
        [("a", "r", "b"), ("a", "r_inverse", "b"), ("a", "s", "b")]
    )
    with pytest.raises(GraphDataError, match=r"inverse label 'r_inverse' already names"):
        clash.with_inverse_relations()


def test_pyg_round_trip():
    ts = TripleSet.from_labeled_triples(FAMILY + [("fay", "parent", "fay")])
    data = ts.to_pyg()
    assert data.edge_index.tolist() == [
        ts.mapped_triples[:, 0].tolist(),
        ts.mapped_triples[:, 2].tolist(),
    ]
    assert data.edge_type.tolist() == ts.mapped_triples[:, 1].tolist()
    assert data.num_nodes == ts.num_entities == 6
    back = TripleSet.from_pyg(data, ts.entities, ts.relations)
    assert torch.equal(back.mapped_triples, ts.mapped_triples)
    with pytest.raises(GraphDataError, match=r"data.num_nodes: expected 7 .*got 6"):
        TripleSet.from_pyg(data, ts.entities.extend(["zed"]), ts.relations)
    data.edge_type = data.edge_type[:-1]
    with pytest.raises(GraphDataError, match=r"expected edge_index \[2, N\] and edge_type \[N\]"):
        TripleSet.from_pyg(data, ts.entities, ts.relations)


def test_networkx_round_trip_keeps_isolated_entities():
    entities = Vocabulary.from_labels(["ann", "bob", "cy", "dan", "eve", "lonely"])
    ts = TripleSet.from_labeled_triples(FAMILY, entities=entities)
    graph = ts.to_networkx()
    assert isinstance(graph, nx.MultiDiGraph)
    assert list(graph.nodes) == list(entities.labels)
    assert graph.number_of_edges() == len(FAMILY)
    assert graph.edges["ann", "bob", "parent"]["relation"] == "parent"
    back = TripleSet.from_networkx(graph)
    assert back.entities == entities and back.relations == ts.relations
    assert sorted(back.to_labeled_triples()) == sorted(FAMILY)


def test_networkx_bad_graphs():
    with pytest.raises(GraphDataError, match=r"expected a directed graph"):
        TripleSet.from_networkx(nx.Graph([("a", "b")]))
    with pytest.raises(GraphDataError, match=r"expected str node labels, got 1.*relabel_nodes"):
        TripleSet.from_networkx(nx.DiGraph([(1, 2)]))
    graph = nx.MultiDiGraph()
    graph.add_edge("a", "b", kind="parent")
    with pytest.raises(GraphDataError, match=r"str 'relation' attribute, got None"):
        TripleSet.from_networkx(graph)
    assert TripleSet.from_networkx(graph, "kind").to_labeled_triples() == [("a", "parent", "b")]


def test_to_device(device):
    ts = TripleSet.from_labeled_triples(FAMILY)
    moved = ts.to(device)
    assert moved.device.type == device.type and moved.entities is ts.entities
    assert moved.to_labeled_triples() == FAMILY
    assert moved.to_pyg().edge_index.device.type == device.type
    assert moved.with_inverse_relations().device.type == device.type


any_label = st.text(min_size=1, max_size=6).filter(
    lambda x: (
        x == x.strip()
        and not set(x) & {"\t", "\n", "\r"}
        and not x.startswith("\ufeff")
        and not any(0xD800 <= ord(c) < 0xE000 for c in x)
    )
)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(any_label, any_label, any_label), max_size=12, unique=True))
def test_tsv_round_trip_of_arbitrary_labels(rows):
    ts = TripleSet.from_labeled_triples(rows)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "triples.tsv"
        ts.write_tsv(path)
        back = TripleSet.read_tsv(path)
    assert back.to_labeled_triples() == rows
    assert back.entities == ts.entities and back.relations == ts.relations


def test_tsv_round_trip_keeps_triples_and_vocabulary_order(tmp_path):
    ts = TripleSet.from_labeled_triples(FAMILY)
    ts.write_tsv(tmp_path / "family.tsv")
    back = TripleSet.read_tsv(tmp_path / "family.tsv")
    assert back.to_labeled_triples() == FAMILY
    assert back.entities == ts.entities and back.relations == ts.relations
    assert torch.equal(back.mapped_triples, ts.mapped_triples)


# --- KGDataset --------------------------------------------------------------------------------


def test_from_labeled_shares_one_vocabulary():
    ds = KGDataset.from_labeled(FAMILY, VALID, TEST, name="family")
    assert ds.name == "family" and ds.num_entities == 5 and ds.num_relations == 3
    for split in ds.splits.values():
        assert split.entities is ds.entities and split.relations is ds.relations
    together = TripleSet.from_labeled_triples(
        FAMILY + VALID + TEST, entities=ds.entities, relations=ds.relations
    )
    assert torch.equal(ds.all_triples(), together.mapped_triples)
    assert ds.to("cpu").test.to_labeled_triples() == TEST


def test_held_out_labels_missing_from_train():
    train = [("ann", "parent", "bob"), ("bob", "parent", "cy")]
    valid = [("ann", "parent", "zed"), ("ann", "parent", "cy")]
    test = [("cy", "spouse", "bob"), ("bob", "parent", "ann")]
    with pytest.raises(
        GraphDataError,
        match=r"2 valid/test triples .* missing from train: 1 entities \['zed'\] and 1 "
        r"relations \['spouse'\].*on_unknown='drop' \(--on-unknown drop\).*"
        r"on_unknown='extend' \(--on-unknown extend\)",
    ):
        KGDataset.from_labeled(train, valid, test, on_unknown="raise")
    # the default drops them (PyKEEN's behaviour), with ONE warning for both splits
    with pytest.warns(UnknownLabelsDropped) as record:
        dropped = KGDataset.from_labeled(train, valid, test)
    assert [str(w.message)[:60] for w in record] == [
        "dataset: dropped 1 of 2 valid and 1 of 2 test triples whose "
    ]
    assert dropped.valid.to_labeled_triples() == [("ann", "parent", "cy")]
    assert dropped.test.to_labeled_triples() == [("bob", "parent", "ann")]
    assert dropped.num_entities == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        extended = KGDataset.from_labeled(train, valid, test, on_unknown="extend")
    assert extended.entities.labels == ("ann", "bob", "cy", "zed")
    assert extended.relations.labels == ("parent", "spouse")
    assert extended.test.to_labeled_triples() == test


def test_folder_round_trip(tmp_path):
    ds = KGDataset.from_labeled(FAMILY, VALID, TEST, name="family")
    ds.to_folder(tmp_path / "family" / "v1")
    back = KGDataset.from_folder(tmp_path / "family" / "v1")
    assert back.name == "v1"
    assert back.entities == ds.entities and back.relations == ds.relations
    for split in ("train", "valid", "test"):
        assert torch.equal(back.splits[split].mapped_triples, ds.splits[split].mapped_triples)


def test_from_folder_errors_name_files(tmp_path):
    (tmp_path / "train.txt").write_text("a\tr\tb\n")
    (tmp_path / "valid.txt").write_text("a\tr\tc\n")
    with pytest.raises(FileNotFoundError, match=r"lacks test.txt \(it holds \['train.txt'"):
        KGDataset.from_folder(tmp_path)
    (tmp_path / "test.txt").write_text("a\tr\tb\n")
    with pytest.raises(GraphDataError, match=r"valid.txt.*missing from .*train.txt: 1 entities"):
        KGDataset.from_folder(tmp_path, on_unknown="raise")
    (tmp_path / "valid.txt").write_text("a\tr\tb\nb r a\n")
    with pytest.raises(GraphDataError, match=r"valid.txt:2: expected 3 tab-separated"):
        KGDataset.from_folder(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"is not a folder"):
        KGDataset.from_folder(tmp_path / "nope")


def test_dataset_inverse_relations_and_filter_index():
    ds = KGDataset.from_labeled(FAMILY, VALID, TEST)
    inv = ds.with_inverse_relations()
    assert inv.num_relations == 6 and len(inv.test) == 4 and inv.test.relations is inv.relations
    assert inv.test.to_labeled_triples()[2] == ("ann", "parent_inverse", "eve")
    assert len(inv.train) == 10 and inv.train.entities is inv.entities
    index = ds.filter_index()
    assert isinstance(index, FilterIndex) and index.num_triples == len(ds.all_triples())
    assert index.contains(ds.all_triples()).all()
    ptr, tails = index.tails(ds.entities.ids(["ann"]), ds.relations.ids(["parent"]))
    assert ds.entities.labels_of(tails) == ["bob", "cy"]


def test_dataset_rejects_mismatched_vocabularies():
    a = TripleSet.from_labeled_triples(FAMILY)
    b = TripleSet.from_labeled_triples(FAMILY[:2])
    with pytest.raises(GraphDataError, match=r"valid: expected the vocabularies of train"):
        KGDataset(a, b, a)


@pytest.mark.parametrize(
    ("name", "entities", "relations", "sizes"),
    [("nations", 14, 55, (1592, 199, 201)), ("umls", 135, 46, (5216, 652, 661))],
)
def test_published_dataset_counts(datasets_dir, name, entities, relations, sizes):
    ds = KGDataset.from_folder(datasets_dir / "kg" / name)
    assert ds.name == name
    assert (ds.num_entities, ds.num_relations) == (entities, relations)
    assert (len(ds.train), len(ds.valid), len(ds.test)) == sizes
    assert list(ds.entities.labels) == sorted(ds.entities.labels)
    index = ds.filter_index()
    assert index.num_triples == sum(sizes)  # no triple repeats across splits


def test_networkx_round_trip_keeps_vocabularies_and_ids():
    # from_networkx re-sorted the entities, dropped relations without triples and re-sorted the
    # rest, so inverse relations lost the r + R convention after a round trip.
    entities = Vocabulary(["b", "a", "iso"])
    relations = Vocabulary(["s", "r", "unused"], kind="relation")
    ts = TripleSet(torch.tensor([[0, 0, 1], [1, 1, 1]]), entities, relations)
    for original in (ts, ts.with_inverse_relations()):
        back = TripleSet.from_networkx(original.to_networkx())
        assert back.entities == original.entities and back.relations == original.relations
        rows = sorted(map(tuple, back.mapped_triples.tolist()))
        assert rows == sorted(map(tuple, original.mapped_triples.tolist()))
    graph = nx.MultiDiGraph()  # a graph from elsewhere is still numbered by sorted labels
    graph.add_edge("b", "a", relation="r")
    assert TripleSet.from_networkx(graph).entities.labels == ("a", "b")
