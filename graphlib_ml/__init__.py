"""graphlib_ml: the application layer (the `graphlib` command in `cli/`, the report in `demo/`).

The parts (`graphdata`, `kg`, `graphon`, `spatial`) never import it.
"""
