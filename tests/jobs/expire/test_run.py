"""EXPIRE on real tables: retention, refs and checkpoints kept, only dead files deleted."""

from __future__ import annotations

import json

import pytest

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.jobs.expire.options import ExpireOptions
from maintenance.progress import Progress, no_progress
from maintenance.run.outcome import COMMITTED, FAILED, NOOP, PLANNED, JobResult
from maintenance.run.runner import run_job
from maintenance.spark.fingerprint import content_fingerprint
from maintenance.workload.cdc import CdcOptions, run_cdc_workload
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory, fresh_ref
from tests.support.cli import in_process
from tests.support.file_checks import local, missing_referenced_files
from tests.support.helpers import DeleteLiveFileAt, model_rows, spark_rows
from tests.support.iceberg_oracle import FrozenRows
from tests.support.progress import RecordedProgress
from tests.support.tables import create

AGGRESSIVE = ExpireOptions(max_snapshot_age=0, min_snapshots_to_keep=1)
CHECKPOINT_KEY = "flink.max-committed-checkpoint-id"


def run_expire(config: Config, ref: TableRef, retention: ExpireOptions = AGGRESSIVE, dry_run: bool = False, progress: Progress = no_progress) -> JobResult:
    return run_job(config, ref, "expire", retention, verify=not dry_run, dry_run=dry_run, progress=progress)


def snapshot_ids(config: Config, ref: TableRef) -> list[int]:
    return [s.snapshot_id for s in load_table(config, ref).snapshots()]


def time_travel_rows(spark, ref: TableRef, snapshot_id: int) -> int:  # type: ignore[no-untyped-def]
    return spark.read.option("snapshot-id", snapshot_id).table(ref.spark_name.replace("`", "")).count()


