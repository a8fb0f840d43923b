"""Content safety: no job changes what a table reads, judged by an oracle outside icemaint.

Every test freezes the table's rows (a parquet copy read through Spark) before the job and
compares after with EXCEPT ALL both ways, so the tool's own verification is never the only
judge. The shapes are the ones that lost rows before: statistics that say little (metrics
modes `none` and `counts`, columns past the 100th) with NULL keys, promoted key types,
Spark-written deletes, partition evolution, a staged result corrupted on purpose, a
format-3 table, and writers committing while jobs run.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.table.snapshots import ancestors_of

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config, HealthConfig
from maintenance.run.outcome import COMMITTED, FAILED, NOOP, JobResult
from maintenance.run.output_folder import output_folder
from maintenance.run.runner import run_job
from maintenance.table.health import table_health
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory, fresh_ref
from tests.support.cli import in_process
from tests.support.file_checks import local, missing_referenced_files, plant
from tests.support.helpers import model_rows, spark_rows
from tests.support.iceberg_oracle import FrozenRows
from tests.support.row_deltas import commit_row_delta
from tests.support.tables import create


def touched_files_only(config: Config) -> Config:
    """MERGE packs small files along; with a 1-byte threshold it rewrites only what deletes touch,
    so a wrongly pruned data file would keep its rows while its deletes are dropped."""
    return dataclasses.replace(config, health=HealthConfig(small_file_bytes=1))


def deletes_left(config: Config, ref: TableRef) -> tuple[int, int]:
    health = table_health(str(ref), load_table(config, ref), small_file_bytes=1)
    return health.equality_delete_files, health.position_delete_files


def run(config: Config, ref: TableRef, job: str, **options: Any):  # type: ignore[no-untyped-def]
    """A verified run; "convert-spark" is CONVERT made to find positions with Spark (a small
    conversion runs in the driver), and each CONVERT that committed must have used the engine
    it was meant to."""
    spark_engine = job == "convert-spark"
    if spark_engine:
        job, options = "convert", {**options, "local_max_bytes": 1}
    result = run_job(config, ref, job, options, verify=True)
    if job == "convert" and result.status == COMMITTED:
        assert result.counters["scan_engine"] == ("spark" if spark_engine else "driver"), result.counters
    return result


@pytest.mark.parametrize("metrics", ["counts", "none"])
@pytest.mark.parametrize("job", ["convert", "convert-spark", "merge"])
def test_null_and_value_keys_under_sparse_metrics(spark, config: Config, tmp_path: Path, metrics: str, job: str) -> None:
    """Issue scenario: a delete holding {NULL, 5, 10} registered with counts (or no) metrics."""
    ref = fresh_ref(config, "sparse")
    create(spark, ref, "id BIGINT, v STRING", f"'write.metadata.metrics.default'='{metrics}'")
    spark.range(0, 20000).selectExpr("id", "cast(id as string) v").writeTo(ref.spark_name).append()
    spark.sql(f"INSERT INTO {ref.spark_name} VALUES (NULL, 'null')")
    commit_row_delta(spark, config, ref, equality_deletes=[{"id": None}, {"id": 5}, {"id": 10}], equality_columns=("id",))
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    assert frozen.rows == 20001 - 3

    result = run(touched_files_only(config), ref, job)

    assert result.status == COMMITTED and result.content_verified, result.error
    frozen.assert_same()
    assert deletes_left(config, ref)[0] == 0


@pytest.mark.parametrize("job", ["convert", "convert-spark", "merge"])
def test_composite_keys_with_nulls_and_a_key_past_the_hundredth_column(spark, config: Config, tmp_path: Path, job: str) -> None:
    """Two-column deletes with NULL in either column; the second key column is the 102nd,
    which Iceberg gives no metrics by default."""
    ref = fresh_ref(config, "wide")
    filler = ", ".join(f"c{i} INT" for i in range(100))
    create(spark, ref, f"id BIGINT, {filler}, k2 STRING, v STRING", "'write.metadata.metrics.default'='counts'")
    values = ", ".join("0" for _ in range(100))
    rows = [("NULL", "'a'"), ("7", "NULL"), ("8", "'x'"), ("9", "'y'"), ("NULL", "NULL"), ("7", "'b'")]
    spark.sql(f"INSERT INTO {ref.spark_name} VALUES " + ", ".join(f"({i}, {values}, {k}, 'row{n}')" for n, (i, k) in enumerate(rows)))
    spark.range(100, 3000).selectExpr("id", *[f"0 c{i}" for i in range(100)], "cast(id % 7 as string) k2", "'filler' v").writeTo(ref.spark_name).append()
    commit_row_delta(
        spark, config, ref,
        equality_deletes=[{"id": None, "k2": "a"}, {"id": 7, "k2": None}, {"id": 8, "k2": "x"}, {"id": None, "k2": None}, {"id": 150, "k2": "3"}],
        equality_columns=("id", "k2"),
    )
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    result = run(touched_files_only(config), ref, job)

    assert result.status == COMMITTED and result.content_verified, result.error
    frozen.assert_same()
    assert deletes_left(config, ref)[0] == 0


@pytest.mark.parametrize(
    "old_type, new_type, values",
    [("INT", "BIGINT", (3, 4, 5, 450)), ("DECIMAL(9,2)", "DECIMAL(18,2)", ("3.00", "4.00", "5.00", "450.00"))],
    ids=["int-long", "decimal-widened"],
)
@pytest.mark.parametrize("job", ["convert", "convert-spark", "merge"])
def test_key_column_promoted_mid_history(spark, config: Config, tmp_path: Path, job: str, old_type: str, new_type: str, values: tuple) -> None:
    """Files written before the promotion hold the old physical type; deletes from both sides of it."""
    ref = fresh_ref(config, "promo")
    create(spark, ref, f"k {old_type}, v STRING")
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT cast(id as {old_type}), 'old' FROM range(0, 500)")
    commit_row_delta(spark, config, ref, equality_deletes=[{"k": _typed(values[0])}], equality_columns=("k",))
    spark.sql(f"ALTER TABLE {ref.spark_name} ALTER COLUMN k TYPE {new_type}")
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT cast(id as {new_type}), 'new' FROM range(400, 900)")
    commit_row_delta(spark, config, ref, equality_deletes=[{"k": _typed(values[1])}, {"k": _typed(values[2])}, {"k": _typed(values[3])}], equality_columns=("k",))
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    result = run(touched_files_only(config), ref, job)

    assert result.status == COMMITTED and result.content_verified, result.error
    frozen.assert_same()
    assert deletes_left(config, ref)[0] == 0


def _typed(value: Any) -> Any:
    from decimal import Decimal

    return Decimal(value) if isinstance(value, str) else value


@pytest.mark.parametrize("job", ["convert", "convert-spark", "merge"])
def test_floating_point_keys_match_as_iceberg_matches_them(spark, config: Config, tmp_path: Path, job: str) -> None:
    """-0.0 and 0.0 are different keys to Iceberg (and equal to a plain Spark join); NaN
    matches NaN, but only where Iceberg's planner lets the delete reach the file: bounds
    leave NaN out, so a NaN row in a file whose bounds miss the delete's stays visible."""
    ref = fresh_ref(config, "floats")
    create(spark, ref, "k DOUBLE, v STRING")
    for rows in ([(0.0, "zero"), (-0.0, "minus zero"), (1.5, "x"), (float("nan"), "nan inside")],  # bounds [-0.0, 1.5]
                 [(float("nan"), "nan outside"), (None, "null"), (2.5, "kept")]):  # bounds [2.5, 2.5]
        spark.createDataFrame(rows, "k double, v string").coalesce(1).writeTo(ref.spark_name).append()
    commit_row_delta(spark, config, ref, equality_deletes=[{"k": -0.0}, {"k": 1.5}, {"k": float("nan")}], equality_columns=("k",))
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    visible = sorted(r.v for r in spark.sql(f"SELECT v FROM {ref.spark_name}").collect())
    assert visible == ["kept", "nan outside", "null", "zero"]  # Iceberg's reader: the scenario is the one described

    result = run(touched_files_only(config), ref, job)

    assert result.status == COMMITTED and result.content_verified, result.error
    frozen.assert_same()
    assert deletes_left(config, ref)[0] == 0


