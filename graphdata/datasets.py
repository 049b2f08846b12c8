r"""Knowledge-graph benchmarks by name, downloaded once into a cache, verified before use.

``load("fb15k237")`` returns a :class:`~graphdata.triples.KGDataset`. On first use each of the
dataset's files is downloaded from its source pinned at a fixed git commit, its size and
checksum are checked against :data:`REGISTRY` *before* anything reads it, and it is moved into
the cache with an atomic rename (:mod:`graphdata._download`); archives are then unpacked,
extracting only the registered members (no other path is ever written, so an archive cannot
write outside the cache). A failed download leaves nothing in the cache.

**Cache.** ``$GRAPHLIB_HOME/datasets/NAME/`` holding ``train.txt``, ``valid.txt``, ``test.txt``
and a manifest ``.graphlib-dataset.json`` with each file's size and SHA-256, written last (a
folder without it is incomplete and is filled in again). ``GRAPHLIB_HOME`` defaults to the user
cache: ``$XDG_CACHE_HOME/graphlib`` (``~/.cache/graphlib``), ``~/Library/Caches/graphlib`` on
macOS, ``%LOCALAPPDATA%\graphlib\Cache`` on Windows. Every load of a cached dataset recomputes
the SHA-256 of its split files and compares it with the manifest (under 0.1 s for FB15k-237's
24 MB), so a file edited or damaged in the cache is noticed. Concurrent loads do not corrupt the
cache: each writer writes its own temporary file and renames it into place, and both rename the
same verified bytes.

**Mirrors and tests.** File URLs are ``BASE + path`` with ``BASE`` the ``base_url=`` argument,
else the ``GRAPHLIB_DATASETS_URL`` environment variable, else
``https://raw.githubusercontent.com/`` (:data:`DEFAULT_BASE_URL`); a mirror serves the same
paths.

**Offline.** ``load(name, path=P)`` never touches the network: ``P`` is a folder with
``train.txt``/``valid.txt``/``test.txt`` (read in place), a folder holding the registered
download(s) under their file names, or the registered archive itself (unpacked into the cache).
Their checksums are verified; a file that differs raises :class:`~graphdata._download.ChecksumError`
saying it is not the registered release, and how to read it anyway
(:meth:`KGDataset.from_folder`). ``offline=True`` reads the cache only.

**Sources and checksums.** Every checksum below was computed here from the bytes of the git
blobs at the pinned commit (``git show COMMIT:PATH | sha256sum``, on snapshots of the source
repositories; none is an LFS pointer), and the triple counts with ``wc -l``; they agree with the
published counts. Where a file's bytes could not be obtained (YAGO3-10's ``train.txt``, over the
snapshot size limit) the registry pins its git blob id from the commit's tree instead
(``git-sha1``, what ``git hash-object`` prints): still a checksum of exact bytes, set by the
source's history, not by us.

* ``fb15k237``: TimDettmers/ConvE@f3c0eb2 ``FB15k-237.tar.gz`` (the original Toutanova & Chen
  release, CRLF line endings). As triple sets (line endings aside) its splits equal the
  project's ``shared/datasets/kg/fb15k237`` copy exactly (0 triples differ in each split);
  the bytes differ only by ``\r\n`` vs ``\n``.
* ``wn18rr``: TimDettmers/ConvE@f3c0eb2 ``WN18RR.tar.gz`` (the WN18RR authors' release).
* ``yago3-10``: villmow/datasets_knowledge_embedding@9e39245 ``other/YAGO3-10/*.txt`` (the
  ConvE split; ConvE's own ``YAGO3-10.tar.gz`` could not be read here either).
* ``codex-s``, ``codex-m``: tsafavi/codex@3132e42 ``data/triples/codex-{s,m}/*.txt``.
* ``nations``, ``umls``, ``kinships``: pykeen/pykeen tag v1.11.1 (commit 8379e33)
  ``src/pykeen/datasets/{nations,umls,kinships}/*.txt``; byte-identical to the members of
  ConvE's ``nations.tar.gz``, ``umls.tar.gz``, ``kinship.tar.gz`` (same sizes) and, for Nations
  and UMLS, to ``shared/datasets/kg/{nations,umls}``.

Licences marked [unverified] are those commonly stated for the data; check the source.

Examples:
    >>> names()
    ['codex-m', 'codex-s', 'fb15k237', 'kinships', 'nations', 'umls', 'wn18rr', 'yago3-10']
    >>> REGISTRY["nations"].counts
    {'train': 1592, 'valid': 199, 'test': 201}
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
import tarfile
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Literal, cast

from graphdata._download import ChecksumError, DownloadError, download_file, file_checksum
from graphdata.atomic import atomic_path, write_text_atomic
from graphdata.errors import GraphDataError

if TYPE_CHECKING:
    from graphdata.triples import KGDataset, OnUnknown

__all__ = [
    "DEFAULT_BASE_URL",
    "REGISTRY",
    "ChecksumError",
    "DatasetSpec",
    "DownloadError",
    "RemoteFile",
    "SplitFile",
    "cache_root",
    "canonical_name",
    "download",
    "get_spec",
    "load",
    "names",
    "path",
]

#: Where the registered paths are fetched from unless ``base_url`` / ``GRAPHLIB_DATASETS_URL``.
DEFAULT_BASE_URL = "https://raw.githubusercontent.com/"
#: The manifest a complete cache folder holds, written after every file was verified.
MANIFEST = ".graphlib-dataset.json"
_HEX = {"sha256": re.compile(r"^[0-9a-f]{64}$"), "git-sha1": re.compile(r"^[0-9a-f]{40}$")}
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")

Split = Literal["train", "valid", "test"]
SPLITS: tuple[Split, ...] = ("train", "valid", "test")


@dataclass(frozen=True)
class SplitFile:
    """One split of a dataset: which file (or archive member) it is and what it must hold.

    Args:
        split: ``"train"``, ``"valid"`` or ``"test"``; installed as ``SPLIT.txt``.
        triples: Its number of lines (triples), checked after every download.
        sha256: SHA-256 of its bytes, or ``None`` if only ``git_sha1`` is known.
        git_sha1: Its git blob id (``git hash-object``), used when ``sha256`` is ``None``.
        member: Its path inside the archive; ``None`` when the download is this file.
    """

    split: Split
    triples: int
    sha256: str | None = None
    git_sha1: str | None = None
    member: str | None = None

    def checksum(self) -> tuple[Literal["sha256", "git-sha1"], str] | None:
        """The strongest checksum known: ``("sha256", hex)``, ``("git-sha1", hex)`` or None."""
        if self.sha256 is not None:
            return "sha256", self.sha256
        if self.git_sha1 is not None:
            return "git-sha1", self.git_sha1
        return None


@dataclass(frozen=True)
class RemoteFile:
    """One file to download: an archive of splits, or a split file itself.

    Args:
        path: Its path below the base URL, ``OWNER/REPO/COMMIT/FILE`` for GitHub.
        splits: The splits it provides (each with ``member`` set, for an archive).
        sha256: SHA-256 of the download. For a plain split file leave ``None``: the split's.
        size: Its size in bytes, or ``None`` if unknown.
    """

    path: str
    splits: tuple[SplitFile, ...]
    sha256: str | None = None
    size: int | None = None

    @property
    def archive(self) -> Literal["tar", "zip"] | None:
        """``"tar"`` for ``.tar.gz``/``.tgz``/``.tar``, ``"zip"`` for ``.zip``, else None."""
        if self.path.endswith((".tar.gz", ".tgz", ".tar")):
            return "tar"
        return "zip" if self.path.endswith(".zip") else None

    @property
    def filename(self) -> str:
        """The file name the download is stored under (the last path component)."""
        return PurePosixPath(self.path).name

    def checksum(self) -> tuple[Literal["sha256", "git-sha1"], str] | None:
        """The download's checksum: the archive's, or the split file's for a plain file."""
        if self.archive is not None:
            return None if self.sha256 is None else ("sha256", self.sha256)
        return self.splits[0].checksum()


