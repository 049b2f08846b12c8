r"""Data-parallel KGE training and sharded evaluation on :mod:`torch.distributed`.

Synchronous data parallelism (Li et al., "PyTorch Distributed: Experiences on Accelerating Data
Parallel Training", VLDB 2020, arXiv 2006.15704), arranged so that :math:`W` processes compute
exactly the update one process computes with the same global batch:

* every rank draws the epoch's permutation (and, for sLCWA, the negatives of each global batch)
  from the shared seed, as one process does, then keeps its contiguous slice of each global
  batch (:func:`shard_bounds`);
* a loss term :math:`t` is a sum :math:`S_t` over the batch divided by a count :math:`D_t`
  (positives, kept negative pairs, answer triples; term 0 the regime's loss, term 1 the
  regulariser). Rank :math:`w` computes :math:`L_{t,w} = S_{t,w} / D_{t,w}` on its slice, the
  counts :math:`D_t = \sum_w D_{t,w}` are all-reduced, and it backpropagates
  :math:`\tilde L_w`; :func:`all_reduce_gradients` sums the gradients and divides by
  :math:`D_0`:

  .. math::
      \nabla L = \sum_t \frac{1}{D_t} \sum_{w=1}^{W} \nabla S_{t,w}
               = \frac{1}{D_0} \sum_{w=1}^{W} \nabla \tilde L_w, \qquad
      \tilde L_w = \sum_t D_{t,w} \frac{D_0}{D_t} L_{t,w},

  which handles the ragged last batch and masked (filtered) negatives exactly. Scaling term 0
  by the rank's own count makes the loss's division cancel exactly in floating point
  (:math:`D_{0,w} / D_{0,w} = 1`), so every rank's contributions carry the same scale. The
  result equals one process's gradient up to float rounding (the same sums in another order).
  Adam and Adagrad normalise each coordinate, so where the exact gradient is 0 but the two
  roundings differ (TransE's L1 subgradients, sums of :math:`\pm 1/D`) their first step can
  differ by ``lr`` in that coordinate; SGD and smooth scores keep the runs within float
  tolerance;
* with a row-wise optimiser (``optimizer="rowwise_adagrad"`` or ``"sparse_adam"``,
  :mod:`kg._sparse_optim`) the gradients are sparse rows and only the union of the ranks'
  touched rows is all-reduced (:func:`all_reduce_gradients` with ``sparse=True``): a step moves
  :math:`O(|\mathcal{U}| d)` values, :math:`\mathcal{U}` the rows the global batch touches;
* evaluation ranks each rank's slice of the triples and gathers the per-triple ranks
  (integers), so every rank computes the metrics of one process exactly
  (:func:`evaluate_sharded`).

Dropout and batch norm (ConvE, TuckER) see one rank's slice, as under PyTorch's
``DistributedDataParallel`` without ``SyncBatchNorm``: those models train correctly but not
bit-equivalently to one process. Library code never starts a process group by itself; the
``graphlib kg train`` command does (:func:`init_from_env`) when ``WORLD_SIZE > 1``, e.g. under
``torchrun``, and ``--nproc N`` starts the workers with torch's elastic launcher
(:func:`launch`).
"""

from __future__ import annotations

import contextlib
import os
import socket
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
import torch.distributed as dist
from torch import Tensor

from graphdata.errors import GraphDataError
from graphdata.filter_index import FilterIndex
from kg._sparse_optim import sparse_rows
from kg.evaluation import (
    NONFINITE,
    RankMetrics,
    evaluate,
    rank_metrics,
)

__all__ = [
    "is_distributed",
    "rank",
    "world_size",
    "init_from_env",
    "shard_bounds",
    "all_reduce_sum",
    "all_reduce_gradients",
    "evaluate_sharded",
    "barrier",
    "leave_together",
    "free_port",
    "launch",
]


def is_distributed() -> bool:
    """Whether a :mod:`torch.distributed` process group with more than one rank is running."""
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def rank() -> int:
    """This process's rank (0 without a process group)."""
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def world_size() -> int:
    """The number of ranks (1 without a process group)."""
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def init_from_env(device: torch.device) -> bool:
    """Join the process group described by the environment when ``WORLD_SIZE > 1``.

    Reads ``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR`` and ``MASTER_PORT`` (set by ``torchrun`` and
    by :func:`launch`) through ``init_method="env://"``; the backend is NCCL for a CUDA
    ``device``, else gloo. Does nothing when a group is already initialised.

    Args:
        device: The device this rank trains on.

    Returns:
        Whether a group with more than one rank is now running.

    Raises:
        GraphDataError: When ``WORLD_SIZE > 1`` but ``RANK`` or ``MASTER_ADDR`` is missing.
    """
    if dist.is_available() and dist.is_initialized():
        return is_distributed()
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size <= 1:
        return False
    missing = [k for k in ("RANK", "MASTER_ADDR", "MASTER_PORT") if k not in os.environ]
    if missing:
        raise GraphDataError(
            f"WORLD_SIZE: is {size}, but the environment lacks {', '.join(missing)}; start the "
            "workers with torchrun or `graphlib kg train --nproc N`"
        )
    backend = "nccl" if device.type == "cuda" else "gloo"
    dist.init_process_group(backend, init_method="env://")
    return True


