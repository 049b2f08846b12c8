import argparse

import pytest

from graphdata.errors import GraphDataError
from graphlib_ml.cli.graphon import add_subparser, parse_sizes


def _parser():
    parser = argparse.ArgumentParser(prog="graphlib")
    add_subparser(parser.add_subparsers(dest="command", required=True))
    return parser


def test_densities_prints_a_table_and_writes_a_png(tmp_path, capsys):
    out = tmp_path / "d.png"
    args = _parser().parse_args(
        [
            "graphon",
            "densities",
            "--graphon",
            "erdos_renyi",
            "--pattern",
            "triangle",
            "--sizes",
            "20,40",
            "--samples",
            "3",
            "--device",
            "cpu",
            "--out",
            str(out),
        ]
    )
    assert args.func(args) == 0
    text = capsys.readouterr().out
    assert "graphon=erdos_renyi(0.5)" in text and "t(F, W) = 0.125000 (exact" in text
    rows = [line.split() for line in text.splitlines() if line.strip()[:2] in ("20", "40")]
    assert [r[0] for r in rows] == ["20", "40"]
    assert all(0 <= float(r[3]) <= 1 for r in rows)
    assert out.stat().st_size > 0 and not list(tmp_path.glob(".d.*"))


def test_list_and_bad_sizes(capsys):
    args = _parser().parse_args(["graphon", "list"])
    assert args.func(args) == 0
    assert "narrow" in capsys.readouterr().out
    assert parse_sizes("5,10") == [5, 10]
    with pytest.raises(GraphDataError, match="--sizes"):
        parse_sizes("5,x")
    with pytest.raises(GraphDataError, match=">= 2"):
        parse_sizes("1")
    with pytest.raises(SystemExit):
        _parser().parse_args(["graphon", "densities", "--graphon", "nope"])
