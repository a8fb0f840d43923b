"""Comparisons the tests share: the model's rows against what Spark reads."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from maintenance.catalogs import TableRef
from maintenance.workload.model import CdcModel

_UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)

NormalRow = tuple[Any, ...]


def model_rows(model: CdcModel) -> list[NormalRow]:
    return sorted(_normal(row) for row in model.rows.values())


def spark_rows(spark: Any, ref: TableRef) -> list[NormalRow]:
    """The table's rows through Spark, every delete applied, in the model's normal form."""
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    rows = spark.sql(
        f"SELECT id, region, customer, cast(amount as string) amount, status, unix_micros(updated_at) ts, version FROM {ref.spark_name}"
    ).collect()
    return sorted(tuple(r) for r in rows)


def _normal(row: tuple[Any, ...]) -> NormalRow:
    row_id, region, customer, amount, status, updated_at, version = row
    micros = (updated_at - _UNIX_EPOCH) // _MICRO
    return (row_id, region, customer, f"{amount:.2f}", status, micros, version)



_MICRO = timedelta(microseconds=1)
