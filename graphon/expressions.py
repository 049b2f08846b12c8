r"""A safe expression language for graphons :math:`W(x, y)` and signals :math:`f(x)`.

``parse_graphon("exp(-abs(x - y))")`` and ``parse_signal("1 + x")`` turn a researcher's formula
(a command-line flag, a config entry) into a vectorised torch function without running any of
the text as Python: the text is parsed with :func:`ast.parse` and every node is checked against
the whitelist below, then turned into a tree of closures over torch operations. Nothing is
passed to ``eval``, ``exec`` or ``compile``, so ``__import__('os')``, attribute access and the
like are refused before anything runs.

Grammar (what is allowed; anything else is refused, naming the column where it starts)::

    expr   := number | name | expr op expr | -expr | +expr | ( expr ) | call
    op     := +  -  *  /  **                       (^ is refused: write ** for a power)
    name   := x  y  pi  e                          (a signal has x only)
    number := 0.5  2  1e-3                         (real literals; no complex, no booleans)
    call   := abs(v) exp(v) log(v) log1p(v) sqrt(v) sin(v) cos(v) tan(v) tanh(v)
              sigmoid(v) pow(v, p) clip(v, lo, hi)
              min(v1, v2, ...) max(v1, v2, ...)    (elementwise, two or more arguments)
              where(cond, a, b)                    (a where cond holds, else b; elementwise)
    cond   := expr cmp expr [cmp expr ...]         (only as where's first argument)
    cmp    := <  <=  >  >=                         (== and != test a null set: refused)

A product is written ``x*y``: ``xy`` is an unknown name. Input is capped at
:data:`MAX_LENGTH` characters on one line and :data:`MAX_DEPTH` levels of nesting. Arithmetic is
elementwise on broadcast tensors in the floating dtype of the points (float64 in the density
code; integer points become float64), so ``9**9**9`` is ``inf``, never a huge Python integer.
A graphon expression must be symmetric and take finite values in :math:`[0, 1]`: both are
checked on the ``65 x 65`` probe grid of :class:`~graphon.graphons.AnalyticGraphon` (and again
by every consumer at the points it evaluates).

Examples:
    >>> W = parse_graphon("x*y")
    >>> W(torch.tensor([0.5, 1.0]), torch.tensor([0.5, 0.75])).tolist()
    [0.25, 0.75]
    >>> f = parse_signal("1 + x")
    >>> f(torch.tensor([0.0, 0.5], dtype=torch.float64)).tolist()
    [1.0, 1.5]
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from functools import reduce
from typing import NoReturn

import torch
from torch import Tensor

from graphdata.errors import GraphDataError, closest_labels
from graphon._validation import check_kinks
from graphon.graphons import AnalyticGraphon

__all__ = [
    "CONSTANTS",
    "FUNCTIONS",
    "GRAMMAR",
    "MAX_DEPTH",
    "MAX_LENGTH",
    "Expression",
    "parse_graphon",
    "parse_signal",
]

#: Longest expression accepted, in characters.
MAX_LENGTH = 1_000
#: Deepest nesting of the syntax tree accepted (``x+x+...+x`` nests one level per ``+``).
MAX_DEPTH = 200
#: Named constants.
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}

_Env = dict[str, Tensor]
_Fn = Callable[[_Env], Tensor]

#: The one-argument functions, each torch's function of the same name.
_UNARY = ("abs", "exp", "log", "log1p", "sqrt", "sin", "cos", "tan", "tanh", "sigmoid")
#: name -> (fewest arguments, most arguments or None for no limit, torch implementation).
_IMPL: dict[str, tuple[int, int | None, Callable[..., Tensor]]] = {
    **{name: (1, 1, getattr(torch, name)) for name in _UNARY},
    "pow": (2, 2, torch.pow),
    "clip": (3, 3, lambda v, lo, hi: torch.minimum(torch.maximum(v, lo), hi)),
    "min": (2, None, lambda *vs: reduce(torch.minimum, vs)),
    "max": (2, None, lambda *vs: reduce(torch.maximum, vs)),
    "where": (3, 3, torch.where),
}
#: The functions and their arguments, as the grammar writes them.
FUNCTIONS: dict[str, str] = {
    **{name: "v" for name in _UNARY},
    **{"pow": "v, p", "clip": "v, lo, hi", "min": "v1, v2, ...", "max": "v1, v2, ..."},
    "where": "cond, a, b",
}
#: Names from numpy, torch or mathematics that mean one of ours.
_ALIASES = {
    "maximum": "max",
    "minimum": "min",
    "amax": "max",
    "amin": "min",
    "clamp": "clip",
    "fabs": "abs",
    "ln": "log",
    "power": "pow",
    "expit": "sigmoid",
    "logistic": "sigmoid",
}
_BINARY: dict[type, tuple[str, Callable[[Tensor, Tensor], Tensor]]] = {
    ast.Add: ("+", torch.add),
    ast.Sub: ("-", torch.sub),
    ast.Mult: ("*", torch.mul),
    ast.Div: ("/", torch.div),
    ast.Pow: ("**", torch.pow),
}
_COMPARE: dict[type, Callable[[Tensor, Tensor], Tensor]] = {
    ast.Lt: torch.lt,
    ast.LtE: torch.le,
    ast.Gt: torch.gt,
    ast.GtE: torch.ge,
}
#: Refused node kinds -> what to say (``{}`` is the piece of text).
_REFUSED: dict[type, str] = {
    ast.Attribute: "attribute access {} is not allowed",
    ast.Subscript: "subscripts ({}) are not allowed",
    ast.Lambda: "lambdas are not allowed",
    **dict.fromkeys(
        (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp),
        "comprehensions are not allowed",
    ),
    ast.IfExp: "'a if c else b' is not allowed; write where(c, a, b)",
    ast.BoolOp: "'and'/'or' are not allowed; nest where(...) or combine with min/max",
    ast.NamedExpr: "assignments (:=) are not allowed",
    **dict.fromkeys((ast.JoinedStr, ast.List, ast.Tuple, ast.Set, ast.Dict), "{} is not a number"),
    ast.Starred: "starred arguments are not allowed",
}
#: The grammar in one line, for ``graphlib graphon list``.
GRAMMAR = (
    "numbers, x, y (graphons) or x (signals), pi, e, + - * / ** (not ^), parentheses, "
    + ", ".join(f"{name}({args})" for name, args in FUNCTIONS.items())
    + " with cond a comparison < <= > >=; write x*y, not xy"
)


class _Compiler:
    """Checks one syntax tree against the whitelist and turns it into closures."""

    def __init__(self, text: str, variables: tuple[str, ...], kind: str) -> None:
        self.text, self.variables, self.kind = text, variables, kind

    def fail(self, node: ast.AST, what: str, fix: str) -> NoReturn:
        column = getattr(node, "col_offset", 0) + 1
        raise GraphDataError(
            f"{self.kind} expression {self.text!r}: {what} at column {column}; {fix}"
        )

    def allowed(self) -> str:
        names = ", ".join([*self.variables, *CONSTANTS])
        return f"the allowed names are {names} and the functions {', '.join(FUNCTIONS)}"

    def visit(self, node: ast.AST, cond: bool = False) -> _Fn:
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.BitXor):
                self.fail(node, "'^' is exclusive or, not a power", "write x**2 for a power")
            if type(node.op) not in _BINARY:
                self.fail(
                    node, f"the operator in {ast.unparse(node)!r} is not allowed", "use + - * / **"
                )
            fn, left, right = (
                _BINARY[type(node.op)][1],
                self.visit(node.left),
                self.visit(node.right),
            )
            return lambda env: fn(left(env), right(env))
        if isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, (ast.USub, ast.UAdd)):
                self.fail(
                    node, f"{ast.unparse(node)!r} is not allowed", "only - and + may prefix a term"
                )
            inner = self.visit(node.operand)
            return (lambda env: -inner(env)) if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Compare):
            if not cond:
                self.fail(
                    node,
                    "a comparison is allowed only as where's condition",
                    "write where(x < y, a, b)",
                )
            return self.compare(node)
        what = _REFUSED.get(type(node), f"{type(node).__name__} nodes are not allowed").format(
            repr(ast.unparse(node)) if isinstance(node, ast.expr) else ""
        )
        self.fail(node, what, f"write one formula of {' and '.join(self.variables)}")

    def constant(self, node: ast.Constant) -> _Fn:
        raw = node.value
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            self.fail(
                node,
                f"the literal {node.value!r} is not allowed",
                "use real numbers such as 0.5 or 2",
            )
        try:
            value = float(raw)
        except OverflowError:  # an int literal beyond float64
            value = math.inf
        if not math.isfinite(value):
            self.fail(node, "the number is too large for float64", "write a finite number")
        return lambda env: env["_like"].new_tensor(value)

    def name(self, node: ast.Name) -> _Fn:
        key = node.id
        if key in self.variables:
            return lambda env: env[key]
        if key in CONSTANTS:
            value = CONSTANTS[key]
            return lambda env: env["_like"].new_tensor(value)
        if key in FUNCTIONS:
            self.fail(node, f"{key!r} is a function", f"call it: {key}({FUNCTIONS[key]})")
        if self.kind == "signal" and key == "y":
            self.fail(node, "a signal is a function of x only, got the name 'y'", "drop y")
        if len(key) > 1 and set(key) <= set(self.variables):
            self.fail(node, f"unknown name {key!r}", f"write {'*'.join(key)} for a product")
        close = closest_labels(key, [*self.variables, *CONSTANTS, *FUNCTIONS], n=3)
        hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
        self.fail(node, f"unknown name {key!r}", hint + self.allowed())

    def call(self, node: ast.Call) -> _Fn:
        if not isinstance(node.func, ast.Name):
            inner = node.func.attr if isinstance(node.func, ast.Attribute) else ""
            hint = f"write {inner}(...)" if inner in FUNCTIONS else self.allowed()
            self.fail(
                node,
                f"only plain function names may be called, got {ast.unparse(node.func)!r}",
                hint,
            )
        key = node.func.id
        if key not in _IMPL:
            if key in self.variables or key in CONSTANTS:
                self.fail(node, f"{key!r} is not a function", f"write {key}*(...) for a product")
            close = [_ALIASES[key]] if key in _ALIASES else []
            close += [c for c in closest_labels(key, FUNCTIONS, n=3) if c not in close]
            hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
            self.fail(
                node, f"unknown function {key!r}", f"{hint}the functions are {', '.join(FUNCTIONS)}"
            )
        if node.keywords:
            self.fail(node, f"{key}() takes no keyword arguments", f"write {key}({FUNCTIONS[key]})")
        low, high, fn = _IMPL[key]
        count = len(node.args)
        if count < low or (high is not None and count > high):
            expected = f"{low} or more arguments" if high is None else f"{low} argument"
            expected += "s" if high is not None and low > 1 else ""
            self.fail(
                node,
                f"{key}() takes {expected}, got {count}",
                f"write {key}({FUNCTIONS[key]})",
            )
        if key == "where" and not isinstance(node.args[0], ast.Compare):
            self.fail(
                node.args[0], "where's condition must be a comparison", "write where(x < y, a, b)"
            )
        args = [
            self.visit(arg, cond=(key == "where" and i == 0)) for i, arg in enumerate(node.args)
        ]
        return lambda env: fn(*(arg(env) for arg in args))

    def compare(self, node: ast.Compare) -> _Fn:
        for op in node.ops:
            if type(op) not in _COMPARE:
                self.fail(
                    node, "only < <= > >= compare here", "== and != test a null set of [0, 1]"
                )
        terms = [self.visit(node.left), *(self.visit(c) for c in node.comparators)]
        ops = [_COMPARE[type(op)] for op in node.ops]

        def chained(env: _Env) -> Tensor:
            values = [term(env) for term in terms]
            pieces = [op(a, b) for op, a, b in zip(ops, values[:-1], values[1:])]
            return reduce(torch.logical_and, pieces)

        return chained


def _depth(tree: ast.AST) -> int:
    """The nesting depth of ``tree``, walked without recursion."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


