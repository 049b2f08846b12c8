"""Figures of the application layer: write a matplotlib figure as a PNG, atomically."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from graphdata.atomic import atomic_path

if TYPE_CHECKING:
    from matplotlib.figure import Figure, SubFigure

__all__ = ["save_figure"]


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