@dataclass(frozen=True)
class DatasetSpec:
    """A registered dataset: its files, where they come from, how to cite it.

    Args:
        name: The name :func:`load` takes (lower case, digits and ``-``).
        files: The downloads; together they provide ``train``, ``valid`` and ``test`` once each.
        source: Where the files come from (repository, commit) and how they were checked.
        citation: The paper that introduced the dataset, with DOI or arXiv id.
        licence: The data's licence.

    Raises:
        GraphDataError: If the name, a checksum, a member path or the set of splits is malformed.
    """

    name: str
    files: tuple[RemoteFile, ...]
    source: str
    citation: str
    licence: str

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise GraphDataError(
                f"name: expected lower-case letters, digits and '-', got {self.name!r}"
            )
        got = sorted(s.split for f in self.files for s in f.splits)
        if got != sorted(SPLITS):
            raise GraphDataError(
                f"files: expected the splits {SPLITS} once each, got {got} ({self.name})"
            )
        for f in self.files:
            checks = [("sha256", f.sha256)] + [
                (kind, value)
                for s in f.splits
                for kind, value in (("sha256", s.sha256), ("git-sha1", s.git_sha1))
            ]
            for kind, value in checks:
                if value is not None and not _HEX[kind].match(value):
                    raise GraphDataError(
                        f"{f.path}: expected a {kind} of lower-case hex digits, got {value!r}"
                    )
            if f.checksum() is None:
                raise GraphDataError(f"{f.path}: expected a checksum (sha256 or git_sha1)")
            if f.archive is None and (len(f.splits) != 1 or f.splits[0].member is not None):
                raise GraphDataError(f"{f.path}: a plain file provides one split and has no member")
            for s in f.splits:
                if f.archive is not None and s.member is None:
                    raise GraphDataError(f"{f.path}: split {s.split!r} needs its archive member")
                if s.member is not None:
                    _check_member(s.member, f.path)

    @property
    def counts(self) -> dict[str, int]:
        """Triples per split (lines of each file), in the order train, valid, test."""
        by_split = {s.split: s.triples for f in self.files for s in f.splits}
        return {split: by_split[split] for split in SPLITS}


