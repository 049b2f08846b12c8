"""benchmarks.bench_homomorphism: the oracle part on a 5-entry subset, and the flags.

The subset holds entries on which the library is exact today and in the target (polynomial
graphons, grid graphs); one stored value is shifted by 1e-6, which the part must report.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import bench_homomorphism as bench
from benchmarks import graphon_oracles as oracles

ENTRIES = json.loads(oracles.OUT.read_text())["entries"]


def _subset(tmp_path: Path, shift: float) -> Path:
    polys = [e for e in ENTRIES if e["tag"] == "polynomial" and e["num_vertices"] <= 3][:3]
    grids = [e for e in ENTRIES if e["tag"] == "grid"][:2]
    rows = [dict(e) for e in polys + grids]
    rows[0]["exact"] = repr(float(rows[0]["exact"]) + shift)
    path = tmp_path / "oracles.json"
    path.write_text(json.dumps({"meta": {}, "entries": rows}))
    return path


def test_oracle_part_reports_a_wrong_value(tmp_path: Path) -> None:
    out = bench.oracle_part(_subset(tmp_path, 1e-6), k4=False)
    poly, grid = out["per_tag"]["polynomial"], out["per_tag"]["grid"]
    assert poly["count"] == 3 and grid["count"] == 2
    assert poly["max_abs_error"] == pytest.approx(1e-6, rel=1e-6)
    assert poly["within_tol"] == 2 and grid["within_tol"] == 2
    assert poly["covered_fraction"] == pytest.approx(2 / 3)  # the stated error misses 1e-6
    assert grid["covered_fraction"] is None  # hom_density states no error
    assert grid["max_abs_error"] <= 1e-13
    assert all(r["s"]["cpu"] >= 0 for r in out["entries"])
    smooth = out["smooth_vs_old"]
    assert smooth["count"] == 3 and smooth["old_cpu_s"] > 0
    assert smooth["ratio"] == pytest.approx(smooth["new_cpu_s"] / smooth["old_cpu_s"])


def test_old_method_is_the_product_gauss_legendre_rule() -> None:
    """Order 128 integrates the polynomial entries exactly (degree <= 255 per axis)."""
    for e in [e for e in ENTRIES if e["tag"] == "polynomial"][::9]:
        value, gap = bench._old_pair(e)
        assert value == pytest.approx(float(e["exact"]), abs=1e-13), e["id"]
        assert gap <= 1e-13


def test_select_is_round_robin_over_tags() -> None:
    picked = bench.select(ENTRIES, 5)
    assert [e["tag"] for e in picked] == [
        "polynomial",
        "step-as-function",
        "kinked",
        "jump",
        "grid",
    ]
    assert len(bench.select(ENTRIES, 12)) == 12
    assert bench.select(ENTRIES, None) == ENTRIES


def test_flags_keep_the_elimination_defaults() -> None:
    args = bench.parse([])
    assert (args.n, args.n_k4, args.budget, args.repeats, args.threads) == (2000, 400, 3.0, 2, 1)
    assert args.part == "all" and args.oracle_limit is None and not args.skip_k4
    with pytest.raises(SystemExit):
        bench.parse(["--part", "nope"])


def test_main_runs_the_oracle_part_alone(capsys: pytest.CaptureFixture[str]) -> None:
    out = bench.main(["--part", "oracle", "--oracle-limit", "5", "--skip-k4"])
    assert set(out) == {"threads", "oracle"}  # the elimination part did not run
    assert sum(t["count"] for t in out["oracle"]["per_tag"].values()) == 5
    assert "max |error|" in capsys.readouterr().out
