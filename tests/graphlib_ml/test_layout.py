"""The application layer owns every CLI and demo; the parts build no parser; --help is cheap."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PARTS = ["graphdata", "kg", "graphon", "spatial"]
#: graphdata.cli_types defines argparse ``type=`` functions (ArgumentTypeError) for the CLI and
#: for library code; it builds no parser.
ARGPARSE_ALLOWED = {"graphdata/cli_types.py"}


def _imports(path):
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("package", PARTS)
def test_no_part_imports_argparse_or_holds_a_cli_or_demo(package):
    files = sorted((ROOT / package).rglob("*.py"))
    offenders = [
        str(p.relative_to(ROOT))
        for p in files
        if "argparse" in _imports(p) and str(p.relative_to(ROOT)) not in ARGPARSE_ALLOWED
    ]
    assert not offenders, offenders
    assert not [p for p in files if p.stem in ("cli", "demo")]


def test_graphlib_help_imports_no_torch_in_a_fresh_interpreter():
    code = (
        "import sys\n"
        "from graphlib_ml.cli import main\n"
        "code = main(['--help'])\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & "
        "{'torch', 'torch_geometric', 'anndata', 'matplotlib', 'scipy', 'networkx'})\n"
        "print('HEAVY', heavy, code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "HEAVY [] 0" in done.stdout, done.stdout + done.stderr
    assert "{demo,data,kg,graphon,spatial}" in done.stdout


def test_each_subcommand_builds_only_its_own_part():
    code = (
        "import sys\n"
        "from graphlib_ml.cli import main\n"
        "code = main(['data', '--help'])\n"
        "print('LOADED', sorted(m for m in sys.modules if m.startswith('graphlib_ml.cli.')),"
        " 'torch' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "LOADED ['graphlib_ml.cli.data'] False" in done.stdout, done.stdout + done.stderr


def test_kg_train_help_does_not_build_the_explain_parser():
    code = (
        "import sys\n"
        "from graphlib_ml.cli import main\n"
        "code = main(['kg', 'train', '--help'])\n"
        "print('LOADED', 'graphlib_ml.cli.explain' in sys.modules, 'kg.explain' in sys.modules,"
        " code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "LOADED False False 0" in done.stdout, done.stdout + done.stderr
    assert "{train,evaluate,predict,explain}" not in done.stdout  # train's own help
