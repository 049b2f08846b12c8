"""Plots of stored Celcomen results: each function reads ``adata``, draws one thing, returns Axes.

They read what :func:`spatial.tools.celcomen` and :func:`spatial.tools.intervene` wrote (keys
in :mod:`spatial._keys`); none of them computes a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from graphdata.errors import UnknownLabelError
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


def _varp(adata: AnnData, key: str) -> np.ndarray:
    if key not in adata.varp:
        raise KeyError(
            f"varp[{key!r}]: not in adata.varp (available: {sorted(adata.varp.keys())}); run "
            "spatial.celcomen(adata) first"
        )
    return np.asarray(adata.varp[key])


def interaction_heatmap(
    adata: AnnData,
    which: str = "intra",
    *,
    key: str = _keys.UNS_KEY,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Heatmap of ``varp[f"{key}_{which}"]`` on a symmetric diverging scale (blue < 0 < red).

    Args:
        adata: AnnData holding the matrix.
        which: ``"intra"`` (default) or ``"inter"``.
        key: Prefix of the matrix key (default ``"celcomen"``; ``"true"`` for a simulated truth).
        ax: Axes to draw into; None creates a figure.
        title: Title; None uses the key.

    Returns:
        The Axes.
    """
    matrix = _varp(adata, f"{key}_{which}")
    ax = _axes(ax)
    limit = float(np.abs(matrix).max()) or 1.0
    image = ax.imshow(matrix, cmap="RdBu_r", vmin=-limit, vmax=limit)
    ax.figure.colorbar(image, ax=ax, fraction=0.046)
    if adata.n_vars <= 30:
        ax.set_xticks(range(adata.n_vars), list(adata.var_names), rotation=90, fontsize=6)
        ax.set_yticks(range(adata.n_vars), list(adata.var_names), fontsize=6)
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

    fitted, truth = _varp(adata, f"{key}_{which}"), _varp(adata, f"{truth_key}_{which}")
    upper = np.triu_indices(fitted.shape[0], 1)
    ax = _axes(ax)
    ax.scatter(truth[upper], fitted[upper], s=8, alpha=0.7)
    ax.axhline(0, color="0.7", lw=0.5)
    ax.axvline(0, color="0.7", lw=0.5)
    rho = spearmanr(truth[upper], fitted[upper]).statistic
    ax.set_title(f"W_{which}: Spearman {rho:.2f} (off-diagonal)")
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
    """Spatial map of ``layers[f"{key}_delta"]`` for one gene; perturbed cells outlined.

    Args:
        adata: AnnData after :func:`spatial.tools.intervene`.
        gene: A name in ``var_names``.
        key: Prefix used by the tools (default ``"celcomen"``).
        basis: ``obsm`` key of the coordinates (default ``"spatial"``).
        ax: Axes to draw into; None creates a figure.

    Returns:
        The Axes.
    """
    layer = f"{key}_delta"
    if layer not in adata.layers:
        raise KeyError(f"layers[{layer!r}]: not in adata; run spatial.intervene(adata, ...) first")
    if gene not in adata.var_names:
        raise UnknownLabelError("gene", gene, list(adata.var_names), argument="gene")
    coords = np.asarray(adata.obsm[basis])
    values = np.asarray(adata.layers[layer][:, adata.var_names.get_loc(gene)]).ravel()
    ax = _axes(ax)
    limit = float(np.abs(values).max()) or 1.0
    points = ax.scatter(
        coords[:, 0], coords[:, 1], c=values, cmap="RdBu_r", vmin=-limit, vmax=limit, s=14
    )
    perturbed_key = f"{key}_perturbed"
    if perturbed_key in adata.obs:
        mask = np.asarray(adata.obs[perturbed_key], dtype=bool)
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
    ax.figure.colorbar(points, ax=ax, fraction=0.046)
    ax.set_aspect("equal")
    ax.set_title(f"delta {gene} (perturbed - sham)")
    return ax


def ring_summary(
    adata: AnnData,
    genes: Sequence[str] | None = None,
    *,
    key: str = _keys.UNS_KEY,
    ax: Axes | None = None,
) -> Axes:
    """Mean delta per graph-distance ring (0 = perturbed, 1, 2, 3+) for a few genes.

    Args:
        adata: AnnData after :func:`spatial.tools.intervene`.
        genes: Genes to draw; None (default) takes the 5 with the largest ring-1 effect.
        key: Prefix used by the tools (default ``"celcomen"``).
        ax: Axes to draw into; None creates a figure.

    Returns:
        The Axes.
    """
    record = adata.uns.get(key, {}).get("perturbation")
    if record is None:
        raise KeyError(f"uns[{key!r}]['perturbation']: missing; run spatial.intervene first")
    ring_mean = np.asarray(record["ring_mean"])  # [4, G]
    names = list(adata.var_names)
    if genes is None:
        order: list[int] = np.argsort(-np.abs(ring_mean[1]))[:5].tolist()
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
    ax.legend(fontsize=6)
    return ax
