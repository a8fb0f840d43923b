"""`icemaint run` and `icemaint plan`: one cycle by the shipped policies, exit codes as the README states them."""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from maintenance.catalogs import load_table, parse_table_ref
from maintenance.config import Config
from maintenance.state.store import open_state
from tests.conftest import CdcFactory
from tests.support.cli import in_process, json_lines, run_cli


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


def test_a_named_job_records_its_prediction(capsys, spark, config: Config, cdc_table: CdcFactory) -> None:
    """`run --job` builds its own decisions; the run records a prediction as a due job's does
    (here on a table no reader reports on: one full scan a day, assumed)."""
    from maintenance.schedule.value import ASSUMED, PREDICTED

    ref, _, _ = cdc_table(rows=400, commits=2, update_ratio=0.3)
    code, _, err = in_process(capsys, "run", str(ref), "--job", "convert", "--json")
    assert code == 0, err
    [run] = open_state(config).runs.list(table=str(ref), job="convert")
    assert run.counters[PREDICTED]["estimate_s"] > 0 and run.counters[PREDICTED]["benefit_basis"] == ASSUMED
    assert run.counters[PREDICTED]["relieved_per_scan"] > 0  # CONVERT removes the equality keys a scan holds (bytes; seconds round to 0 here)


def test_run_within_a_budget_runs_what_the_last_hours_recorded_runs_left(capsys, spark, config: Config, cdc_table: CdcFactory, tmp_path: Path) -> None:
    """`run --budget` (cron: a new process each time) reads what the last hour spent from the
    state database: after another process's run recorded 100 compute-seconds, a budget of 100
    runs nothing and says why in one line; a budget of an hour runs what is due. `--budget`
    with `--job` is a usage error."""
    from maintenance.run.outcome import COMMITTED
    from maintenance.schedule.value import COMPUTE

    ref = cdc_table(rows=800, commits=3, update_ratio=0.3)[0]
    cfg = tmp_path / "icemaint.yaml"
    cfg.write_text(f"home: {config.home}\nstate:\n  url: sqlite:///{tmp_path / 'state.db'}\n")  # the last hour is this test's alone
    code, out, _ = in_process(capsys, "--config", str(cfg), "plan", str(ref), "--json")
    due = [d["job"] for d in json.loads(out)["decisions"] if d["due"]]
    assert code == 0 and "merge" in due
    state = open_state(dataclasses.replace(config, state_url=f"sqlite:///{tmp_path / 'state.db'}"))
    state.runs.start("another-process", "local.other.t", "merge", holder_id="run-elsewhere", lease_epoch=1)
    state.runs.finish("another-process", COMMITTED, counters={COMPUTE: 100.0}, lease_epoch=1)

    code, out, err = in_process(capsys, "--config", str(cfg), "run", str(ref), "--json", "--budget", "100")
    assert code == 0 and json_lines(out) == []
    assert re.fullmatch(rf"budget: {len(due)} of {len(due)} due job\(s\) wait \(1m40s of 1m40s spent in the last hour; first: .*\n", err), err

    code, out, err = in_process(capsys, "--config", str(cfg), "run", str(ref), "--json", "--budget", "1h")
    assert code == 0, err
    assert sorted(r["job"] for r in json_lines(out)) == sorted(due) and "budget:" not in err
    code, _, err = in_process(capsys, "--config", str(cfg), "run", str(ref), "--job", "merge", "--budget", "1h")
    assert code == 2 and "--budget chooses among the due jobs" in err


