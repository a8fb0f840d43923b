"""The Spark side of CONVERT: find the rows each equality delete deletes, write their positions.

Data files are read as they are on disk, by Parquet field id (so renamed key columns still
match), with each row's position (`_metadata.row_index`) and without applying any delete:
a table scan would hide exactly the rows an equality delete deletes. Keys are joined with
NULL-safe equality under the sequence-number rule. Small delete sets are broadcast, large
ones shuffled. Nothing but counters reaches the driver: position deletes are written by
the executors, one file per (sequence number, partition), sorted by path and position.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyiceberg.schema import Schema
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    LongType,
    StringType,
    TimestampType,
    TimestamptzType,
)

from maintenance.errors import UsageError
from maintenance.jobs.convert.plan import ConvertPlan
from maintenance.jobs.files import FileRef, PartitionKey
from maintenance.spark.file_rows import FIELD_ID, check_complete, observed, read_file_rows, row_counts
from maintenance.spark.errors import java_errors
from maintenance.spark.position_delete_writer import write_position_deletes

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import DataType

BROADCAST_DELETE_BYTES = 64 * 1024 * 1024


@dataclass
class ScanResult:
    output_dir: str
    partitions: list[PartitionKey]  # index = the partition id in output folder names
    data_rows_read: int
    delete_rows_read: int
    positions_written: int


def spark_type(iceberg_type: IcebergType) -> DataType:
    from pyspark.sql import types as T

    simple = {
        BooleanType: T.BooleanType(), IntegerType: T.IntegerType(), LongType: T.LongType(), FloatType: T.FloatType(),
        DoubleType: T.DoubleType(), StringType: T.StringType(), DateType: T.DateType(), BinaryType: T.BinaryType(),
        TimestamptzType: T.TimestampType(), TimestampType: T.TimestampNTZType(),
    }
    for kind, spark in simple.items():
        if isinstance(iceberg_type, kind):
            return spark
    if isinstance(iceberg_type, DecimalType):
        return T.DecimalType(iceberg_type.precision, iceberg_type.scale)
    raise UsageError(f"CONVERT does not support equality keys of type {iceberg_type}")


def find_positions(spark: SparkSession, plan: ConvertPlan, schema: Schema, output_dir: str) -> ScanResult:
    """Run the join and write position deletes under `output_dir`/grp=<seq>_<partition id>/."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    partitions: dict[PartitionKey, int] = {}
    for ref in (*plan.targets, *plan.deletes):
        partitions.setdefault(ref.partition_key, len(partitions))

    results: list[DataFrame] = []
    observations: list[tuple[Observation, DataFrame, int]] = []
    delete_rows = 0
    with java_errors("CONVERT scan"):
        for field_ids in sorted({d.equality_ids for d in plan.deletes}):
            deletes = [d for d in plan.deletes if d.equality_ids == field_ids]
            targets = _targets_of(plan, deletes)
            if not targets:
                continue
            keys = [f"k{fid}" for fid in field_ids]
            key_schema = _key_schema(schema, field_ids)
            data_obs = Observation()
            unobserved = _rows(spark, targets, key_schema, "d", partitions)
            data = unobserved.observe(data_obs, F.count(F.lit(1)).alias("rows"), F.count("d_idx").alias("mapped"))
            removed = _rows(spark, deletes, key_schema, "e", partitions)
            # The delete side is small and may be broadcast (where observed metrics are not
            # delivered): count it on its own.
            delete_counts = row_counts(removed, "e_idx")
            check_complete("equality delete", delete_counts, sum(d.records for d in deletes))
            delete_rows += delete_counts["rows"]
            if sum(d.size for d in deletes) <= BROADCAST_DELETE_BYTES:
                removed = F.broadcast(removed)
            condition = _null_safe_equal(data, removed, keys) & (data.d_seq < removed.e_seq) & (removed.e_global | (data.d_part == removed.e_part))
            matched = data.join(removed, condition, "inner").select(
                F.concat_ws("_", removed.e_seq.cast("string"), data.d_part.cast("string")).alias("grp"),
                data.d_path.alias("file_path"),
                data.pos.alias("pos"),
            )
            results.append(matched)
            observations.append((data_obs, unobserved, sum(t.records for t in targets)))

        if not results:
            return ScanResult(output_dir, list(partitions), 0, delete_rows, 0)
        written = Observation()
        union = results[0]
        for more in results[1:]:
            union = union.unionByName(more)
        positions = union.distinct().observe(written, F.count(F.lit(1)).alias("rows"))
        write_position_deletes(positions, "grp", output_dir)

        data_rows = 0
        for data_obs, unobserved, data_expected in observations:
            counts = observed(data_obs, lambda frame=unobserved: row_counts(frame, "d_idx"))
            check_complete("data", counts, data_expected)
            data_rows += counts["rows"]
        positions_written = observed(written, lambda: {"rows": union.distinct().count()})["rows"]
    return ScanResult(output_dir, list(partitions), data_rows, delete_rows, int(positions_written))


def _targets_of(plan: ConvertPlan, deletes: Sequence[FileRef]) -> list[FileRef]:
    paths = {p for d in deletes for p in plan.candidates[d.path]}
    return [t for t in plan.targets if t.path in paths]


def _key_schema(schema: Schema, field_ids: Sequence[int]):  # type: ignore[no-untyped-def]
    from pyspark.sql import types as T

    return T.StructType(
        [T.StructField(f"k{fid}", spark_type(schema.find_field(fid).field_type), True, {FIELD_ID: fid}) for fid in field_ids]
    )


def _rows(spark: SparkSession, files: Sequence[FileRef], key_schema, prefix: str, partitions: dict[PartitionKey, int]) -> DataFrame:  # type: ignore[no-untyped-def]
    """Key columns of the files with their attributes, columns prefixed d_ (data, with pos) or e_."""
    from pyspark.sql import types as T

    prefixed = T.StructType([T.StructField(f"{prefix}_{f.name}", f.dataType, True, f.metadata) for f in key_schema.fields])
    return read_file_rows(
        spark,
        [f.path for f in files],
        prefixed,
        index=f"{prefix}_idx",
        attributes=[(i, f.path, f.seq, partitions[f.partition_key], getattr(f, "is_global", False)) for i, f in enumerate(files)],
        attribute_schema=T.StructType([
            T.StructField(f"{prefix}_idx", T.IntegerType()), T.StructField(f"{prefix}_path", T.StringType()),
            T.StructField(f"{prefix}_seq", T.LongType()), T.StructField(f"{prefix}_part", T.IntegerType()),
            T.StructField(f"{prefix}_global", T.BooleanType()),
        ]),
        with_position=prefix == "d",
    )


def _null_safe_equal(data: DataFrame, removed: DataFrame, keys: Sequence[str]) -> Column:
    condition = None
    for key in keys:
        term = data[f"d_{key}"].eqNullSafe(removed[f"e_{key}"])
        condition = term if condition is None else condition & term
    assert condition is not None
    return condition
