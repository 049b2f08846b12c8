r"""Full-pass gradients and a conjugate-gradient solver for the score-matching quadratic.

The score-matching objective of :mod:`spatial.objectives` plus the ridge of
:class:`spatial.celcomen.Celcomen` is a convex quadratic in all parameters
:math:`\theta = (W_{\mathrm{intra}}, W_{\mathrm{inter}}, h_{\mathrm{intra}}, h_{\mathrm{inter}})`,

.. math::
    L(\theta) = \tfrac12 \theta^\top H \theta + b^\top \theta + c,
    \qquad \nabla L(\theta) = H\theta + b,

so one gradient pass at :math:`p` gives the Hessian-vector product :math:`Hp = \nabla L(p) - b`
without forming :math:`H` (:math:`\sim G^4/2` entries). Conjugate gradients (Hestenes & Stiefel,
"Methods of conjugate gradients for solving linear systems", J. Res. NBS 49, 1952,
doi:10.6028/jres.049.044) then reach the minimiser in at most :math:`\dim\theta` exact steps,
one pass each, and stop on the checkable criterion
:math:`\lVert \nabla L(\theta) \rVert \le \mathrm{tol}\, \lVert \nabla L(\theta_0) \rVert`, verified
with a fresh pass (the recurrence residual drifts in float32) and restarted from there if not
met. The vectors live in float64; the passes run in the data's dtype, chunk by chunk, so memory
is bounded by the chunk, not the tissue.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from spatial.model import CelcomenEnergy

__all__ = [
    "GradientPass",
    "ScoreMatchingPass",
    "score_matching_design",
    "CGResult",
    "conjugate_gradient",
]


@dataclass
class GradientPass:
    r"""Loss and gradient of :math:`\frac1N \sum_i \ell_i + \frac{\lambda}{N}\lVert\theta\rVert^2`.

    Attributes:
        params: The parameters, in a fixed order (flattened in that order).
        terms: ``cells -> [B]`` per-cell terms :math:`\ell_i` of a contiguous range of cells.
        penalty: ``() -> scalar``, :math:`\lVert\theta\rVert^2` of the effective parameters.
        n_cells: :math:`N`.
        ridge: :math:`\lambda` (a total over the tissue, so its weight vanishes as :math:`1/N`).
        chunk: Cells per chunk of a pass (bounds the memory of the autograd graph).
    """

    params: list[nn.Parameter]
    terms: Callable[[slice], Tensor]
    penalty: Callable[[], Tensor]
    n_cells: int
    ridge: float
    chunk: int

    def vector(self) -> Tensor:
        """The current parameters as one float64 vector."""
        return torch.cat([p.detach().reshape(-1).double() for p in self.params])

    @torch.no_grad()
    def load(self, theta: Tensor) -> None:
        """Copy a float64 vector into the parameters."""
        offset = 0
        for p in self.params:
            p.copy_(theta[offset : offset + p.numel()].view_as(p))
            offset += p.numel()

    def __call__(self, theta: Tensor) -> tuple[float, Tensor]:
        """Loss and float64 gradient at ``theta`` (one pass over the cells)."""
        self.load(theta)
        for p in self.params:
            p.grad = None
        total = 0.0
        for start in range(0, self.n_cells, self.chunk):
            part = self.terms(slice(start, min(start + self.chunk, self.n_cells))).sum()
            (part / self.n_cells).backward()
            total += float(part.detach())
        reg = (self.ridge / self.n_cells) * self.penalty()
        reg.backward()
        grad = torch.cat(
            [
                (torch.zeros_like(p) if p.grad is None else p.grad).reshape(-1).double()
                for p in self.params
            ]
        )
        return total / self.n_cells + float(reg.detach()), grad


@dataclass
class CGResult:
    r"""Outcome of :func:`conjugate_gradient`.

    Attributes:
        theta: The solution (float64 vector).
        losses: Loss at the start, then after every iteration (floats, from the recurrence).
        relative_gradient: :math:`\lVert \nabla L(\theta) \rVert / \lVert \nabla L(\theta_0)
            \rVert`, from a fresh pass at the solution.
        converged: Whether ``relative_gradient <= tol``.
        passes: Gradient passes spent (iterations plus checks).
    """

    theta: Tensor
    losses: list[float] = field(default_factory=list)
    relative_gradient: float = math.inf
    converged: bool = False
    passes: int = 0


def conjugate_gradient(
    gradient: Callable[[Tensor], tuple[float, Tensor]],
    theta: Tensor,
    *,
    max_iter: int,
    tol: float,
    hessian: Callable[[Tensor], Tensor] | None = None,
    on_iteration: Callable[[int, float], None] | None = None,
) -> CGResult:
    r"""Minimise a convex quadratic :math:`L` given its gradient oracle (module docstring).

    Each iteration spends one pass: :math:`Hp = \nabla L(\theta + p) - \nabla L(\theta)`
    computed as ``gradient(p) - gradient(0)`` with :math:`b = \nabla L(0)` from one extra pass.
    The loss follows exactly from the recurrence,
    :math:`L(\theta) = c + \tfrac12 \theta^\top (b + \nabla L(\theta))`.

    Args:
        gradient: ``theta -> (loss, grad)``, both at ``theta`` (float64 vectors).
        theta: Start (float64 vector).
        max_iter: Most CG iterations (one pass each).
        tol: Relative gradient-norm tolerance.
        hessian: ``p -> H p`` (one pass); None (default) uses ``gradient(p) - gradient(0)``.
        on_iteration: Called as ``(iteration, loss)`` after every iteration (logging).

    Returns:
        A :class:`CGResult`.
    """
    zero = torch.zeros_like(theta)
    c, b = gradient(zero)
    at_zero = not bool(theta.any())
    loss, g = (c, b) if at_zero else gradient(theta)
    passes, iteration = (1 if at_zero else 2), 0
    g0_norm = float(g.norm())
    result = CGResult(theta=theta.clone(), losses=[loss], passes=passes)
    if g0_norm == 0.0 or not math.isfinite(g0_norm):
        result.relative_gradient = 0.0 if g0_norm == 0.0 else math.inf
        result.converged = g0_norm == 0.0
        return result
    while True:
        r = -g  # residual b_eff - H theta
        p = r.clone()
        rr = float(r @ r)
        while iteration < max_iter and math.sqrt(rr) > tol * g0_norm:
            hp = gradient(p)[1] - b if hessian is None else hessian(p)
            passes += 1
            curvature = float(p @ hp)
            if not curvature > 0.0:  # flat or numerically indefinite direction: stop here
                break
            alpha = rr / curvature
            theta = theta + alpha * p
            r = r - alpha * hp
            rr_new = float(r @ r)
            p = r + (rr_new / rr) * p
            rr = rr_new
            iteration += 1
            loss = c + 0.5 * float(theta @ (b - r))
            result.losses.append(loss)
            if on_iteration is not None:
                on_iteration(iteration, loss)
        _, g = gradient(theta)  # the checkable criterion, from a fresh pass
        passes += 1
        relative = float(g.norm()) / g0_norm
        converged = relative <= tol
        if converged or iteration >= max_iter or not math.isfinite(relative):
            break
        if math.sqrt(rr) > tol * g0_norm:  # stopped on a flat direction: restarting won't help
            break
    result.theta, result.relative_gradient, result.converged = theta, relative, converged
    result.passes = passes
    return result


@dataclass
class ScoreMatchingPass(GradientPass):
    r"""The score-matching gradient pass written out, without autograd (same interface).

    With :math:`f_i = 2 W_{\mathrm{intra}} x_i + W_{\mathrm{inter}} n_i + h_{\mathrm{intra}} +
    s_i h_{\mathrm{inter}}`, :math:`r_i = x_i^\top f_i` and
    :math:`J_i = \tfrac12 (\lVert f_i \rVert^2 - r_i^2) + 2 \operatorname{tr} W_{\mathrm{intra}}
    - 2 x_i^\top W_{\mathrm{intra}} x_i - (G - 1) r_i`
    (:func:`spatial.objectives.score_matching_terms`), the quadratic part of :math:`J_i` is
    :math:`\tfrac12 \lVert D_i \rVert^2` with the tangent part :math:`D_i = f_i - r_i x_i`, and
    the rest is linear in the parameters, so :math:`\nabla L = H\theta + b` with

    .. math::
        (H\theta)_{W_{\mathrm{intra}}} = \operatorname{sym}\big(2 X^\top D\big), \quad
        (H\theta)_{W_{\mathrm{inter}}} = \operatorname{sym}(N^\top D), \quad
        (H\theta)_{h_{\mathrm{intra}}} = \textstyle\sum_i D_i, \quad
        (H\theta)_{h_{\mathrm{inter}}} = \textstyle\sum_i s_i D_i,

        b = \big(2N I - 2G X^\top X,\; -(G-1)\operatorname{sym}(X^\top N),\;
            -(G-1)\textstyle\sum_i x_i,\; -(G-1)\textstyle\sum_i s_i x_i\big)

    (divided by :math:`N`, plus the ridge); :math:`b` is data-only, computed once in float64, so
    the solver's products :math:`H p` carry no cancelling constants. With the design
    :math:`Z = [X, N, \mathbf 1, s]` ``[N, 2G + 2]`` and :math:`\Theta = [2W_{\mathrm{intra}};
    W_{\mathrm{inter}}; h_{\mathrm{intra}}^\top; h_{\mathrm{inter}}^\top]`, a chunk of a pass
    is the two products :math:`F = Z\Theta` and :math:`Z^\top D` (:math:`8 B G^2` flops) and
    three ``[B, G]`` element-wise operations.

    Attributes:
        model: The energy whose parameters ``params`` are (the fields are read from it).
        design: :math:`Z` ``[N, 2G + 2]`` (:func:`score_matching_design`).
    """

    model: CelcomenEnergy | None = None
    design: Tensor | None = None

    def __post_init__(self) -> None:
        z = self.design
        assert z is not None
        n, g = z.shape[0], (z.shape[1] - 2) // 2
        moments = (z[:, :g].T @ z).double()  # [G, 2G + 2]: X^T X, X^T N, X^T 1, X^T s
        gram, cross = moments[:, :g], moments[:, g : 2 * g]
        eye = torch.eye(g, dtype=torch.float64, device=z.device)
        parts = [2.0 * n * eye - 2.0 * g * gram, -(g - 1) * 0.5 * (cross + cross.T)]
        if len(self.params) == 4:
            parts += [-(g - 1) * moments[:, 2 * g], -(g - 1) * moments[:, 2 * g + 1]]
        self._b = torch.cat([t.reshape(-1) for t in parts]) / n

    def hessian(self, theta: Tensor) -> Tensor:
        """The product of the Hessian with ``theta`` (one pass; no constant to cancel)."""
        self.load(theta)
        z, model = self.design, self.model
        assert z is not None and model is not None
        n, g = z.shape[0], (z.shape[1] - 2) // 2
        with torch.no_grad():
            w_intra, w_inter = model.W_intra, model.W_inter
            stacked = torch.cat(
                [2.0 * w_intra, w_inter, model.h_intra.unsqueeze(0), model.h_inter.unsqueeze(0)]
            )  # [2G + 2, G]
            grad = torch.zeros_like(stacked)  # accumulates Z^T D
            for start in range(0, n, self.chunk):
                zc = z[start : start + self.chunk]  # [B, 2G + 2]
                x = zc[:, :g]
                d = zc @ stacked  # [B, G], the field f
                r = (x * d).sum(-1, keepdim=True)  # [B, 1]
                d.sub_(r * x)  # the tangent part D
                grad.addmm_(zc.T, d)
            ridge = 2.0 * self.ridge / n
            top = grad[:g]
            grads = [
                (top + top.T) / n + ridge * w_intra,
                0.5 * (grad[g : 2 * g] + grad[g : 2 * g].T) / n + ridge * w_inter,
            ]
            if len(self.params) == 4:  # the fields are fitted
                grads += [grad[2 * g] / n + ridge * model.h_intra]
                grads += [grad[2 * g + 1] / n + ridge * model.h_inter]
        return torch.cat([t.reshape(-1).double() for t in grads])

    def __call__(self, theta: Tensor) -> tuple[float, Tensor]:  # noqa: D102
        h_theta = self.hessian(theta)
        # L = theta^T H theta / 2 + b^T theta exactly: every term of J_i vanishes at 0.
        return float(theta @ (0.5 * h_theta + self._b)), h_theta + self._b


def score_matching_design(x: Tensor, neighbours: Tensor, strength: Tensor) -> Tensor:
    r"""The design :math:`Z = [X, N, \mathbf 1, s]` ``[N, 2G + 2]`` of :class:`ScoreMatchingPass`.

    Args:
        x: Unit rows ``[N, G]``.
        neighbours: Neighbour sums :math:`n_i` ``[N, G]``.
        strength: Strengths :math:`s_i` ``[N]``.
    """
    ones = torch.ones_like(strength)
    return torch.cat([x, neighbours, ones.unsqueeze(-1), strength.unsqueeze(-1)], 1)
