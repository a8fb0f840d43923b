"""The logical content fingerprint that every maintenance job is checked against.

`sum(cast(xxhash64(c1, c2, ...) as decimal(38,0)))` over all rows, read through Spark with
every delete applied: order-independent and exact (a decimal sum cannot wrap), so two
physically different layouts of the same rows agree and one changed row does not.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from maintenance.catalogs import TableRef
from maintenance.spark.errors import java_errors

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True)
class Fingerprint:
    table: str
    snapshot_id: int | None
    rows: int
    fingerprint: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def same_content(self, other: Fingerprint) -> bool:
        return (self.rows, self.fingerprint) == (other.rows, other.fingerprint)


def read_table(spark: SparkSession, ref: TableRef, snapshot_id: int | None = None) -> DataFrame:
    """The table's rows (all deletes applied), at a snapshot or the current one."""
    version = f" VERSION AS OF {int(snapshot_id)}" if snapshot_id is not None else ""
    return spark.sql(f"SELECT * FROM {ref.spark_name}{version}")


def content_fingerprint(spark: SparkSession, ref: TableRef, snapshot_id: int | None = None) -> Fingerprint:
    from pyspark.sql import functions as F

    with java_errors(f"fingerprint {ref}"):
        # Refresh so a commit made through another client (pyiceberg, a writer) is seen.
        spark.sql(f"REFRESH TABLE {ref.spark_name}")
        frame = read_table(spark, ref, snapshot_id)
        hashed = F.xxhash64(*[F.col(f"`{name}`") for name in frame.columns]).cast("decimal(38,0)")
        row = frame.agg(F.count(F.lit(1)).alias("rows"), F.sum(hashed).cast("string").alias("fingerprint")).collect()[0]
    return Fingerprint(table=str(ref), snapshot_id=snapshot_id, rows=int(row["rows"]), fingerprint=row["fingerprint"] or "0")
