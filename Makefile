# The two commands of README.md: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck pytest bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/skillc check examples/coffee-skill

test: $(STAMP) lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check skillc tests bench
	$(BIN)/ruff format --check skillc tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

docs: $(STAMP)
	$(BIN)/skillc codes --markdown > docs/diagnostics.md

clean:
	rm -rf $(VENV) build dist *.egg-info .mypy_cache .ruff_cache .pytest_cache
