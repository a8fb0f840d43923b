"""Fencing end to end: a holder that lost its lease commits nothing and deletes nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from maintenance.catalogs import TableRef
from maintenance.config import Config, parse_config
from maintenance.lease.fence import Fence, FencedError
from maintenance.lease.keeper import LeaseKeeper
from maintenance.run.context import JobContext
from maintenance.run.outcome import COMMITTED, FENCED, JobOutcome
from maintenance.run.runner import run_under_lease
from maintenance.spark.fingerprint import content_fingerprint
from maintenance.spark.jvm import load_java_table
from maintenance.state.store import StateStore
from maintenance.table.marks import EPOCH_PROPERTY, SUMMARY_EPOCH
from tests.conftest import STATE_KINDS, CdcFactory, new_state_url
from tests.support.fencing import pause_outside_state_writes, read_line, resume_paused_holder
from tests.support.fencing_jobs import append_marker_row
from tests.support.paths import REPO


def config_for(home: Path, state_url: str, ttl: float, tmp_path: Path) -> tuple[Config, Path]:
    raw = {"home": str(home), "state": {"url": state_url}, "leases": {"ttl_seconds": ttl}}
    path = tmp_path / "icemaint.yaml"
    path.write_text(yaml.safe_dump(raw))
    return parse_config(raw, source=str(path), base_dir=tmp_path), path


def snapshot_summaries(spark, ref: TableRef) -> list[dict]:  # type: ignore[no-untyped-def]
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    rows = spark.sql(f"SELECT snapshot_id, committed_at, summary FROM {ref.spark_name}.snapshots ORDER BY committed_at, snapshot_id").collect()
    return [dict(r.summary, snapshot_id=r.snapshot_id) for r in rows]


@pytest.mark.process
@pytest.mark.slow  # on every database kind: one of the slowest, make test-integration runs it
@pytest.mark.parametrize("state_kind", STATE_KINDS)
def test_paused_holder_is_fenced_after_takeover(spark, home: Path, tmp_path: Path, cdc_table: CdcFactory, state_kind: str) -> None:
    ref, _, _ = cdc_table(rows=400, commits=2)
    for state_url in new_state_url(state_kind, tmp_path):
        config, config_path = config_for(home, state_url, ttl=3.0, tmp_path=tmp_path)
        flag = tmp_path / "resume"
        holder_a = subprocess.Popen(
            [sys.executable, "-m", "tests.support.fencing_worker", str(config_path), str(ref), str(flag)],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "ICEMAINT_HOME": str(home)},
        )
        try:
            ready = read_line(holder_a, "READY", timeout=180).split()
            a_run_id, scratch = ready[1], ready[2:]
            pause_outside_state_writes(holder_a, state_url, str(ref))
            time.sleep(4.5)  # past A's 3 s lease

            def holder_b(ctx: JobContext) -> JobOutcome:
                return JobOutcome(COMMITTED, snapshot_id=append_marker_row(ctx, row_id=20_000_001))

            b = run_under_lease(config, ref, "fencing-test", holder_b, holder="holder-B")
            assert b.status == COMMITTED, b.error
            after_b = content_fingerprint(spark, ref)

            refused, status = resume_paused_holder(holder_a, flag)
        finally:
            if holder_a.poll() is None:
                os.kill(holder_a.pid, signal.SIGCONT)
                holder_a.kill()

        assert refused == "REFUSED delete,commit"
        assert status == f"STATUS {FENCED}"
        summaries = snapshot_summaries(spark, ref)
        a_commits = [s for s in summaries if s.get("icemaint.run-id") == a_run_id]
        b_commits = [s for s in summaries if s.get("icemaint.run-id") == b.run_id]
        assert len(a_commits) == 1 and len(b_commits) == 1  # A's one commit before the pause, none after
        assert summaries.index(a_commits[0]) < summaries.index(b_commits[0])
        assert b_commits[0]["icemaint.job"] == "fencing-test"
        assert int(b_commits[0]["icemaint.lease-epoch"]) > int(a_commits[0]["icemaint.lease-epoch"])
        assert all(Path(p.replace("file:", "", 1)).exists() for p in scratch)  # nothing deleted
        assert content_fingerprint(spark, ref).same_content(after_b)
        from maintenance.state.store import open_state

        a_run = open_state(config).runs.get(a_run_id)
        assert a_run is not None and a_run.status == FENCED
        assert a_run.lease_epoch == int(a_commits[0]["icemaint.lease-epoch"])  # the epoch its one commit landed under
        b_run = open_state(config).runs.get(b.run_id)
        assert b_run is not None and b_run.lease_epoch == int(b_commits[0]["icemaint.lease-epoch"])


class _CheckedBeforeThePause(Fence):
    """A's database check and its time check passed an instant before A was paused (its
    commit was on its way); the pause comes right after."""

    def assert_held(self, action: str) -> None:
        return None

    def time_left(self) -> float:
        return 1.0


def test_a_commit_past_the_database_check_is_refused_by_the_table_token(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path) -> None:
    """Even past the database check, the metadata Iceberg retries on carries B's higher epoch."""
    ref, _, _ = cdc_table(rows=300, commits=2)
    from maintenance.state.store import open_state

    state: StateStore = open_state(config)
    asked_at = time.monotonic()
    lease_a = state.leases.acquire(str(ref), "A", ttl_s=0.5)
    assert lease_a is not None
    keeper_a = LeaseKeeper(state.leases, lease_a, ttl_s=0.5, asked_at=asked_at)  # never started: A is "paused"
    context_a = JobContext(config=config, ref=ref, job="fencing-test", run_id="run-A", fence=_CheckedBeforeThePause(state.leases, keeper_a, job="fencing-test", run_id="run-A"))
    context_a.table.claim()
    append_marker_row(context_a, row_id=30_000_001)
    stale_op = context_a.table.stamp(context_a.table.java.newAppend())  # based on A's cached metadata

    time.sleep(0.7)  # A's lease expires; B takes over and commits
    b = run_under_lease(config, ref, "fencing-test", lambda ctx: JobOutcome(COMMITTED, append_marker_row(ctx, 30_000_002)), holder="B")
    assert b.status == COMMITTED

    before = content_fingerprint(spark, ref)
    with pytest.raises(FencedError, match="newer lease"):
        with context_a.table.commit_errors("stale append"):
            stale_op.commit()
    assert content_fingerprint(spark, ref).same_content(before)
    assert int(load_java_table(spark, ref).properties().get(EPOCH_PROPERTY)) > lease_a.epoch


