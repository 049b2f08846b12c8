"""Saving and loading a fitted DistilledEvaluator (private; see ``distilled.py``).

Files are ``torch.save`` dictionaries read with ``weights_only=True``, serialised in memory and
written atomically with plain writes (a full disk is "no space left on device", never torch's
"unexpected pos"). Since this module stored one, they carry the tensor checksum of
:func:`kg.checkpoint.tensor_checksum`, verified on load; older files load with a warning. Any
other bad file (not a torch file, truncated, a KG checkpoint, a crafted config or state) is a
:class:`~graphdata.errors.GraphDataError` naming the file and the fix: the network is first built
on the ``meta`` device and the stored state's keys and shapes compared with it, so nothing is
allocated for a crafted size.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import torch

from graphdata.atomic import write_bytes_atomic
from graphdata.errors import GraphDataError
from graphdata.typing import PathLike
from kg.checkpoint import (
    CHECKPOINT_FORMAT,
    check_state_shapes,
    describe_load_error,
    serialize_with_checksum,
    verify_checksum,
)
from kg.explain.evaluator.config import NUM_BASES, EvaluatorConfig
from kg.explain.evaluator.network import SubgraphGNN
from kg.explain.evaluator.training import build_network

#: The evaluator class being loaded (kg.explain.evaluator.DistilledEvaluator; not imported
#: here, so that this module does not import back the module that uses it).
E = TypeVar("E")

__all__: list[str] = []

_FORMAT = "graphlib-kg-explain-evaluator"
#: Version 2 added path reduction and distance labels up to ``max_length``; version-1 files load
#: with ``max_length = hops`` (their distance labels stop there). Version 3 added ``ensemble`` and
#: ``resample`` (state keys ``members.<j>.`` and the members' statistics ``stats`` when ``ensemble``
#: exceeds 1). Version 4 stores the config without the fields issue #16 turned into constants of
#: kg.explain.evaluator.config (and without ``ensemble``): older files load when their network is
#: the one a current config builds (one member, NUM_BASES bases), and their other retired fields,
#: which only shaped the distillation, are dropped. Files of a newer version are refused.
_VERSION = 4
#: Config fields of older files that no longer exist (issue #16), and the value the network a
#: current config builds needs (None: the field only shaped the distillation, any value loads).
_RETIRED: dict[str, object] = {
    "ensemble": 1,
    "resample": None,
    "num_bases": NUM_BASES,
    "dropout": None,
    "num_negatives": None,
    "hard_negative_fraction": None,
    "hard_negative_pool": None,
    "relation_negative_fraction": None,
    "rank_margin": None,
    "rank_weight": None,
    "perturb_fraction": None,
    "path_fraction": None,
    "paths_per_graph": None,
}
_FITTED = (
    "score_mean_",
    "score_std_",
    "representation_scale_",
    "teacher_fingerprint_",
    "graph_fingerprint_",
    "num_relations_",
    "num_entities_",
    "fit_seconds_",
)
#: Largest evaluator network the loader builds, in bytes of parameters and buffers (4 GiB).
_MAX_NETWORK_BYTES = 4 * 2**30
_FIX = "pass a file written by `graphlib kg explain --save-evaluator` (DistilledEvaluator.save)"


def save_evaluator(evaluator: Any, path: PathLike) -> Path:
    """Write the fitted evaluator atomically (loadable with ``weights_only=True``)."""
    payload = {
        "format": _FORMAT,
        "version": _VERSION,
        "config": dataclasses.asdict(evaluator.config),
        "state": evaluator.network_.state_dict(),
        "teacher_dim": int(evaluator.network_.lin_rep.out_features),
        "fitted": {key: getattr(evaluator, key) for key in _FITTED},
        # The checksum covers tensors only: the statistics that map the network's output to
        # teacher units ride along as one, so a damaged float in the pickle is caught too.
        "statistics": _statistics(evaluator.__dict__),
        "history": evaluator.history_,
    }
    return write_bytes_atomic(path, serialize_with_checksum(payload), what="the evaluator")


#: Fitted floats that map the network's output to teacher units (finite; the scales > 0).
_STATISTICS = ("score_mean_", "score_std_", "representation_scale_")


def _statistics(fitted: dict[str, Any]) -> torch.Tensor:
    return torch.tensor([float(fitted[key]) for key in _STATISTICS], dtype=torch.float64)


def _check_statistics(data: dict[str, Any], fitted: dict[str, Any], source: str) -> None:
    """The fitted statistics must be finite numbers (scales > 0) equal to their checked copy."""
    values = [fitted[key] for key in _STATISTICS]
    if not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values
    ) or not (values[1] > 0 and values[2] > 0):
        raise GraphDataError(
            f"path: {source!r} stores {dict(zip(_STATISTICS, values))}, expected finite numbers "
            f"(the two scales > 0); the file is damaged: {_FIX}"
        )
    stored = data.get("statistics")  # absent from files written before it was stored
    if stored is not None and not (
        isinstance(stored, torch.Tensor) and torch.equal(stored, _statistics(fitted))
    ):
        raise GraphDataError(
            f"evaluator: {source!r} is corrupt: its fitted statistics "
            f"{dict(zip(_STATISTICS, values))} differ from the checked copy written with them "
            "(a disk or copy error, or an edit); restore it from a backup or write it again"
        )


def _read(path: Path) -> dict[str, Any]:
    """Load the file and check its marker, version and checksum."""
    if not path.is_file():
        raise GraphDataError(f"path: no evaluator file at {str(path)!r}; {_FIX}")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises several types for foreign, truncated or crafted files
        raise GraphDataError(
            f"path: {str(path)!r} could not be read as a weights-only torch file "
            f"({describe_load_error(err)}); {_FIX}"
        ) from err
    if isinstance(data, dict) and data.get("format") == CHECKPOINT_FORMAT:
        raise GraphDataError(
            f"path: {str(path)!r} is a KG checkpoint (a trained model), not a distilled "
            f"evaluator; pass it as the checkpoint, and as the evaluator {_FIX[5:]}"
        )
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        raise GraphDataError(
            f"path: {str(path)!r} is not a distilled-evaluator file (no format marker "
            f"{_FORMAT!r}); write one with DistilledEvaluator.save"
        )
    version = data.get("version", 1)
    if not isinstance(version, int) or version > _VERSION:
        raise GraphDataError(
            f"path: {str(path)!r} is an evaluator file of version {version!r}, this graphlib "
            f"reads versions up to {_VERSION}; upgrade graphlib or distil the evaluator again"
        )
    verify_checksum(data, str(path), what="evaluator")
    return data


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _build(cfg: EvaluatorConfig, num_relations: int, teacher_dim: int) -> SubgraphGNN:
    return build_network(cfg, num_relations, teacher_dim)


def _drop_retired(config: dict[str, Any], source: str) -> dict[str, Any]:
    """The stored config without the retired fields; refuse one whose network differs."""
    for key, needed in _RETIRED.items():
        if key in config:
            value = config.pop(key)
            if needed is not None and value != needed:
                raise GraphDataError(
                    f"path: {source!r} stores an evaluator with {key}={value!r}; this graphlib "
                    f"builds {key}={needed!r} only (issue #16 retired the field): distil the "
                    "evaluator again"
                )
    return config


def _check_state(skeleton: torch.nn.Module, state: Any, source: str) -> None:
    """The stored state must have the network's keys and shapes, and finite values."""
    check_state_shapes(state, skeleton, where=f"path: {source!r} state", fix=_FIX)
    for key in skeleton.state_dict():
        value = state[key]
        if value.is_floating_point() and not bool(torch.isfinite(value).all()):
            raise GraphDataError(
                f"path: {source!r} stores NaN or infinite values in {key}; distil the "
                "evaluator again"
            )


