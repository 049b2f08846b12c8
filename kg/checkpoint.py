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
* ``dataset_name``: the dataset's ``name`` (the CLI stores where it came from there);
* ``checksum``: ``{"algorithm": "sha256-tensors", "digest": str}``, the
  :func:`tensor_checksum` of every other entry, verified on load: a file whose tensor bytes
  changed after writing (a disk or copy error, an edit) is refused. Files written before the
  checksum existed load with a :class:`UserWarning` saying their tensors were not verified
  (re-saving one adds the checksum).

The payload is serialised in memory first and then written with plain writes into a temporary
file in the target's folder, ``fsync``-ed and renamed with :func:`os.replace`
(:func:`graphdata.atomic.atomic_path`): a run killed mid-write leaves the previous checkpoint
intact, and a full disk is an :class:`OSError` "no space left on device" naming the path (torch
writing straight to the file reports only "unexpected pos").
"""

from __future__ import annotations

import hashlib
import io
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from graphdata.atomic import write_bytes_atomic
from graphdata.errors import GraphDataError
from graphdata.typing import PathLike

__all__ = [
    "CHECKPOINT_FORMAT",
    "CHECKPOINT_VERSION",
    "dataset_fingerprint",
    "save_checkpoint",
    "load_checkpoint",
    "check_compatible",
    "tensor_checksum",
    "verify_checksum",
    "serialize_with_checksum",
    "describe_load_error",
    "check_state_shapes",
    "capture_rng_state",
    "restore_rng_state",
]

#: Marker stored in every checkpoint, checked on load.
CHECKPOINT_FORMAT = "graphlib-kg-checkpoint"
#: Bumped when the layout changes incompatibly (the optional ``checksum`` entry did not).
CHECKPOINT_VERSION = 1
#: Name of the checksum stored by :func:`save_checkpoint` (and the evaluator files).
CHECKSUM_ALGORITHM = "sha256-tensors"


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
        # In slices of 2^20 ids (the same bytes, so the same digest): one copy of 10M triples
        # would be 240 MB.
        for part in data.reshape(-1).split(2**20):
            digest.update(part.numpy().tobytes())
    return digest.hexdigest()


def tensor_checksum(data: Any) -> str:
    """Return a SHA-256 hex digest of every tensor in a nested dict/list structure.

    The tensors are visited in the structure's order (dict insertion order, which
    ``torch.save``/``torch.load`` keep); each contributes its key path, dtype, shape and raw
    bytes, so a changed value, a reshaped or retyped tensor and a renamed key all change the
    digest. Non-tensor leaves (configs, labels, numbers) do not enter it. Where the tensors live
    (``map_location``) does not matter.

    Args:
        data: A tensor or a nest of dicts, lists and tuples holding tensors.

    Returns:
        A 64-character hexadecimal string.

    Examples:
        >>> a = {"w": torch.tensor([1.0, 2.0])}
        >>> tensor_checksum(a) == tensor_checksum({"w": torch.tensor([1.0, 2.0])})
        True
        >>> tensor_checksum(a) == tensor_checksum({"w": torch.tensor([1.0, 2.5])})
        False
    """
    digest = hashlib.sha256()
    _hash_tensors(data, "", digest)
    return digest.hexdigest()


def _hash_tensors(obj: Any, where: str, digest: Any) -> None:
    if isinstance(obj, Tensor):
        t = obj.detach()
        if t.layout != torch.strided:
            t = t.to_dense()
        digest.update(f"{where}|{t.dtype}|{tuple(t.shape)}\0".encode())
        if t.numel():
            flat = t.cpu().resolve_conj().resolve_neg().contiguous().reshape(-1)
            digest.update(flat.view(torch.uint8).numpy())  # hashlib reads the array's buffer
    elif isinstance(obj, dict):
        for key, value in obj.items():
            _hash_tensors(value, f"{where}.{key}", digest)
    elif isinstance(obj, (list, tuple)):
        for position, value in enumerate(obj):
            _hash_tensors(value, f"{where}[{position}]", digest)


def verify_checksum(data: dict, source: str, *, what: str) -> None:
    """Check the ``checksum`` entry of a loaded checkpoint or evaluator file against its tensors.

    Args:
        data: The loaded dictionary (its ``checksum`` entry and everything else).
        source: The file it was read from, for messages.
        what: What the file is, for messages (``"checkpoint"``, ``"evaluator"``).

    Raises:
        GraphDataError: If the stored checksum is malformed or differs from the tensors'.

    Warns:
        UserWarning: If there is no checksum (a file written before graphlib stored one).
    """
    stored = data.get("checksum")
    if stored is None:
        warnings.warn(
            f"{what}: {source!r} carries no checksum (written by an older graphlib), so its "
            "tensors could not be verified; save it again to add one",
            UserWarning,
            stacklevel=3,
        )
        return
    if (
        not isinstance(stored, dict)
        or stored.get("algorithm") != CHECKSUM_ALGORITHM
        or not isinstance(stored.get("digest"), str)
    ):
        raise GraphDataError(
            f"{what}: {source!r} has a malformed checksum entry {stored!r} (expected "
            f"{{'algorithm': {CHECKSUM_ALGORITHM!r}, 'digest': <hex>}}); the file is damaged or "
            "was not written by graphlib: restore it from a backup or write it again"
        )
    actual = tensor_checksum({k: v for k, v in data.items() if k != "checksum"})
    if actual != stored["digest"]:
        raise GraphDataError(
            f"{what}: {source!r} is corrupt: its tensors hash to {actual[:12]}..., the file "
            f"recorded {stored['digest'][:12]}... when it was written, so its data changed since "
            "(a disk or copy error, or an edit); restore it from a backup or write it again"
        )


def serialize_with_checksum(payload: dict[str, Any]) -> bytes:
    """Add the ``checksum`` entry to ``payload`` (replacing any) and ``torch.save`` it to bytes.

    Args:
        payload: The dictionary to store; it is not modified.

    Returns:
        The bytes of the ``torch.save`` file.
    """
    body = {key: value for key, value in payload.items() if key != "checksum"}
    body["checksum"] = {"algorithm": CHECKSUM_ALGORITHM, "digest": tensor_checksum(body)}
    buffer = io.BytesIO()
    torch.save(body, buffer)
    return buffer.getvalue()


def save_checkpoint(path: PathLike, checkpoint: dict[str, Any]) -> Path:
    """Write ``checkpoint`` to ``path`` atomically (temporary file, then :func:`os.replace`).

    Args:
        path: The destination file; its folder is created if missing.
        checkpoint: The checkpoint dictionary (layout in the module docstring); ``format``,
            ``version`` and ``checksum`` are filled in (a ``checksum`` it carries is replaced).

    Returns:
        The path written.

    Raises:
        OSError: With ``errno.ENOSPC`` ("no space left on device", naming the path) on a full
            disk; the previous checkpoint is then left intact.
    """
    payload = {"format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION, **checkpoint}
    return write_bytes_atomic(path, serialize_with_checksum(payload), what="the checkpoint")


def describe_load_error(err: BaseException) -> str:
    r"""One line saying why ``torch.load(..., weights_only=True)`` failed, for error messages.

    torch's own message for a refused pickle runs over several lines and suggests retrying with
    ``weights_only=False``, which would run the file's code: only its reason is kept.

    Args:
        err: The exception ``torch.load`` raised.

    Returns:
        A one-line reason.

    Examples:
        >>> describe_load_error(RuntimeError("PytorchStreamReader failed\nmore"))
        'PytorchStreamReader failed'
    """
    text = str(err)
    marker = "WeightsUnpickler error:"
    if marker in text:
        reason = text.split(marker, 1)[1].split("\n\nCheck the documentation", 1)[0]
        return "the weights-only reader refused it: " + " ".join(reason.split())[:200]
    first = text.strip().splitlines()[0] if text.strip() else type(err).__name__
    return first[:200]


def load_checkpoint(path: PathLike, *, map_location: str | torch.device = "cpu") -> dict:
    """Read a checkpoint written by :func:`save_checkpoint` with ``weights_only=True``.

    Args:
        path: The checkpoint file.
        map_location: Where to put its tensors. Default ``"cpu"``.

    Returns:
        The checkpoint dictionary.

    Raises:
        GraphDataError: If the file is missing, is not a graphlib KG checkpoint, has another
            layout version or fails its checksum (see the module docstring).

    Warns:
        UserWarning: If the file carries no checksum (written by an older graphlib).
    """
    path = Path(path)
    if path.is_dir():
        raise GraphDataError(
            f"checkpoint: expected a checkpoint file, got the folder {str(path)!r}; remove or "
            "rename the folder, or pass the path of a .pt file"
        )
    if not path.is_file():
        raise GraphDataError(f"checkpoint: no file at {str(path)!r}; pass the path of a .pt file")
    try:
        data = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as err:  # torch raises several types for foreign or corrupt files
        raise GraphDataError(
            f"checkpoint: {str(path)!r} could not be read as a weights-only torch file "
            f"({describe_load_error(err)}); "
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
    verify_checksum(data, str(path), what="checkpoint")
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
            f"this dataset {fingerprint[:12]}...) with the same vocabulary; resume, evaluate "
            "and predict only with the same dataset files"
            + (
                f" (it was trained on {checkpoint['dataset_name']!r}; pass that --dataset)"
                if isinstance(checkpoint.get("dataset_name"), str)
                else ""
            )
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


def check_state_shapes(state: Any, skeleton: torch.nn.Module, *, where: str, fix: str) -> None:
    """Refuse a stored state dict whose keys or shapes differ from ``skeleton``'s.

    Loaders build ``skeleton`` on the meta device from the stored config (shapes only, nothing
    allocated), so a crafted or damaged file is refused before any memory is committed.

    Args:
        state: The stored state dict.
        skeleton: The module the config implies.
        where: What is checked, for the message (e.g. ``"checkpoint: 'x.pt' entry model.state"``).
        fix: How to repair it, ending the message.

    Raises:
        GraphDataError: If ``state`` is not a dict of tensors, or its keys or shapes differ.
    """
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise GraphDataError(f"{where} is not a dict of tensors; {fix}")
    expected = {key: tuple(t.shape) for key, t in skeleton.state_dict().items()}
    got = {key: tuple(t.shape) for key, t in state.items()}
    if got.keys() != expected.keys():
        missing = sorted(expected.keys() - got.keys())[:3]
        extra = sorted(got.keys() - expected.keys())[:3]
        raise GraphDataError(
            f"{where} does not match its config: missing keys {missing}, unexpected keys "
            f"{extra}; {fix}"
        )
    for key, shape in expected.items():
        if got[key] != shape:
            raise GraphDataError(
                f"{where}: {key} has shape {list(got[key])}, its config implies {list(shape)}; "
                f"the file is damaged or crafted: {fix}"
            )
