"""``graphlib spatial`` reaches every option: signed input, obs coordinates, layer, genes, protocol.

Runs through :func:`graphlib_ml.cli.main`, so an expected failure is checked as the user sees
it: exit code 2 and one line on stderr, no traceback.
"""

from __future__ import annotations

import warnings

import anndata
import numpy as np
import pytest

from graphlib_ml.cli import EXIT_USAGE, main
from spatial import tl
from spatial.celcomen import CelcomenConfig
from spatial.simulate import simulate_tissue

EPOCHS = ["--epochs", "30", "--no-progress", "--device", "cpu"]


pytestmark = pytest.mark.usefixtures("one_thread_quiet")


def _one_line_error(capsys, *fragments: str) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in err, err
    return err


def test_simulate_then_fit_then_perturb_end_to_end(tmp_path, capsys):
    sim, fit, out = tmp_path / "sim.h5ad", tmp_path / "fit.h5ad", tmp_path / "cf.h5ad"
    argv = ["spatial", "simulate", "--cells", "80", "--genes", "4", "--steps", "50"]
    assert main([*argv, "--out", str(sim)]) == 0
    printed = capsys.readouterr().out
    # simulate says what to run next, and that command (plus options) works as printed
    assert f"next: graphlib spatial fit {sim} --signed --out {tmp_path / 'sim_fit.h5ad'}" in printed
    assert main(["spatial", "fit", str(sim), "--signed", "--out", str(fit), *EPOCHS]) == 0
    assert "genes fitted: 4 of 4 (X)" in capsys.readouterr().out
    assert (
        main(
            ["spatial", "perturb", str(fit), "--gene", "gene_1=0", "--cells", "cell_3,cell_4"]
            + ["--out", str(out), "--device", "cpu", "--no-progress"]
        )
        == 0
    )
    assert "'converged': True" in capsys.readouterr().out
    # oracle: the library on the same file gives the same fit and counterfactual
    expected = anndata.read_h5ad(sim)
    tl.celcomen(expected, allow_negative=True, epochs=30, progress=False)
    tl.perturb(expected, {"gene_1": 0.0}, ["cell_3", "cell_4"], progress=False)
    got = anndata.read_h5ad(out)
    for key in ("celcomen_intra", "celcomen_inter"):
        np.testing.assert_array_equal(got.varp[key], expected.varp[key])
    np.testing.assert_array_equal(got.layers["celcomen_delta"], expected.layers["celcomen_delta"])
    assert got.uns["celcomen"]["params"]["allow_negative"]
    assert np.isin(got.obs_names[got.obs["celcomen_perturbed"]], ["cell_3", "cell_4"]).all()


@pytest.fixture(scope="module")
def signed(tmp_path_factory):
    path = tmp_path_factory.mktemp("signed") / "t.h5ad"
    simulate_tissue(60, 4, steps=30, seed=2).to_anndata().write_h5ad(path)
    return path


def test_signed_input_without_signed_names_the_flag(signed, tmp_path, capsys):
    code = main(["spatial", "fit", str(signed), "--out", str(tmp_path / "o.h5ad"), *EPOCHS])
    assert code == EXIT_USAGE
    _one_line_error(capsys, "X holds", "negative values", "pass --signed")
    assert not (tmp_path / "o.h5ad").exists()


def test_objective_reference_alone_is_refused_and_the_protocol_is_the_reference(
    signed, tmp_path, capsys
):
    out = tmp_path / "ref.h5ad"
    base = ["spatial", "fit", str(signed), "--signed", "--out", str(out), *EPOCHS]
    assert main([*base, "--objective", "reference"]) == EXIT_USAGE
    _one_line_error(capsys, "--objective reference", "not the reference protocol", "--protocol")
    assert main([*base, "--protocol", "reference"]) == 0
    params = anndata.read_h5ad(out).uns["celcomen"]["params"]
    reference = CelcomenConfig.reference(epochs=30, progress=False)
    for name in ("objective", "optimizer", "init", "projection", "lr", "weight_decay", "fields"):
        assert params[name] == getattr(reference, name), name
    # the hybrid stays reachable, on purpose
    assert main([*base, "--objective", "reference", "--protocol", "ours"]) == 0
    params = anndata.read_h5ad(out).uns["celcomen"]["params"]
    assert params["objective"] == "reference" and params["init"] == "zeros"


