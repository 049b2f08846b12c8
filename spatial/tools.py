"""Scanpy-style AnnData wrappers: fit Celcomen, run a counterfactual, write the results.

Thin layer over the tensor API (:class:`spatial.celcomen.Celcomen`,
:func:`spatial.counterfactual.simulate_intervention`): each function reads ``adata``, computes,
writes under the keys of :mod:`spatial._keys` and returns None (scanpy issue #2583). Every write
and its log line go through :func:`_save` (squidpy ``gr/_utils.py::_save_data``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from anndata import AnnData

from graphdata.spatial_anndata import spatial_neighbors_knn
from spatial import _inputs, _keys
from spatial.celcomen import Celcomen, CelcomenConfig
from spatial.counterfactual import Counterfactual

if TYPE_CHECKING:
    from graphdata.tracking import Tracker

__all__ = ["celcomen", "intervene", "store_fit", "store_counterfactual"]

logger = logging.getLogger(__name__)


def _save(adata: AnnData, slot: str, key: str, value: Any) -> None:
    """The one place that writes into ``adata``: ``getattr(adata, slot)[key] = value``, logged."""
    getattr(adata, slot)[key] = value
    shape = getattr(value, "shape", None)
    logger.info("added %s[%r]%s", slot, key, f" {tuple(shape)}" if shape is not None else "")


def celcomen(
    adata: AnnData,
    *,
    spatial_key: str = _keys.SPATIAL_KEY,
    layer: str | None = None,
    library_key: str | None = None,
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
        config: Hyperparameters (default :class:`~spatial.celcomen.CelcomenConfig`).
        key_added: Prefix of the written keys (default ``"celcomen"``).
        device: Where to fit; None (default) fits on the CPU.
        tracker: Optional experiment tracker (:mod:`graphdata.tracking`: JSON lines,
            TensorBoard, MLflow) that receives the config once and the loss per epoch.
        **params: Overrides of single config fields, e.g. ``epochs=100``.

    Returns:
        None. Writes:

        - ``varp[f"{key_added}_intra"]``: float32 ``[n_vars, n_vars]``, the symmetric
          intracellular couplings (zero trace) over ``var_names``;
        - ``varp[f"{key_added}_inter"]``: float32 ``[n_vars, n_vars]``, the symmetric
          intercellular couplings;
        - ``uns[key_added]``: dict with ``params`` (the config plus ``spatial_key``, ``layer``)
          and ``losses`` (float64 array, mean objective per epoch);
        - the graph keys of ``spatial_neighbors_knn`` if the graph was missing.

    Raises:
        KeyError: If neither ``obsm[spatial_key]`` nor the graph exists, or ``layer`` is missing.
        GraphDataError: On NaN, negative or all-zero expression.
    """
    estimator = Celcomen(config, **params)
    if _keys.connectivities_key(spatial_key) not in adata.obsp:
        _inputs.require_coordinates(adata, spatial_key)
        spatial_neighbors_knn(
            adata,
            estimator.config.n_neighbors,
            spatial_key=spatial_key,
            library_key=library_key,
            key_added=spatial_key,
        )
    estimator.fit(adata, spatial_key=spatial_key, layer=layer, device=device, tracker=tracker)
    store_fit(adata, estimator, key_added=key_added, spatial_key=spatial_key, layer=layer)


def store_fit(
    adata: AnnData,
    estimator: Celcomen,
    *,
    key_added: str = _keys.UNS_KEY,
    spatial_key: str = _keys.SPATIAL_KEY,
    layer: str | None = None,
) -> None:
    """Write a fitted estimator's matrices and log into ``adata`` (as :func:`celcomen` does).

    Args:
        adata: AnnData whose ``n_vars`` matches the estimator's genes.
        estimator: A fitted :class:`~spatial.celcomen.Celcomen`.
        key_added: Prefix of the written keys (default ``"celcomen"``).
        spatial_key: Recorded in ``uns[key_added]['params']``.
        layer: Recorded in ``uns[key_added]['params']``.
    """
    w_intra, w_inter = estimator.matrices()
    _save(adata, "varp", f"{key_added}_intra", w_intra.detach().cpu().numpy().astype(np.float32))
    _save(adata, "varp", f"{key_added}_inter", w_inter.detach().cpu().numpy().astype(np.float32))
    params = {**asdict(estimator.config), "spatial_key": spatial_key, "layer": layer}
    _save(
        adata,
        "uns",
        key_added,
        {"params": params, "losses": np.asarray(estimator.losses_, dtype=np.float64)},
    )


