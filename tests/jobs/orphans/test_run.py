"""ORPHANS on real tables: old unreferenced files go, everything live or fresh stays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.jobs.orphans.plan import OrphanSafetyError, plan_orphans
from maintenance.progress import Progress, no_progress
from maintenance.run.outcome import COMMITTED, FAILED, NOOP, PLANNED, JobResult
from maintenance.run.runner import run_job
from maintenance.table.key_set import KeySet
from maintenance.table.listing import ListedFile, list_location
from maintenance.table.paths import normalise
from maintenance.table.references import ReferencedFiles
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory, fresh_ref
from tests.support.cli import in_process
from tests.support.file_checks import age, local, missing_referenced_files, plant
from tests.support.helpers import DeleteLiveFileAt, model_rows, spark_rows
from tests.support.progress import RecordedProgress

DAY_S = 86400


def run_orphans(config: Config, ref: TableRef, older_than_s: float = 3 * DAY_S, dry_run: bool = False, progress: Progress = no_progress) -> JobResult:
    return run_job(config, ref, "orphans", {"older_than": older_than_s, "force": True}, verify=not dry_run, dry_run=dry_run, progress=progress)


def location_of(config: Config, ref: TableRef) -> Path:
    return local(load_table(config, ref).location())


def all_files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.is_file()}


def age_everything(folder: Path, days: float) -> None:
    """The table's own files look as old as the planted ones: only references protect them."""
    for path in all_files(folder):
        age(path, days)