def _obs_coordinates(path, tmp_path):
    """The tissue with its coordinates in obs columns only (no obsm, no graph), as a slide."""
    adata = anndata.read_h5ad(path)
    adata.obs["px"], adata.obs["py"] = adata.obsm["spatial"][:, 0], adata.obsm["spatial"][:, 1]
    truth = adata.obsp["spatial_connectivities"].copy()
    del adata.obsm["spatial"], adata.obsp["spatial_connectivities"]
    del adata.obsp["spatial_distances"], adata.uns["spatial_neighbors"]
    moved = tmp_path / "obs.h5ad"
    adata.write_h5ad(moved)
    return moved, truth


def test_coordinates_from_obs_columns_build_the_same_graph(signed, tmp_path, capsys):
    moved, truth = _obs_coordinates(signed, tmp_path)
    out = tmp_path / "o.h5ad"
    base = ["spatial", "fit", str(moved), "--signed", "--out", str(out), *EPOCHS]
    assert main(base) == EXIT_USAGE
    _one_line_error(capsys, "obsm['spatial']: no spatial coordinates")
    assert main([*base, "--coords-obs", "px,py", "--coords-scale", "2,2"]) == 0
    fitted = anndata.read_h5ad(out)
    coords = np.c_[fitted.obs["px"], fitted.obs["py"]]
    np.testing.assert_allclose(fitted.obsm["spatial"], 2 * coords)
    # a uniform scale keeps the k-NN graph: the same edges as the simulation's own graph
    assert (fitted.obsp["spatial_connectivities"] != truth).nnz == 0
    assert main([*base, "--coords-obs", "px,pz"]) == EXIT_USAGE
    _one_line_error(capsys, "--coords-obs: no obs column 'pz'", "'px'")
    assert main([*base, "--coords-obs", "px"]) == EXIT_USAGE
    _one_line_error(capsys, "--coords-obs: expected two comma-separated values")


def test_gene_selection_flags_reach_mask_var(signed, tmp_path, capsys):
    adata = anndata.read_h5ad(signed)
    adata.var["highly_variable"] = [True, False, True, True]
    adata.var["mine"] = [False, True, True, False]
    path = tmp_path / "hv.h5ad"
    adata.write_h5ad(path)
    out = tmp_path / "o.h5ad"
    base = ["spatial", "fit", str(path), "--signed", "--out", str(out), *EPOCHS]

    def genes(*flags):
        assert main([*base, *flags]) == 0
        return list(anndata.read_h5ad(out).uns["celcomen"]["params"]["genes"])

    assert genes() == ["gene_0", "gene_2", "gene_3"]  # var['highly_variable'] by default
    assert genes("--all-genes") == ["gene_0", "gene_1", "gene_2", "gene_3"]
    assert genes("--mask-var", "mine") == ["gene_1", "gene_2"]
    assert genes("--genes", "gene_3,gene_1") == ["gene_1", "gene_3"]  # in adata order
    capsys.readouterr()
    assert main([*base, "--genes", "gene_1,gene_9"]) == EXIT_USAGE
    _one_line_error(capsys, "--genes: unknown gene label 'gene_9'")
    assert main([*base, "--genes", "gene_1,gene_2", "--all-genes"]) == EXIT_USAGE  # argparse
    _one_line_error(capsys, "--all-genes: not allowed with argument --genes")


