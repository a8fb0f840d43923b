"""MANIFESTS with `sort_by` (maintenance/jobs/manifests/clusters.py): on a Spark-written
table partitioned by (region, day) whose every commit touched every partition, the new data
manifests each hold one range of days, ranges that do not overlap (from the manifest list's
partition summaries, as a planner prunes by them); every entry kept (verified) and the
content the frozen copy's. A field the spec lacks is refused in one line."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.run.outcome import COMMITTED
from maintenance.run.runner import run_job
from tests.conftest import fresh_ref
from tests.support.cli import in_process
from tests.support.iceberg_oracle import FrozenRows
from tests.support.tables import create


def _day_ranges(config: Config, ref: TableRef) -> list[tuple[int, int]]:
    """Each data manifest's (lowest, highest) day, from the manifest list (day: the second partition field)."""
    table = load_table(config, ref)
    ranges = []
    for manifest in table.current_snapshot().manifests(table.io):
        if manifest.content.value == 0 and manifest.partitions:
            day = manifest.partitions[1]
            ranges.append((struct.unpack("<i", bytes(day.lower_bound))[0], struct.unpack("<i", bytes(day.upper_bound))[0]))
    return sorted(ranges)


def _table(spark, config: Config) -> TableRef:  # type: ignore[no-untyped-def]
    ref = fresh_ref(config, "sortby")
    create(spark, ref, "id bigint, region int, day int", properties="'commit.manifest.target-size-bytes'='12000'")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD region")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD day")
    for commit in range(10):  # each commit touches all 4 x 6 partitions: one manifest spanning every day
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, CAST(id % 4 AS INT), CAST(id % 6 AS INT) FROM range({commit * 240}, {(commit + 1) * 240})")
    return ref


def test_sort_by_a_partition_field_gives_each_manifest_one_range_of_it(spark, config: Config, tmp_path: Path) -> None:
    ref = _table(spark, config)
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    assert all(low == 0 and high == 5 for low, high in _day_ranges(config, ref))  # every manifest: every day

    result = run_job(config, ref, "manifests", {"sort_by": ["day"]}, verify=True)

    assert result.status == COMMITTED and result.content_verified, result.error
    frozen.assert_same()
    ranges = _day_ranges(config, ref)
    assert len(ranges) >= 2 and result.counters["manifests_rewritten"] == 10, (ranges, result.counters)
    assert all(later[0] >= earlier[1] for earlier, later in zip(ranges, ranges[1:])), ranges  # one run of days each, in order
    assert sum(high - low for low, high in ranges) <= 5 + len(ranges)  # a day shared at most where one ends and the next begins


def test_sort_by_a_field_the_spec_lacks_is_refused_in_one_line(spark, config: Config, capsys: pytest.CaptureFixture[str]) -> None:
    ref = _table(spark, config)
    code, out, err = in_process(capsys, "manifests", str(ref), "--sort-by", "hour")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "sort_by hour" in lines[0] and "region, day" in lines[0] and "Traceback" not in out + err, (code, out, err)
