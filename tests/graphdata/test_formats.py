"""Numeric-id folder formats (PyKEEN, OpenKE), id maps, .gz input, header rows, HeteroData."""

import gzip
import pathlib

import pytest
import torch

from graphdata import formats
from graphdata._tsv import parse_labeled_triples, read_labeled_triples, write_labeled_triples
from graphdata.errors import GraphDataError, TSVFormatError, UnknownLabelError
from graphdata.triples import KGDataset, TripleSet, Vocabulary
from graphdata.vocabulary import sort_labels

ROWS = [("a", "r1", "b"), ("b", "r2", 'c"q'), ("10", "r1", "2")]


def _dataset():
    return KGDataset.from_labeled(ROWS, ROWS[:1], ROWS[2:], name="toy")


def _same(a, b):
    assert a.entities == b.entities and a.relations == b.relations
    for split in ("train", "valid", "test"):
        assert torch.equal(a.splits[split].mapped_triples, b.splits[split].mapped_triples)


# --- numeric labels: '2' before '10' -------------------------------------------------------


def test_integer_labels_sort_by_value_others_by_code_point():
    assert sort_labels(["10", "2", "0", "1"]) == ["0", "1", "2", "10"]
    assert sort_labels(["10", "2", "x"]) == ["10", "2", "x"]  # PyKEEN's order when mixed
    assert sort_labels(["02", "10"]) == ["02", "10"]  # a leading zero: not a plain integer
    assert sort_labels(["-1", "3"]) == ["-1", "3"]
    ts = TripleSet.from_labeled_triples([("10", "1", "2"), ("2", "0", "0")])
    assert ts.entities.labels == ("0", "2", "10") and ts.relations.labels == ("0", "1")
    assert ts.mapped_triples.tolist() == [[2, 1, 1], [1, 0, 0]]
    assert Vocabulary(["0", "5"]).extend(["10", "7"]).labels == ("0", "5", "7", "10")


def test_a_pyg_dump_read_back_keeps_its_ids(tmp_path):
    # edge_index rows written as labels "h<TAB>r<TAB>t": ids 0..11, so string sorting would
    # have put '10' and '11' before '2'.
    mapped = torch.tensor([[i, i % 3, (i * 5 + 1) % 12] for i in range(12)])
    entities = Vocabulary([str(i) for i in range(12)])
    relations = Vocabulary(["0", "1", "2"], kind="relation")
    ts = TripleSet(mapped, entities, relations)
    ts.write_tsv(tmp_path / "dump.tsv")
    assert (tmp_path / "dump.tsv").read_text().splitlines()[10] == "10\t1\t3"
    back = TripleSet.read_tsv(tmp_path / "dump.tsv")
    assert back.entities == entities and torch.equal(back.mapped_triples, mapped)


def test_to_folder_writes_id_maps_only_when_labels_would_renumber(tmp_path):
    ds = _dataset()
    ds.to_folder(tmp_path / "plain")
    assert sorted(p.name for p in (tmp_path / "plain").iterdir()) == [
        "test.txt",
        "train.txt",
        "valid.txt",
    ]
    # Entities in no triple (num_nodes of a PyG graph) cannot come back from labels alone.
    ts = TripleSet(torch.tensor([[3, 0, 1]]), Vocabulary(["z", "y", "x", "w"]), ds.relations)
    odd = KGDataset(ts, ts, ts, name="odd")
    odd.to_folder(tmp_path / "plain")
    assert (tmp_path / "plain" / "entity_to_id.tsv.gz").is_file()
    back = KGDataset.from_folder(tmp_path / "plain")
    _same(back, odd)
    assert back.entities.labels == ("z", "y", "x", "w")
    ds.to_folder(tmp_path / "plain")  # sorted again: the stale maps must go
    assert not (tmp_path / "plain" / "entity_to_id.tsv.gz").exists()
    _same(KGDataset.from_folder(tmp_path / "plain"), ds)
    ds.to_folder(tmp_path / "forced", id_maps=True)
    _same(KGDataset.from_folder(tmp_path / "forced"), ds)
    with pytest.raises(GraphDataError, match=r"id_maps: expected True, False or None"):
        ds.to_folder(tmp_path / "x", id_maps="yes")  # type: ignore[arg-type]


