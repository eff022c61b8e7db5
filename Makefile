# The two commands of README.md: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck pytest pytest-postgresql peers bench docs clean fuzz

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/skillc check examples/coffee-skill
	$(BIN)/skillc build examples/coffee-skill -o build
	@echo "outputs: build/coffee-skill/ (template.json, stylesheet.json and render/*.{json,card.json,html} per component)"

test: $(STAMP) peers lint typecheck pytest pytest-postgresql

# WeChat's own tools (wcc, miniprogram-simulate, j-component) and the MCP TypeScript SDK, for
# differential tests. Without npm the tests that need them skip (and fail under CI=true).
PEER_STAMP := tests/peers/node_modules/.installed
peers: $(PEER_STAMP)
$(PEER_STAMP): tests/peers/package.json tests/peers/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
	  npm ci --prefix tests/peers --no-audit --no-fund --loglevel=error && touch $(PEER_STAMP); \
	else echo "npm not found: peer tests will be skipped"; fi

lint: $(STAMP)
	$(BIN)/ruff check skillc tests bench
	$(BIN)/ruff format --check skillc tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The whole suite again with RuntimeConfig's state on PostgreSQL (a fresh schema per test of
# $$SKILLC_TEST_POSTGRES_URL, else of a throwaway cluster from /usr/lib/postgresql/*/bin; a test that
# never opens its store makes no schema). Without PostgreSQL it skips with the reason (and fails
# under CI=true). PG_TESTS=tests/test_x.py narrows it.
PG_TESTS ?= tests
pytest-postgresql: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider --state-store=postgresql $(PG_TESTS)

# The parser fuzz tests with a large budget and a fresh seed (the report header names it; rerun
# with SKILLC_HYPOTHESIS_SEED=<seed> to reproduce). About 10 CPU-minutes at the default budget.
FUZZ_EXAMPLES ?= 2000
fuzz: $(STAMP)
	SKILLC_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) SKILLC_HYPOTHESIS_SEED=$${SKILLC_HYPOTHESIS_SEED:-random} \
	  $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_fuzz_parsers.py

bench: $(STAMP) peers
	for b in frontend expr styles render growth backends runtime cards serve_load debugger scorecard; do \
	  echo "== bench/$$b.py"; $(BIN)/python bench/$$b.py || exit 1; done

docs: $(STAMP)
	$(BIN)/skillc codes --markdown > docs/diagnostics.md

clean:
	rm -rf $(VENV) build dist *.egg-info .mypy_cache .ruff_cache .pytest_cache