@pytest.mark.parametrize("job", ["convert", "convert-spark", "merge"])
def test_float_key_promoted_to_double_mid_history(spark, config: Config, tmp_path: Path, job: str) -> None:
    """float -> double: old files hold float32 keys, deletes come from both sides of the
    promotion (a float32 value read as double is not the double of its decimal text). Both
    jobs read old files with their own type and widen it as Iceberg's reader does; the
    non-key promoted column `x` is kept too."""
    ref = fresh_ref(config, "promof")
    create(spark, ref, "k FLOAT, v STRING, x FLOAT")
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT cast(id / 10 as float), 'old', cast(id / 3 as float) FROM range(0, 500)")
    commit_row_delta(spark, config, ref, equality_deletes=[{"k": 0.5}], equality_columns=("k",))
    spark.sql(f"ALTER TABLE {ref.spark_name} ALTER COLUMN k TYPE DOUBLE")
    spark.sql(f"ALTER TABLE {ref.spark_name} ALTER COLUMN x TYPE DOUBLE")
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT cast(id / 10 as double), 'new', cast(id / 3 as double) FROM range(400, 900)")
    float32_40_3 = float(spark.sql("SELECT cast(cast(40.3 as float) as double) f").first().f)
    assert float32_40_3 != 40.3
    # 42.0: an old and a new row; 40.3 as float32: the old row only; 41.7: the new row only; 3.0: old.
    deletes = [{"k": 42.0}, {"k": float32_40_3}, {"k": 41.7}, {"k": 3.0}]
    commit_row_delta(spark, config, ref, equality_deletes=deletes, equality_columns=("k",))
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    assert frozen.rows == 1000 - 6  # the scenario is the one described (Iceberg's own reader)

    result = run(touched_files_only(config), ref, job)

    assert result.status == COMMITTED and result.content_verified, result.error
    frozen.assert_same()
    assert deletes_left(config, ref)[0] == 0


