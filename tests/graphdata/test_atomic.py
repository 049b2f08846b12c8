import pytest

from graphdata.atomic import atomic_path, write_text_atomic


def test_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = write_text_atomic(tmp_path / "report.md", "old")
    with pytest.raises(RuntimeError, match="killed"):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed mid-write")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]


def test_success_replaces_and_keeps_the_suffix_for_format_inference(tmp_path):
    target = tmp_path / "sub" / "figure.png"
    with atomic_path(target) as tmp:
        assert tmp.suffix == ".png" and tmp.parent == target.parent
        tmp.write_bytes(b"new")
    assert target.read_bytes() == b"new"
    assert sorted(p.name for p in target.parent.iterdir()) == ["figure.png"]
