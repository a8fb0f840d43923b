"""COMPACT on real tables: small files packed toward the target size, sorted or z-ordered,
deletes applied on the way, sequence numbers kept; judged by a frozen copy of the rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.run.outcome import COMMITTED, NOOP
from maintenance.run.runner import run_job
from maintenance.table.health import table_health
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory, fresh_ref
from tests.support.cli import in_process, json_lines
from tests.support.file_checks import local
from tests.support.iceberg_oracle import FrozenRows
from tests.support.matrix import referenced_by_snapshots
from tests.support.tables import create


def files_of(spark: Any, ref: TableRef) -> list[Any]:
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    return spark.sql(f"SELECT * FROM {ref.spark_name}.files").collect()


def test_an_append_only_table_ends_with_one_file_per_partition_after_one_run(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The default policy: COMPACT on small files; afterwards nothing is due for the table."""
    ref, _, _ = cdc_table(shape=TableShape("identity", 4, "single"), rows=6000, commits=30, update_ratio=0, delete_ratio=0)
    assert len(files_of(spark, ref)) == 120
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    code, out, _ = in_process(capsys, "run", str(ref), "--json")

    ran = {r["job"]: r for r in json_lines(out)}
    assert code == 0 and ran["compact"]["status"] == COMMITTED and ran["compact"]["content_verified"], out
    assert "merge" not in ran  # no deletes: MERGE is not due
    frozen.assert_same()
    per_partition: dict[Any, int] = {}
    for f in files_of(spark, ref):
        per_partition[f.partition] = per_partition.get(f.partition, 0) + 1
    assert sorted(per_partition.values()) == [1, 1, 1, 1]

    code, out, _ = in_process(capsys, "plan", str(ref), "--json")
    assert code == 0 and [d for d in json.loads(out)["decisions"] if d["due"]] == []


@pytest.mark.parametrize("shape", [TableShape("identity", 2, "single"), TableShape("none", 1, "composite")], ids=lambda s: s.encode())
def test_compact_applies_deletes_drops_the_ones_it_covers_and_keeps_sequence_numbers(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path,
                                                                                     shape: TableShape) -> None:
    ref, _, _ = cdc_table(shape=shape, rows=3000, commits=6, update_ratio=0.3, delete_ratio=0.05)
    planning_seq = load_table(config, ref).metadata.last_sequence_number
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    result = run_job(config, ref, "compact", {"min_input_files": 2}, verify=True)

    assert result.status == COMMITTED and result.content_verified, result.error
    frozen.assert_same()
    health = table_health(str(ref), load_table(config, ref), small_file_bytes=1)
    assert (health.equality_delete_files, health.position_delete_files) == (0, 0)  # every data file was small: every delete covered
    assert result.counters["delete_files_removed"] > 0
    seqs = {r.sequence_number for r in spark.sql(f"SELECT sequence_number FROM {ref.spark_name}.entries WHERE status < 2 AND data_file.content = 0").collect()}
    assert seqs == {planning_seq}


def test_sort_writes_one_key_range_per_file_in_order(spark, config: Config, tmp_path: Path) -> None:
    ref = fresh_ref(config)
    create(spark, ref, "id bigint, v string", "'write.target-file-size-bytes'='20000'")
    spark.sql(f"ALTER TABLE {ref.spark_name} WRITE ORDERED BY id DESC")
    for batch in range(8):  # small files with interleaved ids
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT id * 8 + {batch}, repeat('x', 20) FROM range(0, 1000) ORDER BY rand()")
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    result = run_job(config, ref, "compact", {}, verify=True)

    assert result.status == COMMITTED and result.counters["data_files_added"] > 1, result
    frozen.assert_same()
    ranges = []
    for f in files_of(spark, ref):
        ids = pq.read_table(str(local(f.file_path)), columns=["id"]).column("id").to_pylist()
        assert ids == sorted(ids, reverse=True), f"{f.file_path} is not sorted by id DESC"
        ranges.append((min(ids), max(ids)))
    ranges.sort()
    assert all(a[1] < b[0] for a, b in zip(ranges, ranges[1:])), f"files overlap: {ranges}"


