"""Cron as one more evaluator of the fleet: `plan` and `run` decide a table that has not
moved from the evaluation the state database shares (as a restarted daemon does), and
decide exactly what a cold evaluation (`--fresh`) decides."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maintenance.catalogs import get_catalog
from maintenance.config import load_config
from maintenance.workload.fleet import FleetOptions, change_tables
from tests.support.cli import run_cli

pytestmark = pytest.mark.process  # every test here starts processes (the CLI, a daemon, workers)

POLICY = "name: p\njobs:\n  compact:\n    when:\n      small_files: 7\n  manifests:\n    when:\n      manifests: 4\n"


def _plan(config: Path, home: Path, *flags: str) -> dict:  # type: ignore[type-arg]
    planned = run_cli("--config", str(config), "plan", "--all", "--json", *flags, home=home)
    assert planned.returncode == 0, planned.stderr
    return json.loads(planned.stdout)


def test_plan_decides_unmoved_tables_from_shared_evaluations_as_a_cold_plan_does(tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "p.yaml").write_text(POLICY)
    config = tmp_path / "icemaint.yaml"
    config.write_text(f"home: {tmp_path}\npolicies: {policies}\n")
    options = FleetOptions(tables=12, commits=3, rows=20)
    made = run_cli("--config", str(config), "workload", "fleet", "--tables", "12", "--commits", "3", "--rows", "20", home=tmp_path)
    assert made.returncode == 0, made.stderr

    first = _plan(config, tmp_path)
    warm = _plan(config, tmp_path)
    cold = _plan(config, tmp_path, "--fresh")

    assert first["tables_reused"] == 0 and warm["tables_reused"] == 12 and cold["tables_reused"] is None
    assert warm["decisions"] == cold["decisions"] == first["decisions"]
    assert len(cold["decisions"]) == 24 and not any(d["due"] for d in cold["decisions"])  # 6 small files < 7, 3 manifests < 4

    changed = change_tables(get_catalog(load_config(str(config)), "local"), options, every=6)  # 2 tables: a writer's commit each
    after = _plan(config, tmp_path)
    after_cold = _plan(config, tmp_path, "--fresh")

    assert len(changed) == 2 and after["tables_reused"] == 10
    assert after["decisions"] == after_cold["decisions"]
    due = {(d["table"], d["job"]) for d in after["decisions"] if d["due"]}
    assert due == {(f"local.fleet.{name}", "manifests") for name in changed}  # their append made a 4th manifest


def test_a_warm_plan_imports_what_evaluating_needs_and_nothing_that_runs_jobs(tmp_path: Path) -> None:
    """A cron tick's `plan` (one table changed since the last) imports no job runner (its
    Spark side, publishing), no pyiceberg REST client on a SQL catalog and no other state
    database's dialect than its own: the start a tick pays before any table is read."""
    import os
    import subprocess
    import sys

    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "p.yaml").write_text(POLICY)
    config = tmp_path / "icemaint.yaml"
    config.write_text(f"home: {tmp_path}\npolicies: {policies}\n")
    made = run_cli("--config", str(config), "workload", "fleet", "--tables", "3", "--commits", "3", "--rows", "20", home=tmp_path)
    assert made.returncode == 0, made.stderr
    _plan(config, tmp_path)
    change_tables(get_catalog(load_config(str(config)), "local"), FleetOptions(tables=3, commits=3, rows=20), every=3)

    env = {**os.environ, "ICEMAINT_HOME": str(tmp_path)}
    env.pop("ICEMAINT_CONFIG", None)
    loaded = tmp_path / "modules.json"
    done = subprocess.run([sys.executable, "-c", _MODULES_AFTER, str(loaded), "--config", str(config), "plan", "--json"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0 and json.loads(done.stdout)["tables_reused"] == 2, done.stderr[-2000:]
    imported = set(json.loads(loaded.read_text()))
    assert {"pyiceberg.catalog.sql", "maintenance.schedule.cycle", "maintenance.jobs.manifests.plan"} <= imported  # read right, and planned
    runners = {name for name in imported if name.startswith("maintenance.jobs.") and name.endswith((".run", ".runner", ".context", ".publish"))}
    assert runners == set()
    assert imported & {"pyspark", "py4j", "alembic", "pyiceberg.catalog.rest", "sqlalchemy.dialects.postgresql", "maintenance.spark.fingerprint"} == set()


# The CLI in a process of its own, then the modules it had loaded (`-X importtime` misses
# what `importlib.import_module` loads: the jobs' planners and estimates).
_MODULES_AFTER = """
import json, sys
from maintenance.cli.main import main
try:
    main(sys.argv[2:])
finally:
    open(sys.argv[1], "w").write(json.dumps(sorted(sys.modules)))
"""