def test_id_maps_beside_labels_are_checked(tmp_path):
    ds = _dataset()
    ds.to_folder(tmp_path, id_maps=True)
    (tmp_path / "relation_to_id.tsv.gz").unlink()
    with pytest.raises(FileNotFoundError, match=r"both id maps .* holds only entity_to_id"):
        KGDataset.from_folder(tmp_path)
    formats.write_pykeen_id_map(tmp_path / "relation_to_id.tsv.gz", Vocabulary(["r1"]))
    with pytest.raises(GraphDataError, match=r"train.txt: expected every training label in the id"):
        KGDataset.from_folder(tmp_path)
    # valid/test labels outside the maps follow on_unknown, as labels outside train.txt do
    formats.write_pykeen_id_map(tmp_path / "relation_to_id.tsv.gz", ds.relations)
    (tmp_path / "test.txt").write_text("a\tr1\tghost\n")
    with pytest.raises(GraphDataError, match=r"missing from entity_to_id.tsv.gz/relation_to_id"):
        KGDataset.from_folder(tmp_path, on_unknown="raise")
    extended = KGDataset.from_folder(tmp_path, on_unknown="extend")
    assert extended.entities.labels == (*ds.entities.labels, "ghost")


# --- header rows and gzip ------------------------------------------------------------------


@pytest.mark.parametrize(
    "first", ["head\trelation\ttail", "Subject\tPredicate\tObject", "H\tR\tT", "s\tp\to"]
)
def test_header_rows_are_detected(first):
    assert parse_labeled_triples(f"{first}\na\tr\tb\n") == [("a", "r", "b")]


def test_header_option_forces_or_refuses_and_line_numbers_stay(tmp_path):
    text = "from\tvia\tto\na\tr\tb\n"
    assert parse_labeled_triples(text) == [("from", "via", "to"), ("a", "r", "b")]
    assert parse_labeled_triples(text, header=True) == [("a", "r", "b")]
    header_like = "head\trelation\ttail\na\tr\tb\n"
    assert parse_labeled_triples(header_like, header=False)[0] == ("head", "relation", "tail")
    with pytest.raises(TSVFormatError, match=r"<string>:3: expected 3 tab-separated"):
        parse_labeled_triples("head\trelation\ttail\na\tr\tb\na b c\n")
    with pytest.raises(TSVFormatError, match=r"<string>:3: expected each triple once.*line 2"):
        parse_labeled_triples("h\tr\tt\na\tr\tb\na\tr\tb\n")
    with pytest.raises(GraphDataError, match=r"header: expected True, False or None"):
        parse_labeled_triples(text, header="yes")  # type: ignore[arg-type]
    (tmp_path / "train.txt").write_text("head\trelation\ttail\na\tr\tb\n")
    (tmp_path / "valid.txt").write_text("a\tr\tb\n")
    (tmp_path / "test.txt").write_text("x\ty\tz\na\tr\tb\n")
    ds = KGDataset.from_folder(tmp_path, header=True, on_unknown="raise")
    assert [len(ts) for ts in ds.splits.values()] == [1, 0, 1]  # valid's only line was dropped


def test_gzip_is_read_by_magic_bytes_and_written_by_suffix(tmp_path):
    write_labeled_triples(tmp_path / "t.tsv.gz", ROWS)
    data = (tmp_path / "t.tsv.gz").read_bytes()
    assert data[:2] == b"\x1f\x8b"
    assert gzip.decompress(data) == "".join(f"{h}\t{r}\t{t}\n" for h, r, t in ROWS).encode()
    write_labeled_triples(tmp_path / "again.tsv.gz", ROWS)
    assert (tmp_path / "again.tsv.gz").read_bytes() == data  # no time stamp: same bytes
    assert read_labeled_triples(tmp_path / "t.tsv.gz") == ROWS
    (tmp_path / "named.txt").write_bytes(data)  # gzip under a plain name
    assert read_labeled_triples(tmp_path / "named.txt") == ROWS
    (tmp_path / "cut.gz").write_bytes(data[:-9])
    with pytest.raises(GraphDataError, match=r"cut.gz: expected a complete gzip stream"):
        read_labeled_triples(tmp_path / "cut.gz")
    for split in ("train", "valid", "test"):
        write_labeled_triples(tmp_path / "ds" / f"{split}.txt.gz", ROWS)
    ds = KGDataset.from_folder(tmp_path / "ds")
    assert ds.train.to_labeled_triples() == ROWS and formats.detect_format(tmp_path / "ds")


