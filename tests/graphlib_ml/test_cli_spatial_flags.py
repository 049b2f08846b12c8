"""``graphlib spatial`` refusals name the flags, not the library's keywords.

Through :func:`graphlib_ml.cli.main`: each bad value ends with one ``graphlib: error:`` line that
names the flag, what was expected, what arrived and the fix, and none of the keyword spellings
(``layer=None``, ``mask_var=False``, ``transform='sphere'``) the library's own messages use.
Integers stored in the AnnData (the fit's config, the perturbation record) stop at
``2**63 - 1`` at parse time; ``--lr`` stops where torch's float32 Adam step would overflow.
"""

from __future__ import annotations

import numpy as np
import pytest

from graphdata.errors import GraphDataError
from graphlib_ml.cli import EXIT_USAGE, main
from spatial.celcomen import LR_MAX, Celcomen, CelcomenConfig
from spatial.simulate import simulate_tissue

INT64_MAX = 2**63 - 1


pytestmark = pytest.mark.usefixtures("one_thread_quiet")


@pytest.fixture(scope="module")
def tissue(tmp_path_factory):
    """Signed sphere coordinates in X (negative values), raw counts in layers['counts']."""
    path = tmp_path_factory.mktemp("tissue") / "sim.h5ad"
    adata = simulate_tissue(40, 3, steps=5, seed=0).to_anndata()
    adata.obs["total"] = np.asarray(adata.layers["counts"].sum(1)).ravel() + 1.0
    adata.var["numbers"] = np.arange(3)
    adata.write_h5ad(path)
    return path


def _error(argv, tmp_path, capsys, code=None):
    """The one error line of ``graphlib ARGV --out tmp/out.h5ad``; no output is written."""
    out = tmp_path / "out.h5ad"
    done = main([*argv, "--out", str(out), "--device", "cpu"])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("graphlib: error:")]
    assert len(lines) == 1 and "Traceback" not in err and "unexpected" not in err, err
    assert (code is None and done != 0) or done == code
    assert not out.exists()
    return lines[0]


def test_lr_past_the_float32_step_is_refused_naming_the_flag(tissue, tmp_path, capsys):
    # Was: "unexpected RuntimeError: value cannot be converted to type float without overflow".
    argv = ["spatial", "fit", str(tissue), "--signed", "--lr", "1e300", "--optimizer", "adam"]
    line = _error(argv, tmp_path, capsys, EXIT_USAGE)
    assert "argument --lr: expected a finite number in (0, 1e+37], got '1e300'" in line
    with pytest.raises(GraphDataError, match=r"lr: expected a finite number > 0 and <= 1e\+37"):
        CelcomenConfig(lr=1e300)
    # The bound is below the overflow: Adam's first step 10 * LR_MAX is a float32, so a fit at
    # LR_MAX ends in the library's divergence message, not in torch's RuntimeError.
    t = simulate_tissue(20, 3, steps=5, seed=0)
    for optimizer in ("adam", "sgd"):
        config = CelcomenConfig(lr=LR_MAX, optimizer=optimizer, epochs=2, progress=False)
        with pytest.raises(GraphDataError, match="lr: the fit diverged"):
            Celcomen(config).fit(t.x, t.edge_index, allow_negative=True)


@pytest.mark.parametrize(
    ("command", "flag", "low"),
    [
        (["fit", "t.h5ad"], "--epochs", 1),
        (["fit", "t.h5ad"], "--n-neighbors", 1),
        (["fit", "t.h5ad"], "--batch-size", 1),
        (["perturb", "t.h5ad", "--gene", "a=0", "--cells", "c"], "--max-iterations", 1),
        (["perturb", "t.h5ad", "--gene", "a=0", "--cells", "c"], "--steps", 1),
        (["perturb", "t.h5ad", "--gene", "a=0", "--cells", "c"], "--burn-in", 0),
    ],
)
def test_int64_flags_refuse_2_to_the_63_naming_the_flag(
    command, flag, low, tmp_path, monkeypatch, capsys
):
    # Was: accepted (--max-iterations) or refused by the library as "epochs: expected ...".
    monkeypatch.chdir(tmp_path)
    line = _error(["spatial", *command, flag, str(INT64_MAX + 1)], tmp_path, capsys, EXIT_USAGE)
    assert f"argument {flag}: expected an integer in [{low}, {INT64_MAX}]" in line


def test_a_missing_layer_names_the_flag(tissue, tmp_path, capsys):
    line = _error(["spatial", "fit", str(tissue), "--signed", "--layer", "nope"], tmp_path, capsys)
    assert line.startswith("graphlib: error: --layer: no layer 'nope' in ")
    assert "(layers: ['counts']); pass one of them, or drop --layer to fit X" in line
    assert "layer=None" not in line


def test_a_missing_mask_var_column_names_the_flag(tissue, tmp_path, capsys):
    line = _error(["spatial", "fit", str(tissue), "--signed", "--mask-var", "hv"], tmp_path, capsys)
    assert line.startswith("graphlib: error: --mask-var: no var column 'hv' (boolean columns: [])")
    assert "--genes A,B,... or --all-genes" in line and "mask_var=False" not in line


