"""`health` from pyiceberg metadata against Spark's own metadata tables."""

from __future__ import annotations

from pathlib import Path

from pyiceberg.table import Table

from maintenance.catalogs import load_table
from maintenance.config import Config
from maintenance.policy.triggers import fired
from maintenance.schedule.cycle import evaluate
from maintenance.state.store import open_state
from maintenance.table.file_counts import snapshot_file_counts
from maintenance.table.health import TableHealth, table_health
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory, fresh_ref
from tests.support.decisions import by_job, policies_from

CONTENT = {0: "data", 1: "position_delete", 2: "equality_delete"}


def test_health_counters_match_spark_metadata_tables(spark, config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(shape=TableShape("identity", 3, "single"), rows=2000, commits=5)
    health = table_health(str(ref), load_table(config, ref), small_file_bytes=10_000)

    rows = spark.sql(
        f"SELECT content, count(*) files, sum(record_count) records, sum(file_size_in_bytes) bytes, "
        f"count_if(content = 0 AND file_size_in_bytes < 10000) small FROM {ref.spark_name}.files GROUP BY content"
    ).collect()
    by_content = {CONTENT[r.content]: r for r in rows}
    assert health.data_files == by_content["data"].files
    assert health.data_records == by_content["data"].records
    assert health.data_bytes == by_content["data"].bytes
    assert health.small_data_files == by_content["data"].small
    assert health.position_delete_files == by_content["position_delete"].files
    assert health.position_delete_records == by_content["position_delete"].records
    assert health.equality_delete_files == by_content["equality_delete"].files
    assert health.equality_delete_records == by_content["equality_delete"].records

    delete_files = spark.sql(f"SELECT count(*) n FROM {ref.spark_name}.delete_files").collect()[0].n
    assert health.position_delete_files + health.equality_delete_files == delete_files
    snapshots = spark.sql(f"SELECT count(*) n FROM {ref.spark_name}.snapshots").collect()[0].n
    assert health.snapshots == snapshots == 5
    max_seq = spark.sql(f"SELECT max(sequence_number) s FROM {ref.spark_name}.entries").collect()[0].s
    assert health.sequence_number == max_seq == 5
    history = spark.sql(f"SELECT count(*) n FROM {ref.spark_name}.metadata_log_entries").collect()[0].n
    assert health.metadata_files == history
    assert_streamed_counts_match(health, load_table(config, ref), 10_000)


def assert_streamed_counts_match(health: TableHealth, table: Table, small_file_bytes: int) -> None:
    """What a run records at its end (`file_counts`, streamed) equals `table_health`'s counters."""
    streamed = snapshot_file_counts(table, small_file_bytes)
    counted = ("data_files", "data_bytes", "data_records", "small_data_files", "position_delete_files", "position_delete_records",
               "equality_delete_files", "equality_delete_records", "deletion_vectors", "deletion_vector_records")
    assert {k: getattr(streamed, k) for k in counted} == {k: getattr(health, k) for k in counted}


def test_health_per_partition_matches_spark(spark, config, cdc_table: CdcFactory) -> None:
    ref, _, _ = cdc_table(shape=TableShape("identity", 4, "single"), rows=1600, commits=4)
    health = table_health(str(ref), load_table(config, ref), small_file_bytes=1)

    rows = spark.sql(
        f"SELECT partition.region region, content, count(*) files, sum(record_count) records FROM {ref.spark_name}.files GROUP BY 1, 2"
    ).collect()
    expected = {(f"region={r.region}", CONTENT[r.content]): (r.files, r.records) for r in rows}
    got = {}
    for p in health.partitions:
        got[(p.partition, "data")] = (p.data_files, p.data_records)
        got[(p.partition, "position_delete")] = (p.position_delete_files, p.position_delete_records)
        got[(p.partition, "equality_delete")] = (p.equality_delete_files, p.equality_delete_records)
    assert {k: v for k, v in got.items() if v[0]} == expected
    assert len(health.partitions) == 4


def test_unpartitioned_health_has_one_global_partition(config, cdc_table: CdcFactory) -> None:
    ref, result, _ = cdc_table(shape=TableShape("none", 4, "single"), rows=900, commits=3)
    health = table_health(str(ref), load_table(config, ref), small_file_bytes=1)

    assert [p.partition for p in health.partitions] == [""]
    assert health.equality_delete_files == result.equality_delete_files
    assert health.to_json()["partitions"][0]["equality_delete_files"] == result.equality_delete_files


def test_v3_deletion_vectors_and_puffin_files_match_spark_metadata_tables_and_fire_triggers(spark, config: Config, tmp_path: Path) -> None:
    """Spark-written v2 position deletes, then, after an upgrade to v3, DVs in two Puffin files
    (the second DELETE replaces two DVs, one of them over a file's v2 deletes): health's DV,
    Puffin and position counters, per table and per partition, equal Spark's `delete_files`
    table (DVs are the PUFFIN rows); a policy's DV triggers fire at those values, not above."""
    ref = fresh_ref(config, "v3health")
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {ref.spark_namespace}")
    spark.sql(f"CREATE TABLE {ref.spark_name} (id bigint, p int) USING iceberg PARTITIONED BY (p) "
              "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')")
    for batch in range(2):
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, cast(id % 2 as int) FROM range({batch * 400}, {(batch + 1) * 400})")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 10 = 1")  # v2 position deletes, in p=1 only
    spark.sql(f"ALTER TABLE {ref.spark_name} SET TBLPROPERTIES ('format-version'='3')")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE p = 0 AND id % 3 = 0")  # a DV for each p=0 file, one Puffin file
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id IN (2, 3)")  # two DVs replaced: p=0's and a p=1 file's, holding its v2 positions

    health = table_health(str(ref), load_table(config, ref), small_file_bytes=1)

    rows = spark.sql(f"SELECT partition.p p, file_format = 'PUFFIN' dv, count(*) files, sum(record_count) records "
                     f"FROM {ref.spark_name}.delete_files WHERE content = 1 GROUP BY 1, 2").collect()
    expected = {(f"p={r.p}", r.dv): (r.files, r.records) for r in rows}
    got = {}
    for part in health.partitions:
        got[(part.partition, True)] = (part.deletion_vectors, part.deletion_vector_records)
        got[(part.partition, False)] = (part.position_delete_files, part.position_delete_records)
    assert {k: v for k, v in got.items() if v[0]} == expected
    assert {part for part, dv in expected if dv} == {"p=0", "p=1"} and ("p=1", False) in expected  # both kinds, side by side
    dvs, records, puffins = spark.sql(f"SELECT count(*), sum(record_count), count(DISTINCT file_path) FROM {ref.spark_name}.delete_files "
                                      "WHERE file_format = 'PUFFIN'").collect()[0]
    assert (health.deletion_vectors, health.deletion_vector_records, health.deletion_vector_files) == (dvs, records, puffins)
    assert puffins == 2 and health.delete_files == dvs + health.position_delete_files
    assert_streamed_counts_match(health, load_table(config, ref), 1)

    measured = {"deletion_vectors": dvs, "deletion_vector_records": records, "puffin_files": puffins}
    assert fired({name: value + 1 for name, value in measured.items()}, health) == []
    state = open_state(config)
    for name, value in measured.items():
        policy = f"name: t\njobs:\n  rewrite:\n    when:\n      {name}: {value}\n"
        decision = by_job(evaluate(config, state, [ref], policies_from(tmp_path, policy)), ref)["rewrite"]
        assert decision.due and decision.reason == f"{name} {value} >= {value}", decision.reason


def test_streamed_counts_read_format_1_manifests_which_have_no_content_field(config: Config) -> None:
    import pyarrow as pa

    from maintenance.catalogs import get_catalog

    ref = fresh_ref(config, "v1counts")
    catalog = get_catalog(config, config.default_catalog)
    catalog.create_namespace_if_not_exists(ref.namespace)
    table = catalog.create_table(f"{'.'.join(ref.namespace)}.{ref.name}", pa.schema([("id", pa.int64())]), properties={"format-version": "1"})
    for start in (0, 10, 20):
        table.append(pa.table({"id": list(range(start, start + 10))}))
    table = load_table(config, ref)
    assert table.metadata.format_version == 1
    health = table_health(str(ref), table, small_file_bytes=10**9)
    assert health.data_files == 3 and health.small_data_files == 3
    assert_streamed_counts_match(health, table, 10**9)
