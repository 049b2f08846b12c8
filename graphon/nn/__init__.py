"""Graphon neural networks: IGN and IWN layers and models, an MPNN baseline, transfer harness."""

from graphon.nn.basis import BasisElement, apply_basis, basis_size, equivariant_basis
from graphon.nn.bernoulli import bernoulli_lift
from graphon.nn.inputs import dense_input
from graphon.nn.layers import EquivariantLinear
from graphon.nn.models import IGN, IWN, MODELS
from graphon.nn.mpnn import MPNN, MeanAggregationConv
from graphon.nn.size_generalization import (
    SizeGeneralizationConfig,
    SizeGeneralizationResult,
    full_random_graphs,
    signal_triangle_density,
    size_generalization,
)
from graphon.nn.transfer import (
    ConvergenceConfig,
    ConvergenceCurve,
    ConvergenceResult,
    randomize_parameters,
    untrained_convergence,
)

__all__ = [
    "BasisElement",
    "equivariant_basis",
    "basis_size",
    "apply_basis",
    "EquivariantLinear",
    "dense_input",
    "IWN",
    "IGN",
    "MPNN",
    "MeanAggregationConv",
    "MODELS",
    "bernoulli_lift",
    "ConvergenceConfig",
    "ConvergenceCurve",
    "ConvergenceResult",
    "randomize_parameters",
    "untrained_convergence",
    "SizeGeneralizationConfig",
    "SizeGeneralizationResult",
    "full_random_graphs",
    "signal_triangle_density",
    "size_generalization",
]