def _check_member(member: str, where: str) -> None:
    """Refuse absolute paths, ``..`` and backslashes in a registered archive member."""
    parts = PurePosixPath(member).parts
    if not parts or member.startswith("/") or "\\" in member or ".." in parts:
        raise GraphDataError(
            f"{where}: archive member {member!r} must be a relative path without '..'"
        )


def _tar(path: str, sha256: str, size: int, **splits: tuple[int, str]) -> RemoteFile:
    """An archive whose members ``SPLIT.txt`` are the splits: ``split=(triples, sha256)``."""
    return RemoteFile(
        path,
        tuple(
            SplitFile(cast(Split, split), n, sha256=sha, member=f"{split}.txt")
            for split, (n, sha) in splits.items()
        ),
        sha256=sha256,
        size=size,
    )


def _txt(folder: str, **splits: tuple[int, str, int]) -> tuple[RemoteFile, ...]:
    """Plain files ``folder/SPLIT.txt``: ``split=(triples, sha256, size)``."""
    return tuple(
        RemoteFile(
            f"{folder}/{split}.txt", (SplitFile(cast(Split, split), n, sha256=sha),), size=size
        )
        for split, (n, sha, size) in splits.items()
    )


_CONVE = "TimDettmers/ConvE/f3c0eb286025410fa5b4c04696c918264163d0ca"
_CODEX = "tsafavi/codex/3132e426c2a6b643b70bad679905a3a6270be440/data/triples"
_PYKEEN = "pykeen/pykeen/8379e338134bd33e53340b47f95c13028a4f9dbf/src/pykeen/datasets"  # v1.11.1
_VILLMOW = "villmow/datasets_knowledge_embedding/9e392453d6804d1f51c13e5650ae58ed48b638d5"
_KOK_DOMINGOS = (
    "Kok & Domingos, Statistical predicate invention, ICML 2007, doi:10.1145/1273496.1273551"
)
_CODEX_PAPER = (
    "Safavi & Koutra, CoDEx: A Comprehensive Knowledge Graph Completion Benchmark, EMNLP 2020, "
    "arXiv:2009.07810"
)

