r"""Fused distance between gathered query rows and gathered entity rows (sLCWA training).

Distance models (TransE, RotatE) score a positive and its ``k`` corrupted copies against only two
queries per positive: :math:`q = e_h + w_r` (or :math:`e_h \circ w_r`) for a replaced tail and
:math:`q = e_t - w_r` (or :math:`e_t \circ \bar w_r`) for a replaced head. :func:`gathered_distance`
computes :math:`\lVert q_{i} - e_{j} \rVert` for index pairs with a hand-written backward: one
``[N, m]`` difference, an in-place gradient and two ``index_add_`` scatters, where autograd
through ``embedding``, ``sub`` and ``vector_norm`` keeps about twice as many ``[N, m]`` passes.

A :class:`Workspace` lets a training loop reuse the two ``[N, m]`` buffers from step to step: a
fresh multi-megabyte tensor costs page faults on every step on a CPU (glibc returns freed large
blocks to the system), about a third of a TransE or RotatE step on UMLS. ``entity_grad`` (the
entity table's :attr:`kg._rows.Embedding.grad_buffer` during sLCWA training) takes the entity
gradient rows by ``index_add_`` instead of a fresh ``[E, m]`` table.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from graphdata.errors import GraphDataError

__all__ = ["gathered_distance", "query_rows", "row_distance", "DISTANCES", "Workspace"]

#: Distance kinds: L1 and L2 norms of real rows, and the sum of complex moduli of ``[re | im]``
#: rows (RotatE's distance).
DISTANCES = ("l1", "l2", "complex_l1")


class Workspace:
    """Reusable ``[N, m]`` buffers (two by default), lent to one call at a time.

    :func:`gathered_distance` takes two, and the trainer's 1-N score product
    (:mod:`kg._product`) one. A call takes them in ``forward`` and hands them back at the end of
    its ``backward`` (or at once when nothing needs a gradient); while they are lent, other calls
    allocate their own, so two graphs alive at once never share memory.

    Args:
        count: How many buffers :meth:`take` lends. Default 2.
    """

    def __init__(self, count: int = 2) -> None:
        self.count = count
        self._flat: tuple[Tensor, ...] | None = None
        self.lent = False

    def take(self, rows: int, width: int, like: Tensor) -> tuple[Tensor, ...] | None:
        """``count`` ``[rows, width]`` buffers of ``like``'s dtype and device (``None``: lent)."""
        if self.lent:
            return None
        size = rows * width
        flat = self._flat
        if (
            flat is None
            or flat[0].numel() < size
            or flat[0].dtype != like.dtype
            or (flat[0].device != like.device)
        ):
            flat = self._flat = tuple(like.new_empty(size) for _ in range(self.count))
        self.lent = True
        return tuple(buffer[:size].view(rows, width) for buffer in flat)