# --- PyKEEN's binary folders ---------------------------------------------------------------


def test_pykeen_folder_matches_pykeens_bytes_and_round_trips(tmp_path):
    ds = _dataset()
    ds.to_folder(tmp_path, format="pykeen")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "metadata.pth",
        "testing",
        "training",
        "validation",
    ]
    train = tmp_path / "training"

    def text(name):
        return gzip.decompress((train / name).read_bytes()).decode()

    # What PyKEEN 1.11.1's to_path_binary wrote for the same factory (ids and labels alike).
    assert ds.entities.labels == ("10", "2", "a", "b", 'c"q')
    assert text("entity_to_id.tsv.gz") == 'id\tlabel\n0\t10\n1\t2\n2\ta\n3\tb\n4\t"c""q"\n'
    assert text("relation_to_id.tsv.gz") == "id\tlabel\n0\tr1\n1\tr2\n"
    assert text("numeric_triples.tsv.gz") == "head\trelation\ttail\n2\t0\t3\n3\t1\t4\n0\t0\t1\n"
    base = torch.load(train / "base.pth", weights_only=True)
    assert base == {
        "num_entities": 5,
        "num_relations": 2,
        "create_inverse_triples": False,
        "metadata": {},
    }
    assert formats.detect_format(tmp_path) == "pykeen"
    back = KGDataset.from_folder(tmp_path)
    _same(back, ds)
    assert back.name == tmp_path.name


def test_pykeen_base_that_needs_unpickling_is_not_read(tmp_path):
    ds = _dataset()
    ds.to_folder(tmp_path, format="pykeen")
    state = {"num_entities": 5, "num_relations": 2, "metadata": {"path": pathlib.Path("/x")}}
    torch.save(state, tmp_path / "training" / "base.pth")
    _same(KGDataset.from_folder(tmp_path), ds)  # counts come from the id maps
    torch.save({"num_entities": 9, "num_relations": 2}, tmp_path / "training" / "base.pth")
    with pytest.raises(GraphDataError, match=r"base.pth: expected num_entities 5 .*got 9"):
        KGDataset.from_folder(tmp_path)


def test_pykeen_malformed_files_name_file_and_line(tmp_path):
    ds = _dataset()
    ds.to_folder(tmp_path, format="pykeen")
    train = tmp_path / "training"
    entity_map = train / "entity_to_id.tsv.gz"
    entity_map.write_bytes(gzip.compress(b"id\tlabel\n0\ta\n1\tb\n1\tc\n"))
    with pytest.raises(
        TSVFormatError, match=r"entity_to_id.tsv.gz:4: expected each entity id once"
    ):
        KGDataset.from_folder(tmp_path)
    entity_map.write_bytes(gzip.compress(b"id\tlabel\n0\ta\n2\tb\n"))
    with pytest.raises(TSVFormatError, match=r"ids 0..1 .*got id 2 while id 1 is missing"):
        formats.read_pykeen_id_map(entity_map)
    entity_map.write_bytes(gzip.compress(b"0\ta\n"))
    with pytest.raises(TSVFormatError, match=r":1: expected the header 'id<TAB>label'"):
        formats.read_pykeen_id_map(entity_map)
    entity_map.write_bytes(gzip.compress(b"id\tlabel\nx\ta\n"))
    with pytest.raises(TSVFormatError, match=r":2: expected 'id<TAB>label' with a non-negative"):
        formats.read_pykeen_id_map(entity_map)
    ds.to_folder(tmp_path, format="pykeen")
    triples = train / "numeric_triples.tsv.gz"
    triples.write_bytes(gzip.compress(b"0\t0\t1\n"))
    with pytest.raises(TSVFormatError, match=r"numeric_triples.tsv.gz:1: expected the header"):
        KGDataset.from_folder(tmp_path)
    triples.write_bytes(gzip.compress(b"head\trelation\ttail\n0\t0\t1\n0\t1.5\t1\n"))
    with pytest.raises(TSVFormatError, match=r":3: expected head_id<TAB>relation_id<TAB>tail_id"):
        KGDataset.from_folder(tmp_path)
    triples.write_bytes(gzip.compress(b"head\trelation\ttail\n0\t0\t5\n"))
    with pytest.raises(GraphDataError, match=r"expected entity ids in \[0, 5\) .*got 5"):
        KGDataset.from_folder(tmp_path)
    ds.to_folder(tmp_path, format="pykeen")
    formats.write_pykeen_id_map(tmp_path / "testing" / "relation_to_id.tsv.gz", Vocabulary("ab"))
    with pytest.raises(GraphDataError, match=r"id maps of testing/ to equal those of training/"):
        KGDataset.from_folder(tmp_path)