def shard_bounds(n: int, rank: int, world_size: int) -> tuple[int, int]:
    r"""The contiguous slice ``[start, stop)`` of ``n`` items that rank ``rank`` keeps.

    Slice sizes differ by at most one, the first :math:`n \bmod W` ranks holding the larger
    ones (:func:`torch.tensor_split`'s rule): :math:`\mathrm{start}_w = w \lfloor n/W \rfloor +
    \min(w, n \bmod W)`. A rank's slice is empty when :math:`n < W`.

    Args:
        n: The number of items.
        rank: The rank, in ``[0, world_size)``.
        world_size: The number of ranks :math:`W \ge 1`.

    Returns:
        ``(start, stop)``.

    Examples:
        >>> [shard_bounds(5, w, 2) for w in range(2)]
        [(0, 3), (3, 5)]
    """
    if world_size < 1 or not 0 <= rank < world_size:
        raise GraphDataError(
            f"rank: expected 0 <= rank < world_size with world_size >= 1, got rank={rank}, "
            f"world_size={world_size}"
        )
    base, extra = divmod(n, world_size)
    start = rank * base + min(rank, extra)
    return start, start + base + (1 if rank < extra else 0)


def _collective_device(reference: torch.device) -> torch.device:
    """Where collective tensors must live: the current CUDA device under NCCL, else the CPU."""
    if dist.get_backend() == "nccl":
        return reference if reference.type == "cuda" else torch.device("cuda")
    return torch.device("cpu")


def all_reduce_sum(values: Tensor) -> Tensor:
    """Sum ``values`` over all ranks; returns a new tensor on ``values``' device.

    Args:
        values: Any tensor, the same shape and dtype on every rank.

    Returns:
        The element-wise sum over ranks (``values`` itself without a process group).
    """
    if not is_distributed():
        return values
    work = values.detach().to(_collective_device(values.device), copy=True)
    dist.all_reduce(work, op=dist.ReduceOp.SUM)
    return work.to(values.device)


def all_reduce_gradients(
    params: Sequence[torch.nn.Parameter],
    loss: Tensor,
    denominator: float = 1.0,
    *,
    sparse: bool = False,
) -> Tensor:
    r"""Sum the gradients of ``params`` and the scalar ``loss`` over ranks, then divide.

    Each rank's backward pass ran on :math:`\tilde L_w` (module docstring), so the sum divided
    by ``denominator`` (:math:`D_0`) is the gradient of the global batch's loss. A parameter
    without a gradient on this rank (an empty slice) contributes zeros. All gradients are
    reduced concurrently.

    With ``sparse`` (the row-wise optimisers of :mod:`kg._sparse_optim`) every gradient is a
    sparse COO tensor of touched rows, and only those rows travel (a union-index all-reduce):
    the ranks all-gather their row counts and row ids, each builds the sorted union
    :math:`\mathcal{U} = \bigcup_w \mathcal{U}_w`, scatters its rows into a zeroed
    ``[|U|, d]`` block and all-reduces the blocks, so that

    .. math::
        g_i = \frac{1}{D_0} \sum_{w : i \in \mathcal{U}_w} g_{i,w}, \quad i \in \mathcal{U},

    the dense all-reduce's sum restricted to the rows that are not zero on every rank; a step
    moves :math:`O(|\mathcal{U}| d)` values instead of :math:`O(E d)`.

    Args:
        params: The parameters, in the same order on every rank.
        loss: This rank's :math:`\tilde L_w` ``[]``.
        denominator: :math:`D_0`, the same on every rank. Default 1.
        sparse: Gradients are sparse row gradients (the same on every rank). Default False.

    Returns:
        The global batch's loss ``[]``; every ``param.grad`` holds the global gradient (sparse
        with ``sparse``: the union's rows).

    Raises:
        GraphDataError: With ``sparse``, when a gradient is dense.
    """
    if sparse:
        return _all_reduce_rows(params, loss, denominator)
    works = []
    for param in params:
        if param.grad is None:
            param.grad = torch.zeros_like(param)
        works.append(dist.all_reduce(param.grad, op=dist.ReduceOp.SUM, async_op=True))
    total = loss.detach().reshape(1).to(_collective_device(loss.device), copy=True)
    works.append(dist.all_reduce(total, op=dist.ReduceOp.SUM, async_op=True))
    for work in works:
        work.wait()
    if denominator != 1.0:
        for param in params:
            assert param.grad is not None  # set above
            param.grad.div_(denominator)
    return total.to(loss.device)[0] / denominator


