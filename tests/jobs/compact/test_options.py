"""COMPACT's `rewrite_all` (every data file in scope, whatever its size; `jobs/compact/options.py`),
as Iceberg's `rewrite_data_files` offers it, on a Spark-written merge-on-read table. Checked
by the files Spark's metadata tables list before and after, and the content against a
frozen copy."""

from __future__ import annotations

from pathlib import Path

from maintenance.catalogs import TableRef
from maintenance.config import Config
from maintenance.run.outcome import COMMITTED, NOOP
from maintenance.run.runner import run_job
from tests.conftest import fresh_ref
from tests.support.iceberg_oracle import FrozenRows
from tests.support.tables import create, data_files


def _one_file_per_region(spark, config: Config) -> TableRef:  # type: ignore[no-untyped-def]
    """Four regions of one small file each (nothing a size rule would rewrite), then a
    merge-on-read DELETE in every region."""
    ref = fresh_ref(config, "rewall")
    create(spark, ref, "id BIGINT, region INT, v STRING", properties="'write.distribution-mode'='hash'")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD region")
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, CAST(id % 4 AS INT), concat('v', id) FROM range(0, 2000)")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 9 = 0")
    return ref


def test_rewrite_all_rewrites_every_file_the_size_rules_leave_alone(spark, config: Config, tmp_path: Path) -> None:
    ref = _one_file_per_region(spark, config)
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    before = data_files(spark, ref)
    assert len(before) == 4

    left_alone = run_job(config, ref, "compact", {})
    assert left_alone.status == NOOP, left_alone  # one small file per partition: not worth a rewrite
    everything = run_job(config, ref, "compact", {"rewrite_all": True, "where": "region IN (0, 1, 2)"}, verify=True)

    assert everything.status == COMMITTED and everything.content_verified, everything.error
    after = data_files(spark, ref)
    untouched = {p for p in before if p in after}
    assert len(untouched) == 1 and len(after) == 4  # region 3's file alone, outside the predicate; one new file per region
    frozen.assert_same()