# --- OpenKE --------------------------------------------------------------------------------


def _openke(folder, train="2\n0 1 0\n1 2 1\n", entities="3\nb\t0\na\t2\nc\t1\n"):
    folder.mkdir(exist_ok=True)
    (folder / "train2id.txt").write_text(train)
    (folder / "valid2id.txt").write_text("1\n2 0 1\n")
    (folder / "test2id.txt").write_text("0\n")
    (folder / "entity2id.txt").write_text(entities)
    (folder / "relation2id.txt").write_text("2\n_hypernym\t0\n_also_see\t1\n")
    return folder


def test_openke_reads_head_tail_relation_columns(tmp_path):
    ds = KGDataset.from_folder(_openke(tmp_path))
    assert ds.entities.labels == ("b", "c", "a")  # by id, not sorted
    assert ds.relations.labels == ("_hypernym", "_also_see")
    assert ds.train.mapped_triples.tolist() == [[0, 0, 1], [1, 1, 2]]  # h r t from "h t r"
    assert ds.train.to_labeled_triples() == [("b", "_hypernym", "c"), ("c", "_also_see", "a")]
    assert ds.valid.mapped_triples.tolist() == [[2, 1, 0]] and len(ds.test) == 0
    # a labelled copy keeps these (unsorted) ids through its id maps
    ds.to_folder(tmp_path / "labeled")
    _same(KGDataset.from_folder(tmp_path / "labeled"), ds)


def test_openke_round_trip_is_exact(tmp_path):
    ds = _dataset()
    ds.to_folder(tmp_path, format="openke")
    assert (tmp_path / "train2id.txt").read_text() == "3\n2 3 0\n3 4 1\n0 1 0\n"  # h t r
    assert (tmp_path / "relation2id.txt").read_text() == "2\nr1\t0\nr2\t1\n"
    assert (tmp_path / "test2id.txt").read_text() == "1\n0 1 0\n"
    _same(KGDataset.from_folder(tmp_path, format="openke"), ds)


@pytest.mark.parametrize(
    ("train", "entities", "match"),
    [
        ("3\n0 1 0\n1 2 1\n", None, r"train2id.txt:1: expected the first line to count .*got 3"),
        ("0 1 0\n", None, r"train2id.txt:1: expected a first line holding the number of triples"),
        ("2\n0 1 0\n1 x 1\n", None, r"train2id.txt:3: expected 'head_id tail_id relation_id'"),
        ("1\n0 1\n", None, r"train2id.txt:2: expected 'head_id tail_id relation_id'"),
        ("1\n0 7 0\n", None, r"train2id.txt: expected entity ids in \[0, 3\).*got 7"),
        (None, "3\nb\t0\na\t0\nc\t1\n", r"entity2id.txt:3: expected each entity id once, got id 0"),
        (None, "2\nb\t0\na\t1\nc\t2\n", r"entity2id.txt:1: .*got 2 while 3 follow"),
        (None, "3\nb\t0\nb\t2\nc\t1\n", r"entity2id.txt:3: expected distinct entity labels"),
        (None, "3\nb\t0\na\tone\nc\t1\n", r"entity2id.txt:3: expected 'label<TAB>id'"),
    ],
)
def test_openke_malformed_files(tmp_path, train, entities, match):
    kwargs = {k: v for k, v in (("train", train), ("entities", entities)) if v is not None}
    folder = _openke(tmp_path, **kwargs)
    with pytest.raises(TSVFormatError if "ids in" not in match else GraphDataError, match=match):
        KGDataset.from_folder(folder)


