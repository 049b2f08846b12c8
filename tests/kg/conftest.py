"""Helpers shared by the multi-process KG tests (data-parallel and sharded tables)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.multiprocessing as mp


def assert_ranks_take_one_process_steps(per_rank: list[dict[str, Any]], single: Any) -> None:
    """Each rank's trained ``state`` equals one process's (``single``, a fitted Trainer) at
    rtol 1e-4 / atol 1e-5 (the same gradient sums in another order), the ranks' states are
    bitwise equal to each other, and rank 0's epoch ``losses`` match at rel 1e-5."""
    for key, value in single.model_.state_dict().items():
        for result in per_rank:
            torch.testing.assert_close(result["state"][key], value, rtol=1e-4, atol=1e-5)
        assert all(torch.equal(per_rank[0]["state"][key], r["state"][key]) for r in per_rank)
    losses = [h["loss"] for h in single.history_]
    assert per_rank[0]["losses"] == pytest.approx(losses, rel=1e-5)


def spawn_ranks(worker: Callable[..., None], folder: Path, nprocs: int) -> Path:
    """Run ``worker(rank, init_file, out)`` on ``nprocs`` ranks; return the folder it wrote.

    A rank that dies of a signal (a native abort inside gloo, seen once in a fresh-clone CI run
    and never in 150 local repeats) is retried once in a new folder with a warning naming the
    signal, so the warning summary records it; a second death, or any Python error, fails.
    """
    for attempt in (1, 2):
        out = folder / f"try{attempt}"
        out.mkdir()
        try:
            mp.spawn(worker, args=(str(out / "init"), str(out)), nprocs=nprocs, join=True)
            return out
        except mp.ProcessExitedException as err:
            if attempt == 2 or err.signal_name is None:
                raise
            warnings.warn(
                f"rank {err.error_index} died of {err.signal_name}; running the ranks once more",
                RuntimeWarning,
                stacklevel=2,
            )
    raise AssertionError("unreachable")
