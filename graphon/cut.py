r"""Cut norm: exact by subset enumeration, or bracketed by the Alon-Naor SDP.

.. math::
    \|W\|_\square = \sup_{S, T \subseteq [0,1]} \Big|\int_{S \times T} W\Big|, \qquad
    \|A\|_\square = \max_{S, T \subseteq [n]} \Big|\sum_{i \in S, j \in T} \mu_i \mu_j A_{ij}\Big|

for the step function of :math:`A` with node measures :math:`\mu` (default :math:`1/n`). For a
step function the supremum is attained at unions of whole steps (the integral is bilinear in
the fraction of each step taken), so the finite maximum is exact.

- ``method="exact"``: enumerate :math:`S`; the best :math:`T` takes the positive (or negative)
  column sums: :math:`O(2^n n^2)` by matrix products, :math:`n \le 20`.
- ``method="sdp"``: Alon & Naor, "Approximating the Cut-Norm via Grothendieck's Inequality",
  SIAM J. Comput. 35(4), 2006, DOI 10.1137/S0097539704441629: :math:`\|A\|_\square =
  \|C\|_{\infty \to 1}/4` for the zero-sum augmentation :math:`C`; the SDP relaxation
  :math:`\max \sum_{ij} C_{ij}\langle u_i, v_j\rangle` over unit vectors is solved in rank
  :math:`r \approx \sqrt{2(2n+2)}` (Burer-Monteiro) by exact block-coordinate ascent
  (:math:`U \leftarrow \mathrm{rownorm}(CV)`, :math:`V \leftarrow \mathrm{rownorm}(C^\top U)`, the
  mixing method of Wang, Chang & Kolter, arXiv 1706.00476, on a bipartite problem). ``value``
  is the cut found by Gaussian hyperplane rounding plus sign-flip local search, a **lower
  bound** attained by the returned :math:`S, T`; ``upper`` is a **certified upper bound** from
  the dual of the SDP: :math:`\lambda_i = \|(MY)_i\|`, shifted by the smallest eigenvalue of
  :math:`\mathrm{Diag}(\lambda) - M` (an :math:`O(n^3)` eigenvalue problem). Grothendieck's
  inequality bounds the SDP by :math:`K_G < 1.783` times the true value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from graphdata.device import make_generator
from graphdata.errors import GraphDataError
from graphon._validation import check_adjacency, check_choice, check_int, check_real, check_seed

__all__ = ["CutNormResult", "cut_norm", "EXACT_MAX_NODES"]

#: Largest matrix side for exact enumeration (2^20 subsets).
EXACT_MAX_NODES = 20


class _DefaultSeed(int):
    """The default ``seed=0``, told apart from an explicit ``0``: a ``generator`` replaces it."""


_SEED_DEFAULT = _DefaultSeed(0)


@dataclass(frozen=True)
class CutNormResult:
    r"""A cut norm with its certificate sets.

    Attributes:
        value: :math:`|\sum_{S \times T} \mu_i\mu_j A_{ij}|` for the returned sets: the cut norm
            when ``method == "exact"``, a lower bound otherwise.
        upper: An upper bound (``value`` itself when exact).
        rows: Bool ``[N]``, the set :math:`S`.
        cols: Bool ``[N]``, the set :math:`T`.
        method: ``"exact"`` or ``"sdp"``.
    """

    value: float
    upper: float
    rows: Tensor
    cols: Tensor
    method: str


def _exact(b: Tensor) -> tuple[float, Tensor, Tensor]:
    n = b.size(0)
    if n > EXACT_MAX_NODES:
        raise GraphDataError(
            f"method: exact enumeration handles at most {EXACT_MAX_NODES} nodes, got {n}; use "
            "method='sdp'"
        )
    bits = torch.arange(n, device=b.device)
    best, best_code, best_sign = -1.0, 0, 1.0
    chunk = max(1, 2**22 // max(n * n, 1))
    for start in range(0, 2**n, chunk):
        codes = torch.arange(start, min(2**n, start + chunk), device=b.device)
        rows = ((codes[:, None] >> bits) & 1).to(b.dtype)  # [S, n] subsets
        col = rows @ b  # [S, n] column sums over each S
        pos, neg = col.clamp_min(0).sum(-1), (-col).clamp_min(0).sum(-1)
        val = torch.maximum(pos, neg)
        i = int(val.argmax())
        if float(val[i]) > best:
            best, best_code = float(val[i]), start + i
            best_sign = 1.0 if float(pos[i]) >= float(neg[i]) else -1.0
    rows = ((torch.tensor(best_code, device=b.device) >> bits) & 1).bool()
    cols = (best_sign * (rows.to(b.dtype) @ b)) > 0
    return best, rows, cols


def _augment(b: Tensor) -> Tensor:
    """Alon-Naor's zero row/column-sum matrix ``C`` with ``||B||_cut = ||C||_(inf->1) / 4``."""
    r, c = b.sum(1, keepdim=True), b.sum(0, keepdim=True)
    top = torch.cat([b, -r], 1)
    bottom = torch.cat([-c, b.sum().reshape(1, 1)], 1)
    return torch.cat([top, bottom], 0)  # [n + 1, n + 1]


