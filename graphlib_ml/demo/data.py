"""The data-layer section of ``graphlib demo``: the embedded synthetic KG and a spatial graph."""

from __future__ import annotations

from pathlib import Path

import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from graphdata.device import make_generator
from graphdata.kg_stats import kg_statistics
from graphdata.paths import enumerate_paths
from graphdata.spatial import knn_graph
from graphdata.synthetic import family_kg
from graphlib_ml.outputs import save_figure

__all__ = ["demo_section"]


def demo_section(out_dir: Path, *, seed: int = 0, device: torch.device | str = "cpu") -> str:
    """Describe the synthetic family KG and draw a kNN graph on random points.

    Args:
        out_dir: Folder the figure ``data_knn_graph.png`` is written to.
        seed: Seed of the synthetic KG and of the random points. Default ``0``.
        device: Device the kNN graph is built on. Default ``"cpu"``.

    Returns:
        A markdown section starting with ``## Data layer``.
    """
    world = family_kg(400, seed=seed)
    stats = kg_statistics(world.dataset)
    # Show a held-out triple entailed by a length-3 rule body: the interesting case for explainers.
    h, r, t = next(
        triple
        for triple in world.dataset.test.to_labeled_triples()
        if max(e.length for e in world.explanations_for(triple)) == 3
    )
    explanations = world.explanations_for((h, r, t))

    train = world.dataset.train
    mapped = train.mapped_triples
    paths = enumerate_paths(
        mapped[:, [0, 2]].t(),
        mapped[:, 1],
        train.entities.id(h),
        train.entities.id(t),
        3,
        num_nodes=train.num_entities,
    )

    coords = torch.rand(300, 2, generator=make_generator(seed)).to(device)
    edge_index, _ = knn_graph(coords, 6)
    # A bare Figure on the Agg canvas: no pyplot state, and the caller's backend stays as it is.
    fig = Figure(figsize=(5, 5))
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    xy = coords.cpu()
    src, dst = edge_index.cpu()
    for a, b in zip(src.tolist(), dst.tolist()):
        ax.plot(*xy[[a, b]].t(), color="0.7", lw=0.5, zorder=1)
    ax.scatter(xy[:, 0], xy[:, 1], s=8, zorder=2)
    ax.set(title="kNN graph (k = 6) on 300 random points", aspect="equal", xticks=[], yticks=[])
    save_figure(fig, out_dir / "data_knn_graph.png")

    lines = [
        "## Data layer (graphdata)",
        "",
        "The embedded synthetic family knowledge graph (400 people, planted Horn rules):",
        "",
        "```",
        stats.to_text(),
        "```",
        "",
        "Planted rules:",
        "",
        *[f"- `{rule}`" for rule in world.rules],
        "",
        f"The test triple `{h} {r} {t}` is entailed by {len(explanations)} ground-truth "
        f"explanation(s); the first is `{explanations[0].rule}` through "
        f"`{', '.join(' '.join(step) for step in explanations[0].path)}`. "
        f"Path enumeration finds {len(paths)} relation-labelled paths of length <= 3 between "
        "its head and tail in the training graph.",
        "",
        "![kNN graph](data_knn_graph.png)",
    ]
    return "\n".join(lines)
