"""`maintenance/spark/deleted_rows.py`: each data file's deleted rows, against Spark's reads.

The oracle is Spark reading the table through Iceberg (every delete applied): a data file's
deleted rows on a snapshot are its record count less the rows Spark reads from it there.
Tables: Spark's own DELETE, UPDATE and MERGE (position deletes, DVs on format 3) and a
generated CDC table (equality deletes on a key, NULL-free) and one with NULL keys.
"""

from __future__ import annotations

from typing import Any

import pytest

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.spark.deleted_rows import deleted_rows
from maintenance.spark.jvm import load_java_table
from maintenance.table.files import snapshot_files
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory, fresh_ref
from tests.support.row_deltas import commit_row_delta
from tests.support.tables import create


def deleted_by_spark(spark: Any, ref: TableRef, snapshot_id: int, records: dict[str, int]) -> int:
    """Rows of these data files Spark does not read at the snapshot: their deleted rows."""
    visible = {r[0]: int(r[1]) for r in spark.sql(f"SELECT _file, count(*) FROM {ref.spark_name} VERSION AS OF {snapshot_id} GROUP BY _file").collect()}
    return sum(count - visible.get(path, 0) for path, count in records.items())


def assert_counts_as_spark(spark: Any, config: Config, ref: TableRef) -> int:
    """For every snapshot and the next one that holds the same data files: the deleted rows
    on each side are Spark's, and the digests agree exactly when the counts do. Returns the
    pairs checked."""
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    table, java = load_table(config, ref), load_java_table(spark, ref)
    checked = 0
    for snapshot in table.metadata.snapshots:
        parent_id = snapshot.parent_snapshot_id
        if parent_id is None:
            continue
        before, after = snapshot_files(table, parent_id), snapshot_files(table, snapshot.snapshot_id)
        if {f.path for f in before.data} != {f.path for f in after.data}:
            continue
        data = before.data
        result = deleted_rows(spark, java, parent_id, snapshot.snapshot_id, data, before.files, after.files)
        records = {f.path: f.records for f in data}
        expected = (deleted_by_spark(spark, ref, parent_id, records), deleted_by_spark(spark, ref, snapshot.snapshot_id, records))
        assert (result.before.rows, result.after.rows) == expected, (snapshot.snapshot_id, result)
        assert result.same == (expected[0] == expected[1]), result
        itself = deleted_rows(spark, java, snapshot.snapshot_id, snapshot.snapshot_id, data, after.files, after.files)
        assert itself.same and itself.before.rows == expected[1]
        checked += 1
    return checked


@pytest.mark.parametrize("format_version", [2, 3])
def test_spark_written_deletes_count_as_spark_reads_them(spark, config: Config, format_version: int) -> None:
    ref = fresh_ref(config, "spark_deletes")
    create(spark, ref, "id BIGINT, region INT, v STRING")
    if format_version == 3:
        spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('format-version'='3')")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD region")
    spark.range(0, 3000).selectExpr("id", "cast(id % 3 as int) region", "cast(id as string) v").writeTo(ref.spark_name).append()
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 7 = 0")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id BETWEEN 100 AND 400")  # DVs replaced on format 3
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id = 2999")
    assert assert_counts_as_spark(spark, config, ref) == 3


def test_equality_deletes_with_null_and_composite_keys_count_as_spark_reads_them(spark, config: Config) -> None:
    ref = fresh_ref(config, "eq_nulls")
    create(spark, ref, "id BIGINT, k STRING, v STRING", "'write.metadata.metrics.default'='counts'")
    spark.range(0, 500).selectExpr("id", "cast(id % 4 as string) k", "'x' v").writeTo(ref.spark_name).append()
    spark.sql(f"INSERT INTO {ref.spark_name} VALUES (NULL, '1', 'a'), (NULL, NULL, 'b'), (9, NULL, 'c')")
    commit_row_delta(spark, config, ref, equality_deletes=[{"id": None}, {"id": 5}], equality_columns=("id",))
    commit_row_delta(spark, config, ref, equality_deletes=[{"id": None, "k": None}, {"id": 9, "k": None}, {"id": 12, "k": "0"}], equality_columns=("id", "k"))
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id = 20")  # a position delete beside them
    # equality deletes change no data file: each commit is a pair of the same data files
    assert assert_counts_as_spark(spark, config, ref) == 3


def test_a_cdc_tables_equality_and_position_deletes_count_as_spark_reads_them(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(shape=TableShape("bucket", 2, "composite"), rows=2000, commits=3, update_ratio=0.3, delete_ratio=0.1)
    table = load_table(config, ref)
    current = table.metadata.current_snapshot_id
    files = snapshot_files(table, current)
    result = deleted_rows(spark, load_java_table(spark, ref), current, current, files.data, files.files, files.files)
    expected = deleted_by_spark(spark, ref, current, {f.path: f.records for f in files.data})
    assert result.same and result.before.rows == expected > 0
    newest = max(f.seq for f in files.data)  # no equality delete applies to the last commit's files: not read
    assert result.files_read == sum(1 for f in files.data if f.seq < newest) > 0
