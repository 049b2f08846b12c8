r"""Fidelity, characterization and sparsity of explanations of link predictions.

With :math:`G` the local graph, :math:`S` the explanation and :math:`G \setminus S` its
complement, over :math:`N` explained targets:

* **Probability fidelity** (Chang et al., "Path-based Explanation for Knowledge Graph
  Completion", KDD 2024, arXiv 2401.02290):
  :math:`\mathrm{fid}_+ = \frac1N \sum_i p_i(G) - p_i(G \setminus S)`,
  :math:`\mathrm{fid}_- = \frac1N \sum_i p_i(G) - p_i(S)`.
* **Model fidelity**, PyG's ``explanation_type="model"``
  (``torch_geometric/explain/metric/fidelity.py``; Amara et al., GraphFramEx, arXiv
  2206.09677): :math:`\mathrm{fid}_+ = 1 - \frac1N \sum_i \mathbb{1}[\hat y_i(G \setminus S) =
  \hat y_i(G)]`, :math:`\mathrm{fid}_- = 1 - \frac1N \sum_i \mathbb{1}[\hat y_i(S) = \hat
  y_i(G)]`, with :math:`\hat y = \mathbb{1}[p > \frac12]`.
* **Phenomenon fidelity** (``explanation_type="phenomenon"``, true labels :math:`y`):
  :math:`\mathrm{fid}_+ = \frac1N \sum_i |\mathbb{1}[\hat y_i(G) = y_i] - \mathbb{1}[\hat
  y_i(G \setminus S) = y_i]|`, :math:`\mathrm{fid}_-` likewise with :math:`S`.
* **Characterization** (GraphFramEx; PyG ``characterization_score``):
  :math:`\frac{w_+ + w_-}{w_+ / \mathrm{fid}_+ + w_- / (1 - \mathrm{fid}_-)}`,
  :math:`w_+ + w_- = 1`.
* **Sparsity** (Yuan et al., "Explainability in Graph Neural Networks: A Taxonomic Survey",
  arXiv 2012.15445): :math:`1 - |S| / |G|` in triples.
"""

from __future__ import annotations

import math

from torch import Tensor

from graphdata.errors import GraphDataError

__all__ = [
    "probability_fidelity",
    "model_fidelity",
    "phenomenon_fidelity",
    "characterization_score",
    "sparsity",
]


def _check_targets(p_full: Tensor) -> None:
    """Refuse fidelity over no targets: the mean of nothing is 0/0, never a result."""
    if p_full.numel() == 0:
        raise GraphDataError(
            "p_full: expected the probabilities of at least one explained target, got none; "
            "explain a target first"
        )


def probability_fidelity(
    p_full: Tensor, p_complement: Tensor, p_explanation: Tensor
) -> tuple[float, float]:
    r"""Probability fidelity :math:`(\mathrm{fid}_+, \mathrm{fid}_-)` (module docstring).

    Args:
        p_full: :math:`p(G)` per target.
        p_complement: :math:`p(G \setminus S)`.
        p_explanation: :math:`p(S)`.

    Returns:
        ``(fid_plus, fid_minus)``.

    Raises:
        GraphDataError: For no targets (``N = 0``: a mean over nothing has no value).

    Shapes:
        All inputs ``[N]``.

    Examples:
        >>> import torch
        >>> fid = probability_fidelity(torch.tensor([0.9, 0.8]), torch.tensor([0.2, 0.6]),
        ...                            torch.tensor([0.8, 0.8]))
        >>> [round(x, 6) for x in fid]
        [0.45, 0.05]
    """
    _check_targets(p_full)
    return float((p_full - p_complement).mean()), float((p_full - p_explanation).mean())


def model_fidelity(
    p_full: Tensor, p_complement: Tensor, p_explanation: Tensor
) -> tuple[float, float]:
    r"""PyG's model fidelity with :math:`\hat y = \mathbb{1}[p > \frac12]` (module docstring).

    Args:
        p_full: :math:`p(G)` per target.
        p_complement: :math:`p(G \setminus S)`.
        p_explanation: :math:`p(S)`.

    Returns:
        ``(fid_plus, fid_minus)``, each in :math:`[0, 1]`.

    Raises:
        GraphDataError: For no targets (``N = 0``: a mean over nothing has no value).

    Shapes:
        All inputs ``[N]``.

    Examples:
        >>> import torch
        >>> model_fidelity(torch.tensor([0.9, 0.8]), torch.tensor([0.2, 0.6]),
        ...                torch.tensor([0.8, 0.4]))
        (0.5, 0.5)
    """
    _check_targets(p_full)
    y = p_full > 0.5
    fid_plus = 1.0 - float(((p_complement > 0.5) == y).double().mean())
    fid_minus = 1.0 - float(((p_explanation > 0.5) == y).double().mean())
    return fid_plus, fid_minus


