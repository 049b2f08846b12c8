"""The kg demo's prediction line: filtered through kg.predict, never the query person itself."""

import re

import torch

from graphlib_ml.demo.kg import _section


def test_demo_prediction_excludes_the_query_entity_and_known_answers(tmp_path):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        md = _section(tmp_path, seed=0, device=torch.device("cpu"), num_people=40, epochs=2)
    finally:
        torch.set_num_threads(threads)
    line = next(x for x in md.splitlines() if x.startswith("`graphlib kg predict"))
    query = re.search(r"test query \((\S+), (\S+), \?\)", line)
    assert query is not None and "filtered" in line
    answers = re.findall(r"`(person_\d+)` \(", line)
    assert len(answers) == 3 and query.group(1) not in answers
