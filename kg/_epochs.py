"""One training epoch per regime (sLCWA, KvsAll, 1vsAll), used by :class:`kg.training.Trainer`.

Everything here runs on the model's device: batches are index slices of a permutation drawn
from the run's own :class:`torch.Generator`, so an epoch is a pure function of (parameters,
optimiser state, generator state, torch's global state) and a resumed run repeats it exactly.

Under a :mod:`torch.distributed` process group every rank draws the same global batches (and
sLCWA negatives), computes the loss terms of its slice and all-reduces weighted gradients
(:mod:`kg.distributed`), so ``W`` ranks take the steps of one process.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from graphdata.errors import GraphDataError
from graphdata.filter_index import FilterIndex
from graphdata.triples import KGDataset
from kg._distance import Workspace
from kg._rows import grad_buffers
from kg._sparse_optim import SPARSE_OPTIMIZERS, project_touched_rows, row_gradients
from kg.base import KGEModel
from kg.distributed import all_reduce_gradients, all_reduce_sum, rank, shard_bounds, world_size
from kg.losses import (
    bce_loss,
    kvsall_bce_loss_coo,
    margin_ranking_loss,
    nssa_loss,
    one_vs_all_loss,
    softplus_loss,
)
from kg.sampling import (
    _apply_corruptions,
    _draw_corruptions,
    bernoulli_head_probability,
    chunk_negative_scores,
    chunk_negatives,
    false_negative_mask,
)

if TYPE_CHECKING:
    from kg.config import TrainingConfig

#: How often (in batches) the running loss is read back for the progress bar and NaN check;
#: each read synchronises a GPU, so not every batch.
_SYNC_EVERY = 10

#: A step's loss as terms with this rank's denominators: ``[(L_t, D_t), ...]`` where
#: ``L_t = S_t / D_t`` is a mean over ``D_t`` items of the rank's slice (kg.distributed).
Parts = list[tuple[Tensor | float, Tensor | float]]


@dataclass
class Run:
    """The state an epoch needs: model, optimiser, generator and the regime's tensors."""

    model: KGEModel
    config: TrainingConfig
    optimizer: torch.optim.Optimizer
    generator: torch.Generator
    device: torch.device
    train: Tensor  # [N, 3] training triples (with inverses when reciprocal)
    num_relations: int  # relations the model sees (2 R when reciprocal)
    entity_labels: tuple[str, ...]
    relation_labels: tuple[str, ...]
    dataset_name: str
    head_probability: Tensor | None = None  # sLCWA bernoulli: [R']
    known: FilterIndex | None = None  # training-triple index (filtered negatives, KvsAll targets)
    queries: Tensor | None = None  # KvsAll: [Q, 3] rows (side, entity, relation); side 0 = tails
    workspace: Workspace = field(default_factory=Workspace)  # sLCWA scoring buffers, reused
    score_workspace: Workspace = field(default_factory=lambda: Workspace(count=1))  # 1-N scores
    rank: int = 0  # this process's rank under torch.distributed (0 without a group)
    world_size: int = 1  # ranks sharing each global batch (1: one process, unchanged path)

    @classmethod
    def build(
        cls,
        model: KGEModel,
        dataset: KGDataset,
        config: TrainingConfig,
        device: torch.device,
        optimizer: torch.optim.Optimizer,
    ) -> Run:
        """Prepare the training tensors of ``config.regime`` on ``device``."""
        _check_batched_negatives(model, config)
        train_set = dataset.with_inverse_relations() if config.reciprocal else dataset
        train = train_set.train.mapped_triples.to(device)
        num_relations = train_set.num_relations
        generator = torch.Generator(device=device)
        generator.manual_seed(config.seed)
        run = cls(
            model=model,
            config=config,
            optimizer=optimizer,
            generator=generator,
            device=device,
            train=train,
            num_relations=num_relations,
            entity_labels=dataset.entities.labels,
            relation_labels=dataset.relations.labels,
            dataset_name=dataset.name,
            rank=rank(),
            world_size=world_size(),
        )
        needs_index = config.regime == "kvsall" or (
            config.regime == "slcwa" and config.filter_negatives
        )
        known = None
        if needs_index:
            known = FilterIndex.from_triples(
                train, num_entities=dataset.num_entities, num_relations=num_relations
            )
            run.known = known
        if config.regime == "slcwa" and config.sampler == "bernoulli":
            run.head_probability = bernoulli_head_probability(train, num_relations)
        if config.regime == "kvsall" and known is not None:  # kvsall always needs the index
            run.queries = _kvsall_queries(known, with_heads=not config.reciprocal)
        if run.world_size > 1:
            _warn_per_rank_layers(model)
        return run

    @property
    def groups(self) -> list[Tensor]:
        """Item ids that may share a batch: all items, or KvsAll's tail and head queries."""
        if self.queries is None:
            return [torch.arange(self.train.size(0), device=self.device)]
        side = self.queries[:, 0]
        groups = (torch.nonzero(side == 0)[:, 0], torch.nonzero(side == 1)[:, 0])
        return [g for g in groups if g.numel()]

    @property
    def batches_per_epoch(self) -> int:
        """Optimiser steps per epoch."""
        sizes = [self.train.size(0)] if self.queries is None else [g.numel() for g in self.groups]
        return sum(len(_batch_sizes(n, self.config.batch_size)) for n in sizes)

    def batches(self) -> list[Tensor]:
        """This epoch's batches of item ids, shuffled with the run's generator.

        Batches never mix KvsAll's two sides and never hold a single item (a final batch of one
        joins the previous one): batch norm (ConvE, TuckER) cannot train on one example.
        """
        out: list[Tensor] = []
        if self.queries is None:  # one group, arange(N): arange(N)[draw] is draw itself
            n = self.train.size(0)  # int32 where it fits: 40 MB instead of 80 at 10M triples
            dtype = torch.int32 if n < 2**31 else torch.int64  # (the same draws as int64)
            draw = torch.randperm(n, generator=self.generator, device=self.device, dtype=dtype)
            out.extend(draw.split(_batch_sizes(n, self.config.batch_size)))
        for group in self.groups if self.queries is not None else []:
            draw = torch.randperm(group.numel(), generator=self.generator, device=self.device)
            perm = group[draw]
            out.extend(perm.split(_batch_sizes(group.numel(), self.config.batch_size)))
        if len(out) > 1:
            order = torch.randperm(len(out), generator=self.generator, device=self.device)
            out = [out[i] for i in order.tolist()]
        return out

    def epoch(self, bar: Any, epoch: int) -> float:
        """Run one epoch; return the mean loss (NaN/inf as soon as it is seen)."""
        batch_parts = {
            "slcwa": self._slcwa_parts,
            "kvsall": self._kvsall_parts,
            "1vsall": self._one_vs_all_parts,
        }
        step_parts = batch_parts[self.config.regime]
        params = [p for p in self.model.parameters() if p.requires_grad]
        batches = self.batches()
        bar.set_description(f"epoch {epoch}")
        total = torch.zeros((), device=self.device)
        seen = 0
        sparse = self.config.optimizer in SPARSE_OPTIMIZERS
        # Embedding lookups add their gradient rows into kept buffers (kg._rows) instead of a
        # zeroed, page-faulted [E, d] table per lookup; the row-wise optimisers take sparse
        # gradients of the touched rows only (kg._sparse_optim).
        with (
            (row_gradients if sparse else grad_buffers)(self.model) as buffers,
            _kept_scores(self.model, self.score_workspace),
        ):
            bf16 = self.config.precision == "bf16"
            for i, index in enumerate(batches, start=1):
                with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=bf16):
                    parts = step_parts(index)
                    if self.world_size > 1:  # this rank's share; D_0 divides the sum
                        loss, denominator = self._weighted(parts, index.numel())
                    else:
                        loss, denominator = _summed(parts), 1.0
                self.optimizer.zero_grad(set_to_none=True)
                buffers.zero()
                if isinstance(loss, Tensor) and loss.requires_grad:
                    loss.backward()  # (an empty slice of a rank has nothing to differentiate)
                buffers.collect()
                loss = torch.as_tensor(loss, device=self.device)
                if self.world_size > 1:
                    loss = all_reduce_gradients(params, loss, denominator, sparse=sparse)
                self._step()
                total += loss.detach() * index.numel()
                seen += index.numel()
                bar.update(1)
                if i % _SYNC_EVERY == 0 or i == len(batches):
                    running = float(total) / seen
                    bar.set_postfix(loss=f"{running:.4f}")
                    if not math.isfinite(running):
                        return running
        return float(total) / max(seen, 1)

    def _local(self, n: int) -> slice:
        """This rank's contiguous slice of a global batch of ``n`` items."""
        start, stop = shard_bounds(n, self.rank, self.world_size)
        return slice(start, stop)

    def _weighted(self, parts: Parts, n: int) -> tuple[Tensor | float, float]:
        r"""This rank's :math:`\tilde L_w = \sum_t D_{t,w} (D_0 / D_t) L_{t,w}`, and :math:`D_0`.

        The global denominators :math:`D_t = \sum_w D_{t,w}` of a global batch of ``n`` items
        come from one all-reduce, or, where every count is a fixed multiple of the slice size
        (sLCWA without filtered or batched negatives, 1vsAll) and no slice is empty, from
        :math:`D_t = D_{t,w}\, n / n_w` without communication. The summed gradients of
        :math:`\tilde L_w`, divided by :math:`D_0`, are the global batch's (:mod:`kg.distributed`).
        """
        local = torch.tensor([float(d) for _, d in parts], dtype=torch.float64)
        fixed = self.config.regime == "1vsall" or (
            self.config.regime == "slcwa"
            and self.known is None
            and not self.config.batched_negatives  # its mask drops negatives equal to x_b
        )
        if fixed and n >= self.world_size:  # integers in float64: (D_tw n) / n_w is exact
            mine = self._local(n)
            total = local * n / (mine.stop - mine.start)
        else:
            total = all_reduce_sum(local)
        total = total.clamp_min(1.0)  # D_t = 0 only when every term is 0
        scales = (local * (total[0] / total)).tolist()  # D_{t,w} D_0 / D_t; exactly D_{0,w}
        scales[0] = float(local[0])
        loss = sum((term * c for (term, _), c in zip(parts, scales) if c), 0.0)
        return loss, float(total[0])

    def _step(self) -> None:
        """Clip (when configured), step the optimiser, project (``post_step``)."""
        if self.config.grad_clip is not None:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.grad_clip)
        self.optimizer.step()
        if self.config.optimizer in SPARSE_OPTIMIZERS:
            project_touched_rows(self.model)  # post_step on the touched rows only
        else:
            self.model.post_step()

    # ---- regimes ---------------------------------------------------------------------------

    def _regularizer(self, head: Tensor, rel: Tensor, tail: Tensor) -> Tensor | float:
        cfg = self.config
        if cfg.regularizer is None or not cfg.regularizer_weight:
            return 0.0
        reg = self.model.regularization(head, rel, tail, kind=cfg.regularizer)
        return cfg.regularizer_weight * reg

    def _slcwa(self, index: Tensor) -> Tensor | float:
        """The sLCWA loss of a batch (one process): :meth:`_slcwa_parts` added up."""
        return _summed(self._slcwa_parts(index))

    def _kvsall(self, index: Tensor) -> Tensor | float:
        """The KvsAll loss of a batch of queries (one process)."""
        return _summed(self._kvsall_parts(index))

    def _one_vs_all(self, index: Tensor) -> Tensor | float:
        """The 1vsAll loss of a batch (one process)."""
        return _summed(self._one_vs_all_parts(index))

    def _slcwa_parts(self, index: Tensor) -> Parts:
        cfg = self.config
        pos = self.train[index]  # [B, 3]
        k, e = cfg.num_negatives, self.model.num_entities
        if self.head_probability is None:
            prob = torch.full((pos.size(0),), 0.5, device=pos.device)
        else:
            prob = self.head_probability[pos[:, 1]]  # [B]
        if cfg.batched_negatives:
            return self._chunked_parts(pos, prob)
        # The draws of kg.sampling.uniform_negatives / bernoulli_negatives, without building
        # [B, k, 3] triples: the model scores (side, replacement) pairs directly.
        corrupt_head, replacement = _draw_corruptions(
            pos, prob, e, k, self.generator, cfg.side_per_positive
        )
        if self.world_size > 1:  # the global batch's draws, then this rank's rows of them
            mine = self._local(pos.size(0))
            pos, corrupt_head, replacement = pos[mine], corrupt_head[mine], replacement[mine]
            if not pos.size(0):
                return [(0.0, 0.0), (0.0, 0.0)]
        mask = None
        if self.known is not None:
            mask = false_negative_mask(
                _apply_corruptions(pos, corrupt_head, replacement), self.known
            )
        head, rel, tail = pos.unbind(1)
        pos_score, neg_score = self.model._score_positives_and_corrupted(
            head, rel, tail, replacement, corrupt_head, workspace=self.workspace
        )  # [B], [B, k]
        return self._slcwa_loss(pos, pos_score, neg_score, mask)

    def _chunked_parts(self, pos: Tensor, prob: Tensor) -> Parts:
        """The sLCWA terms with batched negatives (:func:`kg.sampling.chunk_negatives`)."""
        cfg = self.config
        corrupt_head, negatives = chunk_negatives(
            pos,
            prob,
            self.model.num_entities,
            num_negatives=cfg.num_negatives,
            chunk_size=cfg.batched_negatives,
            generator=self.generator,
        )
        chunk = torch.arange(pos.size(0), device=pos.device) // cfg.batched_negatives  # [B]
        if self.world_size > 1:  # the global batch's draws, then this rank's rows of them
            mine = self._local(pos.size(0))
            pos, corrupt_head, chunk = pos[mine], corrupt_head[mine], chunk[mine]
            if not pos.size(0):
                return [(0.0, 0.0), (0.0, 0.0)]
        neg_score, mask = chunk_negative_scores(self.model, pos, corrupt_head, negatives, chunk)
        if self.known is not None:
            sides = corrupt_head[:, None].expand_as(mask)
            mask &= false_negative_mask(
                _apply_corruptions(pos, sides, negatives[chunk]), self.known
            )
        head, rel, tail = pos.unbind(1)
        return self._slcwa_loss(pos, self.model(head, rel, tail), neg_score, mask)

    def _slcwa_loss(
        self, pos: Tensor, pos_score: Tensor, neg_score: Tensor, mask: Tensor | None
    ) -> Parts:
        """The sLCWA loss terms of scored positives ``[B]`` and negatives ``[B, k]``."""
        cfg = self.config
        k = neg_score.size(1)
        head, rel, tail = pos.unbind(1)
        name, margin = cfg.resolved_loss(), cfg.resolved_margin()
        if name == "nssa":
            loss = nssa_loss(
                pos_score,
                neg_score,
                margin=margin,
                adversarial_temperature=cfg.adversarial_temperature,
                mask=mask,
            )
        elif name == "margin":
            loss = margin_ranking_loss(pos_score, neg_score, margin=margin, mask=mask)
        elif name == "softplus":
            loss = softplus_loss(pos_score, neg_score, mask=mask)
        else:
            loss = bce_loss(pos_score, neg_score, label_smoothing=cfg.label_smoothing, mask=mask)
        b = pos.size(0)
        # The loss's denominator: positives (nssa), kept pairs (margin), both (softplus, bce).
        kept: Tensor | float = mask.sum() if mask is not None else float(b * k)
        count = b if name == "nssa" else kept if name == "margin" else b + kept
        return [(loss, count), (self._regularizer(head, rel, tail), b)]

    def _kvsall_parts(self, index: Tensor) -> Parts:
        known = self.known
        assert self.queries is not None and known is not None  # Run.build sets both for kvsall
        if self.world_size > 1:
            index = index[self._local(index.numel())]
            if not index.numel():
                return [(0.0, 0.0), (0.0, 0.0)]
        queries = self.queries[index]  # [B, 3] (side, entity, relation); batches hold one side
        entity, rel = queries[:, 1], queries[:, 2]
        if int(queries[0, 0]) == 0:  # (h, r, ?)
            scores = self.model.score_tails(entity, rel)
            row, col = known.tail_coo(entity, rel)
            triple = (entity[row], rel[row], col)
        else:  # (?, r, t)
            scores = self.model.score_heads(rel, entity)
            row, col = known.head_coo(rel, entity)
            triple = (col, rel[row], entity[row])
        # The scores are read once, so the probabilities go over their memory (kg.losses).
        loss = kvsall_bce_loss_coo(
            scores, row, col, label_smoothing=self.config.label_smoothing, overwrite_scores=True
        )
        # Means over the B x E cells (E is the same on every rank) and over the answer triples.
        return [(loss, index.numel()), (self._regularizer(*triple), row.numel())]

    def _one_vs_all_parts(self, index: Tensor) -> Parts:
        eps = self.config.label_smoothing
        if self.world_size > 1:
            index = index[self._local(index.numel())]
            if not index.numel():
                return [(0.0, 0.0), (0.0, 0.0)]
        head, rel, tail = self.train[index].unbind(1)
        # The scores are read once, so the probabilities go over their memory (kg.losses).
        tail_scores = self.model.score_tails(head, rel)
        loss = one_vs_all_loss(tail_scores, tail, label_smoothing=eps, overwrite_scores=True)
        if not self.config.reciprocal:
            head_scores = self.model.score_heads(rel, tail)
            head_loss = one_vs_all_loss(
                head_scores, head, label_smoothing=eps, overwrite_scores=True
            )
            loss = (loss + head_loss) / 2
        return [(loss, index.numel()), (self._regularizer(head, rel, tail), index.numel())]


