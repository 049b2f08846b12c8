"""AnnData wrappers end to end: keys written, bad input, plots, the real SCC slide, the CLI."""

from __future__ import annotations

import argparse

import anndata
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402

from graphdata.errors import GraphDataError, UnknownLabelError  # noqa: E402
from graphlib_ml.cli.spatial import add_subparser, parse_genes  # noqa: E402
from spatial import plot, tools  # noqa: E402
from spatial.simulate import hex_grid  # noqa: E402


def _adata(n: int = 80, g: int = 5, seed: int = 0) -> anndata.AnnData:
    rng = np.random.default_rng(seed)
    adata = anndata.AnnData(
        X=sp.csr_matrix(rng.gamma(1.0, 1.0, (n, g)).astype(np.float32)),
        obsm={"spatial": hex_grid(n).numpy()},
    )
    adata.obs_names = [f"spot{i}" for i in range(n)]
    adata.var_names = ["IFITM3", "CD74", "KRT5", "COL1A1", "MKI67"][:g]
    return adata


def test_fit_and_intervene_write_the_documented_keys(tmp_path):
    adata = _adata()
    tools.celcomen(adata, epochs=30, progress=False)
    # the graph was missing, so it was built first (k = 6, squidpy keys)
    assert adata.obsp["spatial_connectivities"].nnz == 80 * 6
    assert adata.uns["spatial_neighbors"]["params"]["n_neighbors"] == 6
    intra, inter = adata.varp["celcomen_intra"], adata.varp["celcomen_inter"]
    assert intra.shape == inter.shape == (5, 5) and intra.dtype == np.float32
    np.testing.assert_allclose(intra, intra.T)
    params = adata.uns["celcomen"]["params"]
    assert params["epochs"] == 30 and params["layer"] is None and params["allow_negative"] is False
    assert params["genes"] == list(adata.var_names)  # every gene: dense matrices above
    assert 1 <= len(adata.uns["celcomen"]["losses"]) <= 30  # the solver may stop early

    cells = ["spot40", "spot41"]
    tools.intervene(adata, {"IFITM3": 0.0}, cells, method="gradient", steps=10)
    cf, delta = adata.layers["celcomen_counterfactual"], adata.layers["celcomen_delta"]
    assert cf.shape == delta.shape == (80, 5) and np.isfinite(delta).all()
    assert np.all(cf[[40, 41], 0] == 0)
    np.testing.assert_allclose(np.linalg.norm(cf, axis=1), 1.0, rtol=1e-5)
    assert adata.obs["celcomen_perturbed"].sum() == 2
    assert set(adata.obs["celcomen_ring"]) <= {0, 1, 2, 3}
    record = adata.uns["celcomen"]["perturbation"]
    assert record["genes"] == {"IFITM3": 0.0} and record["n_cells"] == 2
    assert record["ring_size"].sum() == 80 and record["ring_mean"].shape == (4, 5)

    path = tmp_path / "out.h5ad"
    adata.write_h5ad(path)
    back = anndata.read_h5ad(path)
    np.testing.assert_array_equal(back.varp["celcomen_inter"], inter)

    for ax in (
        plot.interaction_heatmap(adata, "inter"),
        plot.delta_map(adata, "CD74"),
        plot.ring_summary(adata),
        plot.ring_summary(adata, ["KRT5"]),
    ):
        assert isinstance(ax, Axes)


def test_existing_graph_is_used_not_rebuilt():
    adata = _adata()
    ring = sp.csr_matrix(np.roll(np.eye(80, dtype=np.float32), 1, axis=1))  # a cycle
    adata.obsp["spatial_connectivities"] = ring
    tools.celcomen(adata, epochs=3, progress=False)
    assert (adata.obsp["spatial_connectivities"] != ring).nnz == 0
    assert "spatial_neighbors" not in adata.uns


def test_missing_coordinates_say_how_to_add_them():
    adata = _adata()
    del adata.obsm["spatial"]
    with pytest.raises(KeyError, match=r"obsm\['spatial'\]: no spatial coordinates .* adata.obsm"):
        tools.celcomen(adata, epochs=2, progress=False)


@pytest.mark.parametrize(
    "value, message",
    [(np.nan, "expected finite expression, got 1 NaN"), (-1.0, "expected non-negative expression")],
)
def test_nan_and_negative_expression(value, message):
    adata = _adata()
    dense = adata.X.toarray()
    dense[3, 2] = value
    adata.X = dense
    with pytest.raises(GraphDataError, match=message + r".*\['spot3'\]"):
        tools.celcomen(adata, epochs=2, progress=False)


