"""The planner on generated tables: decisions follow the triggers, schedules, quiet hours
and backoff; the costliest tables come first."""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from maintenance.catalogs import load_table
from maintenance.config import Config
from maintenance.policy.triggers import MEASURES
from maintenance.run.outcome import COMMITTED
from maintenance.schedule.cycle import evaluate, run_decision
from maintenance.state.store import open_state
from maintenance.table.health import table_health
from maintenance.table.reader_cost import reader_cost
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory, fresh_ref
from tests.support.decisions import POLICY, by_job, policies_from


def clean_table(spark, config: Config):  # type: ignore[no-untyped-def]
    ref = fresh_ref(config, "clean")
    spark.sql(f"CREATE TABLE {ref.spark_name} (id bigint, v string) USING iceberg TBLPROPERTIES ('format-version'='2')")
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, 'x' FROM range(100)")
    return ref


def test_decisions_follow_the_triggers_and_the_worst_table_comes_first(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path) -> None:
    policies = policies_from(tmp_path)
    state = open_state(config)
    dirty, _, _ = cdc_table(rows=2000, commits=5, update_ratio=0.3)
    mild, _, _ = cdc_table(rows=400, commits=1, update_ratio=0.3)
    clean = clean_table(spark, config)

    evaluation = evaluate(config, state, [clean, mild, dirty], policies)

    dirty_jobs, clean_jobs = by_job(evaluation, dirty), by_job(evaluation, clean)
    assert dirty_jobs["merge"].due and "equality_delete_files" in dirty_jobs["merge"].reason
    assert dirty_jobs["expire"].due and "snapshots 5 >= 4" in dirty_jobs["expire"].reason
    assert not clean_jobs["merge"].due and clean_jobs["merge"].reason == "no trigger reached: equality_delete_files 0 < 1; delete_ratio 0 < 0.05"
    assert not clean_jobs["expire"].due
    assert clean_jobs["orphans"].due and "never ran" in clean_jobs["orphans"].reason
    due_tables = [d.table for d in evaluation.due]
    assert due_tables.index(str(dirty)) < due_tables.index(str(mild)) < due_tables.index(str(clean))
    assert [d.job for d in evaluation.due if d.table == str(dirty)] == ["merge", "expire", "orphans"]


@pytest.mark.parametrize("measure", sorted(MEASURES))
def test_each_measure_fires_exactly_at_its_threshold(config: Config, cdc_table: CdcFactory, tmp_path: Path, measure: str) -> None:
    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=600, commits=3, update_ratio=0.3, delete_ratio=0.1)
    health = table_health(str(ref), load_table(config, ref), small_file_bytes=config.health.small_file_bytes)
    value = MEASURES[measure].read(health)
    if MEASURES[measure].size:
        value = math.ceil(value)  # sizes are whole bytes
    state = open_state(config)
    beyond = value - 1 if MEASURES[measure].at_most else value + 1
    for threshold, expected in ((value, True), (beyond, False)):
        text = f"name: t\njobs:\n  rewrite:\n    when:\n      {measure}: {threshold!r}\n"
        decision = by_job(evaluate(config, state, [ref], policies_from(tmp_path, text)), ref)["rewrite"]
        assert decision.due is expected, (measure, value, threshold, decision.reason)


def test_a_job_that_ran_waits_for_its_interval_and_a_failure_backs_off(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path) -> None:
    policies = policies_from(tmp_path)
    state = open_state(config)
    ref, _, _ = cdc_table(rows=600, commits=2, update_ratio=0.3)
    merge = by_job(evaluate(config, state, [ref], policies), ref)["merge"]
    assert merge.due

    result = run_decision(config, state, merge, policies=policies)

    assert result.status == COMMITTED and result.content_verified, result.error
    after = by_job(evaluate(config, state, [ref], policies), ref)["merge"]
    assert not after.due and re.fullmatch(r"ran [\d.]+s ago \(every 1h\)", after.reason), after.reason  # units people read, not "3600s"
    # A failed orphans run: the next try waits.
    state.runs.start(f"failed-{ref.name}", str(ref), "orphans", holder_id="x", lease_epoch=1)
    state.runs.finish(f"failed-{ref.name}", "failed", error="boom")
    orphans = by_job(evaluate(config, state, [ref], policies), ref)["orphans"]
    assert not orphans.due and re.fullmatch(r"backing off after 1 failed run\(s\): next try in (\d+m\d\ds|[\d.]+s)", orphans.reason), orphans.reason


def test_quiet_hours_cron_and_disabled_tables(config: Config, cdc_table: CdcFactory, tmp_path: Path) -> None:
    state = open_state(config)
    ref, _, _ = cdc_table(rows=300, commits=1, update_ratio=0.3)
    now = datetime.now(timezone.utc)
    quiet = f"{(now - timedelta(minutes=30)):%H:%M}-{(now + timedelta(minutes=30)):%H:%M}"
    text = POLICY.replace("    every: 1h\n  expire", f"    every: 1h\n    quiet_hours: ['{quiet}']\n  expire").replace("every: 1d", "cron: '0 0 1 1 *'")
    policies = policies_from(tmp_path, text)
    jobs = by_job(evaluate(config, state, [ref], policies, now=now), ref)
    assert not jobs["merge"].due and jobs["merge"].reason == "quiet hours"
    assert jobs["orphans"].due  # a cron job that never ran is due
    state.runs.start(f"cron-{ref.name}", str(ref), "orphans", holder_id="x", lease_epoch=1)
    state.runs.finish(f"cron-{ref.name}", "noop")
    jobs = by_job(evaluate(config, state, [ref], policies), ref)
    assert not jobs["orphans"].due and jobs["orphans"].reason.startswith("next cron time")

    load_table(config, ref).transaction().set_properties({"icemaint.enabled": "false"}).commit_transaction()
    disabled = evaluate(config, state, [ref], policies)
    assert not disabled.due and disabled.decisions[0].reason == "disabled by icemaint.enabled=false"


def test_reader_cost_grows_with_deletes(config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(rows=1000, commits=2)
    table = load_table(config, ref)
    before = reader_cost(table_health(str(ref), table, small_file_bytes=1))
    cdc_table(ref=ref, rows=1000, commits=3, update_ratio=0.5)
    after = reader_cost(table_health(str(ref), load_table(config, ref), small_file_bytes=1))
    assert after.extra_bytes > before.extra_bytes and after.amplification > before.amplification > 1
