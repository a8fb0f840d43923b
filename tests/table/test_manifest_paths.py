"""Reading only a manifest's paths gives exactly what decoding its whole entries gives, on
Spark-written manifests of every kind: data and delete manifests, v2 and v3 (deletion
vectors), with DELETED entries (a Spark rewrite) and EXISTING ones (a manifest rewrite),
and partition values of every width (decimals, binary, NULLs) skipped on the way."""

from __future__ import annotations

import pytest

from maintenance.catalogs import load_table
from maintenance.config import Config
from maintenance.table.file_counts import snapshot_file_counts
from maintenance.table.files import read_manifest, snapshot_files
from maintenance.table.manifest_paths import manifest_paths
from tests.conftest import CdcFactory, fresh_ref

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("format_version", [2, 3])
def test_paths_read_alone_match_whole_entries_in_every_manifest(spark, config: Config, cdc_table: CdcFactory, format_version: int) -> None:
    ref, _, _ = cdc_table(rows=600, commits=4, update_ratio=0.3, delete_ratio=0.1, format_version=format_version)
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 7 = 0")
    spark.sql(f"CALL local.system.rewrite_data_files(table => '{ref.identifier}', options => map('min-input-files', '2'))")
    spark.sql(f"CALL local.system.rewrite_manifests('{ref.identifier}')")
    table = load_table(config, ref)
    statuses = set()
    manifests = {m.manifest_path: m for s in table.snapshots() for m in s.manifests(table.io)}
    for manifest in manifests.values():
        entries = read_manifest(table.io, manifest, discard_deleted=False)
        statuses.update(e.status.name for e in entries)
        assert manifest_paths(table.io, manifest.manifest_path, live_only=False) == [e.data_file.file_path for e in entries]
        live = [e.data_file.file_path for e in entries if e.status.name != "DELETED"]
        assert manifest_paths(table.io, manifest.manifest_path, live_only=True) == live
    assert statuses == {"ADDED", "EXISTING", "DELETED"}, statuses
    assert {m.content.name for m in manifests.values()} == {"DATA", "DELETES"}


def test_paths_and_counts_follow_skipped_decimal_partition_values(spark, config: Config) -> None:
    """Decimal partition values are Avro `fixed`: skipped as length-prefixed bytes (pyiceberg
    0.12), every value after them is read from the wrong offset. Binary, date and NULL
    values beside them, and position deletes, so delete manifests hold them too."""
    ref = fresh_ref(config, "decimalparts")
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {ref.spark_namespace}")
    spark.sql(f"CREATE TABLE {ref.spark_name} (id bigint, d decimal(10,2), b binary, wide decimal(38,5), dt date) USING iceberg "
              "PARTITIONED BY (d, b, wide, dt) TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')")
    for batch in range(3):
        spark.sql(f"INSERT INTO {ref.spark_name} SELECT id, CASE WHEN id % 4 = 0 THEN NULL ELSE CAST(id % 3 AS decimal(10,2)) / 4 END, "
                  "CASE WHEN id % 3 = 0 THEN NULL ELSE CAST(CAST(id % 2 AS string) AS binary) END, "
                  "CAST(id % 2 AS decimal(38,5)) * 123456789.12345, CASE WHEN id % 5 = 0 THEN NULL ELSE date_add(DATE'1969-12-30', CAST(id % 3 AS int)) END "
                  f"FROM range({batch * 40}, {(batch + 1) * 40})")
    spark.sql(f"DELETE FROM {ref.spark_name} WHERE id % 7 = 0")
    table = load_table(config, ref)
    manifests = {m.manifest_path: m for s in table.snapshots() for m in s.manifests(table.io)}
    for manifest in manifests.values():
        entries = read_manifest(table.io, manifest, discard_deleted=False)
        assert manifest_paths(table.io, manifest.manifest_path, live_only=False) == [e.data_file.file_path for e in entries]
    assert {m.content.name for m in manifests.values()} == {"DATA", "DELETES"}
    files = snapshot_files(table, cached=False)
    counted = snapshot_file_counts(table, small_file_bytes=1)
    assert (counted.data_files, counted.data_records, counted.position_delete_files) == (
        len(files.data), sum(f.records for f in files.data), len(files.deletes))
    assert counted.position_delete_files > 0