def test_expiry_after_merge_deletes_replaced_files_and_keeps_content(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, model = cdc_table(shape=TableShape("identity", 3, "single"), rows=2000, commits=4, update_ratio=0.2, delete_ratio=0.05)
    assert run_job(config, ref, "merge").status == COMMITTED
    before = load_table(config, ref)
    replaced = [p for s in before.snapshots() for m in s.manifests(before.io) for p in [e.data_file.file_path for e in m.fetch_manifest_entry(before.io)]]
    current_files = {e.data_file.file_path for m in before.current_snapshot().manifests(before.io) for e in m.fetch_manifest_entry(before.io)}
    dead = sorted(set(replaced) - current_files)
    assert dead and all(local(p).exists() for p in dead)

    progress = RecordedProgress()
    result = run_expire(config, ref, progress=progress)

    assert result.status == COMMITTED and result.content_verified, result.error
    progress.assert_every_stage_counted("planning", "reading retained references", "finding expired files", "expired files found", "files deleted")
    after = load_table(config, ref)
    assert [s.snapshot_id for s in after.snapshots()] == [after.metadata.current_snapshot_id]
    assert result.counters["snapshots_expired"] == len(before.snapshots()) - 1
    assert not [p for p in dead if local(p).exists()], "files only expired snapshots used are deleted"
    assert missing_referenced_files(after) == []
    assert result.counters["files_deleted"] >= len(dead)
    assert spark_rows(spark, ref) == model_rows(model)
    assert run_expire(config, ref).status == NOOP


def test_retention_by_age_and_count_defaults_to_table_properties(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(rows=600, commits=5)
    ids = snapshot_ids(config, ref)
    spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('history.expire.max-snapshot-age-ms'='0', 'history.expire.min-snapshots-to-keep'='3')")

    result = run_expire(config, ref, ExpireOptions())

    assert result.status == COMMITTED, result.error
    assert snapshot_ids(config, ref) == ids[-3:]
    # The table's own defaults: nothing is five days old, so nothing goes.
    ref2, _, _ = cdc_table(rows=600, commits=3)
    assert run_expire(config, ref2, ExpireOptions()).counters["snapshots_planned"] == 0


def test_branches_and_tags_keep_their_snapshots(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(rows=800, commits=6)
    ids = snapshot_ids(config, ref)
    spark.sql(f"ALTER TABLE {ref.spark_name} CREATE TAG `release` AS OF VERSION {ids[1]}")
    spark.sql(f"ALTER TABLE {ref.spark_name} CREATE BRANCH `audit` AS OF VERSION {ids[3]} RETAIN 30 DAYS WITH SNAPSHOT RETENTION 2 SNAPSHOTS")
    tagged_rows = time_travel_rows(spark, ref, ids[1])

    result = run_expire(config, ref)

    assert result.status == COMMITTED and result.content_verified, result.error
    kept = set(snapshot_ids(config, ref))
    assert kept == {ids[1], ids[2], ids[3], ids[-1]}  # the tag; two on the branch; main's head
    assert spark.sql(f"SELECT count(*) FROM {ref.spark_name} VERSION AS OF 'release'").first()[0] == tagged_rows
    assert missing_referenced_files(load_table(config, ref)) == []


def test_checkpoint_snapshot_survives_aggressive_expiry(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=800, commits=2)
    name = ref.spark_name.replace("`", "")
    for checkpoint in (7, 8):  # a streaming sink's commits, each marking its checkpoint
        spark.range(checkpoint * 10_000, checkpoint * 10_000 + 3).selectExpr(
            "id", "cast(id % 2 as int) region", "'sink' customer", "cast(1 as decimal(12,2)) amount", "'new' status", "current_timestamp() updated_at", "1L version"
        ).writeTo(name).option(f"snapshot-property.{CHECKPOINT_KEY}", str(checkpoint)).append()
    ids_with_checkpoints = snapshot_ids(config, ref)
    checkpoint_snapshot = ids_with_checkpoints[-1]
    run_cdc_workload(spark, config, ref, CdcOptions(shape=TableShape("identity", 2, "single"), rows=800, commits=3, seed=99))
    before = content_fingerprint(spark, ref)
    checkpoint_rows = time_travel_rows(spark, ref, checkpoint_snapshot)

    result = run_expire(config, ref)

    assert result.status == COMMITTED and result.content_verified, result.error
    kept = snapshot_ids(config, ref)
    assert checkpoint_snapshot in kept
    assert ids_with_checkpoints[-2] not in kept and ids_with_checkpoints[0] not in kept
    assert len(kept) == 4  # the checkpoint and the three commits after it: the chain from the head
    assert result.counters["checkpoint_snapshot_ids"] == {CHECKPOINT_KEY: checkpoint_snapshot}
    assert time_travel_rows(spark, ref, checkpoint_snapshot) == checkpoint_rows
    assert content_fingerprint(spark, ref).same_content(before)


def test_dry_run_lists_and_changes_nothing(spark, config: Config, cdc_table: CdcFactory, capsys) -> None:
    ref, _, _ = cdc_table(rows=600, commits=3)
    assert run_job(config, ref, "merge").status == COMMITTED
    table = load_table(config, ref)
    ids = snapshot_ids(config, ref)

    code, out, _ = in_process(capsys, "expire", str(ref), "--older-than", "0s", "--dry-run", "--json")

    report = json.loads(out)
    assert code == 0 and report["status"] == PLANNED and report["dry_run"]
    assert report["snapshot_ids_to_expire"] == ids[:-1]
    assert report["would_delete"] and all(local(p).exists() for p in report["would_delete"])
    assert snapshot_ids(config, ref) == ids and load_table(config, ref).metadata_location == table.metadata_location


def test_old_metadata_files_beyond_the_kept_count_are_deleted(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(rows=400, commits=2)
    spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('write.metadata.previous-versions-max'='2')")
    run_cdc_workload(spark, config, ref, CdcOptions(rows=400, commits=4, seed=5))
    table = load_table(config, ref)
    folder = local(table.metadata_location).parent
    assert len(list(folder.glob("*.metadata.json"))) > 3

    result = run_expire(config, ref, ExpireOptions())  # nothing old enough to expire: metadata cleanup only

    after = load_table(config, ref)
    kept = {local(after.metadata_location), *(local(e.metadata_file) for e in after.metadata.metadata_log)}
    assert result.status == COMMITTED, result.error
    assert len(kept) == 3  # the current version and the two the log keeps
    assert set(folder.glob("*.metadata.json")) == kept
    assert result.counters["metadata_files_unreferenced"] == result.counters["files_deleted"] > 0
    assert missing_referenced_files(after) == []


def test_aggressive_retention_flags_are_validated(capsys, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(rows=200, commits=1)
    code, _, err = in_process(capsys, "expire", str(ref), "--older-than", "soon")
    assert code == 2 and "not a duration" in err and len(err.strip().splitlines()) == 1
    code, _, err = in_process(capsys, "expire", str(ref), "--retain-last", "0")
    assert code == 2 and "--retain-last: must be an integer of at least 1" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("what", ["data file", "manifest"])
def test_a_needed_file_missing_after_the_deletions_fails_the_run(spark, config: Config, cdc_table: CdcFactory, what: str) -> None:
    """The deletions' verification sees a file the current snapshot reads go missing during
    the run (deleted once EXPIRE's own deletions are done, before they are verified) and
    names it, rather than failing on the unreadable snapshot or calling the run committed."""
    ref, _, _ = cdc_table(rows=300, commits=3)
    remove = DeleteLiveFileAt(config, ref, "files deleted", manifest=what == "manifest")

    result = run_job(config, ref, "expire", AGGRESSIVE, verify=True, progress=remove)

    assert remove.deleted is not None, "EXPIRE reports the stage before verifying its deletions"
    assert result.status == FAILED and result.content_verified is False, result.error
    error = result.error or ""
    assert error.startswith("content changed") and "1 referenced files missing" in error, error
    assert remove.deleted.rsplit("/", 1)[-1] in error
    assert result.counters["snapshots_expired"] == 2  # the expiry itself was done


def test_expire_cleans_the_specs_and_schemas_only_expired_snapshots_used(spark, config: Config, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Spark-written table that gained a partition field and a column, whose old-spec files
    are all gone by the current snapshot: with clean_expired_metadata the old spec and schema
    go with the snapshots that used them, the rows stay; without it, they stay."""
    ref = fresh_ref(config, "expire_clean")
    create(spark, ref, "id BIGINT, region INT, v STRING")
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, cast(id % 3 as int), 'a' FROM range(0, 100)")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD region")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD COLUMN w STRING")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE true")  # every old-spec file removed
    for start in (100, 200):
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, cast(id % 3 as int), 'b', 'w' FROM range({start}, {start + 100})")
    before = load_table(config, ref).metadata
    assert (len(before.partition_specs), len(before.schemas)) == (2, 2)
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    code, out, _ = in_process(capsys, "expire", str(ref), "--older-than", "0s", "--retain-last", "2", "--json")
    assert code == 0 and "specs_removed" not in json.loads(out), out
    assert (len(load_table(config, ref).metadata.partition_specs), len(load_table(config, ref).metadata.schemas)) == (2, 2)

    code, out, _ = in_process(capsys, "expire", str(ref), "--older-than", "0s", "--retain-last", "1", "--clean-expired-metadata", "--json")

    result = json.loads(out)
    assert code == 0 and result["status"] == COMMITTED and (result["specs_removed"], result["schemas_removed"]) == (1, 1), out
    after = load_table(config, ref).metadata
    assert [s.spec_id for s in after.partition_specs] == [after.default_spec_id]
    assert [s.schema_id for s in after.schemas] == [after.current_schema_id]
    frozen.assert_same()


def test_a_small_memory_budget_spills_and_deletes_exactly_the_dead_files(spark, config: Config, cdc_table: CdcFactory, capsys) -> None:
    """With a 4 KiB budget the retained snapshots' files, the expired ones seen and those to
    delete all move to disk (`table/key_set.py`, `jobs/file_removal/candidates.py`); the dry run names and
    the run deletes exactly the content files the oracle (pyiceberg's full manifest reads, not
    our path-only reader) finds dead, and no live one. The manifests are rewritten before
    and after MERGE, so the expired manifests name each dead file twice (ADDED, then
    EXISTING) and name live files too: both have to be looked up right once spilled."""
    ref, _, model = cdc_table(shape=TableShape("identity", 3, "single"), rows=1500, commits=4, update_ratio=0.3, delete_ratio=0.05)
    for job in ("manifests", "merge", "manifests"):
        assert run_job(config, ref, job).status == COMMITTED, job
    before = load_table(config, ref)
    current = before.current_snapshot()
    named = {e.data_file.file_path for s in before.snapshots() for m in s.manifests(before.io) for e in m.fetch_manifest_entry(before.io, discard_deleted=False)}
    live = {e.data_file.file_path for m in current.manifests(before.io) for e in m.fetch_manifest_entry(before.io)}
    dead = named - live
    assert len(dead) > 10 and all(local(p).exists() for p in named)
    current_manifests = {m.manifest_path for m in current.manifests(before.io)}
    expired_only = [m for s in before.snapshots() for m in s.manifests(before.io) if m.manifest_path not in current_manifests]
    in_expired = [e.data_file.file_path for m in {m.manifest_path: m for m in expired_only}.values() for e in m.fetch_manifest_entry(before.io)]
    assert set(in_expired) & live and len(in_expired) > len(set(in_expired)), "the expired manifests name live files, and some file twice"

    code, out, _ = in_process(capsys, "expire", str(ref), "--older-than", "0s", "--memory-budget", "4KiB", "--dry-run", "--json")
    report = json.loads(out)
    assert code == 0 and report["would_delete_unnamed"] == 0
    assert {p for p in report["would_delete"] if p in named} == dead
    assert report["content_files_unreferenced"] == len(dead)

    result = run_job(config, ref, "expire", ExpireOptions(max_snapshot_age=0, min_snapshots_to_keep=1, memory_budget=4 * 1024), verify=True)
    assert result.status == COMMITTED and result.content_verified, result.error
    assert not [p for p in dead if local(p).exists()] and all(local(p).exists() for p in live)
    assert result.counters["content_files_unreferenced"] == len(dead)
    assert missing_referenced_files(load_table(config, ref)) == []
    assert spark_rows(spark, ref) == model_rows(model)
