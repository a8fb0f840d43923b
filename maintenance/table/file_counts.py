"""A snapshot's table-wide file counters, streamed: what a run records as the table's
health at its end (the status page's time chart).

`health.table_health` holds every live file of the snapshot (it builds the delete index
that per-partition and applied-delete measures need): about 1.2 KB a file, so 500 MiB for
the 200,000 files of a table EXPIRE or ORPHANS just cleaned, whose own work stays within
their memory budget. The counters a run records need none of that: each live entry's
content, format, record count and size, read through a projection one manifest at a time
and counted by `FileCounters.add` (the one rule of what counts as what).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyiceberg.manifest import ManifestEntryStatus
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import IntegerType, LongType, NestedField, StringType, StructType

from maintenance.table.files import Content
from maintenance.table.health import FileCounters
from maintenance.table.manifest_paths import read_projected
from maintenance.table.pool import parallel_iter

_COUNTED = Schema(
    NestedField(0, "status", IntegerType(), required=True),
    NestedField(2, "data_file", StructType(
        NestedField(134, "content", IntegerType(), required=False),  # absent from format 1 manifests: data
        NestedField(101, "file_format", StringType(), required=True),
        NestedField(103, "record_count", LongType(), required=True),
        NestedField(104, "file_size_in_bytes", LongType(), required=True),
    ), required=True),
)
_DELETED = ManifestEntryStatus.DELETED.value
_PUFFIN = "PUFFIN"


@dataclass(frozen=True, slots=True)
class _Counted:
    """What `FileCounters.add` reads of a file."""

    content: Content
    size: int
    records: int
    is_dv: bool


def snapshot_file_counts(table: Table, small_file_bytes: int) -> FileCounters:
    """The current snapshot's live data and delete files, counted as `table_health` counts
    them table-wide (applied-delete measures left at zero)."""
    counters = FileCounters()
    snapshot = table.current_snapshot()
    if snapshot is None:
        return counters
    manifests = snapshot.manifests(table.io)

    def count(manifest_path: str) -> list[_Counted]:
        found = []
        for entry in read_projected(table.io, manifest_path, _COUNTED):
            if entry[0] == _DELETED:
                continue
            content, file_format, records, size = (entry[1][i] for i in range(4))
            kind = Content(content or 0)
            found.append(_Counted(kind, size, records, kind == Content.POSITION_DELETES and file_format.upper() == _PUFFIN))
        return found

    for files in parallel_iter(count, [m.manifest_path for m in manifests], lambda path: path):
        for counted in files:
            counters.add(counted, small_file_bytes)  # type: ignore[arg-type]
    return counters
