r"""Perturbation-based greedy search for a synergistic set of explanation paths.

KGExplainer (Ma et al., "Towards Synergistic Path-based Explanations for Knowledge Graph
Completion: Exploration and Evaluation", ICLR 2025, arXiv 2404.03893) grows an explanation
greedily, scoring each candidate by how a perturbation of the local graph changes the target's
score. Here a candidate is a whole path; with :math:`G` the local triples, :math:`E` the triples
of the explanation so far and :math:`f(M)` the target's score when only the triples :math:`M`
are present, the objective of a triple set is

.. math::
    J_{\text{both}}(E) = f(E) - f(G \setminus E), \qquad
    J_{\text{necessity}}(E) = f(G) - f(G \setminus E), \qquad
    J_{\text{sufficiency}}(E) = f(E) - f(\varnothing).

``necessity`` is the reference's deletion importance; ``both`` (default) also asks the paths to
carry the score on their own, so that two redundant paths, neither necessary alone, are picked
together: the synergy the paper is after. Each step scores every remaining path :math:`p` by
:math:`J(E \cup p)` in **one** call of the scorer, adds the best (the first, hence shortest,
among ties) and stops by an explicit rule: the path budget, or a marginal gain
:math:`J(E \cup p) - J(E)` below ``min_gain`` times :math:`J(G) - J(\varnothing)`, the gain of
the whole local graph; the first ``min_paths`` paths need only a positive gain (the best single
path is an explanation even when no path alone reaches the threshold).

``selection="shortest"`` is the parsimonious variant: among the candidates whose marginal gain
reaches the threshold, a step takes one that adds the fewest new triples (the best of those),
as the reference's breadth-first growth from :math:`h` stops at the first depth that reaches
:math:`t`. When a short path and a longer one both carry the prediction, the explanation is the
short one; a long path is chosen only when no shorter one is enough.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from graphdata.errors import GraphDataError

__all__ = ["OBJECTIVES", "SELECTIONS", "STOP_REASONS", "SearchResult", "greedy_search"]

#: Greedy objectives (see the module docstring).
OBJECTIVES = ("both", "necessity", "sufficiency")
#: How a step picks among the candidates: the largest objective, or the fewest new triples
#: among those whose marginal gain reaches the threshold (see the module docstring).
SELECTIONS = ("best", "shortest")
# The search's defaults, the single place they are written (issue #16: ExplainerConfig's fields
# default to these, greedy_search's keywords too). Measured on 20 cached family-KG evaluators
# (benchmarks/RESULTS.md, "Search settings do not help"): these 14 / 20 runs meeting the goals;
# min_gain .15 / .20 / .30: 12 / 13 / 13; selection "best": 4; objective "sufficiency": 13.

#: The path budget.
MAX_PATHS = 3
#: The smallest relative marginal gain that adds a path (a fraction of J(G) - J(empty)).
MIN_GAIN = 0.25
#: How a step picks among the candidates (one of SELECTIONS).
SELECTION = "shortest"
#: The greedy objective (one of OBJECTIVES); no longer an ExplainerConfig field.
OBJECTIVE = "both"
#: Paths taken whenever their gain is positive, even below MIN_GAIN; no longer an ExplainerConfig
#: field. 1: with 0 a lone rule body under MIN_GAIN gave an empty explanation (RESULTS, session 3).
MIN_PATHS = 1

#: Why a search ended: path budget reached, marginal gain below the threshold, every candidate
#: used, no candidate path at all, a local graph that does not raise the score, the node
#: search (:mod:`kg.explain.node_search`) reaching the tail or not, or the pattern search
#: (:mod:`kg.explain.patterns`) ending when no further pattern is admitted.
STOP_REASONS = (
    "budget",
    "min_gain",
    "exhausted",
    "no_paths",
    "no_signal",
    "reached_tail",
    "tail_not_reached",
    "agreement",
)

#: A perturbation scorer: keep masks ``[C, m]`` (bool) -> target scores ``[C]``.
Scorer = Callable[[Tensor], Tensor]


@dataclass(frozen=True)
class SearchResult:
    r"""The outcome of :func:`greedy_search`.

    Attributes:
        chosen: Indices of the chosen paths, in the order they were added.
        gains: The marginal gain of each chosen path, in score units.
        individual: :math:`f(p)`, the score with only path :math:`p`, for each chosen path.
        full_score: :math:`f(G)`.
        empty_score: :math:`f(\varnothing)`.
        explanation_score: :math:`f(S)` for the chosen triples :math:`S` (joint score).
        complement_score: :math:`f(G \setminus S)`.
        stop_reason: One of :data:`STOP_REASONS`.
        num_scored: How many perturbed graphs were scored.
    """

    chosen: tuple[int, ...]
    gains: tuple[float, ...]
    individual: tuple[float, ...]
    full_score: float
    empty_score: float
    explanation_score: float
    complement_score: float
    stop_reason: str
    num_scored: int


def _objective(kind: str, keep: Tensor, drop: Tensor, full: float, empty: float) -> Tensor:
    if kind == "both":
        return keep - drop
    if kind == "necessity":
        return full - drop
    return keep - empty


def greedy_search(
    paths: Sequence[Sequence[int]],
    num_edges: int,
    scorer: Scorer,
    *,
    max_paths: int = MAX_PATHS,
    min_gain: float = MIN_GAIN,
    objective: str = OBJECTIVE,
    selection: str = SELECTION,
    min_paths: int = MIN_PATHS,
    device: torch.device | str | None = None,
) -> SearchResult:
    r"""Grow a path set greedily by the change of the target's score (module docstring).

    Args:
        paths: Each candidate path as the positions of its triples among the ``num_edges``
            local triples.
        num_edges: The number of local triples :math:`m`.
        scorer: Maps keep masks ``[C, m]`` (``True`` = triple present) to the target's scores
            ``[C]``; called once per step with every candidate.
        max_paths: The path budget. Default :data:`MAX_PATHS` (3).
        min_gain: The smallest relative marginal gain that adds a path, a fraction of
            :math:`J(G) - J(\varnothing)`. Default :data:`MIN_GAIN` (0.25).
        objective: One of :data:`OBJECTIVES`. Default :data:`OBJECTIVE` (``"both"``).
        selection: One of :data:`SELECTIONS`. Default :data:`SELECTION` (``"shortest"``).
        min_paths: The first ``min_paths`` paths need only a positive marginal gain, not
            ``min_gain``: the best single path explains a prediction even when it carries less
            than ``min_gain`` of the local graph's gain on its own. Default :data:`MIN_PATHS`
            (1).
        device: Where the masks live. Default ``None``: the CPU.

    Returns:
        The :class:`SearchResult`.

    Raises:
        GraphDataError: On an unknown objective or selection, a budget below 1 or a negative
            threshold.

    Examples:
        >>> # The score is 1 exactly when both triples of path 1 are present (an oracle).
        >>> oracle = lambda keep: (keep[:, 1] & keep[:, 2]).float()
        >>> result = greedy_search([(0,), (1, 2), (3,)], 4, oracle)
        >>> result.chosen, result.stop_reason
        ((1,), 'min_gain')
    """
    if objective not in OBJECTIVES:
        raise GraphDataError(f"objective: expected one of {OBJECTIVES}, got {objective!r}")
    if selection not in SELECTIONS:
        raise GraphDataError(f"selection: expected one of {SELECTIONS}, got {selection!r}")
    if isinstance(max_paths, bool) or not isinstance(max_paths, int) or max_paths < 1:
        raise GraphDataError(
            f"max_paths: expected a positive int (the path budget), got {max_paths!r}"
        )
    if not min_gain >= 0:
        raise GraphDataError(f"min_gain: expected a fraction >= 0, got {min_gain!r}")
    if isinstance(min_paths, bool) or not isinstance(min_paths, int) or min_paths < 0:
        raise GraphDataError(f"min_paths: expected an int >= 0, got {min_paths!r}")
    masks = torch.zeros(len(paths), num_edges, dtype=torch.bool, device=device)  # [P, m]
    for p, edges in enumerate(paths):
        masks[p, list(edges)] = True
    full_mask = torch.ones(1, num_edges, dtype=torch.bool, device=device)
    base = scorer(torch.cat([full_mask, ~full_mask]))
    full, empty = float(base[0]), float(base[1])
    num_scored = 2
    chosen: list[int] = []
    gains: list[float] = []
    current = torch.zeros(num_edges, dtype=torch.bool, device=device)
    # J(E) for the empty explanation and for the whole local graph.
    j_current = float(_objective(objective, base[1:2], base[0:1], full, empty))
    total = float(_objective(objective, base[0:1], base[1:2], full, empty)) - j_current
    if not paths:
        stop = "no_paths"
    elif not total > 0:
        stop = "no_signal"
    else:
        stop = "exhausted"
        while True:
            if len(chosen) == max_paths:
                stop = "budget"
                break
            union = masks | current  # [P, m]
            adds = (union != current).any(dim=1)
            candidates = adds.nonzero().flatten()
            if candidates.numel() == 0:
                break
            trial = union[candidates]  # [C, m]
            need_keep = objective != "necessity"
            need_drop = objective != "sufficiency"
            batch = torch.cat([trial] * need_keep + [~trial] * need_drop)
            scores = scorer(batch)
            num_scored += batch.size(0)
            c = candidates.numel()
            keep = scores[:c] if need_keep else scores.new_zeros(c)
            drop = scores[-c:] if need_drop else scores.new_zeros(c)
            values = _objective(objective, keep, drop, full, empty)  # [C]
            best = int(torch.argmax(values))  # the first maximum: the shortest path among ties
            if selection == "shortest":
                enough = values - j_current >= min_gain * total  # [C]
                if bool(enough.any()):
                    added = (trial & ~current).sum(dim=1)  # [C] new triples of each candidate
                    fewest = int(added[enough].min())
                    pool = enough & (added == fewest)
                    best = int(torch.argmax(torch.where(pool, values, -torch.inf)))
            gain = float(values[best]) - j_current
            below = gain <= 0 if len(chosen) < min_paths else gain < min_gain * total
            if below:
                stop = "min_gain"
                break
            chosen.append(int(candidates[best]))
            gains.append(gain)
            current = trial[best]
            j_current = float(values[best])
    # Joint and individual scores of the final explanation, in one more call.
    final = torch.cat([masks[chosen], current.unsqueeze(0), ~current.unsqueeze(0)])
    scores = scorer(final)
    num_scored += final.size(0)
    return SearchResult(
        chosen=tuple(chosen),
        gains=tuple(gains),
        individual=tuple(float(s) for s in scores[: len(chosen)]),
        full_score=full,
        empty_score=empty,
        explanation_score=float(scores[-2]),
        complement_score=float(scores[-1]),
        stop_reason=stop,
        num_scored=num_scored,
    )
