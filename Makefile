# Two commands on a fresh machine: `make demo` and `make test`. Both set up first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed-stamp
DEMO_STAMP := $(VENV)/.demo-stamp
PYTEST_ARGS ?=
# Two test processes, a test module each at a time (pytest-xdist): a serial run leaves two
# cores about three quarters idle. make test: 11 min instead of 17; make test-integration: 27
# instead of 35 (2026-12-02, 2 cores).
PYTEST_WORKERS ?= 2
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist loadfile

.PHONY: setup demo-setup system databases jars reporter class-archive flink peer browser docker test-tools lint test test-fast test-integration demo bench clean

# The status page's browser tests (tests/ui/test_ui.py) drive Chromium and chromedriver: setup
# installs them when missing (scripts/setup-test-browser.sh; the Docker image never runs it).
# The container test (tests/test_container.py) builds and runs the image with a Docker Engine
# it starts itself: setup installs docker.io and debootstrap (scripts/setup-docker.sh).
setup: system databases browser docker $(STAMP) jars reporter class-archive flink

system:
	@bash scripts/setup-system.sh

# PostgreSQL and MariaDB for the lease, outage and race tests: installed from Debian when
# missing, configured as tests/conftest.py assumes, and started.
databases:
	@bash scripts/setup-databases.sh setup

browser:
	@bash scripts/setup-test-browser.sh

docker:
	@bash scripts/setup-docker.sh

$(STAMP): pyproject.toml
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'
	@touch $(STAMP)

# Apache Iceberg's jars and Hadoop's s3a from Maven Central, pinned by SHA-256
# (maintenance/spark/jars.py), into .venv/share/icemaint/jars; a no-op when they are there.
jars: $(STAMP)
	@$(VENV)/bin/python -m maintenance.spark.jars fetch

# The jar readers put on their class path to report their scans to the daemon
# (maintenance/readers/reporter_jar.py), compiled by the JDK's javac; a no-op when it is there.
reporter: jars
	@$(VENV)/bin/python -m maintenance.readers.reporter_jar build

# Spark's, Iceberg's and the AWS SDK's classes mapped by every job's JVM instead of loaded one
# by one (maintenance/spark/class_archive.py): a MERGE as a CLI process 9.0 s -> 7.4 s on a
# 20,000-row table. Trained once per Java and Spark (~65 s); a no-op when it is there; a
# failure to build it does not stop setup (nothing but start-up time depends on it).
class-archive: jars
	@$(VENV)/bin/python -m maintenance.cli.class_archive build --if-missing >$(VENV)/class-archive.log 2>&1 \
	  && grep '^class archive:' $(VENV)/class-archive.log \
	  || { tail -5 $(VENV)/class-archive.log; echo "class archive not built (see $(VENV)/class-archive.log): jobs run, each JVM starts slower"; }

# The Flink writer (`icemaint workload cdc --writer flink`, maintenance/workload/flink_job.py):
# PyFlink from PyPI in a venv of its own, since it pins old dependencies (apache-beam 2.48,
# numpy 1.24, pyarrow 11) that icemaint's venv cannot take. The Iceberg Flink runtime jar is
# one of the pinned jars above.
FLINK_VENV := .venv-flink
FLINK_STAMP := $(FLINK_VENV)/.installed-stamp
FLINK_REQUIREMENT := apache-flink==1.20.5

flink: $(FLINK_STAMP)

$(FLINK_STAMP): Makefile
	@test -x $(FLINK_VENV)/bin/python || $(PYTHON) -m venv $(FLINK_VENV)
	$(FLINK_VENV)/bin/pip install -q --upgrade pip
	$(FLINK_VENV)/bin/pip install -q '$(FLINK_REQUIREMENT)'
	@touch $(FLINK_STAMP)

# The native peer of `make bench` (benchmarks/native_peer.py): nimtable's iceberg-compaction
# (Rust, on iceberg-rust and DataFusion) from PyPI, in a venv of its own as its users run it.
PEER_VENV := .venv-peer
PEER_STAMP := $(PEER_VENV)/.installed-stamp
PEER_REQUIREMENT := iceberg-compaction==202604.9.0rc0

peer: $(PEER_STAMP)

$(PEER_STAMP): Makefile
	@test -x $(PEER_VENV)/bin/python || $(PYTHON) -m venv $(PEER_VENV)
	$(PEER_VENV)/bin/pip install -q '$(PEER_REQUIREMENT)'
	@touch $(PEER_STAMP)

# What the tests need besides setup: the Compose Specification's schema (tests/test_deploy.py).
test-tools: setup
	@bash scripts/compose-schema.sh $(VENV)/bin/python

lint: setup
	$(VENV)/bin/ruff check maintenance tests benchmarks

# The suite without the slow suites (716 tests: 14 to 16 minutes on 2 cores on 2026-12-02; CI's
# machine ran 1.6x slower than that on 2026-12-01).
test: setup test-tools lint
	$(VENV)/bin/python -m pytest $(PYTEST_PARALLEL) -m "not (hive or rest or s3 or faults or slow or cluster)" $(PYTEST_ARGS)

# The fast tier: no Spark session, no catalog services, no process started (planning,
# ranking, the publisher's and the runner's rules, config, policies, leases on SQLite, the
# status page's rendering); the tests that start processes are marked `process`.
test-fast: setup lint
	$(VENV)/bin/python -m pytest -m "not (spark or process or hive or rest or s3 or faults or slow or cluster)" $(PYTEST_ARGS)

# The slow suites, which CI runs too (121 tests: 30 minutes here, 39 on CI's machine, on
# 2026-12-06): the catalog matrix (Hive Metastore, REST catalog and S3, started by the
# tests), the fault injection (jobs killed with SIGKILL), and the daemons as processes, the
# outages and the lease races on server databases (`slow`). The slowest 25 are listed at the
# end: the suite's budget is 45 minutes.
test-integration: setup test-tools
	$(VENV)/bin/python -m pytest $(PYTEST_PARALLEL) --durations=25 -m "hive or rest or s3 or faults or slow or cluster" $(PYTEST_ARGS)

# The demo needs Java, the SQLite JDBC driver, the package without its dev extras and the
# Spark jars: no databases, no browser, no test tools.
demo-setup: system $(DEMO_STAMP)
	@$(VENV)/bin/python -m maintenance.spark.jars fetch --for spark

$(DEMO_STAMP): pyproject.toml
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	@test -f $(STAMP) || { $(VENV)/bin/pip install -q --upgrade pip && $(VENV)/bin/pip install -q -e .; }
	@touch $(DEMO_STAMP)

demo: demo-setup
	$(VENV)/bin/icemaint demo

bench: setup peer
	$(VENV)/bin/python benchmarks/report.py

clean:
	rm -rf $(VENV) $(FLINK_VENV) $(PEER_VENV) .icemaint .pytest_cache .hypothesis
