import ast
import inspect
import re

import numpy as np
import pytest
import torch

from graphdata.errors import GraphDataError
from graphon import expressions
from graphon.densities import graphon_density
from graphon.expressions import MAX_LENGTH, Expression, parse_graphon, parse_signal
from graphon.families import make_graphon
from graphon.graphons import AnalyticGraphon, GraphonSignal

RNG = np.random.default_rng(7)
X, Y = RNG.random(200), RNG.random(200)


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


# (expression, numpy closed form); several are not graphons (asymmetric or out of [0, 1]),
# which Expression evaluates and parse_graphon would refuse.
CASES = [
    ("x*y", lambda x, y: x * y),
    ("x - y/2", lambda x, y: x - y / 2),
    ("exp(-abs(x - y))", lambda x, y: np.exp(-np.abs(x - y))),
    ("(x**2 + y**2 + sqrt(x) + sqrt(y))/4", lambda x, y: (x**2 + y**2 + x**0.5 + y**0.5) / 4),
    ("sigmoid(2*(x**2 + y**2))", lambda x, y: _sigmoid(2 * (x**2 + y**2))),
    ("log1p(max(x, y)/2)", lambda x, y: np.log1p(np.maximum(x, y) / 2)),
    ("min(x, y, 0.5)", lambda x, y: np.minimum(np.minimum(x, y), 0.5)),
    ("max(x, 2*y, 0.3, x*y)", lambda x, y: np.maximum.reduce([x, 2 * y, 0.3 + 0 * x, x * y])),
    ("clip(x + y - 0.5, 0, 1)", lambda x, y: np.clip(x + y - 0.5, 0, 1)),
    ("pow(x*y, 0.7) + 1e-3", lambda x, y: (x * y) ** 0.7 + 1e-3),
    ("abs(sin(pi*x)*sin(pi*y))", lambda x, y: np.abs(np.sin(np.pi * x) * np.sin(np.pi * y))),
    ("tanh(x + y)/tanh(2)", lambda x, y: np.tanh(x + y) / np.tanh(2)),
    ("cos(x - y) * tan(x*y/2)", lambda x, y: np.cos(x - y) * np.tan(x * y / 2)),
    ("log(1 + x*y) - -x", lambda x, y: np.log(1 + x * y) + x),
    ("e**(-(x + y)) * +2", lambda x, y: np.exp(-(x + y)) * 2),
    ("2**-x**2", lambda x, y: 2.0 ** -(x**2)),  # ** binds tighter than unary minus
    ("where(x + y < 1, x*y, 0.5)", lambda x, y: np.where(x + y < 1, x * y, 0.5)),
    ("where(0.2 <= x < 0.7, y, 1 - y)", lambda x, y: np.where((0.2 <= x) & (x < 0.7), y, 1 - y)),
    ("where(x >= y, x, y) - where(x > y, y, x)", lambda x, y: np.abs(x - y)),
]


@pytest.mark.parametrize(("text", "oracle"), CASES, ids=[c[0] for c in CASES])
def test_values_match_numpy_closed_forms_at_random_points(text, oracle):
    got = Expression(text)(torch.from_numpy(X), torch.from_numpy(Y))
    assert got.dtype == torch.float64
    np.testing.assert_allclose(got.numpy(), oracle(X, Y), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("exp(-abs(x - y))", "exp_abs_diff"),
        ("(x + y)/4 + 0.25", "affine"),
        ("sigmoid(max(x, y)**2 + min(x, y)**4)", "logistic_max_min"),
        ("exp(-(min(x, y) + sqrt(x) + sqrt(y))/2)", "exp_min_sqrt"),
    ],
)
def test_expressions_equal_the_named_graphons(text, name):
    mine, named = parse_graphon(text), make_graphon(name)
    x, y = torch.from_numpy(X), torch.from_numpy(Y)
    assert isinstance(mine, AnalyticGraphon) and mine.name == text
    assert torch.allclose(mine(x, y), named(x, y), rtol=1e-14, atol=0)


def test_broadcasting_constants_and_dtypes():
    expr = Expression("x*y + 0.5")
    out = expr(torch.tensor([[0.0], [1.0], [0.5]]), torch.tensor([[0.0, 0.5, 1.0, 0.25]]))
    assert out.shape == (3, 4) and out.dtype == torch.float32
    assert out[1].tolist() == [0.5, 1.0, 1.5, 0.75]
    constant = parse_graphon("0.25")
    grid = torch.linspace(0, 1, 5, dtype=torch.float64)
    assert constant.matrix(grid).shape == (5, 5) and bool((constant.matrix(grid) == 0.25).all())
    assert Expression("x/2", ("x",))(torch.tensor([1, 3])).tolist() == [0.5, 1.5]  # ints -> f64
    with pytest.raises(GraphDataError, match="takes 2 tensors"):
        expr(torch.zeros(2))


def test_densities_of_parsed_graphons_and_signals_match_closed_forms():
    # W = xy: t(K3) = 1/27; with f(x) = x and d = (1,1,1): 1/64 (REFERENCES B.2).
    product = parse_graphon("x*y")
    assert graphon_density("triangle", product).value == pytest.approx(1 / 27, abs=1e-12)
    ws = GraphonSignal(product, parse_signal("x"))
    est = graphon_density("triangle", ws, exponents=[1, 1, 1])
    assert est.value == pytest.approx(1 / 64, abs=1e-12)
    # int (1+x) x dx = 5/6 per vertex of the edge
    ws = GraphonSignal(product, parse_signal("1 + x"))
    assert graphon_density("edge", ws, exponents=[1, 1]).value == pytest.approx(25 / 36, abs=1e-12)


