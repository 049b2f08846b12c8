r"""Bases of the linear :math:`S_n`-equivariant maps between tensor orders, from set partitions.

Maron, Ben-Hamu, Shamir, Lipman, "Invariant and Equivariant Graph Networks", ICLR 2019,
arXiv 1812.09902: the linear maps :math:`L: \mathbb{R}^{n^k} \to \mathbb{R}^{n^l}` that commute
with every node permutation form a space of dimension :math:`\mathrm{Bell}(k + l)` (for
:math:`n \ge k + l`), one basis element per set partition :math:`\pi` of the :math:`k + l` index
slots. Herbst & Jegelka, "Higher-Order Graphon Neural Networks: Approximation and Cut Distance",
ICLR 2025, arXiv 2503.14338, keep the elements whose blocks hold at most one input and at most
one output slot (no diagonal reads or writes): the Invariant Graphon Network (IWN) basis, whose
summed indices are averaged so the maps stay bounded on graphons.

Element :math:`\pi` acts, in the "diagram" form used by Maron et al.'s code, as

.. math::
    \mathrm{Op}_\pi(X)_{j_1 \dots j_l} = [\,j_a = j_b \text{ whenever slots } a, b
    \text{ share a block}\,] \cdot \frac{1}{n^{s_\pi}} \sum_{\text{input-only blocks}}
    X_{i_1 \dots i_k},

where the input index of a slot is the index of its block (a block with several input slots
reads a diagonal), blocks with output slots fix their index to the output's, blocks with only
output slots broadcast, and :math:`s_\pi` counts the input-only (summed) blocks; the factor
:math:`n^{-s_\pi}` is the "inf" normalisation (IWN: always; IGN: optional).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import comb, factorial

import torch
from torch import Tensor

from graphdata.errors import GraphDataError
from graphon.nn._contract import Term, apply_term, group_key, mask_product, node_counts
from graphon.nn._partitions import bell, set_partitions

__all__ = ["BASES", "MAX_ORDER", "BasisElement", "equivariant_basis", "basis_size", "apply_basis"]

#: Basis kinds: the full IGN basis (Maron et al.) and its IWN subset (Herbst & Jegelka).
BASES = ("iwn", "ign")
#: Largest supported tensor order (IGN 4 -> 4 has Bell(8) = 4140 elements).
MAX_ORDER = 4
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class BasisElement:
    """One basis map: a set partition of the ``in_order + out_order`` index slots.

    Attributes:
        in_order: Input order :math:`k`.
        out_order: Output order :math:`l`.
        labels: Restricted growth string over the slots, inputs first: ``labels[a]`` is the
            block of input slot ``a`` (``a < k``) or of output slot ``a - k``.

    Examples:
        >>> BasisElement(2, 2, (0, 1, 1, 0)).equation  # out[a, b] = X[b, a]: the transpose
        'ab->ba'
        >>> BasisElement(2, 1, (0, 1, 0)).equation, BasisElement(2, 1, (0, 1, 0)).summed
        ('ab->a', 1)
    """

    in_order: int
    out_order: int
    labels: tuple[int, ...]

    @property
    def term(self) -> Term:
        """The contraction plan of this element (private representation)."""
        return Term.from_labels(self.in_order, self.labels)

    @property
    def summed(self) -> int:
        r"""The number of summed (input-only) blocks :math:`s_\pi`."""
        return self.term.summed

    @property
    def reads_diagonal(self) -> bool:
        """Whether a block holds two or more input slots (the map reads a diagonal)."""
        ins = self.labels[: self.in_order]
        return len(set(ins)) < len(ins)

    @property
    def writes_diagonal(self) -> bool:
        """Whether a block holds two or more output slots (the map writes a diagonal)."""
        outs = self.labels[self.in_order :]
        return len(set(outs)) < len(outs)

    @property
    def is_iwn(self) -> bool:
        """Whether the element is in the IWN basis (no diagonal reads or writes)."""
        return not (self.reads_diagonal or self.writes_diagonal)

    @property
    def equation(self) -> str:
        """An einsum-like description, e.g. ``"ab->ba"``; letters absent on the left broadcast."""
        ins = "".join(_LETTERS[b] for b in self.labels[: self.in_order])
        outs = "".join(_LETTERS[b] for b in self.labels[self.in_order :])
        return f"{ins}->{outs}"

    def __str__(self) -> str:
        return self.equation


def _check_order(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_ORDER:
        raise GraphDataError(
            f"{name}: expected a tensor order in 0..{MAX_ORDER}, got {value!r}; orders above "
            f"{MAX_ORDER} cost n^{MAX_ORDER + 1} memory and are not supported"
        )
    return value


def check_basis(basis: object) -> str:
    """Return ``basis`` if it is ``"iwn"`` or ``"ign"``, else raise naming the choices."""
    if not isinstance(basis, str) or basis not in BASES:
        raise GraphDataError(f"basis: expected one of {list(BASES)}, got {basis!r}")
    return basis


def equivariant_basis(in_order: int, out_order: int, *, basis: str = "iwn") -> list[BasisElement]:
    r"""The basis of linear equivariant maps from order ``in_order`` to ``out_order`` tensors.

    Generated from the set partitions of the :math:`k + l` slots (Maron et al., arXiv
    1812.09902), not listed by hand; ``"iwn"`` keeps the partitions whose blocks each hold at
    most one input and at most one output slot (Herbst & Jegelka, arXiv 2503.14338), i.e. the
    partial bijections between :math:`s` input and :math:`s` output slots:

    .. math::
        |\mathcal{B}_{\mathrm{IGN}}| = \mathrm{Bell}(k + l), \qquad
        |\mathcal{B}_{\mathrm{IWN}}| = \sum_{s=0}^{\min(k,l)} s!\binom{k}{s}\binom{l}{s}.

    Args:
        in_order: Input order :math:`k` in ``0..MAX_ORDER``.
        out_order: Output order :math:`l` in ``0..MAX_ORDER``.
        basis: ``"iwn"`` (default) or ``"ign"``.

    Returns:
        The elements, in lexicographic order of their restricted growth strings.

    Examples:
        >>> [e.equation for e in equivariant_basis(2, 2)]
        ['ab->ab', 'ab->ac', 'ab->ba', 'ab->bc', 'ab->ca', 'ab->cb', 'ab->cd']
        >>> len(equivariant_basis(2, 2, basis="ign")), len(equivariant_basis(3, 3))
        (15, 34)
    """
    k, ell = _check_order("in_order", in_order), _check_order("out_order", out_order)
    check_basis(basis)
    elements = [BasisElement(k, ell, labels) for labels in set_partitions(k + ell)]
    return elements if basis == "ign" else [e for e in elements if e.is_iwn]


def basis_size(in_order: int, out_order: int, *, basis: str = "iwn") -> int:
    """The closed-form size of :func:`equivariant_basis` (Bell number or partial bijections).

    Examples:
        >>> basis_size(4, 4), basis_size(4, 4, basis="ign")
        (209, 4140)
    """
    k, ell = _check_order("in_order", in_order), _check_order("out_order", out_order)
    if check_basis(basis) == "ign":
        return bell(k + ell)
    return sum(factorial(s) * comb(k, s) * comb(ell, s) for s in range(min(k, ell) + 1))


def apply_basis(
    x: Tensor,
    elements: Sequence[BasisElement],
    mask: Tensor | None = None,
    *,
    normalize: bool = True,
) -> Tensor:
    r"""Apply each basis element to every channel, materialising one output per element.

    .. math::
        Y_{b,c,e,j_1 \dots j_l} = \mathrm{Op}_{\pi_e}(X_{b,c})_{j_1 \dots j_l}, \qquad
        n \to n_b \ (\text{real nodes of graph } b),

    with :math:`\mathrm{Op}_\pi` as in the module docstring (``normalize=False`` drops the
    :math:`n_b^{-s_\pi}`). This is the reference form (Maron et al.'s code stacks the 15
    outputs the same way); :class:`graphon.nn.layers.EquivariantLinear` never materialises
    broadcast outputs.

    Args:
        x: Input tensor; padding entries (outside the mask) must be zero.
        elements: Basis elements, all with the input order ``k`` of ``x``.
        mask: Real nodes ``[B, N]`` (bool); None means all ``N`` nodes are real.
        normalize: Divide by :math:`n_b` per summed index. Default ``True``.

    Returns:
        The stacked outputs, zero outside the mask.

    Shapes:
        x: ``[B, C, N, ..., N]`` (``k`` node axes); returns ``[B, C, E, N, ..., N]`` (``l``).

    Examples:
        >>> x = torch.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])  # [B=1, C=1, 2, 2]
        >>> apply_basis(x, equivariant_basis(2, 0)).flatten().tolist()  # total mean
        [2.5]
    """
    if not elements:
        raise GraphDataError("elements: expected at least one basis element, got none")
    k, ell = elements[0].in_order, elements[0].out_order
    if any(e.in_order != k or e.out_order != ell for e in elements):
        raise GraphDataError("elements: expected elements of one (in_order, out_order) pair")
    if x.dim() != 2 + k or any(s != x.size(-1) for s in x.shape[2:]):
        raise GraphDataError(
            f"x: expected [B, C] + {k} equal node axes for order {k}, got shape {tuple(x.shape)}"
        )
    n = x.size(-1) if k else (mask.size(1) if mask is not None else 1)
    counts = node_counts(mask, x, n)
    outs = []
    for element in elements:
        term = element.term
        out = apply_term(term, group_key(term), x, counts, n=n, normalize=normalize)
        shape = (x.size(0), x.size(1)) + (n,) * ell
        outs.append(out.expand(shape))
    stacked = torch.stack(outs, dim=2)  # [B, C, E, N, ..., N]
    if mask is not None and ell:
        stacked = stacked * mask_product(mask, ell).unsqueeze(1).unsqueeze(1).to(stacked.dtype)
    return stacked
