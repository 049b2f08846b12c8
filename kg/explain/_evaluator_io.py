"""Saving and loading a fitted DistilledEvaluator (private; see ``evaluator.py``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from graphdata.atomic import atomic_path
from graphdata.errors import GraphDataError
from graphdata.typing import PathLike
from kg.explain._members import build_network
from kg.explain._network import EnsembleGNN
from kg.explain.distillation import EvaluatorConfig

if TYPE_CHECKING:
    from kg.explain.evaluator import DistilledEvaluator

__all__: list[str] = []

_FORMAT = "graphlib-kg-explain-evaluator"
#: Version 2 added path reduction and distance labels up to ``max_length``; version-1 files
#: load with ``max_length = hops`` (their distance labels stop there). Version 3 added
#: ``ensemble`` and ``resample`` (state keys ``members.<j>.`` and the members' statistics
#: ``stats`` when ``ensemble`` exceeds 1); older files load with
#: ``ensemble = 1``, files of a newer version are refused.
_VERSION = 3
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


def save_evaluator(evaluator: DistilledEvaluator, path: PathLike) -> Path:
    """Write the fitted evaluator atomically (loadable with ``weights_only=True``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "format": _FORMAT,
        "version": _VERSION,
        "config": dataclasses.asdict(evaluator.config),
        "state": evaluator.network_.state_dict(),
        "teacher_dim": int(evaluator.network_.lin_rep.out_features),
        "fitted": {key: getattr(evaluator, key) for key in _FITTED},
        "history": evaluator.history_,
    }
    with atomic_path(path) as tmp:
        torch.save(payload, tmp)
    return path


def load_evaluator(
    cls: type[DistilledEvaluator], path: PathLike, map_location: str | torch.device
) -> DistilledEvaluator:
    """Read a file written by :func:`save_evaluator` into a new ``cls`` instance."""
    path = Path(path)
    if not path.is_file():
        raise GraphDataError(f"path: no evaluator file at {str(path)!r}")
    data = torch.load(path, map_location=map_location, weights_only=True)
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
    config = dict(data["config"])
    config.setdefault("max_length", config["hops"])
    config.setdefault("path_fraction", 0.0)
    config.setdefault("relation_negative_fraction", 0.0)  # distilled before it existed
    evaluator = cls(EvaluatorConfig(**config))
    cfg = evaluator.config
    fitted = data["fitted"]
    members = [
        build_network(cfg, fitted["num_relations_"], data["teacher_dim"])
        for _ in range(cfg.ensemble)
    ]
    stats = torch.zeros(cfg.ensemble, 3, dtype=torch.float64)  # filled by load_state_dict
    network = members[0] if cfg.ensemble == 1 else EnsembleGNN(members, stats)
    network.load_state_dict(data["state"])
    evaluator.network_ = network.to(map_location).eval()
    for key, value in fitted.items():
        setattr(evaluator, key, value)
    evaluator.history_ = list(data["history"])
    evaluator.graph_ = None
    return evaluator
