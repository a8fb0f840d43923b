"""Tables the tests create through Spark SQL, merge-on-read."""

from __future__ import annotations

from typing import Any

from maintenance.catalogs import TableRef

MOR = "'format-version'='2', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'"


def create(spark: Any, ref: TableRef, columns: str, properties: str = "", partitioned_by: str = "") -> None:
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {ref.spark_namespace}")
    extra = f", {properties}" if properties else ""
    partitioned = f" PARTITIONED BY ({partitioned_by})" if partitioned_by else ""
    spark.sql(f"CREATE TABLE {ref.spark_name} ({columns}) USING iceberg{partitioned} TBLPROPERTIES ({MOR}{extra})")


def data_files(spark: Any, ref: TableRef) -> dict[str, int]:
    """Every live data file, with its spec id (Spark's metadata table, refreshed)."""
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    return {r.file_path: r.spec_id for r in spark.sql(f"SELECT file_path, spec_id FROM {ref.spark_name}.data_files").collect()}
