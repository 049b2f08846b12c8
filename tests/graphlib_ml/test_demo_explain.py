import re

import torch

from graphdata.synthetic import BASE_RELATIONS
from graphlib_ml.demo.explain import DemoSettings, _run
from kg.explain.evaluator import EvaluatorConfig


def test_demo_section_writes_figures_it_references(tmp_path):
    settings = DemoSettings(
        num_people=40,
        dim=8,
        epochs=5,
        max_candidates=20,
        num_targets=2,
        evaluator=EvaluatorConfig(steps=5, batch_size=8, num_train_triples=60, hidden=8),
    )
    text = _run(tmp_path, seed=0, device=torch.device("cpu"), settings=settings)
    assert text.startswith("## Explaining predictions (KGExplainer)")
    figures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert figures and all((tmp_path / name).read_bytes()[:4] == b"\x89PNG" for name in figures)
    rows = [line for line in text.splitlines() if line.startswith("| (")]
    assert len(rows) == len(figures) == 2
    # target | all relations | F1 | base-relation paths | F1 | ground truth | rule found
    for row in rows:
        cells = row.strip("|").split("|")
        assert len(cells) == 7 and all(0 <= float(cells[k]) <= 1 for k in (2, 4))
        assert cells[6].strip() in ("yes", "no")
        # The base-relation explanation walks base relations only (unless it names no path).
        assert set(re.findall(r"\[(\w+)\]", cells[3])) <= set(BASE_RELATIONS)
