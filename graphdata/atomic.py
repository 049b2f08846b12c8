"""Atomic file writes: write to a temporary file in the target's folder, then rename over it.

Every output of graphlib (checkpoints, logs, figures, reports, AnnData files) goes through
:func:`atomic_path`, so a killed run leaves either the previous file or the new one, never half
of one (:func:`os.replace` is atomic within a file system).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["atomic_path", "write_text_atomic"]


@contextmanager
def atomic_path(path: str | os.PathLike[str], *, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success rename it onto ``path``.

    The parent folder is created if missing. If the ``with`` block raises, the temporary file is
    removed and ``path`` is left as it was.

    Args:
        path: The file to (re)write.
        suffix: Suffix of the temporary file; None (default) keeps ``path``'s own suffix, so
            writers that infer the format from it (``savefig``, ``write_h5ad``) still work.

    Yields:
        The temporary path to write to.

    Examples:
        >>> import tempfile
        >>> target = Path(tempfile.mkdtemp()) / "out.txt"
        >>> with atomic_path(target) as tmp:
        ...     _ = tmp.write_text("done")
        >>> target.read_text()
        'done'
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        dir=target.parent,
        prefix=f".{target.name}.",
        suffix=target.suffix if suffix is None else suffix,
    )
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, target)
    finally:
        Path(tmp).unlink(missing_ok=True)


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8, Unix line endings) to ``path`` atomically; return the path.

    Args:
        path: The file to (re)write.
        text: Its new content.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.
    """
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    return Path(path)
