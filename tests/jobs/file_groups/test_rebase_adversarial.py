"""Adversarial tests of the rebase (MERGE / COMPACT carrying a writer's position deletes or
DVs, committed between planning and commit, over to the files the rewrite wrote).

Oracle, independent of icemaint's fingerprinting and matching: the writer's own snapshot
(the table right after its last commit, as Spark reads it) frozen into parquet
(`tests.support.iceberg_oracle.FrozenRows`: floats compared as text, so -0.0 and NaN are
told apart) and compared with the table after the run with EXCEPT ALL both ways. Most runs
are unverified (verify=False), so only this oracle guards the content.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from maintenance.catalogs import TableRef
from maintenance.config import Config
from maintenance.run.outcome import COMMITTED
from maintenance.run.runner import run_job
from tests.conftest import fresh_ref
from tests.support.iceberg_oracle import FrozenRows
from tests.support.row_deltas import position_deletes

pytestmark = pytest.mark.slow  # 14 Spark runs with writers (about 70 s): make test-integration


def _create(spark: Any, ref: TableRef, columns: str, partitioned_by: str, format_version: int, extra: str = "") -> None:
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {ref.spark_namespace}")
    spark.sql(f"CREATE TABLE {ref.spark_name} ({columns}) USING iceberg PARTITIONED BY ({partitioned_by}) TBLPROPERTIES ("
              f"'format-version'='{format_version}', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
              f"'write.merge.mode'='merge-on-read'{extra})")


def _current(spark: Any, ref: TableRef) -> int:
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    return int(spark.sql(f"SELECT snapshot_id FROM {ref.spark_name}.snapshots ORDER BY committed_at DESC LIMIT 1").collect()[0][0])


def _positions(spark: Any, ref: TableRef, where: str) -> list[tuple[str, int]]:
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    return [(r._file, int(r._pos)) for r in spark.sql(f"SELECT _file, _pos FROM {ref.spark_name} WHERE {where} ORDER BY _file, _pos").collect()]


def _fill_odd_rows(spark: Any, ref: TableRef, batches: int) -> None:
    """Several small files per partition, with exact duplicates (every column equal), NULLs,
    NaN, -0.0 and 0.0 side by side."""
    for batch in range(batches):
        spark.sql(f"INSERT INTO {ref.spark_name} VALUES "
                  "(1, 0, CAST('-0.0' AS DOUBLE), NULL), (1, 0, CAST('-0.0' AS DOUBLE), NULL), (1, 0, CAST('0.0' AS DOUBLE), NULL), "
                  "(2, 0, CAST('NaN' AS DOUBLE), 'x'), (2, 0, CAST('NaN' AS DOUBLE), 'x'), "
                  "(NULL, 1, NULL, NULL), (NULL, 1, NULL, NULL), (NULL, 1, NULL, ''), "
                  "(3, 1, CAST('-0.0' AS DOUBLE), 'y'), (3, 1, CAST('0.0' AS DOUBLE), 'y'), (3, 1, CAST('0.0' AS DOUBLE), 'y')")
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT id + {batch * 1000}, CAST(id % 2 AS INT), "
                  "CASE WHEN id % 11 = 0 THEN CAST('-0.0' AS DOUBLE) WHEN id % 13 = 0 THEN CAST('NaN' AS DOUBLE) WHEN id % 17 = 0 THEN NULL "
                  "ELSE id / 3.0 END, CASE WHEN id % 5 = 0 THEN NULL ELSE concat('v', id % 7) END FROM range(10, 400)")


def _check(outcome: Any, frozen: list[FrozenRows]) -> None:
    """Committed, every group, something rebased, and the table is the writer's last snapshot."""
    assert frozen, "the writer never ran"
    assert outcome.status == COMMITTED, outcome.error
    counters = outcome.counters
    assert "groups_refused" not in counters, counters
    assert counters.get("rows_rebased", 0) > 0, counters
    frozen[-1].assert_same()


