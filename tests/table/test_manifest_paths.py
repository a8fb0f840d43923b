"""Reading only a manifest's paths gives exactly what decoding its whole entries gives, on
Spark-written manifests of every kind: data and delete manifests, v2 and v3 (deletion
vectors), with DELETED entries (a Spark rewrite) and EXISTING ones (a manifest rewrite)."""

from __future__ import annotations

import pytest

from maintenance.catalogs import load_table
from maintenance.config import Config
from maintenance.table.files import read_manifest
from maintenance.table.manifest_paths import manifest_paths
from tests.conftest import CdcFactory

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
