r"""``Celcomen``: a scikit-learn-style estimator of intra- and intercellular gene-gene couplings.

Megas et al., "Celcomen: spatial causal disentanglement for single-cell and tissue perturbation
modeling", arXiv:2409.05804 (ICLR 2025). ``Celcomen(...).fit(adata)`` projects expression onto
the unit sphere (:math:`x_i = c_i / \lVert c_i \rVert`, the paper's normalisation of counts),
reads (or builds) the spatial graph, and minimises one of the objectives of
:mod:`spatial.objectives` over the symmetric matrices and the linear fields
:math:`\theta = (W_{\mathrm{intra}}, W_{\mathrm{inter}}, h_{\mathrm{intra}}, h_{\mathrm{inter}})`
of :class:`spatial.model.CelcomenEnergy`:

.. math::
    \min_\theta \frac{1}{N}\sum_i \ell_i + \frac{\lambda}{N} \big(\lVert W_{\mathrm{intra}}
        \rVert_F^2 + \lVert W_{\mathrm{inter}} \rVert_F^2 + \lVert h_{\mathrm{intra}} \rVert^2
        + \lVert h_{\mathrm{inter}} \rVert^2\big)

(the ``"reference"`` objective sums instead of averaging, as the reference code does, and has
no fields). The ridge :math:`\lambda` (``weight_decay``) is a total over the tissue, so its
weight falls as :math:`1/N` and it does not shrink the scale of large tissues. Score matching
is a convex quadratic in :math:`\theta`; the default solver, conjugate gradients, stops when
the gradient norm is ``tol`` times its start (:mod:`spatial._solver`) and warns otherwise.

Non-negative expression (counts, log-normalised data) lies in one orthant around a mean
direction :math:`u = \bar x / \lVert \bar x \rVert`, where :math:`u^\top x_i` is nearly the
same for every cell. There :math:`x^\top (u v^\top + v u^\top) x = 2 (u^\top x)(v^\top x)` is, to
first order in the spread around :math:`u`, the linear field :math:`2 (u^\top \bar x)\, v^\top
x`, so the couplings along :math:`u` are confounded with the fields (and with how counts were
normalised): they take a common offset that flips the signs of small couplings. As the trace of
:math:`W_{\mathrm{intra}}`, which the sphere cannot identify, is reported as zero, the fitted
couplings of non-negative data are reported as their part orthogonal to :math:`u`,

.. math::
    W \mapsto P W P, \qquad P = I - u u^\top,

the matrix minus its closest :math:`u v^\top + v u^\top` (``mean_direction_`` holds :math:`u`;
``model_`` keeps the fitted energy, whose fields absorb the rest). Signed data (mean near the
origin) are reported as fitted.

**Raw counts** (``transform="log_counts"``). Under a log link, :math:`\log \mu_{ig} = \log
\ell_i + a_g + \eta_{ig}`, the projection :math:`c_i / \lVert c_i \rVert` is dominated by the
genes with the largest baselines :math:`a_g`. The log-counts route uses instead

.. math::
    x_i = \frac{y_i}{\lVert y_i \rVert}, \qquad y_{ig} = \log(1 + c_{ig}) - m_g, \qquad
    m_g = \frac1N \sum_j \log(1 + c_{jg}),

(:func:`spatial._inputs.log_counts_coordinates`): centring removes the baselines, and a
library size :math:`\log \ell_i` moves cell :math:`i` along the unit direction

.. math::
    u \propto \kappa, \qquad
    \kappa_g = \frac1N \sum_i c_{ig} \log\Big(1 + \frac1{c_{ig}}\Big)
    \ \approx\ \frac{\partial\, \mathbb E \log(1 + c_{ig})}{\partial \log \ell_i}

(:func:`spatial._inputs.library_size_direction`; an unbiased estimate under Poisson counts),
which is :math:`\mathbf 1 / \sqrt G` when every gene is well expressed and leans away from
genes of mean count below about 1, whose :math:`\log(1 + c)` a library size scales rather than
shifts. The couplings are reported as :math:`P W P` with this :math:`u` (``mean_direction_``).
The matrices act on directions of centred log expression of the original genes (no per-gene
rescaling: :math:`y^\top W y` in log-count units); ``gene_offset_`` holds :math:`m`. The
default ``transform="auto"`` takes this route when every fitted value is a non-negative integer
(raw counts; :func:`spatial._inputs.is_raw_counts`) and the sphere route otherwise (normalised
or log expression, signed coordinates). A counterfactual of such a fit clamps gene :math:`g` at
count :math:`v` as :math:`y_{ig} = \log(1 + v) - m_g` (a knock-out: :math:`-m_g`) and
relaxes in these coordinates (:meth:`Celcomen.intervene`).

**Size factors.** The projection costs what the couplings hold along :math:`u`: on a
Visium-like panel world (issue 19, session 21, ``benchmarks/RESULTS.md``) even the true matrices
reported as :math:`P W P` miss some sign targets, and the signed fit loses .25-.34 of its intra
Pearson to it. It is needed only because the counts themselves carry each cell's library size.
When the library sizes :math:`s_i` are known from elsewhere, the move they cause is subtracted
instead, by the same first-order sensitivity (:func:`spatial._inputs.library_size_sensitivity`),

.. math::
    y_{ig} = \log(1 + c_{ig}) - m_g - (\log s_i - \bar\ell)\, \kappa_g, \qquad
    \bar\ell = \frac1N \sum_j \log s_j,

(:func:`spatial._inputs.remove_library_size`), and the couplings are reported whole
(``mean_direction_`` is None). By default the size factors are the cells' total counts over the
data's genes that the fit leaves out (``mask_var``: the highly variable genes of a whole
transcriptome leave thousands out), which measure the library size without the fitted genes'
own couplings; ``size_factors=`` takes an ``obs`` column or an array instead, or False for the
projection. The fitted genes must not dominate a given size factor: the fitted genes' own
total is the library-size direction again. :math:`\kappa` is a Poisson sensitivity, not a
regression on :math:`\log s`, so a library size that differs between cell types does not take
the types' expression with it. Measured on four tuning worlds with a background transcriptome
(intra sign and Pearson up on all, inter within the seeds' spread) and once on a held-out
whole-transcriptome world, where the intra gains carried over and inter did not improve
(``benchmarks/RESULTS.md``, issue 19, session 21).

``CelcomenConfig.reference()`` reproduces the reference protocol (3-D normaliser, symmetrised
U(0, 1) start, plain SGD, clipping to [0, 1] and a unit diagonal after every step) for the
benchmark.
"""

