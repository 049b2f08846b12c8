r"""Named graphons for experiments: a visible name -> constructor dict.

Sources: Herbst & Jegelka, "Higher-Order Graphon Neural Networks: Approximation and Cut
Distance", ICLR 2025, arXiv 2503.14338 (Appendix H and dan1elherbst/Higher-Order-WNNs
``loader/random_graphs.py``: ``erdos_renyi``, ``sbm``, ``sum``, ``narrow``, ``sine``); Cai & Wang,
"Convergence of Invariant Graph Networks", ICML 2022, arXiv 2201.10129 (``affine``); the
graphon-estimation test set of Chan & Airoldi, "A Consistent Histogram Estimator for Exchangeable
Graph Models", ICML 2014, as coded in HongtengXu/SGWB-Graphon ``methods/simulator.py`` (Xu et al.,
AAAI 2021, arXiv 2012.05644), here without that code's coordinate flips and rescaling by the
maximum (``product`` ... ``log_max``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import torch
from torch import Tensor

from graphdata.errors import GraphDataError, UnknownLabelError
from graphon._validation import check_int, check_real
from graphon.graphons import AnalyticGraphon, Graphon, StepGraphon

__all__ = ["GRAPHONS", "make_graphon", "erdos_renyi", "sbm"]


def erdos_renyi(p: float = 0.5) -> StepGraphon:
    r"""The constant graphon :math:`W \equiv p` (Erdős–Rényi), as a one-block step graphon.

    Args:
        p: The edge probability in :math:`[0, 1]`. Default ``0.5``.

    Returns:
        The step graphon (its homomorphism densities are exact).

    Examples:
        >>> erdos_renyi(0.3).probs.tolist()
        [[0.3]]
    """
    check_real("p", p, low=0.0, high=1.0, fix="pass an edge probability in [0, 1]")
    return StepGraphon(torch.tensor([[float(p)]], dtype=torch.float64), name=f"erdos_renyi({p:g})")


def sbm(num_blocks: int = 5, p: float = 0.8, q: float = 0.3) -> StepGraphon:
    r"""The assortative SBM with equal blocks: :math:`B = q\,J + (p - q)\,I`.

    Herbst & Jegelka's Appendix H uses 5 blocks, :math:`p = 0.8`, :math:`q = 0.3` (the defaults).

    Args:
        num_blocks: The number of equal blocks :math:`K`. Default ``5``.
        p: The within-block probability. Default ``0.8``.
        q: The between-block probability. Default ``0.3``.

    Returns:
        The step graphon.

    Examples:
        >>> sbm(2, 0.9, 0.1).probs.tolist()
        [[0.9, 0.1], [0.1, 0.9]]
    """
    check_int("num_blocks", num_blocks, 1)
    check_real("p", p, low=0.0, high=1.0, fix="pass a within-block probability in [0, 1]")
    check_real("q", q, low=0.0, high=1.0, fix="pass a between-block probability in [0, 1]")
    probs = torch.full((num_blocks, num_blocks), float(q), dtype=torch.float64)
    probs.fill_diagonal_(float(p))
    return StepGraphon(probs, name=f"sbm({num_blocks},{p:g},{q:g})")


def _analytic(
    name: str, fn: Callable[[Tensor, Tensor], Tensor], kinks: str = "none"
) -> Callable[[], Graphon]:
    # Declared, so that densities need not probe: "diagonal" for functions of max, min, |x - y|.
    return lambda: AnalyticGraphon(fn, name=name, kinks=kinks)


def _narrow(width: float = 0.05) -> Graphon:
    # The Higher-Order-WNNs code's "smooth_narrow": exp(-sin^2((x-y)^2 / width)).
    check_real("width", width, low=0.0, low_open=True, fix="pass a positive width, e.g. 0.05")
    return AnalyticGraphon(
        lambda x, y: torch.exp(-(torch.sin((x - y) ** 2 / width) ** 2)),
        name=f"narrow({width:g})",
        kinks="none",
    )


#: Visible name -> constructor (keyword parameters where the family has some).
GRAPHONS: dict[str, Callable[..., Graphon]] = {
    # Herbst & Jegelka, Appendix H and the Higher-Order-WNNs loader.
    "erdos_renyi": erdos_renyi,
    "sbm": sbm,
    "sum": _analytic("sum", lambda x, y: (x + y) / 2),
    "narrow": _narrow,
    "sine": _analytic(
        "sine", lambda x, y: (torch.sin(torch.pi * x) * torch.sin(torch.pi * y)).abs()
    ),
    # Cai & Wang's smooth graphon (u + v)/4 + 1/4.
    "affine": _analytic("affine", lambda x, y: (x + y) / 4 + 0.25),
    # A Lipschitz graphon with a kink on the diagonal (latent-distance model).
    "exp_abs_diff": _analytic("exp_abs_diff", lambda x, y: torch.exp(-(x - y).abs()), "diagonal"),
    # Chan & Airoldi (2014) / SGWB-Graphon test graphons.
    "product": _analytic("product", lambda x, y: x * y),
    "exp_power": _analytic("exp_power", lambda x, y: torch.exp(-(x**0.7 + y**0.7))),
    "poly_sqrt": _analytic("poly_sqrt", lambda x, y: (x**2 + y**2 + x.sqrt() + y.sqrt()) / 4),
    "logistic": _analytic("logistic", lambda x, y: torch.sigmoid(2 * (x**2 + y**2))),
    "abs_diff": _analytic("abs_diff", lambda x, y: (x - y).abs(), "diagonal"),
    "logistic_max_min": _analytic(
        "logistic_max_min",
        lambda x, y: torch.sigmoid(torch.maximum(x, y) ** 2 + torch.minimum(x, y) ** 4),
        "diagonal",
    ),
    "exp_max": _analytic(
        "exp_max", lambda x, y: torch.exp(-(torch.maximum(x, y) ** 0.75)), "diagonal"
    ),
    "exp_min_sqrt": _analytic(
        "exp_min_sqrt",
        lambda x, y: torch.exp(-(torch.minimum(x, y) + x.sqrt() + y.sqrt()) / 2),
        "diagonal",
    ),
    "log_max": _analytic("log_max", lambda x, y: torch.log1p(torch.maximum(x, y) / 2), "diagonal"),
}


def make_graphon(name: str, **params: float) -> Graphon:
    """Build the graphon ``name`` from :data:`GRAPHONS` with optional keyword parameters.

    Args:
        name: A key of :data:`GRAPHONS`.
        **params: Parameters of that family (``p`` for ``erdos_renyi``; ``num_blocks``, ``p``,
            ``q`` for ``sbm``; ``width`` for ``narrow``).

    Returns:
        The graphon.

    Raises:
        UnknownLabelError: If ``name`` is not a key; the message lists the closest names.

    Examples:
        >>> make_graphon("erdos_renyi", p=0.25).probs.item()
        0.25
    """
    if name not in GRAPHONS:
        raise UnknownLabelError("graphon", name, GRAPHONS, argument="name")
    family = GRAPHONS[name]
    accepted = list(inspect.signature(family).parameters)
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        takes = f"it takes {accepted}" if accepted else "it takes no parameters"
        raise GraphDataError(
            f"params: graphon {name!r} does not take {unknown}; {takes} (drop or rename them)"
        )
    return family(**params)
