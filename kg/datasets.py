"""Datasets by spec: a folder of TSV splits or the synthetic family KG, recorded in the dataset.

:func:`load_dataset` reads a dataset spec (``graphlib kg train --dataset``) and records it in the
dataset's ``name``, so that :func:`load_checkpoint_with_dataset` can reload the dataset a
checkpoint was trained on and refuse a mismatch (the ``graphlib kg`` and ``kg explain`` commands
use both).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphdata.errors import GraphDataError
from graphdata.synthetic import family_kg
from graphdata.triples import KGDataset

if TYPE_CHECKING:
    import torch

    from kg.base import KGEModel

__all__ = ["SYNTHETIC_NAME", "load_checkpoint_with_dataset", "load_dataset"]

#: The name :func:`load_dataset` records for the synthetic family KG.
SYNTHETIC_NAME = re.compile(r"^synthetic:num_people=(\d+),seed=(\d+)$")


def load_dataset(spec: str, *, num_people: int = 300, seed: int = 0) -> KGDataset:
    """Load ``spec``: a folder of labelled TSV splits, or ``synthetic`` (the family KG).

    The dataset's ``name`` records where it came from (the folder's absolute path, or
    ``synthetic:num_people=N,seed=S``), so that ``kg evaluate`` can reload it from a checkpoint.

    Args:
        spec: A folder path, ``"synthetic"``, or a name recorded by this function.
        num_people: People in the synthetic family world. Default 300.
        seed: Seed of the synthetic world. Default 0.

    Returns:
        The dataset.

    Raises:
        FileNotFoundError: If the folder or one of its split files is missing.

    Examples:
        >>> load_dataset("synthetic", num_people=60).name
        'synthetic:num_people=60,seed=0'
    """
    match = SYNTHETIC_NAME.match(spec)
    if match:
        num_people, seed = int(match.group(1)), int(match.group(2))
    if spec == "synthetic" or match:
        data = family_kg(num_people, seed=seed).dataset
        name = f"synthetic:num_people={num_people},seed={seed}"
        return KGDataset(data.train, data.valid, data.test, name=name)
    path = Path(spec)
    return KGDataset.from_folder(path, name=str(path.resolve()))


def load_checkpoint_with_dataset(
    checkpoint: str, dataset_spec: str | None, device: torch.device
) -> tuple[KGEModel, dict[str, Any], KGDataset]:
    """Load a trained model and the dataset it was trained on, refusing a mismatch.

    Args:
        checkpoint: A ``checkpoint.pt`` written by ``graphlib kg train``.
        dataset_spec: A folder or synthetic spec; ``None`` uses the one the checkpoint names.
        device: Where to load the model.

    Returns:
        The model, the checkpoint dictionary and the dataset.

    Raises:
        GraphDataError: If no dataset is known, or the checkpoint belongs to another model,
            vocabulary or set of triples.
    """
    from kg.checkpoint import check_compatible, dataset_fingerprint
    from kg.predict import load_model

    model, ckpt = load_model(checkpoint, device=device)
    spec = dataset_spec or ckpt.get("dataset_name")
    if spec is None:
        raise GraphDataError("--dataset: the checkpoint does not say which dataset; pass one")
    dataset = load_dataset(spec)
    check_compatible(
        ckpt,
        model_name=model.name,
        entity_labels=dataset.entities.labels,
        relation_labels=dataset.relations.labels,
        fingerprint=dataset_fingerprint(
            dataset.entities.labels,
            dataset.relations.labels,
            [ts.mapped_triples for ts in dataset.splits.values()],
        ),
    )
    return model, ckpt, dataset
