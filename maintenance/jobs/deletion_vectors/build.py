"""Deletion vectors for format-3 tables: one complete DV per data file, built from new
positions and what already deletes rows of that file (shared by CONVERT and REWRITE).

The spec ("Deletion Vectors", "Scan Planning", format 3) says:
- a data file has at most one live DV; a writer adding deletes to a file that has one must
  write a new DV holding the old positions too, and remove the old one in the same commit;
- once a data file has a DV, v2 position delete files no longer apply to it, so a new DV
  must also hold the positions of every v2 position delete file that applied to it;
- a DV applies to its one data file when the file's data sequence number is lower than or
  equal to the DV's.

So each new DV holds: the new positions (found for deletes that applied to the file), the
positions of the DV it replaces, and, where the file had no DV, those of every v2 position
delete file that applied to it. Its data sequence number is the highest of everything it
holds positions from: each of those applied to the data file, so the file's number is at
most that, and the DV applies to the file; a DV names one file, so a higher number cannot
make it reach another row. v2 position delete files are not removed here (a partition-scoped
one may still apply to other files); REWRITE removes them once all their files have DVs.

Existing blobs and v2 entries are read on the driver (one seek per blob, each v2 file read
once), as Iceberg's own DV writers do through `loadPreviousDeletes`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyarrow.parquet as pq

from maintenance.errors import ConflictError
from maintenance.spark.deletion_vectors import DeletionVectorWriter
from maintenance.spark.java_files import JavaFiles
from maintenance.spark.jvm import JavaObject
from maintenance.table.delete_rule import DeleteIndex
from maintenance.table.dv import deserialize_dv
from maintenance.table.files import SnapshotFiles, TableFile

if TYPE_CHECKING:
    from pyiceberg.io import FileIO
    from pyspark.sql import SparkSession


@dataclass
class NewDeletes:
    """Positions to delete in one data file, and the highest data sequence number among the
    deletes they were found for."""

    positions: set[int] = field(default_factory=set)
    seq: int = 0


@dataclass
class DvChange:
    """What a commit does to the table's DVs."""

    added: list[tuple[JavaObject, int]]  # new DVs, with the data sequence number each takes
    replaced: list[TableFile]  # DVs the new ones replace (removed in the same commit)
    replaced_java: list[JavaObject]  # their Java records, for the commit
    data_paths: set[str]  # the data files the new DVs belong to
    positions: int  # positions the new DVs hold
    merged_positions: int  # of which came from replaced DVs and v2 position delete files

    @property
    def bytes_written(self) -> int:
        """Bytes of the Puffin file written (all new DVs share it)."""
        return int(self.added[0][0].fileSizeInBytes()) if self.added else 0


def build_dvs(spark: SparkSession, table: JavaObject, io: FileIO, files: SnapshotFiles, new: dict[str, NewDeletes],
              java_data: Mapping[str, JavaObject], operation_id: str) -> DvChange:
    """Write one complete DV per data file of `new` (paths as the table spells them) into one
    Puffin file; files ending with no position get none."""
    index = DeleteIndex(files)
    by_path = {f.path: f for f in files.data}
    v2_entries = _V2Entries(io)
    writer = DeletionVectorWriter(spark, table, operation_id)
    seqs: dict[str, int] = {}
    replaced: list[TableFile] = []
    merged = 0
    for path, deletes in sorted(new.items()):
        positions, seq = set(deletes.positions), deletes.seq
        for old in index.position_deletes_for(by_path[path]):
            before = len(positions)
            if old.is_dv:
                positions.update(read_dv(io, old))
                replaced.append(old)
            else:
                positions.update(v2_entries.positions(old, path))
            merged += len(positions) - before
            seq = max(seq, old.seq)
        if positions:
            writer.add(java_data[path], sorted(positions))
            seqs[path] = seq
    written = writer.close()
    added = [(dv, seqs[str(dv.referencedDataFile())]) for dv in written]
    java_replaced = JavaFiles(spark, table, files.snapshot_id).delete_files({d.key for d in replaced}) if replaced else {}
    return DvChange(added, replaced, [java_replaced[d.key] for d in replaced], set(seqs), writer.positions_written, merged)


def read_dv(io: FileIO, dv: TableFile) -> list[int]:
    """The positions of a live DV: its blob, read at its offset in the Puffin file."""
    assert dv.content_offset is not None and dv.content_size is not None
    with io.new_input(dv.path).open(seekable=True) as stream:
        stream.seek(dv.content_offset)
        blob = stream.read(dv.content_size)
    positions = deserialize_dv(blob)
    if len(positions) != dv.records:
        raise ConflictError(f"the deletion vector for {dv.referenced_data_file} in {dv.path} holds {len(positions)} positions, "
                            f"its manifest entry says {dv.records}; nothing was committed")
    return positions


class _V2Entries:
    """Positions of v2 position delete files, by data file path; each file read once."""

    def __init__(self, io: FileIO) -> None:
        self._io = io
        self._read: dict[str, dict[str, list[int]]] = {}

    def positions(self, delete: TableFile, data_path: str) -> list[int]:
        if delete.file_format != "PARQUET":
            raise ConflictError(f"position delete file {delete.path} is {delete.file_format}; only Parquet ones can be merged into a deletion vector")
        if delete.path not in self._read:
            with self._io.new_input(delete.path).open(seekable=True) as stream:
                rows = pq.read_table(stream, columns=["file_path", "pos"]).to_pydict()
            entries: dict[str, list[int]] = defaultdict(list)
            for file_path, pos in zip(rows["file_path"], rows["pos"]):
                entries[file_path].append(pos)
            self._read[delete.path] = dict(entries)
        return self._read[delete.path].get(data_path, [])