def _one_group_per_commit(spark: Any, config: Config, ref: TableRef, tmp_path: Path, act: Callable[[int], None]) -> None:
    """MERGE one small group at a time, each committed on its own, `act(n)` before the n-th
    commit (after its group is written); the table must end as the writer's last snapshot."""
    calls: list[FrozenRows] = []

    def writer(stage: str, **_counts: int) -> None:
        if stage == "groups written":
            act(len(calls))
            calls.append(FrozenRows(spark, ref, tmp_path / f"writer{len(calls)}"))

    outcome = run_job(config, ref, "merge", {"commit_every_groups": 1, "max_concurrent_groups": 1, "max_group_bytes": 8192}, progress=writer, verify=False)
    assert len(calls) >= 2, (calls, outcome.error)
    _check(outcome, calls)
    assert outcome.counters["groups_rewritten"] == outcome.counters["groups_planned"] >= 2


def _odd_table(spark: Any, config: Config, name: str, format_version: int = 2, granularity: str = "partition") -> TableRef:
    """A table of `_fill_odd_rows` (three batches) with some rows deleted, so MERGE has work."""
    ref = fresh_ref(config, name)
    _create(spark, ref, "id BIGINT, part INT, d DOUBLE, s STRING", "part", format_version, f", 'write.delete.granularity'='{granularity}'")
    _fill_odd_rows(spark, ref, 3)
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 19 = 0")
    return ref


def _run_with_writer(spark: Any, config: Config, ref: TableRef, tmp_path: Path, act: Callable[[], None], *, job: str, options: dict[str, Any],
                     verify: bool, metadata_columns: tuple[str, ...] = ()) -> Any:
    """Run `job` with `act` as the writer, once, after the first group is written (before its
    commit), the writer's snapshot frozen right after it; then `_check`."""
    frozen: list[FrozenRows] = []

    def writer(stage: str, **_counts: int) -> None:
        if stage == "groups written" and not frozen:
            act()
            frozen.append(FrozenRows(spark, ref, tmp_path / "writer", **({"metadata_columns": metadata_columns} if metadata_columns else {})))

    outcome = run_job(config, ref, job, options, progress=writer, verify=verify)
    _check(outcome, frozen)
    return outcome


def test_v2_one_copy_of_exact_duplicates_deleted_by_a_partition_scoped_delete_with_nan_and_negative_zero(
        spark: Any, config: Config, tmp_path: Path) -> None:
    """MERGE on a v2 table of exact duplicates (NULL, NaN, -0.0 beside 0.0); the writer, after
    a group is written, commits a partition-scoped position delete of ONE copy of several
    duplicates (the last copy of each, in each file) in both partitions, then a MERGE INTO
    touching many rows of both partitions. Unverified: the frozen writer snapshot judges."""
    ref = _odd_table(spark, config, "rbadv")

    def act() -> None:
        for part, where in ((0, "id = 1 AND s IS NULL AND d = 0 AND CAST(d AS STRING) = '-0.0'"), (0, "id = 2 AND isnan(d)"),
                            (1, "id IS NULL AND s IS NULL"), (1, "id = 3 AND CAST(d AS STRING) = '0.0'")):
            found = _positions(spark, ref, where)
            by_file: dict[str, list[int]] = {}
            for file, pos in found:
                by_file.setdefault(file, []).append(pos)
            position_deletes(spark, config, ref, [(file, max(ps)) for file, ps in by_file.items()], f"part={part}")
        spark.sql(f"MERGE INTO {ref.spark_name} t USING (SELECT id FROM range(10, 2400) WHERE id % 3 = 0) u ON t.id = u.id "
                  "WHEN MATCHED AND t.id % 2 = 0 THEN UPDATE SET s = 'merged' WHEN MATCHED AND t.id % 2 = 1 THEN DELETE")

    _run_with_writer(spark, config, ref, tmp_path, act, job="merge", options={}, verify=False)


def test_v2_partition_scoped_verified(spark: Any, config: Config, tmp_path: Path) -> None:
    """The same table with the verifier on: its judgement must agree with the oracle's."""
    ref = _odd_table(spark, config, "rbadvv")

    def act() -> None:
        found = _positions(spark, ref, "id = 1 AND CAST(d AS STRING) = '-0.0'")
        position_deletes(spark, config, ref, [found[-1]], "part=0")
        spark.sql(f"UPDATE {ref.spark_name} SET s = 'upd' WHERE id % 4 = 1")

    outcome = _run_with_writer(spark, config, ref, tmp_path, act, job="merge", options={}, verify=True)
    assert outcome.content_verified


