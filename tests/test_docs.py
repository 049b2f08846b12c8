"""The documentation site's contracts, checked without running Sphinx (``make docs`` builds it).

A library file that cites ``REFERENCES.md`` (a file of the project's working notes that a
user's clone does not have), a public module missing from the API reference, an ``__all__``
name defined in an unlisted module, or a part without a tutorial page fails here in a second.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
LIBRARY = ("graphdata", "kg", "graphon", "spatial", "graphlib_ml")


def _api_modules() -> ModuleType:
    spec = importlib.util.spec_from_file_location("api_modules", DOCS / "api_modules.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("api_modules", module)
    spec.loader.exec_module(module)
    return module


API = _api_modules()
LISTED = {module for modules in API.PACKAGES.values() for module in modules} | set(API.PACKAGES)


def _library_files() -> list[Path]:
    return sorted(path for package in LIBRARY for path in (ROOT / package).rglob("*.py"))


def test_no_library_file_cites_the_working_notes():
    pattern = re.compile(r"REFERENCES")  # REFERENCES.md, or "REFERENCES A.6"
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in _library_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if pattern.search(line)
    ]
    assert len(_library_files()) > 100  # the scan saw the packages
    assert offenders == [], "cite the paper (authors, venue, arXiv id, equation) instead"


def test_the_site_has_its_configuration_and_index():
    assert (DOCS / "conf.py").is_file()
    assert (DOCS / "index.rst").is_file()
    assert (DOCS / "_templates" / "autosummary" / "module.rst").is_file()
    index = (DOCS / "index.rst").read_text(encoding="utf-8")
    assert "parts/index" in index and "api/index" in index


@pytest.mark.parametrize("module", sorted(LISTED))
def test_every_module_of_the_reference_imports(module):
    imported = importlib.import_module(module)
    assert imported.__doc__, f"{module} has no module docstring for its reference page"


def _public_modules(package: str) -> list[str]:
    root = importlib.import_module(package)
    names = [package]
    for info in pkgutil.walk_packages(root.__path__, f"{package}."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return names


@pytest.mark.parametrize("package", ["graphdata", "kg", "graphon", "spatial"])
def test_every_public_library_module_is_in_the_reference(package):
    missing = sorted(set(_public_modules(package)) - LISTED)
    assert missing == [], f"add {missing} to PACKAGES in docs/api_modules.py"


@pytest.mark.parametrize("package", sorted(API.PACKAGES))
def test_every_exported_name_is_defined_in_a_listed_module(package):
    where = API.defining_modules(package)
    exported = [name for name in importlib.import_module(package).__all__ if name[:2] != "__"]
    assert list(where) == exported
    unlisted = {name: module for name, module in where.items() if module not in LISTED}
    assert unlisted == {}


def test_defining_modules_follows_reexports_to_the_definition():
    graphdata = API.defining_modules("graphdata")
    # A class re-exported by graphdata.triples is documented where it is defined ...
    assert graphdata["TripleSet"] == "graphdata.tripleset"
    assert graphdata["KGDataset"] == "graphdata.triples"
    # ... a constant where it is assigned (its #: comment), not where the lazy table points.
    assert graphdata["INVERSE_SUFFIX"] == "graphdata.vocabulary"
    assert API.defining_modules("kg")["OPTIMIZERS"] == "kg.config"
    # A re-exported submodule is itself.
    assert API.defining_modules("spatial")["plot"] == "spatial.plot"


def _tutorial_links() -> dict[str, list[str]]:
    links: dict[str, list[str]] = {}
    for path in sorted((DOCS / "tutorials").glob("*.py")):
        docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        for package in re.findall(r":doc:`/api/([\w.]+)`", docstring):
            links.setdefault(package, []).append(path.name)
    return links


def test_every_part_has_one_tutorial_page():
    links = _tutorial_links()
    assert sorted(links) == sorted(API.PACKAGES)
    assert all(len(pages) == 1 for pages in links.values()), links


@pytest.mark.parametrize("path", sorted((DOCS / "tutorials").glob("*.py")), ids=lambda p: p.name)
def test_tutorials_are_gallery_scripts(path):
    source = path.read_text(encoding="utf-8")
    compile(source, str(path), "exec")
    docstring = ast.get_docstring(ast.parse(source)) or ""
    title, underline = docstring.splitlines()[:2]
    assert underline == "=" * len(title), "sphinx-gallery takes the page title from the docstring"


def test_make_docs_builds_with_warnings_as_errors_and_ci_runs_it():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    rule = makefile[makefile.index("\ndocs:") + 1 :].splitlines()
    recipe = [line for line in rule[1 : rule.index("")] if line.startswith("\t")]
    assert any("sphinx-build -W --keep-going" in line for line in recipe)
    assert any(line.startswith("\trm -rf docs/api") for line in recipe)  # no stale pages
    assert ".[dev,docs]" in makefile
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert ci.index("make docs") > ci.index("make test")
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    extra = next(line for line in pyproject.splitlines() if line.startswith("docs = "))
    assert "sphinx" in extra and "sphinx-gallery" in extra
