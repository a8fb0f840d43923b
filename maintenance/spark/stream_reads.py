"""The table a file-group rewrite reads its files through: the catalog's table, with input
files that Iceberg opens as plain streams (`java/StreamInputFileIO.java`).

Why: from a Hadoop input file, Iceberg's Parquet reader copies the session's whole Hadoop
configuration (about a thousand entries) for every file it opens. Compacting 2,000 small
files spent a fifth of its reading in those copies. The plain path is the one every table
on `S3FileIO` reads by; the bytes come from the same Hadoop stream. A file up to
`WHOLE_FILE_MAX_BYTES` is fetched whole, in one request, where Parquet's seeks would cost
S3FileIO three requests and two aborted connections: a merge of a streaming table reads
thousands of such files (MERGE of a 1M-event table, warm: 8.2 s before, 4.2-4.6 s after).

Where it does not apply, the catalog's table is used as it is:
- ORC files: Iceberg's ORC reader, given a file that is not a Hadoop one, builds a fresh
  Hadoop configuration per file instead (slower, and without the session's settings);
- Parquet modular encryption configured through Hadoop (`parquet.crypto.factory.class`):
  the keys come from the Hadoop configuration the plain path does not read.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from maintenance.spark.gated_operations import read_through
from maintenance.spark.java_helpers import new_helper
from maintenance.spark.jvm import JavaObject, KeptPerJvm
from maintenance.table.files import TableFile

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

HADOOP_PARQUET_ENCRYPTION = "parquet.crypto.factory.class"
WHOLE_FILE_MAX_BYTES = 8 * 1024 * 1024  # a file up to this size is fetched in one request (the helper's docstring)
_VIEWS: KeptPerJvm[JavaObject] = KeptPerJvm(16)  # Py4J id of a Java table -> its plain-stream view


def table_for_file_reads(spark: SparkSession, table: JavaObject, files: Iterable[TableFile]) -> JavaObject:
    """`table` (the catalog's, unfenced) seen through a FileIO of plain input streams, when
    every file the rewrite may read (`files`: data and delete files) allows it; else `table`.
    The result refuses commits: they go through the fenced table."""
    return table_for_reads_of(spark, table, (f.file_format for f in files))


def table_for_reads_of(spark: SparkSession, table: JavaObject, formats: Iterable[str]) -> JavaObject:
    """`table_for_file_reads` for files of these formats (Iceberg's `FileFormat` names)."""
    if any(file_format == "ORC" for file_format in formats) or spark.sparkContext._jsc.hadoopConfiguration().get(HADOOP_PARQUET_ENCRYPTION):  # type: ignore[attr-defined]
        return table
    return _plain_stream_view(spark, table)


def _plain_stream_view(spark: SparkSession, table: JavaObject) -> JavaObject:
    """`table` seen through plain-stream input files, made once per Java table (a verified
    rewrite asks for it for each of its reads: about twenty Py4J calls, 0.05 s on 2 busy
    cores). The view holds no state of its own: it reads the table's metadata through the
    table's own operations, so it sees every refresh of `table`. Py4J never reuses an
    object's id within one JVM, so an id names one Java table for good."""

    def make() -> JavaObject:
        return read_through(spark, table, new_helper(spark, "StreamInputFileIO", on_executors=True).around(table.io(), WHOLE_FILE_MAX_BYTES))  # commits refused

    return _VIEWS.get(spark, table._target_id, make)  # type: ignore[attr-defined]
