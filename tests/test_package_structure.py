"""Package-level contracts: import layout, public docstrings, the one-way dependency rule."""

import ast
import importlib
import inspect
import pkgutil
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["graphdata", "kg", "graphon", "spatial", "graphlib_ml"]


def test_stdlib_graphlib_is_not_shadowed():
    # The reason the shared layer is called graphdata: `graphlib` is a standard-library module.
    import graphlib

    assert hasattr(graphlib, "TopologicalSorter")
    assert not (ROOT / "graphlib").exists()


def _modules(package: str):
    pkg = importlib.import_module(package)
    yield pkg
    for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{package}."):
        yield importlib.import_module(info.name)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_has_a_docstring(package):
    missing = []
    for module in _modules(package):
        if module.__name__.rsplit(".", 1)[-1].startswith("_") and not module.__name__.endswith(
            "__init__"
        ):
            continue
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if not getattr(obj, "__module__", "").startswith(package):
                continue  # a re-exported foreign object, e.g. torch.Tensor in graphdata.typing
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and not inspect.getdoc(obj):
                missing.append(f"{module.__name__}.{name}")
    assert not missing, f"public names without a docstring: {missing}"


def _imported_packages(path: Path) -> set[str]:
    """Top-level names of the absolute imports in ``path``."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", ["graphdata", "kg", "graphon", "spatial"])
def test_dependencies_point_one_way(package):
    # graphdata imports no part; the parts import graphdata but never each other.
    others = {"kg", "graphon", "spatial", "graphlib_ml"} - {package}
    offenders = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in (ROOT / package).rglob("*.py")
        for name in _imported_packages(path) & others
    ]
    assert not offenders, offenders


def test_python_version_floor():
    assert sys.version_info >= (3, 10)


@pytest.mark.parametrize("folder", [*PACKAGES, "benchmarks", "examples", "tests"])
def test_sources_hold_no_control_characters(folder):
    # A LaTeX escape typed into a non-raw string, or pasted through one, becomes a control
    # character: "\\big" was a backspace and "\\approx" a bell, so the rendered equation of
    # spatial's SimulatedTissue.to_anndata read "Poisson ig(d (1 + x) ig)".
    bad = {
        f"{path.relative_to(ROOT)}:{number}": repr(line.strip())
        for path in sorted((ROOT / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", line)
    }
    assert not bad, bad