def test_zero_expression_cells_are_refused_with_a_fix():
    adata = _adata()
    dense = adata.X.toarray()
    dense[[4, 9]] = 0
    adata.X = dense
    with pytest.raises(GraphDataError, match=r"2 cells have zero expression .*filter_cells"):
        tools.celcomen(adata, epochs=2, progress=False)


def test_unknown_genes_and_cells_list_close_names():
    adata = _adata()
    tools.celcomen(adata, epochs=2, progress=False)
    with pytest.raises(UnknownLabelError, match="unknown gene label 'IFITM2'.*'IFITM3'"):
        tools.intervene(adata, {"IFITM2": 0.0}, ["spot1"])
    with pytest.raises(UnknownLabelError, match="unknown cell label 'spot999'"):
        tools.intervene(adata, {"IFITM3": 0.0}, ["spot999"])
    with pytest.raises(GraphDataError, match="expected a finite expression value >= 0"):
        tools.intervene(adata, {"IFITM3": -2.0}, ["spot1"])


def test_intervene_before_fit_says_what_to_run():
    with pytest.raises(KeyError, match=r"run spatial.tl.celcomen\(adata"):
        tools.intervene(_adata(), {"IFITM3": 0.0}, ["spot1"])


@pytest.mark.filterwarnings("ignore::anndata.OldFormatWarning")
def test_real_scc_slide_end_to_end(datasets_dir):
    scanpy = pytest.importorskip("scanpy")
    adata = anndata.read_h5ad(datasets_dir / "spatial" / "GSM4284326_P10_ST_rep2.h5ad")
    assert adata.n_obs == 621
    # Array rows/cols (row + col even) form a hexagonal lattice once rows are scaled by sqrt(3).
    adata.obsm["spatial"] = np.c_[adata.obs["col"], np.sqrt(3) * adata.obs["row"]]
    scanpy.pp.filter_genes(adata, min_cells=int(0.8 * adata.n_obs))
    scanpy.pp.log1p(adata)
    scanpy.pp.highly_variable_genes(adata, n_top_genes=12)
    adata = adata[:, adata.var["highly_variable"]].copy()
    scanpy.pp.filter_cells(adata, min_genes=1)
    tools.celcomen(adata, epochs=200, lr=0.5, progress=False)
    assert np.isfinite(adata.varp["celcomen_inter"]).all()
    losses = adata.uns["celcomen"]["losses"]
    assert losses[-1] < losses[0]
    assert abs(losses[-20] - losses[-1]) < 1e-3 * abs(losses[-1])  # converged
    gene = str(adata.var_names[0])
    # knock the gene out in one cluster, in the spots that express something else too
    others = np.asarray(adata.X[:, 1:].sum(1)).ravel() > 0
    cells = (adata.obs["cluster"] == adata.obs["cluster"].iloc[0]).to_numpy() & others
    tools.intervene(adata, {gene: 0.0}, cells, method="gradient", steps=20)
    delta = adata.layers["celcomen_delta"]
    assert np.isfinite(delta).all() and np.abs(delta).max() > 0
    assert np.all(adata.layers["celcomen_counterfactual"][cells, 0] == 0)


def test_cli_simulate_fit_intervene(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    add_subparser(parser.add_subparsers(dest="command"))
    sim, fit, out = tmp_path / "sim.h5ad", tmp_path / "fit.h5ad", tmp_path / "cf.h5ad"
    args = parser.parse_args(
        ["spatial", "simulate", "--cells", "60", "--genes", "4", "--steps", "20", "--out", str(sim)]
    )
    assert args.func(args) == 0
    args = parser.parse_args(
        ["spatial", "fit", str(sim), "--signed", "--out", str(fit), "--epochs", "5"]
        + ["--device", "cpu"]
    )
    assert args.func(args) == 0
    args = parser.parse_args(
        [
            "spatial",
            "intervene",
            str(fit),
            "--gene",
            "gene_1=0",
            "--cells",
            "cell_3,cell_4",
            "--out",
            str(out),
            "--device",
            "cpu",
        ]
    )
    assert args.func(args) == 0
    assert "celcomen_delta" in anndata.read_h5ad(out).layers
    assert "config=" in capsys.readouterr().out
    assert parse_genes(["A=1.5"]) == {"A": 1.5}
    with pytest.raises(GraphDataError, match="--gene: expected NAME=VALUE"):
        parse_genes(["A"])
