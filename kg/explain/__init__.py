"""KGExplainer: synergistic path-based explanations of knowledge-graph completion.

Ma et al., "Towards Synergistic Path-based Explanations for Knowledge Graph Completion:
Exploration and Evaluation", ICLR 2025 (arXiv 2404.03893), with a distilled relational-GNN
evaluator, batched local re-training, fidelity metrics and ground-truth evaluation on the
synthetic family KG.
"""

from typing import TYPE_CHECKING

from graphdata._lazy import lazy_exports

if TYPE_CHECKING:
    from kg.explain.baselines import (
        edge_mask_explainer,
        random_paths,
        shortest_paths,
        single_best_path,
    )
    from kg.explain.evaluator import (
        DistillationTargets,
        DistilledEvaluator,
        EvaluatorConfig,
        distillation_targets,
        graph_fingerprint,
        member_seed,
    )
    from kg.explain.explainer import BASELINES, MODES, STRATEGIES, ExplainerConfig, KGExplainer
    from kg.explain.explanation import ExplainedPath, PathExplanation
    from kg.explain.fidelity import (
        characterization_score,
        model_fidelity,
        phenomenon_fidelity,
        probability_fidelity,
        sparsity,
    )
    from kg.explain.ground_truth import (
        GroundTruthScores,
        canonical_triple,
        equivalence_classes,
        ground_truth_scores,
        is_symmetric,
        unfold_triples,
    )
    from kg.explain.local import LocalStructure, length_shares, local_structure
    from kg.explain.node_search import node_greedy_search
    from kg.explain.retrain import INITS, RetrainConfig, RetrainScorer
    from kg.explain.search import OBJECTIVES, SELECTIONS, STOP_REASONS, SearchResult, greedy_search

__all__ = [
    "KGExplainer",
    "ExplainerConfig",
    "MODES",
    "BASELINES",
    "STRATEGIES",
    "node_greedy_search",
    "PathExplanation",
    "ExplainedPath",
    "LocalStructure",
    "local_structure",
    "length_shares",
    "greedy_search",
    "SearchResult",
    "OBJECTIVES",
    "SELECTIONS",
    "STOP_REASONS",
    "DistilledEvaluator",
    "EvaluatorConfig",
    "DistillationTargets",
    "distillation_targets",
    "graph_fingerprint",
    "member_seed",
    "RetrainScorer",
    "RetrainConfig",
    "INITS",
    "probability_fidelity",
    "model_fidelity",
    "phenomenon_fidelity",
    "characterization_score",
    "sparsity",
    "GroundTruthScores",
    "ground_truth_scores",
    "canonical_triple",
    "equivalence_classes",
    "is_symmetric",
    "unfold_triples",
    "random_paths",
    "shortest_paths",
    "single_best_path",
    "edge_mask_explainer",
]

#: Submodule -> the public names it defines, imported on first use (PEP 562; graphdata._lazy).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "kg.explain.baselines": (
        "edge_mask_explainer",
        "random_paths",
        "shortest_paths",
        "single_best_path",
    ),
    "kg.explain.evaluator": (
        "DistillationTargets",
        "DistilledEvaluator",
        "EvaluatorConfig",
        "distillation_targets",
        "graph_fingerprint",
        "member_seed",
    ),
    "kg.explain.explainer": ("BASELINES", "MODES", "STRATEGIES", "ExplainerConfig", "KGExplainer"),
    "kg.explain.explanation": ("ExplainedPath", "PathExplanation"),
    "kg.explain.fidelity": (
        "characterization_score",
        "model_fidelity",
        "phenomenon_fidelity",
        "probability_fidelity",
        "sparsity",
    ),
    "kg.explain.ground_truth": (
        "GroundTruthScores",
        "canonical_triple",
        "equivalence_classes",
        "ground_truth_scores",
        "is_symmetric",
        "unfold_triples",
    ),
    "kg.explain.local": ("LocalStructure", "length_shares", "local_structure"),
    "kg.explain.node_search": ("node_greedy_search",),
    "kg.explain.retrain": ("INITS", "RetrainConfig", "RetrainScorer"),
    "kg.explain.search": (
        "OBJECTIVES",
        "SELECTIONS",
        "STOP_REASONS",
        "SearchResult",
        "greedy_search",
    ),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
