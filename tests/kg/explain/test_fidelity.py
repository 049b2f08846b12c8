import math

import pytest
import torch
from torch_geometric.explain.metric import characterization_score as pyg_characterization

from graphdata.errors import GraphDataError
from kg.explain.fidelity import (
    characterization_score,
    model_fidelity,
    phenomenon_fidelity,
    probability_fidelity,
    sparsity,
)

# Three targets, probabilities written out by hand.
P_FULL = torch.tensor([0.9, 0.7, 0.4])
P_COMPLEMENT = torch.tensor([0.3, 0.8, 0.1])
P_EXPLANATION = torch.tensor([0.6, 0.2, 0.45])


def test_probability_fidelity_by_hand():
    fid_plus, fid_minus = probability_fidelity(P_FULL, P_COMPLEMENT, P_EXPLANATION)
    assert fid_plus == pytest.approx(((0.9 - 0.3) + (0.7 - 0.8) + (0.4 - 0.1)) / 3)
    assert fid_minus == pytest.approx(((0.9 - 0.6) + (0.7 - 0.2) + (0.4 - 0.45)) / 3)


def test_model_fidelity_by_hand():
    # y(G) = [1, 1, 0]; y(G \ S) = [0, 1, 0] -> one change; y(S) = [1, 0, 0] -> one change.
    assert model_fidelity(P_FULL, P_COMPLEMENT, P_EXPLANATION) == pytest.approx((1 / 3, 1 / 3))


def test_phenomenon_fidelity_by_hand():
    label = torch.tensor([True, True, True])
    # correct(G) = [1, 1, 0], correct(G \ S) = [0, 1, 0], correct(S) = [1, 0, 0]
    fid = phenomenon_fidelity(label, P_FULL, P_COMPLEMENT, P_EXPLANATION)
    assert fid == pytest.approx((1 / 3, 1 / 3))


@pytest.mark.parametrize(
    ("fid_plus", "fid_minus", "w"), [(0.6, 0.2, 0.5), (0.9, 0.5, 0.3), (0.1, 0.0, 0.8)]
)
def test_characterization_matches_pyg_and_formula(fid_plus, fid_minus, w):
    ours = characterization_score(fid_plus, fid_minus, pos_weight=w, neg_weight=1 - w)
    expected = 1.0 / (w / fid_plus + (1 - w) / (1 - fid_minus))
    assert ours == pytest.approx(expected)
    pyg = pyg_characterization(torch.tensor([fid_plus]), torch.tensor([fid_minus]), w, 1 - w)
    assert ours == pytest.approx(float(pyg), rel=1e-6)


def test_characterization_edges_and_weights():
    assert characterization_score(0.0, 0.1) == 0.0
    assert characterization_score(0.5, 1.0) == 0.0
    with pytest.raises(GraphDataError, match="fid_plus: expected a number, got nan"):
        characterization_score(math.nan, 0.1)  # was NaN: never a result
    with pytest.raises(GraphDataError, match="pos_weight \\+ neg_weight: expected 1"):
        characterization_score(0.5, 0.5, pos_weight=0.5, neg_weight=0.6)


def test_sparsity():
    assert sparsity(2, 8) == 0.75
    assert sparsity(0, 0) == 1.0
    with pytest.raises(GraphDataError, match=r"expected 0 <= \|S\| <= \|G\| = 3"):
        sparsity(4, 3)


def test_empty_inputs_are_refused():
    # The mean over no targets was returned as NaN; it has no value and is refused.
    empty = torch.zeros(0)
    for fidelity in (probability_fidelity, model_fidelity):
        with pytest.raises(GraphDataError, match="p_full: expected .* at least one"):
            fidelity(empty, empty, empty)
    with pytest.raises(GraphDataError, match="p_full: expected .* at least one"):
        phenomenon_fidelity(empty.bool(), empty, empty, empty)
