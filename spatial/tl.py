"""Celcomen in scanpy's shape: ``spatial.tl.celcomen(adata)``, ``spatial.tl.perturb(adata, ...)``.

As scanpy's tools (``scanpy.tl``; "Usage principles": tools operate in place and return None,
``copy=True`` returns a modified copy and leaves ``adata`` unchanged) and squidpy's: each
function writes under ``key_added``, so two fits can live in one AnnData. They hold no logic of
their own: :func:`celcomen` is :func:`spatial.tools.celcomen` and :func:`perturb` is
:func:`spatial.tools.intervene` (the tensor API is :class:`spatial.celcomen.Celcomen`), so the
keys written are those listed there. Plots of the results: :mod:`spatial.pl`.

Megas et al., "Celcomen: spatial causal disentanglement for single-cell and tissue perturbation
modeling", arXiv:2409.05804 (ICLR 2025).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from anndata import AnnData

from graphdata.errors import GraphDataError
from spatial import _inputs, _keys, tools

if TYPE_CHECKING:
    import torch

    from graphdata.tracking import Tracker
    from spatial.celcomen import CelcomenConfig

__all__ = ["celcomen", "perturb"]


def _target(adata: AnnData, copy: bool) -> AnnData:
    if not isinstance(adata, AnnData):
        raise GraphDataError(f"adata: expected an AnnData, got {type(adata).__name__}")
    if not isinstance(copy, bool):
        raise GraphDataError(f"copy: expected True or False, got {copy!r}")
    if copy and adata.isbacked:
        return adata.to_memory()  # a backed object copies only to a file: this is the copy
    return adata.copy() if copy else adata


def celcomen(
    adata: AnnData,
    *,
    spatial_key: str = _keys.SPATIAL_KEY,
    layer: str | None = None,
    library_key: str | None = None,
    allow_negative: bool = False,
    mask_var: Any = None,
    size_factors: Any = None,
    max_genes: int | None = _inputs.MAX_GENES,
    max_memory: float | None = None,
    config: CelcomenConfig | None = None,
    key_added: str = _keys.UNS_KEY,
    copy: bool = False,
    device: torch.device | str | None = None,
    tracker: Tracker | None = None,
    **params: Any,
) -> AnnData | None:
    r"""Fit Celcomen's intra- and intercellular gene-gene couplings (arXiv:2409.05804).

    Minimises the configured objective over the symmetric matrices of the energy

    .. math::
        E(X) = \sum_i x_i^\top W_{\mathrm{intra}} x_i
        + \sum_i \sum_{j \to i} w_{ij}\, x_i^\top W_{\mathrm{inter}} x_j

    (plus the linear fields, when the model has them: :mod:`spatial.model`), each cell's
    expression :math:`x_i` projected onto the unit sphere, :math:`w_{ij}` the degree-normalised
    weights of the spatial graph. This is :func:`spatial.tools.celcomen` on ``adata`` or, with
    ``copy=True``, on a copy.

    Args:
        adata: Expression in ``X`` or ``layers[layer]`` (non-negative unless
            ``allow_negative``), coordinates in ``obsm[spatial_key]`` or a graph in
            ``obsp[f"{spatial_key}_connectivities"]``.
        spatial_key: Coordinates key and graph prefix (default ``"spatial"``).
        layer: Expression layer; None (default) uses ``adata.X``.
        library_key: ``obs`` column of tissue sections, for a block-diagonal graph.
        allow_negative: Accept signed sphere coordinates (a simulated tissue). Default False.
        mask_var: The genes to fit, as scanpy's ``sc.pp.pca(mask_var=...)``: None (default)
            uses the boolean ``var['highly_variable']`` when present, else every gene; a
            ``var`` column name; a boolean array ``[n_vars]``; False: every gene.
        size_factors: Library sizes for raw counts: None (default) takes each cell's total
            over the genes ``mask_var`` leaves out, when there are such genes; an ``obs``
            column name or an array ``[n_obs]``; False: none (the couplings are then reported
            orthogonal to the library-size direction; :meth:`Celcomen.fit`).
        max_genes: Refuse a fit of more genes than this (default
            :data:`spatial._inputs.MAX_GENES`), with the memory it would need; None: no limit.
        max_memory: Refuse a fit whose estimated peak memory exceeds this many bytes; None
            (default): the fitting device's memory.
        config: Hyperparameters (default :class:`~spatial.celcomen.CelcomenConfig`;
            ``CelcomenConfig.reference()`` for the reference protocol).
        key_added: Prefix of every key written (default ``"celcomen"``).
        copy: Return a modified copy and leave ``adata`` unchanged (default False: write into
            ``adata`` and return None).
        device: Where to fit; None (default) on the CPU.
        tracker: Optional :mod:`graphdata.tracking` tracker for the loss per epoch.
        **params: Overrides of single config fields, e.g. ``epochs=100``.

    Returns:
        None, or the modified copy when ``copy=True``. Writes (see
        :func:`spatial.tools.store_fit`): ``varp[f"{key_added}_intra"]``,
        ``varp[f"{key_added}_inter"]`` (float32 ``[n_vars, n_vars]``; CSR over the fitted
        block when a gene subset was fitted), ``var[f"{key_added}_h_intra"]`` /
        ``_h_inter`` when fitted, ``uns[key_added]`` (``params`` with ``layer`` and ``genes``,
        ``losses``), and the graph keys of ``spatial_neighbors_knn`` if the graph was missing.

    Examples:
        >>> from spatial.simulate import simulate_tissue
        >>> adata = simulate_tissue(60, 3, steps=20, seed=0).to_anndata()
        >>> fitted = celcomen(adata, allow_negative=True, epochs=3, progress=False, copy=True)
        >>> fitted.varp["celcomen_inter"].shape, "celcomen_inter" in adata.varp
        ((3, 3), False)
    """
    target = _target(adata, copy)
    tools.celcomen(
        target,
        spatial_key=spatial_key,
        layer=layer,
        library_key=library_key,
        allow_negative=allow_negative,
        mask_var=mask_var,
        size_factors=size_factors,
        max_genes=max_genes,
        max_memory=max_memory,
        config=config,
        key_added=key_added,
        device=device,
        tracker=tracker,
        **params,
    )
    return target if copy else None


def perturb(
    adata: AnnData,
    genes: Mapping[str, float],
    cells: Any,
    *,
    layer: str | None = None,
    spatial_key: str | None = None,
    key_added: str = _keys.UNS_KEY,
    copy: bool = False,
    device: torch.device | str | None = None,
    progress: bool = True,
    **kwargs: Any,
) -> AnnData | None:
    r"""Clamp genes in some cells, solve the tissue with the fitted couplings, store the effect.

    The counterfactual of :func:`spatial.counterfactual.simulate_intervention`: the chosen
    coordinates are set to their values and held clamped, and :math:`\Delta` = perturbed minus
    a sham with the same coordinates clamped at their original values. By default
    (``method="mean_field"``) both are the clamped mean-field equilibrium, run to its
    tolerance (:func:`spatial.equilibrium.clamped_mean_field`); ``method="langevin"`` samples
    the equilibrium and ``method="gradient"`` runs a Riemannian gradient relaxation on the
    sphere of a chosen horizon. This is :func:`spatial.tools.intervene` on ``adata`` or, with
    ``copy=True``, on a copy, reading the fit stored under ``key_added``.

    Args:
        adata: AnnData after :func:`celcomen`.
        genes: ``{gene: value}`` in the units of the fitted layer, e.g. ``{"IFITM3": 0.0}``.
        cells: Boolean mask ``[n_obs]``, obs names or integer positions.
        layer: Expression layer; None (default): the one the fit used
            (``uns[key_added]['params']['layer']``). Another layer is refused: the couplings
            are in the fitted layer's units.
        spatial_key: Graph prefix; None (default): the fit's.
        key_added: Prefix of the fit, and of the keys written (default ``"celcomen"``).
        copy: Return a modified copy and leave ``adata`` unchanged (default False).
        device: Where to relax; None (default) on the CPU.
        progress: Progress bar on a terminal (default True).
        **kwargs: Options of the counterfactual, passed to :func:`spatial.tools.intervene`:
            ``method`` and that method's options (mean field: ``tolerance``, ``damping``,
            ``max_iterations``; gradient: ``steps``, ``step_size``, ``horizon``; langevin:
            ``steps``, ``step_size``, ``burn_in``, ``seed``); another method's options are
            refused.

    Returns:
        None, or the modified copy when ``copy=True``. Writes
        ``layers[f"{key_added}_counterfactual"]``, ``layers[f"{key_added}_delta"]``,
        ``obs[f"{key_added}_ring"]``, ``obs[f"{key_added}_perturbed"]`` and
        ``uns[key_added]['perturbation']`` (listed in :func:`spatial.tools.intervene`).

    Raises:
        KeyError: If no fit is stored under ``key_added``.
        GraphDataError: If ``layer`` differs from the fit's, or a gene was not fitted.
    """
    target = _target(adata, copy)
    params = tools.fit_params(target, _keys.check_key_added(key_added))
    if layer is None:
        layer = params.get("layer")
    if spatial_key is None:
        spatial_key = str(params.get("spatial_key", _keys.SPATIAL_KEY))
    tools.intervene(
        target,
        genes,
        cells,
        layer=layer,
        spatial_key=spatial_key,
        key_added=key_added,
        device=device,
        progress=progress,
        **kwargs,
    )
    return target if copy else None
