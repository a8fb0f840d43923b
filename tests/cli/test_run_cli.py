"""`icemaint run` and `icemaint plan`: one cycle by the shipped policies, exit codes as the README states them."""

from __future__ import annotations

import json
from pathlib import Path

from maintenance.catalogs import load_table
from maintenance.config import Config
from tests.conftest import CdcFactory
from tests.support.cli import in_process, json_lines


def test_run_does_what_plan_says_then_nothing_is_due(capsys, spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(rows=800, commits=3, update_ratio=0.3)
    code, out, _ = in_process(capsys, "plan", str(ref), "--json")
    planned = [(d["job"], d["due"]) for d in json.loads(out)["decisions"]]
    assert code == 0 and ("merge", True) in planned

    code, out, err = in_process(capsys, "run", str(ref), "--json")

    results = json_lines(out)
    assert code == 0, err
    assert [r["job"] for r in results] == [job for job, due in planned if due]
    assert all(r["status"] == "noop" and "content_verified" not in r or r["status"] == "committed" and r["content_verified"] for r in results)
    assert load_table(config, ref).inspect.delete_files().num_rows == 0
    code, out, _ = in_process(capsys, "run", str(ref), "--json")
    assert code == 0 and json_lines(out) == []


def test_run_named_job_and_dry_run(capsys, spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(rows=600, commits=2, update_ratio=0.3)
    snapshot = load_table(config, ref).metadata.current_snapshot_id
    code, out, _ = in_process(capsys, "run", str(ref), "--job", "convert", "--dry-run", "--json")
    results = json_lines(out)
    assert code == 0 and [(r["job"], r["status"], r.get("dry_run")) for r in results] == [("convert", "planned", True)]
    assert load_table(config, ref).metadata.current_snapshot_id == snapshot


def test_run_exits_1_when_a_job_fails(capsys, spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(rows=400, commits=2, update_ratio=0.3)
    # A Spark setting that cannot change in a running session: the job fails, cleanly.
    load_table(config, ref).transaction().set_properties({"icemaint.merge.spark.spark.executor.memory": "2g"}).commit_transaction()
    code, out, err = in_process(capsys, "run", str(ref), "--json")
    merge = next(r for r in json_lines(out) if r["job"] == "merge")
    assert code == 1 and merge["status"] == "failed" and "cannot change in a running session" in merge["error"]


def test_run_exits_2_on_bad_policy_or_unknown_table(capsys, tmp_path: Path, config: Config) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "bad.yaml").write_text("name: bad\njobs:\n  merge:\n    every: sometimes\n")
    cfg = tmp_path / "icemaint.yaml"
    cfg.write_text(f"home: {config.home}\npolicies: {policies}\n")
    code, _, err = in_process(capsys, "--config", str(cfg), "run", "--json")
    assert code == 2 and f"{policies / 'bad.yaml'}:4: jobs.merge.every: not a duration" in err and len(err.strip().splitlines()) == 1
    code, _, err = in_process(capsys, "run", "tests.no_such_table")
    assert code == 2 and "unknown table" in err
    code, _, err = in_process(capsys, "run", "--job", "vacuum")
    assert code == 2


def test_a_table_with_a_missing_manifest_is_its_own_problem_not_the_cycles(spark, config: Config, cdc_table: CdcFactory) -> None:
    """One damaged table (a manifest its snapshot lists is gone) is reported by name and
    path; every other table is still evaluated, as the daemon's cycle needs."""
    from maintenance.schedule.cycle import evaluate
    from maintenance.state.store import open_state
    from tests.support.file_checks import local

    broken, _, _ = cdc_table(rows=300, commits=2, update_ratio=0.3)
    healthy, _, _ = cdc_table(rows=300, commits=2, update_ratio=0.3)
    table = load_table(config, broken)
    manifest = min(m.manifest_path for m in table.current_snapshot().manifests(table.io))
    local(manifest).unlink()

    evaluation = evaluate(config, open_state(config), [broken, healthy])

    problem = evaluation.problems[str(broken)]
    assert "cannot be read" in problem and manifest.rsplit("/", 1)[-1] in problem and "\n" not in problem, problem
    assert str(healthy) in evaluation.health and str(broken) not in evaluation.health
    assert any(d.table == str(healthy) and d.due for d in evaluation.decisions)
