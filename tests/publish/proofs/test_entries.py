"""The entries proof (`publish/proofs/entries.py`): a rewrite of manifests that loses an entry
and duplicates another, changes one's sequence number or narrows one's column bounds is
never published, and reads no data file; the same rewrite uncorrupted verifies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from maintenance.catalogs import load_table
from maintenance.config import Config
from maintenance.publish.proofs import ENTRIES
from maintenance.publish.publisher import Change
from maintenance.run.context import JobContext
from maintenance.run.outcome import COMMITTED, FAILED, JobOutcome
from maintenance.run.runner import run_under_lease
from maintenance.spark.jvm import java_long
from maintenance.workload.shape import TableShape
from tests.conftest import CdcFactory
from tests.support.iceberg_oracle import FrozenRows


def _rewrite_manifests_corrupted(spark: Any, how: str) -> Any:
    """A `perform` for `Change`: one RewriteManifests replacing the current snapshot's data
    manifests by one new manifest holding their live entries, corrupted as `how` says. Its
    file counts stay right where Iceberg checks them (a lost entry is replaced by a
    duplicate), so only a comparison of the entries can tell."""
    def perform(table: Any, stamp: Any) -> None:
        io, spec = table.io(), table.spec()
        snapshot = table.currentSnapshot()
        jvm = spark._jvm
        manifests = [m for m in snapshot.dataManifests(io)]
        entries = []
        for manifest in manifests:
            reader = jvm.org.apache.iceberg.ManifestFiles.read(manifest, io)
            iterator = reader.entries().iterator()
            while iterator.hasNext():
                entry = iterator.next()
                if entry.isLive():
                    entries.append((entry.file().copy(), int(entry.snapshotId()), int(entry.dataSequenceNumber()), entry.fileSequenceNumber()))
            reader.close()
        if how == "lose-and-duplicate":
            entries[-1] = entries[0]
        elif how == "sequence-number":
            data_file, snapshot_id, seq, file_seq = entries[0]
            entries[0] = (data_file, snapshot_id, seq + 1, file_seq)
        elif how == "narrowed-upper-bound":  # equality deletes above the new bound would stop applying to the file
            data_file, snapshot_id, seq, file_seq = entries[0]
            key = table.schema().findField("id").fieldId()
            upper = jvm.java.util.HashMap(data_file.upperBounds())
            upper.put(key, data_file.lowerBounds().get(key))
            metrics = jvm.org.apache.iceberg.Metrics(java_long(spark, int(data_file.recordCount())), data_file.columnSizes(), data_file.valueCounts(),
                                                     data_file.nullValueCounts(), data_file.nanValueCounts(), data_file.lowerBounds(), upper)
            narrowed = jvm.org.apache.iceberg.DataFiles.builder(spec).copy(data_file).withMetrics(metrics).build()
            entries[0] = (narrowed, snapshot_id, seq, file_seq)
        output = io.newOutputFile(f"{table.location()}/metadata/corrupt-{how}-{jvm.java.util.UUID.randomUUID().toString()}-m0.avro")
        writer = jvm.org.apache.iceberg.ManifestFiles.write(2, spec, output, None)  # the commit assigns it
        for data_file, snapshot_id, seq, file_seq in entries:
            writer.existing(data_file, java_long(spark, snapshot_id), java_long(spark, seq), None if file_seq is None else java_long(spark, int(file_seq)))
        writer.close()
        rewrite = stamp(table.rewriteManifests())  # icemaint's summary keys, as every maintenance commit has
        for manifest in manifests:
            rewrite = rewrite.deleteManifest(manifest)
        rewrite.addManifest(writer.toManifestFile()).commit()

    return perform


@pytest.mark.parametrize("how", ["lose-and-duplicate", "sequence-number", "narrowed-upper-bound"])
def test_a_manifest_rewrite_that_changes_an_entry_is_not_published(spark, config: Config, cdc_table: CdcFactory, tmp_path: Path, how: str) -> None:
    ref, _, _ = cdc_table(shape=TableShape("identity", 2, "single"), rows=800, commits=4, update_ratio=0.3)
    before = load_table(config, ref).metadata.current_snapshot_id
    frozen = FrozenRows(spark, ref, tmp_path / "frozen")
    perform = _rewrite_manifests_corrupted(spark, how)

    def body(ctx: JobContext) -> JobOutcome:
        return JobOutcome(COMMITTED, snapshot_id=ctx.publish(Change("MANIFESTS", perform=lambda table: perform(table, ctx.table.stamp), proof=ENTRIES)))

    result = run_under_lease(config, ref, "manifests", body, verify=True)
    assert result.status == FAILED and result.content_verified is False, (result.status, result.error)
    assert "content changed" in (result.error or "") and result.fingerprint_before != result.fingerprint_after
    assert load_table(config, ref).metadata.current_snapshot_id == before
    frozen.assert_same()
    assert result.verify_counters["verify_data_files"] == 0  # metadata only

    honest = run_under_lease(config, ref, "manifests", lambda ctx: JobOutcome(COMMITTED, ctx.publish(
        Change("MANIFESTS", perform=lambda table: _rewrite_manifests_corrupted(spark, "none")(table, ctx.table.stamp), proof=ENTRIES))), verify=True)
    assert honest.status == COMMITTED and honest.content_verified, honest.error  # the same rewrite, uncorrupted, verifies
    frozen.assert_same()