def test_non_key_float_promoted_to_double_through_compact(spark, config: Config, tmp_path: Path) -> None:
    """COMPACT reads old files' float32 column as double (NaN and NULL included) and
    writes it back as double, a Spark delete applied on the way."""
    ref = fresh_ref(config, "promofc")
    create(spark, ref, "id BIGINT, x FLOAT")
    for start in (0, 300):
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, CASE WHEN id % 50 = 0 THEN NULL WHEN id % 70 = 0 THEN float('NaN') ELSE cast(id / 7 as float) END "
                  f"FROM range({start}, {start + 300})")
    spark.sql(f"ALTER TABLE {ref.spark_name} ALTER COLUMN x TYPE DOUBLE")
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, id / 7 FROM range(600, 900)")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 9 = 0")
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    result = run(config, ref, "compact", min_input_files=2)

    assert result.status == COMMITTED and result.content_verified, result.error
    frozen.assert_same()
    assert spark.sql(f"SELECT count(*) n FROM {ref.spark_name}.data_files").first().n == 1  # the float32 files were rewritten


@pytest.mark.parametrize("metrics", ["counts", "truncate(2)"])
def test_spark_written_deletes_updates_and_merges(spark, config: Config, tmp_path: Path, metrics: str) -> None:
    ref = fresh_ref(config, "sparkdml")
    create(spark, ref, "id BIGINT, name STRING, part INT", f"'write.metadata.metrics.default'='{metrics}'")
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD part")
    spark.range(0, 4000).selectExpr("id", "concat('name-', id) name", "cast(id % 3 as int) part").writeTo(ref.spark_name).append()
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 7 = 0")
    spark.sql(f"UPDATE {ref.spark_name} SET name = 'updated' WHERE id % 11 = 0")
    spark.sql(
        f"MERGE INTO {ref.spark_name} t USING (SELECT id, part FROM {ref.spark_name} WHERE id % 13 = 0) s "
        f"ON t.id = s.id AND t.part = s.part WHEN MATCHED THEN DELETE"
    )
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    # Spark writes position deletes only: CONVERT has nothing to do; REWRITE combines the
    # three statements' files per partition; MERGE applies what is left.
    for job, expected in (("convert", NOOP), ("rewrite", COMMITTED), ("merge", COMMITTED)):
        result = run(touched_files_only(config), ref, job)
        assert result.status == expected, (job, result.status, result.error)
        assert result.status == NOOP or result.content_verified, (job, result.error)
        frozen.assert_same()
        if job == "rewrite":
            assert deletes_left(config, ref) == (0, 3)  # one position delete file per partition
    assert deletes_left(config, ref) == (0, 0)


