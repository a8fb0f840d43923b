"""`icemaint workload cdc --writer flink`: the CDC workload written by Apache Flink's Iceberg
sink in upsert mode, the streaming writer icemaint exists for, instead of the generator.

icemaint plans the events from the same model as the generator (so `expected_rows` and the
row-level oracle exist), writes them to a file, and runs `flink_job.py` under the Flink
writer's own Python environment (`make flink`) as a child process, its settings in a file
(never on a command line: the catalog's properties may hold secrets). The job upserts into
the table through the `iceberg` connector: one commit per checkpoint, equality deletes on
the key, position deletes for keys rewritten within a checkpoint (deletion vectors on format
3: the sink writes them from Iceberg 1.10 on). The summary counts what the job's commits
added, read from the snapshots Flink stamped with its job id.

Flink's upsert sink needs every partition source column among its equality fields (an old
row in another partition could not be deleted otherwise), and its SQL connector takes them
from the table's identifier fields (Iceberg 1.11's `IcebergTableSink` drops the DDL's
primary key). A table keyed by `id` and partitioned by `region` therefore gets the
identifier fields (id, region): the same rows, since a key's region never changes.

A Flink process killed outside the job's control (`kill -9`, a lost machine) is restarted
from its latest completed checkpoint when `--restarts` allows, as a cluster manager restarts
a lost job: checkpoints are kept on disk (`RETAIN_ON_CANCELLATION`), and the new job starts
from the newest one (`execution.state-recovery.path`). The source resumes at the checkpoint's
event; the sink's committer finds its last committed checkpoint in the table's snapshots
(`flink.max-committed-checkpoint-id` under the old job's id, which EXPIRE keeps) and commits
what the checkpoint held and the table does not yet have: nothing twice, nothing lost. Data
files the killed job wrote after its last checkpoint were never committed: orphans. A job
that fails on its own (a commit refused, an error) is not restarted: that is the workload's
failure.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import structlog
from pyiceberg.table import Table

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.errors import FlinkJobError, UsageError
from maintenance.spark.errors import java_errors
from maintenance.workload.cdc import CdcOptions, CdcResult, prepare_cdc_table
from maintenance.workload.flink_runtime import JOB_START_ALLOWANCE_S, FlinkRuntime, check_flink, flink_catalog_properties, run_flink_program
from maintenance.workload.model import CdcModel, Change
from maintenance.workload.shape import COLUMNS, TableShape

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = structlog.get_logger(__name__)

FLINK_JOB = Path(__file__).with_name("flink_job.py")
_UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_FLINK_TYPES = {"TIMESTAMP": "TIMESTAMP_LTZ(6)"}  # Spark's TIMESTAMP is Iceberg's timestamptz; other names are the same in Flink
_KINDS = {"insert": "I", "update": "U", "delete": "D"}


@dataclass(frozen=True)
class FlinkOptions:
    checkpoint_interval_s: float = 2.0
    parallelism: int = 1  # of the sink's writers; the source and the event map run with 1
    restarts: int = 0  # from the latest checkpoint, after the Flink process was killed (module docstring)

    def __post_init__(self) -> None:
        if not 0.2 <= self.checkpoint_interval_s <= 600:
            raise UsageError("--checkpoint-interval must be between 0.2 and 600 seconds")
        if self.parallelism not in (1, 2):
            raise UsageError("--parallelism must be 1 or 2")
        if not 0 <= self.restarts <= 10:
            raise UsageError("--restarts must be between 0 and 10")


def check_flink_writer(config: Config, ref: TableRef) -> FlinkRuntime:
    """The Flink writer can write `ref` (`flink_runtime.check_flink`)."""
    return check_flink(config, [ref], "writer")


def equality_columns(table: Table, shape: TableShape) -> list[str]:
    """The key's columns and every partition source column not among them (module docstring)."""
    schema = table.schema()
    columns = list(shape.key_columns)
    for field in table.spec().fields:
        name = schema.find_field(field.source_id).name
        if name not in columns:
            columns.append(name)
    return columns


