r"""Statistics of a knowledge graph: counts per split and relation cardinality types.

The cardinality types follow Bordes et al., "Translating Embeddings for Modeling
Multi-relational Data", NeurIPS 2013 (https://papers.nips.cc/paper/5071), in their analysis of
link prediction by category of relationship: for each relation :math:`r`, over the distinct
triples :math:`T_r` of all splits,

.. math::
    \mathrm{tph}_r = \frac{|T_r|}{|\{(h, r) : (h, r, t) \in T_r\}|}, \qquad
    \mathrm{hpt}_r = \frac{|T_r|}{|\{(r, t) : (h, r, t) \in T_r\}|}, \qquad
    \mathrm{type}_r = c(\mathrm{hpt}_r)\text{-}c(\mathrm{tph}_r), \quad
    c(x) = \begin{cases} 1 & x < 1.5 \\ N & x \ge 1.5 \end{cases}

the mean number of tails per head and of heads per tail; the type is 1-1, 1-N (one head, many
tails), N-1 or N-N.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from graphdata.errors import GraphDataError
from graphdata.formats import detect_format
from graphdata.triples import KGDataset, TripleSet

__all__ = [
    "CARDINALITY_THRESHOLD",
    "RelationStatistics",
    "KGStatistics",
    "kg_statistics",
    "describe",
]

#: Bordes et al. (2013): a side with a mean of at least 1.5 entities per pair counts as "N".
CARDINALITY_THRESHOLD = 1.5
_TYPES = ("1-1", "1-N", "N-1", "N-N")


@dataclass(frozen=True)
class RelationStatistics:
    r"""Statistics of one relation over the distinct triples of all splits.

    Attributes:
        label: The relation label.
        num_triples: Triples with this relation, all splits, repeats counted.
        tails_per_head: :math:`\mathrm{tph}_r`, mean distinct tails per (head, relation) pair;
            undefined (None) when the relation has no triple (:math:`0/0`).
        heads_per_tail: :math:`\mathrm{hpt}_r`, mean distinct heads per (relation, tail) pair;
            undefined (None) when the relation has no triple.
        cardinality: ``"1-1"``, ``"1-N"``, ``"N-1"``, ``"N-N"``, or ``"-"`` without triples.
    """

    label: str
    num_triples: int
    tails_per_head: float | None
    heads_per_tail: float | None
    cardinality: str


@dataclass(frozen=True)
class KGStatistics:
    """Statistics of a knowledge graph (see the module docstring for the definitions).

    Attributes:
        name: The dataset's name.
        num_entities: Size of the entity vocabulary.
        num_relations: Size of the relation vocabulary.
        split_triples: Triples per split, repeats counted.
        split_entities: Distinct entities occurring in each split.
        split_relations: Distinct relations occurring in each split.
        split_duplicates: Repeated triples per split (rows minus distinct rows).
        unseen_entities: Entities occurring in valid/test but not in train (0 for one triple set).
        unseen_relations: Relations occurring in valid/test but not in train.
        tails_per_head: Mean distinct tails per distinct (head, relation) pair, all relations;
            undefined (None) when there is no triple at all (:math:`0/0`).
        heads_per_tail: Mean distinct heads per distinct (relation, tail) pair, all relations;
            undefined (None) when there is no triple at all.
        relations: Per-relation statistics, in relation id order.
        cardinality_counts: Number of relations of each type ``1-1``, ``1-N``, ``N-1``, ``N-N``.
    """

    name: str
    num_entities: int
    num_relations: int
    split_triples: dict[str, int]
    split_entities: dict[str, int]
    split_relations: dict[str, int]
    split_duplicates: dict[str, int]
    unseen_entities: int
    unseen_relations: int
    tails_per_head: float | None
    heads_per_tail: float | None
    relations: tuple[RelationStatistics, ...]
    cardinality_counts: dict[str, int]

    @property
    def num_triples(self) -> int:
        """Triples over all splits, repeats counted."""
        return sum(self.split_triples.values())

    def to_text(self) -> str:
        """Return a plain-text report: a table of splits, the means, and a table of relations.

        Relations are listed by descending triple count, then label; an undefined (None) mean
        reads ``n/a``.
        """
        lines = [
            f"knowledge graph {self.name!r}: {self.num_entities} entities, "
            f"{self.num_relations} relations, {self.num_triples} triples",
            "",
            f"{'split':<8}{'triples':>10}{'entities':>10}{'relations':>11}{'duplicates':>12}",
        ]
        for split, count in self.split_triples.items():
            lines.append(
                f"{split:<8}{count:>10}{self.split_entities[split]:>10}"
                f"{self.split_relations[split]:>11}{self.split_duplicates[split]:>12}"
            )
        types = ", ".join(f"{k}: {v}" for k, v in self.cardinality_counts.items())
        lines += [
            "",
            f"valid/test labels missing from train: {self.unseen_entities} entities, "
            f"{self.unseen_relations} relations",
            f"mean tails per (head, relation): {_fixed(self.tails_per_head)}; mean heads per "
            f"(relation, tail): {_fixed(self.heads_per_tail)}",
            f"relation types (Bordes et al. 2013, threshold {CARDINALITY_THRESHOLD}): {types}",
            "",
        ]
        width = max([len("relation"), *(len(rel.label) for rel in self.relations)]) + 2
        lines.append(
            f"{'relation':<{width}}{'triples':>9}{'tails/head':>12}{'heads/tail':>12}  type"
        )
        for rel in sorted(self.relations, key=lambda x: (-x.num_triples, x.label)):
            lines.append(
                f"{rel.label:<{width}}{rel.num_triples:>9}{_fixed(rel.tails_per_head):>12}"
                f"{_fixed(rel.heads_per_tail):>12}  {rel.cardinality}"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()


def _fixed(value: float | None) -> str:
    """``value`` with three decimals, or ``n/a`` where it is undefined (None)."""
    return "n/a" if value is None else f"{value:.3f}"


def _count_distinct(values: Tensor) -> int:
    return int(torch.unique(values).numel())


def kg_statistics(data: KGDataset | TripleSet, *, name: str | None = None) -> KGStatistics:
    r"""Compute counts per split and per relation, and relation cardinality types.

    The cardinality type of relation :math:`r` (Bordes et al., "Translating Embeddings for
    Modeling Multi-relational Data", NeurIPS 2013) uses the distinct triples of all splits:

    .. math::
        \mathrm{tph}_r = \frac{|T_r|}{|\{(h, r)\}|}, \quad
        \mathrm{hpt}_r = \frac{|T_r|}{|\{(r, t)\}|}, \quad
        \mathrm{type}_r = c(\mathrm{hpt}_r)\text{-}c(\mathrm{tph}_r), \quad
        c(x) = 1 \text{ if } x < 1.5 \text{ else } N.

    :math:`T_r` is the set of distinct triples of relation :math:`r` over all splits. The overall
    means divide the number of distinct triples by the number of distinct (head, relation),
    respectively (relation, tail), pairs. A mean over no pair (:math:`0/0`: a relation of the
    vocabulary without triples, or no triple at all) is undefined (None), never NaN.

    Args:
        data: A dataset, or a single triple set (reported as the split ``"triples"``).
        name: The name in the report; default ``None``: the dataset's name, or ``"triples"``.

    Returns:
        The statistics.

    Raises:
        GraphDataError: If ``data`` is neither a :class:`KGDataset` nor a :class:`TripleSet`.

    Examples:
        >>> ts = TripleSet.from_labeled_triples(
        ...     [("a", "parent", "b"), ("a", "parent", "c"), ("a", "spouse", "d")])
        >>> stats = kg_statistics(ts)
        >>> [(r.label, r.tails_per_head, r.heads_per_tail, r.cardinality) for r in stats.relations]
        [('parent', 2.0, 1.0, '1-N'), ('spouse', 1.0, 1.0, '1-1')]
    """
    if isinstance(data, KGDataset):
        splits, default_name = data.splits, data.name
    elif isinstance(data, TripleSet):
        splits, default_name = {"triples": data}, "triples"
    else:
        raise GraphDataError(
            f"data: expected a KGDataset or TripleSet, got {type(data).__name__}; load a folder "
            "with KGDataset.from_folder or a file with TripleSet.read_tsv"
        )
    first = next(iter(splits.values()))
    num_entities, num_relations = first.num_entities, first.num_relations
    split_entities, split_relations, split_duplicates = {}, {}, {}
    for split, ts in splits.items():
        mapped = ts.mapped_triples
        split_entities[split] = _count_distinct(mapped[:, [0, 2]])
        split_relations[split] = _count_distinct(mapped[:, 1])
        split_duplicates[split] = len(ts) - int(torch.unique(mapped, dim=0).shape[0])

    unseen_entities = unseen_relations = 0
    if isinstance(data, KGDataset):
        train = data.train.mapped_triples
        held_out = torch.cat([data.valid.mapped_triples, data.test.mapped_triples])  # [M, 3]
        seen = torch.zeros(num_entities, dtype=torch.bool, device=train.device)
        seen[train[:, [0, 2]].reshape(-1)] = True
        unseen_entities = int((~seen[torch.unique(held_out[:, [0, 2]])]).sum())
        seen_rel = torch.zeros(num_relations, dtype=torch.bool, device=train.device)
        seen_rel[train[:, 1]] = True
        unseen_relations = int((~seen_rel[torch.unique(held_out[:, 1])]).sum())

    everything = torch.cat([ts.mapped_triples for ts in splits.values()])  # [N, 3]
    h, r, t = torch.unique(everything, dim=0).unbind(dim=1)  # distinct triples
    num_triples_r = torch.bincount(everything[:, 1], minlength=num_relations).tolist()
    distinct_r = torch.bincount(r, minlength=num_relations).double()
    hr_r = torch.bincount(
        torch.unique(h * num_relations + r) % num_relations, minlength=num_relations
    )
    rt_r = torch.bincount(
        torch.unique(r * num_entities + t) // num_entities, minlength=num_relations
    )
    tph = (distinct_r / hr_r.clamp(min=1).double()).tolist()  # 0 for a relation without triples
    hpt = (distinct_r / rt_r.clamp(min=1).double()).tolist()

    relations, counts = [], dict.fromkeys(_TYPES, 0)
    for rel_id, label in enumerate(first.relations.labels):
        tph_r: float | None = tph[rel_id]
        hpt_r: float | None = hpt[rel_id]
        if num_triples_r[rel_id] == 0:
            kind, tph_r, hpt_r = "-", None, None  # 0/0: no (head, relation) pair
        else:
            head_side = "N" if hpt[rel_id] >= CARDINALITY_THRESHOLD else "1"
            tail_side = "N" if tph[rel_id] >= CARDINALITY_THRESHOLD else "1"
            kind = f"{head_side}-{tail_side}"
            counts[kind] += 1
        relations.append(RelationStatistics(label, num_triples_r[rel_id], tph_r, hpt_r, kind))
    num_distinct = h.numel()
    num_hr = int(hr_r.sum())
    num_rt = int(rt_r.sum())
    return KGStatistics(
        name=default_name if name is None else name,
        num_entities=num_entities,
        num_relations=num_relations,
        split_triples={split: len(ts) for split, ts in splits.items()},
        split_entities=split_entities,
        split_relations=split_relations,
        split_duplicates=split_duplicates,
        unseen_entities=unseen_entities,
        unseen_relations=unseen_relations,
        tails_per_head=num_distinct / num_hr if num_hr else None,
        heads_per_tail=num_distinct / num_rt if num_rt else None,
        relations=tuple(relations),
        cardinality_counts=counts,
    )


def describe(path: str | os.PathLike[str]) -> str:
    """Load a dataset folder or a single TSV file and return its statistics as text.

    This is what ``graphlib data stats PATH`` prints. A folder is read in any layout of
    :meth:`KGDataset.from_folder` (labelled ``train.txt``/``valid.txt``/``test.txt``, PyKEEN's
    or OpenKE's numeric folders). Statistics describe the data as it is, so duplicates are kept
    (and counted) and valid/test labels missing from train are added to the vocabulary (and
    counted); malformed lines still raise.

    Args:
        path: A folder with the three split files, or one labelled TSV file.

    Returns:
        The text of :meth:`KGStatistics.to_text`.

    Raises:
        FileNotFoundError: If ``path`` does not exist or a split file is missing.
        TSVFormatError: On a malformed line, naming ``file:line``.
    """
    path = Path(path)
    if path.is_dir():
        # duplicates= concerns labelled files only; the numeric formats keep every row anyway.
        kind = detect_format(path)
        data: KGDataset | TripleSet = KGDataset.from_folder(
            path,
            format=kind,
            on_unknown="extend",
            duplicates="keep" if kind == "labeled" else "raise",
        )
        return kg_statistics(data).to_text()
    if path.is_file():
        triples = TripleSet.read_tsv(path, duplicates="keep")
        return kg_statistics(triples, name=path.name).to_text()
    raise FileNotFoundError(
        f"path: expected a folder with train.txt, valid.txt and test.txt, or a labelled TSV file, "
        f"got {str(path)!r}, which does not exist"
    )
