"""``python -m graphlib_ml.cli``: the ``graphlib`` command."""

import sys

from graphlib_ml.cli import main

if __name__ == "__main__":
    sys.exit(main())
