"""graphdata.datasets: downloads from a local HTTP server, checksums, cache, offline mode.

Every test serves its files from a ThreadingHTTPServer on 127.0.0.1 that it starts and stops
(:class:`FileServer`); none touches the network or the user's cache (GRAPHLIB_HOME is a
tmp_path).
"""

from __future__ import annotations

import hashlib
import io
import re
import socket
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from graphdata import datasets
from graphdata._download import ChecksumError, DownloadError, file_checksum
from graphdata.datasets import DatasetSpec, RemoteFile, SplitFile
from graphdata.errors import GraphDataError

TRAIN = b"a\tr\tb\nb\tr\tc\nc\tr\ta\na\ts\tc\n"
VALID = b"b\ts\ta\n"
TEST = b"c\ts\tb\n"
SPLIT_BYTES = {"train": TRAIN, "valid": VALID, "test": TEST}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _tar(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class FileServer:
    """An HTTP server on 127.0.0.1 serving ``files`` (path -> bytes); records each request.

    ``truncate`` holds paths answered with a Content-Length 100 bytes longer than what is sent
    before the connection closes.
    """

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.truncate: set[str] = set()
        self.requests: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                path = self.path.lstrip("/")
                server.requests.append(path)
                data = server.files.get(path)
                if data is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                extra = 100 if path in server.truncate else 0
                self.send_header("Content-Length", str(len(data) + extra))
                self.end_headers()
                self.wfile.write(data)
                if extra:
                    self.close_connection = True

            def log_message(self, *args: object) -> None:
                """Keep the test output free of the server's request log."""

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


@pytest.fixture
def server() -> Iterator[FileServer]:
    srv = FileServer()
    yield srv
    srv.close()


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point GRAPHLIB_HOME at tmp_path (never the user's cache) and clear any mirror URL."""
    monkeypatch.setenv("GRAPHLIB_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("GRAPHLIB_DATASETS_URL", raising=False)
    return tmp_path / "home"


def tar_spec(name: str = "toy", archive: bytes | None = None) -> tuple[DatasetSpec, bytes]:
    """A test-only dataset: one .tar.gz with the three splits; returns (spec, archive bytes)."""
    data = archive or _tar({f"toy/{s}.txt": b for s, b in SPLIT_BYTES.items()})
    splits = tuple(
        SplitFile(s, b.count(b"\n"), sha256=_sha(b), member=f"toy/{s}.txt")  # type: ignore[arg-type]
        for s, b in SPLIT_BYTES.items()
    )
    remote = RemoteFile(
        "o/r/" + "0" * 40 + "/toy.tar.gz", splits, sha256=_sha(data), size=len(data)
    )
    spec = DatasetSpec(name, (remote,), source="test", citation="none", licence="none")
    return spec, data


def txt_spec(name: str = "toytxt") -> DatasetSpec:
    """A test-only dataset of three plain files ``o/r/COMMIT/SPLIT.txt``."""
    files = tuple(
        RemoteFile(
            f"o/r/{'1' * 40}/{s}.txt",
            (SplitFile(s, b.count(b"\n"), sha256=_sha(b)),),  # type: ignore[arg-type]
            size=len(b),
        )
        for s, b in SPLIT_BYTES.items()
    )
    return DatasetSpec(name, files, source="test", citation="none", licence="none")


def serve_txt(server: FileServer, spec: DatasetSpec) -> None:
    for remote in spec.files:
        server.files[remote.path] = SPLIT_BYTES[remote.splits[0].split]


def _files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def _triples(ds) -> dict[str, set[tuple[str, str, str]]]:
    return {name: set(map(tuple, ts.to_labeled_triples())) for name, ts in ds.splits.items()}


EXPECTED = {
    s: {tuple(line.split("\t")) for line in b.decode().splitlines()} for s, b in SPLIT_BYTES.items()
}


# -- downloads ---------------------------------------------------------------------------------


def test_archive_download_then_cache_hit_makes_no_second_request(server, _home):
    spec, data = tar_spec()
    server.files[spec.files[0].path] = data
    ds = datasets.load(spec, base_url=server.url)
    assert ds.name == "toy" and _triples(ds) == EXPECTED
    assert server.requests == [spec.files[0].path]
    folder = _home / "datasets" / "toy"
    # The archive is gone; the extracted splits and the manifest remain, nothing else.
    assert _files_under(folder) == [".graphlib-dataset.json", "test.txt", "train.txt", "valid.txt"]
    assert (folder / "train.txt").read_bytes() == TRAIN
    again = datasets.load(spec, base_url=server.url)
    assert _triples(again) == EXPECTED and len(server.requests) == 1  # cache hit
    assert _triples(datasets.load(spec, offline=True)) == EXPECTED
    assert len(server.requests) == 1


def test_plain_files_download_and_env_mirror(server, monkeypatch):
    spec = txt_spec()
    serve_txt(server, spec)
    monkeypatch.setenv("GRAPHLIB_DATASETS_URL", server.url.rstrip("/"))  # no trailing slash
    ds = datasets.load(spec)
    assert _triples(ds) == EXPECTED
    assert sorted(server.requests) == sorted(f.path for f in spec.files)


def test_force_downloads_again(server):
    spec = txt_spec()
    serve_txt(server, spec)
    datasets.download(spec, base_url=server.url)
    datasets.download(spec, base_url=server.url, force=True)
    assert len(server.requests) == 6


def test_corrupted_download_raises_checksum_error_and_leaves_nothing(server, _home):
    spec, data = tar_spec()
    corrupted = bytearray(data)
    corrupted[len(corrupted) // 2] ^= 0xFF  # same size, one byte flipped
    server.files[spec.files[0].path] = bytes(corrupted)
    with pytest.raises(ChecksumError, match=r"has sha256 [0-9a-f]{64}, expected " + _sha(data)):
        datasets.load(spec, base_url=server.url)
    assert _files_under(_home) == []  # the temporary file was removed
    # and the fix is named: retry, or a local copy
    with pytest.raises(ChecksumError, match=r"retry; or download toy\.tar\.gz yourself"):
        datasets.load(spec, base_url=server.url)


def test_wrong_size_is_a_checksum_error(server, _home):
    spec, data = tar_spec()
    server.files[spec.files[0].path] = data + b"x"
    with pytest.raises(ChecksumError, match=rf"has {len(data) + 1} bytes, the registered file has"):
        datasets.load(spec, base_url=server.url)
    assert _files_under(_home) == []


def test_truncated_download_raises_and_leaves_nothing(server, _home):
    spec, data = tar_spec()
    server.files[spec.files[0].path] = data
    server.truncate.add(spec.files[0].path)
    with pytest.raises(DownloadError, match=r"toy\.tar\.gz was truncated.*retry"):
        datasets.load(spec, base_url=server.url)
    assert _files_under(_home) == []


def test_http_404_names_the_url(server, _home):
    spec = txt_spec()
    with pytest.raises(
        DownloadError, match=r"127\.0\.0\.1:\d+/o/r/1+/train\.txt answered HTTP 404"
    ):
        datasets.load(spec, base_url=server.url)
    assert _files_under(_home) == []


def test_no_network_names_the_url_and_the_offline_fix(_home):
    with socket.socket() as sock:  # a port that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    spec = txt_spec()
    with pytest.raises(DownloadError, match=rf"could not reach http://127\.0\.0\.1:{port}/") as err:
        datasets.load(spec, base_url=f"http://127.0.0.1:{port}/")
    assert "path=" in str(err.value) and "--from PATH" in str(err.value)
    assert _files_under(_home) == []


def test_failure_after_a_good_file_leaves_no_manifest(server, _home):
    spec = txt_spec()
    serve_txt(server, spec)
    del server.files[spec.files[2].path]  # test.txt: 404
    with pytest.raises(DownloadError, match="HTTP 404"):
        datasets.load(spec, base_url=server.url)
    folder = _home / "datasets" / spec.name
    assert not (folder / datasets.MANIFEST).exists()  # incomplete: filled in again next time
    with pytest.raises(GraphDataError, match="not in the cache"):
        datasets.load(spec, offline=True)
    server.files[spec.files[2].path] = TEST
    assert _triples(datasets.load(spec, base_url=server.url)) == EXPECTED


def test_concurrent_loads_do_not_corrupt_the_cache(server):
    spec = txt_spec()
    serve_txt(server, spec)
    results: list[object] = []

    def work() -> None:
        try:
            results.append(_triples(datasets.load(spec, base_url=server.url)))
        except Exception as err:  # pragma: no cover - reported below
            results.append(err)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [EXPECTED] * 4
    assert _triples(datasets.load(spec, offline=True)) == EXPECTED


def test_edited_cache_file_is_noticed(server, _home):
    spec = txt_spec()
    serve_txt(server, spec)
    datasets.load(spec, base_url=server.url)
    (_home / "datasets" / spec.name / "valid.txt").write_bytes(b"b\ts\tc\n")  # same size
    with pytest.raises(ChecksumError, match=r"valid\.txt: the cached file changed.*--force"):
        datasets.load(spec, base_url=server.url)
    datasets.download(spec, base_url=server.url, force=True)
    assert _triples(datasets.load(spec, offline=True)) == EXPECTED


def test_git_blob_checksum(server):
    # git hash-object of TRAIN: SHA-1 over b"blob <size>\0" + bytes (git's object format).
    blob = hashlib.sha1(b"blob %d\0" % len(TRAIN) + TRAIN).hexdigest()  # noqa: S324
    files = (
        RemoteFile("g/" + "2" * 40 + "/train.txt", (SplitFile("train", 4, git_sha1=blob),)),
        *txt_spec().files[1:],
    )
    spec = DatasetSpec("gitpinned", files, source="t", citation="t", licence="t")
    serve_txt(server, spec)
    assert _triples(datasets.load(spec, base_url=server.url)) == EXPECTED
    server.files[files[0].path] = TRAIN.replace(b"a", b"z")
    with pytest.raises(ChecksumError, match=rf"git-sha1 [0-9a-f]{{40}}, expected {blob}"):
        datasets.download(spec, base_url=server.url, force=True)


def test_zip_archive(server):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for s, b in SPLIT_BYTES.items():
            zf.writestr(f"{s}.txt", b)
    data = buf.getvalue()
    splits = tuple(
        SplitFile(s, 1 if s != "train" else 4, sha256=_sha(b), member=f"{s}.txt")  # type: ignore[arg-type]
        for s, b in SPLIT_BYTES.items()
    )
    spec = DatasetSpec(
        "toyzip",
        (RemoteFile("z/" + "3" * 40 + "/toy.zip", splits, sha256=_sha(data), size=len(data)),),
        source="t",
        citation="t",
        licence="t",
    )
    server.files[spec.files[0].path] = data
    assert _triples(datasets.load(spec, base_url=server.url)) == EXPECTED


# -- archives: only registered members, no traversal, no links ---------------------------------


@pytest.mark.parametrize("member", ["../evil.txt", "/etc/passwd", "a/../../b", "a\\..\\b"])
def test_member_paths_that_escape_are_refused(member):
    split = SplitFile("train", 1, sha256="0" * 64, member=member)
    others = txt_spec().files[1:]
    with pytest.raises(GraphDataError, match="relative path without '..'"):
        DatasetSpec("x", (RemoteFile("a/b.tar.gz", (split,), sha256="0" * 64), *others), "", "", "")


def test_link_member_is_refused_and_nothing_outside_is_written(server, tmp_path, _home):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for s in ("valid", "test"):
            info = tarfile.TarInfo(f"toy/{s}.txt")
            info.size = len(SPLIT_BYTES[s])
            tf.addfile(info, io.BytesIO(SPLIT_BYTES[s]))
        link = tarfile.TarInfo("toy/train.txt")
        link.type, link.linkname = tarfile.SYMTYPE, "../../../outside.txt"
        tf.addfile(link)
    spec, data = tar_spec(archive=buf.getvalue())
    server.files[spec.files[0].path] = data
    with pytest.raises(ChecksumError, match=r"no regular file 'toy/train\.txt' inside"):
        datasets.load(spec, base_url=server.url)
    assert not (tmp_path / "outside.txt").exists()
    assert _files_under(_home) == []  # neither the archive nor a split stays


# -- offline -----------------------------------------------------------------------------------


def _split_folder(folder: Path, **override: bytes) -> Path:
    folder.mkdir(parents=True)
    for s, b in {**SPLIT_BYTES, **override}.items():
        (folder / f"{s}.txt").write_bytes(b)
    return folder


def test_offline_folder_of_splits_is_verified_and_read_in_place(tmp_path, _home):
    spec, _ = tar_spec()
    folder = _split_folder(tmp_path / "mine")
    assert _triples(datasets.load(spec, path=folder)) == EXPECTED
    assert not (_home / "datasets").exists()  # read in place, nothing copied


def test_offline_folder_that_differs_says_so(tmp_path):
    spec, _ = tar_spec()
    folder = _split_folder(tmp_path / "mine", test=b"c\ts\ta\n")
    with pytest.raises(ChecksumError, match=r"test\.txt: sha256 .* not the registered release"):
        datasets.load(spec, path=folder)


def test_offline_archive_file_is_installed_into_the_cache(tmp_path, _home):
    spec, data = tar_spec()
    archive = tmp_path / "toy.tar.gz"
    archive.write_bytes(data)
    assert _triples(datasets.load(spec, path=archive)) == EXPECTED
    assert _triples(datasets.load(spec, offline=True)) == EXPECTED
    archive.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(ChecksumError, match=r"toy\.tar\.gz: sha256 .* not the registered"):
        datasets.load(spec, path=archive)


def test_offline_folder_holding_the_downloads(tmp_path):
    spec = txt_spec()
    folder = _split_folder(tmp_path / "plain")  # the plain downloads are the split files
    assert _triples(datasets.load(spec, path=folder)) == EXPECTED
    tar_folder = tmp_path / "archives"
    tar_folder.mkdir()
    tspec, data = tar_spec()
    (tar_folder / "toy.tar.gz").write_bytes(data)
    assert _triples(datasets.load(tspec, path=tar_folder)) == EXPECTED


def test_offline_path_with_no_registered_layout(tmp_path):
    spec, _ = tar_spec()
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.md").write_text("x")
    with pytest.raises(GraphDataError, match=r"toy\.tar\.gz; it holds notes\.md"):
        datasets.load(spec, path=tmp_path / "empty")
    with pytest.raises(GraphDataError, match="does not exist"):
        datasets.load(spec, path=tmp_path / "missing")


def test_offline_without_cache(_home):
    with pytest.raises(GraphDataError, match=r"offline: nations is not in the cache .*download"):
        datasets.load("nations", offline=True)


# -- cache root --------------------------------------------------------------------------------


def test_cache_root_follows_graphlib_home_then_xdg(tmp_path, monkeypatch):
    assert datasets.cache_root() == tmp_path / "home" / "datasets"
    assert datasets.path("FB15k-237") == tmp_path / "home" / "datasets" / "fb15k237"
    assert datasets.cache_root(tmp_path / "x") == tmp_path / "x"
    monkeypatch.delenv("GRAPHLIB_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if datasets.sys.platform.startswith("linux"):
        assert datasets.cache_root() == tmp_path / "xdg" / "graphlib" / "datasets"


def test_download_lands_under_graphlib_home(server, _home):
    spec = txt_spec()
    serve_txt(server, spec)
    folder = datasets.download(spec, base_url=server.url)
    assert folder == _home / "datasets" / "toytxt"
    assert (folder / "test.txt").read_bytes() == TEST


# -- the real registry -------------------------------------------------------------------------


def test_registry_entries_are_consistent():
    assert datasets.names() == sorted(
        ["fb15k237", "wn18rr", "codex-s", "codex-m", "yago3-10", "nations", "umls", "kinships"]
    )
    urls = []
    for name, spec in datasets.REGISTRY.items():
        assert spec.name == name
        assert spec.citation and spec.licence and spec.source
        for remote in spec.files:
            url = datasets.DEFAULT_BASE_URL + remote.path
            assert url.startswith("https://raw.githubusercontent.com/")
            # OWNER/REPO/COMMIT/...: pinned to a full commit id, never a branch
            assert re.match(r"^[\w.-]+/[\w.-]+/[0-9a-f]{40}/", remote.path), remote.path
            kind, value = remote.checksum() or ("", "")
            assert (kind, len(value)) in {("sha256", 64), ("git-sha1", 40)}
            assert re.fullmatch(r"[0-9a-f]+", value)
            for split in remote.splits:
                assert split.sha256 is None or re.fullmatch(r"[0-9a-f]{64}", split.sha256)
            urls.append(url)
    assert len(urls) == len(set(urls))
    # Only YAGO3-10's train.txt lacks a SHA-256 (pinned by its git blob id instead).
    no_sha = [
        (spec.name, s.split)
        for spec in datasets.REGISTRY.values()
        for f in spec.files
        for s in f.splits
        if s.sha256 is None
    ]
    assert no_sha == [("yago3-10", "train")]


def test_registry_counts_are_the_published_ones():
    published = {
        "fb15k237": (272115, 17535, 20466),
        "wn18rr": (86835, 3034, 3134),
        "yago3-10": (1079040, 5000, 5000),
        "codex-s": (32888, 1827, 1828),
        "codex-m": (185584, 10310, 10311),
        "nations": (1592, 199, 201),
        "umls": (5216, 652, 661),
        "kinships": (8544, 1068, 1074),
    }
    got = {name: tuple(spec.counts.values()) for name, spec in datasets.REGISTRY.items()}
    assert got == published


def test_unknown_name_lists_the_names():
    with pytest.raises(
        GraphDataError, match=r"expected one of codex-m, codex-s, fb15k237.*'fb15k'"
    ):
        datasets.get_spec("fb15k")
    assert datasets.get_spec("Kinship").name == "kinships"


def test_shared_copies_match_the_registered_checksums(datasets_dir):
    """Real data: the project's Nations/UMLS copies are the registered PyKEEN 1.11.1 bytes."""
    for name in ("nations", "umls"):
        ds = datasets.load(name, path=datasets_dir / "kg" / name)
        assert tuple(len(ts) for ts in ds.splits.values()) == tuple(
            datasets.REGISTRY[name].counts.values()
        )
        for split in datasets.REGISTRY[name].files:
            file = datasets_dir / "kg" / name / f"{split.splits[0].split}.txt"
            assert file_checksum(file) == split.splits[0].sha256
    # FB15k-237: the same triples (as sets), but LF line endings where the release has CRLF,
    # so it is not the registered bytes and says so.
    with pytest.raises(ChecksumError, match="not the registered release"):
        datasets.load("fb15k237", path=datasets_dir / "kg" / "fb15k237")


def test_progress_bar_when_asked(server, capsys):
    spec = txt_spec()
    serve_txt(server, spec)
    datasets.download(spec, base_url=server.url, progress=True)
    assert "train.txt" in capsys.readouterr().err  # tqdm's bar, labelled with the file
    datasets.download(spec, base_url=server.url, progress=None, force=True)
    assert capsys.readouterr().err == ""  # small files, not a terminal: no bar


@pytest.mark.parametrize("name", ["nations", "umls"])
def test_real_entry_downloads_from_a_mirror_of_its_source(server, datasets_dir, name):
    """The registered paths, sizes and checksums of Nations/UMLS against the real bytes."""
    spec = datasets.REGISTRY[name]
    for remote in spec.files:
        split = remote.splits[0].split
        server.files[remote.path] = (datasets_dir / "kg" / name / f"{split}.txt").read_bytes()
    ds = datasets.load(name, base_url=server.url)
    assert ds.name == name
    assert {s: len(ts) for s, ts in ds.splits.items()} == spec.counts
    assert sorted(server.requests) == sorted(f.path for f in spec.files)
