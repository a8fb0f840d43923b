"""Format 3 (deletion vectors) in every job, judged by oracles outside icemaint: a frozen
copy of the rows (EXCEPT ALL both ways), the row lineage columns frozen the same way, and
Iceberg's own planner (`planFiles()`) for how many DVs each data file gets."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.run.outcome import COMMITTED, FAILED
from maintenance.run.runner import run_job
from maintenance.spark.jvm import load_java_table
from maintenance.table.files import TableFile, child_snapshot_files, snapshot_files
from maintenance.table.health import table_health
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory, fresh_ref
from tests.support.file_checks import local
from tests.support.iceberg_oracle import FrozenRows, planned_tasks
from tests.support.tables import create

LINEAGE = ("_row_id", "_last_updated_sequence_number")


def lineage_copy(spark: Any, ref: TableRef, folder: Path) -> FrozenRows:
    """Every row's lineage columns beside its content, copied before a job: a rewrite must
    keep both exactly (the spec's "Row Lineage": a row that is only moved keeps its id and
    its last-updated sequence number)."""
    return FrozenRows(spark, ref, folder, metadata_columns=LINEAGE)


def assert_every_row_has_lineage(spark: Any, ref: TableRef) -> None:
    """Not so for rows written before an upgrade to v3."""
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    assert spark.sql(f"SELECT {', '.join(LINEAGE)} FROM {ref.spark_name}").where("_row_id IS NULL OR _last_updated_sequence_number IS NULL").count() == 0


def dvs_per_data_file(spark: Any, config: Config, ref: TableRef) -> dict[str, int]:
    """Iceberg's own planner: data file -> how many DVs apply to it (spec: at most one)."""
    return {str(task.file().location()): sum(1 for d in task.deletes() if str(d.format().name()) == "PUFFIN") for task in planned_tasks(load_java_table(spark, ref))}


def delete_kinds(config: Config, ref: TableRef) -> tuple[int, int, int]:
    """(equality delete files, v2 position delete files, DVs) live in the table."""
    health = table_health(str(ref), load_table(config, ref), small_file_bytes=1)
    return health.equality_delete_files, health.position_delete_files, health.deletion_vectors


@pytest.mark.parametrize("shape", [TableShape("identity", 2, "single"), TableShape("none", 1, "composite")], ids=lambda s: s.encode())
def test_convert_then_merge_on_a_generated_v3_cdc_table(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path, shape: TableShape) -> None:
    ref, _, _ = cdc_table(shape=shape, rows=3000, commits=8, update_ratio=0.3, delete_ratio=0.05, format_version=3)
    equality, position, dvs = delete_kinds(config, ref)
    assert equality > 0 and dvs > 0 and position == 0  # the writer's in-batch supersedes are DVs
    frozen, lineage = FrozenRows(spark, ref, tmp_path / "rows"), lineage_copy(spark, ref, tmp_path / "lineage")

    result = run_job(config, ref, "convert", {}, verify=True)

    assert result.status == COMMITTED and result.content_verified, result.error
    frozen.assert_same()
    lineage.assert_same()
    assert_every_row_has_lineage(spark, ref)
    assert delete_kinds(config, ref)[:2] == (0, 0)
    assert max(dvs_per_data_file(spark, config, ref).values()) == 1
    assert result.counters["deletion_vectors_removed"] > 0  # the writer's DVs were merged, not duplicated
    assert result.counters["deletion_vector_records_merged"] > 0

    result = run_job(config, ref, "merge", {}, verify=True)

    assert result.status == COMMITTED and result.content_verified, result.error
    frozen.assert_same()
    lineage.assert_same()
    assert_every_row_has_lineage(spark, ref)
    assert delete_kinds(config, ref) == (0, 0, 0)


