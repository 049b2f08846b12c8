"""PyG ``Explanation`` of a path explanation whose edge and node attributes are declared (private).

PyG tells edge attributes from graph-level ones by size: a tensor or list whose length equals
the number of edges is treated as one value per edge
(``torch_geometric.data.storage.EdgeStorage.is_edge_attr``). On a local graph of one triple the
target pair ``edge_label_index`` (shape ``[2, 1]``) then looks like an edge attribute, and with
two triples so do the two ``entity_labels``, so ``get_explanation_subgraph()`` indexed them with
the edge mask and raised ``IndexError`` / ``TypeError``. Declaring which keys are per edge and
per node removes the guess.
"""

from __future__ import annotations

from torch_geometric.explain import Explanation

__all__ = ["PathPygExplanation"]


class PathPygExplanation(Explanation):
    """A ``torch_geometric.explain.Explanation`` whose per-edge and per-node keys are fixed.

    Per edge: ``edge_index``, ``edge_type``, ``edge_mask``; per node: ``node_mask``,
    ``entity_labels``. Everything else (``edge_label_index``, ``target_relation``,
    ``relation_labels``) belongs to the graph, whatever its size.
    """

    #: Keys with one value per edge.
    EDGE_KEYS = frozenset({"edge_index", "edge_type", "edge_mask"})
    #: Keys with one value per node.
    NODE_KEYS = frozenset({"node_mask", "entity_labels"})

    def is_edge_attr(self, key: str) -> bool:
        """Whether ``key`` holds one value per edge (declared, not guessed by size)."""
        return key in self.EDGE_KEYS

    def is_node_attr(self, key: str) -> bool:
        """Whether ``key`` holds one value per node (declared, not guessed by size)."""
        return key in self.NODE_KEYS
