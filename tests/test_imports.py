"""Cheap imports: the package ``__init__``s are lazy (PEP 562) and plotting keeps the backend.

Each import check runs in a fresh interpreter, since this process has long since imported
everything. ``import kg`` used to take about 6 s because ``graphdata`` imported PyG and AnnData
eagerly; now it imports no submodule at all, and torch comes with the first public name used.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Packages whose ``__init__`` re-exports lazily through ``graphdata._lazy``.
LAZY_PACKAGES = ["graphdata", "kg", "kg.explain", "graphon", "graphon.nn", "spatial"]

#: What no bare package import may load (the slow ones and the ones with global side effects).
HEAVY = ["torch", "torch_geometric", "anndata", "scanpy", "h5py", "matplotlib", "networkx"]


def _loaded_after(code: str, watch: list[str], env: dict[str, str] | None = None) -> list[str]:
    """The modules of ``watch`` in ``sys.modules`` after running ``code`` in a new interpreter."""
    report = f"import json, sys\nprint(json.dumps([m for m in {watch!r} if m in sys.modules]))"
    probe = f"{code}\n{report}"
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("package", [*LAZY_PACKAGES, "graphlib_ml", "spatial.plot"])
def test_bare_import_loads_nothing_heavy(package):
    assert _loaded_after(f"import {package}", HEAVY) == []


@pytest.mark.parametrize(
    ("code", "allowed"),
    [
        # Every public name of kg and kg.explain: torch, but no PyG, AnnData or matplotlib.
        ("from kg import *", []),
        ("from kg.explain import *", []),
        # The KG and dense-batch layer; the AnnData wrappers are separate names.
        ("from graphdata import TripleSet, KGDataset, FilterIndex, DenseGraphBatch, knn_graph", []),
        # graphon.patterns builds patterns with networkx.
        ("from graphon import *", ["networkx"]),
        # The MPNN baseline subclasses PyG's MessagePassing.
        ("from graphon.nn import *", ["torch_geometric", "networkx"]),
        # spatial reads AnnData; plot draws only when called.
        ("from spatial import *", ["anndata", "h5py"]),
    ],
)
def test_first_use_loads_only_what_it_needs(code, allowed):
    loaded = _loaded_after(code, HEAVY)
    assert "torch" in loaded  # the names resolved
    assert set(loaded) - {"torch", *allowed} == set(), loaded


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_lazy_names_are_the_public_api(package):
    module = importlib.import_module(package)
    lazy = {name for names in module._EXPORTS.values() for name in names}
    assert lazy == set(module.__all__)
    assert set(module.__all__) <= set(dir(module))
    for name in module.__all__:
        assert getattr(module, name) is not None, name
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'no_such_name'"):
        module.no_such_name  # noqa: B018


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_type_checking_imports_match_the_lazy_table(package):
    # The `if TYPE_CHECKING:` block (for editors and type checkers) and the runtime table must
    # name the same objects from the same modules.
    module = importlib.import_module(package)
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
    )
    static: dict[str, set[str]] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom), ast.dump(node)
        for alias in node.names:
            submodule = f"{node.module}.{alias.name}"
            where = submodule if submodule in module._EXPORTS else node.module
            static.setdefault(where, set()).add(alias.name)
    assert static == {where: set(names) for where, names in module._EXPORTS.items()}


def test_submodules_stay_reachable_as_attributes():
    import kg

    assert kg.training.Trainer is kg.Trainer
    assert kg.explain.KGExplainer.__module__ == "kg.explain.explainer"
    with pytest.raises(AttributeError):
        kg.no_such_module  # noqa: B018


def test_library_code_never_calls_matplotlib_use():
    offenders = []
    for package in ["graphdata", "kg", "graphon", "spatial", "graphlib_ml"]:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("use", "switch_backend")
                    and getattr(node.func.value, "id", None) in ("matplotlib", "mpl", "plt")
                ):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, offenders


PLOTS = """
from pathlib import Path
import tempfile

import matplotlib

from kg.explain import ExplainedPath, PathExplanation

before = matplotlib.get_backend()
path = ExplainedPath(
    triples=(("a", "parent", "b"), ("b", "parent", "c")), forward=(True, True),
    entities=("a", "b", "c"), individual_score=1.0, gain=1.0,
)
explanation = PathExplanation(
    target=("a", "grandparent", "c"), paths=(path,), triples=path.triples, teacher_score=1.0,
    full_score=1.0, empty_score=0.0, joint_score=1.0, complement_score=0.0,
    full_probability=0.9, joint_probability=0.9, complement_probability=0.1, fid_plus=0.8,
    fid_minus=0.0, characterization=0.9, sparsity=0.5, local_entities=("a", "c", "b", "d"),
    local_triples=(*path.triples, ("d", "parent", "b"), ("a", "sibling", "d")),
    num_candidates=1, truncated=False, stop_reason="exhausted", mode="evaluator", seconds=0.0,
)
with tempfile.TemporaryDirectory() as folder:
    png = explanation.plot(Path(folder) / "explanation.png")
    assert png.read_bytes()[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
assert matplotlib.get_backend() == before == "svg", (before, matplotlib.get_backend())
"""


def test_explanation_plot_leaves_the_backend_alone():
    # A notebook user's backend stands in as "svg": PathExplanation.plot used to switch it to
    # Agg with matplotlib.use. The plot draws on a bare Figure with the Agg canvas instead.
    assert "matplotlib" in _loaded_after(PLOTS, ["matplotlib"], env={"MPLBACKEND": "svg"})


@pytest.mark.parametrize(
    "package", ["graphdata", "kg", "kg.explain", "graphon", "graphon.nn", "spatial"]
)
def test_no_public_function_shares_its_name_with_a_submodule(package):
    # Importing a submodule sets it as the package attribute of the same name, so a function
    # exported under a submodule's name (kg.predict, graphon.cut_distance before the renames)
    # turns into the module as soon as any code imports that submodule. A name may re-export
    # its submodule (spatial.plot) only when that module defines nothing of the same name.
    pkg = importlib.import_module(package)
    folder = Path(pkg.__file__).parent
    clashes = []
    for name in pkg.__all__:
        if (folder / f"{name}.py").exists() or (folder / name / "__init__.py").exists():
            sub = importlib.import_module(f"{package}.{name}")
            inner = getattr(sub, name, None)
            if not inspect.ismodule(getattr(pkg, name)) or (
                inner is not None and not inspect.ismodule(inner)
            ):
                clashes.append(name)
    assert not clashes, f"{package}: public names that are also submodules: {clashes}"
