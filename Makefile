# Two commands a newcomer runs: `make demo` and `make test`. Each creates .venv when missing,
# installs $(TORCH_SPEC) first (a CPU wheel; plain `torch` would pull a multi-GB CUDA build),
# then the project in editable mode, and re-installs only when pyproject.toml changes.
PYTHON ?= python3
TORCH_SPEC ?= torch==2.13.0
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.graphlib-installed

.PHONY: install demo test lint format bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/graphlib demo

# ruff and mypy come with the dev extra; mypy reads [tool.mypy] in pyproject.toml (the library
# packages, untyped defs disallowed) and caches in .mypy_cache, so a re-run takes seconds.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# Rewrites files: the formatter first, then the fixable lint rules (import order, pyupgrade).
format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

test: lint
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) -m pip install --quiet -e ".[dev,bench]"
	$(PY) -m benchmarks.run

# The documentation site in docs/_build/html: the API reference from the docstrings and the
# tutorials of docs/tutorials/, executed on every build (sphinx-gallery). -W --keep-going: every
# warning fails the build, and all of them are reported. The docs extra installs once per change
# of pyproject.toml, like the dev extra.
DOCS_STAMP := $(VENV)/.graphlib-docs-installed

$(DOCS_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e ".[dev,docs]"
	touch $(DOCS_STAMP)

.PHONY: docs
docs: $(DOCS_STAMP)
	rm -rf docs/api  # generated from the packages' __all__ by conf.py: no stale module pages
	$(VENV)/bin/sphinx-build -W --keep-going -b html docs docs/_build/html

clean:
	rm -rf $(VENV) graphlib-demo .pytest_cache .mypy_cache .ruff_cache
