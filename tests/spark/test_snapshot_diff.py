"""What a snapshot removed (verification's diff, `spark/snapshot_diff.py`), against
Iceberg's public diff."""

from __future__ import annotations

from typing import Any

import pytest

from maintenance.catalogs import load_table
from maintenance.config import Config
from maintenance.spark.jvm import load_java_table
from maintenance.spark.snapshot_diff import removed_keys
from maintenance.table.files import snapshot_files
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory, fresh_ref
from tests.support.iceberg_oracle import iceberg_removed_keys
from tests.support.tables import create


def _removed_keys_match_icebergs_diff(spark: Any, ref: Any) -> dict[int, set[str]]:
    """For every snapshot of the table, `removed_keys` against Iceberg's public diff; returns
    what each snapshot removed."""
    java = load_java_table(spark, ref)
    removed = {}
    for snapshot in java.snapshots():
        snapshot_id = int(snapshot.snapshotId())
        removed[snapshot_id] = removed_keys(spark, load_java_table(spark, ref), snapshot_id)  # a fresh table: nothing read before
        assert removed[snapshot_id] == iceberg_removed_keys(java, snapshot_id)
    return removed


@pytest.mark.parametrize("format_version", [2, 3])
def test_removed_keys_are_icebergs_own_diff_of_spark_written_snapshots(spark: Any, config: Config, format_version: int) -> None:
    """Spark's DELETE, UPDATE and MERGE (position deletes on v2; on v3 deletion vectors, each
    one replaced when its data file loses more rows), then Iceberg's own rewrites of data
    files and of position deletes: what each snapshot removed, read with projected manifests,
    is what Iceberg's diff says, deletion vectors by their offset."""
    ref = fresh_ref(config, "removed")
    create(spark, ref, "id bigint, region int, name string")
    spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('format-version'='{format_version}')")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD region")
    for start in (0, 100):
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, CAST(id % 3 AS INT), CAST(id AS STRING) FROM range({start}, {start + 100})")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 5 = 0")
    spark.sql(f"UPDATE {ref.spark_name} SET name = 'u' WHERE id % 7 = 1")
    spark.sql(f"MERGE INTO {ref.spark_name} t USING (SELECT id FROM range(0, 200) WHERE id % 11 = 3) s ON t.id = s.id WHEN MATCHED THEN DELETE")
    spark.sql(f"CALL local.system.rewrite_position_delete_files(table => '{ref.identifier}', options => map('rewrite-all', 'true'))")
    spark.sql(f"CALL local.system.rewrite_data_files(table => '{ref.identifier}', where => 'region = 1', options => map('rewrite-all', 'true'))")
    removed = _removed_keys_match_icebergs_diff(spark, ref)
    everything = set().union(*removed.values())
    assert any(key.endswith(".parquet") and "/data/" in key for key in everything)
    if format_version == 3:
        assert any("#" in key for key in everything)  # deletion vectors, replaced by later ones


def test_removed_keys_of_a_cdc_tables_merge_hold_its_equality_deletes(spark: Any, config: Config, cdc_table: CdcFactory) -> None:
    """icemaint's own MERGE of one partition on a streaming table: the data files and the
    equality and position deletes it drops, from every manifest the commit rewrote."""
    from maintenance.run.runner import run_job

    ref, _, _ = cdc_table(shape=TableShape("identity", 3, "single"), rows=1200, commits=4, update_ratio=0.2, delete_ratio=0.05)
    before = snapshot_files(load_table(config, ref))
    run_job(config, ref, "merge", {"partitions": ["region=1"]})
    removed = _removed_keys_match_icebergs_diff(spark, ref)
    merged = removed[load_table(config, ref).metadata.current_snapshot_id]
    assert {f.key for f in before.equality_deletes if f.partition == (1,)} <= merged
    assert {f.key for f in before.data if f.partition == (1,)} <= merged
