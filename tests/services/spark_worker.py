"""A Spark session for the catalog matrix's own checks, in a process of its own.

The test run's shared Spark session (tests/conftest.py:spark) is configured from the
embedded default; the matrix's catalogs (Hive, REST, S3 with its jars) need a session
started from the matrix's config file. `SparkWorker` keeps one such session in a child
process for the whole test session and runs the functions below in it:
- the content oracle: the rows copied to a local Parquet folder, then compared with
  EXCEPT ALL both ways (independent of icemaint's own fingerprint);
- writing a file through Hadoop's file system (how Spark spells S3: s3a://);
- holder B of the fencing test.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

_state: dict[str, Any] = {}


class SparkWorker:
    """One child process holding a Spark session built from `config_path`."""

    def __init__(self, config_path: Path, env: dict[str, str]) -> None:
        self.config_path = config_path
        self._pool = ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn"), initializer=_init, initargs=(str(config_path), env))

    def call(self, function: Any, *args: Any, timeout: float = 600) -> Any:
        return self._pool.submit(function, *args).result(timeout=timeout)

    def stop(self) -> None:
        try:
            self._pool.submit(_stop).result(timeout=120)
        finally:
            self._pool.shutdown(wait=True, cancel_futures=True)


# -- run in the worker ---------------------------------------------------------------------
def _init(config_path: str, env: dict[str, str]) -> None:
    os.environ.update(env)
    from maintenance.config import load_config

    _state["config"] = load_config(config_path)


def _spark():  # type: ignore[no-untyped-def]
    from maintenance.spark.session import get_spark

    return get_spark(_state["config"])


def _stop() -> None:
    from maintenance.spark.session import stop_spark

    stop_spark()


def _ref(table: str):  # type: ignore[no-untyped-def]
    from maintenance.catalogs import parse_table_ref

    return parse_table_ref(table, _state["config"])


def start() -> float:
    """Start Spark now; returns the seconds it took."""
    import time

    started = time.monotonic()
    _spark().sql("SELECT 1").collect()
    return time.monotonic() - started


def copy_rows(table: str, folder: str) -> int:
    """The table's rows as Spark reads them (every delete applied), into a local Parquet folder."""
    spark, ref = _spark(), _ref(table)
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    frame = spark.table(ref.spark_name)
    frame.write.mode("overwrite").parquet(Path(folder).as_uri())
    return spark.read.parquet(Path(folder).as_uri()).count()


def compare_rows(table: str, folder: str) -> dict[str, int]:
    """Rows of the table missing from the copy and rows of the copy missing from the table,
    duplicates counted (EXCEPT ALL), plus both row counts. The table is read once."""
    spark, ref = _spark(), _ref(table)
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    now = spark.table(ref.spark_name).cache()
    try:
        before = spark.read.parquet(Path(folder).as_uri())
        return {
            "rows": now.count(),
            "rows_before": before.count(),
            "added": now.exceptAll(before).count(),
            "lost": before.exceptAll(now).count(),
        }
    finally:
        now.unpersist()


def write_hadoop_file(path: str, data: bytes) -> str:
    """Write a file through Hadoop's file system, as Spark would; returns its qualified name."""
    spark = _spark()
    jvm = spark._jvm  # type: ignore[attr-defined]
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    fs = hadoop_path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())  # type: ignore[attr-defined]
    stream = fs.create(hadoop_path, False)
    try:
        stream.write(bytearray(data))
    finally:
        stream.close()
    return str(fs.makeQualified(hadoop_path).toString())


def hadoop_file_exists(path: str) -> bool:
    spark = _spark()
    jvm = spark._jvm  # type: ignore[attr-defined]
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    return bool(hadoop_path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).exists(hadoop_path))  # type: ignore[attr-defined]


