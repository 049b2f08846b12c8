r"""The result of explaining one prediction: chosen paths, their scores and fidelity figures.

A :class:`PathExplanation` is plain data (labels and floats), so it prints
(:meth:`~PathExplanation.to_text`), round-trips through JSON, becomes a networkx graph or a PNG,
and converts to PyG's ``torch_geometric.explain.Explanation`` with an edge mask over the local
triples, so that PyG's mask metrics (``groundtruth_metrics``) apply. Scores are the target's
score :math:`f(\cdot)` under a perturbation of the local graph :math:`G` (distilled evaluator or
local re-training, in the KGE's units); probabilities are :math:`p = \sigma((f - \tau)/\sigma_f)`
with the calibration of the scorer (:meth:`kg.explain.evaluator.DistilledEvaluator.probability`).
Per target, the fidelity figures are

.. math::
    \mathrm{fid}_+ = p(G) - p(G \setminus S), \qquad \mathrm{fid}_- = p(G) - p(S), \qquad
    \mathrm{sparsity} = 1 - |S| / |G|,

and the characterization of these two (:func:`kg.explain.fidelity.characterization_score`).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from graphdata.atomic import write_text_atomic
from graphdata.typing import LabeledTriple, PathLike

if TYPE_CHECKING:
    import networkx as nx
    from matplotlib.figure import Figure
    from torch_geometric.explain import Explanation

__all__ = ["ExplainedPath", "PathExplanation"]


@dataclass(frozen=True)
class ExplainedPath:
    """One chosen path from the target's head to its tail.

    Attributes:
        triples: The path's triples as stored in the graph, in path order.
        forward: Whether each step walks its triple from head to tail.
        entities: The entities visited, the target's head first and its tail last.
        individual_score: :math:`f(p)`, the target's score with only this path present.
        gain: The marginal gain of the greedy objective when the path was added.
    """

    triples: tuple[LabeledTriple, ...]
    forward: tuple[bool, ...]
    entities: tuple[str, ...]
    individual_score: float
    gain: float

    def to_text(self) -> str:
        """The path as ``h -[r]-> x <-[s]- t``."""
        parts = [self.entities[0]]
        for (_, rel, _), fwd, entity in zip(self.triples, self.forward, self.entities[1:]):
            parts.append(f"-[{rel}]->" if fwd else f"<-[{rel}]-")
            parts.append(entity)
        return " ".join(parts)


@dataclass(frozen=True)
class PathExplanation:
    r"""A synergistic path explanation of one predicted triple (module docstring).

    Attributes:
        target: The explained triple ``(head, relation, tail)``.
        paths: The chosen paths, in the order the greedy search added them.
        triples: The explanation's distinct triples :math:`S`: the paths' triples in the order
            they were added (an edge-mask baseline has triples but no paths).
        teacher_score: The KGE's own score of the target.
        full_score: :math:`f(G)`, the score with the whole local graph.
        empty_score: :math:`f(\varnothing)`, with no local triple.
        joint_score: :math:`f(S)`, with only the explanation's triples.
        complement_score: :math:`f(G \setminus S)`.
        full_probability: :math:`p(G)`.
        joint_probability: :math:`p(S)`.
        complement_probability: :math:`p(G \setminus S)`.
        fid_plus: :math:`\mathrm{fid}_+`.
        fid_minus: :math:`\mathrm{fid}_-`.
        characterization: Characterization of :math:`(\mathrm{fid}_+, \mathrm{fid}_-)`.
        sparsity: :math:`1 - |S|/|G|`.
        local_entities: The local graph's entities, head and tail first.
        local_triples: The local graph's triples :math:`G` (target excluded).
        num_candidates: Candidate paths searched.
        truncated: Whether the candidates were capped.
        stop_reason: Why the search ended (:data:`kg.explain.search.STOP_REASONS`).
        mode: ``"evaluator"``, ``"retrain"`` or the name of a baseline.
        seconds: Wall time of the explanation.
        message: A note for the reader (why an explanation is empty, for instance).
        conditions: The triples of :attr:`triples` that are no step of a path: facts on a
            constant at a node of a path (:mod:`kg.explain.patterns.conditions`), such as
            ``fuel(P, fuel_coal)`` for a path that reaches the plant ``P``, or an end's value
            that differs from the other end ("Distinct values"), such as the customer's own
            ``located_in(C, J)`` for a path from ``C`` to a country ``K != J``. Default ``()``.
    """

    target: LabeledTriple
    paths: tuple[ExplainedPath, ...]
    triples: tuple[LabeledTriple, ...]
    teacher_score: float
    full_score: float
    empty_score: float
    joint_score: float
    complement_score: float
    full_probability: float
    joint_probability: float
    complement_probability: float
    fid_plus: float
    fid_minus: float
    characterization: float
    sparsity: float
    local_entities: tuple[str, ...]
    local_triples: tuple[LabeledTriple, ...]
    num_candidates: int
    truncated: bool
    stop_reason: str
    mode: str
    seconds: float
    message: str = ""
    conditions: tuple[LabeledTriple, ...] = ()

    @property
    def is_empty(self) -> bool:
        """Whether the explanation holds no triple."""
        return not self.triples

    def to_text(self) -> str:
        """A human-readable summary: target, paths with scores, fidelity figures."""
        h, r, t = self.target
        lines = [f"explanation of ({h}, {r}, {t}) [mode {self.mode}, {self.seconds:.2f} s]"]
        lines.append(
            f"  teacher score {self.teacher_score:.4f}; f(G) {self.full_score:.4f}, "
            f"f(S) {self.joint_score:.4f}, f(G\\S) {self.complement_score:.4f}, "
            f"f(empty) {self.empty_score:.4f}"
        )
        if self.message:
            lines.append(f"  note: {self.message}")
        for i, path in enumerate(self.paths, start=1):
            lines.append(
                f"  path {i}: {path.to_text()}  (alone {path.individual_score:.4f}, "
                f"gain {path.gain:.4f})"
            )
        for h_, r_, t_ in self.conditions:
            lines.append(f"  condition: ({h_}, {r_}, {t_})")
        lines.append(
            f"  fid+ {self.fid_plus:.3f}  fid- {self.fid_minus:.3f}  characterization "
            f"{self.characterization:.3f}  sparsity {self.sparsity:.3f} ({len(self.triples)} of "
            f"{len(self.local_triples)} local triples; {self.num_candidates} candidate paths"
            f"{', capped' if self.truncated else ''}; stop: {self.stop_reason})"
        )
        return "\n".join(lines)

    # ---- JSON ------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The explanation as JSON-ready nested dicts and lists."""
        return dataclasses.asdict(self)

    def to_json(self, path: PathLike | None = None) -> str:
        """Serialise to JSON; also write it atomically to ``path`` when given.

        Args:
            path: Optional destination file.

        Returns:
            The JSON text.
        """
        text = json.dumps(self.to_dict(), indent=1, allow_nan=False)  # no figure is NaN
        if path is not None:
            write_text_atomic(path, text)
        return text

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PathExplanation:
        """Rebuild from :meth:`to_dict` output."""
        fields = dict(data)
        fields["target"] = tuple(fields["target"])
        fields["triples"] = tuple(tuple(t) for t in fields["triples"])
        fields["local_entities"] = tuple(fields["local_entities"])
        fields["local_triples"] = tuple(tuple(t) for t in fields["local_triples"])
        fields["conditions"] = tuple(tuple(t) for t in fields.get("conditions", ()))
        fields["paths"] = tuple(
            ExplainedPath(
                triples=tuple(tuple(t) for t in p["triples"]),
                forward=tuple(p["forward"]),
                entities=tuple(p["entities"]),
                individual_score=p["individual_score"],
                gain=p["gain"],
            )
            for p in fields["paths"]
        )
        return cls(**fields)

    @classmethod
    def from_json(cls, text: str) -> PathExplanation:
        """Rebuild from :meth:`to_json` output.

        Args:
            text: The JSON text.

        Returns:
            An equal explanation.
        """
        return cls.from_dict(json.loads(text))

    # ---- conversions -----------------------------------------------------------------------

    def to_networkx(self) -> nx.MultiDiGraph:
        """The local graph as a ``MultiDiGraph``; edges carry ``relation`` and ``in_explanation``.

        The target is added as an edge with ``target=True`` (it is not a local triple).
        """
        from kg.explain._render import to_networkx

        return to_networkx(self)

    def figure(self, *, context: bool = True) -> Figure:
        """The explanation subgraph drawn on a bare matplotlib ``Figure`` (Agg canvas).

        The target is a dashed crimson arrow; each path has its own colour and a legend entry
        with its text; edges between the same two nodes are bent apart (so a length-1 path
        beside the target is a visible arc); relation labels sit at their edge's midpoint in a
        box and are moved apart where they would overlap. No pyplot state is touched.

        Args:
            context: Also draw the other local triples between drawn nodes, in grey. Default
                True.

        Returns:
            The figure, ready for ``savefig``.
        """
        from kg.explain._render import figure

        return figure(self, context=context)

    def plot(self, path: PathLike, *, context: bool = True) -> Path:
        """Draw :meth:`figure` (the explanation subgraph, with a legend) to a PNG, atomically.

        Args:
            path: The PNG file to write.
            context: Also draw the other local triples, faintly. Default True.

        Returns:
            The path written.
        """
        from kg.explain._render import plot

        return plot(self, Path(path), context=context)

    def to_pyg_explanation(self) -> Explanation:
        """PyG ``Explanation`` with ``edge_mask`` 1 on the explanation's local triples, else 0.

        Nodes are :attr:`local_entities` (head 0, tail 1), edges :attr:`local_triples`;
        ``edge_type`` indexes ``relation_labels``, ``edge_label_index`` is the target pair
        ``[[0], [1]]``, so ``get_explanation_subgraph()`` returns exactly the chosen triples and
        ``get_complement_subgraph()`` the others. There is no ``node_mask``: every local entity
        stays. The object declares its per-edge keys (``edge_index``, ``edge_type``,
        ``edge_mask``) instead of letting PyG guess them by size, which on a local graph of one
        or two triples took the target pair or the entity labels for edge attributes.

        Returns:
            A ``torch_geometric.explain.Explanation`` (a subclass fixing those keys).
        """
        from kg.explain._pyg import PathPygExplanation

        index = {entity: i for i, entity in enumerate(self.local_entities)}
        relations = sorted({r for _, r, _ in self.local_triples} | {self.target[1]})
        rel_index = {r: i for i, r in enumerate(relations)}
        chosen = set(self.triples)
        triples = self.local_triples
        edge_index = torch.tensor(
            [[index[h] for h, _, _ in triples], [index[t] for _, _, t in triples]], dtype=torch.long
        ).view(2, -1)
        return PathPygExplanation(
            edge_index=edge_index,
            edge_type=torch.tensor([rel_index[r] for _, r, _ in triples], dtype=torch.long),
            edge_mask=torch.tensor([float(t in chosen) for t in triples]),
            edge_label_index=torch.tensor([[0], [1]]),
            target_relation=rel_index[self.target[1]],
            relation_labels=relations,
            entity_labels=list(self.local_entities),
            num_nodes=len(self.local_entities),
        )
