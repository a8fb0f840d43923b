"""Reading table files' rows as they are on disk, through Iceberg's own Spark reader.

CONVERT must see the rows of data files *before* any delete is applied (a table scan hides
exactly the rows an equality delete deletes), with each row's position. Iceberg's reader
does that when it is handed scan tasks that carry no deletes, and it also does what a
plain Parquet read gets wrong: columns are matched by field id or the table's name
mapping, old files are read with their own physical types and promoted (int -> long,
float -> double, decimal widening), every file format is read, and each row comes with
`_file` (its file's location, spelled exactly as the table's metadata spells it) and `_pos`.

The tasks are staged with `ScanTaskSetManager` and read with `scan-task-set-id`, the way
Iceberg's own rewrite actions read a file group. Delete files are read the same way,
wrapped as data files of an unpartitioned spec, so no partition value is put in place of
what the file holds.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from maintenance.spark.jvm import JavaObject, jvm, static_call

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

SPLIT_SIZE = 128 * 1024 * 1024


@contextmanager
def raw_rows(spark: SparkSession, table: JavaObject, files: Sequence[JavaObject], *, delete_files: bool = False) -> Iterator[DataFrame]:
    """The rows of `files` (Java data files, or delete files with `delete_files`), no delete
    applied, with the table's current columns plus `_file` and `_pos` available. The frame
    can be used until the block ends."""
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
    group_id = f"icemaint-raw-{uuid.uuid4()}"
    cache = static_call(spark, "org.apache.iceberg.spark.SparkTableCache", "get")
    manager = static_call(spark, "org.apache.iceberg.spark.ScanTaskSetManager", "get")
    cache.add(group_id, table)
    manager.stageTasks(table, group_id, tasks)
    try:
        yield spark.read.format("iceberg").option("scan-task-set-id", group_id).option("split-size", str(SPLIT_SIZE)).load(group_id)
    finally:
        cache.remove(group_id)
        manager.removeTasks(table, group_id)
