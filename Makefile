# Two commands on a fresh machine: `make demo` and `make test`. Both set up first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed-stamp
PYTEST_ARGS ?=

.PHONY: setup system databases browser test-tools lint test test-fast test-integration demo bench clean

# The status page's browser tests (tests/ui/test_ui.py) drive Chromium and chromedriver: setup
# installs them when missing (scripts/setup-test-browser.sh; the Docker image never runs it).
setup: system databases browser $(STAMP)

system:
	@bash scripts/setup-system.sh

# PostgreSQL and MariaDB for the lease, outage and race tests: installed from Debian when
# missing, configured as tests/conftest.py assumes, and started.
databases:
	@bash scripts/setup-databases.sh setup

browser:
	@bash scripts/setup-test-browser.sh

$(STAMP): pyproject.toml
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'
	@touch $(STAMP)

# What the catalog matrix (tests/test_catalog_matrix.py) needs besides setup: javac for the
# REST catalog fixture, and hadoop-aws + the AWS SDK bundle for Spark's s3a:// (cached under
# .venv/share/icemaint-jars, never committed).
test-tools: setup
	@command -v javac >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "test-tools: installing openjdk-17-jdk-headless (javac) with apt-get" >&2; \
	    apt-get update -qq >/dev/null && mkdir -p /usr/share/man/man1 && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openjdk-17-jdk-headless >/dev/null; \
	  else echo "test-tools: please install a JDK 17 (javac), then run make again" >&2; exit 1; fi; }
	@bash scripts/s3-jars.sh $(VENV)/bin/python
	@bash scripts/compose-schema.sh $(VENV)/bin/python

lint: setup
	$(VENV)/bin/ruff check maintenance tests benchmarks

# The suite without the slow suites (592 tests: 17 minutes on 2 cores on a slow 2026-11-28; 577
# took 12 that morning, 570 took 24 on a machine running slow on 2026-11-27).
test: setup test-tools lint
	$(VENV)/bin/python -m pytest -m "not (hive or rest or s3 or faults or slow or cluster)" $(PYTEST_ARGS)

# The fast tier: no Spark session, no catalog services, no process started (planning,
# ranking, the publisher's and the runner's rules, config, policies, leases on SQLite, the
# status page's rendering); the tests that start processes are marked `process`.
test-fast: setup lint
	$(VENV)/bin/python -m pytest -m "not (spark or process or hive or rest or s3 or faults or slow or cluster)" $(PYTEST_ARGS)

# The slow suites, which CI runs too (70 tests: 25 to 32 minutes on 2026-11-28): the catalog matrix (Hive Metastore, REST catalog and
# S3, started by the tests), the fault injection (jobs killed with SIGKILL), and the daemons
# as processes, the outages and the lease races on server databases (`slow`).
test-integration: setup test-tools
	$(VENV)/bin/python -m pytest -m "hive or rest or s3 or faults or slow or cluster" $(PYTEST_ARGS)

demo: setup
	$(VENV)/bin/icemaint demo

bench: setup
	$(VENV)/bin/python benchmarks/report.py

clean:
	rm -rf $(VENV) .icemaint .pytest_cache .hypothesis