#: The registered datasets, by name: triples, SHA-256 and size in bytes of the exact bytes served.
REGISTRY: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in (
        DatasetSpec(
            "fb15k237",
            (
                _tar(
                    f"{_CONVE}/FB15k-237.tar.gz",
                    "311df7930f842a02979eaa7a802484a6afe62303c07f915f1e6edbc30cbe05e8",
                    3678603,
                    train=(
                        272115,
                        "6e4c2782169af21e9743f3b1d200886f5d595bf6bc504ec1351720949c5cdfae",
                    ),
                    valid=(
                        17535,
                        "cf6309010852f6a8d47a45df830a426415d1ee6f7a3970a8376ff1fb81db4a5c",
                    ),
                    test=(
                        20466,
                        "5711cf41623ceb4eacc50eb6108a3ca6565c7492e3caaf82a3e355cc660d1574",
                    ),
                ),
            ),
            source="TimDettmers/ConvE@f3c0eb2 FB15k-237.tar.gz (git blob d87987f)",
            citation="Toutanova & Chen, Observed versus latent features for knowledge base and "
            "text inference, CVSC 2015, doi:10.18653/v1/W15-4007",
            licence="CC BY 4.0 (Microsoft FB15K-237 release; Freebase data CC BY) [unverified]",
        ),
        DatasetSpec(
            "wn18rr",
            (
                _tar(
                    f"{_CONVE}/WN18RR.tar.gz",
                    "1eb9152f804c140d163462c0d49f65e5a0b30ab5fbb375c5e3353c11a6249060",
                    892861,
                    train=(
                        86835,
                        "038612e783c215ee5f3ca9fbfca27b8d0739be1028fe4ee7c174aecf0b83d5df",
                    ),
                    valid=(
                        3034,
                        "453ce7202afa58094a04d2b1560ee2b02660f1c260b32ce6651c8ccedd1028ab",
                    ),
                    test=(3134, "0383bceaaa1096cf3c03ec021ed0048068e2355dbfc0239b292cefdac821cec5"),
                ),
            ),
            source="TimDettmers/ConvE@f3c0eb2 WN18RR.tar.gz (git blob 37f00f2)",
            citation="Dettmers et al., Convolutional 2D Knowledge Graph Embeddings, AAAI 2018, "
            "arXiv:1707.01476",
            licence="WordNet licence (Princeton) [unverified]; ConvE repository MIT",
        ),
        DatasetSpec(
            "yago3-10",
            (
                # train.txt is over the snapshot size limit here: pinned by the tree's blob id.
                RemoteFile(
                    f"{_VILLMOW}/other/YAGO3-10/train.txt",
                    (
                        SplitFile(
                            "train", 1079040, git_sha1="1543056ff5af6d3bf841510129529e91e9a8627c"
                        ),
                    ),
                ),
                *_txt(
                    f"{_VILLMOW}/other/YAGO3-10",
                    valid=(
                        5000,
                        "c9018b77ec77e99f8d48bc3258d404f10b2049a6c7b4ac6eb663697e799dc6f5",
                        236350,
                    ),
                    test=(
                        5000,
                        "003887ca8a34c90fcaf9b0250b1c30a4b5f617f80f8cf0aeab9723333061598a",
                        238041,
                    ),
                ),
            ),
            source="villmow/datasets_knowledge_embedding@9e39245 other/YAGO3-10 (the ConvE "
            "split); train.txt pinned by its git blob id, valid/test by SHA-256",
            citation="Mahdisoltani et al., YAGO3: A Knowledge Base from Multilingual "
            "Wikipedias, CIDR 2015; split of Dettmers et al., AAAI 2018, arXiv:1707.01476",
            licence="CC BY 3.0 (YAGO) [unverified]; repository MIT",
        ),
        DatasetSpec(
            "codex-s",
            _txt(
                f"{_CODEX}/codex-s",
                train=(
                    32888,
                    "64f93b7f314f3936a6f65739721429db3f6a7c8f5a1e1104ec3bb544f7434f59",
                    615428,
                ),
                valid=(
                    1827,
                    "3831c0e57daef03c3a18cdd1a72e370b496f696c5218883d35c7d2ab8a6a772c",
                    34323,
                ),
                test=(
                    1828,
                    "27127fcb34688c4778e88a39ef3c9b540807da846021e9d9685660ac1838aca1",
                    34252,
                ),
            ),
            source="tsafavi/codex@3132e42 data/triples/codex-s",
            citation=_CODEX_PAPER,
            licence="MIT (repository); Wikidata CC0",
        ),
        DatasetSpec(
            "codex-m",
            _txt(
                f"{_CODEX}/codex-m",
                train=(
                    185584,
                    "d99c3437ab51690391a26d96976adf6e5494dba7ef6902e77000551bfa566556",
                    3660213,
                ),
                valid=(
                    10310,
                    "11c323096367354940846b9ed940c5dabddc1d20a70474222babe7e7fd28b28d",
                    203470,
                ),
                test=(
                    10311,
                    "0575ce05e4ce915e395bb4f708e8df9547989dd4c8c71407cbfd78c19daffcf7",
                    203693,
                ),
            ),
            source="tsafavi/codex@3132e42 data/triples/codex-m",
            citation=_CODEX_PAPER,
            licence="MIT (repository); Wikidata CC0",
        ),
        DatasetSpec(
            "nations",
            _txt(
                f"{_PYKEEN}/nations",
                train=(
                    1592,
                    "0830fa9da8e5bba2ccdaa45b7bdc9130451ba66b09ff2708f35fccaf82473e57",
                    39101,
                ),
                valid=(
                    199,
                    "2b337a62e51a2f45c283eac98a70d21b7e0e102136be1539b2a52c652a7b0530",
                    4851,
                ),
                test=(
                    201,
                    "3971085165b47b6aeaec68058c6d8d98b3005e929db81268410b95ae4db770ab",
                    4951,
                ),
            ),
            source="pykeen/pykeen v1.11.1 (8379e33) src/pykeen/datasets/nations",
            citation=_KOK_DOMINGOS,
            licence="MIT (PyKEEN)",
        ),
        DatasetSpec(
            "umls",
            _txt(
                f"{_PYKEEN}/umls",
                train=(
                    5216,
                    "873ef4925516b83e7f6f8cc02b4be51d848828710a7f65a956f0ac4a9e452f35",
                    260013,
                ),
                valid=(
                    652,
                    "025c98f8a4891e2a6582ec5b40ee0d904031edad9c52554522f4b7904820c98e",
                    32963,
                ),
                test=(
                    661,
                    "a7eb529a3d2810fcc96341ccc97c625a5e202f8389673aa6bd317eeebbb79014",
                    32968,
                ),
            ),
            source="pykeen/pykeen v1.11.1 (8379e33) src/pykeen/datasets/umls",
            citation="McCray, An upper-level ontology for the biomedical domain, 2003; "
            f"{_KOK_DOMINGOS}",
            licence="MIT (PyKEEN)",
        ),
        DatasetSpec(
            "kinships",
            _txt(
                f"{_PYKEEN}/kinships",
                train=(
                    8544,
                    "738612111a6acf0e39662bde24c7e72a4d1edf20931beea077da367dda689731",
                    208710,
                ),
                valid=(
                    1068,
                    "c56f8630a583178b1e569f11a64aa535ae1ce0b0912d8b1e24716be2b37f04da",
                    26088,
                ),
                test=(
                    1074,
                    "05e5733265761d55be9c05bfaff5a8d0808df46f9c1e9d66cc3f2fe114e43d88",
                    26255,
                ),
            ),
            source="pykeen/pykeen v1.11.1 (8379e33) src/pykeen/datasets/kinships",
            citation="Denham, The detection of patterns in Alyawarra nonverbal behavior, 1973; "
            f"{_KOK_DOMINGOS}",
            licence="MIT (PyKEEN)",
        ),
    )
}


