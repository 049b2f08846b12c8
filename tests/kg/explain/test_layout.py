"""Layout of the library: no import circles among the modules of kg, graphdata, graphon, spatial
and graphlib_ml (the CLI engineer's move ended the last one, kg.cli <-> kg.explain.cli), at most
15 kg.explain exports and 25 explainer/evaluator/retrain knobs (issue #16).

The import graph is built with :mod:`ast` from every ``import`` statement of every module,
including function-local imports and ``TYPE_CHECKING`` blocks (a circle broken at run time by a
lazy import is still a circle in the design, issue #16). ``import a.b`` and ``from a import b``
count as edges to ``a.b`` when that is a module, else to ``a``; package ``__init__`` re-exports
are skipped (they are lazy tables, not dependencies of the submodules).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("kg", "graphdata", "graphon", "spatial", "graphlib_ml")


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the library modules it imports (anywhere in its body)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        if path.name == "__init__.py":
            continue
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                    base = f"{base}.{node.module}" if node.module else base
                targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and modules[target].name != "__init__.py":
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_checker_finds_a_planted_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_graph_sees_the_explainer_imports() -> None:
    graph = import_graph()
    assert "kg.explain.local" in graph["kg.explain.explainer"]
    assert "graphdata.errors" in graph["kg.explain.fidelity"]


def test_no_import_cycles() -> None:
    found = cycles(import_graph())
    assert found == [], f"import circles (break them; see issue #16): {found}"


@pytest.mark.parametrize("name", ["kg.explain"])
def test_explain_exports_at_most_15_names(name: str) -> None:
    module = __import__(name, fromlist=["__all__"])
    assert len(module.__all__) <= 15, module.__all__


def test_explainer_refuses_an_evaluator_config_it_would_have_overridden() -> None:
    from graphdata.errors import GraphDataError
    from graphdata.triples import TripleSet
    from kg.distmult import DistMult
    from kg.explain import EvaluatorConfig, ExplainerConfig, KGExplainer

    rows = [("a", "r", "b"), ("b", "r", "c"), ("a", "s", "c")]
    graph = TripleSet.from_labeled_triples(rows)
    for config in (
        ExplainerConfig(hops=1, max_length=2, evaluator=EvaluatorConfig(hops=3, max_length=2)),
        ExplainerConfig(hops=1, max_length=2, evaluator=EvaluatorConfig(hops=1, max_length=5)),
    ):
        with pytest.raises(GraphDataError, match=r"EvaluatorConfig\((hops|max_length)=.*set Eval"):
            KGExplainer(DistMult(3, 2, dim=4), config).fit(graph)


def test_at_most_25_explainer_evaluator_retrain_knobs() -> None:
    import dataclasses

    from kg.explain import EvaluatorConfig, ExplainerConfig, RetrainConfig

    fields = [
        f.name
        for c in (ExplainerConfig, EvaluatorConfig, RetrainConfig)
        for f in dataclasses.fields(c)
    ]
    assert len(fields) <= 25, fields  # 45 before issue #16