def convert_dropping_one_files_positions(config: Config, ref: TableRef, monkeypatch: pytest.MonkeyPatch) -> JobResult:
    """A verified CONVERT whose output is corrupted on purpose: the positions found in one
    data file are dropped before they are written, so its staged result cannot verify."""
    import maintenance.jobs.convert.scan as scan

    real_writer = scan.write_position_deletes

    def drop_one_files_positions(entries, io, group, output_dir, **kwargs):  # type: ignore[no-untyped-def]
        victim = entries.agg({"file_path": "min"}).collect()[0][0]
        return real_writer(entries.filter(entries.file_path != victim), io, group, output_dir, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(scan, "write_position_deletes", drop_one_files_positions)
        return run(config, ref, "convert-spark")


def test_a_staged_result_that_does_not_verify_is_never_published(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run fails, says nothing was published, and the table's metadata is exactly what
    it was: the staged change never reached the catalog (no snapshot of the run, not even
    one on no branch)."""
    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=1500, commits=4, update_ratio=0.3)
    before = load_table(config, ref)
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    result = convert_dropping_one_files_positions(config, ref, monkeypatch)

    assert result.status == FAILED and result.content_verified is False
    assert "content changed" in (result.error or "") and "nothing was published" in (result.error or "")
    table = load_table(config, ref)
    assert table.metadata_location == before.metadata_location and table.metadata.current_snapshot_id == before.metadata.current_snapshot_id
    frozen.assert_same()
    assert not [s for s in table.metadata.snapshots if s.summary is not None and s.summary.get("icemaint.run-id") == result.run_id]
    retry = run(config, ref, "convert")
    assert retry.status == COMMITTED and retry.content_verified, retry.error
    frozen.assert_same()


def test_a_staged_result_that_did_not_verify_leaves_its_metadata_nowhere(
    spark, config: Config, cdc_table: CdcFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The failed run's staged snapshot was never committed: its manifest list and the
    manifests it wrote are deleted at once (the metadata folder holds what it held before,
    but the files of the commits that made the table); the position deletes it wrote stay in
    its output folder, and the next orphan cleanup takes them."""
    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=600, commits=3, update_ratio=0.3)
    table = load_table(config, ref)
    metadata_folder = local(table.location()) / "metadata"
    metadata_before = sorted(p.name for p in metadata_folder.iterdir())
    failed = convert_dropping_one_files_positions(config, ref, monkeypatch)
    assert failed.status == FAILED and failed.content_verified is False, failed.error
    assert sorted(p.name for p in metadata_folder.iterdir()) == metadata_before
    staging = local(output_folder(table.location(), "convert", failed.run_id))
    written = [p for p in staging.rglob("*") if p.is_file()]
    assert written and load_table(config, ref).metadata_location == table.metadata_location
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    cleaned = run_job(config, ref, "orphans", {"older_than": 0, "force": True}, verify=True)

    assert cleaned.status == COMMITTED and cleaned.content_verified, cleaned.error
    assert not [p for p in staging.rglob("*") if p.is_file()] and cleaned.counters["files_deleted"] >= len(written)
    assert missing_referenced_files(load_table(config, ref)) == []
    frozen.assert_same()


def _without_first_added(module: Any, name: str) -> Any:
    """`module.name` (one of `spark.rewrite_files`' two recipes, as a job module imported it),
    wrapped to leave the first new file out of the change: MERGE and COMPACT lose a written
    data file's rows, CONVERT and REWRITE a written delete file's positions (deleted rows
    come back). The job's own path runs otherwise unchanged."""
    real = getattr(module, name)

    def corrupted(*args: Any) -> Any:
        args = list(args)
        added = 3 if name == "delete_file_rewrite" else 4  # the `added` argument of each recipe
        args[added] = list(args[added])[1:]
        return real(*args)

    return corrupted


@pytest.mark.parametrize(
    "job, format_version, options",
    [("merge", 2, {}), ("compact", 2, {"min_input_files": 2}), ("rewrite", 2, {}), ("convert", 2, {}), ("convert", 3, {}), ("merge", 3, {})],
    ids=["merge", "compact", "rewrite", "convert", "convert-dv", "merge-v3"],
)
def test_every_job_publishes_nothing_that_does_not_verify(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          job: str, format_version: int, options: dict[str, Any]) -> None:
    """Each job's change, corrupted on its way to the commit (one new file left out), is
    staged, fails verification and is never made current; the same job without the fault
    then commits. The frozen rows, not the tool's verify, judge the content."""
    import maintenance.jobs.convert.commit as convert_commit
    import maintenance.jobs.file_groups.executor as file_groups
    import maintenance.jobs.rewrite.run as rewrite_run

    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=1500, commits=4, update_ratio=0.3, format_version=format_version)
    before = load_table(config, ref).metadata.current_snapshot_id
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    with monkeypatch.context() as patched:
        for module, name in ((file_groups, "data_file_rewrite"), (convert_commit, "delete_file_rewrite"), (rewrite_run, "delete_file_rewrite")):
            patched.setattr(module, name, _without_first_added(module, name))
        result = run_job(config, ref, job, options, verify=True)

    assert result.status == FAILED and result.content_verified is False, (result.status, result.error)
    assert "content changed" in (result.error or "") and "nothing was published" in (result.error or "")
    assert load_table(config, ref).metadata.current_snapshot_id == before
    frozen.assert_same()
    retry = run_job(config, ref, job, options, verify=True)
    assert retry.status == COMMITTED and retry.content_verified, retry.error
    frozen.assert_same()