def phenomenon_fidelity(
    label: Tensor, p_full: Tensor, p_complement: Tensor, p_explanation: Tensor
) -> tuple[float, float]:
    r"""PyG's phenomenon fidelity against true labels (module docstring).

    Args:
        label: :math:`y`, the true label of each target (bool; ``True`` for a true triple).
        p_full: :math:`p(G)`.
        p_complement: :math:`p(G \setminus S)`.
        p_explanation: :math:`p(S)`.

    Returns:
        ``(fid_plus, fid_minus)``.

    Raises:
        GraphDataError: For no targets (``N = 0``: a mean over nothing has no value).

    Shapes:
        All inputs ``[N]``.

    Examples:
        >>> import torch
        >>> phenomenon_fidelity(torch.tensor([True, True]), torch.tensor([0.9, 0.4]),
        ...                     torch.tensor([0.2, 0.4]), torch.tensor([0.8, 0.7]))
        (0.5, 0.5)
    """
    _check_targets(p_full)
    label = label.bool()
    right = ((p_full > 0.5) == label).double()
    fid_plus = float((right - ((p_complement > 0.5) == label).double()).abs().mean())
    fid_minus = float((right - ((p_explanation > 0.5) == label).double()).abs().mean())
    return fid_plus, fid_minus


def characterization_score(
    fid_plus: float, fid_minus: float, *, pos_weight: float = 0.5, neg_weight: float = 0.5
) -> float:
    r"""The weighted harmonic mean of :math:`\mathrm{fid}_+` and :math:`1 - \mathrm{fid}_-`.

    .. math::
        \mathrm{charact} = \frac{w_+ + w_-}{w_+ / \mathrm{fid}_+ + w_- / (1 - \mathrm{fid}_-)}

    Args:
        fid_plus: :math:`\mathrm{fid}_+`.
        fid_minus: :math:`\mathrm{fid}_-`.
        pos_weight: :math:`w_+`. Default 0.5.
        neg_weight: :math:`w_-`. Default 0.5; the weights must sum to 1.

    Returns:
        The score; 0 when :math:`\mathrm{fid}_+ \le 0` or :math:`\mathrm{fid}_- \ge 1` (a
        harmonic mean with a zero term).

    Raises:
        GraphDataError: If the weights do not sum to 1, or a fidelity is NaN.

    Examples:
        >>> characterization_score(0.5, 0.5)
        0.5
        >>> round(characterization_score(0.8, 0.2, pos_weight=0.25, neg_weight=0.75), 6)
        0.8
    """
    if abs(pos_weight + neg_weight - 1.0) > 1e-9:
        raise GraphDataError(
            f"pos_weight + neg_weight: expected 1 (PyG checks the same), got {pos_weight} + "
            f"{neg_weight}"
        )
    for name, value in (("fid_plus", fid_plus), ("fid_minus", fid_minus)):
        if math.isnan(value):
            raise GraphDataError(
                f"{name}: expected a number, got nan (a NaN probability: the scores behind it "
                "are not finite); the characterization of NaN would be NaN, never a result"
            )
    if fid_plus <= 0 or fid_minus >= 1:
        return 0.0
    return (pos_weight + neg_weight) / (pos_weight / fid_plus + neg_weight / (1.0 - fid_minus))


def sparsity(num_explanation_triples: int, num_local_triples: int) -> float:
    r"""Sparsity :math:`1 - |S| / |G|` of one explanation, in triples.

    Args:
        num_explanation_triples: :math:`|S|`.
        num_local_triples: :math:`|G|`, at least :math:`|S|`.

    Returns:
        The sparsity; 1.0 for an empty local graph.

    Raises:
        GraphDataError: If :math:`|S| > |G|` or a count is negative.

    Examples:
        >>> sparsity(3, 12)
        0.75
    """
    if num_explanation_triples < 0 or num_local_triples < num_explanation_triples:
        raise GraphDataError(
            f"num_explanation_triples: expected 0 <= |S| <= |G| = {num_local_triples}, got "
            f"{num_explanation_triples}"
        )
    return 1.0 - num_explanation_triples / num_local_triples if num_local_triples else 1.0