class Expression:
    r"""A parsed, whitelisted expression of ``variables``, callable on tensors.

    Calling it with one tensor per variable broadcasts them and evaluates the formula
    elementwise; the result has the broadcast shape, also for a constant such as ``"0.5"``.

    Args:
        text: The expression (grammar in the module docstring).
        variables: The variable names, in call order. Default ``("x", "y")``.
        kind: What the expression defines, for messages (``"graphon"``, ``"signal"``).

    Raises:
        GraphDataError: On text that is not a string, too long, on several lines, nested
            deeper than :data:`MAX_DEPTH`, not valid syntax (with the column) or outside the
            grammar (with the column, the allowed names and the closest one).

    Examples:
        >>> Expression("max(x, y)**2")(torch.tensor([0.5]), torch.tensor([0.25])).tolist()
        [0.25]
    """

    def __init__(
        self, text: str, variables: tuple[str, ...] = ("x", "y"), *, kind: str = "graphon"
    ) -> None:
        if not isinstance(text, str):
            raise GraphDataError(
                f"{kind}: expected an expression string, got {type(text).__name__}"
            )
        if len(text) > MAX_LENGTH:
            raise GraphDataError(
                f"{kind} expression: expected at most {MAX_LENGTH} characters, got {len(text)}; "
                "write a shorter formula"
            )
        stripped = text.strip()
        if not stripped:
            raise GraphDataError(
                f"{kind} expression: expected a formula of {' and '.join(variables)}, got "
                f"{text!r}; e.g. 'x*y'"
            )
        if "\n" in stripped or "\r" in stripped:
            raise GraphDataError(
                f"{kind} expression {text!r}: expected one line, got line breaks; write the "
                "formula on one line"
            )
        try:
            tree = ast.parse(stripped, mode="eval")
        except SyntaxError as err:
            column = err.offset or 1
            near = stripped[max(column - 1, 0) : column + 9]
            raise GraphDataError(
                f"{kind} expression {stripped!r}: invalid syntax at column {column} ({err.msg}), "
                f"near {near!r}; check the operators and parentheses (a product is x*y)"
            ) from None
        except (RecursionError, MemoryError):
            tree = None
        if tree is None or _depth(tree) > MAX_DEPTH:
            raise GraphDataError(
                f"{kind} expression {stripped[:40]!r}...: nested deeper than {MAX_DEPTH} levels; "
                "write a flatter formula"
            )
        self.text = stripped
        self.variables = tuple(variables)
        self.kind = kind
        self._fn = _Compiler(stripped, self.variables, kind).visit(tree.body)

    def __call__(self, *points: Tensor) -> Tensor:
        """Evaluate at broadcast points, one tensor per variable, in the points' float dtype."""
        if len(points) != len(self.variables):
            raise GraphDataError(
                f"points: {self.kind} expression {self.text!r} takes {len(self.variables)} "
                f"tensors ({', '.join(self.variables)}), got {len(points)}"
            )
        tensors = [torch.as_tensor(p) for p in points]
        tensors = [p if p.is_floating_point() else p.double() for p in tensors]
        tensors = list(torch.broadcast_tensors(*tensors))
        env = dict(zip(self.variables, tensors))
        env["_like"] = tensors[0]  # constants take its dtype and device
        out = self._fn(env)
        return torch.broadcast_to(out, tensors[0].shape).contiguous()

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"


