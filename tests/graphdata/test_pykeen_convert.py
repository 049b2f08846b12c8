"""graphdata.pykeen converters and PyKEEN's own readers and writers on our files.

PyKEEN is not a dependency of the test environment: the in-process tests skip without it, and the
``slow`` test runs a script in the Python named by ``GRAPHLIB_PYKEEN_PYTHON`` (a virtual
environment with ``torch==2.13.0 pykeen==1.11.1``; ``graphdata`` comes from this checkout through
``PYTHONPATH``), so PyKEEN itself checks that it reads what we write, with identical ids, and
that we read what it writes.
"""

import json
import os
import pathlib
import subprocess
import sys

import pytest
import torch

from graphdata.errors import GraphDataError
from graphdata.pykeen import from_triples_factory, to_triples_factory
from graphdata.triples import TripleSet, Vocabulary

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _triples():
    # Unsorted vocabularies and an entity in no triple: ids PyKEEN would not derive from labels.
    entities = Vocabulary(["zed", "10", "2", "amy", "lonely"])
    relations = Vocabulary(["spouse", "parent"], kind="relation")
    mapped = torch.tensor([[0, 1, 1], [1, 0, 2], [3, 1, 0], [2, 1, 3]])
    return TripleSet(mapped, entities, relations)


def test_without_pykeen_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pykeen", None)
    monkeypatch.setitem(sys.modules, "pykeen.triples", None)
    with pytest.raises(ImportError, match=r"needs PyKEEN.*pip install pykeen"):
        to_triples_factory(_triples())
    with pytest.raises(GraphDataError, match=r"triples: expected a TripleSet, got list"):
        to_triples_factory([])  # type: ignore[arg-type]
    with pytest.raises(GraphDataError, match=r"tf: expected a PyKEEN TriplesFactory"):
        from_triples_factory(object())


def test_triples_factory_round_trip_is_exact():
    pytest.importorskip("pykeen")
    ts = _triples()
    tf = to_triples_factory(ts)
    assert tf.num_entities == 5 and tf.num_relations == 2
    assert tf.entity_to_id == {"zed": 0, "10": 1, "2": 2, "amy": 3, "lonely": 4}
    assert torch.equal(tf.mapped_triples, ts.mapped_triples)
    back = from_triples_factory(tf)
    assert back.entities == ts.entities and back.relations == ts.relations
    assert torch.equal(back.mapped_triples, ts.mapped_triples)


SCRIPT = r"""
import json, sys, tempfile, pathlib
import numpy as np, torch
from pykeen.datasets import Dataset
from pykeen.triples import TriplesFactory
from graphdata.triples import KGDataset, TripleSet, Vocabulary
from graphdata.pykeen import from_triples_factory, to_triples_factory
from graphdata import formats

out, tmp = {}, pathlib.Path(tempfile.mkdtemp())
entities = Vocabulary(["zed", "10", "2", "amy", 'q"t', "lonely"])
relations = Vocabulary(["spouse", "parent"], kind="relation")
train = TripleSet(torch.tensor([[0, 1, 1], [1, 0, 2], [3, 1, 0], [2, 1, 3], [4, 0, 0]]),
                  entities, relations)
valid = TripleSet(torch.tensor([[1, 1, 0]]), entities, relations)
test = TripleSet(torch.tensor([[3, 0, 2], [0, 0, 4]]), entities, relations)
ds = KGDataset(train, valid, test, name="toy")

# 1. converters, in memory
tf = to_triples_factory(train)
out["tf_ids"] = tf.entity_to_id == {l: i for i, l in enumerate(entities.labels)}
out["tf_triples"] = torch.equal(tf.mapped_triples, train.mapped_triples)
back = from_triples_factory(tf)
out["tf_back"] = back.entities == entities and torch.equal(
    back.mapped_triples, train.mapped_triples)

# 2. our PyKEEN folder, read by PyKEEN
ds.to_folder(tmp / "ours", format="pykeen")
theirs = Dataset.from_directory_binary(tmp / "ours")
for split, key in (("train", "training"), ("valid", "validation"), ("test", "testing")):
    factory = getattr(theirs, key)
    out[f"pykeen_reads_{split}"] = (
        factory.entity_to_id == {l: i for i, l in enumerate(entities.labels)}
        and factory.relation_to_id == {l: i for i, l in enumerate(relations.labels)}
        and torch.equal(factory.mapped_triples, ds.splits[split].mapped_triples)
    )
single = TriplesFactory.from_path_binary(tmp / "ours" / "training")
out["from_path_binary"] = torch.equal(single.mapped_triples, train.mapped_triples)

# 3. PyKEEN's folder, read by us
labeled = np.array([["a", "likes", "b"], ["b", "knows", "c"], ["c", "likes", "a"]], dtype=str)
ptf = TriplesFactory.from_labeled_triples(labeled)
from pykeen.datasets import EagerDataset
pds = EagerDataset(training=ptf, testing=ptf, validation=ptf)
pds.to_directory_binary(tmp / "theirs")
mine = KGDataset.from_folder(tmp / "theirs")
out["we_read_pykeen"] = (
    mine.entities.labels == tuple(sorted(ptf.entity_to_id, key=ptf.entity_to_id.get))
    and mine.relations.labels == tuple(sorted(ptf.relation_to_id, key=ptf.relation_to_id.get))
    and torch.equal(mine.train.mapped_triples, ptf.mapped_triples)
    and torch.equal(mine.test.mapped_triples, ptf.mapped_triples)
)
mapped, e, r = formats.read_pykeen_factory(tmp / "theirs" / "training")
out["we_read_factory"] = torch.equal(mapped, ptf.mapped_triples)
print(json.dumps(out))
"""


@pytest.mark.slow
def test_pykeen_reads_our_files_and_we_read_its_files(tmp_path):
    python = os.environ.get("GRAPHLIB_PYKEEN_PYTHON")
    if not python:
        pytest.skip("set GRAPHLIB_PYKEEN_PYTHON to a Python with pykeen==1.11.1 installed")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [python, "-c", SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    checks = json.loads(done.stdout.strip().splitlines()[-1])
    assert checks and all(checks.values()), checks
