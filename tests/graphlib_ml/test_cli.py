import pytest

from graphdata.synthetic import family_kg
from graphdata.triples import KGDataset, TripleSet
from graphlib_ml.cli import PARTS, build_parser, main
from graphlib_ml.demo import SECTIONS, run_demo


def test_parser_registers_every_part_and_the_shared_commands():
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # argparse keeps them here
    assert {"demo", "data", *PARTS} <= set(commands)
    assert set(SECTIONS) == {"data", "kg", "explain", "graphon", "iwn", "spatial"}


def test_data_stats_prints_nations_counts(datasets_dir, capsys):
    assert main(["data", "stats", str(datasets_dir / "kg" / "nations")]) == 0
    out = capsys.readouterr().out
    assert "14 entities, 55 relations" in out
    assert "1592" in out and "199" in out and "201" in out


def test_data_family_writes_a_folder_that_reads_back_identically(tmp_path, capsys):
    assert main(["data", "family", str(tmp_path), "--num-people", "120", "--seed", "3"]) == 0
    back = KGDataset.from_folder(tmp_path)
    world = family_kg(120, seed=3).dataset
    for split in ("train", "valid", "test"):
        ours = sorted(getattr(back, split).to_labeled_triples())
        assert ours == sorted(getattr(world, split).to_labeled_triples())
    assert "wrote the synthetic family KG" in capsys.readouterr().out


@pytest.mark.parametrize("layout", ["pykeen", "openke"])
def test_data_stats_reads_pykeen_and_openke_folders(tmp_path, capsys, layout):
    # Refused (exit 2) with "duplicates='keep': options of labelled files", never passed.
    ds = KGDataset.from_labeled([("a", "r", "b")], [("b", "r", "a")], [], name="toy")
    ds.to_folder(tmp_path / "ds", format=layout)
    assert main(["data", "stats", str(tmp_path / "ds")]) == 0
    assert "2 entities, 1 relations, 2 triples" in capsys.readouterr().out


def test_data_stats_prints_n_a_for_a_relation_without_triples(tmp_path, capsys):
    # A PyKEEN folder whose vocabulary holds a relation no triple uses, and an empty TSV file:
    # the 0/0 means printed "nan"; they are undefined and read "n/a".
    ds = KGDataset.from_labeled([("a", "r", "b")], [], [])
    relations = ds.relations.extend(["unused"])
    splits = [TripleSet(s.mapped_triples, ds.entities, relations) for s in ds.splits.values()]
    KGDataset(*splits, name="t").to_folder(tmp_path / "ds", format="pykeen")
    (tmp_path / "empty.tsv").write_text("", encoding="utf-8")
    assert main(["data", "stats", str(tmp_path / "ds")]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out
    assert next(x for x in out.splitlines() if x.startswith("unused")).split() == [
        "unused",
        "0",
        "n/a",
        "n/a",
        "-",
    ]
    assert main(["data", "stats", str(tmp_path / "empty.tsv")]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out and "mean tails per (head, relation): n/a;" in out


def test_bad_input_ends_with_a_message_and_exit_code_2(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("a\tr\n", encoding="utf-8")
    assert main(["data", "stats", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("graphlib: error:") and "bad.txt:1" in err


def test_demo_writes_report_and_figures(tmp_path):
    report = run_demo(tmp_path / "demo", parts=["data"], seed=0, device="cpu")
    text = report.read_text(encoding="utf-8")
    assert text.startswith("# graphlib demo report")
    assert "## Data layer" in text and "Section run time" in text
    assert (tmp_path / "demo" / "data_knn_graph.png").stat().st_size > 1000


def test_demo_rejects_unknown_parts(tmp_path):
    with pytest.raises(ValueError, match=r"parts: unknown section\(s\) \['nope'\]"):
        run_demo(tmp_path, parts=["nope"])


def test_demo_refused_after_making_out_leaves_no_new_folder(tmp_path, capsys):
    # run_demo creates --out before it checks --device: the refusal left an empty folder (and
    # its new parent). A folder that existed before stays.
    out = tmp_path / "new" / "report"
    assert main(["demo", "--parts", "data", "--device", "foo", "--out", str(out)]) == 2
    assert "device: expected 'auto', 'cpu'" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()
    assert main(["demo", "--parts", "data", "--device", "foo", "--out", str(tmp_path)]) == 2
    assert tmp_path.is_dir()


class _LibraryNote(UserWarning):
    """A library warning category (as kg.explain.local.CandidatesCapped is one)."""


def test_every_command_shows_library_warnings_as_one_line(datasets_dir, capsys, monkeypatch):
    # Any command's UserWarning (subclasses too) is one "graphlib: warning:" line, without
    # Python's format and source line; --debug keeps Python's format for developers.
    import warnings

    read = KGDataset.from_folder.__func__

    def noisy(cls, *args, **kwargs):
        warnings.warn(_LibraryNote("three triples were read twice"), stacklevel=2)
        return read(cls, *args, **kwargs)

    monkeypatch.setattr(KGDataset, "from_folder", classmethod(noisy))
    folder = str(datasets_dir / "kg" / "nations")
    assert main(["data", "stats", folder]) == 0
    err = capsys.readouterr().err
    assert err == "graphlib: warning: three triples were read twice\n"
    with pytest.warns(_LibraryNote, match="read twice"):
        assert main(["--debug", "data", "stats", folder]) == 0
