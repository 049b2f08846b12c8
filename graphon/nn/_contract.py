"""Private contraction plans: apply a set-partition basis element with einsum, no dense operator.

A basis element (a set partition of ``k`` input and ``l`` output slots) acts in three steps:

1. *reduce*: one ``torch.einsum`` over the input, one subscript per block; a block with several
   input slots reads a diagonal, input-only blocks are summed (then divided by ``n_b`` each);
2. *arrange*: the result keeps one axis per "kept" block (input and output slots); size-1 axes
   are inserted for output-only blocks, which broadcast;
3. *write*: if every output block holds one slot, broadcasting does the rest; otherwise the
   values go onto the diagonal of a zero tensor through ``torch.as_strided_scatter``.

Elements with the same output structure (:func:`group_key`) give tensors of the same shape after
step 2, so a layer adds them before the (single) write of the group. :func:`reduce` and
:func:`apply_term` (channels first) are the reference (:func:`graphon.nn.basis.apply_basis`);
layers reduce with the channels-last kernels of :mod:`graphon.nn._fast` and share
:func:`arrange` and :func:`write` (``channels_last=True``).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

__all__: list[str] = []

#: A group key: (block of each output slot, relabelled by first appearance; per output block,
#: whether it is kept (fed by input slots) rather than broadcast).
GroupKey = tuple[tuple[int, ...], tuple[bool, ...]]


@dataclass(frozen=True)
class Term:
    """The contraction plan of one partition (see the module docstring)."""

    in_blocks: tuple[int, ...]
    out_blocks: tuple[int, ...]
    kept: tuple[int, ...]
    summed: int

    @classmethod
    def from_labels(cls, in_order: int, labels: tuple[int, ...]) -> Term:
        ins, outs = labels[:in_order], labels[in_order:]
        out_order = list(dict.fromkeys(outs))  # output blocks by first appearance
        kept = tuple(b for b in out_order if b in ins)
        summed = len(set(ins) - set(outs))
        return cls(tuple(ins), tuple(outs), kept, summed)

    @property
    def kept_in(self) -> tuple[int, ...]:
        """The kept blocks in input order (first appearance among the input slots)."""
        return tuple(b for b in dict.fromkeys(self.in_blocks) if b in self.kept)

    @property
    def to_output(self) -> tuple[int, ...]:
        """Axis permutation from :attr:`kept_in` order to :attr:`kept` (output) order."""
        return tuple(self.kept_in.index(b) for b in self.kept)

    @property
    def local(self) -> bool:
        """Whether the output entry reads only the matching input entry (no summed index)."""
        return self.summed == 0


def group_key(term: Term) -> GroupKey:
    """The output structure shared by all elements that can be added before writing."""
    order = list(dict.fromkeys(term.out_blocks))
    pattern = tuple(order.index(b) for b in term.out_blocks)
    return pattern, tuple(b in term.in_blocks for b in order)


def node_counts(mask: Tensor | None, like: Tensor, n: int) -> Tensor | float:
    """Per-graph node counts ``[B]`` in the dtype of ``like`` (or the float ``n`` without mask)."""
    if mask is None:
        return float(n)
    return mask.sum(1).to(like.dtype)


def normalise(t: Tensor, counts: Tensor | float, summed: int) -> Tensor:
    """Divide by ``counts ** summed`` (per graph: ``counts`` ``[B]`` along the batch axis)."""
    if isinstance(counts, Tensor):
        counts = counts.view((-1,) + (1,) * (t.dim() - 1))
    return t / counts**summed


def reduce(term: Term, x: Tensor, counts: Tensor | float, *, normalize: bool) -> Tensor:
    """Step 1 (reference): the einsum over the input, one axis per kept block, output order."""
    in_sub = [0, 1] + [2 + b for b in term.in_blocks]
    out_sub = [0, 1] + [2 + b for b in term.kept]
    out = torch.einsum(x, in_sub, out_sub)
    return normalise(out, counts, term.summed) if normalize and term.summed else out


def arrange(t: Tensor, key: GroupKey, *, channels_last: bool = False) -> Tensor:
    """Step 2: insert size-1 axes for the broadcast output blocks.

    ``[B, C, d_1, ..., d_m]`` (channels first) or ``[B, d_1, ..., d_m, C]`` (channels last,
    the layout of :class:`graphon.nn.layers.EquivariantLinear`).
    """
    first = 1 if channels_last else 2  # the first node axis
    for position, kept in enumerate(key[1]):
        if not kept:
            t = t.unsqueeze(first + position)
    return t


def write(
    block: Tensor, key: GroupKey, n: int, batch: int, *, channels_last: bool = False
) -> Tensor:
    """Step 3: the group's output, broadcastable to the full ``l``-node-axis shape.

    ``[B, C, N, ..., N]`` (channels first) or ``[B, N, ..., N, C]`` (channels last). Blocks
    with several output slots are written onto the diagonal of a zero tensor by one
    ``as_strided_scatter`` whose node stride per block is the sum of its slots' strides.
    """
    pattern = key[0]
    blocks = len(key[1])
    if blocks == len(pattern):  # one output slot per block: plain broadcasting
        return block
    channels = block.size(-1 if channels_last else 1)
    nodes, kept = (n,) * len(pattern), (n,) * blocks
    if channels_last:
        base = block.new_zeros((batch, *nodes, channels))
    else:
        base = block.new_zeros((batch, channels, *nodes))
    strides = base.stride()
    first = 1 if channels_last else 2
    block_strides = [0] * blocks
    for slot, b in enumerate(pattern):
        block_strides[b] += strides[first + slot]
    if channels_last:
        size, stride = (batch, *kept, channels), (strides[0], *block_strides, strides[-1])
    else:
        size, stride = (batch, channels, *kept), (strides[0], strides[1], *block_strides)
    return torch.as_strided_scatter(base, block.expand(size), size, stride)


def apply_term(
    term: Term, key: GroupKey, x: Tensor, counts: Tensor | float, *, n: int, normalize: bool
) -> Tensor:
    """Reduce, arrange and write one element for every channel (the materialising reference)."""
    block = arrange(reduce(term, x, counts, normalize=normalize), key)
    return write(block, key, n, x.size(0))


def mask_product(mask: Tensor, order: int) -> Tensor:
    """The outer product of ``mask`` with itself ``order`` times, ``[B, N, ..., N]`` (bool)."""
    out = mask
    for axis in range(1, order):
        out = out.unsqueeze(-1) & mask.view(mask.shape[:1] + (1,) * axis + mask.shape[1:])
    return out
