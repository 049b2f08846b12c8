r"""The clamped mean-field equilibrium of the Celcomen energy: a counterfactual with no horizon.

Megas et al., "Celcomen: spatial causal disentanglement for single-cell and tissue perturbation
modeling", arXiv:2409.05804, fit a mean-field model in which every cell's expression
:math:`x_i \in S^{G-1}` follows a von Mises-Fisher law in its local field. This module solves
that mean field with some coordinates *clamped* (held at given values), so a counterfactual is
the difference of two equilibria, a property of the model, not of a relaxation time.

**Mean-field equations.** Approximate :math:`p(X) \propto e^{E(X)}` by a product
:math:`\prod_i q_i(x_i)` of exponential-family laws :math:`q_i \propto e^{\theta_i^\top x_i}` on
each cell's admissible set, with the energy evaluated at the means :math:`M = (m_i)`,
:math:`m_i = \mathbb{E}_{q_i}[x_i]` (the fluctuation term :math:`\operatorname{tr}(W_{\mathrm
{intra}} \operatorname{Cov}_{q_i})` of the self-coupling is dropped, as in the paper's mean
field). Stationarity of :math:`\Phi(M) = E(M) - \sum_i \mathrm{KL}(q_i \,\Vert\, \sigma_i)`, with
:math:`\sigma_i` the uniform law on the admissible set and :math:`\nabla_{m}\mathrm{KL} = \theta`
for an exponential family, gives :math:`\theta_i = h_i(M)`, the local field at the means

.. math::
    h_i(M) = \nabla_{x_i} E \big|_{X = M} = 2 W_{\mathrm{intra}} m_i + W_{\mathrm{inter}} (S M)_i
    + h_{\mathrm{intra}} + s_i h_{\mathrm{inter}}, \qquad S = A + A^\top,

(:meth:`spatial.model.CelcomenEnergy.field_from`), and :math:`m_i = T_i(h_i(M))`, the mean of
:math:`q_i`.

**The clamp.** Write :math:`x_i = (c_i, y_i)` with :math:`c_i` the clamped coordinates (fixed)
and :math:`y_i \in \mathbb{R}^{d_i}` the :math:`d_i` free ones. On the unit sphere :math:`y_i`
lives on the sphere of radius :math:`r_i = \sqrt{1 - \lVert c_i \rVert^2}`; with
:math:`y_i = r_i u_i`, :math:`u_i \in S^{d_i - 1}`, the law :math:`e^{h_i^\top x_i} \propto
e^{r_i g_i^\top u_i}` (:math:`g_i` the free part of :math:`h_i`) is von Mises-Fisher on
:math:`S^{d_i-1}` with concentration :math:`\kappa_i = r_i \lVert g_i \rVert`, so

.. math::
    T_i(h_i) = \Big(c_i,\; r_i\, A_{d_i}(r_i \lVert g_i \rVert)\, \frac{g_i}{\lVert g_i \rVert}
    \Big), \qquad A_d(\kappa) = \frac{I_{d/2}(\kappa)}{I_{d/2-1}(\kappa)},

(Mardia & Jupp, *Directional Statistics*, 2000, eq. 9.3.9) with :math:`A_1 = \tanh` (the two
points :math:`\pm r_i`) and :math:`y_i = 0` when nothing is free or :math:`g_i = 0`. With nothing
clamped this is :math:`m_i = A_G(\lVert h_i \rVert)\, h_i / \lVert h_i \rVert`.

**Solver.** Damped fixed-point iteration :math:`M \leftarrow (1 - \alpha) M + \alpha\, T(h(M))`
from a given start (the observed tissue, so that when the mean field has several fixed points,
the one in the observed tissue's basin is taken), until the residual
:math:`\max_{i,g} |T(h(M)) - M|_{ig}` is at most the tolerance. The fixed points do not depend
on :math:`\alpha`; :math:`\alpha < 1` damps the oscillations that signed (inhibitory) couplings
cause in the parallel update. How much damping a tissue needs depends on its couplings: on a
linearised map with an eigenvalue :math:`-\lambda < -1` of the undamped update's Jacobian the
damped update has eigenvalue :math:`1 - \alpha (1 + \lambda)`, stable only for
:math:`\alpha < 2 / (1 + \lambda)`. So :math:`\alpha` is adapted: the given damping is the
first one, and it is halved, at most :data:`DAMPING_HALVINGS` times, when the iteration
oscillates without progress: the residual has not reached a new minimum (by a factor
:math:`1 - 10^{-6}`) for :data:`DAMPING_PATIENCE` consecutive updates and the last two update
directions :math:`\Delta_t = T(h(M^{(t)})) - M^{(t)}` point against each other,
:math:`\langle \Delta_t, \Delta_{t-1} \rangle < 0` (raw-count fits on the independent
simulator of benchmarks/tissue_metropolis.py oscillated forever at :math:`\alpha = 0.5`,
benchmarks/RESULTS.md). A slow but monotone approach (an eigenvalue near :math:`+1`, where a
smaller step would only be slower) keeps its damping; the result reports the last
:math:`\alpha`. Computed in float64 (equilibria are differenced, and a tolerance
of 1e-8 is below float32's resolution) on the input's device; the Bessel ratios are evaluated
on the host (:func:`spatial.vmf.vmf_mean_resultant_length`, :mod:`spatial._bessel`), one
``[N]`` vector per iteration.

**Convergence.** Near :math:`M = 0` the map has gain :math:`(2 \lVert W_{\mathrm{intra}}
\rVert_2 + \lVert S \rVert_2 \lVert W_{\mathrm{inter}} \rVert_2) / G` (:math:`A_G(\kappa)
\approx \kappa / G`); tissues close to gain 1 converge slowly. The library's simulated tissues
(:func:`spatial.simulate.simulate_tissue`, spectral norm :math:`G/2` per matrix) are such:
benchmarks/bench_counterfactual.py needed 50-200 updates at half that strength and 700-9,000 at
full strength (1,000 cells, G = 10). A run that does not reach the tolerance warns with its
residual; its result is then not an equilibrium (use more ``max_iterations``, or the sampled
equilibrium, :func:`sampled_contrast`). Where it converges, the result does not change with
more iterations or another damping (tests/spatial/test_counterfactual_equilibrium.py).

**Sampled equilibrium.** :func:`sampled_contrast` estimates the same contrast under the exact
model (no mean-field approximation) by clamped Langevin dynamics, with a Monte Carlo standard
error; on weakly coupled tissues the two agree (Pearson .96-1.00 of the per-cell effects,
benchmarks/bench_counterfactual.py), and where the couplings are strong the two chains of the
contrast decouple and its error grows to the size of the effect.
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from graphdata.device import make_generator
from graphdata.errors import GraphDataError
from spatial._bessel import iv_ratio
from spatial._inputs import check_int, check_real
from spatial._messages import neighbour_operator
from spatial.model import CelcomenEnergy

__all__ = [
    "DAMPING_HALVINGS",
    "DAMPING_PATIENCE",
    "MeanField",
    "SampledContrast",
    "clamped_mean_field",
    "conditional_mean",
    "sampled_contrast",
]


#: Updates without a new minimum of the residual after which the damping is halved.
DAMPING_PATIENCE = 50
#: At most this many halvings of the damping (from 0.5: down to 0.5 / 1024).
DAMPING_HALVINGS = 10


@dataclass
class MeanField:
    r"""Result of :func:`clamped_mean_field`; tensors on the input's device and dtype.

    Attributes:
        mean: The fixed point :math:`M`, ``[N, G]`` or ``[B, N, G]`` (rows of norm < 1).
        iterations: Damped updates applied (all batch entries take the same number).
        residual: :math:`\max |T(h(M)) - M|` at the returned ``mean`` (over the batch).
        converged: ``residual <= tolerance``.
        tolerance: The tolerance asked for.
        damping: The damping :math:`\alpha` of the last update (the given one, halved each
            time the iteration stalled; module docstring).
        mean64: ``mean`` in float64 (for differencing equilibria without float32 rounding).
    """

    mean: Tensor
    iterations: int
    residual: float
    converged: bool
    tolerance: float
    damping: float
    mean64: Tensor


def _mean_resultant(kappa: Tensor, groups: list[tuple[int, np.ndarray]]) -> Tensor:
    r""":math:`A_{d_i}(\kappa_i)` for cells grouped by free dimension ``d`` (host float64)."""
    host = kappa.detach().to(device="cpu", dtype=torch.float64).numpy()  # [N]
    out = np.zeros_like(host)
    for dim, rows in groups:
        if dim >= 2:
            out[rows] = iv_ratio(dim / 2.0 - 1.0, host[rows])
        elif dim == 1:
            out[rows] = np.tanh(host[rows])  # S^0 = {-1, +1}: A_1 = I_{1/2} / I_{-1/2}
    return torch.from_numpy(out).to(kappa)


def _free_dimension_groups(clamped: Tensor) -> list[tuple[int, np.ndarray]]:
    dims = (~clamped).sum(-1).cpu().numpy()  # [N]
    return [(int(d), np.flatnonzero(dims == d)) for d in np.unique(dims)]


def conditional_mean(field: Tensor, fixed: Tensor, clamped: Tensor) -> Tensor:
    r"""Mean :math:`T_i(h_i)` of :math:`e^{h_i^\top x}` on the unit sphere with a clamp.

    .. math::
        T_i(h_i) = \Big(c_i,\; r_i\, A_{d_i}(r_i \lVert g_i \rVert)\,
        \frac{g_i}{\lVert g_i \rVert}\Big), \qquad r_i = \sqrt{1 - \lVert c_i \rVert^2},

    :math:`c_i` the clamped values, :math:`g_i` the free part of :math:`h_i`, :math:`d_i` the
    number of free coordinates, :math:`A_d = I_{d/2} / I_{d/2-1}` (:math:`A_1 = \tanh`); see
    the module docstring for the derivation.

    Args:
        field: Local fields ``[N, G]``.
        fixed: Clamped values ``[N, G]`` (entries outside ``clamped`` are ignored).
        clamped: Boolean mask ``[N, G]`` of clamped coordinates.

    Returns:
        ``[N, G]``: ``fixed`` on clamped coordinates, the conditional mean elsewhere.

    Examples:
        >>> h = torch.tensor([[2.0, 0.0, 0.0], [0.0, 2.0, 0.0]], dtype=torch.float64)
        >>> c = torch.tensor([[0.0, 0.0, 0.0], [0.6, 0.0, 0.0]], dtype=torch.float64)
        >>> clamp = torch.tensor([[False] * 3, [True, False, False]])
        >>> conditional_mean(h, c, clamp)  # coth 2 - 1/2; 0.8 I_1(1.6) / I_0(1.6) (a circle)
        tensor([[0.5373, 0.0000, 0.0000],
                [0.6000, 0.4959, 0.0000]], dtype=torch.float64)
    """
    groups = _free_dimension_groups(clamped)
    return _conditional_mean(field, _clamp_parts(fixed, clamped), groups)


def _clamp_parts(fixed: Tensor, clamped: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Clamped values (0 elsewhere), free mask as 0/1 and the free radius ``[N, 1]``."""
    values = torch.where(clamped, fixed, torch.zeros_like(fixed))
    free = (~clamped).to(fixed.dtype)
    radius = (1.0 - values.square().sum(-1, keepdim=True)).clamp(min=0.0).sqrt()  # [N, 1]
    return values, free, radius