def _all_reduce_rows(
    params: Sequence[torch.nn.Parameter], loss: Tensor, denominator: float
) -> Tensor:
    """The union-index all-reduce of sparse row gradients (see :func:`all_reduce_gradients`)."""
    reference = params[0].device if params else loss.device
    device = _collective_device(reference)
    size = world_size()
    local: list[tuple[Tensor, Tensor]] = []
    for param in params:
        grad = param.grad
        if grad is None:  # an empty slice: no rows
            rows = torch.zeros(0, dtype=torch.long, device=device)
            values = torch.zeros(0, *param.shape[1:], dtype=param.dtype, device=device)
        elif grad.is_sparse:
            grad = grad.coalesce()
            rows, values = grad.indices()[0].to(device), grad.values().to(device)
        else:
            raise GraphDataError(
                f"sparse: expected sparse row gradients, got a dense gradient for a parameter "
                f"of shape {tuple(param.shape)}; all-reduce it with sparse=False"
            )
        local.append((rows, values))
    total = loss.detach().reshape(1).to(device, copy=True)
    loss_work = dist.all_reduce(total, op=dist.ReduceOp.SUM, async_op=True)
    # 1. Row counts of every parameter on every rank: [W, P].
    counts = torch.tensor([r.numel() for r, _ in local], dtype=torch.long, device=device)
    all_counts = [torch.empty_like(counts) for _ in range(size)]
    dist.all_gather(all_counts, counts)
    widest = torch.stack(all_counts).amax(0).tolist()  # [P]: the longest row list per parameter
    # 2. Row ids, each parameter's padded to its widest rank (all_gather needs one shape).
    ids = torch.full((sum(widest),), -1, dtype=torch.long, device=device)
    offsets = [0]
    for (rows, _), width in zip(local, widest):
        ids[offsets[-1] : offsets[-1] + rows.numel()] = rows
        offsets.append(offsets[-1] + width)
    all_ids = [torch.empty_like(ids) for _ in range(size)]
    dist.all_gather(all_ids, ids)
    # 3. The union's rows, summed: one all-reduce of every parameter's [|U|, d] block.
    unions, blocks = [], []
    for p, (rows, values) in enumerate(local):
        lo = offsets[p]
        seen = [all_ids[w][lo : lo + int(all_counts[w][p])] for w in range(size)]
        union = torch.unique(torch.cat(seen), sorted=True)  # [U]
        block = values.new_zeros(union.numel(), *values.shape[1:])  # [U, d]
        block[torch.searchsorted(union, rows)] = values
        unions.append(union)
        blocks.append(block)
    flat = torch.cat([b.reshape(-1) for b in blocks]) if blocks else torch.zeros(0, device=device)
    dist.all_reduce(flat, op=dist.ReduceOp.SUM)
    if denominator != 1.0:
        flat.div_(denominator)
    start = 0
    for param, union, block in zip(params, unions, blocks):
        summed = flat[start : start + block.numel()].view_as(block)
        start += block.numel()
        param.grad = sparse_rows(union.to(param.device), summed.to(param.device), param.shape)
    loss_work.wait()
    return total.to(loss.device)[0] / denominator


def barrier() -> None:
    """Wait for every rank (no-op without a process group)."""
    if is_distributed():
        dist.barrier()


@contextlib.contextmanager
def leave_together() -> Iterator[None]:
    """Run the block, then tear the default process group down on this rank.

    When the block ends normally, the ranks first meet at a barrier, so that no rank destroys
    the group while another still has a collective or a send under way on it: with gloo, a rank
    that tore the group down while its peer still used it made the peer abort (SIGABRT) in 1 of
    3 dry runs of ``benchmarks/cuda_check.py``'s distributed section, and 0 of 6 with the
    barrier. When the block raises, the group is destroyed at once and the error goes on: the
    other ranks may have failed too, and a barrier would wait for them until the group's
    timeout. Every rank must enter the block and leave it the same way (all normally or all by
    an error) for the barrier to pair up.

    Example::

        dist.init_process_group("gloo", init_method=f"file://{path}", rank=r, world_size=2)
        with leave_together():
            train(...)
    """
    try:
        yield
    except BaseException:
        dist.destroy_process_group()
        raise
    try:
        dist.barrier()
    finally:
        dist.destroy_process_group()


