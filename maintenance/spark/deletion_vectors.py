"""Writing deletion vectors (format 3) with Iceberg's own writer, one Puffin file per writer.

Positions are serialized in Python (`table.dv`), checked by Iceberg's own deserializer
(`PositionDeleteIndex.deserialize`: length, magic bytes, checksum, cardinality) and handed
to `BaseDVFileWriter`, which writes the Puffin file and builds each DV's record (path,
offset, length, referenced data file, record count) as every Iceberg writer does. One
Py4J round trip per data file, not per position.

A writer never merges with deletes already in the table: the caller passes the complete
set of positions a data file's one DV must hold (the spec allows one DV per data file, and
once it exists v2 position delete files no longer apply to that file), and removes the DV
it replaces in the same commit.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

from maintenance.spark.jvm import JavaObject, jvm
from maintenance.table.dv import serialize_dv

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class _NoPreviousDeletes:
    """`loadPreviousDeletes` for Iceberg's DV writer: the caller has merged them already."""

    class Java:
        implements = ["java.util.function.Function"]

    def apply(self, data_file_path: str) -> None:
        return None


class DeletionVectorWriter:
    """One Puffin file of DVs for one table; `add` per data file, then `close` for the records."""

    def __init__(self, spark: SparkSession, table: JavaObject, operation_id: str | None = None) -> None:
        iceberg = jvm(spark).org.apache.iceberg
        self._iceberg = iceberg
        self._table = table
        factory = (
            iceberg.io.OutputFileFactory.builderFor(table, 0, 0)
            .format(iceberg.FileFormat.PUFFIN)
            .operationId(operation_id or str(uuid.uuid4()))
            .suffix("deletes")
            .build()
        )
        from pyspark.java_gateway import ensure_callback_server_started

        ensure_callback_server_started(spark.sparkContext._gateway)  # type: ignore[attr-defined]
        self._writer = iceberg.deletes.BaseDVFileWriter(factory, _NoPreviousDeletes())
        self._unpartitioned = iceberg.PartitionSpec.unpartitioned()
        self.positions_written = 0

    def add(self, data_file: JavaObject, positions: Sequence[int]) -> None:
        """Every deleted position of `data_file` (a Java DataFile of the table)."""
        blob = serialize_dv(positions)
        cardinality = len(set(positions))
        checked = self._iceberg.deletes.PositionDeleteIndex.deserialize(bytearray(blob), self._placeholder(blob, cardinality, str(data_file.location())))
        self._writer.delete(data_file.location(), checked, self._table.specs().get(data_file.specId()), data_file.partition())
        self.positions_written += cardinality

    def close(self) -> list[JavaObject]:
        """The DV records written (none when nothing was added)."""
        self._writer.close()
        return list(self._writer.result().deleteFiles())

    def _placeholder(self, blob: bytes, cardinality: int, data_path: str) -> JavaObject:
        """What the deserializer checks a blob against: its length and cardinality."""
        return (
            self._iceberg.FileMetadata.deleteFileBuilder(self._unpartitioned)
            .ofPositionDeletes()
            .withFormat(self._iceberg.FileFormat.PUFFIN)
            .withPath("unwritten.puffin")
            .withFileSizeInBytes(len(blob))
            .withRecordCount(cardinality)
            .withReferencedDataFile(data_path)
            .withContentOffset(0)
            .withContentSizeInBytes(len(blob))
            .build()
        )
