"""The ``kg`` section of ``graphlib demo``: embeddings of the synthetic family KG.

Trains ComplEx and DistMult (their tuned defaults: 1vsAll cross-entropy, reciprocal relations,
N3) on the embedded family world of :func:`graphdata.synthetic.family_kg`, reports filtered
both-sides test metrics, plots the training curves and ranks the tails of one test query.
DistMult's score is symmetric in head and tail, so it cannot tell ``parent`` from
``child_of``; ComplEx can, which the per-relation numbers show.
"""

from __future__ import annotations

import time
from pathlib import Path

import torch
from matplotlib.figure import Figure

from graphdata.atomic import atomic_path
from graphdata.synthetic import family_kg
from graphdata.triples import KGDataset
from kg.prediction import predict
from kg.training import Trainer, TrainingConfig, build_model

__all__ = ["demo_section"]

#: Embedded defaults: people in the family world, models, embedding size, epochs.
NUM_PEOPLE = 300
MODELS = ("complex", "distmult")
DIM = 64
EPOCHS = 40
FIGURE = "kg_training_curve.png"


def demo_section(out_dir: Path, *, seed: int, device: torch.device) -> str:
    """Train two small models on the family KG; write the curve PNG; return markdown.

    About 25 s on one laptop CPU core.

    Args:
        out_dir: Folder for the figure (created if missing).
        seed: Seed of the family world and of training.
        device: Where to train.

    Returns:
        A markdown section starting with ``## `` that references ``kg_training_curve.png``.
    """
    return _section(Path(out_dir), seed=seed, device=device, num_people=NUM_PEOPLE, epochs=EPOCHS)


def _section(
    out_dir: Path, *, seed: int, device: torch.device, num_people: int, epochs: int
) -> str:
    out_dir.mkdir(parents=True, exist_ok=True)
    world = family_kg(num_people, seed=seed)
    dataset = world.dataset
    results = {}
    for name in MODELS:
        config = TrainingConfig.from_defaults(
            name, epochs=epochs, eval_every=2, patience=None, seed=seed, progress=False
        )
        model = build_model(name, dataset, config, dim=DIM).to(device)
        started = time.perf_counter()
        trainer = Trainer(model, config).fit(dataset)
        seconds = time.perf_counter() - started
        results[name] = (trainer, trainer.evaluate(dataset), seconds)
    _plot(results, out_dir / FIGURE)
    return _markdown(dataset, results, device, epochs)


def _markdown(dataset: KGDataset, results: dict, device: torch.device, epochs: int) -> str:
    lines = [
        "## Knowledge-graph embeddings (kg)",
        "",
        f"The synthetic family KG: {dataset.num_entities} people, {dataset.num_relations} "
        f"relations, {len(dataset.train)}/{len(dataset.valid)}/{len(dataset.test)} "
        "train/valid/test triples; valid and test hold only rule-derived triples (grandparent, "
        f"uncle, cousin, ...). Each model: dimension {DIM}, {epochs} epochs, 1vsAll "
        f"cross-entropy with reciprocal relations and N3, Adam, on `{device}`.",
        "",
        "Filtered test metrics, both sides, realistic ranks (PyKEEN's definition; filter = "
        "train + valid + test). A random ranker has AMRI 0.",
        "",
        "| model | MRR | Hits@1 | Hits@3 | Hits@10 | MR | AMRI | train time |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, (_, metrics, seconds) in results.items():
        m = metrics.summary()
        amri = "n/a" if m["amri"] is None else f"{m['amri']:.3f}"  # None: every query has 1 option
        lines.append(
            f"| {name} | {m['mrr']:.3f} | {m['hits_at_1']:.3f} | {m['hits_at_3']:.3f} | "
            f"{m['hits_at_10']:.3f} | {m['mr']:.2f} | {amri} | {seconds:.1f} s |"
        )
    labels = dataset.relations.labels
    per = {name: metrics.per_relation() for name, (_, metrics, _) in results.items()}
    lines += [
        "",
        "Test MRR per relation: DistMult scores (h, r, t) and (t, r, h) alike, so asymmetric "
        "relations suffer.",
        "",
        "| relation | " + " | ".join(results) + " |",
        "|---|" + "---|" * len(results),
    ]
    for r in sorted(per[MODELS[0]]):
        row = " | ".join(f"{per[name][r]['mrr']:.3f}" for name in results)
        lines.append(f"| {labels[r]} | {row} |")
    trainer = results[MODELS[0]][0]
    head, rel, tail = dataset.test.mapped_triples[0].tolist()
    entity_labels = dataset.entities.labels
    # Filtered as `graphlib kg predict` is, but against train + valid only, so the held-out
    # test answer can show up; and without the query person: no relation of the family world
    # is reflexive (nobody is their own spouse or cousin), which the triples cannot say.
    found = predict(
        trainer.model_,
        [(entity_labels[head], labels[rel])],
        known=[dataset.train, dataset.valid],
        top_k=3,
        exclude_self=True,
        reciprocal=trainer.config.reciprocal,
        entity_labels=entity_labels,
        relation_labels=labels,
    )
    ranked = found.to_list()[0]
    truth = entity_labels[tail]
    shown = ", ".join(
        f"`{label}` ({score:.2f}){' ← held-out answer' if label == truth else ''}"
        for label, score in ranked
    )
    lines += [
        "",
        f"`graphlib kg predict --exclude-self` for the test query ({entity_labels[head]}, "
        f"{labels[rel]}, ?) with {MODELS[0]} (filtered: "
        f"{int(found.num_removed[0]) - 1} known train/valid answer(s) removed, and the person "
        f"itself): {shown}.",
        "",
        f"![Training loss and validation MRR per epoch]({FIGURE})",
        "",
    ]
    return "\n".join(lines)


def _plot(results: dict, path: Path) -> None:
    fig = Figure(figsize=(9, 3.4))
    loss_ax, mrr_ax = fig.subplots(1, 2)
    for name, (trainer, _, _) in results.items():
        history = trainer.history_
        loss_ax.plot([h["epoch"] for h in history], [h["loss"] for h in history], label=name)
        valid = [h for h in history if "valid_mrr" in h]
        mrr_ax.plot([h["epoch"] for h in valid], [h["valid_mrr"] for h in valid], "o-", label=name)
    loss_ax.set(xlabel="epoch", ylabel="training loss", title="1vsAll cross-entropy + N3")
    mrr_ax.set(xlabel="epoch", ylabel="filtered MRR", title="validation MRR", ylim=(0, 1))
    for ax in (loss_ax, mrr_ax):
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=110)