def intervene(
    adata: AnnData,
    genes: Mapping[str, float],
    cells: Any,
    *,
    steps: int = 50,
    step_size: float | None = None,
    horizon: float = 4.0,
    spatial_key: str = _keys.SPATIAL_KEY,
    layer: str | None = None,
    key_added: str = _keys.UNS_KEY,
    device: torch.device | str | None = None,
    progress: bool = True,
) -> None:
    """Clamp ``genes`` in ``cells``, relax with the stored matrices, store the effect vs a sham.

    Needs :func:`celcomen` to have run (it reads ``varp[f"{key_added}_intra"]`` and
    ``_inter`` and the graph). See :func:`spatial.counterfactual.simulate_intervention`.

    Args:
        adata: The fitted AnnData.
        genes: ``{gene: value}`` in the units of the expression, e.g. ``{'IFITM3': 0.0}``.
        cells: Boolean mask ``[n_obs]``, obs names or integer positions of perturbed cells.
        steps: Relaxation steps (default 50).
        step_size: Riemannian step size; None (default) lasts ``horizon`` model time units
            (:func:`spatial.counterfactual.auto_step_size`).
        horizon: Relaxation time in model time units when ``step_size`` is None (default 4).
        spatial_key: Graph prefix (default ``"spatial"``).
        layer: Expression layer; None (default) uses ``adata.X``.
        key_added: Prefix used by :func:`celcomen` (default ``"celcomen"``).
        device: Where to relax; None (default) on the CPU.
        progress: Show a tqdm bar over the relaxation steps when stderr is a terminal;
            False: never. Default True.

    Returns:
        None. Writes (values on the unit-sphere scale of the model):

        - ``layers[f"{key_added}_counterfactual"]``: float32 ``[n_obs, n_vars]``, the relaxed
          perturbed tissue;
        - ``layers[f"{key_added}_delta"]``: float32, perturbed minus sham relaxation;
        - ``obs[f"{key_added}_ring"]``: int, graph distance to the perturbed cells (0, 1, 2,
          3 = 3 or more / unreachable);
        - ``obs[f"{key_added}_perturbed"]``: bool, the perturbed cells;
        - ``uns[key_added]['perturbation']``: dict with ``genes`` (name -> value), ``n_cells``,
          ``steps``, ``step_size`` (the one used), ``ring_mean`` (float64 ``[4, n_vars]``, mean
          delta per ring) and ``ring_size`` (int64 ``[4]``).

    Raises:
        KeyError: If the matrices are missing (run :func:`celcomen` first).
        UnknownLabelError: For genes not in ``var_names`` or unknown cells (close names listed).
    """
    names = [f"{key_added}_intra", f"{key_added}_inter"]
    for name in names:
        if name not in adata.varp:
            raise KeyError(
                f"varp[{name!r}]: no fitted Celcomen matrices in adata.varp; run "
                f"spatial.celcomen(adata, key_added={key_added!r}) first"
            )
    params = adata.uns.get(key_added, {}).get("params", {})
    w_intra, w_inter = (
        torch.as_tensor(np.asarray(adata.varp[n]), dtype=torch.float32, device=device)
        for n in names
    )
    estimator = Celcomen.from_matrices(
        w_intra, w_inter, normalization=params.get("normalization", "gcn")
    )
    result = estimator.intervene(
        adata,
        genes,
        cells,
        steps=steps,
        step_size=step_size,
        horizon=horizon,
        spatial_key=spatial_key,
        layer=layer,
        progress=progress,
    )
    record = {
        "genes": {str(k): float(v) for k, v in genes.items()},
        "steps": int(steps),
        "step_size": result.step_size,
    }
    store_counterfactual(adata, result, key_added=key_added, record=record)


def store_counterfactual(
    adata: AnnData,
    result: Counterfactual,
    *,
    key_added: str = _keys.UNS_KEY,
    record: Mapping[str, Any] | None = None,
) -> None:
    """Write a :class:`~spatial.counterfactual.Counterfactual` into ``adata`` as :func:`intervene`.

    Args:
        adata: AnnData with the counterfactual's cells and genes.
        result: The counterfactual.
        key_added: Prefix of the written keys (default ``"celcomen"``).
        record: Extra entries for ``uns[key_added]['perturbation']`` (genes, steps, ...).
    """

    def host(t: torch.Tensor) -> np.ndarray:
        return t.detach().cpu().numpy()

    _save(adata, "layers", f"{key_added}_counterfactual", host(result.perturbed).astype(np.float32))
    _save(adata, "layers", f"{key_added}_delta", host(result.delta).astype(np.float32))
    _save(adata, "obs", f"{key_added}_ring", host(result.ring).astype(np.int64))
    perturbed = host(result.clamped.any(-1))
    _save(adata, "obs", f"{key_added}_perturbed", perturbed)
    uns = dict(adata.uns.get(key_added, {}))
    uns["perturbation"] = {
        **dict(record or {}),
        "n_cells": int(perturbed.sum()),
        "ring_mean": host(result.ring_mean).astype(np.float64),
        "ring_size": host(result.ring_size).astype(np.int64),
    }
    _save(adata, "uns", key_added, uns)
