"""Private atomic writers for the transfer CLI and demo (temporary file, then ``os.replace``)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from matplotlib.figure import Figure

__all__: list[str] = []


def _atomic(path: Path, write) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def save_figure(fig: Figure, path: Path) -> None:
    """Write ``fig`` as PNG to ``path`` atomically."""
    _atomic(path, lambda tmp: fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight"))


def write_text(text: str, path: Path) -> None:
    """Write ``text`` to ``path`` atomically (UTF-8)."""
    _atomic(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def write_json(data: object, path: Path) -> None:
    """Write ``data`` as indented JSON to ``path`` atomically."""
    write_text(json.dumps(data, indent=2) + "\n", path)