from __future__ import annotations

import functools
import math
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
from spatial._solver import ScoreMatchingPass, conjugate_gradient, score_matching_design
from spatial.model import CelcomenEnergy
from spatial.objectives import (
    Neighbourhood,
    mean_field_terms,
    reference_terms,
    score_matching_terms,
)

__all__ = ["CelcomenConfig", "Celcomen", "OBJECTIVES", "LR_MAX"]

#: Largest ``lr`` of adam/sgd: Adam's first step is lr / (1 - beta1) = 10 lr, which torch
#: converts to the float32 parameters' type (at most 3.4e38); a larger lr ended the fit in a
#: RuntimeError ("value cannot be converted to type float without overflow").
LR_MAX = 1e37

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
    # Most passes over the cells: CG iterations (one pass each) for "cg", epochs for adam/sgd.
    epochs: int = 300
    # Step size of adam/sgd (the "cg" solver needs none), in (0, 1e37]; Adam moves each entry
    # by about lr per epoch, so raise it (or epochs) when the couplings are large. A step size
    # that makes the loss end above its start is refused.
    lr: float = 0.05
    # "auto" (default): "cg" for score matching (its objective is a convex quadratic: conjugate
    # gradients reach the minimiser, checked by the relative gradient norm), "adam" otherwise;
    # "adam"; "sgd" (plain, momentum 0: the reference protocol); "cg" (score matching only).
    optimizer: str = "auto"
    # Relative gradient-norm tolerance of "cg": stop when ||grad|| <= tol * ||grad at start||;
    # a fit that ends above it warns.
    tol: float = 1e-4
    # Ridge lambda in mean_i l_i + (lambda / N) ||theta||^2: a total over the tissue, so its
    # weight vanishes with the number of cells and does not bias the scale of large tissues;
    # it keeps the fit unique on degenerate data (e.g. a constant strength confounds the fields).
    weight_decay: float = 1.0
    # Fit the per-gene linear fields h_intra, h_inter with the matrices (score_matching,
    # mean_field): they absorb the mean direction of non-negative expression, which the
    # couplings would otherwise explain by a common offset. False: the paper's energy,
    # quadratic terms only. The "reference" objective never fits them.
    fields: bool = True
    # Cells per mini-batch of adam/sgd (None = full batch; every term is per cell, so batches
    # are unbiased); for "cg", cells per chunk of a pass (None: about 4M entries), which bounds
    # memory and leaves the result unchanged.
    batch_size: int | None = None
    # How expression becomes sphere coordinates: "sphere" (the paper's x = c / ||c||),
    # "log_counts" (raw counts: x = y / ||y||, y = log1p(c) minus its gene means; couplings
    # reported orthogonal to the library-size direction, module docstring), or "auto"
    # (default): "log_counts" when every fitted value is a non-negative integer (raw counts),
    # else "sphere" (normalised or log expression, signed coordinates). On log-link counts
    # "log_counts" keeps the signs that "sphere" loses (benchmarks/RESULTS.md, issue 19).
    transform: str = "auto"
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
            fields=False,
        )
        return replace(base, **overrides)

    def __post_init__(self) -> None:
        choices = {
            "objective": tuple(OBJECTIVES),
            "normalization": NORMALIZATIONS,
            "optimizer": ("auto", "cg", "adam", "sgd"),
            "init": ("zeros", "uniform"),
            "projection": ("none", "reference"),
            "transform": ("auto", "sphere", "log_counts"),
        }
        for name, valid in choices.items():
            if getattr(self, name) not in valid:
                raise GraphDataError(
                    f"{name}: expected one of {valid}, got {getattr(self, name)!r}"
                )
        # At most 2**63 - 1: the config is stored in uns, and a larger int has no HDF5 type
        # (write_h5ad would fail after the whole fit).
        for name in ("epochs", "n_neighbors"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value < 2**63:
                raise GraphDataError(
                    f"{name}: expected an integer in [1, 2**63 - 1], got {value!r}"
                )
        if self.batch_size is not None and (
            isinstance(self.batch_size, bool)
            or not isinstance(self.batch_size, int)
            or not 1 <= self.batch_size < 2**63
        ):
            raise GraphDataError(
                f"batch_size: expected None or an integer in [1, 2**63 - 1], got "
                f"{self.batch_size!r}"
            )
        _inputs.check_real(
            "lr",
            self.lr,
            low=0.0,
            low_open=True,
            high=LR_MAX,
            fix=f"pass a positive step size <= {LR_MAX:g}, e.g. lr=0.05",
        )
        _inputs.check_real(
            "weight_decay",
            self.weight_decay,
            low=0.0,
            fix="pass a penalty >= 0, e.g. weight_decay=1.0",
        )
        _inputs.check_real(
            "reference_beta",
            self.reference_beta,
            low=0.0,
            low_open=True,
            fix="pass a positive energy scale, e.g. reference_beta=0.1",
        )
        _inputs.check_real(
            "tol",
            self.tol,
            low=0.0,
            low_open=True,
            high=1.0,
            fix="pass a relative gradient tolerance in (0, 1], e.g. tol=1e-4",
        )
        _inputs.check_seed("seed", self.seed)
        if self.seed is not None and self.seed >= 2**63:  # stored in uns, as epochs (above)
            raise GraphDataError(
                f"seed: expected an integer in [0, 2**63 - 1] (the fit's config is stored in "
                f"the AnnData, whose .h5ad file holds 64-bit signed ints), got {self.seed!r}"
            )
        for name in ("progress", "fields"):
            if not isinstance(getattr(self, name), bool):
                raise GraphDataError(f"{name}: expected True or False, got {getattr(self, name)!r}")
        if self.optimizer == "cg" and self.objective != "score_matching":
            raise GraphDataError(
                f"optimizer: 'cg' needs the quadratic 'score_matching' objective, got "
                f"objective={self.objective!r}; use optimizer='auto' or 'adam'"
            )
        if self.optimizer == "cg" and self.projection != "none":
            raise GraphDataError(
                "projection: the 'reference' projection needs a step-wise optimizer, got "
                "optimizer='cg'; use optimizer='sgd' (the reference protocol)"
            )
        if self.transform == "log_counts" and self.objective == "reference":
            raise GraphDataError(
                "transform: 'log_counts' is not part of the reference protocol, got "
                "objective='reference'; use transform='sphere' with it"
            )
        if self.objective != "reference" and self.reference_beta != 0.1:
            raise GraphDataError(
                f"reference_beta: only the 'reference' objective scales the energy, got "
                f"reference_beta={self.reference_beta} with objective={self.objective!r}; "
                "leave it at 0.1 (its scale is absorbed in the matrices otherwise)"
            )


class Celcomen:
    r"""Fit the Celcomen energy to a tissue: scikit-learn lifecycle, learned state ends in ``_``.

    Args:
        config: Hyperparameters; None (default) uses :class:`CelcomenConfig` defaults.
        **params: Overrides of single config fields, e.g. ``Celcomen(epochs=100)``.

    Attributes:
        W_intra_: Fitted intracellular matrix ``[G, G]`` (symmetric; reported with zero trace,
            which the model cannot identify, except in the reference protocol).
        W_inter_: Fitted intercellular matrix ``[G, G]`` (symmetric). Both matrices of
            non-negative expression are reported orthogonal to ``mean_direction_`` (module
            docstring).
        h_intra_: Fitted per-gene field ``[G]`` (zero with ``fields=False`` or "reference").
        h_inter_: Fitted strength-weighted per-gene field ``[G]``.
        mean_direction_: The unit direction ``[G]`` the couplings are reported orthogonal to:
            the mean direction of non-negative expression (``transform="sphere"``), the
            library-size direction of the log counts (``"log_counts"``; about
            :math:`\mathbf 1/\sqrt G` when all genes are well expressed), else None.
        transform_: How expression became sphere coordinates: ``"sphere"`` or
            ``"log_counts"`` (``config.transform``; ``"auto"`` resolved on the data).
        gene_offset_: ``"log_counts"``: the gene means :math:`m_g` of :math:`\log(1 + c)`
            ``[G]`` subtracted before the projection; else None.
        losses_: Objective after every solver iteration ("cg"), or the mean objective per
            epoch (adam/sgd) (list of floats).
        n_iter_: Solver iterations (CG iterations, or epochs).
        relative_gradient_: "cg": final gradient norm over the starting one; undefined (None)
            for adam/sgd, which stop after ``epochs`` and have no gradient-norm criterion.
        converged_: Whether the convergence check passed (a failed one also warns).
        var_names_: Names of the genes fitted (the ``mask_var`` selection, in ``adata``
            order) when fitted on AnnData, else None.
        genes_used_: int64 positions of the fitted genes among the data's genes.
        n_features_in_: The number of genes (columns) of the data passed to :meth:`fit`.
        model_: The fitted :class:`~spatial.model.CelcomenEnergy`.

    Examples:
        >>> from spatial.simulate import simulate_tissue
        >>> tissue = simulate_tissue(60, 3, steps=50, seed=0)
        >>> est = Celcomen(progress=False).fit(tissue.x, tissue.edge_index)
        >>> est.W_intra_.shape, est.converged_
        (torch.Size([3, 3]), True)
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
        *,
        gene_offset: Tensor | None = None,
        **params: Any,
    ) -> Celcomen:
        """A fitted-state estimator with given matrices, e.g. a known truth or stored varp.

        Args:
            W_intra: ``[G, G]`` intracellular matrix (its symmetric part is used).
            W_inter: ``[G, G]`` intercellular matrix (its symmetric part is used).
            config: Hyperparameters (``normalization`` matters for counterfactuals).
            gene_offset: The gene means :math:`m` ``[G]`` of a ``transform="log_counts"`` fit
                (``gene_offset_``): the matrices then act on centred log counts and
                :meth:`intervene` reads raw counts. None (default): sphere coordinates.
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
        counts = gene_offset is not None or estimator.config.transform == "log_counts"
        estimator.transform_ = "log_counts" if counts else "sphere"
        estimator.gene_offset_ = None
        if gene_offset is not None:
            if tuple(gene_offset.shape) != (model.n_genes,):
                raise GraphDataError(
                    f"gene_offset: expected the {model.n_genes} gene means of the fit, got "
                    f"shape {tuple(gene_offset.shape)}; pass est.gene_offset_ of a "
                    "transform='log_counts' fit"
                )
            estimator.gene_offset_ = gene_offset.to(W_intra)
        estimator._clear_size_factors()
        return estimator

    def _clear_size_factors(self) -> None:
        """No size factors: the state of a fit without them (``fit`` fills these in)."""
        self.size_factors_: Tensor | None = None
        self.size_factor_source_: str | None = None
        self.size_factor_key_: str | None = None
        self.size_factors_from_: str | None = None
        self.library_slope_: Tensor | None = None
        self.log_size_center_: float | None = None

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
        mask_var: Any = None,
        size_factors: Any = None,
        max_genes: int | None = _inputs.MAX_GENES,
        max_memory: float | None = None,
        tracker: Tracker | None = None,
    ) -> Celcomen:
        r"""Fit both matrices to expression on a spatial graph.

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
            mask_var: The genes to fit, as scanpy's ``sc.pp.pca(mask_var=...)``: None
                (default) uses the boolean ``var['highly_variable']`` when it exists (as
                ``sc.pp.highly_variable_genes(adata)`` writes it) and every gene otherwise; a
                string names a boolean ``var`` column; a boolean array ``[n_vars]`` (or
                ``[G]`` for a tensor) selects genes; False uses every gene (scanpy spells that
                None). Only the selected genes are densified, a block of rows at a time, and
                projected onto the sphere over them (:math:`x_i = c_i / \lVert c_i \rVert`,
                or the log-counts coordinates on raw counts: ``config.transform``); the
                dense ``[N, G_used]`` float32 rows (``4 N G_used`` bytes) stay for the fit.
            size_factors: Per-cell library sizes for raw counts (``transform_ ==
                "log_counts"``; module docstring, "Size factors"). None (default): each
                cell's total count over the data's genes that are *not* fitted, when
                ``mask_var`` leaves some out (e.g. the highly variable genes of a whole
                transcriptome) and every cell has a count there; otherwise none. A string
                names an ``obs`` column (e.g. ``"total_counts"``, best counted over genes
                other than the fitted ones); an array ``[N]`` gives them; False: none. With
                size factors the couplings are reported whole; without, orthogonal to the
                library-size direction (``mean_direction_``).
            max_genes: Refuse a fit of more genes than this (default
                :data:`spatial._inputs.MAX_GENES` = 5,000), before anything large is allocated;
                None: no limit. The message gives the memory the fit would need.
            max_memory: Refuse a fit whose estimated peak memory in bytes exceeds this
                (:func:`spatial._inputs.fit_memory_bytes`: :math:`4\,(10NG + 56G^2)` bytes
                + 512 MiB); None (default): the total memory of the fitting device (RAM on
                the CPU).
            tracker: Also log to this :class:`graphdata.tracking.Tracker`: the config, the
                cell and gene counts once, then ``{"loss": losses_[epoch - 1]}`` at
                ``step=epoch`` (1-based, as ``kg`` counts epochs). The caller closes it.
                Default None.

        Returns:
            self, with ``W_intra_``, ``W_inter_``, ``losses_``, ``var_names_`` (names of the
            genes used, in ``adata`` order; None for a tensor), ``genes_used_`` (int64
            positions of those genes among the data's columns), ``n_features_in_`` (the data's
            gene count), ``model_`` and, for raw counts, ``size_factors_`` (float64 ``[N]``
            or None), ``size_factor_source_`` (in words), ``size_factors_from_``
            (``"other_genes"``, ``"obs"`` with ``size_factor_key_``, ``"array"`` or None),
            ``library_slope_`` (:math:`\kappa` ``[G]``) and ``log_size_center_``
            (:math:`\bar\ell`).

        Raises:
            KeyError: If ``obsm[spatial_key]`` and the graph are both missing, ``layer``, or
                the ``var`` column named by ``mask_var``.
            GraphDataError: On NaN, negative (AnnData) or, on the sphere route, all-zero
                expression (the log-counts route places such cells), a bad graph, a
                bad ``mask_var`` or ``size_factors``, more than ``max_genes`` genes or more
                than ``max_memory`` (the message gives the memory needed and the fix), or a
                diverging fit (the message suggests a smaller ``lr``).
        """
        x, edge_index, edge_weight, var_names, genes_used, transform = self._prepare(
            data,
            edge_index,
            edge_weight,
            spatial_key,
            layer,
            device,
            allow_negative,
            mask_var=mask_var,
            max_genes=max_genes,
            max_memory=max_memory,
            transform=self.config.transform,
        )
        cfg = self.config
        _inputs.check_constant_genes(
            x,
            _inputs.layer_name(layer) if isinstance(data, AnnData) else "data",
            names=var_names,
            centred=transform == "log_counts",
        )
        self.transform_ = transform
        self.gene_offset_: Tensor | None = None
        self._clear_size_factors()
        if transform == "log_counts":
            # "auto" chose this route because every value is a non-negative integer.
            if cfg.transform == "log_counts" and bool((x < 0).any()):
                raise GraphDataError(
                    "transform: 'log_counts' needs non-negative raw counts, got negative "
                    "values; pass layer='counts' (raw counts), or transform='sphere' for "
                    "signed coordinates"
                )
            _warn_low_depth(x)
            kappa = _inputs.library_size_sensitivity(x)  # [G], before x is replaced
            sizes, self.size_factor_source_ = _resolve_size_factors(
                data, layer, genes_used, size_factors, x.shape[0]
            )
            y, self.gene_offset_ = _inputs.log_counts_coordinates(x)
            if sizes is not None:
                self.size_factor_key_ = size_factors if isinstance(size_factors, str) else None
                self.size_factors_from_ = (
                    "other_genes"
                    if size_factors is None
                    else "obs"
                    if isinstance(size_factors, str)
                    else "array"
                )
                y, self.log_size_center_ = _inputs.remove_library_size(y, sizes.log(), kappa)
                self.size_factors_, self.library_slope_ = sizes, kappa
                _inputs.check_nonzero_rows(y)
            x = _inputs.unit_rows(y, inplace=True)  # [N, G] on the sphere
        elif size_factors is not None and size_factors is not False:
            raise GraphDataError(
                f"size_factors: apply to raw counts (transform='log_counts'), got a "
                f"transform={transform!r} fit; drop size_factors, or fit the raw counts "
                "(layer='counts')"
            )
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
        params = [model.intra_raw, model.inter_raw]
        if cfg.fields and cfg.objective != "reference":
            params += [model.h_intra, model.h_inter]
        self.losses_: list[float] = []
        if tracker is not None:
            tracker.log_params({**asdict(cfg), "n_cells": n, "n_genes": g})
        solver = cfg.optimizer
        if solver == "auto":
            solver = "cg" if cfg.objective == "score_matching" else "adam"
        if solver == "cg":
            self._fit_cg(model, params, x, nb, tracker)
        else:
            self._fit_steps(model, params, objective, solver, x, nb, generator, tracker)
        self.model_ = model
        w_intra = model.W_intra.detach().clone()
        if cfg.objective != "reference":
            w_intra -= torch.eye(g, dtype=x.dtype, device=x.device) * w_intra.diagonal().mean()
        w_inter = model.W_inter.detach().clone()
        self.mean_direction_ = None
        if transform == "log_counts":
            if self.library_slope_ is None:
                # Library sizes move log counts along u (1 for well-expressed genes; less for
                # genes with few counts, spatial._inputs.library_size_direction): without size
                # factors report the part orthogonal to it. Measured in benchmarks/RESULTS.md
                # (issue 19, sessions 19 and 21).
                u = kappa / kappa.norm()
                self.mean_direction_ = u
                w_intra, w_inter = _orthogonal_part(w_intra, u), _orthogonal_part(w_inter, u)
        elif cfg.fields and cfg.objective != "reference" and bool((x >= 0).all()):
            # Non-negative expression: the couplings along the mean direction are confounded
            # with the fields; report the identified part P W P (module docstring).
            u = x.mean(0)
            u = u / u.norm()
            self.mean_direction_ = u
            w_intra, w_inter = _orthogonal_part(w_intra, u), _orthogonal_part(w_inter, u)
        self.W_intra_ = w_intra
        self.W_inter_ = w_inter
        self.h_intra_ = model.h_intra.detach().clone()
        self.h_inter_ = model.h_inter.detach().clone()
        self.var_names_ = var_names
        self.genes_used_ = genes_used
        self.n_features_in_ = int(data.n_vars if isinstance(data, AnnData) else data.shape[1])
        return self

    def _fit_cg(
        self,
        model: CelcomenEnergy,
        params: list[torch.nn.Parameter],
        x: Tensor,
        nb: Neighbourhood,
        tracker: Tracker | None,
    ) -> None:
        """Score matching by conjugate gradients to ``tol`` (:mod:`spatial._solver`)."""
        cfg = self.config
        n, g = x.shape
        chunk = cfg.batch_size or max(1024, 2**22 // g)

        def penalty() -> Tensor:
            total = model.W_intra.square().sum() + model.W_inter.square().sum()
            return total + model.h_intra.square().sum() + model.h_inter.square().sum()

        # The written-out gradient of spatial._solver (checked against autograd in the tests).
        oracle = ScoreMatchingPass(
            params=params,
            terms=lambda cells: score_matching_terms(model, x[cells], nb.rows(cells)),
            penalty=penalty,
            n_cells=n,
            ridge=cfg.weight_decay,
            chunk=chunk,
            model=model,
            design=score_matching_design(x, nb.neighbours, nb.strength),
        )
        bar = tqdm(total=cfg.epochs, desc="celcomen fit (cg)", disable=not cfg.progress)

        def on_iteration(iteration: int, loss: float) -> None:
            bar.update(1)
            if tracker is not None:
                tracker.log_metrics({"loss": loss}, step=iteration)

        try:
            result = conjugate_gradient(
                oracle,
                oracle.vector(),
                max_iter=cfg.epochs,
                tol=cfg.tol,
                hessian=oracle.hessian,
                on_iteration=on_iteration,
            )
        finally:
            bar.close()
        if not (math.isfinite(result.relative_gradient) and np.isfinite(result.losses).all()):
            raise GraphDataError(
                f"data: the score-matching fit produced non-finite values (relative gradient "
                f"{result.relative_gradient}); check the expression for extreme values, or "
                f"raise weight_decay (now {cfg.weight_decay})"
            )
        oracle.load(result.theta)
        # One entry per iteration, as the tracker logs them (the start is result.losses[0]).
        self.losses_ = result.losses[1:] or result.losses[:1]
        self.n_iter_ = len(result.losses) - 1
        self.relative_gradient_: float | None = result.relative_gradient
        self.converged_ = result.converged
        if not result.converged:
            warnings.warn(
                f"the fit has not converged: after {self.n_iter_} conjugate-gradient "
                f"iterations the gradient norm is {result.relative_gradient:.2e} of its start, "
                f"above tol={cfg.tol:g}; raise epochs (now {cfg.epochs}) or weight_decay (now "
                f"{cfg.weight_decay:g}, which improves the conditioning)",
                UserWarning,
                stacklevel=3,
            )

    def _fit_steps(
        self,
        model: CelcomenEnergy,
        params: list[torch.nn.Parameter],
        objective: Callable[..., Tensor],
        solver: str,
        x: Tensor,
        nb: Neighbourhood,
        generator: torch.Generator,
        tracker: Tracker | None,
    ) -> None:
        """Adam or SGD over epochs of (mini-)batches."""
        cfg = self.config
        n = x.shape[0]
        optimizer_cls = torch.optim.Adam if solver == "adam" else torch.optim.SGD
        optimizer = optimizer_cls(params, lr=cfg.lr)
        batch = n if cfg.batch_size is None else min(cfg.batch_size, n)
        ridge = cfg.weight_decay / n  # lambda / N: vanishes with the number of cells
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
                loss = data_term + ridge * sum(
                    (p.square().sum() for p in params[2:]),
                    model.W_intra.square().sum() + model.W_inter.square().sum(),
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
        self.n_iter_ = cfg.epochs
        self.relative_gradient_ = None  # no gradient-norm criterion
        self.converged_ = True
        if cfg.projection == "reference":  # the reference protocol's SGD never settles
            return
        if len(self.losses_) > 1 and self.losses_[-1] > self.losses_[0]:
            raise GraphDataError(
                f"lr: the loss rose from {self.losses_[0]:.4g} to {self.losses_[-1]:.4g} over "
                f"{cfg.epochs} epochs, so the step size is too large for this data; lower lr "
                f"(now {cfg.lr:g}), or use the default optimizer='auto' for score matching"
            )
        if solver == "adam":
            self.converged_ = not _warn_unconverged(self.losses_)

    def _prepare(
        self,
        data: Any,
        edge_index: Tensor | None,
        edge_weight: Tensor | None,
        spatial_key: str,
        layer: str | None,
        device: torch.device | str | None = None,
        allow_negative: bool = False,
        *,
        mask_var: Any = None,
        columns: np.ndarray | None = None,
        max_genes: int | None = _inputs.MAX_GENES,
        max_memory: float | None = None,
        transform: str | None = "sphere",
    ) -> tuple[Tensor, Tensor, Tensor | None, list[str] | None, np.ndarray, str | None]:
        r"""Expression of the selected genes, graph, gene names and positions, checked.

        The genes are ``columns`` (a fitted estimator's, for :meth:`intervene`) or those
        ``mask_var`` selects (:func:`spatial._inputs.resolve_mask_var`); with ``mask_var`` the
        fit size is checked (:func:`spatial._inputs.check_fit_size`) before any expression is
        densified. ``transform`` is a config value (``"auto"`` resolves to ``"log_counts"`` on
        raw counts, :func:`spatial._inputs.is_raw_counts`, else to ``"sphere"``) or None.
        Cells whose selected genes are all zero are refused unless the transform is
        ``"log_counts"``, which places them (:func:`spatial._inputs.check_zero_rows`).
        Returns the rows on the sphere over the selected genes, :math:`x_i = c_i / \lVert c_i
        \rVert`, when the resolved transform is ``"sphere"`` (else the raw expression), the
        graph, the names of the selected genes (None for a tensor), their positions and the
        resolved transform.
        """
        if isinstance(data, Tensor) and data.ndim != 2:
            _inputs.check_expression(data, "data", non_negative=False)  # raises on the shape
        if not isinstance(data, (AnnData, Tensor)):
            raise GraphDataError(
                f"data: expected AnnData or a float tensor [N, G], got {type(data).__name__}"
            )
        is_adata = isinstance(data, AnnData)
        n_cells, n_vars = (
            (data.n_obs, data.n_vars) if isinstance(data, AnnData) else tuple(data.shape)
        )
        if columns is None:
            columns, selection = _inputs.resolve_mask_var(
                data.var if is_adata else None, n_vars, mask_var
            )
            target = device if device is not None else (data.device if not is_adata else "cpu")
            _inputs.check_fit_size(
                n_cells,
                len(columns),
                selection=selection,
                max_genes=max_genes,
                max_memory=max_memory,
                device=target,
                itemsize=(
                    data.element_size()
                    if isinstance(data, Tensor) and data.is_floating_point()
                    else 4
                ),
            )
        all_genes = len(columns) == n_vars
        if isinstance(data, AnnData):
            if edge_index is not None or edge_weight is not None:
                raise GraphDataError(
                    "edge_index: not allowed with AnnData input (the graph is read from "
                    f"obsp[{spatial_key + '_connectivities'!r}]); pass tensors instead"
                )
            x = _inputs.expression_from_adata(
                data, layer, allow_negative=allow_negative, columns=columns, zero_rows=False
            )
            where = _inputs.layer_name(layer)
            owned = True  # a fresh array: project in place
            edge_index, edge_weight = _inputs.graph_from_adata(
                data, spatial_key, self.config.n_neighbors
            )
            names = data.var_names
            var_names: list[str] | None = [str(names[c]) for c in columns]
        else:
            if edge_index is None:
                raise GraphDataError(
                    "edge_index: required with tensor expression; build one with "
                    "graphdata.spatial.knn_graph(coords, k=6)"
                )
            x = data if torch.is_floating_point(data) else data.float()
            if not all_genes:
                x = x[:, torch.as_tensor(columns, device=x.device)]  # [N, G_used]
            owned = x is not data
            _inputs.check_expression(x, "data", non_negative=False, zero_rows=False)
            where, var_names = "data", None
        _inputs.check_edge_index(edge_index, x.shape[0])
        if device is not None:
            moved = x.to(device)
            owned, x = owned or moved is not x, moved
        edge_index = edge_index.to(x.device)
        if edge_weight is not None:
            _inputs.check_edge_weight(edge_weight, edge_index.shape[1])
            edge_weight = edge_weight.to(device=x.device, dtype=x.dtype)
        _warn_isolated(edge_index, x.shape[0])
        if transform == "auto":
            counts = self.config.objective != "reference" and _inputs.is_raw_counts(x)
            transform = "log_counts" if counts else "sphere"
        if transform != "log_counts":  # c / ||c|| needs c != 0; log counts place a zero cell
            _inputs.check_zero_rows(
                x,
                where,
                names=list(map(str, data.obs_names)) if isinstance(data, AnnData) else None,
                n_selected=None if all_genes else len(columns),
            )
        if transform == "sphere":
            # x / ||x|| over the selected genes; in place when x is ours (one [N, G] less).
            x = _inputs.unit_rows(x, inplace=owned)
        return x, edge_index, edge_weight, var_names, columns, transform

    def _fitted_columns(self, data: Any) -> np.ndarray:
        """Positions in ``data`` of the genes the model was fitted on (for :meth:`intervene`).

        AnnData: ``var_names_`` looked up in ``data.var_names`` (every fitted gene must be
        there); a tensor fitted with ``mask_var``: ``genes_used_`` when it has the fit's
        ``n_features_in_`` columns. Without recorded genes (:meth:`from_matrices`) the data
        must have exactly the model's ``G`` genes.
        """
        g = self.model_.n_genes
        if not isinstance(data, (AnnData, Tensor)) or (isinstance(data, Tensor) and data.ndim != 2):
            raise GraphDataError(
                f"data: expected AnnData or a float tensor [N, {g}], got "
                f"{getattr(data, 'shape', type(data).__name__)}"
            )
        n_vars = data.n_vars if isinstance(data, AnnData) else int(data.shape[1])
        fitted = getattr(self, "var_names_", None)
        if isinstance(data, AnnData) and fitted is not None:
            lookup = {str(name): i for i, name in enumerate(data.var_names)}
            missing = [name for name in fitted if name not in lookup]
            if missing:
                raise GraphDataError(
                    f"data: {len(missing):,} of the {len(fitted):,} genes the model was fitted "
                    f"on are not in adata.var_names (first {missing[:5]}); intervene on the "
                    "AnnData the model was fitted on, or one holding these genes "
                    "(est.var_names_)"
                )
            return np.asarray([lookup[name] for name in fitted], dtype=np.int64)
        used = getattr(self, "genes_used_", None)
        if isinstance(data, Tensor) and used is not None and n_vars == self.n_features_in_:
            return np.asarray(used, dtype=np.int64)
        if n_vars != g:
            raise GraphDataError(
                f"data: the model has {g} genes, the data {n_vars}; pass expression over the "
                "fitted genes (the columns the fit used, est.genes_used_)"
            )
        return np.arange(g, dtype=np.int64)

    def _intervention_sizes(
        self, data: Any, layer: str | None, size_factors: Any, raw: Tensor, columns: np.ndarray
    ) -> Tensor:
        """The library sizes of a counterfactual's cells, found as the fit found them."""
        if size_factors is None and self.size_factor_key_ is not None:
            size_factors = self.size_factor_key_
        if size_factors is None and self.size_factors_from_ not in ("other_genes", "obs"):
            raise GraphDataError(
                "size_factors: the model was fitted with size factors given as an array; pass "
                "size_factors= the library sizes of the cells of data (an obs column or an "
                "array [N])"
            )
        if size_factors is False:
            raise GraphDataError(
                "size_factors: the model was fitted with size factors and its coordinates need "
                "them; pass None (found as the fit found them), an obs column or an array [N]"
            )
        sizes, _ = _resolve_size_factors(data, layer, columns, size_factors, raw.shape[0])
        if sizes is None:
            raise GraphDataError(
                "size_factors: the model was fitted with the totals of the genes it did not "
                "fit as size factors, and data has no such genes (or a cell without counts "
                "there); pass the AnnData the model was fitted on, or size_factors= an obs "
                "column or array [N]"
            )
        return sizes.to(device=raw.device, dtype=raw.dtype)

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
        method: str = "mean_field",
        tolerance: float | None = None,
        damping: float | None = None,
        max_iterations: int | None = None,
        steps: int | None = None,
        step_size: float | None = None,
        horizon: float | None = None,
        burn_in: int | None = None,
        seed: int | None = None,
        spatial_key: str = "spatial",
        layer: str | None = None,
        device: torch.device | str | None = None,
        allow_negative: bool = False,
        size_factors: Any = None,
        progress: bool = True,
    ) -> Any:
        r"""Counterfactual with the fitted matrices (see :mod:`spatial.counterfactual`).

        Args:
            data: AnnData or expression tensor (as in :meth:`fit`); only the fitted genes
                are read (``var_names_`` looked up in ``adata.var_names``; for a tensor fitted
                with ``mask_var``, the columns ``genes_used_``).
            genes: ``{gene name or column: value}`` in the units of the expression (raw counts
                for a ``transform_ == "log_counts"`` fit: the value :math:`v` is clamped at
                :math:`\log(1 + v) - m_g` in the fit's coordinates, as is the expression);
                names must be fitted genes (``var_names_``), columns index them (0 .. len - 1).
            cells: Boolean mask ``[N]``, integer indices, or obs names of the perturbed cells.
            edge_index: Graph ``[2, E]`` for tensor input.
            edge_weight: Optional base edge weights ``[E]`` for tensor input.
            method: ``"mean_field"`` (default): the clamped mean-field equilibrium, run to
                ``tolerance`` (no horizon); ``"langevin"``: the sampled equilibrium (clamped
                Langevin, Monte Carlo standard errors); ``"gradient"``: gradient ascent of a
                chosen horizon (:mod:`spatial.counterfactual`). Options of another method
                are refused; None means the method's default.
            tolerance: Mean field: residual to stop at (None: 1e-8).
            damping: Mean field: first damping of the fixed-point update in (0, 1], halved
                when the iteration stalls (None: 0.5).
            max_iterations: Mean field: updates per stage before giving up with a warning
                (None: 10,000).
            steps: Langevin: averaged steps after burn-in (None: 20,000); gradient:
                relaxation steps (None: 50).
            step_size: Langevin: sampler step (None: 0.002); gradient: Riemannian step size
                (None: lasts ``horizon`` model time units,
                :func:`spatial.counterfactual.auto_step_size`).
            horizon: Gradient only: relaxation time in model time units when ``step_size`` is
                None (None: 4).
            burn_in: Langevin only: steps discarded first (None: 2,000).
            seed: Langevin only: seed of the noise (None: 0).
            spatial_key: AnnData key of coordinates / graph.
            layer: AnnData expression layer; None uses ``adata.X``.
            device: Device to relax on; None (default) uses the model's device.
            allow_negative: AnnData only: accept signed sphere coordinates (as in :meth:`fit`).
            size_factors: For a fit with size factors (``library_slope_`` set): the data's
                library sizes, as :meth:`fit` takes them; None (default): found as the fit
                found them (the same ``obs`` column, or the totals of the genes not fitted);
                an array ``[N]`` is required when the fit was given one. The expression is
                then :math:`y_i = \log(1 + c_i) - m - (\log s_i - \bar\ell)\,\kappa`, and a
                clamp at :math:`v` counts is :math:`\log(1 + v) - m_g`: :math:`v` counts at
                the fit's mean log library size :math:`\bar\ell`.
            progress: Show a tqdm bar over the iterations / relaxation steps when stderr is a
                terminal; False: never. Default True.

        Returns:
            A :class:`spatial.counterfactual.Counterfactual` (its ``protocol`` records the
            method, iterations, residual and tolerance, or steps and step size).
        """
        from spatial.counterfactual import simulate_intervention  # avoid an import cycle

        self._check_fitted()
        log_counts = self.transform_ == "log_counts"
        offset = self.gene_offset_
        if log_counts and offset is None:
            raise GraphDataError(
                "transform: a 'log_counts' model needs its gene means (gene_offset_) to "
                "intervene, got None; fit it on the counts, or pass gene_offset= to "
                "Celcomen.from_matrices"
            )
        device = device or self.model_.intra_raw.device
        # The genes the model was fitted on, read from the data (never all of its genes).
        raw, edge_index, edge_weight, var_names, fitted, _ = self._prepare(
            data,
            edge_index,
            edge_weight,
            spatial_key,
            layer,
            device,
            allow_negative,
            columns=self._fitted_columns(data),
            transform="log_counts" if log_counts else None,  # raw expression either way
        )
        obs_names: Sequence[str] | None = (
            list(map(str, data.obs_names)) if isinstance(data, AnnData) else None
        )
        all_names = list(map(str, data.var_names)) if isinstance(data, AnnData) else None
        columns = _inputs.resolve_genes(genes, var_names, raw.shape[1], all_names=all_names)
        mask = _inputs.resolve_cells(cells, obs_names, raw.shape[0])
        for column, value in columns.items():
            _inputs.check_real(
                f"genes[{column!r}]",
                value,
                low=None if allow_negative else 0.0,
                fix="pass a finite expression value"
                + ("" if allow_negative else " >= 0 (0 = knock-out)"),
            )
        if log_counts:
            # The fit's coordinates (module docstring): clamps and expression in centred log
            # counts, y = log(1 + c) - m with the fit's gene means m.
            if bool((raw < 0).any()):
                raise GraphDataError(
                    "data: a transform='log_counts' model intervenes on raw counts, got "
                    "negative values; pass the layer the model was fitted on"
                )
            assert offset is not None  # checked above
            sizes = None
            if self.library_slope_ is not None:
                sizes = self._intervention_sizes(data, layer, size_factors, raw, fitted)
            raw, offset = _inputs.log_counts_coordinates(raw, offset)
            if sizes is not None:
                assert self.library_slope_ is not None and self.log_size_center_ is not None
                raw, _ = _inputs.remove_library_size(
                    raw, sizes.log(), self.library_slope_, self.log_size_center_
                )
                _inputs.check_nonzero_rows(raw)
            # in raw's dtype, as the expression: a clamp at a cell's own count changes nothing
            values = torch.tensor(list(columns.values()), dtype=offset.dtype, device=offset.device)
            mapped = torch.log1p(values) - offset[list(columns)]
            columns = dict(zip(columns, mapped.tolist(), strict=True))
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
            method=method,
            tolerance=tolerance,
            damping=damping,
            max_iterations=max_iterations,
            steps=steps,
            step_size=step_size,
            horizon=horizon,
            burn_in=burn_in,
            seed=seed,
            progress=progress,
        )


