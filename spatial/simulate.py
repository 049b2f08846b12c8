r"""Synthetic tissues drawn from the Celcomen model itself, with known signed couplings.

A tissue is a set of cells at hex-grid or uniformly random positions, a directed k-NN graph
(:func:`graphdata.spatial.knn_graph`), two *distinct* signed symmetric matrices
:math:`W_{\mathrm{intra}}, W_{\mathrm{inter}}` (independent draws, unlike the Celcomen paper's
simulation, ``Simulation.ipynb`` in stathismegas/celcomen_reproducibility, which used one matrix
for both and so cannot test disentanglement), and expression sampled from
:math:`p(X) \propto e^{E(X)}` on :math:`(S^{G-1})^N` by Langevin dynamics on the sphere:

.. math::
    x_i \leftarrow \mathrm{normalize}\big(x_i + \eta\, P_i h_i + \sqrt{2\eta}\, P_i \xi_i\big),
    \qquad P_i = I - x_i x_i^\top,\ \xi_i \sim \mathcal{N}(0, I),

with :math:`h_i = \nabla_{x_i} E` the local field. The retraction supplies the Itô drift
:math:`-(G-1)x_i\,dt` of Brownian motion on the sphere, so the chain targets :math:`p` up to an
:math:`O(\eta)` discretisation bias (no Metropolis correction).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import Tensor

from graphdata.checks import INT64_MAX, check_size
from graphdata.device import make_generator
from graphdata.errors import GraphDataError
from graphdata.spatial import knn_graph
from spatial._inputs import check_graph, check_int, check_real, check_seed
from spatial._messages import edge_weights, neighbour_operator
from spatial.model import CelcomenEnergy

if TYPE_CHECKING:
    from anndata import AnnData  # imported in to_anndata: `import spatial` stays cheap

__all__ = [
    "hex_grid",
    "random_positions",
    "random_couplings",
    "langevin_sample",
    "SimulatedTissue",
    "simulate_tissue",
]

# Lower bounds of the memory each size holds, in bytes (arrays certainly allocated; the size
# arguments are refused above what fits the machine's memory, graphdata.checks.check_size):
# hex_grid: int64 row and column indices (16 B) and the float32 coordinates and their unscaled
# copy (16 B) per cell; random_positions: the float32 draw and its scaled copy per cell;
# random_couplings: per gene pair the float32 magnitude, sign, upper triangle and matrix.
_HEX_BYTES = 32
_POSITION_BYTES = 16
_COUPLING_BYTES = 16
# langevin_sample: per cell and gene, the state, the field, the noise, the move and the
# neighbour sums (5 rows of the model's dtype); simulate_tissue adds per cell the int64 edge
# list [2, N k] (16 k B) and the hex grid.
_LANGEVIN_ROWS = 5


def _check_steps(steps: object) -> None:
    """``steps`` in ``[0, 2**63 - 1]``: a step count is an int64, as every count of spatial."""
    check_int("steps", steps, 0, INT64_MAX)


def hex_grid(n_cells: int, *, spacing: float = 1.0) -> Tensor:
    """The first ``n_cells`` points of a hexagonal lattice filling a near-square patch.

    Args:
        n_cells: Number of points, at most the machine's memory over 32 bytes (the int64
            indices and float32 coordinates of a point).
        spacing: Distance between neighbouring points (default 1).

    Returns:
        Coordinates ``[n_cells, 2]`` float32; every interior point has 6 neighbours at ``spacing``.

    Examples:
        >>> hex_grid(4)
        tensor([[0.0000, 0.0000],
                [1.0000, 0.0000],
                [0.5000, 0.8660],
                [1.5000, 0.8660]])
    """
    check_size("n_cells", n_cells, 1, bytes_each=_HEX_BYTES, what="grid points")
    check_real("spacing", spacing, low=0.0, low_open=True, fix="pass a positive spacing, e.g. 1.0")
    side = max(1, math.ceil(math.sqrt(n_cells)))
    row = torch.arange(n_cells) // side
    col = torch.arange(n_cells) % side
    x = col.float() + 0.5 * (row % 2).float()
    y = row.float() * (math.sqrt(3.0) / 2.0)
    return spacing * torch.stack([x, y], dim=1)


def random_positions(n_cells: int, *, seed: int | None = 0) -> Tensor:
    """Uniform positions in a square of side ``sqrt(n_cells)`` (unit density).

    Args:
        n_cells: Number of points, at most the machine's memory over 16 bytes (a float32 point
            and its scaled copy).
        seed: Seed (default 0).

    Returns:
        Coordinates ``[n_cells, 2]`` float32.
    """
    check_size("n_cells", n_cells, 1, bytes_each=_POSITION_BYTES, what="points")
    check_seed("seed", seed)
    generator = make_generator(seed)
    return torch.rand(n_cells, 2, generator=generator) * math.sqrt(n_cells)


def random_couplings(
    n_genes: int, *, density: float = 0.6, strength: float | None = None, seed: int | None = 0
) -> tuple[Tensor, Tensor]:
    r"""Two independent signed symmetric matrices with zero diagonal and a given spectral norm.

    Each off-diagonal pair is non-zero with probability ``density``, with magnitude
    :math:`U(0.5, 1)` and a random sign; each matrix is then scaled to spectral norm
    ``strength``, by default :math:`G/2`: a von Mises-Fisher field is informative once its
    concentration is comparable to :math:`\nu + 1 = G/2`, so this keeps every gene count out of
    the weak-coupling regime where any second-moment statistic is linear in the couplings.

    Args:
        n_genes: :math:`G \ge 2`, with :math:`16 G^2` bytes (the float32 magnitudes, signs,
            triangle and matrix) at most the machine's memory.
        density: Fraction of non-zero off-diagonal pairs (default 0.6).
        strength: Spectral norm of each matrix; None (default) uses ``n_genes / 2``.
        seed: Seed (default 0).

    Returns:
        ``(W_intra, W_inter)``, float32 ``[G, G]`` each.
    """
    check_size("n_genes", n_genes, 2, bytes_each=_COUPLING_BYTES, what="gene pairs", power=2)
    check_real(
        "density",
        density,
        low=0.0,
        low_open=True,
        high=1.0,
        fix="pass a fraction of non-zero couplings in (0, 1], e.g. 0.6",
    )
    strength = n_genes / 2.0 if strength is None else strength
    check_real(
        "strength",
        strength,
        low=0.0,
        low_open=True,
        fix="pass a positive spectral norm, or None (n_genes / 2)",
    )
    check_seed("seed", seed)
    generator = make_generator(seed)

    def draw() -> Tensor:
        shape = (n_genes, n_genes)
        magnitude = 0.5 + 0.5 * torch.rand(shape, generator=generator)
        sign = torch.where(torch.rand(shape, generator=generator) < 0.5, -1.0, 1.0)
        support = torch.rand(shape, generator=generator) < density
        upper = torch.triu(magnitude * sign * support, diagonal=1)
        if not bool(upper.any()):  # keep at least one coupling so the scaling is defined
            upper[0, 1] = 1.0
        w = upper + upper.T
        return w * (strength / torch.linalg.matrix_norm(w, ord=2))

    return draw(), draw()


def langevin_sample(
    model: CelcomenEnergy,
    edge_index: Tensor,
    weight: Tensor,
    n_cells: int,
    *,
    steps: int = 2000,
    step_size: float = 0.005,
    seed: int | None = 0,
) -> Tensor:
    r"""Sample unit rows from :math:`p(X) \propto e^{E(X)}` by Langevin dynamics on the sphere.

    .. math::
        x_i \leftarrow \mathrm{normalize}\big(x_i + P_i(\eta\, h_i + \sqrt{2\eta}\, \xi_i)\big),
        \qquad P_i = I - x_i x_i^\top.

    Starts from independent uniform points on the sphere; all randomness comes from ``seed``.
    Runs on the device and dtype of the model's parameters.

    Args:
        model: The energy to sample from.
        edge_index: ``[2, E]`` source -> target.
        weight: Normalised edge weights ``[E]``.
        n_cells: ``N``, at most the machine's memory over :math:`5 G s` bytes (the state,
            field, noise, move and neighbour sums of a cell; :math:`s` bytes per entry of the
            model's dtype).
        steps: Number of Langevin steps (default 2000), at most :math:`2^{63} - 1` (an int64,
            as every step count of :mod:`spatial`).
        step_size: :math:`\eta` (default 0.005).
        seed: Seed (default 0).

    Returns:
        Samples ``[N, G]`` with unit rows.
    """
    param = model.intra_raw
    per_cell = _LANGEVIN_ROWS * model.n_genes * param.element_size()
    check_size("n_cells", n_cells, 1, bytes_each=per_cell, what="cells")
    _check_steps(steps)
    check_real(
        "step_size",
        step_size,
        low=0.0,
        low_open=True,
        fix="pass a positive Langevin step size, e.g. 0.005",
    )
    check_seed("seed", seed)
    check_graph(edge_index, weight, n_cells)
    generator = make_generator(seed, param.device)
    x = torch.randn(
        n_cells, model.n_genes, generator=generator, device=param.device, dtype=param.dtype
    )
    x = x / x.norm(dim=-1, keepdim=True)
    noise_scale = math.sqrt(2.0 * step_size)
    operator = neighbour_operator(edge_index, weight.to(x.dtype), n_cells)  # [N, N] CSR
    strength = (operator @ torch.ones_like(x[:, :1])).squeeze(-1)  # [N], row sums of S
    with torch.no_grad():
        for _ in range(steps):
            field = model.field_from(x, operator @ x, strength)
            noise = torch.randn(x.shape, generator=generator, device=x.device, dtype=x.dtype)
            move = step_size * field + noise_scale * noise
            move = move - (x * move).sum(-1, keepdim=True) * x  # tangent projection
            x = x + move
            x = x / x.norm(dim=-1, keepdim=True)
    if not bool(torch.isfinite(x).all()):
        raise GraphDataError(
            f"step_size: the Langevin sampler diverged ({int((~torch.isfinite(x)).sum())} "
            f"non-finite entries after {steps} steps of {step_size:g}); lower step_size or the "
            "coupling strength"
        )
    return x


@dataclass
class SimulatedTissue:
    """A simulated tissue with its ground truth.

    Attributes:
        coords: Positions ``[N, 2]``.
        edge_index: Directed k-NN graph ``[2, N k]`` (source = neighbour, target = centre).
        x: Expression on the unit sphere ``[N, G]`` (signed).
        W_intra: True intracellular matrix ``[G, G]``.
        W_inter: True intercellular matrix ``[G, G]``.
        normalization: The edge normalisation the data were generated with.
    """

    coords: Tensor
    edge_index: Tensor
    x: Tensor
    W_intra: Tensor  # noqa: N815 - paper symbol
    W_inter: Tensor  # noqa: N815 - paper symbol
    normalization: str = "gcn"

    def to_anndata(self, *, depth: float = 100.0, seed: int | None = 0) -> AnnData:
        r"""AnnData with ``X`` = the signed sphere coordinates, counts, and the truth in ``varp``.

        Fit ``X`` with ``Celcomen().fit(adata, allow_negative=True)``: the coordinates are
        signed, which real expression never is, so AnnData input refuses negatives by default.
        ``layers['counts']`` holds non-negative counts derived from them,

        .. math::
            c_{ig} \sim \mathrm{Poisson}\big(d\,(1 + x_{ig})\big),

        a per-gene baseline :math:`d` (``depth``, the mean count of a gene) modulated by the
        signed coordinate (:math:`|x_{ig}| \le 1`, so the rate is never negative); fit them as
        a user fits real counts, ``Celcomen().fit(adata, layer="counts")``.

        Args:
            depth: Mean count per gene and cell :math:`d > 0` (default 100).
            seed: Seed of the Poisson draws (default 0).

        Returns:
            AnnData with ``obsm['spatial']``, the graph in ``obsp['spatial_connectivities']``
            / ``obsp['spatial_distances']`` / ``uns['spatial_neighbors']`` (as
            :func:`graphdata.spatial_anndata.spatial_neighbors_knn` writes it),
            ``layers['counts']`` (float32 ``[N, G]``, integer-valued), and
            ``varp['true_intra']``, ``varp['true_inter']`` (float32 ``[G, G]``).
        """
        check_real("depth", depth, low=0.0, low_open=True, fix="pass a mean count, e.g. 100")
        check_seed("seed", seed)
        from anndata import AnnData

        from graphdata.spatial_anndata import spatial_neighbors_knn

        n, g = self.x.shape
        adata = AnnData(
            X=self.x.detach().cpu().numpy().astype(np.float32),
            obsm={"spatial": self.coords.detach().cpu().numpy()},
        )
        adata.obs_names = [f"cell_{i}" for i in range(n)]
        adata.var_names = [f"gene_{j}" for j in range(g)]
        spatial_neighbors_knn(adata, self.edge_index.shape[1] // n)
        rate = depth * (1.0 + self.x.detach().cpu().double()).clamp(min=0.0)  # [N, G]
        counts = torch.poisson(rate, generator=make_generator(seed))
        adata.layers["counts"] = counts.numpy().astype(np.float32)
        adata.varp["true_intra"] = self.W_intra.detach().cpu().numpy()
        adata.varp["true_inter"] = self.W_inter.detach().cpu().numpy()
        return adata


def simulate_tissue(
    n_cells: int = 1000,
    n_genes: int = 10,
    *,
    layout: str = "hex",
    n_neighbors: int = 6,
    density: float = 0.6,
    strength: float | None = None,
    normalization: str = "gcn",
    steps: int = 4000,
    step_size: float = 0.002,
    seed: int | None = 0,
) -> SimulatedTissue:
    """Simulate a tissue from known distinct signed couplings (module docstring).

    The sizes are refused (before anything is drawn) above what fits the machine's memory:
    ``n_genes`` when :math:`16 G^2` bytes (:func:`random_couplings`) exceed it, ``n_cells``
    when :math:`N (20 G + 16 k + 32)` bytes do (the float32 rows of :func:`langevin_sample`, the
    int64 k-NN edges, :func:`hex_grid`); ``steps`` above :math:`2^{63} - 1`.

    Args:
        n_cells: Number of cells (default 1000).
        n_genes: Number of genes (default 10).
        layout: ``"hex"`` (default) or ``"random"`` positions.
        n_neighbors: k of the directed k-NN graph (default 6).
        density: Fraction of non-zero couplings (default 0.6).
        strength: Spectral norm of each true matrix; None (default) uses ``n_genes / 2``.
        normalization: Edge normalisation of the energy (default ``"gcn"``).
        steps: Langevin steps (default 4000).
        step_size: Langevin step size (default 0.002).
        seed: Seed of couplings, positions and sampling, in ``[0, 2**64 - 1]`` or None (default
            0); the sampling stream is seeded with ``(seed + 1) mod 2**64``.

    Returns:
        A :class:`SimulatedTissue` (float32, CPU).

    Examples:
        >>> tissue = simulate_tissue(50, 4, steps=20, seed=1)
        >>> tissue.x.shape, bool(torch.allclose(tissue.x.norm(dim=1), torch.ones(50)))
        (torch.Size([50, 4]), True)
    """
    if layout not in ("hex", "random"):
        raise GraphDataError(f"layout: expected 'hex' or 'random', got {layout!r}")
    check_size("n_genes", n_genes, 2, bytes_each=_COUPLING_BYTES, what="gene pairs", power=2)
    per_cell = 4 * _LANGEVIN_ROWS * n_genes + _HEX_BYTES
    check_size("n_cells", n_cells, 2, bytes_each=per_cell, what="cells")
    check_int("n_neighbors", n_neighbors, 1, n_cells - 1)
    per_cell += 16 * n_neighbors
    check_size("n_cells", n_cells, 2, bytes_each=per_cell, what="cells")
    _check_steps(steps)
    check_real(
        "step_size",
        step_size,
        low=0.0,
        low_open=True,
        fix="pass a positive Langevin step size, e.g. 0.002",
    )
    check_seed("seed", seed)
    coords = hex_grid(n_cells) if layout == "hex" else random_positions(n_cells, seed=seed)
    edge_index, _ = knn_graph(coords, n_neighbors)
    w_intra, w_inter = random_couplings(n_genes, density=density, strength=strength, seed=seed)
    model = CelcomenEnergy(n_genes)
    model.set_matrices(w_intra, w_inter)
    weight = edge_weights(edge_index, n_cells, normalization=normalization)
    # A distinct stream from the couplings, modulo 2**64: torch takes unsigned 64-bit seeds.
    seed_x = None if seed is None else (seed + 1) % 2**64
    x = langevin_sample(
        model, edge_index, weight, n_cells, steps=steps, step_size=step_size, seed=seed_x
    )
    return SimulatedTissue(coords, edge_index, x, w_intra, w_inter, normalization)