def fencing_holder_b(config_path: str, table: str, row_id: int) -> dict[str, Any]:
    """Holder B of the SIGSTOP fencing test: takes the lease once A's has expired and
    commits a marker row through the fence."""
    from maintenance.catalogs import parse_table_ref
    from maintenance.config import load_config
    from maintenance.run.context import JobContext
    from maintenance.run.outcome import COMMITTED, JobOutcome
    from maintenance.run.runner import run_under_lease
    from tests.support.fencing_jobs import append_marker_row

    config = load_config(config_path)
    _spark()  # the session exists; run_under_lease reuses it

    def body(ctx: JobContext) -> JobOutcome:
        return JobOutcome(COMMITTED, snapshot_id=append_marker_row(ctx, row_id=row_id))

    result = run_under_lease(config, parse_table_ref(table, config), "fencing-test", body, holder="holder-B")
    return {"status": result.status, "run_id": result.run_id, "error": result.error}


def make_cdc_table(table: str, rows: int, commits: int, seed: int = 42) -> dict[str, Any]:
    """A CDC table written by icemaint's generator in this process (no CLI start needed)."""
    from maintenance.workload.cdc import CdcOptions, run_cdc_workload

    result, _ = run_cdc_workload(_spark(), _state["config"], _ref(table), CdcOptions(rows=rows, commits=commits, seed=seed))
    return result.to_json()


def publish_under_writer(table: str, job: str, moment: str, writer: str, seed: int) -> dict[str, Any]:
    """Run a verified `job` on `table` in this process while a writer commits to the same
    table when the job first reports `moment` (planning, groups written, staged, verifying,
    verified): `writer` "cdc" commits a CDC batch through Iceberg's Java API (as a streaming
    sink does), "stale" appends through a pyiceberg table loaded when the job started
    planning (a writer whose base predates the job's staging). A writer's failure is
    recorded, not raised. Returns the job's outcome, the writer's, and whether the table's
    rows now equal the writer's model (cdc) or the rows Spark read right after the writer's
    commit (stale), both checked EXCEPT ALL both ways."""
    import traceback

    from maintenance.catalogs import load_table
    from maintenance.run.runner import run_job
    from maintenance.workload.cdc import CdcOptions, run_cdc_workload
    from tests.support.helpers import model_rows, spark_rows
    from tests.support.matrix import row_file

    spark, ref, config = _spark(), _ref(table), _state["config"]
    seen: list[str] = []
    state: dict[str, Any] = {}

    def progress(stage: str, **counts: Any) -> None:
        if stage not in seen:
            seen.append(stage)
        if writer == "stale" and "stale" not in state:
            state["stale"] = load_table(config, ref)  # the writer's base: before the job stages anything
        if stage != moment or "writer" in state:
            return
        state["writer"] = "started"
        try:
            if writer == "cdc":
                written, model = run_cdc_workload(spark, config, ref, CdcOptions(rows=60, commits=1, update_ratio=0.5, delete_ratio=0.1, seed=seed))
                state["expected"] = model_rows(model)
                state["writer_snapshot"] = written.snapshot_id
            else:
                stale = state["stale"]
                stale.append(row_file(stale, range(95_000_000 + seed * 10, 95_000_000 + seed * 10 + 3), 1))
                state["writer_snapshot"] = load_table(config, ref).metadata.current_snapshot_id
                state["expected"] = spark_rows(spark, ref)
            state["writer"] = "committed"
        except Exception as exc:  # noqa: BLE001 (the writer's failure is the finding)
            state["writer"] = f"failed: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
            state["writer_trace"] = traceback.format_exc()[-2000:]

    outcome = run_job(config, ref, job, {}, verify=True, progress=progress)
    current = load_table(config, ref)
    lineage, snapshot = [], current.current_snapshot()
    while snapshot is not None:
        lineage.append(snapshot.snapshot_id)
        snapshot = current.snapshot_by_id(snapshot.parent_snapshot_id) if snapshot.parent_snapshot_id is not None else None
    rows = spark_rows(spark, ref)
    return {"status": outcome.status, "verified": outcome.content_verified, "error": outcome.error, "snapshot_id": outcome.snapshot_id,
            "stages": seen, "writer": state.get("writer", "never ran"), "writer_trace": state.get("writer_trace"),
            "writer_snapshot": state.get("writer_snapshot"), "lineage": lineage, "same_as_writers_model": rows == state.get("expected")}