def test_zorder_clusters_both_columns(spark, config: Config, tmp_path: Path) -> None:
    ref = fresh_ref(config)
    create(spark, ref, "x int, y double, tag string", "'write.target-file-size-bytes'='20000'")
    for batch in range(6):
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT cast(rand({batch}) * 1000 as int), rand({batch + 100}) * 1000, "
                  f"CASE WHEN id % 7 = 0 THEN NULL ELSE 'tag' END FROM range(0, 2000)")
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    result = run_job(config, ref, "compact", {"strategy": "zorder", "zorder_columns": ("x", "y")}, verify=True)

    assert result.status == COMMITTED, result.error
    frozen.assert_same()
    boxes = []
    for f in files_of(spark, ref):
        table = pq.read_table(str(local(f.file_path)), columns=["x", "y"])
        xs, ys = table.column("x").to_pylist(), table.column("y").to_pylist()
        boxes.append((max(xs) - min(xs)) * (max(ys) - min(ys)))
    assert len(boxes) >= 4
    # Unordered files each span the whole square; z-ordered ones split it.
    assert sum(boxes) < 0.6 * len(boxes) * 1000 * 1000, boxes


def test_zorder_and_sort_refuse_what_they_cannot_order(spark, config: Config, cdc_table: CdcFactory, capsys: pytest.CaptureFixture[str]) -> None:
    ref, _, _ = cdc_table(rows=300, commits=1)
    code, _, err = in_process(capsys, "compact", str(ref), "--strategy", "sort")
    assert code == 2 and "needs a table sort order" in err
    code, _, err = in_process(capsys, "compact", str(ref), "--strategy", "zorder", "--zorder-column", "nope")
    assert code == 2 and "'nope' is not a column" in err


def test_a_table_with_nothing_to_compact_is_a_noop(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=400, commits=2)
    result = run_job(config, ref, "compact", {}, verify=True)
    assert result.status == NOOP and result.content_verified is None


@pytest.mark.parametrize("layout", [{"strategy": "binpack"}, {"strategy": "sort"}, {"strategy": "zorder", "zorder_columns": ("id", "amount")}],
                         ids=["binpack", "sort", "zorder"])
def test_small_partitions_are_one_job_and_one_file_each(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path, layout: dict) -> None:
    ref, _, _ = cdc_table(shape=TableShape("identity", 6, "single"), rows=3000, commits=6, update_ratio=0.2, delete_ratio=0.05)
    if layout["strategy"] == "sort":
        spark.sql(f"ALTER TABLE {ref.spark_name} WRITE ORDERED BY id")
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    result = run_job(config, ref, "compact", {"min_input_files": 2, **layout}, verify=True)

    assert result.status == COMMITTED and result.counters["groups_rewritten"] == 1 and result.counters["partitions_rewritten"] == 6, result
    frozen.assert_same()
    per_partition: dict[str, int] = {}
    for f in files_of(spark, ref):
        per_partition[str(f.partition)] = per_partition.get(str(f.partition), 0) + 1
    assert sorted(per_partition.values()) == [1] * 6


