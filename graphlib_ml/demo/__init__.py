"""``graphlib demo``: every part on its embedded defaults, written to one report folder.

Each section is a module of this package (``data.py``, ``kg.py``, ``explain.py``, ``graphon.py``,
``iwn.py``, ``spatial.py``) with ``demo_section(out_dir, *, seed, device) -> str``: it runs a small
version of its part's main job (seconds to a minute on a laptop CPU), writes PNG figures into
``out_dir`` and returns a markdown section. The report is ``out_dir/report.md``, written atomically.

The report folder is checked before any section runs (:func:`check_report_folder`): a file at
that path, a path under a file, or a folder this user cannot write fails at once, not after
minutes of work.
"""

from __future__ import annotations

import os
import platform
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import torch

from graphdata.atomic import write_text_atomic
from graphdata.device import resolve_device, seed_everything
from graphdata.errors import GraphDataError
from graphlib_ml.demo import data, explain, graphon, iwn, kg, spatial

__all__ = ["SECTIONS", "check_report_folder", "run_demo"]

SectionFn = Callable[..., str]

#: The report's sections in order: name -> function writing figures and returning markdown.
SECTIONS: dict[str, SectionFn] = {
    "data": data.demo_section,
    "kg": kg.demo_section,
    "explain": explain.demo_section,
    "graphon": graphon.demo_section,
    "iwn": iwn.demo_section,
    "spatial": spatial.demo_section,
}


def check_report_folder(out_dir: str | os.PathLike[str]) -> Path:
    """Create the report folder if missing and check that this user can write into it.

    The check writes and removes a hidden empty file, so it also catches what permission bits
    do not show (a read-only file system, an ACL, a full quota of inodes).

    Args:
        out_dir: The report folder (``graphlib demo --out``).

    Returns:
        ``out_dir`` as a :class:`~pathlib.Path`.

    Raises:
        GraphDataError: If ``out_dir`` or one of its parents is an existing file.
        OSError: If the folder cannot be created or written (permission denied, read-only file
            system, ...), with the folder as its ``filename``.

    Examples:
        >>> import tempfile
        >>> check_report_folder(Path(tempfile.mkdtemp()) / "report").is_dir()
        True
    """
    out = Path(out_dir)
    for ancestor in (out, *out.parents):
        if ancestor.exists():
            if not ancestor.is_dir():
                where = "is" if ancestor == out else f"lies under {str(ancestor)!r}, which is"
                raise GraphDataError(
                    f"out_dir (--out): expected a folder for the report, got {str(out)!r}, which "
                    f"{where} an existing file; pass another --out or move the file"
                )
            break
    out.mkdir(parents=True, exist_ok=True)
    try:
        fd, probe = tempfile.mkstemp(dir=out, prefix=".graphlib-demo-write-check.")
    except OSError as err:
        # Name the folder (mkstemp names its random file) and keep the errno and its subclass.
        raise OSError(err.errno, err.strerror, str(out)) from err
    os.close(fd)
    os.unlink(probe)
    return out


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
        GraphDataError: If a name in ``parts`` is not a section, or ``out_dir`` is a file.
        OSError: If ``out_dir`` cannot be created or written; raised before any section runs.
    """
    names = list(SECTIONS) if parts is None else list(parts)
    unknown = [name for name in names if name not in SECTIONS]
    if unknown:
        raise GraphDataError(
            f"parts: unknown section(s) {unknown}; choose from {list(SECTIONS)} or 'all'"
        )
    out = check_report_folder(out_dir)
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
