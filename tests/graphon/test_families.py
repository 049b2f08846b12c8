import pytest
import torch

from graphdata.errors import GraphDataError, UnknownLabelError
from graphon.families import GRAPHONS, erdos_renyi, make_graphon, sbm
from graphon.graphons import StepGraphon


@pytest.mark.parametrize("name", list(GRAPHONS))
def test_every_family_is_a_valid_symmetric_graphon(name):
    w = make_graphon(name)
    x = torch.rand(300, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    m = w.matrix(x)
    assert float(m.min()) >= 0 and float(m.max()) <= 1
    assert torch.allclose(m, m.T)


def test_closed_forms_of_named_families():
    x = torch.tensor([0.2, 0.6], dtype=torch.float64)
    y = torch.tensor([0.6, 0.6], dtype=torch.float64)
    assert make_graphon("product")(x, y).tolist() == pytest.approx([0.12, 0.36])
    assert make_graphon("sum")(x, y).tolist() == pytest.approx([0.4, 0.6])
    assert make_graphon("affine")(x, y).tolist() == pytest.approx([0.45, 0.55])
    narrow = make_graphon("narrow")(x, y)
    assert narrow.tolist() == pytest.approx(
        torch.exp(-(torch.sin((x - y) ** 2 / 0.05) ** 2)).tolist()
    )
    assert make_graphon("exp_abs_diff")(x, y).tolist() == pytest.approx([0.670320046, 1.0])


def test_step_families():
    assert isinstance(erdos_renyi(0.2), StepGraphon)
    hj = sbm()  # Herbst & Jegelka: 5 blocks, 0.8 / 0.3
    assert hj.num_blocks == 5 and float(hj.probs[0, 0]) == 0.8 and float(hj.probs[0, 1]) == 0.3
    assert make_graphon("sbm", num_blocks=2, p=0.5, q=0.1).probs.tolist() == [
        [0.5, 0.1],
        [0.1, 0.5],
    ]


def test_bad_family_requests():
    with pytest.raises(UnknownLabelError, match="erdos_renyi"):
        make_graphon("erdos_reny")
    with pytest.raises(GraphDataError, match="does not take"):
        make_graphon("sum", p=0.3)
    with pytest.raises(GraphDataError, match="probability"):
        erdos_renyi(1.5)


def test_an_unknown_parameter_is_named_with_the_accepted_ones():
    with pytest.raises(GraphDataError, match=r"does not take \['foo'\]; it takes \['num_blocks'"):
        make_graphon("sbm", foo=1)
    with pytest.raises(GraphDataError, match="it takes no parameters"):
        make_graphon("product", p=0.3)