def test_commits_every_group_and_a_budget_leaves_the_rest_for_the_next_run(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path) -> None:
    ref, _, _ = cdc_table(shape=TableShape("identity", 4, "single"), rows=4000, commits=8, update_ratio=0.2, delete_ratio=0.05)
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    total = sum(f.file_size_in_bytes for f in files_of(spark, ref))
    per_partition: dict[str, int] = {}
    for f in files_of(spark, ref):
        per_partition[str(f.partition)] = per_partition.get(str(f.partition), 0) + f.file_size_in_bytes
    assert 2 * min(per_partition.values()) > max(per_partition.values())
    one_partition = {"max_group_bytes": max(per_partition.values())}  # each partition its own group, none combined

    first = run_job(config, ref, "compact", {"min_input_files": 2, "commit_every_groups": 1, "max_concurrent_groups": 2,
                                             "max_bytes_per_run": total // 3, **one_partition}, verify=True)

    assert first.status == COMMITTED and first.content_verified, first.error
    assert first.counters["groups_rewritten"] == first.counters["groups_planned"] == first.counters["snapshots_published"] < 4
    frozen.assert_same()
    second = run_job(config, ref, "compact", {"min_input_files": 2, "commit_every_groups": 1, **one_partition}, verify=True)
    assert second.status == COMMITTED and second.counters["groups_rewritten"] == 4 - first.counters["groups_rewritten"]
    frozen.assert_same()
    assert (table_health(str(ref), load_table(config, ref), small_file_bytes=1).position_delete_files) == 0


@pytest.mark.parametrize("partitions", [4, 6], ids=["side-by-side", "combined"])
def test_partitions_below_the_target_end_with_one_file_each(spark, config: Config, tmp_path: Path, partitions: int) -> None:
    """Partitions of a few MiB against a 4 MiB target: one file each, whether each partition
    is a Spark job of its own (no more of them than run at once) or they are combined into
    one job clustered by partition (where adaptive execution must not split a partition's
    rows over several tasks: each would write a file of its own)."""
    ref = fresh_ref(config, "fewbig")
    create(spark, ref, "id BIGINT, p INT, a STRING, b STRING", f"'write.target-file-size-bytes'='{4 * 2**20}'")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD p")
    batch = 12_000 * partitions  # five inserts: about 2.4 MiB a partition in five files
    for start in range(0, 5 * batch, batch):
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, cast(id % {partitions} as int), md5(cast(id as string)), sha1(cast(id as string)) "
                  f"FROM range({start}, {start + batch}) DISTRIBUTE BY id % {partitions}")
    sizes: dict[str, int] = {}
    for f in files_of(spark, ref):
        sizes[str(f.partition)] = sizes.get(str(f.partition), 0) + f.file_size_in_bytes
    assert all(2**20 < size < 4 * 2**20 for size in sizes.values()), sizes  # each partition below the target, several files
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    result = run_job(config, ref, "compact", {"min_input_files": 2}, verify=True)

    assert result.status == COMMITTED and result.content_verified, result.error
    assert result.counters["groups_rewritten"] == (partitions if partitions <= 4 else 1)
    frozen.assert_same()
    per_partition: dict[str, int] = {}
    for f in files_of(spark, ref):
        per_partition[str(f.partition)] = per_partition.get(str(f.partition), 0) + 1
    assert sorted(per_partition.values()) == [1] * partitions


@pytest.mark.parametrize("values", ["repetitive", "random"])
def test_small_files_are_sized_by_what_their_rows_become(spark, config: Config, tmp_path: Path, values: str) -> None:
    """Small files overstate their rows' size (each repeats its dictionaries, headers and
    footer): repetitive rows whose 80 files per partition hold about 1.5x the target end as
    one file per partition (counting by bytes made two), while random rows, which shrink
    little, still fill files to the target, the last one of a partition taking the rest
    (within 15%: the writer's measure leaves out what it only writes as a file closes, such
    as its dictionaries and footer; 1.10x was seen)."""
    target = 256 * 1024
    ref = fresh_ref(config, values)
    create(spark, ref, "id BIGINT, p INT, name STRING, amount DOUBLE",
           f"'write.target-file-size-bytes'='{target}', 'write.parquet.page-row-limit'='1000', 'write.distribution-mode'='none', 'write.spark.fanout.enabled'='true'")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD p")
    name = "concat('customer-', cast(id % 50 as string))" if values == "repetitive" else "md5(cast(id as string))"
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT /*+ REPARTITION(80) */ id, cast(id % 2 as int), {name}, round(id % 1000 / 7.0, 2) FROM range(0, 90000)")
    before: dict[str, list[int]] = {}
    for f in files_of(spark, ref):
        before.setdefault(str(f.partition), []).append(f.file_size_in_bytes)
    assert all(len(sizes) == 80 and sum(sizes) > 1.5 * target for sizes in before.values()), before
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    result = run_job(config, ref, "compact", {"min_input_files": 2}, verify=True)

    assert result.status == COMMITTED and result.content_verified, result.error
    frozen.assert_same()
    after: dict[str, list[int]] = {}
    for f in files_of(spark, ref):
        after.setdefault(str(f.partition), []).append(f.file_size_in_bytes)
    if values == "repetitive":
        assert all(len(sizes) == 1 and sizes[0] < target for sizes in after.values()), after
    else:
        for sizes in after.values():
            full = sorted(sizes)[1:]  # a partition's smallest file takes what is left
            assert len(sizes) > 1 and all(0.9 * target <= size <= 1.15 * target for size in full), after


ROW_SHAPES = {
    # ~50 B a row once written: a key, a partition and a hash
    "narrow": ("id BIGINT, p INT, v STRING", "id, cast(id % 2 as int), md5(cast(id as string))"),
    # ~250 B a row: strings of several cardinalities, numbers, a date and a timestamp
    "wide": ("id BIGINT, p INT, name STRING, city STRING, note STRING, amount DOUBLE, qty INT, day DATE, at TIMESTAMP, tag STRING",
             "id, cast(id % 2 as int), concat('customer-', cast(id % 997 as string)), concat('city-', cast(id % 31 as string)), "
             "sha2(cast(id as string), 256), round(id % 10007 / 7.0, 2), cast(id % 113 as int), date_add(date'2026-01-01', cast(id % 90 as int)), "
             "timestamp_seconds(1700000000 + id * 37), concat(md5(cast(id % 5000 as string)), '-', cast(id % 3 as string))"),
}
SIZING_LAYOUTS = {"binpack": {"strategy": "binpack"}, "sort": {"strategy": "sort"}, "zorder": {"strategy": "zorder", "zorder_columns": ("id", "qty")}}


@pytest.mark.parametrize("rows", ["narrow", "wide"])
@pytest.mark.parametrize("layout", ["binpack", "sort", "zorder"])
def test_output_files_are_within_a_tenth_of_the_target_and_a_second_run_is_a_noop(spark, config: Config, tmp_path: Path, layout: str,
                                                                                  rows: str) -> None:
    """A Spark-written table with a 256 KiB target, 30 appends of small files into two
    partitions (1.8 to 2.4 targets each once compacted, where no even count of files but two
    or three fits): every file COMPACT writes, but the one of each partition that takes the
    rest, is within 10% of the target, and the same COMPACT again is a noop. The rows' written size is neither
    what their small input files take (measured 0.73 to 0.98 of it) nor what the Parquet
    writer measures before a file closes at such a target (it counts a page it still
    buffers, uncompressed): a group that misses is written again at its rows' size."""
    target = 256 * 1024
    columns, select = ROW_SHAPES[rows]
    if layout == "zorder" and rows == "narrow":
        columns, select = columns + ", qty INT", select + ", cast(id % 113 as int)"
    ref = fresh_ref(config, f"sizing_{layout}_{rows}")
    create(spark, ref, columns, f"'write.target-file-size-bytes'='{target}'")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD p")
    if layout == "sort":
        spark.sql(f"ALTER TABLE {ref.spark_name} WRITE ORDERED BY v" if rows == "narrow" else f"ALTER TABLE {ref.spark_name} WRITE ORDERED BY name, id")
    batch = 2000 if rows == "narrow" else 600
    for start in range(0, 30 * batch, batch):
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT {select} FROM range({start}, {start + batch})")
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    options = {**SIZING_LAYOUTS[layout]}

    first = run_job(config, ref, "compact", options, verify=True)

    assert first.status == COMMITTED and first.content_verified, first.error
    frozen.assert_same()
    after: dict[str, list[int]] = {}
    for f in files_of(spark, ref):
        after.setdefault(str(f.partition), []).append(f.file_size_in_bytes)
    assert len(after) == 2, after
    for sizes in after.values():
        others = [size for size in sizes if not 0.9 * target <= size <= 1.1 * target]
        assert len(sizes) >= 2 and len(others) <= 1 and all(size <= 1.65 * target for size in others), after  # one file takes the rest
    table = load_table(config, ref)
    written = {str(path) for path in Path(local(table.location())).joinpath("data").rglob("*.parquet")}
    assert written == {local(path).as_posix() for path in referenced_by_snapshots(table) if path.endswith(".parquet")}  # nothing discarded left behind
    second = run_job(config, ref, "compact", options, verify=True)
    assert second.status == NOOP, (second.counters, after)