def names() -> list[str]:
    """The registered dataset names, sorted.

    Returns:
        The names :func:`load` accepts.

    Examples:
        >>> "fb15k237" in names()
        True
    """
    return sorted(REGISTRY)


#: Other spellings accepted for registered names (compared after lower-casing).
ALIASES = {"fb15k-237": "fb15k237", "kinship": "kinships", "yago3_10": "yago3-10"}


def canonical_name(name: str) -> str | None:
    """The registered name ``name`` spells (any case, or an alias), or ``None``.

    Args:
        name: A dataset name as a user typed it.

    Returns:
        The registered name, or ``None`` if there is none.

    Examples:
        >>> canonical_name("FB15k-237"), canonical_name("Nations"), canonical_name("x")
        ('fb15k237', 'nations', None)
    """
    key = name.lower()
    key = ALIASES.get(key, key)
    return key if key in REGISTRY else None


def get_spec(name: str | DatasetSpec) -> DatasetSpec:
    """The registered :class:`DatasetSpec` of ``name`` (a spec is returned as it is).

    Args:
        name: A registered name, or a :class:`DatasetSpec` (e.g. a test's own).

    Returns:
        The spec.

    Raises:
        GraphDataError: If ``name`` is not registered; the message lists the names.

    Examples:
        >>> get_spec("umls").counts["train"]
        5216
    """
    if isinstance(name, DatasetSpec):
        return name
    registered = canonical_name(name)
    if registered is None:
        raise GraphDataError(
            f"dataset: expected one of {', '.join(names())}, got {name!r}; or pass a folder "
            "with train.txt, valid.txt and test.txt"
        )
    return REGISTRY[registered]


