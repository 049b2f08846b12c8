"""kg.selection.race: the winner is the argmax of independent runs, its run is the single-model
run, a killed race resumes to the same result, and bad settings are refused."""

from __future__ import annotations

import json

import pytest
import torch

from graphdata.errors import GraphDataError
from graphdata.tracking import Tracker
from graphdata.triples import KGDataset
from kg.config import TrainingConfig
from kg.selection import RACE_MODELS, race, race_epochs
from kg.training import Trainer, TrainingDivergedError, build_model

#: Small runs: R = eval_every * patience = 6 epochs of a 16-epoch cap.
SMALL = {"epochs": 16, "eval_every": 2, "patience": 3, "batch_size": 64, "progress": False}


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _chains() -> KGDataset:
    """Directed chains of one relation and a star: valid and test hold middle links, whose
    ends also occur in training links."""
    train, valid, test = [], [], []
    for chain in range(12):
        nodes = [f"c{chain}n{i}" for i in range(7)]
        links = [(a, "next", b) for a, b in zip(nodes, nodes[1:], strict=False)]
        held = valid if chain % 2 else test
        held.append(links.pop(3))
        train += links + [(nodes[0], "starts", nodes[i]) for i in (1, 2)]
    return KGDataset.from_labeled(train, valid, test)


def _alone(name: str, dataset: KGDataset, **overrides) -> Trainer:
    config = TrainingConfig.from_defaults(name, **{**SMALL, **overrides})
    return Trainer(build_model(name, dataset, config, dim=16), config).fit(dataset)


def test_race_epochs_is_eval_every_times_patience_capped_by_epochs():
    assert race_epochs(TrainingConfig(epochs=200, eval_every=2, patience=10)) == 20
    assert race_epochs(TrainingConfig(epochs=7, eval_every=2, patience=10)) == 7
    assert race_epochs(TrainingConfig(epochs=50, eval_every=3, patience=None)) == 50
    with pytest.raises(GraphDataError, match=r"eval_every \(--eval-every\).*got eval_every=0"):
        race_epochs(TrainingConfig(eval_every=0))


@pytest.mark.parametrize("candidates", [("distmult", "complex"), ("complex", "distmult")])
def test_the_winner_is_the_best_validation_of_independent_runs_and_its_run_is_the_single_run(
    candidates, tmp_path
):
    dataset = _chains()
    result = race(dataset, candidates=candidates, dim=16, overrides=SMALL, folder=tmp_path)
    # oracle 1: each candidate's race equals a run of that model capped at R epochs
    for name in candidates:
        capped = _alone(name, dataset, epochs=result.race_epochs)
        assert result.candidates[name]["best_valid_mrr"] == capped.best_valid_mrr_
        assert result.candidates[name]["best_epoch"] == capped.best_epoch_
    best = max(result.candidates.values(), key=lambda info: info["best_valid_mrr"])
    assert result.candidates[result.winner] is best
    # oracle 2: the winner's continued run is the run of --model winner, epoch for epoch
    alone = _alone(result.winner, dataset)
    strip = [{k: v for k, v in h.items() if k != "seconds"} for h in alone.history_]
    assert [{k: v for k, v in h.items() if k != "seconds"} for h in result.trainer.history_] == (
        strip
    )
    for key, value in alone.model_.state_dict().items():
        assert torch.equal(result.trainer.model_.state_dict()[key], value), key
    # files: the race record, the winner's checkpoint and log; no race checkpoint is left
    record = json.loads((tmp_path / "race.json").read_text())
    assert record["winner"] == result.winner and record["race_epochs"] == result.race_epochs
    assert (tmp_path / "checkpoint.pt").is_file() and (tmp_path / "metrics.jsonl").is_file()
    assert not list(tmp_path.glob("race_*.pt"))
    assert {p.name for p in tmp_path.glob("race_*.jsonl")} == {
        f"race_{n}.jsonl" for n in candidates
    }
    lines = (tmp_path / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["epoch"] for line in lines] == [h["epoch"] for h in alone.history_]


def test_without_a_folder_the_race_leaves_no_paths_behind():
    result = race(_chains(), dim=16, overrides=SMALL)
    assert result.trainer.config.checkpoint_path is None
    assert result.trainer.config.log_path is None
    assert result.winner in RACE_MODELS
    assert "continued " + result.winner in result.summary()


