"""Training checkpoints: atomic writes, ``weights_only`` loads, compatibility checks.

A checkpoint is one ``torch.save`` file holding only tensors, plain dicts, lists, strings and
numbers, so that ``torch.load(..., weights_only=True)`` reads it without executing any pickled
code. Its keys:

* ``format`` (``"graphlib-kg-checkpoint"``) and ``version`` (int);
* ``model``: ``{"name": str, "config": dict, "state": state_dict}`` (``name`` is a key of
  :data:`kg.models.MODELS`, ``config`` the constructor's keyword arguments);
* ``training``: ``{"config": dict, "epoch": int, "history": list[dict], ...}`` (the trainer's
  progress: epochs done, per-epoch metrics, early-stopping state);
* ``optimizer``: the optimiser's ``state_dict``;
* ``rng``: random-generator states (see :func:`capture_rng_state`);
* ``vocabulary``: ``{"entities": list[str], "relations": list[str]}``;
* ``dataset_fingerprint``: :func:`dataset_fingerprint` of the training data;
* ``dataset_name``: the dataset's ``name`` (the CLI stores where it came from there).

Writes go to a temporary file in the target's folder followed by :func:`os.replace`, so a run
killed mid-write leaves the previous checkpoint intact.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from graphdata.atomic import atomic_path
from graphdata.errors import GraphDataError
from graphdata.typing import PathLike

__all__ = [
    "CHECKPOINT_FORMAT",
    "CHECKPOINT_VERSION",
    "dataset_fingerprint",
    "save_checkpoint",
    "load_checkpoint",
    "check_compatible",
    "capture_rng_state",
    "restore_rng_state",
]

#: Marker stored in every checkpoint, checked on load.
CHECKPOINT_FORMAT = "graphlib-kg-checkpoint"
#: Bumped when the layout changes incompatibly.
CHECKPOINT_VERSION = 1


def dataset_fingerprint(
    entity_labels: Sequence[str], relation_labels: Sequence[str], triples: Sequence[Tensor]
) -> str:
    """Return a SHA-256 hex digest of the vocabularies and the mapped triples.

    Two datasets share a fingerprint iff they have the same labels in the same order and the
    same triples (same rows, same order) in each split.

    Args:
        entity_labels: Entity labels in id order.
        relation_labels: Relation labels in id order.
        triples: The mapped triples of each split (e.g. train, valid, test), each ``[N, 3]``.

    Returns:
        A 64-character hexadecimal string.

    Examples:
        >>> t = torch.tensor([[0, 0, 1]])
        >>> fp = dataset_fingerprint(["a", "b"], ["r"], [t])
        >>> fp == dataset_fingerprint(["a", "b"], ["r"], [t])
        True
        >>> fp == dataset_fingerprint(["b", "a"], ["r"], [t])
        False
    """
    digest = hashlib.sha256()
    for labels in (entity_labels, relation_labels):
        digest.update(len(labels).to_bytes(8, "little"))
        # NUL separators: labels never contain them, so ["ab", "c"] != ["a", "bc"].
        digest.update("\0".join(labels).encode("utf-8"))
    for split in triples:
        data = split.detach().to("cpu", torch.int64).contiguous()
        digest.update(str(tuple(data.shape)).encode())
        digest.update(data.numpy().tobytes())
    return digest.hexdigest()


def save_checkpoint(path: PathLike, checkpoint: dict[str, Any]) -> Path:
    """Write ``checkpoint`` to ``path`` atomically (temporary file, then :func:`os.replace`).

    Args:
        path: The destination file; its folder is created if missing.
        checkpoint: The checkpoint dictionary (layout in the module docstring); ``format`` and
            ``version`` are filled in.

    Returns:
        The path written.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION, **checkpoint}
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        torch.save(payload, handle)
        handle.flush()
        os.fsync(handle.fileno())  # on disk before the rename makes it the checkpoint
    return path