def cache_root(root: str | os.PathLike[str] | None = None) -> Path:
    r"""The folder datasets are cached in: ``root``, else ``$GRAPHLIB_HOME/datasets``.

    ``GRAPHLIB_HOME`` defaults to the user cache folder: ``$XDG_CACHE_HOME/graphlib`` (default
    ``~/.cache/graphlib``) on Linux, ``~/Library/Caches/graphlib`` on macOS,
    ``%LOCALAPPDATA%\graphlib\Cache`` on Windows.

    Args:
        root: A folder to use instead; default ``None``.

    Returns:
        The cache folder (not created).
    """
    if root is not None:
        return Path(root).expanduser()
    home = os.environ.get("GRAPHLIB_HOME")
    if home:
        return Path(home).expanduser() / "datasets"
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches" / "graphlib"
    elif sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        base = Path(local) / "graphlib" / "Cache"
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg) if xdg else Path.home() / ".cache") / "graphlib"
    return base / "datasets"


def path(name: str | DatasetSpec, *, root: str | os.PathLike[str] | None = None) -> Path:
    """The cache folder of dataset ``name`` (whether or not it is downloaded yet).

    Args:
        name: A registered name or a :class:`DatasetSpec`.
        root: The cache folder; default ``None``: :func:`cache_root`.

    Returns:
        ``cache_root(root) / name``.

    Raises:
        GraphDataError: If ``name`` is not registered.
    """
    return _folder(get_spec(name), root)


def _folder(spec: DatasetSpec, root: str | os.PathLike[str] | None) -> Path:
    return cache_root(root) / spec.name


def _count_lines(file: Path) -> int:
    lines, last = 0, b"\n"
    with open(file, "rb") as handle:
        while chunk := handle.read(1 << 20):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    return lines + (last != b"\n")


def _verify_split(file: Path, split: SplitFile, spec: DatasetSpec, fix: str) -> None:
    """Check a split file's checksum and triple count; raise ChecksumError naming the fix."""
    known = split.checksum()
    if known is not None:
        kind, expected = known
        got = file_checksum(file, kind)
        if got != expected:
            raise ChecksumError(
                f"{file}: {kind} {got}, but the registered {spec.name} {split.split}.txt has "
                f"{expected}: this is not the registered release (another version, or edited); "
                f"{fix}"
            )
    lines = _count_lines(file)
    if lines != split.triples:
        raise ChecksumError(
            f"{file}: {lines} lines, but the registered {spec.name} {split.split}.txt has "
            f"{split.triples} triples; {fix}"
        )


def _verify_download(file: Path, remote: RemoteFile, spec: DatasetSpec, fix: str) -> None:
    """Check a local copy of a registered download (archive or split file)."""
    if remote.archive is None:
        _verify_split(file, remote.splits[0], spec, fix)
        return
    if remote.sha256 is None:  # pragma: no cover - the spec requires it
        raise ChecksumError(f"{remote.path}: no checksum registered")
    got = file_checksum(file)
    if got != remote.sha256:
        raise ChecksumError(
            f"{file}: sha256 {got}, but the registered {spec.name} {remote.filename} has "
            f"{remote.sha256}: this is not the registered release; {fix}"
        )


@contextlib.contextmanager
def _open_member(archive: Path, remote: RemoteFile, member: str, fix: str) -> Iterator[IO[bytes]]:
    """Open the regular file ``member`` of a tar or zip archive for reading (no links)."""
    if remote.archive == "zip":
        with zipfile.ZipFile(archive) as zf:
            if member not in zf.namelist():
                raise ChecksumError(f"{archive}: no file {member!r} inside; {fix}")
            with zf.open(member) as src:
                yield src
        return
    with tarfile.open(archive) as tf:
        try:
            info: tarfile.TarInfo | None = tf.getmember(member)
        except KeyError:
            info = None
        src_tar = tf.extractfile(info) if info is not None and info.isfile() else None
        if src_tar is None:
            raise ChecksumError(f"{archive}: no regular file {member!r} inside; {fix}")
        with src_tar:
            yield src_tar


