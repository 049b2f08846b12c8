r"""Baseline explainers that KGExplainer's greedy search is measured against.

Each baseline picks triples of a target's local graph (:class:`~kg.explain.local.LocalStructure`)
and returns the chosen candidate paths (if it works with paths) and the boolean mask of the
chosen local triples:

* ``random``: ``k`` candidate paths drawn uniformly (seeded).
* ``shortest``: the first ``k`` candidate paths (shortest, then lexicographic).
* ``single_best``: the one path of best greedy objective (:func:`~kg.explain.search.greedy_search`
  with a budget of 1 and no threshold).
* ``edge_mask``: a GNNExplainer-style soft edge mask (Ying et al., "GNNExplainer: Generating
  Explanations for Graph Neural Networks", NeurIPS 2019, arXiv 1903.03894) optimised on the
  distilled evaluator: with :math:`w = \sigma(\theta)` over the local triples and
  :math:`p(w) = \sigma((f(w) - \tau)/\sigma_f)`,

  .. math::
      \mathcal{L}(\theta) = -\log p(w) + \alpha \sum_e w_e + \beta\, \frac1m \sum_e
          H(w_e), \qquad H(w) = -w \log w - (1 - w) \log(1 - w),

  PyG's ``GNNExplainer`` defaults (:math:`\alpha = 0.005`, :math:`\beta = 1`, Adam lr 0.01,
  100 epochs) and the GNNExplainer reference code's initialisation :math:`\theta_e \sim
  \mathcal{N}(1, 2/n)` over :math:`n` local entities (RexYing/gnn-model-explainer,
  ``construct_edge_mask``: standard deviation ``calculate_gain("relu") * sqrt(2 / (2 n))``;
  PyG draws the same deviation around 0); the triples with :math:`w_e > 0.5`, at most
  ``max_triples`` of the largest, are the explanation.

:data:`BASELINES` maps each name to a function of one :class:`BaselineInput` (what
:meth:`KGExplainer.explain_baseline <kg.explain.explainer.KGExplainer.explain_baseline>` knows
about the target), so a new baseline is one function and one line of that dict.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from graphdata.errors import GraphDataError
from kg.explain.evaluator import DistilledEvaluator
from kg.explain.local import LocalStructure
from kg.explain.search import OBJECTIVE, Scorer, greedy_search

__all__ = [
    "BASELINES",
    "BaselineInput",
    "random_paths",
    "shortest_paths",
    "single_best_path",
    "edge_mask_explainer",
]

Selection = tuple[tuple[int, ...], Tensor]


@dataclass(frozen=True)
class BaselineInput:
    """What a baseline may use to explain one target (built by ``explain_baseline``)."""

    local: LocalStructure  # the target's local structure
    scorer: Scorer  # the explainer's perturbation scorer (its config's mode)
    evaluator: DistilledEvaluator | None  # the distilled evaluator; None in mode "retrain"
    probability: Callable[[Tensor], Tensor]  # teacher-unit scores -> calibrated probabilities
    max_paths: int  # ExplainerConfig.max_paths
    max_length: int  # ExplainerConfig.max_length
    seed: int  # seeds a random baseline


def random_paths(local: LocalStructure, k: int, *, seed: int = 0) -> Selection:
    """``k`` candidate paths drawn uniformly without replacement.

    Args:
        local: The local structure.
        k: How many paths (fewer when there are fewer candidates).
        seed: Seeds the draw. Default 0.

    Returns:
        ``(chosen path indices, edge mask [m])``.

    Examples:
        >>> ei = torch.tensor([[0, 0, 2, 0], [1, 2, 1, 1]])
        >>> from kg.explain.local import local_structure
        >>> local = local_structure(ei, torch.tensor([0, 1, 1, 2]), (0, 3, 1), hops=1)
        >>> chosen, mask = random_paths(local, 1, seed=0)
        >>> same = chosen == random_paths(local, 1, seed=0)[0]
        >>> same, int(mask.sum()) == len(local.paths[chosen[0]])
        (True, True)
    """
    generator = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(local.paths), generator=generator)[:k].tolist()
    chosen = tuple(sorted(order))
    return chosen, local.edge_mask(chosen)


def shortest_paths(local: LocalStructure, k: int) -> Selection:
    """The first ``k`` candidate paths: the shortest, ties in lexicographic order.

    Args:
        local: The local structure.
        k: How many paths.

    Returns:
        ``(chosen path indices, edge mask [m])``.
    """
    chosen = tuple(range(min(k, len(local.paths))))
    return chosen, local.edge_mask(chosen)


def single_best_path(
    local: LocalStructure, scorer: Scorer, *, objective: str = OBJECTIVE
) -> Selection:
    """The single path of best greedy objective.

    Args:
        local: The local structure.
        scorer: The perturbation scorer.
        objective: The greedy objective (:data:`kg.explain.search.OBJECTIVES`). Default
            :data:`kg.explain.search.OBJECTIVE` (``"both"``).

    Returns:
        ``(chosen path indices, edge mask [m])``; no path when none raises the objective.
    """
    result = greedy_search(
        local.paths,
        local.num_edges,
        scorer,
        max_paths=1,
        min_gain=0.0,
        objective=objective,
        selection="best",  # the one path of largest objective, whatever its size
        min_paths=0,
        device=local.edge_type.device,
    )
    return result.chosen, local.edge_mask(result.chosen)


def edge_mask_explainer(
    local: LocalStructure,
    evaluator: DistilledEvaluator,
    probability: Callable[[Tensor], Tensor],
    *,
    max_triples: int = 9,
    epochs: int = 100,
    lr: float = 0.01,
    size_coef: float = 0.005,
    entropy_coef: float = 1.0,
    seed: int = 0,
) -> Selection:
    r"""GNNExplainer-style soft edge mask on the distilled evaluator (module docstring).

    Args:
        local: The local structure.
        evaluator: The fitted distilled evaluator.
        probability: Maps teacher-unit scores to probabilities.
        max_triples: Most triples kept. Default 9.
        epochs: Optimisation steps. Default 100.
        lr: Adam learning rate. Default 0.01.
        size_coef: :math:`\alpha`. Default 0.005.
        entropy_coef: :math:`\beta`. Default 1.0.
        seed: Seeds the mask initialisation. Default 0.

    Returns:
        ``(no path indices, edge mask [m])``.
    """
    device = local.edge_type.device
    m = local.num_edges
    if m == 0:
        return (), torch.zeros(0, dtype=torch.bool, device=device)
    generator = torch.Generator().manual_seed(seed)
    std = torch.nn.init.calculate_gain("relu") * math.sqrt(2.0 / (2 * max(local.num_nodes, 1)))
    theta = (1.0 + std * torch.randn(m, generator=generator)).to(device).requires_grad_(True)
    optimizer = torch.optim.Adam([theta], lr=lr)
    evaluator.network_.eval()
    with torch.enable_grad():
        for _ in range(epochs):
            weight = theta.sigmoid()
            score = evaluator.score_local(local, weight.unsqueeze(0))[0]
            p = probability(score).clamp(1e-7, 1 - 1e-7)
            w = weight.clamp(1e-7, 1 - 1e-7)
            entropy = -(w * w.log() + (1 - w) * (1 - w).log()).mean()
            loss = -p.log() + size_coef * weight.sum() + entropy_coef * entropy
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    final = F.sigmoid(theta.detach())
    keep = final > 0.5
    order = torch.argsort(final, descending=True, stable=True)[:max_triples]
    mask = torch.zeros(m, dtype=torch.bool, device=device)
    mask[order] = True
    return (), mask & keep


def _random(x: BaselineInput) -> Selection:
    return random_paths(x.local, x.max_paths, seed=x.seed)


def _shortest(x: BaselineInput) -> Selection:
    return shortest_paths(x.local, x.max_paths)


def _single_best(x: BaselineInput) -> Selection:
    return single_best_path(x.local, x.scorer)


def _edge_mask(x: BaselineInput) -> Selection:
    if x.evaluator is None:
        raise GraphDataError("baseline: 'edge_mask' needs the distilled evaluator")
    return edge_mask_explainer(
        x.local, x.evaluator, x.probability, max_triples=x.max_paths * x.max_length, seed=x.seed
    )


#: The baselines by name, each a function of one :class:`BaselineInput`: ``random`` and
#: ``shortest`` take ``max_paths`` paths, ``single_best`` one, ``edge_mask`` at most
#: ``max_paths * max_length`` triples (it needs the distilled evaluator).
BASELINES: dict[str, Callable[[BaselineInput], Selection]] = {
    "random": _random,
    "shortest": _shortest,
    "single_best": _single_best,
    "edge_mask": _edge_mask,
}