def test_run_exits_1_when_a_job_fails(capsys, spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(rows=400, commits=2, update_ratio=0.3)
    # A Spark setting that cannot change in a running session: the job fails, cleanly.
    load_table(config, ref).transaction().set_properties({"icemaint.merge.spark.spark.executor.memory": "2g"}).commit_transaction()
    code, out, err = in_process(capsys, "run", str(ref), "--json")
    merge = next(r for r in json_lines(out) if r["job"] == "merge")
    assert code == 1 and merge["status"] == "failed" and "cannot change in a running session" in merge["error"]


def test_run_exits_2_on_bad_policy_or_unknown_table(capsys, tmp_path: Path, config: Config) -> None:
    from maintenance.catalogs import get_catalog

    get_catalog(config, config.default_catalog)  # the embedded default's catalog exists, as a writer of tables made it
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


def _times(result: dict) -> tuple[datetime, datetime]:  # type: ignore[type-arg]
    """A job result's `started_at` and `ended_at`: ISO 8601 in UTC, in order, as far apart as `duration_s` says."""
    started, ended = datetime.fromisoformat(result["started_at"]), datetime.fromisoformat(result["ended_at"])
    assert started.utcoffset() == ended.utcoffset() == timedelta(0), result
    assert started <= ended and abs((ended - started).total_seconds() - result["duration_s"]) < 0.2, result
    return started, ended


def test_run_json_lines_have_times_and_a_skip_has_a_reason_not_an_error(capsys, config: Config) -> None:
    """Each line of `run --json` says when its job started and ended; a job skipped because
    another holder has the lease says why in `reason` (a skip is no error: exit 0)."""
    code, out, err = in_process(capsys, "workload", "fleet", "--tables", "2", "--namespace", "runtimes", "--json")
    assert code == 0, err
    before = datetime.now(timezone.utc)
    code, out, err = in_process(capsys, "run", "runtimes.t00000", "--job", "orphans", "--json")
    (ran,) = json_lines(out)
    assert code == 0 and ran["status"] == "noop", (ran, err)
    assert before <= _times(ran)[0]

    state = open_state(config)
    lease = state.leases.acquire("local.runtimes.t00001", "another-daemon", ttl_s=120)
    assert lease is not None
    try:
        code, out, err = in_process(capsys, "run", "runtimes.t00001", "--job", "orphans", "--json")
    finally:
        state.leases.release(lease)
    (skipped,) = json_lines(out)
    assert code == 0 and skipped["status"] == "skipped" and skipped["reason"] == "leased by another-daemon" and "error" not in skipped, skipped
    _times(skipped)
    assert state.runs.list(table="local.runtimes.t00001")[0].error == "leased by another-daemon"  # the history keeps why

    code, out, _ = in_process(capsys, "run", "runtimes.t00001", "--job", "orphans", "--dry-run", "--json")
    (planned,) = json_lines(out)
    assert planned["dry_run"] and _times(planned)


def test_a_job_no_longer_due_under_its_lease_is_skipped_with_a_reason(capsys, config: Config) -> None:
    """The cycle decided ORPHANS was due; by the time it holds the lease another run has done
    it: `skipped`, with `reason` "no longer due: …" and no `error`."""
    from maintenance.policy.loader import load_policies
    from maintenance.schedule.cycle import evaluate, run_decision

    code, _, err = in_process(capsys, "workload", "fleet", "--tables", "1", "--namespace", "runlate", "--json")
    assert code == 0, err
    ref = parse_table_ref("runlate.t00000", config)
    state, policies = open_state(config), load_policies(config.policies_dir)
    orphans = next(d for d in evaluate(config, state, [ref], policies).due if d.job == "orphans")
    code, out, _ = in_process(capsys, "run", str(ref), "--job", "orphans", "--json")  # another run does it first
    assert code == 0 and json_lines(out)[0]["status"] == "noop"

    result = run_decision(config, state, orphans, policies=policies, recheck=True).to_json()

    assert result["status"] == "skipped" and result["reason"].startswith("no longer due: ") and "error" not in result, result
    _times(result)
    assert state.runs.list(table=str(ref))[0].error == result["reason"]


@pytest.mark.process
def test_a_dry_run_with_nothing_due_says_so(tmp_path: Path) -> None:
    """`run --dry-run --json` always prints: a line saying nothing is due, on how many tables."""
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "quiet.yaml").write_text("name: quiet\njobs:\n  merge:\n    when:\n      equality_delete_files: 1\n    every: 10m\n")
    cfg = tmp_path / "icemaint.yaml"
    cfg.write_text(f"home: {tmp_path}\npolicies: {policies}\n")
    made = run_cli("--config", str(cfg), "workload", "fleet", "--tables", "2", home=tmp_path)
    assert made.returncode == 0, made.stderr

    dry = run_cli("--config", str(cfg), "run", "--dry-run", "--json", home=tmp_path)

    assert dry.returncode == 0, dry.stderr
    assert json_lines(dry.stdout) == [{"status": "nothing due", "tables": 2, "dry_run": True, "state_database": f"sqlite:///{tmp_path / 'state.db'}"}]
    real = run_cli("--config", str(cfg), "run", "--json", home=tmp_path)
    assert real.returncode == 0 and real.stdout == ""  # cron's JSON Lines file gets job results only


@pytest.mark.process
def test_plan_says_how_far_each_trigger_is_from_its_threshold(tmp_path: Path) -> None:
    """Not due because no trigger is reached: each trigger's value against its threshold,
    in the JSON's and the text's reason."""
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "p.yaml").write_text("name: p\njobs:\n  merge:\n    when:\n      equality_delete_files: 10\n  compact:\n    when:\n"
                                     "      small_files: 20\n  expire:\n    when:\n      snapshots: 100\n      oldest_snapshot_age: 5d\n")
    cfg = tmp_path / "icemaint.yaml"
    cfg.write_text(f"home: {tmp_path}\npolicies: {policies}\n")
    made = run_cli("--config", str(cfg), "workload", "fleet", "--tables", "1", "--commits", "3", "--partitions", "2", home=tmp_path)
    assert made.returncode == 0, made.stderr

    planned = run_cli("--config", str(cfg), "plan", "--all", "--json", home=tmp_path)

    reasons = {d["job"]: d["reason"] for d in json.loads(planned.stdout)["decisions"]}
    assert reasons["merge"] == "no trigger reached: equality_delete_files 0 < 10", reasons
    assert reasons["compact"] == "no trigger reached: small_files 6 < 20", reasons  # 3 appends to 2 partitions
    assert re.fullmatch(r"no trigger reached: snapshots 3 < 100; oldest_snapshot_age [\d.]+m?s < 5d", reasons["expire"]), reasons
    text = run_cli("--config", str(cfg), "plan", "--all", home=tmp_path).stdout
    assert "no trigger reached: equality_delete_files 0 < 10" in text and "small_files 6 < 20" in text