def _rownorm(x: Tensor) -> Tensor:
    return x / x.norm(dim=1, keepdim=True).clamp_min(1e-300)


def _sdp(
    b: Tensor,
    rank: int | None,
    max_iter: int,
    tol: float,
    num_roundings: int,
    gen: torch.Generator,
) -> tuple[float, float, Tensor, Tensor]:
    n = b.size(0)
    c = _augment(b)
    m = n + 1
    r = rank or max(2, math.ceil(math.sqrt(2 * 2 * m)) + 1)
    u = _rownorm(torch.randn(m, r, generator=gen, device=gen.device, dtype=b.dtype).to(b.device))
    v = _rownorm(torch.randn(m, r, generator=gen, device=gen.device, dtype=b.dtype).to(b.device))
    obj = -math.inf
    for _ in range(max_iter):
        u = _rownorm(c @ v)  # exact maximiser over U given V (rows decouple)
        v = _rownorm(c.T @ u)
        new = float((u * (c @ v)).sum())
        if new - obj <= tol * max(1.0, abs(new)):
            obj = new
            break
        obj = new
    # Dual certificate: Diag(lam) - M + eps I >= 0 with M = [[0, C/2], [C^T/2, 0]].
    lam = torch.cat([(c @ v).norm(dim=1), (c.T @ u).norm(dim=1)]) / 2  # [2m]
    big = torch.zeros(2 * m, 2 * m, dtype=b.dtype, device=b.device)
    big[:m, m:], big[m:, :m] = -c / 2, -c.T / 2
    big = big + torch.diag(lam)
    eps = max(0.0, -float(torch.linalg.eigvalsh(big)[0]))
    upper = (float(lam.sum()) + 2 * m * eps) / 4
    # Hyperplane rounding, then alternating sign flips (each step can only raise x^T C y).
    g = torch.randn(r, num_roundings, generator=gen, device=gen.device, dtype=b.dtype).to(b.device)
    x, y = torch.sign(u @ g), torch.sign(v @ g)  # [m, R]
    x[x == 0], y[y == 0] = 1.0, 1.0
    for _ in range(100):
        y_new = torch.sign(c.T @ x)
        y_new[y_new == 0] = 1.0
        x_new = torch.sign(c @ y_new)
        x_new[x_new == 0] = 1.0
        if torch.equal(x_new, x) and torch.equal(y_new, y):
            break
        x, y = x_new, y_new
    vals = (x * (c @ y)).sum(0)
    k = int(vals.argmax())
    xs, ys = x[:, k] > 0, y[:, k] > 0
    rows = xs[:n] if not bool(xs[n]) else ~xs[:n]  # undo the augmentation (module docstring)
    cols = ys[:n] if not bool(ys[n]) else ~ys[:n]
    value = abs(float(rows.to(b.dtype) @ b @ cols.to(b.dtype)))
    return value, max(upper, value), rows, cols


