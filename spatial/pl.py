"""Plots of Celcomen results in scanpy's shape: ``spatial.pl.couplings(adata)`` and friends.

As scanpy's plotting functions (``scanpy.pl``; "Usage principles": with ``show=False`` the Axes
is returned for further drawing) they take ``ax=``, ``show=`` and ``save=``. Each draws with the
matching function of :mod:`spatial.plot` (no second copy of a figure), from the keys that
:func:`spatial.tl.celcomen` and :func:`spatial.tl.perturb` wrote under the prefix ``key``.

``show`` and ``save`` (every function):

* ``save``: a file path; the figure holding the Axes is written there atomically (a temporary
  file in the same folder, renamed onto the path: :func:`graphdata.atomic.atomic_path`), in the
  format of its suffix (``.png``, ``.pdf``, ``.svg``; matplotlib's ``savefig``). Unlike scanpy,
  the path is used as given (no ``figures/`` folder, no prefix).
  A figure the function made itself is then closed in pyplot unless it is shown (scanpy
  closes it too), so saving in a loop holds no open figures; the Axes returned still works.
* ``show``: True calls :func:`matplotlib.pyplot.show` and returns None; False returns the Axes;
  None (default) shows only when the function made the figure itself (no ``ax``) and nothing
  was saved, else returns the Axes (scanpy reads its ``settings.autoshow`` instead; a library
  without settings takes the caller's intent from ``ax`` and ``save``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from graphdata.atomic import atomic_path
from graphdata.errors import GraphDataError
from spatial import _keys, plot

if TYPE_CHECKING:
    from anndata import AnnData
    from matplotlib.axes import Axes

__all__ = ["couplings", "perturbation", "recovery", "rings"]

#: Resolution of saved raster figures (scanpy's ``dpi_save`` default).
SAVE_DPI = 150


def _check_options(show: object, save: object) -> None:
    if show is not None and not isinstance(show, bool):
        raise GraphDataError(f"show: expected True, False or None, got {show!r}")
    if save is not None and not isinstance(save, (str, os.PathLike)):
        raise GraphDataError(
            f"save: expected a file path (str or Path), got {type(save).__name__}; pass e.g. "
            "save='couplings.png'"
        )
    if save is not None:
        # Checked before drawing: savefig would refuse the suffix only after the figure exists.
        from matplotlib.backend_bases import FigureCanvasBase

        formats = FigureCanvasBase.get_supported_filetypes()
        suffix = Path(os.fspath(save)).suffix.lower().lstrip(".")
        if suffix not in formats:
            known = ", ".join(sorted(formats))
            raise GraphDataError(
                f"save: expected a file name ending in a figure format ({known}), got "
                f"{os.fspath(save)!r}; pass e.g. save='couplings.png'"
            )


def _finish(
    ax: Axes, *, made_here: bool, show: bool | None, save: str | os.PathLike[str] | None
) -> Axes | None:
    """Save (atomically) and show as the module docstring says; the Axes unless shown."""
    import matplotlib.pyplot as plt

    if show is None:
        show = made_here and save is None
    if save is not None:
        figure = ax.figure.get_figure(root=True)
        assert figure is not None
        try:
            with atomic_path(Path(save)) as tmp:  # keeps the suffix: savefig infers the format
                figure.savefig(tmp, dpi=SAVE_DPI, bbox_inches="tight")
        finally:
            if made_here and not show:
                # Saved and not shown: pyplot lets go of the figure (as scanpy closes it), so a
                # loop of saves holds no figures; the Axes returned still draws and saves.
                plt.close(figure)
    if show:
        plt.show()
        return None
    return ax


def couplings(
    adata: AnnData,
    which: str = "intra",
    *,
    key: str = _keys.UNS_KEY,
    genes: Sequence[str] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    show: bool | None = None,
    save: str | os.PathLike[str] | None = None,
) -> Axes | None:
    r"""Heatmap of the fitted couplings ``varp[f"{key}_{which}"]`` (Celcomen, arXiv:2409.05804).

    The colour scale is :math:`\pm\max_{i \ne j} |W_{ij}|` over the off-diagonal, the diagonal
    drawn grey and hatched off the scale (:func:`spatial.plot.interaction_heatmap`): the
    self-couplings of a fitted matrix are often ten times the gene-gene ones.

    Args:
        adata: AnnData after :func:`spatial.tl.celcomen`.
        which: ``"intra"`` (default) or ``"inter"``.
        key: The fit's ``key_added`` (default ``"celcomen"``; ``"true"`` for a simulated truth).
        genes: Genes to show; None (default): the genes of the fit.
        ax: Axes to draw into; None makes a figure.
        title: Title; None names the key.
        show: Show the figure (see the module docstring); default None.
        save: File to write the figure to, atomically; default None.

    Returns:
        The Axes, or None when shown.
    """
    _check_options(show, save)
    drawn = plot.interaction_heatmap(adata, which, key=key, genes=genes, ax=ax, title=title)
    return _finish(drawn, made_here=ax is None, show=show, save=save)


def _strongest_responder(adata: AnnData, key: str) -> str:
    """The unclamped gene with the largest mean ``|delta|`` one graph step from the clamp."""
    record = adata.uns.get(key, {}).get("perturbation")
    if record is None:
        raise KeyError(
            f"uns[{key!r}]['perturbation']: missing; run spatial.tl.perturb(adata, ...) first"
        )
    ring1 = np.abs(np.asarray(record["ring_mean"], dtype=float)[1])  # [n_vars]
    clamped = set(map(str, record.get("genes", {})))
    names = list(map(str, adata.var_names))
    free = np.array([name not in clamped for name in names])
    if free.any():
        ring1 = np.where(free, ring1, -1.0)
    return names[int(np.argmax(ring1))]


def perturbation(
    adata: AnnData,
    gene: str | None = None,
    *,
    key: str = _keys.UNS_KEY,
    basis: str = _keys.SPATIAL_KEY,
    ax: Axes | None = None,
    show: bool | None = None,
    save: str | os.PathLike[str] | None = None,
) -> Axes | None:
    r"""Spatial map of a counterfactual's effect :math:`\Delta` (perturbed - sham) on one gene.

    The map of :func:`spatial.plot.delta_map`: titled with the gene and the perturbation (the
    clamped genes and values, the number of cells), perturbed cells outlined, a symmetric colour
    scale set by the cells outside the perturbed set (its rule in the colour bar's label).

    Args:
        adata: AnnData after :func:`spatial.tl.perturb`.
        gene: Gene to map; None (default): the unclamped gene with the largest mean
            :math:`|\Delta|` in ring 1 (the perturbed cells' graph neighbours).
        key: The ``key_added`` of the fit and perturbation (default ``"celcomen"``).
        basis: ``obsm`` key of the coordinates (default ``"spatial"``).
        ax: Axes to draw into; None makes a figure.
        show: Show the figure (see the module docstring); default None.
        save: File to write the figure to, atomically; default None.

    Returns:
        The Axes, or None when shown.
    """
    _check_options(show, save)
    if gene is None:
        gene = _strongest_responder(adata, key)
    drawn = plot.delta_map(adata, gene, key=key, basis=basis, ax=ax)
    return _finish(drawn, made_here=ax is None, show=show, save=save)


def rings(
    adata: AnnData,
    genes: Sequence[str] | None = None,
    *,
    key: str = _keys.UNS_KEY,
    ax: Axes | None = None,
    show: bool | None = None,
    save: str | os.PathLike[str] | None = None,
) -> Axes | None:
    """Mean effect per graph-distance ring (0 = perturbed, 1, 2, 3+) for a few genes.

    The lines of :func:`spatial.plot.ring_summary`, from ``uns[key]['perturbation']``.

    Args:
        adata: AnnData after :func:`spatial.tl.perturb`.
        genes: Genes to draw; None (default): the 5 with the largest ring-1 effect.
        key: The ``key_added`` of the perturbation (default ``"celcomen"``).
        ax: Axes to draw into; None makes a figure.
        show: Show the figure (see the module docstring); default None.
        save: File to write the figure to, atomically; default None.

    Returns:
        The Axes, or None when shown.
    """
    _check_options(show, save)
    drawn = plot.ring_summary(adata, genes, key=key, ax=ax)
    return _finish(drawn, made_here=ax is None, show=show, save=save)


def recovery(
    adata: AnnData,
    which: str = "intra",
    *,
    key: str = _keys.UNS_KEY,
    truth_key: str = "true",
    ax: Axes | None = None,
    show: bool | None = None,
    save: str | os.PathLike[str] | None = None,
) -> Axes | None:
    """Off-diagonal fitted against true couplings, with their Spearman correlation.

    The scatter of :func:`spatial.plot.recovery_scatter`, for a tissue with a known truth
    (``varp['true_intra']`` / ``['true_inter']`` of a simulated tissue).

    Args:
        adata: AnnData with the fit under ``key`` and the truth under ``truth_key``.
        which: ``"intra"`` (default) or ``"inter"``.
        key: The fit's ``key_added`` (default ``"celcomen"``).
        truth_key: Prefix of the true matrices (default ``"true"``).
        ax: Axes to draw into; None makes a figure.
        show: Show the figure (see the module docstring); default None.
        save: File to write the figure to, atomically; default None.

    Returns:
        The Axes, or None when shown.
    """
    _check_options(show, save)
    drawn = plot.recovery_scatter(adata, which, key=key, truth_key=truth_key, ax=ax)
    return _finish(drawn, made_here=ax is None, show=show, save=save)
