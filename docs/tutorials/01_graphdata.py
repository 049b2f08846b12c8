r"""
graphdata: the shared data layer
================================

:mod:`graphdata` holds what the three parts share: knowledge-graph triples with their
vocabularies and labelled TSV I/O, the filter index of filtered evaluation, the synthetic
family world with planted Horn rules, enclosing subgraphs and path enumeration, spatial
neighbour graphs, and the error type every part raises. API: :doc:`/api/graphdata`.
"""

# %%
# A knowledge graph with planted rules
# ------------------------------------
# :func:`graphdata.family_kg` generates a family world: base facts (``parent``, ``spouse``, ...)
# and triples derived from them by Horn rules, split into train/valid/test with one shared
# vocabulary. Every derived triple keeps its ground-truth explanations.
from graphdata import family_kg, kg_statistics

world = family_kg(60, seed=0)
dataset = world.dataset
print(dataset.num_entities, "entities,", dataset.num_relations, "relations")
print({name: len(split) for name, split in dataset.splits.items()})
print(world.rules[0])

# %%
# The statistics of a dataset: counts per split and, per relation, its cardinality type
# (1-1, 1-N, N-1, N-N, after Bordes et al., NeurIPS 2013).
print(kg_statistics(dataset, name="family"))

# %%
# Labelled TSV files, round trip
# ------------------------------
# :meth:`graphdata.KGDataset.to_folder` writes ``train.txt``, ``valid.txt`` and ``test.txt`` as
# ``head<TAB>relation<TAB>tail`` (the PyKEEN / LibKGE format, written atomically), and
# :meth:`~graphdata.KGDataset.from_folder` reads them back.
import tempfile

import torch

from graphdata import KGDataset

with tempfile.TemporaryDirectory() as folder:
    dataset.to_folder(folder)
    again = KGDataset.from_folder(folder)
same = all(
    again.splits[name].to_labeled_triples() == dataset.splits[name].to_labeled_triples()
    for name in dataset.splits
)
print("round trip identical:", same)

# %%
# Ground truth, subgraphs and paths
# ---------------------------------
# A derived test triple, its planted explanations, and the relation-labelled paths that join
# its head and tail in the training graph (what :mod:`kg.explain` searches over).
from graphdata import enumerate_paths, k_hop_enclosing_subgraph

head, relation, tail = next(t for t in dataset.test.to_labeled_triples() if t[1] == "uncle")
print((head, relation, tail), "<-", world.explanations_for((head, relation, tail))[0])

train = dataset.train
edge_index = torch.stack([train.mapped_triples[:, 0], train.mapped_triples[:, 2]])
edge_type = train.mapped_triples[:, 1]
h, t = dataset.entities.id(head), dataset.entities.id(tail)
sub = k_hop_enclosing_subgraph(h, t, edge_index, edge_type, dataset.num_entities, k=2)
paths = enumerate_paths(edge_index, edge_type, h, t, 3, num_nodes=dataset.num_entities)
print("enclosing subgraph:", sub.nodes.numel(), "nodes;", len(paths), "paths of length <= 3")

# %%
# Spatial neighbour graphs
# ------------------------
# :func:`graphdata.knn_graph` builds the directed k-nearest-neighbour graph of points (edges
# ``j -> i``, exact, deterministic ties), the graph Celcomen (:mod:`spatial`) runs on.
from graphdata import knn_graph

coords = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [5.0, 5.0]])
edge_index, distances = knn_graph(coords, k=1)
print(edge_index.tolist(), [round(d, 3) for d in distances.tolist()])

# %%
# Errors name the argument, what was expected, what arrived and the fix:
from graphdata import GraphDataError

try:
    knn_graph(coords, k=4)
except GraphDataError as error:
    print(error)