def spark_jobs_started(spark: Any) -> int:
    """How many Spark jobs this SparkContext has started, whatever their job group: the
    DAG scheduler's job counter (independent of the group a run sets, and of the UI's
    retention of finished jobs)."""
    return int(spark.sparkContext._jsc.sc().dagScheduler().numTotalJobs())


def test_nothing_to_do_scans_nothing(spark, config: Config, cdc_table: CdcFactory, capsys: pytest.CaptureFixture[str]) -> None:
    ref, _, _ = cdc_table(rows=400, commits=2)
    jobs_before_merge = spark_jobs_started(spark)
    assert run(config, ref, "merge").status == COMMITTED
    assert spark_jobs_started(spark) > jobs_before_merge  # the counter sees a run's Spark work
    jobs_before = spark_jobs_started(spark)

    code, out, _ = in_process(capsys, "merge", ref.identifier, "--verify", "--json")

    result = json.loads(out)
    assert code == 0 and result["status"] == "noop"
    assert not {"fingerprint_before", "fingerprint_after", "content_verified"} & set(result)
    assert spark_jobs_started(spark) == jobs_before  # no Spark job at all, in any job group


def test_every_job_runs_on_a_format_3_table(spark, config: Config, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 12 item 4 was REWRITE saying `noop` on v3 where others refused; now every job
    handles format 3 (deletion vectors: tests/suites/test_format_v3.py) and says what it did."""
    ref = fresh_ref(config, "v3")
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {ref.spark_namespace}")
    spark.sql(f"CREATE TABLE {ref.spark_name} (id BIGINT) USING iceberg TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')")
    spark.sql(f"INSERT INTO {ref.spark_name} VALUES (1), (2), (3)")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id = 2")
    for job, status in (("convert", "noop"), ("rewrite", "noop"), ("merge", "committed")):
        code, out, err = in_process(capsys, job, ref.identifier, "--json")
        assert code == 0 and json.loads(out)["status"] == status, (job, out, err)
    assert sorted(r.id for r in spark.sql(f"SELECT id FROM {ref.spark_name}").collect()) == [1, 3]


def test_merge_after_partition_evolution_writes_the_current_spec(spark, config: Config, tmp_path: Path) -> None:
    """Three specs live at once: old-spec rows are packed into the current spec's partitions."""
    ref = fresh_ref(config, "evolve")
    create(spark, ref, "id BIGINT, region INT, day INT, v STRING", "'write.target-file-size-bytes'='262144'")
    insert = f"INSERT INTO {ref.spark_name} SELECT id, cast(id % 4 as int), cast(id % 3 as int), repeat('x', 40) FROM range({{}}, {{}})"
    for start in range(0, 6000, 500):
        spark.sql(insert.format(start, start + 500))
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD region")
    for start in range(6000, 12000, 500):
        spark.sql(insert.format(start, start + 500))
    spark.sql(f"ALTER TABLE {ref.spark_name} ADD PARTITION FIELD day")
    for start in range(12000, 18000, 500):
        spark.sql(insert.format(start, start + 500))
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 5 = 0")  # a row in every file of every spec
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    files_before = spark.sql(f"SELECT count(*) n FROM {ref.spark_name}.files").collect()[0].n

    result = run(dataclasses.replace(config, health=HealthConfig(small_file_bytes=64 * 1024 * 1024)), ref, "merge")

    assert result.status == COMMITTED and result.content_verified, result.error
    frozen.assert_same()
    files = spark.sql(f"SELECT spec_id, partition, file_size_in_bytes FROM {ref.spark_name}.files").collect()
    current_spec = load_table(config, ref).spec().spec_id
    assert {f.spec_id for f in files} == {current_spec}
    assert len({(f.partition.region, f.partition.day) for f in files}) == len(files) <= 12  # one file per partition
    assert len(files) < files_before / 2


def test_merge_writes_files_near_the_target_size(spark, config: Config, tmp_path: Path) -> None:
    ref = fresh_ref(config, "sizes")
    target = 256 * 1024
    create(spark, ref, "id BIGINT, v STRING", f"'write.target-file-size-bytes'='{target}'")
    for start in range(0, 44000, 2000):  # 22 files of a few dozen KB
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, md5(cast(id as string)) FROM range({start}, {start + 2000})")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 10 = 0")
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    result = run(dataclasses.replace(config, health=HealthConfig(small_file_bytes=target)), ref, "merge")

    assert result.status == COMMITTED and result.content_verified, result.error
    frozen.assert_same()
    sizes = sorted(r.file_size_in_bytes for r in spark.sql(f"SELECT file_size_in_bytes FROM {ref.spark_name}.files").collect())
    total = sum(sizes)
    assert len(sizes) == max(1, round(total / target))
    assert all(0.9 * target <= s <= 1.1 * target for s in sizes) or total < 0.9 * target, sizes