def test_spark_written_v3_deletes_updates_and_merges_are_merged_away_with_lineage_kept(spark, config: Config, tmp_path: Path) -> None:
    ref = fresh_ref(config, "v3spark")
    create(spark, ref, "id bigint, k string, v string")  # merge-on-read for DELETE, UPDATE and MERGE
    spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('format-version'='3')")
    for batch in range(4):
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, cast(id % 7 as string), repeat('x', 10) FROM range({batch * 500}, {(batch + 1) * 500})")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 11 = 0")
    spark.sql(f"UPDATE {ref.spark_name} SET v = 'updated' WHERE id % 13 = 0")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 17 = 0")  # a second DV for some files: merged with the first by Spark
    spark.createDataFrame([(i, "m", "merged") for i in range(0, 2500, 9)], "id bigint, k string, v string").createOrReplaceTempView("changes")
    spark.sql(f"MERGE INTO {ref.spark_name} t USING changes s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    assert delete_kinds(config, ref)[2] > 0
    frozen, lineage = FrozenRows(spark, ref, tmp_path / "rows"), lineage_copy(spark, ref, tmp_path / "lineage")

    convert = run_job(config, ref, "convert", {}, verify=True)
    merge = run_job(config, ref, "merge", {}, verify=True)

    assert convert.status == "noop"  # nothing to convert: Spark writes no equality deletes
    assert merge.status == COMMITTED and merge.content_verified, merge.error
    frozen.assert_same()
    lineage.assert_same()
    assert_every_row_has_lineage(spark, ref)
    assert delete_kinds(config, ref) == (0, 0, 0)


def test_convert_merges_with_dvs_spark_wrote_on_the_same_files(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path) -> None:
    """Spark's DELETE adds DVs to files that equality deletes also reach: CONVERT's new DV
    for such a file holds both, and Spark's DV leaves the table."""
    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=2000, commits=5, update_ratio=0.3, delete_ratio=0.05, format_version=3)
    spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read')")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 5 = 0")
    frozen, lineage = FrozenRows(spark, ref, tmp_path / "rows"), lineage_copy(spark, ref, tmp_path / "lineage")

    result = run_job(config, ref, "convert", {}, verify=True)

    assert result.status == COMMITTED and result.content_verified, result.error
    frozen.assert_same()
    lineage.assert_same()
    assert_every_row_has_lineage(spark, ref)
    assert max(dvs_per_data_file(spark, config, ref).values()) == 1
    assert delete_kinds(config, ref)[0] == 0


def test_a_v2_table_upgraded_to_v3_ends_with_dvs_only_after_convert_and_rewrite(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path) -> None:
    """v2 position delete files and DVs side by side: a DV replaces the v2 files for its data
    file (holding their positions); REWRITE turns what is left into DVs."""
    shape = TableShape("identity", 2, "single")
    ref, _, _ = cdc_table(shape=shape, rows=2000, commits=4, update_ratio=0.3, delete_ratio=0.05)
    spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('format-version'='3')")
    cdc_table(shape=shape, ref=ref, rows=1000, commits=3, update_ratio=0.3, delete_ratio=0.05, seed=7)
    equality, position, dvs = delete_kinds(config, ref)
    assert equality > 0 and position > 0 and dvs > 0
    frozen, lineage = FrozenRows(spark, ref, tmp_path / "rows"), lineage_copy(spark, ref, tmp_path / "lineage")

    convert = run_job(config, ref, "convert", {}, verify=True)
    assert convert.status == COMMITTED and convert.content_verified, convert.error
    frozen.assert_same()
    rewrite = run_job(config, ref, "rewrite", {}, verify=True)

    assert rewrite.status == COMMITTED and rewrite.content_verified, rewrite.error
    frozen.assert_same()
    lineage.assert_same()  # the rows written before the upgrade have no lineage: not every row has one
    equality, position, dvs = delete_kinds(config, ref)
    assert (equality, position) == (0, 0) and dvs > 0
    assert max(dvs_per_data_file(spark, config, ref).values()) == 1


def test_rewrite_drops_a_dv_whose_data_file_is_gone(spark, config: Config, tmp_path: Path) -> None:
    """A DV whose data file is gone (left by some other writer): REWRITE drops it and
    nothing else changes."""
    ref = fresh_ref(config, "dangling")
    create(spark, ref, "id bigint, part int")  # unpartitioned; each insert writes two files
    spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('format-version'='3')")
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, 0 FROM range(0, 100)")
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, 1 FROM range(100, 200)")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 10 = 0")
    gone = spark.sql(f"SELECT file_path FROM {ref.spark_name}.data_files WHERE readable_metrics.part.lower_bound = 1").collect()[0].file_path
    table = load_java_table(spark, ref)
    gone_dv = next(d for task in planned_tasks(table) for d in task.deletes() if str(task.file().location()) == gone)
    delete = table.newDelete()
    # A CharSequence: with a Python str Py4J picks SnapshotProducer's deleteFile(String), which removes the file from storage.
    delete.deleteFile(spark._jvm.java.lang.StringBuilder(gone))
    delete.commit()  # Iceberg drops the file's DV with it ...
    table.refresh()
    table.newRowDelta().validateFromSnapshot(table.currentSnapshot().snapshotId()).addDeletes(gone_dv).commit()  # ... so another writer's leftover is made by hand
    assert delete_kinds(config, ref)[2] == 4
    frozen = FrozenRows(spark, ref, tmp_path / "rows")

    result = run_job(config, ref, "rewrite", {}, verify=True)

    assert result.status == COMMITTED and result.content_verified, result.error
    assert result.counters["dangling_deletion_vectors_planned"] == 1
    frozen.assert_same()
    assert delete_kinds(config, ref) == (0, 0, 3)


