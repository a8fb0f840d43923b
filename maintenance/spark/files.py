"""Listing files that Spark wrote, through the same Hadoop file system Spark used."""

from __future__ import annotations

from typing import TYPE_CHECKING

from maintenance.spark.errors import java_errors
from maintenance.spark.jvm import jvm
from maintenance.table.paths import hadoop_path

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def list_files(spark: SparkSession, folder: str, suffix: str = ".parquet") -> list[str]:
    """Every file below `folder` whose name ends with `suffix`, as fully qualified paths."""
    with java_errors(f"list {folder}"):
        path = jvm(spark).org.apache.hadoop.fs.Path(hadoop_path(folder))
        fs = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())  # type: ignore[attr-defined]
        if not fs.exists(path):
            return []
        found, iterator = [], fs.listFiles(path, True)
        while iterator.hasNext():
            name = str(iterator.next().getPath().toString())
            if name.endswith(suffix):
                found.append(name)
        return sorted(found)


def spark_file_names(spark: SparkSession, paths: list[str]) -> list[str]:
    """How Spark's file sources name each file in `_metadata.file_path`: the qualified Hadoop URI."""
    with java_errors("qualify paths"):
        hadoop = jvm(spark).org.apache.hadoop.fs
        conf = spark.sparkContext._jsc.hadoopConfiguration()  # type: ignore[attr-defined]
        names = []
        for path in paths:
            java_path = hadoop.Path(hadoop_path(path))
            names.append(str(java_path.getFileSystem(conf).makeQualified(java_path).toUri().toString()))
        return names