def evaluate_sharded(
    model: Any,
    triples: Tensor,
    filter_index: FilterIndex | None,
    **kwargs: Any,
) -> RankMetrics:
    """:func:`kg.evaluation.evaluate`, with the triples split across ranks and ranks gathered.

    Each rank ranks its contiguous slice (:func:`shard_bounds`) of ``triples`` and all-gathers
    the per-triple optimistic and pessimistic ranks, candidate counts and non-finite flags, so
    every rank returns the :class:`~kg.evaluation.RankMetrics` of one process over all
    ``triples`` (ranks are integers: the metrics are equal exactly). A non-finite score is
    raised (``nonfinite="raise"``, the default) on every rank alike, after the gather. Without a
    process group this is :func:`~kg.evaluation.evaluate`.

    Args:
        model: As for :func:`~kg.evaluation.evaluate`.
        triples: Mapped triples ``[N, 3]`` (the same on every rank).
        filter_index: Known triples to filter, or ``None`` for raw ranks.
        **kwargs: Passed to :func:`~kg.evaluation.evaluate` (``reciprocal``, ``rank_type``, ...).

    Returns:
        The ranks of all ``triples``, in their order.
    """
    if not is_distributed():
        return evaluate(model, triples, filter_index, **kwargs)
    triples = getattr(triples, "mapped_triples", triples)
    mode = kwargs.pop("nonfinite", "raise")
    if mode not in NONFINITE:
        raise GraphDataError(f"nonfinite: expected one of {NONFINITE}, got {mode!r}")
    labels = kwargs.get("relation_labels")
    size, me = world_size(), rank()
    start, stop = shard_bounds(triples.size(0), me, size)
    with warnings.catch_warnings():  # warned (or raised) once, below, over all the triples
        warnings.simplefilter("ignore", RuntimeWarning)
        part = evaluate(model, triples[start:stop], filter_index, nonfinite="worst", **kwargs)
    broken = part.nonfinite
    if broken is None:
        broken = torch.zeros_like(part.optimistic, dtype=torch.bool)
    # Pack the slice as [8, n_w] int64 rows, padded to the largest slice (all_gather needs one
    # shape): optimistic, pessimistic, options, non-finite flags (head and tail row each).
    rows = torch.cat([part.optimistic, part.pessimistic, part.options, broken.long()])
    longest = shard_bounds(triples.size(0), 0, size)
    width = longest[1] - longest[0]
    param = next(iter(model.parameters()), None) if hasattr(model, "parameters") else None
    device = _collective_device(param.device if param is not None else triples.device)
    padded = torch.zeros(rows.size(0), width, dtype=torch.long, device=device)
    padded[:, : rows.size(1)] = rows.to(device)
    gathered = [torch.empty_like(padded) for _ in range(size)]
    dist.all_gather(gathered, padded)
    pieces = []
    for w, block in enumerate(gathered):
        lo, hi = shard_bounds(triples.size(0), w, size)
        pieces.append(block[:, : hi - lo].cpu())
    allrows = torch.cat(pieces, dim=1)  # [8, N]
    ranks = (allrows[0:2], allrows[2:4], allrows[4:6], allrows[6:8].bool())
    return rank_metrics(
        ranks,
        triples[:, 1].cpu(),
        relation_labels=labels,
        nonfinite=mode,
        rank_type=part.rank_type,
        ks=part.ks,
        stacklevel=3,
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (for a local rendezvous)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def launch(entrypoint: Callable[..., Any], args: Sequence[Any], nproc: int) -> dict[int, Any]:
    """Run ``entrypoint(*args)`` in ``nproc`` local worker processes, as ``torchrun`` would.

    Uses torch's elastic launcher API (``torch.distributed.launcher.api.elastic_launch`` with a
    ``LaunchConfig`` of one node, ``nproc`` workers, a c10d rendezvous on a free port of
    127.0.0.1 and no restarts); each worker gets ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
    ``MASTER_ADDR`` and ``MASTER_PORT`` and should call :func:`init_from_env`. Workers are
    spawned, so ``entrypoint`` must be importable (a module-level function).

    Args:
        entrypoint: The function each worker runs.
        args: Its positional arguments (picklable).
        nproc: Worker processes, at least 1.

    Returns:
        Each rank's return value, by rank.

    Raises:
        GraphDataError: When ``nproc < 1``.
        torch.distributed.elastic.multiprocessing.errors.ChildFailedError: When a worker fails.
    """
    if not isinstance(nproc, int) or nproc < 1:
        raise GraphDataError(f"nproc: expected a positive int, got {nproc!r}")
    from torch.distributed.launcher.api import LaunchConfig, elastic_launch

    config = LaunchConfig(
        min_nodes=1,
        max_nodes=1,
        nproc_per_node=nproc,
        run_id=f"graphlib-{uuid.uuid4().hex[:8]}",
        rdzv_backend="c10d",
        rdzv_endpoint=f"127.0.0.1:{free_port()}",
        max_restarts=0,
        monitor_interval=0.1,
    )
    return dict(elastic_launch(config, entrypoint)(*args))