def load_checkpoint(path: PathLike, *, map_location: str | torch.device = "cpu") -> dict:
    """Read a checkpoint written by :func:`save_checkpoint` with ``weights_only=True``.

    Args:
        path: The checkpoint file.
        map_location: Where to put its tensors. Default ``"cpu"``.

    Returns:
        The checkpoint dictionary.

    Raises:
        GraphDataError: If the file is missing, is not a graphlib KG checkpoint or has another
            layout version.
    """
    path = Path(path)
    if not path.is_file():
        raise GraphDataError(f"checkpoint: no file at {str(path)!r}; pass the path of a .pt file")
    try:
        data = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as err:  # torch raises several types for foreign or corrupt files
        raise GraphDataError(
            f"checkpoint: {str(path)!r} could not be read as a weights-only torch file ({err}); "
            "pass a checkpoint written by `graphlib kg train`"
        ) from err
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise GraphDataError(
            f"checkpoint: {str(path)!r} is not a graphlib KG checkpoint (no "
            f"format={CHECKPOINT_FORMAT!r} marker); pass a file written by `graphlib kg train`"
        )
    if data.get("version") != CHECKPOINT_VERSION:
        raise GraphDataError(
            f"checkpoint: {str(path)!r} has layout version {data.get('version')!r}, this graphlib "
            f"reads version {CHECKPOINT_VERSION}; retrain or use the graphlib that wrote it"
        )
    return data


def check_compatible(
    checkpoint: dict,
    *,
    model_name: str,
    entity_labels: Sequence[str],
    relation_labels: Sequence[str],
    fingerprint: str | None = None,
) -> None:
    """Refuse a checkpoint trained with another model, vocabulary or dataset.

    Args:
        checkpoint: A dictionary from :func:`load_checkpoint`.
        model_name: The model the caller is about to use (a key of :data:`kg.models.MODELS`).
        entity_labels: The caller's entity labels in id order.
        relation_labels: The caller's relation labels in id order.
        fingerprint: The caller's :func:`dataset_fingerprint`; ``None`` (default) skips this
            check (e.g. evaluating on another split of the same vocabulary).

    Raises:
        GraphDataError: Naming the mismatch (model names, vocabulary sizes and the first
            differing label, or the fingerprints) and how to fix it.
    """
    saved = checkpoint["model"]["name"]
    if saved != model_name:
        raise GraphDataError(
            f"checkpoint: it was trained with model {saved!r}, not {model_name!r}; pass "
            f"--model {saved} to continue it, or start a fresh run without --resume"
        )
    vocab = checkpoint["vocabulary"]
    for kind, ours in (("entity", entity_labels), ("relation", relation_labels)):
        theirs = vocab["entities" if kind == "entity" else "relations"]
        if list(theirs) != list(ours):
            first = next(
                (i for i, (a, b) in enumerate(zip(theirs, ours)) if a != b),
                min(len(theirs), len(ours)),
            )
            seen = repr(theirs[first]) if first < len(theirs) else "<end>"
            got = repr(ours[first]) if first < len(ours) else "<end>"
            raise GraphDataError(
                f"checkpoint: its {kind} vocabulary ({len(theirs)} labels) differs from the "
                f"dataset's ({len(ours)} labels) at id {first}: checkpoint {seen}, dataset "
                f"{got}; use the dataset the checkpoint was trained on"
            )
    saved_fp = checkpoint.get("dataset_fingerprint")
    if fingerprint is not None and saved_fp is not None and saved_fp != fingerprint:
        raise GraphDataError(
            f"checkpoint: it was trained on other triples (dataset fingerprint {saved_fp[:12]}..., "
            f"this dataset {fingerprint[:12]}...) with the same vocabulary; resume only on the "
            "same dataset files"
        )


def capture_rng_state(generator: torch.Generator | None = None) -> dict[str, Any]:
    """Collect the random states a training run draws from.

    Args:
        generator: The run's own generator (negative sampling and shuffling), if any.

    Returns:
        ``{"torch_cpu": ByteTensor, "torch_cuda": list[ByteTensor], "generator": ByteTensor |
        None}``: torch's global CPU state (dropout in ConvE/TuckER draws from it), the global
        state of each CUDA device when CUDA is initialised, and the run's generator.

    Examples:
        >>> g = torch.Generator().manual_seed(0)
        >>> state = capture_rng_state(g)
        >>> a = torch.rand(2, generator=g)
        >>> restore_rng_state(state, g)
        >>> torch.equal(a, torch.rand(2, generator=g))
        True
    """
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else []
    return {
        "torch_cpu": torch.get_rng_state(),
        "torch_cuda": cuda,
        "generator": None if generator is None else generator.get_state(),
    }


def restore_rng_state(state: dict[str, Any], generator: torch.Generator | None = None) -> None:
    """Restore the states saved by :func:`capture_rng_state`.

    Args:
        state: The dictionary from :func:`capture_rng_state`.
        generator: The run's generator, set to the saved state when both exist.
    """
    torch.set_rng_state(state["torch_cpu"].cpu())
    if state["torch_cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([s.cpu() for s in state["torch_cuda"]])
    if generator is not None and state["generator"] is not None:
        generator.set_state(state["generator"].cpu())
