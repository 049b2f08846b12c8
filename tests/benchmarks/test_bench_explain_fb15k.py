"""benchmarks.bench_explain_fb15k end to end on a tiny family world (seconds, not FB15k-237).

A budget of 4 candidate paths prunes every target, so the relevance pruning, the old-cap
baseline, the beam of the hops=2 part, the evaluator cache and the parallel comparison all run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import bench_explain_fb15k as bench
from graphdata.synthetic import family_kg


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("family") / "family"
    family_kg(120).dataset.to_folder(path)
    return path


def _run(folder: Path, tmp: Path, *extra: str) -> dict:
    return bench.main(
        [
            "--dataset",
            str(folder),
            "--epochs",
            "2",
            "--evaluator-steps",
            "3",
            "--evaluator",
            str(tmp / "evaluator.pt"),
            "--targets",
            "3",
            "--hub-targets",
            "1",
            "--parallel-targets",
            "2",
            "--max-candidates",
            "4",
            "--out",
            str(tmp / "out.json"),
            *extra,
        ]
    )


def test_runs_and_compares_at_equal_size(folder: Path, tmp_path: Path) -> None:
    first = _run(folder, tmp_path)
    assert first["distil_seconds"] is not None and (tmp_path / "evaluator.pt").exists()
    from kg.explain import ExplainerConfig

    assert first["explained"] == 3 and first["strategy"] == ExplainerConfig().strategy
    assert json.loads((tmp_path / "out.json").read_text())["explained"] == 3
    assert first["pruned_targets"] >= 1
    for row in first["rows"]:
        methods = row["methods"]
        if not methods:
            continue
        k = methods["kgexplainer"]["size"]
        for name in ("random", "shortest", "relevance_topk"):
            assert methods[name]["size"] == k
        assert methods["edge_mask"]["size"] <= k
        assert ("old_cap" in methods) == (row["pruning"] == "relevance")
    assert first["fidelity"]["random"]["vs_kgexplainer"]["n"] == first["fidelity"]["random"]["n"]
    assert first["parallel"]["identical"] and first["parallel"]["differing_targets"] == 0
    assert len(first["hops2"]) == 1

    again = _run(folder, tmp_path)  # the evaluator comes from the cache: same figures
    assert again["distil_seconds"] is None
    assert again["fidelity"] == first["fidelity"]


def test_another_strategy_with_nan_gains_is_identical_in_parallel(
    folder: Path, tmp_path: Path
) -> None:
    out = _run(folder, tmp_path, "--strategy", "nodes", "--hub-targets", "0")
    assert out["strategy"] == "nodes"
    assert out["parallel"]["identical"]


def _faithful_run(folder: Path, tmp: Path, *extra: str) -> dict:
    return _run(
        folder,
        tmp,
        "--skip-fidelity",
        "--hub-targets",
        "0",
        "--parallel-targets",
        "0",
        "--faithful-steps",
        "3",
        "--faithful-baselines",
        "random,shortest",
        *extra,
    )


def test_faithful_part_relearns_every_method_at_equal_size(folder: Path, tmp_path: Path) -> None:
    out = _faithful_run(folder, tmp_path, "--faithful", "3")
    faithful = out["faithful"]
    assert faithful["methods"] == ["kgexplainer", "random", "shortest"]
    assert faithful["config"]["steps"] == 3 and faithful["config"]["neighbours"]
    assert faithful["evaluated"] == 3
    assert faithful["explained"] + faithful["empty"] == 3
    for row in faithful["rows"]:
        if not row["n"]:
            assert row["note"]
            continue
        assert set(row["budget"].values()) == {row["n"]}  # padded from the local paths
        assert row["necessity"].keys() == row["sufficiency"].keys() == set(faithful["methods"])
    summary = faithful["summary"]
    assert summary["explained"] == faithful["explained"]
    assert "paired_necessity_ci" in summary["random"] and "f1_mean" not in summary["random"]
    assert "| FB15k-237 (" in faithful["markdown"]
    assert json.loads((tmp_path / "out.json").read_text())["faithful"]["evaluated"] == 3

    # a run continued from an offset gives the same rows as the one run
    rest = _faithful_run(folder, tmp_path, "--faithful", "2", "--faithful-offset", "1")
    keys = ("index", "target", "n", "necessity", "sufficiency", "budget")
    later = [{k: r.get(k) for k in keys} for r in faithful["rows"][1:]]
    assert [{k: r.get(k) for k in keys} for r in rest["faithful"]["rows"]] == later
