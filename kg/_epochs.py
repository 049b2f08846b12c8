"""One training epoch per regime (sLCWA, KvsAll, 1vsAll), used by :class:`kg.training.Trainer`.

Everything here runs on the model's device: batches are index slices of a permutation drawn
from the run's own :class:`torch.Generator`, so an epoch is a pure function of (parameters,
optimiser state, generator state, torch's global state) and a resumed run repeats it exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from graphdata.filter_index import FilterIndex
from graphdata.triples import KGDataset
from kg._distance import Workspace
from kg._rows import grad_buffers
from kg.base import KGEModel
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
    false_negative_mask,
)

if TYPE_CHECKING:
    from kg.config import TrainingConfig

#: How often (in batches) the running loss is read back for the progress bar and NaN check;
#: each read synchronises a GPU, so not every batch.
_SYNC_EVERY = 10


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
        return sum(len(_batch_sizes(g.numel(), self.config.batch_size)) for g in self.groups)

    def batches(self) -> list[Tensor]:
        """This epoch's batches of item ids, shuffled with the run's generator.

        Batches never mix KvsAll's two sides and never hold a single item (a final batch of one
        joins the previous one): batch norm (ConvE, TuckER) cannot train on one example.
        """
        out = []
        for group in self.groups:
            draw = torch.randperm(group.numel(), generator=self.generator, device=self.device)
            perm = group[draw]
            out.extend(perm.split(_batch_sizes(group.numel(), self.config.batch_size)))
        if len(out) > 1:
            order = torch.randperm(len(out), generator=self.generator, device=self.device)
            out = [out[i] for i in order.tolist()]
        return out

    def epoch(self, bar: Any, epoch: int) -> float:
        """Run one epoch; return the mean loss (NaN/inf as soon as it is seen)."""
        batch_loss = {"slcwa": self._slcwa, "kvsall": self._kvsall, "1vsall": self._one_vs_all}
        step_loss = batch_loss[self.config.regime]
        batches = self.batches()
        bar.set_description(f"epoch {epoch}")
        total = torch.zeros((), device=self.device)
        seen = 0
        with grad_buffers(self.model) as buffers:
            # Embedding lookups add their gradient rows into kept buffers (kg._rows) instead
            # of a zeroed, page-faulted [E, d] table per lookup.
            bf16 = self.config.precision == "bf16"
            for i, index in enumerate(batches, start=1):
                with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=bf16):
                    loss = step_loss(index)
                self.optimizer.zero_grad(set_to_none=True)
                buffers.zero()
                loss.backward()
                buffers.collect()
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

    def _step(self) -> None:
        """Clip (when configured), step the optimiser, project (``post_step``)."""
        if self.config.grad_clip is not None:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.grad_clip)
        self.optimizer.step()
        self.model.post_step()

    # ---- regimes ---------------------------------------------------------------------------

    def _regularizer(self, head: Tensor, rel: Tensor, tail: Tensor) -> Tensor | float:
        cfg = self.config
        if cfg.regularizer is None or not cfg.regularizer_weight:
            return 0.0
        reg = self.model.regularization(head, rel, tail, kind=cfg.regularizer)
        return cfg.regularizer_weight * reg

    def _slcwa(self, index: Tensor) -> Tensor:
        cfg = self.config
        pos = self.train[index]  # [B, 3]
        k, e = cfg.num_negatives, self.model.num_entities
        if self.head_probability is None:
            prob = torch.full((pos.size(0),), 0.5, device=pos.device)
        else:
            prob = self.head_probability[pos[:, 1]]  # [B]
        # The draws of kg.sampling.uniform_negatives / bernoulli_negatives, without building
        # [B, k, 3] triples: the model scores (side, replacement) pairs directly.
        corrupt_head, replacement = _draw_corruptions(
            pos, prob, e, k, self.generator, cfg.side_per_positive
        )
        mask = None
        if self.known is not None:
            mask = false_negative_mask(
                _apply_corruptions(pos, corrupt_head, replacement), self.known
            )
        head, rel, tail = pos.unbind(1)
        pos_score = self.model(head, rel, tail)  # [B]
        neg_score = self.model._score_corrupted(
            head, rel, tail, replacement, corrupt_head, workspace=self.workspace
        )
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
        return loss + self._regularizer(head, rel, tail)

    def _kvsall(self, index: Tensor) -> Tensor:
        known = self.known
        assert self.queries is not None and known is not None  # Run.build sets both for kvsall
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
        loss = kvsall_bce_loss_coo(scores, row, col, label_smoothing=self.config.label_smoothing)
        return loss + self._regularizer(*triple)

    def _one_vs_all(self, index: Tensor) -> Tensor:
        eps = self.config.label_smoothing
        head, rel, tail = self.train[index].unbind(1)
        loss = one_vs_all_loss(self.model.score_tails(head, rel), tail, label_smoothing=eps)
        if not self.config.reciprocal:
            head_scores = self.model.score_heads(rel, tail)
            head_loss = one_vs_all_loss(head_scores, head, label_smoothing=eps)
            loss = (loss + head_loss) / 2
        return loss + self._regularizer(head, rel, tail)


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
