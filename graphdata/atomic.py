"""Atomic file writes: write to a temporary file in the target's folder, then rename over it.

Every output of graphlib (checkpoints, logs, figures, reports, AnnData files) goes through
:func:`atomic_path`, so a killed run leaves either the previous file or the new one, never half
of one (:func:`os.replace` is atomic within a file system). What happens at the target:

* **Nothing there, or a regular file**: the temporary file is written, flushed to disk
  (``fsync``) and renamed over the target. A new file gets the mode ``open()`` would give it,
  ``0o666`` minus the umask (``mkstemp`` alone would leave it ``0o600``, unreadable to the
  collaborators of a shared folder); an existing file keeps its mode, as when ``open()``
  truncates it.
* **A symbolic link**: it is followed. The file it points to gets the new content (atomically,
  with the temporary file in that file's folder) and the link survives.
* **A FIFO, a character or block device, a socket** (anything not a regular file): it is written
  directly, with no temporary file and no rename, so ``--json /dev/null`` writes to
  ``/dev/null`` and never replaces it, even as root.
* **A folder**: :class:`OutputIsADirectoryError`, before anything is written.

Temporary files are named ``.NAME.<pid>.<random>.tmp-graphlib<suffix>``. A writer killed with
``kill -9`` cannot remove its own, so each write of ``NAME`` first removes the temporary files of
``NAME`` whose process is no longer alive (never one of a live process, nor this process's own).

A full disk surfaces as :class:`OSError` with ``errno.ENOSPC`` and a message naming the path and
the fix, whichever writer hit it; :func:`require_free_space` checks beforehand for writers that
cannot report it themselves (h5py crashes on a full disk).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from graphdata.errors import GraphDataError

__all__ = [
    "OutputIsADirectoryError",
    "atomic_path",
    "require_free_space",
    "write_bytes_atomic",
    "write_text_atomic",
]

#: Marks the temporary files of :func:`atomic_path` (followed by the writer's suffix).
_TEMP_TAG = ".tmp-graphlib"
#: Error numbers of a full disk or an exhausted quota.
_NO_SPACE = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
_UMASK_LOCK = threading.Lock()


class OutputIsADirectoryError(IsADirectoryError, GraphDataError):
    """An output path names an existing folder.

    Both an :class:`IsADirectoryError` (``errno.EISDIR``) and a
    :class:`~graphdata.errors.GraphDataError`, so either ``except`` catches it.

    Args:
        path: The output path that is a folder.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(
            errno.EISDIR,
            f"output: expected a file path, got the existing folder {str(path)!r}; pass a file "
            "name inside it (e.g. DIR/results.json) or remove the folder",
            str(path),
        )


