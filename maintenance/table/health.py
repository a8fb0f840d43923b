"""Table health from metadata alone: what readers pay for delete files and small files.

Reads the current snapshot's manifests through pyiceberg, with no JVM, so the planner
can look at hundreds of tables in seconds. The fields are those `icemaint health --json` prints.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from pyiceberg.table import Table
from pyiceberg.table.metadata import TableMetadata

from maintenance.table.delete_rule import AppliedDeletes, DeleteIndex
from maintenance.table.files import Content, SnapshotFiles, TableFile, snapshot_files

MANIFEST_TARGET_PROPERTY = "commit.manifest.target-size-bytes"
DEFAULT_MANIFEST_TARGET = 8 * 1024 * 1024
SMALL_MANIFEST_SHARE = 0.75  # a manifest below this share of the target is small (MANIFESTS merges it)


@dataclass
class FileCounters:
    """The file counters kept for a whole table and for each partition."""

    data_files: int = 0
    data_bytes: int = 0
    data_records: int = 0
    small_data_files: int = 0
    position_delete_files: int = 0
    position_delete_records: int = 0
    equality_delete_files: int = 0
    equality_delete_records: int = 0
    deletion_vectors: int = 0  # format 3: one per data file at most, many per Puffin file
    deletion_vector_records: int = 0
    # What readers attach to the data files, summed over them (`DeleteIndex.applied_by_scope`):
    # a delete file counts once for every data file it applies to.
    equality_deletes_applied: int = 0
    equality_delete_records_applied: int = 0
    position_deletes_applied: int = 0
    position_delete_records_applied: int = 0

    def add(self, f: TableFile, small_file_bytes: int, applied: AppliedDeletes | None = None) -> None:
        if applied is not None:
            self.equality_deletes_applied += applied.equality_files
            self.equality_delete_records_applied += applied.equality_records
            self.position_deletes_applied += applied.position_files
            self.position_delete_records_applied += applied.position_records
        if f.content == Content.DATA:
            self.data_files += 1
            self.data_bytes += f.size
            self.data_records += f.records
            if f.size < small_file_bytes:
                self.small_data_files += 1
        elif f.is_dv:
            self.deletion_vectors += 1
            self.deletion_vector_records += f.records
        elif f.content == Content.POSITION_DELETES:
            self.position_delete_files += 1
            self.position_delete_records += f.records
        else:
            self.equality_delete_files += 1
            self.equality_delete_records += f.records

    @property
    def delete_files(self) -> int:
        """Delete files and deletion vectors: everything a rewrite of the data removes."""
        return self.position_delete_files + self.equality_delete_files + self.deletion_vectors


@dataclass
class PartitionHealth(FileCounters):
    partition: str = ""
    spec_id: int = 0


@dataclass
class TableHealth(FileCounters):
    table: str = ""
    format_version: int = 0
    current_snapshot_id: int | None = None
    sequence_number: int = 0
    snapshots: int = 0
    oldest_snapshot_age_s: float | None = None
    metadata_files: int = 0
    deletion_vector_files: int = 0  # Puffin files holding the deletion vectors
    dangling_deletion_vectors: int = 0  # format 3: DVs of data files no longer live
    duplicate_deletion_vectors: int = 0  # format 3: DVs beyond the one a data file may have
    manifests: int = 0  # data and delete manifests the current snapshot lists
    small_manifests: int = 0  # below 75% of commit.manifest.target-size-bytes
    rows_changed_since_statistics: int = 0  # rows added or deleted since the newest snapshot with statistics (or since the first snapshot)
    partitions: list[PartitionHealth] = field(default_factory=list)

    @property
    def avg_data_file_bytes(self) -> float:
        return self.data_bytes / self.data_files if self.data_files else 0.0

    def to_json(self) -> dict[str, Any]:
        """Identity first, then the counters, then the per-partition breakdown."""
        fields = asdict(self)
        head = ("table", "format_version", "current_snapshot_id", "sequence_number", "snapshots", "oldest_snapshot_age_s", "metadata_files")
        ordered = {key: fields.pop(key) for key in head}
        partitions = fields.pop("partitions")
        return {**ordered, **fields, "partitions": partitions}

    @classmethod
    def from_json(cls, fields: dict[str, Any]) -> TableHealth:
        """The health `to_json` gave (kept evaluations shared through the state database)."""
        partitions = [PartitionHealth(**p) for p in fields.get("partitions", [])]
        return cls(**{**fields, "partitions": partitions})


def oldest_snapshot_ms(metadata: TableMetadata) -> int | None:
    """When the table's oldest snapshot was committed (None: no snapshot)."""
    return min((s.timestamp_ms for s in metadata.snapshots), default=None)