def load_evaluator(
    cls: Callable[[EvaluatorConfig], E], path: PathLike, map_location: str | torch.device
) -> E:
    """Read a file written by :func:`save_evaluator` into a new ``cls`` instance."""
    path = Path(path)
    source = str(path)
    data = _read(path)
    config, fitted = data.get("config"), data.get("fitted")
    teacher_dim = data.get("teacher_dim")
    if not isinstance(config, dict) or not isinstance(fitted, dict):
        raise GraphDataError(f"path: {source!r} has no 'config' and 'fitted' dicts; {_FIX}")
    missing = [key for key in _FITTED if key not in fitted]
    if missing:
        raise GraphDataError(f"path: {source!r} lacks the fitted values {missing}; {_FIX}")
    num_relations = fitted["num_relations_"]
    if not _positive_int(teacher_dim) or not _positive_int(num_relations):
        raise GraphDataError(
            f"path: {source!r} stores teacher_dim={teacher_dim!r} and "
            f"num_relations_={num_relations!r}, expected positive ints; {_FIX}"
        )
    teacher_dim, num_relations = int(teacher_dim or 0), int(num_relations)  # checked above
    _check_statistics(data, fitted, source)
    config = _drop_retired(dict(config), source)
    if "hops" in config:
        config.setdefault("max_length", config["hops"])
    try:
        cfg = EvaluatorConfig(**config)
        cfg.validate()
        with torch.device("meta"):
            skeleton = _build(cfg, num_relations, teacher_dim)
    except (TypeError, ValueError, RuntimeError, OverflowError) as err:
        raise GraphDataError(
            f"path: {source!r} stores an evaluator config that does not build a network "
            f"({err}); {_FIX}"
        ) from err
    nbytes = sum(t.numel() * t.element_size() for t in skeleton.state_dict().values())
    if nbytes > _MAX_NETWORK_BYTES:
        raise GraphDataError(
            f"path: {source!r} stores a config whose network would take {nbytes / 2**30:.3g} "
            f"GiB, expected at most {_MAX_NETWORK_BYTES / 2**30:.0f} GiB; the file is damaged or "
            f"crafted: {_FIX}"
        )
    _check_state(skeleton, data.get("state"), source)
    evaluator = cls(cfg)
    # The constructor's random initialisation is overwritten by the stored state: draw it
    # from a forked RNG, so loading leaves the caller's global torch state untouched.
    with torch.random.fork_rng(devices=[]):
        network = _build(cfg, num_relations, teacher_dim)
    network.load_state_dict(data["state"])
    fitted = {
        **fitted,
        "network_": network.to(map_location).eval(),
        "history_": list(data.get("history", [])),
        "graph_": None,
    }
    for key, value in fitted.items():
        setattr(evaluator, key, value)
    return evaluator
