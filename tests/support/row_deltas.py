"""Hand-made commits for tests: data rows and equality deletes of any schema, via the Java API."""

from __future__ import annotations

import uuid
from typing import Any

import pyarrow as pa
from pyiceberg.io.pyarrow import schema_to_pyarrow

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.spark.content_files import ContentFiles
from maintenance.spark.jvm import load_java_table
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
