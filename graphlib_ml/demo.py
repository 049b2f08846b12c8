"""``graphlib demo``: every part on its embedded defaults, written to one report folder.

Each part contributes ``demo_section(out_dir, *, seed, device) -> str``: it runs a small version of
its main job (seconds to a minute on a laptop CPU), writes PNG figures into ``out_dir`` and
returns a markdown section. The report is ``out_dir/report.md``, written atomically.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import torch

import graphon.demo
import graphon.nn.demo
import kg.demo
import kg.explain.demo
import spatial.demo
from graphdata.atomic import write_text_atomic
from graphdata.demo import demo_section as graphdata_section
from graphdata.device import resolve_device, seed_everything
from graphdata.errors import GraphDataError

__all__ = ["SECTIONS", "run_demo"]

SectionFn = Callable[..., str]

#: The report's sections in order: name -> function writing figures and returning markdown.
SECTIONS: dict[str, SectionFn] = {
    "data": graphdata_section,
    "kg": kg.demo.demo_section,
    "explain": kg.explain.demo.demo_section,
    "graphon": graphon.demo.demo_section,
    "iwn": graphon.nn.demo.demo_section,
    "spatial": spatial.demo.demo_section,
}


def run_demo(
    out_dir: str | Path = "graphlib-demo",
    *,
    parts: Sequence[str] | None = None,
    seed: int = 0,
    device: str | torch.device = "auto",
) -> Path:
    """Run the demo sections and write ``report.md`` with their figures into ``out_dir``.

    Args:
        out_dir: The report folder, created if missing. Default ``"graphlib-demo"``.
        parts: Section names from :data:`SECTIONS` to run, in report order; ``None`` runs all.
        seed: The seed every section starts from. Default ``0``.
        device: ``"auto"``, ``"cpu"`` or ``"cuda"``. Default ``"auto"``.

    Returns:
        The path of the written ``report.md``.

    Raises:
        GraphDataError: If a name in ``parts`` is not a section.
    """
    names = list(SECTIONS) if parts is None else list(parts)
    unknown = [name for name in names if name not in SECTIONS]
    if unknown:
        raise GraphDataError(
            f"parts: unknown section(s) {unknown}; choose from {list(SECTIONS)} or 'all'"
        )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    dev = resolve_device(device)
    blocks = [
        "# graphlib demo report\n",
        f"Seed {seed}, device `{dev}`, torch {torch.__version__}, Python "
        f"{platform.python_version()} on {platform.machine()}.\n",
    ]
    for name in names:
        seed_everything(seed)
        start = time.perf_counter()
        print(f"[graphlib demo] {name} ...", flush=True)
        text = SECTIONS[name](out, seed=seed, device=dev)
        seconds = time.perf_counter() - start
        print(f"[graphlib demo] {name} done in {seconds:.1f} s", flush=True)
        blocks.append(text.rstrip() + f"\n\n*Section run time: {seconds:.1f} s.*\n")
    report = out / "report.md"
    write_text_atomic(report, "\n".join(blocks))
    print(f"[graphlib demo] report written to {report.resolve()}")
    return report
