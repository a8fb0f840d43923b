"""Reading table files' rows as they are on disk, through Iceberg's own Spark reader.

CONVERT must see the rows of data files *before* any delete is applied (a table scan hides
exactly the rows an equality delete deletes), with each row's position. Iceberg's reader
does that when it is handed scan tasks that carry no deletes, and it also does what a
plain Parquet read gets wrong: columns are matched by field id or the table's name
mapping, old files are read with their own physical types and promoted (int -> long,
float -> double, decimal widening), every file format is read, and each row comes with
`_file` (its file's location, spelled exactly as the table's metadata spells it) and `_pos`.

The tasks are staged with `ScanTaskSetManager` and read with `scan-task-set-id`, the way
Iceberg's own rewrite actions read a file group, but through a relation on a plain
`SparkTable` rather than the `<group>#rewrite` table those actions load: on format 3 the
rewrite table adds the row lineage columns as data columns, and Spark then hides every
metadata column, `_file` and `_pos` included. Equality delete files are read the same way,
wrapped as data files of an unpartitioned spec, so no partition value is put in place of
what the file holds. Position delete files are read through Iceberg's `position_deletes`
metadata table, from its own scan tasks for exactly the files asked for
(`position_delete_rows`), as Iceberg's `rewrite_position_delete_files` reads them: every
entry comes with its delete file's location as the table spells it, and no file listing
happens on the way (a plain Parquet read of many files lists each one first).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from maintenance.errors import SparkJobError
from maintenance.spark.jvm import JavaObject, java_long, jvm, singleton

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

SPLIT_SIZE = 128 * 1024 * 1024


@contextmanager
def raw_rows(spark: SparkSession, table: JavaObject, files: Sequence[JavaObject], *, delete_files: bool = False) -> Iterator[DataFrame]:
    """The rows of `files` (Java data files, or delete files with `delete_files`), no delete
    applied, with the table's current columns plus `_file` and `_pos` available. The frame
    can be used until the block ends."""
    with staged_rows(spark, table, bare_tasks(spark, table, files, delete_files=delete_files)) as frame:
        yield frame


def bare_tasks(spark: SparkSession, table: JavaObject, files: Sequence[JavaObject], *, delete_files: bool = False) -> JavaObject:
    """Scan tasks (a java.util.List) that read `files` as they are on disk: no delete, no
    residual filter. A data file keeps its own spec and partition, so Iceberg's reader puts
    in its identity partition values as a snapshot holding that very record would; a delete
    file is wrapped as a data file of an unpartitioned spec (see the module docstring)."""
    iceberg = jvm(spark).org.apache.iceberg
    schema_json = iceberg.SchemaParser.toJson(table.schema())
    residual = iceberg.expressions.ResidualEvaluator.unpartitioned(iceberg.expressions.Expressions.alwaysTrue())
    unpartitioned = iceberg.PartitionSpec.unpartitioned()
    specs: dict[int, str] = {}
    tasks = jvm(spark).java.util.ArrayList()
    for content_file in files:
        if delete_files:
            spec_json = specs.setdefault(-1, iceberg.PartitionSpecParser.toJson(unpartitioned))
            data_file = (
                iceberg.DataFiles.builder(unpartitioned)
                .withPath(content_file.location())
                .withFormat(content_file.format())
                .withFileSizeInBytes(content_file.fileSizeInBytes())
                .withRecordCount(content_file.recordCount())
                .build()
            )
        else:
            spec_id = int(content_file.specId())
            spec_json = specs.get(spec_id) or specs.setdefault(spec_id, iceberg.PartitionSpecParser.toJson(table.specs().get(spec_id)))
            data_file = content_file
        tasks.add(iceberg.BaseFileScanTask(data_file, None, schema_json, spec_json, residual))
    return tasks


@contextmanager
def position_delete_rows(spark: SparkSession, table: JavaObject, snapshot_id: int, locations: Iterable[str]) -> Iterator[DataFrame]:
    """The entries (`file_path`, `pos`, `delete_file_path`) of the position delete files at
    `locations` (as the table spells them), live in `snapshot_id`. The frame can be used
    until the block ends."""
    iceberg = jvm(spark).org.apache.iceberg
    wanted = set(locations)
    deletes_table = iceberg.MetadataTableUtils.createMetadataTableInstance(table, iceberg.MetadataTableType.POSITION_DELETES)
    tasks = jvm(spark).java.util.ArrayList()
    planned = deletes_table.newBatchScan().useSnapshot(java_long(spark, snapshot_id)).planFiles()
    try:
        iterator = planned.iterator()
        while iterator.hasNext():
            task = iterator.next()
            if str(task.file().location()) in wanted:
                tasks.add(task)
    finally:
        planned.close()
    if tasks.size() != len(wanted):
        raise SparkJobError(f"{len(wanted) - tasks.size()} of {len(wanted)} position delete files are not live in snapshot {snapshot_id}; nothing was committed")
    with staged_rows(spark, deletes_table, tasks) as frame:
        yield frame.select("file_path", "pos", "delete_file_path")


@contextmanager
def staged_rows(spark: SparkSession, table: JavaObject, tasks: JavaObject) -> Iterator[DataFrame]:
    """The rows of these scan tasks (a java.util.List), read by Iceberg's reader with the
    deletes each task carries applied, in the table's current columns. The frame can be
    used until the block ends."""
    group_id = f"icemaint-raw-{uuid.uuid4()}"
    manager = singleton(spark, "org.apache.iceberg.spark.ScanTaskSetManager")
    manager.stageTasks(table, group_id, tasks)
    try:
        yield _staged_frame(spark, table, group_id)
    finally:
        manager.removeTasks(table, group_id)


def _staged_frame(spark: SparkSession, table: JavaObject, group_id: str) -> DataFrame:
    """A DataFrame reading the staged tasks of `group_id`, with metadata columns available."""
    from pyspark.sql import DataFrame

    java = jvm(spark)
    options = java.java.util.HashMap()
    options.put("scan-task-set-id", group_id)
    options.put("split-size", str(SPLIT_SIZE))
    relation = java.org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation.create(
        java.org.apache.iceberg.spark.source.SparkTable(table, False),
        java.scala.Option.empty(),
        java.scala.Option.empty(),
        java.org.apache.spark.sql.util.CaseInsensitiveStringMap(options),
    )
    return DataFrame(java.org.apache.spark.sql.Dataset.ofRows(spark._jsparkSession, relation), spark)  # type: ignore[attr-defined]
