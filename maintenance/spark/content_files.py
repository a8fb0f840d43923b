"""Iceberg content-file records (data, equality deletes, position deletes) built in Java.

Records are built from the files themselves: Java reads the size and the Parquet metrics,
so no long crosses the Py4J gateway as an Integer. A file's partition is given either as
a path (`region=3`, for partitions we computed) or as a Java `StructLike` taken from
another file of the same partition (exact for every transform type).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from maintenance.spark.jvm import JavaObject, int_array, jvm

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

Partition = str | JavaObject | None  # a partition path, a Java StructLike, or unpartitioned


class ContentFiles:
    """Builds records for one table (its specs, metrics config and FileIO)."""

    def __init__(self, spark: SparkSession, table: JavaObject) -> None:
        self.spark = spark
        self.table = table
        self._iceberg = jvm(spark).org.apache.iceberg
        self._parquet = self._iceberg.FileFormat.PARQUET

    def data_file(self, location: str, spec_id: int, partition: Partition) -> JavaObject:
        builder = self._iceberg.DataFiles.builder(self._spec(spec_id))
        return self._complete(builder, location, partition, position_deletes=False).build()

    def equality_delete_file(self, location: str, spec_id: int, partition: Partition, field_ids: list[int]) -> JavaObject:
        builder = self._iceberg.FileMetadata.deleteFileBuilder(self._spec(spec_id)).ofEqualityDeletes(int_array(self.spark, field_ids))
        return self._complete(builder, location, partition, position_deletes=False).build()

    def position_delete_file(self, location: str, spec_id: int, partition: Partition, referenced_data_file: str | None = None) -> JavaObject:
        builder = self._iceberg.FileMetadata.deleteFileBuilder(self._spec(spec_id)).ofPositionDeletes()
        builder = self._complete(builder, location, partition, position_deletes=True)
        if referenced_data_file is not None:
            builder = builder.withReferencedDataFile(referenced_data_file)
        return builder.build()

    def _spec(self, spec_id: int) -> JavaObject:
        return self.table.specs().get(spec_id)

    def _complete(self, builder: Any, location: str, partition: Partition, *, position_deletes: bool) -> Any:
        input_file = self.table.io().newInputFile(location)
        metrics_config = self._iceberg.MetricsConfig
        config = metrics_config.forPositionDelete(self.table) if position_deletes else metrics_config.forTable(self.table)
        metrics = self._iceberg.parquet.ParquetUtil.fileMetrics(input_file, config)
        builder = builder.withInputFile(input_file).withFormat(self._parquet).withMetrics(metrics)
        if partition is None or partition == "":
            return builder
        if isinstance(partition, str):
            return builder.withPartitionPath(partition)
        return builder.withPartition(partition)
