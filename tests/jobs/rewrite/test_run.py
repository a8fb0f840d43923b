"""REWRITE on real tables: position deletes combined per partition, content unchanged."""

from __future__ import annotations

import json

import pytest

from maintenance.catalogs import TableRef, load_table
from maintenance.config import Config
from maintenance.run.outcome import COMMITTED, NOOP, JobResult
from maintenance.run.runner import run_job
from maintenance.table.health import table_health
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory, fresh_ref
from tests.support.cli import in_process
from tests.support.helpers import model_rows, spark_rows
from tests.support.iceberg_oracle import FrozenRows


def run_rewrite(config: Config, ref: TableRef) -> JobResult:
    return run_job(config, ref, "rewrite", verify=True)


def position_files_per_partition(config: Config, ref: TableRef) -> dict[str, int]:
    health = table_health(str(ref), load_table(config, ref), small_file_bytes=1)
    return {p.partition: p.position_delete_files for p in health.partitions}


def position_delete_sequences(spark, ref: TableRef) -> list[int]:  # type: ignore[no-untyped-def]
    spark.sql(f"REFRESH TABLE {ref.spark_name}")
    rows = spark.sql(f"SELECT sequence_number FROM {ref.spark_name}.entries WHERE status < 2 AND data_file.content = 1").collect()
    return sorted(r.sequence_number for r in rows)


@pytest.mark.parametrize("shape", [TableShape("identity", 3, "single"), TableShape("none", 3, "composite")], ids=lambda s: s.encode())
def test_rewrite_leaves_one_position_delete_file_per_partition(spark, config: Config, cdc_table: CdcFactory, shape: TableShape) -> None:
    ref, _, model = cdc_table(shape=shape, rows=3000, commits=6, update_ratio=0.2, delete_ratio=0.05)
    before = position_files_per_partition(config, ref)  # the writer's, one per commit and partition
    highest = max(position_delete_sequences(spark, ref))
    assert max(before.values()) > 1

    outcome = run_rewrite(config, ref)

    assert outcome.status == COMMITTED and outcome.content_verified, outcome.error
    after = position_files_per_partition(config, ref)
    assert set(after) == set(before) and max(after.values()) == 1
    assert outcome.counters["delete_files_removed"] == sum(before.values())
    assert spark_rows(spark, ref) == model_rows(model)
    assert max(position_delete_sequences(spark, ref)) == highest  # the highest replaced sequence number
    assert run_rewrite(config, ref).status == NOOP  # compact already


def test_entries_of_removed_data_files_are_dropped(spark, config: Config, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A stock compaction of one data file leaves the partition's position delete files
    behind (they still apply to the other file): combined, their entries for the rewritten
    file point at nothing and are dropped. Built with Spark directly, so the dangling entries do not hang
    on which deletes Iceberg's own commit happens to clean up."""
    ref = fresh_ref(config, "dangling")
    spark.sql(f"CREATE TABLE {ref.spark_name} (id BIGINT, part INT) USING iceberg PARTITIONED BY (part) TBLPROPERTIES "
              "('format-version'='2', 'write.delete.mode'='merge-on-read', 'write.delete.granularity'='partition')")
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, 0 FROM range(0, 100)")
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, 0 FROM range(100, 200)")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 10 = 0")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 10 = 5")
    assert position_files_per_partition(config, ref) == {"part=0": 2}
    spark.sql(f"CALL local.system.rewrite_data_files(table => '{ref.identifier}', where => 'id < 100', "
              "options => map('rewrite-all', 'true', 'min-input-files', '1'))").collect()
    assert position_files_per_partition(config, ref) == {"part=0": 2}  # still needed by the file of ids 100..199
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    outcome = run_rewrite(config, ref)

    assert outcome.status == COMMITTED and outcome.content_verified, outcome.error
    assert outcome.counters["dangling_records_dropped"] == 20  # ids 0, 5, 10, ..., 95 of the rewritten file
    frozen.assert_same()
    assert frozen.rows == 160 and position_files_per_partition(config, ref) == {"part=0": 1}


def test_position_deletes_written_by_spark_merge_on_read(spark, config: Config, cdc_table: CdcFactory, tmp_path) -> None:  # type: ignore[no-untyped-def]
    ref, _, _ = cdc_table(shape=TableShape("identity", 3, "single"), rows=1500, commits=3)
    for statement in (
        f"DELETE FROM {ref.spark_name} WHERE id % 5 = 0",
        f"UPDATE {ref.spark_name} SET status = 'updated' WHERE id % 7 = 0",
        f"DELETE FROM {ref.spark_name} WHERE id % 9 = 0",
    ):
        spark.sql(statement)
    assert max(position_files_per_partition(config, ref).values()) > 1
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    outcome = run_rewrite(config, ref)

    assert outcome.status == COMMITTED and outcome.content_verified, outcome.error
    frozen.assert_same()  # judged by the copy, not only by the tool's own verify
    assert max(position_files_per_partition(config, ref).values()) == 1


def test_cli_rewrite_json(spark, home, config: Config, cdc_table: CdcFactory, capsys: pytest.CaptureFixture[str]) -> None:
    ref, _, _ = cdc_table(rows=900, commits=4)
    code, out, _ = in_process(capsys, "rewrite", ref.identifier, "--verify", "--json")
    result = json.loads(out)
    assert code == 0 and result["status"] == "committed" and result["content_verified"] is True
    assert result["position_delete_files_added"] <= len(position_files_per_partition(config, ref))
    assert max(position_files_per_partition(config, ref).values()) == 1


def test_partitions_with_avro_deletes_are_skipped_not_the_table(spark, config: Config, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Spark writes Avro position deletes under write.delete.format.default=avro; REWRITE reads
    Parquet only, so it leaves that partition alone and still combines the others."""
    ref = fresh_ref(config, "avrodel")
    spark.sql(
        f"CREATE TABLE {ref.spark_name} (id BIGINT, p INT) USING iceberg PARTITIONED BY (p) "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', 'write.delete.format.default'='avro', 'write.delete.granularity'='partition')"
    )
    spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, cast(id % 2 as int) FROM range(0, 400)")
    for divisor in (3, 5):
        spark.sql(f"DELETE FROM {ref.spark_name} WHERE p = 0 AND id % {divisor} = 0")
    spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('write.delete.format.default'='parquet')")
    for divisor in (3, 5):
        spark.sql(f"DELETE FROM {ref.spark_name} WHERE p = 1 AND id % {divisor} = 0")
    assert position_files_per_partition(config, ref) == {"p=0": 2, "p=1": 2}
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")

    outcome = run_job(config, ref, "rewrite", verify=False)

    assert outcome.status == COMMITTED, outcome.error
    assert outcome.counters["partitions_skipped"] == 1
    assert position_files_per_partition(config, ref) == {"p=0": 2, "p=1": 1}
    frozen.assert_same()