@contextlib.contextmanager
def _kept_scores(model: KGEModel, workspace: Workspace) -> Iterator[None]:
    """Lend ``workspace`` to ``model``'s 1-N score product for the epoch (:mod:`kg._product`)."""
    model.score_workspace = workspace
    try:
        yield
    finally:
        model.score_workspace = None


def _batch_layers(model: KGEModel, *, dropout: bool) -> list[str]:
    """Sorted class names of ``model``'s batch-norm layers (and active dropout layers)."""
    return sorted(
        {
            type(m).__name__
            for m in model.modules()
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)
            or (dropout and isinstance(m, torch.nn.modules.dropout._DropoutNd) and m.p > 0)
        }
    )


def _check_batched_negatives(model: KGEModel, config: TrainingConfig) -> None:
    """Refuse shared negatives for a model that normalises its scoring rows over their batch.

    :func:`kg.sampling.chunk_negative_scores` scores each chunk's head- and tail-corrupting
    positives in separate calls, so a batch-norm layer in training mode would normalise over a
    chunk's side, often a single row (torch refuses one value per channel), instead of over
    the batch.
    """
    if not config.batched_negatives:
        return
    norms = _batch_layers(model, dropout=False)
    if norms:
        raise GraphDataError(
            f"batched_negatives: {model.name} normalises its scoring rows over the batch "
            f"({', '.join(norms)}), and shared negatives score each chunk's side apart (often "
            f"one positive), got batched_negatives={config.batched_negatives}; train "
            f"{model.name} with batched_negatives=0 (drop --batched-negatives)"
        )


