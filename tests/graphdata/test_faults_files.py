"""Fault injection for the file layer: symlinks, FIFOs, devices, folders, modes, stale temporary
files of killed writers, full disks (a failing file object and a real tiny tmpfs) and byte-order
marks in the middle of TSV files (issue #15, "Files")."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphdata.atomic
from graphdata._tsv import parse_labeled_triples, read_labeled_triples, write_labeled_triples
from graphdata.atomic import (
    OutputIsADirectoryError,
    atomic_path,
    require_free_space,
    write_bytes_atomic,
    write_text_atomic,
)
from graphdata.errors import GraphDataError, TSVFormatError
from graphdata.run_folder import check_output_file

ROOT = Path(__file__).resolve().parents[2]


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".tmp-graphlib" in p.name)


@pytest.fixture
def umask():
    """Set the umask for one test and restore it afterwards."""
    before = os.umask(0o022)
    os.umask(before)

    def set_mask(mask: int) -> None:
        os.umask(mask)

    yield set_mask
    os.umask(before)


# ---- symbolic links -------------------------------------------------------------------------


def test_symlink_is_written_through_and_survives(tmp_path):
    (tmp_path / "real").mkdir()
    real = tmp_path / "real" / "results.json"
    real.write_text("old")
    link = tmp_path / "results.json"
    link.symlink_to(real)
    write_text_atomic(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new"
    assert _temps(tmp_path) == [] and _temps(real.parent) == []


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "out.txt"
    link.symlink_to(tmp_path / "target.txt")
    write_text_atomic(link, "made")
    assert link.is_symlink() and (tmp_path / "target.txt").read_text() == "made"


def test_dangling_symlink_into_a_missing_folder_creates_the_folder(tmp_path):
    # check_output_file accepts such a link (its folder can be created), so the writer must
    # create it too; it failed on the temporary file's path, after the run's work.
    target = tmp_path / "missing" / "deeper" / "out.txt"
    link = tmp_path / "out.txt"
    link.symlink_to(target)
    assert check_output_file(link, argument="--out") == link
    write_text_atomic(link, "made")
    assert link.is_symlink() and target.read_text() == "made"
    assert _temps(target.parent) == []


def test_symlink_chain_and_loop(tmp_path):
    real = tmp_path / "real.txt"
    (tmp_path / "b").symlink_to(real)
    (tmp_path / "a").symlink_to(tmp_path / "b")
    write_text_atomic(tmp_path / "a", "x")
    assert real.read_text() == "x"
    assert (tmp_path / "a").is_symlink() and (tmp_path / "b").is_symlink()
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    with pytest.raises(GraphDataError, match="loops back on itself"):
        write_text_atomic(tmp_path / "loop1", "x")


def test_tsv_writer_writes_through_a_symlink(tmp_path):
    real = tmp_path / "data.tsv"
    real.write_text("old\tfile\there\n")
    link = tmp_path / "link.tsv"
    link.symlink_to(real)
    write_labeled_triples(link, [("a", "r", "b")])
    assert link.is_symlink() and real.read_text() == "a\tr\tb\n"


# ---- FIFOs, devices, folders ----------------------------------------------------------------


def test_fifo_is_written_directly_not_replaced(tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    try:
        write_text_atomic(fifo, '{"mrr": 0.5}\n')
        reader.join(timeout=10)
    finally:
        if reader.is_alive():  # unblock the reader if the writer never opened the FIFO
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            reader.join(timeout=10)
    assert received == [b'{"mrr": 0.5}\n']
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe.json"]


def test_char_device_is_never_renamed_over(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError(f"os.replace called for a device: {args}")

    monkeypatch.setattr(os, "replace", refuse)
    with atomic_path("/dev/null") as tmp:
        assert tmp == Path("/dev/null")
        tmp.write_text("discarded")
    write_text_atomic("/dev/null", "discarded too")
    write_bytes_atomic("/dev/null", b"\0" * 100, what="the test bytes")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not [name for name in os.listdir("/dev") if name.startswith(".null.")]


def test_symlink_to_a_device_is_written_through(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "replace", lambda *a: pytest.fail("renamed over a device"))
    link = tmp_path / "sink"
    link.symlink_to("/dev/null")
    write_text_atomic(link, "gone")
    assert link.is_symlink() and stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize("make_link", [False, True])
def test_folder_at_the_target_is_a_clear_error(tmp_path, make_link):
    folder = tmp_path / "results"
    folder.mkdir()
    target = folder
    if make_link:
        target = tmp_path / "link"
        target.symlink_to(folder)
    with pytest.raises(OutputIsADirectoryError, match=rf"existing folder '{target}'; pass a file"):
        write_text_atomic(target, "x")
    with pytest.raises(IsADirectoryError):
        write_text_atomic(target, "x")
    with pytest.raises(GraphDataError):
        write_text_atomic(target, "x")
    assert folder.is_dir() and list(folder.iterdir()) == []
    assert _temps(tmp_path) == []


# ---- modes ----------------------------------------------------------------------------------


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_new_files_follow_the_umask_like_open(tmp_path, umask, mask, mode):
    umask(mask)
    with open(tmp_path / "by_open.txt", "w") as handle:
        handle.write("x")
    write_text_atomic(tmp_path / "by_writer.txt", "x")
    write_labeled_triples(tmp_path / "by_tsv.tsv", [("a", "r", "b")])
    write_bytes_atomic(tmp_path / "by_bytes.bin", b"x", what="bytes")
    for name in ("by_open.txt", "by_writer.txt", "by_tsv.tsv", "by_bytes.bin"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == mode, name


def test_existing_file_keeps_its_mode(tmp_path, umask):
    umask(0o077)
    path = tmp_path / "shared.txt"
    path.write_text("old")
    path.chmod(0o664)
    write_text_atomic(path, "new")
    assert path.read_text() == "new" and stat.S_IMODE(path.stat().st_mode) == 0o664


# ---- stale temporary files of killed writers ------------------------------------------------


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_stale_temps_of_dead_writers_are_removed_but_live_ones_kept(tmp_path):
    target = tmp_path / "metrics.jsonl"
    dead = tmp_path / f".metrics.jsonl.{_dead_pid()}.k3j2h1ab.tmp-graphlib.jsonl"
    mine = tmp_path / f".metrics.jsonl.{os.getpid()}.aaaa1111.tmp-graphlib.jsonl"
    live = tmp_path / f".metrics.jsonl.{os.getppid()}.bbbb2222.tmp-graphlib.jsonl"
    other = tmp_path / f".metrics.jsonl.1.{_dead_pid()}.cccc3333.tmp-graphlib.jsonl"  # "...1"
    unrelated = tmp_path / ".metrics.jsonl.x7y8z9"  # an old-style temp: no pid, left alone
    for path in (dead, mine, live, other, unrelated):
        path.write_text("half")
    write_text_atomic(target, "done")
    assert target.read_text() == "done"
    assert not dead.exists()
    assert mine.exists() and live.exists() and other.exists() and unrelated.exists()


_NAME = st.text(alphabet="ab1._-", min_size=1, max_size=8).filter(lambda n: n not in {".", ".."})
_DEAD: list[int] = []


@given(_NAME, _NAME)
@settings(max_examples=60, deadline=None)
def test_only_the_written_files_own_stale_temps_are_removed(tmp_path_factory, name, other):
    if not _DEAD:
        _DEAD.append(_dead_pid())
    folder = tmp_path_factory.mktemp("names")
    stale = folder / f".{other}.{_DEAD[0]}.x1y2z3ab.tmp-graphlib.txt"
    stale.write_text("half")
    write_text_atomic(folder / name, "done")
    assert stale.exists() == (name != other)
    assert (folder / name).read_text() == "done"


def test_temp_of_a_writer_killed_mid_write_is_cleaned_on_the_next_write(tmp_path):
    target = tmp_path / "checkpoint.pt"
    target.write_bytes(b"previous")
    child_code = textwrap.dedent(
        f"""
        import sys, time, types
        # graphdata.atomic alone, without the package's heavy __init__ (torch): fast start-up.
        package = types.ModuleType("graphdata")
        package.__path__ = [{str(ROOT / "graphdata")!r}]
        sys.modules["graphdata"] = package
        from graphdata.atomic import atomic_path
        with atomic_path({str(target)!r}) as tmp:
            tmp.write_bytes(b"half a checkpoint")
            print("ready", flush=True)
            time.sleep(120)
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", child_code], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    try:
        assert child.stdout.readline().strip() == "ready"
        left = _temps(tmp_path)
        assert len(left) == 1 and f".{child.pid}." in left[0]
        # While the writer lives, another write of the same file leaves its temp alone.
        write_text_atomic(target, "concurrent")
        assert _temps(tmp_path) == left
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    assert _temps(tmp_path) == left  # kill -9: nobody cleaned up
    write_text_atomic(target, "next run")
    assert target.read_text() == "next run" and _temps(tmp_path) == []


