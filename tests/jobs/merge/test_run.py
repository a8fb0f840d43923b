"""MERGE on real tables: deletes applied into data files, delete files gone, sequence numbers kept."""

from __future__ import annotations

import json
from typing import Any

import pytest

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.run.outcome import COMMITTED, JobResult
from maintenance.run.runner import run_job
from maintenance.table.health import table_health
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory
from tests.support.cli import in_process
from tests.support.helpers import model_rows, spark_rows


def run_merge(config: Config, ref: TableRef, **options: Any) -> JobResult:
    return run_job(config, ref, "merge", options, verify=True)


def files_by_partition(spark, ref: TableRef) -> dict[str, set[str]]:  # type: ignore[no-untyped-def]
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    rows = spark.sql(f"SELECT partition.region region, file_path FROM {ref.spark_name}.files").collect()
    out: dict[str, set[str]] = {}
    for r in rows:
        out.setdefault(f"region={r.region}", set()).add(r.file_path)
    return out


def data_file_paths(spark, ref: TableRef) -> set[str]:  # type: ignore[no-untyped-def]
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    return {r.file_path for r in spark.sql(f"SELECT file_path FROM {ref.spark_name}.data_files").collect()}


@pytest.mark.parametrize("shape", [TableShape("identity", 3, "single"), TableShape("none", 3, "single"), TableShape("bucket", 2, "composite")], ids=lambda s: s.encode())
def test_merge_leaves_no_delete_files(spark, config: Config, cdc_table: CdcFactory, shape: TableShape) -> None:
    ref, _, model = cdc_table(shape=shape, rows=3000, commits=6, update_ratio=0.2, delete_ratio=0.05)
    planning_seq = load_table(config, ref).metadata.last_sequence_number

    outcome = run_merge(config, ref)

    assert outcome.status == COMMITTED and outcome.content_verified, outcome.error
    health = table_health(str(ref), load_table(config, ref), small_file_bytes=1)
    assert (health.position_delete_files, health.equality_delete_files) == (0, 0)
    assert health.data_files < 6 * max(1, shape.partitions)  # small files packed
    assert spark_rows(spark, ref) == model_rows(model)
    seqs = {r.sequence_number for r in spark.sql(f"SELECT sequence_number FROM {ref.spark_name}.entries WHERE status < 2").collect()}
    assert seqs == {planning_seq}  # the new data files keep the planning snapshot's sequence number


def test_merge_of_one_partition_leaves_the_others_untouched(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, model = cdc_table(shape=TableShape("identity", 3, "single"), rows=2400, commits=4)
    before = files_by_partition(spark, ref)

    outcome = run_merge(config, ref, partitions=("region=1",))

    assert outcome.status == COMMITTED and outcome.content_verified, outcome.error
    after = files_by_partition(spark, ref)
    assert after["region=0"] == before["region=0"] and after["region=2"] == before["region=2"]
    assert not (after["region=1"] & before["region=1"])
    partitions = {p.partition: p for p in table_health(str(ref), load_table(config, ref), small_file_bytes=1).partitions}
    assert partitions["region=1"].position_delete_files == partitions["region=1"].equality_delete_files == 0
    assert partitions["region=0"].equality_delete_files > 0
    assert spark_rows(spark, ref) == model_rows(model)


def test_equality_delete_committed_during_merge_still_applies(spark, config: Config, cdc_table: CdcFactory) -> None:
    """P1/P2 with an equality delete: both commit, and the row stays deleted."""
    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=1600, commits=4, update_ratio=0.2)
    writer: dict[str, Any] = {}

    def writer_commits(_stage: str, **_counts: int) -> None:
        _, writer["result"], writer["model"] = cdc_table(ref=ref, rows=300, commits=1, update_ratio=0.6, delete_ratio=0.2, seed=77)

    outcome = run_job(config, ref, "merge", progress=writer_commits)

    assert outcome.status == COMMITTED, outcome.error
    assert writer["result"].equality_delete_files >= 1
    assert spark_rows(spark, ref) == model_rows(writer["model"])  # the writer's updates and deletes hold


