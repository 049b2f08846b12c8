"""The installed version of the ``graphlib-ml`` distribution, shared by every package.

One source of truth: ``version`` in ``pyproject.toml``, read back through the installed
distribution's metadata (:func:`importlib.metadata.version`), as pip and ``graphlib --version``
see it. A source tree used without installing it (``PYTHONPATH=.``) has no metadata and
reports ``0+unknown`` (a PEP 440 local version that sorts below every release).

Examples:
    >>> from graphdata._version import __version__
    >>> __version__ == version()
    True
"""

from __future__ import annotations

from importlib import metadata

__all__ = ["DISTRIBUTION", "UNKNOWN", "__version__", "version"]

#: The distribution name on PyPI (``pip install graphlib-ml``).
DISTRIBUTION = "graphlib-ml"
#: The version reported when the distribution is not installed.
UNKNOWN = "0+unknown"


def version() -> str:
    """The installed ``graphlib-ml`` version, or :data:`UNKNOWN` when it is not installed.

    Returns:
        The version string of the distribution's metadata (PEP 440), e.g. ``"0.2.0"``.
    """
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return UNKNOWN


__version__ = version()