def test_openke_labels_with_a_space_read_from_a_space_separated_map(tmp_path):
    folder = _openke(tmp_path, entities="3\nb 0\nnew york 2\nc 1\n")
    assert KGDataset.from_folder(folder).entities.labels == ("b", "c", "new york")


# --- detection -----------------------------------------------------------------------------


def test_unknown_or_ambiguous_layouts_are_refused(tmp_path):
    (tmp_path / "notes.md").write_text("x")
    with pytest.raises(FileNotFoundError, match=r"one of these layouts: labeled: .*holds \['notes"):
        KGDataset.from_folder(tmp_path)
    _openke(tmp_path)
    (tmp_path / "train.txt").write_text("a\tr\tb\n")
    with pytest.raises(GraphDataError, match=r"several formats \(labeled, openke\); pass format="):
        KGDataset.from_folder(tmp_path)
    assert len(KGDataset.from_folder(tmp_path, format="openke").train) == 2
    with pytest.raises(FileNotFoundError, match=r"lacks valid.txt, test.txt"):
        KGDataset.from_folder(tmp_path, format="labeled")
    with pytest.raises(GraphDataError, match=r"format: expected 'auto' or one of \('labeled'"):
        KGDataset.from_folder(tmp_path, format="libkge")  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError, match=r"lacks training/"):
        KGDataset.from_folder(tmp_path, format="pykeen")


# --- HeteroData ----------------------------------------------------------------------------


def _triples():
    entities = Vocabulary(["ann", "bob", "cy", "dan", "lonely"])
    relations = Vocabulary(["parent", "spouse", "unused"], kind="relation")
    mapped = torch.tensor([[0, 0, 1], [1, 1, 2], [0, 0, 2], [3, 1, 0], [2, 0, 3]])
    return TripleSet(mapped, entities, relations)


def test_hetero_data_round_trip_is_exact():
    ts = _triples()
    data = ts.to_hetero_data()
    assert data.node_types == ["entity"] and data["entity"].num_nodes == 5
    assert [et[1] for et in data.edge_types] == ["parent", "spouse", "unused"]
    assert data["entity", "parent", "entity"].edge_index.tolist() == [[0, 0, 2], [1, 2, 3]]
    assert data["entity", "unused", "entity"].edge_index.shape == (2, 0)
    back = TripleSet.from_hetero_data(data, entities=ts.entities)
    assert torch.equal(back.mapped_triples, ts.mapped_triples)
    assert back.entities == ts.entities and back.relations == ts.relations
    numeric = TripleSet.from_hetero_data(data)  # no labels given: ids as labels
    assert numeric.entities.labels == ("0", "1", "2", "3", "4")
    # without triple_index: edge type by edge type; with a relation vocabulary: looked up
    for store in data.edge_stores:
        del store.triple_index
    relations = Vocabulary(["unused", "spouse", "parent"], kind="relation")
    grouped = TripleSet.from_hetero_data(data, entities=ts.entities, relations=relations)
    assert grouped.mapped_triples.tolist() == [
        [0, 2, 1],
        [0, 2, 2],
        [2, 2, 3],
        [1, 1, 2],
        [3, 1, 0],
    ]


def test_hetero_data_works_with_pyg_transforms():
    from torch_geometric.transforms import ToUndirected

    data = _triples().to_hetero_data()
    homogeneous = data.to_homogeneous()
    assert homogeneous.num_nodes == 5 and homogeneous.num_edges == 5
    assert homogeneous.edge_type.tolist() == [0, 0, 0, 1, 1]  # relation ids, edge-type order
    undirected = ToUndirected()(data.clone())
    assert undirected["entity", "parent", "entity"].num_edges == 6  # 3 edges, both directions
    assert undirected["entity", "spouse", "entity"].num_edges == 4


