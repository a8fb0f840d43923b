"""The scan tasks a rewrite and its verification read: planned for the wanted files'
partitions only, and still exactly Iceberg's own tasks of the whole snapshot for those
files (every delete that applies). The oracle is Iceberg's unfiltered `planFiles()`.
(What a snapshot removed, verification's diff, is `test_snapshot_diff.py`.)"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import Any

import pytest

from maintenance.catalogs import load_table
from maintenance.config import Config
from maintenance.spark.jvm import load_java_table
from maintenance.spark.planned_tasks import PlannedTasks, encoded_partitions, partitions_to_scan
from maintenance.table.files import TableFile, snapshot_files
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory, fresh_ref
from tests.support.iceberg_oracle import iceberg_deletes_by_data_file
from tests.support.tables import create


def _by_partition(files: list[TableFile]) -> dict[Any, list[TableFile]]:
    found: dict[Any, list[TableFile]] = defaultdict(list)
    for f in files:
        found[f.partition_key].append(f)
    return found


def _planned_deletes(tasks: PlannedTasks, files: list[TableFile]) -> dict[str, set[str]]:
    java = tasks.for_group([f.path for f in files]).java
    return {str(java.get(i).file().location()): {str(d.location()) for d in java.get(i).deletes()} for i in range(java.size())}


def _each_partition_planned_alone(spark: Any, config: Config, ref: Any) -> tuple[int, int]:
    """Plans every partition's data files on their own; each must hold exactly Iceberg's
    whole-snapshot tasks' deletes. Returns (partitions, those planned through the filter)."""
    table = load_table(config, ref)
    snapshot_id = table.metadata.current_snapshot_id
    java = load_java_table(spark, ref)
    oracle = iceberg_deletes_by_data_file(java, snapshot_id)
    snapshot = snapshot_files(table, snapshot_id)
    partitions = _by_partition(snapshot.data)
    filtered = 0
    for files in partitions.values():
        tasks = PlannedTasks(spark, java, snapshot_id, files, "test", snapshot.files)
        assert _planned_deletes(tasks, files) == {f.path: oracle[f.path] for f in files}
        filtered += tasks.filtered
    return len(partitions), filtered


@pytest.mark.parametrize("format_version", [2, 3])
def test_spark_written_partitions_of_every_transform_are_planned_alone_with_every_delete(spark: Any, config: Config, format_version: int) -> None:
    """Identity (string with NULL, date, decimal, boolean), bucket, days, truncate; then the
    spec evolves; Spark's DELETE, UPDATE and MERGE write position deletes (DVs on v3)."""
    ref = fresh_ref(config, "planned")
    create(spark, ref, "id bigint, name string, day date, ts timestamp, amount decimal(10,2), flag boolean")
    spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('format-version'='{format_version}')")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD name")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD day")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD bucket(3, id)")
    rows = ", ".join(
        f"({i}, {'NULL' if i % 7 == 0 else repr(f'n{i % 3}')}, DATE '2024-01-0{1 + i % 2}', TIMESTAMP '2024-02-0{1 + i % 3} 10:00:00', "
        f"{i % 4}.25, {'true' if i % 2 else 'false'})" for i in range(60))
    for _ in range(2):
        spark.sql(f"INSERT INTO {ref.spark_name} VALUES {rows}")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 5 = 0")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD days(ts)")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD truncate(2, name)")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD amount")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD flag")
    spark.sql(f"INSERT INTO {ref.spark_name} VALUES {rows}")
    spark.sql(f"UPDATE {ref.spark_name} SET amount = amount + 1 WHERE id % 4 = 1")
    spark.sql(f"MERGE INTO {ref.spark_name} t USING (SELECT id FROM {ref.spark_name} WHERE id % 6 = 2) s ON t.id = s.id "
              "WHEN MATCHED THEN DELETE")
    partitions, filtered = _each_partition_planned_alone(spark, config, ref)
    assert partitions > 20
    assert filtered == partitions  # every one of these values and transforms has a filter


def test_equality_deletes_of_a_cdc_table_apply_as_in_the_whole_scan(spark: Any, config: Config, cdc_table: CdcFactory) -> None:
    """A streaming writer's equality deletes (and its position deletes) on a bucketed table."""
    ref, _, _ = cdc_table(shape=TableShape("bucket", 4, "single"), rows=2000, commits=6, update_ratio=0.2, delete_ratio=0.05)
    partitions, filtered = _each_partition_planned_alone(spark, config, ref)
    assert partitions == filtered == 4


def test_a_partition_that_has_no_filter_or_misses_a_file_is_planned_from_the_whole_snapshot(spark: Any, config: Config,
                                                                                          cdc_table: CdcFactory) -> None:
    """A value the filter cannot say (a float) widens it to the whole snapshot; a partition
    value that is not the file's (the filter would lose the file) makes the planner plan the
    whole snapshot again: in both, the tasks are still Iceberg's."""
    ref, _, _ = cdc_table(shape=TableShape("identity", 3, "single"), rows=1200, commits=4, update_ratio=0.2, delete_ratio=0.05)
    table = load_table(config, ref)
    snapshot_id = table.metadata.current_snapshot_id
    java = load_java_table(spark, ref)
    oracle = iceberg_deletes_by_data_file(java, snapshot_id)
    snapshot = snapshot_files(table, snapshot_id)
    files = next(iter(_by_partition(snapshot.data).values()))
    for changed, encoded in (((1.5,), "?"), ((99,), "i99")):
        wrong = [dataclasses.replace(f, partition=changed) for f in files]
        assert encoded_partitions(wrong).endswith(f"\t{encoded}")
        tasks = PlannedTasks(spark, java, snapshot_id, wrong, "test", snapshot.files)
        assert not tasks.filtered
        assert _planned_deletes(tasks, files) == {f.path: oracle[f.path] for f in files}


def test_a_deletion_vector_outside_its_data_files_partition_makes_the_whole_snapshot_planned(spark: Any, config: Config) -> None:
    """The spec forbids it, but Iceberg 1.10 applies a deletion vector (or a file-scoped
    position delete) by the path it names, whatever its partition, where the filter's
    partition pruning would drop it. Metadata that says so (a real DV, moved to another
    partition on the way in) must make the planner plan the whole snapshot."""
    ref = fresh_ref(config, "planned_dv")
    create(spark, ref, "id bigint, region int")
    spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('format-version'='3')")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD region")
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, CAST(id % 2 AS INT) FROM range(40)")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 5 = 0")
    table = load_table(config, ref)
    snapshot_id = table.metadata.current_snapshot_id
    snapshot = snapshot_files(table, snapshot_id)
    dv = snapshot.deletion_vectors[0]
    files = [f for f in snapshot.data if f.path == dv.referenced_data_file]
    assert partitions_to_scan(files, snapshot.files) == encoded_partitions(files) != ""
    moved = [dataclasses.replace(dv, partition=(7,)) if f is dv else f for f in snapshot.files]
    assert partitions_to_scan(files, moved) == ""
    java = load_java_table(spark, ref)
    tasks = PlannedTasks(spark, java, snapshot_id, files, "test", moved)
    assert not tasks.filtered
    assert _planned_deletes(tasks, files) == {f.path: iceberg_deletes_by_data_file(java, snapshot_id)[f.path] for f in files} == {files[0].path: {dv.path}}