def test_signal_values_and_refusals():
    f = parse_signal("sin(pi*x)**2 + 1")
    grid = torch.from_numpy(X)
    np.testing.assert_allclose(f(grid).numpy(), np.sin(np.pi * X) ** 2 + 1, rtol=1e-14)
    with pytest.raises(GraphDataError, match="function of x only, got the name 'y'"):
        parse_signal("x + y")
    with pytest.raises(GraphDataError, match=r"signal expression 'log\(x\)': f\(0\) = -inf"):
        parse_signal("log(x)")


REFUSED = [
    ("__import__('os')", r"unknown function '__import__'"),
    ("__import__('os').system('touch pwned')", r"only plain function names may be called"),
    ("x.__class__", r"attribute access 'x.__class__' is not allowed at column 1"),
    ("().__class__.__bases__[0]", r"(attribute access|subscripts)"),
    ("[x for x in y]", r"comprehensions are not allowed"),
    ("sum(v for v in (x, y))", r"unknown function 'sum'"),
    ("lambda: 1", r"lambdas are not allowed"),
    ("(lambda x: x)(y)", r"only plain function names may be called"),
    ("x[0]", r"subscripts \('x\[0\]'\)"),
    ("(z := x)", r"assignments"),
    ("x if y else 1", r"write where\(c, a, b\)"),
    ("x and y", r"'and'/'or' are not allowed"),
    ("'a'", r"the literal 'a' is not allowed"),
    ("True", r"the literal True is not allowed"),
    ("1j", r"the literal 1j is not allowed"),
    ("1e999", r"too large for float64"),
    ("x % y", r"the operator in 'x % y' is not allowed at column 1; use \+ - \* / \*\*"),
    ("x^2", r"'\^' is exclusive or.*write x\*\*2"),
    ("not x", r"only - and \+ may prefix"),
    ("x < y", r"comparison is allowed only as where's condition"),
    ("where(x == y, 1, 0)", r"== and != test a null set"),
    ("where(x, 1, 0)", r"where's condition must be a comparison at column 7"),
    ("maximum(x, y)", r"unknown function 'maximum' at column 1; did you mean 'max'\?"),
    ("clamp(x*y, 0, 1)", r"did you mean 'clip'"),
    ("expp(x)", r"did you mean 'exp'"),
    ("np.exp(x)", r"got 'np.exp' at column 1; write exp\(\.\.\.\)"),
    ("exp(x, y)", r"exp\(\) takes 1 argument, got 2"),
    ("min(x)", r"min\(\) takes 2 or more arguments, got 1"),
    ("exp(x=1)", r"no keyword arguments"),
    ("exp", r"'exp' is a function at column 1; call it: exp\(v\)"),
    ("x(y)", r"'x' is not a function at column 1; write x\*\(\.\.\.\)"),
    ("xy", r"unknown name 'xy' at column 1; write x\*y for a product"),
    ("2*yxx", r"unknown name 'yxx' at column 3; write y\*x\*x"),
    ("x*z", r"unknown name 'z' at column 3.*allowed names are x, y, pi, e"),
    ("x +* y", r"invalid syntax at column 4"),
    ("(x + y", r"invalid syntax"),
    ("x\n+ y", r"expected one line"),
    ("   ", r"expected a formula of x and y"),
    ("x" + "+x" * (MAX_LENGTH // 2), rf"expected at most {MAX_LENGTH} characters"),
    ("-" * 300 + "x*y", r"nested deeper than 200 levels"),
]


@pytest.mark.parametrize(("text", "message"), REFUSED, ids=[t[:30] for t, _ in REFUSED])
def test_outside_the_grammar_is_refused_with_the_reason(text, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(GraphDataError, match=message):
        parse_graphon(text)
    assert not (tmp_path / "pwned").exists()


def test_the_module_never_evaluates_text():
    tree = ast.parse(inspect.getsource(expressions))
    called = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert "parse" in {
        n.func.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
    }
    assert not called & {"eval", "exec", "compile", "__import__"}
    # the one getattr reads torch functions named in the fixed _UNARY table
    assert expressions._IMPL["sqrt"][2] is torch.sqrt
    with pytest.raises(GraphDataError, match="graphon: expected an expression string"):
        Expression(123)


def test_graphons_must_be_symmetric_in_range_and_finite():
    with pytest.raises(GraphDataError, match=r"'x\*y\*\*2': a graphon is symmetric") as err:
        parse_graphon("x*y**2")
    # the suggested symmetrisation is itself a valid graphon, (xy^2 + yx^2) / 2
    hint = re.search(r"e\.g\. (.*)$", str(err.value)).group(1)
    fixed = parse_graphon(hint)
    x, y = torch.from_numpy(X), torch.from_numpy(Y)
    assert torch.allclose(fixed(x, y), (x * y**2 + y * x**2) / 2, rtol=1e-14)
    with pytest.raises(GraphDataError, match=r"got W\(0, 1\) = 0 but W\(1, 0\) = 1"):
        parse_graphon("x")
    with pytest.raises(GraphDataError, match=r"values in \[0, 1\].*clip\(2\*x\*y, 0, 1\)"):
        parse_graphon("2*x*y")
    with pytest.raises(GraphDataError, match=r"'log\(x\*y\)': W\(x, y\) = -inf at x=0, y=0"):
        parse_graphon("log(x*y)")


def test_name_and_kinks_pass_through():
    assert parse_graphon("x*y", name="product").name == "product"
    with pytest.raises(GraphDataError, match="kinks: expected one of"):
        parse_graphon("x*y", kinks="sometimes")
    declared = parse_graphon("abs(x - y)", kinks="diagonal")
    assert declared.kinks == "diagonal" and parse_graphon("x*y").kinks == "auto"