class WriterAt:
    """A run's progress callback that commits one CDC batch, as a streaming writer would,
    when the run first reports `stage`. The commit lands inside the job: for jobs that
    publish, once their change is staged and before it is made current; for EXPIRE and
    ORPHANS, once they deleted and before their deletions are verified. The model (the table
    as the writer read it, plus its batch) is the oracle."""

    def __init__(self, cdc_table: CdcFactory, ref: TableRef, stage: str) -> None:
        self.cdc_table, self.ref, self.stage = cdc_table, ref, stage
        self.snapshot_id: int | None = None
        self.model: Any = None

    def __call__(self, stage: str, **counts: int) -> None:
        if stage == self.stage and self.snapshot_id is None:
            _, written, self.model = self.cdc_table(ref=self.ref, rows=60, commits=1, update_ratio=0.5, delete_ratio=0.1, seed=1000)
            self.snapshot_id = written.snapshot_id


@pytest.mark.parametrize("job", ["convert", "rewrite", "merge", "compact", "manifests", "expire", "orphans"])
def test_a_writer_committing_during_every_job(spark, config: Config, cdc_table: CdcFactory, job: str) -> None:
    """Verification compares the job's base with its own result: a writer's commit in the
    middle of the job is neither damage nor lost."""
    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=2000, commits=6, update_ratio=0.3, delete_ratio=0.05)
    options: dict[str, Any] = {
        "expire": {"max_snapshot_age": 0, "min_snapshots_to_keep": 1},
        "orphans": {"older_than": 86400},  # the writer's fresh files are inside the margin
        "compact": {"min_input_files": 2},
    }.get(job, {})
    if job == "orphans":
        for n in range(3):
            plant(local(load_table(config, ref).location()) / "data" / f"left-behind-{n}.parquet", days_old=2)
    deletes_only = job in ("expire", "orphans")
    writer = WriterAt(cdc_table, ref, "files deleted" if deletes_only else "staged")

    result = run_job(config, ref, job, options, verify=True, progress=writer)

    assert writer.snapshot_id is not None, f"{job} never reported the stage the writer waits for"
    assert result.status == COMMITTED and result.content_verified, result.error
    table = load_table(config, ref)
    lineage = [s.snapshot_id for s in ancestors_of(table.current_snapshot(), table.metadata)]
    if deletes_only:
        assert lineage[0] == writer.snapshot_id  # EXPIRE and ORPHANS make no snapshot
    else:
        assert writer.snapshot_id in lineage[1:] and result.snapshot_id in lineage[: lineage.index(writer.snapshot_id)]  # published on top
    assert spark_rows(spark, ref) == model_rows(writer.model)