def test_log_counts_on_signed_input_names_the_flag(tissue, tmp_path, capsys):
    argv = ["spatial", "fit", str(tissue), "--signed", "--transform", "log_counts"]
    line = _error(argv, tmp_path, capsys)
    assert line.startswith("graphlib: error: --transform log_counts: needs non-negative raw")
    assert "pass --layer LAYER with the raw counts, or --transform sphere" in line
    assert "layer='counts'" not in line and "transform='sphere'" not in line


@pytest.mark.parametrize("transform", [[], ["--transform", "sphere"]])
def test_size_factors_of_a_sphere_fit_name_the_flag(transform, tissue, tmp_path, capsys):
    argv = ["spatial", "fit", str(tissue), "--signed", "--size-factors", "total", *transform]
    line = _error(argv, tmp_path, capsys)
    assert line.startswith("graphlib: error: --size-factors: applies to raw counts")
    assert "got a 'sphere' fit of X; drop --size-factors" in line
    assert "size_factors" not in line and "layer='counts'" not in line


def test_size_factors_of_the_raw_counts_are_accepted(tissue, tmp_path, capsys):
    # The check agrees with the library's choice: auto on raw counts is a log-counts fit.
    out = tmp_path / "fit.h5ad"
    argv = ["spatial", "fit", str(tissue), "--layer", "counts", "--size-factors", "total"]
    assert main([*argv, "--epochs", "2", "--out", str(out), "--device", "cpu"]) == 0
    assert "size factors: obs['total']; couplings reported whole" in capsys.readouterr().out


def test_max_genes_one_names_the_flag(tissue, tmp_path, capsys):
    argv = ["spatial", "fit", str(tissue), "--signed", "--max-genes", "1"]
    line = _error(argv, tmp_path, capsys)
    assert line.startswith("graphlib: error: --max-genes: expected 0 (no limit) or an integer >= 2")
    assert "got 1" in line and "max_genes" not in line


def test_a_fit_above_max_genes_names_the_flags(tissue, tmp_path, capsys):
    # Was: "mask_var: ... above max_genes=2; ... pass mask_var= ...".
    line = _error(["spatial", "fit", str(tissue), "--signed", "--max-genes", "2"], tmp_path, capsys)
    need = (4 * (10 * 40 * 3 + 56 * 3 * 3) + 2**29) / 2**30  # the memory it names, as below
    assert line.startswith("graphlib: error: --max-genes: the fit would use 3 genes x 40 cells")
    assert f"above --max-genes 2, and needs about {need:.2f} GiB" in line
    assert "select genes with --genes A,B,... or --mask-var COLUMN" in line
    assert "pass --max-genes 3 (0: no limit)" in line and "mask_var" not in line


def test_the_default_gene_limit_names_the_flags(tmp_path, capsys):
    import anndata

    from spatial._inputs import MAX_GENES

    rng = np.random.default_rng(0)
    genes = MAX_GENES + 1
    adata = anndata.AnnData(rng.poisson(1.0, (8, genes)).astype(np.float32))
    adata.obsm["spatial"] = rng.uniform(size=(8, 2))
    path = tmp_path / "wide.h5ad"
    adata.write_h5ad(path)
    line = _error(["spatial", "fit", str(path)], tmp_path, capsys)
    assert (
        f"the fit would use {genes:,} genes x 8 cells, above --max-genes {MAX_GENES:,} "
        "(the default), and needs about" in line
    )
    assert "GiB" in line
    assert "max_genes=None" not in line


def test_a_fit_above_max_memory_names_the_flag(tissue, tmp_path, capsys):
    # Oracle: the estimate 4 B x (10 N G + 56 G^2) + 2**29 for N = 40 cells, G = 3 genes.
    need = (4 * (10 * 40 * 3 + 56 * 3 * 3) + 2**29) / 2**30
    argv = ["spatial", "fit", str(tissue), "--signed", "--max-memory", "0.001"]
    line = _error(argv, tmp_path, capsys)
    assert line.startswith(
        f"graphlib: error: --max-memory: the fit of 3 genes x 40 cells needs about {need:.2f} GiB"
    )
    assert "above --max-memory 0.001;" in line and "max_memory" not in line


@pytest.mark.parametrize(("steps", "fix"), [(5, 10), (INT64_MAX, INT64_MAX - 7)])
def test_langevin_steps_off_the_batches_name_the_flag(steps, fix, tissue, tmp_path, capsys):
    # Was: "steps: expected a multiple of batches=10, got ...; pass e.g. steps=...".
    fitted = tmp_path / "fit.h5ad"
    argv = ["spatial", "fit", str(tissue), "--signed", "--epochs", "2", "--out", str(fitted)]
    assert main([*argv, "--device", "cpu"]) == 0
    argv = ["spatial", "perturb", str(fitted), "--gene", "gene_0=0", "--cells", "cell_0"]
    line = _error([*argv, "--method", "langevin", "--steps", str(steps)], tmp_path, capsys)
    assert "--steps: --method langevin averages 10 batches" in line
    assert f"expects a multiple of 10, got {steps}; pass e.g. --steps {fix}" in line
    assert fix % 10 == 0 and "batches=10" not in line
