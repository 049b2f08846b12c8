import argparse
import itertools
import json
import math

import numpy as np
import pytest
import torch

from graphdata.errors import GraphDataError
from graphlib_ml.cli.graphon import add_subparser, parse_exponents, parse_params, parse_sizes
from graphon.densities import graphon_density
from graphon.graphons import StepGraphon
from graphon.patterns import as_pattern


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
    args = _parser().parse_args(["graphon", "densities", "--graphon", "nope", "--sizes", "5"])
    with pytest.raises(GraphDataError, match=r"--graphon: 'nope' is neither a named graphon"):
        args.func(args)


def _density(argv, capsys):
    args = _parser().parse_args(["graphon", "density", *argv])
    assert args.func(args) == 0
    return capsys.readouterr().out


def _json(argv, capsys):
    text = _density([*argv, "--json"], capsys)
    assert text.count("\n") == 1  # one JSON object, nothing else on stdout
    return json.loads(text)


def test_density_json_of_an_expression_is_the_closed_form(capsys):
    record = _json(["--graphon", "x*y", "--pattern", "triangle"], capsys)
    assert abs(record["value"] - 1 / 27) < 1e-12  # W = xy: prod_v 1/(deg v + 1)
    assert set(record) >= {"value", "error", "bound", "method", "pattern", "graphon"}
    assert record["pattern"] == "triangle" and record["graphon"] == "x*y"
    assert record["exponents"] is None and record["order"] == 128
    assert isinstance(record["bound"], bool) and 0 <= record["error"] < 1e-10
    # the same number as the Python API, to the last bit
    assert record["value"] == graphon_density("triangle", _product()).value


def _product():
    from graphon.expressions import parse_graphon

    return parse_graphon("x*y")


def test_density_human_output_prints_full_precision(capsys):
    text = _density(["--graphon", "x*y", "--pattern", "path3"], capsys)
    lines = dict(line.split(" = ", 1) for line in text.splitlines() if " = " in line)
    assert float(lines["t(F, W)"]) == graphon_density("path3", _product()).value
    assert abs(float(lines["t(F, W)"]) - 1 / 12) < 1e-12
    est = graphon_density("path3", _product())
    word = "bound" if getattr(est, "bound", False) else "estimate"
    assert f"error {word}: {est.error!r} ({est.method})" in text


def test_density_with_a_signal_is_the_closed_form(capsys):
    # int int (1+x)(1+y) xy dx dy = (int_0^1 (x + x^2) dx)^2 = (1/2 + 1/3)^2 = 25/36
    argv = ["--graphon", "x*y", "--pattern", "edge", "--signal", "1 + x", "--exponents", "1,1"]
    record = _json(argv, capsys)
    assert abs(record["value"] - 25 / 36) < 1e-12
    assert record["exponents"] == [1, 1] and record["signal"] == "1 + x"
    # with d = (2, 0): int (1+x)^2 x dx * int y dy = (1/2 + 2/3 + 1/4) / 2 = 17/24
    argv[-1] = "2,0"
    assert abs(_json(argv, capsys)["value"] - 17 / 24) < 1e-12


def _block_sum(probs, measures, edges, k):
    """t(F, W) of a step graphon: the sum over all block maps, written out."""
    total = 0.0
    for sigma in itertools.product(range(len(measures)), repeat=k):
        value = math.prod(measures[s] for s in sigma)
        total += value * math.prod(probs[sigma[u]][sigma[v]] for u, v in edges)
    return total


def test_graphon_file_is_the_step_graphon(tmp_path, capsys):
    probs = np.array([[0.9, 0.2], [0.2, 0.6]])
    np.save(tmp_path / "W.npy", probs)
    tri = [(0, 1), (1, 2), (0, 2)]
    record = _json(["--graphon-file", str(tmp_path / "W.npy"), "--pattern", "triangle"], capsys)
    want = graphon_density("triangle", StepGraphon(probs)).value
    assert record["method"] == "exact" and record["error"] == 0.0
    assert record["value"] == pytest.approx(want, rel=1e-14)
    assert record["value"] == pytest.approx(_block_sum(probs, [0.5, 0.5], tri, 3), rel=1e-14)
    assert record["graphon"] == "W.npy"
    # block measures from a .npy or inside a .npz give the same unequal-block value
    m = np.array([1.0, 3.0])
    want = _block_sum(probs, [0.25, 0.75], tri, 3)
    np.save(tmp_path / "m.npy", m)
    argv = ["--graphon-file", str(tmp_path / "W.npy"), "--measures", str(tmp_path / "m.npy")]
    assert _json(argv, capsys)["value"] == pytest.approx(want, rel=1e-14)
    np.savez(tmp_path / "W.npz", probs=probs, measures=m)
    assert _json(["--graphon-file", str(tmp_path / "W.npz")], capsys)["value"] == pytest.approx(
        want, rel=1e-14
    )


def test_named_graphons_take_params_and_patterns_take_edge_lists(capsys):
    # two equal blocks, p within, q between: t(K3) = (p^3 + 3 p q^2) / 4
    argv = ["--graphon", "sbm", "--param", "num_blocks=2", "--param", "p=0.9", "--param", "q=0.1"]
    named = _json([*argv, "--pattern", "triangle"], capsys)
    listed = _json([*argv, "--pattern", "0-1,1-2,2-0"], capsys)
    assert named["value"] == pytest.approx((0.9**3 + 3 * 0.9 * 0.1**2) / 4, rel=1e-14)
    assert listed["value"] == named["value"] and listed["pattern"] == "0-1,1-2,2-0"
    double = _json(["--graphon", "x*y", "--pattern", "0-1:2"], capsys)["value"]
    assert abs(double - 1 / 9) < 1e-12  # degrees (2, 2): 1/3 * 1/3


