"""`icemaint workload cdc`: a table written the way streaming CDC upsert sinks write it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

import structlog
from pyiceberg.table import Table

from maintenance.catalogs import TableRef, load_table, table_exists
from maintenance.config import Config
from maintenance.errors import UsageError
from maintenance.spark.errors import java_errors
from maintenance.spark.jvm import load_java_table
from maintenance.workload.model import CdcModel, Row
from maintenance.workload.shape import COLUMN_NAMES, SHAPE_PROPERTY, TableShape
from maintenance.workload.writer import BatchWriter

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = structlog.get_logger(__name__)
_UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True)
class CdcOptions:
    rows: int = 10_000
    commits: int = 10
    update_ratio: float = 0.1
    delete_ratio: float = 0.02
    seed: int = 42
    shape: TableShape = field(default_factory=TableShape)
    format_version: int = 2  # of a table created; an existing table keeps its own

    def __post_init__(self) -> None:
        if self.format_version not in (2, 3):
            raise UsageError("--format-version must be 2 or 3")
        if self.rows < 1 or self.commits < 1:
            raise UsageError("--rows and --commits must be at least 1")
        if not (0 <= self.update_ratio <= 1 and 0 <= self.delete_ratio <= 1 and self.update_ratio + self.delete_ratio <= 1):
            raise UsageError("--update-ratio and --delete-ratio must be in [0, 1] and add up to at most 1")


@dataclass
class CdcResult:
    table: str
    shape: str
    created: bool
    commits: int = 0
    snapshot_id: int | None = None
    inserts: int = 0
    updates: int = 0
    deletes: int = 0
    data_files: int = 0
    equality_delete_files: int = 0
    equality_delete_rows: int = 0
    position_delete_files: int = 0
    position_delete_rows: int = 0
    expected_rows: int = 0
    writer_restarts: int = 0  # the Flink writer's, from a checkpoint after its process was killed

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def prepare_cdc_table(spark: SparkSession, config: Config, ref: TableRef, options: CdcOptions) -> tuple[Table, TableShape, CdcModel, bool]:
    """Create `ref` (or take it as it is, with its own shape) and the model of its rows,
    seeded by the options' seed and the table's sequence number: (table, shape, model, created).
    Both writers start here, the generator and the Flink job."""
    created = not table_exists(config, ref)
    if created:
        shape = options.shape
        with java_errors(f"create {ref}"):
            spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {ref.spark_namespace}")
            spark.sql(shape.create_table_sql(ref.spark_name, options.format_version))
            spark.sql(f"ALTER TABLE {ref.spark_name} SET IDENTIFIER FIELDS {', '.join(shape.key_columns)}")
    table = load_table(config, ref)
    shape = _shape_of(table, ref)
    if not created and shape != options.shape:
        log.info("extending table with its own shape", table=str(ref), shape=shape.encode(), requested=options.shape.encode())

    seed = f"{options.seed}:{table.metadata.last_sequence_number}"
    model = CdcModel(shape, _partitioner(table, shape), seed)
    if not created:
        model.load(_existing_rows(spark, ref))
    return table, shape, model, created


def run_cdc_workload(spark: SparkSession, config: Config, ref: TableRef, options: CdcOptions,
                     progress: Callable[[int, int], None] = lambda done, total: None) -> tuple[CdcResult, CdcModel]:
    """Create or extend `ref` and write the commits (`progress(done, total)` after each);
    returns the summary and the model."""
    table, shape, model, created = prepare_cdc_table(spark, config, ref, options)
    java_table = load_java_table(spark, ref)
    writer = BatchWriter(spark, java_table, table.io, table.schema(), shape)
    result = CdcResult(table=str(ref), shape=shape.encode(), created=created)
    per_commit, remainder = divmod(options.rows, options.commits)
    for commit in range(options.commits):
        events = per_commit + (1 if commit < remainder else 0)
        batch = model.plan_batch(events, options.update_ratio, options.delete_ratio)
        label = f"cdc-{table.metadata.last_sequence_number + commit + 1:06d}"
        with java_errors(f"commit CDC batch {commit + 1} to {ref}"):
            stats = writer.commit(batch, label=label, summary={"icemaint.workload": "cdc", "icemaint.workload.seed": str(options.seed)})
        result.commits += 1
        progress(result.commits, options.commits)
        result.inserts += batch.inserts
        result.updates += batch.updates
        result.deletes += batch.deletes
        for name, value in asdict(stats).items():
            setattr(result, name, getattr(result, name) + value)
    java_table.refresh()
    result.snapshot_id = int(java_table.currentSnapshot().snapshotId())
    result.expected_rows = len(model.rows)
    log.info("cdc workload written", **result.to_json())
    return result, model


def _shape_of(table: Table, ref: TableRef) -> TableShape:
    text = table.properties.get(SHAPE_PROPERTY)
    if text is None:
        raise UsageError(f"table '{ref}' was not created by 'icemaint workload cdc' (no {SHAPE_PROPERTY} property)")
    return TableShape.decode(text)


def _partitioner(table: Table, shape: TableShape):  # type: ignore[no-untyped-def]
    """Row -> partition path, computed by pyiceberg's transforms (Iceberg's own murmur3 buckets)."""
    spec = table.spec()  # the current spec: after spec evolution new files follow it
    if not spec.fields:
        return lambda row: ""
    schema = table.schema()
    if len(spec.fields) != 1:
        raise UsageError(f"the CDC workload writes tables with one partition field, not {len(spec.fields)}")
    (partition_field,) = spec.fields
    source = schema.find_field(partition_field.source_id)
    position = COLUMN_NAMES.index(source.name)
    transform = partition_field.transform.transform(source.field_type)
    name = partition_field.name
    return lambda row: f"{name}={transform(row[position])}"


def _existing_rows(spark: SparkSession, ref: TableRef) -> list[Row]:
    """The table's rows; timestamps cross as epoch micros (PySpark would make them naive local times)."""
    columns = ", ".join("unix_micros(updated_at) AS updated_at" if name == "updated_at" else name for name in COLUMN_NAMES)
    with java_errors(f"read {ref}"):
        spark.sql(f"REFRESH TABLE {ref.spark_name}")
        rows = spark.sql(f"SELECT {columns} FROM {ref.spark_name}").collect()
    ts = COLUMN_NAMES.index("updated_at")
    return [tuple(_UNIX_EPOCH + timedelta(microseconds=v) if i == ts and v is not None else v for i, v in enumerate(r)) for r in rows]
