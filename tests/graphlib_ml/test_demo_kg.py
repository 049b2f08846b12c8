import torch

from graphlib_ml.demo.kg import FIGURE, MODELS, _section


def test_demo_section_writes_figure_and_markdown(tmp_path):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        md = _section(tmp_path, seed=0, device=torch.device("cpu"), num_people=40, epochs=2)
    finally:
        torch.set_num_threads(threads)
    assert md.startswith("## ")
    assert f"]({FIGURE})" in md
    assert (tmp_path / FIGURE).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for name in MODELS:
        assert f"| {name} | " in md
