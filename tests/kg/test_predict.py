import pytest
import torch

from graphdata.errors import GraphDataError, UnknownLabelError
from graphdata.triples import KGDataset
from kg.distmult import DistMult
from kg.prediction import load_model, predict_tails
from kg.training import TrainingConfig, train

ENTITIES = ["ann", "bob", "cy", "dee"]


def _model() -> DistMult:
    model = DistMult(4, 1, dim=2)
    with torch.no_grad():
        model.entity.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0], [3.0, 0.0], [2.0, 0.0]]))
        model.relation.weight.fill_(1.0)
    return model


def test_top_k_tails_by_score_with_labels():
    # score(ann, r, e) = <e_ann, 1, e_e> = first coordinate of e: cy 3, dee 2, ann 1, bob 0
    got = predict_tails(_model(), "ann", "r", entity_labels=ENTITIES, relation_labels=["r"])
    assert got == [("cy", 3.0), ("dee", 2.0), ("ann", 1.0), ("bob", 0.0)]
    top = predict_tails(
        _model(), "ann", "r", entity_labels=ENTITIES, relation_labels=["r"], top_k=2
    )
    assert [label for label, _ in top] == ["cy", "dee"]


def test_ties_keep_lower_id_first():
    model = _model()
    with torch.no_grad():
        model.entity.weight[3] = model.entity.weight[2]  # cy and dee tie
    got = predict_tails(model, "ann", "r", entity_labels=ENTITIES, relation_labels=["r"], top_k=2)
    assert [label for label, _ in got] == ["cy", "dee"]


def test_unknown_labels_and_bad_top_k():
    with pytest.raises(UnknownLabelError, match=r"head: unknown entity label 'an'.*'ann'"):
        predict_tails(_model(), "an", "r", entity_labels=ENTITIES, relation_labels=["r"])
    with pytest.raises(UnknownLabelError, match=r"relation: unknown relation label 'x'"):
        predict_tails(_model(), "ann", "x", entity_labels=ENTITIES, relation_labels=["r"])
    with pytest.raises(GraphDataError, match="top_k: expected a positive int"):
        predict_tails(_model(), "ann", "r", entity_labels=ENTITIES, relation_labels=["r"], top_k=0)


def test_load_model_returns_the_best_validation_state(tmp_path):
    rows = [(f"e{i}", "r", f"e{(i + 1) % 6}") for i in range(6)]
    ds = KGDataset.from_labeled(rows, rows[:3], rows[3:])
    cfg = TrainingConfig(
        regime="1vsall",
        epochs=6,
        batch_size=4,
        lr=0.05,
        eval_every=1,
        patience=None,
        progress=False,
        checkpoint_path=str(tmp_path / "c.pt"),
    )
    trainer = train(DistMult(6, 1, dim=4), ds, cfg)
    model, ckpt = load_model(tmp_path / "c.pt")
    assert not model.training and ckpt["training"]["epoch"] == 6
    # the trainer restored its best epoch; the loaded model is the same
    for (name, a), b in zip(trainer.model_.state_dict().items(), model.state_dict().values()):
        assert torch.equal(a, b), name


def test_load_model_leaves_the_global_rng_untouched(tmp_path):
    # The constructor's random initialisation, overwritten by the stored state, used to draw
    # from the caller's global torch RNG: the draw after loading changed with the loading.
    rows = [(f"e{i}", "r", f"e{(i + 1) % 6}") for i in range(6)]
    ds = KGDataset.from_labeled(rows, rows[:3], rows[3:])
    cfg = TrainingConfig(
        regime="1vsall", epochs=1, batch_size=4, eval_every=0, progress=False,
        checkpoint_path=str(tmp_path / "c.pt"),
    )  # fmt: skip
    train(DistMult(6, 1, dim=4), ds, cfg)
    torch.manual_seed(3)
    expected = torch.rand(4)
    torch.manual_seed(3)
    load_model(tmp_path / "c.pt")
    assert torch.equal(torch.rand(4), expected)  # oracle: the same seed, nothing drawn between