class _StopAt(Tracker):
    """A tracker that records what it is given and raises at one epoch (kills the run there)."""

    def __init__(self, epoch: int) -> None:
        self.epoch = epoch
        self.params: dict = {}
        self.steps: list[int] = []

    def log_params(self, params) -> None:
        self.params.update(params)

    def log_metrics(self, metrics, *, step: int) -> None:
        self.steps.append(step)
        if step == self.epoch:
            raise KeyboardInterrupt

    def close(self) -> None:
        self.params.clear()


def test_a_killed_race_resumes_to_the_uninterrupted_result(tmp_path):
    dataset = _chains()
    whole = race(dataset, dim=16, overrides=SMALL, folder=tmp_path / "whole")

    def die_at_second(line: str) -> None:
        if line.startswith(f"race: training {RACE_MODELS[1]}"):
            raise KeyboardInterrupt

    # killed between the candidates
    folder = tmp_path / "between"
    with pytest.raises(KeyboardInterrupt):
        race(dataset, dim=16, overrides=SMALL, folder=folder, announce=die_at_second)
    assert (folder / f"race_{RACE_MODELS[0]}.pt").is_file() and not (folder / "race.json").exists()
    resumed = race(dataset, dim=16, overrides=SMALL, folder=folder, resume=True)
    # killed in the winner's continuation, after the race was decided
    folder2 = tmp_path / "continuation"
    with pytest.raises(KeyboardInterrupt):
        kill = _StopAt(whole.race_epochs + 1)
        race(dataset, dim=16, overrides=SMALL, folder=folder2, tracker=kill)
    # the tracker logs the winner's continued epochs only, the race's are in race.json
    assert kill.params["model"] == whole.winner
    assert kill.steps == [whole.race_epochs + 1]
    assert (folder2 / "race.json").is_file() and (folder2 / "checkpoint.pt").is_file()
    resumed2 = race(dataset, dim=16, overrides=SMALL, folder=folder2, resume=True)
    for result in (resumed, resumed2):
        assert result.winner == whole.winner and result.candidates == whole.candidates
        for key, value in whole.trainer.model_.state_dict().items():
            assert torch.equal(result.trainer.model_.state_dict()[key], value), key


def test_a_race_where_every_candidate_diverges_raises():
    dataset = _chains()
    with pytest.raises(TrainingDivergedError, match="every candidate of the race diverged"):
        race(dataset, dim=16, overrides={**SMALL, "lr": 1e30, "optimizer": "sgd"})


def test_bad_settings_are_refused_with_the_fix(tmp_path):
    dataset = _chains()
    with pytest.raises(GraphDataError, match="two or more distinct names"):
        race(dataset, candidates=("complex",))
    with pytest.raises(GraphDataError, match="two or more distinct names"):
        race(dataset, candidates=("complex", "bert"))
    with pytest.raises(GraphDataError, match=r"sets \['checkpoint_path'\] itself"):
        race(dataset, overrides={"checkpoint_path": "x.pt"})
    with pytest.raises(GraphDataError, match="resume: True needs folder"):
        race(dataset, resume=True)
    with pytest.raises(GraphDataError, match="eval_every=0"):
        race(dataset, overrides={**SMALL, "eval_every": 0})
    # a single-model run in the folder is not resumed as a race
    config = TrainingConfig.from_defaults(
        "complex", **SMALL, checkpoint_path=str(tmp_path / "checkpoint.pt")
    )
    Trainer(build_model("complex", dataset, config, dim=16), config).fit(dataset)
    with pytest.raises(GraphDataError, match="run of one model, not a race"):
        race(dataset, dim=16, overrides=SMALL, folder=tmp_path, resume=True)


def test_the_winner_checkpoint_is_written_through_a_symlink(tmp_path):
    elsewhere = tmp_path / "store" / "winner.pt"
    elsewhere.parent.mkdir()
    elsewhere.write_bytes(b"old")
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "checkpoint.pt").symlink_to(elsewhere)
    result = race(_chains(), dim=16, overrides=SMALL, folder=folder)
    assert (folder / "checkpoint.pt").is_symlink()
    saved = torch.load(elsewhere, weights_only=True)
    assert saved["model"]["name"] == result.winner
    assert saved["training"]["epoch"] == result.trainer.epochs_trained_


