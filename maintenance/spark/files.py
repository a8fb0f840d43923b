"""How Spark names files: their qualified Hadoop URIs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from maintenance.spark.errors import java_errors
from maintenance.spark.jvm import jvm
from maintenance.table.paths import hadoop_path

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


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