def run_flink_workload(spark: SparkSession, config: Config, ref: TableRef, options: CdcOptions, flink: FlinkOptions, runtime: FlinkRuntime,
                       progress: Callable[[str], None] = lambda phase: None) -> tuple[CdcResult, CdcModel]:
    """Create or extend `ref`, stream `options.rows` events into it through Flink over about
    `options.commits` checkpoints, and return the summary (counted from the job's commits)
    and the model."""
    catalog = config.catalog(ref.catalog)
    table, shape, model, created = prepare_cdc_table(spark, config, ref, options)
    keys = equality_columns(table, shape)
    if [table.schema().find_field(i).name for i in sorted(table.schema().identifier_field_ids)] != sorted(keys, key=_field_order):
        with java_errors(f"set the identifier fields of {ref}"):
            spark.sql(f"ALTER TABLE {ref.spark_name} SET IDENTIFIER FIELDS {', '.join(keys)}")
    changes = model.plan_changes(options.rows, options.update_ratio, options.delete_ratio)

    folder = config.home / "flink" / f"{ref.name}-{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
    folder.mkdir(parents=True, exist_ok=True)
    events_file = folder / "events.jsonl"
    events_file.write_text("".join(json.dumps(_wire(change)) + "\n" for change in changes), encoding="utf-8")
    planned_s = options.commits * flink.checkpoint_interval_s
    timeout_s = JOB_START_ALLOWANCE_S + 2 * planned_s
    flink_configuration: dict[str, str] = {
        "pipeline.jars": ";".join(Path(path).as_uri() for path in runtime.runtime_jars),
        "pipeline.name": f"icemaint workload cdc {ref}",
        "execution.checkpointing.interval": f"{int(flink.checkpoint_interval_s * 1000)} ms",
        # Every operator but the sink's writers (`write-parallelism`) runs with one
        # subtask: two between the event map and the writers would reorder a key's events.
        "parallelism.default": "1",
        "restart-strategy.type": "none",  # a failure ends the job: the workload reports it
        "state.checkpoints.dir": (folder / "checkpoints").as_uri(),
        "execution.checkpointing.externalized-checkpoint-retention": "RETAIN_ON_CANCELLATION",  # a killed job's restart point
        "python.executable": str(runtime.interpreter),
        "python.client.executable": str(runtime.interpreter),
    }
    settings = {
        "columns": [[name, _FLINK_TYPES.get(sql_type, sql_type), nullable] for name, sql_type, nullable in COLUMNS],
        "equality_columns": keys,
        "catalog_name": ref.catalog,
        "database": ref.namespace[0],
        "table": ref.name,
        "catalog_properties": flink_catalog_properties(catalog),
        "parallelism": flink.parallelism,
        "events": len(changes),
        "events_per_second": len(changes) / planned_s,
        "events_file": str(events_file),
        "outcome_file": str(folder / "outcome.json"),
        "job_ids_file": str(folder / "job_ids"),
        "timeout_s": timeout_s,
        "flink_configuration": flink_configuration,
        # The rows are already a changelog with the sink's key: no materializing operator.
        "table_configuration": {"table.exec.sink.upsert-materialize": "NONE"},
    }
    progress("running the Flink job")
    restarts = 0
    while True:
        outcome = run_flink_program(FLINK_JOB, runtime, settings, folder, timeout_s)
        if outcome is not None:
            break
        if restarts == flink.restarts:
            raise FlinkJobError(f"the Flink job's process was killed{f' {restarts} times' if restarts else ''} (--restarts {flink.restarts}; log: {folder / 'job.log'})")
        restarts += 1
        checkpoint = latest_checkpoint(folder / "checkpoints")
        flink_configuration.pop("execution.state-recovery.path", None)
        if checkpoint is not None:  # else no checkpoint completed, none committed: from the first event again
            flink_configuration["execution.state-recovery.path"] = checkpoint.as_uri()
        log.warning("flink job killed: restarting", restart=restarts, checkpoint=str(checkpoint) if checkpoint else None)
        progress(f"restarting the Flink job ({restarts})")
    events_file.unlink()  # as large as the workload; the job's log stays
    job_ids = set((folder / "job_ids").read_text().split())
    result = _summary(load_table(config, ref), ref, shape, created, job_ids, changes)
    result.expected_rows, result.writer_restarts = len(model.rows), restarts
    log.info("flink cdc workload written", seconds=outcome.get("seconds"), job_ids=sorted(job_ids), log_folder=str(folder), **result.to_json())
    return result, model


def latest_checkpoint(folder: Path) -> Path | None:
    """The newest completed checkpoint under Flink's `state.checkpoints.dir` (a checkpoint is
    complete once its `_metadata` is written; a killed job may leave a newer one without)."""
    completed = [metadata.parent for metadata in folder.glob("*/chk-*/_metadata")]
    return max(completed, key=lambda path: (path / "_metadata").stat().st_mtime_ns, default=None)


def _field_order(name: str) -> int:
    return [column for column, _, _ in COLUMNS].index(name)


def _wire(change: Change) -> list[object]:
    """One line of the events file (flink_job.py's format): kind, then the columns, the
    amount as exact text and the timestamp as epoch milliseconds (the model's are whole ms)."""
    row_id, region, customer, amount, status, updated_at, version = change.row
    millis = (updated_at - _UNIX_EPOCH) // timedelta(milliseconds=1)
    return [_KINDS[change.kind], row_id, region, customer, f"{amount:f}", status, millis, version]


_SUMMARY_COUNTERS = {
    "data_files": "added-data-files",
    "equality_delete_files": "added-equality-delete-files",
    "equality_delete_rows": "added-equality-deletes",
    "position_delete_files": "added-position-delete-files",
    "position_delete_rows": "added-position-deletes",
}


def _summary(table: Table, ref: TableRef, shape: TableShape, created: bool, job_ids: set[str], changes: list[Change]) -> CdcResult:
    """The generator's summary, counted from the snapshots the job committed (the id of the
    job or of a restart in their summaries); a deletion vector counts as a position delete
    file, as in the generator."""
    result = CdcResult(table=str(ref), shape=shape.encode(), created=created)
    for snapshot in table.metadata.snapshots:
        summary = snapshot.summary.additional_properties if snapshot.summary else {}
        if summary.get("flink.job-id") not in job_ids:
            continue
        result.commits += 1
        for name, key in _SUMMARY_COUNTERS.items():
            setattr(result, name, getattr(result, name) + int(summary.get(key, 0)))
        result.position_delete_files += int(summary.get("added-dvs", 0))
    result.inserts = sum(change.kind == "insert" for change in changes)
    result.updates = sum(change.kind == "update" for change in changes)
    result.deletes = sum(change.kind == "delete" for change in changes)
    current = table.current_snapshot()
    result.snapshot_id = current.snapshot_id if current else None
    return result
