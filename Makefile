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

clean:
	rm -rf $(VENV) graphlib-demo .pytest_cache .mypy_cache .ruff_cache