def test_commit_without_the_run_summary_is_refused(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(rows=200, commits=1)

    def unstamped(ctx: JobContext) -> JobOutcome:
        ctx.table.claim()
        with ctx.table.commit_errors("unstamped"):
            ctx.table.java.newAppend().set("other", "x").commit()
        return JobOutcome(COMMITTED)

    result = run_under_lease(config, ref, "fencing-test", unstamped)
    assert result.status == FENCED and "summary" in (result.error or "")


def test_only_commits_and_snapshot_ids_cross_into_the_python_fence(spark, config: Config, cdc_table: CdcFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Iceberg asks its operations for io(), current() and metadata locations once per
    manifest; `GatedOperations` answers those in the JVM (a MERGE commit that rewrote 100
    manifests made 630 Python callbacks). The fence still sees every commit attempt."""
    from maintenance.run.runner import run_job
    from maintenance.spark.fenced_table import FencedOperations

    ref, _, _ = cdc_table(rows=2000, commits=4)
    called: list[str] = []
    for name in ("commit", "current", "refresh", "io", "encryption", "metadataFileLocation", "locationProvider", "temp", "newSnapshotId",
                 "requireStrictCleanup"):
        original = getattr(FencedOperations, name)

        def counted(self, *args, _original=original, _name=name):  # type: ignore[no-untyped-def]
            called.append(_name)
            return _original(self, *args)

        monkeypatch.setattr(FencedOperations, name, counted)
    result = run_job(config, ref, "merge")
    assert result.status == COMMITTED, result.error
    assert set(called) == {"commit", "newSnapshotId"}, sorted(set(called))
    assert called.count("commit") == 1  # the rewrite through the fence, which claims the table as it commits
    table = load_java_table(spark, ref)
    epoch = table.currentSnapshot().summary().get(SUMMARY_EPOCH)
    assert epoch is not None and table.properties().get(EPOCH_PROPERTY) == epoch


def test_heartbeat_keeps_a_long_job_and_a_lost_lease_cancels_spark(spark, home: Path, tmp_path: Path, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(rows=200, commits=1)
    for state_url in new_state_url("sqlite", tmp_path):
        # A commit needs the lease proven past the fence's margin (0.5 s at least): with a
        # 1 s TTL a renewal 0.17 s late on a busy machine refused it (CI, 2 cores). 2 s leaves
        # 0.8 s of lateness, still far below what the test asks: 3.5 TTLs held by renewals.
        ttl = 2.0
        config, _ = config_for(home, state_url, ttl=ttl, tmp_path=tmp_path)

        def outlives_its_ttl(ctx: JobContext) -> JobOutcome:
            time.sleep(3.5 * ttl)  # 3.5 TTLs: only heartbeats keep the lease
            return JobOutcome(COMMITTED, snapshot_id=append_marker_row(ctx, 40_000_001))

        assert run_under_lease(config, ref, "fencing-test", outlives_its_ttl).status == COMMITTED

        from maintenance.state.store import open_state

        state = open_state(config)

        def long_spark_job(ctx: JobContext) -> JobOutcome:
            import threading

            threading.Timer(2.0, lambda: state.leases.force_release(str(ref))).start()
            ctx.spark.range(0, 1000, numPartitions=2).foreach(lambda _: time.sleep(0.1))  # ~50 s unless cancelled
            return JobOutcome(COMMITTED)

        started = time.monotonic()
        result = run_under_lease(config, ref, "fencing-test", long_spark_job)
        assert result.status == FENCED, result.error
        assert time.monotonic() - started < 30


def test_after_a_state_reset_the_run_records_the_epoch_it_committed_under(spark, home: Path, tmp_path: Path, cdc_table: CdcFactory) -> None:
    """The table carries epoch 40 from a state database that was since replaced: the holder
    raises its epoch past it before claiming, and its run record says the epoch its
    snapshot carries, not the one it first acquired."""
    ref, _, _ = cdc_table(rows=300, commits=1)
    spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('{EPOCH_PROPERTY}'='40')")
    for state_url in new_state_url("sqlite", tmp_path):
        config, _ = config_for(home, state_url, ttl=30.0, tmp_path=tmp_path)
        result = run_under_lease(config, ref, "fencing-test", lambda ctx: JobOutcome(COMMITTED, append_marker_row(ctx, 40_000_001)))
        assert result.status == COMMITTED, result.error
        summary = next(s for s in snapshot_summaries(spark, ref) if s.get("icemaint.run-id") == result.run_id)
        record = state_store(state_url).runs.get(result.run_id)
        assert int(summary["icemaint.lease-epoch"]) == record.lease_epoch == 41


def state_store(url: str) -> StateStore:
    from maintenance.state.database import make_engine

    engine = make_engine(url)
    return StateStore.on(engine)


def test_a_commit_that_lost_a_race_is_retried_and_logged_once_at_info(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path) -> None:
    """Another commit lands between our attempt's checks and its compare-and-swap: Iceberg
    retries on the newest metadata and succeeds. That is one INFO line in the log, no ERROR
    and no Py4J traceback (Py4J logs every exception a Python callback raises)."""
    import json as json_module

    from maintenance.logs import configure_logging

    ref, _, _ = cdc_table(rows=200, commits=1)
    log_file = tmp_path / "icemaint.log"
    configure_logging(log_format="json", stderr_level="off", log_file=log_file)
    raced: list[int] = []

    def race(base) -> None:  # type: ignore[no-untyped-def]
        if not raced:  # once: another writer's commit lands before ours
            raced.append(1)
            load_java_table(spark, ref).updateProperties().set("test.raced", "yes").commit()

    def body(ctx: JobContext) -> JobOutcome:
        ctx.table.claim()
        return JobOutcome(COMMITTED, snapshot_id=ctx.table.commit(ctx.table.java.newFastAppend(), "empty append", validate=race))

    try:
        result = run_under_lease(config, ref, "race-test", body)
    finally:
        configure_logging(log_format="json", stderr_level="off", log_file=None)
    assert result.status == COMMITTED, result.error
    table = load_java_table(spark, ref)
    assert table.properties().get("test.raced") == "yes" and int(table.currentSnapshot().snapshotId()) == result.snapshot_id
    lines = [json_module.loads(line) for line in log_file.read_text().splitlines()]
    assert [line["level"] for line in lines if "lost a race" in line["event"]] == ["info"]
    assert not [line for line in lines if line["level"] in ("error", "critical")], [line["event"] for line in lines if line["level"] == "error"]
    assert "Traceback" not in log_file.read_text()