def test_v3_spark_table_delete_update_merge_before_and_during_row_ids_kept(spark: Any, config: Config, tmp_path: Path) -> None:
    """A v3 table written by Spark, DVs before planning; during the run the writer DELETEs,
    UPDATEs and MERGE INTOs in both partitions (each replaces the file's DV). Unverified; the
    oracle freezes `_row_id` and `_last_updated_sequence_number` beside the content."""
    ref = fresh_ref(config, "rbadv3")
    _create(spark, ref, "id BIGINT, part INT, d DOUBLE, s STRING", "part", 3)
    _fill_odd_rows(spark, ref, 3)
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 23 = 0")
    spark.sql(f"UPDATE {ref.spark_name} SET s = 'before' WHERE id % 29 = 0")

    def act() -> None:
        spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 31 = 0 OR (id = 3 AND CAST(d AS STRING) = '-0.0')")
        spark.sql(f"UPDATE {ref.spark_name} SET s = 'during' WHERE id % 37 = 0 OR id IS NULL")
        spark.sql(f"MERGE INTO {ref.spark_name} t USING (SELECT id FROM range(10, 2400) WHERE id % 5 = 2) u ON t.id = u.id "
                  "WHEN MATCHED AND t.part = 0 THEN UPDATE SET d = -t.d WHEN MATCHED THEN DELETE")

    _run_with_writer(spark, config, ref, tmp_path, act, job="merge", options={}, verify=False, metadata_columns=("_row_id", "_last_updated_sequence_number"))


def test_v2_one_group_per_commit_writer_commits_before_each(spark: Any, config: Config, tmp_path: Path) -> None:
    """commit_every_groups=1, one group at a time: before each commit the writer deletes the
    first live row of EVERY live data file (a hand-made partition-scoped position delete per
    partition) and UPDATEs some rows, so every commit has deletes to carry over and the
    later commits' rebase walks over the run's own earlier commits."""
    ref = _odd_table(spark, config, "rbadvc")

    def act(n: int) -> None:
        spark.sql(f"REFRESH TABLE {ref.spark_name}")
        firsts = spark.sql(f"SELECT part, _file, min(_pos) pos FROM {ref.spark_name} GROUP BY part, _file").collect()
        for part in (0, 1):
            entries = [(r._file, int(r.pos)) for r in firsts if r.part == part]
            if entries:
                position_deletes(spark, config, ref, entries, f"part={part}")
        spark.sql(f"UPDATE {ref.spark_name} SET s = 'call{n}' WHERE id % 43 = {n}")

    _one_group_per_commit(spark, config, ref, tmp_path, act)


def test_v2_one_group_per_commit_writer_deletes_outside_the_committed_group(spark: Any, config: Config, tmp_path: Path) -> None:
    """Same table; the writer deletes and updates a few rows (partition-scoped deletes) that
    need not lie in the group being committed. A commit whose own files the writer's delete
    does not touch must still commit."""
    ref = _odd_table(spark, config, "rbadvo")

    def act(n: int) -> None:
        spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 41 = {n}")
        spark.sql(f"UPDATE {ref.spark_name} SET s = 'call{n}' WHERE id % 43 = {n} OR id IS NULL")

    _one_group_per_commit(spark, config, ref, tmp_path, act)


def test_compact_sort_on_a_sorted_table(spark: Any, config: Config, tmp_path: Path) -> None:
    """COMPACT (rewrite_all, sort strategy) on a table with a sort order; the writer's MERGE
    INTO and DELETE land after a group is written. Unverified."""
    ref = fresh_ref(config, "rbadvs")
    _create(spark, ref, "id BIGINT, part INT, d DOUBLE, s STRING", "part", 2, ", 'write.delete.granularity'='partition'")
    spark.sql(f"ALTER TABLE {ref.spark_name} WRITE ORDERED BY s, d")
    _fill_odd_rows(spark, ref, 3)
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 19 = 0")

    def act() -> None:
        spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 31 = 0 OR (id = 1 AND CAST(d AS STRING) = '0.0')")
        spark.sql(f"MERGE INTO {ref.spark_name} t USING (SELECT id FROM range(10, 2400) WHERE id % 3 = 1) u ON t.id = u.id "
                  "WHEN MATCHED AND t.id % 2 = 0 THEN UPDATE SET s = 'merged' WHEN MATCHED THEN DELETE")

    _run_with_writer(spark, config, ref, tmp_path, act, job="compact", options={"rewrite_all": True, "strategy": "sort"}, verify=False)