def test_a_puffin_file_stays_while_any_retained_snapshot_references_one_of_its_dvs(spark, config: Config, tmp_path: Path) -> None:
    """Two DVs share a Puffin file; a later DELETE replaces one of them (a new Puffin file).
    EXPIRE and ORPHANS keep the first file (its other blob is live); once MERGE has removed
    every DV, EXPIRE deletes both."""
    ref = fresh_ref(config, "puffin")
    create(spark, ref, "id bigint")
    spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('format-version'='3')")
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT id FROM range(0, 100)")
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT id FROM range(100, 200)")  # two files per insert: four data files
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 10 = 0")  # one Puffin file, a DV per data file
    first = {r.file_path for r in spark.sql(f"SELECT file_path FROM {ref.spark_name}.delete_files").collect()}
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id = 1")  # one data file's DV replaced, in a new Puffin file
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    live = {r.file_path for r in spark.sql(f"SELECT file_path FROM {ref.spark_name}.delete_files").collect()}
    assert len(first) == 1 and first < live and len(live) == 2
    frozen = FrozenRows(spark, ref, tmp_path / "rows")

    expired = run_job(config, ref, "expire", {"max_snapshot_age": 0, "min_snapshots_to_keep": 1}, verify=True)
    orphans = run_job(config, ref, "orphans", {"older_than": 0, "force": True}, verify=True)

    assert expired.status == COMMITTED and orphans.status in (COMMITTED, "noop"), (expired.error, orphans.error)
    assert all(Path(local(p)).exists() for p in live)
    frozen.assert_same()

    merged = run_job(config, ref, "merge", {}, verify=True)
    expired = run_job(config, ref, "expire", {"max_snapshot_age": 0, "min_snapshots_to_keep": 1}, verify=True)

    assert merged.status == COMMITTED and expired.status == COMMITTED, (merged.error, expired.error)
    assert not any(Path(local(p)).exists() for p in live)
    frozen.assert_same()


def live_data_files(spark: Any, ref: TableRef) -> set[str]:
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    return {r.file_path for r in spark.sql(f"SELECT file_path FROM {ref.spark_name}.data_files").collect()}


@pytest.mark.parametrize("layout", [{"strategy": "binpack"}, {"strategy": "zorder", "zorder_columns": ("k", "id")}], ids=["binpack", "zorder"])
def test_compact_applies_spark_written_dvs_and_keeps_lineage_and_sequence_numbers(spark, config: Config, tmp_path: Path, layout: dict[str, Any]) -> None:
    """Small files with DVs (and UPDATE's rewritten rows, whose `_row_id` is stored in the
    file): COMPACT applies the DVs, drops them with their data files, and, as Iceberg's
    rewrite does, writes each row's lineage into the new file and keeps the planning
    snapshot's data sequence number. Judged by Spark's metadata tables and Iceberg's planner."""
    ref = fresh_ref(config, "v3compact")
    create(spark, ref, "id bigint, k string, v string")
    spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('format-version'='3')")
    for batch in range(2):  # five small files per commit
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT /*+ REPARTITION(5) */ id, cast(id % 7 as string), 'x' FROM range({batch * 750}, {(batch + 1) * 750})")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 5 = 0")
    spark.sql(f"UPDATE {ref.spark_name} SET v = 'updated' WHERE id % 3 = 0")  # replaces DVs; moved rows keep their _row_id
    before = live_data_files(spark, ref)
    planning_seq = load_table(config, ref).metadata.last_sequence_number
    assert len(before) >= 10 and delete_kinds(config, ref)[2] >= 10
    frozen, lineage = FrozenRows(spark, ref, tmp_path / "rows"), lineage_copy(spark, ref, tmp_path / "lineage")

    result = run_job(config, ref, "compact", layout, verify=True)

    assert result.status == COMMITTED and result.content_verified, result.error
    frozen.assert_same()
    lineage.assert_same()
    assert_every_row_has_lineage(spark, ref)
    after = live_data_files(spark, ref)
    assert not before & after and len(after) < len(before)  # every small file rewritten, into fewer
    dv_targets = {r.referenced_data_file for r in spark.sql(f"SELECT referenced_data_file FROM {ref.spark_name}.delete_files").collect()}
    assert dv_targets == set() and set(dvs_per_data_file(spark, config, ref).values()) == {0}
    entries = spark.sql(f"SELECT sequence_number, file_sequence_number FROM {ref.spark_name}.entries WHERE status < 2 AND data_file.content = 0").collect()
    assert {e.sequence_number for e in entries} == {planning_seq} and min(e.file_sequence_number for e in entries) > planning_seq