def _extract(archive: Path, remote: RemoteFile, folder: Path, spec: DatasetSpec) -> None:
    """Write the registered members of ``archive`` to ``folder/SPLIT.txt``, each verified.

    Only the registered member names are read, and each is written to a name chosen here, so
    no path from the archive is ever used as a destination (no path traversal, no links).
    """
    fix = "the archive is not the registered one: delete it and download again"
    for split in remote.splits:
        assert split.member is not None
        target = folder / f"{split.split}.txt"
        with atomic_path(target) as tmp:
            with open(tmp, "wb") as out, _open_member(archive, remote, split.member, fix) as src:
                shutil.copyfileobj(src, out)
            _verify_split(tmp, split, spec, fix)


def _write_manifest(folder: Path, spec: DatasetSpec) -> None:
    files = {}
    for split in SPLITS:
        file = folder / f"{split}.txt"
        files[file.name] = {"size": file.stat().st_size, "sha256": file_checksum(file)}
    manifest = {"name": spec.name, "source": spec.source, "files": files}
    write_text_atomic(
        folder / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True, allow_nan=False) + "\n"
    )


def _cached(folder: Path, spec: DatasetSpec) -> bool:
    """Whether ``folder`` holds a complete, verified copy; raise if a cached file changed."""
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        return False
    try:
        files = json.loads(manifest_path.read_text(encoding="utf-8"))["files"]
    except (ValueError, KeyError, TypeError):
        return False  # a damaged manifest: fill the folder in again
    fix = (
        f"delete {folder} (or run `graphlib data download {spec.name} --force`) to download "
        "it again"
    )
    pinned = {s.split: s.sha256 for f in spec.files for s in f.splits}
    for split in SPLITS:
        file, entry = folder / f"{split}.txt", files.get(f"{split}.txt", {})
        expected = entry.get("sha256")
        if pinned[split] is not None and expected != pinned[split]:
            return False  # written for another release of the dataset
        if not file.is_file():
            return False
        size = file.stat().st_size
        if size != entry.get("size") or file_checksum(file) != expected:
            raise ChecksumError(
                f"{file}: the cached file changed since it was verified (size {size}, expected "
                f"{entry.get('size')}, or another sha256); {fix}"
            )
    return True


def _base_url(base_url: str | None) -> str:
    base = base_url or os.environ.get("GRAPHLIB_DATASETS_URL") or DEFAULT_BASE_URL
    return base if base.endswith("/") else base + "/"


def _offline_fix(spec: DatasetSpec) -> str:
    files = ", ".join(f.filename for f in spec.files)
    return (
        f"or download {files} yourself and pass the file or folder (load({spec.name!r}, "
        f"path=...), graphlib data download {spec.name} --from PATH)"
    )


def download(
    name: str | DatasetSpec,
    *,
    root: str | os.PathLike[str] | None = None,
    base_url: str | None = None,
    force: bool = False,
    progress: bool | None = None,
) -> Path:
    """Make sure dataset ``name`` is in the cache, downloading what is missing; return its folder.

    Args:
        name: A registered name or a :class:`DatasetSpec`.
        root: The cache folder; default ``None``: :func:`cache_root`.
        base_url: The URL prefix of the registered paths; default ``None``: the
            ``GRAPHLIB_DATASETS_URL`` environment variable, else :data:`DEFAULT_BASE_URL`.
        force: Download again even if the cache holds a verified copy. Default ``False``.
        progress: A tqdm bar per file: ``None`` (default) for files over 4 MiB on a terminal.

    Returns:
        The folder with ``train.txt``, ``valid.txt`` and ``test.txt``.

    Raises:
        GraphDataError: If ``name`` is not registered.
        DownloadError: On an HTTP error, no network or a truncated download.
        ChecksumError: If a download's size or checksum is not the registered one.
    """
    spec = get_spec(name)
    folder = _folder(spec, root)
    if not force and _cached(folder, spec):
        return folder
    (folder / MANIFEST).unlink(missing_ok=True)
    base = _base_url(base_url)
    for remote in spec.files:
        known = remote.checksum()
        assert known is not None  # DatasetSpec requires one
        kind, checksum = known
        target = folder / (remote.filename if remote.archive else f"{remote.splits[0].split}.txt")
        download_file(
            base + remote.path,
            target,
            checksum=checksum,
            kind=kind,
            size=remote.size,
            progress=progress,
            offline_hint=_offline_fix(spec),
        )
        if remote.archive is not None:
            try:
                _extract(target, remote, folder, spec)
            finally:
                target.unlink(missing_ok=True)  # only the extracted splits stay
        else:
            _verify_split(target, remote.splits[0], spec, "retry the download")
    _write_manifest(folder, spec)
    return folder


