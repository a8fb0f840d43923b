"""STATS on Spark-written tables: the distinct counts engines read (through Iceberg's Java
API and the Puffin blobs' `ndv` property) against Spark's COUNT(DISTINCT); the partition
statistics file against `GROUP BY partition`; a second run is a noop; EXPIRE takes the
statistics of the snapshots it expires with them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.run.runner import run_job
from maintenance.spark.jvm import load_java_table
from maintenance.table.health import table_health
from tests.conftest import fresh_ref
from tests.support.cli import in_process
from tests.support.file_checks import local
from tests.support.iceberg_oracle import FrozenRows
from tests.support.progress import RecordedProgress
from tests.support.tables import create


def orders(spark: Any, config: Config, name: str) -> TableRef:
    """Three Spark appends into a table partitioned by region, with a key, a few dozen cities
    and a column of many distinct values."""
    ref = fresh_ref(config, name)
    create(spark, ref, "id BIGINT NOT NULL, region INT, city STRING, amount DOUBLE")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD region")
    spark.sql(f"ALTER TABLE {ref.spark_name} SET IDENTIFIER FIELDS id")
    for start in range(0, 30000, 10000):
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, cast(id % 5 as int), concat('city-', cast(id % 37 as string)), "
                  f"round(id % 7919 * 1.5, 1) FROM range({start}, {start + 10000})")
    return ref


def ndv_by_column(spark: Any, ref: TableRef) -> dict[str, int]:
    """What an engine reads: the current snapshot's statistics file, through Iceberg's Java API
    (the table's metadata, `TableMetadata.statisticsFiles`)."""
    table = load_java_table(spark, ref)
    snapshot_id = table.currentSnapshot().snapshotId()
    found: dict[str, int] = {}
    for stats in table.operations().current().statisticsFiles():
        if stats.snapshotId() != snapshot_id:
            continue
        for blob in stats.blobMetadata():
            assert blob.type() == "apache-datasketches-theta-v1"
            [field_id] = list(blob.fields())
            found[table.schema().findColumnName(field_id)] = int(blob.properties().get("ndv"))
    return found


def test_stats_writes_distinct_counts_and_partition_statistics_engines_read(spark, config: Config, tmp_path: Path,
                                                                             capsys: pytest.CaptureFixture[str]) -> None:
    ref = orders(spark, config, "stats")
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    snapshot_before = load_table(config, ref).metadata.current_snapshot_id

    code, out, err = in_process(capsys, "stats", str(ref), "--column", "id", "--column", "city", "--column", "amount", "--json")

    result = json.loads(out)
    assert code == 0 and result["status"] == "committed" and result["content_verified"], (out, err)
    assert result["snapshot_id"] is None and "statistics add no snapshot" in result["effect"]
    assert result["statistics_files_written"] == 2 and result["statistics_bytes_written"] > 0
    frozen.assert_same()
    table = load_table(config, ref)
    assert table.metadata.current_snapshot_id == snapshot_before
    exact = spark.sql(f"SELECT count(DISTINCT id) id, count(DISTINCT city) city, count(DISTINCT amount) amount FROM {ref.spark_name}").collect()[0]
    ndv = ndv_by_column(spark, ref)
    assert set(ndv) == {"id", "city", "amount"}
    for column in ndv:
        assert abs(ndv[column] - exact[column]) <= 0.05 * exact[column], (column, ndv[column], exact[column])

    [partition_stats] = [p for p in table.metadata.partition_statistics if p.snapshot_id == snapshot_before]
    rows = pq.read_table(local(partition_stats.statistics_path)).to_pylist()
    counted = {r.region: r.n for r in spark.sql(f"SELECT region, count(*) n FROM {ref.spark_name} GROUP BY region").collect()}
    assert {r["partition"]["region"]: r["data_record_count"] for r in rows} == counted
    assert table_health(str(ref), table, small_file_bytes=1).rows_changed_since_statistics == 0

    code, out, _ = in_process(capsys, "stats", str(ref), "--column", "id", "--column", "city", "--column", "amount", "--json")
    assert code == 0 and json.loads(out)["status"] == "noop", out


def test_stats_says_how_much_it_reads_at_every_stage(spark, config: Config) -> None:
    """STATS reads the whole snapshot: the sketches' stage says how many data files and bytes,
    and no stage after Spark's start goes without a count."""
    ref = orders(spark, config, "stats_progress")
    progress = RecordedProgress()

    result = run_job(config, ref, "stats", {"columns": ["id", "city"]}, verify=True, progress=progress)

    assert result.status == "committed" and result.content_verified, result.error
    progress.assert_every_stage_counted("planning", "sketching columns", "computing partition statistics")
    [sketching] = [counts for stage, counts in progress.stages if stage == "sketching columns"]
    health = table_health(str(ref), load_table(config, ref), small_file_bytes=1)
    assert (sketching["columns"], sketching["data_files_to_read"]) == (2, health.data_files) and sketching["bytes_to_read"] > 0


def test_stats_defaults_to_the_key_and_partition_columns_and_refuses_unknown_ones(spark, config: Config, capsys: pytest.CaptureFixture[str]) -> None:
    ref = orders(spark, config, "stats_default")
    code, out, _ = in_process(capsys, "stats", str(ref), "--dry-run", "--json")
    planned = json.loads(out)
    assert code == 0 and planned["status"] == "planned" and planned["stats_columns"] == ["id", "region"], out
    assert planned["partition_statistics_planned"] == 1
    code, out, _ = in_process(capsys, "stats", str(ref), "--no-partition-stats", "--dry-run", "--json")
    assert code == 0 and json.loads(out)["partition_statistics_planned"] == 0, out
    code, _, err = in_process(capsys, "stats", str(ref), "--column", "nope")
    assert code == 2 and "no column 'nope'" in err and len(err.strip().splitlines()) == 1, err


def test_expire_takes_the_statistics_of_the_snapshots_it_expires(spark, config: Config, capsys: pytest.CaptureFixture[str]) -> None:
    ref = orders(spark, config, "stats_expire")
    assert in_process(capsys, "stats", str(ref), "--json")[0] == 0
    old = [local(f.statistics_path) for f in [*load_table(config, ref).metadata.statistics, *load_table(config, ref).metadata.partition_statistics]]
    assert len(old) == 2 and all(path.exists() for path in old)
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, 1, 'city-new', 0.5 FROM range(30000, 30100)")
    assert table_health(str(ref), load_table(config, ref), small_file_bytes=1).rows_changed_since_statistics == 100
    assert in_process(capsys, "stats", str(ref), "--json")[0] == 0

    code, out, _ = in_process(capsys, "expire", str(ref), "--older-than", "0s", "--retain-last", "1", "--json")

    assert code == 0 and json.loads(out)["status"] == "committed", out
    table = load_table(config, ref)
    current = table.metadata.current_snapshot_id
    assert {f.snapshot_id for f in [*table.metadata.statistics, *table.metadata.partition_statistics]} == {current}
    assert not any(path.exists() for path in old)
