"""Outputs of the application layer, written atomically: PNG figures and JSON files."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from graphdata.atomic import atomic_path, write_text_atomic
from graphdata.errors import GraphDataError

if TYPE_CHECKING:
    from matplotlib.figure import Figure, SubFigure

__all__ = ["save_figure", "write_json", "json_text"]


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
        data: Anything :func:`json.dumps` takes, without NaN or infinity (:func:`json_text`).
        path: The ``.json`` file.

    Raises:
        GraphDataError: When ``data`` holds a NaN or infinite float; nothing is written.
    """
    write_text_atomic(path, json_text(data, indent=2) + "\n")


def json_text(data: object, *, indent: int = 2) -> str:
    """``json.dumps(data, indent=indent)``, refusing NaN and infinity: strict JSON only.

    Python's :mod:`json` writes ``NaN`` and ``Infinity`` by default, which JSON (RFC 8259) does
    not allow and strict readers reject; and a non-finite number is never a result. An
    undefined value is ``None`` (``null``) instead.

    Args:
        data: Anything :func:`json.dumps` takes.
        indent: Spaces per indentation level. Default 2.

    Returns:
        The JSON text (no final newline).

    Raises:
        GraphDataError: Naming the key path of the first non-finite float, e.g.
            ``data["metrics"]["both"]["amri"]``.
    """
    try:
        return json.dumps(data, indent=indent, allow_nan=False)
    except ValueError as err:
        found = _non_finite(data, "data")
        if found is None:
            raise
        where, value = found
        raise GraphDataError(
            f"{where}: expected a finite number (strict JSON has no NaN or Infinity), got "
            f"{value}; write None (JSON null) for an undefined value"
        ) from err


def _non_finite(data: object, path: str) -> tuple[str, float] | None:
    """Key path and value of the first NaN or infinite float in ``data`` (depth first)."""
    if isinstance(data, float):
        return None if math.isfinite(data) else (path, data)
    if isinstance(data, Mapping):
        items = [(f"{path}[{k!r}]", v) for k, v in data.items()]
    elif isinstance(data, (list, tuple)):
        items = [(f"{path}[{i}]", v) for i, v in enumerate(data)]
    else:
        return None
    for where, value in items:
        found = _non_finite(value, where)
        if found is not None:
            return found
    return None
