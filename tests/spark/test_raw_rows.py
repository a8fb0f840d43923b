"""How a verification's reads are shared out over Spark tasks (maintenance/spark/raw_rows.py):
by bytes, up to the cores, never a Spark task per file; and the rows read are the same."""

from __future__ import annotations

from typing import Any

from maintenance.catalogs import load_table
from maintenance.config import Config
from maintenance.spark.jvm import load_java_table
from maintenance.spark.planned_tasks import PlannedTasks
from maintenance.spark.raw_rows import READ_SHARE_BYTES, SPLIT_SIZE, read_split_size, read_tasks, staged_rows
from maintenance.spark.stream_reads import table_for_file_reads
from maintenance.table.files import snapshot_files
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory


def test_small_reads_take_one_task_and_big_ones_every_core_in_splits_of_at_most_128_mib(spark: Any) -> None:
    cores = spark.sparkContext.defaultParallelism
    assert read_tasks(spark, [40_000] * 40) == 1
    assert read_tasks(spark, [READ_SHARE_BYTES] * 40) == min(cores, 40)
    assert read_tasks(spark, [READ_SHARE_BYTES * 4]) == 1  # one scan task is never cut
    assert read_split_size(spark, [READ_SHARE_BYTES] * 1000) == SPLIT_SIZE
    assert read_split_size(spark, []) == 1


def test_a_partition_of_small_files_each_with_many_deletes_is_read_by_one_task_with_every_row(spark: Any, config: Config,
                                                                                              cdc_table: CdcFactory) -> None:
    """Iceberg's own packing weighs every file a task opens at 4 MiB, its deletes included:
    each small data file carrying deletes became a Spark task of its own."""
    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=3000, commits=12, update_ratio=0.2, delete_ratio=0.05)
    table = load_table(config, ref)
    snapshot_id = table.metadata.current_snapshot_id
    files = snapshot_files(table, snapshot_id)
    chosen = [f for f in files.data if "region=0" in f.path]
    assert len(chosen) >= 10
    java = load_java_table(spark, ref)
    tasks = PlannedTasks(spark, java, snapshot_id, chosen, "test", files.files).for_group([f.path for f in chosen])
    reads = table_for_file_reads(spark, java, files.files)
    with staged_rows(spark, reads, tasks.java) as packed_by_iceberg:
        assert packed_by_iceberg.rdd.getNumPartitions() > 1
        expected = packed_by_iceberg.collect()
    with staged_rows(spark, reads, tasks.java, read_split_size(spark, tasks.sizes)) as shared_out:
        assert shared_out.rdd.getNumPartitions() == 1
        assert sorted(shared_out.collect()) == sorted(expected)
    expected_rows = spark.sql(f"SELECT count(*) FROM {ref.spark_name} WHERE region = 0").collect()[0][0]
    assert len(expected) == expected_rows
