r"""Row-wise sparse optimisation of embedding tables: only the rows a batch touched are updated.

An sLCWA step on a graph of :math:`E` entities touches :math:`U \ll E` entity rows (the
positives' heads and tails and the negatives). Dense optimisers (``torch.optim.Adam`` on the
``[E, d]`` gradient that :mod:`kg._rows` collects) read and write every row on every step, and
Adam keeps two ``[E, d]`` moment tables; at a million entities that is most of a step and twice
the parameters' memory. Here:

* :func:`row_gradients` makes the lookups of a model's :class:`kg._rows.Embedding` tables record
  ``(row ids, gradient rows)`` pairs instead of adding into an ``[E, d]`` buffer, and
  :meth:`RowGradients.collect` hands each table a coalesced sparse COO gradient (sorted unique
  rows :math:`\mathcal{U}`, their summed gradient rows), the convention of
  ``nn.Embedding(sparse=True)``; time and memory :math:`O(U d)`.
* :class:`RowwiseAdagrad` is PyTorch-BigGraph's row-wise Adagrad (Lerer et al., "PyTorch-BigGraph:
  A Large-scale Graph Embedding System", SysML 2019, arXiv 1903.12287, Section 4.2;
  ``torchbiggraph/row_adagrad.py``): one accumulator per row, :math:`O(E)` optimiser memory.
* ``"sparse_adam"`` is ``torch.optim.SparseAdam`` (lazy Adam, Kingma and Ba, arXiv 1412.6980,
  restricted to the touched rows), which already consumes these gradients in :math:`O(U d)`.

:func:`check_sparse_fit` refuses the models and regimes these optimisers do not fit, and
:func:`project_touched_rows` applies a model's :meth:`~kg.base.KGEModel.project_rows` to the
touched rows only, in place of the whole-table :meth:`~kg.base.KGEModel.post_step`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any, cast

import torch
from torch import Tensor

from graphdata.errors import GraphDataError
from kg._rows import Embedding
from kg.base import KGEModel

__all__ = [
    "RowwiseAdagrad",
    "RowGradients",
    "row_gradients",
    "check_sparse_fit",
    "project_touched_rows",
    "SPARSE_OPTIMIZERS",
]


class RowwiseAdagrad(torch.optim.Optimizer):
    r"""Row-wise Adagrad of PyTorch-BigGraph, updating only the rows present in a sparse gradient.

    Lerer et al., "PyTorch-BigGraph: A Large-scale Graph Embedding System", SysML 2019,
    arXiv 1903.12287 (Section 4.2; ``torchbiggraph/row_adagrad.py``). For every row :math:`i`
    of a ``[n, d]`` parameter that the step's gradient touches, with gradient row
    :math:`g_i \in \mathbb{R}^d` (duplicates summed):

    .. math::
        G_i \leftarrow G_i + \frac{1}{d} \sum_{c=1}^{d} g_{ic}^2, \qquad
        \theta_i \leftarrow \theta_i - \eta\, \frac{g_i}{\sqrt{G_i} + \epsilon}

    :math:`G_i` is the row's accumulator (one float per row, initially ``initial_accumulator``),
    :math:`\eta` the learning rate ``lr`` and :math:`\epsilon` = ``eps``. Rows outside the
    gradient, and their accumulators, are left bit-identical. A dense gradient is treated as
    touching every row (the same formula on all of them, PBG's dense path).

    Args:
        params: ``[n, d]`` parameters (embedding tables).
        lr: Learning rate :math:`\eta > 0`. Default 1e-2 (PBG's ``lr`` default is 0.01 too).
        eps: :math:`\epsilon \ge 0`, added to the square root. Default 1e-10 (PBG's).
        initial_accumulator: :math:`G_i` before the first step, :math:`\ge 0`. Default 0.

    Examples:
        >>> w = torch.nn.Parameter(torch.zeros(3, 2))
        >>> opt = RowwiseAdagrad([w], lr=1.0)
        >>> w.grad = torch.sparse_coo_tensor([[1]], [[3.0, 4.0]], (3, 2), check_invariants=True)
        >>> opt.step()
        >>> w.data[1].tolist(), opt.state[w]["sum"].tolist()  # G_1 = (9 + 16) / 2
        ([-0.8485..., -1.1313...], [0.0, 12.5, 0.0])
    """

    def __init__(
        self,
        params: Iterable[Tensor],
        lr: float = 1e-2,
        eps: float = 1e-10,
        initial_accumulator: float = 0.0,
    ) -> None:
        for name, value, strict in (("lr", lr, True), ("eps", eps, False)):
            if not (value > 0 if strict else value >= 0):
                raise GraphDataError(
                    f"{name}: expected a number {'>' if strict else '>='} 0, got {value!r}"
                )
        if not initial_accumulator >= 0:
            raise GraphDataError(
                f"initial_accumulator: expected a number >= 0, got {initial_accumulator!r}"
            )
        defaults = {"lr": lr, "eps": eps, "initial_accumulator": initial_accumulator}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() != 2:
                    raise GraphDataError(
                        f"params: RowwiseAdagrad updates [n, d] embedding tables, got a "
                        f"parameter of shape {tuple(p.shape)}; use optimizer='adagrad' for it"
                    )
                self.state[p]["sum"] = torch.full(
                    (p.size(0),), float(initial_accumulator), dtype=p.dtype, device=p.device
                )

    @torch.no_grad()
    def step(self, closure: Any = None) -> Any:
        """Update the touched rows (see the class docstring); returns ``closure()`` if given."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, eps = group["lr"], group["eps"]
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                acc = self.state[p]["sum"]  # [n]
                if grad.is_sparse:
                    grad = grad.coalesce()  # sums duplicate rows; a no-op when coalesced
                    rows = grad.indices()[0]  # [U], sorted unique
                    values = grad.values()  # [U, d]
                    if not rows.numel():
                        continue
                    total = acc.index_select(0, rows).add_(values.square().mean(1))  # [U]
                    acc.index_copy_(0, rows, total)
                    step = values / total.sqrt_().add_(eps).unsqueeze(1)  # [U, d]
                    p.index_add_(0, rows, step, alpha=-lr)
                else:
                    acc.add_(grad.square().mean(1))
                    p.addcdiv_(grad, acc.sqrt().add_(eps).unsqueeze(1), value=-lr)
        return loss


#: The row-wise optimisers, by ``TrainingConfig.optimizer`` name; each is called as
#: ``cls(params, lr=lr)`` and needs the sparse row gradients of :func:`row_gradients`.
SPARSE_OPTIMIZERS: dict[str, type[torch.optim.Optimizer]] = {
    "rowwise_adagrad": RowwiseAdagrad,
    "sparse_adam": torch.optim.SparseAdam,
}


class _RowRecorder:
    """Stands in for an ``[n, d]`` gradient buffer: ``index_add_`` records instead of adding.

    :class:`kg._rows.Embedding` lookups and :func:`kg._distance.gathered_distance` add their
    gradient rows into the table's ``grad_buffer`` with ``buffer.index_add_(0, rows, values)``;
    this records the pair. The values may be a reused workspace buffer, valid until the next
    forward pass, which is why :meth:`RowGradients.collect` runs right after the backward pass.
    """

    def __init__(self, weight: Tensor) -> None:
        self.shape = weight.shape
        self.dtype = weight.dtype
        self.device = weight.device
        self.rows: list[Tensor] = []
        self.values: list[Tensor] = []

    def index_add_(self, dim: int, index: Tensor, source: Tensor) -> _RowRecorder:
        self.rows.append(index.reshape(-1))
        self.values.append(source.reshape(index.numel(), source.size(-1)))  # [N, d]
        return self


class RowGradients:
    r"""The row recorders of a model's :class:`kg._rows.Embedding` tables (:func:`row_gradients`).

    Same protocol as :class:`kg._rows.GradBuffers` (``zero`` before the backward pass,
    ``collect`` after it), but :meth:`collect` leaves a coalesced sparse COO gradient in each
    table's ``weight.grad``: with :math:`\mathcal{U}` the sorted distinct rows recorded and
    :math:`g_i = \sum_{n: j_n = i} v_n` the sum of the recorded rows of id :math:`i`,
    ``weight.grad = sparse_coo([U], [U, d])``. Cost :math:`O(N \\log N + N d)` for :math:`N`
    recorded rows, never :math:`O(n d)`.
    """

    def __init__(self, tables: list[Embedding]) -> None:
        self.tables = tables
        self.recorders = {id(t): _RowRecorder(t.weight) for t in tables}

    def attach(self) -> None:
        """Route every table's lookups into its recorder."""
        for table in self.tables:
            # _BufferedLookup and gathered_distance only call index_add_ on the buffer.
            table.grad_buffer = cast(Tensor, self.recorders[id(table)])

    def zero(self) -> None:
        """Forget what was recorded (call before each backward pass)."""
        for recorder in self.recorders.values():
            recorder.rows.clear()
            recorder.values.clear()

    def collect(self) -> None:
        """Give each table the coalesced sparse gradient of its recorded rows.

        A dense gradient that another path produced (the regulariser reads a table whole when
        it has no more rows than the batch has ids: a small relation table) joins as its
        non-zero rows, at :math:`O(n d)` for that small table only.
        """
        for table in self.tables:
            weight, recorder = table.weight, self.recorders[id(table)]
            pieces, values = list(recorder.rows), list(recorder.values)
            dense = weight.grad
            if dense is not None and not dense.is_sparse:
                touched = torch.nonzero(dense.abs().sum(1))[:, 0]  # [n']
                pieces.append(touched)
                values.append(dense.index_select(0, touched))
            if pieces:
                index = torch.cat(pieces)  # [N]
                rows, inverse = torch.unique(index, sorted=True, return_inverse=True)  # [U]
                summed = weight.new_zeros(rows.numel(), weight.size(1))  # [U, d]
                # Piece by piece, in recording order (the order of one index_add_ over their
                # concatenation), without copying the [N, d] rows into one fresh block: with
                # per-positive negatives N is B k rows, hundreds of megabytes per step.
                start = 0
                for piece, value in zip(pieces, values):
                    stop = start + piece.numel()
                    summed.index_add_(0, inverse[start:stop], value.to(weight.dtype))
                    start = stop
            else:
                rows = torch.zeros(0, dtype=torch.long, device=weight.device)
                summed = weight.new_zeros(0, weight.size(1))
            weight.grad = sparse_rows(rows, summed, weight.shape)

    def detach(self) -> None:
        """Return every table to plain ``nn.Embedding`` behaviour."""
        for table in self.tables:
            table.grad_buffer = None


def sparse_rows(rows: Tensor, values: Tensor, shape: torch.Size) -> Tensor:
    """A coalesced sparse COO gradient of ``shape`` holding ``values [U, d]`` at sorted ``rows``."""
    return torch.sparse_coo_tensor(
        rows[None], values, shape, is_coalesced=True, check_invariants=False
    )


@contextlib.contextmanager
def row_gradients(model: torch.nn.Module) -> Iterator[RowGradients]:
    """Make ``model``'s :class:`kg._rows.Embedding` lookups produce sparse row gradients.

    Inside, call :meth:`RowGradients.zero` before each backward pass and
    :meth:`RowGradients.collect` after it, before the optimiser step (as for
    :func:`kg._rows.grad_buffers`).

    Args:
        model: A module holding :class:`kg._rows.Embedding` tables.

    Yields:
        The recorders.

    Examples:
        >>> table = Embedding(4, 2)
        >>> with row_gradients(table) as rows:
        ...     table(torch.tensor([3, 1, 3])).sum().backward()
        ...     rows.collect()
        >>> grad = table.weight.grad
        >>> grad.indices().tolist(), grad.values()[:, 0].tolist()
        ([[1, 3]], [1.0, 2.0])
    """
    tables = [m for m in model.modules() if isinstance(m, Embedding)]
    recorders = RowGradients(tables)
    recorders.attach()
    try:
        yield recorders
    finally:
        recorders.detach()


def check_sparse_fit(model: KGEModel, optimizer: str) -> None:
    """Refuse a model that a row-wise sparse optimiser cannot train.

    Needs every trainable parameter to be an ``[n, d]`` :class:`kg._rows.Embedding` table (not
    TuckER's core nor ConvE's convolution) and a model whose constraint (a
    :meth:`~kg.base.KGEModel.post_step`) has a row-wise :meth:`~kg.base.KGEModel.project_rows`.
    The config's side (sLCWA only, no ``grad_clip``) is checked by
    :meth:`kg.config.TrainingConfig.validate`.

    Args:
        model: The model to train.
        optimizer: The optimiser's name (a key of :data:`SPARSE_OPTIMIZERS`), for messages.

    Raises:
        GraphDataError: Naming what does not fit and the fix.
    """
    tables = {id(m.weight) for m in model.modules() if isinstance(m, Embedding)}
    others = [n for n, p in model.named_parameters() if p.requires_grad and id(p) not in tables]
    if others:
        raise GraphDataError(
            f"optimizer: {optimizer!r} updates embedding rows only, but "
            f"{type(model).__name__} also trains {others[:3]}; use optimizer='adam' or "
            "'adagrad' for this model"
        )
    cls = type(model)
    if cls.post_step is not KGEModel.post_step and cls.project_rows is KGEModel.project_rows:
        raise GraphDataError(
            f"optimizer: {cls.__name__} projects its whole table after each step (post_step) "
            f"without a row-wise project_rows, which {optimizer!r} needs; use optimizer='adam'"
        )


@torch.no_grad()
def project_touched_rows(model: KGEModel) -> None:
    """Apply :meth:`~kg.base.KGEModel.project_rows` to the rows of this step's sparse gradients.

    Rows the step did not touch were projected when they last changed, so this equals
    :meth:`~kg.base.KGEModel.post_step` (TransE's unit sphere) up to the rounding of
    re-normalising an already unit row, at :math:`O(U d)` instead of :math:`O(E d)`.
    """
    if type(model).project_rows is KGEModel.project_rows:
        return  # no constraint to keep
    for name, param in model.named_parameters():
        grad = param.grad
        if grad is None or not grad.is_sparse:
            continue
        rows = grad.coalesce().indices()[0]
        if rows.numel():
            param.index_copy_(0, rows, model.project_rows(name, param.index_select(0, rows)))