def _umask() -> int:
    """The process umask, read without changing it where the system allows."""
    with contextlib.suppress(OSError, ValueError, IndexError):  # no /proc: set-and-restore below
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    # os.umask can only be read by setting it: hold a lock so our own threads never see 0.
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (a recycled pid counts as alive: the safe side)."""
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # another user's process, or a pid we cannot probe: keep its file
    return True


def _remove_stale_temps(target: Path) -> list[Path]:
    """Remove the temporary files of ``target`` left by dead writers; return those removed."""
    # mkstemp's random part is [a-z0-9_]+, without dots: the pid is the field before it.
    head, tag = re.escape(f".{target.name}."), re.escape(_TEMP_TAG)
    pattern = re.compile(head + r"(\d+)\.[a-z0-9_]+" + tag)
    removed: list[Path] = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    own = os.getpid()
    for entry in entries:
        match = pattern.match(entry.name)
        if match is None or len(match[1]) > 10:
            continue
        pid = int(match[1])
        if pid == own or _alive(pid):
            continue
        try:
            if entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue  # best effort: a file we cannot remove is left alone
    return removed


def _resolve(target: Path) -> Path:
    """Follow a symbolic link at ``target`` to the file it names (which may not exist yet)."""
    if not target.is_symlink():
        return target
    real = Path(os.path.realpath(target))
    try:
        os.stat(real)
    except FileNotFoundError:
        pass  # a dangling link: writing creates the file it names, as open() does
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise GraphDataError(
                f"output: {str(target)!r} is a symbolic link that loops back on itself; remove "
                "it or pass another path"
            ) from None
        raise
    return real


def _no_space(target: Path, err: OSError) -> OSError:
    return OSError(
        errno.ENOSPC,
        f"no space left on device while writing {str(target)!r} ({err.strerror or err}); free "
        "some space on that disk or choose another output path (--out)",
        str(target),
    )


def _fsync_file(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def atomic_path(path: str | os.PathLike[str], *, suffix: str | None = None) -> Iterator[Path]:
    """Yield a path to write ``path``'s new content to; on success it becomes ``path``.

    For a regular (or not yet existing) file the yielded path is a temporary file next to the
    file (next to a symbolic link's target, for a link), renamed onto it when the ``with`` block
    succeeds; if the block raises, the temporary file is removed and ``path`` is left as it was.
    For a FIFO, device or other non-regular file the yielded path is that file itself, written
    directly. The parent folder of ``path`` (of a symbolic link's target, for a link) is created
    if missing. See the module docstring for modes, stale temporary files and full disks.

    Args:
        path: The file to (re)write.
        suffix: Suffix of the temporary file; None (default) keeps ``path``'s own suffix, so
            writers that infer the format from it (``savefig``, ``write_h5ad``) still work.

    Yields:
        The path to write to.

    Raises:
        OutputIsADirectoryError: If ``path`` is an existing folder.
        OSError: With ``errno.ENOSPC`` if the disk fills up while writing, naming ``path``.

    Examples:
        >>> import tempfile
        >>> target = Path(tempfile.mkdtemp()) / "out.txt"
        >>> with atomic_path(target) as tmp:
        ...     _ = tmp.write_text("done")
        >>> target.read_text()
        'done'
    """
    given = Path(path)
    if given.is_dir():  # also a symbolic link to a folder
        raise OutputIsADirectoryError(given)
    given.parent.mkdir(parents=True, exist_ok=True)
    target = _resolve(given)
    # A dangling link names a file in a folder that may not exist yet: create it as for a plain
    # path (check_output_file accepts such a link when the folder can be created).
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        info: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        # A FIFO or device: write to it directly; renaming over it would destroy it.
        yield target
        return
    # Follow the umask like open() for a new file; keep an existing file's mode and owner.
    mode = (0o666 & ~_umask()) if info is None else stat.S_IMODE(info.st_mode) & 0o777
    _remove_stale_temps(target)
    fd, tmp = tempfile.mkstemp(
        dir=target.parent,
        prefix=f".{target.name}.{os.getpid()}.",
        suffix=_TEMP_TAG + (target.suffix if suffix is None else suffix),
    )
    os.close(fd)
    try:
        try:
            yield Path(tmp)
            os.chmod(tmp, mode)
            if info is not None and (info.st_uid, info.st_gid) != (os.geteuid(), os.getegid()):
                try:
                    os.chown(tmp, info.st_uid, info.st_gid)
                except OSError:
                    pass  # not permitted (not root): the new file belongs to us
            _fsync_file(tmp)  # on disk before the rename makes it the file
        except OSError as err:
            if err.errno in _NO_SPACE:
                raise _no_space(target, err) from err
            raise
        # No fsync of the folder: after a crash the rename may be lost, which leaves the
        # previous file, whole; it doubled the cost of a small write (3.6 -> 11 ms on ext4).
        os.replace(tmp, target)
    finally:
        Path(tmp).unlink(missing_ok=True)


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8, Unix line endings) to ``path`` atomically; return the path.

    Symbolic links, FIFOs and devices at ``path`` are handled as :func:`atomic_path` says.

    Args:
        path: The file to (re)write.
        text: Its new content.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        OutputIsADirectoryError: If ``path`` is an existing folder.
        OSError: With ``errno.ENOSPC`` if the disk is full, naming ``path``.
    """
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    return Path(path)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes, *, what: str) -> Path:
    """Write ``data`` to ``path`` atomically with plain writes, after checking for free space.

    For serialisers that report a full disk badly when they write to the file themselves
    (``torch.save`` says "unexpected pos"): serialise to bytes, then write them with this.

    Args:
        path: The destination file; its folder is created if missing.
        data: The file's content.
        what: What is written, for the full-disk message (e.g. ``"the checkpoint"``).

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        OutputIsADirectoryError: If ``path`` is an existing folder.
        OSError: With ``errno.ENOSPC`` ("no space left on device", naming the path) when the
            disk has no room for ``data``, before or while writing; ``path`` is left as it was.

    Examples:
        >>> import tempfile
        >>> target = Path(tempfile.mkdtemp()) / "blob.bin"
        >>> write_bytes_atomic(target, b"abc", what="the blob").read_bytes()
        b'abc'
    """
    require_free_space(path, len(data), what=what)
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        handle.write(data)  # atomic_path fsyncs before the rename makes it the file
    return Path(path)


def _human(nbytes: int) -> str:
    size = float(nbytes)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{int(size)} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{nbytes} bytes"


def require_free_space(path: str | os.PathLike[str], nbytes: int, *, what: str) -> None:
    """Raise :class:`OSError` (``errno.ENOSPC``) unless ``path``'s disk has ``nbytes`` free.

    For writers that cannot report a full disk themselves (h5py can crash), called before
    writing. The free space is that of ``path``'s folder (its nearest existing ancestor when the
    folder is still to be created); a FIFO or device at ``path`` is written directly and needs no
    space, so it always passes.

    Args:
        path: The file about to be written.
        nbytes: How many bytes the write needs (an estimate is fine), an int >= 0.
        what: What is being written, for the message (e.g. ``"the AnnData file"``).

    Raises:
        OSError: With ``errno.ENOSPC``, naming the path, the bytes needed and free, and the fix.
        GraphDataError: If ``nbytes`` is not an int >= 0.

    Examples:
        >>> import tempfile
        >>> require_free_space(Path(tempfile.mkdtemp()) / "x.h5ad", 1, what="the AnnData file")
    """
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
        raise GraphDataError(f"nbytes: expected an int >= 0, got {nbytes!r}")
    target = Path(path)
    try:
        if not stat.S_ISREG(os.stat(target).st_mode):
            return
    except OSError:
        pass  # missing (or unreadable) target: measure its folder
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    free = shutil.disk_usage(folder).free
    if free < nbytes:
        raise OSError(
            errno.ENOSPC,
            f"no space left on device for {what}: it needs about {_human(nbytes)} but "
            f"{str(folder)!r} has {_human(free)} free; free some space on that disk or choose "
            "another output path (--out)",
            str(target),
        )
