"""The model hooks the explainer uses: triple_representation, project_rows and nssa_margin.

Each model writes them in its own file (issue #16); a model without a triple representation is
refused with a clear error instead of a silent fallback to its score.
"""

import pytest
import torch
from torch import Tensor

from graphdata.errors import GraphDataError
from kg.base import KGEModel
from kg.models import MODELS
from kg.transe import TransE

#: Models whose score is the sum of the representation (DistMult-like) or margin minus it (RotatE)
#: or minus its norm (TransE); TuckER and ConvE represent a triple by its score alone.
SUMS = {"distmult": 1.0, "complex": 1.0, "rescal": 1.0}


def _triples() -> tuple[Tensor, Tensor, Tensor]:
    return torch.tensor([0, 1, 2]), torch.tensor([0, 1, 0]), torch.tensor([3, 0, 1])


@pytest.mark.parametrize("name", sorted(MODELS))
def test_triple_representation_is_per_triple_and_matches_the_score(name: str) -> None:
    torch.manual_seed(0)
    kwargs = {"embedding_height": 2} if name == "conve" else {}
    model = MODELS[name](4, 2, 12, **kwargs).eval()
    h, r, t = _triples()
    with torch.no_grad():
        rep, score = model.triple_representation(h, r, t), model(h, r, t)
    assert rep.dim() == 2 and rep.size(0) == 3
    if name in SUMS:
        torch.testing.assert_close(rep.sum(-1), score)
    elif name == "transe":
        torch.testing.assert_close(-rep.norm(p=model.p, dim=-1), score)
    elif name == "rotate":
        torch.testing.assert_close(model.margin - rep.sum(-1), score)
    else:
        torch.testing.assert_close(rep, score.unsqueeze(-1))


def test_a_model_without_a_representation_is_refused() -> None:
    class Bare(KGEModel):
        name = "bare"

        def reset_parameters(self) -> None:
            """Nothing to initialise."""

        def forward(self, head_index: Tensor, rel_type: Tensor, tail_index: Tensor) -> Tensor:
            return head_index.float()

        def score_tails(
            self, head_index: Tensor, rel_type: Tensor, entities: object = None
        ) -> Tensor:
            return head_index.float()[:, None]

        score_heads = score_tails

    with pytest.raises(GraphDataError, match="defines no triple_representation.*model's file"):
        Bare(2, 1, 2).triple_representation(*_triples())


def test_transe_projects_entity_rows_onto_the_sphere_and_leaves_others() -> None:
    rows = torch.tensor([[3.0, 4.0], [0.0, 2.0]])
    projected = TransE(2, 1, 2).project_rows("entity.weight", rows)
    torch.testing.assert_close(projected, torch.tensor([[0.6, 0.8], [0.0, 1.0]]))
    assert torch.equal(TransE(2, 1, 2).project_rows("bias", rows), rows)
    assert torch.equal(MODELS["distmult"](2, 1, 2).project_rows("entity.weight", rows), rows)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_nssa_margin_is_the_models_training_default(name: str) -> None:
    from kg.explain.local import local_structure
    from kg.explain.retrain import RetrainScorer
    from kg.models import DEFAULTS

    defaults = DEFAULTS[name]
    expected = defaults.margin if defaults.loss == "nssa" else 0.0
    kwargs = {"embedding_height": 2} if name == "conve" else {}
    model = MODELS[name](4, 2, 12, **kwargs)
    assert model.nssa_margin == expected
    local = local_structure(torch.tensor([[0, 2], [2, 1]]), torch.tensor([0, 1]), (0, 1, 1), hops=1)
    assert RetrainScorer(model, local).margin == expected


def test_a_new_model_retrains_with_its_own_margin() -> None:
    from kg.explain.local import local_structure
    from kg.explain.retrain import RetrainScorer

    class Shifted(TransE):
        name = "shifted"  # not in kg.models: nothing looks it up by name
        nssa_margin = 4.0

    local = local_structure(torch.tensor([[0, 2], [2, 1]]), torch.tensor([0, 1]), (0, 1, 1), hops=1)
    assert RetrainScorer(Shifted(4, 2, 6), local).margin == 4.0
    assert KGEModel.nssa_margin == 0.0
