"""Checks on output paths and run folders, made before a command starts its work.

* :func:`check_output_file` and :func:`check_output_folder` refuse an output that cannot be
  written (a folder where a file is wanted, a file where a folder is wanted, a parent folder that
  is a file or not writable) with a :class:`~graphdata.errors.GraphDataError` naming the flag,
  so ``kg evaluate --json DIR`` fails in a millisecond, not after the whole evaluation.
  Symlinks, FIFOs and device files (``/dev/null``) are valid file outputs: the atomic writer
  writes through them.
* :func:`run_lock` takes an exclusive lock on a run folder (``fcntl.flock`` on
  ``FOLDER/.graphlib.lock``, holding the owner's pid), so a second run into the same folder
  stops with the holder's pid instead of interleaving its logs. The kernel releases the lock
  when the holder dies, even on ``kill -9``.
* :func:`check_run_state` refuses to start over a finished run (or a checkpoint) unless the
  user asks to ``--resume`` or to ``--overwrite``, and refuses a folder (or any non-regular
  file) where the run's own files go.
* :func:`remove_run_files` removes the old run's files for ``--overwrite``, through symbolic
  links: a link in the run folder stays and the file it names goes, so the new run writes where
  the old one did.

The locking uses :mod:`fcntl` (POSIX: Linux and macOS).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from graphdata.errors import GraphDataError

__all__ = [
    "LOCK_NAME",
    "RunFolderLockedError",
    "check_output_file",
    "check_output_folder",
    "check_run_state",
    "lock_holder",
    "remove_run_files",
    "run_lock",
]

#: Name of the lock file inside a run folder (hidden; removed when the run ends cleanly).
LOCK_NAME = ".graphlib.lock"


class RunFolderLockedError(GraphDataError):
    """Another live process holds the run folder's lock.

    Args:
        folder: The run folder.
        pid: The holder's process id, or None if it had not written it yet.
        argument: The flag that named the folder (e.g. ``"--out"``).
    """

    def __init__(self, folder: str | os.PathLike[str], pid: int | None, argument: str) -> None:
        self.folder = str(folder)
        self.pid = pid
        holder = f"pid {pid}" if pid is not None else "a process that has not written its pid"
        super().__init__(
            f"{argument}: the run folder {self.folder!r} is in use by another graphlib run "
            f"({holder}); wait for it to finish, stop it, or pass another {argument}"
        )


def _nearest_existing(path: Path) -> Path:
    """``path`` or its closest ancestor that exists (``.`` for a relative path's start)."""
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            return candidate
    return Path(".")


def _check_creatable(path: Path, *, argument: str, what: str) -> None:
    """Refuse a path whose nearest existing ancestor is not a writable folder."""
    ancestor = _nearest_existing(path.parent if path.name else path)
    if not ancestor.is_dir():
        raise GraphDataError(
            f"{argument}: expected a path whose folders can be created, got {str(path)!r}, but "
            f"{str(ancestor)!r} is a file, not a folder; pass a {what} outside it"
        )
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise GraphDataError(
            f"{argument}: expected a writable folder for {str(path)!r}, got {str(ancestor)!r}, "
            f"which this user cannot write; pass a {what} in a folder you can write, or fix "
            "its permissions"
        )


def check_output_file(path: str | os.PathLike[str], *, argument: str) -> Path:
    """Check, before any work, that ``path`` can be written as a file; return it.

    Accepted: a missing file in a writable (or creatable) folder, an existing regular file in a
    writable folder, and an existing symlink, FIFO or device file that this user can write
    (the writer writes through them). Refused: an existing folder (or a symlink to one), a path
    under a regular file, and a folder this user cannot write.

    Args:
        path: The output file.
        argument: The flag that named it, e.g. ``"--json"``.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        GraphDataError: Naming ``argument``, what was expected, what arrived and the fix.

    Examples:
        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> check_output_file(Path(folder) / "metrics.json", argument="--json").name
        'metrics.json'
        >>> check_output_file(folder, argument="--json")
        Traceback (most recent call last):
        ...
        graphdata.errors.GraphDataError: --json: expected a file path, got the folder ...
    """
    given = Path(path)
    if os.fspath(path) == "":
        raise GraphDataError(f"{argument}: expected a file path, got ''; pass a file name")
    real = Path(os.path.realpath(given))  # the writer writes through symlinks to their target
    if real.is_dir():
        raise GraphDataError(
            f"{argument}: expected a file path, got the folder {str(given)!r}; pass a file name, "
            f"e.g. {str(given / 'out')!r} with the right suffix"
        )
    if os.path.lexists(real) and not real.is_file():
        # FIFO, device file: written directly, no temporary file in its folder.
        if not os.access(real, os.W_OK):
            raise GraphDataError(
                f"{argument}: expected a writable file, got {str(given)!r}, which this user "
                "cannot write; pass another path"
            )
        return given
    _check_creatable(real, argument=argument, what="file")
    return given


def check_output_folder(path: str | os.PathLike[str], *, argument: str) -> Path:
    """Check, before any work, that ``path`` is (or can be created as) a writable folder.

    Args:
        path: The output folder.
        argument: The flag that named it, e.g. ``"--out"``.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        GraphDataError: If ``path`` is an existing file, lies under a file, or cannot be
            written; the message names ``argument`` and the fix.

    Examples:
        >>> import tempfile
        >>> file = Path(tempfile.mkdtemp()) / "taken"
        >>> _ = file.write_text("x")
        >>> check_output_folder(file, argument="--out")
        Traceback (most recent call last):
        ...
        graphdata.errors.GraphDataError: --out: expected a folder, got the existing file ...
    """
    given = Path(path)
    if os.fspath(path) == "":
        raise GraphDataError(f"{argument}: expected a folder path, got ''; pass a folder name")
    if given.is_dir():
        if not os.access(given, os.W_OK | os.X_OK):
            raise GraphDataError(
                f"{argument}: expected a writable folder, got {str(given)!r}, which this user "
                "cannot write; pass another folder or fix its permissions"
            )
        return given
    if os.path.lexists(given):
        kind = "file" if given.is_file() else "non-folder entry"
        raise GraphDataError(
            f"{argument}: expected a folder, got the existing {kind} {str(given)!r}; pass a "
            "folder path, or move the file away"
        )
    _check_creatable(given, argument=argument, what="folder")
    return given


def lock_holder(folder: str | os.PathLike[str]) -> int | None:
    """The pid written in ``folder``'s lock file, or None if there is none (or it is empty).

    Args:
        folder: A run folder.

    Returns:
        The pid recorded by the last process that took the lock (it may have died since).
    """
    try:
        text = (Path(folder) / LOCK_NAME).read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    text = text.strip()
    return int(text) if text.isdigit() else None


def _acquire(lock: Path, folder: Path, argument: str) -> int:
    """Open and lock ``lock``; retry when the file was replaced between open and flock."""
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            os.close(fd)
            if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise RunFolderLockedError(folder, lock_holder(folder), argument) from None
            raise
        # The previous holder unlinks the file before unlocking: if it did so between our open
        # and our flock, we hold a lock on a deleted inode; start again on the current file.
        try:
            current = os.stat(lock)
        except FileNotFoundError:
            os.close(fd)
            continue
        mine = os.fstat(fd)
        if (current.st_dev, current.st_ino) != (mine.st_dev, mine.st_ino):
            os.close(fd)
            continue
        return fd


@contextmanager
def run_lock(folder: str | os.PathLike[str], *, argument: str = "--out") -> Iterator[Path]:
    """Hold an exclusive lock on a run folder for the ``with`` block; the folder is created.

    A second process (or a second ``with`` in this one) entering the block for the same folder
    raises :class:`RunFolderLockedError` with the holder's pid at once, it does not wait. The
    kernel drops the lock when the holder exits, however it exits (``kill -9`` included); a
    stale lock file left by a killed holder is simply taken over. On a normal exit the lock
    file is removed.

    Args:
        folder: The run folder.
        argument: The flag that named it, for the error message. Default ``"--out"``.

    Yields:
        The folder as a :class:`~pathlib.Path`.

    Raises:
        RunFolderLockedError: If another live process holds the lock.

    Examples:
        >>> import tempfile
        >>> run = Path(tempfile.mkdtemp()) / "run"
        >>> with run_lock(run):
        ...     lock_holder(run) == os.getpid()
        True
        >>> (run / LOCK_NAME).exists()
        False
    """
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    lock = path / LOCK_NAME
    fd = _acquire(lock, path, argument)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        os.fsync(fd)
        yield path
    finally:
        # Unlink while still holding the lock: a process that opened the old file then sees
        # that the path no longer names it and retries (see _acquire).
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def check_run_state(
    folder: str | os.PathLike[str],
    *,
    resume: bool,
    overwrite: bool,
    finished: str,
    checkpoint: str,
    owned: Iterable[str],
    argument: str = "--out",
) -> list[Path]:
    """Refuse to start a run over an existing one unless asked; list what ``overwrite`` removes.

    Rules: each owned file that exists must be a regular file (a folder at
    ``FOLDER/checkpoint.pt`` would make ``--resume`` train from scratch and then die when
    saving); a symbolic link to a missing file counts as no file yet (the atomic writer creates
    the file it names); without ``resume`` or ``overwrite``, a folder holding the finished-run
    marker or a checkpoint is refused; ``resume`` and ``overwrite`` together are refused.

    Args:
        folder: The run folder (it may not exist yet).
        resume: The user asked to continue the run.
        overwrite: The user asked to start over, removing the old run's files (through their
            symbolic links: :func:`remove_run_files`).
        finished: File name that marks a finished run, e.g. ``"test_metrics.json"``.
        checkpoint: File name of the checkpoint, e.g. ``"checkpoint.pt"``.
        owned: Every file name the run writes (``finished`` and ``checkpoint`` included):
            what ``overwrite`` removes.
        argument: The flag that named the folder. Default ``"--out"``.

    Returns:
        The existing owned files (``FOLDER/NAME``, a symbolic link left as it is), which the
        caller removes with :func:`remove_run_files` when ``overwrite`` is set (after taking
        :func:`run_lock`); empty when there are none.

    Raises:
        GraphDataError: On any refused state; the message names the folder and the flag to pass.

    Examples:
        >>> import tempfile
        >>> run = Path(tempfile.mkdtemp())
        >>> _ = (run / "test_metrics.json").write_text("{}")
        >>> check_run_state(run, resume=False, overwrite=False, finished="test_metrics.json",
        ...                 checkpoint="checkpoint.pt", owned=["test_metrics.json"])
        Traceback (most recent call last):
        ...
        graphdata.errors.GraphDataError: --out: ... already holds a finished run ...
    """
    path = Path(folder)
    names = list(dict.fromkeys([*owned, finished, checkpoint]))
    if resume and overwrite:
        raise GraphDataError(
            "--resume, --overwrite: expected at most one, got both; pass --resume to continue "
            "the run or --overwrite to start it over"
        )
    existing = []
    for name in names:
        entry = path / name
        # A symlink to a missing file is no file yet: the atomic writer creates the file it
        # names (a loop resolves to itself and is refused below).
        if not os.path.lexists(os.path.realpath(entry)):
            continue
        if not entry.is_file():
            kind = "a folder" if entry.is_dir() else "not a regular file"
            raise GraphDataError(
                f"{argument}: expected {str(entry)!r} to be this run's {name} file, got "
                f"{kind}; move it away or pass another {argument}"
            )
        existing.append(entry)
    if resume or overwrite:
        return existing
    for name, what in ((finished, "a finished run"), (checkpoint, "a run's checkpoint")):
        if (path / name).is_file():
            raise GraphDataError(
                f"{argument}: {str(path)!r} already holds {what} ({name}); pass --resume to "
                f"continue it, --overwrite to start over, or another {argument}"
            )
    return existing


def remove_run_files(
    files: Iterable[str | os.PathLike[str]], *, argument: str = "--overwrite"
) -> list[tuple[Path, Path]]:
    """Remove an old run's files for ``--overwrite``, through their symbolic links.

    A regular file is removed. A symbolic link is kept, pointing where it did, and the file it
    names (at the end of a chain of links) is removed instead: the new run then writes its file
    through the link again (:func:`graphdata.atomic.atomic_path` and ``open`` create the file a
    dangling link names), where the user put it, e.g. on another disk. Removing the link itself
    would leave the old run's file at the target and write the new run's beside the link.
    Nothing but ``files`` and the files their links name is removed, and nothing is removed
    when one of them cannot be: every folder a removal writes is checked first.

    Args:
        files: The run's existing files, as :func:`check_run_state` lists them.
        argument: The flag that asked for the removal. Default ``"--overwrite"``.

    Returns:
        ``(file, removed)`` per file: the path given and the file removed (the link's target
        for a link, else the path itself).

    Raises:
        GraphDataError: If a folder holding a file to remove cannot be written; nothing was
            removed.

    Examples:
        >>> import tempfile
        >>> run, store = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
        >>> _ = (store / "ckpt.pt").write_text("old")
        >>> (run / "checkpoint.pt").symlink_to(store / "ckpt.pt")
        >>> [p.name for _, p in remove_run_files([run / "checkpoint.pt"])]
        ['ckpt.pt']
        >>> (run / "checkpoint.pt").is_symlink(), (store / "ckpt.pt").exists()
        (True, False)
    """
    pairs = [(Path(file), Path(os.path.realpath(file))) for file in files]
    for file, real in pairs:
        if not os.access(real.parent, os.W_OK | os.X_OK):
            via = f" (named by the link {str(file)!r})" if file.is_symlink() else ""
            raise GraphDataError(
                f"{argument}: expected to remove the old run's {file.name}, {str(real)!r}{via}, "
                f"but this user cannot write its folder {str(real.parent)!r}; fix that "
                "folder's permissions or pass another --out"
            )
    for _, real in pairs:
        real.unlink(missing_ok=True)  # two links may name one file
    return pairs
