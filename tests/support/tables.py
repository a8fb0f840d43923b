"""Tables the tests create through Spark SQL, merge-on-read."""

from __future__ import annotations

from typing import Any

from maintenance.catalogs import TableRef

MOR = "'format-version'='2', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'"


def create(spark: Any, ref: TableRef, columns: str, properties: str = "") -> None:
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {ref.spark_namespace}")
    extra = f", {properties}" if properties else ""
    spark.sql(f"CREATE TABLE {ref.spark_name} ({columns}) USING iceberg TBLPROPERTIES ({MOR}{extra})")