def test_v2_file_scoped_writer_delete_replacing_the_only_planned_delete(spark: Any, config: Config, tmp_path: Path) -> None:
    """Minimal: v2, file-scoped deletes (Spark's default granularity), one partition. At
    planning one file has a position delete (the only delete MERGE plans to drop); the writer
    deletes another row of that file, and Spark replaces the file-scoped delete with one
    holding both. The rebase must then add a delete while the commit drops none."""
    ref = fresh_ref(config, "rbadvmin")
    _create(spark, ref, "id BIGINT, part INT, d DOUBLE, s STRING", "part", 2, ", 'write.delete.granularity'='file'")
    for batch in range(3):
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, 0, id / 2.0, 'v' FROM range({batch * 100}, {batch * 100 + 100})")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id = 5")

    def act() -> None:
        spark.sql(f"DELETE FROM {ref.spark_name} WHERE id = 7")

    _run_with_writer(spark, config, ref, tmp_path, act, job="merge", options={}, verify=False)


def test_v3_writer_touches_only_files_without_planned_dvs(spark: Any, config: Config, tmp_path: Path) -> None:
    """v3 written by Spark, arranged so the commit still drops a planned DV (the writer's DVs
    land on files that had none at planning): duplicates, NaN, -0.0; the writer DELETEs,
    UPDATEs and MERGE INTOs in both partitions. Unverified; row ids frozen in the oracle."""
    ref = fresh_ref(config, "rbadv3b")
    _create(spark, ref, "id BIGINT, part INT, d DOUBLE, s STRING", "part", 3)
    _fill_odd_rows(spark, ref, 3)
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id BETWEEN 10 AND 400 AND id % 23 = 0")  # batch 0's filler files only

    def act() -> None:
        spark.sql(f"DELETE FROM {ref.spark_name} WHERE id >= 1000 AND id % 31 = 0")
        spark.sql(f"UPDATE {ref.spark_name} SET s = 'during' WHERE id >= 1000 AND id % 37 = 0")
        spark.sql(f"MERGE INTO {ref.spark_name} t USING (SELECT id FROM range(1000, 2400) WHERE id % 5 = 2) u ON t.id = u.id "
                  "WHEN MATCHED AND t.part = 0 THEN UPDATE SET d = -t.d WHEN MATCHED THEN DELETE")

    _run_with_writer(spark, config, ref, tmp_path, act, job="merge", options={}, verify=False, metadata_columns=("_row_id", "_last_updated_sequence_number"))


def test_v2_partition_scoped_writer_delete_whose_path_bounds_span_a_replaced_file(spark: Any, config: Config, tmp_path: Path) -> None:
    """v2, partition-scoped deletes, one partition, three data files F0 < F1 < F2 (by path).
    MERGE plans F1 (the only file with a delete). The writer deletes one row in F0 and one
    in F2: one partition-scoped delete file whose file_path bounds [F0, F2] span F1, so
    Iceberg's validation from the planning snapshot says it may apply to F1, although it
    deletes nothing there."""
    ref = fresh_ref(config, "rbadvspan")
    _create(spark, ref, "id BIGINT, part INT, d DOUBLE, s STRING", "part", 2, ", 'write.delete.granularity'='partition'")
    for batch in range(3):
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT /*+ COALESCE(1) */ id, 0, id / 2.0, 'v' FROM range({batch * 100}, {batch * 100 + 100})")
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    files = sorted(r.file_path for r in spark.sql(f"SELECT file_path FROM {ref.spark_name}.data_files").collect())
    assert len(files) == 3, files
    first_id = {f: int(spark.sql(f"SELECT min(id) FROM {ref.spark_name} WHERE _file = '{f}'").collect()[0][0]) for f in files}
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id = {first_id[files[1]] + 3}")
    wrote: list[Any] = []

    def writer(stage: str, **_counts: int) -> None:
        if stage != "groups written" or wrote:
            return
        spark.sql(f"DELETE FROM {ref.spark_name} WHERE id IN ({first_id[files[0]] + 5}, {first_id[files[2]] + 5})")
        wrote.append(FrozenRows(spark, ref, tmp_path / "writer"))

    outcome = run_job(config, ref, "merge", {}, progress=writer, verify=False)
    assert wrote and outcome.status == COMMITTED, (outcome.error, outcome.counters)
    assert "groups_refused" not in outcome.counters, outcome.counters
    wrote[0].assert_same()


