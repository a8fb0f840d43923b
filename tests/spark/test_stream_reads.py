"""File-group rewrites read their files as plain streams (maintenance/spark/stream_reads.py):
the content stays the same on Spark-written tables, executors can load the FileIO's classes
(shipped as a jar), and ORC tables keep the catalog's own FileIO."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.run.outcome import COMMITTED
from maintenance.run.runner import run_job
from maintenance.spark.jvm import load_java_table
from maintenance.spark.stream_reads import table_for_file_reads
from maintenance.table.files import snapshot_files
from tests.conftest import fresh_ref
from tests.support.iceberg_oracle import FrozenRows
from tests.support.tables import create


def spark_written(spark: Any, config: Config, tasks: int, properties: str = "") -> TableRef:
    """A merge-on-read table written by Spark alone: `tasks` writing tasks of one append, each
    writing a small file into each of three partitions, then a DELETE and an UPDATE
    (position deletes), a column added and two more rows."""
    ref = fresh_ref(config, "streams")
    create(spark, ref, "id BIGINT, part INT, v STRING", ", ".join(p for p in (properties, "'write.distribution-mode'='none'") if p))
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD part")
    (spark.range(0, 30_000).selectExpr("id", "cast(id % 3 as int) part", "cast(id as string) v")
     .repartition(tasks).sortWithinPartitions("part").writeTo(ref.spark_name).append())
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 7 = 0")
    spark.sql(f"UPDATE {ref.spark_name} SET v = concat(v, '-u') WHERE id % 11 = 0")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD COLUMN extra STRING")
    spark.sql(f"INSERT INTO {ref.spark_name} VALUES (-1, 0, 'late', 'x'), (NULL, 1, NULL, NULL)")
    return ref


def data_file_formats(spark: Any, ref: TableRef) -> set[str]:
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    return {row.file_format for row in spark.sql(f"SELECT file_format FROM {ref.spark_name}.files").collect()}


@pytest.mark.slow  # one of the slowest: make test-integration runs it
def test_a_rewrite_of_many_small_files_through_plain_streams_keeps_the_content(spark, config: Config, tmp_path: Path) -> None:
    """About forty small files per reading task (120 in all), deletes applied on the way,
    while the JVM collects garbage over and over: a stream whose wrapper was dropped and
    collected mid-read was once closed under the reader ("Stream is closed!")."""
    ref = spark_written(spark, config, tasks=40)
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    reads = table_for_file_reads(spark, load_java_table(spark, ref), snapshot_files(load_table(config, ref)).files)
    assert reads.io().getClass().getName() == "icemaint.StreamInputFileIO"
    with pytest.raises(Exception, match="commits go through the fenced table"):
        reads.updateProperties().set("icemaint.test", "1").commit()  # refused in the JVM (PySpark re-raises it as its own error)

    with collecting_garbage(spark):
        result = run_job(config, ref, "compact", {"min_input_files": 2})

    assert result.status == COMMITTED, result.error
    frozen.assert_same()
    assert result.counters["data_files_rewritten"] >= 120


@contextmanager
def collecting_garbage(spark: Any) -> Iterator[None]:
    """The JVM runs a full garbage collection and its finalizers every hundredth of a second."""
    done = threading.Event()
    system = spark._jvm.java.lang.System

    def collect() -> None:
        while not done.is_set():
            system.gc()
            system.runFinalization()
            done.wait(0.01)

    collector = threading.Thread(target=collect, daemon=True)
    collector.start()
    try:
        yield
    finally:
        done.set()
        collector.join()


def test_executors_load_the_file_io_from_the_shipped_jar(spark, config: Config) -> None:
    """The table Iceberg broadcasts to its tasks holds the FileIO: Spark's serializer, with the
    executors' class loader, must find its class without the driver's compiler (a Spark
    executor that had no jar fails this with ClassNotFoundException)."""
    ref = spark_written(spark, config, tasks=2)
    reads = table_for_file_reads(spark, load_java_table(spark, ref), [])
    spark.range(4).repartition(2).count()  # a task runs: executors fetch the jars added since the last one
    jvm = spark._jvm
    broadcast = jvm.org.apache.iceberg.spark.source.SerializableTableWithSize.copyOf(reads)
    serializer = jvm.org.apache.spark.SparkEnv.get().serializer().newInstance()
    any_class = jvm.scala.reflect.ClassTag.apply(jvm.java.lang.Object._java_lang_class)

    received = serializer.deserialize(serializer.serialize(broadcast, any_class), any_class)

    io = received.io()
    assert io.getClass().getName() == "icemaint.StreamInputFileIO"
    assert not io.getClass().getClassLoader().equals(reads.io().getClass().getClassLoader())  # not Janino's: the jar's
    data_file = received.currentSnapshot().addedDataFiles(received.io()).iterator().next()
    stream = io.newInputFile(data_file.location(), data_file.fileSizeInBytes()).newStream()
    try:
        stream.seek(data_file.fileSizeInBytes() - 4)
        assert bytes(stream.read() for _ in range(4)) == b"PAR1"  # Parquet's closing magic
    finally:
        stream.close()


def test_orc_tables_are_read_through_the_catalogs_file_io(spark, config: Config, tmp_path: Path) -> None:
    """Iceberg's ORC reader builds a fresh Hadoop configuration per file it is given as a
    plain stream: ORC tables keep their own FileIO, and COMPACT keeps their content."""
    ref = spark_written(spark, config, tasks=10, properties="'write.format.default'='orc', 'write.delete.format.default'='orc'")
    assert data_file_formats(spark, ref) == {"ORC"}
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    java_table = load_java_table(spark, ref)
    assert table_for_file_reads(spark, java_table, snapshot_files(load_table(config, ref)).files) is java_table

    result = run_job(config, ref, "compact", {"min_input_files": 2}, verify=True)

    assert result.status == COMMITTED and result.content_verified, result.error
    frozen.assert_same()


def test_the_plain_stream_view_is_made_once_per_java_table_and_follows_its_refreshes(spark, config: Config) -> None:
    """A verified rewrite asks for the view for every read: it is the same view for the same
    Java table (another Java table of the same name gets its own), and it reads the table's
    metadata through the table's operations, so a commit the table refreshes to is seen."""
    ref = fresh_ref(config, "streams_view")
    create(spark, ref, "id BIGINT")
    spark.sql(f"INSERT INTO {ref.spark_name} VALUES (1)")
    java_table = load_java_table(spark, ref)
    view = table_for_file_reads(spark, java_table, [])
    assert table_for_file_reads(spark, java_table, []) is view
    other = load_java_table(spark, ref)
    assert table_for_file_reads(spark, other, []) is not view

    spark.sql(f"INSERT INTO {ref.spark_name} VALUES (2)")
    java_table.refresh()
    assert view.currentSnapshot().snapshotId() == java_table.currentSnapshot().snapshotId() == load_table(config, ref).metadata.current_snapshot_id
