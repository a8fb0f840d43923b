"""The rows proof (`publish/proofs/rows.py`) at the cost of the change: one partition of many
reads that partition; both sides read while the rewrite writes (`publish/read_ahead.py`),
and what was read early used only where it stands for the staged snapshot; rewrites whose
own read of the files loses a row, or a file, never published (the frozen rows, not
icemaint's verification, judge the content); changes committed group by group each
verified; a MERGE dropping a delete that still applies elsewhere refused."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.run.outcome import COMMITTED
from maintenance.run.runner import run_job
from maintenance.spark.jvm import load_java_table
from maintenance.table.files import snapshot_files
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory
from tests.support.iceberg_oracle import FrozenRows, iceberg_deletes_by_data_file
from tests.support.verification import assert_not_published, merge_on_read_table


def test_one_partition_of_many_reads_only_that_partition(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(shape=TableShape("identity", 8, "single"), rows=4000, commits=4)
    result = run_job(config, ref, "compact", {"min_input_files": 2, "partitions": ["region=5"]}, verify=True)
    assert result.status == COMMITTED and result.content_verified, result.error
    table = load_table(config, ref)
    before = snapshot_files(table, table.current_snapshot().parent_snapshot_id)  # type: ignore[union-attr]
    region5 = [f for f in before.data if f.partition_path == "region=5"]
    assert result.verify_counters["verify_data_files"] == len(region5) + 1  # the partition's files, then the one COMPACT wrote
    assert 0 < result.verify_counters["verify_share"] < 0.25


def _files_read_when_verifying(progress: list[tuple[str, dict[str, int]]]) -> list[int]:
    return [counts["data_files_to_read"] for stage, counts in progress if stage == "verifying"]


def test_both_sides_are_read_while_the_rewrite_writes(spark, config: Config, cdc_table: CdcFactory) -> None:
    """One commit on the snapshot it planned on: the partition's files were read ahead and
    the file COMPACT wrote was read once written (`publish/read_ahead.py`), so once the change
    is staged no data file is left to read; the scope is still both sides' files."""
    ref, _, _ = cdc_table(shape=TableShape("identity", 4, "single"), rows=3000, commits=4)
    progress: list[tuple[str, dict[str, int]]] = []
    result = run_job(config, ref, "compact", {"min_input_files": 2, "partitions": ["region=1"]}, verify=True,
                     progress=lambda stage, **counts: progress.append((stage, counts)))
    assert result.status == COMMITTED and result.content_verified, result.error
    assert _files_read_when_verifying(progress) == [0]
    region1 = [f for f in snapshot_files(load_table(config, ref), result.snapshot_id).data if f.partition_path == "region=1"]
    assert len(region1) == 1
    assert result.verify_counters["verify_data_files"] == result.counters["data_files_rewritten"] + 1


def _compact_region1_with_a_writer_before_staging(config: Config, ref: TableRef, monkeypatch: pytest.MonkeyPatch,
                                                  write: Callable[[], object]) -> tuple[Any, list[tuple[str, dict[str, int]]]]:
    """COMPACT of `region=1`, verified, with `write` committed after its group was written and
    before its change is staged; the result (committed and verified) and its progress."""
    from maintenance.jobs.file_groups import executor

    real_commit = executor._commit

    def writer_first(*args, **kwargs):  # type: ignore[no-untyped-def]
        write()
        return real_commit(*args, **kwargs)

    monkeypatch.setattr(executor, "_commit", writer_first)
    progress: list[tuple[str, dict[str, int]]] = []
    result = run_job(config, ref, "compact", {"min_input_files": 2, "partitions": ["region=1"]}, verify=True,
                     progress=lambda stage, **counts: progress.append((stage, counts)))
    assert result.status == COMMITTED and result.content_verified, result.error
    return result, progress


