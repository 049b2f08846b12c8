r"""
The graphlib command
====================

``pip install graphlib-ml`` installs the ``graphlib`` console command, the application layer
(:mod:`graphlib_ml.cli`) over the three parts: ``graphlib demo`` runs every part on embedded
defaults and writes a report, and ``data``, ``kg``, ``graphon`` and ``spatial`` hold
one subcommand per task. Every expected failure ends in one line,
``graphlib: error: <what>, <where> (<fix>)``, and an exit code: 2 for bad input, 1 for a failed
run. API: :doc:`/api/graphlib_ml.cli`.

This page runs the command itself (``python -m graphlib_ml.cli`` is the same program).
"""

# %%
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path


def graphlib(command: str) -> int:
    """Run ``graphlib COMMAND`` in the work folder, print what it prints, return the exit code."""
    print("$ graphlib", command)
    done = subprocess.run(
        [sys.executable, "-m", "graphlib_ml.cli", *shlex.split(command)],
        cwd=work,
        capture_output=True,
        text=True,
        check=False,
    )
    print(done.stdout + done.stderr, end="")
    return done.returncode


work = Path(tempfile.mkdtemp())
graphlib("--help")

# %%
# A knowledge graph, end to end
# -----------------------------
# Write the synthetic family KG as a train/valid/test folder, train a DistMult for a few epochs
# (the resolved configuration is printed first, then the filtered test metrics) and ask the
# checkpoint for the most plausible tails of a query.
graphlib("data family family --num-people 60")
graphlib("kg train --dataset family --model distmult --epochs 5 --out run --no-progress")
graphlib("kg predict run/checkpoint.pt --head person_0010 --relation parent --top 3")

# %%
# Graphons
# --------
# A homomorphism density of a graphon given as an expression and of a pattern given as an edge
# list: :math:`W(x, y) = 1 - \max(x, y)` and the triangle with a pendant edge.
graphlib("graphon density --graphon '1 - max(x, y)' --pattern 0-1,1-2,2-0,2-3")

# %%
# Errors
# ------
# Bad input is refused when the flags are parsed, in one line, with exit code 2.
code = graphlib("kg train --dataset family --margin nan")
print("exit code", code)

# %%
import shutil

shutil.rmtree(work)
