"""The API reference's table: each documented package -> its public modules.

``docs/conf.py`` writes one page per package from this table (``docs/api/<package>.rst``:
the package docstring, a summary of its ``__all__``, and one autosummary page per module), and
``tests/test_docs.py`` checks, without running Sphinx, that every listed module imports, that
every public module of the library is listed, and that every name of a package's ``__all__`` is
defined in a listed module. A new module is one line here.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import types
from pathlib import Path

#: Package -> its public modules, in reading order. ``kg.explain.evaluator`` is documented on
#: the ``kg.explain`` page, the ``graphlib`` command on the ``graphlib_ml.cli`` page.
PACKAGES: dict[str, list[str]] = {
    "graphdata": [
        "graphdata.vocabulary",
        "graphdata.tripleset",
        "graphdata.triples",
        "graphdata.formats",
        "graphdata.pykeen",
        "graphdata.datasets",
        "graphdata.filter_index",
        "graphdata.kg_stats",
        "graphdata.synthetic",
        "graphdata.rules",
        "graphdata.rules.syntax",
        "graphdata.rules.joins",
        "graphdata.rules.scoring",
        "graphdata.worlds",
        "graphdata.worlds.base",
        "graphdata.worlds.academic",
        "graphdata.worlds.geography",
        "graphdata.worlds.biology",
        "graphdata.worlds.software",
        "graphdata.worlds.corporate",
        "graphdata.worlds.media",
        "graphdata.worlds.sports",
        "graphdata.worlds.travel",
        "graphdata.worlds.commerce",
        "graphdata.worlds.clinical",
        "graphdata.worlds.legal",
        "graphdata.worlds.energy",
        "graphdata.worlds.agriculture",
        "graphdata.worlds.maritime",
        "graphdata.worlds.telecom",
        "graphdata.worlds.aviation",
        "graphdata.worlds.publishing",
        "graphdata.worlds.banking",
        "graphdata.worlds.railways",
        "graphdata.worlds.parliament",
        "graphdata.worlds.construction",
        "graphdata.worlds.ecology",
        "graphdata.worlds.insurance",
        "graphdata.worlds.schools",
        "graphdata.worlds.heritage",
        "graphdata.worlds.wine",
        "graphdata.worlds.transit",
        "graphdata.worlds.stats",
        "graphdata.subgraph",
        "graphdata.paths",
        "graphdata.dense",
        "graphdata.spatial",
        "graphdata.delaunay",
        "graphdata.spatial_anndata",
        "graphdata.errors",
        "graphdata.device",
        "graphdata.tracking",
        "graphdata.atomic",
        "graphdata.run_folder",
        "graphdata.checks",
        "graphdata.cli_types",
        "graphdata.typing",
    ],
    "kg": [
        "kg.base",
        "kg.transe",
        "kg.distmult",
        "kg.complex",
        "kg.rotate",
        "kg.tucker",
        "kg.rescal",
        "kg.conve",
        "kg.models",
        "kg.config",
        "kg.losses",
        "kg.sampling",
        "kg.training",
        "kg.distributed",
        "kg.sharded",
        "kg.tune",
        "kg.selection",
        "kg.evaluation",
        "kg.checkpoint",
        "kg.prediction",
        "kg.datasets",
    ],
    "kg.explain": [
        "kg.explain.explainer",
        "kg.explain.explanation",
        "kg.explain.local",
        "kg.explain.parallel",
        "kg.explain.search",
        "kg.explain.node_search",
        "kg.explain.retrain",
        "kg.explain.baselines",
        "kg.explain.fidelity",
        "kg.explain.faithful",
        "kg.explain.patterns",
        "kg.explain.patterns.bank",
        "kg.explain.patterns.search",
        "kg.explain.patterns.rule_sets",
        "kg.explain.patterns.conditions",
        "kg.explain.patterns.significance",
        "kg.explain.ground_truth",
        "kg.explain.evaluator",
        "kg.explain.evaluator.config",
        "kg.explain.evaluator.distilled",
        "kg.explain.evaluator.network",
        "kg.explain.evaluator.rgcn",
        "kg.explain.evaluator.sampling",
        "kg.explain.evaluator.training",
        "kg.explain.evaluator.io",
    ],
    "graphon": [
        "graphon.graphons",
        "graphon.families",
        "graphon.expressions",
        "graphon.sampling",
        "graphon.patterns",
        "graphon.homomorphism",
        "graphon.densities",
        "graphon.wl",
        "graphon.cut",
        "graphon.distance",
        "graphon.plot",
    ],
    "graphon.nn": [
        "graphon.nn.basis",
        "graphon.nn.layers",
        "graphon.nn.models",
        "graphon.nn.mpnn",
        "graphon.nn.inputs",
        "graphon.nn.bernoulli",
        "graphon.nn.transfer",
        "graphon.nn.generalization",
        "graphon.nn.plot",
    ],
    "spatial": [
        "spatial.model",
        "spatial.celcomen",
        "spatial.objectives",
        "spatial.vmf",
        "spatial.counterfactual",
        "spatial.equilibrium",
        "spatial.simulate",
        "spatial.tl",
        "spatial.pl",
        "spatial.tools",
        "spatial.plot",
        "spatial.io",
    ],
    # The application layer: the command and its failure contract (its subcommand modules
    # build argparse parsers; their flags are on the tutorial page, from --help).
    "graphlib_ml.cli": ["graphlib_ml.cli"],
}


def defining_modules(package: str) -> dict[str, str]:
    """Map each name of ``package.__all__`` to the module that defines it.

    A class or function names its own ``__module__``; a re-exported module is itself; a constant
    (a dict, a tuple) has no ``__module__``, so the package's lazy table (``_EXPORTS``, see
    ``graphdata/_lazy.py``) says where it lives, else the package itself.

    Args:
        package: A key of :data:`PACKAGES`.

    Returns:
        Public name -> dotted module name, in ``__all__`` order.
    """
    module = importlib.import_module(package)
    lazy: dict[str, tuple[str, ...]] = getattr(module, "_EXPORTS", {})
    where = {name: source for source, names in lazy.items() for name in names}
    found: dict[str, str] = {}
    for name in getattr(module, "__all__", ()):
        if name.startswith("__"):
            continue
        obj = getattr(module, name)
        if isinstance(obj, types.ModuleType):
            found[name] = obj.__name__
        elif (inspect.isclass(obj) or inspect.isfunction(obj)) and obj.__module__.startswith(
            package.split(".")[0]
        ):
            found[name] = obj.__module__
        else:
            found[name] = _assigned_in(name, where.get(name, package), PACKAGES.get(package, []))
    return found


def _assigned_in(name: str, first: str, modules: list[str]) -> str:
    """The module whose source assigns ``name`` at top level: ``first``, else one of ``modules``.

    A constant re-exported through another module (``kg.training.OPTIMIZERS`` from
    ``kg.config``) has its ``#:`` comment where it is assigned, so it is documented there.
    """
    pattern = re.compile(rf"^{re.escape(name)}\s*[:=]", re.MULTILINE)
    for candidate in (first, *modules):
        spec = importlib.util.find_spec(candidate)
        origin = spec.origin if spec is not None else None
        if origin and pattern.search(Path(origin).read_text(encoding="utf-8")):
            return candidate
    return first