def test_kinks_is_passed_only_when_given(monkeypatch, capsys):
    import graphon.densities as densities

    seen = {}
    real = densities.graphon_density

    def spy(pattern, graphon, *, kinks="unset", **kwargs):
        seen["kinks"] = kinks
        return real(pattern, graphon, **kwargs)

    monkeypatch.setattr(densities, "graphon_density", spy)
    _json(["--graphon", "abs(x - y)", "--pattern", "edge"], capsys)
    assert seen["kinks"] == "unset"
    record = _json(["--graphon", "abs(x - y)", "--pattern", "edge", "--kinks", "diagonal"], capsys)
    assert seen["kinks"] == "diagonal" and record["kinks"] == "diagonal"
    assert abs(record["value"] - 1 / 3) < 1e-3  # int int |x - y| = 1/3 (quadrature, kinked)


def test_parsers_of_params_and_exponents():
    assert parse_params(["num_blocks=3", "p = 0.25"]) == {"num_blocks": 3, "p": 0.25}
    assert isinstance(parse_params(["k=3"])["k"], int)
    assert parse_exponents("2, 0,1", as_pattern("path3")) == [2, 0, 1]
    with pytest.raises(GraphDataError, match="--param: expected name=value"):
        parse_params(["p"])
    with pytest.raises(GraphDataError, match="--param: 'p' is given twice"):
        parse_params(["p=1", "p=2"])
    with pytest.raises(GraphDataError, match="--param: p: expected a finite number"):
        parse_params(["p=inf"])
    with pytest.raises(GraphDataError, match="--exponents: expected 3 ints"):
        parse_exponents("1,1", as_pattern("triangle"))
    with pytest.raises(GraphDataError, match="--exponents: expected comma-separated ints >= 0"):
        parse_exponents("1,-1", as_pattern("edge"))


def test_list_prints_the_grammar(capsys):
    args = _parser().parse_args(["graphon", "list"])
    assert args.func(args) == 0
    text = capsys.readouterr().out
    assert "expressions: " in text and "where(cond, a, b)" in text and "x*y, not xy" in text
    assert "edge lists: 0-1,1-2,2-0" in text


def test_densities_takes_expressions_and_edge_lists(tmp_path, capsys):
    out = tmp_path / "d.png"
    argv = ["graphon", "densities", "--graphon", "x*y", "--pattern", "0-1,1-2,2-0"]
    args = _parser().parse_args([*argv, "--sizes", "10", "--samples", "2", "--out", str(out)])
    assert args.func(args) == 0
    captured = capsys.readouterr()
    assert "graphon=x*y pattern=0-1,1-2,2-0" in captured.out
    assert "t(F, W) = 0.037037 (quadrature" in captured.out and captured.err == ""


def test_densities_warns_on_multigraph_patterns_with_bernoulli_edges(tmp_path, capsys):
    from graphon.densities import sample_density
    from graphon.families import make_graphon

    with pytest.warns(UserWarning) as caught:
        sample_density("double_edge", make_graphon("erdos_renyi"), 4, num_graphs=2, seed=0)
    api = str(caught[0].message)
    core = api.split(", so ")[0]  # "pattern 'double_edge' has multi-edges; on 0/1 graphs A∘A = A"
    common = ["graphon", "densities", "--pattern", "double_edge", "--sizes", "6", "--samples", "2"]
    for edges, warned in (("bernoulli", True), ("weighted", False)):
        out = tmp_path / f"{edges}.png"
        args = _parser().parse_args([*common, "--edges", edges, "--out", str(out)])
        assert args.func(args) == 0
        err = capsys.readouterr().err
        assert (f"graphlib: warning: {core}" in err) is warned
        assert ("--edges weighted" in err) is warned


def test_density_matches_torch_step_graphon_for_a_random_matrix(tmp_path, capsys):
    g = torch.Generator().manual_seed(5)
    a = torch.rand(4, 4, generator=g, dtype=torch.float64)
    a = (a + a.T) / 2
    np.save(tmp_path / "A.npy", a.numpy())
    record = _json(
        ["--graphon-file", str(tmp_path / "A.npy"), "--pattern", "0-1,1-2,2-3,3-0"], capsys
    )
    want = float(torch.einsum("ij,jk,kl,li->", a, a, a, a)) / 4**4  # t(C4) = tr(A^4) / n^4
    assert record["value"] == pytest.approx(want, rel=1e-13)


def test_density_warnings_become_one_plain_line(monkeypatch, capsys):
    import warnings

    import graphon.densities as densities

    real = densities.graphon_density

    def warns(*args, **kwargs):
        warnings.warn("graphon_density: the quadrature did not converge", stacklevel=2)
        return real(*args, **kwargs)

    monkeypatch.setattr(densities, "graphon_density", warns)
    args = _parser().parse_args(["graphon", "density", "--graphon", "x*y", "--json"])
    assert args.func(args) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["value"] == pytest.approx(1 / 27, abs=1e-12)
    assert captured.err == "graphlib: warning: graphon_density: the quadrature did not converge\n"