def _symmetrised(text: str) -> str:
    """``(text + text with x and y exchanged) / 2``, written out (for the symmetry hint)."""
    tree, swapped = ast.parse(text, mode="eval").body, ast.parse(text, mode="eval").body
    for node in ast.walk(swapped):
        if isinstance(node, ast.Name) and node.id in ("x", "y"):
            node.id = "y" if node.id == "x" else "x"
    total = ast.BinOp(ast.BinOp(tree, ast.Add(), swapped), ast.Div(), ast.Constant(2))
    return ast.unparse(total)


def _check_graphon(expr: Expression) -> None:
    """Finite, in [0, 1] and symmetric on the AnalyticGraphon probe grid, else raise."""
    grid = torch.linspace(0.0, 1.0, 65, dtype=torch.float64)
    xs, ys = torch.meshgrid(grid, grid, indexing="ij")  # [65, 65] each
    values = expr(xs, ys)
    where = f"graphon expression {expr.text!r}"
    bad = ~torch.isfinite(values)
    if bool(bad.any()):
        i, j = divmod(int(bad.reshape(-1).nonzero()[0, 0]), 65)
        raise GraphDataError(
            f"{where}: W(x, y) = {float(values[i, j])} at x={float(grid[i]):.4g}, "
            f"y={float(grid[j]):.4g} (e.g. log(0), 1/0, sqrt(-1), an overflow); keep the "
            "arguments in the domain, e.g. log(x + 1e-9)"
        )
    outside = (values < -1e-9) | (values > 1 + 1e-9)
    if bool(outside.any()):
        i, j = divmod(int(outside.reshape(-1).nonzero()[0, 0]), 65)
        raise GraphDataError(
            f"{where}: a graphon takes values in [0, 1], got W({float(grid[i]):.4g}, "
            f"{float(grid[j]):.4g}) = {float(values[i, j]):.6g}; rescale it or write "
            f"clip({expr.text}, 0, 1)"
        )
    gap = (values - values.T).abs()
    if float(gap.max()) > 1e-9:
        i, j = divmod(int(gap.argmax()), 65)
        a, b = float(grid[i]), float(grid[j])
        raise GraphDataError(
            f"{where}: a graphon is symmetric, W(x, y) = W(y, x), got W({a:.4g}, {b:.4g}) = "
            f"{float(values[i, j]):.6g} but W({b:.4g}, {a:.4g}) = {float(values[j, i]):.6g}; "
            f"symmetrise it, e.g. {_symmetrised(expr.text)}"
        )


