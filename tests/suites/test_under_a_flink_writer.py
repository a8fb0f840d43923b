"""Flink writes, icemaint maintains: Apache Flink's Iceberg sink upserts into a table for
minutes, one commit per checkpoint, while the daemon maintains that table with the shipped
streaming policy. The writer's job has no restart strategy, so a single failed Flink commit
ends it with an error: exit 0 means every checkpoint committed. Midway its process group is
killed (`kill -9`) and the workload starts it again from its latest checkpoint, as a cluster
manager would, while the daemon goes on (EXPIRE included). What Spark reads at the end is
exactly the model the writer wrote (EXCEPT ALL both ways): the restart lost and repeated
nothing, and maintenance changed nothing a reader sees, however its commits interleaved
with the writer's.

Not skipped when PyFlink is missing: `make setup` installs it (`make flink`)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.errors import IcemaintError
from maintenance.state.database import ensure_schema, make_engine
from maintenance.state.leases import LeaseStore
from maintenance.state.runs import RunStore
from tests.support.daemon import daemon_config, start_daemon, stop_daemon, wait_for
from tests.support.paths import REPO

pytestmark = [pytest.mark.slow, pytest.mark.process]

COLUMNS = "id, region, customer, amount, status, updated_at, version"
SHIPPED_POLICY = REPO / "policies" / "streaming-cdc.yaml"

# The shipped policy's triggers and intervals are for hours of a sink's output; the test has
# minutes. Same jobs and options, triggers a few commits reach, every job every 10 s.
TRIGGERS = {
    "convert": {"equality_delete_files": 4},
    "rewrite": {"position_delete_files_per_data_file": 1},
    "merge": {"delete_ratio": 0.02},
    "compact": {"small_files": 8},
    "manifests": {"small_manifests": 8},
    "expire": {"snapshots": 15},
}


def streaming_policy_in_minutes(namespace: str) -> str:
    """The shipped streaming policy for `namespace`, its schedule scaled from hours to seconds;
    EXPIRE's retention too (snapshots a minute old go, 5 kept and the sink's resume point)."""
    policy: dict[str, Any] = yaml.safe_load(SHIPPED_POLICY.read_text())
    policy["name"], policy["select"] = "streaming-cdc-in-minutes", {"namespaces": [namespace]}
    for name, job in policy["jobs"].items():
        job.pop("quiet_hours", None)
        job.pop("cron", None)
        job["every"] = "10s"
        if name in TRIGGERS:
            job["when"] = TRIGGERS[name]
    policy["jobs"]["expire"]["retention"].update(max_snapshot_age="1m", min_snapshots_to_keep=5)
    return yaml.safe_dump(policy, sort_keys=False)


def test_the_daemon_maintains_a_table_flink_upserts_into_without_failing_a_commit_or_changing_a_row(spark, config: Config, home: Path, tmp_path: Path) -> None:
    namespace = f"streaming_{uuid.uuid4().hex[:6]}"
    ref = TableRef(config.default_catalog, (namespace,), "orders")
    model_file = tmp_path / "model.parquet"
    state_url = f"sqlite:///{tmp_path / 'state.db'}"
    ensure_schema(make_engine(state_url))
    runs, leases = RunStore(make_engine(state_url)), LeaseStore(make_engine(state_url))
    config_path, _ = daemon_config(tmp_path, config, state_url, namespace, "daemon", policy=streaming_policy_in_minutes(namespace), max_concurrent_jobs=1)
    daemon_log, writer_log = tmp_path / "daemon.log", tmp_path / "writer.log"

    env = {**os.environ, "ICEMAINT_HOME": str(home)}
    env.pop("ICEMAINT_CONFIG", None)
    writer = subprocess.Popen([sys.executable, "-m", "maintenance", "workload", "cdc", str(ref), "--writer", "flink", "--rows", "24000", "--commits", "40",
                               "--checkpoint-interval", "3", "--update-ratio", "0.3", "--delete-ratio", "0.05", "--restarts", "1",
                               "--model-out", str(model_file), "--json"],
                              stdout=subprocess.PIPE, stderr=writer_log.open("wb"), env=env, text=True)
    daemon = start_daemon(config_path, daemon_log)
    try:
        wait_for(lambda: _flink_commits(config, ref) >= 8 or writer.poll() is not None, 600, "eight commits of the Flink writer", [writer_log, daemon_log])
        flink_process = _flink_job_process(home)
        os.killpg(flink_process, signal.SIGKILL)  # the job's Python, its JVM (the mini-cluster) and its Python workers
        out, _ = writer.communicate(timeout=900)
        assert writer.returncode == 0, writer_log.read_text()[-3000:]
    finally:
        if writer.poll() is None:
            writer.kill()
        code = stop_daemon(daemon, daemon_log)

    assert code == 0, daemon_log.read_text()[-3000:]
    assert not [lease for lease in leases.list() if lease.held]
    result = json.loads(out)
    assert result["writer_restarts"] == 1

    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    table = spark.sql(f"SELECT {COLUMNS} FROM {ref.spark_name}")
    model = spark.read.parquet(str(model_file)).select(*COLUMNS.split(", "))
    assert model.count() == result["expected_rows"] == table.count() > 0
    assert table.exceptAll(model).count() == 0
    assert model.exceptAll(table).count() == 0

    ended = runs.list(table=str(ref), limit=10_000)
    committed = {r.job for r in ended if r.status == "committed"}
    assert {"convert", "expire"} <= committed, [(r.job, r.status, r.error) for r in ended]
    assert all(r.counters.get("content_verified") is not False for r in ended), [(r.job, r.status, r.error) for r in ended if r.counters.get("content_verified") is False]
    assert not [r for r in ended if r.status not in ("committed", "noop", "skipped", "failed")], [(r.job, r.status, r.error) for r in ended]
    failed = [r for r in ended if r.status == "failed"]
    assert len(failed) <= len(ended) // 4, [(r.job, r.error) for r in failed]  # conflicts with the writer are retried next cycle, not the rule
    assert len([r for r in ended if r.status == "committed"]) >= 10  # the writer ran alongside many maintenance cycles
    # EXPIRE kept the sink's resume point: the newest snapshot the restarted job stamped.
    stamped = spark.sql(f"SELECT max(cast(summary['flink.max-committed-checkpoint-id'] AS BIGINT)) AS c FROM {ref.spark_name}.snapshots").first()
    assert stamped is not None and stamped.c is not None and stamped.c >= 8


def _flink_commits(config: Config, ref: TableRef) -> int:
    """The table's snapshots a Flink job stamped (0 before the writer made the table)."""
    try:
        snapshots = load_table(config, ref).metadata.snapshots
    except IcemaintError:
        return 0
    return sum(1 for s in snapshots if s.summary is not None and "flink.job-id" in s.summary.additional_properties)


def _flink_job_process(home: Path) -> int:
    """The Flink job's process (the leader of its own process group), found by its program
    and its settings file under this home."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if any(arg.endswith(b"flink_job.py") for arg in args) and any(arg.startswith(str(home / "flink").encode()) for arg in args):
            found.append(int(cmdline.parent.name))
    assert len(found) == 1, found
    return found[0]

