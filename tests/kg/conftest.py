"""Helpers shared by the multi-process KG tests (data-parallel and sharded tables)."""

from __future__ import annotations

from typing import Any

import pytest
import torch


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