def test_perturb_takes_the_fitted_layer_and_refuses_another(tmp_path, capsys):
    adata = simulate_tissue(60, 4, steps=30, seed=3).to_anndata()
    adata.layers["counts"] = np.abs(adata.X) * 10 + 1
    path, fit, out = tmp_path / "c.h5ad", tmp_path / "f.h5ad", tmp_path / "p.h5ad"
    adata.write_h5ad(path)
    assert main(["spatial", "fit", str(path), "--layer", "counts", "--out", str(fit), *EPOCHS]) == 0
    base = ["spatial", "perturb", str(fit), "--gene", "gene_0=0", "--cells", "cell_7"]
    base += ["--out", str(out), "--device", "cpu", "--no-progress"]
    assert main([*base, "--method", "gradient", "--steps", "5"]) == 0
    record = anndata.read_h5ad(out).uns["celcomen"]["perturbation"]
    assert record["layer"] == "counts" and record["method"] == "gradient" and record["steps"] == 5
    capsys.readouterr()
    assert main([*base, "--layer", "other"]) == EXIT_USAGE
    _one_line_error(capsys, "--layer: the fit used layers['counts'], got layers['other']")
    assert main([*base, "--steps", "5"]) == EXIT_USAGE  # steps belong to the gradient method
    _one_line_error(capsys, "steps")


def test_perturb_langevin_stores_the_library_result_and_its_standard_errors(
    signed, tmp_path, capsys
):
    fit, out = tmp_path / "f.h5ad", tmp_path / "p.h5ad"
    assert main(["spatial", "fit", str(signed), "--signed", "--out", str(fit), *EPOCHS]) == 0
    options = ["--method", "langevin", "--steps", "120", "--burn-in", "20", "--seed", "5"]
    argv = ["spatial", "perturb", str(fit), "--gene", "gene_0=0", "--cells", "cell_7"]
    assert main([*argv, *options, "--out", str(out), "--device", "cpu", "--no-progress"]) == 0
    got = anndata.read_h5ad(out)
    # oracle: the library's own Langevin contrast with the same seed, on the same fit
    expected = anndata.read_h5ad(fit)
    tl.perturb(
        expected,
        {"gene_0": 0.0},
        ["cell_7"],
        method="langevin",
        steps=120,
        burn_in=20,
        seed=5,
        progress=False,
    )
    for key in ("celcomen_delta", "celcomen_delta_stderr"):
        np.testing.assert_array_equal(got.layers[key], expected.layers[key])
    stderr = got.layers["celcomen_delta_stderr"]
    assert np.isfinite(stderr).all() and (stderr >= 0).all() and stderr.max() > 0
    record = got.uns["celcomen"]["perturbation"]
    assert record["method"] == "langevin" and record["ring_stderr"].shape == (4, got.n_vars)
    np.testing.assert_array_equal(
        record["ring_stderr"], expected.uns["celcomen"]["perturbation"]["ring_stderr"]
    )


@pytest.mark.filterwarnings("ignore::anndata.OldFormatWarning")  # the shipped file
def test_the_scc_slide_fits_from_its_obs_columns(datasets_dir, tmp_path, capsys):
    slide = datasets_dir / "spatial" / "GSM4284326_P10_ST_rep2.h5ad"
    out, cf = tmp_path / "scc.h5ad", tmp_path / "scc_cf.h5ad"
    base = ["spatial", "fit", str(slide), "--out", str(out), "--coords-obs", "col,row"]
    base += ["--coords-scale", "1,1.7320508", *EPOCHS]
    assert main(base) == EXIT_USAGE  # 16,642 genes and no highly_variable: refused, with memory
    _one_line_error(capsys, "16,642 genes", "GiB")
    genes = "S100A8,S100A9,KRT6A,KRT5,KRT14"
    assert main([*base, "--genes", genes]) == 0
    fitted = anndata.read_h5ad(out)
    assert fitted.varp["celcomen_inter"].shape == (16642, 16642)
    assert fitted.varp["celcomen_inter"].nnz <= 25  # the 5 x 5 block only
    # a hexagonal array: every interior spot's 6 nearest neighbours are at distance 2
    graph = fitted.obsp["spatial_distances"]
    assert np.median(graph.data) == pytest.approx(2.0)
    assert (
        main(
            ["spatial", "perturb", str(out), "--gene", "KRT5=0", "--cells-where", "cluster=1"]
            + ["--out", str(cf), "--device", "cpu", "--no-progress"]
        )
        == 0
    )
    delta = anndata.read_h5ad(cf).layers["celcomen_delta"]
    assert delta.shape == (621, 16642) and np.isfinite(delta.data).all() and delta.nnz <= 621 * 5


