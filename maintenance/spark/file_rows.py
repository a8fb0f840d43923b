"""Reading table files' rows with Spark, each row tagged with the table file it came from.

Files are read by Parquet field id (so renamed columns still match) with `_metadata`
columns. Spark names each file by its qualified Hadoop URI (`file:/x` where the table may
say `file:///x`); those names are mapped back to the table's own file index. A row whose
file name does not map keeps a NULL index: callers count those and refuse to commit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import structlog

from maintenance.errors import SparkJobError
from maintenance.spark.files import spark_file_names
from maintenance.table.paths import hadoop_path

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

FIELD_ID = "parquet.field.id"
log = structlog.get_logger(__name__)


def read_file_rows(
    spark: SparkSession,
    paths: Sequence[str],
    schema: StructType,
    *,
    index: str,
    attributes: list[tuple[Any, ...]],
    attribute_schema: StructType,
    with_position: bool = False,
) -> DataFrame:
    """Rows of `paths` (columns of `schema`), joined to `attributes` (first field: the file's
    index in `paths`, named `index`), plus `pos` when asked."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    spark.conf.set("spark.sql.parquet.fieldId.read.enabled", "true")
    frame = spark.read.schema(schema).parquet(*[hadoop_path(p) for p in paths])
    mapping = spark.createDataFrame(
        list(zip(spark_file_names(spark, list(paths)), range(len(paths)))),
        T.StructType([T.StructField("spark_path", T.StringType()), T.StructField(index, T.IntegerType())]),
    )
    columns = [F.col(f"`{field.name}`") for field in schema.fields] + [F.col("_metadata.file_path").alias("spark_path")]
    if with_position:
        columns.append(F.col("_metadata.row_index").alias("pos"))
    rows = frame.select(*columns).join(F.broadcast(mapping), "spark_path", "left")
    return rows.join(F.broadcast(spark.createDataFrame(attributes, attribute_schema)), index, "left").drop("spark_path")


def check_complete(what: str, metrics: dict[str, Any], expected: int) -> None:
    """Every row of every file was read and mapped back to its table file: else refuse to commit."""
    if metrics["rows"] != expected or metrics["mapped"] != metrics["rows"]:
        raise SparkJobError(
            f"read {metrics['rows']} {what} rows ({metrics['mapped']} mapped to table files), expected {expected}; nothing was committed"
        )


def observed(observation: Any, fallback: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """An Observation's metrics, or `fallback()` (an explicit aggregation) when Spark pruned
    the observed plan away, as adaptive execution does around joins that turn out empty."""
    metrics = observation.get
    if metrics:
        return dict(metrics)
    log.info("observed metrics not delivered; counting with a separate aggregation", observation=getattr(observation, "_name", None))
    return fallback()


def row_counts(frame: DataFrame, mapped_column: str) -> dict[str, Any]:
    """rows and mapped rows of a frame from read_file_rows, by an explicit aggregation."""
    from pyspark.sql import functions as F

    return frame.agg(F.count(F.lit(1)).alias("rows"), F.count(mapped_column).alias("mapped")).collect()[0].asDict()
