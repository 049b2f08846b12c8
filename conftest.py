"""Root fixtures, for the doctests of the packages as well as ``tests/``.

The docstring examples make their folders with ``tempfile.mkdtemp()``, as a user's code would; run
as doctests they would leave one folder in the system's temporary directory per example and run.
Here ``tempfile`` makes them under the doctest's own ``tmp_path``, which pytest removes with its old
runs.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from _pytest.doctest import DoctestItem


@pytest.fixture(autouse=True)
def _doctest_temporary_folder(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Point :mod:`tempfile` at ``tmp_path`` while a doctest runs."""
    if isinstance(request.node, DoctestItem):
        monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