def test_size_factors_flag_reaches_the_fit_and_a_missing_column_is_one_line(tmp_path, capsys):
    rng = np.random.default_rng(0)
    counts = rng.poisson(20.0, size=(80, 6)).astype(np.float32)
    adata = anndata.AnnData(X=counts)
    adata.obsm["spatial"] = rng.random((80, 2))
    adata.var["highly_variable"] = [True, True, True, False, False, False]
    adata.obs["library"] = counts.sum(1)
    path, out = tmp_path / "c.h5ad", tmp_path / "o.h5ad"
    adata.write_h5ad(path)
    base = ["spatial", "fit", str(path), "--out", str(out), *EPOCHS]

    def source(*flags):
        assert main([*base, *flags]) == 0
        return anndata.read_h5ad(out).uns["celcomen"]["params"].get("size_factors")

    assert source() == "total counts of the 3 genes not fitted"  # the genes left out
    assert "size factors: total counts of the 3 genes not fitted" in capsys.readouterr().out
    assert source("--size-factors", "library") == "obs['library']"
    assert source("--size-factors", "none") is None
    assert "orthogonal to the library-size direction" in capsys.readouterr().out
    assert main([*base, "--size-factors", "total_counts"]) == EXIT_USAGE
    _one_line_error(capsys, "obs['total_counts']: no such column", "'library'")


@pytest.fixture(scope="module")
def fitted(signed, tmp_path_factory):
    path = tmp_path_factory.mktemp("fitted") / "fit.h5ad"
    adata = anndata.read_h5ad(signed)
    adata.obs["cluster"] = np.arange(adata.n_obs) % 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        tl.celcomen(adata, allow_negative=True, epochs=5, progress=False)
    adata.write_h5ad(path)
    return path


@pytest.mark.parametrize(
    ("flags", "fragments"),
    [
        (
            ["--gene", "gene_1=0", "--gene", "gene_1=2", "--cells", "cell_3"],
            ["--gene: gene_1 is given twice"],
        ),
        (
            ["--gene", "gene_9=0", "--cells", "cell_3"],
            ["--gene: unknown gene label 'gene_9'", "'gene_1'"],
        ),
        (
            ["--gene", "gene_1=0", "--cells", "cell_3,cell_x"],
            ["--cells: unknown cell label 'cell_x'"],
        ),
        (
            ["--gene", "gene_1=0", "--cells-where", "cluster"],
            ["--cells-where: expected COLUMN=VALUE"],
        ),
        (
            ["--gene", "gene_1=0", "--cells-where", "cluster=7"],
            ["--cells-where: no cell has obs['cluster'] == '7'", "['0', '1', '2']"],
        ),
        (
            ["--gene", "gene_1=0", "--cells", "cell_3", "--key-added", ""],
            ["--key-added: expected a non-empty name"],
        ),
    ],
)
def test_perturb_names_the_flag_of_a_bad_selection(fitted, tmp_path, capsys, flags, fragments):
    # Before: a repeated --gene kept the last value silently, an unmatched --cells-where said
    # "cells: the selection is empty", unknown names came back without the flag.
    out = tmp_path / "p.h5ad"
    argv = ["spatial", "perturb", str(fitted), *flags, "--out", str(out), "--no-progress"]
    assert main(argv) == EXIT_USAGE
    _one_line_error(capsys, *fragments)
    assert not out.exists()


