"""Cron as one more evaluator of the fleet: `plan` and `run` decide a table that has not
moved from the evaluation the state database shares (as a restarted daemon does), and
decide exactly what a cold evaluation (`--fresh`) decides."""

from __future__ import annotations

import json
from pathlib import Path

from maintenance.catalogs import get_catalog
from maintenance.config import load_config
from maintenance.workload.fleet import FleetOptions, change_tables
from tests.support.cli import run_cli

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
