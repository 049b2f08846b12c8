"""graphlib_ml: the application layer (the `graphlib` command in `cli/`, the report in `demo/`).

The parts (`graphdata`, `kg`, `graphon`, `spatial`) never import it.
"""

from graphdata._version import __version__

__all__ = ["__version__"]