def test_a_replaced_file_a_writer_removed_refuses_only_its_group(spark, config: Config, cdc_table: CdcFactory) -> None:
    """P1/P2 with a copy-on-write DELETE: the writer's commit stands and replaces a data
    file MERGE is rewriting; nothing can be carried over to a file that is gone, so Iceberg
    refuses the group replacing it, the other partition's group commits (conflict-scoped
    retry), and the next run merges what was left, the row still deleted. (A merge-on-read
    writer's position deletes are carried over instead: `tests/jobs/file_groups/test_rebase.py`.)"""
    ref, _, model = cdc_table(shape=TableShape("identity", 2, "single"), rows=1600, commits=4, update_ratio=0.2)
    victim = sorted(model.rows)[0][0]
    spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('write.delete.mode' = 'copy-on-write')")
    wrote: list[str] = []

    def writer_deletes(stage: str, **_counts: int) -> None:
        if stage == "groups written" and not wrote:
            spark.sql(f"DELETE FROM {ref.spark_name} WHERE id = {victim}")  # copy-on-write: the data file replaced
            wrote.append(stage)

    first = run_job(config, ref, "merge", progress=writer_deletes)

    assert wrote and first.status == COMMITTED, first.error
    assert first.counters["groups_planned"] == 2 and first.counters["groups_refused"] == 1 and first.counters["groups_rewritten"] == 1
    assert spark.sql(f"SELECT count(*) n FROM {ref.spark_name} WHERE id = {victim}").collect()[0].n == 0
    second = run_merge(config, ref)
    assert second.status == COMMITTED and second.content_verified, second.error
    assert second.counters["groups_planned"] == 1 and "groups_refused" not in second.counters
    expected = [row for row in model_rows(model) if row[0] != victim]
    assert spark_rows(spark, ref) == expected


def test_tables_written_by_sparks_update_and_delete(spark, config: Config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=1200, commits=3)
    spark.sql(f"UPDATE {ref.spark_name} SET status = 'touched' WHERE id % 4 = 0")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 6 = 0")

    outcome = run_merge(config, ref)

    assert outcome.status == COMMITTED and outcome.content_verified, outcome.error
    health = table_health(str(ref), load_table(config, ref), small_file_bytes=1)
    assert (health.position_delete_files, health.equality_delete_files) == (0, 0)


def test_deletes_left_dangling_by_another_rewrite_are_dropped_on_their_own(spark, config: Config, cdc_table: CdcFactory) -> None:
    """Stock `rewrite_data_files` rewrote every data file and left its delete files behind,
    applying to nothing: MERGE plans no group, and drops them in a commit of their own (it
    used to report committed and leave them, so the policy asked for MERGE again forever)."""
    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=1200, commits=3)
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 7 = 0")
    spark.sql(f"CALL local.system.rewrite_data_files(table => '{ref.identifier}', options => map('min-input-files','1'))").collect()
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    deletes_before = spark.sql(f"SELECT count(*) FROM {ref.spark_name}.delete_files").collect()[0][0]
    rows_before = spark_rows(spark, ref)
    assert deletes_before > 0

    outcome = run_merge(config, ref)

    assert outcome.status == COMMITTED and outcome.snapshot_id is not None, outcome.error
    assert outcome.counters["delete_files_removed"] == deletes_before and outcome.counters["data_files_rewritten"] == 0
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    assert spark.sql(f"SELECT count(*) FROM {ref.spark_name}.delete_files").collect()[0][0] == 0
    assert spark_rows(spark, ref) == rows_before


def test_cli_merge_json(spark, home, config: Config, cdc_table: CdcFactory, capsys: pytest.CaptureFixture[str]) -> None:
    ref, _, _ = cdc_table(shape=TableShape("none", 2, "single"), rows=900, commits=3)
    code, out, _ = in_process(capsys, "merge", ref.identifier, "--verify", "--json")
    result = json.loads(out)
    assert code == 0 and result["status"] == "committed" and result["content_verified"] is True
    health = table_health(str(ref), load_table(config, ref), small_file_bytes=1)
    assert (health.position_delete_files, health.equality_delete_files) == (0, 0)


