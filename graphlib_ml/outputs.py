"""Outputs of the application layer, written atomically: PNG figures and JSON files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from graphdata.atomic import atomic_path, write_text_atomic

if TYPE_CHECKING:
    from matplotlib.figure import Figure, SubFigure

__all__ = ["save_figure", "write_json"]


def save_figure(fig: Figure | SubFigure, path: Path) -> None:
    """Write ``fig`` as PNG to ``path`` atomically (temporary file in the folder, then rename).

    Args:
        fig: The figure (``ax.figure``: a bare or pyplot Figure; a SubFigure writes its parent).
        path: The ``.png`` file.
    """
    figure = fig.get_figure(root=True)  # the Figure itself, or a SubFigure's parent
    assert figure is not None
    with atomic_path(path, suffix=".png") as tmp:
        figure.savefig(tmp, dpi=120, bbox_inches="tight")


def write_json(data: object, path: Path) -> None:
    """Write ``data`` as indented JSON (and a final newline) to ``path`` atomically.

    Args:
        data: Anything :func:`json.dumps` takes.
        path: The ``.json`` file.
    """
    write_text_atomic(path, json.dumps(data, indent=2) + "\n")