def _conditional_mean(
    field: Tensor, parts: tuple[Tensor, Tensor, Tensor], groups: list[tuple[int, np.ndarray]]
) -> Tensor:
    values, free, radius = parts
    g = field * free  # [N, G] free part of the field
    g_norm = g.norm(dim=-1, keepdim=True)  # [N, 1]
    kappa = (radius * g_norm).squeeze(-1)  # [N]
    length = _mean_resultant(kappa, groups).unsqueeze(-1)  # [N, 1]
    # g = 0: A(0) = 0, the free mean is 0 (the direction is then irrelevant).
    scale = torch.where(g_norm > 0, radius * length / g_norm.clamp(min=1e-300), 0.0)
    return values + scale * g


def clamped_mean_field(
    model: CelcomenEnergy,
    x: Tensor,
    edge_index: Tensor,
    weight: Tensor,
    *,
    clamped: Tensor | None = None,
    tolerance: float = 1e-8,
    damping: float = 0.5,
    max_iterations: int = 10_000,
    progress: bool = True,
    desc: str = "mean field",
) -> MeanField:
    r"""Fixed point :math:`M = T(h(M))` of the clamped mean field, from the start ``x``.

    .. math::
        M^{(t+1)} = (1 - \alpha_t) M^{(t)} + \alpha_t\, T\big(h(M^{(t)})\big), \qquad
        M^{(0)} = x,

    with :math:`h` the local field at the means and :math:`T` the clamped von Mises-Fisher mean
    (module docstring; :func:`conditional_mean`), stopped at the first :math:`t` with
    :math:`\max |T(h(M^{(t)})) - M^{(t)}| \le` ``tolerance``. :math:`\alpha_0` is
    ``damping``; :math:`\alpha_t` is halved when the iteration oscillates without progress
    (module docstring), which leaves the fixed point unchanged. A batch ``[B, N, G]`` of starts
    (each with its own clamp) is iterated together and stopped together, so equal rows of two
    batch entries get identical updates.

    Args:
        model: The energy (its matrices are read, not changed).
        x: Start state, unit rows, ``[N, G]`` or ``[B, N, G]``; clamped entries give the
            clamped values.
        edge_index: ``[2, E]`` source -> target.
        weight: Normalised edge weights ``[E]``.
        clamped: Boolean mask of ``x``'s shape; None (default) clamps nothing.
        tolerance: Stop when the residual is at most this (default 1e-8).
        damping: The first :math:`\alpha \in (0, 1]` (default 0.5), halved when the iteration
            stalls.
        max_iterations: Give up (with a warning) after this many updates (default 10,000).
        progress: Show a tqdm bar when stderr is a terminal; False: never. Default True.
        desc: The bar's label. Default ``"mean field"``.

    Returns:
        A :class:`MeanField` (``mean`` in ``x``'s dtype; ``mean64`` in float64).

    Raises:
        GraphDataError: On bad arguments, or if the iteration produces non-finite values.

    Warns:
        RuntimeWarning: If the residual is still above ``tolerance`` after ``max_iterations``.

    Examples:
        >>> model = CelcomenEnergy(3)
        >>> model.set_matrices(torch.zeros(3, 3), torch.zeros(3, 3))
        >>> model.set_fields(torch.tensor([2.0, 0.0, 0.0]), torch.zeros(3))
        >>> x = torch.tensor([[0.0, 1.0, 0.0]])
        >>> no_edges = torch.zeros(2, 0, dtype=torch.long)
        >>> out = clamped_mean_field(model, x, no_edges, torch.zeros(0), progress=False)
        >>> out.mean.round(decimals=4), out.converged  # coth 2 - 1/2
        (tensor([[0.5373, 0.0000, 0.0000]]), True)
    """
    if not isinstance(x, Tensor) or x.ndim not in (2, 3) or not torch.is_floating_point(x):
        got = (tuple(x.shape), x.dtype) if isinstance(x, Tensor) else type(x).__name__
        raise GraphDataError(f"x: expected a floating tensor [N, G] or [B, N, G], got {got}")
    if not bool(torch.isfinite(x).all()):
        raise GraphDataError("x: expected finite values, got NaN or inf; impute or drop them")
    if clamped is None:
        clamped = torch.zeros_like(x, dtype=torch.bool)
    if tuple(clamped.shape) != tuple(x.shape) or clamped.dtype != torch.bool:
        raise GraphDataError(
            f"clamped: expected a boolean mask of x's shape {tuple(x.shape)}, got "
            f"{tuple(clamped.shape)} {clamped.dtype}"
        )
    check_real(
        "tolerance",
        tolerance,
        low=0.0,
        low_open=True,
        fix="pass a small positive number, e.g. 1e-8",
    )
    check_real(
        "damping",
        damping,
        low=0.0,
        low_open=True,
        high=1.0,
        fix="pass a fraction in (0, 1], e.g. 0.5 (smaller damps oscillations)",
    )
    check_int("max_iterations", max_iterations, 1)
    batched = x.ndim == 3
    starts = (x if batched else x.unsqueeze(0)).to(torch.float64)  # [B, N, G]
    clamps = clamped if batched else clamped.unsqueeze(0)  # [B, N, G]
    # float64 copy of the energy: the model stays as it is (module docstring: why float64).
    energy = copy.deepcopy(model).to(dtype=torch.float64)
    operator = neighbour_operator(edge_index, weight.to(torch.float64), x.shape[-2])  # [N, N]
    strength = (operator @ torch.ones_like(starts[0, :, :1])).squeeze(-1)  # [N] row sums of S
    parts = [_clamp_parts(s, c) for s, c in zip(starts, clamps)]
    groups = [_free_dimension_groups(c) for c in clamps]
    state = [torch.where(c, p[0], s) for s, c, p in zip(starts, clamps, parts)]

    def update(m: Tensor, b: int) -> Tensor:
        field = energy.field_from(m, operator @ m, strength)  # [N, G]
        return _conditional_mean(field, parts[b], groups[b])

    from tqdm.auto import tqdm

    iterations, residual = 0, float("inf")
    alpha, best, stalled, halvings = float(damping), float("inf"), 0, 0
    previous: list[Tensor] | None = None  # the last update's directions T(h(M)) - M
    # disable=None: tqdm shows the bar only on a terminal.
    with (
        torch.no_grad(),
        tqdm(total=max_iterations, desc=desc, unit="it", disable=None if progress else True) as bar,
    ):
        while True:
            images = [update(m, b) for b, m in enumerate(state)]
            residual = max(float((t - m).abs().max()) for t, m in zip(images, state))
            if not np.isfinite(residual):
                raise GraphDataError(
                    f"model: the mean-field iteration produced non-finite values after "
                    f"{iterations} updates; check the matrices for NaN or overflow"
                )
            if residual <= tolerance or iterations == max_iterations:
                break
            steps = [t - m for t, m in zip(images, state)]
            flipped = previous is not None and (
                sum(float((a * b).sum()) for a, b in zip(steps, previous)) < 0
            )
            previous = steps
            if residual < best * (1.0 - 1e-6):
                best, stalled = residual, 0
            else:
                stalled += 1
                if stalled >= DAMPING_PATIENCE and flipped and halvings < DAMPING_HALVINGS:
                    # Stalled and oscillating: a smaller step (module docstring).
                    alpha, best, stalled, halvings = alpha / 2, residual, 0, halvings + 1
            state = [(1.0 - alpha) * m + alpha * t for m, t in zip(state, images)]
            iterations += 1
            bar.update(1)
    converged = residual <= tolerance
    if not converged:
        warnings.warn(
            f"max_iterations: the clamped mean field did not converge in {max_iterations} "
            f"updates (residual {residual:.3g} > tolerance {tolerance:g}); raise "
            f"max_iterations (the damping ended at {alpha:g}; the result is the last iterate)",
            RuntimeWarning,
            stacklevel=2,
        )
    mean64 = torch.stack(state) if batched else state[0]
    return MeanField(
        mean64.to(x.dtype),
        iterations,
        residual,
        converged,
        float(tolerance),
        alpha,
        mean64,
    )


