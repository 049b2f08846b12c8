"""Fault injection for checkpoints and saved evaluators: flipped bytes, crafted sizes and shapes,
foreign and truncated files, full disks, stale temporary files (issue #15, "Files")."""

from __future__ import annotations

import errno
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import graphdata.atomic
from graphdata.errors import GraphDataError
from graphdata.triples import KGDataset
from kg.checkpoint import (
    capture_rng_state,
    load_checkpoint,
    save_checkpoint,
    serialize_with_checksum,
    tensor_checksum,
)
from kg.distmult import DistMult
from kg.explain.evaluator import DistilledEvaluator, EvaluatorConfig
from kg.explain.evaluator.io import load_evaluator, save_evaluator
from kg.explain.evaluator.training import build_network
from kg.models import MODELS
from kg.prediction import load_model, predict_tails
from kg.training import Trainer, TrainingConfig, build_model

E, R, DIM = 20, 3, 16


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _payload(model: torch.nn.Module | None = None, **training) -> dict:
    """A checkpoint dictionary in the layout the trainer writes."""
    model = model or DistMult(E, R, dim=DIM)
    return {
        "model": {"name": "distmult", "config": model.config, "state": model.state_dict()},
        "training": {
            "config": {"reciprocal": False, "restore_best": True, **training},
            "epoch": 1,
            "history": [],
        },
        "optimizer": {},
        "rng": capture_rng_state(),
        "vocabulary": {"entities": [f"e{i}" for i in range(E)], "relations": ["r0", "r1", "r2"]},
        "dataset_fingerprint": "0" * 64,
        "dataset_name": "crafted",
    }


def _largest_record(path: Path) -> tuple[int, int]:
    """Offset and size of the largest tensor record inside a torch zip file."""
    with zipfile.ZipFile(path) as archive:
        info = max(
            (i for i in archive.infolist() if "/data/" in i.filename), key=lambda i: i.file_size
        )
    assert info.compress_type == zipfile.ZIP_STORED  # torch stores tensor bytes as they are
    with open(path, "rb") as handle:
        handle.seek(info.header_offset)
        header = handle.read(30)
    name_length, extra_length = struct.unpack("<HH", header[26:30])
    return info.header_offset + 30 + name_length + extra_length, info.file_size


def _flip(path: Path, offset: int, count: int) -> None:
    data = bytearray(path.read_bytes())
    for i in range(offset, offset + count):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


# ---- checksums ------------------------------------------------------------------------------