class _GatheredDistance(torch.autograd.Function):
    # Fresh [N, m] tensors cost a page-faulting allocation each on a CPU, so both passes work in
    # place on the two gathered buffers; backward consumes them and may run only once. With
    # per_row = k > 0 (one query per k outputs) the query rows are broadcast, not gathered, and
    # the difference is taken as e - q: the norms are even, so only the signs of the two
    # gradients swap, and the entity gradient (k times larger) needs no negation.

    @staticmethod
    def forward(
        ctx: Any,
        queries: Tensor,
        query_index: Tensor,
        entities: Tensor,
        entity_index: Tensor,
        kind: str,
        workspace: Workspace | None,
        backward_coming: bool,
        entity_grad: Tensor | None,
        per_row: int,
    ) -> Tensor:
        n, width = entity_index.numel(), queries.size(1)
        buffers = None if workspace is None else workspace.take(n, width, queries)
        if buffers is None:
            diff, work = queries.new_empty(n, width), queries.new_empty(n, width)
        else:
            diff, work = buffers
        torch.index_select(entities, 0, entity_index, out=work)  # [N, m], reused below
        if per_row:
            rows = queries.index_select(0, query_index).unsqueeze(1)  # [R, 1, m]
            torch.sub(work.view(-1, per_row, width), rows, out=diff.view(-1, per_row, width))
        else:
            torch.index_select(queries, 0, query_index, out=diff).sub_(work)  # [N, m]
        if kind == "l1":
            out = torch.abs(diff, out=work).sum(-1)
            saved = out
        elif kind == "l2":
            out = torch.linalg.vector_norm(diff, dim=-1)
            saved = out
        else:
            re2, im2 = torch.mul(diff, diff, out=work).chunk(2, dim=-1)
            saved = re2.add_(im2).sqrt_()  # [N, m / 2]: coordinate moduli, a view of work
            out = saved.sum(-1)
        ctx.kind, ctx.consumed, ctx.per_row = kind, False, per_row
        ctx.workspace = workspace if buffers is not None else None
        if ctx.workspace is not None and not backward_coming:
            ctx.workspace.lent = False  # out does not alias the buffers
        ctx.shapes = (queries.shape, entities.shape)
        ctx.entity_grad = entity_grad
        ctx.save_for_backward(query_index, entity_index, diff, saved)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
        if ctx.consumed:
            raise RuntimeError(
                "gathered_distance: backward reuses its buffers and runs once; do not pass "
                "retain_graph=True through it"
            )
        ctx.consumed = True
        query_index, entity_index, diff, saved = ctx.saved_tensors
        tiny = torch.finfo(diff.dtype).tiny
        if ctx.kind == "l1":
            g = diff.sign_().mul_(grad.unsqueeze(-1))  # d|x|/dx = sgn(x), 0 at 0 like autograd
        elif ctx.kind == "l2":
            g = diff.mul_((grad / saved.clamp_min(tiny)).unsqueeze(-1))  # x / |x|, 0 at x = 0
        else:
            # d|z_i| / d(re_i, im_i) = (re_i, im_i) / |z_i|; 0 at z_i = 0.
            scale = saved.clamp_min_(tiny).reciprocal_().mul_(grad.unsqueeze(-1))  # [N, m / 2]
            g = diff.unflatten(-1, (2, -1)).mul_(scale.unsqueeze(-2)).flatten(-2)
        query_shape, entity_shape = ctx.shapes
        grad_queries = grad_entities = None
        k = ctx.per_row
        if ctx.needs_input_grad[0]:
            if k:  # g is the gradient in e - q: the query's is minus its sum over the k copies
                per_query = g.view(-1, k, g.size(-1)).sum(1).neg_()
                grad_queries = g.new_zeros(query_shape).index_add_(0, query_index, per_query)
            else:
                grad_queries = g.new_zeros(query_shape).index_add_(0, query_index, g)
        if ctx.needs_input_grad[2]:
            if not k:
                g = g.neg_()  # the gradient in e of q - e (alpha=-1 in index_add_ is 3x slower)
            if ctx.entity_grad is not None:
                ctx.entity_grad.index_add_(0, entity_index, g)
            else:
                grad_entities = g.new_zeros(entity_shape).index_add_(0, entity_index, g)
        if ctx.workspace is not None:
            ctx.workspace.lent = False
        return grad_queries, None, grad_entities, None, None, None, None, None, None


