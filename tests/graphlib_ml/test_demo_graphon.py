import torch

from graphlib_ml.demo.graphon import demo_section


def test_demo_section_writes_figures_and_reports_the_limit(tmp_path):
    text = demo_section(tmp_path, seed=0, device=torch.device("cpu"))
    assert text.startswith("## ")
    for name in ("graphon_convergence.png", "graphon_samples.png"):
        assert name in text and (tmp_path / name).stat().st_size > 0
    assert "t(K3, W) = 0.156250" in text
    assert "value is 0.250" in text
