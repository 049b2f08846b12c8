"""graphlib_ml.outputs: JSON is strict (no NaN / Infinity) and names a non-finite value's path."""

from __future__ import annotations

import json
import math

import pytest

from graphdata.errors import GraphDataError
from graphlib_ml.outputs import json_text, write_json


def test_write_json_writes_indented_strict_json_with_null(tmp_path):
    data = {"mrr": 0.5, "amri": None, "ks": [1, 3], "name": "x"}
    path = tmp_path / "out.json"
    write_json(data, path)
    assert path.read_text() == json.dumps(data, indent=2) + "\n"
    assert json.loads(path.read_text())["amri"] is None


@pytest.mark.parametrize(
    "bad, where",
    [
        (math.nan, r"data\['metrics'\]\['both'\]\[1\]\['amri'\]"),
        (math.inf, r"data\['metrics'\]\['both'\]\[1\]\['amri'\]"),
        (-math.inf, r"data\['metrics'\]\['both'\]\[1\]\['amri'\]"),
    ],
)
def test_write_json_refuses_a_non_finite_float_naming_its_key_path(tmp_path, bad, where):
    data = {"ok": 1.0, "metrics": {"both": [{"amri": 0.2}, {"mr": 2.0, "amri": bad}]}}
    path = tmp_path / "out.json"
    with pytest.raises(GraphDataError, match=where + r": expected a finite number .*got .*None"):
        write_json(data, path)
    assert not path.exists()  # nothing written
    with pytest.raises(GraphDataError, match=where):
        json_text(data, indent=1)
