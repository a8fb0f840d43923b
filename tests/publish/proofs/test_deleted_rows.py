"""The deleted-rows proof of CONVERT and REWRITE (`publish/proofs/deleted_rows.py`): a staged
result missing one position; each change corrupted one position at a time
(`tests/support/corrupt_deletes.py`: one missing, one extra, one moved to another data file,
on position delete files and on DVs); an equality delete of a partition CONVERT did not
convert dropped; a NULL key's position lost; a key column renamed between two equality
deletes. None is published; the correct change verifies."""

from __future__ import annotations

from pathlib import Path

import pytest

from maintenance.catalogs import load_table
from maintenance.config import Config
from maintenance.run.outcome import COMMITTED
from maintenance.run.runner import run_job
from maintenance.spark.jvm import load_java_table
from maintenance.table.files import snapshot_files
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory, fresh_ref
from tests.support.corrupt_deletes import HOWS, corrupting
from tests.support.file_checks import local
from tests.support.iceberg_oracle import FrozenRows
from tests.support.row_deltas import commit_row_delta
from tests.support.tables import create
from tests.support.verification import assert_not_published


def test_a_staged_result_missing_one_position_is_not_published(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import maintenance.jobs.convert.scan as scan

    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=1500, commits=4, update_ratio=0.3)
    before = load_table(config, ref).metadata.current_snapshot_id
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    real_writer = scan.write_position_deletes

    def one_position_less(entries, io, group, output_dir, **kwargs):  # type: ignore[no-untyped-def]
        victim = entries.orderBy("file_path", "pos").first()
        return real_writer(entries.filter((entries.file_path != victim.file_path) | (entries.pos != victim.pos)), io, group, output_dir, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(scan, "write_position_deletes", one_position_less)
        result = run_job(config, ref, "convert", {"local_max_bytes": 1}, verify=True)
    assert_not_published(result, config, ref, before, frozen)
    assert result.verify_counters.get("verify_data_files", 1) > 0


@pytest.mark.parametrize("format_version", [2, 3], ids=["positions", "dv"])
@pytest.mark.parametrize("how", HOWS)
def test_a_convert_that_deletes_other_rows_is_not_published(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch, how: str, format_version: int) -> None:
    """CONVERT's new positions (v2 files or v3 DVs) one short, one too many, or one moved to
    another data file of the partition (as many rows deleted as before, other ones): the
    proof reads each data file's keys and both sides' deletes, and refuses every one."""
    import maintenance.jobs.convert.commit as convert_commit

    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=1500, commits=4, update_ratio=0.3, format_version=format_version)
    before = load_table(config, ref).metadata.current_snapshot_id
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    with corrupting(spark, config, ref, monkeypatch, how, convert_commit):
        result = run_job(config, ref, "convert", {}, verify=True)

    assert_not_published(result, config, ref, before, frozen)
    assert "deleted rows" in (result.error or "") and "only" in (result.error or ""), result.error
    assert 0 < result.verify_counters["verify_data_files"]


