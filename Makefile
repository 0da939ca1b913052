# MCP Wire Lab. Two commands do all set-up on a fresh machine with Python >= 3.11 and make:
#   make lab    set up, build the shop database and the learner's workspace, open the course
#   make test   set up, then run the whole test suite (lint included)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: lab test lint format bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

lab: $(STAMP)
	$(BIN)/mcp-lab lab $(if $(LAB_ARGS),-- $(LAB_ARGS))

# Two workers (this is a 2-core machine); a test file stays on one worker (module fixtures).
test: $(STAMP) lint
	$(BIN)/python -m pytest -n 2 --dist loadfile $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python bench/bench.py $(BENCH_ARGS)

clean:
	# never workspace/: it holds the learner's work
	rm -rf $(VENV) data/build build .pytest_cache .ruff_cache .hypothesis
