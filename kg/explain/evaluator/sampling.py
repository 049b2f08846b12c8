"""Distillation helpers of the evaluator: negatives, subgraph banks, thinning, teacher checks."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import torch
from torch import Tensor

from graphdata.checks import check_int
from graphdata.errors import GraphDataError
from graphdata.subgraph import enclosing_subgraph_chunks, k_hop_enclosing_subgraphs
from graphdata.triples import TripleSet
from kg.base import KGEModel, eval_mode
from kg.explain._batch import GraphBatch, SubgraphBank
from kg.explain._teacher import check_finite_parameters
from kg.explain.evaluator.config import (
    CANDIDATE_BUDGET,
    HARD_NEGATIVE_FRACTION,
    HARD_NEGATIVE_POOL,
    NUM_NEGATIVES,
    RELATION_NEGATIVE_FRACTION,
)

__all__: list[str] = []


def _graph(graph: TripleSet) -> tuple[Tensor, Tensor]:
    triples = graph.mapped_triples
    return triples[:, [0, 2]].t().contiguous(), triples[:, 1].contiguous()


def draw_negatives(
    teacher: KGEModel,
    positives: Tensor,
    generator: torch.Generator,
    num_relations: int | None = None,
    *,
    num_negatives: int = NUM_NEGATIVES,
    hard_fraction: float = HARD_NEGATIVE_FRACTION,
    relation_fraction: float = RELATION_NEGATIVE_FRACTION,
) -> Tensor:
    """Corrupt each positive ``num_negatives`` times: head or tail, uniform or teacher-hard.

    A share ``hard_fraction`` comes from the teacher's top-ranked wrong ones; a share
    ``relation_fraction`` corrupts the relation instead (among the graph's ``num_relations``;
    default the teacher's). The defaults are :mod:`kg.explain.evaluator.config`'s constants.
    """
    device = positives.device
    num, q, num_entities = positives.size(0), num_negatives, teacher.num_entities

    def draw(*shape: int, high: int | None = None) -> Tensor:
        if high is None:
            return torch.rand(shape, generator=generator).to(device)
        return torch.randint(high, shape, generator=generator).to(device)

    corrupt_head = draw(num, q) < 0.5
    hard = draw(num, q) < hard_fraction
    replacement = draw(num, q, high=num_entities)
    h, r, t = positives.unbind(1)
    pool = min(HARD_NEGATIVE_POOL, max(num_entities - 2, 1))
    pick = draw(num, q, high=pool)
    tops = []
    with torch.no_grad():
        for side in ("head", "tail"):
            rows = []
            for lo in range(0, num, 512):
                sl = slice(lo, lo + 512)
                scores = (
                    teacher.score_heads(r[sl], t[sl])
                    if side == "head"
                    else teacher.score_tails(h[sl], r[sl])
                ).clone()  # [b, E]
                rows_idx = torch.arange(scores.size(0), device=device)
                # Neither the true entity nor the other end (a self-pair has no subgraph).
                scores[rows_idx, h[sl]] = -math.inf
                scores[rows_idx, t[sl]] = -math.inf
                rows.append(scores.topk(pool, dim=1).indices)
            tops.append(torch.cat(rows).gather(1, pick))  # [P, Q]
    hard_pick = torch.where(corrupt_head, tops[0], tops[1])
    replacement = torch.where(hard, hard_pick, replacement)
    other_end = torch.where(corrupt_head, t.unsqueeze(1), h.unsqueeze(1))
    replacement = torch.where(
        replacement == other_end, (replacement + 1) % num_entities, replacement
    )
    negatives = positives.unsqueeze(1).repeat(1, q, 1)  # [P, Q, 3]
    negatives[..., 0] = torch.where(corrupt_head, replacement, negatives[..., 0])
    negatives[..., 2] = torch.where(corrupt_head, negatives[..., 2], replacement)
    if relation_fraction > 0:
        on_relation = draw(num, q) < relation_fraction  # [P, Q]
        other = _other_relations(
            teacher,
            positives,
            hard_fraction,
            generator,
            num_relations or teacher.num_relations,
            (num, q),
        )
        negatives[..., 0] = torch.where(on_relation, h.unsqueeze(1), negatives[..., 0])
        negatives[..., 2] = torch.where(on_relation, t.unsqueeze(1), negatives[..., 2])
        negatives[..., 1] = torch.where(on_relation, other, negatives[..., 1])
    return negatives


def _other_relations(
    teacher: KGEModel,
    positives: Tensor,
    hard_fraction: float,
    generator: torch.Generator,
    num_relations: int,
    pick_shape: tuple[int, int],
) -> Tensor:
    r"""A relation :math:`r' \ne r` for each negative slot: teacher-hard or uniform.

    Hard picks (share ``hard_fraction``) come from the teacher's highest-scoring other
    relations of :math:`(h, \cdot, t)`, the relation the evaluator most needs to tell apart on
    the same subgraph; the rest are uniform over the other relations.
    """
    device = positives.device
    h, r, t = positives.unbind(1)
    if num_relations < 2:
        return r.unsqueeze(1).expand(pick_shape).clone()
    with torch.no_grad():
        rels = torch.arange(num_relations, device=device)
        scores = torch.cat(
            [
                teacher(
                    hc.repeat_interleave(num_relations),
                    rels.repeat(hc.numel()),
                    tc.repeat_interleave(num_relations),
                ).view(-1, num_relations)
                for hc, tc in zip(h.split(256), t.split(256))
            ]
        )  # [P, R]: every relation of each pair, 256 pairs per call
        scores[torch.arange(h.numel(), device=device), r] = -math.inf
        pool = min(3, num_relations - 1)
        top = scores.topk(pool, dim=1).indices  # [P, pool]
    pick = torch.randint(pool, pick_shape, generator=generator).to(device)
    hard = top.gather(1, pick)
    uniform = torch.randint(num_relations - 1, pick_shape, generator=generator).to(device)
    uniform = uniform + (uniform >= r.unsqueeze(1)).long()  # skip r itself
    use_hard = torch.rand(pick_shape, generator=generator).to(device) < hard_fraction
    return torch.where(use_hard, hard, uniform)


def bank(triples: Tensor, graph: TripleSet, num_entities: int, hops: int) -> SubgraphBank:
    """Enclosing subgraphs of ``triples`` ``[G, 3]``, each without its own triple."""
    return bank_and_ids(triples, graph, num_entities, hops)[0]


def bank_and_ids(
    triples: Tensor,
    graph: TripleSet,
    num_entities: int,
    hops: int,
    removed_relations: Tensor | None = None,
    *,
    teacher: KGEModel | None = None,
    max_length: int = 3,
    seed: int = 0,
) -> tuple[SubgraphBank, Tensor]:
    r""":func:`bank` and the graph's edge id of every bank edge, ``[E_bank]``.

    Subgraph ``b`` lacks the triple :math:`(h_b, r^{rm}_b, t_b)` with ``removed_relations``
    :math:`r^{rm}` (default: the scored relation ``triples[:, 1]``): a relation-corrupted
    negative lives on its positive's subgraph, without the positive triple.

    With a ``teacher`` (the distillation), a subgraph of more than :math:`B L` triples
    (:math:`B` = ``CANDIDATE_BUDGET``, the explainer's default budget; :math:`L` =
    ``max_length``), more than the union of any :math:`B` candidate paths can hold, is cut as
    the explainer cuts a pruned target's local graph (:mod:`kg.explain.local`, "Pruning"):

    .. math::
        E'_b = \bigcup_{\pi \in \Pi_b} \pi, \qquad
        \Pi_b = \text{the top } a_\ell \text{ paths of each length } \ell \text{ by }
        R(\pi) = \sum_{e \in \pi} \log \sigma\bigl((f(e) - \tau) / \sigma_f\bigr),

    the teacher's calibrated edge log-probabilities (:func:`kg.explain.local.model_relevance`,
    :math:`(\tau, \sigma_f)` from :func:`teacher_calibration` with ``seed``), with the nodes
    :math:`h_b, t_b` and those the paths visit. Every subgraph then holds at most :math:`B L`
    triples, so memory is bounded per subgraph, and the evaluator is trained on what the
    explainer scores. Unlike the explainer, which keeps a whole enclosing subgraph whose
    candidates all fit the budget, such a large subgraph is cut to the union of all its
    candidates too (memory). Subgraphs of at most :math:`B L` triples are untouched (small
    graphs' banks are the same as without a teacher), and the pairs are extracted in chunks
    of at most ``_BANK_CHUNK`` so that the uncut subgraphs of one chunk only are held at once.
    """
    edge_index, edge_type = _graph(graph)
    edge_index, edge_type = edge_index.to(triples.device), edge_type.to(triples.device)
    if removed_relations is None:
        removed_relations = triples[:, 1]
    if teacher is not None:
        return _capped_bank(
            triples, graph, num_entities, hops, removed_relations, teacher, max_length, seed
        )
    sub = k_hop_enclosing_subgraphs(
        triples[:, [0, 2]],
        edge_index,
        edge_type,
        num_entities,
        k=hops,
        target_relations=removed_relations,
    )
    bank = SubgraphBank(sub.node_ptr, sub.edge_ptr, sub.edge_index, sub.edge_type, triples[:, 1])
    return bank, sub.edge_id


class _FixedRelevance:
    """A relevance that returns precomputed values ``[m]`` (the teacher's, per bank edge)."""

    def __init__(self, weight: Tensor) -> None:
        self.weight = weight

    def __call__(self, local: object) -> Tensor:
        return self.weight


#: Pairs extracted at once by the capped bank (their uncut subgraphs are held together).
_BANK_CHUNK = 32


def teacher_calibration(teacher: KGEModel, graph: TripleSet, seed: int) -> tuple[float, float]:
    r"""The explainer's probability map :math:`(\tau, \sigma_f)` of the teacher's scores.

    .. math::
        \tau = \tfrac12 \bigl(\overline{f(\tau^+)} + \overline{f(\tau^-)}\bigr), \qquad
        \sigma_f = \operatorname{std}\bigl(f(\tau^+) \cup f(\tau^-)\bigr),

    over up to 2000 training triples :math:`\tau^+` and one uniform tail corruption
    :math:`\tau^-` each, drawn from a generator seeded with ``seed`` (the rule and draws of
    :class:`kg.explain.KGExplainer`'s ``calibration_``; the distillation's own random stream is
    not touched).
    """
    return calibration(teacher, graph.mapped_triples.to(next(teacher.parameters()).device), seed)


def calibration(model: KGEModel, triples: Tensor, seed: int) -> tuple[float, float]:
    """:func:`teacher_calibration` of ``model`` over the training triples ``[E, 3]``."""
    generator = torch.Generator().manual_seed(seed)
    pick = torch.randperm(triples.size(0), generator=generator)[:2000].to(triples.device)
    pos = triples[pick]
    tails = torch.randint(model.num_entities, (pos.size(0),), generator=generator)
    with torch.no_grad(), eval_mode(model):
        f_pos = model(pos[:, 0], pos[:, 1], pos[:, 2])
        f_neg = model(pos[:, 0], pos[:, 1], tails.to(triples.device))
    sigma = float(torch.cat([f_pos, f_neg]).std().clamp_min(1e-8))
    return 0.5 * float(f_pos.mean() + f_neg.mean()), sigma


def _capped_bank(
    triples: Tensor,
    graph: TripleSet,
    num_entities: int,
    hops: int,
    removed_relations: Tensor,
    teacher: KGEModel,
    max_length: int,
    seed: int,
) -> tuple[SubgraphBank, Tensor]:
    """:func:`bank_and_ids` with a teacher: subgraphs over ``B L`` triples cut (see there)."""
    from kg.explain.local import LocalStructure, _choose_paths, _log_probability, restrict_to_paths

    edge_index, edge_type = _graph(graph)
    device = triples.device
    edge_index, edge_type = edge_index.to(device), edge_type.to(device)
    pairs = triples[:, [0, 2]]
    limit = CANDIDATE_BUDGET * max_length
    weight: Tensor | None = None  # the teacher's edge log-probabilities, when first needed
    sizes: list[int] = []
    local_edges: list[Tensor] = []
    types: list[Tensor] = []
    ids: list[Tensor] = []
    chunks = enclosing_subgraph_chunks(
        pairs,
        edge_index,
        edge_type,
        num_entities,
        k=hops,
        target_relations=removed_relations,
        max_pairs=_BANK_CHUNK,
    )
    for start, chunk in chunks:
        stop = start + len(chunk)
        for b in range(stop - start):
            sub = chunk[b]
            nodes, ei, et, eid = sub.nodes, sub.edge_index, sub.edge_type, sub.edge_id
            if sub.num_edges > limit:
                if weight is None:
                    calibration = teacher_calibration(teacher, graph, seed)
                    weight = _log_probability(teacher, calibration, graph.mapped_triples.to(device))
                g = start + b
                bare = LocalStructure(
                    target=(int(pairs[g, 0]), int(removed_relations[g]), int(pairs[g, 1])),
                    nodes=nodes,
                    edge_index=ei,
                    edge_type=et,
                    paths=(),
                    path_nodes=(),
                    truncated=False,
                    hops=hops,
                    max_length=max_length,
                )
                budget = 20 * CANDIDATE_BUDGET  # local_structure's max_enumerated, beam_width
                chosen = _choose_paths(
                    bare, CANDIDATE_BUDGET, _FixedRelevance(weight[eid]), budget, budget, None
                )
                used = chosen.edge_mask(range(len(chosen.paths)))
                cut = restrict_to_paths(chosen)
                nodes, ei, et, eid = cut.nodes, cut.edge_index, cut.edge_type, eid[used]
            sizes.append(nodes.numel())
            local_edges.append(ei)
            types.append(et)
            ids.append(eid)
    node_counts = torch.tensor(sizes, dtype=torch.long, device=device)
    edge_counts = torch.tensor([e.numel() for e in ids], dtype=torch.long, device=device)
    node_ptr = torch.cat([node_counts.new_zeros(1), node_counts.cumsum(0)])
    edge_ptr = torch.cat([edge_counts.new_zeros(1), edge_counts.cumsum(0)])
    shift = torch.repeat_interleave(node_ptr[:-1], edge_counts)
    empty = torch.zeros(0, dtype=torch.long, device=device)
    all_edges = torch.cat(local_edges, dim=1) if local_edges else empty.view(2, 0)
    bank = SubgraphBank(
        node_ptr,
        edge_ptr,
        all_edges + shift,
        torch.cat(types) if types else empty,
        triples[:, 1],
    )
    return bank, torch.cat(ids) if ids else empty


def thin(
    batch: GraphBatch,
    fraction: float,
    generator: torch.Generator,
    eligible: Tensor | None = None,
) -> GraphBatch:
    r"""Thin a share of the graphs, as the explainer's masks do, keeping the teacher's targets.

    The explainer scores subgraphs reduced to a few paths or missing a few; an evaluator trained
    on full subgraphs only would meet those out of distribution, and would lean on whichever
    relations carry the most evidence. A thinned graph ``g`` draws a keep rate
    :math:`u_g \sim U(0, 1)` and, with probability one half each, keeps every edge with
    probability :math:`u_g` (edge dropout) or every relation with probability :math:`u_g`
    (relation dropout: whole kinds of evidence vanish, so others must be learned too).
    """
    device = batch.edge_index.device
    graphs = batch.num_graphs
    thinned = torch.rand(graphs, generator=generator).to(device) < fraction
    if eligible is not None:
        thinned &= eligible
    rate = torch.where(thinned, torch.rand(graphs, generator=generator).to(device), 1.0)
    by_relation = torch.rand(graphs, generator=generator).to(device) < 0.5
    owner = batch.batch[batch.edge_index[0]]  # [E] graph of each edge
    num_relations = int(batch.edge_type.max()) + 1 if batch.edge_type.numel() else 1
    draw_relation = torch.rand(graphs, num_relations, generator=generator).to(device)
    draw_edge = torch.rand(owner.numel(), generator=generator).to(device)
    draw = torch.where(by_relation[owner], draw_relation[owner, batch.edge_type], draw_edge)
    keep = draw < rate[owner]
    return dataclasses.replace(
        batch, edge_index=batch.edge_index[:, keep], edge_type=batch.edge_type[keep]
    )


def _spearman(a: Tensor, b: Tensor) -> float | None:
    r"""Spearman's rank correlation (average ranks for ties); None where it is undefined.

    :math:`\rho` divides by the standard deviations of the two rank vectors, so it is undefined
    (None, never NaN) when fewer than two scores are given or either vector is constant.
    """
    from scipy.stats import spearmanr

    for name, scores in (("evaluator", a), ("teacher", b)):
        if bool(torch.isnan(scores).any()):
            raise GraphDataError(
                f"{name}: scored {int(torch.isnan(scores).sum())} triple(s) NaN, so the rank "
                "correlation would be NaN; pass a model whose training did not diverge"
            )
    if a.numel() < 2 or bool(a.min() == a.max()) or bool(b.min() == b.max()):
        return None
    return float(spearmanr(a.detach().cpu().double().numpy(), b.detach().cpu().double().numpy())[0])


def check_teacher(teacher: KGEModel, graph: TripleSet) -> None:
    if not isinstance(teacher, KGEModel):
        raise GraphDataError(f"teacher: expected a KGEModel, got {type(teacher).__name__}")
    if not isinstance(graph, TripleSet):
        raise GraphDataError(
            f"graph: expected a TripleSet (e.g. dataset.train), got {type(graph).__name__}"
        )
    if teacher.num_entities != graph.num_entities or teacher.num_relations not in (
        graph.num_relations,
        2 * graph.num_relations,
    ):
        raise GraphDataError(
            f"teacher: {teacher!r} does not fit the graph ({graph.num_entities} entities, "
            f"{graph.num_relations} relations; a reciprocal model has twice the relations); "
            "pass the model trained on this graph"
        )
    check_finite_parameters(teacher, "teacher")


def agreement_figures(
    score_triples: Callable[[Tensor], Tensor],
    num_entities: int,
    teacher: KGEModel,
    triples: Tensor,
    *,
    num_queries: int,
    max_candidates: int,
    seed: int,
) -> dict[str, float | None]:
    """The body of :meth:`DistilledEvaluator.agreement` (see there), for any triple scorer."""
    if not isinstance(triples, Tensor) or triples.dim() != 2 or triples.shape[1:] != (3,):
        got = tuple(triples.shape) if isinstance(triples, Tensor) else type(triples).__name__
        raise GraphDataError(
            f"triples: expected a [B, 3] id tensor, got {got}; pass held-out id triples such as "
            "dataset.test.mapped_triples"
        )
    if triples.size(0) == 0:
        raise GraphDataError(
            "triples: expected at least one triple, got 0 rows; the agreement over no triple "
            "has no value: pass held-out id triples such as dataset.test.mapped_triples"
        )
    check_int("num_queries", num_queries, 1)
    check_int("max_candidates", max_candidates, 1)
    generator = torch.Generator().manual_seed(seed)
    device = triples.device
    n = num_entities
    corrupt = triples.clone()
    tails = torch.randint(n, (triples.size(0),), generator=generator).to(device)
    tails = torch.where(tails == triples[:, 0], (tails + 1) % n, tails)
    corrupt[:, 2] = tails
    both = torch.cat([triples, corrupt])
    with torch.no_grad():
        teacher_scores = teacher(both[:, 0], both[:, 1], both[:, 2])
    spearman = _spearman(score_triples(both), teacher_scores)
    order = torch.randperm(triples.size(0), generator=generator)[:num_queries]
    hits, overlap = [], []
    for h, r, _ in triples[order.to(device)].tolist():
        others = torch.tensor([e for e in range(n) if e != h], device=device)
        if others.numel() > max_candidates:
            pick = torch.randperm(others.numel(), generator=generator)[:max_candidates]
            others = others[pick.to(device)]
        query = torch.stack([torch.full_like(others, h), torch.full_like(others, r), others], 1)
        with torch.no_grad():
            t_scores = teacher(query[:, 0], query[:, 1], query[:, 2])
        e_scores = score_triples(query)
        k = min(10, others.numel())
        t_top = set(others[t_scores.topk(k).indices].tolist())
        e_top = set(others[e_scores.topk(k).indices].tolist())
        hits.append(float(int(others[t_scores.argmax()]) in e_top))
        overlap.append(len(t_top & e_top) / k)
    return {
        "spearman": spearman,
        "hits_at_10": sum(hits) / len(hits),  # at least one query: both checked above
        "top10_overlap": sum(overlap) / len(overlap),
        "num_triples": int(triples.size(0)),
        "num_queries": len(hits),
    }
