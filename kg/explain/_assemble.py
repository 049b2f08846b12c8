"""Turn a search result (or a baseline's selection) into a labelled PathExplanation (private).

:func:`assemble` is a pure function of data: the local structure, the selection, the vocabulary
labels, the teacher's score of the target, the probability map and the scorer; it reads nothing
of the explainer (issue #16: it used to take the explainer and read its internals).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from graphdata.errors import GraphDataError
from kg.explain.explanation import ExplainedPath, PathExplanation
from kg.explain.fidelity import characterization_score, sparsity
from kg.explain.local import LocalStructure
from kg.explain.search import Scorer, SearchResult


@dataclass(frozen=True)
class Context:
    """What an explanation is labelled and scored with, besides the selection itself."""

    entities: Sequence[str]  # entity labels by id
    relations: Sequence[str]  # relation labels by id
    teacher_score: float  # the model's score f(h, r, t) of the target
    probability: Callable[[Tensor], Tensor]  # teacher-unit scores -> calibrated probabilities
    scorer: Scorer | None  # scores edge masks of a fixed selection; None for a search result
    min_paths: int  # kg.explain.search.MIN_PATHS, for the empty-explanation note
    min_gain: float  # ExplainerConfig.min_gain, for the same note
    max_candidates: int  # ExplainerConfig.max_candidates, for the truncation note


__all__: list[str] = []


def score_selection(
    scorer: Scorer,
    local: LocalStructure,
    chosen: tuple[int, ...],
    mask: Tensor,
    stop_reason: str,
) -> SearchResult:
    r"""Score a fixed selection (every figure and path gain) in one batched scorer call.

    The rows are the full, empty, explanation and complement graphs, each path alone and each
    prefix of the paths.

    Each path's gain is :math:`g_k = f(S_k) - f(S_{k-1})`, :math:`S_k` the first :math:`k`
    chosen paths' triples and :math:`S_0 = \varnothing` (the strategy ``"patterns"`` and the
    baselines, whose paths are taken in their order), never NaN.
    """
    device = local.edge_type.device
    k = len(chosen)
    full = torch.ones(1, local.num_edges, dtype=torch.bool, device=device)
    alone = torch.stack([local.edge_mask([p]) for p in chosen]) if chosen else full[:0]
    prefixes = (
        torch.stack([local.edge_mask(chosen[: i + 1]) for i in range(k)]) if chosen else full[:0]
    )
    masks = torch.cat([full, ~full, mask.unsqueeze(0), ~mask.unsqueeze(0), alone, prefixes])
    scores = scorer(masks).tolist()
    cumulative = [scores[1], *scores[4 + k :]]
    return SearchResult(
        chosen=chosen,
        gains=tuple(b - a for a, b in zip(cumulative, cumulative[1:])),
        individual=tuple(scores[4 : 4 + k]),
        full_score=scores[0],
        empty_score=scores[1],
        explanation_score=scores[2],
        complement_score=scores[3],
        stop_reason=stop_reason,
        num_scored=masks.size(0),
    )


def _message(cfg: Context, local: LocalStructure, result: SearchResult) -> str:
    notes = []
    if not local.paths:
        if local.num_edges == 0 and local.num_nodes == 2:
            notes.append(
                f"head and tail are not connected within {local.hops} hops (their enclosing "
                "subgraph is empty once the target is removed): empty explanation"
            )
        else:
            notes.append(
                f"no path of length <= {local.max_length} joins head and tail inside their "
                f"{local.hops}-hop enclosing subgraph: empty explanation"
            )
    elif result.stop_reason == "no_signal":
        notes.append(
            f"the local graph does not raise the target's score (f(G) = {result.full_score:.4g}, "
            f"f(empty) = {result.empty_score:.4g}): nothing to explain"
        )
    elif result.stop_reason == "min_gain" and not result.chosen:
        if cfg.min_paths > 0:
            notes.append("no path raises the objective above the empty explanation's")
        else:
            notes.append(
                f"no path adds at least min_gain = {cfg.min_gain} of the local graph's gain"
            )
    if local.truncated:
        notes.append(f"candidate paths capped at max_candidates = {cfg.max_candidates}")
    return "; ".join(notes)


def assemble(
    context: Context,
    local: LocalStructure,
    result: SearchResult | None,
    chosen: tuple[int, ...],
    mask: Tensor,
    *,
    mode: str,
    start: float,
    stop_reason: str = "baseline",
    conditions: tuple[int, ...] = (),
) -> PathExplanation:
    """Build the labelled explanation; ``result=None`` scores the selection first.

    ``conditions``: positions of local triples that are condition atoms of the chosen paths
    (:class:`kg.explain.patterns.PatternChoice`), also set in ``mask``.
    """
    if result is None:
        if context.scorer is None:
            raise GraphDataError("context: a fixed selection (result=None) needs a scorer")
        result = score_selection(context.scorer, local, chosen, mask, stop_reason)
    entities, relations = context.entities, context.relations
    node_labels = [entities[i] for i in local.nodes.tolist()]
    # the three columns as lists, not a list per triple: the same labels without 100k short
    # lists (about 0.15 s of a 114k-triple 2-hop local graph around a FB15k-237 hub)
    columns = local.triples.t().tolist()
    triples = [(entities[h], relations[r], entities[t]) for h, r, t in zip(*columns)]
    heads = local.edge_index[0].tolist()
    paths: list[ExplainedPath] = []
    order: list[int] = []
    for p, score, gain in zip(chosen, result.individual, result.gains):
        edges, nodes = local.paths[p], local.path_nodes[p]
        order += edges
        paths.append(
            ExplainedPath(
                triples=tuple(triples[e] for e in edges),
                forward=tuple(heads[e] == nodes[i] for i, e in enumerate(edges)),
                entities=tuple(node_labels[v] for v in nodes),
                individual_score=score,
                gain=gain,
            )
        )
    order += mask.nonzero().flatten().tolist()  # baselines without paths: mask order
    chosen_triples = tuple(dict.fromkeys(triples[e] for e in order))
    h, r, t = local.target
    teacher = context.teacher_score
    probs = context.probability(
        torch.tensor([result.full_score, result.explanation_score, result.complement_score])
    ).tolist()
    fid_plus, fid_minus = probs[0] - probs[2], probs[0] - probs[1]
    return PathExplanation(
        target=(entities[h], relations[r], entities[t]),
        paths=tuple(paths),
        triples=chosen_triples,
        teacher_score=teacher,
        full_score=result.full_score,
        empty_score=result.empty_score,
        joint_score=result.explanation_score,
        complement_score=result.complement_score,
        full_probability=probs[0],
        joint_probability=probs[1],
        complement_probability=probs[2],
        fid_plus=fid_plus,
        fid_minus=fid_minus,
        characterization=characterization_score(fid_plus, fid_minus),
        sparsity=sparsity(len(chosen_triples), local.num_edges),
        local_entities=tuple(node_labels),
        local_triples=tuple(triples),
        num_candidates=len(local.paths),
        truncated=local.truncated,
        stop_reason=result.stop_reason,
        mode=mode,
        seconds=time.perf_counter() - start,
        message=_message(context, local, result),
        conditions=tuple(triples[e] for e in conditions),
    )
