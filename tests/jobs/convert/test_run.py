"""CONVERT on real tables: equality deletes become position deletes, content unchanged."""

from __future__ import annotations

import json
from typing import Any

import pytest

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.run.outcome import COMMITTED, FAILED, NOOP, PLANNED, JobResult
from maintenance.run.runner import run_job
from maintenance.table.health import table_health
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory, fresh_ref
from tests.support.cli import in_process
from tests.support.helpers import model_rows, spark_rows
from tests.support.iceberg_oracle import FrozenRows
from tests.support.row_deltas import commit_row_delta


@pytest.fixture(autouse=True, params=["driver", "spark"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs on both of CONVERT's engines: the driver's (small conversions, so the
    default here) and Spark's (forced by leaving the driver nothing it may take, and
    checked: the driver's scan must not run)."""
    import maintenance.jobs.convert.run as convert_run

    if request.param == "spark":
        monkeypatch.setattr(convert_run, "local_refusal", lambda plan, schema: "the test runs the Spark engine")

        def not_called(*args: Any, **kwargs: Any) -> None:
            raise AssertionError("the driver's scan ran where the Spark engine was asked for")

        monkeypatch.setattr(convert_run, "find_positions_locally", not_called)
    return str(request.param)


def health_of(config: Config, ref: TableRef):  # type: ignore[no-untyped-def]
    return table_health(str(ref), load_table(config, ref), small_file_bytes=1)


def run_convert(config: Config, ref: TableRef, **options: Any) -> JobResult:
    return run_job(config, ref, "convert", options, verify=True)


def sequence_numbers(spark, ref: TableRef, content: int) -> list[int]:  # type: ignore[no-untyped-def]
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    rows = spark.sql(f"SELECT sequence_number FROM {ref.spark_name}.entries WHERE status < 2 AND data_file.content = {content}").collect()
    return sorted(r.sequence_number for r in rows)


@pytest.mark.parametrize(
    "shape",
    [TableShape("identity", 4, "single"), TableShape("none", 3, "single"), TableShape("bucket", 3, "composite"), TableShape("none", 3, "composite")],
    ids=lambda s: s.encode(),
)
def test_convert_keeps_content_and_removes_every_equality_delete(spark, config: Config, cdc_table: CdcFactory, shape: TableShape) -> None:
    ref, result, model = cdc_table(shape=shape, rows=3000, commits=6, update_ratio=0.2, delete_ratio=0.05)
    history_before = len(load_table(config, ref).history())

    outcome = run_convert(config, ref)

    assert outcome.status == COMMITTED, outcome.error
    assert outcome.content_verified is True
    assert outcome.counters["equality_delete_files_removed"] == result.equality_delete_files
    assert outcome.counters["snapshots_published"] == 1
    assert len(load_table(config, ref).history()) == history_before + 1  # one snapshot on main, whatever the sequence numbers
    assert health_of(config, ref).equality_delete_files == 0
    assert spark_rows(spark, ref) == model_rows(model)
    # One position delete file per partition, with the highest number of the deletes it replaced.
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    added = spark.sql(
        f"SELECT e.sequence_number, {'e.data_file.partition' if shape.partitioned else '0'} p FROM {ref.spark_name}.entries e "
        f"WHERE e.status = 1 AND e.data_file.content = 1 AND e.snapshot_id = {outcome.snapshot_id}"
    ).collect()
    assert len(added) == outcome.counters["position_delete_files_added"] == len({str(r.p) for r in added})
    assert max(r.sequence_number for r in added) == max(sequence_numbers(spark, ref, 1))
    # The writer's position delete files were folded in: one file per partition, nothing to REWRITE.
    assert outcome.counters["position_delete_files_removed"] == result.position_delete_files
    assert {p.position_delete_files for p in health_of(config, ref).partitions} == {1}
    assert run_job(config, ref, "rewrite").status == NOOP


def test_convert_is_a_noop_without_equality_deletes(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(rows=500, commits=2)
    assert run_convert(config, ref).status == COMMITTED
    again = run_convert(config, ref)
    assert again.status == NOOP and again.snapshot_id is None


def test_dry_run_changes_nothing(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, result, _ = cdc_table(rows=800, commits=3)
    before = load_table(config, ref).metadata.current_snapshot_id
    outcome = run_job(config, ref, "convert", dry_run=True)
    assert outcome.status == PLANNED and outcome.counters["equality_delete_files_planned"] == result.equality_delete_files
    assert load_table(config, ref).metadata.current_snapshot_id == before


def test_partition_scope_and_bounded_runs(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, model = cdc_table(shape=TableShape("identity", 4, "single"), rows=2400, commits=5)
    before = {p.partition: p.equality_delete_files for p in health_of(config, ref).partitions}
    assert before["region=1"] >= 2

    bounded = run_convert(config, ref, partitions=("region=1",), max_delete_files=1)

    assert bounded.status == COMMITTED and bounded.content_verified, bounded.error
    assert bounded.counters["equality_delete_files_removed"] == 1  # the oldest; the rest waits for the next run
    after = {p.partition: p.equality_delete_files for p in health_of(config, ref).partitions}
    assert after["region=1"] == before["region=1"] - 1
    scoped = run_convert(config, ref, partitions=("region=1",))
    assert scoped.status == COMMITTED and scoped.content_verified, scoped.error
    after = {p.partition: p.equality_delete_files for p in health_of(config, ref).partitions}
    assert after["region=1"] == 0
    assert {k: v for k, v in after.items() if k != "region=1"} == {k: v for k, v in before.items() if k != "region=1"}
    assert spark_rows(spark, ref) == model_rows(model)


def test_null_keys_match_null_and_missing_keys_delete_nothing(spark, config: Config) -> None:
    ref = fresh_ref(config, "nulls")
    spark.sql(f"CREATE TABLE {ref.spark_name} (k1 STRING, k2 INT, v STRING) USING iceberg TBLPROPERTIES ('format-version'='2')")
    rows = [
        {"k1": None, "k2": 1, "v": "null-1"},
        {"k1": None, "k2": None, "v": "null-null"},
        {"k1": "a", "k2": 1, "v": "a-1"},
        {"k1": "a", "k2": None, "v": "a-null"},
        {"k1": "b", "k2": 2, "v": "b-2"},
    ]
    commit_row_delta(spark, config, ref, rows=rows)
    commit_row_delta(
        spark, config, ref,
        rows=[{"k1": None, "k2": None, "v": "null-null-later"}],  # same commit: not deleted by it
        equality_deletes=[{"k1": None, "k2": None}, {"k1": "a", "k2": None}, {"k1": "zzz", "k2": 9}, {"k1": None, "k2": 7}],
        equality_columns=("k1", "k2"),
    )
    expected = sorted([("null-1",), ("a-1",), ("b-2",), ("null-null-later",)])
    assert sorted(tuple(r) for r in spark.sql(f"SELECT v FROM {ref.spark_name}").collect()) == expected

    outcome = run_convert(config, ref)

    assert outcome.status == COMMITTED and outcome.content_verified, outcome.error
    assert outcome.counters["position_delete_records_added"] == 2  # null-null and a-null; the missing keys match nothing
    assert sorted(tuple(r) for r in spark.sql(f"SELECT v FROM {ref.spark_name}").collect()) == expected
    assert health_of(config, ref).equality_delete_files == 0


def test_renamed_key_column_still_matches(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, model = cdc_table(shape=TableShape("none", 3, "single"), rows=1500, commits=4, update_ratio=0.25)
    spark.sql(f"ALTER TABLE {ref.spark_name} RENAME COLUMN id TO order_id")

    outcome = run_convert(config, ref)

    assert outcome.status == COMMITTED and outcome.content_verified, outcome.error
    assert outcome.counters["position_delete_records_added"] > 0
    assert health_of(config, ref).equality_delete_files == 0


def test_partition_spec_evolution_with_old_and_new_specs_live(spark, config: Config, cdc_table: CdcFactory) -> None:
    """Global deletes of the new (unpartitioned) spec apply to the old spec's partitioned files."""
    ref, _, _ = cdc_table(shape=TableShape("identity", 3, "single"), rows=1500, commits=3, update_ratio=0.3)
    spark.sql(f"ALTER TABLE {ref.spark_name} DROP PARTITION FIELD region")
    _, _, model = cdc_table(ref=ref, rows=1200, commits=3, update_ratio=0.3, seed=5)
    specs = {r.spec_id for r in spark.sql(f"SELECT spec_id FROM {ref.spark_name}.files").collect()}
    assert specs == {0, 1}

    outcome = run_convert(config, ref)

    assert outcome.status == COMMITTED and outcome.content_verified, outcome.error
    assert health_of(config, ref).equality_delete_files == 0
    assert spark_rows(spark, ref) == model_rows(model)
    # Position deletes were written into the old spec's partitions too.
    position_specs = {r.spec_id for r in spark.sql(f"SELECT spec_id FROM {ref.spark_name}.delete_files").collect()}
    assert 0 in position_specs


def test_tables_with_sparks_own_merge_on_read_deletes(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(shape=TableShape("identity", 3, "single"), rows=2000, commits=4)
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 7 = 0")
    spark.sql(
        f"MERGE INTO {ref.spark_name} t USING (SELECT id, region FROM {ref.spark_name} WHERE id % 11 = 0) s "
        f"ON t.id = s.id AND t.region = s.region WHEN MATCHED THEN UPDATE SET t.status = 'merged'"
    )
    modes = {r.operation for r in spark.sql(f"SELECT operation FROM {ref.spark_name}.snapshots").collect()}
    assert "overwrite" in modes or "delete" in modes

    outcome = run_convert(config, ref)

    assert outcome.status == COMMITTED and outcome.content_verified, outcome.error
    assert health_of(config, ref).equality_delete_files == 0


@pytest.mark.parametrize("when", ["positions written", "verified"])
def test_writer_commits_while_convert_runs(spark, config: Config, cdc_table: CdcFactory, when: str) -> None:
    """A streaming writer commits an equality delete and an append while CONVERT works:
    before it stages (the staged snapshot's parent is then the writer's), or after it
    verified (main moved on: the same change is applied again on the writer's snapshot)."""
    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=1600, commits=4, update_ratio=0.2)
    writer_done: dict[str, Any] = {}

    def writer_commits(stage: str, **_counts: int) -> None:
        if stage == when and not writer_done:
            _, writer_done["result"], writer_done["model"] = cdc_table(ref=ref, rows=300, commits=1, update_ratio=0.5, seed=99)

    outcome = run_job(config, ref, "convert", verify=True, progress=writer_commits)

    assert outcome.status == COMMITTED and outcome.content_verified, outcome.error
    assert writer_done["result"].equality_delete_files >= 1  # the writer's equality delete landed
    assert spark_rows(spark, ref) == model_rows(writer_done["model"])
    # CONVERT removed what it planned; the writer's new equality deletes remain for next time.
    assert health_of(config, ref).equality_delete_files == writer_done["result"].equality_delete_files
    assert run_convert(config, ref).status == COMMITTED
    assert spark_rows(spark, ref) == model_rows(writer_done["model"])


def test_removed_target_file_fails_cleanly_and_rerun_succeeds(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, model = cdc_table(shape=TableShape("identity", 2, "single"), rows=1600, commits=4, update_ratio=0.2)
    rewritten: list[bool] = []

    def compact_meanwhile(_stage: str, **_counts: int) -> None:
        if not rewritten:
            rewritten.append(True)  # another job rewrites every data file while CONVERT works
            spark.sql(f"CALL local.system.rewrite_data_files(table => '{ref.identifier}', options => map('rewrite-all', 'true'))")

    first = run_job(config, ref, "convert", progress=compact_meanwhile)

    assert first.status == FAILED
    assert "nothing was committed" in (first.error or ""), first.error
    assert spark_rows(spark, ref) == model_rows(model)
    current = load_table(config, ref).current_snapshot()
    assert current is not None and current.summary is not None and current.summary["icemaint.run-id"] is None  # CONVERT landed nothing
    second = run_convert(config, ref)
    assert second.status == COMMITTED and second.content_verified, second.error
    assert health_of(config, ref).equality_delete_files == 0
    assert spark_rows(spark, ref) == model_rows(model)


def test_cli_convert_json(spark, home, config: Config, cdc_table: CdcFactory, capsys: pytest.CaptureFixture[str]) -> None:
    ref, _, _ = cdc_table(rows=900, commits=3)
    code, out, _ = in_process(capsys, "convert", ref.identifier, "--verify", "--json")
    result = json.loads(out)
    assert code == 0
    assert {"job", "table", "status", "run_id", "snapshot_id", "duration_s", "fingerprint_before", "fingerprint_after", "content_verified"} <= set(result)
    assert result["status"] == "committed" and result["content_verified"] is True
    summary = spark.sql(f"SELECT summary FROM {ref.spark_name}.snapshots WHERE snapshot_id = {result['snapshot_id']}").collect()[0].summary
    assert summary["icemaint.job"] == "convert" and summary["icemaint.run-id"] == result["run_id"]
    assert int(summary["icemaint.lease-epoch"]) >= 1


def test_deletes_of_keys_that_exist_nowhere_are_simply_removed(spark, config: Config) -> None:
    """No key matches: the join is empty (Spark may prune the observed plan), nothing is written."""
    ref = fresh_ref(config, "nomatch")
    spark.sql(f"CREATE TABLE {ref.spark_name} (id BIGINT, v STRING) USING iceberg TBLPROPERTIES ('format-version'='2')")
    commit_row_delta(spark, config, ref, rows=[{"id": i, "v": f"v{i}"} for i in range(50)])
    commit_row_delta(spark, config, ref, equality_deletes=[{"id": 1000 + i} for i in range(20)], equality_columns=("id",))

    outcome = run_convert(config, ref)

    assert outcome.status == COMMITTED and outcome.content_verified, outcome.error
    assert outcome.counters["equality_delete_files_removed"] == 1
    assert outcome.counters["position_delete_files_added"] == 0
    assert health_of(config, ref).equality_delete_files == 0
    assert spark.sql(f"SELECT count(*) n FROM {ref.spark_name}").collect()[0].n == 50


def test_folded_position_deletes_keep_exactly_the_rows_they_deleted(spark, config: Config, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A position delete file folded into CONVERT's output takes a higher sequence number; an
    entry of it that did not apply (its data file is newer than the delete file) must not
    start applying, and the entries that did apply must keep deleting."""
    import uuid

    import pyarrow as pa

    from maintenance.spark.content_files import ContentFiles
    from maintenance.spark.jvm import load_java_table
    from maintenance.table.position_deletes import POSITION_DELETE_SCHEMA
    from maintenance.workload.writer import write_parquet
    from tests.support.iceberg_oracle import FrozenRows

    ref = fresh_ref(config, "fold")
    spark.sql(f"CREATE TABLE {ref.spark_name} (id BIGINT, v STRING) USING iceberg TBLPROPERTIES ('format-version'='2')")
    commit_row_delta(spark, config, ref, rows=[{"id": i, "v": "a"} for i in range(10)])  # data file A, seq 1
    table = load_table(config, ref)
    a_path = table.inspect.files().column("file_path")[0].as_py()
    b_path = f"{table.location().rstrip('/')}/data/late-{uuid.uuid4().hex[:8]}.parquet"
    java_table = load_java_table(spark, ref)
    files = ContentFiles(spark, java_table)
    # seq 2: a position delete naming row 0 of A (applies) and row 0 of B, a file added later (never applies)
    deletes_path = f"{table.location().rstrip('/')}/data/pos-{uuid.uuid4().hex[:8]}.parquet"
    write_parquet(table.io, deletes_path, pa.Table.from_pylist([{"file_path": a_path, "pos": 0}, {"file_path": b_path, "pos": 0}], schema=POSITION_DELETE_SCHEMA))
    java_table.newRowDelta().addDeletes(files.position_delete_file(deletes_path, 0, None)).commit()
    # seq 3: data file B
    write_parquet(table.io, b_path, pa.Table.from_pylist([{"id": 100 + i, "v": "b"} for i in range(5)], schema=pa.schema([
        pa.field("id", pa.int64(), metadata={b"PARQUET:field_id": b"1"}), pa.field("v", pa.string(), metadata={b"PARQUET:field_id": b"2"})])))
    load_java_table(spark, ref).newAppend().appendFile(files.data_file(b_path, 0, None)).commit()
    # seq 4: an equality delete of id 5 (A's row 5): CONVERT writes the table's one position file at seq 4 >= B's 3
    commit_row_delta(spark, config, ref, equality_deletes=[{"id": 5}], equality_columns=("id",))
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    assert sorted(r.id for r in spark.sql(f"SELECT id FROM {ref.spark_name}").collect()) == [1, 2, 3, 4, 6, 7, 8, 9, 100, 101, 102, 103, 104]
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    outcome = run_convert(config, ref)

    assert outcome.status == COMMITTED and outcome.content_verified, outcome.error
    frozen.assert_same()
    assert outcome.counters["position_delete_files_removed"] == 1 and outcome.counters["position_delete_records_read"] == 2
    entries = spark.read.parquet(*[r.file_path for r in spark.sql(f"SELECT file_path FROM {ref.spark_name}.delete_files").collect()])
    assert sorted((r.file_path, r.pos) for r in entries.collect()) == [(a_path, 0), (a_path, 5)]  # B's entry, which never applied, is gone
    assert sequence_numbers(spark, ref, 1) == [4]


# -- files the driver engine must read as Iceberg's reader does, or leave to Spark ---------
def _migrated(spark, config: Config, tmp_path, columns: str, source) -> TableRef:  # type: ignore[no-untyped-def]
    """A table of Parquet files some other writer made (no field ids), added with Iceberg's
    `add_files` (which gives the table a name mapping)."""
    ref = fresh_ref(config, "migrated")
    folder = str(tmp_path / "source")
    source.coalesce(1).write.parquet(folder)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {ref.spark_namespace}")
    spark.sql(f"CREATE TABLE {ref.spark_name} ({columns}) USING iceberg TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')")
    spark.sql(f"CALL {ref.catalog}.system.add_files(table => '{'.'.join(ref.namespace)}.{ref.name}', source_table => '`parquet`.`{folder}`')")
    return ref


def test_a_migrated_table_with_int96_timestamps_is_converted(spark, config: Config, tmp_path, engine: str) -> None:  # type: ignore[no-untyped-def]
    """Spark's own Parquet writes timestamps as INT96 by default: the driver reads only the
    key columns, so a non-key INT96 column does not stop it."""
    ref = _migrated(spark, config, tmp_path, "id BIGINT, k STRING, ts TIMESTAMP",
                    spark.range(0, 100).selectExpr("id", "cast(id % 10 as string) k", "timestamp_micros(id) ts"))
    commit_row_delta(spark, config, ref, equality_deletes=[{"k": "7"}], equality_columns=("k",))
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    result = run_convert(config, ref)

    assert result.status == COMMITTED and result.content_verified and result.counters["scan_engine"] == engine, result
    frozen.assert_same()


def test_a_millisecond_timestamp_key_read_two_ways_is_not_converted(spark, config: Config, tmp_path, engine: str) -> None:  # type: ignore[no-untyped-def]
    """A migrated file's TIMESTAMP_MILLIS column is read by Iceberg's vectorized Spark reader
    as microseconds (1970 values), by Iceberg's generic reader and pyarrow as what it holds
    (2020 values). The delete holds the value Spark's reader sees, so Spark's readers lose 40
    rows to it and Iceberg's generic reader none. The driver hands the file over to Spark's
    engine, which finds the 40; turning them into positions would delete them for every
    engine, so the deleted-rows proof, which reads keys as Iceberg's generic reader does,
    refuses the change: nothing is published and Spark's readers still see what they saw."""
    from datetime import datetime, timedelta, timezone

    spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MILLIS")
    try:
        ref = _migrated(spark, config, tmp_path, "id BIGINT, ts TIMESTAMP",
                        spark.range(0, 200).selectExpr("id", "timestamp_micros(1600000000000000 + (id % 5) * 1000) ts"))
    finally:
        spark.conf.unset("spark.sql.parquet.outputTimestampType")
    seen = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=1600000000003)
    commit_row_delta(spark, config, ref, equality_deletes=[{"ts": seen}], equality_columns=("ts",))
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    assert frozen.rows == 160  # the scenario is the one described: Iceberg's reader hides 40 rows

    before = load_table(config, ref).metadata.current_snapshot_id

    result = run_convert(config, ref)

    assert result.status == FAILED and result.content_verified is False, result
    assert "0 row(s) deleted only before, 40 only after" in (result.error or "") and "nothing was published" in (result.error or ""), result.error
    assert load_table(config, ref).metadata.current_snapshot_id == before
    frozen.assert_same()


def test_a_key_without_a_field_id_beside_columns_with_one_reads_as_missing(spark, config: Config, tmp_path, engine: str) -> None:  # type: ignore[no-untyped-def]
    """Iceberg's reader matches columns by field id as soon as any column of a file has one:
    the key column without one is missing (NULL to readers), whatever the name mapping says,
    so the delete of 'x' deletes nothing readers see. The driver hands over to Spark."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from maintenance.spark.content_files import ContentFiles
    from maintenance.spark.jvm import load_java_table
    from tests.support.file_checks import local

    ref = fresh_ref(config, "partialids")
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {ref.spark_namespace}")
    spark.sql(f"CREATE TABLE {ref.spark_name} (id BIGINT, k STRING) USING iceberg TBLPROPERTIES ('format-version'='2')")
    java = load_java_table(spark, ref)
    mapping = spark._jvm.org.apache.iceberg.mapping.MappingUtil.create(java.schema())
    java.updateProperties().set("schema.name-mapping.default", spark._jvm.org.apache.iceberg.mapping.NameMappingParser.toJson(mapping)).commit()
    location = f"{load_table(config, ref).location()}/data/partial-ids.parquet"
    local(location).parent.mkdir(parents=True, exist_ok=True)
    schema = pa.schema([pa.field("id", pa.int64(), metadata={"PARQUET:field_id": "1"}), pa.field("k", pa.string())])
    pq.write_table(pa.table({"id": list(range(100)), "k": ["x", "y"] * 50}, schema=schema), str(local(location)))
    java.newAppend().appendFile(ContentFiles(spark, java).data_file(location, 0, None)).commit()
    commit_row_delta(spark, config, ref, equality_deletes=[{"k": "x"}], equality_columns=("k",))
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    assert frozen.rows == 100

    result = run_job(config, ref, "convert", {}, verify=False)  # unverified: the oracle alone judges

    assert result.status == COMMITTED and result.counters["scan_engine"] == "spark", result
    frozen.assert_same()
