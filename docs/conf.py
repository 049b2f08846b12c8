"""Sphinx configuration of the graphlib-ml documentation (``make docs``).

The API reference is built from the Google-style docstrings (autodoc + napoleon, the equations
rendered by MathJax in the browser), the tutorials under ``docs/tutorials/`` are executed during
the build by sphinx-gallery, and nothing is fetched from the network (no intersphinx), so the
build runs where only the package registries are reachable. ``make docs`` runs
``sphinx-build -W --keep-going``: every warning fails the build.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import sys
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS))

# The tutorials draw with matplotlib; the docs build has no display.
os.environ.setdefault("MPLBACKEND", "Agg")
# One torch thread (set before torch is imported): each tutorial is sized for one CPU core, and
# on a shared or busy machine spinning OpenMP threads cost several times their work.
os.environ.setdefault("OMP_NUM_THREADS", "1")

from api_modules import PACKAGES, defining_modules  # noqa: E402  (the reference's table)

import graphdata  # noqa: E402

project = "graphlib-ml"
author = "graphlib-ml contributors"
copyright = "graphlib-ml contributors"  # noqa: A001  (Sphinx's name for the setting)
release = graphdata.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "tutorials/*.rst"]
root_doc = "index"
html_theme = "alabaster"
html_title = f"graphlib-ml {release}"
html_static_path: list[str] = []

# -- autodoc / autosummary / napoleon -------------------------------------------------------------
# Google style only (ruff's pydocstyle convention); ``Shapes:`` is the house section for tensor
# shapes, rendered like ``Returns:``.
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_custom_sections = [("Shapes", "params_style")]
napoleon_use_rtype = False
# Attributes sections as :ivar: fields: a NamedTuple or dataclass field is then described once
# (autodoc documents the fields themselves too).
napoleon_use_ivar = True
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_typehints_format = "short"
autodoc_class_signature = "mixed"
autodoc_default_options = {"show-inheritance": True}
autosummary_generate = True
autosummary_imported_members = False
# The packages are lazy (PEP 562): the modules import torch when their names are used, which the
# build does anyway; nothing is mocked.
autodoc_mock_imports: list[str] = []


def _reexports() -> dict[str, list[str]]:
    """Module -> the objects its ``__all__`` re-exports from another module, as dotted targets.

    Each object is documented once, in the module that defines it; a module that re-exports a
    class or function (``graphdata.triples`` re-exports ``TripleSet`` from
    ``graphdata.tripleset``) excludes it and links to it instead (``_templates/autosummary``).
    """
    found: dict[str, list[str]] = {}
    for modules in PACKAGES.values():
        for name in modules:
            module = importlib.import_module(name)
            targets = [
                f"{obj.__module__}.{obj.__name__}"
                for member in getattr(module, "__all__", ())
                if (inspect.isclass(obj := getattr(module, member)) or inspect.isfunction(obj))
                and obj.__module__ != name
            ]
            if targets:
                found[name] = targets
    return found


def _relative(name: str, package: str) -> str:
    """``name`` relative to ``package``, as autosummary wants after ``automodule:: package``."""
    return name.removeprefix(f"{package}.")


def _write_api_pages() -> None:
    """Write ``api/index.rst`` and one ``api/<package>.rst`` per package of ``PACKAGES``.

    A package page holds the package docstring, a summary table of its ``__all__`` in which
    every name links to its defining module, and the autosummary list of its modules (one page
    each, from ``_templates/autosummary/module.rst``). A name whose module the table does not
    list fails the build here rather than leaving a dangling link.
    """
    out = DOCS / "api"
    out.mkdir(exist_ok=True)
    index = ["API reference", "=============", "", ".. toctree::", "   :maxdepth: 1", ""]
    for package, modules in PACKAGES.items():
        index.append(f"   {package}")
        lines = [package, "=" * len(package), "", f".. automodule:: {package}"]
        # A package that is also its own module (graphlib_ml.cli) documents its members here.
        lines += ["   :members:", ""] if package in modules else [""]
        exports = defining_modules(package)
        if exports and package not in modules:
            lines += [f"Public names (``{package}.__all__``)", "-" * 60, "", ".. autosummary::", ""]
            for name, module in exports.items():
                if module not in modules:
                    raise RuntimeError(
                        f"{package}.{name} is defined in {module}, which the API reference "
                        f"does not list; add {module!r} to PACKAGES[{package!r}] in "
                        "docs/api_modules.py"
                    )
                target = module if module == f"{package}.{name}" else f"{module}.{name}"
                lines.append(f"   ~{_relative(target, package)}")
            lines.append("")
        lines += ["Modules", "-------", "", ".. autosummary::", "   :toctree: generated", ""]
        lines += [f"   {_relative(module, package)}" for module in modules if module != package]
        (out / f"{package}.rst").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "index.rst").write_text("\n".join(index) + "\n", encoding="utf-8")


_write_api_pages()
_REEXPORTS = _reexports()
autosummary_context = {
    "reexports": _REEXPORTS,
    "reexport_names": {m: [t.rsplit(".", 1)[1] for t in ts] for m, ts in _REEXPORTS.items()},
}


_ROOTS = {name.split(".")[0] for name in PACKAGES}


@functools.cache
def _canonical(target: str) -> str | None:
    """``module.Name[.attr]`` -> the dotted path where ``Name`` is described, if elsewhere.

    The packages and some modules re-export names (``kg.Trainer`` is ``kg.training.Trainer``),
    and each object is described once, where it is defined; this lets docstrings and tutorials
    refer to the public short name. Classes and functions name their own module; a constant is
    found through its package's lazy table (:func:`api_modules.defining_modules`).
    """
    parts = target.split(".")
    if parts[0] not in _ROOTS:
        return None  # torch, numpy, ...: not ours (and no intersphinx to link them)
    for cut in range(len(parts) - 1, 0, -1):
        prefix, name, rest = ".".join(parts[:cut]), parts[cut], parts[cut + 1 :]
        try:
            module = importlib.import_module(prefix)
            obj = getattr(module, name)
        except (ImportError, AttributeError):
            continue
        if inspect.ismodule(obj):
            home = obj.__name__
        elif inspect.isclass(obj) or inspect.isfunction(obj):
            home = f"{obj.__module__}.{obj.__qualname__}"
        elif hasattr(module, "__path__"):
            home = f"{defining_modules(prefix).get(name, prefix)}.{name}"
        else:
            return None
        resolved = ".".join([home, *rest])
        return None if resolved == target else resolved
    return None


def _resolve_reexport(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """Resolve a Python cross-reference to a re-exported name at its defining module."""
    if node.get("refdomain") != "py":
        return None
    name, here = node["reftarget"].removeprefix("~"), node.get("py:module") or ""
    # A relative name (``enumerate_paths`` in a graphdata summary line): the current module,
    # then its package.
    for candidate in (name, f"{here}.{name}", f"{here.rpartition('.')[0]}.{name}"):
        target = _canonical(candidate.strip("."))
        if target is not None:
            domain = env.domains["py"]
            return domain.resolve_xref(
                env, node["refdoc"], app.builder, node["reftype"], target, node, contnode
            )
    return None


def setup(app: Any) -> None:
    """Register the re-export resolver (``missing-reference``: tried after the normal lookup)."""
    app.connect("missing-reference", _resolve_reexport)


# -- sphinx-gallery: the tutorials, executed on every build ----------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "tutorials",
    "gallery_dirs": "parts",
    # Every script runs (not only plot_*.py); each prints and draws on one CPU core in seconds.
    "filename_pattern": r".*\.py$",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    # Re-run every tutorial on every build, also when only the library changed.
    "run_stale_examples": True,
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "show_memory": False,
    "matplotlib_animations": False,
    "reset_modules": ("matplotlib",),
    # Output is what the tutorials print; the value of a block's last expression (an Axes) is not.
    "capture_repr": (),
    "backreferences_dir": None,
    "inspect_global_variables": False,
}
