"""graphdata: the shared graph-data layer of graphlib.

Named ``graphdata`` rather than ``graphlib`` because the standard library has had a ``graphlib``
module since Python 3.9, and it shadows any installed package of that name.

The public names are imported on first use (PEP 562, :mod:`graphdata._lazy`), so ``import
graphdata`` (and ``import kg``, which imports it) loads neither PyG nor AnnData nor networkx.
"""

from typing import TYPE_CHECKING

from graphdata._lazy import lazy_exports
from graphdata._version import __version__ as __version__

if TYPE_CHECKING:
    from graphdata.delaunay import delaunay_graph
    from graphdata.dense import DenseGraph, DenseGraphBatch
    from graphdata.device import make_generator, resolve_device, seed_everything
    from graphdata.errors import (
        GraphDataError,
        NotFittedError,
        TSVFormatError,
        UnknownLabelError,
        UnknownLabelsDropped,
    )
    from graphdata.filter_index import FilterIndex
    from graphdata.kg_stats import KGStatistics, RelationStatistics, describe, kg_statistics
    from graphdata.paths import Paths, Step, count_paths, enumerate_paths, enumerate_paths_batch
    from graphdata.rules import (
        Atom,
        ExplanationScore,
        Inequality,
        LengthSummary,
        Rule,
        RuleGraph,
        RuleSyntaxError,
        TargetScores,
        Term,
        canonical_form,
        derived,
        explanation_scores,
        groundings,
        parse_rule,
        parse_rules,
        read_rules,
        relation_classes,
        score_targets,
    )
    from graphdata.spatial import knn_graph, radius_graph
    from graphdata.spatial_anndata import (
        spatial_graph,
        spatial_neighbors_delaunay,
        spatial_neighbors_knn,
        spatial_neighbors_radius,
    )
    from graphdata.subgraph import (
        EnclosingSubgraph,
        EnclosingSubgraphBatch,
        k_hop_enclosing_subgraph,
        k_hop_enclosing_subgraphs,
    )
    from graphdata.synthetic import (
        FAMILY_RULES,
        BodyAtom,
        Explanation,
        FamilyKG,
        HornRule,
        apply_rules,
        family_kg,
    )
    from graphdata.tracking import (
        TRACKERS,
        JsonlTracker,
        MlflowTracker,
        TensorBoardTracker,
        Tracker,
        make_tracker,
    )
    from graphdata.triples import INVERSE_SUFFIX, KGDataset, TripleSet, Vocabulary
    from graphdata.worlds import (
        WORLDS,
        World,
        WorldStatistics,
        build_world,
        world,
        world_statistics,
    )

__all__ = [
    # knowledge graphs
    "Vocabulary",
    "TripleSet",
    "KGDataset",
    "INVERSE_SUFFIX",
    "FilterIndex",
    "KGStatistics",
    "RelationStatistics",
    "kg_statistics",
    "describe",
    # the synthetic family KG with planted rules
    "family_kg",
    "FamilyKG",
    "HornRule",
    "BodyAtom",
    "Explanation",
    "FAMILY_RULES",
    "apply_rules",
    # Horn rules of any body shape: parsing, groundings by joins, explanation ground truth
    "Rule",
    "Atom",
    "Term",
    "Inequality",
    "RuleSyntaxError",
    "parse_rule",
    "parse_rules",
    "read_rules",
    "RuleGraph",
    "groundings",
    "derived",
    "explanation_scores",
    "score_targets",
    "relation_classes",
    "canonical_form",
    "ExplanationScore",
    "TargetScores",
    "LengthSummary",
    # synthetic worlds with planted rules, exceptions and noise (academic ... legal)
    "WORLDS",
    "World",
    "world",
    "build_world",
    "WorldStatistics",
    "world_statistics",
    # subgraphs and paths
    "EnclosingSubgraph",
    "EnclosingSubgraphBatch",
    "k_hop_enclosing_subgraph",
    "k_hop_enclosing_subgraphs",
    "Paths",
    "Step",
    "count_paths",
    "enumerate_paths",
    "enumerate_paths_batch",
    # dense batches and spatial graphs
    "DenseGraph",
    "DenseGraphBatch",
    "knn_graph",
    "radius_graph",
    "delaunay_graph",
    "spatial_neighbors_knn",
    "spatial_neighbors_radius",
    "spatial_neighbors_delaunay",
    "spatial_graph",
    # errors, devices, seeds
    "GraphDataError",
    "TSVFormatError",
    "UnknownLabelError",
    "UnknownLabelsDropped",
    "NotFittedError",
    "resolve_device",
    "seed_everything",
    "make_generator",
    # experiment tracking
    "Tracker",
    "JsonlTracker",
    "TensorBoardTracker",
    "MlflowTracker",
    "make_tracker",
    "TRACKERS",
]

#: Submodule -> the public names it defines, imported on first use (PEP 562; graphdata._lazy).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "graphdata.delaunay": ("delaunay_graph",),
    "graphdata.dense": ("DenseGraph", "DenseGraphBatch"),
    "graphdata.device": ("make_generator", "resolve_device", "seed_everything"),
    "graphdata.errors": (
        "GraphDataError",
        "NotFittedError",
        "TSVFormatError",
        "UnknownLabelError",
        "UnknownLabelsDropped",
    ),
    "graphdata.filter_index": ("FilterIndex",),
    "graphdata.kg_stats": ("KGStatistics", "RelationStatistics", "describe", "kg_statistics"),
    "graphdata.paths": ("Paths", "Step", "count_paths", "enumerate_paths", "enumerate_paths_batch"),
    "graphdata.rules": (
        "Atom",
        "ExplanationScore",
        "Inequality",
        "LengthSummary",
        "Rule",
        "RuleGraph",
        "RuleSyntaxError",
        "TargetScores",
        "Term",
        "canonical_form",
        "derived",
        "explanation_scores",
        "groundings",
        "parse_rule",
        "parse_rules",
        "read_rules",
        "relation_classes",
        "score_targets",
    ),
    "graphdata.spatial": ("knn_graph", "radius_graph"),
    "graphdata.spatial_anndata": (
        "spatial_graph",
        "spatial_neighbors_delaunay",
        "spatial_neighbors_knn",
        "spatial_neighbors_radius",
    ),
    "graphdata.subgraph": (
        "EnclosingSubgraph",
        "EnclosingSubgraphBatch",
        "k_hop_enclosing_subgraph",
        "k_hop_enclosing_subgraphs",
    ),
    "graphdata.synthetic": (
        "FAMILY_RULES",
        "BodyAtom",
        "Explanation",
        "FamilyKG",
        "HornRule",
        "apply_rules",
        "family_kg",
    ),
    "graphdata.tracking": (
        "TRACKERS",
        "JsonlTracker",
        "MlflowTracker",
        "TensorBoardTracker",
        "Tracker",
        "make_tracker",
    ),
    "graphdata.triples": ("INVERSE_SUFFIX", "KGDataset", "TripleSet", "Vocabulary"),
    "graphdata.worlds": (
        "WORLDS",
        "World",
        "WorldStatistics",
        "build_world",
        "world",
        "world_statistics",
    ),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
