"""Hand-made commits for tests: data rows, equality deletes of any schema and position deletes, via the Java API."""

from __future__ import annotations

import uuid
from typing import Any

import pyarrow as pa
from pyiceberg.io.pyarrow import schema_to_pyarrow

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.spark.content_files import ContentFiles
from maintenance.spark.jvm import load_java_table
from maintenance.table.position_deletes import POSITION_DELETE_SCHEMA
from maintenance.workload.writer import write_parquet


def commit_row_delta(
    spark: Any,
    config: Config,
    ref: TableRef,
    *,
    rows: list[dict[str, Any]] | None = None,
    equality_deletes: list[dict[str, Any]] | None = None,
    equality_columns: tuple[str, ...] = (),
    partition_path: str = "",
) -> None:
    """One RowDelta: `rows` as a data file, `equality_deletes` as an equality delete file."""
    table = load_table(config, ref)
    java_table = load_java_table(spark, ref)
    files = ContentFiles(spark, java_table)
    spec_id = int(java_table.spec().specId())
    folder = f"{table.location().rstrip('/')}/data" + (f"/{partition_path}" if partition_path else "")
    delta = java_table.newRowDelta()
    if rows:
        location = f"{folder}/test-data-{uuid.uuid4().hex[:8]}.parquet"
        write_parquet(table.io, location, pa.Table.from_pylist(rows, schema=schema_to_pyarrow(table.schema(), include_field_ids=True)))
        delta = delta.addRows(files.data_file(location, spec_id, partition_path))
    if equality_deletes:
        key_schema = table.schema().select(*equality_columns)
        location = f"{folder}/test-eq-{uuid.uuid4().hex[:8]}.parquet"
        write_parquet(table.io, location, pa.Table.from_pylist(equality_deletes, schema=schema_to_pyarrow(key_schema, include_field_ids=True)))
        field_ids = [key_schema.find_field(c).field_id for c in equality_columns]
        delta = delta.addDeletes(files.equality_delete_file(location, spec_id, partition_path, field_ids))
    delta.commit()


def position_deletes(spark: Any, config: Config, ref: TableRef, entries: list[tuple[str, int]], partition_path: str) -> None:
    """One RowDelta adding a position delete file of `partition_path` (of the current spec)."""
    table = load_table(config, ref)
    java_table = load_java_table(spark, ref)
    location = f"{table.location().rstrip('/')}/data/{partition_path}/adv-pos-{uuid.uuid4().hex[:8]}.parquet"
    entries = sorted(entries)
    write_parquet(table.io, location, pa.table({"file_path": [e[0] for e in entries], "pos": [e[1] for e in entries]}, schema=POSITION_DELETE_SCHEMA))
    delete = ContentFiles(spark, java_table).position_delete_file(location, int(java_table.spec().specId()), partition_path)
    java_table.newRowDelta().addDeletes(delete).commit()
