r"""Counterfactual perturbations (Simcomen): clamp genes, compare with a sham, at equilibrium.

After Megas et al., "Celcomen: spatial causal disentanglement for single-cell and tissue
perturbation modeling", arXiv:2409.05804 (Simcomen), with these fixes of the reference code
(Teichlab/celcomen, ``models/simcomen.py``):

* the perturbed coordinates stay clamped (as CellOracle re-clamps; Kamimoto et al., Nature
  2023), instead of drifting back;
* a sham run with the *same* coordinates clamped at their original values, so :math:`\Delta` =
  perturbed - sham isolates the changed values (exactly 0 for a perturbation that changes
  nothing);
* by default (``method="mean_field"``) the reported state is an *equilibrium* of the model, not
  the end of a relaxation of arbitrary length: the clamped mean-field fixed point
  (:func:`spatial.equilibrium.clamped_mean_field`; each cell's mean is the von Mises-Fisher mean
  :math:`A_d(\kappa)\, g / \lVert g \rVert` in its local field at the neighbours' means, with the
  free coordinates on the sphere of radius :math:`\sqrt{1 - \lVert c \rVert^2}` left by the
  clamped values :math:`c`). The "horizon" is convergence: the sham equilibrium :math:`M_s` is
  solved from the observed tissue, then the perturbed and the sham clamps are iterated together
  from :math:`M_s` (the perturbed one with its clamped values set) until both residuals are
  below the tolerance, and :math:`\Delta = M_p - M_s`. Starting both from :math:`M_s` takes the
  perturbed fixed point continuously connected to the sham one (linear response for small
  perturbations) rather than one selected by a transient. The result reports the iterations,
  the residual and the tolerance, and does not change with more iterations or another damping
  (tests/spatial/test_counterfactual_equilibrium.py);
* ``method="langevin"`` estimates the same contrast under the exact model instead of its mean
  field: clamped Langevin chains for both clamps, driven by the same noise, time-averaged after
  a burn-in, with batch-means standard errors (:func:`spatial.equilibrium.sampled_contrast`).
  It agrees with the mean field on weakly coupled tissues (Pearson .96-1.00); with strong
  couplings its two chains decouple and the error reaches the size of the effect
  (benchmarks/bench_counterfactual.py).

``method="gradient"`` keeps the earlier protocol: Riemannian gradient *ascent* on the energy
(:func:`relax`), which run long goes to a local *mode* (maximum) of the energy, never an
average, so its effect grows with the horizon (issue 19: ring 3 5e-5 at the default, 3e-3 at
10x longer, with the true matrices). It is there for the paper's Simcomen protocol and for
"where does the most likely state move"; ``steps x step_size`` plays the role of time, measured
in the model's own unit :math:`1/L`, where

.. math::
    L = 2 \lVert W_{\mathrm{intra}} \rVert_2 + \lVert S \rVert_2 \lVert W_{\mathrm{inter}} \rVert_2,
    \qquad S = A + A^\top,

is the Lipschitz constant of the local field :math:`h(X) = 2 X W_{\mathrm{intra}} + S X
W_{\mathrm{inter}}` in :math:`X` (Frobenius norm; :math:`\lVert S \rVert_2 \le 2` for GCN
weights). With ``step_size=None`` the step is :math:`\eta = \tau / (\text{steps}\, L)` with
horizon :math:`\tau = 4` time units (:func:`auto_step_size`). Neither method is a
structural-causal intervention (no abduction).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from graphdata.errors import GraphDataError
from spatial._inputs import check_edge_index, check_graph, check_int, check_real, unit_rows
from spatial._messages import neighbour_operator
from spatial.equilibrium import clamped_mean_field, sampled_contrast
from spatial.model import CelcomenEnergy

__all__ = [
    "METHODS",
    "Counterfactual",
    "auto_step_size",
    "check_method_options",
    "relax",
    "ring_index",
    "ring_summary",
    "simulate_intervention",
]

#: Rings reported: 0 = perturbed cells, 1, 2, and 3 = graph distance >= 3 or unreachable.
N_RINGS = 4

#: Counterfactual methods (module docstring): the clamped mean-field equilibrium (default), the
#: sampled equilibrium (clamped Langevin), and the gradient-ascent relaxation of a horizon.
METHODS = ("mean_field", "langevin", "gradient")

#: The options each method reads (None = the method's default), and those defaults.
_OPTIONS: dict[str, dict[str, Any]] = {
    "mean_field": {"tolerance": 1e-8, "damping": 0.5, "max_iterations": 10_000},
    "langevin": {"steps": 20_000, "burn_in": 2_000, "step_size": 0.002, "seed": 0},
    "gradient": {"steps": 50, "step_size": None, "horizon": 4.0},
}


def check_method_options(method: str, given: Mapping[str, object], *, flags: bool = False) -> None:
    """Refuse an option that ``method`` does not read (e.g. ``steps`` with ``"mean_field"``).

    Args:
        method: One of :data:`METHODS`.
        given: Option name -> value; None means not given.
        flags: Name the command-line flags (``--steps``, ``--method``) instead of the keyword
            arguments, for ``graphlib spatial perturb``. Default False.

    Raises:
        GraphDataError: For the first given option of another method; the message names the
            methods that read it.

    Examples:
        >>> check_method_options("langevin", {"steps": 10, "tolerance": None})
        >>> check_method_options("mean_field", {"steps": 10}, flags=True)
        Traceback (most recent call last):
        ...
        graphdata.errors.GraphDataError: --steps: applies to --method langevin or gradient only, got --steps 10 with --method mean_field; drop --steps or pass --method langevin
    """  # noqa: E501
    for name, value in given.items():
        if value is not None and name not in _OPTIONS[method]:
            users = [m for m, names in _OPTIONS.items() if name in names]
            if flags:
                flag = "--" + name.replace("_", "-")
                raise GraphDataError(
                    f"{flag}: applies to --method {' or '.join(users)} only, got {flag} "
                    f"{value} with --method {method}; drop {flag} or pass --method {users[0]}"
                )
            raise GraphDataError(
                f"{name}: applies to method={' or '.join(map(repr, users))} only, got "
                f"{name}={value!r} with method={method!r}; drop {name} or pass "
                f"method={users[0]!r}"
            )


@dataclass
class Counterfactual:
    """Result of :func:`simulate_intervention`; all tensors on the input's device.

    Attributes:
        perturbed: Perturbed tissue ``[N, G]``: the mean-field means (rows of norm < 1) or,
            for ``method="gradient"``, the relaxed unit rows.
        sham: Sham tissue ``[N, G]``, the same for the unperturbed clamp.
        delta: ``perturbed - sham`` ``[N, G]``.
        clamped: Boolean mask of clamped coordinates ``[N, G]``.
        ring: Graph-distance ring of each cell to the perturbed cells ``[N]`` (0..3, 3 = 3+).
        ring_mean: Mean ``delta`` per ring and gene ``[4, G]`` (0 for an empty ring).
        ring_size: Cells per ring ``[4]``.
        step_size: The step used (``"gradient"``: resolved when ``step_size=None`` was asked
            for; ``"langevin"``: the sampler's); None for ``"mean_field"``.
        method: ``"mean_field"``, ``"langevin"`` or ``"gradient"``.
        protocol: What the result was computed at, for the record (e.g. AnnData ``uns``):
            ``method`` and, for ``"mean_field"``, ``iterations`` (updates of the joint
            perturbed/sham run from the sham equilibrium), ``sham_iterations`` (from the
            observed tissue to the sham equilibrium), ``residual`` (largest
            :math:`|T(h(M)) - M|` of the returned states), ``tolerance``, ``damping`` (the
            first), ``final_damping`` (the smallest of the two stages' last, after halvings of
            a stalled iteration: :func:`spatial.equilibrium.clamped_mean_field`),
            ``converged``; for ``"gradient"``, ``steps``, ``step_size`` and ``horizon`` (None
            when ``step_size`` was given); for ``"langevin"``, ``steps``, ``burn_in``,
            ``step_size``, ``seed``, ``batches``. Scalars only (fit for AnnData ``uns``).
        stderr: ``"langevin"``: batch-means standard error of ``delta`` ``[N, G]``; else None.
        ring_stderr: ``"langevin"``: standard error of ``ring_mean`` ``[4, G]``; else None.
    """

    perturbed: Tensor
    sham: Tensor
    delta: Tensor
    clamped: Tensor
    ring: Tensor
    ring_mean: Tensor
    ring_size: Tensor
    step_size: float | None
    method: str = "gradient"
    protocol: dict[str, Any] = field(default_factory=dict)
    stderr: Tensor | None = None
    ring_stderr: Tensor | None = None


def _check_state(x: Tensor, name: str) -> None:
    """Raise unless ``x`` is a floating ``[N, G]`` tensor with finite entries."""
    if not isinstance(x, Tensor) or x.ndim != 2 or not torch.is_floating_point(x):
        got = (tuple(x.shape), x.dtype) if isinstance(x, Tensor) else type(x).__name__
        raise GraphDataError(f"{name}: expected a floating tensor [N, G], got {got}")
    if not bool(torch.isfinite(x).all()):
        bad = ~torch.isfinite(x)
        rows = torch.nonzero(bad.any(1)).flatten()[:5].tolist()
        raise GraphDataError(
            f"{name}: expected finite expression, got {int(bad.sum())} NaN/inf values (first rows "
            f"{rows}); impute or drop them"
        )


def _operator_norm(operator: Tensor, *, iterations: int = 100) -> float:
    r"""Spectral norm :math:`\lVert S \rVert_2` of a symmetric non-negative sparse operator.

    Power iteration from the all-ones vector: :math:`v \leftarrow S v / \lVert S v \rVert`,
    returning :math:`\lVert S v \rVert` for the last unit :math:`v` (a lower bound that
    converges to :math:`\lVert S \rVert_2`, also when :math:`-\lVert S \rVert_2` is an
    eigenvalue, as for bipartite graphs). Deterministic.

    Args:
        operator: Sparse (CSR) or dense ``[N, N]`` symmetric matrix with non-negative entries.
        iterations: Power iterations (default 100).

    Returns:
        The estimate (0.0 for an empty graph).
    """
    n = operator.shape[0]
    v = torch.full((n, 1), 1.0 / max(n, 1) ** 0.5, dtype=operator.dtype, device=operator.device)
    norm = torch.zeros((), dtype=operator.dtype, device=operator.device)
    for _ in range(iterations):
        w = operator @ v
        norm = w.norm()
        if float(norm) == 0.0:
            return 0.0
        v = w / norm
    return float(norm)


def auto_step_size(
    model: CelcomenEnergy,
    edge_index: Tensor,
    weight: Tensor,
    num_nodes: int,
    *,
    steps: int = 50,
    horizon: float = 4.0,
) -> float:
    r"""Step size for a relaxation of ``horizon`` model time units in ``steps`` steps.

    .. math::
        \eta = \frac{\tau}{\text{steps}\,L}, \qquad
        L = 2 \lVert W_{\mathrm{intra}} \rVert_2
        + \lVert A + A^\top \rVert_2 \lVert W_{\mathrm{inter}} \rVert_2,

    :math:`L` the Lipschitz constant of the local field (module docstring), :math:`A_{ij} =
    w_{ij}` for each edge :math:`j \to i`, :math:`\tau` = ``horizon``.

    Args:
        model: The energy (its matrices are read, not changed).
        edge_index: ``[2, E]`` source -> target.
        weight: Normalised edge weights ``[E]``.
        num_nodes: ``N``.
        steps: Relaxation steps (default 50).
        horizon: :math:`\tau` in time units :math:`1/L` (default 4).

    Returns:
        :math:`\eta`; with all-zero matrices, ``horizon / steps`` (nothing moves anyway).

    Examples:
        >>> model = CelcomenEnergy(2)
        >>> model.set_matrices(torch.eye(2), torch.zeros(2, 2))
        >>> auto_step_size(model, torch.zeros(2, 0, dtype=torch.long), torch.zeros(0), 3)
        0.04
    """
    check_int("steps", steps, 1)
    check_real(
        "horizon",
        horizon,
        low=0.0,
        low_open=True,
        fix="pass a positive number of model time units, e.g. horizon=4",
    )
    check_int("num_nodes", num_nodes, 0)
    check_graph(edge_index, weight, num_nodes)
    with torch.no_grad():
        w_intra, w_inter = model.W_intra, model.W_inter
        s_norm = (
            _operator_norm(neighbour_operator(edge_index, weight.to(w_intra.dtype), num_nodes))
            if edge_index.shape[1]
            else 0.0
        )
        lipschitz = 2.0 * float(torch.linalg.matrix_norm(w_intra, ord=2)) + s_norm * float(
            torch.linalg.matrix_norm(w_inter, ord=2)
        )
    return float(horizon) / (steps * lipschitz) if lipschitz > 0 else float(horizon) / steps


def relax(
    model: CelcomenEnergy,
    x: Tensor,
    edge_index: Tensor,
    weight: Tensor,
    *,
    clamped: Tensor | None = None,
    steps: int = 50,
    step_size: float = 0.01,
    progress: bool = True,
    desc: str = "relax",
) -> Tensor:
    r"""Riemannian gradient ascent on the energy with clamped coordinates held fixed.

    Write each row as :math:`x_i = c_i + y_i` with :math:`c_i` its clamped coordinates and
    :math:`y_i` its free ones; :math:`y_i` lives on the sphere of radius
    :math:`r_i = \sqrt{1 - \lVert c_i \rVert^2}`. With :math:`g_i` the free part of the local
    field :math:`h_i = \nabla_{x_i} E`, one step is

    .. math::
        y_i \leftarrow r_i \frac{y_i + \eta\,(g_i - (y_i^\top g_i / r_i^2)\, y_i)}
        {\lVert y_i + \eta\,(g_i - (y_i^\top g_i / r_i^2)\, y_i) \rVert},

    i.e. :math:`x \leftarrow \mathrm{normalize}(x + \eta (I - x x^\top) \nabla_x E)` on the free
    coordinates (descent on :math:`-E`). Rows with nothing free stay as they are.

    Args:
        model: The energy (its matrices are not changed).
        x: Start state ``[N, G]``, unit rows.
        edge_index: ``[2, E]`` source -> target.
        weight: Normalised edge weights ``[E]``.
        clamped: Boolean mask ``[N, G]`` of fixed coordinates; None (default) clamps nothing.
        steps: Number of steps (default 50).
        step_size: :math:`\eta` (default 0.01).
        progress: Show a tqdm bar over the steps when stderr is a terminal (never in a
            pipe or a log file); False: never. Default True.
        desc: The bar's label. Default ``"relax"``.

    Returns:
        The relaxed state ``[N, G]`` (unit rows; clamped entries bit-identical to ``x``).

    Examples:
        >>> model = CelcomenEnergy(2)
        >>> model.set_matrices(torch.tensor([[1.0, 0.0], [0.0, 0.0]]), torch.zeros(2, 2))
        >>> x = torch.tensor([[0.6, 0.8]])
        >>> no_edges = torch.zeros(2, 0, dtype=torch.long)
        >>> relax(model, x, no_edges, torch.zeros(0), steps=200, step_size=0.05).round(decimals=3)
        tensor([[1., 0.]])
    """
    check_int("steps", steps, 0)
    check_real(
        "step_size",
        step_size,
        low=0.0,
        low_open=True,
        fix="pass a positive step size, e.g. step_size=0.01",
    )
    _check_state(x, "x")
    check_graph(edge_index, weight, x.shape[0])
    if clamped is None:
        clamped = torch.zeros_like(x, dtype=torch.bool)
    free = (~clamped).to(x.dtype)
    fixed = torch.where(clamped, x, torch.zeros_like(x))
    radius_sq = (1.0 - fixed.square().sum(-1, keepdim=True)).clamp(min=0.0)  # [N, 1]
    movable = radius_sq > 1e-12
    safe_sq = torch.where(movable, radius_sq, torch.ones_like(radius_sq))
    y = x * free
    operator = neighbour_operator(edge_index, weight.to(x.dtype), x.shape[0])  # [N, N] CSR
    strength = (operator @ torch.ones_like(x[:, :1])).squeeze(-1)  # [N], row sums of S
    from tqdm.auto import tqdm

    # disable=None: tqdm shows the bar only on a terminal.
    with torch.no_grad():
        for _ in tqdm(range(steps), desc=desc, unit="step", disable=None if progress else True):
            state = fixed + y
            field = model.field_from(state, operator @ state, strength) * free  # [N, G]
            tangent = field - ((y * field).sum(-1, keepdim=True) / safe_sq) * y
            step = y + step_size * tangent
            norm = step.norm(dim=-1, keepdim=True)
            if not bool(torch.isfinite(norm).all()):
                # A large step_size overflows the squares (inf norm: every row would become
                # 0); the direction is what counts, so divide by the largest entry first.
                step = step / step.abs().amax(dim=-1, keepdim=True).clamp(min=1e-30)
                norm = step.norm(dim=-1, keepdim=True)
            y = torch.where(movable, step * (safe_sq.sqrt() / norm.clamp(min=1e-30)), y)
    out = fixed + y
    if not bool(torch.isfinite(out).all()):
        raise GraphDataError(
            f"step_size: the relaxation diverged ({int((~torch.isfinite(out)).sum())} non-finite "
            f"entries after {steps} steps of {step_size:g}); lower step_size or leave it None "
            "(automatic)"
        )
    return out


def ring_index(edge_index: Tensor, sources: Tensor, num_nodes: int) -> Tensor:
    """Graph distance (edges in either direction) to the nearest source, capped at 3.

    Args:
        edge_index: ``[2, E]``.
        sources: Boolean mask ``[N]`` of the perturbed cells.
        num_nodes: ``N``.

    Returns:
        ``[N]`` int64: 0 for sources, 1, 2, and 3 for distance >= 3 or unreachable.

    Examples:
        >>> path = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 4]])
        >>> ring_index(path, torch.tensor([True, False, False, False, False]), 5)
        tensor([0, 1, 2, 3, 3])
    """
    check_int("num_nodes", num_nodes, 0)
    check_edge_index(edge_index, num_nodes)
    if (
        not isinstance(sources, Tensor)
        or sources.dtype != torch.bool
        or sources.shape != (num_nodes,)
    ):
        got = (
            (tuple(sources.shape), sources.dtype) if isinstance(sources, Tensor) else type(sources)
        )
        raise GraphDataError(
            f"sources: expected a bool mask [N] = [{num_nodes}] of the perturbed cells, got {got}"
        )
    ring = torch.full((num_nodes,), N_RINGS - 1, dtype=torch.long, device=edge_index.device)
    reached = sources.clone()
    ring[reached] = 0
    frontier = sources.clone()
    for distance in range(1, N_RINGS - 1):
        hit = torch.zeros_like(reached)
        hit[edge_index[1][frontier[edge_index[0]]]] = True  # forward neighbours
        hit[edge_index[0][frontier[edge_index[1]]]] = True  # backward neighbours
        frontier = hit & ~reached
        ring[frontier] = distance
        reached |= frontier
    return ring


def ring_summary(delta: Tensor, ring: Tensor) -> tuple[Tensor, Tensor]:
    """Mean ``delta`` per ring and gene ``[4, G]`` and the ring sizes ``[4]`` (empty ring: 0)."""
    size = torch.bincount(ring, minlength=N_RINGS).to(delta.dtype)  # [4]
    total = torch.zeros(N_RINGS, delta.shape[1], dtype=delta.dtype, device=delta.device)
    total.index_add_(0, ring, delta)
    return total / size.clamp(min=1).unsqueeze(-1), size


def simulate_intervention(
    model: CelcomenEnergy,
    x: Tensor,
    edge_index: Tensor,
    weight: Tensor,
    genes: dict[int, float],
    cells: Tensor,
    *,
    method: str = "mean_field",
    tolerance: float | None = None,
    damping: float | None = None,
    max_iterations: int | None = None,
    steps: int | None = None,
    step_size: float | None = None,
    horizon: float | None = None,
    burn_in: int | None = None,
    seed: int | None = None,
    progress: bool = True,
) -> Counterfactual:
    r"""Clamp genes in chosen cells and compare with a sham, at equilibrium or after a relaxation.

    The perturbed start sets :math:`v_{ig} \leftarrow a_g` for the chosen cells :math:`i` and
    genes :math:`g` in the expression's own units and projects rows to the sphere; the sham
    start projects the unchanged rows. Both clamp the same coordinates, at the perturbed and
    at the original values.

    ``method="mean_field"`` (default): :math:`M_s` = the clamped mean-field fixed point of the
    sham from the observed tissue; then the perturbed clamp (clamped values set in :math:`M_s`)
    and the sham clamp are iterated together from :math:`M_s` to their fixed points
    :math:`M_p, M_s'`, and :math:`\Delta = M_p - M_s'` (module docstring;
    :func:`spatial.equilibrium.clamped_mean_field`). No horizon: the run stops at
    ``tolerance``. ``method="langevin"``: both clamps sampled by clamped Langevin dynamics
    driven by the same noise from the perturbed and sham starts, :math:`\Delta` = the
    difference of the time averages after ``burn_in``, with batch-means standard errors
    (:func:`spatial.equilibrium.sampled_contrast`); the exact model's equilibrium, not its mean
    field, at the price of Monte Carlo error. ``method="gradient"``: ``steps`` :func:`relax`
    steps of ``step_size`` from the perturbed and the sham starts, :math:`\Delta` their
    difference.

    Args:
        model: Fitted energy (e.g. ``Celcomen.model_``).
        x: Expression ``[N, G]`` in its own units (rows need not be unit).
        edge_index: ``[2, E]`` source -> target.
        weight: Normalised edge weights ``[E]``.
        genes: ``{column: value}`` in the units of ``x`` (0 = knock-out of non-negative
            expression; :meth:`spatial.celcomen.Celcomen.intervene` passes centred log counts
            for a ``transform="log_counts"`` fit).
        cells: Boolean mask ``[N]`` of perturbed cells.
        method: ``"mean_field"`` (default), ``"langevin"`` or ``"gradient"`` (:data:`METHODS`).
        tolerance: Mean field: stop when :math:`\max |T(h(M)) - M| \le` this; None: 1e-8.
        damping: Mean field: the first :math:`\alpha \in (0, 1]` of the damped update, halved
            when the iteration stalls; None: 0.5.
        max_iterations: Mean field: give up with a warning after this many updates per stage;
            None: 10,000.
        steps: Langevin: averaged steps after burn-in (None: 20,000, a multiple of 10, the
            number of batches of the standard error); gradient: relaxation steps (None: 50).
        step_size: Langevin: :math:`\eta` (None: 0.002); gradient: Riemannian step size
            (None: :func:`auto_step_size` with ``horizon``).
        horizon: Gradient only: relaxation time in model time units when ``step_size`` is
            None; None: 4.
        burn_in: Langevin only: steps discarded first; None: 2,000.
        seed: Langevin only: seed of the (common) noise; None: 0.
        progress: Show tqdm bars (sham, counterfactual) when stderr is a terminal; False:
            never. Default True.

    Returns:
        A :class:`Counterfactual`; its ``protocol`` says what it was computed at.

    Raises:
        GraphDataError: If the perturbation leaves a cell with zero expression, or for an
            option of another method (e.g. ``steps`` with ``method="mean_field"``).

    Warns:
        RuntimeWarning: If the mean field does not reach ``tolerance``.
    """
    _check_state(x, "x")
    check_graph(edge_index, weight, x.shape[0])
    if not isinstance(cells, Tensor) or cells.dtype != torch.bool or cells.shape != x.shape[:1]:
        got = (tuple(cells.shape), cells.dtype) if isinstance(cells, Tensor) else type(cells)
        raise GraphDataError(
            f"cells: expected a bool mask [N] = [{x.shape[0]}] of the perturbed cells, got {got}; "
            "for cell ids pass a mask, e.g. torch.zeros(N, dtype=torch.bool).index_fill_(0, ids, "
            "True)"
        )
    for column in genes:
        check_int("genes (a key)", column, 0, x.shape[1] - 1)
    if method not in METHODS:
        raise GraphDataError(
            f"method: expected one of {METHODS}, got {method!r}; 'mean_field' reports the "
            "clamped mean-field equilibrium, 'langevin' the sampled one, 'gradient' a "
            "relaxation of a chosen horizon"
        )
    given = {
        "tolerance": tolerance,
        "damping": damping,
        "max_iterations": max_iterations,
        "steps": steps,
        "step_size": step_size,
        "horizon": horizon,
        "burn_in": burn_in,
        "seed": seed,
    }
    check_method_options(method, given)
    opt: dict[str, Any] = {
        name: default if given[name] is None else given[name]
        for name, default in _OPTIONS[method].items()
    }
    if method != "mean_field":
        check_int("steps", opt["steps"], 1)
    if opt.get("step_size") is not None:
        check_real(
            "step_size",
            opt["step_size"],
            low=0.0,
            low_open=True,
            fix="pass a positive step size, or None (the method's default)",
        )
    for column, value in genes.items():
        check_real(f"genes[{column!r}]", value, fix="pass a finite expression value")
    columns = torch.tensor(sorted(genes), dtype=torch.long, device=x.device)
    values = torch.tensor([genes[c] for c in sorted(genes)], dtype=x.dtype, device=x.device)
    clamped = torch.zeros_like(x, dtype=torch.bool)
    clamped[cells.nonzero().flatten().unsqueeze(-1), columns] = True  # [N, G]
    edited = x.clone()
    edited[:, columns] = torch.where(
        clamped[:, columns], values.expand_as(x[:, columns]), x[:, columns]
    )
    dead = edited.abs().sum(-1) == 0
    if bool(dead.any()):
        raise GraphDataError(
            f"genes: the perturbation leaves {int(dead.sum())} cells with zero expression (all "
            "their expressed genes were set to 0), which has no direction on the sphere; "
            "perturb fewer genes or leave those cells out"
        )
    start, sham_start = unit_rows(edited), unit_rows(x)
    protocol: dict[str, Any]
    stderr = ring_stderr = None
    if method == "mean_field":
        options = {**opt, "progress": progress}
        sham_eq = clamped_mean_field(
            model, sham_start, edge_index, weight, clamped=clamped, desc="sham", **options
        )
        base = sham_eq.mean64  # [N, G] float64
        pair = torch.stack([torch.where(clamped, start.to(base.dtype), base), base])  # [2, N, G]
        joint = clamped_mean_field(
            model,
            pair,
            edge_index,
            weight,
            clamped=torch.stack([clamped, clamped]),
            desc="counterfactual",
            **options,
        )
        perturbed, sham = joint.mean[0], joint.mean[1]
        delta = (joint.mean64[0] - joint.mean64[1]).to(x.dtype)  # differenced in float64
        protocol = {
            "method": method,
            "iterations": joint.iterations,
            "sham_iterations": sham_eq.iterations,
            "residual": joint.residual,
            "tolerance": float(opt["tolerance"]),
            "damping": float(opt["damping"]),
            "final_damping": min(joint.damping, sham_eq.damping),
            "converged": joint.converged and sham_eq.converged,
        }
        used_step: float | None = None
    elif method == "langevin":
        ring = ring_index(edge_index, cells, x.shape[0])
        sampled = sampled_contrast(
            model,
            torch.stack([start, sham_start]),
            edge_index,
            weight,
            clamped=clamped,
            steps=opt["steps"],
            burn_in=opt["burn_in"],
            step_size=opt["step_size"],
            groups=ring,
            seed=opt["seed"],
            progress=progress,
            desc="counterfactual and sham",
        )
        perturbed, sham = sampled.mean[0].to(x.dtype), sampled.mean[1].to(x.dtype)
        delta = sampled.delta.to(x.dtype)
        assert sampled.group_stderr is not None  # groups were given
        protocol = {
            "method": method,
            "steps": opt["steps"],
            "burn_in": opt["burn_in"],
            "step_size": float(opt["step_size"]),
            "seed": opt["seed"],
            "batches": sampled.batches,
        }
        stderr, ring_stderr = sampled.delta_stderr.to(x.dtype), sampled.group_stderr.to(x.dtype)
        used_step = float(opt["step_size"])
    else:
        steps, horizon = int(opt["steps"]), float(opt["horizon"])
        used_step = (
            auto_step_size(model, edge_index, weight, x.shape[0], steps=steps, horizon=horizon)
            if opt["step_size"] is None
            else float(opt["step_size"])
        )
        perturbed, sham = (
            relax(
                model,
                begin,
                edge_index,
                weight,
                clamped=clamped,
                steps=steps,
                step_size=used_step,
                progress=progress,
                desc=desc,
            )
            for begin, desc in ((start, "counterfactual"), (sham_start, "sham"))
        )
        delta = perturbed - sham
        protocol = {
            "method": method,
            "steps": steps,
            "step_size": used_step,
            "horizon": float(horizon) if opt["step_size"] is None else None,
        }
    ring = ring_index(edge_index, cells, x.shape[0])
    ring_mean, ring_size = ring_summary(delta, ring)
    return Counterfactual(
        perturbed,
        sham,
        delta,
        clamped,
        ring,
        ring_mean,
        ring_size,
        used_step,
        method,
        protocol,
        stderr,
        ring_stderr,
    )