@pytest.mark.parametrize("how", HOWS)
def test_a_rewrite_of_position_deletes_that_deletes_other_rows_is_not_published(spark, config: Config, tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """REWRITE combining Spark's position deletes, its output corrupted the same ways: no
    equality delete applies, so no data file is read, and still each is refused."""
    import maintenance.jobs.rewrite.run as rewrite_run

    ref = fresh_ref(config, "rewritten")
    create(spark, ref, "id BIGINT, region INT, v STRING")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD region")
    spark.range(0, 400).selectExpr("id", "cast(id % 2 as int) region", "cast(id as string) v").writeTo(ref.spark_name).append()
    spark.range(400, 800).selectExpr("id", "cast(id % 2 as int) region", "cast(id as string) v").writeTo(ref.spark_name).append()
    for low in (10, 100, 420, 600):
        spark.sql(f"DELETE FROM {ref.spark_name} WHERE id BETWEEN {low} AND {low + 20}")
    before = load_table(config, ref).metadata.current_snapshot_id
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    with corrupting(spark, config, ref, monkeypatch, how, rewrite_run):
        result = run_job(config, ref, "rewrite", {}, verify=True)

    assert_not_published(result, config, ref, before, frozen)
    assert result.verify_counters["verify_data_files"] == 0  # positions against positions: no data file read
    retry = run_job(config, ref, "rewrite", {}, verify=True)
    assert retry.status == COMMITTED and retry.content_verified, retry.error
    frozen.assert_same()


def test_a_convert_dropping_an_equality_delete_of_a_partition_it_did_not_convert_is_not_published(
        spark, config: Config, cdc_table: CdcFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CONVERT of region=0 also drops an equality delete of region=1, whose files it wrote no
    position for: the proof's scope takes region=1's files in, and the rows come back there."""
    import maintenance.jobs.convert.commit as convert_commit
    from maintenance.spark.java_files import JavaFiles

    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=1500, commits=4, update_ratio=0.3, delete_ratio=0.1)
    table = load_table(config, ref)
    before = table.metadata.current_snapshot_id
    other = next(d for d in snapshot_files(table).equality_deletes if d.partition_path == "region=1")
    extra = JavaFiles(spark, load_java_table(spark, ref), before).delete_files({other.key})[other.key]  # type: ignore[arg-type]
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    with corrupting(spark, config, ref, monkeypatch, None, convert_commit, remove_also=[extra]):
        result = run_job(config, ref, "convert", {"partitions": ["region=0"]}, verify=True)

    assert_not_published(result, config, ref, before, frozen)
    assert "region=1" in (result.error or ""), result.error  # the file named is one of region=1's


def test_a_convert_losing_a_null_keys_position_is_not_published(spark, config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """NULL matches NULL in an equality delete: the row whose key is NULL is deleted before,
    and CONVERT's position for it left out is caught (while the correct CONVERT verifies)."""
    import pyarrow.parquet as pq

    import maintenance.jobs.convert.commit as convert_commit

    ref = fresh_ref(config, "nullkey")
    create(spark, ref, "id BIGINT, v STRING", "'write.metadata.metrics.default'='counts'")
    spark.range(0, 2000).selectExpr("id", "cast(id as string) v").writeTo(ref.spark_name).append()
    spark.sql(f"INSERT INTO {ref.spark_name} VALUES (NULL, 'null'), (NULL, 'null too')")
    commit_row_delta(spark, config, ref, equality_deletes=[{"id": None}, {"id": 5}, {"id": 10}], equality_columns=("id",))
    before = load_table(config, ref).metadata.current_snapshot_id
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    null_file = next(f.path for f in snapshot_files(load_table(config, ref)).data if pq.read_table(local(f.path), columns=["id"])["id"].null_count)

    with corrupting(spark, config, ref, monkeypatch, "missing", convert_commit, only=null_file):
        result = run_job(config, ref, "convert", {}, verify=True)

    assert_not_published(result, config, ref, before, frozen)
    assert null_file in (result.error or ""), result.error
    retry = run_job(config, ref, "convert", {}, verify=True)
    assert retry.status == COMMITTED and retry.content_verified, retry.error
    frozen.assert_same()


def test_an_equality_delete_on_a_column_renamed_since_is_matched_by_field_id(spark, config: Config, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The key column is renamed between two equality deletes (the older delete file names it
    `id`, the newer `key`; both by field id 1): the proof matches both, so a position left out
    is caught and the correct CONVERT verifies."""
    import maintenance.jobs.convert.commit as convert_commit

    ref = fresh_ref(config, "renamed")
    create(spark, ref, "id BIGINT, v STRING")
    spark.range(0, 1000).selectExpr("id", "cast(id as string) v").writeTo(ref.spark_name).append()
    commit_row_delta(spark, config, ref, equality_deletes=[{"id": 3}, {"id": 7}], equality_columns=("id",))
    spark.sql(f"ALTER TABLE {ref.spark_name} RENAME COLUMN id TO key")
    spark.range(1000, 2000).selectExpr("id AS key", "cast(id as string) v").writeTo(ref.spark_name).append()
    commit_row_delta(spark, config, ref, equality_deletes=[{"key": 11}, {"key": 1500}], equality_columns=("key",))
    before = load_table(config, ref).metadata.current_snapshot_id
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    assert frozen.rows == 2000 - 4

    with corrupting(spark, config, ref, monkeypatch, "missing", convert_commit):
        result = run_job(config, ref, "convert", {}, verify=True)

    assert_not_published(result, config, ref, before, frozen)
    retry = run_job(config, ref, "convert", {}, verify=True)
    assert retry.status == COMMITTED and retry.content_verified, retry.error
    frozen.assert_same()
