"""The distilled evaluator of KGExplainer, one subpackage (issue #16, laid out like PyG's explain).

* :mod:`~kg.explain.evaluator.config`: :class:`EvaluatorConfig` and the distillation constants;
* :mod:`~kg.explain.evaluator.network`: the relational GNN over enclosing subgraphs (with
  :mod:`~kg.explain.evaluator.rgcn`, its basis-decomposed relational convolution);
* :mod:`~kg.explain.evaluator.sampling`: negatives, subgraph banks, thinning, teacher checks;
* :mod:`~kg.explain.evaluator.training`: teacher targets, the distillation loss and training;
* :mod:`~kg.explain.evaluator.io`: saving and loading a fitted evaluator;
* :mod:`~kg.explain.evaluator.distilled`: :class:`DistilledEvaluator`, which ties them together.

Only the names below are public; the modules are the evaluator's parts, private by location
(nothing outside this subpackage but the tests imports them).
"""

from typing import TYPE_CHECKING

from graphdata._lazy import lazy_exports

if TYPE_CHECKING:
    from kg.explain.evaluator.config import EvaluatorConfig
    from kg.explain.evaluator.distilled import DistilledEvaluator, graph_fingerprint
    from kg.explain.evaluator.training import DistillationTargets, distillation_targets

__all__ = [
    "EvaluatorConfig",
    "DistillationTargets",
    "distillation_targets",
    "DistilledEvaluator",
    "graph_fingerprint",
]

#: Submodule -> the public names it defines, imported on first use (PEP 562; graphdata._lazy).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "kg.explain.evaluator.config": ("EvaluatorConfig",),
    "kg.explain.evaluator.distilled": ("DistilledEvaluator", "graph_fingerprint"),
    "kg.explain.evaluator.training": ("DistillationTargets", "distillation_targets"),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
