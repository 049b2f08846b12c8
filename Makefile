# Two commands a newcomer runs: `make demo` and `make test`. Each creates .venv when missing,
# installs $(TORCH_SPEC) first (a CPU wheel; plain `torch` would pull a multi-GB CUDA build),
# then the project in editable mode, and re-installs only when pyproject.toml changes.
PYTHON ?= python3
TORCH_SPEC ?= torch==2.13.0
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.graphlib-installed

.PHONY: install demo test lint bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/graphlib demo

lint: $(STAMP)
	$(VENV)/bin/ruff check .

test: lint
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) -m pip install --quiet -e ".[dev,bench]"
	$(PY) -m benchmarks.run

clean:
	rm -rf $(VENV) graphlib-demo .pytest_cache
