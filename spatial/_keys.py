"""Every AnnData key the :mod:`spatial` package reads or writes, in one place.

After squidpy's ``_constants/_pkg_constants.py``: code elsewhere refers to these names, so a
renamed slot changes here only. The graph keys follow squidpy's ``spatial_neighbors``
(``squidpy/gr/_build.py``; Palla et al., "Squidpy: a scalable framework for spatial omics
analysis", Nature Methods 2022):
coordinates in ``obsm['spatial']``, the graph in ``obsp['spatial_connectivities']`` and
``obsp['spatial_distances']``, its parameters in ``uns['spatial_neighbors']``.
"""

from __future__ import annotations

from graphdata.errors import GraphDataError

__all__ = [
    "SPATIAL_KEY",
    "connectivities_key",
    "distances_key",
    "neighbors_key",
    "INTRA_KEY",
    "INTER_KEY",
    "UNS_KEY",
    "COUNTERFACTUAL_LAYER",
    "DELTA_LAYER",
    "RING_OBS",
    "PERTURBED_OBS",
    "check_key_added",
    "matrix_key",
    "energy_matrix_key",
    "field_key",
    "gene_offset_key",
    "library_slope_key",
    "size_factor_obs",
    "counterfactual_layer",
    "delta_layer",
    "ring_obs",
    "perturbed_obs",
]

#: Default ``obsm`` key of the spatial coordinates (and prefix of the graph keys).
SPATIAL_KEY = "spatial"


def connectivities_key(key: str = SPATIAL_KEY) -> str:
    """``obsp`` key of the connectivity matrix of the graph named ``key``."""
    return f"{key}_connectivities"


def distances_key(key: str = SPATIAL_KEY) -> str:
    """``obsp`` key of the distance matrix of the graph named ``key``."""
    return f"{key}_distances"


def neighbors_key(key: str = SPATIAL_KEY) -> str:
    """``uns`` key of the parameters of the graph named ``key``."""
    return f"{key}_neighbors"


#: ``varp`` key of the fitted intracellular gene-gene matrix ``[G, G]`` over ``var_names``.
INTRA_KEY = "celcomen_intra"
#: ``varp`` key of the fitted intercellular gene-gene matrix ``[G, G]`` over ``var_names``.
INTER_KEY = "celcomen_inter"
#: ``uns`` key of the fit parameters, the perturbation and the loss log.
UNS_KEY = "celcomen"
#: ``layers`` key of the relaxed expression after the perturbation (unit-sphere scale).
COUNTERFACTUAL_LAYER = "celcomen_counterfactual"
#: ``layers`` key of the counterfactual minus the sham (no-perturbation) relaxation.
DELTA_LAYER = "celcomen_delta"
#: ``obs`` key of each cell's graph-distance ring to the perturbed cells (0, 1, 2, 3 = 3+).
RING_OBS = "celcomen_ring"
#: ``obs`` key of the boolean mask of perturbed cells.
PERTURBED_OBS = "celcomen_perturbed"


# The same names under another prefix (``key_added=`` of :mod:`spatial.tl`), so that two fits
# can live side by side in one AnnData; with the default prefix they equal the constants above.


def _check_which(which: str) -> str:
    """``which`` itself, if it names one of the two matrices (or fields); else a clear error."""
    if which not in ("intra", "inter"):
        raise GraphDataError(f"which: expected 'intra' or 'inter', got {which!r}")
    return which


def check_key_added(key_added: object, argument: str = "key_added") -> str:
    """``key_added`` itself, if it can name keys in an ``.h5ad`` file; else a clear error.

    ``argument`` is the name the error gives it (the CLI passes ``"--key-added"``).

    An empty prefix writes ``uns[""]``, whose entries ``write_h5ad`` spreads over ``uns``
    itself (replacing what was there), and a ``"/"`` makes HDF5 groups of the keys: either file
    reads back without the fit, or not at all.

    Examples:
        >>> check_key_added("celcomen_ko")
        'celcomen_ko'
    """
    if not isinstance(key_added, str) or not key_added or "/" in key_added:
        raise GraphDataError(
            f"{argument}: expected a non-empty name without '/', got {key_added!r}; pass e.g. "
            f"{argument}{' ' if argument.startswith('--') else '='}celcomen_2 (it prefixes every "
            "key written, and '/' or '' cannot be stored in an .h5ad file)"
        )
    return key_added


def matrix_key(key_added: str = UNS_KEY, which: str = "intra") -> str:
    """``varp`` key of a fitted matrix: ``f"{key_added}_{which}"``, ``which`` intra or inter."""
    return f"{key_added}_{_check_which(which)}"


def energy_matrix_key(key_added: str = UNS_KEY, which: str = "intra") -> str:
    """``varp`` key of the fitted energy's own matrix, ``f"{key_added}_{which}_energy"``.

    Written when it differs from the reported matrix (a fit with fields on non-negative data
    reports the part orthogonal to the mean direction, and a zero trace); counterfactuals use it.
    """
    return f"{key_added}_{_check_which(which)}_energy"


def field_key(key_added: str = UNS_KEY, which: str = "intra") -> str:
    """``var`` column of a fitted linear field: ``f"{key_added}_h_{which}"``."""
    return f"{key_added}_h_{_check_which(which)}"


def gene_offset_key(key_added: str = UNS_KEY) -> str:
    """``var`` column of a ``transform="log_counts"`` fit's gene means of log(1 + counts).

    ``f"{key_added}_gene_offset"``; counterfactuals of such a fit need it (0 for genes not
    fitted).
    """
    return f"{key_added}_gene_offset"


def library_slope_key(key_added: str = UNS_KEY) -> str:
    r"""``var`` column of a log-counts fit's library-size sensitivity :math:`\kappa`.

    ``f"{key_added}_library_slope"``, written when the fit had size factors (0 for genes not
    fitted); counterfactuals of such a fit need it.
    """
    return f"{key_added}_library_slope"


def size_factor_obs(key_added: str = UNS_KEY) -> str:
    """``obs`` column of the size factors a log-counts fit used: ``f"{key_added}_size_factor"``."""
    return f"{key_added}_size_factor"


def counterfactual_layer(key_added: str = UNS_KEY) -> str:
    """``layers`` key of the relaxed perturbed tissue under prefix ``key_added``."""
    return f"{key_added}_counterfactual"


def delta_layer(key_added: str = UNS_KEY) -> str:
    """``layers`` key of perturbed minus sham under prefix ``key_added``."""
    return f"{key_added}_delta"


def delta_stderr_layer(key_added: str = UNS_KEY) -> str:
    """``layers`` key of the Monte Carlo standard error of the delta (``method="langevin"``)."""
    return f"{key_added}_delta_stderr"


def ring_obs(key_added: str = UNS_KEY) -> str:
    """``obs`` key of the graph-distance ring under prefix ``key_added``."""
    return f"{key_added}_ring"


def perturbed_obs(key_added: str = UNS_KEY) -> str:
    """``obs`` key of the perturbed-cell mask under prefix ``key_added``."""
    return f"{key_added}_perturbed"
