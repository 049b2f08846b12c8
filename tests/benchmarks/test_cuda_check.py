"""benchmarks/cuda_check.py: the CPU-only skip, the exact CPU-vs-CPU dry run, and real failures.

Without a GPU the comparison code still runs: ``--device cpu`` compares the CPU with itself,
where every result must be bit-identical; and the comparison helpers must fail on tensors (and
rankings) that differ beyond their tolerance, or the check could never fail.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from benchmarks import cuda_check
from benchmarks.cuda_check import Check, Context, compare, compare_many, main
from kg.evaluation import RankMetrics

REPO = Path(__file__).resolve().parents[2]


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("PASS ", "FAIL "))]


def test_default_invocation_without_cuda_skips_with_exit_0(tmp_path: Path) -> None:
    # What CI sees: CUDA hidden from the process, the plain command skips cleanly.
    out = tmp_path / "summary.json"
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.cuda_check", "--out", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "CUDA not available: skipped"
    assert json.loads(out.read_text())["skipped"] == "CUDA not available"


def test_cpu_dry_run_passes_every_check_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "summary.json"
    assert main(["--device", "cpu", "--quick", "--out", str(out)]) == 0
    lines = _lines(capsys.readouterr().out)
    summary = json.loads(out.read_text())
    assert summary["passed"] and summary["failed"] == []
    assert len(lines) == summary["num_checks"] == len(summary["checks"]) > 50
    assert all(line.startswith("PASS ") for line in lines)
    # CPU against CPU runs the same kernels: zero error under zero tolerance, everywhere but in
    # the 2-rank gloo run, whose gradient sums are added in another order (stated tolerances).
    exact = [c for c in summary["checks"] if not c["name"].startswith("distributed.")]
    assert all(c["max_abs_err"] == 0.0 and c["tol"] == 0.0 for c in exact)
    ranks = [c for c in summary["checks"] if c["name"].startswith("distributed.ranks")]
    assert len(ranks) == 2 and all(c["max_abs_err"] == 0.0 for c in ranks)
    names = {c["name"].split(".")[0] for c in summary["checks"]}
    assert names == {"kg", "graphon", "spatial", "graphdata", "distributed"}
    assert set(summary["seconds"]) == set(cuda_check.SECTIONS)
    assert summary["timing"] == {"skipped": "needs CUDA"}


def _write_kg(folder: Path, entities: int = 40, relations: int = 3, triples: int = 400) -> Path:
    gen = torch.Generator().manual_seed(0)
    rows = torch.stack(
        [
            torch.randint(0, entities, (triples,), generator=gen),
            torch.randint(0, relations, (triples,), generator=gen),
            torch.randint(0, entities, (triples,), generator=gen),
        ],
        dim=1,
    ).unique(dim=0)
    lines = [f"e{h}\tr{r}\te{t}" for h, r, t in rows.tolist()]
    folder.mkdir()
    cut = len(lines) - 40
    for split, part in (("train", lines[:cut]), ("valid", lines[cut:-20]), ("test", lines[-20:])):
        (folder / f"{split}.txt").write_text("\n".join(part) + "\n")
    return folder


def test_timing_section_dry_run_on_a_small_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _write_kg(tmp_path / "tiny")
    out = tmp_path / "summary.json"
    code = main(
        [
            "--device",
            "cpu",
            "--quick",
            "--sections",
            "timing",
            "--data",
            str(data),
            "--out",
            str(out),
        ]
    )
    text = capsys.readouterr().out
    assert code == 0
    timing = json.loads(out.read_text())["timing"]
    for name in ("complex", "transe"):
        assert timing[name]["epoch_s"] > 0 and timing[name]["eval_s"] > 0
        assert 0 < timing[name]["test_mrr_after_1_epoch"] <= 1
        assert f"TIME tiny {name}" in text
    assert all(line.startswith("PASS timing.tiny.") for line in _lines(text))


def test_compare_fails_beyond_tolerance_and_passes_within() -> None:
    ref = torch.tensor([1.0, -2.0, 4.0])
    # tol = rtol * max|ref| = 4e-4: an error of 3e-4 passes, 5e-4 fails.
    assert compare("x", ref, ref + torch.tensor([0.0, 3e-4, 0.0]), rtol=1e-4).passed
    failed = compare("x", ref, ref + torch.tensor([0.0, 5e-4, 0.0]), rtol=1e-4)
    assert not failed.passed
    assert failed.max_abs_err == pytest.approx(5e-4, rel=1e-3)
    assert failed.tol == pytest.approx(4e-4)
    assert failed.line().startswith("FAIL x 5.")
    assert not compare("x", ref, ref[:2], rtol=1.0).passed  # shapes differ
    nan = torch.tensor([1.0, float("nan")])
    assert compare("x", nan, nan.clone(), rtol=0.0).passed  # NaN in the same place
    assert not compare("x", nan, torch.tensor([float("nan"), 1.0]), rtol=1.0).passed
    big = torch.tensor([2**40 + 1, 5])  # integer ids compared exactly, not through float32
    assert not compare("ids", big, torch.tensor([2**40, 5]), rtol=0.0).passed


def test_compare_many_reports_the_worst_entry() -> None:
    refs = {"a": torch.ones(3), "b": torch.full((3,), 100.0)}
    gots = {"a": torch.ones(3) + 0.5, "b": torch.full((3,), 100.0) + 0.5}
    check = compare_many("grads", refs, gots, rtol=1e-2)
    # Same error 0.5 in both; "a" fails its tol 0.01, "b" passes its tol 1.0.
    assert not check.passed and "a" in check.detail and check.tol == pytest.approx(0.01)
    assert compare_many("grads", refs, copy.deepcopy(refs), rtol=0.0).passed


def test_a_perturbed_model_fails_the_agreement_of_its_scores() -> None:
    # The trajectory code of the kg section, once from the same state and once from a state with
    # one embedding row moved by 1e-2: the first agrees exactly, the second must fail at 1e-4.
    from graphdata.synthetic import family_kg

    dataset = family_kg(60, seed=0).dataset
    spec = next(s for s in cuda_check._kg_specs(quick=True) if s.name == "complex")
    torch.manual_seed(0)
    model = spec.build(dataset.num_entities, 2 * dataset.num_relations)
    batches = cuda_check._kg_batches(dataset, spec, steps=2, batch=16, negatives=4)
    probe = dataset.train.mapped_triples[:8]
    cpu = torch.device("cpu")
    ref = cuda_check._kg_trajectory(copy.deepcopy(model), spec, batches, probe, cpu)
    same = cuda_check._kg_trajectory(copy.deepcopy(model), spec, batches, probe, cpu)
    moved = copy.deepcopy(model)
    with torch.no_grad():
        moved.entity.weight[int(probe[0, 0])] += 1e-2
    bad = cuda_check._kg_trajectory(moved, spec, batches, probe, cpu)
    assert compare_many("s", ref["scores"], same["scores"], rtol=0.0).passed
    assert compare_many("p", ref["state"], same["state"], rtol=0.0).passed
    assert not compare_many("s", ref["scores"], bad["scores"], rtol=cuda_check.RTOL32).passed
    assert not compare_many("p", ref["state"], bad["state"], rtol=cuda_check.RTOL32).passed


def _metrics(optimistic: list[list[int]], pessimistic: list[list[int]]) -> RankMetrics:
    opt, pes = torch.tensor(optimistic), torch.tensor(pessimistic)
    return RankMetrics(
        opt, pes, torch.full_like(opt, 10), torch.zeros(opt.size(1), dtype=torch.long)
    )


def test_rank_checks_allow_near_ties_only() -> None:
    ctx = Context(device=torch.device("cuda"), quick=True, kg_root=Path("."), data=None)
    ref = _metrics([[1, 2], [3, 1]], [[1, 2], [3, 1]])
    moved = _metrics([[2, 2], [3, 1]], [[2, 2], [3, 1]])  # head rank of triple 0: 1 -> 2
    no_ties = torch.zeros(2, 2, dtype=torch.long)
    one_tie = torch.tensor([[1, 0], [0, 0]])
    cuda_check._rank_checks(ctx, "untied", ref, moved, no_ties)
    cuda_check._rank_checks(ctx, "tied", ref, moved, one_tie)
    by_name = {c.name: c for c in ctx.checks}
    # Without a near tie the moved rank fails, and so do MRR and Hits@1 (beyond 1e-4).
    assert not by_name["untied.ranks"].passed and by_name["untied.ranks"].max_abs_err == 1
    assert not by_name["untied.mrr"].passed and not by_name["untied.hits_at_1"].passed
    assert by_name["untied.hits_at_3"].passed  # rank 2 is within 3 on both sides
    # A near tie of the true answer on the CPU allows exactly that move, and the metric change.
    assert all(c.passed for name, c in by_name.items() if name.startswith("tied."))


def test_an_exception_in_one_section_is_a_fail_and_the_others_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(ctx: Context) -> None:
        raise RuntimeError("simulated kernel failure")

    monkeypatch.setitem(cuda_check._SECTION_FUNCS, "graphon", broken)
    assert main(["--device", "cpu", "--quick", "--sections", "graphon,graphdata"]) == 1
    lines = _lines(capsys.readouterr().out)
    assert "FAIL graphon.error inf 0.000e+00" in lines[0]
    assert "simulated kernel failure" in lines[0]
    assert len(lines) > 1 and all(line.startswith("PASS graphdata.") for line in lines[1:])


def test_check_line_format() -> None:
    line = Check("kg.x", True, 1.5e-7, 2e-4, "d").line()
    assert line == "PASS kg.x 1.500e-07 2.000e-04  [d]"
