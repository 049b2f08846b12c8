"""The doctests leave no folder in the system's temporary directory (the root ``conftest.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_doctests_with_mkdtemp_leave_no_folder_behind(tmp_path: Path) -> None:
    # kg/tune.py's example writes into tempfile.mkdtemp(): without the root conftest.py the run
    # leaves that folder in TMPDIR (one per example and run); pytest's own folder may stay
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = {**os.environ, "TMPDIR": str(temporary), "OMP_NUM_THREADS": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "kg/tune.py", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "passed" in run.stdout
    left = sorted(p.name for p in temporary.iterdir() if not p.name.startswith("pytest-of-"))
    assert left == []