def test_manifests_on_a_v3_table_keeps_every_rows_lineage(spark, config: Config, tmp_path: Path) -> None:
    """MANIFESTS on a Spark-written v3 table (inserts, merge-on-read DELETE and UPDATE: DVs
    and moved rows) goes through Iceberg's core `RewriteManifests`, which writes each moved
    entry with its first row id: `_row_id` and `_last_updated_sequence_number` are the same
    for every row, the content too, and the data manifests are fewer. The end shows why not
    Iceberg 1.10's Spark action: run on the result, it gives every row a new `_row_id` (once
    it stops doing so, this test fails and the action can be used on v3 again)."""
    ref = fresh_ref(config, "v3manifests")
    create(spark, ref, "id bigint, v string")
    spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('format-version'='3')")
    for batch in range(6):
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, 'v' FROM range({batch * 100}, {(batch + 1) * 100})")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 10 = 0")
    spark.sql(f"UPDATE {ref.spark_name} SET v = 'u' WHERE id % 7 = 0")
    frozen, lineage = FrozenRows(spark, ref, tmp_path / "rows"), lineage_copy(spark, ref, tmp_path / "lineage")
    data_manifests = f"SELECT count(*) AS n FROM {ref.spark_name}.manifests WHERE content = 0"
    before = spark.sql(data_manifests).first().n

    result = run_job(config, ref, "manifests", {}, verify=True)

    assert result.status == COMMITTED and result.content_verified, result.error
    frozen.assert_same()
    lineage.assert_same()
    assert_every_row_has_lineage(spark, ref)
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    assert spark.sql(data_manifests).first().n < before == result.counters["manifests_rewritten"]

    shown = fresh_ref(config, "v3action")  # the same history, rewritten by the Spark action
    create(spark, shown, "id bigint")
    spark.sql(f"ALTER TABLE {shown.spark_name} SET TBLPROPERTIES ('format-version'='3')")
    for batch in range(3):
        spark.sql(f"INSERT INTO {shown.spark_name} SELECT id FROM range({batch * 100}, {(batch + 1) * 100})")
    spark.sql(f"DELETE FROM {shown.spark_name} WHERE id % 10 = 0")
    renumbered = lineage_copy(spark, shown, tmp_path / "renumbered")
    actions = spark._jvm.org.apache.iceberg.spark.actions.SparkActions.get(spark._jsparkSession)
    assert len(list(actions.rewriteManifests(load_java_table(spark, shown)).execute().addedManifests())) > 0
    missing, extra = renumbered.differences()
    assert missing == extra == 300 - 30, "Iceberg's rewriteManifests action now keeps row ids on v3: it can serve format 3 again"


def test_a_data_files_first_row_id_reads_as_iceberg_plans_it_in_its_first_manifest_and_after_a_rewrite_of_it(spark, config: Config) -> None:
    """A data file's first row id is inherited from its manifest while its entry is the ADDED
    one (null in the file) and written out once a commit rewrites that manifest (EXISTING):
    both must read the same, as Iceberg's planner gives it, or the same snapshot would read
    differently from a full read and from its parent plus the diff (EXPIRE's verification
    compared the two and failed)."""
    ref = fresh_ref(config, "v3rowids")
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {ref.spark_namespace}")
    spark.sql(f"CREATE TABLE {ref.spark_name} (id bigint, part int) USING iceberg PARTITIONED BY (part) TBLPROPERTIES ('format-version'='3')")
    for batch in range(3):
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, cast(id % 3 as int) FROM range({batch * 90}, {(batch + 1) * 90})")
    before = load_table(config, ref)
    parent = snapshot_files(before, cached=False)
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE part = 1")  # whole files: their manifests are rewritten, the rest EXISTING
    table = load_table(config, ref)
    child_id = table.metadata.current_snapshot_id
    iceberg = {str(task.file().location()): int(task.file().firstRowId()) for task in planned_tasks(load_java_table(spark, ref))}

    full = snapshot_files(table, child_id, cached=False)
    derived = child_snapshot_files(table, parent, child_id, {f.key for f in parent.files if f.partition_path == "part=1"})

    assert len(iceberg) == 6 and {f.path: f.first_row_id for f in full.data} == iceberg
    assert derived is not None and {f.path: f.first_row_id for f in derived.data} == iceberg
    assert _entries(derived.files) == _entries(full.files)