def test_a_dry_run_lists_the_groups_the_run_then_rewrites(spark, config: Config, cdc_table: CdcFactory, capsys: pytest.CaptureFixture[str]) -> None:
    """The plan holds the groups: `merge --dry-run --json` lists them, ranked and within the
    budget, and the run rewrites exactly those files, one group each, and nothing else
    (what it replaced is read from the table, not from the job)."""
    ref, _, model = cdc_table(shape=TableShape("identity", 4, "single"), rows=4000, commits=5, update_ratio=0.3, delete_ratio=0.05)
    before = data_file_paths(spark, ref)
    table_bytes = table_health(str(ref), load_table(config, ref), small_file_bytes=1).data_bytes
    budget = str(table_bytes // 2)

    code, out, _ = in_process(capsys, "merge", str(ref), "--dry-run", "--json", "--max-bytes-per-run", budget, "--max-group-bytes", str(table_bytes // 8))
    planned = json.loads(out)
    code_run, out_run, _ = in_process(capsys, "merge", str(ref), "--json", "--max-bytes-per-run", budget, "--max-group-bytes", str(table_bytes // 8))
    result = json.loads(out_run)

    assert code == 0 and planned["status"] == "planned" and planned["groups_deferred"] > 0, planned
    groups = planned["groups"]
    assert len(groups) == planned["groups_planned"] > 0 and sum(g["input_bytes"] for g in groups) <= int(budget)
    assert all(len(g["files"]) == g["data_files"] for g in groups)
    assert code_run == 0 and result["status"] == COMMITTED and result["groups_rewritten"] == len(groups), result
    after = data_file_paths(spark, ref)
    assert before - after == {path for g in groups for path in g["files"]}
    assert spark_rows(spark, ref) == model_rows(model)


def _codecs_of_new_files(spark, ref: TableRef, before: set[str]) -> set[str]:  # type: ignore[no-untyped-def]
    """The Parquet compression of every column chunk of the data files not in `before`, as
    the files themselves say (pyarrow reads their footers)."""
    import pyarrow.parquet as pq

    codecs = set()
    for path in data_file_paths(spark, ref) - before:
        metadata = pq.ParquetFile(path.removeprefix("file:")).metadata
        codecs |= {metadata.row_group(g).column(c).compression for g in range(metadata.num_row_groups) for c in range(metadata.num_columns)}
    return codecs


@pytest.mark.parametrize(("named", "written"), [(None, {"ZSTD"}), ("gzip", {"GZIP"}), ("snappy", {"SNAPPY"})], ids=["unnamed", "gzip", "snappy"])
def test_merge_writes_the_codec_the_table_names_and_zstd_where_it_names_none(spark, config: Config, cdc_table: CdcFactory,
                                                                           named: str | None, written: set[str]) -> None:
    """A table that names no Parquet codec (created by a catalog server that writes its own
    metadata) is rewritten with zstd, not with Iceberg Java's fallback gzip; a codec the
    table names is the one written."""
    ref, _, model = cdc_table(shape=TableShape("identity", 2, "single"), rows=2000, commits=4, update_ratio=0.2, delete_ratio=0.05)
    if named is None:
        spark.sql(f"ALTER TABLE {ref.spark_name} UNSET TBLPROPERTIES ('write.parquet.compression-codec')")
    else:
        spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('write.parquet.compression-codec' = '{named}')")
    assert load_table(config, ref).properties.get("write.parquet.compression-codec") == named
    before = data_file_paths(spark, ref)

    outcome = run_merge(config, ref)

    assert outcome.status == COMMITTED and outcome.content_verified, outcome.error
    assert _codecs_of_new_files(spark, ref, before) == written
    assert spark_rows(spark, ref) == model_rows(model)