def test_files_written_to_which_a_writers_delete_applies_are_read_in_the_staged_snapshot(spark, config: Config, cdc_table: CdcFactory,
                                                                                        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CDC writer commits equality deletes into the partition after COMPACT wrote its file
    and before it stages: the new file keeps the planning snapshot's sequence number, so the
    writer's deletes apply to it in the staged snapshot, and its rows as written (read early)
    are not its rows there. Verification reads it in the staged snapshot; the content is the
    writer's."""
    from maintenance.workload.cdc import CdcOptions, run_cdc_workload

    shape = TableShape("identity", 2, "single")
    ref, _, _ = cdc_table(shape=shape, rows=2000, commits=4)
    written: list[int] = []

    def cdc_writer() -> None:
        result, _ = run_cdc_workload(spark, config, ref, CdcOptions(rows=600, commits=1, update_ratio=0.6, delete_ratio=0.3, shape=shape, seed=21))
        written.append(int(result.snapshot_id))  # type: ignore[arg-type]

    result, progress = _compact_region1_with_a_writer_before_staging(config, ref, monkeypatch, cdc_writer)
    table = load_table(config, ref)
    added = [f for f in snapshot_files(table, result.snapshot_id).data if f.path not in {g.path for g in snapshot_files(table, written[0]).data}]
    assert len(added) == 1
    assert iceberg_deletes_by_data_file(load_java_table(spark, ref), result.snapshot_id)[added[0].path], "the writer's deletes apply to the new file"
    first, *rest = _files_read_when_verifying(progress)
    assert first == result.counters["data_files_rewritten"]  # the parent's side: the writer's snapshot, not the one read ahead
    assert rest and rest[0] >= 1  # the new file, read in the staged snapshot after all
    FrozenRows(spark, ref, tmp_path / "writer", written[0]).assert_same()


def test_a_read_ahead_of_a_snapshot_a_writer_replaced_is_not_used(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer commits after COMPACT planned and before it stages: the files read ahead were
    read on a snapshot that is not the staged change's parent, so verification reads the
    parent's side itself, and the writer's rows stay."""

    ref, _, _ = cdc_table(shape=TableShape("identity", 4, "single"), rows=3000, commits=4)
    inserting = lambda: spark.sql(f"INSERT INTO {ref.spark_name} SELECT * FROM {ref.spark_name} WHERE region = 2 LIMIT 7")  # noqa: E731
    result, progress = _compact_region1_with_a_writer_before_staging(config, ref, monkeypatch, inserting)
    table = load_table(config, ref)
    writers = table.current_snapshot().parent_snapshot_id  # type: ignore[union-attr]
    assert _files_read_when_verifying(progress) == [result.counters["data_files_rewritten"]]  # the file written still stands (no delete applies)
    FrozenRows(spark, ref, tmp_path / "writers", snapshot_id=writers).assert_same()


def test_a_column_added_while_the_rewrite_writes_does_not_fail_it(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The parent's side was read ahead, then a column is added before the change is staged
    (no new snapshot): rows are hashed in the current schema, so the reading is not used and
    the verification reads those files again; the correct change is published, every row kept."""
    from maintenance.jobs.file_groups import executor

    ref, _, _ = cdc_table(shape=TableShape("identity", 4, "single"), rows=3000, commits=4)
    spark.sql(f"SELECT * FROM {ref.spark_name}").write.parquet(str(tmp_path / "frozen"))
    real_commit = executor._commit
    altered: list[bool] = []

    def read_then_alter(ctx, *args, **kwargs):  # type: ignore[no-untyped-def]
        for reading in ctx.verifier.ahead._readings:
            reading.result.result()
        spark.sql(f"ALTER TABLE {ref.spark_name} ADD COLUMN added_meanwhile string")
        altered.append(True)
        return real_commit(ctx, *args, **kwargs)

    monkeypatch.setattr(executor, "_commit", read_then_alter)
    progress: list[tuple[str, dict[str, int]]] = []
    result = run_job(config, ref, "compact", {"min_input_files": 2, "partitions": ["region=1"]}, verify=True,
                     progress=lambda stage, **counts: progress.append((stage, counts)))
    assert altered and result.status == COMMITTED and result.content_verified, result.error
    assert _files_read_when_verifying(progress) == [result.counters["data_files_rewritten"] + 1]
    old = spark.read.parquet(str(tmp_path / "frozen"))
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    now = spark.sql(f"SELECT * FROM {ref.spark_name}").drop("added_meanwhile").select(*old.columns)
    assert (old.exceptAll(now).count(), now.exceptAll(old).count()) == (0, 0)


@pytest.mark.parametrize("job", ["compact", "merge"])
def test_a_rewrite_whose_read_loses_a_row_is_not_published(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch, job: str) -> None:
    """The rewrite's own read of its scan tasks drops one row: what it wrote agrees with what
    it read, so only a verification that reads the parent's files itself sees the loss."""
    from pyspark.sql import DataFrameReader

    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=1200, commits=4, update_ratio=0.3)
    before = load_table(config, ref).metadata.current_snapshot_id
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    victim = spark.sql(f"SELECT min(id) AS id FROM {ref.spark_name} WHERE region = 0").first()["id"]
    real_option, real_load = DataFrameReader.option, DataFrameReader.load
    rewrites: list[object] = []

    def option(self, key, value):  # type: ignore[no-untyped-def]
        if key == "scan-task-set-id":
            rewrites.append(self)
        return real_option(self, key, value)

    def load(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        frame = real_load(self, *args, **kwargs)
        return frame.where(frame["id"] != victim) if self in rewrites else frame

    monkeypatch.setattr(DataFrameReader, "option", option)
    monkeypatch.setattr(DataFrameReader, "load", load)
    options: dict[str, Any] = {"partitions": ["region=0"], **({"min_input_files": 2} if job == "compact" else {})}
    result = run_job(config, ref, job, options, verify=True)
    assert rewrites, "the fault never reached the rewrite's reader"
    assert_not_published(result, config, ref, before, frozen)


def test_a_rewrite_that_reads_one_task_less_than_it_replaces_is_not_published(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A group's staged scan tasks lack one of its files, whose removal is still committed:
    that file's rows are lost unless verification reads the parent's files itself."""
    import maintenance.jobs.file_groups.run as rewrite
    from maintenance.spark.planned_tasks import GroupTasks

    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=1200, commits=4, update_ratio=0.3)
    before = load_table(config, ref).metadata.current_snapshot_id
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    real = rewrite.rewrite_group

    def one_task_less(spark_, table, group, tasks, **options):  # type: ignore[no-untyped-def]
        assert tasks.java.size() > 1
        fewer = GroupTasks(spark_._jvm.java.util.ArrayList(tasks.java.subList(0, tasks.java.size() - 1)), tasks.sizes[:-1])
        return real(spark_, table, group, fewer, **options)

    monkeypatch.setattr(rewrite, "rewrite_group", one_task_less)
    result = run_job(config, ref, "compact", {"partitions": ["region=0"], "min_input_files": 2}, verify=True)
    assert_not_published(result, config, ref, before, frozen)


def _two_identical_files_in_region_0(spark: Any, config: Config) -> TableRef:
    """Region 0 holds two files of the very same rows (duplicate rows are legal), region 1 two small files."""
    ref = merge_on_read_table(spark, config, 2)
    for n in range(2):
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, 0, CONCAT('v', id) FROM range(40)")
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT id + {100 * n}, 1, 'x' FROM range(10)")
    return ref


def _reading_one_task_less(tasks: Any, spark: Any) -> Any:
    from maintenance.spark.planned_tasks import GroupTasks

    return GroupTasks(spark._jvm.java.util.ArrayList(tasks.java.subList(0, tasks.java.size() - 1)), tasks.sizes[:-1])


@pytest.mark.parametrize("listed_twice_by", ["its own group", "another group"])
def test_a_file_listed_twice_cannot_cover_rows_a_rewrite_lost(spark, config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              listed_twice_by: str) -> None:
    """Region 0's rewrite reads one of its two identical files only and writes half the rows;
    its new file is then listed twice: by its own writer, or by region 1's. Iceberg adds the
    file once (half the rows are lost), while a reading of the files as written would sum its
    rows twice and match the parent: a file read early stands only if it was read once."""
    import maintenance.jobs.file_groups.run as rewrite

    ref = _two_identical_files_in_region_0(spark, config)
    before = load_table(config, ref).metadata.current_snapshot_id
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    real = rewrite.rewrite_group
    region0: list[Any] = []
    region0_written = threading.Event()

    def faulty(spark_, table, group, tasks, **options):  # type: ignore[no-untyped-def]
        if any("region=0" in f.path for f in group.files):
            region0.extend(real(spark_, table, group, _reading_one_task_less(tasks, spark_), **options))
            region0_written.set()
            return region0 * 2 if listed_twice_by == "its own group" else list(region0)
        written = list(real(spark_, table, group, tasks, **options))
        if listed_twice_by == "another group":
            assert region0_written.wait(120), "region 0's group never ended"
            written += region0
        return written

    monkeypatch.setattr(rewrite, "rewrite_group", faulty)
    result = run_job(config, ref, "compact", {"min_input_files": 2, "commit_every_groups": 100, "max_concurrent_groups": 2}, verify=True)
    assert region0, "the fault never reached region 0's rewrite"
    assert_not_published(result, config, ref, before, frozen)


@pytest.mark.slow
def test_changes_committed_group_by_group_are_each_verified(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path) -> None:
    """One MERGE committing each partition's group on its own: every change is staged on the
    run's earlier ones and verified on its own scope."""
    ref, _, _ = cdc_table(shape=TableShape("identity", 4, "single"), rows=2000, commits=4, update_ratio=0.3)
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    result = run_job(config, ref, "merge", _group_by_group(config, ref), verify=True)
    assert result.status == COMMITTED and result.content_verified, result.error
    assert result.counters["snapshots_published"] == 4
    assert result.verify_counters["verify_data_files"] == result.counters["data_files_rewritten"] + result.counters["data_files_added"]
    frozen.assert_same()


def _group_by_group(config: Config, ref: TableRef) -> dict[str, Any]:
    """MERGE options that make each partition a group of its own, committed on its own."""
    sizes: dict[str, int] = {}
    for f in snapshot_files(load_table(config, ref)).data:
        sizes[f.partition_path] = sizes.get(f.partition_path, 0) + f.size
    return {"commit_every_groups": 1, "max_concurrent_groups": 1, "max_group_bytes": max(sizes.values())}


@pytest.mark.slow
def test_changes_staged_after_a_writers_commit_keep_the_writers_content(spark, config: Config, cdc_table: CdcFactory,
                                                                                    tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CDC writer commits updates and deletes (equality deletes on every partition) right
    after the run's first change: the later changes are staged on the writer's snapshot and
    verified against it (its deletes applied on both sides); the content ends as the writer
    left it."""
    from maintenance import faults
    from maintenance.workload.cdc import CdcOptions, run_cdc_workload

    shape = TableShape("identity", 4, "single")
    ref, _, _ = cdc_table(shape=shape, rows=2000, commits=4, update_ratio=0.3)
    written: list[int] = []
    real_point = faults.point

    def writer_after_first_commit(name: str) -> None:
        real_point(name)
        if name == "groups-committed" and not written:
            result, _ = run_cdc_workload(spark, config, ref, CdcOptions(rows=400, commits=1, update_ratio=0.5, delete_ratio=0.2, shape=shape, seed=9))
            written.append(int(result.snapshot_id))  # type: ignore[arg-type]

    monkeypatch.setattr(faults, "point", writer_after_first_commit)
    result = run_job(config, ref, "merge", _group_by_group(config, ref), verify=True)
    assert result.status == COMMITTED and result.content_verified, result.error
    assert written and result.counters["snapshots_published"] == 4
    FrozenRows(spark, ref, tmp_path / "writer", written[0]).assert_same()  # the content is the writer's, unchanged by MERGE


def test_a_merge_dropping_a_delete_that_still_applies_elsewhere_is_not_published(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """MERGE of region=0 also drops an equality delete of region=1, whose data files it does
    not rewrite: the scope must take those files in, and their deleted rows come back."""
    import maintenance.jobs.file_groups.executor as executor
    from maintenance.spark.java_files import JavaFiles

    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=1500, commits=4, update_ratio=0.3, delete_ratio=0.1)
    table = load_table(config, ref)
    before = table.metadata.current_snapshot_id
    files = snapshot_files(table)
    other = next(d for d in files.equality_deletes if d.partition_path == "region=1")
    extra = JavaFiles(spark, load_java_table(spark, ref), before).delete_files({other.key})[other.key]  # type: ignore[arg-type]
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    real = executor.data_file_rewrite

    def dropping_one_more(spark_, snapshot_id, seq, remove_data, added, remove_deletes, added_deletes=()):  # type: ignore[no-untyped-def]
        return real(spark_, snapshot_id, seq, remove_data, added, lambda operation: remove_deletes(operation).deleteFile(extra), added_deletes)

    with monkeypatch.context() as patched:
        patched.setattr(executor, "data_file_rewrite", dropping_one_more)
        result = run_job(config, ref, "merge", {"partitions": ["region=0"]}, verify=True)
    assert_not_published(result, config, ref, before, frozen)
    region1 = [f for f in files.data if f.partition_path == "region=1" and f.seq < other.seq]
    assert result.verify_counters["verify_data_files"] >= len(region1) > 0  # the untouched partition's files were read
