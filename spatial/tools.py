"""AnnData wrappers of Celcomen: fit, counterfactual, and the writers they share.

Thin layer over the tensor API (:class:`spatial.celcomen.Celcomen`,
:func:`spatial.counterfactual.simulate_intervention`): each function reads ``adata``, computes,
writes under the keys of :mod:`spatial._keys` and returns None (scanpy issue #2583). Every write
and its log line go through :func:`_save` (squidpy ``gr/_utils.py::_save_data``). The
scanpy-shaped faces with ``copy=`` are :func:`spatial.tl.celcomen` and :func:`spatial.tl.perturb`;
the functions here stay as they were (no deprecation), and those call them.

A fit over a subset of the genes (``estimator.var_names_`` shorter than ``var_names``) is stored
without a dense ``[n_vars, n_vars]`` matrix: ``varp`` holds a CSR matrix whose nonzero pattern is
the used block, and a counterfactual runs on the used genes only.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
import torch
from anndata import AnnData

from graphdata.errors import GraphDataError
from graphdata.spatial_anndata import spatial_neighbors_knn
from spatial import _inputs, _keys
from spatial.celcomen import Celcomen, CelcomenConfig
from spatial.counterfactual import Counterfactual

if TYPE_CHECKING:
    from graphdata.tracking import Tracker

__all__ = ["celcomen", "intervene", "store_fit", "store_counterfactual", "fit_params"]

logger = logging.getLogger(__name__)


def _save(adata: AnnData, slot: str, key: str, value: Any) -> None:
    """The one place that writes into ``adata``: ``getattr(adata, slot)[key] = value``, logged."""
    getattr(adata, slot)[key] = value
    shape = getattr(value, "shape", None)
    logger.info("added %s[%r]%s", slot, key, f" {tuple(shape)}" if shape is not None else "")


def _where(layer: str | None) -> str:
    return "adata.X" if layer is None else f"layers[{layer!r}]"


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
    device: torch.device | str | None = None,
    tracker: Tracker | None = None,
    **params: Any,
) -> None:
    """Fit Celcomen to ``adata`` and store the interaction matrices (arXiv:2409.05804).

    Builds ``obsp[f"{spatial_key}_connectivities"]`` first with
    :func:`graphdata.spatial_anndata.spatial_neighbors_knn` (``k = n_neighbors``, one block per
    ``library_key``) when it is missing; an existing graph is used as it is.

    Args:
        adata: Non-negative expression in ``X`` or ``layers[layer]``, coordinates in
            ``obsm[spatial_key]`` (or a graph in ``obsp``).
        spatial_key: Coordinates key and graph prefix (default ``"spatial"``).
        layer: Expression layer; None (default) uses ``adata.X``.
        library_key: ``obs`` column of tissue sections, for a block-diagonal graph.
        allow_negative: Accept signed values, for coordinates already on the sphere such as
            :meth:`spatial.simulate.SimulatedTissue.to_anndata` writes (default False).
        mask_var: The genes to fit, as scanpy's ``pca``: None (default) uses the boolean
            ``var['highly_variable']`` when present, else every gene; a ``var`` column name; a
            boolean array ``[n_vars]``; False: every gene (:meth:`Celcomen.fit`).
        size_factors: Library sizes for raw counts: None (default), the totals of the genes
            ``mask_var`` leaves out when there are any; an ``obs`` column or an array
            ``[n_obs]``; False: none (:meth:`Celcomen.fit`).
        max_genes: Refuse more genes than this, with the memory needed (default
            ``spatial._inputs.MAX_GENES``); None: no limit.
        max_memory: Refuse a fit whose estimated peak memory exceeds this many bytes; None
            (default): the fitting device's memory.
        config: Hyperparameters (default :class:`~spatial.celcomen.CelcomenConfig`).
        key_added: Prefix of the written keys (default ``"celcomen"``).
        device: Where to fit; None (default) fits on the CPU.
        tracker: Optional experiment tracker (:mod:`graphdata.tracking`: JSON lines,
            TensorBoard, MLflow) that receives the config once and the loss per epoch.
        **params: Overrides of single config fields, e.g. ``epochs=100``.

    Returns:
        None. Writes what :func:`store_fit` lists, and the graph keys of
        ``spatial_neighbors_knn`` if the graph was missing.

    Raises:
        KeyError: If neither ``obsm[spatial_key]`` nor the graph exists, or ``layer`` is missing.
        GraphDataError: On NaN, negative (unless ``allow_negative``) or, on the sphere route,
            all-zero expression (raw counts on the log-counts route may have empty cells), or
            a ``key_added`` that an ``.h5ad`` file cannot hold (empty, or with ``"/"``).
    """
    _keys.check_key_added(key_added)  # before the fit: a bad key would lose it at the write
    estimator = Celcomen(config, **params)
    if _keys.connectivities_key(spatial_key) in adata.obsp and "n_neighbors" in params:
        warnings.warn(
            f"n_neighbors={params['n_neighbors']} is not used: adata has the graph "
            f"obsp[{_keys.connectivities_key(spatial_key)!r}], which is used as it is; delete "
            "it first to build a k-NN graph with n_neighbors",
            UserWarning,
            stacklevel=3,
        )
    if _keys.connectivities_key(spatial_key) not in adata.obsp:
        _inputs.warn_expression_graph(
            adata, spatial_key, estimator.config.n_neighbors, stacklevel=3
        )
        _inputs.require_coordinates(adata, spatial_key)
        k = estimator.config.n_neighbors
        if k > adata.n_obs - 1:
            raise GraphDataError(
                f"n_neighbors: expected at most n_obs - 1 = {adata.n_obs - 1} (each cell's "
                f"neighbours are other cells), got {k} for {adata.n_obs} cells; "
                + (
                    f"pass n_neighbors={adata.n_obs - 1} or fewer"
                    if adata.n_obs > 1
                    else "a fit needs at least 2 cells"
                )
            )
        spatial_neighbors_knn(
            adata,
            estimator.config.n_neighbors,
            spatial_key=spatial_key,
            library_key=library_key,
            key_added=spatial_key,
        )
    estimator.fit(
        adata,
        spatial_key=spatial_key,
        layer=layer,
        device=device,
        allow_negative=allow_negative,
        mask_var=mask_var,
        size_factors=size_factors,
        max_genes=max_genes,
        max_memory=max_memory,
        tracker=tracker,
    )
    store_fit(
        adata,
        estimator,
        key_added=key_added,
        spatial_key=spatial_key,
        layer=layer,
        allow_negative=allow_negative,
    )


def _positions(adata: AnnData, genes: Sequence[str], what: str) -> np.ndarray:
    """Positions of ``genes`` in ``adata.var_names``; a clear error when some are missing."""
    index = adata.var_names.get_indexer(list(genes))
    if (index < 0).any():
        missing = [g for g, i in zip(genes, index, strict=True) if i < 0]
        raise GraphDataError(
            f"{what}: {len(missing)} of its {len(genes)} genes are not in adata.var_names "
            f"(first {missing[:5]}); use the AnnData it was fitted on, with its genes"
        )
    return index


def _used_genes(adata: AnnData, estimator: Celcomen) -> np.ndarray:
    """Positions in ``var_names`` of the genes the estimator was fitted on, in its order."""
    size = int(estimator.W_intra_.shape[0])
    names = getattr(estimator, "var_names_", None)
    positions = getattr(estimator, "genes_used_", None)
    if names is None and positions is not None and estimator.n_features_in_ == adata.n_vars:
        return np.asarray(positions, dtype=np.int64)  # a tensor fit with mask_var
    if names is None:
        if size != adata.n_vars:
            raise GraphDataError(
                f"estimator: fitted on {size} unnamed genes (tensor input), adata has "
                f"{adata.n_vars}; store it into an AnnData with those {size} genes, in order"
            )
        return np.arange(size)
    return _positions(adata, [str(n) for n in names], "estimator")


def _scatter_matrix(block: np.ndarray, used: np.ndarray, n_vars: int) -> Any:
    """``[n_vars, n_vars]``: dense if every gene is used, else CSR over the used block only."""
    block = block.astype(np.float32)
    if len(used) == n_vars:
        out = np.zeros((n_vars, n_vars), dtype=np.float32)
        out[np.ix_(used, used)] = block
        return out
    rows = np.repeat(used, len(used))  # [G_used^2], row-major over the block
    cols = np.tile(used, len(used))
    return sp.csr_matrix((block.ravel(), (rows, cols)), shape=(n_vars, n_vars))


def store_fit(
    adata: AnnData,
    estimator: Celcomen,
    *,
    key_added: str = _keys.UNS_KEY,
    spatial_key: str = _keys.SPATIAL_KEY,
    layer: str | None = None,
    allow_negative: bool = False,
) -> None:
    r"""Write a fitted estimator's matrices, fields and log into ``adata`` (as :func:`celcomen`).

    Args:
        adata: AnnData holding the genes the estimator was fitted on (``var_names_``; for a
            tensor fit, exactly ``n_vars`` genes in order).
        estimator: A fitted :class:`~spatial.celcomen.Celcomen`.
        key_added: Prefix of the written keys (default ``"celcomen"``).
        spatial_key: Recorded in ``uns[key_added]['params']``.
        layer: Recorded in ``uns[key_added]['params']`` (a counterfactual refuses another).
        allow_negative: Recorded in ``uns[key_added]['params']``.

    Returns:
        None. Writes:

        - ``varp[f"{key_added}_intra"]``: ``[n_vars, n_vars]`` symmetric intracellular
          couplings (zero trace); dense float32 when every gene was fitted, else a float32
          ``scipy.sparse.csr_matrix`` holding only the block of the fitted genes;
        - ``varp[f"{key_added}_inter"]``: the intercellular couplings, stored alike;
        - ``varp[f"{key_added}_intra_energy"]``, ``varp[f"{key_added}_inter_energy"]``: the
          fitted energy's own matrices (stored alike), when the reported ones differ from them
          (a fit with fields on non-negative data reports the part orthogonal to the mean
          direction; the intracellular one has zero trace); :func:`intervene` relaxes these;
        - ``var[f"{key_added}_h_intra"]``, ``var[f"{key_added}_h_inter"]``: float32 linear
          fields, when the estimator has ``h_intra_`` / ``h_inter_`` (0 for genes not fitted,
          as scanpy's ``pca`` writes loadings of masked genes);
        - ``var[f"{key_added}_gene_offset"]``: float32 gene means of :math:`\log(1 + c)`
          (``gene_offset_``) of a fit whose transform resolved to ``"log_counts"`` (raw
          counts), 0 for genes not fitted; :func:`intervene` reads it;
        - ``var[f"{key_added}_library_slope"]`` and ``obs[f"{key_added}_size_factor"]``:
          float32 :math:`\kappa` (0 for genes not fitted) and float64 size factors of a
          log-counts fit with size factors (``library_slope_``, ``size_factors_``);
          :func:`intervene` reads them;
        - ``uns[key_added]``: dict with ``params`` (the config, its ``transform`` as resolved on
          the data, plus ``spatial_key``, ``layer``, ``allow_negative``, ``genes``: the fitted
          gene names in the matrices' order, ``size_factors``: where they came from or None,
          and ``log_size_center``: :math:`\bar\ell` or None) and ``losses`` (float64 array,
          mean objective per epoch).
    """
    _keys.check_key_added(key_added)
    w_intra, w_inter = estimator.matrices()
    used = _used_genes(adata, estimator)
    model = estimator.model_
    for which, matrix, energy in (
        ("intra", w_intra, model.W_intra),
        ("inter", w_inter, model.W_inter),
    ):
        block = matrix.detach().cpu().numpy()
        block = 0.5 * (block + block.T)  # symmetric to the bit (projections round in float32)
        _save(
            adata,
            "varp",
            _keys.matrix_key(key_added, which),
            _scatter_matrix(block, used, adata.n_vars),
        )
        # The energy's own matrix when the reported one is only its identified part: a
        # counterfactual must relax the energy that was fitted, not another one.
        own = energy.detach().cpu().numpy()
        energy_key = _keys.energy_matrix_key(key_added, which)
        if not np.array_equal(own.astype(np.float32), block.astype(np.float32)):
            _save(adata, "varp", energy_key, _scatter_matrix(own, used, adata.n_vars))
        elif energy_key in adata.varp:
            del adata.varp[energy_key]  # a previous fit's, under the same key
        field = getattr(estimator, f"h_{which}_", None)
        if field is not None:
            column = np.zeros(adata.n_vars, dtype=np.float32)
            column[used] = np.asarray(torch.as_tensor(field).detach().cpu(), dtype=np.float32)
            _save(adata, "var", _keys.field_key(key_added, which), column)
    offset = estimator.gene_offset_
    offset_key = _keys.gene_offset_key(key_added)
    if offset is not None:
        column = np.zeros(adata.n_vars, dtype=np.float32)
        column[used] = np.asarray(torch.as_tensor(offset).detach().cpu(), dtype=np.float32)
        _save(adata, "var", offset_key, column)
    elif offset_key in adata.var:
        del adata.var[offset_key]  # a previous fit's, under the same key
    slope_key, size_key = _keys.library_slope_key(key_added), _keys.size_factor_obs(key_added)
    slope, sizes = estimator.library_slope_, estimator.size_factors_
    if slope is not None and sizes is not None:
        column = np.zeros(adata.n_vars, dtype=np.float32)
        column[used] = np.asarray(torch.as_tensor(slope).detach().cpu(), dtype=np.float32)
        _save(adata, "var", slope_key, column)
        _save(adata, "obs", size_key, np.asarray(sizes.detach().cpu(), dtype=np.float64))
    else:
        for frame, key in ((adata.var, slope_key), (adata.obs, size_key)):
            if key in frame:
                del frame[key]  # a previous fit's, under the same key
    params = {
        **asdict(estimator.config),
        "transform": estimator.transform_,
        "spatial_key": spatial_key,
        "layer": layer,
        "allow_negative": bool(allow_negative),
        "genes": [str(adata.var_names[i]) for i in used],
        "size_factors": estimator.size_factor_source_,
        "log_size_center": estimator.log_size_center_,
    }
    _save(
        adata,
        "uns",
        key_added,
        {"params": params, "losses": np.asarray(estimator.losses_, dtype=np.float64)},
    )


def fit_params(adata: AnnData, key_added: str = _keys.UNS_KEY) -> dict[str, Any]:
    """``uns[key_added]['params']`` of a stored fit; a KeyError that says what to run if absent.

    Args:
        adata: AnnData after :func:`celcomen` (or :func:`store_fit`).
        key_added: Prefix used by the fit (default ``"celcomen"``).

    Returns:
        The recorded parameters (a plain dict; empty for a fit stored before they were kept).
    """
    names = [_keys.matrix_key(key_added, w) for w in ("intra", "inter")]
    for name in names:
        if name not in adata.varp:
            raise KeyError(
                f"varp[{name!r}]: no fitted Celcomen matrices in adata.varp; run "
                f"spatial.tl.celcomen(adata, key_added={key_added!r}) first"
            )
    return dict(adata.uns.get(key_added, {}).get("params", {}))


def _stored_estimator(
    adata: AnnData, key_added: str, used: np.ndarray, device: torch.device | str | None
) -> Celcomen:
    """A fitted-state estimator from the stored matrices (and fields) over the used genes."""
    params = fit_params(adata, key_added)
    blocks = []
    for which in ("intra", "inter"):
        energy_key = _keys.energy_matrix_key(key_added, which)
        stored = adata.varp[
            energy_key if energy_key in adata.varp else _keys.matrix_key(key_added, which)
        ]
        block = (
            stored[used][:, used].toarray()
            if sp.issparse(stored)
            else np.asarray(stored)[np.ix_(used, used)]
        )
        blocks.append(torch.as_tensor(block, dtype=torch.float32, device=device))
    w_intra, w_inter = blocks
    offset = None
    if params.get("transform") == "log_counts":
        offset_key = _keys.gene_offset_key(key_added)
        if offset_key not in adata.var:
            raise KeyError(
                f"var[{offset_key!r}]: the gene means of the transform='log_counts' fit are "
                f"missing; rerun spatial.tl.celcomen(adata, key_added={key_added!r})"
            )
        offset = torch.as_tensor(
            np.asarray(adata.var[offset_key], dtype=np.float32)[used], device=w_intra.device
        )
    estimator = Celcomen.from_matrices(
        w_intra, w_inter, normalization=params.get("normalization", "gcn"), gene_offset=offset
    )
    slope_key = _keys.library_slope_key(key_added)
    if params.get("log_size_center") is not None and slope_key in adata.var:
        estimator.library_slope_ = torch.as_tensor(
            np.asarray(adata.var[slope_key], dtype=np.float32)[used], device=w_intra.device
        )
        estimator.log_size_center_ = float(params["log_size_center"])
        estimator.size_factor_source_ = params.get("size_factors")
    # The stored genes, so that Celcomen.intervene takes these columns of adata, in this order.
    estimator.var_names_ = [str(adata.var_names[i]) for i in used]
    columns = [_keys.field_key(key_added, w) for w in ("intra", "inter")]
    if all(c in adata.var for c in columns):
        h_intra, h_inter = (
            torch.as_tensor(np.asarray(adata.var[c], dtype=np.float32)[used], device=w_intra.device)
            for c in columns
        )
        estimator.model_.set_fields(h_intra, h_inter)
    return estimator


def intervene(
    adata: AnnData,
    genes: Mapping[str, float],
    cells: Any,
    *,
    spatial_key: str = _keys.SPATIAL_KEY,
    layer: str | None = None,
    allow_negative: bool | None = None,
    key_added: str = _keys.UNS_KEY,
    device: torch.device | str | None = None,
    progress: bool = True,
    **options: Any,
) -> None:
    """Clamp ``genes`` in ``cells``, relax with the stored fit, store the effect vs a sham.

    Needs :func:`celcomen` to have run. It relaxes the stored energy on the stored graph:
    ``varp[f"{key_added}_intra_energy"]`` and ``_inter_energy`` where written, else
    ``varp[f"{key_added}_intra"]`` and ``_inter``, plus the fields
    ``var[f"{key_added}_h_intra"]`` / ``_h_inter`` if stored, so it reproduces the fitted
    estimator's own counterfactual. It runs over the genes the fit used
    (``uns[key_added]['params']['genes']``); see :meth:`spatial.celcomen.Celcomen.intervene`
    and :func:`spatial.counterfactual.simulate_intervention`.

    Args:
        adata: The fitted AnnData.
        genes: ``{gene: value}`` in the units of the expression, e.g. ``{'IFITM3': 0.0}``; the
            genes must be among those fitted.
        cells: Boolean mask ``[n_obs]``, obs names or integer positions of perturbed cells.
        spatial_key: Graph prefix (default ``"spatial"``).
        layer: Expression layer; None (default) uses ``adata.X``. It must be the layer the fit
            used (``uns[key_added]['params']['layer']``): the couplings are in its units.
        allow_negative: Accept signed values; None (default) does as the fit did.
        key_added: Prefix used by :func:`celcomen` (default ``"celcomen"``).
        device: Where to relax; None (default) on the CPU.
        progress: Show a tqdm bar when stderr is a terminal; False: never. Default True.
        **options: Options of the counterfactual, passed to
            :meth:`spatial.celcomen.Celcomen.intervene` as given (its defaults otherwise):
            ``method`` (``"mean_field"``: the clamped mean-field equilibrium, ``"langevin"``:
            sampled, or ``"gradient"``), ``tolerance``, ``damping``, ``max_iterations``,
            ``steps``, ``step_size``, ``horizon``, ``burn_in``, ``seed``. ``"langevin"`` also
            writes ``layers[f"{key_added}_delta_stderr"]`` and
            ``uns[key_added]['perturbation']['ring_stderr']`` (Monte Carlo standard errors).

    Returns:
        None. Writes (values on the unit-sphere scale of the model):

        - ``layers[f"{key_added}_counterfactual"]``: float32 ``[n_obs, n_vars]``, the
          perturbed tissue (a CSR matrix over the fitted genes' columns when the fit used a
          subset of the genes);
        - ``layers[f"{key_added}_delta"]``: float32, perturbed minus sham (same storage);
        - ``obs[f"{key_added}_ring"]``: int, graph distance to the perturbed cells (0, 1, 2,
          3 = 3 or more / unreachable);
        - ``obs[f"{key_added}_perturbed"]``: bool, the perturbed cells;
        - ``uns[key_added]['perturbation']``: dict with ``genes`` (name -> value), ``n_cells``,
          ``layer``, ``step_size`` (None for the mean field), the result's ``protocol``
          (``method`` and what it ran at: iterations, residual, tolerance, converged, or
          steps, step size, horizon), ``ring_mean`` (float64 ``[4, n_vars]``, mean delta per
          ring, 0 for genes not fitted) and ``ring_size`` (int64 ``[4]``).

    Raises:
        KeyError: If the matrices are missing (run :func:`celcomen` first).
        GraphDataError: If ``layer`` is not the fit's layer, a gene was not fitted, or
            ``key_added`` is empty or holds ``"/"``.
        UnknownLabelError: For genes not in ``var_names`` or unknown cells (close names listed).
    """
    params = fit_params(adata, _keys.check_key_added(key_added))
    if "layer" in params and layer != params["layer"]:
        fitted = params["layer"]
        raise GraphDataError(
            f"layer: the fit used {_where(fitted)} (uns[{key_added!r}]['params']['layer']), got "
            f"{_where(layer)}; pass layer={fitted!r}: the couplings are in the units of the "
            f"fitted layer (or refit on {_where(layer)})"
        )
    fitted_genes = params.get("genes")
    used = (
        np.arange(adata.n_vars)
        if fitted_genes is None
        else _positions(adata, [str(g) for g in fitted_genes], f"uns[{key_added!r}]['params']")
    )
    if allow_negative is None:
        allow_negative = bool(params.get("allow_negative", False))
    estimator = _stored_estimator(adata, key_added, used, device)
    size_key = _keys.size_factor_obs(key_added)
    sizes = (
        np.asarray(adata.obs[size_key], dtype=np.float64)
        if estimator.library_slope_ is not None and size_key in adata.obs
        else None
    )
    result = estimator.intervene(
        adata,
        genes,
        cells,
        spatial_key=spatial_key,
        layer=layer,
        allow_negative=allow_negative,
        size_factors=sizes,
        progress=progress,
        **options,
    )
    record = {
        **dict(getattr(result, "protocol", {})),
        "genes": {str(k): float(v) for k, v in genes.items()},
        "layer": layer,
        "step_size": result.step_size,
    }
    store_counterfactual(adata, result, key_added=key_added, record=record, genes=used)


def _expand(values: np.ndarray, used: np.ndarray, n_vars: int) -> Any:
    """``[N, n_vars]`` float32 from the used columns: dense for all genes, else CSR."""
    values = values.astype(np.float32)
    if len(used) == n_vars:
        out = np.zeros((values.shape[0], n_vars), dtype=np.float32)
        out[:, used] = values
        return out
    # CSR wants sorted column indices per row: sort the used columns once.
    order = np.argsort(used)
    n = values.shape[0]
    indptr = np.arange(0, n * len(used) + 1, len(used))
    indices = np.tile(used[order], n)
    return sp.csr_matrix((values[:, order].ravel(), indices, indptr), shape=(n, n_vars))


def store_counterfactual(
    adata: AnnData,
    result: Counterfactual,
    *,
    key_added: str = _keys.UNS_KEY,
    record: Mapping[str, Any] | None = None,
    genes: np.ndarray | None = None,
) -> None:
    """Write a :class:`~spatial.counterfactual.Counterfactual` into ``adata`` as :func:`intervene`.

    Args:
        adata: AnnData with the counterfactual's cells (and genes, unless ``genes`` is given).
        result: The counterfactual.
        key_added: Prefix of the written keys (default ``"celcomen"``).
        record: Extra entries for ``uns[key_added]['perturbation']`` (genes, steps, ...).
        genes: Positions in ``var_names`` of the counterfactual's columns; None (default):
            all genes, in order.
    """

    def host(t: torch.Tensor) -> np.ndarray:
        return t.detach().cpu().numpy()

    _keys.check_key_added(key_added)
    used = np.arange(adata.n_vars) if genes is None else np.asarray(genes)
    if result.delta.shape[1] != len(used):
        raise GraphDataError(
            f"result: expected a counterfactual over {len(used)} genes, got "
            f"{result.delta.shape[1]}; pass genes= (the positions of its columns in var_names)"
        )
    n_vars = adata.n_vars
    _save(
        adata,
        "layers",
        _keys.counterfactual_layer(key_added),
        _expand(host(result.perturbed), used, n_vars),
    )
    _save(adata, "layers", _keys.delta_layer(key_added), _expand(host(result.delta), used, n_vars))
    if result.stderr is not None:  # method="langevin": Monte Carlo error of the delta
        _save(
            adata,
            "layers",
            _keys.delta_stderr_layer(key_added),
            _expand(host(result.stderr), used, n_vars),
        )
    _save(adata, "obs", _keys.ring_obs(key_added), host(result.ring).astype(np.int64))
    perturbed = host(result.clamped.any(-1))
    _save(adata, "obs", _keys.perturbed_obs(key_added), perturbed)
    ring_mean = np.zeros((host(result.ring_mean).shape[0], n_vars), dtype=np.float64)
    ring_mean[:, used] = host(result.ring_mean)
    uns = dict(adata.uns.get(key_added, {}))
    uns["perturbation"] = {
        **dict(record or {}),
        "n_cells": int(perturbed.sum()),
        "ring_mean": ring_mean,
        "ring_size": host(result.ring_size).astype(np.int64),
    }
    if result.ring_stderr is not None:
        ring_stderr = np.zeros_like(ring_mean)
        ring_stderr[:, used] = host(result.ring_stderr)
        uns["perturbation"]["ring_stderr"] = ring_stderr
    _save(adata, "uns", key_added, uns)
