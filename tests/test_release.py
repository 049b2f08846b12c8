"""A package people can depend on: one version everywhere, licence, citation, types, changelog."""

import importlib
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from 3.11")

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["graphdata", "kg", "graphon", "spatial", "graphlib_ml"]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
VERSION = PYPROJECT["project"]["version"]


def test_installed_metadata_is_the_pyproject_version():
    # The editable install is rebuilt when pyproject.toml changes (the Makefile's stamp).
    assert metadata.version("graphlib-ml") == VERSION


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_reports_the_version(package):
    assert importlib.import_module(package).__version__ == VERSION


def test_uninstalled_tree_reports_unknown(monkeypatch):
    from graphdata import _version

    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(_version.metadata, "version", missing)
    assert _version.version() == "0+unknown"


def test_cli_version_without_heavy_imports():
    code = (
        "import sys\n"
        "from graphlib_ml.cli import main\n"
        "try:\n"
        "    main(['--version'])\n"
        "except SystemExit as exit:\n"
        "    assert exit.code == 0, exit.code\n"
        "heavy = [m for m in ('torch', 'torch_geometric', 'anndata', 'matplotlib') "
        "if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == f"graphlib {VERSION} (graphlib-ml)"


def test_licence_is_mit_as_pyproject_says():
    assert PYPROJECT["project"]["license"] == {"text": "MIT"}
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    assert "WITHOUT WARRANTY OF ANY KIND" in text


def test_citation_file_names_the_version_and_the_three_papers():
    text = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert re.search(r"^cff-version: 1\.2\.0$", text, re.M)
    assert re.search(rf"^version: {re.escape(VERSION)}$", text, re.M)
    for arxiv in ("2404.03893", "2503.14338", "2409.05804"):  # KGExplainer, IWN, Celcomen
        assert f"arXiv:{arxiv}" in text


def test_citation_file_is_valid_yaml_when_yaml_is_available():
    yaml = pytest.importorskip("yaml", reason="PyYAML is not installed")
    data = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert data["version"] == VERSION
    assert {"title", "authors", "message", "cff-version"} <= set(data)
    for ref in data["references"]:
        assert ref["authors"] and ref["title"] and ref["year"]


def test_changelog_has_a_section_for_this_version():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[{re.escape(VERSION)}\]", text, re.M)
    assert re.search(r"^## \[Unreleased\]", text, re.M)


@pytest.mark.parametrize("package", PACKAGES)
def test_packages_ship_inline_types(package):
    assert (ROOT / package / "py.typed").is_file()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["*"]


def test_scanpy_is_an_extra_not_a_dependency():
    deps = PYPROJECT["project"]["dependencies"]
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert not any(d.startswith("scanpy") for d in deps)
    assert any(d.startswith("scanpy") for d in extras["scanpy"])
    library = [ROOT / p for p in ("graphdata", "kg", "graphon", "spatial", "graphlib_ml")]
    importers = [
        str(path.relative_to(ROOT))
        for folder in library
        for path in folder.rglob("*.py")
        if re.search(r"^\s*(import scanpy|from scanpy)", path.read_text(encoding="utf-8"), re.M)
    ]
    assert not importers, importers