def _warn_per_rank_layers(model: KGEModel) -> None:
    """Warn that batch norm and dropout see one rank's slice (not one process's batch)."""
    layers = _batch_layers(model, dropout=True)
    if layers:
        warnings.warn(
            f"{model.name}: its {', '.join(layers)} layers see one rank's slice of each batch "
            "(batch statistics and dropout masks differ from one process's), so data-parallel "
            "training optimises the same objective but not step for step as one process does",
            UserWarning,
            stacklevel=4,
        )


def _summed(parts: Parts) -> Tensor | float:
    """One process's loss: the terms added in order (the arithmetic of a plain ``a + b``)."""
    loss = parts[0][0]
    for term, _ in parts[1:]:
        loss = loss + term
    return loss


def _batch_sizes(n: int, batch_size: int) -> list[int]:
    """Sizes of consecutive batches covering ``n`` items; a trailing batch of 1 is merged."""
    sizes = [batch_size] * (n // batch_size) + ([n % batch_size] if n % batch_size else [])
    if len(sizes) > 1 and sizes[-1] == 1:
        last = sizes.pop()
        sizes[-1] += last
    return sizes


def _kvsall_queries(known: FilterIndex, *, with_heads: bool) -> Tensor:
    """Distinct training queries as rows ``(side, entity, relation)``: (h, r, ?) then (?, r, t)."""
    e, r = known.num_entities, known.num_relations
    tail_queries = torch.stack(
        [torch.zeros_like(known.hr_keys), known.hr_keys // r, known.hr_keys % r], dim=1
    )  # keys h R + r -> [U_hr, 3]
    if not with_heads:
        return tail_queries
    head_queries = torch.stack(
        [torch.ones_like(known.rt_keys), known.rt_keys % e, known.rt_keys // e], dim=1
    )  # keys r E + t -> [U_rt, 3]
    return torch.cat([tail_queries, head_queries])