def parse_graphon(text: str, *, name: str | None = None, kinks: str = "auto") -> AnalyticGraphon:
    r"""Parse a graphon expression :math:`W(x, y)` into a checked :class:`AnalyticGraphon`.

    .. math::
        W(x, y) = \mathrm{expr}(x, y), \qquad 0 \le W \le 1, \quad W(x, y) = W(y, x),

    with the expression in the grammar of the module docstring (a graphon in the sense of
    Lovász, *Large Networks and Graph Limits*, AMS 2012, Section 7.1). Symmetry, finiteness and
    the range are checked on the ``65 x 65`` probe grid; the message names the expression and
    the offending point.

    Args:
        text: The expression, e.g. ``"x*y"`` or ``"exp(-abs(x - y))"``.
        name: The graphon's display name. Default: the expression itself.
        kinks: ``"auto"`` (detect), ``"none"`` or ``"diagonal"``: the declaration passed to
            :class:`AnalyticGraphon` for exact integration along kinks on the diagonal.
            Default ``"auto"``.

    Returns:
        The graphon, evaluated by the whitelisted expression.

    Raises:
        GraphDataError: On text outside the grammar, an asymmetric expression, values outside
            :math:`[0, 1]` or non-finite values on the probe grid, or an unknown ``kinks``.

    Examples:
        >>> W = parse_graphon("(x + y)/2", name="sum")
        >>> W.name, W(torch.tensor(0.25), torch.tensor(0.75)).item()
        ('sum', 0.5)
    """
    check_kinks(kinks)  # before parsing: a bad declaration is refused whatever the text
    expr = Expression(text, ("x", "y"), kind="graphon")
    _check_graphon(expr)
    return AnalyticGraphon(expr, name=name or expr.text, kinks=kinks)