# ---- full disk ------------------------------------------------------------------------------


class _FullDisk:
    """A file object whose writes fail as on a full disk."""

    def __init__(self, path: str) -> None:
        self.path = path

    def write(self, data: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def close(self) -> None:
        return None

    def __enter__(self) -> _FullDisk:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def test_full_disk_is_reported_and_the_old_file_kept(tmp_path, monkeypatch):
    target = write_text_atomic(tmp_path / "report.json", "old")
    monkeypatch.setattr(graphdata.atomic, "open", lambda p, *a, **k: _FullDisk(p), raising=False)
    for write in (
        lambda: write_text_atomic(target, "new"),
        lambda: write_bytes_atomic(target, b"new", what="the report"),
    ):
        with pytest.raises(OSError, match=r"no space left on device .*report\.json.*--out") as err:
            write()
        assert err.value.errno == errno.ENOSPC and err.value.filename == str(target)
    assert target.read_text() == "old" and _temps(tmp_path) == []


def test_require_free_space(tmp_path, monkeypatch):
    require_free_space(tmp_path / "deep" / "er" / "x.h5ad", 1, what="the AnnData file")
    require_free_space("/dev/null", 10**18, what="nothing")  # a device needs no space
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage._replace(free=1000))
    with pytest.raises(
        OSError,
        match=r"no space left on device for the AnnData file: it needs "
        r"about 1\.0 MiB but .* has 1000 bytes free",
    ) as err:
        require_free_space(tmp_path / "x.h5ad", 2**20, what="the AnnData file")
    assert err.value.errno == errno.ENOSPC and err.value.filename == str(tmp_path / "x.h5ad")
    require_free_space(tmp_path / "x.h5ad", 1000, what="the AnnData file")
    target = write_text_atomic(tmp_path / "old.bin", "old")
    with pytest.raises(OSError, match="no space left on device"):
        write_bytes_atomic(target, b"x" * 2000, what="the blob")
    assert target.read_text() == "old"


