"""The change scope's premise (`publish/change_scope.py`), checked against Iceberg's own planner
on Spark-written tables and on icemaint's own changes: for every pair of consecutive
snapshots, every data file outside the change's scope is live on both sides with exactly the
deletes Iceberg's `planFiles()` attaches to it on both sides (the module's docstring proves
the rest)."""

from __future__ import annotations

from typing import Any

import pytest

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.publish.change_scope import change_scope
from maintenance.run.outcome import COMMITTED
from maintenance.run.runner import run_job
from maintenance.spark.jvm import load_java_table
from maintenance.table.files import snapshot_files
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory
from tests.support.iceberg_oracle import iceberg_deletes_by_data_file
from tests.support.verification import merge_on_read_table


def assert_scope_holds_for_every_change(spark: Any, config: Config, ref: TableRef) -> int:
    """For each snapshot and its parent: outside the change's scope, Iceberg applies the same
    deletes to the same data files on both sides. Returns how many changes were checked."""
    table = load_table(config, ref)
    java = load_java_table(spark, ref)
    checked = 0
    for snapshot in table.metadata.snapshots:
        if snapshot.parent_snapshot_id is None:
            continue
        before = snapshot_files(table, snapshot.parent_snapshot_id)
        after = snapshot_files(table, snapshot.snapshot_id)
        scope = change_scope(before, after)
        in_scope = {f.path for f in (*scope.before, *scope.after)}
        iceberg_before = iceberg_deletes_by_data_file(java, snapshot.parent_snapshot_id)
        iceberg_after = iceberg_deletes_by_data_file(java, snapshot.snapshot_id)
        for path in iceberg_before.keys() | iceberg_after.keys():
            if path in in_scope:
                continue
            assert path in iceberg_before and path in iceberg_after, f"{path}: outside the scope but not live on both sides"
            assert iceberg_before[path] == iceberg_after[path], f"{path}: outside the scope, but Iceberg applies other deletes after the change"
        checked += 1
    return checked


@pytest.mark.parametrize("format_version", [2, 3])
def test_outside_its_scope_a_change_leaves_every_data_file_as_iceberg_reads_it(spark, config: Config, format_version: int) -> None:
    """Spark's own merge-on-read writes (DELETE, UPDATE, MERGE INTO: position deletes, or DVs
    on format 3), partition evolution, then icemaint's jobs on one partition and on all."""
    ref = merge_on_read_table(spark, config, format_version)
    for batch in range(4):
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, CAST(id % 4 AS INT), CONCAT('v', id) FROM range({batch * 400}, {(batch + 1) * 400})")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 7 = 0 AND region = 1")
    spark.sql(f"UPDATE {ref.spark_name} SET v = 'updated' WHERE id % 11 = 0")
    spark.sql(f"MERGE INTO {ref.spark_name} t USING (SELECT id, CAST(id % 4 AS INT) AS region FROM range(0, 1600, 13)) s "
              f"ON t.id = s.id WHEN MATCHED AND t.region = 2 THEN DELETE WHEN MATCHED THEN UPDATE SET v = 'merged'")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD bucket(4, id)")
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, CAST(id % 4 AS INT), 'late' FROM range(1600, 1800)")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 5 = 0 AND region = 3")
    for job, options in (("compact", {"min_input_files": 2, "partitions": ["region=0"]}), ("merge", {}), ("compact", {"min_input_files": 2})):
        result = run_job(config, ref, job, options, verify=True)
        assert result.status in (COMMITTED, "noop") and result.content_verified is not False, (job, result.error)
    assert assert_scope_holds_for_every_change(spark, config, ref) >= 9


def test_outside_its_scope_a_cdc_change_leaves_every_data_file_as_iceberg_reads_it(spark, config: Config, cdc_table: CdcFactory) -> None:
    """Equality deletes (partition-scoped and global) from a CDC writer, then CONVERT,
    REWRITE and MERGE of one partition."""
    for shape in (TableShape("identity", 3, "single"), TableShape("none", 1, "single")):
        ref, _, _ = cdc_table(shape=shape, rows=900, commits=5, update_ratio=0.3, delete_ratio=0.05)
        for job, options in (("rewrite", {}), ("merge", {"partitions": ["region=1"]} if shape.partitioned else {}), ("convert", {})):
            result = run_job(config, ref, job, options, verify=True)
            assert result.status in (COMMITTED, "noop") and result.content_verified is not False, (job, result.error)
        assert assert_scope_holds_for_every_change(spark, config, ref) >= 5
