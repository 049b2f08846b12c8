"""Plots of stored Celcomen results: each function reads ``adata``, draws one thing, returns Axes.

They read what :func:`spatial.tl.celcomen` and :func:`spatial.tl.perturb` wrote (keys in
:mod:`spatial._keys`); none of them computes a model. The scanpy-shaped faces with ``show=`` and
``save=`` are in :mod:`spatial.pl`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from graphdata.errors import GraphDataError, UnknownLabelError
from spatial import _keys

if TYPE_CHECKING:
    from anndata import AnnData
    from matplotlib.axes import Axes

__all__ = ["interaction_heatmap", "recovery_scatter", "delta_map", "ring_summary"]


def _axes(ax: Axes | None) -> Axes:
    if ax is not None:
        return ax
    # A pyplot figure, so that it shows in a notebook; imported here, so that ``import spatial``
    # does not load matplotlib. pyplot uses whatever backend the user has (no matplotlib.use).
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(4, 3.5))[1]


def _varp(
    adata: AnnData, key: str, prefix: str, genes: Sequence[str] | None = None
) -> tuple[np.ndarray, list[str]]:
    """A stored matrix over ``genes`` (None: the genes the fit used, else all) and their names.

    A fit over a gene subset is stored as a CSR matrix over the used block
    (:func:`spatial.tools.store_fit`); only that block, dense, is returned.
    """
    if key not in adata.varp:
        raise KeyError(
            f"varp[{key!r}]: not in adata.varp (available: {sorted(adata.varp.keys())}); run "
            "spatial.tl.celcomen(adata) first"
        )
    names = list(map(str, adata.var_names))
    if genes is None:
        params = adata.uns.get(prefix, {}).get("params", {})
        fitted = params.get("genes") if isinstance(params, Mapping) else None
        genes = names if fitted is None else [str(g) for g in fitted]
    else:
        for gene in genes:
            if gene not in adata.var_names:
                raise UnknownLabelError("gene", gene, names, argument="genes")
    index = adata.var_names.get_indexer(list(genes))
    stored = adata.varp[key]
    if sp.issparse(stored):
        block = stored[index][:, index].toarray()
    else:
        block = np.asarray(stored)[np.ix_(index, index)]
    return block, list(genes)


def interaction_heatmap(
    adata: AnnData,
    which: str = "intra",
    *,
    key: str = _keys.UNS_KEY,
    genes: Sequence[str] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    r"""Heatmap of ``varp[f"{key}_{which}"]``, diverging (blue < 0 < red) over the off-diagonal.

    The colour scale is symmetric, :math:`\pm\max_{i \ne j} |W_{ij}|`: a fitted Celcomen
    matrix often has a diagonal ten times its off-diagonal (self-couplings), which would
    otherwise wash the gene-gene couplings out to white. The diagonal is drawn grey and hatched,
    off the scale, with its values printed for up to 12 genes and its range in the colour bar
    label.

    Args:
        adata: AnnData holding the matrix.
        which: ``"intra"`` (default) or ``"inter"``.
        key: Prefix of the matrix key (default ``"celcomen"``; ``"true"`` for a simulated truth).
        genes: Genes to show, in this order; None (default): the genes the fit used
            (``uns[key]['params']['genes']``), else all.
        ax: Axes to draw into; None creates a figure.
        title: Title; None uses the key.

    Returns:
        The Axes.
    """
    from matplotlib import colormaps
    from matplotlib.colors import Normalize
    from matplotlib.patches import Rectangle

    matrix, names = _varp(adata, _keys.matrix_key(key, which), key, genes)
    size = matrix.shape[0]
    diagonal = np.eye(size, dtype=bool)
    off = np.abs(matrix[~diagonal])
    limit = float(off.max()) if off.size else 0.0
    limit = limit if np.isfinite(limit) and limit > 0 else 1.0
    ax = _axes(ax)
    # Masked cells take the colour map's "bad" colour: the diagonal stays off the scale.
    cmap = colormaps["RdBu_r"].with_extremes(bad="0.85")
    image = ax.imshow(
        np.ma.masked_array(matrix, mask=diagonal),
        cmap=cmap,
        norm=Normalize(vmin=-limit, vmax=limit),
        interpolation="nearest",
    )
    values = np.diag(matrix)
    for i in range(size):
        ax.add_patch(
            Rectangle((i - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", lw=0, color="0.65")
        )
        if size <= 12:
            ax.text(i, i, f"{values[i]:.2g}", ha="center", va="center", fontsize=6)
    bar = ax.figure.colorbar(image, ax=ax, fraction=0.046)
    bar.set_label(
        f"off-diagonal coupling, scale ±{limit:.3g}\n"
        f"diagonal (grey, hatched): {values.min():.3g} to {values.max():.3g}",
        fontsize=7,
    )
    if size <= 30:
        ax.set_xticks(range(size), names, rotation=90, fontsize=6)
        ax.set_yticks(range(size), names, fontsize=6)
    ax.set_title(title or f"varp['{key}_{which}']")
    return ax


def recovery_scatter(
    adata: AnnData,
    which: str = "intra",
    *,
    key: str = _keys.UNS_KEY,
    truth_key: str = "true",
    ax: Axes | None = None,
) -> Axes:
    """Scatter of off-diagonal fitted vs true couplings, with their Spearman correlation.

    The correlation is undefined, and the title reads ``n/a``, when fewer than two couplings
    (two genes) are off the diagonal or either side is constant.

    Args:
        adata: AnnData with ``varp[f"{key}_{which}"]`` and ``varp[f"{truth_key}_{which}"]``.
        which: ``"intra"`` (default) or ``"inter"``.
        key: Prefix of the fitted matrix (default ``"celcomen"``).
        truth_key: Prefix of the true matrix (default ``"true"``).
        ax: Axes to draw into; None creates a figure.

    Returns:
        The Axes.
    """
    from scipy.stats import spearmanr

    fitted, names = _varp(adata, _keys.matrix_key(key, which), key)
    truth, _ = _varp(adata, _keys.matrix_key(truth_key, which), truth_key, names)
    upper = np.triu_indices(fitted.shape[0], 1)
    ax = _axes(ax)
    ax.scatter(truth[upper], fitted[upper], s=8, alpha=0.7)
    ax.axhline(0, color="0.7", lw=0.5)
    ax.axvline(0, color="0.7", lw=0.5)
    x, y = truth[upper], fitted[upper]
    defined = x.size > 1 and np.ptp(x) > 0 and np.ptp(y) > 0  # rho divides by both spreads
    rho = f"{spearmanr(x, y).statistic:.2f}" if defined else "n/a"
    ax.set_title(f"W_{which}: Spearman {rho} (off-diagonal)")
    ax.set_xlabel("true")
    ax.set_ylabel("fitted")
    return ax


def delta_map(
    adata: AnnData,
    gene: str,
    *,
    key: str = _keys.UNS_KEY,
    basis: str = _keys.SPATIAL_KEY,
    ax: Axes | None = None,
) -> Axes:
    r"""Spatial map of ``layers[f"{key}_delta"]`` for one gene; perturbed cells outlined.

    The title names the gene and the perturbation (``uns[key]['perturbation']``: the clamped
    genes and how many cells). The colour scale is symmetric around 0 and set by the cells
    outside the perturbed set, whose response is the point of the map: :math:`\pm` the
    largest :math:`|\Delta|` there, or, when that is more than twice the 98th percentile of
    the nonzero ones (:math:`|\Delta|` above 1e-3 of the largest), that percentile: a few cells
    would otherwise leave the rest white. Values beyond the scale saturate (the colour bar's
    arrows); its label states the rule.

    Args:
        adata: AnnData after :func:`spatial.tools.intervene`.
        gene: A name in ``var_names``.
        key: Prefix used by the tools (default ``"celcomen"``).
        basis: ``obsm`` key of the coordinates (default ``"spatial"``).
        ax: Axes to draw into; None creates a figure.

    Returns:
        The Axes.
    """
    layer = _keys.delta_layer(key)
    if layer not in adata.layers:
        raise KeyError(f"layers[{layer!r}]: not in adata; run spatial.tl.perturb(adata, ...) first")
    if gene not in adata.var_names:
        raise UnknownLabelError("gene", gene, list(adata.var_names), argument="gene")
    fitted = adata.uns.get(key, {}).get("params", {}).get("genes")
    if fitted is not None and gene not in set(map(str, fitted)):
        raise GraphDataError(
            f"gene: {gene!r} was not among the {len(fitted)} genes of the fit "
            f"(uns[{key!r}]['params']['genes']), so it has no counterfactual; pick one of them"
        )
    if basis not in adata.obsm:
        raise KeyError(f"obsm[{basis!r}]: no coordinates to draw the map on; pass basis=")
    coords = np.asarray(adata.obsm[basis])
    column = adata.layers[layer][:, adata.var_names.get_loc(gene)]
    values = np.asarray(column.toarray() if sp.issparse(column) else column, dtype=float).ravel()
    perturbed_key = _keys.perturbed_obs(key)
    mask = (
        np.asarray(adata.obs[perturbed_key], dtype=bool)
        if perturbed_key in adata.obs
        else np.zeros(adata.n_obs, dtype=bool)
    )
    limit, rule = _delta_scale(values, mask)
    ax = _axes(ax)
    points = ax.scatter(
        coords[:, 0],
        coords[:, 1],
        c=values,
        cmap="RdBu_r",
        vmin=-limit,
        vmax=limit,
        s=14,
        edgecolors="0.75",  # the tissue stays visible where the effect is ~0 (white)
        linewidths=0.3,
    )
    if mask.any():
        ax.scatter(
            coords[mask, 0],
            coords[mask, 1],
            facecolors="none",
            edgecolors="k",
            s=30,
            linewidths=0.8,
            label="perturbed",
        )
        ax.legend(loc="upper right", fontsize=6)
    extend = "both" if float(np.abs(values).max(initial=0.0)) > limit else "neither"
    bar = ax.figure.colorbar(points, ax=ax, fraction=0.046, extend=extend)
    bar.set_label(f"Δ {gene} (perturbed - sham)\nscale ±{limit:.2g}: {rule}", fontsize=7)
    ax.set_aspect("equal")
    ax.set_title(f"Δ {gene} {_perturbation_text(adata, key)}", fontsize=9)
    return ax


def _delta_scale(values: np.ndarray, perturbed: np.ndarray) -> tuple[float, str]:
    """The colour limit of a delta map and the sentence stating how it was chosen."""
    outside = ~perturbed if (~perturbed).any() else np.ones_like(perturbed)
    where = (
        "outside the perturbed cells"
        if perturbed.any() and (~perturbed).any()
        else "over all cells"
    )
    pool = np.abs(values[outside])
    pool = pool[np.isfinite(pool)]
    if pool.size == 0 or pool.max() == 0:
        peak = float(np.nanmax(np.abs(values), initial=0.0))
        return (peak or 1.0), "max |Δ|"
    # The percentile of the cells the perturbation reached (|Δ| above 1e-3 of the largest): far
    # cells are ~0, and a percentile over them all would saturate the whole response.
    peak = float(pool.max())
    robust = float(np.quantile(pool[pool > 1e-3 * peak], 0.98))
    if peak > 2 * robust:
        return robust, f"98th percentile of nonzero |Δ| {where}"
    return peak, f"max |Δ| {where}"


def _perturbation_text(adata: AnnData, key: str) -> str:
    """``"after FLG → 0 in 132 cells"`` from ``uns[key]["perturbation"]``, else a generic note."""
    record = adata.uns.get(key, {}).get("perturbation")
    if not record or "genes" not in record:
        return "(perturbed - sham)"
    genes = ", ".join(f"{name} → {float(value):g}" for name, value in record["genes"].items())
    return f"after {genes} in {int(record['n_cells'])} cells"


def ring_summary(
    adata: AnnData,
    genes: Sequence[str] | None = None,
    *,
    key: str = _keys.UNS_KEY,
    ax: Axes | None = None,
) -> Axes:
    """Mean delta per graph-distance ring (0 = perturbed, 1, 2, 3+) for a few genes.

    Args:
        adata: AnnData after :func:`spatial.tl.perturb`.
        genes: Genes to draw; None (default) takes the 5 unclamped genes with the largest
            ring-1 effect (a clamped gene's ring 0 is its clamp, whose scale would flatten
            every response; pass it by name to draw it).
        key: Prefix used by the tools (default ``"celcomen"``).
        ax: Axes to draw into; None creates a figure.

    Returns:
        The Axes, titled with the perturbation (clamped genes, number of cells).
    """
    record = adata.uns.get(key, {}).get("perturbation")
    if record is None:
        raise KeyError(f"uns[{key!r}]['perturbation']: missing; run spatial.tl.perturb first")
    ring_mean = np.asarray(record["ring_mean"])  # [4, G]
    names = list(map(str, adata.var_names))
    if genes is None:
        clamped = set(map(str, record.get("genes", {})))
        effect = np.abs(ring_mean[1])
        free = [i for i in np.argsort(-effect).tolist() if names[i] not in clamped]
        order: list[int] = free[:5]
    else:
        for gene in genes:
            if gene not in names:
                raise UnknownLabelError("gene", gene, names, argument="genes")
        order = [names.index(g) for g in genes]
    ax = _axes(ax)
    for column in order:
        ax.plot(range(4), ring_mean[:, column], marker="o", label=names[column])
    ax.axhline(0, color="0.7", lw=0.5)
    ax.set_xticks(range(4), ["0 (perturbed)", "1", "2", "3+"])
    ax.set_xlabel("graph distance to perturbed cells")
    ax.set_ylabel("mean delta")
    ax.set_title(f"mean Δ per ring {_perturbation_text(adata, key)}", fontsize=9)
    ax.legend(fontsize=6)
    return ax
