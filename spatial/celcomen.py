r"""``Celcomen``: a scikit-learn-style estimator of intra- and intercellular gene-gene couplings.

Megas et al., "Celcomen: spatial causal disentanglement for single-cell and tissue perturbation
modeling", arXiv:2409.05804 (ICLR 2025). ``Celcomen(...).fit(adata)`` projects expression onto
the unit sphere, reads (or builds) the spatial graph, and minimises one of the objectives of
:mod:`spatial.objectives` over the symmetric matrices of :class:`spatial.model.CelcomenEnergy`:

.. math::
    \min_{W_{\mathrm{intra}}, W_{\mathrm{inter}}} \frac{1}{N}\sum_i \ell_i
        + \lambda \big(\lVert W_{\mathrm{intra}} \rVert_F^2 + \lVert W_{\mathrm{inter}}
        \rVert_F^2\big)

(the ``"reference"`` objective sums instead of averaging, as the reference code does).
``CelcomenConfig.reference()`` reproduces the reference protocol (3-D normaliser, symmetrised
U(0, 1) start, plain SGD, clipping to [0, 1] and a unit diagonal after every step) for the
benchmark.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np
import torch
from anndata import AnnData
from torch import Tensor
from tqdm.auto import tqdm

from graphdata.device import make_generator
from graphdata.errors import GraphDataError, NotFittedError, UnknownLabelError
from graphdata.tracking import Tracker
from spatial import _inputs
from spatial._messages import NORMALIZATIONS, edge_weights
from spatial.model import CelcomenEnergy
from spatial.objectives import (
    Neighbourhood,
    mean_field_terms,
    reference_terms,
    score_matching_terms,
)

__all__ = ["CelcomenConfig", "Celcomen", "OBJECTIVES"]

#: Objective name -> per-cell loss terms (visible choices, see :mod:`spatial.objectives`).
OBJECTIVES: dict[str, Callable[..., Tensor]] = {
    "score_matching": score_matching_terms,
    "mean_field": mean_field_terms,
    "reference": reference_terms,
}


@dataclass(frozen=True)
class CelcomenConfig:
    """Hyperparameters of :class:`Celcomen` (defaults: our corrected protocol)."""

    # Loss: "score_matching" (consistent, no normaliser; the default because it recovers the
    # generating matrices, see benchmarks/bench_celcomen.py), "mean_field" (Celcomen's loss with
    # the vMF normaliser) or "reference" (the reference package's loss).
    objective: str = "score_matching"
    # k of the k-NN graph built in memory when the data carries no obsp graph (Visium ring: 6).
    n_neighbors: int = 6
    # Degree normalisation of messages: "gcn" 1/sqrt(d_i d_j) as GCNConv, "mean", "none".
    normalization: str = "gcn"
    # Passes over the cells.
    epochs: int = 300
    # Step size of the optimiser; Adam moves each entry by about lr per epoch, so raise it (or
    # epochs) when the couplings are large, e.g. 0.5 for concentrated real expression.
    lr: float = 0.05
    # "adam" (ours) or "sgd" (plain, momentum 0: the reference protocol).
    optimizer: str = "adam"
    # L2 penalty on both matrices; keeps the fit unique on degenerate data.
    weight_decay: float = 1e-2
    # Cells per mini-batch; None = full batch (every term is per cell, so batches are unbiased).
    batch_size: int | None = None
    # Start: "zeros" or "uniform" (symmetrised U(0,1), the reference start).
    init: str = "zeros"
    # After each step: "none", or "reference" = symmetrise, clip to [0, 1], unit diagonal.
    projection: str = "none"
    # Energy scale beta of the "reference" objective (its zmft_scalar); the others use 1.
    reference_beta: float = 0.1
    # Seed of the start and of the batch order; None draws a fresh one.
    seed: int | None = 0
    # Show a tqdm progress bar over epochs.
    progress: bool = True

    @classmethod
    def reference(cls, **overrides: Any) -> CelcomenConfig:
        r"""The reference package's protocol, with optional overrides.

        As Teichlab/celcomen trains (and the paper's simulation notebook sets it): the
        reference mean-field loss with the 3-D normaliser, plain SGD at learning rate 0.1 from a
        uniform initialisation, and after every step the projection
        :math:`W \leftarrow (W + W^\top)/2` clipped to :math:`[0, 1]` with a unit diagonal.

        Args:
            **overrides: Fields to change, e.g. ``epochs=300``.

        Returns:
            The configuration.
        """
        base = cls(
            objective="reference",
            optimizer="sgd",
            init="uniform",
            projection="reference",
            lr=0.1,
            weight_decay=0.0,
        )
        return replace(base, **overrides)

    def __post_init__(self) -> None:
        choices = {
            "objective": tuple(OBJECTIVES),
            "normalization": NORMALIZATIONS,
            "optimizer": ("adam", "sgd"),
            "init": ("zeros", "uniform"),
            "projection": ("none", "reference"),
        }
        for name, valid in choices.items():
            if getattr(self, name) not in valid:
                raise GraphDataError(
                    f"{name}: expected one of {valid}, got {getattr(self, name)!r}"
                )
        for name in ("epochs", "n_neighbors"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise GraphDataError(f"{name}: expected an integer >= 1, got {value!r}")
        if self.batch_size is not None and (
            not isinstance(self.batch_size, int) or self.batch_size < 1
        ):
            raise GraphDataError(
                f"batch_size: expected None or an integer >= 1, got {self.batch_size!r}"
            )
        _inputs.check_real(
            "lr", self.lr, low=0.0, low_open=True, fix="pass a positive step size, e.g. lr=0.05"
        )
        _inputs.check_real(
            "weight_decay",
            self.weight_decay,
            low=0.0,
            fix="pass a penalty >= 0, e.g. weight_decay=0.01",
        )
        _inputs.check_real(
            "reference_beta",
            self.reference_beta,
            low=0.0,
            low_open=True,
            fix="pass a positive energy scale, e.g. reference_beta=0.1",
        )
        _inputs.check_seed("seed", self.seed)
        if not isinstance(self.progress, bool):
            raise GraphDataError(f"progress: expected True or False, got {self.progress!r}")
        if self.objective != "reference" and self.reference_beta != 0.1:
            raise GraphDataError(
                f"reference_beta: only the 'reference' objective scales the energy, got "
                f"reference_beta={self.reference_beta} with objective={self.objective!r}; "
                "leave it at 0.1 (its scale is absorbed in the matrices otherwise)"
            )


class Celcomen:
    """Fit the Celcomen energy to a tissue: scikit-learn lifecycle, learned state ends in ``_``.

    Args:
        config: Hyperparameters; None (default) uses :class:`CelcomenConfig` defaults.
        **params: Overrides of single config fields, e.g. ``Celcomen(epochs=100)``.

    Attributes:
        W_intra_: Fitted intracellular matrix ``[G, G]`` (symmetric; reported with zero trace,
            which the model cannot identify, except in the reference protocol).
        W_inter_: Fitted intercellular matrix ``[G, G]`` (symmetric).
        losses_: Mean objective per epoch (list of floats).
        var_names_: Gene names when fitted on AnnData, else None.
        model_: The fitted :class:`~spatial.model.CelcomenEnergy`.

    Examples:
        >>> from spatial.simulate import simulate_tissue
        >>> tissue = simulate_tissue(60, 3, steps=50, seed=0)
        >>> est = Celcomen(epochs=5, progress=False).fit(tissue.x, tissue.edge_index)
        >>> est.W_intra_.shape, len(est.losses_)
        (torch.Size([3, 3]), 5)
    """

    def __init__(self, config: CelcomenConfig | None = None, **params: Any) -> None:
        known = [f.name for f in fields(CelcomenConfig)]
        for name in params:
            if name not in known:
                raise UnknownLabelError("parameter", name, known, argument="Celcomen")
        self.config = replace(config or CelcomenConfig(), **params)

    @classmethod
    def from_matrices(
        cls,
        W_intra: Tensor,
        W_inter: Tensor,
        config: CelcomenConfig | None = None,  # noqa: N803
        **params: Any,
    ) -> Celcomen:
        """A fitted-state estimator with given matrices, e.g. a known truth or stored varp.

        Args:
            W_intra: ``[G, G]`` intracellular matrix (its symmetric part is used).
            W_inter: ``[G, G]`` intercellular matrix (its symmetric part is used).
            config: Hyperparameters (``normalization`` matters for counterfactuals).
            **params: Overrides of single config fields.

        Returns:
            An estimator whose :meth:`intervene` uses these matrices (``losses_`` is empty).

        Examples:
            >>> est = Celcomen.from_matrices(torch.eye(2), torch.zeros(2, 2))
            >>> est.W_intra_
            tensor([[1., 0.],
                    [0., 1.]])
        """
        estimator = cls(config, **params)
        model = CelcomenEnergy(int(W_intra.shape[0])).to(device=W_intra.device, dtype=W_intra.dtype)
        model.set_matrices(W_intra, W_inter)
        estimator.model_ = model
        estimator.W_intra_ = model.W_intra.detach().clone()
        estimator.W_inter_ = model.W_inter.detach().clone()
        estimator.losses_ = []
        estimator.var_names_ = None
        return estimator

    def __repr__(self) -> str:
        changed = {
            k: v for k, v in asdict(self.config).items() if v != getattr(CelcomenConfig(), k)
        }
        return f"Celcomen({', '.join(f'{k}={v!r}' for k, v in changed.items())})"

    def fit(
        self,
        data: AnnData | Tensor,
        edge_index: Tensor | None = None,
        *,
        edge_weight: Tensor | None = None,
        spatial_key: str = "spatial",
        layer: str | None = None,
        device: torch.device | str | None = None,
        allow_negative: bool = False,
        tracker: Tracker | None = None,
    ) -> Celcomen:
        """Fit both matrices to expression on a spatial graph.

        Args:
            data: AnnData (non-negative expression in ``X`` or ``layers[layer]``; graph from
                ``obsp[f"{spatial_key}_connectivities"]`` or, if absent, a k-NN graph of
                ``obsm[spatial_key]`` built in memory), or a float tensor ``[N, G]`` (any sign:
                points on the sphere are fine) with ``edge_index``.
            edge_index: ``[2, E]`` source -> target edges; required for a tensor, not allowed
                with AnnData (the graph comes from ``adata``).
            edge_weight: Optional base weights ``[E]`` for a tensor (default ones).
            spatial_key: AnnData key of the coordinates and prefix of the graph keys.
            layer: AnnData layer holding expression; None (default) uses ``adata.X``.
            device: Device to fit on; None (default) keeps the data's device (CPU for AnnData).
            allow_negative: AnnData only: accept negative values, for signed coordinates already
                on the sphere such as :meth:`SimulatedTissue.to_anndata` writes. Default False
                (negative expression is an error).
            tracker: Also log to this :class:`graphdata.tracking.Tracker`: the config, the
                cell and gene counts once, then ``{"loss": losses_[epoch - 1]}`` at
                ``step=epoch`` (1-based, as ``kg`` counts epochs). The caller closes it.
                Default None.

        Returns:
            self, with ``W_intra_``, ``W_inter_``, ``losses_``, ``var_names_``, ``model_``.

        Raises:
            KeyError: If ``obsm[spatial_key]`` and the graph are both missing, or ``layer``.
            GraphDataError: On NaN, negative (AnnData) or all-zero expression, a bad graph, or
                a diverging fit (the message suggests a smaller ``lr``).
        """
        x, edge_index, edge_weight, var_names = self._prepare(
            data, edge_index, edge_weight, spatial_key, layer, device, allow_negative
        )
        cfg = self.config
        n, g = x.shape
        weight = edge_weights(
            edge_index, n, edge_weight=edge_weight, normalization=cfg.normalization, dtype=x.dtype
        )
        nb = Neighbourhood.from_graph(x, edge_index, weight)
        model = CelcomenEnergy(g).to(device=x.device, dtype=x.dtype)
        generator = make_generator(cfg.seed)
        if cfg.init == "uniform":
            model.set_matrices(*(torch.rand(g, g, generator=generator).to(x) for _ in range(2)))
        objective = OBJECTIVES[cfg.objective]
        if cfg.objective == "reference":
            objective = functools.partial(objective, beta=cfg.reference_beta)
        optimizer_cls = torch.optim.Adam if cfg.optimizer == "adam" else torch.optim.SGD
        optimizer = optimizer_cls(model.parameters(), lr=cfg.lr)
        batch = n if cfg.batch_size is None else min(cfg.batch_size, n)
        self.losses_: list[float] = []
        if tracker is not None:
            tracker.log_params({**asdict(cfg), "n_cells": n, "n_genes": g})
        for epoch in tqdm(range(cfg.epochs), desc="celcomen fit", disable=not cfg.progress):
            order = torch.randperm(n, generator=generator).to(x.device) if batch < n else None
            total = 0.0
            for start in range(0, n, batch):
                cells = None if order is None else order[start : start + batch]
                terms = (
                    objective(model, x, nb)
                    if cells is None
                    else objective(model, x[cells], nb.rows(cells))
                )
                # The reference sums over cells (its lr is tuned to that); ours average.
                data_term = (
                    terms.sum() * (n / terms.numel())
                    if cfg.objective == "reference"
                    else terms.mean()
                )
                loss = data_term + cfg.weight_decay * (
                    model.W_intra.square().sum() + model.W_inter.square().sum()
                )
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                if cfg.projection == "reference":
                    _project_reference(model)
                total += float(loss.detach()) * terms.numel() / n
            bad = [
                name
                for name, p in model.named_parameters()
                if not bool(torch.isfinite(p.detach()).all())
            ]
            if not np.isfinite(total) or bad:
                raise GraphDataError(
                    f"lr: the fit diverged at epoch {epoch} (loss {total}, non-finite "
                    f"parameters {bad}); lower lr (now {cfg.lr}) or raise weight_decay"
                )
            self.losses_.append(total)
            if tracker is not None:
                tracker.log_metrics({"loss": total}, step=epoch + 1)
        if cfg.optimizer == "adam":  # the reference protocol's SGD never settles; no advice
            _warn_unconverged(self.losses_)
        self.model_ = model
        w_intra = model.W_intra.detach().clone()
        if cfg.objective != "reference":
            w_intra -= torch.eye(g, dtype=x.dtype, device=x.device) * w_intra.diagonal().mean()
        self.W_intra_ = w_intra
        self.W_inter_ = model.W_inter.detach().clone()
        self.var_names_ = var_names
        return self

    def _prepare(
        self,
        data: Any,
        edge_index: Tensor | None,
        edge_weight: Tensor | None,
        spatial_key: str,
        layer: str | None,
        device: torch.device | str | None = None,
        allow_negative: bool = False,
    ) -> tuple[Tensor, Tensor, Tensor | None, list[str] | None]:
        """Unit-sphere expression, graph and gene names from AnnData or tensors."""
        if isinstance(data, AnnData):
            if edge_index is not None or edge_weight is not None:
                raise GraphDataError(
                    "edge_index: not allowed with AnnData input (the graph is read from "
                    f"obsp[{spatial_key + '_connectivities'!r}]); pass tensors instead"
                )
            x = _inputs.expression_from_adata(data, layer, allow_negative=allow_negative)
            edge_index, edge_weight = _inputs.graph_from_adata(
                data, spatial_key, self.config.n_neighbors
            )
            var_names = list(map(str, data.var_names))
        elif isinstance(data, Tensor):
            if edge_index is None:
                raise GraphDataError(
                    "edge_index: required with tensor expression; build one with "
                    "graphdata.spatial.knn_graph(coords, k=6)"
                )
            x = data if torch.is_floating_point(data) else data.float()
            _inputs.check_expression(x, "data", non_negative=False)
            var_names = None
        else:
            raise GraphDataError(
                f"data: expected AnnData or a float tensor [N, G], got {type(data).__name__}"
            )
        _inputs.check_edge_index(edge_index, x.shape[0])
        if device is not None:
            x = x.to(device)
        edge_index = edge_index.to(x.device)
        if edge_weight is not None:
            _inputs.check_edge_weight(edge_weight, edge_index.shape[1])
            edge_weight = edge_weight.to(device=x.device, dtype=x.dtype)
        _warn_isolated(edge_index, x.shape[0])
        return _inputs.unit_rows(x), edge_index, edge_weight, var_names

    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise NotFittedError(
                "This Celcomen instance is not fitted yet; call fit(adata) or "
                "fit(x, edge_index) first"
            )

    def matrices(self) -> tuple[Tensor, Tensor]:
        """Return ``(W_intra_, W_inter_)``; raises NotFittedError before :meth:`fit`."""
        self._check_fitted()
        return self.W_intra_, self.W_inter_

    def intervene(
        self,
        data: AnnData | Tensor,
        genes: Mapping[Any, float],
        cells: Any,
        *,
        edge_index: Tensor | None = None,
        edge_weight: Tensor | None = None,
        steps: int = 50,
        step_size: float | None = None,
        horizon: float = 4.0,
        spatial_key: str = "spatial",
        layer: str | None = None,
        device: torch.device | str | None = None,
        allow_negative: bool = False,
        progress: bool = True,
    ) -> Any:
        """Counterfactual with the fitted matrices (see :mod:`spatial.counterfactual`).

        Args:
            data: AnnData or expression tensor ``[N, G]`` (as in :meth:`fit`).
            genes: ``{gene name or column: value}`` in the units of the expression.
            cells: Boolean mask ``[N]``, integer indices, or obs names of the perturbed cells.
            edge_index: Graph ``[2, E]`` for tensor input.
            edge_weight: Optional base edge weights ``[E]`` for tensor input.
            steps: Relaxation steps (default 50).
            step_size: Riemannian step size; None (default) picks it so that the relaxation
                lasts ``horizon`` model time units
                (:func:`spatial.counterfactual.auto_step_size`).
            horizon: Relaxation time in model time units when ``step_size`` is None (default 4).
            spatial_key: AnnData key of coordinates / graph.
            layer: AnnData expression layer; None uses ``adata.X``.
            device: Device to relax on; None (default) uses the model's device.
            allow_negative: AnnData only: accept signed sphere coordinates (as in :meth:`fit`).
            progress: Show a tqdm bar over the relaxation steps when stderr is a terminal;
                False: never. Default True.

        Returns:
            A :class:`spatial.counterfactual.Counterfactual`.
        """
        from spatial.counterfactual import simulate_intervention  # avoid an import cycle

        self._check_fitted()
        raw = (
            _inputs.expression_from_adata(data, layer, allow_negative=allow_negative)
            if isinstance(data, AnnData)
            else data
        )
        device = device or self.model_.intra_raw.device
        _, edge_index, edge_weight, var_names = self._prepare(
            data, edge_index, edge_weight, spatial_key, layer, device, allow_negative
        )
        obs_names: Sequence[str] | None = (
            list(map(str, data.obs_names)) if isinstance(data, AnnData) else None
        )
        columns = _inputs.resolve_genes(genes, var_names, raw.shape[1])
        mask = _inputs.resolve_cells(cells, obs_names, raw.shape[0])
        weight = edge_weights(
            edge_index,
            raw.shape[0],
            edge_weight=edge_weight,
            normalization=self.config.normalization,
            dtype=raw.dtype,
        )
        raw = raw.to(device=edge_index.device, dtype=self.model_.intra_raw.dtype)
        return simulate_intervention(
            self.model_,
            raw,
            edge_index,
            weight.to(raw.dtype),
            columns,
            mask.to(edge_index.device),
            steps=steps,
            step_size=step_size,
            horizon=horizon,
            progress=progress,
        )


def _project_reference(model: CelcomenEnergy) -> None:
    """Reference step: W <- clip((W + W^T)/2, 0, 1) with unit diagonal (``normalize_g2g``)."""
    with torch.no_grad():
        for raw in (model.intra_raw, model.inter_raw):
            w = (0.5 * (raw + raw.T)).clamp(0.0, 1.0)
            w.fill_diagonal_(1.0)
            raw.copy_(w)


def _warn_unconverged(losses: list[float]) -> None:
    """Warn when the last tenth of a long fit made more than 1 % of the fit's total progress."""
    if len(losses) < 50:
        return
    total = losses[0] - losses[-1]
    share = (losses[-(len(losses) // 10)] - losses[-1]) / total if total > 0 else 0.0
    if share > 0.01:
        warnings.warn(
            f"the last tenth of the epochs made {100 * share:.1f} % of the fit's progress; the "
            "fit has not converged: raise epochs or lr (Adam moves each entry by about lr per "
            "epoch, so strongly concentrated data, e.g. real expression, need a larger lr)",
            UserWarning,
            stacklevel=3,
        )


def _warn_isolated(edge_index: Tensor, n: int) -> None:
    """Isolated cells keep their intracellular term only; say so rather than stay silent."""
    touched = torch.zeros(n, dtype=torch.bool, device=edge_index.device)
    touched[edge_index.reshape(-1)] = True
    isolated = int((~touched).sum())
    if isolated:
        warnings.warn(
            f"{isolated} of {n} cells have no edges in the spatial graph; they contribute only "
            "their intracellular term (no messages in or out). Use a k-NN graph or a larger "
            "radius to connect them",
            UserWarning,
            stacklevel=3,
        )
