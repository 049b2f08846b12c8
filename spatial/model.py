r"""The Celcomen energy: intracellular and intercellular gene-gene couplings on the unit sphere.

Megas et al., "Celcomen: spatial causal disentanglement for single-cell and tissue perturbation
modeling", arXiv:2409.05804 (ICLR 2025). Each cell :math:`i` carries an expression vector
:math:`x_i \in S^{G-1}` (unit norm over :math:`G` genes); the tissue's log-density is, up to its
normaliser, the energy

.. math::
    E(X) = \sum_i x_i^\top W_{\mathrm{intra}}\, x_i
         + \sum_i \sum_{j \to i} w_{ij}\, x_i^\top W_{\mathrm{inter}}\, x_j,
    \qquad p(X) \propto e^{E(X)},

with degree-normalised edge weights :math:`w_{ij}` (:func:`spatial._messages.edge_weights`,
GCN :math:`1/\sqrt{d_i d_j}` by default, as the reference's ``GCNConv``). Both matrices are
symmetric: :math:`x^\top W x` only sees the symmetric part of :math:`W_{\mathrm{intra}}`, and on
a symmetric graph the same holds for :math:`W_{\mathrm{inter}}`, so they are parametrised as
:math:`W = (P + P^\top)/2`. Entries are signed (inhibition allowed). Adding :math:`cI` to
:math:`W_{\mathrm{intra}}` adds the constant :math:`cN` to :math:`E` on the sphere, so its trace
is not identifiable.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from graphdata.errors import GraphDataError
from spatial._messages import in_messages, out_messages

__all__ = ["CelcomenEnergy"]


class CelcomenEnergy(nn.Module):
    r"""The Celcomen energy as a plain module: per-cell energies and local fields.

    .. math::
        e_i = x_i^\top W_{\mathrm{intra}} x_i + x_i^\top W_{\mathrm{inter}} m_i,
        \qquad m_i = \sum_{j \to i} w_{ij} x_j, \qquad E(X) = \sum_i e_i,

    and the local field (the Euclidean gradient of :math:`E` with respect to :math:`x_i`)

    .. math::
        h_i = \nabla_{x_i} E = 2 W_{\mathrm{intra}} x_i
        + W_{\mathrm{inter}} \Big(\sum_{j \to i} w_{ij} x_j + \sum_{i \to k} w_{ki} x_k\Big),

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

    def forward(self, x: Tensor, edge_index: Tensor, weight: Tensor) -> Tensor:
        """Per-cell energies :math:`e_i` (sum them for :math:`E(X)`), ``[N]``."""
        messages = in_messages(x, edge_index, weight)  # [N, G]
        return self.cell_energy(x, messages)

    def cell_energy(self, x: Tensor, messages: Tensor) -> Tensor:
        """Per-cell energies from precomputed in-messages :math:`m_i` ``[N, G]``, ``[N]``."""
        return (x * (x @ self.W_intra)).sum(-1) + (x * (messages @ self.W_inter)).sum(-1)

    def local_field(self, x: Tensor, edge_index: Tensor, weight: Tensor) -> Tensor:
        r"""Local fields :math:`h_i = \nabla_{x_i} E`, ``[N, G]``."""
        neighbours = in_messages(x, edge_index, weight) + out_messages(x, edge_index, weight)
        return self.field_from(x, neighbours)

    def field_from(self, x: Tensor, neighbours: Tensor) -> Tensor:
        r"""Local fields from precomputed neighbour sums (as :meth:`local_field` computes them).

        Args:
            x: Unit rows ``[N, G]``.
            neighbours: Weighted sums of in- and out-neighbours ``[N, G]``.

        Returns:
            :math:`2 W_{\mathrm{intra}} x_i + W_{\mathrm{inter}} n_i` for the sums :math:`n_i`,
            ``[N, G]``.
        """
        return 2.0 * (x @ self.W_intra) + neighbours @ self.W_inter

    def extra_repr(self) -> str:  # noqa: D102
        return f"n_genes={self.n_genes}"
