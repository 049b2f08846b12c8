"""The examples run from a fresh clone: each in a subprocess, its smallest settings, a temp cwd.

Each run checks the exit code, the files written and that nothing lands outside the example's
output folder (``examples-output/<name>/`` under the working directory, never the repository).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DATASETS

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
SLIDE = DATASETS / "spatial" / "GSM4284326_P10_ST_rep2.h5ad"
PNG = b"\x89PNG\r\n\x1a\n"


def _tree(folder: Path) -> set[Path]:
    return {p.relative_to(folder) for p in folder.rglob("*") if p.is_file()}


def _outputs_in_repo() -> set[str]:
    """Figures and data files at the repository root or in examples/ (where old runs wrote)."""
    return {
        str(p.relative_to(REPO))
        for folder in (REPO, EXAMPLES)
        for p in folder.iterdir()
        if p.suffix in {".png", ".h5ad", ".json"} or p.name in {"examples-output", "scc-out"}
    }


def run_example(
    cwd: Path, script: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    before = _outputs_in_repo()
    environment = {k: v for k, v in os.environ.items() if k != "GRAPHLIB_SCC_DATA"}
    environment.update({"OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg", **(env or {})})
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert _outputs_in_repo() == before, "the example wrote into the repository"
    return result


def _written(cwd: Path, name: str) -> set[str]:
    """The files the run left in ``cwd``; all must lie in ``examples-output/<name>/``."""
    files = _tree(cwd)
    outside = [p for p in files if p.parts[:2] != ("examples-output", name)]
    assert not outside, f"written outside examples-output/{name}/: {outside}"
    return {p.name for p in files}


def test_iwn_transfer_quick_writes_its_figure(tmp_path):
    result = run_example(tmp_path, "iwn_transfer.py", "--quick", "--device", "cpu")
    assert result.returncode == 0, result.stderr
    assert _written(tmp_path, "iwn_transfer") == {"iwn_transfer.png"}
    figure = tmp_path / "examples-output" / "iwn_transfer" / "iwn_transfer.png"
    assert figure.read_bytes()[:8] == PNG
    table = result.stdout.split("test MSE per node")[1].splitlines()
    assert re.match(r"model\s+n=50\s+n=100$", table[1])
    assert [line.split()[0] for line in table[2:5]] == ["iwn", "ign", "mpnn"]


def test_explain_family_explains_a_rule_of_length_two_or_more(tmp_path):
    result = run_example(tmp_path, "explain_family.py", "--quick", "--device", "cpu")
    assert result.returncode == 0, result.stderr
    assert _written(tmp_path, "explain_family") == {"explanation_1.png"}
    figure = tmp_path / "examples-output" / "explain_family" / "explanation_1.png"
    assert figure.read_bytes()[:8] == PNG
    (relation,) = re.findall(r"explanation of \(person_\d+, (\w+), person_\d+\)", result.stdout)
    assert relation in {"grandparent", "uncle", "aunt", "great_grandparent", "cousin"}
    truths = re.findall(r"ground truth: (.*)  \[", result.stdout)
    assert truths and all(body.count("(") >= 2 for body in truths)  # two or more body triples


def test_celcomen_scc_without_the_slide_says_where_to_get_it(tmp_path):
    missing = tmp_path / "nowhere.h5ad"
    result = run_example(tmp_path, "celcomen_scc.py", "--quick", "--data", str(missing))
    assert result.returncode == 1 and result.stdout == ""
    (line,) = result.stderr.splitlines()  # one line, no traceback
    assert line.startswith(f"celcomen_scc.py: error: the SCC slide is not at {missing};")
    assert "GSM4284326" in line and "--data PATH" in line and "GRAPHLIB_SCC_DATA" in line
    not_h5ad = tmp_path / "slide.h5ad"
    not_h5ad.write_text("not hdf5")
    result = run_example(tmp_path, "celcomen_scc.py", "--data", str(not_h5ad))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("celcomen_scc.py: error:") and "slide.h5ad" in line
    assert _tree(tmp_path) == {Path("slide.h5ad")}


@pytest.mark.slow  # ~10 s of CPU (scanpy, 16,642 genes filtered): the file stays near 25 s
def test_celcomen_scc_quick_on_the_shared_slide(tmp_path):
    if not SLIDE.is_file():
        pytest.skip(f"the SCC slide {SLIDE} is absent (fresh clone): real-data example")
    env = {"GRAPHLIB_SCC_DATA": str(SLIDE)}
    result = run_example(tmp_path, "celcomen_scc.py", "--quick", "--device", "cpu", env=env)
    assert result.returncode == 0, result.stderr
    names = {"celcomen_scc_matrices.png", "celcomen_scc_knockout.png", "scc_celcomen.h5ad"}
    assert _written(tmp_path, "celcomen_scc") == names
    out = tmp_path / "examples-output" / "celcomen_scc"
    assert (out / "celcomen_scc_knockout.png").read_bytes()[:8] == PNG

    import anndata

    adata = anndata.read_h5ad(out / "scc_celcomen.h5ad")
    assert adata.n_vars == 10 and adata.varp["celcomen_intra"].shape == (10, 10)
    (gene,) = adata.uns["celcomen"]["perturbation"]["genes"]
    assert f"knock-out of {gene} in {adata.obs['celcomen_perturbed'].sum()} spots" in result.stdout
