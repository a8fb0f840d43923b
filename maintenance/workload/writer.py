"""Writes a planned CDC batch as Parquet files and commits it as one Iceberg RowDelta.

Files are written by pyarrow (with `PARQUET:field_id` metadata) through the table's own
FileIO; Java builds the Iceberg records from the files themselves (size, metrics), so no
long crosses the Py4J gateway as an Integer. Data files, equality deletes and position
deletes of a batch share one commit, and so one sequence number, as a streaming sink's do.
On a format-3 table the in-batch supersedes are deletion vectors (one Puffin file per
batch), as Flink writes format 3; equality deletes stay equality deletes.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
from pyiceberg.io import FileIO
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.schema import Schema

from maintenance.spark.content_files import ContentFiles
from maintenance.spark.deletion_vectors import DeletionVectorWriter
from maintenance.spark.jvm import JavaObject, format_version
from maintenance.table.parquet_files import write_parquet
from maintenance.table.position_deletes import POSITION_DELETE_SCHEMA
from maintenance.workload.model import Batch, Row
from maintenance.workload.shape import COLUMN_NAMES, TableShape

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

@dataclass
class CommitStats:
    data_files: int = 0
    equality_delete_files: int = 0
    equality_delete_rows: int = 0
    position_delete_files: int = 0
    position_delete_rows: int = 0


class BatchWriter:
    """Commits batches to one table through the Java API; one instance per workload run."""

    def __init__(self, spark: SparkSession, java_table: JavaObject, io: FileIO, schema: Schema, shape: TableShape) -> None:
        self.spark = spark
        self.table = java_table
        self.io = io
        self.shape = shape
        self.data_schema = schema_to_pyarrow(schema, include_field_ids=True)
        key_schema = schema.select(*shape.key_columns)
        self.key_schema = schema_to_pyarrow(key_schema, include_field_ids=True)
        self.key_field_ids = [schema.find_field(name).field_id for name in shape.key_columns]
        self.files = ContentFiles(spark, java_table)
        self.spec_id = int(java_table.spec().specId())
        self.format_version = format_version(spark, java_table)

    def commit(self, batch: Batch, *, label: str, summary: dict[str, str]) -> CommitStats:
        stats = CommitStats()
        delta = self.table.newRowDelta()
        dvs = DeletionVectorWriter(self.spark, self.table, label) if self.format_version >= 3 else None
        for path, part in sorted(batch.partitions.items()):
            data_location: str | None = None
            if part.rows:
                data_file = self.files.data_file(self._write(path, label, "data", self._data_table(part.rows)), self.spec_id, path)
                delta.addRows(data_file)
                data_location = str(data_file.location())
                stats.data_files += 1
            if part.equality_deletes:
                key_rows = list(dict.fromkeys(part.equality_deletes))
                location = self._write(path, label, "eq-deletes", self._key_table(key_rows))
                delta.addDeletes(self.files.equality_delete_file(location, self.spec_id, path, self.key_field_ids))
                stats.equality_delete_files += 1
                stats.equality_delete_rows += len(key_rows)
            if part.position_deletes and dvs is not None:
                dvs.add(data_file, part.position_deletes)
                stats.position_delete_files += 1
                stats.position_delete_rows += len(part.position_deletes)
            elif part.position_deletes:
                # Positions refer to this batch's data file, by the exact path Java registered.
                assert data_location is not None
                frame = pa.table({"file_path": [data_location] * len(part.position_deletes), "pos": part.position_deletes}, schema=POSITION_DELETE_SCHEMA)
                location = self._write(path, label, "pos-deletes", frame)
                delta.addDeletes(self.files.position_delete_file(location, self.spec_id, path, referenced_data_file=data_location))
                stats.position_delete_files += 1
                stats.position_delete_rows += len(part.position_deletes)
        for dv in dvs.close() if dvs is not None else []:
            delta.addDeletes(dv)
        if dvs is not None:
            self._validate_from_current(delta)
        for key, value in summary.items():
            delta.set(key, value)
        delta.commit()
        return stats

    def _validate_from_current(self, delta: JavaObject) -> None:
        """A row delta that adds DVs checks no other DV landed for the same data files since
        its starting snapshot. Without one, Iceberg walks the whole history and fails once
        EXPIRE removed its start ("Cannot determine history"); a writer starts from the
        snapshot it read, which here is the current one (the workload is the only writer)."""
        self.table.refresh()
        current = self.table.currentSnapshot()
        if current is not None:
            delta.validateFromSnapshot(current.snapshotId())

    # -- files ---------------------------------------------------------------------------
    def _write(self, partition_path: str, label: str, kind: str, frame: pa.Table) -> str:
        folder = f"{str(self.table.location()).rstrip('/')}/data" + (f"/{partition_path}" if partition_path else "")
        location = f"{folder}/{label}-{kind}-{uuid.uuid4().hex[:12]}.parquet"
        write_parquet(self.io, location, frame)
        return location

    def _data_table(self, rows: list[Row]) -> pa.Table:
        columns = list(zip(*rows))
        return pa.table({name: list(values) for name, values in zip(COLUMN_NAMES, columns)}, schema=self.data_schema)

    def _key_table(self, keys: list[tuple[int, ...]]) -> pa.Table:
        # Model keys are (region, id) or (id,), in the order of the shape's key columns.
        columns = list(zip(*keys))
        return pa.table({name: list(values) for name, values in zip(self.shape.key_columns, columns)}, schema=self.key_schema)