def test_old_orphans_go_fresh_ones_and_live_files_stay(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, model = cdc_table(shape=TableShape("identity", 2, "single"), rows=1200, commits=3)
    root = location_of(config, ref)
    age_everything(root, 10)
    live = {p for p in all_files(root)}
    old = [
        plant(root / "data" / "region=0" / "00000-dead-from-a-failed-job.parquet", 5),
        plant(root / "data" / "stray.parquet", 4),
        plant(root / "stray-folder" / "nested" / "leftover.bin", 30),
        plant(root / "metadata" / "snap-1-1-deadbeef.avro", 7),
    ]
    fresh = [
        plant(root / "data" / "region=1" / "00001-being-written-now.parquet", 0),  # a write in progress
        plant(root / "stray-folder" / "today.bin", 1),
    ]
    hidden = plant(root / "data" / "_SUCCESS", 20)

    progress = RecordedProgress()
    result = run_orphans(config, ref, progress=progress)

    assert result.status == COMMITTED and result.content_verified, result.error
    assert result.counters["files_deleted"] == result.counters["orphan_files_found"] == len(old)
    progress.assert_every_stage_counted("planning", "references read", "listed", "files deleted")
    assert dict(progress.stages)["listed"] == {"files_listed": result.counters["files_listed"], "orphan_files_found": len(old)}
    assert not [p for p in old if p.exists()]
    assert all(p.exists() for p in fresh) and hidden.exists()
    assert all(p.exists() for p in live), "no live file is ever deleted"
    assert missing_referenced_files(load_table(config, ref)) == []
    assert spark_rows(spark, ref) == model_rows(model)
    assert run_orphans(config, ref).status == NOOP


def test_a_needed_file_missing_after_the_deletions_fails_the_run(spark, config: Config, cdc_table: CdcFactory) -> None:
    """The deletions' verification sees a file the current snapshot reads go missing during
    the run (deleted once the orphans are gone, before that is verified) and names it."""
    ref, _, _ = cdc_table(rows=300, commits=2)
    orphan = plant(location_of(config, ref) / "data" / "stray.parquet", 5)
    remove = DeleteLiveFileAt(config, ref, "files deleted")

    result = run_job(config, ref, "orphans", {"older_than": 3 * DAY_S, "force": True}, verify=True, progress=remove)

    assert remove.deleted is not None, "ORPHANS reports the stage before verifying its deletions"
    assert result.status == FAILED and result.content_verified is False, result.error
    error = result.error or ""
    assert error.startswith("content changed") and "1 referenced files missing" in error, error
    assert remove.deleted.rsplit("/", 1)[-1] in error
    assert not orphan.exists() and result.counters["files_deleted"] == 1


def test_metadata_spelled_file_colon_slash_while_listing_gives_file_triple_slash(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, model = cdc_table(rows=800, commits=3)
    table = load_table(config, ref)
    data_paths = [e.data_file.file_path for m in table.current_snapshot().manifests(table.io) for e in m.fetch_manifest_entry(table.io)]
    listed = [f.location for f in list_location(table.io, table.location())]
    assert all(p.startswith("file:/") and not p.startswith("file://") for p in data_paths), data_paths[:1]
    assert listed and all(p.startswith("file:///") for p in listed)
    root = location_of(config, ref)
    age_everything(root, 10)
    before = all_files(root)

    result = run_orphans(config, ref)

    assert result.status == NOOP and result.content_verified is None, result.error  # a noop scans nothing
    assert result.counters["files_referenced"] > 0 and result.counters["orphan_files_found"] == 0
    assert all_files(root) == before
    assert spark_rows(spark, ref) == model_rows(model)


def test_expiry_then_orphans_keep_content_and_every_retained_snapshot(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, model = cdc_table(shape=TableShape("bucket", 3, "composite"), rows=2000, commits=5, update_ratio=0.25, delete_ratio=0.05)
    assert run_job(config, ref, "merge").status == COMMITTED
    from maintenance.workload.cdc import CdcOptions, run_cdc_workload

    _, model = run_cdc_workload(spark, config, ref, CdcOptions(shape=TableShape("bucket", 3, "composite"), rows=2000, commits=3, seed=11))
    table = load_table(config, ref)
    keep = table.snapshots()[-3:]
    rows_at = {s.snapshot_id: spark.read.option("snapshot-id", s.snapshot_id).table(ref.spark_name.replace("`", "")).count() for s in keep}
    root = location_of(config, ref)
    planted = plant(root / "data" / "orphan-from-crash.parquet", 9)

    expired = run_job(config, ref, "expire", {"max_snapshot_age": 0, "min_snapshots_to_keep": 3}, verify=True)
    age_everything(root, 10)
    cleaned = run_orphans(config, ref)

    assert expired.status == COMMITTED and expired.content_verified, expired.error
    assert cleaned.status == COMMITTED and cleaned.content_verified, cleaned.error
    assert not planted.exists()
    after = load_table(config, ref)
    assert [s.snapshot_id for s in after.snapshots()] == [s.snapshot_id for s in keep]
    for snapshot_id, rows in rows_at.items():
        assert spark.read.option("snapshot-id", snapshot_id).table(ref.spark_name.replace("`", "")).count() == rows
    assert missing_referenced_files(after) == []
    assert spark_rows(spark, ref) == model_rows(model)


def test_nothing_outside_the_table_location_is_touched(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref = fresh_ref(config, prefix="outside")
    name = ref.spark_name
    spark.sql(f"CREATE TABLE {name} (id bigint, v string) USING iceberg TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='copy-on-write')")
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a'), (2, 'b')")
    root = location_of(config, ref)
    # A sibling whose name extends the table's (a prefix match would take it), and a file the
    # table references from outside its location.
    sibling = plant(root.parent / f"{root.name}-backup" / "data" / "old.parquet", 30)
    outside = root.parent / f"{root.name}-imported" / "part.parquet"
    outside.parent.mkdir(parents=True)
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": pa.array([3], pa.int64()), "v": ["c"]}), outside)
    load_table(config, ref).add_files([str(outside)])
    spark.sql(f"REFRESH TABLE {name}")
    spark.sql(f"DELETE FROM {name} WHERE id = 3")  # copy-on-write: the imported file leaves the table
    age(outside, 30)
    age_everything(root, 10)

    expired = run_job(config, ref, "expire", {"max_snapshot_age": 0}, verify=True)
    cleaned = run_orphans(config, ref)

    assert expired.status == COMMITTED and expired.content_verified, expired.error
    assert expired.counters["files_outside_location_kept"] == 1
    assert cleaned.status == NOOP or (cleaned.status == COMMITTED and cleaned.content_verified), cleaned.error
    assert outside.exists() and sibling.exists()
    assert sorted(r.id for r in spark.sql(f"SELECT id FROM {name}").collect()) == [1, 2]


def test_another_table_inside_the_location_stops_the_job(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(rows=300, commits=1)
    root = location_of(config, ref)
    inner = fresh_ref(config, prefix="inner")
    spark.sql(f"CREATE TABLE {inner.spark_name} (id bigint) USING iceberg LOCATION 'file://{root}/nested-table'")
    spark.sql(f"INSERT INTO {inner.spark_name} VALUES (1)")
    age_everything(root, 10)
    before = all_files(root)

    result = run_orphans(config, ref)

    assert result.status == FAILED and "another table" in (result.error or "")
    assert all_files(root) == before
    assert spark.sql(f"SELECT count(*) FROM {inner.spark_name}").first()[0] == 1


def test_dry_run_lists_candidates_and_deletes_nothing(capsys, spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(rows=300, commits=1)
    root = location_of(config, ref)
    planted = plant(root / "data" / "forgotten.parquet", 5)

    code, out, _ = in_process(capsys, "orphans", str(ref), "--dry-run", "--json")

    report = json.loads(out)
    assert code == 0 and report["status"] == PLANNED and "files_deleted" not in report and report["run_id"] is None
    assert [local(p) for p in report["would_delete"]] == [planted] and planted.exists()


def test_margin_below_an_hour_needs_force(capsys, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(rows=300, commits=1)
    planted = plant(location_of(config, ref) / "data" / "just-written.parquet", 0)

    code, _, err = in_process(capsys, "orphans", str(ref), "--older-than", "10m")
    assert code == 2 and "--force" in err and len(err.strip().splitlines()) == 1
    assert planted.exists()

    code, out, _ = in_process(capsys, "orphans", str(ref), "--older-than", "0s", "--force", "--json")
    assert code == 0 and json.loads(out)["files_deleted"] == 1 and not planted.exists()


@pytest.mark.parametrize(
    "referenced, listed, orphan",
    [
        ("s3://bucket/t/data/a.parquet", "s3a://bucket/t/data/a.parquet", False),  # one store, two schemes
        ("s3n://Bucket/t/data//a.parquet", "s3://bucket/t/data/a.parquet", False),
        ("file:/w/t/data/a%20b.parquet", "file:///w/t/data/a b.parquet", False),
        ("/w/t/data/a.parquet", "file:///w/t/data/b.parquet", True),
    ],
)
@pytest.mark.parametrize("budget", [1 << 20, 0], ids=["held", "spilled"])
def test_spellings_of_one_file_are_one_file(referenced: str, listed: str, orphan: bool, budget: int) -> None:
    refs = ReferencedFiles(keys=_key_set(budget, normalise(referenced)))
    plan = plan_orphans([ListedFile(listed, listed.rsplit("/t/", 1)[1], 0, 1)], refs, older_than_ms=1)
    assert bool(plan.candidates) == orphan


@pytest.mark.parametrize(
    "referenced, listed",
    [
        ("s3://bucket-a/t/data/a.parquet", "s3://bucket-b/t/data/a.parquet"),
        ("hdfs://nn1:8020/w/t/data/a.parquet", "hdfs://nn2:8020/w/t/data/a.parquet"),
        ("hdfs://nn1/w/t/data/a.parquet", "file:///w/t/data/a.parquet"),
    ],
)
@pytest.mark.parametrize("budget", [1 << 20, 0], ids=["held", "spilled"])
def test_authority_mismatch_stops_instead_of_deleting(referenced: str, listed: str, budget: int) -> None:
    from maintenance.table.paths import normalise

    with pytest.raises(OrphanSafetyError, match="mismatch"):
        plan_orphans([ListedFile(listed, "data/a.parquet", 0, 1)], ReferencedFiles(keys=_key_set(budget, normalise(referenced))), older_than_ms=1)


def _key_set(budget: int, *keys: str) -> KeySet:
    """Referenced keys held in memory, or (budget 0) in the spilled database from the first key."""
    found = KeySet(budget)
    found.update(keys)
    assert found.spilled == (budget == 0)
    return found


def test_staging_leftovers_and_checksums_of_orphans_are_candidates() -> None:
    """A killed CONVERT or REWRITE leaves Spark's `_temporary` attempts and `.crc` files in its
    output folder: they are icemaint's own, so they go like any orphan (with the margin).
    A checksum goes with its file; other writers' hidden files stay."""
    run = "0c5e8d0e-7e0e-4a59-9d7e-5b1f5e3b2a11"
    root = "file:///w/t"
    old, new = 1_000, 10_000

    def listed(relative: str, mtime: int = old) -> ListedFile:
        return ListedFile(f"{root}/{relative}", relative, mtime, 10)

    referenced = ReferencedFiles()
    referenced.keys.add(normalise(f"{root}/data/live.parquet"))
    files = [
        listed(f"data/icemaint-convert-{run}/_temporary/0/_temporary/attempt_1/grp=3_0/part-0.parquet"),
        listed(f"data/icemaint-convert-{run}/grp=3_0/.part-0.parquet.crc"),
        listed(f"data/icemaint-rewrite-{run}/part=0/part-1.parquet", mtime=new),  # young: kept by the margin
        listed("data/live.parquet"),
        listed("data/.live.parquet.crc"),  # its file is live: stays
        listed("data/.gone.parquet.crc"),  # its file is gone: goes
        listed("data/_temporary/0/other-writer.parquet"),  # another writer's: hidden
        listed("data/_temporary/0/.other-writer.parquet.crc"),
        listed("data/_SUCCESS"),
    ]
    plan = plan_orphans(files, referenced, older_than_ms=5_000)
    assert sorted(plan.candidates) == sorted(f"{root}/{relative}" for relative in [
        f"data/icemaint-convert-{run}/_temporary/0/_temporary/attempt_1/grp=3_0/part-0.parquet",
        f"data/icemaint-convert-{run}/grp=3_0/.part-0.parquet.crc",
        "data/.gone.parquet.crc",
    ])
    assert plan.too_new == 1 and plan.hidden == 4 and plan.referenced_listed == 1