def _resolve_size_factors(
    data: AnnData | Tensor, layer: str | None, columns: np.ndarray, size_factors: Any, n: int
) -> tuple[Tensor | None, str | None]:
    """The size factors of a log-counts fit or counterfactual and where they came from.

    ``size_factors`` as :meth:`Celcomen.fit` takes it: None (the other genes' totals when the
    fit leaves genes out and every cell has a count there; else none), False, an ``obs``
    column name, or an array ``[N]``.
    """
    if size_factors is False:
        return None, None
    if size_factors is None:
        totals = _inputs.other_genes_total(data, layer, columns)
        if totals is None:
            return None, None
        other = int(data.n_vars if isinstance(data, AnnData) else data.shape[1]) - len(columns)
        empty = totals <= 0
        if empty.any():
            warnings.warn(
                f"size_factors: {int(empty.sum()):,} cells have no count in the {other:,} genes "
                "outside the fit, so their library sizes are unknown; the couplings are "
                "reported orthogonal to the library-size direction instead. Pass "
                "size_factors= an obs column or array of library sizes, or False to silence "
                "this",
                stacklevel=3,
            )
            return None, None
        genes = "gene" if other == 1 else "genes"
        return torch.from_numpy(totals), f"total counts of the {other:,} {genes} not fitted"
    if isinstance(size_factors, str):
        if not isinstance(data, AnnData):
            raise GraphDataError(
                f"size_factors: an obs column name ({size_factors!r}) needs AnnData input; "
                "for a tensor pass the size factors as an array [N]"
            )
        if size_factors not in data.obs:
            raise KeyError(
                f"obs[{size_factors!r}]: no such column (numeric columns: "
                f"{sorted(c for c in data.obs if np.issubdtype(data.obs[c].dtype, np.number))}"
                "); pass an obs column of library sizes, e.g. after "
                "sc.pp.calculate_qc_metrics(adata) obs['total_counts']"
            )
        values = _inputs.check_size_factors(
            np.asarray(data.obs[size_factors]), n, f"obs[{size_factors!r}]"
        )
        return values, f"obs[{size_factors!r}]"
    return _inputs.check_size_factors(size_factors, n), "size_factors"


