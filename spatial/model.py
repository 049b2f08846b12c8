r"""The Celcomen energy: intracellular and intercellular gene-gene couplings on the unit sphere.

Megas et al., "Celcomen: spatial causal disentanglement for single-cell and tissue perturbation
modeling", arXiv:2409.05804 (ICLR 2025). Each cell :math:`i` carries an expression vector
:math:`x_i \in S^{G-1}` (unit norm over :math:`G` genes); the tissue's log-density is, up to its
normaliser, the energy

.. math::
    E(X) = \sum_i x_i^\top W_{\mathrm{intra}}\, x_i
         + \sum_i \sum_{j \to i} w_{ij}\, x_i^\top W_{\mathrm{inter}}\, x_j
         + \sum_i (h_{\mathrm{intra}} + s_i\, h_{\mathrm{inter}})^\top x_i,
    \qquad p(X) \propto e^{E(X)},

with degree-normalised edge weights :math:`w_{ij}` (:func:`spatial._messages.edge_weights`,
GCN :math:`1/\sqrt{d_i d_j}` by default, as the reference's ``GCNConv``). Both matrices are
symmetric: :math:`x^\top W x` only sees the symmetric part of :math:`W_{\mathrm{intra}}`, and on
a symmetric graph the same holds for :math:`W_{\mathrm{inter}}`, so they are parametrised as
:math:`W = (P + P^\top)/2`. Entries are signed (inhibition allowed). Adding :math:`cI` to
:math:`W_{\mathrm{intra}}` adds the constant :math:`cN` to :math:`E` on the sphere, so its trace
is not identifiable.

The linear fields :math:`h_{\mathrm{intra}}, h_{\mathrm{inter}} \in \mathbb{R}^G` (zero unless
set or fitted; the paper's energy has none) weight cell :math:`i` by its strength
:math:`s_i = \sum_{j \to i} w_{ij} + \sum_{i \to k} w_{ki}`. They are what couplings acting on
deviations from a centre :math:`c` add to the quadratic energy:
:math:`(x_i - c)^\top W_{\mathrm{intra}} (x_i - c) + \sum_{j \to i} w_{ij} (x_i - c)^\top
W_{\mathrm{inter}} (x_j - c)` expands to the quadratic terms plus :math:`h_{\mathrm{intra}} =
-2 W_{\mathrm{intra}} c`, :math:`h_{\mathrm{inter}} = -W_{\mathrm{inter}} c` and a constant, so
non-negative expression, whose mean direction is far from the origin, need not be explained by
the couplings themselves (a per-gene field :math:`h^\top x` is the von Mises-Fisher mean term).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from graphdata.errors import GraphDataError
from spatial._messages import in_messages, out_messages, strengths

__all__ = ["CelcomenEnergy"]


class CelcomenEnergy(nn.Module):
    r"""The Celcomen energy as a plain module: per-cell energies and local fields.

    .. math::
        e_i = x_i^\top W_{\mathrm{intra}} x_i + x_i^\top W_{\mathrm{inter}} m_i
            + (h_{\mathrm{intra}} + s_i h_{\mathrm{inter}})^\top x_i,
        \qquad m_i = \sum_{j \to i} w_{ij} x_j, \qquad E(X) = \sum_i e_i,

    with the strength :math:`s_i = \sum_{j \to i} w_{ij} + \sum_{i \to k} w_{ki}`, and the
    local field (the Euclidean gradient of :math:`E` with respect to :math:`x_i`)

    .. math::
        \nabla_{x_i} E = 2 W_{\mathrm{intra}} x_i
        + W_{\mathrm{inter}} \Big(\sum_{j \to i} w_{ij} x_j + \sum_{i \to k} w_{ki} x_k\Big)
        + h_{\mathrm{intra}} + s_i h_{\mathrm{inter}},

    where the second sum runs over the edges that leave :math:`i` (in a directed k-NN graph a
    cell is also the neighbour of others).

    Args:
        n_genes: The number of genes :math:`G`.

    Shapes:
        x: ``[N, G]`` unit rows; edge_index: ``[2, E]``; weight: ``[E]``; output of
        :meth:`forward`: ``[N]``; of :meth:`local_field`: ``[N, G]``.

    Examples:
        >>> model = CelcomenEnergy(2)
        >>> model.set_matrices(torch.eye(2), torch.zeros(2, 2))
        >>> x = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
        >>> model(x, torch.tensor([[0], [1]]), torch.ones(1))
        tensor([1., 1.], grad_fn=<AddBackward0>)
    """

    def __init__(self, n_genes: int) -> None:
        super().__init__()
        if isinstance(n_genes, bool) or not isinstance(n_genes, int) or n_genes < 2:
            raise GraphDataError(f"n_genes: expected an integer >= 2, got {n_genes!r}")
        self.n_genes = n_genes
        self.intra_raw = nn.Parameter(torch.zeros(n_genes, n_genes))
        self.inter_raw = nn.Parameter(torch.zeros(n_genes, n_genes))
        self.h_intra = nn.Parameter(torch.zeros(n_genes))
        self.h_inter = nn.Parameter(torch.zeros(n_genes))

    @property
    def W_intra(self) -> Tensor:  # noqa: N802 - paper symbol
        """The symmetric intracellular matrix ``[G, G]``."""
        return 0.5 * (self.intra_raw + self.intra_raw.T)

    @property
    def W_inter(self) -> Tensor:  # noqa: N802 - paper symbol
        """The symmetric intercellular matrix ``[G, G]``."""
        return 0.5 * (self.inter_raw + self.inter_raw.T)

    @torch.no_grad()
    def set_matrices(self, W_intra: Tensor, W_inter: Tensor) -> None:  # noqa: N803
        """Copy given matrices in (their symmetric parts take effect).

        Args:
            W_intra: ``[G, G]`` intracellular matrix.
            W_inter: ``[G, G]`` intercellular matrix.
        """
        shape = (self.n_genes, self.n_genes)
        for name, value in (("W_intra", W_intra), ("W_inter", W_inter)):
            if not isinstance(value, Tensor) or tuple(value.shape) != shape:
                got = tuple(value.shape) if isinstance(value, Tensor) else type(value).__name__
                raise GraphDataError(f"{name}: expected a tensor of shape {shape}, got {got}")
            if not bool(torch.isfinite(value).all()):
                raise GraphDataError(
                    f"{name}: expected finite couplings, got {int((~torch.isfinite(value)).sum())} "
                    "NaN or inf entries; refit, or replace them (e.g. torch.nan_to_num)"
                )
        self.intra_raw.copy_(W_intra)
        self.inter_raw.copy_(W_inter)

    @torch.no_grad()
    def set_fields(self, h_intra: Tensor, h_inter: Tensor) -> None:
        """Copy given linear fields ``[G]`` in (see the module docstring).

        Args:
            h_intra: ``[G]`` per-gene field.
            h_inter: ``[G]`` per-gene field weighted by each cell's strength.
        """
        for name, value in (("h_intra", h_intra), ("h_inter", h_inter)):
            if not isinstance(value, Tensor) or tuple(value.shape) != (self.n_genes,):
                got = tuple(value.shape) if isinstance(value, Tensor) else type(value).__name__
                raise GraphDataError(
                    f"{name}: expected a tensor of shape ({self.n_genes},), got {got}"
                )
            if not bool(torch.isfinite(value).all()):
                raise GraphDataError(
                    f"{name}: expected a finite field, got NaN or inf entries; refit, or "
                    "replace them (e.g. torch.nan_to_num)"
                )
        self.h_intra.copy_(h_intra)
        self.h_inter.copy_(h_inter)

    def linear_field(self, strength: Tensor) -> Tensor:
        r"""The linear part of the field, :math:`h_{\mathrm{intra}} + s_i h_{\mathrm{inter}}`,
        ``[N, G]`` for strengths ``[N]``.
        """  # noqa: D205
        return self.h_intra + strength.unsqueeze(-1) * self.h_inter

    def forward(self, x: Tensor, edge_index: Tensor, weight: Tensor) -> Tensor:
        """Per-cell energies :math:`e_i` (sum them for :math:`E(X)`), ``[N]``."""
        messages = in_messages(x, edge_index, weight)  # [N, G]
        s_in, s_out = strengths(edge_index, weight, x.shape[0])
        return self.cell_energy(x, messages, s_in + s_out)

    def cell_energy(self, x: Tensor, messages: Tensor, strength: Tensor) -> Tensor:
        """Per-cell energies from in-messages :math:`m_i` ``[N, G]`` and strengths ``[N]``."""
        quadratic = (x * (x @ self.W_intra)).sum(-1) + (x * (messages @ self.W_inter)).sum(-1)
        return quadratic + (x * self.linear_field(strength)).sum(-1)

    def local_field(self, x: Tensor, edge_index: Tensor, weight: Tensor) -> Tensor:
        r"""Local fields :math:`\nabla_{x_i} E`, ``[N, G]``."""
        neighbours = in_messages(x, edge_index, weight) + out_messages(x, edge_index, weight)
        s_in, s_out = strengths(edge_index, weight, x.shape[0])
        return self.field_from(x, neighbours, s_in + s_out)

    def field_from(self, x: Tensor, neighbours: Tensor, strength: Tensor) -> Tensor:
        r"""Local fields from precomputed neighbour sums (as :meth:`local_field` computes them).

        Args:
            x: Unit rows ``[N, G]``.
            neighbours: Weighted sums of in- and out-neighbours ``[N, G]``.
            strength: The cells' strengths :math:`s_i` (in- plus out-weights) ``[N]``; the row
                sums of :func:`spatial._messages.neighbour_operator`.

        Returns:
            :math:`2 W_{\mathrm{intra}} x_i + W_{\mathrm{inter}} n_i + h_{\mathrm{intra}} + s_i
            h_{\mathrm{inter}}` for the sums :math:`n_i`, ``[N, G]``.
        """
        return 2.0 * (x @ self.W_intra) + neighbours @ self.W_inter + self.linear_field(strength)

    def extra_repr(self) -> str:  # noqa: D102
        return f"n_genes={self.n_genes}"
