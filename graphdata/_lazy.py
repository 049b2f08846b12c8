"""Lazy re-exports for the package ``__init__`` modules (PEP 562 module ``__getattr__``).

``import kg`` used to import every submodule, and with them torch, PyG and AnnData (about 6 s);
now a package ``__init__`` lists where each public name lives, and the submodule is imported
the first time the name is looked up (``kg.TransE``, ``from kg import TransE``). The package
keeps its ``__all__``; ``dir()`` lists the lazy names; ``from package import *`` works as before.
scipy and scikit-image do the same (``lazy_loader``, SPEC 1).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__: list[str] = []


def lazy_exports(
    package: str, exports: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Build a package's module ``__getattr__`` and ``__dir__`` from a submodule -> names table.

    A name found in ``exports`` is imported from its submodule and cached in the package's
    namespace, so ``__getattr__`` runs once per name. A name that is instead a submodule of the
    package (``kg.training``) is imported as one, as the eager ``__init__`` made it available.

    Args:
        package: The package's ``__name__``.
        exports: Absolute submodule name -> public names it defines. A name equal to the
            submodule's last component and listed under the submodule itself (``"spatial.plot":
            ("plot",)``) re-exports the submodule.

    Returns:
        ``(__getattr__, __dir__)`` to assign in the package ``__init__``.
    """
    where = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            if name.startswith("__"):
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            try:
                return importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as error:
                if error.name != f"{package}.{name}":
                    raise  # the submodule exists but one of its own imports is missing
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        imported = importlib.import_module(module)
        value = imported if module == f"{package}.{name}" else getattr(imported, name)
        vars(sys.modules[package])[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__
