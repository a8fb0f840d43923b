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


def plain_streams(spark: Any, io: Any, whole_files_up_to: int) -> Any:
    """The helper around a FileIO, as `stream_reads` makes it for a table."""
    from maintenance.spark.java_helpers import new_helper

    return new_helper(spark, "StreamInputFileIO", on_executors=True).around(io, whole_files_up_to)


def read_as_parquet_does(stream: Any, length: int) -> tuple[bytes, bytes, int]:
    """The footer's length and magic from the end, then the file from its start, then a
    read past the end: Parquet's order of seeks (backwards twice)."""
    stream.seek(length - 8)
    tail = bytes(stream.read() for _ in range(8))
    stream.seek(0)
    head = bytes(stream.read() for _ in range(4))
    stream.seek(length)
    return tail, head, stream.read()


def test_a_small_file_is_fetched_whole_and_read_as_its_bytes(spark, tmp_path: Path) -> None:
    """Up to the limit a file's stream is the whole file in memory; beyond it, the FileIO's
    own stream. Either way the bytes, the seeks backwards and the end are the file's (reads
    into buffers are Parquet's own: every rewrite test reads through them)."""
    path = tmp_path / "f.parquet"
    content = b"PAR1" + bytes(range(256)) * 40 + b"\x10\x00\x00\x00PAR1"
    path.write_bytes(content)
    io = spark._jvm.org.apache.iceberg.hadoop.HadoopFileIO(spark.sparkContext._jsc.hadoopConfiguration())

    for limit, kind in ((len(content), "WholeFile"), (len(content) - 1, "Stream")):
        stream = plain_streams(spark, io, limit).newInputFile(str(path), len(content)).newStream()
        try:
            assert stream.getClass().getSimpleName() == kind
            assert read_as_parquet_does(stream, len(content)) == (content[-8:], b"PAR1", -1)
            stream.seek(100)
            assert bytes(stream.read() for _ in range(50)) == content[100:150] and stream.getPos() == 150
            assert stream.skip(10) == 10 and stream.read() == content[160]
        finally:
            stream.close()


def test_a_file_shorter_than_its_metadata_says_fails_its_read(spark, tmp_path: Path) -> None:
    """The length comes from the table's metadata: a file that ends before it is an error,
    not a stream of what there was."""
    path = tmp_path / "short.parquet"
    path.write_bytes(b"PAR1" * 10)
    io = spark._jvm.org.apache.iceberg.hadoop.HadoopFileIO(spark.sparkContext._jsc.hadoopConfiguration())
    with pytest.raises(Exception, match="ended after 40 of its 100 bytes"):
        plain_streams(spark, io, 1000).newInputFile(str(path), 100).newStream()


@pytest.mark.s3
@pytest.mark.process  # a SeaweedFS of its own
def test_a_small_file_on_s3_costs_one_request(spark, tmp_path: Path) -> None:
    """Through Iceberg's S3FileIO, Parquet's seeks backwards are each a new GET: a file
    fetched whole is one, counted by the store itself."""
    from tests.services.s3 import start_s3

    store = start_s3(tmp_path / "seaweedfs", buckets=("streams",))
    try:
        content = b"PAR1" + bytes(range(256)) * 4000 + b"\x10\x00\x00\x00PAR1"
        store.client().put_object(Bucket="streams", Key="f.parquet", Body=content)
        properties = {"s3.endpoint": store.endpoint, "s3.access-key-id": store.access_key, "s3.secret-access-key": store.secret_key,
                      "client.region": store.region, "s3.path-style-access": "true"}
        io = spark._jvm.org.apache.iceberg.aws.s3.S3FileIO()
        io.initialize(properties)
        gets = {}
        for limit in (len(content), 0):
            before = store.s3_traffic().get("GET", 0)
            stream = plain_streams(spark, io, limit).newInputFile("s3://streams/f.parquet", len(content)).newStream()
            try:
                assert read_as_parquet_does(stream, len(content)) == (content[-8:], b"PAR1", -1)
            finally:
                stream.close()
            gets[limit] = store.s3_traffic_settled().get("GET", 0) - before  # the aborted stream's GET counted too
        io.close()
    finally:
        store.stop()
    assert gets == {len(content): 1, 0: 2}, gets
