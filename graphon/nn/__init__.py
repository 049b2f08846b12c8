"""Graphon neural networks: IGN and IWN layers and models, an MPNN baseline, transfer harness."""

from typing import TYPE_CHECKING

from graphdata._lazy import lazy_exports

if TYPE_CHECKING:
    from graphon.nn.basis import BasisElement, apply_basis, basis_size, equivariant_basis
    from graphon.nn.bernoulli import bernoulli_lift
    from graphon.nn.generalization import (
        SizeGeneralizationConfig,
        SizeGeneralizationResult,
        full_random_graphs,
        signal_triangle_density,
        size_generalization,
    )
    from graphon.nn.inputs import dense_input
    from graphon.nn.layers import EquivariantLinear
    from graphon.nn.models import IGN, IWN, MODELS
    from graphon.nn.mpnn import MPNN, MeanAggregationConv
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

#: Submodule -> the public names it defines, imported on first use (PEP 562; graphdata._lazy).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "graphon.nn.basis": ("BasisElement", "apply_basis", "basis_size", "equivariant_basis"),
    "graphon.nn.bernoulli": ("bernoulli_lift",),
    "graphon.nn.inputs": ("dense_input",),
    "graphon.nn.layers": ("EquivariantLinear",),
    "graphon.nn.models": ("IGN", "IWN", "MODELS"),
    "graphon.nn.mpnn": ("MPNN", "MeanAggregationConv"),
    "graphon.nn.generalization": (
        "SizeGeneralizationConfig",
        "SizeGeneralizationResult",
        "full_random_graphs",
        "signal_triangle_density",
        "size_generalization",
    ),
    "graphon.nn.transfer": (
        "ConvergenceConfig",
        "ConvergenceCurve",
        "ConvergenceResult",
        "randomize_parameters",
        "untrained_convergence",
    ),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
