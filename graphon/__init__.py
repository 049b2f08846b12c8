"""Graphons and graphon-signals: sampling, homomorphism densities, k-WL and cut distance."""

from typing import TYPE_CHECKING

from graphdata._lazy import lazy_exports
from graphdata._version import __version__ as __version__

if TYPE_CHECKING:
    from graphon.cut import CutNormResult, cut_norm
    from graphon.densities import (
        DensityEstimate,
        graphon_density,
        monte_carlo_density,
        sample_density,
    )
    from graphon.distance import CutDistanceResult, cut_distance
    from graphon.families import GRAPHONS, erdos_renyi, make_graphon, sbm
    from graphon.graphons import AnalyticGraphon, Graphon, GraphonSignal, StepGraphon
    from graphon.homomorphism import (
        CostEstimate,
        estimate_cost,
        hom_density,
        inj_density,
        rooted_hom_density,
    )
    from graphon.patterns import PATTERNS, Pattern, as_pattern
    from graphon.sampling import GraphSample, sample_graphs, sample_latents
    from graphon.wl import (
        WLResult,
        graphon_wl_equivalent,
        graphon_wl_refine,
        wl_equivalent,
        wl_refine,
    )

__all__ = [
    "Graphon",
    "AnalyticGraphon",
    "StepGraphon",
    "GraphonSignal",
    "GRAPHONS",
    "make_graphon",
    "erdos_renyi",
    "sbm",
    "GraphSample",
    "sample_graphs",
    "sample_latents",
    "Pattern",
    "PATTERNS",
    "as_pattern",
    "hom_density",
    "inj_density",
    "rooted_hom_density",
    "estimate_cost",
    "CostEstimate",
    "DensityEstimate",
    "graphon_density",
    "monte_carlo_density",
    "sample_density",
    "WLResult",
    "wl_refine",
    "wl_equivalent",
    "graphon_wl_refine",
    "graphon_wl_equivalent",
    "CutNormResult",
    "cut_norm",
    "CutDistanceResult",
    "cut_distance",
]

#: Submodule -> the public names it defines, imported on first use (PEP 562; graphdata._lazy).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "graphon.cut": ("CutNormResult", "cut_norm"),
    "graphon.distance": ("CutDistanceResult", "cut_distance"),
    "graphon.densities": (
        "DensityEstimate",
        "graphon_density",
        "monte_carlo_density",
        "sample_density",
    ),
    "graphon.families": ("GRAPHONS", "erdos_renyi", "make_graphon", "sbm"),
    "graphon.graphons": ("AnalyticGraphon", "Graphon", "GraphonSignal", "StepGraphon"),
    "graphon.homomorphism": (
        "CostEstimate",
        "estimate_cost",
        "hom_density",
        "inj_density",
        "rooted_hom_density",
    ),
    "graphon.patterns": ("PATTERNS", "Pattern", "as_pattern"),
    "graphon.sampling": ("GraphSample", "sample_graphs", "sample_latents"),
    "graphon.wl": (
        "WLResult",
        "graphon_wl_equivalent",
        "graphon_wl_refine",
        "wl_equivalent",
        "wl_refine",
    ),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
