"""MANIFESTS on real tables: one manifest per commit becomes a few, each one range of partitions,
content and planning unchanged; judged by a frozen copy of the rows and Iceberg's own planner."""

from __future__ import annotations

from pathlib import Path

import pytest

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.run.outcome import COMMITTED, NOOP
from maintenance.run.runner import run_job
from maintenance.spark.jvm import load_java_table
from maintenance.table.health import table_health
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory
from tests.support.iceberg_oracle import FrozenRows, iceberg_deletes_by_data_file
from tests.support.progress import RecordedProgress


def manifest_partition_ranges(config: Config, ref: TableRef) -> list[tuple[str, str]]:
    """Each data manifest's (lower, upper) partition value, from the manifest list's summaries."""
    table = load_table(config, ref)
    ranges = []
    for manifest in table.current_snapshot().manifests(table.io):
        if manifest.content.value == 0 and manifest.partitions:
            summary = manifest.partitions[0]
            ranges.append((bytes(summary.lower_bound).decode(), bytes(summary.upper_bound).decode()))
    return sorted(ranges)


@pytest.mark.slow  # one of the slowest: make test-integration runs it
def test_manifests_become_few_each_a_range_of_partitions(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path) -> None:
    ref, _, _ = cdc_table(shape=TableShape("identity", 6, "single"), rows=3000, commits=25, update_ratio=0.2, delete_ratio=0.05)
    spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('commit.manifest.target-size-bytes'='40000')")
    before = table_health(str(ref), load_table(config, ref), small_file_bytes=1)
    java_before = iceberg_deletes_by_data_file(load_java_table(spark, ref))
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    assert before.manifests >= 50  # a data and a delete manifest per commit

    result = run_job(config, ref, "manifests", {}, verify=True)

    assert result.status == COMMITTED and result.content_verified, result.error
    frozen.assert_same()
    after = table_health(str(ref), load_table(config, ref), small_file_bytes=1)
    planned_bytes = result.counters["manifest_bytes_planned"]
    assert after.manifests <= -(-planned_bytes // 40000) + 1 and result.counters["manifests_rewritten"] == before.manifests
    assert (after.data_files, after.position_delete_files, after.equality_delete_files) == (
        before.data_files, before.position_delete_files, before.equality_delete_files)
    assert iceberg_deletes_by_data_file(load_java_table(spark, ref)) == java_before  # every delete still applies where it did
    ranges = manifest_partition_ranges(config, ref)
    assert len(ranges) > 1 and all(a[1] < b[0] for a, b in zip(ranges, ranges[1:])), ranges  # sorted by partition: no overlap
    assert run_job(config, ref, "manifests", {}, verify=True).status == NOOP  # nothing left to do


def test_a_writer_committing_during_manifests_rewrite_is_kept(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path) -> None:
    """Published after a writer's commit: the rewrite is applied again on the newest state."""
    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=1000, commits=6)
    wrote = []

    def writer_once_staged(stage: str, **counts: int) -> None:  # the writer commits between staging and publishing
        if stage == "staged" and not wrote:
            wrote.append(cdc_table(ref=ref, rows=50, commits=1, seed=77)[2])

    progress = RecordedProgress(then=writer_once_staged)
    result = run_job(config, ref, "manifests", {}, verify=True, progress=progress)

    assert result.status == COMMITTED and result.content_verified, result.error
    progress.assert_every_stage_counted("planning", "rewriting manifests", "staged", "verified")
    [rewriting] = [counts for stage, counts in progress.stages if stage == "rewriting manifests"]
    assert rewriting["manifests_to_rewrite"] == result.counters["manifests_planned"] and rewriting["bytes_to_rewrite"] > 0
    frozen_now = FrozenRows(spark, ref, tmp_path / "now")
    from tests.support.helpers import model_rows, spark_rows

    assert spark_rows(spark, ref) == model_rows(wrote[0])  # the writer's commit is there, nothing else changed
    assert frozen_now.rows == len(model_rows(wrote[0]))
    summary = load_table(config, ref).current_snapshot().summary
    assert summary["icemaint.job"] == "manifests"