def gathered_distance(
    queries: Tensor,
    query_index: Tensor,
    entities: Tensor,
    entity_index: Tensor,
    *,
    kind: str,
    workspace: Workspace | None = None,
    entity_grad: Tensor | None = None,
) -> Tensor:
    r"""Distances between rows ``queries[query_index]`` and ``entities[entity_index]``.

    .. math::
        \text{out}_n = \lVert q_{i_n} - e_{j_n} \rVert, \qquad
        \lVert x \rVert = \sum_c |x_c| \ (\texttt{l1}),\ \Bigl(\sum_c x_c^2\Bigr)^{1/2}
        \ (\texttt{l2}),\ \sum_{c=1}^{m/2} \sqrt{x_c^2 + x_{c + m/2}^2}\ (\texttt{complex\_l1})

    Differentiable in ``queries`` and ``entities``; the gradient of a norm at 0 is taken as 0.

    Args:
        queries: The query table.
        query_index: Row of ``queries`` per output (any shape), or per row of ``entity_index``
            (its shape without the last dimension: one query for the ``k`` outputs of a row,
            as for the ``k`` corruptions of one side of a positive), which broadcasts the
            query instead of gathering it ``k`` times.
        entities: The entity table (same width).
        entity_index: Row of ``entities`` per output (the shape of ``query_index``, or
            ``[*S, k]`` for ``query_index`` ``[*S]``).
        kind: ``"l1"``, ``"l2"`` or ``"complex_l1"`` (rows ``[re | im]``).
        workspace: Buffers to reuse across calls; ``None`` (default) allocates per call.
        entity_grad: A tensor shaped like ``entities`` into which the backward pass adds the
            gradient of ``entities`` (which then gets none from this call); ``None`` (default)
            returns it as usual.

    Returns:
        The distances, shaped like ``entity_index``.

    Shapes:
        ``queries: [Q, m]``, ``entities: [E, m]``, indices ``[*S]`` (or ``query_index: [*S]``
        with ``entity_index: [*S, k]``) -> the shape of ``entity_index``.

    Examples:
        >>> q, e = torch.tensor([[0.0, 0.0]]), torch.tensor([[3.0, 4.0]])
        >>> i = torch.zeros(1, dtype=torch.long)
        >>> [gathered_distance(q, i, e, i, kind=k).item() for k in DISTANCES]
        [7.0, 5.0, 5.0]
    """
    shape = entity_index.shape
    per_row = 0
    if query_index.shape != shape:
        if entity_index.dim() < 1 or query_index.shape != shape[:-1]:
            raise GraphDataError(
                f"query_index: expected the shape of entity_index {tuple(shape)} or that shape "
                f"without its last dimension, got {tuple(query_index.shape)}; pass one query "
                "row per output or per row of outputs"
            )
        per_row = shape[-1]
    if per_row and not entity_index.numel():
        per_row = 0  # nothing to broadcast over
        query_index = query_index.unsqueeze(-1).expand(shape)
    backward_coming = torch.is_grad_enabled() and (queries.requires_grad or entities.requires_grad)
    out = _GatheredDistance.apply(
        queries,
        query_index.reshape(-1),
        entities,
        entity_index.reshape(-1),
        kind,
        workspace,
        backward_coming,
        entity_grad,
        per_row,
    )
    return out.view(shape)


def query_rows(corrupt_head: Tensor) -> Tensor:
    """Rows of a ``[2 B, m]`` query table (two per positive: tail side, head side) per corruption.

    Row ``2 b + corrupt_head[b, j]`` for copy ``j`` of positive ``b`` (``[B, k]``), or one row
    per positive (``[B]``) when each positive's copies all replace the same side, which
    :func:`gathered_distance` then broadcasts instead of gathering ``k`` times.
    """
    rows = 2 * torch.arange(corrupt_head.size(0), device=corrupt_head.device)[:, None]
    which = rows + corrupt_head.long()  # [B, k]
    if corrupt_head.size(1) and bool((corrupt_head == corrupt_head[:, :1]).all()):
        return which[:, 0]  # one side per positive
    return which


def row_distance(diff: Tensor, kind: str) -> Tensor:
    r"""The norm of each row of ``diff`` ``[N, m]`` by plain autograd (ops of ``kind``).

    :math:`\sum_c |x_c|` (``l1``), :math:`(\sum_c x_c^2)^{1/2}` (``l2``) or
    :math:`\sum_{c \le m/2} (x_c^2 + x_{c + m/2}^2)^{1/2}` (``complex_l1``, rows ``[re | im]``).
    """
    if kind == "complex_l1":
        re, im = diff.chunk(2, dim=-1)
        return (re.square() + im.square()).sqrt().sum(-1)
    return torch.linalg.vector_norm(diff, ord=1 if kind == "l1" else 2, dim=-1)
