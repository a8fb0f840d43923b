"""What the verification tests share: a merge-on-read table of Spark's, and the check that a
change that did not verify was not published."""

from __future__ import annotations

from typing import Any

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.run.outcome import FAILED
from tests.conftest import fresh_ref
from tests.support.iceberg_oracle import FrozenRows

MOR = "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'"


def merge_on_read_table(spark: Any, config: Config, format_version: int) -> TableRef:
    """A new empty table (id, region, v) partitioned by region, whose Spark writes are merge-on-read."""
    ref = fresh_ref(config)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {ref.spark_namespace}")
    spark.sql(f"CREATE TABLE {ref.spark_name} (id BIGINT, region INT, v STRING) USING iceberg PARTITIONED BY (region) "
              f"TBLPROPERTIES ('format-version'='{format_version}', {MOR})")
    return ref


def assert_not_published(result: Any, config: Config, ref: TableRef, before: int | None, frozen: FrozenRows) -> None:
    assert result.status == FAILED and result.content_verified is False, (result.status, result.error)
    assert "content changed" in (result.error or "") and "nothing was published" in (result.error or ""), result.error
    assert load_table(config, ref).metadata.current_snapshot_id == before
    frozen.assert_same()
