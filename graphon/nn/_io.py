"""Private atomic writers for the transfer CLI and demo (temporary file, then ``os.replace``)."""

from __future__ import annotations

import json
from pathlib import Path

from matplotlib.figure import Figure

from graphdata.atomic import atomic_path, write_text_atomic

__all__: list[str] = []


def save_figure(fig: Figure, path: Path) -> None:
    """Write ``fig`` as PNG to ``path`` atomically."""
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")


def write_text(text: str, path: Path) -> None:
    """Write ``text`` to ``path`` atomically (UTF-8)."""
    write_text_atomic(path, text)


def write_json(data: object, path: Path) -> None:
    """Write ``data`` as indented JSON to ``path`` atomically."""
    write_text(json.dumps(data, indent=2) + "\n", path)
