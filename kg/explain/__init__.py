"""KGExplainer: synergistic path-based explanations of knowledge-graph completion.

Ma et al., "Towards Synergistic Path-based Explanations for Knowledge Graph Completion:
Exploration and Evaluation", ICLR 2025 (arXiv 2404.03893), with a distilled relational-GNN
evaluator, batched local re-training, fidelity metrics and ground-truth evaluation on the
synthetic family KG.

The package exports the 15 names of everyday use (issue #16: it exported 40, 7 of them option
tuples). Everything else stays public in its module: the option tuples (``explainer.MODES``,
``BASELINES``, ``STRATEGIES``; ``search.OBJECTIVES``, ``SELECTIONS``, ``STOP_REASONS``;
``retrain.INITS``), the dispatch dicts (``baselines.BASELINES``, ``explainer.SEARCHES``), the
baselines (:mod:`kg.explain.baselines`), the node search, the local structure type, the
distillation targets, the evaluator's fingerprints, the re-training scorer, the ground-truth
helpers, the model-faithful evaluator (:mod:`kg.explain.faithful`), the parallel map
(:mod:`kg.explain.parallel`), the pattern search (:mod:`kg.explain.patterns`), and the
implementation constants that replaced knobs (:mod:`kg.explain.evaluator.config`,
``search.MAX_PATHS`` ... ``MIN_PATHS``, ``retrain.LR`` ...).
"""

from typing import TYPE_CHECKING

from graphdata._lazy import lazy_exports

if TYPE_CHECKING:
    from kg.explain.evaluator.config import EvaluatorConfig
    from kg.explain.evaluator.distilled import DistilledEvaluator
    from kg.explain.explainer import ExplainerConfig, KGExplainer
    from kg.explain.explanation import ExplainedPath, PathExplanation
    from kg.explain.fidelity import (
        characterization_score,
        model_fidelity,
        phenomenon_fidelity,
        probability_fidelity,
        sparsity,
    )
    from kg.explain.ground_truth import ground_truth_scores
    from kg.explain.local import local_structure
    from kg.explain.retrain import RetrainConfig
    from kg.explain.search import greedy_search

__all__ = [
    "KGExplainer",
    "ExplainerConfig",
    "EvaluatorConfig",
    "RetrainConfig",
    "DistilledEvaluator",
    "PathExplanation",
    "ExplainedPath",
    "local_structure",
    "greedy_search",
    "ground_truth_scores",
    "probability_fidelity",
    "model_fidelity",
    "phenomenon_fidelity",
    "characterization_score",
    "sparsity",
]

#: Submodule -> the public names it defines, imported on first use (PEP 562; graphdata._lazy).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "kg.explain.evaluator.config": ("EvaluatorConfig",),
    "kg.explain.evaluator.distilled": ("DistilledEvaluator",),
    "kg.explain.explainer": ("ExplainerConfig", "KGExplainer"),
    "kg.explain.explanation": ("ExplainedPath", "PathExplanation"),
    "kg.explain.fidelity": (
        "characterization_score",
        "model_fidelity",
        "phenomenon_fidelity",
        "probability_fidelity",
        "sparsity",
    ),
    "kg.explain.ground_truth": ("ground_truth_scores",),
    "kg.explain.local": ("local_structure",),
    "kg.explain.retrain": ("RetrainConfig",),
    "kg.explain.search": ("greedy_search",),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
