"""Celcomen on spatial transcriptomics: model, fitting, counterfactuals, simulation, plots.

Megas et al., "Celcomen: spatial causal disentanglement for single-cell and tissue perturbation
modeling", arXiv:2409.05804 (ICLR 2025), re-implemented with fixes of the reference code
(Teichlab/celcomen): the von Mises-Fisher normaliser on S^(G-1) where it uses the 3-D one for
any G, one edge weighting in energy and mean field where it mixes raw and normalised degrees,
signed couplings where it clips to [0, 1], clamped perturbations with a sham run where the
knocked-out gene drifts back, and Riemannian relaxation on the sphere where its angle map
applies one sine twice.
"""

from typing import TYPE_CHECKING

from graphdata._lazy import lazy_exports
from graphdata._version import __version__ as __version__

if TYPE_CHECKING:
    from spatial import pl, plot, tl, tools
    from spatial.celcomen import OBJECTIVES, Celcomen, CelcomenConfig
    from spatial.counterfactual import (
        Counterfactual,
        auto_step_size,
        relax,
        ring_index,
        ring_summary,
        simulate_intervention,
    )
    from spatial.model import CelcomenEnergy
    from spatial.objectives import (
        Neighbourhood,
        mean_field_terms,
        reference_terms,
        score_matching_terms,
    )
    from spatial.simulate import (
        SimulatedTissue,
        hex_grid,
        langevin_sample,
        random_couplings,
        random_positions,
        simulate_tissue,
    )

    # The AnnData wrapper ``tools.celcomen`` is not re-exported: the name would shadow the
    # ``spatial.celcomen`` module. Call it as ``spatial.tools.celcomen(adata)``.
    from spatial.tools import intervene, store_counterfactual, store_fit
    from spatial.vmf import reference_log_partition_3d, vmf_log_partition, vmf_mean_resultant_length

__all__ = [
    "Celcomen",
    "CelcomenConfig",
    "CelcomenEnergy",
    "Counterfactual",
    "Neighbourhood",
    "OBJECTIVES",
    "SimulatedTissue",
    "auto_step_size",
    "hex_grid",
    "intervene",
    "langevin_sample",
    "mean_field_terms",
    "pl",
    "plot",
    "random_couplings",
    "random_positions",
    "reference_log_partition_3d",
    "reference_terms",
    "relax",
    "ring_index",
    "ring_summary",
    "score_matching_terms",
    "simulate_intervention",
    "simulate_tissue",
    "store_counterfactual",
    "store_fit",
    "tl",
    "tools",
    "vmf_log_partition",
    "vmf_mean_resultant_length",
]

#: Submodule -> the public names it defines, imported on first use (PEP 562; graphdata._lazy).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spatial.plot": ("plot",),
    "spatial.pl": ("pl",),
    "spatial.tl": ("tl",),
    "spatial.tools": ("tools", "intervene", "store_counterfactual", "store_fit"),
    "spatial.celcomen": ("OBJECTIVES", "Celcomen", "CelcomenConfig"),
    "spatial.counterfactual": (
        "Counterfactual",
        "auto_step_size",
        "relax",
        "ring_index",
        "ring_summary",
        "simulate_intervention",
    ),
    "spatial.model": ("CelcomenEnergy",),
    "spatial.objectives": (
        "Neighbourhood",
        "mean_field_terms",
        "reference_terms",
        "score_matching_terms",
    ),
    "spatial.simulate": (
        "SimulatedTissue",
        "hex_grid",
        "langevin_sample",
        "random_couplings",
        "random_positions",
        "simulate_tissue",
    ),
    "spatial.vmf": ("reference_log_partition_3d", "vmf_log_partition", "vmf_mean_resultant_length"),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