def _entries(files: Sequence[TableFile]) -> list[tuple[object, ...]]:
    return sorted((f.key, int(f.content), f.seq, f.file_seq, f.spec_id, f.partition, f.records, f.size, f.first_row_id) for f in files)


def _a_second_dv_for_one_file(spark: Any, config: Config, tmp_path: Path) -> tuple[TableRef, FrozenRows, FrozenRows, dict[int, int]]:
    """A v3 table whose data files each have a DV (Spark's DELETE), then, for one of them, a
    second DV deleting three rows the first leaves (another writer's: apache/iceberg#15006).
    Returns the table, its rows and lineage before the second DV, and that DV's ids -> positions."""
    from maintenance.spark.deletion_vectors import DeletionVectorWriter

    ref = fresh_ref(config, "dupdv")
    create(spark, ref, "id bigint")
    spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('format-version'='3')")
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT id FROM range(0, 200)")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 10 = 0")  # a DV for each data file
    frozen, lineage = FrozenRows(spark, ref, tmp_path / "rows"), lineage_copy(spark, ref, tmp_path / "lineage")
    target = sorted(live_data_files(spark, ref))[0]
    rows = spark.sql(f"SELECT id, _pos FROM {ref.spark_name} WHERE _file = '{target}' ORDER BY id").collect()
    second = {r.id: r._pos for r in rows[1:4]}  # three rows the first DV leaves

    table = load_java_table(spark, ref)
    java_file = next(task.file() for task in planned_tasks(table) if str(task.file().location()) == target)
    writer = DeletionVectorWriter(spark, table)
    writer.add(java_file, sorted(second.values()))
    (dv,) = writer.close()
    # Iceberg checks for DVs added since the snapshot a commit validates from, so a writer
    # that started before the first DV was committed passes.
    table.newRowDelta().validateFromSnapshot(table.currentSnapshot().snapshotId()).addDeletes(dv).commit()
    return ref, frozen, lineage, second


def test_rewrite_merges_two_dvs_of_one_data_file_into_one(spark, config: Config, tmp_path: Path) -> None:
    """Two live DVs for one data file, the second deleting rows the first does not (Iceberg's
    planning then refuses the file): health counts the extra DV and its trigger fires;
    REWRITE writes one DV holding the positions of both and removes both, verified by the
    positions deleted. The rows gone are exactly those either DV deleted (the model: the
    rows before the second DV, less the ids at its positions, read through Spark's `_pos`),
    lineage kept for every other row."""
    from maintenance.policy.triggers import fired

    ref, frozen, lineage, second = _a_second_dv_for_one_file(spark, config, tmp_path)
    health = table_health(str(ref), load_table(config, ref), small_file_bytes=1)
    assert health.duplicate_deletion_vectors == 1 and health.dangling_deletion_vectors == 0
    assert fired({"duplicate_deletion_vectors": 1}, health) == ["duplicate_deletion_vectors 1 >= 1"]

    result = run_job(config, ref, "rewrite", {}, verify=True)

    assert result.status == COMMITTED and result.content_verified, result.error
    assert result.counters["duplicated_deletion_vectors_planned"] == 2 and result.counters["deletion_vectors_removed"] == 2
    assert max(dvs_per_data_file(spark, config, ref).values()) == 1
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    gone = {r.id for r in spark.read.parquet(frozen.folder).exceptAll(spark.sql(f"SELECT * FROM {ref.spark_name}")).collect()}
    assert gone == set(second) and frozen.differences() == (3, 0) and lineage.differences() == (3, 0)
    after = table_health(str(ref), load_table(config, ref), small_file_bytes=1)
    assert after.duplicate_deletion_vectors == 0 and after.deletion_vectors == health.deletion_vectors - 1


def test_a_merged_dv_that_lost_a_position_is_never_published(spark, config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The merge of two DVs, corrupted on its way (the old DVs read one position short), is
    staged, fails the positions proof (Iceberg's own loader reads the old DVs whole) and is
    never made current."""
    import maintenance.jobs.deletion_vectors.build as deletion_vectors

    ref, _, _, _ = _a_second_dv_for_one_file(spark, config, tmp_path)
    before = load_table(config, ref).metadata.current_snapshot_id
    real = deletion_vectors.read_dv
    monkeypatch.setattr(deletion_vectors, "read_dv", lambda io, dv: real(io, dv)[:-1])

    result = run_job(config, ref, "rewrite", {}, verify=True)

    assert result.status == FAILED and result.content_verified is False, (result.status, result.error)
    assert "content changed" in (result.error or "") and "nothing was published" in (result.error or "")
    assert load_table(config, ref).metadata.current_snapshot_id == before