def cut_norm(
    adj: Tensor,
    *,
    node_weights: Tensor | None = None,
    method: str = "auto",
    rank: int | None = None,
    max_iter: int = 1000,
    tol: float = 1e-9,
    num_roundings: int = 64,
    seed: int | None = _SEED_DEFAULT,
    generator: torch.Generator | None = None,
) -> CutNormResult:
    r"""The cut norm of a (signed) weighted matrix's step function (module formula).

    Args:
        adj: A real ``[N, N]`` matrix (not necessarily symmetric, e.g. a difference of graphs).
        node_weights: Node measures :math:`\mu` ``[N]`` summing to 1. Default ``1/N``.
        method: ``"exact"`` (:math:`N \le 20`), ``"sdp"``, or ``"auto"`` (default: exact for
            :math:`N \le 14`, else SDP).
        rank: SDP factor rank :math:`r`. Default :math:`\lceil\sqrt{4(N+1)}\rceil + 1`.
        max_iter: Coordinate-ascent sweeps. Default ``1000``.
        tol: Relative objective change that stops the sweeps. Default ``1e-9``.
        num_roundings: Random hyperplanes. Default ``64``.
        seed: Seed of the SDP's initialisation and rounding. Default ``0`` (unless
            ``generator`` is given).
        generator: A generator instead of ``seed`` (its device is used to draw).

    Returns:
        A :class:`CutNormResult`; ``value <= ||A||_cut <= upper``, equality when exact.

    Examples:
        >>> a = torch.tensor([[1.0, -1.0], [-1.0, 1.0]])
        >>> cut_norm(a).value  # S = T = {0}: 1/4
        0.25
    """
    if not isinstance(adj, Tensor) or adj.dim() != 2 or adj.size(0) != adj.size(1):
        got = tuple(adj.shape) if isinstance(adj, Tensor) else type(adj).__name__
        raise GraphDataError(f"adj: expected a square matrix [N, N], got {got}")
    check_adjacency(adj, symmetric=False)
    check_choice("method", method, ("auto", "exact", "sdp"))
    check_int("num_roundings", num_roundings, 1)
    check_int("max_iter", max_iter, 1)
    if rank is not None:
        check_int("rank", rank, 1)
    check_real("tol", tol, low=0.0, fix="pass a small non-negative tolerance, e.g. 1e-9")
    check_seed("seed", seed)
    n = adj.size(0)
    b = adj.double()
    if node_weights is None:
        mu = torch.full((n,), 1.0 / n, dtype=b.dtype, device=b.device)
    else:
        mu = torch.as_tensor(node_weights, dtype=b.dtype, device=b.device)
        if (
            mu.shape != (n,)
            or not bool((torch.isfinite(mu) & (mu >= 0)).all())
            or not abs(float(mu.sum()) - 1) <= 1e-9
        ):
            raise GraphDataError(
                f"node_weights: expected {n} non-negative measures summing to 1, got shape "
                f"{tuple(mu.shape)} and sum {float(mu.sum()):.6g}"
            )
    b = mu[:, None] * b * mu[None, :]
    if method == "exact" or (method == "auto" and n <= 14):
        value, rows, cols = _exact(b)
        return CutNormResult(value, value, rows, cols, "exact")
    if seed is not None and seed is not _SEED_DEFAULT and generator is not None:
        raise GraphDataError("seed, generator: pass at most one of them")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise GraphDataError(
            f"generator: expected a torch.Generator, got {type(generator).__name__}; pass "
            "seed=... instead"
        )
    gen = generator or make_generator(seed, "cpu")
    value, upper, rows, cols = _sdp(b, rank, max_iter, tol, num_roundings, gen)
    return CutNormResult(value, upper, rows, cols, "sdp")
