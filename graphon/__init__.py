"""Graphons and graphon-signals: sampling, homomorphism densities, k-WL and cut distance."""

from graphon.cut import CutNormResult, cut_norm
from graphon.cut_distance import CutDistanceResult, cut_distance
from graphon.densities import (
    DensityEstimate,
    graphon_density,
    monte_carlo_density,
    sample_density,
)
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
