"""Output folders of the CLI: a command refused before it wrote anything leaves no new folder.

:func:`remove_new_folders_on_error` wraps a command from the point where it creates its output
folder (``--out``, and the missing folders above it) to its end. When the command raises (a
refusal of its input found after the folder was made, any other error, Ctrl-C), the folders it
created are removed again, innermost first, while they are empty: a folder that existed before,
or that holds a file (the run got as far as writing), stays. ``kg train``, ``kg tune``,
``kg explain --triples``, ``graphon transfer``, ``demo`` and ``spatial fit --tracker`` (its
tracker folder) use it. Standard library only, so importing it costs ``graphlib --help``
nothing.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["remove_new_folders_on_error"]


@contextlib.contextmanager
def remove_new_folders_on_error(folder: str | os.PathLike[str]) -> Iterator[Path]:
    """Remove the empty folders the ``with`` block created for ``folder`` if the block raises.

    Enter it before ``folder`` is created: the folders missing then (``folder`` and its missing
    parents) are the ones the block creates.

    Args:
        folder: The output folder (it may not exist yet).

    Yields:
        ``folder`` as a :class:`~pathlib.Path`.

    Examples:
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp()) / "new" / "run"
        >>> try:
        ...     with remove_new_folders_on_error(out):
        ...         out.mkdir(parents=True)
        ...         raise ValueError("refused")
        ... except ValueError:
        ...     pass
        >>> out.parent.exists(), out.parent.parent.exists()
        (False, True)
    """
    path = Path(folder)
    created = [p for p in (path, *path.parents) if not os.path.lexists(p)]
    try:
        yield path
    except BaseException:
        for made in created:  # innermost first; a folder with files in it stays
            try:
                made.rmdir()
            except OSError:
                break
        raise