@given(st.one_of(st.integers(max_value=-1), st.floats(), st.booleans(), st.text(max_size=3)))
@settings(max_examples=30, deadline=None)
def test_require_free_space_rejects_bad_sizes(nbytes):
    with pytest.raises(GraphDataError, match=r"nbytes: expected an int >= 0, got"):
        require_free_space("/tmp/x", nbytes, what="x")


@pytest.fixture
def tiny_tmpfs(mount_tmpfs):
    return mount_tmpfs("256k")


def test_real_full_disk_on_a_tiny_tmpfs(tiny_tmpfs, monkeypatch):
    target = write_text_atomic(tiny_tmpfs / "out.txt", "old")
    big = "x" * (1024 * 1024)
    with pytest.raises(OSError, match=r"no space left on device .*out\.txt") as err:
        write_text_atomic(target, big)  # fails inside the write itself
    assert err.value.errno == errno.ENOSPC
    with pytest.raises(OSError, match="no space left on device for the blob"):
        write_bytes_atomic(target, big.encode(), what="the blob")  # refused before writing
    monkeypatch.setattr(graphdata.atomic, "require_free_space", lambda *a, **k: None)
    with pytest.raises(OSError, match=r"no space left on device while writing") as err:
        write_bytes_atomic(target, big.encode(), what="the blob")  # the write hits the limit
    assert err.value.errno == errno.ENOSPC
    assert target.read_text() == "old" and _temps(tiny_tmpfs) == []


# ---- byte-order marks in the middle of a TSV file ------------------------------------------

_LABEL = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc"), blacklist_characters="\ufeff\x85"
    ),
    min_size=1,
    max_size=6,
).filter(lambda s: s == s.strip())
_ROWS = st.lists(st.tuples(_LABEL, _LABEL, _LABEL), min_size=1, max_size=5, unique=True)
_BOM = "\ufeff".encode()


@given(_ROWS, _ROWS, st.booleans())
@settings(max_examples=60, deadline=None)
def test_files_with_marks_joined_by_cat_read_as_one(first, second, crlf):
    newline = "\r\n" if crlf else "\n"
    files = [
        _BOM + "".join(f"{h}\t{r}\t{t}{newline}" for h, r, t in rows).encode()
        for rows in (first, second)
    ]
    triples = parse_labeled_triples(b"".join(files), source="joined.tsv", duplicates="keep")
    assert triples == first + second
    assert not any(label.startswith("\ufeff") for row in triples for label in row)


def test_cat_joined_files_on_disk(tmp_path):
    for name, rows in (("a.tsv", "alice\tknows\tbob\n"), ("b.tsv", "bob\tknows\tcarol\n")):
        (tmp_path / name).write_bytes(_BOM + rows.encode())
    with open(tmp_path / "all.tsv", "wb") as out:
        subprocess.run(["cat", tmp_path / "a.tsv", tmp_path / "b.tsv"], stdout=out, check=True)
    triples = read_labeled_triples(tmp_path / "all.tsv")
    assert triples == [("alice", "knows", "bob"), ("bob", "knows", "carol")]
    entities = {t[0] for t in triples} | {t[2] for t in triples}
    assert entities == {"alice", "bob", "carol"}  # no invisible second "bob"


@pytest.mark.parametrize(
    "text, line",
    [
        ("\ufeff\ufeffa\tr\tb\n", 1),  # a doubled mark
        ("a\tr\tb\nc\t\ufeffr\td\n", 2),  # a mark after a tab
        ("a\tr\tb\n\ufeff\ufeffc\tr\td\n", 2),
    ],
)
def test_marks_that_would_start_a_label_are_refused_with_file_line(text, line):
    with pytest.raises(
        TSVFormatError,
        match=rf"^data\.tsv:{line}: expected labels that do not "
        "start with U\\+FEFF",
    ):
        parse_labeled_triples(text.encode(), source="data.tsv")


def test_a_mark_inside_a_label_is_kept():
    assert parse_labeled_triples("a\ufeffb\tr\tc\n") == [("a\ufeffb", "r", "c")]
