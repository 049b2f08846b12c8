r"""Entity tables sharded across ranks: sLCWA training and exact evaluation (PyTorch-BigGraph).

PyTorch-BigGraph (Lerer et al., "PyTorch-BigGraph: A Large-scale Graph Embedding System",
SysML 2019, arXiv 1903.12287) trains tables larger than one machine's memory by partitioning
the entities; each worker holds only the partitions it trains, with row-wise Adagrad's one
accumulator per row (Section 4.2). Here the partition is contiguous and by rank: rank
:math:`w` of :math:`W` owns the entity rows :math:`[a_w, b_w)` of :func:`kg.distributed.
shard_bounds` and their optimiser state; relation tables are small and replicated. Memory per
rank is :math:`\lceil E / W \rceil d` parameters, :math:`\lceil E / W \rceil` accumulators
(``"rowwise_adagrad"``; ``"sparse_adam"`` keeps two ``[E/W, d]`` moments) and
:math:`O(|\mathcal{U}| d)` working rows.

A training step (the data-parallel arithmetic of :mod:`kg.distributed`, which it reproduces):

* every rank draws the *global* batch and its negatives from the shared seed (:mod:`kg._epochs`),
  so every rank knows, without communication, the sorted union :math:`\mathcal{U}` of the entity
  rows the batch touches (heads, tails, negatives), its part :math:`\mathcal{U}_w =
  \mathcal{U} \cap [a_w, b_w)` on each rank (a contiguous run of :math:`\mathcal{U}`, of
  :math:`u_w` rows), and the sorted relations :math:`\mathcal{R}` of the batch;
* **fetch**: each rank contributes the rows it owns and every rank receives
  :math:`X = \Theta_{\mathcal{U}} \in \mathbb{R}^{|\mathcal{U}| \times d}`, either as
  ``all_gather`` of the runs padded to :math:`m = \max_w u_w` rows, or as ``all_reduce`` (sum)
  of zeroed ``[|U|, d]`` blocks holding each rank's run (the other ranks add exact zeros):

  .. math::
      X_{\mathcal{U}_w} = \Theta_{\mathcal{U}_w} \text{ (gathered)} \quad\text{or}\quad
      X = \sum_{w=1}^{W} P_w \Theta_{\mathcal{U}_w} \text{ (reduced)},

  whichever a ring moves fewer bytes for: per rank a ring ``all_gather`` sends
  :math:`(W - 1) m d` values and an ``all_reduce`` :math:`2 \frac{W - 1}{W} |\mathcal{U}| d`,
  so the gather is taken when :math:`W m < 2 |\mathcal{U}|`, i.e. unless one rank owns more
  than twice its share of :math:`\mathcal{U}` (every rank decides the same from
  :math:`u_1 .. u_W`);
* rank :math:`w` computes the loss of its slice of the batch with the model's own score
  functions on a compact table: the model's entity table is swapped for :math:`X` and entity
  ids for their positions in :math:`\mathcal{U}`, and it backpropagates
  :math:`\tilde L_w = \sum_t D_{t,w} (D_0 / D_t) L_{t,w}` (:mod:`kg.distributed`);
* **gradient**: the ``[|U|, d]`` row gradients :math:`G_w` are summed and divided by
  :math:`D_0`, each owner receiving only its run (``reduce_scatter`` of the runs padded to
  :math:`m` rows, the mirror of the gather, or ``all_reduce``, by the same rule), and the
  relation rows :math:`\mathcal{R}` (with the loss) by one ``all_reduce``:

  .. math::
      g_i = \frac{1}{D_0} \sum_{w=1}^{W} (G_w)_i, \quad i \in \mathcal{U}_v \text{ on owner } v;
      \qquad
      g_r = \frac{1}{D_0} \sum_{w=1}^{W} (G^{rel}_w)_r, \quad r \in \mathcal{R};

* **update**: each owner applies the row-wise optimiser to the rows :math:`\mathcal{U}_v` it
  owns (for row-wise Adagrad :math:`G_i \leftarrow G_i + \lVert g_i \rVert^2 / d`,
  :math:`\theta_i \leftarrow \theta_i - \eta\, g_i / (\sqrt{G_i} + \epsilon)`), every rank the
  same update to the relation rows :math:`\mathcal{R}`, then the model's row projection
  (TransE's unit sphere) on those rows.

The rows updated are those one process's row-wise optimiser updates (:mod:`kg._sparse_optim`),
with the same gradients up to float rounding (the same sums in another order), so the sharded
run takes one process's steps (``tests/kg/test_sharded.py``). :class:`CommStats` counts, per
collective, the elements times the dtype size each rank hands in (the buffer) and the bytes a
ring algorithm sends per rank (``2 (W-1)/W`` n for an ``all_reduce`` of n bytes, ``(W-1)``
chunks for ``all_gather`` and ``reduce_scatter``): a step moves :math:`O(|\mathcal{U}| d)`,
independent of :math:`E`.

**Evaluation** (:func:`evaluate_sharded_table`) is exact. Each rank fetches the rows of the
test triples' distinct entities once, then, batch by batch, scores every head and tail query
against its own slice :math:`[a_w, b_w)` only, and per query counts over its unfiltered
candidates :math:`K_w` (the filter's known entities removed, the true entity :math:`e^*`
kept):

.. math::
    n^{>}_w = \#\{c \in K_w : s_c > s^*\}, \quad n^{\ge}_w = \#\{c \in K_w : s_c \ge s^*\},
    \quad n^{fin}_w = \#\{c \in K_w : s_c \text{ finite}\}, \quad n^{K}_w = |K_w|,

with :math:`s^*` the true entity's score, taken by its owner from the same score matrix (so the
true entity ties with itself exactly) and shared by an ``all_reduce`` in which every other rank
adds 0. The counts are summed over ranks and give :func:`kg.evaluation.evaluate`'s ranks:
:math:`r^{opt} = \sum_w n^{>}_w + 1`, :math:`r^{pes} = \sum_w n^{\ge}_w` and options
:math:`C = \sum_w n^{fin}_w`; a query with a non-finite :math:`s^*` or an unfiltered NaN or
:math:`+\infty` candidate gets the worst rank :math:`\sum_w n^{K}_w`, as there. The ranks equal
one process's exactly wherever the model scores a (query, candidate) pair to the same float in
a slice as in the whole table (TransE's per-pair ``cdist``; a matmul may round one score
differently in another block shape, changing a rank only between scores equal up to rounding).

Only sLCWA with a row-wise optimiser is supported (KvsAll and 1vsAll score every entity, a
dense gradient of the whole table). :func:`train_sharded` is not wired into
:class:`kg.training.Trainer`: it has no validation, early stopping or resumable checkpoints.
``graphlib kg train --shard-entities`` (with ``--nproc N`` or ``torchrun``) runs it, evaluates
the test split with :func:`evaluate_sharded_table` and saves :func:`sharded_checkpoint`: an
ordinary checkpoint of the model assembled on rank 0 by :meth:`ShardedTable.gather` (rank 0
needs the full table in memory once), without optimiser state, which the Trainer refuses to
resume. Per-shard checkpoint files (PyTorch-BigGraph writes one per partition) are not
written.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import torch
import torch.distributed as dist
from torch import Tensor

from graphdata.errors import GraphDataError
from graphdata.filter_index import FilterIndex
from graphdata.triples import KGDataset
from kg import _epochs
from kg._rows import Embedding
from kg._sparse_optim import (
    SPARSE_OPTIMIZERS,
    check_sparse_fit,
    project_touched_rows,
    row_gradients,
    sparse_rows,
)
from kg.base import KGEModel, eval_mode
from kg.config import TrainingConfig
from kg.distributed import _collective_device, rank, shard_bounds, world_size
from kg.evaluation import (
    NONFINITE,
    RANK_TYPES,
    RankMetrics,
    _check_triples,
    _Scorer,
    rank_metrics,
)
from kg.sampling import (
    _apply_corruptions,
    _draw_corruptions,
    chunk_negative_scores,
    chunk_negatives,
    false_negative_mask,
)
from kg.training import _fingerprint, _make_optimizer

__all__ = [
    "CommStats",
    "ShardedTable",
    "ShardedTraining",
    "train_sharded",
    "evaluate_sharded_table",
    "sharded_checkpoint",
]


@dataclass
class CommStats:
    r"""Bytes this rank handed to collectives, by purpose, summed over the steps counted.

    ``buffer_bytes[p]`` is the element count times the dtype size of the tensors passed to the
    collectives of purpose ``p`` (an ``all_reduce``: the reduced tensor; an ``all_gather``: the
    :math:`W` gathered chunks; a ``reduce_scatter``: its :math:`W`-chunk input).
    ``sent_bytes[p]`` is what a ring algorithm sends per rank for them (a model, not a
    measurement): :math:`2 (W-1)/W \cdot n` for an ``all_reduce`` of :math:`n` bytes and
    :math:`(W-1)\,c` for an ``all_gather`` or ``reduce_scatter`` of :math:`c`-byte chunks.
    Purposes: ``"fetch"`` (entity rows), ``"entity_gradient"``, ``"relation_gradient"`` (the
    relation rows and the loss), ``"denominators"`` (the :math:`D_t` of filtered or batched
    negatives), ``"evaluation"``. ``union_rows`` and ``owned_rows`` hold :math:`|\mathcal{U}|`
    and this rank's :math:`u_w` per training step. The ring costs are those of Patarasuk and
    Yuan, "Bandwidth optimal all-reduce algorithms for clusters of workstations", J. Parallel
    Distrib. Comput. 69(2), 2009, doi:10.1016/j.jpdc.2008.09.002.

    Examples:
        >>> stats = CommStats()
        >>> stats.add("fetch", "all_reduce", elements=1000, element_size=4, world=4)
        >>> stats.buffer_bytes["fetch"], stats.sent_bytes["fetch"]  # 2 (W - 1) / W x 4000
        (4000, 6000.0)
    """

    steps: int = 0
    calls: dict[str, int] = field(default_factory=dict)
    buffer_bytes: dict[str, int] = field(default_factory=dict)
    sent_bytes: dict[str, float] = field(default_factory=dict)
    union_rows: list[int] = field(default_factory=list)
    owned_rows: list[int] = field(default_factory=list)

    def add(self, purpose: str, op: str, elements: int, element_size: int, world: int) -> None:
        r"""Count one collective of ``op`` over ``elements`` values of ``element_size`` bytes.

        ``elements`` is the whole buffer (for ``all_gather`` / ``reduce_scatter``: :math:`W`
        chunks); ``sent_bytes`` follows the ring model of the class docstring.
        """
        size = elements * element_size
        if op == "all_reduce":
            sent = 2 * (world - 1) / world * size
        elif op in ("all_gather", "reduce_scatter"):
            sent = (world - 1) * size / world
        else:
            raise GraphDataError(
                f"op: expected 'all_reduce', 'all_gather' or 'reduce_scatter', got {op!r}"
            )
        self.calls[purpose] = self.calls.get(purpose, 0) + 1
        self.buffer_bytes[purpose] = self.buffer_bytes.get(purpose, 0) + size
        self.sent_bytes[purpose] = self.sent_bytes.get(purpose, 0.0) + sent

    def per_step(self) -> dict[str, float]:
        """Mean ring-model bytes sent per training step, by purpose (and ``"total"``)."""
        steps = max(self.steps, 1)
        out = {k: v / steps for k, v in self.sent_bytes.items() if k != "evaluation"}
        out["total"] = sum(out.values())
        return out


class ShardedTable:
    r"""This rank's part of a KGE model: its entity rows :math:`[a_w, b_w)` and the relations.

    :attr:`model` is a model of the same class whose entity table holds only the owned rows
    (``model.num_entities`` stays the global :math:`E`); the relation table and any other
    parameter are replicated. Build it with :meth:`from_model` (every rank slices a full model,
    e.g. a loaded checkpoint) or :meth:`build` (each rank initialises only its own rows).

    Args:
        model: The owned-rows model (see above).
        num_entities: :math:`E`, the global number of entities.

    Raises:
        GraphDataError: When the entity table does not hold this rank's
            :func:`~kg.distributed.shard_bounds` rows.

    Examples:
        >>> from kg.distmult import DistMult
        >>> table = ShardedTable.from_model(DistMult(5, 2, dim=3))  # no group: one rank
        >>> (table.start, table.stop), table.fetch(torch.tensor([1, 4]), CommStats()).shape
        ((0, 5), torch.Size([2, 3]))
    """

    def __init__(self, model: KGEModel, num_entities: int) -> None:
        self.rank, self.world_size = rank(), world_size()
        self.num_entities = num_entities
        self.start, self.stop = shard_bounds(num_entities, self.rank, self.world_size)
        rows = model.entity.weight.size(0)
        if rows != self.stop - self.start:
            raise GraphDataError(
                f"model: rank {self.rank} of {self.world_size} owns entity rows [{self.start}, "
                f"{self.stop}) of {num_entities}, got an entity table of {rows} rows; build the "
                "table with ShardedTable.from_model or ShardedTable.build"
            )
        self.model = model

    @classmethod
    def from_model(cls, model: KGEModel) -> ShardedTable:
        """Keep this rank's rows of a full ``model`` (same on every rank); ``model`` is unchanged.

        Args:
            model: A :class:`~kg.base.KGEModel` with ``entity`` and ``relation`` tables.

        Returns:
            The table; its parameters are copies.
        """
        _check_shardable(model)
        start, stop = shard_bounds(model.num_entities, rank(), world_size())
        owned = model.entity.weight.detach()[start:stop].clone()
        state = {k: v for k, v in model.state_dict().items() if k != "entity.weight"}
        part = _owned_model(model, owned)
        part.load_state_dict({**state, "entity.weight": owned}, strict=True)
        return cls(part, model.num_entities)

    @classmethod
    def build(
        cls,
        model_cls: type[KGEModel],
        num_entities: int,
        num_relations: int,
        dim: int,
        *,
        seed: int,
        **kwargs: Any,
    ) -> ShardedTable:
        r"""Initialise this rank's rows only (the full table never exists on one rank).

        Rank :math:`w` builds ``model_cls`` with its :math:`b_w - a_w` rows (at least one) under
        ``torch.manual_seed(seed + w)`` (a forked RNG; the caller's state is untouched); the
        replicated parameters (relations) are then broadcast from rank 0. The entity rows follow
        the model's initialisation law; with one rank they are the parameters
        :class:`~kg.training.Trainer` draws (``reset_parameters()`` under ``torch.manual_seed(
        seed)``), with several they are not one process's: use :meth:`from_model` where they
        must be.

        Args:
            model_cls: A :class:`~kg.base.KGEModel` subclass.
            num_entities: :math:`E`.
            num_relations: Relations.
            dim: Embedding size.
            seed: Seed of the initialisation.
            **kwargs: Other constructor arguments of ``model_cls`` (TransE's ``p``).

        Returns:
            The table, on the CPU as ``model_cls(...)`` is; move it with ``table.model.to(...)``
            before training.
        """
        me, size = rank(), world_size()
        start, stop = shard_bounds(num_entities, me, size)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed + me)
            part = model_cls(max(stop - start, 1), num_relations, dim, **kwargs)
            torch.manual_seed(seed + me)  # as Trainer.fit: reset_parameters() after the seed
            part.reset_parameters()
        _check_shardable(part)
        owned = part.entity.weight.detach()[: stop - start].clone()
        part.entity.weight = torch.nn.Parameter(owned)
        part.entity.num_embeddings = owned.size(0)
        part.num_entities = num_entities
        if size > 1:
            for name, tensor in part.state_dict().items():
                if name != "entity.weight":
                    _broadcast(tensor)
        return cls(part, num_entities)

    @overload
    def gather(self, dst: None = None) -> KGEModel: ...

    @overload
    def gather(self, dst: int) -> KGEModel | None: ...

    def gather(self, dst: int | None = None) -> KGEModel | None:
        """The full model: on every rank (``all_gather``), or on rank ``dst`` only (``gather``).

        Every rank must call it. With ``dst`` only that rank receives the slices and holds the
        :math:`E d` table (what writing one checkpoint file needs); the others send theirs and
        get ``None``.

        Args:
            dst: The receiving rank, or ``None`` (default) for all of them.

        Returns:
            A new model of the same class with all :math:`E` entity rows (``None`` on the ranks
            other than ``dst``).

        Raises:
            GraphDataError: When ``dst`` is not a rank of the group.
        """
        if dst is not None and not (0 <= dst < self.world_size):
            raise GraphDataError(
                f"dst: expected a rank in [0, {self.world_size}), got {dst!r}; pass 0 or None"
            )
        weight = self.model.entity.weight.detach()
        if self.world_size > 1:
            widest = shard_bounds(self.num_entities, 0, self.world_size)
            width = widest[1] - widest[0]
            device = _collective_device(weight.device)
            padded = weight.new_zeros(width, weight.size(1), device=device)
            padded[: weight.size(0)] = weight.to(device)
            receives = dst is None or dst == self.rank
            pieces = [torch.empty_like(padded) for _ in range(self.world_size)] if receives else []
            if dst is None:
                dist.all_gather(pieces, padded)
            else:
                dist.gather(padded, pieces if receives else None, dst=dst)
                # A sender may return once its send is queued; without a barrier it can tear
                # the group down while dst still receives (gloo then aborts dst: seen once in
                # a full test run, "terminate called without an active exception").
                dist.barrier()
            if not receives:
                return None
            parts = []
            for w, piece in enumerate(pieces):
                lo, hi = shard_bounds(self.num_entities, w, self.world_size)
                parts.append(piece[: hi - lo])
            weight = torch.cat(parts).to(weight.device)  # [E, d]
        full = _owned_model(self.model, weight.clone())
        state = {k: v for k, v in self.model.state_dict().items() if k != "entity.weight"}
        full.load_state_dict({**state, "entity.weight": full.entity.weight.detach()})
        full.num_entities = self.num_entities
        return full

    # ---- row exchange ------------------------------------------------------------------------

    def _runs(self, rows: Tensor) -> list[int]:
        """Each rank's count :math:`u_w` of the sorted ``rows`` (all ranks compute the same)."""
        starts = [
            shard_bounds(self.num_entities, w, self.world_size)[0] for w in range(self.world_size)
        ] + [self.num_entities]
        cuts = torch.searchsorted(rows, torch.tensor(starts, device=rows.device)).tolist()
        return [b - a for a, b in zip(cuts, cuts[1:])]

    def _layout(self, rows: Tensor) -> tuple[list[int], int, bool]:
        r"""Runs :math:`u_w` of ``rows``, this rank's offset in them, and whether to gather.

        The gather (``all_gather`` / ``reduce_scatter`` of runs padded to :math:`m = \max_w
        u_w`) is taken when :math:`W m < 2 U` (module docstring); every rank decides the same.
        """
        counts = self._runs(rows)
        gather = self.world_size * max(counts) < 2 * rows.numel()
        return counts, sum(counts[: self.rank]), gather

    def fetch(self, rows: Tensor, stats: CommStats, purpose: str = "fetch") -> Tensor:
        r"""The entity rows ``rows`` (sorted, unique, the same on every rank): :math:`X` ``[U, d]``.

        PyTorch-BigGraph's partitioned table (Lerer et al., SysML 2019, arXiv 1903.12287), read
        as :math:`X_{\mathcal{U}_w} = \Theta_{\mathcal{U}_w}`: one ``all_gather`` of the
        owners' runs padded to :math:`m` rows when :math:`W m < 2 U`, else one ``all_reduce``
        :math:`X = \sum_w P_w \Theta_{\mathcal{U}_w}` of zero-filled blocks (module
        docstring); counted in ``stats``.

        Args:
            rows: Global entity ids ``[U]``, sorted, unique.
            stats: Where the bytes are counted.
            purpose: The :class:`CommStats` key. Default ``"fetch"``.

        Returns:
            The rows, on the table's device.
        """
        weight = self.model.entity.weight.detach()
        counts, lo, gather = self._layout(rows)
        mine = rows[lo : lo + counts[self.rank]] - self.start
        local = weight.index_select(0, mine)  # [u_w, d]
        if self.world_size == 1:
            return local
        size, d = self.world_size, weight.size(1)
        widest = max(counts)
        device = _collective_device(weight.device)
        if gather:
            padded = weight.new_zeros(widest, d, device=device)
            padded[: local.size(0)] = local.to(device)
            pieces = [torch.empty_like(padded) for _ in range(size)]
            dist.all_gather(pieces, padded)
            stats.add(purpose, "all_gather", size * widest * d, weight.element_size(), size)
            block = torch.cat([p[:n] for p, n in zip(pieces, counts)])  # [U, d]
        else:
            block = weight.new_zeros(rows.numel(), d, device=device)
            block[lo : lo + local.size(0)] = local.to(device)
            dist.all_reduce(block, op=dist.ReduceOp.SUM)
            stats.add(purpose, "all_reduce", block.numel(), weight.element_size(), size)
        return block.to(weight.device)

    def reduce_rows(self, rows: Tensor, grad: Tensor, stats: CommStats) -> Tensor:
        r"""Sum ``grad`` ``[U, d]`` (rows ``rows``) over ranks; return this rank's run ``[u_w, d]``.

        The owner's share of PyTorch-BigGraph's gradient (Lerer et al., SysML 2019, arXiv
        1903.12287): :math:`\sum_{w} (G_w)_i` for :math:`i \in \mathcal{U}_v` on owner
        :math:`v` (the caller divides by :math:`D_0`): a ``reduce_scatter`` of the runs padded
        to :math:`m` rows when :math:`W m < 2 U`, else an ``all_reduce`` (module docstring);
        counted in ``stats`` as ``"entity_gradient"``.
        """
        if self.world_size == 1:
            return grad
        counts, lo, gather = self._layout(rows)
        size, d = self.world_size, grad.size(1)
        widest = max(counts)
        device = _collective_device(grad.device)
        if gather:
            padded = grad.new_zeros(size, widest, d, device=device)  # [W, m, d]
            start = 0
            for w, n in enumerate(counts):
                padded[w, :n] = grad[start : start + n].to(device)
                start += n
            out = grad.new_empty(widest, d, device=device)
            dist.reduce_scatter(out, list(padded.unbind(0)), op=dist.ReduceOp.SUM)
            stats.add(
                "entity_gradient", "reduce_scatter", padded.numel(), grad.element_size(), size
            )
            mine = out[: counts[self.rank]]
        else:
            block = grad.to(device, copy=True)
            dist.all_reduce(block, op=dist.ReduceOp.SUM)
            stats.add("entity_gradient", "all_reduce", block.numel(), grad.element_size(), size)
            mine = block[lo : lo + counts[self.rank]]
        return mine.to(grad.device)

    def owned_ids(self, rows: Tensor) -> Tensor:
        r"""This rank's run of the sorted global ids, as local ids :math:`\mathcal{U}_w - a_w`."""
        counts, lo, _ = self._layout(rows)
        return rows[lo : lo + counts[self.rank]] - self.start


@contextlib.contextmanager
def _compact(model: KGEModel, rows: Tensor) -> Iterator[torch.nn.Parameter]:
    """Give ``model`` the entity table ``rows`` ``[n, d]`` (ids are positions in it) meanwhile.

    The model's own score functions then run on the compact table; the owned table, the entity
    count and the table's row count come back on exit (also on errors).
    """
    table = model.entity
    owned, owned_rows, entities = table.weight, table.num_embeddings, model.num_entities
    compact = torch.nn.Parameter(rows, requires_grad=owned.requires_grad)
    table.weight, table.num_embeddings, model.num_entities = compact, rows.size(0), rows.size(0)
    try:
        yield compact
    finally:
        table.weight, table.num_embeddings, model.num_entities = owned, owned_rows, entities


@dataclass
class ShardedTraining:
    """What :func:`train_sharded` returns: the loss per epoch, communication and time."""

    losses: list[float]  # mean loss of each epoch over the global batches (equal on all ranks)
    comm: CommStats  # this rank's collectives (bytes per purpose)
    seconds: float  # wall time of the epochs
    steps: int  # optimiser steps taken


def train_sharded(
    table: ShardedTable, dataset: KGDataset, config: TrainingConfig
) -> ShardedTraining:
    r"""Train a sharded entity table with sLCWA: PyTorch-BigGraph's partitioned update.

    Lerer et al., "PyTorch-BigGraph", SysML 2019, arXiv 1903.12287. Every rank calls it with
    the same ``dataset`` and ``config``; each step fetches the batch's rows :math:`X =
    \Theta_{\mathcal{U}}`, computes its slice's :math:`\tilde L_w` on them, reduces the row
    gradients :math:`g_i = D_0^{-1} \sum_w (G_w)_i` to their owners and applies the row-wise
    optimiser there (the equations of the module docstring). ``config.epochs`` epochs are
    trained, without validation, early stopping or checkpoints (see the module docstring),
    starting from the table's parameters (:class:`kg.training.Trainer` first re-draws them with
    ``reset_parameters()`` under ``torch.manual_seed(config.seed)``); from the same parameters
    the updates equal the Trainer's with the same config up to float rounding.

    Args:
        table: This rank's :class:`ShardedTable` (trained in place).
        dataset: The training triples (the same on every rank).
        config: ``regime="slcwa"``, ``optimizer`` ``"rowwise_adagrad"`` or ``"sparse_adam"``.

    Returns:
        The epochs' losses, this rank's :class:`CommStats` and the wall time.

    Raises:
        GraphDataError: On another regime or optimiser, a model the row-wise optimisers do not
            fit, an invalid config, or a table that does not match ``dataset``.
    """
    model = table.model
    config.validate()
    if config.regime != "slcwa":
        raise GraphDataError(
            f"config.regime: a sharded entity table trains with regime 'slcwa' (a batch touches "
            f"few rows), got {config.regime!r}, which scores every entity (a dense gradient of "
            "the whole table); use regime='slcwa' or an unsharded Trainer"
        )
    if config.optimizer not in SPARSE_OPTIMIZERS:
        raise GraphDataError(
            f"config.optimizer: a sharded entity table needs a row-wise optimiser, one of "
            f"{tuple(SPARSE_OPTIMIZERS)}, got {config.optimizer!r} (a dense optimiser updates "
            "every row on every step); use optimizer='rowwise_adagrad'"
        )
    _check_shardable(model, config.optimizer)
    if dataset.num_entities != table.num_entities or dataset.num_relations != (
        model.num_relations // 2 if config.reciprocal else model.num_relations
    ):
        raise GraphDataError(
            f"dataset: has {dataset.num_entities} entities and {dataset.num_relations} relations, "
            f"the table {table.num_entities} and {model.num_relations} (reciprocal: "
            f"{config.reciprocal}); shard a model built for this dataset"
        )
    device = model.entity.weight.device
    params = [p for p in model.parameters() if p.requires_grad]  # entity, relation
    optimizer = _make_optimizer(config.optimizer, params, config.lr)
    run = _epochs.Run.build(model, dataset, config, device, optimizer)
    stats = CommStats()
    losses: list[float] = []
    started = time.perf_counter()
    with torch.random.fork_rng(devices=[device.index or 0] if device.type == "cuda" else []):
        torch.manual_seed(config.seed)  # as the Trainer: dropout draws from the global state
        model.train()
        for epoch in range(1, config.epochs + 1):
            total, seen = 0.0, 0
            for index in run.batches():
                loss = _step(table, run, optimizer, index, stats)
                total += loss * index.numel()
                seen += index.numel()
            losses.append(total / max(seen, 1))
            if not math.isfinite(losses[-1]):
                raise GraphDataError(
                    f"config.lr: the loss became {losses[-1]} in epoch {epoch}; the model "
                    "diverged: train with a lower lr"
                )
    return ShardedTraining(losses, stats, time.perf_counter() - started, stats.steps)


def sharded_checkpoint(
    table: ShardedTable, dataset: KGDataset, config: TrainingConfig, result: ShardedTraining
) -> dict[str, Any] | None:
    """The :mod:`kg.checkpoint` dictionary of a trained table, on rank 0 (``None`` elsewhere).

    Every rank calls it. The full model is assembled on rank 0 only by
    :meth:`ShardedTable.gather` (``dst=0``: rank 0 then holds :math:`E d` once, the other
    ranks only their slices), so the file rank 0 writes (:func:`kg.checkpoint.save_checkpoint`)
    is an ordinary checkpoint that ``kg evaluate``, ``kg predict`` and
    :func:`kg.prediction.load_model` read. It holds no optimiser state (each rank owns its rows'
    accumulators) and marks ``training["sharded"] = {"world_size": W}``, so
    :class:`kg.training.Trainer` refuses to resume it.

    Args:
        table: This rank's trained :class:`ShardedTable`.
        dataset: The dataset it was trained on.
        config: The config of :func:`train_sharded`.
        result: What :func:`train_sharded` returned.

    Returns:
        On rank 0 the checkpoint dictionary (``model``, ``training``, ``optimizer`` = ``{}``,
        ``rng``, ``vocabulary``, ``dataset_fingerprint``, ``dataset_name``); ``None`` elsewhere.
    """
    full = table.gather(dst=0)
    if full is None:
        return None
    history = [
        {"epoch": i, "loss": loss, "world_size": table.world_size}
        for i, loss in enumerate(result.losses, start=1)
    ]
    return {
        "model": {"name": full.name, "config": full.config, "state": full.state_dict()},
        "training": {
            "config": dataclasses.asdict(config),
            "epoch": len(result.losses),
            "history": history,
            "sharded": {"world_size": table.world_size},
        },
        "optimizer": {},
        "rng": {},
        "vocabulary": {
            "entities": list(dataset.entities.labels),
            "relations": list(dataset.relations.labels),
        },
        "dataset_fingerprint": _fingerprint(dataset),
        "dataset_name": dataset.name,
    }


def _step(
    table: ShardedTable,
    run: _epochs.Run,
    optimizer: torch.optim.Optimizer,
    index: Tensor,
    stats: CommStats,
) -> float:
    """One global batch: draw, fetch, slice loss, reduce, owner update (module docstring)."""
    cfg, model = run.config, table.model
    pos = run.train[index]  # [B, 3] global ids
    b, e, k = pos.size(0), table.num_entities, cfg.num_negatives
    if run.head_probability is None:
        prob = torch.full((b,), 0.5, device=pos.device)
    else:
        prob = run.head_probability[pos[:, 1]]  # [B]
    # The draws of kg._epochs.Run._slcwa_parts / _chunked_parts, in the same generator order.
    if cfg.batched_negatives:
        corrupt_head, negatives = chunk_negatives(
            pos,
            prob,
            e,
            num_negatives=k,
            chunk_size=cfg.batched_negatives,
            generator=run.generator,
        )
        chunk = torch.arange(b, device=pos.device) // cfg.batched_negatives  # [B]
        drawn = negatives
    else:
        corrupt_head, drawn = _draw_corruptions(
            pos, prob, e, k, run.generator, cfg.side_per_positive
        )
    union = torch.unique(torch.cat([pos[:, 0], pos[:, 2], drawn.reshape(-1)]))  # [U], sorted
    relations = torch.unique(pos[:, 1])  # [R_B], sorted
    rows = table.fetch(union, stats)  # [U, d]
    mine = run._local(b) if run.world_size > 1 else slice(0, b)
    local = pos[mine]
    optimizer.zero_grad(set_to_none=True)
    with _compact(model, rows) as compact, row_gradients(model) as recorded:
        bf16 = cfg.precision == "bf16"
        with torch.autocast(pos.device.type, dtype=torch.bfloat16, enabled=bf16):
            parts = _slice_parts(
                run,
                union,
                local,
                corrupt_head[mine],
                drawn,
                mine,
                chunk if cfg.batched_negatives else None,
            )
            if run.world_size > 1:
                loss, denominator = run._weighted(parts, b)
                if not _fixed_denominators(run, b):
                    stats.add("denominators", "all_reduce", len(parts), 8, run.world_size)
            else:
                loss, denominator = _epochs._summed(parts), 1.0
        recorded.zero()
        if isinstance(loss, Tensor) and loss.requires_grad:
            loss.backward()
        recorded.collect()
        entity_grad = compact.grad
    relation = model.relation.weight
    # Dense [U, d] and [R_B, d] blocks of this rank's row gradients (zeros where untouched).
    block = rows.new_zeros(union.numel(), rows.size(1))
    if entity_grad is not None:
        entity_grad = entity_grad.coalesce()
        block.index_copy_(0, entity_grad.indices()[0], entity_grad.values())
    rel_block = relation.new_zeros(relations.numel(), relation.size(1))
    if relation.grad is not None:
        grad = relation.grad.coalesce()
        rel_block.index_copy_(
            0, torch.searchsorted(relations, grad.indices()[0]), grad.values().to(rel_block.dtype)
        )
    loss_value = torch.as_tensor(loss, dtype=rel_block.dtype, device=rel_block.device).detach()
    owned_grad = table.reduce_rows(union, block, stats) / denominator  # [u_w, d]
    flat = torch.cat([rel_block.reshape(-1), loss_value.reshape(1)])
    if run.world_size > 1:
        work = flat.to(_collective_device(flat.device), copy=True)
        dist.all_reduce(work, op=dist.ReduceOp.SUM)
        stats.add(
            "relation_gradient", "all_reduce", work.numel(), work.element_size(), run.world_size
        )
        flat = work.to(flat.device)
    flat = flat / denominator
    owned = table.owned_ids(union)
    model.entity.weight.grad = sparse_rows(owned, owned_grad, model.entity.weight.shape)
    relation.grad = sparse_rows(relations, flat[:-1].view_as(rel_block), relation.shape)
    optimizer.step()
    project_touched_rows(model)  # post_step on the updated rows only
    stats.steps += 1
    stats.union_rows.append(union.numel())
    stats.owned_rows.append(owned.numel())
    return float(flat[-1])


def _slice_parts(
    run: _epochs.Run,
    union: Tensor,
    pos: Tensor,
    corrupt_head: Tensor,
    drawn: Tensor,
    mine: slice,
    chunk: Tensor | None,
) -> _epochs.Parts:
    """This rank's loss terms on the compact table (ids remapped to positions in ``union``)."""
    if not pos.size(0):
        return [(0.0, 0.0), (0.0, 0.0)]
    model, known = run.model, run.known
    compact = pos.clone()
    compact[:, 0] = torch.searchsorted(union, pos[:, 0].contiguous())
    compact[:, 2] = torch.searchsorted(union, pos[:, 2].contiguous())
    local_drawn = torch.searchsorted(union, drawn)  # [B, k] or [n_c, k], positions in union
    head, rel, tail = compact.unbind(1)
    mask: Tensor | None
    if chunk is not None:
        chunk = chunk[mine]
        neg_score, mask = chunk_negative_scores(model, compact, corrupt_head, local_drawn, chunk)
        if known is not None:
            sides = corrupt_head[:, None].expand_as(mask)
            mask &= false_negative_mask(_apply_corruptions(pos, sides, drawn[chunk]), known)
        return run._slcwa_loss(compact, model(head, rel, tail), neg_score, mask)
    replacement = drawn[mine]
    mask = None
    if known is not None:  # the filter knows global ids
        mask = false_negative_mask(_apply_corruptions(pos, corrupt_head, replacement), known)
    pos_score = model(head, rel, tail)  # [B_w]
    neg_score = model._score_corrupted(
        head, rel, tail, local_drawn[mine], corrupt_head, workspace=run.workspace
    )
    return run._slcwa_loss(compact, pos_score, neg_score, mask)


def _fixed_denominators(run: _epochs.Run, n: int) -> bool:
    """Whether :meth:`kg._epochs.Run._weighted` derives :math:`D_t` without a collective."""
    cfg = run.config
    return run.known is None and not cfg.batched_negatives and n >= run.world_size


def evaluate_sharded_table(
    table: ShardedTable,
    triples: Tensor,
    filter_index: FilterIndex | None,
    *,
    reciprocal: bool = False,
    rank_type: str = "realistic",
    ks: Sequence[int] = (1, 3, 10),
    batch_size: int | None = None,
    memory_budget: int = 64 * 2**20,
    nonfinite: str = "raise",
    stats: CommStats | None = None,
) -> RankMetrics:
    r"""Filtered both-sides ranks of ``triples`` with each rank scoring only its entity slice.

    PyTorch-BigGraph's partitioned tables (Lerer et al., SysML 2019, arXiv 1903.12287) with
    :func:`kg.evaluation.evaluate`'s ranks (realistic ties, Sun et al., ACL 2020, arXiv
    1911.03903): per query, rank :math:`w` counts over its unfiltered candidates :math:`K_w`
    (true entity kept) :math:`n^{>}_w = \#\{s_c > s^*\}`, :math:`n^{\ge}_w = \#\{s_c \ge s^*\}`,
    the finite ones and :math:`|K_w|`; after one ``all_reduce``
    :math:`r^{opt} = \sum_w n^{>}_w + 1`, :math:`r^{pes} = \sum_w n^{\ge}_w` (module
    docstring). Every rank calls it with the same arguments and returns the same metrics.
    Communication: one fetch of the :math:`Q` distinct entities' rows (:math:`Q d` values), then
    per batch of :math:`B` triples an ``all_reduce`` of the :math:`2 B` true scores and one of
    the :math:`5 \times 2 B` counts. Memory: the ``[2 B, E/W]`` scores and masks of a batch and,
    for the whole call, a ``[E/W + Q, d]`` table (a copy of the owned rows next to the fetched
    ones).

    Args:
        table: This rank's :class:`ShardedTable`.
        triples: Mapped triples ``[N, 3]`` (or a ``TripleSet``), the same on every rank.
        filter_index: Known triples to filter (``dataset.filter_index()``), or ``None`` (raw).
        reciprocal: Heads are ranked as tails of :math:`r + R`. Default False.
        rank_type: Tie handling of the result, one of :data:`kg.evaluation.RANK_TYPES`.
            Default ``"realistic"``.
        ks: The ``k`` of Hits@k. Default ``(1, 3, 10)``.
        batch_size: Triples per batch; ``None`` derives it from ``memory_budget`` and the
            largest slice (the same on every rank).
        memory_budget: Bytes for one batch's ``[2 B, E/W]`` score matrices. Default 64 MiB.
        nonfinite: ``"raise"`` or ``"worst"``, as in :func:`kg.evaluation.evaluate`.
        stats: Counts the fetch and count collectives (purpose ``"evaluation"``) when given.

    Returns:
        The ranks of all ``triples`` (equal on every rank).

    Raises:
        GraphDataError: On malformed triples, ids out of range or an invalid option.
        kg.evaluation.NonFiniteScoreError: With ``nonfinite="raise"``, on every rank alike.
    """
    model = table.model
    triples = getattr(triples, "mapped_triples", triples)
    for name, value, choices in (
        ("rank_type", rank_type, RANK_TYPES),
        ("nonfinite", nonfinite, NONFINITE),
    ):
        if value not in choices:
            raise GraphDataError(f"{name}: expected one of {choices}, got {value!r}")
    ks = tuple(int(k) for k in ks)
    if any(k < 1 for k in ks):
        raise GraphDataError(f"ks: expected positive ints, got {ks}")
    _check_triples(triples, model, table.num_entities, reciprocal, filter_index)
    stats = stats if stats is not None else CommStats()
    device = model.entity.weight.device
    if filter_index is not None and filter_index.device != device:
        filter_index = filter_index.to(device)
    first = shard_bounds(table.num_entities, 0, table.world_size)
    widest = max(first[1] - first[0], 1)
    if batch_size is None:
        batch_size = max(1, memory_budget // (2 * (16 * widest + model.bytes_per_query())))
    if not isinstance(batch_size, int) or batch_size < 1:
        raise GraphDataError(f"batch_size: expected a positive int or None, got {batch_size!r}")
    parts = []
    triples = triples.to(device)
    # Every query entity's row, fetched once; the compact table is [owned rows; fetched rows]
    # (one transient copy of the owned rows), candidates are its first n_w rows.
    queries = torch.unique(torch.cat([triples[:, 0], triples[:, 2]]))  # [Q] sorted
    fetched = table.fetch(queries, stats, purpose="evaluation")  # [Q, d]
    owned = model.entity.weight.detach()
    with torch.no_grad(), eval_mode(model), _compact(model, torch.cat([owned, fetched])):
        for lo in range(0, triples.size(0), batch_size):
            rows = triples[lo : lo + batch_size]
            parts.append(_count_batch(table, rows, queries, filter_index, reciprocal, stats))
    if parts:
        counts = torch.cat(parts, dim=2).cpu()  # [5, 2, N]
    else:
        counts = torch.zeros(5, 2, 0, dtype=torch.long)
    greater, geq, finite, kept, bad = counts
    broken = bad > 0
    optimistic = torch.where(broken, kept, greater + 1)
    pessimistic = torch.where(broken, kept, geq)
    options = torch.where(broken, kept, finite)
    return rank_metrics(
        (optimistic, pessimistic, options, broken),
        triples[:, 1].cpu(),
        relation_labels=None,
        nonfinite=nonfinite,
        rank_type=rank_type,
        ks=ks,
        stacklevel=3,
    )


def _count_batch(
    table: ShardedTable,
    rows: Tensor,
    queries: Tensor,
    filter_index: FilterIndex | None,
    reciprocal: bool,
    stats: CommStats,
) -> Tensor:
    """Counts ``[5, 2, B]`` (greater, >=, finite, kept, bad) of a batch, summed over ranks.

    Runs inside :func:`_compact` with the table ``[owned rows; rows of queries]``.
    """
    model = table.model
    head, rel, tail = rows.unbind(1)
    batch = head.numel()
    n_w = table.stop - table.start
    h = n_w + torch.searchsorted(queries, head.contiguous())  # compact ids of the queries
    t = n_w + torch.searchsorted(queries, tail.contiguous())
    scorer = _Scorer(model, model.num_entities, reciprocal)
    scores = scorer.both((rel, t), (h, rel), slice(0, n_w))  # [2B, n_w]: heads, then tails
    true = torch.cat([head, tail]) - table.start  # [2B] column of the true entity, if mine
    here = (true >= 0) & (true < n_w)
    query = torch.arange(2 * batch, device=rows.device)
    keep = torch.ones_like(scores, dtype=torch.bool)  # [2B, n_w] unfiltered candidates
    if filter_index is not None:
        row_h, col_h = filter_index.head_coo(rel, tail)
        row_t, col_t = filter_index.tail_coo(head, rel)
        row = torch.cat([row_h, row_t + batch])
        col = torch.cat([col_h, col_t]) - table.start
        inside = (col >= 0) & (col < n_w)
        keep[row[inside], col[inside]] = False
    keep[query[here], true[here]] = True  # the true entity is always a candidate
    # s*: its owner reads it from the same matrix; the other ranks add an exact 0.
    star = torch.zeros(2 * batch, dtype=scores.dtype, device=scores.device)
    star[here] = scores[query[here], true[here]]
    if table.world_size > 1:
        work = star.to(_collective_device(star.device), copy=True)
        dist.all_reduce(work, op=dist.ReduceOp.SUM)
        stats.add("evaluation", "all_reduce", work.numel(), work.element_size(), table.world_size)
        star = work.to(star.device)
    s = star[:, None]
    counts = torch.stack(
        [
            (keep & (scores > s)).sum(1),
            (keep & (scores >= s)).sum(1),
            (keep & torch.isfinite(scores)).sum(1),
            keep.sum(1),
            (keep & (torch.isnan(scores) | (scores == math.inf))).sum(1),
        ]
    )  # [5, 2B]
    if table.world_size > 1:
        work = counts.to(_collective_device(counts.device), copy=True)
        dist.all_reduce(work, op=dist.ReduceOp.SUM)
        stats.add("evaluation", "all_reduce", work.numel(), work.element_size(), table.world_size)
        counts = work.to(counts.device)
    counts[4] += (~torch.isfinite(star)).long()  # a non-finite true score breaks the query
    return counts.view(5, 2, batch)


def _check_shardable(model: Any, optimizer: str = "rowwise_adagrad") -> None:
    """Refuse a model whose entity rows cannot be sharded (see :func:`train_sharded`)."""
    if not isinstance(model, KGEModel):
        raise GraphDataError(
            f"model: expected a KGEModel, got {type(model).__name__}; build one of kg.models"
        )
    tables = sorted(n for n, m in model.named_modules() if isinstance(m, Embedding))
    if tables != ["entity", "relation"]:
        raise GraphDataError(
            f"model: a sharded table needs exactly the embedding tables 'entity' and "
            f"'relation', got {tables} in {type(model).__name__}; use an unsharded Trainer"
        )
    try:
        check_sparse_fit(model, optimizer)
    except GraphDataError as err:
        raise GraphDataError(
            f"model: {type(model).__name__} cannot shard its entity table with a row-wise "
            f"optimiser ({err}); use TransE, DistMult, ComplEx, RotatE or RESCAL"
        ) from err


def _owned_model(model: KGEModel, rows: Tensor) -> KGEModel:
    """A model of ``model``'s class and config whose entity table is ``rows`` ``[n, d]``.

    Built with one entity row (a throwaway initialisation, never an ``[n, d]`` one), then given
    ``rows``; the other parameters are freshly initialised (the caller loads them).
    """
    config = {**model.config, "num_entities": 1}
    with torch.random.fork_rng(devices=[]):  # the throwaway initialisation draws privately
        part = type(model)(**config).to(rows.device)
    part.entity.weight = torch.nn.Parameter(rows)
    part.entity.num_embeddings = rows.size(0)
    part.num_entities = model.num_entities
    return part


def _broadcast(tensor: Tensor) -> None:
    """Overwrite ``tensor`` with rank 0's (in place)."""
    work = tensor.detach().to(_collective_device(tensor.device), copy=True)
    dist.broadcast(work, src=0)
    with torch.no_grad():
        tensor.copy_(work.to(tensor.device))