@dataclass
class SampledContrast:
    """Result of :func:`sampled_contrast`; tensors on the input's device, float64.

    Attributes:
        mean: Time averages of the two chains after burn-in ``[2, N, G]``.
        delta: ``mean[0] - mean[1]`` ``[N, G]``.
        delta_stderr: Batch-means standard error of ``delta`` ``[N, G]``.
        group_mean: Mean ``delta`` per group and gene ``[K, G]`` (``groups`` given), else None.
        group_stderr: Its batch-means standard error ``[K, G]``, else None.
        steps: Langevin steps after burn-in; burn_in, step_size, batches, seed: as asked.
    """

    mean: Tensor
    delta: Tensor
    delta_stderr: Tensor
    group_mean: Tensor | None
    group_stderr: Tensor | None
    steps: int
    burn_in: int
    step_size: float
    batches: int
    seed: int | None


def sampled_contrast(
    model: CelcomenEnergy,
    starts: Tensor,
    edge_index: Tensor,
    weight: Tensor,
    *,
    clamped: Tensor,
    steps: int = 20_000,
    burn_in: int = 2_000,
    step_size: float = 0.002,
    batches: int = 10,
    groups: Tensor | None = None,
    seed: int | None = 0,
    progress: bool = True,
    desc: str = "langevin",
) -> SampledContrast:
    r"""Equilibrium contrast :math:`\mathbb{E}[x \mid c^{(0)}] - \mathbb{E}[x \mid c^{(1)}]` by
    clamped Langevin dynamics, the two chains driven by the same noise.

    Each chain moves its free coordinates :math:`y_i` on their sphere of radius :math:`r_i =
    \sqrt{1 - \lVert c_i \rVert^2}` (module docstring):

    .. math::
        y_i \leftarrow r_i \frac{y_i + P_i(\eta\, g_i + \sqrt{2\eta}\, \xi_i)}
        {\lVert y_i + P_i(\eta\, g_i + \sqrt{2\eta}\, \xi_i) \rVert}, \qquad
        P_i = I - y_i y_i^\top / r_i^2,

    :math:`g_i` the free part of the local field :math:`\nabla_{x_i} E` at the current state,
    :math:`\xi_i \sim \mathcal{N}(0, I)` on the free coordinates, the same :math:`\xi` for both
    chains (common random numbers: the difference of the time averages then has far less
    variance than either). This targets :math:`p(X \mid \text{clamp}) \propto e^{E(X)}` up to
    an :math:`O(\eta)` discretisation bias (no Metropolis correction), the exact model rather
    than its mean field. The time averages over ``steps`` steps after ``burn_in`` are split in
    ``batches`` consecutive batches; the standard error is the batch means' standard deviation
    over :math:`\sqrt{\text{batches}}` (valid when a batch is longer than the chains'
    autocorrelation time).

    Args:
        model: The energy (its matrices are read, not changed).
        starts: ``[2, N, G]`` unit rows, the two chains' starts; clamped entries give the values.
        edge_index: ``[2, E]`` source -> target.
        weight: Normalised edge weights ``[E]``.
        clamped: Boolean mask ``[N, G]`` of clamped coordinates (the same for both chains).
        steps: Averaged steps after burn-in (default 20,000).
        burn_in: Steps discarded first (default 2,000).
        step_size: :math:`\eta` (default 0.002).
        batches: Batches for the standard error (default 10; ``steps`` must be a multiple).
        groups: Optional ``[N]`` int64 labels in ``[0, K)`` (e.g. rings) for per-group means.
        seed: Seed of the noise (default 0).
        progress: Show a tqdm bar when stderr is a terminal; False: never. Default True.
        desc: The bar's label.

    Returns:
        A :class:`SampledContrast`.

    Raises:
        GraphDataError: On bad settings, a cell with exactly one free coordinate (its two
            admissible points are not connected), or diverging chains.
    """  # noqa: D205
    check_int("steps", steps, 1)
    check_int("burn_in", burn_in, 0)
    check_int("batches", batches, 2)
    if steps % batches:
        raise GraphDataError(
            f"steps: expected a multiple of batches={batches}, got {steps}; pass e.g. "
            f"steps={batches * max(1, steps // batches)}"
        )
    check_real("step_size", step_size, low=0.0, low_open=True, fix="pass e.g. 0.002")
    from tqdm.auto import tqdm

    one_free = (~clamped).sum(-1) == 1
    if bool(one_free.any()):
        raise GraphDataError(
            f"clamped: {int(one_free.sum())} cells have one free coordinate (first "
            f"{torch.nonzero(one_free).flatten()[:5].tolist()}), which lives on the two points "
            "+-r that no diffusion connects; clamp fewer genes or use the mean field "
            "(clamped_mean_field, method='mean_field'), which handles them exactly"
        )
    starts = starts.to(torch.float64)
    n, g = starts.shape[1:]
    energy = copy.deepcopy(model).to(dtype=torch.float64)
    operator = neighbour_operator(edge_index, weight.to(torch.float64), n)  # [N, N]
    strength = (operator @ torch.ones_like(starts[0, :, :1])).squeeze(-1)  # [N]
    fixed = torch.where(clamped, starts, torch.zeros_like(starts))  # [2, N, G]
    free = (~clamped).to(torch.float64)  # [N, G]
    radius = (1.0 - fixed.square().sum(-1, keepdim=True)).clamp(min=0.0).sqrt()  # [2, N, 1]
    r_sq = radius.square().clamp(min=1e-300)
    y = starts * free
    generator = make_generator(seed, starts.device)
    per_batch = steps // batches
    n_groups = int(groups.max()) + 1 if groups is not None else 0
    total = torch.zeros(2, n, g, dtype=torch.float64, device=starts.device)
    batch_sum = torch.zeros(n, g, dtype=torch.float64, device=starts.device)
    delta_sq = torch.zeros(n, g, dtype=torch.float64, device=starts.device)
    group_batches = []
    with torch.no_grad():
        for t in tqdm(range(burn_in + steps), desc=desc, disable=None if progress else True):
            noise = torch.randn(n, g, generator=generator, dtype=torch.float64,
                                device=starts.device) * free  # fmt: skip
            state = fixed + y  # [2, N, G]
            field = torch.stack(
                [energy.field_from(s, operator @ s, strength) for s in state]
            ) * free  # fmt: skip
            move = step_size * field + (2.0 * step_size) ** 0.5 * noise
            move = move - ((y * move).sum(-1, keepdim=True) / r_sq) * y  # tangent projection
            step = y + move
            y = step * (radius / step.norm(dim=-1, keepdim=True).clamp(min=1e-300))
            if t < burn_in:
                continue
            state = fixed + y
            total += state
            batch_sum += state[0] - state[1]
            if (t - burn_in + 1) % per_batch == 0:
                batch_delta = batch_sum / per_batch  # [N, G]
                delta_sq += batch_delta.square()
                if groups is not None:
                    sums = torch.zeros(n_groups, g, dtype=torch.float64, device=starts.device)
                    size = torch.bincount(groups, minlength=n_groups).clamp(min=1)
                    group_batches.append(sums.index_add_(0, groups, batch_delta) / size[:, None])
                batch_sum.zero_()
    if not bool(torch.isfinite(total).all()):
        raise GraphDataError(
            f"step_size: the clamped Langevin chains diverged after {burn_in + steps} steps of "
            f"{step_size:g}; lower step_size"
        )
    mean = total / steps
    delta = mean[0] - mean[1]
    # batch-means variance: (mean of squares - square of mean) * B / (B - 1), over B batches
    var = (delta_sq / batches - delta.square()).clamp(min=0.0) * batches / (batches - 1)
    group_mean = group_stderr = None
    if groups is not None:
        stacked = torch.stack(group_batches)  # [batches, K, G]
        group_mean = stacked.mean(0)
        group_stderr = stacked.std(0) / batches**0.5
    return SampledContrast(
        mean, delta, (var / batches).sqrt(), group_mean, group_stderr, steps, burn_in,
        float(step_size), batches, seed,
    )  # fmt: skip