def test_a_race_json_that_cannot_be_read_is_refused_with_the_fix(tmp_path):
    dataset = _chains()
    race(dataset, dim=16, overrides=SMALL, folder=tmp_path)
    record = tmp_path / "race.json"
    decided = json.loads(record.read_text())
    loser = next(name for name in RACE_MODELS if name != decided["winner"])
    broken = {
        "not JSON": '{"race_epochs": 6, "winner": "compl',
        "a list": "[1, 2]",
        "no race_epochs": json.dumps({k: v for k, v in decided.items() if k != "race_epochs"}),
        "a diverged winner": json.dumps(
            {
                **decided,
                "candidates": {
                    **decided["candidates"],
                    decided["winner"]: {
                        **decided["candidates"][decided["winner"]],
                        "diverged": "loss became nan",
                    },
                },
            }
        ),
        "a candidate without its MRR": json.dumps(
            {
                **decided,
                "candidates": {
                    **decided["candidates"],
                    loser: {**decided["candidates"][loser], "best_valid_mrr": None},
                },
            }
        ),
    }
    for what, text in broken.items():
        record.write_text(text)
        with pytest.raises(GraphDataError, match=r"race\.json.*pass --overwrite") as caught:
            race(dataset, dim=16, overrides=SMALL, folder=tmp_path, resume=True)
        assert str(record) in str(caught.value), what


def test_an_empty_valid_split_is_refused_before_any_training(tmp_path):
    train = [(f"n{i}", "next", f"n{i + 1}") for i in range(10)]
    dataset = KGDataset.from_labeled(train, [], train[:3])
    with pytest.raises(GraphDataError, match=r"empty valid split.*--eval-every 0"):
        race(dataset, dim=16, overrides=SMALL, folder=tmp_path / "race")
    assert not list((tmp_path / "race").glob("*"))
    config = TrainingConfig.from_defaults("distmult", **SMALL)
    with pytest.raises(GraphDataError, match=r"eval_every: .*empty valid split.*eval_every=0"):
        Trainer(build_model("distmult", dataset, config, dim=16), config).fit(dataset)


def test_a_resumed_race_keeps_the_horizon_it_started_with(tmp_path):
    dataset = _chains()
    whole = race(dataset, dim=16, overrides=SMALL, folder=tmp_path / "whole")

    def die_at_second(line: str) -> None:
        if line.startswith(f"race: training {RACE_MODELS[1]}"):
            raise KeyboardInterrupt

    folder = tmp_path / "killed"
    with pytest.raises(KeyboardInterrupt):
        race(dataset, dim=16, overrides=SMALL, folder=folder, announce=die_at_second)
    # resumed with a lower epoch cap, which alone would make R = 4: the race stays at 6
    lines: list[str] = []
    fewer = {**SMALL, "epochs": 4}
    resumed = race(
        dataset, dim=16, overrides=fewer, folder=folder, resume=True, announce=lines.append
    )
    assert resumed.race_epochs == whole.race_epochs == 6
    assert resumed.candidates == whole.candidates
    assert f"race: training {RACE_MODELS[1]} for 6 epochs" in lines
    assert any("resuming the race over 6 epochs" in line for line in lines)


def test_a_symlinked_race_checkpoint_is_removed_at_its_target_and_the_link_kept(tmp_path):
    # The race writes race_<name>.pt through a link, so the bytes live at the link's target;
    # removing only the link (the old unlink) left that checkpoint orphaned at the target.
    store, folder = tmp_path / "store", tmp_path / "run"
    store.mkdir()
    folder.mkdir()
    for name in RACE_MODELS:
        (folder / f"race_{name}.pt").symlink_to(store / f"{name}.pt")  # dangling until written
    result = race(_chains(), dim=16, overrides=SMALL, folder=folder)
    assert sorted(p.name for p in store.iterdir()) == []  # no orphaned race checkpoint
    for name in RACE_MODELS:
        link = folder / f"race_{name}.pt"
        assert link.is_symlink() and link.readlink() == store / f"{name}.pt"  # the user's link
        assert not link.exists()
    saved = torch.load(folder / "checkpoint.pt", weights_only=True)
    assert saved["model"]["name"] == result.winner