@pytest.mark.parametrize("key", ["", "a/b"])
def test_fit_refuses_a_key_added_that_h5ad_cannot_hold(signed, tmp_path, capsys, key):
    out = tmp_path / "o.h5ad"
    argv = ["spatial", "fit", str(signed), "--signed", "--key-added", key, "--out", str(out)]
    assert main([*argv, *EPOCHS]) == EXIT_USAGE
    _one_line_error(capsys, "--key-added: expected a non-empty name without '/'")
    assert not out.exists()


def test_fit_refuses_repeated_genes_and_warns_on_an_unused_n_neighbors(signed, tmp_path, capsys):
    out = tmp_path / "o.h5ad"
    base = ["spatial", "fit", str(signed), "--signed", "--out", str(out), *EPOCHS]
    assert main([*base, "--genes", "gene_0,gene_0"]) == EXIT_USAGE
    _one_line_error(capsys, "--genes: ['gene_0'] given more than once")
    # the simulated tissue has its graph: --n-neighbors cannot change it, and says so
    assert main([*base, "--n-neighbors", "10"]) == 0
    assert "--n-neighbors 10 is not used: the input has the graph" in capsys.readouterr().err


def test_simulate_refuses_fewer_cells_than_a_neighbourhood(tmp_path, capsys):
    out = tmp_path / "s.h5ad"
    assert main(["spatial", "simulate", "--cells", "6", "--out", str(out)]) == EXIT_USAGE
    _one_line_error(capsys, "argument --cells: expected an integer >= 7")
    assert main(["spatial", "simulate", "--cells", "7", "--steps", "3", "--out", str(out)]) == 0


def test_an_epochs_value_that_uns_cannot_store_is_refused_before_the_fit(signed, tmp_path, capsys):
    # Before: the fit ran (cg stops early), then write_h5ad failed on the int in uns.
    out = tmp_path / "o.h5ad"
    argv = ["spatial", "fit", str(signed), "--signed", "--out", str(out), "--no-progress"]
    assert main([*argv, "--epochs", str(10**21)]) == EXIT_USAGE
    _one_line_error(capsys, "argument --epochs: expected an integer in [1, 9223372036854775807]")
    assert not out.exists()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--steps", "10"],
            "--steps: applies to --method langevin or gradient only, got --steps 10 with "
            "--method mean_field; drop --steps or pass --method langevin",
        ),
        (["--method", "gradient", "--tolerance", "0.1"], "--tolerance: applies to --method"),
        (["--method", "langevin", "--damping", "1"], "with --method langevin; drop --damping"),
        (["--horizon", "3"], "--horizon: applies to --method gradient only"),
        (["--method", "mean_field", "--step-size", "0.1"], "drop --step-size or pass --method"),
    ],
)
def test_perturb_names_the_flags_of_an_option_of_another_method(
    fitted, tmp_path, capsys, flags, message
):
    # Before: the library's keywords, "steps: applies to method='langevin' or 'gradient' only,
    # got steps=10 with method='mean_field'; drop steps or pass method='langevin'".
    out = tmp_path / "p.h5ad"
    argv = ["spatial", "perturb", str(fitted), "--gene", "gene_1=0", "--cells", "cell_3"]
    assert main([*argv, *flags, "--out", str(out), "--no-progress"]) == EXIT_USAGE
    err = _one_line_error(capsys, message)
    assert "method=" not in err and "steps=" not in err
    assert not out.exists()


def test_fit_refused_after_making_the_tracker_folder_leaves_no_new_folder(signed, tmp_path, capsys):
    # make_tracker creates the tracker's folder before tl.celcomen checks --spatial-key: the
    # refusal left an empty OUT.tracking folder.
    out = tmp_path / "o.h5ad"
    argv = ["spatial", "fit", str(signed), "--signed", "--out", str(out), *EPOCHS]
    assert main([*argv, "--tracker", "jsonl", "--spatial-key", "nope"]) == EXIT_USAGE
    _one_line_error(capsys, "obsm['nope']")
    assert not (tmp_path / "o.tracking").exists() and not out.exists()
