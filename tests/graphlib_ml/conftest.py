"""Fixtures of the command-line tests."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest
import torch


@pytest.fixture
def one_thread_quiet() -> Iterator[None]:
    """One torch thread, and the short runs' UserWarnings (e.g. "not converged") silenced."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield
    torch.set_num_threads(before)