def oldest_snapshot_age_s(oldest_ms: int, now_s: float) -> float:
    """The oldest snapshot's age at `now_s`, to the millisecond (one rule: fresh and kept health)."""
    return round(now_s - oldest_ms / 1000, 3)


def table_health(name: str, table: Table, *, small_file_bytes: int, now_s: float | None = None) -> TableHealth:
    metadata = table.metadata
    now_s = time.time() if now_s is None else now_s
    snapshots = metadata.snapshots
    health = TableHealth(
        table=name,
        format_version=metadata.format_version,
        current_snapshot_id=metadata.current_snapshot_id,
        sequence_number=getattr(metadata, "last_sequence_number", 0),  # format 1 has no sequence numbers (pyiceberg: no field)
        snapshots=len(snapshots),
        oldest_snapshot_age_s=oldest_snapshot_age_s(oldest, now_s) if (oldest := oldest_snapshot_ms(metadata)) is not None else None,
        metadata_files=len(metadata.metadata_log) + 1,
    )
    if table.current_snapshot() is None:
        return health
    health.rows_changed_since_statistics = rows_changed_since_statistics(metadata)

    files = snapshot_files(table)
    small_manifest = SMALL_MANIFEST_SHARE * int(table.properties.get(MANIFEST_TARGET_PROPERTY, DEFAULT_MANIFEST_TARGET))
    health.manifests = len(files.manifests)
    health.small_manifests = sum(1 for m in files.manifests if m.length < small_manifest)
    count_files(health, files, small_file_bytes)
    return health


def rows_changed_since_statistics(metadata: TableMetadata) -> int:
    """Rows added or deleted (snapshot summaries' `added-records` and `deleted-records`) by
    the current snapshot and its ancestors back to the newest one that has table statistics
    (not counted), or back to the table's first snapshot when none has; rewrites left out.
    What engines' distinct counts have missed."""
    with_statistics = {s.snapshot_id for s in metadata.statistics}
    changed = 0
    snapshot = metadata.snapshot_by_id(metadata.current_snapshot_id) if metadata.current_snapshot_id is not None else None
    while snapshot is not None and snapshot.snapshot_id not in with_statistics:
        summary = snapshot.summary
        if summary is not None and summary.operation.value != "replace":  # a rewrite (compaction) keeps the rows
            counts = summary.additional_properties
            changed += int(counts.get("added-records", 0)) + int(counts.get("deleted-records", 0))
        snapshot = metadata.snapshot_by_id(snapshot.parent_snapshot_id) if snapshot.parent_snapshot_id is not None else None
    return changed


def count_files(health: TableHealth, files: SnapshotFiles, small_file_bytes: int) -> None:
    """The snapshot's file counters, for the table and each partition (metadata only)."""
    health.deletion_vector_files = len({f.path for f in files.deletion_vectors})
    health.dangling_deletion_vectors = len(files.dangling_deletion_vectors)
    health.duplicate_deletion_vectors = sum(len(dvs) - 1 for dvs in files.duplicated_deletion_vectors.values())
    index = DeleteIndex(files)
    by_partition: dict[tuple[int, str], PartitionHealth] = {}
    for f in files.files:
        applied = index.applied_by_scope(f) if f.content == Content.DATA and files.deletes else None
        health.add(f, small_file_bytes, applied)
        key = (f.spec_id, f.partition_path)
        if key not in by_partition:
            by_partition[key] = PartitionHealth(partition=f.partition_path, spec_id=f.spec_id)
        by_partition[key].add(f, small_file_bytes, applied)
    health.partitions = [by_partition[k] for k in sorted(by_partition)]
