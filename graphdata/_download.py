r"""Download one file over HTTP(S) with the standard library, verified before it is used.

:func:`download_file` streams a URL (:func:`urllib.request.urlopen`) into a temporary file in
the target's folder (:func:`graphdata.atomic.atomic_path`), checks the byte count against the
server's ``Content-Length`` and the expected size, then the checksum, and only then renames the
file into place (:func:`os.replace`). Any failure (HTTP error, refused connection, no network,
short read, wrong checksum) removes the temporary file and raises :class:`DownloadError` naming
the URL, what was expected and what arrived, and the fix: retry, or pass a copy obtained by
other means (the ``path=`` of :func:`graphdata.datasets.load`).

Checksums are SHA-256 (:func:`hashlib.sha256`), or, for files whose bytes could not be read
when the registry was written, the git blob id of a pinned commit's tree: SHA-1 over
``b"blob <size>\0"`` followed by the bytes (https://git-scm.com/book/en/v2/Git-Internals-Git-Objects),
which is what ``git hash-object FILE`` prints.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Literal

from graphdata.atomic import atomic_path
from graphdata.errors import GraphDataError

__all__ = ["ChecksumError", "DownloadError", "download_file", "file_checksum"]

#: Downloads larger than this show a tqdm bar (when stderr is a terminal).
_PROGRESS_BYTES = 4 * 1024 * 1024
_CHUNK = 1 << 20
#: Seconds without data before a download is abandoned.
_TIMEOUT = 60.0

ChecksumKind = Literal["sha256", "git-sha1"]


class DownloadError(GraphDataError):
    """A dataset file could not be downloaded: HTTP error, no network, or a short read."""


class ChecksumError(DownloadError):
    """A downloaded or local file's checksum (or size) is not the registered one."""


def file_checksum(path: str | os.PathLike[str], kind: ChecksumKind = "sha256") -> str:
    r"""The hex checksum of a file: SHA-256, or the git blob id (``git hash-object``).

    Args:
        path: The file.
        kind: ``"sha256"`` (default) or ``"git-sha1"``: SHA-1 of ``b"blob <size>\0" + bytes``.

    Returns:
        The lower-case hex digest.

    Examples:
        >>> import tempfile
        >>> f = Path(tempfile.mkdtemp()) / "x"
        >>> _ = f.write_bytes(b"hello\n")
        >>> file_checksum(f)[:16]
        '5891b5b522d5df08'
        >>> file_checksum(f, "git-sha1")  # git hash-object prints the same
        'ce013625030ba8dba906f756967f9e9ca394464a'
    """
    digest = hashlib.sha256() if kind == "sha256" else hashlib.sha1()  # noqa: S324 (git's id)
    if kind == "git-sha1":
        digest.update(b"blob %d\0" % os.path.getsize(path))
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _progress(total: int | None, label: str, enabled: bool | None) -> Any:
    """A tqdm bar for large downloads on a terminal, else ``None``."""
    if enabled is None:
        enabled = total is not None and total > _PROGRESS_BYTES and sys.stderr.isatty()
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=label)


def download_file(
    url: str,
    target: str | os.PathLike[str],
    *,
    checksum: str,
    kind: ChecksumKind = "sha256",
    size: int | None = None,
    progress: bool | None = None,
    offline_hint: str = "",
) -> Path:
    """Download ``url`` to ``target``, verifying size and checksum before the atomic rename.

    Args:
        url: An ``http(s)://`` (or ``file://``) URL.
        target: Where the verified file goes; its folder is created if missing.
        checksum: The expected hex digest of the file.
        kind: What ``checksum`` is: ``"sha256"`` (default) or ``"git-sha1"`` (git blob id).
        size: The expected size in bytes, or ``None`` if unknown.
        progress: Show a tqdm bar: ``None`` (default) for files over 4 MiB when stderr is a
            terminal, ``True`` always, ``False`` never.
        offline_hint: Appended to every error message: how to use a local copy instead.

    Returns:
        ``target`` as a :class:`~pathlib.Path`.

    Raises:
        DownloadError: On an HTTP error (e.g. 404), a refused connection, no network, a
            timeout, or fewer bytes than ``Content-Length`` (truncated); nothing is left at
            ``target`` or beside it.
        ChecksumError: If the size or checksum differs from the expected one.
    """
    target = Path(target)
    hint = f"; {offline_hint}" if offline_hint else ""
    with atomic_path(target) as tmp:
        try:
            with urllib.request.urlopen(url, timeout=_TIMEOUT) as response:  # noqa: S310
                length = response.headers.get("Content-Length")
                expected = int(length) if length is not None and length.isdigit() else None
                bar = _progress(expected or size, target.name, progress)
                received = 0
                try:
                    with open(tmp, "wb") as handle:
                        while chunk := response.read(_CHUNK):
                            handle.write(chunk)
                            received += len(chunk)
                            if bar is not None:
                                bar.update(len(chunk))
                finally:
                    if bar is not None:
                        bar.close()
        except urllib.error.HTTPError as err:
            raise DownloadError(
                f"download: {url} answered HTTP {err.code} ({err.reason}); the file may have "
                f"moved: check the URL (or the GRAPHLIB_DATASETS_URL mirror){hint}"
            ) from None
        except http.client.IncompleteRead as err:
            raise DownloadError(
                f"download: {url} was truncated: got {len(err.partial)} more bytes, "
                f"{err.expected} still expected; retry{hint}"
            ) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
            reason = getattr(err, "reason", err)
            raise DownloadError(
                f"download: could not reach {url} ({reason}); no network? retry when online{hint}"
            ) from None
        if expected is not None and received != expected:
            raise DownloadError(
                f"download: {url} was truncated: got {received} bytes, the server announced "
                f"{expected}; retry{hint}"
            )
        if size is not None and received != size:
            raise ChecksumError(
                f"download: {url} has {received} bytes, the registered file has {size}; "
                f"the source changed or the download is damaged: retry{hint}"
            )
        got = file_checksum(tmp, kind)
        if got != checksum:
            raise ChecksumError(
                f"download: {url} ({target.name}) has {kind} {got}, expected {checksum}; "
                f"the download is damaged or the source changed: retry{hint}"
            )
    return target
