# The two commands of the README:  make demo  and  make test.
# Each creates .venv and installs what it needs on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test lint bench clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[test]"
	touch $@

demo: $(BIN)/.installed
	$(BIN)/eoc query "what is 2+2"
	$(BIN)/eoc query "what is the capital of Japan"
	$(BIN)/eoc query "Paris is the capital of which country?"
	$(BIN)/eoc query "why is the sky blue"
	$(BIN)/eoc meter
	$(BIN)/eoc hit-cost

lint: $(BIN)/.installed
	$(BIN)/ruff check eoc tests bench scripts
	$(BIN)/ruff format --check eoc tests bench
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest

bench: $(BIN)/.installed
	$(BIN)/python bench/core.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