def _orthogonal_part(w: Tensor, u: Tensor) -> Tensor:
    r"""The part :math:`P W P`, :math:`P = I - u u^\top`, of a symmetric ``w`` orthogonal to the
    unit vector ``u``: ``w`` minus its closest matrix of the form :math:`u v^\top + v u^\top`.
    """  # noqa: D205
    wu = w @ u  # [G]
    return w - torch.outer(u, wu) - torch.outer(wu, u) + (u @ wu) * torch.outer(u, u)


def _project_reference(model: CelcomenEnergy) -> None:
    """Reference step: W <- clip((W + W^T)/2, 0, 1) with unit diagonal (``normalize_g2g``)."""
    with torch.no_grad():
        for raw in (model.intra_raw, model.inter_raw):
            w = (0.5 * (raw + raw.T)).clamp(0.0, 1.0)
            w.fill_diagonal_(1.0)
            raw.copy_(w)


def _warn_unconverged(losses: list[float]) -> bool:
    """Warn (and return True) when the last tenth of a long fit made > 1 % of its progress."""
    if len(losses) < 50:
        return False
    total = losses[0] - losses[-1]
    share = (losses[-(len(losses) // 10)] - losses[-1]) / total if total > 0 else 0.0
    if share > 0.01:
        warnings.warn(
            f"the last tenth of the epochs made {100 * share:.1f} % of the fit's progress; the "
            "fit has not converged: raise epochs or lr (Adam moves each entry by about lr per "
            "epoch, so strongly concentrated data, e.g. real expression, need a larger lr)",
            UserWarning,
            stacklevel=4,
        )
    return share > 0.01


def _warn_low_depth(counts: Tensor) -> bool:
    r"""Warn (and return True) when most fitted genes have a mean below one count per cell.

    For :math:`c \sim \mathrm{Poisson}(\lambda)` and any transform :math:`f`, :math:`\mathbb E
    f(c) = f(0) + \lambda (f(1) - f(0)) + O(\lambda^2)`: below about one count the log count's
    expectation is linear in the rate, not in its log, so no per-entry transform recovers the
    log-rate field whose couplings the log-counts route estimates. On a Slide-seq-like
    simulator at about 170 UMIs per bead the intra signs were lost, and recovered at ten times
    the depth (``benchmarks/RESULTS.md``, issue 19, sessions 23-24). The test is the median over
    the fitted genes of their mean count per cell.
    """
    means = counts.mean(0, dtype=torch.float64)  # [G]
    median = float(means.median())
    if median >= 1.0:
        return False
    low, total = int((means < 1.0).sum()), means.numel()
    warnings.warn(
        f"data: {low} of {total} fitted genes have a mean below one count per cell (median "
        f"{median:.2g}); at that depth a log count's expectation is about the rate times log 2, "
        "linear in the rate rather than in its log, so the couplings are biased toward those "
        "of the rates and their signs are unreliable (benchmarks/RESULTS.md, issue 19); fit "
        "better-expressed genes (mask_var), or aggregate cells or spots before fitting",
        UserWarning,
        stacklevel=3,
    )
    return True


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