@pytest.mark.parametrize("format_version", [2, 3])
def test_compact_of_a_table_without_deletes_writer_deletes_during(spark: Any, config: Config, tmp_path: Path, format_version: int) -> None:
    """COMPACT (rewrite_all) of an append-only table: no delete at planning, so the commit
    drops none; the writer deletes and updates rows in both partitions meanwhile."""
    ref = fresh_ref(config, "rbadvnd")
    _create(spark, ref, "id BIGINT, part INT, d DOUBLE, s STRING", "part", format_version)
    _fill_odd_rows(spark, ref, 2)

    def act() -> None:
        spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 31 = 0")
        spark.sql(f"UPDATE {ref.spark_name} SET s = 'during' WHERE id % 37 = 0")

    _run_with_writer(spark, config, ref, tmp_path, act, job="compact", options={"rewrite_all": True}, verify=False)


def test_v2_writer_position_deletes_rows_equality_deletes_already_removed(spark: Any, config: Config, tmp_path: Path) -> None:
    """Equality deletes before planning remove id 2 (NaN duplicates) and id 50; during the
    run the writer commits a partition-scoped position delete naming those very positions
    (already deleted) plus live rows (one copy of an exact duplicate), and an equality
    delete of id 60 together with a position delete of the same row. Unverified."""
    from tests.support.row_deltas import commit_row_delta

    ref = _odd_table(spark, config, "rbadveq")
    dead = _positions(spark, ref, "id IN (2, 50) AND part = 0")
    commit_row_delta(spark, config, ref, equality_deletes=[{"id": 2}, {"id": 50}], equality_columns=("id",), partition_path="part=0")

    def act() -> None:
        one_copy = _positions(spark, ref, "id = 1 AND CAST(d AS STRING) = '-0.0'")[-1:]
        sixty = _positions(spark, ref, "id IN (60, 62) AND part = 0")
        position_deletes(spark, config, ref, sorted(set(dead + one_copy + sixty)), "part=0")
        commit_row_delta(spark, config, ref, equality_deletes=[{"id": 60}, {"id": 64}], equality_columns=("id",), partition_path="part=0")

    _run_with_writer(spark, config, ref, tmp_path, act, job="merge", options={}, verify=False)


def test_v2_writer_changes_the_schema_then_updates_and_deletes(spark: Any, config: Config, tmp_path: Path) -> None:
    """After a group is written the writer adds a column, drops `s` (so rows that differed
    only in `s` become exact duplicates), and UPDATEs / DELETEs through the new schema
    (one copy of the new duplicates by position). Unverified."""
    ref = _odd_table(spark, config, "rbadvsch")

    def act() -> None:
        spark.sql(f"ALTER TABLE {ref.spark_name} ADD COLUMN extra STRING")
        spark.sql(f"ALTER TABLE {ref.spark_name} DROP COLUMN s")
        spark.sql(f"UPDATE {ref.spark_name} SET extra = 'new' WHERE id % 7 = 3")
        spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 29 = 1")
        position_deletes(spark, config, ref, _positions(spark, ref, "id IS NULL")[-2:], "part=1")

    _run_with_writer(spark, config, ref, tmp_path, act, job="merge", options={}, verify=False)


def test_table_upgraded_from_v2_to_v3_just_before_the_run(spark: Any, config: Config, tmp_path: Path) -> None:
    """A v2 table with position deletes, upgraded to format 3 (no snapshot since, so its
    files have no first row id yet); during MERGE the writer's DELETE writes DVs (its commit
    assigns the first row ids). Unverified; content compared (row ids not frozen)."""
    ref = fresh_ref(config, "rbadvup")
    _create(spark, ref, "id BIGINT, part INT, d DOUBLE, s STRING", "part", 2)
    _fill_odd_rows(spark, ref, 3)
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 19 = 0")
    spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('format-version'='3')")

    def act() -> None:
        spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 31 = 0")

    _run_with_writer(spark, config, ref, tmp_path, act, job="merge", options={}, verify=False)
