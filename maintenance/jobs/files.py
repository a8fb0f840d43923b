"""The live files of a snapshot as jobs plan with them: path, sequence number, partition."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyiceberg.manifest import DataFile
from pyiceberg.table import Snapshot, Table

from maintenance.manifests import live_entries

PartitionKey = tuple[int, tuple[Any, ...]]  # (spec id, partition values)


@dataclass(frozen=True)
class FileRef:
    """A live file of the planning snapshot, as much as planning and commit need."""

    path: str
    seq: int
    spec_id: int
    partition: tuple[Any, ...]
    partition_path: str
    records: int
    size: int

    @property
    def partition_key(self) -> PartitionKey:
        return (self.spec_id, self.partition)


def live_file_refs(table: Table, snapshot: Snapshot) -> Iterator[tuple[FileRef, DataFile]]:
    """Every live file of the snapshot (data and deletes), with its data sequence number."""
    specs = table.specs()
    schema = table.schemas()[snapshot.schema_id] if snapshot.schema_id is not None else table.schema()
    for entry in live_entries(table, snapshot.manifests(table.io)):
        f = entry.data_file
        spec = specs[f.spec_id]
        ref = FileRef(
            path=f.file_path,
            seq=int(entry.sequence_number or 0),
            spec_id=f.spec_id,
            partition=tuple(f.partition[i] for i in range(len(f.partition))) if spec.fields else (),
            partition_path=spec.partition_to_path(f.partition, schema) if spec.fields else "",
            records=f.record_count,
            size=f.file_size_in_bytes,
        )
        yield ref, f
