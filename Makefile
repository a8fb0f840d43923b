# Two commands on a fresh machine: `make demo` and `make test`. Both set up first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed-stamp
PYTEST_ARGS ?=

.PHONY: setup system test demo bench clean

setup: system $(STAMP)

system:
	@bash scripts/setup-system.sh

$(STAMP): pyproject.toml
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'
	@touch $(STAMP)

test: setup
	$(VENV)/bin/python -m pytest $(PYTEST_ARGS)

demo: setup
	$(VENV)/bin/icemaint demo

bench: setup
	$(VENV)/bin/python benchmarks/report.py

clean:
	rm -rf $(VENV) .icemaint .pytest_cache .hypothesis
