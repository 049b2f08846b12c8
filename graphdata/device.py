"""Device and seed helpers for examples and command-line tools.

Library code never picks a device: it takes the device of its inputs. Only examples and the CLI
resolve ``--device auto`` and seed the global generators, through the functions here (after PyG's
``torch_geometric/device.py`` and ``torch_geometric/seed.py``).
"""

from __future__ import annotations

import os
import random

import numpy as np
import torch

from graphdata.checks import SEED_MAX
from graphdata.errors import GraphDataError

__all__ = ["resolve_device", "seed_everything", "make_generator"]


def resolve_device(spec: str | torch.device = "auto") -> torch.device:
    """Turn a device specification into a :class:`torch.device`.

    Args:
        spec: ``"auto"`` (CUDA when available, else CPU), ``"cpu"``, ``"cuda"``, ``"cuda:1"``,
            ``"mps"`` or a :class:`torch.device`. Default ``"auto"``.

    Returns:
        The resolved device.

    Raises:
        GraphDataError: If ``spec`` is not a device string, or names CUDA on a machine without it.

    Examples:
        >>> resolve_device("cpu")
        device(type='cpu')
    """
    if isinstance(spec, torch.device):
        device = spec
    elif spec == "auto":
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        try:
            device = torch.device(spec)
        except (RuntimeError, TypeError) as err:
            raise GraphDataError(
                f"device: expected 'auto', 'cpu', 'cuda' or 'cuda:N', got {spec!r}"
            ) from err
    if device.type == "cuda" and not torch.cuda.is_available():
        raise GraphDataError(
            f"device: {str(device)!r} was requested but CUDA is not available on this machine; "
            "pass --device cpu (or 'auto')"
        )
    if device.type in ("mps", "xpu") and not _available(device.type):
        raise GraphDataError(
            f"device: {str(device)!r} was requested but {device.type.upper()} is not available "
            "on this machine; pass --device cpu (or 'auto')"
        )
    return device


def _available(kind: str) -> bool:
    """Whether the accelerator ``kind`` (``"mps"`` or ``"xpu"``) can run here."""
    if kind == "mps":
        return bool(torch.backends.mps.is_available())
    backend = getattr(torch, kind, None)
    return bool(backend is not None and backend.is_available())


def _check_seed(seed: object) -> int:
    """Return ``seed`` as an int in ``[0, SEED_MAX]`` (what every generator accepts)."""
    if (
        isinstance(seed, bool)
        or not isinstance(seed, (int, np.integer))
        or not 0 <= int(seed) <= SEED_MAX
    ):
        raise GraphDataError(
            f"seed: expected a non-negative int at most {SEED_MAX} (torch seeds are 64-bit), "
            f"got {seed!r}"
        )
    return int(seed)


def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's and torch's global generators (examples and CLI only).

    Library functions take an explicit ``seed`` or ``generator`` instead of relying on this.

    Args:
        seed: An integer seed in ``[0, 2**64 - 1]``.

    Raises:
        GraphDataError: If ``seed`` is not an integer in ``[0, 2**64 - 1]``.
    """
    seed = _check_seed(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    # Python accepts PYTHONHASHSEED in [0, 2**32 - 1] only; a child process started with a
    # larger value dies at start-up ("Fatal Python error: config_init_hash_seed").
    os.environ["PYTHONHASHSEED"] = str(seed % 2**32)


def make_generator(seed: int | None, device: torch.device | str = "cpu") -> torch.Generator:
    """Return a :class:`torch.Generator` on ``device``, seeded with ``seed``.

    Args:
        seed: The seed, an integer in ``[0, 2**64 - 1]``; ``None`` draws a fresh
            non-deterministic seed.
        device: The device the generator draws on. Default ``"cpu"``.

    Returns:
        A seeded generator.

    Raises:
        GraphDataError: If ``seed`` is not ``None`` or an integer in ``[0, 2**64 - 1]``.

    Examples:
        >>> a = torch.rand(2, generator=make_generator(0))
        >>> torch.equal(a, torch.rand(2, generator=make_generator(0)))
        True
    """
    if seed is not None:
        seed = _check_seed(seed)
    generator = torch.Generator(device=device)
    if seed is None:
        generator.seed()
    else:
        generator.manual_seed(seed)
    return generator