def test_flipped_bytes_in_a_checkpoint_are_refused(tmp_path):
    path = save_checkpoint(tmp_path / "ckpt.pt", _payload())
    assert load_checkpoint(path)["checksum"]["algorithm"] == "sha256-tensors"
    start, size = _largest_record(path)
    _flip(path, start + size // 2, 16)
    with pytest.raises(GraphDataError, match=r"ckpt\.pt' is corrupt: its tensors hash to"):
        load_checkpoint(path)
    with pytest.raises(GraphDataError, match="is corrupt"):
        load_model(path)


@given(st.floats(0.0, 1.0, exclude_max=True))
@settings(max_examples=25, deadline=None)
def test_any_single_flipped_tensor_byte_is_refused(tmp_path_factory, where):
    path = save_checkpoint(tmp_path_factory.mktemp("flip") / "ckpt.pt", _payload())
    start, size = _largest_record(path)
    _flip(path, start + int(where * size), 1)
    with pytest.raises(GraphDataError, match="is corrupt"):
        load_checkpoint(path)


def test_checksum_sees_values_shapes_dtypes_and_keys():
    base = {"a": torch.arange(6.0)}
    assert tensor_checksum(base) == tensor_checksum({"a": torch.arange(6.0)})
    for other in (
        {"a": torch.arange(6.0).flip(0)},
        {"a": torch.arange(6.0).reshape(2, 3)},
        {"a": torch.arange(6.0).double()},
        {"b": torch.arange(6.0)},
    ):
        assert tensor_checksum(other) != tensor_checksum(base)
    # Not the memory layout: a transposed view hashes as its contiguous copy.
    t = torch.arange(6.0).reshape(2, 3)
    assert tensor_checksum({"a": t.t()}) == tensor_checksum({"a": t.t().contiguous()})


def test_old_checkpoint_without_checksum_loads_with_a_warning(tmp_path):
    path = save_checkpoint(tmp_path / "ckpt.pt", _payload())
    data = torch.load(path, weights_only=True)
    del data["checksum"]
    torch.save(data, path)  # as graphlib wrote it before checksums
    with pytest.warns(UserWarning, match="carries no checksum .* save it again to add one"):
        model, _ = load_model(path)
    assert torch.equal(model.entity.weight, data["model"]["state"]["entity.weight"])
    save_checkpoint(path, data)  # re-saving adds one
    assert "checksum" in torch.load(path, weights_only=True)


@pytest.mark.parametrize("entry", ["not a dict", {"algorithm": "md5", "digest": "x"}, {}])
def test_malformed_checksum_entry_is_refused(tmp_path, entry):
    path = save_checkpoint(tmp_path / "ckpt.pt", _payload())
    data = torch.load(path, weights_only=True)
    data["checksum"] = entry
    torch.save(data, path)
    with pytest.raises(GraphDataError, match="malformed checksum entry"):
        load_checkpoint(path)


def test_a_folder_at_the_checkpoint_path_is_named(tmp_path):
    (tmp_path / "checkpoint.pt").mkdir()
    with pytest.raises(GraphDataError, match=r"expected a checkpoint file, got the folder"):
        load_checkpoint(tmp_path / "checkpoint.pt")
    with pytest.raises(IsADirectoryError, match="existing folder"):
        save_checkpoint(tmp_path / "checkpoint.pt", _payload())
    assert (tmp_path / "checkpoint.pt").is_dir()


# ---- crafted sizes: refused before anything is allocated ------------------------------------


@pytest.fixture
def constructions(monkeypatch):
    """Record the default device of every DistMult construction in kg.prediction.load_model."""
    devices: list[str] = []

    class Spy(DistMult):
        def __init__(self, *args, **kwargs):
            devices.append(torch.empty(0).device.type)
            super().__init__(*args, **kwargs)

    monkeypatch.setitem(MODELS, "distmult", Spy)
    return devices


def _crafted(tmp_path: Path, change) -> Path:
    payload = _payload()
    change(payload)
    return save_checkpoint(tmp_path / "crafted.pt", payload)  # a valid checksum: crafted


def test_a_sound_checkpoint_builds_once_on_meta_then_for_real(tmp_path, constructions):
    path = save_checkpoint(tmp_path / "ckpt.pt", _payload())
    model, ckpt = load_model(path)
    assert constructions == ["meta", "cpu"]
    state = ckpt["model"]["state"]
    assert all(torch.equal(model.state_dict()[k], v) for k, v in state.items())


CRAFTED = {
    "absurd dim": (
        lambda p: p["model"]["config"].update(dim=10**9),
        # refused by this loader's limit or the constructor's own memory check
        r"(parameters would take 74\.5 GiB, expected at most 16 GiB|needs about .* GiB)",
    ),
    "dim off by one": (
        lambda p: p["model"]["config"].update(dim=DIM + 1),
        r"entity\.weight has shape \[20, 16\], its config implies \[20, 17\]",
    ),
    "short vocabulary": (
        lambda p: p["vocabulary"]["entities"].pop(),
        r"a model of 20 entities and 3 relations, expected 19 and 3 from its vocabulary",
    ),
    "reciprocal relations": (
        lambda p: p["training"]["config"].update(reciprocal=True),
        r"expected 20 and 6 \(reciprocal training: twice the relation labels\)",
    ),
    "wrong state shape": (
        lambda p: p["model"]["state"].update({"relation.weight": torch.zeros(R, 8)}),
        r"relation\.weight has shape \[3, 8\], its config implies \[3, 16\]",
    ),
    "missing state key": (
        lambda p: p["model"]["state"].pop("relation.weight"),
        r"missing keys \['relation\.weight'\], unexpected keys \[\]",
    ),
    "best state shape": (
        lambda p: p["training"].update(best_state={"entity.weight": torch.zeros(E, 2)}),
        r"entry training\.best_state does not match its config",
    ),
    "unknown config key": (
        lambda p: p["model"]["config"].update(heads=4),
        r"config .* that does not build a model",
    ),
    "negative dim": (
        lambda p: p["model"]["config"].update(dim=-1),
        r"dim: expected a positive int, got -1",
    ),
    "unknown model": (lambda p: p["model"].update(name="gpt"), r"model 'gpt' is not one of"),
    "config not a dict": (
        lambda p: p["model"].update(config=[1, 2]),
        r"expected a dict of distmult constructor arguments",
    ),
    "no vocabulary": (lambda p: p.pop("vocabulary"), r"has no 'vocabulary'"),
    "diverged state": (
        lambda p: p["model"]["state"]["entity.weight"].__setitem__((0, 0), float("nan")),
        r"entity\.weight holds 1 NaN or infinite value\(s\) of 320; the run diverged",
    ),
}


@pytest.mark.parametrize("case", sorted(CRAFTED))
def test_crafted_checkpoints_are_refused_before_allocation(tmp_path, constructions, case):
    change, match = CRAFTED[case]
    path = _crafted(tmp_path, change)
    with pytest.raises(GraphDataError, match=match):
        load_model(path)
    assert "cpu" not in constructions  # at most the shape-only skeleton on the meta device


@pytest.mark.parametrize("name", sorted(MODELS))
def test_real_checkpoints_of_every_model_pass_the_checks(tmp_path, name):
    rows = [(f"e{i}", f"r{i % 2}", f"e{(i + 1) % 8}") for i in range(8)]
    ds = KGDataset.from_labeled(rows, rows[:2], rows[2:4], name="ring")
    config = TrainingConfig(
        epochs=1,
        batch_size=8,
        progress=False,
        eval_every=0,
        reciprocal=True,
        checkpoint_path=str(tmp_path / "ckpt.pt"),
    )
    if name == "conve":  # small ConvE: 8 = 2 x 4 reshaped embeddings, 2 filters
        model = MODELS[name](
            ds.num_entities, 2 * ds.num_relations, dim=8, embedding_height=2, num_filters=2
        )
    else:
        model = build_model(name, ds, config, dim=8)
    Trainer(model, config).fit(ds)
    loaded, ckpt = load_model(tmp_path / "ckpt.pt")
    assert type(loaded) is type(model)
    top = predict_tails(
        loaded,
        "e0",
        "r0",
        entity_labels=ckpt["vocabulary"]["entities"],
        relation_labels=ckpt["vocabulary"]["relations"],
        top_k=3,
    )
    assert len(top) == 3


# ---- full disk, stale temporary files ------------------------------------------------------


class _FullDisk:
    def __init__(self, path: str) -> None:
        self.path = path

    def write(self, data: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def __enter__(self) -> _FullDisk:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def test_full_disk_during_a_checkpoint_write(tmp_path, monkeypatch):
    path = save_checkpoint(tmp_path / "ckpt.pt", _payload())
    before = path.read_bytes()
    monkeypatch.setattr(graphdata.atomic, "open", lambda p, *a, **k: _FullDisk(p), raising=False)
    with pytest.raises(OSError, match=r"no space left on device while writing .*ckpt\.pt") as err:
        save_checkpoint(path, _payload())
    assert err.value.errno == errno.ENOSPC
    monkeypatch.undo()
    assert path.read_bytes() == before and load_checkpoint(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.pt"]


def test_too_little_free_space_is_refused_before_writing(tmp_path, monkeypatch):
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage._replace(free=100))
    with pytest.raises(OSError, match="no space left on device for the checkpoint: it needs"):
        save_checkpoint(tmp_path / "ckpt.pt", _payload())
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def tiny_tmpfs(mount_tmpfs):
    return mount_tmpfs("256k")


def test_checkpoint_on_a_real_full_disk_says_no_space_not_unexpected_pos(tiny_tmpfs, monkeypatch):
    small = save_checkpoint(tiny_tmpfs / "ckpt.pt", _payload())
    big = _payload(DistMult(E, R, dim=4096))  # about 370 KiB of tensors
    with pytest.raises(OSError, match="no space left on device for the checkpoint"):
        save_checkpoint(small, big)
    monkeypatch.setattr(graphdata.atomic, "require_free_space", lambda *a, **k: None)
    with pytest.raises(OSError, match="no space left on device while writing") as err:
        save_checkpoint(small, big)
    assert err.value.errno == errno.ENOSPC and "unexpected pos" not in str(err.value)
    monkeypatch.undo()
    assert load_checkpoint(small)["model"]["config"]["dim"] == DIM
    assert sorted(p.name for p in tiny_tmpfs.iterdir()) == ["ckpt.pt"]


def test_stale_checkpoint_temp_of_a_dead_writer_is_removed(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    stale = tmp_path / f".ckpt.pt.{child.pid}.q1w2e3r4.tmp-graphlib.pt"
    stale.write_bytes(b"half a checkpoint")
    save_checkpoint(tmp_path / "ckpt.pt", _payload())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.pt"]


# ---- saved evaluators -----------------------------------------------------------------------

_FITTED = dict(
    score_mean_=0.5,
    score_std_=2.0,
    representation_scale_=1.5,
    teacher_fingerprint_="t" * 64,
    graph_fingerprint_="g" * 64,
    num_relations_=4,
    num_entities_=10,
    fit_seconds_=0.1,
)


def _evaluator() -> DistilledEvaluator:
    """A small 'fitted' evaluator, without the cost of distilling one."""
    cfg = EvaluatorConfig(hidden=8, num_layers=1)
    evaluator = DistilledEvaluator(cfg)
    evaluator.network_ = build_network(cfg, _FITTED["num_relations_"], 6)
    for key, value in _FITTED.items():
        setattr(evaluator, key, value)
    evaluator.history_ = [{"step": 1, "loss": 0.3}]
    return evaluator


def _load(path: Path) -> DistilledEvaluator:
    return load_evaluator(DistilledEvaluator, path, "cpu")


def test_evaluator_round_trip_and_flipped_bytes(tmp_path):
    original = _evaluator()
    path = save_evaluator(original, tmp_path / "ev.pt")
    loaded = _load(path)
    assert loaded.num_relations_ == 4 and loaded.history_ == original.history_
    theirs, ours = loaded.network_.state_dict(), original.network_.state_dict()
    assert theirs.keys() == ours.keys() and all(torch.equal(theirs[k], ours[k]) for k in ours)
    start, size = _largest_record(path)
    _flip(path, start + size // 3, 16)
    with pytest.raises(GraphDataError, match=r"evaluator: .*ev\.pt' is corrupt"):
        _load(path)


def _resaved(path: Path, change) -> Path:
    data = torch.load(path, weights_only=True)
    change(data)
    path.write_bytes(serialize_with_checksum(data))
    return path


BAD_EVALUATORS = {
    "text file": (
        lambda p: p.write_text("not a torch file"),
        r"could not be read as a weights-only torch file \(the weights-only reader refused "
        r"it: Unsupported operand 110\); pass a file written by .*--save-evaluator",
    ),
    "truncated": (
        lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
        r"could not be read as a weights-only torch file",
    ),
    "kg checkpoint": (
        lambda p: save_checkpoint(p, _payload()),
        r"is a KG checkpoint \(a trained model\), not a distilled evaluator; pass it as the "
        r"checkpoint",
    ),
    "other torch file": (
        lambda p: torch.save({"weights": torch.zeros(2)}, p),
        r"is not a distilled-evaluator file",
    ),
    "teacher_dim": (
        lambda p: _resaved(p, lambda d: d.update(teacher_dim=7)),
        r"lin_rep\.weight has shape \[6, (\d+)\], its config implies \[7, \1\]",
    ),
    "absurd hidden": (
        lambda p: _resaved(p, lambda d: d["config"].update(hidden=10**6)),
        r"network would take .* GiB, expected at most 4 GiB",
    ),
    "negative relations": (
        lambda p: _resaved(p, lambda d: d["fitted"].update(num_relations_=-1)),
        r"num_relations_=-1, expected positive ints",
    ),
    "unknown config key": (
        lambda p: _resaved(p, lambda d: d["config"].update(heads=2)),
        r"config that does not build a network",
    ),
    "invalid config value": (
        lambda p: _resaved(p, lambda d: d["config"].update(num_layers=0)),
        r"num_layers: expected a positive int, got 0",
    ),
    "missing fitted value": (
        lambda p: _resaved(p, lambda d: d["fitted"].pop("score_std_")),
        r"lacks the fitted values \['score_std_'\]",
    ),
    "missing state key": (
        lambda p: _resaved(p, lambda d: d["state"].pop("lin_rep.weight")),
        r"missing keys \['lin_rep\.weight'\]",
    ),
    "nan state": (
        lambda p: _resaved(p, lambda d: d["state"]["lin_rep.weight"].fill_(float("nan"))),
        r"NaN or infinite values in lin_rep\.weight",
    ),
    "ensemble of 2 claimed": (
        lambda p: _resaved(p, lambda d: d["config"].update(ensemble=2)),
        r"stores an evaluator with ensemble=2; this graphlib builds ensemble=1 only",
    ),
    "other basis count": (
        lambda p: _resaved(p, lambda d: d["config"].update(num_bases=2)),
        r"stores an evaluator with num_bases=2; this graphlib builds num_bases=4 only",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_EVALUATORS))
def test_bad_evaluator_files_are_clear_errors(tmp_path, case):
    spoil, match = BAD_EVALUATORS[case]
    path = save_evaluator(_evaluator(), tmp_path / "ev.pt")
    spoil(path)
    with pytest.raises(GraphDataError, match=match):
        _load(path)


def test_evaluator_without_checksum_loads_with_a_warning(tmp_path):
    path = save_evaluator(_evaluator(), tmp_path / "ev.pt")
    data = torch.load(path, weights_only=True)
    del data["checksum"]
    torch.save(data, path)
    with pytest.warns(UserWarning, match="evaluator: .* carries no checksum"):
        assert _load(path).num_entities_ == 10