def _install_local(local: Path, spec: DatasetSpec, folder: Path) -> Path | None:
    """Verify a user's file or folder; return the folder of split files to read, or None."""
    fix = (
        "to read it anyway, pass it as a plain folder (graphlib kg train --dataset FOLDER, "
        "KGDataset.from_folder)"
    )
    if local.is_dir():
        splits = {s.split: s for f in spec.files for s in f.splits}
        if all((local / f"{split}.txt").is_file() for split in SPLITS):
            for split in SPLITS:
                _verify_split(local / f"{split}.txt", splits[split], spec, fix)
            return local
        downloads = [local / f.filename for f in spec.files]
        if not all(file.is_file() for file in downloads):
            return None
    elif local.is_file():
        if len(spec.files) != 1:
            raise GraphDataError(
                f"path: {spec.name} has {len(spec.files)} files, got the single file {local}; "
                f"pass a folder holding {', '.join(f.filename for f in spec.files)}"
            )
        downloads = [local]
    else:
        raise GraphDataError(
            f"path: expected a file or folder with the {spec.name} files, got {local}, which "
            "does not exist"
        )
    for file, remote in zip(downloads, spec.files):
        _verify_download(file, remote, spec, fix)
    for file, remote in zip(downloads, spec.files):
        if remote.archive is not None:
            _extract(file, remote, folder, spec)
        else:
            with atomic_path(folder / f"{remote.splits[0].split}.txt") as tmp:
                shutil.copyfile(file, tmp)
    _write_manifest(folder, spec)
    return folder


def load(
    name: str | DatasetSpec,
    *,
    root: str | os.PathLike[str] | None = None,
    path: str | os.PathLike[str] | None = None,
    offline: bool = False,
    base_url: str | None = None,
    on_unknown: OnUnknown = "drop",
    progress: bool | None = None,
) -> KGDataset:
    """Load a registered dataset, downloading and verifying it on first use.

    Args:
        name: A registered name (:func:`names`) or a :class:`DatasetSpec`.
        root: The cache folder; default ``None``: :func:`cache_root` (``GRAPHLIB_HOME``).
        path: A local copy to use instead of the network: a folder with ``train.txt``,
            ``valid.txt`` and ``test.txt`` (read in place), a folder holding the registered
            download(s) by file name, or the registered archive; checksums are verified.
        offline: Never use the network: read the cache (or ``path``). Default ``False``.
        base_url: URL prefix of the registered paths (a mirror); default ``None``:
            ``GRAPHLIB_DATASETS_URL``, else :data:`DEFAULT_BASE_URL`.
        on_unknown: Valid/test triples with labels not in ``train.txt``: ``"drop"`` them with
            one :class:`~graphdata.errors.UnknownLabelsDropped` warning (default, PyKEEN's
            behaviour), ``"raise"`` or ``"extend"`` (:meth:`KGDataset.from_folder`).
        progress: A tqdm bar per download: ``None`` (default) for files over 4 MiB on a
            terminal.

    Returns:
        The dataset, named ``name``.

    Raises:
        GraphDataError: If ``name`` is not registered, or ``path`` holds no registered layout.
        DownloadError: On an HTTP error, no network or a truncated download.
        ChecksumError: If a file's size, checksum or triple count is not the registered one.
    """
    from graphdata.triples import KGDataset

    spec = get_spec(name)
    folder: Path | None
    if path is not None:
        folder = _install_local(Path(path), spec, _folder(spec, root))
        if folder is None:
            expected = ", ".join(f.filename for f in spec.files)
            raise GraphDataError(
                f"path: expected {path} to hold train.txt, valid.txt and test.txt, or {expected}; "
                f"it holds {', '.join(_listing(Path(path))) or 'nothing'}"
            )
    elif offline:
        folder = _folder(spec, root)
        if not _cached(folder, spec):
            raise GraphDataError(
                f"offline: {spec.name} is not in the cache {folder}; download it when online "
                f"(graphlib data download {spec.name}) {_offline_fix(spec)}"
            )
    else:
        folder = download(spec, root=root, base_url=base_url, progress=progress)
    return KGDataset.from_folder(folder, format="labeled", name=spec.name, on_unknown=on_unknown)


def _listing(folder: Path, limit: int = 8) -> Iterable[str]:
    entries = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    return entries[:limit] + (["..."] if len(entries) > limit else [])
