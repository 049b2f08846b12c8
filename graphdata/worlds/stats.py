r"""What a synthetic world stresses: cardinalities, rule lengths, groundings, hubs, shortcuts.

:func:`world_statistics` measures, for a :class:`~graphdata.worlds.World`:

* counts of entities, relations and triples per split, and each relation's cardinality type
  (1-1, 1-N, N-1, N-N; Bordes et al., NeurIPS 2013, threshold 1.5, :mod:`graphdata.kg_stats`);
* the valid/test targets per **target length** (the body length of the target's shortest
  grounding in train, as :func:`graphdata.rules.score_targets` buckets them) and per rule, the
  noise targets (no grounding), and the share of targets with more than one grounding;
* the size of the **2-hop enclosing subgraph** of test targets, in training triples: the nodes
  within 2 hops of both ends, edge directions ignored, the target itself removed (GraIL, Teru et
  al., ICML 2020, arXiv 1911.06962; what :func:`kg.explain.local.local_structure` explains in);
* per shortcut ``(s, h)``: the **co-occurrence** :math:`|\{(x, h, y) \in K : (x, s, y) \in
  \text{train} \vee (y, s, x) \in \text{train}\}| / |\{(x, h, y) \in K\}|` over the world's
  :math:`h` facts :math:`K`, and the converse share of :math:`s`-linked training pairs that
  :math:`h` links (either direction).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import torch

from graphdata.errors import GraphDataError
from graphdata.kg_stats import kg_statistics
from graphdata.rules import groundings
from graphdata.subgraph import k_hop_enclosing_subgraphs
from graphdata.worlds.base import SPLITS, World

__all__ = ["WorldStatistics", "world_statistics"]


@dataclass(frozen=True)
class WorldStatistics:
    """The measurements of :func:`world_statistics` (definitions in the module docstring).

    Attributes:
        name: The world's name.
        num_entities: Entities.
        num_relations: Relations.
        split_triples: Triples per split.
        cardinality: Relation label mapped to its type (``"1-1"``, ``"1-N"``, ``"N-1"``,
            ``"N-N"``).
        targets_by_length: Valid/test targets per target length (noise excluded).
        targets_by_rule: Valid/test targets per rule name of their shortest grounding.
        noise_targets: Valid/test noise facts.
        multi_grounding_share: Share of valid/test targets with more than one grounding.
        subgraph_median: Median 2-hop enclosing-subgraph size of the sampled test targets,
            in triples.
        subgraph_p90: Its 90th percentile.
        subgraph_targets: How many test targets were sampled.
        shortcut_cooccurrence: ``(s, h)`` mapped to the share of ``h`` facts whose pair ``s``
            links in train.
        shortcut_precision: ``(s, h)`` mapped to the share of ``s``-linked training pairs that
            ``h`` links.
    """

    name: str
    num_entities: int
    num_relations: int
    split_triples: dict[str, int]
    cardinality: dict[str, str]
    targets_by_length: dict[int, int]
    targets_by_rule: dict[str, int]
    noise_targets: int
    multi_grounding_share: float
    subgraph_median: float
    subgraph_p90: float
    subgraph_targets: int
    shortcut_cooccurrence: dict[tuple[str, str], float]
    shortcut_precision: dict[tuple[str, str], float]

    def to_text(self) -> str:
        """A plain-text report, one measurement per line."""
        card = Counter(self.cardinality.values())
        lines = [
            f"world {self.name!r}: {self.num_entities} entities, {self.num_relations} relations, "
            + ", ".join(f"{s} {n}" for s, n in self.split_triples.items())
            + " triples",
            "cardinality: "
            + ", ".join(f"{k} {card.get(k, 0)}" for k in ("1-1", "1-N", "N-1", "N-N"))
            + " ("
            + ", ".join(f"{r} {c}" for r, c in sorted(self.cardinality.items()))
            + ")",
            "valid+test targets by length: "
            + ", ".join(f"L{n} {c}" for n, c in self.targets_by_length.items())
            + f"; noise {self.noise_targets}; more than one grounding "
            f"{self.multi_grounding_share:.2f}",
            "targets by rule: " + ", ".join(f"{r} {c}" for r, c in self.targets_by_rule.items()),
            f"2-hop enclosing subgraph of {self.subgraph_targets} test targets: median "
            f"{self.subgraph_median:.0f}, p90 {self.subgraph_p90:.0f} triples",
        ]
        for pair, share in self.shortcut_cooccurrence.items():
            lines.append(
                f"shortcut {pair[0]} -> {pair[1]}: co-occurs with {share:.2f} of the head facts; "
                f"{self.shortcut_precision[pair]:.2f} of its pairs are heads"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()


def _subgraph_sizes(world: World, max_targets: int, seed: int) -> list[int]:
    ds = world.dataset
    test = world.targets("test")
    if not test:
        return []
    order = np.random.default_rng(seed).permutation(len(test))[:max_targets]
    chosen = [test[i] for i in sorted(order.tolist())]
    ent, rel = ds.entities, ds.relations
    ids = torch.tensor(
        [[ent.id(h), rel.id(r), ent.id(t)] for h, r, t in chosen], dtype=torch.long
    )  # [B, 3]
    mapped = ds.train.mapped_triples  # [E, 3]
    edge_index, edge_type = mapped[:, [0, 2]].t().contiguous(), mapped[:, 1]  # [2, E], [E]
    sizes: list[int] = []
    for start in range(0, ids.shape[0], 16):
        chunk = ids[start : start + 16]
        batch = k_hop_enclosing_subgraphs(
            chunk[:, [0, 2]],
            edge_index,
            edge_type,
            ds.num_entities,
            k=2,
            target_relations=chunk[:, 1],
        )
        sizes.extend(batch.edge_ptr.diff().tolist())
    return sizes


def world_statistics(world: World, *, max_targets: int = 200, seed: int = 0) -> WorldStatistics:
    """Measure what a world stresses (module docstring).

    Args:
        world: The world.
        max_targets: At most this many test targets (a seeded sample) for the subgraph sizes.
            Default 200.
        seed: Seed of that sample. Default 0.

    Returns:
        The :class:`WorldStatistics`.

    Raises:
        GraphDataError: If ``world`` is not a :class:`World` or ``max_targets`` < 1.

    Examples:
        >>> from graphdata.worlds import world
        >>> s = world_statistics(world("academic", size=40), max_targets=10)
        >>> s.cardinality["supervised"], s.noise_targets
        ('1-N', 0)
    """
    if not isinstance(world, World):
        raise GraphDataError(
            f"world: expected a World, got {type(world).__name__}; build one with "
            "graphdata.worlds.world('academic')"
        )
    if not isinstance(max_targets, int) or isinstance(max_targets, bool) or max_targets < 1:
        raise GraphDataError(f"max_targets: expected an int >= 1, got {max_targets!r}")
    ds = world.dataset
    kg = kg_statistics(ds)
    graph = world.train_graph
    by_length: Counter[int] = Counter()
    by_rule: Counter[str] = Counter()
    multi = total = 0
    for split in ("valid", "test"):
        for target in world.targets(split):
            found = [(rule, g) for rule in world.rules for g in groundings(rule, target, graph)]
            if not found:
                raise GraphDataError(
                    f"world: target {target} of {split} has no grounding in train; the split "
                    "guarantee of graphdata.worlds.base.build_world is broken"
                )
            shortest = min(found, key=lambda x: x[0].length)[0]
            by_length[shortest.length] += 1
            by_rule[str(shortest.name)] += 1
            multi += len(found) > 1
            total += 1
    sizes = _subgraph_sizes(world, max_targets, seed)
    train = set(ds.train.to_labeled_triples())
    everything = {t for s in SPLITS for t in ds.splits[s].to_labeled_triples()}
    co: dict[tuple[str, str], float] = {}
    prec: dict[tuple[str, str], float] = {}
    for s, h in world.shortcuts:
        heads = [(x, y) for x, r, y in everything if r == h]
        linked = {(x, y) for x, r, y in train if r == s}
        linked |= {(y, x) for x, y in linked}
        co[(s, h)] = sum(p in linked for p in heads) / max(len(heads), 1)
        head_pairs = set(heads) | {(y, x) for x, y in heads}
        s_pairs = [(x, y) for x, r, y in train if r == s]
        prec[(s, h)] = sum(p in head_pairs for p in s_pairs) / max(len(s_pairs), 1)
    return WorldStatistics(
        name=world.name,
        num_entities=ds.num_entities,
        num_relations=ds.num_relations,
        split_triples={s: len(ds.splits[s]) for s in SPLITS},
        cardinality={r.label: r.cardinality for r in kg.relations},
        targets_by_length=dict(sorted(by_length.items())),
        targets_by_rule=dict(sorted(by_rule.items())),
        noise_targets=sum(len(world.noise_splits[s]) for s in ("valid", "test")),
        multi_grounding_share=multi / max(total, 1),
        subgraph_median=float(np.median(sizes)) if sizes else 0.0,
        subgraph_p90=float(np.percentile(sizes, 90)) if sizes else 0.0,
        subgraph_targets=len(sizes),
        shortcut_cooccurrence=co,
        shortcut_precision=prec,
    )
