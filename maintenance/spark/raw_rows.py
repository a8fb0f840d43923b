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
READ_SHARE_BYTES = 8 * 1024 * 1024  # a read of tasks is shared out over one Spark task per this many bytes (up to the cores)


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
def staged_rows(spark: SparkSession, table: JavaObject, tasks: JavaObject, split_size: int | None = None) -> Iterator[DataFrame]:
    """The rows of these scan tasks (a java.util.List), read by Iceberg's reader with the
    deletes each task carries applied, in the table's current columns. The frame can be
    used until the block ends. `split_size`: the bytes (data and deletes) one Spark task
    reads (`read_split_size`); by default, Iceberg's packing of 128 MiB splits, which
    weighs every file a task opens, its deletes included, at 4 MiB at least."""
    group_id = f"icemaint-raw-{uuid.uuid4()}"
    manager = singleton(spark, "org.apache.iceberg.spark.ScanTaskSetManager")
    manager.stageTasks(table, group_id, tasks)
    try:
        yield _staged_frame(spark, table, group_id, split_size)
    finally:
        manager.removeTasks(table, group_id)


def read_tasks(spark: SparkSession, sizes: Sequence[int]) -> int:
    """How many Spark tasks share the reading of scan tasks of these sizes (data plus deletes,
    as Iceberg packs them): one per `READ_SHARE_BYTES`, up to the cores Spark has and to
    one per scan task (measured on 2 cores: a group of 50 files, 24 MiB with its deletes,
    read in 4.1 s by one Spark task and 3.3 s by two)."""
    return max(1, min(spark.sparkContext.defaultParallelism, len(sizes), sum(sizes) // READ_SHARE_BYTES))


def split_size_for(sizes: Sequence[int], tasks: int) -> int:
    """The split size that packs scan tasks of these sizes into about `tasks` Spark tasks."""
    return sum(sizes) // tasks + max(sizes, default=0) + 1


def read_split_size(spark: SparkSession, sizes: Sequence[int]) -> int:
    """The split size a verification reads scan tasks of these sizes with: `read_tasks` of
    them, none over `SPLIT_SIZE`; never a Spark task per file. Iceberg's own packing weighs
    each file a task opens at 4 MiB at least, deletes included, so a streaming table's small
    files, each carrying dozens of delete files, were read one per Spark task (measured on
    2 cores: one partition's 40 files with 68 deletes, in 29 Spark tasks: 0.9-1.1 s for a
    count; in one: 0.7-0.8 s, and a core left to the rewrite it is read beside)."""
    return min(SPLIT_SIZE, split_size_for(sizes, read_tasks(spark, sizes)))


def _staged_frame(spark: SparkSession, table: JavaObject, group_id: str, split_size: int | None = None) -> DataFrame:
    """A DataFrame reading the staged tasks of `group_id`, with metadata columns available.
    (A verification's fingerprint read builds the same relation in the JVM, in one Py4J
    call: `java/ObservedReads.java`.)"""
    from pyspark.sql import DataFrame

    java = jvm(spark)
    options = java.java.util.HashMap()
    options.put("scan-task-set-id", group_id)
    if split_size is not None:
        options.put("split-size", str(split_size))
        options.put("file-open-cost", "0")
    else:
        options.put("split-size", str(SPLIT_SIZE))
    relation = java.org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation.create(
        java.org.apache.iceberg.spark.source.SparkTable(table, False),
        java.scala.Option.empty(),
        java.scala.Option.empty(),
        java.org.apache.spark.sql.util.CaseInsensitiveStringMap(options),
    )
    return DataFrame(java.org.apache.spark.sql.Dataset.ofRows(spark._jsparkSession, relation), spark)  # type: ignore[attr-defined]