def test_hetero_data_errors():
    from torch_geometric.data import HeteroData

    data = _triples().to_hetero_data()
    with pytest.raises(GraphDataError, match=r"num_nodes: expected 4 \(the size of entities\)"):
        TripleSet.from_hetero_data(data, entities=Vocabulary("abcd"))
    with pytest.raises(UnknownLabelError, match=r"unknown relation label 'unused'"):
        TripleSet.from_hetero_data(
            data, relations=Vocabulary(["parent", "spouse"], kind="relation")
        )
    data["entity", "parent", "entity"].triple_index = torch.tensor([0, 0, 2])
    with pytest.raises(GraphDataError, match=r"triple_index of all edge types to number"):
        TripleSet.from_hetero_data(data)
    two = HeteroData()
    two["a"].num_nodes, two["b"].num_nodes = 1, 1
    with pytest.raises(GraphDataError, match=r"one node type .*\['a', 'b'\]"):
        TripleSet.from_hetero_data(two)
    with pytest.raises(GraphDataError, match=r"node_type: expected a non-empty str"):
        _triples().to_hetero_data(node_type="")


def test_cli_header_flag_gives_true_false_or_none():
    import argparse

    from graphlib_ml.cli._datasets import add_header_flag

    parser = argparse.ArgumentParser()
    add_header_flag(parser)
    values = [parser.parse_args(argv).header for argv in ([], ["--header"], ["--no-header"])]
    assert values == [None, True, False]


def test_a_pyg_graph_without_labels_survives_a_folder_round_trip(tmp_path):
    from torch_geometric.data import Data

    edge_index = torch.tensor([[0, 11, 2, 10], [10, 2, 11, 0]])
    edge_type = torch.tensor([1, 0, 12, 1])
    data = Data(edge_index=edge_index, edge_type=edge_type, num_nodes=13)
    ts = TripleSet.from_pyg(data)
    assert ts.entities.labels == tuple(str(i) for i in range(13))
    assert ts.relations.labels == tuple(str(i) for i in range(13))
    ds = KGDataset(ts, ts, ts, name="pyg")
    ds.to_folder(tmp_path)  # node 12 and most relations occur in no triple: id maps needed
    assert (tmp_path / "entity_to_id.tsv.gz").is_file()
    back = KGDataset.from_folder(tmp_path)
    _same(back, ds)
    again = back.train.to_pyg()
    assert torch.equal(again.edge_index, edge_index) and torch.equal(again.edge_type, edge_type)
    assert TripleSet.from_pyg(Data(edge_index=edge_index, edge_type=edge_type)).num_entities == 12


def test_labelled_file_options_are_refused_for_numeric_formats(tmp_path):
    _dataset().to_folder(tmp_path, format="openke")
    with pytest.raises(GraphDataError, match=r"header=True: options of labelled files.*'openke'"):
        KGDataset.from_folder(tmp_path, header=True)
    with pytest.raises(GraphDataError, match=r"strip=True, duplicates='drop': options"):
        KGDataset.from_folder(tmp_path, strip=True, duplicates="drop")


def test_a_split_as_both_txt_and_txt_gz_is_refused(tmp_path):
    # train.txt won silently over a different train.txt.gz.
    write_labeled_triples(tmp_path / "train.txt", [("a", "r", "b")])
    write_labeled_triples(tmp_path / "train.txt.gz", [("c", "r", "d")])
    for split in ("valid", "test"):
        write_labeled_triples(tmp_path / f"{split}.txt", [])
    with pytest.raises(GraphDataError, match="holds both train.txt and train.txt.gz"):
        KGDataset.from_folder(tmp_path)


@pytest.mark.parametrize("layout", ["pykeen", "openke"])
def test_numeric_readers_say_a_file_is_not_a_folder(tmp_path, layout):
    # The message said the file "lacks" every file and "holds []".
    (tmp_path / "x").write_text("x")
    with pytest.raises(FileNotFoundError, match="x is not a folder"):
        KGDataset.from_folder(tmp_path / "x", format=layout)


def test_to_folder_writes_no_split_when_a_later_one_cannot_be_written(tmp_path):
    # train.txt and valid.txt were written before test.txt failed on a label with a tab.
    entities = Vocabulary(["a", "b", "c\td"])
    relations = Vocabulary(["r"], kind="relation")
    sets = [TripleSet(torch.tensor([row]), entities, relations) for row in ([0, 0, 1],) * 2]
    ds = KGDataset(*sets, TripleSet(torch.tensor([[0, 0, 2]]), entities, relations), name="t")
    with pytest.raises(GraphDataError, match="test split: .*nothing was written"):
        ds.to_folder(tmp_path / "out")
    assert not (tmp_path / "out").exists()
