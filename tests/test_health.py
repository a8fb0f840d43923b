"""`health` from pyiceberg metadata against Spark's own metadata tables."""

from __future__ import annotations

from maintenance.catalogs import load_table
from maintenance.table.health import table_health
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory

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
