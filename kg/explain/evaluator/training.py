r"""Distillation of a KGE into the evaluator GNN: teacher targets, loss, sample and training.

KGExplainer (Ma et al., "Towards Synergistic Path-based Explanations for Knowledge Graph
Completion: Exploration and Evaluation", ICLR 2025, arXiv 2404.03893) scores the perturbations of
its greedy search with a GNN distilled from the KGE, instead of re-training the KGE for each one.
For a batch of :math:`B` sampled training triples :math:`\tau^+_b = (h, r, t)`, each with
:math:`Q` corruptions :math:`\tau^-_{bq}` (:math:`G = B(1 + Q)` graphs :math:`\tau`), the GNN
(:class:`SubgraphGNN`, over the ``hops``-hop enclosing subgraph with the scored triple removed,
the same subgraph the explainer perturbs) outputs a standardised score :math:`s` and a
representation :math:`\hat\rho \in \mathbb{R}^D`, trained on

.. math::
    \mathcal{L} = \frac{1}{G D} \sum_{\tau} \lVert \hat\rho(\tau) - \rho(\tau)/\sigma_\rho \rVert^2
        + \frac{1}{G} \sum_{\tau} \Bigl(s(\tau) - \frac{f(\tau) - \mu}{\sigma}\Bigr)^2
        + \frac{\lambda}{B Q} \sum_{b, q} \max\bigl(0,\ \gamma - y_{bq}\,(s(\tau^+_b) -
            s(\tau^-_{bq}))\bigr), \qquad
    y_{bq} = \operatorname{sign}\bigl(f(\tau^+_b) - f(\tau^-_{bq})\bigr):

regression on the teacher's triple representation :math:`\rho` (``h + r - t`` for TransE,
``h * r * t`` for DistMult, ...; :math:`\sigma_\rho` its standard deviation) and on its score
:math:`f` standardised by the mean :math:`\mu` and deviation :math:`\sigma` over the distillation
triples, plus a margin ranking loss that follows the teacher's order of each pair. Unlike the
reference, the targets of a negative are the teacher's values **of the negative triple** (the
reference took them from the positive), the margin is in standardised units, half of the
negatives are hard ones drawn from the teacher's top-ranked wrong entities (so that the evaluator
learns the teacher's ranking where it matters), and a share ``PERTURB_FRACTION`` of the subgraphs
not path-reduced is thinned by edge or relation dropout (the explainer scores such reduced
graphs; targets stay the teacher's).
**Relation negatives**: a share ``RELATION_NEGATIVE_FRACTION`` of the corruptions replace the
relation instead of an entity, :math:`(h, r', t)`, with :math:`r'` one of the teacher's three
highest-scoring other relations of the pair (share ``HARD_NEGATIVE_FRACTION``) or uniform over
the others. Such a negative is scored on its positive's subgraph (the positive triple removed,
as the explainer removes its target), so the two graphs are identical and only the queried
relation differs: the evaluator must learn what in the subgraph separates :math:`r` from
:math:`r'` (``uncle`` from ``aunt``: the head's gender, carried by ``brother(X, Y)`` and not by
the reverse sibling edge ``sister(Y, X)`` that always accompanies it). Entity corruptions alone
never show that contrast, and the search then cannot tell a rule body from its parallel edge.

**Path reduction**: a share ``PATH_FRACTION`` of the training subgraphs is cut down to the union
of 1-3 random :math:`h`-to-:math:`t` paths of length up to ``max_length`` (drawn evenly over
lengths), the shape of the explanations the greedy search scores; the teacher's target is
unchanged, so the evaluator learns how much of the score each kind of path carries on its own
(without it, a lone three-step rule body scored as low as the empty graph), and the distance
labels of the GNN run up to ``max_length`` so that a three-step connection is visible.
The shares, :math:`\gamma` (``RANK_MARGIN``) and :math:`\lambda` (``RANK_WEIGHT``) are constants
of :mod:`kg.explain.evaluator.config` (issue #16: no setting measured better;
benchmarks/RESULTS.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from graphdata.triples import TripleSet
from kg.base import KGEModel, eval_mode
from kg.explain._batch import SubgraphBank
from kg.explain._pathbank import PathTable, path_keep, path_table
from kg.explain._teacher import triple_representation
from kg.explain.evaluator.config import (
    DROPOUT,
    LR,
    NUM_BASES,
    NUM_NEGATIVES,
    PATH_FRACTION,
    PATHS_PER_GRAPH,
    PERTURB_FRACTION,
    RANK_MARGIN,
    RANK_WEIGHT,
    EvaluatorConfig,
)
from kg.explain.evaluator.network import SubgraphGNN
from kg.explain.evaluator.sampling import bank_and_ids, draw_negatives, thin

__all__ = ["DistillationTargets", "distillation_targets", "train_network"]


@dataclass(frozen=True)
class DistillationTargets:
    r"""The teacher's values for positive triples and for their corruptions.

    Attributes:
        positive_score: :math:`f(\tau^+)`, ``[B]``.
        positive_representation: :math:`\rho(\tau^+)`, ``[B, D]``.
        negative_score: :math:`f(\tau^-)` of each negative triple itself, ``[B, Q]``.
        negative_representation: :math:`\rho(\tau^-)`, ``[B, Q, D]``.
    """

    positive_score: Tensor
    positive_representation: Tensor
    negative_score: Tensor
    negative_representation: Tensor


@torch.no_grad()
def distillation_targets(
    teacher: KGEModel, positives: Tensor, negatives: Tensor
) -> DistillationTargets:
    """The teacher's scores and representations of positives and of **their own** negatives.

    The reference regressed each negative's graph embedding onto the positive's representation;
    here every triple gets its own teacher values.

    Args:
        teacher: The KGE being distilled.
        positives: Triples ``[B, 3]`` (head, relation, tail ids).
        negatives: Their corruptions ``[B, Q, 3]``.

    Returns:
        The :class:`DistillationTargets`.

    Examples:
        >>> from kg.distmult import DistMult
        >>> teacher = DistMult(4, 1, dim=3)
        >>> positives, negatives = torch.tensor([[0, 0, 1]]), torch.tensor([[[0, 0, 2]]])
        >>> out = distillation_targets(teacher, positives, negatives)
        >>> bool(out.negative_score[0, 0] == teacher(*torch.tensor([[0], [0], [2]])))
        True
    """
    with eval_mode(teacher):
        flat = negatives.reshape(-1, 3)
        pos_score = teacher(positives[:, 0], positives[:, 1], positives[:, 2])
        neg_score = teacher(flat[:, 0], flat[:, 1], flat[:, 2])
        pos_rep = triple_representation(teacher, positives[:, 0], positives[:, 1], positives[:, 2])
        neg_rep = triple_representation(teacher, flat[:, 0], flat[:, 1], flat[:, 2])
    b, q = negatives.shape[:2]
    return DistillationTargets(
        positive_score=pos_score,
        positive_representation=pos_rep,
        negative_score=neg_score.view(b, q),
        negative_representation=neg_rep.view(b, q, -1),
    )


def train_network(
    config: EvaluatorConfig,
    network: SubgraphGNN,
    bank: SubgraphBank,
    table: PathTable | None,
    z: Tensor,
    rho: Tensor,
    count: int,
    q: int,
    generator: torch.Generator,
    *,
    progress: bool = True,
) -> list[dict[str, float]]:
    """Minimise the distillation loss (module docstring) over ``cfg.steps`` mini-batches.

    Graph ``g < count`` of ``bank`` is the ``g``-th positive, graph ``count + g Q + q`` its
    ``q``-th negative; ``z`` and ``rho`` hold their standardised teacher scores and
    representations. Returns the loss history, every 50 steps and at the end. With
    ``progress`` (the default) a tqdm bar with the running loss is shown when stderr is a
    terminal (distillation takes minutes on UMLS-sized graphs); never in a pipe or a log file.
    """
    from tqdm.auto import tqdm

    cfg = config
    device = z.device
    optimizer = torch.optim.Adam(network.parameters(), lr=LR)
    network.train()
    history = []
    # disable=None: tqdm shows the bar only on a terminal.
    bar = tqdm(range(1, cfg.steps + 1), desc="distil evaluator", disable=None if progress else True)
    for step in bar:
        index = torch.randint(count, (min(cfg.batch_size, count),), generator=generator)
        index = index.to(device)
        b = index.numel()
        neg_index = count + index.unsqueeze(1) * q + torch.arange(q, device=device)  # [b, Q]
        graphs = torch.cat([index, neg_index.flatten()])
        keep, reduced = None, None
        if table is not None:
            reduced = torch.rand(graphs.numel(), generator=generator).to(device)
            reduced = reduced < PATH_FRACTION  # [G'] graphs cut down to a few paths
            keep = path_keep(table, bank, graphs[reduced], generator)
        batch = bank.select(graphs, keep)
        if PERTURB_FRACTION > 0:
            eligible = None if reduced is None else ~reduced
            batch = thin(batch, PERTURB_FRACTION, generator, eligible)
        score, rep = network(batch)
        regression = (rep - rho[graphs]).square().mean() + (score - z[graphs]).square().mean()
        y = torch.sign(z[index].unsqueeze(1) - z[neg_index])  # the teacher's order, [b, Q]
        gap = score[:b].unsqueeze(1) - score[b:].view(b, q)
        rank = F.relu(RANK_MARGIN - y * gap).mean()
        loss = regression + RANK_WEIGHT * rank
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 50 == 0 or step == cfg.steps:
            history.append({"step": step, "loss": loss.item(), "rank_loss": rank.item()})
            bar.set_postfix(loss=f"{history[-1]['loss']:.4f}", refresh=False)
    bar.close()
    return history


@dataclass
class Sample:
    """The teacher targets of one distillation sample and the subgraphs they live on."""

    count: int  # positives; graph g < count is a positive, count + g Q + q its q-th negative
    z: Tensor  # standardised teacher scores, [P (1 + Q)]
    rho: Tensor  # scaled teacher representations, [P (1 + Q), D]
    bank: SubgraphBank
    table: PathTable | None
    score_mean: float
    score_std: float
    representation_scale: float


def draw_sample(
    teacher: KGEModel, graph: TripleSet, cfg: EvaluatorConfig, generator: torch.Generator
) -> Sample:
    """Sample positives and negatives, compute their teacher targets, extract their subgraphs.

    The teacher scores in evaluation mode (no dropout, no batch-norm statistics updated) and
    is returned to its previous mode.
    """
    with eval_mode(teacher):
        return _draw_sample(teacher, graph, cfg, generator)


def _draw_sample(
    teacher: KGEModel, graph: TripleSet, cfg: EvaluatorConfig, generator: torch.Generator
) -> Sample:
    device = next(teacher.parameters()).device
    triples = graph.mapped_triples.to(device)
    count = min(cfg.num_train_triples, triples.size(0))
    positives = triples[torch.randperm(triples.size(0), generator=generator)[:count].to(device)]
    negatives = draw_negatives(teacher, positives, generator, graph.num_relations)  # [P, Q, 3]
    targets = distillation_targets(teacher, positives, negatives)
    scores = torch.cat([targets.positive_score, targets.negative_score.reshape(-1)])
    reps = torch.cat(
        [targets.positive_representation, targets.negative_representation.flatten(0, 1)]
    )
    mean, std = float(scores.mean()), float(scores.std().clamp_min(1e-8))
    scale = float(reps.std().clamp_min(1e-8))
    everything = torch.cat([positives, negatives.reshape(-1, 3)])
    # A relation-corrupted negative (h, r', t) is scored on its positive's subgraph: (h, r, t)
    # removed, as the explainer removes its target.
    same_pair = (negatives[..., 0] == positives[:, None, 0]) & (
        negatives[..., 2] == positives[:, None, 2]
    )
    removed = torch.where(same_pair, positives[:, None, 1], negatives[..., 1])
    removed = torch.cat([positives[:, 1], removed.reshape(-1)])
    # Subgraphs larger than the explainer would score are cut to the union of their top
    # candidate paths by the teacher (bank_and_ids; kg.explain.local, "Pruning").
    bank, edge_id = bank_and_ids(
        everything,
        graph,
        teacher.num_entities,
        cfg.hops,
        removed,
        teacher=teacher,
        max_length=cfg.max_length,
        seed=cfg.seed,
    )
    table = None
    if PATH_FRACTION > 0:
        table = path_table(everything, graph, bank, edge_id, cfg.max_length, PATHS_PER_GRAPH)
    return Sample(count, (scores - mean) / std, reps / scale, bank, table, mean, std, scale)


def build_network(cfg: EvaluatorConfig, num_relations: int, teacher_dim: int) -> SubgraphGNN:
    """The evaluator network ``cfg`` describes, freshly initialised (distillation and loading)."""
    return SubgraphGNN(
        num_relations,
        teacher_dim,
        hidden=cfg.hidden,
        num_layers=cfg.num_layers,
        num_bases=NUM_BASES,
        max_distance=max(cfg.hops, cfg.max_length),
        dropout=DROPOUT,
    )


def train_member(
    cfg: EvaluatorConfig,
    num_relations: int,
    sample: Sample,
    seed: int,
    stream: torch.Generator,
    *,
    progress: bool = True,
) -> tuple[SubgraphGNN, list[dict[str, float]]]:
    """Initialise a network with ``seed`` and distil it on ``sample`` (mini-batches ``stream``).

    ``progress``: :func:`train_network`'s bar (terminal only; False: never).
    """
    device = sample.z.device
    with torch.random.fork_rng(devices=[device.index or 0] if device.type == "cuda" else []):
        torch.manual_seed(seed)  # initialisation and dropout
        network = build_network(cfg, num_relations, sample.rho.size(1)).to(device)
        history = train_network(
            cfg,
            network,
            sample.bank,
            sample.table,
            sample.z,
            sample.rho,
            sample.count,
            NUM_NEGATIVES,
            stream,
            progress=progress,
        )
    return network.eval(), history
