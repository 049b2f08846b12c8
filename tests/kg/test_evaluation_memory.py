"""Peak-memory measurement of KGE training and evaluation (issue 17, part d).

``benchmarks.bench_kg_scale.run_memory_jobs`` runs the measuring processes of ours and
PyKEEN side by side and stops a phase at a time limit, turning the peak it read so far into a
lower bound. Checked against child processes whose allocations are known: a ``bytearray`` of
``n`` MiB, every page written, raises the peak resident size by at least ``n`` MiB.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from benchmarks import bench_kg_scale as scale
from benchmarks._kg_memory import measure
from graphdata.synthetic import family_kg

if not Path("/proc/self/clear_refs").exists():  # pragma: no cover - Linux only
    pytest.skip("peak memory is read from /proc (Linux)", allow_module_level=True)

MIB = 2**20


def _child(mib: int, *, sleep_s: float = 0.0, announce: bool = True, fail: bool = False) -> list:
    """A python command that resets its peak, announces its base, allocates ``mib`` MiB."""
    code = textwrap.dedent(
        f"""
        import json, re, time
        def kib(key):
            text = open("/proc/self/status").read()
            return int(re.search(key + r":\\s+(\\d+)", text).group(1))
        open("/proc/self/clear_refs", "w").write("5")
        base = kib("VmRSS")
        if {announce}:
            print(json.dumps({{"base_mib": base / 1024}}), flush=True)
        block = bytearray({mib} * {MIB})
        block[::4096] = b"x" * len(block[::4096])  # touch every page
        if {fail}:
            raise SystemExit("child failed on purpose")
        time.sleep({sleep_s})
        print(json.dumps({{"peak_mib": (kib("VmHWM") - base) / 1024, "s": 0.0}}))
        """
    )
    return [sys.executable, "-c", code]


def test_finished_jobs_report_their_own_line() -> None:
    small, large = scale.run_memory_jobs([_child(8), _child(48)], 1, timeout_s=60.0)
    assert 8 <= small["peak_mib"] < 8 + 16  # the block plus interpreter noise
    assert 48 <= large["peak_mib"] < 48 + 16
    assert "timed_out" not in small and "timed_out" not in large


def test_timed_out_phase_gives_a_lower_bound() -> None:
    quick, stopped = scale.run_memory_jobs(
        [_child(4), _child(64, sleep_s=60.0)], 1, timeout_s=1.5, poll_s=0.05
    )
    assert "timed_out" not in quick and 4 <= quick["peak_mib"]
    # Killed while asleep after allocating: the peak read from /proc holds the whole block.
    assert stopped["timed_out"] and stopped["s"] == 1.5
    assert 64 <= stopped["peak_mib"] < 64 + 16 and stopped["base_mib"] > 0


def test_failures_and_setup_timeouts_are_errors() -> None:
    failed, silent = scale.run_memory_jobs(
        [_child(1, fail=True), _child(1, sleep_s=60.0, announce=False)],
        1,
        timeout_s=60.0,
        setup_timeout_s=1.0,
        poll_s=0.05,
    )
    assert "child failed on purpose" in failed["error"]
    # Never announced its base: the time limit counts as setup, and no bound can be formed.
    assert silent == {"error": "still setting up after 1 s"}


def test_measure_announces_its_base(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    family_kg(40, seed=0).dataset.to_folder(tmp_path)
    spec = {"folder": str(tmp_path), "model": "distmult", "threads": 1, "epochs": 1}
    out = measure({**spec, "phase": "eval", "announce_base": True})
    lines = capsys.readouterr().out.strip().splitlines()
    assert json.loads(lines[0]) == {"base_mib": out["base_mib"]}
    assert out["peak_mib"] >= 0 and out["s"] > 0


def test_ratio_bound() -> None:
    # eval >= 600 MiB over train 300 MiB exact: ratio >= 2; exact over a bound: <=; both: none.
    assert scale._ratio_bound(True, False) == ">="
    assert scale._ratio_bound(False, True) == "<="
    assert scale._ratio_bound(True, True) == "?"
    assert scale._ratio_bound(False, False) == ""
