"""Shared fixtures: a ``device`` fixture over CPU and, where present, CUDA; data-folder paths."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import torch
from hypothesis import settings

# Property tests: no per-example deadline (timing on a loaded 2-core machine is not behaviour);
# under CI the examples are derandomised, so a run is reproducible and never flaky.
settings.register_profile("dev", deadline=None, print_blob=True)
settings.register_profile("ci", deadline=None, print_blob=True, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# One intra-op thread: the suite is many small ops, where a second thread costs more in
# synchronisation than it gains, and on a loaded 2-core machine it made small ops up to 100x
# slower. Set here, at collection, so it holds for doctests of the packages too.
torch.set_num_threads(1)

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])

#: The project's shared real data (``../shared/datasets`` from the repository root). The library
#: never reads it; tests that do skip with a reason where it is absent (a user's fresh clone).
DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


@pytest.fixture(params=DEVICES)
def device(request: pytest.FixtureRequest) -> torch.device:
    """Every test taking ``device`` runs on CPU and, when available, on CUDA."""
    return torch.device(request.param)


@pytest.fixture
def datasets_dir() -> Path:
    """The shared datasets folder; skips the test with a clear reason when it is absent."""
    if not DATASETS.is_dir():
        pytest.skip(f"shared datasets folder {DATASETS} is absent (fresh clone): real-data test")
    return DATASETS


@pytest.fixture
def mount_tmpfs(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """Mount a tiny tmpfs of a given size (``"16k"``) for real disk-full tests; unmount after.

    Needs root and mount rights (a privileged container); skips the test with the reason where
    mounting is not permitted.
    """
    mounted: list[Path] = []

    def mount(size: str) -> Path:
        point = tmp_path / f"tmpfs-{len(mounted)}"
        point.mkdir()
        if not shutil.which("mount"):
            pytest.skip("no mount command")
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(point)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"mounting a tmpfs is not permitted here: {done.stderr.strip()}")
        mounted.append(point)
        return point

    yield mount
    for point in mounted:
        subprocess.run(["umount", str(point)], check=False)
