"""Catch device leaks without a GPU: tensors the library makes on the default device land on meta.

Library code takes its device from its inputs. A tensor created without ``device=`` lands on the
default device (the CPU), which goes unnoticed on a CPU-only machine and raises "Expected all
tensors to be on the same device" for a user whose inputs live on CUDA. Inside
:func:`foreign_default_device`, with inputs made on the CPU *before* entering it, such a tensor
is created on ``meta`` instead, and the first op that mixes it with an input raises
("Tensor on device cpu is not on the expected device meta!").

Three kinds of creation keep the CPU, as they do on a GPU machine with CPU inputs moved later:
a draw from a generator (it lands on the generator's device; a CPU generator drawing onto
another device is found by reading the code, not here), the parameters made in an
``nn.Module``'s ``__init__`` (the module is moved by ``.to``), and the host-side values listed
in :data:`HOST_SITES` (validated or computed on the host on purpose, then moved or read as
Python numbers). ``torch.from_numpy`` and ``.cpu()`` round trips always give CPU tensors and are
not caught either. Construct models and inputs outside the context; call the API inside it.
"""

from __future__ import annotations

import linecache
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._device import _device_constructors

_REPO = Path(__file__).resolve().parents[1]

#: ``(file, text on the line)`` of creations that are host-side on purpose (each reviewed).
HOST_SITES: tuple[tuple[str, str], ...] = (
    # a node id checked against num_nodes on the host
    ("graphdata/paths.py", "torch.tensor([check_int(name, node, 0)])"),
    ("graphdata/subgraph.py", "torch.tensor([check_int(name, node, 0)])"),
    # the cells mask is built on the host; intervene moves it to the graph's device
    ("spatial/_inputs.py", "mask = torch.zeros(n_cells, dtype=torch.bool)"),
    # per-graph path counts on the host, moved with .to(triples.device) below them
    ("kg/explain/_pathbank.py", "counts = torch.tensor([len(p) for p in found]"),
    ("kg/explain/_pathbank.py", "torch.zeros(0, max_length, dtype=torch.long)"),
    ("kg/explain/_pathbank.py", "torch.repeat_interleave(torch.arange(num_graphs), counts)"),
    # calibrated probabilities of three Python floats
    ("kg/explain/_assemble.py", "torch.tensor([result.full_score, result.explanation_score"),
    # a key searched in the evaluator's host copy of the training keys
    ("kg/explain/faithful.py", "torch.searchsorted(self._sorted_keys, torch.tensor(key))"),
    # the WL grid of an analytic graphon, read back with .numpy()
    ("graphon/wl.py", "x = (torch.arange(resolution, dtype=torch.float64) + 0.5) / resolution"),
)


class _ForeignDefault(TorchFunctionMode):
    """Factory calls without ``device=`` create on meta, except the kinds the module lists."""

    def __torch_function__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = dict(kwargs or {})
        if (
            func in _device_constructors()
            and kwargs.get("device") is None
            and not any(isinstance(a, torch.Tensor) for a in args)  # as_tensor(t), sparse_coo
        ):
            generator = kwargs.get("generator")
            if generator is not None:
                kwargs["device"] = generator.device
            elif not _host_by_design(sys._getframe(1)):
                kwargs["device"] = "meta"
        return func(*args, **kwargs)


def _host_by_design(frame: Any) -> bool:
    if frame.f_code.co_name == "__init__" and isinstance(
        frame.f_locals.get("self"), torch.nn.Module
    ):
        return True
    path = Path(frame.f_code.co_filename).resolve()
    if not path.is_relative_to(_REPO):
        return False
    name = path.relative_to(_REPO).as_posix()
    line = linecache.getline(str(path), frame.f_lineno)
    return any(name == site and text in line for site, text in HOST_SITES)


@contextmanager
def foreign_default_device() -> Iterator[None]:
    """Within the block, a tensor made without a device from the inputs lands on meta."""
    with _ForeignDefault():
        yield