def parse_signal(text: str) -> Callable[[Tensor], Tensor]:
    r"""Parse a signal expression :math:`f(x)` of one variable into a vectorised function.

    The signal of a graphon-signal :math:`(W, f)` (Levie, "A Graphon-Signal Analysis of Graph
    Neural Networks", NeurIPS 2023, arXiv 2305.15987); pass the result to
    :class:`~graphon.graphons.GraphonSignal`. It must be finite on :math:`[0, 1]`, checked on
    65 equispaced points.

    Args:
        text: The expression of ``x``, e.g. ``"1 + x"`` or ``"sin(pi*x)"``.

    Returns:
        The function ``f(x) -> Tensor`` of the shape of ``x`` (an :class:`Expression`).

    Raises:
        GraphDataError: On text outside the grammar, a ``y``, or a non-finite value on the
            probe points.

    Examples:
        >>> parse_signal("x**2")(torch.tensor([0.5])).tolist()
        [0.25]
    """
    expr = Expression(text, ("x",), kind="signal")
    grid = torch.linspace(0.0, 1.0, 65, dtype=torch.float64)
    values = expr(grid)
    bad = ~torch.isfinite(values)
    if bool(bad.any()):
        at = int(bad.nonzero()[0, 0])
        raise GraphDataError(
            f"signal expression {expr.text!r}: f({float(grid[at]):.4g}) = {float(values[at])} "
            "(e.g. log(0), 1/0); keep the arguments in the domain, e.g. log(x + 1e-9)"
        )
    return expr
